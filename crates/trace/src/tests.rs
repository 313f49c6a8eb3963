use super::*;
use crate::format::BlockKind;
use crate::replay::ReplayError;
use colab_workload::Op;

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
        status: None,
        others: None,
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
            nr_wake: None,
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
    // Out of time order: the last event moved back to 1 ns.
    let mut lines: Vec<String> = good.lines().map(String::from).collect();
    let n = lines.len();
    let last = lines[n - 1].clone();
    assert!(last.contains(r#""ev":"exit""#), "{last}");
    let t_at = last.find(r#""t":"#).unwrap();
    lines[n - 1] = format!("{}\"t\":1}}", &last[..t_at]);
    let e = Trace::parse("x.trace", &(lines.join("\n") + "\n")).unwrap_err();
    assert!(e.to_string().contains(&format!("line {n}: ")), "{e}");
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
            sleep_unnamed_wakes: false,
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
        Some(colab_workload::Op::Post {
            event: 0,
            wake_all: false
        })
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
            sleep_unnamed_wakes: false,
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
            sleep_unnamed_wakes: false,
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
            sleep_unnamed_wakes: false,
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
        sleep_unnamed_wakes: false,
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
            sleep_unnamed_wakes: false,
        },
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("--thread-speedup worker: speedup 7"),
        "{e}"
    );
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
        sleep_unnamed_wakes: false,
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
            sleep_unnamed_wakes: false,
        },
    )
    .unwrap();
    assert_eq!(compute_per_group(&p), [0.0, 0.0]);
    // The dependencies survive: main still waits for the worker's post.
    assert!(p.groups[0].ops.contains(&colab_workload::Op::WaitEvent(0)));
    assert!(p.groups[1].ops.contains(&colab_workload::Op::Post {
        event: 0,
        wake_all: false
    }));
}

