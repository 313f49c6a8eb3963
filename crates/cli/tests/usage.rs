//! Command-line mistakes, whatever the subcommand: clap's usage error.

mod common;

use common::{assert_fails_with_usage, run};

#[test]
fn command_line_mistakes_get_usage_errors() {
    let r = run(&["sim"]);
    assert_fails_with_usage(&r, "WORKLOAD");
    let r = run(&["topology", "2B2S", "--order", "sideways"]);
    assert_fails_with_usage(&r, "sideways");
    let r = run(&["sim", "ferret", "--seed=-1"]);
    assert_fails_with_usage(&r, "'-1'");
    let r = run(&["frobnicate"]);
    assert_fails_with_usage(&r, "frobnicate");
}
