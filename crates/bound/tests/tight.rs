//! Hand-made cases whose best schedule is known: the bound is that
//! optimum (to 1%), and the simulator's run, where one policy finds the
//! optimum, lands on it.

use colab_bound::{h_antt, program};
use colab_core::{CoreOrder, Topology};
use colab_sim::{simulate, SimConfig};
use colab_workload::{Library, Workload};

fn one(text: &str) -> Workload {
    Library::builtin().resolve_text("<test>", text).unwrap()
}

const SPINNER: &str = r#"
name = "spinner"
[thread.main]
ops = [ { compute = 2000, mem_frac = 0.0 } ]
"#;

/// 1 ms serial, two workers of 2 ms each, 1 ms serial: 4 ms on two big
/// cores whatever the order.
const FORK_JOIN: &str = r#"
name = "forkjoin"
[thread.main]
ops = [
  { compute = 1000, mem_frac = 0.0 },
  { spawn = "worker", count = 2 },
  { join = "worker" },
  { compute = 1000, mem_frac = 0.0 },
]
[thread.worker]
ops = [ { compute = 2000, mem_frac = 0.0 } ]
"#;

fn run_alone(w: &Workload, machine: &str) -> f64 {
    let topo = Topology::named(machine, CoreOrder::BigFirst).unwrap();
    let mut pol = colab_campaign::policy_by_name("cfs").unwrap();
    let r = simulate(w, &topo, pol.as_mut(), &SimConfig::default()).unwrap();
    r.programs[0].turnaround_ns as f64
}

/// Runs a one-program workload alone on `machine` under CFS, checks that
/// the run is at or above its own draws' bound and within 1% of it, and
/// returns that bound and what the run drew.
fn meets_its_bound(
    w: &Workload,
    machine: &str,
) -> (colab_bound::ProgramBound, colab_sim::DrawnWork) {
    let topo = Topology::named(machine, CoreOrder::BigFirst).unwrap();
    let mut pol = colab_campaign::policy_by_name("cfs").unwrap();
    let r = simulate(w, &topo, pol.as_mut(), &SimConfig::default()).unwrap();
    let d = r.programs[0].drawn.clone();
    let b = colab_bound::program_in_run(&w.programs[0], &topo, &d);
    let got = r.programs[0].turnaround_ns as f64;
    assert!(
        got >= b.turnaround_ns && got <= 1.01 * b.turnaround_ns,
        "{got} vs {b:?}"
    );
    (b, d)
}

#[test]
fn one_thread_on_a_free_big_core_is_its_work_at_the_big_rate() {
    let w = one(SPINNER);
    let topo = Topology::named("1B1S", CoreOrder::BigFirst).unwrap();
    let b = program(&w.programs[0], &topo);
    assert!((b.turnaround_ns - 2e6).abs() < 1.0, "{b:?}");
    let got = run_alone(&w, "1B1S");
    assert!(
        got >= b.turnaround_ns && got <= 1.01 * b.turnaround_ns,
        "{got} vs {b:?}"
    );
}

#[test]
fn a_fork_join_program_is_its_serial_parts_and_its_longest_worker() {
    let w = one(FORK_JOIN);
    let topo = Topology::named("2B", CoreOrder::BigFirst).unwrap();
    let b = program(&w.programs[0], &topo);
    assert!((b.turnaround_ns - 4e6).abs() < 1.0, "{b:?}");
    assert!((b.work_ns - 6e6).abs() < 1.0, "{b:?}");
    let got = run_alone(&w, "2B");
    assert!(
        got >= b.turnaround_ns && got <= 1.01 * b.turnaround_ns,
        "{got} vs {b:?}"
    );
    // On one core the work, not the chain, bounds it: 6 ms.
    let one_core = Topology::named("1B", CoreOrder::BigFirst).unwrap();
    assert!((program(&w.programs[0], &one_core).turnaround_ns - 6e6).abs() < 1.0);
}

#[test]
fn two_equal_programs_on_one_core_at_best_run_one_after_the_other() {
    // Each alone takes 2 ms (T_SB); together on one core the best is one
    // then the other: H_ANTT (1 + 2) / 2 = 1.5. Sharing the core would
    // give 2.
    let w = one(SPINNER);
    let both = [w.programs[0].clone(), w.programs[0].clone()];
    let topo = Topology::named("1B", CoreOrder::BigFirst).unwrap();
    let b = h_antt(&both, &topo, &[2e6, 2e6]);
    assert!((b - 1.5).abs() < 1e-9, "{b}");
}

#[test]
fn a_little_core_counts_at_its_best_rate_for_the_mix() {
    // Pure compute on 1B1S: the little core runs at r of the big one's
    // rate, so the machine is worth 1 + r big cores; two 2 ms programs
    // cannot both end before their work over that capacity, nor either
    // before its own 2 ms.
    let w = one(SPINNER);
    let both = [w.programs[0].clone(), w.programs[0].clone()];
    let topo = Topology::named("1B1S", CoreOrder::BigFirst).unwrap();
    let little =
        topo.core_types[topo.slowest_type].rate(0.0) / topo.core_types[topo.fastest_type].rate(0.0);
    let b = h_antt(&both, &topo, &[2e6, 2e6]);
    // The first to finish: its own 2 ms (the machine could do its work in
    // 2 / (1 + r) ms, but one thread runs on one core at a time); the
    // second: both programs' work over the machine, 4 / (1 + r) ms, or its
    // own 2 ms. Over T_SB 2 ms each, halved.
    let expected = (1.0 + (2.0 / (1.0 + little)).max(1.0)) / 2.0;
    assert!((b - expected).abs() < 1e-6, "{b} vs {expected}");
    assert!(b > 1.0, "{b}");
}

