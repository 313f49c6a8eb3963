//! scx_lavd 1.1.4 (sched_ext "Latency-criticality Aware Virtual Deadline"
//! scheduler, crates.io scx_lavd 1.1.4), modelled with its default options.
//!
//! What lavd does: each task gets a latency criticality from how often it
//! waits and wakes others and how short its runs are (lat_cri.bpf.c); its
//! virtual deadline is a logical clock plus a delta that shrinks with
//! latency criticality and grows with over-service; CPUs consume per-domain
//! deadline-ordered queues; time slices share a 10 ms target latency among
//! the queued tasks; a performance criticality decides whether a task
//! sticks to its previous CPU when that CPU's type (big/little) suits it;
//! domains steal from each other; a waking urgent task makes a CPU running
//! a less critical task yield at its next scheduling point.
//!
//! Defaults (src/main.rs): no mode option given, so `--autopilot` is on
//! (Opts::proc, main.rs:380-383); slices 500 us..5 ms (main.rs:125-130);
//! per-domain DSQs (`per_cpu_dsq` off; `--pinned-slice-us` 5000 affects
//! only pinned tasks, none here); `--preempt-shift` 6 (main.rs:205);
//! `--xmig-min-gain-us` 350 on big.LITTLE (main.rs:188, :430-440);
//! `--mig-delta-pct` 0, so force-stealing is on (main.rs:146);
//! `--lb-low-util-pct` 25 (main.rs:162); `--warm-cpu-us` 0 (main.rs:154).
//!
//! Modelled (constants and citations in task.rs and sys.rs):
//! - lat_cri / perf_cri / greedy penalty / deadline: calc_lat_cri,
//!   calc_greedy_penalty, calc_virtual_deadline_delta, calc_when_to_run
//!   (lat_cri.bpf.c:171-378); logical clock advance_cur_logical_clk
//!   (main.bpf.c:274-307); the frequencies from lavd_runnable (wake_freq of
//!   the waker, waker/wakee inheritance, main.bpf.c:1603-1718),
//!   lavd_quiescent (wait_freq, :1850-1916), update_stat_for_running
//!   (run_freq, :398-534), run times in account_task_runtime /
//!   update_stat_for_stopping (:536-656), invariant time = wall time x
//!   capacity / 1024 (the PELT clock without DVFS).
//! - Time slice: calc_time_slice (main.bpf.c:309-396) over the system
//!   slice of calc_sys_time_slice (sys_stat.bpf.c:760-778).
//! - Placement: pick_idle_cpu (idle.bpf.c:757-1111) without SMT, turbo or
//!   affinity: the previous CPU is "sticky" only if its type matches
//!   is_perf_cri (power.bpf.c:178-191, find_sticky_cpu_and_cpdom
//!   idle.bpf.c:493-611); then an idle CPU of the sticky domain; then, if
//!   that domain is a stealee, an idle CPU (or the queue) of the other
//!   domain when the completion-time gain exceeds 350 us
//!   (migrate_to_neighbor, idle.bpf.c:660-755; calc_comp_time,
//!   balance.bpf.c:296-392); else the previous CPU's domain queue. An
//!   idle chosen CPU gets the task directly (can_direct_dispatch,
//!   main.bpf.c:683-705; lavd_select_cpu :837-932).
//! - perf_cri threshold: update_thr_perf_cri (power.bpf.c:599-700) from
//!   min/avg/max perf_cri EWMAs and the big cores' capacity share.
//! - Autopilot (do_autopilot, power.bpf.c:565-597): the mode is computed;
//!   at the simulator's utilisations it is performance mode, which turns
//!   core compaction off, so every CPU stays active.
//! - Dispatch: consume_task (balance.bpf.c:657-734): a stealer domain
//!   first steals the head of a stealee domain's queue (try_to_steal_task);
//!   then the earliest deadline of the CPU's own domain queue; then, if it
//!   is empty, the head of the other domain's queue (force_to_steal_task).
//!   Stealer/stealee roles from plan_x_cpdom_migration (balance.bpf.c:145).
//! - Preemption: try_find_and_kick_victim_cpu (preempt.bpf.c:342-430): a
//!   non-greedy task with lat_cri >= thr_lat_cri looks at the preferred
//!   CPU then the others of its domain for up to two CPUs whose task is
//!   less latency-critical and would stop later (can_x_kick_y), picks the
//!   one to kick, and asks it to yield by cutting its slice to 1 ns
//!   (ask_cpu_yield_after): it stops at its next tick.
//! - Futex boost (lock.bpf.c): a task returning from a futex wait is a
//!   lock holder until it wakes another task or stops; a running lock
//!   holder is never a victim; a holder that stops gets one weight boost in
//!   its next lat_cri (reset_lock_futex_boost, lock.bpf.c:84-91).
//!
//! Left out, and why: SMT, turbo cores, NUMA/LLC distances (one LLC
//! assumed, two domains); cpufreq (update_cpuperf_target) and the energy
//! model; core compaction and the active/overflow sets (performance mode
//! keeps all CPUs active; at low utilisation lavd would compact, which the
//! model does not do); the turbulent/steady DSQ split (lat_headroom;
//! both DSQs are one deadline-ordered queue here) and preemption
//! vulnerability masks; the low-utilisation FIFO bypass (util < 10%); the
//! steal budgets and the probabilistic farther-neighbour steal (one
//! neighbour); pinned tasks, cgroup bandwidth, kernel threads, IRQ/RT
//! wakers, sync wake-ups (futex wakes are not WF_SYNC); consume_prev's
//! lock-holder keep-running in dispatch; warm-CPU waiting (off by
//! default); introspection and statistics. `reads_predictions()` is
//! false: lavd knows capacities, not speedups.

