//! ROTA's and COLAB's mechanism switches on hand-built situations.
//! 2B2S big cores first: cores 0 and 1 fast, 2 and 3 slow; a cross-cluster
//! migration costs 100 us (the default costs), so ROTA's rotation quantum
//! is 20 ms (with `quantum=age`, the default, at least 2.25 ms), pull_min
//! 400 us and a "short" sleep under 100 us.

use crate::test_util::*;
use crate::{Colab, ColabParams, Rota, RotaParams};
use colab_core::{
    Action, BlockKind, CoreId, Pick, Policy, RunState, SchedState, StopReason, ThreadId, WakeKind,
    NS_PER_MS, NS_PER_US,
};

const MS: u64 = NS_PER_MS;
const US: u64 = NS_PER_US;

/// The two moves of a swap: `y` to core `y_to`, `x` to core `x_to`.
fn swap(y: u32, y_to: u16, x: u32, x_to: u16) -> Vec<Action> {
    vec![
        Action::Migrate {
            thread: ThreadId(y),
            to: CoreId(y_to),
        },
        Action::Migrate {
            thread: ThreadId(x),
            to: CoreId(x_to),
        },
    ]
}

/// The third freeze's order and queueing (capped FIFO, one thread per fast
/// core, no serial boost), for the tests of those mechanisms.
const THIRD: &str = "order=capped:share-fast=off:serial-first=off:stay=off:pull-from=core:new-start=debit:quantum=migrations:hold=off:gang=off:reclaim=off:pull-min=on";

fn rota(st: &SchedState, opts: &str) -> Rota {
    let mut params = RotaParams::default();
    params.parse_options(opts).unwrap();
    let mut p = Rota::new(params);
    created(&mut p, st);
    p
}

fn wake(p: &mut dyn Policy, st: &SchedState, t: u32) -> CoreId {
    p.select_core(st, ThreadId(t), WakeKind::wakeup(None))
}

/// `t` ran on `c` and blocked there at a barrier at `st.now`, as the
/// engine reports it.
fn ran_and_blocked(p: &mut dyn Policy, st: &mut SchedState, c: u16, t: u32, ran: u64) {
    ran_and_blocked_on(p, st, c, t, ran, BlockKind::Barrier);
}

/// [`ran_and_blocked`], waiting on `kind`.
fn ran_and_blocked_on(
    p: &mut dyn Policy,
    st: &mut SchedState,
    c: u16,
    t: u32,
    ran: u64,
    kind: BlockKind,
) {
    run_on(st, c, t);
    p.running(st, CoreId(c), ThreadId(t));
    st.now += ran;
    st.cores[c as usize].current = None;
    st.threads[t as usize].state = RunState::Blocked(kind);
    st.threads[t as usize].core = None;
    p.stopped(st, CoreId(c), ThreadId(t), ran, StopReason::Blocked);
}

#[test]
fn rota_wakes_on_the_idle_previous_core_first() {
    let mut st = state("2B2S", 4);
    let mut p = rota(&st, "");
    ran_and_blocked(&mut p, &mut st, 0, 0, MS); // thread 0 last ran on fast core 0
    ran_and_blocked(&mut p, &mut st, 2, 1, MS); // thread 1 on slow core 2
    assert_eq!(p.pick_next(&st, CoreId(0)), Pick::Idle);
    assert_eq!(p.pick_next(&st, CoreId(2)), Pick::Idle);
    // Both previous cores idle: each goes back to its own, even though fast
    // core 1 is idle too (it has been idle since time 0, but thread 1's
    // previous core is idle and fast core 1... is worth the move: see below).
    assert_eq!(wake(&mut p, &st, 0), CoreId(0));
    // Fast core 1 has been idle since the start (over 100 us): worth leaving
    // an idle slow core for.
    assert_eq!(wake(&mut p, &st, 1), CoreId(1));
    // Once fast core 1 is busy, thread 1 stays on its idle previous slow core.
    run_on(&mut st, 1, 3);
    assert_eq!(wake(&mut p, &st, 1), CoreId(2));
}

#[test]
fn rota_leaves_an_idle_slow_core_only_for_a_fast_core_idle_long_enough() {
    let mut st = state("2B2S", 4);
    // (Threads 0 and 1 are siblings: `reclaim` would leave core 0 to thread
    // 0, which blocked after thread 1; see the end.)
    let mut p = rota(&st, "reclaim=off");
    let mut reclaim = rota(&st, "reclaim=on");
    run_on(&mut st, 1, 3); // fast core 1 busy throughout
    let at = st.now;
    ran_and_blocked(&mut p, &mut st, 2, 1, MS);
    ran_and_blocked(&mut p, &mut st, 0, 0, MS);
    st.now = at;
    ran_and_blocked(&mut reclaim, &mut st, 2, 1, MS);
    ran_and_blocked(&mut reclaim, &mut st, 0, 0, MS);
    // Fast core 0 just went idle: thread 1 goes back to slow core 2.
    assert_eq!(p.pick_next(&st, CoreId(0)), Pick::Idle);
    assert_eq!(wake(&mut p, &st, 1), CoreId(2));
    // 100 us later (one cross-cluster migration) the fast core is worth it.
    st.now += 100 * US;
    assert_eq!(wake(&mut p, &st, 1), CoreId(0));
    // ... unless its last thread is a sibling that blocked after thread 1.
    assert_eq!(wake(&mut reclaim, &st, 1), CoreId(2));
    // Without previous-core-first, an idle fast core always wins.
    let mut q = rota(&st, "prev-first=off:reclaim=off");
    st.now -= 100 * US;
    assert_eq!(wake(&mut q, &st, 1), CoreId(0));
}

#[test]
fn rota_queues_on_slow_cores_when_nothing_is_idle() {
    let mut st = state("2B2S", 6);
    let mut p = rota(&st, "share-fast=off");
    // (Six threads of one program, more than the fast cores, all ranking
    // alike: `share-rank` would send thread 5 to the slow cluster, behind
    // the lower ids; its own test is below.)
    let mut shared = rota(&st, "share-rank=off");
    for (c, t) in [(0, 0), (1, 1), (2, 2), (3, 3)] {
        run_on(&mut st, c, t);
    }
    queue(&mut st, 2, 4);
    // Fast cores run one thread each; the shortest slow queue takes it.
    assert_eq!(wake(&mut p, &st, 5), CoreId(3));
    // Sharing fast cores (the default): the shortest queue anywhere, the
    // previous core's cluster first, fast core 0 on a tie.
    assert_eq!(wake(&mut shared, &st, 5), CoreId(0));
    st.threads[5].last_core = Some(CoreId(3));
    assert_eq!(wake(&mut shared, &st, 5), CoreId(3));
    queue(&mut st, 0, 4);
    st.cores[2].rq.clear();
    st.threads[5].last_core = Some(CoreId(0));
    assert_eq!(wake(&mut shared, &st, 5), CoreId(1));
}

#[test]
fn rota_idle_fast_core_steals_the_longest_waiting_thread_anywhere() {
    let mut st = state("2B2S", 6);
    let mut p = rota(&st, THIRD);
    run_on(&mut st, 2, 0);
    run_on(&mut st, 3, 1);
    st.now = 5 * MS;
    queue(&mut st, 2, 2);
    st.threads[2].runnable_since = 3 * MS;
    queue(&mut st, 3, 3);
    st.threads[3].runnable_since = MS;
    assert_eq!(
        p.pick_next(&st, CoreId(0)),
        Pick::Steal {
            from: CoreId(3),
            thread: ThreadId(3)
        }
    );
}

/// Thread 0 runs 1 ms bursts on fast core 0 with barrier-like sleeps of
/// 30 us between them, and has just blocked again.
fn sleep_briefly_on_core_0(p: &mut dyn Policy, st: &mut SchedState) {
    for _ in 0..8 {
        ran_and_blocked(p, st, 0, 0, MS);
        st.now += 30 * US;
        st.threads[0].state = RunState::Runnable;
        p.enqueued(st, CoreId(0), ThreadId(0), true);
    }
    ran_and_blocked(p, st, 0, 0, MS);
}

#[test]
fn rota_pull_guard_keeps_a_short_sleepers_core_for_it() {
    // Program 0: threads 0 (fast core 0) and 1 (slow core 2), barrier-like
    // sleeps of 30 us; program 1: thread 2 on slow core 3.
    let mut st = state_apps("2B2S", &[(0, 2.0), (0, 2.0), (1, 2.0)]);
    let mut p = rota(&st, "hold=off");
    sleep_briefly_on_core_0(&mut p, &mut st);
    run_on(&mut st, 2, 1);
    st.cores[2].run_start = 0; // thread 1 has run for a long time
                               // Thread 1 is of thread 0's program: fast core 0 waits for thread 0.
    assert_eq!(p.pick_next(&st, CoreId(0)), Pick::Idle);
    // A thread of another program is taken at once (without `hold`).
    run_on(&mut st, 3, 2);
    st.cores[3].run_start = 0;
    assert_eq!(
        p.pick_next(&st, CoreId(0)),
        Pick::PreemptRemote {
            from: CoreId(3),
            thread: ThreadId(2)
        }
    );
    // After one cross-cluster migration of idleness, program 0's straggler too.
    st.cores[3].current = None;
    st.now += 100 * US;
    assert_eq!(
        p.pick_next(&st, CoreId(0)),
        Pick::PreemptRemote {
            from: CoreId(2),
            thread: ThreadId(1)
        }
    );
    // Switched off, the guard does not hold the core.
    let mut q = rota(&st, "pull-min=off");
    assert!(matches!(
        q.pick_next(&st, CoreId(0)),
        Pick::PreemptRemote { .. }
    ));
    // And with remote preemption off, nothing is taken over.
    let mut r = rota(&st, "remote=off");
    assert_eq!(r.pick_next(&st, CoreId(0)), Pick::Idle);
}

#[test]
fn rota_does_not_pull_a_thread_that_just_started() {
    let mut st = state_apps("2B2S", &[(0, 2.0), (1, 2.0)]);
    let mut p = rota(&st, "pull-min=on");
    st.now = 10 * MS;
    run_on(&mut st, 2, 1); // started now: under pull_min (400 us)
    assert_eq!(p.pick_next(&st, CoreId(0)), Pick::Idle);
    st.now += 400 * US;
    assert!(matches!(
        p.pick_next(&st, CoreId(0)),
        Pick::PreemptRemote { .. }
    ));
}

/// `pull-min=siblings` (the default since the eighteenth freeze): the
/// minimum run holds only for a thread of the program whose thread last
/// left the idle fast core; one of another program, or one wanted by a
/// core no thread has left, is taken over at once.
#[test]
fn rota_pull_min_holds_only_for_a_sibling_of_the_cores_last_thread() {
    // Threads 0 and 1 of program 0, thread 2 of program 1.
    let st0 = state_apps("2B2S", &[(0, 2.0), (0, 2.0), (1, 2.0)]);
    // Thread 0 ran 1 ms on fast core 0 and blocked; core 0 has been idle
    // 150 us (past `hold`'s migration) when `slow` has run 150 us on slow
    // core 2, under pull_min's 400 us.
    let after_block = |opts: &str, slow: u32| {
        let mut st = st0.clone();
        let mut p = rota(&st, opts);
        st.now = 10 * MS;
        ran_and_blocked(&mut p, &mut st, 0, 0, MS);
        run_on(&mut st, 2, slow);
        // The core goes idle (with `hold` it waits a migration first).
        p.pick_next(&st, CoreId(0));
        st.now += 150 * US;
        p.pick_next(&st, CoreId(0))
    };
    let taken = |t| Pick::PreemptRemote {
        from: CoreId(2),
        thread: ThreadId(t),
    };
    assert_eq!(after_block("", 2), taken(2), "another program's thread");
    assert_eq!(
        after_block("", 1),
        Pick::Idle,
        "a sibling waits for pull_min"
    );
    assert_eq!(
        after_block("pull-min=on", 2),
        Pick::Idle,
        "the sixteenth's rule"
    );
    assert_eq!(after_block("pull-min=off", 1), taken(1));
    // A core no thread has left takes a young thread at once.
    let mut st = st0.clone();
    let mut p = rota(&st, "");
    st.now = 10 * MS;
    run_on(&mut st, 2, 1);
    st.now += 10 * US;
    assert_eq!(p.pick_next(&st, CoreId(0)), taken(1));
}

