//! ARM Global Task Scheduling (big.LITTLE MP, CONFIG_SCHED_HMP), as in the
//! Linaro Stable Kernel (LSK 3.10/3.14) kernel/sched/fair.c: CFS inside each
//! cluster, plus threshold-based migration of threads between clusters driven
//! by each thread's tracked load. Speedup-unaware.
//!
//! Modelled (LSK function names):
//! - The tracked load `load_avg_ratio` = 1024 * runnable_avg_sum /
//!   runnable_avg_period: geometric series of runnable (running or queued)
//!   time, half-life LOAD_AVG_PERIOD = 32 periods of 1024 us (per-entity load
//!   tracking; HMP_VARIABLE_SCALE's default load_avg_period_ms is
//!   LOAD_AVG_PERIOD, i.e. unscaled). Not capacity-invariant: a thread that
//!   is always runnable reaches 1024 on any core.
//! - New threads: `init_task_runnable_average` sets runnable_avg_sum =
//!   runnable_avg_period = one slice, so a new thread starts at full load,
//!   and `hmp_task_should_forkboost` / `hmp_select_faster_cpu` place it on
//!   the big cluster (the patch set's "always put non-kernel forking tasks
//!   on a big domain").
//! - Wake-up (`select_task_rq_fair` with HMP): the CFS choice, then
//!   `hmp_up_migration` (load > up threshold, next-up delay over, an idle
//!   core in the faster domain) or `hmp_down_migration` (load < down
//!   threshold, next-down delay over) to `hmp_select_slower_cpu`, else the
//!   thread stays in its previous cluster.
//! - Tick (`hmp_force_up_migration`): on a little core, the heaviest of the
//!   current thread and the first `hmp_max_tasks` queued ones moves up to an
//!   idle faster core if `hmp_up_migration` agrees; on a big core,
//!   `hmp_offload_down` moves the lightest starving thread of an overloaded
//!   core to an idle little core when no big core is idle.
//! - `hmp_idle_pull`: an idle big core pulls the heaviest thread above the up
//!   threshold from the slower cluster.
//! - CPU-level (cross-cluster) load balancing is disabled
//!   (DISABLE_CPU_SCHED_DOMAIN_BALANCE, required by SCHED_HMP): CfsCore
//!   balances only inside a cluster.
//!
//! Simplified: `hmp_domain_min_load` treats a core as idle when nothing is
//! on it (the patch set reads the core's own decayed runnable ratio, which
//! only reaches 0 some time after the core went idle); the tick check runs
//! on every tick of every busy core (the LSK runs it from the rebalance
//! softirq, whose interval we do not model); no frequency invariance (no
//! DVFS in the simulator, so the scale factor is 1); no priority filter
//! (every thread is nice 0); no little-packing (off by default); fork boost
//! goes to the fastest core type (the patch set picks the next faster domain
//! of the parent's core, the same thing on two-cluster machines).

use crate::cfs::CfsCore;
use colab_core::{
    Action, CoreId, CoreMask, Nanos, Pick, SchedState, StopReason, ThreadId, WakeKind, NS_PER_MS,
};
use std::collections::BTreeSet;

/// Thresholds and delays of the big.LITTLE MP patch set.
#[derive(Clone, Debug, PartialEq)]
pub struct GtsParams {
    /// `hmp_up_threshold`: minimum load to move to a faster core.
    pub up_threshold: f64,
    /// `hmp_down_threshold`: maximum load to move to a slower core.
    pub down_threshold: f64,
    /// `hmp_next_up_threshold`: delay before another up migration of the
    /// same thread.
    pub next_up_delay_ns: Nanos,
    /// `hmp_next_down_threshold`: delay before another down migration.
    pub next_down_delay_ns: Nanos,
}

