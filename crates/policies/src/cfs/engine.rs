//! CFS's engine, [`CfsCore`]: Linux CFS as the papers ran it (Linux 3.16 on
//! gem5, 4.9 on the board), without asymmetry awareness. The `cfs` policy
//! runs it as it is; it is also the dispatch engine under WASH, the fairness
//! engine under COLAB, and the per-core queues of most other policies.
//!
//! Modelled: weighted vruntime (all threads nice 0, so weight 1024 and
//! vruntime advances 1:1 with runtime), per-run-queue min_vruntime,
//! `sched_latency` / `min_granularity` / `wakeup_granularity` scaled by
//! 1 + log2(min(ncpus, 8)) (SCHED_TUNABLESCALING_LOG), sleeper credit of
//! half a latency (GENTLE_FAIR_SLEEPERS), START_DEBIT for new threads,
//! min_vruntime following the running and the leftmost thread and never
//! going back (update_min_vruntime), vruntime renormalisation on every
//! cross-core move (migrations, pulls, and wake-ups on another core than the
//! last: migrate_task_rq_fair) so that a thread keeps its lag, wake placement
//! (wake-affine between the waker's and the previous core, then an idle core
//! in that core's cluster: select_idle_sibling), fork placement on the
//! idlest cluster and core (find_idlest_group with the 117% imbalance
//! margin), wake-up preemption,
//! tick preemption (slice used up, or vruntime ahead of the leftmost by more
//! than a slice), newidle/nohz idle balancing (an idle core pulls the queued
//! thread that has waited longest from the busiest core, own cluster first),
//! and periodic load balancing (cluster domain, then system domain).
//!
//! Simplified (written down, as the issue asks): load is the number of
//! runnable threads (nice-0 threads have equal weight; PELT averages are not
//! modelled), so balancing reacts to queue lengths, not to decayed
//! utilisation; no cache-hot check on pulls except that running threads are
//! never pulled by the balancer; no buddies (next/last/skip); no
//! SMT/NUMA levels; wake_affine compares queue lengths; a new thread starts
//! at min_vruntime plus a slice of its first core (the parent's vruntime is
//! not inherited); min_vruntime counts a running thread's progress
//! at the rate it will be charged (1, or COLAB's scale-slice).

use colab_core::{
    Action, CoreId, CoreMask, Nanos, Pick, RunState, SchedState, ThreadId, WakeKind, NS_PER_MS,
    NS_PER_US,
};
use std::cell::{Cell, RefCell};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// One core's queued threads as (vruntime, enqueue number, thread id), the
/// smallest on top.
type QueueIndex = BinaryHeap<Reverse<(i64, u64, u32)>>;

/// A superset of the affinity masks of one core's queued threads, as bits
/// of their entries in `CfsCore::masks` (entries from 63 on share bit 63,
/// taken to allow every core), covering the queue's first `pushes` pushes,
/// found under `CfsCore::mask_gen` `gen`. Threads leaving the queue only
/// make it looser, so it stays a superset without being told.
#[derive(Clone, Copy, Debug, Default)]
struct QueuedKinds {
    bits: u64,
    pushes: u64,
    gen: u64,
}

/// CFS tunables, after log scaling with the core count.
#[derive(Clone, Debug, PartialEq)]
pub struct CfsTunables {
    pub latency_ns: Nanos,
    pub min_granularity_ns: Nanos,
    pub wakeup_granularity_ns: Nanos,
    /// Run queues longer than this stretch the period (sched_nr_latency).
    pub nr_latency: usize,
    /// Where a new thread starts in its core's queue (START_DEBIT by default).
    pub new_start: NewStart,
}

/// Where a new thread's vruntime starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NewStart {
    /// A slice of the period behind min_vruntime (CFS's START_DEBIT).
    Debit,
    /// START_DEBIT, but never ahead of the previous new thread placed on
    /// the same core: new threads keep their arrival order.
    DebitFifo,
}