/// `pull-min=siblings-short`: as `siblings`, and another program's thread
/// also waits for the minimum run when its bursts are short (it would block
/// again before repaying the move); one with long bursts is taken at once.
#[test]
fn rota_pull_min_siblings_short_holds_for_short_bursts_of_any_program() {
    // Threads 0 and 1 of program 0, thread 2 of program 1.
    let st0 = state_apps("2B2S", &[(0, 2.0), (0, 2.0), (1, 2.0)]);
    // Thread 2 ran `burst` on slow core 3 and blocked; later thread 0 ran
    // 1 ms on fast core 0 and blocked, and thread 2 has run 150 us on slow
    // core 2 when core 0 has been idle 150 us (past `hold`'s migration).
    let after_block = |opts: &str, burst: u64| {
        let mut st = st0.clone();
        let mut p = rota(&st, opts);
        st.now = 5 * MS;
        ran_and_blocked(&mut p, &mut st, 3, 2, burst);
        st.now = 10 * MS;
        ran_and_blocked(&mut p, &mut st, 0, 0, MS);
        run_on(&mut st, 2, 2);
        p.running(&st, CoreId(2), ThreadId(2));
        p.pick_next(&st, CoreId(0));
        st.now += 150 * US;
        p.pick_next(&st, CoreId(0))
    };
    let taken = Pick::PreemptRemote {
        from: CoreId(2),
        thread: ThreadId(2),
    };
    // 100 us bursts: the average (a quarter of the last burst after one
    // sleep) is under pull_min's 400 us.
    assert_eq!(
        after_block("pull-min=siblings-short", 100 * US),
        Pick::Idle,
        "short bursts wait for pull_min"
    );
    assert_eq!(after_block("", 100 * US), taken, "the eighteenth's rule");
    // 8 ms bursts: a 2 ms average, taken at once.
    assert_eq!(after_block("pull-min=siblings-short", 8 * MS), taken);
}

/// `migration-us` sets the constants as scx_colab's `--migration-us` does:
/// at 1 us the pull threshold is 4 us, so a thread that has run 10 us is
/// pulled; at the topology's 100 us (400 us) it is not.
#[test]
fn rota_migration_us_sets_the_constants() {
    let mut st = state_apps("2B2S", &[(0, 2.0), (1, 2.0)]);
    st.now = 10 * MS;
    run_on(&mut st, 2, 1);
    st.now += 10 * US;
    let mut p = rota(&st, "pull-min=on");
    assert_eq!(p.pick_next(&st, CoreId(0)), Pick::Idle);
    let mut p = rota(&st, "pull-min=on:migration-us=100");
    assert_eq!(p.pick_next(&st, CoreId(0)), Pick::Idle);
    let mut p = rota(&st, "pull-min=on:migration-us=1");
    assert!(matches!(
        p.pick_next(&st, CoreId(0)),
        Pick::PreemptRemote { .. }
    ));
}

/// Thread 0 took fast core 0 at 2 ms; thread 2 has waited on slow core
/// `slow` since 1 ms (first in FIFO order); thread 1 runs there since 3 ms.
fn fifo_waiter(topo: &str, slow: u16, opts: &str) -> (SchedState, Rota) {
    let mut st = state(topo, 3);
    let mut p = rota(&st, opts);
    st.now = 2 * MS;
    run_on(&mut st, 0, 0);
    p.running(&st, CoreId(0), ThreadId(0));
    run_on(&mut st, slow, 1);
    st.threads[1].runnable_since = 3 * MS;
    queue(&mut st, slow, 2);
    st.threads[2].runnable_since = MS;
    (st, p)
}

#[test]
fn rota_fifo_rotates_a_fast_core_after_a_quantum() {
    let (mut st, mut p) = fifo_waiter("2B2S", 2, "order=fifo:quantum=migrations:sibling-turns=off");
    st.now = 21 * MS;
    let mut out = Vec::new();
    p.tick(&st, CoreId(0), &mut out);
    assert!(out.is_empty(), "before the 20 ms quantum: {out:?}");
    st.now = 22 * MS;
    p.tick(&st, CoreId(0), &mut out);
    // The occupant goes where the longest waiter was; the waiter takes core 0.
    assert_eq!(out, swap(0, 2, 2, 0));
    // A thread that started waiting after the occupant took the core does
    // not displace it.
    st.threads[2].runnable_since = 3 * MS;
    let mut out = Vec::new();
    p.tick(&st, CoreId(0), &mut out);
    assert!(out.is_empty(), "{out:?}");
    let mut q = rota(&st, "rotate=off");
    q.running(&st, CoreId(0), ThreadId(0));
    let mut out = Vec::new();
    q.tick(&st, CoreId(0), &mut out);
    assert!(out.is_empty());
}

/// `quantum=slice` rotates at CFS's minimum slice, 0.75 ms x (1 + ilog2
/// of the core count): 2.25 ms on 2B2S, 3 ms on 4B4S; `quantum=migrations`
/// 200 cross-cluster migrations (20 ms).
#[test]
fn rota_slice_quantum_rotates_at_cfs_minimum_slice() {
    let check = |topo: &str, slow: u16, opts: &str, quantum: u64| {
        let (mut st, mut p) = fifo_waiter(topo, slow, opts);
        let mut out = Vec::new();
        st.now = 2 * MS + quantum - US;
        p.tick(&st, CoreId(0), &mut out);
        assert!(out.is_empty(), "{topo} {opts}: before the quantum: {out:?}");
        st.now = 2 * MS + quantum;
        p.tick(&st, CoreId(0), &mut out);
        assert_eq!(out, swap(0, slow, 2, 0), "{topo} {opts}: at the quantum");
    };
    check("2B2S", 2, "order=fifo:quantum=slice", 2250 * US);
    check("4B4S", 4, "order=fifo:quantum=slice", 3 * MS);
    check("2B2S", 2, "order=fifo:quantum=migrations", 20 * MS);
}

/// `quantum=age`: the occupant keeps the fast core for as long as the
/// first waiting thread has run so far, at least CFS's minimum slice
/// (2.25 ms on 2B2S) and at most the 20 ms quantum (the default since the
/// ninth freeze).
#[test]
fn rota_age_quantum_lets_a_young_thread_in_sooner() {
    // Thread 2, the waiting one, has run `ran`.
    let rotates_after = |ran: u64| {
        let (mut st, mut p) = fifo_waiter("2B2S", 2, "order=fifo:quantum=age:sibling-turns=off");
        st.threads[2].sum_exec_ns = ran;
        (2 * MS..=30 * MS)
            .step_by(US as usize)
            .find(|&now| {
                st.now = now;
                let mut out = Vec::new();
                p.tick(&st, CoreId(0), &mut out);
                !out.is_empty()
            })
            .map(|now| now - 2 * MS)
    };
    assert_eq!(rotates_after(0), Some(2250 * US));
    assert_eq!(rotates_after(5 * MS), Some(5 * MS));
    assert_eq!(rotates_after(100 * MS), Some(20 * MS));
}

/// `sibling-turns`: an occupant that no waiting thread outranks still
/// gives way after the quantum to its own program's thread on a slow core
/// that has been longest away from a fast core.
#[test]
fn rota_sibling_turns_share_a_programs_fast_core_among_its_threads() {
    let swaps_at = |opts: &str| {
        let mut st = state("2B2S", 3);
        let mut p = rota(&st, opts);
        // Thread 1 had a fast-core turn, 50-60 ms.
        st.now = 50 * MS;
        run_on(&mut st, 1, 1);
        p.running(&st, CoreId(1), ThreadId(1));
        st.now = 60 * MS;
        st.threads[1].sum_exec_ns = 10 * MS;
        p.stopped(&st, CoreId(1), ThreadId(1), 10 * MS, StopReason::Preempted);
        st.cores[1].current = None;
        // From 100 ms: thread 0 on fast core 0, runnable since 0 (it has
        // progressed least, so it outranks the others); 1 and 2 on slow
        // cores.
        st.now = 100 * MS;
        for (c, t) in [(2, 1), (3, 2)] {
            queue(&mut st, c, t);
            p.enqueued(&st, CoreId(c), ThreadId(t), true);
        }
        for (c, t) in [(0, 0), (2, 1), (3, 2)] {
            run_on(&mut st, c, t);
            p.running(&st, CoreId(c), ThreadId(t));
        }
        st.threads[1].runnable_since = 100 * MS;
        st.threads[2].runnable_since = 100 * MS;
        st.threads[2].sum_exec_ns = 50 * MS;
        (101 * MS..=200 * MS).step_by(MS as usize).find_map(|now| {
            st.now = now;
            let mut out = Vec::new();
            p.tick(&st, CoreId(0), &mut out);
            (!out.is_empty()).then_some((now, out))
        })
    };
    // Thread 2, never on a fast core, takes core 0 once thread 0 has held it
    // for the quantum (20 ms: thread 2 has run longer than that); thread 0
    // goes to thread 2's core.
    assert_eq!(swaps_at(""), Some((120 * MS, swap(0, 3, 2, 0))));
    // Without the switch thread 0 keeps the core: it still outranks both.
    assert_eq!(swaps_at("sibling-turns=off"), None);
}

/// Which of threads 0 and 1 ranks first for a fast core (they must not tie).
fn first_of_two(p: &Rota, st: &SchedState) -> u32 {
    let (r0, r1) = (
        p.fast_rank(st, ThreadId(0), 0),
        p.fast_rank(st, ThreadId(1), 0),
    );
    assert_ne!(r0, r1);
    u32::from(r1 < r0)
}

/// `full-wait`: a thread's runnable time runs from its wake-up, across
/// preemptions. Thread 0 woke at 0 and thread 1 at 20 ms, both have run
/// 10 ms on slow cores and wait again at 60 ms, thread 0 since a
/// preemption at 58 ms and thread 1 since one at 40 ms (the simulator
/// restarts `runnable_since` at a preemption).
#[test]
fn rota_full_wait_counts_runnable_time_across_preemptions() {
    let first = |opts: &str| {
        let mut st = state_apps("2B2S", &[(0, 2.0), (1, 2.0)]);
        let mut p = rota(&st, opts);
        for (t, c, at) in [(0, 2, 0), (1, 3, 20 * MS)] {
            st.now = at;
            queue(&mut st, c, t);
            st.threads[t as usize].runnable_since = at;
            p.enqueued(&st, CoreId(c), ThreadId(t), true);
        }
        st.now = 60 * MS;
        for (t, since) in [(0, 58 * MS), (1, 40 * MS)] {
            st.threads[t].sum_exec_ns = 10 * MS;
            st.threads[t].runnable_since = since;
        }
        first_of_two(&p, &st)
    };
    // Runnable 60 ms against 40 ms for the same progress: thread 0 is the
    // further behind.
    assert_eq!(first("order=ntt:full-wait=on"), 0);
    // Counted from the last queueing, thread 0 has waited 2 ms, thread 1
    // 20 ms: the earlier freezes' reading ranks them the other way round.
    assert_eq!(first("order=ntt:full-wait=off"), 1);
}

/// `order=ntt-pr`: the rate is the program's, its threads' runnable time
/// and progress summed. Thread 2 of program 1 was runnable 40 ms and ran
/// 1 ms on a slow core before it blocked; threads 0 (program 0) and 1
/// (program 1) then wake with no history, and thread 1's program is the
/// one further behind.
#[test]
fn rota_ntt_pr_ranks_by_the_programs_rate() {
    let first = |opts: &str| {
        let mut st = state_apps("2B2S", &[(0, 2.0), (1, 2.0), (1, 2.0)]);
        // (Program 1's lone runnable thread is not put first as a serial phase.)
        let mut p = rota(&st, &format!("{opts}:serial-first=off"));
        queue(&mut st, 2, 2);
        p.enqueued(&st, CoreId(2), ThreadId(2), true);
        st.now = 39 * MS;
        st.threads[2].sum_exec_ns = MS;
        ran_and_blocked(&mut p, &mut st, 2, 2, MS);
        for (t, c) in [(0, 2), (1, 3)] {
            queue(&mut st, c, t);
            st.threads[t as usize].runnable_since = st.now;
            p.enqueued(&st, CoreId(c), ThreadId(t), true);
        }
        st.now += MS;
        first_of_two(&p, &st)
    };
    assert_eq!(first("order=ntt-pr:full-wait=on"), 1);
    // Per thread, the two are alike and the lower id goes first.
    assert_eq!(first("order=ntt-prog:split-prior=off"), 0);
}

