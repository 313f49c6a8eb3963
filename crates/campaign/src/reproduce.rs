//! `colab reproduce`: from the command's choices to the campaigns it runs
//! (which study, which workloads, machines, policies, seeds and predictor),
//! the report's title, baseline and directory, and the report itself.

use crate::{CampaignSpec, CampaignStats, Engine, Progress, Study};
use anyhow::{bail, Context, Result};
use colab_core::CoreOrder;
use colab_report::{Failures, RunRecord};
use colab_workload::{Library, Workload};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Which study to run: one of [`Study`], or `All` (COLAB, CAMP and Prop-SP
/// in one report normalised to CFS).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StudyChoice {
    Colab,
    Camp,
    PropSp,
    Scenarios,
    All,
}

/// An ablation that replaces the policy list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ablation {
    /// Every predicting policy once per predictor.
    Model,
    /// COLAB and ROTA with each mechanism switched off or varied in turn, and ROTA's presets.
    Mechanisms,
}

/// The report directory `reproduce` writes when none is given; each study
/// then gets its own.
pub const DEFAULT_OUT: &str = "reports/reproduce";

/// Everything `colab reproduce` was asked, as plain values.
#[derive(Clone, Debug)]
pub struct Request {
    pub study: StudyChoice,
    pub quick: bool,
    /// `Some(true)`: the papers' run lengths; `Some(false)`: the models'.
    pub paper_lengths: Option<bool>,
    pub ablation: Option<Ablation>,
    pub out: PathBuf,
    pub seeds: Option<u64>,
    pub configs: Vec<String>,
    pub policies: Vec<String>,
    /// Trace files to add to every campaign (class "trace").
    pub traces: Vec<PathBuf>,
    /// Whether any trace library was given (`--traces`).
    pub has_libraries: bool,
    pub only_traces: bool,
    /// Workloads that replace the study's own (`--workloads`): files of
    /// programs and mixes (every mix of each), mix and benchmark names.
    pub workloads: Vec<String>,
    pub random_mixes: Option<u32>,
    pub mix_seed: u64,
    pub only_random: bool,
    /// Restart each mix's programs until each completed this many times
    /// (`--restart-until`); None: the study's own rule.
    pub restart_until: Option<u32>,
    pub predictor: String,
    /// Finish every run that can run however many fail, and report the
    /// rest (`--keep-going`).
    pub keep_going: bool,
    /// Simulated-time cap of every run, in seconds (`--time-limit`); None:
    /// the simulator's 1 h, or 24 h at the papers' lengths.
    pub time_limit_s: Option<f64>,
}

/// The campaigns to run and where and how to report them.
#[derive(Clone, Debug)]
pub struct Plan {
    pub specs: Vec<CampaignSpec>,
    pub title: String,
    pub baseline: String,
    pub out: PathBuf,
    /// See [`Request::keep_going`].
    pub keep_going: bool,
    /// With `--quick`: what part of each study runs, against the whole.
    pub quick_scope: Option<String>,
}

/// `--time-limit SECONDS` of simulated time as nanoseconds: at least a
/// microsecond, at most about a year.
pub fn time_limit_ns(seconds: f64) -> Result<u64> {
    if !(1e-6..=3.2e7).contains(&seconds) {
        bail!(
            "--time-limit {seconds}: must be between 0.000001 and 32000000 seconds of simulated time"
        );
    }
    Ok((seconds * 1e9).round() as u64)
}

/// The check `reproduce` makes before it loads any trace library.
pub fn check_only_traces(req: &Request) -> Result<()> {
    if req.only_traces && req.traces.is_empty() && !req.has_libraries {
        bail!("--only-traces needs --trace FILE or --traces DIR");
    }
    Ok(())
}

