//! `colab sim`: one workload on one machine under one policy.

use crate::common::{load_topology, warn, write_atomic, LengthsArg, Order};
use anyhow::{bail, Context, Result};
use colab_campaign::single::{simulate_with_baselines, SingleRun};
use colab_core::Topology;
use colab_metrics::fast_idle_share;
use colab_sim::SimConfig;
use colab_workload::{Library, Workload};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::{Path, PathBuf};

pub const ABOUT: &str = "Simulate one workload on one machine under one policy.";

/// `--policy`'s long help: the short one, then ROTA's switches and presets
/// from their one table.
fn policy_long_help() -> String {
    let mut s = String::from(
        "Scheduling policy: cfs, eevdf, bpfland, lavd, gts, wash, colab, colab-e, camp, pa, sfd, \
         rr, hsp, propsp, propsp-static, rota (`colab list policies` describes each, `colab list NAME` one in full); colab:KEY=VALUE:... \
         and colab-e:WS:WE set COLAB's switches and weights; scx:colab runs scx_colab's own BPF \
         (scx:colab:ARGS with its options, e.g. scx:colab:--policy=colab).\n\n\
         rota[@N][:KEY=VALUE...]: ROTA's Nth freeze ",
    );
    s.push_str(&format!(
        "(rota = rota@{}), with these switches:\n",
        colab_policies::rota::DEFAULT_FREEZE
    ));
    s.push_str(&colab_policies::rota::options_help());
    let presets: Vec<String> = colab_policies::rota::PRESETS
        .iter()
        .map(|(n, _)| format!("rota@{n}"))
        .collect();
    s.push_str(&format!("Presets: {}.", presets.join(", ")));
    s
}

pub const EXAMPLES: &str = "\
Examples:
  colab sim Sync-2 -t 2B2S -p rota                 # one mix of the papers under ROTA
  colab sim ferret:8 -t 4B4S --order little-first -p wash --seed 3
  colab sim Sync-2 -t 2B2S -p colab:remote=off --timeline sync2.json
  colab sim Comm-2 --predictor oracle --json       # perfect predictions, JSON out
  colab sim --trace run.trace -t 2B2S --speedup 2.0  # replay a `colab trace` recording
  colab sim --rt-app periodic.json -t tensor-g1 -p rota   # an rt-app task set";

