//! Writing the report directory atomically.

use std::fs;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;

use crate::analysis::{Analysis, Metric};
use crate::charts::write_charts;
use crate::summary::{render, SummaryInput};
use crate::{
    aggregate, run_metrics, thread_class_of, Cell, ChartFailure, ReportError, ReportOptions,
    RunRecord,
};

/// Paths of a written report (all inside `dir`).
#[derive(Debug, Clone, PartialEq)]
pub struct ReportFiles {
    pub dir: PathBuf,
    pub runs_csv: PathBuf,
    pub runs_json: PathBuf,
    /// One row per (run, program) with T_M, T_SB, T_alone.
    pub programs_csv: PathBuf,
    pub cells_csv: PathBuf,
    pub cells_json: PathBuf,
    pub summary_md: PathBuf,
    /// SVG and PNG charts.
    pub charts: Vec<PathBuf>,
    /// Things that did not stop the report (skipped charts, leftover temp dirs).
    pub warnings: Vec<String>,
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> ReportError + '_ {
    move |source| ReportError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn write_json<T: Serialize + ?Sized>(path: &Path, value: &T) -> Result<(), ReportError> {
    let file = fs::File::create(path).map_err(io_err(path))?;
    let mut w = BufWriter::new(file);
    serde_json::to_writer_pretty(&mut w, value).map_err(|source| ReportError::Json {
        path: path.to_path_buf(),
        source,
    })?;
    w.write_all(b"\n").map_err(io_err(path))?;
    w.into_inner()
        .map_err(|e| io_err(path)(e.into_error()))?
        .sync_all()
        .map_err(io_err(path))
}

/// `runs.csv` of `records`, as text (what the Python package reads into a
/// DataFrame: the same rows and columns as the report's file).
pub fn runs_csv(records: &[RunRecord]) -> Result<String, ReportError> {
    let rows = run_rows(records)?;
    let csv_err = |source| ReportError::Csv {
        path: "runs.csv".into(),
        source,
    };
    let mut w = csv::Writer::from_writer(Vec::new());
    for r in &rows {
        w.serialize(r).map_err(csv_err)?;
    }
    let bytes = w
        .into_inner()
        .map_err(|e| io_err(Path::new("runs.csv"))(e.into_error()))?;
    Ok(String::from_utf8(bytes).expect("csv writes UTF-8 from UTF-8 fields"))
}

fn write_csv<T: Serialize>(path: &Path, rows: &[T]) -> Result<(), ReportError> {
    let csv_err = |source| ReportError::Csv {
        path: path.to_path_buf(),
        source,
    };
    let mut w = csv::Writer::from_path(path).map_err(csv_err)?;
    for r in rows {
        w.serialize(r).map_err(csv_err)?;
    }
    w.flush().map_err(io_err(path))
}

#[derive(Serialize)]
struct RunRow<'a> {
    workload: &'a str,
    classes: String,
    config: &'a str,
    order: &'a str,
    seed: u64,
    policy: &'a str,
    cores: u32,
    threads: u32,
    thread_class: &'static str,
    programs: usize,
    program_names: String,
    h_antt: f64,
    h_stp: f64,
    unfairness: f64,
    h_ntt: Option<f64>,
    asp: f64,
    propsp_unfairness: f64,
    energy_j: f64,
    edp: f64,
    makespan_ns: u64,
    events: u64,
    migrations: u64,
    context_switches: u64,
    fast_idle_share: Option<f64>,
    h_antt_bound: Option<f64>,
}

#[derive(Serialize)]
struct ProgramRow<'a> {
    workload: &'a str,
    config: &'a str,
    order: &'a str,
    seed: u64,
    policy: &'a str,
    program: &'a str,
    turnaround_ns: u64,
    t_sb_ns: u64,
    t_alone_ns: u64,
    t_slow_ns: u64,
    h_ntt: Option<f64>,
    slowdown: Option<f64>,
    cpu_ns: u64,
    fast_cpu_ns: u64,
    bound_end_ns: Option<f64>,
}

#[derive(Serialize)]
struct CellRow<'a> {
    workload: &'a str,
    classes: String,
    config: &'a str,
    policy: &'a str,
    cores: u32,
    threads: u32,
    thread_class: &'static str,
    runs: u32,
    h_antt: f64,
    h_stp: f64,
    unfairness: f64,
    energy_j: f64,
    asp: f64,
    propsp_unfairness: f64,
    edp: f64,
    h_ntt: Option<f64>,
    h_antt_norm: Option<f64>,
    h_stp_norm: Option<f64>,
    unfairness_norm: Option<f64>,
    energy_norm: Option<f64>,
    asp_norm: Option<f64>,
    propsp_unfairness_norm: Option<f64>,
    edp_norm: Option<f64>,
    h_ntt_norm: Option<f64>,
}

