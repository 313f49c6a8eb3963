//! Where a waking thread goes (previous core, idle cores, queues, `stay`,
//! `reclaim`) and how each core's queue orders it.

use super::*;

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
    let mut shared = rota(&st, "share-fast=on");
    for (c, t) in [(0, 0), (1, 1), (2, 2), (3, 3)] {
        run_on(&mut st, c, t);
    }
    queue(&mut st, 2, 4);
    // Fast cores run one thread each; the shortest slow queue takes it.
    assert_eq!(wake(&mut p, &st, 5), CoreId(3));
    // Sharing fast cores (`share-fast=on`; the default shares them with
    // threads whose bursts are short, and a thread that never slept has
    // none): the shortest queue anywhere, the
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
fn rota_shares_fast_queues_only_with_bursts_under_the_minimum_slice() {
    // 2B2S: CFS's minimum slice is 0.75 ms x (1 + log2 4) = 2.25 ms.
    let mut st = state("2B2S", 7);
    let mut short = rota(&st, "share-fast=short");
    let mut on = rota(&st, "share-fast=on");
    let at = st.now;
    for p in [&mut short, &mut on] {
        st.now = at;
        // Thread 4 ran 10 ms on fast core 0 (a mean burst of 2.5 ms, the
        // mean moving a quarter of the way to each burst), thread 5 0.5 ms
        // on fast core 1 (over a migration's 100 us: `stay` does not hold).
        ran_and_blocked(p, &mut st, 0, 4, 10 * MS);
        ran_and_blocked(p, &mut st, 1, 5, MS / 2);
    }
    for (c, t) in [(0, 0), (1, 1), (2, 2), (3, 3)] {
        run_on(&mut st, c, t);
    }
    // Nothing idle, every queue one long. The long burst queues on a slow
    // core with `short`, on its previous fast core when every core shares.
    assert_eq!(wake(&mut short, &st, 4), CoreId(2));
    assert_eq!(wake(&mut on, &st, 4), CoreId(0));
    // The short burst shares its previous fast core either way.
    assert_eq!(wake(&mut short, &st, 5), CoreId(1));
    assert_eq!(wake(&mut on, &st, 5), CoreId(1));
    // A new thread has no bursts yet: the shortest queue anywhere.
    let new = WakeKind::New { parent: None };
    assert_eq!(short.select_core(&st, ThreadId(6), new), CoreId(0));
    assert!(RotaParams::default()
        .parse_options("share-fast=sometimes")
        .is_err());
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
fn rota_local_eevdf_serves_the_earlier_new_thread_first() {
    // CFS charges each new thread a slice of the period at its arrival
    // (START_DEBIT), and the slice shrinks as the queue grows, so the later
    // thread 2 goes first; EEVDF places both at the queue's average with
    // half a request and takes the earlier eligible deadline: thread 1.
    assert_eq!(local_pick("new-start=debit"), Pick::Local(ThreadId(2)));
    assert_eq!(local_pick("local=eevdf"), Pick::Local(ThreadId(1)));
}

#[test]
fn rota_new_start_debit_fifo_serves_new_threads_in_arrival_order() {
    // START_DEBIT alone serves the later thread first.
    assert_eq!(local_pick("new-start=debit"), Pick::Local(ThreadId(2)));
    // Debited, in arrival order (the default): thread 2 starts no earlier
    // than thread 1.
    assert_eq!(local_pick("new-start=debit-fifo"), Pick::Local(ThreadId(1)));
    assert_eq!(local_pick(""), Pick::Local(ThreadId(1)));
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
