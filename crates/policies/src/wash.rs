//! WASH (wash-cgo16 Algorithm 1) as the COLAB authors re-implemented it
//! inside Linux (colab-cgo20-evaluation, "Schedulers"): every 40 ms quantum it
//! sets the affinity of every application thread, and CFS dispatches within
//! those affinities.
//!
//! Our reading of the parts Algorithm 1 leaves to the text:
//! - T_A is every live thread of the workload (the Linux version "controls all
//!   application threads"); there are no VM service threads.
//! - Lock%(t) = time waiting for mutexes / time since the thread was created
//!   (wash-cgo16 section 4: "the time each thread contends (waits) for another
//!   thread to release a lock"; joins, barriers and condition waits are not
//!   lock contention); the threshold is 0.5 (wash-cgo16 section 6, "We
//!   empirically established a threshold of 0.5").
//! - Progress check ("contention detected using thread progress"): a thread
//!   that received less than half the CPU time of the average active thread of
//!   its program in the last quantum has fallen behind; if any has, the
//!   workload is treated as non-scalable.
//! - ExecRank: threads active in the last two quanta ranked by adjusted
//!   priority = (retired work, with work retired on non-big cores scaled up by
//!   the predicted speedup) x predicted speedup; the top threads go to big
//!   cores while their share of the total stays within the big cores'
//!   relative capacity to retire instructions, sum(cap big) / sum(cap all).
//! - LockRank: threads ranked by the mutex waiting time they caused others
//!   (the lock holders "delaying the most work"); the top ceil(B / (B + S) x |T_A|) threads with a
//!   non-zero rank go to big cores.
//! - New threads start bound to the big cores (WASH's fallback policy).
//! - A thread whose new affinity excludes its current core is migrated to the
//!   least loaded allowed core, as sched_setaffinity does.

use crate::cfs::CfsCore;
use colab_core::{
    Action, CoreId, CoreMask, Nanos, Pick, Policy, RunState, SchedState, StopReason, ThreadId,
    WakeKind, NS_PER_MS,
};
use std::cmp::Reverse;

#[derive(Clone, Debug, PartialEq)]
pub struct WashParams {
    /// Scheduling quantum (wash-cgo16 section 6: 40 ms).
    pub quantum_ns: Nanos,
    /// Lock-contention threshold (wash-cgo16 section 6: 0.5).
    pub lock_thresh: f64,
    /// A thread is behind when it got less than this fraction of its program's
    /// mean CPU time in the last quantum (our reading of the progress check).
    pub behind_frac: f64,
}

impl Default for WashParams {
    fn default() -> Self {
        WashParams {
            quantum_ns: 40 * NS_PER_MS,
            lock_thresh: 0.5,
            behind_frac: 0.5,
        }
    }
}

#[derive(Clone, Debug, Default)]
struct Hist {
    last_exec: Nanos,
    last_retired: f64,
    /// Retired work normalised to big-core progress.
    adjusted: f64,
    /// Quanta since the thread last ran.
    idle_quanta: u32,
}

pub struct Wash {
    pub params: WashParams,
    cfs: Option<CfsCore>,
    hist: Vec<Hist>,
    /// Buffers of the last quantum, kept so that a pass over thousands of
    /// threads per quantum allocates nothing.
    scratch: Scratch,
}

/// Where Algorithm 1 puts a thread: on the big cores, or on any core.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    Big,
    All,
}

#[derive(Default)]
struct Scratch {
    live: Vec<ThreadId>,
    got: Vec<Nanos>,
    /// ExecRank entries: (sort key, index into `live`, adjusted priority).
    active: Vec<(Reverse<i64>, usize, f64)>,
    by_lock: Vec<(Reverse<Nanos>, usize)>,
    chosen: Vec<bool>,
    sums: Vec<(u64, u64)>,
    places: Vec<(ThreadId, Place)>,
}

/// An i64 whose order is `f64::total_cmp`'s (the same mapping), so that a
/// sort by it is an integer sort.
fn total_key(v: f64) -> i64 {
    let k = v.to_bits() as i64;
    k ^ (((k >> 63) as u64) >> 1) as i64
}

impl Wash {
    pub fn new(params: WashParams) -> Wash {
        Wash {
            params,
            cfs: None,
            hist: Vec::new(),
            scratch: Scratch::default(),
        }
    }

