use super::*;
use crate::summary::FAILURES_SHOWN;
use std::path::Path;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

/// (T_M, T_SB, T_alone) per program.
#[allow(clippy::too_many_arguments)]
fn rec(
    workload: &str,
    classes: &[&str],
    config: &str,
    cores: u32,
    threads: u32,
    policy: &str,
    order: &str,
    seed: u64,
    programs: &[(u64, u64, u64)],
    energy_j: f64,
) -> RunRecord {
    RunRecord {
        workload: workload.into(),
        classes: classes.iter().map(|s| s.to_string()).collect(),
        config: config.into(),
        order: order.into(),
        seed,
        policy: policy.into(),
        cores,
        threads,
        programs: programs
            .iter()
            .enumerate()
            .map(|(i, &(t_m, t_sb, t_alone))| ProgramRecord {
                name: format!("p{i}"),
                turnaround_ns: t_m,
                t_sb_ns: t_sb,
                t_alone_ns: t_alone,
                // Slow cores alone: 3x the all-big time (test data).
                t_slow_ns: 3 * t_sb,
                cpu_ns: t_m,
                fast_cpu_ns: t_m / 2,
                bound_end_ns: None,
            })
            .collect(),
        energy_j,
        makespan_ns: programs.iter().map(|p| p.0).max().unwrap_or(0),
        events: 1000,
        migrations: 10,
        context_switches: 100,
        fast_idle_share: None,
        h_antt_bound: None,
    }
}

/// The hand-computed data set (numbers worked out in the comments).
fn sample() -> Vec<RunRecord> {
    const BF: &str = "big-first";
    const LF: &str = "little-first";
    vec![
        // Sync-1 on 2B2S, 2 threads < 4 cores -> thread-low.
        // cfs BF: ratios 2,2 -> H_ANTT 2, H_STP 1, slowdowns 2,2 -> unfairness 1.
        rec(
            "Sync-1",
            &["Sync"],
            "2B2S",
            4,
            2,
            "cfs",
            BF,
            1,
            &[(200, 100, 100), (400, 200, 200)],
            10.0,
        ),
        // cfs LF: ratios 3,2 -> H_ANTT 2.5, H_STP 1/3+1/2, unfairness 1.5.
        // cell: H_ANTT 2.25, H_STP 11/12, unfairness 1.25, energy 12.
        rec(
            "Sync-1",
            &["Sync"],
            "2B2S",
            4,
            2,
            "cfs",
            LF,
            1,
            &[(300, 100, 100), (400, 200, 200)],
            14.0,
        ),
        // colab BF: 1.5,1.5 -> H_ANTT 1.5, H_STP 4/3, unfairness 1.
        rec(
            "Sync-1",
            &["Sync"],
            "2B2S",
            4,
            2,
            "colab",
            BF,
            1,
            &[(150, 100, 100), (300, 200, 200)],
            9.0,
        ),
        // colab LF: 2,1.5 -> H_ANTT 1.75, H_STP 7/6, unfairness 4/3.
        // cell: H_ANTT 1.625, H_STP 1.25, unfairness 7/6, energy 9.
        rec(
            "Sync-1",
            &["Sync"],
            "2B2S",
            4,
            2,
            "colab",
            LF,
            1,
            &[(200, 100, 100), (300, 200, 200)],
            9.0,
        ),
        // Comm-1, 9 threads >= 2*4 -> thread-high.
        // cfs: ratios 4,3 -> H_ANTT 3.5, H_STP 7/12, slowdowns 2,1 -> unfairness 2.
        rec(
            "Comm-1",
            &["Comm"],
            "2B2S",
            4,
            9,
            "cfs",
            BF,
            1,
            &[(400, 100, 200), (300, 100, 300)],
            20.0,
        ),
        // colab: 2,3 -> H_ANTT 2.5, H_STP 5/6, unfairness 1.
        rec(
            "Comm-1",
            &["Comm"],
            "2B2S",
            4,
            9,
            "colab",
            BF,
            1,
            &[(200, 100, 200), (300, 100, 300)],
            25.0,
        ),
        // Large-1, 5 threads: no thread class.
        // cfs: 2,1 -> H_ANTT 1.5, H_STP 1.5, unfairness 2.
        rec(
            "Large-1",
            &["Large"],
            "2B2S",
            4,
            5,
            "cfs",
            BF,
            1,
            &[(200, 100, 100), (100, 100, 100)],
            5.0,
        ),
        // colab: 1.5,1.5 -> H_ANTT 1.5, H_STP 4/3, unfairness 1.
        rec(
            "Large-1",
            &["Large"],
            "2B2S",
            4,
            5,
            "colab",
            BF,
            1,
            &[(150, 100, 100), (150, 100, 100)],
            5.0,
        ),
        // wash: 1.2,1.8 -> H_ANTT 1.5, unfairness 1.5.
        rec(
            "Large-1",
            &["Large"],
            "2B2S",
            4,
            5,
            "wash",
            BF,
            1,
            &[(120, 100, 100), (180, 100, 100)],
            5.0,
        ),
        // NSync-1 has no cfs run: cannot be normalised.
        rec(
            "NSync-1",
            &["NSync"],
            "2B2S",
            4,
            4,
            "colab",
            BF,
            1,
            &[(150, 100, 100), (150, 100, 100)],
            5.0,
        ),
        // Single program: H_NTT cfs 2.73, colab 1.13.
        rec(
            "ferret",
            &["single"],
            "2B2S",
            4,
            6,
            "cfs",
            BF,
            1,
            &[(273, 100, 273)],
            3.0,
        ),
        rec(
            "ferret",
            &["single"],
            "2B2S",
            4,
            6,
            "colab",
            BF,
            1,
            &[(113, 100, 113)],
            2.0,
        ),
        // Sync-1 on 4B4S: cfs H_ANTT 1, colab ratios 1.2,1 -> 1.1.
        rec(
            "Sync-1",
            &["Sync"],
            "4B4S",
            8,
            2,
            "cfs",
            BF,
            1,
            &[(100, 100, 100), (200, 200, 200)],
            8.0,
        ),
        rec(
            "Sync-1",
            &["Sync"],
            "4B4S",
            8,
            2,
            "colab",
            BF,
            1,
            &[(120, 100, 100), (200, 200, 200)],
            8.0,
        ),
    ]
}

fn find<'a>(cells: &'a [Cell], w: &str, c: &str, p: &str) -> &'a Cell {
    cells
        .iter()
        .find(|x| x.workload == w && x.config == c && x.policy == p)
        .unwrap_or_else(|| panic!("no cell {w} {c} {p}"))
}

