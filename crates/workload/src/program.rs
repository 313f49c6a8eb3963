//! Compiled programs: flat op arrays with resolved object indices, ready for
//! the simulator's interpreter, and the static checks that catch broken specs
//! before they run.

use crate::expr::Count;
use crate::spec::{IndexSpec, OpSpec, ProgramSpec};
use crate::WorkloadError;
use colab_core::CoreType;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Which mutex of an array a lock takes.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum IndexSel {
    Fixed(u32),
    /// Uniformly random (fine-grained locking on shared data).
    Random,
    /// The thread's index within its group, modulo the array size.
    Thread,
}

/// How often a loop runs.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum LoopCount {
    Times(u32),
    /// Until a `pop` in the body finds its queue closed and empty.
    UntilClosed,
}

/// One interpreted operation. Object fields index the program's tables.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Op {
    /// `work` ns on the reference big core, memory fraction `mem_frac`.
    Compute {
        work: f64,
        mem_frac: f64,
        cv: f64,
        imbalance: f64,
    },
    Lock {
        array: u32,
        index: IndexSel,
    },
    Unlock {
        array: u32,
    },
    Barrier(u32),
    CondWait {
        cond: u32,
        array: u32,
    },
    Signal(u32),
    Broadcast(u32),
    Push(u32),
    Pop(u32),
    Close(u32),
    Sleep(u64),
    /// Blocks until the thread's timer `timer` next fires: its previous
    /// firing (the thread's start, the first time) plus `period_ns`. If that
    /// time has passed, it does not block, and the timer's reference moves to
    /// now (`absolute`: it stays, so later periods keep their times).
    Timer {
        timer: u32,
        period_ns: u64,
        absolute: bool,
    },
    Spawn {
        group: u32,
        count: u32,
    },
    Join(u32),
    /// Replayed traces: mark one-shot event `event` as happened (waking its
    /// waiter). `wake_all`: the recorded FUTEX_WAKE that this stands for
    /// let every waiter of its word go (a barrier's release, a condition
    /// broadcast), which a kernel sees in the call's nr_wake.
    Post {
        event: u32,
        wake_all: bool,
    },
    /// Replayed traces: wait until event `e` has happened.
    WaitEvent(u32),
    /// Body is `start+1 .. end`; `end` holds the matching `EndLoop`.
    Loop {
        count: LoopCount,
        end: u32,
    },
    EndLoop {
        start: u32,
    },
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Group {
    pub name: String,
    pub ops: Vec<Op>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MutexArray {
    pub name: String,
    /// Index of the first mutex in the program's flat mutex table.
    pub base: u32,
    pub len: u32,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct QueueDef {
    pub name: String,
    pub capacity: u32,
    pub producers: u32,
}

/// Descriptive classes of a benchmark (colab-tpds Table 2, cgo20 Table BC).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct BenchInfo {
    pub description: String,
    pub parallelism: String,
    pub sync_rate: String,
    pub comm_comp: String,
}

/// A program compiled for one value of `n`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Program {
    pub name: String,
    pub n: u32,
    pub info: BenchInfo,
    /// Group 0 is `main`.
    pub groups: Vec<Group>,
    pub mutex_arrays: Vec<MutexArray>,
    pub num_mutexes: u32,
    pub barriers: Vec<(String, u32)>,
    pub conds: Vec<String>,
    /// Timer names (each thread has its own timer of each name).
    pub timers: Vec<String>,
    pub queues: Vec<QueueDef>,
    /// One-shot events (only replayed traces use them).
    pub num_events: u32,
    /// Threads the program creates over its life, main included.
    pub total_threads: u32,
}

