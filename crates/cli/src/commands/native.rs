//! `colab native`: a workload with real threads on this machine.

use crate::common::{load_topology, Order};
use anyhow::{bail, Context, Result};
use colab_native::{Emulation, NativeError, NativeOptions, ProgramRuns};
use colab_workload::{Library, Workload};
use std::sync::Arc;

pub const ABOUT: &str = "Run a workload natively with real threads on this machine.";

pub const EXAMPLES: &str = "\
Examples:
  colab native Sync-1 --reps 5 --cpus 0-1  # a mix on two CPUs, five repetitions
  colab native ferret:2 --emulate 1B1S --cpus 0,1  # an emulated big and little core
  colab native blackscholes --reps 3 --json";

#[derive(clap::Args)]
pub struct NativeArgs {
    /// A benchmark (`ferret`, `ferret:8`), a mix (`Sync-2`), or a TOML file.
    workload: String,
    /// CPUs to run on, taskset-style: `0,1` or `0-3` (default: all).
    #[arg(long)]
    cpus: Option<String>,
    /// Repetitions (turnaround is reported as median and spread).
    #[arg(short, long, default_value_t = 5)]
    reps: u32,
    /// Seed for the random choices inside the workload.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Abort if one repetition takes longer (seconds).
    #[arg(long, default_value_t = 300)]
    timeout: u64,
    /// Emulate an asymmetric machine on identical CPUs: a named machine
    /// (`2B2S`) or a topology file; its cores map in order (`--order`)
    /// to the CPUs of `--cpus` (default 0..N-1), and compute runs at each
    /// core type's rate, re-checking the CPU every 20 us of work.
    #[arg(long, value_name = "TOPOLOGY")]
    emulate: Option<String>,
    /// Core order of the emulated machine (which CPUs are big).
    #[arg(long, value_enum, default_value = "big-first")]
    order: Order,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(a: NativeArgs) -> Result<()> {
    let w = Library::builtin().resolve(&a.workload)?;
    let mut cpus = a
        .cpus
        .as_deref()
        .map(|c| colab_native::parse_cpu_list(c).map_err(|e| anyhow::anyhow!("--cpus {c}: {e}")))
        .transpose()?;
    if a.reps == 0 {
        bail!("--reps must be at least 1");
    }
    let emulate = match &a.emulate {
        Some(arg) => {
            let topo = load_topology(arg, a.order.into())?;
            let list = cpus
                .clone()
                .unwrap_or_else(|| (0..topo.num_cores()).collect());
            let e = Emulation::new(&topo, &list).with_context(|| format!("--emulate {arg}"))?;
            cpus = Some(list);
            Some(Arc::new(e))
        }
        None => None,
    };
    let calibration = colab_native::calibrate_spin();
    let emulated = emulate.as_ref().map(|e| e.description.clone());
    let opts = NativeOptions {
        cpus: cpus.clone(),
        reps: a.reps,
        seed: a.seed,
        calibration,
        timeout: std::time::Duration::from_secs(a.timeout.max(1)),
        emulate,
    };
    let runs = match colab_native::run(&w, &opts) {
        Ok(r) => r,
        Err(e @ NativeError::Timeout { .. }) => {
            // Threads of a hung run cannot be stopped: report and leave.
            eprintln!("error: {e}");
            std::process::exit(1);
        }
        Err(e) => return Err(e.into()),
    };
    if a.json {
        let v = serde_json::json!({
            "workload": w.name, "cpus": cpus, "reps": a.reps, "seed": a.seed, "calibration": calibration, "emulate": emulated,
            "programs": runs.iter().map(|r| serde_json::json!({
                "name": r.name, "threads": r.threads, "samples_ns": r.samples_ns, "raw_ns": r.raw_ns, "rate_during": r.rate_during,
                "median_ns": r.median_ns(), "min_ns": r.min_ns(), "max_ns": r.max_ns(), "spread": r.spread(),
            })).collect::<Vec<_>>(),
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    let where_ = match emulated {
        Some(e) => format!("an emulated {e}"),
        None => cpus.map_or("all CPUs".to_string(), |c| format!("CPUs {c:?}")),
    };
    print_table(&w, &where_, a.reps, calibration.spins_per_us, &runs);
    Ok(())
}

fn print_table(w: &Workload, where_: &str, reps: u32, spins_per_us: f64, runs: &[ProgramRuns]) {
    println!(
        "{} natively on {where_}, {reps} repetitions (busy loop {spins_per_us:.1} iterations/us)",
        w.name
    );
    println!(
        "  {:<16} {:>7} {:>14} {:>12} {:>12} {:>8}",
        "program", "threads", "turnaround ms", "min ms", "max ms", "spread"
    );
    for r in runs {
        println!(
            "  {:<16} {:>7} {:>14.3} {:>12.3} {:>12.3} {:>7.1}%",
            r.name,
            r.threads,
            r.median_ns() as f64 / 1e6,
            r.min_ns() as f64 / 1e6,
            r.max_ns() as f64 / 1e6,
            r.spread() * 100.0
        );
    }
}
