//! scx_lavd 1.1.4 model: one hand-built situation per rule. Machine 2B2S
//! big-first: cores 0, 1 big (domain 0), cores 2, 3 little (domain 1).

use crate::lavd::{Lavd, SLICE_MAX_NS, SLICE_MIN_NS};
use crate::test_util::*;
use colab_core::{CoreId, Pick, Policy, SchedState, StopReason, ThreadId};

const MS: u64 = 1_000_000;

fn setup(n: usize) -> (Lavd, SchedState) {
    let st = state("2B2S", n);
    let mut p = Lavd::new();
    created(&mut p, &st);
    (p, st)
}

/// A short-running thread that wakes others and waits often (a pipeline
/// stage) gets a higher lat_cri and an earlier deadline than a CPU hog
/// that neither waits nor wakes (lat_cri.bpf.c calc_lat_cri).
#[test]
fn latency_critical_waker_gets_earlier_deadline() {
    let (mut p, mut st) = setup(2);
    {
        let w = p.task_mut(ThreadId(0));
        w.wake_freq = 2000;
        w.wait_freq = 2000;
        w.avg_runtime_invr = 50_000;
        let h = p.task_mut(ThreadId(1));
        h.wake_freq = 0;
        h.wait_freq = 1;
        h.avg_runtime_invr = 900 * MS;
    }
    queue(&mut st, 2, 0);
    queue(&mut st, 2, 1);
    p.enqueued(&st, CoreId(2), ThreadId(0), false);
    p.enqueued(&st, CoreId(2), ThreadId(1), false);
    assert!(p.task(ThreadId(0)).lat_cri > p.task(ThreadId(1)).lat_cri);
    assert!(p.task(ThreadId(0)).vdeadline < p.task(ThreadId(1)).vdeadline);
}

/// Over-served tasks pay the greedy penalty: the same task with more
/// service time than the system average gets a later deadline
/// (calc_greedy_penalty).
#[test]
fn greedy_task_gets_later_deadline() {
    let (mut p, mut st) = setup(2);
    p.task_mut(ThreadId(1)).svc_time_iwgt = 400 * MS;
    queue(&mut st, 2, 0);
    queue(&mut st, 2, 1);
    p.enqueued(&st, CoreId(2), ThreadId(0), false);
    p.enqueued(&st, CoreId(2), ThreadId(1), false);
    assert!(p.task(ThreadId(1)).is_greedy);
    assert!(p.task(ThreadId(0)).vdeadline < p.task(ThreadId(1)).vdeadline);
}

/// A non-performance-critical task whose previous CPU is an idle little
/// core sticks to it, though a big core is idle (find_sticky_cpu_and_cpdom:
/// the types match).
#[test]
fn non_perf_critical_task_sticks_to_idle_little_prev() {
    let (mut p, mut st) = setup(1);
    st.threads[0].last_core = Some(CoreId(3));
    p.set_thresholds(u64::MAX, 0); // nobody is perf-critical
    assert_eq!(wake(&mut p, &st, 0), CoreId(3));
}

/// A performance-critical task's little previous CPU is not sticky: it
/// takes the first idle CPU of its domain rather than its previous one.
#[test]
fn perf_critical_task_does_not_stick_to_little_prev() {
    let (mut p, mut st) = setup(1);
    st.threads[0].last_core = Some(CoreId(3));
    p.task_mut(ThreadId(0)).perf_cri = 10;
    p.set_thresholds(5, 0);
    assert!(p.is_perf_cri(ThreadId(0)));
    assert_eq!(wake(&mut p, &st, 0), CoreId(2));
}

/// A perf-critical task whose little domain is over-loaded (a stealee)
/// with a deep queue moves to an idle big core: the completion-time gain
/// exceeds 350 us (migrate_to_neighbor).
#[test]
fn overloaded_little_domain_sends_task_to_idle_big_core() {
    let (mut p, mut st) = setup(6);
    for (c, t) in [(2, 1), (3, 2)] {
        run_on(&mut st, c, t);
    }
    for t in 3..6 {
        queue(&mut st, 2, t);
    }
    run_on(&mut st, 1, 0);
    st.threads[0].last_core = Some(CoreId(2));
    p.set_stealee(1, true);
    assert_eq!(wake(&mut p, &st, 0), CoreId(0));
    // Without the stealee role it stays queued in its domain.
    p.set_stealee(1, false);
    assert_eq!(wake(&mut p, &st, 0), CoreId(2));
}

/// A CPU consumes its domain queue by earliest deadline, also from a
/// sibling CPU's run queue (one per-domain DSQ).
#[test]
fn dispatch_takes_earliest_deadline_of_domain() {
    let (mut p, mut st) = setup(3);
    run_on(&mut st, 0, 0);
    queue(&mut st, 0, 1);
    queue(&mut st, 1, 2);
    p.task_mut(ThreadId(1)).vdeadline = 900;
    p.task_mut(ThreadId(2)).vdeadline = 100;
    assert_eq!(
        p.pick_next(&st, CoreId(0)),
        Pick::Steal {
            from: CoreId(1),
            thread: ThreadId(2)
        }
    );
}

/// An idle big CPU whose domain queue is empty steals the head of the
/// little domain's queue (force_to_steal_task).
#[test]
fn idle_big_core_force_steals_from_little_domain() {
    let (mut p, mut st) = setup(2);
    run_on(&mut st, 2, 0);
    queue(&mut st, 2, 1);
    assert_eq!(
        p.pick_next(&st, CoreId(0)),
        Pick::Steal {
            from: CoreId(2),
            thread: ThreadId(1)
        }
    );
}

