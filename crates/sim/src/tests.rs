//! Semantics of the machine and the primitives, on hand-built workloads.

use crate::{simulate, PredictorKind, SimConfig, SimError, SimResult, MAX_RESTART_UNTIL};
use colab_core::{CoreOrder, Costs, Topology};
use colab_workload::{Library, Workload};

fn workload(text: &str) -> Workload {
    let mut lib = Library::default();
    let name = lib.add_program_text("test.toml", text).unwrap();
    lib.single(&name, None).unwrap()
}

fn zero_cost(mut t: Topology) -> Topology {
    t.costs = Costs {
        context_switch_ns: 0,
        migration_local_ns: 0,
        migration_cross_ns: 0,
        ..Costs::default()
    };
    t
}

fn run(w: &Workload, topo: &str, policy: &str) -> Result<SimResult, SimError> {
    let t = zero_cost(Topology::named(topo, CoreOrder::BigFirst).unwrap());
    let mut p = colab_policies::by_name(policy).unwrap();
    let cfg = SimConfig {
        predictor: PredictorKind::Oracle,
        ..SimConfig::default()
    };
    simulate(w, &t, p.as_mut(), &cfg)
}

const MS: u64 = 1_000_000;

#[test]
fn single_compute_runs_at_core_speed() {
    // 10 ms of core-bound work (mem_frac 0): 10 ms on big, 10/0.318 ms on little.
    let w = workload("name = \"x\"\n[thread.main]\nops = [ { compute = 10000, mem_frac = 0.0 } ]");
    let r = run(&w, "1B", "cfs").unwrap();
    assert_eq!(r.programs[0].turnaround_ns, 10 * MS);
    let r = run(&w, "0B1S", "cfs").unwrap();
    let want = (10.0 * MS as f64 / (0.6 * 0.53)).ceil() as u64;
    assert!(
        r.programs[0].turnaround_ns.abs_diff(want) <= 1,
        "{} vs {want}",
        r.programs[0].turnaround_ns
    );
    // Energy: 10 ms at 1.5 W on the big core.
    let r = run(&w, "1B", "cfs").unwrap();
    assert!((r.energy_j - 0.015).abs() < 1e-9, "{}", r.energy_j);
}

#[test]
fn each_programs_cpu_time_and_its_part_on_the_fastest_cores_are_counted() {
    let w = workload("name = \"x\"\n[thread.main]\nops = [ { compute = 10000, mem_frac = 0.0 } ]");
    let r = run(&w, "1B", "cfs").unwrap();
    assert_eq!(
        (r.programs[0].cpu_ns, r.programs[0].fast_cpu_ns),
        (10 * MS, 10 * MS)
    );
    // A machine of one core type: its cores are its fastest.
    let r = run(&w, "0B1S", "cfs").unwrap();
    let p = &r.programs[0];
    assert_eq!(
        (p.cpu_ns, p.fast_cpu_ns),
        (p.turnaround_ns, p.turnaround_ns)
    );
    // Three one-thread programs on one big and one little core: each ran
    // its time, the big core's busy time is the programs' fast time, and a
    // program alone on the little core for a while has its fast part less
    // than its whole.
    let mut three = w.clone();
    three.programs = vec![w.programs[0].clone(); 3];
    for policy in ["cfs", "rota", "colab"] {
        let r = run(&three, "1B1S", policy).unwrap();
        let cpu: u64 = r.programs.iter().map(|p| p.cpu_ns).sum();
        let fast: u64 = r.programs.iter().map(|p| p.fast_cpu_ns).sum();
        assert_eq!(cpu, r.core_busy_ns.iter().sum::<u64>(), "{policy}");
        assert_eq!(fast, r.core_busy_ns[0], "{policy}: core 0 is the big one");
        for p in &r.programs {
            assert!(
                p.cpu_ns >= 10 * MS && p.fast_cpu_ns <= p.cpu_ns,
                "{policy}: {p:?}"
            );
        }
        assert!(
            r.programs.iter().any(|p| p.fast_cpu_ns < p.cpu_ns),
            "{policy}"
        );
    }
}

#[test]
fn fast_core_idle_time_is_counted_while_a_slow_core_runs_a_thread() {
    // One 10 ms thread on 1B1S with the little core first: cfs starts it
    // on core 0, the little one, and never moves it, so the big core sits
    // idle the whole run while the little one works.
    let w = workload("name = \"x\"\n[thread.main]\nops = [ { compute = 10000, mem_frac = 0.0 } ]");
    let on = |policy: &str, order| {
        let t = zero_cost(Topology::named("1B1S", order).unwrap());
        let mut p = colab_policies::by_name(policy).unwrap();
        let cfg = SimConfig {
            predictor: PredictorKind::Oracle,
            ..SimConfig::default()
        };
        simulate(&w, &t, p.as_mut(), &cfg).unwrap()
    };
    let r = on("cfs", CoreOrder::LittleFirst);
    assert_eq!(r.core_busy_ns[1], 0, "the big core never ran it");
    assert_eq!(r.stats.fast_idle_slow_busy_ns, r.makespan_ns);
    // Big core first: it runs there, nothing is left idle.
    let r = on("cfs", CoreOrder::BigFirst);
    assert_eq!(r.stats.fast_idle_slow_busy_ns, 0);
    // Two one-thread programs of 10 and 5 ms start on both cores and stay
    // (cfs moves no running thread): the big core idles from its end to
    // the little core's, whichever program each drew.
    let short =
        workload("name = \"y\"\n[thread.main]\nops = [ { compute = 5000, mem_frac = 0.0 } ]");
    let mut two = w.clone();
    two.programs.push(short.programs[0].clone());
    let t = zero_cost(Topology::named("1B1S", CoreOrder::LittleFirst).unwrap());
    let mut p = colab_policies::by_name("cfs").unwrap();
    let r = simulate(&two, &t, p.as_mut(), &SimConfig::default()).unwrap();
    let big_busy = r.core_busy_ns[1];
    assert!(big_busy > 0 && big_busy < r.makespan_ns, "{big_busy}");
    assert_eq!(r.stats.migrations, 0);
    assert_eq!(r.stats.fast_idle_slow_busy_ns, r.makespan_ns - big_busy);
    // A machine of one core type has no slower core.
    let r = run(&w, "2B", "cfs").unwrap();
    assert_eq!(r.stats.fast_idle_slow_busy_ns, 0);
}

#[test]
fn memory_stalls_draw_stall_power() {
    // 10 ms of fully memory-bound work on the big core: stalled all the time,
    // at half the active power (DEFAULT_STALL_POWER_FRAC): 10 ms x 0.75 W.
    let w = workload("name = \"x\"\n[thread.main]\nops = [ { compute = 10000, mem_frac = 1.0 } ]");
    let r = run(&w, "1B", "cfs").unwrap();
    assert_eq!(r.programs[0].turnaround_ns, 10 * MS);
    assert!((r.energy_j - 0.0075).abs() < 1e-9, "{}", r.energy_j);
    // Half memory-bound on the little core: time per unit is
    // 0.5/0.318 + 0.5/0.8333 ns; stalled for the second term, at 0.125 W.
    let w = workload("name = \"x\"\n[thread.main]\nops = [ { compute = 1000, mem_frac = 0.5 } ]");
    let r = run(&w, "0B1S", "cfs").unwrap();
    let (compute, stall) = (0.5 / (0.6 * 0.53) * 1e6, 0.5 * 1.2 * 1e6);
    let want = (compute * 0.25 + stall * 0.125) * 1e-9;
    assert!((r.energy_j - want).abs() < 1e-9, "{} vs {want}", r.energy_j);
}

