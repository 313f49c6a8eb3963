//! The training table: one row per (program, core type it was measured on).
//!
//! CSV with a header row:
//!
//! ```text
//! program,core_type,CPU_CYCLES,L1D_CACHE_REFILL,...,speedup,energy_ratio
//! radix,big,1000000000,24775262,...,1.53,2.1
//! radix,little,1650000000,30112000,...,1.53,2.1
//! ```
//!
//! - `program`, `core_type`: names (any text). Every program needs a row for
//!   every core type that appears in the table, and there must be at least two.
//! - Event columns (any other column): raw counts over the whole run on that
//!   core type. Names are the ARMv8 ones; perf's spellings are accepted (see
//!   [`crate::events::canonical`]). `CPU_CYCLES` is required: features are
//!   counts per cycle. Columns may come in any order.
//! - `speedup`: time on the slowest core type / time on the fastest.
//! - `energy_ratio`: energy on the fastest core type / energy on the slowest
//!   for the same work (the "energy scaling factor"; above 1 means the big
//!   core spends more energy).
//!
//! Both targets belong to the program, not the row: they must be equal on all
//! of a program's rows. Lines starting with `#` are comments. Errors name the
//! row as a spreadsheet does (the header is row 1) and the column.

use std::collections::BTreeMap;
use std::io::Read;

use thiserror::Error;

use crate::events::{canonical, CPU_CYCLES};

pub const PROGRAM: &str = "program";
pub const CORE_TYPE: &str = "core_type";
pub const SPEEDUP: &str = "speedup";
pub const ENERGY_RATIO: &str = "energy_ratio";

/// Relative difference under which two target values are "equal" (a
/// program's targets written on each of its rows by a tool or by hand).
const TARGET_TOLERANCE: f64 = 1e-6;

#[derive(Debug, Error, Clone, PartialEq)]
pub enum TableError {
    #[error("row {row} (header): missing column `{column}`{why}")]
    MissingColumn {
        row: usize,
        column: String,
        why: &'static str,
    },
    #[error("row {row} (header): column `{column}` appears twice")]
    DuplicateColumn { row: usize, column: String },
    #[error("row {row}, column `{column}`: {}", not_a_number(value))]
    NotANumber {
        row: usize,
        column: String,
        value: String,
    },
    #[error("row {row}, column `{column}`: {problem}")]
    BadValue {
        row: usize,
        column: String,
        problem: String,
    },
    #[error("row {row}: {found} cells, but the header has {expected} columns")]
    RowLength {
        row: usize,
        found: usize,
        expected: usize,
    },
    #[error("row {row}, column `{PROGRAM}`: program `{program}` on core type `{core_type}` again (first on row {first_row})")]
    DuplicateRow {
        row: usize,
        program: String,
        core_type: String,
        first_row: usize,
    },
    #[error("row {row}, column `{column}`: program `{program}` has {column} {value} here but {first_value} on row {first_row}; the targets belong to the program and must be equal on all its rows")]
    MismatchedTarget {
        row: usize,
        column: String,
        program: String,
        value: f64,
        first_value: f64,
        first_row: usize,
    },
    #[error("row {row}, column `{CORE_TYPE}`: program `{program}` is measured only on core type {have}; every program needs a row for each core type ({all}), and a speedup needs at least two")]
    OneCoreType {
        row: usize,
        program: String,
        have: String,
        all: String,
    },
    #[error("the table has no data rows (only a header)")]
    Empty,
    #[error("reading the table: {0}")]
    Read(String),
}

fn not_a_number(value: &str) -> String {
    if value.is_empty() {
        "empty cell, expected a number".to_string()
    } else {
        format!("`{value}` is not a number")
    }
}

/// One measured run: a program on one core type.
#[derive(Debug, Clone, PartialEq)]
pub struct TableRow {
    /// 1-based row of the CSV (header = 1) the row came from; rows built in
    /// memory get the row they would have when written out.
    pub row: usize,
    pub program: String,
    pub core_type: String,
    /// Raw counts, in the order of [`TrainingTable::events`].
    pub counts: Vec<f64>,
    pub speedup: f64,
    pub energy_ratio: f64,
}

/// A training table in memory. Build it from CSV ([`TrainingTable::from_csv`]),
/// from perf output ([`crate::perf::assemble`]) or row by row
/// ([`TrainingTable::new`] + [`TrainingTable::push`], e.g. from the simulator's
/// synthesized counters), then [`TrainingTable::validate`] it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TrainingTable {
    /// Canonical event names, CPU_CYCLES among them.
    pub events: Vec<String>,
    pub rows: Vec<TableRow>,
}

/// What [`TrainingTable::validate`] found: programs in order of first
/// appearance and the sorted core types.
#[derive(Debug, Clone, PartialEq)]
pub struct TableShape {
    pub programs: Vec<String>,
    pub core_types: Vec<String>,
}

fn parse_number(row: usize, column: &str, cell: &str) -> Result<f64, TableError> {
    let v: f64 = cell.trim().parse().map_err(|_| TableError::NotANumber {
        row,
        column: column.to_string(),
        value: cell.trim().to_string(),
    })?;
    if !v.is_finite() {
        return Err(TableError::BadValue {
            row,
            column: column.to_string(),
            problem: format!("`{cell}` is not a finite number"),
        });
    }
    Ok(v)
}

