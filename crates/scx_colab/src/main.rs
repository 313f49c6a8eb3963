//! scx_colab: asymmetry-aware scheduling as a sched_ext scheduler: ROTA
//! (the default) or the paper's COLAB (colab-tpds, `--policy colab`). The
//! BPF side (src/bpf/) places and selects threads; this process labels
//! them every 10 ms (src/labeller.rs, with colab-labels).

mod bpf_intf;
mod bpf_skel;
mod counters;
mod labeller;
mod pmu;
mod sched;
mod stats;
mod topo;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Parser;
use colab_labels::{LabelParams, SpeedupRange};
use colab_model::Model;

/// Heterogeneity-aware scheduling for asymmetric multicores (big.LITTLE,
/// P/E cores) as a sched_ext scheduler: ROTA by default, the paper's COLAB
/// with `--policy colab` (needs a kernel with CONFIG_SCHED_CLASS_EXT, and root).
#[derive(Parser, Debug)]
#[command(name = "scx_colab", version)]
pub struct Opts {
    /// The policy: rota (rotating fast-core shares, this project's design)
    /// or colab (colab-tpds Fig. 6, with the deviations in the README).
    #[arg(long, value_enum, default_value_t = Policy::Rota)]
    policy: Policy,

    /// ROTA: the machine's cost of moving a task between clusters, in
    /// microseconds. The rotation quantum is 200 times it, the least run
    /// before a pull 4 times, "idle long enough" once (as the simulator
    /// derives them). Default: the simulator's default topologies' cost.
    #[arg(long, value_name = "US", default_value_t = 100.0)]
    migration_us: f64,

    /// ROTA: how many quanta of fast-core time (per unit of predicted
    /// speedup) a task may be ahead of the least-served waiting task and
    /// keep its FIFO place (0-1000).
    #[arg(long, value_name = "QUANTA", default_value_t = 1,
          value_parser = clap::value_parser!(u64).range(0..=1000))]
    cap: u64,

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

    /// COLAB: how far (in vruntime, in units of CFS's sched_latency for the
    /// CPU count) a more blocking task may be behind the queue's most
    /// entitled one and still go first: a number >= 0, or `inf` (no window).
    /// The simulator's `colab:window=`.
    #[arg(long, value_name = "LATENCIES", default_value = "1", value_parser = parse_window)]
    window: f64,

    /// Ablation (COLAB): no bottleneck-first selection; every queue in CFS's
    /// vruntime order (the simulator's `colab:block-first=off`).
    #[arg(long)]
    no_block_first: bool,

    /// Ablation: no bottleneck tracking (the futex hooks are not loaded),
    /// so no task is ever labelled high-blocking.
    #[arg(long)]
    no_futex_tracking: bool,

    /// Ablation (ROTA): a fast CPU's occupant never gives it up at a tick
    /// (no rotation; it keeps the CPU until it blocks).
    #[arg(long)]
    no_rotation: bool,

    /// Ablation (ROTA): rotate as the simulator does: an occupant rotates
    /// out even while a big CPU is idle. Default: the idle big CPU is woken
    /// to take the waiting task instead.
    #[arg(long)]
    eager_rotation: bool,

    /// Ablation: an idle big CPU does not preempt and take a task running on
    /// a little CPU (COLAB: the most blocking; ROTA: the first in its order).
    #[arg(long)]
    no_big_pull: bool,

    /// COLAB: an idle big CPU takes a little CPU's task only once it has run
    /// this long without blocking (0: always, as colab-tpds Fig. 6).
    #[arg(long, value_name = "US", default_value_t = 1000)]
    pull_min_us: u64,

    /// COLAB: wake-ups round-robin over the allocated cluster exactly as
    /// colab-tpds Fig. 6. Default: the task's previous CPU first when it is
    /// idle and in that cluster.
    #[arg(long)]
    strict_rr: bool,

    /// Labelling period in milliseconds (colab-tpds: 10).
    #[arg(long, default_value_t = 10)]
    period_ms: u64,

    /// Per-task speedups from performance counters with this colab-model
    /// model: a file (`colab train` writes them) or a built-in name
    /// (colab-tpds-armv8, sim-reference). Without a PMU the capacity
    /// fallback is used, with a warning.
    #[arg(long, value_name = "FILE|NAME")]
    model: Option<String>,

    /// The model's core type for the big CPUs.
    #[arg(long, value_name = "TYPE", default_value = "big")]
    big_type: String,

    /// The model's core type for the little CPUs (all CPUs of a
    /// homogeneous machine).
    #[arg(long, value_name = "TYPE", default_value = "little")]
    little_type: String,

    /// Count model event NAME with SPEC: raw:HEX (the PMU's event number),
    /// TYPE:CONFIG, or a perf event name (e.g. `--event L2D_CACHE=raw:0x16`,
    /// `--event CPU_CYCLES=cycles`). Repeatable.
    #[arg(long = "event", value_name = "NAME=SPEC", value_parser = pmu::parse_mapping)]
    events: Vec<(String, pmu::PerfEvent)>,

    /// Label speedups relative to LO,HI. Default: the range the model was
    /// trained on, else each period's range of predictions.
    #[arg(long, value_name = "LO,HI", value_parser = parse_range)]
    speedup_range: Option<SpeedupRange>,

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
    topo::parse_cpu_list(s)
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