/// The rank reads durations, never the clock itself: the situation of
/// [`rota_ntt_pr_ranks_by_the_programs_rate`], with thread 2 running on a
/// slow core at the end, ranks alike when the clock starts at 2^62 ns (146
/// years) as at 0. The program sums, kept in 64 bits as a BPF map holds
/// them, once took a rate times the clock (`active * now - sum of wake-up
/// times`), which passes 2^64 there.
#[test]
fn rota_ranks_read_durations_not_the_clock() {
    for opts in ["", "order=ntt-pr", "order=ntt", "order=ntt-las", "floor=on"] {
        let ranks = |base: u64| {
            let mut st = state_apps("2B2S", &[(0, 2.0), (1, 2.0), (1, 1.5)]);
            st.now = base;
            let mut p = rota(&st, &format!("{opts}:serial-first=off"));
            queue(&mut st, 2, 2);
            st.threads[2].runnable_since = st.now;
            p.enqueued(&st, CoreId(2), ThreadId(2), true);
            st.now += 39 * MS;
            st.threads[2].sum_exec_ns = MS;
            ran_and_blocked(&mut p, &mut st, 2, 2, MS);
            for (t, c) in [(0, 2), (1, 3), (2, 3)] {
                queue(&mut st, c, t);
                st.threads[t as usize].runnable_since = st.now;
                p.enqueued(&st, CoreId(c), ThreadId(t), true);
            }
            st.now += 3 * MS;
            run_on(&mut st, 3, 2);
            p.running(&st, CoreId(3), ThreadId(2));
            st.now += 2 * MS;
            (0..3)
                .map(|t| p.fast_rank(&st, ThreadId(t), 0))
                .collect::<Vec<_>>()
        };
        let at0 = ranks(0);
        assert!(
            at0[0].2 != at0[1].2 && at0[1].2 != at0[2].2,
            "{opts}: {at0:?}"
        );
        assert_eq!(at0, ranks(1 << 62), "{opts}");
    }
}

/// `split-prior`: per thread, the full-speed prior of a thread's rate is
/// its program's, shared by the program's live threads. Threads 0
/// (program 0, alone) and 1 (program 1, one of four) both woke at 0 and ran
/// 1 ms on slow cores by 4 ms: alike with a whole prior each (the lower id
/// first), but thread 1's quarter prior shows how far behind it is.
#[test]
fn rota_split_prior_shares_the_prior_among_a_programs_threads() {
    let first = |opts: &str| {
        let mut st = state_apps("2B2S", &[(0, 2.0), (1, 2.0), (1, 2.0), (1, 2.0), (1, 2.0)]);
        let mut p = rota(&st, &format!("{opts}:serial-first=off"));
        for (t, c) in [(0, 2), (1, 3)] {
            queue(&mut st, c, t);
            p.enqueued(&st, CoreId(c), ThreadId(t), true);
        }
        st.now = 4 * MS;
        for t in [0, 1] {
            st.threads[t].sum_exec_ns = MS;
        }
        first_of_two(&p, &st)
    };
    assert_eq!(first("order=ntt:split-prior=off"), 0);
    assert_eq!(first("order=ntt:split-prior=on"), 1);
    // The program orders have one prior per program already.
    assert_eq!(
        first("order=ntt-pr:split-prior=on"),
        first("order=ntt-pr:split-prior=off")
    );
}

#[test]
fn rota_options_parse_and_bad_ones_are_errors() {
    assert!(crate::by_name("rota").is_ok());
    assert!(crate::by_name("rota:rotate=off:order=owed:group=on").is_ok());
    for good in [
        "rota:pull-min=on",
        "rota:pull-min=off",
        "rota:pull-min=siblings",
        "rota:pull-min=siblings-short",
    ] {
        assert!(crate::by_name(good).is_ok(), "{good}");
    }
    let e = crate::by_name("rota:pull-min=some")
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("'pull-min' takes on, off, siblings"), "{e}");
    for bad in [
        "rota:rotate=maybe",
        "rota:nope=on",
        "rota:rotate",
        "rota:order=random",
        "rota:cap=-1",
        "rota:cap=1001",
        "rota:rotate-after=never",
        "rota:migration-us=0",
        "rota:migration-us=-5",
        "rota:migration-us=100001",
        "rota:migration-us=nan",
        "rota:quantum=20ms",
        "rota:quantum=young",
        "rota:sibling-turns=maybe",
    ] {
        let e = crate::by_name(bad).err().expect(bad).to_string();
        assert!(e.contains(bad), "{e}");
    }
    // Only the speedup-based choices read predictions: the capped order
    // weighs fast-core time by predicted speedup, FIFO does not.
    assert!(crate::by_name("rota").unwrap().reads_predictions());
    assert!(!crate::by_name("rota:order=fifo")
        .unwrap()
        .reads_predictions());
    assert!(!crate::by_name("rota:order=capped:weighted=off")
        .unwrap()
        .reads_predictions());
    assert!(crate::by_name("rota:order=speed")
        .unwrap()
        .reads_predictions());
    assert!(crate::by_name("rota:order=ntt")
        .unwrap()
        .reads_predictions());
}

// ----- COLAB's switches -----------------------------------------------------

fn colab(st: &SchedState, opts: &str) -> Colab {
    let mut params = ColabParams::default();
    params.parse_options(opts).unwrap();
    let mut p = Colab::new(params);
    created(&mut p, st);
    p
}

#[test]
fn colab_remote_off_leaves_little_cores_alone() {
    let mut st = state("2B2S", 2);
    run_on(&mut st, 2, 0);
    let mut on = colab(&st, "");
    assert!(matches!(
        on.pick_next(&st, CoreId(0)),
        Pick::PreemptRemote { .. }
    ));
    let mut off = colab(&st, "remote=off");
    assert_eq!(off.pick_next(&st, CoreId(0)), Pick::Idle);
}

#[test]
fn colab_pull_min_leaves_a_little_core_thread_that_just_started() {
    // Thread 0 has run 0.5 ms on little core 2; big core 0 is idle.
    let mut st = state("2B2S", 2);
    run_on(&mut st, 2, 0);
    st.now = 500 * US;
    let preempts = |p: &mut Colab, st: &SchedState| {
        matches!(p.pick_next(st, CoreId(0)), Pick::PreemptRemote { .. })
    };
    assert!(preempts(&mut colab(&st, ""), &st));
    let mut p = colab(&st, "pull-min-us=1000");
    assert!(!preempts(&mut p, &st));
    st.now = 1000 * US;
    assert!(preempts(&mut p, &st));
}

#[test]
fn colab_prev_first_takes_the_idle_previous_core_of_the_allowed_cluster() {
    // Thread 1 (speedup 2.0: medium on 2B2S, any cluster) last ran on
    // little core 3, idle now like every core. Fig. 6's allocator starts
    // its round-robin at the big cluster; prev-first returns to core 3.
    let mut st = state("2B2S", 2);
    run_on(&mut st, 3, 1);
    st.cores[3].current = None;
    st.threads[1].state = RunState::Blocked(colab_core::BlockKind::Barrier);
    st.threads[1].core = None;
    let mut paper = colab(&st, "");
    let mut prev = colab(&st, "prev-first=on");
    assert!(st.topo.is_big(wake(&mut paper, &st, 1)));
    assert_eq!(wake(&mut prev, &st, 1), CoreId(3));
    // A high-speedup thread may only use big cores: its little previous
    // core is not taken.
    let mut high = colab(&st, "prev-first=on:labels=fixed:hi=1.5:lo=1.1");
    high.periodic(&st, &mut Vec::new());
    assert!(st.topo.is_big(wake(&mut high, &st, 1)));
}

#[test]
fn colab_block_first_off_is_cfs_order() {
    let mut st = state("2B2S", 3);
    for t in 0..3 {
        queue(&mut st, 0, t);
    }
    st.threads[2].blocked_others_ns = 8 * MS;
    st.now = 10 * MS;
    let mut on = colab(&st, "");
    let mut off = colab(&st, "block-first=off");
    for p in [&mut on, &mut off] {
        for t in 0..3 {
            p.enqueued(&st, CoreId(0), ThreadId(t), false);
        }
        p.periodic(&st, &mut Vec::new());
    }
    assert_eq!(on.pick_next(&st, CoreId(0)), Pick::Local(ThreadId(2)));
    // All vruntimes equal: CFS order falls to the lowest id.
    assert_eq!(off.pick_next(&st, CoreId(0)), Pick::Local(ThreadId(0)));
}

#[test]
fn colab_labels_modes_decide_the_allocator() {
    // Speedups 1.3, 1.35, 1.4: all "low" in thirds of the 2B2S range.
    let mut st = state_apps("2B2S", &[(0, 1.3), (0, 1.35), (0, 1.4)]);
    for t in 0..3 {
        run_on(&mut st, 2 + (t as u16 % 2), t);
    }
    st.cores[2].current = None;
    st.cores[3].current = None;
    let mut range = colab(&st, "");
    let mut rank = colab(&st, "labels=rank");
    let mut fixed = colab(&st, "labels=fixed:hi=1.38:lo=1.32");
    for p in [&mut range, &mut rank, &mut fixed] {
        p.periodic(&st, &mut Vec::new());
    }
    let big = |c: CoreId| c.idx() < 2;
    for t in 0..3 {
        st.threads[t].state = RunState::Blocked(colab_core::BlockKind::Sleep);
    }
    // Range: everyone low -> little cores.
    assert!(!big(wake(&mut range, &st, 2)));
    // Rank: the fastest of the three was runnable and ranked high -> big.
    assert!(big(wake(&mut rank, &st, 2)));
    assert!(!big(wake(&mut rank, &st, 0)));
    // Fixed thresholds: 1.4 >= 1.38 is high, 1.3 <= 1.32 low.
    assert!(big(wake(&mut fixed, &st, 2)));
    assert!(!big(wake(&mut fixed, &st, 0)));
}

#[test]
fn colab_steals_compare_lags_not_raw_vruntimes() {
    // Two big cores' queues with different vruntime bases: core 0's
    // threads are near 100 ms, core 1's near 0. The thread furthest behind
    // its own queue's minimum is core 0's thread 1 (lag 0 vs 5 ms).
    let mut st = state("2B2S", 4);
    let mut p = colab(&st, "block-first=off");
    queue(&mut st, 0, 0);
    queue(&mut st, 0, 1);
    queue(&mut st, 1, 2);
    queue(&mut st, 1, 3);
    {
        // Give the queues their vruntimes through the CFS engine's
        // accounting: run each thread for its vruntime.
        for (c, t, ran) in [
            (0u16, 0u32, 105 * MS),
            (0, 1, 100 * MS),
            (1, 2, 5 * MS),
            (1, 3, 10 * MS),
        ] {
            let q = st.cores[c as usize].rq.clone();
            run_on(&mut st, c, t);
            p.running(&st, CoreId(c), ThreadId(t));
            st.cores[c as usize].current = None;
            st.cores[c as usize].rq = q;
            st.threads[t as usize].state = RunState::Runnable;
            st.threads[t as usize].core = Some(CoreId(c));
            p.stopped(&st, CoreId(c), ThreadId(t), ran, StopReason::Preempted);
        }
    }
    // Core 2 (little, own cluster empty) steals across clusters: raw
    // vruntimes would pick thread 2 (5 ms); lags pick 1 or 2 (both 0 behind
    // their minimum), lowest lag then lowest id: thread 1.
    match p.pick_next(&st, CoreId(2)) {
        Pick::Steal { thread, .. } => assert_eq!(thread, ThreadId(1)),
        other => panic!("expected a steal, got {other:?}"),
    }
}

#[test]
fn colab_options_parse_and_bad_ones_are_errors() {
    for good in [
        "colab:remote=off",
        "colab:block-first=off:scale-slice=off",
        "colab:labels=fixed:hi=2.4:lo=1.6",
        "colab:window=inf",
        "colab:labels=rank",
    ] {
        assert!(crate::by_name(good).is_ok(), "{good}");
    }
    for bad in [
        "colab:remote=no",
        "colab:labels=fixed",
        "colab:labels=fixed:hi=1.5:lo=2",
        "colab:hi=2",
        "colab:window=-1",
        "colab:pull-min-us=-5",
        "colab:prev-first=maybe",
        "colab:speed=fast",
    ] {
        assert!(crate::by_name(bad).is_err(), "{bad}");
    }
    let e = crate::by_name("colab:remote=no").err().unwrap().to_string();
    assert!(e.contains("on or off"), "{e}");
}

#[test]
fn cfs_counts_a_running_thread_at_its_charged_rate() {
    // A thread charged at 2x on core 0: after 1 ms its vruntime seen by
    // min_vruntime has grown 2 ms, as it will be charged when it stops.
    let mut st = state("2B2S", 1);
    let mut k = crate::CfsCore::new(&st);
    k.thread_created(ThreadId(0));
    run_on(&mut st, 0, 0);
    k.set_run_scale(CoreId(0), 2.0);
    st.now = MS;
    assert_eq!(k.cur_vr(&st, ThreadId(0)), 2 * MS as i64);
    k.stopped(&st, CoreId(0), ThreadId(0), MS, k.run_scale(CoreId(0)));
    assert_eq!(k.vr[0], 2 * MS as i64);
}

// ----- ROTA's switches that are off by default ------------------------------

/// Thread `t` of `st` ran `ran` on core `c` and was preempted there.
fn ran_and_preempted(p: &mut dyn Policy, st: &mut SchedState, c: u16, t: u32, ran: u64) {
    run_on(st, c, t);
    p.running(st, CoreId(c), ThreadId(t));
    st.now += ran;
    st.cores[c as usize].current = None;
    st.threads[t as usize].state = RunState::Runnable;
    p.stopped(st, CoreId(c), ThreadId(t), ran, StopReason::Preempted);
}

