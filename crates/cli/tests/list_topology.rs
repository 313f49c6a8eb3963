//! `colab list` and `colab topology` as text for people: sections with
//! titles and header rows, columns that line up whatever the names, lines
//! that fit, one section or one policy on demand, and output piped into
//! `head` ending quietly.

mod common;

use colab_workload::Library;
use common::{fails, ok};

/// Every line of `colab list` fits in this many characters: the width text
/// is folded to when stdout is not a terminal (`colab_cli::table::PIPE_WIDTH`).
const MAX_LINE: usize = 100;

/// The lines of the section of `out` whose title starts with `title`, up
/// to the blank line that ends it (title included).
fn section<'a>(out: &'a str, title: &str) -> Vec<&'a str> {
    let lines: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with(title))
        .take_while(|l| !l.trim().is_empty())
        .collect();
    assert!(!lines.is_empty(), "no section '{title}':\n{out}");
    lines
}

/// The char offset of each header cell in `header` (cells are separated by
/// two spaces or more; a cell may hold one space, as "compute rate").
fn column_starts(header: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    let chars: Vec<char> = header.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == ' ' {
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len() && !(chars[i] == ' ' && chars.get(i + 1).is_none_or(|c| *c == ' ')) {
            i += 1;
        }
        out.push((chars[start..i].iter().collect(), start));
    }
    out
}

/// The cell of `row` that starts at char offset `at`: it must start there
/// (a space before it, none at it), and runs to two spaces or the end.
fn cell_at(row: &str, at: usize) -> String {
    let chars: Vec<char> = row.chars().collect();
    assert!(
        at < chars.len() && chars[at] != ' ' && chars[at - 1] == ' ',
        "no cell starts at column {at} of\n{row}"
    );
    let rest: String = chars[at..].iter().collect();
    rest.split("  ").next().unwrap_or("").to_string()
}

#[test]
fn topology_is_a_table_with_its_costs_in_units() {
    let out = ok(&["topology", "2B4S"]).stdout;
    assert!(!out.contains("Costs {"), "Rust debug text:\n{out}");
    assert!(
        out.starts_with("2B4S: 6 cores (2 big + 4 little) in 2 clusters"),
        "{out}"
    );
    let lines: Vec<&str> = out.lines().collect();
    let h = lines
        .iter()
        .position(|l| l.trim_start().starts_with("core "))
        .unwrap_or_else(|| panic!("no header row:\n{out}"));
    let cols = column_starts(lines[h]);
    let names: Vec<&str> = cols.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "core",
            "type",
            "cluster",
            "compute rate",
            "memory rate",
            "active W",
            "idle W"
        ],
        "{out}"
    );
    // Six rows; the type and cluster columns start under their titles, the
    // numbers end under theirs (the last column starts under its title).
    for (i, row) in lines[h + 1..h + 7].iter().enumerate() {
        let big = i < 2;
        assert_eq!(cell_at(row, cols[1].1), if big { "big" } else { "little" });
        assert!(cell_at(row, cols[2].1).starts_with(if big { "0" } else { "1" }));
        let end = |c: usize| cols[c].1 + cols[c].0.len();
        assert_eq!(
            &row[end(3) - 5..end(3)],
            if big { "1.000" } else { "0.318" }
        );
        assert_eq!(&row[end(5) - 4..end(5)], if big { "1.50" } else { "0.25" });
        assert_eq!(cell_at(row, cols[6].1), if big { "0.05" } else { "0.02" });
    }
    assert!(lines[h + 7].starts_with("Rates are relative"), "{out}");
    for (label, value) in [
        ("context switch", "5 us"),
        ("migration within a cluster", "10 us"),
        ("migration across clusters", "100 us"),
        ("tick", "4 ms"),
    ] {
        let line = lines
            .iter()
            .find(|l| l.trim_start().starts_with(label))
            .unwrap_or_else(|| panic!("no '{label}' line:\n{out}"));
        assert_eq!(
            line.split("  ").last().map(str::trim),
            Some(value),
            "{line}"
        );
    }
    // A machine file's measured costs keep every ns; idle states get a line each.
    let dir = common::tempdir();
    let t = common::write(
        dir.path(),
        "idle.toml",
        r#"
name = "idle"
[[core_types]]
name = "big"
compute_rate = 1.0
memory_rate = 1.0
active_power_w = 1.5
idle_power_w = 0.05
[[clusters]]
core_type = "big"
cores = 2
[costs]
context_switch_ns = 8268
wakeup_latency_ns = 54804
idle_exit = [{ after_ns = 1000000, extra_ns = 200000 }]
"#,
    );
    let out = ok(&["topology", common::s(&t)]).stdout;
    for part in [
        "8.268 us",
        "wake-up latency",
        "54.804 us",
        "idle exit after 1 ms idle",
        "+200 us",
    ] {
        assert!(out.contains(part), "lacks {part:?}:\n{out}");
    }
    let v = common::parse_json(
        &ok(&["topology", "2B4S", "--json"]).stdout,
        "topology --json",
    );
    assert_eq!(v["costs"]["migration_cross_ns"], 100_000);
    assert_eq!(v["cores"].as_array().map(Vec::len), Some(6));
    assert_eq!(v["clusters"][1]["core_type"], "little");
}

