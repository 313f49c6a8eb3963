//! Loading, attaching and running the BPF scheduler: the labeller every
//! period, the stats line every `--stats` seconds, the exit report.

use std::collections::{HashMap, HashSet};
use std::mem::MaybeUninit;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use colab_labels::SpeedupRange;
use libbpf_rs::{MapCore, MapFlags};
use scx_colab_user::labeller::{Labeller, Sample, Write};
use scx_colab_user::{Global, Settings};
use scx_utils::{scx_ops_attach, scx_ops_load, scx_ops_open, uei_exited, uei_report};

use crate::bpf_intf;
use crate::bpf_skel::types::rodata;
use crate::bpf_skel::{BpfSkel, BpfSkelBuilder};
use crate::counters::{self, CounterModel, TaskTotals};
use crate::stats;

const NR_STATS: usize = bpf_intf::colab_stat_COLAB_NR_STATS as usize;

/// A run: its settings (scx_colab_user, from the options and the CPUs), the
/// labeller made of them and the counters main.rs opened.
pub struct Config {
    pub settings: Settings,
    pub labeller: Labeller,
    pub counters: Option<Counters>,
    /// Load with the verifier's statistics in libbpf's log, then exit
    /// (`--verifier-stats`; main.rs prints them).
    pub verifier_stats: bool,
}

/// Per-task speedups from counters (main.rs sets them up).
pub struct Counters {
    pub model: CounterModel,
    /// (index in the BPF map pmu_events, the perf event's descriptor).
    pub fds: Vec<(u32, OwnedFd)>,
    /// Counters per CPU of the big and the little cluster.
    pub nr_events: [u32; 2],
    /// Fixed range of the labels; None: each period's predictions.
    pub range: Option<SpeedupRange>,
}

/// How a run ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Exit with this process exit code (0 after a requested, clean detach).
    Exit(i32),
    /// The kernel ended the scheduler and asked for a restart
    /// (`SCX_ECODE_ACT_RESTART`, e.g. a CPU going offline or online).
    Restart,
}

