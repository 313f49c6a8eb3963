//! Linux today: EEVDF (fair.c as merged in 6.6) with the capacity-aware
//! placement and misfit migration Linux applies on asymmetric-capacity
//! machines (SD_ASYM_CPUCAPACITY). Speedup-unaware, like the kernel.
//!
//! Modelled (kernel/sched/fair.c function names):
//! - `update_curr` / `update_deadline`: vruntime advances 1:1 with runtime
//!   (every thread is nice 0, weight NICE_0_LOAD, so calc_delta_fair is the
//!   identity and the weighted average V is the plain mean); when vruntime
//!   reaches the virtual deadline a new request of `base_slice` starts and,
//!   with another entity queued, the current one is rescheduled.
//! - `avg_vruntime` / `entity_eligible`: V over the queued entities plus the
//!   current one; eligible iff vruntime <= V (lag >= 0), compared without
//!   division like the kernel (sum >= v * n).
//! - `pick_eevdf`: the eligible entity with the earliest deadline;
//!   RUN_TO_PARITY keeps an eligible current entity until its request is used
//!   up (the `se->vlag = se->deadline` hack of `set_next_entity`).
//! - `update_entity_lag` on dequeue (sleep, migration): vlag = V - v,
//!   clamped to max(2 * slice, TICK_NSEC).
//! - `place_entity` on every enqueue from outside the queue (wake-up,
//!   migration): v = V - vlag * (W + w) / W (PLACE_LAG), deadline = v +
//!   slice, half a slice for new tasks (PLACE_DEADLINE_INITIAL).
//! - `check_preempt_wakeup`: preempt iff `pick_eevdf` would now pick the
//!   woken entity.
//! - PELT utilisation (`___update_load_avg`, half-life LOAD_AVG_PERIOD = 32
//!   periods of 1024 us), scale-invariant through `clock_pelt`
//!   (`update_rq_clock_pelt`: running time counts at capacity/1024), with
//!   `util_est` (`util_est_update`) and `post_init_entity_util_avg`.
//! - Wake-up on asymmetric machines: `wake_affine`, then
//!   `select_idle_sibling` with `asym_fits_cpu` and `select_idle_capacity`
//!   over the whole machine (sd_asym_cpucapacity spans all cores).
//! - Misfit: `update_misfit_status` at pick and tick marks a core whose
//!   current task does not fit (`task_fits_cpu`); an idle core of greater
//!   capacity (`capacity_greater`) pulls it (newidle / nohz balance of a
//!   group_misfit_task, active balance because the task is running).
//!
//! Simplified (written down): no energy model, so no
//! `find_energy_efficient_cpu` (EAS needs an EM and schedutil; we model a
//! performance-governor system, where the kernel falls back to the path
//! above); no DVFS, so frequency invariance is 1; no uclamp; no cgroups;
//! `clock_pelt` is not re-synced on idle (`update_idle_rq_clock_pelt`), so
//! the time a task loses by running slowly counts neither as running nor
//! as idle; the blocked utilisation of sleeping tasks is not part of a
//! core's utilisation; fork placement and load balancing are CfsCore's
//! (queue lengths, not PELT load: see cfs/engine.rs); the misfit load of a
//! core is the task's util_est rather than `task_h_load`; misfit pulls only
//! happen from idle cores after the ordinary idle pull found nothing (the
//! kernel requires the pulling group to have spare capacity,
//! `group_has_spare`).

mod tree;

use crate::cfs::CfsCore;
use crate::queue_index::{INDEX_FROM, UNINDEX_BELOW};
use colab_core::{
    Action, CoreId, Nanos, Pick, SchedState, StopReason, ThreadId, WakeKind, NS_PER_US,
};
use tree::EntityTrees;

