//! `colab list`: what is built in, in sections for people; `colab list
//! SECTION` one section, `colab list POLICY` one policy in full.

use crate::commands::topology::cores_per_type;
use crate::table::{self, fold_indented, Table};
use anyhow::{bail, Result};
use colab_core::{CoreOrder, Topology, BUILTIN_MACHINES};
use colab_trace::library::{Manifest, MANIFEST};
use colab_workload::{is_scenario_file, Library};

pub const ABOUT: &str =
    "List the built-in benchmarks, mixes, policies, models and machines, or one section or policy.";

pub const EXAMPLES: &str = "\
Examples:
  colab list                    # everything, section by section
  colab list policies           # one section: benchmarks, scenarios, mixes, policies, models, traces, machines
  colab list rota               # one policy in full: ROTA's switches and presets
  colab list colab              # COLAB's switches
  colab list machines           # the <b>B<s>S names and the named machines (hikey970, ...)";

#[derive(clap::Args)]
pub struct ListArgs {
    /// One section (benchmarks, scenarios, mixes, policies, models, traces,
    /// machines), or a policy to describe in full with its switches (rota,
    /// colab, scx:colab, ...). Without it, every section.
    #[arg(value_name = "SECTION|POLICY")]
    what: Option<String>,
}

/// The sections, in `colab list`'s order: name (for `colab list NAME`),
/// other spellings accepted, and what prints it.
const SECTIONS: &[(&str, &[&str], Section)] = &[
    ("benchmarks", &["benchmark", "bench"], Section::Benchmarks),
    ("scenarios", &["scenario"], Section::Scenarios),
    ("mixes", &["mix"], Section::Mixes),
    ("policies", &["policy"], Section::Policies),
    ("models", &["model"], Section::Models),
    ("traces", &["trace", "trace-libraries"], Section::Traces),
    (
        "machines",
        &["machine", "topologies", "topology"],
        Section::Machines,
    ),
];

#[derive(Clone, Copy, PartialEq)]
enum Section {
    Benchmarks,
    Scenarios,
    Mixes,
    Policies,
    Models,
    Traces,
    Machines,
}

pub fn run(a: ListArgs) -> Result<()> {
    let width = table::width();
    let lib = Library::builtin();
    let Some(what) = a.what else {
        let parts: Vec<String> = SECTIONS
            .iter()
            .map(|(_, _, s)| section(&lib, *s, false, width))
            .collect();
        print!("{}", parts.join("\n"));
        return Ok(());
    };
    let word = what.trim().to_ascii_lowercase();
    if let Some((_, _, s)) = SECTIONS
        .iter()
        .find(|(n, aliases, _)| *n == word || aliases.contains(&word.as_str()))
    {
        print!("{}", section(&lib, *s, true, width));
        return Ok(());
    }
    if let Some(text) = policy(&word, width) {
        print!("{text}");
        return Ok(());
    }
    let sections: Vec<&str> = SECTIONS.iter().map(|(n, _, _)| *n).collect();
    let policies = policy_names();
    bail!(
        "unknown section or policy '{what}'{}: `colab list` takes a section ({}) or a policy ({})",
        colab_core::did_you_mean(
            &what,
            sections
                .iter()
                .copied()
                .chain(policies.iter().map(String::as_str))
        ),
        sections.join(", "),
        policies.join(", ")
    )
}

/// One section: a title line, then tables with a header row. `alone`: it
/// is all that is printed (`colab list SECTION`), and may say more.
fn section(lib: &Library, s: Section, alone: bool, width: usize) -> String {
    match s {
        Section::Benchmarks => benchmarks(lib, false, alone, width),
        Section::Scenarios => benchmarks(lib, true, alone, width),
        Section::Mixes => mixes(lib, width),
        Section::Policies => policies(width) + "\n" + &rota_presets(false, width),
        Section::Models => models(width),
        Section::Traces => traces(width),
        Section::Machines => machines(width),
    }
}

/// The benchmarks (or the scenario programs) and their classes; `alone`
/// adds what each is.
fn benchmarks(lib: &Library, scenarios: bool, alone: bool, width: usize) -> String {
    let (head, section) = if scenarios {
        (
            "Scenario programs (workloads/scenarios/, used as benchmarks are",
            "scenarios",
        )
    } else {
        (
            "Benchmarks (use as WORKLOAD or NAME:n; threads: how many for n",
            "benchmarks",
        )
    };
    let more = if alone {
        String::new()
    } else {
        format!("; `colab list {section}` says more")
    };
    let mut out = title(&format!("{head}{more}):"), width);
    let mut t = Table::new(&["name", "parallelism", "sync", "comm/comp", "threads"]);
    let mut what = Table::new(&["name", "what it is"]);
    for (name, (file, s)) in &lib.benchmarks {
        if is_scenario_file(file) != scenarios {
            continue;
        }
        t.row(vec![
            name.clone(),
            s.parallelism.clone(),
            s.sync_rate.clone(),
            s.comm_comp.clone(),
            s.threads_formula.clone().unwrap_or_default(),
        ]);
        what.row(vec![name.clone(), s.description.clone()]);
    }
    out += &t.render(width);
    if alone {
        out += "\n";
        out += &what.render(width);
    }
    out
}

