//! `colab headline`: the COLAB study's headline tables in README.md and the
//! book's results overview, written from one `colab reproduce` run whose
//! numbers are kept in book/src/results/headline.tsv, so that the two pages
//! cannot disagree. `scripts/headline.sh` runs the study and this command;
//! a test of this crate checks the committed pages against the data file.

use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};

pub const ABOUT: &str =
    "Write the README's and the book's headline tables from one study run (for maintainers).";

pub const EXAMPLES: &str = "\
Examples:
  colab headline --check         # README.md and the overview match book/src/results/headline.tsv
  colab headline                 # rewrite their tables from headline.tsv
  colab headline --from reports/reproduce --commit abc1234 --date 2026-12-06
  (bash scripts/headline.sh runs the full study at HEAD, then the last command)";

/// The data file, relative to the repository's root.
pub const DATA: &str = "book/src/results/headline.tsv";

#[derive(clap::Args)]
pub struct HeadlineArgs {
    /// A report directory of the full COLAB study (`colab reproduce`, three
    /// seeds, the four machines): its summary.md's Ranking table becomes
    /// the data file's numbers, with --commit and --date (with --check:
    /// only compared with the data file's).
    #[arg(long, value_name = "DIR")]
    from: Option<PathBuf>,
    /// The commit whose code made the run in --from.
    #[arg(long, requires = "from")]
    commit: Option<String>,
    /// The day of the run in --from (YYYY-MM-DD).
    #[arg(long, requires = "from")]
    date: Option<String>,
    /// Change nothing: fail if the pages' tables differ from what the data
    /// file gives (and, with --from, if the data file's numbers differ from
    /// that run's).
    #[arg(long)]
    check: bool,
    /// The repository's root.
    #[arg(long, default_value = ".")]
    root: PathBuf,
}

pub fn run(a: HeadlineArgs) -> Result<()> {
    let data_path = a.root.join(DATA);
    let read_data = || Headline::read(&data_path);
    let data = if let Some(dir) = &a.from {
        let summary = dir.join("summary.md");
        let text = std::fs::read_to_string(&summary)
            .with_context(|| format!("{}: cannot read the run's summary", summary.display()))?;
        let rows = ranking_rows(&text).with_context(|| format!("{}", summary.display()))?;
        if a.check {
            let data = read_data()?;
            if rows != data.rows {
                bail!(
                    "{}: its numbers differ from the run in {} ({})",
                    data_path.display(),
                    dir.display(),
                    first_difference(&data.rows, &rows)
                );
            }
            data
        } else {
            let (Some(commit), Some(date)) = (&a.commit, &a.date) else {
                bail!("--from needs --commit and --date: the code and the day of its run");
            };
            let data = Headline {
                commit: commit.clone(),
                date: date.clone(),
                rows,
            };
            std::fs::write(&data_path, data.to_tsv())
                .with_context(|| format!("{}: cannot write", data_path.display()))?;
            eprintln!("headline: {}", data_path.display());
            data
        }
    } else {
        read_data()?
    };
    if a.check {
        check(&a.root)?;
        eprintln!("headline: README.md and the overview match {DATA}");
        return Ok(());
    }
    for (file, text) in rewritten(&a.root, &data)? {
        let path = a.root.join(file);
        std::fs::write(&path, text).with_context(|| format!("{}: cannot write", path.display()))?;
        eprintln!("headline: {}", path.display());
    }
    Ok(())
}

/// Fails unless every headline table under `root` is what the data file
/// renders.
pub fn check(root: &Path) -> Result<()> {
    let data = Headline::read(&root.join(DATA))?;
    for table in TABLES {
        let path = root.join(table.file);
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("{}: cannot read", path.display()))?;
        let (start, end) =
            between_markers(&text, table.name).with_context(|| format!("{}", path.display()))?;
        let want = table.render(&data)?;
        let have = &text[start..end];
        if have != want {
            let line = have
                .lines()
                .zip(want.lines())
                .position(|(h, w)| h != w)
                .unwrap_or(have.lines().count().min(want.lines().count()));
            bail!(
                "{}: the table between <!-- headline:{} begin --> and its end is not what {DATA} \
                 gives (its line {} differs: {:?}, expected {:?}); `colab headline` rewrites it",
                table.file,
                table.name,
                line + 1,
                have.lines().nth(line).unwrap_or(""),
                want.lines().nth(line).unwrap_or("")
            );
        }
    }
    Ok(())
}

