//! `colab train`: reads a training table (a CSV file or a directory of
//! `perf stat` runs), trains a model with `colab-model` and writes the report
//! directory: `model.json`, `summary.md`, `table.csv` (the table trained on),
//! `predictions.csv` and the predicted-vs-measured charts (SVG + PNG).
//!
//! The directory is written next to its final place and renamed into it only
//! once complete, so a failure never leaves a half-written report.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use colab_model::perf::{assemble, parse_measurements, parse_perf_stat, PerfError, ProgramRuns};
use colab_model::train::{CoreTypeSummary, RANKING_RULE};
use colab_model::{
    train, Model, Source, TableError, TrainError, TrainOptions, TrainingTable, ANY_CORE_TYPE,
    CPU_CYCLES,
};
use colab_report::{write_diagonal_scatter, ScatterPoint, ScatterSeries};
use thiserror::Error;

#[derive(Debug, Error)]
pub enum TrainReportError {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: {source}", path.display())]
    Table { path: PathBuf, source: TableError },
    #[error("{}: {source}", path.display())]
    Perf { path: PathBuf, source: PerfError },
    #[error("{}: {problem}", path.display())]
    Layout { path: PathBuf, problem: String },
    #[error("{source_name}: {source}")]
    Train {
        source_name: String,
        source: TrainError,
    },
    #[error("{}: {message} (use --no-charts to skip the charts)", path.display())]
    Chart { path: PathBuf, message: String },
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> TrainReportError + '_ {
    move |source| TrainReportError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// A training table and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedTable {
    pub table: TrainingTable,
    /// For messages and the model file: a path, or the simulator.
    pub source: String,
    /// What loading noticed (perf warnings, dropped events).
    pub notes: Vec<String>,
}

