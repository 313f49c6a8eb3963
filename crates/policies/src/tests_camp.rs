//! CAMP, PA, SFD and RR (camp-tocs12) on hand-built situations, plus
//! simulator runs on built-in workloads.

use crate::camp::{MonitorParams, SfMonitor, Thresholds, UfForm};
use crate::test_util::{queue, run_on, state_apps as state, state_on};
use crate::{uf_analytical, uf_approx, Camp, CampParams, UtilityClass, Variant};
use colab_core::{
    Action, CoreId, CoreOrder, CoreType, Costs, Pick, Policy, RunState, SchedState, StopReason,
    ThreadId, Topology, WakeKind, NS_PER_MS,
};
use UtilityClass::*;

const MS: u64 = NS_PER_MS;

fn set_state(st: &mut SchedState, t: u32, s: RunState) {
    st.threads[t as usize].state = s;
}

fn new_policy(v: Variant, st: &SchedState) -> Camp {
    let mut p = Camp::new(v, CampParams::default());
    for t in 0..st.threads.len() {
        p.thread_created(st, ThreadId(t as u32));
    }
    p
}

fn class(p: &Camp, st: &SchedState, t: u32) -> Option<UtilityClass> {
    p.utility_class(st, ThreadId(t))
}

fn migrate(t: u32, to: u16) -> Action {
    Action::Migrate {
        thread: ThreadId(t),
        to: CoreId(to),
    }
}

fn tick_at(p: &mut Camp, st: &mut SchedState, now: u64, c: u16) -> (bool, Vec<Action>) {
    st.now = now;
    let mut out = Vec::new();
    let pre = p.tick(st, CoreId(c), &mut out);
    (pre, out)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-6
}

/// SF of the reference 2B2S machine: 1 / (0.6 * 0.53) on core-bound code.
const SF_MAX_2B2S: f64 = 1.0 / (0.6 * 0.53);

// ----- utility factor ---------------------------------------------------------

#[test]
fn uf_analytical_matches_hand_computed_values() {
    // SF 2, 4 threads, 2 fast cores: exponent floor(3/2) = 1,
    // denominator (1 - 1/2) * (1 - 2) + 2 = 1.5, UF = 2 / 1.5.
    assert!(close(uf_analytical(2.0, 4, 2), 4.0 / 3.0));
    // SF 1.8, 8 threads, 2 fast cores (the paper's Fig. 8a setting):
    // exponent 3, (4/9)^3 = 64/729, denominator 64/729 * (-0.8) + 1.8.
    let want = 1.8 / (64.0 / 729.0 * -0.8 + 1.8);
    assert!(close(uf_analytical(1.8, 8, 2), want));
    assert!(close(want, 1.040_602_2), "{want}");
    // SF 3, 7 threads, 2 fast cores: (2/3)^3 * (-2) + 3 = 65/27.
    assert!(close(uf_analytical(3.0, 7, 2), 3.0 * 27.0 / 65.0));
    // No more threads than fast cores: the application gets its full SF.
    assert!(close(uf_analytical(2.5, 1, 2), 2.5));
    assert!(close(uf_analytical(2.5, 2, 2), 2.5));
    // Exponent is the floor of eq. (1), not the ceiling printed in eq. (10):
    // with the ceiling, 3 threads on 2 fast cores would give 2/1.75.
    assert!(close(uf_analytical(2.0, 3, 2), 2.0 / 1.5));
    // No fast cores, or SF 1: no speedup.
    assert!(close(uf_analytical(2.0, 4, 0), 1.0));
    assert!(close(uf_analytical(1.0, 9, 2), 1.0));
}

#[test]
fn uf_approx_matches_hand_computed_values() {
    // (SF - 1) / (floor((N - 1) / N_FC) + 1)^k + 1
    assert!(close(uf_approx(1.8, 8, 2, 2), 0.8 / 16.0 + 1.0));
    assert!(close(uf_approx(2.0, 4, 2, 2), 1.25));
    assert!(close(uf_approx(2.0, 4, 2, 1), 1.5));
    assert!(close(uf_approx(3.0, 5, 1, 2), 2.0 / 25.0 + 1.0));
    assert!(close(uf_approx(2.0, 1, 4, 2), 2.0));
    assert!(close(uf_approx(2.0, 4, 4, 2), 2.0));
    assert!(close(uf_approx(2.0, 4, 0, 2), 1.0));
    // k = 2 tracks the analytical form closely at the paper's Fig. 8a point.
    let err = (uf_approx(1.8, 8, 2, 2) - uf_analytical(1.8, 8, 2)).abs();
    assert!(err < 0.02, "{err}");
}