    fn cfs(&mut self, st: &SchedState) -> &mut CfsCore {
        self.cfs.get_or_insert_with(|| CfsCore::new(st))
    }

    /// The affinity Algorithm 1 gives every live thread now.
    pub fn compute_affinities(&mut self, st: &SchedState) -> Vec<(ThreadId, CoreMask)> {
        let (big, all) = (st.topo.big_mask(), st.topo.all_mask());
        self.place(st);
        self.scratch
            .places
            .iter()
            .map(|&(t, p)| (t, if p == Place::Big { big } else { all }))
            .collect()
    }

    /// Algorithm 1 for every live thread, into `scratch.places`.
    fn place(&mut self, st: &SchedState) {
        let topo = &st.topo;
        let big = topo.big_mask();
        let s = &mut self.scratch;
        s.places.clear();
        s.live.clear();
        s.live.extend(st.live_threads().map(|t| t.id));
        let live = &s.live;
        // Update history for the quantum that just ended.
        s.got.clear();
        for &t in live {
            let th = st.thread(t);
            if self.hist.len() <= t.idx() {
                self.hist.resize(t.idx() + 1, Hist::default());
            }
            let h = &mut self.hist[t.idx()];
            let d_exec = th.sum_exec_ns - h.last_exec;
            let d_ret = th.retired - h.last_retired;
            let on_big = th.last_core.is_some_and(|c| topo.is_big(c));
            h.adjusted += if on_big {
                d_ret
            } else {
                d_ret * th.predicted_speedup.max(1.0)
            };
            h.last_exec = th.sum_exec_ns;
            h.last_retired = th.retired;
            h.idle_quanta = if d_exec > 0 { 0 } else { h.idle_quanta + 1 };
            s.got.push(d_exec);
        }
        let every = |s: &mut Scratch, p: Place| {
            let Scratch { live, places, .. } = s;
            places.extend(live.iter().map(|&t| (t, p)));
        };
        if !topo.is_asymmetric() {
            return every(s, Place::All);
        }
        // Line 7-8: no more application threads than big cores.
        if live.len() <= big.count() {
            return every(s, Place::Big);
        }
        let lock_pct = |t: ThreadId| {
            let th = st.thread(t);
            let age = st.now.saturating_sub(th.created_at).max(1);
            th.mutex_wait_ns as f64 / age as f64
        };
        let contended = live.iter().any(|&t| lock_pct(t) >= self.params.lock_thresh);
        let behind = someone_behind(&self.params, st, live, &s.got, &mut s.sums);
        // Line 11-12: scalable and no contention: every thread on every core.
        if !contended && !behind {
            return every(s, Place::All);
        }
        // Lines 14-19: non-scalable.
        s.chosen.clear();
        s.chosen.resize(live.len(), false);
        // ExecRank over active threads, by priority descending, then index.
        s.active.clear();
        s.active.extend(
            live.iter()
                .enumerate()
                .filter(|(_, &t)| self.hist[t.idx()].idle_quanta < 2)
                .map(|(i, &t)| {
                    let v = self.hist[t.idx()].adjusted * st.thread(t).predicted_speedup.max(1.0);
                    (Reverse(total_key(v)), i, v)
                }),
        );
        // Keys are distinct (the index is in them): unstable is stable here.
        s.active.sort_unstable_by_key(|&(k, i, _)| (k, i));
        debug_assert!(
            s.active
                .is_sorted_by(|a, b| b.2.total_cmp(&a.2).then(a.1.cmp(&b.1)).is_le()),
            "ExecRank keys order as total_cmp"
        );
        let total: f64 = s.active.iter().map(|a| a.2).sum();
        let cap_big: f64 = big.iter().map(|c| topo.capacity(c)).sum();
        let cap_all: f64 = topo.cores().map(|c| topo.capacity(c)).sum();
        let share = cap_big / cap_all;
        let mut acc = 0.0;
        for &(_, i, v) in &s.active {
            if total <= 0.0 || acc + v > share * total + 1e-9 {
                break;
            }
            acc += v;
            s.chosen[i] = true;
        }
        // LockRank over the threads others waited on.
        s.by_lock.clear();
        s.by_lock.extend(
            live.iter()
                .enumerate()
                .map(|(i, &t)| (Reverse(st.thread(t).mutex_blocked_others_ns), i))
                .filter(|&(Reverse(b), _)| b > 0),
        );
        s.by_lock.sort_unstable();
        let frac = big.count() as f64 / topo.num_cores() as f64;
        let k = (frac * live.len() as f64).ceil() as usize;
        for &(_, i) in s.by_lock.iter().take(k) {
            s.chosen[i] = true;
        }
        s.places.extend(
            live.iter()
                .zip(&s.chosen)
                .map(|(&t, &c)| (t, if c { Place::Big } else { Place::All })),
        );
    }
}

