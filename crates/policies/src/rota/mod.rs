//! ROTA: rotating fast-core shares, a scheduler for asymmetric machines
//! designed here from what the simulator measured (book: "ROTA"; how each
//! rule was chosen, and its held-out results: "How ROTA was designed").
//!
//! - Fast cores are never idle while a thread waits: a waking thread takes
//!   an idle fast core; an idle fast core steals the best-ranked queued
//!   thread, else takes over a thread running on a slow core, else (on a
//!   machine of three or more core types) one running on a slower fast
//!   core (`idle.rs`).
//! - When no core is idle, a short-burst waking thread queues on the
//!   shortest queue anywhere, a longer one on a slow core (`place.rs`).
//! - Rank (`order.rs`): serial phases first, then the largest gain in
//!   slowdown per unit of fast-core time, (1 - 1/s) / r^2, per thread until
//!   a program is seen to finish and restart, then per program.
//! - At a fast core's tick the occupant gives way to a better-ranked thread
//!   once it has held the core as long as that thread has run, or to a
//!   sibling on a slow core after the quantum (`balance.rs`).
//! - No move that costs more than it gains: previous core first, short
//!   bursts stay in their cluster, an idle fast core waits a migration for
//!   its short sleeper, or a minimum slice for a gang's, and a waking
//!   thread leaves an idle core to a sibling released by the same barrier.
//! - Each core runs its own queue by CFS's rules (`local=eevdf`: EEVDF's).
//!
//! It sees what a kernel sees (run states, who woke whom and whether by a
//! wake-all, a program's name across restarts, predicted speedups); oracle
//! modes are named `*-oracle`. The rank arithmetic is 64-bit integers
//! (`fixed.rs`), as BPF needs. Every constant derives from the machine's
//! cross-cluster migration cost `mig` or CFS's tunables: quantum 200 mig,
//! minimum run before a takeover 4 mig, "short" sleeps and "long enough"
//! idle 1 mig, the gradient's prior one quantum per program (assumption).

use crate::cfs::CfsCore;
use crate::eevdf::Eevdf;
use crate::queue_index::QueueIndex;
use colab_core::{
    Action, BlockKind, CoreId, CoreMask, Nanos, Pick, Policy, RunState, SchedState, StopReason,
    ThreadId, WakeKind,
};
use order::ProgRate;
use std::collections::BTreeSet;

mod balance;
mod fixed;
mod idle;
mod order;
mod params;
mod place;

pub use params::{
    options_help, options_markdown, Local, Order, PullFrom, PullMin, Quantum, Reclaim, RotaParams,
    ShareFast, Switch, DEFAULT_FREEZE, PRESETS, SWITCHES,
};

/// Fixed-point unit of speedups (1.0 = 1024).
const FP: u64 = 1024;

#[derive(Clone, Debug, Default)]
struct ThreadSt {
    /// Fast-core runtime so far, ns.
    fast_ns: u64,
    /// Predicted speedup in units of 1/FP, at least FP.
    speed_fp: u64,
    /// When it last blocked; running average (weight 1/4) of its sleeps.
    blocked_at: Nanos,
    avg_sleep_ns: u64,
    /// Running average (weight 1/4) of its CPU bursts between sleeps, and
    /// the current burst so far.
    avg_burst_ns: u64,
    burst_ns: u64,
    /// Time spent runnable (queued or running), up to its last block.
    runnable_ns: u64,
    /// When it last woke (or was created): preemptions do not end a
    /// runnable spell.
    woke_at_ns: Nanos,
    /// When it last left a fast core (its creation, if never on one).
    fast_left_at: Nanos,
    /// Whether it has blocked, and whether its last block is taken for a
    /// barrier's (its wait before ended in a wake-all).
    has_slept: bool,
    barrier_block: bool,
    /// Whether its last wake-up was a wake-all (FUTEX_WAKE of every waiter).
    woke_by_broadcast: bool,
    /// When it last woke another thread.
    woke_at: Nanos,
    /// Its current run's progress factor ([`ProgRate::done_fp`]), start and
    /// core kind (factor 0 when not running).
    run_factor_fp: u64,
    run_start: Nanos,
    run_fast: bool,
    /// Slow-core runtime of its finished runs, ns.
    slow_ns: u64,
    /// Between a wake-up and the next block.
    awake: bool,
    /// Its finished runs' progress, as counted in [`ProgRate::done_fp`].
    progress_fp: u64,
}

