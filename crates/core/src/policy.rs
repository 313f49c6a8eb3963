//! The policy interface: a table of hooks shaped like the kernel's
//! `sched_class` / `sched_ext_ops`.
//!
//! | hook            | kernel counterpart                         |
//! |-----------------|--------------------------------------------|
//! | `select_core`   | `select_task_rq` / `ops.select_cpu`        |
//! | `enqueued`      | `enqueue_task` / `ops.enqueue`             |
//! | `should_preempt`| `check_preempt_curr` (wakeup preemption)   |
//! | `pick_next`     | `pick_next_task` + idle balance / `ops.dispatch` |
//! | `running`       | `set_next_task` / `ops.running`            |
//! | `stopped`       | `put_prev_task`, `dequeue_task` / `ops.stopping` |
//! | `migrated`      | `migrate_task_rq`                          |
//! | `slice_ns`      | `sched_slice` / `p->scx.slice`             |
//! | `tick`          | `task_tick` + `trigger_load_balance`       |
//! | `periodic`      | a kernel timer (COLAB's 10 ms labeller, WASH's 40 ms quantum) |
//!
//! The caller (simulator or live scheduler) owns run-queue membership in
//! [`SchedState`]; a policy decides *where* threads go and *which* runs next,
//! and keeps whatever private per-thread state it needs (vruntime, labels).

use crate::{CoreId, Nanos, SchedState, ThreadId};

/// Why a thread needs a core.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WakeKind {
    /// Newly created (fork/clone); `parent` created it.
    New { parent: Option<ThreadId> },
    /// Woken from sleep; `waker` is the thread that woke it (None for timers / I/O).
    /// `broadcast`: the waker let every waiter go in one call (a barrier's
    /// last arrival, a condition broadcast, a closed queue), as a kernel
    /// reads from a FUTEX_WAKE asking for all waiters (nr_wake = INT_MAX);
    /// false for a hand-off to one waiter, a timer or I/O.
    Wakeup {
        waker: Option<ThreadId>,
        broadcast: bool,
    },
}

impl WakeKind {
    /// A wake-up of one waiter (a hand-off), or by a timer or I/O with no
    /// waker: not a wake-all.
    pub const fn wakeup(waker: Option<ThreadId>) -> WakeKind {
        WakeKind::Wakeup {
            waker,
            broadcast: false,
        }
    }
}

/// What a core should run next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pick {
    /// Go idle.
    Idle,
    /// Go idle, and pick again at this time (ns) if still idle then: a
    /// decision that only waits for time to pass (a thread elsewhere has
    /// not yet run long enough to be worth moving), which a BPF scheduler
    /// makes with a per-CPU `bpf_timer` that kicks the idle CPU. A time
    /// not after now means now + 1 ns.
    IdleUntil(Nanos),
    /// Run a thread from this core's own run queue.
    Local(ThreadId),
    /// Pull a runnable thread from another core's run queue.
    Steal { from: CoreId, thread: ThreadId },
    /// Preempt the thread running on another core and run it here.
    PreemptRemote { from: CoreId, thread: ThreadId },
}

/// Asynchronous requests from `tick` and `periodic`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Move a runnable or running thread to another core's run queue
    /// (load balancing, affinity changes).
    Migrate { thread: ThreadId, to: CoreId },
    /// Make a core re-pick (e.g. an idle core that should try to pull work).
    Resched(CoreId),
}

/// Why a thread left its core.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// Descheduled but still runnable: it goes back on a run queue.
    Preempted,
    /// Went to sleep (futex, barrier, join, I/O).
    Blocked,
    /// Finished.
    Exited,
}

/// A scheduling policy. All hooks are pure decision logic over `st`.
pub trait Policy: Send {
    /// Short name used on the command line (`cfs`, `wash`, `colab`, ...).
    fn name(&self) -> &'static str;

