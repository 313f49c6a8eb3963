//! An asymmetric machine emulated on identical CPUs: each CPU is given a
//! core type of a topology, and compute retires work at that type's rate
//! for the phase's memory fraction ([`colab_core::CoreType::rate`], the simulator's
//! performance model). A compute segment runs in chunks of
//! [`CHUNK_REF_US`] of reference work and asks which CPU it is on before
//! each chunk, so a thread migrated mid-segment continues at its new CPU's
//! rate within one chunk.
//!
//! The kernel and the schedulers still see identical CPUs unless told
//! otherwise; in the test VM a test-only kernel option gives them the same
//! split (scripts/vm/kernel-patches/).

use colab_core::{CoreId, Topology};

/// Reference work per chunk, us: "every few tens of microseconds of work"
/// (a chunk on a core of rate 0.33 lasts 60 us; sched_getcpu costs well
/// under 1 us through the vDSO/rseq, under 1% of a chunk). Assumption.
pub const CHUNK_REF_US: f64 = 20.0;

/// Which core type each CPU emulates.
#[derive(Clone, Debug)]
pub struct Emulation {
    /// Indexed by CPU number: (compute rate, memory rate) of its core type;
    /// None for a CPU the topology does not cover.
    rates: Vec<Option<(f64, f64)>>,
    /// What was emulated, for reports.
    pub description: String,
}

#[derive(Debug, thiserror::Error)]
pub enum EmulationError {
    #[error("the topology has {cores} cores but {cpus} CPUs were given ({list:?}); give one CPU per core (--cpus)")]
    CountMismatch {
        cores: usize,
        cpus: usize,
        list: Vec<usize>,
    },
    #[error("CPU {0} is listed twice")]
    Duplicate(usize),
}

impl Emulation {
    /// Core `i` of `topo` (in its core order) runs on CPU `cpus[i]`.
    pub fn new(topo: &Topology, cpus: &[usize]) -> Result<Emulation, EmulationError> {
        if cpus.len() != topo.num_cores() {
            return Err(EmulationError::CountMismatch {
                cores: topo.num_cores(),
                cpus: cpus.len(),
                list: cpus.to_vec(),
            });
        }
        let mut rates = vec![None; cpus.iter().max().map_or(0, |&m| m + 1)];
        let mut parts = Vec::new();
        for (i, &cpu) in cpus.iter().enumerate() {
            if rates[cpu].is_some() {
                return Err(EmulationError::Duplicate(cpu));
            }
            let t = topo.core_type(CoreId(i as u16));
            rates[cpu] = Some((t.compute_rate, t.memory_rate));
            parts.push(format!("{cpu}={}", t.name));
        }
        Ok(Emulation {
            rates,
            description: format!("{} on CPUs {}", topo.name, parts.join(",")),
        })
    }

    /// Busy-loop time per unit of reference work on `cpu` in a phase with
    /// memory fraction `mem_frac`: 1 / rate. A CPU outside the emulation
    /// runs at the reference rate.
    pub fn cost(&self, cpu: usize, mem_frac: f64) -> f64 {
        match self.rates.get(cpu).copied().flatten() {
            Some((c, m)) => (1.0 - mem_frac) / c + mem_frac / m,
            None => 1.0,
        }
    }

    /// Runs `work_us` of reference work: `spin(iterations)` per chunk, at
    /// the cost of the CPU `cpu_now()` reports before each chunk. Returns
    /// the iterations spun.
    pub fn compute(
        &self,
        work_us: f64,
        mem_frac: f64,
        spins_per_us: f64,
        mut cpu_now: impl FnMut() -> usize,
        mut spin: impl FnMut(u64),
    ) -> u64 {
        let mut left = work_us;
        let mut total = 0;
        while left > 0.0 {
            let step = left.min(CHUNK_REF_US);
            let iters = (step * self.cost(cpu_now(), mem_frac) * spins_per_us) as u64;
            spin(iters);
            total += iters;
            left -= step;
        }
        total
    }
}

/// The CPU the calling thread runs on (sched_getcpu: the vDSO or rseq).
pub fn current_cpu() -> usize {
    // SAFETY: sched_getcpu has no arguments and no side effects.
    let c = unsafe { libc::sched_getcpu() };
    c.max(0) as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use colab_core::CoreOrder;

    fn two_b_two_s() -> Topology {
        Topology::named("2B2S", CoreOrder::BigFirst).unwrap()
    }

    #[test]
    fn little_cpus_cost_the_inverse_of_their_rate() {
        let t = two_b_two_s();
        let e = Emulation::new(&t, &[4, 5, 6, 7]).unwrap();
        let big = t.core_type(CoreId(0));
        let little = t.core_type(CoreId(3));
        for m in [0.0, 0.3, 1.0] {
            assert!((e.cost(4, m) - 1.0 / big.rate(m)).abs() < 1e-12);
            assert!((e.cost(7, m) - 1.0 / little.rate(m)).abs() < 1e-12);
            assert!(e.cost(7, m) > e.cost(4, m));
        }
        // Not emulated: reference speed.
        assert_eq!(e.cost(0, 0.5), 1.0);
        assert_eq!(e.cost(99, 0.5), 1.0);
        assert!(e.description.contains("4=") && e.description.contains("7="));
    }

    #[test]
    fn a_migration_mid_segment_changes_the_rate_from_the_next_chunk() {
        let t = two_b_two_s();
        let e = Emulation::new(&t, &[0, 1, 2, 3]).unwrap();
        let spins = 100.0;
        // 100 us of core-bound work: five 20 us chunks. Alone on big CPU 0
        // and alone on little CPU 3:
        let on_big = e.compute(100.0, 0.0, spins, || 0, |_| {});
        let on_little = e.compute(100.0, 0.0, spins, || 3, |_| {});
        let ratio = on_little as f64 / on_big as f64;
        let s = 1.0 / t.core_type(CoreId(3)).rate(0.0);
        assert!((ratio - s).abs() < 1e-3, "{ratio} vs {s}");
        // Two chunks on the big core, then moved to the little one.
        let mut calls = 0;
        let moved = e.compute(
            100.0,
            0.0,
            spins,
            || {
                calls += 1;
                if calls <= 2 {
                    0
                } else {
                    3
                }
            },
            |_| {},
        );
        let expect = (2.0 * 20.0 * spins) as u64 + 3 * (20.0 * s * spins) as u64;
        assert_eq!(moved, expect);
        assert_eq!(calls, 5);
    }

    #[test]
    fn bad_cpu_lists_are_errors() {
        let t = two_b_two_s();
        let e = Emulation::new(&t, &[0, 1, 2]).unwrap_err();
        assert!(e.to_string().contains("4 cores but 3 CPUs"), "{e}");
        let e = Emulation::new(&t, &[0, 1, 2, 2]).unwrap_err();
        assert!(e.to_string().contains("CPU 2 is listed twice"), "{e}");
    }
}