/// Builds the campaigns of `req`, checking every option (each error names
/// its option). `library_workloads` are the trace libraries' recordings,
/// added to every campaign; `load_trace` reads one `--trace` file.
pub fn plan(
    req: &Request,
    library_workloads: &[Workload],
    load_trace: &mut dyn FnMut(&Path) -> Result<Workload>,
) -> Result<Plan> {
    let lib = Library::builtin();
    let studies = match req.study {
        StudyChoice::Colab => vec![Study::Colab],
        StudyChoice::Camp => vec![Study::Camp],
        StudyChoice::PropSp => vec![Study::PropSp],
        StudyChoice::Scenarios => vec![Study::Scenarios],
        StudyChoice::All => vec![Study::Colab, Study::Camp, Study::PropSp],
    };
    let any_traces = req.only_traces || !req.traces.is_empty() || req.has_libraries;
    if any_traces && studies.len() > 1 {
        bail!("--trace, --traces and --only-traces go with one study, not `all`");
    }
    if !req.workloads.is_empty() && studies.len() > 1 {
        bail!("--workloads goes with one study, not `all`");
    }
    if !req.workloads.is_empty() && req.only_random {
        bail!("--workloads replaces the study's workloads: give --random-mixes without --only-random to add random mixes to them");
    }
    let own: Vec<Workload> = Library::builtin()
        .resolve_args(&req.workloads, true)
        .context("--workloads")?
        .into_iter()
        .map(|r| r.workload)
        .collect();
    if let Some(n) = req.random_mixes {
        if req.study != StudyChoice::Colab {
            bail!(
                "--random-mixes goes with the COLAB study (`colab reproduce`): its mixes \
                 are of the COLAB benchmarks on the 2B2S..4B4S machines, while camp and \
                 propsp run their papers' mixes on their papers' machines"
            );
        }
        colab_workload::random::check_count(n).with_context(|| format!("--random-mixes {n}"))?;
    }
    let (title, baseline) = match req.study {
        // CFS is the one baseline every study runs.
        StudyChoice::All => (
            "colab reproduce all: every policy on the COLAB, CAMP and Prop-SP studies",
            "cfs",
        ),
        _ => (studies[0].title(), studies[0].baseline()),
    };
    if let Some(t) = req.time_limit_s {
        time_limit_ns(t)?;
    }
    if let Some(k) = req.restart_until {
        if !(1..=colab_sim::MAX_RESTART_UNTIL).contains(&k) {
            bail!(
                "--restart-until {k}: must be between 1 and {}",
                colab_sim::MAX_RESTART_UNTIL
            );
        }
    }
    let colab_like = matches!(req.study, StudyChoice::Colab | StudyChoice::Scenarios);
    if req.paper_lengths.is_some() && colab_like {
        bail!(
            "--lengths goes with the camp, propsp and all studies: the COLAB study's \
             and the scenarios' programs are sized from recordings and their papers"
        );
    }
    let paper_lengths = req.paper_lengths.unwrap_or(!req.quick);
    let mut specs = Vec::new();
    for &st in &studies {
        specs.push(study_spec(
            req,
            &lib,
            st,
            baseline,
            paper_lengths,
            Added {
                own: &own,
                libraries: library_workloads,
            },
            load_trace,
        )?);
    }
    let out = report_dir(req, studies[0]);
    let title = match req.random_mixes {
        Some(n) if req.only_random => format!(
            "colab reproduce: {n} random mixes (seed {}) in the COLAB papers' simulation study",
            req.mix_seed
        ),
        Some(n) => format!("{title}, with {n} random mixes (seed {})", req.mix_seed),
        None => title.to_string(),
    };
    let title = if own.is_empty() {
        title
    } else {
        let names: Vec<&str> = own.iter().map(|w| w.name.as_str()).collect();
        format!(
            "{title}: your workloads ({}) in place of its own",
            names.join(", ")
        )
    };
    let title = match req.restart_until {
        Some(k) => format!("{title}; programs restarted until each completed {k} times"),
        None => title,
    };
    let title = if colab_like {
        title
    } else {
        format!(
            "{title}; CAMP and Prop-SP programs {}",
            if paper_lengths {
                "at their papers' run lengths (`--lengths paper`)"
            } else {
                "at the models' 0.5-0.6 s (`--lengths model`)"
            }
        )
    };
    let quick_scope = if req.quick {
        let parts = studies
            .iter()
            .zip(&specs)
            .map(|(&st, quick)| -> Result<String> {
                let whole = CampaignSpec::study(&lib, st, false)?;
                Ok(format!(
                    "{} of the study's {} workloads on {} of its {} machines, {} of {} seeds",
                    quick.workloads.len(),
                    whole.workloads.len(),
                    machine_names(quick).len(),
                    machine_names(&whole).len(),
                    quick.seeds.len(),
                    whole.seeds.len()
                ))
            })
            .collect::<Result<Vec<_>>>()?;
        Some(parts.join("; "))
    } else {
        None
    };
    Ok(Plan {
        specs,
        title,
        baseline: baseline.to_string(),
        out,
        keep_going: req.keep_going,
        quick_scope,
    })
}

