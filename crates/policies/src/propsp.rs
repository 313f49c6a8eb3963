//! HSP and Prop-SP (Saez et al., "Prop-SP: throughput-fairness trade-off on
//! AMPs", sections 2-4), as layers over [`CfsCore`], in the pattern of WASH:
//! CFS keeps per-core fairness and load balance, the layer decides which
//! threads belong on the fast cores.
//!
//! Both policies share one mechanism (section 3.1): every thread has a
//! fast-core credit counter, in nanoseconds of fast-core time; running on a
//! fast core consumes credits; threads with credits left are preferentially
//! placed on fast cores, and an *inter-core swap* exchanges a fast core's
//! thread that has run out with a credit holder on a slow core, so load
//! balance is unchanged.
//! - **Prop-SP** awards credits every execution period (Algorithm 1) in
//!   proportion to each application's dynamic weight, (speedup - 1) x static
//!   weight.
//! - **HSP** (section 2, modified as in section 4 to rank applications by
//!   application-wide speedup) gives unlimited credits to the threads of the
//!   highest-speedup applications, enough of them to fill the fast cores, and
//!   none to the rest.
//!
//! Our reading of what the paper leaves open (each is also noted where it is
//! used):
//! - Fast cores are the cores of the fastest type (`Topology::is_big`);
//!   everything else is a slow core. On a symmetric machine the layer is off
//!   and the policies are plain CFS.
//! - Application = `ThreadInfo::program`. Its SF is the mean SF of its live
//!   threads (section 3.2: "SF is the average speedup factor of the
//!   application threads"); N is its number of live threads ("the number of
//!   threads in the application"). Its speedup is SP_Even or SP_BusyFCs
//!   (section 3.2) for the credit-distribution scheme in use.
//! - Static weight: all threads are nice 0, so every application has Linux's
//!   nice-0 weight, 1024 (the paper derives it "from the application
//!   priority"; it is per application, not summed over threads, since the
//!   paper faults A-DWRR for allocating per thread).
//! - A net speedup below zero (a noisy SF estimate under 1) gives weight 0.
//! - Credits awarded at an assignment replace the thread's counter: leftover
//!   credits expire and overdrafts are forgiven (the paper only says the
//!   counter is "increased"; banking credits across periods would let the
//!   credits in circulation exceed the fast cores' capacity, which Algorithm 1
//!   sizes per period, and Xen's Credit Scheduler, where the idea comes from,
//!   caps banked credit too).
//! - Execution period length: the paper computes it "so as to control the
//!   migration rate" but never gives the rule. We stretch the reference period
//!   so that the threads awarded credits get, on average, one reference period
//!   on a fast core each: period = REF x max(1, ceil(credited threads / NFC)).
//!   Each fast core then changes hands at most about once per REF on average.
//! - "Runnable threads" are those runnable or running at the assignment
//!   instant; a thread blocked then gets no credits until the next one. The
//!   first assignment happens one reference period after start (nothing
//!   holds credits before it).
//! - The period length is returned by `period_ns`, which the simulator asks
//!   again after every `periodic` call, so each period can differ.
//! - BusyFCs "goes sequentially through runnable threads": in thread-creation
//!   order.
//! - The distribution scheme is a parameter (the paper chooses it per
//!   application by its parallel granularity, which the scheduler does not
//!   observe); the default is Even.
//! - Work conservation (footnote 1: the schedulers compared leave no core idle
//!   while threads wait): an idle fast core first takes credit holders, then
//!   any queued thread, then a thread running on a slow core. Time a thread
//!   without credits spends on an otherwise idle fast core goes unbilled at the
//!   next assignment (see above).
//! - A thread without credits queued on a fast core behind a running credit
//!   holder moves to the least loaded slow core at the fast core's tick
//!   (threads with credits are "preferentially assigned to fast cores", the
//!   rest to slow ones): a holder is never preempted by it there, so it
//!   would otherwise wait as long as holders keep the core, under HSP for
//!   ever while the chosen programs restart (a bodytrack worker in a random
//!   mix of seed 16180 on 1B3S never ran again, and the run never ended).

use crate::cfs::CfsCore;
use crate::queue_index::{QueueIndex, QueuedIndex, RunningIndex};
use colab_core::{
    Action, CoreId, CoreMask, Nanos, Pick, Policy, ProgramId, RunState, SchedState, StopReason,
    ThreadId, ThreadInfo, WakeKind, NS_PER_MS,
};
use std::cmp::Reverse;

/// Linux's load weight for nice 0 (`sched_prio_to_weight[20]`): the static
/// weight of every application here, since all threads run at nice 0.
pub const NICE_0_WEIGHT: f64 = 1024.0;

/// Where Prop-SP takes a thread's speedup factor from (section 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SfSource {
    /// Prop-SP (static): "a constant SF value for each thread, measured prior
    /// to the execution". The simulator gives no measurement before a thread
    /// runs, so we use the first estimate the OS has, the one at creation,
    /// and keep it for the thread's lifetime.
    Static,
    /// Prop-SP (dynamic), the base implementation: SFs estimated online; we
    /// read the thread's current predicted speedup at each credit assignment.
    Dynamic,
}

/// Per-thread credit distribution inside a multithreaded application (3.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Distribution {
    /// Credits shared uniformly among the application's runnable threads.
    Even,
    /// Runnable threads in turn get what one fast core can consume in the next
    /// period, until the application's credits run out.
    BusyFcs,
}

