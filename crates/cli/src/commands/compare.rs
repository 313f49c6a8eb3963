//! `colab compare`: policies on one workload and machine over every seed
//! and core order, as means with 95% intervals, normalised to a baseline,
//! with a verdict only where the intervals say one.

use crate::common::{load_topology, warn};
use anyhow::{bail, Result};
use colab_campaign::single::simulate_with_baselines;
use colab_core::CoreOrder;
use colab_report::{mean_interval, ratio_interval, Interval};
use colab_sim::SimConfig;
use colab_workload::{Library, Workload};
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use std::collections::BTreeMap;

pub const ABOUT: &str =
    "Compare policies on one workload and machine over every seed and core order, with 95% intervals.";

pub const EXAMPLES: &str = "\
Examples:
  colab compare Sync-2 -t 2B2S -p cfs,eevdf,rota          # normalised to the first, cfs
  colab compare ferret:8 -t 4B4S -p rota,eevdf --baseline eevdf --seeds 10
  colab compare my_mixes.toml:mine -t ./my-4p8e.toml -p eevdf,rota --json";

#[derive(clap::Args)]
pub struct CompareArgs {
    /// The workload, as `colab sim` takes it: a benchmark (`ferret:8`), a
    /// mix (`Sync-2`, `Rand-7-2`), a file (`FILE:NAME` for one of its mixes).
    workload: String,
    /// Machine: a name like 2B2S, or a topology TOML file.
    #[arg(short, long, default_value = "2B2S")]
    topology: String,
    /// Policies (comma-separated), as `colab sim -p` takes each.
    #[arg(short, long, value_delimiter = ',', required = true)]
    policies: Vec<String>,
    /// The policy the others are normalised to [default: the first].
    #[arg(long)]
    baseline: Option<String>,
    /// Seeds per core order (1..=SEEDS); each seed runs with both core
    /// orders, so a policy gets 2 x SEEDS runs.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(2..=1000))]
    seeds: u64,
    /// Where policies read their speedup predictions from (as `colab sim`).
    #[arg(long, value_name = "LABEL", default_value = "model")]
    predictor: String,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

/// Each run's key: the seed and the core order, so that two policies'
/// runs of one (seed, order) stay paired in the intervals (a seed fixes
/// the start order and the workload's draws for every policy alike).
fn key(seed: u64, order: CoreOrder) -> u64 {
    2 * seed + u64::from(order == CoreOrder::LittleFirst)
}

/// One policy's runs and where it stands.
struct Row {
    policy: String,
    runs: usize,
    mean: f64,
    interval: Option<Interval>,
    /// Its mean over the baseline's, paired run by run, and the interval.
    ratio: f64,
    ratio_interval: Option<Interval>,
    verdict: String,
}

pub fn run(a: CompareArgs) -> Result<()> {
    let baseline = a.baseline.clone().unwrap_or_else(|| a.policies[0].clone());
    if !a.policies.contains(&baseline) {
        bail!(
            "--baseline {baseline} is not one of the policies compared ({})",
            a.policies.join(", ")
        );
    }
    let mut seen = std::collections::BTreeSet::new();
    if let Some(p) = a.policies.iter().find(|p| !seen.insert(p.as_str())) {
        bail!("--policies names {p} twice");
    }
    let resolved = Library::builtin().resolve_args(std::slice::from_ref(&a.workload), false)?;
    let Some(r) = resolved.into_iter().next() else {
        bail!("no workload in {}", a.workload);
    };
    if let Some(note) = &r.note {
        warn(note);
    }
    let w = r.workload;
    for p in &a.policies {
        colab_campaign::policy_by_name(p).map_err(|e| anyhow::anyhow!("--policies {p}: {e}"))?;
    }
    let orders = [CoreOrder::BigFirst, CoreOrder::LittleFirst];
    let topos = orders
        .iter()
        .map(|&o| load_topology(&a.topology, o))
        .collect::<Result<Vec<_>>>()?;
    let jobs: Vec<(String, u64, usize)> = a
        .policies
        .iter()
        .flat_map(|p| {
            (1..=a.seeds).flat_map(move |s| (0..orders.len()).map(move |o| (p.clone(), s, o)))
        })
        .collect();
    let bar = ProgressBar::new(jobs.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} runs {elapsed_precise}")
            .expect("a valid template"),
    );
    let h: Vec<Result<(String, u64, f64)>> = jobs
        .par_iter()
        .map(|(p, s, o)| {
            let cfg = SimConfig {
                seed: *s,
                ..SimConfig::default()
            };
            let r = simulate_with_baselines(
                &w,
                &topos[*o],
                p,
                &a.predictor,
                &cfg,
                &mut |w, t, pol, c| colab_sim::simulate(w, t, pol, c),
            )?;
            bar.inc(1);
            Ok((p.clone(), key(*s, orders[*o]), r.h_antt))
        })
        .collect();
    bar.finish_and_clear();
    let mut by_policy: BTreeMap<String, BTreeMap<u64, f64>> = BTreeMap::new();
    for r in h {
        let (p, k, v) = r?;
        by_policy.entry(p).or_default().insert(k, v);
    }
    let rows = rows(&a.policies, &baseline, &by_policy);
    if a.json {
        let out = serde_json::json!({
            "workload": w.name,
            "machine": topos[0].describe(),
            "metric": "h_antt",
            "seeds": a.seeds,
            "orders": ["big-first", "little-first"],
            "baseline": baseline,
            "policies": rows.iter().map(Row::json).collect::<Vec<_>>(),
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        print_text(&w, &topos[0].describe(), &a, &baseline, &rows);
    }
    Ok(())
}

impl Row {
    fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "policy": self.policy,
            "runs": self.runs,
            "mean": self.mean,
            "interval": self.interval,
            "ratio": self.ratio,
            "ratio_interval": self.ratio_interval,
            "verdict": self.verdict,
        })
    }
}