/// Records the (speedup, energy ratio) predictions a thread has at each
/// wake-up, and how it woke; runs everything on core 0.
struct Probe(Vec<(f64, f64)>, Vec<colab_core::WakeKind>);
impl colab_core::Policy for Probe {
    fn name(&self) -> &'static str {
        "probe"
    }
    fn select_core(
        &mut self,
        st: &colab_core::SchedState,
        t: colab_core::ThreadId,
        kind: colab_core::WakeKind,
    ) -> colab_core::CoreId {
        self.1.push(kind);
        let th = st.thread(t);
        self.0
            .push((th.predicted_speedup, th.predicted_energy_ratio));
        colab_core::CoreId(0)
    }
    fn pick_next(
        &mut self,
        st: &colab_core::SchedState,
        c: colab_core::CoreId,
    ) -> colab_core::Pick {
        st.core(c)
            .rq
            .front()
            .map_or(colab_core::Pick::Idle, colab_core::Pick::Local)
    }
    fn should_preempt(
        &mut self,
        _: &colab_core::SchedState,
        _: colab_core::CoreId,
        _: colab_core::ThreadId,
    ) -> bool {
        false
    }
    fn slice_ns(
        &self,
        _: &colab_core::SchedState,
        _: colab_core::CoreId,
        _: colab_core::ThreadId,
    ) -> u64 {
        MS
    }
    fn tick(
        &mut self,
        _: &colab_core::SchedState,
        _: colab_core::CoreId,
        _: &mut Vec<colab_core::Action>,
    ) -> bool {
        false
    }
}

#[test]
fn threads_see_a_predicted_energy_ratio() {
    // With the oracle, the prediction is the true big/little energy per work:
    // core-bound work costs (1.5 / 1) / (0.25 / 0.318) on big over little.
    let w = workload("name = \"x\"\n[thread.main]\nops = [ { compute = 1000, mem_frac = 0.0 } ]");
    let t = zero_cost(Topology::named("1B1S", CoreOrder::BigFirst).unwrap());
    let mut p = Probe(Vec::new(), Vec::new());
    let cfg = SimConfig {
        predictor: PredictorKind::Oracle,
        ..SimConfig::default()
    };
    simulate(&w, &t, &mut p, &cfg).unwrap();
    let want = 1.5 / (0.25 / (0.6 * 0.53));
    assert!((p.0[0].1 - want).abs() < 1e-9, "{:?} vs {want}", p.0);
}

/// Main (30 ms) and two workers (10 ms) meet at a barrier; the workers
/// then run 5 ms more and main joins them.
const BARRIER_OF_THREE: &str = r#"
name = "x"
[barrier]
b = 3
[thread.main]
ops = [ { spawn = "w", count = 2 }, { compute = 30000, mem_frac = 0.0 }, { barrier = "b" }, { join = "w" } ]
[thread.w]
ops = [ { compute = 10000, mem_frac = 0.0 }, { barrier = "b" }, { compute = 5000, mem_frac = 0.0 } ]
"#;

/// How many of a program's wake-ups by another thread let every waiter
/// go at once, and how many handed off to one.
fn broadcast_and_handoff_wakes(text: &str) -> (usize, usize) {
    wakes_by_kind(&workload(text))
}

fn wakes_by_kind(w: &Workload) -> (usize, usize) {
    let t = zero_cost(Topology::named("1B", CoreOrder::BigFirst).unwrap());
    let mut p = Probe(Vec::new(), Vec::new());
    simulate(w, &t, &mut p, &SimConfig::default()).unwrap();
    let by_thread = p.1.iter().filter_map(|k| match *k {
        colab_core::WakeKind::Wakeup {
            waker: Some(_),
            broadcast,
        } => Some(broadcast),
        _ => None,
    });
    by_thread.fold((0, 0), |(b, h), x| if x { (b + 1, h) } else { (b, h + 1) })
}

#[test]
fn a_wake_up_says_whether_the_waker_let_every_waiter_go() {
    // Barrier of three: the last to arrive lets the other two go together;
    // main's join is a hand-off.
    assert_eq!(broadcast_and_handoff_wakes(BARRIER_OF_THREE), (2, 1));
    // A condition: broadcast to two waiters, or a signal to one (one core,
    // no preemption: main unlocks before the woken run, so only the join
    // hands off).
    let cond = |wake: &str, n: u32| {
        format!(
            r#"
name = "x"
cond = ["c"]
[mutex]
m = 1
[thread.main]
ops = [ {{ spawn = "w", count = {n} }}, {{ sleep = 1000 }}, {{ lock = "m" }}, {{ {wake} = "c" }}, {{ compute = 1000, mem_frac = 0.0 }}, {{ unlock = "m" }}, {{ join = "w" }} ]
[thread.w]
ops = [ {{ lock = "m" }}, {{ wait = "c", mutex = "m" }}, {{ unlock = "m" }} ]
"#
        )
    };
    assert_eq!(broadcast_and_handoff_wakes(&cond("broadcast", 2)), (2, 1));
    assert_eq!(broadcast_and_handoff_wakes(&cond("signal", 1)), (0, 2));
    // Closing a queue lets every consumer waiting on it go; a push hands
    // an item to one.
    let close = r#"
name = "x"
[queue]
q = { capacity = 2 }
[thread.main]
ops = [ { spawn = "c" }, { sleep = 1000 }, { close = "q" }, { join = "c" } ]
[thread.c]
ops = [ { loop = "until-closed", body = [ { pop = "q" } ] } ]
"#;
    assert_eq!(broadcast_and_handoff_wakes(close), (1, 1));
    let push = r#"
name = "x"
[queue]
q = { capacity = 2 }
[thread.main]
ops = [ { spawn = "c" }, { sleep = 1000 }, { push = "q" }, { close = "q" }, { join = "c" } ]
[thread.c]
ops = [ { loop = "until-closed", body = [ { pop = "q" } ] } ]
"#;
    assert_eq!(broadcast_and_handoff_wakes(push), (0, 2));
}

