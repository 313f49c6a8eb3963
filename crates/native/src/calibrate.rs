//! Measures the costs the simulator charges, on this machine: context switch,
//! wake-up latency, migration (cache refill) and the tick, and describes the
//! machine as a topology file. Measured once, never fitted to a workload.

use crate::{calibrate_spin, set_affinity, Calibration};
use colab_core::IdleExit;
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
    /// Deeper idle states, one per gap of [`IDLE_GAPS_NS`]: the median
    /// wake-up after the woken thread's CPU idled that long less the median
    /// after no gap (0 when not slower).
    pub idle_exit: Vec<IdleExit>,
    /// Extra time to re-warm a 256 KiB working set after moving to another CPU.
    pub migration_ns: u64,
    pub tick_ns: u64,
    /// Where the tick came from.
    pub tick_source: String,
    /// Interquartile range over median of each probe's repetitions.
    pub spread: Spread,
    /// The 1-minute load average when the probes started.
    pub load: Option<f64>,
    /// What makes these figures suspect (`check`); empty when none.
    pub warnings: Vec<String>,
}

/// Repetition spread of each probe: (p75 - p25) / median.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Spread {
    pub context_switch: f64,
    pub wakeup_latency: f64,
    pub migration: f64,
}

/// A probe's repetitions are noisy above this spread (assumption: chosen
/// once; a quiet machine's repetitions agree within a few percent).
pub const NOISY_SPREAD: f64 = 0.25;
/// A wake-up slower than this is implausible on a quiet machine (assumption:
/// 6-8 us quiet and 45-125 us loaded as reported for this host; 42-77 us
/// measured in the QEMU test VM with `colab-vmload costs`, 2026-11-24).
pub const SLOW_WAKEUP_NS: u64 = 30_000;
/// Busy: a load average above this share of the CPUs (assumption).
pub const BUSY_LOAD_PER_CPU: f64 = 0.5;
/// How long the woken thread's CPU idles before the wake-ups that probe
/// deeper idle states (assumption: chosen once to span cpuidle's usual
/// target residencies, tens of microseconds to milliseconds, and a guest's
/// halt-polling window; a barrier program's waits fall in this range).
pub const IDLE_GAPS_NS: [u64; 3] = [200_000, 1_000_000, 5_000_000];

/// Median time from a futex wake on `cpu_a` to the woken thread running on
/// `cpu_b`, when `cpu_b` has idled about `gap_ns` before it (the waker
/// spins that long after the sleeper blocked), over `rounds` wake-ups.
fn idle_wake(cpu_a: usize, cpu_b: usize, gap_ns: u64, rounds: u32) -> u64 {
    use std::sync::atomic::AtomicU64;
    let base = Instant::now();
    // u32::MAX until the sleeper is ready.
    let word = Arc::new(AtomicU32::new(u32::MAX));
    let woke_at = Arc::new(AtomicU64::new(0));
    let (w2, at2) = (word.clone(), woke_at.clone());
    let sleeper = std::thread::spawn(move || {
        let _ = set_affinity(&[cpu_b]);
        let mut lat = Vec::with_capacity(rounds as usize);
        w2.store(0, Ordering::Release);
        for i in 0..rounds {
            // At 2i: sleep until the waker stores 2i + 1, then answer 2i + 2.
            sleep_until(&w2, 2 * i + 1);
            let ran = base.elapsed().as_nanos() as u64;
            lat.push(ran.saturating_sub(at2.load(Ordering::Acquire)));
            w2.store(2 * i + 2, Ordering::Release);
        }
        lat
    });
    let _ = set_affinity(&[cpu_a]);
    for i in 0..rounds {
        while word.load(Ordering::Acquire) != 2 * i {
            std::hint::spin_loop();
        }
        // The sleeper blocks right after storing 2i; spin out the gap.
        let t = Instant::now();
        while (t.elapsed().as_nanos() as u64) < gap_ns + 20_000 {
            std::hint::spin_loop();
        }
        woke_at.store(base.elapsed().as_nanos() as u64, Ordering::Release);
        word.store(2 * i + 1, Ordering::Release);
        atomic_wait::wake_one(&*word);
        while word.load(Ordering::Acquire) != 2 * i + 2 {
            std::hint::spin_loop();
        }
    }
    let lat = sleeper.join().unwrap_or_default();
    robust(lat).0
}

/// The median and the spread (p75 - p25) / median of repetitions.
pub fn robust(mut v: Vec<u64>) -> (u64, f64) {
    v.sort_unstable();
    let q = |f: f64| v[((v.len() - 1) as f64 * f).round() as usize];
    let med = q(0.5);
    let iqr = q(0.75) - q(0.25);
    (
        med,
        if med > 0 {
            iqr as f64 / med as f64
        } else {
            0.0
        },
    )
}