mod queues;
mod sys;
mod task;

pub use sys::{PowerMode, SYS_STAT_INTERVAL_NS};
pub use task::*;

use colab_core::{
    Action, BlockKind, CoreId, CoreMask, Nanos, Pick, Policy, RunState, SchedState, StopReason,
    ThreadId, WakeKind,
};
use queues::Queues;
use sys::{Domain, Interval, SysStat};

/// `--xmig-min-gain-us` default 350, main.rs:188.
pub const XMIG_MIN_GAIN_NS: u64 = 350_000;

/// Per-CPU state lavd keeps in `cpu_ctx` for preemption.
#[derive(Clone, Debug, Default)]
struct CpuCtx {
    running_clk: Nanos,
    slice_end: Nanos,
    est_stopping_clk: u64,
    lat_cri: u64,
    lock_holder: bool,
    slice_boost: bool,
    /// Asked to yield (slice cut to 1 ns by ask_cpu_yield_after).
    yield_req: bool,
    /// A task directly dispatched to this CPU's local DSQ.
    local: Option<ThreadId>,
}

/// The scx_lavd 1.1.4 model.
pub struct Lavd {
    tasks: Vec<TaskCtx>,
    /// Returned from a futex wait; becomes a lock holder once running.
    futex_ret: Vec<bool>,
    cpus: Vec<CpuCtx>,
    sys: Option<SysStat>,
    iv: Interval,
    last_update: Nanos,
    cur_logical_clk: u64,
    cur_svc_time_iwgt: u64,
    /// The queued tasks by domain (tracked states only).
    queues: Queues,
}

impl Default for Lavd {
    fn default() -> Self {
        Self::new()
    }
}

impl Lavd {
    pub fn new() -> Lavd {
        Lavd {
            tasks: Vec::new(),
            futex_ret: Vec::new(),
            cpus: Vec::new(),
            sys: None,
            iv: Interval::default(),
            last_update: 0,
            cur_logical_clk: 0,
            cur_svc_time_iwgt: 0,
            queues: Queues::default(),
        }
    }

