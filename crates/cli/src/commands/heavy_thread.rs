//! `colab heavy-thread`: the heavy-thread scenario's tables
//! (book/src/results/heavy-thread.md) from the programs.csv of a scenario
//! study (`colab reproduce scenarios --out DIR`).
//!
//! Per machine the Heavy-thread mix ran on, one row per policy (the
//! question's policies first, in [`FIRST`]'s order, then the rest in the
//! order they first appear in the file), each a mean over that machine's
//! runs (core orders x seeds):
//!
//! - heavy_main's fast share: `fast_cpu_ns / cpu_ns`, its CPU time on the
//!   machine's fastest core type over its CPU time; mean and the lowest run;
//! - its progress rate: `t_sb_ns / turnaround_ns`, its work per unit of wall
//!   time relative to running alone on a fast core (1 / h_ntt); mean and
//!   lowest run;
//! - each light program's extra time per period: `(turnaround_ns - t_sb_ns)`
//!   over its periods per thread, in us. A light program ends when its last
//!   thread does, so this is the mean delay per wake-up (waiting for a core,
//!   and a burst run slower than on a fast core) of its slowest thread.
//!
//! The runs counted "on fast cores" are those whose heavy thread had at
//! least 90% of its CPU time there (issue 49's quality bar for scx_colab).
//! A `note:` line follows the tables for each run whose heavy thread ended
//! after a light program.
//!
//! The computation is pure: [`read_rows`] (CSV text to rows), [`tables`]
//! (rows to tables) and [`render`] / [`notes`] (tables to text).

use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};

pub const ABOUT: &str =
    "Print the heavy-thread scenario's tables from a scenario study's programs.csv (for maintainers).";

pub const EXAMPLES: &str = "\
Examples:
  colab reproduce scenarios --policies cfs,eevdf,rota,scx:colab --out reports/heavy-thread
  colab heavy-thread reports/heavy-thread/programs.csv";

#[derive(clap::Args)]
pub struct HeavyThreadArgs {
    /// The programs.csv of a `colab reproduce scenarios` run (one that ran
    /// the Heavy-thread mix).
    #[arg(value_name = "DIR/programs.csv")]
    programs: PathBuf,
}

pub fn run(a: HeavyThreadArgs) -> Result<()> {
    print!("{}", report(&a.programs)?);
    Ok(())
}

/// What the command prints for `path`: the tables, then the notes.
pub fn report(path: &Path) -> Result<String> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read", path.display()))?;
    let rows = read_rows(&text).with_context(|| format!("{}", path.display()))?;
    let (machines, late) = tables(&rows).with_context(|| format!("{}", path.display()))?;
    if machines.is_empty() {
        bail!("{}: no run of {MIX}", path.display());
    }
    Ok(render(&machines) + &notes(&late))
}

/// The scenario's mix.
pub const MIX: &str = "Heavy-thread";
/// Its heavy program.
pub const HEAVY: &str = "heavy_main";
/// Its light programs with their periods per thread (their loop counts in
/// workloads/scenarios/light_*.toml).
pub const LIGHT: [(&str, u32); 3] = [("light_audio", 1900), ("light_ui", 950), ("light_net", 384)];
/// The fast share a run must reach to count as kept on fast cores.
pub const BAR: f64 = 0.9;
/// Rows first in this order (the question's policies), then the rest as the
/// file has them.
pub const FIRST: [&str; 8] = [
    "eevdf",
    "cfs",
    "lavd",
    "bpfland",
    "scx:bpfland",
    "rota",
    "rota@3",
    "scx:colab",
];

/// The columns read from programs.csv.
const COLUMNS: [&str; 10] = [
    "workload",
    "config",
    "order",
    "seed",
    "policy",
    "program",
    "turnaround_ns",
    "t_sb_ns",
    "cpu_ns",
    "fast_cpu_ns",
];

/// One line of programs.csv: one program of one run.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub workload: String,
    pub config: String,
    pub order: String,
    pub seed: String,
    pub policy: String,
    pub program: String,
    pub turnaround_ns: i64,
    pub t_sb_ns: i64,
    pub cpu_ns: i64,
    pub fast_cpu_ns: i64,
}

