//! Predictor labels (`oracle`, `noisy:R`, `model`, `model:NAME+R`, ...) and
//! a trained counter model (`colab_model::Model`) as the simulator's
//! counter-based predictor.

use crate::CampaignError;
use colab_core::{Policy, Topology};
use colab_model::Model;
use colab_sim::{CounterModelPredictor, CounterPredictorRef, PredictorKind};
use std::collections::BTreeMap;
use std::sync::{Mutex, OnceLock};

/// The predictor policies read unless told otherwise: the model trained
/// from the simulator's counters for the machine they run on (colab-tpds
/// 5.1's method, done by `colab train --from-sim`).
pub const DEFAULT_PREDICTOR: &str = "model";

/// What a predictor label names, before it meets a machine.
#[derive(Clone, Debug, PartialEq)]
pub enum Predictor {
    /// A simulator-level predictor that needs no model (oracle, noisy).
    Direct(PredictorKind),
    /// `model[+R]`: the model trained from the simulator for the machine of
    /// each run, with `extra_err` mean relative error added.
    MachineModel { extra_err: f64 },
    /// `model:NAME[+R]` or `model:FILE[+R]`: one fixed model everywhere.
    Fixed(PredictorKind),
}

/// Why a label was refused.
#[derive(Debug)]
pub enum LabelError {
    /// Not a predictor label at all.
    Unknown,
    /// A model label whose model could not be had.
    Model(String),
}

/// Parses a predictor label; loads a named model (once per label).
/// A policy spelling and its predictor label, after its last `@`
/// (`colab@oracle`, `rota@3@noisy`); an `@` followed by a digit names a
/// preset (`rota@3`), not a predictor (no predictor label starts with one).
pub fn split_predictor(name: &str) -> (&str, Option<&str>) {
    match name.rsplit_once('@') {
        Some((base, label)) if !label.starts_with(|c: char| c.is_ascii_digit()) => {
            (base, Some(label))
        }
        _ => (name, None),
    }
}

pub fn parse_predictor(label: &str) -> Result<Predictor, LabelError> {
    if label.starts_with("model") {
        let (base, extra_err) = split_extra(label).map_err(LabelError::Model)?;
        if base == "model" {
            return Ok(Predictor::MachineModel { extra_err });
        }
        return model_predictor(label)
            .map(Predictor::Fixed)
            .map_err(LabelError::Model);
    }
    let kind = match label.split_once(':') {
        None if label == "oracle" => PredictorKind::Oracle,
        None if label == "noisy" => PredictorKind::default(),
        Some(("noisy", r)) => match r.parse::<f64>() {
            Ok(r) if r.is_finite() && r >= 0.0 => PredictorKind::Noisy {
                mean_abs_err: r,
                energy_mean_abs_err: r,
            },
            _ => return Err(LabelError::Unknown),
        },
        Some(("constant", v)) => match v.parse::<f64>() {
            Ok(v) if v.is_finite() && v > 0.0 => PredictorKind::Constant { speedup: v },
            _ => return Err(LabelError::Unknown),
        },
        _ => return Err(LabelError::Unknown),
    };
    Ok(Predictor::Direct(kind))
}

/// `LABEL+R` as (LABEL, R); R = 0 without `+`.
fn split_extra(label: &str) -> Result<(&str, f64), String> {
    match label.rsplit_once('+') {
        Some((b, r)) => match r.parse::<f64>() {
            Ok(r) if r.is_finite() && r >= 0.0 => Ok((b, r)),
            _ => Err(format!("extra error '{r}' is not a non-negative number")),
        },
        None => Ok((label, 0.0)),
    }
}

/// Models trained for machines, by the machine's core types and costs (what
/// training depends on), so each is trained once per process.
type MachineModels = BTreeMap<String, Result<Model, String>>;

fn machine_key(topo: &Topology) -> String {
    let mut types: Vec<_> = topo
        .core_types
        .iter()
        .enumerate()
        .filter(|(i, _)| topo.core_type_of.contains(i))
        .map(|(_, ct)| format!("{ct:?}"))
        .collect();
    types.sort();
    format!("{types:?} {:?}", topo.costs)
}

/// The model `colab train --from-sim` makes for `topo` (trained on first
/// use, then cached).
///
/// Call it outside parallel jobs (`run` resolves every predictor before it
/// starts them): it holds a lock while training, and training is parallel.
pub fn machine_model(topo: &Topology) -> Result<Model, String> {
    static CACHE: OnceLock<Mutex<MachineModels>> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(BTreeMap::new()));
    let mut c = cache.lock().expect("cache lock");
    c.entry(machine_key(topo))
        .or_insert_with(|| {
            crate::training::train_for_machine(topo)
                .map_err(|e| format!("training a model for {} from the simulator: {e}", topo.name))
        })
        .clone()
}

impl Predictor {
    /// The simulator's predictor for `policy` on machine `topo`.
    ///
    /// A policy that never reads predictions gets the oracle: it costs no
    /// counter work and gives the same schedule (a test checks it). So does
    /// every policy on a machine with one core type, where every speedup is
    /// 1 by definition and no model can be trained (it needs two types).
    pub fn for_machine(
        &self,
        policy: &dyn Policy,
        topo: &Topology,
    ) -> Result<PredictorKind, String> {
        if !policy.reads_predictions() {
            return Ok(PredictorKind::Oracle);
        }
        match self {
            Predictor::Direct(k) | Predictor::Fixed(k) => Ok(k.clone()),
            Predictor::MachineModel { .. }
                if (0..topo.core_types.len())
                    .filter(|t| topo.core_type_of.contains(t))
                    .count()
                    < 2 =>
            {
                Ok(PredictorKind::Oracle)
            }
            Predictor::MachineModel { extra_err } => Ok(PredictorKind::Counters(
                CounterPredictorRef::new(ModelPredictor {
                    model: machine_model(topo)?,
                    extra_err: *extra_err,
                }),
            )),
        }
    }
}