/// Every machine a campaign runs on, by name.
fn machine_names(spec: &CampaignSpec) -> BTreeSet<&str> {
    spec.configs
        .iter()
        .chain(spec.machines.iter().flatten())
        .map(String::as_str)
        .collect()
}

/// Workloads a request brings: its own (`--workloads`, in place of the
/// study's) and its trace libraries' (added to them).
struct Added<'a> {
    own: &'a [Workload],
    libraries: &'a [Workload],
}

/// One study's campaign with the request's workloads, machines, seeds,
/// policies and predictor.
fn study_spec(
    req: &Request,
    lib: &Library,
    st: Study,
    baseline: &str,
    paper_lengths: bool,
    added: Added,
    load_trace: &mut dyn FnMut(&Path) -> Result<Workload>,
) -> Result<CampaignSpec> {
    let own = added.own;
    let mut spec = CampaignSpec::study(lib, st, req.quick)?;
    if paper_lengths && matches!(st, Study::Camp | Study::PropSp) {
        spec.with_paper_lengths()?;
    }
    if req.only_traces || req.only_random || !own.is_empty() {
        spec.clear_workloads();
    }
    for w in own {
        spec.add_everywhere(w.clone());
    }
    for t in &req.traces {
        let mut w = load_trace(t)?;
        w.classes = vec!["trace".into()];
        spec.add_everywhere(w);
    }
    for w in added.libraries {
        spec.add_everywhere(w.clone());
    }
    if let Some(seeds) = req.seeds {
        if seeds == 0 {
            bail!("--seeds must be at least 1");
        }
        spec.seeds = (1..=seeds).collect();
    }
    if !req.configs.is_empty() {
        // The given machines replace each mix's own.
        spec.configs.clear();
        spec.machines.clear();
        for c in &req.configs {
            spec.add_machine(c)
                .with_context(|| format!("--configs {c}"))?;
        }
    }
    if req.restart_until.is_some() {
        spec.restart_until = req.restart_until;
    }
    if let Some(t) = req.time_limit_s {
        spec.max_time_ns = Some(time_limit_ns(t)?);
    }
    if let Some(n) = req.random_mixes {
        spec.add_random_mixes(lib, n, req.mix_seed)
            .with_context(|| format!("--random-mixes {n}"))?;
    }
    if !req.policies.is_empty() {
        spec.policies = req.policies.clone();
    }
    spec.predictor = req.predictor.clone();
    // Check the names before the campaign starts, naming the option.
    for c in &spec.configs {
        spec.topology(c, CoreOrder::BigFirst)
            .with_context(|| format!("--configs {c}"))?;
    }
    match req.ablation {
        Some(Ablation::Model) => spec.policies = crate::ablation_policies(baseline),
        Some(Ablation::Mechanisms) => spec.policies = crate::mechanism_ablation_policies(baseline),
        None => {}
    }
    for p in &spec.policies {
        spec.policy_and_predictor(p)
            .with_context(|| format!("--policies {p}"))?;
    }
    Ok(spec)
}