/// Every page with its tables rendered from `data`.
fn rewritten(root: &Path, data: &Headline) -> Result<Vec<(&'static str, String)>> {
    let mut out: Vec<(&'static str, String)> = Vec::new();
    for table in TABLES {
        let i = match out.iter().position(|(f, _)| *f == table.file) {
            Some(i) => i,
            None => {
                let path = root.join(table.file);
                let text = std::fs::read_to_string(&path)
                    .with_context(|| format!("{}: cannot read", path.display()))?;
                out.push((table.file, text));
                out.len() - 1
            }
        };
        let text = &out[i].1;
        let (start, end) = between_markers(text, table.name).context(table.file)?;
        out[i].1 = format!("{}{}{}", &text[..start], table.render(data)?, &text[end..]);
    }
    Ok(out)
}

/// The byte range between a table's begin and end markers (each on its own
/// line; the range starts after the begin line's newline).
fn between_markers(text: &str, name: &str) -> Result<(usize, usize)> {
    let begin = format!("<!-- headline:{name} begin -->\n");
    let end = format!("<!-- headline:{name} end -->");
    let Some(b) = text.find(&begin) else {
        bail!("no `<!-- headline:{name} begin -->` line");
    };
    let start = b + begin.len();
    let Some(e) = text[start..].find(&end) else {
        bail!("no `<!-- headline:{name} end -->` after its begin");
    };
    Ok((start, start + e))
}

/// One policy's numbers on one machine, as the summary prints them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    pub config: String,
    pub policy: String,
    pub workloads: u32,
    pub h_antt: String,
    pub h_stp: String,
    pub energy: String,
}

/// The data file: the run's commit and day, and its numbers.
#[derive(Debug)]
pub struct Headline {
    pub commit: String,
    pub date: String,
    pub rows: Vec<Row>,
}

const TSV_HEADER: &str = "config\tpolicy\tworkloads\th_antt\th_stp\tenergy";

const TSV_NOTE: &str = "\
# The COLAB study's headline numbers from one full `colab reproduce` run (release
# build, three seeds, both core orders): each policy's H_ANTT, H_STP and energy on
# each machine, the geometric mean over the study's workloads normalised to cfs,
# as the run's summary.md ranks them. Written by `bash scripts/headline.sh`
# (`colab headline --from`); README.md and book/src/results/overview.md render
# their headline tables from it (`colab headline`), and a test of the CLI crate
# (crates/cli/tests/headline.rs) fails when they do not match it.
";

impl Headline {
    pub fn read(path: &Path) -> Result<Headline> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("{}: cannot read", path.display()))?;
        Headline::parse(&text).with_context(|| format!("{}", path.display()))
    }

    pub fn parse(text: &str) -> Result<Headline> {
        let (mut commit, mut date, mut rows, mut header) = (None, None, Vec::new(), false);
        for (n, line) in text.lines().enumerate() {
            if line.starts_with('#') || line.trim().is_empty() {
                continue;
            }
            let f: Vec<&str> = line.split('\t').collect();
            match f.as_slice() {
                ["commit", c] => commit = Some(c.to_string()),
                ["date", d] => date = Some(d.to_string()),
                _ if line == TSV_HEADER => header = true,
                [config, policy, workloads, h_antt, h_stp, energy] if header => rows.push(Row {
                    config: config.to_string(),
                    policy: policy.to_string(),
                    workloads: workloads
                        .parse()
                        .with_context(|| format!("line {}: workloads {workloads:?}", n + 1))?,
                    h_antt: number(h_antt, n)?,
                    h_stp: number(h_stp, n)?,
                    energy: number(energy, n)?,
                }),
                _ => bail!(
                    "line {}: not a commit, date, header or data line: {line:?}",
                    n + 1
                ),
            }
        }
        let (Some(commit), Some(date)) = (commit, date) else {
            bail!("needs a `commit` and a `date` line");
        };
        if rows.is_empty() {
            bail!("no numbers (a `{TSV_HEADER}` line, then one line per machine and policy)");
        }
        Ok(Headline { commit, date, rows })
    }

    fn to_tsv(&self) -> String {
        let mut s = format!(
            "{TSV_NOTE}commit\t{}\ndate\t{}\n{TSV_HEADER}\n",
            self.commit, self.date
        );
        for r in &self.rows {
            s += &format!(
                "{}\t{}\t{}\t{}\t{}\t{}\n",
                r.config, r.policy, r.workloads, r.h_antt, r.h_stp, r.energy
            );
        }
        s
    }

    fn get(&self, policy: &str, config: &str) -> Result<&Row> {
        self.rows
            .iter()
            .find(|r| r.policy == policy && r.config == config)
            .with_context(|| format!("{DATA} has no {policy} on {config}"))
    }

    fn configs(&self) -> Vec<&str> {
        let mut v: Vec<&str> = Vec::new();
        for r in &self.rows {
            if !v.contains(&r.config.as_str()) {
                v.push(&r.config);
            }
        }
        v
    }

    fn policies(&self) -> Vec<&str> {
        let mut v: Vec<&str> = Vec::new();
        for r in &self.rows {
            if !v.contains(&r.policy.as_str()) {
                v.push(&r.policy);
            }
        }
        v
    }
}

