//! `colab analytic`: the papers' formulas, no simulation.

use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

pub const ABOUT: &str = "Analytic studies computed from the papers' formulas (no simulation).";

pub const LONG_ABOUT: &str = "Analytic studies computed from the papers' formulas (no simulation).

Each writes CSV and Markdown tables and SVG/PNG charts.";

pub const EXAMPLES: &str = "\
Examples:
  colab analytic camp-uf                   # into reports/analytic/camp-uf/
  colab analytic propsp -o /tmp/propsp";

/// The studies of `colab analytic`.
#[derive(Clone, Copy, clap::ValueEnum)]
enum Study {
    /// CAMP's utility factor (Saez et al., TOCS 2012): analytical form (eq. 1/10)
    /// against the approximation (eq. 2, k = 2) over the SF and thread ranges of Fig. 8.
    CampUf,
    /// Prop-SP's Section 2: Table 1 workloads on 2 fast + 2 slow cores under HSP, RR,
    /// Prop-SP, Opt-Unfairness and Opt-ASP-Ref; normalised ASP and unfairness (Fig. 1).
    Propsp,
}

#[derive(clap::Args)]
pub struct AnalyticArgs {
    #[arg(value_enum)]
    study: Study,
    /// Output directory [default: reports/analytic/<STUDY>/].
    #[arg(short, long, value_name = "DIR")]
    out: Option<PathBuf>,
}

/// Runs one analytic study into `out` (default `reports/analytic/<study>`).
pub fn run(a: AnalyticArgs) -> Result<()> {
    let name = match a.study {
        Study::CampUf => "camp-uf",
        Study::Propsp => "propsp",
    };
    let dir = a
        .out
        .unwrap_or_else(|| Path::new("reports/analytic").join(name));
    let written = match a.study {
        Study::CampUf => colab_analytic::camp::write_camp_uf(&dir),
        Study::Propsp => colab_analytic::propsp::write_propsp(&dir),
    }
    .with_context(|| format!("analytic {name}"))?;
    print!("{}", written.summary);
    println!("\nwritten to {}:", dir.display());
    for f in &written.files {
        println!("  {}", f.display());
    }
    Ok(())
}