#[derive(Clone, Debug)]
struct Machine {
    fast: CoreMask,
    slow: CoreMask,
    quantum_ns: Nanos,
    /// The shortest an occupant keeps a fast core before a rotation.
    min_quantum_ns: Nanos,
    pull_min_ns: Nanos,
    idle_worth_ns: Nanos,
    /// Per core, its compute capacity relative to the fastest type, in
    /// units of 1/FP (the kernel's `cpu_capacity`, which scx_colab reads).
    cap: Vec<u64>,
    /// Fast cores of more than one capacity (three or more core types).
    tiered: bool,
}

pub struct Rota {
    pub params: RotaParams,
    cfs: Option<CfsCore>,
    /// With `local=eevdf`: EEVDF's state for each core's own queue.
    eevdf: Option<Eevdf>,
    mach: Option<Machine>,
    th: Vec<ThreadSt>,
    /// Per core: the thread that holds it and since when (a thread that
    /// blocks and comes back to the same core keeps its turn).
    occupant: Vec<Option<(ThreadId, Nanos)>>,
    /// Per core: when it went idle (None while busy).
    idle_since: Vec<Option<Nanos>>,
    /// Per program: threads created so far, and not yet exited.
    created: Vec<u32>,
    live: Vec<u32>,
    /// Per program: runs finished (its live threads fell to none).
    runs_done: Vec<u32>,
    /// Per program: runnable or running threads.
    active: Vec<u32>,
    /// Per program: its threads running on fast cores now (`gang`).
    fast_running: Vec<u32>,
    /// Per program: its threads' runnable time and progress.
    prog_rate: Vec<ProgRate>,
    /// `order=sjf-oracle`: each program's T_SB, ns (oracle mode).
    oracle_len: Vec<u64>,
    /// Per core, its queue in [`Rota::local`]'s order.
    local_ix: QueueIndex<i64>,
    /// Programs in a serial phase ([`Rota::is_serial`]).
    serial_progs: BTreeSet<usize>,
}

impl Rota {
    pub fn new(params: RotaParams) -> Rota {
        Rota {
            params,
            cfs: None,
            eevdf: None,
            mach: None,
            th: Vec::new(),
            occupant: Vec::new(),
            idle_since: Vec::new(),
            created: Vec::new(),
            live: Vec::new(),
            runs_done: Vec::new(),
            active: Vec::new(),
            fast_running: Vec::new(),
            prog_rate: Vec::new(),
            oracle_len: Vec::new(),
            local_ix: QueueIndex::default(),
            serial_progs: BTreeSet::new(),
        }
    }

    fn init(&mut self, st: &SchedState) {
        if self.mach.is_some() {
            return;
        }
        let topo = &st.topo;
        let all = topo.all_mask();
        let fast = if topo.is_asymmetric() {
            all.minus(topo.little_mask())
        } else {
            all
        };
        let mig = self
            .params
            .migration_ns
            .unwrap_or(topo.costs.migration_cross_ns)
            .max(1);
        let mut cfs = CfsCore::new(st);
        let gran = cfs.tun.min_granularity_ns;
        let (quantum_ns, min_quantum_ns) = match self.params.quantum {
            Quantum::Slice => (gran, gran),
            Quantum::Migrations => (200 * mig, 200 * mig),
            Quantum::Age => (200 * mig, gran.min(200 * mig)),
        };
        let cap: Vec<u64> = topo
            .cores()
            .map(|c| (topo.capacity(c) * FP as f64).round() as u64)
            .collect();
        let tiered = fast
            .iter()
            .any(|c| cap[c.idx()] != cap[fast.iter().next().unwrap().idx()]);
        self.mach = Some(Machine {
            fast,
            slow: all.minus(fast),
            quantum_ns,
            min_quantum_ns,
            pull_min_ns: 4 * mig,
            idle_worth_ns: mig,
            cap,
            tiered,
        });
        cfs.tun.new_start = self.params.new_start;
        self.cfs = Some(cfs);
        if self.params.local == Local::Eevdf {
            self.eevdf = Some(Eevdf::new());
        }
        self.occupant = vec![None; topo.num_cores()];
        self.idle_since = vec![Some(0); topo.num_cores()];
        self.local_ix = QueueIndex::new(topo.num_cores());
    }

