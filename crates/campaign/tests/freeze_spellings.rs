//! The ROTA that scx_colab implements is named by a spelling of switches in
//! several places outside the Rust code (the VM comparison script, the
//! scx_colab docs). A change of a default (the eighteenth freeze changed
//! `pull-min`) silently changes what an old spelling means, so every such
//! place must use the one spelling the ablation runs.

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

/// Every `rota:order=capped...` spelling in `text`: from `rota:` up to the
/// first character that cannot be part of a policy spelling.
fn capped_spellings(text: &str) -> Vec<&str> {
    text.match_indices("rota:order=capped:")
        .map(|(i, _)| {
            let rest = &text[i..];
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || "=:-.".contains(c)))
                .unwrap_or(rest.len());
            &rest[..end]
        })
        .collect()
}

#[test]
fn the_third_freeze_is_one_spelling_everywhere() {
    assert!(ROTA_MECHANISM_VARIANTS.contains(&ROTA_THIRD_FREEZE));
    assert!(colab_policies::by_name(ROTA_THIRD_FREEZE).is_ok());
    for f in NAMING_FILES {
        let text =
            std::fs::read_to_string(Path::new(ROOT).join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
        let found = capped_spellings(&text);
        assert!(!found.is_empty(), "{f} names no third-freeze spelling");
        for s in found {
            // The VM comparison appends the boots' migration cost.
            let s = s.split(":migration-us=").next().unwrap();
            assert_eq!(
                s, ROTA_THIRD_FREEZE,
                "{f} spells ROTA's third freeze differently"
            );
        }
    }
}

#[test]
fn the_spelling_scan_stops_at_the_spelling() {
    let text = "as `rota:order=capped:hold=off:pull-min=on`, and rota:order=capped:x=1) end";
    assert_eq!(
        capped_spellings(text),
        [
            "rota:order=capped:hold=off:pull-min=on",
            "rota:order=capped:x=1"
        ]
    );
}