#[test]
fn aggregate_means_by_hand() {
    let cells = aggregate(&sample()).unwrap();
    assert_eq!(cells.len(), 12);

    let cfs = find(&cells, "Sync-1", "2B2S", "cfs");
    assert_eq!(cfs.runs, 2);
    assert!(close(cfs.h_antt, 2.25));
    assert!(close(cfs.h_stp, 11.0 / 12.0));
    assert!(close(cfs.unfairness, 1.25));
    assert!(close(cfs.energy_j, 12.0));
    assert_eq!(cfs.h_ntt, None);
    assert_eq!((cfs.cores, cfs.threads), (4, 2));
    assert_eq!(cfs.classes, vec!["Sync".to_string()]);

    let colab = find(&cells, "Sync-1", "2B2S", "colab");
    assert!(close(colab.h_antt, 1.625));
    assert!(close(colab.h_stp, 1.25));
    assert!(close(colab.unfairness, 7.0 / 6.0));
    assert!(close(colab.energy_j, 9.0));

    let comm = find(&cells, "Comm-1", "2B2S", "cfs");
    assert!(close(comm.h_antt, 3.5));
    assert!(close(comm.h_stp, 7.0 / 12.0));
    assert!(close(comm.unfairness, 2.0));

    let f = find(&cells, "ferret", "2B2S", "colab");
    assert!(close(f.h_ntt.unwrap(), 1.13));
    assert!(close(f.h_antt, 1.13));
}

#[test]
fn aggregate_order_is_natural_and_deterministic() {
    let mut records = sample();
    records.push(rec(
        "2B-10",
        &["2B"],
        "2B2S",
        4,
        4,
        "cfs",
        "big-first",
        1,
        &[(1, 1, 1)],
        1.0,
    ));
    records.push(rec(
        "2B-2",
        &["2B"],
        "2B2S",
        4,
        4,
        "cfs",
        "big-first",
        1,
        &[(1, 1, 1)],
        1.0,
    ));
    let a = aggregate(&records).unwrap();
    records.reverse();
    let b = aggregate(&records).unwrap();
    assert_eq!(a, b);
    let keys: Vec<_> = a
        .iter()
        .map(|c| format!("{}/{}/{}", c.workload, c.config, c.policy))
        .collect();
    assert_eq!(
        &keys[..4],
        &[
            "2B-2/2B2S/cfs",
            "2B-10/2B2S/cfs",
            "Comm-1/2B2S/cfs",
            "Comm-1/2B2S/colab"
        ]
    );
    assert_eq!(keys.last().unwrap(), "ferret/2B2S/colab");
}

#[test]
fn normalisation_by_hand() {
    let cells = aggregate(&sample()).unwrap();
    let opts = ReportOptions::default();
    let a = analysis::Analysis::new(&cells, &opts);
    use analysis::Metric::*;
    let colab = find(&cells, "Sync-1", "2B2S", "colab");
    assert!(close(a.normalised(colab, HAntt).unwrap(), 1.625 / 2.25));
    assert!(close(
        a.normalised(colab, HStp).unwrap(),
        1.25 / (11.0 / 12.0)
    ));
    assert!(close(a.normalised(colab, Energy).unwrap(), 0.75));
    let f = find(&cells, "ferret", "2B2S", "colab");
    assert!(close(a.normalised(f, HNtt).unwrap(), 1.13 / 2.73));
    let large = find(&cells, "Large-1", "2B2S", "wash");
    assert!(close(a.normalised(large, Unfairness).unwrap(), 0.75));
    // No baseline -> no normalised value, and it is reported.
    let ns = find(&cells, "NSync-1", "2B2S", "colab");
    assert_eq!(a.normalised(ns, HAntt), None);
    assert_eq!(
        a.missing_baseline,
        vec![("NSync-1".to_string(), "2B2S".to_string())]
    );
    assert_eq!(a.policies, vec!["cfs", "wash", "colab"]);
    assert_eq!(
        a.classes,
        vec![
            "Sync",
            "NSync",
            "Comm",
            "Large",
            "single",
            "thread-low",
            "thread-high"
        ]
    );
    // thread-low on 2B2S = {Sync-1}; its geomean is just Sync-1's value.
    let (v, k, n) = a.class_summary("thread-low", "2B2S", "colab", HAntt);
    assert!(close(v.unwrap(), 1.625 / 2.25));
    // NSync-1 has 4 threads on 4 cores: not thread-low.
    assert_eq!((k, n), (1, 1));
}

#[test]
fn thread_classes() {
    let mut c = aggregate(&sample()).unwrap().remove(0);
    for (threads, cores, want) in [
        (3, 4, Some("thread-low")),
        (4, 4, None),
        (7, 4, None),
        (8, 4, Some("thread-high")),
        (20, 8, Some("thread-high")),
        (15, 8, None),
        (7, 8, Some("thread-low")),
    ] {
        c.threads = threads;
        c.cores = cores;
        assert_eq!(thread_class(&c), want, "{threads} threads on {cores} cores");
    }
}

#[test]
fn aggregate_errors() {
    assert!(aggregate(&[]).unwrap().is_empty());

    let mut r = sample();
    r.push(r[0].clone());
    assert!(matches!(
        aggregate(&r),
        Err(ReportError::DuplicateRun { .. })
    ));

    let mut r = sample();
    r[1].threads = 3;
    let e = aggregate(&r).unwrap_err();
    assert!(
        matches!(
            e,
            ReportError::Inconsistent {
                field: "threads",
                ..
            }
        ),
        "{e}"
    );

    let mut r = sample();
    r[2].programs[0].t_sb_ns = 0;
    let e = aggregate(&r).unwrap_err();
    assert!(matches!(e, ReportError::Metric { .. }), "{e}");
    assert!(e.to_string().contains("policy=colab"), "{e}");

    let mut r = sample();
    r[3].programs.clear();
    assert!(matches!(
        aggregate(&r),
        Err(ReportError::InvalidRecord { .. })
    ));

    let mut r = sample();
    r[3].energy_j = f64::NAN;
    assert!(matches!(
        aggregate(&r),
        Err(ReportError::InvalidRecord { .. })
    ));
}

