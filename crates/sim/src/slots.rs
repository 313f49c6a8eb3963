//! The next completion time of every core, and the earliest of them, as a
//! tournament tree: setting one core's time costs O(log cores) and reading
//! the earliest O(1), so the event loop does not scan every core per event.

use colab_core::Nanos;

/// Per-slot times with the earliest always at hand. Ties go to the lower
/// slot, as a scan in slot order would.
#[derive(Clone, Debug)]
pub(crate) struct MinSlots {
    /// Leaves from `cap`; node k holds the smaller of nodes 2k and 2k+1.
    tree: Vec<(Nanos, u32)>,
    cap: usize,
}

impl MinSlots {
    /// `n` slots, all at `empty` (a time later than any real one).
    pub(crate) fn new(n: usize, empty: Nanos) -> MinSlots {
        let cap = n.max(1).next_power_of_two();
        let mut tree = vec![(empty, u32::MAX); 2 * cap];
        for i in 0..cap {
            tree[cap + i] = (empty, i as u32);
        }
        for k in (1..cap).rev() {
            tree[k] = tree[2 * k].min(tree[2 * k + 1]);
        }
        MinSlots { tree, cap }
    }

    #[cfg(test)]
    fn get(&self, i: usize) -> Nanos {
        self.tree[self.cap + i].0
    }

    pub(crate) fn set(&mut self, i: usize, t: Nanos) {
        let mut k = self.cap + i;
        self.tree[k].0 = t;
        while k > 1 {
            k /= 2;
            self.tree[k] = self.tree[2 * k].min(self.tree[2 * k + 1]);
        }
    }

    /// The earliest slot and its time (the lowest slot on ties).
    pub(crate) fn min(&self) -> (usize, Nanos) {
        let (t, i) = self.tree[1];
        (i as usize, t)
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
            let mut s = MinSlots::new(n, u64::MAX);
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
        let mut s = MinSlots::new(5, u64::MAX);
        assert_eq!(s.min(), (0, u64::MAX));
        s.set(3, 7);
        s.set(1, 7);
        assert_eq!(s.min(), (1, 7));
        s.set(1, u64::MAX);
        assert_eq!(s.min(), (3, 7));
    }
}
