//! The event loop.
//!
//! Events: a core's current thread reaches the end of a compute segment (or
//! its context-switch overhead), a sleeping thread's timer fires, the global
//! tick, and the policy's periodic hook. Everything else (lock hand-offs,
//! wake-ups, preemptions) happens synchronously inside those events, with
//! wake-ups deferred to the end of the current step like the kernel's wake_q.
//!
//! A run's set-up is in `setup.rs`, the program interpreter in
//! `interpret.rs`, its result and the deadlock report in `finish.rs`.

mod finish;
mod interpret;
mod setup;
mod types;

pub use types::{
    DrawnWork, ProgramResult, SimConfig, SimError, SimResult, SimStats, DEFAULT_MAX_EVENTS,
    MAX_EVENTS_LIMIT, MAX_RESTART_UNTIL, PROGRESS_EVERY, STEPS_PER_EVENT,
};

use crate::idle_meter::FastIdleMeter;
use crate::pmu::Pmu;
use crate::predict::SimRng;
use crate::predict::{PhaseObservation, Predictor, PredictorKind};
use crate::slots::MinSlots;
use crate::sync::{BarrierState, CondState, EventState, MutexState, QueueState, WaitObj};
use crate::timeline::Timeline;
use colab_core::{
    Action, BlockKind, CoreId, Nanos, Pick, Policy, RunState, SchedState, StopReason, ThreadId,
    Topology, WakeKind,
};
use colab_workload::control::Loops;
use colab_workload::Workload;
use dary_heap::QuaternaryHeap;
use rand::seq::SliceRandom;
use std::cmp::Reverse;

const NEVER: Nanos = Nanos::MAX;

/// Live threads listed in a deadlock or time-limit report (assumption:
/// enough to see the pattern, few enough to read).
const REPORT_THREADS: usize = 32;

#[derive(Clone, Copy, Debug)]
struct Phase {
    speedup: f64,
    /// Energy per work unit on the fastest over the slowest core type.
    energy_ratio: f64,
    mem_frac: f64,
    ns_fast: f64,
    ns_slow: f64,
    /// Time per work unit on the core type fastest for this phase (which
    /// need not be the fastest by compute rate): what no core beats.
    ns_best: f64,
    /// Energy per work unit on the fastest / slowest core type.
    e_fast: f64,
    e_slow: f64,
}

/// A phase on one core.
#[derive(Clone, Copy, Debug)]
struct CoreRate {
    /// Work units per ns.
    rate: f64,
    /// ns per work unit.
    ns_per_work: f64,
    /// Fraction of the running time stalled on memory (drawn at stall power).
    stall_share: f64,
}

/// What a thread's performance counters saw since they were last read:
/// enough to know the true speedup of the work it actually did.
#[derive(Clone, Copy, Debug, Default)]
struct Counters {
    work: f64,
    fast_ns: f64,
    slow_ns: f64,
    fast_e: f64,
    slow_e: f64,
    mem: f64,
}

/// Simulates `workload` on `topo` under `policy`.
pub fn simulate(
    workload: &Workload,
    topo: &Topology,
    policy: &mut dyn Policy,
    cfg: &SimConfig,
) -> Result<SimResult, SimError> {
    simulate_observed(workload, topo, policy, cfg, &mut |_| {})
}

/// How far a run has got, reported every [`PROGRESS_EVERY`] events.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    pub events: u64,
    /// Simulated time so far.
    pub now_ns: Nanos,
    /// The run's event budget ([`SimConfig::max_events`]).
    pub max_events: u64,
}

