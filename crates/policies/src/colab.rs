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
use colab_labels::{BlockTracker, LabelParams, SpeedupRange};
use std::cmp::{Ordering, Reverse};

/// max_block_'s order within one queue: most blocking first, then the
/// smallest vruntime (lag, on one queue), then the lowest id (the set's
/// thread id).
type BlockKey = (Reverse<i64>, i64);

/// An idle big core's order of the threads running on little cores: most
/// blocking, then the highest predicted speedup, then the lowest id.
type RemoteKey = (Reverse<i64>, Reverse<i64>);

#[derive(Clone, Debug, PartialEq)]
pub struct ColabParams {
    /// The labeller's period and thresholds (colab-labels).
    pub labels: LabelParams,
    /// Fairness bound for bottleneck-first selection, in units of sched_latency.
    pub fairness_window: f64,
    /// Energy-aware extension (colab-tpds 5.3, Fig. 7): the allocator labels
    /// threads by hyper(t) = w_s * speedup(t) + w_e * energy(t) instead of by
    /// speedup, where energy(t) is the predicted big/little energy ratio. The
    /// labels keep the speedup rule: thirds of hyper's range over the
    /// machine. Plain COLAB is w_s = 1, w_e = 0; a negative w_e penalises
    /// threads that cost more energy on the big cores.
    pub speedup_weight: f64,
    pub energy_weight: f64,
    /// Which of COLAB's mechanisms are on (all of them by default: the
    /// paper's COLAB); switched off one at a time for ablations.
    pub mech: Mechanisms,
    /// How speedup labels are given.
    pub label_mode: LabelMode,
}

/// COLAB's mechanisms as switches (`colab:remote=off`, ...; see
/// [`ColabParams::parse_options`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Mechanisms {
    /// An idle big core preempts the most blocking thread running on a
    /// little core and runs it (Fig. 6, thread selector line 7).
    pub remote: bool,
    /// Most-blocking-first selection (`max_block_`); off: CFS order
    /// (smallest vruntime first), locally and in steals.
    pub block_first: bool,
    /// Scale-slice: big-core slices shrink and vruntime grows by the
    /// predicted speedup; off: plain CFS slices and vruntime.
    pub scale_slice: bool,
    /// Blocking labels send high-blocking low-speedup threads to any core
    /// (allocator) ; off: the allocator reads speedup labels only.
    pub block_labels: bool,
    /// scx_colab's first deviation (off in the paper's COLAB): a waking
    /// thread takes its previous core when that core is idle and in the
    /// cluster the allocator would choose from (any, for "any"), before the
    /// round-robin.
    pub prev_first: bool,
    /// scx_colab's second deviation (0 in the paper's COLAB): a big core
    /// takes over a little core's thread only once that thread has been on
    /// the little core this long (scx_colab: `--pull-min-us`, 1 ms).
    pub pull_min_ns: u64,
}

impl Default for Mechanisms {
    fn default() -> Self {
        Mechanisms {
            remote: true,
            block_first: true,
            scale_slice: true,
            block_labels: true,
            prev_first: false,
            pull_min_ns: 0,
        }
    }
}

/// Where speedup labels come from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LabelMode {
    /// The paper's reading: thirds of the machine's speedup range.
    Range,
    /// Thirds of the ranks among the threads runnable at each labelling
    /// (`colab_labels::rank_labels`); new threads start medium.
    Rank,
    /// Every thread medium: the allocator never restricts a cluster.
    Medium,
    /// Fixed thresholds: high at or above `hi`, low at or below `lo`.
    Fixed { hi: f64, lo: f64 },
}

/// Weights of `colab-e` when none are given: one unit of predicted speedup
/// against one unit of predicted big/little energy ratio. A neutral a-priori
/// choice (assumption), not fitted to any result.
pub const COLAB_E_DEFAULT_WEIGHTS: (f64, f64) = (1.0, -1.0);

impl Default for ColabParams {
    fn default() -> Self {
        ColabParams {
            labels: LabelParams::default(),
            fairness_window: 1.0,
            speedup_weight: 1.0,
            energy_weight: 0.0,
            mech: Mechanisms::default(),
            label_mode: LabelMode::Range,
        }
    }
}