/// A waking task above thr_lat_cri makes the CPU of its domain running the
/// less critical, later-stopping task yield at its next tick
/// (try_find_and_kick_victim_cpu, ask_cpu_yield_after).
#[test]
fn urgent_wakeup_kicks_less_critical_cpu() {
    let (mut p, mut st) = setup(3);
    p.task_mut(ThreadId(0)).lat_cri = 50;
    p.task_mut(ThreadId(0)).avg_runtime_wall = 10 * MS;
    p.task_mut(ThreadId(1)).lat_cri = 400;
    p.task_mut(ThreadId(1)).avg_runtime_wall = 10 * MS;
    run_on(&mut st, 2, 0);
    p.running(&st, CoreId(2), ThreadId(0));
    run_on(&mut st, 3, 1);
    p.running(&st, CoreId(3), ThreadId(1));
    let w = p.task_mut(ThreadId(2));
    w.lat_cri = 300;
    w.avg_runtime_wall = 100_000;
    w.svc_time_iwgt = 0;
    p.set_thresholds(0, 200);
    queue(&mut st, 3, 2);
    assert!(!p.should_preempt(&st, CoreId(3), ThreadId(2)));
    let mut out = Vec::new();
    assert!(p.tick(&st, CoreId(2), &mut out), "core 2 runs the victim");
    assert!(
        !p.tick(&st, CoreId(3), &mut out),
        "core 3's task is more critical"
    );
}

/// Below thr_lat_cri a waking task kicks nobody (is_worth_kick_other_task).
#[test]
fn non_urgent_wakeup_kicks_nobody() {
    let (mut p, mut st) = setup(2);
    p.task_mut(ThreadId(0)).avg_runtime_wall = 10 * MS;
    run_on(&mut st, 2, 0);
    p.running(&st, CoreId(2), ThreadId(0));
    p.task_mut(ThreadId(1)).lat_cri = 300;
    p.set_thresholds(0, 1000);
    queue(&mut st, 2, 1);
    p.should_preempt(&st, CoreId(2), ThreadId(1));
    assert!(!p.tick(&st, CoreId(2), &mut Vec::new()));
}

/// A running lock holder (returned from a futex wait) is never a victim.
#[test]
fn lock_holder_is_not_a_victim() {
    let (mut p, mut st) = setup(2);
    st.threads[0].state = colab_core::RunState::Blocked(colab_core::BlockKind::Mutex);
    wake(&mut p, &st, 0);
    p.task_mut(ThreadId(0)).avg_runtime_wall = 10 * MS;
    run_on(&mut st, 2, 0);
    p.running(&st, CoreId(2), ThreadId(0));
    p.task_mut(ThreadId(1)).lat_cri = 300;
    p.task_mut(ThreadId(1)).avg_runtime_wall = 100_000;
    p.set_thresholds(0, 0);
    queue(&mut st, 2, 1);
    p.should_preempt(&st, CoreId(2), ThreadId(1));
    assert!(!p.tick(&st, CoreId(2), &mut Vec::new()));
}

/// Slices: a fresh task gets the system slice (5 ms at start); a task
/// whose runs exceed it is boosted to its run time plus 500 us when the
/// machine has room (calc_time_slice); the system slice falls to the 500 us
/// floor when many tasks wait (calc_sys_time_slice).
#[test]
fn slice_bounds_and_boost() {
    let (mut p, mut st) = setup(40);
    p.task_mut(ThreadId(0)).avg_runtime_wall = MS;
    run_on(&mut st, 0, 0);
    p.running(&st, CoreId(0), ThreadId(0));
    assert_eq!(p.slice_ns(&st, CoreId(0), ThreadId(0)), SLICE_MAX_NS);
    p.stopped(&st, CoreId(0), ThreadId(0), 0, StopReason::Blocked);
    p.task_mut(ThreadId(1)).avg_runtime_wall = 20 * MS;
    run_on(&mut st, 1, 1);
    p.running(&st, CoreId(1), ThreadId(1));
    assert_eq!(
        p.slice_ns(&st, CoreId(1), ThreadId(1)),
        20 * MS + SLICE_MIN_NS
    );
    // 38 queued tasks on 4 CPUs: 10 ms x 4 / 38 ~ 1 ms, EWMA from 5 ms
    // down; with far more queued the average heads to the 500 us floor.
    for t in 2..40 {
        queue(&mut st, 2, t);
    }
    for k in 1..=200 {
        st.now = k * 10 * MS;
        p.pick_next(&st, CoreId(3));
    }
    let s = p.sys_slice();
    assert!((SLICE_MIN_NS..2 * MS).contains(&s), "system slice {s}");
}

/// A waking task above the threshold does not kick a CPU whose task is
/// more latency-critical than itself (can_x_kick_y).
#[test]
fn more_critical_running_task_is_not_kicked() {
    let (mut p, mut st) = setup(2);
    p.task_mut(ThreadId(0)).lat_cri = 400;
    p.task_mut(ThreadId(0)).avg_runtime_wall = 10 * MS;
    run_on(&mut st, 2, 0);
    p.running(&st, CoreId(2), ThreadId(0));
    p.task_mut(ThreadId(1)).lat_cri = 300;
    p.task_mut(ThreadId(1)).avg_runtime_wall = 100_000;
    p.set_thresholds(0, 0);
    queue(&mut st, 2, 1);
    p.should_preempt(&st, CoreId(2), ThreadId(1));
    assert!(!p.tick(&st, CoreId(2), &mut Vec::new()));
}
