//! HSP and Prop-SP decisions on hand-built situations. Expected numbers are
//! worked out by hand from the paper's formulas in the comments.

use crate::propsp::*;
use crate::test_util::{created, queue, run_on, state_apps as state};
use crate::{by_name, Hsp, HspParams, PropSp, PropSpParams};
use colab_core::{
    Action, CoreId, Pick, Policy, ProgramId, RunState, SchedState, StopReason, ThreadId, WakeKind,
    NS_PER_MS,
};

const MS: u64 = NS_PER_MS;
const MSF: f64 = NS_PER_MS as f64;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-6 * b.abs().max(1.0)
}

fn credits_of(a: &Assignment, t: u32) -> f64 {
    a.credits
        .iter()
        .find(|c| c.0 == ThreadId(t))
        .map_or(0.0, |c| c.1)
}

fn propsp(dist: Distribution) -> PropSp {
    PropSp::new(PropSpParams {
        distribution: dist,
        ..PropSpParams::default()
    })
}

// ----- formulas -------------------------------------------------------------

#[test]
fn speedup_formulas_match_hand_values() {
    // SP_Even = MIN(NFC, N) / N x (SF - 1) + 1
    assert!(close(sp_even(3.0, 4, 2), 2.0)); // 2/4 x 2 + 1
    assert!(close(sp_even(2.5, 5, 2), 1.6)); // 2/5 x 1.5 + 1
    assert!(close(sp_even(3.0, 1, 2), 3.0)); // one thread: its SF
                                             // SP_BusyFCs = (SF - 1) / (floor((N - 1) / NFC) + 1)^2 + 1
    assert!(close(sp_busy_fcs(3.0, 4, 2), 1.5)); // k = 2: 2/4 + 1
    assert!(close(sp_busy_fcs(2.5, 5, 2), 1.0 + 1.5 / 9.0)); // k = 3
    assert!(close(sp_busy_fcs(3.0, 2, 2), 3.0)); // k = 1: the SF
}

#[test]
fn dynamic_weight_is_net_speedup_times_static_weight() {
    assert!(close(dynamic_weight(3.4, 1024.0), 2.4 * 1024.0));
    assert!(close(dynamic_weight(1.2, 1024.0), 0.2 * 1024.0));
    // A noisy SF below 1 gives no weight rather than a negative one.
    assert_eq!(dynamic_weight(0.9, 1024.0), 0.0);

    // Through the policy: single-threaded apps of workload W1 (Table 1).
    let mut st = state("2B2S", &[(0, 3.4), (1, 3.4), (2, 1.2), (3, 1.2)]);
    let mut p = propsp(Distribution::Even);
    created(&mut p, &st);
    for (c, t) in [(0, 0), (1, 1), (2, 2), (3, 3)] {
        run_on(&mut st, c, t);
    }
    let a = p.assign(&st).clone();
    let w: Vec<f64> = a.weights.iter().map(|w| w.1).collect();
    let want = [2457.6, 2457.6, 204.8, 204.8]; // (SF - 1) x 1024
    for (got, want) in w.iter().zip(want) {
        assert!(close(*got, want), "{w:?}");
    }
}

#[test]
fn credits_are_proportional_to_dynamic_weights() {
    let mut st = state("2B2S", &[(0, 3.4), (1, 3.4), (2, 1.2), (3, 1.2)]);
    let mut p = propsp(Distribution::Even);
    created(&mut p, &st);
    for (c, t) in [(0, 0), (1, 1), (2, 2), (3, 3)] {
        run_on(&mut st, c, t);
    }
    p.periodic(&st, &mut Vec::new());
    // 4 credited threads on 2 fast cores: period = 30 ms x ceil(4/2) = 60 ms.
    assert_eq!(p.period_ns(), Some(60 * MS));
    // 2 FCs x 60 ms = 120 ms of credits, split 2.4 : 2.4 : 0.2 : 0.2.
    let total = 120.0 * MSF;
    let want = [
        total * 2.4 / 5.2,
        total * 2.4 / 5.2,
        total * 0.2 / 5.2,
        total * 0.2 / 5.2,
    ];
    for (t, w) in want.iter().enumerate() {
        let got = p.credits(&st, ThreadId(t as u32));
        assert!(close(got, *w), "thread {t}: {got} vs {w}");
    }
    let sum: f64 = (0..4).map(|t| p.credits(&st, ThreadId(t))).sum();
    assert!(close(sum, total));
}

