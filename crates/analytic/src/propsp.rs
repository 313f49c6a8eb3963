//! Prop-SP's motivation study (Section 2 of the Prop-SP paper,
//! `/work/shared/papers/propsp.txt`): aggregate speedup (ASP) and unfairness
//! of five schedulers for the synthetic workloads of Table 1 on an AMP with
//! two fast and two slow cores, from the analytical formulas of Table 2.
//!
//! A scheduler is described by the fast-core time share `F_i` (0..1) it gives
//! each single-threaded application over an interval. Eq. 3 turns it into the
//! fraction `f_i` of the application's instructions completed on a fast core
//! and Table 2 gives, with `SF_i` the application's speedup factor:
//!
//! ```text
//! ASP        = sum_i ( 1 / (f_i / SF_i + (1 - f_i)) - 1 )
//! Slowdown_i = f_i + SF_i (1 - f_i)
//! Unfairness = max_i Slowdown_i / min_i Slowdown_i
//! ```
//!
//! The schedulers' shares are subject to the capacity of the machine: the
//! scheduler is work-conserving with 4 threads on 4 cores, so the fast cores
//! are always busy: `sum_i F_i = N_FC` and `0 <= F_i <= 1` (one thread uses at
//! most one core).
//!
//! ## Solving the two theoretical schedulers
//!
//! Substituting eq. 3 into Table 2 (algebra in the tests) gives, with
//! `x_i = 1 / Slowdown_i`:
//!
//! ```text
//! ASP = sum_i (SF_i x_i - 1),   F_i = (SF_i x_i - 1) / (SF_i - 1),
//! Unfairness <= U  <=>  x_i <= U x_j for every i, j
//! ```
//!
//! so for a fixed bound `U` both the objective and every constraint (capacity,
//! `0 <= F_i <= 1`, unfairness) are *linear* in `x`. "Maximum ASP with
//! unfairness at most U" is then a small linear program, solved exactly by
//! vertex enumeration (see `lp.rs`). Opt-ASP-Ref is that LP with `U` = the
//! unfairness of Prop-SP. Opt-Unfairness first finds the lowest feasible `U`
//! by bisection on the LP's feasibility (to 1e-12 relative), then takes the
//! maximum-ASP allocation at that `U` ("the maximum ASP value attainable for
//! the optimal unfairness", Section 2).

use std::path::Path;

use crate::lp::{self, Row};
use crate::output::{md_table, prepare_dir, text_table, write_atomic, StudyFiles};
use crate::plot;
use crate::AnalyticError;

/// Fast cores: Section 2, "an AMP system consisting on two fast cores (FC)
/// and two slow cores (SC)".
pub const FAST_CORES: u32 = 2;
/// Slow cores: Section 2 (see [`FAST_CORES`]). Only used to check the
/// work-conserving assumption (threads >= cores keeps the fast cores busy).
pub const SLOW_CORES: u32 = 2;
/// The exact solver enumerates vertices; beyond this many applications that
/// gets slow (the paper's workloads have 4).
pub const MAX_APPS: usize = 5;

/// A workload of Table 1: four single-threaded applications' speedup factors.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Workload {
    pub name: &'static str,
    pub sfs: [f64; 4],
}

/// Table 1 of the Prop-SP paper ("Synthetic workloads"), SF1..SF4 per row.
pub const TABLE1: [Workload; 9] = [
    Workload {
        name: "W1",
        sfs: [3.4, 3.4, 1.2, 1.2],
    },
    Workload {
        name: "W2",
        sfs: [3.4, 3.4, 2.3, 2.3],
    },
    Workload {
        name: "W3",
        sfs: [2.3, 2.3, 1.9, 1.9],
    },
    Workload {
        name: "W4",
        sfs: [3.4, 3.4, 2.7, 2.7],
    },
    Workload {
        name: "W5",
        sfs: [3.4, 3.4, 3.4, 3.4],
    },
    Workload {
        name: "W6",
        sfs: [2.5, 2.1, 1.6, 1.2],
    },
    Workload {
        name: "W7",
        sfs: [3.0, 2.1, 2.1, 2.1],
    },
    Workload {
        name: "W8",
        sfs: [3.4, 3.0, 2.5, 2.1],
    },
    Workload {
        name: "W9",
        sfs: [2.9, 2.5, 2.1, 1.2],
    },
];

/// Eq. 3: fraction of an application's instructions completed on a fast
/// core when it gets fast-core time share `share` (F_app):
/// `f = 1 / ((1/SF) (1/F - 1) + 1)`; `F = 0` gives `f = 0` (the limit).
pub fn fraction_on_fast(sf: f64, share: f64) -> f64 {
    if share <= 0.0 {
        return 0.0;
    }
    1.0 / ((1.0 / sf) * (1.0 / share - 1.0) + 1.0)
}