/// The reference little core's rates, used to turn a stated big/little
/// speedup into a memory fraction (see `colab_core::topology`).
pub fn mem_frac_for_speedup(speedup: f64) -> Result<f64, String> {
    let big = CoreType::reference_big();
    let little = CoreType::reference_little();
    let smax = big.rate(0.0) / little.rate(0.0);
    let smin = big.rate(1.0) / little.rate(1.0);
    if !(speedup.is_finite() && speedup >= smin - 1e-9 && speedup <= smax + 1e-9) {
        return Err(format!(
            "speedup {speedup} is outside what the reference cores can show ({smin:.2} to {smax:.2})"
        ));
    }
    // speedup = (1-m)/c + m/mm for the little core when the big one is 1.0.
    let a = 1.0 / little.compute_rate;
    let b = 1.0 / little.memory_rate;
    Ok(((a - speedup) / (a - b)).clamp(0.0, 1.0))
}

/// The big/little speedup of a phase with memory fraction `m` on the reference cores.
pub fn reference_speedup(mem_frac: f64) -> f64 {
    CoreType::reference_big().rate(mem_frac) / CoreType::reference_little().rate(mem_frac)
}

struct Ctx<'a> {
    file: &'a str,
    spec: &'a ProgramSpec,
    n: i64,
    groups: Vec<String>,
    arrays: BTreeMap<String, u32>,
    barriers: BTreeMap<String, u32>,
    conds: BTreeMap<String, u32>,
    timers: BTreeMap<String, u32>,
    queues: BTreeMap<String, u32>,
}

impl Ctx<'_> {
    fn err(&self, place: impl Into<String>, problem: impl Into<String>) -> WorkloadError {
        WorkloadError::Invalid {
            file: self.file.to_string(),
            place: place.into(),
            problem: problem.into(),
        }
    }
    fn count(&self, place: &str, c: &Count, min: i64) -> Result<u32, WorkloadError> {
        let v = c.eval(self.n).map_err(|e| self.err(place, e))?;
        if v < min || v > u32::MAX as i64 {
            return Err(self.err(
                place,
                format!(
                    "value {v} (with n = {}) must be between {min} and {}",
                    self.n,
                    u32::MAX
                ),
            ));
        }
        Ok(v as u32)
    }
    fn lookup(
        &self,
        place: &str,
        table: &BTreeMap<String, u32>,
        kind: &str,
        name: &str,
    ) -> Result<u32, WorkloadError> {
        table.get(name).copied().ok_or_else(|| {
            let known: Vec<&str> = table.keys().map(|s| s.as_str()).collect();
            self.err(
                place,
                format!(
                    "unknown {kind} '{name}' (declared: {})",
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                ),
            )
        })
    }
}