/// `sysctl_sched_base_slice` before scaling: 0.75 ms (kernel/sched/fair.c,
/// 6.6), scaled like every CFS tunable by 1 + ilog2(min(ncpus, 8))
/// (`get_update_sysctl_factor`, SCHED_TUNABLESCALING_LOG).
const BASE_SLICE_NS: Nanos = 750 * NS_PER_US;
/// SCHED_CAPACITY_SCALE (include/linux/sched.h): the fastest core's capacity.
pub const CAPACITY_SCALE: f64 = 1024.0;
/// PELT half-life: LOAD_AVG_PERIOD = 32 periods of 1024 us (kernel/sched/pelt.c,
/// sched-pelt.h). GTS's per-entity load (3.10 kernels) uses the same series.
pub(crate) const PELT_HALF_LIFE_NS: f64 = 32.0 * 1024.0 * 1000.0;
/// UTIL_EST_WEIGHT_SHIFT = 2: util_est's EWMA weight is 1/4 (fair.c).
const UTIL_EST_WEIGHT: f64 = 0.25;
/// UTIL_EST_MARGIN = SCHED_CAPACITY_SCALE / 100 (fair.c).
const UTIL_EST_MARGIN: f64 = CAPACITY_SCALE / 100.0;

/// `fits_capacity(cap, max)`: cap * 1280 < max * 1024, i.e. util must stay
/// below 80% of the capacity (fair.c).
pub fn fits_capacity(util: f64, capacity: f64) -> bool {
    util * 1280.0 < capacity * 1024.0
}

/// `capacity_greater(cap1, cap2)`: cap1 * 1024 > cap2 * 1078, a ~5% margin
/// (fair.c).
pub fn capacity_greater(a: f64, b: f64) -> bool {
    a * 1024.0 > b * 1078.0
}

/// 1 + ilog2(min(ncpus, 8)) (`get_update_sysctl_factor`, SCHED_TUNABLESCALING_LOG).
pub fn log_factor(ncpus: usize) -> Nanos {
    let n = ncpus.clamp(1, 8);
    1 + Nanos::from(n.ilog2())
}

/// Decay factor of a PELT sum over `dt` ns: y^(dt / 1024us) with y^32 = 1/2.
pub(crate) fn pelt_decay(dt_ns: f64) -> f64 {
    (-dt_ns / PELT_HALF_LIFE_NS).exp2()
}

/// Per-entity EEVDF state (`struct sched_entity`).
#[derive(Clone, Debug, Default)]
struct Entity {
    vruntime: i64,
    deadline: i64,
    vlag: i64,
    /// RUN_TO_PARITY: picked and its request not yet renewed.
    parity: bool,
    /// When the current run was last accounted (`exec_start`).
    exec_start: Nanos,
    /// Never enqueued yet (ENQUEUE_INITIAL on its first placement).
    fresh: bool,
}

/// Per-task PELT utilisation with util_est (`struct sched_avg`).
#[derive(Clone, Debug, Default)]
struct Util {
    avg: f64,
    last: Nanos,
    /// Capacity of the core the task runs on, while it runs.
    running_cap: Option<f64>,
    ewma: f64,
    enqueued: f64,
}

impl Util {
    /// util_avg brought forward to `now` without changing the state.
    fn at(&self, now: Nanos) -> f64 {
        let dt = now.saturating_sub(self.last) as f64;
        match self.running_cap {
            // clock_pelt runs at capacity / 1024 while the task runs.
            Some(cap) => {
                let y = pelt_decay(dt * cap / CAPACITY_SCALE);
                self.avg * y + CAPACITY_SCALE * (1.0 - y)
            }
            None => self.avg * pelt_decay(dt),
        }
    }
    fn sync(&mut self, now: Nanos) {
        self.avg = self.at(now);
        self.last = now;
    }
    /// `task_util_est`: max(util_avg, util_est.ewma, util_est.enqueued).
    fn est(&self, now: Nanos) -> f64 {
        self.at(now).max(self.ewma).max(self.enqueued)
    }
    /// `util_est_update` when the task goes to sleep on a core of `cap`.
    fn sleep_update(&mut self, cap: f64) {
        let u = self.avg;
        if self.ewma < u {
            // UTIL_EST_FASTUP: increases are taken at once.
            self.ewma = u;
            self.enqueued = u;
        } else if (u - self.ewma).abs() < UTIL_EST_MARGIN {
            if (self.enqueued - u).abs() >= UTIL_EST_MARGIN {
                self.enqueued = u;
            }
        } else if u <= cap {
            // Skipped when util exceeds the core's capacity (no idle time).
            self.ewma += (u - self.ewma) * UTIL_EST_WEIGHT;
            self.enqueued = u;
        }
    }
}