/// Sleeps on the futex `word` until it holds `value`.
fn sleep_until(word: &AtomicU32, value: u32) {
    loop {
        let v = word.load(Ordering::Acquire);
        if v == value {
            return;
        }
        atomic_wait::wait(word, v);
    }
}

/// Two threads bounce a futex `rounds` times; returns ns per one-way hand-off.
fn ping_pong(cpu_a: usize, cpu_b: usize, rounds: u32) -> u64 {
    let turn = Arc::new(AtomicU32::new(0));
    let t2 = turn.clone();
    let other = std::thread::spawn(move || {
        let _ = set_affinity(&[cpu_b]);
        for i in 0..rounds {
            // Wait for our turn (odd values), then pass it back.
            sleep_until(&t2, 2 * i + 1);
            t2.store(2 * i + 2, Ordering::Release);
            atomic_wait::wake_one(&*t2);
        }
    });
    let _ = set_affinity(&[cpu_a]);
    let start = Instant::now();
    for i in 0..rounds {
        turn.store(2 * i + 1, Ordering::Release);
        atomic_wait::wake_one(&*turn);
        sleep_until(&turn, 2 * i + 2);
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

/// Cold-after-migration pass minus a warm pass over a 256 KiB working set,
/// nine times.
fn migration_samples(from: usize, to: usize) -> Vec<u64> {
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
    samples
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

/// Runs every measurement (about two seconds). Restores the calling thread's
/// CPU mask afterwards.
pub fn measure() -> MachineCosts {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let spin = calibrate_spin();
    let (a, b) = (0, if cpus > 1 { 1 } else { 0 });
    let load = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok());
    let (cs, cs_spread) = robust((0..9).map(|_| ping_pong(a, a, 2000)).collect());
    let (wake, wake_spread) = robust((0..9).map(|_| ping_pong(a, b, 2000)).collect());
    let idle_exit = if cpus > 1 {
        let at = |gap: u64| idle_wake(a, b, gap, (400_000_000 / (gap + 1_000_000)) as u32 + 50);
        let none = at(0);
        IDLE_GAPS_NS
            .iter()
            .map(|&g| IdleExit {
                after_ns: g,
                extra_ns: at(g).saturating_sub(none),
            })
            .collect()
    } else {
        Vec::new()
    };
    let (mig, mig_spread) = if cpus > 1 {
        robust(migration_samples(a, b))
    } else {
        (0, 0.0)
    };
    let all: Vec<usize> = (0..cpus).collect();
    let _ = set_affinity(&all);
    let (tick_ns, tick_source) = kernel_tick();
    let mut m = MachineCosts {
        cpus,
        spin,
        context_switch_ns: cs,
        wakeup_latency_ns: wake,
        idle_exit,
        migration_ns: mig,
        tick_ns,
        tick_source,
        spread: Spread {
            context_switch: cs_spread,
            wakeup_latency: wake_spread,
            migration: mig_spread,
        },
        load,
        warnings: Vec::new(),
    };
    m.warnings = m.check();
    m
}

impl MachineCosts {
    /// What makes the figures suspect: noisy repetitions, a busy machine,
    /// implausible values. Each warning says what and why.
    pub fn check(&self) -> Vec<String> {
        let mut w = Vec::new();
        if let Some(l) = self.load {
            if l > BUSY_LOAD_PER_CPU * self.cpus as f64 {
                w.push(format!(
                    "load average {l:.2} on {} CPUs: other work competed with the probes, so the costs are inflated; calibrate on a quiet machine",
                    self.cpus
                ));
            }
        }
        for (what, s) in [
            ("context switch", self.spread.context_switch),
            ("wake-up latency", self.spread.wakeup_latency),
            ("migration", self.spread.migration),
        ] {
            if s > NOISY_SPREAD {
                w.push(format!(
                    "{what} varied by {:.0}% between repetitions (interquartile range over median, limit {:.0}%): the machine is noisy",
                    s * 100.0,
                    NOISY_SPREAD * 100.0
                ));
            }
        }
        if self.wakeup_latency_ns > SLOW_WAKEUP_NS {
            w.push(format!(
                "wake-up latency {:.1} us is above the {:.0} us a quiet machine shows (a busy host or a VM)",
                self.wakeup_latency_ns as f64 / 1e3,
                SLOW_WAKEUP_NS as f64 / 1e3
            ));
        }
        if self.cpus > 1 && self.migration_ns == 0 {
            w.push(
                "migration cost 0 ns: re-warming 256 KiB after a move cost nothing measurable (shared caches, or noise), so the simulator will charge nothing for migrations".into(),
            );
        }
        w
    }

    /// A topology file describing this machine: one cluster of identical
    /// cores whose unit of work is one microsecond of the calibrated busy loop.
    pub fn topology_toml(&self, name: &str) -> String {
        let warnings: String = self
            .warnings
            .iter()
            .map(|w| format!("# warning: {w}\n"))
            .collect();
        let states: String = self
            .idle_exit
            .iter()
            .map(|s| {
                format!(
                    "  {{ after_ns = {}, extra_ns = {} }},\n",
                    s.after_ns, s.extra_ns
                )
            })
            .collect();
        format!(
            r#"{warnings}# This machine, measured by `colab calibrate`. Work units: 1 us of the
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
context_switch_ns = {cs}     # measured: futex ping-pong on one CPU, median of 9 x 2000 (spread {css:.0}%)
wakeup_latency_ns = {wake}   # measured: futex ping-pong across two CPUs, median of 9 x 2000 (spread {ws:.0}%)
# measured: the median futex wake-up after the woken thread's CPU idled about
# after_ns, less the median after no idle gap (deeper idle states)
idle_exit = [
{states}]
migration_local_ns = {mig}   # measured: 256 KiB working set re-warmed after a move, median of 9 (spread {ms:.0}%)
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
            css = self.spread.context_switch * 100.0,
            ws = self.spread.wakeup_latency * 100.0,
            ms = self.spread.migration * 100.0,
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
        assert_eq!(t.costs.idle_exit, m.idle_exit);
        if m.cpus > 1 {
            let gaps: Vec<u64> = m.idle_exit.iter().map(|s| s.after_ns).collect();
            assert_eq!(gaps, IDLE_GAPS_NS);
        }
        assert_eq!(m.warnings, m.check());
    }

    fn quiet() -> MachineCosts {
        MachineCosts {
            cpus: 4,
            spin: crate::Calibration {
                spins_per_us: 1000.0,
            },
            context_switch_ns: 3_000,
            wakeup_latency_ns: 7_000,
            idle_exit: vec![
                IdleExit {
                    after_ns: 200_000,
                    extra_ns: 9_000,
                },
                IdleExit {
                    after_ns: 1_000_000,
                    extra_ns: 22_000,
                },
            ],
            migration_ns: 2_000,
            tick_ns: 4_000_000,
            tick_source: "test".into(),
            spread: Spread {
                context_switch: 0.03,
                wakeup_latency: 0.05,
                migration: 0.2,
            },
            load: Some(0.3),
            warnings: Vec::new(),
        }
    }

    #[test]
    fn robust_statistics_of_repetitions() {
        // Nine values: median 50, p25 30, p75 70.
        let (m, s) = robust(vec![90, 10, 70, 30, 50, 60, 40, 20, 80]);
        assert_eq!(m, 50);
        assert!((s - 40.0 / 50.0).abs() < 1e-12, "{s}");
        assert_eq!(robust(vec![7; 9]), (7, 0.0));
        // Nearest rank of four (positions 0..3): median at 1.5 -> 2, p25 at
        // 0.75 -> 1, p75 at 2.25 -> 2.
        let (m, s) = robust(vec![10, 20, 30, 40]);
        assert_eq!(m, 30);
        assert!((s - (30.0 - 20.0) / 30.0).abs() < 1e-12, "{s}");
        assert_eq!(robust(vec![0, 0, 0]), (0, 0.0));
        // One wild repetition moves neither.
        let (m, s) = robust(vec![100, 101, 99, 100, 100, 102, 98, 100, 9_000]);
        assert_eq!(m, 100);
        assert!(s < 0.05, "{s}");
    }

    #[test]
    fn suspect_figures_are_warned_about_and_written_to_the_file() {
        assert!(quiet().check().is_empty(), "{:?}", quiet().check());
        type Change = fn(&mut MachineCosts);
        let cases: [(Change, &str); 4] = [
            (|m| m.load = Some(2.5), "load average 2.50 on 4 CPUs"),
            (
                |m| m.spread.wakeup_latency = 0.4,
                "wake-up latency varied by 40%",
            ),
            (|m| m.wakeup_latency_ns = 85_000, "wake-up latency 85.0 us"),
            (|m| m.migration_ns = 0, "migration cost 0 ns"),
        ];
        for (make, want) in cases {
            let mut m = quiet();
            make(&mut m);
            let w = m.check();
            assert_eq!(w.len(), 1, "{w:?}");
            assert!(w[0].contains(want), "{want}: {w:?}");
            m.warnings = w;
            let toml = m.topology_toml("x");
            assert!(toml.starts_with("# warning: "), "{toml}");
            Topology::from_toml(&toml, CoreOrder::BigFirst).unwrap();
        }
        // One CPU: no migration to measure, no warning for it.
        let mut m = quiet();
        m.cpus = 1;
        m.migration_ns = 0;
        assert!(m.check().is_empty());
    }
}