/// Table 2: one application's slowdown against running alone with all fast
/// cores, `f + SF (1 - f)`.
pub fn slowdown(sf: f64, f: f64) -> f64 {
    f + sf * (1.0 - f)
}

/// Table 2: aggregate speedup `sum_i (1 / (f_i / SF_i + (1 - f_i)) - 1)`,
/// from the instruction fractions `f` (eq. 3), not the time shares.
pub fn aggregate_speedup(sfs: &[f64], f: &[f64]) -> f64 {
    sfs.iter()
        .zip(f)
        .map(|(&sf, &fi)| 1.0 / (fi / sf + (1.0 - fi)) - 1.0)
        .sum()
}

/// Table 2: `max slowdown / min slowdown`, from the instruction fractions.
pub fn unfairness(sfs: &[f64], f: &[f64]) -> f64 {
    let s: Vec<f64> = sfs
        .iter()
        .zip(f)
        .map(|(&sf, &fi)| slowdown(sf, fi))
        .collect();
    let max = s.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let min = s.iter().copied().fold(f64::INFINITY, f64::min);
    max / min
}

/// ASP and unfairness of fast-core time shares (eq. 3, then Table 2).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Metrics {
    pub asp: f64,
    pub unfairness: f64,
}

/// Evaluates time shares `F_i` with eq. 3 and Table 2.
pub fn evaluate(sfs: &[f64], shares: &[f64]) -> Metrics {
    let f: Vec<f64> = sfs
        .iter()
        .zip(shares)
        .map(|(&sf, &s)| fraction_on_fast(sf, s))
        .collect();
    Metrics {
        asp: aggregate_speedup(sfs, &f),
        unfairness: unfairness(sfs, &f),
    }
}

/// The five schedulers of Fig. 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scheduler {
    /// All fast cores to the N_FC applications with the highest SF (F = 1),
    /// the rest on slow cores (F = 0).
    Hsp,
    /// Fast cores shared equally: F = N_FC / n.
    Rr,
    /// Fast-core share proportional to the net speedup SF - 1.
    PropSp,
    /// Lowest unfairness; among those allocations, the highest ASP.
    OptUnfairness,
    /// Highest ASP with unfairness no greater than Prop-SP's.
    OptAspRef,
}

impl Scheduler {
    pub const ALL: [Scheduler; 5] = [
        Scheduler::Hsp,
        Scheduler::Rr,
        Scheduler::PropSp,
        Scheduler::OptUnfairness,
        Scheduler::OptAspRef,
    ];

    /// The paper's name.
    pub fn name(self) -> &'static str {
        match self {
            Scheduler::Hsp => "HSP",
            Scheduler::Rr => "RR",
            Scheduler::PropSp => "Prop-SP",
            Scheduler::OptUnfairness => "Opt-Unfairness",
            Scheduler::OptAspRef => "Opt-ASP-Ref",
        }
    }
}

/// SFs this close to 1 count as "no speedup" (the app's slowdown is 1 and its
/// share does not matter).
const UNIT_SF: f64 = 1e-12;

fn check(sfs: &[f64], n_fc: u32) -> Result<(), AnalyticError> {
    let bad = |m: String| Err(AnalyticError::Invalid(m));
    if sfs.is_empty() || sfs.len() > MAX_APPS {
        return bad(format!(
            "need 1 to {MAX_APPS} applications, got {}",
            sfs.len()
        ));
    }
    if let Some(sf) = sfs.iter().find(|s| !s.is_finite() || **s < 1.0) {
        return bad(format!("speedup factor {sf} is not a number >= 1"));
    }
    if n_fc == 0 || n_fc as usize > sfs.len() {
        return bad(format!(
            "{n_fc} fast cores for {} single-threaded applications: need 1..={} so the fast cores stay busy",
            sfs.len(),
            sfs.len()
        ));
    }
    Ok(())
}

/// Fast-core time shares of `scheduler` for applications with speedup
/// factors `sfs` on `n_fc` fast cores.
pub fn shares(scheduler: Scheduler, sfs: &[f64], n_fc: u32) -> Result<Vec<f64>, AnalyticError> {
    check(sfs, n_fc)?;
    match scheduler {
        Scheduler::Hsp => Ok(hsp(sfs, n_fc)),
        Scheduler::Rr => Ok(vec![f64::from(n_fc) / sfs.len() as f64; sfs.len()]),
        Scheduler::PropSp => Ok(prop_sp(sfs, n_fc)),
        Scheduler::OptUnfairness => {
            let u = min_unfairness(sfs, n_fc)?;
            max_asp_within(sfs, n_fc, u)
        }
        Scheduler::OptAspRef => {
            let reference = evaluate(sfs, &prop_sp(sfs, n_fc)).unfairness;
            max_asp_within(sfs, n_fc, reference)
        }
    }
}