// ----- Even vs BusyFCs ------------------------------------------------------

/// App 0: five threads, mean SF 2.5; app 1: one thread, SF 2.0; 2B2S.
fn mixed_state() -> SchedState {
    let mut st = state(
        "2B2S",
        &[(0, 2.0), (0, 2.5), (0, 3.0), (0, 2.5), (0, 2.5), (1, 2.0)],
    );
    for (c, t) in [(0, 0), (1, 1), (2, 2), (3, 3)] {
        run_on(&mut st, c, t);
    }
    queue(&mut st, 0, 4);
    queue(&mut st, 1, 5);
    st
}

#[test]
fn even_distribution_follows_sp_even() {
    let st = mixed_state();
    let mut p = propsp(Distribution::Even);
    created(&mut p, &st);
    let a = p.assign(&st).clone();
    // SP_Even(app 0) = 2/5 x 1.5 + 1 = 1.6 -> weight 0.6 x 1024 = 614.4;
    // app 1 (one thread) = 2.0 -> 1024.
    assert!(close(a.weights[0].1, 614.4) && close(a.weights[1].1, 1024.0));
    // Reference credits: 60 ms x 0.6/1.6 = 22.5 ms and 60 x 1/1.6 = 37.5 ms.
    // Six credited threads on 2 FCs: period 30 x 3 = 90 ms, scale 3.
    assert_eq!(a.period_ns, 90 * MS);
    assert!(close(a.app_credits[0].1, 67.5 * MSF));
    assert!(close(a.app_credits[1].1, 112.5 * MSF));
    // Even: 67.5 / 5 = 13.5 ms for each of app 0's threads.
    for t in 0..5 {
        assert!(close(credits_of(&a, t), 13.5 * MSF), "thread {t}");
    }
    assert!(close(credits_of(&a, 5), 112.5 * MSF));
}

#[test]
fn busy_fcs_distribution_follows_sp_busy_fcs() {
    let st = mixed_state();
    let mut p = propsp(Distribution::BusyFcs);
    created(&mut p, &st);
    let a = p.assign(&st).clone();
    // SP_BusyFCs(app 0) = 1.5 / 3^2 + 1 = 7/6 -> weight 1024/6; app 1: 1024.
    assert!(close(a.weights[0].1, 1024.0 / 6.0) && close(a.weights[1].1, 1024.0));
    // Reference credits: 60 x (1/6)/(7/6) = 60/7 ms, 60 x 1/(7/6) = 360/7 ms.
    // One thread each can use them (ceil(60/7 / 30) = 1; app 1 has one
    // thread): 2 credited threads on 2 FCs, period = 30 ms, scale 1.
    assert_eq!(a.period_ns, 30 * MS);
    assert!(close(a.app_credits[0].1, 60.0 / 7.0 * MSF));
    // BusyFCs: the first runnable thread gets all of app 0's credits...
    assert!(close(credits_of(&a, 0), 60.0 / 7.0 * MSF));
    for t in 1..5 {
        assert_eq!(credits_of(&a, t), 0.0, "thread {t}");
    }
    // ... and a thread never gets more than one FC can consume in the period.
    assert!(close(credits_of(&a, 5), 30.0 * MSF));
}

