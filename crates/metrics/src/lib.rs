//! Scheduling metrics used by the COLAB papers (colab-tpds §6.1, colab-cgo20 "Metrics").
//!
//! All functions are pure and never panic: bad input (empty slices, times that
//! are zero, negative or not finite, mismatched lengths, results that overflow)
//! is reported through [`MetricError`].
//!
//! Notation, for a workload of `n` programs:
//! * `T_M`   – turnaround time of a program while co-scheduled in the mix;
//! * `T_SB`  – turnaround time of the same program run alone on a machine with
//!   only big cores and the same core count;
//! * `T_alone` – turnaround time of the program run alone on the *same*
//!   configuration (used by the unfairness metric).
//!
//! Times can be in any unit as long as both members of a pair use the same one.

use thiserror::Error;

/// Why a metric could not be computed.
#[derive(Debug, Clone, Copy, PartialEq, Error)]
pub enum MetricError {
    /// The metric is undefined for zero programs / values.
    #[error("{what}: input is empty")]
    Empty { what: &'static str },
    /// A time was zero, negative, NaN or infinite.
    #[error("{what}[{index}] = {value}: times must be finite and strictly positive")]
    InvalidTime {
        what: &'static str,
        index: usize,
        value: f64,
    },
    /// A plain value (for `mean`, `geomean`, `normalise`) was out of its domain.
    #[error("{what}[{index}] = {value}: {requirement}")]
    InvalidValue {
        what: &'static str,
        index: usize,
        value: f64,
        requirement: &'static str,
    },
    /// Two parallel slices did not have the same length.
    #[error("length mismatch: {left} entries vs {right} entries")]
    LengthMismatch { left: usize, right: usize },
    /// Inputs were valid but the result overflowed to infinity (e.g. 1e300 / 1e-300).
    #[error("{what}: result is not finite")]
    NonFiniteResult { what: &'static str },
}

/// Result alias of this crate.
pub type Result<T> = std::result::Result<T, MetricError>;

fn check_time(what: &'static str, index: usize, value: f64) -> Result<f64> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(MetricError::InvalidTime { what, index, value })
    }
}

fn check_pair(what: &'static str, index: usize, (a, b): (f64, f64)) -> Result<(f64, f64)> {
    Ok((check_time(what, index, a)?, check_time(what, index, b)?))
}

fn finite(what: &'static str, value: f64) -> Result<f64> {
    if value.is_finite() {
        Ok(value)
    } else {
        Err(MetricError::NonFiniteResult { what })
    }
}

fn non_empty<T>(what: &'static str, s: &[T]) -> Result<()> {
    if s.is_empty() {
        Err(MetricError::Empty { what })
    } else {
        Ok(())
    }
}

/// Zips two parallel slices of times into `(first, second)` pairs, checking the
/// lengths match. Convenience for callers holding `T_M` and `T_SB` separately.
pub fn zip_times(first: &[f64], second: &[f64]) -> Result<Vec<(f64, f64)>> {
    if first.len() != second.len() {
        return Err(MetricError::LengthMismatch {
            left: first.len(),
            right: second.len(),
        });
    }
    Ok(first.iter().copied().zip(second.iter().copied()).collect())
}

/// Heterogeneous Normalized Turnaround Time of a single program: `T_M / T_SB`
/// (cgo20, single-program study). Lower is better; 1.0 means "as fast as on an
/// all-big machine".
pub fn h_ntt(t_m: f64, t_sb: f64) -> Result<f64> {
    let (t_m, t_sb) = check_pair("h_ntt", 0, (t_m, t_sb))?;
    finite("h_ntt", t_m / t_sb)
}

/// Heterogeneous Average Normalized Turnaround Time:
/// `H_ANTT = (1/n) * sum_i T_M_i / T_SB_i` over `(T_M, T_SB)` pairs. Lower is better.
pub fn h_antt(pairs: &[(f64, f64)]) -> Result<f64> {
    non_empty("h_antt", pairs)?;
    let mut sum = 0.0;
    for (i, &p) in pairs.iter().enumerate() {
        let (t_m, t_sb) = check_pair("h_antt", i, p)?;
        sum += t_m / t_sb;
    }
    finite("h_antt", sum / pairs.len() as f64)
}

/// Heterogeneous System Throughput:
/// `H_STP = sum_i T_SB_i / T_M_i` over `(T_M, T_SB)` pairs. Higher is better;
/// at most `n` when no program is slowed down relative to the all-big machine.
pub fn h_stp(pairs: &[(f64, f64)]) -> Result<f64> {
    non_empty("h_stp", pairs)?;
    let mut sum = 0.0;
    for (i, &p) in pairs.iter().enumerate() {
        let (t_m, t_sb) = check_pair("h_stp", i, p)?;
        sum += t_sb / t_m;
    }
    finite("h_stp", sum)
}

/// Aggregate speedup (propsp eq. 1): `ASP = sum_i (CT_slow_i / CT_sched_i - 1)`
/// over `(T_M, T_slow)` pairs, where `T_slow` is the program's turnaround
/// alone on the machine's slow cores only. Higher is better; 0 means every
/// program ran as slowly as on the slow cores alone.
pub fn aggregate_speedup(pairs: &[(f64, f64)]) -> Result<f64> {
    non_empty("aggregate_speedup", pairs)?;
    let mut sum = 0.0;
    for (i, &p) in pairs.iter().enumerate() {
        let (t_m, t_slow) = check_pair("aggregate_speedup", i, p)?;
        sum += t_slow / t_m - 1.0;
    }
    finite("aggregate_speedup", sum)
}

/// Prop-SP's unfairness (propsp eq. 2): `max_i S_i / min_i S_i` with the
/// slowdown `S_i = CT_sched_i / CT_fast_i` against the program alone "with
/// all the fast cores available", over `(T_M, T_fast)` pairs. We read
/// CT_fast as the program alone on an all-fast machine of the same core
/// count (T_SB): a baseline no policy's choices affect, unlike the
/// same-configuration `T_alone` of [`unfairness`] (colab-tpds).
pub fn propsp_unfairness(pairs: &[(f64, f64)]) -> Result<f64> {
    unfairness(pairs)
}

/// Slowdown of one program caused by co-scheduling: `T_M / T_alone`, where
/// `T_alone` is its time alone on the same hardware configuration.
///
/// This is the convention used throughout this crate: slowdown is normally
/// `>= 1` (co-runners make a program slower). The tpds text words it the other
/// way round (`T_alone / T_M`); [`unfairness`] is `max / min` of the slowdowns,
/// which is the same number under either convention because inverting every
/// slowdown swaps max and min.
pub fn slowdown(t_m: f64, t_alone: f64) -> Result<f64> {
    let (t_m, t_alone) = check_pair("slowdown", 0, (t_m, t_alone))?;
    finite("slowdown", t_m / t_alone)
}

/// Unfairness (tpds §6.1, after Saez et al.): `max_i S_i / min_i S_i` with the
/// slowdown `S_i = T_M_i / T_alone_i` (see [`slowdown`] for the orientation),
/// over `(T_M, T_alone)` pairs. Always `>= 1`; 1 means every program was slowed
/// down by the same factor. Lower is better.
pub fn unfairness(pairs: &[(f64, f64)]) -> Result<f64> {
    non_empty("unfairness", pairs)?;
    let mut max = 0.0f64;
    let mut min = f64::INFINITY;
    for (i, &p) in pairs.iter().enumerate() {
        let (t_m, t_alone) = check_pair("unfairness", i, p)?;
        let s = finite("unfairness", t_m / t_alone)?;
        // A ratio of two positive normal floats can underflow to 0; treat it as
        // a non-representable result rather than dividing by zero below.
        if s <= 0.0 {
            return Err(MetricError::NonFiniteResult { what: "unfairness" });
        }
        max = max.max(s);
        min = min.min(s);
    }
    finite("unfairness", max / min)
}

/// Arithmetic mean of finite values.
pub fn mean(values: &[f64]) -> Result<f64> {
    non_empty("mean", values)?;
    let mut sum = 0.0;
    for (index, &value) in values.iter().enumerate() {
        if !value.is_finite() {
            return Err(MetricError::InvalidValue {
                what: "mean",
                index,
                value,
                requirement: "value must be finite",
            });
        }
        sum += value;
    }
    finite("mean", sum / values.len() as f64)
}

/// Geometric mean of finite, strictly positive values (the papers' "Geo-mean"
/// of normalised results). Computed in log space so long lists cannot overflow.
pub fn geomean(values: &[f64]) -> Result<f64> {
    non_empty("geomean", values)?;
    let mut log_sum = 0.0;
    for (index, &value) in values.iter().enumerate() {
        if !(value.is_finite() && value > 0.0) {
            return Err(MetricError::InvalidValue {
                what: "geomean",
                index,
                value,
                requirement: "value must be finite and strictly positive",
            });
        }
        log_sum += value.ln();
    }
    finite("geomean", (log_sum / values.len() as f64).exp())
}

/// `value / baseline`, e.g. a policy's H_ANTT or energy relative to CFS on the
/// same workload and configuration. `value` must be finite and `>= 0`
/// (energy may legitimately be 0 in a degenerate run), `baseline` finite and `> 0`.
pub fn normalise(value: f64, baseline: f64) -> Result<f64> {
    if !(value.is_finite() && value >= 0.0) {
        return Err(MetricError::InvalidValue {
            what: "normalise.value",
            index: 0,
            value,
            requirement: "value must be finite and non-negative",
        });
    }
    if !(baseline.is_finite() && baseline > 0.0) {
        return Err(MetricError::InvalidValue {
            what: "normalise.baseline",
            index: 0,
            value: baseline,
            requirement: "baseline must be finite and strictly positive",
        });
    }
    finite("normalise", value / baseline)
}

/// Energy-delay product `energy_j * delay_s` (J·s), a common single figure of
/// merit when comparing the energy-aware extension against plain policies.
pub fn energy_delay_product(energy_j: f64, delay_s: f64) -> Result<f64> {
    for (index, value) in [energy_j, delay_s].into_iter().enumerate() {
        if !(value.is_finite() && value >= 0.0) {
            return Err(MetricError::InvalidValue {
                what: "energy_delay_product",
                index,
                value,
                requirement: "energy and delay must be finite and non-negative",
            });
        }
    }
    finite("energy_delay_product", energy_j * delay_s)
}

/// Share of the fast cores' time (`fast_cores` x `makespan_ns`) they sat
/// idle while slower cores ran threads (`fast_idle_ns`, core-ns: the
/// simulator's `fast_idle_slow_busy_ns`): 0 when a scheduler never leaves a
/// fast core idle while a slow one works, 1 when the fast cores sat idle
/// all run while at least as many slow cores worked. None on a machine with
/// no fast core or a run of no length (the share is undefined there).
pub fn fast_idle_share(fast_idle_ns: u64, makespan_ns: u64, fast_cores: u32) -> Option<f64> {
    let whole = makespan_ns as f64 * f64::from(fast_cores);
    (whole > 0.0).then(|| (fast_idle_ns as f64 / whole).min(1.0))
}

/// Nanoseconds (the simulator's time unit) to seconds.
pub fn ns_to_s(ns: u64) -> f64 {
    ns as f64 * 1e-9
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1.0)
    }

    #[test]
    fn two_programs_by_hand() {
        // T_M = [2, 3], T_SB = [1, 1]: ratios 2 and 3.
        let pairs = zip_times(&[2.0, 3.0], &[1.0, 1.0]).unwrap();
        assert!(close(h_antt(&pairs).unwrap(), 2.5));
        // 1/2 + 1/3 = 5/6
        assert!(close(h_stp(&pairs).unwrap(), 5.0 / 6.0));
    }

    #[test]
    fn fast_idle_share_by_hand() {
        // Two fast cores over 10 ms: 5 ms of one core idle is a quarter.
        assert_eq!(fast_idle_share(5_000_000, 10_000_000, 2), Some(0.25));
        assert_eq!(fast_idle_share(0, 10_000_000, 2), Some(0.0));
        // Undefined without fast cores or time, never above the whole.
        assert_eq!(fast_idle_share(5, 0, 2), None);
        assert_eq!(fast_idle_share(5, 10, 0), None);
        assert_eq!(fast_idle_share(30, 10, 2), Some(1.0));
    }

    #[test]
    fn mixed_baselines_by_hand() {
        // ratios 10/4 = 2.5, 6/3 = 2, 9/9 = 1
        let pairs = [(10.0, 4.0), (6.0, 3.0), (9.0, 9.0)];
        assert!(close(h_antt(&pairs).unwrap(), 5.5 / 3.0));
        // 0.4 + 0.5 + 1 = 1.9
        assert!(close(h_stp(&pairs).unwrap(), 1.9));
    }

    #[test]
    fn h_ntt_single_program() {
        assert!(close(h_ntt(2.73, 1.0).unwrap(), 2.73));
        assert!(close(h_ntt(113.0, 100.0).unwrap(), 1.13));
        // For a single program H_ANTT, H_NTT and 1/H_STP coincide.
        let p = [(7.0, 5.0)];
        assert!(close(h_antt(&p).unwrap(), h_ntt(7.0, 5.0).unwrap()));
        assert!(close(h_stp(&p).unwrap(), 1.0 / h_ntt(7.0, 5.0).unwrap()));
    }

    #[test]
    fn unfairness_by_hand() {
        // slowdowns 2.0, 1.5, 3.0 -> 3.0 / 1.5 = 2
        let pairs = [(4.0, 2.0), (3.0, 2.0), (9.0, 3.0)];
        assert!(close(unfairness(&pairs).unwrap(), 2.0));
        // Equal slowdowns are perfectly fair.
        assert!(close(unfairness(&[(2.0, 1.0), (6.0, 3.0)]).unwrap(), 1.0));
        assert!(close(unfairness(&[(5.0, 4.0)]).unwrap(), 1.0));
        // Orientation does not matter: inverting every slowdown gives the same value.
        let inverted: Vec<_> = pairs.iter().map(|&(a, b)| (b, a)).collect();
        assert!(close(unfairness(&inverted).unwrap(), 2.0));
        assert!(close(slowdown(4.0, 2.0).unwrap(), 2.0));
    }

    #[test]
    fn aggregate_speedup_by_hand() {
        // Two programs 3x and 1.5x faster than on slow cores alone:
        // (3 - 1) + (1.5 - 1) = 2.5.
        let pairs = [(2.0, 6.0), (4.0, 6.0)];
        assert!(close(aggregate_speedup(&pairs).unwrap(), 2.5));
        // As slow as the slow cores alone: 0; slower: negative.
        assert!(close(aggregate_speedup(&[(5.0, 5.0)]).unwrap(), 0.0));
        assert!(close(aggregate_speedup(&[(10.0, 5.0)]).unwrap(), -0.5));
        assert!(aggregate_speedup(&[]).is_err());
        assert!(aggregate_speedup(&[(1.0, 0.0)]).is_err());
        // Prop-SP's unfairness: slowdowns 2 and 1.25 against T_fast -> 1.6.
        assert!(close(
            propsp_unfairness(&[(4.0, 2.0), (5.0, 4.0)]).unwrap(),
            1.6
        ));
    }

    #[test]
    fn means_by_hand() {
        assert!(close(mean(&[1.0, 2.0, 6.0]).unwrap(), 3.0));
        assert!(close(mean(&[-1.0, 1.0]).unwrap(), 0.0));
        assert!(close(geomean(&[1.0, 4.0]).unwrap(), 2.0));
        assert!(close(geomean(&[2.0, 8.0, 4.0]).unwrap(), 4.0));
        assert!(close(geomean(&[0.5, 2.0]).unwrap(), 1.0));
        assert!(close(normalise(0.9, 1.2).unwrap(), 0.75));
        assert!(close(normalise(0.0, 1.2).unwrap(), 0.0));
        assert!(close(energy_delay_product(2.0, 0.5).unwrap(), 1.0));
        assert!(close(ns_to_s(1_500_000_000), 1.5));
    }

    #[test]
    fn empty_inputs() {
        assert_eq!(h_antt(&[]), Err(MetricError::Empty { what: "h_antt" }));
        assert_eq!(h_stp(&[]), Err(MetricError::Empty { what: "h_stp" }));
        assert_eq!(
            unfairness(&[]),
            Err(MetricError::Empty { what: "unfairness" })
        );
        assert_eq!(mean(&[]), Err(MetricError::Empty { what: "mean" }));
        assert_eq!(geomean(&[]), Err(MetricError::Empty { what: "geomean" }));
    }

    #[test]
    fn invalid_times() {
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            assert!(matches!(
                h_antt(&[(1.0, 1.0), (bad, 1.0)]),
                Err(MetricError::InvalidTime { index: 1, .. })
            ));
            assert!(matches!(
                h_stp(&[(1.0, bad)]),
                Err(MetricError::InvalidTime { index: 0, .. })
            ));
            assert!(matches!(
                unfairness(&[(1.0, 1.0), (2.0, 1.0), (1.0, bad)]),
                Err(MetricError::InvalidTime { index: 2, .. })
            ));
            assert!(h_ntt(bad, 1.0).is_err());
            assert!(h_ntt(1.0, bad).is_err());
            assert!(slowdown(1.0, bad).is_err());
        }
    }

    #[test]
    fn invalid_values() {
        assert!(matches!(
            mean(&[1.0, f64::NAN]),
            Err(MetricError::InvalidValue { index: 1, .. })
        ));
        for bad in [0.0, -2.0, f64::NAN, f64::INFINITY] {
            assert!(matches!(
                geomean(&[1.0, bad]),
                Err(MetricError::InvalidValue { index: 1, .. })
            ));
            assert!(normalise(1.0, bad).is_err());
        }
        assert!(normalise(-1.0, 1.0).is_err());
        assert!(normalise(f64::NAN, 1.0).is_err());
        assert!(energy_delay_product(-1.0, 1.0).is_err());
        assert!(energy_delay_product(1.0, f64::INFINITY).is_err());
    }

    #[test]
    fn length_mismatch() {
        assert_eq!(
            zip_times(&[1.0, 2.0], &[1.0]),
            Err(MetricError::LengthMismatch { left: 2, right: 1 })
        );
    }

    #[test]
    fn overflow_is_an_error_not_inf() {
        let big = f64::MAX;
        let tiny = f64::MIN_POSITIVE;
        assert_eq!(
            h_ntt(big, tiny),
            Err(MetricError::NonFiniteResult { what: "h_ntt" })
        );
        assert!(matches!(
            h_antt(&[(big, 1.0), (big, 1.0)]),
            Err(MetricError::NonFiniteResult { .. })
        ));
        assert!(matches!(
            unfairness(&[(big, 1.0), (tiny, 1.0)]),
            Err(MetricError::NonFiniteResult { .. })
        ));
        assert!(matches!(
            mean(&[big, big]),
            Err(MetricError::NonFiniteResult { .. })
        ));
        // Log-space geomean survives values whose product would overflow.
        assert!(close(geomean(&[big, big]).unwrap(), big));
    }

    #[test]
    fn errors_have_readable_messages() {
        let e = h_antt(&[(1.0, 0.0)]).unwrap_err().to_string();
        assert!(
            e.contains("h_antt[0]") && e.contains("strictly positive"),
            "{e}"
        );
        let e = zip_times(&[1.0], &[]).unwrap_err().to_string();
        assert!(e.contains("mismatch"), "{e}");
    }

    // Realistic turnaround times: 1 µs .. 1000 s in ns.
    fn time() -> impl Strategy<Value = f64> {
        1e3f64..1e12
    }

    fn pairs() -> impl Strategy<Value = Vec<(f64, f64)>> {
        prop::collection::vec((time(), time()), 1..12)
    }

    proptest! {
        #[test]
        fn antt_ge_n_over_stp(p in pairs()) {
            // H_ANTT is the arithmetic mean of x_i = T_M/T_SB and n/H_STP their
            // harmonic mean, so AM >= HM.
            let n = p.len() as f64;
            let antt = h_antt(&p).unwrap();
            let stp = h_stp(&p).unwrap();
            prop_assert!(antt >= n / stp * (1.0 - 1e-12), "antt {antt} stp {stp} n {n}");
        }

        #[test]
        fn unfairness_at_least_one(p in pairs()) {
            prop_assert!(unfairness(&p).unwrap() >= 1.0);
        }

        #[test]
        fn scaling_t_m(p in pairs(), k in 0.01f64..100.0) {
            let scaled: Vec<_> = p.iter().map(|&(m, sb)| (m * k, sb)).collect();
            let antt = h_antt(&p).unwrap();
            let stp = h_stp(&p).unwrap();
            prop_assert!((h_antt(&scaled).unwrap() - antt * k).abs() <= 1e-9 * antt * k);
            prop_assert!((h_stp(&scaled).unwrap() - stp / k).abs() <= 1e-9 * stp / k);
            // Unfairness only depends on relative slowdowns.
            let u = unfairness(&p).unwrap();
            prop_assert!((unfairness(&scaled).unwrap() - u).abs() <= 1e-9 * u);
        }

        #[test]
        fn geomean_between_min_and_max(v in prop::collection::vec(1e-6f64..1e6, 1..20)) {
            let g = geomean(&v).unwrap();
            let lo = v.iter().cloned().fold(f64::INFINITY, f64::min);
            let hi = v.iter().cloned().fold(0.0, f64::max);
            prop_assert!(g >= lo * (1.0 - 1e-12) && g <= hi * (1.0 + 1e-12));
            // AM-GM
            prop_assert!(mean(&v).unwrap() >= g * (1.0 - 1e-12));
        }

        #[test]
        fn never_panics_on_arbitrary_floats(
            p in prop::collection::vec((any::<f64>(), any::<f64>()), 0..6)
        ) {
            let _ = h_antt(&p);
            let _ = h_stp(&p);
            let _ = unfairness(&p);
            let flat: Vec<f64> = p.iter().map(|x| x.0).collect();
            let _ = mean(&flat);
            let _ = geomean(&flat);
            if let Some(&(a, b)) = p.first() {
                let _ = h_ntt(a, b);
                let _ = normalise(a, b);
            }
        }
    }
}
