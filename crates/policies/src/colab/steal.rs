//! Fig. 6's steal (`max_block_(c.sched_domain.rq)`) on long machines: a
//! core with an empty queue takes the most blocking queued thread of its
//! cluster, then of the rest, reading each queued core through a view kept
//! per instant (memos per steal domain, a tournament tree of entries).

use super::{ranked_cmp, Colab, Ranked};
use colab_core::{CoreId, CoreMask, Nanos, SchedState, ThreadId};
use std::cmp::Ordering;

/// A queued core as a steal sees it at one instant: its min_vruntime, its
/// leftmost thread's lag, and a short queue's best thread regardless of the
/// fairness window (with its lag); valid while its CFS stamp stands.
#[derive(Clone, Copy, Debug)]
pub(super) struct Entry {
    core: CoreId,
    base: i64,
    min_lag: Option<i64>,
    own: Option<Ranked>,
}

/// What a steal reads of a set of entries: the smallest leftmost lag, the
/// best own candidate (max_block_'s order), and whether a long queue (no
/// own candidate kept) is among them.
#[derive(Clone, Copy, Debug, Default)]
struct Node {
    min_lag: Option<i64>,
    top: Option<Ranked>,
    long: bool,
}

impl Node {
    fn leaf(e: &Entry) -> Node {
        Node {
            min_lag: e.min_lag,
            top: e.own,
            long: e.own.is_none(),
        }
    }

    fn join(a: Node, b: Node) -> Node {
        let min_lag = match (a.min_lag, b.min_lag) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, y) => x.or(y),
        };
        let top = match (a.top, b.top) {
            (Some(x), Some(y)) => Some(if ranked_cmp(x, y) == Ordering::Greater {
                x
            } else {
                y
            }),
            (x, y) => x.or(y),
        };
        Node {
            min_lag,
            top,
            long: a.long || b.long,
        }
    }
}

/// One steal domain's queued cores at instant `now`, on machines of more
/// than 64 cores. Idle cores steal in bursts at the same instant (wake-ups
/// and completions coincide), and between two steals few queues change:
/// the entries sit in a tournament tree, and a steal reads again only the
/// cores CFS touched since the last one (its touch log), so that its
/// answer is the tree's root whenever the best own candidate lies inside
/// the window (always, when no queue is long and levels are equal).
#[derive(Clone, Debug, Default)]
pub(super) struct StealMemo {
    now: Nanos,
    domain: CoreMask,
    /// The touch log's epoch and length when last read.
    epoch: u64,
    read: usize,
    /// Cores with a live entry.
    cores: CoreMask,
    /// Per core, its entry's slot (`u32::MAX`: none); per slot, its core.
    slot: Vec<u32>,
    slot_core: Vec<CoreId>,
    entries: Vec<Option<Entry>>,
    /// Leaves (one per slot) from `cap` on; node i joins 2i and 2i+1.
    tree: Vec<Node>,
    cap: usize,
}

impl StealMemo {
    fn set(&mut self, i: usize, e: Option<Entry>) {
        self.entries[i] = e;
        let mut n = self.cap + i;
        self.tree[n] = e.as_ref().map_or(Node::default(), Node::leaf);
        while n > 1 {
            n /= 2;
            self.tree[n] = Node::join(self.tree[2 * n], self.tree[2 * n + 1]);
        }
    }
}

/// A queued core as a steal sees it, kept while the core's CFS stamp
/// stands: what its min_vruntime derives from (the kept value, the
/// leftmost queued vruntime, the running thread's vruntime, run start and
/// scale) and its best thread regardless of the window (short queues; the
/// order within one queue does not depend on its min_vruntime), so that an
/// idle core's steal reads a few words per queued core instead of each
/// queue and running thread. min_vruntime itself grows with the running
/// thread, so it is derived again at each steal, as CFS derives it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Steal {
    stamp: u64,
    kept: i64,
    leftmost: Option<i64>,
    run: Option<(i64, Nanos, f64)>,
    /// With its vruntime and blocking level (a level change renews the
    /// stamp of the core where the thread is queued).
    best: Option<Ranked>,
}

impl Default for Steal {
    fn default() -> Self {
        Steal {
            stamp: u64::MAX,
            kept: 0,
            leftmost: None,
            run: None,
            best: None,
        }
    }
}

