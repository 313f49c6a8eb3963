//! Lower bounds that no schedule can beat: how soon each program of a mix
//! could end on a machine, and the least H_ANTT the mix could have there.
//!
//! A bound is only as good as its argument, so each part says why it holds
//! for every schedule the simulator can produce (book: results/bound.md):
//!
//! - **Work at the fastest rate.** A compute step of `w` units with memory
//!   fraction `m` takes `w / rate_k(m)` on a core of type `k` and never
//!   less (switches, migrations and sharing only add time), so at least
//!   `w / max_k rate_k(m)`. A step's `w` is drawn around its mean with
//!   spread `cv` (uniform, at least `1 - cv*sqrt(3)` of it) and scaled by
//!   the thread's place in its group (`imbalance`), so each step is counted
//!   at the least it can be.
//! - **A program's chain** ([`ProgramBound::turnaround_ns`]): a thread runs
//!   its own steps and sleeps one after another, after its creator reached
//!   the step that created it; a thread that joins a group goes on only
//!   when that group's threads are done. The longest such chain bounds the
//!   program's turnaround, and so does its work spread over as many of the
//!   machine's fastest cores as it has threads.
//! - **The machine's capacity** ([`h_antt`]): the machine as one fluid
//!   processor as fast as all its cores together, each counted at the best
//!   rate it has for any step of the mix relative to the fastest core.
//!   Every schedule's work done by time `t` fits under it, and on one
//!   processor the least weighted sum of completion times is Smith's rule
//!   (shortest work over weight first), which sharing cannot beat.
//!
//! H_ANTT weighs program `i` by `1 / (n T_SB_i)`, so its bound is the
//! larger of the programs' own bounds so weighted and Smith's rule's sum.
//! With programs restarted until each completed K times (the CAMP and
//! Prop-SP studies) only the programs' own bounds hold: use
//! [`ProgramBound`] there.

use colab_core::Topology;
use colab_sim::DrawnWork;
use colab_workload::program::{LoopCount, Op, Program};
use std::collections::BTreeMap;

/// What no schedule of one program on a machine can beat.
#[derive(Clone, Debug, PartialEq)]
pub struct ProgramBound {
    pub name: String,
    /// Its turnaround, ns: its longest chain of steps that must follow one
    /// another, or its work over the fastest cores it can use at once,
    /// whichever is longer.
    pub turnaround_ns: f64,
    /// Its compute at the fastest core's rate, ns: what the whole machine
    /// must do for it.
    pub work_ns: f64,
    /// `work_ns` by the memory fraction of its steps (the key is the
    /// fraction's bits): each core type runs each at its own rate.
    pub work_by_class: BTreeMap<u64, f64>,
}

/// Loop iterations walked one by one on a chain before the rest is left
/// out (leaving work out keeps a lower bound a lower bound).
const MAX_WALKED: u64 = 100_000;

/// How many times the steps of a loop body run.
#[derive(Clone, Copy, Debug)]
enum Times {
    /// This many times by every thread of the group.
    PerThread(f64),
    /// This many times in all, by whichever threads of the group (a loop
    /// that pops from a queue until it is closed).
    Pooled(f64),
}

impl Times {
    fn scaled(self, k: f64) -> Times {
        match self {
            Times::PerThread(m) => Times::PerThread(m * k),
            Times::Pooled(m) => Times::Pooled(m * k),
        }
    }
}

/// The ops of `ops[range]` with how often each runs; `items[q]`: at least
/// how many items pass through queue `q`.
fn each_op(
    ops: &[Op],
    range: std::ops::Range<usize>,
    times: Times,
    items: &[f64],
    f: &mut dyn FnMut(&Op, Times),
) {
    let mut pc = range.start;
    while pc < range.end {
        match ops[pc] {
            Op::Loop { count, end } => {
                let body = pc + 1..end as usize;
                let inner = match (count, times) {
                    (LoopCount::Times(n), t) => t.scaled(n as f64),
                    (LoopCount::UntilClosed, Times::PerThread(_)) => {
                        // Every successful pop is one iteration of the body,
                        // by whichever thread; a body popping from several
                        // queues is not counted.
                        match popped_queue(&ops[body.clone()]) {
                            Some(q) => Times::Pooled(items[q as usize]),
                            None => Times::Pooled(0.0),
                        }
                    }
                    (LoopCount::UntilClosed, Times::Pooled(_)) => Times::Pooled(0.0),
                };
                each_op(ops, body, inner, items, f);
                pc = end as usize + 1;
            }
            ref op => {
                f(op, times);
                pc += 1;
            }
        }
    }
}