enum Col {
    Program,
    CoreType,
    Speedup,
    Energy,
    Event(usize),
}

impl TrainingTable {
    /// An empty table counting `events` (canonicalised).
    pub fn new(events: impl IntoIterator<Item = impl AsRef<str>>) -> Self {
        TrainingTable {
            events: events.into_iter().map(|e| canonical(e.as_ref())).collect(),
            rows: Vec::new(),
        }
    }

    /// Appends a row; its row number is the one it would have in a CSV.
    pub fn push(
        &mut self,
        program: &str,
        core_type: &str,
        counts: Vec<f64>,
        speedup: f64,
        energy_ratio: f64,
    ) {
        self.rows.push(TableRow {
            row: self.rows.len() + 2,
            program: program.to_string(),
            core_type: core_type.to_string(),
            counts,
            speedup,
            energy_ratio,
        });
    }

    /// Parses CSV text (see the module docs) and validates it.
    pub fn from_csv_str(text: &str) -> Result<Self, TableError> {
        Self::from_csv(text.as_bytes())
    }

    /// Parses CSV from a reader (see the module docs) and validates it.
    pub fn from_csv<R: Read>(reader: R) -> Result<Self, TableError> {
        let mut rdr = csv::ReaderBuilder::new()
            .has_headers(true)
            .flexible(true)
            .comment(Some(b'#'))
            .trim(csv::Trim::All)
            .from_reader(reader);
        let header = rdr
            .headers()
            .map_err(|e| TableError::Read(e.to_string()))?
            .clone();
        // The reader now stands at the line after the header (comment
        // lines before it count).
        let hrow = (rdr.position().line() as usize).saturating_sub(1).max(1);
        let mut cols = Vec::with_capacity(header.len());
        let mut events: Vec<String> = Vec::new();
        let mut seen: Vec<String> = Vec::new();
        for name in header.iter() {
            let lower = name.to_ascii_lowercase();
            let (col, key) = match lower.as_str() {
                PROGRAM => (Col::Program, PROGRAM.to_string()),
                CORE_TYPE => (Col::CoreType, CORE_TYPE.to_string()),
                SPEEDUP => (Col::Speedup, SPEEDUP.to_string()),
                ENERGY_RATIO => (Col::Energy, ENERGY_RATIO.to_string()),
                _ => {
                    let ev = canonical(name);
                    events.push(ev.clone());
                    (Col::Event(events.len() - 1), ev)
                }
            };
            if key.is_empty() {
                return Err(TableError::BadValue {
                    row: hrow,
                    column: format!("#{}", cols.len() + 1),
                    problem: "empty column name".into(),
                });
            }
            if seen.contains(&key) {
                return Err(TableError::DuplicateColumn {
                    row: hrow,
                    column: key,
                });
            }
            seen.push(key);
            cols.push(col);
        }
        for (column, why) in [
            (PROGRAM, ""),
            (CORE_TYPE, ""),
            (CPU_CYCLES, " (features are event counts per cycle)"),
            (SPEEDUP, ""),
            (ENERGY_RATIO, ""),
        ] {
            if !seen.iter().any(|s| s == column) {
                return Err(TableError::MissingColumn {
                    row: hrow,
                    column: column.to_string(),
                    why,
                });
            }
        }

        let mut table = TrainingTable {
            events,
            rows: Vec::new(),
        };
        for rec in rdr.records() {
            let rec = rec.map_err(|e| TableError::Read(e.to_string()))?;
            let row = rec
                .position()
                .map_or(table.rows.len() + 2, |p| p.line() as usize);
            if rec.len() != cols.len() {
                return Err(TableError::RowLength {
                    row,
                    found: rec.len(),
                    expected: cols.len(),
                });
            }
            let mut r = TableRow {
                row,
                program: String::new(),
                core_type: String::new(),
                counts: vec![0.0; table.events.len()],
                speedup: 0.0,
                energy_ratio: 0.0,
            };
            for (cell, col) in rec.iter().zip(&cols) {
                match *col {
                    Col::Program => r.program = cell.to_string(),
                    Col::CoreType => r.core_type = cell.to_string(),
                    Col::Speedup => r.speedup = parse_number(row, SPEEDUP, cell)?,
                    Col::Energy => r.energy_ratio = parse_number(row, ENERGY_RATIO, cell)?,
                    Col::Event(i) => r.counts[i] = parse_number(row, &table.events[i], cell)?,
                }
            }
            table.rows.push(r);
        }
        table.validate()?;
        Ok(table)
    }

