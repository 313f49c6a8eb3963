//! The CAMP family of asymmetry-aware schedulers (Saez, Fedorova, Koufaty,
//! Prieto: "Leveraging core specialization via OS scheduling to improve
//! performance on asymmetric multicore systems", ACM TOCS 30(2), 2012; cited
//! as camp-tocs12): CAMP (section 4.1) and the three schedulers it is
//! compared with, PA, SFD and RR (section 4.2), on one code base as in the
//! paper.
//!
//! CAMP puts threads in utility classes by their utility factor (UF, section
//! 3: the speedup an application gets from all fast cores, from its threads'
//! speedup factors and its runnable thread count), runs the highest classes
//! on the fast cores, round-robins fast cores among HIGH threads, keeps fast
//! cores busy with lower classes otherwise (BusyFCs), and boosts sequential
//! phases of parallel applications. Per-core fair scheduling underneath is
//! the project's CFS engine (the paper implements CAMP as a Solaris
//! scheduling class on top of the OS's per-core dispatching).
//!
//! | paper                                   | here                                |
//! |-----------------------------------------|-------------------------------------|
//! | UF, eq. (1)/(10) and eq. (2)            | [`uf_analytical`], [`uf_approx`]    |
//! | utility classes, Table II               | [`UtilityClass`], [`Thresholds`]    |
//! | monitoring module, 4.1.2                | [`SfMonitor`]                       |
//! | class-driven assignment, 4.1.1          | `select_core`, `pick_next`, `balance` |
//! | fair sharing among HIGH (every 2 s)     | `balance`, round-robin step         |
//! | topology awareness, 4.1.3               | locality keys in every core choice  |
//!
//! Our reading of what the paper leaves open (chosen once, for every
//! workload):
//! - SF of a thread: the OS's estimate, `predicted_speedup` from the noisy
//!   counter model, filtered by the monitor; never the ground truth. Per-thread
//!   UFs use the thread's own SF in place of SF_avg (section 3.2, last
//!   paragraph). N_threads is the application's runnable (or running) thread
//!   count (section 3.2), N_FC the number of cores of the fastest type.
//! - A thread without an SF yet (warm-up, section 4.1.2) ranks below every
//!   class: it never displaces a classified thread from a fast core, but an
//!   otherwise idle fast core still runs it. Section 5.1.2 says such threads
//!   are "not eligible to be scheduled on fast cores" while the example it
//!   gives has a classified thread competing for the fast core; section
//!   4.1.1 says the scheduler "tries to keep fast cores as busy as possible".
//!   Ranking them last satisfies both.
//! - Sequential phase: an application that has had more than one thread
//!   (an OS knows its process spawned threads) with exactly one runnable
//!   thread. Its boost budget of amp_boost_ticks covers one sequential phase:
//!   it is renewed when the application goes back to two or more runnable
//!   threads in between, or when another thread becomes the serial one, not
//!   when the serial thread merely blocks and wakes (the paper's PA keeps a
//!   serial thread on the fast core "until amp_boost_ticks expire or the
//!   thread blocks"; renewing on every wake-up would let a thread that
//!   blocks briefly monopolise a fast core, which the limit exists to
//!   prevent). Boost ticks are the scheduler ticks during which the boosted
//!   thread runs.
//! - All threads have the same static priority (our workloads use no nice
//!   values), so where the paper's Solaris class orders by priority we order
//!   by utility class, then CFS vruntime.
//! - Round-robin sharing among HIGH threads (section 4.1.1, "presented in our
//!   earlier work [Saez et al. 2011]"): every rr_period, each HIGH thread
//!   waiting on a slow core swaps with the HIGH thread on a fast core that
//!   has had the most fast-core time, if the waiting one has had less: over
//!   time every HIGH thread gets an equal share of fast-core time. Threads of
//!   other classes keep the fast core they got (BusyFCs) until a higher class
//!   needs it or they block.
//! - Class changes are acted on at the next scheduler tick (the balancer runs
//!   once per tick): a thread that outranks a fast core's thread swaps places
//!   with it, the displaced thread taking the slow core it leaves.
//! - Topology awareness (4.1.3): every choice among cores of one type
//!   prefers the cluster (last-level cache) the thread last ran in; slow-core
//!   load balancing works inside a cluster before going across.
//! - PA (4.2): the SF in the UF is the machine's largest speedup factor (the
//!   ratio of the fastest to the slowest core type's throughput, the larger
//!   of the compute- and memory-bound ratios), so single-threaded
//!   applications are HIGH and serial phases are always boosted; no SF
//!   monitoring, hence no warm-up.
//! - SFD (4.2): N_threads is always 1 (UF = SF), same monitor, no boosting
//!   (it has no notion of TLP).
//! - RR (4.2): every thread is in one class that fast cores are shared in
//!   round-robin, with CAMP's mechanism; no SF, no boost.
//! - Per-core fairness is the shared CFS engine, which carries a thread's
//!   vruntime lag over on every cross-core move (wake-ups elsewhere
//!   included).
//! - A machine with a single core type has no fast/slow distinction: all
//!   four behave as CFS there.

mod balance;
mod index;
mod monitor;
mod uf;

