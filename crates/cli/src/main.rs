//! `colab`: the command-line shell over the colab libraries.

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand, ValueEnum};
use colab_campaign::{CampaignSpec, Progress};
use colab_core::{CoreOrder, Topology, TopologyError};
use colab_sim::{simulate, PredictorKind, SimConfig};
use colab_workload::{Library, Workload};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Parser)]
#[command(
    name = "colab",
    version,
    about = "Heterogeneity-aware scheduling for asymmetric multicore processors: simulator, policies and the papers' study"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Clone, Copy, ValueEnum)]
enum Order {
    BigFirst,
    LittleFirst,
}

impl From<Order> for CoreOrder {
    fn from(o: Order) -> CoreOrder {
        match o {
            Order::BigFirst => CoreOrder::BigFirst,
            Order::LittleFirst => CoreOrder::LittleFirst,
        }
    }
}

/// The studies of `colab analytic`.
#[derive(Clone, Copy, ValueEnum)]
enum Study {
    /// CAMP's utility factor (Saez et al., TOCS 2012): analytical form (eq. 1/10)
    /// against the approximation (eq. 2, k = 2) over the SF and thread ranges of Fig. 8.
    CampUf,
    /// Prop-SP's Section 2: Table 1 workloads on 2 fast + 2 slow cores under HSP, RR,
    /// Prop-SP, Opt-Unfairness and Opt-ASP-Ref; normalised ASP and unfairness (Fig. 1).
    Propsp,
}