#[test]
fn a_replayed_post_is_a_wake_all_only_when_the_recording_says_so() {
    // A replayed trace: main wakes two threads, one by a recorded wake-all
    // (a barrier's FUTEX_WAKE), the other by a call that woke one waiter.
    use colab_workload::{BenchInfo, Group, Op, Program};
    let compute = Op::Compute {
        work: 1e6,
        mem_frac: 0.0,
        cv: 0.0,
        imbalance: 0.0,
    };
    let group = |name: &str, ops: Vec<Op>| Group {
        name: name.into(),
        ops,
    };
    let spawn = |group| Op::Spawn { group, count: 1 };
    let p = Program {
        name: "replay".into(),
        n: 1,
        info: BenchInfo {
            description: String::new(),
            parallelism: String::new(),
            sync_rate: String::new(),
            comm_comp: String::new(),
        },
        groups: vec![
            group(
                "main",
                vec![
                    spawn(1),
                    spawn(2),
                    // Both wait before main goes on (one core).
                    Op::Sleep(1000),
                    compute.clone(),
                    Op::Post {
                        event: 0,
                        wake_all: true,
                    },
                    Op::Post {
                        event: 1,
                        wake_all: false,
                    },
                ],
            ),
            group("a", vec![Op::WaitEvent(0), compute.clone()]),
            group("b", vec![Op::WaitEvent(1), compute]),
        ],
        mutex_arrays: Vec::new(),
        num_mutexes: 0,
        barriers: Vec::new(),
        conds: Vec::new(),
        timers: Vec::new(),
        queues: Vec::new(),
        num_events: 2,
        total_threads: 3,
    };
    assert_eq!(wakes_by_kind(&Workload::alone(&p)), (1, 1));
}

#[test]
fn the_constant_predictor_hides_what_threads_do() {
    // A core-bound then a memory-bound phase, read at each sleep: the oracle
    // sees them differ, the constant predictor gives every reading S.
    let w = workload(
        "name = \"x\"\n[thread.main]\nops = [ { compute = 1000, mem_frac = 0.0 }, { sleep = 1000 }, \
         { compute = 1000, mem_frac = 0.9 }, { sleep = 1000 }, { compute = 10, mem_frac = 0.0 } ]",
    );
    let t = zero_cost(Topology::named("1B1S", CoreOrder::BigFirst).unwrap());
    let seen = |predictor| {
        let mut p = Probe(Vec::new(), Vec::new());
        let cfg = SimConfig {
            predictor,
            ..SimConfig::default()
        };
        simulate(&w, &t, &mut p, &cfg).unwrap();
        p.0
    };
    let oracle = seen(PredictorKind::Oracle);
    assert_eq!(oracle.len(), 3, "{oracle:?}");
    assert!((oracle[1].0 - oracle[2].0).abs() > 0.5, "{oracle:?}");
    let constant = seen(PredictorKind::Constant { speedup: 2.5 });
    assert_eq!(constant.len(), 3);
    for (i, &(s, e)) in constant.iter().enumerate() {
        assert_eq!((s, e), (2.5, 2.5), "wake-up {i}: {constant:?}");
    }
}

#[test]
fn two_threads_share_one_core_fairly() {
    let w = workload(
        r#"
name = "x"
[thread.main]
ops = [ { spawn = "w", count = 2 }, { join = "w" } ]
[thread.w]
ops = [ { compute = 50000, mem_frac = 0.0 } ]
"#,
    );
    let r = run(&w, "1B", "cfs").unwrap();
    // 100 ms of work on one core, no switch costs.
    assert_eq!(r.programs[0].turnaround_ns, 100 * MS);
    assert!(
        r.stats.context_switches > 4,
        "time-sliced: {}",
        r.stats.context_switches
    );
}

#[test]
fn mutex_serialises_and_charges_the_releaser() {
    // Two workers each hold the lock for 10 ms: the second waits ~10 ms, charged to the first.
    let w = workload(
        r#"
name = "x"
[mutex]
m = 1
[thread.main]
ops = [ { spawn = "w", count = 2 }, { join = "w" } ]
[thread.w]
ops = [ { critical = "m", compute = 10000, mem_frac = 0.0 } ]
"#,
    );
    let r = run(&w, "2B", "cfs").unwrap();
    assert_eq!(r.programs[0].turnaround_ns, 20 * MS);
    assert_eq!(r.stats.futex_waits, 2, "one lock wait + main's join");
    assert_eq!(
        (
            r.stats.waits.mutex,
            r.stats.waits.join,
            r.stats.waits.barrier
        ),
        (1, 1, 0),
        "{:?}",
        r.stats.waits
    );
}

#[test]
fn barrier_waits_for_the_slowest() {
    let w = workload(BARRIER_OF_THREE);
    let r = run(&w, "4B", "cfs").unwrap();
    assert_eq!(r.programs[0].turnaround_ns, 35 * MS);
}

#[test]
fn pipeline_queue_moves_every_item() {
    // Producer makes 10 items of 1 ms; consumer takes 2 ms each: 1 + 10 * 2 = 21 ms.
    let w = workload(
        r#"
name = "x"
[queue]
q = { capacity = 2 }
[thread.main]
ops = [ { spawn = "c" }, { loop = 10, body = [ { compute = 1000, mem_frac = 0.0 }, { push = "q" } ] }, { close = "q" }, { join = "c" } ]
[thread.c]
ops = [ { loop = "until-closed", body = [ { pop = "q" }, { compute = 2000, mem_frac = 0.0 } ] } ]
"#,
    );
    let r = run(&w, "2B", "cfs").unwrap();
    assert_eq!(r.programs[0].turnaround_ns, 21 * MS);
}

#[test]
fn condvar_signal_wakes_waiter() {
    let w = workload(
        r#"
name = "x"
cond = ["c"]
[mutex]
m = 1
[thread.main]
ops = [ { spawn = "w" }, { compute = 5000, mem_frac = 0.0 }, { lock = "m" }, { signal = "c" }, { unlock = "m" }, { join = "w" } ]
[thread.w]
ops = [ { lock = "m" }, { wait = "c", mutex = "m" }, { compute = 1000, mem_frac = 0.0 }, { unlock = "m" } ]
"#,
    );
    let r = run(&w, "2B", "cfs").unwrap();
    assert_eq!(r.programs[0].turnaround_ns, 6 * MS);
}

#[test]
fn lost_signal_is_a_reported_deadlock_not_a_hang() {
    // The waiter is told to wait after the only signal was sent.
    let w = workload(include_str!("../tests/fixtures/lost_signal.toml"));
    let e = run(&w, "2B", "cfs").unwrap_err();
    let msg = e.to_string();
    assert!(matches!(e, SimError::Deadlock { .. }), "{msg}");
    assert!(
        msg.contains("condition variable 'ready'") && msg.contains("join of group 'waiter'"),
        "{msg}"
    );
}

/// Runs `w` under CFS on one big core with a 5 ms limit of simulated time.
fn run_for_5_ms(w: &Workload) -> SimError {
    let t = zero_cost(Topology::named("1B", CoreOrder::BigFirst).unwrap());
    let mut p = colab_policies::by_name("cfs").unwrap();
    let cfg = SimConfig {
        max_time_ns: 5 * MS,
        ..SimConfig::default()
    };
    simulate(w, &t, p.as_mut(), &cfg).unwrap_err()
}

