//! Scheduling policies as pure decision logic behind the
//! [`colab_core::Policy`] hook table: no I/O, no clocks, so the same code
//! drives the simulator and (later) the live sched_ext scheduler.

// COLAB's option list, one text for error messages and `colab list` alike (macros, so that `concat!` can build the descriptions).
macro_rules! colab_options_help {
    () => {
        "remote, block-first, scale-slice, block-labels, prev-first = on|off; \
labels = range|rank|medium|fixed (fixed: hi=S:lo=S); window = N|inf; pull-min-us = US \
(prev-first=on:pull-min-us=1000 is scx_colab's default)"
    };
}
pub mod bpfland;
pub mod camp;
pub mod cfs;
pub mod colab;
pub mod eevdf;
pub mod gts;
pub mod lavd;
pub mod propsp;
pub mod queue_index;
pub mod rota;
pub mod wash;

pub use bpfland::Bpfland;
pub use camp::{uf_analytical, uf_approx, Camp, CampParams, UtilityClass, Variant};
pub use cfs::{Cfs, CfsCore, CfsTunables};
pub use colab::{Colab, ColabParams};
pub use eevdf::Eevdf;
pub use gts::{Gts, GtsParams};
pub use lavd::Lavd;
pub use propsp::{Distribution, Hsp, HspParams, PropSp, PropSpParams, SfSource};
pub use rota::{Order, Rota, RotaParams};
pub use wash::{Wash, WashParams};

use colab_core::Policy;

/// Names accepted by [`by_name`], with a one-line description each.
pub const POLICIES: &[(&str, &str)] = &[
    (
        "cfs",
        "Linux CFS (vruntime, wake placement, load balancing), asymmetry-unaware",
    ),
    (
        "wash",
        "WASH: affinity control every 40 ms (ExecRank, LockRank) over CFS",
    ),
    (
        "colab",
        concat!(
            "COLAB: labels, hierarchical RR allocator, biased-global selector, scale-slice; \
colab:KEY=VALUE:... switches mechanisms (",
            colab_options_help!(),
            ")"
        )),
    (
        "colab-e",
        "Energy-aware COLAB (Fig. 7): labels from w_s*speedup + w_e*energy ratio; colab-e:WS:WE sets the weights (default 1:-1)",
    ),
    (
        "eevdf",
        "Linux 6.6+ EEVDF with capacity-aware wake-up placement and misfit migration",
    ),
    (
        "bpfland",
        "scx_bpfland 1.1.4 (sched_ext) with its defaults: earliest virtual deadline (runtime plus runtime since the last wake-up) from a shared queue, 1 ms slices divided among the waiting, idle core first, a woken thread drawn toward a faster waker's core",
    ),
    (
        "lavd",
        "scx_lavd 1.1.4 (sched_ext) with its defaults: latency-criticality virtual deadlines, per-cluster deadline queues with stealing, perf-criticality big/little stickiness",
    ),
    (
        "gts",
        "ARM big.LITTLE MP (GTS): per-cluster CFS, load-threshold up/down migration",
    ),
    (
        "hsp",
        "HSP: fast cores to the applications with the highest application-wide speedup, over CFS",
    ),
    (
        "propsp",
        "Prop-SP: fast-core credits in proportion to (speedup - 1) x weight, inter-core swaps, online SFs",
    ),
    (
        "propsp-static",
        "Prop-SP with each thread's SF fixed at its first estimate",
    ),
    (
        "camp",
        "CAMP: utility classes from speedup factor and TLP, boosted serial phases, over CFS",
    ),
    (
        "pa",
        "PA: CAMP's code with a constant speedup factor (TLP only)",
    ),
    (
        "sfd",
        "SFD: CAMP's code with one thread per application (speedup factor only)",
    ),
    (
        "rr",
        "RR: fast cores shared round-robin among all threads (CAMP's mechanism)",
    ),
    (
        "rota",
        "ROTA (ours): fast cores never idle and filled at wake-up; when no core is idle, threads \
queue on the shortest queue of any cluster; fast cores go first to a program's only runnable \
thread, then to the thread whose slowdown a unit of fast-core time lowers most \
(its progress per unit of time runnable, from a prior its program's threads share; summed over its program's threads once the program \
has finished a run and started again), which takes an occupant's core once that has held it as long as the waiting thread has run (2.25-20 ms); \
a program's threads take turns on its fast cores; previous core first; threads with bursts shorter than a cross-cluster move stay in their \
cluster; a takeover counts a run from the thread's last synchronisation; an idle fast core \
waits a migration's time for its short sleeper, a waking thread leaves an idle core to a \
sibling that blocked after it at the same barrier, and up to CFS's minimum slice for one whose program's other threads all run on fast cores and whose live threads fit them; \
each core's queue by CFS's rules, new threads in arrival order; \
rota@N is the Nth freeze, a preset results cite (rota is the newest, what scx_colab runs; `colab list rota` lists them); \
rota[@N]:KEY=VALUE:... switches mechanisms (`colab list rota` lists the switches)",
    ),
];

