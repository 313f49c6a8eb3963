//! EEVDF and GTS decisions on hand-built situations.

use super::*;
use crate::test_util::*;
use colab_core::{
    Action, BlockKind, CoreId, Pick, Policy, RunState, SchedState, StopReason, ThreadId, WakeKind,
    NS_PER_MS,
};

const MS: u64 = NS_PER_MS;
const MSI: i64 = NS_PER_MS as i64;

/// Wakes `t` onto core `c`'s queue through the hooks.
fn wake_to(p: &mut dyn Policy, st: &mut SchedState, c: u16, t: u32) {
    queue(st, c, t);
    p.enqueued(st, CoreId(c), ThreadId(t), true);
}

/// Dispatches `t` (queued on `c`) through the hooks.
fn dispatch(p: &mut dyn Policy, st: &mut SchedState, c: u16, t: u32) {
    run_on(st, c, t);
    p.running(st, CoreId(c), ThreadId(t));
}

/// The current thread of `c` goes to sleep at `st.now`, through the hooks.
fn block(p: &mut dyn Policy, st: &mut SchedState, c: u16) {
    let t = st.cores[c as usize].current.take().unwrap();
    let ran = st.now - st.cores[c as usize].run_start;
    let th = &mut st.threads[t.idx()];
    th.state = RunState::Blocked(BlockKind::Sleep);
    th.core = None;
    p.stopped(st, CoreId(c), t, ran, StopReason::Blocked);
}

/// V of core `c` as EEVDF defines it (mean vruntime of queued + current).
fn avg_v(p: &Eevdf, st: &SchedState, c: u16) -> i64 {
    let core = &st.cores[c as usize];
    let v: Vec<i64> = core
        .rq
        .iter()
        .copied()
        .chain(core.current)
        .map(|t| p.vruntime(t))
        .collect();
    v.iter().sum::<i64>().div_euclid(v.len() as i64)
}

// ----- EEVDF ----------------------------------------------------------------

#[test]
fn eevdf_base_slice_scales_like_cfs_tunables() {
    let st = state("2B2S", 1);
    let mut p = Eevdf::new();
    created(&mut p, &st);
    // 0.75 ms * (1 + ilog2(4)).
    assert_eq!(p.base_slice_ns(), 2_250_000);
    assert_eq!(eevdf::log_factor(64), 4, "capped at 8 cpus");
}

#[test]
fn eevdf_picks_eligible_earliest_deadline_not_ineligible_earlier_one() {
    let mut st = state("2B2S", 3);
    let mut p = Eevdf::new();
    created(&mut p, &st);
    for t in 0..3 {
        queue(&mut st, 0, t);
    }
    // V = (10 + 0 + 2) / 3 = 4 ms. Thread 0 has the earliest deadline but is
    // ahead of V (ineligible); thread 1 has the smallest vruntime (CFS's
    // choice); thread 2 is eligible with the earliest eligible deadline.
    p.set_entity(ThreadId(0), 10 * MSI, 11 * MSI);
    p.set_entity(ThreadId(1), 0, 20 * MSI);
    p.set_entity(ThreadId(2), 2 * MSI, 15 * MSI);
    assert_eq!(p.pick_next(&st, CoreId(0)), Pick::Local(ThreadId(2)));
    // With thread 0 at 1 ms, V = 1 ms: it is eligible and wins on its
    // deadline.
    p.set_entity(ThreadId(0), MSI, 11 * MSI);
    assert_eq!(p.pick_next(&st, CoreId(0)), Pick::Local(ThreadId(0)));
}

#[test]
fn eevdf_preserves_lag_across_sleep_and_wakeup() {
    let mut st = state("2B2S", 3);
    let mut p = Eevdf::new();
    created(&mut p, &st);
    // Thread 0 runs behind threads 1 and 2: V = (0 + 6 + 6) / 3 = 4 ms, so it
    // goes to sleep with a lag of +4 ms.
    queue(&mut st, 0, 1);
    queue(&mut st, 0, 2);
    run_on(&mut st, 0, 0);
    p.running(&st, CoreId(0), ThreadId(0));
    p.set_entity(ThreadId(0), 0, 2 * MSI);
    p.set_entity(ThreadId(1), 6 * MSI, 9 * MSI);
    p.set_entity(ThreadId(2), 6 * MSI, 9 * MSI);
    block(&mut p, &mut st, 0);
    assert_eq!(p.lag(ThreadId(0)), 4 * MSI);
    // Meanwhile the others advanced; on wake-up thread 0 is placed so that,
    // with it counted in V, its lag is still +4 ms (not reset to V, and
    // not its old absolute vruntime).
    st.now = 50 * MS;
    p.set_entity(ThreadId(1), 40 * MSI, 42 * MSI);
    p.set_entity(ThreadId(2), 44 * MSI, 46 * MSI);
    wake_to(&mut p, &mut st, 0, 0);
    let v = avg_v(&p, &st, 0);
    assert_eq!(v - p.vruntime(ThreadId(0)), 4 * MSI);
    assert_eq!(
        p.deadline(ThreadId(0)) - p.vruntime(ThreadId(0)),
        p.base_slice_ns() as i64
    );
    // A new thread joins at V with half a request (PLACE_DEADLINE_INITIAL).
    let mut st2 = state("2B2S", 2);
    let mut q = Eevdf::new();
    created(&mut q, &st2);
    queue(&mut st2, 0, 0);
    q.set_entity(ThreadId(0), 8 * MSI, 10 * MSI);
    wake_to(&mut q, &mut st2, 0, 1);
    assert_eq!(q.vruntime(ThreadId(1)), 8 * MSI);
    assert_eq!(
        q.deadline(ThreadId(1)) - q.vruntime(ThreadId(1)),
        q.base_slice_ns() as i64 / 2
    );
}

