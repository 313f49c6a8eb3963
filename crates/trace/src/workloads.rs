//! Recorded traces and trace libraries as replayable workloads: what
//! `colab sim --trace` and `colab reproduce --trace/--traces` read from disk
//! (`colab list` lists the libraries).

use crate::library::{read_trace_text, Entry, LibraryInfo, Manifest, MANIFEST};
use anyhow::{bail, Context, Result};
use colab_workload::Workload;
use std::path::{Path, PathBuf};

/// Big/little speedup of replayed compute when none is given (a trace
/// recorded on one core type cannot tell; assumption: mid-range of the
/// papers' speedups).
pub const DEFAULT_REPLAY_SPEEDUP: f64 = 2.0;

/// How a trace is replayed, beyond its speedups (see [`crate::ReplayOptions`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReplayHow {
    pub keep_tracing_overhead: bool,
    pub sleep_unnamed_wakes: bool,
}

/// A recorded trace as a one-program workload named after the file's stem.
///
/// `speedup` is the big/little speedup of replayed compute and
/// `thread_speedup` the per-thread selectors (`COMM`, `COMM#K`, `@root`).
/// Warnings about the recording (a busy machine, a failed run) go to `warn`
/// before the trace is converted, so they show even if replay then fails.
pub fn load_trace(
    path: &Path,
    speedup: f64,
    thread_speedup: &[(String, f64)],
    how: ReplayHow,
    warn: &mut dyn FnMut(&str),
) -> Result<Workload> {
    let name = path.display().to_string();
    let text = read_trace_text(path).with_context(|| format!("{name}: cannot read trace"))?;
    let trace = crate::Trace::parse(&name, &text)?;
    if let Some(o) = trace.header.others.filter(|o| o.busy()) {
        warn(&format!(
            "{name}: recorded on a busy machine (other processes used {:.0}% of its CPU time)",
            o.share * 100.0
        ));
    }
    if let Some(st) = trace.header.status.filter(|st| !st.success()) {
        warn(&format!(
            "{name}: the recorded run failed ({st}); replaying it replays the failure"
        ));
    }
    let prog_name = path
        .file_stem()
        .map_or_else(|| "trace".to_string(), |s| s.to_string_lossy().to_string());
    let opts = crate::ReplayOptions {
        name: prog_name,
        speedup,
        thread_speedup: thread_speedup.iter().cloned().collect(),
        keep_tracing_overhead: how.keep_tracing_overhead,
        sleep_unnamed_wakes: how.sleep_unnamed_wakes,
    };
    let p = crate::to_program(&trace, &opts).with_context(|| format!("{name}: cannot replay"))?;
    Ok(Workload::alone(&p))
}

/// Where a trace library argument points: `arg` itself when it holds a
/// manifest or looks like a path (has a `/`), otherwise `traces/<arg>`.
pub fn library_dir(arg: &str) -> PathBuf {
    if Path::new(arg).join(MANIFEST).is_file() || arg.contains('/') {
        PathBuf::from(arg)
    } else {
        Path::new("traces").join(arg)
    }
}

/// A trace library's recordings as workloads (class "trace"), each named
/// after its manifest entry and replayed with the manifest's speedups.
/// Errors name the argument as `--traces ARG`.
pub fn load_library(arg: &str, warn: &mut dyn FnMut(&str)) -> Result<Vec<Workload>> {
    let dir = library_dir(arg);
    let m = Manifest::load(&dir).with_context(|| format!("--traces {arg}: not a trace library"))?;
    if m.trace.is_empty() {
        bail!(
            "--traces {arg}: {} lists no recordings",
            dir.join(MANIFEST).display()
        );
    }
    m.trace
        .iter()
        .map(|e| {
            let sel: Vec<(String, f64)> = e.thread_speedup.clone().into_iter().collect();
            let how = ReplayHow::default();
            let mut w = load_trace(&dir.join(&e.file), e.speedup, &sel, how, warn)?;
            w.name = e.name.clone();
            for p in &mut w.programs {
                p.name = e.name.clone();
            }
            w.classes = vec!["trace".into()];
            Ok(w)
        })
        .collect()
}

/// Writes the manifest of recordings kept in `dir` (`colab validate
/// --keep-traces`). `name_source` is the library's name and origin, by
/// default the directory's name and "the programs of `programs`";
/// `made_by` the command line that made it. The host, kernel, CPU count and
/// today's date (UTC) are read from this machine.
pub fn write_kept_library(
    dir: &Path,
    name_source: Option<(String, String)>,
    programs: &Path,
    made_by: String,
    trace: Vec<Entry>,
) -> Result<Manifest> {
    let read = |p: &str| {
        std::fs::read_to_string(p)
            .unwrap_or_default()
            .trim()
            .to_string()
    };
    let (name, source) = name_source.unwrap_or_else(|| {
        (
            dir.file_name()
                .map_or("traces".into(), |n| n.to_string_lossy().to_string()),
            format!("the programs of {}", programs.display()),
        )
    });
    let m = Manifest {
        library: LibraryInfo {
            name,
            source,
            made_by,
            recorded: chrono::Utc::now().format("%Y-%m-%d").to_string(),
            host: read("/proc/sys/kernel/hostname"),
            kernel: read("/proc/sys/kernel/osrelease"),
            cpus: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
        },
        trace,
    };
    m.write(dir)?;
    Ok(m)
}
