//! The domains' queued tasks, kept as the simulator reports them (a task
//! joins a queue at `enqueued`, leaves it at `running` or `migrated`), so
//! that a pick reads the earliest deadline in O(log n) and the domain sums
//! without a pass over every run queue: machines go to 1,024 cores. Only
//! for states the simulator keeps (`SchedState::active_tracked`); hand-built
//! states (tests) scan the queues.
//!
//! Exact: a queued task's vdeadline (set at enqueue), avg_runtime_invr and
//! run_freq (changed at stopping and running) do not change while it waits,
//! so the keys and sums taken at enqueue are those a scan would read.

use colab_core::{CoreId, ThreadId};
use std::collections::BTreeSet;

/// One queued task as it was counted in.
#[derive(Clone, Copy, Debug)]
struct Entry {
    core: CoreId,
    dom: usize,
    vdeadline: u64,
    svc: u64,
    load: u64,
}

/// One domain's queued tasks.
#[derive(Clone, Debug, Default)]
pub struct DomQueue {
    /// By (vdeadline, task): dom_head's order, ties to the lower id.
    pub by_deadline: BTreeSet<(u64, ThreadId)>,
    /// Summed avg_runtime_invr (cpdomc->qload_svc_invr).
    pub svc: u64,
    /// Summed task load (maybe_update_sys's qload).
    pub load: u64,
}

#[derive(Clone, Debug, Default)]
pub struct Queues {
    pub doms: Vec<DomQueue>,
    /// Per task, its entry while queued.
    at: Vec<Option<Entry>>,
    /// Tasks queued in all.
    pub len: u64,
}

impl Queues {
    pub fn new(nr_doms: usize) -> Queues {
        Queues {
            doms: vec![DomQueue::default(); nr_doms],
            at: Vec::new(),
            len: 0,
        }
    }

    /// `t` joined `core`'s queue (of domain `dom`).
    pub fn insert(
        &mut self,
        t: ThreadId,
        core: CoreId,
        dom: usize,
        vdeadline: u64,
        svc: u64,
        load: u64,
    ) {
        self.remove(t);
        if self.at.len() <= t.idx() {
            self.at.resize(t.idx() + 1, None);
        }
        self.at[t.idx()] = Some(Entry {
            core,
            dom,
            vdeadline,
            svc,
            load,
        });
        let q = &mut self.doms[dom];
        q.by_deadline.insert((vdeadline, t));
        q.svc += svc;
        q.load += load;
        self.len += 1;
    }

    /// `t` left its queue (nothing if it was not queued).
    pub fn remove(&mut self, t: ThreadId) {
        let Some(e) = self.at.get_mut(t.idx()).and_then(Option::take) else {
            return;
        };
        let q = &mut self.doms[e.dom];
        let found = q.by_deadline.remove(&(e.vdeadline, t));
        debug_assert!(found, "lavd: queue index lost task {t}");
        q.svc -= e.svc;
        q.load -= e.load;
        self.len -= 1;
    }

    /// The core whose queue holds `t`, if queued.
    pub fn core_of(&self, t: ThreadId) -> Option<CoreId> {
        self.at.get(t.idx()).copied().flatten().map(|e| e.core)
    }
}
