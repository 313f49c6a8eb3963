//! What a scheduler can observe about the system: per-thread run state and
//! accounting, per-core current thread and run queue.
//!
//! The simulator owns and updates this; policies only read it. Everything
//! here has a kernel counterpart (task_struct fields, rq contents, PMU-based
//! predictions). The true speedup of a thread is deliberately absent: a policy
//! sees only `predicted_speedup`, which comes from a predictor that may be
//! noisy (or exact in the simulator's explicit oracle mode).

use crate::runqueue::{INDEX_FROM, UNINDEX_BELOW};
use crate::{CoreId, CoreMask, Nanos, ProgramId, RunQueue, ThreadId, Topology};
use serde::Serialize;
use std::collections::BTreeSet;

/// Why a thread is off the run queues.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum BlockKind {
    Mutex,
    Barrier,
    CondVar,
    QueueFull,
    QueueEmpty,
    Join,
    Sleep,
    /// A replayed wait for another thread (trace replay).
    Event,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum RunState {
    /// On a core's run queue, waiting for CPU time.
    Runnable,
    Running,
    Blocked(BlockKind),
    Exited,
}

#[derive(Clone, Debug, Serialize)]
pub struct ThreadInfo {
    pub id: ThreadId,
    pub program: ProgramId,
    pub state: RunState,
    /// The core whose run queue holds the thread, or that runs it.
    pub core: Option<CoreId>,
    /// The core the thread last ran on.
    pub last_core: Option<CoreId>,
    /// Total CPU time received (the kernel's `sum_exec_runtime`).
    pub sum_exec_ns: Nanos,
    /// Work retired so far, in reference-big-core nanoseconds (a stand-in for
    /// the retired-instructions counter).
    pub retired: f64,
    /// Total time this thread itself spent asleep on futexes.
    pub futex_wait_ns: Nanos,
    /// Total time other threads spent asleep on futexes that this thread
    /// released: COLAB's criticality metric (colab-tpds 5.2).
    pub blocked_others_ns: Nanos,
    /// The part of `futex_wait_ns` spent waiting for mutexes (lock contention).
    pub mutex_wait_ns: Nanos,
    /// The part of `blocked_others_ns` that others spent waiting for mutexes
    /// this thread released. A kernel tells mutex futexes apart from other
    /// futexes only with user-space help (PI futexes, or a runtime like the
    /// JVM WASH was built in), so only WASH-style policies use these two.
    pub mutex_blocked_others_ns: Nanos,
    /// Predicted big/little speedup from the performance-counter model, updated
    /// whenever the counters are read (context switch, tick); never the ground
    /// truth unless in oracle mode.
    pub predicted_speedup: f64,
    /// Predicted energy of the thread's work on the fastest core type over
    /// its energy on the slowest (colab-tpds 5.3's "energy scaling factor"),
    /// from the same readings; 1.0 until the first one.
    pub predicted_energy_ratio: f64,
    /// When the thread last became runnable.
    pub runnable_since: Nanos,
    pub created_at: Nanos,
}

