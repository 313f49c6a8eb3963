//! Every `colab ...` command shown in the README's and the book's ```sh
//! blocks must parse with today's command line, and its subcommand's
//! `--help` must work; every subcommand's help must teach by example.

use clap::{CommandFactory, Parser};
use colab_cli::Cli;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A documented command: where it is and its words (`colab` first).
struct DocCommand {
    file: PathBuf,
    line: usize,
    words: Vec<String>,
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// README.md and every book/src/**/*.md (the book may not exist).
fn doc_files() -> Vec<PathBuf> {
    let root = repo_root();
    let mut files = vec![root.join("README.md")];
    let mut stack = vec![root.join("book/src")];
    while let Some(dir) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "md") {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

/// `line` without a trailing `# comment` (a `#` after whitespace, outside quotes).
fn strip_comment(line: &str) -> &str {
    let (mut single, mut double) = (false, false);
    let mut prev_space = false;
    for (i, c) in line.char_indices() {
        match c {
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '#' if prev_space && !single && !double => return line[..i].trim_end(),
            _ => {}
        }
        prev_space = c.is_whitespace();
    }
    line.trim_end()
}

/// The `colab` lines of the ```sh blocks of `text`, skipping those a shell
/// would pipe, redirect, chain or substitute into.
fn commands_in(file: &Path, text: &str) -> Vec<DocCommand> {
    let mut out = Vec::new();
    let mut in_sh = false;
    for (i, raw) in text.lines().enumerate() {
        let t = raw.trim_start();
        if t.starts_with("```") {
            in_sh = !in_sh && t.trim_end() == "```sh";
            continue;
        }
        if !in_sh || !t.starts_with("colab ") {
            continue;
        }
        let cmd = strip_comment(t);
        if ["$(", "|", ">", "<", "&&"].iter().any(|s| cmd.contains(s)) {
            continue;
        }
        let words = shlex::split(cmd)
            .unwrap_or_else(|| panic!("{}:{}: unbalanced quotes: {cmd}", file.display(), i + 1));
        out.push(DocCommand {
            file: file.to_path_buf(),
            line: i + 1,
            words,
        });
    }
    out
}

fn all_doc_commands() -> Vec<DocCommand> {
    let mut all = Vec::new();
    for f in doc_files() {
        let text = std::fs::read_to_string(&f)
            .unwrap_or_else(|e| panic!("{}: cannot read: {e}", f.display()));
        all.extend(commands_in(&f, &text));
    }
    all
}

/// The subcommand words of a command line (`reproduce`, or none).
fn subcommand_path(words: &[String]) -> Vec<String> {
    let mut cmd = Cli::command();
    let mut path = Vec::new();
    for w in &words[1..] {
        let Some(sub) = cmd.find_subcommand(w).cloned() else {
            break;
        };
        path.push(w.clone());
        cmd = sub;
    }
    path
}

#[test]
fn documented_commands_parse_and_their_help_works() {
    let cmds = all_doc_commands();
    assert!(!cmds.is_empty(), "no `colab` lines found in README.md");
    let mut failures = Vec::new();
    let mut helped = BTreeSet::new();
    for c in &cmds {
        if let Err(e) = Cli::try_parse_from(&c.words) {
            failures.push(format!(
                "{}:{}: `{}` does not parse:\n{e}",
                c.file.display(),
                c.line,
                c.words.join(" ")
            ));
            continue;
        }
        let sub = subcommand_path(&c.words);
        if !helped.insert(sub.clone()) {
            continue;
        }
        let out = Command::new(env!("CARGO_BIN_EXE_colab"))
            .args(&sub)
            .arg("--help")
            .output()
            .expect("run colab");
        if !out.status.success() {
            failures.push(format!(
                "{}:{}: `colab {} --help` failed:\n{}",
                c.file.display(),
                c.line,
                sub.join(" "),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn the_collector_reads_shell_blocks_only() {
    let text = "```sh\ncolab sim Sync-2 -p 'colab:remote=off'   # a comment\ncolab list | less\n```\n```toml\ncolab x\n```\n  colab outside\n";
    let cmds = commands_in(Path::new("t.md"), text);
    assert_eq!(cmds.len(), 1);
    assert_eq!(
        cmds[0].words,
        ["colab", "sim", "Sync-2", "-p", "colab:remote=off"]
    );
    assert_eq!(cmds[0].line, 2);
    // A bogus documented command is caught by the parse check.
    assert!(Cli::try_parse_from(["colab", "sim", "--no-such-flag"]).is_err());
}

#[test]
fn every_subcommand_has_a_purpose_and_examples() {
    let mut cli = Cli::command();
    cli.build();
    // clap's own `help` subcommand has no examples to give.
    for sub in cli.get_subcommands().filter(|s| s.get_name() != "help") {
        let name = sub.get_name().to_string();
        let about = sub.get_about().map(|a| a.to_string()).unwrap_or_default();
        assert!(
            !about.is_empty() && !about.contains('\n'),
            "{name}: about should be one line: {about:?}"
        );
        let after = sub
            .get_after_help()
            .map(|a| a.to_string())
            .unwrap_or_default();
        let examples = after
            .lines()
            .filter(|l| {
                l.trim_start().starts_with("colab ") || l.trim_start().starts_with("sudo colab ")
            })
            .count();
        assert!(
            after.starts_with("Examples:") && examples >= 2,
            "{name}: help needs an Examples: section with two commands:\n{after}"
        );
    }
}

#[test]
fn bare_colab_shows_the_useful_commands() {
    let out = Command::new(env!("CARGO_BIN_EXE_colab"))
        .output()
        .expect("run colab");
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    let listed = text.lines().filter(|l| l.starts_with("  colab ")).count();
    assert_eq!(listed, 5, "{text}");
    assert!(text.contains("colab --help"), "{text}");
}