#[test]
fn a_run_past_the_time_limit_names_the_threads_still_live() {
    // 20 ms of compute against a 5 ms limit: the one thread is still running.
    let w = workload("name = \"x\"\n[thread.main]\nops = [ { compute = 20000, mem_frac = 0.0 } ]");
    let e = run_for_5_ms(&w);
    let msg = e.to_string();
    assert!(matches!(e, SimError::Timeout { .. }), "{msg}");
    assert!(
        msg.contains("within 5000000 ns")
            && msg.contains("thread 0 (x / main#0) is Running on core 0"),
        "{msg}"
    );
}

#[test]
fn a_report_of_many_live_threads_lists_the_first_and_counts_the_rest() {
    // 40 workers and the main thread, each still computing at 5 ms.
    let w = workload(
        r#"
name = "x"
[thread.main]
ops = [ { spawn = "w", count = 40 }, { join = "w" } ]
[thread.w]
ops = [ { compute = 20000, mem_frac = 0.0 } ]
"#,
    );
    let msg = run_for_5_ms(&w).to_string();
    assert_eq!(msg.matches("  thread ").count(), 32, "{msg}");
    assert!(msg.contains("  ... and 9 more"), "{msg}");
}

#[test]
fn sleep_blocks_without_using_the_core() {
    let w = workload(
        r#"
name = "x"
[thread.main]
ops = [ { spawn = "w" }, { sleep = 10000 }, { join = "w" } ]
[thread.w]
ops = [ { compute = 4000, mem_frac = 0.0 } ]
"#,
    );
    let r = run(&w, "1B", "cfs").unwrap();
    assert_eq!(r.programs[0].turnaround_ns, 10 * MS);
    assert_eq!(r.core_busy_ns[0], 4 * MS);
}

#[test]
fn same_seed_same_bytes_different_seed_may_differ() {
    let lib = Library::builtin();
    let w = lib.single("blackscholes", Some(4)).unwrap();
    let t = Topology::named("2B2S", CoreOrder::LittleFirst).unwrap();
    let go = |seed| {
        let mut p = colab_policies::by_name("colab").unwrap();
        let cfg = SimConfig {
            seed,
            ..SimConfig::default()
        };
        serde_json::to_string(&simulate(&w, &t, p.as_mut(), &cfg).unwrap()).unwrap()
    };
    assert_eq!(go(7), go(7));
}

#[test]
fn every_policy_finishes_every_builtin_benchmark() {
    let lib = Library::builtin();
    for name in lib.benchmarks.keys() {
        let w = lib.single(name, Some(2)).unwrap();
        for &(pol, _) in colab_policies::POLICIES {
            for order in CoreOrder::BOTH {
                let t = Topology::named("2B2S", order).unwrap();
                let mut p = colab_policies::by_name(pol).unwrap();
                let r = simulate(&w, &t, p.as_mut(), &SimConfig::default())
                    .unwrap_or_else(|e| panic!("{name} under {pol}: {e}"));
                assert!(r.makespan_ns > 0);
            }
        }
    }
}

#[test]
fn timeline_is_valid_chrome_trace_json() {
    let lib = Library::builtin();
    let w = lib.single("blackscholes", Some(2)).unwrap();
    let t = Topology::named("1B1S", CoreOrder::BigFirst).unwrap();
    let mut p = colab_policies::by_name("cfs").unwrap();
    let cfg = SimConfig {
        timeline: true,
        ..SimConfig::default()
    };
    let r = simulate(&w, &t, p.as_mut(), &cfg).unwrap();
    let tl = r.timeline.unwrap();
    let mut buf = Vec::new();
    tl.write_json(&mut buf).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&buf).unwrap();
    let evs = v["traceEvents"].as_array().unwrap();
    let slices = evs.iter().filter(|e| e["ph"] == "X").count();
    assert_eq!(slices, tl.slices());
    assert!(slices >= 3);
    // Slices on one core never overlap.
    let mut by_core: Vec<Vec<(f64, f64)>> = vec![Vec::new(); 2];
    for e in evs.iter().filter(|e| e["ph"] == "X") {
        let c = e["tid"].as_u64().unwrap() as usize;
        by_core[c].push((e["ts"].as_f64().unwrap(), e["dur"].as_f64().unwrap()));
    }
    for s in &mut by_core {
        s.sort_by(|a, b| a.0.total_cmp(&b.0));
        for w in s.windows(2) {
            assert!(w[0].0 + w[0].1 <= w[1].0 + 1e-6, "{w:?}");
        }
    }
    // The same slices as rows (the Python package's timeline), in ns.
    let rows = tl.run_slices();
    let xs: Vec<&serde_json::Value> = evs.iter().filter(|e| e["ph"] == "X").collect();
    assert_eq!(rows.len(), xs.len());
    for (row, e) in rows.iter().zip(xs) {
        assert_eq!(row.core as u64, e["tid"].as_u64().unwrap());
        assert!((row.start_ns as f64 / 1000.0 - e["ts"].as_f64().unwrap()).abs() < 1e-6);
        assert_eq!(row.thread_name, e["name"].as_str().unwrap());
        assert!(row.core_name.starts_with(&format!("core {}", row.core)));
    }
    // Every thread's CPU time is its slices'.
    let cpu: u64 = r.programs.iter().map(|p| p.cpu_ns).sum();
    let sliced: u64 = rows.iter().map(|s| s.end_ns - s.start_ns).sum();
    assert_eq!(cpu, sliced);
}

#[test]
fn idle_cores_pay_the_wakeup_latency() {
    // Main sleeps 5 ms (core idles), then computes 10 ms: 1 ms idle exit each
    // time the core starts from idle (at the start and after the sleep).
    let w = workload("name = \"x\"\n[thread.main]\nops = [ { sleep = 5000 }, { compute = 10000, mem_frac = 0.0 } ]");
    let mut t = zero_cost(Topology::named("1B", CoreOrder::BigFirst).unwrap());
    t.costs.wakeup_latency_ns = MS;
    let mut p = colab_policies::by_name("cfs").unwrap();
    let r = simulate(&w, &t, p.as_mut(), &SimConfig::default()).unwrap();
    assert_eq!(r.programs[0].turnaround_ns, 17 * MS);
}

#[test]
fn a_core_idle_longer_pays_its_deeper_idle_state() {
    // One core, a 3 ms deeper state after 1 ms idle: main computes, sleeps,
    // then computes 10 ms; the core starts from idle at time 0 (idle 0 ns).
    let turnaround = |before_us: u64, sleep_us: u64| {
        let w = workload(&format!(
            "name = \"x\"\n[thread.main]\nops = [ {{ compute = {before_us}, mem_frac = 0.0 }}, {{ sleep = {sleep_us} }}, {{ compute = 10000, mem_frac = 0.0 }} ]"
        ));
        let mut t = zero_cost(Topology::named("1B", CoreOrder::BigFirst).unwrap());
        t.costs.idle_exit = vec![colab_core::IdleExit {
            after_ns: MS,
            extra_ns: 3 * MS,
        }];
        let mut p = colab_policies::by_name("cfs").unwrap();
        simulate(&w, &t, p.as_mut(), &SimConfig::default())
            .unwrap()
            .programs[0]
            .turnaround_ns
    };
    assert_eq!(turnaround(1, 5_000), 18 * MS + 1_000);
    // Idle 0.5 ms: not deep enough, however long the core ran before.
    assert_eq!(turnaround(1, 500), 10 * MS + MS / 2 + 1_000);
    assert_eq!(turnaround(2_000, 500), 12 * MS + MS / 2);
}

