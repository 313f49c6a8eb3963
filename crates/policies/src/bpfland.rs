//! scx_bpfland 1.1.4 (sched_ext, crates.io `scx_bpfland` 1.1.4,
//! `src/bpf/main.bpf.c`; the defaults of its `src/main.rs`), as its
//! default options run it on a kernel with `scx_bpf_select_cpu_and`
//! (6.17 and later). Its only asymmetry awareness by default is a bias of a
//! woken thread toward a faster waker's core; the primary domain is every
//! CPU (`--primary-domain auto` resolves to all CPUs under a balanced,
//! performance or unknown power profile, `resolve_energy_domain`) and the
//! capacity-ranked idle scan is off (`--preferred-idle-scan`).
//!
//! Modelled (bpfland's function names):
//! - **Deadlines** (`task_dl`): a thread's key is `dsq_vtime + awake_vtime`,
//!   `dsq_vtime` its runtime (weight 100 for every thread here, so unscaled)
//!   and `awake_vtime` its runtime since it last woke, capped at `slice_lag`
//!   (40 ms, `-l` default); `dsq_vtime` is first raised to at least
//!   `vtime_now - slice_lag * lag_scale`, where `lag_scale` is the thread's
//!   wake-up frequency (`update_freq`: 100 ms over the interval since its
//!   last wake-up, averaged 3:1, capped at 64) shrunk by queue pressure
//!   (`q_thresh / (q_thresh + queued)`, 1 once the queued work spans the
//!   500 ms starvation window). `scx_bpf_dsq_insert_vtime` stores the key as
//!   the thread's `dsq_vtime`, so each insertion adds the awake runtime to
//!   it, as the BPF does. `vtime_now` is the largest key of a thread that
//!   started running (`bpfland_running`); a new thread starts at it
//!   (`bpfland_enable`).
//! - **Slices** (`task_slice`): 1 ms (`-s` default) divided by the threads
//!   queued for the core (its own queue and the shared one), no minimum
//!   (`-L` 0). Enforced at the tick, as sched_ext does (a 4 ms tick at
//!   HZ=250); a thread whose slice ran out keeps its core with a new slice
//!   when nothing waits (`keep_running`). No wake-up preemption.
//! - **Wake-up placement** (`bpfland_select_cpu`, `pick_idle_cpu`): if the
//!   waker's core is faster than the thread's previous one, the previous
//!   core if it is idle and in the waker's cluster, else the search starts
//!   from the waker's core; then the kernel's built-in idle selection
//!   (`scx_bpf_select_cpu_and`, kernel/sched/ext_idle.c, no SMT here): the
//!   previous core if idle, else an idle core of its cluster (the LLC here),
//!   else any idle core (lowest number first; the kernel rotates). An idle
//!   core found takes the thread on its own queue (a per-CPU DSQ, its key
//!   computed before `bpfland_runnable` resets the awake time, as the hooks
//!   run in that order); otherwise the thread joins the shared queue of the
//!   node (one per machine here) with its awake time reset.
//! - **Dispatch** (`bpfland_dispatch`): a core runs the earlier key of its
//!   own queue's head and the shared queue's head (its own on a tie).
//! - A thread whose slice ran out goes back through `bpfland_enqueue`,
//!   which would look for an idle core first (`task_should_migrate`, sticky
//!   tasks off by default); here it joins the shared queue (a core idle at
//!   that instant takes it at its next pick).
//!
//! Left out: SMT and NUMA (none on these machines), per-CPU tasks and
//! kthreads (none), CPU frequency control (off by default), throttling
//! (`-t` 0), sticky tasks (off by default), task weights (all nice 0), and
//! the `WAKE_SYNC` shortcut of the built-in selection (futex wake-ups are
//! not synchronous).

use colab_core::{CoreId, Nanos, Pick, Policy, SchedState, StopReason, ThreadId, WakeKind};
use std::collections::BTreeSet;

