//! Turns simulation runs into the papers' tables and charts.
//!
//! * [`aggregate`] computes H_ANTT, H_STP, Unfairness and H_NTT for every run
//!   (via `colab-metrics`) and averages them per (workload, config, policy),
//!   over core orders and seeds, as the papers do.
//! * [`write_report`] writes CSV/JSON data, a Markdown summary with the results
//!   normalised to the baseline policy (CFS) and grouped bar charts (SVG + PNG),
//!   atomically: the report directory only appears once everything is written.

use std::collections::BTreeMap;
use std::path::PathBuf;

use colab_metrics::MetricError;
use serde::{Deserialize, Serialize};
use thiserror::Error;

mod analysis;
mod bound_gap;
mod charts;
mod fast_idle;
mod fast_share;
mod naming;
mod output;
mod scatter;
mod summary;
mod versus;

pub use charts::check_fonts;
pub use naming::natural_cmp;
pub use output::{runs_csv, write_report, ReportFiles};
pub use scatter::{write_diagonal_scatter, write_scatter, ScatterPoint, ScatterSeries};
pub use versus::{mean_interval, ratio_interval, Interval};

/// One program of a run. Times are in nanoseconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProgramRecord {
    pub name: String,
    /// T_M: turnaround time inside the mix.
    pub turnaround_ns: u64,
    /// T_SB: turnaround time alone on an all-big machine with the same core count.
    pub t_sb_ns: u64,
    /// Turnaround time alone on the same configuration under the same policy.
    pub t_alone_ns: u64,
    /// Turnaround time alone on the configuration's slow cores only (under
    /// CFS): the baseline of the aggregate speedup (propsp eq. 1).
    pub t_slow_ns: u64,
    /// CPU time of its threads in the mix, and the part on the machine's
    /// fastest cores (0 in records written before they were kept).
    #[serde(default)]
    pub cpu_ns: u64,
    #[serde(default)]
    pub fast_cpu_ns: u64,
    /// Its end in the lower bound's own schedule of this run's draws, ns
    /// (colab-bound's `BoundSchedule`; None where there is no bound).
    #[serde(default)]
    pub bound_end_ns: Option<f64>,
}

/// One simulation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// "Sync-1", "ferret", "2B-7", ...
    pub workload: String,
    /// From the mix file: "Sync", "NSync", "Comm", "Comp", "Large", "2B", "4B", "single".
    pub classes: Vec<String>,
    /// "2B2S", "2B4S", "4B2S", "4B4S", ...
    pub config: String,
    /// "big-first" | "little-first"
    pub order: String,
    pub seed: u64,
    /// "cfs" | "wash" | "colab" | ...
    pub policy: String,
    pub cores: u32,
    /// Total threads of the workload.
    pub threads: u32,
    pub programs: Vec<ProgramRecord>,
    pub energy_j: f64,
    pub makespan_ns: u64,
    pub events: u64,
    pub migrations: u64,
    pub context_switches: u64,
    /// Share of the fast cores' time they sat idle while slower cores ran
    /// threads (`colab_metrics::fast_idle_share`); None on a machine of one
    /// core type, and in runs recorded before it was kept.
    #[serde(default)]
    pub fast_idle_share: Option<f64>,
    /// The least H_ANTT any schedule of this run's draws could have
    /// (colab-bound); None with programs restarted, and in runs recorded
    /// before it was kept.
    #[serde(default)]
    pub h_antt_bound: Option<f64>,
}

/// A run a campaign could not finish (`colab reproduce --keep-going`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FailedRun {
    /// The mix, or "PROGRAM:N alone" for a program's run by itself.
    pub workload: String,
    /// The machine; "sb:M" / "ss:M" are M's all-big and slow-cores-only
    /// reference machines.
    pub config: String,
    pub order: String,
    pub seed: u64,
    pub policy: String,
    /// The simulator's error, or which needed run failed.
    pub error: String,
}

/// What a campaign that kept going past failed runs left out.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Failures {
    pub runs: Vec<FailedRun>,
    /// (workload, config) pairs left out of every policy's results.
    pub left_out: Vec<(String, String)>,
}