impl ThreadInfo {
    /// A thread just created at `now`, not yet runnable, with no history.
    pub fn new(id: ThreadId, program: ProgramId, now: Nanos, predicted_speedup: f64) -> ThreadInfo {
        ThreadInfo {
            id,
            program,
            state: RunState::Blocked(BlockKind::Join),
            core: None,
            last_core: None,
            sum_exec_ns: 0,
            retired: 0.0,
            futex_wait_ns: 0,
            blocked_others_ns: 0,
            mutex_wait_ns: 0,
            mutex_blocked_others_ns: 0,
            predicted_speedup,
            predicted_energy_ratio: 1.0,
            runnable_since: now,
            created_at: now,
        }
    }
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct CoreInfo {
    pub current: Option<ThreadId>,
    /// When `current` was put on the core.
    pub run_start: Nanos,
    /// Runnable threads waiting on this core, in arrival order.
    pub rq: RunQueue,
}

/// The scheduler-visible state of the whole system at `now`.
#[derive(Clone, Debug)]
pub struct SchedState {
    pub now: Nanos,
    pub topo: Topology,
    pub threads: Vec<ThreadInfo>,
    pub cores: Vec<CoreInfo>,
    /// Per program: its runnable or running threads and the sum of their
    /// ids (which names the thread when there is one), as a kernel keeps a
    /// task group's nr_running. Kept only when `active_tracked`: by the
    /// simulator, which changes states through [`SchedState::add_thread`]
    /// and [`SchedState::set_state`]; hand-built states (tests) leave it off
    /// and readers fall back to a scan of `threads`.
    active: Vec<(u32, u64)>,
    /// Threads in `RunState::Runnable` (queued, or on their way to a core),
    /// kept with `active`.
    runnable: u32,
    /// Cores running nothing, kept with `active` through
    /// [`SchedState::set_current`].
    idle_cores: CoreMask,
    /// Cores with a non-empty run queue, kept through
    /// [`SchedState::rq_push`] and [`SchedState::rq_remove`].
    queued_cores: CoreMask,
    /// Cores by `nr_running`: entry k holds those with k threads, kept
    /// with the two masks above.
    by_load: Vec<CoreMask>,
    /// Per core with a long queue (from [`INDEX_FROM`] threads until under
    /// [`UNINDEX_BELOW`]; empty otherwise), its queued threads by
    /// (runnable_since, id): the longest-waiting thread, which idle
    /// balancing pulls, in O(log n) rather than a pass over the queue.
    by_wait: Vec<BTreeSet<(Nanos, ThreadId)>>,
    /// Per thread, its slot in the run queue it was last pushed on (checked
    /// before use: hand-built queues are changed directly).
    rq_slot: Vec<u32>,
    /// True when the simulator keeps this state: the per-program counts
    /// above, and every thread put on a run queue reported to the policy's
    /// `enqueued` hook (so policies may index their queues, as `CfsCore`
    /// does). Hand-built states (tests) are false: policies scan instead.
    pub active_tracked: bool,
}

fn is_active(s: RunState) -> bool {
    matches!(s, RunState::Runnable | RunState::Running)
}

impl SchedState {
    pub fn new(topo: Topology) -> SchedState {
        let cores = vec![CoreInfo::default(); topo.num_cores()];
        SchedState {
            now: 0,
            topo,
            threads: Vec::new(),
            cores,
            active: Vec::new(),
            runnable: 0,
            idle_cores: CoreMask::EMPTY,
            queued_cores: CoreMask::EMPTY,
            by_load: Vec::new(),
            by_wait: Vec::new(),
            rq_slot: Vec::new(),
            active_tracked: false,
        }
    }

    /// A state whose per-program active counts are kept (see `active`).
    pub fn tracked(topo: Topology) -> SchedState {
        let idle_cores = topo.all_mask();
        SchedState {
            active_tracked: true,
            idle_cores,
            by_load: vec![idle_cores],
            by_wait: vec![BTreeSet::new(); topo.num_cores()],
            ..SchedState::new(topo)
        }
    }

    /// Core `c`'s `nr_running` went from `from` to `to`.
    fn reload(&mut self, c: CoreId, from: usize, to: usize) {
        if !self.active_tracked || from == to {
            return;
        }
        if self.by_load.len() <= to {
            self.by_load.resize(to + 1, CoreMask::EMPTY);
        }
        self.by_load[from].remove(c);
        self.by_load[to].insert(c);
        // No empty buckets on top: searches from the busiest end start at a
        // core (a spawn burst may have queued thousands on one core once).
        while self.by_load.len() > 1 && self.by_load.last().is_some_and(|m| m.is_empty()) {
            self.by_load.pop();
        }
    }

    /// The fewest threads (`nr_running`) any core of `mask` has, and the
    /// cores of `mask` that have that many; None for an empty mask.
    pub fn least_loaded_in(&self, mask: CoreMask) -> Option<(usize, CoreMask)> {
        // A mask of a few cores is scanned: the buckets pay when cores are
        // many and threads per core few, not with hundreds queued on each.
        if self.active_tracked && mask.count() > 64 {
            let found = self
                .by_load
                .iter()
                .enumerate()
                .map(|(k, m)| (k, m.intersect(mask)))
                .find(|(_, m)| !m.is_empty());
            debug_assert_eq!(
                found,
                self.least_loaded_scan(mask),
                "load masks out of step"
            );
            return found;
        }
        self.least_loaded_scan(mask)
    }

