//! scx_colab's command line: every option of the binary, hidden debug ones
//! included, so that whatever hosts scx_colab's BPF C parses the same
//! arguments (`Opts::try_parse_from(["scx_colab", "--policy", "colab"])`)
//! and derives the same settings from them (settings.rs).

use clap::Parser;
use colab_labels::SpeedupRange;

/// Heterogeneity-aware scheduling for asymmetric multicores (big.LITTLE,
/// P/E cores) as a sched_ext scheduler: ROTA by default, the paper's COLAB
/// with `--policy colab` (needs a kernel with CONFIG_SCHED_CLASS_EXT, and root).
#[derive(Parser, Clone, Debug)]
#[command(name = "scx_colab", version)]
pub struct Opts {
    /// The policy: rota (rotating fast-core shares, this project's design)
    /// or colab (colab-tpds Fig. 6, with the deviations in the README).
    #[arg(long, value_enum, default_value_t = Policy::Rota)]
    pub policy: Policy,

    /// ROTA: the machine's cost of moving a task between clusters, in
    /// microseconds. The rotation quantum is 200 times it, the least run
    /// before a pull 4 times, "idle long enough" once (as the simulator
    /// derives them). Default: the simulator's default topologies' cost.
    #[arg(long, value_name = "US", default_value_t = 100.0)]
    pub migration_us: f64,

    /// Declare these CPUs big and the rest little (e.g. `0,1`, `0-3`), for
    /// testing on homogeneous hardware. Default: from CPU capacities.
    #[arg(long, value_name = "LIST", value_parser = parse_cpus)]
    pub big_cpus: Option<CpuList>,

    /// Predicted big/little speedup of every task without counters
    /// (default: 2.0 with --big-cpus, the capacity ratio on a real AMP).
    #[arg(long, value_name = "S")]
    pub speedup: Option<f64>,

    /// Print a stats line every SECS seconds.
    #[arg(long, value_name = "SECS")]
    pub stats: Option<f64>,

    /// COLAB: how far (in vruntime, in units of CFS's sched_latency for the
    /// CPU count) a more blocking task may be behind the queue's most
    /// entitled one and still go first: a number >= 0, or `inf` (no window).
    /// The simulator's `colab:window=`.
    #[arg(long, value_name = "LATENCIES", default_value = "1", value_parser = parse_window)]
    pub window: f64,

    /// Ablation (COLAB): no bottleneck-first selection; every queue in CFS's
    /// vruntime order (the simulator's `colab:block-first=off`).
    #[arg(long)]
    pub no_block_first: bool,

    /// Ablation: no bottleneck tracking (the futex hooks are not loaded),
    /// so no task is ever labelled high-blocking.
    #[arg(long)]
    pub no_futex_tracking: bool,

    /// Ablation (ROTA): a fast CPU's occupant never gives it up at a tick
    /// to a better-ranked task or a sibling (the simulator's `rota:rotate=off`;
    /// serial phases still swap in).
    #[arg(long)]
    pub no_rotation: bool,

    /// Ablation: an idle big CPU does not preempt and take a task running on
    /// a little CPU (COLAB: the most blocking; ROTA: the first in its order).
    #[arg(long)]
    pub no_big_pull: bool,

    /// COLAB: an idle big CPU takes a little CPU's task only once it has run
    /// this long without blocking (0: always, as colab-tpds Fig. 6).
    #[arg(long, value_name = "US", default_value_t = 1000)]
    pub pull_min_us: u64,

    /// COLAB: wake-ups round-robin over the allocated cluster exactly as
    /// colab-tpds Fig. 6. Default: the task's previous CPU first when it is
    /// idle and in that cluster.
    #[arg(long)]
    pub strict_rr: bool,

    /// Labelling period in milliseconds (colab-tpds: 10).
    #[arg(long, default_value_t = 10)]
    pub period_ms: u64,

    /// Per-task speedups from performance counters with this colab-model
    /// model: a file (`colab train` writes them) or a built-in name
    /// (colab-tpds-armv8, sim-reference). Without a PMU the capacity
    /// fallback is used, with a warning.
    #[arg(long, value_name = "FILE|NAME")]
    pub model: Option<String>,

    /// The model's core type for the big CPUs.
    #[arg(long, value_name = "TYPE", default_value = "big")]
    pub big_type: String,

    /// The model's core type for the little CPUs (all CPUs of a
    /// homogeneous machine).
    #[arg(long, value_name = "TYPE", default_value = "little")]
    pub little_type: String,

