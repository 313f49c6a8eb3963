//! "Distance to the lower bound": per policy and machine, the geomean of
//! each run's H_ANTT over the least H_ANTT any schedule of that run's draws
//! could have (colab-bound; `RunRecord::h_antt_bound`).

use std::collections::BTreeMap;

use crate::analysis::Analysis;
use crate::RunRecord;

/// Geomean of H_ANTT over its bound per (config, policy), over every run
/// that has a bound.
fn geomeans(records: &[RunRecord]) -> BTreeMap<(&str, &str), f64> {
    let mut sums: BTreeMap<(&str, &str), (f64, usize)> = BTreeMap::new();
    for r in records {
        let (Some(bound), Ok(m)) = (r.h_antt_bound, crate::run_metrics(r)) else {
            continue;
        };
        if bound > 0.0 && m.h_antt > 0.0 {
            let e = sums
                .entry((r.config.as_str(), r.policy.as_str()))
                .or_default();
            e.0 += (m.h_antt / bound).ln();
            e.1 += 1;
        }
    }
    sums.into_iter()
        .map(|(k, (sum, n))| (k, (sum / n as f64).exp()))
        .collect()
}

/// The section: one row per policy, one column per machine; nothing when
/// no run has a bound (programs restarted, older runs).
pub(crate) fn render(md: &mut String, a: &Analysis, records: &[RunRecord]) {
    let g = geomeans(records);
    let configs: Vec<&String> = a
        .configs
        .iter()
        .filter(|c| g.keys().any(|k| k.0 == c.as_str()))
        .collect();
    if configs.is_empty() {
        return;
    }
    md.push_str("## Distance to the lower bound\n\n");
    md.push_str(
        "Each run's H_ANTT over the least H_ANTT any schedule of the same step sizes could have \
         (colab-bound: each program's chain of steps at the fastest rate, and the machine's \
         capacity over every order in which the programs could finish), geomean over every \
         workload, core order and seed (1.00 would be the bound itself). The bound still leaves \
         out locks, barriers and each program's thread count in the machine's capacity, so \
         most of this distance is the bound's, not the policy's (book: A lower bound).\n\n",
    );
    let mut header = vec!["policy".to_string()];
    header.extend(configs.iter().map(|c| c.to_string()));
    let rows: Vec<Vec<String>> = a
        .policies
        .iter()
        .filter(|p| g.keys().any(|k| k.1 == p.as_str()))
        .map(|p| {
            let mut row = vec![p.clone()];
            row.extend(
                configs
                    .iter()
                    .map(|c| match g.get(&(c.as_str(), p.as_str())) {
                        Some(&v) => format!("{v:.3}"),
                        None => "-".to_string(),
                    }),
            );
            row
        })
        .collect();
    md.push_str(&crate::summary::table(&header, &rows));
}
