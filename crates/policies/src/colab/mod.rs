//! COLAB (colab-tpds sections 4-5, Fig. 6): a labeller every 10 ms, a
//! hierarchical round-robin core allocator driven by speedup and blocking
//! labels, a biased-global thread selector that runs the most blocking thread
//! first and lets big cores take threads from little ones, and scale-slice
//! preemption for equal progress. Built on the CFS core for vruntime.
//!
//! Where the paper leaves a choice open we made it once, here, for every
//! workload (see [`ColabParams`]):
//! - The labels (speedup in thirds of the machine's range, blocking as a
//!   per-period average of the waiting a thread causes) are the shared
//!   labeller's, `colab-labels`, which scx_colab runs too. The speedup range
//!   [s_min, s_max] comes from the core types' performance models.
//! - rr_allocator: round-robin over the candidate cores starting after the
//!   last choice, taking the first idle core and otherwise the first of the
//!   shortest run queues (the paper says round-robin "helps keep the system
//!   load balanced"; going by queue length is our reading of that).
//!   Hierarchical: for the all-cores set, clusters alternate first.
//! - max_block_ picks the most blocking thread, but only among threads whose
//!   vruntime is within one sched_latency of the queue's smallest, so that
//!   bottleneck-first never starves the rest (the paper keeps CFS's fairness
//!   underneath; this bound is our reading of "as long as it does not affect
//!   fairness", colab-cgo20-evaluation).
//! - The papers implement COLAB by overriding `pick_next_task_fair()` and
//!   `select_task_rq_fair()` (colab-tpds 5.3); the periodic load balancer,
//!   run from the tick outside both, stays as CFS's (since 2026-12-06; it
//!   was missing before).
//! - Scale-slice: on a big core, the slice is the CFS slice divided by the
//!   thread's predicted speedup and vruntime advances by runtime times the
//!   speedup, so equal vruntime means equal progress in little-core time.
//! - A core with an empty queue takes the most blocking queued thread of its
//!   own cluster, then of the rest of the machine (Fig. 6:
//!   `max_block_(c.sched_domain.rq)`), whatever its speedup label: "core
//!   sensitivity is usually unimportant to the thread selector", the one
//!   exception being an idle *big* core (colab-tpds 4). Little cores never
//!   preempt big ones. (An earlier reading here kept high-speedup threads
//!   away from little cores' steals; Fig. 6 has no such filter, and with one
//!   big core it left little cores idle beside a long big-core queue.)

use crate::cfs::CfsCore;
use crate::propsp::ord_f64;
use crate::queue_index::{is_queued_on, QueueIndex, RunningIndex};
use colab_core::{
    Action, CoreId, CoreMask, Nanos, Pick, Policy, RunState, SchedState, StopReason, ThreadId,
    WakeKind,
};
pub use colab_labels::SpeedupLabel;
use colab_labels::{BlockTracker, SpeedupRange};
use std::cmp::{Ordering, Reverse};

mod params;
mod steal;

use steal::{Entry, Steal, StealMemo};

pub use params::{ColabParams, LabelMode, Mechanisms, COLAB_E_DEFAULT_WEIGHTS, OPTIONS_HELP};

/// max_block_'s order within one queue: most blocking first, then the
/// smallest vruntime (lag, on one queue), then the lowest id (the set's
/// thread id).
type BlockKey = (Reverse<i64>, i64);

/// An idle big core's order of the threads running on little cores: most
/// blocking, then the highest predicted speedup, then the lowest id.
type RemoteKey = (Reverse<i64>, Reverse<i64>);

#[derive(Clone, Debug, Default)]
struct Labels {
    speedup: SpeedupLabel,
    high_block: bool,
    block: BlockTracker,
}

