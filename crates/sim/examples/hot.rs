//! Profiling aid: runs one workload many times (`cargo run --release -p colab-sim --example hot -- ferret colab 2B4S 2000`).
//! A fifth argument reads PMU counters: `counters` through Fig. 5b's linear
//! model, `count-only` the same seven events with a model that predicts
//! nothing (the cost of synthesis alone).
use colab_core::{CoreOrder, Topology};
use colab_sim::{
    simulate, CounterModelPredictor, CounterPredictorRef, LinearCounterModel, PredictorKind,
    SimConfig,
};
use colab_workload::Library;

/// Reads the events of another model and predicts nothing.
struct CountOnly(LinearCounterModel);

impl CounterModelPredictor for CountOnly {
    fn events(&self, core_type: &str) -> Vec<String> {
        self.0.events(core_type)
    }
    fn predict(&self, _: &str, _: &dyn Fn(&str) -> Option<f64>) -> Option<(f64, f64)> {
        None
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
    let paper = LinearCounterModel::paper_fig5b();
    let predictor = match a.get(5).map(String::as_str) {
        Some("counters") => PredictorKind::Counters(CounterPredictorRef::new(paper)),
        Some("count-only") => PredictorKind::Counters(CounterPredictorRef::new(CountOnly(paper))),
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