/// Compiles a program spec for thread parameter `n`.
pub fn compile(file: &str, spec: &ProgramSpec, n: Option<i64>) -> Result<Program, WorkloadError> {
    let n = n.unwrap_or(spec.default_n);
    let mut cx = Ctx {
        file,
        spec,
        n,
        groups: Vec::new(),
        arrays: BTreeMap::new(),
        barriers: BTreeMap::new(),
        conds: BTreeMap::new(),
        timers: BTreeMap::new(),
        queues: BTreeMap::new(),
    };
    if n < 1 {
        return Err(cx.err("n", format!("thread parameter n = {n} must be at least 1")));
    }
    if !spec.thread.contains_key("main") {
        return Err(cx.err(
            "thread",
            "no [thread.main] group: every program starts with a main thread",
        ));
    }
    // main first, then the rest in name order (deterministic).
    cx.groups.push("main".into());
    cx.groups
        .extend(spec.thread.keys().filter(|k| *k != "main").cloned());

    let mut mutex_arrays = Vec::new();
    let mut base = 0u32;
    for (i, (name, c)) in spec.mutex.iter().enumerate() {
        let len = cx.count(&format!("mutex.{name}"), c, 1)?;
        cx.arrays.insert(name.clone(), i as u32);
        mutex_arrays.push(MutexArray {
            name: name.clone(),
            base,
            len,
        });
        base += len;
    }
    let mut barriers = Vec::new();
    for (i, (name, c)) in spec.barrier.iter().enumerate() {
        let v = cx.count(&format!("barrier.{name}"), c, 1)?;
        cx.barriers.insert(name.clone(), i as u32);
        barriers.push((name.clone(), v));
    }
    for (i, name) in spec.cond.iter().enumerate() {
        cx.conds.insert(name.clone(), i as u32);
    }
    for (i, name) in spec.timer.iter().enumerate() {
        cx.timers.insert(name.clone(), i as u32);
    }
    let mut queues = Vec::new();
    for (i, (name, q)) in spec.queue.iter().enumerate() {
        let capacity = cx.count(&format!("queue.{name}.capacity"), &q.capacity, 1)?;
        let producers = cx.count(&format!("queue.{name}.producers"), &q.producers, 1)?;
        cx.queues.insert(name.clone(), i as u32);
        queues.push(QueueDef {
            name: name.clone(),
            capacity,
            producers,
        });
    }

    let mut groups = Vec::new();
    for gname in cx.groups.clone() {
        let mut ops = Vec::new();
        let mut places = Vec::new();
        let place = format!("thread.{gname}.ops");
        compile_ops(
            &cx,
            &place,
            &spec.thread[&gname].ops,
            &mut ops,
            &mut places,
            false,
        )?;
        check_lock_balance(&cx, &place, &ops, &places)?;
        groups.push(Group { name: gname, ops });
    }

    let mut prog = Program {
        name: spec.name.clone(),
        n: n as u32,
        info: crate::program::BenchInfo {
            description: spec.description.clone(),
            parallelism: spec.parallelism.clone(),
            sync_rate: spec.sync_rate.clone(),
            comm_comp: spec.comm_comp.clone(),
        },
        groups,
        mutex_arrays,
        num_mutexes: base,
        barriers,
        conds: spec.cond.clone(),
        timers: spec.timer.clone(),
        queues,
        num_events: 0,
        total_threads: 0,
    };
    let counts = thread_counts(&cx, &prog)?;
    prog.total_threads = counts.iter().sum::<u64>() as u32;
    if let Some(f) = &spec.threads_formula {
        let want = crate::expr::eval(f, n).map_err(|e| cx.err("threads_formula", e))?;
        if want != prog.total_threads as i64 {
            return Err(cx.err(
                "threads_formula",
                format!(
                    "says {f} = {want} threads for n = {n}, but the spec creates {}",
                    prog.total_threads
                ),
            ));
        }
    }
    check_barriers(&cx, &prog, &counts)?;
    Ok(prog)
}

/// Compiles a list of steps; `places[k]` records which step produced `out[k]`
/// (one step may become several ops), so later checks can name the step.
fn compile_ops(
    cx: &Ctx,
    place: &str,
    specs: &[OpSpec],
    out: &mut Vec<Op>,
    places: &mut Vec<String>,
    in_until_closed: bool,
) -> Result<(), WorkloadError> {
    for (i, s) in specs.iter().enumerate() {
        let here = format!("{place}[{i}]");
        compile_op(cx, &here, s, out, places, in_until_closed)?;
        places.resize(out.len(), here);
    }
    Ok(())
}

