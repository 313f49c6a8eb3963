//! `colab validate`: runs every spec of a suite natively on this machine and
//! simulated on a topology describing this machine (Linux baseline policy),
//! and reports the simulator's error per case next to the machine's own
//! run-to-run noise. Costs in the topology come from `colab calibrate` and
//! are never fitted to the suite.

pub mod models;
pub mod programs;
pub mod suite;

use colab_core::Topology;
use colab_native::{Calibration, NativeOptions};
use colab_report::{write_scatter, ScatterPoint};
use colab_sim::{simulate, SimConfig};
use colab_workload::{Library, Workload};
use serde::Serialize;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum ValidateError {
    #[error("{}: cannot read the suite: {source}", path.display())]
    Suite {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: no .toml cases in the suite", .0.display())]
    Empty(PathBuf),
    #[error("{0}")]
    Workload(#[from] colab_workload::WorkloadError),
    #[error("{case}: native run failed: {source}")]
    Native {
        case: String,
        source: colab_native::NativeError,
    },
    #[error("{case}: simulation failed: {source}")]
    Sim {
        case: String,
        source: colab_sim::SimError,
    },
    #[error("{0}")]
    Policy(#[from] colab_policies::PolicyError),
    #[error("{}: {message}", path.display())]
    Write { path: PathBuf, message: String },
    #[error("real program {case}: {message}")]
    Program { case: String, message: String },
}

pub struct ValidateOptions {
    pub reps: u32,
    pub seeds: u64,
    pub topology: Topology,
    pub policy: String,
    pub cpus: Option<Vec<usize>>,
    pub calibration: Calibration,
    pub timeout: Duration,
}

/// One program of one case.
#[derive(Clone, Debug, Serialize)]
pub struct CaseResult {
    pub case: String,
    pub program: String,
    pub threads: u32,
    pub real_median_ns: u64,
    pub real_min_ns: u64,
    pub real_max_ns: u64,
    /// (max - min) / median of the native repetitions.
    pub real_spread: f64,
    /// Mean over the simulation seeds.
    pub sim_ns: u64,
    /// sim / real - 1.
    pub error: f64,
    /// Recordings of a real program made while the machine was busy (other
    /// processes above `colab_trace::busy::BUSY_SHARE`); 0 for specs.
    pub busy_recordings: usize,
}

/// The suite's case files, sorted.
pub fn cases(suite: &Path) -> Result<Vec<PathBuf>, ValidateError> {
    let rd = std::fs::read_dir(suite).map_err(|e| ValidateError::Suite {
        path: suite.into(),
        source: e,
    })?;
    let mut v: Vec<PathBuf> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    v.sort();
    if v.is_empty() {
        return Err(ValidateError::Empty(suite.into()));
    }
    Ok(v)
}

fn load(path: &Path) -> Result<Workload, ValidateError> {
    let mut lib = Library::builtin();
    Ok(lib.resolve(&path.to_string_lossy())?)
}

/// Runs one case natively and in simulation.
pub fn run_case(path: &Path, opts: &ValidateOptions) -> Result<Vec<CaseResult>, ValidateError> {
    let case = path
        .file_stem()
        .map_or_else(|| "?".into(), |s| s.to_string_lossy().to_string());
    let w = load(path)?;
    let nopts = NativeOptions {
        cpus: opts.cpus.clone(),
        reps: opts.reps,
        seed: 1,
        calibration: opts.calibration,
        timeout: opts.timeout,
        emulate: None,
    };
    let real = colab_native::run(&w, &nopts).map_err(|e| ValidateError::Native {
        case: case.clone(),
        source: e,
    })?;
    let mut sim_sum = vec![0u64; w.programs.len()];
    for seed in 1..=opts.seeds.max(1) {
        let mut pol = colab_policies::by_name(&opts.policy)?;
        let cfg = SimConfig {
            seed,
            ..SimConfig::default()
        };
        let r =
            simulate(&w, &opts.topology, pol.as_mut(), &cfg).map_err(|e| ValidateError::Sim {
                case: case.clone(),
                source: e,
            })?;
        for (s, p) in sim_sum.iter_mut().zip(&r.programs) {
            *s += p.turnaround_ns;
        }
    }
    Ok(real
        .iter()
        .zip(sim_sum)
        .map(|(r, s)| {
            let sim = s / opts.seeds.max(1);
            let med = r.median_ns();
            CaseResult {
                case: case.clone(),
                program: r.name.clone(),
                threads: r.threads,
                real_median_ns: med,
                real_min_ns: r.min_ns(),
                real_max_ns: r.max_ns(),
                real_spread: r.spread(),
                sim_ns: sim,
                error: if med > 0 {
                    sim as f64 / med as f64 - 1.0
                } else {
                    0.0
                },
                busy_recordings: 0,
            }
        })
        .collect())
}

/// Real programs replayed from traces are named `real:<name>`.
pub fn is_replay(r: &CaseResult) -> bool {
    r.case.starts_with("real:")
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Headline numbers of a validation run.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    pub points: usize,
    pub median_abs_error: f64,
    pub max_abs_error: f64,
    pub median_spread: f64,
    pub within_5: usize,
    pub within_15: usize,
}

pub fn summarize(results: &[CaseResult]) -> Summary {
    let errs: Vec<f64> = results.iter().map(|r| r.error.abs()).collect();
    Summary {
        points: results.len(),
        median_abs_error: median(errs.clone()),
        max_abs_error: errs.iter().copied().fold(0.0, f64::max),
        median_spread: median(results.iter().map(|r| r.real_spread).collect()),
        within_5: errs.iter().filter(|e| **e <= 0.05).count(),
        within_15: errs.iter().filter(|e| **e <= 0.15).count(),
    }
}

/// Writes cases.csv, summary.md and the scatter plot into `dir` (through a
/// temporary sibling directory, so a failure leaves nothing half-written).
pub fn write_report(
    dir: &Path,
    results: &[CaseResult],
    topology_toml: &str,
    opts_line: &str,
) -> Result<Summary, ValidateError> {
    let werr = |path: &Path, m: String| ValidateError::Write {
        path: path.to_path_buf(),
        message: m,
    };
    let parent = dir
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(|e| werr(parent, e.to_string()))?;
    let name = dir
        .file_name()
        .map_or_else(|| "validate".into(), |n| n.to_string_lossy().to_string());
    let tmp = parent.join(format!(".{name}.tmp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).map_err(|e| werr(&tmp, e.to_string()))?;
    let result = (|| {
        let csv_path = tmp.join("cases.csv");
        let mut wtr =
            csv::Writer::from_path(&csv_path).map_err(|e| werr(&csv_path, e.to_string()))?;
        for r in results {
            wtr.serialize(r)
                .map_err(|e| werr(&csv_path, e.to_string()))?;
        }
        wtr.flush().map_err(|e| werr(&csv_path, e.to_string()))?;
        let topo_path = tmp.join("this-machine.toml");
        std::fs::write(&topo_path, topology_toml).map_err(|e| werr(&topo_path, e.to_string()))?;
        let s = summarize(results);
        let pts: Vec<ScatterPoint> = results
            .iter()
            .map(|r| ScatterPoint {
                label: format!("{}/{}", r.case, r.program),
                real: r.real_median_ns as f64 / 1e6,
                simulated: r.sim_ns as f64 / 1e6,
            })
            .collect();
        write_scatter(
            &tmp.join("sim_vs_real"),
            "Simulated vs real turnaround (this machine)",
            "ms",
            &pts,
        )
        .map_err(|e| werr(&tmp, e.to_string()))?;
        let md_path = tmp.join("summary.md");
        std::fs::write(&md_path, summary_md(results, opts_line))
            .map_err(|e| werr(&md_path, e.to_string()))?;
        Ok(s)
    })();
    match result {
        Ok(s) => {
            let _ = std::fs::remove_dir_all(dir);
            std::fs::rename(&tmp, dir).map_err(|e| werr(dir, e.to_string()))?;
            Ok(s)
        }
        Err(e) => {
            let _ = std::fs::remove_dir_all(&tmp);
            Err(e)
        }
    }
}

fn summary_md(results: &[CaseResult], opts_line: &str) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "# colab validate: simulator against this machine\n");
    let _ = writeln!(o, "{opts_line}\n");
    let (real, specs): (Vec<CaseResult>, Vec<CaseResult>) =
        results.iter().cloned().partition(is_replay);
    for (what, part, target) in [
        (
            "Workload specs run natively",
            &specs,
            "median within 5%, every case within 15%",
        ),
        (
            "Real programs, recorded and replayed",
            &real,
            "median within 10%",
        ),
    ] {
        if part.is_empty() {
            continue;
        }
        let s = summarize(part);
        let _ = writeln!(
            o,
            "**{what}**: median absolute error **{:.1}%**, maximum **{:.1}%** over {} programs; {} within 5%, {} within 15%. \
             Run-to-run noise of the native runs (median of (max-min)/median): **{:.1}%**. Target (issue 3): {target}; \
             an error below the noise cannot be claimed.\n",
            s.median_abs_error * 100.0,
            s.max_abs_error * 100.0,
            s.points,
            s.within_5,
            s.within_15,
            s.median_spread * 100.0
        );
    }
    let _ = writeln!(o, "| case | program | threads | real ms (median) | real min-max ms | noise | simulated ms | error |");
    let _ = writeln!(o, "|---|---|---|---|---|---|---|---|");
    for r in results {
        let _ = writeln!(
            o,
            "| {} | {} | {} | {:.1} | {:.1}-{:.1} | {:.1}% | {:.1} | {:+.1}% |",
            r.case,
            r.program,
            r.threads,
            r.real_median_ns as f64 / 1e6,
            r.real_min_ns as f64 / 1e6,
            r.real_max_ns as f64 / 1e6,
            r.real_spread * 100.0,
            r.sim_ns as f64 / 1e6,
            r.error * 100.0
        );
    }
    let busy: Vec<String> = results
        .iter()
        .filter(|r| r.busy_recordings > 0)
        .map(|r| format!("{} ({})", r.case, r.busy_recordings))
        .collect();
    if !busy.is_empty() {
        let _ = writeln!(
            o,
            "\n**Recorded on a busy machine** (other processes used more than {:.0}% of the CPU time; recordings per case): {}. Their replays replay stretched times.",
            colab_trace::busy::BUSY_SHARE * 100.0,
            busy.join(", ")
        );
    }
    let _ = writeln!(o, "\n![simulated vs real](sim_vs_real.svg)");
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(case: &str, real: u64, sim: u64, spread: f64) -> CaseResult {
        CaseResult {
            case: case.into(),
            program: "p".into(),
            threads: 1,
            real_median_ns: real,
            real_min_ns: real,
            real_max_ns: real,
            real_spread: spread,
            sim_ns: sim,
            error: sim as f64 / real as f64 - 1.0,
            busy_recordings: 0,
        }
    }

    #[test]
    fn summary_statistics() {
        let rs = vec![
            r("a", 100, 104, 0.02),
            r("b", 100, 90, 0.04),
            r("c", 100, 120, 0.10),
        ];
        let s = summarize(&rs);
        assert!((s.median_abs_error - 0.10).abs() < 1e-9);
        assert!((s.max_abs_error - 0.20).abs() < 1e-9);
        assert!((s.median_spread - 0.04).abs() < 1e-9);
        assert_eq!((s.within_5, s.within_15), (1, 2));
    }

    #[test]
    fn report_is_written_whole() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("v");
        let rs = vec![r("a", 1_000_000, 1_050_000, 0.02)];
        write_report(&out, &rs, "name = \"m\"\n", "test").unwrap();
        for f in [
            "cases.csv",
            "summary.md",
            "sim_vs_real.svg",
            "sim_vs_real.png",
            "this-machine.toml",
        ] {
            assert!(out.join(f).exists(), "{f}");
        }
        let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
        assert!(
            md.contains("| a | p | 1 | 1.0 |") && md.contains("+5.0%"),
            "{md}"
        );
    }

    #[test]
    fn empty_or_missing_suite_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(cases(dir.path()), Err(ValidateError::Empty(_))));
        let e = cases(&dir.path().join("nope")).unwrap_err().to_string();
        assert!(e.contains("cannot read the suite"), "{e}");
    }
}
