//! A fast, deterministic discrete-event simulator of an asymmetric multicore
//! machine running multi-threaded, multi-programmed workloads under a
//! pluggable [`colab_core::Policy`].
//!
//! Time is integer nanoseconds. Threads interpret compiled workload programs
//! (`colab_workload::Program`): compute, futex-style mutexes, barriers,
//! condition variables, bounded queues, sleeps, spawn and join. The machine
//! charges context-switch and migration costs, ticks, and enforces slices.

pub mod counters;
mod engine;
mod idle_meter;
mod pmu;
pub mod predict;
mod slots;
mod sync;
pub mod timeline;

pub use engine::{
    simulate, simulate_observed, DrawnWork, ProgramResult, Progress, SimConfig, SimError,
    SimResult, SimStats, DEFAULT_MAX_EVENTS, MAX_EVENTS_LIMIT, MAX_RESTART_UNTIL, PROGRESS_EVERY,
    STEPS_PER_EVENT,
};
pub use pmu::CounterTotals;
pub use predict::{CounterModelPredictor, CounterPredictorRef, Predictor, PredictorKind};

#[cfg(test)]
mod tests;