#[test]
fn utility_classes_change_at_the_thresholds() {
    let cuts = Thresholds::default().cuts(3.0);
    // Gain range 2: upper 1 + 4/3, medium 1 + 2/3, lower 1.2.
    assert!(close(cuts.upper, 7.0 / 3.0));
    assert!(close(cuts.medium, 5.0 / 3.0));
    assert!(close(cuts.lower, 1.2));
    let e = 1e-9;
    assert_eq!(cuts.classify(cuts.upper), High);
    assert_eq!(cuts.classify(cuts.upper - e), Medium);
    assert_eq!(cuts.classify(cuts.medium), Medium);
    assert_eq!(cuts.classify(cuts.medium - e), Low);
    assert_eq!(cuts.classify(cuts.lower), Low);
    assert_eq!(cuts.classify(cuts.lower - e), VeryLow);
    assert_eq!(cuts.classify(1.0), VeryLow);
}

#[test]
fn camp_classes_follow_sf_and_runnable_threads() {
    // Program 0: one thread; program 1: eight threads; all with SF 3.0.
    let mut th = vec![(0u16, 3.0)];
    th.extend(std::iter::repeat_n((1u16, 3.0), 8));
    let mut st = state("2B2S", &th);
    let mut p = new_policy(Variant::Camp, &st);
    for t in 0..9 {
        p.seed_sf(ThreadId(t), 3.0);
    }
    assert!(close(p.sf_max(), SF_MAX_2B2S));
    // Single thread: UF = SF = 3.0 >= upper (1 + 2/3 * 2.14 = 2.43).
    assert_eq!(class(&p, &st, 0), Some(High));
    // Eight runnable threads: UF = 1 + 2/16 = 1.125 < lower (1.21).
    for t in 1..9 {
        queue(&mut st, 2 + (t % 2) as u16, t);
    }
    assert_eq!(class(&p, &st, 1), Some(VeryLow));
    // Four runnable (the others blocked): UF = 1 + 2/4 = 1.5: LOW.
    for t in 5..9 {
        set_state(
            &mut st,
            t,
            RunState::Blocked(colab_core::BlockKind::Barrier),
        );
    }
    assert_eq!(class(&p, &st, 1), Some(Low));
    // Two runnable on two fast cores: UF = SF.
    for t in 3..5 {
        set_state(
            &mut st,
            t,
            RunState::Blocked(colab_core::BlockKind::Barrier),
        );
    }
    assert_eq!(class(&p, &st, 1), Some(High));
    // A medium SF for a single thread.
    p.seed_sf(ThreadId(0), 2.0);
    assert_eq!(class(&p, &st, 0), Some(Medium));
}

#[test]
fn analytical_form_can_drive_classification() {
    // 4 runnable threads of SF 3.0 on 2 fast cores: approx UF 1.5 (LOW),
    // analytical UF 3 / ((2/3) * (-2) + 3) = 1.8 (MEDIUM: >= 1.71).
    let mut st = state("2B2S", &[(0, 3.0), (0, 3.0), (0, 3.0), (0, 3.0)]);
    for t in 0..4 {
        queue(&mut st, 2, t);
    }
    let mut approx = new_policy(Variant::Camp, &st);
    let params = CampParams {
        uf_form: UfForm::Analytical,
        ..CampParams::default()
    };
    let mut analytical = Camp::new(Variant::Camp, params);
    for t in 0..4 {
        analytical.thread_created(&st, ThreadId(t));
        approx.seed_sf(ThreadId(t), 3.0);
        analytical.seed_sf(ThreadId(t), 3.0);
    }
    assert_eq!(class(&approx, &st, 0), Some(Low));
    assert_eq!(class(&analytical, &st, 0), Some(Medium));
}

// ----- sequential phases ---------------------------------------------------------

/// 2B2S: program 0 is parallel (main thread 0, workers 1 and 2 exited), its
/// main thread runs alone on slow core 2; single-threaded HIGH programs 1
/// and 2 (threads 3, 4) hold the fast cores.
fn serial_phase(v: Variant, main_sf: f64) -> (Camp, SchedState) {
    let mut st = state(
        "2B2S",
        &[(0, main_sf), (0, main_sf), (0, main_sf), (1, 3.0), (2, 3.0)],
    );
    let mut p = new_policy(v, &st);
    for (t, sf) in [(0, main_sf), (1, main_sf), (2, main_sf), (3, 3.0), (4, 3.0)] {
        p.seed_sf(ThreadId(t), sf);
    }
    set_state(&mut st, 1, RunState::Exited);
    set_state(&mut st, 2, RunState::Exited);
    run_on(&mut st, 0, 3);
    run_on(&mut st, 1, 4);
    run_on(&mut st, 2, 0);
    (p, st)
}

