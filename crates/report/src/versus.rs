//! "Against today's Linux": each policy workload by workload against EEVDF,
//! with the count that chance alone gives and, for each cell over the
//! margin, a confidence interval over its seeds, so that a per-workload bar
//! can be read against the noise of the seeds it was measured with.

use std::collections::{BTreeMap, BTreeSet};

use rand::{Rng, SeedableRng};

use crate::analysis::Analysis;
use crate::{aggregate, Cell, RunRecord};

/// The reference policy: the kernel's default since 6.6.
pub(crate) const REFERENCE: &str = "eevdf";
/// How much worse than the reference a workload must be to count: the margin
/// of the ROTA quality bar ("never more than 5% worse than EEVDF").
pub(crate) const MARGIN: f64 = 1.05;
/// Bootstrap resamples per interval: enough that the 2.5% and 97.5% points
/// move by well under 0.01 between generator seeds (about 0.002 at 24 seeds).
const RESAMPLES: usize = 4000;
/// The generator's seed: the intervals are the same on every run.
const BOOTSTRAP_SEED: u64 = 0x5EED_C0DE;
/// Cells over the margin listed one by one, per policy, when it has no more.
const LIST_AT_MOST: usize = 12;

/// One policy's standing against the reference over every (workload, config).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Versus {
    pub policy: String,
    /// Cells both ran.
    pub both: usize,
    /// Cells whose H_ANTT exceeds the reference's by more than the margin.
    pub worse: usize,
    /// The largest ratio of H_ANTT to the reference's, and where.
    pub worst: Option<(f64, String)>,
    /// Large mixes both ran, and those whose unfairness exceeds the reference's.
    pub large: usize,
    pub large_unfairer: usize,
    /// The cells over the margin, worst first: where, the ratio of mean
    /// H_ANTTs, and its 95% interval over the seeds both ran.
    pub over: Vec<(String, f64, Option<Interval>)>,
    /// The Large mixes less fair, least fair first: where, the ratio of mean
    /// unfairness, and its interval.
    pub unfairer: Vec<(String, f64, Option<Interval>)>,
}

/// A 95% percentile-bootstrap interval of one cell's ratio of a mean metric
/// (H_ANTT, unfairness) to the reference's: the seeds both ran resampled with replacement, each
/// seed keeping its pair of runs (a seed fixes the start order and the
/// workload's random draws for every policy alike).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Interval {
    pub lo: f64,
    pub hi: f64,
    pub seeds: usize,
}

/// The metrics the intervals are of.
#[derive(Clone, Copy)]
enum Metric {
    HAntt,
    Unfairness,
}

/// H_ANTT and unfairness per seed, each the mean over core orders, of every
/// (policy, workload, config), read in one pass over the runs.
struct PerSeed(BTreeMap<(String, String, String), BTreeMap<u64, [f64; 2]>>);

impl PerSeed {
    fn new(records: &[RunRecord]) -> PerSeed {
        let mut runs: BTreeMap<_, BTreeMap<u64, Vec<[f64; 2]>>> = BTreeMap::new();
        for r in records {
            // Records that made it into cells have valid metrics; any other
            // one is left out here as it is there.
            if let Ok(m) = crate::run_metrics(r) {
                runs.entry((r.policy.clone(), r.workload.clone(), r.config.clone()))
                    .or_default()
                    .entry(r.seed)
                    .or_default()
                    .push([m.h_antt, m.unfairness]);
            }
        }
        let mean = |v: Vec<[f64; 2]>| {
            let n = v.len() as f64;
            let sum = v.iter().fold([0.0, 0.0], |a, x| [a[0] + x[0], a[1] + x[1]]);
            [sum[0] / n, sum[1] / n]
        };
        PerSeed(
            runs.into_iter()
                .map(|(k, seeds)| (k, seeds.into_iter().map(|(s, v)| (s, mean(v))).collect()))
                .collect(),
        )
    }

    /// One metric per seed of a policy's cell.
    fn of(&self, policy: &str, workload: &str, config: &str, m: Metric) -> BTreeMap<u64, f64> {
        let key = (policy.to_string(), workload.to_string(), config.to_string());
        self.0
            .get(&key)
            .map(|seeds| seeds.iter().map(|(&s, v)| (s, v[m as usize])).collect())
            .unwrap_or_default()
    }