/// Highest SFs first; ties keep the workload's order (tied applications are
/// interchangeable, so the metrics do not depend on the choice).
fn hsp(sfs: &[f64], n_fc: u32) -> Vec<f64> {
    let mut order: Vec<usize> = (0..sfs.len()).collect();
    order.sort_by(|&a, &b| sfs[b].total_cmp(&sfs[a]));
    let mut f = vec![0.0; sfs.len()];
    for &i in order.iter().take(n_fc as usize) {
        f[i] = 1.0;
    }
    f
}

/// `F_i = N_FC (SF_i - 1) / sum_j (SF_j - 1)` (Section 2; Algorithm 1 with
/// equal static weights). Assumption, not in the paper: a share above 1 (one
/// thread cannot use two cores) is capped at 1 and the excess shared among
/// the others in the same proportion; it never happens for Table 1. If no
/// application has any speedup the cores are shared equally.
fn prop_sp(sfs: &[f64], n_fc: u32) -> Vec<f64> {
    let n = sfs.len();
    let w: Vec<f64> = sfs.iter().map(|s| (s - 1.0).max(0.0)).collect();
    let mut f = vec![0.0; n];
    let mut capped = vec![false; n];
    let mut left = f64::from(n_fc);
    loop {
        let total: f64 = (0..n).filter(|&i| !capped[i]).map(|i| w[i]).sum();
        if total <= 0.0 {
            break;
        }
        let over: Vec<usize> = (0..n)
            .filter(|&i| !capped[i] && left * w[i] / total > 1.0)
            .collect();
        if over.is_empty() {
            for i in (0..n).filter(|&i| !capped[i]) {
                f[i] = left * w[i] / total;
            }
            left = 0.0;
            break;
        }
        for i in over {
            capped[i] = true;
            f[i] = 1.0;
            left -= 1.0;
        }
    }
    // Cores no weighted application can use go to the zero-weight ones.
    let idle: Vec<usize> = (0..n).filter(|&i| f[i] == 0.0).collect();
    if left > 1e-12 && !idle.is_empty() {
        let each = (left / idle.len() as f64).min(1.0);
        for i in idle {
            f[i] = each;
        }
    }
    f
}

/// The linear program of the module docs: maximise ASP subject to capacity,
/// `0 <= F_i <= 1` and unfairness <= `max_unfairness`, in the variables
/// `x_i = 1 / Slowdown_i` of the applications with SF > 1 (those with SF = 1
/// have slowdown 1 whatever their share, so they only absorb spare
/// fast-core time). Returns the time shares, or `None` if infeasible.
fn lp_max_asp(sfs: &[f64], n_fc: u32, max_unfairness: f64) -> Option<Vec<f64>> {
    let active: Vec<usize> = (0..sfs.len()).filter(|&i| sfs[i] > 1.0 + UNIT_SF).collect();
    let units = sfs.len() - active.len();
    let d = active.len();
    let u = max_unfairness;
    let mut rows = Vec::new();
    let unit_vec = |k: usize, v: f64| {
        let mut a = vec![0.0; d];
        a[k] = v;
        a
    };
    for (k, &i) in active.iter().enumerate() {
        // F_i <= 1  <=>  x_i <= 1;  F_i >= 0  <=>  x_i >= 1 / SF_i.
        rows.push(Row {
            a: unit_vec(k, 1.0),
            b: 1.0,
        });
        rows.push(Row {
            a: unit_vec(k, -1.0),
            b: -1.0 / sfs[i],
        });
        if units > 0 {
            // Unit apps have x = 1: 1 <= U x_i (x_i <= U * 1 always holds).
            rows.push(Row {
                a: unit_vec(k, -u),
                b: -1.0,
            });
        }
        for (l, _) in active.iter().enumerate().filter(|&(l, _)| l != k) {
            // x_k - U x_l <= 0.
            let mut a = unit_vec(k, 1.0);
            a[l] = -u;
            rows.push(Row { a, b: 0.0 });
        }
    }
    // Capacity: sum_i F_i = sum_i (SF_i x_i - 1) / (SF_i - 1) lies between
    // N_FC - (#unit apps) (they can take at most 1 each) and N_FC; without
    // unit apps it is the equality sum_i F_i = N_FC.
    let cap: Vec<f64> = active.iter().map(|&i| sfs[i] / (sfs[i] - 1.0)).collect();
    let offset: f64 = active.iter().map(|&i| 1.0 / (sfs[i] - 1.0)).sum();
    let hi = f64::from(n_fc);
    let lo = (hi - units as f64).max(0.0);
    let eq = (units == 0).then(|| Row {
        a: cap.clone(),
        b: hi + offset,
    });
    if units > 0 {
        rows.push(Row {
            a: cap.clone(),
            b: hi + offset,
        });
        rows.push(Row {
            a: cap.iter().map(|c| -c).collect(),
            b: -(lo + offset),
        });
    }

    let c: Vec<f64> = active.iter().map(|&i| sfs[i]).collect();
    let x = lp::maximize(&c, eq.as_ref(), &rows)?;
    let mut f = vec![0.0; sfs.len()];
    for (k, &i) in active.iter().enumerate() {
        f[i] = ((sfs[i] * x[k] - 1.0) / (sfs[i] - 1.0)).clamp(0.0, 1.0);
    }
    let mut left = hi - f.iter().sum::<f64>();
    for i in (0..sfs.len()).filter(|&i| sfs[i] <= 1.0 + UNIT_SF) {
        let take = left.clamp(0.0, 1.0);
        f[i] = take;
        left -= take;
    }
    Some(f)
}