impl ColabParams {
    /// The energy-aware extension with weights (w_s, w_e).
    pub fn energy_aware(speedup_weight: f64, energy_weight: f64) -> ColabParams {
        ColabParams {
            speedup_weight,
            energy_weight,
            ..ColabParams::default()
        }
    }

    fn is_energy_aware(&self) -> bool {
        self.energy_weight != 0.0 || self.speedup_weight != 1.0
    }

    /// Applies `key=value` options separated by `:` (the part after
    /// `colab:` in a policy name): `remote`, `block-first`, `scale-slice`,
    /// `block-labels` = `on|off`; `labels` = `range|rank|medium|fixed`
    /// (`fixed` needs `hi=S` and `lo=S`, speedups with lo < hi); `window` =
    /// the fairness window in sched_latency units (a number >= 0, or `inf`).
    pub fn parse_options(&mut self, text: &str) -> Result<(), String> {
        let (mut hi, mut lo) = (None, None);
        let mut fixed = false;
        for opt in text.split(':').filter(|o| !o.is_empty()) {
            let (k, v) = opt
                .split_once('=')
                .ok_or_else(|| format!("option '{opt}' is not KEY=VALUE ({OPTIONS_HELP})"))?;
            let onoff = |v: &str| crate::on_off(k, v);
            let num = |v: &str| -> Result<f64, String> {
                match v.parse::<f64>() {
                    Ok(x) if x.is_finite() && x > 0.0 => Ok(x),
                    _ => Err(format!("'{k}={v}': expected a positive number")),
                }
            };
            match k {
                "remote" => self.mech.remote = onoff(v)?,
                "block-first" => self.mech.block_first = onoff(v)?,
                "scale-slice" => self.mech.scale_slice = onoff(v)?,
                "block-labels" => self.mech.block_labels = onoff(v)?,
                "prev-first" => self.mech.prev_first = onoff(v)?,
                "pull-min-us" => {
                    self.mech.pull_min_ns = v
                        .parse::<u64>()
                        .ok()
                        .filter(|&us| us <= 10_000_000)
                        .map(|us| us * 1000)
                        .ok_or_else(|| {
                            format!("'pull-min-us={v}': expected whole microseconds, 0 to 10000000")
                        })?
                }
                "window" => {
                    self.fairness_window = if v == "inf" {
                        f64::INFINITY
                    } else {
                        match v.parse::<f64>() {
                            Ok(x) if x.is_finite() && x >= 0.0 => x,
                            _ => {
                                return Err(format!("'window={v}': expected a number >= 0 or inf"))
                            }
                        }
                    }
                }
                "labels" => match v {
                    "range" => self.label_mode = LabelMode::Range,
                    "rank" => self.label_mode = LabelMode::Rank,
                    "medium" => self.label_mode = LabelMode::Medium,
                    "fixed" => fixed = true,
                    _ => {
                        return Err(format!(
                            "'labels' takes range, rank, medium or fixed, not '{v}'"
                        ))
                    }
                },
                "hi" => hi = Some(num(v)?),
                "lo" => lo = Some(num(v)?),
                _ => return Err(format!("unknown option '{k}' ({OPTIONS_HELP})")),
            }
        }
        match (fixed, hi, lo) {
            (true, Some(hi), Some(lo)) if lo < hi => self.label_mode = LabelMode::Fixed { hi, lo },
            (true, Some(_), Some(_)) => return Err("labels=fixed needs lo < hi".into()),
            (true, _, _) => return Err("labels=fixed needs hi=S and lo=S".into()),
            (false, None, None) => {}
            (false, _, _) => return Err("hi= and lo= go with labels=fixed".into()),
        }
        Ok(())
    }
}

/// The options `colab:` accepts, for messages and `colab list`.
pub const OPTIONS_HELP: &str = colab_options_help!();

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

/// A queued core as a steal sees it at one instant: its min_vruntime, its
/// leftmost thread's lag, and a short queue's best thread regardless of the
/// fairness window (with its lag); valid while its CFS stamp stands.
#[derive(Clone, Copy, Debug)]
struct Entry {
    core: CoreId,
    base: i64,
    min_lag: Option<i64>,
    own: Option<Ranked>,
}

