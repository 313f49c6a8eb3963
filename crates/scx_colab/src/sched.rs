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
use scx_utils::{scx_ops_attach, scx_ops_load, scx_ops_open, uei_exited, uei_report};

use crate::bpf_intf;
use crate::bpf_skel::{BpfSkel, BpfSkelBuilder};
use crate::counters::{self, CounterModel, TaskTotals};
use crate::labeller::{to_fp, Label, Labeller, Sample, Write};
use crate::stats;
use crate::topo::Split;

const MAX_CPUS: usize = bpf_intf::colab_consts_COLAB_MAX_CPUS as usize;
const NR_STATS: usize = bpf_intf::colab_stat_COLAB_NR_STATS as usize;

pub struct Config {
    /// ROTA's constants; None: the paper's COLAB.
    pub rota: Option<RotaConsts>,
    pub split: Split,
    /// CFS's tunables for the CPU count (both policies' queues).
    pub cfs: colab_policies::cfs::CfsTunables,
    /// COLAB: the fairness window of bottleneck-first selection (see window_ns).
    pub colab_window_ns: u64,
    /// COLAB: bottleneck-first selection (off: `--no-block-first`).
    pub block_first: bool,
    pub futex_tracking: bool,
    pub big_pull: bool,
    pub pull_min_ns: u64,
    pub strict_rr: bool,
    pub stats_every: Option<Duration>,
    pub labeller: Labeller,
    pub counters: Option<Counters>,
    pub debug_error_after: Option<Duration>,
    pub debug_stall_after: Option<Duration>,
}

/// ROTA's constants, derived from the machine's cross-cluster migration
/// cost and CPU count exactly as the simulator's `rota` derives them.
#[derive(Clone, Debug, PartialEq)]
pub struct RotaConsts {
    pub quantum_ns: u64,
    pub cap_ns: u64,
    pub pull_min_ns: u64,
    pub idle_worth_ns: u64,
    /// Occupants give fast CPUs up at ticks (off: `--no-rotation`).
    pub rotation: bool,
    /// Rotate as the simulator does (`--eager-rotation`).
    pub eager: bool,
}

impl RotaConsts {
    pub fn new(migration_us: f64, cap_quanta: u64) -> RotaConsts {
        let mig = ((migration_us * 1000.0).round() as u64).max(1);
        let quantum_ns = 200 * mig;
        RotaConsts {
            quantum_ns,
            cap_ns: quantum_ns.saturating_mul(cap_quanta),
            pull_min_ns: 4 * mig,
            idle_worth_ns: mig,
            rotation: true,
            eager: false,
        }
    }
}