    /// The threads (`nr_running`) on the cores of `mask` in all. From the
    /// load buckets when they are fewer than a quarter of the cores (many
    /// cores, few threads each), else by a scan.
    pub fn load_in(&self, mask: CoreMask) -> usize {
        let scan = || mask.iter().map(|c| self.nr_running(c)).sum::<usize>();
        let n = mask.count();
        if !(self.active_tracked && n > 64 && 4 * self.by_load.len() <= n) {
            return scan();
        }
        let found = self
            .by_load
            .iter()
            .enumerate()
            .skip(1)
            .map(|(k, m)| k * m.intersect(mask).count())
            .sum();
        debug_assert_eq!(found, scan(), "load masks out of step");
        found
    }

    /// The core of `mask` with a queued thread and the most threads
    /// (`nr_running`), the lowest-numbered on ties, among those `take`
    /// accepts: the busiest queue of a balancing domain. From the load
    /// buckets for masks of many cores, else by a scan.
    pub fn busiest_in(&self, mask: CoreMask, take: impl Fn(CoreId) -> bool) -> Option<CoreId> {
        let mask = mask.intersect(self.queued_mask());
        let scan = || {
            mask.iter()
                .filter(|&o| take(o))
                .max_by_key(|&o| (self.nr_running(o), std::cmp::Reverse(o)))
        };
        if !(self.active_tracked && mask.count() > 64) {
            return scan();
        }
        let found = self
            .by_load
            .iter()
            .rev()
            .flat_map(|m| m.intersect(mask).iter())
            .find(|&o| take(o));
        debug_assert_eq!(found, scan(), "load masks out of step");
        found
    }

    fn least_loaded_scan(&self, mask: CoreMask) -> Option<(usize, CoreMask)> {
        let k = mask.iter().map(|c| self.nr_running(c)).min()?;
        let mut m = CoreMask::EMPTY;
        for c in mask.iter().filter(|&c| self.nr_running(c) == k) {
            m.insert(c);
        }
        Some((k, m))
    }

    /// Puts `t` on core `c` (None: takes its thread off), keeping the idle
    /// mask. The simulator changes `current` only through this.
    pub fn set_current(&mut self, c: CoreId, t: Option<ThreadId>) {
        let before = self.nr_running(c);
        self.cores[c.idx()].current = t;
        self.reload(c, before, self.nr_running(c));
        if t.is_some() {
            self.idle_cores.remove(c);
        } else {
            self.idle_cores.insert(c);
        }
    }

    /// Appends `t` to core `c`'s run queue, keeping the queued mask.
    pub fn rq_push(&mut self, c: CoreId, t: ThreadId) {
        let before = self.nr_running(c);
        let slot = self.cores[c.idx()].rq.push(t);
        if self.rq_slot.len() <= t.idx() {
            self.rq_slot.resize(t.idx() + 1, 0);
        }
        self.rq_slot[t.idx()] = slot as u32;
        self.queued_cores.insert(c);
        if self.active_tracked {
            let set = &mut self.by_wait[c.idx()];
            let rq = &self.cores[c.idx()].rq;
            let since = |x: ThreadId| self.threads[x.idx()].runnable_since;
            if !set.is_empty() {
                set.insert((since(t), t));
            } else if rq.len() >= INDEX_FROM {
                set.extend(rq.iter().map(|&x| (since(x), x)));
            }
        }
        self.reload(c, before, before + 1);
    }

    /// Takes `t` off core `c`'s run queue; false if it was not there.
    pub fn rq_remove(&mut self, c: CoreId, t: ThreadId) -> bool {
        let rq = &mut self.cores[c.idx()].rq;
        // Its slot as recorded at the push, or (hand-built queues) a search.
        let known = self.rq_slot.get(t.idx()).map(|&p| p as usize);
        let Some(p) = known
            .filter(|&p| rq.at(p) == Some(t))
            .or_else(|| rq.slot_of(t))
        else {
            return false;
        };
        if rq.remove_slot(p) {
            for (slot, x) in rq.slots() {
                if let Some(s) = self.rq_slot.get_mut(x.idx()) {
                    *s = slot as u32;
                }
            }
        }
        let (empty, left) = (rq.is_empty(), rq.len());
        if let Some(set) = self.by_wait.get_mut(c.idx()).filter(|s| !s.is_empty()) {
            let since = self.threads[t.idx()].runnable_since;
            let found = set.remove(&(since, t));
            debug_assert!(found, "thread {t}'s runnable_since changed while queued");
            if left < UNINDEX_BELOW {
                set.clear();
            }
        }
        if empty {
            self.queued_cores.remove(c);
        }
        let after = self.nr_running(c);
        self.reload(c, after + 1, after);
        true
    }

