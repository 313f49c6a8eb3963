//! `scx:bpfland`: scx_bpfland 1.1.4's own BPF (crates.io `scx_bpfland`
//! 1.1.4, src/bpf/main.bpf.c), loaded from a plug-in built apart from the
//! host (GPL-2.0 source; `bash scripts/build-scx-plugins.sh`), with what its
//! user space (src/main.rs) does before attaching, on the simulated machine:
//!
//! - the rodata it writes from its options and the machine's topology (each
//!   CPU's capacity scaled to 1024 for the fastest, as scx_utils reads
//!   `cpu_capacity`; the CPUs ranked by it for the preferred idle scan);
//!   SMT and NUMA off (the simulator's machines have neither);
//! - the ops flags it sets (`SCX_OPS_ENQ_EXITING | SCX_OPS_ENQ_LAST |
//!   SCX_OPS_ENQ_MIGRATION_DISABLED | SCX_OPS_ALLOW_QUEUED_WAKEUP`);
//! - the primary domain, through its `enable_primary_cpu` syscall program
//!   (reset with -1, then each CPU of the domain); `auto` resolves as on a
//!   machine with no power profile (every CPU); the SMT siblings through
//!   `enable_sibling_cpu` when SMT is on (never, here);
//! - the cpufreq level in its .bss (`cpufreq_perf_lvl`: 1024, or 0 for the
//!   `powersave` domain). `--cpufreq` is refused: no DVFS in the simulator.
//!
//! Its user space then only serves statistics: nothing periodic.
//!
//! Options (`scx:bpfland:ARGS`, scx_bpfland's own): `-s/--slice-us`,
//! `-L/--slice-min-us`, `-l/--slice-us-lag`, `-t/--throttle-us` (non-zero
//! ends the run: its BPF timer is not simulated), `-p/--local-pcpu`,
//! `-k/--local-kthreads`, `-w/--no-wake-sync`, `-S/--sticky-tasks`,
//! `-m/--primary-domain`, `-P/--preferred-idle-scan`, `--disable-smt`,
//! `--disable-numa`. Options that act on a live system only (statistics,
//! debugging output, idle-state latency, cpufreq) are refused.

use clap::Parser;
use colab_core::{Nanos, Topology};

use crate::ffi::Object;
use crate::maps::Map;
use crate::user::{self, UserSpace};
use crate::HostError;

/// The plug-in's file name.
pub const PLUGIN: &str = "scx_bpfland.so";
/// What the plug-in is, for the error when it is missing.
pub const WHAT: &str = "scx_bpfland 1.1.4's own BPF, GPL-2.0, built apart from colab";

/// `MAX_CPUS` of main.bpf.c: the length of its per-CPU rodata arrays.
const MAX_CPUS: usize = 1024;

/// `enum scx_ops_flags` (Linux 6.12 and later).
const OPS_ENQ_LAST: u64 = 1 << 1;
const OPS_ENQ_EXITING: u64 = 1 << 2;
const OPS_ENQ_MIGRATION_DISABLED: u64 = 1 << 4;
const OPS_ALLOW_QUEUED_WAKEUP: u64 = 1 << 5;
const OPS_BUILTIN_IDLE_PER_NODE: u64 = 1 << 6;