impl CfsTunables {
    /// Kernel defaults (6 ms, 0.75 ms, 1 ms) times 1 + ilog2(min(ncpus, 8)).
    pub fn for_cpus(ncpus: usize) -> CfsTunables {
        let n = ncpus.clamp(1, 8);
        let factor = 1 + (usize::BITS - 1 - n.leading_zeros()) as u64;
        CfsTunables {
            latency_ns: 6 * NS_PER_MS * factor,
            min_granularity_ns: 750 * NS_PER_US * factor,
            wakeup_granularity_ns: NS_PER_MS * factor,
            nr_latency: 8,
            new_start: NewStart::Debit,
        }
    }
}

/// Shared CFS machinery. Policies that build on CFS own one of these and
/// call into it from their hooks.
#[derive(Clone, Debug)]
pub struct CfsCore {
    pub tun: CfsTunables,
    /// Per-thread vruntime (signed: renormalisation may go below zero).
    pub vr: Vec<i64>,
    /// Per-core min_vruntime.
    pub min_vr: Vec<i64>,
    /// Per thread: which entry of `masks` holds the cores it may run on
    /// (sched_setaffinity). An index, not a mask per thread: a 1,024-core
    /// mask is 128 bytes, and 4,096 of them halved the event rate.
    allowed_idx: Vec<u32>,
    /// The distinct affinity masks in use; entry 0 is every core.
    masks: Vec<CoreMask>,
    /// Per core, the rate at which the running thread's vruntime grows per
    /// ns of runtime (1 for CFS; COLAB's scale-slice sets its speedup), so
    /// that min_vruntime follows the running thread at the rate it is charged.
    run_scale: Vec<f64>,
    all: CoreMask,
    /// Per core, the queued threads as (vruntime, enqueue number, thread)
    /// in a min-heap, so that the leftmost thread and min_vruntime cost
    /// O(log n) instead of a scan of the queue (the kernel's rbtree). An
    /// entry goes stale when its thread leaves the queue or its vruntime or
    /// enqueue number changes; stale entries are dropped when found on top.
    queued: Vec<RefCell<QueueIndex>>,
    /// Per thread: its latest enqueue number (ties in vruntime go to the
    /// earlier enqueue, as a scan of the queue in arrival order would).
    seq: Vec<u64>,
    next_seq: u64,
    /// Per core, the vruntime the last new thread placed there started at.
    last_new_vr: Vec<i64>,
    /// Per core, a stamp renewed whenever what its min_vruntime and its
    /// queued threads' lags derive from may have changed (its min_vruntime,
    /// a thread queued there or leaving, its run's scale), so that a
    /// caller may keep values computed from them until it changes.
    stamp: Vec<u64>,
    next_stamp: u64,
    /// Per core, the masks its queued threads may have: an idle core's pull
    /// skips, without a pass, a queue of threads none of which may run on
    /// it (WASH's long queues of big-only threads seen from a little core).
    kinds: Vec<Cell<QueuedKinds>>,
    /// Renewed whenever a thread's mask entry changes, which voids `kinds`.
    mask_gen: u64,
}

impl CfsCore {
    pub fn new(st: &SchedState) -> CfsCore {
        let n = st.topo.num_cores();
        CfsCore {
            tun: CfsTunables::for_cpus(n),
            vr: Vec::new(),
            min_vr: vec![0; n],
            allowed_idx: Vec::new(),
            masks: vec![st.topo.all_mask()],
            run_scale: vec![1.0; n],
            all: st.topo.all_mask(),
            queued: vec![RefCell::new(BinaryHeap::new()); n],
            seq: Vec::new(),
            next_seq: 0,
            last_new_vr: vec![i64::MIN; n],
            stamp: vec![0; n],
            next_stamp: 0,
            kinds: vec![Cell::default(); n],
            mask_gen: 0,
        }
    }

    /// Renews `c`'s stamp (see `stamp`).
    pub fn touch(&mut self, c: CoreId) {
        self.next_stamp += 1;
        self.stamp[c.idx()] = self.next_stamp;
    }

    /// `c`'s stamp: the same as before only if nothing it covers changed.
    pub fn stamp(&self, c: CoreId) -> u64 {
        self.stamp[c.idx()]
    }

