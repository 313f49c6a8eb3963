//! Training tables from the simulator.

use colab_campaign::training::{table_from_sim, training_programs};
use colab_campaign::COLAB_BENCHMARKS;
use colab_core::{CoreOrder, Topology};
use colab_sim::{simulate, PredictorKind, SimConfig};
use colab_workload::{Library, Workload};

#[test]
fn one_row_per_program_and_core_type_with_the_runs_ratios() {
    let lib = Library::builtin();
    let progs = training_programs(&lib, &COLAB_BENCHMARKS).unwrap();
    let topo = Topology::named("2B2S", CoreOrder::BigFirst).unwrap();
    let table = table_from_sim(&progs, &topo, 1).unwrap();
    assert_eq!(table.rows.len(), 17 * 2);
    assert_eq!(table.events.len(), 14);
    for (i, p) in progs.iter().enumerate() {
        let (big, little) = (&table.rows[2 * i], &table.rows[2 * i + 1]);
        assert_eq!(
            (big.program.as_str(), big.core_type.as_str()),
            (p.name.as_str(), "big")
        );
        assert_eq!(little.core_type, "little");
        // Every event was read, cycles as a PMU would count them.
        assert!(big.counts.iter().all(|c| c.is_finite()), "{:?}", big.counts);
        assert_eq!(table.count(big, "SW_INCR"), Some(0.0));
        let cyc = table.count(big, "CPU_CYCLES").unwrap();
        assert!((cyc / big.time_ns as f64 - 2.0).abs() < 0.05, "{cyc}");
        // Speedup is the ratio of the program's times alone on one core of each type.
        let alone = |ty: usize| {
            let ct = topo.core_types[ty].clone();
            let one = Topology::build(
                "one",
                vec![ct.clone()],
                &[(ct.name, 0, 1)],
                topo.costs.clone(),
            )
            .unwrap();
            let w = Workload {
                name: p.name.clone(),
                classes: vec![],
                source: String::new(),
                programs: vec![p.clone()],
            };
            let mut cfs = colab_policies::by_name("cfs").unwrap();
            let cfg = SimConfig {
                seed: 1,
                predictor: PredictorKind::Oracle,
                ..SimConfig::default()
            };
            simulate(&w, &one, cfs.as_mut(), &cfg).unwrap()
        };
        let (b, l) = (alone(topo.fastest_type), alone(topo.slowest_type));
        assert_eq!(big.time_ns, b.makespan_ns);
        assert_eq!(little.time_ns, l.makespan_ns);
        let want = l.makespan_ns as f64 / b.makespan_ns as f64;
        assert_eq!(big.speedup, want);
        assert_eq!(little.speedup, want);
        assert_eq!(big.energy_ratio, b.energy_j / l.energy_j);
        assert!(want > 1.15 && want < 3.2, "{}: {want}", p.name);
    }
    // The counters carry the information: bus accesses per cycle on the big
    // core fall as speedup rises (rank correlation over the 17 programs).
    let big_rows: Vec<_> = table.rows.iter().filter(|r| r.core_type == "big").collect();
    let x: Vec<f64> = big_rows
        .iter()
        .map(|r| table.count(r, "BUS_ACCESS").unwrap() / table.count(r, "CPU_CYCLES").unwrap())
        .collect();
    let y: Vec<f64> = big_rows.iter().map(|r| r.speedup).collect();
    let rank = |v: &[f64]| -> Vec<f64> {
        v.iter()
            .map(|a| v.iter().filter(|b| *b < a).count() as f64)
            .collect()
    };
    let (rx, ry) = (rank(&x), rank(&y));
    let n = rx.len() as f64;
    let d2: f64 = rx.iter().zip(&ry).map(|(a, b)| (a - b).powi(2)).sum();
    let rho = 1.0 - 6.0 * d2 / (n * (n * n - 1.0));
    assert!(rho < -0.8, "spearman {rho}: {x:?} {y:?}");
}

#[test]
fn the_csv_has_the_agreed_header_and_a_line_per_row() {
    let lib = Library::builtin();
    let progs = training_programs(&lib, &["radix", "swaptions"]).unwrap();
    let topo = Topology::named("1B1S", CoreOrder::BigFirst).unwrap();
    let table = table_from_sim(&progs, &topo, 2).unwrap();
    let mut buf = Vec::new();
    table.write_csv(&mut buf).unwrap();
    let text = String::from_utf8(buf).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1 + 4);
    let header: Vec<&str> = lines[0].split(',').collect();
    assert_eq!(header[..2], ["program", "core_type"]);
    assert_eq!(header[header.len() - 2..], ["speedup", "energy_ratio"]);
    for ev in [
        "L1D_CACHE_REFILL",
        "L1D_TLB_REFILL",
        "L1D_CACHE_WB",
        "L2D_CACHE",
        "L2D_CACHE_WB",
        "BUS_ACCESS",
        "CPU_CYCLES",
        "INST_RETIRED",
        "BR_IMMED_RETIRED",
        "SW_INCR",
    ] {
        assert!(header.contains(&ev), "{ev}");
    }
    let f: Vec<&str> = lines[1].split(',').collect();
    assert_eq!(f.len(), header.len());
    assert_eq!(f[..2], ["radix", "big"]);
    let speedup: f64 = f[f.len() - 2].parse().unwrap();
    assert_eq!(speedup, table.rows[0].speedup);
    // Same seed, same table.
    assert_eq!(table, table_from_sim(&progs, &topo, 2).unwrap());
}