pub struct Colab {
    pub params: ColabParams,
    cfs: Option<CfsCore>,
    labels: Vec<Labels>,
    /// Round-robin cursor per candidate set (big, little, all).
    rr: [usize; 3],
    /// Range of the labelled quantity (speedup, or hyper) over the machine.
    range: SpeedupRange,
    /// Scratch for rank labelling (values, order, labels, thread ids).
    rank_scratch: (Vec<f64>, Vec<usize>, Vec<SpeedupLabel>, Vec<ThreadId>),
    /// Long queues in max_block_'s order, so that a pick reads the first
    /// entry inside the fairness window instead of passing over the queue.
    by_block: QueueIndex<BlockKey>,
    /// Per steal domain (two per cluster: its own cores, the others), its
    /// queued cores as the last steal at the same instant saw them.
    memos: Vec<StealMemo>,
    /// Scratch for a steal without a memo (machines of up to 64 cores).
    entries: Vec<Entry>,
    /// The instant the touch log was last cleared at.
    log_now: Option<Nanos>,
    /// The cores whose CFS stamp this policy renewed (every call that
    /// touches one goes through a hook below) since the log was cleared,
    /// in order, kept on machines of more than 64 cores for the steal
    /// memos; past a few entries per core it is cleared and its epoch
    /// renewed, so that it stays short between steals.
    touched: Vec<CoreId>,
    log_on: bool,
    log_epoch: u64,
    /// The threads running on little cores by [`RemoteKey`], on machines
    /// with many little cores (see [`Colab::remote_kept`]).
    on_little: RunningIndex<RemoteKey>,
    /// Per core, a steal's view of its queue (see [`Steal`]).
    steal_view: Vec<Steal>,
}

/// A candidate with its lag (or vruntime) and its blocking level, so that
/// ranking it reads no label.
type Ranked = (ThreadId, i64, f64);

/// max_block_'s order on [`Ranked`] candidates, as [`Colab::block_cmp`].
fn ranked_cmp((a, la, va): Ranked, (b, lb, vb): Ranked) -> Ordering {
    va.total_cmp(&vb)
        .then_with(|| lb.cmp(&la))
        .then_with(|| b.cmp(&a))
}

impl Colab {
    pub fn new(params: ColabParams) -> Colab {
        Colab {
            params,
            cfs: None,
            labels: Vec::new(),
            rr: [0; 3],
            range: SpeedupRange { min: 1.0, max: 1.0 },
            rank_scratch: Default::default(),
            by_block: QueueIndex::new(0),
            memos: Vec::new(),
            entries: Vec::new(),
            log_now: None,
            touched: Vec::new(),
            log_on: false,
            log_epoch: 0,
            on_little: RunningIndex::new(CoreMask::EMPTY),
            steal_view: Vec::new(),
        }
    }

    fn init(&mut self, st: &SchedState) {
        if self.cfs.is_none() {
            self.cfs = Some(CfsCore::new(st));
            self.by_block = QueueIndex::new(st.topo.num_cores());
            self.on_little = RunningIndex::new(st.topo.little_mask());
            self.steal_view = vec![Steal::default(); st.topo.num_cores()];
            self.memos = vec![StealMemo::default(); 2 * st.topo.clusters.len()];
            if st.topo.num_cores() > 64 {
                self.log_on = true;
            }
            let f = &st.topo.core_types[st.topo.fastest_type];
            let s = &st.topo.core_types[st.topo.slowest_type];
            // The range over every possible phase (memory fraction 0..1).
            // Speedup is monotone in it, so the ends suffice for plain COLAB;
            // hyper need not be, so scan a grid.
            let steps = if self.params.is_energy_aware() {
                100
            } else {
                1
            };
            let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
            for i in 0..=steps {
                let m = i as f64 / steps as f64;
                let speedup = f.rate(m) / s.rate(m);
                let energy = f.energy_per_work(m) / s.energy_per_work(m).max(1e-12);
                let h = self.hyper(speedup, energy);
                lo = lo.min(h);
                hi = hi.max(h);
            }
            self.range = SpeedupRange { min: lo, max: hi };
        }
    }

    /// What the allocator's labels rank: speedup, or the energy-aware hyper.
    fn hyper(&self, speedup: f64, energy_ratio: f64) -> f64 {
        if self.params.is_energy_aware() {
            self.params.speedup_weight * speedup + self.params.energy_weight * energy_ratio
        } else {
            speedup
        }
    }

    /// The label of a thread from its current predictions.
    fn label_of(&self, st: &SchedState, t: ThreadId) -> SpeedupLabel {
        self.speedup_label(self.label_value(st, t))
    }

    fn cfs(&self) -> &CfsCore {
        self.cfs.as_ref().expect("initialised on first thread")
    }

    /// Label from a predicted speedup (or hyper value, when energy-aware).
    /// Rank labels need the other threads: this gives medium for them.
    pub fn speedup_label(&self, s: f64) -> SpeedupLabel {
        match self.params.label_mode {
            LabelMode::Range => self.range.label(s, &self.params.labels),
            LabelMode::Rank | LabelMode::Medium => SpeedupLabel::Medium,
            LabelMode::Fixed { hi, lo } => {
                if s >= hi {
                    SpeedupLabel::High
                } else if s <= lo {
                    SpeedupLabel::Low
                } else {
                    SpeedupLabel::Medium
                }
            }
        }
    }

