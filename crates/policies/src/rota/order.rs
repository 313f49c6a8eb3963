//! How ROTA ranks the threads that want a fast core: the slowdown
//! gradient, per thread or per program (with the per-program sums it
//! reads), and the third freeze's capped FIFO with its account placement.

use super::fixed::{mul_div, shl_div, OpenSum};
use super::{Order, Rota, FP};
use colab_core::{CoreId, Nanos, RunState, SchedState, ThreadId};

/// A thread's priority for a fast core ([`Rota::fast_rank`]), smaller first.
pub(super) type Rank = (bool, u64, ThreadId);

/// A program's threads' runnable time and fast-core-equivalent progress,
/// summed and kept as they change (per-thread-group counters in a kernel),
/// so that its rate is read without a pass over its threads.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct ProgRate {
    /// Runnable time of its threads' finished runnable spells (wake to block).
    pub(super) run_done_ns: u64,
    /// Its awake threads' runnable time since each one woke.
    pub(super) run_open: OpenSum,
    /// Progress of its threads' finished runs, ns x FP: each thread's fast
    /// time times FP plus its slow time times FP^2 / s, s its speedup as
    /// predicted now (as [`Rota::ntt_gain`] counts a thread's progress).
    /// Exact up to 2^54 ns (208 days) of CPU time; saturates beyond.
    pub(super) done_fp: u64,
    /// Its running threads' progress in their current runs, each at its
    /// progress factor (FP on a fast core, FP^2 / s on a slow one).
    pub(super) progress_open: OpenSum,
}

impl Rota {
    /// Fast-core time of `t` per unit of predicted speedup (what the
    /// rotation equalises), counting a current fast-core run.
    pub(super) fn owed_key(&self, st: &SchedState, t: ThreadId) -> u64 {
        self.fast_time_now(st, t).saturating_mul(FP) / self.th[t.idx()].speed_fp.max(FP)
    }

    /// `t`'s fast-core time so far, counting a current fast-core run.
    fn fast_time_now(&self, st: &SchedState, t: ThreadId) -> u64 {
        let on_fast = st.thread(t).core.is_some_and(|c| self.is_fast(c));
        self.th[t.idx()].fast_ns + if on_fast { self.current_run(st, t) } else { 0 }
    }

    /// `t`'s CPU time so far, counting a current run.
    pub(super) fn cpu_time_now(&self, st: &SchedState, t: ThreadId) -> u64 {
        st.thread(t).sum_exec_ns + self.current_run(st, t)
    }

    /// Since when `t` has been runnable without a break: since it last woke
    /// (`full-wait`), or as the simulator's queue order counts, since it was
    /// last queued, which a preemption restarts (the earlier freezes'
    /// reading, which lost the runnable time before a preemption).
    pub(super) fn runnable_from(&self, st: &SchedState, t: ThreadId) -> Nanos {
        if self.params.full_wait {
            self.th[t.idx()].woke_at_ns
        } else {
            st.thread(t).runnable_since
        }
    }

    /// How long `t` has been running on its core now (0 if it is not running).
    fn current_run(&self, st: &SchedState, t: ThreadId) -> u64 {
        match st.thread(t).core {
            Some(c) if st.core(c).current == Some(t) => st.current_ran(c),
            _ => 0,
        }
    }

    /// What a unit of fast-core time lowers `t`'s slowdown by, up to a
    /// constant factor (`order=ntt`): (1 - 1/s) / r^2, with r its
    /// fast-core-equivalent progress (fast time, plus slow time over the
    /// predicted speedup s) per unit of time runnable. Both times start
    /// with a rotation quantum at full speed, so that a new thread's first
    /// wait does not rank it as starved before it has had a turn
    /// (assumption: one quantum, the rotation's own granularity). In 64-bit
    /// integers: r^-1 in 16 fractional bits, capped at 256 (a thread that
    /// progressed at under 1/256 of full speed ranks as if at 1/256), so
    /// the product stays under 2^58; exact while its runnable time is
    /// under 2^48 ns (3.2 days).
    fn ntt_gain(
        &self,
        st: &SchedState,
        t: ThreadId,
        prog_inv: &mut impl FnMut(usize) -> u64,
    ) -> u64 {
        let s = &self.th[t.idx()];
        let th = st.thread(t);
        let speed = s.speed_fp.max(FP);
        let gain = (speed - FP) * FP / speed;
        let p = th.program.idx();
        let seen = || self.runs_done.get(p).is_some_and(|&n| n > 0);
        let at_program_rate = match self.params.order {
            Order::NttPr => true,
            Order::NttSeen => seen(),
            _ => false,
        };
        if at_program_rate {
            // The program's rate, the gain divided among its runnable threads.
            let n = self.active.get(p).copied().unwrap_or(1).max(1) as u64;
            let inv = prog_inv(p);
            return gain * inv * inv / n;
        }
        let fast = self.fast_time_now(st, t);
        let slow = self.cpu_time_now(st, t).saturating_sub(fast);
        let q = self.m().quantum_ns;
        // `split-prior`: the prior is the program's, shared by its live
        // threads, so that it fades for a thread of many as for a program.
        let q = if self.params.split_prior {
            q / self.live.get(p).copied().unwrap_or(1).max(1) as u64
        } else {
            q
        };
        let mut runnable = s.runnable_ns;
        if matches!(th.state, RunState::Runnable | RunState::Running) {
            runnable += st.now.saturating_sub(self.runnable_from(st, t));
        }
        let progress = fast
            .saturating_add(mul_div(slow, FP, speed))
            .saturating_add(q)
            .max(1);
        let inv_rate = shl_div(runnable.saturating_add(q), 16, progress, 1 << 24);
        gain * inv_rate * inv_rate
    }

