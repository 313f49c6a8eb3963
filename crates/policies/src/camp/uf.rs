//! The utility factor (camp-tocs12 section 3) and the utility classes built
//! on it (section 4.1.1, Table II).
//!
//! Both forms of the UF are public so that an analytic study can compare
//! them directly; the scheduler uses the approximation with k = 2, as the
//! paper's implementation does (section 3.2).

/// The exponent k of the approximate UF (camp-tocs12 section 3.2: "using
/// k = 2 makes it possible to approximate the Analytical_UF reasonably well",
/// and it is "the actual value we used for our experiments").
pub const UF_K: u32 = 2;

/// Number of iterations of BusyFCs' loop (Algorithm 1) for a parallel phase:
/// floor((N_threads - 1) / N_FC) + 1 (camp-tocs12 section 3.1). `threads` is
/// at least 1 and `fast_cores` at least 1 here.
fn busyfcs_iterations(threads: usize, fast_cores: usize) -> u64 {
    ((threads - 1) / fast_cores) as u64 + 1
}

/// Analytical UF, camp-tocs12 eq. (1), derived in the appendix as eq. (10):
///
/// `UF = SF / ((1 - 1/SF)^floor((N_threads - 1) / N_FC) * (1 - SF) + SF)`
///
/// the speedup of a balanced application with `threads` runnable threads of
/// speedup factor `sf` under BusyFCs on a machine with `fast_cores` fast
/// cores, relative to running on slow cores only.
///
/// The exponent is the floor, as in eq. (1) and in every step of the
/// appendix's derivation (N_iter - 1 with N_iter = floor(...) + 1); the
/// ceiling printed in eq. (10) contradicts the line just above it and is read
/// as a typesetting slip.
///
/// Defined for `sf >= 1` (a fast core is never slower); `threads == 0` is
/// treated as 1 and `fast_cores == 0` gives 1 (no fast core, no speedup).
pub fn uf_analytical(sf: f64, threads: usize, fast_cores: usize) -> f64 {
    if fast_cores == 0 || sf <= 0.0 {
        return 1.0;
    }
    let e = busyfcs_iterations(threads.max(1), fast_cores) - 1;
    // Integer exponent: the kernel computes it with a loop (section 3.2).
    let f_fc = (1.0 - 1.0 / sf).powi(e.min(i32::MAX as u64) as i32);
    sf / (f_fc * (1.0 - sf) + sf)
}

/// Approximate UF, camp-tocs12 eq. (2):
///
/// `UF = (SF - 1) / (floor((N_threads - 1) / N_FC) + 1)^k + 1`
///
/// Same conventions as [`uf_analytical`]; the scheduler uses `k = UF_K`.
pub fn uf_approx(sf: f64, threads: usize, fast_cores: usize, k: u32) -> f64 {
    if fast_cores == 0 {
        return 1.0;
    }
    let it = busyfcs_iterations(threads.max(1), fast_cores) as f64;
    (sf - 1.0) / it.powi(k.min(i32::MAX as u32) as i32) + 1.0
}

/// Which UF formula the scheduler evaluates.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum UfForm {
    /// Eq. (1) / (10).
    Analytical,
    /// Eq. (2) with the given k.
    Approx { k: u32 },
}

impl UfForm {
    pub fn eval(self, sf: f64, threads: usize, fast_cores: usize) -> f64 {
        match self {
            UfForm::Analytical => uf_analytical(sf, threads, fast_cores),
            UfForm::Approx { k } => uf_approx(sf, threads, fast_cores, k),
        }
    }
}

/// Utility classes of camp-tocs12 Table II, plus SEQUENTIAL_BOOSTED (section
/// 4.1.1), in increasing order of priority for fast cores.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum UtilityClass {
    VeryLow,
    Low,
    Medium,
    High,
    /// A high-utility thread running a parallel application's sequential
    /// phase, for at most amp_boost_ticks.
    SequentialBoosted,
}

/// The three utility thresholds of Table II, as fractions of the machine's
/// largest possible gain `SF_max - 1` (a UF lies in [1, SF_max]).
///
/// The paper gives no numbers: thresholds are "different ... for each
/// platform", chosen to minimise class mispredictions on its benchmark sets
/// (section 4.1.1). Assumption: we make them per platform the same way for
/// every machine, by scaling with the platform's speedup range, and fix the
/// fractions once for all workloads:
/// - upper 2/3 and medium 1/3: the range in thirds, the same split the
///   project's COLAB labeller uses for speedup labels, so that CPU-bound
///   serial code is HIGH and mildly memory-bound serial code MEDIUM (the
///   paper's FFTW serial phase drops from boosted to MEDIUM, section 5.1.2);
/// - lower 0.1: "UF ~ 1" (VERY_LOW, highly parallel phases) means a gain
///   below a tenth of what the platform can give. With 2 fast cores and a
///   CPU-bound application, up to 6 runnable threads (two or three BusyFCs
///   iterations) stay LOW, as "mildly parallel applications ... typically
///   fall into the LOW and VERY_LOW utility classes", and 7 or more are
///   VERY_LOW.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Thresholds {
    pub upper: f64,
    pub medium: f64,
    pub lower: f64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            upper: 2.0 / 3.0,
            medium: 1.0 / 3.0,
            lower: 0.1,
        }
    }
}

/// Thresholds as UF values for a machine whose largest speedup factor is `sf_max`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UfCuts {
    pub upper: f64,
    pub medium: f64,
    pub lower: f64,
}

impl Thresholds {
    pub fn cuts(&self, sf_max: f64) -> UfCuts {
        let g = (sf_max - 1.0).max(0.0);
        UfCuts {
            upper: 1.0 + self.upper * g,
            medium: 1.0 + self.medium * g,
            lower: 1.0 + self.lower * g,
        }
    }
}

impl UfCuts {
    /// Table II.
    pub fn classify(&self, uf: f64) -> UtilityClass {
        if uf >= self.upper {
            UtilityClass::High
        } else if uf >= self.medium {
            UtilityClass::Medium
        } else if uf >= self.lower {
            UtilityClass::Low
        } else {
            UtilityClass::VeryLow
        }
    }
}
