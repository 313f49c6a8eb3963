//! End-to-end tests of `colab train`: a table or a perf directory in, the
//! model file and report out; malformed input gives one clear error naming
//! the file, row and column, and never a half-written report.

use std::path::{Path, PathBuf};

mod common;
use common::{colab, succeeds, text};

use colab_model::Model;

fn fails(args: &[&str], expect: &[&str]) -> String {
    let o = colab(args);
    let (out, err) = text(&o);
    assert!(!o.status.success(), "colab {args:?} should fail\n{out}");
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(!err.contains("panicked"), "panic on colab {args:?}:\n{err}");
    assert!(
        out.trim().is_empty(),
        "a failed run printed results:\n{out}"
    );
    for e in expect {
        assert!(
            err.contains(e),
            "stderr of colab {args:?} lacks {e:?}:\n{err}"
        );
    }
    err
}

fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 temp path")
}

fn write(dir: &Path, name: &str, body: &str) -> PathBuf {
    let p = dir.join(name);
    if let Some(parent) = p.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(&p, body).unwrap();
    p
}

/// Six programs, two core types; speedup follows L2D_CACHE per cycle.
const TABLE: &str = "\
program,core_type,CPU_CYCLES,L1D_CACHE_REFILL,L2D_CACHE,BR_IMMED_RETIRED,SW_INCR,speedup,energy_ratio
p1,big,1000000,10000,20000,90000,0,2.6,1.7
p1,little,1600000,11000,21000,90000,0,2.6,1.7
p2,big,1000000,30000,45000,70000,0,2.1,1.9
p2,little,1500000,31000,46000,70000,0,2.1,1.9
p3,big,1000000,15000,60000,80000,0,1.8,2.2
p3,little,1400000,16000,61000,80000,0,1.8,2.2
p4,big,1000000,40000,30000,60000,0,2.3,1.8
p4,little,1700000,42000,32000,60000,0,2.3,1.8
p5,big,1000000,25000,80000,95000,0,1.5,2.5
p5,little,1300000,26000,82000,95000,0,1.5,2.5
p6,big,1000000,5000,10000,50000,0,2.8,1.6
p6,little,1800000,6000,11000,50000,0,2.8,1.6
";

fn assert_no_leftovers(parent: &Path) {
    for e in std::fs::read_dir(parent).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        assert!(
            !name.contains(".tmp-") && !name.contains(".old-"),
            "temporary directory left behind: {name}"
        );
    }
}

#[test]
fn train_on_a_table_writes_the_model_and_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let table = write(dir.path(), "small.csv", TABLE);
    let out = dir.path().join("report");
    let stdout = succeeds(&[
        "train",
        "--table",
        s(&table),
        "--events",
        "2",
        "--out",
        s(&out),
    ]);
    assert!(stdout.contains("leave-one-program-out error"), "{stdout}");
    assert!(stdout.contains("model `small`"), "{stdout}");

    let model = Model::from_json(&std::fs::read_to_string(out.join("model.json")).unwrap())
        .expect("model.json loads");
    assert_eq!(model.name(), "small");
    for core in ["big", "little"] {
        assert_eq!(model.events(core).len(), 3, "two events and the cycles");
        assert!(!model.events(core).iter().any(|e| e == "SW_INCR"));
    }
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    for part in [
        "# Model `small`",
        "SW_INCR dropped (zero in every row)",
        "| **all** |",
        "### Event ranking",
        "### Per program (leave-one-program-out)",
        "| p6 |",
    ] {
        assert!(
            summary.contains(part),
            "summary.md lacks {part:?}:\n{summary}"
        );
    }
    // The mean LOPO error printed is the one in the model file.
    let t = model.training().unwrap();
    assert!(stdout.contains(&format!("speedup {:.1}%", t.lopo_error.speedup * 100.0)));
    for f in [
        "table.csv",
        "predictions.csv",
        "lopo_speedup.svg",
        "lopo_energy_ratio.svg",
    ] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    let png = std::fs::read(out.join("lopo_speedup.png")).unwrap();
    assert_eq!(&png[..4], b"\x89PNG");
    assert_no_leftovers(dir.path());
}