    /// The labelled quantity of `t` (speedup, or hyper).
    fn label_value(&self, st: &SchedState, t: ThreadId) -> f64 {
        let th = st.thread(t);
        self.hyper(th.predicted_speedup, th.predicted_energy_ratio)
    }

    /// How much faster `t` progresses on `c` than on the slowest cores,
    /// from its predicted speedup (interpolated by capacity for middle types).
    fn progress_scale(&self, st: &SchedState, c: CoreId, t: ThreadId) -> f64 {
        let topo = &st.topo;
        if !self.params.mech.scale_slice || !topo.is_asymmetric() || topo.is_little(c) {
            return 1.0;
        }
        let s = st.thread(t).predicted_speedup.max(1.0);
        if topo.is_big(c) {
            return s;
        }
        let cap_min = topo.core_types[topo.slowest_type].compute_rate;
        let cap_max = topo.core_types[topo.fastest_type].compute_rate;
        let x = (topo.core_type(c).compute_rate - cap_min) / (cap_max - cap_min);
        1.0 + (s - 1.0) * x
    }

    fn block_level(&self, t: ThreadId) -> f64 {
        self.labels.get(t.idx()).map_or(0.0, |l| l.block.level)
    }

    /// Round-robin over `mask`: first idle core after the cursor, else the
    /// first of the shortest queues.
    fn rr_allocator(&mut self, st: &SchedState, set: usize, mask: CoreMask) -> CoreId {
        let n = st.topo.num_cores();
        let start = CoreId((self.rr[set] % n.max(1)) as u16);
        let pick = mask
            .intersect(st.idle_mask())
            .iter_from(start)
            .find(|&c| st.core(c).rq.is_empty())
            .or_else(|| {
                // The first of the shortest queues from the cursor on.
                let (_, least) = st.least_loaded_in(mask)?;
                least.iter_from(start).next()
            })
            .unwrap_or(CoreId(0));
        self.rr[set] = pick.idx() + 1;
        pick
    }

    /// max_block_: the most blocking thread among `cands`, within the
    /// fairness window. Each candidate comes with its vruntime *lag*: its
    /// vruntime less the min_vruntime of the queue that holds it, since
    /// queues' vruntime bases differ and a steal must compare like with like.
    /// With block-first off it is CFS's choice: the smallest lag.
    fn max_block(&self, cands: impl Iterator<Item = (ThreadId, i64)> + Clone) -> Option<ThreadId> {
        if !self.params.mech.block_first {
            return cands.min_by_key(|&(t, lag)| (lag, t)).map(|(t, _)| t);
        }
        let min_lag = cands.clone().map(|(_, lag)| lag).min()?;
        let window = self.window();
        cands
            .filter(|&(_, lag)| lag <= min_lag.saturating_add(window))
            .max_by(|&a, &b| self.block_cmp(a, b))
            .map(|(t, _)| t)
    }

    /// The fairness window in vruntime (saturating for `window=inf`).
    fn window(&self) -> i64 {
        let window = self.cfs().tun.latency_ns as f64 * self.params.fairness_window;
        if window >= i64::MAX as f64 / 4.0 {
            i64::MAX / 4
        } else {
            window as i64
        }
    }

    /// max_block_'s order on (thread, lag): more blocking first; ties:
    /// smaller lag first (CFS order), then lower id.
    fn block_cmp(&self, (a, la): (ThreadId, i64), (b, lb): (ThreadId, i64)) -> Ordering {
        self.block_level(a)
            .total_cmp(&self.block_level(b))
            .then_with(|| lb.cmp(&la))
            .then_with(|| b.cmp(&a))
    }

    /// `t`'s place in `by_block`.
    fn block_key(labels: &[Labels], vr: &[i64], t: ThreadId) -> BlockKey {
        let level = labels.get(t.idx()).map_or(0.0, |l| l.block.level);
        (Reverse(ord_f64(level)), vr[t.idx()])
    }

    /// Indexes `t`, queued on `c` (at an enqueue, or when its blocking
    /// level changed).
    fn index(&mut self, st: &SchedState, c: CoreId, t: ThreadId) {
        let vr = &self.cfs.as_ref().expect("initialised on first thread").vr;
        let labels = &self.labels;
        self.by_block
            .push(st, c, t, |x| Self::block_key(labels, vr, x));
    }

