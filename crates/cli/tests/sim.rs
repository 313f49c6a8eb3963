//! `colab sim`: its report, its JSON, the timeline, and the options that
//! change a run (time limit, event budget, predictor, lengths, trace replay).

mod common;

use common::{fails, ok, parse_json, s, tempdir, write};
use serde_json::Value;

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
