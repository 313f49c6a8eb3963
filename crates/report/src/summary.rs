//! `summary.md`: the papers' tables, normalised to the baseline policy.

use std::collections::{BTreeMap, BTreeSet};

use crate::analysis::{app_speedups, cell_classes, Analysis, Metric};
use crate::naming::{app_speedup_stem, asp_unfairness_stem};
use crate::{natural_cmp, Cell, ReportOptions, RunRecord, WorkloadInfo};

pub(crate) fn fmt3(v: Option<f64>) -> String {
    v.map_or_else(|| "n/a".to_string(), |x| format!("{x:.3}"))
}

pub(crate) fn table(header: &[String], rows: &[Vec<String>]) -> String {
    let mut s = String::new();
    s.push_str(&format!("| {} |\n", header.join(" | ")));
    s.push_str(&format!("|{}\n", "---|".repeat(header.len())));
    for r in rows {
        s.push_str(&format!("| {} |\n", r.join(" | ")));
    }
    s.push('\n');
    s
}

fn list<T: AsRef<str>>(items: &[T]) -> String {
    items
        .iter()
        .map(|s| s.as_ref())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Inputs the summary needs besides the cells.
pub(crate) struct SummaryInput<'a> {
    pub records: &'a [RunRecord],
    pub cells: &'a [Cell],
    pub opts: &'a ReportOptions,
    /// Chart files (relative names) that were written.
    pub charts: &'a [String],
    pub warnings: &'a [String],
}

pub(crate) fn render(input: &SummaryInput) -> String {
    let a = Analysis::new(input.cells, input.opts);
    let mut md = String::new();
    let mut notes: Vec<String> = Vec::new();

    header(&mut md, input, &a);
    failures(&mut md, input.opts);
    compositions(&mut md, input.opts);

    md.push_str("## Per-workload results\n\n");
    for config in &a.configs {
        md.push_str(&format!("### {config}\n\n"));
        for metric in [Metric::HAntt, Metric::HStp] {
            workload_table(&mut md, &a, config, metric);
        }
    }

    md.push_str("## Per-class results\n\n");
    md.push_str(
        "Geometric mean over the workloads of each class of the per-workload values \
         normalised to the baseline; `n` = workloads in the class on that configuration, \
         `(k/n)` marks a policy with fewer usable workloads.\n\n",
    );
    for metric in [Metric::HAntt, Metric::HStp] {
        class_table(&mut md, &a, metric);
    }

    ranking(&mut md, &a, input.charts);
    coinciding(&mut md, &a, input.records);
    head_to_head(&mut md, &a);
    crate::versus::render(&mut md, &a, input.records);
    per_application(&mut md, &a, input.records, input.charts);
    crate::fast_share::render(&mut md, &a, input.records, input.charts);
    crate::fast_idle::render(&mut md, &a, input.records);
    crate::bound_gap::render(&mut md, &a, input.records);

    single_program(&mut md, &a, input.opts);
    unfairness(&mut md, &a);

    md.push_str("## Energy per class\n\n");
    class_table(&mut md, &a, Metric::Energy);
    md.push_str("## Energy-delay product per class\n\n");
    class_table(&mut md, &a, Metric::Edp);

    md.push_str("## Throughput and fairness as Prop-SP measures them\n\n");
    md.push_str(
        "ASP (propsp eq. 1): sum over programs of T_slow / T_M - 1, against each program \
         alone on the slow cores only. Unfairness (Prop-SP, eq. 2): max / min of T_M / T_SB.\n\n",
    );
    class_table(&mut md, &a, Metric::Asp);
    class_table(&mut md, &a, Metric::PropspUnfairness);
    chart_links(
        &mut md,
        &format!(
            "Charts of mean ASP against Prop-SP unfairness per policy (over the multi-program \
             workloads with a `{}` run)",
            a.baseline
        ),
        &a,
        input.charts,
        asp_unfairness_stem,
    );

    if !input.charts.is_empty() {
        md.push_str("## Charts\n\n");
        for c in input.charts {
            md.push_str(&format!("- [{c}]({c})\n"));
        }
        md.push('\n');
    }

    for (w, c) in &a.missing_baseline {
        notes.push(format!(
            "{w} on {c}: no `{}` run, results not normalised (shown as n/a).",
            a.baseline
        ));
    }
    for config in &a.configs {
        for w in a.workloads_in(config) {
            if let Some(b) = a.baseline_cell(w, config) {
                if b.energy_j <= 0.0 {
                    notes.push(format!(
                        "{w} on {config}: baseline energy is {:.3} J, energy not normalised.",
                        b.energy_j
                    ));
                }
            }
        }
    }
    notes.extend(input.warnings.iter().cloned());
    if !notes.is_empty() {
        md.push_str("## Notes\n\n");
        for n in &notes {
            md.push_str(&format!("- {n}\n"));
        }
        md.push('\n');
    }
    md
}