impl Steal {
    /// min_vruntime at `now`, as [`CfsCore::min_vruntime`] finds it.
    fn base(&self, now: Nanos) -> i64 {
        let cur = self
            .run
            .map(|(v, start, scale)| v + (now.saturating_sub(start) as f64 * scale) as i64);
        let m = self.leftmost.into_iter().chain(cur).min();
        m.map_or(self.kept, |m| self.kept.max(m))
    }
}

impl Colab {
    /// A steal's entry for queued core `o` at this instant, from its kept
    /// view (read again if its stamp changed).
    fn steal_entry(&self, view: &mut [Steal], st: &SchedState, o: CoreId) -> Entry {
        let cfs = self.cfs();
        if view[o.idx()].stamp != cfs.stamp(o) {
            let rq = &st.core(o).rq;
            // A long queue's leftmost is at hand in CFS's heap (its best
            // comes from the index later); a short queue is passed over
            // once for its leftmost and its best regardless of the
            // window, which stands unless it falls outside the window.
            let (leftmost, best) = if rq.len() > 16 {
                (cfs.leftmost(st, o).map(|t| cfs.vr[t.idx()]), None)
            } else {
                let vrs = rq.iter().map(|&t| (t, cfs.vr[t.idx()]));
                let m = vrs.clone().map(|(_, v)| v).min();
                let best = vrs.max_by(|&a, &b| self.block_cmp(a, b));
                (m, best.map(|(t, v)| (t, v, self.block_level(t))))
            };
            let run = st
                .core(o)
                .current
                .map(|t| (cfs.vr[t.idx()], st.core(o).run_start, cfs.run_scale(o)));
            view[o.idx()] = Steal {
                stamp: cfs.stamp(o),
                kept: cfs.min_vr[o.idx()],
                leftmost,
                run,
                best,
            };
        }
        let v = &view[o.idx()];
        let base = v.base(st.now);
        debug_assert_eq!(base, cfs.min_vruntime(st, o), "kept min_vruntime of {o}");
        Entry {
            core: o,
            base,
            min_lag: v.leftmost.map(|l| l - base),
            own: v.best.map(|(t, vr, level)| (t, vr - base, level)),
        }
    }

    /// max_block_ over the queues of `domain` (steal domain number `key`)
    /// but `c`'s: each queue's min_vruntime computed once, its smallest
    /// lag, then each queue's best within the window.
    pub(super) fn steal_pick(
        &mut self,
        st: &SchedState,
        c: CoreId,
        domain: CoreMask,
        key: usize,
    ) -> Option<ThreadId> {
        let queued = domain.intersect(st.queued_mask());
        if !self.params.mech.block_first {
            let cands = queued
                .iter()
                .filter(move |&o| o != c)
                .flat_map(|o| self.queue_lags(st, o));
            return self.max_block(cands);
        }
        if queued.is_empty() {
            return None;
        }
        let mut view = std::mem::take(&mut self.steal_view);
        let found = if st.topo.num_cores() > 64 && !queued.contains(c) {
            let mut memo = std::mem::take(&mut self.memos[key]);
            self.sync_memo(&mut memo, &mut view, st, domain, queued);
            let root = memo.tree.get(1).copied().unwrap_or_default();
            let window = self.window();
            let found = match (root.min_lag, root.top) {
                (Some(m), Some(top)) if !root.long && top.1 <= m.saturating_add(window) => {
                    Some(top.0)
                }
                _ => self.steal_among(st, memo.entries.iter().flatten()),
            };
            self.memos[key] = memo;
            found
        } else {
            let mut entries = std::mem::take(&mut self.entries);
            entries.clear();
            entries.extend(
                queued
                    .iter()
                    .filter(|&o| o != c)
                    .map(|o| self.steal_entry(&mut view, st, o)),
            );
            let found = self.steal_among(st, entries.iter());
            self.entries = entries;
            found
        };
        self.steal_view = view;
        debug_assert_eq!(
            found,
            self.max_block(
                queued
                    .iter()
                    .filter(move |&o| o != c)
                    .flat_map(|o| self.queue_lags(st, o))
            ),
            "max_block_ over the queues of {queued:?} but core {c}'s differs from a pass"
        );
        found
    }

