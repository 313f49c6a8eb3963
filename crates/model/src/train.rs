//! Training: PCA event selection, least squares, leave-one-program-out
//! cross-validation (colab-tpds 5.1).
//!
//! For each core type separately (its counters are what a thread running
//! there produces), with one row per program:
//!
//! 1. Features are event counts per cycle. Events whose rate is the same in
//!    every row (all zero like SW_INCR, or constant) carry no information and
//!    are dropped first, with a note.
//! 2. The remaining features are standardised (mean 0, sample sd 1).
//! 3. Ranking rule: PCA, then principal component regression (PCR). The
//!    standardised events are decomposed by an SVD into components k with
//!    loadings `v_k,e`, singular values `s_k` and unit scores `u_k`; each
//!    target y (centred) is regressed on the unit scores (coefficient
//!    `u_k . y / |y|`, the component's correlation with y), and the
//!    regression is mapped back to the events:
//!    `beta_e(y) = sum_k v_k,e * (u_k . y / |y|) / s_k`.
//!    An event's score is `|beta_e(speedup)| + |beta_e(energy_ratio)|`,
//!    normalised so that scores sum to 1; both targets weigh the same
//!    because one event set serves both models, as in the paper. Events are
//!    selected greedily: the top event is taken, the other events and the
//!    targets are replaced by what the selected events leave unexplained
//!    (least-squares residuals), and PCA and scores are computed again, until
//!    N are selected. An event that is a linear combination of those
//!    selected has no residual left and is passed over with a note.
//!
//!    Why this rule. The paper selects with PCA "the six performance events
//!    that correlate the most with performance and energy scaling"; PCA alone
//!    cannot: it never sees the targets, and for events that are independent
//!    of each other its components are arbitrary rotations (two standardised
//!    events always load +-1/sqrt(2) on both components), so a rule on
//!    loadings weighted by explained variance cannot tell an informative
//!    event from noise. We tried it: `sum_k r_k * rho_k^2 * v_k,e^2` ties on
//!    any two independent events, and the signed `sum_k r_k * L_k,e * rho_k`
//!    picked a noise event in 37% of seeds with 40 programs and 70% with 14,
//!    on synthetic tables with three informative and two noise events;
//!    plain correlation with the targets failed in 36% of seeds at 14
//!    programs. PCR coefficients measure what an event adds beyond the
//!    others, and with every non-null component kept they are defined when
//!    there are more events than programs (the paper's case: 14 programs,
//!    dozens of events), where ordinary least squares is not. Greedy
//!    re-scoring keeps two copies of the same information from taking two
//!    counters. On the same synthetic tables it picked the right events in
//!    every seed at 14 programs, and in 84% of seeds with 16 redundant and
//!    noisy events for 14 programs. The report lists each event's first-step
//!    score and the components' explained variance and correlation with the
//!    targets.
//! 4. Stopping: N events, or fewer if no other event adds anything.
//! 5. Ordinary least squares with an intercept, separately for the speedup
//!    and the energy ratio, on the selected rates (solved by SVD on
//!    standardised columns, reported in the original units).
//!
//! Leave-one-program-out cross-validation repeats steps 1-5 without each
//! program in turn (selection included, so the error is that of the whole
//! procedure on a program it has not seen) and predicts the left-out
//! program. Errors are absolute relative errors |predicted - actual| /
//! actual, per program and averaged.

use std::collections::BTreeMap;

use nalgebra::{DMatrix, DVector};
use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::events::CPU_CYCLES;
use crate::model::{CoreModel, Linear, Model, ModelError, Source};
use crate::table::{TableError, TrainingTable};

/// One line naming the ranking rule, for reports.
pub const RANKING_RULE: &str = "greedy principal component regression: score(e) = \
     |sum_k v_k,e * corr(component k, speedup) / s_k| + the same for energy_ratio, on the \
     standardised events; the top event is selected, the rest and the targets are replaced by \
     their residuals on the selected events, and scores are computed again";

/// Below this share of the total variance a component is numerical noise.
const NULL_COMPONENT: f64 = 1e-12;
/// An event whose standardised rate is explained by the selected ones with
/// R^2 above 1 - this is a linear combination of them.
const COLLINEAR: f64 = 1e-9;
/// Smallest / largest singular value of a regression's design matrix below
/// which the fit is not determined.
const SINGULAR: f64 = 1e-10;

