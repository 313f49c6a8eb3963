//! A researcher's own programs and mixes on the command line: program
//! files named by a mix (relative to it), several files at once, a program
//! and its mixes in one file, `FILE:NAME` and `FILE:n`, random-mix names,
//! and the errors that name what is wrong.

mod common;

use common::{fails, ok, parse_json, s, tempdir, write};
use std::path::Path;

/// A barrier program written as workloads/README.md describes.
const BARRIER4: &str = r#"
name = "barrier4"
default_n = 4
threads_formula = "n"
[barrier]
b = "n"
[thread.main]
ops = [
  { spawn = "worker", count = "n-1" },
  { loop = 20, body = [ { compute = 200, speedup = 2.0 }, { barrier = "b" } ] },
  { join = "worker" },
]
[thread.worker]
ops = [ { loop = 20, body = [ { compute = 200, speedup = 2.0 }, { barrier = "b" } ] } ]
"#;

const SPIN: &str = r#"
name = "spin"
default_n = 1
threads_formula = "1"
[thread.main]
ops = [ { compute = 2000, speedup = 1.5 } ]
"#;

/// Two mixes: program files beside and below the mix file, and a
/// built-in benchmark.
const MIXES: &str = r#"
[[mix]]
name = "mine"
programs = [ { bench = "barrier4.toml" }, { bench = "progs/spin.toml" }, { bench = "fft", n = 2 } ]

[[mix]]
name = "mine2"
programs = [ { bench = "barrier4.toml", n = 2 }, { bench = "fft" } ]
"#;

fn own_files(dir: &Path) -> String {
    write(dir, "barrier4.toml", BARRIER4);
    std::fs::create_dir(dir.join("progs")).unwrap();
    write(&dir.join("progs"), "spin.toml", SPIN);
    s(&write(dir, "mix.toml", MIXES)).to_string()
}

