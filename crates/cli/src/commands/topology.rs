//! `colab topology`: describe a machine.

use crate::common::{load_topology, Order};
use crate::table::{self, Table};
use anyhow::Result;
use colab_core::{CoreOrder, Topology};

pub const ABOUT: &str = "Describe a machine: its cores, their rates and power, and its costs.";

pub const EXAMPLES: &str = "\
Examples:
  colab topology 2B4S
  colab topology 1B3S --order little-first
  colab topology hikey970                  # a named machine (`colab list machines`)
  colab topology topologies/intel-core-ultra-7-155h.toml
  colab topology 2B4S --json";

#[derive(clap::Args)]
pub struct TopologyArgs {
    /// Name (2B2S, hikey970, ...; `colab list machines`) or topology TOML file.
    name: String,
    #[arg(long, value_enum, default_value = "big-first")]
    order: Order,
    /// Print the machine as JSON (core types, clusters, cores and costs in ns).
    #[arg(long)]
    json: bool,
}

pub fn run(a: TopologyArgs) -> Result<()> {
    let order: CoreOrder = a.order.into();
    let t = load_topology(&a.name, order)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&json(&t, order))?);
    } else {
        print!("{}", describe(&t, order, table::width()));
    }
    Ok(())
}

/// "2 big + 4 little": how many cores of each type, fastest type first.
pub fn cores_per_type(t: &Topology) -> String {
    let mut types: Vec<usize> = (0..t.core_types.len()).collect();
    types.sort_by(|&a, &b| {
        t.core_types[b]
            .compute_rate
            .total_cmp(&t.core_types[a].compute_rate)
    });
    types
        .iter()
        .map(|&k| (k, t.core_type_of.iter().filter(|&&x| x == k).count()))
        .filter(|&(_, n)| n > 0)
        .map(|(k, n)| format!("{n} {}", t.core_types[k].name))
        .collect::<Vec<_>>()
        .join(" + ")
}

/// A duration given in ns in the largest unit that keeps it exact to the
/// ns: "5 us", "4 ms", "8.268 us", "750 ns".
pub fn duration(ns: u64) -> String {
    let (unit, name) = if ns >= 1_000_000 {
        (1_000_000, "ms")
    } else if ns >= 1_000 {
        (1_000, "us")
    } else {
        return format!("{ns} ns");
    };
    let whole = ns / unit;
    let frac = ns % unit;
    if frac == 0 {
        return format!("{whole} {name}");
    }
    let digits = if unit == 1_000 { 3 } else { 6 };
    let frac = format!("{frac:0digits$}");
    format!("{whole}.{} {name}", frac.trim_end_matches('0'))
}

/// The machine for people: a line with its name and cores, a table of its
/// cores, and its costs with their units.
pub fn describe(t: &Topology, order: CoreOrder, width: usize) -> String {
    let n = t.num_cores();
    let clusters = t.clusters.len();
    let mut out = format!(
        "{}: {n} core{} ({}) in {clusters} cluster{}, {} order\n",
        t.name,
        if n == 1 { "" } else { "s" },
        cores_per_type(t),
        if clusters == 1 { "" } else { "s" },
        order.label()
    );
    let mut cores = Table::new(&[
        "core",
        "type",
        "cluster",
        "compute rate",
        "memory rate",
        "active W",
        "idle W",
    ])
    .right_align(&[0, 3, 4, 5]);
    for c in t.cores() {
        let ty = t.core_type(c);
        let k = t.cluster_of(c);
        cores.row(vec![
            c.0.to_string(),
            ty.name.clone(),
            format!("{k} {}", t.clusters[k].name),
            format!("{:.3}", ty.compute_rate),
            format!("{:.3}", ty.memory_rate),
            format!("{:.2}", ty.active_power_w),
            format!("{:.2}", ty.idle_power_w),
        ]);
    }
    out += &cores.render(width);
    out += "Rates are relative to the reference big core (1.0); W = watts.\n";
    let c = &t.costs;
    let mut costs = vec![
        ("context switch", duration(c.context_switch_ns)),
        ("migration within a cluster", duration(c.migration_local_ns)),
        ("migration across clusters", duration(c.migration_cross_ns)),
        ("tick", duration(c.tick_ns)),
        (
            "wake-up latency",
            if c.wakeup_latency_ns == 0 {
                "0 (not modelled)".to_string()
            } else {
                duration(c.wakeup_latency_ns)
            },
        ),
    ];
    if c.idle_exit.is_empty() {
        costs.push(("idle exit", "no deeper idle states".to_string()));
    }
    let states: Vec<(String, String)> = c
        .idle_exit
        .iter()
        .map(|s| {
            (
                format!("idle exit after {} idle", duration(s.after_ns)),
                format!("+{}", duration(s.extra_ns)),
            )
        })
        .collect();
    let label_w = costs
        .iter()
        .map(|(l, _)| l.len())
        .chain(states.iter().map(|(l, _)| l.len()))
        .max()
        .unwrap_or(0);
    out += "Costs:\n";
    for (l, v) in costs
        .iter()
        .map(|(l, v)| (l.to_string(), v))
        .chain(states.iter().map(|(l, v)| (l.clone(), v)))
    {
        out += &format!("  {l:<label_w$}  {v}\n");
    }
    out
}

/// The machine as JSON: what `describe` prints, with the costs in ns.
fn json(t: &Topology, order: CoreOrder) -> serde_json::Value {
    let cores: Vec<serde_json::Value> = t
        .cores()
        .map(|c| {
            serde_json::json!({
                "core": c.0,
                "core_type": t.core_type(c).name,
                "cluster": t.cluster_of(c),
            })
        })
        .collect();
    let clusters: Vec<serde_json::Value> = t
        .clusters
        .iter()
        .map(|k| {
            serde_json::json!({
                "name": k.name,
                "core_type": t.core_types[k.core_type].name,
                "cores": k.cores.iter().map(|c| c.0).collect::<Vec<_>>(),
            })
        })
        .collect();
    serde_json::json!({
        "name": t.name,
        "order": order.label(),
        "core_types": t.core_types,
        "clusters": clusters,
        "cores": cores,
        "costs": t.costs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_keep_every_ns() {
        assert_eq!(duration(0), "0 ns");
        assert_eq!(duration(750), "750 ns");
        assert_eq!(duration(5_000), "5 us");
        assert_eq!(duration(8_268), "8.268 us");
        assert_eq!(duration(100_000), "100 us");
        assert_eq!(duration(4_000_000), "4 ms");
        assert_eq!(duration(1_500_000), "1.5 ms");
        assert_eq!(duration(1_000_001), "1.000001 ms");
    }
}
