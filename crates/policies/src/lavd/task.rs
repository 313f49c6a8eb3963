//! Per-task statistics of scx_lavd 1.1.4 and the arithmetic built on them:
//! latency criticality, performance criticality, greedy penalty, virtual
//! deadline and time slice. All integer, as in the BPF code.

use colab_core::Nanos;

// ---- Constants (lavd.bpf.h, intf.h, main.rs of scx_lavd 1.1.4) ----

/// LAVD_SHIFT, lavd.bpf.h:32.
pub const LAVD_SHIFT: u32 = 10;
/// LAVD_SCALE = 1 << LAVD_SHIFT, lavd.bpf.h:33.
pub const LAVD_SCALE: u64 = 1 << LAVD_SHIFT;
/// LAVD_TIME_ONE_SEC, lavd.bpf.h:76.
pub const ONE_SEC: u64 = 1_000_000_000;
/// LAVD_TARGETED_LATENCY_NS = 10 ms, lavd.bpf.h:79.
pub const TARGETED_LATENCY_NS: u64 = 10_000_000;
/// LAVD_SLICE_MIN_NS_DFL = 500 us, lavd.bpf.h:80; `--slice-min-us` default
/// 500, main.rs:129-130.
pub const SLICE_MIN_NS: u64 = 500_000;
/// LAVD_SLICE_MAX_NS_DFL = 5 ms, lavd.bpf.h:81; `--slice-max-us` default
/// 5000, main.rs:125-126.
pub const SLICE_MAX_NS: u64 = 5_000_000;
/// LAVD_SLICE_BOOST_BONUS = LAVD_SLICE_MIN_NS_DFL, lavd.bpf.h:82.
pub const SLICE_BOOST_BONUS: u64 = SLICE_MIN_NS;
/// LAVD_SLICE_BOOST_MAX = 500 ms, lavd.bpf.h:83.
pub const SLICE_BOOST_MAX: u64 = 500_000_000;
/// LAVD_SLICE_BOOST_UTIL_WALL = p2s(95), lavd.bpf.h:84.
pub const SLICE_BOOST_UTIL_WALL: u64 = (95 << LAVD_SHIFT) / 100;
/// LAVD_ACC_RUNTIME_MAX = LAVD_SLICE_MAX_NS_DFL, lavd.bpf.h:85.
pub const ACC_RUNTIME_MAX: u64 = SLICE_MAX_NS;
/// LAVD_TASK_LAG_MAX = 500 ms, lavd.bpf.h:86.
pub const TASK_LAG_MAX: u64 = 500_000_000;
/// LAVD_DL_COMPETE_WINDOW = 300 ms >> 16, lavd.bpf.h:87.
pub const DL_COMPETE_WINDOW: u64 = 300_000_000 >> 16;
/// LAVD_LC_FREQ_MAX, lavd.bpf.h:90.
pub const LC_FREQ_MAX: u64 = 100_000;
/// LAVD_LC_RUNTIME_MAX = one second, lavd.bpf.h:91.
pub const LC_RUNTIME_MAX: u64 = ONE_SEC;
/// LAVD_LC_WEIGHT_BOOST_REGULAR, lavd.bpf.h:92.
pub const LC_WEIGHT_BOOST_REGULAR: u64 = 128;
/// LAVD_LC_GREEDY_SHIFT, lavd.bpf.h:96.
pub const LC_GREEDY_SHIFT: u32 = 1;
/// LAVD_LC_WAKE_INTERVAL_MIN = LAVD_SLICE_MIN_NS_DFL, lavd.bpf.h:97.
pub const LC_WAKE_INTERVAL_MIN: u64 = SLICE_MIN_NS;
/// LAVD_LC_INH_RECEIVER_SHIFT, lavd.bpf.h:98.
pub const LC_INH_RECEIVER_SHIFT: u32 = 2;
/// LAVD_LC_INH_GIVER_SHIFT, lavd.bpf.h:99.
pub const LC_INH_GIVER_SHIFT: u32 = 3;
/// `p->scx.weight` of a nice-0 task (sched_ext's weight scale, 1..10000).
/// Every simulated thread is nice 0.
pub const NICE0_WEIGHT: u64 = 100;

/// EWMA with weight 1/8 for the new value: `__calc_avg(old, new, 3)` as
/// used by calc_avg / calc_avg32 (util.bpf.c:100-117).
pub fn calc_avg(old: u64, new: u64) -> u64 {
    old - (old >> 3) + (new >> 3)
}

/// Increase fast (1/4 old), decrease slowly (1/8 new): calc_asym_avg,
/// util.bpf.c:120-129.
pub fn calc_asym_avg(old: u64, new: u64) -> u64 {
    if old < new {
        new - (new >> 2) + (old >> 2)
    } else {
        calc_avg(old, new)
    }
}