/// The programs of each run of a `--json` output (an object or an array).
fn programs_of(json: &serde_json::Value) -> Vec<Vec<String>> {
    let runs = match json.as_array() {
        Some(a) => a.clone(),
        None => vec![json.clone()],
    };
    runs.iter()
        .map(|r| {
            r["programs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p["name"].as_str().unwrap().to_string())
                .collect()
        })
        .collect()
}

#[test]
fn a_mix_of_program_files_runs_and_a_file_of_two_says_which() {
    let dir = tempdir();
    let mix = own_files(dir.path());
    let r = ok(&["sim", &mix, "-p", "rota", "--json"]);
    let json = parse_json(&r.stdout, "sim --json");
    assert_eq!(json["workload"], "mine", "{}", r.stdout);
    assert_eq!(programs_of(&json), vec![vec!["barrier4", "spin", "fft"]]);
    // The first of two mixes, said on stderr with how to pick.
    assert!(
        r.stderr.contains("holds 2 mixes (mine, mine2)"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("--every-mix"), "{}", r.stderr);
    let every = ok(&["sim", &mix, "--every-mix", "-p", "cfs", "--json"]);
    let json = parse_json(&every.stdout, "sim --every-mix --json");
    assert_eq!(
        programs_of(&json),
        vec![vec!["barrier4", "spin", "fft"], vec!["barrier4", "fft"]]
    );
    assert!(!every.stderr.contains("holds 2 mixes"), "{}", every.stderr);
    // The text run names each mix as `colab compare` takes it, and
    // compare takes it.
    let text = ok(&["sim", &mix, "--every-mix", "-p", "cfs"]);
    for m in ["mine", "mine2"] {
        let hint = format!("`colab compare {mix}:{m} -t 2B2S -p cfs,...`");
        assert!(text.stdout.contains(&hint), "{hint}:\n{}", text.stdout);
    }
    let c = ok(&[
        "compare",
        &format!("{mix}:mine2"),
        "-p",
        "cfs,rota",
        "--seeds",
        "2",
    ]);
    assert!(c.stdout.contains("mine2"), "{}", c.stdout);
}

#[test]
fn file_selectors_random_names_and_several_workloads() {
    let dir = tempdir();
    let mix = own_files(dir.path());
    let barrier = format!("{}/barrier4.toml", s(dir.path()));
    let r = ok(&[
        "sim",
        &format!("{mix}:mine2"),
        &format!("{barrier}:2"),
        "Rand-7-2",
        "-p",
        "cfs",
        "--json",
    ]);
    let json = parse_json(&r.stdout, "three workloads");
    let runs = json.as_array().expect("several workloads: a JSON array");
    let names: Vec<&str> = runs
        .iter()
        .map(|r| r["workload"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["mine2", "barrier4", "Rand-7-2"]);
    // barrier4 at n = 2 has two threads.
    assert_eq!(runs[1]["programs"][0]["threads"], 2, "{}", r.stdout);
    // Rand-7-2 is the mix `colab mixes --random 2 --mix-seed 7` prints.
    let listed = ok(&["mixes", "--random", "2", "--mix-seed", "7"]).stdout;
    let second = listed.split("[[mix]]").nth(2).expect("two mixes listed");
    for p in runs[2]["programs"].as_array().unwrap() {
        let name = p["name"].as_str().unwrap();
        assert!(
            second.contains(&format!("\"{name}\"")),
            "{name} not in {second}"
        );
    }
}

#[test]
fn a_program_and_its_mix_share_a_file() {
    let dir = tempdir();
    let both = write(
        dir.path(),
        "both.toml",
        r#"
# [[mix]] in a comment of the program part changes nothing
name = "both_prog"
default_n = 2
threads_formula = "n"
[thread.main]
ops = [ { spawn = "w", count = "n-1" }, { compute = 1000, speedup = 2.0 }, { join = "w" } ]
[thread.w]
ops = [ { compute = 1000, speedup = 2.0 } ]

[[mix]]
name = "both_mix"
programs = [ { bench = "both.toml" }, { bench = "fft" } ]
"#,
    );
    let both = s(&both);
    let json = parse_json(&ok(&["sim", both, "-p", "cfs", "--json"]).stdout, "mix");
    assert_eq!(programs_of(&json), vec![vec!["both_prog", "fft"]]);
    let json = parse_json(
        &ok(&["sim", &format!("{both}:both_prog"), "-p", "cfs", "--json"]).stdout,
        "program",
    );
    assert_eq!(programs_of(&json), vec![vec!["both_prog"]]);
    let json = parse_json(
        &ok(&["sim", &format!("{both}:3"), "-p", "cfs", "--json"]).stdout,
        "program at n = 3",
    );
    assert_eq!(json["programs"][0]["threads"], 3, "{json}");
    // A program file that only mentions [[mix]] in a comment is a program.
    let commented = write(
        dir.path(),
        "commented.toml",
        "# [[mix]] tables go in another file\nname = \"commented\"\n[thread.main]\nops = [ { compute = 100, speedup = 2.0 } ]\n",
    );
    let json = parse_json(&ok(&["sim", s(&commented), "--json"]).stdout, "commented");
    assert_eq!(programs_of(&json), vec![vec!["commented"]]);
}

#[test]
fn own_workload_mistakes_are_named() {
    let dir = tempdir();
    let mix = own_files(dir.path());
    // A mix naming a program file by its bare name: the file is pointed to.
    let bare = write(
        dir.path(),
        "bare.toml",
        "[[mix]]\nname = \"bare\"\nprograms = [ { bench = \"barrier4\" } ]\n",
    );
    fails(
        &["sim", s(&bare)],
        &[
            "mix 'bare' program 1",
            "unknown benchmark 'barrier4'",
            "bench = \"barrier4.toml\"",
        ],
    );
    // ... unless that program file is given too.
    ok(&["sim", s(&bare), &format!("{}/barrier4.toml", s(dir.path()))]);
    fails(
        &["sim", &format!("{mix}:nope")],
        &[
            "'nope' is neither a thread count nor one of its mixes",
            "mine, mine2",
        ],
    );
    let missing = write(
        dir.path(),
        "missing.toml",
        "[[mix]]\nname = \"m\"\nprograms = [ { bench = \"gone.toml\" } ]\n",
    );
    fails(&["sim", s(&missing)], &["mix 'm' program 1", "gone.toml"]);
    let clash = write(
        dir.path(),
        "clash.toml",
        "name = \"ferret\"\n[thread.main]\nops = [ { compute = 100, speedup = 2.0 } ]\n",
    );
    fails(
        &["sim", s(&clash)],
        &["program 'ferret'", "give it a name of its own"],
    );
    let empty = write(dir.path(), "empty.toml", "# nothing\n");
    fails(&["sim", s(&empty)], &["holds neither a program", "[[mix]]"]);
    fails(
        &[
            "sim",
            &mix,
            "Sync-2",
            "--timeline",
            s(&dir.path().join("t.json")),
        ],
        &["--timeline writes one run's schedule"],
    );
}