/// [`simulate`], telling `observe` how far it has got every
/// [`PROGRESS_EVERY`] events (for progress bars on long runs).
pub fn simulate_observed(
    workload: &Workload,
    topo: &Topology,
    policy: &mut dyn Policy,
    cfg: &SimConfig,
    observe: &mut dyn FnMut(Progress),
) -> Result<SimResult, SimError> {
    if workload.programs.is_empty() {
        return Err(SimError::Empty);
    }
    // Costs are public fields: checked again here, since a zero tick would
    // never let a run end.
    topo.costs.check()?;
    if let Some(k) = cfg
        .restart_until
        .filter(|k| !(1..=MAX_RESTART_UNTIL).contains(k))
    {
        return Err(SimError::Config(format!(
            "restart_until = {k}: must be between 1 and {MAX_RESTART_UNTIL}"
        )));
    }
    if !(1..=MAX_EVENTS_LIMIT).contains(&cfg.max_events) {
        return Err(SimError::Config(format!(
            "max_events = {}: must be between 1 and {MAX_EVENTS_LIMIT}",
            cfg.max_events
        )));
    }
    let pmu = match &cfg.predictor {
        PredictorKind::Counters(p) => Some(Box::new(Pmu::new(p.0.clone(), topo, cfg.seed)?)),
        _ => None,
    };
    let mut sim = Sim::new(workload, topo, policy, cfg, pmu);
    sim.run(observe)?;
    sim.finish()
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum EvKind {
    /// A timed sleep ends.
    Wake {
        thread: u32,
    },
    Tick,
    Periodic,
    /// An idle core's policy asked to pick again now (`Pick::IdleUntil`).
    Recheck {
        core: u16,
    },
    ProgramStart {
        prog: u16,
    },
}

/// Per-thread interpreter state (not visible to policies).
#[derive(Clone, Debug)]
struct ThreadRt {
    prog: u16,
    group: u32,
    index: u32,
    pc: u32,
    loops: Loops,
    in_compute: bool,
    remaining: f64,
    /// Current phase (index into the phase table).
    phase: u32,
    /// Counter readings since the last prediction.
    counters: Counters,
    /// Mutexes held: (array, global mutex index).
    held: Vec<(u32, u32)>,
    /// Mutex chosen by a pending lock attempt (kept across retries).
    lock_target: Option<u32>,
    /// After a condition wait: the mutex to re-acquire before going on.
    relock: Option<(u32, u32)>,
    block_start: Nanos,
    waiting: WaitObj,
    /// When the current compute segment started making progress on its core.
    progress_start: Nanos,
    /// Whether the thread has ever run (no migration cost for the first run).
    has_run: bool,
    /// When it was created, and each timer's last firing (`Op::Timer`;
    /// None until its first use, which counts from `created`).
    created: Nanos,
    timers: Vec<Option<Nanos>>,
    /// The least time after its program's start at which any schedule of
    /// this run's draws could bring it where it is, ns: its drawn compute
    /// at the best rate and its sleeps, but for steps of loops that share a
    /// queue's items (which thread takes an item is the schedule's doing),
    /// from its creator's at its spawn, through joins and barrier episodes
    /// (the lower bound reads it).
    path_ns: f64,
    /// Its drawn compute since it last left a barrier or started, and its
    /// `path_ns` then.
    since_barrier_ns: f64,
    since_barrier_from: f64,
}

#[derive(Clone, Debug, Default)]
struct CoreRt {
    busy_ns: Nanos,
    /// Running time spent stalled on memory (a fraction of `busy_ns`).
    stall_ns: f64,
    /// Slice end for the current thread.
    slice_end: Nanos,
    /// Last thread that ran here (no switch cost to re-pick it).
    last: Option<ThreadId>,
    /// The core went idle (and must wake up to run the next thread).
    idle: bool,
    /// Since when it has been idle (while `idle`).
    idle_since: Nanos,
    resched: bool,
    /// When a pending `Pick::IdleUntil` asks this core to pick again (a
    /// time not after now, or NEVER: none pending). A superseded event finds
    /// a different time here and does nothing.
    recheck_at: Nanos,
}

struct ProgRt {
    mutex_base: u32,
    barrier_base: u32,
    cond_base: u32,
    queue_base: u32,
    event_base: u32,
    /// Live threads per group (for join).
    live: Vec<u32>,
    /// Threads blocked in join, per group.
    joiners: Vec<Vec<ThreadId>>,
    live_total: u32,
    start: Nanos,
    end: Option<Nanos>,
    /// When the program first started (its runs restart with `restart_until`).
    first_start: Nanos,
    /// Turnarounds of its completed runs.
    completed: Vec<Nanos>,
    /// CPU time of its threads, and the part on the fastest cores.
    cpu_ns: Nanos,
    fast_cpu_ns: Nanos,
    /// Compute its threads drew, at the best rate, by phase (a vector: it
    /// grows on a hot path); the longest of its threads' `path_ns`; the
    /// most drawn work inside one mutex's critical sections; per group,
    /// the longest `path_ns` of its exited threads (a join's).
    drawn_by_phase: Vec<f64>,
    longest_path_ns: f64,
    longest_held_ns: f64,
    exit_path_ns: Vec<f64>,
}

enum Step {
    /// Keeps running (a compute segment is scheduled).
    Continue,
    Blocked(BlockKind),
    Exited,
}

struct Sim<'a> {
    w: &'a Workload,
    policy: &'a mut dyn Policy,
    cfg: &'a SimConfig,
    st: SchedState,
    rt: Vec<ThreadRt>,
    cores: Vec<CoreRt>,
    progs: Vec<ProgRt>,
    /// Threads spawned so far per (program, group): gives each new thread its index.
    spawned: Vec<Vec<u32>>,
    mutexes: Vec<MutexState>,
    barriers: Vec<BarrierState>,
    conds: Vec<CondState>,
    queues: Vec<QueueState>,
    events_state: Vec<EventState>,
    /// The event queue, earliest first. Four children per node: with
    /// thousands of sleepers queued a pop sifts through half the levels of
    /// a binary heap, over children side by side in memory (dary_heap).
    heap: QuaternaryHeap<Reverse<(Nanos, u64, EvKind)>>,
    /// Next decision point of each core's current thread (NEVER when idle).
    core_next: MinSlots,
    unstarted: u32,
    /// First invariant violation seen inside a step (reported after it).
    violation: Option<String>,
    seq: u64,
    rng: SimRng,
    /// The energy predictor's own stream (see [`Predictor`]).
    energy_rng: SimRng,
    /// The truth-based predictor (never asked in counter mode, where it is
    /// a placeholder: keeping it unconditional saves a branch per reading).
    predictor: Box<dyn Predictor>,
    /// The simulated PMU (counter mode only).
    pmu: Option<Box<Pmu>>,
    /// Deferred wake-ups: (thread, waker).
    wake_q: Vec<(ThreadId, WakeKind)>,
    /// Operations interpreted so far, and the most the budget allows
    /// ([`STEPS_PER_EVENT`] per event): a loop of zero-time operations runs
    /// without any event happening.
    steps: u64,
    max_steps: u64,
    resched_q: Vec<CoreId>,
    actions: Vec<Action>,
    /// The policy makes requests outside tick and periodic (sched_ext kicks).
    async_actions: bool,
    async_acts: Vec<Action>,
    stats: SimStats,
    fast_idle: FastIdleMeter,
    live_programs: u32,
    /// With `restart_until`: every program has completed enough runs.
    restart_done: bool,
    /// Threads runnable or running (for deadlock detection).
    active: u32,
    /// Threads in timed sleeps.
    sleepers: u32,
    queued_total: u32,
    timeline: Option<Timeline>,
    /// Per (program, group, op): phase index of compute ops.
    op_phase: Vec<Vec<Vec<u32>>>,
    /// Per (program, group, op): inside a loop that runs until its queue
    /// closes, whose items go to whichever thread pops them first (so a
    /// thread's share of them is the schedule's doing, not its own).
    op_shared: Vec<Vec<Vec<bool>>>,
    /// Per phase: true speedup, memory fraction, and ns per work unit on the
    /// fastest and on the slowest core type.
    phases: Vec<Phase>,
    /// Per (phase, core): its rate there.
    phase_rate: Vec<CoreRate>,
    ncores: usize,
}

