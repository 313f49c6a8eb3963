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
//! simulator calls at every such move. A thread that stops being a member
//! keeps its entry in its application's SF order (*kept*, its class kept
//! current by the same walks), so that a sleep and a wake-up, or a steal,
//! cost no move in that order unless its class or SF changed meanwhile.

use colab_core::{CoreId, CoreMask, Nanos, ThreadId};
use std::collections::BTreeSet;

/// An ordered set's entry: an order key above a thread id, as one integer,
/// so that a search compares once per entry.
type Key = u128;

fn key(k: u64, t: ThreadId) -> Key {
    (Key::from(k) << 32) | Key::from(t.0)
}

/// A vruntime as an order key (the sign bit flipped: unsigned order).
fn vr_key(vr: i64, t: ThreadId) -> Key {
    key((vr as u64) ^ (1 << 63), t)
}

fn tid(k: Key) -> ThreadId {
    ThreadId(k as u32)
}

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
    /// In its application's `by_cls` under `sf`, `cls` its class under the
    /// application's cached context (every member is; others may be).
    kept: bool,
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
            kept: false,
        }
    }
}

#[derive(Clone, Debug, Default)]
struct Prog {
    /// Kept threads per class, in SF order (empty where classes are fixed).
    by_cls: [BTreeSet<Key>; NCLS],
    /// The context every kept thread's class was computed under.
    ctx: Ctx,
    members: usize,
    /// Members per class (a whole-class move needs all of a class's).
    placed: [usize; NCLS],
    /// Kept threads.
    kept: usize,
}

/// Per class: the fast cores' queues (by vruntime), the queued threads per
/// cluster (by time runnable), the threads running on slow cores likewise,
/// and the fast cores running a thread of the class. Machine-wide orders
/// are merged from the clusters' (a machine has a few clusters): one set
/// fewer to keep at every move.
#[derive(Clone, Debug, Default)]
pub(super) struct CandIndex {
    mem: Vec<Member>,
    progs: Vec<Prog>,
    fast: CoreMask,
    cluster_of: Vec<usize>,
    /// Classes never change (RR): no per-application SF order is kept.
    fixed: bool,
    local: Vec<Vec<BTreeSet<Key>>>,
    q_cl: Vec<Vec<BTreeSet<Key>>>,
    r_cl: Vec<Vec<BTreeSet<Key>>>,
    /// Candidates (queued, or running on a slow core) per class.
    cands: [usize; NCLS],
    /// Members per class.
    count: [usize; NCLS],
    /// Classes moved whole (tests).
    #[cfg(test)]
    wholes: usize,
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
    /// `fixed`: every thread's class is the same whatever its SF and its
    /// application's state (the caller's `class` never varies).
    pub fn new(fast: CoreMask, cluster_of: Vec<usize>, clusters: usize, fixed: bool) -> CandIndex {
        let cores = cluster_of.len();
        CandIndex {
            mem: Vec::new(),
            progs: Vec::new(),
            fast,
            cluster_of,
            fixed,
            local: vec![vec![BTreeSet::new(); cores]; NCLS],
            q_cl: vec![vec![BTreeSet::new(); clusters]; NCLS],
            r_cl: vec![vec![BTreeSet::new(); clusters]; NCLS],
            cands: [0; NCLS],
            count: [0; NCLS],
            #[cfg(test)]
            wholes: 0,
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
            self.cands[j] = 0;
            self.count[j] = 0;
            self.run_fast[j] = CoreMask::EMPTY;
            self.queued_fast[j] = CoreMask::EMPTY;
        }
    }

    /// Takes `t` out of the per-place sets of its class.
    fn unplace(&mut self, t: ThreadId) {
        let m = self.mem[t.idx()];
        let j = m.cls;
        self.count[j] -= usize::from(m.loc != Loc::Out);
        self.progs[m.prog].placed[j] -= usize::from(m.loc != Loc::Out);
        match m.loc {
            Loc::Out => {}
            Loc::Queued(c) => {
                let cl = self.cluster_of[c.idx()];
                self.q_cl[j][cl].remove(&key(m.since, t));
                self.cands[j] -= 1;
                if self.fast.contains(c) {
                    let set = &mut self.local[j][c.idx()];
                    set.remove(&vr_key(m.vr, t));
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
                    self.r_cl[j][cl].remove(&key(m.since, t));
                    self.cands[j] -= 1;
                }
            }
        }
    }

