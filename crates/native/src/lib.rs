//! Runs a workload spec natively: every thread of the spec is a real OS
//! thread, compute is calibrated busy work, and synchronization goes through
//! futexes ([`futex`]), so the machine's own scheduler decides. The result has
//! the same shape as a simulation's (per-program turnaround), which is what
//! lets the simulator be checked against reality.
//!
//! Work units: the spec's compute amounts are microseconds on the reference
//! core. Natively, one unit is one microsecond of this machine's busy loop as
//! measured by [`calibrate_spin`]; a topology describing this machine
//! therefore has one core type with both rates 1.0.

pub mod calibrate;
pub mod emulate;
pub mod futex;

pub use emulate::{Emulation, EmulationError};

use colab_workload::control::Loops;
use colab_workload::{IndexSel, Op, Program, Workload};
use rand::{Rng, SeedableRng};
use serde::Serialize;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How fast this machine's busy loop runs.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Calibration {
    /// Busy-loop iterations per microsecond on one core.
    pub spins_per_us: f64,
}

/// One iteration of the busy loop: a xorshift64 step, a chain of dependent
/// shifts and xors that touches no memory. (An LCG step was used until
/// 2026-11-29; its speed depended on how the binary was built, 42,000
/// iterations per us in a release test build against the release CLI's
/// 4,400-7,000, likely because unrolled LCG steps fold into fewer
/// multiply-adds; xorshift steps do not fold. Calibration and workloads
/// run this same function, so only its rate, measured at run time, matters.)
#[inline(never)]
pub fn spin(iters: u64) {
    let mut x = std::hint::black_box(0x9E37_79B9_7F4A_7C15u64);
    for _ in 0..iters {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    std::hint::black_box(x);
}

/// Measures the busy loop: the fastest of several timed runs (the least
/// disturbed by other load) of about 20 ms each.
pub fn calibrate_spin() -> Calibration {
    // Warm up first (about 0.2 s): a CPU coming out of idle runs at a lower
    // clock for a while, and the workloads run sustained.
    let probe = 200_000u64;
    let warm = Instant::now();
    let mut rough = 0.0;
    while warm.elapsed() < Duration::from_millis(200) {
        let t = Instant::now();
        spin(probe);
        rough = probe as f64 / t.elapsed().as_secs_f64().max(1e-9) / 1e6;
    }
    let iters = (rough * 20_000.0).max(1e5) as u64;
    let best = (0..7)
        .map(|_| {
            let t = Instant::now();
            spin(iters);
            t.elapsed().as_secs_f64()
        })
        .fold(f64::MAX, f64::min);
    Calibration {
        spins_per_us: iters as f64 / (best * 1e6),
    }
}

#[derive(Clone, Debug)]
pub struct NativeOptions {
    /// CPUs the workload may use (taskset-style); None = all.
    pub cpus: Option<Vec<usize>>,
    pub reps: u32,
    pub seed: u64,
    pub calibration: Calibration,
    /// Give up if one repetition takes longer than this.
    pub timeout: Duration,
    /// Emulate an asymmetric machine: compute runs at each CPU's core-type
    /// rate ([`emulate`]). None: every CPU at the reference rate.
    pub emulate: Option<Arc<Emulation>>,
}

#[derive(Debug, thiserror::Error)]
pub enum NativeError {
    #[error("repetition {rep} did not finish within {secs} s (the workload may deadlock natively); its threads are left running, so the process must exit")]
    Timeout { rep: u32, secs: u64 },
    #[error("cannot restrict to CPUs {cpus:?}: {source}")]
    Affinity {
        cpus: Vec<usize>,
        source: std::io::Error,
    },
    #[error("cannot start a thread: {0}")]
    Spawn(std::io::Error),
}

/// Turnarounds of one program over the repetitions.
#[derive(Clone, Debug, Serialize)]
pub struct ProgramRuns {
    pub name: String,
    pub threads: u32,
    /// Turnaround per repetition in calibrated time: wall time scaled by the
    /// busy loop's speed during that repetition over its calibrated speed
    /// (see [`run`]).
    pub samples_ns: Vec<u64>,
    /// Wall-clock turnaround per repetition, unscaled.
    pub raw_ns: Vec<u64>,
    /// Busy-loop speed measured during each repetition (iterations/us of thread CPU time).
    pub rate_during: Vec<f64>,
    /// Busy-loop iterations the program spun per repetition (on an
    /// emulated machine: more on slower CPUs).
    pub iterations: Vec<u64>,
}

impl ProgramRuns {
    pub fn median_ns(&self) -> u64 {
        let mut v = self.samples_ns.clone();
        v.sort_unstable();
        let n = v.len();
        if n == 0 {
            0
        } else if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2
        }
    }
    pub fn min_ns(&self) -> u64 {
        self.samples_ns.iter().copied().min().unwrap_or(0)
    }
    pub fn max_ns(&self) -> u64 {
        self.samples_ns.iter().copied().max().unwrap_or(0)
    }
    /// (max - min) / median: the run-to-run spread.
    pub fn spread(&self) -> f64 {
        let m = self.median_ns();
        if m == 0 {
            0.0
        } else {
            (self.max_ns() - self.min_ns()) as f64 / m as f64
        }
    }
}