pub use monitor::{MonitorParams, SfMonitor};
pub use uf::{uf_analytical, uf_approx, Thresholds, UfCuts, UfForm, UtilityClass, UF_K};

use crate::cfs::CfsCore;
use colab_core::{
    Action, CoreId, CoreMask, Nanos, Pick, Policy, RunState, SchedState, StopReason, ThreadId,
    WakeKind, NS_PER_MS,
};
use index::{Cand, CandIndex, Ctx, Loc, NCLS};
use std::cmp::Reverse;

/// Which scheduler of the family.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// camp-tocs12 4.1: efficiency and TLP.
    Camp,
    /// Parallelism-Aware (4.2): TLP only.
    Pa,
    /// SF-Driven (4.2): efficiency only.
    Sfd,
    /// Round-robin sharing of fast cores among all threads (4.2).
    Rr,
}

impl Variant {
    pub fn name(self) -> &'static str {
        match self {
            Variant::Camp => "camp",
            Variant::Pa => "pa",
            Variant::Sfd => "sfd",
            Variant::Rr => "rr",
        }
    }
    /// SEQUENTIAL_BOOSTED is TLP specialisation: CAMP and PA only.
    fn boosts(self) -> bool {
        matches!(self, Variant::Camp | Variant::Pa)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct CampParams {
    /// The UF the scheduler evaluates (camp-tocs12 3.2: eq. (2) with k = 2
    /// is what the paper's scheduler uses).
    pub uf_form: UfForm,
    /// Utility thresholds (Table II; values are our assumption, see [`Thresholds`]).
    pub thresholds: Thresholds,
    /// amp_boost_ticks as time: camp-tocs12 4.1.1, "fifty time slices (0.5
    /// seconds)". Our tick is 4 ms, so the limit is 125 of our ticks; we keep
    /// the 0.5 s, the quantity the authors tuned.
    pub amp_boost_ns: Nanos,
    /// Period of the round-robin fast-core sharing among HIGH threads
    /// (camp-tocs12 4.1.1: migrations "take place every 2 seconds on average").
    pub rr_period_ns: Nanos,
    /// SF monitoring (4.1.2).
    pub monitor: MonitorParams,
}

impl Default for CampParams {
    fn default() -> Self {
        CampParams {
            uf_form: UfForm::Approx { k: UF_K },
            thresholds: Thresholds::default(),
            amp_boost_ns: 500 * NS_PER_MS,
            rr_period_ns: 2_000 * NS_PER_MS,
            monitor: MonitorParams::default(),
        }
    }
}

#[derive(Clone, Debug)]
struct ThreadSt {
    mon: SfMonitor,
    /// Time run on fast cores (round-robin fairness).
    fast_ns: Nanos,
    /// When the counters were last read for the monitor.
    last_read: Nanos,
    /// The core the thread last ran on, to see migrations.
    prev_core: Option<CoreId>,
}

#[derive(Clone, Debug, Default)]
struct ProgSt {
    /// Threads the application has created so far.
    created: u32,
    /// The serial thread of the current sequential phase.
    seq: Option<ThreadId>,
    /// Boost ticks it has used in this phase.
    boost_used: u32,
}

/// Facts about the machine, fixed at the first hook.
#[derive(Clone, Debug)]
struct Machine {
    fast: CoreMask,
    slow: CoreMask,
    n_fast: usize,
    sf_max: f64,
    cuts: UfCuts,
    boost_ticks: u32,
}

/// Per-application runnable counts at one instant: the simulator's
/// per-program counts (read in place, nothing copied) or, on hand-built
/// states, a scan of the threads; with at most one thread added (a wake-up
/// being placed) and one taken away (a thread leaving).
struct View<'a> {
    st: &'a SchedState,
    /// Applications the policy knows.
    n: usize,
    /// Scanned counts (hand-built states only).
    scanned: Option<Vec<(u32, u64)>>,
    add: Option<(usize, ThreadId)>,
    sub: Option<(usize, ThreadId)>,
}

impl View<'_> {
    /// Application `p`'s runnable threads and the sum of their ids.
    fn app(&self, p: usize) -> Option<(u32, u64)> {
        if p >= self.n {
            return None;
        }
        let mut a = match &self.scanned {
            Some(v) => v[p],
            None => self.st.program_active(p).unwrap_or((0, 0)),
        };
        if let Some((_, t)) = self.add.filter(|&(q, _)| q == p) {
            a = (a.0 + 1, a.1 + u64::from(t.0));
        }
        if let Some((_, t)) = self.sub.filter(|&(q, _)| q == p) {
            a = (a.0 - 1, a.1 - u64::from(t.0));
        }
        Some(a)
    }

    fn runnable(&self, p: usize) -> Option<u32> {
        self.app(p).map(|a| a.0)
    }

    /// The only runnable thread, where there is exactly one.
    fn sole(&self, p: usize) -> Option<ThreadId> {
        self.app(p)
            .filter(|a| a.0 == 1)
            .map(|a| ThreadId(a.1 as u32))
    }
}

/// Ordering key for a fast core's candidates: class, locality (2 local,
/// 1 same cluster, 0 other), queued before running, then CFS / waiting order.
type CandKey = (Option<UtilityClass>, u8, u8, i64, Reverse<ThreadId>);

