//! `colab bench`: the simulator's speed in events per second, on the
//! papers' workloads, against the thread or core count, and the wall time
//! of the `reproduce` campaign. Tables are written as they are measured.

use crate::model_predictor::{checked_predictor, predictor_on};
use crate::CampaignSpec;
use anyhow::{Context, Result};
use colab_core::{CoreOrder, Topology};
use colab_sim::{simulate, PredictorKind, SimConfig, SimStats};
use colab_workload::{Library, Workload};
use std::io::Write;
use std::time::Instant;

/// The policies `--policies` names: the papers' three when none, every
/// policy for `all`; each name is checked.
pub fn bench_policies(given: Vec<String>) -> Result<Vec<String>> {
    let list: Vec<String> = match given.as_slice() {
        [] => crate::PAPER_POLICIES.map(String::from).to_vec(),
        [one] if one.eq_ignore_ascii_case("all") => crate::ALL_POLICIES.map(String::from).to_vec(),
        _ => given,
    };
    for p in &list {
        crate::policy_by_name(p).with_context(|| format!("--policies {p}"))?;
    }
    Ok(list)
}

/// Checks a `--predictor` label before anything runs.
pub fn check_predictor(label: &str) -> Result<()> {
    checked_predictor(label).map(|_| ())
}

/// One side of a scaling benchmark: a machine and a thread count.
#[derive(Clone, Copy, Debug)]
pub struct Scale {
    pub label: &'static str,
    pub machine: &'static str,
    pub threads: u64,
}

/// `--threads`: 64 and 4,096 threads on 4B4S.
pub const THREAD_SCALES: [Scale; 2] = [
    Scale {
        label: "64 threads",
        machine: "4B4S",
        threads: 64,
    },
    Scale {
        label: "4096 threads",
        machine: "4B4S",
        threads: 4096,
    },
];

/// `--cores`: two threads per core on 8 and 1,024 cores, half big.
pub const CORE_SCALES: [Scale; 2] = [
    Scale {
        label: "8 cores",
        machine: "4B4S",
        threads: 16,
    },
    Scale {
        label: "1024 cores",
        machine: "512B512S",
        threads: 2048,
    },
];

/// Rounds of work in a scaling benchmark: 4,096 threads x 12 rounds, the
/// same total on the smaller side.
pub const SCALE_ROUNDS: u64 = 49_152;

/// The fastest of `runs` runs of `w` under `pol` (wall seconds), and the
/// run's statistics (the same in every run: the simulator is deterministic).
fn best_of(
    runs: usize,
    w: &Workload,
    topo: &Topology,
    pol: &str,
    kind: &PredictorKind,
) -> Result<(f64, SimStats)> {
    best_of_counting(runs, w, topo, pol, kind).map(|(t, s, _)| (t, s))
}

/// [`best_of`], with the calls a hosted scheduler's run made into its BPF code.
fn best_of_counting(
    runs: usize,
    w: &Workload,
    topo: &Topology,
    pol: &str,
    kind: &PredictorKind,
) -> Result<(f64, SimStats, u64)> {
    let mut best = f64::MAX;
    let mut stats = None;
    let mut calls = 0;
    for _ in 0..runs {
        let mut p = crate::policy_by_name(pol)?;
        let cfg = SimConfig {
            predictor: kind.clone(),
            ..SimConfig::default()
        };
        let t0 = Instant::now();
        let r = simulate(w, topo, p.as_mut(), &cfg)?;
        best = best.min(t0.elapsed().as_secs_f64());
        stats = Some(r.stats);
        calls = p.foreign_calls();
    }
    Ok((best, stats.context("at least one run")?, calls))
}

/// A scaling benchmark's work: `n` threads (a main thread and `n - 1`
/// workers) of 200 us computes and 100 us sleeps, `rounds` rounds in all.
pub fn scale_workload(n: u64, rounds: u64) -> Result<Workload> {
    let text = format!(
        "name = \"scale{n}\"\n[thread.main]\nops = [ {{ spawn = \"w\", count = {} }}, {{ join = \"w\" }} ]\n[thread.w]\nops = [ {{ loop = {}, body = [ {{ compute = 200, speedup = 2.0 }}, {{ sleep = 100 }} ] }} ]\n",
        n.max(2) - 1,
        (rounds / n.max(1)).max(1)
    );
    let mut lib = Library::default();
    let name = lib.add_program_text("bench", &text)?;
    Ok(lib.single(&name, None)?)
}