/// The rows of programs.csv's text that belong to [`MIX`] (the other mixes'
/// numbers are not read).
pub fn read_rows(text: &str) -> Result<Vec<Row>> {
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let header = r.headers().context("cannot read the header line")?.clone();
    if header.is_empty() {
        bail!("empty: no header line");
    }
    let mut col = [0; COLUMNS.len()];
    for (c, name) in col.iter_mut().zip(COLUMNS) {
        *c = header.iter().position(|h| h == name).with_context(|| {
            format!(
                "no `{name}` column (its columns: {})",
                header.iter().collect::<Vec<_>>().join(", ")
            )
        })?;
    }
    let mut rows = Vec::new();
    for (i, rec) in r.records().enumerate() {
        let line = i + 2;
        let rec = rec.with_context(|| format!("line {line}"))?;
        let field = |k: usize| -> Result<&str> {
            rec.get(col[k])
                .with_context(|| format!("line {line}: no `{}` field", COLUMNS[k]))
        };
        if field(0)? != MIX {
            continue;
        }
        let number = |k: usize| -> Result<i64> {
            let v = field(k)?;
            v.parse().with_context(|| {
                format!("line {line}: `{}` is {v:?}, not a whole number", COLUMNS[k])
            })
        };
        rows.push(Row {
            workload: field(0)?.to_string(),
            config: field(1)?.to_string(),
            order: field(2)?.to_string(),
            seed: field(3)?.to_string(),
            policy: field(4)?.to_string(),
            program: field(5)?.to_string(),
            turnaround_ns: number(6)?,
            t_sb_ns: number(7)?,
            cpu_ns: number(8)?,
            fast_cpu_ns: number(9)?,
        });
    }
    Ok(rows)
}

/// One policy's runs on one machine, each list in the runs' order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Cell {
    /// The heavy thread's fast share per run.
    pub share: Vec<f64>,
    /// Its progress rate per run.
    pub progress: Vec<f64>,
    /// Each light program's ([`LIGHT`]'s order) extra us per period per run.
    pub light: [Vec<f64>; 3],
}

/// A machine's policies in the order they first appear.
#[derive(Clone, Debug, PartialEq)]
pub struct Machine {
    pub config: String,
    pub policies: Vec<(String, Cell)>,
}

/// A run whose heavy thread ended after one of its light programs.
#[derive(Clone, Debug, PartialEq)]
pub struct Late {
    pub config: String,
    pub policy: String,
    pub order: String,
    pub seed: String,
    pub light: &'static str,
}

