//! Policy decisions on hand-built situations.

use super::*;
use crate::test_util::*;
use colab_core::{
    Action, BlockKind, CoreId, Pick, Policy, RunState, SchedState, ThreadId, WakeKind, NS_PER_MS,
};

const MS: u64 = NS_PER_MS;

// ----- CFS ------------------------------------------------------------------

#[test]
fn cfs_tunables_scale_with_log_cpus() {
    let t1 = CfsTunables::for_cpus(1);
    assert_eq!(
        (
            t1.latency_ns,
            t1.min_granularity_ns,
            t1.wakeup_granularity_ns
        ),
        (6 * MS, 750_000, MS)
    );
    let t4 = CfsTunables::for_cpus(4);
    assert_eq!(
        (
            t4.latency_ns,
            t4.min_granularity_ns,
            t4.wakeup_granularity_ns
        ),
        (18 * MS, 2_250_000, 3 * MS)
    );
    let t6 = CfsTunables::for_cpus(6);
    assert_eq!(t6.latency_ns, 18 * MS);
    let t64 = CfsTunables::for_cpus(64);
    assert_eq!(t64.latency_ns, 24 * MS, "capped at 8 cpus");
}

#[test]
fn cfs_picks_smallest_vruntime_and_slices_by_queue_length() {
    let mut st = state("2B2S", 3);
    let mut p = Cfs::new();
    created(&mut p, &st);
    queue(&mut st, 0, 0);
    queue(&mut st, 0, 1);
    queue(&mut st, 0, 2);
    // Give them vruntimes through accounting.
    for (t, ran) in [(0u32, 9 * MS), (1, 2 * MS), (2, 5 * MS)] {
        p.stopped(
            &st,
            CoreId(0),
            ThreadId(t),
            ran,
            colab_core::StopReason::Preempted,
        );
    }
    assert_eq!(p.pick_next(&st, CoreId(0)), Pick::Local(ThreadId(1)));
    // 3 runnable on a 4-cpu machine: 18 ms / 3 = 6 ms.
    assert_eq!(p.slice_ns(&st, CoreId(0), ThreadId(1)), 6 * MS);
}

#[test]
fn cfs_idle_core_pulls_from_its_own_cluster_first() {
    let mut st = state("2B2S", 5);
    let mut p = Cfs::new();
    created(&mut p, &st);
    // Core 0 (big) runs 0 with 1 queued; core 2 (little) runs 2 with 3,4 queued.
    run_on(&mut st, 0, 0);
    queue(&mut st, 0, 1);
    run_on(&mut st, 2, 2);
    queue(&mut st, 2, 3);
    queue(&mut st, 2, 4);
    // Idle big core 1 pulls from its cluster (core 0), though core 2 is busier.
    assert_eq!(
        p.pick_next(&st, CoreId(1)),
        Pick::Steal {
            from: CoreId(0),
            thread: ThreadId(1)
        }
    );
    // Idle little core 3 pulls from core 2.
    match p.pick_next(&st, CoreId(3)) {
        Pick::Steal { from, .. } => assert_eq!(from, CoreId(2)),
        other => panic!("{other:?}"),
    }
}

#[test]
fn cfs_wakes_onto_idle_sibling_of_previous_core() {
    let mut st = state("2B2S", 3);
    let mut p = Cfs::new();
    created(&mut p, &st);
    run_on(&mut st, 0, 0);
    run_on(&mut st, 2, 1);
    // Thread 2 last ran on core 0 (busy); core 1 (same cluster) is idle.
    st.threads[2].last_core = Some(CoreId(0));
    let c = p.select_core(&st, ThreadId(2), WakeKind::wakeup(Some(ThreadId(1))));
    assert_eq!(c, CoreId(1));
    // With the whole machine busy it stays on its previous core.
    run_on(&mut st, 1, 2);
    st.cores[1].current = None;
    run_on(&mut st, 3, 2);
    st.cores[3].current = None;
    let mut st2 = state("2B2S", 6);
    created(&mut p, &st2);
    for c in 0..4 {
        run_on(&mut st2, c, c as u32);
    }
    st2.threads[5].last_core = Some(CoreId(2));
    assert_eq!(
        p.select_core(&st2, ThreadId(5), WakeKind::wakeup(None)),
        CoreId(2)
    );
}

