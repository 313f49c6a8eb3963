//! scx_colab's own BPF in the simulator, end to end.

mod common;

use colab_core::{CoreOrder, Topology};
use colab_sim::{simulate, SimConfig};
use colab_workload::Library;
use common::run_builtin as run;

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

/// The hosted scx:colab and the scheduler the kernel loads are built from
/// one entry file: scx_colab's build.rs hands it to scx_cargo, and the
/// host's build.rs compiles the same path.
#[test]
fn the_hosted_build_and_the_kernel_build_read_the_same_bpf_source() {
    let here = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let kernel_build = std::fs::read_to_string(here.join("../scx_colab/build.rs")).unwrap();
    let host_build = std::fs::read_to_string(here.join("build.rs")).unwrap();
    let quoted = |text: &str, after: &str| -> String {
        let at = text.find(after).unwrap_or_else(|| panic!("no {after}")) + after.len();
        let rest = &text[at..];
        let open = rest.find('"').unwrap() + 1;
        let close = open + rest[open..].find('"').unwrap();
        rest[open..close].to_string()
    };
    let kernel = here
        .join("../scx_colab")
        .join(quoted(&kernel_build, ".enable_skel("));
    let hosted = here.join(quoted(&host_build, "(\"colab\","));
    assert_eq!(
        kernel.canonicalize().unwrap(),
        hosted.canonicalize().unwrap(),
        "scx:colab must compile the file the kernel loads"
    );
}

/// A study's runs of scx:colab are the same whatever the thread count:
/// each simulation has its own copy of the BPF object's globals and maps.
#[test]
fn hosted_runs_are_the_same_on_one_thread_and_on_many() {
    let runs = |threads: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| {
                use rayon::prelude::*;
                [("Sync-2", 1), ("Comm-4", 2), ("Sync-2", 3), ("4B-6", 1)]
                    .par_iter()
                    .map(|&(m, seed)| {
                        serde_json::to_string(&run(m, "2B2S", "scx:colab", seed)).unwrap()
                    })
                    .collect::<Vec<_>>()
            })
    };
    assert_eq!(runs(1), runs(4));
}

#[test]
fn bad_options_are_refused_with_scx_colabs_own_message() {
    let e = colab_scx_host::by_name("scx:colab:--policy=fifo")
        .err()
        .unwrap()
        .to_string();
    // clap's own words, not only the options echoed back.
    assert!(e.contains("invalid value 'fifo' for '--policy"), "{e}");
    let e = colab_scx_host::by_name("scx:nope")
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("scx:colab"), "{e}");
}

/// A program started on an idle machine finds scx_colab's fast CPUs idle
/// as they would be on a running system: a lone single-threaded program
/// runs on a fast CPU from its start whichever cluster has the low CPU
/// numbers (before each CPU went idle through the scheduler at load, the
/// BPF side had never seen its fast CPUs idle and left it on a slow one).
#[test]
fn a_lone_thread_runs_on_a_fast_cpu_in_either_core_order() {
    for order in [CoreOrder::BigFirst, CoreOrder::LittleFirst] {
        let lib = Library::builtin();
        let w = lib.single("bzip2", None).unwrap();
        let t = Topology::named("2B2S", order).unwrap();
        let mut p = colab_scx_host::by_name("scx:colab").unwrap();
        let r = simulate(&w, &t, p.as_mut(), &SimConfig::default()).unwrap();
        assert_eq!(r.programs[0].fast_cpu_ns, r.programs[0].cpu_ns, "{order:?}");
    }
}