/// Reference execution period (CRED_1FC_REF, Algorithm 1). The paper gives no
/// value. Assumption: 30 ms, the accounting period of Xen's Credit Scheduler
/// \[4\], from which Prop-SP borrows its credits.
pub const REF_PERIOD_NS: Nanos = 30 * NS_PER_MS;

#[derive(Clone, Debug, PartialEq)]
pub struct PropSpParams {
    pub sf: SfSource,
    pub distribution: Distribution,
    /// CRED_1FC_REF: credits one fast core consumes in the reference
    /// execution period, i.e. its length in ns (see [`REF_PERIOD_NS`]).
    pub ref_period_ns: Nanos,
}

impl Default for PropSpParams {
    fn default() -> Self {
        PropSpParams {
            // Section 4: the dynamic variant is the base implementation.
            sf: SfSource::Dynamic,
            // Assumption: the paper picks per application; Even is the
            // default because it treats all of an application's threads alike.
            distribution: Distribution::Even,
            ref_period_ns: REF_PERIOD_NS,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct HspParams {
    /// How often the ranking is redone. The paper gives none. Assumption: the
    /// same reference period as Prop-SP, so both react to SF changes at the
    /// same pace.
    pub period_ns: Nanos,
    /// Which section 3.2 formula gives the application-wide speedup (same
    /// default as Prop-SP, so both rank applications the same way).
    pub distribution: Distribution,
}

impl Default for HspParams {
    fn default() -> Self {
        HspParams {
            period_ns: REF_PERIOD_NS,
            distribution: Distribution::Even,
        }
    }
}

// ----- the paper's formulas ---------------------------------------------

/// SP_Even (section 3.2): MIN(NFC, N) / N x (SF - 1) + 1.
pub fn sp_even(sf: f64, n: usize, nfc: usize) -> f64 {
    let n = n.max(1);
    nfc.min(n) as f64 / n as f64 * (sf - 1.0) + 1.0
}

/// SP_BusyFCs (section 3.2): (SF - 1) / (floor((N - 1) / NFC) + 1)^2 + 1.
pub fn sp_busy_fcs(sf: f64, n: usize, nfc: usize) -> f64 {
    let n = n.max(1);
    let k = ((n - 1) / nfc.max(1) + 1) as f64;
    (sf - 1.0) / (k * k) + 1.0
}

/// Application speedup from all fast cores under a distribution scheme.
pub fn app_speedup(d: Distribution, sf: f64, n: usize, nfc: usize) -> f64 {
    match d {
        Distribution::Even => sp_even(sf, n, nfc),
        Distribution::BusyFcs => sp_busy_fcs(sf, n, nfc),
    }
}

/// Dynamic weight (section 3.1): (speedup - 1) x static weight, never negative.
pub fn dynamic_weight(speedup: f64, static_weight: f64) -> f64 {
    (speedup - 1.0).max(0.0) * static_weight
}

/// What the scheduler observes of one application.
#[derive(Clone, Debug, PartialEq)]
pub struct AppView {
    pub program: ProgramId,
    /// Mean SF of its live threads.
    pub sf: f64,
    /// Live (not exited) threads: N in the section 3.2 formulas.
    pub threads: usize,
    /// Runnable or running threads, in creation order.
    pub runnable: Vec<ThreadId>,
}

/// Groups live threads by application, in program order, taking each
/// thread's SF from `sf_of`.
pub fn observe_apps(st: &SchedState, sf_of: impl Fn(&ThreadInfo) -> f64) -> Vec<AppView> {
    let mut apps: Vec<AppView> = Vec::new();
    let mut sf_sum: Vec<f64> = Vec::new();
    for th in st.live_threads() {
        let i = match apps.iter().position(|a| a.program == th.program) {
            Some(i) => i,
            None => {
                apps.push(AppView {
                    program: th.program,
                    sf: 0.0,
                    threads: 0,
                    runnable: Vec::new(),
                });
                sf_sum.push(0.0);
                apps.len() - 1
            }
        };
        sf_sum[i] += sf_of(th);
        apps[i].threads += 1;
        if matches!(th.state, RunState::Runnable | RunState::Running) {
            apps[i].runnable.push(th.id);
        }
    }
    for (a, s) in apps.iter_mut().zip(sf_sum) {
        a.sf = s / a.threads as f64;
        a.runnable.sort();
    }
    apps.sort_by_key(|a| a.program);
    apps
}

/// The outcome of one credit assignment (Algorithm 1).
#[derive(Clone, Debug, PartialEq)]
pub struct Assignment {
    /// Length of the next execution period.
    pub period_ns: Nanos,
    /// Dynamic weight of every application with runnable threads (the set R).
    pub weights: Vec<(ProgramId, f64)>,
    /// Credits (ns of fast-core time) per application after scaling.
    pub app_credits: Vec<(ProgramId, f64)>,
    /// Credits per thread; threads not listed get none.
    pub credits: Vec<(ThreadId, f64)>,
}

/// Algorithm 1 over the observed applications, with `nfc` fast cores.
pub fn assign_credits(apps: &[AppView], nfc: usize, ref_ns: Nanos, d: Distribution) -> Assignment {
    let refc = ref_ns as f64;
    // R: applications with runnable threads.
    let r: Vec<&AppView> = apps.iter().filter(|a| !a.runnable.is_empty()).collect();
    // Step 1: dynamic weights. (Algorithm 1 also sorts S by weight; with
    // per-application distribution the order changes nothing, so we do not.)
    let weights: Vec<(ProgramId, f64)> = r
        .iter()
        .map(|a| {
            let sp = app_speedup(d, a.sf, a.threads, nfc);
            (a.program, dynamic_weight(sp, NICE_0_WEIGHT))
        })
        .collect();
    let total_weight: f64 = weights.iter().map(|w| w.1).sum();
    // Step 2: credits for the reference period.
    let total_credits = refc * nfc as f64;
    let ref_credits: Vec<f64> = weights
        .iter()
        .map(|&(_, w)| {
            if total_weight > 0.0 {
                total_credits * w / total_weight
            } else {
                0.0
            }
        })
        .collect();
    // Step 3: period length (our migration-rate rule, see the module doc),
    // from how many threads will receive credits.
    let credited: usize = r
        .iter()
        .zip(&ref_credits)
        .filter(|(_, &c)| c > 0.0)
        .map(|(a, &c)| match d {
            Distribution::Even => a.runnable.len(),
            // Each thread takes at most one fast core's worth of the period.
            Distribution::BusyFcs => ((c / refc - 1e-9).ceil() as usize).clamp(1, a.runnable.len()),
        })
        .sum();
    let stretch = credited.div_ceil(nfc.max(1)).max(1);
    let period_ns = ref_ns * stretch as Nanos;
    let cred_per_fc_next_period = period_ns as f64;
    let scale = cred_per_fc_next_period / refc;
    let mut app_credits = Vec::with_capacity(r.len());
    let mut credits = Vec::new();
    for (a, &c) in r.iter().zip(&ref_credits) {
        let c = c * scale;
        app_credits.push((a.program, c));
        if c <= 0.0 {
            continue;
        }
        match d {
            Distribution::Even => {
                let each = c / a.runnable.len() as f64;
                credits.extend(a.runnable.iter().map(|&t| (t, each)));
            }
            Distribution::BusyFcs => {
                let mut left = c;
                for &t in &a.runnable {
                    if left <= 0.0 {
                        break;
                    }
                    let give = left.min(cred_per_fc_next_period);
                    credits.push((t, give));
                    left -= give;
                }
            }
        }
    }
    Assignment {
        period_ns,
        weights,
        app_credits,
        credits,
    }
}

/// HSP's choice: applications in descending application-wide speedup (ties:
/// lower program id) until their runnable threads fill the fast cores.
pub fn hsp_choice(apps: &[AppView], nfc: usize, d: Distribution) -> Vec<ProgramId> {
    let mut r: Vec<(ProgramId, f64, usize)> = apps
        .iter()
        .filter(|a| !a.runnable.is_empty())
        .map(|a| {
            (
                a.program,
                app_speedup(d, a.sf, a.threads, nfc),
                a.runnable.len(),
            )
        })
        .collect();
    r.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut slots = nfc;
    let mut chosen = Vec::new();
    for (p, _, n) in r {
        if slots == 0 {
            break;
        }
        chosen.push(p);
        slots = slots.saturating_sub(n);
    }
    chosen
}

// ----- the shared mechanism ---------------------------------------------

/// CFS plus fast-core credits, inter-core swaps and credit-aware placement.
struct FastLayer {
    cfs: CfsCore,
    /// Fast-core credits per thread, ns (infinite for HSP's chosen threads).
    credit: Vec<f64>,
    /// Threads whose `credit` is positive (exited ones included): while
    /// there are none, no thread can be a swap partner.
    holders: usize,
    /// When credits were last assigned: fast-core time before it was billed
    /// to the previous period.
    period_start: Nanos,
    /// Threads already picked as swap partners during the tick at `claimed_at`
    /// (every core's tick sees the same state; a thread moves only once).
    claimed: Vec<ThreadId>,
    claimed_at: Nanos,
    /// Per core, its queue three ways, credit holders first in each: by
    /// vruntime (a fast core's own holders), by time waiting (holders
    /// stolen from elsewhere) and by credits left, most first (swap
    /// partners), so that none of these needs a pass over the queues.
    by_vr: QueueIndex<(bool, i64)>,
    by_wait: QueueIndex<(bool, Nanos)>,
    by_credit: QueueIndex<(bool, Reverse<i64>)>,
    /// The threads running on slow cores by [`ClaimKey`], on machines
    /// with many slow cores, so that an idle fast core finds the best claim
    /// without a pass over them. Pushed when a thread starts on a slow
    /// core, at its core's tick (the counters, so the prediction, are read
    /// just before) and when credits change.
    slow_running: RunningIndex<ClaimKey>,
    /// Every queued credit holder by (no credits, runnable_since) on
    /// machines of more than 64 cores, so that an idle fast core finds the
    /// longest waiting one without a pass over the queues. Threads without
    /// credits are not pushed (they would only end the search); one whose
    /// credits run out while queued has a key that no longer matches.
    all_by_wait: QueuedIndex<(bool, Nanos)>,
}

/// A claim on a fast core: credits left, then predicted speedup, both
/// most first, then the lower id.
type ClaimKey = (Reverse<i64>, Reverse<i64>);

/// An f64 as an i64 in the same order as `f64::total_cmp`.
pub(crate) fn ord_f64(x: f64) -> i64 {
    let b = x.to_bits() as i64;
    if b < 0 {
        b ^ i64::MAX
    } else {
        b
    }
}

impl FastLayer {
    fn new(st: &SchedState) -> FastLayer {
        FastLayer {
            cfs: CfsCore::new(st),
            credit: Vec::new(),
            holders: 0,
            period_start: 0,
            claimed: Vec::new(),
            claimed_at: 0,
            by_vr: QueueIndex::new(st.topo.num_cores()),
            by_wait: QueueIndex::new(st.topo.num_cores()),
            by_credit: QueueIndex::new(st.topo.num_cores()),
            slow_running: RunningIndex::new(st.topo.all_mask().minus(st.topo.big_mask())),
            all_by_wait: QueuedIndex::default(),
        }
    }

    /// Are the threads running on slow cores indexed? On a simulator state
    /// with more than 64 slow cores (fewer are faster to scan).
    fn slow_kept(&self, st: &SchedState) -> bool {
        st.active_tracked && st.topo.little_mask().count() > 64
    }

    fn claim_key(st: &SchedState, credit: &[f64], t: ThreadId) -> ClaimKey {
        let cr = credit.get(t.idx()).copied().unwrap_or(0.0);
        (
            Reverse(ord_f64(cr)),
            Reverse(ord_f64(st.thread(t).predicted_speedup)),
        )
    }

    /// `t` runs on `c` (at its start and at each tick, after the counters
    /// were read): indexed if `c` is a slow core.
    fn note_running(&mut self, st: &SchedState, c: CoreId, t: ThreadId) {
        if self.slow_kept(st) && !st.topo.is_big(c) {
            let credit = &self.credit;
            self.slow_running
                .push(st, t, |x| Self::claim_key(st, credit, x));
        }
    }

    /// No credits: sorts after the holders in every index.
    fn broke(credit: &[f64], t: ThreadId) -> bool {
        credit.get(t.idx()).copied().unwrap_or(0.0) <= 0.0
    }

    /// Indexes `t`, queued on `c` (at an enqueue, or when its credits changed).
    fn index(&mut self, st: &SchedState, c: CoreId, t: ThreadId) {
        let (credit, cfs) = (&self.credit, &self.cfs);
        self.by_vr
            .push(st, c, t, |t| (Self::broke(credit, t), cfs.vr[t.idx()]));
        self.by_wait.push(st, c, t, |t| {
            (Self::broke(credit, t), st.thread(t).runnable_since)
        });
        self.by_credit
            .push(st, c, t, |t| Self::credit_key(credit, t));
        if Self::queued_kept(st) && !Self::broke(credit, t) {
            self.all_by_wait.push(st, t, |t| {
                (Self::broke(credit, t), st.thread(t).runnable_since)
            });
        }
    }

    /// Is every queued thread indexed ([`FastLayer::all_by_wait`])?
    fn queued_kept(st: &SchedState) -> bool {
        st.active_tracked && st.topo.num_cores() > 64
    }

    fn credit_key(credit: &[f64], t: ThreadId) -> (bool, Reverse<i64>) {
        let cr = credit.get(t.idx()).copied().unwrap_or(0.0);
        (Self::broke(credit, t), Reverse(ord_f64(cr)))
    }

    /// The credit holder queued on `c` with the smallest (vruntime, id).
    fn local_holder_scan(&self, st: &SchedState, c: CoreId) -> Option<ThreadId> {
        st.core(c)
            .rq
            .iter()
            .copied()
            .filter(|&t| self.has_credit(st, t))
            .min_by_key(|&t| (self.cfs.vr[t.idx()], t))
    }

    fn local_holder(&mut self, st: &SchedState, c: CoreId) -> Option<ThreadId> {
        if !self.by_vr.is_on(st, c) {
            return self.local_holder_scan(st, c);
        }
        let (credit, cfs) = (&self.credit, &self.cfs);
        let vr_key = |t: ThreadId| (Self::broke(credit, t), cfs.vr[t.idx()]);
        let found = self
            .by_vr
            .first(st, c, vr_key)
            .filter(|&((broke, _), _)| !broke)
            .map(|(_, t)| t);
        debug_assert_eq!(
            found,
            self.local_holder_scan(st, c),
            "indexed credit holders of core {c} differ"
        );
        found
    }

    fn thread_created(&mut self, t: ThreadId) {
        self.cfs.thread_created(t);
        if self.credit.len() <= t.idx() {
            self.credit.resize(t.idx() + 1, 0.0);
        }
    }

    /// Replaces every thread's credits (an assignment starts a new period).
    fn set_credits(&mut self, st: &SchedState, credits: impl IntoIterator<Item = (ThreadId, f64)>) {
        let old = std::mem::take(&mut self.credit);
        self.credit = vec![0.0; old.len()];
        for (t, c) in credits {
            if t.idx() < self.credit.len() {
                self.credit[t.idx()] = c;
            }
        }
        self.holders = self.credit.iter().filter(|&&c| c > 0.0).count();
        self.period_start = st.now;
        // Threads on slow cores carry their new credits.
        if self.slow_kept(st) {
            for o in st.topo.little_mask().iter() {
                if let Some(t) = st.core(o).current {
                    self.note_running(st, o, t);
                }
            }
        }
        // Queued threads whose credits changed move in the indexes.
        if st.active_tracked {
            for c in st.queued_mask().iter() {
                for &t in &st.core(c).rq {
                    if old[t.idx()] != self.credit[t.idx()] {
                        self.index(st, c, t);
                    }
                }
            }
        }
    }

    fn active(st: &SchedState) -> bool {
        st.topo.is_asymmetric()
    }

    /// Credits left, counting the current run if `t` is on a fast core.
    fn credit_left(&self, st: &SchedState, t: ThreadId) -> f64 {
        let base = self.credit.get(t.idx()).copied().unwrap_or(0.0);
        match st.thread(t).core {
            Some(c) if st.core(c).current == Some(t) && st.topo.is_big(c) => {
                let from = st.core(c).run_start.max(self.period_start);
                base - st.now.saturating_sub(from) as f64
            }
            _ => base,
        }
    }

    fn has_credit(&self, st: &SchedState, t: ThreadId) -> bool {
        self.credit_left(st, t) > 0.0
    }

    fn free(st: &SchedState, c: CoreId) -> bool {
        st.is_idle(c) && st.core(c).rq.is_empty()
    }

    /// Credit holders go to an idle fast core, others to an idle slow core;
    /// failing that, any idle core; failing that, CFS placement.
    fn select(&self, st: &SchedState, t: ThreadId, kind: WakeKind) -> CoreId {
        if !Self::active(st) {
            return self.cfs.select(st, t, kind);
        }
        let big = st.topo.big_mask();
        let slow = st.topo.all_mask().minus(big);
        let (pref, other) = if self.has_credit(st, t) {
            (big, slow)
        } else {
            (slow, big)
        };
        let allowed = self.cfs.allowed(t);
        let prev = st.thread(t).last_core;
        // Free cores from the state's masks: a pass over idle cores would
        // visit those with a queue too (most of them on a loaded machine).
        let free = st.idle_mask().minus(st.queued_mask());
        let idle_in = |m: CoreMask| {
            let m = m.intersect(allowed);
            prev.filter(|&p| m.contains(p) && Self::free(st, p))
                .or_else(|| {
                    let c = m.intersect(free).iter().next();
                    debug_assert_eq!(
                        c,
                        m.intersect(st.idle_mask())
                            .iter()
                            .find(|&c| Self::free(st, c)),
                        "free cores from the masks"
                    );
                    c
                })
        };
        idle_in(pref)
            .or_else(|| idle_in(other))
            .unwrap_or_else(|| self.cfs.select(st, t, kind))
    }

    /// On a fast core a credit holder preempts a thread without credits and
    /// is never preempted by one; otherwise CFS decides.
    fn should_preempt(&self, st: &SchedState, c: CoreId, t: ThreadId) -> bool {
        if Self::active(st) && st.topo.is_big(c) {
            if let Some(cur) = st.core(c).current {
                match (self.has_credit(st, t), self.has_credit(st, cur)) {
                    (true, false) => return true,
                    (false, true) => return false,
                    _ => {}
                }
            }
        }
        self.cfs.wakeup_preempt(st, c, t, 1.0)
    }

    /// The thread running on a slow core with the best claim on fast core
    /// `c`: most credits left, then the highest predicted speedup, then the
    /// lower id.
    fn running_slow_scan(&self, st: &SchedState, c: CoreId) -> Option<(CoreId, ThreadId)> {
        st.topo
            .cores()
            .filter(|&o| !st.topo.is_big(o))
            .filter_map(|o| st.core(o).current.map(|t| (o, t)))
            .filter(|&(_, t)| self.cfs.allowed(t).contains(c))
            .max_by(|&(_, a), &(_, b)| {
                self.credit_left(st, a)
                    .total_cmp(&self.credit_left(st, b))
                    .then_with(|| {
                        st.thread(a)
                            .predicted_speedup
                            .total_cmp(&st.thread(b).predicted_speedup)
                    })
                    .then_with(|| b.cmp(&a))
            })
    }

    /// The credit holder queued on a core other than `c`, allowed on `c`,
    /// that has waited longest (runnable_since, then id), with its core.
    fn waiting_holder_scan(&self, st: &SchedState, c: CoreId) -> Option<(CoreId, ThreadId)> {
        st.queued_mask()
            .iter()
            .filter(|&o| o != c)
            .flat_map(|o| st.core(o).rq.iter().map(move |&t| (o, t)))
            .filter(|&(_, t)| self.cfs.allowed(t).contains(c) && self.has_credit(st, t))
            .min_by_key(|&(_, t)| (st.thread(t).runnable_since, t))
    }

    fn waiting_holder(&mut self, st: &SchedState, c: CoreId) -> Option<(CoreId, ThreadId)> {
        if Self::queued_kept(st) {
            let (credit, cfs) = (&self.credit, &self.cfs);
            let wait_key = |t: ThreadId| (Self::broke(credit, t), st.thread(t).runnable_since);
            // Holders sort first: the first entry without credits ends it.
            let found = self
                .all_by_wait
                .first_where(st, wait_key, |(broke, _), t, o| {
                    broke || o != c && cfs.allowed(t).contains(c)
                })
                .filter(|&((broke, _), _, _)| !broke)
                .map(|(_, t, o)| (o, t));
            debug_assert_eq!(
                found,
                self.waiting_holder_scan(st, c),
                "machine-wide waiting holders differ"
            );
            return found;
        }
        let mut best: Option<((Nanos, ThreadId), CoreId)> = None;
        for o in st.queued_mask().iter().filter(|&o| o != c) {
            let (credit, cfs) = (&self.credit, &self.cfs);
            let fits = |t: ThreadId| !Self::broke(credit, t) && cfs.allowed(t).contains(c);
            let mut found = None;
            if self.by_wait.is_on(st, o) {
                let wait_key = |t: ThreadId| (Self::broke(credit, t), st.thread(t).runnable_since);
                self.by_wait
                    .scan_until(st, o, wait_key, |(broke, since), t| {
                        if !broke && fits(t) {
                            found = Some((since, t));
                        }
                        broke || found.is_some()
                    });
            } else {
                found = st
                    .core(o)
                    .rq
                    .iter()
                    .copied()
                    .filter(|&t| fits(t))
                    .map(|t| (st.thread(t).runnable_since, t))
                    .min();
            }
            if let Some(k) = found.filter(|&k| best.is_none_or(|(b, _)| k < b)) {
                best = Some((k, o));
            }
        }
        let found = best.map(|((_, t), o)| (o, t));
        debug_assert_eq!(
            found,
            self.waiting_holder_scan(st, c),
            "indexed waiting holders differ"
        );
        found
    }

    /// The credit holder queued on a slow core `o`, allowed on `c` and not
    /// claimed this tick, with the most credits (then the lower id).
    fn partner_queued(&mut self, st: &SchedState, o: CoreId, c: CoreId) -> Option<ThreadId> {
        let (credit, cfs, claimed) = (&self.credit, &self.cfs, &self.claimed);
        let fits = |t: ThreadId| !claimed.contains(&t) && cfs.allowed(t).contains(c);
        if !self.by_credit.is_on(st, o) {
            return st
                .core(o)
                .rq
                .iter()
                .copied()
                .filter(|&t| fits(t) && !Self::broke(credit, t))
                .max_by(|&a, &b| credit[a.idx()].total_cmp(&credit[b.idx()]).then(b.cmp(&a)));
        }
        let mut found = None;
        let key_of = |t: ThreadId| Self::credit_key(credit, t);
        self.by_credit.scan_until(st, o, key_of, |(broke, _), t| {
            if !broke && fits(t) {
                found = Some(t);
            }
            broke || found.is_some()
        });
        found
    }

    /// A slow core runs CFS. A fast core prefers credit holders: its own
    /// queue's, then ones queued elsewhere, then ones running on slow cores;
    /// then, to stay work-conserving, any queued thread and finally a thread
    /// running on a slow core.
    fn pick(&mut self, st: &SchedState, c: CoreId) -> Pick {
        if !Self::active(st) || !st.topo.is_big(c) {
            return self.cfs.pick(st, c);
        }
        if let Some(t) = self.local_holder(st, c) {
            return Pick::Local(t);
        }
        if let Some(t) = self.cfs.leftmost(st, c) {
            return Pick::Local(t);
        }
        // A credit holder queued on another core, longest waiting first.
        let queued = self.waiting_holder(st, c);
        if let Some((from, thread)) = queued {
            return Pick::Steal { from, thread };
        }
        // Threads running on slow cores, best claim first: most credits left,
        // then the highest predicted speedup.
        let running_slow = if self.slow_kept(st) {
            let (credit, cfs) = (&self.credit, &self.cfs);
            let found = self.slow_running.best(
                st,
                |t| Self::claim_key(st, credit, t),
                |t| cfs.allowed(t).contains(c),
            );
            debug_assert_eq!(
                found,
                self.running_slow_scan(st, c),
                "indexed slow-core threads differ"
            );
            found
        } else {
            self.running_slow_scan(st, c)
        };
        if let Some((from, thread)) = running_slow {
            if self.has_credit(st, thread) {
                return Pick::PreemptRemote { from, thread };
            }
        }
        if let Some((from, thread)) = self.cfs.idle_pull(st, c) {
            return Pick::Steal { from, thread };
        }
        match running_slow {
            Some((from, thread)) => Pick::PreemptRemote { from, thread },
            None => Pick::Idle,
        }
    }

    /// Inter-core swaps (section 3.1): when the thread on fast core `c` has no
    /// credits left, a local credit holder takes over, or else the credit
    /// holder on a slow core with the most credits left trades places with it.
    fn tick(&mut self, st: &SchedState, c: CoreId, out: &mut Vec<Action>) -> bool {
        self.cfs.periodic_balance(st, c, out);
        let Some(cur) = st.core(c).current else {
            return false;
        };
        self.note_running(st, c, cur);
        if !Self::active(st) || !st.topo.is_big(c) {
            return self.cfs.tick_preempt(st, c, 1.0);
        }
        let local_holder = self.local_holder(st, c).is_some();
        if self.has_credit(st, cur) {
            // A thread without credits queued here waits for as long as
            // credit holders keep the core (for ever under HSP, whose holders'
            // credits never run out, while its chosen programs restart): it
            // goes to the least loaded slow core, where CFS shares it, as
            // placement would have put it.
            self.send_broke_to_slow(st, c, out);
            // Time-share only with other credit holders.
            return local_holder && self.cfs.tick_preempt(st, c, 1.0);
        }
        if local_holder {
            return true;
        }
        if self.claimed_at != st.now {
            self.claimed.clear();
            self.claimed_at = st.now;
        }
        debug_assert_eq!(
            self.holders,
            self.credit.iter().filter(|&&c| c > 0.0).count(),
            "credit holders counted"
        );
        // Per slow core: its running thread and its best queued holder;
        // no pass while no thread holds credits (before the first
        // assignment), as it would find none.
        let mut cands = Vec::new();
        if self.holders > 0 {
            for o in st.topo.little_mask().iter() {
                cands.extend(st.core(o).current);
                cands.extend(self.partner_queued(st, o, c));
            }
        }
        let partner = cands
            .into_iter()
            .filter(|t| !self.claimed.contains(t))
            .filter(|&t| self.cfs.allowed(t).contains(c) && self.has_credit(st, t))
            .map(|t| (t, self.credit_left(st, t)))
            .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)));
        debug_assert_eq!(
            partner.map(|p| p.0),
            st.topo
                .cores()
                .filter(|&o| !st.topo.is_big(o))
                .flat_map(|o| {
                    let core = st.core(o);
                    core.current.into_iter().chain(core.rq.iter().copied())
                })
                .filter(|t| !self.claimed.contains(t))
                .filter(|&t| self.cfs.allowed(t).contains(c) && self.has_credit(st, t))
                .map(|t| (t, self.credit_left(st, t)))
                .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)))
                .map(|p| p.0),
            "indexed swap partner differs"
        );
        if let Some((t, _)) = partner {
            let from = st.thread(t).core.expect("a runnable thread has a core");
            if self.cfs.allowed(cur).contains(from) {
                self.claimed.push(t);
                out.push(Action::Migrate { thread: t, to: c });
                out.push(Action::Migrate {
                    thread: cur,
                    to: from,
                });
                return false;
            }
        }
        self.cfs.tick_preempt(st, c, 1.0)
    }

    /// Moves the first thread without credits queued on fast core `c` (the
    /// queue's order; one per tick) to the least loaded slow core it may
    /// run on.
    fn send_broke_to_slow(&self, st: &SchedState, c: CoreId, out: &mut Vec<Action>) {
        let slow = st.topo.all_mask().minus(st.topo.big_mask());
        let moved = st.core(c).rq.iter().copied().find_map(|t| {
            let to = (!self.has_credit(st, t)).then(|| self.cfs.idlest_in(st, t, slow));
            to.flatten().map(|to| Action::Migrate { thread: t, to })
        });
        out.extend(moved);
    }

    /// Bills fast-core time (only the part inside the current period).
    fn stopped(&mut self, st: &SchedState, c: CoreId, t: ThreadId, ran: Nanos) {
        self.cfs.stopped(st, c, t, ran, 1.0);
        if Self::active(st) && st.topo.is_big(c) {
            let billed = ran.min(st.now.saturating_sub(self.period_start));
            if let Some(cr) = self.credit.get_mut(t.idx()) {
                let had = *cr > 0.0;
                *cr -= billed as f64;
                if had && *cr <= 0.0 {
                    self.holders -= 1;
                }
            }
        }
    }
}

