//! The paper's formulas: an application's speedup on the fast cores
//! (SP_Even, SP_BusyFCs), its dynamic weight, Prop-SP's credit assignment
//! (Algorithm 1) and HSP's choice of applications.

use super::{Distribution, NICE_0_WEIGHT};
use colab_core::{Nanos, ProgramId, RunState, SchedState, ThreadId, ThreadInfo};

/// SP_Even (section 3.2): MIN(NFC, N) / N x (SF - 1) + 1.
pub fn sp_even(sf: f64, n: usize, nfc: usize) -> f64 {
    let n = n.max(1);
    nfc.min(n) as f64 / n as f64 * (sf - 1.0) + 1.0
}

/// SP_BusyFCs (section 3.2): (SF - 1) / (floor((N - 1) / NFC) + 1)^2 + 1.
pub fn sp_busy_fcs(sf: f64, n: usize, nfc: usize) -> f64 {
    let n = n.max(1);
    let k = ((n - 1) / nfc.max(1) + 1) as f64;
    (sf - 1.0) / (k * k) + 1.0
}

/// Application speedup from all fast cores under a distribution scheme.
pub fn app_speedup(d: Distribution, sf: f64, n: usize, nfc: usize) -> f64 {
    match d {
        Distribution::Even => sp_even(sf, n, nfc),
        Distribution::BusyFcs => sp_busy_fcs(sf, n, nfc),
    }
}

/// Dynamic weight (section 3.1): (speedup - 1) x static weight, never negative.
pub fn dynamic_weight(speedup: f64, static_weight: f64) -> f64 {
    (speedup - 1.0).max(0.0) * static_weight
}

/// What the scheduler observes of one application.
#[derive(Clone, Debug, PartialEq)]
pub struct AppView {
    pub program: ProgramId,
    /// Mean SF of its live threads.
    pub sf: f64,
    /// Live (not exited) threads: N in the section 3.2 formulas.
    pub threads: usize,
    /// Runnable or running threads, in creation order.
    pub runnable: Vec<ThreadId>,
}

/// Groups live threads by application, in program order, taking each
/// thread's SF from `sf_of`.
pub fn observe_apps(st: &SchedState, sf_of: impl Fn(&ThreadInfo) -> f64) -> Vec<AppView> {
    let mut apps: Vec<AppView> = Vec::new();
    let mut sf_sum: Vec<f64> = Vec::new();
    for th in st.live_threads() {
        let i = match apps.iter().position(|a| a.program == th.program) {
            Some(i) => i,
            None => {
                apps.push(AppView {
                    program: th.program,
                    sf: 0.0,
                    threads: 0,
                    runnable: Vec::new(),
                });
                sf_sum.push(0.0);
                apps.len() - 1
            }
        };
        sf_sum[i] += sf_of(th);
        apps[i].threads += 1;
        if matches!(th.state, RunState::Runnable | RunState::Running) {
            apps[i].runnable.push(th.id);
        }
    }
    for (a, s) in apps.iter_mut().zip(sf_sum) {
        a.sf = s / a.threads as f64;
        a.runnable.sort();
    }
    apps.sort_by_key(|a| a.program);
    apps
}

/// The outcome of one credit assignment (Algorithm 1).
#[derive(Clone, Debug, PartialEq)]
pub struct Assignment {
    /// Length of the next execution period.
    pub period_ns: Nanos,
    /// Dynamic weight of every application with runnable threads (the set R).
    pub weights: Vec<(ProgramId, f64)>,
    /// Credits (ns of fast-core time) per application after scaling.
    pub app_credits: Vec<(ProgramId, f64)>,
    /// Credits per thread; threads not listed get none.
    pub credits: Vec<(ThreadId, f64)>,
}

/// Algorithm 1 over the observed applications, with `nfc` fast cores.
pub fn assign_credits(apps: &[AppView], nfc: usize, ref_ns: Nanos, d: Distribution) -> Assignment {
    let refc = ref_ns as f64;
    // R: applications with runnable threads.
    let r: Vec<&AppView> = apps.iter().filter(|a| !a.runnable.is_empty()).collect();
    // Step 1: dynamic weights. (Algorithm 1 also sorts S by weight; with
    // per-application distribution the order changes nothing, so we do not.)
    let weights: Vec<(ProgramId, f64)> = r
        .iter()
        .map(|a| {
            let sp = app_speedup(d, a.sf, a.threads, nfc);
            (a.program, dynamic_weight(sp, NICE_0_WEIGHT))
        })
        .collect();
    let total_weight: f64 = weights.iter().map(|w| w.1).sum();
    // Step 2: credits for the reference period.
    let total_credits = refc * nfc as f64;
    let ref_credits: Vec<f64> = weights
        .iter()
        .map(|&(_, w)| {
            if total_weight > 0.0 {
                total_credits * w / total_weight
            } else {
                0.0
            }
        })
        .collect();
    // Step 3: period length (our migration-rate rule, see the module doc),
    // from how many threads will receive credits.
    let credited: usize = r
        .iter()
        .zip(&ref_credits)
        .filter(|(_, &c)| c > 0.0)
        .map(|(a, &c)| match d {
            Distribution::Even => a.runnable.len(),
            // Each thread takes at most one fast core's worth of the period.
            Distribution::BusyFcs => ((c / refc - 1e-9).ceil() as usize).clamp(1, a.runnable.len()),
        })
        .sum();
    let stretch = credited.div_ceil(nfc.max(1)).max(1);
    let period_ns = ref_ns * stretch as Nanos;
    let cred_per_fc_next_period = period_ns as f64;
    let scale = cred_per_fc_next_period / refc;
    let mut app_credits = Vec::with_capacity(r.len());
    let mut credits = Vec::new();
    for (a, &c) in r.iter().zip(&ref_credits) {
        let c = c * scale;
        app_credits.push((a.program, c));
        if c <= 0.0 {
            continue;
        }
        match d {
            Distribution::Even => {
                let each = c / a.runnable.len() as f64;
                credits.extend(a.runnable.iter().map(|&t| (t, each)));
            }
            Distribution::BusyFcs => {
                let mut left = c;
                for &t in &a.runnable {
                    if left <= 0.0 {
                        break;
                    }
                    let give = left.min(cred_per_fc_next_period);
                    credits.push((t, give));
                    left -= give;
                }
            }
        }
    }
    Assignment {
        period_ns,
        weights,
        app_credits,
        credits,
    }
}

/// HSP's choice: applications in descending application-wide speedup (ties:
/// lower program id) until their runnable threads fill the fast cores.
pub fn hsp_choice(apps: &[AppView], nfc: usize, d: Distribution) -> Vec<ProgramId> {
    let mut r: Vec<(ProgramId, f64, usize)> = apps
        .iter()
        .filter(|a| !a.runnable.is_empty())
        .map(|a| {
            (
                a.program,
                app_speedup(d, a.sf, a.threads, nfc),
                a.runnable.len(),
            )
        })
        .collect();
    r.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut slots = nfc;
    let mut chosen = Vec::new();
    for (p, _, n) in r {
        if slots == 0 {
            break;
        }
        chosen.push(p);
        slots = slots.saturating_sub(n);
    }
    chosen
}