    /// Records that `t` is queued on `c` with its current vruntime, as the
    /// `n`-th enqueue.
    fn index(&mut self, c: CoreId, t: ThreadId, n: u64) {
        self.seq[t.idx()] = n;
        self.queued[c.idx()]
            .get_mut()
            .push(Reverse((self.vr[t.idx()], n, t.0)));
    }

    /// Is this heap entry of core `c` current: its thread queued on `c`
    /// (runnable there, not running) with that vruntime and enqueue number?
    fn is_current(&self, st: &SchedState, c: CoreId, (v, n, t): (i64, u64, u32)) -> bool {
        let (t, th) = (ThreadId(t), st.thread(ThreadId(t)));
        th.core == Some(c)
            && th.state == RunState::Runnable
            && st.core(c).current != Some(t)
            && self.vr[t.idx()] == v
            && self.seq[t.idx()] == n
    }

    /// Entries in `c`'s queue index, stale ones included (tests).
    #[cfg(test)]
    pub(crate) fn index_len(&self, c: CoreId) -> usize {
        self.queued[c.idx()].borrow().len()
    }

    /// The queued thread of `c` with the smallest vruntime, the earliest
    /// enqueued on ties, other than `skip`.
    fn first_queued(&self, st: &SchedState, c: CoreId, skip: Option<ThreadId>) -> Option<ThreadId> {
        let mut heap = self.queued[c.idx()].borrow_mut();
        let mut held = None;
        let found = loop {
            let Some(&Reverse(e)) = heap.peek() else {
                break None;
            };
            if !self.is_current(st, c, e) {
                heap.pop();
                continue;
            }
            if Some(ThreadId(e.2)) == skip && held.is_none() {
                held = heap.pop();
                continue;
            }
            break Some(ThreadId(e.2));
        };
        if let Some(e) = held {
            heap.push(e);
        }
        found
    }

    pub fn thread_created(&mut self, t: ThreadId) {
        if self.vr.len() <= t.idx() {
            self.vr.resize(t.idx() + 1, 0);
            self.allowed_idx.resize(t.idx() + 1, 0);
            self.seq.resize(t.idx() + 1, u64::MAX);
        }
    }

    /// Scheduling period for `nr` runnable threads.
    pub fn period(&self, nr: usize) -> Nanos {
        if nr > self.tun.nr_latency {
            nr as Nanos * self.tun.min_granularity_ns
        } else {
            self.tun.latency_ns
        }
    }

    /// Equal-weight slice on a core with `nr` runnable threads.
    pub fn slice(&self, st: &SchedState, c: CoreId) -> Nanos {
        let nr = st.nr_running(c).max(1);
        (self.period(nr) / nr as Nanos).max(self.tun.min_granularity_ns)
    }

    /// The vruntime rate of the run starting on `c` (see `run_scale`).
    pub fn set_run_scale(&mut self, c: CoreId, scale: f64) {
        self.touch(c);
        self.run_scale[c.idx()] = scale;
    }

    pub fn run_scale(&self, c: CoreId) -> f64 {
        self.run_scale[c.idx()]
    }

    /// Effective vruntime of `t`, including the unaccounted part of a
    /// current run, at the rate that run will be charged.
    pub fn cur_vr(&self, st: &SchedState, t: ThreadId) -> i64 {
        let th = st.thread(t);
        let mut v = self.vr[t.idx()];
        if let Some(c) = th.core {
            if st.core(c).current == Some(t) {
                v += (st.current_ran(c) as f64 * self.run_scale[c.idx()]) as i64;
            }
        }
        v
    }

    /// [`Self::cur_vr`] of `t`, the thread running on `c`. The simulator
    /// sets a thread's core before any hook sees it running, so its state
    /// need not be read (a cache miss per core when a steal visits many).
    fn running_vr(&self, st: &SchedState, c: CoreId, t: ThreadId) -> i64 {
        if !st.active_tracked {
            return self.cur_vr(st, t);
        }
        let v = self.vr[t.idx()] + (st.current_ran(c) as f64 * self.run_scale[c.idx()]) as i64;
        debug_assert_eq!(v, self.cur_vr(st, t), "thread {t} runs on core {c}");
        v
    }