impl Default for GtsParams {
    fn default() -> Self {
        GtsParams {
            // LSK kernel/sched/fair.c: `unsigned int hmp_up_threshold = 700;`
            // and `hmp_down_threshold = 512;` (out of 1024). The first
            // big.LITTLE MP releases used 512 / 256; vendor trees derived from
            // the LSK keep those two lines commented out above the 700 / 512
            // pair.
            up_threshold: 700.0,
            down_threshold: 512.0,
            // LSK: hmp_next_up_threshold = hmp_next_down_threshold = 4096, in
            // units of 1024 ns ("1024 ~= 1 ms"), compared as (now - last) >> 10.
            next_up_delay_ns: 4096 << 10,
            next_down_delay_ns: 4096 << 10,
        }
    }
}

/// `hmp_max_tasks`: queued entities examined besides the current one (LSK).
const HMP_MAX_TASKS: usize = 5;
/// `hmp_offload_down`: a thread whose running/runnable ratio is above
/// 768/1024 is not starving and stays ("> 768 ... >=25% ratio
/// running/runnable = starving", LSK).
const STARVATION_LIMIT: f64 = 768.0;
// Load half-life: LOAD_AVG_PERIOD = 32 periods of 1024 us (fair.c, 3.10),
// the same series as EEVDF's PELT.
use crate::eevdf::{pelt_decay, PELT_HALF_LIFE_NS as HALF_LIFE_NS};

/// A thread's runnable/running geometric sums (`struct sched_avg` with the
/// HMP `usage_avg_sum`), in ns-weighted units.
#[derive(Clone, Debug, Default)]
struct Track {
    last: Nanos,
    runnable: bool,
    running: bool,
    runnable_sum: f64,
    usage_sum: f64,
    period: f64,
}

impl Track {
    /// The sums brought forward to `now`: every ns counts with weight
    /// 2^(-age / half-life), continuously.
    fn at(&self, now: Nanos) -> (f64, f64, f64) {
        let dt = now.saturating_sub(self.last) as f64;
        let y = pelt_decay(dt);
        let add = HALF_LIFE_NS / std::f64::consts::LN_2 * (1.0 - y);
        let r = self.runnable_sum * y + if self.runnable { add } else { 0.0 };
        let u = self.usage_sum * y + if self.running { add } else { 0.0 };
        (r, u, self.period * y + add)
    }
    fn sync(&mut self, now: Nanos) {
        let (r, u, p) = self.at(now);
        self.runnable_sum = r;
        self.usage_sum = u;
        self.period = p;
        self.last = now;
    }
    /// `load_avg_ratio`.
    fn load(&self, now: Nanos) -> f64 {
        let (r, _, p) = self.at(now);
        if p <= 0.0 {
            0.0
        } else {
            1024.0 * r / p
        }
    }
    /// `hmp_task_starvation`: 1024 * usage / runnable.
    fn starvation(&self, now: Nanos) -> f64 {
        let (r, u, _) = self.at(now);
        if r <= 0.0 {
            0.0
        } else {
            1024.0 * u / r
        }
    }
}

/// The `gts` policy.
pub struct Gts {
    pub params: GtsParams,
    cfs: Option<CfsCore>,
    track: Vec<Track>,
    /// Not yet enqueued: its load is initialised at its first enqueue.
    fresh: Vec<bool>,
    /// Per thread: `hmp_last_up_migration` / `hmp_last_down_migration`.
    last_up: Vec<Option<Nanos>>,
    last_down: Vec<Option<Nanos>>,
    /// Per core: time of the last HMP migration onto it (tie-break of
    /// `hmp_domain_min_load`).
    core_last_mig: Vec<Nanos>,
    /// Per cluster, its cores by (`core_last_mig`, id) on machines of more
    /// than 64 cores (empty otherwise), so that `hmp_domain_min_load` walks
    /// them in its order instead of passing over a domain; per cluster, so
    /// that the walk does not pass over other clusters' cores first.
    by_last_mig: Vec<BTreeSet<(Nanos, CoreId)>>,
    /// Per core type: the next faster and slower domains and its own cores
    /// (fixed by the topology; `hmp_faster_domain` / `hmp_slower_domain`).
    domains: Vec<[CoreMask; 3]>,
}

impl Gts {
    pub fn new(params: GtsParams) -> Gts {
        Gts {
            params,
            cfs: None,
            track: Vec::new(),
            fresh: Vec::new(),
            last_up: Vec::new(),
            last_down: Vec::new(),
            core_last_mig: Vec::new(),
            by_last_mig: Vec::new(),
            domains: Vec::new(),
        }
    }

