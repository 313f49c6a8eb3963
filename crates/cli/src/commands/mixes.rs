//! `colab mixes`: mixes as a mix file.

use anyhow::{Context, Result};
use colab_workload::Library;

pub const ABOUT: &str = "Print mixes as a mix file: the built-in ones, or random ones.";

pub const LONG_ABOUT: &str = "Print mixes as a mix file: the built-in ones, or random ones.

Each `[[mix]]` entry lists its programs' n and thread counts. With --random,
the random mixes `reproduce --random-mixes N --mix-seed S` runs. Save one
and run it with `colab sim FILE`.";

pub const EXAMPLES: &str = "\
Examples:
  colab mixes                              # the papers' mixes
  colab mixes --random 5 --mix-seed 7      # the first five random mixes of seed 7
  colab mixes --random 3 > my-mixes.toml";

#[derive(clap::Args)]
pub struct MixesArgs {
    /// Print the first N random mixes of --mix-seed instead (at most 1000).
    #[arg(long, value_name = "N")]
    random: Option<u32>,
    /// Seed of the random mixes.
    #[arg(long, value_name = "S", default_value_t = 1, requires = "random")]
    mix_seed: u64,
}

pub fn run(a: MixesArgs) -> Result<()> {
    let lib = Library::builtin();
    let mixes = match a.random {
        Some(n) => colab_campaign::random_mixes(&lib, n, a.mix_seed)
            .with_context(|| format!("--random {n}"))?,
        None => lib.mixes.clone(),
    };
    print!("{}", colab_workload::random::mixes_toml(&lib, &mixes)?);
    Ok(())
}