/// `slice_max`: `-s 1000` us (main.rs `Opts::slice_us`).
const SLICE_MAX_NS: Nanos = 1_000_000;
/// `slice_lag`: `-l 40000` us (main.rs `Opts::slice_us_lag`).
const SLICE_LAG_NS: Nanos = 40_000_000;
/// `STARVATION_MS` (main.bpf.c) x 1 ms / 10: `task_dl`'s starvation threshold.
const STARVATION_THRESH_NS: Nanos = 5_000 * 1_000_000 / 10;
/// `MAX_WAKEUP_FREQ` (main.bpf.c).
const MAX_WAKEUP_FREQ: u64 = 64;
/// `update_freq`'s numerator: 100 ms.
const FREQ_WINDOW_NS: Nanos = 100_000_000;

/// Which queue a waiting thread is in: a core's own (a per-CPU DSQ) or the
/// shared one (the node DSQ).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Dsq {
    Cpu(CoreId),
    Node,
}

/// A queued thread's place in a DSQ: its key, then insertion order.
type Entry = (u64, u64, ThreadId);

#[derive(Clone, Debug, Default)]
struct Task {
    dsq_vtime: u64,
    awake_vtime: u64,
    wakeup_freq: u64,
    last_woke_at: Nanos,
    /// The slice given at its last insertion.
    slice: Nanos,
    /// The queue and entry it waits in, if queued.
    queued: Option<(Dsq, Entry)>,
    /// A placement chosen in `select_core`, applied when it is queued.
    pending: Option<(Dsq, u64, Nanos)>,
}

#[derive(Clone, Debug, Default)]
pub struct Bpfland {
    tasks: Vec<Task>,
    vtime_now: u64,
    seq: u64,
    cpu_dsq: Vec<BTreeSet<Entry>>,
    node_dsq: BTreeSet<Entry>,
    /// Per core: when its current thread's slice began, and its length.
    slice_at: Vec<(Nanos, Nanos)>,
}

impl Bpfland {
    pub fn new() -> Bpfland {
        Bpfland::default()
    }

    fn init(&mut self, st: &SchedState) {
        let n = st.topo.num_cores();
        if self.cpu_dsq.len() != n {
            self.cpu_dsq = vec![BTreeSet::new(); n];
            self.slice_at = vec![(0, SLICE_MAX_NS); n];
        }
        if self.tasks.len() < st.threads.len() {
            self.tasks.resize(st.threads.len(), Task::default());
        }
    }

    /// Threads queued for core `c`: its own DSQ and the shared one.
    fn nr_queued(&self, c: CoreId) -> u64 {
        (self.cpu_dsq[c.idx()].len() + self.node_dsq.len()) as u64
    }

    /// `task_slice`: the slice divided among the threads queued for `c`.
    fn task_slice(&self, c: CoreId) -> Nanos {
        (SLICE_MAX_NS / self.nr_queued(c).max(1)).max(1)
    }

    /// `task_dl`: `t`'s key for a DSQ of core `c` (clamping its vruntime
    /// and awake time as the BPF does).
    fn task_dl(&mut self, c: CoreId, t: ThreadId) -> u64 {
        let q_thresh = (STARVATION_THRESH_NS / SLICE_MAX_NS).max(1);
        let queued = self.nr_queued(c);
        let tk = &mut self.tasks[t.idx()];
        let lag_scale = if queued * SLICE_MAX_NS >= STARVATION_THRESH_NS {
            1
        } else {
            (tk.wakeup_freq.max(1) * q_thresh / (q_thresh + queued)).max(1)
        };
        let vtime_min = self
            .vtime_now
            .saturating_sub(SLICE_LAG_NS.saturating_mul(lag_scale));
        tk.dsq_vtime = tk.dsq_vtime.max(vtime_min);
        tk.awake_vtime = tk.awake_vtime.min(SLICE_LAG_NS);
        tk.dsq_vtime + tk.awake_vtime
    }

