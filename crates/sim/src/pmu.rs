//! The simulated PMU: per-thread counting of the events a counter-based
//! predictor asks for, readings handed to it, and whole-run totals. Exists
//! only when a run uses [`crate::PredictorKind::Counters`]; the other modes do
//! no counter work at all.

use crate::counters::{self, CounterError, Event, Signature, MIN_READING_NS};
use crate::predict::{CounterModelPredictor, SimRng};
use colab_core::Topology;
use rand::SeedableRng;
use serde::Serialize;
use std::sync::Arc;

/// No reading in progress.
const NO_TYPE: u32 = u32::MAX;

/// Work a new thread's first prediction is made from: its first phase read
/// for 1 ms of reference work on the fastest core type, as the other
/// predictors predict a new thread from its first phase.
const INITIAL_READING_WORK: f64 = 1_000_000.0;

/// Whole-run counts of the events read on one core type: what `perf stat`
/// would print for a run (summed over every thread).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct CounterTotals {
    pub core_type: String,
    /// Time threads spent retiring work on cores of this type, ns.
    pub busy_ns: f64,
    /// (event, count) in the order the predictor asked for them.
    pub counts: Vec<(String, f64)>,
}

impl CounterTotals {
    pub fn get(&self, event: &str) -> Option<f64> {
        self.counts
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(event))
            .map(|(_, v)| *v)
    }
}

struct TypeSel {
    name: String,
    used: bool,
    events: Vec<Event>,
    /// The predictor's own spelling of each event.
    names: Vec<String>,
}

pub(crate) struct Pmu {
    model: Arc<dyn CounterModelPredictor>,
    types: Vec<TypeSel>,
    /// Largest event set over the core types: the row width below.
    stride: usize,
    /// Per (phase, core type): expected counts per work unit of that type's events.
    per_work: Vec<f64>,
    /// Per thread: counts of the reading in progress, its length on the
    /// core (ns) and the core type it is taken on.
    acc: Vec<f64>,
    acc_ns: Vec<f64>,
    acc_type: Vec<u32>,
    /// Per (core type, event): expected counts of the whole run so far.
    totals: Vec<f64>,
    totals_ns: Vec<f64>,
    scratch: Vec<f64>,
    /// The counters' own random stream: reading noise changes no other draw.
    rng: SimRng,
}

impl Pmu {
    /// Asks the model for its events on every core type the machine has and
    /// checks them against the type's counter limit.
    pub(crate) fn new(
        model: Arc<dyn CounterModelPredictor>,
        topo: &Topology,
        seed: u64,
    ) -> Result<Pmu, CounterError> {
        let mut types = Vec::new();
        for (i, ct) in topo.core_types.iter().enumerate() {
            let used = topo.core_type_of.contains(&i);
            let names = if used {
                model.events(&ct.name)
            } else {
                Vec::new()
            };
            let events = counters::select(ct, &names)?;
            types.push(TypeSel {
                name: ct.name.clone(),
                used,
                events,
                names,
            });
        }
        let stride = types.iter().map(|t| t.events.len()).max().unwrap_or(0);
        let ntypes = types.len();
        Ok(Pmu {
            model,
            types,
            stride,
            per_work: Vec::new(),
            acc: Vec::new(),
            acc_ns: Vec::new(),
            acc_type: Vec::new(),
            totals: vec![0.0; ntypes * stride],
            totals_ns: vec![0.0; ntypes],
            scratch: vec![0.0; stride],
            // Another fixed constant than the energy stream's (engine.rs).
            rng: SimRng::seed_from_u64(seed ^ 0xd1b5_4a32_d192_ed03),
        })
    }

    /// Appends the per-work counts of the next phase of the phase table.
    pub(crate) fn add_phase(&mut self, sig: &Signature, m: f64, topo: &Topology) {
        for (ct, sel) in topo.core_types.iter().zip(&self.types) {
            let all = counters::per_work(sig, m, ct);
            let mut row = vec![0.0; self.stride];
            for (r, e) in row.iter_mut().zip(&sel.events) {
                *r = all[*e as usize];
            }
            self.per_work.extend(row);
        }
    }

    pub(crate) fn add_thread(&mut self) {
        self.acc.resize(self.acc.len() + self.stride, 0.0);
        self.acc_ns.push(0.0);
        self.acc_type.push(NO_TYPE);
    }