/// The report directory: the one asked for, or the study's own when the
/// default was left.
fn report_dir(req: &Request, first: Study) -> PathBuf {
    if req.out.to_str() != Some(DEFAULT_OUT) {
        return req.out.clone();
    }
    match req.study {
        StudyChoice::All => PathBuf::from("reports/reproduce-all"),
        StudyChoice::Colab if req.only_random => PathBuf::from("reports/reproduce-random"),
        _ => PathBuf::from(first.report_dir()),
    }
}

/// The line `reproduce` logs before running a campaign: its size.
pub fn describe_spec(spec: &CampaignSpec) -> String {
    format!(
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
    )
}

/// Runs every campaign of `plan` in turn on `engine` (logging each one's
/// size to `log` and showing progress on a fresh `progress()`), and sums
/// their totals.
/// With `plan.keep_going` the failed runs come back in [`Failures`] (and
/// what they touch is left out of the records); without, the first
/// campaign with a failed run ends the plan with an error.
pub fn run_plan(
    plan: &Plan,
    engine: &dyn Engine,
    progress: &dyn Fn() -> Box<dyn Progress>,
    log: &mut dyn FnMut(&str),
) -> Result<(Vec<RunRecord>, CampaignStats, Failures)> {
    let mut records = Vec::new();
    let mut stats = CampaignStats::default();
    let mut failures = Failures::default();
    for spec in &plan.specs {
        log(&describe_spec(spec));
        let (r, s) = if plan.keep_going {
            let (r, s, f) = crate::run_keep_going_on(spec, progress().as_ref(), engine)?;
            failures.runs.extend(f.runs);
            failures.left_out.extend(f.left_out);
            (r, s)
        } else {
            crate::run_on(spec, progress().as_ref(), engine)?
        };
        records.extend(r);
        stats.simulations += s.simulations;
        stats.events += s.events;
        stats.wall_s += s.wall_s;
    }
    Ok((records, stats, failures))
}

/// The report's options for `plan`: its title and baseline, every policy
/// in the papers' order and the random mixes' compositions. With
/// `allow_no_png` a missing font skips the PNG charts instead of failing.
pub fn report_options(plan: &Plan, allow_no_png: bool) -> colab_report::ReportOptions {
    let mut opts = colab_report::ReportOptions {
        title: plan.title.clone(),
        baseline_policy: plan.baseline.clone(),
        policy_order: crate::ALL_POLICIES.iter().map(|s| s.to_string()).collect(),
        workloads: plan
            .specs
            .iter()
            .flat_map(CampaignSpec::random_compositions)
            .collect(),
        ..Default::default()
    };
    if allow_no_png {
        opts.on_chart_failure = colab_report::ChartFailure::Skip;
    }
    opts.provenance.scope = match &plan.quick_scope {
        Some(part) => colab_report::Scope::Quick(part.clone()),
        None => colab_report::Scope::Full,
    };
    opts.provenance.machine_notes = one_core_type_notes(plan);
    opts
}

/// What T_SB means on each machine of the plan with one core type: a run
/// alone on as many of its own cores, so H_ANTT there compares with those.
fn one_core_type_notes(plan: &Plan) -> Vec<String> {
    let mut seen = BTreeSet::new();
    let mut notes = Vec::new();
    for spec in &plan.specs {
        for name in machine_names(spec) {
            if !seen.insert(name.to_string()) {
                continue;
            }
            let Ok(t) = spec.topology(name, CoreOrder::BigFirst) else {
                continue;
            };
            if !t.is_asymmetric() {
                notes.push(format!(
                    "{name} ({}) has one core type: its T_SB is a run alone on as many of its \
                     own cores, so H_ANTT and H_STP there measure the cost of sharing them, \
                     not of missing faster cores.",
                    t.describe()
                ));
            }
        }
    }
    notes
}
