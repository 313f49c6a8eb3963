//! Behaviour fingerprints: every policy run over one small fixed grid
//! ([`WORKLOADS`] x [`MACHINES`] x both core orders, seed [`SEED`], the
//! default predictor), its results hashed, so that no change to any
//! policy's results goes in unseen.
//!
//! A fingerprint is keyed by a label and derived only from results: the
//! FNV-1a hash of the serde JSON of every [`SimResult`] of the grid, in grid
//! order, plus a few summary numbers (geomean H_ANTT, makespan and energy,
//! total events) that say by how much a policy moved. The checked-in file
//! ([`DEFAULT_FILE`], one line per label) is what `crates/campaign/tests/
//! fingerprints.rs` compares against; `colab fingerprint` prints the table
//! and what moved, and `colab fingerprint --bless` rewrites the file.

use crate::model_predictor::{self, Predictor, DEFAULT_PREDICTOR};
use crate::ROTA_THIRD_FREEZE;
use anyhow::{anyhow, bail, Context, Result};
use colab_core::{CoreOrder, Nanos, Policy, Topology};
use colab_sim::{simulate, PredictorKind, SimConfig, SimResult};
use colab_workload::{Library, Workload};
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The built-in workloads of the grid, each with the completions every
/// program is run to (`None`: once; see `SimConfig::restart_until`): the
/// three the simulator's single hash covered before (Sync-2: dedup's
/// pipeline and fluidanimate's barriers; Comm-4: four communicating
/// programs; ferret alone, a pipeline), a mix of more threads than any of
/// the machines has cores (Large-1: radix and ocean_cp), a contended mutex
/// (the scenario Lock-100us), a steady load (NSync-2, each program
/// restarted until each has completed three times, as the CAMP and Prop-SP
/// studies run theirs) and one of CAMP's mixes of single-threaded and
/// parallel programs (on the others CAMP, SFD and RR schedule alike; on
/// this one each differs).
pub const WORKLOADS: [(&str, Option<u32>); 7] = [
    ("Sync-2", None),
    ("Comm-4", None),
    ("ferret", None),
    ("Large-1", None),
    ("Lock-100us", None),
    ("NSync-2", Some(3)),
    ("CAMP-3STCI-1STMI-1PSCI", None),
];
/// The machines of the grid: the smallest of the papers', more little
/// cores than big, and the largest.
pub const MACHINES: [&str; 3] = ["2B2S", "2B4S", "4B4S"];
/// The seed of every run.
pub const SEED: u64 = 3;
/// The file of fingerprints, relative to the repository root.
pub const DEFAULT_FILE: &str = "crates/campaign/tests/fingerprints.tsv";
/// The command that rewrites [`DEFAULT_FILE`] (run from the repository root).
pub const BLESS_COMMAND: &str = "cargo run --release -p colab-cli -- fingerprint --bless";
/// The label of [`ROTA_THIRD_FREEZE`].
pub const ROTA_THIRD_FREEZE_LABEL: &str = "rota-third-freeze";

/// One policy's fingerprint.
#[derive(Clone, Debug, PartialEq)]
pub struct Fingerprint {
    pub label: String,
    /// FNV-1a 64 of the JSON of every result of the grid, in grid order.
    pub hash: u64,
    /// Runs of the grid.
    pub runs: u32,
    /// Geomean over the runs of each run's H_ANTT (against each program
    /// alone on the all-big machine under CFS, as campaigns measure it).
    pub h_antt: f64,
    /// Geomean over the runs of the makespan, milliseconds.
    pub makespan_ms: f64,
    /// Geomean over the runs of the energy, joules.
    pub energy_j: f64,
    /// Simulator events over all runs.
    pub events: u64,
}