/// The one queue the top level of a loop body pops from.
fn popped_queue(body: &[Op]) -> Option<u32> {
    let (mut q, mut depth) = (None, 0);
    for op in body {
        match *op {
            Op::Loop { .. } => depth += 1,
            Op::EndLoop { .. } => depth -= 1,
            Op::Pop(x) if depth == 0 => {
                if q.is_some_and(|y| y != x) {
                    return None;
                }
                q = Some(x);
            }
            _ => {}
        }
    }
    q
}

/// The fastest time per unit of work at memory fraction `m` on `topo`.
fn fast_ns(topo: &Topology, m: f64) -> f64 {
    let best = present_types(topo)
        .map(|k| topo.core_types[k].rate(m))
        .fold(0.0_f64, f64::max);
    1.0 / best
}

fn present_types(topo: &Topology) -> impl Iterator<Item = usize> + '_ {
    (0..topo.core_types.len()).filter(|k| topo.core_type_of.contains(k))
}

/// The least a compute step can be, as a share of its mean, for a thread
/// of a group of `n`: `exact` when the group's threads were all created at
/// once (so the place of each in the group is known), and `max_place`
/// for the group's last thread (the one `imbalance` makes longest).
fn least_share(cv: f64, imbalance: f64, n: f64, exact: bool, max_place: bool) -> f64 {
    let noise = (1.0 - cv * 3f64.sqrt()).max(0.0);
    let place = if n <= 1.0 || imbalance <= 0.0 {
        1.0
    } else if exact && max_place {
        1.0 + imbalance
    } else {
        (1.0 - imbalance).max(0.0)
    };
    noise * place
}

/// Threads of each group over the program's life, and how many times a
/// spawn of each group ran.
fn thread_counts(p: &Program) -> (Vec<f64>, Vec<f64>) {
    let n = p.groups.len();
    let (mut threads, mut spawns) = (vec![0.0; n], vec![0.0; n]);
    threads[0] = 1.0;
    // Groups are created only by earlier-declared or main ones in practice;
    // a few passes settle any order (counts only grow: each pass is a
    // lower bound).
    let no_items = vec![0.0; p.queues.len()];
    for _ in 0..n {
        let (mut t, mut s) = (vec![0.0; n], vec![0.0; n]);
        t[0] = 1.0;
        for (g, group) in p.groups.iter().enumerate() {
            let here = threads[g];
            if here == 0.0 {
                continue;
            }
            each_op(
                &group.ops,
                0..group.ops.len(),
                Times::PerThread(1.0),
                &no_items,
                &mut |op, times| {
                    if let (Op::Spawn { group: h, count }, Times::PerThread(m)) = (op, times) {
                        t[*h as usize] += here * m * *count as f64;
                        s[*h as usize] += here * m;
                    }
                },
            );
        }
        threads = t;
        spawns = s;
    }
    (threads, spawns)
}

/// Queues that more than one group pops from: a loop that pops one of
/// those until it closes runs for a share of its items that nothing tells.
fn shared_queues(p: &Program) -> Vec<bool> {
    let mut by: Vec<Vec<usize>> = vec![Vec::new(); p.queues.len()];
    for (g, group) in p.groups.iter().enumerate() {
        for op in &group.ops {
            if let Op::Pop(q) = op {
                if !by[*q as usize].contains(&g) {
                    by[*q as usize].push(g);
                }
            }
        }
    }
    by.iter().map(|gs| gs.len() > 1).collect()
}