/// The default options without charts (no fonts needed, faster).
fn no_charts() -> ReportOptions {
    ReportOptions {
        svg: false,
        png: false,
        ..Default::default()
    }
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn write_report_files_and_tables() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("out").join("report");
    let records = sample();
    let files = write_report(&dir, &records, &ReportOptions::default()).unwrap();
    assert_eq!(files.dir, dir);
    for f in [
        &files.runs_csv,
        &files.runs_json,
        &files.programs_csv,
        &files.cells_csv,
        &files.cells_json,
        &files.summary_md,
    ] {
        assert!(f.is_file(), "{} missing", f.display());
    }
    let names: Vec<String> = files
        .charts
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    for stem in [
        "ranking_h_antt",
        "ranking_energy",
        "class_h_antt",
        "class_h_stp",
        "class_energy",
        "workload_h_antt_2B2S",
        "workload_h_antt_4B4S",
        "single_h_ntt_2B2S",
        "app_speedup_2B2S",
        "app_speedup_4B4S",
        "asp_unfairness_2B2S",
        "asp_unfairness_4B4S",
    ] {
        for ext in ["svg", "png"] {
            let n = format!("{stem}.{ext}");
            assert!(names.contains(&n), "{n} not in {names:?}");
            let meta = std::fs::metadata(dir.join(&n)).unwrap();
            assert!(meta.len() > 1000, "{n} is only {} bytes", meta.len());
        }
    }
    let png = std::fs::read(dir.join("class_h_antt.png")).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    assert!(read(&dir.join("class_h_antt.svg")).contains("<text"));

    // JSON round-trips.
    let back: Vec<RunRecord> = serde_json::from_str(&read(&files.runs_json)).unwrap();
    assert_eq!(back, records);
    let cells: Vec<Cell> = serde_json::from_str(&read(&files.cells_json)).unwrap();
    assert_eq!(cells, aggregate(&records).unwrap());

    // CSVs: header + one row per run / cell / program.
    let runs_csv = read(&files.runs_csv);
    assert_eq!(runs_csv.lines().count(), records.len() + 1);
    // The text the Python package reads is the file.
    assert_eq!(crate::runs_csv(&records).unwrap(), runs_csv);
    assert!(runs_csv.starts_with("workload,classes,config,order,seed,policy,"));
    let cells_csv = read(&files.cells_csv);
    assert_eq!(cells_csv.lines().count(), cells.len() + 1);
    assert!(cells_csv.contains("h_antt_norm"));
    let programs: usize = records.iter().map(|r| r.programs.len()).sum();
    let programs_csv = read(&files.programs_csv);
    assert_eq!(programs_csv.lines().count(), programs + 1);
    // Each program's CPU time and its part on the fastest cores, then its
    // end in the bound's schedule (none here), last.
    assert!(
        programs_csv
            .lines()
            .next()
            .unwrap()
            .ends_with(",h_ntt,slowdown,cpu_ns,fast_cpu_ns,bound_end_ns"),
        "{programs_csv}"
    );
    let first = &records[0].programs[0];
    let row = format!(",{},{},", first.cpu_ns, first.fast_cpu_ns);
    assert!(
        programs_csv.lines().nth(1).unwrap().ends_with(&row),
        "{programs_csv}"
    );

    let md = read(&files.summary_md);
    for needle in [
        "# colab campaign report",
        "| workloads | 5 | Comm-1, Large-1, NSync-1, Sync-1, ferret |",
        "| configs | 2 | 2B2S, 4B4S |",
        "| policies | 3 | cfs, wash, colab |",
        "| runs | 14 |  |",
        // Per-workload H_ANTT on 2B2S: cfs abs, then cfs, wash, colab normalised.
        "| workload | classes | threads | cfs abs | cfs | wash | colab |",
        "| Sync-1 | Sync, thread-low | 2 | 2.250 | 1.000 | n/a | 0.722 |",
        "| Comm-1 | Comm, thread-high | 9 | 3.500 | 1.000 | n/a | 0.714 |",
        "| Large-1 | Large | 5 | 1.500 | 1.000 | 1.000 | 1.000 |",
        "| NSync-1 | NSync | 4 | n/a | n/a | n/a | n/a |",
        "| ferret | single | 6 | 2.730 | 1.000 | n/a | 0.414 |",
        // geomean of 0.714286, 1, 0.722222, 0.413919
        "| **geomean** |  |  |  | 1.000 | 1.000 | 0.680 |",
        // H_STP: 1.25 / (11/12)
        "| Sync-1 | Sync, thread-low | 2 | 0.917 | 1.000 | n/a | 1.364 |",
        // 4B4S
        "| Sync-1 | Sync, thread-low | 2 | 1.000 | 1.000 | n/a | 1.100 |",
        // Per-class
        "| class | config | n | cfs | wash | colab |",
        "| Sync | 2B2S | 1 | 1.000 | n/a | 0.722 |",
        "| Sync | 4B4S | 1 | 1.000 | n/a | 1.100 |",
        "| thread-high | 2B2S | 1 | 1.000 | n/a | 0.714 |",
        "| NSync | 2B2S | 1 | n/a | n/a | n/a |",
        // Single program study on 2B2S
        "### 2B2S: H_NTT normalised to cfs (lower is better)",
        "| ferret | 6 | 2.730 | 1.000 | n/a | 0.414 |",
        // Unfairness of Large mixes: cfs 2, wash 1.5, colab 1
        "| Large-1 | 2B2S | 2.000 | 1.000 | 0.750 | 0.500 |",
        // Energy per class: Sync colab 9/12, Comm 25/20
        "| Comm | 2B2S | 1 | 1.000 | n/a | 1.250 |",
        "| Sync | 2B2S | 1 | 1.000 | n/a | 0.750 |",
        "- NSync-1 on 2B2S: no `cfs` run, results not normalised",
        "- [class_h_antt.png](class_h_antt.png)",
        "Charts: [ranking_h_antt.svg](ranking_h_antt.svg), [ranking_h_antt.png](ranking_h_antt.png)",
        // Head to head on 2B2S: colab is below cfs on Sync-1, Comm-1 and
        // ferret and equal on Large-1 (NSync-1 has no cfs run).
        "| colab | 3/4 |",
        "| cfs | - |",
    ] {
        assert!(md.contains(needle), "summary.md lacks {needle:?}:\n{md}");
    }
    // No stray temporary directories next to the report.
    let siblings: Vec<_> = std::fs::read_dir(dir.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(siblings, vec![std::ffi::OsString::from("report")]);
}

fn entries(p: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(p)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn existing_report_is_replaced_only_on_success() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("report");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("stale.txt"), "old").unwrap();
    let opts = ReportOptions {
        png: false,
        ..Default::default()
    };

    // A record whose metrics cannot be computed fails after runs.json has
    // already been written to the temporary directory.
    let mut bad = sample();
    bad.last_mut().unwrap().programs[0].t_sb_ns = 0;
    let err = write_report(&dir, &bad, &opts).unwrap_err();
    assert!(matches!(err, ReportError::Metric { .. }), "{err}");
    assert_eq!(entries(&dir), vec!["stale.txt"]);
    assert_eq!(entries(tmp.path()), vec!["report"]);

    write_report(&dir, &sample(), &opts).unwrap();
    let files = entries(&dir);
    assert!(!files.contains(&"stale.txt".to_string()));
    assert!(files.contains(&"summary.md".to_string()));
    assert!(files.contains(&"class_h_antt.svg".to_string()));
    assert!(!files.iter().any(|f| f.ends_with(".png")));
    assert_eq!(entries(tmp.path()), vec!["report"]);
}

#[test]
fn failing_write_leaves_no_partial_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("report");
    let mut bad = sample();
    // Comm-1 colab disagrees with Comm-1 cfs on the thread count: aggregation
    // fails after runs.json/runs.csv were written into the temporary directory.
    bad[5].threads = 99;
    assert!(write_report(&dir, &bad, &ReportOptions::default()).is_err());
    assert!(!dir.exists());
    assert!(entries(tmp.path()).is_empty(), "{:?}", entries(tmp.path()));

    assert!(matches!(
        write_report(&dir, &[], &ReportOptions::default()),
        Err(ReportError::NoRecords)
    ));
    assert!(entries(tmp.path()).is_empty());

    // A file where the directory should go is refused, not clobbered.
    std::fs::write(&dir, "x").unwrap();
    assert!(matches!(
        write_report(&dir, &sample(), &ReportOptions::default()),
        Err(ReportError::NotADirectory(_))
    ));
    assert_eq!(read(&dir), "x");
}