#[derive(Subcommand)]
enum Cmd {
    /// Simulate one workload on one machine under one policy.
    Sim {
        /// A benchmark (`ferret`, `ferret:8` for n = 8), a mix (`Sync-2`), or a TOML file.
        #[arg(required_unless_present = "trace")]
        workload: Option<String>,
        /// Replay a trace recorded by `colab trace` instead of a workload spec.
        #[arg(long, value_name = "FILE", conflicts_with = "workload")]
        trace: Option<PathBuf>,
        /// Big/little speedup of replayed compute (a trace recorded on one core
        /// type cannot tell; assumption: 2.0, mid-range of the papers' speedups).
        #[arg(long, default_value_t = 2.0, requires = "trace")]
        speedup: f64,
        /// Speedup of some replayed threads (repeatable): `COMM=S` every thread
        /// of that name, `COMM#K=S` the K-th of that name to appear (from 1),
        /// `@root=S` the program's first thread; the last two win over the
        /// first. A selector that matches no thread is an error.
        #[arg(long = "thread-speedup", value_name = "SEL=S", value_parser = parse_comm_speedup, requires = "trace")]
        thread_speedup: Vec<(String, f64)>,
        /// Replay the recorded CPU time as it is, without subtracting the
        /// tracing overhead measured when it was recorded.
        #[arg(long, requires = "trace")]
        keep_tracing_overhead: bool,
        /// Machine: a name like 2B2S, 4B4S, 1B3S, or a topology TOML file.
        #[arg(short, long, default_value = "2B2S")]
        topology: String,
        /// Which cluster gets the low core numbers.
        #[arg(long, value_enum, default_value = "big-first")]
        order: Order,
        /// Scheduling policy (`colab list` shows all: cfs, eevdf, gts, wash, colab, colab-e, camp, pa, sfd, rr, hsp, propsp, propsp-static; colab-e:WS:WE sets the energy-aware weights).
        #[arg(short, long, default_value = "colab")]
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
        /// Print the result as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Run the papers' simulation study and write a report directory.
    Reproduce {
        /// Which study: the COLAB papers' (default), CAMP's (camp-tocs12 Tables
        /// III-V on its DVFS machines) or Prop-SP's (propsp Table 3); the last
        /// two restart programs until each completed three times, as those
        /// papers did, and normalise to RR. `all` runs the three and writes one
        /// report ranking every policy on every machine, normalised to CFS.
        /// `scenarios` runs the scenario mixes (workloads/mixes/scenarios.toml:
        /// colab-tpds Fig. 1, hot locks, a slow pipeline stage, barriers),
        /// each on its own machines, normalised to CFS.
        #[arg(value_enum, default_value = "colab")]
        study: StudyArg,
        /// Run a representative subset in seconds.
        #[arg(long)]
        quick: bool,
        /// How long the CAMP and Prop-SP studies' programs run: `paper`, the
        /// length of each program's reference run (SPEC CPU2006 reference
        /// time over a 2009 server's SPEC ratio: 300-1,249 s of work; parallel
        /// programs the median, 528.5 s), so that CAMP's 200 ms sampling and
        /// 2 s rotation act; or `model`, the models' 0.5-0.6 s, in seconds
        /// [default: paper, or model with --quick].
        #[arg(long, value_enum)]
        lengths: Option<LengthsArg>,
        /// An ablation instead of the policy comparison. `model`: every policy
        /// that decides from predicted speedups, once per predictor (oracle,
        /// the papers' model error, 10% and 25% error), named `policy@predictor`.
        /// `mechanisms`: COLAB with each mechanism switched off or varied in
        /// turn (`colab:remote=off`, ...; `colab list` documents the switches),
        /// beside the baseline, EEVDF and RR.
        /// Any `--policies` entry may name its predictor the same way.
        #[arg(long, value_enum, conflicts_with = "policies")]
        ablation: Option<Ablation>,
        /// Report directory (replaced only when the new report is complete).
        #[arg(short, long, default_value = "reports/reproduce")]
        out: PathBuf,
        /// Seeds (start orders, prediction noise) per configuration and core order
        /// [default: 3, or 1 with --quick].
        #[arg(long)]
        seeds: Option<u64>,
        /// Configurations (comma-separated); default: the papers' 2B2S,2B4S,4B2S,4B4S
        /// (camp, propsp, scenarios: the machines each mix names).
        #[arg(long, value_delimiter = ',')]
        configs: Vec<String>,
        /// Policies (comma-separated); default: all of them (`colab list`).
        #[arg(long, value_delimiter = ',')]
        policies: Vec<String>,
        /// Worker threads (default: all cores).
        #[arg(short, long)]
        jobs: Option<usize>,
        /// Skip PNG charts if no font is available instead of failing.
        #[arg(long)]
        allow_no_png: bool,
        /// Also run these recorded traces (class "trace") through the study.
        #[arg(long = "trace", value_name = "FILE")]
        traces: Vec<PathBuf>,
        /// Also run a trace library: a directory with a manifest.toml (as
        /// `colab validate --keep-traces DIR` writes), each recording with the
        /// speedups its manifest gives (class "trace"); a bare NAME is
        /// traces/NAME. `colab list` lists the libraries in traces/.
        #[arg(long = "traces", value_name = "DIR|NAME")]
        libraries: Vec<String>,
        /// Run only the traces given with --trace or --traces, not the papers'
        /// workloads.
        #[arg(long)]
        only_traces: bool,
        /// Also run N random mixes of the 17 COLAB benchmarks (held-out test
        /// workloads, class "random", named Rand-S-1 .. Rand-S-N): each has 2
        /// to 6 distinct programs, every n one its real program accepts (fft,
        /// ocean_cp, fluidanimate 1, 2, 4, 8; mcf, bzip2 1; the others 1 to 8)
        /// and at most 32 threads. They are drawn from --mix-seed alone, so the
        /// same N and seed give the same mixes on any machine, and the first N
        /// of a seed stay the same for a larger N. At most 1000; COLAB study
        /// only (not camp, propsp or all). `colab mixes --random N --mix-seed S`
        /// prints them; summary.md lists their compositions.
        #[arg(long, value_name = "N")]
        random_mixes: Option<u32>,
        /// Seed of the random mixes.
        #[arg(long, value_name = "S", default_value_t = 1, requires = "random_mixes")]
        mix_seed: u64,
        /// Run only the random mixes (and any --trace), not the papers'
        /// workloads; the report goes to reports/reproduce-random unless --out
        /// says otherwise.
        #[arg(long, requires = "random_mixes")]
        only_random: bool,
        /// Big/little speedup of replayed compute in traces.
        #[arg(long, default_value_t = 2.0)]
        speedup: f64,
        /// What policies named without `@PREDICTOR` read their speedup and energy predictions from:
        /// `model` (default: the model trained from the simulator's counters for
        /// this machine, as `colab train --from-sim` makes it), `model:NAME` (a
        /// built-in, e.g. colab-tpds-armv8) or `model:FILE.json`, each
        /// optionally `+R` extra mean relative error; `noisy[:R]` (the truth
        /// with R error, default the papers' 7%); `oracle` (the truth, for
        /// ablations); `constant:S` (every thread S, what a scheduler without
        /// counters knows, e.g. scx_colab on a machine with no PMU).
        #[arg(long, value_name = "LABEL", default_value = "model")]
        predictor: String,
    },
    /// Measure simulator speed (events/s) and campaign wall time.
    Bench {
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
    },
    /// Run a workload natively with real threads on this machine.
    Native {
        /// A benchmark (`ferret`, `ferret:8`), a mix (`Sync-2`), or a TOML file.
        workload: String,
        /// CPUs to run on, taskset-style: `0,1` or `0-3` (default: all).
        #[arg(long)]
        cpus: Option<String>,
        /// Repetitions (turnaround is reported as median and spread).
        #[arg(short, long, default_value_t = 5)]
        reps: u32,
        /// Seed for the random choices inside the workload.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Abort if one repetition takes longer (seconds).
        #[arg(long, default_value_t = 300)]
        timeout: u64,
        /// Emulate an asymmetric machine on identical CPUs: a named machine
        /// (`2B2S`) or a topology file; its cores map in order (`--order`)
        /// to the CPUs of `--cpus` (default 0..N-1), and compute runs at each
        /// core type's rate, re-checking the CPU every 20 us of work.
        #[arg(long, value_name = "TOPOLOGY")]
        emulate: Option<String>,
        /// Core order of the emulated machine (which CPUs are big).
        #[arg(long, value_enum, default_value = "big-first")]
        order: Order,
        /// Print the result as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Record a real program (its whole thread tree) under this machine's scheduler (needs root).
    Trace {
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
    },
    /// How recorded programs synchronise: each trace's waits by kind (a
    /// futex word whose waiters were released together is a broadcast:
    /// barriers, condition broadcasts; other words are hand-offs: locks,
    /// signals, queues; joins, sleeps and I/O apart), in all and per second.
    TraceStats {
        /// Trace files (`.gz` too).
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Print JSON, one object per trace.
        #[arg(long)]
        json: bool,
    },
    /// Runs one tracing-overhead probe loop (used by `colab trace`).
    #[command(hide = true)]
    TraceProbe { kind: String, iterations: u64 },
    /// Each benchmark model against recordings of the real program it
    /// models: threads, CPU time, run time and waits by kind per run, and
    /// whether each kind's rate per second is within 1.5x of the real one.
    ///
    /// Examples: `colab model-check` (the shipped PARSEC library, 4
    /// workers); `colab model-check --threads 8 ocean_cp lu_cb`.
    ModelCheck {
        /// Programs to check (default: every recorded program with a model).
        programs: Vec<String>,
        /// Trace library: a name under traces/ or a directory.
        #[arg(long, default_value = "parsec")]
        traces: String,
        /// Worker threads of the recordings to compare (the model runs
        /// with as many).
        #[arg(long, default_value_t = 4)]
        threads: u32,
        /// Print JSON, one object per program.
        #[arg(long)]
        json: bool,
        /// Exit with status 1 when a model is outside the band.
        #[arg(long)]
        strict: bool,
        /// A model file to use instead of the built-in model of the same
        /// name (repeatable; for working on a model without rebuilding).
        #[arg(long, value_name = "FILE.toml")]
        model: Vec<PathBuf>,
    },
    /// Measure this machine's scheduling costs and write a topology file for it.
    Calibrate {
        /// Where to write the topology (TOML).
        #[arg(short, long, default_value = "reports/this-machine.toml")]
        out: PathBuf,
    },
    /// Measure the simulator's error against this machine: run a suite natively and simulated.
    Validate(ValidateArgs),
    /// Train counter-based speedup and energy models (colab-tpds 5.1): PCA event
    /// selection, least squares, leave-one-program-out validation -> reports/train/.
    Train(TrainArgs),
    /// List built-in benchmarks, mixes, policies and named machines.
    List,
    /// Print mixes as a mix file (`[[mix]]` entries, each with its programs'
    /// n and thread counts): the built-in ones, or with --random the random
    /// mixes `reproduce --random-mixes N --mix-seed S` runs. Save one and run
    /// it with `colab sim FILE`.
    Mixes {
        /// Print the first N random mixes of --mix-seed instead (at most 1000).
        #[arg(long, value_name = "N")]
        random: Option<u32>,
        /// Seed of the random mixes.
        #[arg(long, value_name = "S", default_value_t = 1, requires = "random")]
        mix_seed: u64,
    },
    /// Analytic studies computed from the papers' formulas (no simulation):
    /// CSV + Markdown tables and SVG/PNG charts.
    Analytic {
        #[arg(value_enum)]
        study: Study,
        /// Output directory [default: reports/analytic/<STUDY>/].
        #[arg(short, long, value_name = "DIR")]
        out: Option<PathBuf>,
    },
    /// Describe a machine.
    Topology {
        /// Name (2B2S, ...) or topology TOML file.
        name: String,
        #[arg(long, value_enum, default_value = "big-first")]
        order: Order,
    },
}

fn main() {
    let cli = Cli::parse();
    if let Err(e) = run(cli) {
        eprintln!("error: {}", error_text(&e));
        std::process::exit(1);
    }
}

/// The error and its causes joined by ": ", leaving out a cause whose text the
/// message before it already ends with (errors that print their source too).
fn error_text(e: &anyhow::Error) -> String {
    let mut msg = String::new();
    for cause in e.chain() {
        let s = cause.to_string();
        if !msg.is_empty() && msg.trim_end().ends_with(s.trim_end()) {
            continue;
        }
        if !msg.is_empty() {
            msg.push_str(": ");
        }
        msg.push_str(&s);
    }
    msg
}

fn load_topology(arg: &str, order: CoreOrder) -> Result<Topology> {
    let p = Path::new(arg);
    if p.extension().is_some_and(|e| e == "toml") || p.exists() {
        let text = std::fs::read_to_string(p)
            .with_context(|| format!("{arg}: cannot read topology file"))?;
        return Topology::from_toml(&text, order)
            .with_context(|| format!("{arg}: invalid topology"));
    }
    match Topology::named(arg, order) {
        Ok(t) => Ok(t),
        // That message already quotes the name.
        Err(e @ TopologyError::UnknownName(_)) => Err(e.into()),
        Err(e) => Err(anyhow::Error::new(e).context(arg.to_string())),
    }
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum Ablation {
    /// Every predicting policy once per predictor.
    Model,
    /// COLAB with each of its mechanisms switched off or varied in turn.
    Mechanisms,
}

/// `reproduce --lengths`.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum LengthsArg {
    /// As the papers ran them (reference inputs, minutes).
    Paper,
    /// As the models are written (0.5-0.6 s).
    Model,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum StudyArg {
    Colab,
    Camp,
    Propsp,
    Scenarios,
    All,
}

#[derive(clap::Args)]
struct ValidateArgs {
    /// Directory of workload specs (one case per .toml).
    #[arg(long, default_value = "validation")]
    suite: PathBuf,
    /// Native repetitions per case (their spread is the noise floor).
    #[arg(short, long, default_value_t = 5)]
    reps: u32,
    /// Simulation seeds averaged per case.
    #[arg(long, default_value_t = 3)]
    seeds: u64,
    /// Topology of this machine (default: measure it now with `calibrate`).
    #[arg(short, long)]
    topology: Option<PathBuf>,
    /// Report directory.
    #[arg(short, long, default_value = "reports/validate")]
    out: PathBuf,
    /// Abort a case whose native repetition takes longer (seconds).
    #[arg(long, default_value_t = 120)]
    timeout: u64,
    /// Real programs to run, record and replay (needs root for recording).
    #[arg(long, default_value = "validation/programs/real-programs.toml")]
    programs: PathBuf,
    /// Skip the real programs.
    #[arg(long, conflicts_with = "no_specs")]
    no_programs: bool,
    /// Skip the workload specs (run only the real programs).
    #[arg(long)]
    no_specs: bool,
    /// Recordings per real program, interleaved with its native runs; the
    /// replays' median is compared (one recording carries the drift of its
    /// moment on a VM).
    #[arg(long, default_value_t = 3)]
    recordings: u32,
    /// Keep every recording of the real programs (gzipped) in this directory
    /// with a manifest.toml: a trace library for `colab reproduce --traces`.
    #[arg(long, value_name = "DIR")]
    keep_traces: Option<PathBuf>,
    /// The kept library's name and where its programs came from (repository
    /// and commit, packages), for its manifest.
    #[arg(
        long,
        value_name = "NAME SOURCE",
        num_args = 2,
        requires = "keep_traces"
    )]
    library: Vec<String>,
    /// The simulated Linux baseline: `cfs` (the papers') or `eevdf` (what
    /// this host's kernel runs).
    #[arg(long, default_value = "cfs")]
    policy: String,
}

fn run(cli: Cli) -> Result<()> {
    match cli.cmd {
        Cmd::Sim {
            workload,
            trace,
            speedup,
            thread_speedup,
            keep_tracing_overhead,
            topology,
            order,
            policy,
            seed,
            predictor,
            timeline,
            restart_until,
            lengths,
            max_events,
            json,
        } => {
            let mut w = match (workload, trace) {
                (_, Some(path)) => {
                    load_trace(&path, speedup, &thread_speedup, keep_tracing_overhead)?
                }
                (Some(name), None) => Library::builtin().resolve(&name)?,
                (None, None) => bail!("give a WORKLOAD or --trace FILE"),
            };
            let topo = load_topology(&topology, order.into())?;
            let mut cfg = SimConfig {
                seed,
                timeline: timeline.is_some(),
                restart_until,
                max_events,
                ..SimConfig::default()
            };
            if lengths == Some(LengthsArg::Paper) {
                colab_campaign::lengths::to_paper_lengths(&mut w, &mut Default::default())?;
                cfg.max_time_ns = colab_campaign::lengths::PAPER_MAX_TIME_NS;
            }
            cmd_sim(
                &w,
                &topo,
                &policy,
                &predictor,
                &cfg,
                timeline.as_deref(),
                json,
            )
        }
        Cmd::Reproduce {
            study,
            quick,
            lengths,
            ablation,
            out,
            seeds,
            configs,
            policies,
            jobs,
            allow_no_png,
            traces,
            libraries,
            only_traces,
            random_mixes,
            mix_seed,
            only_random,
            speedup,
            predictor,
        } => {
            if only_traces && traces.is_empty() && libraries.is_empty() {
                bail!("--only-traces needs --trace FILE or --traces DIR");
            }
            let mut library_workloads = Vec::new();
            for l in &libraries {
                library_workloads.extend(load_library(l)?);
            }
            if let Some(j) = jobs {
                rayon::ThreadPoolBuilder::new()
                    .num_threads(j.max(1))
                    .build_global()
                    .ok();
            }
            let lib = Library::builtin();
            use colab_campaign::Study;
            let studies = match study {
                StudyArg::Colab => vec![Study::Colab],
                StudyArg::Camp => vec![Study::Camp],
                StudyArg::Propsp => vec![Study::PropSp],
                StudyArg::Scenarios => vec![Study::Scenarios],
                StudyArg::All => vec![Study::Colab, Study::Camp, Study::PropSp],
            };
            if (only_traces || !traces.is_empty() || !libraries.is_empty()) && studies.len() > 1 {
                bail!("--trace, --traces and --only-traces go with one study, not `all`");
            }
            if let Some(n) = random_mixes {
                if !matches!(study, StudyArg::Colab) {
                    bail!(
                        "--random-mixes goes with the COLAB study (`colab reproduce`): its mixes \
                         are of the COLAB benchmarks on the 2B2S..4B4S machines, while camp and \
                         propsp run their papers' mixes on their papers' machines"
                    );
                }
                colab_workload::random::check_count(n)
                    .with_context(|| format!("--random-mixes {n}"))?;
            }
            let (title, baseline) = match study {
                // CFS is the one baseline every study runs.
                StudyArg::All => (
                    "colab reproduce all: every policy on the COLAB, CAMP and Prop-SP studies",
                    "cfs",
                ),
                _ => (studies[0].title(), studies[0].baseline()),
            };
            if lengths.is_some() && matches!(study, StudyArg::Colab | StudyArg::Scenarios) {
                bail!(
                    "--lengths goes with the camp, propsp and all studies: the COLAB study's \
                     and the scenarios' programs are sized from recordings and their papers"
                );
            }
            let paper_lengths = match lengths {
                Some(l) => l == LengthsArg::Paper,
                None => !quick,
            };
            let mut specs = Vec::new();
            for &st in &studies {
                let mut spec = CampaignSpec::study(&lib, st, quick)?;
                if paper_lengths && matches!(st, Study::Camp | Study::PropSp) {
                    spec.with_paper_lengths()?;
                }
                if only_traces || only_random {
                    spec.clear_workloads();
                }
                for t in &traces {
                    let mut w = load_trace(t, speedup, &[], false)?;
                    w.classes = vec!["trace".into()];
                    spec.add_everywhere(w);
                }
                for w in &library_workloads {
                    spec.add_everywhere(w.clone());
                }
                if let Some(seeds) = seeds {
                    if seeds == 0 {
                        bail!("--seeds must be at least 1");
                    }
                    spec.seeds = (1..=seeds).collect();
                }
                if !configs.is_empty() {
                    spec.configs = configs.clone();
                    // The given machines replace each mix's own.
                    spec.machines.clear();
                }
                if let Some(n) = random_mixes {
                    spec.add_random_mixes(&lib, n, mix_seed)
                        .with_context(|| format!("--random-mixes {n}"))?;
                }
                if !policies.is_empty() {
                    spec.policies = policies.clone();
                }
                spec.predictor = predictor.clone();
                // Check the names before the campaign starts, naming the option.
                for c in &spec.configs {
                    Topology::named(c, CoreOrder::BigFirst)
                        .with_context(|| format!("--configs {c}"))?;
                }
                match ablation {
                    Some(Ablation::Model) => {
                        spec.policies = colab_campaign::ablation_policies(baseline)
                    }
                    Some(Ablation::Mechanisms) => {
                        spec.policies = colab_campaign::mechanism_ablation_policies(baseline)
                    }
                    None => {}
                }
                for p in &spec.policies {
                    spec.policy_and_predictor(p)
                        .with_context(|| format!("--policies {p}"))?;
                }
                specs.push(spec);
            }
            // Each study has its own default report directory.
            let out = match (study, out.to_str()) {
                (StudyArg::All, Some("reports/reproduce")) => {
                    PathBuf::from("reports/reproduce-all")
                }
                (StudyArg::Colab, Some("reports/reproduce")) if only_random => {
                    PathBuf::from("reports/reproduce-random")
                }
                (_, Some("reports/reproduce")) => PathBuf::from(studies[0].report_dir()),
                _ => out,
            };
            let title = match random_mixes {
                Some(n) if only_random => format!(
                    "colab reproduce: {n} random mixes (seed {mix_seed}) in the COLAB papers' simulation study"
                ),
                Some(n) => format!("{title}, with {n} random mixes (seed {mix_seed})"),
                None => title.to_string(),
            };
            let title = match study {
                StudyArg::Camp | StudyArg::Propsp | StudyArg::All => format!(
                    "{title}; CAMP and Prop-SP programs {}",
                    if paper_lengths {
                        "at their papers' run lengths (`--lengths paper`)"
                    } else {
                        "at the models' 0.5-0.6 s (`--lengths model`)"
                    }
                ),
                _ => title,
            };
            cmd_reproduce(&specs, &title, baseline, &out, allow_no_png)
        }
        Cmd::Bench {
            full,
            threads,
            cores,
            policies,
            predictor,
        } => {
            let list: Vec<String> = match policies.as_slice() {
                [] => colab_campaign::PAPER_POLICIES.map(String::from).to_vec(),
                [one] if one.eq_ignore_ascii_case("all") => {
                    colab_campaign::ALL_POLICIES.map(String::from).to_vec()
                }
                _ => policies,
            };
            for p in &list {
                colab_policies::by_name(p).with_context(|| format!("--policies {p}"))?;
            }
            parse_predictor(&predictor)?;
            if threads {
                // 4,096 threads x 12 rounds; 64 threads on the same machine.
                let sides = [
                    Scale {
                        label: "64 threads",
                        machine: "4B4S",
                        threads: 64,
                    },
                    Scale {
                        label: "4096 threads",
                        machine: "4B4S",
                        threads: 4096,
                    },
                ];
                return bench_scaling(&list, &predictor, sides, 49_152);
            }
            if cores {
                // Two threads per core on each: 8 and 1,024 cores, half big.
                let sides = [
                    Scale {
                        label: "8 cores",
                        machine: "4B4S",
                        threads: 16,
                    },
                    Scale {
                        label: "1024 cores",
                        machine: "512B512S",
                        threads: 2048,
                    },
                ];
                return bench_scaling(&list, &predictor, sides, 49_152);
            }
            cmd_bench(full, &list, &predictor)
        }
        Cmd::Native {
            workload,
            cpus,
            reps,
            seed,
            timeout,
            emulate,
            order,
            json,
        } => {
            let mut lib = Library::builtin();
            let w = lib.resolve(&workload)?;
            let mut cpus = cpus.map(|c| parse_cpus(&c)).transpose()?;
            if reps == 0 {
                bail!("--reps must be at least 1");
            }
            let emulate = match emulate {
                Some(arg) => {
                    let topo = load_topology(&arg, order.into())?;
                    let list = cpus
                        .clone()
                        .unwrap_or_else(|| (0..topo.num_cores()).collect());
                    let e = colab_native::Emulation::new(&topo, &list)
                        .with_context(|| format!("--emulate {arg}"))?;
                    cpus = Some(list);
                    Some(std::sync::Arc::new(e))
                }
                None => None,
            };
            cmd_native(&w, cpus, reps, seed, timeout, emulate, json)
        }
        Cmd::Train(args) => cmd_train(&args),
        Cmd::Validate(args) => {
            if args.reps == 0 || args.seeds == 0 || args.recordings == 0 {
                bail!("--reps, --seeds and --recordings must be at least 1");
            }
            colab_policies::by_name(&args.policy)
                .with_context(|| format!("--policy {}", args.policy))?;
            cmd_validate(&args)
        }
        Cmd::Trace {
            out,
            no_overhead_probe,
            reprobe,
            command,
        } => {
            let cache = probe_cache_file();
            if reprobe {
                if let Some(f) = &cache {
                    let _ = std::fs::remove_file(f);
                }
            }
            let opts = colab_trace::record::RecordOptions {
                overhead_probe: (!no_overhead_probe).then(probe_command).transpose()?,
                probe_cache: cache,
                ..Default::default()
            };
            if opts.overhead_probe.is_some() {
                eprintln!("trace: perf's overhead on this machine: a kept probe of the last day, or a new one (about 11 s)...");
            }
            let s = colab_trace::record::record(&command, &out, &opts)?;
            if let Some(o) = s.overhead {
                let from = match s.probe_from {
                    Some(at) => format!(
                        "kept probe, {} min old; --reprobe measures again",
                        colab_trace::record::age_min(at)
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
                command.join(" "),
                s.status,
                s.threads,
                s.events,
                s.duration.as_secs_f64(),
                s.lost_events,
                out.display()
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
                    out.display()
                );
                std::process::exit(s.status.shell_code());
            }
            eprintln!(
                "replay it: colab sim --trace {} -t 2B2S --speedup 2.0",
                out.display()
            );
            Ok(())
        }
        Cmd::ModelCheck {
            programs,
            traces,
            threads,
            json,
            strict,
            model,
        } => {
            use colab_validate::models;
            let dir = library_dir(&traces);
            let mut lib = Library::builtin();
            for f in &model {
                let text = std::fs::read_to_string(f)
                    .with_context(|| format!("--model {}: cannot read", f.display()))?;
                lib.add_program_text(&f.display().to_string(), &text)?;
            }
            let cs = models::compare_library(&lib, &dir, threads, &programs)
                .with_context(|| format!("--traces {traces}"))?;
            if cs.is_empty() {
                bail!(
                    "--traces {traces}: no recording with {threads} workers has a benchmark model"
                );
            }
            if json {
                for c in &cs {
                    println!("{}", serde_json::to_string(c)?);
                }
            } else {
                print!("{}", models::table(&cs));
            }
            let off: Vec<&str> = cs
                .iter()
                .filter(|c| !c.agrees())
                .map(|c| c.program.as_str())
                .collect();
            if strict && !off.is_empty() {
                bail!("outside the band: {}", off.join(", "));
            }
            Ok(())
        }
        Cmd::TraceStats { files, json } => {
            // Every file is read before anything is printed.
            let mut all = Vec::new();
            for f in &files {
                let name = f.display().to_string();
                let text = colab_trace::library::read_trace_text(f)
                    .with_context(|| format!("{name}: cannot read trace"))?;
                let t = colab_trace::Trace::parse(&name, &text)?;
                all.push((f, colab_trace::sync::sync_stats(&t)));
            }
            if !json {
                println!(
                    "{:<28} {:>7} {:>8} {:>8} {:>15} {:>15} {:>15} {:>6} {:>6} {:>6}",
                    "trace",
                    "threads",
                    "ms",
                    "cpu ms",
                    "broadcast (/s)",
                    "releases (/s)",
                    "hand-off (/s)",
                    "joins",
                    "sleeps",
                    "io"
                );
            }
            for (f, s) in all {
                if json {
                    let mut v = serde_json::to_value(&s)?;
                    v["trace"] = serde_json::Value::String(f.display().to_string());
                    println!("{v}");
                    continue;
                }
                let short = f
                    .file_name()
                    .map_or(f.display().to_string(), |n| n.to_string_lossy().to_string());
                let rate = |n: u64| format!("{n} ({:.0})", s.per_s(n));
                println!(
                    "{:<28} {:>7} {:>8.1} {:>8.1} {:>15} {:>15} {:>15} {:>6} {:>6} {:>6}",
                    short,
                    s.threads,
                    s.duration_ns as f64 / 1e6,
                    s.cpu_ns as f64 / 1e6,
                    rate(s.broadcast_waits),
                    rate(s.broadcast_releases),
                    rate(s.handoff_waits),
                    s.join_waits,
                    s.sleeps,
                    s.io_waits
                );
            }
            Ok(())
        }
        Cmd::TraceProbe { kind, iterations } => {
            use colab_trace::overhead::{run_probe, ProbeKind};
            let k = ProbeKind::parse(&kind)
                .with_context(|| format!("unknown probe '{kind}' (yield or syscall)"))?;
            println!("{}", run_probe(k, iterations).to_line());
            Ok(())
        }
        Cmd::Calibrate { out } => {
            eprintln!("calibrate: measuring (a few seconds)...");
            let m = colab_native::calibrate::measure();
            let text = m.topology_toml("this-machine");
            if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("{}: cannot create directory", dir.display()))?;
            }
            write_atomic(&out, text.as_bytes())?;
            println!(
                "{} CPUs; busy loop {:.1} iterations/us; context switch {} ns; wake-up latency {} ns; migration {} ns; tick {} ns ({})",
                m.cpus,
                m.spin.spins_per_us,
                m.context_switch_ns,
                m.wakeup_latency_ns,
                m.migration_ns,
                m.tick_ns,
                m.tick_source
            );
            for w in &m.warnings {
                eprintln!("warning: {w}");
            }
            println!("topology written to {}", out.display());
            Ok(())
        }
        Cmd::List => {
            let lib = Library::builtin();
            println!("Benchmarks (use as WORKLOAD, optionally NAME:n):");
            let line = |name: &str, s: &colab_workload::ProgramSpec| {
                println!(
                    "  {name:<16} {:<15} sync {:<9} comm/comp {:<6} {}",
                    s.parallelism,
                    s.sync_rate,
                    s.comm_comp,
                    s.threads_formula.clone().unwrap_or_default()
                );
            };
            let scenario = |file: &str| colab_workload::is_scenario_file(file);
            for (name, (file, s)) in &lib.benchmarks {
                if !scenario(file) {
                    line(name, s);
                }
            }
            println!("\nScenario programs (workloads/scenarios/, used the same way):");
            for (name, (file, s)) in &lib.benchmarks {
                if scenario(file) {
                    line(name, s);
                }
            }
            println!("\nMixes:");
            for m in &lib.mixes {
                let progs: Vec<&str> = m.programs.iter().map(|p| p.bench.as_str()).collect();
                println!(
                    "  {:<14} [{}] {}",
                    m.name,
                    m.classes.join(","),
                    progs.join(" - ")
                );
            }
            println!(
                "\nRandom mixes: Rand-S-1 .. Rand-S-N, N mixes of 2-6 COLAB benchmarks drawn from seed S \
                 (`colab reproduce --random-mixes N --mix-seed S`; `colab mixes --random N --mix-seed S` prints them)."
            );
            println!("\nPolicies:");
            for (n, d) in colab_policies::POLICIES {
                println!("  {n:<14} {d}");
            }
            println!("\nModels (colab train --show-builtin NAME):");
            for (n, d) in colab_model::BUILTIN_MODELS {
                println!("  {n:<18} {d}");
            }
            println!(
                "\nTrace libraries (traces/NAME/manifest.toml; `colab reproduce --traces NAME`):"
            );
            let mut any = false;
            let mut dirs: Vec<PathBuf> = std::fs::read_dir("traces")
                .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
                .unwrap_or_default();
            dirs.sort();
            for d in dirs.iter().filter(|d| d.join("manifest.toml").is_file()) {
                any = true;
                match colab_trace::library::Manifest::load(d) {
                    Ok(m) => {
                        let mut progs: Vec<&str> =
                            m.trace.iter().map(|e| e.program.as_str()).collect();
                        progs.dedup();
                        println!(
                            "  {:<16} {} recordings of {} programs ({}), {} on {} CPUs; {}",
                            m.library.name,
                            m.trace.len(),
                            progs.len(),
                            progs.join(" "),
                            m.library.recorded,
                            m.library.cpus,
                            m.library.source
                        );
                    }
                    Err(e) => println!("  {}: {e}", d.display()),
                }
            }
            if !any {
                println!("  (none here; `colab validate --keep-traces traces/NAME` records one)");
            }
            println!("\nMachines: any <b>B<s>S name (2B2S, 2B4S, 4B2S, 4B4S, 1B1S, 1B3S, 3B1S, 4B, ...) or a topology TOML file (see topologies/).");
            Ok(())
        }
        Cmd::Mixes { random, mix_seed } => {
            let lib = Library::builtin();
            let mixes = match random {
                Some(n) => colab_campaign::random_mixes(&lib, n, mix_seed)
                    .with_context(|| format!("--random {n}"))?,
                None => lib.mixes.clone(),
            };
            print!("{}", colab_workload::random::mixes_toml(&lib, &mixes)?);
            Ok(())
        }
        Cmd::Analytic { study, out } => cmd_analytic(study, out),
        Cmd::Topology { name, order } => {
            let t = load_topology(&name, order.into())?;
            println!("{}", t.describe());
            for c in t.cores() {
                let ty = t.core_type(c);
                println!(
                    "  core {:>2}: {:<8} cluster {} compute {:.3} memory {:.3} active {:.2} W idle {:.2} W",
                    c.0,
                    ty.name,
                    t.cluster_of(c),
                    ty.compute_rate,
                    ty.memory_rate,
                    ty.active_power_w,
                    ty.idle_power_w
                );
            }
            println!("  costs: {:?}", t.costs);
            Ok(())
        }
    }
}