    /// Thread `t` retired `done` work units of `phase` in `ns` on a core of
    /// type `ty`. A reading covers one core type: work on another type ends
    /// the reading in progress (too short to have been read) unread.
    #[inline]
    pub(crate) fn add(&mut self, t: usize, ty: usize, phase: u32, done: f64, ns: f64) {
        if self.acc_type[t] != ty as u32 {
            self.flush(t);
            self.acc_type[t] = ty as u32;
        }
        let s = self.stride;
        let n = self.types[ty].events.len();
        let row = (phase as usize * self.types.len() + ty) * s;
        let acc = &mut self.acc[t * s..t * s + n];
        for (a, w) in acc.iter_mut().zip(&self.per_work[row..row + n]) {
            *a += done * w;
        }
        self.acc_ns[t] += ns;
    }

    /// Moves thread `t`'s reading in progress into the totals, unread.
    fn flush(&mut self, t: usize) {
        let ty = self.acc_type[t];
        if ty == NO_TYPE {
            return;
        }
        let s = self.stride;
        let ty = ty as usize;
        for j in 0..s {
            self.totals[ty * s + j] += std::mem::take(&mut self.acc[t * s + j]);
        }
        self.totals_ns[ty] += std::mem::take(&mut self.acc_ns[t]);
    }

    /// Reads thread `t`'s counters: a prediction, or `None` (keep the
    /// previous one) when the reading is too short or the model declines.
    /// A short reading goes on counting.
    pub(crate) fn read(&mut self, t: usize) -> Option<(f64, f64)> {
        let ty = self.acc_type[t];
        if ty == NO_TYPE || self.acc_ns[t] < MIN_READING_NS {
            return None;
        }
        let ty = ty as usize;
        let s = self.stride;
        for (j, &e) in self.types[ty].events.iter().enumerate() {
            let v = std::mem::take(&mut self.acc[t * s + j]);
            self.totals[ty * s + j] += v;
            self.scratch[j] = counters::read(e, v, &mut self.rng);
        }
        self.totals_ns[ty] += std::mem::take(&mut self.acc_ns[t]);
        self.ask(ty)
    }

    /// The prediction for a thread that has not run: its first `phase` read
    /// on core type `ty` over [`INITIAL_READING_WORK`].
    pub(crate) fn predict_phase(&mut self, phase: u32, ty: usize) -> Option<(f64, f64)> {
        let s = self.stride;
        let row = (phase as usize * self.types.len() + ty) * s;
        for (j, &e) in self.types[ty].events.iter().enumerate() {
            let v = INITIAL_READING_WORK * self.per_work[row + j];
            self.scratch[j] = counters::read(e, v, &mut self.rng);
        }
        self.ask(ty)
    }

    /// Hands the reading in `scratch` (taken on type `ty`) to the model; a
    /// prediction that is not a finite number counts as none.
    fn ask(&self, ty: usize) -> Option<(f64, f64)> {
        let sel = &self.types[ty];
        let vals = &self.scratch;
        let lookup = |q: &str| {
            sel.names
                .iter()
                .position(|n| n == q)
                .or_else(|| {
                    let e = Event::from_name(q)?;
                    sel.events.iter().position(|x| *x == e)
                })
                .map(|j| vals[j])
        };
        self.model
            .predict(&sel.name, &lookup)
            .filter(|(s, e)| s.is_finite() && e.is_finite())
    }

    /// Whole-run totals per core type of the machine, each event read once
    /// (with its noise) at the end, as one `perf stat` per run would.
    pub(crate) fn finish(mut self) -> Vec<CounterTotals> {
        for t in 0..self.acc_type.len() {
            self.flush(t);
        }
        let s = self.stride;
        let mut out = Vec::new();
        for (ty, sel) in self.types.iter().enumerate() {
            if !sel.used {
                continue;
            }
            let counts = sel
                .events
                .iter()
                .zip(&sel.names)
                .enumerate()
                .map(|(j, (&e, n))| {
                    let v = counters::read(e, self.totals[ty * s + j], &mut self.rng);
                    (n.clone(), v)
                })
                .collect();
            out.push(CounterTotals {
                core_type: sel.name.clone(),
                busy_ns: self.totals_ns[ty],
                counts,
            });
        }
        out
    }
}
