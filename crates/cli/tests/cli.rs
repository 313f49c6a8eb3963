//! End-to-end tests of the `colab` binary: the good paths of every subcommand
//! and the messages it gives for bad input (non-zero exit, a clear message on
//! stderr naming the file, the place and the problem, and never a panic).

use serde_json::Value;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Time limit for one run of the binary (a hang is a failure, not a stuck test).
const LIMIT: Duration = Duration::from_secs(30);
/// Time limit for one `reproduce --quick` (about 10 s in a debug build).
const REPRODUCE_LIMIT: Duration = Duration::from_secs(300);

/// What one run of the binary produced.
struct Run {
    args: Vec<String>,
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Run {
    fn describe(&self) -> String {
        format!(
            "colab {}\nexit code: {:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.args.join(" "),
            self.code,
            self.stdout,
            self.stderr
        )
    }
}

/// Runs `colab ARGS`, killing it (and failing the test) after `limit`.
fn run_limited(args: &[&str], limit: Duration) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_colab"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the colab binary");
    // Drain both pipes on their own threads so a chatty child cannot block on a full pipe.
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            pipe.read_to_end(&mut buf).ok();
            String::from_utf8_lossy(&buf).into_owned()
        })
    };
    let out = drain(Box::new(child.stdout.take().expect("stdout pipe")));
    let err = drain(Box::new(child.stderr.take().expect("stderr pipe")));
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("poll the child") {
            break status;
        }
        if start.elapsed() > limit {
            child.kill().ok();
            child.wait().ok();
            panic!(
                "colab {} did not finish within {} s (hang?)",
                args.join(" "),
                limit.as_secs()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Run {
        args: args.iter().map(|s| s.to_string()).collect(),
        code: status.code(),
        stdout: out.join().expect("stdout reader"),
        stderr: err.join().expect("stderr reader"),
    }
}

fn run(args: &[&str]) -> Run {
    // Campaigns (which also train each machine's counter model) get the
    // campaign limit; a debug build on a busy machine takes a while.
    // So do the scaling benchmarks (1,024 cores, 4,096 threads): 15-45 s in
    // a debug build, more on a loaded machine.
    let limit = match args.first() {
        Some(&"reproduce") => REPRODUCE_LIMIT,
        Some(&"bench") if args.contains(&"--cores") || args.contains(&"--threads") => {
            REPRODUCE_LIMIT
        }
        _ => LIMIT,
    };
    run_limited(args, limit)
}

fn assert_no_panic(r: &Run) {
    assert!(
        !r.stderr.contains("panicked") && !r.stdout.contains("panicked"),
        "the program panicked:\n{}",
        r.describe()
    );
    // 101 is the exit code of a Rust panic; None means killed by a signal.
    assert!(
        r.code.is_some() && r.code != Some(101),
        "abnormal exit:\n{}",
        r.describe()
    );
}

/// Runs `colab ARGS` and expects success.
fn ok(args: &[&str]) -> Run {
    let r = run(args);
    assert_no_panic(&r);
    assert_eq!(r.code, Some(0), "expected success:\n{}", r.describe());
    r
}

/// Checks a failed run: non-zero exit, no panic, nothing on stdout, and one
/// `error: ` message on stderr that contains every string of `expect`.
fn assert_fails_with(r: &Run, expect: &[&str]) {
    assert_no_panic(r);
    assert_ne!(r.code, Some(0), "expected failure:\n{}", r.describe());
    assert!(
        r.stdout.trim().is_empty(),
        "a failed run printed results:\n{}",
        r.describe()
    );
    let msg = r
        .stderr
        .lines()
        .position(|l| l.starts_with("error: "))
        .map(|i| r.stderr.lines().skip(i).collect::<Vec<_>>().join("\n"))
        .unwrap_or_else(|| panic!("no 'error: ' line on stderr:\n{}", r.describe()));
    for e in expect {
        assert!(
            msg.contains(e),
            "the error message lacks {e:?}:\n{}",
            r.describe()
        );
    }
}

/// Runs `colab ARGS` and expects a failure whose message contains every string of `expect`.
fn fails(args: &[&str], expect: &[&str]) -> Run {
    let r = run(args);
    assert_fails_with(&r, expect);
    r
}

fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().expect("create a temporary directory")
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write a test file");
    p
}

fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 temp path")
}

fn parse_json(text: &str, what: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{what} is not valid JSON: {e}\n{text}"))
}

/// The number after `label` on a line of text output, e.g. `H_ANTT 1.298`.
fn number_after(text: &str, label: &str) -> f64 {
    let rest = &text[text
        .find(label)
        .unwrap_or_else(|| panic!("no {label:?} in:\n{text}"))
        + label.len()..];
    let tok = rest.split_whitespace().next().unwrap_or("");
    tok.parse()
        .unwrap_or_else(|_| panic!("{label:?} is followed by {tok:?}, not a number"))
}

/// The COLAB papers' 17 benchmark models.
const BENCHMARKS: [&str; 17] = colab_campaign::COLAB_BENCHMARKS;

/// A three-cluster phone: 1 prime, 3 mid, 4 little cores (file order is not core order).
const TRI_CLUSTER: &str = r#"
name = "phone"
[[core_types]]
name = "little"
compute_rate = 0.3
memory_rate = 0.8
active_power_w = 0.2
idle_power_w = 0.01
[[core_types]]
name = "prime"
compute_rate = 1.2
memory_rate = 1.1
active_power_w = 3.0
idle_power_w = 0.05
[[core_types]]
name = "mid"
compute_rate = 0.8
memory_rate = 0.95
active_power_w = 1.0
idle_power_w = 0.03
[[clusters]]
core_type = "little"
cores = 4
[[clusters]]
name = "mids"
core_type = "mid"
cores = 3
[[clusters]]
core_type = "prime"
cores = 1
"#;

/// The core type names of `colab topology` output, in core order.
fn core_types_listed(out: &str) -> Vec<String> {
    out.lines()
        .filter(|l| l.trim_start().starts_with("core "))
        .map(|l| {
            let (_, rest) = l.split_once(':').expect("core line has a ':'");
            rest.split_whitespace().next().unwrap_or("").to_string()
        })
        .collect()
}

// ----- good paths -----------------------------------------------------------