/// Runs one analytic study into `out` (default `reports/analytic/<study>`).
fn cmd_analytic(study: Study, out: Option<PathBuf>) -> Result<()> {
    let name = match study {
        Study::CampUf => "camp-uf",
        Study::Propsp => "propsp",
    };
    let dir = out.unwrap_or_else(|| Path::new("reports/analytic").join(name));
    let written = match study {
        Study::CampUf => colab_analytic::camp::write_camp_uf(&dir),
        Study::Propsp => colab_analytic::propsp::write_propsp(&dir),
    }
    .with_context(|| format!("analytic {name}"))?;
    print!("{}", written.summary);
    println!("\nwritten to {}:", dir.display());
    for f in &written.files {
        println!("  {}", f.display());
    }
    Ok(())
}

/// `pigz=2.5` -> ("pigz", 2.5).
fn parse_comm_speedup(s: &str) -> std::result::Result<(String, f64), String> {
    let (c, v) = s
        .split_once('=')
        .ok_or_else(|| format!("'{s}': expected COMM=SPEEDUP"))?;
    let v: f64 = v.parse().map_err(|_| format!("'{v}' is not a number"))?;
    Ok((c.to_string(), v))
}

/// A trace library's recordings as workloads (class "trace"), each named
/// after its manifest entry and replayed with the manifest's speedups.
fn load_library(arg: &str) -> Result<Vec<Workload>> {
    let dir = library_dir(arg);
    let m = colab_trace::library::Manifest::load(&dir)
        .with_context(|| format!("--traces {arg}: not a trace library"))?;
    if m.trace.is_empty() {
        bail!(
            "--traces {arg}: {} lists no recordings",
            dir.join("manifest.toml").display()
        );
    }
    m.trace
        .iter()
        .map(|e| {
            let sel: Vec<(String, f64)> = e.thread_speedup.clone().into_iter().collect();
            let mut w = load_trace(&dir.join(&e.file), e.speedup, &sel, false)?;
            w.name = e.name.clone();
            for p in &mut w.programs {
                p.name = e.name.clone();
            }
            w.classes = vec!["trace".into()];
            Ok(w)
        })
        .collect()
}

