//! Workloads for the sched_ext test VM (`colab-vmload`).
//!
//! Each workload either runs for a fixed time (`secs`) and reports how many
//! operations it completed, or does a fixed amount of work (`ops`) and reports
//! how long it took. Results are [`Report`]s, printed as one JSON line.

use std::hint::black_box;
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Barrier, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// The result of one workload run: printed as one JSON line.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    pub workload: &'static str,
    pub threads: usize,
    /// Operations completed (the meaning depends on the workload).
    pub ops: u64,
    pub elapsed_s: f64,
    /// Extra named counters.
    pub extra: Vec<(&'static str, u64)>,
}

impl Report {
    pub fn to_json(&self) -> String {
        let mut m = serde_json::Map::new();
        m.insert("workload".into(), self.workload.into());
        m.insert("threads".into(), self.threads.into());
        m.insert("ops".into(), self.ops.into());
        m.insert(
            "elapsed_s".into(),
            serde_json::Value::from((self.elapsed_s * 1e6).round() / 1e6),
        );
        for (k, v) in &self.extra {
            m.insert((*k).into(), (*v).into());
        }
        m.insert("ok".into(), true.into());
        serde_json::Value::Object(m).to_string()
    }
}

/// Busy CPU work for about `d` (wall clock), returning a value so the work
/// cannot be optimised away.
pub fn spin_for(d: Duration) -> u64 {
    let start = Instant::now();
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    loop {
        for _ in 0..256 {
            x = black_box(x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1));
        }
        if start.elapsed() >= d {
            return x;
        }
    }
}

/// A tiny deterministic pseudo-random generator (no dependency needed).
#[derive(Debug, Clone)]
pub struct Lcg(u64);

impl Lcg {
    pub fn new(seed: u64) -> Self {
        Lcg(seed
            .wrapping_mul(2_862_933_555_777_941_757)
            .wrapping_add(3_037_000_493))
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 11
    }
    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        assert!(lo <= hi);
        lo + self.next_u64() % (hi - lo + 1)
    }
}

fn spawn_named<T: Send + 'static>(
    name: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> thread::JoinHandle<T> {
    thread::Builder::new()
        .name(name.to_string())
        .spawn(f)
        .unwrap_or_else(|e| panic!("spawning thread {name}: {e}"))
}

/// One `lockholder` thread holds a mutex for long critical sections (`hold`)
/// while `waiters` `lockwaiter` threads keep trying to take it and do short
/// work: the holder is the bottleneck that keeps the others in futex_wait.
pub fn lock(waiters: usize, secs: f64, hold: Duration) -> Report {
    let m = Arc::new(Mutex::new(0u64));
    let stop = Arc::new(AtomicBool::new(false));
    let start = Instant::now();
    let holder = {
        let (m, stop) = (m.clone(), stop.clone());
        spawn_named("lockholder", move || {
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                {
                    let mut g = m.lock().unwrap();
                    *g = g.wrapping_add(spin_for(hold));
                }
                n += 1;
                // A short gap outside the lock so waiters can get it at times.
                spin_for(hold / 40);
            }
            n
        })
    };
    let ws: Vec<_> = (0..waiters)
        .map(|_| {
            let (m, stop) = (m.clone(), stop.clone());
            spawn_named("lockwaiter", move || {
                let mut n = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    {
                        let mut g = m.lock().unwrap();
                        *g = g.wrapping_add(spin_for(Duration::from_micros(20)));
                    }
                    n += 1;
                    spin_for(Duration::from_micros(100));
                }
                n
            })
        })
        .collect();
    thread::sleep(Duration::from_secs_f64(secs));
    stop.store(true, Ordering::Relaxed);
    let holder_ops = holder.join().expect("lockholder panicked");
    let waiter_ops: u64 = ws
        .into_iter()
        .map(|h| h.join().expect("lockwaiter panicked"))
        .sum();
    Report {
        workload: "lock",
        threads: waiters + 1,
        ops: holder_ops + waiter_ops,
        elapsed_s: start.elapsed().as_secs_f64(),
        extra: vec![("holder_ops", holder_ops), ("waiter_ops", waiter_ops)],
    }
}