/// At least how many items are pushed into each queue, and how many of
/// them a loop of one group can be credited with: the same, but 0 for a
/// queue several groups pop from (`shared`), whose consumers split its
/// items in no known way.
fn queue_items(p: &Program, threads: &[f64], shared: &[bool]) -> (Vec<f64>, Vec<f64>) {
    let mask = |pushed: &[f64]| -> Vec<f64> {
        pushed
            .iter()
            .zip(shared)
            .map(|(n, &sh)| if sh { 0.0 } else { *n })
            .collect()
    };
    let mut pushed = vec![0.0; p.queues.len()];
    // Items only grow from pass to pass: any pass is a lower bound, and a
    // pipeline of k stages settles in k passes.
    for _ in 0..=p.queues.len() {
        let credited = mask(&pushed);
        let mut next = vec![0.0; p.queues.len()];
        for (g, group) in p.groups.iter().enumerate() {
            each_op(
                &group.ops,
                0..group.ops.len(),
                Times::PerThread(1.0),
                &credited,
                &mut |op, times| {
                    if let Op::Push(q) = op {
                        next[*q as usize] += match times {
                            Times::PerThread(m) => m * threads[g],
                            Times::Pooled(m) => m,
                        };
                    }
                },
            );
        }
        pushed = next;
    }
    let credited = mask(&pushed);
    (pushed, credited)
}

/// The work of the loops that share a queue (several groups popping it
/// until it closes, as a work-sharing team does): together they run once
/// per item, so they do at least the items times the least of their
/// bodies, kind by kind. A queue also popped outside such a loop is left
/// out.
fn shared_work(
    p: &Program,
    topo: &Topology,
    threads: &[f64],
    pushed: &[f64],
    shared: &[bool],
) -> BTreeMap<u64, f64> {
    let mut out = BTreeMap::new();
    for q in (0..p.queues.len()).filter(|&q| shared[q] && pushed[q] > 0.0) {
        let q32 = q as u32;
        let mut bodies: Vec<BTreeMap<u64, f64>> = Vec::new();
        let (mut pops, mut in_loops) = (0, 0);
        for (g, group) in p.groups.iter().enumerate() {
            let ops = &group.ops;
            pops += ops
                .iter()
                .filter(|op| matches!(op, Op::Pop(x) if *x == q32))
                .count();
            for (pc, op) in ops.iter().enumerate() {
                let Op::Loop {
                    count: LoopCount::UntilClosed,
                    end,
                } = *op
                else {
                    continue;
                };
                let body = pc + 1..end as usize;
                if popped_queue(&ops[body.clone()]) != Some(q32) {
                    continue;
                }
                in_loops += ops[body.clone()]
                    .iter()
                    .filter(|op| matches!(op, Op::Pop(x) if *x == q32))
                    .count();
                let mut work: BTreeMap<u64, f64> = BTreeMap::new();
                let none = vec![0.0; p.queues.len()];
                each_op(ops, body, Times::PerThread(1.0), &none, &mut |op, times| {
                    if let (
                        &Op::Compute {
                            work: w,
                            mem_frac,
                            cv,
                            imbalance,
                        },
                        Times::PerThread(m),
                    ) = (op, times)
                    {
                        let share = least_share(cv, imbalance, threads[g], false, false);
                        *work.entry(mem_frac.to_bits()).or_default() +=
                            m * w * fast_ns(topo, mem_frac) * share;
                    }
                });
                bodies.push(work);
            }
        }
        if bodies.is_empty() || pops != in_loops {
            continue;
        }
        let kinds: std::collections::BTreeSet<u64> =
            bodies.iter().flat_map(|b| b.keys().copied()).collect();
        for k in kinds {
            let least = bodies
                .iter()
                .map(|b| b.get(&k).copied().unwrap_or(0.0))
                .fold(f64::INFINITY, f64::min);
            *out.entry(k).or_default() += pushed[q] * least;
        }
    }
    out
}

