//! colab-amp-study end to end on a fixture root: a two-CPU sysfs (CPU 0
//! big, CPU 1 little by cpu_capacity) and a sched_ext state file that fake
//! schedulers (shell scripts) set as a real one would make the kernel do.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output};

fn write(p: &Path, s: &str) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, s).unwrap();
}

fn script(p: &Path, body: &str) {
    write(p, &format!("#!/bin/sh\n{body}\n"));
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// The fixture root and its fake schedulers: `good` attaches and detaches
/// on SIGTERM, `broken` exits at once with a message, `leaves` attaches and
/// detaches by itself a moment later.
fn fixture() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    write(&r.join("sys/devices/system/cpu/online"), "0-1\n");
    write(
        &r.join("sys/devices/system/cpu/cpu0/cpu_capacity"),
        "1024\n",
    );
    write(&r.join("sys/devices/system/cpu/cpu1/cpu_capacity"), "400\n");
    write(&r.join("sys/kernel/sched_ext/state"), "disabled\n");
    write(&r.join("proc/sys/kernel/osrelease"), "6.12.0-fixture\n");
    write(
        &r.join("proc/cpuinfo"),
        "processor\t: 0\nmodel name\t: Fixture CPU\n",
    );
    write(
        &r.join("w.toml"),
        "name = \"tiny\"\n[thread.main]\nops = [ { compute = 300000, mem_frac = 0.0 } ]\n",
    );
    let state = r.join("sys/kernel/sched_ext/state");
    let st = state.display();
    script(
        &r.join("bin/good"),
        &format!("trap 'echo disabled > {st}; exit 0' TERM\necho enabled > {st}\nwhile :; do sleep 0.05; done"),
    );
    script(
        &r.join("bin/broken"),
        "echo 'libbpf: failed to load: -EACCES'\nexit 3",
    );
    script(
        &r.join("bin/leaves"),
        &format!("echo enabled > {st}\nsleep 0.2\necho disabled > {st}\nexit 1"),
    );
    d
}

fn study(root: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_colab-amp-study"))
        .arg("--root")
        .arg(root)
        .arg("--out")
        .arg(root.join("out"))
        .args(args)
        .env(
            "PATH",
            format!("{}:/usr/bin:/bin", root.join("bin").display()),
        )
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn each_scheduler_runs_in_turn_and_failures_are_reported_not_hidden() {
    let d = fixture();
    let r = d.path();
    let w = r.join("w.toml");
    let o = study(
        r,
        &[
            "--workloads",
            &format!("{},fft:2", w.display()),
            "--reps",
            "2",
            "--scheduler",
            "good",
            "--scheduler",
            "broken",
            "--scheduler",
            "two=good",
            "--scheduler",
            "leaves",
            "--attach-timeout",
            "5",
        ],
    );
    let out = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    let report = std::fs::read_to_string(r.join("out/report.md")).unwrap();
    // The machine: CPU 0 is big by sysfs, so the reference runs there.
    assert!(report.contains("6.12.0-fixture"), "{report}");
    assert!(
        report.contains("T_ref: each program alone on CPUs 0 (every core type but the slowest)"),
        "{report}"
    );
    // Both working schedulers (one under two labels) and the default have
    // every run; the broken one and the one that left are failures.
    let summary = std::fs::read_to_string(r.join("out/summary.csv")).unwrap();
    for s in ["default", "good", "two"] {
        for wl in ["tiny", "fft:2"] {
            assert!(
                summary.contains(&format!("\n{s},{wl},")),
                "{s} {wl}: {summary}"
            );
        }
    }
    assert!(
        !summary.contains("broken") && !summary.contains("\nleaves,fft"),
        "{summary}"
    );
    assert!(
        report.contains("broken did not start: it exited (exit status: 3)"),
        "{report}"
    );
    assert!(
        report.contains("libbpf: failed to load: -EACCES"),
        "{report}"
    );
    assert!(
        report.contains("broken tiny: 0 of 2 repetitions gave a result"),
        "{report}"
    );
    // `leaves` detached after its first run: named, and its later runs missing.
    assert!(
        report.contains("leaves exited during the study")
            || report.contains("leaves is no longer attached"),
        "{report}"
    );
    assert!(
        report.contains("leaves fft:2: 0 of 2 repetitions"),
        "{report}"
    );
    assert!(report.contains("attached in"), "{report}");
    // results.csv: a header, then T_ref and runs, two repetitions each.
    let csv = std::fs::read_to_string(r.join("out/results.csv")).unwrap();
    assert!(csv.starts_with("kind,scheduler,workload,rep,program,ns\n"));
    assert_eq!(
        csv.lines().filter(|l| l.starts_with("tsb,-,tiny,")).count(),
        2
    );
    assert_eq!(
        csv.lines()
            .filter(|l| l.starts_with("run,good,fft:2,"))
            .count(),
        2
    );
    // Nothing left attached.
    let state = std::fs::read_to_string(r.join("sys/kernel/sched_ext/state")).unwrap();
    assert_eq!(state.trim(), "disabled");
    assert!(r.join("out/logs/broken.log").exists());
}

#[test]
fn a_scheduler_already_attached_stops_the_study_before_it_starts() {
    let d = fixture();
    let r = d.path();
    write(&r.join("sys/kernel/sched_ext/state"), "enabled\n");
    write(&r.join("sys/kernel/sched_ext/root/ops"), "lavd\n");
    let o = study(r, &["--quick", "--scheduler", "good"]);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}");
    assert!(
        out.contains("a sched_ext scheduler (lavd) is attached"),
        "{out}"
    );
    assert!(!r.join("out").exists(), "nothing written: {out}");
}

