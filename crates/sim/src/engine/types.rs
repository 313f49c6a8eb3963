//! What a simulation run takes and gives: its knobs (`SimConfig`), its
//! results (`SimResult`: per program, `SimStats`) and its errors.

use crate::counters::CounterError;
use crate::pmu::CounterTotals;
use crate::predict::PredictorKind;
use crate::timeline::Timeline;
use colab_core::{BlockKind, Nanos};
use serde::Serialize;

/// Knobs of one simulation run.
#[derive(Clone, Debug)]
pub struct SimConfig {
    /// Seeds the start order of programs and all random choices.
    pub seed: u64,
    pub predictor: PredictorKind,
    /// Give up (with an error) if the workload has not finished by then.
    pub max_time_ns: Nanos,
    /// Record a timeline (Chrome trace events).
    pub timeline: bool,
    /// Restart every program when it finishes until each has completed this
    /// many times, then stop (runs still in progress are abandoned); a
    /// program's turnaround is then the mean of its completed runs. This is
    /// how camp-tocs12 (section 5) and propsp (section 4) run workloads, so
    /// the load stays constant ("restarted repeatedly until the longest
    /// application in the set completes three times"). `None`: each program
    /// runs once.
    pub restart_until: Option<u32>,
    /// Give up (with an error) after this many events: a run's budget, so
    /// that no input runs for hours unasked (1 to [`MAX_EVENTS_LIMIT`]).
    pub max_events: u64,
}

/// The default event budget of one run: 100 million events, about 3 to 20 s
/// of this machine's time and over 600x the longest run of any study today
/// (152,295 events: PropSP-1STH-1STM-1STL-1PSH on propsp-2fc-10sc under
/// CFS, measured 2026-11-24 from `colab reproduce propsp`'s runs.csv).
pub const DEFAULT_MAX_EVENTS: u64 = 100_000_000;

/// The largest event budget one may ask for (10^12 events: days of wall
/// time, so any larger number is a mistake).
pub const MAX_EVENTS_LIMIT: u64 = 1_000_000_000_000;

/// Operations a run may interpret per event of its budget: a loop of
/// zero-time operations happens in no event at all, so the budget counts
/// them too. Measured 2026-11-24 with a temporary counter: every run of
/// `colab reproduce`, `camp`, `propsp`, `scenarios` and the PARSEC trace
/// library interprets at most 4.9 operations per event (3x margin).
pub const STEPS_PER_EVENT: u64 = 16;

/// How often (in events) a long run reports its progress to the observer
/// of [`simulate_observed`](super::simulate_observed).
pub const PROGRESS_EVERY: u64 = 1 << 20;

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            seed: 1,
            predictor: PredictorKind::default(),
            max_time_ns: 3_600 * 1_000_000_000,
            timeline: false,
            restart_until: None,
            max_events: DEFAULT_MAX_EVENTS,
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct ProgramResult {
    pub name: String,
    pub n: u32,
    pub threads: u32,
    pub start_ns: Nanos,
    pub end_ns: Nanos,
    pub turnaround_ns: Nanos,
    /// Completed runs (more than 1 only with `SimConfig::restart_until`).
    pub completions: u32,
    /// CPU time of all its threads, over all its runs.
    pub cpu_ns: Nanos,
    /// The part of `cpu_ns` on cores of the machine's fastest type.
    pub fast_cpu_ns: Nanos,
    /// The compute its steps drew in this run (for the lower bound,
    /// colab-bound); not in the JSON output.
    #[serde(skip)]
    pub drawn: DrawnWork,
}

/// What a program's steps drew in one run, each at the best rate any core
/// of the machine has for it: the work no schedule of these draws could do
/// faster. Over all its runs with `restart_until`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct DrawnWork {
    /// ns at the best rate, by the step's memory fraction (its bits).
    pub by_mem_frac: std::collections::BTreeMap<u64, f64>,
    /// The longest chain of drawn steps and sleeps, ns: a thread's own
    /// (outside loops that share a queue's items: which thread takes an item
    /// is the schedule's doing), from its creator's at its spawn, and
    /// through joins and barrier episodes (each ends with its last arrival).
    pub longest_path_ns: f64,
    /// The most drawn work inside one mutex's critical sections, ns (they
    /// never overlap).
    pub longest_held_ns: f64,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct SimStats {
    /// Timed events processed: compute-segment ends, sleep timers, ticks,
    /// policy periods, program starts.
    pub events: u64,
    /// Threads made runnable (creation and wake-up), each a placement decision.
    pub placements: u64,
    /// Threads put on a core.
    pub dispatches: u64,
    /// Threads that blocked or exited.
    pub blocks: u64,
    /// Scheduling decisions made (dispatches, wake-up placements, preemption checks).
    pub decisions: u64,
    pub context_switches: u64,
    pub migrations: u64,
    pub cross_cluster_migrations: u64,
    pub preemptions: u64,
    pub futex_waits: u64,
    pub futex_wakes: u64,
    pub ticks: u64,
    /// Fast-core time left idle while slower cores ran threads, core-ns:
    /// the integral of min(idle fastest cores, busy other cores) over the
    /// run (0 on a machine of one core type; see `idle_meter`).
    pub fast_idle_slow_busy_ns: u64,
    /// Blocks by what the thread waited for (a model's synchronisation,
    /// to set beside a recording's, `colab trace-stats`).
    pub waits: WaitsByKind,
}

