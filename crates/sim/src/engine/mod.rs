//! The event loop.
//!
//! Events: a core's current thread reaches the end of a compute segment (or
//! its context-switch overhead), a sleeping thread's timer fires, the global
//! tick, and the policy's periodic hook. Everything else (lock hand-offs,
//! wake-ups, preemptions) happens synchronously inside those events, with
//! wake-ups deferred to the end of the current step like the kernel's wake_q.

mod interpret;
mod types;

pub use types::{
    ProgramResult, SimConfig, SimError, SimResult, SimStats, DEFAULT_MAX_EVENTS, MAX_EVENTS_LIMIT,
    MAX_RESTART_UNTIL, PROGRESS_EVERY, STEPS_PER_EVENT,
};

use crate::counters::Signature;
use crate::idle_meter::FastIdleMeter;
use crate::pmu::Pmu;
use crate::predict::SimRng;
use crate::predict::{PhaseObservation, Predictor, PredictorKind};
use crate::slots::MinSlots;
use crate::sync::{BarrierState, CondState, EventState, MutexState, QueueState, WaitObj};
use crate::timeline::Timeline;
use colab_core::{
    Action, BlockKind, CoreId, Nanos, Pick, Policy, ProgramId, RunState, SchedState, StopReason,
    ThreadId, ThreadInfo, Topology, WakeKind,
};
use colab_workload::control::Loops;
use colab_workload::{Op, Workload};
use dary_heap::QuaternaryHeap;
use rand::seq::SliceRandom;
use rand::SeedableRng;
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
    /// Per phase: true speedup, memory fraction, and ns per work unit on the
    /// fastest and on the slowest core type.
    phases: Vec<Phase>,
    /// Per (phase, core): its rate there.
    phase_rate: Vec<CoreRate>,
    ncores: usize,
}