#[test]
fn bad_arguments_say_what_is_wrong() {
    let d = fixture();
    let r = d.path();
    for (args, want) in [
        (vec!["--workloads", "NoSuch-9"], "workload 'NoSuch-9'"),
        (
            vec!["--scheduler", "scx_nosuch"],
            "scx_nosuch': not found in PATH",
        ),
        (vec!["--reps", "0"], "--reps must be at least 1"),
        (vec!["--reference-cpus", "0,7"], "CPU 7 is not online"),
    ] {
        let o = study(r, &args);
        let out = text(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {out}");
        assert!(out.contains(want), "{args:?}: {out}");
    }
    // Without sched_ext, a scheduler cannot run; the default alone can.
    std::fs::remove_file(r.join("sys/kernel/sched_ext/state")).unwrap();
    let o = study(r, &["--scheduler", "good", "--quick"]);
    assert!(
        text(&o).contains("this kernel has no sched_ext"),
        "{}",
        text(&o)
    );
}

#[test]
fn a_dry_run_prints_the_plan_and_runs_nothing() {
    let d = fixture();
    let r = d.path();
    std::fs::copy(r.join("bin/good"), r.join("bin/scx_colab")).unwrap();
    let o = study(r, &["--dry-run"]);
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    assert!(out.contains("2 core types by cpu_capacity"), "{out}");
    assert!(
        out.contains("scx_colab-paper: ") && out.contains("--policy colab"),
        "{out}"
    );
    assert!(out.contains("Sync-2, NSync-1, Comm-2"), "{out}");
    assert!(!r.join("out").exists());
}

#[test]
fn the_default_workloads_are_the_vm_studys() {
    let sh = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scripts/vm/amp-study.sh"
    ))
    .unwrap();
    let line = sh
        .lines()
        .find(|l| l.starts_with("workloads=\""))
        .expect("amp-study.sh sets workloads=");
    let vm: Vec<&str> = line
        .trim_start_matches("workloads=\"")
        .trim_end_matches('"')
        .split(' ')
        .collect();
    assert_eq!(vm, colab_amp_study::DEFAULT_WORKLOADS);
    let quick = sh
        .lines()
        .find_map(|l| {
            l.split("workloads=\"")
                .nth(1)
                .filter(|_| l.contains("--quick)"))
        })
        .expect("amp-study.sh's --quick sets workloads");
    let quick: Vec<&str> = quick.split('"').next().unwrap().split(' ').collect();
    assert_eq!(quick, colab_amp_study::QUICK_WORKLOADS);
}