#[test]
fn list_shows_the_benchmarks_the_mixes_and_the_policies() {
    let r = ok(&["list"]);
    let out = &r.stdout;
    let bench: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("Benchmarks"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .map(|l| l.split_whitespace().next().unwrap_or(""))
        .collect();
    // The COLAB papers' 17 models, the CAMP / Prop-SP ones (27), sorted.
    for b in BENCHMARKS
        .iter()
        .chain(&["fftw", "blast", "semphy", "libquantum", "lbm"])
    {
        assert!(bench.contains(b), "benchmark {b} not listed:\n{out}");
    }
    assert_eq!(bench.len(), 17 + 27, "benchmark section:\n{out}");
    let mut sorted = bench.clone();
    sorted.sort_unstable();
    assert_eq!(bench, sorted);
    let mixes: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("Mixes"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .map(|l| l.split_whitespace().next().unwrap_or(""))
        .collect();
    for m in [
        "Sync-1", "Sync-4", "NSync-2", "Comm-3", "Comp-4", "Large-4", "2B-1", "2B-10", "4B-1",
        "4B-10",
    ] {
        assert!(mixes.contains(&m), "mix {m} not listed:\n{out}");
    }
    // The scenario programs have their own section; their mixes are mixes.
    let scenarios: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("Scenario programs"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .map(|l| l.split_whitespace().next().unwrap_or(""))
        .collect();
    for p in ["fig1_alpha", "lock_10us_hi", "pipe_slow", "finebar_25us"] {
        assert!(scenarios.contains(&p), "scenario {p} not listed:\n{out}");
    }
    for m in ["Fig1", "Lock-1ms", "Barrier-straggler", "Finebar-4ms"] {
        assert!(mixes.contains(&m), "mix {m} not listed:\n{out}");
    }
    let sync1 = out
        .lines()
        .find(|l| l.trim_start().starts_with("Sync-1 "))
        .expect("Sync-1 line");
    assert!(
        sync1.contains("water_nsquared") && sync1.contains("fmm"),
        "{sync1}"
    );
    for p in colab_campaign::ALL_POLICIES {
        assert!(
            out.lines()
                .skip_while(|l| !l.starts_with("Policies"))
                .any(|l| l.split_whitespace().next() == Some(p)),
            "policy {p} not listed:\n{out}"
        );
    }
}

#[test]
fn sim_prints_turnaround_and_the_metrics() {
    let r = ok(&["sim", "ferret", "-t", "2B2S", "-p", "colab"]);
    let out = &r.stdout;
    assert!(out.starts_with("ferret on 2B2S"), "{out}");
    assert!(out.contains("under colab"), "{out}");
    let row = out
        .lines()
        .find(|l| l.trim_start().starts_with("ferret ") && !l.contains(" on "))
        .unwrap_or_else(|| panic!("no per-program row:\n{out}"));
    let cols: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(cols.len(), 6, "row {row:?}");
    // On an asymmetric machine: the share of its CPU time on big cores.
    let on_fast: f64 = cols[5]
        .strip_suffix('%')
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("a percentage: {row}"));
    assert!((0.0..=100.0).contains(&on_fast), "{row}");
    assert_eq!(cols[1], "19", "ferret at n = 4 has 3+4n threads: {row}");
    let turnaround: f64 = cols[2].parse().expect("turnaround ms");
    let alone_big: f64 = cols[3].parse().expect("alone-big ms");
    assert!(turnaround > 0.0 && alone_big > 0.0, "{row}");
    let antt = number_after(out, "H_ANTT");
    let stp = number_after(out, "H_STP");
    assert!(antt.is_finite() && antt > 0.0, "H_ANTT {antt}");
    assert!(stp.is_finite() && stp > 0.0, "H_STP {stp}");
    // One program: H_ANTT is its T_M/T_SB.
    assert!(
        (antt - turnaround / alone_big).abs() < 0.01,
        "H_ANTT {antt} vs {turnaround}/{alone_big}"
    );
}

#[test]
fn sim_says_how_long_fast_cores_sat_idle_while_slow_ones_worked() {
    // One thread started on the little core of 1B1S (little first) stays
    // there under cfs: the big core idles the whole run.
    let args = [
        "sim",
        "lu_cb:1",
        "-t",
        "1B1S",
        "--order",
        "little-first",
        "-p",
        "cfs",
    ];
    let out = ok(&args).stdout;
    let line = out
        .lines()
        .find(|l| l.contains("fast cores idle while slower cores ran threads"))
        .unwrap_or_else(|| panic!("no idle line:\n{out}"));
    assert!(line.contains(": 100.0% of fast-core time"), "{line}");
    let json = ok(&[&args[..], &["--json"]].concat()).stdout;
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(
        v["stats"]["fast_idle_slow_busy_ns"], v["makespan_ns"],
        "{json}"
    );
    // Big core first, it runs there; a machine of one core type has no line.
    let out = ok(&["sim", "lu_cb:1", "-t", "1B1S", "-p", "cfs"]).stdout;
    assert!(out.contains("ran threads: 0.0% of fast-core time"), "{out}");
    let out = ok(&["sim", "lu_cb:1", "-t", "2B", "-p", "cfs"]).stdout;
    assert!(!out.contains("fast cores idle"), "{out}");
}

#[test]
fn sim_json_has_the_expected_fields_and_is_deterministic() {
    let args = [
        "sim", "Sync-1", "-t", "2B2S", "-p", "wash", "--seed", "7", "--json",
    ];
    let r = ok(&args);
    let v = parse_json(&r.stdout, "sim --json output");
    assert_eq!(v["workload"], "Sync-1");
    assert_eq!(v["topology"], "2B2S");
    assert_eq!(v["policy"], "wash");
    assert_eq!(v["seed"], 7);
    let progs = v["programs"].as_array().expect("programs array");
    let names: Vec<&str> = progs
        .iter()
        .map(|p| p["name"].as_str().unwrap_or("?"))
        .collect();
    assert_eq!(names, ["water_nsquared", "fmm"]);
    let makespan = v["makespan_ns"].as_u64().expect("makespan_ns");
    for p in progs {
        for f in ["n", "threads", "turnaround_ns", "t_sb_ns", "t_alone_ns"] {
            assert!(
                p[f].as_u64().is_some_and(|x| x > 0),
                "program field {f}: {p}"
            );
        }
        assert!(p["turnaround_ns"].as_u64().unwrap() <= makespan, "{p}");
    }
    for f in ["h_antt", "h_stp", "unfairness", "energy_j"] {
        assert!(
            v[f].as_f64().is_some_and(|x| x.is_finite() && x > 0.0),
            "field {f}: {}",
            v[f]
        );
    }
    for f in ["events", "context_switches", "migrations"] {
        assert!(
            v["stats"][f].as_u64().is_some(),
            "stats.{f}: {}",
            v["stats"]
        );
    }
    assert!(v["stats"]["events"].as_u64().unwrap() > 0);
    // Same seed, same result, byte for byte.
    let again = ok(&args);
    assert_eq!(r.stdout, again.stdout, "two runs with seed 7 differ");
}

#[test]
fn timeline_is_chrome_trace_json_with_slices_and_instants() {
    let dir = tempdir();
    let path = dir.path().join("ferret-trace.json");
    let r = ok(&[
        "sim",
        "ferret",
        "-t",
        "2B2S",
        "--timeline",
        s(&path),
        "--json",
    ]);
    let result = parse_json(&r.stdout, "sim --json output");
    let makespan_us = result["makespan_ns"].as_f64().expect("makespan_ns") / 1e3;
    let text = std::fs::read_to_string(&path).expect("the timeline file was written");
    let v = parse_json(&text, "the timeline file");
    let evs = v["traceEvents"].as_array().expect("a traceEvents array");
    let slices: Vec<&Value> = evs.iter().filter(|e| e["ph"] == "X").collect();
    let instants = evs.iter().filter(|e| e["ph"] == "i").count();
    assert!(!slices.is_empty(), "no 'X' slices");
    assert!(instants > 0, "no 'i' instants");
    // Slices on one core never overlap and end by the makespan.
    let mut per_core: std::collections::BTreeMap<(i64, i64), Vec<(f64, f64)>> = Default::default();
    for e in &slices {
        let ts = e["ts"].as_f64().expect("slice ts");
        let dur = e["dur"].as_f64().expect("slice dur");
        assert!(ts >= 0.0 && dur >= 0.0, "{e}");
        assert!(
            ts + dur <= makespan_us + 1e-3,
            "slice ends after the makespan: {e}"
        );
        let key = (
            e["pid"].as_i64().unwrap_or(-1),
            e["tid"].as_i64().unwrap_or(-1),
        );
        per_core.entry(key).or_default().push((ts, dur));
    }
    for (core, mut v) in per_core {
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        for w in v.windows(2) {
            assert!(
                w[0].0 + w[0].1 <= w[1].0 + 1e-6,
                "overlapping slices on {core:?}: {w:?}"
            );
        }
    }
    // Written through a temporary file that is gone afterwards.
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, [std::ffi::OsString::from("ferret-trace.json")]);
}

#[test]
fn timeline_in_a_missing_directory_fails_cleanly() {
    let dir = tempdir();
    let missing = dir.path().join("no-such-dir").join("t.json");
    fails(
        &["sim", "mcf", "-t", "1B1S", "--timeline", s(&missing)],
        &["no-such-dir", "cannot create"],
    );
    // A directory as the target: error, and no partial file left next to it.
    let target = dir.path().join("out");
    std::fs::create_dir(&target).unwrap();
    fails(
        &["sim", "mcf", "-t", "1B1S", "--timeline", s(&target)],
        &["out", "cannot move into place"],
    );
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        left,
        [std::ffi::OsString::from("out")],
        "partial file left behind"
    );
}