#[test]
fn cfs_wakeup_preemption_needs_the_granularity() {
    let mut st = state("1B", 2);
    let mut p = Cfs::new();
    created(&mut p, &st);
    run_on(&mut st, 0, 0);
    p.stopped(
        &st,
        CoreId(0),
        ThreadId(0),
        10 * MS,
        colab_core::StopReason::Preempted,
    );
    p.stopped(
        &st,
        CoreId(0),
        ThreadId(1),
        9 * MS,
        colab_core::StopReason::Preempted,
    );
    queue(&mut st, 0, 1);
    // 1 ms behind < 1 ms granularity (1 cpu): no preemption.
    assert!(!p.should_preempt(&st, CoreId(0), ThreadId(1)));
    st.now = 2 * MS; // current has run 2 ms more
    assert!(p.should_preempt(&st, CoreId(0), ThreadId(1)));
}

#[test]
fn cfs_periodic_balance_moves_from_long_to_short_queues() {
    let mut st = state("4B", 4);
    let mut p = Cfs::new();
    created(&mut p, &st);
    run_on(&mut st, 0, 0);
    queue(&mut st, 0, 1);
    queue(&mut st, 0, 2);
    run_on(&mut st, 1, 3);
    let mut out = Vec::new();
    p.tick(&st, CoreId(0), &mut out);
    assert_eq!(out.len(), 1);
    match out[0] {
        Action::Migrate { to, .. } => assert!(to == CoreId(2) || to == CoreId(3), "{to}"),
        a => panic!("{a:?}"),
    }
}

// CfsCore driven in the engine's hook order (dispatch, stop, re-enqueue or
// sleep, wake-up), so vruntimes and min_vruntime can be checked directly.

/// `t` runs on `c` for `ns`, then is preempted (back on `c`'s queue) or sleeps.
fn cfs_run(k: &mut CfsCore, st: &mut SchedState, c: u16, t: u32, ns: u64, sleep: bool) {
    run_on(st, c, t);
    st.now += ns;
    cfs_stop(k, st, c, sleep);
}

/// The current thread of `c` stops, as the engine's stop_current does.
fn cfs_stop(k: &mut CfsCore, st: &mut SchedState, c: u16, sleep: bool) {
    let ran = st.current_ran(CoreId(c));
    let t = st.cores[c as usize].current.take().unwrap();
    if sleep {
        st.threads[t.idx()].state = RunState::Blocked(BlockKind::Mutex);
        st.threads[t.idx()].core = None;
    }
    k.stopped(st, CoreId(c), t, ran, 1.0);
    if !sleep {
        queue(st, c, t.0);
        k.enqueued(st, CoreId(c), t, false, false);
    }
}

/// `t` wakes up on `c`'s queue (not a new thread).
fn cfs_wake(k: &mut CfsCore, st: &mut SchedState, c: u16, t: u32) {
    queue(st, c, t);
    k.enqueued(st, CoreId(c), ThreadId(t), true, false);
}

fn cfs_core(st: &SchedState) -> CfsCore {
    let mut k = CfsCore::new(st);
    for t in 0..st.threads.len() {
        k.thread_created(ThreadId(t as u32));
    }
    k
}

