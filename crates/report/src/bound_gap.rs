//! "Distance to the lower bound": how far each policy is from the best
//! schedule, seen from both sides. From below, each run's H_ANTT over the
//! least H_ANTT any schedule of that run's draws could have (colab-bound;
//! `RunRecord::h_antt_bound`). From above, each run's H_ANTT over the best
//! schedule known for its cell: the best policy there, or the mix's
//! programs run one after another (a schedule that exists, if one knows
//! every program's length). The optimum lies between the two.

use std::collections::BTreeMap;

use crate::analysis::Analysis;
use crate::RunRecord;

/// One (workload, machine, core order, seed): the runs every policy made
/// of the same mix.
type CellKey<'a> = (&'a str, &'a str, &'a str, u64);

/// How many of the farthest runs the section lists.
const FARTHEST: usize = 5;

/// A run's H_ANTT, if it is a mix of two or more programs.
fn mix_h_antt(r: &RunRecord) -> Option<f64> {
    if r.programs.len() < 2 {
        return None;
    }
    crate::run_metrics(r)
        .ok()
        .map(|m| m.h_antt)
        .filter(|h| *h > 0.0)
}

/// H_ANTT of the cell's programs run one after another, each as fast as
/// any of the cell's policies ran it alone on this machine (T_alone), in
/// the best order: weights 1/T_SB, lengths T_alone, so Smith's rule
/// (ascending T_alone * T_SB) gives the least weighted sum of ends.
pub(crate) fn one_at_a_time(runs: &[&RunRecord]) -> Option<f64> {
    let first = runs.first()?;
    let n = first.programs.len();
    if n < 2 || runs.iter().any(|r| r.programs.len() != n) {
        return None;
    }
    let mut progs: Vec<(f64, f64)> = (0..n)
        .map(|i| {
            let alone = runs
                .iter()
                .map(|r| r.programs[i].t_alone_ns)
                .min()
                .unwrap_or(0);
            (alone as f64, first.programs[i].t_sb_ns as f64)
        })
        .collect();
    if progs.iter().any(|&(a, sb)| a <= 0.0 || sb <= 0.0) {
        return None;
    }
    progs.sort_by(|x, y| (x.0 * x.1).total_cmp(&(y.0 * y.1)));
    let mut end = 0.0;
    let mut sum = 0.0;
    for (alone, sb) in &progs {
        end += alone;
        sum += end / sb;
    }
    Some(sum / n as f64)
}

fn geomean(xs: &[f64]) -> f64 {
    (xs.iter().map(|x| x.ln()).sum::<f64>() / xs.len() as f64).exp()
}

/// Per machine and row, the geomean of the row's ratios.
#[derive(Default)]
struct Table {
    ratios: BTreeMap<(String, String), Vec<f64>>,
}

impl Table {
    fn add(&mut self, config: &str, row: &str, v: f64) {
        if v.is_finite() && v > 0.0 {
            self.ratios
                .entry((config.to_string(), row.to_string()))
                .or_default()
                .push(v);
        }
    }

    fn has_row(&self, row: &str) -> bool {
        self.ratios.keys().any(|k| k.1 == row)
    }

    fn render(&self, rows: &[String], configs: &[&String]) -> String {
        let mut header = vec![String::new()];
        header.extend(configs.iter().map(|c| c.to_string()));
        let body: Vec<Vec<String>> = rows
            .iter()
            .filter(|r| self.has_row(r))
            .map(|row| {
                let mut line = vec![row.clone()];
                line.extend(configs.iter().map(|c| {
                    match self.ratios.get(&(c.to_string(), row.clone())) {
                        Some(v) => format!("{:.3}", geomean(v)),
                        None => "-".to_string(),
                    }
                }));
                line
            })
            .collect();
        crate::summary::table(&header, &body)
    }
}

/// A run's programs in the order they finished, each with its end over
/// its T_SB: `ends` gives each program's end, ns.
fn finish_order(r: &RunRecord, ends: &[f64]) -> String {
    let mut idx: Vec<usize> = (0..r.programs.len()).collect();
    idx.sort_by(|&a, &b| ends[a].total_cmp(&ends[b]));
    idx.iter()
        .map(|&i| {
            let p = &r.programs[i];
            format!("{} {:.2}", p.name, ends[i] / p.t_sb_ns.max(1) as f64)
        })
        .collect::<Vec<_>>()
        .join(", ")
}

const VIRTUAL_BEST: &str = "virtual best";
const ONE_AT_A_TIME: &str = "one at a time";