    /// Program `p`'s runnable time over its progress (x 2^16), its threads'
    /// summed, each sum starting with one quantum at full speed (as
    /// [`Rota::ntt_gain`]'s per thread), capped at 256; exact while the
    /// runnable time is under 2^48 ns (3.2 days over all its threads).
    fn prog_inv_rate(&self, st: &SchedState, p: usize) -> u64 {
        let Some(r) = self.prog_rate.get(p) else {
            return 1 << 16;
        };
        let q = self.m().quantum_ns;
        let run = r.run_done_ns.saturating_add(r.run_open.at(st.now));
        let progress_fp = r.done_fp.saturating_add(r.progress_open.at(st.now));
        #[cfg(debug_assertions)]
        self.check_prog_rate(st, p, run as u128, progress_fp as u128);
        let prog = (progress_fp / FP).saturating_add(q);
        shl_div(run.saturating_add(q), 16, prog, 1 << 24)
    }

    /// Debug builds: the kept sums against a pass over the program's threads
    /// (progress within two units per thread for the rounding of FP^2 / s,
    /// and one per ns of a current slow run, whose factor is rounded).
    #[cfg(debug_assertions)]
    fn check_prog_rate(&self, st: &SchedState, p: usize, run: u128, progress_fp: u128) {
        let (mut want_run, mut want_fp, mut slack) = (0u128, 0u128, 0u128);
        for th in st.threads.iter().filter(|x| x.program.idx() == p) {
            let s = &self.th[th.id.idx()];
            want_run += s.runnable_ns as u128;
            if s.awake {
                want_run += st.now.saturating_sub(s.woke_at_ns) as u128;
            }
            let cur = self.current_run(st, th.id) as u128;
            let (fast, slow) = match s.run_factor_fp {
                0 => (s.fast_ns as u128, s.slow_ns as u128),
                _ if s.run_fast => (s.fast_ns as u128 + cur, s.slow_ns as u128),
                _ => (s.fast_ns as u128, s.slow_ns as u128 + cur),
            };
            want_fp += fast * FP as u128 + slow * (FP * FP) as u128 / s.speed_fp.max(FP) as u128;
            slack += 2 + if s.run_fast { 0 } else { cur };
        }
        debug_assert_eq!(run, want_run, "program {p}'s runnable time");
        debug_assert!(
            progress_fp.abs_diff(want_fp) <= slack,
            "program {p}'s progress {progress_fp} against {want_fp}"
        );
    }

    /// Counts `t`'s current run (begun at `run_start`, on the kind of core
    /// `run_fast` says) in its program's open progress, at its speedup now.
    pub(super) fn set_run_factor(&mut self, st: &SchedState, t: ThreadId) {
        let s = &mut self.th[t.idx()];
        let f = if s.run_fast {
            FP
        } else {
            FP * FP / s.speed_fp.max(FP)
        };
        s.run_factor_fp = f;
        let r = &mut self.prog_rate[st.thread(t).program.idx()];
        r.progress_open.open(st.now, f, s.run_start);
    }

    /// Takes `t`'s current run out of its program's open progress.
    pub(super) fn clear_run_factor(&mut self, st: &SchedState, t: ThreadId) {
        let s = &mut self.th[t.idx()];
        let (f, start) = (s.run_factor_fp, s.run_start);
        s.run_factor_fp = 0;
        let r = &mut self.prog_rate[st.thread(t).program.idx()];
        r.progress_open.close(st.now, f, start);
    }

