//! ROTA's placement of a waking or new thread: its previous core first,
//! an idle fast core when one is worth the move, short bursts kept in their
//! cluster, a blocked sibling's core left to it (`reclaim`), else the
//! shortest queue.

use super::{Reclaim, Rota, ShareFast};
use colab_core::{CoreId, CoreMask, SchedState, ThreadId, WakeKind};

impl Rota {
    /// Where waking or new thread `t` goes (`Policy::select_core`).
    pub(super) fn choose_core(&mut self, st: &SchedState, t: ThreadId, kind: WakeKind) -> CoreId {
        if let WakeKind::Wakeup { waker, broadcast } = kind {
            if let Some(s) = waker.and_then(|w| self.th.get_mut(w.idx())) {
                s.woke_at = st.now;
            }
            self.th[t.idx()].woke_by_broadcast = broadcast;
        }
        let m = self.m();
        let prev = st.thread(t).last_core;
        let prev_idle = prev.filter(|&p| Self::is_idle_empty(st, p));
        if let Some(p) = prev.filter(|_| self.stays(t)) {
            // A short-burst thread: the shortest queue of its cluster, its
            // previous core on a tie (an idle core is a queue of none).
            let cl = st.topo.cluster_mask(st.topo.cluster_of(p));
            return self.shortest_in(st, cl, prev).unwrap_or(p);
        }
        if self.params.prev_first {
            // 1. An idle previous fast core.
            if let Some(p) = prev_idle.filter(|&p| self.is_fast(p)) {
                return p;
            }
            // 2. An idle previous slow core, unless a fast core has been idle
            //    long enough to be worth the move.
            if let Some(p) = prev_idle {
                return self.long_idle_fast(st, t, Some(p)).unwrap_or(p);
            }
        }
        // With `reclaim`, the idle cores blocked siblings left are theirs:
        // checked core by core as the search meets them (only idle cores
        // can be a sibling's), not by a pass over every idle core.
        let reclaim = self.params.reclaim != Reclaim::Off && self.th[t.idx()].has_slept;
        let keep = |c: CoreId| !reclaim || !self.sibling_left(st, c, t);
        let all = st.topo.all_mask();
        // 3. Any idle fast core, then any idle core, near the previous one.
        if let Some(c) = self.idle_in_where(st, m.fast, prev, keep) {
            return c;
        }
        if let Some(c) = self.idle_in_where(st, all, prev, keep) {
            return c;
        }
        // 4. Nothing idle: the shortest queue anywhere if `t` may share a
        //    fast core (`share-fast`), else the shortest slow queue (it
        //    reaches a fast core by rank); anywhere on a symmetric machine.
        let mut pool = if m.slow.is_empty() || self.shares_fast(t, kind) {
            all
        } else {
            m.slow
        };
        if reclaim {
            // Step 3 found no idle core with an empty queue to keep, so
            // every such core is a sibling's; an idle core with a queue is
            // checked on its own.
            pool = pool.minus(st.idle_mask().minus(st.queued_mask()));
            for c in st.idle_mask().intersect(st.queued_mask()).iter() {
                if !keep(c) {
                    pool.remove(c);
                }
            }
        }
        self.shortest_in(st, pool, prev).unwrap_or(CoreId(0))
    }

    /// May waking or new `t` queue on a fast core when no core is idle
    /// ([`ShareFast`])?
    fn shares_fast(&self, t: ThreadId, kind: WakeKind) -> bool {
        match self.params.share_fast {
            ShareFast::Off => false,
            ShareFast::On => true,
            ShareFast::Short => {
                !matches!(kind, WakeKind::Wakeup { .. })
                    || self.bursts_under(t, self.cfs().tun.min_granularity_ns)
            }
        }
    }

    /// Does `t` stay in its previous core's cluster at wake-up (`stay`)?
    /// It has slept, and its bursts, on average and the last one, are
    /// shorter than a cross-cluster migration.
    fn stays(&self, t: ThreadId) -> bool {
        self.params.stay && self.bursts_under(t, self.m().idle_worth_ns)
    }

    pub(super) fn is_idle_empty(st: &SchedState, c: CoreId) -> bool {
        st.is_idle(c) && st.core(c).rq.is_empty()
    }