/// Runs `w` natively `opts.reps` times.
///
/// The speed of a shared or virtual machine drifts (here: +-20% within
/// seconds, from host load and clock changes), so a busy loop calibrated once
/// does not run at the calibrated speed later. Every compute segment measures
/// the thread CPU time it took, and each repetition's turnaround is scaled by
/// (iterations / CPU time during the run) / calibrated speed: the time the
/// run would have taken had the machine kept its calibrated speed. Waiting
/// for a CPU, synchronization and sleeps are not CPU time of the spinning
/// thread, so they are not rescaled away.
pub fn run(w: &Workload, opts: &NativeOptions) -> Result<Vec<ProgramRuns>, NativeError> {
    let mut out: Vec<ProgramRuns> = w
        .programs
        .iter()
        .map(|p| ProgramRuns {
            name: p.name.clone(),
            threads: p.total_threads,
            samples_ns: Vec::new(),
            raw_ns: Vec::new(),
            rate_during: Vec::new(),
            iterations: Vec::new(),
        })
        .collect();
    for rep in 0..opts.reps.max(1) {
        let (times, rate) = run_once(w, opts, opts.seed.wrapping_add(rep as u64), rep)?;
        let scale = rate.map_or(1.0, |r| r / opts.calibration.spins_per_us);
        for (o, (t, spun)) in out.iter_mut().zip(times) {
            o.raw_ns.push(t);
            o.iterations.push(spun);
            o.samples_ns.push((t as f64 * scale) as u64);
            o.rate_during
                .push(rate.unwrap_or(opts.calibration.spins_per_us));
        }
    }
    Ok(out)
}

/// CPU time of the calling thread, ns.
fn thread_cpu_ns() -> u64 {
    // SAFETY: clock_gettime writes only into the timespec we pass.
    unsafe {
        let mut ts: libc::timespec = std::mem::zeroed();
        libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts);
        ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
    }
}

/// Iterations and thread CPU time spent in busy loops during one repetition.
#[derive(Default)]
struct SpinMeter {
    iters: AtomicU64,
    cpu_ns: AtomicU64,
}

/// Everything the threads of one program share.
struct Shared {
    prog: Program,
    mutexes: Vec<futex::Mutex>,
    barriers: Vec<futex::Barrier>,
    conds: Vec<futex::Cond>,
    queues: Vec<futex::Queue>,
    groups: Vec<futex::Group>,
    /// One-shot events of replayed traces (0 = not yet, 1 = happened).
    events: Vec<AtomicU32>,
    /// Threads spawned so far per group (gives each its index).
    spawned: Vec<AtomicU32>,
    live: AtomicU32,
    t0: Instant,
    end_ns: AtomicU64,
    /// Busy-loop iterations this program spun.
    spun: AtomicU64,
    spins_per_us: f64,
    emulate: Option<Arc<Emulation>>,
    seed: u64,
    handles: std::sync::Mutex<Vec<JoinHandle<()>>>,
    meter: Arc<SpinMeter>,
}

