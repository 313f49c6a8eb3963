//! Model files: per core type, the events a model reads and two linear
//! models (speedup, energy ratio) over event counts per cycle.
//!
//! JSON, versioned (`format_version`, currently 1):
//!
//! ```json
//! {
//!   "format_version": 1,
//!   "name": "my-board",
//!   "source": { "kind": "trained", "table": "train.csv" },
//!   "normaliser": "CPU_CYCLES",
//!   "energy_is_ratio": true,
//!   "core_types": {
//!     "big": {
//!       "events": ["L1D_CACHE_REFILL", "L2D_CACHE"],
//!       "speedup": { "intercept": 2.1, "coefficients": { "L1D_CACHE_REFILL": -7.9, "L2D_CACHE": 11.2 } },
//!       "energy_ratio": { "intercept": 1.9, "coefficients": { "L1D_CACHE_REFILL": 2.5, "L2D_CACHE": -3.4 } }
//!     }
//!   },
//!   "training": { ... }
//! }
//! ```
//!
//! A prediction on core type `c` uses the counts of a thread's work measured
//! on `c`: `speedup = intercept + sum(coefficient_e * count_e / CPU_CYCLES)`.
//! The entry `"*"` serves core types without an entry of their own.
//! `training` (optional) is the summary `colab train` wrote.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::events::CPU_CYCLES;
use crate::train::TrainingSummary;

/// The model file format this code reads and writes.
pub const FORMAT_VERSION: u32 = 1;

/// The core-type key that matches any core type without an entry.
pub const ANY_CORE_TYPE: &str = "*";

/// Names and one-line descriptions of the built-in models.
pub const BUILTIN_MODELS: &[(&str, &str)] = &[
    (
        "colab-tpds-armv8",
        "colab-tpds Fig. 5b: the paper's ARMv8 speedup and energy models (core-type agnostic)",
    ),
    (
        "sim-reference",
        "trained on the simulator's reference big and little cores (`colab train --from-sim --name sim-reference`)",
    ),
];

/// `colab train --from-sim --name sim-reference` on the reference 2B2S
/// machine, stored as written (regenerate it after changing the counter
/// model, the benchmark models or the training code).
const SIM_REFERENCE_JSON: &str = include_str!("../builtin/sim-reference.json");

#[derive(Debug, Error)]
pub enum ModelError {
    #[error("model file: {0}")]
    Json(#[from] serde_json::Error),
    #[error("model file: missing field `{0}`")]
    MissingField(&'static str),
    #[error("model file: format_version {found} is not supported (this program reads version {FORMAT_VERSION})")]
    UnsupportedVersion { found: String },
    #[error("model `{model}`: {problem}")]
    Invalid { model: String, problem: String },
    #[error("model `{model}` has no entry for core type `{core_type}` (it has: {known})")]
    UnknownCoreType {
        model: String,
        core_type: String,
        known: String,
    },
    #[error(
        "model `{model}` needs counter {event} on core type `{core_type}`, which was not given"
    )]
    MissingCounter {
        model: String,
        core_type: String,
        event: String,
    },
    #[error("model `{model}`: counter {event} = {value} on core type `{core_type}` is not usable ({why})")]
    BadCounter {
        model: String,
        core_type: String,
        event: String,
        value: f64,
        why: &'static str,
    },
}

/// What a model predicts for a thread's recent work.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Prediction {
    /// Time on the slowest core type / time on the fastest.
    pub speedup: f64,
    /// Energy on the fastest core type / energy on the slowest for the same
    /// work, when [`Model::energy_is_ratio`]; otherwise the model's own units.
    pub energy_ratio: f64,
}

/// `intercept + sum(coefficients[e] * count_e / CPU_CYCLES)`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Linear {
    pub intercept: f64,
    pub coefficients: BTreeMap<String, f64>,
}

/// The two models of one core type and the events they read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CoreModel {
    events: Vec<String>,
    speedup: Linear,
    energy_ratio: Linear,
    /// `events` plus CPU_CYCLES: the counters to program.
    #[serde(skip)]
    counters: Vec<String>,
    /// (speedup, energy) coefficient of each of `events`, in their order:
    /// predictions run at every counter reading, so no map lookups there.
    #[serde(skip)]
    coefs: Vec<(f64, f64)>,
}