#[test]
fn busy_fcs_fills_threads_one_fast_core_period_at_a_time() {
    // One app alone, 3 threads of SF 3 on 2B2S: it gets all 60 ms.
    let mut st = state("2B2S", &[(0, 3.0), (0, 3.0), (0, 3.0)]);
    for (c, t) in [(0, 0), (2, 1), (3, 2)] {
        run_on(&mut st, c, t);
    }
    let mut p = propsp(Distribution::BusyFcs);
    created(&mut p, &st);
    let a = p.assign(&st).clone();
    // ceil(60/30) = 2 credited threads -> period 30 ms; 30 + 30 + 0.
    assert_eq!(a.period_ns, 30 * MS);
    assert!(close(credits_of(&a, 0), 30.0 * MSF));
    assert!(close(credits_of(&a, 1), 30.0 * MSF));
    assert_eq!(credits_of(&a, 2), 0.0);
}

// ----- swaps ------------------------------------------------------------------

#[test]
fn thread_out_of_credits_swaps_with_credit_holder_on_slow_core() {
    // 1B3S: thread 0 (app 0) on the fast core, thread 1 (app 1) on a slow
    // core, equal SFs: 2 credited threads on 1 FC -> 60 ms period, 30 ms each.
    let mut st = state("1B3S", &[(0, 3.0), (1, 3.0)]);
    let mut p = propsp(Distribution::Even);
    created(&mut p, &st);
    run_on(&mut st, 0, 0);
    run_on(&mut st, 1, 1);
    p.periodic(&st, &mut Vec::new());
    assert!(close(p.credits(&st, ThreadId(0)), 30.0 * MSF));

    // After 20 ms it still has 10 ms left: it keeps the fast core.
    st.now = 20 * MS;
    let mut out = Vec::new();
    assert!(!p.tick(&st, CoreId(0), &mut out));
    assert!(out.is_empty(), "{out:?}");
    assert!(close(p.credits(&st, ThreadId(0)), 10.0 * MSF));

    // After 32 ms it is 2 ms overdrawn: the two threads trade cores.
    st.now = 32 * MS;
    let mut out = Vec::new();
    p.tick(&st, CoreId(0), &mut out);
    assert_eq!(
        out,
        vec![
            Action::Migrate {
                thread: ThreadId(1),
                to: CoreId(0)
            },
            Action::Migrate {
                thread: ThreadId(0),
                to: CoreId(1)
            },
        ]
    );
    // Time on the slow core costs no credits; time on the fast core does.
    p.stopped(&st, CoreId(1), ThreadId(1), 32 * MS, StopReason::Preempted);
    assert!(close(p.credits(&st, ThreadId(1)), 30.0 * MSF));
    p.stopped(&st, CoreId(0), ThreadId(0), 32 * MS, StopReason::Preempted);
    st.cores[0].current = None;
    queue(&mut st, 1, 0);
    assert!(close(p.credits(&st, ThreadId(0)), -2.0 * MSF));
}

#[test]
fn no_swap_without_a_credit_holder_waiting() {
    // Thread 1 (SF below 1: weight 0) has no credits to claim the core with.
    let mut st = state("1B3S", &[(0, 3.0), (1, 0.95)]);
    let mut p = propsp(Distribution::Even);
    created(&mut p, &st);
    run_on(&mut st, 0, 0);
    run_on(&mut st, 1, 1);
    p.periodic(&st, &mut Vec::new());
    assert_eq!(p.credits(&st, ThreadId(1)), 0.0);
    st.now = 100 * MS; // far past thread 0's credits
    let mut out = Vec::new();
    p.tick(&st, CoreId(0), &mut out);
    assert!(out.is_empty(), "{out:?}");
}

#[test]
fn two_fast_cores_do_not_claim_the_same_partner() {
    // 2B2S: both fast cores run spent threads, one credit holder is waiting.
    let mut st = state("2B2S", &[(0, 1.0), (1, 1.0), (2, 3.0)]);
    let mut p = propsp(Distribution::Even);
    created(&mut p, &st);
    run_on(&mut st, 0, 0);
    run_on(&mut st, 1, 1);
    run_on(&mut st, 2, 2);
    p.periodic(&st, &mut Vec::new());
    st.now = 4 * MS;
    let mut out = Vec::new();
    p.tick(&st, CoreId(0), &mut out);
    p.tick(&st, CoreId(1), &mut out);
    let moves_of_2 = out
        .iter()
        .filter(|a| matches!(a, Action::Migrate { thread, .. } if *thread == ThreadId(2)))
        .count();
    assert_eq!(moves_of_2, 1, "{out:?}");
}

