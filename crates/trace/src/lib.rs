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
pub use record::{record, RecordError, RecordOptions, RecordSummary};
pub use replay::{to_program, ReplayOptions};

#[cfg(test)]
mod tests;