    /// `c`'s queue by (`runnable_since`, id), from the kept order; None
    /// when `c`'s queue is not kept (short, or a hand-built state).
    pub fn waiting_order(&self, c: CoreId) -> Option<impl Iterator<Item = (Nanos, ThreadId)> + '_> {
        let set = self.by_wait.get(c.idx()).filter(|s| !s.is_empty())?;
        Some(set.iter().copied())
    }

    /// The thread of core `c`'s queue that became runnable first
    /// (`runnable_since`, then id) among those `ok` accepts: from the kept
    /// order for a long queue, else by a pass over it. A queued thread's
    /// `runnable_since` must not change while it is queued.
    pub fn longest_waiting(&self, c: CoreId, ok: impl Fn(ThreadId) -> bool) -> Option<ThreadId> {
        let set = self.by_wait.get(c.idx()).filter(|s| !s.is_empty());
        if let Some(set) = set {
            debug_assert_eq!(set.len(), self.cores[c.idx()].rq.len());
            return set.iter().map(|&(_, t)| t).find(|&t| ok(t));
        }
        self.cores[c.idx()]
            .rq
            .iter()
            .copied()
            .filter(|&t| ok(t))
            .min_by_key(|&t| (self.threads[t.idx()].runnable_since, t))
    }

    /// The cores with a non-empty run queue, from the kept mask when
    /// tracked, else by a scan (hand-built states).
    pub fn queued_mask(&self) -> CoreMask {
        let scan = || {
            let mut m = CoreMask::EMPTY;
            for c in self
                .topo
                .cores()
                .filter(|&c| !self.cores[c.idx()].rq.is_empty())
            {
                m.insert(c);
            }
            m
        };
        if self.active_tracked {
            debug_assert_eq!(self.queued_cores, scan(), "queued mask out of step");
            return self.queued_cores;
        }
        scan()
    }

    /// The cores running nothing (`is_idle`), from the kept mask when
    /// tracked, else by a scan of the cores (hand-built states).
    pub fn idle_mask(&self) -> CoreMask {
        let scan = || {
            let mut m = CoreMask::EMPTY;
            for c in self.topo.cores().filter(|&c| self.is_idle(c)) {
                m.insert(c);
            }
            m
        };
        if self.active_tracked {
            debug_assert_eq!(self.idle_cores, scan(), "idle mask out of step");
            return self.idle_cores;
        }
        scan()
    }

    /// Adds a thread, counting it if it is active.
    pub fn add_thread(&mut self, info: ThreadInfo) {
        let (p, state, id) = (info.program.idx(), info.state, info.id);
        self.threads.push(info);
        if self.active.len() <= p {
            self.active.resize(p + 1, (0, 0));
        }
        if is_active(state) {
            self.count(p, id, true);
        }
        if state == RunState::Runnable {
            self.runnable += 1;
        }
    }

    /// Sets a thread's run state, keeping the per-program counts.
    pub fn set_state(&mut self, t: ThreadId, state: RunState) {
        let th = &mut self.threads[t.idx()];
        let (was, p) = (is_active(th.state), th.program.idx());
        let was_runnable = th.state == RunState::Runnable;
        th.state = state;
        match (was_runnable, state == RunState::Runnable) {
            (false, true) => self.runnable += 1,
            (true, false) => self.runnable -= 1,
            _ => {}
        }
        if was != is_active(state) {
            self.count(p, t, !was);
        }
    }

    fn count(&mut self, p: usize, t: ThreadId, up: bool) {
        let a = &mut self.active[p];
        if up {
            a.0 += 1;
            a.1 += u64::from(t.0);
        } else {
            a.0 -= 1;
            a.1 -= u64::from(t.0);
        }
    }

    /// Program `p`'s runnable or running threads and the sum of their ids,
    /// when tracked (None on hand-built states, and for a program with no
    /// thread yet).
    pub fn program_active(&self, p: usize) -> Option<(u32, u64)> {
        if self.active_tracked {
            Some(self.active.get(p).copied().unwrap_or((0, 0)))
        } else {
            None
        }
    }
    /// True only when no thread can be on a run queue: the state is
    /// tracked and no thread is runnable (a queued thread always is). False
    /// says nothing: scan the queues. Lets an idle core's search for work
    /// stop at once on a machine with nothing waiting.
    #[inline]
    pub fn surely_nothing_queued(&self) -> bool {
        self.active_tracked && self.runnable == 0
    }