#[test]
fn sim_and_topology_accept_a_tri_cluster_topology_file() {
    let dir = tempdir();
    let topo = write(dir.path(), "phone.toml", TRI_CLUSTER);
    let r = ok(&["topology", s(&topo)]);
    let types = core_types_listed(&r.stdout);
    assert_eq!(
        types,
        ["prime", "mid", "mid", "mid", "little", "little", "little", "little"],
        "big-first puts the fastest cluster first:\n{}",
        r.stdout
    );
    assert!(r.stdout.starts_with("phone "), "{}", r.stdout);
    let r = ok(&["topology", s(&topo), "--order", "little-first"]);
    assert_eq!(
        core_types_listed(&r.stdout),
        ["little", "little", "little", "little", "mid", "mid", "mid", "prime"],
        "{}",
        r.stdout
    );
    let r = ok(&["sim", "ferret", "-t", s(&topo), "-p", "colab"]);
    assert!(r.stdout.starts_with("ferret on phone"), "{}", r.stdout);
    assert!(r.stdout.contains("H_ANTT"), "{}", r.stdout);
    let r = ok(&["sim", "Sync-1", "-t", s(&topo), "-p", "wash", "--json"]);
    let v = parse_json(&r.stdout, "sim --json output");
    assert_eq!(v["topology"], "phone");
    assert_eq!(v["programs"].as_array().map(Vec::len), Some(2));
}

#[test]
fn shipped_topology_files_load() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../topologies");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return; // no example topologies in this checkout
    };
    for e in entries {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "toml") {
            let r = ok(&["topology", s(&p)]);
            assert!(!core_types_listed(&r.stdout).is_empty(), "{}", r.describe());
        }
    }
}

#[test]
fn topology_order_little_first_puts_little_cores_first() {
    let r = ok(&["topology", "1B3S", "--order", "little-first"]);
    assert_eq!(
        core_types_listed(&r.stdout),
        ["little", "little", "little", "big"],
        "{}",
        r.stdout
    );
    let r = ok(&["topology", "1B3S"]);
    assert_eq!(
        core_types_listed(&r.stdout),
        ["big", "little", "little", "little"],
        "{}",
        r.stdout
    );
}

#[test]
fn sim_runs_a_program_file_and_a_mix_file() {
    let dir = tempdir();
    let prog = write(
        dir.path(),
        "toy_pool.toml",
        r#"
name = "toy_pool"
default_n = 3
threads_formula = "1+n"
[mutex]
table = 4
[barrier]
pool = "n"
[queue]
units = { capacity = 8, producers = 1 }
[thread.main]
ops = [
  { compute = 1000, speedup = 1.4 },
  { spawn = "worker", count = "n" },
  { loop = 16, body = [ { push = "units" } ] },
  { close = "units" },
  { join = "worker" },
]
[thread.worker]
ops = [
  { loop = "until-closed", body = [
    { pop = "units" },
    { compute = 300, speedup = 2.5, cv = 0.2 },
    { critical = "table", index = "random", compute = 20, speedup = 1.4 },
  ] },
  { barrier = "pool" },
  { compute = "3000/n", speedup = 2.0, imbalance = 0.3 },
]
"#,
    );
    let r = ok(&["sim", s(&prog), "-t", "1B1S", "--json"]);
    let v = parse_json(&r.stdout, "sim --json output");
    assert_eq!(v["workload"], "toy_pool");
    assert_eq!(v["programs"][0]["threads"], 4);
    let mix = write(
        dir.path(),
        "mixes.toml",
        r#"
[[mix]]
name = "toy-mix"
classes = ["Comm"]
threads = 8
programs = [ { bench = "ferret", n = 1 }, { bench = "mcf" } ]
"#,
    );
    let r = ok(&["sim", s(&mix), "--json"]);
    let v = parse_json(&r.stdout, "sim --json output");
    assert_eq!(v["workload"], "toy-mix");
    let names: Vec<&str> = v["programs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap_or("?"))
        .collect();
    assert_eq!(names, ["ferret", "mcf"]);
}

#[test]
fn reproduce_quick_writes_the_report_and_is_deterministic() {
    let dir = tempdir();
    let a = dir.path().join("a");
    // One seed keeps the test short (the default is several).
    let args = ["reproduce", "--quick", "--seeds", "1", "--out"];
    let r = run_limited(&[&args[..], &[s(&a)]].concat(), REPRODUCE_LIMIT);
    assert_no_panic(&r);
    assert_eq!(r.code, Some(0), "{}", r.describe());
    for f in ["summary.md", "runs.csv", "cells.json"] {
        let meta = std::fs::metadata(a.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
        assert!(meta.len() > 0, "{f} is empty");
    }
    let svgs: Vec<PathBuf> = std::fs::read_dir(&a)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "svg"))
        .collect();
    assert!(!svgs.is_empty(), "no .svg chart in {}", a.display());
    for svg in &svgs {
        let text = std::fs::read_to_string(svg).unwrap();
        assert!(text.contains("<svg"), "{} is not an SVG", svg.display());
    }
    let cells = parse_json(
        &std::fs::read_to_string(a.join("cells.json")).unwrap(),
        "cells.json",
    );
    let cells = cells.as_array().expect("cells.json is an array");
    assert!(!cells.is_empty());
    assert!(cells
        .iter()
        .all(|c| c["workload"].is_string() && c["policy"].is_string()));
    let runs_a = std::fs::read(a.join("runs.csv")).unwrap();
    let runs_text = String::from_utf8_lossy(&runs_a);
    let mut lines = runs_text.lines();
    let header = lines.next().unwrap_or("");
    assert!(
        header.starts_with("workload,") && header.contains("policy") && header.contains("h_antt"),
        "{header}"
    );
    assert!(lines.count() >= 3 * 2, "too few runs in runs.csv");
    // Same seed, one worker thread instead of all: the same runs.csv, byte for byte.
    let b = dir.path().join("b");
    let r = run_limited(&[&args[..], &[s(&b), "-j", "1"]].concat(), REPRODUCE_LIMIT);
    assert_no_panic(&r);
    assert_eq!(r.code, Some(0), "{}", r.describe());
    let runs_b = std::fs::read(b.join("runs.csv")).unwrap();
    assert!(
        runs_a == runs_b,
        "runs.csv differs between two runs with the same seed"
    );
}

