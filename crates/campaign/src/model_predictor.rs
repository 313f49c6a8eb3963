//! A trained counter model (`colab_model::Model`) as the simulator's
//! counter-based predictor, and the `model` predictor labels of ablations.

use colab_model::Model;
use colab_sim::{CounterModelPredictor, CounterPredictorRef, PredictorKind};
use std::collections::BTreeMap;
use std::sync::{Mutex, OnceLock};

/// The model policies read by default in `@model`: trained on the
/// simulator's reference big and little cores.
pub const DEFAULT_MODEL: &str = "sim-reference";

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
        let p = self.model.predict(core_type, counts).ok()?;
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
            for ev in self.model.events(core_type) {
                h = mix(h ^ counts(ev).unwrap_or(0.0).to_bits());
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

/// `model`, `model:NAME` (built-in) or `model:FILE.json`, optionally with
/// `+R` extra mean relative error: the predictor, loaded once per label.
pub fn model_predictor(label: &str) -> Result<PredictorKind, String> {
    static CACHE: OnceLock<Mutex<BTreeMap<String, PredictorKind>>> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(BTreeMap::new()));
    if let Some(k) = cache.lock().expect("cache lock").get(label) {
        return Ok(k.clone());
    }
    let (base, extra_err) = match label.rsplit_once('+') {
        Some((b, r)) => match r.parse::<f64>() {
            Ok(r) if r.is_finite() && r >= 0.0 => (b, r),
            _ => return Err(format!("extra error '{r}' is not a non-negative number")),
        },
        None => (label, 0.0),
    };
    let name = match base {
        "model" => DEFAULT_MODEL,
        _ => base
            .strip_prefix("model:")
            .ok_or_else(|| "expected model, model:NAME or model:FILE".to_string())?,
    };
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
