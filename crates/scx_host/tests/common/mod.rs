//! What the host's tests share: hand-built workloads and cost-free machines.

use colab_core::{CoreOrder, Costs, Topology};
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