#[test]
fn reproduce_runs_only_the_random_mixes_and_describes_them() {
    let dir = tempdir();
    let out = dir.path().join("rand");
    let args = [
        "reproduce",
        "--quick",
        "--seeds",
        "1",
        "--policies",
        "cfs,colab",
        "--random-mixes",
        "3",
        "--mix-seed",
        "9",
        "--only-random",
        "--allow-no-png",
        "--out",
        s(&out),
    ];
    let r = run_limited(&args, REPRODUCE_LIMIT);
    assert_no_panic(&r);
    assert_eq!(r.code, Some(0), "{}", r.describe());
    assert!(
        r.stderr.contains("reproduce: 3 workloads"),
        "{}",
        r.describe()
    );
    let cells = std::fs::read_to_string(out.join("cells.csv")).unwrap();
    let workloads: std::collections::BTreeSet<&str> = cells
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap())
        .collect();
    let expect: std::collections::BTreeSet<&str> = ["Rand-9-1", "Rand-9-2", "Rand-9-3"].into();
    assert_eq!(workloads, expect, "only the random mixes run");
    assert!(
        cells.lines().skip(1).all(|l| l.contains(",random,")),
        "{cells}"
    );
    // summary.md: the title, the compositions, and a "random" class row.
    let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(
        md.starts_with("# colab reproduce: 3 random mixes (seed 9)"),
        "{md}"
    );
    assert!(md.contains("## Workload compositions"), "{md}");
    assert!(md.contains("| random | 2B2S |"), "{md}");
    // The listing shows the same mixes, and each row of the table matches it.
    let listing = ok(&["mixes", "--random", "3", "--mix-seed", "9"]).stdout;
    for name in &expect {
        assert!(listing.contains(&format!("name = \"{name}\"")), "{listing}");
    }
    for comment in listing.lines().filter(|l| l.starts_with("# ")) {
        let (composition, threads) = comment[2..].split_once(" = ").unwrap();
        let threads = threads.trim_end_matches(" threads");
        assert!(
            md.contains(&format!("| {composition} | {threads} |")),
            "{composition} not in summary.md:\n{md}"
        );
    }
    // Deterministic: the same listing again; a saved mix runs with `colab sim`.
    assert_eq!(
        ok(&["mixes", "--random", "3", "--mix-seed", "9"]).stdout,
        listing
    );
    let file = write(dir.path(), "rand.toml", &listing);
    let sim = ok(&["sim", s(&file), "-t", "2B2S", "-p", "cfs"]);
    assert!(sim.stdout.contains("Rand-9-1"), "{}", sim.describe());
}

#[test]
fn reproduce_restarts_programs_on_request() {
    let dir = tempdir();
    let cells = |name: &str, extra: &[&str]| {
        let out = dir.path().join(name);
        let mut args = vec![
            "reproduce",
            "--quick",
            "--seeds",
            "1",
            "--configs",
            "2B2S",
            "--policies",
            "cfs,eevdf",
            "--random-mixes",
            "2",
            "--mix-seed",
            "9",
            "--only-random",
            "--allow-no-png",
            "--out",
            s(&out),
        ];
        args.extend_from_slice(extra);
        let r = run_limited(&args, REPRODUCE_LIMIT);
        assert_no_panic(&r);
        assert_eq!(r.code, Some(0), "{}", r.describe());
        (r, out)
    };
    let (once, once_dir) = cells("once", &[]);
    let (steady, steady_dir) = cells("steady", &["--restart-until", "2"]);
    assert!(!once.stderr.contains("restarted"), "{}", once.describe());
    assert!(
        steady
            .stderr
            .contains("programs restarted until each completed 2 times"),
        "{}",
        steady.describe()
    );
    let md = std::fs::read_to_string(steady_dir.join("summary.md")).unwrap();
    assert!(
        md.lines()
            .next()
            .unwrap()
            .ends_with("; programs restarted until each completed 2 times"),
        "{md}"
    );
    // A steady load is another experiment: each program's turnaround is
    // the mean of its runs, beside programs that restarted too.
    let read = |d: &std::path::Path| std::fs::read_to_string(d.join("programs.csv")).unwrap();
    assert_ne!(read(&once_dir), read(&steady_dir));
    for k in ["0", "101"] {
        let out = dir.path().join(format!("bad{k}"));
        fails(
            &[
                "reproduce",
                "--quick",
                "--restart-until",
                k,
                "--out",
                s(&out),
            ],
            &[&format!("--restart-until {k}: must be between 1 and 100")],
        );
        assert!(!out.exists(), "a failed reproduce wrote {}", out.display());
    }
}

#[test]
fn reproduce_keeps_going_past_failed_runs_on_request() {
    // 50 ms of simulated time: some programs of the quick study finish on
    // 1B1S, the others do not.
    let dir = tempdir();
    let args = |out: &Path| {
        vec![
            "reproduce".to_string(),
            "--quick".into(),
            "--configs".into(),
            "1B1S".into(),
            "--policies".into(),
            "cfs,rota".into(),
            "--time-limit".into(),
            "0.05".into(),
            "--allow-no-png".into(),
            "--out".into(),
            s(out).into(),
        ]
    };
    let stop = dir.path().join("stop");
    let a = args(&stop);
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    fails(
        &a,
        &["did not finish within 50000000 ns", "more runs failed too"],
    );
    assert!(
        !stop.exists(),
        "a failed reproduce wrote {}",
        stop.display()
    );

    let kept = dir.path().join("kept");
    let mut a = args(&kept);
    a.push("--keep-going".into());
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let r = run(&a);
    assert_fails_with(
        &r,
        &[
            "runs failed; the report in",
            "(workload, configuration) pairs for every policy",
            "failures.csv",
        ],
    );
    let md = std::fs::read_to_string(kept.join("summary.md")).unwrap();
    assert!(md.contains("## Failed runs"), "{md}");
    assert!(md.contains("Sync-1 on 1B1S"), "{md}");
    let failures = std::fs::read_to_string(kept.join("failures.csv")).unwrap();
    assert!(
        failures.starts_with("workload,config,order,seed,policy,error"),
        "{failures}"
    );
    // What finished is reported, what was left out is absent for every policy.
    let runs = std::fs::read_to_string(kept.join("runs.csv")).unwrap();
    assert!(runs.lines().count() > 1, "{runs}");
    assert!(!runs.contains("Sync-1,"), "{runs}");

    for t in ["0", "-1", "nan", "1e9"] {
        let out = dir.path().join("bad");
        fails(
            &["reproduce", "--quick", "--time-limit", t, "--out", s(&out)],
            &[
                &format!("--time-limit {}", t.parse::<f64>().unwrap()),
                "seconds of simulated time",
            ],
        );
        assert!(!out.exists());
    }
}

#[test]
fn sim_stops_at_its_time_limit_and_names_the_live_threads() {
    fails(
        &["sim", "Sync-1", "-t", "2B2S", "--time-limit", "0.01"],
        &[
            "did not finish within 10000000 ns",
            "threads still live",
            "fmm / main#0",
        ],
    );
    fails(
        &["sim", "Sync-1", "--time-limit", "nan"],
        &["--time-limit NaN: must be between"],
    );
    // Long enough: the run ends as without a limit.
    let limited = ok(&["sim", "Sync-1", "-t", "2B2S", "--time-limit", "10"]);
    let free = ok(&["sim", "Sync-1", "-t", "2B2S"]);
    // (The lines before the statistics, whose wall time varies.)
    let results = |out: &str| out.lines().take(5).collect::<Vec<_>>().join("\n");
    assert_eq!(results(&limited.stdout), results(&free.stdout));
}

#[test]
fn random_mixes_reject_bad_requests() {
    let dir = tempdir();
    let out = dir.path().join("report");
    for n in ["0", "1001"] {
        fails(
            &["reproduce", "--random-mixes", n, "--out", s(&out)],
            &[&format!("--random-mixes {n}"), "from 1 to 1000"],
        );
        fails(&["mixes", "--random", n], &["from 1 to 1000"]);
    }
    for study in ["camp", "propsp", "all"] {
        fails(
            &["reproduce", study, "--random-mixes", "2", "--out", s(&out)],
            &["--random-mixes goes with the COLAB study"],
        );
    }
    assert_fails_with_usage(
        &run(&["reproduce", "--only-random", "--out", s(&out)]),
        "--random-mixes",
    );
    assert_fails_with_usage(
        &run(&["reproduce", "--mix-seed", "3", "--out", s(&out)]),
        "--random-mixes",
    );
    assert_fails_with_usage(&run(&["mixes", "--mix-seed", "3"]), "--random");
    assert!(!out.exists(), "a failed reproduce wrote {}", out.display());
}

// ----- bad input --------------------------------------------------------------

#[test]
fn unknown_benchmark() {
    fails(
        &["sim", "nosuchbench"],
        &["unknown workload", "'nosuchbench'", "colab list"],
    );
}

