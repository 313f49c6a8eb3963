//! `colab topology`: describe a machine.

use crate::common::{load_topology, Order};
use anyhow::Result;

pub const ABOUT: &str = "Describe a machine: its cores, their rates and power, and its costs.";

pub const EXAMPLES: &str = "\
Examples:
  colab topology 2B4S
  colab topology 1B3S --order little-first
  colab topology topologies/intel-core-ultra-7-155h.toml";

#[derive(clap::Args)]
pub struct TopologyArgs {
    /// Name (2B2S, ...) or topology TOML file.
    name: String,
    #[arg(long, value_enum, default_value = "big-first")]
    order: Order,
}

pub fn run(a: TopologyArgs) -> Result<()> {
    let t = load_topology(&a.name, a.order.into())?;
    println!("{}", t.describe());
    for c in t.cores() {
        let ty = t.core_type(c);
        println!(
            "  core {:>2}: {:<8} cluster {} compute {:.3} memory {:.3} active {:.2} W idle {:.2} W",
            c.0,
            ty.name,
            t.cluster_of(c),
            ty.compute_rate,
            ty.memory_rate,
            ty.active_power_w,
            ty.idle_power_w
        );
    }
    println!("  costs: {:?}", t.costs);
    Ok(())
}