pub struct Camp {
    pub params: CampParams,
    variant: Variant,
    cfs: Option<CfsCore>,
    mach: Option<Machine>,
    th: Vec<ThreadSt>,
    progs: Vec<ProgSt>,
    last_balance: Option<Nanos>,
    next_rr: Nanos,
    /// Fast-core candidates by class (simulator-kept states on asymmetric
    /// machines with the approximate UF; otherwise the queues are scanned).
    ix: Option<Box<CandIndex>>,
    /// Is the index kept (enough runnable threads)? Forced on or off in tests.
    ix_on: bool,
    ix_force: Option<bool>,
}

/// Cores from which a core search reads the state's masks rather than
/// passing over the cores (below, the pass is faster).
const MASKS_FROM: usize = 64;

/// Runnable threads from which the fast cores' candidates are indexed, and
/// below which the index is dropped again: a pass over a few dozen threads
/// costs less than keeping ordered sets up to date at every move.
const INDEX_FROM: u32 = 128;
const UNINDEX_BELOW: u32 = 64;

/// Index of a class in [`CandIndex`]: no SF yet is 0.
fn cls_idx(r: Option<UtilityClass>) -> usize {
    r.map_or(0, |c| c as usize + 1)
}

/// The class of an index of [`CandIndex`].
fn cls_val(j: usize) -> Option<UtilityClass> {
    use UtilityClass::*;
    [
        None,
        Some(VeryLow),
        Some(Low),
        Some(Medium),
        Some(High),
        Some(SequentialBoosted),
    ][j]
}

impl Camp {
    pub fn new(variant: Variant, params: CampParams) -> Camp {
        let next_rr = params.rr_period_ns;
        Camp {
            params,
            variant,
            cfs: None,
            mach: None,
            th: Vec::new(),
            progs: Vec::new(),
            last_balance: None,
            next_rr,
            ix: None,
            ix_on: false,
            ix_force: None,
        }
    }

    pub fn variant(&self) -> Variant {
        self.variant
    }

    fn init(&mut self, st: &SchedState) {
        if self.mach.is_some() {
            return;
        }
        self.cfs = Some(CfsCore::new(st));
        let topo = &st.topo;
        let fast = topo.big_mask();
        let slow = topo.all_mask().minus(fast);
        let f = &topo.core_types[topo.fastest_type];
        let s = &topo.core_types[topo.slowest_type];
        // Largest SF the machine allows: core- or memory-bound extreme (the
        // speedup of a phase is monotonic in its memory fraction).
        let sf_max = (f.rate(0.0) / s.rate(0.0))
            .max(f.rate(1.0) / s.rate(1.0))
            .max(1.0);
        let tick = topo.costs.tick_ns.max(1);
        self.mach = Some(Machine {
            fast,
            slow,
            n_fast: fast.count(),
            sf_max,
            cuts: self.params.thresholds.cuts(sf_max),
            boost_ticks: self.params.amp_boost_ns.div_ceil(tick) as u32,
        });
        // The index relies on the class growing with the SF under one
        // context, which the approximate UF guarantees in floating point.
        if st.active_tracked
            && topo.is_asymmetric()
            && matches!(self.params.uf_form, UfForm::Approx { .. })
        {
            let cluster_of = topo.cores().map(|c| topo.cluster_of(c)).collect();
            self.ix = Some(Box::new(CandIndex::new(
                fast,
                cluster_of,
                topo.clusters.len(),
                self.variant == Variant::Rr,
            )));
        }
    }

    fn m(&self) -> &Machine {
        self.mach
            .as_ref()
            .expect("initialised at the first thread_created")
    }

    fn cfs(&self) -> &CfsCore {
        self.cfs
            .as_ref()
            .expect("initialised at the first thread_created")
    }

    fn cfs_mut(&mut self) -> &mut CfsCore {
        self.cfs
            .as_mut()
            .expect("initialised at the first thread_created")
    }

    /// amp_boost_ticks on this machine.
    pub fn boost_ticks(&self) -> u32 {
        self.mach.as_ref().map_or(0, |m| m.boost_ticks)
    }

    /// The machine's largest speedup factor (PA's constant SF).
    pub fn sf_max(&self) -> f64 {
        self.mach.as_ref().map_or(1.0, |m| m.sf_max)
    }

    /// The monitor's published SF of `t`, if past its warm-up.
    pub fn sf_estimate(&self, t: ThreadId) -> Option<f64> {
        self.th.get(t.idx()).and_then(|s| s.mon.estimate())
    }

    /// The SF monitor of `t` (CAMP and SFD feed it).
    pub fn sf_monitor(&self, t: ThreadId) -> Option<&SfMonitor> {
        self.th.get(t.idx()).map(|s| &s.mon)
    }

    /// The class `t` has now (counting it as runnable); None while its SF is
    /// unknown.
    pub fn utility_class(&self, st: &SchedState, t: ThreadId) -> Option<UtilityClass> {
        let v = self.view(st, Some(t), None);
        self.rank(st, &v, t)
    }