#[test]
fn charts_can_be_disabled() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("r");
    let opts = ReportOptions {
        svg: false,
        png: false,
        ..Default::default()
    };
    let files = write_report(&dir, &sample(), &opts).unwrap();
    assert!(files.charts.is_empty());
    assert!(!read(&files.summary_md).contains("## Charts"));
}

#[test]
fn summary_lists_the_compositions_it_is_given_and_only_then() {
    let tmp = tempfile::tempdir().unwrap();
    let plain = no_charts();
    let files = write_report(&tmp.path().join("a"), &sample(), &plain).unwrap();
    assert!(!read(&files.summary_md).contains("## Workload compositions"));
    let prog = |name: &str, n, threads| WorkloadProgram {
        name: name.into(),
        n,
        threads,
    };
    let opts = ReportOptions {
        workloads: vec![
            WorkloadInfo {
                name: "Rand-1-10".into(),
                source: "random (seed 1)".into(),
                programs: vec![prog("mcf", 1, 1), prog("bzip2", 1, 1)],
            },
            WorkloadInfo {
                name: "Rand-1-2".into(),
                source: "random (seed 1)".into(),
                programs: vec![prog("ferret", 2, 11), prog("fft", 8, 8)],
            },
        ],
        ..plain
    };
    let files = write_report(&tmp.path().join("b"), &sample(), &opts).unwrap();
    let md = read(&files.summary_md);
    let table = "| workload | source | programs | composition | threads |\n|---|---|---|---|---|\n\
                 | Rand-1-2 | random (seed 1) | 2 | ferret n=2 (11) + fft n=8 (8) | 19 |\n\
                 | Rand-1-10 | random (seed 1) | 2 | mcf n=1 (1) + bzip2 n=1 (1) | 2 |\n";
    assert!(md.contains("## Workload compositions"), "{md}");
    assert!(md.contains(table), "{md}");
    // Right after the header, before the results.
    assert!(md.find("## Workload compositions") < md.find("## Per-workload results"));
}

#[test]
fn failed_runs_get_a_section_and_a_csv_and_only_when_there_are_some() {
    let tmp = tempfile::tempdir().unwrap();
    let plain = no_charts();
    let files = write_report(&tmp.path().join("a"), &sample(), &plain).unwrap();
    assert!(!read(&files.summary_md).contains("## Failed runs"));
    assert!(!tmp.path().join("a/failures.csv").exists());
    let failed = |seed, error: &str| FailedRun {
        workload: "Crowd".into(),
        config: "1B1S".into(),
        order: "big-first".into(),
        seed,
        policy: "cfs".into(),
        error: error.into(),
    };
    let opts = ReportOptions {
        failures: Failures {
            runs: (0..FAILURES_SHOWN as u64 + 2)
                .map(|s| failed(s, "deadlock | after 5 ms\n  Crowd / main#0 waits"))
                .collect(),
            left_out: vec![("Crowd".into(), "1B1S".into())],
        },
        ..plain
    };
    let files = write_report(&tmp.path().join("b"), &sample(), &opts).unwrap();
    let md = read(&files.summary_md);
    let part = section(&md, "## Failed runs");
    assert!(part.contains("**22 runs failed or could not run**, so 1 (workload, configuration) pairs are left out"), "{part}");
    assert!(part.contains(": Crowd on 1B1S."), "{part}");
    // First line of each error only, its pipe escaped; the rest counted.
    assert!(
        part.contains("| Crowd | 1B1S | cfs | big-first | 0 | deadlock \\| after 5 ms |"),
        "{part}"
    );
    assert!(!part.contains("waits"), "{part}");
    assert!(part.contains("and 2 more in failures.csv."), "{part}");
    assert_eq!(
        part.matches("| Crowd | 1B1S |").count(),
        FAILURES_SHOWN,
        "{part}"
    );
    assert!(md.find("## Failed runs") < md.find("## Per-workload results"));
    // The CSV keeps every run and its whole error.
    let csv = read(&tmp.path().join("b/failures.csv"));
    assert!(
        csv.starts_with("workload,config,order,seed,policy,error\n"),
        "{csv}"
    );
    assert_eq!(csv.matches("Crowd,1B1S,big-first,").count(), 22);
    assert!(csv.contains("Crowd / main#0 waits"), "{csv}");
}

#[test]
fn who_got_the_fast_cores_sums_cpu_times_per_program_and_policy() {
    // Two runs of a two-program mix per policy on 2B2S: p0 had 1 of 4 ms
    // and 3 of 4 ms on fast cores under cfs (50% summed, not a mean of
    // shares that would also be 50%: see p1), p1 1 of 1 ms and 0 of 3 ms
    // (25% summed; the mean of its shares would be 50%).
    let run = |policy: &str, seed, p0: (u64, u64), p1: (u64, u64)| {
        let mut r = rec(
            "Mix",
            &["Sync"],
            "2B2S",
            4,
            2,
            policy,
            "big-first",
            seed,
            &[(10, 5, 6), (10, 5, 6)],
            1.0,
        );
        (r.programs[0].fast_cpu_ns, r.programs[0].cpu_ns) = p0;
        (r.programs[1].fast_cpu_ns, r.programs[1].cpu_ns) = p1;
        r
    };
    let records = vec![
        run("cfs", 1, (1, 4), (1, 1)),
        run("cfs", 2, (3, 4), (0, 3)),
        run("rota", 1, (4, 4), (2, 2)),
        run("rota", 2, (4, 4), (0, 2)),
    ];
    let tmp = tempfile::tempdir().unwrap();
    let plain = no_charts();
    let files = write_report(&tmp.path().join("a"), &records, &plain).unwrap();
    let md = read(&files.summary_md);
    let part = section(&md, "## Who got the fast cores");
    assert!(part.contains("| program | cfs | rota |"), "{part}");
    assert!(part.contains("| p0 | 50% | 100% |"), "{part}");
    assert!(part.contains("| p1 | 25% | 50% |"), "{part}");
    // Every program all on fast cores (a symmetric machine), or no CPU
    // times recorded: no section.
    for (fast, cpu) in [(4, 4), (0, 0)] {
        let same: Vec<RunRecord> = records
            .iter()
            .cloned()
            .map(|mut r| {
                for p in &mut r.programs {
                    (p.fast_cpu_ns, p.cpu_ns) = (fast, cpu);
                }
                r
            })
            .collect();
        let files = write_report(&tmp.path().join(format!("s{cpu}")), &same, &plain).unwrap();
        assert!(!read(&files.summary_md).contains("Who got the fast cores"));
    }
}