/// The `eevdf` policy.
pub struct Eevdf {
    cfs: Option<CfsCore>,
    base_slice: i64,
    ent: Vec<Entity>,
    util: Vec<Util>,
    /// Per-core `min_vruntime` (V of an empty queue).
    min_vr: Vec<i64>,
    /// Per-core `rq->misfit_task_load` (0: no misfit task).
    misfit: Vec<f64>,
    /// What the simulator's states let us keep instead of scanning queues
    /// (hand-built test states are scanned): the queued entities of each
    /// core in the kernel's augmented tree, and per core the sum and count
    /// of its entities' vruntimes (queued and current: `avg_vruntime`'s
    /// `sum_w_vruntime` and `sum_weight`) with the core each thread counts on.
    tree: EntityTrees,
    /// Per core: is its queue in `tree`? Only while it is long (see
    /// `queue_index`: a short queue is faster scanned).
    tree_on: Vec<bool>,
    sum_v: Vec<i128>,
    count: Vec<i128>,
    counted_on: Vec<Option<CoreId>>,
    /// Per core, part of [`Eevdf::rq_util`] kept for the current instant.
    util_prefix: Vec<UtilPrefix>,
}

/// The utilisation of a core's queued tasks in slots before `upto`,
/// summed in queue order at `now`, while its queue had `removals`
/// removals: a task's utilisation does not change while it waits and
/// pushes only append, so the sum stands until either changes.
#[derive(Clone, Copy, Debug, Default)]
struct UtilPrefix {
    now: Nanos,
    removals: u64,
    upto: usize,
    sum: f64,
}

impl Default for Eevdf {
    fn default() -> Self {
        Eevdf::new()
    }
}

impl Eevdf {
    pub fn new() -> Eevdf {
        Eevdf {
            cfs: None,
            base_slice: 0,
            ent: Vec::new(),
            util: Vec::new(),
            min_vr: Vec::new(),
            misfit: Vec::new(),
            tree: EntityTrees::default(),
            tree_on: Vec::new(),
            sum_v: Vec::new(),
            count: Vec::new(),
            counted_on: Vec::new(),
            util_prefix: Vec::new(),
        }
    }

    fn init(&mut self, st: &SchedState) {
        if self.cfs.is_none() {
            let n = st.topo.num_cores();
            self.base_slice = (BASE_SLICE_NS * log_factor(n)) as i64;
            self.cfs = Some(CfsCore::new(st));
            self.min_vr = vec![0; n];
            self.misfit = vec![0.0; n];
            self.tree = EntityTrees::new(n);
            self.tree_on = vec![false; n];
            self.sum_v = vec![0; n];
            self.count = vec![0; n];
            self.util_prefix = vec![UtilPrefix::default(); n];
        }
    }

    fn cfs(&self) -> &CfsCore {
        self.cfs.as_ref().expect("initialised in thread_created")
    }

    /// Scaled base slice in ns.
    pub fn base_slice_ns(&self) -> Nanos {
        self.base_slice as Nanos
    }
    pub fn vruntime(&self, t: ThreadId) -> i64 {
        self.ent[t.idx()].vruntime
    }
    pub fn deadline(&self, t: ThreadId) -> i64 {
        self.ent[t.idx()].deadline
    }
    pub fn lag(&self, t: ThreadId) -> i64 {
        self.ent[t.idx()].vlag
    }
    /// Sets an entity's vruntime and deadline (hand-built test situations).
    #[cfg(test)]
    pub(crate) fn set_entity(&mut self, t: ThreadId, vruntime: i64, deadline: i64) {
        let on = self.counted_on[t.idx()];
        let queued = self.tree.core_of(t);
        self.uncount(t);
        self.tree.remove(t);
        let e = &mut self.ent[t.idx()];
        e.vruntime = vruntime;
        e.deadline = deadline;
        e.fresh = false;
        if let Some(c) = on {
            self.count_on(c, t);
        }
        if let Some(c) = queued {
            self.tree.insert(c, t, deadline, vruntime);
        }
    }

