//! The threads a fast core may take, kept by utility class, so that a pick
//! reads the first entry of a few ordered sets instead of ranking every
//! queued thread of the machine.
//!
//! A thread's class depends on its SF and on its application's state (the
//! runnable count, and the boost of a sequential phase), which changes at
//! nearly every wake-up; so the class of each member is cached together
//! with the application state it was computed under (its *context*), and
//! re-derived only when a query finds the context changed. Under one
//! context the class is monotone in the SF (the approximate UF grows with
//! the SF; a boosted thread is the only runnable one of its application),
//! so each application keeps its members per class in SF order, and only
//! the members at the ends of a class can change class: a context change
//! re-classes from the ends inwards, and its cost is the number of threads
//! that change class, not the number of threads.
//!
//! Members are the runnable and running threads; where they are (queued on
//! a core, running on a core) comes from the policy's hooks, which the
//! simulator calls at every such move.

use colab_core::{CoreId, CoreMask, Nanos, ThreadId};
use std::collections::BTreeSet;

/// Classes: no SF yet (0), then the utility classes in increasing order.
pub(super) const NCLS: usize = 6;

/// What the class of an application's thread depends on besides its SF.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(super) struct Ctx {
    /// Runnable (or running) threads of the application.
    pub n: u32,
    /// The only runnable thread, where there is exactly one.
    pub sole: Option<ThreadId>,
    /// The serial thread of the current sequential phase, its boost used.
    pub seq: Option<ThreadId>,
    pub boost_used: u32,
    /// Threads the application has created.
    pub created: u32,
}

/// Where a member is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Loc {
    /// Not runnable, or between two places (not a member).
    Out,
    Queued(CoreId),
    Running(CoreId),
}

#[derive(Clone, Copy, Debug)]
struct Member {
    loc: Loc,
    prog: usize,
    cls: usize,
    /// SF order key (0: no SF).
    sf: u64,
    /// runnable_since when it was placed (fixed while queued or running).
    since: Nanos,
    /// Its vruntime when queued (fixed while queued).
    vr: i64,
}

impl Default for Member {
    fn default() -> Self {
        Member {
            loc: Loc::Out,
            prog: 0,
            cls: 0,
            sf: 0,
            since: 0,
            vr: 0,
        }
    }
}

#[derive(Clone, Debug, Default)]
struct Prog {
    /// Members per class, in SF order.
    by_cls: [BTreeSet<(u64, ThreadId)>; NCLS],
    /// The context every member's class was computed under.
    ctx: Ctx,
    members: usize,
}

/// Per class: the fast cores' queues (by vruntime), the queued threads per
/// cluster and machine-wide (by time runnable), the threads running on slow
/// cores likewise, and the fast cores running a thread of the class.
#[derive(Clone, Debug, Default)]
pub(super) struct CandIndex {
    mem: Vec<Member>,
    progs: Vec<Prog>,
    fast: CoreMask,
    cluster_of: Vec<usize>,
    local: Vec<Vec<BTreeSet<(i64, ThreadId)>>>,
    q_cl: Vec<Vec<BTreeSet<(Nanos, ThreadId)>>>,
    r_cl: Vec<Vec<BTreeSet<(Nanos, ThreadId)>>>,
    q_all: Vec<BTreeSet<(Nanos, ThreadId)>>,
    r_all: Vec<BTreeSet<(Nanos, ThreadId)>>,
    run_fast: Vec<CoreMask>,
    queued_fast: Vec<CoreMask>,
}

/// A thread a fast core may take, as `pick` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Cand {
    Local(ThreadId),
    Queued(CoreId, ThreadId),
    Running(CoreId, ThreadId),
}

impl CandIndex {
    pub fn new(fast: CoreMask, cluster_of: Vec<usize>, clusters: usize) -> CandIndex {
        let cores = cluster_of.len();
        CandIndex {
            mem: Vec::new(),
            progs: Vec::new(),
            fast,
            cluster_of,
            local: vec![vec![BTreeSet::new(); cores]; NCLS],
            q_cl: vec![vec![BTreeSet::new(); clusters]; NCLS],
            r_cl: vec![vec![BTreeSet::new(); clusters]; NCLS],
            q_all: vec![BTreeSet::new(); NCLS],
            r_all: vec![BTreeSet::new(); NCLS],
            run_fast: vec![CoreMask::EMPTY; NCLS],
            queued_fast: vec![CoreMask::EMPTY; NCLS],
        }
    }