fn run_restarting(w: &Workload, topo: &str, k: u32) -> SimResult {
    let t = zero_cost(Topology::named(topo, CoreOrder::BigFirst).unwrap());
    let mut p = colab_policies::by_name("cfs").unwrap();
    let cfg = SimConfig {
        predictor: PredictorKind::Oracle,
        restart_until: Some(k),
        ..SimConfig::default()
    };
    simulate(w, &t, p.as_mut(), &cfg).unwrap()
}

#[test]
fn out_of_bounds_restarts_and_costs_are_errors_not_endless_runs() {
    let w = workload("name = \"x\"\n[thread.main]\nops = [ { compute = 1000, mem_frac = 0.0 } ]");
    let t = zero_cost(Topology::named("1B", CoreOrder::BigFirst).unwrap());
    for k in [0, MAX_RESTART_UNTIL + 1, u32::MAX] {
        let mut p = colab_policies::by_name("cfs").unwrap();
        let cfg = SimConfig {
            restart_until: Some(k),
            ..SimConfig::default()
        };
        let e = simulate(&w, &t, p.as_mut(), &cfg).unwrap_err().to_string();
        assert!(e.contains(&format!("restart_until = {k}")), "{e}");
    }
    // A zero tick set after the machine was built is caught too.
    let mut t0 = t.clone();
    t0.costs.tick_ns = 0;
    let mut p = colab_policies::by_name("cfs").unwrap();
    let e = simulate(&w, &t0, p.as_mut(), &SimConfig::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("tick_ns = 0"), "{e}");
    assert_eq!(
        run_restarting(&w, "1B", MAX_RESTART_UNTIL).programs.len(),
        1
    );
}

#[test]
fn restarts_until_every_program_completed_k_times() {
    // A: 10 ms, B: 35 ms, one core each. B's third run ends at 105 ms; A has
    // completed 10 runs by then (its 11th is abandoned).
    let a = workload("name = \"a\"\n[thread.main]\nops = [ { compute = 10000, mem_frac = 0.0 } ]");
    let b = workload("name = \"b\"\n[thread.main]\nops = [ { compute = 35000, mem_frac = 0.0 } ]");
    let w = Workload {
        name: "ab".into(),
        classes: vec![],
        source: String::new(),
        programs: vec![a.programs[0].clone(), b.programs[0].clone()],
    };
    let r = run_restarting(&w, "2B", 3);
    assert_eq!(r.makespan_ns, 105 * MS);
    let by_name = |n: &str| r.programs.iter().find(|p| p.name == n).unwrap();
    assert_eq!(
        (by_name("a").turnaround_ns, by_name("a").completions),
        (10 * MS, 10)
    );
    assert_eq!(
        (by_name("b").turnaround_ns, by_name("b").completions),
        (35 * MS, 3)
    );
    assert_eq!(by_name("b").end_ns, 105 * MS);
    // Without restarts each runs once.
    let once = run(&w, "2B", "cfs").unwrap();
    assert!(once.programs.iter().all(|p| p.completions == 1));
    assert_eq!(once.makespan_ns, 35 * MS);
}

#[test]
fn a_restarted_program_gets_fresh_sync_objects() {
    // A pipeline (queue closed at the end) and a barrier: a second run that
    // saw the closed queue or a half-counted barrier would finish early or
    // deadlock. Alone on the machine every run takes the single-run time.
    let w = workload(
        r#"
name = "x"
[queue]
q = { capacity = 2 }
[barrier]
b = 2
[thread.main]
ops = [ { spawn = "c" }, { barrier = "b" }, { loop = 10, body = [ { compute = 1000, mem_frac = 0.0 }, { push = "q" } ] }, { close = "q" }, { join = "c" } ]
[thread.c]
ops = [ { barrier = "b" }, { loop = "until-closed", body = [ { pop = "q" }, { compute = 2000, mem_frac = 0.0 } ] } ]
"#,
    );
    let once = run(&w, "2B", "cfs").unwrap().programs[0].turnaround_ns;
    let r = run_restarting(&w, "2B", 3);
    assert_eq!(r.programs[0].completions, 3);
    assert_eq!(r.programs[0].turnaround_ns, once);
    assert_eq!(r.makespan_ns, 3 * once);
}

/// One reading: the core type and (event, count) pairs.
type Reading = (String, Vec<(String, f64)>);

/// A counter model that asks for fixed events, records every reading and
/// answers with a fixed prediction.
struct Recorder {
    events: Vec<String>,
    readings: std::sync::Mutex<Vec<Reading>>,
    answer: Option<(f64, f64)>,
}

impl Recorder {
    fn new(events: &[&str], answer: Option<(f64, f64)>) -> std::sync::Arc<Recorder> {
        std::sync::Arc::new(Recorder {
            events: events.iter().map(|s| s.to_string()).collect(),
            readings: Default::default(),
            answer,
        })
    }
}

impl crate::CounterModelPredictor for Recorder {
    fn events(&self, _: &str) -> Vec<String> {
        self.events.clone()
    }
    fn predict(&self, ty: &str, counts: &dyn Fn(&str) -> Option<f64>) -> Option<(f64, f64)> {
        let got = self
            .events
            .iter()
            .map(|e| (e.clone(), counts(e).expect("a requested event")))
            .collect();
        assert_eq!(counts("NOT_ASKED"), None);
        self.readings.lock().unwrap().push((ty.to_string(), got));
        self.answer
    }
}

fn counting(rec: &std::sync::Arc<Recorder>, seed: u64) -> SimConfig {
    SimConfig {
        seed,
        predictor: PredictorKind::Counters(crate::CounterPredictorRef(rec.clone())),
        ..SimConfig::default()
    }
}

use crate::counters::FIG5B_EVENTS as PAPER_EVENTS;

#[test]
fn asking_for_more_events_than_a_core_type_counts_is_an_error() {
    let w = workload("name = \"x\"\n[thread.main]\nops = [ { compute = 100, mem_frac = 0.2 } ]");
    let t = Topology::named("1B1S", CoreOrder::BigFirst).unwrap();
    let mut eight = PAPER_EVENTS.to_vec();
    eight.push("INST_RETIRED");
    let rec = Recorder::new(&eight, None);
    let mut p = colab_policies::by_name("cfs").unwrap();
    let err = simulate(&w, &t, p.as_mut(), &counting(&rec, 1)).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, SimError::Counters(_)), "{msg}");
    assert!(
        msg.contains("at most 7 events") && msg.contains("8 were requested"),
        "{msg}"
    );
    // Seven are fine.
    let rec = Recorder::new(&PAPER_EVENTS, None);
    let mut p = colab_policies::by_name("cfs").unwrap();
    simulate(&w, &t, p.as_mut(), &counting(&rec, 1)).unwrap();
}

