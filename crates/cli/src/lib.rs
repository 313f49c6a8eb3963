//! The `colab` command line as a library: the clap parser ([`Cli`]) for
//! tests and tools, and [`main`], which the binary calls. Each subcommand
//! is a thin module over the library crates that do the work.

pub mod cli;
pub mod commands;
pub mod common;

pub use cli::{Cli, Cmd};

/// Parses the process's arguments, runs the command, and exits 1 with the
/// error and its causes on one line when it fails.
pub fn main() {
    use clap::Parser;
    let cli = Cli::parse();
    if let Err(e) = cli::run(cli) {
        eprintln!("error: {}", common::error_text(&e));
        std::process::exit(1);
    }
}