/// One (workload, config, policy), averaged over core orders and seeds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    pub workload: String,
    pub classes: Vec<String>,
    pub config: String,
    pub policy: String,
    pub cores: u32,
    pub threads: u32,
    pub h_antt: f64,
    pub h_stp: f64,
    pub unfairness: f64,
    pub energy_j: f64,
    /// Aggregate speedup (propsp eq. 1), higher is better.
    pub asp: f64,
    /// Prop-SP's unfairness (propsp eq. 2, against T_SB), lower is better.
    pub propsp_unfairness: f64,
    /// Energy-delay product, J x s of makespan.
    pub edp: f64,
    /// Only for single-program workloads.
    pub h_ntt: Option<f64>,
    /// Number of runs averaged into this cell.
    pub runs: u32,
}

/// The metrics of a single run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RunMetrics {
    pub h_antt: f64,
    pub h_stp: f64,
    pub unfairness: f64,
    pub asp: f64,
    pub propsp_unfairness: f64,
    pub edp: f64,
    pub h_ntt: Option<f64>,
}

/// What a workload is made of, for the composition table of `summary.md`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkloadInfo {
    pub name: String,
    /// Where it comes from ("random (seed 1)", a paper's table, ...).
    pub source: String,
    pub programs: Vec<WorkloadProgram>,
}

/// One program of a [`WorkloadInfo`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkloadProgram {
    pub name: String,
    /// The thread parameter n.
    pub n: u32,
    /// Threads the program creates over its life, main included.
    pub threads: u32,
}

/// What to do when a chart cannot be drawn (typically: no system font).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ChartFailure {
    /// Fail the whole report; nothing is written.
    #[default]
    Fail,
    /// Write the report without charts and list the reason in `summary.md`
    /// and [`ReportFiles::warnings`].
    Skip,
}

/// Options of [`write_report`].
#[derive(Debug, Clone, PartialEq)]
pub struct ReportOptions {
    /// First line of `summary.md`.
    pub title: String,
    /// Policy every result is normalised to.
    pub baseline_policy: String,
    /// Column order of policies; the baseline always comes first and policies
    /// not listed follow in natural order.
    pub policy_order: Vec<String>,
    /// Configuration of the single-program H_NTT table (the cgo20 study used
    /// 2B2S); when absent every configuration with single-program runs is shown.
    pub single_program_config: String,
    pub svg: bool,
    pub png: bool,
    pub on_chart_failure: ChartFailure,
    /// Workloads whose composition `summary.md` lists in a table of its own
    /// (generated mixes, which no file of the repository describes); empty:
    /// no table.
    pub workloads: Vec<WorkloadInfo>,
    /// Runs that failed and what the report leaves out for them
    /// (`failures.csv` and a section of `summary.md`); empty: none.
    pub failures: Failures,
    /// How the runs were made, for the first screen of `summary.md`.
    pub provenance: Provenance,
}

/// What part of a study a report's runs are.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Scope {
    /// Nothing said (a report not made by a study).
    #[default]
    Unsaid,
    /// A study run without `--quick`: the workloads, machines and seeds
    /// the report lists.
    Full,
    /// `--quick`: what it ran against the whole (e.g. "11 of the study's
    /// 40 workloads, ...").
    Quick(String),
}

/// How the runs of a report were made: what the first screen of
/// `summary.md` says besides the results. Every field may be left empty.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Provenance {
    /// The command line that made the report, and when (e.g. `colab
    /// reproduce --quick` and `colab 0.1.0, 2026-12-06`).
    pub command: String,
    pub made: String,
    /// What part of the study ran (unsaid by default).
    pub scope: Scope,
    /// Every simulation the campaigns ran: the runs the report measures
    /// and the runs of programs alone their metrics divide by.
    pub simulations: Option<u64>,
    /// What a metric means on a machine where it differs (e.g. one with a
    /// single core type: T_SB is a run on as many of its own cores).
    pub machine_notes: Vec<String>,
}

impl Default for ReportOptions {
    fn default() -> Self {
        Self {
            title: "colab campaign report".to_string(),
            baseline_policy: "cfs".to_string(),
            policy_order: vec!["cfs".into(), "wash".into(), "colab".into()],
            single_program_config: "2B2S".to_string(),
            svg: true,
            png: true,
            on_chart_failure: ChartFailure::Fail,
            workloads: Vec::new(),
            failures: Failures::default(),
            provenance: Provenance::default(),
        }
    }
}

