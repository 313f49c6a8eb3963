//! Every policy's behaviour fingerprint (`colab_campaign::fingerprint`)
//! against the checked-in file: a change to any policy's results fails
//! here, naming the policy and by how much it moved, until it is blessed.

use colab_campaign::fingerprint::{self, BLESS_COMMAND, DEFAULT_FILE};
use std::path::Path;
use std::time::Instant;

#[test]
fn every_policy_gives_the_results_its_fingerprint_says() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(DEFAULT_FILE);
    let file = fingerprint::read(&path).unwrap();
    let t0 = Instant::now();
    let computed = fingerprint::compute(&fingerprint::all_policies().unwrap()).unwrap();
    eprintln!(
        "{} fingerprints in {:.1} s",
        computed.len(),
        t0.elapsed().as_secs_f64()
    );
    let c = fingerprint::compare(&file, &computed);
    assert!(
        c.is_clean(),
        "the results differ from {DEFAULT_FILE}:\n{}\nIf every change above is intended, \
         bless them (from the repository root) with\n    {BLESS_COMMAND}\nand commit the file.",
        c.describe()
    );
}
