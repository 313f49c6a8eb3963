//! What a fast core with an empty queue does: steals, takeovers of a slow
//! core's thread and the guards on them (`pull_min`, `hold`,
//! `pull-from`), and a gang's hold.

use super::*;

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

/// `tiers` on the three-tier Tensor (big cores first: X1 0-1, A76 2-3,
/// A55 4-7): an idle X1 takes over a thread that has run long on an A76
/// once no slow core's thread is there to take; an idle A76 does not (no
/// A76 is slower than it); the A76's tick wakes the idle X1.
#[test]
fn rota_tiers_idle_fastest_core_takes_over_a_mid_tier_thread() {
    let mut st = state_apps("tensor-g1", &[(0, 2.0), (1, 2.0)]);
    let mut p = rota(&st, "");
    run_on(&mut st, 2, 0);
    st.now = 10 * MS;
    let take_0 = Pick::PreemptRemote {
        from: CoreId(2),
        thread: ThreadId(0),
    };
    assert_eq!(p.pick_next(&st, CoreId(0)), take_0);
    assert_eq!(p.pick_next(&st, CoreId(3)), Pick::Idle);
    let mut out = Vec::new();
    p.tick(&st, CoreId(2), &mut out);
    assert_eq!(out, vec![Action::Resched(CoreId(0))]);
    // A thread on a slow core goes first.
    run_on(&mut st, 4, 1);
    st.cores[4].run_start = 0;
    assert_eq!(
        p.pick_next(&st, CoreId(0)),
        Pick::PreemptRemote {
            from: CoreId(4),
            thread: ThreadId(1)
        }
    );
    // Off, the X1 leaves the A76's thread where it is, and no tick wakes it.
    st.cores[4].current = None;
    let mut q = rota(&st, "tiers=off");
    assert_eq!(q.pick_next(&st, CoreId(0)), Pick::Idle);
    let mut out = Vec::new();
    q.tick(&st, CoreId(2), &mut out);
    assert!(out.is_empty());
    // On a two-type machine the switch changes nothing: an idle fast core
    // leaves a thread on the other fast core alone.
    let mut st = state("2B2S", 1);
    let mut p = rota(&st, "");
    run_on(&mut st, 1, 0);
    st.now = 10 * MS;
    assert_eq!(p.pick_next(&st, CoreId(0)), Pick::Idle);
}