#[test]
fn fast_core_prefers_credit_holders() {
    // 2B2S: thread 0 (no credits) runs on fast core 0, thread 1 (credits) is
    // queued behind it with a larger vruntime.
    let mut st = state("2B2S", &[(0, 1.0), (1, 3.0), (0, 1.0), (0, 1.0)]);
    let mut p = propsp(Distribution::Even);
    created(&mut p, &st);
    run_on(&mut st, 0, 0);
    queue(&mut st, 0, 1);
    queue(&mut st, 0, 2);
    p.periodic(&st, &mut Vec::new());
    p.stopped(&st, CoreId(2), ThreadId(1), 50 * MS, StopReason::Preempted);
    st.now = 4 * MS;
    // The tick hands the core over at once...
    assert!(p.tick(&st, CoreId(0), &mut Vec::new()));
    // ...and pick_next takes the credit holder, not CFS's leftmost (thread 2).
    st.cores[0].current = None;
    queue(&mut st, 0, 0);
    assert_eq!(p.pick_next(&st, CoreId(0)), Pick::Local(ThreadId(1)));
    // A slow core just runs CFS's leftmost.
    st.cores[0].rq.clear();
    for t in [0, 1, 2] {
        queue(&mut st, 2, t);
    }
    assert_eq!(p.pick_next(&st, CoreId(2)), Pick::Local(ThreadId(0)));
}

#[test]
fn credit_holder_preempts_on_fast_core_but_not_the_reverse() {
    let mut st = state("2B2S", &[(0, 1.0), (1, 3.0)]);
    let mut p = propsp(Distribution::Even);
    created(&mut p, &st);
    run_on(&mut st, 0, 0);
    queue(&mut st, 2, 1);
    p.periodic(&st, &mut Vec::new());
    // Thread 1 has credits, thread 0 none; give thread 1 the worse vruntime.
    p.stopped(&st, CoreId(2), ThreadId(1), 50 * MS, StopReason::Preempted);
    st.cores[2].rq.clear();
    queue(&mut st, 0, 1);
    assert!(p.should_preempt(&st, CoreId(0), ThreadId(1)));
    // Swap roles: the holder runs, the spent thread wakes with a tiny vruntime.
    let mut st2 = state("2B2S", &[(0, 1.0), (1, 3.0)]);
    let mut q = propsp(Distribution::Even);
    created(&mut q, &st2);
    run_on(&mut st2, 0, 1);
    queue(&mut st2, 2, 0);
    q.periodic(&st2, &mut Vec::new());
    q.stopped(&st2, CoreId(2), ThreadId(1), 50 * MS, StopReason::Preempted);
    st2.cores[2].rq.clear();
    queue(&mut st2, 0, 0);
    assert!(!q.should_preempt(&st2, CoreId(0), ThreadId(0)));
}

#[test]
fn placement_sends_credit_holders_to_fast_cores() {
    let mut st = state("2B2S", &[(0, 3.0), (1, 1.0), (2, 3.0)]);
    let mut p = propsp(Distribution::Even);
    created(&mut p, &st);
    run_on(&mut st, 1, 2); // keep app 2 runnable
    st.threads[0].state = RunState::Runnable; // seen as runnable at assignment
    p.periodic(&st, &mut Vec::new());
    st.threads[0].state = RunState::Blocked(colab_core::BlockKind::Sleep);
    let wake = WakeKind::wakeup(None);
    // Thread 0 (credits) -> the idle fast core 0; thread 1 (none) -> slow core 2.
    assert_eq!(p.select_core(&st, ThreadId(0), wake), CoreId(0));
    assert_eq!(p.select_core(&st, ThreadId(1), wake), CoreId(2));
}