/// The mixes, grouped by class in the library's order, each group headed
/// by its class and the papers' tables it comes from, then the random mixes.
fn mixes(lib: &Library, width: usize) -> String {
    let mut out = title(
        "Mixes (use as WORKLOAD; grouped by class, each [class] with the papers' tables):",
        width,
    );
    let mut t = Table::new(&["mix", "programs (NAME:n)"]);
    let mut i = 0;
    while i < lib.mixes.len() {
        let classes = &lib.mixes[i].classes;
        let end = lib.mixes[i..]
            .iter()
            .position(|m| &m.classes != classes)
            .map_or(lib.mixes.len(), |k| i + k);
        let mut sources: Vec<&str> = Vec::new();
        for m in &lib.mixes[i..end] {
            if !m.source.is_empty() && !sources.contains(&m.source.as_str()) {
                sources.push(&m.source);
            }
        }
        let head = format!("[{}] ", classes.join(","));
        let room = width.saturating_sub(head.len() + 2);
        t.heading(head + &common_source(&sources, room));
        for m in &lib.mixes[i..end] {
            let progs: Vec<String> = m
                .programs
                .iter()
                .map(|p| match p.n {
                    Some(n) => format!("{}:{n}", p.bench),
                    None => p.bench.clone(),
                })
                .collect();
            t.row(vec![m.name.clone(), progs.join(", ")]);
        }
        i = end;
    }
    out += &t.render(width);
    out += "\n";
    out += &fold_indented(
        "Random mixes: Rand-S-1 .. Rand-S-N, N mixes of 2-6 COLAB benchmarks drawn from seed S \
         (`colab reproduce --random-mixes N --mix-seed S`; `colab mixes --random N --mix-seed S` \
         prints them).",
        "",
        "  ",
        width,
    );
    out
}

/// A section's title line, folded.
fn title(text: &str, width: usize) -> String {
    fold_indented(text, "", "  ", width)
}

/// What a group of mixes comes from: their one source, or what their
/// sources share followed by how they differ ("camp-tocs12 Table IV, V")
/// when that fits in `room` characters, else what they share.
fn common_source(sources: &[&str], room: usize) -> String {
    let [first, others @ ..] = sources else {
        return String::new();
    };
    if others.is_empty() {
        return first.to_string();
    }
    let words: Vec<Vec<&str>> = sources.iter().map(|s| s.split(' ').collect()).collect();
    let shared = (0..words[0].len())
        .take_while(|&i| words.iter().all(|w| w.get(i) == words[0].get(i)))
        .count();
    let prefix = words[0][..shared].join(" ");
    let tails: Vec<String> = words.iter().map(|w| w[shared..].join(" ")).collect();
    let full = format!("{prefix} {}", tails.join(", "));
    if full.len() <= room {
        full
    } else {
        prefix.trim_end_matches([',', ';', ':']).to_string()
    }
}

/// Every policy, built in and hosted (`scx:NAME`), with its description.
fn all_policies() -> Vec<(String, &'static str)> {
    colab_policies::POLICIES
        .iter()
        .map(|(n, d)| (n.to_string(), *d))
        .chain(
            colab_scx_host::SCHEDULERS
                .iter()
                .map(|(n, d)| (format!("scx:{n}"), *d)),
        )
        .collect()
}

fn policy_names() -> Vec<String> {
    all_policies().into_iter().map(|(n, _)| n).collect()
}

