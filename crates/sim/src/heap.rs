//! The event queue: a 4-ary min-heap. With thousands of sleeping threads
//! queued, a pop sifts through half the levels of a binary heap, and the
//! four children it compares at each level sit side by side in memory.
//! Events are totally ordered (time, then a sequence number), so the order
//! they leave in is that of any other priority queue.

#[derive(Clone, Debug)]
pub(crate) struct QuadHeap<T: Ord> {
    v: Vec<T>,
}

impl<T: Ord> Default for QuadHeap<T> {
    fn default() -> Self {
        QuadHeap { v: Vec::new() }
    }
}

impl<T: Ord> QuadHeap<T> {
    #[inline]
    pub(crate) fn peek(&self) -> Option<&T> {
        self.v.first()
    }

    pub(crate) fn push(&mut self, x: T) {
        self.v.push(x);
        let mut i = self.v.len() - 1;
        while i > 0 {
            let p = (i - 1) / 4;
            if self.v[i] >= self.v[p] {
                break;
            }
            self.v.swap(i, p);
            i = p;
        }
    }

    pub(crate) fn pop(&mut self) -> Option<T> {
        let last = self.v.pop()?;
        if self.v.is_empty() {
            return Some(last);
        }
        let top = std::mem::replace(&mut self.v[0], last);
        let n = self.v.len();
        let mut i = 0;
        loop {
            let first = 4 * i + 1;
            if first >= n {
                break;
            }
            let mut m = first;
            for c in first + 1..(first + 4).min(n) {
                if self.v[c] < self.v[m] {
                    m = c;
                }
            }
            if self.v[m] >= self.v[i] {
                break;
            }
            self.v.swap(i, m);
            i = m;
        }
        Some(top)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    proptest! {
        /// Pushes and pops in any mix leave in the order of the standard
        /// binary heap (keys distinct, as the engine's sequence numbers
        /// make them).
        #[test]
        fn pops_in_the_order_of_a_binary_heap(
            ops in prop::collection::vec((0u64..50, any::<bool>()), 0..600),
        ) {
            let mut q = QuadHeap::default();
            let mut b = BinaryHeap::new();
            for (seq, (t, push)) in ops.into_iter().enumerate() {
                if push || seq % 3 == 0 {
                    q.push((t, seq));
                    b.push(Reverse((t, seq)));
                } else {
                    prop_assert_eq!(q.pop(), b.pop().map(|r| r.0));
                }
                prop_assert_eq!(q.peek().copied(), b.peek().map(|r| r.0));
            }
            while let Some(x) = b.pop() {
                prop_assert_eq!(q.pop(), Some(x.0));
            }
            prop_assert_eq!(q.pop(), None);
        }
    }
}
