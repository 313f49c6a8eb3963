//! What the host's tests share: hand-built workloads and cost-free machines,
//! and runs of built-in workloads.
// Each test file uses part of it.
#![allow(dead_code)]

use colab_core::{CoreOrder, Costs, Topology};
use colab_sim::{simulate, SimConfig, SimResult};
use colab_workload::{Library, Workload};

pub const MS: u64 = 1_000_000;

/// A workload of one program, from its TOML text.
pub fn workload(text: &str) -> Workload {
    let mut lib = Library::default();
    let name = lib.add_program_text("test.toml", text).unwrap();
    lib.single(&name, None).unwrap()
}

/// Machine `name` with no switch or migration cost and its 4 ms tick.
pub fn machine(name: &str) -> Topology {
    let mut t = Topology::named(name, CoreOrder::BigFirst).unwrap();
    t.costs = Costs {
        context_switch_ns: 0,
        migration_local_ns: 0,
        migration_cross_ns: 0,
        ..Costs::default()
    };
    assert_eq!(t.costs.tick_ns, 4 * MS);
    t
}

/// A built-in mix or program on machine `topo` (big cores first) under
/// `policy`: a hosted scheduler (`scx:NAME`) or a simulator policy.
pub fn run_builtin(workload: &str, topo: &str, policy: &str, seed: u64) -> SimResult {
    let lib = Library::builtin();
    let w = lib
        .mix(workload)
        .or_else(|_| lib.single(workload, None))
        .unwrap();
    let t = Topology::named(topo, CoreOrder::BigFirst).unwrap();
    let mut p = match policy.strip_prefix("scx:") {
        Some(_) => colab_scx_host::by_name(policy).unwrap(),
        None => colab_policies::by_name(policy).unwrap(),
    };
    let cfg = SimConfig {
        seed,
        ..SimConfig::default()
    };
    simulate(&w, &t, p.as_mut(), &cfg).unwrap_or_else(|e| panic!("{policy} on {workload}: {e}"))
}