/// Reads a training table CSV (format: `colab_model::table`).
pub fn load_table_file(path: &Path) -> Result<LoadedTable, TrainReportError> {
    let file = fs::File::open(path).map_err(io_err(path))?;
    let table = TrainingTable::from_csv(file).map_err(|source| TrainReportError::Table {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(LoadedTable {
        table,
        source: path.display().to_string(),
        notes: Vec::new(),
    })
}

fn sorted_entries(dir: &Path) -> Result<Vec<PathBuf>, TrainReportError> {
    let mut v = Vec::new();
    for e in fs::read_dir(dir).map_err(io_err(dir))? {
        let p = e.map_err(io_err(dir))?.path();
        let hidden = p
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with('.'));
        if !hidden {
            v.push(p);
        }
    }
    v.sort();
    Ok(v)
}

fn name_of(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Reads `DIR/measurements.csv` and `DIR/<program>/<core_type>/*.perf.csv`
/// and assembles the training table (layout and recipe: `colab_model::perf`).
pub fn load_perf_dir(dir: &Path) -> Result<LoadedTable, TrainReportError> {
    let meas_path = dir.join("measurements.csv");
    let text = fs::read_to_string(&meas_path).map_err(io_err(&meas_path))?;
    let measurements = parse_measurements(&text).map_err(|source| TrainReportError::Table {
        path: meas_path.clone(),
        source,
    })?;
    let mut notes = Vec::new();
    let mut runs = Vec::new();
    for prog_dir in sorted_entries(dir)?.into_iter().filter(|p| p.is_dir()) {
        for core_dir in sorted_entries(&prog_dir)?
            .into_iter()
            .filter(|p| p.is_dir())
        {
            let mut pr = ProgramRuns {
                program: name_of(&prog_dir),
                core_type: name_of(&core_dir),
                runs: Vec::new(),
            };
            for f in sorted_entries(&core_dir)? {
                if !name_of(&f).ends_with(".perf.csv") {
                    continue;
                }
                let text = fs::read_to_string(&f).map_err(io_err(&f))?;
                let run = parse_perf_stat(&text).map_err(|source| TrainReportError::Perf {
                    path: f.clone(),
                    source,
                })?;
                let shown = f.strip_prefix(dir).unwrap_or(&f).display().to_string();
                notes.extend(run.warnings.iter().map(|w| format!("{shown}: {w}")));
                pr.runs.push((f.display().to_string(), run));
            }
            if pr.runs.is_empty() {
                return Err(TrainReportError::Layout {
                    path: core_dir,
                    problem: "no *.perf.csv files (one per `perf stat -x, -o FILE` run)".into(),
                });
            }
            runs.push(pr);
        }
    }
    let (table, more) = assemble(&measurements, &runs).map_err(|source| {
        // Messages about measurements name the CSV; the others the directory.
        let path = match source {
            PerfError::Measurements(_) | PerfError::OneCoreType(_) => meas_path.clone(),
            _ => dir.to_path_buf(),
        };
        TrainReportError::Perf { path, source }
    })?;
    notes.extend(more);
    Ok(LoadedTable {
        table,
        source: dir.display().to_string(),
        notes,
    })
}

/// Trains on `input` and writes the report into `out` (replacing it only
/// once the new one is complete).
pub fn train_and_report(
    input: &LoadedTable,
    opts: &TrainOptions,
    out: &Path,
    charts: bool,
) -> Result<(Model, TrainFiles), TrainReportError> {
    let opts = TrainOptions {
        source: input.source.clone(),
        ..opts.clone()
    };
    let model = train(&input.table, &opts).map_err(|source| TrainReportError::Train {
        source_name: input.source.clone(),
        source,
    })?;
    let files = write_atomically(out, |tmp| {
        let mut written = Vec::new();
        let mut put = |name: &str, text: String| -> Result<(), TrainReportError> {
            let p = tmp.join(name);
            fs::write(&p, text).map_err(io_err(&p))?;
            written.push(out.join(name));
            Ok(())
        };
        put("model.json", model.to_json() + "\n")?;
        put("summary.md", summary_markdown(&model, &input.notes))?;
        put("table.csv", input.table.to_csv_string())?;
        put("predictions.csv", predictions_csv(&model))?;
        let mut chart_files = Vec::new();
        if charts {
            for p in write_charts(tmp, &model)? {
                chart_files.push(out.join(p.file_name().expect("chart file name")));
            }
        }
        Ok(TrainFiles {
            dir: out.to_path_buf(),
            model_json: out.join("model.json"),
            summary_md: out.join("summary.md"),
            charts: chart_files,
        })
    })?;
    Ok((model, files))
}

/// The files of a written report.
#[derive(Debug, Clone, PartialEq)]
pub struct TrainFiles {
    pub dir: PathBuf,
    pub model_json: PathBuf,
    pub summary_md: PathBuf,
    pub charts: Vec<PathBuf>,
}

/// Runs `fill` on a fresh hidden sibling of `dir`, then renames it to `dir`
/// (replacing a previous one). On error nothing is left behind.
fn write_atomically<T>(
    dir: &Path,
    fill: impl FnOnce(&Path) -> Result<T, TrainReportError>,
) -> Result<T, TrainReportError> {
    if dir.exists() && !dir.is_dir() {
        return Err(TrainReportError::Layout {
            path: dir.to_path_buf(),
            problem: "exists and is not a directory".into(),
        });
    }
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| TrainReportError::Layout {
            path: dir.to_path_buf(),
            problem: "the output path must end in a directory name".into(),
        })?;
    let parent = match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    fs::create_dir_all(&parent).map_err(io_err(&parent))?;
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let suffix = format!("{}-{nanos}", std::process::id());
    let tmp = parent.join(format!(".{name}.tmp-{suffix}"));
    fs::create_dir(&tmp).map_err(io_err(&tmp))?;
    let value = match fill(&tmp) {
        Ok(v) => v,
        Err(e) => {
            let _ = fs::remove_dir_all(&tmp);
            return Err(e);
        }
    };
    let old = parent.join(format!(".{name}.old-{suffix}"));
    let had_old = dir.exists();
    if had_old {
        if let Err(e) = fs::rename(dir, &old) {
            let _ = fs::remove_dir_all(&tmp);
            return Err(io_err(dir)(e));
        }
    }
    if let Err(e) = fs::rename(&tmp, dir) {
        if had_old {
            let _ = fs::rename(&old, dir);
        }
        let _ = fs::remove_dir_all(&tmp);
        return Err(io_err(dir)(e));
    }
    if had_old {
        let _ = fs::remove_dir_all(&old);
    }
    Ok(value)
}

/// A number with up to 6 decimals, trailing zeros dropped.
fn num(v: f64) -> String {
    let s = format!("{v:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.to_string()
    }
}

fn pct(v: f64) -> String {
    format!("{:.1}%", v * 100.0)
}

/// `intercept + c1 * EV1/CPU_CYCLES - ...` on one line.
fn formula(lin: &colab_model::Linear, events: &[String]) -> String {
    let mut s = num(lin.intercept);
    for e in events {
        let c = lin.coefficients[e];
        let sign = if c < 0.0 { '-' } else { '+' };
        let _ = write!(s, " {sign} {} * {e}/{CPU_CYCLES}", num(c.abs()));
    }
    s
}

fn core_label(c: &str) -> String {
    if c == ANY_CORE_TYPE {
        "any core type (`*`)".into()
    } else {
        format!("core type `{c}`")
    }
}

/// The model's formulas and provenance, as plain text (`--show-builtin`).
pub fn describe_model(m: &Model) -> String {
    let mut s = format!("Model `{}`\n", m.name());
    match m.source() {
        Source::Builtin { citation, note } => {
            let _ = writeln!(s, "Source: built in, from {citation}.\nNote: {note}");
        }
        Source::Trained { table } => {
            let _ = writeln!(s, "Source: trained by `colab train` from {table}.");
        }
    }
    let _ = writeln!(
        s,
        "Energy output: {}",
        if m.energy_is_ratio() {
            "energy on the fastest core type / energy on the slowest (a ratio)"
        } else {
            "the model's own units, not a fast/slow ratio (use it to rank threads)"
        }
    );
    for (c, e) in m.core_types() {
        let _ = writeln!(
            s,
            "\n{}: reads {}, {CPU_CYCLES}\n  speedup      = {}\n  energy_ratio = {}",
            core_label(c),
            e.events().join(", "),
            formula(e.speedup(), e.events()),
            formula(e.energy_ratio(), e.events()),
        );
    }
    s
}

/// One row per (program, core type, target): measured, fitted, LOPO.
fn predictions_csv(m: &Model) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    let header = [
        "program",
        "core_type",
        "target",
        "measured",
        "fitted",
        "lopo",
        "lopo_error",
    ];
    w.write_record(header).expect("in-memory CSV");
    if let Some(t) = m.training() {
        for (c, s) in &t.core_types {
            for p in &s.programs {
                for (target, e) in [("speedup", &p.speedup), ("energy_ratio", &p.energy_ratio)] {
                    w.write_record([
                        p.program.clone(),
                        c.clone(),
                        target.to_string(),
                        e.actual.to_string(),
                        e.fitted.to_string(),
                        e.lopo.to_string(),
                        e.lopo_error.to_string(),
                    ])
                    .expect("in-memory CSV");
                }
            }
        }
    }
    String::from_utf8(w.into_inner().expect("in-memory CSV")).expect("UTF-8 CSV")
}