    /// The task context of `t` (for tests).
    pub fn task(&self, t: ThreadId) -> &TaskCtx {
        &self.tasks[t.idx()]
    }
    pub fn task_mut(&mut self, t: ThreadId) -> &mut TaskCtx {
        &mut self.tasks[t.idx()]
    }
    /// thr_perf_cri and thr_lat_cri, settable for tests.
    pub fn set_thresholds(&mut self, thr_perf_cri: u64, thr_lat_cri: u64) {
        if let Some(s) = self.sys.as_mut() {
            s.thr_perf_cri = thr_perf_cri;
            s.thr_lat_cri = thr_lat_cri;
        }
    }
    /// Marks domain `d` as a stealee (for tests).
    pub fn set_stealee(&mut self, d: usize, on: bool) {
        if let Some(s) = self.sys.as_mut() {
            s.doms[d].is_stealee = on;
        }
    }
    /// The current system slice (sys_stat.slice_wall).
    pub fn sys_slice(&self) -> u64 {
        self.sys
            .as_ref()
            .map_or(SLICE_MAX_NS, |s| s.view.slice_wall)
    }
    pub fn power_mode(&self) -> Option<PowerMode> {
        self.sys.as_ref().map(|s| s.mode)
    }

    fn init(&mut self, st: &SchedState) {
        if self.sys.is_some() {
            return;
        }
        let n = st.topo.num_cores();
        let cap: Vec<u64> = st
            .topo
            .cores()
            .map(|c| ((st.topo.capacity(c) * LAVD_SCALE as f64).round() as u64).max(1))
            .collect();
        let mut doms = vec![Domain::default(); st.topo.clusters.len()];
        for c in st.topo.cores() {
            let d = &mut doms[st.topo.cluster_of(c)];
            d.cap_sum += cap[c.idx()];
            d.nr_cpus += 1;
            d.is_big = st.topo.is_big(c);
        }
        let little = st.topo.is_asymmetric();
        self.queues = Queues::new(doms.len());
        self.sys = Some(SysStat::new(cap, doms, little));
        self.cpus = vec![CpuCtx::default(); n];
        self.iv = Interval::new(n);
        self.last_update = st.now;
    }

    fn ensure(&mut self, st: &SchedState, t: ThreadId) {
        self.init(st);
        while self.tasks.len() <= t.idx() {
            // lavd_init_task / lavd_enable (main.bpf.c:2146-2250): clocks
            // at now, average run time = the system slice, service time =
            // the largest any task has had.
            let slice = self.sys_slice();
            self.tasks.push(TaskCtx {
                last_runnable_clk: st.now,
                last_running_clk: st.now,
                last_quiescent_clk: st.now,
                avg_runtime_wall: slice,
                avg_runtime_invr: slice,
                svc_time_iwgt: self.cur_svc_time_iwgt,
                ..TaskCtx::default()
            });
            self.futex_ret.push(false);
        }
    }

    fn sys(&self) -> &SysStat {
        self.sys.as_ref().expect("lavd: used before init")
    }

    fn cap(&self, c: CoreId) -> u64 {
        self.sys().cap[c.idx()]
    }

    /// is_perf_cri, power.bpf.c:178-191.
    pub fn is_perf_cri(&self, t: ThreadId) -> bool {
        let s = self.sys();
        !s.view.have_little_core || self.tasks[t.idx()].perf_cri > s.thr_perf_cri
    }

    /// calc_when_to_run, lat_cri.bpf.c:372-378, with calc_compete_window.
    fn when_to_run(&mut self, st: &SchedState, t: ThreadId) -> u64 {
        let view = self.sys().view;
        let nr_c = st.topo.num_cores() as u64;
        let nr_q = view.nr_queued_task;
        let window = if nr_q > nr_c {
            DL_COMPETE_WINDOW * nr_c / nr_q
        } else {
            DL_COMPETE_WINDOW
        };
        let delta = self.tasks[t.idx()].deadline_delta(&view);
        self.cur_logical_clk.saturating_sub(window) + delta
    }