    /// Brings `memo` to this instant: built afresh at a new instant (or
    /// when its log was lost or its tree is full), else the cores touched
    /// since its last read read again.
    fn sync_memo(
        &mut self,
        memo: &mut StealMemo,
        view: &mut [Steal],
        st: &SchedState,
        domain: CoreMask,
        queued: CoreMask,
    ) {
        if self.log_now != Some(st.now) {
            // Memos of earlier instants are all stale: the log restarts.
            self.log_now = Some(st.now);
            self.clear_touch_log();
        }
        let (epoch, log) = (self.log_epoch, &self.touched);
        let fresh = memo.now == st.now && memo.domain == domain && memo.epoch == epoch;
        if fresh {
            let mut full = false;
            for &o in &log[memo.read..] {
                if !domain.contains(o) {
                    continue;
                }
                let e = queued.contains(o).then(|| self.steal_entry(view, st, o));
                let i = memo.slot[o.idx()];
                if i != u32::MAX {
                    memo.set(i as usize, e);
                } else if let Some(e) = e {
                    if memo.entries.len() == memo.cap {
                        full = true;
                        break;
                    }
                    memo.slot[o.idx()] = memo.entries.len() as u32;
                    memo.slot_core.push(o);
                    memo.entries.push(None);
                    memo.set(memo.entries.len() - 1, Some(e));
                }
                if queued.contains(o) {
                    memo.cores.insert(o);
                } else {
                    memo.cores.remove(o);
                }
            }
            // Every change of a queue touches its core; should a core have
            // joined or left the queued ones without, the memo is rebuilt.
            debug_assert!(
                full || memo.cores == queued,
                "memo's cores after the touch log"
            );
            if !full && memo.cores == queued {
                memo.read = log.len();
                return;
            }
        }
        // Built afresh, with room for a few cores queued later this instant.
        for &o in &memo.slot_core {
            memo.slot[o.idx()] = u32::MAX;
        }
        memo.slot_core.clear();
        memo.slot.resize(st.topo.num_cores(), u32::MAX);
        memo.now = st.now;
        memo.domain = domain;
        memo.epoch = epoch;
        memo.read = log.len();
        memo.cores = queued;
        memo.entries.clear();
        for o in queued.iter() {
            memo.slot[o.idx()] = memo.entries.len() as u32;
            memo.slot_core.push(o);
            memo.entries.push(Some(self.steal_entry(view, st, o)));
        }
        // Leaves written once each (empty past the entries), then the
        // nodes above them: no fill of the whole tree first.
        let k = memo.entries.len();
        memo.cap = (k + 8).next_power_of_two();
        let cap = memo.cap;
        memo.tree.resize(2 * cap, Node::default());
        for (i, e) in memo.entries.iter().enumerate() {
            memo.tree[cap + i] = e.as_ref().map_or(Node::default(), Node::leaf);
        }
        memo.tree[cap + k..].fill(Node::default());
        for n in (1..cap).rev() {
            memo.tree[n] = Node::join(memo.tree[2 * n], memo.tree[2 * n + 1]);
        }
    }

    /// max_block_ over `entries`' queues: the smallest lag, then each
    /// queue's best within the window.
    fn steal_among<'a>(
        &mut self,
        st: &SchedState,
        entries: impl Iterator<Item = &'a Entry> + Clone,
    ) -> Option<ThreadId> {
        let min_lag = entries.clone().filter_map(|e| e.min_lag).min()?;
        let thr = min_lag.saturating_add(self.window());
        let mut best: Option<Ranked> = None;
        for e in entries {
            let x = match e.own {
                Some(x) if x.1 <= thr => Some(x),
                _ => self
                    .queue_best(st, e.core, e.base, thr)
                    .map(|(t, lag)| (t, lag, self.block_level(t))),
            };
            if let Some(x) = x {
                if best.is_none_or(|b| ranked_cmp(x, b) == Ordering::Greater) {
                    best = Some(x);
                }
            }
        }
        best.map(|(t, ..)| t)
    }

    /// `c`'s queued threads with their lags behind its min_vruntime.
    pub(super) fn queue_lags<'a>(
        &'a self,
        st: &'a SchedState,
        c: CoreId,
    ) -> impl Iterator<Item = (ThreadId, i64)> + Clone + 'a {
        let cfs = self.cfs();
        let base = cfs.min_vruntime(st, c);
        st.core(c)
            .rq
            .iter()
            .map(move |&t| (t, cfs.vr[t.idx()] - base))
    }
}