impl<'a> Sim<'a> {
    fn new(
        w: &'a Workload,
        topo: &Topology,
        policy: &'a mut dyn Policy,
        cfg: &'a SimConfig,
        mut pmu: Option<Box<Pmu>>,
    ) -> Sim<'a> {
        let mut progs = Vec::new();
        let (mut mb, mut bb, mut cb, mut qb, mut eb) = (0u32, 0u32, 0u32, 0u32, 0u32);
        let mut barriers = Vec::new();
        let mut queues = Vec::new();
        for p in &w.programs {
            progs.push(ProgRt {
                mutex_base: mb,
                barrier_base: bb,
                cond_base: cb,
                queue_base: qb,
                event_base: eb,
                live: vec![0; p.groups.len()],
                joiners: vec![Vec::new(); p.groups.len()],
                live_total: 0,
                start: 0,
                end: None,
                first_start: 0,
                completed: Vec::new(),
                cpu_ns: 0,
                fast_cpu_ns: 0,
            });
            mb += p.num_mutexes;
            bb += p.barriers.len() as u32;
            cb += p.conds.len() as u32;
            qb += p.queues.len() as u32;
            eb += p.num_events;
            barriers.extend(p.barriers.iter().map(|(_, need)| BarrierState::new(*need)));
            queues.extend(
                p.queues
                    .iter()
                    .map(|q| QueueState::new(q.capacity, q.producers)),
            );
        }
        let n = topo.num_cores();
        // Phase table: each distinct memory fraction once, with its rate on
        // every core, so the event loop never recomputes the rate model. With
        // a PMU, phases of different programs differ in their counts, so the
        // key is (program + 1, m); otherwise (0, m).
        let mut by_mem: std::collections::BTreeMap<(u32, u64), u32> =
            std::collections::BTreeMap::new();
        let mut phases: Vec<Phase> = Vec::new();
        let mut phase_rate: Vec<CoreRate> = Vec::new();
        let sigs: Vec<Signature> = match pmu {
            Some(_) => w
                .programs
                .iter()
                .map(|p| Signature::of_program(&p.name))
                .collect(),
            None => Vec::new(),
        };
        let mut phase_of = |key: u32, m: f64| -> u32 {
            *by_mem.entry((key, m.to_bits())).or_insert_with(|| {
                let (f, s) = (
                    &topo.core_types[topo.fastest_type],
                    &topo.core_types[topo.slowest_type],
                );
                let (fast, slow) = (f.rate(m), s.rate(m));
                let (e_fast, e_slow) = (f.energy_per_work(m), s.energy_per_work(m));
                phases.push(Phase {
                    speedup: fast / slow,
                    energy_ratio: if e_slow > 0.0 { e_fast / e_slow } else { 1.0 },
                    mem_frac: m,
                    ns_fast: 1.0 / fast,
                    ns_slow: 1.0 / slow,
                    e_fast,
                    e_slow,
                });
                for c in topo.cores() {
                    let ty = topo.core_type(c);
                    let r = ty.rate(m);
                    phase_rate.push(CoreRate {
                        rate: r,
                        ns_per_work: 1.0 / r,
                        stall_share: ty.stall_share(m),
                    });
                }
                if let Some(pmu) = pmu.as_deref_mut() {
                    let sig = match key {
                        0 => Signature::typical(),
                        k => sigs[k as usize - 1],
                    };
                    pmu.add_phase(&sig, m, topo);
                }
                (phases.len() - 1) as u32
            })
        };
        phase_of(0, 0.5); // phase 0: before a thread's first compute
        let counting = !sigs.is_empty();
        let op_phase: Vec<Vec<Vec<u32>>> = w
            .programs
            .iter()
            .enumerate()
            .map(|(pi, p)| {
                let key = if counting { pi as u32 + 1 } else { 0 };
                p.groups
                    .iter()
                    .map(|g| {
                        g.ops
                            .iter()
                            .map(|o| match o {
                                Op::Compute { mem_frac, .. } => phase_of(key, *mem_frac),
                                _ => u32::MAX,
                            })
                            .collect()
                    })
                    .collect()
            })
            .collect();
        Sim {
            w,
            policy,
            cfg,
            st: SchedState::tracked(topo.clone()),
            rt: Vec::new(),
            // Every core starts idle.
            cores: vec![
                CoreRt {
                    idle: true,
                    ..CoreRt::default()
                };
                n
            ],
            spawned: progs.iter().map(|p| vec![0; p.live.len()]).collect(),
            progs,
            mutexes: vec![MutexState::default(); mb as usize],
            barriers,
            conds: vec![CondState::default(); cb as usize],
            queues,
            events_state: vec![EventState::default(); eb as usize],
            heap: QuaternaryHeap::new(),
            core_next: MinSlots::new(n, NEVER),
            unstarted: w.programs.len() as u32,
            violation: None,
            seq: 0,
            rng: SimRng::seed_from_u64(cfg.seed),
            // Any fixed, documented derivation works; this one is the
            // 64-bit golden-ratio constant.
            energy_rng: SimRng::seed_from_u64(cfg.seed ^ 0x9e37_79b9_7f4a_7c15),
            predictor: cfg
                .predictor
                .build()
                .unwrap_or_else(|| Box::new(crate::predict::OraclePredictor)),
            pmu,
            wake_q: Vec::new(),
            steps: 0,
            max_steps: cfg.max_events.saturating_mul(STEPS_PER_EVENT),
            resched_q: Vec::new(),
            actions: Vec::new(),
            stats: SimStats::default(),
            fast_idle: FastIdleMeter::new(topo.big_mask().count() as u32),
            live_programs: w.programs.len() as u32,
            restart_done: false,
            active: 0,
            sleepers: 0,
            queued_total: 0,
            timeline: cfg.timeline.then(|| Timeline::new(topo)),
            op_phase,
            phases,
            phase_rate,
            ncores: n,
        }
    }

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

    // ----- thread creation and the interpreter ---------------------------

    fn start_program(&mut self, p: usize) {
        self.unstarted -= 1;
        self.progs[p].start = self.st.now;
        self.progs[p].first_start = self.st.now;
        self.spawned[p][0] = 1;
        self.create_thread(p, 0, 0, None);
    }

    /// Starts program `p` afresh after a completed run (`restart_until`):
    /// its synchronization objects go back to their initial state.
    fn restart_program(&mut self, p: usize) {
        let prog = &self.w.programs[p];
        let r = &mut self.progs[p];
        r.start = self.st.now;
        r.end = None;
        r.live.iter_mut().for_each(|l| *l = 0);
        r.joiners.iter_mut().for_each(Vec::clear);
        let range = |base: u32, n: usize| base as usize..base as usize + n;
        for m in &mut self.mutexes[range(r.mutex_base, prog.num_mutexes as usize)] {
            *m = MutexState::default();
        }
        for (b, (_, need)) in self.barriers[range(r.barrier_base, prog.barriers.len())]
            .iter_mut()
            .zip(&prog.barriers)
        {
            *b = BarrierState::new(*need);
        }
        for c in &mut self.conds[range(r.cond_base, prog.conds.len())] {
            *c = CondState::default();
        }
        for (q, spec) in self.queues[range(r.queue_base, prog.queues.len())]
            .iter_mut()
            .zip(&prog.queues)
        {
            *q = QueueState::new(spec.capacity, spec.producers);
        }
        for e in &mut self.events_state[range(r.event_base, prog.num_events as usize)] {
            *e = EventState::default();
        }
        self.spawned[p].iter_mut().for_each(|s| *s = 0);
        self.spawned[p][0] = 1;
        self.create_thread(p, 0, 0, None);
    }

    fn create_thread(&mut self, prog: usize, group: u32, index: u32, parent: Option<ThreadId>) {
        let id = ThreadId(self.st.threads.len() as u32);
        // Until it has run, a thread's counters are those of its first phase.
        let first = self.op_phase[prog][group as usize]
            .iter()
            .copied()
            .find(|&p| p != u32::MAX)
            .unwrap_or(0);
        if let Some(p) = self.pmu.as_deref_mut() {
            p.add_thread();
        }
        let (pred, energy) = self.predict(first);
        // Not yet runnable until the policy places it.
        let mut info = ThreadInfo::new(id, ProgramId(prog as u16), self.st.now, pred);
        info.predicted_energy_ratio = energy;
        self.st.add_thread(info);
        self.rt.push(ThreadRt {
            prog: prog as u16,
            group,
            index,
            pc: 0,
            loops: Loops::default(),
            in_compute: false,
            remaining: 0.0,
            phase: first,
            counters: Counters::default(),
            held: Vec::new(),
            lock_target: None,
            relock: None,
            block_start: self.st.now,
            waiting: WaitObj::None,
            progress_start: 0,
            has_run: false,
        });
        let pr = &mut self.progs[prog];
        pr.live[group as usize] += 1;
        pr.live_total += 1;
        self.policy.thread_created(&self.st, id);
        self.wake_q.push((id, WakeKind::New { parent }));
        if let Some(tl) = &mut self.timeline {
            tl.thread_name(
                id,
                &self.w.programs[prog].name,
                &self.w.programs[prog].groups[group as usize].name,
                index,
            );
        }
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
        let p = &mut self.progs[prog];
        p.live[group] -= 1;
        p.live_total -= 1;
        if p.live[group] == 0 {
            let js = std::mem::take(&mut p.joiners[group]);
            for j in js {
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

    // ----- results and diagnostics ----------------------------------------

    /// One line per live thread, at most [`REPORT_THREADS`] of them (a
    /// program of thousands of threads would bury the message).
    fn deadlock_report(&self) -> String {
        let mut out = String::new();
        let mut shown = 0;
        let live = self
            .st
            .threads
            .iter()
            .filter(|t| t.state != RunState::Exited)
            .count();
        for (i, r) in self.rt.iter().enumerate() {
            let th = &self.st.threads[i];
            if th.state == RunState::Exited {
                continue;
            }
            if shown == REPORT_THREADS {
                out.push_str(&format!("  ... and {} more\n", live - shown));
                break;
            }
            shown += 1;
            let p = &self.w.programs[r.prog as usize];
            let pr = &self.progs[r.prog as usize];
            let what = match r.waiting {
                WaitObj::Mutex(m) => {
                    let local = m - pr.mutex_base;
                    let arr = p
                        .mutex_arrays
                        .iter()
                        .find(|a| local >= a.base && local < a.base + a.len);
                    let owner = self.mutexes[m as usize]
                        .owner
                        .map(|o| format!(" held by thread {o}"))
                        .unwrap_or_default();
                    format!(
                        "mutex '{}'[{}]{owner}",
                        arr.map(|a| a.name.as_str()).unwrap_or("?"),
                        arr.map(|a| local - a.base).unwrap_or(0)
                    )
                }
                WaitObj::Barrier(b) => {
                    let bs = &self.barriers[b as usize];
                    format!(
                        "barrier '{}' ({} of {} arrived)",
                        p.barriers[(b - pr.barrier_base) as usize].0,
                        bs.arrived,
                        bs.needed
                    )
                }
                WaitObj::Cond(c) => format!(
                    "condition variable '{}'",
                    p.conds[(c - pr.cond_base) as usize]
                ),
                WaitObj::QueueFull(q) => format!(
                    "queue '{}' (full)",
                    p.queues[(q - pr.queue_base) as usize].name
                ),
                WaitObj::QueueEmpty(q) => {
                    let qs = &self.queues[q as usize];
                    format!(
                        "queue '{}' (empty, closed by {} of {} producers)",
                        p.queues[(q - pr.queue_base) as usize].name,
                        qs.closed_by,
                        qs.producers
                    )
                }
                WaitObj::Join(g) => format!(
                    "join of group '{}' ({} still live)",
                    p.groups[g as usize].name, pr.live[g as usize]
                ),
                WaitObj::Sleep => "sleep".into(),
                WaitObj::Event(e) => format!("replayed wake-up #{}", e - pr.event_base),
                WaitObj::None => String::new(),
            };
            let what = if what.is_empty() {
                format!("is {:?}", th.state)
            } else {
                format!("waits on {what}")
            };
            let core = th.core.map(|c| format!(" on core {c}")).unwrap_or_default();
            out.push_str(&format!(
                "  thread {} ({} / {}#{}) {what}{core}, {:.3} ms of CPU in all\n",
                i,
                p.name,
                p.groups[r.group as usize].name,
                r.index,
                th.sum_exec_ns as f64 / 1e6
            ));
        }
        out
    }

    fn finish(mut self) -> Result<SimResult, SimError> {
        let now = self.st.now;
        self.fast_idle.advance(now);
        self.stats.fast_idle_slow_busy_ns = self.fast_idle.total_ns();
        let restarted = self.cfg.restart_until.is_some();
        // Invariants at the end: every thread exited, every queue empty, every
        // core idle (with restarts, runs in progress at the end are abandoned).
        if let Some(t) = self
            .st
            .threads
            .iter()
            .find(|t| !restarted && t.state != RunState::Exited)
        {
            return Err(SimError::Invariant {
                at_ns: now,
                problem: format!("thread {} did not finish ({:?})", t.id, t.state),
            });
        }
        if let Some((i, _)) = self
            .st
            .cores
            .iter()
            .enumerate()
            .find(|(_, c)| !restarted && (c.current.is_some() || !c.rq.is_empty()))
        {
            return Err(SimError::Invariant {
                at_ns: now,
                problem: format!("core {i} still has threads after the workload finished"),
            });
        }
        let makespan = if restarted {
            now
        } else {
            self.progs.iter().filter_map(|p| p.end).max().unwrap_or(0)
        };
        let topo = &self.st.topo;
        let mut energy = 0.0;
        for (i, c) in self.cores.iter().enumerate() {
            let ty = topo.core_type(CoreId(i as u16));
            let busy = c.busy_ns.min(makespan);
            // Busy time at active power, less what stalls on memory saved.
            let stall = c.stall_ns.min(busy as f64);
            energy += (busy as f64 * ty.active_power_w
                - stall * (ty.active_power_w - ty.stall_power())
                + (makespan - busy) as f64 * ty.idle_power_w)
                * 1e-9;
        }
        let programs = self
            .w
            .programs
            .iter()
            .zip(&self.progs)
            .map(|(p, r)| {
                if restarted {
                    let runs = r.completed.len().max(1) as u64;
                    return ProgramResult {
                        name: p.name.clone(),
                        n: p.n,
                        threads: p.total_threads,
                        start_ns: r.first_start,
                        end_ns: r.first_start + r.completed.iter().sum::<u64>(),
                        turnaround_ns: r.completed.iter().sum::<u64>() / runs,
                        completions: r.completed.len() as u32,
                        cpu_ns: r.cpu_ns,
                        fast_cpu_ns: r.fast_cpu_ns,
                    };
                }
                let end = r.end.unwrap_or(makespan);
                ProgramResult {
                    name: p.name.clone(),
                    n: p.n,
                    threads: p.total_threads,
                    start_ns: r.start,
                    end_ns: end,
                    turnaround_ns: end - r.start,
                    completions: 1,
                    cpu_ns: r.cpu_ns,
                    fast_cpu_ns: r.fast_cpu_ns,
                }
            })
            .collect();
        Ok(SimResult {
            programs,
            makespan_ns: makespan,
            energy_j: energy,
            core_busy_ns: self.cores.iter().map(|c| c.busy_ns).collect(),
            stats: self.stats,
            counters: self.pmu.map(|p| p.finish()).unwrap_or_default(),
            timeline: self.timeline,
        })
    }
}
