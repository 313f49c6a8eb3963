//! scx_lavd 1.1.4's system-wide statistics, refreshed every
//! LAVD_SYS_STAT_INTERVAL_NS (update_sys_stat, sys_stat.bpf.c:795-825):
//! utilisation, latency/performance criticality averages, the system time
//! slice, the autopilot power mode, the big-core threshold on perf_cri and
//! the stealer/stealee roles of the compute domains (balance.bpf.c).

use super::task::{calc_asym_avg, calc_avg, clamp, SysView, LAVD_SCALE, LAVD_SHIFT};
use super::task::{SLICE_MAX_NS, SLICE_MIN_NS, TARGETED_LATENCY_NS};

/// LAVD_SYS_STAT_INTERVAL_NS = 10 ms, lavd.bpf.h:108.
pub const SYS_STAT_INTERVAL_NS: u64 = 10_000_000;
/// `--preempt-shift` default 6, main.rs:205.
pub const PREEMPT_SHIFT: u32 = 6;
/// LAVD_AP_HIGH_UTIL_DFL_NO_SMT_RT = p2s(50), lavd.bpf.h:125 (no SMT).
pub const AP_HIGH_UTIL: u64 = (50 << LAVD_SHIFT) / 100;
/// `--lb-low-util-pct` default 25, main.rs:162: periodic balancing is
/// skipped below 25% per-CPU utilisation (plan_x_cpdom_migration).
pub const LB_LOW_UTIL: u64 = (25 << LAVD_SHIFT) / 100;
/// LAVD_CPDOM_MIG_SHIFT_UL / _ / _OL, lavd.bpf.h:128-130.
pub const CPDOM_MIG_SHIFT_UL: u32 = 2;
pub const CPDOM_MIG_SHIFT: u32 = 3;
pub const CPDOM_MIG_SHIFT_OL: u32 = 4;

/// LAVD_PM_*, intf.h:157-162.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PowerMode {
    Performance,
    Balanced,
    Powersave,
}

/// What the CPUs collected during one interval (cpu_ctx counters summed
/// by collect_sys_stat, sys_stat.bpf.c).
#[derive(Clone, Debug, Default)]
pub struct Interval {
    pub busy_wall: Vec<u64>,
    pub busy_invr: Vec<u64>,
    pub nr_sched: u64,
    pub sum_lat_cri: u64,
    pub max_lat_cri: u64,
    pub sum_perf_cri: u64,
    pub min_perf_cri: u64,
    pub max_perf_cri: u64,
    pub tot_task_time_iwgt: u64,
}

impl Interval {
    pub fn new(n: usize) -> Interval {
        Interval {
            busy_wall: vec![0; n],
            busy_invr: vec![0; n],
            min_perf_cri: u64::MAX,
            ..Interval::default()
        }
    }
}

/// One compute domain (a cluster).
#[derive(Clone, Debug, Default)]
pub struct Domain {
    pub cap_sum: u64,
    pub nr_cpus: u64,
    pub is_big: bool,
    pub is_stealer: bool,
    pub is_stealee: bool,
}

/// `sys_stat` plus the per-CPU utilisation averages it is built from.
#[derive(Clone, Debug)]
pub struct SysStat {
    pub view: SysView,
    pub avg_util_invr: u64,
    pub max_lat_cri: u64,
    pub thr_lat_cri: u64,
    pub min_perf_cri: u64,
    pub avg_perf_cri: u64,
    pub max_perf_cri: u64,
    pub thr_perf_cri: u64,
    pub mode: PowerMode,
    /// Per-CPU EWMAs of utilisation (cpuc->avg_util_wall / _invr).
    pub cpu_util_wall: Vec<u64>,
    pub cpu_util_invr: Vec<u64>,
    pub doms: Vec<Domain>,
    /// Core capacities, 1024 for the fastest type (cpuc->max_capacity).
    pub cap: Vec<u64>,
}

