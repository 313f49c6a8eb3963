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
//!
//! A short queue is faster to scan than to index (a BTreeSet insert costs
//! more than a pass over a few dozen ids), so a core's index is built only
//! when its queue reaches [`INDEX_FROM`] threads and dropped when it falls
//! below [`UNINDEX_BELOW`]; while a core is not indexed, callers scan.
//!
//! An index pushed to more often than it is read (a policy keeps several
//! orders of a queue and reads some rarely) is dropped once it has taken
//! more pushes since its last read than its queue holds, and rebuilt from
//! the queue at the next read: sorting the queue once costs less than the
//! inserts it replaces. A rebuilt set holds exactly the live entries, so
//! reads find what the kept set would have given.

use colab_core::{CoreId, CoreMask, RunState, SchedState, ThreadId};
use std::collections::BTreeSet;

pub use colab_core::runqueue::{INDEX_FROM, UNINDEX_BELOW};

/// Is `t` waiting in `c`'s run queue (runnable there, not running)?
pub fn is_queued_on(st: &SchedState, c: CoreId, t: ThreadId) -> bool {
    let th = st.thread(t);
    th.core == Some(c) && th.state == RunState::Runnable && st.core(c).current != Some(t)
}

/// Per core, (key, thread) entries in key order; see the module notes.
#[derive(Clone, Debug, Default)]
pub struct QueueIndex<K: Ord + Copy> {
    sets: Vec<BTreeSet<(K, ThreadId)>>,
    on: Vec<bool>,
    /// Per core, pushes since the last read, or `DORMANT` while its set is
    /// dropped (to be rebuilt at the next read).
    unread: Vec<u32>,
}

/// [`QueueIndex::unread`] of a long queue whose set was dropped.
const DORMANT: u32 = u32::MAX;

impl<K: Ord + Copy> QueueIndex<K> {
    pub fn new(cores: usize) -> QueueIndex<K> {
        QueueIndex {
            sets: vec![BTreeSet::new(); cores],
            on: vec![false; cores],
            unread: vec![0; cores],
        }
    }

    /// Records that `t` waits on `c` (at an enqueue, or when a queued
    /// thread's key changed). Builds `c`'s index when its queue has grown
    /// long; sweeps its dead entries when they outnumber its queue.
    pub fn push(
        &mut self,
        st: &SchedState,
        c: CoreId,
        t: ThreadId,
        key_of: impl Fn(ThreadId) -> K,
    ) {
        if !st.active_tracked {
            return;
        }
        let rq = &st.core(c).rq;
        let set = &mut self.sets[c.idx()];
        if !self.on[c.idx()] {
            if rq.len() >= INDEX_FROM {
                self.on[c.idx()] = true;
                self.unread[c.idx()] = 0;
                set.clear();
                set.extend(rq.iter().map(|&x| (key_of(x), x)));
            }
            return;
        }
        let unread = &mut self.unread[c.idx()];
        if *unread == DORMANT {
            return;
        }
        *unread += 1;
        if *unread as usize > rq.len() + 64 {
            // Rarely read: rebuilt when next read instead of kept.
            *unread = DORMANT;
            set.clear();
            return;
        }
        let key = key_of(t);
        set.insert((key, t));
        if set.len() > 2 * rq.len() + 64 {
            set.retain(|&(k, x)| (x == t && k == key) || is_queued_on(st, c, x) && key_of(x) == k);
        }
    }

    /// Is `c`'s queue indexed (else the caller scans it)? Drops the index
    /// of a queue that has become short.
    pub fn is_on(&mut self, st: &SchedState, c: CoreId) -> bool {
        if !st.active_tracked {
            return false;
        }
        if self.on[c.idx()] && st.core(c).rq.len() < UNINDEX_BELOW {
            self.on[c.idx()] = false;
            self.sets[c.idx()].clear();
        }
        self.on[c.idx()]
    }

    /// Before a read of `c`: its set rebuilt from the queue if it was
    /// dropped, and its count of unread pushes reset.
    fn wake(&mut self, st: &SchedState, c: CoreId, key_of: &impl Fn(ThreadId) -> K) {
        let unread = &mut self.unread[c.idx()];
        if *unread == DORMANT {
            let mut all: Vec<(K, ThreadId)> =
                st.core(c).rq.iter().map(|&x| (key_of(x), x)).collect();
            all.sort_unstable();
            self.sets[c.idx()] = BTreeSet::from_iter(all);
        }
        *unread = 0;
    }

