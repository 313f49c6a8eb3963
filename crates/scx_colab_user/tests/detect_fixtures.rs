//! Core-type detection on the sysfs trees of real parts
//! (tests/fixtures/sysfs/<part>/, values and their sources in the README
//! there): each part's core types, its big/little split, SMT siblings and
//! clusters are the part's real ones; bad trees give errors naming the
//! file, never a panic.

use std::path::{Path, PathBuf};

use scx_colab_user::detect::{core_types, format_cpu_list, Machine, Pmu, Source};
use scx_colab_user::topo::{parse_cpu_list, split, Split, SplitMode};

fn fixture(part: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/sysfs")
        .join(part)
}

fn detect(part: &str) -> Machine {
    core_types(&fixture(part)).unwrap_or_else(|e| panic!("{part}: {e:#}"))
}

fn ids(list: &str) -> Vec<usize> {
    parse_cpu_list(list).unwrap()
}

/// The core types, slowest first, as CPU lists.
fn types(m: &Machine) -> Vec<String> {
    m.types.iter().map(|t| format_cpu_list(&t.cpus)).collect()
}

/// The SMT cores: each core with two or more threads, as a CPU list, in
/// order of first CPU.
fn smt_cores(m: &Machine) -> Vec<String> {
    m.cpus
        .iter()
        .filter(|c| c.siblings.len() > 1 && c.id == c.core)
        .map(|c| format_cpu_list(&c.siblings))
        .collect()
}

/// The clusters (cluster_cpus_list), as CPU lists, in order of first CPU.
fn clusters(m: &Machine) -> Vec<String> {
    let mut firsts: Vec<usize> = m.cpus.iter().filter_map(|c| c.cluster).collect();
    firsts.sort_unstable();
    firsts.dedup();
    firsts
        .iter()
        .map(|&f| {
            let members: Vec<usize> = m
                .cpus
                .iter()
                .filter(|c| c.cluster == Some(f))
                .map(|c| c.id)
                .collect();
            format_cpu_list(&members)
        })
        .collect()
}

fn split_of(m: &Machine) -> Split {
    split(&m.cpu_caps(), None, None).unwrap()
}

/// What a part's classification must be.
struct Want {
    part: &'static str,
    /// Core types, slowest first.
    types: &'static [&'static str],
    pmu: &'static [Option<Pmu>],
    source: Option<Source>,
    big: &'static str,
    little: &'static str,
    mode: SplitMode,
    /// The capacity-ratio speedup (DEFAULT_SPEEDUP for TypesOnly).
    speedup: f64,
    /// Cores with two or more online threads.
    smt: &'static [&'static str],
    clusters: &'static [&'static str],
}

const P: Option<Pmu> = Some(Pmu::Core);
const E: Option<Pmu> = Some(Pmu::Atom);