/// Restricts the calling thread to `cpus` (threads it creates inherit it).
pub fn set_affinity(cpus: &[usize]) -> std::io::Result<()> {
    // SAFETY: cpu_set_t is plain data; CPU_ZERO/CPU_SET only write inside it,
    // and sched_setaffinity reads it for the calling thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_ZERO(&mut set);
        for &c in cpus {
            if c >= libc::CPU_SETSIZE as usize {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    format!("CPU {c} out of range"),
                ));
            }
            libc::CPU_SET(c, &mut set);
        }
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Per program (turnaround ns, iterations spun), and the busy loop's speed
/// during the repetition.
type Once = (Vec<(u64, u64)>, Option<f64>);

fn run_once(w: &Workload, opts: &NativeOptions, seed: u64, rep: u32) -> Result<Once, NativeError> {
    let meter = Arc::new(SpinMeter::default());
    if let Some(cpus) = &opts.cpus {
        // Threads inherit the creator's mask, so setting it here covers all.
        set_affinity(cpus).map_err(|e| NativeError::Affinity {
            cpus: cpus.clone(),
            source: e,
        })?;
    }
    let t0 = Instant::now();
    let shared: Vec<Arc<Shared>> = w
        .programs
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let mut mutexes = Vec::new();
            mutexes.resize_with(p.num_mutexes as usize, futex::Mutex::default);
            let mut conds = Vec::new();
            conds.resize_with(p.conds.len(), futex::Cond::default);
            let mut groups = Vec::new();
            groups.resize_with(p.groups.len(), futex::Group::default);
            Arc::new(Shared {
                prog: p.clone(),
                mutexes,
                barriers: p
                    .barriers
                    .iter()
                    .map(|(_, n)| futex::Barrier::new(*n))
                    .collect(),
                conds,
                queues: p
                    .queues
                    .iter()
                    .map(|q| futex::Queue::new(q.capacity, q.producers))
                    .collect(),
                groups,
                events: (0..p.num_events).map(|_| AtomicU32::new(0)).collect(),
                spawned: (0..p.groups.len()).map(|_| AtomicU32::new(0)).collect(),
                live: AtomicU32::new(1),
                t0,
                end_ns: AtomicU64::new(0),
                spun: AtomicU64::new(0),
                spins_per_us: opts.calibration.spins_per_us,
                emulate: opts.emulate.clone(),
                seed: seed.wrapping_mul(1000).wrapping_add(i as u64),
                handles: std::sync::Mutex::new(Vec::new()),
                meter: meter.clone(),
            })
        })
        .collect();
    let mut mains = Vec::new();
    for sh in &shared {
        sh.groups[0].add(1);
        sh.spawned[0].store(1, Ordering::Relaxed);
        let s = sh.clone();
        mains.push(
            std::thread::Builder::new()
                .name(format!("{}/main", sh.prog.name))
                .spawn(move || thread_main(s, 0, 0))
                .map_err(NativeError::Spawn)?,
        );
    }
    // Wait for every program, with a deadline: a native deadlock cannot be
    // broken, only reported.
    let deadline = Instant::now() + opts.timeout;
    while shared.iter().any(|s| s.live.load(Ordering::Acquire) > 0) {
        if Instant::now() > deadline {
            return Err(NativeError::Timeout {
                rep,
                secs: opts.timeout.as_secs(),
            });
        }
        std::thread::sleep(Duration::from_micros(500));
    }
    for h in mains {
        let _ = h.join();
    }
    for sh in &shared {
        let hs = std::mem::take(&mut *sh.handles.lock().unwrap_or_else(|e| e.into_inner()));
        for h in hs {
            let _ = h.join();
        }
    }
    let (iters, cpu) = (
        meter.iters.load(Ordering::Acquire),
        meter.cpu_ns.load(Ordering::Acquire),
    );
    // Too little spinning to measure (e.g. a sleep-only workload): no rescaling.
    let rate = (cpu > 1_000_000).then(|| iters as f64 / (cpu as f64 / 1000.0));
    Ok((
        shared
            .iter()
            .map(|s| {
                (
                    s.end_ns.load(Ordering::Acquire),
                    s.spun.load(Ordering::Acquire),
                )
            })
            .collect(),
        rate,
    ))
}

