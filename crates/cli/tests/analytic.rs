//! End-to-end tests of `colab analytic`: both studies write their files into
//! a temporary directory, the CSV numbers are the library's, and bad
//! arguments give a clear error (never a panic).

use std::path::Path;

mod common;
use common::{colab, succeeds, text};

use colab_analytic::camp::{uf_analytical, uf_approx, FIG8_FAST_CORES, PAPER_K};
use colab_analytic::propsp::{propsp_study, Scheduler};

fn fails(args: &[&str], expect: &[&str]) {
    let o = colab(args);
    let (out, err) = text(&o);
    assert!(!o.status.success(), "colab {args:?} should fail\n{out}");
    assert!(!err.contains("panicked"), "panic on colab {args:?}:\n{err}");
    for e in expect {
        assert!(
            err.contains(e),
            "stderr of colab {args:?} lacks {e:?}:\n{err}"
        );
    }
}

fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().expect("create a temporary directory")
}

/// Parses a CSV written by the study into header + rows.
fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let t = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = t.lines();
    let header = lines
        .next()
        .expect("header")
        .split(',')
        .map(String::from)
        .collect();
    let rows = lines
        .map(|l| l.split(',').map(String::from).collect())
        .collect();
    (header, rows)
}

fn num(s: &str) -> f64 {
    s.parse()
        .unwrap_or_else(|_| panic!("'{s}' is not a number"))
}

fn assert_files(dir: &Path, names: &[&str]) {
    for n in names {
        let p = dir.join(n);
        let meta = std::fs::metadata(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        assert!(meta.len() > 0, "{} is empty", p.display());
    }
    let png = std::fs::read(dir.join(names.iter().find(|n| n.ends_with(".png")).unwrap())).unwrap();
    assert_eq!(&png[..4], b"\x89PNG");
    // Temporary files were all renamed away.
    for e in std::fs::read_dir(dir).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        assert!(!name.starts_with('.'), "leftover temporary file {name}");
    }
}

#[test]
fn camp_uf_writes_the_library_numbers() {
    let tmp = tempdir();
    let dir = tmp.path().join("nested/camp");
    let out = succeeds(&["analytic", "camp-uf", "-o", dir.to_str().unwrap()]);
    assert!(out.contains("overall: max 0.0833"), "{out}");
    assert_files(
        &dir,
        &[
            "uf_error.csv",
            "error_by_k.csv",
            "summary.md",
            "uf_fig8.svg",
            "uf_fig8.png",
        ],
    );
    let (h, rows) = read_csv(&dir.join("uf_error.csv"));
    assert_eq!(h[0], "sf");
    assert_eq!(rows.len(), 11 * 8, "SF 1.0..2.0 x N 1..8");
    for r in &rows {
        let (sf, n): (f64, u32) = (num(&r[0]), r[1].parse().unwrap());
        assert_eq!(num(&r[4]), uf_analytical(sf, n, FIG8_FAST_CORES), "{r:?}");
        assert_eq!(
            num(&r[5]),
            uf_approx(sf, n, FIG8_FAST_CORES, PAPER_K),
            "{r:?}"
        );
        assert_eq!(num(&r[6]), (num(&r[4]) - num(&r[5])).abs());
    }
    // The hand-computed point SF = 2, N = 4: 4/3 against 1.25.
    let r = rows
        .iter()
        .find(|r| r[0] == "2" && r[1] == "4")
        .expect("SF 2, N 4");
    assert!((num(&r[6]) - 1.0 / 12.0).abs() < 1e-12);
    let md = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(md.contains("| 2.0 |") && md.contains("assumption"));
    assert!(std::fs::read_to_string(dir.join("uf_fig8.svg"))
        .unwrap()
        .contains("<svg"));
}

#[test]
fn propsp_writes_the_library_numbers() {
    let tmp = tempdir();
    let dir = tmp.path().join("propsp");
    let out = succeeds(&["analytic", "propsp", "--out", dir.to_str().unwrap()]);
    assert!(out.contains("W9") && out.contains("Opt-ASP-Ref"), "{out}");
    assert_files(
        &dir,
        &[
            "results.csv",
            "bounds.csv",
            "summary.md",
            "fig1.svg",
            "fig1.png",
        ],
    );
    let study = propsp_study().unwrap();
    let (h, rows) = read_csv(&dir.join("results.csv"));
    let col = |name: &str| h.iter().position(|c| c == name).unwrap();
    assert_eq!(rows.len(), 9 * 5);
    for r in &rows {
        let s = Scheduler::ALL
            .into_iter()
            .find(|s| s.name() == r[col("scheduler")])
            .expect("known scheduler");
        let o = study.get(&r[col("workload")], s).expect("outcome");
        assert_eq!(num(&r[col("asp")]), o.asp, "{r:?}");
        assert_eq!(num(&r[col("unfairness")]), o.unfairness, "{r:?}");
        let norm = &r[col("asp_norm")];
        assert_eq!(norm.is_empty(), o.asp_norm.is_none());
        if let Some(v) = o.asp_norm {
            assert_eq!(num(norm), v);
        }
        for (i, f) in o.shares.iter().enumerate() {
            assert_eq!(num(&r[col(&format!("F{}", i + 1))]), *f);
        }
    }
    // Hand-checked: W1 under HSP has ASP 4.8 and unfairness 1.2.
    let w1 = rows
        .iter()
        .find(|r| r[col("workload")] == "W1" && r[col("scheduler")] == "HSP")
        .unwrap();
    assert!((num(&w1[col("asp")]) - 4.8).abs() < 1e-12);
    assert!((num(&w1[col("unfairness")]) - 1.2).abs() < 1e-12);
}

#[test]
fn rerun_replaces_the_files() {
    let tmp = tempdir();
    let dir = tmp.path().join("p");
    let d = dir.to_str().unwrap();
    succeeds(&["analytic", "propsp", "-o", d]);
    std::fs::write(dir.join("results.csv"), "stale").unwrap();
    succeeds(&["analytic", "propsp", "-o", d]);
    let t = std::fs::read_to_string(dir.join("results.csv")).unwrap();
    assert!(t.starts_with("workload,"), "{t}");
}

#[test]
fn help_describes_the_studies() {
    let out = succeeds(&["analytic", "--help"]);
    for s in [
        "camp-uf",
        "propsp",
        "--out",
        "utility factor",
        "Opt-Unfairness",
    ] {
        assert!(out.contains(s), "help lacks {s}:\n{out}");
    }
}

#[test]
fn bad_arguments_are_clear_errors() {
    fails(&["analytic"], &["STUDY"]);
    fails(
        &["analytic", "camp"],
        &["invalid value 'camp'", "camp-uf", "propsp"],
    );
    fails(&["analytic", "propsp", "-o"], &["--out"]);
    // The output path is a file: the error names it.
    let tmp = tempdir();
    let file = tmp.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let f = file.to_str().unwrap();
    fails(
        &["analytic", "camp-uf", "-o", f],
        &["error:", "a-file", "not a directory"],
    );
    // A directory below a file cannot be created.
    let below = file.join("sub");
    fails(
        &["analytic", "propsp", "-o", below.to_str().unwrap()],
        &["error:", "a-file"],
    );
}
