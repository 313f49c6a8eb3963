//! `colab bench`: the simulator's speed and the campaign's wall time.

use anyhow::Result;
use colab_campaign::bench;

pub const ABOUT: &str = "Measure simulator speed (events/s) and campaign wall time.";

pub const EXAMPLES: &str = "\
Examples:
  colab bench                              # event loop of cfs, wash, colab; reproduce --quick
  colab bench --policies all --predictor oracle
  colab bench --threads --policies cfs,rota  # 64 against 4,096 threads
  colab bench --cores                      # 8 against 1,024 cores";

#[derive(clap::Args)]
pub struct BenchArgs {
    /// Also time the full `reproduce` campaign (not just --quick).
    #[arg(long)]
    full: bool,
    /// Instead: events/s against the thread count, 64 and 4,096 threads
    /// of compute and short sleeps on 4B4S, under each policy.
    #[arg(long, conflicts_with = "full")]
    threads: bool,
    /// Instead: events/s against the core count, 8 cores (4B4S) and 1,024
    /// (512B512S), two threads of compute and short sleeps per core.
    #[arg(long, conflicts_with_all = ["full", "threads"])]
    cores: bool,
    /// Policies to time in the event loop (comma-separated, or `all`)
    /// [default: the papers' cfs,wash,colab].
    #[arg(long, value_delimiter = ',')]
    policies: Vec<String>,
    /// Predictor of the timed runs (as `colab sim --predictor`): compare
    /// `model` (default, counters through a trained model) with `oracle`
    /// (no counter work) to see what counter synthesis costs.
    #[arg(long, value_name = "LABEL", default_value = "model")]
    predictor: String,
}

pub fn run(a: BenchArgs) -> Result<()> {
    let list = bench::bench_policies(a.policies)?;
    bench::check_predictor(&a.predictor)?;
    let out = &mut std::io::stdout();
    if a.threads {
        return bench::bench_scaling(
            &list,
            &a.predictor,
            bench::THREAD_SCALES,
            bench::SCALE_ROUNDS,
            out,
        );
    }
    if a.cores {
        return bench::bench_scaling(
            &list,
            &a.predictor,
            bench::CORE_SCALES,
            bench::SCALE_ROUNDS,
            out,
        );
    }
    bench::bench_events(a.full, &list, &a.predictor, out)
}
