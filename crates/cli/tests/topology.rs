//! `colab topology` and machine files: built-in names, files (also as
//! `sim -t FILE`), core order, and the errors for impossible machines.

mod common;

use common::{fails, ok, parse_json, s, tempdir, write};
use std::path::Path;

/// A three-cluster phone: 1 prime, 3 mid, 4 little cores (file order is not core order).
const TRI_CLUSTER: &str = r#"
name = "phone"
[[core_types]]
name = "little"
compute_rate = 0.3
memory_rate = 0.8
active_power_w = 0.2
idle_power_w = 0.01
[[core_types]]
name = "prime"
compute_rate = 1.2
memory_rate = 1.1
active_power_w = 3.0
idle_power_w = 0.05
[[core_types]]
name = "mid"
compute_rate = 0.8
memory_rate = 0.95
active_power_w = 1.0
idle_power_w = 0.03
[[clusters]]
core_type = "little"
cores = 4
[[clusters]]
name = "mids"
core_type = "mid"
cores = 3
[[clusters]]
core_type = "prime"
cores = 1
"#;

/// The core type names of `colab topology` output, in core order: the
/// second column of the rows under the header row `core  type ...`.
fn core_types_listed(out: &str) -> Vec<String> {
    out.lines()
        .skip_while(|l| !l.trim_start().starts_with("core "))
        .skip(1)
        .map_while(|l| {
            let mut cells = l.split_whitespace();
            cells.next()?.parse::<usize>().ok()?;
            cells.next().map(str::to_string)
        })
        .collect()
}

#[test]
fn sim_and_topology_accept_a_tri_cluster_topology_file() {
    let dir = tempdir();
    let topo = write(dir.path(), "phone.toml", TRI_CLUSTER);
    let r = ok(&["topology", s(&topo)]);
    let types = core_types_listed(&r.stdout);
    assert_eq!(
        types,
        ["prime", "mid", "mid", "mid", "little", "little", "little", "little"],
        "big-first puts the fastest cluster first:\n{}",
        r.stdout
    );
    assert!(r.stdout.starts_with("phone: 8 cores"), "{}", r.stdout);
    let r = ok(&["topology", s(&topo), "--order", "little-first"]);
    assert_eq!(
        core_types_listed(&r.stdout),
        ["little", "little", "little", "little", "mid", "mid", "mid", "prime"],
        "{}",
        r.stdout
    );
    let r = ok(&["sim", "ferret", "-t", s(&topo), "-p", "colab"]);
    assert!(r.stdout.starts_with("ferret on phone"), "{}", r.stdout);
    assert!(r.stdout.contains("H_ANTT"), "{}", r.stdout);
    let r = ok(&["sim", "Sync-1", "-t", s(&topo), "-p", "wash", "--json"]);
    let v = parse_json(&r.stdout, "sim --json output");
    assert_eq!(v["topology"], "phone");
    assert_eq!(v["programs"].as_array().map(Vec::len), Some(2));
}

#[test]
fn shipped_topology_files_load() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../topologies");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return; // no example topologies in this checkout
    };
    for e in entries {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "toml") {
            let r = ok(&["topology", s(&p)]);
            assert!(!core_types_listed(&r.stdout).is_empty(), "{}", r.describe());
        }
    }
}

#[test]
fn topology_order_little_first_puts_little_cores_first() {
    let r = ok(&["topology", "1B3S", "--order", "little-first"]);
    assert_eq!(
        core_types_listed(&r.stdout),
        ["little", "little", "little", "big"],
        "{}",
        r.stdout
    );
    let r = ok(&["topology", "1B3S"]);
    assert_eq!(
        core_types_listed(&r.stdout),
        ["big", "little", "little", "little"],
        "{}",
        r.stdout
    );
}

#[test]
fn topology_without_cores() {
    fails(&["sim", "ferret", "-t", "0B0S"], &["0B0S", "no cores"]);
    fails(&["topology", "0B0S"], &["0B0S", "no cores"]);
    fails(&["topology", "0B"], &["0B", "no cores"]);
    let dir = tempdir();
    let t = write(
        dir.path(),
        "empty_machine.toml",
        r#"
name = "empty"
[[core_types]]
name = "big"
compute_rate = 1.0
memory_rate = 1.0
active_power_w = 1.5
idle_power_w = 0.05
[[clusters]]
core_type = "big"
cores = 0
"#,
    );
    fails(
        &["sim", "ferret", "-t", s(&t)],
        &["empty_machine.toml", "no cores"],
    );
    fails(&["topology", s(&t)], &["empty_machine.toml", "no cores"]);
    let t = write(
        dir.path(),
        "nothing.toml",
        "name = \"nothing\"\ncore_types = []\nclusters = []\n",
    );
    fails(&["topology", s(&t)], &["nothing.toml", "no cores"]);
}

#[test]
fn topology_file_with_an_unknown_core_type() {
    let dir = tempdir();
    let t = write(
        dir.path(),
        "typo_machine.toml",
        &TRI_CLUSTER.replace("core_type = \"mid\"", "core_type = \"medium\""),
    );
    let expect = [
        "typo_machine.toml",
        "cluster 'mids'",
        "'medium'",
        "not defined",
    ];
    fails(&["sim", "ferret", "-t", s(&t)], &expect);
    fails(&["topology", s(&t)], &expect);
}

#[test]
fn unknown_topology_name() {
    fails(
        &["sim", "ferret", "-t", "2X2S"],
        &["unknown topology name '2X2S'"],
    );
    fails(
        &["topology", "big.LITTLE"],
        &["unknown topology name 'big.LITTLE'"],
    );
}