#[test]
fn cfs_wakeup_on_another_core_keeps_its_lag() {
    // Core 0 has run 200 ms of two threads (min_vruntime 100 ms), core 2
    // 10 ms of one. Vruntimes are relative to their queue's min_vruntime, so
    // a thread moving between them keeps its lag, not its absolute value.
    let mut st = state("2B2S", 3);
    let mut k = cfs_core(&st);
    let ms = MS as i64;
    for (c, t) in [(0, 0), (0, 1), (2, 2)] {
        queue(&mut st, c, t);
        k.enqueued(&st, CoreId(c), ThreadId(t), false, false);
    }
    cfs_run(&mut k, &mut st, 0, 0, 50 * MS, false);
    cfs_run(&mut k, &mut st, 0, 1, 50 * MS, false);
    cfs_run(&mut k, &mut st, 0, 0, 50 * MS, false);
    cfs_run(&mut k, &mut st, 0, 1, 50 * MS, true);
    cfs_run(&mut k, &mut st, 2, 2, 10 * MS, false);
    assert_eq!((k.min_vr[0], k.min_vr[2]), (100 * ms, 10 * ms));
    // Thread 1 (lag 0 on core 0) wakes on core 2 while thread 2 runs there.
    run_on(&mut st, 2, 2);
    cfs_wake(&mut k, &mut st, 2, 1);
    assert_eq!(k.vr[1] - k.min_vr[2], 0, "lag 0 kept, not +90 ms");
    // So it gets the core within a slice (9 ms), not after 90 ms.
    st.now += 10 * MS;
    assert!(k.tick_preempt(&st, CoreId(2), 1.0));
    // The other way: thread 2 sleeps on core 2 10 ms ahead of thread 1 and
    // wakes on core 0, where it is 10 ms ahead of min_vruntime again, not
    // placed with a sleeper's credit half a latency behind.
    cfs_stop(&mut k, &mut st, 2, true);
    assert_eq!(k.vr[2] - k.min_vr[2], 10 * ms);
    cfs_wake(&mut k, &mut st, 0, 2);
    assert_eq!(k.vr[2] - k.min_vr[0], 10 * ms);
}

#[test]
fn cfs_min_vruntime_counts_the_running_thread_and_never_goes_back() {
    let mut st = state("2B2S", 2);
    let mut k = cfs_core(&st);
    let ms = MS as i64;
    let lat = k.tun.latency_ns as i64;
    for t in [0, 1] {
        queue(&mut st, 0, t);
        k.enqueued(&st, CoreId(0), ThreadId(t), false, false);
    }
    // Thread 1 sleeps at once; thread 0 then runs alone for 100 ms.
    cfs_run(&mut k, &mut st, 0, 1, 0, true);
    run_on(&mut st, 0, 0);
    st.now += 100 * MS;
    // Thread 1 wakes beside it: min_vruntime is the running thread's 100 ms,
    // so the sleeper gets half a latency of credit, not 100 ms.
    cfs_wake(&mut k, &mut st, 0, 1);
    assert_eq!(k.min_vr[0], 100 * ms);
    assert_eq!(k.vr[1], 100 * ms - lat / 2);
    let mut seen = vec![k.min_vr[0]];
    // Thread 0 sleeps, thread 1 runs 5 ms (still behind the old minimum),
    // then 10 ms more: min_vruntime holds, then follows thread 1.
    cfs_stop(&mut k, &mut st, 0, true);
    seen.push(k.min_vr[0]);
    cfs_run(&mut k, &mut st, 0, 1, 5 * MS, false);
    seen.push(k.min_vr[0]);
    cfs_run(&mut k, &mut st, 0, 1, lat as u64, true);
    seen.push(k.min_vr[0]);
    assert_eq!(seen, vec![100 * ms, 100 * ms, 100 * ms, 105 * ms + lat / 2]);
    // An empty core keeps the last thread's vruntime as its minimum.
    assert_eq!(k.min_vr[0], k.vr[1]);
}

// ----- COLAB ----------------------------------------------------------------

fn colab_with_labels(st: &mut SchedState) -> Colab {
    let mut p = Colab::new(ColabParams::default());
    created(&mut p, st);
    p
}

#[test]
fn colab_selector_runs_the_most_blocking_thread_first() {
    let mut st = state("2B2S", 4);
    let mut p = colab_with_labels(&mut st);
    for t in 0..3 {
        queue(&mut st, 0, t);
    }
    // Thread 2 made others wait 8 ms in the last 10 ms period, thread 1 only 1 ms.
    st.threads[1].blocked_others_ns = MS;
    st.threads[2].blocked_others_ns = 8 * MS;
    st.now = 10 * MS;
    p.periodic(&st, &mut Vec::new());
    assert_eq!(p.pick_next(&st, CoreId(0)), Pick::Local(ThreadId(2)));
}