    /// Count model event NAME with SPEC: raw:HEX (the PMU's event number),
    /// TYPE:CONFIG, or a perf event name (e.g. `--event L2D_CACHE=raw:0x16`,
    /// `--event CPU_CYCLES=cycles`). Repeatable.
    #[arg(long = "event", value_name = "NAME=SPEC", value_parser = crate::pmu::parse_mapping)]
    pub events: Vec<(String, crate::pmu::PerfEvent)>,

    /// Label speedups relative to LO,HI. Default: the range the model was
    /// trained on, else each period's range of predictions.
    #[arg(long, value_name = "LO,HI", value_parser = parse_range)]
    pub speedup_range: Option<SpeedupRange>,

    /// Testing only: make the BPF side call scx_bpf_error() after SECS
    /// seconds, to check the error exit path (non-zero status).
    #[arg(long, value_name = "SECS", hide = true)]
    pub debug_error_after: Option<f64>,

    /// Testing only: make the BPF side stop dispatching after SECS seconds,
    /// so that the kernel's watchdog ends the scheduler (runnable task stall).
    #[arg(long, value_name = "SECS", hide = true)]
    pub debug_stall_after: Option<f64>,

    /// More log output.
    #[arg(short, long)]
    pub verbose: bool,

    /// Load the BPF programs with these options, print what the kernel's
    /// verifier spent on each (instructions processed, states; TSV) and
    /// exit without attaching.
    #[arg(long)]
    pub verifier_stats: bool,
}

/// Which policy the BPF side runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Policy {
    Rota,
    Colab,
}

/// A parsed `--big-cpus` list.
#[derive(Clone, Debug, PartialEq)]
pub struct CpuList(pub Vec<usize>);

fn parse_cpus(s: &str) -> Result<CpuList, String> {
    crate::topo::parse_cpu_list(s)
        .map(CpuList)
        .map_err(|e| format!("{e:#}"))
}

/// The fairness window in sched_latency units: a number >= 0 or `inf`.
fn parse_window(s: &str) -> Result<f64, String> {
    if s == "inf" {
        return Ok(f64::INFINITY);
    }
    match s.parse::<f64>() {
        Ok(w) if w >= 0.0 && w.is_finite() => Ok(w),
        _ => Err(format!("`{s}`: expected a number >= 0 or inf")),
    }
}

fn parse_range(s: &str) -> Result<SpeedupRange, String> {
    let bad = || format!("`{s}`: expected LO,HI with 0 < LO < HI, e.g. 1.2,3.0");
    let (lo, hi) = s.split_once(',').ok_or_else(bad)?;
    let (lo, hi): (f64, f64) = (
        lo.trim().parse().map_err(|_| bad())?,
        hi.trim().parse().map_err(|_| bad())?,
    );
    if !(lo > 0.0 && hi > lo && hi.is_finite()) {
        return Err(bad());
    }
    Ok(SpeedupRange { min: lo, max: hi })
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
        assert_eq!((o.big_cpus, o.window, o.period_ms), (None, 1.0, 10));
        assert!(!o.no_futex_tracking);
        assert_eq!((o.pull_min_us, o.strict_rr), (1000, false));
        let o = Opts::try_parse_from([
            "scx_colab",
            "--no-futex-tracking",
            "--no-big-pull",
            "--strict-rr",
            "--pull-min-us",
            "0",
        ])
        .unwrap();
        assert!(o.no_futex_tracking && o.no_big_pull && o.strict_rr);
        assert!(!o.no_block_first && !o.no_rotation);
        let o2 = Opts::try_parse_from(["scx_colab", "--no-block-first", "--no-rotation"]).unwrap();
        assert!(o2.no_block_first && o2.no_rotation);
        assert_eq!(o.pull_min_us, 0);
    }

    #[test]
    fn counter_options() {
        let o = Opts::try_parse_from([
            "scx_colab",
            "--model",
            "sim-reference",
            "--event",
            "CPU_CYCLES=cpu-clock",
            "--event",
            "l2d_cache=raw:0x16",
            "--speedup-range",
            "1.2,3",
        ])
        .unwrap();
        assert_eq!(o.model.as_deref(), Some("sim-reference"));
        assert_eq!(o.events.len(), 2);
        assert_eq!(o.events[1].0, "L2D_CACHE");
        let r = o.speedup_range.unwrap();
        assert_eq!((r.min, r.max), (1.2, 3.0));
        assert_eq!(
            (o.big_type.as_str(), o.little_type.as_str()),
            ("big", "little")
        );
        for bad in ["3,1.2", "1.2", "x,2", "0,2"] {
            assert!(
                Opts::try_parse_from(["scx_colab", "--speedup-range", bad]).is_err(),
                "{bad}"
            );
        }
        assert!(Opts::try_parse_from(["scx_colab", "--event", "cycles"]).is_err());
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
}
