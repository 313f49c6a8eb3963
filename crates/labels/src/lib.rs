//! COLAB's labeller (colab-tpds 5.4): every labelling period each thread gets
//! a speedup label (high, medium or low, from its predicted big/little
//! speedup) and a blocking label (high when it kept others waiting). One
//! copy, used by the simulator's COLAB (`colab-policies`) and by the live
//! scheduler `scx_colab`, so both label the same situation the same way.
//!
//! Choices the paper leaves open, made once here for every workload:
//! - Speedup labels split the machine's speedup range `[min, max]` in thirds:
//!   high at or above 2/3 of the range, low at or below 1/3.
//! - Blocking level is an exponentially weighted average (weight 1/2 per
//!   period) of the futex wait time the thread caused others in the last
//!   period, divided by the period: the mean number of threads it kept
//!   waiting. "High blocking" at 0.05 or more (it held others up for at
//!   least 5% of the period).

/// Labeller parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct LabelParams {
    /// Labelling period (colab-tpds 5.4: labels are updated every 10 ms).
    pub period_ns: u64,
    /// High-speedup label at or above this fraction of the speedup range.
    pub high_speedup_frac: f64,
    /// Low-speedup label at or below this fraction of the range.
    pub low_speedup_frac: f64,
    /// High-blocking label at or above this blocking level.
    pub high_block_level: f64,
}

impl Default for LabelParams {
    fn default() -> Self {
        LabelParams {
            period_ns: 10_000_000,
            high_speedup_frac: 2.0 / 3.0,
            low_speedup_frac: 1.0 / 3.0,
            high_block_level: 0.05,
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SpeedupLabel {
    High,
    #[default]
    Medium,
    Low,
}

impl SpeedupLabel {
    pub fn as_str(self) -> &'static str {
        match self {
            SpeedupLabel::High => "high",
            SpeedupLabel::Medium => "medium",
            SpeedupLabel::Low => "low",
        }
    }
}

/// The range of the labelled quantity (predicted speedup, or COLAB-E's
/// hyper value) over the machine: what "high" and "low" are relative to.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpeedupRange {
    pub min: f64,
    pub max: f64,
}

impl SpeedupRange {
    /// The label of `value`; medium on a machine without a range (one core
    /// type), where the label cannot matter.
    pub fn label(&self, value: f64, p: &LabelParams) -> SpeedupLabel {
        let range = self.max - self.min;
        if range.is_nan() || range <= 1e-9 {
            return SpeedupLabel::Medium;
        }
        let x = (value - self.min) / range;
        if x >= p.high_speedup_frac {
            SpeedupLabel::High
        } else if x <= p.low_speedup_frac {
            SpeedupLabel::Low
        } else {
            SpeedupLabel::Medium
        }
    }
}

/// Rank labels: each value labelled by its rank among `values` (the threads
/// runnable now), not by the machine's range. The lowest third of the ranks
/// is low, the highest third high, the rest medium; equal values share the
/// label of their mean rank, so the order of ties never matters. Integer
/// arithmetic only (a BPF port compares `3 * (a + b)` with `2n` and `4n`).
/// `order` is scratch space, reused across calls to avoid allocating.
pub fn rank_labels(values: &[f64], order: &mut Vec<usize>, out: &mut Vec<SpeedupLabel>) {
    let n = values.len();
    order.clear();
    order.extend(0..n);
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    out.clear();
    out.resize(n, SpeedupLabel::Medium);
    let mut a = 0;
    while a < n {
        // [a, b): a run of equal values; their mean position is (a + b - 1) / 2
        // and its fraction of n, (a + b) / 2n, is compared with 1/3 and 2/3.
        let mut b = a + 1;
        while b < n && values[order[b]] == values[order[a]] {
            b += 1;
        }
        let twice_mid = 3 * (a + b);
        let label = if twice_mid < 2 * n {
            SpeedupLabel::Low
        } else if twice_mid >= 4 * n {
            SpeedupLabel::High
        } else {
            SpeedupLabel::Medium
        };
        for &i in &order[a..b] {
            out[i] = label;
        }
        a = b;
    }
}

/// A thread's blocking level across periods.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BlockTracker {
    /// EWMA blocking level (others' waiting caused, per ns of period).
    pub level: f64,
    /// The waiting caused, in total, at the last update.
    last_total_ns: u64,
}