#[test]
fn colab_big_core_steals_then_preempts_a_little_core() {
    let mut st = state("2B2S", 4);
    let mut p = colab_with_labels(&mut st);
    // Big core 0 idle; big core 1 runs 0 with 1 queued: steal from the cluster.
    run_on(&mut st, 1, 0);
    queue(&mut st, 1, 1);
    assert_eq!(
        p.pick_next(&st, CoreId(0)),
        Pick::Steal {
            from: CoreId(1),
            thread: ThreadId(1)
        }
    );
    // Nothing queued anywhere: take the most blocking thread running on a little core.
    st.cores[1].rq.clear();
    run_on(&mut st, 2, 2);
    run_on(&mut st, 3, 3);
    st.threads[3].blocked_others_ns = 6 * MS;
    st.now = 10 * MS;
    p.periodic(&st, &mut Vec::new());
    assert_eq!(
        p.pick_next(&st, CoreId(0)),
        Pick::PreemptRemote {
            from: CoreId(3),
            thread: ThreadId(3)
        }
    );
}

#[test]
fn colab_idle_little_core_takes_any_queued_thread_even_high_speedup() {
    // 1B3S: the big core runs 0 with high-speedup 1 queued behind it. An idle
    // little core takes 1 (Fig. 6 filters the domain's queues by blocking
    // only; "core sensitivity is usually unimportant to the thread selector").
    let mut st = state("1B3S", 2);
    st.threads[0].predicted_speedup = 3.0;
    st.threads[1].predicted_speedup = 3.0;
    let mut p = colab_with_labels(&mut st);
    run_on(&mut st, 0, 0);
    queue(&mut st, 0, 1);
    assert_eq!(
        p.pick_next(&st, CoreId(1)),
        Pick::Steal {
            from: CoreId(0),
            thread: ThreadId(1)
        }
    );
}

#[test]
fn colab_little_cores_never_preempt_big_ones() {
    let mut st = state("2B2S", 2);
    let mut p = colab_with_labels(&mut st);
    run_on(&mut st, 0, 0);
    run_on(&mut st, 1, 1);
    assert_eq!(p.pick_next(&st, CoreId(2)), Pick::Idle);
}

#[test]
fn colab_allocator_follows_labels() {
    let mut st = state("2B2S", 3);
    // Reference machine speedup range is 1.2 .. 3.14: thirds at ~1.85 and ~2.5.
    st.threads[0].predicted_speedup = 3.0; // high
    st.threads[1].predicted_speedup = 1.3; // low, not blocking
    st.threads[2].predicted_speedup = 1.3; // low but blocking
    let mut p = colab_with_labels(&mut st);
    st.threads[2].blocked_others_ns = 9 * MS;
    st.now = 10 * MS;
    p.periodic(&st, &mut Vec::new());
    for _ in 0..4 {
        let c = p.select_core(&st, ThreadId(0), WakeKind::wakeup(None));
        assert!(
            st.topo.is_big(c),
            "high speedup goes to a big core, got {c}"
        );
        let c = p.select_core(&st, ThreadId(1), WakeKind::wakeup(None));
        assert!(
            st.topo.is_little(c),
            "low speedup, low blocking goes little, got {c}"
        );
    }
    // The blocking low-speedup thread may go to either cluster: both occur.
    let mut seen_big = false;
    let mut seen_little = false;
    for _ in 0..4 {
        let c = p.select_core(&st, ThreadId(2), WakeKind::wakeup(None));
        seen_big |= st.topo.is_big(c);
        seen_little |= st.topo.is_little(c);
    }
    assert!(seen_big && seen_little);
}

/// Which clusters `t`'s wake-ups go to over a few calls: (big, little).
fn clusters_chosen(p: &mut Colab, st: &SchedState, t: u32) -> (bool, bool) {
    let (mut big, mut little) = (false, false);
    for _ in 0..4 {
        let c = p.select_core(st, ThreadId(t), WakeKind::wakeup(None));
        big |= st.topo.is_big(c);
        little |= st.topo.is_little(c);
    }
    (big, little)
}

