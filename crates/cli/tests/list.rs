//! `colab list`: what it lists.

mod common;

use common::ok;

/// The COLAB papers' 17 benchmark models.
const BENCHMARKS: [&str; 17] = colab_campaign::COLAB_BENCHMARKS;

#[test]
fn list_shows_the_benchmarks_the_mixes_and_the_policies() {
    let r = ok(&["list"]);
    let out = &r.stdout;
    // The title, the header row, then a row per benchmark.
    let bench: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("Benchmarks"))
        .skip(2)
        .take_while(|l| !l.trim().is_empty())
        .map(|l| l.split_whitespace().next().unwrap_or(""))
        .collect();
    // The COLAB papers' 17 models, the CAMP / Prop-SP ones (27), sorted.
    for b in BENCHMARKS
        .iter()
        .chain(&["fftw", "blast", "semphy", "libquantum", "lbm"])
    {
        assert!(bench.contains(b), "benchmark {b} not listed:\n{out}");
    }
    assert_eq!(bench.len(), 17 + 27, "benchmark section:\n{out}");
    let mut sorted = bench.clone();
    sorted.sort_unstable();
    assert_eq!(bench, sorted);
    let mixes: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("Mixes"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .map(|l| l.split_whitespace().next().unwrap_or(""))
        .collect();
    for m in [
        "Sync-1", "Sync-4", "NSync-2", "Comm-3", "Comp-4", "Large-4", "2B-1", "2B-10", "4B-1",
        "4B-10",
    ] {
        assert!(mixes.contains(&m), "mix {m} not listed:\n{out}");
    }
    // The scenario programs have their own section; their mixes are mixes.
    let scenarios: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("Scenario programs"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .map(|l| l.split_whitespace().next().unwrap_or(""))
        .collect();
    for p in ["fig1_alpha", "lock_10us_hi", "pipe_slow", "finebar_25us"] {
        assert!(scenarios.contains(&p), "scenario {p} not listed:\n{out}");
    }
    for m in ["Fig1", "Lock-1ms", "Barrier-straggler", "Finebar-4ms"] {
        assert!(mixes.contains(&m), "mix {m} not listed:\n{out}");
    }
    let sync1 = out
        .lines()
        .find(|l| l.trim_start().starts_with("Sync-1 "))
        .expect("Sync-1 line");
    assert!(
        sync1.contains("water_nsquared") && sync1.contains("fmm"),
        "{sync1}"
    );
    for p in colab_campaign::ALL_POLICIES {
        assert!(
            out.lines()
                .skip_while(|l| !l.starts_with("Policies"))
                .any(|l| l.split_whitespace().next() == Some(p)),
            "policy {p} not listed:\n{out}"
        );
    }
}

/// ROTA's switches and presets reach `colab list rota` and `colab sim
/// --help` from their one table, each with its values, and a bad one is
/// refused naming the switches.
#[test]
fn rotas_switches_are_listed_and_in_sim_help() {
    let list = ok(&["list", "rota"]).stdout;
    let help = ok(&["sim", "--help"]).stdout;
    for s in colab_policies::rota::SWITCHES {
        let line = format!("{} = {}: ", s.key, s.values().join("|"));
        assert!(list.contains(&line), "colab list rota lacks '{line}'");
        assert!(help.contains(&line), "colab sim --help lacks '{line}'");
    }
    // Each preset's row (and its continuation lines) gives the switches it
    // sets otherwise than the default: over the default's, its spelling.
    let pairs = |s: &str| -> Vec<(String, String)> {
        s.split([':', ' '])
            .filter_map(|kv| kv.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    let default = colab_policies::rota::PRESETS
        .iter()
        .find(|(n, _)| *n == colab_policies::rota::DEFAULT_FREEZE)
        .map(|(_, s)| pairs(s))
        .expect("the default preset");
    let lines: Vec<&str> = list
        .lines()
        .skip_while(|l| !l.starts_with("ROTA's presets"))
        .collect();
    for (n, spelling) in colab_policies::rota::PRESETS {
        let name = format!("rota@{n}");
        let at = lines
            .iter()
            .position(|l| l.split_whitespace().next() == Some(name.as_str()))
            .unwrap_or_else(|| panic!("no row for {name}:\n{list}"));
        let mut row = lines[at]
            .trim_start()
            .trim_start_matches(name.as_str())
            .to_string();
        for l in lines[at + 1..].iter().take_while(|l| l.starts_with("    ")) {
            row += " ";
            row += l;
        }
        let mut set = default.clone();
        for (k, v) in pairs(&row) {
            let slot = set.iter_mut().find(|(dk, _)| *dk == k).expect("a switch");
            slot.1 = v;
        }
        assert_eq!(set, pairs(spelling), "{name}'s row: {row}");
        assert!(
            help.contains(&format!("rota@{n}")),
            "rota@{n} in sim --help"
        );
    }
    common::fails(
        &["sim", "Sync-1", "-p", "rota:floor=on"],
        &["unknown option 'floor'", "rotate, remote"],
    );
}