#[test]
fn idle_fast_core_takes_credit_holder_then_any_thread_from_slow_cores() {
    let mut st = state("2B2S", &[(0, 1.0), (1, 3.0)]);
    let mut p = propsp(Distribution::Even);
    created(&mut p, &st);
    run_on(&mut st, 2, 0);
    run_on(&mut st, 3, 1);
    p.periodic(&st, &mut Vec::new());
    // The credit holder (thread 1) is taken first, though thread 0 is on a lower core.
    assert_eq!(
        p.pick_next(&st, CoreId(0)),
        Pick::PreemptRemote {
            from: CoreId(3),
            thread: ThreadId(1)
        }
    );
    // Without credit holders, an idle fast core still takes work (work conservation).
    st.cores[3].current = None;
    st.threads[1].state = RunState::Exited;
    assert_eq!(
        p.pick_next(&st, CoreId(0)),
        Pick::PreemptRemote {
            from: CoreId(2),
            thread: ThreadId(0)
        }
    );
}

// ----- static vs dynamic SF -----------------------------------------------

#[test]
fn static_and_dynamic_variants_differ_when_sf_changes() {
    let mut st = state("1B3S", &[(0, 3.0), (1, 2.0)]);
    let mut dynamic = PropSp::new(PropSpParams::default());
    let mut fixed = PropSp::new(PropSpParams {
        sf: SfSource::Static,
        ..PropSpParams::default()
    });
    created(&mut dynamic, &st);
    created(&mut fixed, &st);
    run_on(&mut st, 0, 0);
    run_on(&mut st, 1, 1);
    // Thread 0's estimate drops from 3.0 to 1.5 after creation.
    st.threads[0].predicted_speedup = 1.5;
    dynamic.periodic(&st, &mut Vec::new());
    fixed.periodic(&st, &mut Vec::new());
    // Period 60 ms on one FC. Dynamic: weights 0.5 : 1 -> 20 ms, 40 ms.
    assert!(close(dynamic.credits(&st, ThreadId(0)), 20.0 * MSF));
    assert!(close(dynamic.credits(&st, ThreadId(1)), 40.0 * MSF));
    // Static keeps SF 3.0: weights 2 : 1 -> 40 ms, 20 ms.
    assert!(close(fixed.credits(&st, ThreadId(0)), 40.0 * MSF));
    assert!(close(fixed.credits(&st, ThreadId(1)), 20.0 * MSF));
}

// ----- HSP --------------------------------------------------------------------

#[test]
fn hsp_gives_fast_cores_to_highest_speedup_applications() {
    // 2B2S, W-style single-threaded apps: app 1 (3.0) and app 2 (2.5) should
    // hold the two fast cores; app 0 (1.5) is on fast core 0 now.
    let mut st = state("2B2S", &[(0, 1.5), (1, 3.0), (2, 2.5), (3, 1.2)]);
    let mut p = Hsp::new(HspParams::default());
    created(&mut p, &st);
    run_on(&mut st, 0, 0);
    run_on(&mut st, 2, 1);
    run_on(&mut st, 1, 2);
    run_on(&mut st, 3, 3);
    p.periodic(&st, &mut Vec::new());
    assert_eq!(p.chosen(), &[ProgramId(1), ProgramId(2)]);
    st.now = 4 * MS;
    let mut out = Vec::new();
    p.tick(&st, CoreId(0), &mut out);
    assert_eq!(
        out,
        vec![
            Action::Migrate {
                thread: ThreadId(1),
                to: CoreId(0)
            },
            Action::Migrate {
                thread: ThreadId(0),
                to: CoreId(2)
            },
        ]
    );
    // App 2's thread keeps fast core 1 however long it runs.
    st.now = 10_000 * MS;
    let mut out = Vec::new();
    assert!(!p.tick(&st, CoreId(1), &mut out));
    assert!(out.is_empty(), "{out:?}");
}