#[test]
fn the_shipped_example_table_trains_with_the_defaults() {
    let table = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../training/example-table.csv"
    );
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("train");
    let stdout = succeeds(&["train", "--table", table, "--out", s(&out), "--no-charts"]);
    let model =
        Model::from_json(&std::fs::read_to_string(out.join("model.json")).unwrap()).unwrap();
    assert_eq!(model.events("big").len(), 7, "six events and the cycles");
    assert!(!out.join("lopo_speedup.svg").exists());
    assert!(
        stdout.contains("mean leave-one-program-out error"),
        "{stdout}"
    );
}

#[test]
fn a_bad_table_fails_naming_the_row_and_column_and_keeps_the_old_report() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report");
    let good = write(dir.path(), "good.csv", TABLE);
    succeeds(&[
        "train",
        "--table",
        s(&good),
        "--events",
        "2",
        "--out",
        s(&out),
        "--no-charts",
    ]);
    let before = std::fs::read_to_string(out.join("model.json")).unwrap();

    let bad = write(
        dir.path(),
        "bad.csv",
        &TABLE.replace("p2,big,1000000,30000,45000", "p2,big,1000000,30000,many"),
    );
    fails(
        &["train", "--table", s(&bad), "--out", s(&out)],
        &[
            "bad.csv",
            "row 4",
            "column `L2D_CACHE`",
            "`many` is not a number",
        ],
    );
    let one_core = write(
        dir.path(),
        "one.csv",
        &TABLE.replace("p3,little,1400000,16000,61000,80000,0,1.8,2.2\n", ""),
    );
    fails(
        &["train", "--table", s(&one_core), "--out", s(&out)],
        &[
            "one.csv",
            "row 6",
            "column `core_type`",
            "program `p3`",
            "only on core type `big`",
        ],
    );
    let no_target = write(
        dir.path(),
        "nt.csv",
        &TABLE.replace(",energy_ratio", ",energy"),
    );
    fails(
        &["train", "--table", s(&no_target), "--out", s(&out)],
        &["nt.csv", "row 1", "missing column `energy_ratio`"],
    );
    // Five programs cannot support four events (and leave one out).
    let five = write(dir.path(), "five.csv", TABLE.split("p6,").next().unwrap());
    fails(
        &[
            "train",
            "--table",
            s(&five),
            "--events",
            "4",
            "--out",
            s(&out),
        ],
        &[
            "five.csv",
            "column `program`",
            "5 programs (rows 2-11)",
            "at least 6",
            "--events 3",
        ],
    );
    fails(
        &[
            "train",
            "--table",
            s(&good),
            "--events",
            "7",
            "--out",
            s(&out),
        ],
        &["--max-counters 7", "at most 6"],
    );
    fails(
        &[
            "train",
            "--table",
            s(&dir.path().join("missing.csv")),
            "--out",
            s(&out),
        ],
        &["missing.csv"],
    );
    // The report of the good run is untouched, and nothing half-written is left.
    assert_eq!(
        std::fs::read_to_string(out.join("model.json")).unwrap(),
        before
    );
    assert_no_leftovers(dir.path());
}