/// Blocks per kind of wait.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct WaitsByKind {
    pub mutex: u64,
    pub barrier: u64,
    pub condvar: u64,
    /// Full or empty bounded queues.
    pub queue: u64,
    pub join: u64,
    pub sleep: u64,
    /// Replayed waits of a trace.
    pub event: u64,
}

impl WaitsByKind {
    pub(super) fn count(&mut self, kind: BlockKind) {
        let n = match kind {
            BlockKind::Mutex => &mut self.mutex,
            BlockKind::Barrier => &mut self.barrier,
            BlockKind::CondVar => &mut self.condvar,
            BlockKind::QueueFull | BlockKind::QueueEmpty => &mut self.queue,
            BlockKind::Join => &mut self.join,
            BlockKind::Sleep => &mut self.sleep,
            BlockKind::Event => &mut self.event,
        };
        *n += 1;
    }
}

impl SimStats {
    /// Scheduling events: every state change a conventional discrete-event
    /// simulator would queue as its own event (timed events, wake-ups and
    /// creations, dispatches, blocks and exits, preemptions). The engine
    /// handles the untimed ones synchronously instead of through its queue.
    pub fn scheduling_events(&self) -> u64 {
        self.events + self.placements + self.dispatches + self.blocks + self.preemptions
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct SimResult {
    pub programs: Vec<ProgramResult>,
    pub makespan_ns: Nanos,
    pub energy_j: f64,
    pub core_busy_ns: Vec<Nanos>,
    pub stats: SimStats,
    /// Whole-run PMU counts per core type (counter mode only; empty and not
    /// serialized otherwise, so other modes' output is unchanged).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub counters: Vec<CounterTotals>,
    #[serde(skip)]
    pub timeline: Option<Timeline>,
}

#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error("deadlock at t = {at_ns} ns: no thread can run.\n{report}")]
    Deadlock { at_ns: Nanos, report: String },
    #[error(
        "workload did not finish within {limit_ns} ns of simulated time (the run's time limit, \
         which --time-limit sets: either the run needs longer, or a thread starved or a wake-up \
         was lost); threads still live:\n{report}"
    )]
    Timeout { limit_ns: Nanos, report: String },
    #[error(
        "stopped after {events} events (the run's budget) at t = {at_ns} ns of simulated time, \
         with {live} of {programs} programs still running; raise the budget (--max-events) \
         if this run is meant to be that long"
    )]
    Budget {
        events: u64,
        at_ns: Nanos,
        live: u32,
        programs: usize,
    },
    #[error(
        "program '{program}', thread {thread}: {steps} operations interpreted in {events} events \
         (the run's budget allows {per_event} per event of --max-events) at t = {at_ns} ns: \
         a loop whose operations take no simulated time?"
    )]
    StepBudget {
        program: String,
        thread: u32,
        steps: u64,
        events: u64,
        per_event: u64,
        at_ns: Nanos,
    },
    #[error("program '{program}', thread {thread}: {problem}")]
    Workload {
        program: String,
        thread: u32,
        problem: String,
    },
    #[error("policy '{policy}' made an invalid decision at t = {at_ns} ns: {problem}")]
    Policy {
        policy: String,
        at_ns: Nanos,
        problem: String,
    },
    #[error("invariant violated at t = {at_ns} ns: {problem}")]
    Invariant { at_ns: Nanos, problem: String },
    #[error("workload has no programs")]
    Empty,
    #[error("machine: {0}")]
    Machine(#[from] colab_core::TopologyError),
    #[error("{0}")]
    Config(String),
    #[error("counter model: {0}")]
    Counters(#[from] CounterError),
}

/// The most completed runs `SimConfig::restart_until` may ask for (the
/// papers use 3; more only multiplies a run's cost, and a billion took hours).
pub const MAX_RESTART_UNTIL: u32 = 100;