    /// The live entries of `c` in key order, up to and including the first
    /// one `stop` accepts (all of them if none is); dead ones met on the way
    /// are dropped. Only for a core [`QueueIndex::is_on`] said is indexed.
    pub fn scan_until(
        &mut self,
        st: &SchedState,
        c: CoreId,
        key_of: impl Fn(ThreadId) -> K,
        mut stop: impl FnMut(K, ThreadId) -> bool,
    ) {
        self.wake(st, c, &key_of);
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

    /// The live entry of `c` with the smallest key. Only for a core
    /// [`QueueIndex::is_on`] said is indexed.
    pub fn first(
        &mut self,
        st: &SchedState,
        c: CoreId,
        key_of: impl Fn(ThreadId) -> K,
    ) -> Option<(K, ThreadId)> {
        self.wake(st, c, &key_of);
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

/// The threads running on a set of cores (a policy's slow cores) by a
/// policy's key, so that finding the best of them is not a pass over the
/// cores. The policy pushes an entry when a thread starts on one of those
/// cores and whenever its key may have changed (at its core's tick, after
/// the counters are read; when the inputs of the key change); an entry is
/// live while its thread runs on one of the cores with that key, and dead
/// ones go when met or, once they outnumber the cores, in one sweep.
#[derive(Clone, Debug)]
pub struct RunningIndex<K: Ord + Copy> {
    set: BTreeSet<(K, ThreadId)>,
    cores: CoreMask,
}

impl<K: Ord + Copy> RunningIndex<K> {
    pub fn new(cores: CoreMask) -> RunningIndex<K> {
        RunningIndex {
            set: BTreeSet::new(),
            cores,
        }
    }

    /// The core `t` runs on, if it is one of the indexed cores.
    pub fn live(&self, st: &SchedState, t: ThreadId) -> Option<CoreId> {
        let o = st.thread(t).core?;
        (st.core(o).current == Some(t) && self.cores.contains(o)).then_some(o)
    }

    pub fn push(&mut self, st: &SchedState, t: ThreadId, key_of: impl Fn(ThreadId) -> K) {
        let key = key_of(t);
        self.set.insert((key, t));
        if self.set.len() > 2 * self.cores.count() + 64 {
            let cores = self.cores;
            self.set.retain(|&(k, x)| {
                let live = st
                    .thread(x)
                    .core
                    .is_some_and(|o| st.core(o).current == Some(x) && cores.contains(o));
                (x == t && k == key) || live && key_of(x) == k
            });
        }
    }

    /// The live entry of smallest key that `take` accepts, with its core.
    pub fn best(
        &mut self,
        st: &SchedState,
        key_of: impl Fn(ThreadId) -> K,
        take: impl Fn(ThreadId) -> bool,
    ) -> Option<(CoreId, ThreadId)> {
        let cores = self.cores;
        let live = |t: ThreadId| {
            let o = st.thread(t).core?;
            (st.core(o).current == Some(t) && cores.contains(o)).then_some(o)
        };
        first_live(&mut self.set, live, key_of, |_, t, _| take(t)).map(|(_, t, o)| (o, t))
    }

    /// Entries, dead ones included (tests).
    #[cfg(test)]
    pub fn entries(&self) -> usize {
        self.set.len()
    }
}

/// Every queued thread of the machine by a policy's key, so that the best
/// of them is not a pass over every queue. The policy pushes an entry at
/// each enqueue and whenever a queued thread's key changes; an entry is
/// live while its thread waits in its core's queue with that key, and dead
/// ones go when met or, once they outnumber twice the threads, in a sweep.
#[derive(Clone, Debug)]
pub struct QueuedIndex<K: Ord + Copy> {
    set: BTreeSet<(K, ThreadId)>,
}

impl<K: Ord + Copy> Default for QueuedIndex<K> {
    fn default() -> Self {
        QueuedIndex {
            set: BTreeSet::new(),
        }
    }
}

impl<K: Ord + Copy> QueuedIndex<K> {
    fn live(st: &SchedState, t: ThreadId) -> Option<CoreId> {
        let o = st.thread(t).core?;
        is_queued_on(st, o, t).then_some(o)
    }

    pub fn push(&mut self, st: &SchedState, t: ThreadId, key_of: impl Fn(ThreadId) -> K) {
        let key = key_of(t);
        self.set.insert((key, t));
        if self.set.len() > 2 * st.threads.len() + 64 {
            self.set.retain(|&(k, x)| {
                (x == t && k == key) || Self::live(st, x).is_some() && key_of(x) == k
            });
        }
    }

    /// The first live entry in key order that `stop` accepts, with its
    /// core; dead entries met on the way are dropped.
    pub fn first_where(
        &mut self,
        st: &SchedState,
        key_of: impl Fn(ThreadId) -> K,
        stop: impl Fn(K, ThreadId, CoreId) -> bool,
    ) -> Option<(K, ThreadId, CoreId)> {
        first_live(&mut self.set, |t| Self::live(st, t), key_of, stop)
    }
}

/// The first entry of `set` in key order that is live (`live` finds its
/// thread's core, and the thread still has the key it was pushed with)
/// and that `accept` takes; dead entries met on the way are dropped.
fn first_live<K: Ord + Copy>(
    set: &mut BTreeSet<(K, ThreadId)>,
    live: impl Fn(ThreadId) -> Option<CoreId>,
    key_of: impl Fn(ThreadId) -> K,
    accept: impl Fn(K, ThreadId, CoreId) -> bool,
) -> Option<(K, ThreadId, CoreId)> {
    let mut dead = Vec::new();
    let mut found = None;
    for &(k, t) in set.iter() {
        match live(t) {
            Some(o) if key_of(t) == k => {
                if accept(k, t, o) {
                    found = Some((k, t, o));
                    break;
                }
            }
            _ => dead.push((k, t)),
        }
    }
    for e in dead {
        set.remove(&e);
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use colab_core::{CoreOrder, ProgramId, ThreadInfo, Topology};

    /// A kept (simulator-style) state of `n` threads on 1B1S, every one
    /// queued on core 0.
    fn kept_state(n: u32) -> SchedState {
        let topo = Topology::named("1B1S", CoreOrder::BigFirst).unwrap();
        let mut st = SchedState::tracked(topo);
        for i in 0..n {
            st.add_thread(ThreadInfo::new(ThreadId(i), ProgramId(0), 0, 2.0));
            st.set_state(ThreadId(i), RunState::Runnable);
            st.threads[i as usize].core = Some(CoreId(0));
            st.rq_push(CoreId(0), ThreadId(i));
        }
        st
    }

    #[test]
    fn built_when_long_pruned_lazily_dropped_when_short() {
        let n = INDEX_FROM as u32;
        let st = kept_state(n);
        let c = CoreId(0);
        // Key: 100 - id, so the highest id comes first.
        let mut keys: Vec<i64> = (0..n).map(|i| 100 - i as i64).collect();
        let mut ix: QueueIndex<i64> = QueueIndex::new(2);
        let short = kept_state(INDEX_FROM as u32 - 1);
        ix.push(&short, c, ThreadId(0), |t| keys[t.idx()]);
        assert!(!ix.is_on(&short, c), "a queue under INDEX_FROM is scanned");
        ix.push(&st, c, ThreadId(n - 1), |t| keys[t.idx()]);
        assert!(ix.is_on(&st, c));
        assert_eq!(ix.len(c), n as usize, "built from the whole queue");
        assert_eq!(
            ix.first(&st, c, |t| keys[t.idx()]),
            Some((100 - (n as i64 - 1), ThreadId(n - 1)))
        );
        // The leader's key grows past everyone's: the next one leads.
        let lead = ThreadId(n - 1);
        keys[lead.idx()] = 1000;
        ix.push(&st, c, lead, |t| keys[t.idx()]);
        assert_eq!(
            ix.first(&st, c, |t| keys[t.idx()]).map(|e| e.1),
            Some(ThreadId(n - 2))
        );
        keys[lead.idx()] = 100 - (n as i64 - 1);
        ix.push(&st, c, lead, |t| keys[t.idx()]);
        // Thread 5's key drops below everyone's: pushed again, it leads;
        // its old entry is dead and goes when met.
        keys[5] = -1;
        ix.push(&st, c, ThreadId(5), |t| keys[t.idx()]);
        assert_eq!(ix.first(&st, c, |t| keys[t.idx()]), Some((-1, ThreadId(5))));
        let mut seen = Vec::new();
        ix.scan_until(
            &st,
            c,
            |t| keys[t.idx()],
            |_, t| {
                seen.push(t);
                false
            },
        );
        assert_eq!(seen.len(), n as usize, "every queued thread once");
        assert_eq!(ix.len(c), n as usize, "the dead entry was dropped");
        // Thread 5 leaves the queue (dispatched): the next one leads.
        let mut st2 = st.clone();
        st2.rq_remove(c, ThreadId(5));
        st2.set_current(c, Some(ThreadId(5)));
        st2.set_state(ThreadId(5), RunState::Running);
        assert_eq!(
            ix.first(&st2, c, |t| keys[t.idx()]).map(|e| e.1),
            Some(ThreadId(n - 1))
        );
        // A queue that falls under UNINDEX_BELOW is scanned again.
        let few = kept_state(UNINDEX_BELOW as u32 - 1);
        assert!(!ix.is_on(&few, c));
        assert_eq!(ix.len(c), 0);
    }

    #[test]
    fn hand_built_states_are_never_indexed() {
        let mut st = kept_state(INDEX_FROM as u32 + 4);
        st.active_tracked = false;
        let mut ix: QueueIndex<u32> = QueueIndex::new(2);
        ix.push(&st, CoreId(0), ThreadId(0), |t| t.0);
        assert!(!ix.is_on(&st, CoreId(0)));
    }
}