#[test]
fn bad_policy_names_and_weights() {
    fails(
        &["bench", "--policies", "cfs,fifo"],
        &["--policies fifo", "unknown policy 'fifo'"],
    );
    fails(
        &["sim", "ferret", "--policy", "colab-e:1:abc"],
        &[
            "colab-e:1:abc",
            "energy weight 'abc' is not a finite number",
        ],
    );
}

#[test]
fn bad_thread_counts() {
    fails(
        &["sim", "ferret:x"],
        &["ferret:x", "'x' is not a thread count"],
    );
    fails(&["sim", "ferret:"], &["ferret:", "is not a thread count"]);
    fails(&["sim", "ferret:0"], &["ferret", "n = 0", "at least 1"]);
    fails(&["sim", "ferret:-3"], &["ferret", "n = -3", "at least 1"]);
    fails(&["sim", "nosuch:4"], &["unknown workload", "nosuch"]);
}

#[test]
fn negative_compute_work() {
    let dir = tempdir();
    let f = write(
        dir.path(),
        "neg_work.toml",
        r#"
name = "neg"
[thread.main]
ops = [
  { compute = 100, speedup = 2.0 },
  { loop = 2, body = [ { compute = 10, speedup = 2.0 }, { compute = -5, speedup = 2.0 } ] },
]
"#,
    );
    fails(
        &["sim", s(&f)],
        &[
            "neg_work.toml",
            "thread.main.ops[1].body[1]",
            "-5",
            "work must be zero or positive",
        ],
    );
}

#[test]
fn barrier_no_thread_set_can_reach() {
    let dir = tempdir();
    let f = write(
        dir.path(),
        "lonely_barrier.toml",
        r#"
name = "lonely"
default_n = 2
[barrier]
all = "n+1"
[thread.main]
ops = [ { spawn = "w", count = "n" }, { join = "w" } ]
[thread.w]
ops = [ { compute = 100, speedup = 2.0 }, { barrier = "all" } ]
"#,
    );
    fails(
        &["sim", s(&f)],
        &[
            "lonely_barrier.toml",
            "barrier.all",
            "3 threads",
            "never open",
        ],
    );
}

const UNLOCK_NOT_HELD: &str = r#"
name = "bad_unlock"
[mutex]
m = 1
[thread.main]
ops = [
  { critical = "m", compute = 10, speedup = 2.0 },
  { loop = 2, body = [ { compute = 10, speedup = 2.0 }, { unlock = "m" } ] },
]
"#;

#[test]
fn unlock_of_a_mutex_not_held() {
    let dir = tempdir();
    let f = write(dir.path(), "bad_unlock.toml", UNLOCK_NOT_HELD);
    fails(
        &["sim", s(&f)],
        &[
            "bad_unlock.toml",
            "thread.main",
            "unlock of mutex 'm'",
            "does not hold",
        ],
    );
}

#[test]
fn unlock_of_a_mutex_not_held_names_the_step() {
    let dir = tempdir();
    let f = write(dir.path(), "bad_unlock.toml", UNLOCK_NOT_HELD);
    fails(
        &["sim", s(&f)],
        &["bad_unlock.toml", "thread.main.ops[1].body[1]"],
    );
}

#[test]
fn malformed_toml_names_the_file_and_line() {
    let dir = tempdir();
    let f = write(
        dir.path(),
        "broken.toml",
        "name = \"broken\"\n[thread.main]\nops = [ { compute = 10, speedup = 2.0 }\n",
    );
    fails(&["sim", s(&f)], &["broken.toml", "line 3"]);
    let t = write(
        dir.path(),
        "broken_topo.toml",
        "name = \"x\"\n\n[[core_types]\n",
    );
    fails(
        &["sim", "mcf", "-t", s(&t)],
        &["broken_topo.toml", "line 3"],
    );
    fails(&["topology", s(&t)], &["broken_topo.toml", "line 3"]);
    // Valid TOML, but a field the format does not have.
    let f = write(
        dir.path(),
        "typo.toml",
        "name = \"typo\"\n[thread.main]\nops = [ { compute = 10, sppedup = 2.0 } ]\n",
    );
    fails(&["sim", s(&f)], &["typo.toml", "sppedup"]);
}

#[test]
fn topology_without_cores() {
    fails(&["sim", "ferret", "-t", "0B0S"], &["0B0S", "no cores"]);
    fails(&["topology", "0B0S"], &["0B0S", "no cores"]);
    fails(&["topology", "0B"], &["0B", "no cores"]);
    let dir = tempdir();
    let t = write(
        dir.path(),
        "empty_machine.toml",
        r#"
name = "empty"
[[core_types]]
name = "big"
compute_rate = 1.0
memory_rate = 1.0
active_power_w = 1.5
idle_power_w = 0.05
[[clusters]]
core_type = "big"
cores = 0
"#,
    );
    fails(
        &["sim", "ferret", "-t", s(&t)],
        &["empty_machine.toml", "no cores"],
    );
    fails(&["topology", s(&t)], &["empty_machine.toml", "no cores"]);
    let t = write(
        dir.path(),
        "nothing.toml",
        "name = \"nothing\"\ncore_types = []\nclusters = []\n",
    );
    fails(&["topology", s(&t)], &["nothing.toml", "no cores"]);
}

#[test]
fn too_many_cores() {
    fails(
        &["sim", "mcf", "-t", "600B600S"],
        &["600B600S", "1200 cores", "1024"],
    );
}

#[test]
fn topology_file_with_an_unknown_core_type() {
    let dir = tempdir();
    let t = write(
        dir.path(),
        "typo_machine.toml",
        &TRI_CLUSTER.replace("core_type = \"mid\"", "core_type = \"medium\""),
    );
    let expect = [
        "typo_machine.toml",
        "cluster 'mids'",
        "'medium'",
        "not defined",
    ];
    fails(&["sim", "ferret", "-t", s(&t)], &expect);
    fails(&["topology", s(&t)], &expect);
}

#[test]
fn nonexistent_files() {
    let dir = tempdir();
    let w = dir.path().join("missing_workload.toml");
    let r = fails(&["sim", s(&w)], &["missing_workload.toml", "No such file"]);
    assert_eq!(
        r.stderr.matches("No such file").count(),
        1,
        "the cause is repeated:\n{}",
        r.stderr
    );
    let t = dir.path().join("missing_machine.toml");
    let r = fails(
        &["sim", "mcf", "-t", s(&t)],
        &["missing_machine.toml", "No such file"],
    );
    assert_eq!(r.stderr.matches("No such file").count(), 1, "{}", r.stderr);
    fails(
        &["topology", s(&t)],
        &["missing_machine.toml", "No such file"],
    );
    // A directory is not a workload file.
    fails(&["sim", s(dir.path())], &[s(dir.path())]);
}

#[test]
fn unknown_policy() {
    fails(
        &["sim", "ferret", "-p", "fifo"],
        &["unknown policy 'fifo'", "cfs", "wash", "colab"],
    );
}

#[test]
fn unknown_topology_name() {
    fails(
        &["sim", "ferret", "-t", "2X2S"],
        &["unknown topology name '2X2S'"],
    );
    fails(
        &["topology", "big.LITTLE"],
        &["unknown topology name 'big.LITTLE'"],
    );
}

#[test]
fn reproduce_rejects_bad_options_before_running() {
    let dir = tempdir();
    let out = dir.path().join("report");
    fails(
        &["reproduce", "--quick", "--seeds", "0", "--out", s(&out)],
        &["--seeds", "at least 1"],
    );
    fails(
        &["reproduce", "--quick", "--configs", "2X", "--out", s(&out)],
        &["--configs 2X", "unknown topology name '2X'"],
    );
    fails(
        &[
            "reproduce",
            "--quick",
            "--configs",
            "2B2S,0B0S",
            "--out",
            s(&out),
        ],
        &["--configs 0B0S", "no cores"],
    );
    let r = fails(
        &[
            "reproduce",
            "--quick",
            "--policies",
            "cfs,fifo",
            "--out",
            s(&out),
        ],
        &["--policies fifo", "unknown policy 'fifo'"],
    );
    assert_eq!(
        r.stderr.matches("unknown policy").count(),
        1,
        "{}",
        r.stderr
    );
    assert!(!out.exists(), "a failed reproduce wrote {}", out.display());
}

