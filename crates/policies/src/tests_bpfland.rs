//! scx_bpfland's rules on hand-built situations. 2B2S big cores first:
//! cores 0 and 1 big, 2 and 3 little.

use crate::test_util::*;
use crate::Bpfland;
use colab_core::{
    CoreId, Pick, Policy, RunState, SchedState, StopReason, ThreadId, WakeKind, NS_PER_MS,
};

const MS: u64 = NS_PER_MS;

fn bpfland(st: &SchedState) -> Bpfland {
    let mut p = Bpfland::new();
    created(&mut p, st);
    p
}

/// Wakes `t` (by `waker`, if any) and queues it where the policy says.
fn wake_by(p: &mut Bpfland, st: &mut SchedState, t: u32, waker: Option<u32>) -> CoreId {
    let kind = WakeKind::wakeup(waker.map(ThreadId));
    let c = p.select_core(st, ThreadId(t), kind);
    queue(st, c.0, t);
    p.enqueued(st, c, ThreadId(t), true);
    c
}

#[test]
fn bpfland_wakes_on_its_idle_previous_core_then_its_cluster() {
    let mut st = state("2B2S", 2);
    let mut p = bpfland(&st);
    ran_and_blocked(&mut p, &mut st, 2, 0, MS);
    ran_and_blocked(&mut p, &mut st, 2, 1, MS);
    // Previous core 2 idle: back there, though big cores are idle too.
    assert_eq!(wake_by(&mut p, &mut st, 0, None), CoreId(2));
    run_on(&mut st, 2, 0);
    p.running(&st, CoreId(2), ThreadId(0));
    // Core 2 busy now: the other little core, in its cluster, before a big one.
    assert_eq!(wake_by(&mut p, &mut st, 1, None), CoreId(3));
}

#[test]
fn bpfland_draws_a_wakee_toward_a_faster_wakers_core() {
    let mut st = state("2B2S", 2);
    let mut p = bpfland(&st);
    ran_and_blocked(&mut p, &mut st, 2, 1, MS);
    // Thread 0 runs on big core 0 and wakes thread 1, last on little core 2
    // (idle): the search starts from the waker's core, which is busy, and
    // finds big core 1 idle in its cluster.
    run_on(&mut st, 0, 0);
    assert_eq!(wake_by(&mut p, &mut st, 1, Some(0)), CoreId(1));
    // Woken by no one (a timer), it would go back to core 2.
    let mut st2 = state("2B2S", 2);
    let mut p2 = bpfland(&st2);
    ran_and_blocked(&mut p2, &mut st2, 2, 1, MS);
    run_on(&mut st2, 0, 0);
    assert_eq!(wake_by(&mut p2, &mut st2, 1, None), CoreId(2));
}

#[test]
fn bpfland_runs_the_earliest_deadline_of_its_own_and_the_shared_queue() {
    // Every core busy: waking threads join the shared queue, keyed by
    // runtime plus runtime since their last wake-up (reset on waking), so
    // the one that has run less goes first on whichever core asks.
    let mut st = state("2B2S", 6);
    let mut p = bpfland(&st);
    ran_and_blocked(&mut p, &mut st, 2, 4, 5 * MS); // thread 4: 5 ms so far
    ran_and_blocked(&mut p, &mut st, 3, 5, MS); // thread 5: 1 ms
    for c in 0..4 {
        run_on(&mut st, c, u32::from(c));
    }
    let c4 = wake_by(&mut p, &mut st, 4, None);
    let c5 = wake_by(&mut p, &mut st, 5, None);
    assert_eq!(
        (c4, c5),
        (CoreId(2), CoreId(3)),
        "shared queue, on the previous cores"
    );
    // Core 0 asks: thread 5 (key 1 ms) before thread 4 (5 ms), stolen from
    // core 3's queue.
    st.cores[0].current = None;
    assert_eq!(
        p.pick_next(&st, CoreId(0)),
        Pick::Steal {
            from: CoreId(3),
            thread: ThreadId(5)
        }
    );
}

#[test]
fn bpfland_slices_share_a_millisecond_among_the_waiting() {
    let mut st = state("2B2S", 7);
    let mut p = bpfland(&st);
    for c in 0..4 {
        run_on(&mut st, c, u32::from(c));
    }
    // Nothing queued: a thread woken now gets the whole 1 ms.
    assert_eq!(wake_by(&mut p, &mut st, 4, None), CoreId(0));
    assert_eq!(p.slice_ns(&st, CoreId(0), ThreadId(4)), MS);
    // Two already queued (the thread itself not counted): half of it.
    wake_by(&mut p, &mut st, 5, None);
    wake_by(&mut p, &mut st, 6, None);
    assert_eq!(p.slice_ns(&st, CoreId(0), ThreadId(6)), MS / 2);
}

#[test]
fn bpfland_preempts_at_the_tick_only_when_someone_waits() {
    let mut st = state("2B2S", 2);
    let mut p = bpfland(&st);
    run_on(&mut st, 0, 0);
    p.running(&st, CoreId(0), ThreadId(0));
    st.now = 4 * MS;
    let mut out = Vec::new();
    // Slice over, nothing waits: it keeps the core (keep_running).
    assert!(!p.tick(&st, CoreId(0), &mut out));
    for c in 1..4 {
        run_on(&mut st, c, 1);
        st.cores[c as usize].current = Some(ThreadId(1));
    }
    st.now = 8 * MS;
    wake_by(&mut p, &mut st, 1, None);
    assert!(p.tick(&st, CoreId(0), &mut out));
    // No wake-up preemption.
    assert!(!p.should_preempt(&st, CoreId(0), ThreadId(1)));
}

#[test]
fn bpfland_keys_add_the_awake_time_and_lift_a_long_sleeper() {
    let mut st = state("2B2S", 2);
    let mut p = bpfland(&st);
    // Thread 0 runs 100 ms without sleeping and is preempted: its key is
    // its runtime plus its runtime since waking, the latter capped at 40 ms.
    run_on(&mut st, 0, 0);
    p.running(&st, CoreId(0), ThreadId(0));
    st.now = 100 * MS;
    st.cores[0].current = None;
    st.threads[0].state = RunState::Runnable;
    p.stopped(&st, CoreId(0), ThreadId(0), 100 * MS, StopReason::Preempted);
    queue(&mut st, 0, 0);
    p.enqueued(&st, CoreId(0), ThreadId(0), false);
    assert_eq!(p.queued_key(ThreadId(0)), Some(140 * MS));
    // It runs again: the global vtime is now 140 ms. Thread 1, created at
    // vtime 0 and never run, wakes onto a busy machine: lifted to 40 ms
    // (its wake-up frequency is 0, so one lag) behind the global vtime.
    run_on(&mut st, 0, 0);
    p.running(&st, CoreId(0), ThreadId(0));
    for c in 1..4 {
        st.cores[c].current = Some(ThreadId(0));
    }
    wake_by(&mut p, &mut st, 1, None);
    assert_eq!(p.queued_key(ThreadId(1)), Some(100 * MS));
}
