use super::*;
use crate::format::BlockKind;

const MS: u64 = 1_000_000;

fn header() -> Header {
    Header {
        colab_trace: 1,
        command: vec!["demo".into()],
        host: "h".into(),
        kernel: "k".into(),
        cpus: 2,
        tool: "test".into(),
        recorded_unix_s: 0,
        overhead_ns: None,
    }
}

/// main (100) computes 5 ms, creates 101, computes 5 ms more, then waits on a
/// futex until 101, after 10 ms of its own work, wakes it; main then computes
/// 4 ms and exits.
fn demo() -> Trace {
    let events = vec![
        Event::Thread {
            tid: 100,
            parent: None,
            comm: "demo".into(),
            t: 0,
        },
        Event::Thread {
            tid: 101,
            parent: Some(100),
            comm: "worker".into(),
            t: 5 * MS,
        },
        Event::Run {
            tid: 101,
            cpu: 1,
            start: 6 * MS,
            end: 16 * MS,
        },
        Event::Run {
            tid: 100,
            cpu: 0,
            start: 0,
            end: 10 * MS,
        },
        Event::Block {
            tid: 100,
            t: 10 * MS,
            kind: BlockKind::Futex,
            addr: Some("0x10".into()),
        },
        Event::FutexWake {
            tid: 101,
            t: 16 * MS,
            addr: "0x10".into(),
        },
        Event::Wake {
            tid: 100,
            t: 16 * MS,
            waker: Some(101),
        },
        Event::Exit {
            tid: 101,
            t: 16 * MS,
        },
        Event::Run {
            tid: 100,
            cpu: 0,
            start: 16 * MS,
            end: 20 * MS,
        },
        Event::Exit {
            tid: 100,
            t: 20 * MS,
        },
    ];
    Trace {
        header: header(),
        events,
    }
}

#[test]
fn round_trips_through_text() {
    // Events in a file are in time order (a run is placed at its end).
    let mut sorted = demo();
    sorted.events.sort_by_key(|e| e.time());
    assert_eq!(Trace::parse("t.trace", &sorted.to_jsonl()).unwrap(), sorted);
}

#[test]
fn bad_files_name_the_line() {
    let good = {
        let mut t = demo();
        t.events.sort_by_key(|e| e.time());
        t.to_jsonl()
    };
    let e = Trace::parse("x.trace", "").unwrap_err();
    assert!(e.to_string().contains("x.trace: empty file"), "{e}");
    let e = Trace::parse("x.trace", "  demo 100 [000] 1.0: sched:sched_switch: ...\n").unwrap_err();
    assert!(
        matches!(e, TraceError::Foreign { .. }) && e.to_string().contains("line 1"),
        "{e}"
    );
    let e = Trace::parse(
        "x.trace",
        &good.replacen("\"colab_trace\":1", "\"colab_trace\":9", 1),
    )
    .unwrap_err();
    assert!(matches!(e, TraceError::Version { found: 9, .. }), "{e}");
    let mut lines: Vec<&str> = good.lines().collect();
    lines[3] = "{\"ev\":\"run\",\"tid\":1}";
    let e = Trace::parse("x.trace", &(lines.join("\n") + "\n")).unwrap_err();
    assert!(e.to_string().starts_with("x.trace: line 4:"), "{e}");
    // Cut in the middle of the last line.
    let cut = &good[..good.len() - 7];
    let e = Trace::parse("x.trace", cut).unwrap_err();
    assert!(
        matches!(e, TraceError::Truncated { .. }) && e.to_string().contains("truncated"),
        "{e}"
    );
    // Out of time order.
    let mut lines: Vec<String> = good.lines().map(String::from).collect();
    lines.swap(2, 6);
    let e = Trace::parse("x.trace", &(lines.join("\n") + "\n")).unwrap_err();
    assert!(e.to_string().contains("time order"), "{e}");
}