#[test]
fn mix_file_problems() {
    let dir = tempdir();
    let m = write(
        dir.path(),
        "bad_mix.toml",
        "[[mix]]\nname = \"m\"\nprograms = [ { bench = \"ferret\", n = 1 }, { bench = \"nosuch\" } ]\n",
    );
    fails(
        &["sim", s(&m)],
        &[
            "bad_mix.toml",
            "mix 'm' program 2",
            "unknown benchmark 'nosuch'",
        ],
    );
    let m = write(
        dir.path(),
        "count_mix.toml",
        "[[mix]]\nname = \"c\"\nthreads = 5\nprograms = [ { bench = \"ferret\", n = 1 } ]\n",
    );
    fails(
        &["sim", s(&m)],
        &["count_mix.toml", "mix 'c'", "5 threads", "7"],
    );
}

#[test]
fn lost_signal_deadlock_is_reported_not_hung() {
    let f = Path::new(env!("CARGO_MANIFEST_DIR")).join("../sim/tests/fixtures/lost_signal.toml");
    // `run` kills the child and fails after 30 s.
    fails(
        &["sim", s(&f), "-p", "cfs"],
        &[
            "deadlock",
            "lost_signal",
            "lost_signal / waiter#0",
            "condition variable 'ready'",
            "lost_signal / main#0",
            "join of group 'waiter'",
        ],
    );
    // Under the other policies too.
    fails(
        &["sim", s(&f), "-p", "colab"],
        &["deadlock", "condition variable 'ready'"],
    );
    fails(
        &["sim", s(&f), "-p", "wash"],
        &["deadlock", "condition variable 'ready'"],
    );
}

#[test]
fn lock_order_deadlock_names_the_mutexes_and_holders() {
    let dir = tempdir();
    let f = write(
        dir.path(),
        "abba.toml",
        r#"
name = "abba"
[mutex]
a = 1
b = 1
[thread.main]
ops = [ { spawn = "w" }, { lock = "a" }, { compute = 1000, speedup = 2.0 }, { lock = "b" },
        { unlock = "b" }, { unlock = "a" }, { join = "w" } ]
[thread.w]
ops = [ { lock = "b" }, { compute = 1000, speedup = 2.0 }, { lock = "a" }, { unlock = "a" }, { unlock = "b" } ]
"#,
    );
    fails(
        &["sim", s(&f), "-t", "2B2S"],
        &[
            "deadlock",
            "waits on mutex 'a'",
            "waits on mutex 'b'",
            "held by thread",
        ],
    );
}

#[test]
fn command_line_mistakes_get_usage_errors() {
    let r = run(&["sim"]);
    assert_fails_with_usage(&r, "WORKLOAD");
    let r = run(&["topology", "2B2S", "--order", "sideways"]);
    assert_fails_with_usage(&r, "sideways");
    let r = run(&["sim", "ferret", "--seed=-1"]);
    assert_fails_with_usage(&r, "'-1'");
    let r = run(&["frobnicate"]);
    assert_fails_with_usage(&r, "frobnicate");
}

fn assert_fails_with_usage(r: &Run, mention: &str) {
    assert_no_panic(r);
    assert_eq!(
        r.code,
        Some(2),
        "clap's usage error exit code:\n{}",
        r.describe()
    );
    assert!(
        r.stderr.contains("error:") && r.stderr.contains(mention),
        "{}",
        r.describe()
    );
}

// ----- native runs, calibration, validation (issue 3) ----------------------

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
        eprintln!("skipped: recording needs root and perf");
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

const DEMO_TRACE: &str = r#"{"colab_trace":1,"command":["demo"],"host":"h","kernel":"k","cpus":2,"tool":"hand","recorded_unix_s":0}
{"ev":"thread","tid":100,"parent":null,"comm":"demo","t":0}
{"ev":"thread","tid":101,"parent":100,"comm":"worker","t":5000000}
{"ev":"run","tid":100,"cpu":0,"start":0,"end":10000000}
{"ev":"block","tid":100,"t":10000000,"kind":"futex","addr":"0x10"}
{"ev":"run","tid":101,"cpu":1,"start":6000000,"end":16000000}
{"ev":"futex_wake","tid":101,"t":16000000,"addr":"0x10"}
{"ev":"wake","tid":100,"t":16000000,"waker":101}
{"ev":"exit","tid":101,"t":16000000}
{"ev":"run","tid":100,"cpu":0,"start":16000000,"end":20000000}
{"ev":"exit","tid":100,"t":20000000}
"#;

/// `colab reproduce` over traces only (`source`: `--trace FILE` or `--traces
/// DIR`), on 1B1S with one seed: the runs.csv it writes.
fn traces_study(source: &[&str], policies: &str, out: &Path) -> String {
    let mut args = vec!["reproduce"];
    args.extend_from_slice(source);
    args.extend_from_slice(&[
        "--only-traces",
        "--configs",
        "1B1S",
        "--seeds",
        "1",
        "--policies",
        policies,
        "--out",
        s(out),
    ]);
    ok(&args);
    std::fs::read_to_string(out.join("runs.csv")).unwrap()
}

#[test]
fn reproduce_runs_trace_workloads() {
    let dir = tempdir();
    let t = write(dir.path(), "demo.trace", DEMO_TRACE);
    let csv = traces_study(
        &["--trace", s(&t)],
        "cfs,eevdf,colab",
        &dir.path().join("rep"),
    );
    // 1 workload x 1 config x 3 policies x 2 orders.
    assert_eq!(csv.lines().count(), 1 + 6, "{csv}");
    assert!(csv.contains("demo") && csv.contains("trace"), "{csv}");
    let sim = ok(&[
        "sim",
        "--trace",
        s(&t),
        "-t",
        "2B",
        "-p",
        "cfs",
        "--thread-speedup",
        "worker=2.5",
    ]);
    assert!(sim.stdout.contains("demo"), "{}", sim.describe());
    fails(
        &["sim", "--trace", s(&t), "--thread-speedup", "worker"],
        &["expected COMM=SPEEDUP"],
    );
    fails(
        &["sim", "--trace", s(&t), "--thread-speedup", "nosuch=1.5"],
        &[
            "--thread-speedup nosuch",
            "no thread of the trace matches",
            "the trace's threads: demo, worker",
        ],
    );
    let sim = ok(&["sim", "--trace", s(&t), "--thread-speedup", "@root=1.3"]);
    assert!(sim.stdout.contains("demo"), "{}", sim.describe());
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

/// Records a short multi-threaded program with the overhead probe. Needs
/// root and perf; skipped (with the reason) without them.
#[test]
fn trace_measures_and_stores_the_tracing_overhead() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: not root");
        return;
    }
    if !Command::new("perf")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        eprintln!("skipped: perf is not installed (linux-perf)");
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
fn reproduce_all_ranks_every_study_in_one_report() {
    let dir = tempdir();
    let out = dir.path().join("all");
    let args = [
        "reproduce",
        "all",
        "--quick",
        "--policies",
        "cfs,rr",
        "-o",
        s(&out),
    ];
    // Three campaigns: longer than the default limit on a loaded CI machine.
    let r = run_limited(&args, REPRODUCE_LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.describe());
    let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(md.contains("# colab reproduce all"), "{md}");
    assert!(md.contains("normalised to cfs"), "{md}");
    // One ranking over the machines of all three studies.
    let ranking = &md[md.find("## Ranking").unwrap()..md.find("## Head to head").unwrap()];
    for machine in [
        "| 2B2S | rr |",
        "| camp-amd-2fc-2sc | rr |",
        "| propsp-2fc-10sc | rr |",
    ] {
        assert!(
            ranking.contains(machine),
            "{machine} not ranked:\n{ranking}"
        );
    }
    assert!(out.join("ranking_h_antt.svg").is_file());
    fails(
        &["reproduce", "all", "--trace", "run.trace", "-o", s(&out)],
        &["one study, not `all`"],
    );
}