#[test]
fn whole_run_counts_follow_the_counter_model_on_each_core_type() {
    use crate::counters::{per_work_of, Event, Signature, MICRO_EVENT_NOISE};
    // 20 ms of work at m = 0.4 alone on one core of each type.
    let w =
        workload("name = \"hand\"\n[thread.main]\nops = [ { compute = 20000, mem_frac = 0.4 } ]");
    let sig = Signature::of_program("hand");
    for topo in ["1B", "0B1S"] {
        let t = zero_cost(Topology::named(topo, CoreOrder::BigFirst).unwrap());
        let ct = t.core_types[t.core_type_of[0]].clone();
        for group in [
            &PAPER_EVENTS[..],
            &["INST_RETIRED", "SW_INCR", "BR_IMMED_RETIRED"],
        ] {
            let rec = Recorder::new(group, None);
            let mut p = colab_policies::by_name("cfs").unwrap();
            let r = simulate(&w, &t, p.as_mut(), &counting(&rec, 1)).unwrap();
            assert_eq!(r.counters.len(), 1);
            let tot = &r.counters[0];
            assert_eq!(tot.core_type, ct.name);
            let ns = 20_000_000.0 / ct.rate(0.4);
            assert!((tot.busy_ns - ns).abs() < 1.0, "{} vs {ns}", tot.busy_ns);
            for name in group {
                let e = Event::from_name(name).unwrap();
                let want = 20_000_000.0 * per_work_of(e, &sig, 0.4, &ct);
                let got = tot.get(name).unwrap();
                let tol = if e.is_exact() {
                    1e-6 * want.max(1.0)
                } else {
                    2.0 * MICRO_EVENT_NOISE * want
                };
                assert!(
                    (got - want).abs() <= tol,
                    "{name} on {topo}: {got} vs {want}"
                );
            }
            assert_eq!(tot.get("SW_INCR").unwrap_or(0.0), 0.0);
            // Readings went to the model, each taken on this core type.
            let readings = rec.readings.lock().unwrap();
            assert!(readings.len() > 2, "{}", readings.len());
            assert!(readings.iter().all(|(ty, _)| *ty == ct.name));
        }
    }
    // CPU_CYCLES = time on the core x its clock: 2 GHz on big, 1.2 GHz on little.
    let cyc = |topo: &str| {
        let t = zero_cost(Topology::named(topo, CoreOrder::BigFirst).unwrap());
        let rec = Recorder::new(&["CPU_CYCLES"], None);
        let mut p = colab_policies::by_name("cfs").unwrap();
        let r = simulate(&w, &t, p.as_mut(), &counting(&rec, 1)).unwrap();
        (
            r.counters[0].get("CPU_CYCLES").unwrap(),
            r.makespan_ns as f64,
        )
    };
    let (c, ns) = cyc("1B");
    assert!((c / ns - 2.0).abs() < 1e-6, "{c} {ns}");
    let (c, ns) = cyc("0B1S");
    assert!((c / ns - 1.2).abs() < 1e-6, "{c} {ns}");
}

#[test]
fn readings_are_taken_on_the_core_type_the_thread_ran_on() {
    use crate::counters::Signature;
    // Two core-bound threads on 1B1S: one runs on each core type. Cycles per
    // instruction tell the types apart: 1/ipc on big, 1.2/(0.318*2*ipc) on little.
    let w = workload(
        "name = \"two\"\n[thread.main]\nops = [ { spawn = \"w\" }, { compute = 20000, mem_frac = 0.0 }, { join = \"w\" } ]\n[thread.w]\nops = [ { compute = 20000, mem_frac = 0.0 } ]",
    );
    let t = zero_cost(Topology::named("1B1S", CoreOrder::BigFirst).unwrap());
    let rec = Recorder::new(&["CPU_CYCLES", "INST_RETIRED"], None);
    let mut p = colab_policies::by_name("cfs").unwrap();
    simulate(&w, &t, p.as_mut(), &counting(&rec, 1)).unwrap();
    let ipc = Signature::of_program("two").ipc_core;
    let readings = rec.readings.lock().unwrap();
    let mut seen = std::collections::BTreeSet::new();
    for (ty, c) in readings.iter() {
        let cpi = c[0].1 / c[1].1;
        let want = match ty.as_str() {
            "big" => 1.0 / ipc,
            _ => 1.2 / (0.6 * 0.53) / (2.0 * ipc),
        };
        assert!((cpi / want - 1.0).abs() < 1e-9, "{ty}: {cpi} vs {want}");
        seen.insert(ty.clone());
    }
    assert_eq!(seen.len(), 2, "{seen:?}");
}

#[test]
fn short_readings_keep_the_previous_prediction() {
    // 10 us of work is below MIN_READING_NS: the model is asked only for the
    // thread's first prediction. 100 us is read when the thread leaves.
    for (work, readings) in [(10, 0), (100, 1)] {
        let w = workload(&format!(
            "name = \"x\"\n[thread.main]\nops = [ {{ compute = {work}, mem_frac = 0.3 }} ]"
        ));
        let t = zero_cost(Topology::named("1B", CoreOrder::BigFirst).unwrap());
        let rec = Recorder::new(&["CPU_CYCLES"], Some((2.0, 2.0)));
        let mut p = colab_policies::by_name("cfs").unwrap();
        simulate(&w, &t, p.as_mut(), &counting(&rec, 1)).unwrap();
        // The first is the synthetic reading of a thread that has not run.
        assert_eq!(
            rec.readings.lock().unwrap().len(),
            1 + readings,
            "{work} us"
        );
    }
}

#[test]
fn counters_are_deterministic_and_leave_the_run_itself_alone() {
    let lib = Library::builtin();
    let w = lib.mix("Sync-2").unwrap();
    let t = Topology::named("2B2S", CoreOrder::LittleFirst).unwrap();
    let go = |seed| {
        let rec = Recorder::new(&PAPER_EVENTS, None);
        let mut p = colab_policies::by_name("cfs").unwrap();
        let r = simulate(&w, &t, p.as_mut(), &counting(&rec, seed)).unwrap();
        let n = rec.readings.lock().unwrap().len();
        (serde_json::to_string(&r).unwrap(), n, r)
    };
    let (a, na, ra) = go(4);
    let (b, nb, _) = go(4);
    assert_eq!(a, b);
    assert_eq!(na, nb);
    assert_eq!(ra.counters.len(), 2);
    // CFS ignores predictions, and counting draws from its own stream: the
    // schedule is the oracle run's, to the nanosecond and the joule.
    let mut p = colab_policies::by_name("cfs").unwrap();
    let cfg = SimConfig {
        seed: 4,
        predictor: PredictorKind::Oracle,
        ..SimConfig::default()
    };
    let o = simulate(&w, &t, p.as_mut(), &cfg).unwrap();
    assert!(o.counters.is_empty());
    let mut ra = ra;
    ra.counters.clear();
    assert_eq!(
        serde_json::to_string(&ra).unwrap(),
        serde_json::to_string(&o).unwrap()
    );
}

/// Reads the seven events of colab-tpds Fig. 5b and predicts from the bus
/// accesses per cycle (more memory traffic, less speedup).
struct PaperEvents;