/// COLAB's fairness window in ns: `latencies` sched_latency periods (the
/// simulator's `colab:window=`); infinite or huge: u64::MAX >> 2, a lag no
/// task reaches and one that cannot overflow when added to another.
pub fn window_ns(latencies: f64, cfs: &colab_policies::cfs::CfsTunables) -> u64 {
    let cap = u64::MAX >> 2;
    let ns = latencies * cfs.latency_ns as f64;
    if ns >= cap as f64 {
        cap
    } else {
        ns as u64
    }
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
    if nr_cpu_ids > MAX_CPUS {
        bail!("{nr_cpu_ids} possible CPUs; scx_colab handles at most {MAX_CPUS}");
    }
    let mut open_object = MaybeUninit::uninit();
    let builder = BpfSkelBuilder::default();
    let mut skel = scx_ops_open!(
        builder,
        &mut open_object,
        colab_ops,
        None::<libbpf_rs::libbpf_sys::bpf_object_open_opts>
    )?;
    {
        let ro = skel.maps.rodata_data.as_mut().context("no rodata")?;
        ro.nr_cpus = nr_cpu_ids as u32;
        ro.nr_big = cfg.split.big.len() as u32;
        ro.nr_little = cfg.split.little.len() as u32;
        for (i, &c) in cfg.split.big.iter().enumerate() {
            ro.big_cpus[i] = c as u32;
            ro.cpu_is_big[c] = 1;
        }
        for (i, &c) in cfg.split.little.iter().enumerate() {
            ro.little_cpus[i] = c as u32;
        }
        ro.smt_on = cfg.split.smt();
        ro.sibling_cpu = [-1; MAX_CPUS];
        for &(cpu, sib) in &cfg.split.siblings {
            ro.sibling_cpu[cpu] = sib as i32;
        }
        ro.colab_window_ns = cfg.colab_window_ns;
        ro.colab_no_block_first = !cfg.block_first;
        ro.no_big_pull = !cfg.big_pull;
        ro.cfs_latency_ns = cfg.cfs.latency_ns;
        ro.cfs_min_gran_ns = cfg.cfs.min_granularity_ns;
        ro.cfs_wakeup_gran_ns = cfg.cfs.wakeup_granularity_ns;
        ro.pull_min_ns = cfg.pull_min_ns;
        ro.strict_rr = cfg.strict_rr;
        ro.default_speedup_fp = to_fp(cfg.split.speedup.max(1.0));
        ro.policy_rota = cfg.rota.is_some();
        if let Some(r) = &cfg.rota {
            ro.rota_quantum_ns = r.quantum_ns;
            ro.rota_cap_ns = r.cap_ns;
            ro.rota_pull_min_ns = r.pull_min_ns;
            ro.rota_idle_worth_ns = r.idle_worth_ns;
            ro.rota_no_rotation = !r.rotation;
            ro.rota_eager = r.eager;
        }
        ro.nr_events = cfg.counters.as_ref().map_or([0, 0], |c| c.nr_events);
    }
    if cfg.counters.is_none() {
        // No counters: no tracepoint program on every context switch.
        skel.progs.colab_pmu_switch.set_autoload(false);
    }
    if !cfg.futex_tracking {
        skel.progs.colab_futex_wait_enter.set_autoload(false);
        skel.progs.colab_futex_wait_exit.set_autoload(false);
        skel.progs.colab_futex_lock_pi_enter.set_autoload(false);
        skel.progs.colab_futex_lock_pi_exit.set_autoload(false);
        skel.progs.colab_futex_waking.set_autoload(false);
        log::info!("--no-futex-tracking: no bottleneck tracking, no task is high-blocking");
    }
    let mut skel = scx_ops_load!(skel, colab_ops, uei)?;
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
    let policy = match &cfg.rota {
        Some(r) => format!(
            "policy rota: quantum {} us, cap {} us, pull after {} us",
            r.quantum_ns / 1000,
            r.cap_ns / 1000,
            r.pull_min_ns / 1000
        ),
        None => match cfg.colab_window_ns {
            w if w == u64::MAX >> 2 => "policy colab: no fairness window".to_string(),
            w => format!("policy colab: fairness window {} us", w / 1000),
        },
    };
    println!(
        "scx_colab: attached ({}; {policy}; labels every {} ms)",
        cfg.split.describe(),
        cfg.labeller.params.period_ns / 1_000_000
    );

    let period = Duration::from_nanos(cfg.labeller.params.period_ns);
    let mut next_label = Instant::now() + period;
    let mut next_stats = cfg.stats_every.map(|d| Instant::now() + d);
    let mut last_counters = vec![0u64; NR_STATS];
    let mut label_errors = 0u64;
    let mut passes = 0u64; // labelling passes since the last stats line
    let mut force_error_at = cfg.debug_error_after.map(|d| Instant::now() + d);
    let mut force_stall_at = cfg.debug_stall_after.map(|d| Instant::now() + d);
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
        if let (Some(at), Some(every)) = (next_stats, cfg.stats_every) {
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
                labels.update(&pid.to_ne_bytes(), &label_bytes(&l), MapFlags::ANY)?
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

fn label_bytes(l: &Label) -> Vec<u8> {
    let mut v = Vec::with_capacity(16);
    for x in [
        l.speedup_label,
        l.high_block as u32,
        l.block_level_fp,
        l.speedup_fp,
    ] {
        v.extend_from_slice(&x.to_ne_bytes());
    }
    v
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
    fn label_layout_matches_intf_h() {
        let l = Label {
            speedup_label: 2,
            high_block: true,
            block_level_fp: 300,
            speedup_fp: 2048,
        };
        let b = label_bytes(&l);
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
}
