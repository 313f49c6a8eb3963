//! scx_colab's user-space side in the simulator: its options, the globals
//! its loader writes (crates/scx_colab/src/sched.rs) and its labeller,
//! every 10 ms of simulated time.

use colab_core::{Nanos, Topology};

use crate::ffi::Object;
use crate::maps::Map;
use crate::user::{self, UserSpace};
use crate::HostError;

/// scx_colab's BPF object, built by build.rs from crates/scx_colab/src/bpf/main.bpf.c.
pub const OBJECT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/scx_colab.so"));

/// COLAB_MAX_CPUS (crates/scx_colab/src/bpf/intf.h).
const MAX_CPUS: usize = 256;

pub struct ColabUser {
    spec: String,
    rota: bool,
    migration_us: f64,
    cap: u64,
    futex_tracking: bool,
    big_pull: bool,
    pull_min_us: u64,
    strict_rr: bool,
    rotation: bool,
    eager: bool,
    block_first: bool,
    window: f64,
    speedup: Option<f64>,
}

fn interned(s: String) -> &'static str {
    use std::collections::HashSet;
    use std::sync::Mutex;
    static NAMES: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);
    let mut g = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    let set = g.get_or_insert_with(HashSet::new);
    if let Some(n) = set.get(s.as_str()) {
        return n;
    }
    let leaked: &'static str = Box::leak(s.into_boxed_str());
    set.insert(leaked);
    leaked
}

impl ColabUser {
    pub fn from_args(args: &str) -> Result<ColabUser, HostError> {
        let mut u = ColabUser {
            spec: if args.is_empty() {
                "scx:colab".into()
            } else {
                format!("scx:colab:{args}")
            },
            rota: true,
            migration_us: 100.0,
            cap: 1,
            futex_tracking: true,
            big_pull: true,
            pull_min_us: 1000,
            strict_rr: false,
            rotation: true,
            eager: false,
            block_first: true,
            window: 1.0,
            speedup: None,
        };
        let bad = |problem: String| HostError::Args {
            scheduler: "colab".into(),
            args: args.to_string(),
            problem,
        };
        for a in args.split([':', ' ']).filter(|a| !a.is_empty()) {
            let (key, value) = a.split_once('=').unwrap_or((a, ""));
            let num = |v: &str| -> Result<f64, HostError> {
                v.parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite() && *x >= 0.0)
                    .ok_or_else(|| bad(format!("{key} needs a number, got '{v}'")))
            };
            match key {
                "--policy" => {
                    u.rota = match value {
                        "rota" => true,
                        "colab" => false,
                        v => return Err(bad(format!("--policy is rota or colab, got '{v}'"))),
                    }
                }
                "--migration-us" => u.migration_us = num(value)?,
                "--cap" => u.cap = num(value)? as u64,
                "--pull-min-us" => u.pull_min_us = num(value)? as u64,
                "--window" => u.window = num(value)?,
                "--speedup" => u.speedup = Some(num(value)?),
                "--no-futex-tracking" => u.futex_tracking = false,
                "--no-big-pull" => u.big_pull = false,
                "--strict-rr" => u.strict_rr = true,
                "--no-rotation" => u.rotation = false,
                "--eager-rotation" => u.eager = true,
                "--no-block-first" => u.block_first = false,
                other => return Err(bad(format!("unknown option '{other}'"))),
            }
        }
        if !(u.migration_us > 0.0 && u.migration_us <= 1e5) {
            return Err(bad("--migration-us must be in (0, 100000]".into()));
        }
        Ok(u)
    }

    pub fn policy_name(&self) -> &'static str {
        interned(self.spec.clone())
    }
}

fn u32s(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_ne_bytes()).collect()
}

impl UserSpace for ColabUser {
    fn period_ns(&self) -> Option<Nanos> {
        Some(10_000_000)
    }

