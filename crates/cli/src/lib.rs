//! The `colab` command line as a library: the clap parser ([`Cli`]) for
//! tests and tools, and [`main`], which the binary calls. Each subcommand
//! is a thin module over the library crates that do the work.

pub mod cli;
pub mod commands;
pub mod common;
pub mod table;

pub use cli::{Cli, Cmd};

/// Parses the process's arguments, runs the command, and exits 1 with the
/// error and its causes on one line when it fails.
pub fn main() {
    use clap::Parser;
    restore_sigpipe();
    let cli = Cli::parse();
    if let Err(e) = cli::run(cli) {
        eprintln!("error: {}", common::error_text(&e));
        std::process::exit(1);
    }
}

/// Lets a closed stdout end the program quietly, as it ends any Unix
/// filter: `colab list | head` would otherwise panic ("failed printing to
/// stdout: Broken pipe") once head has gone, because Rust ignores SIGPIPE
/// and `println!` panics on the EPIPE error that comes instead. With the
/// default disposition back, the write kills the process with SIGPIPE, as
/// the shell expects. colab writes to no other pipe or socket that could
/// close under it (its child processes get their own default disposition).
fn restore_sigpipe() {
    #[cfg(unix)]
    // SAFETY: called first thing in main, before any thread starts; it only
    // changes how the process takes SIGPIPE.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