/// The first screen: what was run (all of the study or `--quick`'s part,
/// by which command), who won on each machine, and what the counts are.
fn header(md: &mut String, input: &SummaryInput, a: &Analysis) {
    let r = input.records;
    let p = &input.opts.provenance;
    md.push_str(&format!("# {}\n\n", input.opts.title));
    match &p.scope {
        crate::Scope::Unsaid => {}
        crate::Scope::Full => md.push_str(
            "**Full run** (without `--quick`): every workload, machine and seed listed under \
             What was run.\n\n",
        ),
        crate::Scope::Quick(scope) => md.push_str(&format!(
            "**Quick run** (`--quick`): {scope}. The whole study is the same command \
             without `--quick`.\n\n"
        )),
    }
    if !p.command.is_empty() {
        let made = if p.made.is_empty() {
            String::new()
        } else {
            format!(" ({})", p.made)
        };
        md.push_str(&format!("Made by `{}`{made}.\n\n", p.command));
    }
    winners(md, a);

    md.push_str("## What was run\n\n");
    let mut orders: Vec<&str> = r
        .iter()
        .map(|x| x.order.as_str())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    orders.sort_by(|x, y| natural_cmp(x, y));
    let seeds: Vec<String> = r
        .iter()
        .map(|x| x.seed)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .map(|s| s.to_string())
        .collect();
    let rows = vec![
        vec![
            "workloads".into(),
            a.workloads.len().to_string(),
            list(&a.workloads),
        ],
        vec![
            "configs".into(),
            a.configs.len().to_string(),
            list(&a.configs),
        ],
        vec![
            "policies".into(),
            a.policies.len().to_string(),
            list(&a.policies),
        ],
        vec![
            "core orders".into(),
            orders.len().to_string(),
            list(&orders),
        ],
        vec!["seeds".into(), seeds.len().to_string(), list(&seeds)],
        vec!["runs".into(), r.len().to_string(), String::new()],
    ];
    md.push_str(&table(&["".into(), "count".into(), "values".into()], &rows));
    md.push_str(&run_counts(input, a, orders.len(), seeds.len()));
    for note in &p.machine_notes {
        md.push_str(&format!("**Note**: {note}\n\n"));
    }
    md.push_str(&format!(
        "Metrics (colab-tpds 6.1, colab-cgo20): H_ANTT = mean of T_M/T_SB (lower is better), \
         H_STP = sum of T_SB/T_M (higher is better), H_NTT = T_M/T_SB of a single program, \
         Unfairness = max/min of the slowdowns T_M/T_alone (lower is better), where T_SB is \
         the time alone on an all-big machine with the same core count and T_alone the time \
         alone on the same configuration. Unless marked `abs`, values are normalised to \
         `{}` on the same workload and configuration; geomean = geometric mean.\n\n",
        a.baseline
    ));
}

