//! How long the CAMP and Prop-SP studies' programs run.
//!
//! Both papers ran every program on its reference input, restarting it until
//! the longest of its mix had completed three times (camp-tocs12 5, propsp
//! 4), and neither reports run lengths. Our models are sized at 0.5 s
//! (single-threaded) and 0.6 s (parallel) of work, so CAMP's 200 ms
//! sampling and 2 s fast-core rotation barely act. [`Lengths::Paper`] gives
//! every program the length of its reference run instead:
//!
//! - a SPEC CPU2006 program runs its reference time divided by the SPEC
//!   ratio of a server of the papers' time ([`SPEC_CPU2006_REF_S`] /
//!   [`SPEC_RATIO`]): h264ref 1,249 s, povray 300 s;
//! - a parallel program (SPEC OMP2001, PARSEC, FFTW, BLAST, MineBench), for
//!   which we found no published run length, runs the median length of the
//!   SPEC CPU2006 programs (assumption), 528.5 s.
//!
//! The length is of work on the reference big core, which is the fast core
//! of every CAMP and Prop-SP machine file. The papers' AMD and Intel cores
//! of 2.3-3.25 GHz are slower than the 2009 server the ratio comes from, so
//! their runs were, if anything, longer.

use crate::CampaignError;
use colab_core::{CoreOrder, Costs, Topology};
use colab_sim::{simulate, PredictorKind, SimConfig};
use colab_workload::Workload;
use std::collections::BTreeMap;

/// How long the programs of a study run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lengths {
    /// As the models are written (0.5-0.6 s of work): fast, for tests and
    /// `--quick`.
    Model,
    /// As the papers ran them (see the module documentation).
    Paper,
}

/// SPEC CPU2006 reference-machine run times, seconds: the "Ref. Time"
/// column of every published SPEC CPU2006 result (the programs the CAMP
/// and Prop-SP studies use).
pub const SPEC_CPU2006_REF_S: [(&str, f64); 22] = [
    ("perlbench", 9770.0),
    ("bzip2", 9650.0),
    ("mcf", 9120.0),
    ("gobmk", 10490.0),
    ("hmmer", 9330.0),
    ("sjeng", 12100.0),
    ("libquantum", 20720.0),
    ("h264ref", 22130.0),
    ("omnetpp", 6250.0),
    ("astar", 7020.0),
    ("xalancbmk", 6900.0),
    ("gamess", 19580.0),
    ("milc", 9180.0),
    ("gromacs", 7140.0),
    ("leslie3d", 9400.0),
    ("namd", 8020.0),
    ("soplex", 8340.0),
    ("povray", 5320.0),
    ("calculix", 8250.0),
    ("GemsFDTD", 10610.0),
    ("lbm", 13740.0),
    ("sphinx3", 19490.0),
];

/// SPEC ratio (reference time over run time) of a server of the papers'
/// time: the geometric mean of the four SPECint2006 ratios W. Stallings
/// quotes for a 2009 Sun Blade 6250 (Computer Organization and
/// Architecture, 8th ed., section 2.5: perlbench 17.5, bzip2 14.0, sjeng
/// 17.0, h264ref 23.7, the last from 22,135 s over 934 s).
pub const SPEC_RATIO: f64 = 17.72;

/// The simulated-time cap of a paper-length run: a mix restarts until its
/// longest program (h264ref, 1,249 s of fast-core work) completed three
/// times, at worst on cores half as fast, plus everyone else's share
/// (assumption: 24 h leaves room for any mix of the two studies).
pub const PAPER_MAX_TIME_NS: u64 = 24 * 3_600 * 1_000_000_000;

/// How long `bench` runs on its reference input, seconds of work on the
/// reference big core.
pub fn paper_length_s(bench: &str) -> f64 {
    match SPEC_CPU2006_REF_S.iter().find(|(b, _)| *b == bench) {
        Some((_, t)) => t / SPEC_RATIO,
        None => median_spec_length_s(),
    }
}

/// The median of the SPEC CPU2006 programs' lengths.
pub fn median_spec_length_s() -> f64 {
    let mut v: Vec<f64> = SPEC_CPU2006_REF_S
        .iter()
        .map(|(_, t)| t / SPEC_RATIO)
        .collect();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    (v[n / 2 - 1] + v[n / 2]) / 2.0
}

/// The work of one run of a program as modelled, ns on the reference big
/// core: its makespan alone on one such core with free switches (every
/// thread's compute, one after another). Measured once per program and
/// thread count.
fn model_work_ns(
    w: &Workload,
    prog: usize,
    cache: &mut BTreeMap<String, f64>,
) -> Result<f64, CampaignError> {
    let p = &w.programs[prog];
    let key = format!("{}:{}", p.name, p.n);
    if let Some(&ns) = cache.get(&key) {
        return Ok(ns);
    }
    let mut topo = Topology::named("1B", CoreOrder::BigFirst).expect("a built-in machine");
    topo.costs = Costs {
        context_switch_ns: 0,
        migration_local_ns: 0,
        migration_cross_ns: 0,
        wakeup_latency_ns: 0,
        ..Costs::default()
    };
    let alone = Workload::alone(p);
    let mut cfs = colab_policies::by_name("cfs").expect("a built-in policy");
    let cfg = SimConfig {
        predictor: PredictorKind::Oracle,
        ..SimConfig::default()
    };
    let r = simulate(&alone, &topo, cfs.as_mut(), &cfg).map_err(|e| CampaignError::Sim {
        what: format!(
            "{} alone on one reference big core (its modelled length)",
            p.name
        ),
        source: e,
    })?;
    let ns = r.makespan_ns as f64;
    cache.insert(key, ns);
    Ok(ns)
}

/// Scales every program of `w` to its paper length ([`paper_length_s`]).
pub fn to_paper_lengths(
    w: &mut Workload,
    cache: &mut BTreeMap<String, f64>,
) -> Result<(), CampaignError> {
    for i in 0..w.programs.len() {
        let model = model_work_ns(w, i, cache)?;
        let p = &mut w.programs[i];
        if model <= 0.0 {
            return Err(CampaignError::Lengths(format!(
                "{}: its model does no work, so it cannot be scaled to a run length",
                p.name
            )));
        }
        let k = paper_length_s(&p.name) * 1e9 / model;
        p.scale_work(k)
            .map_err(|e| CampaignError::Lengths(format!("{} in {}: {e}", p.name, w.name)))?;
    }
    Ok(())
}
