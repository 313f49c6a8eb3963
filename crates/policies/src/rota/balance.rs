//! ROTA's moves at a core's tick: the fast-core rotation, the swaps left
//! off by default (serial phases, higher speedups) and the slow cores'
//! queue balancing.

use super::{Order, Rota};
use colab_core::{Action, CoreId, SchedState, ThreadId};

impl Rota {
    /// Rotation at a fast core's tick: its occupant of a quantum or more
    /// swaps with the most owed waiting thread, if that one is owed more.
    pub(super) fn rotate(&self, st: &SchedState, c: CoreId, out: &mut Vec<Action>) {
        let Some(y) = st.core(c).current else {
            return;
        };
        let Some((occ, since)) = self.occupant[c.idx()] else {
            return;
        };
        if occ != y || st.now.saturating_sub(since) < self.m().quantum_ns {
            return;
        }
        if self.params.block_first && self.th[y.idx()].high_block {
            return;
        }
        let Some((xc, x)) = self
            .waiting(st)
            .filter(|&(o, _)| o != c)
            .min_by_key(|&(_, t)| self.fast_rank(st, t))
        else {
            return;
        };
        // In FIFO order the occupant counts as having queued when it took
        // the core: x goes first if it has waited since before that.
        let mut ry = self.fast_rank(st, y);
        if matches!(self.params.order, Order::Fifo | Order::Turn) {
            ry.2 = since;
        }
        if self.fast_rank(st, x) >= ry {
            return;
        }
        // y goes where x was (a slow core), or to the shortest slow queue.
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
        let Some((xc, x)) = self
            .waiting(st)
            .filter(|&(o, t)| o != c && !self.m().fast.contains(o) && self.is_serial(st, t))
            .min_by_key(|&(_, t)| self.fast_rank(st, t))
        else {
            return;
        };
        out.push(Action::Migrate { thread: y, to: xc });
        out.push(Action::Migrate { thread: x, to: c });
    }

    /// Threads that want a fast core, with the core they are on: queued
    /// anywhere, or running on a slow core.
    fn waiting<'a>(&'a self, st: &'a SchedState) -> impl Iterator<Item = (CoreId, ThreadId)> + 'a {
        let queued = st
            .topo
            .cores()
            .flat_map(move |o| st.core(o).rq.iter().map(move |&t| (o, t)));
        let slow_running = self
            .m()
            .slow
            .iter()
            .filter_map(move |o| st.core(o).current.map(|t| (o, t)));
        queued.chain(slow_running)
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