#[test]
fn reproduce_propsp_quick_runs_on_the_papers_machine_against_rr() {
    let dir = tempdir();
    let out = dir.path().join("p");
    let r = ok(&["reproduce", "propsp", "--quick", "-o", s(&out)]);
    assert!(
        r.stderr.contains("restarted until each completed 3 times"),
        "{}",
        r.describe()
    );
    let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(md.contains("# colab reproduce propsp"), "{md}");
    assert!(md.contains("normalised to rr"), "{md}");
    let csv = std::fs::read_to_string(out.join("runs.csv")).unwrap();
    assert!(csv.contains(",propsp-2fc-"), "{csv}");
    fails(&["reproduce", "spec2006"], &["spec2006"]);
}

/// End to end: Finebar-25us is 4 threads x 2,000 x (25 us of work,
/// barrier). On four big cores nobody moves, so the run is 2,000 x 25 us =
/// 50 ms plus two context switches of 5 us at the start (main's first
/// dispatch, then the workers' in parallel): 50.010 ms.
#[test]
fn sim_finebar_25us_on_four_big_cores_is_2000_phases_of_25_us() {
    let r = ok(&["sim", "Finebar-25us", "-t", "4B0S", "-p", "cfs", "--json"]);
    let v = parse_json(&r.stdout, "sim --json output");
    assert_eq!(v["programs"][0]["name"], "finebar_25us");
    assert_eq!(v["programs"][0]["threads"], 4);
    let makespan = v["makespan_ns"].as_u64().expect("makespan_ns") as f64;
    let expected = 2000.0 * 25_000.0 + 2.0 * 5_000.0;
    assert!(
        (makespan - expected).abs() <= 0.005 * expected,
        "makespan {makespan} ns, expected {expected} ns"
    );
    // Little cores halve the speed of every phase that runs on one.
    let r = ok(&["sim", "Finebar-25us", "-t", "2B2S", "-p", "cfs", "--json"]);
    let v = parse_json(&r.stdout, "sim --json output");
    assert!(v["makespan_ns"].as_u64().unwrap() as f64 >= expected);
}

#[test]
fn reproduce_scenarios_quick_runs_the_scenario_mixes_on_their_machines() {
    let dir = tempdir();
    let out = dir.path().join("s");
    let r = ok(&[
        "reproduce",
        "scenarios",
        "--quick",
        "--policies",
        "cfs,colab",
        "-o",
        s(&out),
    ]);
    assert!(r.stderr.contains("their own machines"), "{}", r.describe());
    let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(md.contains("# colab reproduce scenarios"), "{md}");
    assert!(md.contains("normalised to cfs"), "{md}");
    for w in [
        "Fig1",
        "Lock-10us",
        "Pipe-slow",
        "Barrier-straggler",
        "Finebar-25us",
    ] {
        assert!(md.contains(&format!("| {w} |")), "{w} missing:\n{md}");
    }
    let csv = std::fs::read_to_string(out.join("runs.csv")).unwrap();
    assert!(csv.contains(",1B1S,") && csv.contains(",2B2S,"), "{csv}");
    assert!(!csv.contains("Sync-1"), "{csv}");
}

#[test]
fn sim_predictor_labels_are_checked_and_name_the_problem() {
    fails(
        &["sim", "Sync-1", "--predictor", "psychic"],
        &["--predictor psychic", "expected model"],
    );
    fails(
        &["sim", "Sync-1", "--predictor", "model+x"],
        &["--predictor model+x", "extra error 'x'"],
    );
    // A fixed model trained on other core types is refused by name; the
    // default `model` is trained for the machine and runs.
    fails(
        &[
            "sim",
            "Sync-1",
            "-t",
            "camp-amd-2fc-2sc",
            "--predictor",
            "model:sim-reference",
        ],
        &["no entry for core type(s) fast, slow"],
    );
    let model = ok(&["sim", "Sync-1", "-t", "camp-amd-2fc-2sc", "-p", "hsp"]);
    let oracle = ok(&[
        "sim",
        "Sync-1",
        "-t",
        "camp-amd-2fc-2sc",
        "-p",
        "hsp",
        "--predictor",
        "oracle",
    ]);
    assert!(model.stdout.contains("H_ANTT") && oracle.stdout.contains("H_ANTT"));
}

/// T_SB is CFS alone on all-big cores; CFS reads no predictions, so as in
/// campaigns its baseline runs on the oracle whatever --predictor says.
#[test]
fn sim_t_sb_does_not_depend_on_the_predictor() {
    let t_sb = |pred: &str| {
        let r = ok(&[
            "sim",
            "Sync-1",
            "-t",
            "2B2S",
            "-p",
            "colab",
            "--seed",
            "3",
            "--json",
            "--predictor",
            pred,
        ]);
        let v = parse_json(&r.stdout, "sim --json output");
        v["programs"]
            .as_array()
            .expect("programs array")
            .iter()
            .map(|p| p["t_sb_ns"].as_u64().expect("t_sb_ns"))
            .collect::<Vec<u64>>()
    };
    let oracle = t_sb("oracle");
    assert_eq!(t_sb("noisy:0.3"), oracle);
    assert_eq!(t_sb("model"), oracle);
}

#[test]
fn the_model_ablation_normalises_to_its_studys_baseline() {
    let dir = tempdir();
    let out = dir.path().join("abl");
    let r = run_limited(
        &[
            "reproduce",
            "propsp",
            "--quick",
            "--seeds",
            "1",
            "--ablation",
            "model",
            "--allow-no-png",
            "--out",
            s(&out),
        ],
        REPRODUCE_LIMIT,
    );
    assert_no_panic(&r);
    assert_eq!(r.code, Some(0), "{}", r.describe());
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    // Prop-SP's study is normalised to RR, which the ablation runs as its
    // baseline, so every variant has numbers.
    let rows: Vec<&str> = summary
        .lines()
        .filter(|l| l.contains("| hsp@oracle |") || l.contains("| propsp@model+0.25 |"))
        .collect();
    assert!(!rows.is_empty(), "{summary}");
    for row in rows {
        assert!(!row.contains("n/a"), "{row}");
    }
}

const DEMO_MANIFEST: &str = r#"[library]
name = "demo-lib"
source = "hand-made for a test"
made_by = "cli.rs"
recorded = "2026-11-24"
host = "h"
kernel = "k"
cpus = 2

[[trace]]
name = "demo-t2-r1"
program = "demo"
threads = 2
file = "demo.trace"
command = ["demo", "2"]
input = "none"
speedup = 2.0
speedup_source = "assumption for the test"
recorded_ms = 25.0
[trace.thread_speedup]
worker = 3.0
"@root" = 1.3
[trace.native_ms]
runs = 3
median = 20.0
min = 19.0
max = 22.0
"#;