/// Forwards the hooks every credit policy shares to its [`FastLayer`].
macro_rules! layer_hooks {
    () => {
        fn select_core(&mut self, st: &SchedState, t: ThreadId, kind: WakeKind) -> CoreId {
            self.layer(st).select(st, t, kind)
        }
        fn enqueued(&mut self, st: &SchedState, c: CoreId, t: ThreadId, wakeup: bool) {
            let new = st.thread(t).last_core.is_none() && wakeup;
            let layer = self.layer(st);
            layer.cfs.enqueued(st, c, t, wakeup, new);
            layer.index(st, c, t);
        }
        fn should_preempt(&mut self, st: &SchedState, c: CoreId, t: ThreadId) -> bool {
            self.layer(st).should_preempt(st, c, t)
        }
        fn running(&mut self, st: &SchedState, c: CoreId, t: ThreadId) {
            self.layer(st).note_running(st, c, t);
        }
        fn pick_next(&mut self, st: &SchedState, c: CoreId) -> Pick {
            self.layer(st).pick(st, c)
        }
        fn stopped(
            &mut self,
            st: &SchedState,
            c: CoreId,
            t: ThreadId,
            ran: Nanos,
            _why: StopReason,
        ) {
            self.layer(st).stopped(st, c, t, ran);
        }
        fn migrated(&mut self, st: &SchedState, t: ThreadId, from: CoreId, to: CoreId) {
            self.layer(st).cfs.migrated(st, t, from, to);
        }
        fn slice_ns(&self, st: &SchedState, c: CoreId, _t: ThreadId) -> Nanos {
            self.layer
                .as_ref()
                .map_or(NS_PER_MS, |l| l.cfs.slice(st, c))
        }
        fn tick(&mut self, st: &SchedState, c: CoreId, out: &mut Vec<Action>) -> bool {
            self.layer(st).tick(st, c, out)
        }
    };
}

