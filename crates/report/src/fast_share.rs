//! "Who got the fast cores": each program's share of its CPU time on the
//! machine's fastest cores, per policy, over the multi-program workloads.

use std::collections::{BTreeMap, BTreeSet};

use crate::analysis::Analysis;
use crate::naming::fast_share_stem;
use crate::{natural_cmp, RunRecord};

/// (config, program, policy) -> (CPU time on the fastest cores, CPU time),
/// summed over the multi-program runs of each program name.
type Sums<'r> = BTreeMap<(&'r str, &'r str, &'r str), (u64, u64)>;

fn sums(records: &[RunRecord]) -> Sums<'_> {
    let mut sums = Sums::new();
    for r in records.iter().filter(|r| r.programs.len() > 1) {
        for p in &r.programs {
            let e = sums
                .entry((&r.config, &p.name, &r.policy))
                .or_insert((0, 0));
            e.0 += p.fast_cpu_ns;
            e.1 += p.cpu_ns;
        }
    }
    sums
}

/// Each program's share (0-1) of its CPU time on the fastest cores under
/// each policy on `config`, programs in natural order, one value per
/// policy of `policies` (None: the policy did not run it).
pub(crate) fn shares(
    records: &[RunRecord],
    config: &str,
    policies: &[String],
) -> Vec<(String, Vec<Option<f64>>)> {
    let sums = sums(records);
    let mut programs: Vec<&str> = sums
        .keys()
        .filter(|k| k.0 == config)
        .map(|k| k.1)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    programs.sort_by(|x, y| natural_cmp(x, y));
    programs
        .into_iter()
        .map(|prog| {
            let values = policies
                .iter()
                .map(|p| match sums.get(&(config, prog, p.as_str())) {
                    Some(&(fast, cpu)) if cpu > 0 => Some(fast as f64 / cpu as f64),
                    _ => None,
                })
                .collect();
            (prog.to_string(), values)
        })
        .collect()
}

/// The configurations of `a` where some program ran off the fastest cores
/// (asymmetric machines with CPU times recorded), in `a`'s order.
pub(crate) fn asymmetric_configs<'a>(a: &'a Analysis, records: &[RunRecord]) -> Vec<&'a String> {
    let sums = sums(records);
    a.configs
        .iter()
        .filter(|c| {
            sums.iter()
                .any(|(k, &(fast, cpu))| k.0 == c.as_str() && fast < cpu)
        })
        .collect()
}

/// The section, one table per asymmetric configuration, with links to the
/// charts drawn; nothing when the records carry no CPU times.
pub(crate) fn render(md: &mut String, a: &Analysis, records: &[RunRecord], charts: &[String]) {
    let configs = asymmetric_configs(a, records);
    if configs.is_empty() {
        return;
    }
    md.push_str("## Who got the fast cores\n\n");
    md.push_str(
        "For each program of the multi-program workloads: the part of its threads' CPU time that \
         ran on the machine's fastest cores, summed over every workload, core order and seed that \
         runs it. A policy that leaves a program on the slow cores shows a low share.\n\n",
    );
    for config in configs {
        let policies: Vec<String> = a
            .policies
            .iter()
            .filter(|p| {
                records
                    .iter()
                    .any(|r| r.config == **config && r.policy == **p)
            })
            .cloned()
            .collect();
        let rows: Vec<Vec<String>> = shares(records, config, &policies)
            .into_iter()
            .map(|(prog, values)| {
                let mut row = vec![prog];
                row.extend(values.iter().map(|v| match v {
                    Some(x) => format!("{:.0}%", 100.0 * x),
                    None => "-".to_string(),
                }));
                row
            })
            .collect();
        let mut header = vec!["program".to_string()];
        header.extend(policies.iter().cloned());
        md.push_str(&format!("### {config}\n\n"));
        md.push_str(&crate::summary::table(&header, &rows));
        let stem = fast_share_stem(config);
        let drawn: Vec<&String> = charts
            .iter()
            .filter(|c| c.starts_with(&format!("{stem}.")))
            .collect();
        if !drawn.is_empty() {
            let links: Vec<String> = drawn.iter().map(|c| format!("[{c}]({c})")).collect();
            md.push_str(&format!("Chart: {}\n\n", links.join(", ")));
        }
    }
}