/// A built-in model by name, else a model file.
fn load_model(what: &str) -> Result<Model> {
    if let Some(m) = Model::builtin(what) {
        return Ok(m);
    }
    let text = std::fs::read_to_string(what).with_context(|| {
        let names: Vec<&str> = colab_model::BUILTIN_MODELS
            .iter()
            .map(|(n, _)| *n)
            .collect();
        format!(
            "--model {what}: not a built-in model ({}) and not a readable file",
            names.join(", ")
        )
    })?;
    Model::from_json(&text).with_context(|| format!("--model {what}"))
}

/// The counters for `--model`: None (and a warning) when the machine cannot
/// count them; an error when the model does not fit the machine or the
/// options.
fn setup_counters(opts: &Opts, split: &topo::Split) -> Result<Option<sched::Counters>> {
    let Some(what) = &opts.model else {
        return Ok(None);
    };
    let model = counters::CounterModel::new(load_model(what)?, &opts.big_type, &opts.little_type)?;
    let arch = std::env::consts::ARCH;
    let resolve = |cluster: usize| -> Result<Vec<(String, pmu::PerfEvent)>> {
        model
            .events(cluster)
            .iter()
            .map(|n| {
                pmu::resolve(n, &opts.events, arch)
                    .map(|e| (n.clone(), e))
                    .map_err(anyhow::Error::msg)
            })
            .collect()
    };
    let events = [resolve(counters::BIG)?, resolve(counters::LITTLE)?];
    let cpus = [split.big.as_slice(), split.little.as_slice()];
    let fds = match pmu::open_all(cpus, [&events[0], &events[1]], counters::MAX_EVENTS) {
        Ok(fds) => fds,
        Err(why) => {
            log::warn!(
                "--model {what}: cannot count {why}; every task gets the capacity-ratio speedup"
            );
            return Ok(None);
        }
    };
    let nr_events = [0, 1].map(|c| {
        if cpus[c].is_empty() {
            0
        } else {
            events[c].len() as u32
        }
    });
    let range = opts.speedup_range.or_else(|| model.trained_range());
    println!(
        "scx_colab: counters for model `{}`: {} on big CPUs, {} on little CPUs; labels relative to {}",
        model.model().name(),
        describe_events(&events[0], cpus[0].is_empty()),
        describe_events(&events[1], cpus[1].is_empty()),
        match range {
            Some(r) => format!("speedups {:.2}..{:.2}", r.min, r.max),
            None => "each period's range of predictions".into(),
        }
    );
    Ok(Some(sched::Counters {
        model,
        fds,
        nr_events,
        range,
    }))
}

