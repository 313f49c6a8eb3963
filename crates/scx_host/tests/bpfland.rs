//! scx_bpfland 1.1.4's own BPF in the simulator (`scx:bpfland`), end to
//! end. Its plug-in is built apart (`bash scripts/build-scx-plugins.sh`,
//! which scripts/test.sh runs before these tests a second time): without it
//! (or with one built against an older shim) the tests that need it say so
//! and pass, and the one that checks the error runs instead.

use std::io::Write;

use colab_core::{CoreOrder, Topology};
use colab_sim::{simulate, SimConfig, SimResult};
use colab_workload::{random, Library, Workload};

/// Whether the plug-in is there; if not, says why the caller skips.
fn plugin_or_skip(test: &str) -> bool {
    match colab_scx_host::by_name("scx:bpfland") {
        Ok(_) => true,
        Err(e) => {
            let e = e.to_string();
            // A plug-in missing, or built against an older shim (a cached
            // target/ after the shim changed): scripts/test.sh rebuilds it
            // and runs these again.
            let why = if e.contains("is not built") {
                "is not built"
            } else if e.contains("another version of the host's shim") {
                "was built against another version of the shim"
            } else {
                panic!("scx:bpfland failed for another reason than its plug-in: {e}")
            };
            // Past the test harness's capture: a skip is seen.
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED {test}: scx:bpfland's plug-in {why} \
                 (bash scripts/build-scx-plugins.sh builds it)"
            );
            false
        }
    }
}

fn run(w: &Workload, topo: &str, policy: &str, seed: u64) -> SimResult {
    let t = Topology::named(topo, CoreOrder::BigFirst).unwrap();
    let mut p = colab_scx_host::by_name(policy).unwrap();
    let cfg = SimConfig {
        seed,
        ..SimConfig::default()
    };
    simulate(w, &t, p.as_mut(), &cfg).unwrap_or_else(|e| panic!("{policy} on {topo}: {e}"))
}

fn mix(name: &str) -> Workload {
    Library::builtin().mix(name).unwrap()
}

fn random_mix(seed: u64, index: u32) -> Workload {
    let lib = Library::builtin();
    let spec = random::random_mix(&lib, &colab_workload::COLAB_BENCHMARKS, seed, index).unwrap();
    lib.mix_workload("random", &spec).unwrap()
}

fn same(a: &SimResult, b: &SimResult) -> bool {
    serde_json::to_string(a).unwrap() == serde_json::to_string(b).unwrap()
}

#[test]
fn scx_bpfland_runs_sync2_to_the_end_deterministically() {
    if !plugin_or_skip("scx_bpfland_runs_sync2_to_the_end_deterministically") {
        return;
    }
    let w = mix("Sync-2");
    let r = run(&w, "2B2S", "scx:bpfland", 1);
    assert!(r.programs.iter().all(|p| p.turnaround_ns > 0));
    assert!(
        same(&r, &run(&w, "2B2S", "scx:bpfland", 1)),
        "a hosted run is deterministic"
    );
}

#[test]
fn scx_bpfland_runs_a_random_mix_to_the_end_deterministically() {
    if !plugin_or_skip("scx_bpfland_runs_a_random_mix_to_the_end_deterministically") {
        return;
    }
    let w = random_mix(24601, 3);
    for topo in ["2B4S", "4B4S"] {
        let r = run(&w, topo, "scx:bpfland", 2);
        assert!(r.programs.iter().all(|p| p.turnaround_ns > 0));
        assert!(same(&r, &run(&w, topo, "scx:bpfland", 2)), "{topo}");
    }
}

#[test]
fn scx_bpfland_options_act() {
    if !plugin_or_skip("scx_bpfland_options_act") {
        return;
    }
    let w = mix("Sync-2");
    let base = run(&w, "2B2S", "scx:bpfland", 1);
    let longer = run(&w, "2B2S", "scx:bpfland:--slice-us=20000", 1);
    assert!(!same(&base, &longer), "--slice-us changed nothing");
    // The primary domain through enable_primary_cpu: the big CPUs first.
    let big = run(&w, "2B2S", "scx:bpfland:-m:performance", 1);
    assert!(
        !same(&base, &big),
        "--primary-domain performance changed nothing"
    );
    // The capacity-ranked idle scan runs to the end too.
    let scan = run(&w, "2B2S", "scx:bpfland:-P", 1);
    assert!(scan.programs.iter().all(|p| p.turnaround_ns > 0));
    // Its throttling needs a BPF timer, which the simulator does not have.
    let t = Topology::named("2B2S", CoreOrder::BigFirst).unwrap();
    let mut p = colab_scx_host::by_name("scx:bpfland:--throttle-us=500").unwrap();
    let e = simulate(&w, &t, p.as_mut(), &SimConfig::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("bpf_timer is not simulated"), "{e}");
}

#[test]
fn without_its_plugin_scx_bpfland_names_the_command_that_builds_it() {
    match colab_scx_host::by_name("scx:bpfland") {
        Ok(_) => {
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED without_its_plugin_scx_bpfland_names_the_command_that_builds_it: \
                 the plug-in is built (src/plugin.rs's tests check the message)"
            );
        }
        Err(e) => {
            let e = e.to_string();
            assert!(e.contains("bash scripts/build-scx-plugins.sh"), "{e}");
            assert!(e.contains("scx_bpfland.so"), "{e}");
        }
    }
}
