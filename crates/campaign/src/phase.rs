//! A phase of a campaign (its runs alone, then its mixes) as a unit that can
//! run anywhere: it serializes (JSON) with everything its runs need, its runs
//! can be taken in any slices and any order, and their results serialize
//! back bit for bit. The [`Local`] engine runs a phase on this machine's
//! cores; the Python package's Ray engine sends slices of it to a cluster.
//! Both hand their results to the same code that makes the records, so a
//! study's report does not depend on where its runs ran.

use crate::run::{describe, oracle_reads, predictors, programs, run_job, Job, Predictors};
use crate::{CampaignError, CampaignSpec, Progress};
use colab_sim::SimResult;
use colab_workload::Program;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::OnceLock;

/// What a campaign keeps of a run: what its records and its oracle
/// policies read.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    pub(crate) programs: Vec<ProgramOutcome>,
    pub(crate) energy_j: f64,
    pub(crate) makespan_ns: u64,
    pub(crate) events: u64,
    pub(crate) migrations: u64,
    pub(crate) context_switches: u64,
    pub(crate) fast_idle_slow_busy_ns: u64,
    /// What each program's steps drew (its lower bound reads them).
    pub(crate) drawn: Vec<colab_sim::DrawnWork>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct ProgramOutcome {
    pub(crate) name: String,
    pub(crate) turnaround_ns: u64,
    pub(crate) cpu_ns: u64,
    pub(crate) fast_cpu_ns: u64,
}

impl From<&SimResult> for Outcome {
    fn from(r: &SimResult) -> Outcome {
        Outcome {
            programs: r
                .programs
                .iter()
                .map(|p| ProgramOutcome {
                    name: p.name.clone(),
                    turnaround_ns: p.turnaround_ns,
                    cpu_ns: p.cpu_ns,
                    fast_cpu_ns: p.fast_cpu_ns,
                })
                .collect(),
            energy_j: r.energy_j,
            makespan_ns: r.makespan_ns,
            events: r.stats.events,
            migrations: r.stats.migrations,
            context_switches: r.stats.context_switches,
            fast_idle_slow_busy_ns: r.stats.fast_idle_slow_busy_ns,
            drawn: r.programs.iter().map(|p| p.drawn.clone()).collect(),
        }
    }
}

/// One run's result: its index in the phase, and its outcome or what went
/// wrong.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct JobResult {
    pub job: usize,
    pub outcome: Result<Outcome, JobError>,
}

/// A failed run, as text that can cross processes.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct JobError {
    /// The whole message, naming the run.
    pub message: String,
    /// What went wrong, without the run's name (failures.csv's column).
    pub cause: String,
}

impl From<CampaignError> for JobError {
    fn from(e: CampaignError) -> JobError {
        let cause = match &e {
            CampaignError::Sim { source, .. } => source.to_string(),
            e => e.to_string(),
        };
        JobError {
            message: e.to_string(),
            cause,
        }
    }
}

/// The runs of one phase of a campaign, with the campaign and the earlier
/// runs they read.
#[derive(Serialize, Deserialize)]
pub struct Phase {
    spec: CampaignSpec,
    jobs: Vec<Job>,
    /// Earlier runs the phase's runs read (an oracle-mode policy reads
    /// its programs' T_SB); none for most studies.
    done: Vec<(Job, Outcome)>,
    #[serde(skip)]
    cache: OnceLock<Result<Cache, String>>,
}

/// What every run of a phase needs, made once per process.
struct Cache {
    predictors: Predictors,
    programs: BTreeMap<String, Program>,
    done: BTreeMap<Job, Outcome>,
}

impl Phase {
    pub(crate) fn new(
        spec: &CampaignSpec,
        jobs: Vec<Job>,
        done: &BTreeMap<Job, Outcome>,
        predictors: Predictors,
    ) -> Phase {
        // Only what its runs read: a phase goes to every worker.
        let needed: BTreeMap<Job, Outcome> = jobs
            .iter()
            .flat_map(|j| oracle_reads(spec, j))
            .filter_map(|k| done.get(&k).map(|o| (k, o.clone())))
            .collect();
        let cache = Cache {
            predictors,
            programs: programs(spec),
            done: needed.clone(),
        };
        Phase {
            spec: spec.clone(),
            jobs,
            done: needed.into_iter().collect(),
            cache: OnceLock::from(Ok(cache)),
        }
    }

    /// Reads a phase that [`Phase::to_json`] wrote.
    pub fn from_json(text: &str) -> Result<Phase, CampaignError> {
        serde_json::from_str(text)
            .map_err(|e| CampaignError::Phase(format!("not a campaign phase: {e}")))
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a phase serializes")
    }

    /// How many runs it has.
    pub fn len(&self) -> usize {
        self.jobs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.jobs.is_empty()
    }

    pub(crate) fn job(&self, i: usize) -> &Job {
        &self.jobs[i]
    }

    fn cache(&self) -> &Result<Cache, String> {
        self.cache.get_or_init(|| {
            Ok(Cache {
                predictors: predictors(&self.spec).map_err(|e| e.to_string())?,
                programs: programs(&self.spec),
                done: self.done.iter().cloned().collect(),
            })
        })
    }

    /// Runs run `i`.
    pub fn run(&self, i: usize) -> JobResult {
        let outcome = match self.cache() {
            Ok(c) => run_job(
                &self.spec,
                &c.programs,
                &c.predictors,
                &c.done,
                &self.jobs[i],
            )
            .map(|r| Outcome::from(&r))
            .map_err(JobError::from),
            Err(e) => Err(JobError {
                message: format!("{}: {e}", describe(&self.spec, &self.jobs[i])),
                cause: e.clone(),
            }),
        };
        JobResult { job: i, outcome }
    }

    /// Runs the runs in `range`, one after another (an engine that sends
    /// slices elsewhere runs each slice on one core).
    pub fn run_range(&self, range: Range<usize>) -> Result<Vec<JobResult>, CampaignError> {
        if range.end > self.len() || range.start > range.end {
            return Err(CampaignError::Phase(format!(
                "runs {}..{} asked of a phase of {} runs",
                range.start,
                range.end,
                self.len()
            )));
        }
        Ok(range.map(|i| self.run(i)).collect())
    }
}

/// Where a campaign's runs run.
pub trait Engine: Sync {
    /// Runs every run of `phase` and returns one result per run, in any
    /// order, calling `progress.inc()` as runs finish (unless it shows
    /// progress its own way).
    fn run_phase(
        &self,
        phase: &Phase,
        progress: &dyn Progress,
    ) -> Result<Vec<JobResult>, CampaignError>;
}

/// This machine's cores (rayon's pool).
pub struct Local;

impl Engine for Local {
    fn run_phase(
        &self,
        phase: &Phase,
        progress: &dyn Progress,
    ) -> Result<Vec<JobResult>, CampaignError> {
        Ok((0..phase.len())
            .into_par_iter()
            .map(|i| {
                let r = phase.run(i);
                progress.inc();
                r
            })
            .collect())
    }
}
