//! "Who got the fast cores": each program's share of its CPU time on the
//! machine's fastest cores, per policy, over the multi-program workloads.

use std::collections::{BTreeMap, BTreeSet};

use crate::analysis::Analysis;
use crate::naming::fast_share_stem;
use crate::{natural_cmp, RunRecord};

/// CPU times per (config, program, policy): (on the fastest cores, in
/// all), summed over the multi-program runs of each program name.
pub(crate) struct FastShares<'r> {
    sums: BTreeMap<(&'r str, &'r str, &'r str), (u64, u64)>,
}

impl<'r> FastShares<'r> {
    pub(crate) fn new(records: &'r [RunRecord]) -> Self {
        let mut sums = BTreeMap::new();
        for r in records.iter().filter(|r| r.programs.len() > 1) {
            for p in &r.programs {
                let e = sums
                    .entry((r.config.as_str(), p.name.as_str(), r.policy.as_str()))
                    .or_insert((0, 0));
                e.0 += p.fast_cpu_ns;
                e.1 += p.cpu_ns;
            }
        }
        FastShares { sums }
    }

    /// The configurations of `a` where some program ran off the fastest
    /// cores (asymmetric machines with CPU times recorded), in `a`'s order.
    pub(crate) fn configs<'a>(&self, a: &'a Analysis) -> Vec<&'a String> {
        a.configs
            .iter()
            .filter(|c| {
                self.sums
                    .iter()
                    .any(|(k, &(fast, cpu))| k.0 == c.as_str() && fast < cpu)
            })
            .collect()
    }

    /// The policies of `a` (in its order) with a multi-program run on `config`.
    pub(crate) fn policies(&self, a: &Analysis, config: &str) -> Vec<String> {
        a.policies
            .iter()
            .filter(|p| self.sums.keys().any(|k| k.0 == config && k.2 == p.as_str()))
            .cloned()
            .collect()
    }

    /// Each program's share (0-1) of its CPU time on the fastest cores
    /// under each of `policies` on `config`, programs in natural order
    /// (None: the policy did not run it).
    pub(crate) fn shares(
        &self,
        config: &str,
        policies: &[String],
    ) -> Vec<(String, Vec<Option<f64>>)> {
        let mut programs: Vec<&str> = self
            .sums
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
                    .map(|p| match self.sums.get(&(config, prog, p.as_str())) {
                        Some(&(fast, cpu)) if cpu > 0 => Some(fast as f64 / cpu as f64),
                        _ => None,
                    })
                    .collect();
                (prog.to_string(), values)
            })
            .collect()
    }
}

/// The section, one table per asymmetric configuration, with links to the
/// charts drawn; nothing when the records carry no CPU times.
pub(crate) fn render(md: &mut String, a: &Analysis, records: &[RunRecord], charts: &[String]) {
    let fs = FastShares::new(records);
    let configs = fs.configs(a);
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
        let policies = fs.policies(a, config);
        let rows: Vec<Vec<String>> = fs
            .shares(config, &policies)
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
        header.extend(policies);
        md.push_str(&format!("### {config}\n\n"));
        md.push_str(&crate::summary::table(&header, &rows));
        let stem = fast_share_stem(config);
        let links: Vec<String> = charts
            .iter()
            .filter(|c| c.starts_with(&format!("{stem}.")))
            .map(|c| format!("[{c}]({c})"))
            .collect();
        if !links.is_empty() {
            md.push_str(&format!("Chart: {}\n\n", links.join(", ")));
        }
    }
}
