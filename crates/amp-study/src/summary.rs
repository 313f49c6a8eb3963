//! The study's numbers, computed as scripts/vm/amp-study.sh does for the VM
//! (same CSV, same definitions): per scheduler and workload, each program's
//! median turnaround T_M over the repetitions against its median reference
//! time T_ref; H_ANTT = mean over programs of T_M / T_ref (lower is
//! better), H_STP = sum of T_ref / T_M (higher is better); spread = the
//! largest (max - min) / median of a program's turnarounds.

use std::collections::BTreeMap;
use std::fmt::Write as _;

/// One program's turnaround in one repetition: a reference run (alone on
/// the fast CPUs, `scheduler` None) or a run of its workload under a scheduler.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub scheduler: Option<String>,
    pub workload: String,
    pub rep: u32,
    pub program: String,
    pub ns: u64,
}

/// The CSV header, the VM study's (`results.csv`).
pub const CSV_HEADER: &str = "kind,scheduler,workload,rep,program,ns";

impl Row {
    pub fn csv(&self) -> String {
        match &self.scheduler {
            None => format!(
                "tsb,-,{},{},{},{}",
                self.workload, self.rep, self.program, self.ns
            ),
            Some(s) => format!(
                "run,{s},{},{},{},{}",
                self.workload, self.rep, self.program, self.ns
            ),
        }
    }
}

/// One scheduler on one workload.
#[derive(Clone, Debug, PartialEq)]
pub struct Cell {
    pub scheduler: String,
    pub workload: String,
    pub h_antt: f64,
    pub h_stp: f64,
    pub max_spread: f64,
}

fn median(v: &mut [u64]) -> f64 {
    v.sort_unstable();
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2] as f64
    } else {
        (v[n / 2 - 1] + v[n / 2]) as f64 / 2.0
    }
}

/// Every (scheduler, workload) with runs and a reference, in the order first seen.
pub fn cells(rows: &[Row]) -> Vec<Cell> {
    let mut reference: BTreeMap<(&str, &str), Vec<u64>> = BTreeMap::new();
    let mut runs: BTreeMap<(&str, &str), BTreeMap<&str, Vec<u64>>> = BTreeMap::new();
    let mut order: Vec<(&str, &str)> = Vec::new();
    for r in rows {
        match &r.scheduler {
            None => reference
                .entry((&r.workload, &r.program))
                .or_default()
                .push(r.ns),
            Some(s) => {
                let k = (s.as_str(), r.workload.as_str());
                if !runs.contains_key(&k) {
                    order.push(k);
                }
                runs.entry(k)
                    .or_default()
                    .entry(&r.program)
                    .or_default()
                    .push(r.ns);
            }
        }
    }
    let mut out = Vec::new();
    for k in order {
        let (mut antt, mut stp, mut spread, mut n) = (0.0, 0.0, 0.0f64, 0);
        for (prog, ts) in runs.get_mut(&k).expect("key from runs") {
            let Some(tref) = reference.get_mut(&(k.1, *prog)) else {
                continue;
            };
            let tr = median(tref);
            let tm = median(ts);
            if tr <= 0.0 || tm <= 0.0 {
                continue;
            }
            antt += tm / tr;
            stp += tr / tm;
            let (lo, hi) = (ts[0], ts[ts.len() - 1]);
            spread = spread.max((hi - lo) as f64 / tm);
            n += 1;
        }
        if n > 0 {
            out.push(Cell {
                scheduler: k.0.to_string(),
                workload: k.1.to_string(),
                h_antt: antt / n as f64,
                h_stp: stp,
                max_spread: spread,
            });
        }
    }
    out
}

/// Each scheduler's geomean H_ANTT over its workloads, in the order first seen.
pub fn geomeans(cells: &[Cell]) -> Vec<(String, f64)> {
    let mut acc: Vec<(String, f64, usize)> = Vec::new();
    for c in cells {
        match acc.iter_mut().find(|a| a.0 == c.scheduler) {
            Some(a) => {
                a.1 += c.h_antt.ln();
                a.2 += 1;
            }
            None => acc.push((c.scheduler.clone(), c.h_antt.ln(), 1)),
        }
    }
    acc.into_iter()
        .map(|(s, l, n)| (s, (l / n as f64).exp()))
        .collect()
}