    fn cfs(&self) -> &CfsCore {
        self.cfs.as_ref().expect("initialised in thread_created")
    }

    /// The HMP load (`load_avg_ratio`, 0..1024) of `t` now.
    pub fn load(&self, st: &SchedState, t: ThreadId) -> f64 {
        self.track[t.idx()].load(st.now)
    }

    /// Cores whose type has the smallest compute rate above (`faster`) or the
    /// largest below (`!faster`) that of `c`: the next HMP domain.
    /// The next faster (`faster`) or slower HMP domain of `c`'s cores, from
    /// the per-type table built at the first thread.
    fn domain_next(&self, st: &SchedState, c: CoreId, faster: bool) -> CoreMask {
        let ty = st.topo.core_type_of[c.idx()];
        match self.domains.get(ty) {
            Some(d) => d[usize::from(!faster)],
            None => Self::domain_next_scan(st, c, faster),
        }
    }

    /// Per core type: (its cores, the next faster domain, the next slower).
    fn domain_table(st: &SchedState) -> Vec<[CoreMask; 3]> {
        (0..st.topo.core_types.len())
            .map(|ty| {
                match st
                    .topo
                    .cores()
                    .find(|&o| st.topo.core_type_of[o.idx()] == ty)
                {
                    Some(c) => [
                        Self::domain_next_scan(st, c, true),
                        Self::domain_next_scan(st, c, false),
                        Self::same_type_scan(st, c),
                    ],
                    None => [CoreMask::EMPTY; 3],
                }
            })
            .collect()
    }

    fn domain_next_scan(st: &SchedState, c: CoreId, faster: bool) -> CoreMask {
        let rate = |x: CoreId| st.topo.core_type(x).compute_rate;
        let r = rate(c);
        let better = |x: f64, y: f64| if faster { x < y } else { x > y };
        let mut best: Option<f64> = None;
        for o in st.topo.cores() {
            let ro = rate(o);
            let beyond = if faster { ro > r } else { ro < r };
            if beyond && best.is_none_or(|b| better(ro, b)) {
                best = Some(ro);
            }
        }
        let mut m = CoreMask::EMPTY;
        if let Some(b) = best {
            for o in st.topo.cores().filter(|&o| rate(o) == b) {
                m.insert(o);
            }
        }
        m
    }

    /// `hmp_domain_min_load`: the idle core of `mask` (allowed for `t`) with
    /// the oldest HMP migration, else the busy one with the oldest; the
    /// returned load is 0 for an idle core and 1023 otherwise.
    fn domain_min_load(
        &self,
        st: &SchedState,
        mask: CoreMask,
        t: Option<ThreadId>,
    ) -> Option<(CoreId, u32)> {
        let allowed = t.map_or(mask, |t| mask.intersect(self.cfs().allowed(t)));
        let scan = || {
            allowed
                .iter()
                .map(|c| {
                    let load = if st.nr_running(c) == 0 { 0 } else { 1023 };
                    (c, load)
                })
                .min_by_key(|&(c, load)| (load, self.core_last_mig[c.idx()], c))
        };
        if self.by_last_mig.is_empty() {
            return scan();
        }
        // Load 0: nothing running or queued.
        let zero = allowed.intersect(st.idle_mask()).minus(st.queued_mask());
        // The first of `m` in (last migration, id) order: the smallest of
        // each cluster's first in `m`.
        let first_in = |m: CoreMask| {
            self.by_last_mig
                .iter()
                .enumerate()
                .filter(|&(cl, _)| !st.topo.cluster_mask(cl).intersect(m).is_empty())
                .filter_map(|(_, set)| set.iter().find(|&&(_, c)| m.contains(c)))
                .min()
                .map(|&(_, c)| c)
        };
        let found = if zero.is_empty() {
            first_in(allowed).map(|c| (c, 1023))
        } else if zero.count() <= 64 {
            zero.iter()
                .min_by_key(|&c| (self.core_last_mig[c.idx()], c))
                .map(|c| (c, 0))
        } else {
            first_in(zero).map(|c| (c, 0))
        };
        debug_assert_eq!(found, scan(), "hmp_domain_min_load over {allowed:?}");
        found
    }