/// A trace library argument: a directory, or a name under traces/.
fn library_dir(arg: &str) -> PathBuf {
    if Path::new(arg)
        .join(colab_trace::library::MANIFEST)
        .is_file()
        || arg.contains('/')
    {
        PathBuf::from(arg)
    } else {
        Path::new("traces").join(arg)
    }
}

/// The manifest of the traces `colab validate --keep-traces` kept.
fn write_library(
    dir: &Path,
    args: &ValidateArgs,
    trace: Vec<colab_trace::library::Entry>,
) -> Result<()> {
    use colab_trace::library::{LibraryInfo, Manifest};
    let read = |p: &str| {
        std::fs::read_to_string(p)
            .unwrap_or_default()
            .trim()
            .to_string()
    };
    let (name, source) = match args.library.as_slice() {
        [n, s] => (n.clone(), s.clone()),
        _ => (
            dir.file_name()
                .map_or("traces".into(), |n| n.to_string_lossy().to_string()),
            format!("the programs of {}", args.programs.display()),
        ),
    };
    let m = Manifest {
        library: LibraryInfo {
            name,
            source,
            made_by: std::env::args()
                .map(|a| {
                    if a.contains(char::is_whitespace) {
                        format!("'{a}'")
                    } else {
                        a
                    }
                })
                .collect::<Vec<_>>()
                .join(" "),
            recorded: chrono::Utc::now().format("%Y-%m-%d").to_string(),
            host: read("/proc/sys/kernel/hostname"),
            kernel: read("/proc/sys/kernel/osrelease"),
            cpus: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
        },
        trace,
    };
    m.write(dir)?;
    eprintln!(
        "validate: {} recordings kept in {} (manifest.toml)",
        m.trace.len(),
        dir.display()
    );
    Ok(())
}

