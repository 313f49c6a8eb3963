//! The next completion time of every core, and the earliest of them. On a
//! small machine a scan of the slots is fastest; from [`TREE_FROM`] slots
//! on they live in a tournament tree, where setting one costs O(log cores)
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
    /// Leaves from `cap`; node k holds the smaller of nodes 2k and 2k+1.
    Tree {
        tree: Vec<(Nanos, u32)>,
        cap: usize,
    },
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
        let cap = n.max(1).next_power_of_two();
        let mut tree = vec![(empty, u32::MAX); 2 * cap];
        for i in 0..cap {
            tree[cap + i] = (empty, i as u32);
        }
        for k in (1..cap).rev() {
            tree[k] = tree[2 * k].min(tree[2 * k + 1]);
        }
        MinSlots::Tree { tree, cap }
    }

    #[cfg(test)]
    fn get(&self, i: usize) -> Nanos {
        match self {
            MinSlots::Scan(v) => v[i],
            MinSlots::Tree { tree, cap } => tree[cap + i].0,
        }
    }

    #[inline]
    pub(crate) fn set(&mut self, i: usize, t: Nanos) {
        match self {
            MinSlots::Scan(v) => v[i] = t,
            MinSlots::Tree { tree, cap } => {
                let mut k = *cap + i;
                if tree[k].0 == t {
                    return;
                }
                tree[k].0 = t;
                // Up to the first node that does not change: nor will
                // anything above it.
                while k > 1 {
                    k /= 2;
                    let m = tree[2 * k].min(tree[2 * k + 1]);
                    if tree[k] == m {
                        break;
                    }
                    tree[k] = m;
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
                let (t, i) = tree[1];
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
            n in 1usize..40,
            sets in prop::collection::vec((0usize..40, 0u64..20), 0..200),
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
