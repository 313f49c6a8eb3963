//! ROTA's moves at a core's tick: the fast-core rotation, the swaps left
//! off by default (serial phases, higher speedups) and the slow cores'
//! queue balancing.

use super::{Order, Quantum, Rota, RotateAfter};
use crate::queue_index::is_queued_on;
use colab_core::{Action, CoreId, Nanos, RunState, SchedState, ThreadId};

impl Rota {
    /// Rotation at a fast core's tick: its occupant of a quantum or more
    /// swaps with the first waiting thread in the order, if that one goes
    /// before it (capped order: if the occupant is more than the cap of
    /// fast-core time ahead of the least-served waiting thread).
    pub(super) fn rotate(&self, st: &SchedState, c: CoreId, out: &mut Vec<Action>) {
        let Some(y) = st.core(c).current else {
            return;
        };
        let Some((occ, since)) = self.occupant[c.idx()] else {
            return;
        };
        // How long the occupant has held the core; with `core-turn`, for a
        // thread running on a slow core, how long the core's turn has
        // lasted: threads of its own queue that take turns on it (a
        // barrier program's) hold it together against one that never queues.
        let held_thread = if occ == y {
            st.now.saturating_sub(since)
        } else {
            0
        };
        let held_core = if self.params.core_turn {
            st.now
                .saturating_sub(self.turn_since[c.idx()].unwrap_or(st.now))
        } else {
            0
        };
        if held_thread.max(held_core) < self.m().min_quantum_ns {
            return;
        }
        let held = held_thread;
        let held_by = |xc: CoreId, x: ThreadId| {
            if self.params.core_turn && self.m().slow.contains(xc) && st.core(xc).current == Some(x)
            {
                held_core.max(held_thread)
            } else {
                held_thread
            }
        };
        if self.params.block_first && self.th[y.idx()].high_block {
            return;
        }
        if self.fits_fast(y, 0) {
            return;
        }
        let lead_limit = match (self.params.order, self.params.rotate_after) {
            (Order::Capped, _) => Some(self.cap_ns()),
            (Order::Fifo | Order::Turn, RotateAfter::Owed) => Some(self.m().quantum_ns),
            _ => None,
        };
        if let Some(limit) = lead_limit {
            if held < self.m().quantum_ns {
                return;
            }
            // The occupant gives way to the least-served waiting thread when
            // it is more than the limit of fast-core time ahead of it.
            // It goes to the first waiting thread in the order (capped:
            // FIFO among those within the cap of the least served).
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
                if key.saturating_add(limit) < self.owed_key(st, y) {
                    self.swap_in(st, c, y, xc, x, out);
                }
            }
            return;
        }
        let by_turn = self.params.rotate_after == RotateAfter::Turn
            && matches!(self.params.order, Order::Fifo | Order::Turn);
        let Some((xc, x)) = self
            .waiting(st)
            .filter(|&(o, t)| o != c && (!by_turn || self.th[t.idx()].fast_left_at < since))
            .min_by_key(self.ranker(st, 0))
        else {
            return;
        };
        if by_turn {
            if held >= self.m().quantum_ns {
                self.swap_in(st, c, y, xc, x, out);
            }
            return;
        }
        if held_by(xc, x) >= self.turn_after(st, x) {
            // In FIFO order the occupant counts as having queued when it
            // took the core: x goes first if it has waited since before
            // that. (The capped order never gets here: no floor to rank
            // against.)
            let mut ry = self.fast_rank(st, y, 0);
            if matches!(self.params.order, Order::Fifo | Order::Turn) {
                ry.2 = since;
            }
            if self.fast_rank(st, x, 0) < ry {
                self.swap_in(st, c, y, xc, x, out);
                return;
            }
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
        // Below the floor it is owed its turn: no longer than CFS's slice.
        if self.params.floor && self.below_floor(st, x) {
            return m.min_quantum_ns;
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

    /// `straggler`: a thread of the program of `c`'s last occupant, which
    /// blocked, running on a slow core, that `c` may take over.
    pub(super) fn straggler(
        &self,
        st: &SchedState,
        c: CoreId,
        floor: u64,
    ) -> Option<(CoreId, ThreadId)> {
        let occ = self.blocked_occupant(st, c)?;
        // The sibling's phase predicts the straggler's: worth a move when
        // the occupant's bursts are (`pull_min`'s measure, from the sibling).
        if self.params.pull_min.on()
            && (!self.may_pull_any(st, c) || self.th[occ.idx()].avg_burst_ns < self.m().pull_min_ns)
        {
            return None;
        }
        let p = st.thread(occ).program;
        self.slow_running(st)
            .filter(|&(_, t)| st.thread(t).program == p)
            .min_by_key(self.ranker(st, floor))
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

    /// Speedup swap at a fast core's tick: a thread running on a slow core
    /// whose predicted speedup beats the occupant's by the margin takes its
    /// place, the occupant taking the slow core.
    pub(super) fn speed_swap(&self, st: &SchedState, c: CoreId, out: &mut Vec<Action>) {
        let Some(y) = st.core(c).current else {
            return;
        };
        let need = self.th[y.idx()].speed_fp + self.m().swap_margin_fp;
        let best = self
            .m()
            .slow
            .iter()
            .filter_map(|o| st.core(o).current.map(|t| (o, t)))
            .filter(|&(_, t)| self.th[t.idx()].speed_fp >= need)
            .max_by_key(|&(o, t)| (self.th[t.idx()].speed_fp, std::cmp::Reverse(o)));
        if let Some((xc, x)) = best {
            out.push(Action::Migrate { thread: y, to: xc });
            out.push(Action::Migrate { thread: x, to: c });
        }
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