#[test]
fn fast_cores_left_idle_is_the_mean_share_per_policy_and_machine() {
    // cfs on 2B2S: 0.5 and 0.25 -> 37.5%; on 4B4S one run, 0.1 -> 10.0%;
    // rota on 2B2S: 0.0 and 0.05 -> 2.5%, and a run without the share
    // (recorded before it was kept) counts for nothing, not as 0.
    let run = |policy: &str, config: &str, seed, share: Option<f64>| {
        let mut r = rec(
            "Mix",
            &["Sync"],
            config,
            4,
            2,
            policy,
            "big-first",
            seed,
            &[(10, 5, 6)],
            1.0,
        );
        r.fast_idle_share = share;
        r
    };
    let records = vec![
        run("cfs", "2B2S", 1, Some(0.5)),
        run("cfs", "2B2S", 2, Some(0.25)),
        run("cfs", "4B4S", 1, Some(0.1)),
        run("rota", "2B2S", 1, Some(0.0)),
        run("rota", "2B2S", 2, Some(0.05)),
        run("rota", "2B2S", 3, None),
    ];
    let tmp = tempfile::tempdir().unwrap();
    let files = write_report(&tmp.path().join("a"), &records, &no_charts()).unwrap();
    let md = read(&files.summary_md);
    let part = section(&md, "## Fast cores left idle while slower cores worked");
    assert!(part.contains("| policy | 2B2S | 4B4S |"), "{part}");
    assert!(part.contains("| cfs | 37.5% | 10.0% |"), "{part}");
    assert!(part.contains("| rota | 2.5% | - |"), "{part}");
    // No run with the share (older runs, symmetric machines): no section.
    let none: Vec<RunRecord> = records
        .into_iter()
        .map(|mut r| {
            r.fast_idle_share = None;
            r
        })
        .collect();
    let files = write_report(&tmp.path().join("b"), &none, &no_charts()).unwrap();
    assert!(!read(&files.summary_md).contains("Fast cores left idle"));
}

#[test]
fn summary_gives_the_distance_to_the_bound_from_both_sides() {
    // One cell, two programs (T_M, T_SB, T_alone). cfs: (10, 5, 6) and
    // (10, 5, 4): H_ANTT (2 + 2) / 2 = 2, bound 1: 2.000. rota: (6, 5, 5)
    // and (8, 5, 4): 1.4, bound 1: 1.400; the virtual best 1.400. One at a
    // time: each program's least T_alone (5, 4), Smith's order by T_alone
    // x T_SB puts p1 first: ends 4 and 9, (0.8 + 1.8) / 2 = 1.3, the best
    // known: cfs 2 / 1.3 = 1.538, rota 1.4 / 1.3 = 1.077.
    let run = |policy: &str, progs: &[(u64, u64, u64)], bound: Option<f64>| {
        let mut r = rec(
            "Mix",
            &["Sync"],
            "2B2S",
            4,
            2,
            policy,
            "big-first",
            1,
            progs,
            1.0,
        );
        r.h_antt_bound = bound;
        r
    };
    let mut rota = run("rota", &[(6, 5, 5), (8, 5, 4)], Some(1.0));
    rota.programs[0].bound_end_ns = Some(5.0);
    rota.programs[1].bound_end_ns = Some(4.0);
    let records = vec![
        run("cfs", &[(10, 5, 6), (10, 5, 4)], Some(1.0)),
        rota,
        // A single program has no H_ANTT to bound: left out.
        {
            let mut alone = run("cfs", &[(10, 5, 6)], Some(0.1));
            alone.workload = "Single".into();
            alone
        },
    ];
    let tmp = tempfile::tempdir().unwrap();
    let files = write_report(&tmp.path().join("a"), &records, &no_charts()).unwrap();
    let md = read(&files.summary_md);
    let part = section(&md, "## Distance to the lower bound");
    for row in [
        "|  | 2B2S |",
        "| cfs | 2.000 |",
        "| rota | 1.400 |",
        "| virtual best | 1.400 |",
        "| cfs | 1.538 |",
        "| rota | 1.077 |",
        "| virtual best | 1.077 |",
        "| one at a time | 1.000 |",
        "in 2B2S 1 of 1 cells",
        "| Mix | 2B2S | big-first | 1 | 1.400 | 1.300 | 1.000 | p0 1.20, p1 1.60 | p1 0.80, p0 1.00 |",
    ] {
        assert!(part.contains(row), "{row} not in {part}");
    }
    let none: Vec<RunRecord> = records
        .into_iter()
        .map(|mut r| {
            r.h_antt_bound = None;
            r
        })
        .collect();
    let files = write_report(&tmp.path().join("b"), &none, &no_charts()).unwrap();
    assert!(!read(&files.summary_md).contains("Distance to the lower bound"));
}

#[test]
fn generic_policies_and_missing_baseline_everywhere() {
    // No cfs at all, an unknown policy: nothing is normalised, nothing panics.
    let records: Vec<RunRecord> = sample()
        .into_iter()
        .filter(|r| r.policy != "cfs")
        .map(|mut r| {
            if r.policy == "wash" {
                r.policy = "camp".into();
            }
            r
        })
        .collect();
    let tmp = tempfile::tempdir().unwrap();
    let files = write_report(&tmp.path().join("r"), &records, &ReportOptions::default()).unwrap();
    let md = read(&files.summary_md);
    assert!(
        md.contains("| workload | classes | threads | cfs abs | colab | camp |"),
        "{md}"
    );
    assert!(md.contains("no `cfs` run"));
    // With no baseline the normalised charts have no data and are skipped
    // with a warning; the fast-core shares, which need none, are drawn.
    assert!(!files.charts.is_empty());
    for c in &files.charts {
        let name = c.file_name().unwrap().to_string_lossy();
        assert!(name.starts_with("fast_share_"), "{name}");
    }
    assert!(files.warnings.iter().any(|w| w.contains("not drawn")));
}

/// Runs in a child process with an empty fontconfig (see `missing_fonts_*`).
#[test]
#[ignore = "spawned by missing_fonts_are_a_clear_error with an empty font config"]
fn child_without_fonts() {
    let Ok(out) = std::env::var("COLAB_REPORT_TEST_DIR") else {
        return;
    };
    let out = Path::new(&out);
    let e = check_fonts().unwrap_err();
    assert!(matches!(e, ReportError::Font(_)), "{e}");
    assert!(e.to_string().contains("fonts-dejavu-core"), "{e}");

    let dir = out.join("fail");
    let e = write_report(&dir, &sample(), &ReportOptions::default()).unwrap_err();
    assert!(matches!(e, ReportError::Font(_)), "{e}");
    assert!(!dir.exists());

    let dir = out.join("skip");
    let opts = ReportOptions {
        on_chart_failure: ChartFailure::Skip,
        ..Default::default()
    };
    let files = write_report(&dir, &sample(), &opts).unwrap();
    assert!(files.charts.is_empty());
    assert!(files
        .warnings
        .iter()
        .any(|w| w.contains("charts not written")));
    assert!(read(&files.summary_md).contains("charts not written"));
    assert!(!entries(&dir)
        .iter()
        .any(|f| f.ends_with(".png") || f.ends_with(".svg")));
    println!("CHILD-OK");
}

