//! `colab list`: what is built in.

use anyhow::Result;
use colab_workload::Library;
use std::path::Path;

pub const ABOUT: &str =
    "List built-in benchmarks, mixes, policies, models, trace libraries and machines.";

pub const EXAMPLES: &str = "\
Examples:
  colab list
  colab list | grep -A30 '^Policies'       # the policies and their switches";

#[derive(clap::Args)]
pub struct ListArgs {}

pub fn run(_: ListArgs) -> Result<()> {
    let lib = Library::builtin();
    println!("Benchmarks (use as WORKLOAD, optionally NAME:n):");
    print!("{}", lib.describe_benchmarks(false));
    println!("\nScenario programs (workloads/scenarios/, used the same way):");
    print!("{}", lib.describe_benchmarks(true));
    println!("\nMixes:");
    print!("{}", lib.describe_mixes());
    println!(
        "\nRandom mixes: Rand-S-1 .. Rand-S-N, N mixes of 2-6 COLAB benchmarks drawn from seed S \
         (`colab reproduce --random-mixes N --mix-seed S`; `colab mixes --random N --mix-seed S` prints them)."
    );
    println!("\nPolicies:");
    for (n, d) in colab_policies::POLICIES {
        println!("  {n:<14} {d}");
    }
    for (n, d) in colab_scx_host::SCHEDULERS {
        println!("  scx:{n:<10} {d}");
    }
    println!("\nROTA's switches (rota[@N]:KEY=VALUE:..., the default's value first):");
    print!("{}", colab_policies::rota::options_help());
    println!("ROTA's presets, each a setting of every switch:");
    for (n, spelling) in colab_policies::rota::PRESETS {
        println!("  rota@{n:<3} {spelling}");
    }
    println!("\nModels (colab train --show-builtin NAME):");
    for (n, d) in colab_model::BUILTIN_MODELS {
        println!("  {n:<18} {d}");
    }
    println!("\nTrace libraries (traces/NAME/manifest.toml; `colab reproduce --traces NAME`):");
    print!(
        "{}",
        colab_trace::workloads::list_libraries(Path::new("traces"))
    );
    println!("\nMachines: any <b>B<s>S name (2B2S, 2B4S, 4B2S, 4B4S, 1B1S, 1B3S, 3B1S, 4B, ...) or a topology TOML file (see topologies/).");
    Ok(())
}
