//! One case of `colab bench --cores` / `--threads`, simulated `reps` times,
//! for deterministic instruction counts on a noisy machine: the difference
//! between the counts of `reps = 2` and `reps = 1` is one simulation
//! without the process's set-up (model training, topology), e.g.
//!
//! ```text
//! cargo build --release -p colab-campaign --example scale_case
//! valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
//!   target/release/examples/scale_case hsp 512B512S 2048 1
//! ```
//!
//! The cases: `4B4S 16` and `512B512S 2048` (cores), `4B4S 64` and
//! `4B4S 4096` (threads). Prints the events and wall time of each run.

use anyhow::{bail, Context, Result};
use colab_campaign::bench::{scale_workload, SCALE_ROUNDS};
use colab_campaign::model_predictor::predictor_on;
use colab_core::{CoreOrder, Topology};
use colab_sim::{simulate, SimConfig};

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [pol, machine, n, reps] = args.as_slice() else {
        bail!("usage: scale_case POLICY MACHINE THREADS REPS (e.g. hsp 512B512S 2048 1)");
    };
    let n: u64 = n.parse().context("THREADS: a whole number")?;
    let reps: u32 = reps.parse().context("REPS: a whole number")?;
    let topo = Topology::named(machine, CoreOrder::BigFirst)?;
    let kind = predictor_on("model", pol, &topo)?;
    let w = scale_workload(n, SCALE_ROUNDS)?;
    for _ in 0..reps {
        let mut p = colab_policies::by_name(pol)?;
        let cfg = SimConfig {
            predictor: kind.clone(),
            ..SimConfig::default()
        };
        let t0 = std::time::Instant::now();
        let r = simulate(&w, &topo, p.as_mut(), &cfg)?;
        let s = t0.elapsed().as_secs_f64();
        println!(
            "{} events {:.3} s {:.2} M/s",
            r.stats.events,
            s,
            r.stats.events as f64 / s / 1e6
        );
    }
    Ok(())
}