#[test]
fn camp_boosts_a_high_sf_serial_phase_onto_a_fast_core() {
    let (mut p, mut st) = serial_phase(Variant::Camp, 3.0);
    assert_eq!(class(&p, &st, 0), Some(SequentialBoosted));
    assert_eq!(class(&p, &st, 3), Some(High));
    // The balancer swaps it with the HIGH thread on fast core 0 (lowest
    // class, lowest number): that thread takes the serial thread's slow core.
    let (_, out) = tick_at(&mut p, &mut st, 4 * MS, 2);
    assert_eq!(out, vec![migrate(3, 2), migrate(0, 0)]);
    // A waking boosted thread goes straight to a fast core and preempts.
    let (mut p, mut st) = serial_phase(Variant::Camp, 3.0);
    set_state(&mut st, 0, RunState::Blocked(colab_core::BlockKind::Join));
    st.cores[2].current = None;
    let c = p.select_core(&st, ThreadId(0), WakeKind::wakeup(None));
    assert!(st.topo.is_big(c), "{c}");
    queue(&mut st, c.0, 0);
    assert!(p.should_preempt(&st, c, ThreadId(0)));
}

#[test]
fn camp_demotes_a_serial_thread_after_amp_boost_ticks() {
    let (mut p, mut st) = serial_phase(Variant::Camp, 3.0);
    // 0.5 s of 4 ms ticks.
    assert_eq!(p.boost_ticks(), 125);
    // It runs on fast core 0 now, the displaced HIGH thread on slow core 2.
    st.cores[2].current = None;
    run_on(&mut st, 0, 0);
    run_on(&mut st, 2, 3);
    for i in 1..125u64 {
        tick_at(&mut p, &mut st, i * 4 * MS, 0);
        assert_eq!(class(&p, &st, 0), Some(SequentialBoosted), "tick {i}");
    }
    let (_, out) = tick_at(&mut p, &mut st, 125 * 4 * MS, 0);
    assert_eq!(class(&p, &st, 0), Some(High));
    // Back in its regular class it does not displace or get displaced: HIGH
    // threads only rotate at the round-robin period.
    assert!(
        !out.iter().any(|a| matches!(a, Action::Migrate { .. })),
        "{out:?}"
    );
    // A new sequential phase (after a parallel one) gets a fresh budget.
    queue(&mut st, 3, 1);
    p.enqueued(&st, CoreId(3), ThreadId(1), true);
    assert_eq!(class(&p, &st, 0), Some(High));
    set_state(
        &mut st,
        1,
        RunState::Blocked(colab_core::BlockKind::Barrier),
    );
    st.cores[3].rq.clear();
    p.stopped(&st, CoreId(3), ThreadId(1), 0, StopReason::Blocked);
    assert_eq!(class(&p, &st, 0), Some(SequentialBoosted));
}

#[test]
fn camp_does_not_boost_a_low_sf_serial_phase_but_pa_does() {
    // SF 2.0: MEDIUM as a single thread, so not boosted under CAMP.
    let (p, st) = serial_phase(Variant::Camp, 2.0);
    assert_eq!(class(&p, &st, 0), Some(Medium));
    let (mut p, mut st) = serial_phase(Variant::Camp, 2.0);
    let (_, out) = tick_at(&mut p, &mut st, 4 * MS, 2);
    assert!(out.is_empty(), "{out:?}");
    // PA ignores SFs: every serial phase is boosted and displaces a HIGH thread.
    let (mut p, mut st) = serial_phase(Variant::Pa, 1.2);
    assert_eq!(class(&p, &st, 0), Some(SequentialBoosted));
    let (_, out) = tick_at(&mut p, &mut st, 4 * MS, 2);
    assert_eq!(out, vec![migrate(3, 2), migrate(0, 0)]);
}

#[test]
fn a_single_threaded_application_is_never_boosted() {
    let mut st = state("2B2S", &[(0, 3.0)]);
    let mut p = new_policy(Variant::Camp, &st);
    p.seed_sf(ThreadId(0), 3.0);
    run_on(&mut st, 2, 0);
    assert_eq!(class(&p, &st, 0), Some(High));
    let mut pa = new_policy(Variant::Pa, &st);
    assert_eq!(class(&pa, &st, 0), Some(High));
    let (_, _) = tick_at(&mut pa, &mut st, 4 * MS, 2);
    assert_eq!(class(&pa, &st, 0), Some(High));
}

// ----- fast-core sharing ---------------------------------------------------------