/// One group's threads: the longest any of them must run by itself
/// (`serial`), and all of them together (`total`, and by memory fraction
/// in `by_class`), ns at the fastest rate.
#[derive(Clone, Debug, Default)]
struct GroupWork {
    serial: f64,
    total: f64,
    threads: f64,
    by_class: BTreeMap<u64, f64>,
}

fn group_work(
    p: &Program,
    topo: &Topology,
    g: usize,
    threads: f64,
    exact: bool,
    items: &[f64],
) -> GroupWork {
    let ops = &p.groups[g].ops;
    let mut w = GroupWork {
        threads,
        ..GroupWork::default()
    };
    if threads == 0.0 {
        return w;
    }
    each_op(
        ops,
        0..ops.len(),
        Times::PerThread(1.0),
        items,
        &mut |op, times| {
            match (op, times) {
                (
                    &Op::Compute {
                        work,
                        mem_frac,
                        cv,
                        imbalance,
                    },
                    t,
                ) => {
                    let ns = work * fast_ns(topo, mem_frac);
                    match t {
                        Times::PerThread(m) => {
                            w.serial += m * ns * least_share(cv, imbalance, threads, exact, true);
                            // With every place known the places average to 1.
                            let mean = if exact {
                                least_share(cv, 0.0, threads, exact, false)
                            } else {
                                least_share(cv, imbalance, threads, exact, false)
                            };
                            let add = m * threads * ns * mean;
                            w.total += add;
                            *w.by_class.entry(mem_frac.to_bits()).or_default() += add;
                        }
                        Times::Pooled(m) => {
                            let add = m * ns * least_share(cv, imbalance, threads, false, false);
                            // A group of one thread does all of it itself.
                            if threads == 1.0 {
                                w.serial += add;
                            }
                            w.total += add;
                            *w.by_class.entry(mem_frac.to_bits()).or_default() += add;
                        }
                    }
                }
                (&Op::Sleep(ns), Times::PerThread(m)) => w.serial += m * ns as f64,
                (&Op::Sleep(ns), Times::Pooled(m)) if threads == 1.0 => w.serial += m * ns as f64,
                _ => {}
            }
        },
    );
    w
}

/// The bound of program `p` alone or in any mix on `topo`.
pub fn program(p: &Program, topo: &Topology) -> ProgramBound {
    let (threads, spawns) = thread_counts(p);
    let shared = shared_queues(p);
    let (pushed, items) = queue_items(p, &threads, &shared);
    let groups: Vec<GroupWork> = (0..p.groups.len())
        .map(|g| group_work(p, topo, g, threads[g], spawns[g] <= 1.0, &items))
        .collect();
    let mut work_by_class = shared_work(p, topo, &threads, &pushed, &shared);
    for g in &groups {
        for (c, w) in &g.by_class {
            *work_by_class.entry(*c).or_default() += w;
        }
    }
    let work_ns: f64 = work_by_class.values().sum();
    // A group's chain: from its creation, its longest thread, which is at
    // least its average one.
    let longest = |g: usize| {
        let w = &groups[g];
        if w.threads == 0.0 {
            0.0
        } else {
            w.serial.max(w.total / w.threads)
        }
    };
    let mut start = vec![f64::INFINITY; p.groups.len()];
    start[0] = 0.0;
    let main_end = main_chain(p, topo, &items, &mut start, &longest);
    // Groups created by other groups start no sooner than their creator.
    for _ in 0..p.groups.len() {
        for (g, group) in p.groups.iter().enumerate().skip(1) {
            for op in &group.ops {
                if let Op::Spawn { group: h, .. } = op {
                    let h = *h as usize;
                    start[h] = start[h].min(start[g]);
                }
            }
        }
    }
    let chain = start
        .iter()
        .enumerate()
        .skip(1)
        .filter(|(_, s)| s.is_finite())
        .map(|(g, s)| s + longest(g))
        .fold(main_end, f64::max);
    ProgramBound {
        name: p.name.clone(),
        turnaround_ns: chain.max(work_ns / own_capacity(p, topo)),
        work_ns,
        work_by_class,
    }
}

