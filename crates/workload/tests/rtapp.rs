//! rt-app task sets written here from rt-app's documented grammar
//! (doc/tutorial.txt) as colab programs: what each becomes, and what is
//! refused by name.

use colab_workload::program::Op;
use colab_workload::{Library, WorkloadError};

fn example(name: &str) -> String {
    let path = format!("{}/tests/rt-app/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path).unwrap()
}

fn ops_of(lib: &Library, name: &str, group_prefix: &str) -> Vec<Op> {
    let p = lib.program(name, None).unwrap();
    p.groups
        .iter()
        .find(|g| g.name.starts_with(group_prefix))
        .unwrap_or_else(|| panic!("no group {group_prefix}*"))
        .ops
        .clone()
}

#[test]
fn the_periodic_example_is_a_loop_of_work_and_a_timer() {
    let mut lib = Library::default();
    let name = lib
        .add_rtapp_text("periodic.json", &example("periodic.json"))
        .unwrap();
    assert_eq!(name, "periodic");
    let p = lib.program(&name, None).unwrap();
    assert_eq!(p.total_threads, 2, "main and one frame thread");
    assert_eq!(p.timers, vec!["unique"]);
    let ops = ops_of(&lib, "periodic", "t0_frame");
    assert!(matches!(ops[0], Op::Loop { .. }));
    assert!(
        matches!(ops[1], Op::Compute { work, .. } if (work - 10_000_000.0).abs() < 1e-6),
        "{:?}",
        ops[1]
    );
    assert!(matches!(
        ops[2],
        Op::Timer {
            period_ns: 16_000_000,
            absolute: false,
            ..
        }
    ));
}

#[test]
fn the_lock_chain_keeps_its_events_in_file_order_and_its_instances() {
    let mut lib = Library::default();
    lib.add_rtapp_text("lock-chain.json", &example("lock-chain.json"))
        .unwrap();
    let p = lib.program("lock-chain", None).unwrap();
    assert_eq!(p.total_threads, 4, "main, outer and two inner");
    let names: Vec<&str> = p.mutex_arrays.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["mutexA", "mutexB"]);
    // outer: lock A, run, lock B, run, unlock B, unlock A, sleep, in a loop of 5.
    let kinds: Vec<&str> = ops_of(&lib, "lock-chain", "t0_outer")
        .iter()
        .map(|o| match o {
            Op::Loop { .. } => "loop",
            Op::EndLoop { .. } => "end",
            Op::Lock { .. } => "lock",
            Op::Unlock { .. } => "unlock",
            Op::Compute { .. } => "run",
            Op::Sleep(_) => "sleep",
            _ => "other",
        })
        .collect();
    assert_eq!(
        kinds,
        ["loop", "lock", "run", "lock", "run", "unlock", "unlock", "sleep", "end"]
    );
    // inner: its delay first, then its loop.
    let inner = ops_of(&lib, "lock-chain", "t1_inner");
    assert_eq!(inner[0], Op::Sleep(500_000));
}

#[test]
fn a_barrier_counts_every_thread_that_meets_it() {
    let mut lib = Library::default();
    lib.add_rtapp_text("handshake.json", &example("handshake.json"))
        .unwrap();
    let p = lib.program("handshake", None).unwrap();
    assert_eq!(p.barriers, vec![("round".to_string(), 2)]);
    assert_eq!(p.conds, vec!["c"]);
}

fn refusal(json: &str) -> String {
    match Library::default().add_rtapp_text("t.json", json) {
        Err(e @ WorkloadError::Invalid { .. }) | Err(e @ WorkloadError::Parse { .. }) => {
            e.to_string()
        }
        other => panic!("accepted or odd: {other:?}"),
    }
}

#[test]
fn what_colab_cannot_model_is_refused_by_name() {
    let task = |body: &str| format!(r#"{{ "tasks": {{ "a": {{ "loop": 2, {body} }} }} }}"#);
    for (json, want) in [
        (task(r#""runtime": 100"#), "tasks.a.runtime: not modelled: a fixed wall time"),
        (task(r#""run": 5, "cpus": [0]"#), "tasks.a.cpus: not modelled: CPU affinity"),
        (task(r#""run": 5, "policy": "SCHED_FIFO""#), "scheduling class SCHED_FIFO"),
        (task(r#""run": 5, "priority": 5"#), "priorities"),
        (task(r#""run": 5, "util_min": 100"#), "utilisation clamping"),
        (task(r#""run": 5, "taskgroup": "/tg""#), "task groups"),
        (task(r#""fork": "b""#), "tasks forked at run time"),
        (task(r#""suspend": "a""#), "suspend/resume"),
        (task(r#""mem": 100"#), "memory-buffer writes"),
        (task(r#""yield": """#), "sched_yield"),
        (task(r#""frobnicate": 1"#), "tasks.a.frobnicate: unknown rt-app event"),
        (
            r#"{ "tasks": { "a": { "run": 5 } } }"#.to_string(),
            "tasks.a.loop: no loop count",
        ),
        (
            r#"{ "tasks": { "a": { "loop": -1, "run": 5 } } }"#.to_string(),
            "loop -1 (forever)",
        ),
        (
            r#"{ "global": { "duration": 5 }, "tasks": { "a": { "loop": 1, "run": 5 } } }"#.to_string(),
            "global.duration: not modelled: a run duration",
        ),
        (
            r#"{ "global": { "pi_enabled": true }, "tasks": { "a": { "loop": 1, "run": 5 } } }"#.to_string(),
            "priority inheritance",
        ),
        (
            r#"{ "tasks": { "a": { "instance": 2, "loop": 1, "run": 5, "timer": { "ref": "t", "period": 100 } } } }"#.to_string(),
            "timer t: not modelled: a timer shared by 2 threads",
        ),
        ("[1, 2]".to_string(), "expected an object with \"tasks\""),
        ("{ not json".to_string(), "not rt-app JSON"),
    ] {
        let e = refusal(&json);
        assert!(e.contains(want), "{json}\n -> {e}");
        assert!(e.starts_with("t.json"), "{e}");
    }
}

#[test]
fn an_rt_app_file_resolves_as_a_workload() {
    let dir = format!("{}/tests/rt-app/periodic.json", env!("CARGO_MANIFEST_DIR"));
    let w = Library::builtin().resolve(&dir).unwrap();
    assert_eq!(w.programs.len(), 1);
    assert_eq!(w.programs[0].name, "periodic");
}
