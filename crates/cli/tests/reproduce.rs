//! `colab reproduce` (and `colab mixes`, which lists its random mixes): the
//! studies, their reports, determinism, traces as workloads, and the options
//! checked before anything runs. The slowest tests of the crate.

mod common;

use common::{
    assert_fails_with, assert_fails_with_usage, assert_no_panic, fails, ok, parse_json, run,
    run_limited, s, tempdir, write, DEMO_TRACE, REPRODUCE_LIMIT,
};
use std::path::{Path, PathBuf};
use std::process::Command;

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
    // The first screen: that this was --quick, the command, who won on
    // each machine, and the console's simulation count explained.
    let md = std::fs::read_to_string(a.join("summary.md")).unwrap();
    let first = &md[..md
        .find("## Per-workload results")
        .expect("per-workload section")];
    for want in [
        "**Quick run** (`--quick`): ",
        "Made by `colab reproduce --quick --seeds 1 --out ",
        "## Who won",
        "| 2B2S | ",
        "simulations also holds the ",
    ] {
        assert!(first.contains(want), "{want} not in:\n{first}");
    }
    let sims: String = r
        .stderr
        .lines()
        .find_map(|l| l.split_once(" simulations, ").map(|(n, _)| n.to_string()))
        .expect("the simulation count");
    assert!(
        first.contains(&format!("count of {sims} simulations")),
        "{sims}:\n{first}"
    );
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

const DEMO_MANIFEST: &str = r#"[library]
name = "demo-lib"
source = "hand-made for a test"
made_by = "reproduce.rs"
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

/// A 1 big + 2 little machine of one's own, as a topology file.
const MACHINE_1B2S: &str = r#"
[[core_types]]
name = "big"
compute_rate = 1.0
memory_rate = 1.0
active_power_w = 1.0
idle_power_w = 0.05
[[core_types]]
name = "little"
compute_rate = 0.5
memory_rate = 0.8
active_power_w = 0.3
idle_power_w = 0.02
[[clusters]]
core_type = "big"
cores = 1
[[clusters]]
core_type = "little"
cores = 2
"#;

#[test]
fn reproduce_runs_a_machine_file_beside_a_built_in_machine() {
    let dir = tempdir();
    let file = write(dir.path(), "mine.toml", MACHINE_1B2S);
    let out = dir.path().join("report");
    let configs = format!("{},2B2S", s(&file));
    ok(&[
        "reproduce",
        "--quick",
        "--seeds",
        "1",
        "--policies",
        "cfs,rota",
        "--configs",
        &configs,
        "--allow-no-png",
        "--out",
        s(&out),
    ]);
    let runs = std::fs::read_to_string(out.join("runs.csv")).unwrap();
    let mut rdr = csv::Reader::from_reader(runs.as_bytes());
    let mut cores = std::collections::BTreeMap::new();
    for r in rdr.deserialize::<std::collections::HashMap<String, String>>() {
        let r = r.unwrap();
        cores.insert(r["config"].clone(), r["cores"].clone());
    }
    // The file's machine is called by its stem and has its 3 cores.
    assert_eq!(
        cores.into_iter().collect::<Vec<_>>(),
        [("2B2S".into(), "4".into()), ("mine".into(), "3".into())]
    );
    fails(
        &[
            "reproduce",
            "--quick",
            "--configs",
            "nosuch.toml",
            "--out",
            s(&out),
        ],
        &["--configs nosuch.toml", "cannot read topology file"],
    );
    let bad = write(dir.path(), "bad.toml", "name = \"x\"\n[[clusters]]\n");
    fails(
        &[
            "reproduce",
            "--quick",
            "--configs",
            s(&bad),
            "--out",
            s(&out),
        ],
        &["invalid topology"],
    );
}

/// Two program files and a mix of both, as workloads/README.md writes them.
const OWN_PROGRAM: &str = r#"
name = "own_barrier"
default_n = 2
threads_formula = "n"
[barrier]
b = "n"
[thread.main]
ops = [
  { spawn = "w", count = "n-1" },
  { loop = 10, body = [ { compute = 300, speedup = 2.0 }, { barrier = "b" } ] },
  { join = "w" },
]
[thread.w]
ops = [ { loop = 10, body = [ { compute = 300, speedup = 2.0 }, { barrier = "b" } ] } ]
"#;

