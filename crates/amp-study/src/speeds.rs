//! Each CPU's measured speed: the busy loop the workloads compute with
//! (colab_native::spin), run pinned to one CPU at a time. This is the
//! core-bound speed the workloads see, measured, where the detector
//! (scx_colab_user::detect) only reads what sysfs claims.

use anyhow::{Context, Result};
use scx_colab_user::detect::Machine;

/// One CPU's busy-loop speed, iterations per microsecond.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CpuSpeed {
    pub cpu: usize,
    pub spins_per_us: f64,
}

/// Measures every CPU of `cpus`, one after the other (about 0.35 s each;
/// colab_native::calibrate_spin warms the CPU up first), on a thread of its
/// own so the caller's CPU mask is left alone.
pub fn measure(cpus: &[usize], mut progress: impl FnMut(usize)) -> Result<Vec<CpuSpeed>> {
    let mut out = Vec::with_capacity(cpus.len());
    for &cpu in cpus {
        let c = std::thread::scope(|s| {
            s.spawn(|| -> Result<f64> {
                colab_native::set_affinity(&[cpu])
                    .with_context(|| format!("pinning the speed probe to CPU {cpu}"))?;
                Ok(colab_native::calibrate_spin().spins_per_us)
            })
            .join()
            .expect("the speed probe does not panic")
        })?;
        out.push(CpuSpeed {
            cpu,
            spins_per_us: c,
        });
        progress(cpu);
    }
    Ok(out)
}

/// One detected core type's measured speed, relative to the fastest CPU.
#[derive(Clone, Debug, PartialEq)]
pub struct TypeSpeed {
    /// Index in `Machine::types` (0: the slowest by sysfs).
    pub tier: usize,
    pub cpus: Vec<usize>,
    /// Mean, slowest and fastest CPU of the type, relative to the fastest CPU measured.
    pub mean: f64,
    pub min: f64,
    pub max: f64,
}

/// Groups the measured speeds by the detector's core types.
pub fn by_type(m: &Machine, speeds: &[CpuSpeed]) -> Vec<TypeSpeed> {
    let top = speeds.iter().map(|s| s.spins_per_us).fold(0.0f64, f64::max);
    m.types
        .iter()
        .enumerate()
        .filter_map(|(tier, t)| {
            let rel: Vec<f64> = speeds
                .iter()
                .filter(|s| t.cpus.contains(&s.cpu))
                .map(|s| s.spins_per_us / top)
                .collect();
            if rel.is_empty() || top <= 0.0 {
                return None;
            }
            Some(TypeSpeed {
                tier,
                cpus: t.cpus.clone(),
                mean: rel.iter().sum::<f64>() / rel.len() as f64,
                min: rel.iter().copied().fold(f64::MAX, f64::min),
                max: rel.iter().copied().fold(0.0, f64::max),
            })
        })
        .collect()
}

/// Where measurement and detection disagree: a type measured not faster
/// than the type below it (by `gap`, relative), or a type whose CPUs differ
/// by more than `gap`. Each a sentence for the report.
pub fn disagreements(types: &[TypeSpeed], gap: f64) -> Vec<String> {
    let mut out = Vec::new();
    for w in types.windows(2) {
        let (lo, hi) = (&w[0], &w[1]);
        if hi.mean < lo.mean * (1.0 + gap) {
            out.push(format!(
                "core type {} (CPUs {}) is faster than type {} by sysfs, but measured {:.2} against {:.2}",
                hi.tier,
                scx_colab_user::detect::format_cpu_list(&hi.cpus),
                lo.tier,
                hi.mean,
                lo.mean
            ));
        }
    }
    for t in types {
        if t.max > t.min * (1.0 + gap) {
            out.push(format!(
                "the CPUs of core type {} ({}) differ in speed: {:.2} to {:.2}",
                t.tier,
                scx_colab_user::detect::format_cpu_list(&t.cpus),
                t.min,
                t.max
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use scx_colab_user::detect::{CoreType, Machine};

    fn machine(types: &[&[usize]]) -> Machine {
        Machine {
            cpus: Vec::new(),
            types: types
                .iter()
                .map(|c| CoreType {
                    cpus: c.to_vec(),
                    pmu: None,
                    capacity: (0, 0),
                })
                .collect(),
            source: None,
            pmu_lists: false,
            warnings: Vec::new(),
        }
    }

    fn speeds(v: &[f64]) -> Vec<CpuSpeed> {
        v.iter()
            .enumerate()
            .map(|(cpu, &s)| CpuSpeed {
                cpu,
                spins_per_us: s,
            })
            .collect()
    }

    #[test]
    fn types_are_measured_relative_to_the_fastest_cpu() {
        let m = machine(&[&[2, 3], &[0, 1]]);
        let t = by_type(&m, &speeds(&[400.0, 380.0, 100.0, 140.0]));
        assert_eq!(t.len(), 2);
        assert_eq!(t[0].cpus, [2, 3]);
        assert!((t[0].mean - 0.3).abs() < 1e-12);
        assert!((t[0].min - 0.25).abs() < 1e-12 && (t[0].max - 0.35).abs() < 1e-12);
        assert!((t[1].mean - 0.975).abs() < 1e-12);
        // Little CPUs 0.25 and 0.35 differ by 40%: reported; the order agrees.
        let d = disagreements(&t, 0.10);
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(d[0].contains("core type 0 (2-3) differ in speed"), "{d:?}");
    }

    #[test]
    fn a_type_measured_no_faster_than_the_one_below_is_reported() {
        // sysfs says CPUs 0-1 are faster (the i7-13650HX case is the other
        // way round: equal by sysfs, different when measured).
        let m = machine(&[&[2, 3], &[0, 1]]);
        let t = by_type(&m, &speeds(&[100.0, 100.0, 104.0, 104.0]));
        let d = disagreements(&t, 0.10);
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(d[0].contains("measured 0.96 against 1.00"), "{d:?}");
    }

    #[test]
    fn a_real_cpu_has_a_positive_speed() {
        let s = measure(&[0], |_| {}).unwrap();
        assert_eq!(s[0].cpu, 0);
        assert!(s[0].spins_per_us > 0.0);
        assert!(measure(&[100_000], |_| {}).is_err());
    }
}