    /// Records an HMP migration onto `to` now.
    fn note_migration(&mut self, st: &SchedState, to: CoreId) {
        let old = std::mem::replace(&mut self.core_last_mig[to.idx()], st.now);
        if !self.by_last_mig.is_empty() {
            let set = &mut self.by_last_mig[st.topo.cluster_of(to)];
            set.remove(&(old, to));
            set.insert((st.now, to));
        }
    }

    fn next_up_delay(&mut self, st: &SchedState, t: ThreadId, to: CoreId) {
        self.last_up[t.idx()] = Some(st.now);
        self.last_down[t.idx()] = None;
        self.note_migration(st, to);
    }

    fn next_down_delay(&mut self, st: &SchedState, t: ThreadId, to: CoreId) {
        self.last_down[t.idx()] = Some(st.now);
        self.last_up[t.idx()] = None;
        self.note_migration(st, to);
    }

    /// `hmp_up_migration`: the idle faster core `t` (on `c`) should move to.
    fn up_migration(&self, st: &SchedState, c: CoreId, t: ThreadId) -> Option<CoreId> {
        let faster = self.domain_next(st, c, true);
        if faster.is_empty() || self.load(st, t) <= self.params.up_threshold {
            return None;
        }
        if let Some(l) = self.last_up[t.idx()] {
            if st.now.saturating_sub(l) < self.params.next_up_delay_ns {
                return None;
            }
        }
        match self.domain_min_load(st, faster, Some(t)) {
            Some((to, 0)) => Some(to),
            _ => None,
        }
    }

    /// `hmp_down_migration`: should `t` (on `c`) move to a slower core?
    fn down_migration(&self, st: &SchedState, c: CoreId, t: ThreadId) -> bool {
        let slower = self.domain_next(st, c, false);
        if slower.is_empty() {
            return false;
        }
        if let Some(l) = self.last_down[t.idx()] {
            if st.now.saturating_sub(l) < self.params.next_down_delay_ns {
                return false;
            }
        }
        !slower.intersect(self.cfs().allowed(t)).is_empty()
            && self.load(st, t) < self.params.down_threshold
    }

    /// The current thread of `c` and its first `hmp_max_tasks` queued ones
    /// (in CFS order), allowed somewhere in `target`.
    fn candidates(&self, st: &SchedState, c: CoreId, target: CoreMask) -> Vec<ThreadId> {
        let cfs = self.cfs();
        let mut q: Vec<ThreadId> = st.core(c).rq.iter().copied().collect();
        q.sort_by_key(|&t| (cfs.vr[t.idx()], t));
        q.truncate(HMP_MAX_TASKS);
        st.core(c)
            .current
            .into_iter()
            .chain(q)
            .filter(|&t| !target.intersect(cfs.allowed(t)).is_empty())
            .collect()
    }

    /// `hmp_get_heaviest_task` on `c` towards `target`.
    fn heaviest(&self, st: &SchedState, c: CoreId, target: CoreMask) -> Option<ThreadId> {
        self.candidates(st, c, target).into_iter().max_by(|&a, &b| {
            self.load(st, a)
                .total_cmp(&self.load(st, b))
                .then(b.cmp(&a))
        })
    }

    /// `hmp_get_lightest_task` on `c` towards `target`.
    fn lightest(&self, st: &SchedState, c: CoreId, target: CoreMask) -> Option<ThreadId> {
        self.candidates(st, c, target).into_iter().min_by(|&a, &b| {
            self.load(st, a)
                .total_cmp(&self.load(st, b))
                .then(a.cmp(&b))
        })
    }