impl<'a> Sim<'a> {
    fn push(&mut self, t: Nanos, kind: EvKind) {
        self.seq += 1;
        self.heap.push(Reverse((t, self.seq, kind)));
    }

    fn run(&mut self, observe: &mut dyn FnMut(Progress)) -> Result<(), SimError> {
        // Start order: a seeded shuffle (the papers randomize the order in
        // which benchmarks start, colab-cgo20-evaluation "Workloads").
        let mut order: Vec<u16> = (0..self.w.programs.len() as u16).collect();
        order.shuffle(&mut self.rng);
        for p in order {
            self.push(0, EvKind::ProgramStart { prog: p });
        }
        self.push(self.st.topo.costs.tick_ns, EvKind::Tick);
        if let Some(p) = self.policy.period_ns() {
            self.push(p.max(1), EvKind::Periodic);
        }
        loop {
            // Core completions live in `core_next` (one slot per core, no stale
            // events); everything else in the heap. Ties: cores first, by index.
            let (ci, ct) = self.core_next.min();
            let ht = self.heap.peek().map_or(NEVER, |e| e.0 .0);
            let (t, ev) = if ct <= ht && ct != NEVER {
                self.core_next.set(ci, NEVER);
                (ct, None)
            } else if let Some(Reverse((t, _, ev))) = self.heap.pop() {
                (t, Some(ev))
            } else {
                break;
            };
            if self.live_programs == 0 {
                break;
            }
            if t > self.cfg.max_time_ns {
                return Err(SimError::Timeout {
                    limit_ns: self.cfg.max_time_ns,
                    report: self.deadlock_report(),
                });
            }
            debug_assert!(t >= self.st.now);
            self.st.now = t;
            if self.stats.events >= self.cfg.max_events {
                return Err(SimError::Budget {
                    events: self.stats.events,
                    at_ns: t,
                    live: self.live_programs,
                    programs: self.progs.len(),
                });
            }
            self.stats.events += 1;
            if self.stats.events.is_multiple_of(PROGRESS_EVERY) {
                observe(Progress {
                    events: self.stats.events,
                    now_ns: t,
                    max_events: self.cfg.max_events,
                });
            }
            match ev {
                None => self.core_done(CoreId(ci as u16))?,
                Some(EvKind::Wake { thread }) => {
                    let t = ThreadId(thread);
                    self.sleepers -= 1;
                    self.wake(t, None);
                }
                Some(EvKind::Tick) => {
                    self.tick()?;
                    if self.live_programs > 0 {
                        self.push(t + self.st.topo.costs.tick_ns, EvKind::Tick);
                    }
                }
                Some(EvKind::Periodic) => {
                    self.actions.clear();
                    let mut acts = std::mem::take(&mut self.actions);
                    self.policy.periodic(&self.st, &mut acts);
                    self.apply_actions(&mut acts)?;
                    self.actions = acts;
                    if let Some(p) = self.policy.period_ns() {
                        if self.live_programs > 0 {
                            self.push(t + p.max(1), EvKind::Periodic);
                        }
                    }
                }
                Some(EvKind::Recheck { core }) => {
                    let c = CoreId(core);
                    if self.cores[c.idx()].recheck_at == t {
                        self.cores[c.idx()].recheck_at = NEVER;
                        if self.st.cores[c.idx()].current.is_none() {
                            self.mark_resched(c);
                        }
                    }
                }
                Some(EvKind::ProgramStart { prog }) => self.start_program(prog as usize),
            }
            self.settle()?;
            if self.async_actions {
                if let Some(problem) = self.policy.failure() {
                    return Err(self.perr(problem));
                }
            }
            if self.restart_done {
                break;
            }
            if let Some(problem) = self.violation.take() {
                return Err(SimError::Invariant {
                    at_ns: self.st.now,
                    problem,
                });
            }
            if self.live_programs > 0
                && self.active == 0
                && self.sleepers == 0
                && self.unstarted == 0
            {
                return Err(SimError::Deadlock {
                    at_ns: self.st.now,
                    report: self.deadlock_report(),
                });
            }
        }
        Ok(())
    }