    fn m(&self) -> &Machine {
        self.mach.as_ref().expect("initialised at the first thread")
    }

    fn cfs(&self) -> &CfsCore {
        self.cfs.as_ref().expect("initialised at the first thread")
    }

    fn is_fast(&self, c: CoreId) -> bool {
        self.m().fast.contains(c)
    }

    /// Keeps `serial_progs` after program `p`'s counts changed.
    fn note_serial(&mut self, p: usize) {
        if self.created[p] > 1 && self.active[p] == 1 {
            self.serial_progs.insert(p);
        } else {
            self.serial_progs.remove(&p);
        }
    }

    /// The thread of each program in a serial phase: its one runnable or
    /// running thread, which the simulator's per-program sum of ids names.
    pub(super) fn serial_threads<'a>(
        &'a self,
        st: &'a SchedState,
    ) -> impl Iterator<Item = ThreadId> + 'a {
        self.serial_progs
            .iter()
            .filter_map(|&p| match st.program_active(p) {
                Some((1, id)) => Some(ThreadId(id as u32)),
                _ => None,
            })
    }

    /// Does `t` block again sooner than `ns` (it has slept, and its bursts
    /// between sleeps, on average and now, are shorter)?
    pub(super) fn bursts_under(&self, t: ThreadId, ns: Nanos) -> bool {
        let s = &self.th[t.idx()];
        s.has_slept && s.avg_burst_ns.max(s.burst_ns) < ns
    }

    /// Is `t` its program's serial phase: the one runnable thread of a
    /// program that has created more than one?
    fn is_serial(&self, st: &SchedState, t: ThreadId) -> bool {
        if !self.params.serial_first {
            return false;
        }
        let p = st.thread(t).program.idx();
        self.created.get(p).is_some_and(|&c| c > 1) && self.active.get(p) == Some(&1)
    }

    /// The local thread to run: CFS's leftmost.
    fn local(&mut self, st: &SchedState, c: CoreId) -> Option<ThreadId> {
        if let Some(e) = self.eevdf.as_ref() {
            return e.pick_eevdf(st, c);
        }
        let cfs = self.cfs.as_ref().unwrap();
        let scan = || {
            st.core(c)
                .rq
                .iter()
                .copied()
                .min_by_key(|&t| (cfs.vr[t.idx()], t))
        };
        if !self.local_ix.is_on(st, c) {
            return scan();
        }
        let found = self
            .local_ix
            .first(st, c, |t| cfs.vr[t.idx()])
            .map(|(_, t)| t);
        debug_assert_eq!(found, scan(), "indexed local queue of core {c} differs");
        found
    }
}

