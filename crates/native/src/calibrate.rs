//! Measures the costs the simulator charges, on this machine: context switch,
//! wake-up latency, migration (cache refill) and the tick, and describes the
//! machine as a topology file. Measured once, never fitted to a workload.

use crate::{calibrate_spin, set_affinity, Calibration};
use serde::Serialize;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Instant;

#[derive(Clone, Debug, Serialize)]
pub struct MachineCosts {
    pub cpus: usize,
    pub spin: Calibration,
    /// One switch between two threads on one CPU (futex ping-pong / 2).
    pub context_switch_ns: u64,
    /// From a futex wake to the woken thread running on another CPU.
    pub wakeup_latency_ns: u64,
    /// Extra time to re-warm a 256 KiB working set after moving to another CPU.
    pub migration_ns: u64,
    pub tick_ns: u64,
    /// Where the tick came from.
    pub tick_source: String,
}

/// Median of `runs` measurements.
fn median(mut v: Vec<u64>) -> u64 {
    v.sort_unstable();
    v[v.len() / 2]
}

/// Two threads bounce a futex `rounds` times; returns ns per one-way hand-off.
fn ping_pong(cpu_a: usize, cpu_b: usize, rounds: u32) -> u64 {
    let turn = Arc::new(AtomicU32::new(0));
    let t2 = turn.clone();
    let other = std::thread::spawn(move || {
        let _ = set_affinity(&[cpu_b]);
        for i in 0..rounds {
            // Wait for our turn (odd values), then pass it back.
            loop {
                let v = t2.load(Ordering::Acquire);
                if v == 2 * i + 1 {
                    break;
                }
                atomic_wait::wait(&t2, v);
            }
            t2.store(2 * i + 2, Ordering::Release);
            atomic_wait::wake_one(&*t2);
        }
    });
    let _ = set_affinity(&[cpu_a]);
    let start = Instant::now();
    for i in 0..rounds {
        turn.store(2 * i + 1, Ordering::Release);
        atomic_wait::wake_one(&*turn);
        loop {
            let v = turn.load(Ordering::Acquire);
            if v == 2 * i + 2 {
                break;
            }
            atomic_wait::wait(&turn, v);
        }
    }
    let ns = start.elapsed().as_nanos() as u64;
    let _ = other.join();
    ns / (2 * rounds as u64)
}

fn touch(buf: &mut [u64]) -> u64 {
    let mut s = 0u64;
    for (i, x) in buf.iter_mut().enumerate().step_by(8) {
        *x = x.wrapping_add(i as u64);
        s = s.wrapping_add(*x);
    }
    std::hint::black_box(s)
}

/// Cold-after-migration pass minus a warm pass over a 256 KiB working set.
fn migration_cost(from: usize, to: usize) -> u64 {
    let mut buf = vec![0u64; 256 * 1024 / 8];
    let mut samples = Vec::new();
    for _ in 0..9 {
        let _ = set_affinity(&[from]);
        for _ in 0..3 {
            touch(&mut buf);
        }
        let t = Instant::now();
        touch(&mut buf);
        let warm = t.elapsed().as_nanos() as u64;
        let _ = set_affinity(&[to]);
        let t = Instant::now();
        touch(&mut buf);
        let cold = t.elapsed().as_nanos() as u64;
        samples.push(cold.saturating_sub(warm));
    }
    median(samples)
}

/// CONFIG_HZ of the running kernel, from /boot/config-<release> or
/// /proc/config.gz.
fn kernel_tick() -> (u64, String) {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let boot = format!("/boot/config-{}", release.trim());
    let from_gz = || -> Option<String> {
        use std::io::Read;
        let f = std::fs::File::open("/proc/config.gz").ok()?;
        let mut text = String::new();
        flate2::read::GzDecoder::new(f)
            .read_to_string(&mut text)
            .ok()?;
        Some(text)
    };
    let sources = [
        (boot.clone(), std::fs::read_to_string(&boot).ok()),
        ("/proc/config.gz".to_string(), from_gz()),
    ];
    for (path, text) in sources {
        let Some(text) = text else { continue };
        for line in text.lines() {
            let hz = line
                .strip_prefix("CONFIG_HZ=")
                .and_then(|v| v.trim().parse::<u64>().ok());
            if let Some((hz, ns)) =
                hz.and_then(|hz| 1_000_000_000u64.checked_div(hz).map(|ns| (hz, ns)))
            {
                return (ns, format!("CONFIG_HZ={hz} in {path}"));
            }
        }
    }
    (
        4_000_000,
        "assumption: CONFIG_HZ=250 (no kernel config found)".into(),
    )
}

/// Runs every measurement (about a second). Restores the calling thread's
/// CPU mask afterwards.
pub fn measure() -> MachineCosts {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let spin = calibrate_spin();
    let (a, b) = (0, if cpus > 1 { 1 } else { 0 });
    let cs = median((0..5).map(|_| ping_pong(a, a, 2000)).collect());
    let wake = median((0..5).map(|_| ping_pong(a, b, 2000)).collect());
    let mig = if cpus > 1 { migration_cost(a, b) } else { 0 };
    let all: Vec<usize> = (0..cpus).collect();
    let _ = set_affinity(&all);
    let (tick_ns, tick_source) = kernel_tick();
    MachineCosts {
        cpus,
        spin,
        context_switch_ns: cs,
        wakeup_latency_ns: wake,
        migration_ns: mig,
        tick_ns,
        tick_source,
    }
}

impl MachineCosts {
    /// A topology file describing this machine: one cluster of identical
    /// cores whose unit of work is one microsecond of the calibrated busy loop.
    pub fn topology_toml(&self, name: &str) -> String {
        format!(
            r#"# This machine, measured by `colab calibrate`. Work units: 1 us of the
# calibrated busy loop ({spins:.1} iterations/us), so both rates are 1.0.
name = "{name}"

[[core_types]]
name = "host"
compute_rate = 1.0      # by definition of the work unit (calibrated busy loop)
memory_rate = 1.0       # by definition: native compute is the same busy loop
active_power_w = 0.0    # not measured (no power meter here)
idle_power_w = 0.0      # not measured

[[clusters]]
name = "host"
core_type = "host"
cores = {cpus}

[costs]
context_switch_ns = {cs}     # measured: futex ping-pong on one CPU, median of 5 x 2000
wakeup_latency_ns = {wake}   # measured: futex ping-pong across two CPUs, median of 5 x 2000
migration_local_ns = {mig}   # measured: 256 KiB working set re-warmed after a move, median of 9
migration_cross_ns = {mig}   # one cluster: same as local
tick_ns = {tick}             # {tick_source}
"#,
            spins = self.spin.spins_per_us,
            cpus = self.cpus,
            cs = self.context_switch_ns,
            wake = self.wakeup_latency_ns,
            mig = self.migration_ns,
            tick = self.tick_ns,
            tick_source = self.tick_source,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use colab_core::{CoreOrder, Topology};

    #[test]
    fn measures_and_writes_a_loadable_topology() {
        let m = measure();
        assert!(m.cpus >= 1);
        assert!(m.context_switch_ns > 0 && m.wakeup_latency_ns > 0);
        assert!(m.tick_ns >= 1_000_000 && m.tick_ns <= 10_000_000);
        let t = Topology::from_toml(&m.topology_toml("host"), CoreOrder::BigFirst).unwrap();
        assert_eq!(t.num_cores(), m.cpus);
        assert_eq!(t.costs.context_switch_ns, m.context_switch_ns);
        assert_eq!(t.costs.wakeup_latency_ns, m.wakeup_latency_ns);
    }
}