#[test]
fn missing_fonts_are_a_clear_error() {
    let tmp = tempfile::tempdir().unwrap();
    let conf = tmp.path().join("fonts.conf");
    std::fs::write(
        &conf,
        format!(
            "<?xml version=\"1.0\"?>\n<fontconfig><dir>{0}/no-fonts</dir>\
             <cachedir>{0}/cache</cachedir></fontconfig>\n",
            tmp.path().display()
        ),
    )
    .unwrap();
    let exe = std::env::current_exe().unwrap();
    let out = std::process::Command::new(exe)
        .args([
            "--exact",
            "tests::child_without_fonts",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("FONTCONFIG_FILE", &conf)
        .env("COLAB_REPORT_TEST_DIR", tmp.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("CHILD-OK"),
        "child failed:\n{stdout}\n{stderr}"
    );
}

#[test]
fn propsp_metrics_and_edp_by_hand() {
    // Programs: T_M = 2 s and 4 s, T_SB = 1 s and 2 s (slowdowns 2 and 2),
    // T_slow = 3 x T_SB = 3 s and 6 s. ASP = (3/2 - 1) + (6/4 - 1) = 1.0.
    // Prop-SP unfairness = 2 / 2 = 1. Makespan 4 s, energy 5 J: EDP 20 J s.
    let s = 1_000_000_000;
    let r = rec(
        "w",
        &["Sync"],
        "2B2S",
        4,
        2,
        "cfs",
        "big-first",
        1,
        &[(2 * s, s, s), (4 * s, 2 * s, 3 * s)],
        5.0,
    );
    let m = run_metrics(&r).unwrap();
    assert!(close(m.asp, 1.0), "{m:?}");
    assert!(close(m.propsp_unfairness, 1.0), "{m:?}");
    assert!(close(m.edp, 20.0), "{m:?}");
    // tpds's unfairness uses T_alone instead: slowdowns 2 and 4/3.
    assert!(close(m.unfairness, 1.5), "{m:?}");
    let mut bad = r.clone();
    bad.programs[0].t_slow_ns = 0;
    assert!(run_metrics(&bad).is_err());
}

#[test]
fn per_application_speedup_over_the_baseline_by_hand() {
    let s = 1_000_000_000;
    // One mix of two programs on one config; cfs and colab, one run each.
    // colab: p0 2 s -> 1 s (2x), p1 4 s -> 5 s (0.8x): geomean sqrt(1.6).
    let records = vec![
        rec(
            "m",
            &["Sync"],
            "2B2S",
            4,
            2,
            "cfs",
            "big-first",
            1,
            &[(2 * s, s, s), (4 * s, s, s)],
            1.0,
        ),
        rec(
            "m",
            &["Sync"],
            "2B2S",
            4,
            2,
            "colab",
            "big-first",
            1,
            &[(s, s, s), (5 * s, s, s)],
            1.0,
        ),
    ];
    let cells = aggregate(&records).unwrap();
    let md = summary::render(&summary::SummaryInput {
        records: &records,
        cells: &cells,
        opts: &ReportOptions::default(),
        charts: &[],
        warnings: &[],
    });
    assert!(md.contains("## Per-application speedup over cfs"), "{md}");
    assert!(
        md.contains(&format!(
            "| 2B2S | colab | 2 | {:.3} | 1/2 |",
            1.6f64.sqrt()
        )),
        "{md}"
    );
}

/// A run whose programs have names: (name, T_M s, T_SB s); T_alone = T_SB.
fn named(workload: &str, policy: &str, order: &str, programs: &[(&str, u64, u64)]) -> RunRecord {
    let s = 1_000_000_000;
    let times: Vec<(u64, u64, u64)> = programs
        .iter()
        .map(|&(_, t_m, t_sb)| (t_m * s, t_sb * s, t_sb * s))
        .collect();
    let mut r = rec(
        workload,
        &["Sync"],
        "2B2S",
        4,
        2,
        policy,
        order,
        1,
        &times,
        1.0,
    );
    for (p, &(name, _, _)) in r.programs.iter_mut().zip(programs) {
        p.name = name.into();
    }
    r
}

/// Two mixes sharing program `a`, `a` twice in `m2`; wash does not run `m2`.
fn app_records() -> Vec<RunRecord> {
    const BF: &str = "big-first";
    const LF: &str = "little-first";
    vec![
        // m1, means over the orders: cfs a 3, b 4; colab a 1.5, b 4; wash a 3, b 2.
        named("m1", "cfs", BF, &[("a", 2, 1), ("b", 4, 1)]),
        named("m1", "cfs", LF, &[("a", 4, 1), ("b", 4, 1)]),
        named("m1", "colab", BF, &[("a", 1, 1), ("b", 5, 1)]),
        named("m1", "colab", LF, &[("a", 2, 1), ("b", 3, 1)]),
        named("m1", "wash", BF, &[("a", 3, 1), ("b", 2, 1)]),
        named("m1", "wash", LF, &[("a", 3, 1), ("b", 2, 1)]),
        // m2: colab speeds the first a up 3x, slows the second down 2x, c 3x.
        named("m2", "cfs", BF, &[("a", 6, 1), ("a", 2, 1), ("c", 3, 1)]),
        named("m2", "colab", BF, &[("a", 2, 1), ("a", 4, 1), ("c", 1, 1)]),
    ]
}

#[test]
fn per_application_chart_by_hand() {
    let records = app_records();
    let cells = aggregate(&records).unwrap();
    let opts = ReportOptions::default();
    let a = analysis::Analysis::new(&cells, &opts);
    let speedups = analysis::app_speedups(&a.baseline, &records);
    let chart = charts::app_speedup_chart(&a, &speedups, "2B2S");
    assert_eq!(chart.series, ["wash", "colab"]);
    assert_eq!(chart.reference, Some(1.0));
    let labels: Vec<&str> = chart.groups.iter().map(|g| g.label.as_str()).collect();
    assert_eq!(labels, ["a", "b", "c"]);
    // colab: a = geomean(2, 3, 0.5), b = 4/4, c = 3; wash: a = 3/3, b = 4/2, no c.
    let want = [
        [Some(1.0), Some(3f64.cbrt())],
        [Some(2.0), Some(1.0)],
        [None, Some(3.0)],
    ];
    for (g, w) in chart.groups.iter().zip(want) {
        assert_eq!(g.values.len(), 2, "{}", g.label);
        for (v, w) in g.values.iter().zip(w) {
            assert_eq!(v.is_some(), w.is_some(), "{}: {v:?} vs {w:?}", g.label);
            if let (Some(v), Some(w)) = (v, w) {
                assert!(close(*v, w), "{}: {v} vs {w}", g.label);
            }
        }
    }
    // The table summarises the same speedups: colab over 5 programs,
    // geomean(2, 1, 3, 0.5, 3) = 9^(1/5), 3 sped up; wash sqrt(2), 1 of 2.
    let md = summary::render(&summary::SummaryInput {
        records: &records,
        cells: &cells,
        opts: &opts,
        charts: &[],
        warnings: &[],
    });
    for row in [
        format!("| 2B2S | colab | 5 | {:.3} | 3/5 |", 9f64.powf(0.2)),
        format!("| 2B2S | wash | 2 | {:.3} | 1/2 |", 2f64.sqrt()),
    ] {
        assert!(md.contains(&row), "{row}\n{md}");
    }
    // No other policy: no bars.
    let only_cfs: Vec<RunRecord> = records
        .iter()
        .filter(|r| r.policy == "cfs")
        .cloned()
        .collect();
    let cells = aggregate(&only_cfs).unwrap();
    let a = analysis::Analysis::new(&cells, &opts);
    let speedups = analysis::app_speedups(&a.baseline, &only_cfs);
    assert!(charts::app_speedup_chart(&a, &speedups, "2B2S")
        .groups
        .is_empty());
}

/// Mixes m1, m2 (cfs and colab), m3 (colab only) and a single program.
/// With T_slow = 3 T_SB: ASP = sum(3 T_SB / T_M - 1), Prop-SP unfairness =
/// max / min of T_M / T_SB.
fn asp_records() -> Vec<RunRecord> {
    const BF: &str = "big-first";
    vec![
        // ASP 0.5 + 0, unfairness 3/2.
        named("m1", "cfs", BF, &[("a", 2, 1), ("b", 3, 1)]),
        // ASP 2 + 0, unfairness 3.
        named("m1", "colab", BF, &[("a", 1, 1), ("b", 3, 1)]),
        // ASP 0.5 + 0.5, unfairness 1.
        named("m2", "cfs", BF, &[("a", 4, 2), ("b", 2, 1)]),
        // ASP 1 - 0.25, unfairness 4 / 1.5.
        named("m2", "colab", BF, &[("a", 3, 2), ("b", 4, 1)]),
        // No baseline: left out of both means (ASP 4 would move colab's).
        named("m3", "colab", BF, &[("a", 1, 1), ("b", 1, 1)]),
        // One program: unfairness 1 by definition, left out (ASP 2 and 0).
        named("s", "cfs", BF, &[("a", 1, 1)]),
        named("s", "colab", BF, &[("a", 3, 1)]),
    ]
}

#[test]
fn asp_unfairness_points_by_hand() {
    let records = asp_records();
    let cells = aggregate(&records).unwrap();
    let a = analysis::Analysis::new(&cells, &ReportOptions::default());
    let points = charts::asp_unfairness_points(&a, "2B2S");
    // cfs: unfairness geomean(1, 1), ASP mean(0.5, 1).
    // colab: unfairness geomean(3 / 1.5, (8/3) / 1), ASP mean(2, 0.75).
    let want = [
        ("cfs", 1.0, 0.75),
        ("colab", (2.0f64 * 8.0 / 3.0).sqrt(), 1.375),
    ];
    assert_eq!(points.len(), want.len(), "{points:?}");
    for ((p, x, y), (wp, wx, wy)) in points.iter().zip(want) {
        assert_eq!(p, wp);
        assert!(close(*x, wx), "{p}: unfairness {x} vs {wx}");
        assert!(close(*y, wy), "{p}: ASP {y} vs {wy}");
    }
}

/// The section of `md` that starts with `heading`, up to the next `## `.
fn section<'m>(md: &'m str, heading: &str) -> &'m str {
    let start = md
        .find(heading)
        .unwrap_or_else(|| panic!("no {heading}:\n{md}"));
    let rest = &md[start + heading.len()..];
    &rest[..rest.find("\n## ").unwrap_or(rest.len())]
}