impl crate::CounterModelPredictor for PaperEvents {
    fn events(&self, _: &str) -> Vec<String> {
        PAPER_EVENTS.map(String::from).to_vec()
    }
    fn predict(&self, _: &str, counts: &dyn Fn(&str) -> Option<f64>) -> Option<(f64, f64)> {
        let rate = counts("BUS_ACCESS")? / counts("CPU_CYCLES")?;
        Some(((3.0 - 100.0 * rate).max(1.0), 2.0))
    }
}

#[test]
fn the_paper_model_drives_colab_through_counters() {
    let lib = Library::builtin();
    let w = lib.mix("Comm-2").unwrap();
    let t = Topology::named("2B2S", CoreOrder::BigFirst).unwrap();
    let cfg = SimConfig {
        predictor: PredictorKind::Counters(crate::CounterPredictorRef::new(PaperEvents)),
        ..SimConfig::default()
    };
    for pol in ["colab", "colab-e"] {
        let mut p = colab_policies::by_name(pol).unwrap();
        let r = simulate(&w, &t, p.as_mut(), &cfg).unwrap();
        assert!(r.makespan_ns > 0);
        assert_eq!(r.counters[0].counts.len(), 7);
    }
}

/// Two threads on one core trading a lock 2,000 times (events scale with the
/// iterations: each lock, unlock and hand-off is one or more events).
const LOCKSTEP: &str = "name = \"x\"\n[mutex]\nm = 1\n[thread.main]\nops = [ { spawn = \"w\", count = 2 }, { join = \"w\" } ]\n[thread.w]\nops = [ { loop = 2000, body = [ { compute = 1, mem_frac = 0.0 }, { critical = \"m\", compute = 1, mem_frac = 0.0 } ] } ]";

#[test]
fn a_run_stops_at_its_event_budget_with_a_clear_error() {
    let w = workload(LOCKSTEP);
    let t = zero_cost(Topology::named("1B", CoreOrder::BigFirst).unwrap());
    let full = simulate(
        &w,
        &t,
        colab_policies::by_name("cfs").unwrap().as_mut(),
        &SimConfig::default(),
    )
    .unwrap();
    let n = full.stats.events;
    assert!(n > 2000, "{n}");
    let with = |max_events: u64| {
        let cfg = SimConfig {
            max_events,
            ..SimConfig::default()
        };
        simulate(
            &w,
            &t,
            colab_policies::by_name("cfs").unwrap().as_mut(),
            &cfg,
        )
    };
    // Exactly the events the run needs is enough; one fewer is not.
    assert_eq!(with(n).unwrap().stats.events, n);
    match with(n - 1) {
        Err(SimError::Budget {
            events,
            live,
            programs,
            ..
        }) => assert_eq!((events, live, programs), (n - 1, 1, 1)),
        other => panic!("expected the budget error, got {other:?}"),
    }
    let e = with(100).unwrap_err().to_string();
    assert!(
        e.contains("stopped after 100 events") && e.contains("--max-events"),
        "{e}"
    );
    for bad in [0, crate::MAX_EVENTS_LIMIT + 1] {
        let e = with(bad).unwrap_err().to_string();
        assert!(e.contains(&format!("max_events = {bad}")), "{e}");
    }
}

#[test]
fn long_runs_report_their_progress() {
    // 2 x 300,000 lock iterations: about 1.2 million events, over 2^20.
    let w = workload(&LOCKSTEP.replace("loop = 2000", "loop = 300000"));
    let t = zero_cost(Topology::named("1B", CoreOrder::BigFirst).unwrap());
    let mut seen = Vec::new();
    let r = crate::simulate_observed(
        &w,
        &t,
        colab_policies::by_name("cfs").unwrap().as_mut(),
        &SimConfig::default(),
        &mut |p| seen.push(p),
    )
    .unwrap();
    let every = crate::PROGRESS_EVERY;
    assert!(r.stats.events > every, "{}", r.stats.events);
    assert_eq!(seen.len() as u64, r.stats.events / every);
    for (i, p) in seen.iter().enumerate() {
        assert_eq!(p.events, (i as u64 + 1) * every);
        assert_eq!(p.max_events, crate::DEFAULT_MAX_EVENTS);
        assert!(p.now_ns <= r.makespan_ns);
    }
    assert!(seen.windows(2).all(|w| w[0].now_ns <= w[1].now_ns));
}

#[test]
fn a_loop_of_zero_time_operations_stops_at_the_budget() {
    // No event happens while it runs, so the budget counts operations too.
    let w = workload(
        "name = \"z\"\n[thread.main]\nops = [ { loop = 4294967295, body = [ { compute = 0, speedup = 1.5 } ] } ]",
    );
    let t = zero_cost(Topology::named("1B", CoreOrder::BigFirst).unwrap());
    let cfg = SimConfig {
        max_events: 1000,
        ..SimConfig::default()
    };
    match simulate(
        &w,
        &t,
        colab_policies::by_name("cfs").unwrap().as_mut(),
        &cfg,
    ) {
        Err(SimError::StepBudget {
            steps, per_event, ..
        }) => assert_eq!((steps, per_event), (1000 * crate::STEPS_PER_EVENT + 1, 16)),
        other => panic!("expected the step budget, got {other:?}"),
    }
}

/// Runs everything on core 0, which stays idle (asking to pick again with
/// `Pick::IdleUntil`) until `start`; `forever`: asks again every time.
struct WaitsFor {
    start: u64,
    forever: bool,
    asked: Vec<u64>,
}
impl colab_core::Policy for WaitsFor {
    fn name(&self) -> &'static str {
        "waits-for"
    }
    fn select_core(
        &mut self,
        _: &colab_core::SchedState,
        _: colab_core::ThreadId,
        _: colab_core::WakeKind,
    ) -> colab_core::CoreId {
        colab_core::CoreId(0)
    }
    fn pick_next(
        &mut self,
        st: &colab_core::SchedState,
        c: colab_core::CoreId,
    ) -> colab_core::Pick {
        self.asked.push(st.now);
        if self.forever || st.now < self.start {
            return colab_core::Pick::IdleUntil(if self.forever { st.now } else { self.start });
        }
        st.core(c)
            .rq
            .front()
            .map_or(colab_core::Pick::Idle, colab_core::Pick::Local)
    }
    fn should_preempt(
        &mut self,
        _: &colab_core::SchedState,
        _: colab_core::CoreId,
        _: colab_core::ThreadId,
    ) -> bool {
        false
    }
    fn slice_ns(
        &self,
        _: &colab_core::SchedState,
        _: colab_core::CoreId,
        _: colab_core::ThreadId,
    ) -> u64 {
        MS
    }
    fn tick(
        &mut self,
        _: &colab_core::SchedState,
        _: colab_core::CoreId,
        _: &mut Vec<colab_core::Action>,
    ) -> bool {
        false
    }
}