fn wants() -> Vec<Want> {
    vec![
        // 6 P-cores with SMT + 8 E-cores; two P-cores favoured (60 against
        // 58 CPPC units): still one P type.
        Want {
            part: "alderlake-i7-12700h",
            types: &["12-19", "0-11"],
            pmu: &[E, P],
            source: Some(Source::CppcHighestPerf),
            big: "0-11",
            little: "12-19",
            mode: SplitMode::Hardware,
            // P: 4 threads at 1024 (60), 8 at 990 (58); E: 597 (35).
            speedup: (4.0 * 1024.0 + 8.0 * 990.0) / 12.0 / 597.0,
            smt: &["0-1", "2-3", "4-5", "6-7", "8-9", "10-11"],
            clusters: &["0-1", "2-3", "4-5", "6-7", "8-9", "10-11", "12-15", "16-19"],
        },
        // sched-ext/scx#1893: every CPU reports the same highest_perf and
        // max frequency; only the PMU lists tell P from E.
        Want {
            part: "raptorlake-i7-13650hx",
            types: &["12-19", "0-11"],
            pmu: &[E, P],
            source: Some(Source::CppcHighestPerf),
            big: "0-11",
            little: "12-19",
            mode: SplitMode::TypesOnly,
            speedup: 2.0,
            smt: &["0-1", "2-3", "4-5", "6-7", "8-9", "10-11"],
            clusters: &["0-1", "2-3", "4-5", "6-7", "8-9", "10-11", "12-15", "16-19"],
        },
        // ublue-os/bazzite#5122: a 6.19 kernel gives every CPU
        // cpu_capacity 1024; that source tells nothing apart and the max
        // frequencies (5.4 against 4.1 GHz) are the next that do.
        Want {
            part: "raptorlake-i5-14600k-capacity-1024",
            types: &["12-19", "0-11"],
            pmu: &[E, P],
            source: Some(Source::MaxFreq),
            big: "0-11",
            little: "12-19",
            mode: SplitMode::Hardware,
            speedup: 1024.0 / 777.0,
            smt: &["0-1", "2-3", "4-5", "6-7", "8-9", "10-11"],
            clusters: &[],
        },
        // 4 P + 4 LP E, no SMT (sched-ext/scx#3259's machine).
        Want {
            part: "lunarlake-ultra7-258v",
            types: &["4-7", "0-3"],
            pmu: &[E, P],
            source: Some(Source::CppcHighestPerf),
            big: "0-3",
            little: "4-7",
            mode: SplitMode::Hardware,
            speedup: 1024.0 / 677.0,
            smt: &[],
            clusters: &["0", "1", "2", "3", "4-7"],
        },
        // 8 P + 16 E, no SMT; CPUs 2-3 favoured (63 against 61); its
        // cpufreq puts the P-cores below the E-cores (3.9 against 4.6 GHz),
        // CPPC and the PMU lists do not.
        Want {
            part: "arrowlake-ultra9-275hx",
            types: &["8-23", "0-7"],
            pmu: &[E, P],
            source: Some(Source::CppcHighestPerf),
            big: "0-7",
            little: "8-23",
            mode: SplitMode::Hardware,
            speedup: (2.0 * 1024.0 + 6.0 * 991.0) / 8.0 / 748.0,
            smt: &[],
            clusters: &[],
        },
        // Three tiers on x86: LP E-cores are cpu_atom CPUs at two thirds of
        // the E-cores' clock. Little = LP E only; big = P and E, as ROTA's
        // fast cores in the simulator's 155H.
        Want {
            part: "meteorlake-ultra7-155h",
            types: &["20-21", "2-9", "0-1,10-19"],
            pmu: &[E, E, P],
            source: Some(Source::CppcHighestPerf),
            big: "0-19",
            little: "20-21",
            mode: SplitMode::Hardware,
            // P 12 threads at 1024 (60), E 8 at 649 (38); LP E 427 (25).
            speedup: (12.0 * 1024.0 + 8.0 * 649.0) / 20.0 / 427.0,
            smt: &["0-1", "10-11", "12-13", "14-15", "16-17", "18-19"],
            clusters: &[
                "0-1", "2-5", "6-9", "10-11", "12-13", "14-15", "16-17", "18-19", "20-21",
            ],
        },
        // sched-ext/scx#1991: A55 160, A76 498, X1 1024.
        Want {
            part: "tensor-gs101",
            types: &["0-3", "4-5", "6-7"],
            pmu: &[None, None, None],
            source: Some(Source::CpuCapacity),
            big: "4-7",
            little: "0-3",
            mode: SplitMode::Hardware,
            speedup: (2.0 * 498.0 + 2.0 * 1024.0) / 4.0 / 160.0,
            smt: &[],
            clusters: &["0-3", "4-5", "6-7"],
        },
        // 4x A55 + two A76 clusters binned 2% apart: two types, three
        // clusters.
        Want {
            part: "rk3588-orangepi5plus",
            types: &["0-3", "4-7"],
            pmu: &[None, None],
            source: Some(Source::CpuCapacity),
            big: "4-7",
            little: "0-3",
            mode: SplitMode::Hardware,
            speedup: (2.0 * 1024.0 + 2.0 * 1003.0) / 4.0 / 405.0,
            smt: &[],
            clusters: &["0-3", "4-5", "6-7"],
        },
        // One type: Turbo Boost Max 3.0 cores at 4.8 and 4.7 GHz, the rest
        // at 4.6; CPU 23 offline, so CPU 11 is a core of one thread.
        Want {
            part: "cascadelake-i9-10920x-cpu23-offline",
            types: &["0-22"],
            pmu: &[None],
            source: Some(Source::MaxFreq),
            big: "",
            little: "0-22",
            mode: SplitMode::Homogeneous,
            speedup: 1.0,
            smt: &[
                "0,12", "1,13", "2,14", "3,15", "4,16", "5,17", "6,18", "7,19", "8,20", "9,21",
                "10,22",
            ],
            clusters: &[],
        },
    ]
}

