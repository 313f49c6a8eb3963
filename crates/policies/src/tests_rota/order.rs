//! Who goes first for a fast core: every order's rank (the slowdown
//! gradient per thread and per program, owed, speed, turn, capped, share,
//! least attained service, the floor, the length oracle).

use super::*;

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
    assert_eq!(first("order=ntt:split-prior=off"), 0);
}

/// The rank reads durations, never the clock itself: the situation of
/// [`rota_ntt_pr_ranks_by_the_programs_rate`], with thread 2 running on a
/// slow core at the end, ranks alike when the clock starts at 2^62 ns (146
/// years) as at 0. The program sums, kept in 64 bits as a BPF map holds
/// them, once took a rate times the clock (`active * now - sum of wake-up
/// times`), which passes 2^64 there.
#[test]
fn rota_ranks_read_durations_not_the_clock() {
    for opts in ["", "order=ntt-pr", "order=ntt"] {
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
            at0[0].1 != at0[1].1 && at0[1].1 != at0[2].1,
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
    // first, though a speedup order would take thread 0.
    assert_eq!(ntt_pick(2.0, "order=ntt"), ThreadId(1));
    // A thread a fast core does not speed up gains nothing from one.
    assert_eq!(ntt_pick(1.0, "order=ntt"), ThreadId(0));
    // ... and with 1.2 (1/r = 1.29, gain 1/6: 0.28) thread 0 still goes first.
    assert_eq!(ntt_pick(1.2, "order=ntt"), ThreadId(0));
    // With 1.5, thread 1 (1/r = 1.5, gain 1/3: 0.75) still ranks after
    // thread 0.
    assert_eq!(ntt_pick(1.5, "order=ntt"), ThreadId(0));
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
