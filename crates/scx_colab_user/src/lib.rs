//! The pure user-space side of scx_colab, shared by the scx_colab binary and
//! by whatever hosts its BPF C elsewhere (the simulator): the command line
//! (`opts`), the machine's core types read from a sysfs tree under a root
//! directory (`detect`: scx_colab passes "/", the tests fixture trees of
//! real parts), the big/little split (`topo`), the values written into the
//! BPF object's read-only globals and the loop's settings (`settings`), the
//! labeller run every period (`labeller`) and the `--event` specs (`pmu`).
//! No BPF, no perf_event_open: those stay in scx_colab.

pub mod detect;
pub mod labeller;
pub mod opts;
pub mod pmu;
pub mod settings;
pub mod topo;

pub use opts::{CpuList, Opts, Policy};
pub use settings::{settings, Global, RotaConsts, Settings, COLAB_MAX_CPUS};
pub use topo::{Split, SplitMode};
