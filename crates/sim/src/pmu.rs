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

/// Phases whose work a reading keeps apart before turning it into counts.
const SLOTS: usize = 4;

/// A thread's reading in progress. Work is summed per phase (a thread goes
/// through few) and turned into counts only when the reading is taken or
/// more phases come up, so retiring work costs a few compares and an add.
#[derive(Clone, Copy)]
struct Reading {
    /// Core type the reading is taken on.
    ty: u32,
    /// Slots in use.
    used: u32,
    phase: [u32; SLOTS],
    work: [f64; SLOTS],
    /// Time on the core the reading covers so far, ns.
    ns: f64,
}

pub(crate) struct Pmu {
    model: Arc<dyn CounterModelPredictor>,
    types: Vec<TypeSel>,
    /// Largest event set over the core types.
    stride: usize,
    /// Per (phase, core type), `stride` wide: expected counts per work unit
    /// of that type's events.
    per_work: Vec<f64>,
    /// Per (phase, core type): work counted so far (whole-run totals are
    /// these times `per_work`, so readings never touch them).
    phase_work: Vec<f64>,
    /// Per core type: time threads retired work there, ns.
    type_ns: Vec<f64>,
    /// Per thread: counts of the reading in progress (`stride` each).
    acc: Vec<f64>,
    readings: Vec<Reading>,
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
        Ok(Pmu {
            model,
            types,
            stride,
            per_work: Vec::new(),
            phase_work: Vec::new(),
            type_ns: vec![0.0; topo.core_types.len()],
            acc: Vec::new(),
            readings: Vec::new(),
            scratch: vec![0.0; stride],
            // Another fixed constant than the energy stream's (engine/mod.rs).
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
            self.phase_work.push(0.0);
        }
    }

    pub(crate) fn add_thread(&mut self) {
        self.acc.resize(self.acc.len() + self.stride, 0.0);
        self.readings.push(Reading {
            ty: NO_TYPE,
            used: 0,
            phase: [0; SLOTS],
            work: [0.0; SLOTS],
            ns: 0.0,
        });
    }

    /// Thread `t` retired `done` work units of `phase` in `ns` on a core of
    /// type `ty`. A reading covers one core type: work on another type ends
    /// the reading in progress (too short to have been read) unread.
    #[inline]
    pub(crate) fn add(&mut self, t: usize, ty: usize, phase: u32, done: f64, ns: f64) {
        if self.readings[t].ty != ty as u32 {
            self.retype(t, ty);
        }
        let r = &mut self.readings[t];
        r.ns += ns;
        let n = r.used as usize;
        if let Some(j) = r.phase[..n].iter().position(|&p| p == phase) {
            r.work[j] += done;
        } else {
            self.new_slot(t, phase, done);
        }
    }

    /// The reading in progress was on another core type: it is dropped
    /// unread (its work still counts in the totals).
    #[cold]
    fn retype(&mut self, t: usize, ty: usize) {
        self.expand(t);
        let old = self.readings[t].ty;
        if old != NO_TYPE {
            self.type_ns[old as usize] += std::mem::take(&mut self.readings[t].ns);
        }
        self.acc[t * self.stride..][..self.stride].fill(0.0);
        self.readings[t].ty = ty as u32;
    }

    #[cold]
    fn new_slot(&mut self, t: usize, phase: u32, done: f64) {
        if self.readings[t].used as usize == SLOTS {
            self.expand(t);
        }
        let r = &mut self.readings[t];
        let n = r.used as usize;
        r.phase[n] = phase;
        r.work[n] = done;
        r.used += 1;
    }

    /// Turns thread `t`'s pending work into counts.
    fn expand(&mut self, t: usize) {
        let r = &mut self.readings[t];
        let s = self.stride;
        for k in 0..r.used as usize {
            let i = r.phase[k] as usize * self.types.len() + r.ty as usize;
            let w = r.work[k];
            let row = &self.per_work[i * s..][..s];
            let acc = &mut self.acc[t * s..][..s];
            for (a, x) in acc.iter_mut().zip(row) {
                *a += w * x;
            }
            self.phase_work[i] += w;
        }
        r.used = 0;
    }

    /// Reads thread `t`'s counters: a prediction, or `None` (keep the
    /// previous one) when the reading is too short or the model declines.
    /// A short reading goes on counting.
    pub(crate) fn read(&mut self, t: usize) -> Option<(f64, f64)> {
        if self.readings[t].ns < MIN_READING_NS {
            return None;
        }
        self.expand(t);
        let r = &mut self.readings[t];
        let ty = r.ty as usize;
        self.type_ns[ty] += std::mem::take(&mut r.ns);
        let s = self.stride;
        let acc = &mut self.acc[t * s..][..s];
        for ((x, a), &e) in self.scratch.iter_mut().zip(acc).zip(&self.types[ty].events) {
            *x = counters::read(e, std::mem::take(a), &mut self.rng);
        }
        self.ask(ty)
    }

    /// The prediction for a thread that has not run: its first `phase` read
    /// on core type `ty` over [`INITIAL_READING_WORK`].
    pub(crate) fn predict_phase(&mut self, phase: u32, ty: usize) -> Option<(f64, f64)> {
        let row = (phase as usize * self.types.len() + ty) * self.stride;
        for (j, &e) in self.types[ty].events.iter().enumerate() {
            let v = INITIAL_READING_WORK * self.per_work[row + j];
            self.scratch[j] = counters::read(e, v, &mut self.rng);
        }
        self.ask(ty)
    }

    /// Hands the reading in `scratch` (taken on type `ty`) to the model; a
    /// prediction that is not a finite number counts as none.
    fn ask(&self, ty: usize) -> Option<(f64, f64)> {
        // `scratch` holds the counts in the order the model asked for them.
        let sel = &self.types[ty];
        self.model
            .predict_in_order(&sel.name, &self.scratch[..sel.events.len()])
            .filter(|(s, e)| s.is_finite() && e.is_finite())
    }

    /// Whole-run totals per core type of the machine, each event read once
    /// (with its noise) at the end, as one `perf stat` per run would.
    pub(crate) fn finish(mut self) -> Vec<CounterTotals> {
        for t in 0..self.readings.len() {
            self.expand(t);
            let r = &mut self.readings[t];
            if r.ty != NO_TYPE {
                self.type_ns[r.ty as usize] += std::mem::take(&mut r.ns);
            }
        }
        let (s, nt) = (self.stride, self.types.len());
        let mut out = Vec::new();
        for (ty, sel) in self.types.iter().enumerate() {
            if !sel.used {
                continue;
            }
            let mut sums = vec![0.0; s];
            for (i, w) in self.phase_work.iter().enumerate().skip(ty).step_by(nt) {
                for (x, c) in sums.iter_mut().zip(&self.per_work[i * s..][..s]) {
                    *x += w * c;
                }
            }
            let counts = sel
                .events
                .iter()
                .zip(&sel.names)
                .zip(&sums)
                .map(|((&e, n), &v)| (n.clone(), counters::read(e, v, &mut self.rng)))
                .collect();
            out.push(CounterTotals {
                core_type: sel.name.clone(),
                busy_ns: self.type_ns[ty],
                counts,
            });
        }
        out
    }
}
