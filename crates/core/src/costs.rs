//! What a machine charges for scheduling actions: context switches,
//! migrations, the tick, wake-up latency and deeper idle states.

use crate::TopologyError;
use serde::{Deserialize, Serialize};

/// Costs the machine charges for scheduling actions.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Costs {
    /// Time a core spends switching from one thread to another, ns.
    pub context_switch_ns: u64,
    /// Extra time for a thread that last ran on another core of the same cluster (cache refill), ns.
    pub migration_local_ns: u64,
    /// Extra time for a thread that last ran in another cluster (cold L2), ns.
    pub migration_cross_ns: u64,
    /// Scheduler tick period, ns.
    pub tick_ns: u64,
    /// Time for an idle core to start running a thread it was handed (idle
    /// exit and IPI), ns.
    pub wakeup_latency_ns: u64,
    /// Deeper idle states, by how long a core has been idle: one idle for
    /// at least `after_ns` takes `extra_ns` more than `wakeup_latency_ns`
    /// (the deepest state reached counts). cpuidle puts a core that stays
    /// idle longer into states that take longer to leave, and a virtual
    /// CPU's host halts it after a while. Empty: no such states.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub idle_exit: Vec<IdleExit>,
}

/// One deeper idle state ([`Costs::idle_exit`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IdleExit {
    /// How long a core must have been idle to be in this state, ns.
    pub after_ns: u64,
    /// Extra time to leave it, ns.
    pub extra_ns: u64,
}

impl Costs {
    /// The shortest tick accepted: 100 us, ten times finer than HZ=1000
    /// (assumption: finer ticks only slow a run down; 0 would never end it).
    pub const MIN_TICK_NS: u64 = 100_000;
    /// The longest any cost or tick may be: 1 s (assumption: more is a unit
    /// mistake, and would let one cost swamp whole programs).
    pub const MAX_NS: u64 = 1_000_000_000;

    /// Every cost within its bounds.
    pub fn check(&self) -> Result<(), TopologyError> {
        let bad = |field, value, problem: String| {
            Err(TopologyError::BadCost {
                field,
                value,
                problem,
            })
        };
        if self.tick_ns < Self::MIN_TICK_NS {
            return bad(
                "tick_ns",
                self.tick_ns,
                format!("the tick must be at least {} ns", Self::MIN_TICK_NS),
            );
        }
        for (field, value) in [
            ("context_switch_ns", self.context_switch_ns),
            ("migration_local_ns", self.migration_local_ns),
            ("migration_cross_ns", self.migration_cross_ns),
            ("tick_ns", self.tick_ns),
            ("wakeup_latency_ns", self.wakeup_latency_ns),
        ]
        .into_iter()
        .chain(self.idle_exit.iter().flat_map(|s| {
            [
                ("idle_exit.after_ns", s.after_ns),
                ("idle_exit.extra_ns", s.extra_ns),
            ]
        })) {
            if value > Self::MAX_NS {
                return bad(
                    field,
                    value,
                    format!("at most {} ns (1 s) is accepted", Self::MAX_NS),
                );
            }
        }
        for w in self.idle_exit.windows(2) {
            if w[1].after_ns <= w[0].after_ns {
                return bad(
                    "idle_exit.after_ns",
                    w[1].after_ns,
                    format!(
                        "the states must be listed from the shallowest, each after_ns above the one before ({})",
                        w[0].after_ns
                    ),
                );
            }
        }
        Ok(())
    }

    /// Time for a core idle for `idle_ns` to start running a thread.
    pub fn wakeup_ns(&self, idle_ns: u64) -> u64 {
        let deeper = self
            .idle_exit
            .iter()
            .rev()
            .find(|s| idle_ns >= s.after_ns)
            .map_or(0, |s| s.extra_ns);
        self.wakeup_latency_ns + deeper
    }
}

impl Default for Costs {
    fn default() -> Self {
        Costs {
            // assumption: a few microseconds per switch on ARMv8 Linux
            // (lmbench lat_ctx on Cortex-A class cores reports 2-6 us).
            context_switch_ns: 5_000,
            // assumption: refilling the private L1s from the shared L2 after a
            // move within a cluster, ~10 us of lost progress.
            migration_local_ns: 10_000,
            // assumption: refilling L1 and L2 from DRAM after a cross-cluster
            // move (512 KB-2 MB of state at ~10 GB/s), ~100 us.
            migration_cross_ns: 100_000,
            // arm64 defconfig uses HZ=250: a 4 ms tick.
            tick_ns: 4_000_000,
            // assumption: not modelled for the reference machine (the papers'
            // gem5 setup does not describe idle states); `colab calibrate`
            // measures it for a real machine.
            wakeup_latency_ns: 0,
            // assumption: likewise not modelled for the reference machine.
            idle_exit: Vec::new(),
        }
    }
}