/// Errors of this crate.
#[derive(Debug, Error)]
pub enum ReportError {
    #[error("no run records to report on")]
    NoRecords,
    #[error("run {run}: {source}")]
    Metric {
        run: String,
        #[source]
        source: MetricError,
    },
    #[error("run {run}: {reason}")]
    InvalidRecord { run: String, reason: String },
    #[error("duplicate run {run}")]
    DuplicateRun { run: String },
    #[error(
        "{cell} disagrees with other runs of the same workload and config on {field}: \
         {first} vs {second}"
    )]
    Inconsistent {
        cell: String,
        field: &'static str,
        first: String,
        second: String,
    },
    #[error("I/O error on {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("CSV error on {}: {source}", path.display())]
    Csv {
        path: PathBuf,
        #[source]
        source: csv::Error,
    },
    #[error("JSON error on {}: {source}", path.display())]
    Json {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error(
        "no usable font for chart text ({0}); install fontconfig and a font \
         (Debian: apt-get install fontconfig fonts-dejavu-core, see .ci/apt-packages) \
         or set ReportOptions::on_chart_failure = ChartFailure::Skip"
    )]
    Font(String),
    #[error("chart {}: {message}", path.display())]
    Chart { path: PathBuf, message: String },
    #[error("{} exists and is not a directory", .0.display())]
    NotADirectory(PathBuf),
}

fn run_id(r: &RunRecord) -> String {
    format!(
        "workload={} config={} policy={} order={} seed={}",
        r.workload, r.config, r.policy, r.order, r.seed
    )
}

/// Computes H_ANTT, H_STP, Unfairness, ASP, Prop-SP unfairness, EDP (and
/// H_NTT for single-program runs) of one run.
pub fn run_metrics(r: &RunRecord) -> Result<RunMetrics, ReportError> {
    let metric_err = |source| ReportError::Metric {
        run: run_id(r),
        source,
    };
    if r.programs.is_empty() {
        return Err(ReportError::InvalidRecord {
            run: run_id(r),
            reason: "no programs".into(),
        });
    }
    let sb: Vec<(f64, f64)> = r
        .programs
        .iter()
        .map(|p| (p.turnaround_ns as f64, p.t_sb_ns as f64))
        .collect();
    let alone: Vec<(f64, f64)> = r
        .programs
        .iter()
        .map(|p| (p.turnaround_ns as f64, p.t_alone_ns as f64))
        .collect();
    let slow: Vec<(f64, f64)> = r
        .programs
        .iter()
        .map(|p| (p.turnaround_ns as f64, p.t_slow_ns as f64))
        .collect();
    let h_ntt = match sb.as_slice() {
        [(t_m, t_sb)] => Some(colab_metrics::h_ntt(*t_m, *t_sb).map_err(metric_err)?),
        _ => None,
    };
    Ok(RunMetrics {
        h_antt: colab_metrics::h_antt(&sb).map_err(metric_err)?,
        h_stp: colab_metrics::h_stp(&sb).map_err(metric_err)?,
        unfairness: colab_metrics::unfairness(&alone).map_err(metric_err)?,
        asp: colab_metrics::aggregate_speedup(&slow).map_err(metric_err)?,
        propsp_unfairness: colab_metrics::propsp_unfairness(&sb).map_err(metric_err)?,
        edp: colab_metrics::energy_delay_product(r.energy_j, colab_metrics::ns_to_s(r.makespan_ns))
            .map_err(metric_err)?,
        h_ntt,
    })
}

/// Thread-count class of colab-tpds §6.2 "Thread and program count":
/// `"thread-low"` when the workload has fewer threads than cores,
/// `"thread-high"` when it has at least twice as many, otherwise `None`.
pub fn thread_class(cell: &Cell) -> Option<&'static str> {
    thread_class_of(cell.threads, cell.cores)
}

pub(crate) fn thread_class_of(threads: u32, cores: u32) -> Option<&'static str> {
    if threads < cores {
        Some("thread-low")
    } else if u64::from(threads) >= 2 * u64::from(cores) {
        Some("thread-high")
    } else {
        None
    }
}

type CellKey = (String, String, String);

