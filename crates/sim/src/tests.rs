//! Semantics of the machine and the primitives, on hand-built workloads.

use crate::{simulate, PredictorKind, SimConfig, SimError, SimResult};
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

#[test]
fn threads_see_a_predicted_energy_ratio() {
    // With the oracle, the prediction is the true big/little energy per work:
    // core-bound work costs (1.5 / 1) / (0.25 / 0.318) on big over little.
    let w = workload("name = \"x\"\n[thread.main]\nops = [ { compute = 1000, mem_frac = 0.0 } ]");
    let t = zero_cost(Topology::named("1B1S", CoreOrder::BigFirst).unwrap());
    struct Probe(Vec<f64>);
    impl colab_core::Policy for Probe {
        fn name(&self) -> &'static str {
            "probe"
        }
        fn select_core(
            &mut self,
            st: &colab_core::SchedState,
            t: colab_core::ThreadId,
            _: colab_core::WakeKind,
        ) -> colab_core::CoreId {
            self.0.push(st.thread(t).predicted_energy_ratio);
            colab_core::CoreId(0)
        }
        fn pick_next(
            &mut self,
            st: &colab_core::SchedState,
            c: colab_core::CoreId,
        ) -> colab_core::Pick {
            st.core(c)
                .rq
                .first()
                .map_or(colab_core::Pick::Idle, |&t| colab_core::Pick::Local(t))
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
    let mut p = Probe(Vec::new());
    let cfg = SimConfig {
        predictor: PredictorKind::Oracle,
        ..SimConfig::default()
    };
    simulate(&w, &t, &mut p, &cfg).unwrap();
    let want = 1.5 / (0.25 / (0.6 * 0.53));
    assert!((p.0[0] - want).abs() < 1e-9, "{:?} vs {want}", p.0);
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
}

#[test]
fn barrier_waits_for_the_slowest() {
    let w = workload(
        r#"
name = "x"
[barrier]
b = 3
[thread.main]
ops = [ { spawn = "w", count = 2 }, { compute = 30000, mem_frac = 0.0 }, { barrier = "b" }, { join = "w" } ]
[thread.w]
ops = [ { compute = 10000, mem_frac = 0.0 }, { barrier = "b" }, { compute = 5000, mem_frac = 0.0 } ]
"#,
    );
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
    let w = workload(
        r#"
name = "x"
cond = ["c"]
[mutex]
m = 1
[thread.main]
ops = [ { spawn = "w" }, { lock = "m" }, { signal = "c" }, { unlock = "m" }, { join = "w" } ]
[thread.w]
ops = [ { compute = 1000, mem_frac = 0.0 }, { lock = "m" }, { wait = "c", mutex = "m" }, { unlock = "m" } ]
"#,
    );
    let e = run(&w, "2B", "cfs").unwrap_err();
    let msg = e.to_string();
    assert!(matches!(e, SimError::Deadlock { .. }), "{msg}");
    assert!(
        msg.contains("condition variable 'c'") && msg.contains("join of group 'w'"),
        "{msg}"
    );
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
