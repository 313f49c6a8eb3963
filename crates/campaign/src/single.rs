//! `colab sim`: one workload on one machine under one policy, with the
//! baselines its metrics need (each program alone on the all-big machine
//! under CFS, and alone on this machine under the same policy).

use crate::model_predictor::predictor_on;
use anyhow::{Context, Result};
use colab_core::{Policy, Topology};
use colab_sim::{SimConfig, SimError, SimResult};
use colab_workload::Workload;
use std::time::Instant;

/// How to run one simulation (the command line draws a progress bar).
pub type Runner<'a> = dyn FnMut(&Workload, &Topology, &mut dyn Policy, &SimConfig) -> Result<SimResult, SimError>
    + 'a;

/// A simulated workload, its baselines and metrics.
#[derive(Debug)]
pub struct SingleRun {
    pub result: SimResult,
    /// Wall seconds of the workload's own run (baselines not counted).
    pub wall_s: f64,
    /// Per program: turnaround alone on the all-big machine under CFS.
    pub t_sb_ns: Vec<f64>,
    /// Per program: turnaround alone on this machine under the same policy.
    pub t_alone_ns: Vec<f64>,
    pub h_antt: f64,
    pub h_stp: f64,
    pub unfairness: f64,
}

/// Simulates `w` on `topo` under `policy` (predictions from the label
/// `predictor_label`, other settings from `cfg`), then every program alone
/// for the baselines, each run through `run`; H_ANTT and H_STP are against
/// the all-big baseline, Unfairness against the same-machine one.
pub fn simulate_with_baselines(
    w: &Workload,
    topo: &Topology,
    policy: &str,
    predictor_label: &str,
    cfg: &SimConfig,
    run: &mut Runner<'_>,
) -> Result<SingleRun> {
    let mut pol = crate::policy_by_name(policy)?;
    let predictor = predictor_on(predictor_label, policy, topo)?;
    let cfg = &SimConfig {
        predictor: predictor.clone(),
        ..cfg.clone()
    };
    let seed = cfg.seed;
    // The baselines first: a policy in oracle mode reads its programs' T_SB
    // before its run.
    let sb_topo = topo.all_fastest();
    // CFS gets the predictor campaigns give it (it reads no predictions: the oracle).
    let sb_base = SimConfig {
        seed,
        predictor: predictor_on(predictor_label, "cfs", topo)?,
        max_events: cfg.max_events,
        ..SimConfig::default()
    };
    let mut t_sb_ns = Vec::new();
    let mut t_alone_ns = Vec::new();
    let what = |a: &Workload, on: &str| format!("simulating {} alone on {on} (a baseline)", a.name);
    for p in &w.programs {
        let a = Workload::alone(p);
        let mut cfs = colab_policies::by_name("cfs")?;
        let sb =
            run(&a, &sb_topo, cfs.as_mut(), &sb_base).with_context(|| what(&a, &sb_topo.name))?;
        t_sb_ns.push(sb.programs[0].turnaround_ns as f64);
    }
    if pol.wants_oracle_lengths() {
        pol.oracle_program_lengths(&t_sb_ns.iter().map(|&t| t as u64).collect::<Vec<_>>());
    }
    let t0 = Instant::now();
    let result = run(w, topo, pol.as_mut(), cfg)
        .with_context(|| format!("simulating {} on {}", w.name, topo.name))?;
    let wall_s = t0.elapsed().as_secs_f64();
    for (p, &sb) in w.programs.iter().zip(&t_sb_ns) {
        let a = Workload::alone(p);
        let base = SimConfig {
            seed,
            predictor: predictor.clone(),
            max_events: cfg.max_events,
            ..SimConfig::default()
        };
        let mut same = crate::policy_by_name(policy)?;
        if same.wants_oracle_lengths() {
            same.oracle_program_lengths(&[sb as u64]);
        }
        let here = run(&a, topo, same.as_mut(), &base).with_context(|| what(&a, &topo.name))?;
        t_alone_ns.push(here.programs[0].turnaround_ns as f64);
    }
    let t_m: Vec<f64> = result
        .programs
        .iter()
        .map(|p| p.turnaround_ns as f64)
        .collect();
    let pairs = |base: &[f64]| -> Vec<(f64, f64)> {
        t_m.iter().copied().zip(base.iter().copied()).collect()
    };
    let h_antt = colab_metrics::h_antt(&pairs(&t_sb_ns))?;
    let h_stp = colab_metrics::h_stp(&pairs(&t_sb_ns))?;
    let unfairness = colab_metrics::unfairness(&pairs(&t_alone_ns))?;
    Ok(SingleRun {
        result,
        wall_s,
        t_sb_ns,
        t_alone_ns,
        h_antt,
        h_stp,
        unfairness,
    })
}

/// A run as `colab sim --json` prints it (and the Python package's `sim`
/// returns): per program its turnaround and baselines, then the metrics
/// and the simulator's statistics.
pub fn to_json(
    w: &Workload,
    topo: &Topology,
    policy: &str,
    seed: u64,
    r: &SingleRun,
) -> serde_json::Value {
    let res = &r.result;
    serde_json::json!({
        "workload": w.name, "topology": topo.name, "policy": policy, "seed": seed,
        "programs": res.programs.iter().zip(&r.t_sb_ns).zip(&r.t_alone_ns).map(|((p, sb), al)| serde_json::json!({
            "name": p.name, "n": p.n, "threads": p.threads, "turnaround_ns": p.turnaround_ns, "t_sb_ns": *sb as u64, "t_alone_ns": *al as u64,
            "cpu_ns": p.cpu_ns, "fast_cpu_ns": p.fast_cpu_ns,
        })).collect::<Vec<_>>(),
        "h_antt": r.h_antt, "h_stp": r.h_stp, "unfairness": r.unfairness, "energy_j": res.energy_j,
        "makespan_ns": res.makespan_ns, "stats": res.stats,
    })
}