/// 2B2S, four single-threaded programs with SF `sf`, threads 0 and 1 on the
/// fast cores since t = 0, 2 and 3 on the slow cores.
fn four_singles(v: Variant, sf: f64) -> (Camp, SchedState) {
    let mut st = state("2B2S", &[(0, sf), (1, sf), (2, sf), (3, sf)]);
    let mut p = new_policy(v, &st);
    for t in 0..4 {
        p.seed_sf(ThreadId(t), sf);
        run_on(&mut st, t as u16, t);
    }
    (p, st)
}

#[test]
fn high_threads_share_fast_cores_round_robin() {
    let (mut p, mut st) = four_singles(Variant::Camp, 3.0);
    // Before the 2 s period: nothing moves.
    let (_, out) = tick_at(&mut p, &mut st, 1_000 * MS, 0);
    assert!(out.is_empty(), "{out:?}");
    // At 2 s the two waiting HIGH threads (no fast-core time) take the fast
    // cores, and the ones that had them take their slow cores.
    let (_, out) = tick_at(&mut p, &mut st, 2_000 * MS, 0);
    assert_eq!(
        out,
        vec![migrate(0, 2), migrate(2, 0), migrate(1, 3), migrate(3, 1)]
    );
    // Next round: whoever had less fast-core time goes first. Thread 0 had
    // 2 s on a fast core, thread 1 too, threads 2 and 3 now run there.
    st.now = 2_000 * MS;
    for (c, t) in [(0, 2), (1, 3), (2, 0), (3, 1)] {
        p.stopped(&st, CoreId(t as u16), ThreadId(t), 0, StopReason::Preempted);
        run_on(&mut st, c, t);
    }
    let (_, out) = tick_at(&mut p, &mut st, 3_000 * MS, 0);
    assert!(out.is_empty(), "{out:?}");
    let (_, out) = tick_at(&mut p, &mut st, 4_000 * MS, 0);
    assert_eq!(
        out,
        vec![migrate(2, 2), migrate(0, 0), migrate(3, 3), migrate(1, 1)]
    );
}

#[test]
fn rotation_serves_the_high_thread_with_least_fast_time() {
    // Three HIGH single-threaded programs, two fast cores: 0 and 1 start on
    // them, 2 waits on slow core 2.
    let mut st = state("2B2S", &[(0, 3.0), (1, 3.0), (2, 3.0)]);
    let mut p = new_policy(Variant::Camp, &st);
    for t in 0..3 {
        p.seed_sf(ThreadId(t), 3.0);
        run_on(&mut st, t as u16, t);
    }
    // At 2 s both fast threads had 2 s there; thread 2 takes core 0's place.
    let (_, out) = tick_at(&mut p, &mut st, 2_000 * MS, 0);
    assert_eq!(out, vec![migrate(0, 2), migrate(2, 0)]);
    st.now = 2_000 * MS;
    p.stopped(
        &st,
        CoreId(0),
        ThreadId(0),
        2_000 * MS,
        StopReason::Preempted,
    );
    run_on(&mut st, 2, 0);
    run_on(&mut st, 0, 2);
    // At 4 s thread 1 has had 4 s, thread 2 2 s and thread 0 2 s: thread 0
    // takes thread 1's core, not thread 2's.
    let (_, out) = tick_at(&mut p, &mut st, 4_000 * MS, 0);
    assert_eq!(out, vec![migrate(1, 2), migrate(0, 1)]);
    // A waiting thread with more fast time than every fast one stays put.
    let mut st = state("2B2S", &[(0, 3.0), (1, 3.0), (2, 3.0)]);
    let mut p = new_policy(Variant::Camp, &st);
    for t in 0..3 {
        p.seed_sf(ThreadId(t), 3.0);
    }
    run_on(&mut st, 0, 2);
    st.now = 1_000 * MS;
    p.stopped(
        &st,
        CoreId(0),
        ThreadId(2),
        1_000 * MS,
        StopReason::Preempted,
    );
    run_on(&mut st, 2, 2);
    run_on(&mut st, 0, 0);
    run_on(&mut st, 1, 1);
    let (_, out) = tick_at(&mut p, &mut st, 2_000 * MS, 0);
    assert!(out.is_empty(), "{out:?}");
}

#[test]
fn medium_threads_keep_their_fast_cores() {
    // SF 2.0: MEDIUM. BusyFCs, no fair sharing.
    let (mut p, mut st) = four_singles(Variant::Camp, 2.0);
    assert_eq!(class(&p, &st, 0), Some(Medium));
    let (_, out) = tick_at(&mut p, &mut st, 2_000 * MS, 0);
    assert!(out.is_empty(), "{out:?}");
}

