//! scx_colab: COLAB (colab-tpds) as a sched_ext scheduler. The BPF side
//! (src/bpf/main.bpf.c) allocates cores and selects threads; this process
//! labels the threads every 10 ms (src/labeller.rs, with colab-labels).

mod bpf_intf;
mod bpf_skel;
mod labeller;
mod sched;
mod stats;
mod topo;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Parser;
use colab_labels::LabelParams;

/// COLAB: heterogeneity-aware scheduling for asymmetric multicores, as a
/// sched_ext scheduler (needs a kernel with CONFIG_SCHED_CLASS_EXT, and root).
#[derive(Parser, Debug)]
#[command(name = "scx_colab", version)]
pub struct Opts {
    /// Declare these CPUs big and the rest little (e.g. `0,1`, `0-3`), for
    /// testing on homogeneous hardware. Default: from CPU capacities.
    #[arg(long, value_name = "LIST", value_parser = parse_cpus)]
    big_cpus: Option<CpuList>,

    /// Predicted big/little speedup of every task without counters
    /// (default: 2.0 with --big-cpus, the capacity ratio on a real AMP).
    #[arg(long, value_name = "S")]
    speedup: Option<f64>,

    /// Print a stats line every SECS seconds.
    #[arg(long, value_name = "SECS")]
    stats: Option<f64>,

    /// Base time slice in microseconds (divided by the speedup on big CPUs).
    #[arg(long, default_value_t = 5000)]
    slice_us: u64,

    /// Fairness window of bottleneck-first selection, in microseconds.
    #[arg(long, default_value_t = 12000)]
    fair_window_us: u64,

    /// Labelling period in milliseconds (colab-tpds: 10).
    #[arg(long, default_value_t = 10)]
    period_ms: u64,

    /// A colab-model model file for per-task speedups from perf counters.
    /// Not implemented yet: the capacity fallback is used (see README).
    #[arg(long, value_name = "FILE.json")]
    model: Option<PathBuf>,

    /// Testing only: make the BPF side call scx_bpf_error() after SECS
    /// seconds, to check the error exit path (non-zero status).
    #[arg(long, value_name = "SECS", hide = true)]
    debug_error_after: Option<f64>,

    /// Testing only: make the BPF side stop dispatching after SECS seconds,
    /// so that the kernel's watchdog ends the scheduler (runnable task stall).
    #[arg(long, value_name = "SECS", hide = true)]
    debug_stall_after: Option<f64>,

    /// More log output.
    #[arg(short, long)]
    verbose: bool,
}

/// A parsed `--big-cpus` list.
#[derive(Clone, Debug, PartialEq)]
pub struct CpuList(pub Vec<usize>);

fn parse_cpus(s: &str) -> Result<CpuList, String> {
    topo::parse_cpu_list(s)
        .map(CpuList)
        .map_err(|e| format!("{e:#}"))
}

pub const NEED_ROOT: &str = "scx_colab needs root (CAP_SYS_ADMIN, CAP_BPF) to load a BPF scheduler";

/// The checks made before loading anything: root, then sched_ext.
pub fn preflight(euid: u32, has_sched_ext: bool, kernel: &str) -> Result<(), String> {
    if euid != 0 {
        return Err(NEED_ROOT.to_string());
    }
    if !has_sched_ext {
        return Err(format!(
            "scx_colab: this kernel ({kernel}) has no sched_ext: /sys/kernel/sched_ext is missing \
             (CONFIG_SCHED_CLASS_EXT missing); boot a kernel built with CONFIG_SCHED_CLASS_EXT=y"
        ));
    }
    Ok(())
}

fn kernel_release() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown version".into())
}

fn main() {
    let opts = Opts::parse();
    let level = if opts.verbose {
        simplelog::LevelFilter::Debug
    } else {
        simplelog::LevelFilter::Info
    };
    let _ = simplelog::TermLogger::init(
        level,
        simplelog::Config::default(),
        simplelog::TerminalMode::Stderr,
        simplelog::ColorChoice::Never,
    );
    // libbpf's own messages: warnings only, unless --verbose.
    let libbpf_level = if opts.verbose {
        libbpf_rs::PrintLevel::Debug
    } else {
        libbpf_rs::PrintLevel::Warn
    };
    libbpf_rs::set_print(Some((libbpf_level, |_, msg: String| {
        eprint!("{msg}") // libbpf prefixes its messages itself
    })));
    // SAFETY: geteuid has no preconditions.
    let euid = unsafe { libc::geteuid() };
    let has_sched_ext = std::path::Path::new("/sys/kernel/sched_ext").exists();
    if let Err(msg) = preflight(euid, has_sched_ext, &kernel_release()) {
        eprintln!("{msg}");
        std::process::exit(1);
    }
    match run(opts) {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("scx_colab: {e:#}");
            std::process::exit(1);
        }
    }
}