/// Highest-ASP shares with unfairness at most `max_unfairness`.
pub fn max_asp_within(
    sfs: &[f64],
    n_fc: u32,
    max_unfairness: f64,
) -> Result<Vec<f64>, AnalyticError> {
    check(sfs, n_fc)?;
    lp_max_asp(sfs, n_fc, max_unfairness).ok_or_else(|| {
        AnalyticError::Invalid(format!(
            "no allocation of {n_fc} fast cores reaches unfairness <= {max_unfairness}"
        ))
    })
}

/// The lowest unfairness any allocation reaches, by bisection on the LP's
/// feasibility between 1 and the unfairness of a vertex allocation.
pub fn min_unfairness(sfs: &[f64], n_fc: u32) -> Result<f64, AnalyticError> {
    check(sfs, n_fc)?;
    let (_, _, umax) = vertex_extremes(sfs, n_fc);
    Ok(lowest_unfairness(sfs, n_fc, umax))
}

/// Bisection between 1 and `upper` (an unfairness some allocation reaches).
fn lowest_unfairness(sfs: &[f64], n_fc: u32, upper: f64) -> f64 {
    if lp_max_asp(sfs, n_fc, 1.0).is_some() {
        return 1.0;
    }
    let (mut lo, mut hi) = (1.0, upper);
    for _ in 0..200 {
        if hi - lo <= 1e-12 * hi {
            break;
        }
        let mid = 0.5 * (lo + hi);
        if lp_max_asp(sfs, n_fc, mid).is_some() {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi
}

/// Extremes of the metrics over all allocations, for Fig. 1's normalisation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bounds {
    pub asp_min: f64,
    pub asp_max: f64,
    pub unfairness_min: f64,
    pub unfairness_max: f64,
}

/// ASP (linear in the shares) and unfairness (a maximum of linear-fractional
/// functions of the shares) take their extremes at vertices of the
/// allocation polytope, which are the 0/1 allocations with N_FC ones; the
/// lowest unfairness is interior in general and comes from the LP.
fn vertex_extremes(sfs: &[f64], n_fc: u32) -> (f64, f64, f64) {
    let n = sfs.len();
    let (mut amin, mut amax, mut umax) = (f64::INFINITY, f64::NEG_INFINITY, 1.0f64);
    for mask in 0u32..(1 << n) {
        if mask.count_ones() != n_fc {
            continue;
        }
        let f: Vec<f64> = (0..n).map(|i| f64::from((mask >> i) & 1)).collect();
        let m = evaluate(sfs, &f);
        amin = amin.min(m.asp);
        amax = amax.max(m.asp);
        umax = umax.max(m.unfairness);
    }
    (amin, amax, umax)
}

/// The normalisation bounds of Fig. 1 for one workload.
pub fn bounds(sfs: &[f64], n_fc: u32) -> Result<Bounds, AnalyticError> {
    check(sfs, n_fc)?;
    let (asp_min, asp_max, unfairness_max) = vertex_extremes(sfs, n_fc);
    let unfairness_min = lowest_unfairness(sfs, n_fc, unfairness_max);
    Ok(Bounds {
        asp_min,
        asp_max,
        unfairness_min,
        unfairness_max,
    })
}

/// Fig. 1's normalisation: 0 = the lowest value attainable on the platform
/// for this workload, 1 = the highest. A zero range (W5: every allocation
/// has the same ASP) is reported as `None`.
pub fn normalise(v: f64, min: f64, max: f64) -> Option<f64> {
    let range = max - min;
    if range <= 1e-12 * max.abs().max(1.0) {
        None
    } else {
        Some(((v - min) / range).clamp(0.0, 1.0))
    }
}

/// One (workload, scheduler) result.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub workload: &'static str,
    pub sfs: Vec<f64>,
    pub scheduler: Scheduler,
    /// Fast-core time shares F_i.
    pub shares: Vec<f64>,
    pub asp: f64,
    pub unfairness: f64,
    /// Normalised as in Fig. 1; `None` when the workload's range is zero.
    pub asp_norm: Option<f64>,
    pub unfairness_norm: Option<f64>,
}

