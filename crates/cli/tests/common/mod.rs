//! Helpers shared by the CLI test files that run the real binary.

use std::process::{Command, Output};

pub fn colab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_colab"))
        .args(args)
        .output()
        .expect("start the colab binary")
}

/// (stdout, stderr) as text.
pub fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Runs `colab ARGS`, which must succeed without a panic; returns stdout.
pub fn succeeds(args: &[&str]) -> String {
    let o = colab(args);
    let (out, err) = text(&o);
    assert!(o.status.success(), "colab {args:?} failed\n{out}\n{err}");
    assert!(!err.contains("panicked"), "{err}");
    out
}
