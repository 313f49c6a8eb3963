//! What a core with an empty queue does: a fast core waits for a gang's
//! sleeper, steals the best-ranked queued thread anywhere, or takes over a
//! thread running on a slow core (once `pull_min` and `hold` allow it); a
//! slow core pulls as CFS's idle balance does.

use super::{PullFrom, PullMin, Rota};
use colab_core::{CoreId, Nanos, Pick, RunState, SchedState, ThreadId};

impl Rota {
    /// What core `c` runs when its own queue is empty
    /// (`Policy::pick_next`'s rest).
    pub(super) fn pick_idle(&mut self, st: &SchedState, c: CoreId) -> Pick {
        let fast = self.is_fast(c);
        if fast && !self.m().slow.is_empty() {
            let floor = self.rank_floor(st);
            if self.params.gang {
                if let Some(at) = self.gang_hold(st, c) {
                    if self.idle_since[c.idx()].is_none() {
                        self.idle_since[c.idx()] = Some(st.now);
                    }
                    return Pick::IdleUntil(at);
                }
            }
            if let Some((from, thread)) = self.best_queued(st, c, floor) {
                return Pick::Steal { from, thread };
            }
            if self.params.remote {
                if let Some((from, thread)) = self.best_slow_running(st, c, floor) {
                    return Pick::PreemptRemote { from, thread };
                }
                if self.params.tiers && self.m().tiered {
                    if let Some((from, thread)) = self.best_slower_running(st, c, floor) {
                        return Pick::PreemptRemote { from, thread };
                    }
                }
            }
        } else if let Some((from, thread)) = self.cfs().idle_pull(st, c) {
            // Slow (or symmetric) core: the longest-waiting thread of the
            // busiest queue, own cluster first (CFS's idle balance).
            return Pick::Steal { from, thread };
        }
        if self.idle_since[c.idx()].is_none() {
            self.idle_since[c.idx()] = Some(st.now);
        }
        Pick::Idle
    }

    /// The queued thread a fast core should steal: the best-ranked one anywhere.
    fn best_queued(&self, st: &SchedState, skip: CoreId, floor: u64) -> Option<(CoreId, ThreadId)> {
        st.queued_mask()
            .iter()
            .filter(|&o| o != skip)
            .flat_map(|o| st.core(o).rq.iter().map(move |&t| (o, t)))
            .min_by_key(self.ranker(st, floor))
    }

    /// Gang hold: idle fast core `c`'s occupant blocked while every other
    /// runnable thread of its program runs on a fast core (it will be woken
    /// by one of them): the core waits for it, up to CFS's minimum slice.
    fn gang_hold(&self, st: &SchedState, c: CoreId) -> Option<Nanos> {
        let occ = self.blocked_occupant(st, c)?;
        let p = st.thread(occ).program;
        // Kept per program as threads start and stop on fast cores, so no
        // pass over the fast cores (`c` is idle: none of them runs there);
        // hand-built states (tests) do not report runs: a pass.
        let scan = || {
            self.m()
                .fast
                .iter()
                .filter(|&o| {
                    st.core(o)
                        .current
                        .is_some_and(|t| st.thread(t).program == p)
                })
                .count() as u32
        };
        let on_fast = if st.active_tracked {
            debug_assert_eq!(
                self.fast_running[p.idx()],
                scan(),
                "program {p} on fast cores"
            );
            self.fast_running[p.idx()]
        } else {
            scan()
        };
        if on_fast == 0 || on_fast != self.active[p.idx()] {
            return None;
        }
        if self.params.gang_fit && self.live[p.idx()] > self.m().fast.count() as u32 {
            // More threads than fast cores: not a gang the fast cores hold.
            return None;
        }
        let until = self.idle_since[c.idx()].unwrap_or(st.now) + self.m().min_quantum_ns;
        (until > st.now).then_some(until)
    }

    /// The slow-core running thread a fast core should take over.
    fn best_slow_running(
        &self,
        st: &SchedState,
        c: CoreId,
        floor: u64,
    ) -> Option<(CoreId, ThreadId)> {
        self.best_to_take_over(st, c, floor, self.slow_running(st))
    }

