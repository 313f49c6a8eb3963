//! The `cfs` policy (`-p cfs`): CFS's engine with no affinity control and
//! vruntime charged 1:1 with runtime, the papers' speedup-unaware baseline.
//!
//! The engine, [`CfsCore`] in engine.rs, is apart from the policy because
//! most other policies (WASH, COLAB, GTS, CAMP, Prop-SP, EEVDF, ROTA) build
//! on it; what it models and simplifies is written down there.

mod engine;

pub use engine::{CfsCore, CfsTunables, NewStart};

use colab_core::{Action, CoreId, Nanos, Pick, SchedState, ThreadId, WakeKind, NS_PER_MS};

/// The `cfs` policy: CfsCore with no affinity control.
pub struct Cfs {
    core: Option<CfsCore>,
}

impl Cfs {
    pub fn new() -> Cfs {
        Cfs { core: None }
    }
    fn c(&mut self, st: &SchedState) -> &mut CfsCore {
        self.core.get_or_insert_with(|| CfsCore::new(st))
    }
}

impl Default for Cfs {
    fn default() -> Self {
        Cfs::new()
    }
}

impl colab_core::Policy for Cfs {
    fn name(&self) -> &'static str {
        "cfs"
    }

    fn reads_predictions(&self) -> bool {
        false
    }
    fn thread_created(&mut self, st: &SchedState, t: ThreadId) {
        self.c(st).thread_created(t);
    }
    fn select_core(&mut self, st: &SchedState, t: ThreadId, kind: WakeKind) -> CoreId {
        self.c(st).select(st, t, kind)
    }
    fn enqueued(&mut self, st: &SchedState, c: CoreId, t: ThreadId, wakeup: bool) {
        let new = st.thread(t).last_core.is_none() && wakeup;
        self.c(st).enqueued(st, c, t, wakeup, new);
    }
    fn should_preempt(&mut self, st: &SchedState, c: CoreId, t: ThreadId) -> bool {
        self.c(st).wakeup_preempt(st, c, t, 1.0)
    }
    fn pick_next(&mut self, st: &SchedState, c: CoreId) -> Pick {
        self.c(st).pick(st, c)
    }
    fn stopped(
        &mut self,
        st: &SchedState,
        c: CoreId,
        t: ThreadId,
        ran: Nanos,
        _why: colab_core::StopReason,
    ) {
        self.c(st).stopped(st, c, t, ran, 1.0);
    }
    fn migrated(&mut self, st: &SchedState, t: ThreadId, from: CoreId, to: CoreId) {
        self.c(st).migrated(st, t, from, to);
    }
    fn slice_ns(&self, st: &SchedState, c: CoreId, _t: ThreadId) -> Nanos {
        self.core.as_ref().map_or(NS_PER_MS, |k| k.slice(st, c))
    }
    fn tick(&mut self, st: &SchedState, c: CoreId, out: &mut Vec<Action>) -> bool {
        let k = self.c(st);
        k.periodic_balance(st, c, out);
        k.tick_preempt(st, c, 1.0)
    }
}