#[derive(clap::Args)]
pub struct SimArgs {
    /// One or more workloads, each run in turn: a benchmark (`ferret`,
    /// `ferret:8` for n = 8), a mix (`Sync-2`, `Rand-7-2`: random mix 2 of
    /// seed 7), a TOML file holding a program, mixes or both (`FILE:NAME`
    /// picks one of its mixes, `FILE:n` runs its program at n), or an rt-app
    /// task set (a `.json` file). A mix may name program files, relative to
    /// its own file, and the programs of the other files given.
    #[arg(value_name = "WORKLOAD", required_unless_present_any = ["trace", "rt_app"])]
    workloads: Vec<String>,
    /// Run every mix of a file that holds several (by default its first,
    /// with a note naming the others).
    #[arg(long)]
    every_mix: bool,
    /// Replay a trace recorded by `colab trace` instead of a workload spec.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["workloads", "rt_app"])]
    trace: Option<PathBuf>,
    /// An rt-app task set (JSON, rt-app's grammar) as the workload: run,
    /// sleep, timer, lock/unlock, wait/signal/broad, sync, barrier, loop,
    /// instance, delay; what colab cannot model is refused by name.
    #[arg(long = "rt-app", value_name = "FILE", conflicts_with = "workloads")]
    rt_app: Option<PathBuf>,
    /// Big/little speedup of replayed compute (a trace recorded on one core
    /// type cannot tell; assumption: 2.0, mid-range of the papers' speedups).
    #[arg(long, value_name = "SPEEDUP", value_parser = crate::common::replay_speedup)]
    speedup: Option<f64>,
    /// Speedup of some replayed threads (repeatable): `COMM=S` every thread
    /// of that name, `COMM#K=S` the K-th of that name to appear (from 1),
    /// `@root=S` the program's first thread; the last two win over the
    /// first. A selector that matches no thread is an error.
    #[arg(long = "thread-speedup", value_name = "SEL=S", value_parser = parse_comm_speedup)]
    thread_speedup: Vec<(String, f64)>,
    /// Replay the recorded CPU time as it is, without subtracting the
    /// tracing overhead measured when it was recorded.
    #[arg(long)]
    keep_tracing_overhead: bool,
    /// Replay a futex wait whose waker the recording does not name as a
    /// sleep of its recorded length, as replay did until 2026-11-29,
    /// instead of a wait for the thread whose FUTEX_WAKE call on its word
    /// ended it. The recorded length carries the recording machine's own
    /// scheduling delays.
    #[arg(long)]
    sleep_unnamed_wakes: bool,
    /// Machine: a name like 2B2S, 4B4S, 1B3S, or a topology TOML file.
    #[arg(short, long, default_value = "2B2S")]
    topology: String,
    /// Which cluster gets the low core numbers.
    #[arg(long, value_enum, default_value = "big-first")]
    order: Order,
    /// Scheduling policy (`colab list` shows all: cfs, eevdf, bpfland, lavd, gts, wash, colab, colab-e, camp, pa, sfd, rr, hsp, propsp, propsp-static, rota; colab-e:WS:WE sets the energy-aware weights; rota@N is ROTA's Nth freeze and rota[@N]:KEY=VALUE:... sets its switches, listed by `colab list rota`; scx:colab runs scx_colab's own BPF, scx:colab:ARGS with its options, e.g. scx:colab:--policy=colab).
    #[arg(short, long, default_value = "colab", long_help = policy_long_help())]
    policy: String,
    /// Seed for start order and random choices.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// What policies read their speedup and energy predictions from:
    /// `model` (default: the model trained from the simulator's counters for
    /// this machine, as `colab train --from-sim` makes it), `model:NAME` (a
    /// built-in, e.g. colab-tpds-armv8) or `model:FILE.json`, each
    /// optionally `+R` extra mean relative error; `noisy[:R]` (the truth
    /// with R error, default the papers' 7%); `oracle` (the truth, for
    /// ablations); `constant:S` (every thread S, what a scheduler without
    /// counters knows, e.g. scx_colab on a machine with no PMU).
    #[arg(long, value_name = "LABEL", default_value = "model")]
    predictor: String,
    /// Write the schedule as Chrome trace-event JSON (open in ui.perfetto.dev).
    #[arg(long, value_name = "FILE")]
    timeline: Option<PathBuf>,
    /// Restart each program when it ends until every one has completed K
    /// times (the CAMP / Prop-SP method; 1 to 100); turnaround is the mean run.
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u32).range(1..=colab_sim::MAX_RESTART_UNTIL as i64))]
    restart_until: Option<u32>,
    /// `paper`: run each program as long as the CAMP and Prop-SP papers
    /// ran it (its reference input: 300-1,249 s of work; see `colab
    /// reproduce --help`), with a 24 h cap on simulated time instead of 1 h.
    #[arg(long, value_enum, value_name = "LENGTHS", conflicts_with = "trace")]
    lengths: Option<LengthsArg>,
    /// The run's budget: stop with an error after this many events
    /// (default 100 million, seconds of work; 1 to 10^12). Runs past a
    /// million events show their progress.
    #[arg(long, value_name = "N", default_value_t = colab_sim::DEFAULT_MAX_EVENTS, value_parser = clap::value_parser!(u64).range(1..=colab_sim::MAX_EVENTS_LIMIT))]
    max_events: u64,
    /// Simulated seconds the run may take before it stops with an error
    /// naming every live thread [default: 3600, or 86400 with --lengths
    /// paper].
    #[arg(long, value_name = "SECONDS", allow_negative_numbers = true)]
    time_limit: Option<f64>,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

/// `pigz=2.5` -> ("pigz", 2.5).
fn parse_comm_speedup(s: &str) -> std::result::Result<(String, f64), String> {
    let (c, v) = s
        .split_once('=')
        .ok_or_else(|| format!("'{s}': expected COMM=SPEEDUP"))?;
    Ok((c.to_string(), crate::common::replay_speedup(v)?))
}

/// The replay options given without `--trace` (clap's `requires` does not
/// hold them to it, since `--trace` conflicts with the workload given).
fn replay_options_without_trace(a: &SimArgs) -> Vec<&'static str> {
    if a.trace.is_some() {
        return Vec::new();
    }
    [
        ("--speedup", a.speedup.is_some()),
        ("--thread-speedup", !a.thread_speedup.is_empty()),
        ("--keep-tracing-overhead", a.keep_tracing_overhead),
        ("--sleep-unnamed-wakes", a.sleep_unnamed_wakes),
    ]
    .into_iter()
    .filter_map(|(name, given)| given.then_some(name))
    .collect()
}