#[test]
fn study_charts_are_written_and_linked() {
    let tmp = tempfile::tempdir().unwrap();
    let mut records = app_records();
    records.extend(asp_records().into_iter().map(|mut r| {
        r.config = "4B4S".into();
        r.cores = 8;
        r
    }));
    let files = write_report(&tmp.path().join("r"), &records, &ReportOptions::default()).unwrap();
    let md = read(&files.summary_md);
    let apps = section(&md, "## Per-application speedup over cfs");
    let asp = section(&md, "## Throughput and fairness as Prop-SP measures them");
    // (The test records put half of each program's CPU time on fast cores.)
    let fast = section(&md, "## Who got the fast cores");
    for (stem, linked_in) in [
        ("app_speedup_2B2S", apps),
        ("app_speedup_4B4S", apps),
        ("asp_unfairness_2B2S", asp),
        ("asp_unfairness_4B4S", asp),
        ("fast_share_2B2S", fast),
        ("fast_share_4B4S", fast),
    ] {
        for ext in ["svg", "png"] {
            let name = format!("{stem}.{ext}");
            let path = files.dir.join(&name);
            assert!(
                files.charts.contains(&path),
                "{name} not in {:?}",
                files.charts
            );
            let len = std::fs::metadata(&path).map_or(0, |m| m.len());
            assert!(len > 1000, "{name}: {len} bytes");
            assert!(
                linked_in.contains(&format!("[{name}]({name})")),
                "{name} not linked in its section:\n{linked_in}"
            );
        }
    }
    let svg = read(&files.dir.join("asp_unfairness_2B2S.svg"));
    for label in ["cfs", "colab", "Prop-SP unfairness", "ASP"] {
        assert!(svg.contains(label), "scatter lacks {label}");
    }
    assert!(read(&files.dir.join("app_speedup_2B2S.svg")).contains("speedup over cfs"));
    assert!(read(&files.dir.join("fast_share_2B2S.svg")).contains("share on the fastest cores"));
    assert!(files.warnings.is_empty(), "{:?}", files.warnings);
}

#[test]
fn no_scatter_without_prop_sp_data() {
    // Single programs only: Prop-SP unfairness is 1 by definition, nothing
    // to plot against ASP; the per-application chart is still drawn.
    let records: Vec<RunRecord> = asp_records()
        .into_iter()
        .filter(|r| r.workload == "s")
        .collect();
    let tmp = tempfile::tempdir().unwrap();
    let files = write_report(&tmp.path().join("r"), &records, &ReportOptions::default()).unwrap();
    let names = entries(&files.dir);
    assert!(
        !names.iter().any(|n| n.starts_with("asp_unfairness")),
        "{names:?}"
    );
    assert!(
        names.contains(&"app_speedup_2B2S.svg".to_string()),
        "{names:?}"
    );
    let md = read(&files.summary_md);
    assert!(!md.contains("asp_unfairness"), "{md}");
    assert!(!md.contains("ASP against Prop-SP unfairness"), "{md}");
    assert!(files.warnings.is_empty(), "{:?}", files.warnings);

    // Mixes without a baseline run: nothing normalised, no scatter, a warning.
    let records: Vec<RunRecord> = asp_records()
        .into_iter()
        .filter(|r| r.policy != "cfs")
        .collect();
    let files = write_report(&tmp.path().join("q"), &records, &ReportOptions::default()).unwrap();
    assert!(!entries(&files.dir)
        .iter()
        .any(|n| n.starts_with("asp_unfairness")));
    assert!(
        files
            .warnings
            .iter()
            .any(|w| w.contains("asp_unfairness_2B2S not drawn")),
        "{:?}",
        files.warnings
    );
}