    /// Puts `t` in the per-place sets of its class.
    fn replace(&mut self, t: ThreadId) {
        let m = self.mem[t.idx()];
        let j = m.cls;
        self.count[j] += usize::from(m.loc != Loc::Out);
        self.progs[m.prog].placed[j] += usize::from(m.loc != Loc::Out);
        match m.loc {
            Loc::Out => {}
            Loc::Queued(c) => {
                let cl = self.cluster_of[c.idx()];
                self.q_cl[j][cl].insert(key(m.since, t));
                self.cands[j] += 1;
                if self.fast.contains(c) {
                    self.local[j][c.idx()].insert(vr_key(m.vr, t));
                    self.queued_fast[j].insert(c);
                }
            }
            Loc::Running(c) => {
                if self.fast.contains(c) {
                    self.run_fast[j].insert(c);
                } else {
                    let cl = self.cluster_of[c.idx()];
                    self.r_cl[j][cl].insert(key(m.since, t));
                    self.cands[j] += 1;
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
        by[m.cls].remove(&key(m.sf, t));
        by[j].insert(key(m.sf, t));
        self.mem[t.idx()].cls = j;
        self.replace(t);
    }

    /// `t` of application `prog`, SF key `sf`, is now at `loc` (queued with
    /// vruntime `vr`, runnable since `since`), or no longer a member
    /// (`Loc::Out`). A thread that becomes a member gets its class from
    /// `class(ctx, t)` under the application's cached context (`now()` when
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
        now: impl FnOnce() -> Ctx,
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
        if m.kept && (m.prog != prog || m.sf != sf) {
            self.unkeep(t);
        }
        let m = self.mem[t.idx()];
        self.progs[m.prog].members -= usize::from(m.loc != Loc::Out);
        // Called at most once, and only where the application has no member.
        let mut now = Some(now);
        // Kept with the same keys (moved, left, or back): its class stands,
        // unless it comes back to an application with no member, whose
        // cached context may be old.
        let mut stands = m.kept;
        if m.kept && loc != Loc::Out && m.loc == Loc::Out && self.progs[prog].members == 0 {
            let ctx = self.progs[prog].ctx;
            if let Some(cx) = now.take().map(|f| f()).filter(|&cx| cx != ctx) {
                // Out of the walk: it is re-classed under `cx` below.
                stands = false;
                self.unkeep(t);
                self.resync(prog, cx, &class);
            }
        }
        if stands || loc == Loc::Out {
            let mm = &mut self.mem[t.idx()];
            (mm.loc, mm.since, mm.vr, mm.sf, mm.prog) = (loc, since, vr, sf, prog);
            self.progs[prog].members += usize::from(loc != Loc::Out);
            self.replace(t);
            return;
        }
        if self.progs[prog].members == 0 {
            if let Some(cx) = now.take().map(|f| f()) {
                if self.progs[prog].ctx != cx {
                    self.resync(prog, cx, &class);
                }
            }
        }
        let p = &mut self.progs[prog];
        let cls = class(&p.ctx, t);
        if !self.fixed {
            p.by_cls[cls].insert(key(sf, t));
        }
        p.members += 1;
        p.kept += 1;
        self.mem[t.idx()] = Member {
            loc,
            prog,
            cls,
            sf,
            since,
            vr,
            kept: true,
        };
        self.replace(t);
    }

    /// Takes a thread that is not a member out of its application's SF
    /// order (it exited: its entry would only cost walks).
    pub fn forget(&mut self, t: ThreadId) {
        if self
            .mem
            .get(t.idx())
            .is_some_and(|m| m.kept && m.loc == Loc::Out)
        {
            self.unkeep(t);
        }
    }

    /// Takes kept `t` out of its application's SF order (not out of the
    /// per-place sets).
    fn unkeep(&mut self, t: ThreadId) {
        let m = &mut self.mem[t.idx()];
        m.kept = false;
        let p = &mut self.progs[m.prog];
        if !self.fixed {
            p.by_cls[m.cls].remove(&key(m.sf, t));
        }
        p.kept -= 1;
    }

    /// A thread's SF changed to `sf`: a kept one gets its class under its
    /// application's cached context.
    pub fn resf(&mut self, t: ThreadId, sf: u64, class: impl Fn(&Ctx, ThreadId) -> usize) {
        let Some(&m) = self.mem.get(t.idx()) else {
            return;
        };
        if !m.kept || m.sf == sf || self.fixed {
            self.mem[t.idx()].sf = sf;
            return;
        }
        self.unplace(t);
        let p = &mut self.progs[m.prog];
        p.by_cls[m.cls].remove(&key(m.sf, t));
        let j = class(&p.ctx, t);
        p.by_cls[j].insert(key(sf, t));
        let mm = &mut self.mem[t.idx()];
        mm.sf = sf;
        mm.cls = j;
        self.replace(t);
    }

    /// Brings every application with kept threads to its context `ctx(p)`,
    /// re-classing (with `class`) the threads whose class changed.
    pub fn sync(&mut self, ctx: impl Fn(usize) -> Ctx, class: impl Fn(&Ctx, ThreadId) -> usize) {
        if self.fixed {
            return;
        }
        for p in 0..self.progs.len() {
            if self.progs[p].kept == 0 {
                continue;
            }
            let now = ctx(p);
            if self.progs[p].ctx != now {
                self.resync(p, now, &class);
            }
        }
    }

    /// Brings application `p`'s kept threads to context `now`.
    fn resync(&mut self, p: usize, now: Ctx, class: &impl Fn(&Ctx, ThreadId) -> usize) {
        self.progs[p].ctx = now;
        if self.fixed {
            return;
        }
        // A boosted thread ranks above threads of larger SF: the sole
        // runnable thread is kept out of the walk (and of the counts a
        // whole-class move reads) and re-classed alone.
        let sole = now
            .sole
            .filter(|&s| self.mem.get(s.idx()).is_some_and(|m| m.kept && m.prog == p));
        if let Some(s) = sole {
            let m = self.mem[s.idx()];
            self.progs[p].by_cls[m.cls].remove(&key(m.sf, s));
            self.unplace(s);
        }
        for j in 0..NCLS {
            if self.move_whole(p, j, &now, class) {
                continue;
            }
            // From the low end up, while the class dropped; from the
            // high end down, while it rose; what lies between is
            // bracketed by threads that kept class j.
            while let Some(&k) = self.progs[p].by_cls[j].first() {
                let (t, k) = (tid(k), class(&now, tid(k)));
                if k >= j {
                    break;
                }
                self.set_cls(t, k);
            }
            while let Some(&k) = self.progs[p].by_cls[j].last() {
                let (t, k) = (tid(k), class(&now, tid(k)));
                if k <= j {
                    break;
                }
                self.set_cls(t, k);
            }
        }
        if let Some(s) = sole {
            let j = class(&now, s);
            let m = &mut self.mem[s.idx()];
            m.cls = j;
            self.progs[p].by_cls[j].insert(key(m.sf, s));
            self.replace(s);
        }
    }

    /// Moves application `p`'s kept threads of class `j` to another class
    /// at once, when all of them change to the same class `k` (its first
    /// and last in SF order do: the class is monotone in the SF), its
    /// members among them are all the members of class `j`, class `k` has
    /// no members and `p` no kept thread in `k`: then class `j`'s sets
    /// become class `k`'s as they are. An application's threads of
    /// one SF (PA: all of them) change class together at every crossing of
    /// a threshold by its runnable count; one by one, that is a few set
    /// moves per thread. Whether it applies changes nothing in the result.
    fn move_whole(
        &mut self,
        p: usize,
        j: usize,
        now: &Ctx,
        class: &impl Fn(&Ctx, ThreadId) -> usize,
    ) -> bool {
        let pr = &self.progs[p];
        let by = &pr.by_cls[j];
        let (Some(&lo), Some(&hi)) = (by.first(), by.last()) else {
            return false;
        };
        let k = class(now, tid(lo));
        if k == j
            || self.count[k] != 0
            || self.count[j] != pr.placed[j]
            || !pr.by_cls[k].is_empty()
            || class(now, tid(hi)) != k
        {
            return false;
        }
        self.local.swap(j, k);
        self.q_cl.swap(j, k);
        self.r_cl.swap(j, k);
        self.cands.swap(j, k);
        self.count.swap(j, k);
        self.run_fast.swap(j, k);
        self.queued_fast.swap(j, k);
        let pr = &mut self.progs[p];
        pr.placed.swap(j, k);
        let by = &mut pr.by_cls;
        by.swap(j, k);
        for &e in &by[k] {
            self.mem[tid(e).idx()].cls = k;
        }
        #[cfg(test)]
        {
            self.wholes += 1;
        }
        true
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

    /// Kept threads, for checks: (thread, class), and whether the entry is
    /// where its class and SF put it.
    #[cfg(test)]
    fn kept(&self) -> Vec<(ThreadId, usize, bool)> {
        let mut out = Vec::new();
        for (i, m) in self.mem.iter().enumerate().filter(|(_, m)| m.kept) {
            let t = ThreadId(i as u32);
            let there = self.fixed || self.progs[m.prog].by_cls[m.cls].contains(&key(m.sf, t));
            out.push((t, m.cls, there));
        }
        let n: usize = self.progs.iter().map(|p| p.kept).sum();
        let entries: usize = self
            .progs
            .iter()
            .flat_map(|p| &p.by_cls)
            .map(BTreeSet::len)
            .sum();
        assert_eq!(n, out.len(), "kept count");
        assert!(self.fixed || entries == n, "entries {entries} for {n} kept");
        out
    }

    /// The highest class with a candidate (a queued thread, or one running
    /// on a slow core).
    pub fn top(&self) -> Option<usize> {
        (0..NCLS).rev().find(|&j| self.cands[j] > 0)
    }

    /// The first (earliest runnable, then lowest id) of `sets`' entries.
    fn first_of<'a>(sets: impl Iterator<Item = &'a BTreeSet<Key>>) -> Option<Key> {
        sets.filter_map(|s| s.first().copied()).min()
    }

    /// Fast core `c`'s best candidate: the highest class, then local (by
    /// vruntime), then the own cluster's queues, its slow cores' running
    /// threads, other clusters' queues, their running threads (each by time
    /// runnable), then the lowest thread id.
    pub fn best_for(&self, c: CoreId) -> Option<(usize, Cand)> {
        let j = self.top()?;
        if let Some(&k) = self.local[j][c.idx()].first() {
            return Some((j, Cand::Local(tid(k))));
        }
        let cl = self.cluster_of[c.idx()];
        let core_of = |t: ThreadId| match self.mem[t.idx()].loc {
            Loc::Queued(o) | Loc::Running(o) => o,
            Loc::Out => unreachable!("a candidate is queued or running"),
        };
        // The own cluster's sets are empty when the machine-wide ones are
        // read, so these are the machine-wide firsts.
        let queued = || Self::first_of(self.q_cl[j].iter());
        let running = || Self::first_of(self.r_cl[j].iter());
        let cand = if let Some(&k) = self.q_cl[j][cl].first() {
            Cand::Queued(core_of(tid(k)), tid(k))
        } else if let Some(&k) = self.r_cl[j][cl].first() {
            Cand::Running(core_of(tid(k)), tid(k))
        } else if let Some(k) = queued() {
            Cand::Queued(core_of(tid(k)), tid(k))
        } else if let Some(k) = running() {
            Cand::Running(core_of(tid(k)), tid(k))
        } else {
            unreachable!("class {j} has a candidate")
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
    /// core), by time runnable then id: the clusters' sets merged.
    pub fn cands_of(&self, j: usize) -> impl Iterator<Item = ThreadId> + '_ {
        let sets = self.q_cl[j].iter().chain(&self.r_cl[j]);
        Merge {
            heads: sets.map(|s| s.iter().peekable()).collect(),
        }
        .map(tid)
    }
}

/// Ordered sets' entries, merged in order (a few sets: the first is found
/// by a pass over their heads).
struct Merge<'a> {
    heads: Vec<std::iter::Peekable<std::collections::btree_set::Iter<'a, Key>>>,
}

impl Iterator for Merge<'_> {
    type Item = Key;
    fn next(&mut self) -> Option<Key> {
        let i = (0..self.heads.len())
            .filter_map(|i| self.heads[i].peek().map(|&&k| (k, i)))
            .min()?
            .1;
        self.heads[i].next().copied()
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
        Forget {
            t: usize,
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
            4 => (0..THREADS, 0..3u8, 0..CORES, 0..6u64, -3..6i64)
                .prop_map(|(t, loc, core, since, vr)| Op::Put { t, loc, core, since, vr }),
            1 => (0..THREADS, 0..6u64).prop_map(|(t, sf)| Op::Resf { t, sf }),
            1 => (0..THREADS).prop_map(|t| Op::Forget { t }),
            1 => (0..PROGS, 0..8u32, proptest::option::of(0..THREADS), 0..3u32)
                .prop_map(|(p, n, sole, created)| Op::Ctx { p, n, sole, created }),
        ]
    }

    /// A class monotone in the SF key under one context, but for the sole
    /// thread (boosted); with `fixed`, one class for all.
    fn class(fixed: bool, sf: &[u64], cx: &Ctx, t: ThreadId) -> usize {
        let s = sf[t.idx()];
        if fixed {
            4
        } else if s == 0 {
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
        fn index_agrees_with_a_pass_over_the_members(
            ops in proptest::collection::vec(op(), 1..120),
            fixed in any::<bool>(),
        ) {
            let mut fast = CoreMask::EMPTY;
            for c in (0..CORES).filter(|&c| is_fast(c)) {
                fast.insert(CoreId(c as u16));
            }
            let mut ix = CandIndex::new(fast, (0..CORES).map(|c| c / 2).collect(), CORES / 2, fixed);
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
                                let f = |cx: &Ctx, x: ThreadId| class(fixed, &sf, cx, x);
                                ix.put(ThreadId(o as u32), prog(o), sf[o], Loc::Out, 0, 0, || ctx[prog(o)], f);
                                locs[o] = Loc::Out;
                            }
                        }
                        let f = |cx: &Ctx, x: ThreadId| class(fixed, &sf, cx, x);
                        ix.put(ThreadId(t as u32), prog(t), sf[t], loc, s, v, || ctx[prog(t)], f);
                        (locs[t], since[t], vr[t]) = (loc, s, v);
                    }
                    Op::Resf { t, sf: s } => {
                        sf[t] = s;
                        let f = |cx: &Ctx, x: ThreadId| class(fixed, &sf, cx, x);
                        ix.resf(ThreadId(t as u32), s, f);
                    }
                    Op::Forget { t } => ix.forget(ThreadId(t as u32)),
                    Op::Ctx { p, n, sole, created } => {
                        let sole = sole.filter(|&s| prog(s) == p).map(|s| ThreadId(s as u32));
                        ctx[p] = Ctx { n, sole, seq: None, boost_used: 0, created };
                    }
                }
                ix.sync(|p| ctx[p], |cx, x| class(fixed, &sf, cx, x));
                let cls: Vec<usize> = (0..THREADS)
                    .map(|t| class(fixed, &sf, &ctx[prog(t)], ThreadId(t as u32)))
                    .collect();
                // Kept threads, members or not, hold their class now.
                for (t, j, there) in ix.kept() {
                    prop_assert!(there, "entry of {}", t);
                    prop_assert_eq!(j, cls[t.idx()], "kept class of {}", t);
                }
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

