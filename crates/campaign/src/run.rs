//! Running a campaign: every simulation of a [`CampaignSpec`] and the
//! programs-alone baselines its metrics need, in two phases (the runs alone,
//! then the mixes) on an [`Engine`] (this machine's cores, or a cluster),
//! turned into [`RunRecord`]s. [`run`] stops at the first phase with a
//! failed run; [`run_keep_going`] finishes the rest and says what it left
//! out.

use crate::phase::{Engine, JobError, Local, Outcome, Phase};
use crate::{model_predictor, CampaignError, CampaignSpec};
use colab_core::{CoreOrder, Nanos};
use colab_report::{FailedRun, Failures, ProgramRecord, RunRecord};
use colab_sim::{simulate, PredictorKind, SimConfig, SimResult};
use colab_workload::{Program, Workload};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

/// One simulation to run.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub(crate) enum Job {
    /// Workload index in the spec.
    Mix {
        w: usize,
        config: String,
        policy: String,
        order: CoreOrder,
        seed: u64,
    },
    /// A program alone: (workload, program index) identifies it.
    Alone {
        prog_key: String,
        config: String,
        policy: String,
        order: CoreOrder,
        seed: u64,
    },
}

/// Progress callbacks (the CLI draws a bar; tests pass a no-op).
pub trait Progress: Sync {
    fn start(&self, total: u64);
    fn inc(&self);
    fn finish(&self);
}

pub struct NoProgress;
impl Progress for NoProgress {
    fn start(&self, _: u64) {}
    fn inc(&self) {}
    fn finish(&self) {}
}

/// Totals for the benchmark report.
#[derive(Clone, Debug, Default)]
pub struct CampaignStats {
    pub simulations: u64,
    pub events: u64,
    pub wall_s: f64,
}

fn prog_key(p: &Program) -> String {
    format!("{}:{}", p.name, p.n)
}

/// Runs a campaign; returns one record per (workload, config, policy, order,
/// seed). A failed run ends it after its phase (programs alone, then the
/// mixes) with an error naming every failed run of that phase.
pub fn run(
    spec: &CampaignSpec,
    progress: &dyn Progress,
) -> Result<(Vec<RunRecord>, CampaignStats), CampaignError> {
    run_on(spec, progress, &Local)
}

/// [`run`] on `engine`.
pub fn run_on(
    spec: &CampaignSpec,
    progress: &dyn Progress,
    engine: &dyn Engine,
) -> Result<(Vec<RunRecord>, CampaignStats), CampaignError> {
    let ran = execute(spec, progress, false, engine)?;
    let records = records(spec, &ran.done, &BTreeSet::new())?;
    Ok((records, ran.stats))
}

/// Runs a campaign to the end however many runs fail. A (workload,
/// configuration) with any failed or unrunnable run is left out of every
/// policy's records, so that every policy's means stay over the same
/// workloads; [`Failures`] lists the runs and what was left out.
pub fn run_keep_going(
    spec: &CampaignSpec,
    progress: &dyn Progress,
) -> Result<(Vec<RunRecord>, CampaignStats, Failures), CampaignError> {
    run_keep_going_on(spec, progress, &Local)
}

/// [`run_keep_going`] on `engine`.
pub fn run_keep_going_on(
    spec: &CampaignSpec,
    progress: &dyn Progress,
    engine: &dyn Engine,
) -> Result<(Vec<RunRecord>, CampaignStats, Failures), CampaignError> {
    let ran = execute(spec, progress, true, engine)?;
    let mut runs = Vec::new();
    let mut left_out = BTreeSet::new();
    for (job, e) in &ran.failed {
        // The run is named in its own columns; the error is what went wrong.
        runs.push(failed_run(spec, job, e.cause.clone()));
        if let Job::Mix { w, config, .. } = job {
            left_out.insert((*w, config.clone()));
        }
    }
    for (job, needed) in &ran.skipped {
        let why = format!("not run: it needs {}, which failed", describe(spec, needed));
        runs.push(failed_run(spec, job, why));
        if let Job::Mix { w, config, .. } = job {
            left_out.insert((*w, config.clone()));
        }
    }
    let records = records(spec, &ran.done, &left_out)?;
    let failures = Failures {
        runs,
        left_out: left_out
            .into_iter()
            .map(|(w, c)| (spec.workloads[w].name.clone(), c))
            .collect(),
    };
    Ok((records, ran.stats, failures))
}

/// What [`execute`] ran.
struct Ran {
    done: BTreeMap<Job, Outcome>,
    failed: Vec<(Job, JobError)>,
    /// Mixes not run, each with a failed run of a program alone it needs.
    skipped: Vec<(Job, Job)>,
    stats: CampaignStats,
}