/// The whole study.
#[derive(Debug, Clone)]
pub struct PropSpStudy {
    pub n_fc: u32,
    /// Workload-major, schedulers in [`Scheduler::ALL`] order.
    pub outcomes: Vec<Outcome>,
    pub bounds: Vec<(&'static str, Bounds)>,
}

/// Runs every scheduler on the given workloads.
pub fn propsp_study_with(workloads: &[Workload], n_fc: u32) -> Result<PropSpStudy, AnalyticError> {
    let mut outcomes = Vec::new();
    let mut all_bounds = Vec::new();
    for w in workloads {
        let b = bounds(&w.sfs, n_fc)?;
        for s in Scheduler::ALL {
            let f = match s {
                // The bisection already ran for the bounds.
                Scheduler::OptUnfairness => max_asp_within(&w.sfs, n_fc, b.unfairness_min)?,
                _ => shares(s, &w.sfs, n_fc)?,
            };
            let m = evaluate(&w.sfs, &f);
            outcomes.push(Outcome {
                workload: w.name,
                sfs: w.sfs.to_vec(),
                scheduler: s,
                shares: f,
                asp: m.asp,
                unfairness: m.unfairness,
                asp_norm: normalise(m.asp, b.asp_min, b.asp_max),
                unfairness_norm: normalise(m.unfairness, b.unfairness_min, b.unfairness_max),
            });
        }
        all_bounds.push((w.name, b));
    }
    Ok(PropSpStudy {
        n_fc,
        outcomes,
        bounds: all_bounds,
    })
}

/// The paper's study: Table 1 on 2 fast + 2 slow cores.
pub fn propsp_study() -> Result<PropSpStudy, AnalyticError> {
    // 4 single-threaded apps on FAST_CORES + SLOW_CORES = 4 cores: the
    // work-conserving assumption (footnote 1) keeps the fast cores busy.
    debug_assert!(TABLE1
        .iter()
        .all(|w| w.sfs.len() as u32 >= FAST_CORES + SLOW_CORES));
    propsp_study_with(&TABLE1, FAST_CORES)
}

fn opt(v: Option<f64>, digits: usize) -> String {
    v.map_or_else(|| "n/a".into(), |x| format!("{x:.digits$}"))
}

fn csv_opt(v: Option<f64>) -> String {
    v.map_or_else(String::new, |x| x.to_string())
}

impl PropSpStudy {
    pub fn get(&self, workload: &str, s: Scheduler) -> Option<&Outcome> {
        self.outcomes
            .iter()
            .find(|o| o.workload == workload && o.scheduler == s)
    }

    fn workloads(&self) -> Vec<&'static str> {
        self.bounds.iter().map(|(w, _)| *w).collect()
    }

    /// One row per (workload, scheduler), full precision. Empty normalised
    /// cells = zero range.
    pub fn results_csv(&self) -> String {
        let mut s = String::from(
            "workload,sf1,sf2,sf3,sf4,scheduler,F1,F2,F3,F4,asp,unfairness,asp_norm,unfairness_norm\n",
        );
        for o in &self.outcomes {
            let pad = |v: &[f64]| -> Vec<String> {
                (0..4)
                    .map(|i| v.get(i).map_or_else(String::new, |x| x.to_string()))
                    .collect()
            };
            s.push_str(&format!(
                "{},{},{},{},{},{},{},{}\n",
                o.workload,
                pad(&o.sfs).join(","),
                o.scheduler.name(),
                pad(&o.shares).join(","),
                o.asp,
                o.unfairness,
                csv_opt(o.asp_norm),
                csv_opt(o.unfairness_norm)
            ));
        }
        s
    }

    /// Per-workload normalisation bounds.
    pub fn bounds_csv(&self) -> String {
        let mut s = String::from("workload,asp_min,asp_max,unfairness_min,unfairness_max\n");
        for (w, b) in &self.bounds {
            s.push_str(&format!(
                "{w},{},{},{},{}\n",
                b.asp_min, b.asp_max, b.unfairness_min, b.unfairness_max
            ));
        }
        s
    }

    fn metric_rows(&self, norm: bool) -> (Vec<String>, Vec<Vec<String>>) {
        let mut headers = vec!["workload".to_string()];
        for s in Scheduler::ALL {
            headers.push(format!("{} ASP", s.name()));
            headers.push(format!("{} unf", s.name()));
        }
        let rows = self
            .workloads()
            .iter()
            .map(|w| {
                let mut r = vec![w.to_string()];
                for s in Scheduler::ALL {
                    let o = self.get(w, s).expect("every scheduler ran");
                    if norm {
                        r.push(opt(o.asp_norm, 3));
                        r.push(opt(o.unfairness_norm, 3));
                    } else {
                        r.push(format!("{:.3}", o.asp));
                        r.push(format!("{:.3}", o.unfairness));
                    }
                }
                r
            })
            .collect();
        (headers, rows)
    }