impl Policy for Rota {
    fn name(&self) -> &'static str {
        "rota"
    }

    /// Every order weighs by predicted speedup.
    fn reads_predictions(&self) -> bool {
        true
    }

    fn wants_oracle_lengths(&self) -> bool {
        self.params.order == Order::SjfOracle
    }

    fn oracle_program_lengths(&mut self, t_sb_ns: &[Nanos]) {
        self.oracle_len = t_sb_ns.to_vec();
    }

    fn thread_created(&mut self, st: &SchedState, t: ThreadId) {
        self.init(st);
        self.cfs.as_mut().unwrap().thread_created(t);
        if let Some(e) = self.eevdf.as_mut() {
            e.thread_created(st, t);
        }
        if self.th.len() <= t.idx() {
            self.th.resize(t.idx() + 1, ThreadSt::default());
        }
        let s = st.thread(t).predicted_speedup;
        self.th[t.idx()].speed_fp = speed_fp(s);
        self.th[t.idx()].fast_left_at = st.now;
        let p = st.thread(t).program.idx();
        if self.created.len() <= p {
            self.created.resize(p + 1, 0);
            self.live.resize(p + 1, 0);
            self.runs_done.resize(p + 1, 0);
            self.active.resize(p + 1, 0);
            self.fast_running.resize(p + 1, 0);
            self.prog_rate.resize(p + 1, ProgRate::default());
        }
        self.created[p] += 1;
        self.live[p] += 1;
        self.note_serial(p);
    }

    fn select_core(&mut self, st: &SchedState, t: ThreadId, kind: WakeKind) -> CoreId {
        self.choose_core(st, t, kind)
    }

    fn enqueued(&mut self, st: &SchedState, c: CoreId, t: ThreadId, wakeup: bool) {
        if wakeup {
            self.th[t.idx()].woke_at_ns = st.now;
            self.th[t.idx()].awake = true;
            let p = st.thread(t).program.idx();
            self.prog_rate[p].run_open.open(st.now, 1, st.now);
            self.active[p] += 1;
            self.note_serial(p);
            if st.thread(t).last_core.is_some() {
                let s = &mut self.th[t.idx()];
                let slept = st.now.saturating_sub(s.blocked_at);
                s.avg_sleep_ns = (3 * s.avg_sleep_ns + slept) / 4;
            }
        }
        let new = st.thread(t).last_core.is_none() && wakeup;
        if wakeup && self.params.order == Order::Capped {
            self.place(st, t, new);
        }
        self.cfs.as_mut().unwrap().enqueued(st, c, t, wakeup, new);
        if let Some(e) = self.eevdf.as_mut() {
            e.enqueued(st, c, t, wakeup);
        } else {
            let cfs = self.cfs.as_ref().unwrap();
            self.local_ix.push(st, c, t, |t| cfs.vr[t.idx()]);
        }
    }

    fn should_preempt(&mut self, st: &SchedState, c: CoreId, t: ThreadId) -> bool {
        if let Some(e) = self.eevdf.as_mut() {
            return e.should_preempt(st, c, t);
        }
        self.cfs().wakeup_preempt(st, c, t, self.cfs().run_scale(c))
    }

    fn pick_next(&mut self, st: &SchedState, c: CoreId) -> Pick {
        if let Some(t) = self.local(st, c) {
            return Pick::Local(t);
        }
        self.pick_idle(st, c)
    }

    fn running(&mut self, st: &SchedState, c: CoreId, t: ThreadId) {
        self.idle_since[c.idx()] = None;
        let fast = self.is_fast(c);
        let s = &mut self.th[t.idx()];
        debug_assert_eq!(
            s.run_factor_fp, 0,
            "thread {t} dispatched twice without a stop"
        );
        s.run_fast = fast;
        s.run_start = st.now;
        self.set_run_factor(st, t);
        if fast {
            self.fast_running[st.thread(t).program.idx()] += 1;
        }
        if let Some(e) = self.eevdf.as_mut() {
            e.running(st, c, t);
        }
        match self.occupant[c.idx()] {
            Some((o, _)) if o == t => {}
            _ => self.occupant[c.idx()] = Some((t, st.now)),
        }
    }

    fn stopped(&mut self, st: &SchedState, c: CoreId, t: ThreadId, ran: Nanos, why: StopReason) {
        self.clear_run_factor(st, t);
        let p = st.thread(t).program.idx();
        if self.is_fast(c) {
            let n = &mut self.fast_running[p];
            *n = n.saturating_sub(1);
            self.th[t.idx()].fast_ns += ran;
            self.th[t.idx()].fast_left_at = st.now;
        } else {
            self.th[t.idx()].slow_ns += ran;
        }
        self.refresh_progress(st, t);
        {
            let s = &mut self.th[t.idx()];
            s.burst_ns += ran;
            if why != StopReason::Preempted {
                s.avg_burst_ns = (3 * s.avg_burst_ns + s.burst_ns) / 4;
                s.burst_ns = 0;
            }
        }
        let cfs = self.cfs.as_mut().unwrap();
        let scale = cfs.run_scale(c);
        cfs.stopped(st, c, t, ran, scale);
        if let Some(e) = self.eevdf.as_mut() {
            e.stopped(st, c, t, ran, why);
        }
        if why != StopReason::Preempted {
            let a = &mut self.active[p];
            *a = a.saturating_sub(1);
            self.note_serial(p);
            let barrier = if self.params.reclaim == Reclaim::BarrierOracle {
                st.thread(t).state == RunState::Blocked(BlockKind::Barrier)
            } else {
                self.th[t.idx()].woke_by_broadcast
            };
            let runnable_from = self.runnable_from(st, t);
            let s = &mut self.th[t.idx()];
            s.has_slept = true;
            s.barrier_block = barrier;
            s.blocked_at = st.now;
            s.runnable_ns += st.now.saturating_sub(runnable_from);
            s.awake = false;
            let woke = s.woke_at_ns;
            let r = &mut self.prog_rate[p];
            r.run_open.close(st.now, 1, woke);
            r.run_done_ns += st.now.saturating_sub(woke);
        }
        if why == StopReason::Exited {
            self.live[p] = self.live[p].saturating_sub(1);
            if self.live[p] == 0 {
                self.runs_done[p] += 1;
            }
            if self.occupant[c.idx()].is_some_and(|(o, _)| o == t) {
                self.occupant[c.idx()] = None;
            }
        }
    }

    fn migrated(&mut self, st: &SchedState, t: ThreadId, from: CoreId, to: CoreId) {
        self.cfs.as_mut().unwrap().migrated(st, t, from, to);
        if let Some(e) = self.eevdf.as_mut() {
            e.migrated(st, t, from, to);
        }
    }

    fn slice_ns(&self, st: &SchedState, c: CoreId, t: ThreadId) -> Nanos {
        if let Some(e) = self.eevdf.as_ref() {
            return e.slice_ns(st, c, t);
        }
        self.cfs().slice(st, c)
    }

    fn tick(&mut self, st: &SchedState, c: CoreId, out: &mut Vec<Action>) -> bool {
        if self.m().slow.is_empty() {
            self.cfs().periodic_balance(st, c, out);
        } else if self.is_fast(c) {
            if self.params.serial_first {
                self.serial_swap(st, c, out);
            }
            if out.is_empty() && self.params.rotate {
                self.rotate(st, c, out);
            }
            if self.params.tiers && self.m().tiered {
                // Idle faster cores look again (`tiers`).
                if let Some(f) = self.idle_faster(st, c) {
                    out.push(Action::Resched(f));
                }
            }
        } else {
            if self.params.slow_balance {
                self.slow_balance(st, c, out);
            }
            // Idle fast cores look again (a thread may now be worth pulling).
            if self.params.remote {
                let idle_fast = self.m().fast.intersect(st.idle_mask());
                if let Some(f) = idle_fast.iter().find(|&f| Self::is_idle_empty(st, f)) {
                    out.push(Action::Resched(f));
                }
            }
        }
        if let Some(e) = self.eevdf.as_mut() {
            return e.local_tick(st, c);
        }
        self.cfs().tick_preempt(st, c, self.cfs().run_scale(c))
    }

    fn period_ns(&self) -> Option<Nanos> {
        Some(self.params.labels.period_ns)
    }

    /// Speedups are read at the labeller's period, as COLAB's labeller does.
    fn periodic(&mut self, st: &SchedState, _out: &mut Vec<Action>) {
        let mut changed = Vec::new();
        for th in st.live_threads() {
            let Some(s) = self.th.get_mut(th.id.idx()) else {
                continue;
            };
            let speed = speed_fp(th.predicted_speedup);
            if speed != s.speed_fp {
                s.speed_fp = speed;
                changed.push(th.id);
            }
        }
        for t in changed {
            self.refresh_progress(st, t);
            if self.th[t.idx()].run_factor_fp != 0 {
                self.clear_run_factor(st, t);
                self.set_run_factor(st, t);
            }
        }
    }
}

/// A predicted speedup in fixed point, at least 1 (non-finite: 1).
fn speed_fp(s: f64) -> u64 {
    if s.is_finite() && s > 1.0 {
        (s.min(1e6) * FP as f64) as u64
    } else {
        FP
    }
}