/// Events/s of each policy on two sizes of the same work: `n` threads of
/// 200 us computes and 100 us sleeps, `rounds` rounds in all (so both
/// sides simulate about the same number of events). Best of three runs.
pub fn bench_scaling(
    policies: &[String],
    predictor: &str,
    sides: [Scale; 2],
    rounds: u64,
    out: &mut dyn Write,
) -> Result<()> {
    writeln!(
        out,
        "{:<13} {:>14} {:>14} {:>7}",
        "policy", sides[0].label, sides[1].label, "ratio"
    )?;
    for pol in policies {
        let mut rates = Vec::new();
        for side in &sides {
            let topo = Topology::named(side.machine, CoreOrder::BigFirst)?;
            let kind = predictor_on(predictor, pol, &topo)?;
            let w = scale_workload(side.threads, rounds)?;
            let (best, stats) = best_of(3, &w, &topo, pol, &kind)?;
            rates.push(stats.events as f64 / best);
        }
        writeln!(
            out,
            "{:<13} {:>12.2} M {:>12.2} M {:>7.3}",
            pol,
            rates[0] / 1e6,
            rates[1] / 1e6,
            rates[1] / rates[0]
        )?;
    }
    Ok(())
}

/// Single-thread event-loop speed of each policy on a few representative
/// workloads (best of five), then the wall time of `reproduce --quick`
/// and, with `full`, of the whole campaign.
pub fn bench_events(
    full: bool,
    policies: &[String],
    predictor: &str,
    out: &mut dyn Write,
) -> Result<()> {
    let lib = Library::builtin();
    let cases = [
        ("Sync-2", "2B2S"),
        ("Comm-4", "4B4S"),
        ("fluidanimate", "2B2S"),
        ("ferret", "2B4S"),
    ];
    writeln!(
        out,
        "{:<14} {:<6} {:<13} {:>9} {:>10} {:>8} {:>11} {:>11}",
        "workload",
        "config",
        "policy",
        "q-events",
        "sch-events",
        "wall ms",
        "q-events/s",
        "sch-ev/s"
    )?;
    let mut tot_ev = 0u64;
    let mut tot_sch = 0u64;
    let mut tot_s = 0.0;
    // Hosted schedulers: (policy, calls into the BPF code, events, wall s).
    let mut hosted: Vec<(String, u64, u64, f64)> = Vec::new();
    for (wname, cfg) in cases {
        let Ok(w) = lib.mix(wname).or_else(|_| lib.single(wname, None)) else {
            continue;
        };
        let topo = Topology::named(cfg, CoreOrder::BigFirst)?;
        for pol in policies {
            let kind = predictor_on(predictor, pol, &topo)?;
            let (best, stats, calls) = best_of_counting(5, &w, &topo, pol, &kind)?;
            let (events, sch) = (stats.events, stats.scheduling_events());
            if calls > 0 {
                match hosted.iter_mut().find(|h| h.0 == *pol) {
                    Some(h) => {
                        h.1 += calls;
                        h.2 += events;
                        h.3 += best;
                    }
                    None => hosted.push((pol.clone(), calls, events, best)),
                }
            }
            tot_ev += events;
            tot_sch += sch;
            tot_s += best;
            writeln!(
                out,
                "{:<14} {:<6} {:<13} {:>9} {:>10} {:>8.2} {:>11.0} {:>11.0}",
                wname,
                cfg,
                pol,
                events,
                sch,
                best * 1e3,
                events as f64 / best,
                sch as f64 / best
            )?;
        }
    }
    writeln!(
        out,
        "one thread: {:.2} M queue events/s, {:.2} M scheduling events/s",
        tot_ev as f64 / tot_s / 1e6,
        tot_sch as f64 / tot_s / 1e6
    )?;
    for (pol, calls, events, wall) in &hosted {
        writeln!(
            out,
            "{pol}: {:.2} calls into its BPF code per event; {:.0} ns of run time per call (all of the run's time over its calls, simulator included)",
            *calls as f64 / *events as f64,
            wall * 1e9 / *calls as f64
        )?;
    }
    out.flush().ok();
    for quick in if full { vec![true, false] } else { vec![true] } {
        let mut spec = CampaignSpec::paper(&lib, quick)?;
        spec.predictor = predictor.to_string();
        let (_, stats) = crate::run(&spec, &crate::NoProgress)?;
        writeln!(
            out,
            "campaign ({}): {} simulations, {} events, {:.2} s wall on {} threads ({:.2} M events/s)",
            if quick { "reproduce --quick" } else { "reproduce (full)" },
            stats.simulations,
            stats.events,
            stats.wall_s,
            rayon::current_num_threads(),
            stats.events as f64 / stats.wall_s / 1e6
        )?;
    }
    Ok(())
}
