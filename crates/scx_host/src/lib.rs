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
//! - `user`, `colab` and `bpfland` are the schedulers' user-space sides;
//! - `plugin` finds the schedulers built apart from the host (scx_bpfland,
//!   whose GPL-2.0 source never enters our binaries), `native_build` is the
//!   one compile of them all (used by build.rs and the plug-in builder).

mod bpfland;
mod colab;
mod ffi;
mod hosted;
mod kernel;
mod maps;
mod plugin;
mod user;

pub use hosted::Hosted;

/// The hosted schedulers: `scx:NAME` and what it is.
pub const SCHEDULERS: &[(&str, &str)] = &[
    (
        "colab",
        "scx_colab's own BPF (crates/scx_colab/src/bpf), with its user-space labeller every 10 ms; \
         scx:colab:ARGS passes scx_colab's options, e.g. scx:colab:--policy=colab",
    ),
    (
        "bpfland",
        "scx_bpfland 1.1.4's own BPF from a plug-in built apart (GPL-2.0: \
         `bash scripts/build-scx-plugins.sh`), with its user space's set-up; \
         scx:bpfland:ARGS passes its options, e.g. scx:bpfland:--slice-us=500",
    ),
];

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
        "bpfland" => {
            let user = bpfland::BpflandUser::from_args(args)?;
            let path = plugin::find(bpfland::PLUGIN, bpfland::WHAT, &plugin::search_dirs())
                .map_err(|problem| HostError::Load {
                    scheduler: "bpfland".into(),
                    problem,
                })?;
            let obj = ffi::take_file("bpfland", &path)?;
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

    /// What the BPF clock reads at simulated time 0.
    pub const CLOCK_AT_START: u64 = crate::kernel::CLOCK_AT_START;

    const PROBE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/scx_probe.so"));
    const PROBE_KEEP: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/scx_probe_keep.so"));

    /// The probe scheduler with SCX_OPS_ENQ_LAST (`keep`: without it), its
    /// globals set to `globals` (name, value bytes).
    pub fn probe(keep: bool, globals: &[(&str, Vec<u8>)]) -> Result<Hosted, HostError> {
        let (name, bytes) = if keep {
            ("probe_keep", PROBE_KEEP)
        } else {
            ("probe", PROBE)
        };
        let obj = ffi::take(name, bytes)?;
        Hosted::new(name, obj, Box::new(TestUser::new(globals, &[])))
    }

    const KFUNCS: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/scx_kfuncs.so"));

    /// What a test scheduler's syscall programs returned: (program, return
    /// value, the argument struct as they left it), in run order.
    pub type SyscallLog = std::sync::Arc<std::sync::Mutex<Vec<(String, i32, Vec<u8>)>>>;

    /// A test scheduler's user side: its globals set by name, then its
    /// syscall programs run, each logged.
    struct TestUser {
        globals: Vec<(String, Vec<u8>)>,
        syscalls: Vec<(String, Vec<u8>)>,
        log: SyscallLog,
    }

    impl TestUser {
        fn new(globals: &[(&str, Vec<u8>)], syscalls: &[(&str, Vec<u8>)]) -> TestUser {
            let own =
                |v: &[(&str, Vec<u8>)]| v.iter().map(|(n, b)| (n.to_string(), b.clone())).collect();
            TestUser {
                globals: own(globals),
                syscalls: own(syscalls),
                log: SyscallLog::default(),
            }
        }
    }

    impl user::UserSpace for TestUser {
        fn period_ns(&self) -> Option<colab_core::Nanos> {
            None
        }
        fn configure(
            &mut self,
            obj: &mut ffi::Object,
            _topo: &colab_core::Topology,
        ) -> Result<(), String> {
            for (name, bytes) in &self.globals {
                user::write_global(obj, name, bytes)?;
            }
            for (name, arg) in &self.syscalls {
                let mut arg = arg.clone();
                let r = user::run_syscall(obj, name, &mut arg)?;
                self.log.lock().unwrap().push((name.clone(), r, arg));
            }
            Ok(())
        }
        fn autoload(&self, _name: &str) -> bool {
            true
        }
        fn period(&mut self, _obj: &ffi::Object, _maps: &mut [crate::maps::Map]) {}
    }

    /// The kfunc test scheduler (tests/bpf/kfuncs.bpf.c), its globals set to
    /// `globals`; before it attaches, its user side runs each of `syscalls`
    /// (program, argument struct) and logs what they returned.
    pub fn kfuncs(
        globals: &[(&str, Vec<u8>)],
        syscalls: &[(&str, Vec<u8>)],
    ) -> Result<(Hosted, SyscallLog), HostError> {
        let obj = ffi::take("kfuncs", KFUNCS)?;
        let user = TestUser::new(globals, syscalls);
        let log = user.log.clone();
        Ok((Hosted::new("kfuncs", obj, Box::new(user))?, log))
    }
}
