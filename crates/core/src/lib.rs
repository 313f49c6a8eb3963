//! Shared vocabulary of colab: identifiers, the machine topology, the
//! scheduler-visible state of a system, and the [`Policy`] hook table.
//!
//! Nothing here does I/O or reads a clock: the simulator (and later the live
//! sched_ext scheduler) owns time and hands it to policies in [`SchedState`].

mod core_mask;
mod costs;
pub mod policy;
pub mod runqueue;
pub mod state;
pub mod toml_error;
pub mod topology;

pub use policy::{Action, Pick, Policy, StopReason, WakeKind};
pub use runqueue::RunQueue;
pub use state::{BlockKind, CoreInfo, RunState, SchedState, ThreadInfo};
pub use topology::{
    CoreMask, CoreOrder, CoreType, Costs, IdleExit, Topology, TopologyError, BUILTIN_MACHINES,
};

use serde::{Deserialize, Serialize};

/// Simulated time in nanoseconds.
pub type Nanos = u64;

pub const NS_PER_US: Nanos = 1_000;
pub const NS_PER_MS: Nanos = 1_000_000;

macro_rules! id_type {
    ($(#[$m:meta])* $name:ident, $inner:ty) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        pub struct $name(pub $inner);
        impl $name {
            #[inline]
            pub fn idx(self) -> usize {
                self.0 as usize
            }
        }
        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{}", self.0)
            }
        }
    };
}

id_type!(
    /// A core, numbered in topology order.
    CoreId,
    u16
);
id_type!(
    /// A thread, numbered in creation order across the whole run.
    ThreadId,
    u32
);
id_type!(
    /// A program (process) of the workload.
    ProgramId,
    u16
);

/// " (did you mean 'X'?)" for the candidate nearest `name` when one is
/// near enough (Jaro-Winkler similarity at least 0.8, case ignored), else
/// "": for errors about unknown names.
pub fn did_you_mean<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    let lower = name.to_ascii_lowercase();
    candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(&lower, &c.to_ascii_lowercase()), c))
        .filter(|(score, c)| *score >= 0.8 && !c.eq_ignore_ascii_case(name))
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map_or_else(String::new, |(_, c)| format!(" (did you mean '{c}'?)"))
}
