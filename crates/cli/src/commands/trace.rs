//! `colab trace`: record a real program's thread tree with perf.

use crate::common::probe_command;
use anyhow::Result;
use colab_trace::record::{self, RecordOptions};
use std::path::PathBuf;

pub const ABOUT: &str =
    "Record a real program (its whole thread tree) under this machine's scheduler (needs root).";

pub const EXAMPLES: &str = "\
Examples:
  sudo colab trace -o run.trace -- pigz -p 2 -k -c big.txt
  sudo colab trace --reprobe -o make.trace -- make -j2   # measure perf's overhead again
  sudo colab trace --no-overhead-probe -- ./my-program --its-flag";

#[derive(clap::Args)]
pub struct TraceArgs {
    /// Where to write the trace.
    #[arg(short, long, default_value = "run.trace")]
    out: PathBuf,
    /// Skip measuring perf's overhead before recording (replay then keeps
    /// the overhead in the recorded CPU time).
    #[arg(long)]
    no_overhead_probe: bool,
    /// Measure perf's overhead again even if a probe of this boot, kernel
    /// and perf from the last day is kept (the probe takes about 11 s here;
    /// its result is kept in $XDG_CACHE_HOME/colab or ~/.cache/colab).
    #[arg(long, conflicts_with = "no_overhead_probe")]
    reprobe: bool,
    /// The command and its arguments (after `--`).
    #[arg(required = true, last = true)]
    command: Vec<String>,
}

pub fn run(a: TraceArgs) -> Result<()> {
    let cache = record::default_probe_cache();
    if a.reprobe {
        if let Some(f) = &cache {
            let _ = std::fs::remove_file(f);
        }
    }
    let opts = RecordOptions {
        overhead_probe: (!a.no_overhead_probe).then(probe_command).transpose()?,
        probe_cache: cache,
        ..Default::default()
    };
    if opts.overhead_probe.is_some() {
        eprintln!("trace: perf's overhead on this machine: a kept probe of the last day, or a new one (about 11 s)...");
    }
    let s = record::record(&a.command, &a.out, &opts)?;
    if let Some(o) = s.overhead {
        let from = match s.probe_from {
            Some(at) => format!(
                "kept probe, {} min old; --reprobe measures again",
                record::age_min(at)
            ),
            None => "measured now".into(),
        };
        eprintln!(
            "trace: tracing overhead {:.0} ns per context switch, {:.0} ns per system call ({from}; replay subtracts it)",
            o.switch, o.syscall
        );
    }
    eprintln!(
        "trace: `{}` {}; {} threads, {} events, {:.3} s recorded ({} lost events) -> {}",
        a.command.join(" "),
        s.status,
        s.threads,
        s.events,
        s.duration.as_secs_f64(),
        s.lost_events,
        a.out.display()
    );
    if let Some(o) = s.others.filter(|o| o.busy()) {
        eprintln!(
            "warning: the machine was busy: other processes used {:.0}% of its CPU time ({:.2} s) while the program was recorded, so its recorded times are stretched; the trace's header says so",
            o.share * 100.0,
            o.cpu_ns as f64 / 1e9
        );
    }
    if !s.status.success() {
        // The trace is kept (a crash can be worth replaying), but a
        // script must not take it for a good recording.
        eprintln!(
            "error: the traced program failed ({}); the trace at {} records that, and replaying it replays the failure",
            s.status,
            a.out.display()
        );
        std::process::exit(s.status.shell_code());
    }
    eprintln!(
        "replay it: colab sim --trace {} -t 2B2S --speedup 2.0",
        a.out.display()
    );
    Ok(())
}
