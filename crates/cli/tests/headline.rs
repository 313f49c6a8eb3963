//! The README's and the results overview's headline tables are what
//! book/src/results/headline.tsv gives: `colab headline` writes them from it,
//! and `bash scripts/headline.sh` writes it from one full `colab reproduce`
//! run, so the two pages cannot disagree with each other or with that run.

use std::path::Path;

#[test]
fn the_committed_headline_tables_match_their_data_file() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    if let Err(e) = colab_cli::commands::headline::check(&root) {
        panic!(
            "{e:#}\n(`cargo run --release -p colab-cli -- headline` rewrites the tables from the \
             data file; `bash scripts/headline.sh` reruns the study and writes both)"
        );
    }
}
