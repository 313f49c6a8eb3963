//! `colab trace` (recording; needs root and perf, skipped without them),
//! `colab trace-probe` and `colab trace-stats`.

mod common;

use common::{assert_no_panic, fails, ok, run, run_limited, s, tempdir, write, DEMO_TRACE};
use serde_json::Value;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

#[test]
fn trace_records_and_sim_replays() {
    let dir = tempdir();
    // Bad trace files are errors naming the file and line.
    let foreign = write(
        dir.path(),
        "foreign.trace",
        "  sh 4919 [000] 3508.5: sched:sched_switch: x\n",
    );
    fails(
        &["sim", "--trace", s(&foreign)],
        &["foreign.trace", "line 1", "not a colab trace"],
    );
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 || !Path::new("/usr/bin/perf").exists() {
        colab_trace::skip_test("recording needs root and perf");
        return;
    }
    let out = dir.path().join("sleep.trace");
    // The overhead probe has its own test (it takes a while in a debug build).
    let r = ok(&[
        "trace",
        "--no-overhead-probe",
        "-o",
        s(&out),
        "--",
        "sh",
        "-c",
        "sleep 0.02",
    ]);
    assert!(r.stderr.contains("threads"), "{}", r.describe());
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(
        text.lines()
            .next()
            .unwrap()
            .contains(r#""status":{"exited":0}"#),
        "{text}"
    );
    let sim = ok(&["sim", "--trace", s(&out), "-t", "1B1S", "-p", "cfs"]);
    assert!(sim.stdout.contains("sleep"), "{}", sim.describe());
    assert!(!sim.stderr.contains("failed"), "{}", sim.describe());

    // A failing program: the recorder fails with the program's status, keeps
    // the trace with the status in its header, and replay warns.
    for (script, code, status) in [
        ("exit 3", 3, r#""status":{"exited":3}"#),
        (
            "kill -SEGV $$",
            128 + libc::SIGSEGV,
            r#""status":{"killed":11}"#,
        ),
    ] {
        let bad = dir.path().join("bad.trace");
        let r = run(&[
            "trace",
            "--no-overhead-probe",
            "-o",
            s(&bad),
            "--",
            "sh",
            "-c",
            script,
        ]);
        assert_eq!(r.code, Some(code), "{script}: {}", r.describe());
        assert!(
            r.stderr.contains("the traced program failed"),
            "{}",
            r.describe()
        );
        let text = std::fs::read_to_string(&bad).unwrap();
        assert!(text.lines().next().unwrap().contains(status), "{text}");
        let sim = ok(&["sim", "--trace", s(&bad), "-t", "1B1S", "-p", "cfs"]);
        assert!(
            sim.stderr.contains("the recorded run failed"),
            "{}",
            sim.describe()
        );
    }

    // Recorded while a thread of this process spins on every CPU: the
    // others' share is flagged in the header and on stderr.
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let spinners: Vec<_> = (0..cpus)
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            })
        })
        .collect();
    let busy = dir.path().join("busy.trace");
    let r = run(&[
        "trace",
        "--no-overhead-probe",
        "-o",
        s(&busy),
        "--",
        "sleep",
        "0.5",
    ]);
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    spinners.into_iter().for_each(|h| h.join().unwrap());
    assert_eq!(r.code, Some(0), "{}", r.describe());
    assert!(
        r.stderr.contains("the machine was busy"),
        "{}",
        r.describe()
    );
    let head = std::fs::read_to_string(&busy).unwrap();
    assert!(
        head.lines()
            .next()
            .unwrap()
            .contains(r#""others":{"cpu_ns":"#),
        "{head}"
    );
    let sim = ok(&["sim", "--trace", s(&busy), "-t", "1B1S", "-p", "cfs"]);
    assert!(
        sim.stderr.contains("recorded on a busy machine"),
        "{}",
        sim.describe()
    );
}

/// Records a short multi-threaded program with the overhead probe. Needs
/// root and perf; skipped (with the reason) without them.
#[test]
fn trace_measures_and_stores_the_tracing_overhead() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        colab_trace::skip_test("recording needs root");
        return;
    }
    if !Command::new("perf")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        colab_trace::skip_test("perf is not installed (linux-perf)");
        return;
    }
    let dir = tempdir();
    let out = dir.path().join("p.trace");
    // The probe runs 12 short programs, half under perf, and parses their
    // traces: give a debug build on a loaded 2-CPU machine time.
    let r = run_limited(
        &[
            "trace",
            "-o",
            s(&out),
            "--",
            "sh",
            "-c",
            "sleep 0.01 & wait",
        ],
        Duration::from_secs(300),
    );
    assert_no_panic(&r);
    assert_eq!(r.code, Some(0), "{}", r.describe());
    assert!(r.stderr.contains("per context switch"), "{}", r.describe());
    let header: Value = serde_json::from_str(
        std::fs::read_to_string(&out)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    let o = &header["overhead_ns"];
    assert!(o["switch"].as_f64().unwrap() >= 0.0, "{header}");
    // A traced system call costs something on any machine.
    assert!(o["syscall"].as_f64().unwrap() > 0.0, "{header}");
    // Without the probe, no measurement is stored.
    let r = ok(&[
        "trace",
        "--no-overhead-probe",
        "-o",
        s(&out),
        "--",
        "sh",
        "-c",
        "true",
    ]);
    assert!(!r.stderr.contains("per context switch"), "{}", r.describe());
    assert!(!std::fs::read_to_string(&out)
        .unwrap()
        .contains("overhead_ns"));
}

#[test]
fn trace_probe_reports_cpu_and_events_and_rejects_unknown_kinds() {
    let r = ok(&["trace-probe", "syscall", "2000"]);
    assert!(
        r.stdout.starts_with("colab-probe cpu_ns=") && r.stdout.contains("events=2000"),
        "{}",
        r.describe()
    );
    fails(&["trace-probe", "spin", "10"], &["unknown probe 'spin'"]);
}

#[test]
fn trace_stats_sorts_a_traces_waits_by_kind() {
    let dir = tempdir();
    let t = write(dir.path(), "demo.trace", DEMO_TRACE);
    // demo (100) waits on 0x10 until worker (101) exits: a join.
    let r = ok(&["trace-stats", s(&t)]);
    let line = r
        .stdout
        .lines()
        .find(|l| l.starts_with("demo.trace"))
        .unwrap();
    let cols: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(cols[1], "2", "threads: {line}");
    assert_eq!(
        &cols[cols.len() - 3..],
        ["1", "0", "0"],
        "joins sleeps io: {line}"
    );
    let j = ok(&["trace-stats", "--json", s(&t)]);
    let v: serde_json::Value = serde_json::from_str(j.stdout.trim()).unwrap();
    assert_eq!(v["join_waits"], 1);
    assert_eq!(v["broadcast_waits"], 0);
    fails(
        &["trace-stats", "nope.trace"],
        &["nope.trace", "cannot read trace"],
    );
}