    /// `c`'s min_vruntime as update_min_vruntime would leave it now: never
    /// going back, following the smaller of the running thread's vruntime
    /// (with its unaccounted run) and the leftmost queued one's.
    pub fn min_vruntime(&self, st: &SchedState, c: CoreId) -> i64 {
        self.min_vr_with(st, c, None, None)
    }

    /// [`Self::min_vruntime`] leaving out `skip` (a thread being enqueued)
    /// and counting `extra` (one just stopped or taken off the queue).
    fn min_vr_with(
        &self,
        st: &SchedState,
        c: CoreId,
        skip: Option<ThreadId>,
        extra: Option<ThreadId>,
    ) -> i64 {
        let core = st.core(c);
        let cur = core
            .current
            .filter(|&t| Some(t) != extra)
            .map(|t| self.running_vr(st, c, t));
        let scan = || {
            core.rq
                .iter()
                .filter(|&&t| Some(t) != skip)
                .copied()
                .min_by_key(|&t| self.vr[t.idx()])
        };
        // A short queue is cheaper to pass over than to check the heap's
        // top against the threads' states; only the smallest vruntime is
        // read, which both give.
        let queued = if st.active_tracked && core.rq.len() > 8 {
            self.first_queued(st, c, skip)
        } else {
            scan()
        };
        let m = queued
            .iter()
            .chain(extra.iter())
            .map(|&t| self.vr[t.idx()])
            .chain(cur)
            .min();
        // Between a dequeue and the dispatch or enqueue that follows, a
        // thread may still look queued on its old core; the callers then
        // count it as `extra`, so the minimum is the scan's.
        debug_assert_eq!(
            m,
            scan()
                .iter()
                .chain(extra.iter())
                .map(|&t| self.vr[t.idx()])
                .chain(cur)
                .min(),
            "the indexed queue of core {c} gives another min_vruntime than its run queue"
        );
        let old = self.min_vr[c.idx()];
        m.map_or(old, |m| old.max(m))
    }

    /// Brings `c`'s min_vruntime up to date. Doing it lazily, whenever a
    /// hook reads it or changes the queue, matches the kernel's updates on
    /// every tick: between those events it can only grow with the running
    /// thread.
    fn update_min_vr(
        &mut self,
        st: &SchedState,
        c: CoreId,
        skip: Option<ThreadId>,
        extra: Option<ThreadId>,
    ) -> i64 {
        let m = self.min_vr_with(st, c, skip, extra);
        self.min_vr[c.idx()] = m;
        self.touch(c);
        m
    }

    /// enqueue_entity: renormalisation on a wake-up on another core than the
    /// last one (migrate_task_rq_fair), then place_entity: sleeper credit on
    /// wake-up, START_DEBIT for new threads.
    pub fn enqueued(
        &mut self,
        st: &SchedState,
        c: CoreId,
        t: ThreadId,
        wakeup: bool,
        new_thread: bool,
    ) {
        // A sleeping thread keeps its vruntime relative to the core it
        // slept on; carry its lag over to the new core.
        let moved_from = match st.thread(t).last_core {
            Some(prev) if wakeup && !new_thread && prev != c => {
                Some(self.update_min_vr(st, prev, Some(t), None))
            }
            _ => None,
        };
        let min = self.update_min_vr(st, c, Some(t), None);
        let slice = self.slice(st, c) as i64;
        let v = &mut self.vr[t.idx()];
        if let Some(from_min) = moved_from {
            *v += min - from_min;
        }
        if new_thread {
            *v = match self.tun.new_start {
                NewStart::Debit => min + slice,
                // min_vruntime never falls and a slice is at most a period,
                // so this stays within a period of min_vruntime.
                NewStart::DebitFifo => (min + slice).max(self.last_new_vr[c.idx()]),
            };
            self.last_new_vr[c.idx()] = *v;
        } else if wakeup {
            *v = (*v).max(min - (self.tun.latency_ns / 2) as i64);
        }
        let n = self.next_seq;
        self.next_seq += 1;
        self.index(c, t, n);
        self.touch(c);
        // Stale entries sink when their thread left with a large vruntime;
        // dropping them once they outnumber the queue keeps the index's
        // memory proportional to the queue (amortised O(1) per enqueue).
        if self.queued[c.idx()].get_mut().len() > 2 * st.core(c).rq.len() + 64 {
            let heap = std::mem::take(self.queued[c.idx()].get_mut());
            let live: QueueIndex = heap
                .into_iter()
                .filter(|&Reverse(e)| self.is_current(st, c, e) || e.2 == t.0 && e.1 == n)
                .collect();
            *self.queued[c.idx()].get_mut() = live;
        }
    }