/// "Who won": per configuration, the policies of lowest H_ANTT over its
/// workloads (the ranking's order), the last, and the best by H_STP and
/// by energy.
fn winners(md: &mut String, a: &Analysis) {
    let mut rows = Vec::new();
    for config in &a.configs {
        let workloads = a.workloads_in(config);
        let ranked = |m: Metric| {
            let mut v: Vec<(&str, f64)> = a
                .policies
                .iter()
                .filter_map(|p| Some((p.as_str(), a.summary_over(&workloads, config, p, m).0?)))
                .collect();
            v.sort_by(|x, y| x.1.total_cmp(&y.1));
            if m.higher_is_better() {
                v.reverse();
            }
            v
        };
        let antt = ranked(Metric::HAntt);
        if antt.is_empty() {
            continue;
        }
        let show =
            |x: Option<&(&str, f64)>| x.map_or(String::new(), |(p, v)| format!("{p} {v:.3}"));
        rows.push(vec![
            config.clone(),
            workloads.len().to_string(),
            show(antt.first()),
            antt.get(1).map_or(String::new(), |(_, v)| {
                format!("{:.1}%", (v / antt[0].1 - 1.0).abs() * 100.0)
            }),
            show(antt.get(1)),
            show(antt.get(2)),
            if antt.len() > 3 {
                show(antt.last())
            } else {
                String::new()
            },
            show(ranked(Metric::HStp).first()),
            show(ranked(Metric::Energy).first()),
        ]);
    }
    if rows.is_empty() {
        return;
    }
    md.push_str("## Who won\n\n");
    md.push_str(&format!(
        "Per configuration, geometric means over its workloads of the values normalised to \
         `{}`: the lowest H_ANTT first (the whole order is under Ranking), and the best \
         H_STP (higher is better) and energy (lower is better).\n\n",
        a.baseline
    ));
    let header: Vec<String> = [
        "config",
        "workloads",
        "best H_ANTT",
        "2nd behind by",
        "2nd",
        "3rd",
        "last",
        "best H_STP",
        "least energy",
    ]
    .map(String::from)
    .to_vec();
    md.push_str(&table(&header, &rows));
}

/// The run counts in words: the runs measured as the product of what
/// varied, and the simulations beyond them (programs alone, which T_SB and
/// T_alone come from).
fn run_counts(input: &SummaryInput, a: &Analysis, orders: usize, seeds: usize) -> String {
    let runs = input.records.len();
    let product = a.workloads.len() * a.configs.len() * a.policies.len() * orders * seeds;
    let n = |k: usize, one: &str, many: &str| format!("{k} {}", if k == 1 { one } else { many });
    let mut s = if product == runs {
        format!(
            "{runs} runs measured = {} x {} x {} x {} x {}, averaged into {} cells (workload \
             x config x policy; each the arithmetic mean over core orders and seeds).",
            n(a.workloads.len(), "workload", "workloads"),
            n(a.configs.len(), "config", "configs"),
            n(a.policies.len(), "policy", "policies"),
            n(orders, "core order", "core orders"),
            n(seeds, "seed", "seeds"),
            input.cells.len()
        )
    } else {
        format!(
            "{runs} runs measured (each workload on its own configurations, under every \
             policy, core order and seed), averaged into {} cells (workload x config x policy; \
             each the arithmetic mean over core orders and seeds).",
            input.cells.len()
        )
    };
    if let Some(sims) = input.opts.provenance.simulations {
        if sims as usize > runs {
            s += &format!(
                " The command's count of {sims} simulations also holds the {} runs of each \
                 program alone (on the all-big machine of as many cores, giving T_SB, and on \
                 its own configuration, giving T_alone) that the metrics divide by.",
                sims as usize - runs
            );
        }
    }
    s + "\n\n"
}

/// Runs shown in `summary.md`'s failures section; `failures.csv` has all.
pub(crate) const FAILURES_SHOWN: usize = 20;