#[test]
fn replay_keeps_who_waits_for_whom() {
    let p = to_program(
        &demo(),
        &ReplayOptions {
            name: "demo".into(),
            speedup: 2.0,
            thread_speedup: Default::default(),
            keep_tracing_overhead: false,
        },
    )
    .unwrap();
    assert_eq!(p.total_threads, 2);
    assert_eq!(p.num_events, 1);
    let main = &p.groups[0].ops;
    // compute 5, spawn, compute 5, wait, compute 4
    let kinds: Vec<&str> = main
        .iter()
        .map(|o| match o {
            colab_workload::Op::Compute { .. } => "c",
            colab_workload::Op::Spawn { .. } => "s",
            colab_workload::Op::WaitEvent(_) => "w",
            _ => "?",
        })
        .collect();
    assert_eq!(kinds, ["c", "s", "c", "w", "c"]);
    assert!(matches!(
        p.groups[1].ops.last(),
        Some(colab_workload::Op::Post(0))
    ));
}

#[test]
fn timer_wakes_become_sleeps() {
    let events = vec![
        Event::Thread {
            tid: 7,
            parent: None,
            comm: "s".into(),
            t: 0,
        },
        Event::Run {
            tid: 7,
            cpu: 0,
            start: 0,
            end: MS,
        },
        Event::Block {
            tid: 7,
            t: MS,
            kind: BlockKind::Sleep,
            addr: None,
        },
        Event::Wake {
            tid: 7,
            t: 4 * MS,
            waker: None,
        },
        Event::Run {
            tid: 7,
            cpu: 0,
            start: 4 * MS,
            end: 5 * MS,
        },
    ];
    let p = to_program(
        &Trace {
            header: header(),
            events,
        },
        &ReplayOptions {
            name: "s".into(),
            speedup: 2.0,
            thread_speedup: Default::default(),
            keep_tracing_overhead: false,
        },
    )
    .unwrap();
    assert!(p.groups[0].ops.contains(&colab_workload::Op::Sleep(3 * MS)));
    let e = to_program(
        &demo(),
        &ReplayOptions {
            name: "d".into(),
            speedup: 9.0,
            thread_speedup: Default::default(),
            keep_tracing_overhead: false,
        },
    )
    .unwrap_err();
    assert!(e.to_string().contains("speedup 9"), "{e}");
}

#[test]
fn replayed_turnaround_follows_the_machine() {
    use colab_core::{CoreOrder, Costs, Topology};
    let p = to_program(
        &demo(),
        &ReplayOptions {
            name: "demo".into(),
            speedup: 2.0,
            thread_speedup: Default::default(),
            keep_tracing_overhead: false,
        },
    )
    .unwrap();
    let w = colab_workload::Workload {
        name: "demo".into(),
        classes: vec![],
        source: String::new(),
        programs: vec![p],
    };
    let machine = |n: usize| {
        let text = format!(
            "name = \"m\"\n[[core_types]]\nname = \"host\"\ncompute_rate = 1.0\nmemory_rate = 1.0\nactive_power_w = 0.0\nidle_power_w = 0.0\n[[clusters]]\ncore_type = \"host\"\ncores = {n}\n"
        );
        let mut t = Topology::from_toml(&text, CoreOrder::BigFirst).unwrap();
        t.costs = Costs {
            context_switch_ns: 0,
            migration_local_ns: 0,
            migration_cross_ns: 0,
            ..Costs::default()
        };
        t
    };
    let run = |n| {
        let mut pol = colab_policies::by_name("cfs").unwrap();
        colab_sim::simulate(
            &w,
            &machine(n),
            pol.as_mut(),
            &colab_sim::SimConfig::default(),
        )
        .unwrap()
        .programs[0]
            .turnaround_ns
    };
    // Two cores: the worker runs beside main and wakes it at 15 ms; main ends at 19 ms.
    assert_eq!(run(2), 19 * MS);
    // One core: all 24 ms of CPU work in sequence.
    assert_eq!(run(1), 24 * MS);
}

