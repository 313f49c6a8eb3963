//! The hand-writable workload format (TOML), as read from disk. See
//! `workloads/README.md` for a tutorial; `compile` turns a spec into the
//! simulator's flat [`crate::Program`].

use crate::expr::Count;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One benchmark model: a program with named thread groups.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ProgramSpec {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// "data-parallel", "pipeline", "single-threaded", ... (informational).
    #[serde(default)]
    pub parallelism: String,
    /// Synchronization rate class (colab-tpds Table 2): low, medium, high, very-high.
    #[serde(default)]
    pub sync_rate: String,
    /// Communication/computation ratio class (colab-tpds Table 2): low, medium, high.
    #[serde(default)]
    pub comm_comp: String,
    /// Default value of the thread parameter `n`.
    #[serde(default = "default_n")]
    pub default_n: i64,
    /// Thread count as a formula in n (e.g. "3+3*n"); checked against the
    /// threads the spec actually creates.
    pub threads_formula: Option<String>,
    /// Mutex arrays: name -> number of mutexes.
    #[serde(default)]
    pub mutex: BTreeMap<String, Count>,
    /// Barriers: name -> number of participating threads.
    #[serde(default)]
    pub barrier: BTreeMap<String, Count>,
    /// Condition variables.
    #[serde(default)]
    pub cond: Vec<String>,
    /// Periodic timers (`timer` steps): each thread keeps its own.
    #[serde(default)]
    pub timer: Vec<String>,
    /// Bounded queues (pipeline channels).
    #[serde(default)]
    pub queue: BTreeMap<String, QueueSpec>,
    /// Thread groups: name -> script. `main` starts the program.
    pub thread: BTreeMap<String, ThreadSpec>,
}

fn default_n() -> i64 {
    4
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct QueueSpec {
    pub capacity: Count,
    /// How many threads `close` the queue before consumers see it closed.
    #[serde(default = "one")]
    pub producers: Count,
}

fn one() -> Count {
    Count::Int(1)
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ThreadSpec {
    pub ops: Vec<OpSpec>,
}

/// One operation. Exactly one verb field is set; the others qualify it.
///
/// | verb | meaning |
/// |---|---|
/// | `compute = W` | W microseconds of work on the reference big core; `speedup` (big/little) or `mem_frac` sets its core sensitivity; `cv` adds random variation; `imbalance` skews it across the group's threads |
/// | `lock = "m"` / `unlock = "m"` | mutex from array `m` (`index`: `"random"`, `"thread"` or a number); unlock releases the one held |
/// | `critical = "m"` + `compute` | lock, compute, unlock |
/// | `barrier = "b"` | wait until the barrier's count of threads arrive |
/// | `wait = "c"` + `mutex = "m"` | condition wait (releases and re-acquires the held mutex of `m`) |
/// | `signal = "c"` / `broadcast = "c"` | wake one / all waiters |
/// | `push = "q"` / `pop = "q"` / `close = "q"` | bounded queue; a `pop` on a closed, empty queue ends the innermost `loop = "until-closed"` |
/// | `sleep = US` | sleep / blocking I/O for US microseconds |
/// | `spawn = "g"` + `count` | create `count` threads running group `g` |
/// | `join = "g"` | wait for every thread of group `g` to exit |
/// | `loop = K` + `body` | repeat K times (`"until-closed"` for pipelines) |
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct OpSpec {
    pub compute: Option<Count>,
    pub speedup: Option<f64>,
    pub mem_frac: Option<f64>,
    pub cv: Option<f64>,
    pub imbalance: Option<f64>,
    pub lock: Option<String>,
    pub unlock: Option<String>,
    pub critical: Option<String>,
    pub index: Option<IndexSpec>,
    pub barrier: Option<String>,
    pub wait: Option<String>,
    pub mutex: Option<String>,
    pub signal: Option<String>,
    pub broadcast: Option<String>,
    pub push: Option<String>,
    pub pop: Option<String>,
    pub close: Option<String>,
    pub sleep: Option<Count>,
    pub timer: Option<String>,
    pub period: Option<Count>,
    pub mode: Option<String>,
    pub spawn: Option<String>,
    pub count: Option<Count>,
    pub join: Option<String>,
    #[serde(rename = "loop")]
    pub loop_: Option<Count>,
    pub body: Option<Vec<OpSpec>>,
}

#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(untagged)]
pub enum IndexSpec {
    Fixed(i64),
    Named(String),
}

/// A file of workload mixes.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct MixFile {
    #[serde(default)]
    pub mix: Vec<MixSpec>,
}

/// A multi-programmed workload: programs started together.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct MixSpec {
    pub name: String,
    /// Where the composition comes from (paper and table).
    #[serde(default)]
    pub source: String,
    /// Classes for the report: Sync, NSync, Comm, Comp, Large, 2B, 4B, ...
    #[serde(default)]
    pub classes: Vec<String>,
    /// Total thread count given by the paper (checked when present).
    pub threads: Option<i64>,
    /// Machines the paper ran this mix on (built-in machine names, see
    /// `colab_core::BUILTIN_MACHINES`); studies run it there.
    #[serde(default)]
    pub machines: Vec<String>,
    pub programs: Vec<MixProgram>,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct MixProgram {
    pub bench: String,
    /// Thread parameter; the benchmark's default when absent.
    pub n: Option<i64>,
}
