//! CAMP's periodic assignment (camp-tocs12 4.1.1): run once per scheduler
//! tick, it swaps threads between fast and slow cores when a class
//! outranks a fast core's thread, rotates HIGH threads through the fast
//! cores every round-robin period, sends threads queued behind a fast core's
//! thread to slow cores, and balances the slow cores' queues.

use super::{cls_val, idle, same_cluster, Camp, UtilityClass, NCLS};
use colab_core::{Action, CoreId, CoreMask, Nanos, RunState, SchedState, ThreadId};
use std::cmp::Reverse;

impl Camp {
    /// Slow core to send `t` to from `from`, by planned load, then locality.
    fn slow_dest(&self, st: &SchedState, from: Option<CoreId>, load: &[usize]) -> Option<CoreId> {
        self.m()
            .slow
            .iter()
            .min_by_key(|&c| (load[c.idx()], !same_cluster(st, from, c), c))
    }

    /// Puts `x` on fast core `f` in place of its thread `y`.
    fn swap(
        &self,
        st: &SchedState,
        x: ThreadId,
        f: CoreId,
        y: ThreadId,
        load: &mut [usize],
        out: &mut Vec<Action>,
    ) {
        let Some(xc) = st.thread(x).core else {
            return;
        };
        if xc == f {
            // x waits behind y on f: re-pick, and f chooses x.
            out.push(Action::Resched(f));
            return;
        }
        let dest = if self.is_fast(xc) {
            self.slow_dest(st, Some(f), load)
        } else {
            Some(xc)
        };
        if let Some(d) = dest {
            load[d.idx()] += 1;
            out.push(Action::Migrate { thread: y, to: d });
        }
        out.push(Action::Migrate { thread: x, to: f });
    }

    /// The class-driven assignment, run once per tick.
    pub(super) fn balance(&mut self, st: &SchedState, out: &mut Vec<Action>) {
        let v = self.view(st, None, None);
        let mut load: Vec<usize> = st.topo.cores().map(|c| st.nr_running(c)).collect();
        let mut moved: Vec<ThreadId> = Vec::new();
        let mut taken = CoreMask::EMPTY;
        let fast = self.m().fast;
        // Busy fast cores and their threads' classes.
        let occ: Vec<(CoreId, ThreadId, Option<UtilityClass>)> = fast
            .iter()
            .filter_map(|c| st.core(c).current.map(|t| (c, t, self.rank(st, &v, t))))
            .collect();
        // Threads that could use a fast core: queued anywhere or running on a
        // slow core, by class (none for threads without an SF), then time
        // runnable and id. From the index, or found through the cores (not by
        // scanning every thread there ever was: a program restarted many
        // times leaves many).
        let scan = |this: &Camp| {
            let mut c: Vec<(Option<UtilityClass>, ThreadId)> = st
                .topo
                .cores()
                .flat_map(|c| {
                    let core = st.core(c);
                    let slow_running = core.current.filter(|_| !fast.contains(c));
                    core.rq.iter().copied().chain(slow_running)
                })
                .map(|t| (this.rank(st, &v, t), t))
                .filter(|(r, _)| r.is_some())
                .collect();
            debug_assert_eq!(
                {
                    let mut a: Vec<ThreadId> = c.iter().map(|&(_, t)| t).collect();
                    a.sort();
                    a
                },
                st.threads
                    .iter()
                    .filter(|th| match th.state {
                        RunState::Runnable => true,
                        RunState::Running => th.core.is_some_and(|c| !fast.contains(c)),
                        _ => false,
                    })
                    .map(|th| th.id)
                    .filter(|&t| this.rank(st, &v, t).is_some())
                    .collect::<Vec<_>>(),
                "the runnable threads are the queued ones"
            );
            c.sort_by_key(|&(r, t)| (Reverse(r), st.thread(t).runnable_since, t));
            c
        };
        let ix = self.ix_synced(st, &v);
        let scanned = if ix.is_none() { scan(self) } else { Vec::new() };
        let cands = || -> Box<dyn Iterator<Item = (Option<UtilityClass>, ThreadId)> + '_> {
            match &ix {
                Some(ix) => Box::new(
                    (1..NCLS)
                        .rev()
                        .flat_map(move |j| ix.cands_of(j).map(move |t| (cls_val(j), t))),
                ),
                None => Box::new(scanned.iter().copied()),
            }
        };
        debug_assert!(ix.is_none() || cands().eq(scan(self)), "indexed candidates");

