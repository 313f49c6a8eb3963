//! "Who got the fast cores": each program's share of its CPU time on the
//! machine's fastest cores, per policy, over the multi-program workloads.

use std::collections::{BTreeMap, BTreeSet};

use crate::analysis::Analysis;
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

/// The section, one table per asymmetric configuration (one where some
/// program ran off the fastest cores); nothing when the records carry no
/// CPU times.
pub(crate) fn render(md: &mut String, a: &Analysis, records: &[RunRecord]) {
    let sums = sums(records);
    let asymmetric = |config: &str| {
        sums.iter()
            .any(|(k, &(fast, cpu))| k.0 == config && fast < cpu)
    };
    let configs: Vec<&String> = a.configs.iter().filter(|c| asymmetric(c)).collect();
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
        let policies: Vec<&String> = a
            .policies
            .iter()
            .filter(|p| {
                sums.keys()
                    .any(|k| k.0 == config.as_str() && k.2 == p.as_str())
            })
            .collect();
        let mut programs: Vec<&str> = sums
            .keys()
            .filter(|k| k.0 == config.as_str())
            .map(|k| k.1)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        programs.sort_by(|x, y| natural_cmp(x, y));
        let rows: Vec<Vec<String>> = programs
            .iter()
            .map(|&prog| {
                let mut row = vec![prog.to_string()];
                row.extend(policies.iter().map(|p| {
                    match sums.get(&(config.as_str(), prog, p.as_str())) {
                        Some(&(fast, cpu)) if cpu > 0 => {
                            format!("{:.0}%", 100.0 * fast as f64 / cpu as f64)
                        }
                        _ => "-".to_string(),
                    }
                }));
                row
            })
            .collect();
        let mut header = vec!["program".to_string()];
        header.extend(policies.iter().map(|p| p.to_string()));
        md.push_str(&format!("### {config}\n\n"));
        md.push_str(&crate::summary::table(&header, &rows));
    }
}