    /// `t` now counts in `c`'s sums (it joined the queue or the core).
    fn count_on(&mut self, c: CoreId, t: ThreadId) {
        debug_assert!(self.counted_on[t.idx()].is_none(), "{t} counted twice");
        self.counted_on[t.idx()] = Some(c);
        self.sum_v[c.idx()] += self.ent[t.idx()].vruntime as i128;
        self.count[c.idx()] += 1;
    }

    /// `t` no longer counts in any core's sums.
    fn uncount(&mut self, t: ThreadId) {
        if let Some(c) = self.counted_on[t.idx()].take() {
            self.sum_v[c.idx()] -= self.ent[t.idx()].vruntime as i128;
            self.count[c.idx()] -= 1;
        }
    }

    /// Adds `t` to `c`'s queue index (the simulator queued it there).
    fn index(&mut self, st: &SchedState, c: CoreId, t: ThreadId) {
        if !st.active_tracked {
            return;
        }
        self.count_on(c, t);
        if self.tree_on[c.idx()] {
            let e = &self.ent[t.idx()];
            self.tree.insert(c, t, e.deadline, e.vruntime);
        } else if st.core(c).rq.len() >= INDEX_FROM {
            self.tree_on[c.idx()] = true;
            for &x in &st.core(c).rq {
                let e = &self.ent[x.idx()];
                self.tree.insert(c, x, e.deadline, e.vruntime);
            }
        }
    }

    /// Is `c`'s queue in the tree (else it is scanned)?
    fn tree_used(&self, st: &SchedState, c: CoreId) -> bool {
        st.active_tracked && self.tree_on[c.idx()]
    }
    /// `task_util_est` of `t` now.
    pub fn util_est(&self, st: &SchedState, t: ThreadId) -> f64 {
        self.util[t.idx()].est(st.now)
    }
    /// `arch_scale_cpu_capacity`: the fastest core type is 1024, others
    /// scaled by compute rate.
    pub fn capacity(st: &SchedState, c: CoreId) -> f64 {
        st.topo.capacity(c) * CAPACITY_SCALE
    }
    /// `task_fits_cpu`.
    pub fn task_fits(&self, st: &SchedState, t: ThreadId, c: CoreId) -> bool {
        fits_capacity(self.util_est(st, t), Self::capacity(st, c))
    }