/// A thread without credits queued on a fast core behind a running credit
/// holder is never picked there while holders keep the core (under HSP, for
/// ever): the fast core's tick sends it to the least loaded slow core.
#[test]
fn hsp_sends_a_queued_thread_without_credits_to_the_slow_cores() {
    // 1B3S: app 1 (3.0) is chosen and runs on fast core 0; app 0's thread 0
    // (1.5) is queued behind it; slow cores 1 and 3 run a thread each,
    // slow core 2 two.
    let mut st = state(
        "1B3S",
        &[(0, 1.5), (1, 3.0), (2, 1.2), (3, 1.2), (3, 1.2), (2, 1.2)],
    );
    let mut p = Hsp::new(HspParams::default());
    created(&mut p, &st);
    run_on(&mut st, 0, 1);
    queue(&mut st, 0, 0);
    run_on(&mut st, 1, 2);
    run_on(&mut st, 2, 3);
    queue(&mut st, 2, 4);
    run_on(&mut st, 3, 5);
    p.periodic(&st, &mut Vec::new());
    assert_eq!(p.chosen(), &[ProgramId(1)]);
    st.now = 4 * MS;
    let mut out = Vec::new();
    assert!(!p.tick(&st, CoreId(0), &mut out));
    assert_eq!(
        out,
        vec![Action::Migrate {
            thread: ThreadId(0),
            to: CoreId(1)
        }]
    );
    // A queued credit holder stays: it time-shares the fast core.
    let mut st = state("1B3S", &[(1, 3.0), (1, 3.0), (2, 1.2), (2, 1.2), (2, 1.2)]);
    let mut p = Hsp::new(HspParams::default());
    created(&mut p, &st);
    run_on(&mut st, 0, 0);
    queue(&mut st, 0, 1);
    for c in 1..4 {
        run_on(&mut st, c, c as u32 + 1);
    }
    p.periodic(&st, &mut Vec::new());
    st.now = 4 * MS;
    let mut out = Vec::new();
    p.tick(&st, CoreId(0), &mut out);
    assert!(out.is_empty(), "{out:?}");
}

#[test]
fn hsp_ranks_by_application_wide_speedup_not_thread_sf() {
    // 1B3S: app 0 has three threads of SF 3.0 (SP_Even = 1/3 x 2 + 1 = 1.67),
    // app 1 one thread of SF 2.0 (SP = 2.0): app 1 gets the fast core.
    let mut st = state("1B3S", &[(0, 3.0), (0, 3.0), (0, 3.0), (1, 2.0)]);
    let mut p = Hsp::new(HspParams::default());
    created(&mut p, &st);
    for (c, t) in [(0, 0), (1, 1), (2, 2), (3, 3)] {
        run_on(&mut st, c, t);
    }
    p.periodic(&st, &mut Vec::new());
    assert_eq!(p.chosen(), &[ProgramId(1)]);
}

#[test]
fn symmetric_machine_makes_them_plain_cfs() {
    let mut st = state("4B", &[(0, 1.0), (1, 3.0)]);
    let mut p = propsp(Distribution::Even);
    created(&mut p, &st);
    run_on(&mut st, 0, 0);
    queue(&mut st, 0, 1);
    p.periodic(&st, &mut Vec::new());
    p.stopped(&st, CoreId(1), ThreadId(1), 50 * MS, StopReason::Preempted);
    // On an asymmetric machine the credit holder would preempt thread 0 at
    // once; here CFS decides, and thread 1's larger vruntime loses.
    st.now = 40 * MS;
    assert!(!p.should_preempt(&st, CoreId(0), ThreadId(1)));
    // Nor does the tick hand the core over for credits.
    assert!(!p.tick(&st, CoreId(0), &mut Vec::new()));
}

#[test]
fn registered_by_name() {
    for n in ["hsp", "propsp", "propsp-static"] {
        assert_eq!(by_name(n).unwrap().name(), n);
        assert!(crate::POLICIES.iter().any(|p| p.0 == n));
    }
}