    /// Does the policy read `predicted_speedup` / `predicted_energy_ratio`?
    /// A policy that does not runs without counter work (its schedule is the
    /// same whatever the predictor). Conservative default: yes.
    fn reads_predictions(&self) -> bool {
        true
    }

    /// Explicit oracle mode, for ablations only: does the policy want each
    /// program's run time alone on big cores (T_SB, the metrics' baseline),
    /// which no real kernel knows? Campaigns then run the programs alone
    /// first and hand the times over with [`Policy::oracle_program_lengths`]
    /// before the run.
    fn wants_oracle_lengths(&self) -> bool {
        false
    }

    /// Each program's T_SB in ns, by program index (oracle mode, above).
    fn oracle_program_lengths(&mut self, _t_sb_ns: &[Nanos]) {}

    /// A thread was created (before its first `select_core`).
    fn thread_created(&mut self, _st: &SchedState, _t: ThreadId) {}

    /// Choose the run queue for a new or waking thread.
    fn select_core(&mut self, st: &SchedState, t: ThreadId, kind: WakeKind) -> CoreId;

    /// `t` was appended to `c`'s run queue (after `select_core`, after a
    /// preemption, or after a migration).
    fn enqueued(&mut self, _st: &SchedState, _c: CoreId, _t: ThreadId, _wakeup: bool) {}

    /// `t` was just enqueued on busy core `c`: should it preempt the current thread?
    fn should_preempt(&mut self, st: &SchedState, c: CoreId, t: ThreadId) -> bool;

    /// Core `c` needs a thread (its current one stopped, or it is idle).
    fn pick_next(&mut self, st: &SchedState, c: CoreId) -> Pick;

    /// `t` starts running on `c` (it has been taken off every run queue).
    fn running(&mut self, _st: &SchedState, _c: CoreId, _t: ThreadId) {}

    /// `t` stopped running on `c` after `ran` ns on the core.
    fn stopped(
        &mut self,
        _st: &SchedState,
        _c: CoreId,
        _t: ThreadId,
        _ran: Nanos,
        _why: StopReason,
    ) {
    }

    /// `t` (runnable, not running) moved from `from`'s queue to `to`'s queue.
    fn migrated(&mut self, _st: &SchedState, _t: ThreadId, _from: CoreId, _to: CoreId) {}

    /// Maximum time `t` may run on `c` before the tick may preempt it.
    fn slice_ns(&self, st: &SchedState, c: CoreId, t: ThreadId) -> Nanos;

    /// Scheduler tick on busy core `c`. Returns true to preempt the current
    /// thread. May push load-balancing actions.
    fn tick(&mut self, st: &SchedState, c: CoreId, out: &mut Vec<Action>) -> bool;

    /// Period of `periodic`, if the policy has one.
    fn period_ns(&self) -> Option<Nanos> {
        None
    }

    /// Periodic whole-system hook (labelling, affinity control).
    fn periodic(&mut self, _st: &SchedState, _out: &mut Vec<Action>) {}

    /// Does the policy make requests from hooks other than `tick` and
    /// `periodic` (a sched_ext scheduler's `scx_bpf_kick_cpu`, which acts
    /// when issued)? Then the caller collects them with `take_actions` after
    /// every hook it calls, and asks `failure` after each step.
    fn has_async_actions(&self) -> bool {
        false
    }

    /// The requests made since last asked (`Resched` of an idle core wakes
    /// it; of a busy core, preempts its thread).
    fn take_actions(&mut self, _st: &SchedState, _out: &mut Vec<Action>) {}

    /// Calls made so far into code outside the simulator (a hosted
    /// sched_ext scheduler's callbacks and programs), for `colab bench`.
    fn foreign_calls(&self) -> u64 {
        0
    }

    /// Why the policy cannot go on, if it cannot (a sched_ext scheduler
    /// that the kernel would eject: an error it raised, a stalled task).
    fn failure(&self) -> Option<String> {
        None
    }
}