    #[inline]
    pub fn thread(&self, t: ThreadId) -> &ThreadInfo {
        &self.threads[t.idx()]
    }
    #[inline]
    pub fn core(&self, c: CoreId) -> &CoreInfo {
        &self.cores[c.idx()]
    }
    #[inline]
    pub fn is_idle(&self, c: CoreId) -> bool {
        self.cores[c.idx()].current.is_none()
    }
    /// Runnable plus running threads on a core (the kernel's `nr_running`).
    #[inline]
    pub fn nr_running(&self, c: CoreId) -> usize {
        let core = &self.cores[c.idx()];
        core.rq.len() + usize::from(core.current.is_some())
    }
    /// How long the current thread of `c` has been on the core.
    pub fn current_ran(&self, c: CoreId) -> Nanos {
        self.now.saturating_sub(self.cores[c.idx()].run_start)
    }
    /// Threads of a program that have not exited.
    pub fn live_threads(&self) -> impl Iterator<Item = &ThreadInfo> {
        self.threads.iter().filter(|t| t.state != RunState::Exited)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BlockKind, CoreId, CoreMask, CoreOrder, ProgramId};

    #[test]
    fn tracked_counts_follow_every_state_change() {
        let topo = Topology::named("1B", CoreOrder::BigFirst).unwrap();
        let mut st = SchedState::tracked(topo.clone());
        for (i, p) in [0u16, 1, 0, 0].into_iter().enumerate() {
            st.add_thread(ThreadInfo::new(ThreadId(i as u32), ProgramId(p), 0, 1.0));
        }
        // New threads are blocked until placed.
        assert_eq!(st.program_active(0), Some((0, 0)));
        assert_eq!(st.program_active(7), Some((0, 0)));
        st.set_state(ThreadId(2), RunState::Runnable);
        st.set_state(ThreadId(3), RunState::Runnable);
        st.set_state(ThreadId(2), RunState::Running); // still active: no change
        assert_eq!(st.program_active(0), Some((2, 5)));
        st.set_state(ThreadId(3), RunState::Blocked(BlockKind::Barrier));
        // One left: the sum of ids names it.
        assert_eq!(st.program_active(0), Some((1, 2)));
        st.set_state(ThreadId(2), RunState::Exited);
        st.set_state(ThreadId(1), RunState::Runnable);
        assert_eq!(st.program_active(0), Some((0, 0)));
        assert_eq!(st.program_active(1), Some((1, 1)));
        // Runnable threads: 1 now (thread 1); none once it runs, so nothing
        // can be queued.
        assert!(!st.surely_nothing_queued());
        st.set_state(ThreadId(1), RunState::Running);
        assert!(st.surely_nothing_queued());
        st.set_state(ThreadId(0), RunState::Runnable);
        assert!(!st.surely_nothing_queued());
        // The idle mask follows every core put to work or left idle.
        let two = Topology::named("1B1S", CoreOrder::BigFirst).unwrap();
        let mut cores = SchedState::tracked(two.clone());
        cores.add_thread(ThreadInfo::new(ThreadId(0), ProgramId(0), 0, 1.0));
        assert_eq!(cores.idle_mask(), two.all_mask());
        cores.set_current(CoreId(1), Some(ThreadId(0)));
        assert_eq!(cores.idle_mask(), CoreMask::single(CoreId(0)));
        cores.set_current(CoreId(1), None);
        assert_eq!(cores.idle_mask(), two.all_mask());
        // And the queued mask every queue that fills or empties.
        assert!(cores.queued_mask().is_empty());
        cores.rq_push(CoreId(0), ThreadId(0));
        assert_eq!(cores.queued_mask(), CoreMask::single(CoreId(0)));
        assert!(!cores.rq_remove(CoreId(1), ThreadId(0)));
        assert!(cores.rq_remove(CoreId(0), ThreadId(0)));
        assert!(cores.queued_mask().is_empty());
        // And the cores by load: core 1 runs one and queues two, core 0 one.
        cores.set_current(CoreId(1), Some(ThreadId(0)));
        cores.rq_push(CoreId(1), ThreadId(0));
        cores.rq_push(CoreId(1), ThreadId(0));
        assert_eq!(
            cores.least_loaded_in(two.all_mask()),
            Some((0, CoreMask::single(CoreId(0))))
        );
        cores.rq_push(CoreId(0), ThreadId(0));
        assert_eq!(
            cores.least_loaded_in(CoreMask::single(CoreId(1))),
            Some((3, CoreMask::single(CoreId(1))))
        );
        assert_eq!(
            cores.least_loaded_in(two.all_mask()),
            Some((1, CoreMask::single(CoreId(0))))
        );
        assert_eq!(cores.least_loaded_in(CoreMask::EMPTY), None);
        // Over 64 cores the buckets answer: every core but 70 runs a thread.
        let big = Topology::named("50B50S", CoreOrder::BigFirst).unwrap();
        let mut many = SchedState::tracked(big.clone());
        many.add_thread(ThreadInfo::new(ThreadId(0), ProgramId(0), 0, 1.0));
        for c in big.cores().filter(|&c| c != CoreId(70)) {
            many.set_current(c, Some(ThreadId(0)));
        }
        assert_eq!(
            many.least_loaded_in(big.all_mask()),
            Some((0, CoreMask::single(CoreId(70))))
        );
        many.rq_push(CoreId(3), ThreadId(0));
        many.set_current(CoreId(70), Some(ThreadId(0)));
        let (k, m) = many.least_loaded_in(big.all_mask()).unwrap();
        assert_eq!((k, m.count()), (1, 99));
        assert!(!m.contains(CoreId(3)));
        // The busiest queue: core 3 (two threads, one queued), then the
        // lowest-numbered of the busiest others; none without a queue.
        assert_eq!(many.busiest_in(big.all_mask(), |_| true), Some(CoreId(3)));
        assert_eq!(many.busiest_in(big.all_mask(), |o| o != CoreId(3)), None);
        // Over 64 queued cores the load buckets answer (the debug build
        // checks them against a scan too): a thread queued on cores 10-89.
        for c in 10..90 {
            many.rq_push(CoreId(c), ThreadId(0));
        }
        assert_eq!(
            many.busiest_in(big.all_mask(), |o| o != CoreId(3)),
            Some(CoreId(10))
        );
        many.rq_push(CoreId(85), ThreadId(0));
        assert_eq!(many.busiest_in(big.all_mask(), |_| true), Some(CoreId(85)));
        assert_eq!(
            many.busiest_in(big.all_mask(), |o| o != CoreId(85)),
            Some(CoreId(3))
        );
        assert_eq!(many.busiest_in(CoreMask::single(CoreId(5)), |_| true), None);
        // Threads in all, from the buckets (100 running, 82 queued).
        assert_eq!(many.load_in(big.all_mask()), 182);
        let mut first80 = CoreMask::EMPTY;
        for c in 0..80 {
            first80.insert(CoreId(c));
        }
        assert_eq!(many.load_in(first80), 80 + 1 + 70);
        assert_eq!(many.load_in(CoreMask::single(CoreId(85))), 3);
        // Hand-built states are not tracked: readers scan instead.
        let mut hand = SchedState::new(topo);
        assert!(!hand.surely_nothing_queued());
        hand.add_thread(ThreadInfo::new(ThreadId(0), ProgramId(0), 0, 1.0));
        assert_eq!(hand.program_active(0), None);
    }

