//! COLAB's switches and the choices the paper leaves open (`colab:` options).

use colab_labels::LabelParams;

#[derive(Clone, Debug, PartialEq)]
pub struct ColabParams {
    /// The labeller's period and thresholds (colab-labels).
    pub labels: LabelParams,
    /// Fairness bound for bottleneck-first selection, in units of sched_latency.
    pub fairness_window: f64,
    /// Energy-aware extension (colab-tpds 5.3, Fig. 7): the allocator labels
    /// threads by hyper(t) = w_s * speedup(t) + w_e * energy(t) instead of by
    /// speedup, where energy(t) is the predicted big/little energy ratio. The
    /// labels keep the speedup rule: thirds of hyper's range over the
    /// machine. Plain COLAB is w_s = 1, w_e = 0; a negative w_e penalises
    /// threads that cost more energy on the big cores.
    pub speedup_weight: f64,
    pub energy_weight: f64,
    /// Which of COLAB's mechanisms are on (all of them by default: the
    /// paper's COLAB); switched off one at a time for ablations.
    pub mech: Mechanisms,
    /// How speedup labels are given.
    pub label_mode: LabelMode,
}

/// COLAB's mechanisms as switches (`colab:remote=off`, ...; see
/// [`ColabParams::parse_options`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Mechanisms {
    /// An idle big core preempts the most blocking thread running on a
    /// little core and runs it (Fig. 6, thread selector line 7).
    pub remote: bool,
    /// Most-blocking-first selection (`max_block_`); off: CFS order
    /// (smallest vruntime first), locally and in steals.
    pub block_first: bool,
    /// Scale-slice: big-core slices shrink and vruntime grows by the
    /// predicted speedup; off: plain CFS slices and vruntime.
    pub scale_slice: bool,
    /// Blocking labels send high-blocking low-speedup threads to any core
    /// (allocator) ; off: the allocator reads speedup labels only.
    pub block_labels: bool,
    /// scx_colab's first deviation (off in the paper's COLAB): a waking
    /// thread takes its previous core when that core is idle and in the
    /// cluster the allocator would choose from (any, for "any"), before the
    /// round-robin.
    pub prev_first: bool,
    /// scx_colab's second deviation (0 in the paper's COLAB): a big core
    /// takes over a little core's thread only once that thread has been on
    /// the little core this long (scx_colab: `--pull-min-us`, 1 ms).
    pub pull_min_ns: u64,
}

impl Default for Mechanisms {
    fn default() -> Self {
        Mechanisms {
            remote: true,
            block_first: true,
            scale_slice: true,
            block_labels: true,
            prev_first: false,
            pull_min_ns: 0,
        }
    }
}

/// Where speedup labels come from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LabelMode {
    /// The paper's reading: thirds of the machine's speedup range.
    Range,
    /// Thirds of the ranks among the threads runnable at each labelling
    /// (`colab_labels::rank_labels`); new threads start medium.
    Rank,
    /// Every thread medium: the allocator never restricts a cluster.
    Medium,
    /// Fixed thresholds: high at or above `hi`, low at or below `lo`.
    Fixed { hi: f64, lo: f64 },
}

/// Weights of `colab-e` when none are given: one unit of predicted speedup
/// against one unit of predicted big/little energy ratio. A neutral a-priori
/// choice (assumption), not fitted to any result.
pub const COLAB_E_DEFAULT_WEIGHTS: (f64, f64) = (1.0, -1.0);

impl Default for ColabParams {
    fn default() -> Self {
        ColabParams {
            labels: LabelParams::default(),
            fairness_window: 1.0,
            speedup_weight: 1.0,
            energy_weight: 0.0,
            mech: Mechanisms::default(),
            label_mode: LabelMode::Range,
        }
    }
}

impl ColabParams {
    /// The energy-aware extension with weights (w_s, w_e).
    pub fn energy_aware(speedup_weight: f64, energy_weight: f64) -> ColabParams {
        ColabParams {
            speedup_weight,
            energy_weight,
            ..ColabParams::default()
        }
    }

    pub(super) fn is_energy_aware(&self) -> bool {
        self.energy_weight != 0.0 || self.speedup_weight != 1.0
    }

    /// Applies `key=value` options separated by `:` (the part after
    /// `colab:` in a policy name): `remote`, `block-first`, `scale-slice`,
    /// `block-labels` = `on|off`; `labels` = `range|rank|medium|fixed`
    /// (`fixed` needs `hi=S` and `lo=S`, speedups with lo < hi); `window` =
    /// the fairness window in sched_latency units (a number >= 0, or `inf`).
    pub fn parse_options(&mut self, text: &str) -> Result<(), String> {
        let (mut hi, mut lo) = (None, None);
        let mut fixed = false;
        for opt in text.split(':').filter(|o| !o.is_empty()) {
            let (k, v) = opt
                .split_once('=')
                .ok_or_else(|| format!("option '{opt}' is not KEY=VALUE ({OPTIONS_HELP})"))?;
            let onoff = |v: &str| crate::on_off(k, v);
            let num = |v: &str| -> Result<f64, String> {
                match v.parse::<f64>() {
                    Ok(x) if x.is_finite() && x > 0.0 => Ok(x),
                    _ => Err(format!("'{k}={v}': expected a positive number")),
                }
            };
            match k {
                "remote" => self.mech.remote = onoff(v)?,
                "block-first" => self.mech.block_first = onoff(v)?,
                "scale-slice" => self.mech.scale_slice = onoff(v)?,
                "block-labels" => self.mech.block_labels = onoff(v)?,
                "prev-first" => self.mech.prev_first = onoff(v)?,
                "pull-min-us" => {
                    self.mech.pull_min_ns = v
                        .parse::<u64>()
                        .ok()
                        .filter(|&us| us <= 10_000_000)
                        .map(|us| us * 1000)
                        .ok_or_else(|| {
                            format!("'pull-min-us={v}': expected whole microseconds, 0 to 10000000")
                        })?
                }
                "window" => {
                    self.fairness_window = if v == "inf" {
                        f64::INFINITY
                    } else {
                        match v.parse::<f64>() {
                            Ok(x) if x.is_finite() && x >= 0.0 => x,
                            _ => {
                                return Err(format!("'window={v}': expected a number >= 0 or inf"))
                            }
                        }
                    }
                }
                "labels" => match v {
                    "range" => self.label_mode = LabelMode::Range,
                    "rank" => self.label_mode = LabelMode::Rank,
                    "medium" => self.label_mode = LabelMode::Medium,
                    "fixed" => fixed = true,
                    _ => {
                        return Err(format!(
                            "'labels' takes range, rank, medium or fixed, not '{v}'"
                        ))
                    }
                },
                "hi" => hi = Some(num(v)?),
                "lo" => lo = Some(num(v)?),
                _ => return Err(format!("unknown option '{k}' ({OPTIONS_HELP})")),
            }
        }
        match (fixed, hi, lo) {
            (true, Some(hi), Some(lo)) if lo < hi => self.label_mode = LabelMode::Fixed { hi, lo },
            (true, Some(_), Some(_)) => return Err("labels=fixed needs lo < hi".into()),
            (true, _, _) => return Err("labels=fixed needs hi=S and lo=S".into()),
            (false, None, None) => {}
            (false, _, _) => return Err("hi= and lo= go with labels=fixed".into()),
        }
        Ok(())
    }
}

/// The options `colab:` accepts, for messages and `colab list`.
pub const OPTIONS_HELP: &str = colab_options_help!();
