//! What recording costs the recorded program, so replay can take it out.
//!
//! perf writes a sample for every traced context switch and system call
//! from inside the traced thread (or the switch path), so every recorded
//! CPU segment is longer than the same work untraced. Programs that switch
//! often (sched_yield loops, fine-grained hand-offs) would replay far too
//! slow. Before each recording the recorder runs two probe loops, each
//! plain and under the same `perf record` (alternated, median of three
//! pairs), and stores the difference per event in the trace header:
//!
//! - `switch`: extra CPU time per recorded run, each ended by a context
//!   switch (two threads pinned to one CPU calling `sched_yield`);
//! - `syscall`: extra CPU time per traced system call (its enter and exit
//!   samples), from a loop of FUTEX_WAKE calls on a word nobody waits on.
//!
//! "Extra" is measured as replay sees it: the CPU time inside the traced
//! probe's recorded runs less the plain probe's whole CPU time (getrusage,
//! start-up included on both sides).
//!
//! The probe loops run in a separate process (the `colab` binary's hidden
//! `trace-probe` subcommand), so they are traced exactly as programs are.

use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Barrier};

/// Tracing overhead per recorded event, in ns of CPU time of the traced
/// program (measured on the recording machine).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Overhead {
    /// Per context switch (the sched_switch sample and the switch records).
    pub switch: f64,
    /// Per traced system call (enter and exit samples).
    pub syscall: f64,
}

impl Overhead {
    /// A wake-up is one sample, where a system call is two: charged half a
    /// system call (assumption: samples cost alike; not measured apart).
    pub fn wakeup(&self) -> f64 {
        self.syscall / 2.0
    }
}

/// The probe loops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProbeKind {
    /// Two threads on one CPU calling sched_yield in turn.
    Yield,
    /// FUTEX_WAKE calls on an unwaited word.
    Syscall,
}

impl ProbeKind {
    pub fn name(self) -> &'static str {
        match self {
            ProbeKind::Yield => "yield",
            ProbeKind::Syscall => "syscall",
        }
    }
    pub fn parse(s: &str) -> Option<ProbeKind> {
        match s {
            "yield" => Some(ProbeKind::Yield),
            "syscall" => Some(ProbeKind::Syscall),
            _ => None,
        }
    }
    /// Iterations per probe run: long enough that perf's start-up does not
    /// matter, short enough for ~0.1-0.3 s traced on a 2-CPU VM (measured).
    pub fn iterations(self) -> u64 {
        match self {
            ProbeKind::Yield => 20_000,
            ProbeKind::Syscall => 50_000,
        }
    }
}

/// What one probe run reports: the process's CPU time (from its start)
/// and its events.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProbeResult {
    pub cpu_ns: u64,
    /// Context switches (yield) or system calls (syscall).
    pub events: u64,
}

impl ProbeResult {
    /// The line the probe process prints.
    pub fn to_line(self) -> String {
        format!("colab-probe cpu_ns={} events={}", self.cpu_ns, self.events)
    }
    pub fn from_line(text: &str) -> Option<ProbeResult> {
        let line = text.lines().find(|l| l.starts_with("colab-probe "))?;
        let field = |k: &str| {
            line.split_whitespace()
                .find_map(|w| w.strip_prefix(k)?.strip_prefix('='))
                .and_then(|v| v.parse().ok())
        };
        Some(ProbeResult {
            cpu_ns: field("cpu_ns")?,
            events: field("events")?,
        })
    }
}

struct Usage {
    cpu_ns: u64,
    switches: u64,
}

fn usage() -> Usage {
    // SAFETY: getrusage writes into the zeroed struct we pass.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        ru
    };
    let ns = |tv: libc::timeval| tv.tv_sec as u64 * 1_000_000_000 + tv.tv_usec as u64 * 1000;
    Usage {
        cpu_ns: ns(ru.ru_utime) + ns(ru.ru_stime),
        switches: (ru.ru_nvcsw + ru.ru_nivcsw) as u64,
    }
}

