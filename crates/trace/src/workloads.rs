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

/// The environment variable naming more directories of trace libraries
/// (separated by `:`), for a `colab` run away from the repository.
pub const TRACES_ENV: &str = "COLAB_TRACES";

/// Where trace libraries are looked for, in order: `traces/` here, the
/// directories of `$COLAB_TRACES`, and the `traces/` of the source tree
/// this `colab` was built from (so the shipped libraries are found from
/// any directory). Each directory once, and only those that exist.
pub fn library_roots() -> Vec<PathBuf> {
    let mut roots = vec![PathBuf::from("traces")];
    if let Some(dirs) = std::env::var_os(TRACES_ENV) {
        roots.extend(std::env::split_paths(&dirs).filter(|p| !p.as_os_str().is_empty()));
    }
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../traces");
    roots.push(source.canonicalize().unwrap_or(source));
    let mut seen = std::collections::BTreeSet::new();
    roots
        .into_iter()
        .filter(|r| r.is_dir())
        .filter(|r| seen.insert(r.canonicalize().unwrap_or_else(|_| r.clone())))
        .collect()
}

/// Where a trace library argument points: `arg` itself when it holds a
/// manifest or looks like a path (has a `/`), otherwise the first
/// `ROOT/<arg>` with a manifest among [`library_roots`] (or `traces/<arg>`,
/// whose error then names every place looked in).
pub fn library_dir(arg: &str) -> PathBuf {
    if Path::new(arg).join(MANIFEST).is_file() || arg.contains('/') {
        return PathBuf::from(arg);
    }
    library_roots()
        .into_iter()
        .map(|r| r.join(arg))
        .find(|d| d.join(MANIFEST).is_file())
        .unwrap_or_else(|| Path::new("traces").join(arg))
}

/// [`library_dir`], or an error naming every place looked in when a bare
/// name is found in none of them.
pub fn find_library(arg: &str) -> Result<PathBuf> {
    let dir = library_dir(arg);
    if !dir.join(MANIFEST).is_file() && !arg.contains('/') {
        bail!(
            "--traces {arg}: no trace library of that name; {}",
            looked_in(arg)
        );
    }
    Ok(dir)
}

/// The places [`library_dir`] looked in for a bare name, for errors.
fn looked_in(arg: &str) -> String {
    let mut places: Vec<String> = library_roots()
        .iter()
        .map(|r| r.join(arg).display().to_string())
        .collect();
    if places.is_empty() {
        places.push(format!("traces/{arg}"));
    }
    format!(
        "looked in {} (more directories: ${TRACES_ENV}=DIR:DIR)",
        places.join(", ")
    )
}

/// A trace library's recordings as workloads (class "trace"), each named
/// after its manifest entry and replayed with the manifest's speedups.
/// Errors name the argument as `--traces ARG`.
pub fn load_library(arg: &str, warn: &mut dyn FnMut(&str)) -> Result<Vec<Workload>> {
    let dir = find_library(arg)?;
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
