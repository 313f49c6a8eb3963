//! Sets of cores as fixed bit masks (at most [`MAX_CORES`] per machine).

use crate::CoreId;
use serde::{Deserialize, Serialize};
use std::fmt;

/// The most cores a machine may have (a 1,024-bit [`CoreMask`]).
pub const MAX_CORES: usize = 1024;

const MASK_WORDS: usize = MAX_CORES / 64;

/// Bit set of cores (at most [`MAX_CORES`] per machine). A fixed array, so
/// masks stay `Copy` and cost no allocation; operations skip empty words.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CoreMask([u64; MASK_WORDS]);

impl Default for CoreMask {
    fn default() -> Self {
        CoreMask::EMPTY
    }
}

impl CoreMask {
    pub const EMPTY: CoreMask = CoreMask([0; MASK_WORDS]);
    /// Cores 0..n (all of them from [`MAX_CORES`] on).
    pub fn all(n: usize) -> CoreMask {
        let mut m = CoreMask::EMPTY;
        let n = n.min(MAX_CORES);
        for (i, w) in m.0.iter_mut().enumerate() {
            let lo = i * 64;
            if n >= lo + 64 {
                *w = u64::MAX;
            } else if n > lo {
                *w = (1u64 << (n - lo)) - 1;
            }
        }
        m
    }
    pub fn single(c: CoreId) -> CoreMask {
        let mut m = CoreMask::EMPTY;
        m.insert(c);
        m
    }
    #[inline]
    pub fn contains(self, c: CoreId) -> bool {
        let i = c.idx();
        i < MAX_CORES && self.0[i / 64] & (1u64 << (i % 64)) != 0
    }
    /// Adds core `c` (below [`MAX_CORES`]; topologies are checked for that).
    pub fn insert(&mut self, c: CoreId) {
        let i = c.idx();
        self.0[i / 64] |= 1u64 << (i % 64);
    }
    /// Takes `c` out, in place (no 128-byte mask built, as `minus` would).
    pub fn remove(&mut self, c: CoreId) {
        self.0[c.idx() / 64] &= !(1u64 << (c.idx() % 64));
    }
    pub fn union(self, o: CoreMask) -> CoreMask {
        self.zip(o, |a, b| a | b)
    }
    pub fn intersect(self, o: CoreMask) -> CoreMask {
        self.zip(o, |a, b| a & b)
    }
    /// The cores of `self` not in `o`.
    pub fn minus(self, o: CoreMask) -> CoreMask {
        self.zip(o, |a, b| a & !b)
    }
    fn zip(mut self, o: CoreMask, f: impl Fn(u64, u64) -> u64) -> CoreMask {
        for (a, b) in self.0.iter_mut().zip(o.0) {
            *a = f(*a, b);
        }
        self
    }
    pub fn is_empty(self) -> bool {
        self.0.iter().all(|&w| w == 0)
    }
    pub fn count(self) -> usize {
        self.0.iter().map(|w| w.count_ones() as usize).sum()
    }
    pub fn iter(self) -> CoreMaskIter {
        CoreMaskIter {
            words: self.0,
            word: 0,
        }
    }
    /// The cores of the mask from `start` up, then those below it: the
    /// order of a scan of core numbers that starts at `start` and wraps.
    pub fn iter_from(self, start: CoreId) -> impl Iterator<Item = CoreId> {
        let below = CoreMask::all(start.idx());
        self.minus(below).iter().chain(self.intersect(below).iter())
    }
}

/// Cores of a mask in increasing order (cheap to clone: policies scan twice).
#[derive(Clone, Copy, Debug)]
pub struct CoreMaskIter {
    words: [u64; MASK_WORDS],
    /// The word being taken apart; the ones before it are spent.
    word: usize,
}

impl Iterator for CoreMaskIter {
    type Item = CoreId;
    #[inline]
    fn next(&mut self) -> Option<CoreId> {
        while self.word < MASK_WORDS {
            let w = &mut self.words[self.word];
            if *w != 0 {
                let i = w.trailing_zeros() as usize;
                *w &= *w - 1;
                return Some(CoreId((self.word * 64 + i) as u16));
            }
            self.word += 1;
        }
        None
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.words[self.word.min(MASK_WORDS)..]
            .iter()
            .map(|w| w.count_ones() as usize)
            .sum();
        (n, Some(n))
    }
}

impl fmt::Debug for CoreMask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v: Vec<u16> = self.iter().map(|c| c.0).collect();
        write!(f, "{v:?}")
    }
}