/// scx_bpfland 1.1.4's options that act on a simulation (its names,
/// short forms and defaults).
#[derive(Debug, Parser)]
#[command(name = "scx_bpfland", no_binary_name = true, disable_help_flag = true)]
struct Opts {
    /// Maximum time slice (us).
    #[arg(short = 's', long, default_value_t = 1000)]
    slice_us: u64,
    /// Minimum time slice (us).
    #[arg(short = 'L', long, default_value_t = 0)]
    slice_min_us: u64,
    /// Maximum time slice lag (us).
    #[arg(short = 'l', long, default_value_t = 40000)]
    slice_us_lag: u64,
    /// Idle time injected per slice (us); its timer is not simulated.
    #[arg(short = 't', long, default_value_t = 0)]
    throttle_us: u64,
    /// Per-CPU tasks straight to their CPU.
    #[arg(short = 'p', long)]
    local_pcpu: bool,
    /// Per-CPU kernel threads straight to their CPU.
    #[arg(short = 'k', long)]
    local_kthreads: bool,
    /// No direct dispatch on synchronous wake-ups.
    #[arg(short = 'w', long)]
    no_wake_sync: bool,
    /// Tasks that run in short bursts stay on their CPU.
    #[arg(short = 'S', long)]
    sticky_tasks: bool,
    /// The primary domain: auto, all, performance, powersave, turbo, none,
    /// or a hex CPU mask.
    #[arg(short = 'm', long, default_value = "auto")]
    primary_domain: String,
    /// Idle CPUs tried in order of capacity.
    #[arg(short = 'P', long)]
    preferred_idle_scan: bool,
    #[arg(long)]
    disable_smt: bool,
    #[arg(long)]
    disable_numa: bool,
    // Refused below: they act on a live system only.
    #[arg(short = 'f', long)]
    cpufreq: bool,
    #[arg(short = 'I', long, allow_hyphen_values = true)]
    idle_resume_us: Option<i64>,
    #[arg(long)]
    stats: Option<f64>,
    #[arg(long)]
    monitor: Option<f64>,
    #[arg(short = 'd', long)]
    debug: bool,
    #[arg(long, default_value_t = 0)]
    exit_dump_len: u32,
}

pub struct BpflandUser {
    spec: String,
    opts: Opts,
}

impl BpflandUser {
    /// scx_bpfland's command line, its options separated by `:` or spaces.
    pub fn from_args(args: &str) -> Result<BpflandUser, HostError> {
        let bad = |problem: String| HostError::Args {
            scheduler: "bpfland".into(),
            args: args.to_string(),
            problem,
        };
        let opts: Opts = user::parse_options("bpfland", args, None)?;
        if opts.cpufreq {
            return Err(bad(
                "--cpufreq scales CPU frequency, which the simulator does not model".into(),
            ));
        }
        if opts.idle_resume_us.is_some()
            || opts.stats.is_some()
            || opts.monitor.is_some()
            || opts.debug
        {
            return Err(bad(
                "--idle-resume-us, --stats, --monitor and --debug act on a live system only".into(),
            ));
        }
        if opts.slice_us == 0 {
            return Err(bad("--slice-us must be positive".into()));
        }
        // Its spelling now (a mask is checked against the machine at load).
        resolve_domain(&opts.primary_domain, &[1024; MAX_CPUS]).map_err(bad)?;
        Ok(BpflandUser {
            spec: if args.is_empty() {
                "scx:bpfland".into()
            } else {
                format!("scx:bpfland:{args}")
            },
            opts,
        })
    }

    pub fn policy_name(&self) -> &'static str {
        user::policy_name(self.spec.clone())
    }
}

/// scx_utils' core types from raw capacities (`rcap`, one per CPU).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CoreType {
    BigTurbo,
    Big,
    Little,
}

fn core_types(rcap: &[usize]) -> Vec<CoreType> {
    let max = rcap.iter().copied().max().unwrap_or(0);
    let min = rcap.iter().copied().min().unwrap_or(0);
    let avg = rcap.iter().sum::<usize>() / rcap.len().max(1);
    // A heterogeneous machine: a capacity gap of 1.3 times or more.
    let biglittle = max as f32 >= 1.3 * min as f32;
    rcap.iter()
        .map(|&r| {
            if avg < max && r == max {
                CoreType::BigTurbo
            } else if !biglittle || r >= avg {
                CoreType::Big
            } else {
                CoreType::Little
            }
        })
        .collect()
}