fn compile_op(
    cx: &Ctx,
    here: &str,
    s: &OpSpec,
    out: &mut Vec<Op>,
    places: &mut Vec<String>,
    in_until_closed: bool,
) -> Result<(), WorkloadError> {
    let verbs: Vec<&str> = [
        ("compute", s.compute.is_some() && s.critical.is_none()),
        ("lock", s.lock.is_some()),
        ("unlock", s.unlock.is_some()),
        ("critical", s.critical.is_some()),
        ("barrier", s.barrier.is_some()),
        ("wait", s.wait.is_some()),
        ("signal", s.signal.is_some()),
        ("broadcast", s.broadcast.is_some()),
        ("push", s.push.is_some()),
        ("pop", s.pop.is_some()),
        ("close", s.close.is_some()),
        ("sleep", s.sleep.is_some()),
        ("timer", s.timer.is_some()),
        ("spawn", s.spawn.is_some()),
        ("join", s.join.is_some()),
        ("loop", s.loop_.is_some()),
    ]
    .iter()
    .filter(|(_, on)| *on)
    .map(|(v, _)| *v)
    .collect();
    if verbs.len() != 1 {
        return Err(cx.err(
            here,
            if verbs.is_empty() {
                "no operation: expected one of compute, lock, unlock, critical, barrier, wait, signal, broadcast, push, pop, close, sleep, timer, spawn, join, loop".to_string()
            } else {
                format!("more than one operation in one step: {}", verbs.join(", "))
            },
        ));
    }
    let stray = |field: &str, set: bool, ok: &[&str]| -> Result<(), WorkloadError> {
        if set && !ok.contains(&verbs[0]) {
            return Err(cx.err(here, format!("'{field}' does not apply to '{}'", verbs[0])));
        }
        Ok(())
    };
    stray("speedup", s.speedup.is_some(), &["compute", "critical"])?;
    stray("mem_frac", s.mem_frac.is_some(), &["compute", "critical"])?;
    stray("cv", s.cv.is_some(), &["compute", "critical"])?;
    stray("imbalance", s.imbalance.is_some(), &["compute", "critical"])?;
    stray("index", s.index.is_some(), &["lock", "critical"])?;
    stray("mutex", s.mutex.is_some(), &["wait"])?;
    stray("count", s.count.is_some(), &["spawn"])?;
    stray("body", s.body.is_some(), &["loop"])?;
    stray("period", s.period.is_some(), &["timer"])?;
    stray("mode", s.mode.is_some(), &["timer"])?;

    let mutex = |name: &Option<String>| {
        cx.lookup(
            here,
            &cx.arrays,
            "mutex array",
            name.as_deref().unwrap_or_default(),
        )
    };
    let cond = |name: &Option<String>| {
        cx.lookup(
            here,
            &cx.conds,
            "condition variable",
            name.as_deref().unwrap_or_default(),
        )
    };
    let queue = |name: &Option<String>| {
        cx.lookup(
            here,
            &cx.queues,
            "queue",
            name.as_deref().unwrap_or_default(),
        )
    };
    match verbs[0] {
        "compute" => out.push(compute_op(cx, here, s)?),
        "critical" => {
            let array = mutex(&s.critical)?;
            if s.compute.is_none() {
                return Err(cx.err(
                    here,
                    "'critical' needs a 'compute' amount for the critical section",
                ));
            }
            out.push(Op::Lock {
                array,
                index: index_sel(cx, here, &s.index)?,
            });
            out.push(compute_op(cx, here, s)?);
            out.push(Op::Unlock { array });
        }
        "lock" => {
            let array = mutex(&s.lock)?;
            out.push(Op::Lock {
                array,
                index: index_sel(cx, here, &s.index)?,
            });
        }
        "unlock" => {
            let array = mutex(&s.unlock)?;
            out.push(Op::Unlock { array });
        }
        "barrier" => out.push(Op::Barrier(cx.lookup(
            here,
            &cx.barriers,
            "barrier",
            s.barrier.as_ref().unwrap(),
        )?)),
        "wait" => {
            let cond = cond(&s.wait)?;
            let m = s.mutex.as_ref().ok_or_else(|| {
                cx.err(
                    here,
                    "'wait' needs 'mutex' (the mutex it releases while waiting)",
                )
            })?;
            let array = cx.lookup(here, &cx.arrays, "mutex array", m)?;
            out.push(Op::CondWait { cond, array });
        }
        "signal" => out.push(Op::Signal(cond(&s.signal)?)),
        "broadcast" => out.push(Op::Broadcast(cond(&s.broadcast)?)),
        "push" => out.push(Op::Push(queue(&s.push)?)),
        "pop" => {
            if !in_until_closed {
                return Err(cx.err(here, "'pop' must be inside a loop = \"until-closed\" (it ends that loop when the queue is closed and empty)"));
            }
            out.push(Op::Pop(queue(&s.pop)?))
        }
        "close" => out.push(Op::Close(queue(&s.close)?)),
        "sleep" => {
            let us = s
                .sleep
                .as_ref()
                .unwrap()
                .eval_f64(cx.n)
                .map_err(|e| cx.err(here, e))?;
            if !(us.is_finite() && us >= 0.0) {
                return Err(cx.err(here, format!("sleep of {us} us: must be zero or positive")));
            }
            if us > MAX_OP_US {
                return Err(cx.err(
                    here,
                    format!("sleep of {us} us: at most {MAX_OP_US} us (one hour) per operation"),
                ));
            }
            out.push(Op::Sleep((us * 1000.0).round() as u64));
        }
        "timer" => {
            let timer = cx.lookup(
                here,
                &cx.timers,
                "timer",
                s.timer.as_deref().unwrap_or_default(),
            )?;
            let period = s
                .period
                .as_ref()
                .ok_or_else(|| cx.err(here, "'timer' needs a 'period' in microseconds"))?;
            let us = period.eval_f64(cx.n).map_err(|e| cx.err(here, e))?;
            if !(us.is_finite() && us > 0.0 && us <= MAX_OP_US) {
                return Err(cx.err(
                    here,
                    format!("timer period of {us} us: must be above 0 and at most {MAX_OP_US} us"),
                ));
            }
            let absolute = match s.mode.as_deref().unwrap_or("relative") {
                "relative" => false,
                "absolute" => true,
                m => {
                    return Err(cx.err(
                        here,
                        format!("timer mode '{m}': expected relative or absolute"),
                    ))
                }
            };
            out.push(Op::Timer {
                timer,
                period_ns: (us * 1000.0).round() as u64,
                absolute,
            });
        }
        "spawn" => {
            let g = s.spawn.as_ref().unwrap();
            let group = cx.groups.iter().position(|x| x == g).ok_or_else(|| {
                cx.err(
                    here,
                    format!(
                        "spawn of unknown thread group '{g}' (groups: {})",
                        cx.groups.join(", ")
                    ),
                )
            })?;
            if group == 0 {
                return Err(cx.err(
                    here,
                    "cannot spawn 'main': it is the program's first thread",
                ));
            }
            let count = cx.count(here, s.count.as_ref().unwrap_or(&Count::Int(1)), 0)?;
            out.push(Op::Spawn {
                group: group as u32,
                count,
            });
        }
        "join" => {
            let g = s.join.as_ref().unwrap();
            let group = cx
                .groups
                .iter()
                .position(|x| x == g)
                .ok_or_else(|| cx.err(here, format!("join of unknown thread group '{g}'")))?;
            out.push(Op::Join(group as u32));
        }
        "loop" => {
            let lc = s.loop_.as_ref().unwrap();
            let count = match lc {
                Count::Expr(e) if e == "until-closed" => LoopCount::UntilClosed,
                c => LoopCount::Times(cx.count(here, c, 0)?),
            };
            let body = s
                .body
                .as_ref()
                .ok_or_else(|| cx.err(here, "'loop' needs a 'body' list"))?;
            if body.is_empty() {
                return Err(cx.err(here, "'loop' body is empty"));
            }
            let start = out.len();
            out.push(Op::Loop { count, end: 0 });
            places.resize(out.len(), here.to_string());
            compile_ops(
                cx,
                &format!("{here}.body"),
                body,
                out,
                places,
                count == LoopCount::UntilClosed || in_until_closed,
            )?;
            if count == LoopCount::UntilClosed
                && !out[start + 1..].iter().any(|o| matches!(o, Op::Pop(_)))
            {
                return Err(cx.err(
                    here,
                    "loop = \"until-closed\" has no 'pop' in its body, so it would never end",
                ));
            }
            let end = out.len();
            out.push(Op::EndLoop {
                start: start as u32,
            });
            out[start] = Op::Loop {
                count,
                end: end as u32,
            };
        }
        _ => unreachable!(),
    }
    Ok(())
}

