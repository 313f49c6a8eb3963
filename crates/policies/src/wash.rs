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
}

impl Wash {
    pub fn new(params: WashParams) -> Wash {
        Wash {
            params,
            cfs: None,
            hist: Vec::new(),
        }
    }

    fn cfs(&mut self, st: &SchedState) -> &mut CfsCore {
        self.cfs.get_or_insert_with(|| CfsCore::new(st))
    }

    /// The affinity Algorithm 1 gives every live thread now.
    pub fn compute_affinities(&mut self, st: &SchedState) -> Vec<(ThreadId, CoreMask)> {
        let topo = &st.topo;
        let big = topo.big_mask();
        let all = topo.all_mask();
        let live: Vec<ThreadId> = st.live_threads().map(|t| t.id).collect();
        // Update history for the quantum that just ended.
        let mut got: Vec<Nanos> = Vec::with_capacity(live.len());
        for &t in &live {
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
            got.push(d_exec);
        }
        if !topo.is_asymmetric() {
            return live.iter().map(|&t| (t, all)).collect();
        }
        // Line 7-8: no more application threads than big cores.
        if live.len() <= big.count() {
            return live.iter().map(|&t| (t, big)).collect();
        }
        let lock_pct = |t: ThreadId| {
            let th = st.thread(t);
            let age = st.now.saturating_sub(th.created_at).max(1);
            th.mutex_wait_ns as f64 / age as f64
        };
        let contended = live.iter().any(|&t| lock_pct(t) >= self.params.lock_thresh);
        let behind = self.someone_behind(st, &live, &got);
        // Line 11-12: scalable and no contention: every thread on every core.
        if !contended && !behind {
            return live.iter().map(|&t| (t, all)).collect();
        }
        // Lines 14-19: non-scalable.
        let mut chosen = vec![false; live.len()];
        // ExecRank over active threads.
        let mut active: Vec<(usize, f64)> = live
            .iter()
            .enumerate()
            .filter(|(_, &t)| self.hist[t.idx()].idle_quanta < 2)
            .map(|(i, &t)| {
                (
                    i,
                    self.hist[t.idx()].adjusted * st.thread(t).predicted_speedup.max(1.0),
                )
            })
            .collect();
        active.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        let total: f64 = active.iter().map(|a| a.1).sum();
        let cap_big: f64 = big.iter().map(|c| topo.capacity(c)).sum();
        let cap_all: f64 = topo.cores().map(|c| topo.capacity(c)).sum();
        let share = cap_big / cap_all;
        let mut acc = 0.0;
        for &(i, v) in &active {
            if total <= 0.0 || acc + v > share * total + 1e-9 {
                break;
            }
            acc += v;
            chosen[i] = true;
        }
        // LockRank over the threads others waited on.
        let mut by_lock: Vec<(usize, Nanos)> = live
            .iter()
            .enumerate()
            .map(|(i, &t)| (i, st.thread(t).mutex_blocked_others_ns))
            .filter(|&(_, b)| b > 0)
            .collect();
        by_lock.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let frac = big.count() as f64 / topo.num_cores() as f64;
        let k = (frac * live.len() as f64).ceil() as usize;
        for &(i, _) in by_lock.iter().take(k) {
            chosen[i] = true;
        }
        live.iter()
            .zip(chosen)
            .map(|(&t, c)| (t, if c { big } else { all }))
            .collect()
    }

    fn someone_behind(&self, st: &SchedState, live: &[ThreadId], got: &[Nanos]) -> bool {
        // Per program: mean CPU time of threads that were runnable or running.
        let mut sums: Vec<(u64, u64)> = Vec::new();
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
                && (got[i] as f64) < self.params.behind_frac * (s as f64 / n as f64)
        })
    }
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
        let aff = self.compute_affinities(st);
        for (t, mask) in aff {
            let cfs = self.cfs(st);
            cfs.set_allowed(t, mask);
            // sched_setaffinity moves a thread off a core it may no longer use.
            if let Some(c) = st.thread(t).core {
                if !mask.contains(c) {
                    if let Some(to) = cfs.idlest_in(st, t, mask) {
                        out.push(Action::Migrate { thread: t, to });
                    }
                }
            }
        }
    }
}