fn write_charts(dir: &Path, m: &Model) -> Result<Vec<PathBuf>, TrainReportError> {
    let Some(t) = m.training() else {
        return Ok(Vec::new());
    };
    let mut files = Vec::new();
    for (target, label) in [("speedup", "speedup"), ("energy_ratio", "energy ratio")] {
        let series: Vec<ScatterSeries> = t
            .core_types
            .iter()
            .map(|(c, s)| ScatterSeries {
                label: format!("counters from `{c}`"),
                points: s
                    .programs
                    .iter()
                    .map(|p| {
                        let e = if target == "speedup" {
                            &p.speedup
                        } else {
                            &p.energy_ratio
                        };
                        ScatterPoint {
                            label: format!("{} ({c})", p.program),
                            real: e.actual,
                            simulated: e.lopo,
                        }
                    })
                    .collect(),
            })
            .collect();
        let stem = dir.join(format!("lopo_{target}"));
        let written = write_diagonal_scatter(
            &stem,
            &format!(
                "{}: {label}, leave-one-program-out (mean error {})",
                m.name(),
                pct(if target == "speedup" {
                    t.lopo_error.speedup
                } else {
                    t.lopo_error.energy_ratio
                })
            ),
            &format!("measured {label}"),
            &format!("predicted {label} (program left out of training)"),
            &series,
        )
        .map_err(|e| TrainReportError::Chart {
            path: stem.clone(),
            message: e.to_string(),
        })?;
        files.extend(written);
    }
    Ok(files)
}