/// What a steal reads of a set of entries: the smallest leftmost lag, the
/// best own candidate (max_block_'s order), and whether a long queue (no
/// own candidate kept) is among them.
#[derive(Clone, Copy, Debug, Default)]
struct Node {
    min_lag: Option<i64>,
    top: Option<Ranked>,
    long: bool,
}

impl Node {
    fn leaf(e: &Entry) -> Node {
        Node {
            min_lag: e.min_lag,
            top: e.own,
            long: e.own.is_none(),
        }
    }

    fn join(a: Node, b: Node) -> Node {
        let min_lag = match (a.min_lag, b.min_lag) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, y) => x.or(y),
        };
        let top = match (a.top, b.top) {
            (Some(x), Some(y)) => Some(if ranked_cmp(x, y) == Ordering::Greater {
                x
            } else {
                y
            }),
            (x, y) => x.or(y),
        };
        Node {
            min_lag,
            top,
            long: a.long || b.long,
        }
    }
}

/// One steal domain's queued cores at instant `now`, on machines of more
/// than 64 cores. Idle cores steal in bursts at the same instant (wake-ups
/// and completions coincide), and between two steals few queues change:
/// the entries sit in a tournament tree, and a steal reads again only the
/// cores CFS touched since the last one (its touch log), so that its
/// answer is the tree's root whenever the best own candidate lies inside
/// the window (always, when no queue is long and levels are equal).
#[derive(Clone, Debug, Default)]
struct StealMemo {
    now: Nanos,
    domain: CoreMask,
    /// The touch log's epoch and length when last read.
    epoch: u64,
    read: usize,
    /// Cores with a live entry.
    cores: CoreMask,
    /// Per core, its entry's slot (`u32::MAX`: none); per slot, its core.
    slot: Vec<u32>,
    slot_core: Vec<CoreId>,
    entries: Vec<Option<Entry>>,
    /// Leaves (one per slot) from `cap` on; node i joins 2i and 2i+1.
    tree: Vec<Node>,
    cap: usize,
}

impl StealMemo {
    fn set(&mut self, i: usize, e: Option<Entry>) {
        self.entries[i] = e;
        let mut n = self.cap + i;
        self.tree[n] = e.as_ref().map_or(Node::default(), Node::leaf);
        while n > 1 {
            n /= 2;
            self.tree[n] = Node::join(self.tree[2 * n], self.tree[2 * n + 1]);
        }
    }
}

/// A queued core as a steal sees it, kept while the core's CFS stamp
/// stands: what its min_vruntime derives from (the kept value, the
/// leftmost queued vruntime, the running thread's vruntime, run start and
/// scale) and its best thread regardless of the window (short queues; the
/// order within one queue does not depend on its min_vruntime), so that an
/// idle core's steal reads a few words per queued core instead of each
/// queue and running thread. min_vruntime itself grows with the running
/// thread, so it is derived again at each steal, as CFS derives it.
#[derive(Clone, Copy, Debug)]
struct Steal {
    stamp: u64,
    kept: i64,
    leftmost: Option<i64>,
    run: Option<(i64, Nanos, f64)>,
    /// With its vruntime and blocking level (a level change renews the
    /// stamp of the core where the thread is queued).
    best: Option<Ranked>,
}

impl Default for Steal {
    fn default() -> Self {
        Steal {
            stamp: u64::MAX,
            kept: 0,
            leftmost: None,
            run: None,
            best: None,
        }
    }
}

impl Steal {
    /// min_vruntime at `now`, as [`CfsCore::min_vruntime`] finds it.
    fn base(&self, now: Nanos) -> i64 {
        let cur = self
            .run
            .map(|(v, start, scale)| v + (now.saturating_sub(start) as f64 * scale) as i64);
        let m = self.leftmost.into_iter().chain(cur).min();
        m.map_or(self.kept, |m| self.kept.max(m))
    }
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