/// `Scheduler::resolve_energy_domain` on this machine (raw capacities
/// `rcap`): the CPUs of the primary domain.
fn resolve_domain(spec: &str, rcap: &[usize]) -> Result<Vec<bool>, String> {
    let n = rcap.len();
    let types = core_types(rcap);
    let of = |keep: &dyn Fn(CoreType) -> bool| -> Vec<bool> {
        let v: Vec<bool> = types.iter().map(|&t| keep(t)).collect();
        // `epp_to_cpumask`: no CPU of that kind means every CPU.
        if v.iter().any(|&b| b) {
            v
        } else {
            vec![true; n]
        }
    };
    Ok(match spec {
        // No power profile on a simulated machine: `auto` is `all`.
        "auto" | "all" => vec![true; n],
        "performance" => of(&|t| t != CoreType::Little),
        "turbo" => of(&|t| t == CoreType::BigTurbo),
        "powersave" => of(&|t| t == CoreType::Little),
        "none" => vec![false; n],
        hex => {
            let digits = hex.strip_prefix("0x").unwrap_or(hex).replace('_', "");
            if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_hexdigit()) {
                return Err(format!(
                    "--primary-domain is auto, all, performance, powersave, turbo, none or a hex \
                     CPU mask, got '{spec}'"
                ));
            }
            let mut v = vec![false; n];
            for (i, c) in digits.chars().rev().enumerate() {
                let d = c.to_digit(16).unwrap();
                for b in 0..4 {
                    if d >> b & 1 == 1 {
                        let cpu = i * 4 + b;
                        if cpu >= n {
                            return Err(format!(
                                "--primary-domain {spec} names CPU {cpu}; the machine has {n}"
                            ));
                        }
                        v[cpu] = true;
                    }
                }
            }
            v
        }
    })
}

fn u64s(v: &[u64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_ne_bytes()).collect()
}

impl UserSpace for BpflandUser {
    fn period_ns(&self) -> Option<Nanos> {
        None
    }

    fn configure(&mut self, obj: &mut Object, topo: &Topology) -> Result<(), String> {
        let o = &self.opts;
        let n = topo.num_cores();
        if n > MAX_CPUS {
            return Err(format!("{n} CPUs; scx_bpfland handles at most {MAX_CPUS}"));
        }
        // Raw capacities as the kernel's cpu_capacity files give them
        // (1024 for the fastest core type), scaled to 1024 as scx_utils does.
        let rcap: Vec<usize> = topo
            .cores()
            .map(|c| ((topo.capacity(c) * 1024.0).round() as usize).max(1))
            .collect();
        let max_rcap = rcap.iter().copied().max().unwrap_or(1024);
        let capacity: Vec<u64> = rcap.iter().map(|&r| (r * 1024 / max_rcap) as u64).collect();
        let domain = resolve_domain(&o.primary_domain, &rcap)?;
        // No SMT and one NUMA node on the simulator's machines.
        let smt_enabled = false;
        let numa_enabled = false;
        // The ops flags it sets before loading.
        let flags = OPS_ENQ_EXITING
            | OPS_ENQ_LAST
            | OPS_ENQ_MIGRATION_DISABLED
            | OPS_ALLOW_QUEUED_WAKEUP
            | if numa_enabled {
                OPS_BUILTIN_IDLE_PER_NODE
            } else {
                0
            };
        obj.set_ops_flags(flags)?;
        let obj = &*obj;
        let w = |name: &str, b: &[u8]| user::write_global(obj, name, b);
        w("debug", &[0])?;
        w("smt_enabled", &[u8::from(smt_enabled)])?;
        w("numa_enabled", &[u8::from(numa_enabled)])?;
        w("local_pcpu", &[u8::from(o.local_pcpu)])?;
        w("no_wake_sync", &[u8::from(o.no_wake_sync)])?;
        w("sticky_tasks", &[u8::from(o.sticky_tasks)])?;
        w("slice_max", &(o.slice_us * 1000).to_ne_bytes())?;
        w("slice_min", &(o.slice_min_us * 1000).to_ne_bytes())?;
        w("slice_lag", &(o.slice_us_lag * 1000).to_ne_bytes())?;
        w("throttle_ns", &(o.throttle_us * 1000).to_ne_bytes())?;
        w(
            "primary_all",
            &[u8::from(domain.iter().filter(|&&b| b).count() == n)],
        )?;
        // The CPUs by capacity, highest first (ties in CPU order).
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by_key(|&c| std::cmp::Reverse(capacity[c]));
        let mut caps = vec![0u64; MAX_CPUS];
        let mut preferred = vec![0u64; MAX_CPUS];
        for (i, &c) in order.iter().enumerate() {
            caps[c] = capacity[c];
            preferred[i] = c as u64;
        }
        w("cpu_capacity", &u64s(&caps))?;
        w("preferred_cpus", &u64s(&preferred))?;
        w("preferred_idle_scan", &[u8::from(o.preferred_idle_scan)])?;
        w(
            "local_kthreads",
            &[u8::from(o.local_kthreads || o.throttle_us > 0)],
        )?;
        // Loaded: the primary domain (reset, then each CPU of it).
        let primary = |obj: &Object, cpu: i32| -> Result<(), String> {
            let mut arg = cpu.to_ne_bytes();
            match user::run_syscall(obj, "enable_primary_cpu", &mut arg)? {
                0 => Ok(()),
                e => Err(format!(
                    "enable_primary_cpu({cpu}) failed: error {e} (the primary domain)"
                )),
            }
        };
        primary(obj, -1)?;
        for (c, _) in domain.iter().enumerate().filter(|(_, &b)| b) {
            primary(obj, c as i32)?;
        }
        // The cpufreq level (`init_cpufreq_perf`, without --cpufreq).
        let perf_lvl: i64 = if o.primary_domain == "powersave" {
            0
        } else {
            1024
        };
        w("cpufreq_perf_lvl", &perf_lvl.to_ne_bytes())?;
        if smt_enabled {
            // `init_smt_domains`: each CPU's sibling (a CPU is its own on a
            // machine without SMT).
            for c in 0..n {
                let mut arg = Vec::with_capacity(8);
                arg.extend((c as i32).to_ne_bytes());
                arg.extend((c as i32).to_ne_bytes());
                let r = user::run_syscall(obj, "enable_sibling_cpu", &mut arg)?;
                if r != 0 {
                    return Err(format!("enable_sibling_cpu({c}) failed: error {r}"));
                }
            }
        }
        Ok(())
    }