/// The most work per ns `p` can get done: the fastest of the machine's
/// cores, as many as it ever has threads (no more run at once), each at
/// the best rate it has for the program's steps.
fn own_capacity(p: &Program, topo: &Topology) -> f64 {
    let mut rates: Vec<f64> = topo
        .core_type_of
        .iter()
        .map(|&k| best_relative_rate(std::slice::from_ref(p), topo, k))
        .collect();
    rates.sort_by(|a, b| b.total_cmp(a));
    let usable = (p.total_threads.max(1) as usize).min(rates.len());
    rates[..usable].iter().sum()
}

/// The main thread's chain: its own steps and sleeps, each group it
/// creates starting where it stands, and a join waiting for the group.
fn main_chain(
    p: &Program,
    topo: &Topology,
    items: &[f64],
    start: &mut [f64],
    longest: &dyn Fn(usize) -> f64,
) -> f64 {
    let ops = &p.groups[0].ops;
    let mut t = 0.0;
    let mut chain = Chain {
        topo,
        items,
        start,
        longest,
    };
    chain.walk(ops, 0..ops.len(), &mut t);
    t
}

/// What walking the main thread's chain reads and records.
struct Chain<'a> {
    topo: &'a Topology,
    items: &'a [f64],
    start: &'a mut [f64],
    longest: &'a dyn Fn(usize) -> f64,
}

impl Chain<'_> {
    fn walk(&mut self, ops: &[Op], range: std::ops::Range<usize>, t: &mut f64) {
        let (topo, longest) = (self.topo, self.longest);
        let mut pc = range.start;
        while pc < range.end {
            match ops[pc] {
                Op::Compute {
                    work, mem_frac, cv, ..
                } => *t += work * fast_ns(topo, mem_frac) * least_share(cv, 0.0, 1.0, true, true),
                Op::Sleep(ns) => *t += ns as f64,
                Op::Spawn { group, .. } => {
                    let g = group as usize;
                    self.start[g] = self.start[g].min(*t);
                }
                Op::Join(group) => {
                    let g = group as usize;
                    if self.start[g].is_finite() {
                        *t = t.max(self.start[g] + longest(g));
                    }
                }
                Op::Loop { count, end } => {
                    let body = pc + 1..end as usize;
                    // The main thread is one thread: a loop until a queue
                    // closes runs once per item it pops.
                    let n = match count {
                        LoopCount::Times(n) => n as f64,
                        LoopCount::UntilClosed => {
                            popped_queue(&ops[body.clone()]).map_or(0.0, |q| self.items[q as usize])
                        }
                    };
                    for _ in 0..(n as u64).min(MAX_WALKED) {
                        self.walk(ops, body.clone(), t);
                    }
                    pc = end as usize;
                }
                _ => {}
            }
            pc += 1;
        }
    }
}

/// The best rate core type `k` has for any compute step of `programs`,
/// relative to the fastest core type's for that step (1 for the fastest).
fn best_relative_rate(programs: &[Program], topo: &Topology, k: usize) -> f64 {
    let mut best: f64 = 0.0;
    for p in programs {
        for g in &p.groups {
            for op in &g.ops {
                if let Op::Compute { mem_frac, .. } = *op {
                    best = best.max(topo.core_types[k].rate(mem_frac) * fast_ns(topo, mem_frac));
                }
            }
        }
    }
    if best == 0.0 {
        1.0
    } else {
        best.min(1.0)
    }
}

/// Mixes of up to this many programs get the least sum over every order in
/// which they could finish (2^n subsets); larger ones Smith's rule.
const MAX_ORDERED: usize = 12;