/// The machines (in the order they first appear) with their policies' runs,
/// and the runs whose heavy thread outlived a light program. Rows of other
/// mixes are skipped; a run (machine, policy, order, seed) must have every
/// program of the mix.
pub fn tables(rows: &[Row]) -> Result<(Vec<Machine>, Vec<Late>)> {
    // The runs in the order they first appear, each with its programs (a
    // program seen twice keeps its place and its last line).
    type Key<'a> = (&'a str, &'a str, &'a str, &'a str);
    let mut runs: Vec<(Key, Vec<&Row>)> = Vec::new();
    for r in rows.iter().filter(|r| r.workload == MIX) {
        let key = (&*r.config, &*r.policy, &*r.order, &*r.seed);
        let i = match runs.iter().position(|(k, _)| *k == key) {
            Some(i) => i,
            None => {
                runs.push((key, Vec::new()));
                runs.len() - 1
            }
        };
        let progs = &mut runs[i].1;
        match progs.iter_mut().find(|p| p.program == r.program) {
            Some(p) => *p = r,
            None => progs.push(r),
        }
    }
    let mut out: Vec<Machine> = Vec::new();
    let mut late = Vec::new();
    for ((config, policy, order, seed), progs) in &runs {
        let get = |name: &str| -> Result<&Row> {
            progs.iter().copied().find(|p| p.program == name).with_context(|| {
                format!("the run of {MIX} on {config} under {policy} ({order}, seed {seed}) has no {name} line")
            })
        };
        let h = get(HEAVY)?;
        let m = match out.iter().position(|m| m.config == *config) {
            Some(m) => m,
            None => {
                out.push(Machine {
                    config: config.to_string(),
                    policies: Vec::new(),
                });
                out.len() - 1
            }
        };
        let policies = &mut out[m].policies;
        let c = match policies.iter().position(|(p, _)| p == policy) {
            Some(c) => c,
            None => {
                policies.push((policy.to_string(), Cell::default()));
                policies.len() - 1
            }
        };
        let cell = &mut policies[c].1;
        let ratio = |num: i64, den: i64, what: &str| -> Result<f64> {
            if den == 0 {
                bail!("{HEAVY}'s {what} is 0 in the run on {config} under {policy} ({order}, seed {seed})");
            }
            Ok(num as f64 / den as f64)
        };
        cell.share.push(ratio(h.fast_cpu_ns, h.cpu_ns, "cpu_ns")?);
        cell.progress
            .push(ratio(h.t_sb_ns, h.turnaround_ns, "turnaround_ns")?);
        for (k, (name, periods)) in LIGHT.into_iter().enumerate() {
            let p = get(name)?;
            let extra_ns = p.turnaround_ns - p.t_sb_ns;
            cell.light[k].push(extra_ns as f64 / f64::from(periods) / 1e3);
            if h.turnaround_ns > p.turnaround_ns {
                late.push(Late {
                    config: config.to_string(),
                    policy: policy.to_string(),
                    order: order.to_string(),
                    seed: seed.to_string(),
                    light: name,
                });
            }
        }
    }
    Ok((out, late))
}

/// The mean, summed left to right (as the Python script this command
/// replaced did under Python 3.11).
fn mean(xs: &[f64]) -> f64 {
    xs.iter().fold(0.0, |s, x| s + x) / xs.len() as f64
}

fn min(xs: &[f64]) -> f64 {
    xs.iter().copied().fold(f64::INFINITY, f64::min)
}

