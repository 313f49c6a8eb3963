//! A core's run queue: its waiting threads in arrival order, with removal
//! from anywhere in O(1) amortised.
//!
//! Policies read the arrival order (ties go to the earlier arrival), so a
//! removed thread leaves a hole instead of shifting the rest; holes are
//! skipped when iterating and squeezed out once they outnumber the threads
//! (the caller that tracks slots, `SchedState`, renumbers them then).

use crate::ThreadId;
use serde::{Serialize, Serializer};

/// A queue is worth an ordered index (a BTreeSet or tree beside it) from
/// this many threads on (assumption: about where a BTreeSet starts to beat
/// a pass over the queue; with every queue indexed, `colab bench --threads`
/// ran 64 threads on 4B4S 35% slower under Prop-SP). Shared by the
/// simulator's waiting order and the policies' own indexes.
pub const INDEX_FROM: usize = 32;
/// ... and no longer below this many (hysteresis, so that a queue hovering
/// around the threshold is not rebuilt at every enqueue).
pub const UNINDEX_BELOW: usize = 8;

/// A hole left by a removed thread.
const HOLE: ThreadId = ThreadId(u32::MAX);

fn not_hole(t: &&ThreadId) -> bool {
    **t != HOLE
}

/// The waiting threads of a [`RunQueue`], in arrival order.
pub type Iter<'a> = std::iter::Filter<std::slice::Iter<'a, ThreadId>, fn(&&ThreadId) -> bool>;

#[derive(Clone, Debug, Default)]
pub struct RunQueue {
    slots: Vec<ThreadId>,
    live: usize,
    /// Removals so far: while unchanged, the slots read before still hold
    /// what they held (pushes only append).
    removals: u64,
    /// Pushes so far (see [`RunQueue::pushed_after`]).
    pushes: u64,
}

impl RunQueue {
    /// The waiting threads in arrival order.
    pub fn iter(&self) -> Iter<'_> {
        self.slots.iter().filter(not_hole as fn(&&ThreadId) -> bool)
    }
    /// (slot, thread) of every waiting thread.
    pub fn slots(&self) -> impl Iterator<Item = (usize, ThreadId)> + '_ {
        self.slots_from(0)
    }
    /// (slot, thread) of the waiting threads in slots `from` on.
    pub fn slots_from(&self, from: usize) -> impl Iterator<Item = (usize, ThreadId)> + '_ {
        let tail = self.slots.get(from..).unwrap_or_default();
        (from..)
            .zip(tail.iter().copied())
            .filter(|&(_, t)| t != HOLE)
    }
    /// How many threads have been taken out (see [`RunQueue::slots_from`]).
    pub fn removals(&self) -> u64 {
        self.removals
    }
    /// How many threads have been pushed.
    pub fn pushes(&self) -> u64 {
        self.pushes
    }
    /// The waiting threads pushed after the first `n` pushes, and maybe
    /// some pushed before: pushes append, so those still waiting are among
    /// the last `pushes - n` slots.
    pub fn pushed_after(&self, n: u64) -> Iter<'_> {
        let k = self.pushes.saturating_sub(n).min(self.slots.len() as u64) as usize;
        self.slots[self.slots.len() - k..]
            .iter()
            .filter(not_hole as fn(&&ThreadId) -> bool)
    }
    pub fn len(&self) -> usize {
        self.live
    }
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }
    /// The earliest arrival.
    pub fn front(&self) -> Option<ThreadId> {
        self.iter().next().copied()
    }
    pub fn contains(&self, t: ThreadId) -> bool {
        self.iter().any(|&x| x == t)
    }
    /// Appends `t`; returns its slot.
    pub fn push(&mut self, t: ThreadId) -> usize {
        self.slots.push(t);
        self.live += 1;
        self.pushes += 1;
        self.slots.len() - 1
    }
    /// The thread in `slot`, if any.
    pub fn at(&self, slot: usize) -> Option<ThreadId> {
        self.slots.get(slot).copied().filter(|&t| t != HOLE)
    }
    /// The slot of `t`, by a search.
    pub fn slot_of(&self, t: ThreadId) -> Option<usize> {
        self.slots.iter().position(|&x| x == t)
    }
    /// Takes the thread out of `slot` (which must hold one). True if the
    /// holes were squeezed out, which renumbers every slot.
    pub fn remove_slot(&mut self, slot: usize) -> bool {
        debug_assert!(self.at(slot).is_some(), "slot {slot} holds no thread");
        self.slots[slot] = HOLE;
        self.live -= 1;
        self.removals += 1;
        while self.slots.last() == Some(&HOLE) {
            self.slots.pop();
        }
        if self.slots.len() > 2 * self.live + 16 {
            self.slots.retain(|&t| t != HOLE);
            return true;
        }
        false
    }
    /// Takes `t` out wherever it is; false if it was not queued.
    pub fn remove(&mut self, t: ThreadId) -> bool {
        match self.slot_of(t) {
            Some(p) => {
                self.remove_slot(p);
                true
            }
            None => false,
        }
    }
    pub fn retain(&mut self, mut keep: impl FnMut(&ThreadId) -> bool) {
        self.slots.retain(|t| *t != HOLE && keep(t));
        self.live = self.slots.len();
        self.removals += 1;
    }
    pub fn clear(&mut self) {
        self.slots.clear();
        self.live = 0;
        self.removals += 1;
    }
}