    /// `hmp_offload_down`: the idle slower core for `t` on overloaded `c`.
    fn offload_down(&self, st: &SchedState, c: CoreId, t: ThreadId) -> Option<CoreId> {
        let slower = self.domain_next(st, c, false);
        if slower.is_empty() {
            return None;
        }
        let own = self.same_type(st, c);
        if matches!(self.domain_min_load(st, own, None), Some((_, 0))) {
            return None; // an idle core in this domain can take the work
        }
        if st.nr_running(c) < 2 {
            return None;
        }
        if self.track[t.idx()].starvation(st.now) > STARVATION_LIMIT {
            return None;
        }
        match self.domain_min_load(st, slower, Some(t)) {
            Some((to, 0)) => Some(to),
            _ => None,
        }
    }

    fn same_type(&self, st: &SchedState, c: CoreId) -> CoreMask {
        match self.domains.get(st.topo.core_type_of[c.idx()]) {
            Some(d) => d[2],
            None => Self::same_type_scan(st, c),
        }
    }

    fn same_type_scan(st: &SchedState, c: CoreId) -> CoreMask {
        let ty = st.topo.core_type_of[c.idx()];
        let mut m = CoreMask::EMPTY;
        for o in st
            .topo
            .cores()
            .filter(|&o| st.topo.core_type_of[o.idx()] == ty)
        {
            m.insert(o);
        }
        m
    }

    /// `hmp_idle_pull` by idle core `c`: the heaviest thread above the up
    /// threshold on the next slower domain.
    fn idle_pull(&self, st: &SchedState, c: CoreId) -> Option<(CoreId, ThreadId)> {
        let slower = self.domain_next(st, c, false);
        let mut best: Option<(CoreId, ThreadId, f64)> = None;
        for o in slower.iter() {
            if st.core(o).current.is_none() {
                continue;
            }
            let Some(t) = self.heaviest(st, o, CoreMask::single(c)) else {
                continue;
            };
            let l = self.load(st, t);
            if l > self.params.up_threshold && best.is_none_or(|(_, _, b)| l > b) {
                best = Some((o, t, l));
            }
        }
        best.map(|(o, t, _)| (o, t))
    }
}

impl Default for Gts {
    fn default() -> Self {
        Gts::new(GtsParams::default())
    }
}

