//! `colab`: the command-line shell over the colab libraries (the parser and
//! the subcommands live in this crate's library, `colab_cli`).

fn main() {
    colab_cli::main();
}