    /// A steal's entry for queued core `o` at this instant, from its kept
    /// view (read again if its stamp changed).
    fn steal_entry(&self, view: &mut [Steal], st: &SchedState, o: CoreId) -> Entry {
        let cfs = self.cfs();
        if view[o.idx()].stamp != cfs.stamp(o) {
            let rq = &st.core(o).rq;
            // A long queue's leftmost is at hand in CFS's heap (its best
            // comes from the index later); a short queue is passed over
            // once for its leftmost and its best regardless of the
            // window, which stands unless it falls outside the window.
            let (leftmost, best) = if rq.len() > 16 {
                (cfs.leftmost(st, o).map(|t| cfs.vr[t.idx()]), None)
            } else {
                let vrs = rq.iter().map(|&t| (t, cfs.vr[t.idx()]));
                let m = vrs.clone().map(|(_, v)| v).min();
                let best = vrs.max_by(|&a, &b| self.block_cmp(a, b));
                (m, best.map(|(t, v)| (t, v, self.block_level(t))))
            };
            let run = st
                .core(o)
                .current
                .map(|t| (cfs.vr[t.idx()], st.core(o).run_start, cfs.run_scale(o)));
            view[o.idx()] = Steal {
                stamp: cfs.stamp(o),
                kept: cfs.min_vr[o.idx()],
                leftmost,
                run,
                best,
            };
        }
        let v = &view[o.idx()];
        let base = v.base(st.now);
        debug_assert_eq!(base, cfs.min_vruntime(st, o), "kept min_vruntime of {o}");
        Entry {
            core: o,
            base,
            min_lag: v.leftmost.map(|l| l - base),
            own: v.best.map(|(t, vr, level)| (t, vr - base, level)),
        }
    }

    /// max_block_ over the queues of `domain` (steal domain number `key`)
    /// but `c`'s: each queue's min_vruntime computed once, its smallest
    /// lag, then each queue's best within the window.
    fn steal_pick(
        &mut self,
        st: &SchedState,
        c: CoreId,
        domain: CoreMask,
        key: usize,
    ) -> Option<ThreadId> {
        let queued = domain.intersect(st.queued_mask());
        if !self.params.mech.block_first {
            let cands = queued
                .iter()
                .filter(move |&o| o != c)
                .flat_map(|o| self.queue_lags(st, o));
            return self.max_block(cands);
        }
        if queued.is_empty() {
            return None;
        }
        let mut view = std::mem::take(&mut self.steal_view);
        let found = if st.topo.num_cores() > 64 && !queued.contains(c) {
            let mut memo = std::mem::take(&mut self.memos[key]);
            self.sync_memo(&mut memo, &mut view, st, domain, queued);
            let root = memo.tree.get(1).copied().unwrap_or_default();
            let window = self.window();
            let found = match (root.min_lag, root.top) {
                (Some(m), Some(top)) if !root.long && top.1 <= m.saturating_add(window) => {
                    Some(top.0)
                }
                _ => self.steal_among(st, memo.entries.iter().flatten()),
            };
            self.memos[key] = memo;
            found
        } else {
            let mut entries = std::mem::take(&mut self.entries);
            entries.clear();
            entries.extend(
                queued
                    .iter()
                    .filter(|&o| o != c)
                    .map(|o| self.steal_entry(&mut view, st, o)),
            );
            let found = self.steal_among(st, entries.iter());
            self.entries = entries;
            found
        };
        self.steal_view = view;
        debug_assert_eq!(
            found,
            self.max_block(
                queued
                    .iter()
                    .filter(move |&o| o != c)
                    .flat_map(|o| self.queue_lags(st, o))
            ),
            "max_block_ over the queues of {queued:?} but core {c}'s differs from a pass"
        );
        found
    }