fn check_consistent(cell: &str, a: &RunRecord, b: &RunRecord) -> Result<(), ReportError> {
    let err = |field, first: String, second: String| {
        Err(ReportError::Inconsistent {
            cell: cell.to_string(),
            field,
            first,
            second,
        })
    };
    if a.classes != b.classes {
        return err(
            "classes",
            format!("{:?}", a.classes),
            format!("{:?}", b.classes),
        );
    }
    if a.cores != b.cores {
        return err("cores", a.cores.to_string(), b.cores.to_string());
    }
    if a.threads != b.threads {
        return err("threads", a.threads.to_string(), b.threads.to_string());
    }
    // Sorted: the start order of programs may legitimately differ between runs.
    fn names(r: &RunRecord) -> Vec<&str> {
        let mut v: Vec<&str> = r.programs.iter().map(|p| p.name.as_str()).collect();
        v.sort_unstable();
        v
    }
    if names(a) != names(b) {
        return err(
            "programs",
            format!("{:?}", names(a)),
            format!("{:?}", names(b)),
        );
    }
    Ok(())
}

/// Averages runs into cells, one per (workload, config, policy).
///
/// Each run's metrics are computed from its programs first, then the cell
/// value is the arithmetic mean of the per-run values (papers: average over
/// the two core orders; here also over seeds). Output is sorted by workload,
/// config and policy in natural order ("2B-2" before "2B-10").
pub fn aggregate(records: &[RunRecord]) -> Result<Vec<Cell>, ReportError> {
    let mut groups: BTreeMap<CellKey, Vec<(&RunRecord, RunMetrics)>> = BTreeMap::new();
    let mut seen = std::collections::BTreeSet::new();
    for r in records {
        if !seen.insert((&r.workload, &r.config, &r.policy, &r.order, r.seed)) {
            return Err(ReportError::DuplicateRun { run: run_id(r) });
        }
        if !(r.energy_j.is_finite() && r.energy_j >= 0.0) {
            return Err(ReportError::InvalidRecord {
                run: run_id(r),
                reason: format!("energy_j = {} must be finite and >= 0", r.energy_j),
            });
        }
        let m = run_metrics(r)?;
        groups
            .entry((r.workload.clone(), r.config.clone(), r.policy.clone()))
            .or_default()
            .push((r, m));
    }

    let mut cells = Vec::with_capacity(groups.len());
    let mut same_setup: BTreeMap<(String, String), &RunRecord> = BTreeMap::new();
    for ((workload, config, policy), runs) in groups {
        let first = runs[0].0;
        let cell_name = format!("workload={workload} config={config} policy={policy}");
        // Runs of one cell and cells of one (workload, config) must describe
        // the same workload, or normalising one policy to another is meaningless.
        let reference = *same_setup
            .entry((workload.clone(), config.clone()))
            .or_insert(first);
        for (r, _) in &runs {
            check_consistent(&cell_name, reference, r)?;
        }
        let mean_of = |f: &dyn Fn(&(&RunRecord, RunMetrics)) -> f64| {
            let values: Vec<f64> = runs.iter().map(f).collect();
            colab_metrics::mean(&values).map_err(|source| ReportError::Metric {
                run: cell_name.clone(),
                source,
            })
        };
        let h_ntt = if runs.iter().all(|(_, m)| m.h_ntt.is_some()) {
            Some(mean_of(&|(_, m)| m.h_ntt.unwrap_or(f64::NAN))?)
        } else {
            None
        };
        cells.push(Cell {
            classes: first.classes.clone(),
            cores: first.cores,
            threads: first.threads,
            h_antt: mean_of(&|(_, m)| m.h_antt)?,
            h_stp: mean_of(&|(_, m)| m.h_stp)?,
            unfairness: mean_of(&|(_, m)| m.unfairness)?,
            energy_j: mean_of(&|(r, _)| r.energy_j)?,
            asp: mean_of(&|(_, m)| m.asp)?,
            propsp_unfairness: mean_of(&|(_, m)| m.propsp_unfairness)?,
            edp: mean_of(&|(_, m)| m.edp)?,
            h_ntt,
            runs: u32::try_from(runs.len()).unwrap_or(u32::MAX),
            workload,
            config,
            policy,
        });
    }
    cells.sort_by(|a, b| {
        natural_cmp(&a.workload, &b.workload)
            .then_with(|| natural_cmp(&a.config, &b.config))
            .then_with(|| natural_cmp(&a.policy, &b.policy))
    });
    Ok(cells)
}

#[cfg(test)]
mod tests;