#[test]
fn per_thread_speedups_override_the_default() {
    let mut per = std::collections::BTreeMap::new();
    per.insert("worker".to_string(), 3.0);
    let opts = ReplayOptions {
        name: "demo".into(),
        speedup: 1.5,
        thread_speedup: per,
        keep_tracing_overhead: false,
    };
    let p = to_program(&demo(), &opts).unwrap();
    let mem = |g: usize| {
        p.groups[g].ops.iter().find_map(|o| match o {
            colab_workload::Op::Compute { mem_frac, .. } => Some(*mem_frac),
            _ => None,
        })
    };
    let sp = |m: Option<f64>| colab_workload::reference_speedup(m.unwrap());
    assert!((sp(mem(0)) - 1.5).abs() < 1e-9, "main keeps the default");
    assert!((sp(mem(1)) - 3.0).abs() < 1e-9, "the worker gets its own");
    let mut bad = std::collections::BTreeMap::new();
    bad.insert("worker".to_string(), 7.0);
    let e = to_program(
        &demo(),
        &ReplayOptions {
            name: "d".into(),
            speedup: 2.0,
            thread_speedup: bad,
            keep_tracing_overhead: false,
        },
    )
    .unwrap_err();
    assert!(e.to_string().contains("thread 'worker'"), "{e}");
}

/// Total compute work of each group of a replayed program.
fn compute_per_group(p: &colab_workload::Program) -> Vec<f64> {
    p.groups
        .iter()
        .map(|g| {
            g.ops
                .iter()
                .map(|o| match o {
                    colab_workload::Op::Compute { work, .. } => *work,
                    _ => 0.0,
                })
                .sum()
        })
        .collect()
}

#[test]
fn replay_subtracts_the_recorded_tracing_overhead() {
    let mut t = demo();
    t.header.overhead_ns = Some(crate::overhead::Overhead {
        switch: 1000.0,
        syscall: 400.0,
    });
    let opts = |keep| ReplayOptions {
        name: "demo".into(),
        speedup: 2.0,
        thread_speedup: Default::default(),
        keep_tracing_overhead: keep,
    };
    let kept = compute_per_group(&to_program(&t, &opts(true)).unwrap());
    assert_eq!(kept, [(10 + 4) as f64 * MS as f64, 10.0 * MS as f64]);
    let p = to_program(&t, &opts(false)).unwrap();
    let net = compute_per_group(&p);
    // main: two runs (two switches) and one futex wait (a system call).
    assert_eq!(net[0], 14.0 * MS as f64 - 2.0 * 1000.0 - 400.0);
    // worker: one run, one futex wake (a call) and the wake-up it caused.
    assert_eq!(net[1], 10.0 * MS as f64 - 1000.0 - 400.0 - 200.0);
    // main's first 5 ms before the spawn carry no event: untouched.
    assert!(
        matches!(p.groups[0].ops[0], colab_workload::Op::Compute { work, .. } if work == 5.0 * MS as f64),
        "{:?}",
        p.groups[0].ops[0]
    );
    // A header without a measurement replays the recorded time.
    t.header.overhead_ns = None;
    assert_eq!(
        compute_per_group(&to_program(&t, &opts(false)).unwrap()),
        kept
    );
}

#[test]
fn overhead_larger_than_a_run_leaves_it_empty_not_negative() {
    let mut t = demo();
    t.header.overhead_ns = Some(crate::overhead::Overhead {
        switch: 20.0 * MS as f64,
        syscall: 0.0,
    });
    let p = to_program(
        &t,
        &ReplayOptions {
            name: "demo".into(),
            speedup: 2.0,
            thread_speedup: Default::default(),
            keep_tracing_overhead: false,
        },
    )
    .unwrap();
    assert_eq!(compute_per_group(&p), [0.0, 0.0]);
    // The dependencies survive: main still waits for the worker's post.
    assert!(p.groups[0].ops.contains(&colab_workload::Op::WaitEvent(0)));
    assert!(p.groups[1].ops.contains(&colab_workload::Op::Post(0)));
}