#[test]
fn eevdf_wakeup_preemption_needs_eligible_earlier_deadline() {
    let mut st = state("2B2S", 2);
    let mut p = Eevdf::new();
    created(&mut p, &st);
    run_on(&mut st, 0, 0);
    p.running(&st, CoreId(0), ThreadId(0));
    p.set_entity(ThreadId(0), 0, 2 * MSI);
    st.now = MS; // thread 0 has run 1 ms: vruntime 1 ms, deadline 2 ms
    queue(&mut st, 0, 1);
    // Woken thread 1 behind the current one with an earlier deadline: the
    // current thread is past V = 0.75 ms (ineligible), so 1 preempts.
    p.set_entity(ThreadId(1), MSI / 2, 3 * MSI / 2);
    assert!(p.should_preempt(&st, CoreId(0), ThreadId(1)));
    // Woken thread with a later deadline than an eligible current one: no.
    let mut st = state("2B2S", 2);
    let mut p = Eevdf::new();
    created(&mut p, &st);
    run_on(&mut st, 0, 0);
    p.running(&st, CoreId(0), ThreadId(0));
    p.set_entity(ThreadId(0), 0, 2 * MSI);
    st.now = MS;
    queue(&mut st, 0, 1);
    // V = 1.25 ms: the current thread (1 ms) is eligible and keeps running to
    // parity even though thread 1's deadline (1.6 ms) is earlier.
    p.set_entity(ThreadId(1), 3 * MSI / 2, 8 * MSI / 5);
    assert!(!p.should_preempt(&st, CoreId(0), ThreadId(1)));
    // When its request is used up (vruntime reaches the deadline), the tick
    // reschedules it.
    let mut out = Vec::new();
    st.now = 2 * MS;
    assert!(p.tick(&st, CoreId(0), &mut out));
}

#[test]
fn eevdf_wake_placement_is_capacity_aware() {
    // Cores 0-1 big, 2-3 little. Thread 0 ran 200 ms straight on little core
    // 2 (high utilisation); thread 1 ran 1 ms there and slept long.
    let mut st = state("2B2S", 2);
    let mut p = Eevdf::new();
    created(&mut p, &st);
    dispatch(&mut p, &mut st, 2, 0);
    st.now = 200 * MS;
    block(&mut p, &mut st, 2);
    dispatch(&mut p, &mut st, 2, 1);
    st.now = 201 * MS;
    block(&mut p, &mut st, 2);
    st.now = 400 * MS;
    let cap_little = Eevdf::capacity(&st, CoreId(2));
    assert!(p.util_est(&st, ThreadId(0)) * 1.25 >= cap_little);
    assert!(p.util_est(&st, ThreadId(0)) * 1.25 < 1024.0);
    let waker = WakeKind::wakeup(None);
    // CFS would wake both on their idle previous core.
    let c0 = p.select_core(&st, ThreadId(0), waker);
    assert!(st.topo.is_big(c0), "heavy thread woke on {c0}");
    assert_eq!(p.select_core(&st, ThreadId(1), waker), CoreId(2));
    let mut cfs = Cfs::new();
    created(&mut cfs, &st);
    assert_eq!(cfs.select_core(&st, ThreadId(0), waker), CoreId(2));
}

#[test]
fn eevdf_moves_a_misfit_task_to_a_big_core() {
    let mut st = state("2B2S", 1);
    let mut p = Eevdf::new();
    created(&mut p, &st);
    dispatch(&mut p, &mut st, 2, 0);
    let mut out = Vec::new();
    // After 1 ms its utilisation is small: it fits the little core.
    st.now = MS;
    p.tick(&st, CoreId(2), &mut out);
    assert_eq!(p.pick_next(&st, CoreId(0)), Pick::Idle);
    // After 100 ms of running it does not: the tick marks it misfit and an
    // idle big core pulls it (active balance of the running task).
    st.now = 100 * MS;
    p.tick(&st, CoreId(2), &mut out);
    assert!(!p.task_fits(&st, ThreadId(0), CoreId(2)));
    assert_eq!(
        p.pick_next(&st, CoreId(0)),
        Pick::PreemptRemote {
            from: CoreId(2),
            thread: ThreadId(0)
        }
    );
    // An idle little core does not: it is no bigger.
    assert_eq!(p.pick_next(&st, CoreId(3)), Pick::Idle);
}