impl CoreModel {
    /// A core type's models; checked when it becomes part of a [`Model`].
    pub fn new(events: Vec<String>, speedup: Linear, energy_ratio: Linear) -> Self {
        let mut m = CoreModel {
            events,
            speedup,
            energy_ratio,
            counters: Vec::new(),
            coefs: Vec::new(),
        };
        m.fill_counters();
        m
    }

    fn fill_counters(&mut self) {
        self.counters = self.events.clone();
        self.counters.push(CPU_CYCLES.to_string());
        let coef = |l: &Linear, e: &str| l.coefficients.get(e).copied().unwrap_or(0.0);
        self.coefs = self
            .events
            .iter()
            .map(|e| (coef(&self.speedup, e), coef(&self.energy_ratio, e)))
            .collect();
    }

    /// The selected events (CPU_CYCLES not included).
    pub fn events(&self) -> &[String] {
        &self.events
    }
    pub fn speedup(&self) -> &Linear {
        &self.speedup
    }
    pub fn energy_ratio(&self) -> &Linear {
        &self.energy_ratio
    }

    fn check(&self) -> Result<(), String> {
        let mut seen: Vec<&String> = Vec::new();
        for e in &self.events {
            if e == CPU_CYCLES {
                return Err(format!(
                    "{CPU_CYCLES} is the normaliser and cannot be one of the events"
                ));
            }
            if e.trim().is_empty() || seen.contains(&e) {
                return Err(format!("event `{e}` is empty or listed twice"));
            }
            seen.push(e);
        }
        for (what, lin) in [
            ("speedup", &self.speedup),
            ("energy_ratio", &self.energy_ratio),
        ] {
            if !lin.intercept.is_finite() {
                return Err(format!("{what}: the intercept is not a finite number"));
            }
            // The prediction for a phase in which none of the events is
            // counted: a speedup or energy ratio at or below zero means
            // nothing, and the model would hand it to every such thread.
            if lin.intercept <= 0.0 {
                return Err(format!(
                    "{what}: the intercept {} is not positive (a thread with none of the events \
                     counted would be predicted {what} {})",
                    lin.intercept, lin.intercept
                ));
            }
            for e in &self.events {
                match lin.coefficients.get(e) {
                    None => return Err(format!("{what}: no coefficient for event {e}")),
                    Some(c) if !c.is_finite() => {
                        return Err(format!("{what}: the coefficient of {e} is not finite"))
                    }
                    _ => {}
                }
            }
            if let Some(extra) = lin.coefficients.keys().find(|k| !self.events.contains(k)) {
                return Err(format!(
                    "{what}: coefficient for {extra}, which is not in `events`"
                ));
            }
        }
        Ok(())
    }
}

/// Where a model came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Source {
    /// Fitted by `colab train` from a table.
    Trained { table: String },
    /// Shipped with the program, from a paper.
    Builtin { citation: String, note: String },
}

/// A speedup and energy model for some core types.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Model {
    format_version: u32,
    name: String,
    source: Source,
    normaliser: String,
    /// False when the energy output is not a fast/slow energy ratio (the
    /// paper's builtin model: see [`Model::builtin`]).
    energy_is_ratio: bool,
    core_types: BTreeMap<String, CoreModel>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    training: Option<TrainingSummary>,
}

impl Model {
    /// A model from its parts; fails on the same problems loading would.
    pub fn new(
        name: &str,
        source: Source,
        energy_is_ratio: bool,
        core_types: BTreeMap<String, CoreModel>,
        training: Option<TrainingSummary>,
    ) -> Result<Self, ModelError> {
        let mut m = Model {
            format_version: FORMAT_VERSION,
            name: name.to_string(),
            source,
            normaliser: CPU_CYCLES.to_string(),
            energy_is_ratio,
            core_types,
            training,
        };
        m.check()?;
        Ok(m)
    }