// ----- Prop-SP -------------------------------------------------------------

/// Prop-SP (section 3): proportional fast-core credits.
pub struct PropSp {
    pub params: PropSpParams,
    layer: Option<FastLayer>,
    /// SF of each thread at its first estimate (for the static variant).
    first_sf: Vec<f64>,
    next_period_ns: Nanos,
    last: Option<Assignment>,
}

impl PropSp {
    pub fn new(params: PropSpParams) -> PropSp {
        let next_period_ns = params.ref_period_ns;
        PropSp {
            params,
            layer: None,
            first_sf: Vec::new(),
            next_period_ns,
            last: None,
        }
    }

    fn layer(&mut self, st: &SchedState) -> &mut FastLayer {
        self.layer.get_or_insert_with(|| FastLayer::new(st))
    }

    /// The SF Prop-SP uses for `th` under its variant.
    pub fn thread_sf(&self, th: &ThreadInfo) -> f64 {
        match self.params.sf {
            SfSource::Dynamic => th.predicted_speedup,
            SfSource::Static => self
                .first_sf
                .get(th.id.idx())
                .copied()
                .unwrap_or(th.predicted_speedup),
        }
    }

    /// Fast-core credits `t` has left now.
    pub fn credits(&self, st: &SchedState, t: ThreadId) -> f64 {
        self.layer.as_ref().map_or(0.0, |l| l.credit_left(st, t))
    }