fn run_rows(records: &[RunRecord]) -> Result<Vec<RunRow<'_>>, ReportError> {
    records
        .iter()
        .map(|r| {
            let m = run_metrics(r)?;
            Ok(RunRow {
                workload: &r.workload,
                classes: r.classes.join(";"),
                config: &r.config,
                order: &r.order,
                seed: r.seed,
                policy: &r.policy,
                cores: r.cores,
                threads: r.threads,
                thread_class: thread_class_of(r.threads, r.cores).unwrap_or(""),
                programs: r.programs.len(),
                program_names: r
                    .programs
                    .iter()
                    .map(|p| p.name.as_str())
                    .collect::<Vec<_>>()
                    .join(";"),
                h_antt: m.h_antt,
                h_stp: m.h_stp,
                unfairness: m.unfairness,
                h_ntt: m.h_ntt,
                asp: m.asp,
                propsp_unfairness: m.propsp_unfairness,
                energy_j: r.energy_j,
                edp: m.edp,
                makespan_ns: r.makespan_ns,
                events: r.events,
                migrations: r.migrations,
                context_switches: r.context_switches,
                fast_idle_share: r.fast_idle_share,
                h_antt_bound: r.h_antt_bound,
            })
        })
        .collect()
}

fn program_rows(records: &[RunRecord]) -> Vec<ProgramRow<'_>> {
    records
        .iter()
        .flat_map(|r| {
            r.programs.iter().map(move |p| {
                let (t_m, sb, alone) = (
                    p.turnaround_ns as f64,
                    p.t_sb_ns as f64,
                    p.t_alone_ns as f64,
                );
                ProgramRow {
                    workload: &r.workload,
                    config: &r.config,
                    order: &r.order,
                    seed: r.seed,
                    policy: &r.policy,
                    program: &p.name,
                    turnaround_ns: p.turnaround_ns,
                    t_sb_ns: p.t_sb_ns,
                    t_alone_ns: p.t_alone_ns,
                    t_slow_ns: p.t_slow_ns,
                    h_ntt: colab_metrics::h_ntt(t_m, sb).ok(),
                    slowdown: colab_metrics::slowdown(t_m, alone).ok(),
                    cpu_ns: p.cpu_ns,
                    fast_cpu_ns: p.fast_cpu_ns,
                    bound_end_ns: p.bound_end_ns,
                }
            })
        })
        .collect()
}

fn cell_rows<'a>(cells: &'a [Cell], a: &Analysis) -> Vec<CellRow<'a>> {
    cells
        .iter()
        .map(|c| CellRow {
            workload: &c.workload,
            classes: c.classes.join(";"),
            config: &c.config,
            policy: &c.policy,
            cores: c.cores,
            threads: c.threads,
            thread_class: thread_class_of(c.threads, c.cores).unwrap_or(""),
            runs: c.runs,
            h_antt: c.h_antt,
            h_stp: c.h_stp,
            unfairness: c.unfairness,
            energy_j: c.energy_j,
            asp: c.asp,
            propsp_unfairness: c.propsp_unfairness,
            edp: c.edp,
            h_ntt: c.h_ntt,
            h_antt_norm: a.normalised(c, Metric::HAntt),
            h_stp_norm: a.normalised(c, Metric::HStp),
            unfairness_norm: a.normalised(c, Metric::Unfairness),
            energy_norm: a.normalised(c, Metric::Energy),
            asp_norm: a.normalised(c, Metric::Asp),
            propsp_unfairness_norm: a.normalised(c, Metric::PropspUnfairness),
            edp_norm: a.normalised(c, Metric::Edp),
            h_ntt_norm: a.normalised(c, Metric::HNtt),
        })
        .collect()
}

