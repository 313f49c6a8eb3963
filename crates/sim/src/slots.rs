//! The next completion time of every core, and the earliest of them. On a
//! small machine a scan of the slots is fastest; from [`TREE_FROM`] slots
//! on they live in a 4-ary tournament tree, where setting one costs O(log cores)
//! and reading the earliest O(1), so the event loop does not scan a large
//! machine's every core per event.

use colab_core::Nanos;

/// Slots from which the tree pays: measured 2026-11-25 on the COLAB study
/// (4-8 cores), where the tree made the whole study 25% slower than the
/// scan (`colab reproduce`, 10.9-11.1 s against 8.5-8.9 s, alternating
/// runs); at 1,024 cores the scan costs a pass over every core per event.
/// 64 is an assumption between the two (one cache line of 8 slots x 8).
pub(crate) const TREE_FROM: usize = 64;

/// Per-slot times with the earliest at hand. Ties go to the lower slot, as
/// a scan in slot order would.
#[derive(Clone, Debug)]
pub(crate) struct MinSlots {
    slots: Slots,
    /// Slots emptied since the last [`MinSlots::min`] and not set since:
    /// their leaves still hold their old times until then. A core emptied
    /// (its completion popped, its thread stopped) almost always gets its
    /// next time before the next read, so one walk up the tree serves both.
    pending: Vec<usize>,
    empty: Nanos,
}

#[derive(Clone, Debug)]
enum Slots {
    Scan(Vec<Nanos>),
    /// A 4-ary tournament tree stored level by level, leaves first: level
    /// j starts at `start[j]`, and entry k of level j + 1 holds the
    /// smallest (time, slot) of entries 4k..4k+4 of level j. Four children
    /// share a cache line and a walk has half the levels of a binary tree
    /// (a pop of the earliest slot walks all of them).
    Tree {
        tree: Vec<u128>,
        start: Vec<usize>,
    },
}

/// An entry of the tree: its time above its slot, so that one integer
/// comparison orders by time, then slot (branch-free minima).
#[inline]
fn entry(t: Nanos, slot: usize) -> u128 {
    (u128::from(t) << 64) | slot as u128
}

#[inline]
fn time_of(e: u128) -> Nanos {
    (e >> 64) as Nanos
}

/// The smallest of four entries (no two are equal: slots differ).
#[inline]
fn min4(g: &[u128]) -> u128 {
    g[0].min(g[1]).min(g[2].min(g[3]))
}

impl MinSlots {
    /// `n` slots, all at `empty` (a time later than any real one).
    pub(crate) fn new(n: usize, empty: Nanos) -> MinSlots {
        if n < TREE_FROM {
            return MinSlots::of(Slots::Scan(vec![empty; n.max(1)]), empty);
        }
        MinSlots::tree(n, empty)
    }

    fn of(slots: Slots, empty: Nanos) -> MinSlots {
        MinSlots {
            slots,
            pending: Vec::new(),
            empty,
        }
    }

    fn tree(n: usize, empty: Nanos) -> MinSlots {
        let mut width = 4;
        while width < n {
            width *= 4;
        }
        let mut start = Vec::new();
        let mut tree = Vec::new();
        while width >= 1 {
            start.push(tree.len());
            if tree.is_empty() {
                tree.extend((0..width).map(|i| entry(empty, i)));
            } else {
                let below = start[start.len() - 2];
                for k in 0..width {
                    let m = min4(&tree[below + 4 * k..below + 4 * k + 4]);
                    tree.push(m);
                }
            }
            width /= 4;
        }
        MinSlots::of(Slots::Tree { tree, start }, empty)
    }

    #[cfg(test)]
    fn get(&self, i: usize) -> Nanos {
        if self.pending.contains(&i) {
            return self.empty;
        }
        match &self.slots {
            Slots::Scan(v) => v[i],
            Slots::Tree { tree, .. } => time_of(tree[i]),
        }
    }

