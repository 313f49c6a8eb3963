//! ROTA's moves at a core's tick: the fast-core rotation, the serial
//! phase's swap and the slow cores' queue balancing.

use super::{Order, Quantum, Rota};
use crate::queue_index::is_queued_on;
use colab_core::{Action, CoreId, Nanos, RunState, SchedState, ThreadId};

impl Rota {
    /// Rotation at a fast core's tick: its occupant swaps with the first
    /// waiting thread in the order once it has held the core as long as
    /// [`Rota::turn_after`] says, if that thread goes before it (capped
    /// order: after the quantum, if the occupant is more than the cap of
    /// fast-core time ahead of the least-served waiting thread), else with
    /// a sibling (`sibling-turns`).
    pub(super) fn rotate(&self, st: &SchedState, c: CoreId, out: &mut Vec<Action>) {
        let Some(y) = st.core(c).current else {
            return;
        };
        let Some((occ, since)) = self.occupant[c.idx()] else {
            return;
        };
        let held = if occ == y {
            st.now.saturating_sub(since)
        } else {
            0
        };
        if held < self.m().min_quantum_ns {
            return;
        }
        if self.params.order == Order::Capped {
            if held < self.m().quantum_ns {
                return;
            }
            let floor = self.rank_floor(st);
            let least = self
                .waiting(st)
                .filter(|&(o, _)| o != c)
                .map(|(_, t)| self.owed_key(st, t))
                .min();
            let first = self
                .waiting(st)
                .filter(|&(o, _)| o != c)
                .min_by_key(|&(_, t)| self.fast_rank(st, t, floor));
            if let (Some(key), Some((xc, x))) = (least, first) {
                if key.saturating_add(self.cap_ns()) < self.owed_key(st, y) {
                    self.swap_in(st, c, y, xc, x, out);
                }
            }
            return;
        }
        let Some((xc, x)) = self
            .waiting(st)
            .filter(|&(o, _)| o != c)
            .min_by_key(self.ranker(st, 0))
        else {
            return;
        };
        if held >= self.turn_after(st, x) && self.fast_rank(st, x, 0) < self.fast_rank(st, y, 0) {
            self.swap_in(st, c, y, xc, x, out);
            return;
        }
        if self.params.sibling_turns {
            self.sibling_turn(st, c, y, held, out);
        }
    }

    /// `sibling-turns`: occupant `y` of fast core `c`, which no waiting
    /// thread outranks, gives way after the quantum to the thread of its
    /// own program on a slow core that has been longest away from a fast
    /// core.
    fn sibling_turn(
        &self,
        st: &SchedState,
        c: CoreId,
        y: ThreadId,
        held: Nanos,
        out: &mut Vec<Action>,
    ) {
        let p = st.thread(y).program;
        let slow = self.m().slow;
        let sibling = self
            .waiting(st)
            .filter(|&(o, t)| slow.contains(o) && st.thread(t).program == p)
            .min_by_key(|&(_, t)| (self.th[t.idx()].fast_left_at, t));
        if let Some((sc, s)) = sibling {
            if held >= self.turn_after(st, s) {
                self.swap_in(st, c, y, sc, s, out);
            }
        }
    }

    /// How long an occupant keeps a fast core before `x`, first in the
    /// order, takes it: the quantum; with `quantum=age` the CPU time `x`
    /// has had so far, at least CFS's minimum slice and at most the
    /// quantum. A thread that has run r is taken to be about to run about
    /// r more (as `pull_min` takes it), so a young thread, which may be
    /// about to end, waits no longer than it has run.
    fn turn_after(&self, st: &SchedState, x: ThreadId) -> Nanos {
        let m = self.m();
        if self.params.quantum != Quantum::Age {
            return m.quantum_ns;
        }
        self.cpu_time_now(st, x)
            .clamp(m.min_quantum_ns, m.quantum_ns)
    }