        // 1. A thread of a higher class takes the fast core of the lowest one.
        for (r, x) in cands() {
            let xc = st.thread(x).core;
            let best = occ
                .iter()
                .filter(|o| !taken.contains(o.0) && o.2 < r)
                .min_by_key(|o| (o.2, !same_cluster(st, xc, o.0), o.0));
            let Some(&(f, y, _)) = best else {
                break;
            };
            self.swap(st, x, f, y, &mut load, out);
            taken.insert(f);
            moved.extend([x, y]);
        }

        // 2. Round-robin among HIGH threads: the waiting one with the least
        //    fast-core time takes the place of the one with the most.
        if st.now >= self.next_rr {
            self.next_rr = st.now + self.params.rr_period_ns;
            let high = Some(UtilityClass::High);
            let mut on_fast: Vec<(Nanos, CoreId, ThreadId)> = occ
                .iter()
                .filter(|o| !taken.contains(o.0) && o.2 == high && !moved.contains(&o.1))
                .map(|&(c, t, _)| (self.th[t.idx()].fast_ns + st.current_ran(c), c, t))
                .collect();
            on_fast.sort_by_key(|&(ns, c, _)| (Reverse(ns), c));
            let mut waiting: Vec<(Nanos, ThreadId)> = cands()
                .filter(|&(r, t)| r == high && !moved.contains(&t))
                .map(|(_, t)| (self.th[t.idx()].fast_ns, t))
                .collect();
            waiting.sort();
            for (&(w_ns, x), &(f_ns, f, y)) in waiting.iter().zip(&on_fast) {
                if w_ns >= f_ns {
                    break;
                }
                self.swap(st, x, f, y, &mut load, out);
                taken.insert(f);
                moved.extend([x, y]);
            }
        }

        // 3. Threads queued behind a fast core's thread of the same or a
        //    higher class go to slow cores, unless a fast core is idle (it
        //    will take them at once).
        let idle_fast = fast.iter().any(|c| idle(st, c));
        if !idle_fast {
            for &(f, _, ry) in &occ {
                if taken.contains(f) {
                    continue;
                }
                for &z in &st.core(f).rq {
                    if moved.contains(&z) || self.rank(st, &v, z) > ry {
                        continue;
                    }
                    if let Some(d) = self.slow_dest(st, Some(f), &load) {
                        load[d.idx()] += 1;
                        load[f.idx()] -= 1;
                        out.push(Action::Migrate { thread: z, to: d });
                        moved.push(z);
                    }
                }
            }
        }

        // 4. Slow-core load balancing, one move, inside a cluster first.
        let slow = self.m().slow;
        let domains = (0..st.topo.clusters.len())
            .map(|cl| st.topo.cluster_mask(cl).intersect(slow))
            .filter(|d| !d.is_empty())
            .chain(std::iter::once(slow));
        for d in domains {
            let busiest = d.iter().max_by_key(|&c| (load[c.idx()], Reverse(c)));
            let least = d.iter().min_by_key(|&c| (load[c.idx()], c));
            let (Some(b), Some(l)) = (busiest, least) else {
                continue;
            };
            if load[b.idx()] < load[l.idx()] + 2 {
                continue;
            }
            let pick = st
                .core(b)
                .rq
                .iter()
                .copied()
                .filter(|t| !moved.contains(t))
                .min_by_key(|&t| (st.thread(t).runnable_since, t));
            if let Some(t) = pick {
                out.push(Action::Migrate { thread: t, to: l });
                break;
            }
        }
        if ix.is_some() {
            self.ix = ix;
        }
    }
}