    /// Entities of `c`'s cfs_rq: the queued ones and the current one.
    fn entities(st: &SchedState, c: CoreId) -> impl Iterator<Item = ThreadId> + '_ {
        let core = st.core(c);
        core.rq.iter().copied().chain(core.current)
    }

    /// (sum of vruntimes, count) of `c`'s entities other than `skip`.
    fn avg_parts(&self, st: &SchedState, c: CoreId, skip: Option<ThreadId>) -> (i128, i128) {
        if !st.active_tracked {
            return self.scan_avg_parts(st, c, skip);
        }
        let (mut sum, mut n) = (self.sum_v[c.idx()], self.count[c.idx()]);
        if let Some(t) = skip.filter(|&t| self.counted_on[t.idx()] == Some(c)) {
            sum -= self.ent[t.idx()].vruntime as i128;
            n -= 1;
        }
        debug_assert_eq!(
            (sum, n),
            self.scan_avg_parts(st, c, skip),
            "kept vruntime sums of core {c} differ from its queue"
        );
        (sum, n)
    }

    fn scan_avg_parts(&self, st: &SchedState, c: CoreId, skip: Option<ThreadId>) -> (i128, i128) {
        let mut sum = 0i128;
        let mut n = 0i128;
        for t in Self::entities(st, c).filter(|&t| Some(t) != skip) {
            sum += self.ent[t.idx()].vruntime as i128;
            n += 1;
        }
        (sum, n)
    }

    /// `avg_vruntime`: floor of the mean, min_vruntime on an empty queue.
    fn avg_of(&self, c: CoreId, sum: i128, n: i128) -> i64 {
        if n == 0 {
            self.min_vr[c.idx()]
        } else {
            sum.div_euclid(n) as i64
        }
    }

    /// `entity_eligible`: v <= V, as sum >= v * n.
    fn eligible(&self, t: ThreadId, sum: i128, n: i128) -> bool {
        sum >= self.ent[t.idx()].vruntime as i128 * n
    }

    /// `update_min_vruntime`: monotonic, follows the smallest vruntime.
    /// `extra`: a thread the simulator has just queued on `c` and that is
    /// not indexed yet (an enqueue's update_curr, before placement).
    fn update_min_vr(&mut self, st: &SchedState, c: CoreId, extra: Option<ThreadId>) {
        let scan = || {
            Self::entities(st, c)
                .map(|t| self.ent[t.idx()].vruntime)
                .min()
        };
        let m = if self.tree_used(st, c) {
            let v = |t: ThreadId| self.ent[t.idx()].vruntime;
            let m = [
                self.tree.min_vruntime(c).map(|(v, _)| v),
                st.core(c).current.map(v),
                extra.map(v),
            ]
            .into_iter()
            .flatten()
            .min();
            debug_assert_eq!(m, scan(), "kept min vruntime of core {c} differs");
            m
        } else {
            scan()
        };
        if let Some(m) = m {
            let v = &mut self.min_vr[c.idx()];
            *v = (*v).max(m);
        }
    }

    /// Charges `t` its runtime since `exec_start`, renewing its request when
    /// used up (`update_curr` + `update_deadline`). True if the request was
    /// renewed.
    fn account(&mut self, st: &SchedState, t: ThreadId) -> bool {
        let slice = self.base_slice;
        let e = &mut self.ent[t.idx()];
        let delta = st.now.saturating_sub(e.exec_start);
        e.exec_start = st.now;
        e.vruntime += delta as i64;
        if let Some(c) = self.counted_on[t.idx()] {
            self.sum_v[c.idx()] += delta as i128;
        }
        let e = &mut self.ent[t.idx()];
        if e.vruntime >= e.deadline {
            e.deadline = e.vruntime + slice;
            e.parity = false;
            true
        } else {
            false
        }
    }

    /// `update_curr` on `c`: true if the current entity used up its request
    /// while another one waits (resched_curr).
    fn update_curr(&mut self, st: &SchedState, c: CoreId) -> bool {
        self.update_curr_with(st, c, None)
    }

    /// [`Eevdf::update_curr`] with `extra` as in [`Eevdf::update_min_vr`].
    fn update_curr_with(&mut self, st: &SchedState, c: CoreId, extra: Option<ThreadId>) -> bool {
        let Some(cur) = st.core(c).current else {
            return false;
        };
        let renewed = self.account(st, cur);
        self.update_min_vr(st, c, extra);
        renewed && st.nr_running(c) > 1
    }

    /// `update_entity_lag` for `t` leaving `c` (V still counts `t`).
    fn update_lag(&mut self, st: &SchedState, c: CoreId, t: ThreadId) {
        let (mut sum, mut n) = self.avg_parts(st, c, Some(t));
        sum += self.ent[t.idx()].vruntime as i128;
        n += 1;
        let v = self.avg_of(c, sum, n);
        // limit = calc_delta_fair(max(2 * se->slice, TICK_NSEC), se).
        let limit = (2 * self.base_slice).max(st.topo.costs.tick_ns as i64);
        let e = &mut self.ent[t.idx()];
        e.vlag = (v - e.vruntime).clamp(-limit, limit);
    }

    /// `place_entity` of `t` on `c` (before or after it joined `c`'s queue;
    /// it is left out of V either way).
    fn place(&mut self, st: &SchedState, c: CoreId, t: ThreadId, initial: bool) {
        debug_assert!(self.counted_on[t.idx()].is_none() && self.tree.core_of(t).is_none());
        let (sum, n) = self.avg_parts(st, c, Some(t));
        let v = self.avg_of(c, sum, n);
        let e = &mut self.ent[t.idx()];
        // PLACE_LAG: lag * (W + w) / W keeps the lag after V moves (div_s64
        // truncates towards zero). Only on a non-empty queue.
        let lag = if n > 0 {
            (e.vlag as i128 * (n + 1) / n) as i64
        } else {
            0
        };
        e.vruntime = v - lag;
        // PLACE_DEADLINE_INITIAL: new tasks start with half a request.
        let vslice = if initial {
            self.base_slice / 2
        } else {
            self.base_slice
        };
        e.deadline = e.vruntime + vslice;
    }

    /// `pick_eevdf` on `c`, with its current entity if any.
    pub(crate) fn pick_eevdf(&self, st: &SchedState, c: CoreId) -> Option<ThreadId> {
        let (sum, n) = self.avg_parts(st, c, None);
        let mut curr = st.core(c).current;
        if let Some(cur) = curr {
            if !self.eligible(cur, sum, n) {
                curr = None;
            } else if self.ent[cur.idx()].parity {
                return Some(cur); // RUN_TO_PARITY
            }
        }
        let key = |t: ThreadId| (self.ent[t.idx()].deadline, self.ent[t.idx()].vruntime, t);
        let scan = || {
            st.core(c)
                .rq
                .iter()
                .copied()
                .filter(|&t| self.eligible(t, sum, n))
                .min_by_key(|&t| key(t))
        };
        let mut best = if self.tree_used(st, c) {
            let found = self.tree.first_eligible(c, |v| sum >= v as i128 * n);
            debug_assert_eq!(found, scan(), "indexed pick of core {c} differs");
            found
        } else {
            scan()
        };
        if let Some(cur) = curr {
            if best.is_none_or(|b| self.ent[cur.idx()].deadline < self.ent[b.idx()].deadline) {
                best = Some(cur);
            }
        }
        // The kernel falls back to the leftmost entity if the search fails.
        if self.tree_used(st, c) {
            return best.or_else(|| self.tree.min_vruntime(c).map(|(_, t)| t));
        }
        best.or_else(|| {
            st.core(c)
                .rq
                .iter()
                .copied()
                .min_by_key(|&t| (self.ent[t.idx()].vruntime, t))
        })
    }

    /// The tick's work on `c`'s own queue, without balancing (`update_curr`,
    /// the utilisation and misfit updates): true if the current request ran
    /// out while another entity waits. ROTA's `local=eevdf` shares each
    /// core's queue this way and balances by its own rules.
    pub(crate) fn local_tick(&mut self, st: &SchedState, c: CoreId) -> bool {
        let resched = self.update_curr(st, c);
        if let Some(t) = st.core(c).current {
            self.util[t.idx()].sync(st.now);
        }
        self.update_misfit(st, c);
        resched
    }

    /// Sum of the utilisation of the tasks on `c` other than `skip`
    /// (cfs_rq util_avg without blocked contributions).
    fn rq_util_scan(&self, st: &SchedState, c: CoreId, skip: ThreadId) -> f64 {
        Self::entities(st, c)
            .filter(|&t| t != skip)
            .map(|t| self.util[t.idx()].at(st.now))
            .sum()
    }

    /// [`Eevdf::rq_util_scan`], in the same order. A spawn of thousands
    /// of tasks at one instant asks it for each new task on its core, so
    /// the sum over the queue before the new task is kept for the instant
    /// ([`UtilPrefix`]) and extended, not redone.
    fn rq_util(&mut self, st: &SchedState, c: CoreId, skip: ThreadId) -> f64 {
        if !st.active_tracked {
            return self.rq_util_scan(st, c, skip);
        }
        let rq = &st.core(c).rq;
        let p = &mut self.util_prefix[c.idx()];
        if p.now != st.now || p.removals != rq.removals() {
            *p = UtilPrefix {
                now: st.now,
                removals: rq.removals(),
                ..UtilPrefix::default()
            };
        }
        let at = |t: ThreadId| self.util[t.idx()].at(st.now);
        let (mut sum, mut kept) = (p.sum, true);
        for (slot, t) in rq.slots_from(p.upto) {
            if t == skip {
                kept = false;
                continue;
            }
            sum += at(t);
            if kept {
                (p.upto, p.sum) = (slot + 1, sum);
            }
        }
        if let Some(t) = st.core(c).current.filter(|&t| t != skip) {
            sum += at(t);
        }
        debug_assert_eq!(
            sum,
            self.rq_util_scan(st, c, skip),
            "kept utilisation of core {c}"
        );
        sum
    }

    /// `update_misfit_status` for the current task of `c`.
    fn update_misfit(&mut self, st: &SchedState, c: CoreId) {
        let mut load = 0.0;
        if st.topo.is_asymmetric() {
            if let Some(t) = st.core(c).current {
                let single = self.cfs().allowed(t).count() == 1;
                if !single && !self.task_fits(st, t, c) {
                    load = self.util_est(st, t).max(1.0);
                }
            }
        }
        self.misfit[c.idx()] = load;
    }

    /// `select_idle_sibling` with the asymmetric-capacity checks.
    fn select_idle_sibling_asym(
        &self,
        st: &SchedState,
        t: ThreadId,
        prev: CoreId,
        target: CoreId,
    ) -> CoreId {
        let fits = |c: CoreId| self.task_fits(st, t, c); // asym_fits_cpu
        if st.is_idle(target) && fits(target) {
            return target;
        }
        if prev != target && st.topo.same_cluster(prev, target) && st.is_idle(prev) && fits(prev) {
            return prev;
        }
        self.select_idle_capacity(st, t, target).unwrap_or(target)
    }

    /// `select_idle_capacity`: the first idle core (from `target`, wrapping)
    /// the task fits, else the idle core of largest capacity.
    pub fn select_idle_capacity(
        &self,
        st: &SchedState,
        t: ThreadId,
        target: CoreId,
    ) -> Option<CoreId> {
        let allowed = self.cfs().allowed(t);
        let mut best: Option<(CoreId, f64)> = None;
        for c in allowed.intersect(st.idle_mask()).iter_from(target) {
            if !st.core(c).rq.is_empty() {
                continue;
            }
            let cap = Self::capacity(st, c);
            if self.task_fits(st, t, c) {
                return Some(c);
            }
            if best.is_none_or(|(_, b)| cap > b) {
                best = Some((c, cap));
            }
        }
        best.map(|(c, _)| c)
    }

    /// Misfit pull by idle core `c`: the running misfit task of largest
    /// misfit load on a core of smaller capacity.
    fn misfit_pull(&self, st: &SchedState, c: CoreId) -> Option<(CoreId, ThreadId)> {
        if !st.topo.is_asymmetric() {
            return None;
        }
        let cap = Self::capacity(st, c);
        let mut best: Option<(CoreId, ThreadId, f64)> = None;
        for o in st.topo.cores().filter(|&o| o != c) {
            let load = self.misfit[o.idx()];
            let Some(t) = st.core(o).current else {
                continue;
            };
            if load <= 0.0
                || !capacity_greater(cap, Self::capacity(st, o))
                || !self.cfs().is_allowed(t, c)
            {
                continue;
            }
            if best.is_none_or(|(_, _, b)| load > b) {
                best = Some((o, t, load));
            }
        }
        best.map(|(o, t, _)| (o, t))
    }
}