    /// The first idle core of `mask` that `keep` accepts, the cluster of
    /// `near` first.
    fn idle_in_where(
        &self,
        st: &SchedState,
        mask: CoreMask,
        near: Option<CoreId>,
        keep: impl Fn(CoreId) -> bool,
    ) -> Option<CoreId> {
        // Idle and nothing queued, by masks rather than a pass over the
        // idle cores.
        let free = mask.intersect(st.idle_mask()).minus(st.queued_mask());
        let found = near
            .and_then(|n| {
                let own = st.topo.cluster_mask(st.topo.cluster_of(n));
                free.intersect(own).iter().find(|&c| keep(c))
            })
            .or_else(|| free.iter().find(|&c| keep(c)));
        debug_assert_eq!(found, {
            let near_cl = near.map(|c| st.topo.cluster_of(c));
            mask.intersect(st.idle_mask())
                .iter()
                .filter(|&c| Self::is_idle_empty(st, c) && keep(c))
                .min_by_key(|&c| (Some(st.topo.cluster_of(c)) != near_cl, c))
        });
        found
    }

    /// The shortest queue of `mask`, `prev` on ties, then its cluster.
    pub(super) fn shortest_in(
        &self,
        st: &SchedState,
        mask: CoreMask,
        prev: Option<CoreId>,
    ) -> Option<CoreId> {
        // The least loaded, then `prev`, then the first of its cluster,
        // then the first.
        let (_, least) = st.least_loaded_in(mask)?;
        if let Some(p) = prev.filter(|&p| least.contains(p)) {
            return Some(p);
        }
        prev.and_then(|p| {
            least
                .intersect(st.topo.cluster_mask(st.topo.cluster_of(p)))
                .iter()
                .next()
        })
        .or_else(|| least.iter().next())
    }

    /// An idle fast core worth moving to from an idle previous core for
    /// `t` (with `reclaim`, none whose last thread is `t`'s blocked sibling).
    fn long_idle_fast(&self, st: &SchedState, t: ThreadId, near: Option<CoreId>) -> Option<CoreId> {
        let worth = self.m().idle_worth_ns;
        let near_cl = near.map(|c| st.topo.cluster_of(c));
        self.m()
            .fast
            .intersect(st.idle_mask())
            .iter()
            .filter(|&c| Self::is_idle_empty(st, c))
            .filter(|&c| {
                self.idle_since[c.idx()].is_some_and(|s| st.now.saturating_sub(s) >= worth)
            })
            .filter(|&c| self.params.reclaim == Reclaim::Off || !self.sibling_left(st, c, t))
            .min_by_key(|&c| (Some(st.topo.cluster_of(c)) != near_cl, c))
    }

    /// Is idle core `c`'s last thread a thread of waking `t`'s program that
    /// blocked after `t` did (so both wait at the same synchronisation,
    /// and the sibling wakes with `t`)? With `reclaim=barrier`, only when
    /// `t` is let go by a wake-all and the sibling's wait is taken for a
    /// barrier's (its wait before ended in a wake-all): what a kernel can
    /// tell from the futex calls; `barrier-oracle` reads the simulator's
    /// wait kinds instead.
    fn sibling_left(&self, st: &SchedState, c: CoreId, t: ThreadId) -> bool {
        let me = &self.th[t.idx()];
        // Whether `t`'s own wait was a barrier's; a sibling's is its
        // `barrier_block`, set when it blocked as the mode reads it.
        let me_barrier = match self.params.reclaim {
            Reclaim::Off | Reclaim::On => true,
            Reclaim::Barrier => me.woke_by_broadcast,
            Reclaim::BarrierOracle => me.barrier_block,
        };
        let by_barrier = matches!(
            self.params.reclaim,
            Reclaim::Barrier | Reclaim::BarrierOracle
        );
        me.has_slept
            && me_barrier
            && self.blocked_occupant(st, c).is_some_and(|o| {
                o != t
                    && st.thread(o).program == st.thread(t).program
                    && self.th[o.idx()].blocked_at >= me.blocked_at
                    && (!by_barrier || self.th[o.idx()].barrier_block)
            })
    }
}
