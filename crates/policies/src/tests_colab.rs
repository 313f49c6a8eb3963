//! COLAB's mechanism switches (and the CFS charge they rely on) on
//! hand-built situations. 2B2S big cores first: cores 0 and 1 big, 2 and 3
//! little.

use crate::test_util::*;
use crate::{Colab, ColabParams};
use colab_core::{
    Action, CoreId, Pick, Policy, RunState, SchedState, StopReason, ThreadId, NS_PER_MS, NS_PER_US,
};

const MS: u64 = NS_PER_MS;
const US: u64 = NS_PER_US;

fn colab(st: &SchedState, opts: &str) -> Colab {
    let mut params = ColabParams::default();
    params.parse_options(opts).unwrap();
    let mut p = Colab::new(params);
    created(&mut p, st);
    p
}

#[test]
fn colab_keeps_linuxs_periodic_balancer() {
    // The papers override only the task selector and the core allocator
    // (colab-tpds 5.3): the tick's load balancing stays. Little core 2
    // runs one thread with two queued, little core 3 runs one: the tick of
    // the cluster's first core moves a queued thread to the shorter queue.
    let mut st = state("2B2S", 4);
    run_on(&mut st, 2, 0);
    queue(&mut st, 2, 1);
    queue(&mut st, 2, 2);
    run_on(&mut st, 3, 3);
    let mut p = colab(&st, "");
    let mut out = Vec::new();
    p.tick(&st, CoreId(2), &mut out);
    assert!(
        matches!(out.as_slice(), [Action::Migrate { to: CoreId(3), .. }]),
        "{out:?}"
    );
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