pub fn run(a: SimArgs) -> Result<()> {
    let stray = replay_options_without_trace(&a);
    if !stray.is_empty() {
        bail!(
            "{} only apply to a replayed trace: give --trace FILE instead of a workload, or drop them",
            stray.join(", ")
        );
    }
    // Each workload, and how `colab compare` would name it (None: a trace,
    // which compare does not take).
    let workloads: Vec<(Workload, Option<String>)> = match (&a.workloads[..], &a.trace) {
        (_, Some(path)) => vec![(
            colab_trace::workloads::load_trace(
                path,
                a.speedup
                    .unwrap_or(colab_trace::workloads::DEFAULT_REPLAY_SPEEDUP),
                &a.thread_speedup,
                colab_trace::workloads::ReplayHow {
                    keep_tracing_overhead: a.keep_tracing_overhead,
                    sleep_unnamed_wakes: a.sleep_unnamed_wakes,
                },
                &mut warn,
            )?,
            None,
        )],
        ([], None) => match &a.rt_app {
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .with_context(|| format!("{}: cannot read the rt-app file", path.display()))?;
                let mut lib = Library::builtin();
                let file = path.display().to_string();
                let name = lib.add_rtapp_text(&file, &text)?;
                vec![(lib.single(&name, None)?, Some(file))]
            }
            None => bail!("give a WORKLOAD, --trace FILE or --rt-app FILE"),
        },
        (names, None) => Library::builtin()
            .resolve_args(names, a.every_mix)?
            .into_iter()
            .map(|r| {
                if let Some(note) = &r.note {
                    warn(note);
                }
                (r.workload, Some(r.arg))
            })
            .collect(),
    };
    if workloads.len() > 1 && a.timeline.is_some() {
        bail!(
            "--timeline writes one run's schedule, but {} workloads were given: run them one at a time",
            workloads.len()
        );
    }
    let topo = load_topology(&a.topology, a.order.into())?;
    if !topo.is_asymmetric() {
        warn(&format!(
            "{} has one core type: alone-big (T_SB) is a run alone on as many of its own cores, so \
             T_M/T_SB and H_ANTT compare against those, not against faster cores",
            topo.describe()
        ));
    }
    let mut json = Vec::new();
    for (i, (mut w, spelled)) in workloads.into_iter().enumerate() {
        if i > 0 && !a.json {
            println!();
        }
        let mut cfg = SimConfig {
            seed: a.seed,
            timeline: a.timeline.is_some(),
            restart_until: a.restart_until,
            max_events: a.max_events,
            ..SimConfig::default()
        };
        if a.lengths == Some(LengthsArg::Paper) {
            colab_campaign::lengths::to_paper_lengths(&mut w, &mut Default::default())?;
            cfg.max_time_ns = colab_campaign::lengths::PAPER_MAX_TIME_NS;
        }
        if let Some(t) = a.time_limit {
            cfg.max_time_ns = colab_campaign::reproduce::time_limit_ns(t)?;
        }
        let r = simulate_with_baselines(
            &w,
            &topo,
            &a.policy,
            &a.predictor,
            &cfg,
            &mut simulate_with_bar,
        )?;
        if let Some(path) = &a.timeline {
            let tl = r.result.timeline.as_ref().expect("timeline was requested");
            let mut buf = Vec::new();
            tl.write_json(&mut buf)
                .context("serializing the timeline")?;
            write_atomic(path, &buf)?;
        }
        if a.json {
            json.push(colab_campaign::single::to_json(
                &w, &topo, &a.policy, a.seed, &r,
            ));
        } else {
            print_text(&w, spelled.as_deref(), &topo, &a, &r, a.timeline.as_deref());
        }
    }
    match json.len() {
        0 => {}
        // One workload: its object, as before several were accepted.
        1 => println!("{}", serde_json::to_string_pretty(&json[0])?),
        _ => println!("{}", serde_json::to_string_pretty(&json)?),
    }
    Ok(())
}

