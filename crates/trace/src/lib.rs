//! Recorded thread schedules ("traces") of real programs: the file format,
//! recording with perf, and replay, which turns a trace into a workload the
//! simulator can run on any machine while preserving who waited for whom.

pub mod busy;
pub mod check;
pub mod format;
pub mod library;
pub mod overhead;
pub mod record;
pub mod replay;
pub mod sync;
pub mod workloads;

pub use format::{Event, Header, Trace, TraceError};

/// For tests that record with perf: a missing prerequisite (root, perf,
/// tracefs) skips the test with its reason, except under CI (`CI` set and
/// not `false`), where every test must run: it panics naming the reason.
#[doc(hidden)]
pub fn skip_test(reason: &str) {
    assert!(
        !under_ci(std::env::var("CI").ok().as_deref()),
        "under CI this test must run, but {reason} (CI=true: nothing skips silently)"
    );
    eprintln!("skipped: {reason}");
}

/// Whether the `CI` variable's value asks that no test skip.
fn under_ci(value: Option<&str>) -> bool {
    value.is_some_and(|v| !v.is_empty() && v != "false" && v != "0")
}

#[cfg(test)]
mod ci_tests {
    #[test]
    fn ci_is_any_value_but_empty_false_or_0() {
        assert!(super::under_ci(Some("true")));
        assert!(super::under_ci(Some("1")));
        for v in [None, Some(""), Some("false"), Some("0")] {
            assert!(!super::under_ci(v), "{v:?}");
        }
    }
}
pub use record::{record, RecordError, RecordOptions, RecordSummary};
pub use replay::{to_program, ReplayOptions};

#[cfg(test)]
mod tests;
