//! The command line: the parser and the dispatch to each subcommand.

use crate::commands::*;
use anyhow::Result;
use clap::{Parser, Subcommand};

/// The `colab` command line.
#[derive(Parser)]
#[command(
    name = "colab",
    version,
    about = "Heterogeneity-aware scheduling for asymmetric multicore processors: simulator, policies and the papers' study",
    after_help = OVERVIEW_HELP
)]
pub struct Cli {
    #[command(subcommand)]
    pub cmd: Option<Cmd>,
}

/// The subcommands; each one's about and examples live in its module.
#[derive(Subcommand)]
pub enum Cmd {
    #[command(about = sim::ABOUT, after_help = sim::EXAMPLES)]
    Sim(sim::SimArgs),
    #[command(about = compare::ABOUT, after_help = compare::EXAMPLES)]
    Compare(compare::CompareArgs),
    #[command(about = reproduce::ABOUT, after_help = reproduce::EXAMPLES)]
    Reproduce(reproduce::ReproduceArgs),
    #[command(about = bench::ABOUT, after_help = bench::EXAMPLES)]
    Bench(bench::BenchArgs),
    #[command(about = native::ABOUT, after_help = native::EXAMPLES)]
    Native(native::NativeArgs),
    #[command(about = trace::ABOUT, after_help = trace::EXAMPLES)]
    Trace(trace::TraceArgs),
    #[command(about = trace_stats::ABOUT, long_about = trace_stats::LONG_ABOUT, after_help = trace_stats::EXAMPLES)]
    TraceStats(trace_stats::TraceStatsArgs),
    #[command(hide = true, about = trace_probe::ABOUT, after_help = trace_probe::EXAMPLES)]
    TraceProbe(trace_probe::TraceProbeArgs),
    #[command(about = model_check::ABOUT, long_about = model_check::LONG_ABOUT, after_help = model_check::EXAMPLES)]
    ModelCheck(model_check::ModelCheckArgs),
    #[command(about = calibrate::ABOUT, after_help = calibrate::EXAMPLES)]
    Calibrate(calibrate::CalibrateArgs),
    #[command(about = validate::ABOUT, after_help = validate::EXAMPLES)]
    Validate(validate::ValidateArgs),
    #[command(about = train::ABOUT, long_about = train::LONG_ABOUT, after_help = train::EXAMPLES)]
    Train(train::TrainArgs),
    #[command(about = list::ABOUT, after_help = list::EXAMPLES)]
    List(list::ListArgs),
    #[command(about = mixes::ABOUT, long_about = mixes::LONG_ABOUT, after_help = mixes::EXAMPLES)]
    Mixes(mixes::MixesArgs),
    #[command(about = analytic::ABOUT, long_about = analytic::LONG_ABOUT, after_help = analytic::EXAMPLES)]
    Analytic(analytic::AnalyticArgs),
    #[command(about = topology::ABOUT, after_help = topology::EXAMPLES)]
    Topology(topology::TopologyArgs),
    #[command(about = fingerprint::ABOUT, long_about = fingerprint::LONG_ABOUT, after_help = fingerprint::EXAMPLES)]
    Fingerprint(fingerprint::FingerprintArgs),
    #[command(hide = true, about = headline::ABOUT, after_help = headline::EXAMPLES)]
    Headline(headline::HeadlineArgs),
    #[command(hide = true, about = heavy_thread::ABOUT, after_help = heavy_thread::EXAMPLES)]
    HeavyThread(heavy_thread::HeavyThreadArgs),
}

/// The five commands most people want, shown by a bare `colab`.
pub const OVERVIEW: &str = "\
colab: a simulator and schedulers for asymmetric multicore CPUs

Most useful commands:
  colab reproduce --quick            a representative subset of the papers' study, in seconds
  colab sim Sync-2 -t 2B2S -p rota   one mix on one machine (2 big, 2 small cores) under one policy
  colab list                         the benchmarks, mixes, policies, models and machines
  colab reproduce                    the full COLAB study, every policy, into reports/
  colab validate                     the simulator's error against this machine

Every command: colab --help; one command's options and examples: colab COMMAND --help";

/// The same five, under `colab --help`.
const OVERVIEW_HELP: &str = "\
Start with:
  colab reproduce --quick            a representative subset of the papers' study, in seconds
  colab sim Sync-2 -t 2B2S -p rota   one mix on one machine under one policy
  colab list                         the benchmarks, mixes, policies, models and machines";

/// Runs the parsed command line; no subcommand prints the overview.
pub fn run(cli: Cli) -> Result<()> {
    let Some(cmd) = cli.cmd else {
        println!("{OVERVIEW}");
        return Ok(());
    };
    match cmd {
        Cmd::Sim(a) => sim::run(a),
        Cmd::Compare(a) => compare::run(a),
        Cmd::Reproduce(a) => reproduce::run(a),
        Cmd::Bench(a) => bench::run(a),
        Cmd::Native(a) => native::run(a),
        Cmd::Trace(a) => trace::run(a),
        Cmd::TraceStats(a) => trace_stats::run(a),
        Cmd::TraceProbe(a) => trace_probe::run(a),
        Cmd::ModelCheck(a) => model_check::run(a),
        Cmd::Calibrate(a) => calibrate::run(a),
        Cmd::Validate(a) => validate::run(a),
        Cmd::Train(a) => train::run(a),
        Cmd::List(a) => list::run(a),
        Cmd::Mixes(a) => mixes::run(a),
        Cmd::Analytic(a) => analytic::run(a),
        Cmd::Topology(a) => topology::run(a),
        Cmd::Fingerprint(a) => fingerprint::run(a),
        Cmd::Headline(a) => headline::run(a),
        Cmd::HeavyThread(a) => heavy_thread::run(a),
    }
}
