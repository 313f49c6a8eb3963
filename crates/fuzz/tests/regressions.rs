//! Inputs that broke colab before (crates/fuzz/regressions/): each must now
//! be refused with an error that says why. Workloads and topologies that
//! parse also go through the simulator, as in the fuzzer.
//!
//! To add one: put the input in crates/fuzz/regressions/, named
//! `TARGET-what-it-is.EXT` (TARGET as in `colab-fuzz --target`), and add a
//! row to `CASES` with a substring of the error it must give.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use colab_fuzz::{quiet_panics, targets, Context, Target};

/// (file, substring of the error it must give today)
const CASES: &[(&str, &str)] = &[
    (
        "topology-cores-4294967296.toml",
        "topology has 4294967296 cores; at most 1024 are supported",
    ),
    (
        "topology-cores-9223372036854775807.toml",
        "topology has 9223372036854775807 cores; at most 1024 are supported",
    ),
    (
        "topology-tick-ns-0.toml",
        "[costs] tick_ns = 0: the tick must be at least 100000 ns",
    ),
    (
        "topology-tick-ns-1.toml",
        "[costs] tick_ns = 1: the tick must be at least 100000 ns",
    ),
    (
        "workload-sleep-18446744073709551.toml",
        "at most 3600000000 us (one hour) per operation",
    ),
    (
        "model-negative-speedup-intercept.json",
        "core type `big`: speedup: the intercept -0.5 is not positive",
    ),
    (
        "workload-cut-in-ops-array-after-comment.toml",
        "the file ends inside an array, table or string",
    ),
    // Found by this harness: spun forever in Sim::interpret until 43893cc.
    (
        "workload-nested-until-closed-loops.toml",
        "a loop whose operations take no simulated time?",
    ),
    (
        "workload-nested-until-closed-fuzzed.toml",
        "a loop whose operations take no simulated time?",
    ),
    (
        "workload-zero-work-loop.toml",
        "a loop whose operations take no simulated time?",
    ),
];

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("regressions")
}

/// The error `file` gives, or a panic's message if it fails harder.
fn error_of(ctx: &Context, file: &str) -> String {
    let target = Target::of_file(file).unwrap_or_else(|| panic!("{file}: no target in its name"));
    let text = std::fs::read_to_string(dir().join(file)).unwrap();
    let verdict =
        quiet_panics(|| ctx.check(target, &text, true)).unwrap_or_else(|f| panic!("{file}: {f}"));
    match verdict.error {
        Some(e) => e,
        None => panic!("{file}: accepted ({verdict:?})"),
    }
}

fn assert_clean_error(ctx: &Context, file: &str, expected: &str) {
    let e = error_of(ctx, file);
    assert!(
        e.contains(expected),
        "{file}: error\n{e}\ndoes not contain\n{expected}"
    );
}

#[test]
fn past_crashers_are_refused_with_a_reason() {
    let ctx = Context::new(&targets::repo_root()).unwrap();
    for (file, expected) in CASES {
        assert_clean_error(&ctx, file, expected);
    }
}

#[test]
fn every_regression_file_has_a_case() {
    let mut files: Vec<String> = std::fs::read_dir(dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    let mut listed: Vec<&str> = CASES.iter().map(|(f, _)| *f).collect();
    listed.extend(KNOWN_OPEN);
    listed.sort();
    assert_eq!(files, listed);
}

/// Inputs that still fail, each with an `#[ignore]`d test below until it
/// is fixed (then move it to `CASES` with the error it gives). A hang is
/// tested with `finishes_within`, so that the test fails instead of hanging:
///
/// ```ignore
/// // Found by colab-fuzz (seed S, TARGET case C): what fails, and where.
/// #[test]
/// #[ignore = "hangs in ... (not fixed yet)"]
/// fn what_it_is() {
///     finishes_within("workload-what-it-is.toml", Duration::from_secs(10));
/// }
/// ```
const KNOWN_OPEN: &[&str] = &[];

/// Runs `file` through its target (simulating it if it parses) on another
/// thread and fails if it panics or takes longer than `limit`. A hung
/// thread cannot be stopped: it is left behind until the process ends.
#[allow(dead_code)] // used by the ignored tests of open cases, when there are any
fn finishes_within(file: &'static str, limit: Duration) {
    let target = Target::of_file(file).unwrap();
    let text = std::fs::read_to_string(dir().join(file)).unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let ctx = Context::new(&targets::repo_root()).unwrap();
        // No quiet_panics: it holds a lock that a hung case would never
        // give back. A panic is still caught; it is just printed too.
        let _ = tx.send(ctx.check(target, &text, true).map_err(|f| f.to_string()));
    });
    match rx.recv_timeout(limit) {
        Ok(Ok(_)) => {}
        Ok(Err(f)) => panic!("{file}: {f}"),
        Err(_) => panic!("{file}: still running after {limit:?}"),
    }
}