/// The section; nothing when no run has a bound (programs restarted,
/// older runs).
pub(crate) fn render(md: &mut String, a: &Analysis, records: &[RunRecord]) {
    let mut cells: BTreeMap<CellKey, Vec<&RunRecord>> = BTreeMap::new();
    for r in records {
        if mix_h_antt(r).is_some() {
            cells
                .entry((&r.workload, &r.config, &r.order, r.seed))
                .or_default()
                .push(r);
        }
    }
    let mut below = Table::default();
    let mut above = Table::default();
    let mut serial_best: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for (&(_, config, _, _), runs) in &cells {
        let h: Vec<f64> = runs.iter().filter_map(|r| mix_h_antt(r)).collect();
        let mut best_ratio = f64::INFINITY;
        for (r, h) in runs.iter().zip(&h) {
            if let Some(bound) = r.h_antt_bound.filter(|b| *b > 0.0) {
                below.add(config, &r.policy, h / bound);
                best_ratio = best_ratio.min(h / bound);
            }
        }
        below.add(config, VIRTUAL_BEST, best_ratio);
        let best_policy = h.iter().copied().fold(f64::INFINITY, f64::min);
        let serial = one_at_a_time(runs).unwrap_or(f64::INFINITY);
        let known = best_policy.min(serial);
        for (r, h) in runs.iter().zip(&h) {
            above.add(config, &r.policy, h / known);
        }
        above.add(config, VIRTUAL_BEST, best_policy / known);
        above.add(config, ONE_AT_A_TIME, serial / known);
        let e = serial_best.entry(config).or_default();
        e.0 += usize::from(serial < best_policy);
        e.1 += 1;
    }
    let configs: Vec<&String> = a
        .configs
        .iter()
        .filter(|c| below.ratios.keys().any(|k| k.0 == c.as_str()))
        .collect();
    if configs.is_empty() {
        return;
    }
    let mut rows: Vec<String> = a.policies.clone();
    rows.push(VIRTUAL_BEST.to_string());
    md.push_str("## Distance to the lower bound\n\n");
    md.push_str(
        "The best schedule of a mix is unknown, but it lies between two values. **Below it**, \
         the least H_ANTT any schedule of a run's own step sizes could have (colab-bound: each \
         program's chain of steps at the fastest rate through spawns, joins and barriers, its \
         busiest lock, and the machine's capacity over every order in which the programs could \
         finish). Each run's H_ANTT over that bound, geomean over the mixes, core orders and \
         seeds (1.000 would be the bound itself; the virtual best is the best policy of each \
         run's cell, which no single policy is):\n\n",
    );
    md.push_str(&below.render(&rows, &configs));
    rows.push(ONE_AT_A_TIME.to_string());
    md.push_str(
        "**Above it**, the best schedule known for each cell: the best policy's run, or the \
         mix's programs run one after another, each as fast as any policy here ran it alone on \
         the machine, shortest weighted first (a schedule that exists, if one knows each \
         program's length in advance). Each run's H_ANTT over that best known, geomean (1.000: \
         always the best known):\n\n",
    );
    md.push_str(&above.render(&rows, &configs));
    let counts: Vec<String> = configs
        .iter()
        .filter_map(|c| {
            serial_best
                .get(c.as_str())
                .map(|(k, n)| format!("{c} {k} of {n}"))
        })
        .collect();
    md.push_str(&format!(
        "One at a time beats every policy in {} cells. A policy is at least its second \
         table's distance from the best schedule and at most its first's.\n\n",
        counts.join(", ")
    ));
    render_farthest(md, a, records, &cells);
}

/// The runs of one policy (ROTA where it ran, else the nearest to the
/// bound) farthest from their bound, beside the bound's own schedule.
fn render_farthest(
    md: &mut String,
    a: &Analysis,
    records: &[RunRecord],
    cells: &BTreeMap<CellKey, Vec<&RunRecord>>,
) {
    let ratio = |r: &RunRecord| Some(mix_h_antt(r)? / r.h_antt_bound.filter(|b| *b > 0.0)?);
    let mut per_policy: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for r in records {
        if let Some(x) = ratio(r) {
            per_policy.entry(&r.policy).or_default().push(x);
        }
    }
    let policy = if per_policy.contains_key("rota") {
        "rota"
    } else {
        match a
            .policies
            .iter()
            .filter_map(|p| Some((p.as_str(), geomean(per_policy.get(p.as_str())?))))
            .min_by(|x, y| x.1.total_cmp(&y.1))
        {
            Some((p, _)) => p,
            None => return,
        }
    };
    let mut runs: Vec<(&RunRecord, f64)> = records
        .iter()
        .filter(|r| r.policy == policy && r.programs.iter().all(|p| p.bound_end_ns.is_some()))
        .filter_map(|r| Some((r, ratio(r)?)))
        .collect();
    if runs.is_empty() {
        return;
    }
    runs.sort_by(|x, y| y.1.total_cmp(&x.1));
    md.push_str(&format!(
        "Where {policy} is farthest from its bound: its programs in the order they finished, \
         each with its turnaround over its T_SB, beside the bound's own schedule (the order \
         in which the programs finish when the mix meets its bound, and how soon each could \
         end then, over its T_SB):\n\n"
    ));
    let header: Vec<String> = [
        "workload",
        "machine",
        "order",
        "seed",
        "H_ANTT",
        ONE_AT_A_TIME,
        "bound",
        "its finishes",
        "the bound's schedule",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let rows: Vec<Vec<String>> = runs
        .iter()
        .take(FARTHEST)
        .map(|(r, _)| {
            let ends: Vec<f64> = r.programs.iter().map(|p| p.turnaround_ns as f64).collect();
            let bound: Vec<f64> = r.programs.iter().filter_map(|p| p.bound_end_ns).collect();
            let serial = cells
                .get(&(
                    r.workload.as_str(),
                    r.config.as_str(),
                    r.order.as_str(),
                    r.seed,
                ))
                .and_then(|c| one_at_a_time(c));
            vec![
                r.workload.clone(),
                r.config.clone(),
                r.order.clone(),
                r.seed.to_string(),
                crate::summary::fmt3(mix_h_antt(r)),
                crate::summary::fmt3(serial),
                crate::summary::fmt3(r.h_antt_bound),
                finish_order(r, &ends),
                finish_order(r, &bound),
            ]
        })
        .collect();
    md.push_str(&crate::summary::table(&header, &rows));
}