#[test]
fn higher_class_displaces_lower_on_a_fast_core() {
    // Fast cores run MEDIUM (SF 2.0) and LOW (SF 1.3) threads; a HIGH one
    // (SF 3.0) waits on slow core 2: it takes the LOW thread's core.
    let mut st = state("2B2S", &[(0, 2.0), (1, 1.3), (2, 3.0)]);
    let mut p = new_policy(Variant::Camp, &st);
    for (t, sf) in [(0, 2.0), (1, 1.3), (2, 3.0)] {
        p.seed_sf(ThreadId(t), sf);
    }
    run_on(&mut st, 0, 0);
    run_on(&mut st, 1, 1);
    run_on(&mut st, 2, 2);
    assert_eq!(class(&p, &st, 1), Some(Low));
    let (_, out) = tick_at(&mut p, &mut st, 4 * MS, 2);
    assert_eq!(out, vec![migrate(1, 2), migrate(2, 1)]);
    // Waking instead, it is placed on that core and preempts.
    st.now = 0;
    set_state(&mut st, 2, RunState::Blocked(colab_core::BlockKind::Sleep));
    st.cores[2].current = None;
    let c = p.select_core(&st, ThreadId(2), WakeKind::wakeup(None));
    assert_eq!(c, CoreId(1));
    queue(&mut st, 1, 2);
    assert!(p.should_preempt(&st, CoreId(1), ThreadId(2)));
    // The preempted LOW thread is then sent to a slow core.
    st.cores[1].rq.clear();
    run_on(&mut st, 1, 2);
    queue(&mut st, 1, 1);
    let (_, out) = tick_at(&mut p, &mut st, 8 * MS, 0);
    assert_eq!(out, vec![migrate(1, 2)]);
    // A waking LOW thread does not displace MEDIUM or HIGH: slow core.
    set_state(&mut st, 1, RunState::Blocked(colab_core::BlockKind::Sleep));
    st.cores[1].rq.clear();
    let c = p.select_core(&st, ThreadId(1), WakeKind::wakeup(None));
    assert!(st.topo.is_little(c), "{c}");
}

#[test]
fn idle_fast_core_takes_the_best_thread_busyfcs() {
    // Fast core 0 idle; core 1 runs a HIGH thread; slow core 2 runs a
    // MEDIUM thread, slow core 3 a LOW one with a warming thread queued.
    let mut st = state("2B2S", &[(0, 3.0), (1, 2.0), (2, 1.3), (3, 3.0)]);
    let mut p = new_policy(Variant::Camp, &st);
    for (t, sf) in [(0, 3.0), (1, 2.0), (2, 1.3)] {
        p.seed_sf(ThreadId(t), sf);
    }
    run_on(&mut st, 1, 0);
    run_on(&mut st, 2, 1);
    run_on(&mut st, 3, 2);
    queue(&mut st, 3, 3);
    assert_eq!(class(&p, &st, 3), None);
    assert_eq!(
        p.pick_next(&st, CoreId(0)),
        Pick::PreemptRemote {
            from: CoreId(2),
            thread: ThreadId(1)
        }
    );
    // Without the MEDIUM one, the LOW one.
    st.cores[2].current = None;
    set_state(&mut st, 1, RunState::Exited);
    assert_eq!(
        p.pick_next(&st, CoreId(0)),
        Pick::PreemptRemote {
            from: CoreId(3),
            thread: ThreadId(2)
        }
    );
    // A warming thread ranks last, but a fast core still runs it rather
    // than stay idle.
    st.cores[3].current = None;
    set_state(&mut st, 2, RunState::Exited);
    assert_eq!(
        p.pick_next(&st, CoreId(0)),
        Pick::Steal {
            from: CoreId(3),
            thread: ThreadId(3)
        }
    );
}

// ----- monitoring ---------------------------------------------------------------

#[test]
fn phase_filter_ignores_small_changes_and_accepts_large_ones() {
    let mp = MonitorParams::default();
    assert!(close(mp.phase_transition_threshold, 0.12));
    let mut m = SfMonitor::new(&mp);
    for _ in 0..3 {
        m.sample(2.0, &mp);
    }
    assert_eq!(m.estimate(), Some(2.0));
    // 5% off the running average: no phase transition.
    m.sample(2.1, &mp);
    assert_eq!(m.transitions(), 0);
    assert!(close(m.estimate().unwrap(), 8.1 / 4.0));
    // 35% off: a transition; the estimate holds until the new phase has
    // been stable for two samples.
    m.sample(1.3, &mp);
    assert_eq!(m.transitions(), 1);
    assert!(close(m.estimate().unwrap(), 8.1 / 4.0));
    m.sample(1.3, &mp);
    assert!(close(m.estimate().unwrap(), 8.1 / 4.0));
    m.sample(1.3, &mp);
    assert!(close(m.estimate().unwrap(), 1.3));
    // A one-sample spike is never published.
    m.sample(2.0, &mp);
    m.sample(1.3, &mp);
    assert_eq!(m.transitions(), 3);
    assert!(close(m.estimate().unwrap(), 1.3));
    // Just inside and just outside 12%.
    let mut m = SfMonitor::new(&mp);
    m.sample(1.0, &mp);
    m.sample(1.11, &mp);
    assert_eq!(m.transitions(), 0);
    m.sample(1.19, &mp);
    assert_eq!(m.transitions(), 1, "1.19 vs average 1.055");
}

