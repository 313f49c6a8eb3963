//! Training tables from real hardware: `perf stat -x,` output and measured
//! time and energy.
//!
//! # Recipe
//!
//! For each training program and each cluster (core type):
//!
//! 1. Pin the program to the cluster, e.g. `taskset -c 4-7` for the big
//!    cores of a Hikey 970 (`lscpu -e` or `/sys/devices/system/cpu/cpu*/cpu_capacity`
//!    tell which CPUs form which cluster), and keep the cluster's frequency
//!    fixed (`userspace` or `performance` governor) so runs compare.
//! 2. Count events with `perf stat -x, -o RUN.perf.csv -e cycles,EV1,...,EVk --
//!    taskset -c CPUS PROGRAM ARGS`. Cortex-A53/A57/A73 have 6 event counters
//!    plus the cycle counter; more events than counters get multiplexed
//!    (perf time-shares them and scales each count up, an estimate). To avoid
//!    it, split the events over `ceil(events / (counters - 1))` runs with
//!    `cycles` in every group: the colab-tpds procedure ("we repeatedly
//!    execute each application while collecting different PMUs"). Every
//!    ARMv8 event is `r<hex code>` or its name in `perf list`; collect at
//!    least CPU_CYCLES, INST_RETIRED, L1D_CACHE_REFILL, L1D_TLB_REFILL,
//!    L1D_CACHE_WB, L2D_CACHE, L2D_CACHE_WB, BUS_ACCESS, BR_IMMED_RETIRED
//!    (events that stay zero, like SW_INCR, are dropped by training).
//! 3. Measure the run's time and energy without perf (an energy meter or
//!    the board's power sensors over the run) and write one row per run to
//!    `measurements.csv`: `program,core_type,seconds,joules` (repeated rows
//!    of one program and core type are averaged).
//!
//! Directory layout read by `colab train --perf DIR`:
//!
//! ```text
//! DIR/measurements.csv
//! DIR/<program>/<core_type>/*.perf.csv   one file per run (event group)
//! ```
//!
//! [`assemble`] merges the runs of a program on a core type by rates: each
//! event's count per cycle of the run that counted it, averaged over the runs
//! that counted it, times the mean cycle count. The fastest core type is the
//! one with the smallest geometric-mean time over programs, the slowest the
//! largest; `speedup = seconds(slowest) / seconds(fastest)` and
//! `energy_ratio = joules(fastest) / joules(slowest)`.
//!
//! # Parsing
//!
//! Each counter line is `value,unit,event[,variance%],run time,percentage
//! running[,metric,metric unit]`. `<not counted>` and `<not supported>` values
//! are skipped with a warning; lines with a unit (task-clock in msec) are not
//! event counts and are skipped; `#` lines are comments. perf has already
//! scaled a multiplexed count by enabled/running time before printing it, so
//! values are taken as printed (scaling again would double it) and a count
//! that ran less than [`MULTIPLEX_WARN_PCT`]% of the time gets a warning. An
//! event printed once per PMU (big.LITTLE machines with one PMU per cluster)
//! is summed. Interval (`-I`) and per-CPU (`-A`) output are not supported.

use std::collections::BTreeMap;

use thiserror::Error;

use crate::events::{canonical, CPU_CYCLES};
use crate::table::{TableError, TrainingTable, CORE_TYPE, PROGRAM};

/// A count measured for less of the run than this (percent) was multiplexed.
pub const MULTIPLEX_WARN_PCT: f64 = 99.0;

#[derive(Debug, Error, Clone, PartialEq)]
pub enum PerfError {
    #[error("line {line}: {problem}")]
    Line { line: usize, problem: String },
    #[error("no counter lines (expected `perf stat -x,` output)")]
    Empty,
    #[error("{run}: no {CPU_CYCLES} count (`cycles`); put cycles in every event group so that runs can be merged")]
    NoCycles { run: String },
    #[error("measurements: {0}")]
    Measurements(TableError),
    #[error("program `{program}` on core type `{core_type}` has a row in measurements.csv but no perf runs")]
    NoRuns { program: String, core_type: String },
    #[error("program `{program}` on core type `{core_type}` has perf runs but no row in measurements.csv")]
    NoMeasurement { program: String, core_type: String },
    #[error("measurements.csv: only core type {0}; a speedup needs at least two")]
    OneCoreType(String),
    #[error("no event besides {CPU_CYCLES} was counted for every program and core type")]
    NoCommonEvents,
}