#[test]
fn reproduce_runs_a_trace_library_and_list_shows_it() {
    let dir = tempdir();
    let lib = dir.path().join("traces").join("demo-lib");
    std::fs::create_dir_all(&lib).unwrap();
    write(&lib, "demo.trace", DEMO_TRACE);
    write(&lib, "manifest.toml", DEMO_MANIFEST);
    let csv = traces_study(&["--traces", s(&lib)], "cfs,rota", &dir.path().join("rep"));
    // 1 recording x 1 config x 2 policies x 2 orders, named as the manifest says.
    assert_eq!(csv.lines().count(), 1 + 4, "{csv}");
    assert!(csv.matches("demo-t2-r1").count() >= 4, "{csv}");
    // `colab list` in the directory that holds traces/.
    let listed = Command::new(env!("CARGO_BIN_EXE_colab"))
        .arg("list")
        .current_dir(dir.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&listed.stdout);
    assert!(
        text.contains("demo-lib") && text.contains("1 recordings of 1 programs (demo)"),
        "{text}"
    );
    // A missing file, a bad speedup, --only-traces alone: clear errors.
    for (from, to, want) in [
        (
            "demo.trace",
            "gone.trace",
            ["not a trace library", "gone.trace is missing"],
        ),
        (
            "worker = 3.0",
            "worker = 9.0",
            ["--thread-speedup worker", "speedup 9"],
        ),
    ] {
        write(&lib, "manifest.toml", &DEMO_MANIFEST.replace(from, to));
        fails(
            &["reproduce", "--traces", s(&lib), "--only-traces", "--quick"],
            &want,
        );
    }
    fails(
        &["reproduce", "--only-traces", "--quick"],
        &["--only-traces needs"],
    );
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

#[test]
fn model_check_compares_a_model_with_its_recordings() {
    let lib = concat!(env!("CARGO_MANIFEST_DIR"), "/../../traces/parsec");
    let r = ok(&["model-check", "--traces", lib, "lu_cb"]);
    assert!(r.stdout.contains("| lu_cb | 4 / 4 |"), "{}", r.stdout);
    assert!(r.stdout.contains("of 1 models within 1.5x"), "{}", r.stdout);
    // A model file replaces the built-in one of that name: a model with no
    // barriers is outside the band, and --strict says so.
    let dir = tempdir();
    let m = write(
        dir.path(),
        "lu_cb.toml",
        "name = \"lu_cb\"\ndescription = \"d\"\nparallelism = \"data-parallel\"\n\
         sync_rate = \"low\"\ncomm_comp = \"low\"\ndefault_n = 4\nthreads_formula = \"n\"\n\
         [thread.main]\nops = [{ spawn = \"w\", count = \"n-1\" }, { compute = 5000, speedup = 2.0 }, { join = \"w\" }]\n\
         [thread.w]\nops = [{ compute = 5000, speedup = 2.0 }]\n",
    );
    let j = ok(&[
        "model-check",
        "--traces",
        lib,
        "--json",
        "--model",
        s(&m),
        "lu_cb",
    ]);
    let v: serde_json::Value = serde_json::from_str(j.stdout.trim()).unwrap();
    assert_eq!(v["model"]["broadcast"], 0.0);
    assert_eq!(v["broadcast"], "outside");
    // The table is printed all the same.
    let r = run(&[
        "model-check",
        "--traces",
        lib,
        "--strict",
        "--model",
        s(&m),
        "lu_cb",
    ]);
    assert_no_panic(&r);
    assert_eq!(r.code, Some(1), "{}", r.describe());
    assert!(
        r.stderr.contains("outside the band: lu_cb"),
        "{}",
        r.describe()
    );
    assert!(r.stdout.contains("| lu_cb |"), "{}", r.describe());
    fails(
        &["model-check", "--traces", lib, "nosuch"],
        &["no recording of nosuch with 4 workers"],
    );
}

#[test]
fn a_run_past_its_event_budget_stops_with_a_clear_error() {
    // A billion lock iterations would run for hours; the budget stops it.
    let dir = tempdir();
    let f = write(
        dir.path(),
        "huge.toml",
        "name = \"huge\"\n[mutex]\nhot = 1\n[thread.main]\nops = [ { spawn = \"w\", count = 4 }, { join = \"w\" } ]\n[thread.w]\nops = [ { loop = 1000000000, body = [ { compute = 1, speedup = 2.0 }, { critical = \"hot\", compute = 1, speedup = 2.0 } ] } ]\n",
    );
    fails(
        &["sim", s(&f), "--max-events", "5000"],
        &["huge", "stopped after 5000 events", "--max-events"],
    );
    fails(&["sim", "fft", "--max-events", "0"], &["--max-events"]);
    // Enough budget: the same result as without one.
    let with = ok(&["sim", "fft", "--max-events", "100000", "--json"]);
    let without = ok(&["sim", "fft", "--json"]);
    assert_eq!(with.stdout, without.stdout);
}

#[test]
fn bench_scaling_reports_events_per_second_at_both_sizes() {
    for (flag, header) in [
        ("--threads", ["64 threads", "4096 threads"]),
        ("--cores", ["8 cores", "1024 cores"]),
    ] {
        let r = ok(&["bench", flag, "--policies", "cfs"]);
        assert!(
            r.stdout.contains(header[0]) && r.stdout.contains(header[1]),
            "{}",
            r.stdout
        );
        let line = r
            .stdout
            .lines()
            .find(|l| l.starts_with("cfs "))
            .unwrap_or_else(|| panic!("no cfs row:\n{}", r.stdout));
        let cols: Vec<&str> = line.split_whitespace().collect();
        // cfs, rate, M, rate, M, ratio
        assert_eq!(cols.len(), 6, "{line}");
        let (a, b, ratio): (f64, f64, f64) = (
            cols[1].parse().unwrap(),
            cols[3].parse().unwrap(),
            cols[5].parse().unwrap(),
        );
        assert!(a > 0.0 && b > 0.0, "{line}");
        // The rates are printed to 0.01 M: the ratio lies within what
        // that rounding allows (debug builds run well under 1 M events/s).
        let (lo, hi) = ((b - 0.005) / (a + 0.005), (b + 0.005) / (a - 0.005));
        assert!(ratio >= lo - 0.001 && ratio <= hi + 0.001, "{line}");
        fails(&["bench", flag, "--full"], &["--full"]);
    }
    fails(&["bench", "--threads", "--cores"], &["--cores"]);
}

#[test]
fn lengths_paper_runs_programs_as_long_as_their_papers_did() {
    // povray: SPEC CPU2006 reference time 5,320 s over the ratio 17.72.
    let r = ok(&["sim", "povray", "-t", "1B", "--lengths", "paper", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let ns = v["programs"][0]["turnaround_ns"].as_f64().unwrap();
    let want = 5320.0 / 17.72 * 1e9;
    assert!((ns / want - 1.0).abs() < 0.01, "{ns} vs {want}");
    let r = ok(&["sim", "povray", "-t", "1B", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert!(v["programs"][0]["turnaround_ns"].as_f64().unwrap() < 1e9);
    // Only the CAMP and Prop-SP studies have paper lengths to choose.
    for study in ["colab", "scenarios"] {
        fails(
            &["reproduce", study, "--lengths", "paper", "-o", "x"],
            &["--lengths goes with the camp, propsp and all studies"],
        );
    }
}

#[test]
fn sim_replays_unnamed_wake_ups_as_waits_unless_asked_for_sleeps() {
    // fmm's barriers: most of a release's wake-ups have no recorded waker.
    let trace = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../traces/parsec/fmm-t4-r1.trace.gz"
    );
    let futex_waits = |extra: &[&str]| {
        let mut args = vec!["sim", "--trace", trace, "-t", "4B", "-p", "cfs", "--json"];
        args.extend_from_slice(extra);
        let r = ok(&args);
        let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("JSON out");
        v["stats"]["futex_waits"].as_u64().expect("a count")
    };
    let waits = futex_waits(&[]);
    let sleeps = futex_waits(&["--sleep-unnamed-wakes"]);
    assert!(waits > sleeps + 20, "{waits} futex waits against {sleeps}");
    // Without a trace the switch means nothing: a clear error.
    fails(
        &["sim", "Sync-2", "--sleep-unnamed-wakes"],
        &["--sleep-unnamed-wakes", "--trace"],
    );
}