#[test]
fn sf_sampling_warms_up_after_start_and_migration() {
    let mut st = state("2B2S", &[(0, 3.0)]);
    let mut p = new_policy(Variant::Camp, &st);
    run_on(&mut st, 2, 0);
    p.running(&st, CoreId(2), ThreadId(0));
    // The first reading (cold start) is discarded; then 200 ms of readings
    // make the first sample.
    for i in 1..=50u64 {
        tick_at(&mut p, &mut st, i * 4 * MS, 2);
        assert_eq!(p.sf_estimate(ThreadId(0)), None, "tick {i}");
        assert_eq!(class(&p, &st, 0), None);
    }
    tick_at(&mut p, &mut st, 51 * 4 * MS, 2);
    assert_eq!(p.sf_estimate(ThreadId(0)), Some(3.0));
    assert_eq!(class(&p, &st, 0), Some(High));
    // Migrated: the next reading (a cold-cache spike) is discarded, so the
    // next sample is 3.0 again, not a phase transition.
    st.cores[2].current = None;
    run_on(&mut st, 3, 0);
    p.running(&st, CoreId(3), ThreadId(0));
    st.threads[0].predicted_speedup = 30.0;
    tick_at(&mut p, &mut st, 52 * 4 * MS, 3);
    st.threads[0].predicted_speedup = 3.0;
    for i in 53..=102u64 {
        tick_at(&mut p, &mut st, i * 4 * MS, 3);
    }
    let mon = p.sf_monitor(ThreadId(0)).unwrap();
    assert_eq!(mon.transitions(), 0);
    assert_eq!(p.sf_estimate(ThreadId(0)), Some(3.0));
    // Without the warm-up the spike would have made a transition.
    let mut m = SfMonitor::new(&MonitorParams {
        warmup_readings: 0,
        ..MonitorParams::default()
    });
    m.sample(3.0, &MonitorParams::default());
    m.reading(30.0, 4 * MS, &MonitorParams::default());
    m.reading(3.0, 196 * MS, &MonitorParams::default());
    assert_eq!(m.transitions(), 1);
}

// ----- PA, SFD, RR ------------------------------------------------------------

#[test]
fn pa_uses_the_machine_sf_and_thread_count_only() {
    // Program 0: single-threaded memory-bound (predicted 1.2, never sampled);
    // program 1: four runnable CPU-bound threads.
    let mut st = state("2B2S", &[(0, 1.2), (1, 3.1), (1, 3.1), (1, 3.1), (1, 3.1)]);
    let p = new_policy(Variant::Pa, &st);
    assert!(close(p.sf_max(), SF_MAX_2B2S));
    // No warm-up, and single-threaded applications are HIGH whatever their SF.
    assert_eq!(class(&p, &st, 0), Some(High));
    for t in 1..5 {
        queue(&mut st, 3, t);
    }
    // Four runnable threads: UF = 1 + (SF_max - 1) / 4: LOW.
    assert_eq!(class(&p, &st, 1), Some(Low));
    // CAMP agrees on the parallel program, but sees the memory-bound one.
    let mut c = new_policy(Variant::Camp, &st);
    c.seed_sf(ThreadId(0), 1.2);
    for t in 1..5 {
        c.seed_sf(ThreadId(t), SF_MAX_2B2S);
    }
    assert_eq!(class(&c, &st, 0), Some(VeryLow));
    assert_eq!(class(&c, &st, 1), Some(Low));
}