/// One `perf stat` run: counts by canonical event name, and what was odd.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PerfRun {
    pub counts: BTreeMap<String, f64>,
    pub warnings: Vec<String>,
}

fn line_err(line: usize, problem: impl Into<String>) -> PerfError {
    PerfError::Line {
        line,
        problem: problem.into(),
    }
}

/// Splits a line on commas, keeping `pmu/a=1,b=2/` event names whole.
fn fields(line: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut open = false;
    for part in line.split(',') {
        if open {
            let last = out.last_mut().expect("open implies a field");
            last.push(',');
            last.push_str(part);
        } else {
            out.push(part.to_string());
        }
        // Inside `pmu/.../` while an odd number of slashes has been seen.
        let slashes = out.last().map_or(0, |f| f.matches('/').count());
        open = slashes % 2 == 1;
    }
    out.into_iter().map(|f| f.trim().to_string()).collect()
}

/// Parses `perf stat -x,` output (see the module docs).
pub fn parse_perf_stat(text: &str) -> Result<PerfRun, PerfError> {
    let mut run = PerfRun::default();
    // event -> (counted anywhere, printed names) for the not-counted warning.
    let mut seen: BTreeMap<String, bool> = BTreeMap::new();
    let mut lines = 0;
    for (i, raw) in text.lines().enumerate() {
        let line_no = i + 1;
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let f = fields(line);
        if f.len() < 3 || f[2].is_empty() {
            return Err(line_err(
                line_no,
                format!("`{line}` is not a `perf stat -x,` counter line (value,unit,event,...; interval -I and per-CPU -A output are not supported)"),
            ));
        }
        lines += 1;
        let (value, unit, name) = (&f[0], &f[1], &f[2]);
        let event = canonical(name);
        let mut rest = f[3..].iter();
        let mut next = rest.next();
        // `perf stat -r N` adds the variance between runs.
        if next.is_some_and(|v| v.ends_with('%')) {
            next = rest.next();
        }
        let pct = rest
            .next()
            .filter(|p| !p.is_empty())
            .map(|p| {
                p.parse::<f64>().map_err(|_| {
                    line_err(line_no, format!("percentage running `{p}` is not a number"))
                })
            })
            .transpose()?;
        if value.starts_with("<not supported>") {
            run.warnings
                .push(format!("{name}: not supported on this machine"));
            continue;
        }
        if value.starts_with("<not counted>") {
            seen.entry(event).or_insert(false);
            continue;
        }
        let v: f64 = value
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| line_err(line_no, format!("count `{value}` is not a number")))?;
        if !unit.is_empty() {
            run.warnings.push(format!(
                "{name}: measured in {unit}, not an event count; ignored"
            ));
            continue;
        }
        if let Some(p) = pct.filter(|&p| p < MULTIPLEX_WARN_PCT) {
            run.warnings.push(format!(
                "{name}: counted {p:.1}% of the time (multiplexed), perf scaled it up by {:.2}; put fewer events in a run",
                100.0 / p.max(1e-9)
            ));
        }
        seen.insert(event.clone(), true);
        *run.counts.entry(event).or_insert(0.0) += v;
    }
    if lines == 0 {
        return Err(PerfError::Empty);
    }
    for (event, counted) in seen {
        if !counted {
            run.warnings.push(format!(
                "{event}: <not counted> (the event never ran on a counter)"
            ));
        }
    }
    Ok(run)
}

/// One row of `measurements.csv`.
#[derive(Debug, Clone, PartialEq)]
pub struct Measurement {
    pub row: usize,
    pub program: String,
    pub core_type: String,
    pub seconds: f64,
    pub joules: f64,
}

