//! `colab trace-stats`: how recorded programs synchronise.

use anyhow::Result;
use colab_trace::sync;
use std::path::PathBuf;

pub const ABOUT: &str = "Count each recorded program's waits by kind, in all and per second.";

pub const LONG_ABOUT: &str = "Count each recorded program's waits by kind, in all and per second.

A futex word whose waiters were released together is a broadcast (barriers,
condition broadcasts); other words are hand-offs (locks, signals, queues);
joins, sleeps and I/O are counted apart.";

pub const EXAMPLES: &str = "\
Examples:
  colab trace-stats run.trace
  colab trace-stats --json traces/parsec/*.trace.gz";

#[derive(clap::Args)]
pub struct TraceStatsArgs {
    /// Trace files (`.gz` too).
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Print JSON, one object per trace.
    #[arg(long)]
    json: bool,
}

pub fn run(a: TraceStatsArgs) -> Result<()> {
    // Every file is read before anything is printed.
    let all = sync::read_stats(&a.files)?;
    if a.json {
        for (f, s) in &all {
            println!("{}", sync::stats_json(f, s));
        }
    } else {
        print!("{}", sync::stats_table(&all));
    }
    Ok(())
}
