//! "Against today's Linux": each policy workload by workload against EEVDF,
//! with the count that chance alone gives, so that a per-workload bar can be
//! read against the noise of the seeds it was measured with.

use std::collections::BTreeSet;

use crate::analysis::Analysis;
use crate::{aggregate, Cell, RunRecord};

/// The reference policy: the kernel's default since 6.6.
pub(crate) const REFERENCE: &str = "eevdf";
/// How much worse than the reference a workload must be to count: the margin
/// of the ROTA quality bar ("never more than 5% worse than EEVDF").
pub(crate) const MARGIN: f64 = 1.05;

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
}

/// Each policy but the reference against it, in the analysis' order.
pub(crate) fn against_reference(a: &Analysis) -> Vec<Versus> {
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
                    }
                    if v.worst.as_ref().is_none_or(|(b, _)| ratio > *b) {
                        v.worst = Some((ratio, format!("{w} on {config}")));
                    }
                    if x.classes.iter().any(|c| c == "Large") {
                        v.large += 1;
                        if x.unfairness > r.unfairness {
                            v.large_unfairer += 1;
                        }
                    }
                }
            }
            v
        })
        .collect()
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
    md.push_str(&format!(
        "| policy | cells | > {:.0}% worse | worst ratio | Large mixes less fair |\n|---|---|---|---|---|\n",
        (MARGIN - 1.0) * 100.0
    ));
    for v in against_reference(a) {
        let worst = v
            .worst
            .map_or_else(|| "n/a".to_string(), |(r, at)| format!("{r:.3} ({at})"));
        md.push_str(&format!(
            "| {} | {} | {} | {} | {}/{} |\n",
            v.policy, v.both, v.worse, worst, v.large_unfairer, v.large
        ));
    }
    md.push('\n');
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
                })
                .collect(),
            energy_j: 1.0,
            makespan_ns: p.iter().map(|x| x.0).max().unwrap_or(0),
            events: 1,
            migrations: 0,
            context_switches: 0,
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
        let v = against_reference(&a);
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
            md.contains("| x | 3 | 2 | 1.250 (L1 on 2B2S) | 1/1 |"),
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
}