/// What failed and what this report leaves out for it, before any result.
fn failures(md: &mut String, opts: &ReportOptions) {
    let f = &opts.failures;
    if f.runs.is_empty() {
        return;
    }
    md.push_str(
        "## Failed runs

",
    );
    md.push_str(&format!(
        "**{} runs failed or could not run**, so {} (workload, configuration) pairs are left \
         out of every policy's results below (means over the rest; every policy over the \
         same workloads): {}. Each run with its whole error is in \
         [failures.csv](failures.csv).\n\n",
        f.runs.len(),
        f.left_out.len(),
        f.left_out
            .iter()
            .map(|(w, c)| format!("{w} on {c}"))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    let rows: Vec<Vec<String>> = f
        .runs
        .iter()
        .take(FAILURES_SHOWN)
        .map(|r| {
            vec![
                r.workload.clone(),
                r.config.clone(),
                r.policy.clone(),
                r.order.clone(),
                r.seed.to_string(),
                r.error.lines().next().unwrap_or("").replace('|', "\\|"),
            ]
        })
        .collect();
    let header = ["workload", "config", "policy", "order", "seed", "error"].map(String::from);
    md.push_str(&table(&header, &rows));
    if f.runs.len() > FAILURES_SHOWN {
        md.push_str(&format!(
            "and {} more in failures.csv.\n\n",
            f.runs.len() - FAILURES_SHOWN
        ));
    }
}

fn compositions(md: &mut String, opts: &ReportOptions) {
    if opts.workloads.is_empty() {
        return;
    }
    md.push_str("## Workload compositions\n\n");
    md.push_str(
        "Programs of the generated workloads, each as `program n=N (threads it creates)`.\n\n",
    );
    let mut ws: Vec<&WorkloadInfo> = opts.workloads.iter().collect();
    ws.sort_by(|a, b| natural_cmp(&a.name, &b.name));
    let rows: Vec<Vec<String>> = ws
        .iter()
        .map(|w| {
            let progs: Vec<String> = w
                .programs
                .iter()
                .map(|p| format!("{} n={} ({})", p.name, p.n, p.threads))
                .collect();
            vec![
                w.name.clone(),
                w.source.clone(),
                w.programs.len().to_string(),
                progs.join(" + "),
                w.programs
                    .iter()
                    .map(|p| p.threads)
                    .sum::<u32>()
                    .to_string(),
            ]
        })
        .collect();
    let header = ["workload", "source", "programs", "composition", "threads"];
    md.push_str(&table(
        &header.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
        &rows,
    ));
}

fn policy_header(a: &Analysis, lead: &[&str]) -> Vec<String> {
    lead.iter()
        .map(|s| s.to_string())
        .chain(a.policies.iter().cloned())
        .collect()
}

fn workload_table(md: &mut String, a: &Analysis, config: &str, metric: Metric) {
    md.push_str(&format!(
        "#### {config}: {} normalised to {} ({})\n\n",
        metric.label(),
        a.baseline,
        metric.better()
    ));
    let abs = format!("{} abs", a.baseline);
    let header = policy_header(a, &["workload", "classes", "threads", &abs]);
    let mut rows = Vec::new();
    let mut per_policy: Vec<Vec<f64>> = vec![Vec::new(); a.policies.len()];
    for w in a.workloads_in(config) {
        let Some(any) = a.any_cell(w, config) else {
            continue;
        };
        let base = a.baseline_cell(w, config);
        let mut row = vec![
            w.to_string(),
            cell_classes(any).join(", "),
            any.threads.to_string(),
            fmt3(base.and_then(|b| metric.value(b))),
        ];
        for (i, p) in a.policies.iter().enumerate() {
            let v = a.cell(w, config, p).and_then(|c| a.normalised(c, metric));
            if let Some(v) = v {
                per_policy[i].push(v);
            }
            row.push(fmt3(v));
        }
        rows.push(row);
    }
    let mut geo = vec![
        "**geomean**".to_string(),
        String::new(),
        String::new(),
        String::new(),
    ];
    geo.extend(
        per_policy
            .iter()
            .map(|v| fmt3(colab_metrics::geomean(v).ok())),
    );
    rows.push(geo);
    md.push_str(&table(&header, &rows));
}

/// Every policy over all workloads of each configuration, best H_ANTT first.
fn ranking(md: &mut String, a: &Analysis, charts: &[String]) {
    md.push_str("## Ranking\n\n");
    md.push_str(&format!(
        "Over all workloads of each configuration: geometric means of the values normalised \
         to {} (ASP: mean of the raw values), policies sorted by H_ANTT (lower is better; \
         higher is better for H_STP and ASP).\n\n",
        a.baseline
    ));
    let metrics = [
        Metric::HAntt,
        Metric::HStp,
        Metric::Unfairness,
        Metric::PropspUnfairness,
        Metric::Asp,
        Metric::Energy,
        Metric::Edp,
    ];
    let mut header = vec!["config".to_string(), "policy".to_string(), "n".to_string()];
    header.extend(metrics.iter().map(|m| m.label().to_string()));
    let mut rows = Vec::new();
    for config in &a.configs {
        let workloads = a.workloads_in(config);
        let mut per_policy: Vec<(Option<f64>, Vec<String>)> = Vec::new();
        for p in &a.policies {
            let ran = workloads
                .iter()
                .filter(|w| a.cell(w, config, p).is_some())
                .count();
            if ran == 0 {
                continue;
            }
            let summary = |m: Metric| a.summary_over(&workloads, config, p, m).0;
            let mut row = vec![config.clone(), p.clone(), ran.to_string()];
            row.extend(metrics.iter().map(|&m| fmt3(summary(m))));
            per_policy.push((summary(Metric::HAntt), row));
        }
        per_policy.sort_by(|x, y| {
            x.0.unwrap_or(f64::INFINITY)
                .total_cmp(&y.0.unwrap_or(f64::INFINITY))
        });
        rows.extend(per_policy.into_iter().map(|(_, r)| r));
    }
    if a.classes.is_empty() {
        md.push_str(&format!("{NO_CLASS}.\n\n"));
    } else if rows.is_empty() {
        md.push_str("No data.\n\n");
    } else {
        md.push_str(&table(&header, &rows));
    }
    let links: Vec<String> = ["ranking_h_antt", "ranking_energy"]
        .iter()
        .flat_map(|stem| ["svg", "png"].map(|ext| format!("{stem}.{ext}")))
        .filter(|f| charts.contains(f))
        .map(|f| format!("[{f}]({f})"))
        .collect();
    if !links.is_empty() {
        md.push_str(&format!("Charts: {}\n\n", links.join(", ")));
    }
}

/// Groups of two or more policies whose every run came out the same (the
/// same turnarounds, energy and migrations in each (workload, config,
/// order, seed) both ran), in the analysis' order.
pub(crate) fn coinciding_groups(a: &Analysis, records: &[RunRecord]) -> Vec<Vec<String>> {
    type Key<'x> = (&'x str, &'x str, &'x str, u64);
    // A run's outcome: its programs' turnarounds, its energy's bits, its
    // migrations.
    type Outcome = (Vec<u64>, u64, u64);
    let mut runs: BTreeMap<&str, BTreeMap<Key, Outcome>> = BTreeMap::new();
    for r in records {
        let turnarounds = r.programs.iter().map(|p| p.turnaround_ns).collect();
        runs.entry(r.policy.as_str()).or_default().insert(
            (&r.workload, &r.config, &r.order, r.seed),
            (turnarounds, r.energy_j.to_bits(), r.migrations),
        );
    }
    let mut groups: Vec<Vec<String>> = Vec::new();
    for p in &a.policies {
        let Some(mine) = runs.get(p.as_str()) else {
            continue;
        };
        match groups
            .iter_mut()
            .find(|g| runs.get(g[0].as_str()) == Some(mine))
        {
            Some(g) => g.push(p.clone()),
            None => groups.push(vec![p.clone()]),
        }
    }
    groups.retain(|g| g.len() > 1);
    groups
}

/// The note under the ranking when policies coincide, with why where we
/// know it.
fn coinciding(md: &mut String, a: &Analysis, records: &[RunRecord]) {
    for g in coinciding_groups(a, records) {
        let why = if g
            .iter()
            .all(|p| ["camp", "sfd", "rr"].contains(&p.as_str()))
        {
            "CAMP, SFD and RR differ only in their time constants (200 ms speedup samples, a 2 s \
             fast-core rotation, camp-tocs12 4.1), which runs as short as these never reach, so \
             what is measured is the mechanism they share: fast cores never left idle and threads \
             swapped onto them at once (book: The COLAB study); at the papers' lengths \
             (`--lengths paper`, camp and propsp studies) they part"
        } else {
            "they made the same scheduling decisions on every workload, machine, core order and \
             seed here"
        };
        md.push_str(&format!(
            "**{}** came out the same in every run: {why}.\n\n",
            g.join(" = ")
        ));
    }
}

/// Per-application speedup over the baseline policy (the figures of
/// camp-tocs12 and propsp plot it against RR): for every program of every
/// workload, the baseline's mean turnaround over the policy's, summarised
/// per configuration as a geometric mean and the count of programs sped up.
fn per_application(md: &mut String, a: &Analysis, records: &[RunRecord], charts: &[String]) {
    let speedups = app_speedups(&a.baseline, records);
    let mut rows = Vec::new();
    for config in &a.configs {
        for p in a.policies.iter().filter(|p| **p != a.baseline) {
            let Some(s) = speedups.get(&(config.as_str(), p.as_str())) else {
                continue;
            };
            let ratios: Vec<f64> = s.iter().map(|x| x.speedup).collect();
            let faster = ratios.iter().filter(|&&x| x > 1.0).count();
            rows.push(vec![
                config.clone(),
                p.clone(),
                ratios.len().to_string(),
                fmt3(colab_metrics::geomean(&ratios).ok()),
                format!("{faster}/{}", ratios.len()),
            ]);
        }
    }
    if rows.is_empty() {
        return;
    }
    md.push_str(&format!(
        "## Per-application speedup over {}\n\n",
        a.baseline
    ));
    md.push_str(&format!(
        "For every program of every workload: its turnaround under {} over its turnaround under \
         the policy (mean over core orders and seeds); higher is better.\n\n",
        a.baseline
    ));
    let header: Vec<String> = ["config", "policy", "programs", "geomean speedup", "sped up"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    md.push_str(&table(&header, &rows));
    chart_links(
        md,
        "Charts per program (geomean over the workloads that run it)",
        a,
        charts,
        app_speedup_stem,
    );
}

/// Links to the per-configuration charts of one kind that were drawn.
fn chart_links(
    md: &mut String,
    what: &str,
    a: &Analysis,
    charts: &[String],
    stem: fn(&str) -> String,
) {
    let lines: Vec<String> = a
        .configs
        .iter()
        .filter_map(|config| {
            let stem = stem(config);
            let files: Vec<String> = ["svg", "png"]
                .iter()
                .map(|ext| format!("{stem}.{ext}"))
                .filter(|f| charts.contains(f))
                .map(|f| format!("[{f}]({f})"))
                .collect();
            (!files.is_empty()).then(|| format!("- {config}: {}", files.join(", ")))
        })
        .collect();
    if !lines.is_empty() {
        md.push_str(&format!("{what}:\n\n{}\n\n", lines.join("\n")));
    }
}

/// For each configuration, on how many workloads the row policy has a lower
/// H_ANTT than the column policy (of the workloads both ran).
fn head_to_head(md: &mut String, a: &Analysis) {
    if a.policies.len() < 2 {
        return;
    }
    md.push_str("## Head to head\n\n");
    md.push_str(
        "Cell (row, column): workloads on which the row policy's H_ANTT is lower than the \
         column policy's, out of the workloads both ran.\n\n",
    );
    for config in &a.configs {
        let workloads = a.workloads_in(config);
        md.push_str(&format!("### {config}\n\n"));
        let header = policy_header(a, &["policy"]);
        let rows: Vec<Vec<String>> = a
            .policies
            .iter()
            .map(|p| {
                let mut row = vec![p.clone()];
                for q in &a.policies {
                    if p == q {
                        row.push("-".into());
                        continue;
                    }
                    let (mut wins, mut both) = (0, 0);
                    for w in &workloads {
                        if let (Some(x), Some(y)) = (a.cell(w, config, p), a.cell(w, config, q)) {
                            both += 1;
                            if x.h_antt < y.h_antt {
                                wins += 1;
                            }
                        }
                    }
                    row.push(format!("{wins}/{both}"));
                }
                row
            })
            .collect();
        md.push_str(&table(&header, &rows));
    }
}

/// Why there are no per-class results when no workload has a class.
pub(crate) const NO_CLASS: &str =
    "No workload has a class (a mix file's `classes = [\"...\"]` gives its mixes theirs)";

fn class_table(md: &mut String, a: &Analysis, metric: Metric) {
    let how = if metric.normalisable() {
        format!("geomean normalised to {}", a.baseline)
    } else {
        "mean of the raw values".to_string()
    };
    md.push_str(&format!(
        "### {} per class, {how} ({})\n\n",
        metric.label(),
        metric.better()
    ));
    let header = policy_header(a, &["class", "config", "n"]);
    let mut rows = Vec::new();
    for class in &a.classes {
        for config in &a.configs {
            let members = a.members(class, config);
            if members.is_empty() {
                continue;
            }
            let mut row = vec![class.clone(), config.clone(), members.len().to_string()];
            for p in &a.policies {
                let (v, k, n) = a.class_summary(class, config, p, metric);
                let mut s = fmt3(v);
                if k != n && v.is_some() {
                    s.push_str(&format!(" ({k}/{n})"));
                }
                row.push(s);
            }
            rows.push(row);
        }
    }
    if a.classes.is_empty() {
        md.push_str(&format!("{NO_CLASS}.\n\n"));
    } else if rows.is_empty() {
        md.push_str("No data.\n\n");
    } else {
        md.push_str(&table(&header, &rows));
    }
}

/// Configurations shown in the single-program study: the preferred one if it
/// has single-program results, otherwise every configuration that has some.
pub(crate) fn single_program_configs<'x>(a: &'x Analysis, opts: &ReportOptions) -> Vec<&'x str> {
    let has_single = |config: &str| {
        a.workloads_in(config).iter().any(|w| {
            a.any_cell(w, config)
                .is_some_and(|c| Metric::HNtt.value(c).is_some())
        })
    };
    if has_single(&opts.single_program_config) {
        if let Some(c) = a.configs.iter().find(|c| **c == opts.single_program_config) {
            return vec![c.as_str()];
        }
    }
    a.configs
        .iter()
        .map(String::as_str)
        .filter(|c| has_single(c))
        .collect()
}