impl Program {
    /// Multiplies every compute of the program by `k`: the same program on
    /// a k times larger input, modelled as k times longer phases (as many
    /// synchronisations, each k times further apart). Sleeps are left as
    /// they are. Refused, leaving the program unchanged, when `k` is not a
    /// positive finite number or a compute would pass [`MAX_OP_US`].
    pub fn scale_work(&mut self, k: f64) -> Result<(), String> {
        if !(k.is_finite() && k > 0.0) {
            return Err(format!("work scale {k}: must be a positive number"));
        }
        let longest = self
            .groups
            .iter()
            .flat_map(|g| &g.ops)
            .filter_map(|op| match op {
                Op::Compute { work, .. } => Some(*work),
                _ => None,
            })
            .fold(0.0, f64::max);
        if longest * k > MAX_OP_US * 1000.0 {
            return Err(format!(
                "{}: scaling its work by {k} makes a compute of {:.0} us, over the {MAX_OP_US} us (one hour) one operation may take",
                self.name,
                longest * k / 1000.0
            ));
        }
        for op in self.groups.iter_mut().flat_map(|g| &mut g.ops) {
            if let Op::Compute { work, .. } = op {
                *work *= k;
            }
        }
        Ok(())
    }
}

/// The longest one compute or sleep may be: an hour, the simulator's
/// default cap on simulated time (longer ones could only hit that cap, or
/// wrap the clock).
pub const MAX_OP_US: f64 = 3_600.0 * 1e6;