    /// `x` (on core `xc`) takes fast core `c` from `y`, which goes where `x`
    /// was (a slow core) or to the shortest slow queue.
    fn swap_in(
        &self,
        st: &SchedState,
        c: CoreId,
        y: ThreadId,
        xc: CoreId,
        x: ThreadId,
        out: &mut Vec<Action>,
    ) {
        let to = if self.m().slow.contains(xc) {
            Some(xc)
        } else {
            self.shortest_in(st, self.m().slow, Some(xc))
        };
        if let Some(to) = to {
            out.push(Action::Migrate { thread: y, to });
            out.push(Action::Migrate { thread: x, to: c });
        }
    }

    /// Serial-phase swap at a fast core's tick: a serial-phase thread
    /// waiting (queued, or on a slow core) takes the place of a fast core's
    /// occupant that is not one, the occupant taking its slow core.
    pub(super) fn serial_swap(&self, st: &SchedState, c: CoreId, out: &mut Vec<Action>) {
        let Some(y) = st.core(c).current else {
            return;
        };
        if self.is_serial(st, y) {
            return;
        }
        let floor = self.rank_floor(st);
        let slow = self.m().slow;
        let scan = || {
            self.waiting(st)
                .filter(|&(o, t)| o != c && slow.contains(o) && self.is_serial(st, t))
                .min_by_key(|&(_, t)| self.fast_rank(st, t, floor))
        };
        // Waiting on a slow core: queued there or running there.
        let found = if st.active_tracked {
            let found = self
                .serial_threads(st)
                .filter_map(|t| {
                    let o = st.thread(t).core.filter(|&o| o != c && slow.contains(o))?;
                    let waits = is_queued_on(st, o, t) || st.core(o).current == Some(t);
                    waits.then_some((o, t))
                })
                .min_by_key(|&(_, t)| self.fast_rank(st, t, floor));
            debug_assert_eq!(found, scan(), "serial threads of the index differ");
            found
        } else {
            scan()
        };
        let Some((xc, x)) = found else {
            return;
        };
        out.push(Action::Migrate { thread: y, to: xc });
        out.push(Action::Migrate { thread: x, to: c });
    }

    /// The thread that last held idle core `c`, if it is blocked now.
    pub(super) fn blocked_occupant(&self, st: &SchedState, c: CoreId) -> Option<ThreadId> {
        let (occ, _) = self.occupant[c.idx()]?;
        matches!(st.thread(occ).state, RunState::Blocked(_)).then_some(occ)
    }

    /// The threads running on slow cores, with their cores (busy ones only).
    pub(super) fn slow_running<'a>(
        &'a self,
        st: &'a SchedState,
    ) -> impl Iterator<Item = (CoreId, ThreadId)> + 'a {
        self.m()
            .slow
            .minus(st.idle_mask())
            .iter()
            .filter_map(move |o| st.core(o).current.map(|t| (o, t)))
    }

    /// Threads that want a fast core, with the core they are on: queued
    /// anywhere, or running on a slow core.
    pub(super) fn waiting<'a>(
        &'a self,
        st: &'a SchedState,
    ) -> impl Iterator<Item = (CoreId, ThreadId)> + 'a {
        let queued = st
            .queued_mask()
            .iter()
            .flat_map(move |o| st.core(o).rq.iter().map(move |&t| (o, t)));
        queued.chain(self.slow_running(st))
    }

    /// A slow core with an empty queue evens out slow queues: it pulls the
    /// longest-waiting thread of a slow core two or more threads longer.
    pub(super) fn slow_balance(&self, st: &SchedState, c: CoreId, out: &mut Vec<Action>) {
        let mine = st.nr_running(c);
        let busiest = self
            .m()
            .slow
            .iter()
            .filter(|&o| o != c)
            .max_by_key(|&o| (st.nr_running(o), std::cmp::Reverse(o)));
        if let Some(b) = busiest {
            if st.nr_running(b) >= mine + 2 {
                let t = st
                    .core(b)
                    .rq
                    .iter()
                    .copied()
                    .min_by_key(|&t| (st.thread(t).runnable_since, t));
                if let Some(thread) = t {
                    out.push(Action::Migrate { thread, to: c });
                }
            }
        }
    }
}