#[test]
fn summary_says_which_policies_coincide_and_why() {
    // camp and rr: the same runs; sfd: one run differs; wash: the same as
    // a second pair with colab.
    let run = |policy: &str, seed, t: u64| {
        rec(
            "Mix",
            &["Sync"],
            "2B2S",
            4,
            2,
            policy,
            "big-first",
            seed,
            &[(t, 5, 6), (12, 5, 6)],
            1.0,
        )
    };
    let mut records = Vec::new();
    for (p, t2) in [
        ("cfs", 9),
        ("camp", 10),
        ("rr", 10),
        ("sfd", 11),
        ("wash", 8),
        ("colab", 8),
    ] {
        records.push(run(p, 1, 10));
        records.push(run(p, 2, t2));
    }
    let tmp = tempfile::tempdir().unwrap();
    let files = write_report(&tmp.path().join("a"), &records, &no_charts()).unwrap();
    let md = read(&files.summary_md);
    assert!(
        md.contains("**camp = rr** came out the same in every run: CAMP, SFD and RR differ only"),
        "{md}"
    );
    assert!(
        md.contains("**wash = colab** came out the same in every run: they made the same"),
        "{md}"
    );
    assert!(
        !md.contains("sfd** came out") && !md.contains("= sfd"),
        "{md}"
    );
}

/// The two-configuration set of the first-screen test: one workload of
/// two programs (T_SB 5 each), T_M per policy and energy as written.
fn winners_records() -> Vec<RunRecord> {
    let mut records = Vec::new();
    for (config, per_policy) in [
        (
            "2B2S",
            [
                ("cfs", 10, 1.0),
                ("a", 8, 2.0),
                ("b", 9, 0.5),
                ("c", 12, 1.0),
            ],
        ),
        (
            "4B4S",
            [
                ("cfs", 10, 1.0),
                ("a", 11, 2.0),
                ("b", 7, 0.5),
                ("c", 9, 1.0),
            ],
        ),
    ] {
        for (policy, t, energy) in per_policy {
            for order in ["big-first", "little-first"] {
                records.push(rec(
                    "Mix",
                    &["Sync"],
                    config,
                    4,
                    2,
                    policy,
                    order,
                    1,
                    &[(t, 5, 6), (t, 5, 6)],
                    energy,
                ));
            }
        }
    }
    records
}

#[test]
fn first_screen_says_what_was_run_and_who_won() {
    let records = winners_records();
    let mut opts = no_charts();
    opts.provenance = crate::Provenance {
        command: "colab reproduce --quick".into(),
        made: "colab 0.1.0, 2026-12-06".into(),
        scope: crate::Scope::Quick("1 of the study's 9 workloads".into()),
        simulations: Some(26),
        machine_notes: vec!["4B has one core type: so and so.".into()],
    };
    let tmp = tempfile::tempdir().unwrap();
    let files = write_report(&tmp.path().join("a"), &records, &opts).unwrap();
    let md = read(&files.summary_md);
    // Before the first per-workload table.
    let first = &md[..md.find("## Per-workload results").unwrap()];
    assert!(
        first.contains(
            "**Quick run** (`--quick`): 1 of the study's 9 workloads. The whole study is the \
             same command without `--quick`."
        ),
        "{first}"
    );
    assert!(
        first.contains("Made by `colab reproduce --quick` (colab 0.1.0, 2026-12-06)."),
        "{first}"
    );
    // H_ANTT over cfs: 2B2S a 8/10, b 9/10, cfs 1, c 12/10; 4B4S b 7/10,
    // c 9/10, cfs, a 11/10. H_STP over cfs: 10/8 and 10/7. Energy: b 0.5.
    let who = section(first, "## Who won");
    assert!(
        who.contains(
            "| 2B2S | 1 | a 0.800 | 12.5% | b 0.900 | cfs 1.000 | c 1.200 | a 1.250 | b 0.500 |"
        ),
        "{who}"
    );
    assert!(
        who.contains(
            "| 4B4S | 1 | b 0.700 | 28.6% | c 0.900 | cfs 1.000 | a 1.100 | b 1.429 | b 0.500 |"
        ),
        "{who}"
    );
    assert!(
        first.contains(
            "16 runs measured = 1 workload x 2 configs x 4 policies x 2 core orders x 1 seed, \
             averaged into 8 cells"
        ),
        "{first}"
    );
    assert!(
        first.contains("count of 26 simulations also holds the 10 runs of each program alone"),
        "{first}"
    );
    assert!(
        first.contains("**Note**: 4B has one core type: so and so."),
        "{first}"
    );

    // Without provenance: no claim about how it was run.
    let files = write_report(&tmp.path().join("b"), &records, &no_charts()).unwrap();
    let md = read(&files.summary_md);
    assert!(md.contains("## Who won"), "{md}");
    for absent in [
        "Quick run",
        "Full run",
        "Made by",
        "simulations also holds",
        "**Note**",
    ] {
        assert!(!md.contains(absent), "{absent}:\n{md}");
    }
    let mut full = no_charts();
    full.provenance.scope = crate::Scope::Full;
    let files = write_report(&tmp.path().join("c"), &records, &full).unwrap();
    let md = read(&files.summary_md);
    assert!(
        md.contains("**Full run** (without `--quick`): every workload"),
        "{md}"
    );
}

#[test]
fn workloads_without_a_class_say_why_there_is_no_class_table() {
    // An own mix with no `classes` and as many threads as cores: no class.
    let records: Vec<RunRecord> = ["cfs", "rota"]
        .iter()
        .map(|p| {
            rec(
                "mine",
                &[],
                "2B2S",
                4,
                4,
                p,
                "big-first",
                1,
                &[(10, 5, 6), (12, 5, 6)],
                1.0,
            )
        })
        .collect();
    let tmp = tempfile::tempdir().unwrap();
    let files = write_report(&tmp.path().join("r"), &records, &ReportOptions::default()).unwrap();
    let md = read(&files.summary_md);
    let per_class = section(&md, "## Per-class results");
    assert!(
        per_class.contains("No workload has a class (a mix file's `classes = [\"...\"]`"),
        "{per_class}"
    );
    assert!(!per_class.contains("No data."), "{per_class}");
    assert!(
        files
            .warnings
            .iter()
            .any(|w| w.starts_with("chart class_h_antt not drawn: no workload has a class")),
        "{:?}",
        files.warnings
    );
}