    /// Tests: give `t` a published SF as if its first sample had closed.
    #[cfg(test)]
    pub(crate) fn seed_sf(&mut self, t: ThreadId, sf: f64) {
        let s = &mut self.th[t.idx()];
        s.mon = SfMonitor::default();
        s.mon.sample(sf, &self.params.monitor);
    }

    fn is_fast(&self, c: CoreId) -> bool {
        self.m().fast.contains(c)
    }

    /// Runnable threads per application, counting `extra` as runnable and
    /// `exclude` as not. From the simulator's per-program counts (O(1) per
    /// application), or a scan of every thread on a hand-built state.
    fn view<'a>(
        &self,
        st: &'a SchedState,
        extra: Option<ThreadId>,
        exclude: Option<ThreadId>,
    ) -> View<'a> {
        let n = self.progs.len();
        let active = |th: &colab_core::ThreadInfo| {
            matches!(th.state, RunState::Runnable | RunState::Running)
        };
        let scan = || {
            let mut a = vec![(0, 0); n];
            for th in st.threads.iter().filter(|th| active(th)) {
                if let Some(x) = a.get_mut(th.program.idx()) {
                    x.0 += 1;
                    x.1 += u64::from(th.id.0);
                }
            }
            a
        };
        let scanned = match st.program_active(0) {
            Some(_) => {
                debug_assert_eq!(
                    (0..n)
                        .filter_map(|p| st.program_active(p))
                        .collect::<Vec<_>>(),
                    scan(),
                    "tracked counts differ from the threads' states"
                );
                None
            }
            None => Some(scan()),
        };
        let of = |t: ThreadId| (st.thread(t).program.idx(), t);
        View {
            st,
            n,
            scanned,
            add: extra
                .filter(|&x| !active(st.thread(x)) && Some(x) != exclude)
                .map(of),
            sub: exclude.filter(|&y| active(st.thread(y))).map(of),
        }
    }

    fn sf_of(&self, t: ThreadId) -> Option<f64> {
        match self.variant {
            Variant::Pa | Variant::Rr => Some(self.m().sf_max),
            // A fast core is never slower: noise below 1 is clamped.
            Variant::Camp | Variant::Sfd => self.sf_estimate(t).map(|s| s.max(1.0)),
        }
    }

    /// Utility class of `t` under `v`; None while its SF is unknown.
    /// [`Camp::class_in`] with the context read from `v` only as far as
    /// needed (the scans call it for every queued thread).
    fn rank(&self, st: &SchedState, v: &View, t: ThreadId) -> Option<UtilityClass> {
        if self.variant == Variant::Rr {
            return Some(UtilityClass::High);
        }
        let sf = self.sf_of(t)?;
        let p = st.thread(t).program.idx();
        let n = match self.variant {
            Variant::Sfd => 1,
            _ => v.runnable(p).unwrap_or(1).max(1) as usize,
        };
        let m = self.m();
        let class = m.cuts.classify(self.params.uf_form.eval(sf, n, m.n_fast));
        if class == UtilityClass::High && self.boosted(&self.ctx_of(v, p), t) {
            Some(UtilityClass::SequentialBoosted)
        } else {
            Some(class)
        }
    }

    /// What the classes of application `p`'s threads depend on under `v`
    /// besides their SFs.
    fn ctx_of(&self, v: &View, p: usize) -> Ctx {
        let ps = self.progs.get(p);
        Ctx {
            n: v.runnable(p).unwrap_or(1),
            sole: v.sole(p),
            seq: ps.and_then(|ps| ps.seq),
            boost_used: ps.map_or(0, |ps| ps.boost_used),
            created: ps.map_or(0, |ps| ps.created),
        }
    }

    /// Utility class of `t` in its application's context `cx`.
    fn class_in(&self, cx: &Ctx, t: ThreadId) -> Option<UtilityClass> {
        if self.variant == Variant::Rr {
            return Some(UtilityClass::High);
        }
        let sf = self.sf_of(t)?;
        let n = match self.variant {
            Variant::Sfd => 1,
            _ => cx.n.max(1) as usize,
        };
        let m = self.m();
        let class = m.cuts.classify(self.params.uf_form.eval(sf, n, m.n_fast));
        // Only serial threads with UF >= upper_threshold are boosted (4.1.1);
        // a serial thread is alone, so its UF is its SF.
        if class == UtilityClass::High && self.boosted(cx, t) {
            Some(UtilityClass::SequentialBoosted)
        } else {
            Some(class)
        }
    }

    /// Is `t` the serial thread of a parallel application with boost left?
    fn boosted(&self, cx: &Ctx, t: ThreadId) -> bool {
        let used = if cx.seq == Some(t) { cx.boost_used } else { 0 };
        self.variant.boosts() && cx.created > 1 && cx.sole == Some(t) && used < self.m().boost_ticks
    }

    /// The SF order key of `t` in the index (0: no SF yet; the bits of a
    /// positive float order as the float does).
    fn sf_key(&self, t: ThreadId) -> u64 {
        self.sf_of(t).map_or(0, f64::to_bits)
    }

    /// Records in the index that `t` is now at `loc`.
    fn ix_put(&mut self, st: &SchedState, t: ThreadId, loc: Loc) {
        if !self.ix_on {
            return;
        }
        let Some(mut ix) = self.ix.take() else {
            return;
        };
        let p = st.thread(t).program.idx();
        // The context is read only where the application has no member.
        let now = || self.ctx_of(&self.view(st, None, None), p);
        let since = st.thread(t).runnable_since;
        let vr = self.cfs().vr[t.idx()];
        let sf = self.sf_key(t);
        ix.put(t, p, sf, loc, since, vr, now, |cx, x| {
            cls_idx(self.class_in(cx, x))
        });
        self.ix = Some(ix);
    }

    /// The index brought up to `v`, taken out of `self` (put it back with
    /// `self.ix = ...`); None where the queues are scanned.
    fn ix_synced(&mut self, st: &SchedState, v: &View) -> Option<Box<CandIndex>> {
        if !st.active_tracked {
            return None;
        }
        self.ix.as_ref()?;
        let active: u32 = (0..self.progs.len())
            .filter_map(|p| st.program_active(p))
            .map(|a| a.0)
            .sum();
        let on = self.ix_force.unwrap_or(if self.ix_on {
            active >= UNINDEX_BELOW
        } else {
            active >= INDEX_FROM
        });
        if on && !self.ix_on {
            self.ix_on = true;
            self.ix_rebuild(st);
        }
        self.ix_on = on;
        if !on {
            return None;
        }
        let mut ix = self.ix.take()?;
        ix.sync(|p| self.ctx_of(v, p), |cx, x| cls_idx(self.class_in(cx, x)));
        debug_assert!(self.ix_agrees(st, v, &ix));
        Some(ix)
    }

    /// Fills the index from the queues and the cores.
    fn ix_rebuild(&mut self, st: &SchedState) {
        if let Some(ix) = self.ix.as_mut() {
            ix.clear();
        }
        for c in st.topo.cores() {
            let core = st.core(c);
            for &t in &core.rq {
                self.ix_put(st, t, Loc::Queued(c));
            }
            if let Some(t) = core.current {
                self.ix_put(st, t, Loc::Running(c));
            }
        }
    }

    /// Tests: keep the index whatever the thread count (`Some(true)`), never
    /// (`Some(false)`), or by the thread count (`None`).
    #[cfg(test)]
    pub(crate) fn force_index(&mut self, on: Option<bool>) {
        self.ix_force = on;
    }

    /// Tests: is the index still there (hooks put it back)?
    #[cfg(test)]
    pub(crate) fn has_index(&self) -> bool {
        self.ix.is_some()
    }

    /// The index holds every runnable and running thread, where it is, with
    /// its class under `v` and the keys it was queued with.
    fn ix_agrees(&self, st: &SchedState, v: &View, ix: &CandIndex) -> bool {
        let mut n = 0;
        for (t, j, loc, since, vr) in ix.members() {
            n += 1;
            let th = st.thread(t);
            let place = match loc {
                Loc::Queued(c) => {
                    th.core == Some(c)
                        && th.state == RunState::Runnable
                        && st.core(c).current != Some(t)
                        && vr == self.cfs().vr[t.idx()]
                }
                Loc::Running(c) => st.core(c).current == Some(t),
                Loc::Out => false,
            };
            assert!(place, "thread {t} is not at {loc:?}");
            assert_eq!(since, th.runnable_since, "thread {t}: runnable_since moved");
            assert_eq!(j, cls_idx(self.rank(st, v, t)), "thread {t}: stale class");
        }
        let active = st
            .threads
            .iter()
            .filter(|th| matches!(th.state, RunState::Runnable | RunState::Running))
            .count();
        assert_eq!(n, active, "the index misses runnable threads");
        true
    }

    /// Fast core to take over for a thread of class `r` under the index: the
    /// lowest class running on a fast core with no thread of class `r` or
    /// above queued, the cluster of `home` first, then the lowest number.
    fn fast_target(
        &self,
        st: &SchedState,
        ix: &CandIndex,
        r: Option<UtilityClass>,
        home: Option<CoreId>,
    ) -> Option<CoreId> {
        let rj = cls_idx(r);
        let claimed = (rj..NCLS).fold(CoreMask::EMPTY, |m, j| m.union(ix.queued_fast(j)));
        (0..rj).find_map(|j| {
            let m = ix.running_fast(j).minus(claimed);
            let near = home
                .map(|h| m.intersect(st.topo.cluster_mask(st.topo.cluster_of(h))))
                .filter(|n| !n.is_empty());
            near.unwrap_or(m).iter().next()
        })
    }

    /// Tracks the sequential phase of program `p` (see the module notes).
    fn refresh(&mut self, p: usize, v: &View) {
        let Some(ps) = self.progs.get_mut(p) else {
            return;
        };
        match v.runnable(p).unwrap_or(0) {
            0 => {}
            1 => {
                if ps.seq != v.sole(p) {
                    ps.seq = v.sole(p);
                    ps.boost_used = 0;
                }
            }
            _ => {
                ps.seq = None;
                ps.boost_used = 0;
            }
        }
    }

    /// Feeds the counter reading just taken for `t` to its monitor.
    fn read(&mut self, st: &SchedState, t: ThreadId) {
        let monitors = matches!(self.variant, Variant::Camp | Variant::Sfd);
        let p = &self.params.monitor;
        let s = &mut self.th[t.idx()];
        let covered = st.now.saturating_sub(s.last_read);
        s.last_read = st.now;
        if monitors {
            s.mon.reading(st.thread(t).predicted_speedup, covered, p);
            if let Some(mut ix) = self.ix.take_if(|_| self.ix_on) {
                let sf = self.sf_key(t);
                ix.resf(t, sf, |cx, x| cls_idx(self.class_in(cx, x)));
                self.ix = Some(ix);
            }
        }
    }

    /// A fast core's pick by a pass over every candidate (hand-built
    /// states, and the check of the index).
    fn pick_fast_scan(&self, st: &SchedState, c: CoreId, v: &View) -> Pick {
        let cfs = self.cfs();
        let mut best: Option<(CandKey, Pick)> = None;
        let mut offer = |key: CandKey, pick: Pick| {
            if best.as_ref().is_none_or(|(k, _)| key > *k) {
                best = Some((key, pick));
            }
        };
        for &t in &st.core(c).rq {
            let key = (self.rank(st, v, t), 2, 1, -cfs.vr[t.idx()], Reverse(t));
            offer(key, Pick::Local(t));
        }
        // Cores with a queue, and busy slow cores (running threads to take).
        let busy_slow = st
            .topo
            .all_mask()
            .minus(st.idle_mask())
            .minus(self.m().fast);
        for o in st.queued_mask().union(busy_slow).iter().filter(|&o| o != c) {
            let near = u8::from(st.topo.same_cluster(o, c));
            let waited = |t: ThreadId| -(st.thread(t).runnable_since as i64);
            for &t in &st.core(o).rq {
                let key = (self.rank(st, v, t), near, 1, waited(t), Reverse(t));
                offer(key, Pick::Steal { from: o, thread: t });
            }
            // BusyFCs: a fast core takes a thread running on a slow core.
            if !self.is_fast(o) {
                if let Some(t) = st.core(o).current {
                    let key = (self.rank(st, v, t), near, 0, waited(t), Reverse(t));
                    offer(key, Pick::PreemptRemote { from: o, thread: t });
                }
            }
        }
        best.map_or(Pick::Idle, |(_, p)| p)
    }

    /// Slow core for a thread becoming runnable: its previous core if idle,
    /// else idle before busy, own cluster before others, shortest queue.
    fn slow_place(&self, st: &SchedState, home: Option<CoreId>) -> CoreId {
        let m = self.m();
        if let Some(h) = home {
            if m.slow.contains(h) && idle(st, h) {
                return h;
            }
        }
        // Idle before busy (an idle core runs nothing), then the cluster of
        // `home`, the shortest queue, the lowest number: from the state's
        // masks on machines of many cores, where a pass over them costs more.
        let scan = || {
            m.slow.iter().min_by_key(|&c| {
                (
                    !idle(st, c),
                    !same_cluster(st, home, c),
                    st.nr_running(c),
                    c,
                )
            })
        };
        if st.topo.num_cores() <= MASKS_FROM {
            return scan().unwrap_or(CoreId(0));
        }
        let near = |mask: CoreMask| {
            let n = home.map_or(CoreMask::EMPTY, |h| {
                mask.intersect(st.topo.cluster_mask(st.topo.cluster_of(h)))
            });
            if n.is_empty() {
                mask
            } else {
                n
            }
        };
        let found = nearest(st, idle_cores(st).intersect(m.slow), home).or_else(|| {
            let (_, least) = st.least_loaded_in(near(m.slow))?;
            least.iter().next()
        });
        debug_assert_eq!(found, scan(), "slow core for a thread");
        found.unwrap_or(CoreId(0))
    }
}