fn number(s: &str, line: usize) -> Result<String> {
    s.parse::<f64>()
        .with_context(|| format!("line {}: not a number: {s:?}", line + 1))?;
    Ok(s.to_string())
}

/// The machines of the COLAB study, in the tables' order.
const CONFIGS: [&str; 4] = ["2B2S", "2B4S", "4B2S", "4B4S"];

/// The Ranking table of a full COLAB study's summary.md, checked to be one:
/// the papers' study, three seeds, the four machines, every policy on every
/// workload.
pub fn ranking_rows(summary: &str) -> Result<Vec<Row>> {
    if summary.lines().next() != Some("# colab reproduce: the COLAB papers' simulation study") {
        bail!("not a report of the COLAB study (`colab reproduce` with no study named)");
    }
    let seeds = summary
        .lines()
        .find_map(|l| l.strip_prefix("| seeds | "))
        .and_then(|l| l.split(" |").next());
    if seeds != Some("3") {
        bail!("the headline run has three seeds (this one: {seeds:?}); run it without --seeds or --quick");
    }
    let mut lines = summary
        .lines()
        .skip_while(|l| *l != "## Ranking")
        .skip_while(|l| !l.starts_with('|'));
    let cells = |l: &str| -> Vec<String> {
        l.trim()
            .trim_matches('|')
            .split('|')
            .map(|c| c.trim().to_string())
            .collect()
    };
    let header = cells(lines.next().context("no `## Ranking` table")?);
    let col = |name: &str| {
        header
            .iter()
            .position(|h| h == name)
            .with_context(|| format!("the Ranking table has no {name} column"))
    };
    let (c, p, n, a, s, e) = (
        col("config")?,
        col("policy")?,
        col("n")?,
        col("H_ANTT")?,
        col("H_STP")?,
        col("Energy")?,
    );
    let mut rows = Vec::new();
    for l in lines.skip(1).take_while(|l| l.starts_with('|')) {
        let f = cells(l);
        rows.push(Row {
            config: f[c].clone(),
            policy: f[p].clone(),
            workloads: f[n].parse().with_context(|| format!("n {:?}", f[n]))?,
            h_antt: number(&f[a], 0)?,
            h_stp: number(&f[s], 0)?,
            energy: number(&f[e], 0)?,
        });
    }
    let mut configs: Vec<&str> = rows.iter().map(|r| r.config.as_str()).collect();
    configs.dedup();
    if configs != CONFIGS {
        bail!("the headline run has the machines {CONFIGS:?}, this one {configs:?}");
    }
    let most = rows.iter().map(|r| r.workloads).max().unwrap_or(0);
    if let Some(r) = rows.iter().find(|r| r.workloads != most) {
        bail!(
            "{} ran {} of the {most} workloads on {}: the headline run has every policy on every workload",
            r.policy,
            r.workloads,
            r.config
        );
    }
    Ok(rows)
}