/// The policies fingerprinted, as (label, spelling): every name of
/// [`colab_policies::POLICIES`] under its own name, ROTA's third freeze as
/// [`ROTA_THIRD_FREEZE_LABEL`], then `extra`. A spelling may end in
/// `@PREDICTOR` (`colab@oracle`); without, the default predictor. A label
/// given twice is an error.
pub fn policies(extra: &[(&str, &str)]) -> Result<Vec<(String, String)>> {
    let mut v: Vec<(String, String)> = colab_policies::POLICIES
        .iter()
        .map(|(name, _)| (name.to_string(), name.to_string()))
        .collect();
    v.push((
        ROTA_THIRD_FREEZE_LABEL.to_string(),
        ROTA_THIRD_FREEZE.to_string(),
    ));
    v.extend(extra.iter().map(|(l, s)| (l.to_string(), s.to_string())));
    let mut seen = BTreeMap::new();
    for (label, spelling) in &v {
        if label.is_empty() || label.contains(char::is_whitespace) || label.starts_with('#') {
            bail!("fingerprint label '{label}' ({spelling}): a label is one word, not starting with #");
        }
        if let Some(first) = seen.insert(label.as_str(), spelling.as_str()) {
            bail!("fingerprint label '{label}' is given twice ({first} and {spelling})");
        }
    }
    Ok(v)
}

/// Predictors other than the default, on one policy that reads them: the
/// oracle and the noisy predictor (the paper's model error), whose
/// results the simulator's single hash covered before these fingerprints.
pub const PREDICTOR_VARIANTS: [(&str, &str); 2] = [
    ("colab@oracle", "colab@oracle"),
    ("colab@noisy", "colab@noisy"),
];

/// Extra (label, spelling) pairs fingerprinted beside the built-in
/// policies: the sched_ext schedulers the simulator hosts.
pub const EXTRA_POLICIES: &[(&str, &str)] = &[("scx:colab", "scx:colab")];

/// ROTA's presets other than the default and the third freeze (which
/// [`policies`] covers), as `rota@N`: each must keep meaning what its
/// results were measured with.
pub fn rota_presets() -> Vec<String> {
    colab_policies::rota::PRESETS
        .iter()
        .map(|(n, _)| format!("rota@{n}"))
        .filter(|s| s != ROTA_THIRD_FREEZE)
        .filter(|s| *s != format!("rota@{}", colab_policies::rota::DEFAULT_FREEZE))
        .collect()
}

/// Everything the test and `colab fingerprint` fingerprint: [`policies`]
/// of [`PREDICTOR_VARIANTS`], [`EXTRA_POLICIES`] and [`rota_presets`].
pub fn all_policies() -> Result<Vec<(String, String)>> {
    let presets = rota_presets();
    let extra: Vec<(&str, &str)> = PREDICTOR_VARIANTS
        .iter()
        .chain(EXTRA_POLICIES)
        .copied()
        .chain(presets.iter().map(|s| (s.as_str(), s.as_str())))
        .collect();
    policies(&extra)
}

/// FNV-1a, 64 bits: the same hash on every platform and toolchain.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// A spelling's policy and what it reads predictions from on `topo`.
fn policy_on(spelling: &str, topo: &Topology) -> Result<(Box<dyn Policy>, PredictorKind)> {
    let (base, label) = model_predictor::split_predictor(spelling);
    let label = label.unwrap_or(DEFAULT_PREDICTOR);
    let pred: Predictor = model_predictor::parse_predictor(label)
        .map_err(|e| model_predictor::label_error(spelling, label, e))?;
    let pol = crate::policy_by_name(base)?;
    let kind = pred
        .for_machine(pol.as_ref(), topo)
        .map_err(|problem| anyhow!("policy '{spelling}': {problem}"))?;
    Ok((pol, kind))
}

/// One run of the grid.
struct Cell {
    workload: usize,
    machine: &'static str,
    order: CoreOrder,
}

/// The grid in its fixed order: workload, machine, core order.
fn cells() -> Vec<Cell> {
    let mut v = Vec::new();
    for workload in 0..WORKLOADS.len() {
        for machine in MACHINES {
            for order in CoreOrder::BOTH {
                v.push(Cell {
                    workload,
                    machine,
                    order,
                });
            }
        }
    }
    v
}

/// The grid's workloads, built in.
fn workloads() -> Result<Vec<Workload>> {
    let lib = Library::builtin();
    WORKLOADS
        .iter()
        .map(|&(n, _)| {
            lib.mix(n)
                .or_else(|_| lib.single(n, None))
                .with_context(|| format!("the fingerprint grid's workload {n}"))
        })
        .collect()
}

fn config(predictor: PredictorKind) -> SimConfig {
    SimConfig {
        seed: SEED,
        predictor,
        ..SimConfig::default()
    }
}