#[test]
fn the_program_status_round_trips_and_old_headers_have_none() {
    use crate::format::ProgramStatus;
    for (st, json, code) in [
        (ProgramStatus::Exited(0), r#""status":{"exited":0}"#, 0),
        (ProgramStatus::Exited(3), r#""status":{"exited":3}"#, 3),
        (ProgramStatus::Exited(300), r#""status":{"exited":300}"#, 1),
        (ProgramStatus::Killed(11), r#""status":{"killed":11}"#, 139),
    ] {
        let t = Trace {
            header: Header {
                status: Some(st),
                ..header()
            },
            events: Vec::new(),
        };
        let text = t.to_jsonl();
        assert!(text.contains(json), "{text}");
        assert_eq!(Trace::parse("t", &text).unwrap().header.status, Some(st));
        assert_eq!(st.shell_code(), code, "{st}");
        assert_eq!(st.success(), code == 0);
    }
    let old = Trace {
        header: header(),
        events: Vec::new(),
    }
    .to_jsonl();
    assert!(!old.contains("status"), "{old}");
    assert_eq!(Trace::parse("t", &old).unwrap().header.status, None);
    let bad = old.replacen('}', r#","status":{"crashed":1}}"#, 1);
    assert!(Trace::parse("t", &bad).is_err(), "{bad}");
}

/// Four threads named alike, as real programs' threads are: the root, two
/// workers it creates and a third created by the first worker.
fn same_name_trace() -> Trace {
    let ev = |tid: u32, parent: Option<u32>, t: u64| Event::Thread {
        tid,
        parent,
        comm: "app".into(),
        t,
    };
    let run = |tid: u32, start: u64| Event::Run {
        tid,
        cpu: 0,
        start,
        end: start + 1_000_000,
    };
    Trace {
        header: header(),
        events: vec![
            ev(10, None, 0),
            run(10, 0),
            ev(11, Some(10), 1_000_000),
            ev(12, Some(10), 1_000_000),
            run(11, 1_000_000),
            ev(13, Some(11), 2_000_000),
            run(12, 2_000_000),
            run(13, 3_000_000),
        ],
    }
}

fn mem_fracs(sel: &[(&str, f64)]) -> Result<Vec<f64>, ReplayError> {
    let opts = ReplayOptions {
        name: "p".into(),
        speedup: 2.0,
        thread_speedup: sel.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        keep_tracing_overhead: false,
        sleep_unnamed_wakes: false,
    };
    let p = to_program(&same_name_trace(), &opts)?;
    Ok(p.groups
        .iter()
        .map(|g| {
            g.ops
                .iter()
                .find_map(|o| match o {
                    Op::Compute { mem_frac, .. } => Some(*mem_frac),
                    _ => None,
                })
                .expect("every thread computes")
        })
        .collect())
}

#[test]
fn thread_speedups_select_by_name_order_and_root() {
    use colab_workload::mem_frac_for_speedup as m;
    let (d, a, b, c) = (
        m(2.0).unwrap(),
        m(3.0).unwrap(),
        m(1.5).unwrap(),
        m(1.2).unwrap(),
    );
    assert_eq!(mem_fracs(&[]).unwrap(), vec![d, d, d, d]);
    assert_eq!(mem_fracs(&[("app", 3.0)]).unwrap(), vec![a, a, a, a]);
    // The root and the third thread of that name (tid 12: order of
    // appearance) win over the name, whatever the keys' order.
    assert_eq!(
        mem_fracs(&[("app", 3.0), ("@root", 1.5), ("app#3", 1.2)]).unwrap(),
        vec![b, a, c, a]
    );
    assert_eq!(mem_fracs(&[("app#4", 1.5)]).unwrap(), vec![d, d, d, b]);
}

#[test]
fn thread_speedup_selectors_that_match_nothing_are_errors() {
    for (sel, want) in [
        ("nosuch", "no thread of the trace matches"),
        ("app#5", "no thread of the trace matches"),
        ("app#0", "K counting from 1"),
        ("@main", "only @-selector is @root"),
        ("", "empty thread name"),
    ] {
        let e = mem_fracs(&[(sel, 1.5)]).unwrap_err().to_string();
        assert!(e.contains(want), "{sel}: {e}");
        assert!(e.contains("the trace's threads: app x4"), "{sel}: {e}");
    }
    let e = mem_fracs(&[("app", 0.5)]).unwrap_err().to_string();
    assert!(e.contains("--thread-speedup app"), "{e}");
}

/// A consistent two-thread trace as text; `bad` cases below edit it.
const GOOD: &str = r#"{"colab_trace":1,"command":["demo"],"cpus":2}
{"ev":"thread","tid":100,"parent":null,"comm":"demo","t":0}
{"ev":"thread","tid":101,"parent":100,"comm":"worker","t":5}
{"ev":"run","tid":100,"cpu":0,"start":0,"end":10}
{"ev":"block","tid":100,"t":10,"kind":"futex","addr":"0x10"}
{"ev":"run","tid":101,"cpu":1,"start":6,"end":16}
{"ev":"wake","tid":100,"t":16,"waker":101}
{"ev":"exit","tid":101,"t":16}
{"ev":"run","tid":100,"cpu":0,"start":16,"end":20}
{"ev":"exit","tid":100,"t":20}
"#;

#[test]
fn inconsistent_traces_are_refused_naming_the_line() {
    assert!(Trace::parse("t", GOOD).is_ok());
    let line = |n: usize| GOOD.lines().nth(n - 1).unwrap();
    // (what to change, the line the error names, words it must contain)
    let cases: Vec<(String, usize, &str)> = vec![
        // A run of a thread never declared (a phantom thread).
        (
            GOOD.replace(
                line(6),
                r#"{"ev":"run","tid":102,"cpu":1,"start":6,"end":16}"#,
            ),
            6,
            "thread 102 before its `thread` line",
        ),
        // Declared twice.
        (
            GOOD.replace(line(3), &format!("{}\n{}", line(3), line(3))),
            4,
            "declared again (first on line 3)",
        ),
        // Its own parent.
        (
            GOOD.replace(r#""parent":100"#, r#""parent":101"#),
            3,
            "its own parent",
        ),
        // A cycle: 100's parent is 101, declared after it with parent 100.
        (
            GOOD.replace(r#""parent":null"#, r#""parent":101"#),
            3,
            "parent cycle",
        ),
        // Something after the exit.
        (
            GOOD.replace(
                line(8),
                &format!(
                    "{}\n{}",
                    line(8),
                    r#"{"ev":"futex_wake","tid":101,"t":17,"addr":"0x10"}"#
                ),
            ),
            9,
            "after its exit at 16 ns (line 8)",
        ),
        // A block never woken: the wake removed; the next run is refused.
        (
            GOOD.replace(&format!("{}\n", line(7)), ""),
            8,
            "blocked at 10 ns (line 5) and was not woken",
        ),
        // Blocked at the end of the trace.
        (
            GOOD.replace(line(10), r#"{"ev":"block","tid":100,"t":20,"kind":"io"}"#),
            10,
            "never woken",
        ),
    ];
    for (text, at, want) in cases {
        let e = Trace::parse("x.trace", &text).unwrap_err().to_string();
        assert!(
            e.contains(&format!("x.trace: line {at}: ")) && e.contains(want),
            "want line {at} / {want:?}, got: {e}\n{text}"
        );
    }
}

#[test]
fn a_trace_may_not_declare_more_threads_than_a_workload_may_run() {
    let mut text = String::from("{\"colab_trace\":1,\"command\":[\"x\"],\"cpus\":1}\n");
    for tid in 0..=crate::check::MAX_THREADS as u32 {
        text.push_str(&format!(
            "{{\"ev\":\"thread\",\"tid\":{tid},\"parent\":null,\"comm\":\"x\",\"t\":0}}\n"
        ));
    }
    let e = Trace::parse("big", &text).unwrap_err().to_string();
    let line = crate::check::MAX_THREADS + 2;
    assert!(
        e.contains(&format!("line {line}: more than 4096 threads")),
        "{e}"
    );
}

/// A barrier of three in a recording: main (1) starts 2 and 3, which block
/// on word B at 2 and 3 ms; main's FUTEX_WAKE on B at 8 ms lets both go.
/// The recorder names main as the waker of 2 (woken at 8 ms) but not of 3,
/// which the recording machine left waiting for a CPU until 12 ms. Each
/// worker then runs 2 ms; main ends at 9 ms. `nr_wake`: what the call
/// asked for, if recorded.
fn barrier_with_an_unnamed_wake(nr_wake: Option<u32>) -> Trace {
    let th = |tid, t| Event::Thread {
        tid,
        parent: (tid != 1).then_some(1),
        comm: "b".into(),
        t,
    };
    let run = |tid, start, end| Event::Run {
        tid,
        cpu: 0,
        start,
        end,
    };
    let block = |tid, t| Event::Block {
        tid,
        t,
        kind: BlockKind::Futex,
        addr: Some("B".into()),
    };
    let mut events = vec![
        th(1, 0),
        th(2, 0),
        th(3, 0),
        run(2, 0, 2 * MS),
        block(2, 2 * MS),
        run(3, 0, 3 * MS),
        block(3, 3 * MS),
        Event::FutexWake {
            tid: 1,
            t: 8 * MS,
            addr: "B".into(),
            nr_wake,
        },
        Event::Wake {
            tid: 2,
            t: 8 * MS,
            waker: Some(1),
        },
        run(1, 0, 9 * MS),
        Event::Exit { tid: 1, t: 9 * MS },
        run(2, 8 * MS, 10 * MS),
        Event::Exit { tid: 2, t: 10 * MS },
        Event::Wake {
            tid: 3,
            t: 12 * MS,
            waker: None,
        },
        run(3, 12 * MS, 14 * MS),
        Event::Exit { tid: 3, t: 14 * MS },
    ];
    events.sort_by_key(|e| e.time());
    Trace {
        header: header(),
        events,
    }
}

fn replay_barrier(sleep_unnamed_wakes: bool) -> colab_workload::Program {
    replay_barrier_asking(sleep_unnamed_wakes, None)
}

fn replay_barrier_asking(
    sleep_unnamed_wakes: bool,
    nr_wake: Option<u32>,
) -> colab_workload::Program {
    let opts = ReplayOptions {
        name: "b".into(),
        speedup: 2.0,
        thread_speedup: Default::default(),
        keep_tracing_overhead: false,
        sleep_unnamed_wakes,
    };
    to_program(&barrier_with_an_unnamed_wake(nr_wake), &opts).unwrap()
}

#[test]
fn an_unnamed_wake_up_waits_for_the_call_that_released_it() {
    let p = replay_barrier(false);
    // Both workers wait for main, and main posts both as a wake-all (the
    // word's one release let two waiters go: a broadcast word) at 8 ms of
    // its CPU work, where it made the call.
    assert_eq!(p.num_events, 2);
    let posts: Vec<&Op> = p.groups[0]
        .ops
        .iter()
        .filter(|o| matches!(o, Op::Post { .. }))
        .collect();
    assert_eq!(
        posts,
        [
            &Op::Post {
                event: 0,
                wake_all: true
            },
            &Op::Post {
                event: 1,
                wake_all: true
            }
        ]
    );
    assert!(
        p.groups[2].ops.contains(&Op::WaitEvent(1)),
        "{:?}",
        p.groups[2].ops
    );
    assert_eq!(compute_per_group(&p)[0], 9.0 * MS as f64);
    // Asked to, the unnamed wake-up is a sleep of its recorded 9 ms.
    let old = replay_barrier(true);
    assert_eq!(old.num_events, 1);
    assert!(old.groups[2].ops.contains(&Op::Sleep(9 * MS)));
}

#[test]
fn a_recorded_nr_wake_decides_whether_a_release_is_a_wake_all() {
    let wake_alls = |nr_wake| {
        replay_barrier_asking(false, nr_wake).groups[0]
            .ops
            .iter()
            .filter(|o| matches!(o, Op::Post { wake_all: true, .. }))
            .count()
    };
    // The word alone says barrier (its one release let two go) ...
    assert_eq!(wake_alls(None), 2);
    // ... but a call recorded asking for one waiter is a hand-off, and
    // one asking for every waiter (INT_MAX) a wake-all.
    assert_eq!(wake_alls(Some(1)), 0);
    assert_eq!(wake_alls(Some(i32::MAX as u32)), 2);
}

#[test]
fn a_released_waiter_follows_its_releaser_on_a_faster_machine() {
    use colab_core::{CoreOrder, Topology};
    // Three cores at twice the recording machine's speed (memory too).
    let text = "name = \"m\"\n[[core_types]]\nname = \"fast\"\ncompute_rate = 2.0\nmemory_rate = 2.0\nactive_power_w = 0.0\nidle_power_w = 0.0\n[[clusters]]\ncore_type = \"fast\"\ncores = 3\n";
    let mut machine = Topology::from_toml(text, CoreOrder::BigFirst).unwrap();
    machine.costs = colab_core::Costs {
        context_switch_ns: 0,
        migration_local_ns: 0,
        migration_cross_ns: 0,
        wakeup_latency_ns: 0,
        ..colab_core::Costs::default()
    };
    let turnaround = |sleep_unnamed_wakes| {
        let w = colab_workload::Workload::alone(&replay_barrier(sleep_unnamed_wakes));
        let mut pol = colab_policies::by_name("cfs").unwrap();
        colab_sim::simulate(&w, &machine, pol.as_mut(), &Default::default())
            .unwrap()
            .programs[0]
            .turnaround_ns
    };
    // Main calls at 4 ms; both workers run 1 ms more.
    assert_eq!(turnaround(false), 5 * MS);
    // As a sleep, worker 3 blocks at 1.5 ms and wakes 9 ms later.
    assert_eq!(turnaround(true), 11_500_000);
}