/// Main fills a queue with 10 items; two workers take them as they come.
const TEAM: &str = r#"
name = "team"
[queue]
items = { capacity = 10, producers = 1 }
[thread.main]
ops = [
  { compute = 1000, mem_frac = 0.0, cv = 0.0 },
  { spawn = "worker", count = 2 },
  { loop = 10, body = [ { push = "items" } ] },
  { close = "items" },
  { join = "worker" },
]
[thread.worker]
ops = [
  { loop = "until-closed", body = [
    { pop = "items" },
    { compute = 1000, mem_frac = 0.0, cv = 0.0 },
  ] },
]
"#;

#[test]
fn a_threads_own_steps_leave_out_the_items_it_happened_to_take() {
    // Which worker takes which item is the schedule's doing: a thread's
    // own chain is main's 1 ms, not a worker's five or six items.
    // The chain: main's 1 ms, then the workers' 10 ms of items shared by
    // two, 5 ms at best: 6 ms, which the run meets to 1%.
    let (b, d) = meets_its_bound(&one(TEAM), "2B");
    assert!((d.longest_path_ns - 1e6).abs() < 1.0, "{d:?}");
    assert!((b.turnaround_ns - 6e6).abs() < 1.0, "{b:?}");
}

/// Two workers meet at a barrier after each of 20 noisy steps: each
/// episode ends with the slower one's step, which is no thread's own.
const BARRIER_STEPS: &str = r#"
name = "steps"
[barrier]
step = 2
[thread.main]
ops = [ { spawn = "worker", count = 2 }, { join = "worker" } ]
[thread.worker]
ops = [
  { loop = 20, body = [
    { compute = 500, mem_frac = 0.0, cv = 0.5 },
    { barrier = "step" },
  ] },
]
"#;

#[test]
fn barrier_episodes_chain_their_slowest_steps() {
    // On two big cores each worker has its own core: the run is the sum
    // over episodes of the slower step, which the run's own bound is.
    meets_its_bound(&one(BARRIER_STEPS), "2B");
}

/// Four workers each run 10 critical sections of 1 ms under one mutex.
const ONE_LOCK: &str = r#"
name = "onelock"
[mutex]
m = 1
[thread.main]
ops = [ { spawn = "worker", count = 4 }, { join = "worker" } ]
[thread.worker]
ops = [ { loop = 10, body = [ { critical = "m", compute = 1000, mem_frac = 0.0, cv = 0.0 } ] } ]
"#;

#[test]
fn one_mutexs_critical_sections_follow_one_another() {
    // 40 ms of work under one lock take 40 ms on any number of cores.
    let (_b, d) = meets_its_bound(&one(ONE_LOCK), "4B");
    assert!((d.longest_held_ns - 40e6).abs() < 1.0, "{d:?}");
}

#[test]
fn a_join_waits_for_the_slowest_worker_drawn() {
    // FORK_JOIN's workers with noise: 1 ms, the slower worker's draw, 1 ms.
    meets_its_bound(
        &one(&FORK_JOIN.replace(
            "ops = [ { compute = 2000, mem_frac = 0.0 } ]",
            "ops = [ { compute = 2000, mem_frac = 0.0, cv = 0.5 } ]",
        )),
        "2B",
    );
}

#[test]
fn the_bounds_schedule_runs_the_short_program_first() {
    // A 6 ms program and a 2 ms one on one core, each T_SB its own length:
    // the best is the short one first (ends at 2 and 8 ms: H_ANTT
    // (1 + 8/6) / 2), not the long one (6 and 8 ms: (1 + 4) / 2).
    let short = one(SPINNER);
    let long = one(&SPINNER.replace("compute = 2000", "compute = 6000"));
    let mix = [long.programs[0].clone(), short.programs[0].clone()];
    let topo = Topology::named("1B", CoreOrder::BigFirst).unwrap();
    let drawn: Vec<colab_sim::DrawnWork> = [6e6, 2e6]
        .iter()
        .map(|&ns| colab_sim::DrawnWork {
            by_mem_frac: [(0.0f64.to_bits(), ns)].into(),
            longest_path_ns: ns,
            longest_held_ns: 0.0,
        })
        .collect();
    let drawn: Vec<&colab_sim::DrawnWork> = drawn.iter().collect();
    let s = colab_bound::schedule_of_run(&mix, &topo, &[6e6, 2e6], &drawn);
    assert_eq!(s.order, vec![1, 0]);
    assert!((s.end_ns[1] - 2e6).abs() < 1.0, "{s:?}");
    assert!((s.end_ns[0] - 8e6).abs() < 1.0, "{s:?}");
    assert!((s.h_antt - (1.0 + 8.0 / 6.0) / 2.0).abs() < 1e-9, "{s:?}");
}

/// Four workers of 1 ms meet at a barrier, then main computes 4 ms alone.
const WIDE_THEN_SERIAL: &str = r#"
name = "wide"
[barrier]
all = 4
[thread.main]
ops = [
  { spawn = "worker", count = 4 },
  { join = "worker" },
  { compute = 4000, mem_frac = 0.0, cv = 0.0 },
]
[thread.worker]
ops = [ { compute = 1000, mem_frac = 0.0, cv = 0.0 }, { barrier = "all" } ]
"#;

#[test]
fn a_barrier_episode_takes_its_work_over_the_cores() {
    // On two big cores the workers' 4 ms take 2 ms before the barrier
    // opens (no one thread's 1 ms, nor the program's 8 ms of work over two
    // cores, says so); then main's 4 ms: 6 ms.
    let (b, _d) = meets_its_bound(&one(WIDE_THEN_SERIAL), "2B");
    assert!((b.turnaround_ns - 6e6).abs() < 1.0, "{b:?}");
}
