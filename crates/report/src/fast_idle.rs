//! "Fast cores left idle": per policy and machine, the mean share of the
//! fast cores' time they sat idle while slower cores ran threads (the
//! simulator's `fast_idle_slow_busy_ns` over the fast cores' whole time).

use std::collections::BTreeMap;

use crate::analysis::Analysis;
use crate::RunRecord;

/// Mean share per (config, policy) over every run that has one.
fn means(records: &[RunRecord]) -> BTreeMap<(&str, &str), f64> {
    let mut sums: BTreeMap<(&str, &str), (f64, usize)> = BTreeMap::new();
    for r in records {
        if let Some(share) = r.fast_idle_share {
            let e = sums
                .entry((r.config.as_str(), r.policy.as_str()))
                .or_default();
            e.0 += share;
            e.1 += 1;
        }
    }
    sums.into_iter()
        .map(|(k, (sum, n))| (k, sum / n as f64))
        .collect()
}

/// The section: one row per policy, one column per asymmetric machine;
/// nothing when no run recorded the share (older runs, symmetric machines).
pub(crate) fn render(md: &mut String, a: &Analysis, records: &[RunRecord]) {
    let means = means(records);
    let configs: Vec<&String> = a
        .configs
        .iter()
        .filter(|c| means.keys().any(|k| k.0 == c.as_str()))
        .collect();
    if configs.is_empty() {
        return;
    }
    md.push_str("## Fast cores left idle while slower cores worked\n\n");
    md.push_str(
        "The share of the fast cores' time (their count times each run's makespan) that they sat \
         idle while a slower core ran a thread, averaged over every workload, core order and \
         seed: time a scheduler that never leaves a fast core idle while a slow one works could \
         have used (lower is better; a migration's cost is not counted against it).\n\n",
    );
    let mut header = vec!["policy".to_string()];
    header.extend(configs.iter().map(|c| c.to_string()));
    let rows: Vec<Vec<String>> = a
        .policies
        .iter()
        .filter(|p| means.keys().any(|k| k.1 == p.as_str()))
        .map(|p| {
            let mut row = vec![p.clone()];
            row.extend(
                configs
                    .iter()
                    .map(|c| match means.get(&(c.as_str(), p.as_str())) {
                        Some(&m) => format!("{:.1}%", 100.0 * m),
                        None => "-".to_string(),
                    }),
            );
            row
        })
        .collect();
    md.push_str(&crate::summary::table(&header, &rows));
}