fn pin_to(cpu: usize) {
    // SAFETY: a zeroed cpu_set_t with one CPU set, for the calling thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

/// Runs one probe loop in this process (the probe subcommand calls this).
pub fn run_probe(kind: ProbeKind, iterations: u64) -> ProbeResult {
    match kind {
        ProbeKind::Yield => {
            // SAFETY: sched_getcpu has no preconditions.
            let cpu = unsafe { libc::sched_getcpu() }.max(0) as usize;
            let start = Arc::new(Barrier::new(2));
            let workers: Vec<_> = (0..2)
                .map(|_| {
                    let start = Arc::clone(&start);
                    std::thread::spawn(move || {
                        pin_to(cpu);
                        start.wait();
                        for _ in 0..iterations {
                            // SAFETY: sched_yield has no preconditions.
                            unsafe { libc::sched_yield() };
                        }
                    })
                })
                .collect();
            for w in workers {
                w.join().expect("probe thread");
            }
        }
        ProbeKind::Syscall => {
            let word = AtomicU32::new(0);
            for _ in 0..iterations {
                // SAFETY: FUTEX_WAKE on a valid, aligned word; no waiters.
                unsafe {
                    libc::syscall(
                        libc::SYS_futex,
                        word.as_ptr(),
                        libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
                        1,
                        std::ptr::null::<libc::timespec>(),
                        std::ptr::null::<u32>(),
                        0,
                    )
                };
            }
            word.store(1, Ordering::Relaxed);
        }
    }
    let after = usage();
    ProbeResult {
        cpu_ns: after.cpu_ns,
        events: match kind {
            ProbeKind::Yield => after.switches,
            ProbeKind::Syscall => iterations,
        },
    }
}

/// Per-event overhead from paired plain and traced probe runs: the median
/// over pairs of (traced - plain) CPU per event, never negative.
pub fn per_event(pairs: &[(ProbeResult, ProbeResult)]) -> f64 {
    let mut d: Vec<f64> = pairs
        .iter()
        .filter(|(p, t)| p.events > 0 && t.events > 0)
        .map(|(p, t)| t.cpu_ns as f64 / t.events as f64 - p.cpu_ns as f64 / p.events as f64)
        .collect();
    if d.is_empty() {
        return 0.0;
    }
    d.sort_by(f64::total_cmp);
    d[d.len() / 2].max(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_lines_round_trip() {
        let r = ProbeResult {
            cpu_ns: 123_456,
            events: 789,
        };
        assert_eq!(ProbeResult::from_line(&r.to_line()), Some(r));
        let noisy = format!("warning: something\n{}\n", r.to_line());
        assert_eq!(ProbeResult::from_line(&noisy), Some(r));
        assert_eq!(ProbeResult::from_line("cpu_ns=1 events=2"), None);
        assert_eq!(
            ProbeResult::from_line("colab-probe cpu_ns=x events=2"),
            None
        );
    }

    #[test]
    fn per_event_is_the_median_difference() {
        let r = |cpu_ns, events| ProbeResult { cpu_ns, events };
        let pairs = [
            (r(1000, 10), r(5000, 10)),  // +400/event
            (r(1000, 10), r(3000, 10)),  // +200/event
            (r(2000, 10), r(11000, 10)), // +900/event
        ];
        assert_eq!(per_event(&pairs), 400.0);
        // Counted per event on each side (switch counts differ).
        assert_eq!(per_event(&[(r(1000, 10), r(4000, 20))]), 100.0);
        // Noise can make traced faster: never a negative overhead.
        assert_eq!(per_event(&[(r(5000, 10), r(4000, 10))]), 0.0);
        assert_eq!(per_event(&[]), 0.0);
    }

    #[test]
    fn probes_count_their_events() {
        let y = run_probe(ProbeKind::Yield, 200);
        // Each yield with the other thread runnable on the same CPU
        // switches; some may find it not yet runnable.
        assert!(y.events >= 100, "{y:?}");
        assert!(y.cpu_ns > 0);
        let s = run_probe(ProbeKind::Syscall, 1000);
        assert_eq!(s.events, 1000);
    }
}