fn first_difference(old: &[Row], new: &[Row]) -> String {
    for r in new {
        match old
            .iter()
            .find(|o| o.config == r.config && o.policy == r.policy)
        {
            None => return format!("{} on {} is new", r.policy, r.config),
            Some(o) if o != r => {
                return format!(
                    "{} on {}: H_ANTT / H_STP / energy {} / {} / {} there, {} / {} / {} in the run",
                    r.policy, r.config, o.h_antt, o.h_stp, o.energy, r.h_antt, r.h_stp, r.energy
                )
            }
            _ => {}
        }
    }
    if old.len() != new.len() {
        return format!("{} rows there, {} in the run", old.len(), new.len());
    }
    "the same numbers in another order".to_string()
}

/// What a table's cells show.
#[derive(Clone, Copy)]
enum Cells {
    /// H_ANTT; the lowest of each column in bold.
    HAntt,
    /// `H_STP / energy`; the highest H_STP of each column in bold.
    HStpEnergy,
}

/// One headline table: where it goes, its sentence and its rows.
struct Table {
    /// `<!-- headline:NAME begin -->` ... `<!-- headline:NAME end -->`.
    name: &'static str,
    file: &'static str,
    /// The paragraph above the table; `{date}`, `{commit}` and `{n}` (the
    /// workloads) are filled in.
    intro: &'static str,
    cells: Cells,
    /// The policies shown (each with its long or short note); None: every
    /// policy of the run.
    policies: Option<&'static [&'static str]>,
    short_notes: bool,
}

/// The README's policies: ours, the best others, today's Linux and
/// sched_ext, the paper's COLAB and the baseline.
const README_POLICIES: &[&str] = &[
    "rota",
    "pa",
    "colab-e",
    "eevdf",
    "colab",
    "bpfland",
    "lavd",
    "scx:colab",
    "cfs",
];

const TABLES: [Table; 3] = [
    Table {
        name: "h_antt",
        file: "README.md",
        intro: "H_ANTT (lower is better) over the COLAB papers' {n} workloads, geometric mean \
                normalised to CFS, measured {date} with the code of commit `{commit}` \
                (`colab reproduce`, release build; bold: the best of each column):",
        cells: Cells::HAntt,
        policies: Some(README_POLICIES),
        short_notes: false,
    },
    Table {
        name: "h_stp",
        file: "README.md",
        intro: "The same run's [H_STP](book/src/glossary.md#h_stp) (system throughput; higher is \
                better) and energy (lower is better), each a geomean normalised to CFS, H_STP / \
                energy:",
        cells: Cells::HStpEnergy,
        policies: Some(README_POLICIES),
        short_notes: true,
    },
    Table {
        name: "overview",
        file: "book/src/results/overview.md",
        intro: "H_ANTT (lower is better), geometric mean over the COLAB papers' {n} workloads, \
                normalised to CFS, three seeds and both core orders per cell, measured {date} \
                with the code of commit `{commit}` (`colab reproduce`, release build; the chart \
                above is the same run's `ranking_h_antt.png`; both written by `bash \
                scripts/headline.sh`; bold: the best of each column):",
        cells: Cells::HAntt,
        policies: None,
        short_notes: false,
    },
];

/// What a policy's row says after its name (long, short).
fn note(policy: &str) -> (&'static str, &'static str) {
    match policy {
        "rota" => ("ours", "ours"),
        "eevdf" => ("Linux today", "Linux today"),
        "colab" => ("the paper's", "the paper's"),
        "cfs" => ("the papers' baseline", "the papers' baseline"),
        "bpfland" => ("scx_bpfland 1.1.4, modelled", "modelled"),
        "lavd" => ("scx_lavd 1.1.4, modelled", "modelled"),
        "scx:colab" => ("scx_colab's own BPF, hosted", "hosted"),
        _ => ("", ""),
    }
}