    #[test]
    fn the_longest_waiting_thread_of_long_and_short_queues() {
        let topo = Topology::named("1B1S", CoreOrder::BigFirst).unwrap();
        let mut st = SchedState::tracked(topo);
        let c = CoreId(0);
        // 40 threads, runnable since 1000 - 10 * id: the last one waited longest.
        for i in 0..40u32 {
            let t = ThreadId(i);
            st.add_thread(ThreadInfo::new(t, ProgramId(0), 0, 1.0));
            st.set_state(t, RunState::Runnable);
            st.threads[i as usize].runnable_since = 1000 - 10 * u64::from(i);
            st.rq_push(c, t);
        }
        assert_eq!(st.longest_waiting(c, |_| true), Some(ThreadId(39)));
        assert_eq!(st.longest_waiting(c, |t| t.0 < 30), Some(ThreadId(29)));
        // Down to five: under UNINDEX_BELOW, the queue is scanned again.
        for i in 5..40u32 {
            st.rq_remove(c, ThreadId(i));
        }
        assert_eq!(st.longest_waiting(c, |_| true), Some(ThreadId(4)));
        assert_eq!(st.longest_waiting(c, |t| t.0 == 3), Some(ThreadId(3)));
        assert_eq!(st.longest_waiting(CoreId(1), |_| true), None);
    }
}