#[test]
fn colab_e_labels_by_speedup_and_energy() {
    // Reference 2B2S. Thread 0 is a 45%-memory-bound phase: speedup 2.27 and
    // big/little energy ratio (1.5 - 0.75 m) / (0.786 - 0.636 m) = 2.33 (the
    // stall power is half the active power). Thread 1 has the same speedup
    // but costs 4.5x the energy on big (a phase a 1-D model cannot make, but a
    // counter model can predict).
    let mut st = state("2B2S", 2);
    for (t, e) in [(0, 2.33), (1, 4.5)] {
        st.threads[t].predicted_speedup = 2.27;
        st.threads[t].predicted_energy_ratio = e;
    }
    // Plain COLAB: both are medium speedup (thirds at ~1.85 and ~2.5): either cluster.
    let mut plain = colab_with_labels(&mut st);
    assert_eq!(clusters_chosen(&mut plain, &st, 0), (true, true));
    assert_eq!(clusters_chosen(&mut plain, &st, 1), (true, true));
    // Energy-aware with weights (1, -1): hyper = s - e spans -3.8 (all memory)
    // .. 1.23 (all compute), thirds at -2.12 and -0.45. Thread 0 (-0.06) is
    // high: big cores only. Thread 1 (-2.23) is low: little cores only.
    let mut e = Colab::new(ColabParams::energy_aware(1.0, -1.0));
    created(&mut e, &st);
    assert_eq!(e.name(), "colab-e");
    assert_eq!(clusters_chosen(&mut e, &st, 0), (true, false));
    assert_eq!(clusters_chosen(&mut e, &st, 1), (false, true));
    // Weights (1, 0) are plain COLAB.
    let mut same = Colab::new(ColabParams::energy_aware(1.0, 0.0));
    created(&mut same, &st);
    assert_eq!(same.name(), "colab");
    assert_eq!(clusters_chosen(&mut same, &st, 1), (true, true));
}

#[test]
fn colab_e_weights_parse_with_clear_errors() {
    assert_eq!(by_name("colab-e").unwrap().name(), "colab-e");
    assert_eq!(by_name("colab-e:2:-0.5").unwrap().name(), "colab-e");
    for (bad, says) in [
        ("colab-e:1", "expected two weights"),
        ("colab-e:1:x", "energy weight 'x'"),
        ("colab-e:inf:1", "speedup weight 'inf'"),
        ("colab-e:0:0", "both be zero"),
    ] {
        let msg = by_name(bad).err().unwrap().to_string();
        assert!(msg.contains(says) && msg.contains(bad), "{bad}: {msg}");
    }
}

#[test]
fn colab_allocator_round_robins_and_prefers_idle_cores() {
    let mut st = state("4B4S", 2);
    st.threads[0].predicted_speedup = 3.0;
    let mut p = colab_with_labels(&mut st);
    let a = p.select_core(&st, ThreadId(0), WakeKind::wakeup(None));
    let b = p.select_core(&st, ThreadId(0), WakeKind::wakeup(None));
    assert_ne!(a, b, "round-robin moves on");
    run_on(&mut st, 0, 1);
    run_on(&mut st, 1, 1);
    run_on(&mut st, 2, 1);
    for _ in 0..3 {
        assert_eq!(
            p.select_core(&st, ThreadId(0), WakeKind::wakeup(None)),
            CoreId(3)
        );
    }
}

#[test]
fn colab_scale_slice_shortens_big_core_slices() {
    let mut st = state("1B1S", 1);
    st.threads[0].predicted_speedup = 2.5;
    let p = colab_with_labels(&mut st);
    let big = p.slice_ns(&st, CoreId(0), ThreadId(0));
    let little = p.slice_ns(&st, CoreId(1), ThreadId(0));
    assert_eq!(big, (little as f64 / 2.5) as u64);
}