    /// Prediction for a thread that has no counter readings yet: as if its
    /// counters had been read in `phase`.
    fn predict(&mut self, phase: u32) -> (f64, f64) {
        if let Some(p) = self.pmu.as_deref_mut() {
            // No prediction at all: assume no speedup and equal energy.
            return p
                .predict_phase(phase, self.st.topo.fastest_type)
                .unwrap_or((1.0, 1.0));
        }
        let ph = self.phases[phase as usize];
        let obs = PhaseObservation {
            true_speedup: ph.speedup,
            true_energy_ratio: ph.energy_ratio,
            mem_frac: ph.mem_frac,
        };
        self.observe(obs)
    }

    /// Both predictions from one counter reading, each from its own stream.
    fn observe(&mut self, obs: PhaseObservation) -> (f64, f64) {
        debug_assert!(self.pmu.is_none(), "counter mode never sees the truth");
        let s = self.predictor.speedup(obs, &mut self.rng);
        let e = self.predictor.energy_ratio(obs, &mut self.energy_rng);
        (s, e)
    }

    /// How `phase` runs on core `c`.
    #[inline]
    fn rate(&self, c: CoreId, phase: u32) -> CoreRate {
        self.phase_rate[phase as usize * self.ncores + c.idx()]
    }

    fn werr(&self, t: ThreadId, problem: impl Into<String>) -> SimError {
        let r = &self.rt[t.idx()];
        SimError::Workload {
            program: self.w.programs[r.prog as usize].name.clone(),
            thread: t.0,
            problem: problem.into(),
        }
    }

    /// The current thread of `c` finished its compute segment (or its switch overhead).
    fn core_done(&mut self, c: CoreId) -> Result<(), SimError> {
        let t = self.st.cores[c.idx()]
            .current
            .ok_or_else(|| SimError::Invariant {
                at_ns: self.st.now,
                problem: format!("core {c} has a completion event but no thread"),
            })?;
        let now = self.st.now;
        let r = &mut self.rt[t.idx()];
        if r.in_compute {
            let done = r.remaining;
            r.remaining = 0.0;
            r.in_compute = false;
            r.pc += 1;
            let dt = now.saturating_sub(r.progress_start) as f64;
            self.retire(c, t, done, dt);
        }
        match self.interpret(t, c)? {
            Step::Continue => {}
            Step::Blocked(kind) => {
                self.stats.futex_waits += u64::from(kind != BlockKind::Sleep);
                self.stats.waits.count(kind);
                if let Some(tl) = &mut self.timeline {
                    tl.wait(self.st.now, t, kind);
                }
                // Policies see the new state in `stopped`.
                self.st.set_state(t, RunState::Blocked(kind));
                self.rt[t.idx()].block_start = self.st.now;
                self.stop_current(c, StopReason::Blocked);
                self.active -= 1;
                self.mark_resched(c);
            }
            Step::Exited => {
                self.stop_current(c, StopReason::Exited);
                self.exit_thread(t);
                self.mark_resched(c);
            }
        }
        Ok(())
    }