#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    #[error("unknown policy '{0}'{hint}: expected one of {list}", hint = colab_core::did_you_mean(.0, POLICIES.iter().map(|(n, _)| *n)), list = policy_names())]
    Unknown(String),
    #[error("policy '{name}': {problem}")]
    BadParams { name: String, problem: String },
}

/// The accepted policy names, comma-separated (for messages).
pub fn policy_names() -> String {
    POLICIES
        .iter()
        .map(|(n, _)| *n)
        .collect::<Vec<_>>()
        .join(", ")
}

/// A fresh policy instance by name, with its documented default parameters.
pub fn by_name(name: &str) -> Result<Box<dyn Policy>, PolicyError> {
    let lower = name.to_ascii_lowercase();
    if let Some(weights) = lower.strip_prefix("colab-e:") {
        let (ws, we) = parse_weights(name, weights)?;
        return Ok(Box::new(Colab::new(ColabParams::energy_aware(ws, we))));
    }
    let bad = |problem: String| PolicyError::BadParams {
        name: name.to_string(),
        problem,
    };
    if let Some(opts) = lower.strip_prefix("colab:") {
        let mut params = ColabParams::default();
        params.parse_options(opts).map_err(bad)?;
        return Ok(Box::new(Colab::new(params)));
    }
    if let Some(rest) = lower.strip_prefix("rota") {
        if rest.is_empty() || rest.starts_with([':', '@']) {
            let params = RotaParams::by_name(&lower).map_err(bad)?;
            return Ok(Box::new(Rota::new(params)));
        }
    }
    match lower.as_str() {
        "cfs" => Ok(Box::new(Cfs::new())),
        "wash" => Ok(Box::new(Wash::new(WashParams::default()))),
        "colab" => Ok(Box::new(Colab::new(ColabParams::default()))),
        "colab-e" => {
            let (ws, we) = colab::COLAB_E_DEFAULT_WEIGHTS;
            Ok(Box::new(Colab::new(ColabParams::energy_aware(ws, we))))
        }
        "eevdf" => Ok(Box::new(Eevdf::new())),
        "bpfland" => Ok(Box::new(Bpfland::new())),
        "gts" => Ok(Box::new(Gts::new(GtsParams::default()))),
        "lavd" => Ok(Box::new(Lavd::new())),
        "hsp" => Ok(Box::new(Hsp::new(HspParams::default()))),
        "propsp" => Ok(Box::new(PropSp::new(PropSpParams::default()))),
        "propsp-static" => Ok(Box::new(PropSp::new(PropSpParams {
            sf: SfSource::Static,
            ..PropSpParams::default()
        }))),
        "camp" => Ok(Box::new(Camp::new(Variant::Camp, CampParams::default()))),
        "pa" => Ok(Box::new(Camp::new(Variant::Pa, CampParams::default()))),
        "sfd" => Ok(Box::new(Camp::new(Variant::Sfd, CampParams::default()))),
        "rr" => Ok(Box::new(Camp::new(Variant::Rr, CampParams::default()))),
        _ => Err(PolicyError::Unknown(name.to_string())),
    }
}

/// The value of an on/off switch `key=value` in a policy's options.
/// `KEY=VALUE` where VALUE is one of `choices`' names.
pub(crate) fn one_of<T: Copy>(key: &str, value: &str, choices: &[(&str, T)]) -> Result<T, String> {
    choices
        .iter()
        .find(|(name, _)| *name == value)
        .map(|&(_, v)| v)
        .ok_or_else(|| {
            let names: Vec<&str> = choices.iter().map(|(n, _)| *n).collect();
            format!("'{key}' takes {}, not '{value}'", names.join(", "))
        })
}

pub(crate) fn on_off(key: &str, value: &str) -> Result<bool, String> {
    match value {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => Err(format!("'{key}' takes on or off, not '{value}'")),
    }
}

/// `WS:WE` of `colab-e:WS:WE`: two finite numbers, not both zero.
fn parse_weights(name: &str, text: &str) -> Result<(f64, f64), PolicyError> {
    let bad = |problem: String| PolicyError::BadParams {
        name: name.to_string(),
        problem,
    };
    let parts: Vec<&str> = text.split(':').collect();
    let [ws, we] = parts[..] else {
        return Err(bad(format!(
            "expected two weights as colab-e:WS:WE (e.g. colab-e:1:-1), got '{text}'"
        )));
    };
    let num = |what: &str, v: &str| -> Result<f64, PolicyError> {
        match v.trim().parse::<f64>() {
            Ok(x) if x.is_finite() => Ok(x),
            _ => Err(bad(format!("{what} weight '{v}' is not a finite number"))),
        }
    };
    let (ws, we) = (num("speedup", ws)?, num("energy", we)?);
    if ws == 0.0 && we == 0.0 {
        return Err(bad("the two weights cannot both be zero".into()));
    }
    Ok((ws, we))
}

#[cfg(test)]
mod test_util;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_bpfland;
#[cfg(test)]
mod tests_camp;
#[cfg(test)]
mod tests_colab;
#[cfg(test)]
mod tests_lavd;
#[cfg(test)]
mod tests_linux;
#[cfg(test)]
mod tests_propsp;
#[cfg(test)]
mod tests_rota;