/// Where `colab trace` keeps its last overhead probe: $XDG_CACHE_HOME/colab
/// or ~/.cache/colab (none without either).
fn probe_cache_file() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("colab").join("trace-overhead.json"))
}

/// The hidden subcommand that runs the tracing-overhead probe loops.
fn probe_command() -> Result<Vec<String>> {
    let exe = std::env::current_exe().context("cannot find the colab executable")?;
    Ok(vec![exe.display().to_string(), "trace-probe".into()])
}

/// A recorded trace as a one-program workload.
fn load_trace(
    path: &Path,
    speedup: f64,
    thread_speedup: &[(String, f64)],
    keep_tracing_overhead: bool,
) -> Result<Workload> {
    let name = path.display().to_string();
    let text = colab_trace::library::read_trace_text(path)
        .with_context(|| format!("{name}: cannot read trace"))?;
    let trace = colab_trace::Trace::parse(&name, &text)?;
    if let Some(o) = trace.header.others.filter(|o| o.busy()) {
        eprintln!(
            "warning: {name}: recorded on a busy machine (other processes used {:.0}% of its CPU time)",
            o.share * 100.0
        );
    }
    if let Some(st) = trace.header.status.filter(|st| !st.success()) {
        eprintln!(
            "warning: {name}: the recorded run failed ({st}); replaying it replays the failure"
        );
    }
    let prog_name = path
        .file_stem()
        .map_or_else(|| "trace".to_string(), |s| s.to_string_lossy().to_string());
    let opts = colab_trace::ReplayOptions {
        name: prog_name,
        speedup,
        thread_speedup: thread_speedup.iter().cloned().collect(),
        keep_tracing_overhead,
    };
    let p =
        colab_trace::to_program(&trace, &opts).with_context(|| format!("{name}: cannot replay"))?;
    Ok(alone(&p))
}

/// Parses `0,2-3` into [0, 2, 3].
fn parse_cpus(s: &str) -> Result<Vec<usize>> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let bad = || anyhow::anyhow!("--cpus {s}: '{part}' is not a CPU number or range like 0-3");
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) =
                    (a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?);
                if a > b {
                    return Err(bad());
                }
                out.extend(a..=b);
            }
            None => out.push(part.parse().map_err(|_| bad())?),
        }
    }
    if out.is_empty() {
        bail!("--cpus {s}: no CPUs given");
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// Writes `bytes` to `path` through a temporary file, so a failure never
/// leaves a half-written file.
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = path.with_extension("partial");
    let result = std::fs::write(&tmp, bytes)
        .with_context(|| format!("{}: cannot create", tmp.display()))
        .and_then(|()| {
            std::fs::rename(&tmp, path)
                .with_context(|| format!("{}: cannot move into place", path.display()))
        });
    if result.is_err() {
        // Leave no partial file behind.
        std::fs::remove_file(&tmp).ok();
    }
    result
}

#[derive(clap::Args)]
struct TrainArgs {
    /// Training table: CSV `program,core_type,<EVENT>...,speedup,energy_ratio`
    /// (format in crates/model/src/table.rs and the README).
    #[arg(long, value_name = "FILE", required_unless_present_any = ["perf", "show_builtin", "from_sim"])]
    table: Option<PathBuf>,
    /// Directory of perf stat runs: DIR/measurements.csv and
    /// DIR/<program>/<core_type>/*.perf.csv (recipe in crates/model/src/perf.rs).
    #[arg(long, value_name = "DIR", conflicts_with = "table")]
    perf: Option<PathBuf>,
    /// Generate the table in the simulator: each of the COLAB papers' 17
    /// benchmarks alone on one core of each type of --topology, every event
    /// read (in groups the PMU can count at once), as colab-tpds 5.1 ran its
    /// training programs on each cluster.
    #[arg(long, conflicts_with_all = ["table", "perf"])]
    from_sim: bool,
    /// Machine whose core types --from-sim trains for.
    #[arg(short, long, default_value = "2B2S", requires = "from_sim")]
    topology: String,
    /// Events to select per core type, besides CPU_CYCLES.
    #[arg(long, default_value_t = 6)]
    events: usize,
    /// Hardware counters readable at once, the cycle counter included.
    #[arg(long, default_value_t = 7)]
    max_counters: usize,
    /// Model name [default: the table's file stem or the perf directory's name].
    #[arg(long)]
    name: Option<String>,
    /// Report directory (replaced only once the new report is complete).
    #[arg(short, long, default_value = "reports/train")]
    out: PathBuf,
    /// Skip the SVG/PNG charts (they need a system font).
    #[arg(long)]
    no_charts: bool,
    /// Print a built-in model (see `colab list`) instead of training.
    #[arg(long, value_name = "NAME", conflicts_with_all = ["table", "perf"])]
    show_builtin: Option<String>,
}