    /// Wake a blocked thread; futex waits are charged to the waker.
    fn wake(&mut self, t: ThreadId, waker: Option<ThreadId>) {
        self.wake_as(t, waker, false);
    }

    /// Wake `t` as one of all the waiters `waker` lets go at once (a
    /// barrier, a broadcast, a closed queue).
    fn wake_all_of(&mut self, t: ThreadId, waker: ThreadId) {
        self.wake_as(t, Some(waker), true);
    }

    fn wake_as(&mut self, t: ThreadId, waker: Option<ThreadId>, broadcast: bool) {
        let now = self.st.now;
        // Only a blocked thread can be woken: anything else means a waiter
        // list and a thread's state disagree (a lost or doubled wake-up).
        if !matches!(self.st.threads[t.idx()].state, RunState::Blocked(_))
            && self.violation.is_none()
        {
            self.violation = Some(format!(
                "thread {t} woken while {:?}",
                self.st.threads[t.idx()].state
            ));
        }
        let r = &mut self.rt[t.idx()];
        let waited = now - r.block_start;
        let was_futex = r.waiting != WaitObj::Sleep;
        let was_mutex = matches!(r.waiting, WaitObj::Mutex(_));
        r.waiting = WaitObj::None;
        if was_futex {
            self.stats.futex_wakes += 1;
            let th = &mut self.st.threads[t.idx()];
            th.futex_wait_ns += waited;
            if was_mutex {
                th.mutex_wait_ns += waited;
            }
            if let Some(x) = waker {
                let w = &mut self.st.threads[x.idx()];
                w.blocked_others_ns += waited;
                if was_mutex {
                    w.mutex_blocked_others_ns += waited;
                }
            }
            if let Some(tl) = &mut self.timeline {
                tl.wake(now, t, waker, waited);
            }
        }
        self.wake_q.push((t, WakeKind::Wakeup { waker, broadcast }));
    }

    fn exit_thread(&mut self, t: ThreadId) {
        let r = &self.rt[t.idx()];
        let (prog, group) = (r.prog as usize, r.group as usize);
        // Caught statically (check_lock_balance); kept as a guard in tests.
        debug_assert!(r.held.is_empty(), "thread exits holding a mutex");
        self.st.set_state(t, RunState::Exited);
        self.st.threads[t.idx()].core = None;
        self.active -= 1;
        let path = r.path_ns;
        let p = &mut self.progs[prog];
        p.live[group] -= 1;
        p.live_total -= 1;
        p.exit_path_ns[group] = p.exit_path_ns[group].max(path);
        if p.live[group] == 0 {
            let js = std::mem::take(&mut p.joiners[group]);
            let exited = p.exit_path_ns[group];
            for j in js {
                let jr = &mut self.rt[j.idx()];
                jr.path_ns = jr.path_ns.max(exited);
                self.wake(j, Some(t));
            }
        }
        let now = self.st.now;
        let p = &mut self.progs[prog];
        if p.live_total == 0 {
            p.end = Some(now);
            let Some(k) = self.cfg.restart_until else {
                self.live_programs -= 1;
                return;
            };
            p.completed.push(now - p.start);
            if self
                .progs
                .iter()
                .all(|q| q.completed.len() >= k.max(1) as usize)
            {
                self.restart_done = true;
            } else {
                self.restart_program(prog);
            }
        }
    }

    // ----- scheduling mechanics -------------------------------------------

    fn mark_resched(&mut self, c: CoreId) {
        if !self.cores[c.idx()].resched {
            self.cores[c.idx()].resched = true;
            self.resched_q.push(c);
        }
    }

    /// Processes deferred wake-ups and reschedules until quiescent.
    fn settle(&mut self) -> Result<(), SimError> {
        loop {
            if self.async_actions {
                // A sched_ext kick acts when issued: before anything else.
                let mut acts = std::mem::take(&mut self.async_acts);
                self.policy.take_actions(&self.st, &mut acts);
                if !acts.is_empty() {
                    self.apply_actions(&mut acts)?;
                    self.async_acts = acts;
                    continue;
                }
                self.async_acts = acts;
            }
            if !self.wake_q.is_empty() {
                let wq = std::mem::take(&mut self.wake_q);
                for &(t, kind) in &wq {
                    self.place(t, kind)?;
                }
                let mut wq = wq;
                wq.clear();
                if self.wake_q.is_empty() {
                    self.wake_q = wq;
                }
                continue;
            }
            if let Some(c) = self.resched_q.pop() {
                self.cores[c.idx()].resched = false;
                self.schedule(c)?;
                continue;
            }
            return Ok(());
        }
    }