/// The least H_ANTT `programs` started together on `topo` can have, each
/// run once, given each program's T_SB (ns, in the same order).
///
/// Whatever the schedule, its programs finish in some order; the k-th to
/// finish ends no sooner than its own bound, nor before the machine could
/// have done all the work of the first k (each core type at its own rate
/// for each kind of step, [`least_time`]). The least weighted sum over
/// every order (found over subsets, the last of each subset chosen best)
/// is therefore a bound; with more programs than [`MAX_ORDERED`], Smith's
/// rule on the machine's best capacity stands in.
pub fn h_antt(programs: &[Program], topo: &Topology, t_sb_ns: &[f64]) -> f64 {
    let bounds: Vec<ProgramBound> = programs.iter().map(|p| program(p, topo)).collect();
    schedule_of(programs, topo, t_sb_ns, &bounds).h_antt
}

/// A program's bound in one run, from the steps it drew there (the
/// simulator reports them): its work exactly, not at the least its noise
/// allows, its longest chain of steps and sleeps (through spawns, joins
/// and barriers) and its busiest mutex's critical sections. It holds for
/// that run only (another run draws other sizes).
pub fn program_in_run(p: &Program, topo: &Topology, drawn: &DrawnWork) -> ProgramBound {
    let fixed = program(p, topo);
    let work_ns: f64 = drawn.by_mem_frac.values().sum();
    let capacity = own_capacity(p, topo);
    ProgramBound {
        name: p.name.clone(),
        turnaround_ns: fixed
            .turnaround_ns
            .max(drawn.longest_path_ns)
            .max(drawn.longest_held_ns)
            .max(work_ns / capacity),
        work_ns,
        work_by_class: drawn.by_mem_frac.clone(),
    }
}

/// [`h_antt`] of one run, from the steps its programs drew there
/// ([`program_in_run`]), in the programs' order.
pub fn h_antt_of_run(
    programs: &[Program],
    topo: &Topology,
    t_sb_ns: &[f64],
    drawn: &[&DrawnWork],
) -> f64 {
    schedule_of_run(programs, topo, t_sb_ns, drawn).h_antt
}

/// The bound's own schedule: the order in which the programs finish when
/// the mix meets its H_ANTT bound, and how soon each could end in it.
/// What a policy does differently from it is where its distance lies.
#[derive(Clone, Debug, PartialEq)]
pub struct BoundSchedule {
    /// The least H_ANTT ([`h_antt_of_run`]).
    pub h_antt: f64,
    /// Program indices, first to finish first.
    pub order: Vec<usize>,
    /// Per program (the mix's order), its earliest end in that order, ns.
    pub end_ns: Vec<f64>,
}

/// [`BoundSchedule`] of one run, from its programs' draws.
pub fn schedule_of_run(
    programs: &[Program],
    topo: &Topology,
    t_sb_ns: &[f64],
    drawn: &[&DrawnWork],
) -> BoundSchedule {
    assert_eq!(programs.len(), drawn.len(), "one draw per program");
    let bounds: Vec<ProgramBound> = programs
        .iter()
        .zip(drawn)
        .map(|(p, d)| program_in_run(p, topo, d))
        .collect();
    schedule_of(programs, topo, t_sb_ns, &bounds)
}

fn schedule_of(
    programs: &[Program],
    topo: &Topology,
    t_sb_ns: &[f64],
    bounds: &[ProgramBound],
) -> BoundSchedule {
    assert_eq!(programs.len(), t_sb_ns.len(), "one T_SB per program");
    let n = programs.len();
    let weight: Vec<f64> = t_sb_ns.iter().map(|t| 1.0 / (n as f64 * t)).collect();
    if n > MAX_ORDERED {
        return smith(programs, topo, bounds, &weight);
    }
    // best[S]: the least weighted sum of the completions of the programs
    // in S if they are the first |S| to finish; last[S], the one of S that
    // finishes last then, and when.
    let mut best = vec![f64::INFINITY; 1 << n];
    let mut last = vec![(0usize, 0.0f64); 1 << n];
    best[0] = 0.0;
    for set in 1usize..(1 << n) {
        let mut work: BTreeMap<u64, f64> = BTreeMap::new();
        for (i, b) in bounds.iter().enumerate() {
            if set & (1 << i) != 0 {
                for (c, w) in &b.work_by_class {
                    *work.entry(*c).or_default() += w;
                }
            }
        }
        let all_done = least_time(topo, &work);
        for i in 0..n {
            if set & (1 << i) != 0 {
                let end = all_done.max(bounds[i].turnaround_ns);
                let v = best[set & !(1 << i)] + weight[i] * end;
                if v < best[set] {
                    best[set] = v;
                    last[set] = (i, end);
                }
            }
        }
    }
    let mut order = Vec::with_capacity(n);
    let mut end_ns = vec![0.0; n];
    let mut set = (1usize << n) - 1;
    while set != 0 {
        let (i, end) = last[set];
        order.push(i);
        end_ns[i] = end;
        set &= !(1 << i);
    }
    order.reverse();
    BoundSchedule {
        h_antt: best[(1 << n) - 1],
        order,
        end_ns,
    }
}