/// Parses `measurements.csv`: header `program,core_type,seconds,joules`,
/// any column order, `#` comments. Errors name the row and column.
pub fn parse_measurements(text: &str) -> Result<Vec<Measurement>, TableError> {
    let mut rdr = csv::ReaderBuilder::new()
        .flexible(true)
        .comment(Some(b'#'))
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let header: Vec<String> = rdr
        .headers()
        .map_err(|e| TableError::Read(e.to_string()))?
        .iter()
        .map(|h| h.to_ascii_lowercase())
        .collect();
    let hrow = (rdr.position().line() as usize).saturating_sub(1).max(1);
    let col = |name: &str| {
        header
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| TableError::MissingColumn {
                row: hrow,
                column: name.to_string(),
                why: "",
            })
    };
    let (ip, ic, is, ij) = (
        col(PROGRAM)?,
        col(CORE_TYPE)?,
        col("seconds")?,
        col("joules")?,
    );
    let mut out = Vec::new();
    for rec in rdr.records() {
        let rec = rec.map_err(|e| TableError::Read(e.to_string()))?;
        let row = rec.position().map_or(out.len() + 2, |p| p.line() as usize);
        if rec.len() != header.len() {
            return Err(TableError::RowLength {
                row,
                found: rec.len(),
                expected: header.len(),
            });
        }
        let num = |i: usize, name: &str| -> Result<f64, TableError> {
            let cell = &rec[i];
            let v: f64 = cell.parse().map_err(|_| TableError::NotANumber {
                row,
                column: name.to_string(),
                value: cell.to_string(),
            })?;
            if !(v.is_finite() && v > 0.0) {
                return Err(TableError::BadValue {
                    row,
                    column: name.to_string(),
                    problem: format!("{cell} must be positive"),
                });
            }
            Ok(v)
        };
        for (i, name) in [(ip, PROGRAM), (ic, CORE_TYPE)] {
            if rec[i].is_empty() {
                return Err(TableError::BadValue {
                    row,
                    column: name.into(),
                    problem: "empty cell".into(),
                });
            }
        }
        out.push(Measurement {
            row,
            program: rec[ip].to_string(),
            core_type: rec[ic].to_string(),
            seconds: num(is, "seconds")?,
            joules: num(ij, "joules")?,
        });
    }
    if out.is_empty() {
        return Err(TableError::Empty);
    }
    Ok(out)
}

/// Mean cycles and merged counts by event of one program on one core type.
type Merged = (f64, BTreeMap<String, f64>);

/// The perf runs of one program on one core type; `name` says where each
/// run came from (a file name) for messages.
#[derive(Debug, Clone, PartialEq)]
pub struct ProgramRuns {
    pub program: String,
    pub core_type: String,
    pub runs: Vec<(String, PerfRun)>,
}