/// EWMA of an event frequency (per second) given a new interval:
/// calc_avg_freq, util.bpf.c:132-143.
pub fn calc_avg_freq(old_freq: u64, interval: u64) -> u64 {
    calc_avg(old_freq, ONE_SEC / interval.max(1))
}

/// `clamp(val, lo, hi)` = min(max(val, lo), hi), lavd.bpf.h:624 (hi wins
/// when lo > hi, unlike `Ord::clamp`, which panics).
pub fn clamp(v: u64, lo: u64, hi: u64) -> u64 {
    v.max(lo).min(hi)
}

/// floor(log2(v)), 0 for v = 0: log2_u64 behind log2x, lat_cri.bpf.c:166.
pub fn log2x(v: u64) -> u64 {
    if v == 0 {
        0
    } else {
        63 - u64::from(v.leading_zeros())
    }
}

/// scx_lavd's `task_ctx`, the fields the modelled rules use.
#[derive(Clone, Debug, Default)]
pub struct TaskCtx {
    pub wait_freq: u64,
    pub wake_freq: u64,
    pub run_freq: u64,
    pub avg_runtime_wall: u64,
    pub avg_runtime_invr: u64,
    /// Run time since the task last became runnable (reset in
    /// lavd_runnable, main.bpf.c:1613-1614).
    pub acc_runtime_wall: u64,
    pub acc_runtime_invr: u64,
    pub svc_time_iwgt: u64,
    pub lat_cri: u64,
    pub perf_cri: u64,
    pub lat_cri_waker: u64,
    pub lat_cri_wakee: u64,
    pub last_runnable_clk: Nanos,
    pub last_quiescent_clk: Nanos,
    pub last_running_clk: Nanos,
    /// When the running task's time was last accounted (tick or stop).
    pub last_measured_clk: Nanos,
    /// LAVD_FLAG_IS_WAKEUP (set in lavd_enqueue, main.bpf.c:987-990).
    pub is_wakeup: bool,
    /// LAVD_FLAG_IS_GREEDY (calc_greedy_penalty, lat_cri.bpf.c:281-300).
    pub is_greedy: bool,
    /// LAVD_FLAG_FUTEX_BOOST: returned from a futex wait, not yet woken
    /// anyone (lock.bpf.c:17-71).
    pub futex_boost: bool,
    /// LAVD_FLAG_NEED_LOCK_BOOST, consumed by calc_weight_factor.
    pub need_lock_boost: bool,
    /// `p->scx.dsq_vtime`: the virtual deadline.
    pub vdeadline: u64,
    /// `taskc->slice_wall`; 0 until first scheduled (have_scheduled,
    /// util.bpf.c:235-241).
    pub slice_wall: u64,
    pub slice_boost: bool,
}

/// What calc_lat_cri and calc_time_slice read from `sys_stat`.
#[derive(Clone, Copy, Debug, Default)]
pub struct SysView {
    pub avg_svc_time_iwgt: u64,
    pub avg_lat_cri: u64,
    pub slice_wall: u64,
    pub avg_util_wall: u64,
    pub nr_queued_task: u64,
    pub nr_active: u64,
    pub have_little_core: bool,
}

impl TaskCtx {
    /// calc_weight_factor, lat_cri.bpf.c:21-113: nice-0 weight times one
    /// plus the boosts a simulated thread can earn (wake-up; lock holder).
    /// Sync wake-ups, IRQ, RT/DL wakers, kernel threads and pinning do not
    /// occur in the simulator.
    fn weight_factor(&mut self) -> u64 {
        let mut boost = 1;
        if self.is_wakeup {
            boost += LC_WEIGHT_BOOST_REGULAR; // lat_cri.bpf.c:29-30
        }
        if self.need_lock_boost {
            self.need_lock_boost = false; // lat_cri.bpf.c:105-108
            boost += LC_WEIGHT_BOOST_REGULAR;
        }
        NICE0_WEIGHT * boost + 1 // lat_cri.bpf.c:112
    }

    /// calc_reverse_runtime_factor, lat_cri.bpf.c:128-149.
    fn reverse_runtime_factor(&self) -> u64 {
        if LC_RUNTIME_MAX > self.avg_runtime_invr {
            (LC_RUNTIME_MAX - self.avg_runtime_invr) / SLICE_MIN_NS + 1
        } else {
            1
        }
    }

    /// calc_sum_runtime_factor, lat_cri.bpf.c:151-164.
    fn sum_runtime_factor(&self) -> u64 {
        let runtime = self.avg_runtime_invr.max(self.acc_runtime_invr);
        let sum = self.run_freq.max(1).saturating_mul(runtime.max(1));
        (sum >> LAVD_SHIFT) * NICE0_WEIGHT
    }