/// Every part is checked, and the failures of all are reported together.
#[test]
fn every_fixture_is_classified_as_its_part_is_built() {
    let failed: Vec<String> = wants()
        .into_iter()
        .filter_map(|w| {
            let part = w.part;
            std::panic::catch_unwind(move || check(&w))
                .err()
                .map(|_| part.to_string())
        })
        .collect();
    assert!(failed.is_empty(), "misclassified: {failed:?}");
}

fn check(w: &Want) {
    let m = detect(w.part);
    let p = w.part;
    assert!(m.warnings.is_empty(), "{p}: {:?}", m.warnings);
    assert_eq!(types(&m), w.types, "{p}: core types, slowest first");
    assert_eq!(m.tiers(), w.types.len(), "{p}: tiers");
    let pmu: Vec<Option<Pmu>> = m.types.iter().map(|t| t.pmu).collect();
    assert_eq!(pmu, w.pmu, "{p}: PMU kinds");
    assert_eq!(m.pmu_lists, w.pmu.iter().any(Option::is_some), "{p}");
    assert_eq!(m.source, w.source, "{p}: capacity source");
    // Each CPU's tier is its type's index; siblings share one.
    for c in &m.cpus {
        assert!(m.types[c.tier].cpus.contains(&c.id), "{p}: CPU {}", c.id);
        for s in &c.siblings {
            let sib = m.cpus.iter().find(|x| x.id == *s).unwrap();
            assert_eq!(sib.tier, c.tier, "{p}: CPU {} and its sibling {s}", c.id);
        }
    }
    assert_eq!(smt_cores(&m), w.smt, "{p}: SMT cores");
    assert_eq!(clusters(&m), w.clusters, "{p}: clusters");
    // Distinct cores: one per thread group.
    let mut cores: Vec<usize> = m.cpus.iter().map(|c| c.core).collect();
    cores.sort_unstable();
    cores.dedup();
    let threads: usize = m.cpus.len();
    let smt_threads: usize = w.smt.iter().map(|s| ids(s).len()).sum();
    assert_eq!(
        cores.len(),
        threads - smt_threads + w.smt.len(),
        "{p}: cores"
    );

    assert_eq!(format_cpu_list(&m.big()), w.big, "{p}: big");
    let s = split_of(&m);
    assert_eq!(s.mode, w.mode, "{p}: {}", s.describe());
    assert_eq!(format_cpu_list(&s.big), w.big, "{p}: split big");
    assert_eq!(format_cpu_list(&s.little), w.little, "{p}: split little");
    assert!(
        (s.speedup - w.speedup).abs() < 1e-9,
        "{p}: speedup {} want {}",
        s.speedup,
        w.speedup
    );
    assert_eq!(s.smt(), !w.smt.is_empty(), "{p}");
    // Three types or more: each big CPU with its type's rank among the big
    // ones (ROTA's tiers); none with two.
    let tiers: Vec<(usize, u8)> = if w.types.len() >= 3 {
        m.cpus
            .iter()
            .filter(|c| c.tier > 0)
            .map(|c| (c.id, (c.tier - 1) as u8))
            .collect()
    } else {
        Vec::new()
    };
    assert_eq!(s.big_tiers, tiers, "{p}: big tiers");
    assert_eq!(s.tiered(), w.types.len() >= 3, "{p}: tiered");
    assert!(
        m.describe()
            .contains(&format!("{} core type", w.types.len())),
        "{p}: {}",
        m.describe()
    );
}

#[test]
fn offline_cpus_are_left_out() {
    let m = detect("cascadelake-i9-10920x-cpu23-offline");
    assert_eq!(m.cpus.len(), 23);
    assert!(m.cpus.iter().all(|c| c.id != 23));
    let c11 = m.cpus.iter().find(|c| c.id == 11).unwrap();
    assert_eq!(c11.siblings, vec![11]);
    // Favoured cores' frequencies differ by 4%: one type, capacities apart.
    assert_eq!(m.types[0].capacity, (981, 1024));
}

#[test]
fn tensor_three_tiers_in_order_with_distinct_cores() {
    let m = detect("tensor-gs101");
    // core_id repeats across arm64 clusters (0-3, 0-1, 0-1): the cores
    // come from core_cpus_list, one per CPU.
    let cores: Vec<usize> = m.cpus.iter().map(|c| c.core).collect();
    assert_eq!(cores, (0..8).collect::<Vec<_>>());
    let caps: Vec<(usize, usize)> = m.types.iter().map(|t| t.capacity).collect();
    assert_eq!(caps, vec![(160, 160), (498, 498), (1024, 1024)]);
    let s = split_of(&m);
    assert_eq!(s.big_tiers, vec![(4, 0), (5, 0), (6, 1), (7, 1)]);
    assert!(
        s.describe().contains("big tiers, slowest first: 4,5 < 6,7"),
        "{}",
        s.describe()
    );
    assert!(
        m.describe().starts_with("3 core types by cpu_capacity"),
        "{}",
        m.describe()
    );
}