/// Cores with nothing running and nothing queued, from the state's masks.
fn idle_cores(st: &SchedState) -> CoreMask {
    st.idle_mask().minus(st.queued_mask())
}

/// The lowest-numbered core of `mask` in the cluster of `home`, else the
/// lowest-numbered one.
fn nearest(st: &SchedState, mask: CoreMask, home: Option<CoreId>) -> Option<CoreId> {
    home.and_then(|h| {
        mask.intersect(st.topo.cluster_mask(st.topo.cluster_of(h)))
            .iter()
            .next()
    })
    .or_else(|| mask.iter().next())
}

/// A core with nothing running and nothing queued.
fn idle(st: &SchedState, c: CoreId) -> bool {
    st.is_idle(c) && st.core(c).rq.is_empty()
}

fn same_cluster(st: &SchedState, a: Option<CoreId>, b: CoreId) -> bool {
    a.is_some_and(|a| st.topo.same_cluster(a, b))
}

impl Policy for Camp {
    fn name(&self) -> &'static str {
        self.variant.name()
    }

    /// PA and RR decide from thread counts alone; CAMP and SFD monitor SFs.
    fn reads_predictions(&self) -> bool {
        matches!(self.variant, Variant::Camp | Variant::Sfd)
    }

    fn thread_created(&mut self, st: &SchedState, t: ThreadId) {
        self.init(st);
        self.cfs_mut().thread_created(t);
        if self.th.len() <= t.idx() {
            let fresh = ThreadSt {
                mon: SfMonitor::new(&self.params.monitor),
                fast_ns: 0,
                last_read: st.now,
                prev_core: None,
            };
            self.th.resize(t.idx() + 1, fresh);
        }
        let p = st.thread(t).program.idx();
        if self.progs.len() <= p {
            self.progs.resize(p + 1, ProgSt::default());
        }
        self.progs[p].created += 1;
    }

    fn select_core(&mut self, st: &SchedState, t: ThreadId, kind: WakeKind) -> CoreId {
        if !st.topo.is_asymmetric() {
            return self.cfs().select(st, t, kind);
        }
        let home = match kind {
            WakeKind::New { parent } => parent.and_then(|p| st.thread(p).core),
            WakeKind::Wakeup { .. } => st.thread(t).last_core,
        };
        let fast = self.m().fast;
        // BusyFCs: an idle fast core takes anything, nearest first.
        let scan = || {
            fast.iter()
                .filter(|&c| idle(st, c))
                .min_by_key(|&c| (!same_cluster(st, home, c), c))
        };
        let f = if st.topo.num_cores() <= MASKS_FROM {
            scan()
        } else {
            let f = nearest(st, idle_cores(st).intersect(fast), home);
            debug_assert_eq!(f, scan(), "idle fast core");
            f
        };
        if let Some(f) = f {
            return f;
        }
        // A fast core whose thread is of a lower class than t's.
        let v = self.view(st, Some(t), None);
        let r = self.rank(st, &v, t);
        if r.is_some() {
            let scan = |this: &Camp| {
                fast.iter()
                    .filter_map(|c| {
                        let rc = this.rank(st, &v, st.core(c).current?);
                        let claimed = st.core(c).rq.iter().any(|&q| this.rank(st, &v, q) >= r);
                        (rc < r && !claimed).then_some((rc, c))
                    })
                    .min_by_key(|&(rc, c)| (rc, !same_cluster(st, home, c), c))
                    .map(|(_, c)| c)
            };
            let target = match self.ix_synced(st, &v) {
                Some(ix) => {
                    let f = self.fast_target(st, &ix, r, home);
                    self.ix = Some(ix);
                    debug_assert_eq!(f, scan(self), "indexed fast-core target");
                    f
                }
                None => scan(self),
            };
            if let Some(f) = target {
                return f;
            }
        }
        self.slow_place(st, home)
    }

    fn enqueued(&mut self, st: &SchedState, c: CoreId, t: ThreadId, wakeup: bool) {
        let new = st.thread(t).last_core.is_none() && wakeup;
        self.cfs_mut().enqueued(st, c, t, wakeup, new);
        self.ix_put(st, t, Loc::Queued(c));
        let v = self.view(st, None, None);
        self.refresh(st.thread(t).program.idx(), &v);
    }

    fn should_preempt(&mut self, st: &SchedState, c: CoreId, t: ThreadId) -> bool {
        if !st.topo.is_asymmetric() || !self.is_fast(c) {
            return self.cfs().wakeup_preempt(st, c, t, 1.0);
        }
        let Some(cur) = st.core(c).current else {
            return false;
        };
        let v = self.view(st, None, None);
        match self.rank(st, &v, t).cmp(&self.rank(st, &v, cur)) {
            std::cmp::Ordering::Greater => true,
            std::cmp::Ordering::Equal => self.cfs().wakeup_preempt(st, c, t, 1.0),
            std::cmp::Ordering::Less => false,
        }
    }

    fn pick_next(&mut self, st: &SchedState, c: CoreId) -> Pick {
        if !st.topo.is_asymmetric() {
            return self.cfs().pick(st, c);
        }
        if !self.is_fast(c) {
            // Slow cores: plain CFS, pulling from any queue when idle.
            if let Some(t) = self.cfs().leftmost(st, c) {
                return Pick::Local(t);
            }
            return match self.cfs().idle_pull(st, c) {
                Some((from, thread)) => Pick::Steal { from, thread },
                None => Pick::Idle,
            };
        }
        // Fast cores: the highest class anywhere, local and nearby first.
        let v = self.view(st, None, None);
        let Some(ix) = self.ix_synced(st, &v) else {
            return self.pick_fast_scan(st, c, &v);
        };
        let pick = match ix.best_for(c) {
            None => Pick::Idle,
            Some((_, Cand::Local(t))) => Pick::Local(t),
            Some((_, Cand::Queued(from, thread))) => Pick::Steal { from, thread },
            Some((_, Cand::Running(from, thread))) => Pick::PreemptRemote { from, thread },
        };
        self.ix = Some(ix);
        debug_assert_eq!(pick, self.pick_fast_scan(st, c, &v), "indexed pick");
        pick
    }

    fn running(&mut self, st: &SchedState, c: CoreId, t: ThreadId) {
        self.ix_put(st, t, Loc::Running(c));
        let mp = &self.params.monitor;
        let s = &mut self.th[t.idx()];
        if s.prev_core.is_some_and(|p| p != c) {
            s.mon.migrated(mp);
        }
        s.prev_core = Some(c);
        s.last_read = st.now;
    }

    fn stopped(&mut self, st: &SchedState, c: CoreId, t: ThreadId, ran: Nanos, why: StopReason) {
        self.ix_put(st, t, Loc::Out);
        self.cfs_mut().stopped(st, c, t, ran, 1.0);
        if st.topo.is_asymmetric() && self.is_fast(c) {
            self.th[t.idx()].fast_ns += ran;
        }
        self.read(st, t);
        let gone = (why == StopReason::Exited).then_some(t);
        if let (Some(t), Some(ix)) = (gone, self.ix.as_mut()) {
            ix.forget(t);
        }
        let v = self.view(st, None, gone);
        self.refresh(st.thread(t).program.idx(), &v);
    }

    fn migrated(&mut self, st: &SchedState, t: ThreadId, from: CoreId, to: CoreId) {
        self.ix_put(st, t, Loc::Out);
        self.cfs_mut().migrated(st, t, from, to);
    }
    fn slice_ns(&self, st: &SchedState, c: CoreId, _t: ThreadId) -> Nanos {
        self.cfs.as_ref().map_or(NS_PER_MS, |k| k.slice(st, c))
    }

    fn tick(&mut self, st: &SchedState, c: CoreId, out: &mut Vec<Action>) -> bool {
        let Some(cur) = st.core(c).current else {
            return false;
        };
        if !st.topo.is_asymmetric() {
            let k = self.cfs();
            k.periodic_balance(st, c, out);
            return k.tick_preempt(st, c, 1.0);
        }
        self.read(st, cur);
        let v = self.view(st, None, None);
        let p = st.thread(cur).program.idx();
        self.refresh(p, &v);
        // Boost ticks are charged while the thread runs boosted.
        if self.rank(st, &v, cur) == Some(UtilityClass::SequentialBoosted) {
            self.progs[p].boost_used += 1;
        }
        if self.last_balance != Some(st.now) {
            self.last_balance = Some(st.now);
            self.balance(st, out);
        }
        if !self.is_fast(c) {
            return self.cfs().tick_preempt(st, c, 1.0);
        }
        // A fast core time-shares only among its best class.
        let v = self.view(st, None, None);
        let rc = self.rank(st, &v, cur);
        let scan = |this: &Camp| st.core(c).rq.iter().map(|&t| this.rank(st, &v, t)).max();
        let best_queued = match self.ix_synced(st, &v) {
            Some(ix) => {
                let b = ix.best_local(c).map(cls_val);
                self.ix = Some(ix);
                debug_assert_eq!(b, scan(self), "indexed best queued class");
                b
            }
            None => scan(self),
        };
        match best_queued {
            Some(b) if b > rc => true,
            Some(b) if b == rc => self.cfs().tick_preempt(st, c, 1.0),
            _ => false,
        }
    }
}