#[test]
fn reproduce_runs_ones_own_mix_of_program_files_on_a_machine_file() {
    let dir = tempdir();
    write(dir.path(), "own_barrier.toml", OWN_PROGRAM);
    write(
        dir.path(),
        "own_spin.toml",
        "name = \"own_spin\"\n[thread.main]\nops = [ { compute = 2000, speedup = 1.5 } ]\n",
    );
    let mixes = write(
        dir.path(),
        "own_mixes.toml",
        "[[mix]]\nname = \"own-1\"\nprograms = [ { bench = \"own_barrier.toml\" }, { bench = \"own_spin.toml\" } ]\n\n\
         [[mix]]\nname = \"own-2\"\nprograms = [ { bench = \"own_spin.toml\" }, { bench = \"fft\", n = 2 } ]\n",
    );
    let machine = write(dir.path(), "mine.toml", MACHINE_1B2S);
    let out = dir.path().join("report");
    let workloads = format!("{},Sync-2", s(&mixes));
    let r = ok(&[
        "reproduce",
        "--workloads",
        &workloads,
        "--configs",
        s(&machine),
        "--seeds",
        "1",
        "--policies",
        "cfs,rota",
        "--allow-no-png",
        "--out",
        s(&out),
    ]);
    let runs = std::fs::read_to_string(out.join("runs.csv")).unwrap();
    let mut rdr = csv::Reader::from_reader(runs.as_bytes());
    let mut cells = std::collections::BTreeSet::new();
    for rec in rdr.deserialize::<std::collections::HashMap<String, String>>() {
        let rec = rec.unwrap();
        cells.insert((rec["workload"].clone(), rec["config"].clone()));
    }
    // Every mix of the file and the named one, on the machine file only.
    let want: std::collections::BTreeSet<(String, String)> = ["Sync-2", "own-1", "own-2"]
        .iter()
        .map(|w| (w.to_string(), "mine".to_string()))
        .collect();
    assert_eq!(cells, want, "{}", r.stderr);
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(
        summary.contains("your workloads (own-1, own-2, Sync-2)"),
        "{summary}"
    );
    // Normalised to CFS as the built-in study is; not a quick run.
    assert!(summary.contains("H_ANTT normalised to cfs"), "{summary}");
    assert!(summary.contains("## Who won"), "{summary}");
    assert!(!summary.contains("Quick run"), "{summary}");
    assert!(
        summary.contains("**Full run** (without `--quick`)"),
        "{summary}"
    );
    fails(
        &["reproduce", "--workloads", "nosuch.toml", "--out", s(&out)],
        &["--workloads", "nosuch.toml"],
    );
    fails(
        &[
            "reproduce",
            "all",
            "--workloads",
            s(&mixes),
            "--out",
            s(&out),
        ],
        &["--workloads goes with one study"],
    );
}

#[test]
fn reproduce_says_what_t_sb_means_on_a_machine_of_one_core_type() {
    let dir = tempdir();
    let out = dir.path().join("report");
    ok(&[
        "reproduce",
        "--workloads",
        "fft:2",
        "--configs",
        "4B,2B2S",
        "--seeds",
        "1",
        "--policies",
        "cfs,rota",
        "--allow-no-png",
        "--out",
        s(&out),
    ]);
    let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
    let first = &md[..md.find("## Per-workload results").unwrap()];
    assert!(
        first.contains("**Note**: 4B (4B0S [4xbig]) has one core type: its T_SB is a run alone"),
        "{first}"
    );
    assert!(!first.contains("**Note**: 2B2S"), "{first}");
}

#[test]
fn trace_libraries_are_found_by_name_from_anywhere() {
    let dir = tempdir();
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    // A library of one's own, named through $COLAB_TRACES.
    let mine = dir.path().join("my-traces");
    let lib = mine.join("demo-lib");
    std::fs::create_dir_all(&lib).unwrap();
    write(&lib, "demo.trace", DEMO_TRACE);
    write(&lib, "manifest.toml", DEMO_MANIFEST);
    let colab = |args: &[&str], env: Option<&Path>| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_colab"));
        c.args(args)
            .current_dir(&elsewhere)
            .env_remove("COLAB_TRACES");
        if let Some(e) = env {
            c.env("COLAB_TRACES", e);
        }
        let o = c.output().unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).to_string(),
            String::from_utf8_lossy(&o.stderr).to_string(),
        )
    };
    let out = dir.path().join("rep");
    let study = [
        "reproduce",
        "--traces",
        "demo-lib",
        "--only-traces",
        "--configs",
        "1B1S",
        "--seeds",
        "1",
        "--policies",
        "cfs",
        "--allow-no-png",
        "--out",
        s(&out),
    ];
    let (code, _, err) = colab(&study, Some(&mine));
    assert_eq!(code, Some(0), "{err}");
    let runs = std::fs::read_to_string(out.join("runs.csv")).unwrap();
    assert!(runs.contains("demo-t2-r1"), "{runs}");
    // Without it: refused, naming where it looked and the variable.
    let (code, _, err) = colab(&study, None);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("--traces demo-lib: no trace library of that name; looked in")
            && err.contains("$COLAB_TRACES"),
        "{err}"
    );
    // The repository's own library, from a directory without traces/.
    let (code, stdout, err) = colab(&["model-check", "lu_cb"], None);
    assert_eq!(code, Some(0), "{err}");
    assert!(stdout.contains("| lu_cb | 4 / 4 |"), "{stdout}");
}