    /// A thread became runnable: ask the policy for a core and enqueue it.
    fn place(&mut self, t: ThreadId, kind: WakeKind) -> Result<(), SimError> {
        self.stats.decisions += 1;
        self.stats.placements += 1;
        let c = self.policy.select_core(&self.st, t, kind);
        if c.idx() >= self.st.cores.len() {
            return Err(self.perr(format!(
                "select_core returned core {c}, machine has {}",
                self.st.cores.len()
            )));
        }
        self.st.set_state(t, RunState::Runnable);
        self.st.threads[t.idx()].runnable_since = self.st.now;
        self.active += 1;
        self.enqueue(c, t, true);
        self.after_enqueue(c, t);
        Ok(())
    }

    fn enqueue(&mut self, c: CoreId, t: ThreadId, wakeup: bool) {
        self.st.rq_push(c, t);
        self.st.threads[t.idx()].core = Some(c);
        self.queued_total += 1;
        self.policy.enqueued(&self.st, c, t, wakeup);
    }

    /// After `t` lands on `c`'s queue: run it if `c` is idle, else check
    /// wake-up preemption.
    fn after_enqueue(&mut self, c: CoreId, t: ThreadId) {
        if self.st.cores[c.idx()].current.is_none() {
            self.mark_resched(c);
        } else {
            self.stats.decisions += 1;
            if self.policy.should_preempt(&self.st, c, t) {
                self.stats.preemptions += 1;
                self.preempt(c);
            }
        }
    }

    fn preempt(&mut self, c: CoreId) {
        if let Some(cur) = self.st.cores[c.idx()].current {
            self.stop_current(c, StopReason::Preempted);
            // Runnable from now, set before it is queued: the queue is kept
            // in runnable_since order (`SchedState::longest_waiting`).
            self.st.threads[cur.idx()].runnable_since = self.st.now;
            self.enqueue(c, cur, false);
            self.st.set_state(cur, RunState::Runnable);
        }
        self.mark_resched(c);
    }

    fn dequeue(&mut self, c: CoreId, t: ThreadId) -> bool {
        let removed = self.st.rq_remove(c, t);
        if removed {
            self.queued_total -= 1;
        }
        removed
    }

    fn perr(&self, problem: String) -> SimError {
        SimError::Policy {
            policy: self.policy.name().to_string(),
            at_ns: self.st.now,
            problem,
        }
    }

    /// Core `c` has nothing to run (it may already be idle).
    fn go_idle(&mut self, c: CoreId) {
        let core = &mut self.cores[c.idx()];
        if !core.idle {
            core.idle = true;
            core.idle_since = self.st.now;
        }
    }

    /// Core `c` needs a decision: keep its current thread, or pick another.
    fn schedule(&mut self, c: CoreId) -> Result<(), SimError> {
        if self.st.cores[c.idx()].current.is_some() {
            return Ok(());
        }
        self.stats.decisions += 1;
        let pick = self.policy.pick_next(&self.st, c);
        let t = match pick {
            Pick::Idle => {
                self.go_idle(c);
                return Ok(());
            }
            Pick::IdleUntil(at) => {
                let now = self.st.now;
                let at = at.max(now.saturating_add(1));
                self.go_idle(c);
                let core = &mut self.cores[c.idx()];
                // One pending recheck per core, the earliest: a later one
                // would be asked for again when the earlier one re-picks.
                if core.recheck_at <= now || at < core.recheck_at {
                    core.recheck_at = at;
                    self.push(at, EvKind::Recheck { core: c.0 });
                }
                return Ok(());
            }
            Pick::Local(t) => {
                if !self.dequeue(c, t) {
                    return Err(self.perr(format!(
                        "pick_next on core {c} chose thread {t}, which is not on its run queue"
                    )));
                }
                t
            }
            Pick::Steal { from, thread } => {
                if from.idx() >= self.st.cores.len() || !self.dequeue(from, thread) {
                    return Err(self.perr(format!("core {c} tried to steal thread {thread} from core {from}, where it is not queued")));
                }
                self.policy.migrated(&self.st, thread, from, c);
                thread
            }
            Pick::PreemptRemote { from, thread } => {
                if from == c
                    || from.idx() >= self.st.cores.len()
                    || self.st.cores[from.idx()].current != Some(thread)
                {
                    return Err(self.perr(format!("core {c} tried to preempt thread {thread} on core {from}, which is not running it")));
                }
                self.stats.preemptions += 1;
                self.stop_current(from, StopReason::Preempted);
                self.st.set_state(thread, RunState::Runnable);
                self.policy.migrated(&self.st, thread, from, c);
                self.mark_resched(from);
                thread
            }
        };
        self.dispatch(c, t)
    }