impl SysStat {
    pub fn new(cap: Vec<u64>, doms: Vec<Domain>, have_little_core: bool) -> SysStat {
        let n = cap.len();
        SysStat {
            // init_sys_stat, sys_stat.bpf.c:850-856: all CPUs active, the
            // maximum slice.
            view: SysView {
                slice_wall: SLICE_MAX_NS,
                nr_active: n as u64,
                have_little_core,
                ..SysView::default()
            },
            avg_util_invr: 0,
            max_lat_cri: 0,
            thr_lat_cri: 0,
            min_perf_cri: 0,
            avg_perf_cri: 0,
            max_perf_cri: 0,
            thr_perf_cri: 0,
            mode: PowerMode::Performance,
            cpu_util_wall: vec![0; n],
            cpu_util_invr: vec![0; n],
            doms,
            cap,
        }
    }

    /// calc_sys_stat (sys_stat.bpf.c:595-700), do_autopilot
    /// (power.bpf.c:565-597), calc_sys_time_slice (sys_stat.bpf.c:760-778),
    /// update_thr_perf_cri (power.bpf.c:599-700) and
    /// plan_x_cpdom_migration (balance.bpf.c:145-250), in that order.
    /// `nr_queued`: tasks waiting in DSQs now; `dom_of`: each CPU's domain;
    /// `qload`: per domain, the queued tasks' load.
    pub fn update(
        &mut self,
        iv: &Interval,
        dur: u64,
        nr_queued: u64,
        dom_of: &[usize],
        qload: &[u64],
    ) {
        let n = self.cap.len() as u64;
        let dur = dur.max(1);
        // Per-CPU and system utilisation (wall and capacity-invariant).
        let (mut sum_w, mut sum_i) = (0, 0);
        for c in 0..self.cap.len() {
            let w = ((iv.busy_wall[c].min(dur)) << LAVD_SHIFT) / dur;
            let i = ((iv.busy_invr[c].min(dur)) << LAVD_SHIFT) / dur;
            self.cpu_util_wall[c] = calc_avg(self.cpu_util_wall[c], w);
            self.cpu_util_invr[c] = calc_avg(self.cpu_util_invr[c], i);
            sum_w += w;
            sum_i += i;
        }
        self.view.avg_util_wall = calc_asym_avg(self.view.avg_util_wall, sum_w / n);
        self.avg_util_invr = calc_asym_avg(self.avg_util_invr, sum_i / n);
        // Criticality statistics (sys_stat.bpf.c:646-685).
        let (c_max, c_avg, c_min_p, c_avg_p, c_max_p) = match (
            iv.sum_lat_cri.checked_div(iv.nr_sched),
            iv.sum_perf_cri.checked_div(iv.nr_sched),
        ) {
            (Some(lat), Some(perf)) => {
                (iv.max_lat_cri, lat, iv.min_perf_cri, perf, iv.max_perf_cri)
            }
            _ => (
                self.max_lat_cri,
                self.view.avg_lat_cri,
                self.min_perf_cri,
                self.avg_perf_cri,
                self.max_perf_cri,
            ),
        };
        self.max_lat_cri = calc_avg(self.max_lat_cri, c_max);
        self.view.avg_lat_cri = calc_avg(self.view.avg_lat_cri, c_avg);
        self.thr_lat_cri = self.max_lat_cri
            - (self.max_lat_cri.saturating_sub(self.view.avg_lat_cri) >> PREEMPT_SHIFT);
        if self.view.have_little_core {
            self.min_perf_cri = calc_avg(self.min_perf_cri, c_min_p);
            self.avg_perf_cri = calc_avg(self.avg_perf_cri, c_avg_p);
            self.max_perf_cri = calc_avg(self.max_perf_cri, c_max_p);
        }
        let svc = iv.tot_task_time_iwgt.checked_div(iv.nr_sched).unwrap_or(0);
        self.view.avg_svc_time_iwgt = calc_avg(self.view.avg_svc_time_iwgt, svc);
        self.view.nr_queued_task = calc_avg(self.view.nr_queued_task, nr_queued);

        // do_autopilot: the required capacity against the low and high
        // marks (init_autopilot_caps, power.bpf.c:915-960, no energy model).
        let total_cap: u64 = self.cap.iter().sum();
        let little_cap = self.cap.iter().copied().min().unwrap_or(LAVD_SCALE);
        let req_cap = n * self.avg_util_invr; // calc_required_capacity, power.bpf.c:205-217
        self.mode = if req_cap <= little_cap / 2 {
            PowerMode::Powersave
        } else if req_cap <= (total_cap * AP_HIGH_UTIL) >> LAVD_SHIFT {
            PowerMode::Balanced
        } else {
            PowerMode::Performance
        };

        // calc_sys_time_slice: the targeted latency shared by the queued
        // tasks over the active CPUs, within the slice bounds.
        let nr_q = self.view.nr_queued_task;
        let slice = (TARGETED_LATENCY_NS * self.view.nr_active)
            .checked_div(nr_q)
            .map_or(SLICE_MAX_NS, |s| clamp(s, SLICE_MIN_NS, SLICE_MAX_NS));
        self.view.slice_wall = calc_avg(self.view.slice_wall, slice);

        self.update_thr_perf_cri(total_cap);
        self.plan_x_cpdom_migration(dom_of, qload);
    }