impl Table {
    /// The lines between the markers: the paragraph, a blank line, the
    /// table and a blank line.
    fn render(&self, data: &Headline) -> Result<String> {
        let configs = data.configs();
        let baseline = "cfs";
        let policies: Vec<&str> = match self.policies {
            Some(p) => p.to_vec(),
            None => data.policies(),
        };
        // (label, cells, sort key) per policy; equal rows are merged below.
        let mut rows: Vec<(Vec<&str>, Vec<String>, f64)> = Vec::new();
        for p in &policies {
            let mut cells = Vec::new();
            let mut log_sum = 0.0;
            for c in &configs {
                let r = data.get(p, c)?;
                // Sorted by the geometric mean over the machines, best first.
                let (cell, log) = match self.cells {
                    Cells::HAntt => (r.h_antt.clone(), r.h_antt.parse::<f64>()?.ln()),
                    Cells::HStpEnergy => (
                        format!("{} / {}", r.h_stp, r.energy),
                        -r.h_stp.parse::<f64>()?.ln(),
                    ),
                };
                cells.push(cell);
                log_sum += log;
            }
            let key = if *p == baseline {
                f64::INFINITY
            } else {
                log_sum
            };
            match rows.iter_mut().find(|(_, c, _)| *c == cells) {
                Some(row) => {
                    row.0.push(p);
                    row.0.sort();
                }
                None => rows.push((vec![p], cells, key)),
            }
        }
        rows.sort_by(|a, b| a.2.total_cmp(&b.2));
        // The best of each column, compared on its first number.
        let first = |cell: &str| -> f64 {
            cell.split(" / ")
                .next()
                .and_then(|v| v.parse().ok())
                .unwrap_or(f64::NAN)
        };
        let best: Vec<f64> = (0..configs.len())
            .map(|i| {
                let vals = rows.iter().map(|r| first(&r.1[i]));
                match self.cells {
                    Cells::HAntt => vals.fold(f64::INFINITY, f64::min),
                    Cells::HStpEnergy => vals.fold(f64::NEG_INFINITY, f64::max),
                }
            })
            .collect();
        let n = data.rows[0].workloads.to_string();
        let intro = self
            .intro
            .replace("{date}", &data.date)
            .replace("{commit}", &data.commit)
            .replace("{n}", &n);
        let mut s = wrap(&intro, 95);
        s += "| policy |";
        for c in &configs {
            s += &format!(" {c} |");
        }
        s += "\n|---|";
        s += &"---|".repeat(configs.len());
        s += "\n";
        for (names, cells, _) in &rows {
            let label: Vec<String> = names
                .iter()
                .map(|p| {
                    let (long, short) = note(p);
                    let note = if self.short_notes { short } else { long };
                    if note.is_empty() {
                        p.to_string()
                    } else {
                        format!("{p} ({note})")
                    }
                })
                .collect();
            s += &format!("| {} |", label.join(" = "));
            for (i, cell) in cells.iter().enumerate() {
                if first(cell) == best[i] {
                    let (head, tail) = cell.split_once(" / ").unwrap_or((cell, ""));
                    let tail = if tail.is_empty() {
                        String::new()
                    } else {
                        format!(" / {tail}")
                    };
                    s += &format!(" **{head}**{tail} |");
                } else {
                    s += &format!(" {cell} |");
                }
            }
            s += "\n";
        }
        s += "\n";
        Ok(s)
    }
}

/// `text`'s words in lines of at most `width` characters (a longer word
/// alone), each ending in a newline, then a blank line.
fn wrap(text: &str, width: usize) -> String {
    let mut out = String::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            out += &line;
            out += "\n";
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line += word;
    }
    out += &line;
    out += "\n\n";
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SUMMARY: &str = "# colab reproduce: the COLAB papers' simulation study

| seeds | 3 | 1, 2, 3 |

## Ranking

Over all workloads ...

| config | policy | n | H_ANTT | H_STP | Unfairness | Energy | EDP |
|---|---|---|---|---|---|---|---|
| 2B2S | rota | 65 | 0.819 | 1.160 | 0.820 | 1.115 | 0.954 |
| 2B2S | rr | 65 | 0.983 | 1.070 | 1.054 | 1.221 | 1.083 |
| 2B2S | camp | 65 | 0.983 | 1.070 | 1.054 | 1.221 | 1.084 |
| 2B2S | cfs | 65 | 1.000 | 1.000 | 1.000 | 1.000 | 1.000 |
| 2B4S | rota | 65 | 0.812 | 1.186 | 0.824 | 1.177 | 0.976 |
| 2B4S | rr | 65 | 0.911 | 1.111 | 0.935 | 1.293 | 1.110 |
| 2B4S | camp | 65 | 0.911 | 1.111 | 0.935 | 1.293 | 1.110 |
| 2B4S | cfs | 65 | 1.000 | 1.000 | 1.000 | 1.000 | 1.000 |
| 4B2S | rota | 65 | 0.719 | 1.319 | 0.799 | 1.130 | 0.805 |
| 4B2S | rr | 65 | 0.794 | 1.261 | 0.965 | 1.170 | 0.848 |
| 4B2S | camp | 65 | 0.794 | 1.261 | 0.965 | 1.170 | 0.848 |
| 4B2S | cfs | 65 | 1.000 | 1.000 | 1.000 | 1.000 | 1.000 |
| 4B4S | cfs | 65 | 1.000 | 1.000 | 1.000 | 1.000 | 1.000 |
| 4B4S | rota | 65 | 0.687 | 1.386 | 0.815 | 1.198 | 0.819 |
| 4B4S | rr | 65 | 0.748 | 1.322 | 0.954 | 1.254 | 0.872 |
| 4B4S | camp | 65 | 0.748 | 1.322 | 0.954 | 1.254 | 0.872 |