    /// An idle CPU: nothing running, nothing handed to it.
    fn idle(st: &SchedState, c: CoreId) -> bool {
        st.cores[c.idx()].current.is_none() && st.cores[c.idx()].rq.is_empty()
    }

    /// The idle CPUs (nothing running, nothing handed to it), from the
    /// kept masks rather than a scan of every core.
    fn idle_cpus(st: &SchedState) -> CoreMask {
        st.idle_mask().minus(st.queued_mask())
    }

    /// Summed avg_runtime_invr of the tasks queued in domain `d`
    /// (cpdomc->qload_svc_invr, main.bpf.c:718-748).
    fn queued_svc(&self, st: &SchedState, d: usize) -> u64 {
        let scan = || {
            st.topo
                .cluster_mask(d)
                .iter()
                .flat_map(|c| st.cores[c.idx()].rq.iter())
                .map(|t| self.tasks.get(t.idx()).map_or(0, |x| x.avg_runtime_invr))
                .sum()
        };
        if !st.active_tracked {
            return scan();
        }
        let svc = self.queues.doms[d].svc;
        debug_assert_eq!(svc, scan(), "lavd: queued service out of step");
        svc
    }

    /// calc_comp_time_on_cpdom, balance.bpf.c:296-392.
    fn comp_time(&self, st: &SchedState, task_svc: u64, d: usize) -> u64 {
        let dom = &self.sys().doms[d];
        let svc = self.queued_svc(st, d) + task_svc * dom.nr_cpus;
        (svc * LAVD_SCALE) / dom.cap_sum.max(1)
    }

    /// pick_idle_cpu (idle.bpf.c:757-1111) for a non-affinitised task on
    /// a machine without SMT: (cpu, is_idle).
    pub fn pick_cpu(&self, st: &SchedState, t: ThreadId, prev: CoreId) -> (CoreId, bool) {
        let big_task = self.is_perf_cri(t);
        // find_sticky_cpu_and_cpdom: prev is sticky if its type matches;
        // the sticky domain is prev's either way (idle.bpf.c:519-592).
        let sticky = (st.topo.is_big(prev) == big_task).then_some(prev);
        let dom = st.topo.cluster_of(prev);
        if let Some(s) = sticky {
            if Self::idle(st, s) {
                return (s, true); // idle.bpf.c:951-956
            }
        }
        // An idle CPU of the sticky domain, lowest id first.
        let idle = Self::idle_cpus(st);
        if let Some(c) = idle.intersect(st.topo.cluster_mask(dom)).iter().next() {
            return (c, true); // pick_idle_cpu_at_cpdom, idle.bpf.c:958-966
        }
        let any_idle = !idle.is_empty();
        let s = self.sys();
        if any_idle && s.doms.len() > 1 && s.doms[dom].is_stealee {
            // migrate_to_neighbor with completion-time gain.
            let svc = self.tasks[t.idx()].avg_runtime_invr;
            let ct_s = self.comp_time(st, svc, dom);
            for nd in (0..s.doms.len()).filter(|&d| d != dom) {
                let gain = ct_s as i64 - self.comp_time(st, svc, nd) as i64;
                if gain <= XMIG_MIN_GAIN_NS as i64 {
                    continue;
                }
                let cores = st.topo.cluster_mask(nd);
                if let Some(c) = idle.intersect(cores).iter().next() {
                    return (c, true);
                }
                // find_sticky_cpu_at_cpdom: join that domain's queue.
                if let Some(c) = cores.iter().next() {
                    return (c, false);
                }
            }
        }
        (prev, false) // idle.bpf.c:1080-1085
    }