/// Runs the scheduler until `shutdown` is set or the kernel ends it.
pub fn run(mut cfg: Config, shutdown: Arc<AtomicBool>) -> Result<Outcome> {
    let nr_cpu_ids = libbpf_rs::num_possible_cpus().context("counting possible CPUs")?;
    let globals = cfg.settings.rodata(nr_cpu_ids)?;
    let mut open_object = MaybeUninit::uninit();
    let builder = BpfSkelBuilder::default();
    // Verifier statistics (BPF_LOG_STATS) in each program's load log.
    let open_opts = cfg
        .verifier_stats
        .then(|| libbpf_rs::libbpf_sys::bpf_object_open_opts {
            sz: std::mem::size_of::<libbpf_rs::libbpf_sys::bpf_object_open_opts>() as _,
            kernel_log_level: 4,
            ..Default::default()
        });
    let mut skel = scx_ops_open!(builder, &mut open_object, colab_ops, open_opts)?;
    {
        let ro = skel.maps.rodata_data.as_mut().context("no rodata")?;
        for (name, value) in &globals {
            set_global(ro, name, value)?;
        }
    }
    if cfg.counters.is_none() {
        // No counters: no tracepoint program on every context switch.
        skel.progs.colab_pmu_switch.set_autoload(false);
    }
    if !cfg.settings.futex_tracking {
        skel.progs.colab_futex_wait_enter.set_autoload(false);
        skel.progs.colab_futex_wait_exit.set_autoload(false);
        skel.progs.colab_futex_lock_pi_enter.set_autoload(false);
        skel.progs.colab_futex_lock_pi_exit.set_autoload(false);
        skel.progs.colab_futex_waking.set_autoload(false);
        log::info!("--no-futex-tracking: no bottleneck tracking, no task is high-blocking");
    }
    let mut skel = scx_ops_load!(skel, colab_ops, uei)?;
    if cfg.verifier_stats {
        return Ok(Outcome::Exit(0));
    }
    if let Some(c) = &cfg.counters {
        for (idx, fd) in &c.fds {
            skel.maps
                .pmu_events
                .update(
                    &idx.to_ne_bytes(),
                    &fd.as_raw_fd().to_ne_bytes(),
                    MapFlags::ANY,
                )
                .with_context(|| format!("adding perf counter {idx} to the BPF map"))?;
        }
    }
    let link = scx_ops_attach!(skel, colab_ops)?;
    let policy = match &cfg.settings.rota {
        Some(r) => format!(
            "policy rota: quantum {}-{} us, pull after {} us",
            r.min_quantum_ns / 1000,
            r.quantum_ns / 1000,
            r.pull_min_ns / 1000
        ),
        None => match cfg.settings.colab_window_ns {
            w if w == u64::MAX >> 2 => "policy colab: no fairness window".to_string(),
            w => format!("policy colab: fairness window {} us", w / 1000),
        },
    };
    println!(
        "scx_colab: attached ({}; {policy}; labels every {} ms)",
        cfg.settings.split.describe(),
        cfg.labeller.params.period_ns / 1_000_000
    );

    let period = Duration::from_nanos(cfg.labeller.params.period_ns);
    let mut next_label = Instant::now() + period;
    let mut next_stats = cfg.settings.stats_every.map(|d| Instant::now() + d);
    let mut last_counters = vec![0u64; NR_STATS];
    let mut label_errors = 0u64;
    let mut passes = 0u64; // labelling passes since the last stats line
    let mut force_error_at = cfg.settings.debug_error_after.map(|d| Instant::now() + d);
    let mut force_stall_at = cfg.settings.debug_stall_after.map(|d| Instant::now() + d);
    while !shutdown.load(Ordering::Relaxed) && !uei_exited!(&skel, uei) {
        let now = Instant::now();
        if now < next_label {
            std::thread::sleep(next_label - now);
            continue;
        }
        if force_error_at.is_some_and(|at| now >= at) {
            force_error_at = None;
            log::warn!("--debug-error-after: asking the BPF side for an error exit");
            let bss = skel.maps.bss_data.as_mut().context("no bss")?;
            // SAFETY: mmap()ed .bss of the loaded object.
            unsafe { std::ptr::write_volatile(std::ptr::addr_of_mut!(bss.debug_force_error), 1) };
        }
        if force_stall_at.is_some_and(|at| now >= at) {
            force_stall_at = None;
            log::warn!("--debug-stall-after: asking the BPF side to stop dispatching");
            let bss = skel.maps.bss_data.as_mut().context("no bss")?;
            // SAFETY: mmap()ed .bss of the loaded object.
            unsafe { std::ptr::write_volatile(std::ptr::addr_of_mut!(bss.debug_stall), 1) };
        }
        next_label += period;
        if next_label < now {
            next_label = now + period; // fell behind: skip, don't burst
        }
        passes += 1;
        if let Err(e) = label_pass(&mut skel, &mut cfg.labeller, cfg.counters.as_mut()) {
            label_errors += 1;
            if label_errors <= 3 {
                log::warn!("labeller: {e:#}");
            }
        }
        if let (Some(at), Some(every)) = (next_stats, cfg.settings.stats_every) {
            if now >= at {
                next_stats = Some(at + every);
                let counters = read_counters(&skel)?;
                let d = stats::delta(&counters, &last_counters);
                last_counters = counters;
                let speedups = match cfg.counters {
                    Some(_) => {
                        format!(" | {}", stats::busiest_line(&cfg.labeller.busiest_names(6)))
                    }
                    None => String::new(),
                };
                println!(
                    "scx_colab: {} | {} | {}{speedups}",
                    stats::labels_line(&cfg.labeller.counts(), std::mem::take(&mut passes)),
                    stats::counters_line(&d),
                    stats::leaders_line(&cfg.labeller.leaders(5))
                );
            }
        }
    }
    let requested = shutdown.load(Ordering::Relaxed);
    drop(link);
    match uei_report!(&skel, uei) {
        Ok(_) if requested => {
            println!("scx_colab: detached on request");
            Ok(Outcome::Exit(0))
        }
        Ok(uei) if uei.should_restart() => {
            println!("scx_colab: the kernel asked for a restart (CPU hotplug); restarting");
            Ok(Outcome::Restart)
        }
        Ok(_) => {
            println!("scx_colab: the kernel unregistered the scheduler");
            Ok(Outcome::Exit(1))
        }
        Err(e) => {
            eprintln!("scx_colab: the kernel ended the scheduler: {e:#}");
            Ok(Outcome::Exit(1))
        }
    }
}