    /// Short summary for the terminal (normalised values, as in Fig. 1).
    pub fn summary_text(&self) -> String {
        let (headers, rows) = self.metric_rows(true);
        let h: Vec<&str> = headers.iter().map(String::as_str).collect();
        format!(
            "Prop-SP study (Table 1 on {} fast + {} slow cores): normalised ASP (1 = best) and unfairness (0 = best)\n{}",
            self.n_fc,
            SLOW_CORES,
            text_table(&h, &rows)
        )
    }

    /// The paper's statements of Section 2, each checked against our numbers.
    fn claims(&self) -> Vec<String> {
        let ws = self.workloads();
        let o = |w: &str, s| self.get(w, s).expect("every scheduler ran");
        let mut c = Vec::new();

        let hsp_max = ws
            .iter()
            .filter(|w| {
                Scheduler::ALL
                    .iter()
                    .all(|&s| o(w, s).asp <= o(w, Scheduler::Hsp).asp + 1e-9)
            })
            .count();
        // Workloads where some other scheduler is less fair than HSP.
        let hsp_not_worst: Vec<String> = ws
            .iter()
            .filter_map(|w| {
                let h = o(w, Scheduler::Hsp).unfairness;
                let worse: Vec<&str> = Scheduler::ALL
                    .iter()
                    .filter(|&&s| o(w, s).unfairness > h + 1e-9)
                    .map(|s| s.name())
                    .collect();
                (!worse.is_empty()).then(|| format!("{w} ({} is less fair)", worse.join(", ")))
            })
            .collect();
        c.push(format!(
            "\"HSP optimizes the aggregate speedup ... at the expense of obtaining the worst unfairness numbers by far\": HSP has the highest ASP in {hsp_max} of {} workloads; it has the worst unfairness in {} of {}; not in: {} -> **{}**.",
            ws.len(),
            ws.len() - hsp_not_worst.len(),
            ws.len(),
            if hsp_not_worst.is_empty() { "none".to_string() } else { hsp_not_worst.join(", ") },
            if hsp_max == ws.len() && hsp_not_worst.is_empty() {
                "agrees"
            } else {
                "agrees for ASP; for unfairness except the listed workloads"
            }
        ));

        let lower: Vec<&str> = ws
            .iter()
            .copied()
            .filter(|w| o(w, Scheduler::OptUnfairness).asp < o(w, Scheduler::Hsp).asp - 1e-9)
            .collect();
        c.push(format!(
            "\"Opt-Unfairness exhibits lower aggregate speedup than HSP in most cases\": lower in {} of {} ({}) -> **{}**.",
            lower.len(),
            ws.len(),
            lower.join(", "),
            if 2 * lower.len() > ws.len() { "agrees" } else { "disagrees" }
        ));

        let loss = |w: &str, s| 1.0 - o(w, s).asp / o(w, Scheduler::Hsp).asp;
        let worst = |s| {
            ws.iter()
                .map(|w| (*w, loss(w, s)))
                .max_by(|a, b| a.1.total_cmp(&b.1))
                .expect("workloads")
        };
        let (ow, ol) = worst(Scheduler::OptUnfairness);
        c.push(format!(
            "\"much throughput has to be sacrificed in some cases (up to 20% for W2) to achieve the optimal unfairness\": Opt-Unfairness loses {:.1}% of HSP's (= the maximum) ASP on W2 (normalised ASP {}); the largest loss is {:.1}% on {ow} -> **{}**.",
            100.0 * loss("W2", Scheduler::OptUnfairness),
            opt(o("W2", Scheduler::OptUnfairness).asp_norm, 3),
            100.0 * ol,
            if ow == "W2" && (100.0 * ol - 20.0).abs() < 1.0 { "agrees" } else { "see numbers" }
        ));

        let (rw, rl) = worst(Scheduler::Rr);
        c.push(format!(
            "\"RR sacrifices up to 47% of the maximum throughput attainable\": RR's largest ASP loss against the maximum (HSP) is {:.1}% ({rw}); normalised, RR's ASP is 0.5 in every workload with a non-zero range (for 4 apps on 2 fast cores it is the mean of the extremes), i.e. 50% of the attainable range -> **{}**.",
            100.0 * rl,
            if (100.0 * rl - 47.0).abs() < 0.5 {
                "agrees"
            } else {
                "close but not equal (the paper does not say how its 47% is computed; neither reading gives 47%)"
            }
        ));

        let w1 = (o("W1", Scheduler::Rr), o("W1", Scheduler::OptUnfairness));
        c.push(format!(
            "\"in some workloads, such as W1, high throughput reductions are also accompanied by fairness degradation\" (RR): W1 RR unfairness {:.3} vs optimal {:.3}, ASP {:.3} vs maximum {:.3} -> **{}**.",
            w1.0.unfairness,
            w1.1.unfairness,
            w1.0.asp,
            o("W1", Scheduler::Hsp).asp,
            if w1.0.unfairness > w1.1.unfairness + 1e-9 { "agrees" } else { "disagrees" }
        ));

        let degrade = |w: &str| {
            let (r, u) = (o(w, Scheduler::Rr), o(w, Scheduler::OptUnfairness));
            (r.asp < u.asp - 1e-9, r.unfairness > u.unfairness + 1e-9)
        };
        let both: Vec<&str> = ws
            .iter()
            .copied()
            .filter(|w| degrade(w) == (true, true))
            .collect();
        let not: Vec<&str> = ws
            .iter()
            .copied()
            .filter(|w| degrade(w) != (true, true))
            .collect();
        c.push(format!(
            "\"RR ... always degrades both fairness and ASP compared to Opt-Unfairness\": both worse in {} of {}; not in: {} -> **{}**.",
            both.len(),
            ws.len(),
            if not.is_empty() { "none".to_string() } else { not.join(", ") },
            if not.is_empty() { "agrees" } else { "agrees except the listed workloads (equal values there)" }
        ));

        // Per workload: Prop-SP strictly higher than both, a tie, or lower.
        let mut ties = Vec::new();
        let mut lower_than = Vec::new();
        for w in &ws {
            let p = o(w, Scheduler::PropSp).asp;
            for s in [Scheduler::OptUnfairness, Scheduler::Rr] {
                let other = o(w, s).asp;
                if (p - other).abs() <= 1e-9 * other.abs().max(1.0) {
                    ties.push(format!("{w} (ties {})", s.name()));
                } else if p < other {
                    lower_than.push(format!("{w} ({:.4} < {} {:.4})", p, s.name(), other));
                }
            }
        }
        c.push(format!(
            "\"[Prop-SP] delivers higher aggregate speedup than Opt-Unfairness and RR across the board\": ties: {}; Prop-SP lower: {} -> **{}**.",
            if ties.is_empty() { "none".to_string() } else { ties.join(", ") },
            if lower_than.is_empty() { "none".to_string() } else { lower_than.join(", ") },
            if lower_than.is_empty() { "agrees (ties only where every allocation has the same ASP)" } else { "disagrees for the workloads where Prop-SP is lower" }
        ));

        let over: Vec<String> = ws
            .iter()
            .filter_map(|w| {
                let p = o(w, Scheduler::PropSp);
                let n = p.unfairness_norm.unwrap_or(0.0);
                let rel = p.unfairness / o(w, Scheduler::OptUnfairness).unfairness - 1.0;
                (n > 0.10 + 1e-9).then(|| {
                    format!(
                        "{w} (normalised {n:.3}, {:.1}% above the optimum)",
                        100.0 * rel
                    )
                })
            })
            .collect();
        let (pw, pu) = ws
            .iter()
            .map(|w| (*w, o(w, Scheduler::PropSp).unfairness_norm.unwrap_or(0.0)))
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .expect("workloads");
        c.push(format!(
            "\"Prop-SP ensures unfairness numbers within 0-10% of the maximum attainable for all workloads\" (read as normalised unfairness <= 0.10, the scale of Fig. 1): largest {pu:.3} ({pw}); above 0.10: {} -> **{}**.",
            if over.is_empty() { "none".to_string() } else { over.join(", ") },
            if over.is_empty() { "agrees" } else { "disagrees for the listed workloads" }
        ));

        let (gw, gap) = ws
            .iter()
            .map(|w| {
                let r = o(w, Scheduler::OptAspRef).asp;
                (*w, (r - o(w, Scheduler::PropSp).asp) / r)
            })
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .expect("workloads");
        c.push(format!(
            "\"Prop-SP delivers ASP numbers very close to the maximum attainable for the provided unfairness\": Prop-SP is at most {:.2}% below Opt-ASP-Ref ({gw}) -> **{}**.",
            100.0 * gap,
            if gap < 0.05 { "agrees" } else { "disagrees" }
        ));
        c
    }