#[test]
fn rota_owed_order_takes_the_least_fast_time_per_unit_of_speedup() {
    // Thread 0 (speedup 3.0) had 9 ms on a fast core: 3 ms per unit of
    // speedup. Thread 1 (speedup 1.0) had 4 ms: 4 ms per unit. Thread 0 is
    // owed more.
    let mut st = state_apps("2B2S", &[(0, 3.0), (1, 1.0)]);
    let mut p = rota(&st, "order=owed");
    p.periodic(&st, &mut Vec::new());
    ran_and_preempted(&mut p, &mut st, 0, 0, 9 * MS);
    ran_and_preempted(&mut p, &mut st, 0, 1, 4 * MS);
    queue(&mut st, 2, 1);
    queue(&mut st, 3, 0);
    assert_eq!(
        p.pick_next(&st, CoreId(1)),
        Pick::Steal {
            from: CoreId(3),
            thread: ThreadId(0)
        }
    );
    // Unweighted, thread 1 has had less fast time.
    let mut q = rota(&st, "order=owed:weighted=off");
    q.periodic(&st, &mut Vec::new());
    ran_and_preempted(&mut q, &mut st, 0, 0, 9 * MS);
    ran_and_preempted(&mut q, &mut st, 0, 1, 4 * MS);
    queue(&mut st, 2, 1);
    queue(&mut st, 3, 0);
    assert_eq!(
        q.pick_next(&st, CoreId(1)),
        Pick::Steal {
            from: CoreId(2),
            thread: ThreadId(1)
        }
    );
}

#[test]
fn rota_speed_order_weighs_waiting_by_speedup() {
    // Thread 0 (speedup 3.0) waited 2 ms, thread 1 (1.0) waited 4 ms:
    // 6 > 4, thread 0 first; FIFO would take thread 1.
    let mut st = state_apps("2B2S", &[(0, 3.0), (1, 1.0)]);
    let mut p = rota(&st, "order=speed");
    let mut f = rota(&st, THIRD);
    p.periodic(&st, &mut Vec::new());
    st.now = 10 * MS;
    queue(&mut st, 2, 0);
    st.threads[0].runnable_since = 8 * MS;
    queue(&mut st, 3, 1);
    st.threads[1].runnable_since = 6 * MS;
    let took = |pick: Pick| match pick {
        Pick::Steal { thread, .. } => thread,
        other => panic!("expected a steal, got {other:?}"),
    };
    assert_eq!(took(p.pick_next(&st, CoreId(0))), ThreadId(0));
    assert_eq!(took(f.pick_next(&st, CoreId(0))), ThreadId(1));
}

#[test]
fn rota_serial_first_puts_a_programs_only_runnable_thread_first() {
    // Program 0: threads 0 and 1, only 0 runnable (a serial phase).
    // Program 1: threads 2 and 3, both runnable and waiting longer.
    let mut st = state_apps("2B2S", &[(0, 2.0), (0, 2.0), (1, 2.0), (1, 2.0)]);
    let mut p = rota(&st, "serial-first=on");
    st.now = 5 * MS;
    for (t, since) in [(2u32, MS), (3, 2 * MS), (0, 4 * MS)] {
        queue(&mut st, 2 + (t as u16 % 2), t);
        st.threads[t as usize].runnable_since = since;
        p.enqueued(&st, CoreId(2 + (t as u16 % 2)), ThreadId(t), true);
    }
    assert!(matches!(
        p.pick_next(&st, CoreId(0)),
        Pick::Steal {
            thread: ThreadId(0),
            ..
        }
    ));
    // At a fast core's tick, a serial thread running on a slow core swaps
    // with a fast core's non-serial occupant.
    st.cores[2].rq.clear();
    st.cores[3].rq.clear();
    run_on(&mut st, 0, 2);
    run_on(&mut st, 2, 0);
    let mut out = Vec::new();
    p.tick(&st, CoreId(0), &mut out);
    assert_eq!(out, swap(2, 2, 0, 0));
}

#[test]
fn rota_swap_moves_a_much_faster_thread_onto_the_fast_core() {
    // 2B2S speedups span 1.2-3.14 (reference cores), a third is 0.65:
    // 3.0 on a slow core beats 1.3 on a fast one; 1.8 does not.
    let mut st = state_apps("2B2S", &[(0, 1.3), (1, 3.0), (2, 1.8)]);
    let mut p = rota(&st, "swap=on:rotate=off");
    p.periodic(&st, &mut Vec::new());
    run_on(&mut st, 0, 0);
    run_on(&mut st, 3, 2);
    let mut out = Vec::new();
    p.tick(&st, CoreId(0), &mut out);
    assert!(out.is_empty(), "{out:?}");
    run_on(&mut st, 2, 1);
    p.tick(&st, CoreId(0), &mut out);
    assert_eq!(out, swap(0, 2, 1, 0));
}

#[test]
fn rota_group_fairness_charges_by_the_programs_runnable_threads() {
    // Program 0 has three runnable threads, program 1 one. Threads 0 (of
    // program 0) and 3 (program 1) each run 1 ms on core 2; thread 0 is
    // charged 3 ms, so core 2 then runs thread 3 first. Per-thread
    // fairness (group off) charges both 1 ms and keeps CFS order (lower id).
    let apps = [(0, 2.0), (0, 2.0), (0, 2.0), (1, 2.0)];
    for (opts, first) in [("group=on", 3u32), ("", 0)] {
        let mut st = state_apps("2B2S", &apps);
        let mut p = rota(&st, opts);
        for t in 0..4 {
            // Woken (not new), so every thread starts at the same vruntime.
            st.threads[t as usize].last_core = Some(CoreId(2));
            queue(&mut st, 2, t);
            p.enqueued(&st, CoreId(2), ThreadId(t), true);
        }
        for t in [0u32, 3] {
            run_on(&mut st, 2, t);
            p.running(&st, CoreId(2), ThreadId(t));
            st.now += MS;
            st.cores[2].current = None;
            st.cores[2].rq.push(ThreadId(t));
            st.threads[t as usize].state = RunState::Runnable;
            p.stopped(&st, CoreId(2), ThreadId(t), MS, StopReason::Preempted);
        }
        st.cores[2]
            .rq
            .retain(|&t| t == ThreadId(0) || t == ThreadId(3));
        assert_eq!(
            p.pick_next(&st, CoreId(2)),
            Pick::Local(ThreadId(first)),
            "{opts}"
        );
    }
}

#[test]
fn rota_turn_order_takes_the_thread_longest_without_a_fast_turn() {
    // Thread 1 left fast core 0 at 1 ms and then slept; thread 0 left it at
    // 4 ms. Thread 0 has been runnable since 5 ms, thread 1 (woken later)
    // since 8 ms. FIFO takes thread 0, turn order thread 1: sleeping does
    // not cost a thread its place for the fast cores.
    let mut st = state("2B2S", 2);
    let mut t = rota(&st, "order=turn");
    let mut f = rota(&st, "");
    for p in [&mut t, &mut f] {
        st.now = 0;
        ran_and_blocked(p, &mut st, 0, 1, MS);
        st.now = 3 * MS;
        ran_and_blocked(p, &mut st, 0, 0, MS);
    }
    st.now = 10 * MS;
    queue(&mut st, 2, 0);
    st.threads[0].runnable_since = 5 * MS;
    queue(&mut st, 3, 1);
    st.threads[1].runnable_since = 8 * MS;
    let took = |pick: Pick| match pick {
        Pick::Steal { thread, .. } => thread,
        other => panic!("expected a steal, got {other:?}"),
    };
    assert_eq!(took(t.pick_next(&st, CoreId(1))), ThreadId(1));
    assert_eq!(took(f.pick_next(&st, CoreId(1))), ThreadId(0));
}

/// Two threads wait on slow cores for idle fast core 1: thread 3 since
/// 1 ms, thread 2 since 3 ms; thread 3 had `fast_ms` on fast core 0 before.
fn capped_steal(opts: &str, fast_ms: u64) -> Pick {
    let mut st = state("2B2S", 4);
    let mut p = rota(&st, &format!("{THIRD}:{opts}"));
    p.periodic(&st, &mut Vec::new());
    ran_and_preempted(&mut p, &mut st, 0, 3, fast_ms * MS);
    run_on(&mut st, 2, 0);
    run_on(&mut st, 3, 1);
    queue(&mut st, 2, 2);
    queue(&mut st, 3, 3);
    st.threads[3].runnable_since = MS;
    st.threads[2].runnable_since = 3 * MS;
    st.now = 60 * MS;
    p.pick_next(&st, CoreId(1))
}

#[test]
fn rota_capped_order_is_fifo_until_a_thread_is_a_quantum_ahead() {
    let first = |t: u32| Pick::Steal {
        from: CoreId(t as u16),
        thread: ThreadId(t),
    };
    // Speedups 2.0, so 30 ms of fast-core time is 15 ms per unit of
    // speedup: within the 20 ms quantum of the least served (thread 2, 0),
    // and the longest waiter goes first.
    assert_eq!(capped_steal("", 30), first(3));
    // 50 ms is 25 ms per unit: a quantum ahead, so it goes after thread 2.
    assert_eq!(capped_steal("", 50), first(2));
    // Unweighted, 30 ms is already a quantum ahead.
    assert_eq!(capped_steal("weighted=off", 30), first(2));
    // Two quanta of cap let it keep its place; FIFO ignores fast time.
    assert_eq!(capped_steal("cap=2", 50), first(3));
    assert_eq!(capped_steal("order=fifo", 50), first(3));
}

#[test]
fn rota_capped_rotation_evicts_an_occupant_a_quantum_ahead_of_any_waiter() {
    // Thread 0 takes fast core 0 at 2 ms and never sleeps; thread 2 wakes
    // at 3 ms, after it took the core (FIFO rotation would never let it
    // in), and waits on slow core 2, where thread 1 (woken at 4 ms) runs.
    let setup = |opts: &str| {
        let mut st = state_apps("2B2S", &[(0, 1.0), (1, 1.0), (1, 1.0)]);
        let mut p = rota(&st, opts);
        p.periodic(&st, &mut Vec::new());
        st.now = 2 * MS;
        run_on(&mut st, 0, 0);
        p.running(&st, CoreId(0), ThreadId(0));
        run_on(&mut st, 2, 1);
        st.threads[1].runnable_since = 4 * MS;
        queue(&mut st, 2, 2);
        st.threads[2].runnable_since = 3 * MS;
        (st, p)
    };
    let tick = |p: &mut Rota, st: &mut SchedState, now: u64| {
        st.now = now;
        let mut out = Vec::new();
        p.tick(st, CoreId(0), &mut out);
        out
    };
    let (mut st, mut p) = setup(THIRD);
    // 20 ms on the core is exactly a quantum ahead of thread 2: not more.
    assert!(tick(&mut p, &mut st, 22 * MS).is_empty());
    // Past it, the occupant goes where the first waiter in FIFO order was.
    assert_eq!(tick(&mut p, &mut st, 23 * MS), swap(0, 2, 2, 0));
    // FIFO rotation leaves it: thread 2 woke after thread 0 took the core.
    let (mut st, mut q) = setup("order=fifo");
    assert!(tick(&mut q, &mut st, 40 * MS).is_empty());
    // ... unless it rotates by fast-core time too.
    let (mut st, mut r) = setup("order=fifo:rotate-after=owed");
    assert_eq!(tick(&mut r, &mut st, 23 * MS), swap(0, 2, 2, 0));
    // A waiter that has had 5 ms of fast-core time waits 5 ms longer
    // (thread 1 blocked, so thread 2 is the only waiter).
    let (mut st, mut p) = setup(THIRD);
    st.cores[2].current = None;
    st.threads[1].state = RunState::Blocked(colab_core::BlockKind::Barrier);
    st.threads[1].core = None;
    ran_and_preempted(&mut p, &mut st, 1, 2, 5 * MS);
    queue(&mut st, 2, 2);
    assert!(tick(&mut p, &mut st, 27 * MS).is_empty());
    assert_eq!(tick(&mut p, &mut st, 28 * MS), swap(0, 2, 2, 0));
}