fn mean(x: &BTreeMap<u64, f64>) -> f64 {
    x.values().sum::<f64>() / x.len() as f64
}

/// The rows, in the order the policies were given.
fn rows(
    policies: &[String],
    baseline: &str,
    runs: &BTreeMap<String, BTreeMap<u64, f64>>,
) -> Vec<Row> {
    let base = &runs[baseline];
    policies
        .iter()
        .map(|p| {
            let x = &runs[p];
            let ratio_iv = (p != baseline).then(|| ratio_interval(x, base)).flatten();
            let verdict = match ratio_iv {
                _ if p == baseline => "baseline".to_string(),
                Some(iv) if iv.hi < 1.0 => format!("better than {baseline}"),
                Some(iv) if iv.lo > 1.0 => format!("worse than {baseline}"),
                _ => "no difference shown".to_string(),
            };
            Row {
                policy: p.clone(),
                runs: x.len(),
                mean: mean(x),
                interval: mean_interval(x),
                ratio: mean(x) / mean(base),
                ratio_interval: ratio_iv,
                verdict,
            }
        })
        .collect()
}

fn span(iv: Option<Interval>) -> String {
    iv.map_or_else(
        || "-".to_string(),
        |iv| format!("{:.3}-{:.3}", iv.lo, iv.hi),
    )
}

fn print_text(w: &Workload, machine: &str, a: &CompareArgs, baseline: &str, rows: &[Row]) {
    println!(
        "{} on {}: H_ANTT (lower is better), {} seeds x 2 core orders = {} runs per policy",
        w.name,
        machine,
        a.seeds,
        2 * a.seeds
    );
    let width = rows
        .iter()
        .map(|r| r.policy.len())
        .max()
        .unwrap_or(6)
        .max(6);
    println!(
        "  {:<width$} {:>7} {:>13} {:>9} {:>13}  verdict",
        "policy",
        "mean",
        "95% interval",
        format!("/ {}", if baseline.len() > 7 { "base" } else { baseline }),
        "95% interval"
    );
    for r in rows {
        println!(
            "  {:<width$} {:>7.3} {:>13} {:>9.3} {:>13}  {}",
            r.policy,
            r.mean,
            span(r.interval),
            r.ratio,
            span(r.ratio_interval),
            r.verdict
        );
    }
    println!(
        "  Intervals: 95% percentile bootstrap (4,000 resamples, fixed generator seed) over the runs, \
         each (seed, core order) keeping its runs of every policy together; a verdict only where \
         the ratio's interval leaves out 1."
    );
}