    fn configure(&mut self, obj: &mut Object, topo: &Topology) -> Result<(), String> {
        let n = topo.num_cores();
        if n > MAX_CPUS {
            return Err(format!("{n} CPUs; scx_colab handles at most {MAX_CPUS}"));
        }
        let big: Vec<u32> = topo
            .cores()
            .filter(|&c| topo.is_big(c))
            .map(|c| c.0 as u32)
            .collect();
        let little: Vec<u32> = topo
            .cores()
            .filter(|&c| !topo.is_big(c))
            .map(|c| c.0 as u32)
            .collect();
        let (big, little) = if little.is_empty() {
            (Vec::new(), big)
        } else {
            (big, little)
        };
        let mean = |v: &[u32]| {
            v.iter()
                .map(|&c| topo.capacity(colab_core::CoreId(c as u16)))
                .sum::<f64>()
                / v.len().max(1) as f64
        };
        let speedup = self.speedup.unwrap_or(if big.is_empty() {
            1.0
        } else {
            (mean(&big) / mean(&little)).max(1.0)
        });
        let mut big_arr = vec![0u32; MAX_CPUS];
        let mut little_arr = vec![0u32; MAX_CPUS];
        let mut is_big = vec![0u8; MAX_CPUS];
        for (i, &c) in big.iter().enumerate() {
            big_arr[i] = c;
            is_big[c as usize] = 1;
        }
        for (i, &c) in little.iter().enumerate() {
            little_arr[i] = c;
        }
        let cfs = colab_policies::cfs::CfsTunables::for_cpus(n);
        let window = {
            let cap = u64::MAX >> 2;
            let ns = self.window * cfs.latency_ns as f64;
            if ns >= cap as f64 {
                cap
            } else {
                ns as u64
            }
        };
        let mig = ((self.migration_us * 1000.0).round() as u64).max(1);
        let quantum = 200 * mig;
        let w = |name: &str, b: &[u8]| user::write_global(obj, name, b);
        w("nr_cpus", &(n as u32).to_ne_bytes())?;
        w("nr_big", &(big.len() as u32).to_ne_bytes())?;
        w("nr_little", &(little.len() as u32).to_ne_bytes())?;
        w("big_cpus", &u32s(&big_arr))?;
        w("little_cpus", &u32s(&little_arr))?;
        w("cpu_is_big", &is_big)?;
        w("smt_on", &[0])?;
        w(
            "sibling_cpu",
            &vec![-1i32; MAX_CPUS]
                .iter()
                .flat_map(|x| x.to_ne_bytes())
                .collect::<Vec<_>>(),
        )?;
        w("colab_window_ns", &window.to_ne_bytes())?;
        w("colab_no_block_first", &[u8::from(!self.block_first)])?;
        w("no_big_pull", &[u8::from(!self.big_pull)])?;
        w("cfs_latency_ns", &cfs.latency_ns.to_ne_bytes())?;
        w("cfs_min_gran_ns", &cfs.min_granularity_ns.to_ne_bytes())?;
        w(
            "cfs_wakeup_gran_ns",
            &cfs.wakeup_granularity_ns.to_ne_bytes(),
        )?;
        w("pull_min_ns", &(self.pull_min_us * 1000).to_ne_bytes())?;
        w("strict_rr", &[u8::from(self.strict_rr)])?;
        w(
            "default_speedup_fp",
            &((speedup * 1024.0).round() as u32).to_ne_bytes(),
        )?;
        w("policy_rota", &[u8::from(self.rota)])?;
        w("rota_quantum_ns", &quantum.to_ne_bytes())?;
        w(
            "rota_cap_ns",
            &quantum.saturating_mul(self.cap).to_ne_bytes(),
        )?;
        w("rota_pull_min_ns", &(4 * mig).to_ne_bytes())?;
        w("rota_idle_worth_ns", &mig.to_ne_bytes())?;
        w("rota_no_rotation", &[u8::from(!self.rotation)])?;
        w("rota_eager", &[u8::from(self.eager)])?;
        Ok(())
    }

    fn autoload(&self, name: &str) -> bool {
        // No counters in a simulation: the PMU program stays off, as
        // scx_colab leaves it without --model.
        name != "colab_pmu_switch" && (self.futex_tracking || !name.starts_with("colab_futex"))
    }

    fn period(&mut self, _obj: &Object, _maps: &mut [Map]) {}
}
