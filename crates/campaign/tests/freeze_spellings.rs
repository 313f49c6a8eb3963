//! The ROTA that scx_colab implements is named outside the Rust code (the VM
//! comparison script, the scx_colab docs); each must name it by its preset,
//! `rota@3`, and no file may keep a spelling of switches that left the code.

use colab_campaign::{ROTA_MECHANISM_VARIANTS, ROTA_THIRD_FREEZE};
use std::path::Path;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

/// Files that name the ROTA scx_colab implements.
const NAMING_FILES: [&str; 5] = [
    "scripts/vm/sim-vs-vm.sh",
    "scripts/vm/test-sim-vs-vm.sh",
    "scripts/vm/README.md",
    "crates/scx_colab/README.md",
    "book/src/scx/running.md",
];

#[test]
fn the_third_freeze_is_its_preset_everywhere() {
    assert_eq!(ROTA_THIRD_FREEZE, "rota@3");
    assert!(ROTA_MECHANISM_VARIANTS.contains(&ROTA_THIRD_FREEZE));
    assert!(colab_policies::by_name(ROTA_THIRD_FREEZE).is_ok());
    for f in NAMING_FILES {
        let text =
            std::fs::read_to_string(Path::new(ROOT).join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
        assert!(text.contains(ROTA_THIRD_FREEZE), "{f} does not name rota@3");
        // The third freeze as switches over the default (its old spelling).
        assert!(
            !text.contains("rota:order=capped"),
            "{f} spells the third freeze as switches; name it rota@3"
        );
    }
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