/// Fingerprints of `policies` (label, spelling), in their order; the runs
/// go in parallel (rayon).
pub fn compute(policies: &[(String, String)]) -> Result<Vec<Fingerprint>> {
    let ws = workloads()?;
    let cells = cells();
    // Predictors first, outside the parallel runs: a machine's counter
    // model is trained here, once.
    let mut kinds: BTreeMap<(usize, &str), PredictorKind> = BTreeMap::new();
    for (pi, (_, spelling)) in policies.iter().enumerate() {
        for m in MACHINES {
            let topo = Topology::named(m, CoreOrder::BigFirst)?;
            let (_, kind) = policy_on(spelling, &topo)?;
            let missing = model_predictor::uncovered_core_types(&kind, &topo);
            if !missing.is_empty() {
                bail!(
                    "policy '{spelling}': the model has no entry for core type(s) {} of {m}",
                    missing.join(", ")
                );
            }
            kinds.insert((pi, m), kind);
        }
    }
    // T_SB of every program of every workload on every machine: alone on
    // the all-big machine under CFS, big-first (for H_ANTT, and for a
    // policy that reads program lengths).
    let mut sb_jobs: Vec<(usize, &str, usize)> = Vec::new();
    for (w, wl) in ws.iter().enumerate() {
        for m in MACHINES {
            sb_jobs.extend((0..wl.programs.len()).map(|p| (w, m, p)));
        }
    }
    let sb: Vec<Nanos> = sb_jobs
        .par_iter()
        .map(|&(w, m, p)| -> Result<Nanos> {
            let topo = Topology::named(m, CoreOrder::BigFirst)?.all_fastest();
            let alone = Workload::alone(&ws[w].programs[p]);
            let mut cfs = colab_policies::by_name("cfs")?;
            let r = simulate(&alone, &topo, cfs.as_mut(), &config(PredictorKind::Oracle))
                .with_context(|| format!("{} alone on {} (a baseline)", alone.name, topo.name))?;
            Ok(r.programs[0].turnaround_ns)
        })
        .collect::<Result<_>>()?;
    let t_sb: BTreeMap<(usize, &str), Vec<Nanos>> = {
        let mut t: BTreeMap<(usize, &str), Vec<Nanos>> = BTreeMap::new();
        for (&(w, m, _), &ns) in sb_jobs.iter().zip(&sb) {
            t.entry((w, m)).or_default().push(ns);
        }
        t
    };
    let jobs: Vec<(usize, &Cell)> = (0..policies.len())
        .flat_map(|p| cells.iter().map(move |c| (p, c)))
        .collect();
    let results: Vec<SimResult> = jobs
        .par_iter()
        .map(|&(pi, c)| -> Result<SimResult> {
            let (label, spelling) = &policies[pi];
            let w = &ws[c.workload];
            let topo = Topology::named(c.machine, c.order)?;
            let (mut pol, _) = policy_on(spelling, &topo)?;
            if pol.wants_oracle_lengths() {
                pol.oracle_program_lengths(&t_sb[&(c.workload, c.machine)]);
            }
            let cfg = SimConfig {
                restart_until: WORKLOADS[c.workload].1,
                ..config(kinds[&(pi, c.machine)].clone())
            };
            simulate(w, &topo, pol.as_mut(), &cfg).with_context(|| {
                format!(
                    "{label} ({spelling}): {} on {} ({})",
                    w.name,
                    c.machine,
                    c.order.label()
                )
            })
        })
        .collect::<Result<_>>()?;
    let mut out = Vec::new();
    for (pi, (label, _)) in policies.iter().enumerate() {
        let mine = &results[pi * cells.len()..(pi + 1) * cells.len()];
        out.push(summarise(label, &cells, &t_sb, mine)?);
    }
    Ok(out)
}