#[test]
fn sfd_ignores_thread_counts_and_never_boosts() {
    // Eight runnable threads with SF 3.0: SFD sees UF = SF (HIGH), CAMP VERY_LOW.
    let th: Vec<(u16, f64)> = std::iter::repeat_n((0u16, 3.0), 8).collect();
    let mut st = state("2B2S", &th);
    let mut sfd = new_policy(Variant::Sfd, &st);
    let mut camp = new_policy(Variant::Camp, &st);
    for t in 0..8 {
        sfd.seed_sf(ThreadId(t), 3.0);
        camp.seed_sf(ThreadId(t), 3.0);
        queue(&mut st, 2 + (t % 2) as u16, t);
    }
    assert_eq!(class(&sfd, &st, 0), Some(High));
    assert_eq!(class(&camp, &st, 0), Some(VeryLow));
    // SFD needs a sample too: a fresh thread has no class.
    let fresh = new_policy(Variant::Sfd, &st);
    assert_eq!(class(&fresh, &st, 0), None);
    // A serial phase is not boosted under SFD.
    let (p, st) = serial_phase(Variant::Sfd, 3.0);
    assert_eq!(class(&p, &st, 0), Some(High));
}

#[test]
fn rr_shares_fast_cores_among_all_threads() {
    // Memory-bound threads (SF 1.2) would be VERY_LOW under CAMP and keep
    // whatever core they have; RR rotates them like HIGH threads.
    let (mut p, mut st) = four_singles(Variant::Rr, 1.2);
    assert_eq!(class(&p, &st, 0), Some(High));
    let (_, out) = tick_at(&mut p, &mut st, 2_000 * MS, 0);
    assert_eq!(
        out,
        vec![migrate(0, 2), migrate(2, 0), migrate(1, 3), migrate(3, 1)]
    );
    let (mut p, mut st) = four_singles(Variant::Camp, 1.2);
    assert_eq!(class(&p, &st, 0), Some(VeryLow));
    let (_, out) = tick_at(&mut p, &mut st, 2_000 * MS, 0);
    assert!(out.is_empty(), "{out:?}");
    // RR does not boost serial phases either.
    let (p, st) = serial_phase(Variant::Rr, 3.0);
    assert_eq!(class(&p, &st, 0), Some(High));
}

// ----- topology ---------------------------------------------------------------

/// Two fast clusters (cores 0-1, 2-3) and two slow ones (4-5, 6-7).
fn two_by_two() -> Topology {
    let cl = |n: &str, ty: usize| (n.to_string(), ty, 2);
    Topology::build(
        "2x2B2x2S",
        vec![CoreType::reference_big(), CoreType::reference_little()],
        &[cl("b0", 0), cl("b1", 0), cl("l0", 1), cl("l1", 1)],
        Costs::default(),
    )
    .unwrap()
}

#[test]
fn placement_stays_in_the_last_cluster() {
    // Thread 0 HIGH, thread 1 LOW, threads 2-5 HIGH.
    let sfs = [3.0, 1.3, 3.0, 3.0, 3.0, 3.0];
    let th: Vec<(u16, f64)> = sfs
        .iter()
        .enumerate()
        .map(|(i, &s)| (i as u16, s))
        .collect();
    let mut st = state_on(two_by_two(), &th);
    let mut p = new_policy(Variant::Camp, &st);
    for (t, &sf) in sfs.iter().enumerate() {
        p.seed_sf(ThreadId(t as u32), sf);
    }
    // Thread 0 last ran on fast core 3, now busy: of the idle fast cores
    // 0, 1 and 2, core 2 shares its cluster.
    st.threads[0].last_core = Some(CoreId(3));
    run_on(&mut st, 3, 2);
    let c = p.select_core(&st, ThreadId(0), WakeKind::wakeup(None));
    assert_eq!(c, CoreId(2));
    // Every fast core busy with HIGH threads; the LOW thread last ran on
    // slow core 6, now busy: idle core 7 (same cluster) before idle core 4.
    for (c, t) in [(0, 2), (1, 3), (2, 4), (3, 5)] {
        run_on(&mut st, c, t);
    }
    run_on(&mut st, 6, 0);
    st.threads[1].last_core = Some(CoreId(6));
    let c = p.select_core(&st, ThreadId(1), WakeKind::wakeup(None));
    assert_eq!(c, CoreId(7));
    // Its previous core idle again: back there.
    st.cores[6].current = None;
    let c = p.select_core(&st, ThreadId(1), WakeKind::wakeup(None));
    assert_eq!(c, CoreId(6));
}

// ----- registration and simulator runs -------------------------------------------

#[test]
fn policies_are_registered_by_name() {
    for name in ["camp", "pa", "sfd", "rr"] {
        let p = crate::by_name(name).unwrap();
        assert_eq!(p.name(), name);
        assert!(crate::POLICIES.iter().any(|(n, _)| *n == name));
    }
    let msg = crate::by_name("nope").err().unwrap().to_string();
    assert!(msg.contains("camp, pa, sfd, rr"), "{msg}");
}