    fn check(&mut self) -> Result<(), ModelError> {
        let invalid = |problem: String| ModelError::Invalid {
            model: self.name.clone(),
            problem,
        };
        if self.name.trim().is_empty() {
            return Err(invalid("empty name".into()));
        }
        if self.normaliser != CPU_CYCLES {
            return Err(invalid(format!(
                "normaliser `{}` is not supported (only {CPU_CYCLES})",
                self.normaliser
            )));
        }
        if self.core_types.is_empty() {
            return Err(invalid("no core types".into()));
        }
        for (c, m) in &self.core_types {
            m.check()
                .map_err(|p| invalid(format!("core type `{c}`: {p}")))?;
        }
        for m in self.core_types.values_mut() {
            m.fill_counters();
        }
        Ok(())
    }

    /// Reads a model file (see the module docs). Errors name the missing or
    /// malformed field, or an unsupported `format_version`.
    pub fn from_json(text: &str) -> Result<Model, ModelError> {
        let v: serde_json::Value = serde_json::from_str(text)?;
        let version = v
            .get("format_version")
            .ok_or(ModelError::MissingField("format_version"))?;
        if version.as_u64() != Some(u64::from(FORMAT_VERSION)) {
            return Err(ModelError::UnsupportedVersion {
                found: version.to_string(),
            });
        }
        // From the text again, not the Value: serde then reports line and column.
        let mut m: Model = serde_json::from_str(text)?;
        m.check()?;
        Ok(m)
    }