impl colab_core::Policy for Eevdf {
    fn name(&self) -> &'static str {
        "eevdf"
    }

    fn reads_predictions(&self) -> bool {
        false
    }

    fn thread_created(&mut self, st: &SchedState, t: ThreadId) {
        self.init(st);
        self.cfs.as_mut().expect("init").thread_created(t);
        if self.ent.len() <= t.idx() {
            self.ent.resize(t.idx() + 1, Entity::default());
            self.util.resize(t.idx() + 1, Util::default());
            self.counted_on.resize(t.idx() + 1, None);
            self.tree.grow(t);
        }
        self.ent[t.idx()] = Entity {
            fresh: true,
            ..Entity::default()
        };
        // A new task has no utilisation until post_init_entity_util_avg runs
        // on the core it was placed on.
        self.util[t.idx()] = Util {
            last: st.now,
            ..Util::default()
        };
    }

    fn select_core(&mut self, st: &SchedState, t: ThreadId, kind: WakeKind) -> CoreId {
        let cfs = self.cfs();
        match (kind, st.thread(t).last_core) {
            (WakeKind::Wakeup { waker, .. }, Some(prev))
                if st.topo.is_asymmetric() && cfs.is_allowed(t, prev) =>
            {
                let target = cfs.wake_affine(st, t, prev, waker);
                self.select_idle_sibling_asym(st, t, prev, target)
            }
            // Fork (find_idlest_group: a new task's util is 0 and fits
            // everywhere), symmetric machines: the CFS path.
            _ => cfs.select(st, t, kind),
        }
    }

    fn enqueued(&mut self, st: &SchedState, c: CoreId, t: ThreadId, wakeup: bool) {
        // A preempted task never left the queue in the kernel, and a migrated
        // one was placed in `migrated`.
        if !wakeup {
            self.index(st, c, t);
            return;
        }
        self.update_curr_with(st, c, Some(t));
        let initial = std::mem::take(&mut self.ent[t.idx()].fresh);
        if initial {
            self.ent[t.idx()].vlag = 0;
            // post_init_entity_util_avg: half the spare capacity of the core
            // (simplified: the util/load ratio term is taken as 1).
            let spare = Self::capacity(st, c) - self.rq_util(st, c, t);
            let u = &mut self.util[t.idx()];
            u.avg = (spare / 2.0).max(0.0);
            u.last = st.now;
        }
        self.place(st, c, t, initial);
        self.index(st, c, t);
    }

    fn should_preempt(&mut self, st: &SchedState, c: CoreId, t: ThreadId) -> bool {
        if self.update_curr(st, c) {
            return true; // the current request ran out: resched_curr
        }
        self.pick_eevdf(st, c) == Some(t)
    }

    fn pick_next(&mut self, st: &SchedState, c: CoreId) -> Pick {
        if let Some(t) = self.pick_eevdf(st, c) {
            return Pick::Local(t);
        }
        if let Some((from, thread)) = self.cfs().idle_pull(st, c) {
            return Pick::Steal { from, thread };
        }
        if let Some((from, thread)) = self.misfit_pull(st, c) {
            return Pick::PreemptRemote { from, thread };
        }
        self.misfit[c.idx()] = 0.0;
        Pick::Idle
    }

    fn running(&mut self, st: &SchedState, c: CoreId, t: ThreadId) {
        // Off the queue (still an entity of `c`), or onto `c` from elsewhere.
        self.tree.remove(t);
        if st.active_tracked && self.counted_on[t.idx()] != Some(c) {
            self.uncount(t);
            self.count_on(c, t);
        }
        if self.tree_used(st, c) && st.core(c).rq.len() < UNINDEX_BELOW {
            self.tree_on[c.idx()] = false;
            for &x in &st.core(c).rq {
                self.tree.remove(x);
            }
        }
        let e = &mut self.ent[t.idx()];
        e.exec_start = st.now;
        e.parity = true; // set_next_entity: se->vlag = se->deadline
        let u = &mut self.util[t.idx()];
        u.sync(st.now);
        u.running_cap = Some(Self::capacity(st, c));
        self.update_misfit(st, c);
    }

    fn stopped(&mut self, st: &SchedState, c: CoreId, t: ThreadId, _ran: Nanos, why: StopReason) {
        // The simulator has taken `t` off the core (a preempted thread is
        // queued again next, through `enqueued`).
        self.uncount(t);
        self.account(st, t);
        let cap = Self::capacity(st, c);
        let u = &mut self.util[t.idx()];
        u.sync(st.now);
        u.running_cap = None;
        if why == StopReason::Blocked {
            u.sleep_update(cap);
            self.update_lag(st, c, t);
        }
        self.update_min_vr(st, c, None);
    }

    fn migrated(&mut self, st: &SchedState, t: ThreadId, from: CoreId, to: CoreId) {
        // Taken off `from`'s queue or core by the simulator.
        self.tree.remove(t);
        self.uncount(t);
        self.update_curr(st, from);
        self.update_curr(st, to);
        self.update_lag(st, from, t);
        self.update_min_vr(st, from, None);
        self.place(st, to, t, false);
    }

    /// EEVDF has no wall-clock slice: `tick` preempts when the virtual
    /// deadline is reached (`update_deadline`), so the engine's slice check
    /// must never fire on its own.
    fn slice_ns(&self, _st: &SchedState, _c: CoreId, _t: ThreadId) -> Nanos {
        Nanos::MAX / 4
    }

    fn tick(&mut self, st: &SchedState, c: CoreId, out: &mut Vec<Action>) -> bool {
        let resched = self.local_tick(st, c);
        // trigger_load_balance: CfsCore's periodic balancing.
        self.cfs().periodic_balance(st, c, out);
        resched
    }
}
