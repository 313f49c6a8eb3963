//! Renders a report from SYNTHETIC records (made-up numbers, not simulation
//! results) to eyeball the tables and charts at full campaign size:
//!
//!     cargo run -p colab-report --example synthetic_report -- /tmp/colab-synthetic-report

use colab_report::{write_report, ProgramRecord, ReportOptions, RunRecord};

/// Small deterministic generator so the example needs no extra crates.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "/tmp/colab-synthetic-report".into());
    let mut workloads: Vec<(String, Vec<String>, u32, usize)> = Vec::new();
    for (class, threads) in [
        ("Sync", [4, 18, 9, 20]),
        ("NSync", [4, 16, 8, 20]),
        ("Comm", [4, 16, 9, 20]),
        ("Comp", [4, 17, 8, 20]),
        ("Large", [5, 24, 15, 29]),
    ] {
        for (i, t) in threads.iter().enumerate() {
            workloads.push((
                format!("{class}-{}", i + 1),
                vec![class.into()],
                *t,
                2 + i % 3,
            ));
        }
    }
    for i in 1..=10 {
        workloads.push((format!("2B-{i}"), vec!["2B".into()], 2 + i, 2));
    }
    for name in [
        "blackscholes",
        "bodytrack",
        "dedup",
        "ferret",
        "fluidanimate",
        "water_nsquared",
    ] {
        workloads.push((name.into(), vec!["single".into()], 4, 1));
    }
    let mut rng = Lcg(42);
    let mut records = Vec::new();
    for config in ["2B2S", "2B4S", "4B2S", "4B4S"] {
        let cores = config[..1].parse::<u32>()? + config[2..3].parse::<u32>()?;
        for (w, classes, threads, n) in &workloads {
            for (p, bias) in [("cfs", 1.0), ("wash", 0.93), ("colab", 0.88)] {
                for order in ["big-first", "little-first"] {
                    for seed in 1..=2 {
                        let programs = (0..*n)
                            .map(|k| {
                                let sb = 1_000_000_000 + (k as u64) * 300_000_000;
                                let slow = (1.2 + rng.next() * 1.5) * bias;
                                ProgramRecord {
                                    name: format!("prog{k}"),
                                    turnaround_ns: (sb as f64 * slow) as u64,
                                    t_sb_ns: sb,
                                    t_alone_ns: (sb as f64 * (1.1 + rng.next() * 0.3)) as u64,
                                    t_slow_ns: sb * 3,
                                    cpu_ns: 0,
                                    fast_cpu_ns: 0,
                                    bound_end_ns: None,
                                }
                            })
                            .collect();
                        records.push(RunRecord {
                            workload: w.clone(),
                            classes: classes.clone(),
                            config: config.into(),
                            order: order.into(),
                            seed,
                            policy: p.into(),
                            cores,
                            threads: *threads,
                            programs,
                            energy_j: 5.0 + rng.next() * 2.0 * bias,
                            makespan_ns: 3_000_000_000,
                            events: 10_000,
                            migrations: 100,
                            context_switches: 1000,
                            fast_idle_share: None,
                            h_antt_bound: None,
                        });
                    }
                }
            }
        }
    }
    let opts = ReportOptions {
        title: "SYNTHETIC DATA - layout check only".into(),
        ..Default::default()
    };
    let files = write_report(std::path::Path::new(&out), &records, &opts)?;
    println!("{}", files.dir.display());
    for c in &files.charts {
        println!("{}", c.display());
    }
    Ok(())
}