    /// The interval of `policy`'s ratio to the reference's on a cell.
    fn interval(&self, policy: &str, workload: &str, config: &str, m: Metric) -> Option<Interval> {
        ratio_interval(
            &self.of(policy, workload, config, m),
            &self.of(REFERENCE, workload, config, m),
        )
    }
}

/// The 95% percentile-bootstrap interval of the mean of `x` (the ratio
/// of its sum to that of as many ones); None with fewer than two values.
pub fn mean_interval(x: &BTreeMap<u64, f64>) -> Option<Interval> {
    let ones: BTreeMap<u64, f64> = x.keys().map(|&k| (k, 1.0)).collect();
    ratio_interval(x, &ones)
}

/// The interval of `x`'s ratio to `r` over the seeds both have; None with
/// fewer than two.
pub fn ratio_interval(x: &BTreeMap<u64, f64>, r: &BTreeMap<u64, f64>) -> Option<Interval> {
    let pairs: Vec<(f64, f64)> = x
        .iter()
        .filter_map(|(s, &a)| r.get(s).map(|&b| (a, b)))
        .collect();
    let n = pairs.len();
    if n < 2 {
        return None;
    }
    let mut rng = rand_pcg::Pcg64::seed_from_u64(BOOTSTRAP_SEED);
    let mut ratios: Vec<f64> = (0..RESAMPLES)
        .map(|_| {
            let (mut sx, mut sr) = (0.0, 0.0);
            for _ in 0..n {
                let (a, b) = pairs[rng.gen_range(0..n)];
                sx += a;
                sr += b;
            }
            sx / sr
        })
        .collect();
    ratios.sort_by(f64::total_cmp);
    let at = |q: f64| ratios[((RESAMPLES - 1) as f64 * q).round() as usize];
    Some(Interval {
        lo: at(0.025),
        hi: at(0.975),
        seeds: n,
    })
}

/// Each policy but the reference against it, in the analysis' order.
pub(crate) fn against_reference(a: &Analysis, records: &[RunRecord]) -> Vec<Versus> {
    let per_seed = PerSeed::new(records);
    a.policies
        .iter()
        .filter(|p| *p != REFERENCE)
        .map(|p| {
            let mut v = Versus {
                policy: p.clone(),
                both: 0,
                worse: 0,
                worst: None,
                large: 0,
                large_unfairer: 0,
                over: Vec::new(),
                unfairer: Vec::new(),
            };
            for config in &a.configs {
                for w in a.workloads_in(config) {
                    let (Some(x), Some(r)) = (a.cell(w, config, p), a.cell(w, config, REFERENCE))
                    else {
                        continue;
                    };
                    v.both += 1;
                    let ratio = x.h_antt / r.h_antt;
                    if ratio > MARGIN {
                        v.worse += 1;
                        let interval = per_seed.interval(p, w, config, Metric::HAntt);
                        v.over.push((format!("{w} on {config}"), ratio, interval));
                    }
                    if v.worst.as_ref().is_none_or(|(b, _)| ratio > *b) {
                        v.worst = Some((ratio, format!("{w} on {config}")));
                    }
                    if x.classes.iter().any(|c| c == "Large") {
                        v.large += 1;
                        if x.unfairness > r.unfairness {
                            v.large_unfairer += 1;
                            let interval = per_seed.interval(p, w, config, Metric::Unfairness);
                            v.unfairer.push((
                                format!("{w} on {config}"),
                                x.unfairness / r.unfairness,
                                interval,
                            ));
                        }
                    }
                }
            }
            v.over.sort_by(|x, y| y.1.total_cmp(&x.1));
            v.unfairer.sort_by(|x, y| y.1.total_cmp(&x.1));
            v
        })
        .collect()
}

/// How many of `v`'s cells over the margin stay over it across their whole
/// interval (None when no such cell has one: a single seed).
fn surely_over(v: &Versus) -> Option<usize> {
    let known: Vec<&Interval> = v.over.iter().filter_map(|o| o.2.as_ref()).collect();
    (!known.is_empty() || v.over.is_empty()).then(|| known.iter().filter(|i| i.lo > MARGIN).count())
}