    /// `bpfland_runnable`: a wake-up resets the awake time and updates
    /// the wake-up frequency.
    fn runnable(&mut self, now: Nanos, t: ThreadId) {
        let tk = &mut self.tasks[t.idx()];
        tk.awake_vtime = 0;
        let interval = now.saturating_sub(tk.last_woke_at).max(1);
        let new = FREQ_WINDOW_NS / interval;
        // calc_avg: 3/4 of the old value plus 1/4 of the new.
        let avg = (tk.wakeup_freq - (tk.wakeup_freq >> 2)) + (new >> 2);
        tk.wakeup_freq = avg.min(MAX_WAKEUP_FREQ);
        tk.last_woke_at = now;
    }

    fn is_free(st: &SchedState, c: CoreId) -> bool {
        st.is_idle(c) && st.core(c).rq.is_empty()
    }

    /// The built-in idle selection without SMT: `prev` if idle, else an idle
    /// core of its cluster, else any idle core.
    fn builtin_idle(st: &SchedState, prev: CoreId) -> Option<CoreId> {
        if Self::is_free(st, prev) {
            return Some(prev);
        }
        // Masks, not a scan of every core: machines go to 1,024 cores.
        let free = st.idle_mask().minus(st.queued_mask());
        let cluster = st.topo.cluster_mask(st.topo.cluster_of(prev));
        free.intersect(cluster)
            .iter()
            .next()
            .or_else(|| free.iter().next())
    }

    /// `pick_idle_cpu`: the faster waker's pull, then the built-in selection.
    fn pick_idle(
        &self,
        st: &SchedState,
        prev: CoreId,
        waker_core: Option<CoreId>,
    ) -> Option<CoreId> {
        let mut prev = prev;
        if let Some(w) = waker_core {
            if st.topo.capacity(w) > st.topo.capacity(prev) {
                if st.topo.cluster_of(w) == st.topo.cluster_of(prev) && Self::is_free(st, prev) {
                    return Some(prev);
                }
                prev = w;
            }
        }
        Self::builtin_idle(st, prev)
    }

    /// The earlier of `c`'s own DSQ head and the shared DSQ head.
    fn first_for(&self, c: CoreId) -> Option<Entry> {
        let own = self.cpu_dsq[c.idx()].first().copied();
        let node = self.node_dsq.first().copied();
        match (own, node) {
            // `is_deadline_min(q, p)`: the shared head only if strictly earlier.
            (Some(p), Some(q)) if q.0 < p.0 => Some(q),
            (Some(p), _) => Some(p),
            (None, q) => q,
        }
    }

    fn insert(&mut self, t: ThreadId, dsq: Dsq, key: u64, slice: Nanos) {
        self.seq += 1;
        let e = (key, self.seq, t);
        match dsq {
            Dsq::Cpu(c) => self.cpu_dsq[c.idx()].insert(e),
            Dsq::Node => self.node_dsq.insert(e),
        };
        let tk = &mut self.tasks[t.idx()];
        tk.dsq_vtime = key;
        tk.slice = slice;
        tk.queued = Some((dsq, e));
    }

    /// The key `t` waits with, if queued.
    #[cfg(test)]
    pub(crate) fn queued_key(&self, t: ThreadId) -> Option<u64> {
        self.tasks[t.idx()].queued.map(|(_, e)| e.0)
    }

    fn take_out(&mut self, t: ThreadId) {
        if let Some((dsq, e)) = self.tasks[t.idx()].queued.take() {
            match dsq {
                Dsq::Cpu(c) => self.cpu_dsq[c.idx()].remove(&e),
                Dsq::Node => self.node_dsq.remove(&e),
            };
        }
    }
}