#[test]
fn list_is_sections_of_lines_that_fit() {
    let out = ok(&["list"]).stdout;
    for l in out.lines() {
        assert!(
            l.chars().count() <= MAX_LINE,
            "a line of {} chars (at most {MAX_LINE}):\n{l}",
            l.chars().count()
        );
    }
    // Each section: its title, then (but for the random mixes' sentence)
    // a header row before its first row.
    for (title, header) in [
        ("Benchmarks", "name  "),
        ("Scenario programs", "name  "),
        ("Mixes", "mix  "),
        ("Random mixes", ""),
        ("Policies", "name  "),
        ("ROTA's presets", "preset  "),
        ("Models", "name  "),
        ("Trace libraries", "name  "),
        ("Machines", "name  "),
    ] {
        let lines = section(&out, title);
        // No trace library here (tests run in crates/cli): a sentence says so.
        if title == "Trace libraries" && lines[1].contains("(none here") {
            continue;
        }
        if !header.is_empty() {
            assert!(
                lines[1..]
                    .iter()
                    .any(|l| l.starts_with(&format!("  {header}"))),
                "section {title} has no header row:\n{}",
                lines.join("\n")
            );
        }
    }
    // ROTA's 1,500-character description and its switches are for
    // `colab list rota`.
    assert!(!out.contains("rotate = on|off"), "{out}");
    assert!(out.contains("`colab list rota`"), "{out}");
}

#[test]
fn benchmark_and_mix_columns_line_up() {
    let out = ok(&["list"]).stdout;
    let lib = Library::builtin();
    for (title, scenarios) in [("Benchmarks", false), ("Scenario programs", true)] {
        let lines = section(&out, title);
        let cols = column_starts(lines[1]);
        let names: Vec<&str> = cols.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            ["name", "parallelism", "sync", "comm/comp", "threads"],
            "{title}'s header row:\n{}",
            lines.join("\n")
        );
        let mut rows = 0;
        for row in &lines[2..] {
            let name = row.split_whitespace().next().unwrap();
            let (file, spec) = &lib.benchmarks[name];
            assert_eq!(colab_workload::is_scenario_file(file), scenarios);
            assert_eq!(cell_at(row, cols[1].1), spec.parallelism, "{row}");
            assert_eq!(cell_at(row, cols[2].1), spec.sync_rate, "{row}");
            assert_eq!(cell_at(row, cols[3].1), spec.comm_comp, "{row}");
            assert_eq!(
                Some(cell_at(row, cols[4].1)),
                spec.threads_formula.clone(),
                "{row}"
            );
            rows += 1;
        }
        let want = lib
            .benchmarks
            .values()
            .filter(|(f, _)| colab_workload::is_scenario_file(f) == scenarios)
            .count();
        assert_eq!(rows, want, "{title}");
    }
    // Every mix, whatever the length of its name, has its programs in the
    // programs column.
    let lines = section(&out, "Mixes");
    let cols = column_starts(lines[1]);
    assert_eq!(cols[0].0, "mix");
    let at = cols[1].1;
    for m in &lib.mixes {
        let row = lines
            .iter()
            .find(|l| l.split_whitespace().next() == Some(m.name.as_str()))
            .unwrap_or_else(|| panic!("mix {} not listed", m.name));
        let first = cell_at(row, at);
        assert!(
            first.starts_with(&m.programs[0].bench),
            "{}'s programs do not start under the header:\n{row}",
            m.name
        );
    }
}

#[test]
fn machines_lists_the_names_and_every_named_machine() {
    let out = ok(&["list"]).stdout;
    let lines = section(&out, "Machines");
    let text = lines.join("\n");
    assert!(text.contains("<b>B<s>S"), "{text}");
    for (name, _) in colab_core::BUILTIN_MACHINES {
        assert!(
            lines
                .iter()
                .any(|l| l.split_whitespace().next() == Some(name)),
            "{name} is not listed under Machines:\n{text}"
        );
    }
    let hikey = lines
        .iter()
        .position(|l| l.split_whitespace().next() == Some("hikey970"))
        .unwrap();
    assert!(lines[hikey].contains("4 A73 + 4 A53"), "{}", lines[hikey]);
    assert!(lines[hikey + 1].contains("HiHope Hikey 970"), "{text}");
    // One section alone.
    let alone = ok(&["list", "machines"]).stdout;
    assert!(alone.starts_with("Machines"), "{alone}");
    assert!(!alone.contains("Benchmarks"), "{alone}");
}