#[test]
fn colab_blocking_level_decays() {
    let mut st = state("2B2S", 1);
    let mut p = colab_with_labels(&mut st);
    st.threads[0].blocked_others_ns = 4 * MS;
    st.now = 10 * MS;
    p.periodic(&st, &mut Vec::new());
    // level = 0.5 * 0 + 0.5 * 0.4 = 0.2 -> high blocking; then it stops blocking.
    queue(&mut st, 0, 0);
    for _ in 0..5 {
        st.now += 10 * MS;
        p.periodic(&st, &mut Vec::new());
    }
    // 0.2 / 2^5 < 0.05: low again, so a low-speedup thread would go little.
    st.threads[0].predicted_speedup = 1.3;
    p.periodic(&st, &mut Vec::new());
    let c = p.select_core(&st, ThreadId(0), WakeKind::wakeup(None));
    assert!(st.topo.is_little(c));
}

// ----- WASH -----------------------------------------------------------------

#[test]
fn wash_few_threads_all_on_big_cores() {
    let st = state("2B2S", 2);
    let mut p = Wash::new(WashParams::default());
    created(&mut p, &st);
    let aff = p.compute_affinities(&st);
    assert!(aff.iter().all(|(_, m)| *m == st.topo.big_mask()));
}

#[test]
fn wash_scalable_workload_gets_every_core() {
    let mut st = state("2B2S", 4);
    let mut p = Wash::new(WashParams::default());
    created(&mut p, &st);
    for t in 0..4u32 {
        run_on(&mut st, t as u16, t);
    }
    st.now = 40 * MS;
    for t in &mut st.threads {
        t.sum_exec_ns = 40 * MS;
    }
    let aff = p.compute_affinities(&st);
    assert!(aff.iter().all(|(_, m)| *m == st.topo.all_mask()));
}

#[test]
fn wash_contended_lock_holder_goes_big() {
    let mut st = state("2B4S", 6);
    let mut p = Wash::new(WashParams::default());
    created(&mut p, &st);
    st.now = 100 * MS;
    // Threads 1-5 spent 60% of their life waiting for a mutex held by thread 0.
    for t in 1..6 {
        st.threads[t].mutex_wait_ns = 60 * MS;
        st.threads[t].futex_wait_ns = 60 * MS;
    }
    st.threads[0].mutex_blocked_others_ns = 300 * MS;
    st.threads[0].sum_exec_ns = 100 * MS;
    let aff = p.compute_affinities(&st);
    let big = st.topo.big_mask();
    assert_eq!(
        aff[0],
        (ThreadId(0), big),
        "the bottleneck is bound to big cores"
    );
    // LockRank picks ceil(2/6 * 6) = 2 threads with a non-zero rank: only thread 0 has one.
    let on_big = aff.iter().filter(|(_, m)| *m == big).count();
    assert!(on_big >= 1);
    assert!(aff[1..].iter().any(|(_, m)| *m == st.topo.all_mask()));
}

#[test]
fn wash_exec_rank_is_sized_by_big_core_capacity() {
    let mut st = state("1B3S", 4);
    let mut p = Wash::new(WashParams::default());
    created(&mut p, &st);
    st.now = 100 * MS;
    // Make it non-scalable: thread 3 waits on a lock most of its life.
    st.threads[3].mutex_wait_ns = 80 * MS;
    for t in 0..4u32 {
        run_on(&mut st, t as u16, t);
        st.threads[t as usize].sum_exec_ns = 10 * MS;
        st.threads[t as usize].retired = 10.0 * MS as f64;
    }
    // Thread 0 ran on the big core and retired twice as much; work retired on
    // little cores counts double (predicted speedup 2), so all four are equal.
    st.threads[0].retired = 20.0 * MS as f64;
    let aff = p.compute_affinities(&st);
    // Big capacity share = 1 / (1 + 3 * 0.318) ~ 0.51 of four equal threads: two fit.
    let big = st.topo.big_mask();
    let chosen: Vec<u32> = aff
        .iter()
        .filter(|(_, m)| *m == big)
        .map(|(t, _)| t.0)
        .collect();
    assert_eq!(chosen, vec![0, 1], "{aff:?}");
}