#[test]
fn family_runs_builtin_workloads_in_the_simulator() {
    use colab_sim::{simulate, SimConfig};
    let lib = colab_workload::Library::builtin();
    let workloads = [
        lib.single("blackscholes", None).unwrap(),
        lib.single("ferret", None).unwrap(),
        lib.mix("2B-1").unwrap(),
    ];
    for w in &workloads {
        for (topo, order) in [
            ("2B2S", CoreOrder::BigFirst),
            ("1B3S", CoreOrder::LittleFirst),
        ] {
            let t = Topology::named(topo, order).unwrap();
            for name in ["camp", "pa", "sfd", "rr"] {
                let mut p = crate::by_name(name).unwrap();
                let r = simulate(w, &t, p.as_mut(), &SimConfig::default())
                    .unwrap_or_else(|e| panic!("{name} on {} / {topo}: {e}", w.name));
                assert_eq!(r.programs.len(), w.programs.len());
                assert!(r.programs.iter().all(|p| p.end_ns > 0));
                // Fast cores are used.
                let fast_busy: u64 = t
                    .cores()
                    .filter(|&c| t.is_big(c))
                    .map(|c| r.core_busy_ns[c.idx()])
                    .sum();
                assert!(fast_busy > 0, "{name} on {}: fast cores never ran", w.name);
            }
        }
    }
}

#[test]
fn vruntimes_stay_bounded_between_unequal_queues() {
    // Regression: with long slow-core queues and nearly idle fast cores,
    // threads moving back and forth (steals, wake-ups elsewhere) used to
    // carry growing vruntime lags until they overflowed.
    use colab_sim::{simulate, SimConfig};
    let lib = colab_workload::Library::builtin();
    let w = lib.mix("4B-4").unwrap();
    let t = Topology::named("4B2S", CoreOrder::LittleFirst).unwrap();
    let cfg = SimConfig {
        seed: 3,
        ..SimConfig::default()
    };
    for name in ["camp", "pa", "sfd", "rr"] {
        let mut p = crate::by_name(name).unwrap();
        simulate(&w, &t, p.as_mut(), &cfg).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

#[test]
fn symmetric_machine_behaves_as_cfs() {
    use colab_sim::{simulate, SimConfig};
    let lib = colab_workload::Library::builtin();
    let w = lib.single("ferret", None).unwrap();
    let t = Topology::named("4B", CoreOrder::BigFirst).unwrap();
    let cfg = SimConfig::default();
    let base = simulate(&w, &t, crate::by_name("cfs").unwrap().as_mut(), &cfg).unwrap();
    for name in ["camp", "pa", "sfd", "rr"] {
        let r = simulate(&w, &t, crate::by_name(name).unwrap().as_mut(), &cfg).unwrap();
        assert_eq!(r.makespan_ns, base.makespan_ns, "{name}");
    }
}

#[test]
fn the_candidate_index_changes_no_decision() {
    // The same runs with the fast cores' candidates indexed from the start,
    // never, and by the thread count (switched on and off as threads come
    // and go): debug builds also check every indexed answer against a scan.
    use colab_sim::{simulate, SimConfig};
    let lib = colab_workload::Library::builtin();
    let mut many = colab_workload::Library::default();
    let text = "name = \"many\"\n[thread.main]\nops = [ { spawn = \"w\", count = 159 }, { join = \"w\" } ]\n[thread.w]\nops = [ { loop = 4, body = [ { compute = 300, speedup = 2.5 }, { sleep = 100 } ] } ]\n";
    let name = many.add_program_text("test", text).unwrap();
    let workloads = [
        lib.single("ferret", None).unwrap(),
        lib.mix("2B-1").unwrap(),
        lib.mix("Sync-2").unwrap(),
        many.single(&name, None).unwrap(),
    ];
    for w in &workloads {
        for (topo, order) in [
            ("2B2S", CoreOrder::BigFirst),
            ("1B3S", CoreOrder::LittleFirst),
            ("4B4S", CoreOrder::BigFirst),
        ] {
            let t = Topology::named(topo, order).unwrap();
            for v in [Variant::Camp, Variant::Pa, Variant::Sfd, Variant::Rr] {
                let run = |force: Option<bool>| {
                    let mut p = Camp::new(v, CampParams::default());
                    p.force_index(force);
                    let r = simulate(w, &t, &mut p, &SimConfig::default()).unwrap();
                    assert!(p.has_index(), "the index was lost");
                    format!("{:?} {:?} {:?}", r.stats, r.core_busy_ns, r.makespan_ns)
                };
                let off = run(Some(false));
                assert_eq!(run(Some(true)), off, "{v:?} on {} / {topo}", w.name);
                assert_eq!(run(None), off, "{v:?} on {} / {topo}", w.name);
            }
        }
    }
}
