//! Was the machine busy while a program was recorded? Other processes
//! competing for the CPUs stretch the recorded waits and runs, so replay of
//! such a trace is off by the competition (recordings on a loaded machine
//! ran 2-4 times longer than their replays). The recorder measures the CPU
//! time the rest of the machine used during the recording: the machine's
//! busy time (`/proc/stat`) less the recorder's own and its children's (perf
//! and the traced program, `getrusage`).

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// A recording is flagged busy when other processes used more than this
/// share of the machine's CPU time (assumption: chosen once, 10%, well above
/// the idle noise of a quiet machine's daemons).
pub const BUSY_SHARE: f64 = 0.10;
/// ... and at least this much CPU time in all, in ns (assumption: five of
/// `/proc/stat`'s 10 ms ticks, so a short recording is not flagged on the
/// counter's rounding).
pub const BUSY_MIN_NS: u64 = 50_000_000;

/// What the rest of the machine did during a recording (header field
/// `"others":{"cpu_ns":...,"share":...}`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Others {
    /// CPU time of every other process, in ns.
    pub cpu_ns: u64,
    /// That time as a share of the machine's CPU time over the recording.
    pub share: f64,
}

impl Others {
    pub fn busy(&self) -> bool {
        self.share > BUSY_SHARE && self.cpu_ns >= BUSY_MIN_NS
    }
}

/// CPU times at one moment, in ns.
#[derive(Clone, Copy, Debug)]
pub struct Snapshot {
    machine_busy: u64,
    ours: u64,
}

/// The machine's busy CPU time and ours (this process and its reaped
/// children), now; `None` where `/proc/stat` cannot be read.
pub fn snapshot() -> Option<Snapshot> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    Some(Snapshot {
        machine_busy: busy_ticks(&stat)? * 1_000_000_000 / u64::try_from(hz).ok()?.max(1),
        ours: rusage_ns(libc::RUSAGE_SELF) + rusage_ns(libc::RUSAGE_CHILDREN),
    })
}

/// Busy ticks of all CPUs from `/proc/stat`'s first line: user, nice,
/// system, irq, softirq and steal (idle and iowait are not busy; guest time
/// is already in user).
pub fn busy_ticks(stat: &str) -> Option<u64> {
    let line = stat.lines().next()?;
    let mut f = line.split_whitespace();
    if f.next()? != "cpu" {
        return None;
    }
    let v: Vec<u64> = f.map(|x| x.parse().ok()).collect::<Option<_>>()?;
    if v.len() < 8 {
        return None;
    }
    Some(v[0] + v[1] + v[2] + v[5] + v[6] + v[7])
}

fn rusage_ns(who: i32) -> u64 {
    // SAFETY: getrusage fills the zeroed struct we pass.
    let mut r: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(who, &mut r) } != 0 {
        return 0;
    }
    let tv = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1_000;
    tv(r.ru_utime) + tv(r.ru_stime)
}

/// The others' CPU time between two snapshots over `wall` on `cpus` CPUs.
pub fn others(before: Snapshot, after: Snapshot, wall: Duration, cpus: u32) -> Others {
    let busy = after.machine_busy.saturating_sub(before.machine_busy);
    let ours = after.ours.saturating_sub(before.ours);
    let cpu_ns = busy.saturating_sub(ours);
    let capacity = wall.as_nanos() as f64 * f64::from(cpus.max(1));
    Others {
        cpu_ns,
        share: if capacity > 0.0 {
            (cpu_ns as f64 / capacity).min(1.0)
        } else {
            0.0
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_ticks_count_everything_but_idle_and_iowait() {
        let stat = "cpu  100 5 20 1000 50 3 2 7 40 0\ncpu0 1 2 3 4 5 6 7 8 9 10\n";
        assert_eq!(busy_ticks(stat), Some(100 + 5 + 20 + 3 + 2 + 7));
        assert_eq!(busy_ticks("intr 1 2 3\n"), None);
        assert_eq!(busy_ticks("cpu 1 2 x 4 5 6 7 8\n"), None);
        assert_eq!(busy_ticks("cpu 1 2 3\n"), None);
        assert_eq!(busy_ticks(""), None);
    }

    #[test]
    fn others_are_the_machine_less_ours() {
        let s = |machine_busy, ours| Snapshot { machine_busy, ours };
        // 2 CPUs for 1 s; the machine was busy 1.2 s, we used 0.8 s.
        let o = others(
            s(0, 0),
            s(1_200_000_000, 800_000_000),
            Duration::from_secs(1),
            2,
        );
        assert_eq!(o.cpu_ns, 400_000_000);
        assert!((o.share - 0.2).abs() < 1e-12);
        assert!(o.busy());
        // Quiet: 10 ms of others in 1 s on 2 CPUs.
        let o = others(
            s(0, 0),
            s(810_000_000, 800_000_000),
            Duration::from_secs(1),
            2,
        );
        assert!(!o.busy(), "{o:?}");
        // A large share of a tiny recording is below the tick noise.
        let o = others(s(0, 0), s(20_000_000, 0), Duration::from_millis(10), 1);
        assert_eq!(o.share, 1.0);
        assert!(!o.busy());
        // Ours above the machine's (rounding): nobody else, not negative.
        let o = others(s(0, 0), s(100, 500), Duration::from_secs(1), 1);
        assert_eq!((o.cpu_ns, o.share), (0, 0.0));
    }
}