/// One table of cells, each with its ratio and interval, under `intro`: the
/// cells `pick` gives of every policy that has some, but no more than
/// [`LIST_AT_MOST`].
fn cell_list(
    md: &mut String,
    all: &[Versus],
    pick: impl Fn(&Versus) -> &Vec<(String, f64, Option<Interval>)>,
    intro: &str,
    what: &str,
) {
    let listed: Vec<&Versus> = all
        .iter()
        .filter(|v| !pick(v).is_empty() && pick(v).len() <= LIST_AT_MOST)
        .collect();
    if listed.is_empty() {
        return;
    }
    md.push_str(&format!(
        "{intro}\n\n| policy | cell | {what} | 95% interval | seeds |\n|---|---|---|---|---|\n"
    ));
    for v in listed {
        for (at, ratio, interval) in pick(v) {
            let (range, seeds) = interval_text(interval);
            md.push_str(&format!(
                "| {} | {at} | {ratio:.3} | {range} | {seeds} |\n",
                v.policy
            ));
        }
    }
    md.push('\n');
}

/// An interval and its seed count as table text ("n/a" and 1 without one).
fn interval_text(interval: &Option<Interval>) -> (String, String) {
    interval.map_or_else(
        || ("n/a".to_string(), "1".to_string()),
        |i| (format!("{:.3} - {:.3}", i.lo, i.hi), i.seeds.to_string()),
    )
}

/// The reference against itself: its runs of the later half of the seeds
/// against those of the earlier half, cell by cell. Returns (cells more than
/// the margin worse, cells compared, seeds per half), or None with fewer than
/// two seeds. What a policy that schedules exactly as the reference does
/// would score, measured with half the seeds.
pub(crate) fn noise_floor(records: &[RunRecord]) -> Option<(usize, usize, usize)> {
    let mine: Vec<&RunRecord> = records.iter().filter(|r| r.policy == REFERENCE).collect();
    let seeds: Vec<u64> = mine
        .iter()
        .map(|r| r.seed)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    if seeds.len() < 2 {
        return None;
    }
    let half = seeds.len() / 2;
    let (early, late) = (&seeds[..half], &seeds[half..2 * half]);
    let pick = |set: &[u64]| -> Vec<RunRecord> {
        mine.iter()
            .filter(|r| set.contains(&r.seed))
            .map(|r| (*r).clone())
            .collect()
    };
    let (a, b) = (aggregate(&pick(early)).ok()?, aggregate(&pick(late)).ok()?);
    let key = |c: &Cell| (c.workload.clone(), c.config.clone());
    let earlier: std::collections::BTreeMap<_, f64> =
        a.iter().map(|c| (key(c), c.h_antt)).collect();
    let (mut worse, mut both) = (0, 0);
    for c in &b {
        if let Some(&e) = earlier.get(&key(c)) {
            both += 1;
            if c.h_antt > MARGIN * e {
                worse += 1;
            }
        }
    }
    Some((worse, both, half))
}