    /// Forgets every member.
    pub fn clear(&mut self) {
        self.mem.clear();
        self.progs.clear();
        for j in 0..NCLS {
            self.local[j].iter_mut().for_each(BTreeSet::clear);
            self.q_cl[j].iter_mut().for_each(BTreeSet::clear);
            self.r_cl[j].iter_mut().for_each(BTreeSet::clear);
            self.q_all[j].clear();
            self.r_all[j].clear();
            self.run_fast[j] = CoreMask::EMPTY;
            self.queued_fast[j] = CoreMask::EMPTY;
        }
    }

    /// Takes `t` out of the per-place sets of its class.
    fn unplace(&mut self, t: ThreadId) {
        let m = self.mem[t.idx()];
        let j = m.cls;
        match m.loc {
            Loc::Out => {}
            Loc::Queued(c) => {
                let cl = self.cluster_of[c.idx()];
                self.q_cl[j][cl].remove(&(m.since, t));
                self.q_all[j].remove(&(m.since, t));
                if self.fast.contains(c) {
                    let set = &mut self.local[j][c.idx()];
                    set.remove(&(m.vr, t));
                    if set.is_empty() {
                        self.queued_fast[j].remove(c);
                    }
                }
            }
            Loc::Running(c) => {
                if self.fast.contains(c) {
                    self.run_fast[j].remove(c);
                } else {
                    let cl = self.cluster_of[c.idx()];
                    self.r_cl[j][cl].remove(&(m.since, t));
                    self.r_all[j].remove(&(m.since, t));
                }
            }
        }
    }

    /// Puts `t` in the per-place sets of its class.
    fn replace(&mut self, t: ThreadId) {
        let m = self.mem[t.idx()];
        let j = m.cls;
        match m.loc {
            Loc::Out => {}
            Loc::Queued(c) => {
                let cl = self.cluster_of[c.idx()];
                self.q_cl[j][cl].insert((m.since, t));
                self.q_all[j].insert((m.since, t));
                if self.fast.contains(c) {
                    self.local[j][c.idx()].insert((m.vr, t));
                    self.queued_fast[j].insert(c);
                }
            }
            Loc::Running(c) => {
                if self.fast.contains(c) {
                    self.run_fast[j].insert(c);
                } else {
                    let cl = self.cluster_of[c.idx()];
                    self.r_cl[j][cl].insert((m.since, t));
                    self.r_all[j].insert((m.since, t));
                }
            }
        }
    }

    fn set_cls(&mut self, t: ThreadId, j: usize) {
        let m = self.mem[t.idx()];
        if m.cls == j {
            return;
        }
        self.unplace(t);
        let by = &mut self.progs[m.prog].by_cls;
        by[m.cls].remove(&(m.sf, t));
        by[j].insert((m.sf, t));
        self.mem[t.idx()].cls = j;
        self.replace(t);
    }

    /// `t` of application `prog`, SF key `sf`, is now at `loc` (queued with
    /// vruntime `vr`, runnable since `since`), or no longer a member
    /// (`Loc::Out`). A thread that becomes a member gets its class from
    /// `class(ctx, t)` under the application's cached context (`now` when
    /// it has no members).
    #[allow(clippy::too_many_arguments)]
    pub fn put(
        &mut self,
        t: ThreadId,
        prog: usize,
        sf: u64,
        loc: Loc,
        since: Nanos,
        vr: i64,
        now: Ctx,
        class: impl Fn(&Ctx, ThreadId) -> usize,
    ) {
        if self.mem.len() <= t.idx() {
            self.mem.resize(t.idx() + 1, Member::default());
        }
        if self.progs.len() <= prog {
            self.progs.resize(prog + 1, Prog::default());
        }
        let m = self.mem[t.idx()];
        self.unplace(t);
        if m.loc != Loc::Out && loc != Loc::Out && m.prog == prog && m.sf == sf {
            // Moved, still a member with the same keys: its class stands.
            self.mem[t.idx()] = Member {
                loc,
                since,
                vr,
                ..m
            };
            self.replace(t);
            return;
        }
        if m.loc != Loc::Out {
            let p = &mut self.progs[m.prog];
            p.by_cls[m.cls].remove(&(m.sf, t));
            p.members -= 1;
        }
        let mut m = Member {
            loc,
            prog,
            cls: 0,
            sf,
            since,
            vr,
        };
        if loc != Loc::Out {
            let p = &mut self.progs[prog];
            if p.members == 0 {
                p.ctx = now;
            }
            m.cls = class(&p.ctx, t);
            p.by_cls[m.cls].insert((sf, t));
            p.members += 1;
        }
        self.mem[t.idx()] = m;
        self.replace(t);
    }