#[test]
fn an_idle_core_picks_again_when_it_asked_to() {
    // The thread waits on core 0 until 0.5 ms, well before the first tick
    // (4 ms): it runs from then, not from the tick.
    let w = workload("name = \"x\"\n[thread.main]\nops = [ { compute = 1000, mem_frac = 0.0 } ]");
    let t = zero_cost(Topology::named("1B", CoreOrder::BigFirst).unwrap());
    let mut p = WaitsFor {
        start: MS / 2,
        forever: false,
        asked: Vec::new(),
    };
    let r = simulate(&w, &t, &mut p, &SimConfig::default()).unwrap();
    assert_eq!(r.programs[0].turnaround_ns, MS / 2 + MS);
    // Picks: at the start, at the time asked, and when the thread ends.
    assert_eq!(p.asked, vec![0, MS / 2, MS / 2 + MS]);
}

#[test]
fn a_core_that_always_asks_to_pick_again_stops_at_the_budget() {
    // IdleUntil(now) means now + 1 ns: time moves, and every recheck is an
    // event, so the run ends at the event budget instead of spinning.
    let w = workload("name = \"x\"\n[thread.main]\nops = [ { compute = 1000, mem_frac = 0.0 } ]");
    let t = zero_cost(Topology::named("1B", CoreOrder::BigFirst).unwrap());
    let mut p = WaitsFor {
        start: 0,
        forever: true,
        asked: Vec::new(),
    };
    let cfg = SimConfig {
        max_events: 1000,
        ..SimConfig::default()
    };
    match simulate(&w, &t, &mut p, &cfg) {
        Err(SimError::Budget { events, .. }) => assert_eq!(events, 1000),
        other => panic!("expected the budget error, got {other:?}"),
    }
    assert!(
        p.asked.windows(2).all(|w| w[1] == w[0] + 1),
        "one pick per ns"
    );
}

/// COLAB's indexes (long queues in max_block_'s order, the threads on many
/// little cores) are checked against a pass at every pick in debug builds:
/// runs that reach both, with blocking levels and speedups that differ.
#[test]
fn colab_indexes_agree_with_passes_over_queues_and_cores() {
    let w = workload(
        r#"
name = "x"
[mutex]
m = 4
[thread.main]
ops = [ { spawn = "a", count = 200 }, { spawn = "b", count = 200 }, { join = "a" }, { join = "b" } ]
[thread.a]
ops = [ { loop = 4, body = [ { compute = 300, mem_frac = 0.0 }, { critical = "m", compute = 40, mem_frac = 0.0 }, { sleep = 100 } ] } ]
[thread.b]
ops = [ { loop = 4, body = [ { compute = 200, mem_frac = 0.7 }, { sleep = 50 } ] } ]
"#,
    );
    for pol in [
        "colab",
        "colab-e",
        "colab:prev-first=on:pull-min-us=1000",
        "colab:window=0.05",
        "colab:block-first=off",
    ] {
        // 400 threads on 8 cores: queues past the index threshold; on 4B68S
        // the threads on little cores are indexed.
        for topo in ["4B4S", "4B68S"] {
            let r = run(&w, topo, pol).unwrap_or_else(|e| panic!("{pol} on {topo}: {e}"));
            assert!(r.stats.migrations > 0, "{pol} on {topo}");
        }
    }
}

/// Every policy on a machine past the engine's and the state's thresholds
/// (a 72-core tree of completions, load buckets for a 68-core cluster) and
/// on one with long queues, where debug builds check each kept structure
/// against a scan.
#[test]
fn every_policy_runs_a_large_machine_with_its_indexes_checked() {
    let w = workload(
        r#"
name = "x"
[mutex]
m = 2
[thread.main]
ops = [ { spawn = "a", count = 90 }, { spawn = "b", count = 60 }, { join = "a" }, { join = "b" } ]
[thread.a]
ops = [ { loop = 3, body = [ { compute = 300, mem_frac = 0.0 }, { critical = "m", compute = 20, mem_frac = 0.0 }, { sleep = 100 } ] } ]
[thread.b]
ops = [ { loop = 3, body = [ { compute = 200, mem_frac = 0.7 }, { sleep = 50 } ] } ]
"#,
    );
    // 2B2S: queues of over 32 threads, whose kept orders are checked too.
    for &(pol, _) in colab_policies::POLICIES {
        for topo in ["4B68S", "2B2S"] {
            let r = run(&w, topo, pol).unwrap_or_else(|e| panic!("{pol} on {topo}: {e}"));
            assert!(r.stats.dispatches >= 150, "{pol} on {topo}");
        }
    }
}

/// A periodic timer wakes its thread at its start plus whole periods: a
/// missed period restarts the count from now (relative) or keeps its
/// times (absolute). One thread on one big core, no costs.
#[test]
fn a_timer_fires_at_whole_periods_from_the_threads_start() {
    let run = |mode: &str, first_us: u64| {
        let w = workload(&format!(
            "name = \"x\"\ntimer = [\"t\"]\n[thread.main]\nops = [ \
             {{ compute = {first_us}, mem_frac = 0.0 }}, {{ timer = \"t\", period = 3000, mode = \"{mode}\" }}, \
             {{ compute = 1000, mem_frac = 0.0 }}, {{ timer = \"t\", period = 3000, mode = \"{mode}\" }}, \
             {{ compute = 1000, mem_frac = 0.0 }}, {{ timer = \"t\", period = 3000, mode = \"{mode}\" }} ]"
        ));
        let t = zero_cost(Topology::named("1B", CoreOrder::BigFirst).unwrap());
        let mut p = colab_policies::by_name("cfs").unwrap();
        let r = simulate(&w, &t, p.as_mut(), &SimConfig::default()).unwrap();
        r.programs[0].turnaround_ns
    };
    // On time: fires at 3, 6 and 9 ms.
    assert_eq!(run("relative", 1000), 9 * MS);
    assert_eq!(run("absolute", 1000), 9 * MS);
    // The first period missed (4 ms of work): relative counts on from 4 ms
    // (fires at 7 and 10), absolute keeps 3 ms (fires at 6 and 9).
    assert_eq!(run("relative", 4000), 10 * MS);
    assert_eq!(run("absolute", 4000), 9 * MS);
}

/// rt-app task sets run as programs (crates/workload/tests/rt-app/): the
/// periodic one ends after its ten 16 ms periods when its 10 ms of work
/// fits each, and the lock chain and the handshake run to the end.
#[test]
fn rt_app_task_sets_run_with_their_periods() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../workload/tests/rt-app/");
    let run = |file: &str, topo: &str| {
        let w = Library::builtin().resolve(&format!("{dir}{file}")).unwrap();
        let t = zero_cost(Topology::named(topo, CoreOrder::BigFirst).unwrap());
        let mut p = colab_policies::by_name("cfs").unwrap();
        simulate(&w, &t, p.as_mut(), &SimConfig::default()).unwrap()
    };
    assert_eq!(
        run("periodic.json", "1B").programs[0].turnaround_ns,
        160 * MS
    );
    // Two big cores: the same.
    assert_eq!(
        run("periodic.json", "2B").programs[0].turnaround_ns,
        160 * MS
    );
    for f in ["lock-chain.json", "handshake.json"] {
        let r = run(f, "2B2S");
        assert!(r.programs[0].turnaround_ns > 0, "{f}");
    }
}