    /// One application whose threads share an SF (PA): a change of its
    /// runnable count moves its class whole, and the index then agrees with
    /// a pass, as when threads move one by one.
    #[test]
    fn a_class_moves_whole_when_all_its_threads_change_together() {
        let mut fast = CoreMask::EMPTY;
        (0..4).for_each(|c| fast.insert(CoreId(c)));
        let mut ix = CandIndex::new(fast, (0..CORES).map(|c| c / 2).collect(), CORES / 2, false);
        let sf = vec![3u64; THREADS];
        let f = |cx: &Ctx, x: ThreadId| class(false, &sf, cx, x);
        let mut ctx = Ctx {
            n: 2,
            created: 8,
            ..Ctx::default()
        };
        for t in 0..8usize {
            let loc = match t % 3 {
                0 => Loc::Queued(CoreId((t % CORES) as u16)),
                1 => Loc::Running(CoreId(t as u16)),
                _ => Loc::Queued(CoreId(5)),
            };
            ix.put(
                ThreadId(t as u32 * PROGS as u32),
                0,
                3,
                loc,
                t as u64,
                -(t as i64),
                || ctx,
                f,
            );
        }
        let before = ix.best_for(CoreId(0));
        let classes = |ix: &CandIndex| ix.members().map(|(_, j, ..)| j).collect::<Vec<_>>();
        assert_eq!(classes(&ix), vec![4; 8]);
        ctx.n = 9;
        ix.sync(|_| ctx, f);
        assert_eq!(ix.wholes, 1);
        assert_eq!(classes(&ix), vec![1; 8]);
        let after = ix.best_for(CoreId(0));
        assert_eq!(before.map(|(_, c)| c), after.map(|(_, c)| c));
        assert_eq!(after.map(|(j, _)| j), Some(1));
        assert_eq!(ix.top(), Some(1));
        assert!(ix.running_fast(4).is_empty() && !ix.running_fast(1).is_empty());
    }
}
