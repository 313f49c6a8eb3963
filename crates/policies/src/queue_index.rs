//! A policy's own order of each core's run queue, kept so that its first
//! thread (or the first few) costs O(log n) instead of a pass over the
//! queue: what a kernel scheduler keeps in an rbtree keyed its own way.
//!
//! The simulator tells a policy when a thread joins a queue (`enqueued`) but
//! takes threads off queues itself, so entries are deleted lazily: an entry
//! (key, thread) of core `c` is live while the thread is queued on `c` and
//! its key, computed afresh, is still `key`. The policy pushes an entry at
//! every enqueue and whenever a queued thread's key changes; dead entries
//! are dropped when met at the front and, once they outnumber the queue, in
//! one sweep (amortised O(log n) per enqueue). Only for states the
//! simulator keeps (`SchedState::active_tracked`); hand-built states scan.

use colab_core::{CoreId, RunState, SchedState, ThreadId};
use std::collections::BTreeSet;

/// Is `t` waiting in `c`'s run queue (runnable there, not running)?
pub fn is_queued_on(st: &SchedState, c: CoreId, t: ThreadId) -> bool {
    let th = st.thread(t);
    th.core == Some(c) && th.state == RunState::Runnable && st.core(c).current != Some(t)
}

/// Per core, (key, thread) entries in key order; see the module notes.
#[derive(Clone, Debug, Default)]
pub struct QueueIndex<K: Ord + Copy> {
    sets: Vec<BTreeSet<(K, ThreadId)>>,
}

impl<K: Ord + Copy> QueueIndex<K> {
    pub fn new(cores: usize) -> QueueIndex<K> {
        QueueIndex {
            sets: vec![BTreeSet::new(); cores],
        }
    }

    /// Records that `t` waits on `c` under `key` (at an enqueue, or when a
    /// queued thread's key changed). Sweeps `c`'s dead entries when they
    /// outnumber its queue.
    pub fn push(
        &mut self,
        st: &SchedState,
        c: CoreId,
        t: ThreadId,
        key: K,
        key_of: impl Fn(ThreadId) -> K,
    ) {
        let set = &mut self.sets[c.idx()];
        set.insert((key, t));
        if set.len() > 2 * st.core(c).rq.len() + 64 {
            set.retain(|&(k, x)| (x == t && k == key) || is_queued_on(st, c, x) && key_of(x) == k);
        }
    }

    /// The live entries of `c` in key order, up to and including the first
    /// one `stop` accepts (all of them if none is); dead ones met on the way
    /// are dropped.
    pub fn scan_until(
        &mut self,
        st: &SchedState,
        c: CoreId,
        key_of: impl Fn(ThreadId) -> K,
        mut stop: impl FnMut(K, ThreadId) -> bool,
    ) {
        let set = &mut self.sets[c.idx()];
        let mut dead = Vec::new();
        for &(k, t) in set.iter() {
            if !(is_queued_on(st, c, t) && key_of(t) == k) {
                dead.push((k, t));
                continue;
            }
            if stop(k, t) {
                break;
            }
        }
        for e in dead {
            set.remove(&e);
        }
    }

    /// The live entry of `c` with the smallest key.
    pub fn first(
        &mut self,
        st: &SchedState,
        c: CoreId,
        key_of: impl Fn(ThreadId) -> K,
    ) -> Option<(K, ThreadId)> {
        let set = &mut self.sets[c.idx()];
        while let Some(&(k, t)) = set.first() {
            if is_queued_on(st, c, t) && key_of(t) == k {
                return Some((k, t));
            }
            set.pop_first();
        }
        None
    }

    /// Entries of `c`, dead ones included (tests).
    #[cfg(test)]
    pub fn len(&self, c: CoreId) -> usize {
        self.sets[c.idx()].len()
    }
}
