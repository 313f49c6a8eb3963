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
    restore_sigpipe();
    let cli = match parse(std::env::args_os()) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    if let Err(e) = cli::run(cli) {
        eprintln!("error: {}", common::error_text(&e));
        std::process::exit(1);
    }
}

/// The command line as [`main`] reads it: [`Cli`] with every option's value
/// allowed to be a negative number, so `--seed -1` is refused by the
/// option's own check, naming it, rather than read as an unknown flag `-1`.
pub fn parse<I, T>(args: I) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    use clap::{CommandFactory, FromArgMatches};
    let mut cmd = negative_numbers_as_values(Cli::command());
    let matches = cmd
        .try_get_matches_from_mut(args)
        .map_err(explain_negative)?;
    Cli::from_arg_matches(&matches).map_err(|e| e.format(&mut cmd))
}

/// `cmd` and its subcommands with every value-taking argument accepting a
/// value that looks like a negative number.
fn negative_numbers_as_values(cmd: clap::Command) -> clap::Command {
    cmd.mut_args(|a| {
        if a.get_action().takes_values() {
            a.allow_negative_numbers(true)
        } else {
            a
        }
    })
    .mut_subcommands(negative_numbers_as_values)
}

/// A negative number given to an option of whole numbers: clap's "invalid
/// digit found in string" said in words.
fn explain_negative(e: clap::Error) -> clap::Error {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let negative = matches!(
        e.get(ContextKind::InvalidValue),
        Some(ContextValue::String(v)) if v.starts_with('-') && v[1..].parse::<f64>().is_ok()
    );
    let text = e.to_string();
    if e.kind() != ErrorKind::ValueValidation
        || !negative
        || !text.contains("invalid digit found in string")
    {
        return e;
    }
    let first = text.lines().next().unwrap_or_default();
    let first = first.trim_start_matches("error: ").replace(
        "invalid digit found in string",
        "a negative number, where a whole number (0 or more) is wanted",
    );
    clap::Error::raw(ErrorKind::ValueValidation, format!("{first}\n"))
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