    /// calc_lat_cri, lat_cri.bpf.c:171-250: latency criticality from the
    /// wait/wake frequencies, the inverse run time and the weight boost,
    /// squared, plus a bounded inheritance from waker/wakee; performance
    /// criticality from the frequencies and the run time per second.
    pub fn calc_lat_cri(&mut self, sys: &SysView) {
        let wait_ft = self.wait_freq.min(LC_FREQ_MAX) + 1; // calc_wait_factor :115-119
        let wake_ft = self.wake_freq.min(LC_FREQ_MAX) + 1; // calc_wake_factor :121-125
        let runtime_ft = self.reverse_runtime_factor();
        let weight_ft = self.weight_factor();
        let log_wwf = log2x(wait_ft * wake_ft); // :194
        let mut lat_cri = log_wwf + log2x(runtime_ft * weight_ft); // :195
        lat_cri *= lat_cri; // :201
        let giver = self.lat_cri_waker + self.lat_cri_wakee; // :213
        if giver > 2 * lat_cri {
            let giver_inh = (giver - 2 * lat_cri) >> LC_INH_GIVER_SHIFT;
            let receiver_max = lat_cri >> LC_INH_RECEIVER_SHIFT;
            lat_cri += giver_inh.min(receiver_max); // :214-223
        }
        self.lat_cri = lat_cri;
        self.lat_cri_waker = 0;
        self.lat_cri_wakee = 0;
        // :244-248: perf_cri = LAVD_SCALE on machines without little cores.
        self.perf_cri = if sys.have_little_core {
            log_wwf + log2x(self.sum_runtime_factor())
        } else {
            LAVD_SCALE
        };
    }

    /// calc_greedy_penalty, lat_cri.bpf.c:267-314: 1024..2048 as the task
    /// got more service than the system average (lag_max is 500 ms for a
    /// nice-0 task: scale_by_task_weight_inverse of a weight-100 task).
    pub fn greedy_penalty(&mut self, sys: &SysView) -> u64 {
        let lag_max = TASK_LAG_MAX as i64;
        let mut lag = sys.avg_svc_time_iwgt as i64 - self.svc_time_iwgt as i64;
        if lag >= 0 {
            self.is_greedy = false;
            if lag > lag_max {
                self.svc_time_iwgt = sys.avg_svc_time_iwgt.saturating_sub(TASK_LAG_MAX);
                lag = lag_max;
            }
        } else {
            self.is_greedy = true;
            lag = lag.max(-lag_max);
        }
        let penalty = (((-lag + lag_max) as u64) << LAVD_SHIFT) / TASK_LAG_MAX;
        LAVD_SCALE + (penalty >> LC_GREEDY_SHIFT)
    }

    /// calc_virtual_deadline_delta, lat_cri.bpf.c:336-353, with
    /// calc_adjusted_runtime (:316-334).
    pub fn deadline_delta(&mut self, sys: &SysView) -> u64 {
        self.calc_lat_cri(sys);
        let penalty = self.greedy_penalty(sys);
        let adjusted = ACC_RUNTIME_MAX + self.acc_runtime_invr.min(ACC_RUNTIME_MAX);
        ((adjusted * penalty) / self.lat_cri.max(1)) >> LAVD_SHIFT
    }

    /// calc_time_slice, main.bpf.c:309-396 (no pinned tasks in the
    /// simulator): the system slice, boosted to the task's average run
    /// time when the machine has room (can_boost_slice, util.bpf.c:245-255),
    /// or up to 2x for latency-critical tasks under load.
    pub fn calc_time_slice(&mut self, sys: &SysView) -> u64 {
        if self.avg_runtime_wall >= sys.slice_wall {
            let can_boost =
                sys.avg_util_wall <= SLICE_BOOST_UTIL_WALL && sys.nr_queued_task <= sys.nr_active;
            if can_boost {
                let s = self.avg_runtime_wall + SLICE_BOOST_BONUS;
                self.slice_wall = clamp(s, SLICE_MIN_NS, SLICE_BOOST_MAX);
                self.slice_boost = true;
                return self.slice_wall;
            }
            if self.lat_cri > sys.avg_lat_cri {
                let b = (sys.slice_wall * self.lat_cri) / (sys.avg_lat_cri + 1);
                let s = sys.slice_wall + b;
                let hi = self.avg_runtime_wall.min(sys.slice_wall * 2);
                self.slice_wall = clamp(s, SLICE_MIN_NS, hi);
                self.slice_boost = true;
                return self.slice_wall;
            }
        }
        self.slice_wall = sys.slice_wall;
        self.slice_boost = false;
        self.slice_wall
    }
}
