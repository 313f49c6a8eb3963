//! HSP and Prop-SP (Saez et al., "Prop-SP: throughput-fairness trade-off on
//! AMPs", sections 2-4), as layers over [`CfsCore`](crate::cfs::CfsCore), in the pattern of WASH:
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

use colab_core::{
    Action, CoreId, Nanos, Pick, Policy, ProgramId, SchedState, StopReason, ThreadId, ThreadInfo,
    WakeKind, NS_PER_MS,
};

mod credits;
#[macro_use]
mod layer;

pub use credits::{
    app_speedup, assign_credits, dynamic_weight, hsp_choice, observe_apps, sp_busy_fcs, sp_even,
    AppView, Assignment,
};
pub(crate) use layer::ord_f64;
use layer::FastLayer;

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
