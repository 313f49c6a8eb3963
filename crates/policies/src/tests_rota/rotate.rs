//! Moves at a fast core's tick: the rotation and its quantum, sibling
//! turns and serial phases.

use super::*;

/// Thread 0 took fast core 0 at 2 ms; thread 2 has waited on slow core
/// `slow` since 1 ms, with no progress (first in the gradient's order);
/// thread 1 runs there since 3 ms.
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
fn rota_rotates_a_fast_core_after_a_quantum() {
    let (mut st, mut p) = fifo_waiter("2B2S", 2, "quantum=migrations:sibling-turns=off");
    st.now = 21 * MS;
    let mut out = Vec::new();
    p.tick(&st, CoreId(0), &mut out);
    assert!(out.is_empty(), "before the 20 ms quantum: {out:?}");
    st.now = 22 * MS;
    p.tick(&st, CoreId(0), &mut out);
    // The occupant goes where the longest waiter was; the waiter takes core 0.
    assert_eq!(out, swap(0, 2, 2, 0));
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
    check("2B2S", 2, "quantum=slice", 2250 * US);
    check("4B4S", 4, "quantum=slice", 3 * MS);
    check("2B2S", 2, "quantum=migrations", 20 * MS);
}

/// `quantum=age`: the occupant keeps the fast core for as long as the
/// first waiting thread has run so far, at least CFS's minimum slice
/// (2.25 ms on 2B2S) and at most the 20 ms quantum (the default since the
/// ninth freeze).
#[test]
fn rota_age_quantum_lets_a_young_thread_in_sooner() {
    // Thread 2, the waiting one, has run `ran`.
    let rotates_after = |ran: u64| {
        // Thread 2 alone waits: whether it outranks the occupant or takes
        // a sibling's turn, its age sets when.
        let (mut st, mut p) = fifo_waiter("2B2S", 2, "quantum=age");
        st.cores[2].current = None;
        st.threads[1].state = RunState::Blocked(BlockKind::Barrier);
        st.threads[1].core = None;
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

/// A slow core with nothing to run takes, at its tick, the longest-waiting
/// thread of a slow core two or more threads longer; `slow-balance=off`
/// (the ablation for what scx_colab's BPF lacks) leaves it idle.
#[test]
fn rota_slow_core_with_an_empty_queue_evens_out_slow_queues() {
    let tick = |opts: &str| {
        let mut st = state("2B4S", 5);
        let p = rota(&st, opts);
        st.now = 10 * MS;
        run_on(&mut st, 0, 0);
        run_on(&mut st, 1, 1);
        run_on(&mut st, 2, 2);
        queue(&mut st, 2, 3);
        st.threads[3].runnable_since = 4 * MS;
        queue(&mut st, 2, 4);
        st.threads[4].runnable_since = 2 * MS;
        let mut out = Vec::new();
        let mut p = p;
        p.tick(&st, CoreId(3), &mut out);
        out
    };
    assert_eq!(
        tick(""),
        vec![Action::Migrate {
            thread: ThreadId(4),
            to: CoreId(3)
        }]
    );
    assert!(tick("slow-balance=off").is_empty());
}
