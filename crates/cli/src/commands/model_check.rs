//! `colab model-check`: benchmark models against recordings of the real
//! programs they model.

use anyhow::{bail, Context, Result};
use colab_validate::models;
use colab_workload::Library;
use std::path::PathBuf;

pub const ABOUT: &str =
    "Check each benchmark model against recordings of the real program it models.";

pub const LONG_ABOUT: &str =
    "Check each benchmark model against recordings of the real program it models.

Per run: threads, CPU time, run time and waits by kind, and whether each
kind's rate per second is within 1.5x of the real one.";

pub const EXAMPLES: &str = "\
Examples:
  colab model-check                        # the shipped PARSEC library, 4 workers
  colab model-check --threads 8 ocean_cp lu_cb
  colab model-check --model my-ferret.toml ferret   # a model file being worked on";

#[derive(clap::Args)]
pub struct ModelCheckArgs {
    /// Programs to check (default: every recorded program with a model).
    programs: Vec<String>,
    /// Trace library: a directory, or a name found in traces/ here,
    /// $COLAB_TRACES or the source tree's traces/.
    #[arg(long, default_value = "parsec")]
    traces: String,
    /// Worker threads of the recordings to compare (the model runs
    /// with as many).
    #[arg(long, default_value_t = 4)]
    threads: u32,
    /// Print JSON, one object per program.
    #[arg(long)]
    json: bool,
    /// Exit with status 1 when a model is outside the band.
    #[arg(long)]
    strict: bool,
    /// A model file to use instead of the built-in model of the same
    /// name (repeatable; for working on a model without rebuilding).
    #[arg(long, value_name = "FILE.toml")]
    model: Vec<PathBuf>,
    /// Replay a recorded futex wait whose waker the recording does not
    /// name as a sleep of its recorded length, as replay did until
    /// 2026-11-29 (the built-in models were sized that way).
    #[arg(long)]
    sleep_unnamed_wakes: bool,
}

pub fn run(a: ModelCheckArgs) -> Result<()> {
    let dir = colab_trace::workloads::find_library(&a.traces)?;
    let mut lib = Library::builtin();
    for f in &a.model {
        let text = std::fs::read_to_string(f)
            .with_context(|| format!("--model {}: cannot read", f.display()))?;
        lib.add_program_text(&f.display().to_string(), &text)?;
    }
    let traces = &a.traces;
    let cs = models::compare_library(&lib, &dir, a.threads, &a.programs, a.sleep_unnamed_wakes)
        .with_context(|| format!("--traces {traces}"))?;
    if cs.is_empty() {
        bail!(
            "--traces {traces}: no recording with {} workers has a benchmark model",
            a.threads
        );
    }
    if a.json {
        for c in &cs {
            println!("{}", serde_json::to_string(c)?);
        }
    } else {
        print!("{}", models::table(&cs));
    }
    let off: Vec<&str> = cs
        .iter()
        .filter(|c| !c.agrees())
        .map(|c| c.program.as_str())
        .collect();
    if a.strict && !off.is_empty() {
        bail!("outside the band: {}", off.join(", "));
    }
    Ok(())
}