/// `threads` threads meet at a barrier after each phase; thread `i` works
/// `(i + 1) * unit` per phase, so the others wait for the slowest one.
pub fn barrier(threads: usize, secs: f64, unit: Duration) -> Report {
    assert!(threads > 0);
    let b = Arc::new(Barrier::new(threads));
    let stop = Arc::new(AtomicBool::new(false));
    let deadline = Duration::from_secs_f64(secs);
    let start = Instant::now();
    let hs: Vec<_> = (0..threads)
        .map(|i| {
            let (b, stop) = (b.clone(), stop.clone());
            spawn_named("barrier", move || {
                let mut phases = 0u64;
                loop {
                    spin_for(unit * (i as u32 + 1));
                    if b.wait().is_leader() && start.elapsed() >= deadline {
                        stop.store(true, Ordering::Relaxed);
                    }
                    // Everyone sees the leader's decision after this second wait.
                    b.wait();
                    phases += 1;
                    if stop.load(Ordering::Relaxed) {
                        return phases;
                    }
                }
            })
        })
        .collect();
    let phases: Vec<u64> = hs
        .into_iter()
        .map(|h| h.join().expect("barrier thread panicked"))
        .collect();
    Report {
        workload: "barrier",
        threads,
        ops: phases[0],
        elapsed_s: start.elapsed().as_secs_f64(),
        extra: vec![],
    }
}

/// `threads` CPU-bound `hog` threads; ops are 1 ms chunks of work.
pub fn hogs(threads: usize, secs: f64) -> Report {
    timed_threads("hogs", "hog", threads, secs, || {
        spin_for(Duration::from_millis(1));
        1
    })
}

/// Size of the region a `faulter` maps, touches and unmaps per operation.
const FAULT_REGION: usize = 256 * 1024;
const PAGE: usize = 4096;

/// Maps a fresh anonymous region, writes one byte per page (a page fault
/// each) and unmaps it. Returns the pages touched.
fn fault_pages() -> u64 {
    // SAFETY: a private anonymous mapping of FAULT_REGION bytes, written
    // only inside its bounds and unmapped before returning.
    unsafe {
        let p = libc::mmap(
            std::ptr::null_mut(),
            FAULT_REGION,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        assert!(p != libc::MAP_FAILED, "mmap of {FAULT_REGION} bytes failed");
        let base = p as *mut u8;
        for off in (0..FAULT_REGION).step_by(PAGE) {
            std::ptr::write_volatile(base.add(off), 1);
        }
        libc::munmap(p, FAULT_REGION);
    }
    (FAULT_REGION / PAGE) as u64
}

/// `threads` `faulter` threads that map fresh memory, touch every page and
/// unmap it, in a loop: a page fault per 4 KiB, which a software counter
/// sees (the VM test's counter phase); ops are pages touched.
pub fn faults(threads: usize, secs: f64) -> Report {
    timed_threads("faults", "faulter", threads, secs, fault_pages)
}

/// `threads` threads named `name` running `op` until `secs` pass; ops are
/// the sum of what `op` returned.
fn timed_threads(
    workload: &'static str,
    name: &str,
    threads: usize,
    secs: f64,
    op: fn() -> u64,
) -> Report {
    let stop = Arc::new(AtomicBool::new(false));
    let start = Instant::now();
    let hs: Vec<_> = (0..threads)
        .map(|_| {
            let stop = stop.clone();
            spawn_named(name, move || {
                let mut n = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    n += op();
                }
                n
            })
        })
        .collect();
    thread::sleep(Duration::from_secs_f64(secs));
    stop.store(true, Ordering::Relaxed);
    let ops = hs
        .into_iter()
        .map(|h| h.join().unwrap_or_else(|_| panic!("{name} panicked")))
        .sum();
    Report {
        workload,
        threads,
        ops,
        elapsed_s: start.elapsed().as_secs_f64(),
        extra: vec![],
    }
}

