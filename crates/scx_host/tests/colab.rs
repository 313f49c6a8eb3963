//! scx_colab's own BPF in the simulator, end to end.

use colab_core::{CoreOrder, Topology};
use colab_sim::{simulate, SimConfig};
use colab_workload::Library;

fn run(mix: &str, topo: &str, policy: &str, seed: u64) -> colab_sim::SimResult {
    let lib = Library::builtin();
    let w = lib.mix(mix).or_else(|_| lib.single(mix, None)).unwrap();
    let t = Topology::named(topo, CoreOrder::BigFirst).unwrap();
    let mut p = colab_scx_host::by_name(policy).unwrap();
    let cfg = SimConfig {
        seed,
        ..SimConfig::default()
    };
    simulate(&w, &t, p.as_mut(), &cfg).unwrap_or_else(|e| panic!("{policy} on {mix}: {e}"))
}

#[test]
fn scx_colab_runs_a_mix_to_the_end() {
    let r = run("Sync-2", "2B2S", "scx:colab", 1);
    assert!(r.programs.iter().all(|p| p.turnaround_ns > 0));
    let again = run("Sync-2", "2B2S", "scx:colab", 1);
    assert_eq!(
        serde_json::to_string(&r).unwrap(),
        serde_json::to_string(&again).unwrap(),
        "a hosted run is deterministic"
    );
}
