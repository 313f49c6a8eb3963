//! What scx_colab derives from its options and the machine's CPUs before it
//! loads its BPF object: the values of the object's read-only globals
//! (`const volatile` in src/bpf/main.bpf.c, rota.bpf.h, colab.bpf.h,
//! cfs.bpf.h) and what its user-space loop needs that is not I/O. scx_colab
//! writes its skeleton's rodata from `Settings::rodata`, so a host of the
//! same BPF C that writes the same list configures it exactly alike.

use std::time::Duration;

use anyhow::{bail, Result};
use colab_labels::LabelParams;
use colab_policies::cfs::CfsTunables;

use crate::labeller::{to_fp, Labeller};
use crate::opts::{Opts, Policy};
use crate::topo::Split;

/// COLAB_MAX_CPUS of src/bpf/intf.h: the length of the BPF side's per-CPU
/// arrays and the most CPU ids scx_colab handles.
pub const COLAB_MAX_CPUS: usize = 256;

/// COLAB_NR_CLUSTERS of src/bpf/intf.h: the length of `nr_events` (0 big,
/// 1 little).
pub const COLAB_NR_CLUSTERS: usize = 2;

/// ROTA's constants, derived from the machine's cross-cluster migration
/// cost and CFS's tunables exactly as the simulator derives them
/// (crates/policies/src/rota/mod.rs: `Rota::init`, `quantum=age`).
#[derive(Clone, Debug, PartialEq)]
pub struct RotaConsts {
    pub quantum_ns: u64,
    /// The shortest an occupant keeps a fast CPU before a rotation:
    /// CFS's minimum granularity, at most the quantum.
    pub min_quantum_ns: u64,
    pub pull_min_ns: u64,
    pub idle_worth_ns: u64,
    /// Occupants give fast CPUs up at ticks (off: `--no-rotation`).
    pub rotation: bool,
}

impl RotaConsts {
    pub fn new(migration_us: f64, cfs: &CfsTunables) -> RotaConsts {
        let mig = ((migration_us * 1000.0).round() as u64).max(1);
        let quantum_ns = 200 * mig;
        RotaConsts {
            quantum_ns,
            min_quantum_ns: cfs.min_granularity_ns.min(quantum_ns),
            pull_min_ns: 4 * mig,
            idle_worth_ns: mig,
            rotation: true,
        }
    }
}

/// COLAB's fairness window in ns: `latencies` sched_latency periods (the
/// simulator's `colab:window=`); infinite or huge: u64::MAX >> 2, a lag no
/// task reaches and one that cannot overflow when added to another.
pub fn window_ns(latencies: f64, cfs: &CfsTunables) -> u64 {
    let cap = u64::MAX >> 2;
    let ns = latencies * cfs.latency_ns as f64;
    if ns >= cap as f64 {
        cap
    } else {
        ns as u64
    }
}

/// Everything scx_colab sets before loading (the BPF globals) and what its
/// loop runs on, from the options and the CPUs online now.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// ROTA's constants; None: the paper's COLAB (`--policy colab`).
    pub rota: Option<RotaConsts>,
    /// The clusters, SMT siblings and the capacity-fallback speedup.
    pub split: Split,
    /// CFS's tunables for the CPU count (both policies' queues).
    pub cfs: CfsTunables,
    /// COLAB: the fairness window of bottleneck-first selection (see window_ns).
    pub colab_window_ns: u64,
    /// COLAB: bottleneck-first selection (off: `--no-block-first`).
    pub block_first: bool,
    /// The futex hooks are loaded (off: `--no-futex-tracking`); not a global:
    /// scx_colab does not load the BPF programs colab_futex_* without it.
    pub futex_tracking: bool,
    /// An idle big CPU takes a little CPU's task (off: `--no-big-pull`).
    pub big_pull: bool,
    /// COLAB: the least run before an idle big CPU takes a task (`--pull-min-us`).
    pub pull_min_ns: u64,
    /// COLAB: Fig. 6's plain round-robin wake-ups (`--strict-rr`).
    pub strict_rr: bool,
    /// Every task's predicted speedup before (or without) a prediction of
    /// its own, in COLAB_FP_ONE fixed point: the split's speedup, at least 1.
    pub default_speedup_fp: u32,
    /// The labeller's parameters, with the period of `--period-ms`.
    pub label_params: LabelParams,
    /// Counters per CPU of the big and the little cluster: 0 here; scx_colab
    /// sets them once it has opened `--model`'s counters (I/O).
    pub nr_events: [u32; COLAB_NR_CLUSTERS],
    /// A stats line this often (`--stats`).
    pub stats_every: Option<Duration>,
    /// Testing only (`--debug-error-after`): ask the BPF side for an error exit.
    pub debug_error_after: Option<Duration>,
    /// Testing only (`--debug-stall-after`): make the BPF side stop dispatching.
    pub debug_stall_after: Option<Duration>,
}

