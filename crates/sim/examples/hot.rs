//! Profiling aid: runs one workload many times (`cargo run --release -p colab-sim --example hot -- ferret colab 2B4S 2000`).
//! A fifth argument reads PMU counters: `counters` the seven events of
//! colab-tpds Fig. 5b with a small linear prediction, `count-only` the same
//! events with a model that predicts nothing (the cost of synthesis alone).
//! `colab bench --predictor model:colab-tpds-armv8` times the paper's model itself.
use colab_core::{CoreOrder, Topology};
use colab_sim::{simulate, CounterModelPredictor, CounterPredictorRef, PredictorKind, SimConfig};
use colab_workload::Library;

/// Reads Fig. 5b's seven events; predicts from them unless `count_only`.
struct PaperEvents {
    count_only: bool,
}

use colab_sim::counters::FIG5B_EVENTS as EVENTS;

impl CounterModelPredictor for PaperEvents {
    fn events(&self, _: &str) -> Vec<String> {
        EVENTS.map(String::from).to_vec()
    }
    fn predict(&self, _: &str, counts: &dyn Fn(&str) -> Option<f64>) -> Option<(f64, f64)> {
        if self.count_only {
            return None;
        }
        let cycles = counts("CPU_CYCLES")?;
        let sum: f64 = EVENTS[..6].iter().filter_map(|e| counts(e)).sum();
        Some(((3.0 - sum / cycles).max(1.0), 2.0))
    }
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let lib = Library::builtin();
    let w = lib
        .mix(&a[1])
        .or_else(|_| lib.single(&a[1], None))
        .expect("workload");
    let topo = Topology::named(&a[3], CoreOrder::BigFirst).expect("topology");
    let n: u32 = a[4].parse().expect("count");
    let predictor = match a.get(5).map(String::as_str) {
        Some("counters") => {
            PredictorKind::Counters(CounterPredictorRef::new(PaperEvents { count_only: false }))
        }
        Some("count-only") => {
            PredictorKind::Counters(CounterPredictorRef::new(PaperEvents { count_only: true }))
        }
        _ => PredictorKind::default(),
    };
    let cfg = SimConfig {
        predictor,
        ..SimConfig::default()
    };
    let t0 = std::time::Instant::now();
    let mut ev = 0;
    for _ in 0..n {
        let mut p = colab_policies::by_name(&a[2]).expect("policy");
        ev += simulate(&w, &topo, p.as_mut(), &cfg)
            .expect("sim")
            .stats
            .events;
    }
    let s = t0.elapsed().as_secs_f64();
    println!("{ev} events in {s:.3} s: {:.2} M/s", ev as f64 / s / 1e6);
}