    /// The Markdown report.
    pub fn markdown(&self) -> String {
        let mut s = String::from("# Prop-SP analytic study (Section 2, Table 1, Fig. 1)\n\n");
        s.push_str(&format!(
            "Machine: {} fast + {} slow cores (Section 2). Workloads: Table 1, four single-threaded applications each. \
             Formulas: eq. 3 (time share F -> instruction fraction f) and Table 2 (ASP, slowdown, unfairness). \
             Capacity: work-conserving with 4 threads on 4 cores, so sum F = {} and 0 <= F <= 1.\n\n",
            self.n_fc, SLOW_CORES, self.n_fc
        ));
        s.push_str(
            "Schedulers: HSP (F = 1 for the two highest SFs), RR (F = N_FC/n = 0.5), Prop-SP (F proportional to SF - 1; \
             a share above 1 would be capped, our assumption, never needed here), Opt-Unfairness (lowest unfairness, then \
             highest ASP), Opt-ASP-Ref (highest ASP with unfairness <= Prop-SP's). The two optimal schedulers are solved \
             exactly: with x = 1/slowdown, ASP and all constraints are linear, so each is a 4-variable linear program \
             solved by vertex enumeration; Opt-Unfairness's lowest unfairness comes from bisection on the LP's feasibility \
             (relative tolerance 1e-12).\n\n\
             Normalisation (Fig. 1 caption): per workload, 0 = the lowest value attainable on the platform, 1 = the highest. \
             ASP extremes and the highest unfairness are at 0/1 allocations; the lowest unfairness is Opt-Unfairness's. \
             W5 (all SFs equal) has the same ASP under every allocation: its normalised ASP is undefined (n/a).\n\n",
        );
        s.push_str("## Normalised (Fig. 1): ASP 1 = best, unfairness 0 = best\n\n");
        let (h, r) = self.metric_rows(true);
        let h: Vec<&str> = h.iter().map(String::as_str).collect();
        s.push_str(&md_table(&h, &r));
        s.push_str("\n## Raw values (Table 2)\n\n");
        let (h, r) = self.metric_rows(false);
        let h: Vec<&str> = h.iter().map(String::as_str).collect();
        s.push_str(&md_table(&h, &r));
        s.push_str("\nFull precision and the fast-core shares F1..F4: `results.csv`; normalisation bounds: `bounds.csv`.\n\n");
        s.push_str("## Against the paper's statements (Section 2)\n\n");
        for c in self.claims() {
            s.push_str(&format!("* {c}\n"));
        }
        s.push_str("\nChart: `fig1.svg` / `fig1.png` (left: all schedulers; right: RR against Prop-SP per workload).\n");
        s
    }