fn compute_op(cx: &Ctx, here: &str, s: &OpSpec) -> Result<Op, WorkloadError> {
    let us = s
        .compute
        .as_ref()
        .unwrap()
        .eval_f64(cx.n)
        .map_err(|e| cx.err(here, e))?;
    if !(us.is_finite() && us >= 0.0) {
        return Err(cx.err(
            here,
            format!("compute of {us} us: work must be zero or positive"),
        ));
    }
    if us > MAX_OP_US {
        return Err(cx.err(
            here,
            format!("compute of {us} us: at most {MAX_OP_US} us (one hour) per operation"),
        ));
    }
    let mem_frac = match (s.speedup, s.mem_frac) {
        (Some(_), Some(_)) => {
            return Err(cx.err(here, "give either 'speedup' or 'mem_frac', not both"))
        }
        (Some(sp), None) => mem_frac_for_speedup(sp).map_err(|e| cx.err(here, e))?,
        (None, Some(m)) if (0.0..=1.0).contains(&m) => m,
        (None, Some(m)) => {
            return Err(cx.err(here, format!("mem_frac {m} must be between 0 and 1")))
        }
        (None, None) => {
            return Err(cx.err(here, "compute needs 'speedup' (big/little) or 'mem_frac'"))
        }
    };
    let cv = s.cv.unwrap_or(0.0);
    if !(0.0..=0.5).contains(&cv) {
        return Err(cx.err(here, format!("cv {cv} must be between 0 and 0.5")));
    }
    let imbalance = s.imbalance.unwrap_or(0.0);
    if !(0.0..1.0).contains(&imbalance) {
        return Err(cx.err(here, format!("imbalance {imbalance} must be in [0, 1)")));
    }
    Ok(Op::Compute {
        work: us * 1000.0,
        mem_frac,
        cv,
        imbalance,
    })
}

fn index_sel(cx: &Ctx, here: &str, idx: &Option<IndexSpec>) -> Result<IndexSel, WorkloadError> {
    Ok(match idx {
        None => IndexSel::Fixed(0),
        Some(IndexSpec::Fixed(v)) if *v >= 0 => IndexSel::Fixed(*v as u32),
        Some(IndexSpec::Fixed(v)) => {
            return Err(cx.err(here, format!("mutex index {v} is negative")))
        }
        Some(IndexSpec::Named(s)) if s == "random" => IndexSel::Random,
        Some(IndexSpec::Named(s)) if s == "thread" => IndexSel::Thread,
        Some(IndexSpec::Named(s)) => {
            return Err(cx.err(
                here,
                format!("index '{s}': expected a number, \"random\" or \"thread\""),
            ))
        }
    })
}