#[cfg(test)]
mod view_tests {
    use super::*;
    use crate::test_util::{run_on, state_apps};
    use colab_core::{BlockKind, CoreOrder, ProgramId, ThreadInfo, Topology};

    /// Program 0: thread 0 running, 1 blocked, 2 running; program 1: thread 3
    /// blocked. The same situation hand-built (scanned) and kept by the
    /// simulator's counts (tracked) must give the same view.
    fn states() -> [SchedState; 2] {
        let mut hand = state_apps("2B2S", &[(0, 2.0), (0, 2.0), (0, 2.0), (1, 2.0)]);
        run_on(&mut hand, 0, 0);
        run_on(&mut hand, 1, 2);
        let topo = Topology::named("2B2S", CoreOrder::BigFirst).unwrap();
        let mut tracked = SchedState::tracked(topo);
        for (i, p) in [0u16, 0, 0, 1].into_iter().enumerate() {
            tracked.add_thread(ThreadInfo::new(ThreadId(i as u32), ProgramId(p), 0, 2.0));
        }
        for t in [0, 2] {
            tracked.set_state(ThreadId(t), RunState::Running);
        }
        assert_eq!(hand.threads[1].state, RunState::Blocked(BlockKind::Join));
        [hand, tracked]
    }

    #[test]
    fn views_count_extra_and_exclude_alike_on_tracked_and_hand_built_states() {
        for st in states() {
            let mut p = Camp::new(Variant::Camp, CampParams::default());
            for t in 0..4 {
                p.thread_created(&st, ThreadId(t));
            }
            let v = p.view(&st, None, None);
            assert_eq!(
                (v.runnable(0), v.runnable(1), v.sole(0)),
                (Some(2), Some(0), None)
            );
            // A waking thread counts; a running one counts once.
            let v = p.view(&st, Some(ThreadId(3)), None);
            assert_eq!((v.runnable(1), v.sole(1)), (Some(1), Some(ThreadId(3))));
            assert_eq!(p.view(&st, Some(ThreadId(0)), None).runnable(0), Some(2));
            // An exiting running thread is left out: thread 2 is then alone.
            let v = p.view(&st, None, Some(ThreadId(0)));
            assert_eq!((v.runnable(0), v.sole(0)), (Some(1), Some(ThreadId(2))));
            // Excluded and extra at once: left out.
            let v = p.view(&st, Some(ThreadId(1)), Some(ThreadId(1)));
            assert_eq!(v.runnable(0), Some(2));
            assert_eq!(v.runnable(7), None);
        }
    }
}