    /// `t` left `from`'s queue (or its core) for `to`'s: its lag against
    /// `from`'s min_vruntime, counting `t` itself, carries over to `to`.
    pub fn migrated(&mut self, st: &SchedState, t: ThreadId, from: CoreId, to: CoreId) {
        let from_min = self.update_min_vr(st, from, None, Some(t));
        let to_min = self.update_min_vr(st, to, Some(t), None);
        self.vr[t.idx()] += to_min - from_min;
    }

    /// Accounts `ran` ns of runtime, scaled by `scale` (1.0 for plain CFS).
    /// The stopped thread still counts for min_vruntime (update_curr runs
    /// before the dequeue).
    pub fn stopped(&mut self, st: &SchedState, c: CoreId, t: ThreadId, ran: Nanos, scale: f64) {
        self.vr[t.idx()] += (ran as f64 * scale) as i64;
        self.update_min_vr(st, c, None, Some(t));
        self.touch(c);
    }

    /// The leftmost (smallest vruntime) queued thread of `c`.
    pub fn leftmost(&self, st: &SchedState, c: CoreId) -> Option<ThreadId> {
        let scan = || {
            st.core(c)
                .rq
                .iter()
                .copied()
                .min_by_key(|&t| self.vr[t.idx()])
        };
        // As in min_vr_with: a short queue is passed over.
        if !st.active_tracked || st.core(c).rq.len() <= 8 {
            return scan();
        }
        let t = self.first_queued(st, c, None);
        debug_assert_eq!(
            t,
            scan(),
            "the indexed queue of core {c} differs from its run queue"
        );
        t
    }

    pub fn is_allowed(&self, t: ThreadId, c: CoreId) -> bool {
        self.masks[self.allowed_idx[t.idx()] as usize].contains(c)
    }

    /// The cores `t` may run on.
    pub fn allowed(&self, t: ThreadId) -> CoreMask {
        self.masks[self.allowed_idx[t.idx()] as usize]
    }

    /// Sets the cores `t` may run on (sched_setaffinity).
    pub fn set_allowed(&mut self, t: ThreadId, mask: CoreMask) {
        let i = self.mask_index(mask);
        self.set_allowed_index(t, i);
    }

    /// The entry of `mask` among the masks in use, added if new: a policy
    /// that sets one of a few masks on thousands of threads looks each up
    /// once and sets it with [`Self::set_allowed_index`].
    pub fn mask_index(&mut self, mask: CoreMask) -> u32 {
        let i = match self.masks.iter().position(|&m| m == mask) {
            Some(i) => i,
            None => {
                self.masks.push(mask);
                self.masks.len() - 1
            }
        };
        i as u32
    }

    /// Sets the cores `t` may run on to the mask of entry `i` (from
    /// [`Self::mask_index`]).
    pub fn set_allowed_index(&mut self, t: ThreadId, i: u32) {
        if self.allowed_idx[t.idx()] != i {
            self.mask_gen += 1;
        }
        self.allowed_idx[t.idx()] = i;
    }

    /// `t`'s bit in [`QueuedKinds`].
    fn kind_bit(&self, t: ThreadId) -> u64 {
        1 << self.allowed_idx[t.idx()].min(63)
    }

    /// The [`QueuedKinds`] bits of the masks that allow `c`.
    fn kinds_allowing(&self, c: CoreId) -> u64 {
        let mut bits = 1 << 63;
        for (i, m) in self.masks.iter().enumerate().take(63) {
            if m.contains(c) {
                bits |= 1 << i;
            }
        }
        bits
    }