    /// A member's SF changed to `sf`: its class under its application's
    /// cached context.
    pub fn resf(&mut self, t: ThreadId, sf: u64, class: impl Fn(&Ctx, ThreadId) -> usize) {
        let Some(&m) = self.mem.get(t.idx()) else {
            return;
        };
        if m.loc == Loc::Out || m.sf == sf {
            if m.loc == Loc::Out {
                self.mem[t.idx()].sf = sf;
            }
            return;
        }
        self.unplace(t);
        let p = &mut self.progs[m.prog];
        p.by_cls[m.cls].remove(&(m.sf, t));
        let j = class(&p.ctx, t);
        p.by_cls[j].insert((sf, t));
        let mm = &mut self.mem[t.idx()];
        mm.sf = sf;
        mm.cls = j;
        self.replace(t);
    }

    /// Brings every application with members to its context `ctx(p)`,
    /// re-classing (with `class`) the members whose class changed.
    pub fn sync(&mut self, ctx: impl Fn(usize) -> Ctx, class: impl Fn(&Ctx, ThreadId) -> usize) {
        for p in 0..self.progs.len() {
            if self.progs[p].members == 0 {
                continue;
            }
            let now = ctx(p);
            if self.progs[p].ctx == now {
                continue;
            }
            self.progs[p].ctx = now;
            // A boosted thread ranks above threads of larger SF: the sole
            // runnable thread is kept out of the walk and re-classed alone.
            let sole = now.sole.filter(|&s| {
                self.mem
                    .get(s.idx())
                    .is_some_and(|m| m.loc != Loc::Out && m.prog == p)
            });
            if let Some(s) = sole {
                let m = self.mem[s.idx()];
                self.progs[p].by_cls[m.cls].remove(&(m.sf, s));
            }
            for j in 0..NCLS {
                // From the low end up, while the class dropped; from the
                // high end down, while it rose; what lies between is
                // bracketed by threads that kept class j.
                while let Some(&(_, t)) = self.progs[p].by_cls[j].first() {
                    let k = class(&now, t);
                    if k >= j {
                        break;
                    }
                    self.set_cls(t, k);
                }
                while let Some(&(_, t)) = self.progs[p].by_cls[j].last() {
                    let k = class(&now, t);
                    if k <= j {
                        break;
                    }
                    self.set_cls(t, k);
                }
            }
            if let Some(s) = sole {
                let m = self.mem[s.idx()];
                self.progs[p].by_cls[m.cls].insert((m.sf, s));
                self.set_cls(s, class(&now, s));
            }
        }
    }

    /// Members, for checks: (thread, class, place, time runnable, vruntime
    /// when queued).
    pub fn members(&self) -> impl Iterator<Item = (ThreadId, usize, Loc, Nanos, i64)> + '_ {
        self.mem
            .iter()
            .enumerate()
            .filter(|(_, m)| m.loc != Loc::Out)
            .map(|(i, m)| (ThreadId(i as u32), m.cls, m.loc, m.since, m.vr))
    }

    /// The highest class with a candidate (a queued thread, or one running
    /// on a slow core).
    pub fn top(&self) -> Option<usize> {
        (0..NCLS)
            .rev()
            .find(|&j| !self.q_all[j].is_empty() || !self.r_all[j].is_empty())
    }

    /// Fast core `c`'s best candidate: the highest class, then local (by
    /// vruntime), then the own cluster's queues, its slow cores' running
    /// threads, other clusters' queues, their running threads (each by time
    /// runnable), then the lowest thread id.
    pub fn best_for(&self, c: CoreId) -> Option<(usize, Cand)> {
        let j = self.top()?;
        if let Some(&(_, t)) = self.local[j][c.idx()].first() {
            return Some((j, Cand::Local(t)));
        }
        let cl = self.cluster_of[c.idx()];
        let core_of = |t: ThreadId| match self.mem[t.idx()].loc {
            Loc::Queued(o) | Loc::Running(o) => o,
            Loc::Out => unreachable!("a candidate is queued or running"),
        };
        let own = (
            self.q_cl[j][cl].first(),
            self.r_cl[j][cl].first(),
            self.q_all[j].first(),
            self.r_all[j].first(),
        );
        let cand = match own {
            (Some(&(_, t)), _, _, _) => Cand::Queued(core_of(t), t),
            (None, Some(&(_, t)), _, _) => Cand::Running(core_of(t), t),
            (None, None, Some(&(_, t)), _) => Cand::Queued(core_of(t), t),
            (None, None, None, Some(&(_, t))) => Cand::Running(core_of(t), t),
            (None, None, None, None) => unreachable!("class {j} has a candidate"),
        };
        Some((j, cand))
    }

    /// The highest class queued on fast core `c`.
    pub fn best_local(&self, c: CoreId) -> Option<usize> {
        (0..NCLS).rev().find(|&j| self.queued_fast[j].contains(c))
    }

    /// Fast cores running a thread of class `j`.
    pub fn running_fast(&self, j: usize) -> CoreMask {
        self.run_fast[j]
    }

    /// Fast cores with a thread of class `j` queued.
    pub fn queued_fast(&self, j: usize) -> CoreMask {
        self.queued_fast[j]
    }

    /// The candidates of class `j` (queued anywhere or running on a slow
    /// core), by time runnable then id.
    pub fn cands_of(&self, j: usize) -> impl Iterator<Item = ThreadId> + '_ {
        Merge {
            a: self.q_all[j].iter().peekable(),
            b: self.r_all[j].iter().peekable(),
        }
        .map(|(_, t)| t)
    }
}