/// The value of one BPF global, in its C type (arrays at their C length).
#[derive(Clone, Debug, PartialEq)]
pub enum Global {
    U64(u64),
    U32(u32),
    Bool(bool),
    U32Array(Vec<u32>),
    U8Array(Vec<u8>),
    I32Array(Vec<i32>),
}

impl Global {
    /// The C type of the global it fits (`u64`, `u32`, `bool`, `u8`, `s32`)
    /// and, for an array, its length.
    pub fn c_type(&self) -> (&'static str, Option<usize>) {
        match self {
            Global::U64(_) => ("u64", None),
            Global::U32(_) => ("u32", None),
            Global::Bool(_) => ("bool", None),
            Global::U32Array(v) => ("u32", Some(v.len())),
            Global::U8Array(v) => ("u8", Some(v.len())),
            Global::I32Array(v) => ("s32", Some(v.len())),
        }
    }
}

/// The settings of a run of scx_colab with `opts` on these clusters of
/// `cpu_count` online CPUs (CFS's tunables scale with it). Errors name the
/// bad option, as scx_colab prints them.
pub fn settings(opts: &Opts, split: Split, cpu_count: usize) -> Result<Settings> {
    let label_params = LabelParams {
        period_ns: opts.period_ms.max(1) * 1_000_000,
        ..LabelParams::default()
    };
    let stats_every = match opts.stats {
        Some(s) if s > 0.0 && s.is_finite() => Some(Duration::from_secs_f64(s)),
        Some(s) => bail!("--stats must be a positive number of seconds, got {s}"),
        None => None,
    };
    if !(opts.migration_us.is_finite() && opts.migration_us > 0.0 && opts.migration_us <= 1e5) {
        bail!(
            "--migration-us must be a positive number of microseconds up to 100000, got {}",
            opts.migration_us
        );
    }
    let cfs = CfsTunables::for_cpus(cpu_count);
    let mut rota = RotaConsts::new(opts.migration_us, &cfs);
    rota.rotation = !opts.no_rotation;
    Ok(Settings {
        rota: (opts.policy == Policy::Rota).then_some(rota),
        default_speedup_fp: to_fp(split.speedup.max(1.0)),
        split,
        colab_window_ns: window_ns(opts.window, &cfs),
        block_first: !opts.no_block_first,
        cfs,
        futex_tracking: !opts.no_futex_tracking,
        big_pull: !opts.no_big_pull,
        pull_min_ns: opts.pull_min_us * 1000,
        strict_rr: opts.strict_rr,
        label_params,
        nr_events: [0; COLAB_NR_CLUSTERS],
        stats_every,
        debug_error_after: opts.debug_error_after.map(Duration::from_secs_f64),
        debug_stall_after: opts.debug_stall_after.map(Duration::from_secs_f64),
    })
}

impl Settings {
    /// The BPF side runs ROTA (the global `policy_rota`).
    pub fn policy_rota(&self) -> bool {
        self.rota.is_some()
    }

    /// The labeller scx_colab runs every period, before any counters: every
    /// task predicted at the split's speedup.
    pub fn labeller(&self) -> Labeller {
        Labeller::new(self.label_params.clone(), self.split.speedup)
    }