/// The share of a program's CPU time on the fastest cores, as a percentage
/// ("-" for a program that never ran).
fn fast_share(fast_ns: u64, cpu_ns: u64) -> String {
    if cpu_ns == 0 {
        return "-".to_string();
    }
    format!("{:.0}%", 100.0 * fast_ns as f64 / cpu_ns as f64)
}

/// `spelled`: how `colab compare` names the workload (None: it cannot).
fn print_text(
    w: &Workload,
    spelled: Option<&str>,
    topo: &Topology,
    a: &SimArgs,
    r: &SingleRun,
    timeline: Option<&Path>,
) {
    let res = &r.result;
    println!(
        "{} on {} under {} (seed {})",
        w.name,
        topo.describe(),
        a.policy,
        a.seed
    );
    // On an asymmetric machine, each program's share of its CPU time on
    // the fastest cores.
    let asym = topo.is_asymmetric();
    println!(
        "  {:<16} {:>7} {:>14} {:>14} {:>8}{}",
        "program",
        "threads",
        "turnaround ms",
        "alone-big ms",
        "T_M/T_SB",
        if asym { "  on fast" } else { "" }
    );
    for (p, sb) in res.programs.iter().zip(&r.t_sb_ns) {
        println!(
            "  {:<16} {:>7} {:>14.3} {:>14.3} {:>8.3}{}",
            p.name,
            p.threads,
            p.turnaround_ns as f64 / 1e6,
            sb / 1e6,
            p.turnaround_ns as f64 / sb,
            if asym {
                format!(" {:>8}", fast_share(p.fast_cpu_ns, p.cpu_ns))
            } else {
                String::new()
            }
        );
    }
    println!(
        "  H_ANTT {:.3}  H_STP {:.3}  Unfairness {:.3}  energy {:.4} J  makespan {:.3} ms",
        r.h_antt,
        r.h_stp,
        r.unfairness,
        res.energy_j,
        res.makespan_ns as f64 / 1e6
    );
    let s = &res.stats;
    println!(
        "  {} events, {} context switches, {} migrations ({} cross-cluster), {} preemptions, {} futex waits; {:.1} ms wall",
        s.events,
        s.context_switches,
        s.migrations,
        s.cross_cluster_migrations,
        s.preemptions,
        s.futex_waits,
        r.wall_s * 1e3
    );
    let fast_cores = topo.big_mask().count() as u32;
    if let Some(share) =
        fast_idle_share(s.fast_idle_slow_busy_ns, res.makespan_ns, fast_cores).filter(|_| asym)
    {
        println!(
            "  fast cores idle while slower cores ran threads: {:.1}% of fast-core time ({:.3} ms of {:.3})",
            100.0 * share,
            s.fast_idle_slow_busy_ns as f64 / 1e6,
            res.makespan_ns as f64 * f64::from(fast_cores) / 1e6
        );
    }
    if let Some(p) = timeline {
        println!(
            "  timeline: {} (open in https://ui.perfetto.dev)",
            p.display()
        );
    }
    let order = colab_core::CoreOrder::from(a.order).label();
    match spelled {
        Some(arg) => println!(
            "  one run is one sample (seed {}, {order}): `colab compare {arg} -t {} -p {},...` runs every seed and core order with 95% intervals",
            a.seed, a.topology, a.policy
        ),
        None => println!("  one run is one sample (seed {}, {order})", a.seed),
    }
}

/// One run, with a progress bar once it passes [`colab_sim::PROGRESS_EVERY`]
/// events (indicatif draws nothing when stderr is not a terminal).
fn simulate_with_bar(
    w: &Workload,
    topo: &Topology,
    policy: &mut dyn colab_core::Policy,
    cfg: &SimConfig,
) -> Result<colab_sim::SimResult, colab_sim::SimError> {
    let mut pb: Option<ProgressBar> = None;
    let r = colab_sim::simulate_observed(w, topo, policy, cfg, &mut |p| {
        let pb = pb.get_or_insert_with(|| {
            let pb = ProgressBar::new(p.max_events);
            pb.set_style(
                ProgressStyle::with_template(
                    "{spinner} [{elapsed_precise}] {pos} of at most {len} events, {msg}",
                )
                .expect("valid template"),
            );
            pb
        });
        pb.set_position(p.events);
        pb.set_message(format!("{:.1} ms simulated", p.now_ns as f64 / 1e6));
    });
    if let Some(pb) = pb {
        pb.finish_and_clear();
    }
    r
}
