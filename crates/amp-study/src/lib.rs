//! The real-kernel study on a real machine: `colab-amp-study` (see
//! `--help` and book/src/scx/install.md). The VM's study
//! (scripts/vm/amp-study.sh) emulates core speeds; this one runs the
//! workloads natively on the machine's own cores and measures their speeds.
//!
//! One job per module: which schedulers ([`scheds`]), starting and stopping
//! them through sched_ext's sysfs ([`sched_ext`]), each CPU's speed
//! ([`speeds`]), the numbers ([`summary`]) and the report ([`report`]).

pub mod report;
pub mod sched_ext;
pub mod scheds;
pub mod speeds;
pub mod summary;

/// The workloads run when none are given: the VM study's default set
/// (scripts/vm/amp-study.sh, checked by a test), one of each class of the
/// COLAB study plus single programs, fine-grained barriers and a lock.
pub const DEFAULT_WORKLOADS: &[&str] = &[
    "Sync-2",
    "NSync-1",
    "Comm-2",
    "Comp-2",
    "Large-1",
    "fft:4",
    "ferret:4",
    "finebar_25us",
    "finebar_100us",
    "lock_100us_hi",
];

/// `--quick`'s workloads: two small ones (a check that everything runs).
pub const QUICK_WORKLOADS: &[&str] = &["NSync-1", "fft:4"];
