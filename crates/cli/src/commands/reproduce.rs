//! `colab reproduce`: the papers' simulation studies into a report directory.

use crate::common::{bar, warn, LengthsArg};
use anyhow::{bail, Context, Result};
use colab_campaign::reproduce::{self, Ablation as LibAblation, Request, StudyChoice};
use colab_campaign::{CampaignError, Engine, JobResult, Local, NoProgress, Phase, Progress};
use std::path::Path;
use std::path::PathBuf;
use std::process::Command;

pub const ABOUT: &str = "Run the papers' simulation study and write a report directory.";

pub const EXAMPLES: &str = "\
Examples:
  colab reproduce --quick                  # a representative subset in seconds
  colab reproduce                          # the full COLAB study, every policy
  colab reproduce camp --quick             # CAMP's Tables III-V on its machines
  colab reproduce --ablation mechanisms    # COLAB's and ROTA's mechanisms off in turn
  colab reproduce --policies cfs,eevdf,colab,rota --out reports/four
  colab reproduce --random-mixes 40 --mix-seed 7 --only-random
  colab reproduce --keep-going --time-limit 60   # report what finished
  colab reproduce --engine ray             # the runs on a local Ray cluster
  colab reproduce --engine ray --address head:6379   # ... on a running one";

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum EngineArg {
    /// This machine's cores.
    Local,
    /// A Ray cluster, through the colab Python package (`python3 -m
    /// colab.ray_engine`; pip install './crates/python[ray]').
    Ray,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum Ablation {
    /// Every predicting policy once per predictor.
    Model,
    /// COLAB and ROTA with each mechanism switched off or varied in turn, and ROTA's presets.
    Mechanisms,
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
pub struct ReproduceArgs {
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
    /// `mechanisms`: COLAB and ROTA with each mechanism switched off or
    /// varied in turn (`colab:remote=off`, `rota:gang=off`, ...), and ROTA's
    /// presets (`rota@3`, ...; `colab list colab` and `colab list rota` document both), beside the
    /// baseline, EEVDF and RR.
    /// Any `--policies` entry may name its predictor the same way.
    #[arg(long, value_enum, conflicts_with = "policies")]
    ablation: Option<Ablation>,
    /// Report directory (replaced only when the new report is complete).
    #[arg(short, long, default_value = reproduce::DEFAULT_OUT)]
    out: PathBuf,
    /// Seeds (start orders, prediction noise) per configuration and core order
    /// [default: 3, or 1 with --quick].
    #[arg(long)]
    seeds: Option<u64>,
    /// Configurations (comma-separated): built-in machines (`colab list machines`) or
    /// topology TOML files, a file's machine called by its `name` or else
    /// its file's stem; default: the papers' 2B2S,2B4S,4B2S,4B4S (camp,
    /// propsp, scenarios: the machines each mix names).
    #[arg(long, value_delimiter = ',')]
    configs: Vec<String>,
    /// Policies (comma-separated); default: all of them (`colab list`).
    #[arg(long, value_delimiter = ',')]
    policies: Vec<String>,
    /// Worker threads (default: all cores); with --engine ray and no
    /// --address, the local Ray cluster's workers.
    #[arg(short, long)]
    jobs: Option<usize>,
    /// Where the runs run: this machine's cores, or a Ray cluster (a local
    /// one listening on the loopback address only, unless --address names
    /// one). The report is the same byte for byte. With Ray, each finished
    /// slice of runs is kept in OUT.ray-checkpoint until the report is
    /// written, so that a stopped study run again resumes.
    #[arg(long, value_enum, default_value = "local")]
    engine: EngineArg,
    /// With --engine ray: the Ray cluster to join (HOST:6379,
    /// ray://HOST:10001, auto), whose nodes have the colab Python package.
    /// A Ray cluster runs whatever its clients send: keep it on a trusted
    /// network.
    #[arg(long, value_name = "ADDRESS")]
    address: Option<String>,
    /// With --engine ray: the Python that has the colab package and Ray.
    #[arg(long, value_name = "PATH", default_value = "python3")]
    python: String,
    /// Skip PNG charts if no font is available instead of failing.
    #[arg(long)]
    allow_no_png: bool,
    /// Also run these recorded traces (class "trace") through the study.
    #[arg(long = "trace", value_name = "FILE")]
    traces: Vec<PathBuf>,
    /// Also run a trace library: a directory with a manifest.toml (as
    /// `colab validate --keep-traces DIR` writes), each recording with the
    /// speedups its manifest gives (class "trace"); a bare NAME is looked
    /// for in traces/ here, the directories of $COLAB_TRACES and the source
    /// tree's traces/. `colab list` lists the libraries it finds.
    #[arg(long = "traces", value_name = "DIR|NAME")]
    libraries: Vec<String>,
    /// Run only the traces given with --trace or --traces, not the papers'
    /// workloads.
    #[arg(long)]
    only_traces: bool,
    /// Your own workloads in place of the study's (comma-separated or
    /// repeated): program and mix files (every mix of each; a mix may name
    /// program files relative to it), `FILE:NAME`, built-in mix and
    /// benchmark names (`ferret:8`), random mixes (`Rand-7-2`). They run on
    /// the study's machines or those of --configs, through the same
    /// report, charts and normalisation.
    #[arg(long, value_name = "WORKLOAD", value_delimiter = ',')]
    workloads: Vec<String>,
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
    /// Restart every program of each mix as it finishes until each has
    /// completed K times (1-100), a steady load as camp-tocs12 and propsp
    /// ran their studies ("until the longest application in the set
    /// completes three times"); a program's turnaround is then the mean of
    /// its completed runs, and runs still going at the end are dropped.
    /// Default: the study's own rule (camp, propsp: 3; colab, scenarios:
    /// each program runs once).
    #[arg(long, value_name = "K")]
    restart_until: Option<u32>,
    /// Big/little speedup of replayed compute in the traces of --trace
    /// [default: 2.0, an assumption: mid-range of the papers' speedups; a
    /// library's manifest gives its own].
    #[arg(long, value_name = "SPEEDUP", requires = "traces", value_parser = crate::common::replay_speedup)]
    speedup: Option<f64>,
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
    /// Finish every run that can run when some fail (a deadlock, a run past
    /// the simulator's time limit) and write the report without them: a
    /// (workload, configuration) with a failed run is left out of every
    /// policy's results, summary.md says which, and failures.csv holds
    /// each failed run with its whole error. The command still exits with
    /// an error. Without it the first campaign with a failed run stops
    /// with every failure of its phase and writes no report.
    #[arg(long)]
    keep_going: bool,
    /// Simulated seconds a run may take before it counts as failed (a
    /// policy that starves a thread never ends) [default: 3600, or 86400
    /// at the papers' lengths].
    #[arg(long, value_name = "SECONDS", allow_negative_numbers = true)]
    time_limit: Option<f64>,
}

pub fn run(a: ReproduceArgs) -> Result<()> {
    let req = Request {
        study: match a.study {
            StudyArg::Colab => StudyChoice::Colab,
            StudyArg::Camp => StudyChoice::Camp,
            StudyArg::Propsp => StudyChoice::PropSp,
            StudyArg::Scenarios => StudyChoice::Scenarios,
            StudyArg::All => StudyChoice::All,
        },
        quick: a.quick,
        paper_lengths: a.lengths.map(|l| l == LengthsArg::Paper),
        ablation: a.ablation.map(|x| match x {
            Ablation::Model => LibAblation::Model,
            Ablation::Mechanisms => LibAblation::Mechanisms,
        }),
        out: a.out,
        seeds: a.seeds,
        configs: a.configs,
        policies: a.policies,
        traces: a.traces,
        has_libraries: !a.libraries.is_empty(),
        only_traces: a.only_traces,
        workloads: a.workloads,
        random_mixes: a.random_mixes,
        mix_seed: a.mix_seed,
        only_random: a.only_random,
        restart_until: a.restart_until,
        predictor: a.predictor,
        keep_going: a.keep_going,
        time_limit_s: a.time_limit,
    };
    if a.engine == EngineArg::Local && a.address.is_some() {
        bail!("--address goes with --engine ray");
    }
    reproduce::check_only_traces(&req)?;
    let mut library_workloads = Vec::new();
    for l in &a.libraries {
        library_workloads.extend(colab_trace::workloads::load_library(l, &mut warn)?);
    }
    if let Some(j) = a.jobs {
        rayon::ThreadPoolBuilder::new()
            .num_threads(j.max(1))
            .build_global()
            .ok();
    }
    let speedup = a
        .speedup
        .unwrap_or(colab_trace::workloads::DEFAULT_REPLAY_SPEEDUP);
    let plan = reproduce::plan(&req, &library_workloads, &mut |t| {
        colab_trace::workloads::load_trace(t, speedup, &[], Default::default(), &mut warn)
    })?;
    let checkpoint = checkpoint_dir(&plan.out);
    let ray = RayEngine {
        python: a.python,
        address: a.address,
        num_cpus: a.jobs,
        checkpoint: checkpoint.clone(),
    };
    let (records, stats, failures) = match a.engine {
        EngineArg::Local => reproduce::run_plan(&plan, &Local, &|| Box::new(bar()), &mut |l| {
            eprintln!("{l}")
        })?,
        // The Python side draws its own progress bar.
        EngineArg::Ray => reproduce::run_plan(&plan, &ray, &|| Box::new(NoProgress), &mut |l| {
            eprintln!("{l}")
        })?,
    };
    let out = &plan.out;
    if records.is_empty() && !failures.runs.is_empty() {
        let first = &failures.runs[0];
        bail!(
            "every run failed or was left out ({} failed); no report written. The first: {} on {} under {}, seed {}: {}",
            failures.runs.len(),
            first.workload,
            first.config,
            first.policy,
            first.seed,
            first.error
        );
    }
    let mut opts = reproduce::report_options(&plan, a.allow_no_png);
    opts.failures = failures;
    opts.provenance.command = crate::common::command_line();
    opts.provenance.made = crate::common::made_by_this_build();
    opts.provenance.simulations = Some(stats.simulations);
    let files = colab_report::write_report(out, &records, &opts)
        .with_context(|| format!("{}: writing the report", out.display()))?;
    if a.engine == EngineArg::Ray && checkpoint.exists() {
        // The report holds everything the checkpoint kept.
        std::fs::remove_dir_all(&checkpoint)
            .with_context(|| format!("removing {}", checkpoint.display()))?;
    }
    for w in &files.warnings {
        warn(w);
    }
    let over = match a.engine {
        EngineArg::Local => format!("over {} threads", rayon::current_num_threads()),
        EngineArg::Ray => "on Ray".to_string(),
    };
    eprintln!(
        "{} simulations, {} events in {:.1} s ({:.1} M events/s {over}); report in {}",
        stats.simulations,
        stats.events,
        stats.wall_s,
        stats.events as f64 / stats.wall_s / 1e6,
        out.display()
    );
    let f = &opts.failures;
    if !f.runs.is_empty() {
        bail!(
            "{} runs failed; the report in {} leaves out {} (workload, configuration) pairs for every policy; each failed run is in {}",
            f.runs.len(),
            out.display(),
            f.left_out.len(),
            out.join("failures.csv").display()
        );
    }
    Ok(())
}

/// Where `--engine ray` keeps finished slices of runs: beside the report.
fn checkpoint_dir(out: &Path) -> PathBuf {
    let mut name = out.as_os_str().to_owned();
    name.push(".ray-checkpoint");
    PathBuf::from(name)
}

/// Each phase of the study handed to `python -m colab.ray_engine`, which
/// runs it on Ray, through files in the checkpoint directory.
struct RayEngine {
    python: String,
    address: Option<String>,
    num_cpus: Option<usize>,
    checkpoint: PathBuf,
}

impl Engine for RayEngine {
    fn run_phase(
        &self,
        phase: &Phase,
        _progress: &dyn Progress,
    ) -> Result<Vec<JobResult>, CampaignError> {
        let fail = |what: String| CampaignError::Phase(format!("--engine ray: {what}"));
        std::fs::create_dir_all(&self.checkpoint)
            .map_err(|e| fail(format!("{}: {e}", self.checkpoint.display())))?;
        let input = self.checkpoint.join("phase.json");
        let output = self.checkpoint.join("results.json");
        std::fs::write(&input, phase.to_json())
            .map_err(|e| fail(format!("{}: {e}", input.display())))?;
        let _ = std::fs::remove_file(&output);
        let mut cmd = Command::new(&self.python);
        cmd.args(["-m", "colab.ray_engine"])
            .arg(&input)
            .arg(&output)
            .arg("--checkpoint")
            .arg(self.checkpoint.join("slices"));
        if let Some(a) = &self.address {
            cmd.args(["--address", a]);
        } else if let Some(n) = self.num_cpus {
            cmd.args(["--num-cpus", &n.max(1).to_string()]);
        }
        let status = cmd.status().map_err(|e| {
            fail(format!(
                "could not run {} ({e}); --python names the Python that has the colab package with Ray \
                 (pip install './crates/python[ray]')",
                self.python
            ))
        })?;
        if !status.success() {
            return Err(fail(format!(
                "`{} -m colab.ray_engine` failed ({status}): it needs the colab Python package with Ray \
                 in that Python (pip install './crates/python[ray]'; --python picks the Python). \
                 Runs finished so far are kept in {}: the same command resumes from them",
                self.python,
                self.checkpoint.display()
            )));
        }
        let text = std::fs::read_to_string(&output)
            .map_err(|e| fail(format!("{}: {e}", output.display())))?;
        serde_json::from_str(&text).map_err(|e| fail(format!("{}: {e}", output.display())))
    }
}