// ----- GTS ------------------------------------------------------------------

/// Thread 0: enqueued at 0 (full initial load), sleeps 100 ms, then runs
/// continuously on little core 2 from 100 ms. Returns the policy.
fn gts_light_then_running_on_little(st: &mut SchedState) -> Gts {
    let mut p = Gts::default();
    created(&mut p, st);
    wake_to(&mut p, st, 2, 0);
    dispatch(&mut p, st, 2, 0);
    block(&mut p, st, 2);
    st.now = 100 * MS;
    wake_to(&mut p, st, 2, 0);
    dispatch(&mut p, st, 2, 0);
    p
}

#[test]
fn gts_new_threads_start_on_big_with_full_load() {
    let mut st = state("2B2S", 2);
    let mut p = Gts::default();
    created(&mut p, &st);
    // Little cores idle too, yet the fork goes to a big core.
    run_on(&mut st, 0, 1);
    let c = p.select_core(&st, ThreadId(0), WakeKind::New { parent: None });
    assert_eq!(c, CoreId(1));
    wake_to(&mut p, &mut st, 1, 0);
    assert!(p.load(&st, ThreadId(0)) > 1000.0);
}

#[test]
fn gts_moves_up_when_load_passes_up_threshold() {
    let mut st = state("2B2S", 1);
    let mut p = gts_light_then_running_on_little(&mut st);
    let mut out = Vec::new();
    st.now = 105 * MS;
    assert!(p.load(&st, ThreadId(0)) < 700.0);
    p.tick(&st, CoreId(2), &mut out);
    assert!(out.is_empty(), "{out:?}");
    st.now = 160 * MS;
    assert!(p.load(&st, ThreadId(0)) > 700.0);
    p.tick(&st, CoreId(2), &mut out);
    assert_eq!(
        out,
        vec![Action::Migrate {
            thread: ThreadId(0),
            to: CoreId(0)
        }]
    );
}

#[test]
fn gts_moves_down_when_load_falls_below_down_threshold() {
    let mut st = state("2B2S", 1);
    let mut p = Gts::default();
    created(&mut p, &st);
    // Runs 50 ms on big core 0, then sleeps.
    wake_to(&mut p, &mut st, 0, 0);
    dispatch(&mut p, &mut st, 0, 0);
    st.now = 50 * MS;
    block(&mut p, &mut st, 0);
    let waker = WakeKind::wakeup(None);
    // Woken soon after: still heavy, stays on big.
    st.now = 52 * MS;
    assert!(p.load(&st, ThreadId(0)) > 512.0);
    assert_eq!(p.select_core(&st, ThreadId(0), waker), CoreId(0));
    // Woken after a long sleep: its load fell below 512, so it goes little.
    st.now = 150 * MS;
    assert!(p.load(&st, ThreadId(0)) < 512.0);
    let c = p.select_core(&st, ThreadId(0), waker);
    assert!(st.topo.is_little(c), "woke on {c}");
}

#[test]
fn gts_idle_big_core_pulls_heavy_thread() {
    let mut st = state("2B2S", 1);
    let mut p = gts_light_then_running_on_little(&mut st);
    st.now = 105 * MS;
    assert_eq!(p.pick_next(&st, CoreId(0)), Pick::Idle);
    st.now = 160 * MS;
    assert_eq!(
        p.pick_next(&st, CoreId(0)),
        Pick::PreemptRemote {
            from: CoreId(2),
            thread: ThreadId(0)
        }
    );
    // A little core never pulls from the other cluster.
    assert_eq!(p.pick_next(&st, CoreId(3)), Pick::Idle);
}

#[test]
fn gts_overloaded_big_core_offloads_a_starving_thread_to_an_idle_little() {
    let mut st = state("2B2S", 3);
    let mut p = Gts::default();
    created(&mut p, &st);
    // Thread 1 is light (woke after a long sleep); thread 0 runs on big core 0
    // with thread 1 waiting behind it.
    wake_to(&mut p, &mut st, 0, 1);
    dispatch(&mut p, &mut st, 0, 1);
    block(&mut p, &mut st, 0);
    st.now = 200 * MS;
    wake_to(&mut p, &mut st, 0, 0);
    dispatch(&mut p, &mut st, 0, 0);
    wake_to(&mut p, &mut st, 0, 1);
    st.now = 210 * MS;
    let mut out = Vec::new();
    // Big core 1 is idle: it takes the work (cluster balancing), no offload.
    p.tick(&st, CoreId(0), &mut out);
    assert!(
        out.iter()
            .all(|a| !matches!(a, Action::Migrate { to, .. } if st.topo.is_little(*to))),
        "{out:?}"
    );
    out.clear();
    // With core 1 busy, the waiting thread goes to idle little core 2.
    run_on(&mut st, 1, 2);
    p.tick(&st, CoreId(0), &mut out);
    assert_eq!(
        out,
        vec![Action::Migrate {
            thread: ThreadId(1),
            to: CoreId(2)
        }]
    );
}
