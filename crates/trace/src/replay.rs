//! Replay: a trace becomes a program whose threads alternate compute and
//! waits, where every wait ends only when the thread that woke it in the
//! recording reaches that wake-up in its own program order (not at the
//! recorded time). A different schedule or machine therefore gives a
//! different, plausible turnaround, while the recorded dependencies hold.
//!
//! - Compute: a thread's CPU time between two of its own blocking points,
//!   as work in nanoseconds of the recording machine (a topology describing
//!   that machine has rates 1.0; `colab calibrate` writes one), less the
//!   tracing overhead the header reports: per context switch (each recorded
//!   run ends in one), per traced system call (futex waits and wakes,
//!   sleeps) and per wake-up the thread performed.
//! - A futex/IO wait woken by a traced thread W becomes a one-shot event:
//!   the sleeper waits for it; W posts it once it has done as much CPU work
//!   as it had done when it woke the sleeper.
//! - A futex wait whose waker the recorder does not name (it often names
//!   only the first of a broadcast's wake-ups) is woken by the thread that
//!   made the last FUTEX_WAKE call on its word while it waited, at the CPU
//!   work it had done at that call ([`crate::sync::futex_waits`]).
//! - A futex wait released by a FUTEX_WAKE call that asked for more than
//!   one waiter (nr_wake; a barrier's release or a condition broadcast asks
//!   for every one) is posted as a wake-all, as a kernel sees in the call.
//!   Traces recorded before nr_wake was (2026-11-29) tell it by the word:
//!   one whose waits are mostly released together.
//! - A wait ended by a timer, an interrupt, an untraced process or no
//!   recorded call becomes a sleep of the recorded length.
//! - Thread creation becomes a spawn in the creator at the same point of its
//!   program order. Every traced thread is its own thread group.

use crate::format::{BlockKind, Event, Trace};
use crate::overhead::Overhead;
use crate::sync::{futex_waits, FutexWait, WaitClass};
use colab_workload::{mem_frac_for_speedup, BenchInfo, Group, Op, Program};
use std::collections::BTreeMap;

#[derive(Clone, Debug)]
pub struct ReplayOptions {
    /// Name of the replayed program.
    pub name: String,
    /// Big/little speedup of every compute segment (the trace was recorded
    /// on one core type, so it cannot tell; the user says).
    pub speedup: f64,
    /// Per-thread speedups overriding `speedup`, by selector: `COMM` (every
    /// thread of that name), `COMM#K` (the K-th thread of that name to
    /// appear, from 1) or `@root` (the program's first thread). The last
    /// two win over the first, so threads that share a name (a program's
    /// threads usually share the program's) can differ by role or order.
    pub thread_speedup: BTreeMap<String, f64>,
    /// Replay the recorded CPU segments as they are, without subtracting
    /// the tracing overhead measured at recording.
    pub keep_tracing_overhead: bool,
    /// Replay a futex wait whose waker the recorder does not name as a
    /// sleep of its recorded length (which carries the recording's own
    /// scheduling delays), instead of a wait for the thread that made the
    /// last FUTEX_WAKE call on its word.
    pub sleep_unnamed_wakes: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error("trace has no threads")]
    NoThreads,
    #[error("{0}")]
    Speedup(String),
    #[error("--thread-speedup {selector}: {why} (the trace's threads: {names})")]
    Selector {
        selector: String,
        why: String,
        names: String,
    },
}