    fn autoload(&self, _name: &str) -> bool {
        true
    }

    fn period(&mut self, _obj: &Object, _maps: &mut [Map]) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_parse_as_scx_bpfland_spells_them() {
        let u = BpflandUser::from_args("--slice-us=500:-S:-m:performance").unwrap();
        assert_eq!(u.opts.slice_us, 500);
        assert!(u.opts.sticky_tasks);
        assert_eq!(u.opts.primary_domain, "performance");
        assert_eq!(
            u.policy_name(),
            "scx:bpfland:--slice-us=500:-S:-m:performance"
        );
        let d = BpflandUser::from_args("").unwrap();
        assert_eq!(
            (d.opts.slice_us, d.opts.slice_min_us, d.opts.slice_us_lag),
            (1000, 0, 40000)
        );
        assert_eq!(d.policy_name(), "scx:bpfland");
        assert!(BpflandUser::from_args("-m:0x3").is_ok());
        for bad in ["--cpufreq", "--stats=1", "--nope", "-m:0xzz"] {
            assert!(BpflandUser::from_args(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn primary_domains_resolve_as_on_a_machine_without_a_power_profile() {
        // 2 big (1024) and 2 little (326) CPUs.
        let rcap = [1024, 1024, 326, 326];
        let t = |s: &str| resolve_domain(s, &rcap).unwrap();
        assert_eq!(t("auto"), vec![true; 4]);
        assert_eq!(t("performance"), vec![true, true, false, false]);
        assert_eq!(t("powersave"), vec![false, false, true, true]);
        assert_eq!(t("none"), vec![false; 4]);
        assert_eq!(t("0x9"), vec![true, false, false, true]);
        assert!(resolve_domain("0x10", &rcap).is_err());
        // All alike: no little CPUs, so powersave falls back to every CPU.
        assert_eq!(
            resolve_domain("powersave", &[1024; 2]).unwrap(),
            vec![true; 2]
        );
    }
}