/// The progress check: has a runnable or running thread got less than
/// `behind_frac` of its program's mean CPU time in the last quantum?
fn someone_behind(
    params: &WashParams,
    st: &SchedState,
    live: &[ThreadId],
    got: &[Nanos],
    sums: &mut Vec<(u64, u64)>,
) -> bool {
    // Per program: mean CPU time of threads that were runnable or running.
    sums.clear();
    for (i, &t) in live.iter().enumerate() {
        let p = st.thread(t).program.idx();
        if sums.len() <= p {
            sums.resize(p + 1, (0, 0));
        }
        if matches!(st.thread(t).state, RunState::Runnable | RunState::Running) {
            sums[p].0 += got[i];
            sums[p].1 += 1;
        }
    }
    live.iter().enumerate().any(|(i, &t)| {
        let th = st.thread(t);
        let (s, n) = sums[th.program.idx()];
        n >= 2
            && matches!(th.state, RunState::Runnable | RunState::Running)
            && (got[i] as f64) < params.behind_frac * (s as f64 / n as f64)
    })
}

impl Policy for Wash {
    fn name(&self) -> &'static str {
        "wash"
    }
    fn thread_created(&mut self, st: &SchedState, t: ThreadId) {
        let big = st.topo.big_mask();
        let c = self.cfs(st);
        c.thread_created(t);
        // Fallback policy: new application threads start on the big cores.
        c.set_allowed(t, big);
    }
    fn select_core(&mut self, st: &SchedState, t: ThreadId, kind: WakeKind) -> CoreId {
        self.cfs(st).select(st, t, kind)
    }
    fn enqueued(&mut self, st: &SchedState, c: CoreId, t: ThreadId, wakeup: bool) {
        let new = st.thread(t).last_core.is_none() && wakeup;
        self.cfs(st).enqueued(st, c, t, wakeup, new);
    }
    fn should_preempt(&mut self, st: &SchedState, c: CoreId, t: ThreadId) -> bool {
        self.cfs(st).wakeup_preempt(st, c, t, 1.0)
    }
    fn pick_next(&mut self, st: &SchedState, c: CoreId) -> Pick {
        self.cfs(st).pick(st, c)
    }
    fn stopped(&mut self, st: &SchedState, c: CoreId, t: ThreadId, ran: Nanos, _why: StopReason) {
        self.cfs(st).stopped(st, c, t, ran, 1.0);
    }
    fn migrated(&mut self, st: &SchedState, t: ThreadId, from: CoreId, to: CoreId) {
        self.cfs(st).migrated(st, t, from, to);
    }
    fn slice_ns(&self, st: &SchedState, c: CoreId, _t: ThreadId) -> Nanos {
        self.cfs.as_ref().map_or(NS_PER_MS, |k| k.slice(st, c))
    }
    fn tick(&mut self, st: &SchedState, c: CoreId, out: &mut Vec<Action>) -> bool {
        let k = self.cfs(st);
        k.periodic_balance(st, c, out);
        k.tick_preempt(st, c, 1.0)
    }
    fn period_ns(&self) -> Option<Nanos> {
        Some(self.params.quantum_ns)
    }
    fn periodic(&mut self, st: &SchedState, out: &mut Vec<Action>) {
        self.place(st);
        let big = st.topo.big_mask();
        let cfs = self.cfs.get_or_insert_with(|| CfsCore::new(st));
        // Two masks, looked up once rather than per thread.
        let (big_i, all_i) = (cfs.mask_index(big), cfs.mask_index(st.topo.all_mask()));
        for &(t, place) in &self.scratch.places {
            cfs.set_allowed_index(t, if place == Place::Big { big_i } else { all_i });
            // sched_setaffinity moves a thread off a core it may no longer use.
            if let Some(c) = st.thread(t).core {
                if place == Place::Big && !big.contains(c) {
                    if let Some(to) = cfs.idlest_in(st, t, big) {
                        out.push(Action::Migrate { thread: t, to });
                    }
                }
            }
        }
    }
}