#[test]
fn unknown_policy_is_a_clear_error() {
    let e = by_name("fifo").err().unwrap();
    assert!(e.to_string().contains("unknown policy 'fifo'"));
    for (n, _) in POLICIES {
        assert_eq!(by_name(n).unwrap().name(), *n);
    }
}

#[test]
fn cfs_queue_index_finds_the_leftmost_and_drops_stale_entries() {
    use crate::cfs::CfsCore;
    use colab_core::{CoreOrder, ProgramId, ThreadInfo, Topology};
    let topo = Topology::named("2B2S", CoreOrder::BigFirst).unwrap();
    let mut st = SchedState::tracked(topo);
    for i in 0..3 {
        st.add_thread(ThreadInfo::new(ThreadId(i), ProgramId(0), 0, 2.0));
    }
    let mut k = CfsCore::new(&st);
    for t in 0..3 {
        k.thread_created(ThreadId(t));
    }
    let enqueue = |k: &mut CfsCore, st: &mut SchedState, t: u32, vr: i64| {
        st.set_state(ThreadId(t), RunState::Runnable);
        st.cores[0].rq.push(ThreadId(t));
        st.threads[t as usize].core = Some(CoreId(0));
        k.vr[t as usize] = vr;
        k.enqueued(st, CoreId(0), ThreadId(t), false, false);
    };
    // Threads 0 and 1 tie at vruntime 5: the earlier enqueued is leftmost.
    enqueue(&mut k, &mut st, 1, 5);
    enqueue(&mut k, &mut st, 0, 5);
    assert_eq!(k.leftmost(&st, CoreId(0)), Some(ThreadId(1)));
    // Thread 2 comes and goes 1,000 times with a large vruntime: its stale
    // entries sink below thread 1's and are dropped once they outnumber
    // the queue.
    for i in 0..1000 {
        enqueue(&mut k, &mut st, 2, 1_000_000 + i);
        st.cores[0].rq.retain(|&x| x != ThreadId(2));
        st.set_state(ThreadId(2), RunState::Running);
        st.threads[2].core = Some(CoreId(1));
        // At most twice the queue (3 during the enqueue) plus 64, plus the new entry.
        assert!(
            k.index_len(CoreId(0)) <= 2 * 3 + 65,
            "{}",
            k.index_len(CoreId(0))
        );
    }
    assert_eq!(k.leftmost(&st, CoreId(0)), Some(ThreadId(1)));
    // The leftmost leaves: the next one, without a scan.
    st.cores[0].rq.retain(|&x| x != ThreadId(1));
    st.set_state(ThreadId(1), RunState::Running);
    assert_eq!(k.leftmost(&st, CoreId(0)), Some(ThreadId(0)));
}

#[test]
fn cfs_debit_fifo_keeps_new_threads_in_arrival_order() {
    use crate::cfs::NewStart;
    // Core 0 runs thread 0 at vruntime 1 s; new threads 1 and then 2 join
    // its queue. START_DEBIT places each a slice behind min_vruntime, and
    // the slice shrinks as the queue grows, so thread 2 lands ahead of
    // thread 1; in arrival order it lands level with it (then behind it by
    // enqueue order), still within a period of min_vruntime.
    let place = |start: NewStart| {
        let mut st = state("2B2S", 3);
        let mut k = cfs_core(&st);
        k.tun.new_start = start;
        run_on(&mut st, 0, 0);
        k.vr[0] = 1000 * MS as i64;
        for t in [1, 2] {
            queue(&mut st, 0, t);
            k.enqueued(&st, CoreId(0), ThreadId(t), true, true);
        }
        (k.vr[1], k.vr[2], k.tun.latency_ns as i64)
    };
    let (v1, v2, _) = place(NewStart::Debit);
    assert!(v2 < v1, "{v1} {v2}");
    let (v1, v2, lat) = place(NewStart::DebitFifo);
    assert!(v2 >= v1, "{v1} {v2}");
    assert!(v2 - 1000 * MS as i64 <= lat, "{v2}");
}