/// `threads` `sleeper` threads that sleep 1-5 ms and compute ~200 us.
pub fn sleepers(threads: usize, secs: f64) -> Report {
    let deadline = Duration::from_secs_f64(secs);
    let start = Instant::now();
    let hs: Vec<_> = (0..threads)
        .map(|i| {
            spawn_named("sleeper", move || {
                let mut rng = Lcg::new(i as u64 + 1);
                let mut n = 0u64;
                while start.elapsed() < deadline {
                    thread::sleep(Duration::from_millis(rng.range(1, 5)));
                    spin_for(Duration::from_micros(200));
                    n += 1;
                }
                n
            })
        })
        .collect();
    let ops = hs
        .into_iter()
        .map(|h| h.join().expect("sleeper panicked"))
        .sum();
    Report {
        workload: "sleepers",
        threads,
        ops,
        elapsed_s: start.elapsed().as_secs_f64(),
        extra: vec![],
    }
}

/// Spawns and joins batches of `threads` short-lived threads in a loop, and
/// (if `exe` is given) runs `exe noop` as a child process once per batch.
pub fn churn(threads: usize, secs: f64, exe: Option<&std::path::Path>) -> Report {
    let deadline = Duration::from_secs_f64(secs);
    let start = Instant::now();
    let (mut spawned, mut procs, mut rounds) = (0u64, 0u64, 0u64);
    while start.elapsed() < deadline {
        let hs: Vec<_> = (0..threads)
            .map(|i| {
                spawn_named("churn", move || {
                    spin_for(Duration::from_micros(50 * (i as u64 % 4 + 1)))
                })
            })
            .collect();
        for h in hs {
            h.join().expect("churn thread panicked");
            spawned += 1;
        }
        if let Some(exe) = exe {
            let st = Command::new(exe)
                .arg("noop")
                .status()
                .unwrap_or_else(|e| panic!("running {} noop: {e}", exe.display()));
            assert!(st.success(), "child {} noop failed: {st}", exe.display());
            procs += 1;
        }
        rounds += 1;
    }
    Report {
        workload: "churn",
        threads,
        ops: rounds,
        elapsed_s: start.elapsed().as_secs_f64(),
        extra: vec![("threads_spawned", spawned), ("processes", procs)],
    }
}

/// `pairs` pairs of threads ping-pong a counter over channels, `ops` round
/// trips per pair; reports the time taken.
pub fn msg(pairs: usize, ops: u64) -> Report {
    let start = Instant::now();
    let hs: Vec<_> = (0..pairs)
        .flat_map(|_| {
            let (to_pong, pong_rx) = mpsc::channel::<u64>();
            let (to_ping, ping_rx) = mpsc::channel::<u64>();
            let ping = spawn_named("msg-ping", move || {
                let mut last = 0;
                for i in 0..ops {
                    to_pong.send(i).expect("pong hung up");
                    last = ping_rx.recv().expect("pong hung up");
                }
                last
            });
            let pong = spawn_named("msg-pong", move || {
                let mut n = 0;
                while let Ok(v) = pong_rx.recv() {
                    if to_ping.send(v + 1).is_err() {
                        break;
                    }
                    n += 1;
                }
                n
            });
            [ping, pong]
        })
        .collect();
    let mut round_trips = 0;
    for (i, h) in hs.into_iter().enumerate() {
        let v = h.join().expect("msg thread panicked");
        if i % 2 == 1 {
            round_trips += v;
        }
    }
    Report {
        workload: "msg",
        threads: 2 * pairs,
        ops: round_trips,
        elapsed_s: start.elapsed().as_secs_f64(),
        extra: vec![],
    }
}