    /// The last credit assignment.
    pub fn last_assignment(&self) -> Option<&Assignment> {
        self.last.as_ref()
    }

    /// Runs Algorithm 1 now and starts a new execution period.
    pub fn assign(&mut self, st: &SchedState) -> &Assignment {
        let apps = observe_apps(st, |th| self.thread_sf(th));
        let nfc = st.topo.big_mask().count();
        let a = assign_credits(
            &apps,
            nfc,
            self.params.ref_period_ns,
            self.params.distribution,
        );
        self.next_period_ns = a.period_ns;
        let credits = a.credits.clone();
        self.layer(st).set_credits(st, credits);
        self.last.insert(a)
    }
}

impl Policy for PropSp {
    fn name(&self) -> &'static str {
        match self.params.sf {
            SfSource::Dynamic => "propsp",
            SfSource::Static => "propsp-static",
        }
    }
    fn thread_created(&mut self, st: &SchedState, t: ThreadId) {
        self.layer(st).thread_created(t);
        if self.first_sf.len() <= t.idx() {
            self.first_sf.resize(t.idx() + 1, 1.0);
        }
        self.first_sf[t.idx()] = st.thread(t).predicted_speedup;
    }
    layer_hooks!();
    /// The next execution period's length, as the last assignment set it (the
    /// simulator asks again after every `periodic`).
    fn period_ns(&self) -> Option<Nanos> {
        Some(self.next_period_ns)
    }
    fn periodic(&mut self, st: &SchedState, _out: &mut Vec<Action>) {
        self.assign(st);
    }
}