    /// Writes the table as CSV in the documented format.
    pub fn to_csv_string(&self) -> String {
        let mut w = csv::Writer::from_writer(Vec::new());
        let mut header = vec![PROGRAM.to_string(), CORE_TYPE.to_string()];
        header.extend(self.events.iter().cloned());
        header.extend([SPEEDUP.to_string(), ENERGY_RATIO.to_string()]);
        // Writing to a Vec cannot fail.
        w.write_record(&header).expect("in-memory CSV");
        for r in &self.rows {
            let mut rec = vec![r.program.clone(), r.core_type.clone()];
            rec.extend(r.counts.iter().map(|c| c.to_string()));
            rec.extend([r.speedup.to_string(), r.energy_ratio.to_string()]);
            w.write_record(&rec).expect("in-memory CSV");
        }
        String::from_utf8(w.into_inner().expect("in-memory CSV")).expect("UTF-8 CSV")
    }

    /// Index of an event column.
    pub fn event_index(&self, event: &str) -> Option<usize> {
        self.events.iter().position(|e| e == event)
    }

    /// Checks everything training relies on: CPU_CYCLES present and positive,
    /// counts non-negative, targets positive and equal on a program's rows,
    /// no program twice on a core type, every program on every core type and
    /// at least two core types.
    pub fn validate(&self) -> Result<TableShape, TableError> {
        let mut seen: Vec<&str> = Vec::new();
        for e in &self.events {
            if seen.contains(&e.as_str()) {
                return Err(TableError::DuplicateColumn {
                    row: 1,
                    column: e.clone(),
                });
            }
            seen.push(e);
        }
        let cycles = self
            .event_index(CPU_CYCLES)
            .ok_or_else(|| TableError::MissingColumn {
                row: 1,
                column: CPU_CYCLES.to_string(),
                why: " (features are event counts per cycle)",
            })?;
        if self.rows.is_empty() {
            return Err(TableError::Empty);
        }
        let bad = |row: usize, column: &str, problem: String| TableError::BadValue {
            row,
            column: column.to_string(),
            problem,
        };
        let mut programs: Vec<String> = Vec::new();
        // program -> (first row, speedup, energy_ratio)
        let mut targets: BTreeMap<&str, (usize, f64, f64)> = BTreeMap::new();
        // (program, core type) -> row
        let mut cells: BTreeMap<(&str, &str), usize> = BTreeMap::new();
        for r in &self.rows {
            if r.program.trim().is_empty() {
                return Err(bad(r.row, PROGRAM, "empty program name".into()));
            }
            if r.core_type.trim().is_empty() {
                return Err(bad(r.row, CORE_TYPE, "empty core type".into()));
            }
            if r.counts.len() != self.events.len() {
                return Err(TableError::RowLength {
                    row: r.row,
                    found: r.counts.len() + 4,
                    expected: self.events.len() + 4,
                });
            }
            for (e, &c) in self.events.iter().zip(&r.counts) {
                if !c.is_finite() || c < 0.0 {
                    return Err(bad(
                        r.row,
                        e,
                        format!("{c} is not a count (must be a non-negative number)"),
                    ));
                }
            }
            if r.counts[cycles] <= 0.0 {
                return Err(bad(
                    r.row,
                    CPU_CYCLES,
                    "zero cycles: the run counted nothing".into(),
                ));
            }
            for (column, v) in [(SPEEDUP, r.speedup), (ENERGY_RATIO, r.energy_ratio)] {
                if !(v.is_finite() && v > 0.0) {
                    return Err(bad(r.row, column, format!("{v} must be positive")));
                }
            }
            if let Some(&first_row) = cells.get(&(r.program.as_str(), r.core_type.as_str())) {
                return Err(TableError::DuplicateRow {
                    row: r.row,
                    program: r.program.clone(),
                    core_type: r.core_type.clone(),
                    first_row,
                });
            }
            cells.insert((&r.program, &r.core_type), r.row);
            match targets.get(r.program.as_str()) {
                None => {
                    targets.insert(&r.program, (r.row, r.speedup, r.energy_ratio));
                    programs.push(r.program.clone());
                }
                Some(&(first_row, s, en)) => {
                    for (column, value, first_value) in
                        [(SPEEDUP, r.speedup, s), (ENERGY_RATIO, r.energy_ratio, en)]
                    {
                        if (value - first_value).abs()
                            > TARGET_TOLERANCE * value.abs().max(first_value.abs())
                        {
                            return Err(TableError::MismatchedTarget {
                                row: r.row,
                                column: column.to_string(),
                                program: r.program.clone(),
                                value,
                                first_value,
                                first_row,
                            });
                        }
                    }
                }
            }
        }
        let mut core_types: Vec<String> = self.rows.iter().map(|r| r.core_type.clone()).collect();
        core_types.sort();
        core_types.dedup();
        for p in &programs {
            let have: Vec<&str> = core_types
                .iter()
                .filter(|c| cells.contains_key(&(p.as_str(), c.as_str())))
                .map(String::as_str)
                .collect();
            if have.len() < core_types.len() || core_types.len() < 2 {
                let row = self
                    .rows
                    .iter()
                    .find(|r| &r.program == p)
                    .map_or(2, |r| r.row);
                return Err(TableError::OneCoreType {
                    row,
                    program: p.clone(),
                    have: have
                        .iter()
                        .map(|c| format!("`{c}`"))
                        .collect::<Vec<_>>()
                        .join(", "),
                    all: core_types.join(", "),
                });
            }
        }
        Ok(TableShape {
            programs,
            core_types,
        })
    }
}
