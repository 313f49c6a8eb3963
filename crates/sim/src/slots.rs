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
pub(crate) enum MinSlots {
    Scan(Vec<Nanos>),
    /// A 4-ary tournament tree stored level by level, leaves first: level
    /// j starts at `start[j]`, and entry k of level j + 1 holds the
    /// smallest (time, slot) of entries 4k..4k+4 of level j. Four children
    /// share a cache line and a walk has half the levels of a binary tree
    /// (a pop of the earliest slot walks all of them).
    Tree {
        tree: Vec<(Nanos, u32)>,
        start: Vec<usize>,
    },
}

/// The smallest of four entries (no two are equal: slots differ).
#[inline]
fn min4(g: &[(Nanos, u32)]) -> (Nanos, u32) {
    let a = if g[1] < g[0] { g[1] } else { g[0] };
    let b = if g[3] < g[2] { g[3] } else { g[2] };
    if b < a {
        b
    } else {
        a
    }
}

impl MinSlots {
    /// `n` slots, all at `empty` (a time later than any real one).
    pub(crate) fn new(n: usize, empty: Nanos) -> MinSlots {
        if n < TREE_FROM {
            return MinSlots::Scan(vec![empty; n.max(1)]);
        }
        MinSlots::tree(n, empty)
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
                tree.extend((0..width as u32).map(|i| (empty, i)));
            } else {
                let below = start[start.len() - 2];
                for k in 0..width {
                    let m = min4(&tree[below + 4 * k..below + 4 * k + 4]);
                    tree.push(m);
                }
            }
            width /= 4;
        }
        MinSlots::Tree { tree, start }
    }

    #[cfg(test)]
    fn get(&self, i: usize) -> Nanos {
        match self {
            MinSlots::Scan(v) => v[i],
            MinSlots::Tree { tree, .. } => tree[i].0,
        }
    }

    #[inline]
    pub(crate) fn set(&mut self, i: usize, t: Nanos) {
        match self {
            MinSlots::Scan(v) => v[i] = t,
            MinSlots::Tree { tree, start } => {
                if tree[i].0 == t {
                    return;
                }
                tree[i].0 = t;
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
    pub(crate) fn min(&self) -> (usize, Nanos) {
        match self {
            MinSlots::Scan(v) => {
                v.iter().enumerate().fold(
                    (0, Nanos::MAX),
                    |b, (i, &t)| if t < b.1 { (i, t) } else { b },
                )
            }
            MinSlots::Tree { tree, .. } => {
                let (t, i) = tree[tree.len() - 1];
                (i as usize, t)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// After any sequence of sets, the earliest is what a scan in slot
        /// order finds (first minimum).
        #[test]
        fn the_earliest_is_what_a_scan_finds(
            n in 1usize..300,
            sets in prop::collection::vec((0usize..300, 0u64..20), 0..400),
        ) {
            let mut s = if n % 2 == 0 { MinSlots::tree(n, u64::MAX) } else { MinSlots::new(n, u64::MAX) };
            let mut plain = vec![u64::MAX; n];
            for (i, t) in sets {
                let i = i % n;
                let t = if t == 19 { u64::MAX } else { t };
                s.set(i, t);
                plain[i] = t;
                let want = plain
                    .iter()
                    .enumerate()
                    .fold((0, u64::MAX), |b, (i, &t)| if t < b.1 { (i, t) } else { b });
                prop_assert_eq!(s.min(), want);
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
        assert!(matches!(MinSlots::new(TREE_FROM, 0), MinSlots::Tree { .. }));
        assert!(matches!(MinSlots::new(TREE_FROM - 1, 0), MinSlots::Scan(_)));
    }
}