    /// Empties the pending slots for real.
    #[inline]
    fn flush(&mut self) {
        while let Some(p) = self.pending.pop() {
            self.put(p, self.empty);
        }
    }

    #[inline]
    pub(crate) fn set(&mut self, i: usize, t: Nanos) {
        if let Slots::Tree { .. } = self.slots {
            if let Some(k) = self.pending.iter().position(|&p| p == i) {
                self.pending.swap_remove(k);
            }
            // A few pending at most: the search stays short.
            if t == self.empty && self.pending.len() < 8 {
                self.pending.push(i);
                return;
            }
        }
        self.put(i, t);
    }

    #[inline]
    fn put(&mut self, i: usize, t: Nanos) {
        match &mut self.slots {
            Slots::Scan(v) => v[i] = t,
            Slots::Tree { tree, start } => {
                let e = entry(t, i);
                if tree[i] == e {
                    return;
                }
                tree[i] = e;
                // Up to the first node that does not change: nor will
                // anything above it.
                let mut k = i;
                for j in 1..start.len() {
                    let g = start[j - 1] + (k & !3);
                    let m = min4(&tree[g..g + 4]);
                    k >>= 2;
                    let node = &mut tree[start[j] + k];
                    if *node == m {
                        break;
                    }
                    *node = m;
                }
            }
        }
    }

    /// The earliest slot and its time (the lowest slot on ties).
    #[inline]
    pub(crate) fn min(&mut self) -> (usize, Nanos) {
        self.flush();
        match &self.slots {
            Slots::Scan(v) => {
                v.iter().enumerate().fold(
                    (0, Nanos::MAX),
                    |b, (i, &t)| if t < b.1 { (i, t) } else { b },
                )
            }
            Slots::Tree { tree, .. } => {
                let e = tree[tree.len() - 1];
                (e as u64 as usize, time_of(e))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// After any sequence of sets and takes of the earliest, the
        /// earliest is what a scan in slot order finds (first minimum).
        #[test]
        fn the_earliest_is_what_a_scan_finds(
            n in 1usize..300,
            sets in prop::collection::vec((0usize..300, 0u64..20, any::<bool>()), 0..400),
        ) {
            let mut s = if n % 2 == 0 { MinSlots::tree(n, u64::MAX) } else { MinSlots::new(n, u64::MAX) };
            let mut plain = vec![u64::MAX; n];
            let scan = |plain: &[u64]| {
                plain
                    .iter()
                    .enumerate()
                    .fold((0, u64::MAX), |b, (i, &t)| if t < b.1 { (i, t) } else { b })
            };
            for (i, t, take) in sets {
                if take {
                    // Pop the earliest, as the event loop does, then set.
                    let (m, _) = s.min();
                    s.set(m, u64::MAX);
                    plain[m] = u64::MAX;
                    prop_assert_eq!(s.get(m), u64::MAX);
                }
                let i = i % n;
                let t = if t == 19 { u64::MAX } else { t };
                s.set(i, t);
                plain[i] = t;
                prop_assert_eq!(s.min(), scan(&plain));
                prop_assert_eq!(s.get(i), t);
            }
        }
    }

    #[test]
    fn ties_go_to_the_lower_slot_and_empty_is_slot_zero() {
        for mut s in [MinSlots::new(5, u64::MAX), MinSlots::tree(5, u64::MAX)] {
            assert_eq!(s.min(), (0, u64::MAX));
            s.set(3, 7);
            s.set(1, 7);
            assert_eq!(s.min(), (1, 7));
            s.set(1, u64::MAX);
            assert_eq!(s.min(), (3, 7));
        }
        assert!(matches!(
            MinSlots::new(TREE_FROM, 0).slots,
            Slots::Tree { .. }
        ));
        assert!(matches!(
            MinSlots::new(TREE_FROM - 1, 0).slots,
            Slots::Scan(_)
        ));
    }
}