pub(crate) fn single_workloads<'x>(a: &'x Analysis, config: &str) -> Vec<&'x str> {
    a.workloads_in(config)
        .into_iter()
        .filter(|w| {
            a.any_cell(w, config)
                .is_some_and(|c| Metric::HNtt.value(c).is_some())
        })
        .collect()
}

fn single_program(md: &mut String, a: &Analysis, opts: &ReportOptions) {
    md.push_str("## Single-program workloads (H_NTT)\n\n");
    let configs = single_program_configs(a, opts);
    if configs.is_empty() {
        md.push_str("No single-program workloads in this campaign.\n\n");
        return;
    }
    for config in configs {
        md.push_str(&format!(
            "### {config}: H_NTT normalised to {} (lower is better)\n\n",
            a.baseline
        ));
        let abs = format!("{} abs", a.baseline);
        let header = policy_header(a, &["workload", "threads", &abs]);
        let mut rows = Vec::new();
        let mut per_policy: Vec<Vec<f64>> = vec![Vec::new(); a.policies.len()];
        for w in single_workloads(a, config) {
            let Some(any) = a.any_cell(w, config) else {
                continue;
            };
            let mut row = vec![
                w.to_string(),
                any.threads.to_string(),
                fmt3(a.baseline_cell(w, config).and_then(|b| b.h_ntt)),
            ];
            for (i, p) in a.policies.iter().enumerate() {
                let v = a
                    .cell(w, config, p)
                    .and_then(|c| a.normalised(c, Metric::HNtt));
                if let Some(v) = v {
                    per_policy[i].push(v);
                }
                row.push(fmt3(v));
            }
            rows.push(row);
        }
        let mut geo = vec!["**geomean**".to_string(), String::new(), String::new()];
        geo.extend(
            per_policy
                .iter()
                .map(|v| fmt3(colab_metrics::geomean(v).ok())),
        );
        rows.push(geo);
        md.push_str(&table(&header, &rows));
    }
}

fn unfairness(md: &mut String, a: &Analysis) {
    md.push_str(&format!(
        "## Unfairness of the Large mixes, normalised to {} (lower is better)\n\n",
        a.baseline
    ));
    let abs = format!("{} abs", a.baseline);
    let header = policy_header(a, &["workload", "config", &abs]);
    let mut rows = Vec::new();
    for config in &a.configs {
        for w in a.members("Large", config) {
            let mut row = vec![
                w.to_string(),
                config.clone(),
                fmt3(a.baseline_cell(w, config).map(|b| b.unfairness)),
            ];
            for p in &a.policies {
                row.push(fmt3(
                    a.cell(w, config, p)
                        .and_then(|c| a.normalised(c, Metric::Unfairness)),
                ));
            }
            rows.push(row);
        }
    }
    rows.sort_by(|x, y| natural_cmp(&x[0], &y[0]).then(natural_cmp(&x[1], &y[1])));
    if rows.is_empty() {
        md.push_str("No Large workloads in this campaign.\n\n");
    } else {
        md.push_str(&table(&header, &rows));
    }
}