    /// update_thr_perf_cri, power.bpf.c:599-700. Every CPU stays active
    /// here (core compaction is not modelled), so the big cores' share of
    /// capacity is default_big_core_scale.
    fn update_thr_perf_cri(&mut self, total_cap: u64) {
        let big_cap: u64 = self
            .doms
            .iter()
            .filter(|d| d.is_big)
            .map(|d| d.cap_sum)
            .sum();
        let big_scale = (big_cap << LAVD_SHIFT) / total_cap.max(1);
        if big_scale == 0 {
            self.thr_perf_cri = self.max_perf_cri;
            return;
        }
        if big_scale >= LAVD_SCALE {
            self.thr_perf_cri = 0;
            return;
        }
        let little_scale = LAVD_SCALE - big_scale;
        let half = LAVD_SCALE >> 1;
        self.thr_perf_cri = if little_scale < half {
            let delta = self.avg_perf_cri.saturating_sub(self.min_perf_cri);
            self.min_perf_cri + (delta * little_scale) / half
        } else {
            let delta = self.max_perf_cri.saturating_sub(self.avg_perf_cri);
            self.avg_perf_cri + (delta * (little_scale - half)) / half
        };
    }

    /// plan_x_cpdom_migration with classify_cpdom and calc_mig_delta,
    /// balance.bpf.c:24-250 (the default fast balancer: load = running
    /// utilisation + queued load; fair share by capacity).
    fn plan_x_cpdom_migration(&mut self, dom_of: &[usize], qload: &[u64]) {
        let nd = self.doms.len();
        if nd < 2 {
            return;
        }
        let mut load = vec![0u64; nd];
        let mut util_wall = vec![0u64; nd];
        for (c, &d) in dom_of.iter().enumerate() {
            load[d] += self.cpu_util_invr[c];
            util_wall[d] += self.cpu_util_wall[c];
        }
        let mut max_util = 0;
        let mut nz_qlen = 0;
        for d in 0..nd {
            max_util = max_util.max(util_wall[d] / self.doms[d].nr_cpus.max(1));
            load[d] += qload[d];
            nz_qlen += u64::from(qload[d] > 0);
        }
        let reset = |doms: &mut Vec<Domain>| {
            for d in doms.iter_mut() {
                d.is_stealer = false;
                d.is_stealee = false;
            }
        };
        if max_util < LB_LOW_UTIL {
            reset(&mut self.doms);
            return;
        }
        let total_load: u64 = load.iter().sum();
        let total_cap: u64 = self.doms.iter().map(|d| d.cap_sum).sum();
        for d in 0..nd {
            let dom = &mut self.doms[d];
            let fair = total_load * dom.cap_sum / total_cap.max(1);
            let delta = if nz_qlen >= nd as u64 {
                fair >> CPDOM_MIG_SHIFT_OL
            } else if nz_qlen == 0 {
                fair >> CPDOM_MIG_SHIFT_UL
            } else {
                fair >> CPDOM_MIG_SHIFT
            };
            dom.is_stealer = false;
            dom.is_stealee = false;
            if load[d] <= fair - delta {
                dom.is_stealer = true;
            } else if load[d] >= fair + delta && qload[d] > 0 && load[d] > fair {
                dom.is_stealee = true;
            }
        }
        if !self.doms.iter().any(|d| d.is_stealee) {
            reset(&mut self.doms);
        }
    }
}
