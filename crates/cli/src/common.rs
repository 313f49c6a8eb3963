//! What several subcommands share: argument types, the error text, machine
//! loading, progress bars and small file helpers.

use anyhow::{Context, Result};
use clap::ValueEnum;
use colab_core::{CoreOrder, Topology};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::{Path, PathBuf};

/// `--order`: which cluster gets the low core numbers.
#[derive(Clone, Copy, ValueEnum)]
pub enum Order {
    BigFirst,
    LittleFirst,
}

impl From<Order> for CoreOrder {
    fn from(o: Order) -> CoreOrder {
        match o {
            Order::BigFirst => CoreOrder::BigFirst,
            Order::LittleFirst => CoreOrder::LittleFirst,
        }
    }
}

/// `--lengths`.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LengthsArg {
    /// As the papers ran them (reference inputs, minutes).
    Paper,
    /// As the models are written (0.5-0.6 s).
    Model,
}

/// The error and its causes joined by ": ", leaving out a cause whose text the
/// message before it already ends with (errors that print their source too).
pub fn error_text(e: &anyhow::Error) -> String {
    let mut msg = String::new();
    for cause in e.chain() {
        let s = cause.to_string();
        if !msg.is_empty() && msg.trim_end().ends_with(s.trim_end()) {
            continue;
        }
        if !msg.is_empty() {
            msg.push_str(": ");
        }
        msg.push_str(&s);
    }
    msg
}

/// A machine argument: a topology TOML file (by extension or because it
/// exists) or a name like 2B2S.
pub fn load_topology(arg: &str, order: CoreOrder) -> Result<Topology> {
    colab_campaign::load_topology(arg, order)
}

/// A `--speedup` of replayed compute: a number the reference cores can show
/// (a phase all compute to one all memory), refused by the option otherwise.
pub fn replay_speedup(s: &str) -> std::result::Result<f64, String> {
    let v: f64 = s.parse().map_err(|_| format!("'{s}' is not a number"))?;
    colab_workload::mem_frac_for_speedup(v)?;
    Ok(v)
}

/// Prints a library's warning the way the command line prints them.
pub fn warn(msg: &str) {
    eprintln!("warning: {msg}");
}

/// A progress bar for campaigns and case lists.
pub struct Bar(pub ProgressBar);

impl colab_campaign::Progress for Bar {
    fn start(&self, total: u64) {
        self.0.set_length(total);
    }
    fn inc(&self) {
        self.0.inc(1);
    }
    fn finish(&self) {
        self.0.finish_and_clear();
    }
}

/// A bar counting simulations, with the time left.
pub fn bar() -> Bar {
    let pb = ProgressBar::new(0);
    pb.set_style(
        ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} simulations ({eta} left)",
        )
        .expect("valid template"),
    );
    Bar(pb)
}

/// The hidden subcommand that runs the tracing-overhead probe loops: this
/// very binary, so the probes are traced exactly as programs are.
pub fn probe_command() -> Result<Vec<String>> {
    let exe = std::env::current_exe().context("cannot find the colab executable")?;
    Ok(vec![exe.display().to_string(), "trace-probe".into()])
}

/// This process's command line, arguments with blanks quoted (for the
/// manifests and reports that record what made them); the program is
/// called `colab` wherever it was run from.
pub fn command_line() -> String {
    std::env::args()
        .enumerate()
        .map(|(i, a)| {
            if i == 0 {
                "colab".to_string()
            } else if a.contains(char::is_whitespace) {
                format!("'{a}'")
            } else {
                a
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// This build and today's date (UTC), for the reports that say what made
/// them: `colab 0.1.0, 2026-12-06`.
pub fn made_by_this_build() -> String {
    format!(
        "colab {}, {}",
        env!("CARGO_PKG_VERSION"),
        chrono::Utc::now().format("%Y-%m-%d")
    )
}

/// Writes `bytes` to `path` through a temporary file, so a failure never
/// leaves a half-written file.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp: PathBuf = path.with_extension("partial");
    let result = std::fs::write(&tmp, bytes)
        .with_context(|| format!("{}: cannot create", tmp.display()))
        .and_then(|()| {
            std::fs::rename(&tmp, path)
                .with_context(|| format!("{}: cannot move into place", path.display()))
        });
    if result.is_err() {
        // Leave no partial file behind.
        std::fs::remove_file(&tmp).ok();
    }
    result
}