    /// Every BPF global scx_colab writes before loading, with its value, for
    /// a machine of `nr_cpu_ids` possible CPUs. Globals not listed keep the
    /// value the BPF C gives them: with COLAB, ROTA's `rota_*` constants
    /// (COLAB never reads them). Errors when the CPUs do not fit the BPF
    /// side's arrays.
    pub fn rodata(&self, nr_cpu_ids: usize) -> Result<Vec<(&'static str, Global)>> {
        if nr_cpu_ids > COLAB_MAX_CPUS {
            bail!("{nr_cpu_ids} possible CPUs; scx_colab handles at most {COLAB_MAX_CPUS}");
        }
        let s = &self.split;
        let sibling_ids = s.siblings.iter().flat_map(|&(c, sib)| [c, sib]);
        if let Some(c) = s
            .big
            .iter()
            .chain(&s.little)
            .copied()
            .chain(sibling_ids)
            .chain(s.big_tiers.iter().map(|&(c, _)| c))
            .max()
        {
            if c >= nr_cpu_ids {
                bail!("CPU {c} is not below the number of possible CPUs ({nr_cpu_ids})");
            }
        }
        let mut big_cpus = vec![0u32; COLAB_MAX_CPUS];
        let mut cpu_is_big = vec![0u8; COLAB_MAX_CPUS];
        for (i, &c) in s.big.iter().enumerate() {
            big_cpus[i] = c as u32;
            cpu_is_big[c] = 1;
        }
        let mut little_cpus = vec![0u32; COLAB_MAX_CPUS];
        for (i, &c) in s.little.iter().enumerate() {
            little_cpus[i] = c as u32;
        }
        let mut cpu_tier = vec![0u8; COLAB_MAX_CPUS];
        for &(c, t) in &s.big_tiers {
            cpu_tier[c] = t;
        }
        let mut sibling_cpu = vec![-1i32; COLAB_MAX_CPUS];
        for &(cpu, sib) in &s.siblings {
            sibling_cpu[cpu] = sib as i32;
        }
        use Global::*;
        let mut g = vec![
            ("nr_cpus", U32(nr_cpu_ids as u32)),
            ("nr_big", U32(s.big.len() as u32)),
            ("nr_little", U32(s.little.len() as u32)),
            ("big_cpus", U32Array(big_cpus)),
            ("little_cpus", U32Array(little_cpus)),
            ("cpu_is_big", U8Array(cpu_is_big)),
            ("tiered", Bool(s.tiered())),
            ("cpu_tier", U8Array(cpu_tier)),
            ("smt_on", Bool(s.smt())),
            ("sibling_cpu", I32Array(sibling_cpu)),
            ("colab_window_ns", U64(self.colab_window_ns)),
            ("colab_no_block_first", Bool(!self.block_first)),
            ("no_big_pull", Bool(!self.big_pull)),
            ("cfs_latency_ns", U64(self.cfs.latency_ns)),
            ("cfs_min_gran_ns", U64(self.cfs.min_granularity_ns)),
            ("cfs_wakeup_gran_ns", U64(self.cfs.wakeup_granularity_ns)),
            ("pull_min_ns", U64(self.pull_min_ns)),
            ("strict_rr", Bool(self.strict_rr)),
            ("default_speedup_fp", U32(self.default_speedup_fp)),
            ("policy_rota", Bool(self.policy_rota())),
        ];
        if let Some(r) = &self.rota {
            g.extend([
                ("rota_quantum_ns", U64(r.quantum_ns)),
                ("rota_min_quantum_ns", U64(r.min_quantum_ns)),
                ("rota_pull_min_ns", U64(r.pull_min_ns)),
                ("rota_idle_worth_ns", U64(r.idle_worth_ns)),
                ("rota_no_rotation", Bool(!r.rotation)),
            ]);
        }
        g.push(("nr_events", U32Array(self.nr_events.to_vec())));
        Ok(g)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topo::SplitMode;
    use clap::Parser;

    /// Four CPUs, 0-1 declared big (`--big-cpus 0,1`), no SMT.
    fn four_cpus() -> Split {
        Split {
            big: vec![0, 1],
            little: vec![2, 3],
            speedup: 2.0,
            mode: SplitMode::Declared,
            siblings: Vec::new(),
            big_tiers: Vec::new(),
        }
    }

    fn settings_of(args: &[&str]) -> Result<Settings> {
        let o = Opts::try_parse_from([&["scx_colab"], args].concat()).unwrap();
        settings(&o, four_cpus(), 4)
    }

    fn value<'a>(g: &'a [(&str, Global)], name: &str) -> &'a Global {
        &g.iter().find(|(n, _)| *n == name).expect(name).1
    }

    /// The window is in sched_latency units of the CPU count, as the
    /// simulator's `colab:window=`; `inf` is a lag no task reaches.
    #[test]
    fn window_option() {
        let cfs = colab_policies::cfs::CfsTunables::for_cpus(4);
        assert_eq!(cfs.latency_ns, 18_000_000);
        let w = |args: &[&str]| {
            let o = Opts::try_parse_from([&["scx_colab"], args].concat()).map(|o| o.window);
            o.map(|w| window_ns(w, &cfs))
        };
        assert_eq!(w(&[]).unwrap(), 18_000_000);
        assert_eq!(w(&["--window", "0.5"]).unwrap(), 9_000_000);
        assert_eq!(w(&["--window", "0"]).unwrap(), 0);
        assert_eq!(w(&["--window", "inf"]).unwrap(), u64::MAX >> 2);
        assert_eq!(w(&["--window", "1e30"]).unwrap(), u64::MAX >> 2);
        for bad in ["-1", "nan", "x", "infinity"] {
            let arg = format!("--window={bad}");
            let e = w(&[arg.as_str()]).unwrap_err().to_string();
            assert!(e.contains("expected a number >= 0 or inf"), "{bad}: {e}");
        }
    }

    #[test]
    fn policy_options() {
        let o = Opts::try_parse_from(["scx_colab"]).unwrap();
        assert_eq!((o.policy, o.migration_us), (Policy::Rota, 100.0));
        let o = Opts::try_parse_from(["scx_colab", "--policy", "colab"]).unwrap();
        assert_eq!(o.policy, Policy::Colab);
        assert!(Opts::try_parse_from(["scx_colab", "--policy", "cfs"]).is_err());
        // The third freeze's options left with it.
        assert!(Opts::try_parse_from(["scx_colab", "--cap", "1"]).is_err());
        assert!(Opts::try_parse_from(["scx_colab", "--eager-rotation"]).is_err());
        for bad in ["0", "-1", "nan", "inf", "100001"] {
            let arg = format!("--migration-us={bad}");
            let o = Opts::try_parse_from(["scx_colab", arg.as_str()]);
            let msg = match o {
                Ok(o) => format!("{:#}", settings(&o, four_cpus(), 4).expect_err(bad)),
                Err(e) => e.to_string(),
            };
            assert!(msg.contains("--migration-us"), "{bad}: {msg}");
        }
    }

    /// ROTA's constants follow the simulator's derivation (rota/mod.rs):
    /// with its default 100 us migration, a 20 ms quantum, 400 us before a
    /// pull, 100 us "idle long enough"; the minimum quantum is CFS's
    /// minimum granularity (2.25 ms on 4 CPUs), at most the quantum.
    #[test]
    fn rota_constants() {
        let cfs = CfsTunables::for_cpus(4);
        let r = RotaConsts::new(100.0, &cfs);
        assert_eq!(
            (
                r.quantum_ns,
                r.min_quantum_ns,
                r.pull_min_ns,
                r.idle_worth_ns
            ),
            (20_000_000, 2_250_000, 400_000, 100_000)
        );
        let r = RotaConsts::new(1.722, &cfs);
        assert_eq!(
            (r.quantum_ns, r.min_quantum_ns, r.pull_min_ns),
            (344_400, 344_400, 6_888)
        );
    }

    #[test]
    fn settings_follow_the_options() {
        let s = settings_of(&[]).unwrap();
        assert!(s.policy_rota());
        assert_eq!(
            s.rota,
            Some(RotaConsts::new(100.0, &CfsTunables::for_cpus(4)))
        );
        assert_eq!(s.cfs, CfsTunables::for_cpus(4));
        assert_eq!((s.colab_window_ns, s.pull_min_ns), (18_000_000, 1_000_000));
        assert!(s.block_first && s.futex_tracking && s.big_pull && !s.strict_rr);
        assert_eq!((s.default_speedup_fp, s.nr_events), (2048, [0, 0]));
        assert_eq!(s.label_params.period_ns, 10_000_000);
        assert_eq!(s.labeller().params, s.label_params);
        assert_eq!(s.stats_every, None);
        assert_eq!((s.debug_error_after, s.debug_stall_after), (None, None));
        let s = settings_of(&[
            "--policy",
            "colab",
            "--window",
            "inf",
            "--no-block-first",
            "--no-futex-tracking",
            "--no-big-pull",
            "--pull-min-us",
            "0",
            "--strict-rr",
            "--period-ms",
            "0",
            "--stats",
            "0.5",
            "--debug-error-after",
            "3",
            "--debug-stall-after",
            "2",
        ])
        .unwrap();
        assert!(!s.policy_rota() && s.rota.is_none());
        assert_eq!((s.colab_window_ns, s.pull_min_ns), (u64::MAX >> 2, 0));
        assert!(!s.block_first && !s.futex_tracking && !s.big_pull && s.strict_rr);
        assert_eq!(s.label_params.period_ns, 1_000_000); // at least 1 ms
        assert_eq!(s.stats_every, Some(Duration::from_millis(500)));
        assert_eq!(s.debug_error_after, Some(Duration::from_secs(3)));
        assert_eq!(s.debug_stall_after, Some(Duration::from_secs(2)));
        let r = settings_of(&["--no-rotation", "--migration-us", "50"])
            .unwrap()
            .rota
            .unwrap();
        assert_eq!((r.quantum_ns, r.rotation), (10_000_000, false));
        for bad in ["0", "-1", "nan", "inf"] {
            let arg = format!("--stats={bad}");
            let e = format!("{:#}", settings_of(&[arg.as_str()]).unwrap_err());
            assert!(e.contains("--stats must be a positive"), "{bad}: {e}");
        }
        // The default speedup: the split's, never below 1.
        let o = Opts::try_parse_from(["scx_colab"]).unwrap();
        let mut split = four_cpus();
        split.speedup = 2.5;
        assert_eq!(settings(&o, split, 4).unwrap().default_speedup_fp, 2560);
        let one = Split {
            big: Vec::new(),
            little: vec![0, 1],
            speedup: 1.0,
            mode: SplitMode::Homogeneous,
            siblings: Vec::new(),
            big_tiers: Vec::new(),
        };
        let s = settings(&o, one, 2).unwrap();
        assert_eq!(s.default_speedup_fp, 1024);
        assert_eq!(s.cfs, CfsTunables::for_cpus(2));
    }

    #[test]
    fn rodata_lays_out_the_split_at_the_c_lengths() {
        let mut s = settings_of(&[]).unwrap();
        s.split = Split {
            big: vec![0, 2],
            little: vec![1, 3, 4],
            speedup: 2.0,
            mode: SplitMode::Declared,
            siblings: vec![(0, 2), (2, 0)],
            big_tiers: vec![(0, 0), (2, 1)],
        };
        s.nr_events = [3, 2];
        let g = s.rodata(8).unwrap();
        let padded = |head: &[u32]| {
            let mut v = head.to_vec();
            v.resize(COLAB_MAX_CPUS, 0);
            v
        };
        assert_eq!(value(&g, "nr_cpus"), &Global::U32(8));
        assert_eq!(value(&g, "nr_big"), &Global::U32(2));
        assert_eq!(value(&g, "nr_little"), &Global::U32(3));
        assert_eq!(value(&g, "big_cpus"), &Global::U32Array(padded(&[0, 2])));
        assert_eq!(
            value(&g, "little_cpus"),
            &Global::U32Array(padded(&[1, 3, 4]))
        );
        let mut is_big = vec![0u8; COLAB_MAX_CPUS];
        is_big[0] = 1;
        is_big[2] = 1;
        assert_eq!(value(&g, "cpu_is_big"), &Global::U8Array(is_big));
        let mut tier = vec![0u8; COLAB_MAX_CPUS];
        tier[2] = 1;
        assert_eq!(value(&g, "cpu_tier"), &Global::U8Array(tier));
        assert_eq!(value(&g, "tiered"), &Global::Bool(true));
        assert_eq!(value(&g, "smt_on"), &Global::Bool(true));
        let mut sib = vec![-1i32; COLAB_MAX_CPUS];
        sib[0] = 2;
        sib[2] = 0;
        assert_eq!(value(&g, "sibling_cpu"), &Global::I32Array(sib));
        assert_eq!(value(&g, "nr_events"), &Global::U32Array(vec![3, 2]));
        assert_eq!(value(&g, "policy_rota"), &Global::Bool(true));
        assert_eq!(value(&g, "rota_quantum_ns"), &Global::U64(20_000_000));
        assert_eq!(value(&g, "rota_no_rotation"), &Global::Bool(false));
        assert_eq!(value(&g, "cfs_latency_ns"), &Global::U64(18_000_000));
        assert_eq!(value(&g, "default_speedup_fp"), &Global::U32(2048));
        let mut names: Vec<&str> = g.iter().map(|(n, _)| *n).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), g.len(), "a global listed twice");
        // COLAB leaves ROTA's constants alone.
        let c = settings_of(&["--policy", "colab"])
            .unwrap()
            .rodata(4)
            .unwrap();
        assert_eq!(value(&c, "policy_rota"), &Global::Bool(false));
        assert!(c.iter().all(|(n, _)| !n.starts_with("rota_")));
        assert_eq!(c.len(), g.len() - 5);
        // The CPUs must fit the arrays and the possible CPUs.
        let e = s.rodata(COLAB_MAX_CPUS + 1).unwrap_err().to_string();
        assert!(
            e.contains("257 possible CPUs") && e.contains("at most 256"),
            "{e}"
        );
        assert!(s.rodata(COLAB_MAX_CPUS).is_ok());
        let e = s.rodata(4).unwrap_err().to_string();
        assert!(e.contains("CPU 4"), "{e}");
    }

    /// scx_colab's BPF C, which these settings configure.
    fn bpf_dir() -> std::path::PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scx_colab/src/bpf")
    }

    /// C text without its comments.
    fn strip_comments(c: &str) -> String {
        let mut out = String::new();
        let mut rest = c;
        loop {
            let line = rest.find("//");
            let block = rest.find("/*");
            let line_first = match (line, block) {
                (Some(l), Some(b)) => l < b,
                (l, _) => l.is_some(),
            };
            if let (true, Some(l)) = (line_first, line) {
                out.push_str(&rest[..l]);
                rest = rest[l..].find('\n').map_or("", |e| &rest[l + e..]);
            } else if let Some(b) = block {
                out.push_str(&rest[..b]);
                out.push(' ');
                rest = rest[b + 2..]
                    .find("*/")
                    .map_or("", |e| &rest[b + 2 + e + 2..]);
            } else {
                out.push_str(rest);
                return out;
            }
        }
    }

    /// One `const volatile` global of the BPF C.
    #[derive(Debug)]
    struct CGlobal {
        file: String,
        name: String,
        /// Its C type (`u64`, `bool`, `s32`, ...).
        ty: String,
        /// Its array length as written (`COLAB_MAX_CPUS`); None: a scalar.
        len: Option<String>,
    }

    /// Every `const volatile` global declared in src/bpf/*.h and main.bpf.c,
    /// by a parser that knows `const volatile TYPE NAME[LEN] = INIT;` and
    /// stops at anything else.
    fn c_globals() -> Vec<CGlobal> {
        let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(bpf_dir())
            .expect("scx_colab's src/bpf")
            .map(|e| e.unwrap().path())
            .filter(|p| {
                let name = p.file_name().unwrap().to_string_lossy();
                name.ends_with(".h") || name == "main.bpf.c"
            })
            .collect();
        files.sort();
        assert!(files.iter().any(|f| f.ends_with("main.bpf.c")), "{files:?}");
        let mut out = Vec::new();
        for f in files {
            let file = f.file_name().unwrap().to_string_lossy().into_owned();
            let text = strip_comments(&std::fs::read_to_string(&f).unwrap());
            const KEY: &str = "const volatile";
            let mut rest = text.as_str();
            while let Some(i) = rest.find(KEY) {
                let after = &rest[i + KEY.len()..];
                let end = after.find(';').expect("a declaration ends with ;");
                let decl = after[..end].split('=').next().unwrap().trim();
                assert!(
                    !decl.contains(['(', '*', ',', '{']),
                    "{file}: cannot read `{KEY} {decl}`; teach this parser"
                );
                let (decl, len) = match decl.split_once('[') {
                    Some((d, l)) => (d, Some(l.trim_end_matches(']').trim().to_string())),
                    None => (decl, None),
                };
                let words: Vec<&str> = decl.split_whitespace().collect();
                let (name, ty) = words.split_last().expect("a type and a name");
                assert!(!ty.is_empty(), "{file}: `{decl}` has no type");
                out.push(CGlobal {
                    file: file.clone(),
                    name: name.to_string(),
                    ty: ty.join(" "),
                    len,
                });
                rest = &after[end..];
            }
        }
        out
    }

    /// An enum constant of src/bpf/intf.h (`NAME = 123,`).
    fn intf_const(name: &str) -> usize {
        let text = strip_comments(&std::fs::read_to_string(bpf_dir().join("intf.h")).unwrap());
        text.lines()
            .find_map(|l| {
                let (n, v) = l.split_once('=')?;
                (n.trim() == name).then(|| v.trim().trim_end_matches(',').trim().parse().ok())?
            })
            .unwrap_or_else(|| panic!("{name} in intf.h"))
    }

    /// Globals of the BPF C that scx_colab leaves at the value the C gives
    /// them, whatever the options. None today: each one is an option or a
    /// property of the machine.
    const LEFT_AT_DEFAULT: &[&str] = &[];

    /// Left at their BPF default with `--policy colab` only: ROTA's
    /// constants, which COLAB never reads (scx_colab has always written them
    /// only for ROTA).
    const ROTA_ONLY: &[&str] = &[
        "rota_quantum_ns",
        "rota_min_quantum_ns",
        "rota_pull_min_ns",
        "rota_idle_worth_ns",
        "rota_no_rotation",
    ];

    #[test]
    fn the_c_lengths_are_intf_hs() {
        assert_eq!(COLAB_MAX_CPUS, intf_const("COLAB_MAX_CPUS"));
        assert_eq!(COLAB_NR_CLUSTERS, intf_const("COLAB_NR_CLUSTERS"));
    }

    /// Every `const volatile` global of the BPF C is written by rodata() (in
    /// its C type, arrays at their C length) or listed above as left at its
    /// default on purpose; rodata() writes nothing else.
    #[test]
    fn every_bpf_global_is_written_or_left_at_its_default_on_purpose() {
        let c = c_globals();
        for name in LEFT_AT_DEFAULT.iter().chain(ROTA_ONLY) {
            assert!(
                c.iter().any(|g| g.name == *name),
                "{name} is listed as left at its default but is no global of src/bpf"
            );
        }
        let rota: &[&str] = &[];
        let colab: &[&str] = &["--policy", "colab"];
        for (args, left) in [
            (rota, LEFT_AT_DEFAULT.to_vec()),
            (colab, [LEFT_AT_DEFAULT, ROTA_ONLY].concat()),
        ] {
            let g = settings_of(args).unwrap().rodata(4).unwrap();
            for cg in &c {
                let written = g.iter().any(|(n, _)| *n == cg.name);
                let listed = left.contains(&cg.name.as_str());
                assert!(
                    written || listed,
                    "{args:?}: {} declares `const volatile {} {}`, which rodata() does not \
                     write; write it or list it as left at its default",
                    cg.file,
                    cg.ty,
                    cg.name
                );
                assert!(
                    !(written && listed),
                    "{args:?}: rodata() writes {}, listed as left at its default",
                    cg.name
                );
            }
            for (name, v) in &g {
                let cg = c.iter().find(|cg| cg.name == *name).unwrap_or_else(|| {
                    panic!("rodata() writes {name}, no const volatile global of src/bpf")
                });
                let (ty, len) = v.c_type();
                let c_len = cg.len.as_deref().map(|l| match l.parse() {
                    Ok(n) => n,
                    Err(_) => intf_const(l),
                });
                assert_eq!(
                    (cg.ty.as_str(), c_len),
                    (ty, len),
                    "{name}: C type (and length) of {} vs rodata()'s value",
                    cg.file
                );
            }
        }
    }
}
