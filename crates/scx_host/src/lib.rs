//! The simulator's sched_ext host: `scx:NAME[:ARGS]` policies that run a
//! sched_ext scheduler's own BPF C, compiled natively from its unmodified
//! source against a shim (shim/scx/common.bpf.h), behind the simulator's
//! hook table with the kernel's sched_ext semantics (Linux 6.12's
//! kernel/sched/ext.c).
//!
//! - build.rs compiles each hosted scheduler into a shared object, found
//!   maps and programs listed by `build_scan`;
//! - `ffi` loads a private copy of it per running simulation (from memory),
//!   resets it between runs, and pools the copies;
//! - `kernel` holds sched_ext's state (DSQs, idle mask, kicks) and the
//!   kfuncs; `maps` the BPF maps;
//! - `hosted` drives the callbacks in the kernel's order;
//! - `user` and `colab` are the schedulers' user-space sides.

mod colab;
mod ffi;
mod hosted;
mod kernel;
mod maps;
mod user;

pub use hosted::Hosted;

/// The hosted schedulers: `scx:NAME` and what it is.
pub const SCHEDULERS: &[(&str, &str)] = &[(
    "colab",
    "scx_colab's own BPF (crates/scx_colab/src/bpf), with its user-space labeller every 10 ms; \
     scx:colab:ARGS passes scx_colab's options, e.g. scx:colab:--policy=colab",
)];

#[derive(Debug, thiserror::Error)]
pub enum HostError {
    #[error("unknown sched_ext scheduler 'scx:{0}': the simulator hosts {list}", list = names())]
    Unknown(String),
    #[error("scx:{scheduler}: {problem}")]
    Load { scheduler: String, problem: String },
    #[error("scx:{scheduler}: bad options '{args}': {problem}")]
    Args {
        scheduler: String,
        args: String,
        problem: String,
    },
}

fn names() -> String {
    SCHEDULERS
        .iter()
        .map(|(n, _)| format!("scx:{n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Whether `name` names a hosted scheduler (`scx:...`).
pub fn is_hosted(name: &str) -> bool {
    name.starts_with("scx:")
}

/// A hosted scheduler as a policy: `scx:NAME` or `scx:NAME:ARGS` (ARGS its
/// own command-line options, separated by spaces or colons).
pub fn by_name(spec: &str) -> Result<Box<dyn colab_core::Policy>, HostError> {
    let rest = spec
        .strip_prefix("scx:")
        .ok_or_else(|| HostError::Unknown(spec.to_string()))?;
    let (name, args) = rest.split_once(':').unwrap_or((rest, ""));
    match name {
        "colab" => {
            let user = colab::ColabUser::from_args(args)?;
            let obj = ffi::take("colab", colab::OBJECT)?;
            Ok(Box::new(Hosted::new(
                user.policy_name(),
                obj,
                Box::new(user),
            )?))
        }
        _ => Err(HostError::Unknown(name.to_string())),
    }
}

/// The host's test schedulers (tests/bpf/probe.bpf.c), for its own tests.
#[doc(hidden)]
pub mod testing {
    use crate::{ffi, user, HostError, Hosted};

    const PROBE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/scx_probe.so"));
    const PROBE_KEEP: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/scx_probe_keep.so"));

    struct ProbeUser(Vec<(String, Vec<u8>)>);

    impl user::UserSpace for ProbeUser {
        fn period_ns(&self) -> Option<colab_core::Nanos> {
            None
        }
        fn configure(
            &mut self,
            obj: &mut ffi::Object,
            _topo: &colab_core::Topology,
        ) -> Result<(), String> {
            for (name, bytes) in &self.0 {
                user::write_global(obj, name, bytes)?;
            }
            Ok(())
        }
        fn autoload(&self, _name: &str) -> bool {
            true
        }
        fn period(&mut self, _obj: &ffi::Object, _maps: &mut [crate::maps::Map]) {}
    }

    /// The probe scheduler with SCX_OPS_ENQ_LAST (`keep`: without it), its
    /// globals set to `globals` (name, value bytes).
    pub fn probe(keep: bool, globals: &[(&str, Vec<u8>)]) -> Result<Hosted, HostError> {
        let (name, bytes) = if keep {
            ("probe_keep", PROBE_KEEP)
        } else {
            ("probe", PROBE)
        };
        let obj = ffi::take(name, bytes)?;
        let user = ProbeUser(
            globals
                .iter()
                .map(|(n, b)| (n.to_string(), b.clone()))
                .collect(),
        );
        Hosted::new(name, obj, Box::new(user))
    }
}