    /// Brings `memo` to this instant: built afresh at a new instant (or
    /// when its log was lost or its tree is full), else the cores touched
    /// since its last read read again.
    fn sync_memo(
        &mut self,
        memo: &mut StealMemo,
        view: &mut [Steal],
        st: &SchedState,
        domain: CoreMask,
        queued: CoreMask,
    ) {
        if self.log_now != Some(st.now) {
            // Memos of earlier instants are all stale: the log restarts.
            self.log_now = Some(st.now);
            self.clear_touch_log();
        }
        let (epoch, log) = (self.log_epoch, &self.touched);
        let fresh = memo.now == st.now && memo.domain == domain && memo.epoch == epoch;
        if fresh {
            let mut full = false;
            for &o in &log[memo.read..] {
                if !domain.contains(o) {
                    continue;
                }
                let e = queued.contains(o).then(|| self.steal_entry(view, st, o));
                let i = memo.slot[o.idx()];
                if i != u32::MAX {
                    memo.set(i as usize, e);
                } else if let Some(e) = e {
                    if memo.entries.len() == memo.cap {
                        full = true;
                        break;
                    }
                    memo.slot[o.idx()] = memo.entries.len() as u32;
                    memo.slot_core.push(o);
                    memo.entries.push(None);
                    memo.set(memo.entries.len() - 1, Some(e));
                }
                if queued.contains(o) {
                    memo.cores.insert(o);
                } else {
                    memo.cores.remove(o);
                }
            }
            // Every change of a queue touches its core; should a core have
            // joined or left the queued ones without, the memo is rebuilt.
            debug_assert!(
                full || memo.cores == queued,
                "memo's cores after the touch log"
            );
            if !full && memo.cores == queued {
                memo.read = log.len();
                return;
            }
        }
        // Built afresh, with room for a few cores queued later this instant.
        for &o in &memo.slot_core {
            memo.slot[o.idx()] = u32::MAX;
        }
        memo.slot_core.clear();
        memo.slot.resize(st.topo.num_cores(), u32::MAX);
        memo.now = st.now;
        memo.domain = domain;
        memo.epoch = epoch;
        memo.read = log.len();
        memo.cores = queued;
        memo.entries.clear();
        for o in queued.iter() {
            memo.slot[o.idx()] = memo.entries.len() as u32;
            memo.slot_core.push(o);
            memo.entries.push(Some(self.steal_entry(view, st, o)));
        }
        // Leaves written once each (empty past the entries), then the
        // nodes above them: no fill of the whole tree first.
        let k = memo.entries.len();
        memo.cap = (k + 8).next_power_of_two();
        let cap = memo.cap;
        memo.tree.resize(2 * cap, Node::default());
        for (i, e) in memo.entries.iter().enumerate() {
            memo.tree[cap + i] = e.as_ref().map_or(Node::default(), Node::leaf);
        }
        memo.tree[cap + k..].fill(Node::default());
        for n in (1..cap).rev() {
            memo.tree[n] = Node::join(memo.tree[2 * n], memo.tree[2 * n + 1]);
        }
    }

    /// max_block_ over `entries`' queues: the smallest lag, then each
    /// queue's best within the window.
    fn steal_among<'a>(
        &mut self,
        st: &SchedState,
        entries: impl Iterator<Item = &'a Entry> + Clone,
    ) -> Option<ThreadId> {
        let min_lag = entries.clone().filter_map(|e| e.min_lag).min()?;
        let thr = min_lag.saturating_add(self.window());
        let mut best: Option<Ranked> = None;
        for e in entries {
            let x = match e.own {
                Some(x) if x.1 <= thr => Some(x),
                _ => self
                    .queue_best(st, e.core, e.base, thr)
                    .map(|(t, lag)| (t, lag, self.block_level(t))),
            };
            if let Some(x) = x {
                if best.is_none_or(|b| ranked_cmp(x, b) == Ordering::Greater) {
                    best = Some(x);
                }
            }
        }
        best.map(|(t, ..)| t)
    }

    /// `c`'s queued threads with their lags behind its min_vruntime.
    fn queue_lags<'a>(
        &'a self,
        st: &'a SchedState,
        c: CoreId,
    ) -> impl Iterator<Item = (ThreadId, i64)> + Clone + 'a {
        let cfs = self.cfs();
        let base = cfs.min_vruntime(st, c);
        st.core(c)
            .rq
            .iter()
            .map(move |&t| (t, cfs.vr[t.idx()] - base))
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

    fn tick(&mut self, st: &SchedState, c: CoreId, _out: &mut Vec<Action>) -> bool {
        if let Some(t) = st.core(c).current {
            self.note_running(st, c, t);
        }
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