#[test]
fn train_from_a_perf_directory() {
    let dir = tempfile::tempdir().unwrap();
    let perf = dir.path().join("runs");
    let mut meas = String::from("program,core_type,seconds,joules\n");
    // Five programs; L2D_CACHE per cycle drives the speedup.
    for (i, (l2, t_little)) in [
        (0.01, 2.8),
        (0.03, 2.3),
        (0.05, 1.9),
        (0.02, 2.6),
        (0.04, 2.0),
    ]
    .iter()
    .enumerate()
    {
        let p = format!("prog{i}");
        for (core, secs, joules) in [
            ("big", 1.0, 2.0),
            ("little", *t_little, 1.0 + i as f64 * 0.1),
        ] {
            meas.push_str(&format!("{p},{core},{secs},{joules}\n"));
            let cycles = 1_000_000.0 * secs;
            let l1 = 0.02 + 0.003 * (i as f64 * 7.0 % 5.0);
            write(
                &perf,
                &format!("{p}/{core}/group1.perf.csv"),
                &format!("# started on a test\n\n{cycles},,cycles,1000,100.00,,\n{},,l1d_cache_refill,1000,100.00,,\n", l1 * cycles),
            );
            write(
                &perf,
                &format!("{p}/{core}/group2.perf.csv"),
                &format!("{},,cycles,1000,100.00,,\n{},,r16,1000,60.00,,\n<not supported>,,sw_incr,0,100.00,,\n", cycles * 1.1, l2 * cycles * 1.1),
            );
        }
    }
    write(&perf, "measurements.csv", &meas);
    let out = dir.path().join("perf-report");
    let stdout = succeeds(&[
        "train",
        "--perf",
        s(&perf),
        "--events",
        "2",
        "--out",
        s(&out),
        "--no-charts",
    ]);
    assert!(stdout.contains("model `runs`"), "{stdout}");
    let table = std::fs::read_to_string(out.join("table.csv")).unwrap();
    assert!(
        table.starts_with(
            "program,core_type,CPU_CYCLES,L1D_CACHE_REFILL,L2D_CACHE,speedup,energy_ratio"
        ),
        "{table}"
    );
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(
        summary.contains("counted 60.0% of the time (multiplexed)"),
        "{summary}"
    );
    assert!(summary.contains("fastest core type `big`"), "{summary}");

    // A run without cycles is named.
    write(
        &perf,
        "prog1/little/group3.perf.csv",
        "500,,l1d_tlb_refill,1000,100.00,,\n",
    );
    fails(
        &[
            "train",
            "--perf",
            s(&perf),
            "--events",
            "2",
            "--out",
            s(&out),
        ],
        &["group3.perf.csv", "no CPU_CYCLES count"],
    );
    std::fs::remove_file(perf.join("prog1/little/group3.perf.csv")).unwrap();
    write(
        &perf,
        "prog1/little/bad.perf.csv",
        "1000,,cycles,1000,100.00,,\nfew,,r03,1000,100.00,,\n",
    );
    fails(
        &[
            "train",
            "--perf",
            s(&perf),
            "--events",
            "2",
            "--out",
            s(&out),
        ],
        &["bad.perf.csv", "line 2", "`few` is not a number"],
    );
}

#[test]
fn show_builtin_prints_the_paper_model() {
    let out = succeeds(&["train", "--show-builtin", "colab-tpds-armv8"]);
    for part in [
        "Model `colab-tpds-armv8`",
        "Fig. 5b",
        "any core type",
        "speedup      = 2.6185 - 7.8618 * L1D_CACHE_REFILL/CPU_CYCLES",
        "energy_ratio = 8.3818 - 2.5524 * L1D_CACHE_REFILL/CPU_CYCLES",
        "+ 18.854182 * L2D_CACHE_WB/CPU_CYCLES",
        "not a fast/slow ratio",
    ] {
        assert!(out.contains(part), "lacks {part:?}:\n{out}");
    }
    fails(
        &["train", "--show-builtin", "nope"],
        &["unknown built-in model `nope`", "colab-tpds-armv8"],
    );
    let list = succeeds(&["list"]);
    assert!(list.contains("colab-tpds-armv8"), "{list}");
    // A usage error from the argument parser.
    let o = colab(&["train"]);
    assert!(!o.status.success());
    assert!(text(&o).1.contains("--table"));
}

#[test]
fn train_from_sim_reproduces_the_builtin_reference_model() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("train");
    let args = [
        "train",
        "--from-sim",
        "--name",
        "sim-reference",
        "--out",
        s(&out),
        "--no-charts",
    ];
    succeeds(&args);
    let text = std::fs::read_to_string(out.join("model.json")).unwrap();
    let trained = Model::from_json(&text).unwrap();
    // The shipped model is this command's output: same events, same fit.
    let builtin = Model::builtin("sim-reference").unwrap();
    for ct in ["big", "little"] {
        assert_eq!(trained.events(ct), builtin.events(ct), "{ct}");
        let counts = |e: &str| Some(if e == "CPU_CYCLES" { 1e6 } else { 1e3 });
        let (a, b) = (
            trained.predict(ct, &counts).unwrap(),
            builtin.predict(ct, &counts).unwrap(),
        );
        assert!((a.speedup - b.speedup).abs() < 1e-9, "{ct}: {a:?} vs {b:?}");
    }
    let csv = std::fs::read_to_string(out.join("table.csv")).unwrap();
    assert_eq!(
        csv.lines().count(),
        1 + 17 * 2,
        "17 programs x 2 core types"
    );
    fails(
        &["train", "--from-sim", "-t", "9X", "--out", s(&out)],
        &["--topology 9X"],
    );
}