/// Thread 2 was runnable 10 ms and had 8 of them on a fast core, then 1 ms
/// more now; thread 3 was runnable 20 ms and had 10, then 20 ms more now.
/// Returns whom idle fast core 1 takes.
fn share_pick(opts: &str) -> ThreadId {
    let mut st = state("2B2S", 4);
    let mut p = rota(&st, opts);
    p.periodic(&st, &mut Vec::new());
    st.now = 2 * MS;
    ran_and_blocked(&mut p, &mut st, 0, 2, 8 * MS); // runnable 0..10 ms
    st.now = 10 * MS;
    ran_and_blocked(&mut p, &mut st, 0, 3, 10 * MS); // runnable 0..20 ms
    st.now = 100 * MS;
    run_on(&mut st, 2, 0);
    run_on(&mut st, 3, 1);
    for (t, at) in [(2, 99 * MS), (3, 80 * MS)] {
        // Thread 2: 8 of 11 ms on a fast core; thread 3: 10 of 40 ms.
        st.now = at;
        queue(&mut st, t as u16, t);
        st.threads[t as usize].runnable_since = at;
        p.enqueued(&st, CoreId(t as u16), ThreadId(t), true);
    }
    st.now = 100 * MS;
    match p.pick_next(&st, CoreId(1)) {
        Pick::Steal { thread, .. } => thread,
        other => panic!("{other:?}"),
    }
}

#[test]
fn rota_share_order_takes_the_smallest_fast_share_of_runnable_time() {
    // Thread 3 has the smaller share, though it had more fast-core time.
    assert_eq!(share_pick("order=share"), ThreadId(3));
    // Owed order takes the one with less fast-core time.
    assert_eq!(share_pick("order=owed"), ThreadId(2));
}

/// Threads 0 and 1 (speedup 2.0) had 100 and 120 ms on fast cores (50
/// and 60 ms per unit of speedup) and wait on slow cores, thread 1 longer.
/// Then thread `t` arrives: 2 is new, 3 wakes after running only on a slow
/// core. Returns whom idle fast core 1 takes.
fn placed_pick(opts: &str, t: u32) -> ThreadId {
    let mut st = state("2B2S", 4);
    let mut p = rota(&st, &format!("{THIRD}:{opts}"));
    p.periodic(&st, &mut Vec::new());
    ran_and_preempted(&mut p, &mut st, 0, 0, 100 * MS);
    ran_and_preempted(&mut p, &mut st, 0, 1, 120 * MS);
    ran_and_blocked(&mut p, &mut st, 3, 3, MS);
    queue(&mut st, 2, 0);
    st.threads[0].runnable_since = 2 * MS;
    queue(&mut st, 3, 1);
    st.threads[1].runnable_since = MS;
    st.now += MS;
    queue(&mut st, 2, t);
    st.threads[t as usize].runnable_since = st.now;
    p.enqueued(&st, CoreId(2), ThreadId(t), true);
    match p.pick_next(&st, CoreId(1)) {
        Pick::Steal { thread, .. } => thread,
        other => panic!("{other:?}"),
    }
}

#[test]
fn rota_places_new_threads_level_with_the_least_served_and_sleepers_a_cap_behind() {
    // New: level with thread 0 (50), so nobody is a cap (20) ahead of the
    // least served and the longest waiter, thread 1, goes first.
    assert_eq!(placed_pick("", 2), ThreadId(1));
    // Waking: at most a cap behind thread 0, i.e. 30; thread 1 (60) is
    // then more than a cap ahead and goes last, thread 0 (50) is not, and
    // it has waited longer than the sleeper.
    assert_eq!(placed_pick("", 3), ThreadId(0));
    // Unplaced, both keep 0: everyone else is a cap ahead of them.
    assert_eq!(placed_pick("place=off", 2), ThreadId(2));
    assert_eq!(placed_pick("place=off", 3), ThreadId(3));
}

#[test]
fn rota_rotate_after_turn_lets_in_a_thread_without_a_fast_turn_since() {
    // FIFO order. Thread 0 takes fast core 0 at 2 ms; thread 2 wakes at
    // 3 ms and waits on slow core 2 (so `wait` would not let it in).
    let setup = |opts: &str, fast_before: bool| {
        let mut st = state_apps("2B2S", &[(0, 1.0), (1, 1.0), (1, 1.0)]);
        let mut p = rota(&st, opts);
        if fast_before {
            // Thread 2 had fast core 1 until 10 ms, after thread 0 took core 0.
            st.now = 2 * MS;
            run_on(&mut st, 0, 0);
            p.running(&st, CoreId(0), ThreadId(0));
            ran_and_blocked(&mut p, &mut st, 1, 2, 8 * MS);
        } else {
            st.now = 2 * MS;
            run_on(&mut st, 0, 0);
            p.running(&st, CoreId(0), ThreadId(0));
        }
        queue(&mut st, 2, 2);
        st.threads[2].runnable_since = 3 * MS;
        st.now = 30 * MS;
        let mut out = Vec::new();
        p.tick(&st, CoreId(0), &mut out);
        out
    };
    assert!(setup("order=fifo", false).is_empty());
    assert_eq!(
        setup("order=fifo:rotate-after=turn", false),
        swap(0, 2, 2, 0)
    );
    assert!(setup("order=fifo:rotate-after=turn", true).is_empty());
}

/// 2B2S: threads 0 (speedup 3.0) and 1 (1.5) ran `burst` on fast cores 0
/// and 1 and blocked; threads 2 and 3 (program 1) then woke and run there.
fn fit_setup(opts: &str, burst: u64) -> (SchedState, Rota) {
    let mut st = state_apps("2B2S", &[(0, 3.0), (0, 1.5), (1, 2.0), (1, 2.0)]);
    let mut p = rota(&st, opts);
    p.periodic(&st, &mut Vec::new());
    ran_and_blocked(&mut p, &mut st, 0, 0, burst);
    ran_and_blocked(&mut p, &mut st, 1, 1, burst);
    for (c, t) in [(0, 2), (1, 3)] {
        p.enqueued(&st, CoreId(c), ThreadId(t), true);
        run_on(&mut st, c, t);
    }
    (st, p)
}

#[test]
fn rota_fit_queues_a_fast_synchronising_thread_on_a_fast_core() {
    // Three threads want a core (2, 3 and the waking one): a share of a
    // fast core is worth 3.0 / (3 / 2) = 2x a slow core to thread 0, so it
    // queues on its previous fast core although slow cores are idle;
    // thread 1's 1.5 is not more than 3 / 2, so it takes an idle slow core.
    let (st, mut p) = fit_setup("fit=on:stay=off", 50 * US);
    assert_eq!(wake(&mut p, &st, 0), CoreId(0));
    assert_eq!(wake(&mut p, &st, 1), CoreId(2));
    // Without fit, or with bursts over pull_min (2 ms: average 500 us, a
    // fast core could even out its phases by taking it over), the idle
    // slow core.
    let (st, mut q) = fit_setup("fit=off:stay=off", 50 * US);
    assert_eq!(wake(&mut q, &st, 0), CoreId(2));
    let (st, mut r) = fit_setup("fit=on:stay=off", 2 * MS);
    assert_eq!(wake(&mut r, &st, 0), CoreId(2));
}

#[test]
fn rota_fit_slow_cores_do_not_pull_a_fitting_thread_from_a_fast_queue() {
    for (opts, pulled) in [("fit=on", false), ("fit=off", true)] {
        let (mut st, mut p) = fit_setup(opts, 50 * US);
        queue(&mut st, 0, 0);
        p.enqueued(&st, CoreId(0), ThreadId(0), true);
        let pick = p.pick_next(&st, CoreId(2));
        let want = if pulled {
            Pick::Steal {
                from: CoreId(0),
                thread: ThreadId(0),
            }
        } else {
            Pick::Idle
        };
        assert_eq!(pick, want, "{opts}");
    }
}

#[test]
fn rota_gain_weighs_fast_time_by_what_a_fast_core_gains() {
    // Thread 0 (speedup 3.0) had 12 ms on a fast core, thread 1 (1.5) 4 ms,
    // thread 2 (1.0) none. Per unit of speedup: 4 and 2.7 ms, so thread 1
    // is owed most after thread 2 (0). Per unit of gain (speedup - 1): 6
    // and 8 ms, so thread 0 goes first, and thread 2, which gains nothing,
    // after everyone.
    let pick = |opts: &str| {
        let mut st = state_apps("2B2S", &[(0, 3.0), (1, 1.5), (2, 1.0)]);
        let mut p = rota(&st, opts);
        p.periodic(&st, &mut Vec::new());
        ran_and_preempted(&mut p, &mut st, 0, 0, 12 * MS);
        ran_and_preempted(&mut p, &mut st, 0, 1, 4 * MS);
        for (c, t) in [(2, 0), (3, 1), (3, 2)] {
            queue(&mut st, c, t);
        }
        match p.pick_next(&st, CoreId(1)) {
            Pick::Steal { thread, .. } => thread,
            other => panic!("{opts}: expected a steal, got {other:?}"),
        }
    };
    assert_eq!(pick("order=owed:place=off"), ThreadId(2));
    assert_eq!(pick("order=owed:place=off:gain=on"), ThreadId(0));
}

/// `recheck`: an idle fast core that may not yet take over a slow core's
/// thread asks to pick again when it may (the thread reaches pull_min, or
/// the core has been idle for a migration), instead of waiting for a tick.
#[test]
fn rota_recheck_asks_to_pick_again_when_a_pull_becomes_allowed() {
    let mut st = state_apps("2B2S", &[(0, 2.0), (1, 2.0)]);
    st.now = 10 * MS;
    run_on(&mut st, 2, 1); // started now: 400 us to pull_min
    st.now += 150 * US;
    let mut p = rota(&st, "recheck=on:pull-min=on");
    assert_eq!(
        p.pick_next(&st, CoreId(0)),
        Pick::IdleUntil(10 * MS + 400 * US)
    );
    // Off (the default), the core just goes idle until a tick.
    let mut q = rota(&st, "pull-min=on");
    assert_eq!(q.pick_next(&st, CoreId(0)), Pick::Idle);
    // Of two slow-core threads, the earlier one to become allowed counts.
    let mut st = state_apps("2B2S", &[(0, 2.0), (1, 2.0), (2, 2.0)]);
    st.now = 10 * MS;
    run_on(&mut st, 2, 1);
    st.now += 300 * US;
    run_on(&mut st, 3, 2);
    let mut p = rota(&st, "recheck=on:pull-min=on");
    assert_eq!(
        p.pick_next(&st, CoreId(0)),
        Pick::IdleUntil(10 * MS + 400 * US)
    );
    // Nothing on slow cores: nothing to wait for.
    let st = state_apps("2B2S", &[(0, 2.0)]);
    let mut p = rota(&st, "recheck=on");
    assert_eq!(p.pick_next(&st, CoreId(0)), Pick::Idle);
}

/// `recheck` with the same-program guard: the straggler of the program
/// whose thread just left the fast core may be taken once the core has
/// been idle for a migration (100 us), so the core asks to look again then.
#[test]
fn rota_recheck_waits_out_the_same_program_guard() {
    let mut st = state_apps("2B2S", &[(0, 2.0), (0, 2.0)]);
    let mut p = rota(&st, "recheck=on");
    for _ in 0..8 {
        ran_and_blocked(&mut p, &mut st, 0, 0, MS);
        st.now += 30 * US;
        st.threads[0].state = RunState::Runnable;
        p.enqueued(&st, CoreId(0), ThreadId(0), true);
    }
    ran_and_blocked(&mut p, &mut st, 0, 0, MS);
    run_on(&mut st, 2, 1);
    st.cores[2].run_start = 0; // ran long: only the guard holds the core
    let idle_from = st.now;
    assert_eq!(
        p.pick_next(&st, CoreId(0)),
        Pick::IdleUntil(idle_from + 100 * US)
    );
    st.now += 100 * US;
    assert!(matches!(
        p.pick_next(&st, CoreId(0)),
        Pick::PreemptRemote { .. }
    ));
}

#[test]
fn rota_stay_keeps_a_short_burst_thread_in_its_cluster() {
    // Thread 0 ran 50 us bursts on fast core 0 (average 12.5 us after one,
    // under a 100 us migration); both fast cores are busy, both slow cores
    // idle. Staying, it queues on its previous fast core rather than pay a
    // cross-cluster move for a burst shorter than the move.
    let (st, mut p) = fit_setup("", 50 * US);
    assert_eq!(wake(&mut p, &st, 0), CoreId(0));
    let (st, mut q) = fit_setup("stay=off", 50 * US);
    assert_eq!(wake(&mut q, &st, 0), CoreId(2));
    // Bursts of 2 ms (average 500 us) are worth a move: the idle slow core.
    let (st, mut r) = fit_setup("", 2 * MS);
    assert_eq!(wake(&mut r, &st, 0), CoreId(2));
}

#[test]
fn rota_stay_takes_an_idle_core_of_the_own_cluster_first() {
    // As above, but fast core 1 is free: thread 0 takes it.
    let (mut st, mut p) = fit_setup("", 50 * US);
    st.cores[1].current = None;
    st.threads[3].state = RunState::Blocked(colab_core::BlockKind::Barrier);
    st.threads[3].core = None;
    assert_eq!(wake(&mut p, &st, 0), CoreId(1));
}