/// Every job of `spec`, the programs alone first (a policy in oracle mode
/// reads its programs' T_SB before its run). Without `keep_going` a phase
/// with a failed run ends the campaign with every failure of that phase,
/// so that one rerun can address them all.
fn execute(
    spec: &CampaignSpec,
    progress: &dyn Progress,
    keep_going: bool,
    engine: &dyn Engine,
) -> Result<Ran, CampaignError> {
    let started = Instant::now();
    let kinds = predictors(spec)?;
    let jobs = jobs(spec);
    progress.start(jobs.len() as u64);
    let mut events = 0;
    let (alone_jobs, mix_jobs): (Vec<Job>, Vec<Job>) = jobs
        .into_iter()
        .partition(|j| matches!(j, Job::Alone { .. }));
    let mut done: BTreeMap<Job, Outcome> = BTreeMap::new();
    let mut failed: Vec<(Job, JobError)> = Vec::new();
    let mut skipped = Vec::new();
    for phase in [alone_jobs, mix_jobs] {
        // A mix whose program alone failed cannot be measured (only with
        // keep_going does a failed phase get this far).
        let failed_jobs: BTreeSet<&Job> = failed.iter().map(|(j, _)| j).collect();
        let mut runnable = Vec::with_capacity(phase.len());
        for j in phase {
            match needs(spec, &j)
                .into_iter()
                .find(|n| failed_jobs.contains(n))
            {
                Some(needed) => {
                    progress.inc();
                    skipped.push((j, needed));
                }
                None => runnable.push(j),
            }
        }
        drop(failed_jobs);
        let phase = Phase::new(spec, runnable, &done, kinds.clone());
        let mut results = engine.run_phase(&phase, progress)?;
        // In run order, whatever order the engine finished them in, and
        // each run once however often the engine ran it.
        results.sort_by_key(|r| r.job);
        results.dedup_by_key(|r| r.job);
        if results.len() != phase.len() || results.last().is_some_and(|r| r.job >= phase.len()) {
            return Err(CampaignError::Phase(format!(
                "the engine returned {} results for a phase of {} runs",
                results.len(),
                phase.len()
            )));
        }
        for r in results {
            let j = phase.job(r.job).clone();
            match r.outcome {
                Ok(o) => {
                    events += o.events;
                    done.insert(j, o);
                }
                Err(e) => failed.push((j, e)),
            }
        }
        if !keep_going && !failed.is_empty() {
            return Err(all_failures(
                failed.into_iter().map(|(_, e)| CampaignError::Run(e)),
            ));
        }
    }
    progress.finish();
    let stats = CampaignStats {
        simulations: done.len() as u64,
        events,
        wall_s: started.elapsed().as_secs_f64(),
    };
    Ok(Ran {
        done,
        failed,
        skipped,
        stats,
    })
}

/// One error for several failed runs: the first, and how many more.
fn all_failures(failed: impl Iterator<Item = CampaignError>) -> CampaignError {
    let mut failed = failed;
    let Some(first) = failed.next() else {
        unreachable!("all_failures of no failure")
    };
    let rest: Vec<String> = failed.map(|e| e.to_string()).collect();
    if rest.is_empty() {
        return first;
    }
    let shown = rest
        .iter()
        .take(3)
        .map(|m| m.lines().next().unwrap_or("").to_string())
        .collect();
    CampaignError::Failed {
        first: Box::new(first),
        more: rest.len(),
        shown,
    }
}

/// Every predictor, resolved and checked before the jobs start: a
/// machine's model is trained here, once, not inside the parallel jobs.
pub(crate) fn predictors(spec: &CampaignSpec) -> Result<Predictors, CampaignError> {
    // Validate names early with clear errors.
    for p in &spec.policies {
        spec.policy_and_predictor(p)?;
    }
    let mut kinds: Predictors = BTreeMap::new();
    for c in spec.configs.iter().chain(spec.machines.iter().flatten()) {
        // Campaign configurations are machine names (2B2S, 4B4S, 1B3S, or
        // a built-in machine file such as camp-amd-2fc-2sc).
        let topo = spec.topology(c, CoreOrder::BigFirst)?;
        for p in spec.policies.iter().map(String::as_str).chain(["cfs"]) {
            if kinds.contains_key(&(p.to_string(), c.clone())) {
                continue;
            }
            let (_, kind) = spec.policy_on(p, &topo)?;
            // A counter model must know every core type it will be read on.
            let missing = model_predictor::uncovered_core_types(&kind, &topo);
            if !missing.is_empty() {
                return Err(CampaignError::Model {
                    policy: p.to_string(),
                    problem: format!(
                        "the model has no entry for core type(s) {} of {c} (train one with `colab train --from-sim -t {c}`)",
                        missing.join(", ")
                    ),
                });
            }
            kinds.insert((p.to_string(), c.clone()), kind);
        }
    }
    Ok(kinds)
}