/// Which threads a `thread_speedup` key selects.
#[derive(Debug, PartialEq)]
enum Selector<'a> {
    Root,
    Name(&'a str),
    Nth(&'a str, usize),
}

impl<'a> Selector<'a> {
    fn parse(key: &'a str) -> Result<Self, String> {
        if key == "@root" {
            return Ok(Selector::Root);
        }
        if key.starts_with('@') {
            return Err("the only @-selector is @root".into());
        }
        if key.is_empty() {
            return Err("empty thread name".into());
        }
        if let Some((name, k)) = key.rsplit_once('#') {
            if let Ok(k) = k.parse::<usize>() {
                if k == 0 || name.is_empty() {
                    return Err("expected COMM#K with K counting from 1".into());
                }
                return Ok(Selector::Nth(name, k));
            }
        }
        Ok(Selector::Name(key))
    }

    /// Does it select the thread named `comm`, the `nth` (from 1) of that
    /// name, `root` when it is the first thread? Specific selectors rank 1.
    fn rank(&self, comm: &str, nth: usize, root: bool) -> Option<u8> {
        match *self {
            Selector::Root => root.then_some(1),
            Selector::Nth(n, k) => (n == comm && k == nth).then_some(1),
            Selector::Name(n) => (n == comm).then_some(0),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Action {
    Spawn(u32),
    /// Post event `.0`; `.1`: as a wake-all.
    Post(u32, bool),
    Wait(u32),
    Sleep(u64),
}

/// A thread's CPU clock: the CPU work it had done by a time, with the
/// tracing overhead of its events up to then taken out.
struct CpuClock {
    /// Runs (start, end), in time order.
    runs: Vec<(u64, u64)>,
    /// Work done by the end of each run.
    done: Vec<f64>,
    /// Overhead charges (time, ns), in time order, and their prefix sums.
    marks: Vec<(u64, f64)>,
    marks_sum: Vec<f64>,
    /// Overhead of the context switch that ends each run.
    switch: f64,
}

impl CpuClock {
    fn new(mut runs: Vec<(u64, u64)>, mut marks: Vec<(u64, f64)>, switch: f64) -> CpuClock {
        runs.sort_unstable();
        marks.sort_by_key(|m| m.0);
        let mut marks_sum = Vec::with_capacity(marks.len() + 1);
        let mut acc = 0.0;
        marks_sum.push(acc);
        for m in &marks {
            acc += m.1;
            marks_sum.push(acc);
        }
        let mut clock = CpuClock {
            runs,
            done: Vec::new(),
            marks,
            marks_sum,
            switch,
        };
        let mut acc = 0.0;
        clock.done = (0..clock.runs.len())
            .map(|i| {
                acc += clock.run_work(i);
                acc
            })
            .collect();
        clock
    }

    /// Overhead charged in [a, b].
    fn charged(&self, a: u64, b: u64) -> f64 {
        let lo = self.marks.partition_point(|m| m.0 < a);
        let hi = self.marks.partition_point(|m| m.0 <= b);
        self.marks_sum[hi.max(lo)] - self.marks_sum[lo]
    }

    /// Work of the whole run `i`.
    fn run_work(&self, i: usize) -> f64 {
        let (s, e) = self.runs[i];
        ((e - s) as f64 - self.switch - self.charged(s, e)).max(0.0)
    }

    /// Work done before time `t`.
    fn at(&self, t: u64) -> u64 {
        let k = self.runs.partition_point(|r| r.0 < t);
        if k == 0 {
            return 0;
        }
        let before = if k >= 2 { self.done[k - 2] } else { 0.0 };
        let (s, e) = self.runs[k - 1];
        let part = if t >= e {
            self.run_work(k - 1)
        } else {
            ((t - s) as f64 - self.charged(s, t))
                .max(0.0)
                .min(self.run_work(k - 1))
        };
        (before + part).round() as u64
    }

    fn total(&self) -> u64 {
        self.done.last().map_or(0, |d| d.round() as u64)
    }
}

/// Each thread's memory fraction: from the most specific `thread_speedup`
/// selector that matches it, else `default`. A selector that matches no
/// thread, or a bad speedup, is an error naming the trace's threads.
fn thread_mem_fracs(
    opts: &ReplayOptions,
    order: &[u32],
    comm: &BTreeMap<u32, String>,
    default: f64,
) -> Result<BTreeMap<u32, f64>, ReplayError> {
    let name_of = |t: u32| comm.get(&t).map_or("thread", |s| s.as_str());
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    let threads: Vec<(u32, &str, usize)> = order
        .iter()
        .map(|&t| {
            let n = seen.entry(name_of(t)).or_default();
            *n += 1;
            (t, name_of(t), *n)
        })
        .collect();
    let names = || {
        seen.iter()
            .map(|(n, k)| {
                if *k > 1 {
                    format!("{n} x{k}")
                } else {
                    n.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut out: BTreeMap<u32, (u8, f64)> = BTreeMap::new();
    for (key, &sp) in &opts.thread_speedup {
        let err = |why: String| ReplayError::Selector {
            selector: key.clone(),
            why,
            names: names(),
        };
        let sel = Selector::parse(key).map_err(err)?;
        let m = mem_frac_for_speedup(sp).map_err(err)?;
        let mut any = false;
        for &(t, c, nth) in &threads {
            if let Some(rank) = sel.rank(c, nth, t == order[0]) {
                any = true;
                let e = out.entry(t).or_insert((rank, m));
                if rank >= e.0 {
                    *e = (rank, m);
                }
            }
        }
        if !any {
            return Err(err("no thread of the trace matches".into()));
        }
    }
    Ok(order
        .iter()
        .map(|&t| (t, out.get(&t).map_or(default, |e| e.1)))
        .collect())
}

pub fn to_program(trace: &Trace, opts: &ReplayOptions) -> Result<Program, ReplayError> {
    let default_mem = mem_frac_for_speedup(opts.speedup).map_err(ReplayError::Speedup)?;
    // Threads in order of appearance; the first is the root.
    let mut order: Vec<u32> = Vec::new();
    let mut parent: BTreeMap<u32, Option<u32>> = BTreeMap::new();
    let mut created: BTreeMap<u32, u64> = BTreeMap::new();
    let mut comm: BTreeMap<u32, String> = BTreeMap::new();
    let mut runs: BTreeMap<u32, Vec<(u64, u64)>> = BTreeMap::new();
    for e in &trace.events {
        let tid = e.tid();
        if let std::collections::btree_map::Entry::Vacant(v) = parent.entry(tid) {
            v.insert(None);
            order.push(tid);
            created.insert(tid, e.time());
        }
        match e {
            Event::Thread {
                parent: p,
                comm: c,
                t,
                ..
            } => {
                parent.insert(tid, *p);
                created.insert(tid, *t);
                comm.insert(tid, c.clone());
            }
            Event::Run { start, end, .. } => runs.entry(tid).or_default().push((*start, *end)),
            _ => {}
        }
    }
    let root = *order.first().ok_or(ReplayError::NoThreads)?;
    let mem_of = thread_mem_fracs(opts, &order, &comm, default_mem)?;
    let traced = |t: u32| parent.contains_key(&t);
    let overhead = match trace.header.overhead_ns {
        Some(o) if !opts.keep_tracing_overhead => o,
        _ => Overhead {
            switch: 0.0,
            syscall: 0.0,
        },
    };
    // Where each thread paid tracing overhead besides its switches.
    let mut marks: BTreeMap<u32, Vec<(u64, f64)>> = BTreeMap::new();
    for e in &trace.events {
        match *e {
            Event::Block { tid, t, kind, .. } if kind != BlockKind::Io => {
                marks.entry(tid).or_default().push((t, overhead.syscall));
            }
            Event::FutexWake { tid, t, .. } => {
                marks.entry(tid).or_default().push((t, overhead.syscall));
            }
            Event::Wake {
                t, waker: Some(w), ..
            } => marks.entry(w).or_default().push((t, overhead.wakeup())),
            _ => {}
        }
    }
    let clocks: BTreeMap<u32, CpuClock> = order
        .iter()
        .map(|&t| {
            let clock = CpuClock::new(
                runs.remove(&t).unwrap_or_default(),
                marks.remove(&t).unwrap_or_default(),
                overhead.switch,
            );
            (t, clock)
        })
        .collect();
    let cpu_before = |tid: u32, t: u64| clocks[&tid].at(t);
    // Points per thread: (CPU position, time, action).
    let mut points: BTreeMap<u32, Vec<(u64, u64, Action)>> = BTreeMap::new();
    let mut events = 0u32;
    let mut blocked_at: BTreeMap<u32, u64> = BTreeMap::new();
    // Futex waits by the index of the wake-up that ended them.
    let futex: BTreeMap<usize, FutexWait> = futex_waits(trace)
        .into_iter()
        .map(|w| (w.wake_event, w))
        .collect();
    for (i, e) in trace.events.iter().enumerate() {
        match *e {
            Event::Block { tid, t, .. } => {
                blocked_at.insert(tid, t);
            }
            Event::Wake { tid, t, waker } => {
                let Some(tb) = blocked_at.remove(&tid) else {
                    continue;
                };
                let pos = cpu_before(tid, tb);
                let fw = futex.get(&i);
                let wake_all = fw.is_some_and(|w| match w.call.and_then(|c| c.nr_wake) {
                    Some(n) => n > 1,
                    None => w.class == WaitClass::Broadcast,
                });
                // The named waker at the wake-up, else the issuer of the
                // call that released the wait, at the call.
                let posted = match waker.filter(|&w| w != tid && traced(w)) {
                    Some(w) => Some((w, t)),
                    None if opts.sleep_unnamed_wakes => None,
                    None => fw
                        .and_then(|w| w.call)
                        .map(|c| (c.by, c.t))
                        .filter(|&(by, _)| by != tid && traced(by)),
                };
                match posted {
                    Some((w, tw)) => {
                        let id = events;
                        events += 1;
                        points
                            .entry(tid)
                            .or_default()
                            .push((pos, tb, Action::Wait(id)));
                        points.entry(w).or_default().push((
                            cpu_before(w, tw),
                            tw,
                            Action::Post(id, wake_all),
                        ));
                    }
                    None => points
                        .entry(tid)
                        .or_default()
                        .push((pos, tb, Action::Sleep(t - tb))),
                }
            }
            _ => {}
        }
    }
    for &tid in order.iter().skip(1) {
        // A thread whose creator is not traced is started by the root.
        let p = parent[&tid]
            .filter(|&p| traced(p) && p != tid)
            .unwrap_or(root);
        let tc = created[&tid];
        points
            .entry(p)
            .or_default()
            .push((cpu_before(p, tc), tc, Action::Spawn(tid)));
    }
    let group_of: BTreeMap<u32, u32> = order
        .iter()
        .enumerate()
        .map(|(i, &t)| (t, i as u32))
        .collect();
    let mut groups = Vec::new();
    for &tid in &order {
        let mem_frac = mem_of[&tid];
        let mut pts = points.remove(&tid).unwrap_or_default();
        pts.sort();
        let total = clocks[&tid].total();
        let mut ops = Vec::new();
        let mut cur = 0u64;
        let compute = |ops: &mut Vec<Op>, ns: u64| {
            if ns > 0 {
                ops.push(Op::Compute {
                    work: ns as f64,
                    mem_frac,
                    cv: 0.0,
                    imbalance: 0.0,
                });
            }
        };
        for (pos, _, a) in pts {
            compute(&mut ops, pos.saturating_sub(cur));
            cur = cur.max(pos);
            ops.push(match a {
                Action::Spawn(c) => Op::Spawn {
                    group: group_of[&c],
                    count: 1,
                },
                Action::Post(event, wake_all) => Op::Post { event, wake_all },
                Action::Wait(e) => Op::WaitEvent(e),
                Action::Sleep(ns) => Op::Sleep(ns),
            });
        }
        compute(&mut ops, total.saturating_sub(cur));
        let name = if tid == root {
            "main".to_string()
        } else {
            format!("{}#{tid}", comm.get(&tid).map_or("thread", |s| s.as_str()))
        };
        groups.push(Group { name, ops });
    }
    Ok(Program {
        name: opts.name.clone(),
        n: 1,
        info: BenchInfo {
            description: format!("replay of `{}`", trace.header.command.join(" ")),
            parallelism: "recorded".into(),
            sync_rate: String::new(),
            comm_comp: String::new(),
        },
        groups,
        mutex_arrays: Vec::new(),
        num_mutexes: 0,
        barriers: Vec::new(),
        conds: Vec::new(),
        timers: Vec::new(),
        queues: Vec::new(),
        num_events: events,
        total_threads: order.len() as u32,
    })
}
