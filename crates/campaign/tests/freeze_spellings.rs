//! The ROTA that scx_colab implements is named outside the Rust code (the VM
//! comparison script and its test): each must name it as
//! `ROTA_SCX_COLAB`, and no file that names it may keep a spelling of
//! switches that left the code.

use colab_campaign::{ROTA_MECHANISM_VARIANTS, ROTA_SCX_COLAB, ROTA_THIRD_FREEZE};
use std::path::Path;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

fn read(f: &str) -> String {
    std::fs::read_to_string(Path::new(ROOT).join(f)).unwrap_or_else(|e| panic!("{f}: {e}"))
}

#[test]
fn the_vm_comparison_names_the_rota_scx_colab_implements() {
    assert!(colab_policies::by_name(ROTA_SCX_COLAB).is_ok());
    let script = read("scripts/vm/sim-vs-vm.sh");
    assert!(
        script.contains(&format!("rota=\"{ROTA_SCX_COLAB}\" mig=\"\"")),
        "sim-vs-vm.sh does not compare scx_colab with {ROTA_SCX_COLAB}"
    );
    let test = read("scripts/vm/test-sim-vs-vm.sh");
    assert!(
        test.contains(&format!("scx_colab ({ROTA_SCX_COLAB}:migration-us=100)")),
        "test-sim-vs-vm.sh does not expect {ROTA_SCX_COLAB}"
    );
    for f in [
        "scripts/vm/sim-vs-vm.sh",
        "scripts/vm/test-sim-vs-vm.sh",
        "scripts/vm/README.md",
        "crates/scx_colab/README.md",
        "book/src/scx/running.md",
    ] {
        // The third freeze as switches over the default (its old spelling).
        assert!(
            !read(f).contains("rota:order=capped"),
            "{f} spells the third freeze as switches; name it {ROTA_THIRD_FREEZE}"
        );
    }
    assert!(ROTA_MECHANISM_VARIANTS.contains(&ROTA_THIRD_FREEZE));
}

/// Every variant of the ablation is a valid policy, and no two run the
/// same parameters.
#[test]
fn the_ablation_variants_parse_and_differ() {
    let mut seen: Vec<(&str, colab_policies::RotaParams)> = Vec::new();
    for v in ROTA_MECHANISM_VARIANTS {
        assert!(colab_policies::by_name(v).is_ok(), "{v}");
        let p = colab_policies::RotaParams::by_name(v).unwrap();
        if let Some((w, _)) = seen.iter().find(|(_, q)| *q == p) {
            panic!("{v} runs the same parameters as {w}");
        }
        seen.push((v, p));
    }
}