    /// Recounts `t`'s finished runs' progress in its program's, after its
    /// times or its predicted speedup changed.
    pub(super) fn refresh_progress(&mut self, st: &SchedState, t: ThreadId) {
        let s = &mut self.th[t.idx()];
        let new = s.fast_ns.saturating_mul(FP).saturating_add(mul_div(
            s.slow_ns,
            FP * FP,
            s.speed_fp.max(FP),
        ));
        let r = &mut self.prog_rate[st.thread(t).program.idx()];
        r.done_fp = r.done_fp.saturating_sub(s.progress_fp).saturating_add(new);
        s.progress_fp = new;
    }

    /// How far ahead of the least-served waiting thread a thread may be in
    /// fast-core time (per unit of speedup) and keep its FIFO place.
    pub(super) fn cap_ns(&self) -> u64 {
        self.m().quantum_ns
    }

    /// Places a new or waking thread's fast-core account against the least
    /// served of the other threads that want a core (waiting, or on a fast
    /// core): level with it if new, at most a cap behind it if waking.
    pub(super) fn place(&mut self, st: &SchedState, t: ThreadId, new: bool) {
        let on_fast = self
            .m()
            .fast
            .iter()
            .filter_map(|c| st.core(c).current.map(|x| (c, x)));
        let Some(least) = self
            .waiting(st)
            .chain(on_fast)
            .filter(|&(_, x)| x != t)
            .map(|(_, x)| self.owed_key(st, x))
            .min()
        else {
            return;
        };
        let floor = if new {
            least
        } else {
            least.saturating_sub(self.cap_ns())
        };
        if self.owed_key(st, t) < floor {
            // owed_key = fast_ns * FP / speedup, so this is its inverse,
            // rounded up so that the key reaches the floor.
            let s = &mut self.th[t.idx()];
            s.fast_ns = floor.saturating_mul(s.speed_fp.max(FP)).div_ceil(FP);
        }
    }

    /// What the capped order ranks against: the least fast-core time (per
    /// unit of speedup) of the threads that want a fast core; 0 in the
    /// other orders, which do not read it.
    pub(crate) fn rank_floor(&self, st: &SchedState) -> u64 {
        if self.params.order != Order::Capped {
            return 0;
        }
        self.waiting(st)
            .map(|(_, t)| self.owed_key(st, t))
            .min()
            .unwrap_or(0)
    }

    /// Priority for a fast core: serial phases first, then the order's key,
    /// then the lower id. Smaller first. `floor`: [`Rota::rank_floor`] of the same moment.
    pub(crate) fn fast_rank(&self, st: &SchedState, t: ThreadId, floor: u64) -> Rank {
        self.rank_with(st, t, floor, &mut |p| self.prog_inv_rate(st, p))
    }

    /// [`Rota::fast_rank`] for a pass over the threads that want a fast
    /// core at one instant: a program's rate (`order=ntt-pr`) is read once
    /// per run of its threads rather than once per thread, since nothing
    /// changes during the pass.
    pub(super) fn ranker<'a>(
        &'a self,
        st: &'a SchedState,
        floor: u64,
    ) -> impl FnMut(&(CoreId, ThreadId)) -> Rank + 'a {
        let mut last: Option<(usize, u64)> = None;
        move |&(_, t)| {
            let mut prog_inv = |p: usize| match last {
                Some((q, inv)) if q == p => {
                    debug_assert_eq!(inv, self.prog_inv_rate(st, p), "program {p}'s rate");
                    inv
                }
                _ => {
                    let inv = self.prog_inv_rate(st, p);
                    last = Some((p, inv));
                    inv
                }
            };
            self.rank_with(st, t, floor, &mut prog_inv)
        }
    }

    /// [`Rota::fast_rank`], reading a program's rate through `prog_inv`.
    fn rank_with(
        &self,
        st: &SchedState,
        t: ThreadId,
        floor: u64,
        prog_inv: &mut impl FnMut(usize) -> u64,
    ) -> Rank {
        let key = match self.params.order {
            Order::Capped => {
                let ahead = self.owed_key(st, t) > floor.saturating_add(self.cap_ns());
                ((ahead as u64) << 62) | st.thread(t).runnable_since.min((1 << 62) - 1)
            }
            Order::Ntt | Order::NttPr | Order::NttSeen => u64::MAX - self.ntt_gain(st, t, prog_inv),
            Order::SjfOracle => {
                let p = st.thread(t).program.idx();
                self.oracle_len.get(p).copied().unwrap_or(u64::MAX)
            }
        };
        (!self.is_serial(st, t), key, t)
    }
}