/// The programs of `spec` by key (a run alone names its program so).
pub(crate) fn programs(spec: &CampaignSpec) -> BTreeMap<String, Program> {
    let mut programs: BTreeMap<String, Program> = BTreeMap::new();
    for p in spec.workloads.iter().flat_map(|w| &w.programs) {
        programs.entry(prog_key(p)).or_insert_with(|| p.clone());
    }
    programs
}

/// Every job: each mix with the runs alone its metrics need, sorted and
/// without repeats.
fn jobs(spec: &CampaignSpec) -> Vec<Job> {
    let mut jobs: Vec<Job> = Vec::new();
    for wi in 0..spec.workloads.len() {
        for config in spec.configs_of(wi) {
            for policy in &spec.policies {
                for &order in &spec.orders {
                    for &seed in &spec.seeds {
                        let mix = Job::Mix {
                            w: wi,
                            config: config.clone(),
                            policy: policy.clone(),
                            order,
                            seed,
                        };
                        jobs.extend(needs(spec, &mix));
                        jobs.push(mix);
                    }
                }
            }
        }
    }
    jobs.sort();
    jobs.dedup();
    jobs
}

/// The runs alone a mix's metrics need, per program in the mix's order:
/// T_alone (same machine, policy, order, seed), T_SB (an all-big machine)
/// and T_slow (the slow cores alone), the last two under CFS, big-first,
/// same seed. A run alone needs nothing.
fn needs(spec: &CampaignSpec, job: &Job) -> Vec<Job> {
    let Job::Mix {
        w,
        config,
        policy,
        order,
        seed,
    } = job
    else {
        return Vec::new();
    };
    let mut needs = Vec::new();
    for p in &spec.workloads[*w].programs {
        needs.push(alone_job(p, config, policy, *order, *seed));
        for base in ["sb", "ss"] {
            let config = format!("{base}:{config}");
            needs.push(alone_job(p, &config, "cfs", CoreOrder::BigFirst, *seed));
        }
    }
    needs
}

fn alone_job(p: &Program, config: &str, policy: &str, order: CoreOrder, seed: u64) -> Job {
    Job::Alone {
        prog_key: prog_key(p),
        config: config.to_string(),
        policy: policy.to_string(),
        order,
        seed,
    }
}

/// One record per finished mix, but for the (workload index, config) pairs
/// in `left_out`.
fn records(
    spec: &CampaignSpec,
    done: &BTreeMap<Job, Outcome>,
    left_out: &BTreeSet<(usize, String)>,
) -> Result<Vec<RunRecord>, CampaignError> {
    let mut records = Vec::new();
    for (j, r) in done {
        let Job::Mix {
            w,
            config,
            policy,
            order,
            seed,
        } = j
        else {
            continue;
        };
        if left_out.contains(&(*w, config.clone())) {
            continue;
        }
        let wl = &spec.workloads[*w];
        let alone = needs(spec, j);
        let turnaround = |k: usize| done[&alone[k]].programs[0].turnaround_ns;
        let progs = r
            .programs
            .iter()
            .take(wl.programs.len())
            .enumerate()
            .map(|(i, pr)| ProgramRecord {
                name: pr.name.clone(),
                turnaround_ns: pr.turnaround_ns,
                t_alone_ns: turnaround(3 * i),
                t_sb_ns: turnaround(3 * i + 1),
                t_slow_ns: turnaround(3 * i + 2),
                cpu_ns: pr.cpu_ns,
                fast_cpu_ns: pr.fast_cpu_ns,
                bound_end_ns: None,
            })
            .collect::<Vec<_>>();
        let topo = spec.topology(config, *order)?;
        // The least H_ANTT of this run's draws (not with restarts: a
        // program's turnaround is then a mean over runs).
        let mut progs = progs;
        let h_antt_bound = match spec.restart_until {
            None if r.drawn.len() == wl.programs.len() => {
                let t_sb: Vec<f64> = (0..wl.programs.len())
                    .map(|i| turnaround(3 * i + 1) as f64)
                    .collect();
                let drawn: Vec<&colab_sim::DrawnWork> = r.drawn.iter().collect();
                let s = colab_bound::schedule_of_run(&wl.programs, &topo, &t_sb, &drawn);
                for (p, end) in progs.iter_mut().zip(&s.end_ns) {
                    p.bound_end_ns = Some(*end);
                }
                Some(s.h_antt)
            }
            _ => None,
        };
        records.push(RunRecord {
            workload: wl.name.clone(),
            classes: wl.classes.clone(),
            config: config.clone(),
            order: order.label().to_string(),
            seed: *seed,
            policy: policy.clone(),
            cores: topo.num_cores() as u32,
            threads: wl.total_threads(),
            programs: progs,
            energy_j: r.energy_j,
            makespan_ns: r.makespan_ns,
            events: r.events,
            migrations: r.migrations,
            context_switches: r.context_switches,
            fast_idle_share: colab_metrics::fast_idle_share(
                r.fast_idle_slow_busy_ns,
                r.makespan_ns,
                topo.big_mask().count() as u32,
            )
            .filter(|_| topo.is_asymmetric()),
            h_antt_bound,
        });
    }
    Ok(records)
}

