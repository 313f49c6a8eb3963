//! Analytic studies from the papers, computed from their formulas alone (no
//! simulation):
//!
//! * [`camp`]: CAMP's utility factor (Saez et al., TOCS 2012, Section 3 and
//!   the Appendix): the analytical form (eq. 1 / eq. 10) against the
//!   approximation (eq. 2) over the ranges of the paper's Fig. 8.
//! * [`propsp`]: Prop-SP's motivation study (Section 2 of the Prop-SP paper):
//!   the Table 1 workloads on 2 fast + 2 slow cores under HSP, RR, Prop-SP,
//!   Opt-Unfairness and Opt-ASP-Ref, from the Table 2 formulas.
//!
//! Each study has a `write_*` function that writes CSV + Markdown + SVG/PNG
//! charts into a directory, every file through a temporary file and a rename.

use std::path::PathBuf;

use thiserror::Error;

pub mod camp;
mod lp;
mod output;
mod plot;
pub mod propsp;

pub use output::StudyFiles;

#[derive(Debug, Error)]
pub enum AnalyticError {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: cannot draw the chart: {message}", path.display())]
    Chart { path: PathBuf, message: String },
    #[error("charts need a system font: {0}")]
    Font(String),
    #[error("{0}")]
    Invalid(String),
}