fn describe_events(events: &[(String, pmu::PerfEvent)], none: bool) -> String {
    if none {
        return "(no CPUs)".into();
    }
    events
        .iter()
        .map(|(n, _)| n.as_str())
        .collect::<Vec<_>>()
        .join(",")
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
    let shutdown = Arc::new(AtomicBool::new(false));
    {
        let s = shutdown.clone();
        ctrlc::set_handler(move || s.store(true, Ordering::Relaxed))
            .context("installing the SIGINT/SIGTERM handler")?;
    }
    // The kernel ends a sched_ext scheduler when a CPU goes offline or
    // online and asks for a restart: read the CPUs again and reattach.
    loop {
        match sched::run(config(&opts)?, shutdown.clone())? {
            sched::Outcome::Exit(code) => return Ok(code),
            sched::Outcome::Restart => continue,
        }
    }
}

/// Everything a run needs, from the options and the CPUs online now.
fn config(opts: &Opts) -> Result<sched::Config> {
    let cpus = topo::online_cpus()?;
    let big = opts
        .big_cpus
        .as_ref()
        .map(|l| topo::online_only(&l.0, &cpus));
    let split = topo::split(&cpus, big.as_deref(), opts.speedup)?;
    println!("scx_colab: {}", split.describe());
    if !split.is_asymmetric() {
        log::info!("one cluster: the allocator round-robins over all CPUs, no big-core pulls");
    }
    let params = LabelParams {
        period_ns: opts.period_ms.max(1) * 1_000_000,
        ..LabelParams::default()
    };
    let counters = setup_counters(opts, &split)?;
    let mut labeller = labeller::Labeller::new(params, split.speedup);
    if let Some(r) = counters.as_ref().and_then(|c| c.range) {
        labeller.set_range(r);
    }
    let stats_every = match opts.stats {
        Some(s) if s > 0.0 && s.is_finite() => Some(Duration::from_secs_f64(s)),
        Some(s) => anyhow::bail!("--stats must be a positive number of seconds, got {s}"),
        None => None,
    };
    if !(opts.migration_us.is_finite() && opts.migration_us > 0.0 && opts.migration_us <= 1e5) {
        anyhow::bail!(
            "--migration-us must be a positive number of microseconds up to 100000, got {}",
            opts.migration_us
        );
    }
    let mut rota = sched::RotaConsts::new(opts.migration_us, opts.cap);
    rota.rotation = !opts.no_rotation;
    rota.eager = opts.eager_rotation;
    let cfs = colab_policies::cfs::CfsTunables::for_cpus(cpus.len());
    Ok(sched::Config {
        rota: (opts.policy == Policy::Rota).then_some(rota),
        split,
        colab_window_ns: sched::window_ns(opts.window, &cfs),
        block_first: !opts.no_block_first,
        cfs,
        futex_tracking: !opts.no_futex_tracking,
        big_pull: !opts.no_big_pull,
        pull_min_ns: opts.pull_min_us * 1000,
        strict_rr: opts.strict_rr,
        stats_every,
        labeller,
        counters,
        debug_error_after: opts.debug_error_after.map(Duration::from_secs_f64),
        debug_stall_after: opts.debug_stall_after.map(Duration::from_secs_f64),
    })
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
        assert!(!o.eager_rotation);
        let o2 = Opts::try_parse_from([
            "scx_colab",
            "--no-block-first",
            "--no-rotation",
            "--eager-rotation",
        ])
        .unwrap();
        assert!(o2.no_block_first && o2.no_rotation && o2.eager_rotation);
        assert_eq!(o.pull_min_us, 0);
    }

    /// The window is in sched_latency units of the CPU count, as the
    /// simulator's `colab:window=`; `inf` is a lag no task reaches.
    #[test]
    fn window_option() {
        let cfs = colab_policies::cfs::CfsTunables::for_cpus(4);
        assert_eq!(cfs.latency_ns, 18_000_000);
        let w = |args: &[&str]| {
            let o = Opts::try_parse_from([&["scx_colab"], args].concat()).map(|o| o.window);
            o.map(|w| sched::window_ns(w, &cfs))
        };
        assert_eq!(w(&[]).unwrap(), 18_000_000);
        assert_eq!(w(&["--window", "0.5"]).unwrap(), 9_000_000);
        assert_eq!(w(&["--window", "0"]).unwrap(), 0);
        assert_eq!(w(&["--window", "inf"]).unwrap(), u64::MAX >> 2);
        assert_eq!(w(&["--window", "1e30"]).unwrap(), u64::MAX >> 2);
        for bad in ["-1", "nan", "x", "infinity"] {
            let arg = format!("--window={bad}");
            let e = w(&[arg.as_str()]).unwrap_err().to_string();
            assert!(e.contains("expected a number >= 0 or inf"), "{bad}: {e}");
        }
    }

    #[test]
    fn policy_options() {
        let o = Opts::try_parse_from(["scx_colab"]).unwrap();
        assert_eq!((o.policy, o.cap, o.migration_us), (Policy::Rota, 1, 100.0));
        let o = Opts::try_parse_from(["scx_colab", "--policy", "colab", "--cap", "3"]).unwrap();
        assert_eq!((o.policy, o.cap), (Policy::Colab, 3));
        assert!(Opts::try_parse_from(["scx_colab", "--policy", "cfs"]).is_err());
        assert!(Opts::try_parse_from(["scx_colab", "--cap", "1001"]).is_err());
        for bad in ["0", "-1", "nan", "inf", "100001"] {
            let arg = format!("--migration-us={bad}");
            let o = Opts::try_parse_from(["scx_colab", arg.as_str()]);
            let msg = match o {
                Ok(o) => format!("{:#}", config(&o).err().expect(bad)),
                Err(e) => e.to_string(),
            };
            assert!(msg.contains("--migration-us"), "{bad}: {msg}");
        }
    }

    /// ROTA's constants follow the simulator's derivation (rota/mod.rs):
    /// with its default 100 us migration, a 20 ms quantum and cap, 400 us
    /// before a pull, 100 us "idle long enough".
    #[test]
    fn rota_constants() {
        let r = sched::RotaConsts::new(100.0, 1);
        assert_eq!(
            (r.quantum_ns, r.cap_ns, r.pull_min_ns, r.idle_worth_ns),
            (20_000_000, 20_000_000, 400_000, 100_000)
        );
        let r = sched::RotaConsts::new(1.722, 0);
        assert_eq!((r.quantum_ns, r.cap_ns, r.pull_min_ns), (344_400, 0, 6_888));
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
    fn models_load_by_name_or_file_with_clear_errors() {
        assert_eq!(load_model("sim-reference").unwrap().name(), "sim-reference");
        let e = format!("{:#}", load_model("/nonexistent/m.json").unwrap_err());
        assert!(
            e.contains("not a built-in model") && e.contains("sim-reference"),
            "{e}"
        );
        let dir = std::env::temp_dir().join(format!("scx_colab_model_{}", std::process::id()));
        std::fs::write(&dir, "{\"format_version\": 1}").unwrap();
        let e = format!("{:#}", load_model(dir.to_str().unwrap()).unwrap_err());
        std::fs::remove_file(&dir).unwrap();
        assert!(e.contains("--model") && e.contains("missing field"), "{e}");
    }

    /// The built-in ARMv8-event model cannot be counted on x86 without
    /// mappings: setup says which event and how to map it.
    #[test]
    fn an_armv8_model_on_x86_names_the_unmappable_event() {
        if std::env::consts::ARCH == "aarch64" {
            return; // resolves by event number there
        }
        let o = Opts::try_parse_from(["scx_colab", "--model", "sim-reference"]).unwrap();
        let split = topo::Split {
            big: vec![0],
            little: vec![1],
            speedup: 2.0,
            mode: topo::SplitMode::Declared,
            siblings: Vec::new(),
        };
        let e = format!("{:#}", setup_counters(&o, &split).err().unwrap());
        assert!(
            e.contains("BUS_ACCESS") && e.contains("--event BUS_ACCESS="),
            "{e}"
        );
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