impl Policy for Bpfland {
    fn name(&self) -> &'static str {
        "bpfland"
    }

    fn reads_predictions(&self) -> bool {
        false
    }

    fn thread_created(&mut self, st: &SchedState, t: ThreadId) {
        self.init(st);
        // bpfland_enable: a new thread starts at the current vtime.
        self.tasks[t.idx()] = Task {
            dsq_vtime: self.vtime_now,
            ..Task::default()
        };
    }

    fn select_core(&mut self, st: &SchedState, t: ThreadId, kind: WakeKind) -> CoreId {
        self.init(st);
        let th = st.thread(t);
        let (prev, waker_core) = match kind {
            WakeKind::New { parent } => {
                let parent_core = parent.and_then(|p| st.thread(p).core);
                (th.last_core.or(parent_core).unwrap_or(CoreId(0)), None)
            }
            WakeKind::Wakeup { waker, .. } => (
                th.last_core.unwrap_or(CoreId(0)),
                waker.and_then(|w| st.thread(w).core),
            ),
        };
        let pending = if let Some(c) = self.pick_idle(st, prev, waker_core) {
            // Direct dispatch from select_cpu: keyed before bpfland_runnable.
            let key = self.task_dl(c, t);
            let slice = self.task_slice(c);
            self.runnable(st.now, t);
            (Dsq::Cpu(c), key, slice)
        } else {
            self.runnable(st.now, t);
            let key = self.task_dl(prev, t);
            (Dsq::Node, key, self.task_slice(prev))
        };
        self.tasks[t.idx()].pending = Some(pending);
        match pending.0 {
            Dsq::Cpu(c) => c,
            Dsq::Node => prev,
        }
    }

    fn enqueued(&mut self, _st: &SchedState, c: CoreId, t: ThreadId, _wakeup: bool) {
        self.take_out(t);
        let (dsq, key, slice) = match self.tasks[t.idx()].pending.take() {
            Some(p) => p,
            // A preempted (or moved) thread: bpfland_enqueue's shared queue.
            None => {
                let key = self.task_dl(c, t);
                (Dsq::Node, key, self.task_slice(c))
            }
        };
        self.insert(t, dsq, key, slice);
    }

    fn should_preempt(&mut self, _st: &SchedState, _c: CoreId, _t: ThreadId) -> bool {
        false
    }

    fn pick_next(&mut self, st: &SchedState, c: CoreId) -> Pick {
        self.init(st);
        let Some((_, _, t)) = self.first_for(c) else {
            return Pick::Idle;
        };
        match st.thread(t).core {
            Some(from) if from != c => Pick::Steal { from, thread: t },
            _ => Pick::Local(t),
        }
    }

    fn running(&mut self, st: &SchedState, c: CoreId, t: ThreadId) {
        self.take_out(t);
        let tk = &self.tasks[t.idx()];
        self.vtime_now = self.vtime_now.max(tk.dsq_vtime);
        self.slice_at[c.idx()] = (st.now, tk.slice.max(1));
    }

    fn stopped(&mut self, _st: &SchedState, _c: CoreId, t: ThreadId, ran: Nanos, _why: StopReason) {
        // bpfland_stopping: the runtime is charged to both clocks.
        let tk = &mut self.tasks[t.idx()];
        tk.dsq_vtime += ran;
        tk.awake_vtime += ran;
    }

    fn slice_ns(&self, _st: &SchedState, _c: CoreId, t: ThreadId) -> Nanos {
        self.tasks[t.idx()].slice.max(1)
    }

    fn tick(&mut self, st: &SchedState, c: CoreId, _out: &mut Vec<colab_core::Action>) -> bool {
        let (from, len) = self.slice_at[c.idx()];
        if st.now.saturating_sub(from) < len {
            return false;
        }
        if self.first_for(c).is_some() {
            return true;
        }
        // keep_running: nothing waits, so the slice is refilled.
        self.slice_at[c.idx()] = (st.now, self.task_slice(c));
        false
    }
}