/// Static lock discipline: within each body, an unlock must follow a lock of
/// the same array, and a condition wait must hold its mutex.
fn check_lock_balance(
    cx: &Ctx,
    place: &str,
    ops: &[Op],
    places: &[String],
) -> Result<(), WorkloadError> {
    let mut held: Vec<u32> = Vec::new();
    let mut stack: Vec<usize> = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        match op {
            Op::Lock { array, index } => {
                if let IndexSel::Fixed(k) = index {
                    let len = cx
                        .spec
                        .mutex
                        .values()
                        .nth(*array as usize)
                        .and_then(|c| c.eval(cx.n).ok())
                        .unwrap_or(1);
                    if *k as i64 >= len {
                        return Err(cx.err(
                            places[i].clone(),
                            format!("mutex index {k} out of range: the array has {len}"),
                        ));
                    }
                }
                if held.contains(array) {
                    return Err(cx.err(
                        places[i].clone(),
                        "locks a mutex array it already holds a mutex of (self-deadlock)",
                    ));
                }
                held.push(*array)
            }
            Op::Unlock { array } => match held.iter().rposition(|a| a == array) {
                Some(p) => {
                    held.remove(p);
                }
                None => {
                    let name = cx
                        .spec
                        .mutex
                        .keys()
                        .nth(*array as usize)
                        .cloned()
                        .unwrap_or_default();
                    return Err(cx.err(
                        places[i].clone(),
                        format!("unlock of mutex '{name}' that this thread does not hold"),
                    ));
                }
            },
            Op::CondWait { array, .. } if !held.contains(array) => {
                let name = cx
                    .spec
                    .mutex
                    .keys()
                    .nth(*array as usize)
                    .cloned()
                    .unwrap_or_default();
                return Err(cx.err(
                    places[i].clone(),
                    format!("condition wait without holding mutex '{name}'"),
                ));
            }
            Op::Loop { .. } => stack.push(held.len()),
            Op::EndLoop { .. } => {
                let depth = stack.pop().unwrap_or(0);
                if held.len() != depth {
                    return Err(cx.err(
                        places[i].clone(),
                        "a loop body ends holding a different set of mutexes than it started with",
                    ));
                }
            }
            _ => {}
        }
    }
    if !held.is_empty() {
        return Err(cx.err(place, "thread exits while holding a mutex"));
    }
    Ok(())
}

/// How many threads of each group the program creates (main = 1).
fn thread_counts(cx: &Ctx, prog: &Program) -> Result<Vec<u64>, WorkloadError> {
    fn visit(
        cx: &Ctx,
        prog: &Program,
        g: usize,
        mult: u64,
        counts: &mut [u64],
        depth: usize,
    ) -> Result<(), WorkloadError> {
        if depth > prog.groups.len() {
            return Err(cx.err(
                format!("thread.{}", prog.groups[g].name),
                "thread groups spawn each other in a cycle",
            ));
        }
        counts[g] += mult;
        if counts.iter().sum::<u64>() > 4096 {
            return Err(cx.err("thread", "program creates more than 4096 threads"));
        }
        let mut rep: Vec<u64> = vec![1];
        for op in &prog.groups[g].ops {
            match op {
                Op::Loop { count, .. } => {
                    let k = match count {
                        LoopCount::Times(k) => *k as u64,
                        LoopCount::UntilClosed => 1,
                    };
                    let top = *rep.last().unwrap();
                    rep.push(top * k);
                }
                Op::EndLoop { .. } => {
                    rep.pop();
                }
                Op::Spawn { group, count } => {
                    let k = *count as u64 * rep.last().unwrap() * mult;
                    if k > 0 {
                        visit(cx, prog, *group as usize, k, counts, depth + 1)?;
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }
    let mut counts = vec![0u64; prog.groups.len()];
    visit(cx, prog, 0, 1, &mut counts, 0)?;
    Ok(counts)
}

/// A barrier whose count exceeds the threads that ever reach it would hang.
fn check_barriers(cx: &Ctx, prog: &Program, counts: &[u64]) -> Result<(), WorkloadError> {
    for (b, (name, need)) in prog.barriers.iter().enumerate() {
        let reach: u64 = prog
            .groups
            .iter()
            .enumerate()
            .filter(|(_, g)| g.ops.contains(&Op::Barrier(b as u32)))
            .map(|(i, _)| counts[i])
            .sum();
        if reach > 0 && (*need as u64) > reach {
            return Err(cx.err(
                format!("barrier.{name}"),
                format!("waits for {need} threads but only {reach} threads ever reach it (n = {}): it would never open", cx.n),
            ));
        }
    }
    Ok(())
}