/// Two ordered sets' entries, merged in order.
struct Merge<I: Iterator> {
    a: std::iter::Peekable<I>,
    b: std::iter::Peekable<I>,
}

impl<'a, I: Iterator<Item = &'a (Nanos, ThreadId)>> Iterator for Merge<I> {
    type Item = (Nanos, ThreadId);
    fn next(&mut self) -> Option<Self::Item> {
        match (self.a.peek(), self.b.peek()) {
            (Some(x), Some(y)) if x <= y => self.a.next().copied(),
            (Some(_), Some(_)) => self.b.next().copied(),
            (Some(_), None) => self.a.next().copied(),
            (None, _) => self.b.next().copied(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::cmp::Reverse;

    const CORES: usize = 8;
    const THREADS: usize = 24;
    const PROGS: usize = 3;

    /// Cores 0-3 fast; clusters of two cores.
    fn is_fast(c: usize) -> bool {
        c < 4
    }

    #[derive(Clone, Debug)]
    enum Op {
        Put {
            t: usize,
            loc: u8,
            core: usize,
            since: u64,
            vr: i64,
        },
        Resf {
            t: usize,
            sf: u64,
        },
        Ctx {
            p: usize,
            n: u32,
            sole: Option<usize>,
            created: u32,
        },
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => (0..THREADS, 0..3u8, 0..CORES, 0..6u64, 0..6i64)
                .prop_map(|(t, loc, core, since, vr)| Op::Put { t, loc, core, since, vr }),
            1 => (0..THREADS, 0..6u64).prop_map(|(t, sf)| Op::Resf { t, sf }),
            1 => (0..PROGS, 0..8u32, proptest::option::of(0..THREADS), 0..3u32)
                .prop_map(|(p, n, sole, created)| Op::Ctx { p, n, sole, created }),
        ]
    }

    /// A class monotone in the SF key under one context, but for the sole
    /// thread (boosted).
    fn class(sf: &[u64], cx: &Ctx, t: ThreadId) -> usize {
        let s = sf[t.idx()];
        if s == 0 {
            0
        } else if cx.sole == Some(t) && cx.created > 1 {
            5
        } else {
            (1 + (s as usize * 3) / (cx.n as usize + 1)).min(4)
        }
    }

    /// The best candidate of fast core `c` by a pass over every member.
    fn naive_best(
        locs: &[Loc],
        cls: &[usize],
        since: &[u64],
        vr: &[i64],
        c: CoreId,
    ) -> Option<(usize, Cand)> {
        let cl = |x: CoreId| x.idx() / 2;
        type Key = (usize, u8, u8, i64, Reverse<ThreadId>);
        let mut best: Option<(Key, Cand)> = None;
        for (i, &loc) in locs.iter().enumerate() {
            let t = ThreadId(i as u32);
            let j = cls[i];
            let (key, cand) = match loc {
                Loc::Out => continue,
                Loc::Queued(o) if o == c => ((j, 2, 1, -vr[i], Reverse(t)), Cand::Local(t)),
                Loc::Queued(o) => {
                    let near = u8::from(cl(o) == cl(c));
                    (
                        (j, near, 1, -(since[i] as i64), Reverse(t)),
                        Cand::Queued(o, t),
                    )
                }
                Loc::Running(o) if !is_fast(o.idx()) => {
                    let near = u8::from(cl(o) == cl(c));
                    (
                        (j, near, 0, -(since[i] as i64), Reverse(t)),
                        Cand::Running(o, t),
                    )
                }
                Loc::Running(_) => continue,
            };
            if best.as_ref().is_none_or(|(k, _)| key > *k) {
                best = Some((key, cand));
            }
        }
        best.map(|(k, cand)| (k.0, cand))
    }

    proptest! {
        #[test]
        fn index_agrees_with_a_pass_over_the_members(ops in proptest::collection::vec(op(), 1..120)) {
            let mut fast = CoreMask::EMPTY;
            for c in (0..CORES).filter(|&c| is_fast(c)) {
                fast.insert(CoreId(c as u16));
            }
            let mut ix = CandIndex::new(fast, (0..CORES).map(|c| c / 2).collect(), CORES / 2);
            let mut sf = vec![0u64; THREADS];
            let mut locs = vec![Loc::Out; THREADS];
            let mut since = vec![0u64; THREADS];
            let mut vr = vec![0i64; THREADS];
            let mut ctx = [Ctx::default(); PROGS];
            let prog = |t: usize| t % PROGS;
            for op in ops {
                match op {
                    Op::Put { t, loc, core, since: s, vr: v } => {
                        let c = CoreId(core as u16);
                        let loc = match loc {
                            0 => Loc::Out,
                            1 => Loc::Queued(c),
                            _ => Loc::Running(c),
                        };
                        // One running thread per core: the one there leaves.
                        if let Loc::Running(_) = loc {
                            if let Some(o) = (0..THREADS).find(|&o| o != t && locs[o] == loc) {
                                let f = |cx: &Ctx, x: ThreadId| class(&sf, cx, x);
                                ix.put(ThreadId(o as u32), prog(o), sf[o], Loc::Out, 0, 0, ctx[prog(o)], f);
                                locs[o] = Loc::Out;
                            }
                        }
                        let f = |cx: &Ctx, x: ThreadId| class(&sf, cx, x);
                        ix.put(ThreadId(t as u32), prog(t), sf[t], loc, s, v, ctx[prog(t)], f);
                        (locs[t], since[t], vr[t]) = (loc, s, v);
                    }
                    Op::Resf { t, sf: s } => {
                        sf[t] = s;
                        let f = |cx: &Ctx, x: ThreadId| class(&sf, cx, x);
                        ix.resf(ThreadId(t as u32), s, f);
                    }
                    Op::Ctx { p, n, sole, created } => {
                        let sole = sole.filter(|&s| prog(s) == p).map(|s| ThreadId(s as u32));
                        ctx[p] = Ctx { n, sole, seq: None, boost_used: 0, created };
                    }
                }
                ix.sync(|p| ctx[p], |cx, x| class(&sf, cx, x));
                let cls: Vec<usize> = (0..THREADS)
                    .map(|t| class(&sf, &ctx[prog(t)], ThreadId(t as u32)))
                    .collect();
                for (t, j, loc, s, v) in ix.members() {
                    prop_assert_eq!(j, cls[t.idx()], "class of {}", t);
                    prop_assert_eq!((loc, s), (locs[t.idx()], since[t.idx()]));
                    if let Loc::Queued(_) = loc {
                        prop_assert_eq!(v, vr[t.idx()]);
                    }
                }
                prop_assert_eq!(ix.members().count(), locs.iter().filter(|&&l| l != Loc::Out).count());
                for c in (0..CORES).filter(|&c| is_fast(c)).map(|c| CoreId(c as u16)) {
                    prop_assert_eq!(ix.best_for(c), naive_best(&locs, &cls, &since, &vr, c));
                    let local = (0..THREADS).filter(|&t| locs[t] == Loc::Queued(c)).map(|t| cls[t]).max();
                    prop_assert_eq!(ix.best_local(c), local);
                    for j in 0..NCLS {
                        let runs = (0..THREADS).any(|t| locs[t] == Loc::Running(c) && cls[t] == j);
                        prop_assert_eq!(ix.running_fast(j).contains(c), runs);
                        let queued = (0..THREADS).any(|t| locs[t] == Loc::Queued(c) && cls[t] == j);
                        prop_assert_eq!(ix.queued_fast(j).contains(c), queued);
                    }
                }
                for j in 0..NCLS {
                    let mut want: Vec<(u64, ThreadId)> = (0..THREADS)
                        .filter(|&t| cls[t] == j && match locs[t] {
                            Loc::Queued(_) => true,
                            Loc::Running(o) => !is_fast(o.idx()),
                            Loc::Out => false,
                        })
                        .map(|t| (since[t], ThreadId(t as u32)))
                        .collect();
                    want.sort();
                    let want: Vec<ThreadId> = want.into_iter().map(|(_, t)| t).collect();
                    prop_assert_eq!(ix.cands_of(j).collect::<Vec<_>>(), want);
                }
            }
        }
    }
}