/// One policy's fingerprint from its results (`results[i]` is the run of
/// `cells[i]`).
fn summarise(
    label: &str,
    cells: &[Cell],
    t_sb: &BTreeMap<(usize, &str), Vec<Nanos>>,
    results: &[SimResult],
) -> Result<Fingerprint> {
    let mut json = Vec::new();
    let (mut h_antt, mut makespan, mut energy) = (Vec::new(), Vec::new(), Vec::new());
    let mut events = 0;
    for (c, r) in cells.iter().zip(results) {
        serde_json::to_writer(&mut json, r)?;
        json.push(b'\n');
        let pairs: Vec<(f64, f64)> = r
            .programs
            .iter()
            .zip(&t_sb[&(c.workload, c.machine)])
            .map(|(p, &sb)| (p.turnaround_ns as f64, sb as f64))
            .collect();
        h_antt.push(colab_metrics::h_antt(&pairs)?);
        makespan.push(r.makespan_ns as f64 / 1e6);
        energy.push(r.energy_j);
        events += r.stats.events;
    }
    Ok(Fingerprint {
        label: label.to_string(),
        hash: fnv1a(&json),
        runs: results.len() as u32,
        h_antt: colab_metrics::geomean(&h_antt)?,
        makespan_ms: colab_metrics::geomean(&makespan)?,
        energy_j: colab_metrics::geomean(&energy)?,
        events,
    })
}

/// The columns of the file, in order.
const COLUMNS: [&str; 7] = [
    "label",
    "hash",
    "runs",
    "h_antt",
    "makespan_ms",
    "energy_j",
    "events",
];

/// A fingerprint's line of the file (summary numbers as the file keeps them).
fn line(f: &Fingerprint) -> String {
    format!(
        "{}\t{:016x}\t{}\t{:.6}\t{:.4}\t{:.6}\t{}",
        f.label, f.hash, f.runs, f.h_antt, f.makespan_ms, f.energy_j, f.events
    )
}

