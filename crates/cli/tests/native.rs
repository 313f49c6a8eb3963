//! The subcommands that run programs on this machine: `colab native`,
//! `colab calibrate` and `colab validate`.

mod common;

use common::{fails, ok, s, tempdir, write};

const TINY_NATIVE: &str = r#"
name = "tiny"
default_n = 2
[mutex]
m = 1
[thread.main]
ops = [ { spawn = "w", count = "n" }, { join = "w" } ]
[thread.w]
ops = [ { loop = 5, body = [ { compute = 200, speedup = 2.0 }, { critical = "m", compute = 50, speedup = 2.0 } ] } ]
"#;

#[test]
fn native_runs_a_spec_and_reports_median_and_spread() {
    let dir = tempdir();
    let f = write(dir.path(), "tiny.toml", TINY_NATIVE);
    let r = ok(&["native", s(&f), "--reps", "2", "--cpus", "0"]);
    assert!(
        r.stdout.contains("tiny") && r.stdout.contains("spread"),
        "{}",
        r.describe()
    );
    let j = ok(&["native", s(&f), "--reps", "2", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&j.stdout).expect("JSON");
    assert_eq!(
        v["programs"][0]["samples_ns"].as_array().map(|a| a.len()),
        Some(2)
    );
    fails(&["native", s(&f), "--cpus", "1-0"], &["--cpus 1-0"]);
    fails(
        &["native", s(&f), "--cpus", "x"],
        &["'x' is not a CPU number"],
    );
    fails(
        &["native", s(&f), "--reps", "0"],
        &["--reps must be at least 1"],
    );
}

#[test]
fn calibrate_writes_a_topology_that_sim_accepts() {
    let dir = tempdir();
    let out = dir.path().join("machine.toml");
    let r = ok(&["calibrate", "--out", s(&out)]);
    assert!(r.stdout.contains("context switch"), "{}", r.describe());
    let sim = ok(&["sim", "radix:2", "-t", s(&out), "-p", "cfs"]);
    assert!(sim.stdout.contains("radix"), "{}", sim.describe());
}

#[test]
fn validate_compares_native_and_simulated_runs() {
    let dir = tempdir();
    let suite = dir.path().join("suite");
    std::fs::create_dir(&suite).unwrap();
    write(&suite, "tiny.toml", TINY_NATIVE);
    let out = dir.path().join("report");
    let r = ok(&[
        "validate",
        "--suite",
        s(&suite),
        "--reps",
        "2",
        "--seeds",
        "1",
        "--out",
        s(&out),
        "--no-programs",
    ]);
    assert!(r.stdout.contains("median |error|"), "{}", r.describe());
    for f in [
        "cases.csv",
        "summary.md",
        "sim_vs_real.svg",
        "this-machine.toml",
    ] {
        assert!(out.join(f).exists(), "{f} missing:\n{}", r.describe());
    }
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    fails(&["validate", "--suite", s(&empty)], &["no .toml cases"]);
}