/// The least time in which `topo`'s cores could do `work` (ns at the
/// fastest rate, by memory fraction) if it could be cut anywhere: each
/// core type counted as if it alone chose the kinds of work it does best
/// (letting two types claim the same work only makes the time shorter, so
/// the answer stays a lower bound).
pub fn least_time(topo: &Topology, work: &BTreeMap<u64, f64>) -> f64 {
    let total: f64 = work.values().sum();
    if total <= 0.0 {
        return 0.0;
    }
    // Per core type: its cores, and each kind of work at its rate relative
    // to the fastest, best first.
    let types: Vec<(f64, Vec<(f64, f64)>)> = present_types(topo)
        .map(|k| {
            let cores = topo.core_type_of.iter().filter(|&&t| t == k).count() as f64;
            let mut kinds: Vec<(f64, f64)> = work
                .iter()
                .map(|(c, w)| {
                    let m = f64::from_bits(*c);
                    ((topo.core_types[k].rate(m) * fast_ns(topo, m)).min(1.0), *w)
                })
                .collect();
            kinds.sort_by(|a, b| b.0.total_cmp(&a.0));
            (cores, kinds)
        })
        .collect();
    // Work the machine can do in time t, each type on its best kinds.
    let done_in = |t: f64| -> f64 {
        let mut done = 0.0;
        for (cores, kinds) in &types {
            let mut time = cores * t;
            for &(rate, w) in kinds {
                if time <= 0.0 || rate <= 0.0 {
                    break;
                }
                let used = (w / rate).min(time);
                done += used * rate;
                time -= used;
            }
        }
        done
    };
    // done_in grows with t: bisect between a time too short and one enough
    // (the fastest cores alone do it all in total / their count).
    let cores = topo.num_cores() as f64;
    let (mut lo, mut hi) = (total / cores, total);
    if done_in(lo) >= total {
        return lo;
    }
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if done_in(mid) >= total {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    lo
}

/// Smith's rule on the machine's capacity, each core counted at the best
/// rate it has for any step of the mix.
fn smith(
    programs: &[Program],
    topo: &Topology,
    bounds: &[ProgramBound],
    weight: &[f64],
) -> BoundSchedule {
    let capacity: f64 = topo
        .core_type_of
        .iter()
        .map(|&k| best_relative_rate(programs, topo, k))
        .sum();
    let own: f64 = bounds
        .iter()
        .zip(weight)
        .map(|(b, w)| w * b.turnaround_ns.max(b.work_ns / capacity))
        .sum();
    let mut order: Vec<usize> = (0..programs.len()).collect();
    order.sort_by(|&a, &b| {
        (bounds[a].work_ns / weight[a]).total_cmp(&(bounds[b].work_ns / weight[b]))
    });
    let mut done = 0.0;
    let mut sum = 0.0;
    let mut end_ns = vec![0.0; programs.len()];
    for &i in &order {
        done += bounds[i].work_ns / capacity;
        sum += weight[i] * done;
        // Each end is at least both terms (their weighted sum may exceed
        // the bound, which is the larger of the two sums).
        end_ns[i] = done.max(bounds[i].turnaround_ns);
    }
    BoundSchedule {
        h_antt: own.max(sum),
        order,
        end_ns,
    }
}