/// The grid's workloads in words: `Sync-2, ..., NSync-2 (each program to 3 completions)`.
pub fn grid_workloads() -> String {
    WORKLOADS
        .iter()
        .map(|(n, r)| match r {
            Some(r) => format!("{n} (each program run to {r} completions)"),
            None => n.to_string(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The file's text for `fps`, one line per label, in their order.
pub fn render(fps: &[Fingerprint]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# Behaviour fingerprints, one per policy (crates/campaign/src/fingerprint.rs):\n\
         # the FNV-1a 64 hash of every result of the grid {} x {} x both core orders,\n\
         # seed {SEED}, default predictor; the summary numbers are geomeans over its runs.\n\
         # Do not edit by hand: `{BLESS_COMMAND}` rewrites it.",
        grid_workloads(),
        MACHINES.join(", "),
    );
    s.push_str(&COLUMNS.join("\t"));
    s.push('\n');
    for f in fps {
        s.push_str(&line(f));
        s.push('\n');
    }
    s
}

/// Reads a file [`render`] wrote (lines starting with `#` are comments).
pub fn parse(text: &str) -> Result<Vec<Fingerprint>> {
    let mut out: Vec<Fingerprint> = Vec::new();
    let mut header = false;
    for (i, l) in text.lines().enumerate() {
        let n = i + 1;
        if l.starts_with('#') || l.trim().is_empty() {
            continue;
        }
        let cols: Vec<&str> = l.split('\t').collect();
        if !header {
            if cols != COLUMNS {
                bail!(
                    "line {n}: expected the header `{}` (tab-separated), found `{l}`",
                    COLUMNS.join(" ")
                );
            }
            header = true;
            continue;
        }
        if cols.len() != COLUMNS.len() {
            bail!(
                "line {n}: expected {} tab-separated columns, found {}",
                COLUMNS.len(),
                cols.len()
            );
        }
        let num = |k: usize| -> Result<f64> {
            cols[k]
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| anyhow!("line {n}: {} '{}' is not a number", COLUMNS[k], cols[k]))
        };
        let int = |k: usize| -> Result<u64> {
            cols[k]
                .parse::<u64>()
                .map_err(|_| anyhow!("line {n}: {} '{}' is not a count", COLUMNS[k], cols[k]))
        };
        let f = Fingerprint {
            label: cols[0].to_string(),
            hash: u64::from_str_radix(cols[1], 16)
                .map_err(|_| anyhow!("line {n}: hash '{}' is not 16 hex digits", cols[1]))?,
            runs: int(2)? as u32,
            h_antt: num(3)?,
            makespan_ms: num(4)?,
            energy_j: num(5)?,
            events: int(6)?,
        };
        if cols[1].len() != 16 {
            bail!("line {n}: hash '{}' is not 16 hex digits", cols[1]);
        }
        if out.iter().any(|o| o.label == f.label) {
            bail!("line {n}: label '{}' appears twice", f.label);
        }
        out.push(f);
    }
    if !header {
        bail!("no header line (`{}`)", COLUMNS.join(" "));
    }
    Ok(out)
}

/// Reads and parses the file at `path`.
pub fn read(path: &Path) -> Result<Vec<Fingerprint>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading the fingerprint file {}", path.display()))?;
    parse(&text).with_context(|| format!("{}", path.display()))
}

/// [`DEFAULT_FILE`] under `root`, if it is there.
pub fn find_default(root: &Path) -> Option<PathBuf> {
    let p = root.join(DEFAULT_FILE);
    p.is_file().then_some(p)
}

/// Computed fingerprints against a file's.
#[derive(Clone, Debug, Default)]
pub struct Comparison {
    /// (file's, computed) of every label whose hash differs.
    pub moved: Vec<(Fingerprint, Fingerprint)>,
    /// Labels computed but not in the file.
    pub not_in_file: Vec<String>,
    /// Labels in the file with no policy.
    pub no_policy: Vec<String>,
    /// Labels whose hash is the file's.
    pub unchanged: usize,
}

/// Compares `computed` with `file`, label by label.
pub fn compare(file: &[Fingerprint], computed: &[Fingerprint]) -> Comparison {
    let mut c = Comparison::default();
    for f in computed {
        match file.iter().find(|o| o.label == f.label) {
            None => c.not_in_file.push(f.label.clone()),
            Some(o) if o.hash != f.hash => c.moved.push((o.clone(), f.clone())),
            Some(_) => c.unchanged += 1,
        }
    }
    c.no_policy = file
        .iter()
        .filter(|o| !computed.iter().any(|f| f.label == o.label))
        .map(|o| o.label.clone())
        .collect();
    c
}

/// `old -> new (+x.xx%)` of one summary number.
fn change(name: &str, old: f64, new: f64, digits: usize) -> String {
    let rel = if old != 0.0 {
        format!("{:+.2}%", (new / old - 1.0) * 100.0)
    } else {
        "new".to_string()
    };
    format!("{name} {old:.digits$} -> {new:.digits$} ({rel})")
}

/// How one policy moved, in words.
pub fn describe_move(old: &Fingerprint, new: &Fingerprint) -> String {
    // Compare at the file's precision: the file's numbers are rounded.
    let new = parse(&render(std::slice::from_ref(new)))
        .ok()
        .and_then(|v| v.into_iter().next())
        .unwrap_or_else(|| new.clone());
    let mut s = format!(
        "{}: hash {:016x} -> {:016x}; {}, {}, {}, events {} -> {} ({:+.2}%)",
        new.label,
        old.hash,
        new.hash,
        change("H_ANTT", old.h_antt, new.h_antt, 6),
        change("makespan_ms", old.makespan_ms, new.makespan_ms, 4),
        change("energy_j", old.energy_j, new.energy_j, 6),
        old.events,
        new.events,
        (new.events as f64 / old.events.max(1) as f64 - 1.0) * 100.0,
    );
    if old.runs != new.runs {
        let _ = write!(s, "; runs {} -> {} (the grid changed)", old.runs, new.runs);
    } else if (old.h_antt, old.makespan_ms, old.energy_j, old.events)
        == (new.h_antt, new.makespan_ms, new.energy_j, new.events)
    {
        s.push_str(" (the summary numbers are the same: a change below their precision)");
    }
    s
}

impl Comparison {
    /// Nothing moved, nothing missing.
    pub fn is_clean(&self) -> bool {
        self.moved.is_empty() && self.not_in_file.is_empty() && self.no_policy.is_empty()
    }

    /// Every difference, one line each (empty when clean).
    pub fn describe(&self) -> String {
        let mut s = String::new();
        if !self.moved.is_empty() {
            let _ = writeln!(s, "policies that moved: {}", self.moved.len());
            for (o, n) in &self.moved {
                let _ = writeln!(s, "  {}", describe_move(o, n));
            }
        }
        for l in &self.not_in_file {
            let _ = writeln!(s, "policy '{l}' has no fingerprint in the file");
        }
        for l in &self.no_policy {
            let _ = writeln!(
                s,
                "the file has a fingerprint for '{l}', which is no policy fingerprinted"
            );
        }
        s
    }
}

/// The fingerprints as a table for people, with the groups of labels whose
/// results are identical on the grid.
pub fn table(fps: &[Fingerprint]) -> String {
    let width = fps.iter().map(|f| f.label.len()).max().unwrap_or(5).max(5);
    let mut s = format!(
        "{:<width$}  {:<16}  {:>4}  {:>9}  {:>11}  {:>9}  {:>10}\n",
        "label", "hash", "runs", "H_ANTT", "makespan_ms", "energy_j", "events"
    );
    for f in fps {
        let _ = writeln!(
            s,
            "{:<width$}  {:016x}  {:>4}  {:>9.6}  {:>11.4}  {:>9.6}  {:>10}",
            f.label, f.hash, f.runs, f.h_antt, f.makespan_ms, f.energy_j, f.events
        );
    }
    for group in identical(fps) {
        let _ = writeln!(s, "identical results on this grid: {}", group.join(", "));
    }
    s
}

/// Groups of two or more labels with the same hash.
pub fn identical(fps: &[Fingerprint]) -> Vec<Vec<String>> {
    let mut by_hash: BTreeMap<u64, Vec<String>> = BTreeMap::new();
    for f in fps {
        by_hash.entry(f.hash).or_default().push(f.label.clone());
    }
    let mut groups: Vec<Vec<String>> = by_hash.into_values().filter(|g| g.len() > 1).collect();
    groups.sort();
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fp(label: &str, hash: u64) -> Fingerprint {
        Fingerprint {
            label: label.into(),
            hash,
            runs: 24,
            h_antt: 1.5,
            makespan_ms: 100.0,
            energy_j: 2.0,
            events: 1000,
        }
    }

    #[test]
    fn fnv1a_is_the_published_function() {
        // Test vectors of FNV-1a 64.
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn the_file_round_trips_and_bad_lines_are_named() {
        let fps = vec![fp("cfs", 1), fp("rota", u64::MAX)];
        assert_eq!(parse(&render(&fps)).unwrap(), fps);
        let bad = render(&fps).replace("ffffffffffffffff", "xyz");
        let e = parse(&bad).unwrap_err().to_string();
        assert!(e.contains("hash 'xyz'"), "{e}");
        let twice = format!("{}cfs\t{}\n", render(&fps), &line(&fp("cfs", 1))[4..]);
        let e = parse(&twice).unwrap_err().to_string();
        assert!(e.contains("'cfs' appears twice"), "{e}");
    }

    #[test]
    fn compare_names_what_moved_and_what_is_missing() {
        let file = vec![fp("cfs", 1), fp("wash", 2), fp("gone", 3), fp("rr", 5)];
        let mut wash = fp("wash", 9);
        wash.h_antt = 1.65;
        // rr's hash moved, its summary numbers did not.
        let now = vec![fp("cfs", 1), wash, fp("new", 4), fp("rr", 6)];
        let c = compare(&file, &now);
        assert!(!c.is_clean());
        assert_eq!(c.unchanged, 1);
        let d = c.describe();
        assert!(d.contains("policies that moved: 2"), "{d}");
        assert!(
            d.contains("rr: hash 0000000000000005 -> 0000000000000006"),
            "{d}"
        );
        assert!(d.contains("the summary numbers are the same"), "{d}");
        assert!(
            d.contains("wash: hash 0000000000000002 -> 0000000000000009"),
            "{d}"
        );
        assert!(d.contains("H_ANTT 1.500000 -> 1.650000 (+10.00%)"), "{d}");
        assert!(d.contains("policy 'new' has no fingerprint"), "{d}");
        assert!(d.contains("fingerprint for 'gone'"), "{d}");
        assert!(compare(&file, &file).is_clean());
    }

    #[test]
    fn labels_are_unique_and_cover_every_policy() {
        let v = policies(&[("scx:colab", "colab")]).unwrap();
        assert_eq!(v.len(), colab_policies::POLICIES.len() + 2);
        assert!(v
            .iter()
            .any(|(l, s)| l == ROTA_THIRD_FREEZE_LABEL && s == ROTA_THIRD_FREEZE));
        let e = policies(&[("cfs", "eevdf")]).unwrap_err().to_string();
        assert!(e.contains("'cfs' is given twice"), "{e}");
    }
}