#[test]
fn rota_stay_fast_lets_a_short_burst_thread_leave_slow_cores_only() {
    // Thread 0 ran a 50 us burst on slow core 2 and blocked; both slow
    // cores are busy now and both fast cores idle. Staying (`on`), it
    // queues in its slow cluster, and would at every wake-up; with
    // `stay=fast` it takes an idle fast core.
    let mut st = state("2B2S", 4);
    let mut on = rota(&st, "");
    let mut fast = rota(&st, "stay=fast");
    run_on(&mut st, 2, 0);
    for p in [&mut on, &mut fast] {
        p.running(&st, CoreId(2), ThreadId(0));
    }
    st.now += 50 * US;
    st.cores[2].current = None;
    st.threads[0].state = RunState::Blocked(colab_core::BlockKind::Barrier);
    st.threads[0].core = None;
    for p in [&mut on, &mut fast] {
        p.stopped(&st, CoreId(2), ThreadId(0), 50 * US, StopReason::Blocked);
    }
    run_on(&mut st, 2, 1);
    run_on(&mut st, 3, 2);
    assert_eq!(wake(&mut on, &st, 0), CoreId(2));
    assert_eq!(wake(&mut fast, &st, 0), CoreId(0));
    // From a fast core both stay: thread 3 ran 50 us bursts on fast core 1,
    // fast core 0 is busy, slow cores idle: it queues on a fast core.
    let mut st = state("2B2S", 4);
    let mut fast = rota(&st, "stay=fast");
    ran_and_blocked(&mut fast, &mut st, 1, 3, 50 * US);
    run_on(&mut st, 0, 0);
    run_on(&mut st, 1, 1);
    assert_eq!(wake(&mut fast, &st, 3), CoreId(1));
}

#[test]
fn rota_pull_from_sync_counts_a_run_from_the_last_wake_up_it_caused() {
    // Thread 1 has run 10 ms on slow core 2, but woke thread 2 (its
    // barrier partner) 100 us ago: a new phase, under pull_min (400 us).
    let mut st = state_apps("2B2S", &[(0, 2.0), (1, 2.0), (1, 2.0)]);
    let mut p = rota(&st, "pull-min=on");
    let mut q = rota(&st, "pull-min=on:pull-from=core");
    run_on(&mut st, 2, 1);
    st.now = 10 * MS;
    for r in [&mut p, &mut q] {
        r.select_core(&st, ThreadId(2), WakeKind::wakeup(Some(ThreadId(1))));
    }
    st.now += 100 * US;
    assert_eq!(p.pick_next(&st, CoreId(0)), Pick::Idle);
    // Counted from the start of its run on the core, it is taken.
    let taken = Pick::PreemptRemote {
        from: CoreId(2),
        thread: ThreadId(1),
    };
    assert_eq!(q.pick_next(&st, CoreId(0)), taken);
    // 400 us after the wake-up it is taken either way.
    st.now += 300 * US;
    assert_eq!(p.pick_next(&st, CoreId(0)), taken);
}

#[test]
fn rota_las_order_takes_the_least_cpu_time_per_unit_of_speedup() {
    // Thread 0 (speedup 3.0) has run 9 ms: 3 ms per unit; thread 1 (1.0)
    // 4 ms: 4 ms per unit. LAS takes thread 0; unweighted by speedup
    // (the fifth freeze's speed order takes the longer wait), thread 1.
    let mut st = state_apps("2B2S", &[(0, 3.0), (1, 1.0)]);
    let mut p = rota(&st, "order=las");
    p.periodic(&st, &mut Vec::new());
    st.now = 20 * MS;
    st.threads[0].sum_exec_ns = 9 * MS;
    st.threads[1].sum_exec_ns = 4 * MS;
    queue(&mut st, 2, 1);
    queue(&mut st, 3, 0);
    st.threads[0].runnable_since = 19 * MS;
    st.threads[1].runnable_since = 10 * MS;
    let took = |pick: Pick| match pick {
        Pick::Steal { thread, .. } => thread,
        other => panic!("expected a steal, got {other:?}"),
    };
    assert_eq!(took(p.pick_next(&st, CoreId(0))), ThreadId(0));
    st.threads[0].sum_exec_ns = 15 * MS; // 5 ms per unit
    assert_eq!(took(p.pick_next(&st, CoreId(0))), ThreadId(1));
}

#[test]
fn rota_plas_order_takes_the_thread_of_the_least_served_program() {
    // Program 0's threads 0 and 1 ran 6 ms in all, program 1's thread 2
    // ran 4 ms (all speedup 2.0): thread 2 first, though thread 0 itself
    // ran only 3 ms.
    let mut st = state_apps("2B2S", &[(0, 2.0), (0, 2.0), (1, 2.0)]);
    let mut p = rota(&st, "order=plas");
    p.periodic(&st, &mut Vec::new());
    ran_and_preempted(&mut p, &mut st, 0, 0, 3 * MS);
    ran_and_preempted(&mut p, &mut st, 0, 1, 3 * MS);
    ran_and_preempted(&mut p, &mut st, 0, 2, 4 * MS);
    queue(&mut st, 2, 0);
    queue(&mut st, 3, 2);
    assert_eq!(
        p.pick_next(&st, CoreId(1)),
        Pick::Steal {
            from: CoreId(3),
            thread: ThreadId(2)
        }
    );
}

/// A core's own queue under `local=eevdf` and under CFS's rules (the
/// default). Fast core 0 runs thread 0; new threads 1 and then, 370 us
/// later and with a longer queue, 2 join its queue; thread 0 then blocks.
fn local_pick(opts: &str) -> Pick {
    local_pick_on(opts, 0)
}

/// As [`local_pick`], on core `c` (0 and 1 fast, 2 and 3 slow).
fn local_pick_on(opts: &str, c: u16) -> Pick {
    let mut st = state("2B2S", 3);
    let mut p = rota(&st, opts);
    run_on(&mut st, c, 0);
    p.running(&st, CoreId(c), ThreadId(0));
    st.now = 885 * US;
    for t in [1, 2] {
        queue(&mut st, c, t);
        p.enqueued(&st, CoreId(c), ThreadId(t), true);
        st.now += 370 * US;
    }
    st.cores[c as usize].current = None;
    st.threads[0].state = RunState::Blocked(colab_core::BlockKind::Barrier);
    st.threads[0].core = None;
    p.stopped(&st, CoreId(c), ThreadId(0), st.now, StopReason::Blocked);
    p.pick_next(&st, CoreId(c))
}

#[test]
fn rota_local_eevdf_fast_rules_fast_cores_by_eevdf_and_slow_ones_by_cfs() {
    let o = "local=eevdf-fast:new-start=debit";
    assert_eq!(local_pick_on(o, 0), Pick::Local(ThreadId(1)));
    assert_eq!(local_pick_on(o, 2), Pick::Local(ThreadId(2)));
    assert_eq!(
        local_pick_on("new-start=debit", 2),
        Pick::Local(ThreadId(2))
    );
    assert_eq!(local_pick_on("local=eevdf", 2), Pick::Local(ThreadId(1)));
}

#[test]
fn rota_local_eevdf_serves_the_earlier_new_thread_first() {
    // CFS charges each new thread a slice of the period at its arrival
    // (START_DEBIT), and the slice shrinks as the queue grows, so the later
    // thread 2 goes first; EEVDF places both at the queue's average with
    // half a request and takes the earlier eligible deadline: thread 1.
    assert_eq!(local_pick("new-start=debit"), Pick::Local(ThreadId(2)));
    assert_eq!(local_pick("local=eevdf"), Pick::Local(ThreadId(1)));
}

#[test]
fn rota_new_start_without_debit_serves_new_threads_in_arrival_order() {
    // Without START_DEBIT both new threads start at min_vruntime (or at
    // the mean of the queue and the runner), which only grows, so the
    // earlier one goes first (with it, the later one).
    assert_eq!(local_pick("new-start=min"), Pick::Local(ThreadId(1)));
    assert_eq!(local_pick("new-start=avg"), Pick::Local(ThreadId(1)));
    assert_eq!(local_pick("new-start=debit"), Pick::Local(ThreadId(2)));
    // Debited, in arrival order (the default): thread 2 starts no earlier
    // than thread 1.
    assert_eq!(local_pick("new-start=debit-fifo"), Pick::Local(ThreadId(1)));
    assert_eq!(local_pick(""), Pick::Local(ThreadId(1)));
}

#[test]
fn rota_hold_keeps_a_short_sleepers_fast_core_against_any_program() {
    // Thread 0 (program 0) sleeps 30 us at a time on fast core 0; thread 1
    // of program 1 has run long on slow core 2.
    let setup = |opts: &str| {
        let mut st = state_apps("2B2S", &[(0, 2.0), (1, 2.0)]);
        let mut p = rota(&st, opts);
        sleep_briefly_on_core_0(&mut p, &mut st);
        run_on(&mut st, 2, 1);
        st.cores[2].run_start = 0;
        (st, p)
    };
    let taken = Pick::PreemptRemote {
        from: CoreId(2),
        thread: ThreadId(1),
    };
    // Off: another program's thread is taken at once.
    let (st, mut p) = setup("hold=off");
    assert_eq!(p.pick_next(&st, CoreId(0)), taken);
    // On (the default): the core waits for its sleeper for one
    // cross-cluster migration.
    let (mut st, mut p) = setup("");
    assert_eq!(p.pick_next(&st, CoreId(0)), Pick::Idle);
    st.now += 100 * US;
    assert_eq!(p.pick_next(&st, CoreId(0)), taken);
}

/// Thread 0 (speedup 3.0) ran 90 ms on fast core 0 and has waited 10 ms
/// more; thread 1 (speedup `s1`, program 1) ran 60 ms on slow core 2 and
/// has waited 10 ms more; with `partner`, its program's thread 2 runs on
/// fast core 1. Returns whom idle fast core 0 takes (serial phases not
/// first: program 1's lone runnable thread would be one).
fn ntt_pick_with(s1: f64, opts: &str, partner: bool) -> ThreadId {
    ntt_pick_after(s1, opts, partner, false)
}

/// [`ntt_pick_with`]; with `rerun`, program 1 has finished a run before
/// (its one thread, 3, created and exited on slow core 3 at time 0).
fn ntt_pick_after(s1: f64, opts: &str, partner: bool, rerun: bool) -> ThreadId {
    let mut apps = vec![(0, 3.0), (1, s1), (1, s1)];
    if rerun {
        apps.push((1, s1));
    }
    let mut st = state_apps("2B2S", &apps);
    let mut params = RotaParams::default();
    params
        .parse_options(&format!("{opts}:serial-first=off"))
        .unwrap();
    let mut p = Rota::new(params);
    if rerun {
        p.thread_created(&st, ThreadId(3));
        run_on(&mut st, 3, 3);
        p.running(&st, CoreId(3), ThreadId(3));
        st.cores[3].current = None;
        st.threads[3].state = RunState::Exited;
        st.threads[3].core = None;
        p.stopped(&st, CoreId(3), ThreadId(3), 0, StopReason::Exited);
    }
    for t in 0..3 {
        p.thread_created(&st, ThreadId(t));
    }
    p.periodic(&st, &mut Vec::new());
    queue(&mut st, 0, 0);
    p.enqueued(&st, CoreId(0), ThreadId(0), true);
    ran_and_blocked(&mut p, &mut st, 0, 0, 90 * MS); // runnable 0..90 ms
    st.threads[1].runnable_since = st.now;
    queue(&mut st, 2, 1);
    p.enqueued(&st, CoreId(2), ThreadId(1), true);
    ran_and_blocked(&mut p, &mut st, 2, 1, 60 * MS); // runnable 90..150 ms
    st.threads[0].sum_exec_ns = 90 * MS;
    st.threads[1].sum_exec_ns = 60 * MS;
    st.now = 160 * MS;
    queue(&mut st, 2, 0);
    queue(&mut st, 3, 1);
    st.threads[0].runnable_since = 150 * MS;
    st.threads[1].runnable_since = 150 * MS;
    p.enqueued(&st, CoreId(2), ThreadId(0), true);
    p.enqueued(&st, CoreId(3), ThreadId(1), true);
    if partner {
        run_on(&mut st, 1, 2);
        p.enqueued(&st, CoreId(1), ThreadId(2), true);
    }
    match p.pick_next(&st, CoreId(0)) {
        Pick::Steal { thread, .. } => thread,
        other => panic!("expected a steal, got {other:?}"),
    }
}

fn ntt_pick(s1: f64, opts: &str) -> ThreadId {
    ntt_pick_with(s1, opts, false)
}