impl BlockTracker {
    /// A period ended; `total_ns` is all the futex wait time the thread has
    /// caused others so far (a counter that only grows). Returns whether the
    /// thread is now labelled high-blocking.
    pub fn update(&mut self, total_ns: u64, p: &LabelParams) -> bool {
        let delta = total_ns.saturating_sub(self.last_total_ns);
        self.last_total_ns = total_ns;
        self.level = 0.5 * self.level + 0.5 * (delta as f64 / p.period_ns as f64);
        self.is_high(p)
    }

    pub fn is_high(&self, p: &LabelParams) -> bool {
        self.level >= p.high_block_level
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn speedup_labels_are_thirds_of_the_range() {
        let p = LabelParams::default();
        let r = SpeedupRange { min: 1.0, max: 4.0 };
        // Thirds of [1, 4]: low up to 2, high from 3.
        assert_eq!(r.label(1.0, &p), SpeedupLabel::Low);
        assert_eq!(r.label(2.0, &p), SpeedupLabel::Low);
        assert_eq!(r.label(2.5, &p), SpeedupLabel::Medium);
        assert_eq!(r.label(3.0, &p), SpeedupLabel::High);
        assert_eq!(r.label(9.0, &p), SpeedupLabel::High);
        assert_eq!(r.label(0.5, &p), SpeedupLabel::Low);
        let flat = SpeedupRange { min: 1.0, max: 1.0 };
        assert_eq!(flat.label(3.0, &p), SpeedupLabel::Medium);
        let nan = SpeedupRange {
            min: f64::NAN,
            max: 2.0,
        };
        assert_eq!(nan.label(3.0, &p), SpeedupLabel::Medium);
    }

    #[test]
    fn rank_labels_split_the_runnable_threads_in_thirds() {
        use SpeedupLabel::*;
        let (mut order, mut out) = (Vec::new(), Vec::new());
        // Six distinct values: two low, two medium, two high, whatever their order.
        rank_labels(&[1.9, 1.2, 2.4, 1.5, 1.3, 2.0], &mut order, &mut out);
        assert_eq!(out, vec![Medium, Low, High, Medium, Low, High]);
        // Three threads: one of each, even when all are in the same third of
        // the machine's range (the point of ranking).
        rank_labels(&[1.40, 1.41, 1.42], &mut order, &mut out);
        assert_eq!(out, vec![Low, Medium, High]);
        // Ties share a label: all equal -> mean rank in the middle -> medium.
        rank_labels(&[2.0; 5], &mut order, &mut out);
        assert_eq!(out, vec![Medium; 5]);
        // Two tied lowest of four: mean position 0.5, fraction 0.25 -> low.
        rank_labels(&[1.0, 1.0, 3.0, 2.0], &mut order, &mut out);
        assert_eq!(out, vec![Low, Low, High, Medium]);
        // One thread alone is medium; none gives nothing.
        rank_labels(&[5.0], &mut order, &mut out);
        assert_eq!(out, vec![Medium]);
        rank_labels(&[], &mut order, &mut out);
        assert!(out.is_empty());
        // On the boundaries: a mean position at exactly a third of the ranks
        // is medium, at exactly two thirds high.
        rank_labels(&[1.0, 1.0, 2.0], &mut order, &mut out);
        assert_eq!(out, vec![Medium, Medium, High]);
        rank_labels(&[1.0, 2.0, 2.0], &mut order, &mut out);
        assert_eq!(out, vec![Low, High, High]);
        // Two threads: the faster is high, the slower low.
        rank_labels(&[1.5, 1.1], &mut order, &mut out);
        assert_eq!(out, vec![High, Low]);
    }

    #[test]
    fn blocking_level_is_a_half_weighted_average_per_period() {
        let p = LabelParams::default(); // 10 ms periods, high at 0.05
        let mut b = BlockTracker::default();
        // 2 ms of others' waiting in the first period: level 0.5 * 0.2 = 0.1.
        assert!(b.update(2_000_000, &p));
        assert!((b.level - 0.1).abs() < 1e-12);
        // Nothing more: 0.05, still high (at the threshold).
        assert!(b.update(2_000_000, &p));
        assert!((b.level - 0.05).abs() < 1e-12);
        // Decays below the threshold the next period.
        assert!(!b.update(2_000_000, &p));
        assert!((b.level - 0.025).abs() < 1e-12);
        // A counter that went backwards (a reused slot) counts as nothing.
        assert!(!b.update(1_000, &p));
    }
}