    /// Does `o`'s queue hold a thread `ok` accepts? A queue whose kinds have
    /// none of `fits` (the bits of the masks that allow the asking core) is
    /// answered without a pass; a pass that finds nothing makes `o`'s kinds
    /// exact.
    fn queue_has(
        &self,
        st: &SchedState,
        o: CoreId,
        fits: u64,
        ok: impl Fn(ThreadId) -> bool,
    ) -> bool {
        let rq = &st.core(o).rq;
        let cell = &self.kinds[o.idx()];
        let mut k = cell.get();
        if k.gen == self.mask_gen {
            for &t in rq.pushed_after(k.pushes) {
                k.bits |= self.kind_bit(t);
            }
            k.pushes = rq.pushes();
            cell.set(k);
            if k.bits & fits == 0 {
                debug_assert!(
                    !rq.iter().any(|&t| ok(t)),
                    "the kinds of core {o}'s queue miss a thread"
                );
                return false;
            }
        }
        let mut bits = 0;
        for &t in rq {
            if ok(t) {
                return true;
            }
            bits |= self.kind_bit(t);
        }
        cell.set(QueuedKinds {
            bits,
            pushes: rq.pushes(),
            gen: self.mask_gen,
        });
        false
    }

    /// Least loaded allowed core in `mask`, lowest number on ties.
    pub fn idlest_in(&self, st: &SchedState, t: ThreadId, mask: CoreMask) -> Option<CoreId> {
        // The lowest-numbered of the shortest queues.
        let (_, least) = st.least_loaded_in(mask.intersect(self.allowed(t)))?;
        least.iter().next()
    }

    /// select_task_rq_fair.
    pub fn select(&self, st: &SchedState, t: ThreadId, kind: WakeKind) -> CoreId {
        let allowed = self.allowed(t);
        let th = st.thread(t);
        match (kind, th.last_core) {
            (WakeKind::Wakeup { waker, .. }, Some(prev)) if allowed.contains(prev) => {
                let target = self.wake_affine(st, t, prev, waker);
                self.select_idle_sibling(st, t, prev, target)
            }
            (WakeKind::Wakeup { .. }, Some(_))
            | (WakeKind::Wakeup { .. }, None)
            | (WakeKind::New { .. }, _) => {
                let parent_core = match kind {
                    WakeKind::New { parent } => parent.and_then(|p| st.thread(p).core),
                    _ => None,
                };
                self.find_idlest(st, t, parent_core)
            }
        }
    }

    /// wake_affine: pull towards the waker's core if it is less loaded.
    pub fn wake_affine(
        &self,
        st: &SchedState,
        t: ThreadId,
        prev: CoreId,
        waker: Option<ThreadId>,
    ) -> CoreId {
        let allowed = self.allowed(t);
        if let Some(w) = waker.and_then(|w| st.thread(w).core) {
            if w != prev && allowed.contains(w) && st.nr_running(w) < st.nr_running(prev) {
                return w;
            }
        }
        prev
    }

    fn select_idle_sibling(
        &self,
        st: &SchedState,
        t: ThreadId,
        prev: CoreId,
        target: CoreId,
    ) -> CoreId {
        if st.is_idle(target) {
            return target;
        }
        if st.topo.same_cluster(prev, target) && st.is_idle(prev) {
            return prev;
        }
        let llc = st
            .topo
            .cluster_mask(st.topo.cluster_of(target))
            .intersect(self.allowed(t));
        llc.intersect(st.idle_mask())
            .iter()
            .next()
            .unwrap_or(target)
    }

