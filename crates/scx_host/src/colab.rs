//! scx_colab's user-space side in the simulator, from the same library the
//! real scx_colab uses (crates/scx_colab_user): its options, its big/little
//! split of the machine, the globals its loader writes, and its labeller,
//! run every labelling period (10 ms by default) of simulated time over the
//! BPF maps, as src/sched.rs does on a real kernel.

use colab_core::{Nanos, Topology};
use scx_colab_user::labeller::{block_stat, Labeller, Sample, Write};
use scx_colab_user::topo::{classify, split, CpuCap};
use scx_colab_user::{Global, Opts};

use crate::ffi::Object;
use crate::maps::Map;
use crate::user::{self, UserSpace};
use crate::HostError;

/// scx_colab's BPF object, built by build.rs from crates/scx_colab/src/bpf/main.bpf.c.
pub const OBJECT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/scx_colab.so"));

pub struct ColabUser {
    spec: String,
    opts: Opts,
    labeller: Option<Labeller>,
}

impl ColabUser {
    /// scx_colab's own command line, its options separated by `:` or spaces
    /// (`--policy=colab:--no-big-pull`).
    pub fn from_args(args: &str) -> Result<ColabUser, HostError> {
        let bad = |problem: String| HostError::Args {
            scheduler: "colab".into(),
            args: args.to_string(),
            problem,
        };
        let opts: Opts = user::parse_options("colab", args, Some("scx_colab"))?;
        if opts.model.is_some() || !opts.events.is_empty() {
            return Err(bad(
                "--model and --event program performance counters, which the simulator does not \
                 give hosted schedulers (every task gets the capacity-ratio speedup, as without them)"
                    .into(),
            ));
        }
        if opts.debug_error_after.is_some()
            || opts.debug_stall_after.is_some()
            || opts.stats.is_some()
            || opts.verifier_stats
        {
            return Err(bad(
                "--stats, --verifier-stats and the --debug-* options act on a live system only"
                    .into(),
            ));
        }
        Ok(ColabUser {
            spec: if args.is_empty() {
                "scx:colab".into()
            } else {
                format!("scx:colab:{args}")
            },
            opts,
            labeller: None,
        })
    }

    pub fn policy_name(&self) -> &'static str {
        user::policy_name(self.spec.clone())
    }
}

/// A global's value as the bytes of its C type.
fn bytes(g: &Global) -> Vec<u8> {
    match g {
        Global::U64(v) => v.to_ne_bytes().to_vec(),
        Global::U32(v) => v.to_ne_bytes().to_vec(),
        Global::Bool(v) => vec![u8::from(*v)],
        Global::U32Array(v) => v.iter().flat_map(|x| x.to_ne_bytes()).collect(),
        Global::U8Array(v) => v.clone(),
        Global::I32Array(v) => v.iter().flat_map(|x| x.to_ne_bytes()).collect(),
    }
}

impl UserSpace for ColabUser {
    fn period_ns(&self) -> Option<Nanos> {
        Some(self.opts.period_ms.max(1) * 1_000_000)
    }

    fn configure(&mut self, obj: &mut Object, topo: &Topology) -> Result<(), String> {
        // The machine as scx_colab reads a real one: each CPU's capacity
        // (1024 for the fastest), big at or above the average.
        let mut cpus: Vec<CpuCap> = topo
            .cores()
            .map(|c| CpuCap {
                id: c.idx(),
                core: c.idx(),
                capacity: (topo.capacity(c) * 1024.0).round() as usize,
                big: false,
                tier: 0,
            })
            .collect();
        classify(&mut cpus);
        let big = self.opts.big_cpus.as_ref().map(|l| l.0.clone());
        let s = split(&cpus, big.as_deref(), self.opts.speedup).map_err(|e| format!("{e:#}"))?;
        let settings =
            scx_colab_user::settings(&self.opts, s, cpus.len()).map_err(|e| format!("{e:#}"))?;
        for (name, g) in settings.rodata(cpus.len()).map_err(|e| format!("{e:#}"))? {
            user::write_global(obj, name, &bytes(&g))?;
        }
        self.labeller = Some(settings.labeller());
        Ok(())
    }

    fn autoload(&self, name: &str) -> bool {
        // No counters here: the PMU program stays off, as scx_colab leaves
        // it without --model; the futex programs unless --no-futex-tracking.
        match name {
            "colab_pmu_switch" => false,
            n if n.starts_with("colab_futex") => !self.opts.no_futex_tracking,
            _ => true,
        }
    }

    /// One labelling pass (`label_pass` in crates/scx_colab/src/sched.rs,
    /// without counters): the blocking each task caused, labels back.
    fn period(&mut self, obj: &Object, maps: &mut [Map]) {
        let Some(labeller) = self.labeller.as_mut() else {
            return;
        };
        let samples: Vec<Sample> = user::map(maps, "block_stats")
            .map(|m| m.entries())
            .unwrap_or_default()
            .into_iter()
            .filter_map(|(k, v)| {
                let pid = u32::from_ne_bytes(k.get(..4)?.try_into().ok()?);
                let (ns, comm) = block_stat(&v)?;
                Some(Sample {
                    pid,
                    blocked_others_ns: ns,
                    comm,
                    predicted_speedup: None,
                    run_ns: 0,
                })
            })
            .collect();
        let writes = labeller.period(&samples);
        if writes.is_empty() {
            return;
        }
        if let Some(labels) = user::map(maps, "labels") {
            for w in &writes {
                match w {
                    Write::Set(pid, l) => {
                        labels.update(&pid.to_ne_bytes(), &l.to_bytes(), 0, 0);
                    }
                    Write::Delete(pid) => {
                        labels.delete(&pid.to_ne_bytes());
                    }
                }
            }
        }
        user::bump_global(obj, "label_gen");
    }
}