fn core_section(s: &mut String, c: &str, e: &colab_model::CoreModel, t: &CoreTypeSummary) {
    let _ = writeln!(s, "\n## {}\n", core_label(c));
    let _ = writeln!(
        s,
        "Features are counts per cycle (EVENT/{CPU_CYCLES}), measured on this core type.\n\n\
         speedup = {}\n\nenergy_ratio = {}\n",
        formula(e.speedup(), e.events()),
        formula(e.energy_ratio(), e.events())
    );
    s.push_str("| term | speedup | energy_ratio |\n|---|---|---|\n");
    let _ = writeln!(
        s,
        "| intercept | {} | {} |",
        num(e.speedup().intercept),
        num(e.energy_ratio().intercept)
    );
    for ev in e.events() {
        let _ = writeln!(
            s,
            "| {ev}/{CPU_CYCLES} | {} | {} |",
            num(e.speedup().coefficients[ev]),
            num(e.energy_ratio().coefficients[ev])
        );
    }
    let _ = writeln!(
        s,
        "\nError: leave-one-program-out {} (speedup), {} (energy ratio); in-sample {} / {}.",
        pct(t.lopo_error.speedup),
        pct(t.lopo_error.energy_ratio),
        pct(t.fit_error.speedup),
        pct(t.fit_error.energy_ratio)
    );

    s.push_str(
        "\n### Event ranking\n\nSelected events in the order chosen, then the others by their \
         first-step score (what each adds to all the others).\n\n\
         | rank | event | first-step score | selected | note |\n|---|---|---|---|---|\n",
    );
    for (i, r) in t.ranking.iter().enumerate() {
        let _ = writeln!(
            s,
            "| {} | {} | {:.3} | {} | {} |",
            i + 1,
            r.event,
            r.score,
            if r.selected { "yes" } else { "" },
            r.note.as_deref().unwrap_or("")
        );
    }
    for d in &t.dropped {
        let _ = writeln!(s, "| - | {} | - | | dropped: {} |", d.event, d.reason);
    }

    s.push_str(
        "\n### Principal components (first step)\n\n\
         | component | explained variance | mean r² with the targets |\n|---|---|---|\n",
    );
    for (i, comp) in t.components.iter().enumerate() {
        let _ = writeln!(
            s,
            "| {} | {} | {:.3} |",
            i + 1,
            pct(comp.explained_variance),
            comp.target_r2
        );
    }

    s.push_str(
        "\n### Per program (leave-one-program-out)\n\n\
         | program | speedup | predicted | error | energy ratio | predicted | error | events selected without it |\n\
         |---|---|---|---|---|---|---|---|\n",
    );
    for p in &t.programs {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            p.program,
            num(p.speedup.actual),
            num(p.speedup.lopo),
            pct(p.speedup.lopo_error),
            num(p.energy_ratio.actual),
            num(p.energy_ratio.lopo),
            pct(p.energy_ratio.lopo_error),
            p.lopo_events.join(", ")
        );
    }
}

/// The report's `summary.md`.
pub fn summary_markdown(m: &Model, input_notes: &[String]) -> String {
    let mut s = format!("# Model `{}`\n\n", m.name());
    let Some(t) = m.training() else {
        return s + &describe_model(m);
    };
    let cores: Vec<&str> = t.core_types.keys().map(String::as_str).collect();
    let _ = writeln!(
        s,
        "Trained by `colab train` from `{}`: {} programs on {} core types ({}); up to {} events \
         per core type plus {CPU_CYCLES} (the normaliser), {} counters at most.\n\n\
         Selection: {RANKING_RULE}. Then least squares with an intercept for each target.\n\n\
         Errors are mean absolute relative errors |predicted - measured| / measured. \
         *Leave-one-program-out* (LOPO): each program is predicted by a model trained, event \
         selection included, without it; this is the error to expect on a new program. \
         *In-sample*: the final model on the programs it was fitted to.\n",
        t.table,
        t.programs.len(),
        cores.len(),
        cores.join(", "),
        t.events_requested,
        t.max_counters
    );
    s.push_str(
        "| core type | events | speedup LOPO | energy ratio LOPO | speedup in-sample | energy ratio in-sample |\n\
         |---|---|---|---|---|---|\n",
    );
    for (c, e) in m.core_types() {
        if let Some(ct) = t.core_types.get(c) {
            let _ = writeln!(
                s,
                "| {c} | {} | {} | {} | {} | {} |",
                e.events().join(", "),
                pct(ct.lopo_error.speedup),
                pct(ct.lopo_error.energy_ratio),
                pct(ct.fit_error.speedup),
                pct(ct.fit_error.energy_ratio)
            );
        }
    }
    let _ = writeln!(
        s,
        "| **all** | | **{}** | **{}** | {} | {} |",
        pct(t.lopo_error.speedup),
        pct(t.lopo_error.energy_ratio),
        pct(t.fit_error.speedup),
        pct(t.fit_error.energy_ratio)
    );
    if !t.notes.is_empty() || !input_notes.is_empty() {
        s.push_str("\n## Notes\n\n");
        for n in t.notes.iter().chain(input_notes) {
            let _ = writeln!(s, "- {n}");
        }
    }
    for (c, e) in m.core_types() {
        if let Some(ct) = t.core_types.get(c) {
            core_section(&mut s, c, e, ct);
        }
    }
    s.push_str(
        "\n## Files\n\n`model.json` (the model, `colab_model::Model::from_json`), `table.csv` \
         (the table trained on), `predictions.csv`, `lopo_speedup.svg/png` and \
         `lopo_energy_ratio.svg/png` (leave-one-program-out predictions against measurements).\n",
    );
    s
}

