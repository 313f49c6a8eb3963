//! The mechanism HSP and Prop-SP share: CFS plus fast-core credits,
//! inter-core swaps and credit-aware placement, and the `Policy` hooks
//! both run it through.

use crate::cfs::CfsCore;
use crate::queue_index::{QueueIndex, QueuedIndex, RunningIndex};
use colab_core::{Action, CoreId, CoreMask, Nanos, Pick, SchedState, ThreadId, WakeKind};
use std::cmp::Reverse;

/// CFS plus fast-core credits, inter-core swaps and credit-aware placement.
pub(super) struct FastLayer {
    pub(super) cfs: CfsCore,
    /// Fast-core credits per thread, ns (infinite for HSP's chosen threads).
    pub(super) credit: Vec<f64>,
    /// Threads whose `credit` is positive (exited ones included): while
    /// there are none, no thread can be a swap partner.
    pub(super) holders: usize,
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
    pub(super) fn new(st: &SchedState) -> FastLayer {
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
    pub(super) fn note_running(&mut self, st: &SchedState, c: CoreId, t: ThreadId) {
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
    pub(super) fn index(&mut self, st: &SchedState, c: CoreId, t: ThreadId) {
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

    pub(super) fn thread_created(&mut self, t: ThreadId) {
        self.cfs.thread_created(t);
        if self.credit.len() <= t.idx() {
            self.credit.resize(t.idx() + 1, 0.0);
        }
    }

    /// Replaces every thread's credits (an assignment starts a new period).
    pub(super) fn set_credits(
        &mut self,
        st: &SchedState,
        credits: impl IntoIterator<Item = (ThreadId, f64)>,
    ) {
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
    pub(super) fn credit_left(&self, st: &SchedState, t: ThreadId) -> f64 {
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
    pub(super) fn select(&self, st: &SchedState, t: ThreadId, kind: WakeKind) -> CoreId {
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
    pub(super) fn should_preempt(&self, st: &SchedState, c: CoreId, t: ThreadId) -> bool {
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
    pub(super) fn pick(&mut self, st: &SchedState, c: CoreId) -> Pick {
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
    pub(super) fn tick(&mut self, st: &SchedState, c: CoreId, out: &mut Vec<Action>) -> bool {
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
    pub(super) fn stopped(&mut self, st: &SchedState, c: CoreId, t: ThreadId, ran: Nanos) {
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

#[cfg(test)]
mod slow_running_tests {
    use super::*;
    use colab_core::{CoreOrder, ProgramId, RunState, ThreadInfo, Topology};

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