/// The planned runs that left no result: one line per (scheduler,
/// workload) with fewer than `reps` repetitions, and per workload with no
/// reference run.
pub fn missing(
    rows: &[Row],
    schedulers: &[String],
    workloads: &[String],
    reps: u32,
) -> Vec<String> {
    let mut out = Vec::new();
    for w in workloads {
        if !rows
            .iter()
            .any(|r| r.scheduler.is_none() && &r.workload == w)
        {
            out.push(format!("{w}: no reference run"));
        }
    }
    for s in schedulers {
        for w in workloads {
            let mut got: Vec<u32> = rows
                .iter()
                .filter(|r| r.scheduler.as_deref() == Some(s) && &r.workload == w)
                .map(|r| r.rep)
                .collect();
            got.sort_unstable();
            got.dedup();
            if (got.len() as u32) < reps {
                out.push(format!(
                    "{s} {w}: {} of {reps} repetitions gave a result",
                    got.len()
                ));
            }
        }
    }
    out
}

/// `summary.csv`: the VM study's columns.
pub fn summary_csv(cells: &[Cell]) -> String {
    let mut s = String::from("scheduler,workload,h_antt,h_stp,max_spread\n");
    for c in cells {
        let _ = writeln!(
            s,
            "{},{},{:.4},{:.4},{:.4}",
            c.scheduler, c.workload, c.h_antt, c.h_stp, c.max_spread
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(s: Option<&str>, w: &str, rep: u32, p: &str, ns: u64) -> Row {
        Row {
            scheduler: s.map(String::from),
            workload: w.into(),
            rep,
            program: p.into(),
            ns,
        }
    }

    /// Two programs, three repetitions, computed by hand:
    /// a: T_ref median(100, 120, 110) = 110, T_M median(220, 200, 240) = 220: 2.0
    /// b: T_ref median(50, 50, 50) = 50, T_M median(75, 60, 100) = 75: 1.5
    /// H_ANTT = (2.0 + 1.5) / 2 = 1.75; H_STP = 0.5 + 2/3; spread
    /// max((240 - 200) / 220, (100 - 60) / 75) = 0.5333.
    fn study() -> Vec<Row> {
        let mut v = Vec::new();
        for (rep, (a, b)) in [(100, 50), (120, 50), (110, 50)].into_iter().enumerate() {
            v.push(row(None, "W", rep as u32 + 1, "a", a));
            v.push(row(None, "W", rep as u32 + 1, "b", b));
        }
        for (rep, (a, b)) in [(220, 75), (200, 60), (240, 100)].into_iter().enumerate() {
            v.push(row(Some("default"), "W", rep as u32 + 1, "a", a));
            v.push(row(Some("default"), "W", rep as u32 + 1, "b", b));
        }
        v
    }

    #[test]
    fn h_antt_h_stp_and_spread_match_hand_computed_values() {
        let c = cells(&study());
        assert_eq!(c.len(), 1);
        assert!((c[0].h_antt - 1.75).abs() < 1e-12, "{c:?}");
        assert!((c[0].h_stp - (0.5 + 2.0 / 3.0)).abs() < 1e-12, "{c:?}");
        assert!((c[0].max_spread - 40.0 / 75.0).abs() < 1e-12, "{c:?}");
        assert_eq!(
            summary_csv(&c),
            "scheduler,workload,h_antt,h_stp,max_spread\ndefault,W,1.7500,1.1667,0.5333\n"
        );
    }

    #[test]
    fn geomean_is_per_scheduler_over_workloads() {
        let c = vec![
            Cell {
                scheduler: "x".into(),
                workload: "A".into(),
                h_antt: 2.0,
                h_stp: 0.0,
                max_spread: 0.0,
            },
            Cell {
                scheduler: "x".into(),
                workload: "B".into(),
                h_antt: 8.0,
                h_stp: 0.0,
                max_spread: 0.0,
            },
        ];
        let g = geomeans(&c);
        assert_eq!(g.len(), 1);
        assert!((g[0].1 - 4.0).abs() < 1e-12);
    }

    #[test]
    fn missing_runs_and_references_are_named() {
        let mut rows = study();
        rows.retain(|r| !(r.scheduler.is_some() && r.rep == 3));
        let m = missing(
            &rows,
            &["default".into(), "scx_colab".into()],
            &["W".into(), "V".into()],
            3,
        );
        assert_eq!(
            m,
            [
                "V: no reference run",
                "default W: 2 of 3 repetitions gave a result",
                "default V: 0 of 3 repetitions gave a result",
                "scx_colab W: 0 of 3 repetitions gave a result",
                "scx_colab V: 0 of 3 repetitions gave a result",
            ]
        );
        assert!(missing(&study(), &["default".into()], &["W".into()], 3).is_empty());
    }

    #[test]
    fn csv_rows_are_the_vm_study_format() {
        assert_eq!(row(None, "W", 1, "a", 5).csv(), "tsb,-,W,1,a,5");
        assert_eq!(row(Some("s"), "W", 2, "a", 5).csv(), "run,s,W,2,a,5");
    }
}