/// Writes every file of the report into `dir` (the temporary directory).
fn write_contents(
    dir: &Path,
    records: &[RunRecord],
    opts: &ReportOptions,
) -> Result<(Vec<String>, Vec<String>), ReportError> {
    // Raw data first: it is what someone debugging a failed aggregation wants.
    write_json(&dir.join("runs.json"), records)?;
    write_csv(&dir.join("runs.csv"), &run_rows(records)?)?;
    write_csv(&dir.join("programs.csv"), &program_rows(records))?;
    if !opts.failures.runs.is_empty() {
        write_csv(&dir.join("failures.csv"), &opts.failures.runs)?;
    }

    let cells = aggregate(records)?;
    let analysis = Analysis::new(&cells, opts);
    write_json(&dir.join("cells.json"), &cells)?;
    write_csv(&dir.join("cells.csv"), &cell_rows(&cells, &analysis))?;

    let (charts, warnings) = match write_charts(dir, records, &cells, opts) {
        Ok(ok) => ok,
        Err(e) if opts.on_chart_failure == ChartFailure::Skip => {
            remove_charts(dir)?;
            (Vec::new(), vec![format!("charts not written: {e}")])
        }
        Err(e) => return Err(e),
    };

    let summary = render(&SummaryInput {
        records,
        cells: &cells,
        opts,
        charts: &charts,
        warnings: &warnings,
    });
    let path = dir.join("summary.md");
    fs::write(&path, summary).map_err(io_err(&path))?;
    Ok((charts, warnings))
}

/// Removes partially written charts so a skipped-charts report has none at all.
fn remove_charts(dir: &Path) -> Result<(), ReportError> {
    for entry in fs::read_dir(dir).map_err(io_err(dir))? {
        let path = entry.map_err(io_err(dir))?.path();
        let is_chart = path.extension().is_some_and(|e| e == "svg" || e == "png");
        if is_chart {
            fs::remove_file(&path).map_err(io_err(&path))?;
        }
    }
    Ok(())
}

fn unique_suffix() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{}-{nanos}", std::process::id())
}

/// Writes the report into `dir`: `runs.csv`, `runs.json`, `programs.csv`,
/// `cells.csv`, `cells.json`, `summary.md` and the charts (`*.svg`, `*.png`).
///
/// Everything is written into a hidden sibling directory first and renamed to
/// `dir` only once complete; an existing `dir` is replaced only after that
/// succeeds. On error nothing is left behind and an existing `dir` is untouched.
pub fn write_report(
    dir: &Path,
    records: &[RunRecord],
    opts: &ReportOptions,
) -> Result<ReportFiles, ReportError> {
    if records.is_empty() {
        return Err(ReportError::NoRecords);
    }
    if dir.exists() && !dir.is_dir() {
        return Err(ReportError::NotADirectory(dir.to_path_buf()));
    }
    let name = dir
        .file_name()
        .ok_or_else(|| ReportError::Io {
            path: dir.to_path_buf(),
            source: std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "report path must end in a directory name",
            ),
        })?
        .to_string_lossy()
        .into_owned();
    let parent = match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    fs::create_dir_all(&parent).map_err(io_err(&parent))?;

    // Same parent => same file system => rename is atomic.
    let suffix = unique_suffix();
    let tmp = parent.join(format!(".{name}.tmp-{suffix}"));
    fs::create_dir(&tmp).map_err(io_err(&tmp))?;

    let (charts, mut warnings) = match write_contents(&tmp, records, opts) {
        Ok(x) => x,
        Err(e) => {
            let _ = fs::remove_dir_all(&tmp);
            return Err(e);
        }
    };

    if dir.exists() {
        let old = parent.join(format!(".{name}.old-{suffix}"));
        if let Err(e) = fs::rename(dir, &old) {
            let _ = fs::remove_dir_all(&tmp);
            return Err(io_err(dir)(e));
        }
        if let Err(e) = fs::rename(&tmp, dir) {
            // Put the previous report back before giving up.
            let _ = fs::rename(&old, dir);
            let _ = fs::remove_dir_all(&tmp);
            return Err(io_err(dir)(e));
        }
        if let Err(e) = fs::remove_dir_all(&old) {
            warnings.push(format!(
                "previous report moved to {} could not be removed: {e}",
                old.display()
            ));
        }
    } else if let Err(e) = fs::rename(&tmp, dir) {
        let _ = fs::remove_dir_all(&tmp);
        return Err(io_err(dir)(e));
    }

    Ok(ReportFiles {
        dir: dir.to_path_buf(),
        runs_csv: dir.join("runs.csv"),
        runs_json: dir.join("runs.json"),
        programs_csv: dir.join("programs.csv"),
        cells_csv: dir.join("cells.csv"),
        cells_json: dir.join("cells.json"),
        summary_md: dir.join("summary.md"),
        charts: charts.iter().map(|c| dir.join(c)).collect(),
        warnings,
    })
}