    /// The queued task with the earliest deadline in domain `d`, not
    /// counting tasks handed directly to another CPU: (cpu, task).
    fn dom_head(&self, st: &SchedState, d: usize, me: CoreId) -> Option<(CoreId, ThreadId)> {
        if !st.active_tracked {
            return self.dom_head_scan(st, d, me);
        }
        // The kept order; a task handed to another CPU's local DSQ is
        // passed over (at most one per CPU, and only until it runs).
        let found = self.queues.doms[d].by_deadline.iter().find_map(|&(_, t)| {
            let c = self.queues.core_of(t)?;
            (c == me || self.cpus[c.idx()].local != Some(t)).then_some((c, t))
        });
        debug_assert_eq!(found, self.dom_head_scan(st, d, me), "lavd: queue index");
        found
    }

    /// dom_head by a pass over the domain's run queues.
    fn dom_head_scan(&self, st: &SchedState, d: usize, me: CoreId) -> Option<(CoreId, ThreadId)> {
        let mut best: Option<(u64, ThreadId, CoreId)> = None;
        for c in st.topo.cluster_mask(d).iter() {
            for &t in st.cores[c.idx()].rq.iter() {
                if c != me && self.cpus[c.idx()].local == Some(t) {
                    continue;
                }
                let dl = self.tasks.get(t.idx()).map_or(0, |x| x.vdeadline);
                if best.is_none_or(|(b, bt, _)| (dl, t) < (b, bt)) {
                    best = Some((dl, t, c));
                }
            }
        }
        best.map(|(_, t, c)| (c, t))
    }

    fn take(c: CoreId, from: CoreId, t: ThreadId) -> Pick {
        if from == c {
            Pick::Local(t)
        } else {
            Pick::Steal { from, thread: t }
        }
    }

    /// Account the running task's time on `c` since the last measurement
    /// (account_task_runtime, main.bpf.c:536-611).
    fn account(&mut self, st: &SchedState, c: CoreId, t: ThreadId) {
        let cap = self.cap(c);
        let x = &mut self.tasks[t.idx()];
        let wall = st.now.saturating_sub(x.last_measured_clk);
        let invr = (wall * cap) >> LAVD_SHIFT;
        let iwgt = invr / NICE0_WEIGHT;
        x.acc_runtime_wall += wall;
        x.acc_runtime_invr += invr;
        x.svc_time_iwgt += iwgt;
        x.last_measured_clk = st.now;
        self.iv.busy_wall[c.idx()] += wall;
        self.iv.busy_invr[c.idx()] += invr;
        self.iv.tot_task_time_iwgt += iwgt;
    }

    /// update_sys_stat when an interval has passed.
    fn maybe_update_sys(&mut self, st: &SchedState) {
        self.init(st);
        let dur = st.now.saturating_sub(self.last_update);
        if dur < SYS_STAT_INTERVAL_NS {
            return;
        }
        let dom_of: Vec<usize> = st.topo.cores().map(|c| st.topo.cluster_of(c)).collect();
        let nd = st.topo.clusters.len();
        let scan = || {
            let mut qload = vec![0u64; nd];
            let mut nr_q = 0u64;
            for c in st.topo.cores() {
                for t in st.cores[c.idx()].rq.iter() {
                    nr_q += 1;
                    qload[dom_of[c.idx()]] += self.tasks.get(t.idx()).map_or(0, task_load);
                }
            }
            (nr_q, qload)
        };
        let (nr_q, qload) = if st.active_tracked {
            let kept = (
                self.queues.len,
                self.queues.doms.iter().map(|q| q.load).collect(),
            );
            debug_assert_eq!(kept, scan(), "lavd: queued load out of step");
            kept
        } else {
            scan()
        };
        let iv = std::mem::replace(&mut self.iv, Interval::new(st.topo.num_cores()));
        self.sys
            .as_mut()
            .expect("init")
            .update(&iv, dur, nr_q, &dom_of, &qload);
        self.last_update = st.now;
    }
}

/// A task's load: its share of a CPU, run time x run frequency
/// (approximates task_load_metric).
fn task_load(x: &TaskCtx) -> u64 {
    (x.avg_runtime_invr.saturating_mul(x.run_freq).min(ONE_SEC) << LAVD_SHIFT) / ONE_SEC
}