Charts: ...
";

    #[test]
    fn a_summary_becomes_rows_and_tables() {
        let rows = ranking_rows(SUMMARY).unwrap();
        assert_eq!(rows.len(), 16);
        let data = Headline {
            commit: "abc1234".into(),
            date: "2026-12-06".into(),
            rows,
        };
        let back = Headline::parse(&data.to_tsv()).unwrap();
        assert_eq!(back.rows, data.rows);
        let t = TABLES[2].render(&back).unwrap();
        assert!(t.contains("`abc1234`") && t.contains("2026-12-06"), "{t}");
        assert!(t.lines().all(|l| l.len() <= 95), "{t}");
        let lines: Vec<&str> = t.lines().skip_while(|l| !l.is_empty()).skip(1).collect();
        assert_eq!(
            lines,
            [
                "| policy | 2B2S | 2B4S | 4B2S | 4B4S |",
                "|---|---|---|---|---|",
                "| rota (ours) | **0.819** | **0.812** | **0.719** | **0.687** |",
                "| camp = rr | 0.983 | 0.911 | 0.794 | 0.748 |",
                "| cfs (the papers' baseline) | 1.000 | 1.000 | 1.000 | 1.000 |",
                "",
            ]
        );
    }

    #[test]
    fn only_the_full_study_is_accepted() {
        let quick = SUMMARY.replace("| seeds | 3 |", "| seeds | 1 |");
        assert!(ranking_rows(&quick)
            .unwrap_err()
            .to_string()
            .contains("three seeds"));
        let short = SUMMARY.replace("| 4B4S | rr | 65 |", "| 4B4S | rr | 20 |");
        assert!(ranking_rows(&short)
            .unwrap_err()
            .to_string()
            .contains("every workload"));
        let camp = SUMMARY.replace("the COLAB papers'", "CAMP's");
        assert!(ranking_rows(&camp).is_err());
    }

    #[test]
    fn a_page_whose_table_was_edited_fails_the_check() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("book/src/results")).unwrap();
        let mut rows = ranking_rows(SUMMARY).unwrap();
        for (i, p) in README_POLICIES.iter().enumerate() {
            for c in CONFIGS {
                if !rows.iter().any(|r| r.policy == *p && r.config == c) {
                    let v = format!("0.9{i:02}");
                    rows.push(Row {
                        config: c.into(),
                        policy: p.to_string(),
                        workloads: 65,
                        h_antt: v.clone(),
                        h_stp: v.clone(),
                        energy: v,
                    });
                }
            }
        }
        let data = Headline {
            commit: "abc1234".into(),
            date: "2026-12-06".into(),
            rows,
        };
        std::fs::write(root.join(DATA), data.to_tsv()).unwrap();
        let page = |names: &[&str]| {
            names
                .iter()
                .map(|n| {
                    format!("text\n<!-- headline:{n} begin -->\nold\n<!-- headline:{n} end -->\n")
                })
                .collect::<String>()
        };
        std::fs::write(root.join("README.md"), page(&["h_antt", "h_stp"])).unwrap();
        std::fs::write(
            root.join("book/src/results/overview.md"),
            page(&["overview"]),
        )
        .unwrap();
        assert!(check(root).is_err());
        for (file, text) in rewritten(root, &data).unwrap() {
            std::fs::write(root.join(file), text).unwrap();
        }
        check(root).unwrap();
        let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
        std::fs::write(root.join("README.md"), readme.replacen("0.812", "0.813", 1)).unwrap();
        let err = check(root).unwrap_err().to_string();
        assert!(err.contains("README.md") && err.contains("0.813"), "{err}");
    }
}