#[derive(Debug, Clone, PartialEq)]
pub struct TrainOptions {
    /// Events to select per core type (besides CPU_CYCLES).
    pub events: usize,
    /// Hardware counters available at once, the cycle counter included.
    pub max_counters: usize,
    /// The model's name.
    pub name: String,
    /// Where the table came from (recorded in the model file).
    pub source: String,
}

impl Default for TrainOptions {
    /// The paper's six events plus cycles on cores with seven counters.
    fn default() -> Self {
        TrainOptions {
            events: 6,
            max_counters: 7,
            name: "trained".into(),
            source: "in-memory table".into(),
        }
    }
}

impl TrainOptions {
    /// Checks the options alone (before any table is read).
    pub fn check(&self) -> Result<(), TrainError> {
        if self.events == 0 {
            return Err(TrainError::NoEvents);
        }
        if self.events + 1 > self.max_counters {
            return Err(TrainError::TooManyEvents {
                events: self.events,
                max_counters: self.max_counters,
            });
        }
        Ok(())
    }
}

#[derive(Debug, Error)]
pub enum TrainError {
    #[error(transparent)]
    Table(#[from] TableError),
    #[error("--events must be at least 1")]
    NoEvents,
    #[error("--events {events} does not fit --max-counters {max_counters}: the cycle counter takes one, so at most {} events", .max_counters.saturating_sub(1))]
    TooManyEvents { events: usize, max_counters: usize },
    #[error("the table has no event columns besides {CPU_CYCLES}")]
    NoEventColumns,
    #[error("column `program`: {programs} programs (rows {first_row}-{last_row}), but {events} events need at least {needed}: {events} coefficients and an intercept, plus one program to leave out in cross-validation{hint}")]
    TooFewPrograms {
        programs: usize,
        events: usize,
        needed: usize,
        first_row: usize,
        last_row: usize,
        hint: String,
    },
    #[error("core type `{core_type}`{fold}: no event rate varies between programs ({dropped}); nothing to select from")]
    NoUsableEvents {
        core_type: String,
        fold: String,
        dropped: String,
    },
    #[error("core type `{core_type}`{fold}: {problem}")]
    Numerical {
        core_type: String,
        fold: String,
        problem: String,
    },
    #[error(transparent)]
    Model(#[from] ModelError),
}

/// Mean absolute relative error of each target.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TargetErrors {
    pub speedup: f64,
    pub energy_ratio: f64,
}

/// One target of one program: measured, fitted on all programs, predicted
/// with the program left out, and that prediction's relative error.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    pub actual: f64,
    pub fitted: f64,
    pub lopo: f64,
    pub lopo_error: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProgramErrors {
    pub program: String,
    pub speedup: Estimate,
    pub energy_ratio: Estimate,
    /// The events selected when this program was left out.
    pub lopo_events: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DroppedEvent {
    pub event: String,
    pub reason: String,
}

/// One principal component.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Component {
    /// Share of the standardised counters' variance.
    pub explained_variance: f64,
    /// Mean of its squared correlations with speedup and energy ratio.
    pub target_r2: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankedEvent {
    pub event: String,
    /// Share of the first step's score (scores sum to 1): what the event
    /// adds to all the others, before any is selected.
    pub score: f64,
    pub selected: bool,
    /// Why a highly ranked event was passed over.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CoreTypeSummary {
    pub dropped: Vec<DroppedEvent>,
    pub components: Vec<Component>,
    pub ranking: Vec<RankedEvent>,
    pub programs: Vec<ProgramErrors>,
    /// In-sample error of the model fitted on all programs.
    pub fit_error: TargetErrors,
    /// Leave-one-program-out error.
    pub lopo_error: TargetErrors,
}

/// What training did, stored in the model file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrainingSummary {
    pub table: String,
    pub programs: Vec<String>,
    pub events_requested: usize,
    pub max_counters: usize,
    pub ranking_rule: String,
    pub notes: Vec<String>,
    pub core_types: BTreeMap<String, CoreTypeSummary>,
    /// Means over every (program, core type).
    pub fit_error: TargetErrors,
    pub lopo_error: TargetErrors,
}

/// Selection and fit on one set of rows.
pub(crate) struct Fit {
    dropped: Vec<DroppedEvent>,
    components: Vec<Component>,
    ranking: Vec<RankedEvent>,
    /// Column indices of the selected events.
    pub(crate) selected: Vec<usize>,
    speedup: (f64, Vec<f64>),
    energy: (f64, Vec<f64>),
}

impl Fit {
    fn predict(&self, x: &DMatrix<f64>, i: usize) -> (f64, f64) {
        let eval = |(b0, b): &(f64, Vec<f64>)| {
            b0 + self
                .selected
                .iter()
                .zip(b)
                .map(|(&j, c)| c * x[(i, j)])
                .sum::<f64>()
        };
        (eval(&self.speedup), eval(&self.energy))
    }
}

fn mean_sd(col: impl Iterator<Item = f64> + Clone) -> (f64, f64) {
    let n = col.clone().count() as f64;
    let mean = col.clone().sum::<f64>() / n;
    let var = col.map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
    (mean, var.sqrt())
}

/// Least squares `y ~ b0 + sum b_j x[:, cols_j]` in the original units.
fn ols(x: &DMatrix<f64>, cols: &[usize], y: &DVector<f64>) -> Result<(f64, Vec<f64>), String> {
    let n = x.nrows();
    let stats: Vec<(f64, f64)> = cols
        .iter()
        .map(|&j| mean_sd(x.column(j).iter().copied()))
        .collect();
    // Standardised columns keep the SVD well conditioned; rates per cycle
    // differ by orders of magnitude between events.
    let a = DMatrix::from_fn(n, cols.len() + 1, |i, k| {
        if k == 0 {
            1.0
        } else {
            let (m, sd) = stats[k - 1];
            (x[(i, cols[k - 1])] - m) / sd
        }
    });
    let svd = a.svd(true, true);
    let s = &svd.singular_values;
    let (lo, hi) = (s.min(), s.max());
    if s.len() < cols.len() + 1 || lo <= SINGULAR * hi {
        return Err(format!(
            "the regression on {} events and an intercept is not determined by {n} programs (the selected rates are linearly dependent)",
            cols.len()
        ));
    }
    let b = svd.solve(y, 0.0).map_err(|e| e.to_string())?;
    let coefs: Vec<f64> = stats
        .iter()
        .zip(b.iter().skip(1))
        .map(|(&(_, sd), bk)| bk / sd)
        .collect();
    let intercept = b[0]
        - stats
            .iter()
            .zip(b.iter().skip(1))
            .map(|(&(m, sd), bk)| bk * m / sd)
            .sum::<f64>();
    Ok((intercept, coefs))
}

/// The columns `cols` of `z` as a matrix.
fn columns(z: &DMatrix<f64>, cols: &[usize]) -> DMatrix<f64> {
    DMatrix::from_fn(z.nrows(), cols.len(), |i, k| z[(i, cols[k])])
}

/// `v` minus its least-squares projection on the columns of `a` (none: `v`).
fn residual(a: Option<&DMatrix<f64>>, v: &DVector<f64>) -> Result<DVector<f64>, String> {
    match a {
        None => Ok(v.clone()),
        Some(a) => {
            let c = a
                .clone()
                .svd(true, true)
                .solve(v, 1e-12)
                .map_err(|e| e.to_string())?;
            Ok(v - a * c)
        }
    }
}

/// PCA of the columns of `z` (centred, unit norm) and each column's score:
/// the size of its principal-component-regression coefficient for each
/// target in `ys` (centred), summed over targets and normalised to sum 1.
fn pcr_scores(z: &DMatrix<f64>, ys: &[DVector<f64>]) -> Result<(Vec<f64>, Vec<Component>), String> {
    let svd = z.clone().svd(true, true);
    let (u, vt) = match (&svd.u, &svd.v_t) {
        (Some(u), Some(vt)) => (u, vt),
        _ => return Err("SVD without singular vectors".into()),
    };
    let total: f64 = svd.singular_values.iter().map(|s| s * s).sum();
    let mut components = Vec::new();
    let mut scores = vec![0.0; z.ncols()];
    let mut per_target: Vec<Vec<f64>> = vec![vec![0.0; z.ncols()]; ys.len()];
    for (k, &s) in svd.singular_values.iter().enumerate() {
        let share = s * s / total;
        if share < NULL_COMPONENT {
            continue;
        }
        let uk = u.column(k);
        let mut r2 = 0.0;
        for (t, y) in ys.iter().enumerate() {
            let norm = y.norm();
            if norm == 0.0 {
                continue;
            }
            let rho = uk.dot(y) / norm;
            r2 += rho * rho / ys.len() as f64;
            // Regression on the component's unit scores, mapped back to
            // the events through the loadings.
            for (e, b) in per_target[t].iter_mut().enumerate() {
                *b += vt[(k, e)] * rho / s;
            }
        }
        components.push(Component {
            explained_variance: share,
            target_r2: r2,
        });
    }
    for b in &per_target {
        for (sc, v) in scores.iter_mut().zip(b) {
            *sc += v.abs();
        }
    }
    let sum: f64 = scores.iter().sum();
    if sum > 0.0 {
        scores.iter_mut().for_each(|v| *v /= sum);
    }
    Ok((scores, components))
}

/// Steps 1-5 of the module docs on rows `x` (rates) with targets `ys`, `ye`.
/// Errors: `(true, dropped events)` if nothing varies, `(false, why)` else.
pub(crate) fn fit(
    names: &[String],
    x: &DMatrix<f64>,
    ys: &DVector<f64>,
    ye: &DVector<f64>,
    want: usize,
) -> Result<Fit, (bool, String)> {
    let n = x.nrows();
    let mut dropped = Vec::new();
    let mut kept = Vec::new();
    let mut stats = Vec::new();
    for (j, name) in names.iter().enumerate() {
        let (m, sd) = mean_sd(x.column(j).iter().copied());
        if x.column(j).iter().all(|&v| v == 0.0) {
            dropped.push(DroppedEvent {
                event: name.clone(),
                reason: "zero in every row".into(),
            });
        } else if sd <= 1e-12 * m.abs() {
            dropped.push(DroppedEvent {
                event: name.clone(),
                reason: "the same rate in every row".into(),
            });
        } else {
            kept.push(j);
            stats.push((m, sd));
        }
    }
    if kept.is_empty() {
        let list: Vec<&str> = dropped.iter().map(|d| d.event.as_str()).collect();
        return Err((true, list.join(", ")));
    }
    let z = DMatrix::from_fn(n, kept.len(), |i, k| {
        (x[(i, kept[k])] - stats[k].0) / stats[k].1
    });
    let targets: Vec<DVector<f64>> = [ys, ye].iter().map(|y| y.add_scalar(-y.mean())).collect();

    // Greedy: each step scores what the selected events leave unexplained.
    let mut chosen: Vec<usize> = Vec::new(); // indices into `kept`
    let mut first: Option<(Vec<f64>, Vec<Component>)> = None;
    let mut notes: Vec<Option<String>> = vec![None; kept.len()];
    while chosen.len() < want {
        let basis = (!chosen.is_empty()).then(|| columns(&z, &chosen));
        let ys_left = targets
            .iter()
            .map(|y| residual(basis.as_ref(), y))
            .collect::<Result<Vec<_>, String>>()
            .map_err(|m| (false, m))?;
        // A target the selected events already fit exactly has nothing left
        // to explain but rounding.
        let ys_left: Vec<DVector<f64>> = ys_left
            .into_iter()
            .zip(&targets)
            .map(|(r, y)| {
                if r.norm() <= 1e-9 * y.norm() {
                    r * 0.0
                } else {
                    r
                }
            })
            .collect();
        if !chosen.is_empty() && ys_left.iter().all(|y| y.norm() == 0.0) {
            break;
        }
        let mut cand = Vec::new();
        let mut cols = Vec::new();
        for e in (0..kept.len()).filter(|e| !chosen.contains(e)) {
            let col = z.column(e).into_owned();
            let r = residual(basis.as_ref(), &col).map_err(|m| (false, m))?;
            if r.norm_squared() > COLLINEAR * col.norm_squared() {
                cols.push(r.normalize());
                cand.push(e);
            } else if notes[e].is_none() {
                notes[e] = Some("a linear combination of the events selected".into());
            }
        }
        if cand.is_empty() {
            break;
        }
        let zr = DMatrix::from_columns(&cols);
        let (scores, comps) = pcr_scores(&zr, &ys_left).map_err(|m| (false, m))?;
        let best = (0..cand.len())
            .max_by(|&a, &b| {
                scores[a]
                    .total_cmp(&scores[b])
                    // Ties: the alphabetically first name wins.
                    .then_with(|| names[kept[cand[b]]].cmp(&names[kept[cand[a]]]))
            })
            .expect("candidates");
        if first.is_none() {
            let mut all = vec![0.0; kept.len()];
            for (i, &e) in cand.iter().enumerate() {
                all[e] = scores[i];
            }
            first = Some((all, comps));
        }
        chosen.push(cand[best]);
    }
    // Annotate copies of the last events selected too.
    if !chosen.is_empty() {
        let basis = columns(&z, &chosen);
        for e in (0..kept.len()).filter(|e| !chosen.contains(e)) {
            let col = z.column(e).into_owned();
            let r = residual(Some(&basis), &col).map_err(|m| (false, m))?;
            if notes[e].is_none() && r.norm_squared() <= COLLINEAR * col.norm_squared() {
                notes[e] = Some("a linear combination of the events selected".into());
            }
        }
    }
    let (first_scores, components) = first.unwrap_or_default();
    let mut rest: Vec<usize> = (0..kept.len()).filter(|e| !chosen.contains(e)).collect();
    rest.sort_by(|&a, &b| {
        first_scores[b]
            .total_cmp(&first_scores[a])
            .then_with(|| names[kept[a]].cmp(&names[kept[b]]))
    });
    let ranking = chosen
        .iter()
        .chain(&rest)
        .map(|&e| RankedEvent {
            event: names[kept[e]].clone(),
            score: first_scores[e],
            selected: chosen.contains(&e),
            note: notes[e].clone().filter(|_| !chosen.contains(&e)),
        })
        .collect();
    let selected: Vec<usize> = chosen.iter().map(|&k| kept[k]).collect();
    let speedup = ols(x, &selected, ys).map_err(|m| (false, m))?;
    let energy = ols(x, &selected, ye).map_err(|m| (false, m))?;
    Ok(Fit {
        dropped,
        components,
        ranking,
        selected,
        speedup,
        energy,
    })
}

fn rel_err(pred: f64, actual: f64) -> f64 {
    (pred - actual).abs() / actual.abs()
}

fn mean(v: impl Iterator<Item = f64>) -> f64 {
    let (s, n) = v.fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    if n == 0 {
        0.0
    } else {
        s / n as f64
    }
}

/// Trains a model from a table (see the module docs). The table is
/// validated first; the model carries the [`TrainingSummary`].
pub fn train(table: &TrainingTable, opts: &TrainOptions) -> Result<Model, TrainError> {
    opts.check()?;
    let shape = table.validate()?;
    let cycles = table
        .event_index(CPU_CYCLES)
        .expect("validate checked CPU_CYCLES");
    let features: Vec<usize> = (0..table.events.len()).filter(|&j| j != cycles).collect();
    let names: Vec<String> = features.iter().map(|&j| table.events[j].clone()).collect();
    if names.is_empty() {
        return Err(TrainError::NoEventColumns);
    }
    let want = opts.events.min(names.len());
    let n = shape.programs.len();
    if n < want + 2 {
        let suggest = n.saturating_sub(2);
        return Err(TrainError::TooFewPrograms {
            programs: n,
            events: want,
            needed: want + 2,
            first_row: table.rows.iter().map(|r| r.row).min().unwrap_or(2),
            last_row: table.rows.iter().map(|r| r.row).max().unwrap_or(2),
            hint: if suggest >= 1 {
                format!(" (add programs or use --events {suggest})")
            } else {
                " (add programs)".into()
            },
        });
    }
    let mut notes = Vec::new();
    if want < opts.events {
        notes.push(format!(
            "{} events requested, the table has {want} besides {CPU_CYCLES}",
            opts.events
        ));
    }

    let mut entries = BTreeMap::new();
    let mut summaries = BTreeMap::new();
    for ct in &shape.core_types {
        let rows: Vec<_> = shape
            .programs
            .iter()
            .map(|p| {
                table
                    .rows
                    .iter()
                    .find(|r| &r.program == p && &r.core_type == ct)
                    .expect("validate checked every program on every core type")
            })
            .collect();
        let x = DMatrix::from_fn(n, features.len(), |i, k| {
            rows[i].counts[features[k]] / rows[i].counts[cycles]
        });
        let ys = DVector::from_iterator(n, rows.iter().map(|r| r.speedup));
        let ye = DVector::from_iterator(n, rows.iter().map(|r| r.energy_ratio));
        let fail = |fold: String| {
            let ct = ct.clone();
            move |(empty, m): (bool, String)| {
                if empty {
                    TrainError::NoUsableEvents {
                        core_type: ct,
                        fold,
                        dropped: m,
                    }
                } else {
                    TrainError::Numerical {
                        core_type: ct,
                        fold,
                        problem: m,
                    }
                }
            }
        };
        let full = fit(&names, &x, &ys, &ye, want).map_err(fail(String::new()))?;
        for d in &full.dropped {
            notes.push(format!("{ct}: {} dropped ({})", d.event, d.reason));
        }
        let usable = full.selected.len();
        if usable < want {
            notes.push(format!(
                "{ct}: {usable} events selected of {want} wanted: no other event adds information"
            ));
        }

        let mut programs = Vec::with_capacity(n);
        for i in 0..n {
            let keep: Vec<usize> = (0..n).filter(|&r| r != i).collect();
            let sub = x.select_rows(&keep);
            let fold = fit(
                &names,
                &sub,
                &ys.select_rows(&keep),
                &ye.select_rows(&keep),
                want,
            )
            .map_err(fail(format!(" (leaving out `{}`)", shape.programs[i])))?;
            let (fs, fe) = full.predict(&x, i);
            let (ls, le) = fold.predict(&x, i);
            programs.push(ProgramErrors {
                program: shape.programs[i].clone(),
                speedup: Estimate {
                    actual: ys[i],
                    fitted: fs,
                    lopo: ls,
                    lopo_error: rel_err(ls, ys[i]),
                },
                energy_ratio: Estimate {
                    actual: ye[i],
                    fitted: fe,
                    lopo: le,
                    lopo_error: rel_err(le, ye[i]),
                },
                lopo_events: fold.selected.iter().map(|&j| names[j].clone()).collect(),
            });
        }
        let errs = |f: fn(&ProgramErrors) -> f64| mean(programs.iter().map(f));
        let summary = CoreTypeSummary {
            fit_error: TargetErrors {
                speedup: errs(|p| rel_err(p.speedup.fitted, p.speedup.actual)),
                energy_ratio: errs(|p| rel_err(p.energy_ratio.fitted, p.energy_ratio.actual)),
            },
            lopo_error: TargetErrors {
                speedup: errs(|p| p.speedup.lopo_error),
                energy_ratio: errs(|p| p.energy_ratio.lopo_error),
            },
            dropped: full.dropped.clone(),
            components: full.components.clone(),
            ranking: full.ranking.clone(),
            programs,
        };
        let events: Vec<String> = full.selected.iter().map(|&j| names[j].clone()).collect();
        let linear = |(b0, b): &(f64, Vec<f64>)| Linear {
            intercept: *b0,
            coefficients: events.iter().cloned().zip(b.iter().copied()).collect(),
        };
        entries.insert(
            ct.clone(),
            CoreModel::new(events.clone(), linear(&full.speedup), linear(&full.energy)),
        );
        summaries.insert(ct.clone(), summary);
    }

    let all = || summaries.values().flat_map(|s| s.programs.iter());
    let summary = TrainingSummary {
        table: opts.source.clone(),
        programs: shape.programs.clone(),
        events_requested: opts.events,
        max_counters: opts.max_counters,
        ranking_rule: RANKING_RULE.into(),
        notes,
        fit_error: TargetErrors {
            speedup: mean(all().map(|p| rel_err(p.speedup.fitted, p.speedup.actual))),
            energy_ratio: mean(
                all().map(|p| rel_err(p.energy_ratio.fitted, p.energy_ratio.actual)),
            ),
        },
        lopo_error: TargetErrors {
            speedup: mean(all().map(|p| p.speedup.lopo_error)),
            energy_ratio: mean(all().map(|p| p.energy_ratio.lopo_error)),
        },
        core_types: summaries,
    };
    Ok(Model::new(
        &opts.name,
        Source::Trained {
            table: opts.source.clone(),
        },
        true,
        entries,
        Some(summary),
    )?)
}