/// Builds a training table from measurements and perf runs (see the module
/// docs for how runs merge and how targets are computed). Returns the table
/// and notes (events dropped because some program or core type lacks them,
/// which core types are fastest and slowest).
pub fn assemble(
    measurements: &[Measurement],
    runs: &[ProgramRuns],
) -> Result<(TrainingTable, Vec<String>), PerfError> {
    let mut notes = Vec::new();
    // (program, core type) -> (sum seconds, sum joules, n)
    let mut meas: BTreeMap<(&str, &str), (f64, f64, f64)> = BTreeMap::new();
    let mut programs: Vec<&str> = Vec::new();
    for m in measurements {
        let e = meas
            .entry((&m.program, &m.core_type))
            .or_insert((0.0, 0.0, 0.0));
        *e = (e.0 + m.seconds, e.1 + m.joules, e.2 + 1.0);
        if !programs.contains(&m.program.as_str()) {
            programs.push(&m.program);
        }
    }
    let mut core_types: Vec<&str> = meas.keys().map(|&(_, c)| c).collect();
    core_types.sort();
    core_types.dedup();
    if core_types.len() < 2 {
        return Err(PerfError::OneCoreType(
            core_types.first().copied().unwrap_or("(none)").to_string(),
        ));
    }
    for &p in &programs {
        for &c in &core_types {
            if !meas.contains_key(&(p, c)) {
                return Err(PerfError::Measurements(TableError::OneCoreType {
                    row: measurements
                        .iter()
                        .find(|m| m.program == p)
                        .map_or(2, |m| m.row),
                    program: p.to_string(),
                    have: core_types
                        .iter()
                        .filter(|&&c2| meas.contains_key(&(p, c2)))
                        .map(|c2| format!("`{c2}`"))
                        .collect::<Vec<_>>()
                        .join(", "),
                    all: core_types.join(", "),
                }));
            }
        }
    }
    let mean_of = |p: &str, c: &str| {
        let (s, j, n) = meas[&(p, c)];
        (s / n, j / n)
    };
    // Geometric mean time over programs orders the core types.
    let speed = |c: &str| programs.iter().map(|p| mean_of(p, c).0.ln()).sum::<f64>();
    let fast = *core_types
        .iter()
        .min_by(|a, b| speed(a).total_cmp(&speed(b)))
        .expect("two core types");
    let slow = *core_types
        .iter()
        .max_by(|a, b| speed(a).total_cmp(&speed(b)))
        .expect("two core types");
    notes.push(format!(
        "fastest core type `{fast}`, slowest `{slow}` (geometric-mean time over programs)"
    ));

    // Merge each (program, core type)'s runs into rates per cycle.
    // (program, core type) -> (mean cycles, merged counts)
    let mut merged: BTreeMap<(&str, &str), Merged> = BTreeMap::new();
    for pr in runs {
        let key = (pr.program.as_str(), pr.core_type.as_str());
        if !meas.contains_key(&key) {
            return Err(PerfError::NoMeasurement {
                program: pr.program.clone(),
                core_type: pr.core_type.clone(),
            });
        }
        let mut cycles = Vec::new();
        let mut rates: BTreeMap<String, (f64, f64)> = BTreeMap::new();
        for (source, run) in &pr.runs {
            let c = run
                .counts
                .get(CPU_CYCLES)
                .copied()
                .filter(|&c| c > 0.0)
                .ok_or_else(|| PerfError::NoCycles {
                    run: source.clone(),
                })?;
            cycles.push(c);
            for (e, &v) in &run.counts {
                if e != CPU_CYCLES {
                    let r = rates.entry(e.clone()).or_insert((0.0, 0.0));
                    *r = (r.0 + v / c, r.1 + 1.0);
                }
            }
        }
        if cycles.is_empty() {
            continue;
        }
        let mean_cycles = cycles.iter().sum::<f64>() / cycles.len() as f64;
        let counts = rates
            .into_iter()
            .map(|(e, (sum, n))| (e, sum / n * mean_cycles))
            .collect();
        merged.insert(key, (mean_cycles, counts));
    }
    for &(p, c) in meas.keys() {
        if !merged.contains_key(&(p, c)) {
            return Err(PerfError::NoRuns {
                program: p.to_string(),
                core_type: c.to_string(),
            });
        }
    }

    // Events counted everywhere; the others are dropped with a note.
    let mut all: Vec<String> = merged
        .values()
        .flat_map(|(_, m)| m.keys().cloned())
        .collect();
    all.sort();
    all.dedup();
    let mut events = vec![CPU_CYCLES.to_string()];
    for e in all {
        let missing: Vec<String> = merged
            .iter()
            .filter(|(_, (_, m))| !m.contains_key(&e))
            .map(|((p, c), _)| format!("{p}/{c}"))
            .collect();
        if missing.is_empty() {
            events.push(e);
        } else {
            notes.push(format!(
                "{e} dropped: not counted for {}",
                missing.join(", ")
            ));
        }
    }
    if events.len() < 2 {
        return Err(PerfError::NoCommonEvents);
    }

    let mut table = TrainingTable::new(&events);
    for &p in &programs {
        let (t_fast, e_fast) = mean_of(p, fast);
        let (t_slow, e_slow) = mean_of(p, slow);
        for &c in &core_types {
            let (cycles, m) = &merged[&(p, c)];
            let counts = events
                .iter()
                .map(|e| if e == CPU_CYCLES { *cycles } else { m[e] })
                .collect();
            table.push(p, c, counts, t_slow / t_fast, e_fast / e_slow);
        }
    }
    Ok((table, notes))
}