fn run(opts: Opts) -> Result<i32> {
    if let Some(m) = &opts.model {
        // TODO(counters): per-task speedup from colab-model and perf counters.
        log::warn!(
            "--model {}: the counter path is not implemented; using the capacity fallback",
            m.display()
        );
    }
    let cpus = topo::online_cpus()?;
    let split = topo::split(
        &cpus,
        opts.big_cpus.as_ref().map(|l| l.0.as_slice()),
        opts.speedup,
    )?;
    println!("scx_colab: {}", split.describe());
    if !split.is_asymmetric() {
        log::info!("one cluster: the allocator round-robins over all CPUs, no big-core pulls");
    }
    let params = LabelParams {
        period_ns: opts.period_ms.max(1) * 1_000_000,
        ..LabelParams::default()
    };
    let labeller = labeller::Labeller::new(params, split.speedup);
    let stats_every = match opts.stats {
        Some(s) if s > 0.0 && s.is_finite() => Some(Duration::from_secs_f64(s)),
        Some(s) => anyhow::bail!("--stats must be a positive number of seconds, got {s}"),
        None => None,
    };
    let shutdown = Arc::new(AtomicBool::new(false));
    {
        let s = shutdown.clone();
        ctrlc::set_handler(move || s.store(true, Ordering::Relaxed))
            .context("installing the SIGINT/SIGTERM handler")?;
    }
    sched::run(
        sched::Config {
            split,
            slice_ns: opts.slice_us.max(100) * 1000,
            fair_window_ns: opts.fair_window_us * 1000,
            stats_every,
            labeller,
            debug_error_after: opts.debug_error_after.map(Duration::from_secs_f64),
            debug_stall_after: opts.debug_stall_after.map(Duration::from_secs_f64),
        },
        shutdown,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn big_cpus_argument() {
        let o = Opts::try_parse_from(["scx_colab", "--big-cpus", "0,1", "--stats", "1"]).unwrap();
        assert_eq!(o.big_cpus, Some(CpuList(vec![0, 1])));
        assert_eq!(o.stats, Some(1.0));
        let o =
            Opts::try_parse_from(["scx_colab", "--big-cpus", "0-3", "--speedup", "1.5"]).unwrap();
        assert_eq!(o.big_cpus, Some(CpuList(vec![0, 1, 2, 3])));
        assert_eq!(o.speedup, Some(1.5));
        assert!(Opts::try_parse_from(["scx_colab", "--big-cpus", "x"]).is_err());
        assert!(Opts::try_parse_from(["scx_colab", "--big-cpus", "3-1"]).is_err());
        let o = Opts::try_parse_from(["scx_colab"]).unwrap();
        assert_eq!((o.big_cpus, o.slice_us, o.period_ms), (None, 5000, 10));
    }

    #[test]
    fn hidden_debug_flags() {
        let o = Opts::try_parse_from(["scx_colab", "--debug-stall-after", "2"]).unwrap();
        assert_eq!(
            (o.debug_stall_after, o.debug_error_after),
            (Some(2.0), None)
        );
        let o = Opts::try_parse_from(["scx_colab", "--debug-error-after", "3"]).unwrap();
        assert_eq!(
            (o.debug_stall_after, o.debug_error_after),
            (None, Some(3.0))
        );
        let help = <Opts as clap::CommandFactory>::command()
            .render_help()
            .to_string();
        assert!(help.contains("--big-cpus"));
        assert!(!help.contains("--debug-stall-after") && !help.contains("--debug-error-after"));
    }

    #[test]
    fn preflight_messages() {
        assert_eq!(preflight(65534, true, "6.12.0"), Err(NEED_ROOT.to_string()));
        // Root is checked first.
        assert_eq!(preflight(1000, false, "6.1.0"), Err(NEED_ROOT.to_string()));
        let e = preflight(0, false, "6.1.0-28-amd64").unwrap_err();
        assert!(e.contains("6.1.0-28-amd64") && e.contains("CONFIG_SCHED_CLASS_EXT missing"));
        assert_eq!(preflight(0, true, "6.12.0"), Ok(()));
    }
}