/// A copy of a fixture to damage.
fn copy_of(part: &str) -> tempfile::TempDir {
    fn copy(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap() {
            let e = e.unwrap();
            let dst = to.join(e.file_name());
            if e.file_type().unwrap().is_dir() {
                copy(&e.path(), &dst);
            } else {
                std::fs::copy(e.path(), &dst).unwrap();
            }
        }
    }
    let d = tempfile::tempdir().unwrap();
    copy(&fixture(part), d.path());
    d
}

fn cpu_file(root: &Path, cpu: usize, file: &str) -> PathBuf {
    root.join(format!("sys/devices/system/cpu/cpu{cpu}/{file}"))
}

/// Without CPPC the 275HX's cpufreq is the source, and it puts the E-cores
/// above the P-cores; the PMU lists keep P above E, a warning says so, and
/// the speedup is not taken from the inverted capacities.
#[test]
fn pmu_lists_win_over_capacities_that_invert_p_and_e() {
    let d = copy_of("arrowlake-ultra9-275hx");
    for c in 0..24 {
        std::fs::remove_dir_all(cpu_file(d.path(), c, "acpi_cppc")).unwrap();
    }
    let m = core_types(d.path()).unwrap();
    assert_eq!(m.source, Some(Source::MaxFreq));
    assert_eq!(types(&m), ["8-23", "0-7"]);
    assert_eq!(m.warnings.len(), 1, "{:?}", m.warnings);
    assert!(
        m.warnings[0].contains("cpu_atom CPUs 8-23 above cpu_core CPUs 0-7"),
        "{:?}",
        m.warnings
    );
    let s = split_of(&m);
    assert_eq!((s.mode, s.speedup), (SplitMode::TypesOnly, 2.0));
    assert_eq!(format_cpu_list(&s.big), "0-7");
    // Without the PMU lists too, the frequencies are all there is: E big.
    std::fs::remove_dir_all(d.path().join("sys/devices/cpu_core")).unwrap();
    std::fs::remove_dir_all(d.path().join("sys/devices/cpu_atom")).unwrap();
    let m = core_types(d.path()).unwrap();
    assert_eq!(types(&m), ["0-7", "8-23"]);
}

/// The trust order: a uniform source gives way to the next that tells CPUs
/// apart; nominal_perf follows highest_perf.
#[test]
fn sources_in_order_of_trust() {
    let d = copy_of("raptorlake-i7-13650hx");
    for c in 0..20 {
        let v = if c < 12 { 26 } else { 19 };
        std::fs::write(
            cpu_file(d.path(), c, "acpi_cppc/nominal_perf"),
            format!("{v}\n"),
        )
        .unwrap();
    }
    let m = core_types(d.path()).unwrap();
    assert_eq!(m.source, Some(Source::CppcNominalPerf));
    let s = split_of(&m);
    assert_eq!(s.mode, SplitMode::Hardware);
    assert!((s.speedup - 26.0 / 19.0).abs() < 0.01, "{}", s.speedup);
    // cpu_capacity, when it tells CPUs apart, comes first.
    for c in 0..20 {
        let v = if c < 12 { 1024 } else { 600 };
        std::fs::write(cpu_file(d.path(), c, "cpu_capacity"), format!("{v}\n")).unwrap();
    }
    assert_eq!(
        core_types(d.path()).unwrap().source,
        Some(Source::CpuCapacity)
    );
    // A source missing on one CPU is not used.
    std::fs::remove_file(cpu_file(d.path(), 19, "cpu_capacity")).unwrap();
    assert_eq!(
        core_types(d.path()).unwrap().source,
        Some(Source::CppcNominalPerf)
    );
}

