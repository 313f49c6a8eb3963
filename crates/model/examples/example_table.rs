//! Prints the synthetic training table shipped as `training/example-table.csv`:
//! `cargo run -p colab-model --example example_table > training/example-table.csv`.
//!
//! Not measurements. Each program gets latent traits (memory intensity,
//! write share, TLB pressure, branchiness); its counts on a big (2 GHz) and
//! a little (1.2 GHz) core and its speedup and energy ratio are made-up
//! functions of them with a few percent of noise. It exists to show the
//! training pipeline end to end; train on real counts (`--perf`) for a real
//! model.

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

const EVENTS: [&str; 10] = [
    "CPU_CYCLES",
    "INST_RETIRED",
    "L1D_CACHE_REFILL",
    "L1D_TLB_REFILL",
    "L1D_CACHE_WB",
    "L2D_CACHE",
    "L2D_CACHE_WB",
    "BUS_ACCESS",
    "BR_IMMED_RETIRED",
    "SW_INCR",
];

/// Little-core count / big-core count per event (after INST_RETIRED):
/// a smaller L2 and weaker prefetching miss more.
const LITTLE_FACTOR: [f64; 8] = [1.0, 1.1, 1.2, 1.05, 1.1, 1.3, 1.4, 1.0];

fn main() {
    let mut rng = Pcg64::seed_from_u64(2021);
    let mut noise = |pct: f64| 1.0 + rng.gen_range(-pct..=pct);
    println!("# Synthetic training table (NOT measurements): made by");
    println!("# crates/model/examples/example_table.rs from latent program traits.");
    println!(
        "program,core_type,{},speedup,energy_ratio",
        EVENTS.join(",")
    );
    let mut rng2 = Pcg64::seed_from_u64(7);
    for p in 1..=16 {
        let mem: f64 = rng2.gen_range(0.0..1.0);
        let wb: f64 = rng2.gen_range(0.0..1.0);
        let tlb: f64 = rng2.gen_range(0.0..1.0);
        let br: f64 = rng2.gen_range(0.0..1.0);
        let insts = rng2.gen_range(2e9..8e9_f64).round();
        // Per instruction on the big core.
        let l1 = (0.004 + 0.03 * mem) * noise(0.05);
        let dtlb = (0.0002 + 0.002 * tlb * mem) * noise(0.05);
        let l1wb = l1 * (0.2 + 0.5 * wb) * noise(0.05);
        let l2 = (1.3 * l1 + l1wb) * noise(0.03);
        let l2wb = 0.3 * l1wb * (0.3 + mem) * noise(0.05);
        let bus = l2 * (0.2 + 0.6 * mem) * noise(0.05);
        let branches = (0.05 + 0.15 * br) * noise(0.05);
        let ipc_big = (1.7 - 1.1 * mem - 0.2 * tlb) * noise(0.03);
        let speedup = ((2.9 - 1.4 * mem - 0.4 * tlb * mem + 0.1 * br) * noise(0.02)).max(1.05);
        // Big cores draw about 4.5x the little's power on core-bound work and
        // less when stalled; energy ratio = power ratio / speedup.
        let energy_ratio = (4.5 - 1.8 * mem + 0.3 * wb) / speedup * noise(0.02);
        let big_cycles = (insts / ipc_big).round();
        let little_cycles = (big_cycles * speedup * 1.2 / 2.0).round();
        let per_inst = [1.0, l1, dtlb, l1wb, l2, l2wb, bus, branches];
        for (core, cycles, factor) in [
            ("big", big_cycles, [1.0; 8]),
            ("little", little_cycles, LITTLE_FACTOR),
        ] {
            let mut cells = vec![
                format!("synthetic-{p:02}"),
                core.into(),
                format!("{cycles}"),
            ];
            for (r, f) in per_inst.iter().zip(factor) {
                let n = if f == 1.0 { 1.0 } else { noise(0.03) };
                cells.push(format!("{}", (insts * r * f * n).round()));
            }
            cells.push("0".into()); // SW_INCR: never incremented
            cells.push(format!("{speedup:.4}"));
            cells.push(format!("{energy_ratio:.4}"));
            println!("{}", cells.join(","));
        }
    }
}