/// `x` as a percentage with one decimal (Python's `{x:.1%}`).
fn pct(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

/// The tables: per machine a heading, a sentence and one row per policy,
/// each followed by a blank line; then one more newline.
pub fn render(machines: &[Machine]) -> String {
    let mut lines: Vec<String> = Vec::new();
    for m in machines {
        let n = m.policies.first().map_or(0, |(_, c)| c.share.len());
        lines.push(format!("### {}", m.config));
        lines.push(String::new());
        lines.push(format!(
            "Mean over {n} runs (lowest run in parentheses); light programs' extra time per \
             period in us (audio / ui / net)."
        ));
        lines.push(String::new());
        lines.push(format!(
            "| policy | heavy thread's fast share | runs at {:.0}% or more | its progress rate \
             | light: extra us per period |",
            BAR * 100.0
        ));
        lines.push("|---|---|---|---|---|".to_string());
        let mut ranked: Vec<&(String, Cell)> = m.policies.iter().collect();
        ranked.sort_by_key(|(p, _)| FIRST.iter().position(|f| f == p).unwrap_or(FIRST.len()));
        for (policy, c) in ranked {
            let light: Vec<String> = c.light.iter().map(|l| format!("{:.0}", mean(l))).collect();
            let kept = c.share.iter().filter(|&&x| x >= BAR).count();
            lines.push(format!(
                "| {policy} | {} ({}) | {kept}/{} | {:.3} ({:.3}) | {} |",
                pct(mean(&c.share)),
                pct(min(&c.share)),
                c.share.len(),
                mean(&c.progress),
                min(&c.progress),
                light.join(" / ")
            ));
        }
        lines.push(String::new());
    }
    lines.join("\n") + "\n"
}

/// A `note:` line per run whose heavy thread ended after a light program.
pub fn notes(late: &[Late]) -> String {
    late.iter()
        .map(|l| {
            format!(
                "note: {} {} {} seed {}: {HEAVY} ended after {}\n",
                l.config, l.policy, l.order, l.seed, l.light
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`LIGHT`]'s periods are the loop counts of the light programs'
    /// files (workloads/scenarios/light_*.toml), every loop of a file.
    #[test]
    fn light_periods_are_the_programs_loop_counts() {
        for (name, periods) in LIGHT {
            let path = format!(
                "{}/../../workloads/scenarios/{name}.toml",
                env!("CARGO_MANIFEST_DIR")
            );
            let text = std::fs::read_to_string(&path).unwrap();
            let loops: Vec<u32> = text
                .split("loop = ")
                .skip(1)
                .map(|rest| rest.split(',').next().unwrap().trim().parse().unwrap())
                .collect();
            assert!(!loops.is_empty(), "{path} has no loop");
            assert!(
                loops.iter().all(|&n| n == periods),
                "{path}'s loops {loops:?} are not LIGHT's {periods}"
            );
        }
    }

    fn row(seed: &str, program: &str, t: i64, sb: i64, cpu: i64, fast: i64) -> Row {
        Row {
            workload: MIX.into(),
            config: "4B4S".into(),
            order: "big-first".into(),
            seed: seed.into(),
            policy: "p".into(),
            program: program.into(),
            turnaround_ns: t,
            t_sb_ns: sb,
            cpu_ns: cpu,
            fast_cpu_ns: fast,
        }
    }

    /// Two runs of one policy on one machine, values worked out by hand:
    /// - run 1: 300 of 400 ms on fast cores (75%), 500 ms against 400 alone
    ///   (0.8); audio 95 ms late over 1,900 periods = 50 us, ui 19 ms / 950
    ///   = 20 us, net 0 us;
    /// - run 2: all of it on fast cores (100%), as fast as alone (1.0);
    ///   audio 19 ms / 1,900 = 10 us, ui 0, net 3.84 ms / 384 = 10 us.
    fn two_runs() -> Vec<Row> {
        let mut other = row("1", HEAVY, 0, 0, 0, 0);
        other.workload = "Fig1".into(); // another mix: skipped
        let mut rows = vec![other];
        let ms = |x: f64| (x * 1e6) as i64;
        for (seed, heavy, light) in [
            ("1", [500.0, 400.0, 400.0, 300.0], [95.0, 19.0, 0.0]),
            ("2", [400.0, 400.0, 400.0, 400.0], [19.0, 0.0, 3.84]),
        ] {
            let [t, sb, cpu, fast] = heavy.map(ms);
            rows.push(row(seed, HEAVY, t, sb, cpu, fast));
            for ((name, _), late_ms) in LIGHT.into_iter().zip(light) {
                let t = (2e9 + late_ms * 1e6) as i64;
                rows.push(row(seed, name, t, 2_000_000_000, 1, 0));
            }
        }
        rows
    }

    #[test]
    fn two_hand_worked_runs_give_their_means_and_lowest() {
        let (machines, late) = tables(&two_runs()).unwrap();
        assert_eq!(machines.len(), 1);
        assert_eq!(machines[0].config, "4B4S");
        let (policy, c) = &machines[0].policies[0];
        assert_eq!(policy, "p");
        assert_eq!(c.share, [0.75, 1.0]);
        assert_eq!(c.progress, [0.8, 1.0]);
        for (got, want) in c.light.iter().zip([[50.0, 10.0], [20.0, 0.0], [0.0, 10.0]]) {
            let got: Vec<f64> = got.iter().map(|x| (x * 1e6).round() / 1e6).collect();
            assert_eq!(got, want);
        }
        assert!(late.is_empty());
        let text = render(&machines);
        assert_eq!(
            text,
            "### 4B4S\n\
             \n\
             Mean over 2 runs (lowest run in parentheses); light programs' extra time per period \
             in us (audio / ui / net).\n\
             \n\
             | policy | heavy thread's fast share | runs at 90% or more | its progress rate | \
             light: extra us per period |\n\
             |---|---|---|---|---|\n\
             | p | 87.5% (75.0%) | 1/2 | 0.900 (0.800) | 30 / 10 / 5 |\n\
             \n"
        );
        assert_eq!(notes(&late), "");
    }

    #[test]
    fn the_question_s_policies_come_first_and_late_heavy_threads_get_a_note() {
        let mut rows = two_runs();
        for r in rows.iter_mut().skip(1) {
            if r.seed == "2" {
                r.policy = "eevdf".into();
            }
        }
        // run 1's heavy thread (500 ms) now outlives its audio program.
        let audio = rows
            .iter_mut()
            .find(|r| r.program == "light_audio")
            .unwrap();
        audio.turnaround_ns = 450_000_000;
        let (machines, late) = tables(&rows).unwrap();
        let text = render(&machines);
        let p = text.find("| p |").unwrap();
        assert!(text.find("| eevdf |").unwrap() < p, "{text}");
        assert!(text.contains("Mean over 1 runs"), "{text}");
        assert_eq!(
            notes(&late),
            "note: 4B4S p big-first seed 1: heavy_main ended after light_audio\n"
        );
    }

    const HEADER: &str = "workload,config,order,seed,policy,program,turnaround_ns,t_sb_ns,\
                          t_alone_ns,t_slow_ns,h_ntt,slowdown,cpu_ns,fast_cpu_ns\n";

    #[test]
    fn csv_text_becomes_rows_of_the_mix_only() {
        let text = format!(
            "{HEADER}Fig1,1B1S,big-first,1,cfs,fig1_alpha,7,3,3,9,2.6,2.6,,\n\
             Heavy-thread,4B4S,big-first,1,cfs,heavy_main,500,400,400,900,1.2,1.2,400,300\n"
        );
        let rows = read_rows(&text).unwrap();
        assert_eq!(
            rows,
            [row("1", HEAVY, 500, 400, 400, 300)].map(|mut r| {
                r.policy = "cfs".into();
                r
            })
        );
    }

    #[test]
    fn bad_input_is_an_error_naming_the_file_and_what_is_missing() {
        let dir = tempfile::tempdir().unwrap();
        let err = |name: &str, text: Option<&str>| -> String {
            let path = dir.path().join(name);
            if let Some(t) = text {
                std::fs::write(&path, t).unwrap();
            }
            let e = report(&path).unwrap_err();
            let msg = crate::common::error_text(&e);
            assert!(msg.contains(&path.display().to_string()), "{msg}");
            msg
        };
        assert!(err("missing.csv", None).contains("cannot read"));
        let fig1 = format!("{HEADER}Fig1,1B1S,big-first,1,cfs,fig1_alpha,7,3,3,9,2.6,2.6,5,1\n");
        assert!(err("fig1.csv", Some(&fig1)).contains("no run of Heavy-thread"));
        assert!(err("empty.csv", Some("")).contains("no header line"));
        let no_fast = HEADER.replace(",fast_cpu_ns", "");
        assert!(err("no-column.csv", Some(&no_fast)).contains("no `fast_cpu_ns` column"));
        let only_heavy = format!(
            "{HEADER}Heavy-thread,4B4S,big-first,1,cfs,heavy_main,500,400,400,900,1.2,1.2,400,300\n"
        );
        let msg = err("no-light.csv", Some(&only_heavy));
        assert!(
            msg.contains("4B4S under cfs (big-first, seed 1) has no light_audio line"),
            "{msg}"
        );
        let no_heavy = only_heavy.replace("heavy_main", "light_ui");
        assert!(err("no-heavy.csv", Some(&no_heavy)).contains("has no heavy_main line"));
        let bad_number = only_heavy.replace(",400,300\n", ",x,300\n");
        let msg = err("bad-number.csv", Some(&bad_number));
        assert!(msg.contains("line 2: `cpu_ns` is \"x\""), "{msg}");
        let zero = only_heavy.replace(",400,300\n", ",0,0\n");
        assert!(err("zero.csv", Some(&zero)).contains("cpu_ns is 0"));
    }
}