#[test]
fn rota_ntt_order_takes_the_largest_gain_in_slowdown() {
    // With a quantum (20 ms) of full-speed progress added to both: thread
    // 0 progressed 110 of 120 ms (1/r = 1.09), gain 1 - 1/3: 0.79; thread
    // 1 (speedup 2.0) 50 of 90 (1/r = 1.8), gain 1/2: 1.62. Thread 1 goes
    // first, though the speed order (10 ms x 3 against 10 ms x 2) and a
    // speedup order would take thread 0.
    assert_eq!(ntt_pick(2.0, "order=ntt"), ThreadId(1));
    assert_eq!(ntt_pick(2.0, "order=speed"), ThreadId(0));
    // A thread a fast core does not speed up gains nothing from one.
    assert_eq!(ntt_pick(1.0, "order=ntt"), ThreadId(0));
    // ... and with 1.2 (1/r = 1.29, gain 1/6: 0.28) thread 0 still goes first.
    assert_eq!(ntt_pick(1.2, "order=ntt"), ThreadId(0));
    // With 1.5, thread 1 (1/r = 1.5, gain 1/3: 0.75) still ranks after
    // thread 0 per unit of fast share; per unit of fast time over the
    // progress so far (ntt-las), 1.5 / 3 / 60 ms beats 1.09 x 2/3 / 110 ms.
    assert_eq!(ntt_pick(1.5, "order=ntt"), ThreadId(0));
    assert_eq!(ntt_pick(1.5, "order=ntt-las"), ThreadId(1));
}

#[test]
fn rota_ntt_prog_divides_the_gain_among_a_programs_runnable_threads() {
    // Thread 1 (speedup 1.8: 1/r = 1.69, gain 4/9: 1.27) goes before
    // thread 0 (0.79) alone; with a second runnable thread in its program
    // the program gains half of that (0.63), and thread 0 goes first.
    assert_eq!(ntt_pick_with(1.8, "order=ntt-prog", false), ThreadId(1));
    assert_eq!(ntt_pick_with(1.8, "order=ntt-prog", true), ThreadId(0));
    assert_eq!(ntt_pick_with(1.8, "order=ntt", true), ThreadId(1));
}

/// `order=ntt-seen`: per thread (as `ntt`) for a program not seen to
/// finish, by the program's gradient (as `ntt-pr`) once it has finished
/// a run and started again.
#[test]
fn rota_ntt_seen_ranks_a_rerun_program_by_its_gradient() {
    let pick = |opts: &str, rerun: bool| ntt_pick_after(1.8, opts, true, rerun);
    assert_eq!(pick("order=ntt", false), ThreadId(1));
    assert_eq!(pick("order=ntt-pr", false), ThreadId(0));
    assert_eq!(pick("order=ntt-seen", false), ThreadId(1));
    assert_eq!(pick("order=ntt-seen", true), ThreadId(0));
    // The earlier run changes neither of the orders it combines.
    assert_eq!(pick("order=ntt", true), ThreadId(1));
    assert_eq!(pick("order=ntt-pr", true), ThreadId(0));
    // `ntt-pt-seen`: the program's rate per thread (`ntt-pt`) until then.
    assert_eq!(pick("order=ntt-pt", false), ThreadId(1));
    assert_eq!(pick("order=ntt-pt-seen", false), ThreadId(1));
    assert_eq!(pick("order=ntt-pt-seen", true), ThreadId(0));
}

#[test]
fn rota_floor_ranks_first_a_thread_more_than_a_quantum_behind_an_even_split() {
    // Four threads want a core on two fast cores: the even split gives each
    // half a fast core. Thread 0 holds fast core 0 throughout; thread 2 waits.
    let mut st = state("2B2S", 4);
    let mut p = rota(&st, "floor=on");
    let mut zero = rota(&st, "floor=on:cap=0");
    for q in [&mut p, &mut zero] {
        for (c, t) in [(0, 0), (1, 1), (2, 2), (3, 3)] {
            q.enqueued(&st, CoreId(c), ThreadId(t), true);
        }
    }
    run_on(&mut st, 0, 0);
    p.running(&st, CoreId(0), ThreadId(0));
    queue(&mut st, 2, 2);
    // 30 ms: thread 2 is owed 15 ms, under the one-quantum (20 ms) slack;
    // with cap=0 any shortfall counts.
    st.now = 30 * MS;
    assert!(!p.below_floor(&st, ThreadId(2)));
    assert!(zero.below_floor(&st, ThreadId(2)));
    // 50 ms: owed 25 ms, over the slack; thread 0 has had 50 ms, not owed.
    st.now = 50 * MS;
    assert_eq!(p.even_ns(&st, ThreadId(2)), 25 * MS);
    assert!(p.below_floor(&st, ThreadId(2)));
    assert!(!p.below_floor(&st, ThreadId(0)));
    // The floor's group ranks first whatever the order's key says.
    assert!(p.fast_rank(&st, ThreadId(2), 0) < p.fast_rank(&st, ThreadId(0), 0));
    // A sleeping thread wants nothing; its spell so far stays counted. Two
    // threads left wanting a core: each is owed a whole fast core.
    st.threads[3].state = RunState::Blocked(colab_core::BlockKind::Barrier);
    st.threads[3].core = None;
    p.stopped(&st, CoreId(3), ThreadId(3), 0, StopReason::Blocked);
    st.threads[1].state = RunState::Blocked(colab_core::BlockKind::Barrier);
    st.threads[1].core = None;
    p.stopped(&st, CoreId(1), ThreadId(1), 0, StopReason::Blocked);
    assert!(!p.below_floor(&st, ThreadId(3)));
    st.now = 60 * MS;
    // Thread 2: 25 ms owed at 50 ms, then 10 ms more at the full rate;
    // thread 3 keeps its 25 ms and gains nothing asleep.
    assert_eq!(p.even_ns(&st, ThreadId(2)), 35 * MS);
    assert_eq!(p.even_ns(&st, ThreadId(3)), 25 * MS);
    assert!(p.below_floor(&st, ThreadId(2)));
    p.enqueued(&st, CoreId(3), ThreadId(3), true);
    // Thread 3 woke with 25 ms owed and nothing since: 25 > 0 + 20.
    assert!(p.below_floor(&st, ThreadId(3)));
}

#[test]
fn rota_ntt_pt_weighs_each_thread_as_a_program_of_its_own() {
    // Program 0 has four runnable threads, program 1 one; nothing has run,
    // so both programs' rates are the prior's. The program gradient
    // (`ntt-pr`) ranks the lone thread first, since a unit of fast time
    // advances program 0 by a quarter of it; per thread (`ntt-pt`) they tie
    // and the lower id goes first.
    let st = state_apps("2B2S", &[(0, 2.0), (0, 2.0), (0, 2.0), (0, 2.0), (1, 2.0)]);
    let mut pr = rota(&st, "order=ntt-pr");
    let mut pt = rota(&st, "order=ntt-pt");
    for p in [&mut pr, &mut pt] {
        p.periodic(&st, &mut Vec::new());
        for t in 0..5 {
            p.enqueued(&st, CoreId(2), ThreadId(t), true);
        }
    }
    assert!(pr.fast_rank(&st, ThreadId(4), 0) < pr.fast_rank(&st, ThreadId(0), 0));
    assert!(pt.fast_rank(&st, ThreadId(0), 0) < pt.fast_rank(&st, ThreadId(4), 0));
    assert_eq!(
        pt.fast_rank(&st, ThreadId(0), 0).2,
        pt.fast_rank(&st, ThreadId(4), 0).2
    );
}

#[test]
fn rota_sjf_oracle_ranks_the_program_shortest_alone_first() {
    // Oracle mode: program 1 runs 5 ms alone on big cores, program 0 50 ms;
    // program 1's thread goes first whatever the ids. Without the lengths
    // (a program the hook did not cover) a thread ranks last.
    let st = state_apps("2B2S", &[(0, 2.0), (1, 2.0), (2, 2.0)]);
    let mut p = rota(&st, "order=sjf-oracle");
    assert!(p.wants_oracle_lengths());
    p.oracle_program_lengths(&[50 * MS, 5 * MS]);
    for t in 0..3 {
        p.enqueued(&st, CoreId(2), ThreadId(t), true);
    }
    let r = |t| p.fast_rank(&st, ThreadId(t), 0);
    assert!(r(1) < r(0));
    assert!(r(0) < r(2));
}

#[test]
fn rota_straggler_takes_the_blocked_occupants_sibling_before_a_queued_thread() {
    // Thread 0 (program 0) ran 2 ms phases on fast core 0, slept 1 ms once
    // and blocked again; its sibling, thread 1, runs on slow core 2; thread 2
    // (program 1) waits on slow core 3. The idle fast core takes the queued
    // thread by default; with `straggler` the sibling, whose phase ends the
    // barrier.
    let mut st = state_apps("2B2S", &[(0, 2.0), (0, 2.0), (1, 2.0), (1, 2.0)]);
    let mut on = rota(&st, "straggler=on");
    let mut off = rota(&st, "");
    for (p, first) in [(&mut on, true), (&mut off, false)] {
        let mut s = st.clone();
        ran_and_blocked(p, &mut s, 0, 0, 2 * MS);
        s.now += MS;
        p.enqueued(&s, CoreId(0), ThreadId(0), true);
        ran_and_blocked(p, &mut s, 0, 0, 2 * MS);
        if first {
            st = s;
        }
    }
    run_on(&mut st, 2, 1);
    run_on(&mut st, 1, 3);
    queue(&mut st, 3, 2);
    assert_eq!(
        on.pick_next(&st, CoreId(0)),
        Pick::PreemptRemote {
            from: CoreId(2),
            thread: ThreadId(1)
        }
    );
    assert_eq!(
        off.pick_next(&st, CoreId(0)),
        Pick::Steal {
            from: CoreId(3),
            thread: ThreadId(2)
        }
    );
}

#[test]
fn rota_gang_holds_a_fast_core_for_a_program_whose_threads_all_run_fast() {
    // Program 0: thread 0 ran on fast core 0 and blocked (a barrier), its
    // sibling thread 1 runs on fast core 1. Program 1: thread 2 waits on
    // slow core 2, thread 3 runs on slow core 3. With `gang` the idle fast
    // core waits for thread 0 (CFS's minimum slice, 2.25 ms on four cores)
    // rather than split program 0 (on since the twelfth freeze); without
    // it, it takes thread 2.
    // Thread 4 (program 0) wakes only with `third`: then a runnable thread
    // of program 0 waits on a slow core.
    let setup_with = |opts: &str, sibling_on: u16, third: bool| {
        let apps = [(0, 2.0), (0, 2.0), (1, 2.0), (1, 2.0), (0, 2.0)];
        let mut st = state_apps("2B2S", &apps);
        let mut p = rota(&st, opts);
        for t in 0..if third { 5 } else { 4 } {
            p.enqueued(&st, CoreId(0), ThreadId(t), true);
        }
        ran_and_blocked(&mut p, &mut st, 0, 0, MS);
        run_on(&mut st, sibling_on, 1);
        p.running(&st, CoreId(sibling_on), ThreadId(1));
        run_on(&mut st, 3, 3);
        queue(&mut st, 2, 2);
        if third {
            queue(&mut st, 2, 4);
        }
        (st, p)
    };
    let setup = |opts: &str, sibling_on: u16| setup_with(opts, sibling_on, false);
    let steal = Pick::Steal {
        from: CoreId(2),
        thread: ThreadId(2),
    };
    let (mut st, mut gang) = setup("gang=on:gang-fit=off", 1);
    let now = st.now;
    assert_eq!(
        gang.pick_next(&st, CoreId(0)),
        Pick::IdleUntil(now + 2250 * US)
    );
    // Once the slice has passed, the core takes the waiting thread.
    st.now += 2250 * US;
    assert_eq!(gang.pick_next(&st, CoreId(0)), steal);
    let (st, mut plain) = setup("gang=off", 1);
    assert_eq!(plain.pick_next(&st, CoreId(0)), steal);
    // A third thread of program 0 waits on a slow core: the program does
    // not fit the fast cores, so the core takes a waiting thread.
    let (st, mut partial) = setup_with("gang=on:gang-fit=off", 1, true);
    assert!(matches!(
        partial.pick_next(&st, CoreId(0)),
        Pick::Steal { .. }
    ));
    // A sibling on a slow core: no gang on the fast cores to keep.
    let (mut st, mut split) = setup("gang=on:gang-fit=off", 2);
    st.cores[2].rq.clear();
    queue(&mut st, 3, 2);
    assert_eq!(
        split.pick_next(&st, CoreId(0)),
        Pick::Steal {
            from: CoreId(3),
            thread: ThreadId(2)
        }
    );
}