impl<'a> IntoIterator for &'a RunQueue {
    type Item = &'a ThreadId;
    type IntoIter = Iter<'a>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl FromIterator<ThreadId> for RunQueue {
    fn from_iter<I: IntoIterator<Item = ThreadId>>(it: I) -> RunQueue {
        let slots: Vec<ThreadId> = it.into_iter().collect();
        RunQueue {
            live: slots.len(),
            pushes: slots.len() as u64,
            slots,
            removals: 0,
        }
    }
}

/// Serialised as the list of waiting threads.
impl Serialize for RunQueue {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(q: &RunQueue) -> Vec<u32> {
        q.iter().map(|t| t.0).collect()
    }

    #[test]
    fn keeps_arrival_order_through_removals_and_squeezes() {
        let mut q = RunQueue::default();
        for t in 0..40 {
            assert_eq!(q.push(ThreadId(t)), t as usize);
        }
        assert_eq!(
            q.slots_from(38).collect::<Vec<_>>(),
            [(38, ThreadId(38)), (39, ThreadId(39))]
        );
        assert_eq!(q.slots_from(41).count(), 0);
        assert!(!q.remove_slot(10));
        assert!(q.remove(ThreadId(0)));
        assert!(!q.remove(ThreadId(0)), "already gone");
        assert_eq!(q.removals(), 2);
        assert_eq!(
            q.slots_from(10).next(),
            Some((11, ThreadId(11))),
            "past the hole"
        );
        assert_eq!(q.len(), 38);
        assert_eq!(q.front(), Some(ThreadId(1)));
        assert_eq!(q.at(10), None);
        assert_eq!(q.at(11), Some(ThreadId(11)));
        // Removing the last slot drops it (and holes before it).
        q.remove(ThreadId(39));
        q.remove(ThreadId(38));
        assert_eq!(q.slots.len(), 38);
        // Remove most: holes get squeezed out, order kept.
        let mut squeezed = false;
        for t in 1..30 {
            if t != 10 {
                let slot = q.slot_of(ThreadId(t)).unwrap();
                squeezed |= q.remove_slot(slot);
                assert!(q.slots.len() <= 2 * q.len() + 16, "holes stay bounded");
            }
        }
        assert!(squeezed);
        assert_eq!(ids(&q), (30..38).collect::<Vec<_>>());
        let slot = q.slot_of(ThreadId(30)).unwrap();
        assert!(slot < 30, "renumbered by the squeeze");
        assert_eq!(q.at(slot), Some(ThreadId(30)));
        q.retain(|t| t.0 % 2 == 0);
        assert_eq!(ids(&q), vec![30, 32, 34, 36]);
        assert_eq!(q.len(), 4);
        assert!(q.contains(ThreadId(32)) && !q.contains(ThreadId(31)));
        q.clear();
        assert!(q.is_empty() && q.front().is_none());
    }

    #[test]
    fn pushed_after_holds_every_later_push_still_waiting() {
        // A superset of the later pushes still waiting, and only waiting ones.
        let check = |q: &RunQueue, n: u64, later: &[u32]| {
            let got: Vec<u32> = q.pushed_after(n).map(|t| t.0).collect();
            let waiting: Vec<u32> = q.iter().map(|t| t.0).collect();
            assert!(
                later.iter().all(|t| got.contains(t)),
                "{got:?} misses one of {later:?}"
            );
            assert!(
                got.iter().all(|t| waiting.contains(t)),
                "{got:?} not all waiting"
            );
        };
        let mut q: RunQueue = (0..3).map(ThreadId).collect();
        assert_eq!(q.pushes(), 3);
        assert_eq!(q.pushed_after(3).count(), 0);
        q.push(ThreadId(3));
        q.push(ThreadId(4));
        assert_eq!(q.pushed_after(3).map(|t| t.0).collect::<Vec<_>>(), [3, 4]);
        assert!(q.remove(ThreadId(4)));
        check(&q, 3, &[3]);
        q.push(ThreadId(9));
        assert!(q.remove(ThreadId(0)));
        q.retain(|t| t.0 != 1);
        // Squeezed, the later pushes still sit in the last slots.
        check(&q, 3, &[3, 9]);
        check(&q, 0, &[2, 3, 9]);
    }
}