fn cmd_train(args: &TrainArgs) -> Result<()> {
    if let Some(name) = &args.show_builtin {
        let Some(m) = colab_model::Model::builtin(name) else {
            let known: Vec<&str> = colab_model::BUILTIN_MODELS.iter().map(|m| m.0).collect();
            bail!(
                "unknown built-in model `{name}` (built in: {})",
                known.join(", ")
            );
        };
        print!("{}", colab_train::describe_model(&m));
        return Ok(());
    }
    let mut opts = colab_model::TrainOptions {
        events: args.events,
        max_counters: args.max_counters,
        ..Default::default()
    };
    opts.check()?;
    let (input, default_name) = match (&args.table, &args.perf) {
        (Some(t), _) => (
            colab_train::load_table_file(t)?,
            t.file_stem().map(|s| s.to_string_lossy().into_owned()),
        ),
        (None, Some(d)) => (
            colab_train::load_perf_dir(d)?,
            d.file_name().map(|s| s.to_string_lossy().into_owned()),
        ),
        _ if args.from_sim => {
            let topo = Topology::named(&args.topology, CoreOrder::BigFirst)
                .with_context(|| format!("--topology {}", args.topology))?;
            let (table, source) = colab_campaign::training::sim_training_table(&topo)?;
            (
                colab_train::LoadedTable {
                    table,
                    source,
                    notes: Vec::new(),
                },
                Some(colab_campaign::training::sim_model_name(&topo)),
            )
        }
        (None, None) => bail!("give --table FILE, --perf DIR or --from-sim"),
    };
    let shape = input
        .table
        .validate()
        .with_context(|| input.source.clone())?;
    eprintln!(
        "train: {}: {} programs on {} core types ({}), {} event columns; selecting {} events per core type",
        input.source,
        shape.programs.len(),
        shape.core_types.len(),
        shape.core_types.join(", "),
        input.table.events.len(),
        args.events
    );
    opts.name = args
        .name
        .clone()
        .or(default_name)
        .unwrap_or_else(|| "trained".into());
    let (model, files) = colab_train::train_and_report(&input, &opts, &args.out, !args.no_charts)?;
    let t = model.training().expect("a trained model has its summary");
    for n in &t.notes {
        eprintln!("note: {n}");
    }
    if !input.notes.is_empty() {
        eprintln!(
            "note: {} remarks on the input (perf warnings, dropped events), listed in {}",
            input.notes.len(),
            files.summary_md.display()
        );
    }
    for (c, e) in model.core_types() {
        let ct = &t.core_types[c];
        println!(
            "{c}: {} -> leave-one-program-out error: speedup {:.1}%, energy ratio {:.1}%",
            e.events().join(", "),
            ct.lopo_error.speedup * 100.0,
            ct.lopo_error.energy_ratio * 100.0
        );
    }
    println!(
        "mean leave-one-program-out error: speedup {:.1}%, energy ratio {:.1}% (in-sample {:.1}%, {:.1}%)",
        t.lopo_error.speedup * 100.0,
        t.lopo_error.energy_ratio * 100.0,
        t.fit_error.speedup * 100.0,
        t.fit_error.energy_ratio * 100.0
    );
    println!(
        "model `{}` -> {}; report {}",
        model.name(),
        files.model_json.display(),
        files.summary_md.display()
    );
    Ok(())
}

fn cmd_validate(args: &ValidateArgs) -> Result<()> {
    let ValidateArgs {
        suite,
        reps,
        seeds,
        out,
        timeout,
        recordings,
        ..
    } = args;
    let (reps, seeds, timeout, recordings) = (*reps, *seeds, *timeout, *recordings);
    let cases = if args.no_specs {
        Vec::new()
    } else {
        colab_validate::cases(suite)?
    };
    let real_programs = if args.no_programs {
        Vec::new()
    } else {
        colab_validate::programs::load(&args.programs)?
    };
    let (topo_text, how, spin) = match args.topology.as_deref() {
        Some(p) => (
            std::fs::read_to_string(p)
                .with_context(|| format!("{}: cannot read topology file", p.display()))?,
            format!("topology {}", p.display()),
            colab_native::calibrate_spin(),
        ),
        None => {
            eprintln!("validate: calibrating this machine...");
            let m = colab_native::calibrate::measure();
            for w in &m.warnings {
                eprintln!("warning: calibrate: {w} (the report's topology says so too)");
            }
            (
                m.topology_toml("this-machine"),
                "topology measured now by calibrate".into(),
                m.spin,
            )
        }
    };
    let topo = Topology::from_toml(&topo_text, CoreOrder::BigFirst).context("invalid topology")?;
    let opts = colab_validate::ValidateOptions {
        reps,
        seeds,
        topology: topo,
        policy: args.policy.clone(),
        cpus: None,
        calibration: spin,
        timeout: std::time::Duration::from_secs(timeout.max(1)),
    };
    let pb = bar();
    pb.0.set_style(
        ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} cases {msg}",
        )
        .expect("valid template"),
    );
    pb.start(cases.len() as u64);
    let mut results = Vec::new();
    for c in &cases {
        pb.0.set_message(
            c.file_stem()
                .map(|s| s.to_string_lossy().to_string())
                .unwrap_or_default(),
        );
        match colab_validate::run_case(c, &opts) {
            Ok(r) => results.extend(r),
            Err(e @ colab_validate::ValidateError::Native { .. }) => {
                pb.finish();
                // A hung native run leaves threads behind: report and leave.
                eprintln!("error: {e}");
                std::process::exit(1);
            }
            Err(e) => return Err(e.into()),
        }
        pb.inc();
    }
    pb.finish();
    if !real_programs.is_empty() {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("validate: skipping the real programs: recording them needs root (run as root or with sudo)");
        } else {
            let work = out.with_extension("work");
            std::fs::create_dir_all(&work)
                .with_context(|| format!("{}: cannot create", work.display()))?;
            let input = colab_validate::programs::make_input(&work)?;
            let record_opts = colab_trace::record::RecordOptions {
                overhead_probe: Some(probe_command()?),
                probe_cache: probe_cache_file(),
                quiet: true,
                ..Default::default()
            };
            if let Some(dir) = &args.keep_traces {
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("{}: cannot create", dir.display()))?;
            }
            let mut kept = Vec::new();
            for p in &real_programs {
                if !colab_validate::programs::available(p) {
                    eprintln!(
                        "validate: skipping {}: `{}` not found (Debian package {})",
                        p.name, p.command[0], p.package
                    );
                    continue;
                }
                eprintln!(
                    "validate: real program {} (run {reps} times, record and replay {recordings} times)",
                    p.name
                );
                let (r, k) = colab_validate::programs::run_program(
                    p,
                    &input,
                    &work,
                    reps,
                    recordings,
                    seeds,
                    &opts.topology,
                    &args.policy,
                    &record_opts,
                    args.keep_traces.as_deref(),
                )?;
                results.push(r);
                kept.extend(k);
            }
            if let Some(dir) = &args.keep_traces {
                write_library(dir, args, kept)?;
            }
            let _ = std::fs::remove_dir_all(&work);
        }
    }
    let programs_part = if real_programs.is_empty() {
        String::new()
    } else {
        format!(
            "; {} real programs from {}, each recorded and replayed {recordings} times between its native runs (median replay compared)",
            real_programs.len(),
            args.programs.display()
        )
    };
    let line = format!(
        "{} cases from {}{programs_part}; {reps} native repetitions each on all CPUs, {seeds} simulation seeds, `{}` policy; {how}.",
        cases.len(),
        suite.display(),
        args.policy
    );
    colab_validate::write_report(out, &results, &topo_text, &line)?;
    println!(
        "  {:<28} {:<16} {:>10} {:>7} {:>10} {:>8}",
        "case", "program", "real ms", "noise", "sim ms", "error"
    );
    for r in &results {
        println!(
            "  {:<28} {:<16} {:>10.1} {:>6.1}% {:>10.1} {:>+7.1}%",
            r.case,
            r.program,
            r.real_median_ns as f64 / 1e6,
            r.real_spread * 100.0,
            r.sim_ns as f64 / 1e6,
            r.error * 100.0
        );
    }
    let (real, specs): (Vec<_>, Vec<_>) =
        results.iter().cloned().partition(colab_validate::is_replay);
    for (what, part) in [("specs", specs), ("replayed real programs", real)] {
        if part.is_empty() {
            continue;
        }
        let s = colab_validate::summarize(&part);
        println!(
            "{what}: median |error| {:.1}%, max {:.1}%, {}/{} within 5%, {}/{} within 15%; native noise (median spread) {:.1}%",
            s.median_abs_error * 100.0,
            s.max_abs_error * 100.0,
            s.within_5,
            s.points,
            s.within_15,
            s.points,
            s.median_spread * 100.0,
        );
    }
    println!("report in {}", out.display());
    Ok(())
}