    fn dispatch(&mut self, c: CoreId, t: ThreadId) -> Result<(), SimError> {
        let now = self.st.now;
        let th = &self.st.threads[t.idx()];
        // A thread runs on at most one core, and only when runnable.
        if th.state != RunState::Runnable {
            return Err(SimError::Invariant {
                at_ns: now,
                problem: format!("thread {t} dispatched on core {c} while {:?}", th.state),
            });
        }
        self.stats.dispatches += 1;
        let costs = &self.st.topo.costs;
        let mut overhead = 0;
        if self.cores[c.idx()].last != Some(t) {
            overhead += costs.context_switch_ns;
            self.stats.context_switches += 1;
        }
        let core = &mut self.cores[c.idx()];
        if std::mem::take(&mut core.idle) {
            overhead += costs.wakeup_ns(now - core.idle_since);
        }
        let r = &self.rt[t.idx()];
        if let Some(last) = th.last_core {
            if last != c && r.has_run {
                self.stats.migrations += 1;
                if self.st.topo.same_cluster(last, c) {
                    overhead += costs.migration_local_ns;
                } else {
                    overhead += costs.migration_cross_ns;
                    self.stats.cross_cluster_migrations += 1;
                }
                if let Some(tl) = &mut self.timeline {
                    tl.migrate(now, t, last, c);
                }
            }
        }
        self.st.set_current(c, Some(t));
        self.fast_idle.change(now, self.st.topo.is_big(c), true);
        self.st.cores[c.idx()].run_start = now;
        self.st.set_state(t, RunState::Running);
        let th = &mut self.st.threads[t.idx()];
        th.core = Some(c);
        th.last_core = Some(c);
        let r = &mut self.rt[t.idx()];
        r.has_run = true;
        r.progress_start = now + overhead;
        self.cores[c.idx()].last = Some(t);
        self.policy.running(&self.st, c, t);
        let slice = self.policy.slice_ns(&self.st, c, t);
        self.cores[c.idx()].slice_end = now + overhead + slice;
        self.schedule_done(c, t);
        Ok(())
    }

    /// Schedules the next decision point of `t` on `c`.
    fn schedule_done(&mut self, c: CoreId, t: ThreadId) {
        let r = &self.rt[t.idx()];
        let at = if r.in_compute {
            let x = r.remaining * self.rate(c, r.phase).ns_per_work;
            // ceil without a libm call
            // x is far below 2^63: the signed conversion is one instruction.
            let whole = x as i64 as Nanos;
            r.progress_start + whole + Nanos::from((whole as f64) < x)
        } else {
            r.progress_start
        };
        self.core_next.set(c.idx(), at.max(self.st.now));
    }

    /// Takes the current thread off `c`, accounting its progress.
    fn stop_current(&mut self, c: CoreId, why: StopReason) {
        self.stats.blocks += u64::from(why != StopReason::Preempted);
        let now = self.st.now;
        let Some(t) = self.st.cores[c.idx()].current else {
            return;
        };
        self.st.set_current(c, None);
        let fast = self.st.topo.is_big(c);
        self.fast_idle.change(now, fast, false);
        let ran = now - self.st.cores[c.idx()].run_start;
        self.account_progress(c, t);
        self.read_counters(t);
        self.core_next.set(c.idx(), NEVER);
        self.cores[c.idx()].busy_ns += ran;
        let prog = &mut self.progs[self.st.threads[t.idx()].program.idx()];
        prog.cpu_ns += ran;
        if fast {
            prog.fast_cpu_ns += ran;
        }
        let th = &mut self.st.threads[t.idx()];
        th.sum_exec_ns += ran;
        if why != StopReason::Preempted {
            th.core = None;
        }
        if let Some(tl) = &mut self.timeline {
            tl.slice(c, t, self.st.cores[c.idx()].run_start, now);
        }
        self.policy.stopped(&self.st, c, t, ran, why);
    }

    /// Retires the compute progress `t` made on `c` since `progress_start`.
    fn account_progress(&mut self, c: CoreId, t: ThreadId) {
        let now = self.st.now;
        let r = &mut self.rt[t.idx()];
        if r.in_compute && now > r.progress_start {
            let cr = self.phase_rate[r.phase as usize * self.ncores + c.idx()];
            let dt = (now - r.progress_start) as f64;
            let done = (dt * cr.rate).min(r.remaining);
            r.remaining -= done;
            r.progress_start = now;
            self.retire(c, t, done, dt);
        } else if r.progress_start < now {
            r.progress_start = now;
        }
    }