    /// The first of `c`'s queue in max_block_'s order whose lag against
    /// `base` is at most `thr`, with its lag: the first such entry of the
    /// index on a long queue, a pass over a short one.
    fn queue_best(
        &mut self,
        st: &SchedState,
        c: CoreId,
        base: i64,
        thr: i64,
    ) -> Option<(ThreadId, i64)> {
        let vr = &self.cfs.as_ref().expect("initialised on first thread").vr;
        if !self.by_block.is_on(st, c) {
            return st
                .core(c)
                .rq
                .iter()
                .map(|&t| (t, vr[t.idx()] - base))
                .filter(|&(_, lag)| lag <= thr)
                .max_by(|&a, &b| self.block_cmp(a, b));
        }
        let labels = &self.labels;
        let mut found = None;
        self.by_block.scan_until(
            st,
            c,
            |x| Self::block_key(labels, vr, x),
            |(_, v), t| {
                let lag = v - base;
                if lag <= thr {
                    found = Some((t, lag));
                }
                found.is_some()
            },
        );
        found
    }

    /// Are the threads running on little cores indexed? On a simulator
    /// state with more than 64 little cores (fewer are faster to scan).
    fn remote_kept(&self, st: &SchedState) -> bool {
        self.params.mech.remote
            && st.active_tracked
            && st.topo.is_asymmetric()
            && st.topo.little_mask().count() > 64
    }

    fn remote_key(labels: &[Labels], st: &SchedState, t: ThreadId) -> RemoteKey {
        let level = labels.get(t.idx()).map_or(0.0, |l| l.block.level);
        (
            Reverse(ord_f64(level)),
            Reverse(ord_f64(st.thread(t).predicted_speedup)),
        )
    }

    /// Indexes `t` if it runs on little core `c` (when it starts, at the
    /// tick, which reads its counters first, and when its level changed).
    fn note_running(&mut self, st: &SchedState, c: CoreId, t: ThreadId) {
        if self.remote_kept(st) && st.topo.is_little(c) {
            let labels = &self.labels;
            self.on_little
                .push(st, t, |x| Self::remote_key(labels, st, x));
        }
    }

    /// Step 3 of the selector: the most blocking thread running on a little
    /// core (that has run there `pull_min_ns`), by a pass over them.
    fn remote_pass(&self, st: &SchedState) -> Option<(CoreId, ThreadId)> {
        let min = self.params.mech.pull_min_ns;
        let running_little = st
            .topo
            .little_mask()
            .iter()
            .filter(|&o| st.current_ran(o) >= min)
            .filter_map(|o| st.core(o).current.map(|t| (o, t)));
        running_little.max_by(|&(_, a), &(_, b)| {
            self.block_level(a)
                .total_cmp(&self.block_level(b))
                .then_with(|| {
                    st.thread(a)
                        .predicted_speedup
                        .total_cmp(&st.thread(b).predicted_speedup)
                })
                .then_with(|| b.cmp(&a))
        })
    }

    /// Step 3 from the index where it is kept.
    fn remote_pick(&mut self, st: &SchedState) -> Option<(CoreId, ThreadId)> {
        if !self.remote_kept(st) {
            return self.remote_pass(st);
        }
        let min = self.params.mech.pull_min_ns;
        let labels = &self.labels;
        let found = self.on_little.best(
            st,
            |x| Self::remote_key(labels, st, x),
            |x| st.thread(x).core.is_some_and(|o| st.current_ran(o) >= min),
        );
        debug_assert_eq!(
            found,
            self.remote_pass(st),
            "indexed threads on little cores differ from a pass over them"
        );
        found
    }

    /// max_block_ over `c`'s own queue.
    fn local_pick(&mut self, st: &SchedState, c: CoreId) -> Option<ThreadId> {
        if !self.params.mech.block_first || !self.by_block.is_on(st, c) {
            return self.max_block(self.queue_lags(st, c));
        }
        let cfs = self.cfs();
        let base = cfs.min_vruntime(st, c);
        let first = cfs.leftmost(st, c)?;
        let thr = (cfs.vr[first.idx()] - base).saturating_add(self.window());
        let found = self.queue_best(st, c, base, thr).map(|(t, _)| t);
        debug_assert_eq!(
            found,
            self.max_block(self.queue_lags(st, c)),
            "indexed max_block_ of core {c} differs from a pass over its queue"
        );
        found
    }