fn cmd_native(
    w: &Workload,
    cpus: Option<Vec<usize>>,
    reps: u32,
    seed: u64,
    timeout: u64,
    emulate: Option<std::sync::Arc<colab_native::Emulation>>,
    json: bool,
) -> Result<()> {
    let calibration = colab_native::calibrate_spin();
    let emulated = emulate.as_ref().map(|e| e.description.clone());
    let opts = colab_native::NativeOptions {
        cpus: cpus.clone(),
        reps,
        seed,
        calibration,
        timeout: std::time::Duration::from_secs(timeout.max(1)),
        emulate,
    };
    let runs = match colab_native::run(w, &opts) {
        Ok(r) => r,
        Err(e @ colab_native::NativeError::Timeout { .. }) => {
            // Threads of a hung run cannot be stopped: report and leave.
            eprintln!("error: {e}");
            std::process::exit(1);
        }
        Err(e) => return Err(e.into()),
    };
    if json {
        let v = serde_json::json!({
            "workload": w.name, "cpus": cpus, "reps": reps, "seed": seed, "calibration": calibration, "emulate": emulated,
            "programs": runs.iter().map(|r| serde_json::json!({
                "name": r.name, "threads": r.threads, "samples_ns": r.samples_ns, "raw_ns": r.raw_ns, "rate_during": r.rate_during,
                "median_ns": r.median_ns(), "min_ns": r.min_ns(), "max_ns": r.max_ns(), "spread": r.spread(),
            })).collect::<Vec<_>>(),
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    let where_ = match emulated {
        Some(e) => format!("an emulated {e}"),
        None => cpus.map_or("all CPUs".to_string(), |c| format!("CPUs {c:?}")),
    };
    println!(
        "{} natively on {where_}, {reps} repetitions (busy loop {:.1} iterations/us)",
        w.name, calibration.spins_per_us
    );
    println!(
        "  {:<16} {:>7} {:>14} {:>12} {:>12} {:>8}",
        "program", "threads", "turnaround ms", "min ms", "max ms", "spread"
    );
    for r in &runs {
        println!(
            "  {:<16} {:>7} {:>14.3} {:>12.3} {:>12.3} {:>7.1}%",
            r.name,
            r.threads,
            r.median_ns() as f64 / 1e6,
            r.min_ns() as f64 / 1e6,
            r.max_ns() as f64 / 1e6,
            r.spread() * 100.0
        );
    }
    Ok(())
}

fn alone(p: &colab_workload::Program) -> Workload {
    Workload {
        name: p.name.clone(),
        classes: vec![],
        source: String::new(),
        programs: vec![p.clone()],
    }
}

/// A predictor label, checked (`--predictor`).
fn parse_predictor(label: &str) -> Result<colab_campaign::model_predictor::Predictor> {
    use colab_campaign::model_predictor::{parse_predictor, LabelError};
    parse_predictor(label).map_err(|e| match e {
        LabelError::Unknown => anyhow::anyhow!(
            "--predictor {label}: expected model, model:NAME, model:FILE (each optionally +R, e.g. model+0.10), noisy, noisy:R, oracle or constant:S (S > 0)"
        ),
        LabelError::Model(problem) => anyhow::anyhow!("--predictor {label}: {problem}"),
    })
}

/// What `policy` reads its predictions from on `topo` under `label`.
fn predictor_on(label: &str, policy: &str, topo: &Topology) -> Result<PredictorKind> {
    let pol = colab_policies::by_name(policy)?;
    let kind = parse_predictor(label)?
        .for_machine(pol.as_ref(), topo)
        .map_err(anyhow::Error::msg)
        .with_context(|| format!("--predictor {label}"))?;
    let missing = colab_campaign::model_predictor::uncovered_core_types(&kind, topo);
    if !missing.is_empty() {
        bail!(
            "--predictor {label}: the model has no entry for core type(s) {} of {}",
            missing.join(", "),
            topo.name
        );
    }
    Ok(kind)
}

#[allow(clippy::too_many_arguments)]
fn cmd_sim(
    w: &Workload,
    topo: &Topology,
    policy: &str,
    predictor_label: &str,
    cfg: &SimConfig,
    timeline: Option<&Path>,
    json: bool,
) -> Result<()> {
    let mut pol = colab_policies::by_name(policy)?;
    let predictor = predictor_on(predictor_label, policy, topo)?;
    let cfg = &SimConfig {
        predictor: predictor.clone(),
        ..cfg.clone()
    };
    let seed = cfg.seed;
    let t0 = Instant::now();
    let r = simulate_with_bar(w, topo, pol.as_mut(), cfg)
        .with_context(|| format!("simulating {} on {}", w.name, topo.name))?;
    let wall = t0.elapsed().as_secs_f64();
    // Baselines for the metrics: alone on all-big (T_SB, CFS) and alone here (same policy).
    // CFS gets the predictor campaigns give it (it reads no predictions: the oracle).
    let sb_topo = topo.all_fastest();
    let sb_base = SimConfig {
        seed,
        predictor: predictor_on(predictor_label, "cfs", topo)?,
        max_events: cfg.max_events,
        ..SimConfig::default()
    };
    let mut t_sb = Vec::new();
    let mut t_alone = Vec::new();
    for p in &w.programs {
        let a = alone(p);
        let mut cfs = colab_policies::by_name("cfs")?;
        let base = SimConfig {
            seed,
            predictor: predictor.clone(),
            max_events: cfg.max_events,
            ..SimConfig::default()
        };
        let what = |on: &str| format!("simulating {} alone on {on} (a baseline)", a.name);
        let sb = simulate_with_bar(&a, &sb_topo, cfs.as_mut(), &sb_base)
            .with_context(|| what(&sb_topo.name))?;
        t_sb.push(sb.programs[0].turnaround_ns as f64);
        let mut same = colab_policies::by_name(policy)?;
        let here =
            simulate_with_bar(&a, topo, same.as_mut(), &base).with_context(|| what(&topo.name))?;
        t_alone.push(here.programs[0].turnaround_ns as f64);
    }
    let t_m: Vec<f64> = r.programs.iter().map(|p| p.turnaround_ns as f64).collect();
    let pairs_sb: Vec<(f64, f64)> = t_m.iter().copied().zip(t_sb.iter().copied()).collect();
    let pairs_alone: Vec<(f64, f64)> = t_m.iter().copied().zip(t_alone.iter().copied()).collect();
    let h_antt = colab_metrics::h_antt(&pairs_sb)?;
    let h_stp = colab_metrics::h_stp(&pairs_sb)?;
    let unfair = colab_metrics::unfairness(&pairs_alone)?;
    if let Some(path) = timeline {
        let tl = r.timeline.as_ref().expect("timeline was requested");
        let mut buf = Vec::new();
        tl.write_json(&mut buf)
            .context("serializing the timeline")?;
        write_atomic(path, &buf)?;
    }
    if json {
        let v = serde_json::json!({
            "workload": w.name, "topology": topo.name, "policy": policy, "seed": seed,
            "programs": r.programs.iter().zip(&t_sb).zip(&t_alone).map(|((p, sb), al)| serde_json::json!({
                "name": p.name, "n": p.n, "threads": p.threads, "turnaround_ns": p.turnaround_ns, "t_sb_ns": *sb as u64, "t_alone_ns": *al as u64,
            })).collect::<Vec<_>>(),
            "h_antt": h_antt, "h_stp": h_stp, "unfairness": unfair, "energy_j": r.energy_j,
            "makespan_ns": r.makespan_ns, "stats": r.stats,
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    println!(
        "{} on {} under {} (seed {seed})",
        w.name,
        topo.describe(),
        policy
    );
    println!(
        "  {:<16} {:>7} {:>14} {:>14} {:>8}",
        "program", "threads", "turnaround ms", "alone-big ms", "T_M/T_SB"
    );
    for ((p, sb), _) in r.programs.iter().zip(&t_sb).zip(&t_alone) {
        println!(
            "  {:<16} {:>7} {:>14.3} {:>14.3} {:>8.3}",
            p.name,
            p.threads,
            p.turnaround_ns as f64 / 1e6,
            sb / 1e6,
            p.turnaround_ns as f64 / sb
        );
    }
    println!("  H_ANTT {h_antt:.3}  H_STP {h_stp:.3}  Unfairness {unfair:.3}  energy {:.4} J  makespan {:.3} ms", r.energy_j, r.makespan_ns as f64 / 1e6);
    let s = &r.stats;
    println!(
        "  {} events, {} context switches, {} migrations ({} cross-cluster), {} preemptions, {} futex waits; {:.1} ms wall",
        s.events,
        s.context_switches,
        s.migrations,
        s.cross_cluster_migrations,
        s.preemptions,
        s.futex_waits,
        wall * 1e3
    );
    if let Some(p) = timeline {
        println!(
            "  timeline: {} (open in https://ui.perfetto.dev)",
            p.display()
        );
    }
    Ok(())
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

struct Bar(ProgressBar);

impl Progress for Bar {
    fn start(&self, total: u64) {
        self.0.set_length(total);
    }
    fn inc(&self) {
        self.0.inc(1);
    }
    fn finish(&self) {
        self.0.finish_and_clear();
    }
}

fn bar() -> Bar {
    let pb = ProgressBar::new(0);
    pb.set_style(
        ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} simulations ({eta} left)",
        )
        .expect("valid template"),
    );
    Bar(pb)
}

/// Runs the campaigns of `specs` and writes one report over all their runs.
fn cmd_reproduce(
    specs: &[CampaignSpec],
    title: &str,
    baseline: &str,
    out: &Path,
    allow_no_png: bool,
) -> Result<()> {
    let mut records = Vec::new();
    let mut stats = colab_campaign::CampaignStats::default();
    for spec in specs {
        eprintln!(
            "reproduce: {} workloads x {} x {} policies x {} orders x {} seeds{}",
            spec.workloads.len(),
            if spec.machines.is_empty() {
                format!("{} configs", spec.configs.len())
            } else {
                "their own machines".to_string()
            },
            spec.policies.len(),
            spec.orders.len(),
            spec.seeds.len(),
            match spec.restart_until {
                Some(k) => format!(", programs restarted until each completed {k} times"),
                None => String::new(),
            } + if spec.paper_lengths {
                ", at their papers' run lengths (minutes of simulated time each)"
            } else {
                ""
            }
        );
        let (r, s) = colab_campaign::run(spec, &bar())?;
        records.extend(r);
        stats.simulations += s.simulations;
        stats.events += s.events;
        stats.wall_s += s.wall_s;
    }
    let mut opts = colab_report::ReportOptions {
        title: title.into(),
        baseline_policy: baseline.into(),
        policy_order: colab_campaign::ALL_POLICIES
            .iter()
            .map(|s| s.to_string())
            .collect(),
        workloads: specs
            .iter()
            .flat_map(CampaignSpec::random_compositions)
            .collect(),
        ..Default::default()
    };
    if allow_no_png {
        opts.on_chart_failure = colab_report::ChartFailure::Skip;
    }
    let files = colab_report::write_report(out, &records, &opts)
        .with_context(|| format!("{}: writing the report", out.display()))?;
    for w in &files.warnings {
        eprintln!("warning: {w}");
    }
    eprintln!(
        "{} simulations, {} events in {:.1} s ({:.1} M events/s over {} threads); report in {}",
        stats.simulations,
        stats.events,
        stats.wall_s,
        stats.events as f64 / stats.wall_s / 1e6,
        rayon::current_num_threads(),
        out.display()
    );
    Ok(())
}

/// The fastest of `runs` runs of `w` under `pol` (wall seconds), and the
/// run's statistics (the same in every run: the simulator is deterministic).
fn best_of(
    runs: usize,
    w: &Workload,
    topo: &Topology,
    pol: &str,
    kind: &colab_sim::PredictorKind,
) -> Result<(f64, colab_sim::SimStats)> {
    let mut best = f64::MAX;
    let mut stats = None;
    for _ in 0..runs {
        let mut p = colab_policies::by_name(pol)?;
        let cfg = SimConfig {
            predictor: kind.clone(),
            ..SimConfig::default()
        };
        let t0 = Instant::now();
        let r = simulate(w, topo, p.as_mut(), &cfg)?;
        best = best.min(t0.elapsed().as_secs_f64());
        stats = Some(r.stats);
    }
    Ok((best, stats.context("at least one run")?))
}

/// Events/s against the thread count: one program of `n` threads, each
/// looping compute (200 us) and a sleep (100 us), the same total work at
/// every `n`, on 4B4S. Best of three runs.
/// One side of a scaling benchmark: a machine and a thread count.
struct Scale {
    label: &'static str,
    machine: &'static str,
    threads: u64,
}

/// Events/s of each policy on two sizes of the same work: `n` threads of
/// 200 us computes and 100 us sleeps, `rounds` rounds in all (so both
/// sides simulate about the same number of events).
fn bench_scaling(
    policies: &[String],
    predictor: &str,
    sides: [Scale; 2],
    rounds: u64,
) -> Result<()> {
    println!(
        "{:<13} {:>14} {:>14} {:>7}",
        "policy", sides[0].label, sides[1].label, "ratio"
    );
    for pol in policies {
        let mut rates = Vec::new();
        for side in &sides {
            let topo = Topology::named(side.machine, CoreOrder::BigFirst)?;
            let kind = predictor_on(predictor, pol, &topo)?;
            let n = side.threads;
            let text = format!(
                "name = \"scale{n}\"\n[thread.main]\nops = [ {{ spawn = \"w\", count = {} }}, {{ join = \"w\" }} ]\n[thread.w]\nops = [ {{ loop = {}, body = [ {{ compute = 200, speedup = 2.0 }}, {{ sleep = 100 }} ] }} ]\n",
                n - 1,
                (rounds / n).max(1)
            );
            let mut lib = Library::default();
            let name = lib.add_program_text("bench", &text)?;
            let w = lib.single(&name, None)?;
            let (best, stats) = best_of(3, &w, &topo, pol, &kind)?;
            rates.push(stats.events as f64 / best);
        }
        println!(
            "{:<13} {:>12.2} M {:>12.2} M {:>7.3}",
            pol,
            rates[0] / 1e6,
            rates[1] / 1e6,
            rates[1] / rates[0]
        );
    }
    Ok(())
}

fn cmd_bench(full: bool, policies: &[String], predictor: &str) -> Result<()> {
    let lib = Library::builtin();
    // Single-thread event-loop speed on a few representative workloads.
    let cases = [
        ("Sync-2", "2B2S"),
        ("Comm-4", "4B4S"),
        ("fluidanimate", "2B2S"),
        ("ferret", "2B4S"),
    ];
    println!(
        "{:<14} {:<6} {:<13} {:>9} {:>10} {:>8} {:>11} {:>11}",
        "workload",
        "config",
        "policy",
        "q-events",
        "sch-events",
        "wall ms",
        "q-events/s",
        "sch-ev/s"
    );
    let mut tot_ev = 0u64;
    let mut tot_sch = 0u64;
    let mut tot_s = 0.0;
    for (wname, cfg) in cases {
        let Ok(w) = lib.mix(wname).or_else(|_| lib.single(wname, None)) else {
            continue;
        };
        let topo = Topology::named(cfg, CoreOrder::BigFirst)?;
        for pol in policies {
            let kind = predictor_on(predictor, pol, &topo)?;
            let (best, stats) = best_of(5, &w, &topo, pol, &kind)?;
            let (events, sch) = (stats.events, stats.scheduling_events());
            tot_ev += events;
            tot_sch += sch;
            tot_s += best;
            println!(
                "{:<14} {:<6} {:<13} {:>9} {:>10} {:>8.2} {:>11.0} {:>11.0}",
                wname,
                cfg,
                pol,
                events,
                sch,
                best * 1e3,
                events as f64 / best,
                sch as f64 / best
            );
        }
    }
    println!(
        "one thread: {:.2} M queue events/s, {:.2} M scheduling events/s",
        tot_ev as f64 / tot_s / 1e6,
        tot_sch as f64 / tot_s / 1e6
    );
    std::io::stdout().flush().ok();
    for quick in if full { vec![true, false] } else { vec![true] } {
        let mut spec = CampaignSpec::paper(&lib, quick)?;
        spec.predictor = predictor.to_string();
        let (_, stats) = colab_campaign::run(&spec, &colab_campaign::NoProgress)?;
        println!(
            "campaign ({}): {} simulations, {} events, {:.2} s wall on {} threads ({:.2} M events/s)",
            if quick { "reproduce --quick" } else { "reproduce (full)" },
            stats.simulations,
            stats.events,
            stats.wall_s,
            rayon::current_num_threads(),
            stats.events as f64 / stats.wall_s / 1e6
        );
    }
    Ok(())
}