#[test]
fn rota_reclaim_leaves_a_sibling_its_idle_core_at_a_shared_wake_up() {
    // Thread 0 (program 0) ran on fast core 0 and blocked; fast core 0 now
    // runs thread 2, fast core 1 thread 3. Thread 1 ran on slow core 2 and
    // blocked; slow core 3 was never used. Thread 0 wakes with its previous
    // core busy. With `reclaim`, slow core 2 is left to thread 1 when thread
    // 1 is thread 0's sibling and blocked after it (both wait at one
    // barrier, so thread 1 wakes with thread 0): thread 0 takes core 3.
    // Otherwise (reclaim off, another program's thread, or a sibling that
    // blocked first, as a main thread waiting at a join) it takes core 2,
    // the first idle core.
    // `prev`: whether each of threads 0 and 1 was last woken by a wake-all
    // before it blocked (what `reclaim=barrier` reads).
    let setup_seen = |opts: &str,
                      other_prog: bool,
                      sibling_first: bool,
                      kinds: [BlockKind; 2],
                      prev: [bool; 2]| {
        let p1 = if other_prog { 1 } else { 0 };
        let apps = [(0, 2.0), (p1, 2.0), (0, 2.0), (1, 2.0)];
        let mut st = state_apps("2B2S", &apps);
        let mut p = rota(&st, opts);
        for (t, broadcast) in prev.into_iter().enumerate() {
            let waker = Some(ThreadId(3));
            p.select_core(
                &st,
                ThreadId(t as u32),
                WakeKind::Wakeup { waker, broadcast },
            );
        }
        if sibling_first {
            ran_and_blocked_on(&mut p, &mut st, 2, 1, MS, kinds[1]);
            ran_and_blocked_on(&mut p, &mut st, 0, 0, MS, kinds[0]);
        } else {
            ran_and_blocked_on(&mut p, &mut st, 0, 0, MS, kinds[0]);
            ran_and_blocked_on(&mut p, &mut st, 2, 1, MS, kinds[1]);
        }
        run_on(&mut st, 0, 2);
        p.running(&st, CoreId(0), ThreadId(2));
        run_on(&mut st, 1, 3);
        p.running(&st, CoreId(1), ThreadId(3));
        (st, p)
    };
    let setup_on = |opts: &str, other_prog: bool, sibling_first: bool, kinds: [BlockKind; 2]| {
        setup_seen(opts, other_prog, sibling_first, kinds, [false; 2])
    };
    let bar = [BlockKind::Barrier; 2];
    let setup = |opts: &str, other_prog: bool, sibling_first: bool| {
        setup_on(opts, other_prog, sibling_first, bar)
    };
    let (st, mut p) = setup("reclaim=on", false, false);
    assert_eq!(wake(&mut p, &st, 0), CoreId(3));
    // `reclaim=barrier-oracle`: only when both waited at a barrier, read
    // from the simulator's wait kinds.
    let (st, mut p) = setup("reclaim=barrier-oracle", false, false);
    assert_eq!(wake(&mut p, &st, 0), CoreId(3));
    for kinds in [
        [BlockKind::Sleep, BlockKind::Barrier],
        [BlockKind::Barrier, BlockKind::Mutex],
    ] {
        let (st, mut p) = setup_on("reclaim=barrier-oracle", false, false, kinds);
        assert_eq!(wake(&mut p, &st, 0), CoreId(2), "{kinds:?}");
        let (st, mut p) = setup_on("reclaim=on", false, false, kinds);
        assert_eq!(wake(&mut p, &st, 0), CoreId(3), "{kinds:?}");
    }
    // `reclaim=barrier`, as a kernel tells it from the futex calls: thread
    // 0 is let go by a wake-all now, and thread 1's wait before this one
    // ended in a wake-all too (whatever the simulator says they wait on).
    let broadcast_wake = |p: &mut Rota, st: &SchedState, now: bool| {
        let waker = Some(ThreadId(2));
        p.select_core(
            st,
            ThreadId(0),
            WakeKind::Wakeup {
                waker,
                broadcast: now,
            },
        )
    };
    let kinds = [BlockKind::Mutex; 2];
    for (prev, now, want) in [
        ([false, true], true, 3),
        ([true, true], false, 2),
        ([true, false], true, 2),
    ] {
        let (st, mut p) = setup_seen("reclaim=barrier", false, false, kinds, prev);
        let got = broadcast_wake(&mut p, &st, now);
        assert_eq!(got, CoreId(want), "{prev:?} then {now}");
    }
    let (st, mut p) = setup_seen("reclaim=barrier", false, false, bar, [true; 2]);
    assert_eq!(
        broadcast_wake(&mut p, &st, false),
        CoreId(2),
        "barrier kinds unread"
    );
    let (st, mut p) = setup("reclaim=off", false, false);
    assert_eq!(wake(&mut p, &st, 0), CoreId(2));
    let (st, mut p) = setup("reclaim=on", true, false);
    assert_eq!(wake(&mut p, &st, 0), CoreId(2));
    let (st, mut p) = setup("reclaim=on", false, true);
    assert_eq!(wake(&mut p, &st, 0), CoreId(2));
    // With every idle core reclaimed, thread 0 queues instead, on the
    // shortest queue other than the reclaimed core.
    let (mut st, mut p) = setup("reclaim=on", false, false);
    ran_and_blocked(&mut p, &mut st, 3, 1, MS);
    let c = wake(&mut p, &st, 0);
    assert!(c != CoreId(3) && c != CoreId(2), "{c:?}");
}

#[test]
fn rota_gang_fit_holds_only_for_a_program_that_fits_the_fast_cores() {
    // As the gang test: program 0's thread 0 blocked on fast core 0, its
    // thread 1 runs on fast core 1, program 1 waits and runs on the slow
    // cores. With `extra`, program 0 has a third thread, blocked (live),
    // so it has more threads than the two fast cores: `gang` alone still
    // holds, `gang-fit` does not, until that thread exits.
    let setup = |opts: &str, extra: bool| {
        let mut apps = vec![(0, 2.0), (0, 2.0), (1, 2.0), (1, 2.0)];
        if extra {
            apps.push((0, 2.0));
        }
        let mut st = state_apps("2B2S", &apps);
        let mut p = rota(&st, opts);
        for t in 0..4 {
            p.enqueued(&st, CoreId(0), ThreadId(t), true);
        }
        ran_and_blocked(&mut p, &mut st, 0, 0, MS);
        run_on(&mut st, 1, 1);
        p.running(&st, CoreId(1), ThreadId(1));
        run_on(&mut st, 3, 3);
        queue(&mut st, 2, 2);
        (st, p)
    };
    let held =
        |p: &mut Rota, st: &SchedState| matches!(p.pick_next(st, CoreId(0)), Pick::IdleUntil(_));
    let (st, mut p) = setup("gang-fit=on", false);
    assert!(held(&mut p, &st));
    let (st, mut p) = setup("gang-fit=off", true);
    assert!(held(&mut p, &st));
    let (mut st, mut p) = setup("gang-fit=on", true);
    assert!(!held(&mut p, &st));
    // The third thread runs briefly on slow core 2 and exits: the program
    // fits again.
    st.cores[2].rq.clear();
    p.enqueued(&st, CoreId(2), ThreadId(4), true);
    run_on(&mut st, 2, 4);
    p.running(&st, CoreId(2), ThreadId(4));
    st.cores[2].current = None;
    st.threads[4].state = RunState::Exited;
    st.threads[4].core = None;
    p.stopped(&st, CoreId(2), ThreadId(4), 0, StopReason::Exited);
    queue(&mut st, 2, 2);
    assert!(held(&mut p, &st));
}

/// `core-turn`: threads 0 and 1 (programs 0 and 1, predicted speedup 1.1)
/// take turns on fast core 0, each running 4 ms and blocking, while thread
/// 2 (program 2, speedup 3, so it outranks both), which has run 50 ms, runs
/// on slow core 2 and never queues. Each occupant holds the
/// core 4 ms, never the 20 ms thread 2's age asks, so without the switch
/// thread 2 never gets the core; with it the core's turn counts, and
/// thread 2 takes the core once the turn has lasted 20 ms.
#[test]
fn rota_core_turn_lets_a_slow_cores_thread_in_past_a_fast_cores_churn() {
    let swap_at = |opts: &str| {
        let mut st = state_apps("2B2S", &[(0, 1.1), (1, 1.1), (2, 3.0)]);
        let mut p = rota(&st, opts);
        queue(&mut st, 2, 2);
        st.threads[2].runnable_since = 0;
        p.enqueued(&st, CoreId(2), ThreadId(2), true);
        run_on(&mut st, 2, 2);
        p.running(&st, CoreId(2), ThreadId(2));
        for step in 0..10u64 {
            let t = (step % 2) as u32;
            st.now = step * 4 * MS;
            st.threads[2].sum_exec_ns = 50 * MS + st.now;
            queue(&mut st, 0, t);
            st.threads[t as usize].runnable_since = st.now;
            p.enqueued(&st, CoreId(0), ThreadId(t), true);
            run_on(&mut st, 0, t);
            p.running(&st, CoreId(0), ThreadId(t));
            for ms in 1..=4 {
                st.now = step * 4 * MS + ms * MS - US;
                st.threads[2].sum_exec_ns = 50 * MS + st.now;
                let mut out = Vec::new();
                p.tick(&st, CoreId(0), &mut out);
                if !out.is_empty() {
                    return Some((st.now, out));
                }
            }
            st.now = (step + 1) * 4 * MS;
            st.cores[0].current = None;
            st.threads[t as usize].sum_exec_ns += 4 * MS;
            st.threads[t as usize].state = RunState::Blocked(BlockKind::Barrier);
            st.threads[t as usize].core = None;
            p.stopped(&st, CoreId(0), ThreadId(t), 4 * MS, StopReason::Blocked);
        }
        None
    };
    assert_eq!(swap_at(""), None);
    // 20 ms into the core's turn thread 1 holds it: it goes to slow core 2.
    assert_eq!(
        swap_at("core-turn=on"),
        Some((21 * MS - US, swap(1, 2, 2, 0)))
    );
}

/// `share-rank`: no core idle; program 0 has three live threads (more than
/// the two fast cores), program 1's thread 3 (predicted speedup 3, runnable
/// for 50 ms, never on a fast core) runs on slow core 2, programs 2 and 3
/// fill the other cores, their threads just woken (program 2's thread 4,
/// speedup 1.05, on slow core 3). Program 0's thread 0 (speedup 1.2, last on fast
/// core 0) wakes: thread 3 outranks it, so it queues on the slow cluster
/// instead of its previous fast core. A program that fits the fast cores,
/// a waking thread that outranks the slow cluster's (speedup 3 against
/// thread 3's 1.05), or a new thread is placed as before.
#[test]
fn rota_share_rank_queues_an_outranked_waking_thread_on_the_slow_cluster() {
    let place = |opts: &str, speed0: f64, fits: bool, kind: WakeKind| {
        // Thread 3's speedup: 3, or barely any when thread 0's is high.
        let hog = if speed0 > 2.0 { 1.05 } else { 3.0 };
        let mut apps = vec![(0, speed0), (2, 2.0), (3, 2.0), (1, hog), (2, 1.05)];
        if !fits {
            apps.push((0, speed0));
            apps.push((0, speed0));
        }
        let mut st = state_apps("2B2S", &apps);
        let mut p = rota(&st, opts);
        // Thread 3 has been runnable since 0 on slow core 2.
        queue(&mut st, 2, 3);
        p.enqueued(&st, CoreId(2), ThreadId(3), true);
        run_on(&mut st, 2, 3);
        p.running(&st, CoreId(2), ThreadId(3));
        // Thread 0 ran 10 ms on fast core 0 and blocked at 50 ms.
        st.now = 40 * MS;
        queue(&mut st, 0, 0);
        p.enqueued(&st, CoreId(0), ThreadId(0), true);
        ran_and_blocked(&mut p, &mut st, 0, 0, 10 * MS);
        st.threads[3].sum_exec_ns = st.now;
        // The others have just woken and got their cores.
        for (c, t) in [(0, 1), (1, 2), (3, 4)] {
            queue(&mut st, c, t);
            p.enqueued(&st, CoreId(c), ThreadId(t), true);
            run_on(&mut st, c, t);
            p.running(&st, CoreId(c), ThreadId(t));
        }
        st.threads[0].last_core = Some(CoreId(0));
        p.select_core(&st, ThreadId(0), kind)
    };
    let woke = WakeKind::wakeup(None);
    assert_eq!(place("share-rank=off", 1.2, false, woke), CoreId(0));
    assert_eq!(place("share-rank=on", 1.2, false, woke), CoreId(2));
    assert_eq!(place("share-rank=on", 1.2, true, woke), CoreId(0));
    assert_eq!(place("share-rank=on", 3.0, false, woke), CoreId(0));
    let new = WakeKind::New { parent: None };
    assert_eq!(place("share-rank=on", 1.2, false, new), CoreId(0));
}