    /// Fork placement: find_idlest_group then find_idlest_cpu.
    fn find_idlest(&self, st: &SchedState, t: ThreadId, local_core: Option<CoreId>) -> CoreId {
        let allowed = self.allowed(t);
        let local = local_core.map(|c| st.topo.cluster_of(c));
        let load = |cl: usize| -> Option<f64> {
            let m = st.topo.cluster_mask(cl).intersect(allowed);
            if m.is_empty() {
                return None;
            }
            Some(st.load_in(m) as f64 / m.count() as f64)
        };
        let mut best: Option<(usize, f64)> = None;
        for cl in 0..st.topo.clusters.len() {
            if let Some(l) = load(cl) {
                if best.is_none_or(|(_, b)| l < b) {
                    best = Some((cl, l));
                }
            }
        }
        let Some((mut chosen, idlest_load)) = best else {
            return CoreId(0); // no allowed core: cannot happen with a valid mask
        };
        // Stay local unless the idlest group is clearly (117%) less loaded.
        if let Some(lc) = local {
            if let Some(ll) = load(lc) {
                if ll * 100.0 <= idlest_load * 117.0 {
                    chosen = lc;
                }
            }
        }
        self.idlest_in(st, t, st.topo.cluster_mask(chosen))
            .unwrap_or(CoreId(0))
    }

    /// check_preempt_wakeup: the woken thread preempts if the current one is
    /// ahead in vruntime by more than the wake-up granularity.
    pub fn wakeup_preempt(&self, st: &SchedState, c: CoreId, t: ThreadId, cur_scale: f64) -> bool {
        let Some(cur) = st.core(c).current else {
            return false;
        };
        let cur_v = self.vr[cur.idx()] + (st.current_ran(c) as f64 * cur_scale) as i64;
        cur_v - self.vr[t.idx()] > self.tun.wakeup_granularity_ns as i64
    }

    /// check_preempt_tick's vruntime test (slice expiry itself is enforced by the caller).
    pub fn tick_preempt(&self, st: &SchedState, c: CoreId, cur_scale: f64) -> bool {
        let core = st.core(c);
        let Some(cur) = core.current else {
            return false;
        };
        let ran = st.current_ran(c);
        if ran < self.tun.min_granularity_ns {
            return false;
        }
        let Some(left) = self.leftmost(st, c) else {
            return false;
        };
        let cur_v = self.vr[cur.idx()] + (ran as f64 * cur_scale) as i64;
        cur_v - self.vr[left.idx()] > self.slice(st, c) as i64
    }

    /// Idle balance: pull the longest-waiting allowed queued thread from the
    /// busiest core, own cluster first, then the whole machine.
    pub fn idle_pull(&self, st: &SchedState, c: CoreId) -> Option<(CoreId, ThreadId)> {
        self.idle_pull_in(st, c, true)
    }

    /// Idle balance over the own cluster, then (if `system`) the whole machine.
    pub fn idle_pull_in(
        &self,
        st: &SchedState,
        c: CoreId,
        system: bool,
    ) -> Option<(CoreId, ThreadId)> {
        self.idle_pull_where(st, c, system, |_| true)
    }

    /// [`CfsCore::idle_pull_in`] over the threads `may` accepts only.
    pub fn idle_pull_where(
        &self,
        st: &SchedState,
        c: CoreId,
        system: bool,
        may: impl Fn(ThreadId) -> bool,
    ) -> Option<(CoreId, ThreadId)> {
        if st.surely_nothing_queued() {
            return None;
        }
        let ok = |t: ThreadId| self.is_allowed(t, c) && may(t);
        // Queue kinds are kept from the simulator's pushes, so only on a
        // tracked state, and matter only with several masks in use.
        let fits = (st.active_tracked && self.masks.len() > 1).then(|| self.kinds_allowing(c));
        let own = st.topo.cluster_mask(st.topo.cluster_of(c));
        let domains = [Some(own), system.then_some(self.all)];
        for domain in domains.into_iter().flatten() {
            // Two calls, so that the plain pass stays inlined in the walk.
            let busiest = match fits {
                Some(fits) => st.busiest_in(domain, |o| o != c && self.queue_has(st, o, fits, ok)),
                None => st.busiest_in(domain, |o| o != c && st.core(o).rq.iter().any(|&t| ok(t))),
            };
            if let Some(b) = busiest {
                // A core whose only thread is running has nothing to give.
                if st.nr_running(b) >= 2 || st.core(b).current.is_none() {
                    // The longest waiting (runnable_since, then id).
                    let t = st.longest_waiting(b, ok);
                    if let Some(t) = t {
                        return Some((b, t));
                    }
                }
            }
        }
        None
    }

