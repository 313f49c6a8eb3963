//! `colab calibrate`: this machine's scheduling costs as a topology file.

use crate::common::write_atomic;
use anyhow::{Context, Result};
use std::path::PathBuf;

pub const ABOUT: &str = "Measure this machine's scheduling costs and write a topology file for it.";

pub const EXAMPLES: &str = "\
Examples:
  colab calibrate                          # writes reports/this-machine.toml
  colab calibrate -o topologies/my-machine.toml
  colab validate --topology reports/this-machine.toml   # then validate against it";

#[derive(clap::Args)]
pub struct CalibrateArgs {
    /// Where to write the topology (TOML).
    #[arg(short, long, default_value = "reports/this-machine.toml")]
    out: PathBuf,
}

pub fn run(a: CalibrateArgs) -> Result<()> {
    let out = &a.out;
    eprintln!("calibrate: measuring (a few seconds)...");
    let m = colab_native::calibrate::measure();
    let text = m.topology_toml("this-machine");
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("{}: cannot create directory", dir.display()))?;
    }
    write_atomic(out, text.as_bytes())?;
    let deeper: String = m
        .idle_exit
        .iter()
        .map(|s| format!(", +{} ns after {} us idle", s.extra_ns, s.after_ns / 1_000))
        .collect();
    println!(
        "{} CPUs; busy loop {:.1} iterations/us; context switch {} ns; wake-up latency {} ns{deeper}; migration {} ns; tick {} ns ({})",
        m.cpus,
        m.spin.spins_per_us,
        m.context_switch_ns,
        m.wakeup_latency_ns,
        m.migration_ns,
        m.tick_ns,
        m.tick_source
    );
    for w in &m.warnings {
        eprintln!("warning: {w}");
    }
    println!("topology written to {}", out.display());
    Ok(())
}