/// What `colab train` prints once a model is trained: per core type the
/// events chosen and the leave-one-program-out errors, the mean errors
/// beside the in-sample ones, and where the model and report went.
pub fn result_lines(model: &Model, files: &TrainFiles) -> String {
    let t = model.training().expect("a trained model has its summary");
    let mut out = String::new();
    for (c, e) in model.core_types() {
        let ct = &t.core_types[c];
        let _ = writeln!(
            out,
            "{c}: {} -> leave-one-program-out error: speedup {:.1}%, energy ratio {:.1}%",
            e.events().join(", "),
            ct.lopo_error.speedup * 100.0,
            ct.lopo_error.energy_ratio * 100.0
        );
    }
    let _ = writeln!(
        out,
        "mean leave-one-program-out error: speedup {:.1}%, energy ratio {:.1}% (in-sample {:.1}%, {:.1}%)",
        t.lopo_error.speedup * 100.0,
        t.lopo_error.energy_ratio * 100.0,
        t.fit_error.speedup * 100.0,
        t.fit_error.energy_ratio * 100.0
    );
    let _ = writeln!(
        out,
        "model `{}` -> {}; report {}",
        model.name(),
        files.model_json.display(),
        files.summary_md.display()
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_formulas_read_like_the_paper() {
        assert_eq!(num(2.6185), "2.6185");
        assert_eq!(num(-7.86180000001), "-7.8618");
        assert_eq!(num(-0.0000001), "0");
        assert_eq!(num(3.0), "3");
        let m = Model::builtin("colab-tpds-armv8").unwrap();
        let (_, e) = m.core_types().next().unwrap();
        assert_eq!(
            formula(e.speedup(), e.events()),
            "2.6185 - 7.8618 * L1D_CACHE_REFILL/CPU_CYCLES - 25.7769 * L1D_TLB_REFILL/CPU_CYCLES \
             - 34.2781 * L1D_CACHE_WB/CPU_CYCLES + 11.2167 * L2D_CACHE/CPU_CYCLES \
             + 44.3879 * L2D_CACHE_WB/CPU_CYCLES - 10.1942 * BUS_ACCESS/CPU_CYCLES"
        );
        // Without a training summary the summary is the description.
        assert!(summary_markdown(&m, &[]).contains("Fig. 5b"));
    }

    #[test]
    fn a_failed_fill_leaves_nothing_and_keeps_the_old_directory() {
        let root = tempfile::tempdir().unwrap();
        let out = root.path().join("r");
        write_atomically(&out, |tmp| {
            fs::write(tmp.join("a"), "old").map_err(io_err(tmp))
        })
        .unwrap();
        let err = write_atomically(&out, |tmp| {
            fs::write(tmp.join("a"), "new").map_err(io_err(tmp))?;
            Err::<(), _>(TrainReportError::Layout {
                path: tmp.to_path_buf(),
                problem: "boom".into(),
            })
        });
        assert!(err.is_err());
        assert_eq!(fs::read_to_string(out.join("a")).unwrap(), "old");
        let names: Vec<_> = fs::read_dir(root.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["r"]);
    }
}