fn thread_main(sh: Arc<Shared>, group: u32, index: u32) {
    interpret(&sh, group, index);
    sh.groups[group as usize].exit();
    if sh.live.fetch_sub(1, Ordering::AcqRel) == 1 {
        sh.end_ns
            .store(sh.t0.elapsed().as_nanos() as u64, Ordering::Release);
    }
}

/// The same interpreter as the simulator's, but every operation really happens.
fn interpret(sh: &Arc<Shared>, group: u32, index: u32) {
    let prog = &sh.prog;
    let ops = &prog.groups[group as usize].ops;
    let mut rng =
        rand_pcg::Pcg64Mcg::seed_from_u64(sh.seed ^ ((group as u64) << 32 | index as u64));
    let mut held: Vec<(u32, u32)> = Vec::new();
    let mut loops = Loops::default();
    // Each timer's last firing (the thread's start until its first use).
    let created = Instant::now();
    let mut timers: Vec<Option<Instant>> = vec![None; prog.timers.len()];
    let mut pc = 0usize;
    while let Some(op) = ops.get(pc) {
        pc += 1;
        match *op {
            Op::Compute {
                work,
                mem_frac,
                cv,
                imbalance,
            } => {
                let mut w = work / 1000.0; // ns of reference work -> us
                if imbalance > 0.0 {
                    let size = sh.spawned[group as usize].load(Ordering::Relaxed);
                    if size > 1 {
                        let k = index as f64 / (size - 1) as f64;
                        w *= 1.0 + imbalance * (2.0 * k - 1.0);
                    }
                }
                if cv > 0.0 {
                    let a = cv * 3f64.sqrt();
                    w *= 1.0 + rng.gen_range(-a..=a);
                }
                if w > 0.0 {
                    let c0 = thread_cpu_ns();
                    let iters = match &sh.emulate {
                        Some(e) => {
                            e.compute(w, mem_frac, sh.spins_per_us, emulate::current_cpu, spin)
                        }
                        None => {
                            let iters = (w * sh.spins_per_us) as u64;
                            spin(iters);
                            iters
                        }
                    };
                    let dc = thread_cpu_ns().saturating_sub(c0);
                    sh.meter.iters.fetch_add(iters, Ordering::Relaxed);
                    sh.spun.fetch_add(iters, Ordering::Relaxed);
                    sh.meter.cpu_ns.fetch_add(dc, Ordering::Relaxed);
                }
            }
            Op::Lock { array, index: sel } => {
                let arr = &prog.mutex_arrays[array as usize];
                let k = match sel {
                    IndexSel::Fixed(k) => k,
                    IndexSel::Thread => index % arr.len,
                    IndexSel::Random => rng.gen_range(0..arr.len),
                };
                let m = arr.base + k;
                sh.mutexes[m as usize].lock();
                held.push((array, m));
            }
            Op::Unlock { array } => {
                // The compiler's lock-discipline check guarantees a match.
                if let Some(p) = held.iter().rposition(|(a, _)| *a == array) {
                    let (_, m) = held.remove(p);
                    sh.mutexes[m as usize].unlock();
                }
            }
            Op::Barrier(b) => sh.barriers[b as usize].wait(),
            Op::CondWait { cond, array } => {
                if let Some(&(_, m)) = held.iter().rev().find(|(a, _)| *a == array) {
                    sh.conds[cond as usize].wait(&sh.mutexes[m as usize]);
                }
            }
            Op::Signal(c) => sh.conds[c as usize].signal(),
            Op::Broadcast(c) => sh.conds[c as usize].broadcast(),
            Op::Push(q) => sh.queues[q as usize].push(),
            Op::Pop(q) => {
                if !sh.queues[q as usize].pop() {
                    // Closed and empty: leave the innermost until-closed loop.
                    if let Some(next) = loops.break_until_closed(ops) {
                        pc = next as usize;
                    }
                }
            }
            Op::Close(q) => sh.queues[q as usize].close(),
            Op::Sleep(ns) => std::thread::sleep(Duration::from_nanos(ns)),
            Op::Timer {
                timer,
                period_ns,
                absolute,
            } => {
                // As the simulator's: sleep until the next firing, or, if
                // it has passed, go on (a relative timer restarts from now).
                let t = &mut timers[timer as usize];
                let next = t.unwrap_or(created) + Duration::from_nanos(period_ns);
                let now = Instant::now();
                if next > now {
                    std::thread::sleep(next - now);
                    *t = Some(next);
                } else {
                    *t = Some(if absolute { next } else { now });
                }
            }
            Op::Spawn { group: g, count } => {
                let base = sh.spawned[g as usize].fetch_add(count, Ordering::AcqRel);
                sh.groups[g as usize].add(count);
                sh.live.fetch_add(count, Ordering::AcqRel);
                for i in 0..count {
                    let s = sh.clone();
                    let name = format!(
                        "{}/{}#{}",
                        prog.name,
                        prog.groups[g as usize].name,
                        base + i
                    );
                    match std::thread::Builder::new()
                        .name(name)
                        .spawn(move || thread_main(s, g, base + i))
                    {
                        Ok(h) => sh.handles.lock().unwrap_or_else(|e| e.into_inner()).push(h),
                        Err(_) => {
                            // Account the thread as finished so joins and the
                            // coordinator do not wait for it forever.
                            sh.groups[g as usize].exit();
                            sh.live.fetch_sub(1, Ordering::AcqRel);
                        }
                    }
                }
            }
            Op::Join(g) => sh.groups[g as usize].join(),
            Op::Post { event: e, .. } => {
                sh.events[e as usize].store(1, Ordering::Release);
                atomic_wait::wake_all(&sh.events[e as usize]);
            }
            Op::WaitEvent(e) => {
                while sh.events[e as usize].load(Ordering::Acquire) == 0 {
                    atomic_wait::wait(&sh.events[e as usize], 0);
                }
            }
            // `pc` already points past the current op.
            Op::Loop { count, end } => pc = loops.enter(pc as u32 - 1, count, end) as usize,
            Op::EndLoop { start } => pc = loops.end(pc as u32 - 1, start) as usize,
        }
    }
}