// ----- HSP -----------------------------------------------------------------

/// HSP (section 2, application-wide as in section 4): fast cores go to the
/// threads of the applications with the highest speedup.
pub struct Hsp {
    pub params: HspParams,
    layer: Option<FastLayer>,
    chosen: Vec<ProgramId>,
}

impl Hsp {
    pub fn new(params: HspParams) -> Hsp {
        Hsp {
            params,
            layer: None,
            chosen: Vec::new(),
        }
    }

    fn layer(&mut self, st: &SchedState) -> &mut FastLayer {
        self.layer.get_or_insert_with(|| FastLayer::new(st))
    }

    /// Applications whose threads are entitled to fast cores.
    pub fn chosen(&self) -> &[ProgramId] {
        &self.chosen
    }

    /// Re-ranks applications; every live thread of a chosen application gets
    /// unlimited credits (so threads that wake later still qualify).
    pub fn rank(&mut self, st: &SchedState) {
        let apps = observe_apps(st, |th| th.predicted_speedup);
        let nfc = st.topo.big_mask().count();
        self.chosen = hsp_choice(&apps, nfc, self.params.distribution);
        let chosen = &self.chosen;
        let credits: Vec<(ThreadId, f64)> = st
            .live_threads()
            .filter(|th| chosen.contains(&th.program))
            .map(|th| (th.id, f64::INFINITY))
            .collect();
        self.layer
            .get_or_insert_with(|| FastLayer::new(st))
            .set_credits(st, credits);
    }
}