/// The skeleton's read-only globals that scx_colab writes, by name and by
/// their Global variant: `set_global` writes one entry of
/// `Settings::rodata` (the one list of them), and a test checks that the
/// names here are exactly the names that list gives (both policies).
macro_rules! skeleton_globals {
    (scalars { $($s:ident: $sv:ident),* $(,)? } arrays { $($a:ident: $av:ident),* $(,)? }) => {
        /// Every global set_global writes.
        #[cfg(test)]
        const SKELETON_GLOBALS: &[&str] = &[$(stringify!($s),)* $(stringify!($a),)*];

        /// Writes `value` into the skeleton's global `name`; an error when the
        /// skeleton has no such global of that type and length.
        fn set_global(ro: &mut rodata, name: &str, value: &Global) -> Result<()> {
            match (name, value) {
                $((stringify!($s), Global::$sv(v)) => ro.$s = *v,)*
                $((stringify!($a), Global::$av(v)) => {
                    ro.$a = v.as_slice().try_into().with_context(|| {
                        format!("BPF global {name}: {} values for {}", v.len(), ro.$a.len())
                    })?
                })*
                _ => bail!("the skeleton has no BPF global {name} of C type {:?}", value.c_type()),
            }
            Ok(())
        }
    };
}

skeleton_globals! {
    scalars {
        nr_cpus: U32,
        nr_big: U32,
        nr_little: U32,
        smt_on: Bool,
        tiered: Bool,
        colab_window_ns: U64,
        colab_no_block_first: Bool,
        no_big_pull: Bool,
        cfs_latency_ns: U64,
        cfs_min_gran_ns: U64,
        cfs_wakeup_gran_ns: U64,
        pull_min_ns: U64,
        strict_rr: Bool,
        default_speedup_fp: U32,
        policy_rota: Bool,
        rota_quantum_ns: U64,
        rota_min_quantum_ns: U64,
        rota_pull_min_ns: U64,
        rota_idle_worth_ns: U64,
        rota_no_rotation: Bool,
    }
    arrays {
        big_cpus: U32Array,
        little_cpus: U32Array,
        cpu_is_big: U8Array,
        cpu_tier: U8Array,
        sibling_cpu: I32Array,
        nr_events: U32Array,
    }
}

