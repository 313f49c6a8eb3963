//! ROTA's rank arithmetic in 64 bits, as a BPF program can do it (no
//! 128-bit multiply or divide: clang's BPF target has no `__multi3` /
//! `__udivti3`). Each helper is exact wherever the 128-bit product it
//! replaces would have fitted the range stated beside it, which covers every
//! study run here (hours of simulated time, tens of threads); beyond that
//! range it saturates or drops low bits, and never wraps or panics.

use colab_core::Nanos;

/// `a * b / c`, rounded down: exact when the result fits in 64 bits and
/// `(c - 1) * b` does too (callers: `b` up to 2^20, `c` a fixed-point
/// speedup of at most 2^30); saturates at `u64::MAX` otherwise. `c = 0`
/// is taken as 1.
pub(super) fn mul_div(a: u64, b: u64, c: u64) -> u64 {
    let c = c.max(1);
    // a = q c + r, so a b / c = q b + r b / c, and r b < c b does not overflow.
    let (q, r) = (a / c, a % c);
    match r.checked_mul(b) {
        Some(rb) => q.saturating_mul(b).saturating_add(rb / c),
        None => q.saturating_mul(b).saturating_add(r / (c / b).max(1)),
    }
}

/// `(num << shift) / den`, rounded down and capped at `cap`: exact while
/// `num < 2^(64 - shift)`; above that both are shifted right together
/// until it fits, so the ratio loses only the low bits. `den = 0` is taken
/// as 1.
pub(super) fn shl_div(num: u64, shift: u32, den: u64, cap: u64) -> u64 {
    let spare = num.leading_zeros();
    let (num, den) = if spare >= shift {
        (num, den)
    } else {
        let drop = shift - spare;
        (num >> drop, den >> drop)
    };
    ((num << shift) / den.max(1)).min(cap)
}

/// A sum over open spells, `sum_i rate_i * (now - start_i)` (a program's
/// runnable time since each awake thread woke, at rate 1, or its running
/// threads' progress, at each one's progress factor), kept as one
/// total brought up to date when a spell opens or closes, so that a read is
/// one multiply and nothing grows with the clock (the `rate * now - sum of
/// rate * start` form grows past 64 bits). Exact while the total fits in 64
/// bits (e.g. 4,096 threads each awake for 50 days); saturates beyond.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct OpenSum {
    /// The total up to `at`.
    total: u64,
    /// The open spells' rates, summed.
    rate: u64,
    at: Nanos,
}

impl OpenSum {
    /// The total at `now` (not before the last change).
    pub(super) fn at(&self, now: Nanos) -> u64 {
        let dt = now.saturating_sub(self.at);
        self.total.saturating_add(self.rate.saturating_mul(dt))
    }

    fn advance(&mut self, now: Nanos) {
        self.total = self.at(now);
        self.at = self.at.max(now);
    }

    /// Opens a spell of `rate` that began at `start` (its time so far counts).
    pub(super) fn open(&mut self, now: Nanos, rate: u64, start: Nanos) {
        self.advance(now);
        self.rate = self.rate.saturating_add(rate);
        let so_far = rate.saturating_mul(now.saturating_sub(start));
        self.total = self.total.saturating_add(so_far);
    }

    /// Closes the spell of `rate` that began at `start`.
    pub(super) fn close(&mut self, now: Nanos, rate: u64, start: Nanos) {
        self.advance(now);
        self.rate = self.rate.saturating_sub(rate);
        let so_far = rate.saturating_mul(now.saturating_sub(start));
        self.total = self.total.saturating_sub(so_far);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn mul_div_hand_values() {
        assert_eq!(mul_div(10, 3, 4), 7);
        assert_eq!(mul_div(u64::MAX, 1, 1), u64::MAX);
        // 2^60 ns of slow time at speedup 1.5 (FP 1024): 2^60 * 1024 / 1536.
        assert_eq!(mul_div(1 << 60, 1024, 1536), (1u64 << 61) / 3);
        assert_eq!(mul_div(u64::MAX, 1 << 20, 1024), u64::MAX, "saturates");
        assert_eq!(mul_div(5, 2, 0), 10, "c = 0 is 1");
    }

    #[test]
    fn shl_div_hand_values() {
        assert_eq!(shl_div(3, 16, 2, u64::MAX), 3 << 15);
        assert_eq!(shl_div(3, 16, 2, 1 << 10), 1 << 10, "capped");
        // Too wide to shift: both halved until it fits, the ratio kept.
        assert_eq!(shl_div(1 << 60, 16, 1 << 59, u64::MAX), 2 << 16);
        assert_eq!(shl_div(u64::MAX, 16, u64::MAX, u64::MAX), 1 << 16);
        assert_eq!(shl_div(7, 16, 0, u64::MAX), 7 << 16, "den = 0 is 1");
    }

    #[test]
    fn open_sum_counts_each_spell_from_its_start() {
        let mut s = OpenSum::default();
        s.open(10, 1, 10); // a thread wakes at 10
        s.open(30, 2, 25); // a run at factor 2 that began at 25
        assert_eq!(s.at(30), 20 + 2 * 5);
        assert_eq!(s.at(40), 30 + 2 * 15);
        s.close(40, 1, 10);
        assert_eq!(s.at(50), 2 * 25);
        s.close(50, 2, 25);
        assert_eq!((s.at(50), s.at(90)), (0, 0));
    }

    proptest! {
        /// Exact against 128-bit arithmetic in the stated range.
        #[test]
        fn mul_div_is_exact_in_range(a in 0u64..(1 << 44), b in 1u64..=(1 << 20), c in 1024u64..(1 << 30)) {
            let want = a as u128 * b as u128 / c as u128;
            prop_assert_eq!(mul_div(a, b, c) as u128, want);
        }

        #[test]
        fn shl_div_is_exact_below_the_shift(num in 0u64..(1 << 48), den in 1u64.., cap in 1u64..) {
            let want = ((num as u128) << 16) / den as u128;
            prop_assert_eq!(shl_div(num, 16, den, cap) as u128, want.min(cap as u128));
        }

        /// Above the range the ratio is kept to within one part in 2^15
        /// of the exact one (the low bits dropped), never more.
        #[test]
        fn shl_div_keeps_the_ratio_when_wide(num in (1u64 << 48)..u64::MAX, den in (1u64 << 40)..u64::MAX) {
            let want = ((num as u128) << 16) / den as u128;
            let got = shl_div(num, 16, den, u64::MAX) as u128;
            prop_assert!(got <= want.max(1) * (1 << 15) / ((1 << 15) - 1) + 1);
            prop_assert!(got + 1 >= want * ((1 << 15) - 1) / (1 << 15));
        }

        /// Spells opened and closed in any order: the kept total is the
        /// sum over the open ones, as 128-bit arithmetic has it.
        #[test]
        fn open_sum_matches_a_recount(steps in proptest::collection::vec((0u64..1_000_000, 1u64..2048, any::<bool>()), 1..60)) {
            let mut s = OpenSum::default();
            let mut open: Vec<(u64, Nanos)> = Vec::new();
            let mut now = 0;
            for (dt, rate, close) in steps {
                now += dt;
                if close && !open.is_empty() {
                    let (r, start) = open.remove(0);
                    s.close(now, r, start);
                } else {
                    let start = now - dt / 2;
                    s.open(now, rate, start);
                    open.push((rate, start));
                }
                let want: u128 = open.iter().map(|&(r, st)| r as u128 * (now - st) as u128).sum();
                prop_assert_eq!(s.at(now) as u128, want);
            }
        }
    }
}
