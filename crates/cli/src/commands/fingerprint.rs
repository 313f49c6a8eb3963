//! `colab fingerprint`: every policy's behaviour fingerprint against the
//! checked-in file, and `--bless` to rewrite it (the logic lives in
//! `colab_campaign::fingerprint`).

use anyhow::{bail, Result};
use colab_campaign::fingerprint::{self, DEFAULT_FILE};
use std::path::PathBuf;

pub const ABOUT: &str =
    "Fingerprint every policy's results on a small fixed grid and compare with the checked-in file.";

pub const LONG_ABOUT: &str = "\
Fingerprint every policy's results on a small fixed grid and compare with the checked-in file.

Each policy (every built-in one, ROTA's third freeze as rota-third-freeze, and COLAB on the
oracle and noisy predictors) runs a small fixed grid: a few built-in workloads on 2B2S, 2B4S
and 4B4S, both core orders, one seed (the grid is printed as it starts; it is defined in
crates/campaign/src/fingerprint.rs). Its fingerprint is the FNV-1a hash of every result's
JSON, with the geomeans of H_ANTT, makespan and energy and the total events, so that a change
says by how much a policy moved.

Prints the table and every policy whose hash differs from the file's; exits with status 1
when any moved (or a policy has no entry, or an entry no policy). `--bless` rewrites the
file instead and says what moved. The test crates/campaign/tests/fingerprints.rs makes the
same comparison.";

pub const EXAMPLES: &str = "\
Examples:
  colab fingerprint                      # from the repository root: what moved?
  colab fingerprint --bless              # accept the changes: rewrite the file, then commit it
  colab fingerprint --file /tmp/fp.tsv --bless   # write the fingerprints elsewhere";

#[derive(clap::Args)]
pub struct FingerprintArgs {
    /// The fingerprint file (default: crates/campaign/tests/fingerprints.tsv under the
    /// current directory, which must be the repository root).
    #[arg(long, value_name = "PATH")]
    file: Option<PathBuf>,
    /// Rewrite the file with today's fingerprints, printing which moved and by how much.
    #[arg(long)]
    bless: bool,
}

pub fn run(a: FingerprintArgs) -> Result<()> {
    let path = match &a.file {
        Some(p) => p.clone(),
        None => match fingerprint::find_default(std::path::Path::new("")) {
            Some(p) => p,
            None => bail!(
                "{DEFAULT_FILE} not found under the current directory: run from the repository \
                 root, or name the file with --file PATH"
            ),
        },
    };
    // With --bless a file named by --file may be new; otherwise it must be there.
    let old = if a.bless && !path.exists() {
        Vec::new()
    } else {
        fingerprint::read(&path)?
    };
    let policies = fingerprint::all_policies()?;
    eprintln!(
        "fingerprinting {} policies on {} x {} x both core orders ...",
        policies.len(),
        fingerprint::grid_workloads(),
        fingerprint::MACHINES.join(", ")
    );
    let new = fingerprint::compute(&policies)?;
    print!("{}", fingerprint::table(&new));
    let c = fingerprint::compare(&old, &new);
    println!();
    if c.is_clean() {
        println!(
            "no policy moved: all {} match {}",
            c.unchanged,
            path.display()
        );
        return Ok(());
    }
    print!("{}", c.describe());
    if a.bless {
        crate::common::write_atomic(&path, fingerprint::render(&new).as_bytes())?;
        println!(
            "wrote {} ({} fingerprints: {} moved, {} new, {} removed)",
            path.display(),
            new.len(),
            c.moved.len(),
            c.not_in_file.len(),
            c.no_policy.len()
        );
        return Ok(());
    }
    bail!(
        "{} moved, {} without an entry, {} entries without a policy in {}; if intended, bless with `colab fingerprint --bless` (or `{}`) and commit the file",
        c.moved.len(),
        c.not_in_file.len(),
        c.no_policy.len(),
        path.display(),
        fingerprint::BLESS_COMMAND
    )
}