    /// pick_next_task_fair: the leftmost local thread, else an idle pull.
    pub fn pick(&self, st: &SchedState, c: CoreId) -> Pick {
        if let Some(t) = self.leftmost(st, c) {
            return Pick::Local(t);
        }
        match self.idle_pull(st, c) {
            Some((from, thread)) => Pick::Steal { from, thread },
            None => Pick::Idle,
        }
    }

    /// Periodic load balancing, run from the tick of the first core of each
    /// domain: move one queued thread from the busiest to the least loaded
    /// core when their run-queue lengths differ by two or more.
    pub fn periodic_balance(&self, st: &SchedState, c: CoreId, out: &mut Vec<Action>) {
        self.periodic_balance_in(st, c, out, true)
    }

    /// Periodic balancing of the cluster domain and, if `system`, the
    /// system domain.
    pub fn periodic_balance_in(
        &self,
        st: &SchedState,
        c: CoreId,
        out: &mut Vec<Action>,
        system: bool,
    ) {
        let cl = st.topo.cluster_of(c);
        let own = st.topo.cluster_mask(cl);
        let domains = [
            (own.iter().next() == Some(c)).then_some(own),
            (system && c == CoreId(0) && st.topo.clusters.len() > 1).then_some(self.all),
        ];
        for d in domains.into_iter().flatten() {
            let Some(busiest) = d
                .iter()
                .max_by_key(|&o| (st.nr_running(o), std::cmp::Reverse(o)))
            else {
                continue;
            };
            let scan = || {
                let candidates = st.core(busiest).rq.iter().copied();
                let mut best: Option<(ThreadId, CoreId)> = None;
                // The destination depends only on the thread's affinity mask:
                // found again only when the mask changes from the previous
                // thread's (almost every thread shares one), not per thread.
                let mut dest: Option<(u32, Option<CoreId>)> = None;
                for t in candidates {
                    let idx = self.allowed_idx[t.idx()];
                    let to = match dest {
                        Some((i, to)) if i == idx => to,
                        _ => {
                            let to = d
                                .intersect(self.masks[idx as usize])
                                .iter()
                                .min_by_key(|&o| st.nr_running(o));
                            dest = Some((idx, to));
                            to
                        }
                    };
                    if let Some(to) = to {
                        if st.nr_running(busiest) >= st.nr_running(to) + 2
                            && best.is_none_or(|(b, _)| {
                                st.thread(t).runnable_since < st.thread(b).runnable_since
                            })
                        {
                            best = Some((t, to));
                        }
                    }
                }
                best
            };
            // With a few affinity masks in use, the destination of each is
            // found once, and the best is the first thread of the kept order
            // whose mask has one, unless another with a destination became
            // runnable at the same time (then queue order decides, and the
            // pass does).
            let order = st.waiting_order(busiest).filter(|_| self.masks.len() <= 8);
            let best = match order {
                Some(order) => {
                    let n = st.nr_running(busiest);
                    let mut dests = [None; 8];
                    for (i, m) in self.masks.iter().enumerate() {
                        dests[i] = d
                            .intersect(*m)
                            .iter()
                            .min_by_key(|&o| st.nr_running(o))
                            .filter(|&to| n >= st.nr_running(to) + 2);
                    }
                    let mut found: Option<(Nanos, ThreadId, CoreId)> = None;
                    let mut tie = false;
                    if dests.iter().any(|x| x.is_some()) {
                        for (since, t) in order {
                            if found.is_some_and(|(s0, _, _)| since != s0) {
                                break;
                            }
                            if let Some(to) = dests[self.allowed_idx[t.idx()] as usize] {
                                if found.is_some() {
                                    tie = true;
                                    break;
                                }
                                found = Some((since, t, to));
                            }
                        }
                    }
                    if tie {
                        scan()
                    } else {
                        let best = found.map(|(_, t, to)| (t, to));
                        debug_assert_eq!(best, scan(), "balancing core {busiest}'s kept order");
                        best
                    }
                }
                None => scan(),
            };
            if let Some((thread, to)) = best {
                out.push(Action::Migrate { thread, to });
                return;
            }
        }
    }
}