/// Futex-based waits (lock.bpf.c hooks futex_wait's return).
fn futex_wait(s: RunState) -> bool {
    matches!(
        s,
        RunState::Blocked(
            BlockKind::Mutex
                | BlockKind::Barrier
                | BlockKind::CondVar
                | BlockKind::QueueFull
                | BlockKind::QueueEmpty
                | BlockKind::Join
        )
    )
}

impl Policy for Lavd {
    fn name(&self) -> &'static str {
        "lavd"
    }

    fn reads_predictions(&self) -> bool {
        false
    }

    fn thread_created(&mut self, st: &SchedState, t: ThreadId) {
        self.ensure(st, t);
    }

    fn select_core(&mut self, st: &SchedState, t: ThreadId, kind: WakeKind) -> CoreId {
        self.ensure(st, t);
        self.maybe_update_sys(st);
        let now = st.now;
        // lavd_runnable (main.bpf.c:1603-1718).
        let x = &mut self.tasks[t.idx()];
        x.acc_runtime_wall = 0;
        x.acc_runtime_invr = 0;
        x.is_wakeup = matches!(kind, WakeKind::Wakeup { .. });
        let parent = match kind {
            WakeKind::Wakeup { waker: Some(w), .. } => {
                self.ensure(st, w);
                let p_lat = self.tasks[t.idx()].lat_cri;
                let wk = &mut self.tasks[w.idx()];
                let interval = now.saturating_sub(wk.last_runnable_clk);
                if interval >= LC_WAKE_INTERVAL_MIN {
                    wk.wake_freq = calc_avg_freq(wk.wake_freq, interval);
                    wk.last_runnable_clk = now;
                }
                wk.lat_cri_wakee = wk.lat_cri_wakee.max(p_lat);
                // The waker called futex_wake: no longer a lock holder
                // (__dec_futex_boost, lock.bpf.c:45-71).
                wk.futex_boost = false;
                if let Some(c) = st.threads[w.idx()].core {
                    if st.cores[c.idx()].current == Some(w) {
                        self.cpus[c.idx()].lock_holder = false;
                    }
                }
                let w_lat = self.tasks[w.idx()].lat_cri;
                self.tasks[t.idx()].lat_cri_waker = w_lat;
                None
            }
            WakeKind::New { parent } => parent,
            _ => None,
        };
        self.futex_ret[t.idx()] = futex_wait(st.threads[t.idx()].state);
        let prev = st.threads[t.idx()]
            .last_core
            .or_else(|| parent.and_then(|p| st.threads[p.idx()].core))
            .unwrap_or(CoreId(0));
        let (c, idle) = self.pick_cpu(st, t, prev);
        if idle {
            self.cpus[c.idx()].local = Some(t);
        }
        c
    }

    fn enqueued(&mut self, st: &SchedState, c: CoreId, t: ThreadId, wakeup: bool) {
        self.ensure(st, t);
        // lavd_enqueue (main.bpf.c:934-1156): the deadline, each enqueue.
        self.tasks[t.idx()].is_wakeup = wakeup;
        let dl = self.when_to_run(st, t);
        self.tasks[t.idx()].vdeadline = dl;
        if st.active_tracked {
            let x = &self.tasks[t.idx()];
            let (svc, load) = (x.avg_runtime_invr, task_load(x));
            self.queues
                .insert(t, c, st.topo.cluster_of(c), dl, svc, load);
        }
    }

    fn migrated(&mut self, _st: &SchedState, t: ThreadId, _from: CoreId, _to: CoreId) {
        // Off its queue (a Migrate re-queues it through `enqueued`).
        self.queues.remove(t);
    }

    fn should_preempt(&mut self, st: &SchedState, c: CoreId, t: ThreadId) -> bool {
        // try_find_and_kick_victim_cpu (preempt.bpf.c:342-430): the kick
        // is a slice cut, honoured at the victim's next tick.
        self.maybe_update_sys(st);
        let thr = self.sys().thr_lat_cri;
        let slice_sys = self.sys().view.slice_wall;
        let x = &self.tasks[t.idx()];
        if x.is_greedy || x.lat_cri < thr {
            return false;
        }
        let me_lat = x.lat_cri;
        let me_stop = st.now + x.avg_runtime_wall.min(x.slice_wall.max(slice_sys));
        // get_est_stopping_clk, preempt.bpf.c:14-24 (a never-run task's
        // slice is the system slice).
        let kickable =
            |cc: &CpuCtx| !cc.lock_holder && me_lat > cc.lat_cri && me_stop < cc.est_stopping_clk;
        let pc = &self.cpus[c.idx()];
        if pc.slice_boost
            && st.cores[c.idx()].current.is_some()
            && st.now.saturating_sub(pc.running_clk) >= slice_sys
            && kickable(pc)
        {
            self.cpus[c.idx()].yield_req = true;
            return false;
        }
        let d = st.topo.cluster_of(c);
        let mut cand: Vec<CoreId> = Vec::with_capacity(2);
        // Only CPUs running a task can be victims: the busy ones, from the
        // masks.
        let busy = st.topo.cluster_mask(d).minus(st.idle_mask());
        let order = std::iter::once(c).chain(busy.iter().filter(|&o| o != c));
        for o in order {
            if st.cores[o.idx()].current.is_some()
                && !self.cpus[o.idx()].yield_req
                && kickable(&self.cpus[o.idx()])
            {
                cand.push(o);
                if cand.len() == 2 {
                    break;
                }
            }
        }
        // Of two candidates, kick the first if it beats the second.
        let victim = match cand[..] {
            [a, b] => {
                let (ca, cb) = (&self.cpus[a.idx()], &self.cpus[b.idx()]);
                if ca.lat_cri > cb.lat_cri && ca.est_stopping_clk < cb.est_stopping_clk {
                    Some(a)
                } else {
                    Some(b)
                }
            }
            [a] => Some(a),
            _ => None,
        };
        if let Some(v) = victim {
            self.cpus[v.idx()].yield_req = true;
        }
        false
    }

    fn pick_next(&mut self, st: &SchedState, c: CoreId) -> Pick {
        self.maybe_update_sys(st);
        // A task handed to this CPU's local DSQ runs first.
        if let Some(t) = self.cpus[c.idx()].local {
            if st.cores[c.idx()].rq.iter().any(|&x| x == t) {
                return Pick::Local(t);
            }
            self.cpus[c.idx()].local = None;
        }
        let d = st.topo.cluster_of(c);
        let nd = st.topo.clusters.len();
        let doms = &self.sys().doms;
        // consume_task (balance.bpf.c:657-734).
        if nd > 1 && doms[d].is_stealer {
            for o in (0..nd).filter(|&o| o != d && doms[o].is_stealee) {
                if let Some((from, t)) = self.dom_head(st, o, c) {
                    return Self::take(c, from, t);
                }
            }
        }
        if let Some((from, t)) = self.dom_head(st, d, c) {
            return Self::take(c, from, t);
        }
        for o in (0..nd).filter(|&o| o != d) {
            if let Some((from, t)) = self.dom_head(st, o, c) {
                return Self::take(c, from, t);
            }
        }
        Pick::Idle
    }

    fn running(&mut self, st: &SchedState, c: CoreId, t: ThreadId) {
        self.ensure(st, t);
        self.queues.remove(t); // taken off every queue
        let now = st.now;
        let view = self.sys().view;
        let cur_clk = self.cur_logical_clk;
        let x = &mut self.tasks[t.idx()];
        let slice = x.calc_time_slice(&view);
        // advance_cur_logical_clk (main.bpf.c:274-307).
        if x.vdeadline > cur_clk {
            let nr_q = view.nr_queued_task.max(1);
            self.cur_logical_clk = cur_clk + (x.vdeadline - cur_clk) / nr_q;
        }
        // update_stat_for_running (main.bpf.c:398-534).
        let wait = now.saturating_sub(x.last_quiescent_clk);
        let interval = x.avg_runtime_invr + wait;
        if interval > 0 {
            x.run_freq = calc_avg_freq(x.run_freq, interval);
        }
        x.is_wakeup = false;
        x.last_running_clk = now;
        x.last_measured_clk = now;
        // reset_lock_futex_boost, then the futex wait returns (fexit).
        if x.futex_boost {
            x.need_lock_boost = true;
        }
        x.futex_boost = std::mem::take(&mut self.futex_ret[t.idx()]);
        let (lat, perf, boost) = (x.lat_cri, x.perf_cri, x.slice_boost);
        let est_stop = now + x.avg_runtime_wall.min(x.slice_wall);
        let holder = x.futex_boost;
        self.iv.nr_sched += 1;
        self.iv.sum_lat_cri += lat;
        self.iv.max_lat_cri = self.iv.max_lat_cri.max(lat);
        self.iv.sum_perf_cri += perf;
        self.iv.min_perf_cri = self.iv.min_perf_cri.min(perf);
        self.iv.max_perf_cri = self.iv.max_perf_cri.max(perf);
        let cc = &mut self.cpus[c.idx()];
        cc.running_clk = now;
        cc.slice_end = now + slice;
        cc.est_stopping_clk = est_stop;
        cc.lat_cri = lat;
        cc.lock_holder = holder;
        cc.slice_boost = boost;
        cc.yield_req = false;
        if cc.local == Some(t) {
            cc.local = None;
        }
    }

    fn stopped(&mut self, st: &SchedState, c: CoreId, t: ThreadId, _ran: Nanos, why: StopReason) {
        self.ensure(st, t);
        self.account(st, c, t);
        let now = st.now;
        let x = &mut self.tasks[t.idx()];
        // update_stat_for_stopping (main.bpf.c:613-656).
        x.avg_runtime_wall = calc_avg(x.avg_runtime_wall, x.acc_runtime_wall);
        x.avg_runtime_invr = calc_avg(x.avg_runtime_invr, x.acc_runtime_invr);
        if self.cur_svc_time_iwgt < x.svc_time_iwgt {
            self.cur_svc_time_iwgt = x.svc_time_iwgt;
        }
        if x.futex_boost {
            x.need_lock_boost = true;
            x.futex_boost = false;
        }
        // lavd_quiescent on sleep (main.bpf.c:1885-1914): wait_freq.
        if why == StopReason::Blocked {
            let interval = now.saturating_sub(x.last_quiescent_clk);
            if interval > 0 {
                x.wait_freq = calc_avg_freq(x.wait_freq, interval);
                x.last_quiescent_clk = now;
            }
        }
        // reset_cpu_preemption_info (preempt.bpf.c:432-440).
        let cc = &mut self.cpus[c.idx()];
        cc.lat_cri = 0;
        cc.est_stopping_clk = u64::MAX;
        cc.lock_holder = false;
        cc.slice_boost = false;
        cc.yield_req = false;
    }

    fn slice_ns(&self, _st: &SchedState, c: CoreId, _t: ThreadId) -> Nanos {
        let cc = &self.cpus[c.idx()];
        cc.slice_end.saturating_sub(cc.running_clk).max(1)
    }

    fn tick(&mut self, st: &SchedState, c: CoreId, _out: &mut Vec<Action>) -> bool {
        // lavd_tick (main.bpf.c:1783-1823): account run time.
        if let Some(t) = st.cores[c.idx()].current {
            self.ensure(st, t);
            self.account(st, c, t);
        }
        self.maybe_update_sys(st);
        let cc = &self.cpus[c.idx()];
        if cc.yield_req {
            return true;
        }
        // Slice over with work waiting in this CPU's domain queue (the
        // engine checks only the CPU's own queue).
        st.now >= cc.slice_end && self.dom_head(st, st.topo.cluster_of(c), c).is_some()
    }
}