/// `threads` threads each take one of `locks` mutexes `ops` times (chosen
/// pseudo-randomly) for a short critical section; reports the time taken.
/// The returned `ops` is the sum of the counters under the locks.
pub fn futex(threads: usize, locks: usize, ops: u64) -> Report {
    assert!(locks > 0);
    let ms: Arc<Vec<Mutex<u64>>> = Arc::new((0..locks).map(|_| Mutex::new(0)).collect());
    let spins = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let hs: Vec<_> = (0..threads)
        .map(|i| {
            let (ms, spins) = (ms.clone(), spins.clone());
            spawn_named("futex", move || {
                let mut rng = Lcg::new(i as u64 + 7);
                let mut x = 0u64;
                for _ in 0..ops {
                    let k = rng.range(0, ms.len() as u64 - 1) as usize;
                    let mut g = ms[k].lock().unwrap();
                    *g += 1;
                    for _ in 0..200 {
                        x = black_box(x.wrapping_mul(31).wrapping_add(*g));
                    }
                    drop(g);
                    for _ in 0..400 {
                        x = black_box(x.wrapping_mul(17).wrapping_add(1));
                    }
                }
                spins.fetch_add(x & 1, Ordering::Relaxed);
            })
        })
        .collect();
    for h in hs {
        h.join().expect("futex thread panicked");
    }
    let elapsed = start.elapsed().as_secs_f64();
    let total: u64 = ms.iter().map(|m| *m.lock().unwrap()).sum();
    Report {
        workload: "futex",
        threads,
        ops: total,
        elapsed_s: elapsed,
        extra: vec![],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spin_for_takes_at_least_the_duration() {
        let t = Instant::now();
        spin_for(Duration::from_millis(5));
        assert!(t.elapsed() >= Duration::from_millis(5));
    }

    #[test]
    fn lcg_range_stays_in_bounds_and_varies() {
        let mut r = Lcg::new(3);
        let v: Vec<u64> = (0..1000).map(|_| r.range(1, 5)).collect();
        assert!(v.iter().all(|x| (1..=5).contains(x)));
        for want in 1..=5 {
            assert!(v.contains(&want), "{want} never drawn");
        }
    }

    #[test]
    fn fixed_work_workloads_do_exactly_their_ops() {
        assert_eq!(msg(2, 500).ops, 1000);
        assert_eq!(futex(4, 2, 300).ops, 1200);
    }

    #[test]
    fn timed_workloads_complete_and_count() {
        let l = lock(2, 0.1, Duration::from_millis(1));
        // (whether the waiters get the unfair mutex in 0.1 s depends on the machine's load)
        assert!(l.extra[0].1 > 0, "{l:?}");
        assert_eq!(l.ops, l.extra[0].1 + l.extra[1].1);
        assert!(barrier(3, 0.05, Duration::from_micros(200)).ops > 0);
        assert!(hogs(2, 0.05).ops > 0);
        let f = faults(2, 0.05);
        // Whole regions only: 64 pages each.
        assert!(f.ops > 0 && f.ops.is_multiple_of(64), "{f:?}");
        assert!(sleepers(2, 0.05).ops > 0);
        let c = churn(3, 0.05, None);
        assert_eq!(c.extra[0].1, 3 * c.ops);
    }

    #[test]
    fn report_is_one_json_line() {
        let r = Report {
            workload: "x",
            threads: 2,
            ops: 5,
            elapsed_s: 1.5,
            extra: vec![("a", 1)],
        };
        let s = r.to_json();
        assert!(!s.contains('\n'));
        let v: serde_json::Value = serde_json::from_str(&s).unwrap();
        assert_eq!(v["workload"], "x");
        assert_eq!(v["ops"], 5);
        assert_eq!(v["a"], 1);
        assert_eq!(v["ok"], true);
    }
}