impl colab_core::Policy for Gts {
    fn name(&self) -> &'static str {
        "gts"
    }

    fn reads_predictions(&self) -> bool {
        false
    }

    fn thread_created(&mut self, st: &SchedState, t: ThreadId) {
        if self.cfs.is_none() {
            self.cfs = Some(CfsCore::new(st));
            self.core_last_mig = vec![0; st.topo.num_cores()];
            if st.topo.num_cores() > 64 {
                let mut sets = vec![BTreeSet::new(); st.topo.clusters.len()];
                for c in st.topo.cores() {
                    sets[st.topo.cluster_of(c)].insert((0, c));
                }
                self.by_last_mig = sets;
            }
            self.domains = Self::domain_table(st);
        }
        self.cfs.as_mut().expect("init").thread_created(t);
        let i = t.idx();
        if self.track.len() <= i {
            self.track.resize(i + 1, Track::default());
            self.fresh.resize(i + 1, false);
            self.last_up.resize(i + 1, None);
            self.last_down.resize(i + 1, None);
        }
        self.track[i] = Track {
            last: st.now,
            ..Track::default()
        };
        self.fresh[i] = true;
    }

    fn select_core(&mut self, st: &SchedState, t: ThreadId, kind: WakeKind) -> CoreId {
        let new_cpu = self.cfs().select(st, t, kind);
        if !st.topo.is_asymmetric() {
            return new_cpu;
        }
        if let WakeKind::New { .. } = kind {
            // Fork boost: the least loaded core of the fastest domain.
            let big = st.topo.big_mask();
            if let Some((to, _)) = self.domain_min_load(st, big, Some(t)) {
                self.next_up_delay(st, t, to);
                return to;
            }
            return new_cpu;
        }
        let Some(prev) = st.thread(t).last_core else {
            return new_cpu;
        };
        if let Some(to) = self.up_migration(st, prev, t) {
            self.next_up_delay(st, t, to);
            return to;
        }
        if self.down_migration(st, prev, t) {
            let slower = self.domain_next(st, prev, false);
            if let Some((to, _)) = self.domain_min_load(st, slower, Some(t)) {
                if to != prev {
                    self.next_down_delay(st, t, to);
                    return to;
                }
            }
        }
        // Stay in the previous HMP domain.
        if self.same_type(st, prev).contains(new_cpu) || !self.cfs().is_allowed(t, prev) {
            new_cpu
        } else {
            prev
        }
    }

    fn enqueued(&mut self, st: &SchedState, c: CoreId, t: ThreadId, wakeup: bool) {
        let new = std::mem::take(&mut self.fresh[t.idx()]);
        let slice = self.cfs().slice(st, c) as f64;
        self.cfs
            .as_mut()
            .expect("init")
            .enqueued(st, c, t, wakeup, new && wakeup);
        let tr = &mut self.track[t.idx()];
        tr.sync(st.now);
        tr.runnable = true;
        if new {
            // init_task_runnable_average: sum = period = one slice, i.e. a
            // new thread starts at full load (usage_avg_sum stays 0).
            tr.runnable_sum = slice;
            tr.period = slice;
        }
    }

    fn should_preempt(&mut self, st: &SchedState, c: CoreId, t: ThreadId) -> bool {
        self.cfs().wakeup_preempt(st, c, t, 1.0)
    }

    fn pick_next(&mut self, st: &SchedState, c: CoreId) -> Pick {
        let cfs = self.cfs();
        if let Some(t) = cfs.leftmost(st, c) {
            return Pick::Local(t);
        }
        // idle_balance inside the cluster only, then hmp_idle_pull.
        if let Some((from, thread)) = cfs.idle_pull_in(st, c, false) {
            return Pick::Steal { from, thread };
        }
        if st.topo.is_asymmetric() {
            if let Some((from, thread)) = self.idle_pull(st, c) {
                self.next_up_delay(st, thread, c);
                return if st.core(from).current == Some(thread) {
                    Pick::PreemptRemote { from, thread }
                } else {
                    Pick::Steal { from, thread }
                };
            }
        }
        Pick::Idle
    }

    fn running(&mut self, st: &SchedState, _c: CoreId, t: ThreadId) {
        let tr = &mut self.track[t.idx()];
        tr.sync(st.now);
        tr.running = true;
    }

    fn stopped(&mut self, st: &SchedState, c: CoreId, t: ThreadId, ran: Nanos, why: StopReason) {
        self.cfs.as_mut().expect("init").stopped(st, c, t, ran, 1.0);
        let tr = &mut self.track[t.idx()];
        tr.sync(st.now);
        tr.running = false;
        tr.runnable = why == StopReason::Preempted;
    }

    fn migrated(&mut self, st: &SchedState, t: ThreadId, from: CoreId, to: CoreId) {
        self.cfs.as_mut().expect("init").migrated(st, t, from, to);
    }

    fn slice_ns(&self, st: &SchedState, c: CoreId, _t: ThreadId) -> Nanos {
        self.cfs.as_ref().map_or(NS_PER_MS, |k| k.slice(st, c))
    }

    fn tick(&mut self, st: &SchedState, c: CoreId, out: &mut Vec<Action>) -> bool {
        self.cfs().periodic_balance_in(st, c, out, false);
        if st.topo.is_asymmetric() {
            // hmp_force_up_migration for this core.
            let faster = self.domain_next(st, c, true);
            let mut moved = false;
            if !faster.is_empty() {
                if let Some(t) = self.heaviest(st, c, faster) {
                    if let Some(to) = self.up_migration(st, c, t) {
                        self.next_up_delay(st, t, to);
                        out.push(Action::Migrate { thread: t, to });
                        moved = true;
                    }
                }
            }
            let slower = self.domain_next(st, c, false);
            if !moved && !slower.is_empty() {
                if let Some(t) = self.lightest(st, c, slower) {
                    if let Some(to) = self.offload_down(st, c, t) {
                        self.next_down_delay(st, t, to);
                        out.push(Action::Migrate { thread: t, to });
                    }
                }
            }
        }
        self.cfs().tick_preempt(st, c, 1.0)
    }
}