fn comm_of(raw: &[std::os::raw::c_char]) -> String {
    let bytes: Vec<u8> = raw
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Every task's counter totals (map task_pmu).
fn read_task_pmu(skel: &BpfSkel) -> Result<HashMap<u32, TaskTotals>> {
    let mut out = HashMap::new();
    let iter = skel
        .maps
        .task_pmu
        .lookup_batch(256, MapFlags::ANY, MapFlags::ANY)?;
    for (key, val) in iter {
        if key.len() < 4 {
            continue;
        }
        let pid = u32::from_ne_bytes(key[..4].try_into().unwrap());
        let t = TaskTotals::from_bytes(&val)
            .with_context(|| format!("task_pmu value of {} bytes", val.len()))?;
        out.insert(pid, t);
    }
    Ok(out)
}

/// One labelling period: counters in, label changes out, generation bumped.
fn label_pass(
    skel: &mut BpfSkel,
    labeller: &mut Labeller,
    counters: Option<&mut Counters>,
) -> Result<()> {
    let mut totals = match counters {
        Some(_) => read_task_pmu(skel)?,
        None => HashMap::new(),
    };
    // One batched read (a syscall per 256 tasks) rather than two syscalls a
    // task: this runs every 10 ms.
    let batch = skel
        .maps
        .block_stats
        .lookup_batch(256, MapFlags::ANY, MapFlags::ANY)?;
    let mut samples = Vec::new();
    for (key, val) in batch {
        if key.len() != 4 {
            continue;
        }
        if val.len() < std::mem::size_of::<bpf_intf::colab_block_stat>() {
            bail!("block_stats value of {} bytes", val.len());
        }
        // SAFETY: the value is a struct colab_block_stat (size checked), read unaligned.
        let bs: bpf_intf::colab_block_stat =
            unsafe { std::ptr::read_unaligned(val.as_ptr() as *const _) };
        samples.push(Sample {
            pid: u32::from_ne_bytes(key[..4].try_into().unwrap()),
            blocked_others_ns: bs.blocked_others_ns,
            comm: comm_of(&bs.comm),
            predicted_speedup: None,
            run_ns: 0,
        });
    }
    if let Some(c) = counters {
        // Tasks that ran but kept nobody waiting: a sample with no waiting.
        for s in &mut samples {
            if let Some(t) = totals.remove(&s.pid) {
                s.predicted_speedup = c.model.update(s.pid, &t);
                s.run_ns = t.run_ns.iter().sum();
            }
        }
        for (pid, t) in totals {
            samples.push(Sample {
                pid,
                blocked_others_ns: 0,
                predicted_speedup: c.model.update(pid, &t),
                run_ns: t.run_ns.iter().sum(),
                comm: t.comm,
            });
        }
        let alive: HashSet<u32> = samples.iter().map(|s| s.pid).collect();
        c.model.retain(&alive);
        if c.range.is_none() {
            let predicted = samples.iter().filter_map(|s| s.predicted_speedup);
            if let Some(r) = counters::observed_range(predicted) {
                labeller.set_range(r);
            }
        }
    }
    let writes = labeller.period(&samples);
    if writes.is_empty() {
        return Ok(());
    }
    let labels = &skel.maps.labels;
    for w in &writes {
        match *w {
            Write::Set(pid, l) => {
                labels.update(&pid.to_ne_bytes(), &l.to_bytes(), MapFlags::ANY)?
            }
            Write::Delete(pid) => {
                let _ = labels.delete(&pid.to_ne_bytes()); // may be gone with the task
            }
        }
    }
    let bss = skel.maps.bss_data.as_mut().context("no bss")?;
    // SAFETY: bss is the mmap()ed .bss of the loaded object; BPF reads it concurrently.
    unsafe {
        let p = std::ptr::addr_of_mut!(bss.label_gen);
        std::ptr::write_volatile(p, std::ptr::read_volatile(p).wrapping_add(1));
    }
    Ok(())
}

fn read_counters(skel: &BpfSkel) -> Result<Vec<u64>> {
    let mut out = vec![0u64; NR_STATS];
    for (i, slot) in out.iter_mut().enumerate() {
        let key = (i as u32).to_ne_bytes();
        if let Some(per_cpu) = skel.maps.stats.lookup_percpu(&key, MapFlags::ANY)? {
            *slot = per_cpu
                .iter()
                .filter(|v| v.len() >= 8)
                .map(|v| u64::from_ne_bytes(v[..8].try_into().unwrap()))
                .sum();
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_stat_decoding_matches_intf_h() {
        // SAFETY: a plain C struct of integers and a char array: zero is valid.
        let mut bs: bpf_intf::colab_block_stat = unsafe { std::mem::zeroed() };
        bs.blocked_others_ns = 123_456;
        bs.charges = 7;
        for (i, b) in b"worker".iter().enumerate() {
            bs.comm[i] = *b as _;
        }
        // SAFETY: reading the struct's bytes.
        let bytes = unsafe {
            std::slice::from_raw_parts(
                &bs as *const _ as *const u8,
                std::mem::size_of::<bpf_intf::colab_block_stat>(),
            )
        };
        assert_eq!(
            scx_colab_user::labeller::block_stat(bytes),
            Some((123_456, "worker".to_string()))
        );
    }

    #[test]
    fn label_layout_matches_intf_h() {
        let l = scx_colab_user::labeller::Label {
            speedup_label: 2,
            high_block: true,
            block_level_fp: 300,
            speedup_fp: 2048,
        };
        let b = l.to_bytes();
        assert_eq!(b.len(), std::mem::size_of::<bpf_intf::colab_label>());
        // SAFETY: same size, plain u32 fields.
        let c: bpf_intf::colab_label = unsafe { std::ptr::read_unaligned(b.as_ptr() as *const _) };
        assert_eq!(
            (
                c.speedup_label,
                c.high_block,
                c.block_level_fp,
                c.speedup_fp
            ),
            (2, 1, 300, 2048)
        );
        assert_eq!(stats::STAT_NAMES.len(), NR_STATS);
    }

    #[test]
    fn comm_stops_at_nul() {
        let raw: Vec<std::os::raw::c_char> = b"lockholder\0\0\0\0\0\0"
            .iter()
            .map(|&b| b as std::os::raw::c_char)
            .collect();
        assert_eq!(comm_of(&raw), "lockholder");
    }

    /// Settings for a 4-CPU machine, 0-1 big, with SMT siblings 0/2 and 1/3.
    fn settings_of(args: &[&str]) -> Settings {
        let opts =
            <scx_colab_user::Opts as clap::Parser>::try_parse_from([&["scx_colab"], args].concat())
                .unwrap();
        let split = scx_colab_user::Split {
            big: vec![0, 2],
            little: vec![1, 3],
            speedup: 2.0,
            mode: scx_colab_user::SplitMode::Declared,
            siblings: vec![(0, 2), (1, 3), (2, 0), (3, 1)],
            big_tiers: Vec::new(),
        };
        scx_colab_user::settings(&opts, split, 4).unwrap()
    }

    /// The globals set_global writes are exactly those Settings::rodata
    /// lists (over both policies), and each entry lands in the skeleton.
    #[test]
    fn the_skeleton_is_written_from_settings_rodata() {
        let mut listed: Vec<&str> = Vec::new();
        for args in [&[][..], &["--policy", "colab"][..]] {
            let s = settings_of(args);
            // SAFETY: the skeleton's rodata is plain integers, bools and arrays of them.
            let mut ro: rodata = unsafe { std::mem::zeroed() };
            for (name, value) in &s.rodata(4).unwrap() {
                set_global(&mut ro, name, value).unwrap();
                listed.push(name);
            }
            assert_eq!(ro.nr_cpus, 4);
            assert_eq!((ro.nr_big, ro.nr_little), (2, 2));
            assert_eq!(
                (&ro.big_cpus[..3], &ro.little_cpus[..3]),
                (&[0, 2, 0][..], &[1, 3, 0][..])
            );
            assert_eq!(&ro.cpu_is_big[..4], &[1, 0, 1, 0]);
            assert!(ro.smt_on);
            assert_eq!(&ro.sibling_cpu[..5], &[2, 3, 0, 1, -1]);
            assert_eq!(ro.cfs_latency_ns, s.cfs.latency_ns);
            assert_eq!(ro.default_speedup_fp, 2048);
            assert_eq!(ro.policy_rota, s.rota.is_some());
            assert_eq!(
                ro.rota_quantum_ns,
                s.rota.as_ref().map_or(0, |r| r.quantum_ns)
            );
        }
        listed.sort_unstable();
        listed.dedup();
        let mut written = SKELETON_GLOBALS.to_vec();
        written.sort_unstable();
        assert_eq!(
            written, listed,
            "set_global's globals vs Settings::rodata's"
        );
        // A global of the wrong type or length, or none at all, is an error.
        // SAFETY: as above.
        let mut ro: rodata = unsafe { std::mem::zeroed() };
        assert!(set_global(&mut ro, "nr_cpus", &Global::U64(1)).is_err());
        assert!(set_global(&mut ro, "big_cpus", &Global::U32Array(vec![0; 3])).is_err());
        assert!(set_global(&mut ro, "no_such_global", &Global::Bool(true)).is_err());
    }

    #[test]
    fn the_shared_array_lengths_are_intf_hs() {
        assert_eq!(
            scx_colab_user::COLAB_MAX_CPUS,
            bpf_intf::colab_consts_COLAB_MAX_CPUS as usize
        );
        assert_eq!(
            scx_colab_user::settings::COLAB_NR_CLUSTERS,
            bpf_intf::colab_consts_COLAB_NR_CLUSTERS as usize
        );
    }
}