/// Without sibling lists, threads sharing (package, cluster, core_id) are
/// one core; core_id alone repeats across arm64 clusters.
#[test]
fn core_id_fallback_keeps_clusters_apart() {
    let d = copy_of("tensor-gs101");
    for c in 0..8 {
        std::fs::remove_file(cpu_file(d.path(), c, "topology/core_cpus_list")).unwrap();
    }
    let m = core_types(d.path()).unwrap();
    assert!(m.cpus.iter().all(|c| c.siblings == vec![c.id]));
    // Two threads of one core by core_id: one core, one type.
    let d = copy_of("lunarlake-ultra7-258v");
    for c in 0..8 {
        for f in ["topology/core_cpus_list", "topology/cluster_cpus_list"] {
            std::fs::remove_file(cpu_file(d.path(), c, f)).unwrap();
        }
        std::fs::write(
            cpu_file(d.path(), c, "topology/core_id"),
            format!("{}\n", c / 2),
        )
        .unwrap();
    }
    let m = core_types(d.path()).unwrap();
    assert_eq!(smt_cores(&m), ["0-1", "2-3", "4-5", "6-7"]);
}

#[test]
fn bad_trees_give_errors_naming_the_file() {
    let err = |d: &Path| format!("{:#}", core_types(d).unwrap_err());

    let d = copy_of("lunarlake-ultra7-258v");
    let online = d.path().join("sys/devices/system/cpu/online");
    std::fs::remove_file(&online).unwrap();
    let e = err(d.path());
    assert!(
        e.contains("sys/devices/system/cpu/online") && e.contains("No such file"),
        "{e}"
    );

    for bad in [
        "",
        "0-",
        "3-1",
        "x",
        "0-99999999999999999999",
        "0-4294967295",
    ] {
        std::fs::write(&online, format!("{bad}\n")).unwrap();
        let e = err(d.path());
        assert!(e.contains("sys/devices/system/cpu/online"), "{bad:?}: {e}");
    }
    std::fs::write(&online, "0-7\n").unwrap();
    assert!(core_types(d.path()).is_ok());

    let hp = cpu_file(d.path(), 5, "acpi_cppc/highest_perf");
    std::fs::write(&hp, "fast\n").unwrap();
    let e = err(d.path());
    assert!(
        e.contains("cpu5/acpi_cppc/highest_perf") && e.contains("\"fast\""),
        "{e}"
    );
    std::fs::write(&hp, "-1\n").unwrap();
    assert!(err(d.path()).contains("is not a number"));
    std::fs::write(&hp, "37\n").unwrap();

    let sib = cpu_file(d.path(), 2, "topology/core_cpus_list");
    std::fs::write(&sib, "2-\n").unwrap();
    let e = err(d.path());
    assert!(e.contains("cpu2/topology/core_cpus_list"), "{e}");
    std::fs::write(&sib, "2\n").unwrap();

    let pmu = d.path().join("sys/devices/cpu_atom/cpus");
    std::fs::write(&pmu, "4-x\n").unwrap();
    assert!(err(d.path()).contains("sys/devices/cpu_atom/cpus"));
    // An empty PMU list (every E-core disabled in firmware) is a list.
    std::fs::write(&pmu, "\n").unwrap();
    let m = core_types(d.path()).unwrap();
    assert!(
        !m.pmu_lists && m.warnings[0].contains("CPUs 4-7"),
        "{:?}",
        m.warnings
    );
    assert_eq!(types(&m), ["4-7", "0-3"]);
}

#[test]
fn odd_trees_still_classify() {
    // Only the online list: one type, capacity 1024 each.
    let d = tempfile::tempdir().unwrap();
    let online = d.path().join("sys/devices/system/cpu/online");
    std::fs::create_dir_all(online.parent().unwrap()).unwrap();
    std::fs::write(&online, "0-3\n").unwrap();
    let m = core_types(d.path()).unwrap();
    assert_eq!((m.tiers(), m.source), (1, None));
    assert!(m
        .cpus
        .iter()
        .all(|c| c.capacity == 1024 && c.siblings == vec![c.id]));
    assert_eq!(split_of(&m).mode, SplitMode::Homogeneous);
    // A zero value makes its source unusable, not a type of its own.
    for c in 0..4 {
        let f = cpu_file(d.path(), c, "cpu_capacity");
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(&f, if c == 3 { "0\n" } else { "512\n" }).unwrap();
    }
    assert_eq!(core_types(d.path()).unwrap().source, None);
    // A CPU in two PMU lists: the lists are ignored, with a warning.
    let d = copy_of("lunarlake-ultra7-258v");
    std::fs::write(d.path().join("sys/devices/cpu_atom/cpus"), "3-7\n").unwrap();
    let m = core_types(d.path()).unwrap();
    assert!(
        !m.pmu_lists && m.warnings[0].contains("two PMU lists"),
        "{:?}",
        m.warnings
    );
    assert_eq!(types(&m), ["4-7", "0-3"]);
}