/// The error for a label `policy@label` (or the spec's label) refused.
pub(crate) fn label_error(policy: &str, label: &str, e: LabelError) -> CampaignError {
    match e {
        LabelError::Unknown => CampaignError::Predictor {
            policy: policy.to_string(),
            label: label.to_string(),
        },
        LabelError::Model(problem) => CampaignError::Model {
            policy: policy.to_string(),
            problem,
        },
    }
}

/// A model, optionally with extra relative error for ablations.
pub struct ModelPredictor {
    pub model: Model,
    /// Mean relative error added to each prediction (0: none).
    pub extra_err: f64,
}

/// splitmix64's finaliser: spreads one 64-bit word over all bits.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl CounterModelPredictor for ModelPredictor {
    fn events(&self, core_type: &str) -> Vec<String> {
        self.model.events(core_type).to_vec()
    }

    fn predict(&self, core_type: &str, counts: &dyn Fn(&str) -> Option<f64>) -> Option<(f64, f64)> {
        let values = self
            .model
            .events(core_type)
            .iter()
            .map(|e| counts(e))
            .collect::<Option<Vec<f64>>>()?;
        self.predict_in_order(core_type, &values)
    }

    fn predict_in_order(&self, core_type: &str, values: &[f64]) -> Option<(f64, f64)> {
        let p = self.model.predict_in_order(core_type, values).ok()?;
        // The paper's energy model is not a big/little ratio: read it as
        // "no energy information" rather than feed a wrong scale to colab-e.
        let energy = if self.model.energy_is_ratio() {
            p.energy_ratio
        } else {
            1.0
        };
        let (mut s, mut e) = (p.speedup, energy);
        if self.extra_err > 0.0 {
            // The trait is stateless (shared by parallel runs), so the error
            // comes from the reading itself: a hash of its counts, which
            // differ from reading to reading. Deterministic for a given run.
            let mut h = 0u64;
            for v in values {
                h = mix(h ^ v.to_bits());
            }
            let unit = |x: u64| (x >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0;
            s *= 1.0 + 2.0 * self.extra_err * unit(mix(h ^ 1));
            e *= 1.0 + 2.0 * self.extra_err * unit(mix(h ^ 2));
        }
        // A linear model can leave its range; keep predictions physical (the
        // same floor as the noisy predictor).
        Some((s.max(0.1), e.max(0.1)))
    }
}

/// `model:NAME` (built-in) or `model:FILE.json`, optionally with `+R` extra
/// mean relative error: the predictor, loaded once per label.
pub fn model_predictor(label: &str) -> Result<PredictorKind, String> {
    static CACHE: OnceLock<Mutex<BTreeMap<String, PredictorKind>>> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(BTreeMap::new()));
    if let Some(k) = cache.lock().expect("cache lock").get(label) {
        return Ok(k.clone());
    }
    let (base, extra_err) = split_extra(label)?;
    let name = base
        .strip_prefix("model:")
        .ok_or_else(|| "expected model:NAME or model:FILE".to_string())?;
    let model = match Model::builtin(name) {
        Some(m) => m,
        None => {
            let text = std::fs::read_to_string(name).map_err(|e| {
                format!("'{name}' is neither a built-in model nor a readable file: {e}")
            })?;
            Model::from_json(&text).map_err(|e| format!("{name}: {e}"))?
        }
    };
    let kind = PredictorKind::Counters(CounterPredictorRef::new(ModelPredictor {
        model,
        extra_err,
    }));
    cache
        .lock()
        .expect("cache lock")
        .insert(label.to_string(), kind.clone());
    Ok(kind)
}

/// The core types of `topo` a model behind `kind` has no entry for.
pub fn uncovered_core_types(kind: &PredictorKind, topo: &colab_core::Topology) -> Vec<String> {
    let PredictorKind::Counters(p) = kind else {
        return Vec::new();
    };
    let mut names: Vec<String> = topo
        .clusters
        .iter()
        .map(|c| topo.core_types[c.core_type].name.clone())
        .filter(|n| p.0.events(n).is_empty())
        .collect();
    names.sort();
    names.dedup();
    names
}

/// [`parse_predictor`] with the messages the command line gives for a bad
/// `--predictor LABEL` (what labels exist, or why the model failed).
pub fn checked_predictor(label: &str) -> anyhow::Result<Predictor> {
    parse_predictor(label).map_err(|e| match e {
        LabelError::Unknown => anyhow::anyhow!(
            "--predictor {label}: expected model, model:NAME, model:FILE (each optionally +R, e.g. model+0.10), noisy, noisy:R, oracle or constant:S (S > 0)"
        ),
        LabelError::Model(problem) => anyhow::anyhow!("--predictor {label}: {problem}"),
    })
}

/// What `policy` reads its predictions from on `topo` under the predictor
/// `label`; an error when the label is bad or its model does not cover
/// every core type of the machine.
pub fn predictor_on(label: &str, policy: &str, topo: &Topology) -> anyhow::Result<PredictorKind> {
    use anyhow::Context;
    let pol = crate::policy_by_name(policy)?;
    let kind = checked_predictor(label)?
        .for_machine(pol.as_ref(), topo)
        .map_err(anyhow::Error::msg)
        .with_context(|| format!("--predictor {label}"))?;
    let missing = uncovered_core_types(&kind, topo);
    if !missing.is_empty() {
        anyhow::bail!(
            "--predictor {label}: the model has no entry for core type(s) {} of {}",
            missing.join(", "),
            topo.name
        );
    }
    Ok(kind)
}