    /// `done` work units retired on `c` in `dt` ns: the core's stall time
    /// (for energy), the retired-work counter and the counters the speedup
    /// model reads.
    #[inline]
    fn retire(&mut self, c: CoreId, t: ThreadId, done: f64, dt: f64) {
        let phase = self.rt[t.idx()].phase as usize;
        self.cores[c.idx()].stall_ns +=
            dt * self.phase_rate[phase * self.ncores + c.idx()].stall_share;
        if let Some(p) = self.pmu.as_deref_mut() {
            let ty = self.st.topo.core_type_of[c.idx()];
            p.add(t.idx(), ty, self.rt[t.idx()].phase, done, dt);
            self.st.threads[t.idx()].retired += done;
            return;
        }
        let r = &mut self.rt[t.idx()];
        let ph = self.phases[r.phase as usize];
        let k = &mut r.counters;
        k.work += done;
        k.fast_ns += done * ph.ns_fast;
        k.slow_ns += done * ph.ns_slow;
        k.fast_e += done * ph.e_fast;
        k.slow_e += done * ph.e_slow;
        k.mem += done * ph.mem_frac;
        self.st.threads[t.idx()].retired += done;
    }

    /// The model reads `t`'s counters (at a context switch or a tick, as the
    /// papers' kernel does) and updates its predicted speedup.
    fn read_counters(&mut self, t: ThreadId) {
        if let Some(p) = self.pmu.as_deref_mut() {
            if let Some((s, e)) = p.read(t.idx()) {
                let th = &mut self.st.threads[t.idx()];
                th.predicted_speedup = s;
                th.predicted_energy_ratio = e;
            }
            return;
        }
        let k = std::mem::take(&mut self.rt[t.idx()].counters);
        if k.work > 0.0 && k.fast_ns > 0.0 {
            let obs = PhaseObservation {
                true_speedup: k.slow_ns / k.fast_ns,
                true_energy_ratio: if k.slow_e > 0.0 {
                    k.fast_e / k.slow_e
                } else {
                    1.0
                },
                mem_frac: k.mem / k.work,
            };
            let (s, e) = self.observe(obs);
            let th = &mut self.st.threads[t.idx()];
            th.predicted_speedup = s;
            th.predicted_energy_ratio = e;
        }
    }

    fn tick(&mut self) -> Result<(), SimError> {
        self.stats.ticks += 1;
        let now = self.st.now;
        let mut acts = std::mem::take(&mut self.actions);
        acts.clear();
        // Only busy cores have a tick (nothing here makes a core busy).
        let busy = self.st.topo.all_mask().minus(self.st.idle_mask());
        for c in busy.iter() {
            let i = c.idx();
            let Some(t) = self.st.cores[i].current else {
                continue;
            };
            // Counters of running threads are read at the tick too.
            if now > self.rt[t.idx()].progress_start {
                self.account_progress(c, t);
                self.read_counters(t);
                self.schedule_done(c, t);
            }
            let slice_over = now >= self.cores[i].slice_end && !self.st.cores[i].rq.is_empty();
            let wants = self.policy.tick(&self.st, c, &mut acts);
            if slice_over || wants {
                self.stats.preemptions += 1;
                self.preempt(c);
            }
        }
        // Idle cores get a chance to pull work (idle / nohz balancing), or,
        // for policies that do so, to take a thread running elsewhere.
        if self.active > 0 {
            for c in self.st.idle_mask().iter() {
                self.mark_resched(c);
            }
        }
        self.apply_actions(&mut acts)?;
        self.actions = acts;
        Ok(())
    }

    fn apply_actions(&mut self, acts: &mut Vec<Action>) -> Result<(), SimError> {
        for a in acts.drain(..) {
            match a {
                Action::Resched(c) => {
                    if c.idx() >= self.st.cores.len() {
                        return Err(self.perr(format!("resched of core {c}, which does not exist")));
                    }
                    if self.st.cores[c.idx()].current.is_some() {
                        self.preempt(c);
                    } else {
                        self.mark_resched(c);
                    }
                }
                Action::Migrate { thread, to } => {
                    if to.idx() >= self.st.cores.len() || thread.idx() >= self.st.threads.len() {
                        return Err(self.perr(format!(
                            "migrate of thread {thread} to core {to}: no such thread or core"
                        )));
                    }
                    let th = &self.st.threads[thread.idx()];
                    let Some(from) = th.core else { continue };
                    if from == to {
                        continue;
                    }
                    match th.state {
                        RunState::Runnable => {
                            self.dequeue(from, thread);
                        }
                        RunState::Running => {
                            self.stop_current(from, StopReason::Preempted);
                            self.mark_resched(from);
                        }
                        _ => continue,
                    }
                    self.policy.migrated(&self.st, thread, from, to);
                    self.st.set_state(thread, RunState::Runnable);
                    self.enqueue(to, thread, false);
                    self.after_enqueue(to, thread);
                }
            }
        }
        Ok(())
    }
}