    /// The model as pretty-printed JSON (reads back with [`Model::from_json`]).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("models serialise")
    }

    /// A built-in model by name (see [`BUILTIN_MODELS`]).
    pub fn builtin(name: &str) -> Option<Model> {
        match name {
            "colab-tpds-armv8" => Some(colab_tpds_armv8()),
            "sim-reference" => {
                Some(Model::from_json(SIM_REFERENCE_JSON).expect("the built-in model file parses"))
            }
            _ => None,
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }
    pub fn source(&self) -> &Source {
        &self.source
    }
    /// Whether [`Prediction::energy_ratio`] is a fast/slow energy ratio.
    pub fn energy_is_ratio(&self) -> bool {
        self.energy_is_ratio
    }
    pub fn training(&self) -> Option<&TrainingSummary> {
        self.training.as_ref()
    }
    /// Core types with an entry (`"*"` included if the model has it).
    pub fn core_types(&self) -> impl Iterator<Item = (&str, &CoreModel)> {
        self.core_types.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// The entry used for `core_type`: its own, else `"*"`.
    pub fn entry(&self, core_type: &str) -> Option<&CoreModel> {
        self.core_types
            .get(core_type)
            .or_else(|| self.core_types.get(ANY_CORE_TYPE))
    }

    /// The counters the model reads on `core_type`, CPU_CYCLES included
    /// (last); empty if the model has no entry for it.
    pub fn events(&self, core_type: &str) -> &[String] {
        self.entry(core_type).map_or(&[], |m| &m.counters)
    }

    /// Predicts from the counts of work measured on `core_type`; `counts`
    /// returns the count of an event (canonical name) over that work.
    /// Outputs are not clamped: a linear model can leave the range it was
    /// trained on, and the caller decides what to do with that.
    pub fn predict(
        &self,
        core_type: &str,
        counts: &dyn Fn(&str) -> Option<f64>,
    ) -> Result<Prediction, ModelError> {
        let m = self.entry_or_err(core_type)?;
        let values = m
            .counters
            .iter()
            .map(|event| {
                counts(event).ok_or_else(|| ModelError::MissingCounter {
                    model: self.name.clone(),
                    core_type: core_type.to_string(),
                    event: event.to_string(),
                })
            })
            .collect::<Result<Vec<f64>, _>>()?;
        self.predict_in_order(core_type, &values)
    }

    /// As [`Model::predict`], from the counts of [`Model::events`] in that
    /// order (what a PMU programmed with them reads back): no lookups by
    /// name, for callers that predict at every reading.
    pub fn predict_in_order(
        &self,
        core_type: &str,
        values: &[f64],
    ) -> Result<Prediction, ModelError> {
        let m = self.entry_or_err(core_type)?;
        if let Some(event) = m.counters.get(values.len()) {
            return Err(ModelError::MissingCounter {
                model: self.name.clone(),
                core_type: core_type.to_string(),
                event: event.to_string(),
            });
        }
        let cycles_at = m.counters.len() - 1;
        for (i, &v) in values.iter().enumerate().take(m.counters.len()) {
            let why = if !v.is_finite() {
                "not a finite number"
            } else if v < 0.0 {
                "negative"
            } else if i == cycles_at && v == 0.0 {
                "zero cycles"
            } else {
                continue;
            };
            return Err(ModelError::BadCounter {
                model: self.name.clone(),
                core_type: core_type.to_string(),
                event: m.counters[i].clone(),
                value: v,
                why,
            });
        }
        let cycles = values[cycles_at];
        let (mut speedup, mut energy_ratio) = (m.speedup.intercept, m.energy_ratio.intercept);
        for (v, (cs, ce)) in values.iter().zip(&m.coefs) {
            let rate = v / cycles;
            speedup += cs * rate;
            energy_ratio += ce * rate;
        }
        Ok(Prediction {
            speedup,
            energy_ratio,
        })
    }

    fn entry_or_err(&self, core_type: &str) -> Result<&CoreModel, ModelError> {
        self.entry(core_type)
            .ok_or_else(|| ModelError::UnknownCoreType {
                model: self.name.clone(),
                core_type: core_type.to_string(),
                known: self
                    .core_types
                    .keys()
                    .map(String::as_str)
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }
}

/// colab-tpds Fig. 5b, for any core type.
///
/// How we read the figure:
/// - The formulas end in "(-10.1942 * F) / G". Read literally only F would be
///   divided by the cycle count G. We divide every event A..F by G: the
///   paper's counts are totals over whole runs of different lengths, and only
///   rates per cycle make a model whose output does not grow with run length.
/// - The counts are those measured where the thread runs; the paper's kernel
///   reads the same seven PMUs on big and little cores, so one entry serves
///   every core type (`"*"`).
/// - The "Energy" column of Fig. 5a (7.87 for radix, 8.33 for ferret) and the
///   intercept 8.38 are not a big/little energy ratio in our sense: with
///   speedups of 1.5-2.5 a ratio of 8 would need big cores drawing 12-20x the
///   little cores' power, and at similar power a ratio must fall as speedup
///   rises (ferret's is higher than radix's). Section 5.1 validates it as
///   "big core energy consumption". So its output is an energy figure in the
///   paper's unstated units: higher means more energy on the big core, usable
///   to rank threads, not as a ratio. `energy_is_ratio` is false for it.
fn colab_tpds_armv8() -> Model {
    const EVENTS: [&str; 6] = [
        "L1D_CACHE_REFILL",
        "L1D_TLB_REFILL",
        "L1D_CACHE_WB",
        "L2D_CACHE",
        "L2D_CACHE_WB",
        "BUS_ACCESS",
    ];
    let lin = |intercept: f64, c: [f64; 6]| Linear {
        intercept,
        coefficients: EVENTS.iter().map(|e| e.to_string()).zip(c).collect(),
    };
    let entry = CoreModel::new(
        EVENTS.iter().map(|e| e.to_string()).collect(),
        lin(
            2.6185,
            [-7.8618, -25.7769, -34.2781, 11.2167, 44.3879, -10.1942],
        ),
        lin(
            8.3818,
            [-2.5524, -9.5247, -11.7908, 3.481476, 18.854182, -4.9607],
        ),
    );
    Model::new(
        "colab-tpds-armv8",
        Source::Builtin {
            citation: "Yu et al., Collaborative Heterogeneity-Aware OS Scheduler for Asymmetric \
                       Multicore Processors, IEEE TPDS 2021, Fig. 5b"
                .into(),
            note: "A..F = L1D_CACHE_REFILL, L1D_TLB_REFILL, L1D_CACHE_WB, L2D_CACHE, \
                   L2D_CACHE_WB, BUS_ACCESS, each divided by G = CPU_CYCLES (our reading of \
                   the figure's \"/ G\"). The energy output is the paper's big-core energy \
                   figure in unstated units, not a big/little ratio."
                .into(),
        },
        false,
        BTreeMap::from([(ANY_CORE_TYPE.to_string(), entry)]),
        None,
    )
    .expect("the built-in model is well formed")
}