    /// Fig. 1 point of one outcome: W5's normalised ASP is undefined (every
    /// allocation reaches the maximum), so it is drawn at 1 (noted in the
    /// chart title) rather than left out.
    fn fig1_point(o: &Outcome) -> Option<(f64, f64)> {
        o.unfairness_norm.map(|u| (u, o.asp_norm.unwrap_or(1.0)))
    }

    /// Segments from RR to Prop-SP per workload (the paper's right panel).
    fn rr_to_prop_sp(&self) -> Vec<((f64, f64), (f64, f64))> {
        self.workloads()
            .iter()
            .filter_map(|w| {
                let a = Self::fig1_point(self.get(w, Scheduler::Rr)?)?;
                let b = Self::fig1_point(self.get(w, Scheduler::PropSp)?)?;
                Some((a, b))
            })
            .collect()
    }

    fn scatter_series(&self, only: &[Scheduler], label: &[Scheduler]) -> Vec<plot::PointSeries> {
        only.iter()
            .map(|&s| plot::PointSeries {
                name: s.name().into(),
                labels: label.contains(&s),
                points: self
                    .outcomes
                    .iter()
                    .filter(|o| o.scheduler == s)
                    .filter_map(|o| {
                        Self::fig1_point(o).map(|(u, a)| (u, a, o.workload.to_string()))
                    })
                    .collect(),
            })
            .collect()
    }
}

/// Runs the study and writes `results.csv`, `bounds.csv`, `summary.md` and
/// `fig1.{svg,png}` into `dir`.
pub fn write_propsp(dir: &Path) -> Result<StudyFiles, AnalyticError> {
    let study = propsp_study()?;
    colab_report::check_fonts().map_err(|e| AnalyticError::Font(e.to_string()))?;
    prepare_dir(dir)?;
    let mut files = Vec::new();
    for (name, text) in [
        ("results.csv", study.results_csv()),
        ("bounds.csv", study.bounds_csv()),
        ("summary.md", study.markdown()),
    ] {
        let p = dir.join(name);
        write_atomic(&p, &text)?;
        files.push(p);
    }
    let panels = [
        plot::ScatterPanel {
            title: "all schedulers".into(),
            series: study.scatter_series(&Scheduler::ALL, &[]),
            links: Vec::new(),
        },
        plot::ScatterPanel {
            title: "RR against Prop-SP (grey: same workload)".into(),
            series: study.scatter_series(&[Scheduler::Rr, Scheduler::PropSp], &[Scheduler::PropSp]),
            links: study.rr_to_prop_sp(),
        },
    ];
    files.extend(plot::write_scatter_panels(
        &dir.join("fig1"),
        "ASP against unfairness, normalised per workload (cf. Prop-SP Fig. 1; W5's ASP drawn at 1)",
        "normalised unfairness (0 = best)",
        "normalised ASP (1 = best)",
        &panels,
    )?);
    Ok(StudyFiles {
        dir: dir.to_path_buf(),
        files,
        summary: study.summary_text(),
    })
}

#[cfg(test)]
mod tests;