/// `text` cut into its clauses at the semicolons outside parentheses and
/// backquotes, each clause keeping its `;`.
fn clauses(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut quoted, mut start) = (0i32, false, 0);
    for (i, ch) in text.char_indices() {
        match ch {
            '(' | '[' if !quoted => depth += 1,
            ')' | ']' if !quoted => depth -= 1,
            '`' => quoted = !quoted,
            ';' if depth == 0 && !quoted => {
                out.push(text[start..=i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    if !text[start..].trim().is_empty() {
        out.push(text[start..].trim());
    }
    out
}

/// A description's first clause (up to its first `;` outside parentheses),
/// or its first sentence if that is shorter.
fn summary(text: &str) -> &str {
    let first = clauses(text).first().copied().unwrap_or("");
    let first = first.strip_suffix(';').unwrap_or(first);
    first_sentence(first)
}

/// Up to the first ". " (outside parentheses) that ends a sentence, the
/// full stop dropped.
fn first_sentence(text: &str) -> &str {
    let b = text.as_bytes();
    let mut depth = 0i32;
    for (i, &c) in b.iter().enumerate() {
        match c {
            b'(' => depth += 1,
            b')' => depth -= 1,
            b'.' if depth == 0 && b.get(i + 1) == Some(&b' ') => {
                let word = text[..i].rsplit(' ').next().unwrap_or("");
                let next_upper = text[i + 1..]
                    .trim_start()
                    .starts_with(|c: char| c.is_uppercase());
                if next_upper && !["Fig", "e.g", "i.e", "al", "No", "vs"].contains(&word) {
                    return &text[..i];
                }
            }
            _ => {}
        }
    }
    text.strip_suffix('.').unwrap_or(text)
}

/// The policies with a one-line summary each; those with more to say (their
/// switches) point to `colab list NAME`.
fn policies(width: usize) -> String {
    let out = title(
        "Policies (-p NAME; `colab list NAME` prints one in full, with its switches):",
        width,
    );
    let mut t = Table::new(&["name", "what it is"]);
    for (name, d) in all_policies() {
        let s = summary(d);
        let rest = d[d.find(s).map_or(0, |i| i + s.len())..].trim();
        let more = if rest.trim_matches(['.', ';']).is_empty() {
            String::new()
        } else if rest.contains("KEY=VALUE") || rest.contains(":ARGS") || rest.contains(":WS:WE") {
            format!(" (switches: `colab list {name}`)")
        } else {
            format!(" (more: `colab list {name}`)")
        };
        t.row(vec![name, format!("{s}{more}")]);
    }
    out + &t.render(width)
}

/// ROTA's presets, each as the switches it sets otherwise than `rota`;
/// `below_switches`: under the list of the switches.
fn rota_presets(below_switches: bool, width: usize) -> String {
    use colab_policies::rota::{DEFAULT_FREEZE, PRESETS};
    let pairs = |s: &'static str| -> Vec<(&'static str, &'static str)> {
        s.split(':').filter_map(|kv| kv.split_once('=')).collect()
    };
    let default = PRESETS
        .iter()
        .find(|(n, _)| *n == DEFAULT_FREEZE)
        .map_or_else(Vec::new, |(_, s)| pairs(s));
    let every = if below_switches {
        "every switch above"
    } else {
        "every switch, `colab list rota` lists them"
    };
    let out = title(
        &format!("ROTA's presets (rota@N sets {every}; rota = rota@{DEFAULT_FREEZE}):"),
        width,
    );
    let mut t = Table::new(&[
        "preset",
        &format!("switches set otherwise than rota@{DEFAULT_FREEZE}"),
    ]);
    for (n, spelling) in PRESETS {
        let diff: Vec<String> = pairs(spelling)
            .into_iter()
            .filter(|kv| !default.contains(kv))
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let text = if *n == DEFAULT_FREEZE {
            "(the default: rota)".to_string()
        } else if diff.is_empty() {
            "(none)".to_string()
        } else {
            diff.join(" ")
        };
        t.row(vec![format!("rota@{n}"), text]);
    }
    out + &t.render(width)
}

/// One policy in full (`colab list rota`): its description clause by
/// clause, and for ROTA its switches and presets. `None`: not a policy.
/// A policy with options (`rota@19`, `colab:remote=off`) names its policy.
fn policy(word: &str, width: usize) -> Option<String> {
    let all = all_policies();
    let find = |w: &str| all.iter().find(|(n, _)| n == w);
    let (name, d) = find(word)
        .or_else(|| find(word.split(['@', ':']).next().unwrap_or(word)))
        .or_else(|| {
            // scx:NAME:ARGS
            let mut parts = word.splitn(3, ':');
            let base = format!("{}:{}", parts.next()?, parts.next()?);
            find(&base)
        })?;
    let mut out = title(&format!("Policy {name} (-p {name}):"), width);
    for c in clauses(d) {
        out += &fold_indented(c, "  ", "    ", width);
    }
    if name == "rota" {
        out += "\nROTA's switches (rota[@N]:KEY=VALUE:..., the default's value first):\n";
        for l in colab_policies::rota::options_help().lines() {
            out += &fold_indented(l.trim(), "  ", "      ", width);
        }
        out += "\n";
        out += &rota_presets(true, width);
    }
    // The same scheduler both built in and hosted: say where the other is.
    let twin = match name.strip_prefix("scx:") {
        Some(n) => n.to_string(),
        None => format!("scx:{name}"),
    };
    if let Some((t, td)) = find(&twin) {
        out += "\n";
        out += &fold_indented(
            &format!("See also {t} (`colab list {t}`): {}.", summary(td)),
            "",
            "  ",
            width,
        );
    }
    Some(out)
}

fn models(width: usize) -> String {
    let mut t = Table::new(&["name", "what it is"]);
    for (n, d) in colab_model::BUILTIN_MODELS {
        t.row(vec![n.to_string(), d.to_string()]);
    }
    title(
        "Models (`colab train --show-builtin NAME` prints one):",
        width,
    ) + &t.render(width)
}

/// The trace libraries found where `--traces NAME` looks
/// ([`colab_trace::workloads::library_roots`]), each with its directory.
fn traces(width: usize) -> String {
    let mut out = title(
        &format!(
            "Trace libraries (--traces NAME; from traces/ here, ${}, the source tree):",
            colab_trace::workloads::TRACES_ENV
        ),
        width,
    );
    let mut t = Table::new(&["name", "recorded", "CPUs", "what it holds"]).right_align(&[2]);
    for root in colab_trace::workloads::library_roots() {
        let mut dirs: Vec<_> = std::fs::read_dir(&root)
            .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default();
        dirs.sort();
        for d in dirs.iter().filter(|d| d.join(MANIFEST).is_file()) {
            match Manifest::load(d) {
                Ok(m) => {
                    let mut progs: Vec<&str> = m.trace.iter().map(|e| e.program.as_str()).collect();
                    progs.dedup();
                    t.row(vec![
                        m.library.name.clone(),
                        m.library.recorded.clone(),
                        m.library.cpus.to_string(),
                        format!(
                            "{} recordings of {} programs ({}); {}; in {}",
                            m.trace.len(),
                            progs.len(),
                            progs.join(" "),
                            m.library.source,
                            d.display()
                        ),
                    ]);
                }
                Err(e) => t.row(vec![
                    d.display().to_string(),
                    String::new(),
                    String::new(),
                    format!("unreadable: {e}"),
                ]),
            }
        }
    }
    if t.is_empty() {
        out += "  (none found; `colab validate --keep-traces traces/NAME` records one)\n";
    } else {
        out += &t.render(width);
    }
    out
}

/// A machine file's own description: the first sentence of the comment
/// that opens it, without its long parentheses (sources, quotations).
fn machine_description(toml: &str) -> String {
    let words: Vec<&str> = toml
        .lines()
        .map_while(|l| l.strip_prefix('#'))
        .map(str::trim)
        .collect();
    let text = words.join(" ");
    let first = summary(&text);
    // Drop each top-level "(...)" of more than 30 characters.
    let mut out = String::new();
    let mut group = String::new();
    let mut depth = 0;
    for ch in first.chars() {
        match ch {
            '(' => {
                depth += 1;
                group.push(ch);
            }
            ')' if depth > 0 => {
                depth -= 1;
                group.push(ch);
                if depth == 0 {
                    if group.chars().count() <= 32 {
                        out += &group;
                    }
                    group.clear();
                }
            }
            _ if depth > 0 => group.push(ch),
            _ => out.push(ch),
        }
    }
    out += &group;
    let out = out.split_whitespace().collect::<Vec<_>>().join(" ");
    out.replace(" ,", ",").replace(" :", ":")
}

fn machines(width: usize) -> String {
    let mut out = title(
        "Machines (-t NAME or FILE; `colab topology NAME` describes one):",
        width,
    );
    out += &fold_indented(
        "Any <b>B<s>S name: b big and s little reference cores, one cluster each (2B2S, 2B4S, \
         4B2S, 4B4S, 1B1S, 1B3S, 3B1S, 4B, ...); a topology TOML file (see topologies/); or a \
         named machine, each with what its file says it is:",
        "  ",
        "  ",
        width,
    );
    let mut t = Table::new(&["name", "cores", "core types"]).right_align(&[1]);
    for (name, text) in BUILTIN_MACHINES {
        let (cores, types) = match Topology::from_toml(text, CoreOrder::BigFirst) {
            Ok(topo) => (topo.num_cores().to_string(), cores_per_type(&topo)),
            Err(e) => (String::new(), format!("does not load: {e}")),
        };
        t.row(vec![name.to_string(), cores, types]);
        t.note(machine_description(text));
    }
    out + &t.render(width)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_stop_at_the_first_clause_or_sentence() {
        assert_eq!(summary("A (x; y): b; c"), "A (x; y): b");
        assert_eq!(
            summary("One (Fig. 7) here. Two. Three"),
            "One (Fig. 7) here"
        );
        assert_eq!(
            summary("at 2.36 GHz + 4 at 1.8 GHz."),
            "at 2.36 GHz + 4 at 1.8 GHz"
        );
        assert_eq!(
            clauses("a; b (c; d); `e; f`"),
            ["a;", "b (c; d);", "`e; f`"]
        );
    }

    #[test]
    fn every_named_machine_has_a_description() {
        for (name, text) in BUILTIN_MACHINES {
            let d = machine_description(text);
            assert!(d.len() > 10, "{name}: '{d}'");
        }
    }
}