/// Parses a taskset-style CPU list (`0,2-3`) into sorted, distinct CPU
/// numbers; the error says which part is wrong or that none was given.
pub fn parse_cpu_list(s: &str) -> Result<Vec<usize>, String> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let bad = || format!("'{part}' is not a CPU number or range like 0-3");
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) =
                    (a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?);
                if a > b {
                    return Err(bad());
                }
                out.extend(a..=b);
            }
            None => out.push(part.parse().map_err(|_| bad())?),
        }
    }
    if out.is_empty() {
        return Err("no CPUs given".into());
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use colab_workload::Library;

    fn opts() -> NativeOptions {
        NativeOptions {
            cpus: None,
            reps: 1,
            seed: 1,
            calibration: calibrate_spin(),
            timeout: Duration::from_secs(60),
            emulate: None,
        }
    }

    fn workload(text: &str) -> Workload {
        let mut lib = Library::default();
        let name = lib.add_program_text("t.toml", text).unwrap();
        lib.single(&name, None).unwrap()
    }

    #[test]
    fn calibration_is_sane() {
        let c = calibrate_spin();
        // Any machine runs an LCG step in 0.1-100 ns. (Timing accuracy is
        // measured by `colab validate`, not asserted here: tests run under load.)
        assert!(c.spins_per_us > 10.0 && c.spins_per_us < 1e4, "{c:?}");
    }

    #[test]
    fn pipeline_with_every_primitive_finishes() {
        let w = workload(
            r#"
name = "all"
cond = ["c"]
[mutex]
m = 2
flag = 1
[barrier]
b = 3
[queue]
q = { capacity = 2, producers = 1 }
[thread.main]
ops = [ { spawn = "w", count = 3 }, { spawn = "c" },
  { loop = 20, body = [ { compute = 50, speedup = 2.0 }, { push = "q" } ] }, { close = "q" },
  { join = "w" }, { join = "c" } ]
[thread.w]
ops = [ { loop = 5, body = [ { critical = "m", index = "random", compute = 20, speedup = 1.5 }, { barrier = "b" } ] } ]
[thread.c]
ops = [ { loop = "until-closed", body = [ { pop = "q" }, { compute = 30, speedup = 2.0 } ] },
  { sleep = 100 } ]
"#,
        );
        let r = run(&w, &opts()).unwrap();
        assert_eq!(r.len(), 1);
        // At least the consumer's 20 x 30 us of work plus its sleep.
        assert!(r[0].median_ns() >= 700_000, "{:?}", r[0]);
    }

    #[test]
    fn cpu_set_and_repetitions() {
        let lib = Library::builtin();
        let w = lib.single("radix", Some(2)).unwrap();
        let o = NativeOptions {
            cpus: Some(vec![0]),
            reps: 2,
            ..opts()
        };
        let r = run(&w, &o).unwrap();
        assert_eq!(r[0].samples_ns.len(), 2);
        assert!(r[0].min_ns() > 0 && r[0].spread() >= 0.0);
        let bad = NativeOptions {
            cpus: Some(vec![100_000]),
            ..opts()
        };
        assert!(matches!(run(&w, &bad), Err(NativeError::Affinity { .. })));
    }

    #[test]
    fn an_emulated_little_cpu_computes_slower() {
        // One compute-only thread pinned to CPU 0, once as the big core and
        // once as the little one of 1B1S: on the little core it spins
        // 1/rate times the iterations (to chunk rounding).
        use colab_core::{CoreId, CoreOrder, Topology};
        let w = workload(
            r#"
name = "spin"
[thread.main]
ops = [ { compute = 2000, mem_frac = 0.0 } ]
"#,
        );
        let t = |order| Topology::named("1B1S", order).unwrap();
        let base = opts(); // one calibration for every run
        let as_core = |order| {
            let e = Emulation::new(&t(order), &[0, 1]).unwrap();
            let o = NativeOptions {
                cpus: Some(vec![0]),
                reps: 1,
                emulate: Some(Arc::new(e)),
                ..base.clone()
            };
            run(&w, &o).unwrap()[0].iterations[0] as f64
        };
        let big = as_core(CoreOrder::BigFirst);
        let little = as_core(CoreOrder::LittleFirst);
        let s = 1.0 / t(CoreOrder::BigFirst).core_type(CoreId(1)).rate(0.0);
        assert!(s > 3.0, "1B1S's little core runs core-bound work at 1/3.14");
        let ratio = little / big;
        assert!(
            (ratio - s).abs() < 0.01 * s,
            "little/big {ratio:.3}, expected {s:.3}"
        );
        // Not emulated: the reference rate on any CPU.
        let plain = run(
            &w,
            &NativeOptions {
                cpus: Some(vec![0]),
                reps: 1,
                ..base.clone()
            },
        )
        .unwrap();
        assert!((plain[0].iterations[0] as f64 / big - 1.0).abs() < 0.01);
    }

    #[test]
    fn native_deadlock_times_out_with_an_error() {
        // A condition wait nobody will ever signal.
        let w = workload(
            r#"
name = "stuck2"
cond = ["c"]
[mutex]
m = 1
[thread.main]
ops = [ { lock = "m" }, { wait = "c", mutex = "m" }, { unlock = "m" } ]
"#,
        );
        let o = NativeOptions {
            timeout: Duration::from_millis(300),
            ..opts()
        };
        assert!(matches!(run(&w, &o), Err(NativeError::Timeout { .. })));
    }
}
