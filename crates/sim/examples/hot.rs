//! Profiling aid: runs one workload many times (`cargo run --release -p colab-sim --example hot -- ferret colab 2B4S 2000`).
use colab_core::{CoreOrder, Topology};
use colab_sim::{simulate, SimConfig};
use colab_workload::Library;

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let lib = Library::builtin();
    let w = lib
        .mix(&a[1])
        .or_else(|_| lib.single(&a[1], None))
        .expect("workload");
    let topo = Topology::named(&a[3], CoreOrder::BigFirst).expect("topology");
    let n: u32 = a[4].parse().expect("count");
    let t0 = std::time::Instant::now();
    let mut ev = 0;
    for _ in 0..n {
        let mut p = colab_policies::by_name(&a[2]).expect("policy");
        ev += simulate(&w, &topo, p.as_mut(), &SimConfig::default())
            .expect("sim")
            .stats
            .events;
    }
    let s = t0.elapsed().as_secs_f64();
    println!("{ev} events in {s:.3} s: {:.2} M/s", ev as f64 / s / 1e6);
}