impl Job {
    /// The machine, policy, core order and seed, which every job has.
    fn common(&self) -> (&String, &String, CoreOrder, u64) {
        match self {
            Job::Mix {
                config,
                policy,
                order,
                seed,
                ..
            }
            | Job::Alone {
                config,
                policy,
                order,
                seed,
                ..
            } => (config, policy, *order, *seed),
        }
    }

    /// What it runs: the mix's name, or "PROGRAM:N alone".
    fn what(&self, spec: &CampaignSpec) -> String {
        match self {
            Job::Mix { w, .. } => spec.workloads[*w].name.clone(),
            Job::Alone { prog_key, .. } => format!("{prog_key} alone"),
        }
    }
}

/// A job in words, as errors and the failures table name it.
pub(crate) fn describe(spec: &CampaignSpec, job: &Job) -> String {
    let (config, policy, order, seed) = job.common();
    format!(
        "{} on {config} ({}) under {policy}, seed {seed}",
        job.what(spec),
        order.label()
    )
}

fn failed_run(spec: &CampaignSpec, job: &Job, error: String) -> FailedRun {
    let (config, policy, order, seed) = job.common();
    FailedRun {
        workload: job.what(spec),
        config: config.clone(),
        order: order.label().to_string(),
        seed,
        policy: policy.clone(),
        error,
    }
}

/// The runs alone whose turnaround a mix run under an oracle-mode policy
/// (ablations) is told before it starts: each program's T_SB, in the mix's
/// order. Runs alone, and mixes under other policies, read none (a
/// program alone needs no lengths: there is no other to rank).
pub(crate) fn oracle_reads(spec: &CampaignSpec, job: &Job) -> Vec<Job> {
    let Job::Mix {
        w, config, seed, ..
    } = job
    else {
        return Vec::new();
    };
    let (_, policy, _, _) = job.common();
    if !spec.policy(policy).is_ok_and(|p| p.wants_oracle_lengths()) {
        return Vec::new();
    }
    spec.workloads[*w]
        .programs
        .iter()
        .map(|p| {
            alone_job(
                p,
                &format!("sb:{config}"),
                "cfs",
                CoreOrder::BigFirst,
                *seed,
            )
        })
        .collect()
}

/// The predictor of each (policy, machine) of a campaign.
pub(crate) type Predictors = BTreeMap<(String, String), PredictorKind>;

pub(crate) fn run_job(
    spec: &CampaignSpec,
    programs: &BTreeMap<String, Program>,
    kinds: &Predictors,
    alone: &BTreeMap<Job, Outcome>,
    job: &Job,
) -> Result<SimResult, CampaignError> {
    let workload = match job {
        Job::Mix { w, .. } => spec.workloads[*w].clone(),
        Job::Alone { prog_key, .. } => Workload::alone(&programs[prog_key]),
    };
    let (config, policy, order, seed) = job.common();
    let (topo, machine) = if let Some(c) = config.strip_prefix("sb:") {
        (spec.topology(c, CoreOrder::BigFirst)?.all_fastest(), c)
    } else if let Some(c) = config.strip_prefix("ss:") {
        (spec.topology(c, CoreOrder::BigFirst)?.slowest_only(), c)
    } else {
        (spec.topology(config, order)?, config.as_str())
    };
    let mut pol = spec.policy(policy)?;
    if pol.wants_oracle_lengths() {
        let t_sb: Vec<Nanos> = oracle_reads(spec, job)
            .iter()
            .map(|key| match alone.get(key) {
                Some(o) => Ok(o.programs[0].turnaround_ns),
                None => Err(CampaignError::Phase(format!(
                    "{}: its phase lacks {}, which it reads",
                    describe(spec, job),
                    describe(spec, key)
                ))),
            })
            .collect::<Result<_, _>>()?;
        if !t_sb.is_empty() {
            pol.oracle_program_lengths(&t_sb);
        }
    }
    // The machine's predictor (its model covers both of its core types).
    let predictor = kinds[&(policy.clone(), machine.to_string())].clone();
    let cfg = SimConfig {
        seed,
        predictor,
        restart_until: match job {
            Job::Mix { .. } => spec.restart_until,
            Job::Alone { .. } => None,
        },
        max_time_ns: spec.max_time_ns.unwrap_or(SimConfig::default().max_time_ns),
        ..SimConfig::default()
    };
    simulate(&workload, &topo, pol.as_mut(), &cfg).map_err(|e| CampaignError::Sim {
        what: describe(spec, job),
        source: e,
    })
}