#[test]
fn list_policy_prints_it_in_full_with_its_switches() {
    let rota = ok(&["list", "rota"]).stdout;
    assert!(rota.starts_with("Policy rota"), "{rota}");
    for s in colab_policies::rota::SWITCHES {
        assert!(
            rota.contains(&format!("  {} = ", s.key)),
            "lacks {}:\n{rota}",
            s.key
        );
    }
    assert!(rota.contains("rota@3"), "{rota}");
    // The whole description, clause by clause.
    let desc = colab_policies::POLICIES
        .iter()
        .find(|(n, _)| *n == "rota")
        .unwrap()
        .1;
    let words = |t: &str| {
        t.split_whitespace()
            .map(str::to_string)
            .collect::<Vec<_>>()
            .join(" ")
    };
    let head = rota.split("\n\n").next().unwrap();
    assert_eq!(
        words(head.trim_start_matches("Policy rota (-p rota):")),
        words(desc),
        "{rota}"
    );
    assert!(
        rota.lines().all(|l| l.chars().count() <= MAX_LINE),
        "{rota}"
    );
    let colab = ok(&["list", "colab"]).stdout;
    assert!(colab.contains("block-first"), "{colab}");
    assert!(colab.contains("scx:colab"), "the hosted twin:\n{colab}");
    let bpfland = ok(&["list", "scx:bpfland"]).stdout;
    assert!(bpfland.contains("--slice-us"), "{bpfland}");
    // The policy list points there rather than printing it.
    let list = ok(&["list", "policies"]).stdout;
    assert!(list.contains("`colab list rota`"), "{list}");
    assert!(!list.contains("shortest queue of any cluster"), "{list}");
}

#[test]
fn list_unknown_word_names_the_sections() {
    fails(
        &["list", "nosuch"],
        &[
            "'nosuch'",
            "benchmarks, scenarios, mixes, policies, models, traces, machines",
            "rota",
        ],
    );
    fails(&["list", "polcies"], &["did you mean 'policies'?"]);
}

/// `colab ARGS` with stdout a pipe of one page (4 KiB, less than the
/// output) that the reader closes after a few bytes, as `| head -c 100`
/// does: the program must end without a panic, by SIGPIPE or quietly.
#[cfg(target_os = "linux")]
fn piped_into_head(args: &[&str]) {
    use std::io::Read;
    use std::os::fd::{FromRawFd, OwnedFd};
    use std::os::unix::process::ExitStatusExt;
    use std::process::{Command, Stdio};

    let mut fds = [0; 2];
    // SAFETY: pipe2 fills the two descriptors; each is owned once below.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    let (read_end, write_end) =
        unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    // A small pipe: the writer blocks (and so is still writing) when the
    // reader goes, whatever the machine's speed.
    assert!(unsafe { libc::fcntl(fds[0], libc::F_SETPIPE_SZ, 4096) } >= 4096);
    let child = Command::new(env!("CARGO_BIN_EXE_colab"))
        .args(args)
        .stdout(Stdio::from(write_end))
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the colab binary");
    let mut reader = std::fs::File::from(read_end);
    let mut first = [0u8; 100];
    reader.read_exact(&mut first).expect("the first bytes");
    drop(reader);
    let out = child.wait_with_output().expect("wait for colab");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("panicked"),
        "colab {args:?} | head panicked: {:?}\n{stderr}",
        out.status
    );
    assert!(
        out.status.success() || out.status.signal() == Some(libc::SIGPIPE),
        "colab {args:?} | head: {:?}\n{stderr}",
        out.status
    );
}

#[cfg(target_os = "linux")]
#[test]
fn output_piped_into_head_ends_quietly() {
    piped_into_head(&["list"]);
    piped_into_head(&["topology", "amd-epyc-9965"]);
}

#[test]
fn trace_libraries_are_a_table() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    if !root.join("traces/parsec/manifest.toml").is_file() {
        return; // no shipped library in this checkout
    }
    // From a directory without traces/: the source tree's are found.
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_colab"))
        .args(["list", "traces"])
        .current_dir(std::env::temp_dir())
        .env_remove("COLAB_TRACES")
        .output()
        .expect("start the colab binary");
    assert!(o.status.success());
    let out = String::from_utf8_lossy(&o.stdout);
    let lines = section(&out, "Trace libraries");
    let cols = column_starts(lines[1]);
    let names: Vec<&str> = cols.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        ["name", "recorded", "CPUs", "what it holds"],
        "{out}"
    );
    let row = lines
        .iter()
        .find(|l| l.split_whitespace().next() == Some("parsec"))
        .unwrap_or_else(|| panic!("no parsec row:\n{out}"));
    assert!(
        cell_at(row, cols[3].1).starts_with("90 recordings of 15 programs"),
        "{row}"
    );
    assert!(out.lines().all(|l| l.chars().count() <= MAX_LINE), "{out}");
}