/// The summary's section, when the reference ran beside other policies.
pub(crate) fn render(md: &mut String, a: &Analysis, records: &[RunRecord]) {
    if !a.policies.iter().any(|p| p == REFERENCE) || a.policies.len() < 2 {
        return;
    }
    md.push_str("## Against today's Linux, workload by workload\n\n");
    md.push_str(&format!(
        "Each policy against `{REFERENCE}` on every (workload, configuration) both ran: the \
         cells whose H_ANTT is more than {:.0}% higher, the worst ratio, and the Large mixes on \
         which its unfairness is higher.\n\n",
        (MARGIN - 1.0) * 100.0
    ));
    let pct = (MARGIN - 1.0) * 100.0;
    md.push_str(&format!(
        "| policy | cells | > {pct:.0}% worse | of which over {pct:.0}% with 95% confidence | worst ratio | Large mixes less fair |\n|---|---|---|---|---|---|\n",
    ));
    let all = against_reference(a, records);
    for v in &all {
        let worst = v
            .worst
            .as_ref()
            .map_or_else(|| "n/a".to_string(), |(r, at)| format!("{r:.3} ({at})"));
        let sure = surely_over(v).map_or_else(|| "n/a".to_string(), |n| n.to_string());
        md.push_str(&format!(
            "| {} | {} | {} | {} | {} | {}/{} |\n",
            v.policy, v.both, v.worse, sure, worst, v.large_unfairer, v.large
        ));
    }
    md.push('\n');
    cell_list(
        md,
        &all,
        |v| &v.over,
        &format!(
            "Each cell more than {pct:.0}% worse, for the policies with at most {LIST_AT_MOST}: \
             the ratio of mean H_ANTTs and its 95% interval, from {RESAMPLES} bootstrap \
             resamples of the seeds both ran (a seed keeps its pair of runs). An interval \
             wholly above {MARGIN:.2} marks a loss of more than {pct:.0}% at 95% confidence; \
             one that reaches below {MARGIN:.2} leaves open whether the loss is that large, \
             and one wholly above 1 still marks a loss."
        ),
        "ratio",
    );
    cell_list(
        md,
        &all,
        |v| &v.unfairer,
        &format!(
            "Each Large mix less fair than under `{REFERENCE}`, for the policies with at most \
             {LIST_AT_MOST}: the ratio of mean unfairness (colab-tpds's) and its 95% interval, \
             resampled in the same way. An interval wholly above 1 marks a mix that is less \
             fair at 95% confidence."
        ),
        "unfairness ratio",
    );
    match noise_floor(records) {
        Some((worse, both, half)) => {
            let seeds = if half == 1 { "seed" } else { "seeds" };
            md.push_str(&format!(
                "Chance alone: `{REFERENCE}` on the later {half} {seeds} against itself on the \
                 earlier {half} is more than {:.0}% worse on {worse} of {both} cells. That is \
                 the count a policy scheduling exactly as `{REFERENCE}` would get from a \
                 comparison made with {half} {seeds} per cell; run with twice the seeds to see \
                 the floor of this report's own comparison.\n\n",
                (MARGIN - 1.0) * 100.0
            ))
        }
        None => md.push_str(
            "Chance alone cannot be estimated from one seed: run with `--seeds 2` or more to \
             see how many cells a policy identical to the reference would count.\n\n",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ProgramRecord, ReportOptions};

    /// One run; each program (T_M, T_alone) with T_SB = T_alone, so its
    /// slowdown is T_M / T_alone and H_ANTT their mean.
    fn run(workload: &str, class: &str, policy: &str, seed: u64, p: &[(u64, u64)]) -> RunRecord {
        RunRecord {
            workload: workload.into(),
            classes: vec![class.into()],
            config: "2B2S".into(),
            order: "big-first".into(),
            seed,
            policy: policy.into(),
            cores: 4,
            threads: 8,
            programs: p
                .iter()
                .enumerate()
                .map(|(i, &(t_m, alone))| ProgramRecord {
                    name: format!("p{i}"),
                    turnaround_ns: t_m,
                    t_sb_ns: alone,
                    t_alone_ns: alone,
                    t_slow_ns: 3 * alone,
                    cpu_ns: 0,
                    fast_cpu_ns: 0,
                    bound_end_ns: None,
                })
                .collect(),
            energy_j: 1.0,
            makespan_ns: p.iter().map(|x| x.0).max().unwrap_or(0),
            events: 1,
            migrations: 0,
            context_switches: 0,
            fast_idle_share: None,
            h_antt_bound: None,
        }
    }

    fn runs() -> Vec<RunRecord> {
        vec![
            // W1: eevdf H_ANTT 2.0, x 2.2 (ratio 1.10: worse).
            run("W1", "Sync", "eevdf", 1, &[(200, 100), (200, 100)]),
            run("W1", "Sync", "x", 1, &[(220, 100), (220, 100)]),
            // W2: eevdf 2.0, x 2.09 (ratio 1.045: within the margin).
            run("W2", "Sync", "eevdf", 1, &[(200, 100), (200, 100)]),
            run("W2", "Sync", "x", 1, &[(209, 100), (209, 100)]),
            // L1: eevdf slowdowns 2, 2 (unfairness 1); x 3, 2 (H_ANTT 2.5,
            // ratio 1.25: worse, and less fair at 1.5).
            run("L1", "Large", "eevdf", 1, &[(200, 100), (200, 100)]),
            run("L1", "Large", "x", 1, &[(300, 100), (200, 100)]),
        ]
    }

    #[test]
    fn counts_against_the_reference_by_hand() {
        let cells = aggregate(&runs()).unwrap();
        let a = Analysis::new(&cells, &ReportOptions::default());
        let v = against_reference(&a, &runs());
        assert_eq!(v.len(), 1);
        let x = &v[0];
        assert_eq!((x.policy.as_str(), x.both, x.worse), ("x", 3, 2));
        let (ratio, at) = x.worst.clone().unwrap();
        assert!((ratio - 1.25).abs() < 1e-9, "{ratio}");
        assert_eq!(at, "L1 on 2B2S");
        assert_eq!((x.large, x.large_unfairer), (1, 1));
    }

    #[test]
    fn noise_floor_splits_the_seeds_in_halves() {
        let mut r = vec![
            // W1: seed 2 is 10% above seed 1; W2: 2.5% above.
            run("W1", "Sync", "eevdf", 1, &[(200, 100)]),
            run("W1", "Sync", "eevdf", 2, &[(220, 100)]),
            run("W2", "Sync", "eevdf", 1, &[(200, 100)]),
            run("W2", "Sync", "eevdf", 2, &[(205, 100)]),
            // Other policies are not the reference and do not count.
            run("W2", "Sync", "x", 2, &[(900, 100)]),
        ];
        assert_eq!(noise_floor(&r), Some((1, 2, 1)));
        // A third seed is left out (halves of equal size).
        r.push(run("W1", "Sync", "eevdf", 3, &[(100, 100)]));
        assert_eq!(noise_floor(&r), Some((1, 2, 1)));
        // With seeds 1-4 the halves are {1, 2} and {3, 4}: W1 falls from
        // 2.1 to 1.0 (not counted: only a rise is worse), W2 rises from
        // 2.025 to 3.0.
        r.push(run("W1", "Sync", "eevdf", 4, &[(100, 100)]));
        r.push(run("W2", "Sync", "eevdf", 3, &[(300, 100)]));
        r.push(run("W2", "Sync", "eevdf", 4, &[(300, 100)]));
        assert_eq!(noise_floor(&r), Some((1, 2, 2)));
        let one: Vec<RunRecord> = r.into_iter().filter(|x| x.seed == 1).collect();
        assert_eq!(noise_floor(&one), None);
    }

    #[test]
    fn the_section_appears_only_beside_the_reference() {
        let all = runs();
        let cells = aggregate(&all).unwrap();
        let a = Analysis::new(&cells, &ReportOptions::default());
        let mut md = String::new();
        render(&mut md, &a, &all);
        assert!(
            md.contains("| x | 3 | 2 | n/a | 1.250 (L1 on 2B2S) | 1/1 |"),
            "{md}"
        );
        assert!(md.contains("cannot be estimated from one seed"), "{md}");
        let without: Vec<RunRecord> = all.into_iter().filter(|r| r.policy != "eevdf").collect();
        let cells = aggregate(&without).unwrap();
        let a = Analysis::new(&cells, &ReportOptions::default());
        let mut md = String::new();
        render(&mut md, &a, &without);
        assert!(md.is_empty());
    }

    fn seeds(v: &[(u64, f64)]) -> BTreeMap<u64, f64> {
        v.iter().copied().collect()
    }

    #[test]
    fn an_interval_is_a_point_when_every_seed_agrees() {
        // x is 10% above the reference on every seed: every resample says 1.1.
        let r = seeds(&[(1, 2.0), (2, 4.0), (3, 3.0)]);
        let x = seeds(&[(1, 2.2), (2, 4.4), (3, 3.3)]);
        let i = ratio_interval(&x, &r).unwrap();
        assert!(
            (i.lo - 1.1).abs() < 1e-12 && (i.hi - 1.1).abs() < 1e-12,
            "{i:?}"
        );
        assert_eq!(i.seeds, 3);
    }

    #[test]
    fn an_interval_spans_what_resampling_the_seeds_can_give() {
        // Two seeds, ratios 1.0 and 1.2 on equal references: a resample
        // draws both seeds (1.1), seed 1 twice (1.0) or seed 2 twice (1.2),
        // each of the last two a quarter of the time, so the 2.5% and 97.5%
        // points are 1.0 and 1.2.
        let r = seeds(&[(1, 2.0), (2, 2.0)]);
        let x = seeds(&[(1, 2.0), (2, 2.4)]);
        let i = ratio_interval(&x, &r).unwrap();
        assert!(
            (i.lo - 1.0).abs() < 1e-12 && (i.hi - 1.2).abs() < 1e-12,
            "{i:?}"
        );
        // Only seeds both ran count; fewer than two give none.
        let r3 = seeds(&[(1, 2.0), (2, 2.0), (9, 100.0)]);
        assert_eq!(ratio_interval(&x, &r3), Some(i));
        assert_eq!(ratio_interval(&seeds(&[(1, 2.0)]), &r), None);
        assert_eq!(ratio_interval(&seeds(&[(3, 2.0), (4, 2.0)]), &r), None);
    }

    #[test]
    fn cells_over_the_margin_are_listed_with_their_intervals() {
        let mut all = Vec::new();
        for seed in [1, 2] {
            // W1: 10% worse on both seeds (interval 1.10 - 1.10: surely over).
            all.push(run("W1", "Sync", "eevdf", seed, &[(200, 100)]));
            all.push(run("W1", "Sync", "x", seed, &[(220, 100)]));
            // W2: 2% worse on seed 1, 18% on seed 2 (mean 1.1, interval
            // 1.02 - 1.18: surely worse, but not surely by more than 5%).
            all.push(run("W2", "Sync", "eevdf", seed, &[(200, 100)]));
            let w2 = if seed == 1 { 204 } else { 236 };
            all.push(run("W2", "Sync", "x", seed, &[(w2, 100)]));
        }
        for seed in [1, 2] {
            // L1: eevdf slowdowns 2 and 2 (unfairness 1) on both seeds; x
            // 3 and 2 (1.5) on seed 1, 2.4 and 2 (1.2) on seed 2: a ratio
            // of 1.35, interval 1.2 - 1.5. Its H_ANTT (2.5, 2.2) is over the
            // margin too.
            all.push(run("L1", "Large", "eevdf", seed, &[(200, 100), (200, 100)]));
            let first = if seed == 1 { 300 } else { 240 };
            all.push(run("L1", "Large", "x", seed, &[(first, 100), (200, 100)]));
        }
        let cells = aggregate(&all).unwrap();
        let a = Analysis::new(&cells, &ReportOptions::default());
        let v = against_reference(&a, &all);
        assert_eq!((v[0].worse, surely_over(&v[0])), (3, Some(2)));
        let (at, ratio, interval) = &v[0].unfairer[0];
        assert_eq!((at.as_str(), v[0].unfairer.len()), ("L1 on 2B2S", 1));
        assert!((ratio - 1.35).abs() < 1e-9, "{ratio}");
        let i = interval.unwrap();
        assert!(
            (i.lo - 1.2).abs() < 1e-9 && (i.hi - 1.5).abs() < 1e-9,
            "{i:?}"
        );
        let mut md = String::new();
        render(&mut md, &a, &all);
        assert!(
            md.contains("| x | 3 | 3 | 2 | 1.175 (L1 on 2B2S) | 1/1 |"),
            "{md}"
        );
        assert!(
            md.contains("| x | L1 on 2B2S | 1.350 | 1.200 - 1.500 | 2 |"),
            "{md}"
        );
        assert!(
            md.contains("| x | W1 on 2B2S | 1.100 | 1.100 - 1.100 | 2 |"),
            "{md}"
        );
        assert!(
            md.contains("| x | W2 on 2B2S | 1.100 | 1.020 - 1.180 | 2 |"),
            "{md}"
        );
    }
}