    /// Logs that `c`'s CFS stamp was renewed (see `touched`).
    fn log_touch(&mut self, c: CoreId) {
        if self.log_on {
            if self.touched.len() >= 4 * self.steal_view.len() + 64 {
                self.clear_touch_log();
            }
            self.touched.push(c);
        }
    }

    fn clear_touch_log(&mut self) {
        self.touched.clear();
        self.log_epoch += 1;
    }
}

impl Policy for Colab {
    fn name(&self) -> &'static str {
        if self.params.is_energy_aware() {
            "colab-e"
        } else {
            "colab"
        }
    }

    fn thread_created(&mut self, st: &SchedState, t: ThreadId) {
        self.init(st);
        self.cfs.as_mut().unwrap().thread_created(t);
        if self.labels.len() <= t.idx() {
            self.labels.resize(t.idx() + 1, Labels::default());
        }
        // Label new threads at once from their first prediction.
        self.labels[t.idx()].speedup = self.label_of(st, t);
    }

    /// Hierarchical core allocator (Fig. 6 `_core_allocator_`).
    fn select_core(&mut self, st: &SchedState, t: ThreadId, _kind: WakeKind) -> CoreId {
        let l = &self.labels[t.idx()];
        let high_block = l.high_block && self.params.mech.block_labels;
        let topo = &st.topo;
        if !topo.is_asymmetric() {
            return self.rr_allocator(st, 2, topo.all_mask());
        }
        // The one cluster the labels confine the thread to (with its
        // round-robin cursor), or None: any cluster.
        let confined = if l.speedup == SpeedupLabel::High {
            Some((0, topo.big_mask()))
        } else if l.speedup == SpeedupLabel::Low && !high_block {
            Some((1, topo.little_mask()))
        } else {
            None
        };
        if self.params.mech.prev_first {
            let allowed = confined.map_or(topo.all_mask(), |(_, m)| m);
            if let Some(p) = st.thread(t).last_core {
                if allowed.contains(p) && st.is_idle(p) && st.core(p).rq.is_empty() {
                    return p;
                }
            }
        }
        if let Some((cursor, mask)) = confined {
            self.rr_allocator(st, cursor, mask)
        } else {
            // Hierarchical: alternate clusters, then round-robin within one.
            let clusters = topo.clusters.len();
            let start = self.rr[2] % clusters.max(1);
            let mut best: Option<(CoreId, usize)> = None;
            for i in 0..clusters {
                let cl = (start + i) % clusters;
                let mask = topo.cluster_mask(cl);
                let c = mask
                    .intersect(st.idle_mask())
                    .iter()
                    .find(|&c| st.core(c).rq.is_empty());
                if let Some(c) = c {
                    best = Some((c, cl));
                    break;
                }
                // The lowest-numbered of its shortest queues.
                let least = st.least_loaded_in(mask).map(|(_, m)| m);
                let Some(c) = least.and_then(|m| m.iter().next()) else {
                    continue;
                };
                if best.is_none_or(|(b, _)| st.nr_running(c) < st.nr_running(b)) {
                    best = Some((c, cl));
                }
            }
            let (c, cl) = best.unwrap_or((CoreId(0), 0));
            self.rr[2] = cl + 1;
            c
        }
    }

    fn enqueued(&mut self, st: &SchedState, c: CoreId, t: ThreadId, wakeup: bool) {
        let new = st.thread(t).last_core.is_none() && wakeup;
        self.cfs.as_mut().unwrap().enqueued(st, c, t, wakeup, new);
        self.log_touch(c);
        self.index(st, c, t);
    }

    /// Scale-slice wake-up preemption: the current thread's vruntime grows by
    /// its speedup on a big core.
    fn should_preempt(&mut self, st: &SchedState, c: CoreId, t: ThreadId) -> bool {
        let scale = self.cfs().run_scale(c);
        self.cfs().wakeup_preempt(st, c, t, scale)
    }

    /// Biased-global thread selector (Fig. 6 `_thread_selector_`).
    fn pick_next(&mut self, st: &SchedState, c: CoreId) -> Pick {
        let topo = &st.topo;
        // 1. Local run queue, most blocking first.
        if let Some(t) = self.local_pick(st, c) {
            return Pick::Local(t);
        }
        let big = topo.is_big(c) || !topo.is_asymmetric();
        let cl = topo.cluster_of(c);
        let own = topo.cluster_mask(cl);
        // 2. The same cluster's queues, then the rest of the machine.
        let others = topo.all_mask().minus(own);
        for (i, domain) in [own, others].into_iter().enumerate() {
            if let Some(t) = self.steal_pick(st, c, domain, 2 * cl + i) {
                let from = st.thread(t).core.expect("a queued thread has a core");
                return Pick::Steal { from, thread: t };
            }
        }
        // 3. A big core takes the most blocking thread running on a little core.
        if big && topo.is_asymmetric() && self.params.mech.remote {
            if let Some((from, thread)) = self.remote_pick(st) {
                return Pick::PreemptRemote { from, thread };
            }
        }
        Pick::Idle
    }

    /// The scale a run is charged at is fixed when it starts, so that the
    /// running thread's vruntime seen by min_vruntime and preemption checks
    /// grows at the rate it is charged.
    fn running(&mut self, st: &SchedState, c: CoreId, t: ThreadId) {
        let scale = self.progress_scale(st, c, t);
        self.cfs.as_mut().unwrap().set_run_scale(c, scale);
        self.log_touch(c);
        self.note_running(st, c, t);
    }

    fn stopped(&mut self, st: &SchedState, c: CoreId, t: ThreadId, ran: Nanos, _why: StopReason) {
        let cfs = self.cfs.as_mut().unwrap();
        let scale = cfs.run_scale(c);
        cfs.stopped(st, c, t, ran, scale);
        self.log_touch(c);
    }

    fn migrated(&mut self, st: &SchedState, t: ThreadId, from: CoreId, to: CoreId) {
        self.cfs.as_mut().unwrap().migrated(st, t, from, to);
        self.log_touch(from);
        self.log_touch(to);
    }

    /// Scale-slice: big-core slices shrink by the predicted speedup.
    fn slice_ns(&self, st: &SchedState, c: CoreId, t: ThreadId) -> Nanos {
        let base = self.cfs().slice(st, c);
        (base as f64 / self.progress_scale(st, c, t)) as Nanos
    }

    fn tick(&mut self, st: &SchedState, c: CoreId, out: &mut Vec<Action>) -> bool {
        if let Some(t) = st.core(c).current {
            self.note_running(st, c, t);
        }
        // Linux's periodic balancer runs from the tick, outside the two
        // functions the papers override (colab-tpds 5.3), so it stays.
        self.cfs().periodic_balance(st, c, out);
        let scale = self.cfs().run_scale(c);
        self.cfs().tick_preempt(st, c, scale)
    }

    fn period_ns(&self) -> Option<Nanos> {
        Some(self.params.labels.period_ns)
    }

    /// The labeller.
    fn periodic(&mut self, st: &SchedState, _out: &mut Vec<Action>) {
        for th in st.live_threads() {
            let i = th.id.idx();
            if i >= self.labels.len() {
                continue;
            }
            let speedup = self.label_of(st, th.id);
            let l = &mut self.labels[i];
            let before = l.block.level;
            l.high_block = l.block.update(th.blocked_others_ns, &self.params.labels);
            if self.params.label_mode != LabelMode::Rank {
                l.speedup = speedup;
            }
            // A thread whose level changed moves in its index.
            if l.block.level.to_bits() != before.to_bits() {
                if let Some(c) = th.core {
                    if is_queued_on(st, c, th.id) {
                        self.cfs.as_mut().expect("initialised").touch(c);
                        self.log_touch(c);
                        self.index(st, c, th.id);
                    } else if st.core(c).current == Some(th.id) {
                        self.note_running(st, c, th.id);
                    }
                }
            }
        }
        if self.params.label_mode == LabelMode::Rank {
            // Rank among the threads that want a core now; sleepers keep theirs.
            let (mut vals, mut order, mut out, mut ids) = std::mem::take(&mut self.rank_scratch);
            ids.clear();
            ids.extend(
                st.live_threads()
                    .filter(|th| matches!(th.state, RunState::Runnable | RunState::Running))
                    .filter(|th| th.id.idx() < self.labels.len())
                    .map(|th| th.id),
            );
            vals.clear();
            vals.extend(ids.iter().map(|&t| self.label_value(st, t)));
            colab_labels::rank_labels(&vals, &mut order, &mut out);
            for (&t, &l) in ids.iter().zip(&out) {
                self.labels[t.idx()].speedup = l;
            }
            self.rank_scratch = (vals, order, out, ids);
        }
    }
}