    /// `tiers`: the thread running on a fast core slower than `c` that idle
    /// `c` should take over, by the same rules.
    fn best_slower_running(
        &self,
        st: &SchedState,
        c: CoreId,
        floor: u64,
    ) -> Option<(CoreId, ThreadId)> {
        let cap = &self.m().cap;
        let slower = self
            .m()
            .fast
            .minus(st.idle_mask())
            .iter()
            .filter(|&o| cap[o.idx()] < cap[c.idx()])
            .filter_map(|o| st.core(o).current.map(|t| (o, t)));
        self.best_to_take_over(st, c, floor, slower)
    }

    /// Of `running` (threads with their cores), the best-ranked one idle
    /// fast core `c` may take over once `pull_min` and `hold` allow it.
    fn best_to_take_over(
        &self,
        st: &SchedState,
        c: CoreId,
        floor: u64,
        running: impl Iterator<Item = (CoreId, ThreadId)>,
    ) -> Option<(CoreId, ThreadId)> {
        let min = if self.params.pull_min.on() {
            self.m().pull_min_ns
        } else {
            0
        };
        // With `hold`, whether `c` may pull does not depend on the thread:
        // asked once, not per running thread.
        let held = self.params.hold && self.params.pull_min.on();
        if held && !self.may_pull_any(st, c) {
            return None;
        }
        running
            .filter(|&(o, t)| {
                self.ran_in_phase(st, o, t) >= self.pull_min_of(st, c, t, min)
                    && (held || self.may_pull(st, c, t))
            })
            .min_by_key(self.ranker(st, floor))
    }

    /// `tiers`: an idle core with an empty queue faster than fast core `c`.
    pub(super) fn idle_faster(&self, st: &SchedState, c: CoreId) -> Option<CoreId> {
        let cap = &self.m().cap;
        self.m()
            .fast
            .intersect(st.idle_mask())
            .iter()
            .find(|&f| cap[f.idx()] > cap[c.idx()] && Self::is_idle_empty(st, f))
    }

    /// The run `t` must have had in its phase before idle fast core `c`
    /// takes it over: `min` (`pull_min`), or with `pull-min=siblings` 0
    /// unless `t`'s program is that of the thread that last left `c`
    fn pull_min_of(&self, st: &SchedState, c: CoreId, t: ThreadId, min: Nanos) -> Nanos {
        if self.params.pull_min != PullMin::Siblings {
            return min;
        }
        match self.occupant[c.idx()] {
            Some((occ, _)) if st.thread(occ).program == st.thread(t).program => min,
            _ => 0,
        }
    }

    /// How long `t`, running on `o`, has run in its current phase: on the
    /// core, or with `pull-from=sync` since it last woke another thread
    /// if that is later.
    fn ran_in_phase(&self, st: &SchedState, o: CoreId, t: ThreadId) -> Nanos {
        let on_core = st.current_ran(o);
        match self.params.pull_from {
            PullFrom::Core => on_core,
            PullFrom::Sync => on_core.min(st.now.saturating_sub(self.th[t.idx()].woke_at)),
        }
    }

    /// May idle fast core `c` take over `t`, running on a slow core? At
    /// once, unless `t` belongs to the program of the thread that just left
    /// `c` and that thread's sleeps are short (under a cross-cluster
    /// migration on average: fine-grained barriers, locks). It would come
    /// back to find its core taken and trade clusters with `t` at every
    /// sleep, so `c` waits until it has been idle for a cross-cluster
    /// migration (slow cores' ticks make idle fast cores look again).
    /// With `hold`, `c` waits so for a thread of any program.
    fn may_pull(&self, st: &SchedState, c: CoreId, t: ThreadId) -> bool {
        let Some((occ, _)) = self.occupant[c.idx()].filter(|_| self.params.pull_min.on()) else {
            return true;
        };
        (!self.params.hold && st.thread(occ).program != st.thread(t).program)
            || self.may_pull_any(st, c)
    }

    /// May idle fast core `c` take over a thread of any program ([`Rota::may_pull`]'s
    /// rules that do not read the thread)?
    pub(super) fn may_pull_any(&self, st: &SchedState, c: CoreId) -> bool {
        let Some((occ, _)) = self.occupant[c.idx()] else {
            return true;
        };
        let worth = self.m().idle_worth_ns;
        st.thread(occ).state == RunState::Exited
            || self.th[occ.idx()].avg_sleep_ns >= worth
            || self.idle_since[c.idx()].is_some_and(|s| st.now.saturating_sub(s) >= worth)
    }
}
