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
