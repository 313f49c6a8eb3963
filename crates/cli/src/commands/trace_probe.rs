//! `colab trace-probe` (hidden): one tracing-overhead probe loop, run by
//! `colab trace` in a child process so that perf traces it like a program.

use anyhow::{Context, Result};
use colab_trace::overhead::{run_probe, ProbeKind};

pub const ABOUT: &str = "Runs one tracing-overhead probe loop (used by `colab trace`).";

pub const EXAMPLES: &str = "\
Examples:
  colab trace-probe yield 100000
  colab trace-probe syscall 100000";

#[derive(clap::Args)]
pub struct TraceProbeArgs {
    kind: String,
    iterations: u64,
}

pub fn run(a: TraceProbeArgs) -> Result<()> {
    let k = ProbeKind::parse(&a.kind)
        .with_context(|| format!("unknown probe '{}' (yield or syscall)", a.kind))?;
    println!("{}", run_probe(k, a.iterations).to_line());
    Ok(())
}