impl Policy for Hsp {
    fn name(&self) -> &'static str {
        "hsp"
    }
    fn thread_created(&mut self, st: &SchedState, t: ThreadId) {
        self.layer(st).thread_created(t);
        // A new thread of a chosen application shares its entitlement at once.
        if self.chosen.contains(&st.thread(t).program) {
            let layer = self.layer(st);
            if layer.credit[t.idx()] <= 0.0 {
                layer.holders += 1;
            }
            layer.credit[t.idx()] = f64::INFINITY;
        }
    }
    layer_hooks!();
    fn period_ns(&self) -> Option<Nanos> {
        Some(self.params.period_ns)
    }
    fn periodic(&mut self, st: &SchedState, _out: &mut Vec<Action>) {
        self.rank(st);
    }
}

#[cfg(test)]
mod slow_running_tests {
    use super::*;
    use colab_core::{CoreOrder, Topology};

    #[test]
    fn best_claim_first_and_stopped_threads_skipped() {
        let topo = Topology::named("2B70S", CoreOrder::BigFirst).unwrap();
        let mut st = SchedState::tracked(topo);
        // Threads 0-3 run on slow cores 2-5, with predicted speedups.
        for (i, sf) in [1.5, 2.5, 2.0, 3.0].into_iter().enumerate() {
            let t = ThreadId(i as u32);
            st.add_thread(ThreadInfo::new(t, ProgramId(0), 0, sf));
            st.set_state(t, RunState::Running);
            let c = CoreId(2 + i as u16);
            st.threads[i].core = Some(c);
            st.set_current(c, Some(t));
        }
        let credit = [5.0, 9.0, 9.0, 0.0];
        let key = |t: ThreadId| FastLayer::claim_key(&st, &credit, t);
        let mut ix = RunningIndex::new(st.topo.all_mask().minus(st.topo.big_mask()));
        for t in 0..4 {
            ix.push(&st, ThreadId(t), key);
        }
        // Most credits (9 each), then the higher speedup: thread 1.
        assert_eq!(ix.best(&st, key, |_| true), Some((CoreId(3), ThreadId(1))));
        assert_eq!(
            ix.best(&st, key, |t| t != ThreadId(1)),
            Some((CoreId(4), ThreadId(2)))
        );
        // Thread 1 stops: its entry is dead and dropped.
        let mut st2 = st.clone();
        st2.set_current(CoreId(3), None);
        let key2 = |t: ThreadId| FastLayer::claim_key(&st2, &credit, t);
        assert_eq!(
            ix.best(&st2, key2, |_| true),
            Some((CoreId(4), ThreadId(2)))
        );
        assert_eq!(ix.entries(), 3);
        // An entry whose key changed without a push is not trusted.
        let credit3 = [5.0, 9.0, 1.0, 0.0];
        let key3 = |t: ThreadId| FastLayer::claim_key(&st2, &credit3, t);
        assert_eq!(
            ix.best(&st2, key3, |_| true),
            Some((CoreId(2), ThreadId(0)))
        );
    }
}
