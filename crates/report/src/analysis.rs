//! Normalisation to the baseline policy and grouping by class, shared by the
//! Markdown summary, the charts and `cells.csv`.

use std::collections::{BTreeMap, BTreeSet};

use crate::{natural_cmp, thread_class_of, Cell, ReportOptions, RunRecord};

/// Classes in the order of the papers' figures; any other class found in the
/// mix files ("3B", "6B", ...) follows in natural order.
pub(crate) const KNOWN_CLASSES: [&str; 10] = [
    "Sync",
    "NSync",
    "Comm",
    "Comp",
    "Large",
    "2B",
    "4B",
    "single",
    "thread-low",
    "thread-high",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Metric {
    HAntt,
    HStp,
    Unfairness,
    Energy,
    HNtt,
    Asp,
    PropspUnfairness,
    Edp,
}

impl Metric {
    pub(crate) fn value(self, c: &Cell) -> Option<f64> {
        match self {
            Metric::HAntt => Some(c.h_antt),
            Metric::HStp => Some(c.h_stp),
            Metric::Unfairness => Some(c.unfairness),
            Metric::Energy => Some(c.energy_j),
            Metric::HNtt => c.h_ntt,
            Metric::Asp => Some(c.asp),
            Metric::PropspUnfairness => Some(c.propsp_unfairness),
            Metric::Edp => Some(c.edp),
        }
    }

    pub(crate) fn label(self) -> &'static str {
        match self {
            Metric::HAntt => "H_ANTT",
            Metric::HStp => "H_STP",
            Metric::Unfairness => "Unfairness",
            Metric::Energy => "Energy",
            Metric::HNtt => "H_NTT",
            Metric::Asp => "ASP",
            Metric::PropspUnfairness => "Unfairness (Prop-SP)",
            Metric::Edp => "EDP",
        }
    }

    /// A ratio to the baseline means something: not for ASP, a sum of
    /// speedups minus one that is often near or below zero in mixes.
    pub(crate) fn normalisable(self) -> bool {
        self != Metric::Asp
    }

    pub(crate) fn higher_is_better(self) -> bool {
        matches!(self, Metric::HStp | Metric::Asp)
    }

    pub(crate) fn better(self) -> &'static str {
        if self.higher_is_better() {
            "higher is better"
        } else {
            "lower is better"
        }
    }
}

pub(crate) struct Analysis<'a> {
    pub baseline: String,
    /// Baseline first, then `policy_order`, then the rest in natural order.
    pub policies: Vec<String>,
    pub configs: Vec<String>,
    pub workloads: Vec<String>,
    /// Every class present (from mix files and thread counts), in figure order.
    pub classes: Vec<String>,
    cells: BTreeMap<(&'a str, &'a str, &'a str), &'a Cell>,
    /// (workload, config) pairs that have results but no baseline run.
    pub missing_baseline: Vec<(String, String)>,
}

fn sorted_natural(set: BTreeSet<&str>) -> Vec<String> {
    let mut v: Vec<String> = set.into_iter().map(str::to_string).collect();
    v.sort_by(|a, b| natural_cmp(a, b));
    v
}

impl<'a> Analysis<'a> {
    pub(crate) fn new(cells: &'a [Cell], opts: &ReportOptions) -> Self {
        let index: BTreeMap<_, _> = cells
            .iter()
            .map(|c| ((&*c.workload, &*c.config, &*c.policy), c))
            .collect();

        let present: BTreeSet<&str> = cells.iter().map(|c| &*c.policy).collect();
        let mut policies = Vec::new();
        let preferred = std::iter::once(&opts.baseline_policy).chain(&opts.policy_order);
        for p in preferred {
            if present.contains(p.as_str()) && !policies.contains(p) {
                policies.push(p.clone());
            }
        }
        for p in sorted_natural(present) {
            if !policies.contains(&p) {
                policies.push(p);
            }
        }

        let configs = sorted_natural(cells.iter().map(|c| &*c.config).collect());
        let workloads = sorted_natural(cells.iter().map(|c| &*c.workload).collect());

        let mut class_set: BTreeSet<String> = BTreeSet::new();
        for c in cells {
            class_set.extend(cell_classes(c));
        }
        let mut classes: Vec<String> = KNOWN_CLASSES
            .iter()
            .filter(|k| class_set.contains(**k))
            .map(|k| k.to_string())
            .collect();
        let mut others: Vec<String> = class_set
            .into_iter()
            .filter(|c| !KNOWN_CLASSES.contains(&c.as_str()))
            .collect();
        others.sort_by(|a, b| natural_cmp(a, b));
        classes.extend(others);

        let pairs: BTreeSet<(&str, &str)> =
            cells.iter().map(|c| (&*c.workload, &*c.config)).collect();
        let mut missing_baseline: Vec<(String, String)> = pairs
            .into_iter()
            .filter(|(w, c)| !index.contains_key(&(*w, *c, opts.baseline_policy.as_str())))
            .map(|(w, c)| (w.to_string(), c.to_string()))
            .collect();
        missing_baseline.sort_by(|a, b| natural_cmp(&a.0, &b.0).then(natural_cmp(&a.1, &b.1)));

        Self {
            baseline: opts.baseline_policy.clone(),
            policies,
            configs,
            workloads,
            classes,
            cells: index,
            missing_baseline,
        }
    }

    pub(crate) fn cell(&self, workload: &str, config: &str, policy: &str) -> Option<&'a Cell> {
        self.cells.get(&(workload, config, policy)).copied()
    }

    pub(crate) fn baseline_cell(&self, workload: &str, config: &str) -> Option<&'a Cell> {
        self.cell(workload, config, &self.baseline)
    }

    /// `metric(cell) / metric(baseline cell)`, or `None` when there is no
    /// baseline, the metric is undefined, or the baseline value is not > 0.
    pub(crate) fn normalised(&self, cell: &Cell, metric: Metric) -> Option<f64> {
        if !metric.normalisable() {
            return None;
        }
        let base = self.baseline_cell(&cell.workload, &cell.config)?;
        colab_metrics::normalise(metric.value(cell)?, metric.value(base)?).ok()
    }

    /// A representative cell of (workload, config): the baseline if present.
    pub(crate) fn any_cell(&self, workload: &str, config: &str) -> Option<&'a Cell> {
        self.baseline_cell(workload, config).or_else(|| {
            self.policies
                .iter()
                .find_map(|p| self.cell(workload, config, p))
        })
    }

    /// Workloads with at least one result on `config`.
    pub(crate) fn workloads_in(&self, config: &str) -> Vec<&str> {
        self.workloads
            .iter()
            .filter(|w| self.any_cell(w, config).is_some())
            .map(String::as_str)
            .collect()
    }

    /// Multi-program workloads with results on `config` (the cells of a single
    /// program are the ones with an H_NTT).
    pub(crate) fn mixes_in(&self, config: &str) -> Vec<&str> {
        self.workloads_in(config)
            .into_iter()
            .filter(|w| self.any_cell(w, config).is_some_and(|c| c.h_ntt.is_none()))
            .collect()
    }

    /// Workloads of `class` with results on `config`.
    pub(crate) fn members(&self, class: &str, config: &str) -> Vec<&str> {
        self.workloads_in(config)
            .into_iter()
            .filter(|w| {
                self.any_cell(w, config)
                    .is_some_and(|c| cell_classes(c).iter().any(|k| k == class))
            })
            .collect()
    }

    /// The class summary of `metric` for `policy` over the workloads of
    /// `class` on `config`: the geometric mean of the values normalised to
    /// the baseline, or, for metrics that cannot be normalised (ASP), the
    /// arithmetic mean of the raw values. Returns (value, workloads used,
    /// workloads in class).
    pub(crate) fn class_summary(
        &self,
        class: &str,
        config: &str,
        policy: &str,
        metric: Metric,
    ) -> (Option<f64>, usize, usize) {
        self.summary_over(&self.members(class, config), config, policy, metric)
    }

    /// The summary of [`Analysis::class_summary`] over any set of workloads.
    pub(crate) fn summary_over(
        &self,
        members: &[&str],
        config: &str,
        policy: &str,
        metric: Metric,
    ) -> (Option<f64>, usize, usize) {
        let values: Vec<f64> = members
            .iter()
            .filter_map(|w| self.cell(w, config, policy))
            .filter_map(|c| {
                if metric.normalisable() {
                    self.normalised(c, metric)
                } else {
                    metric.value(c)
                }
            })
            .collect();
        let summary = if metric.normalisable() {
            colab_metrics::geomean(&values)
        } else {
            colab_metrics::mean(&values)
        };
        (summary.ok(), values.len(), members.len())
    }
}

/// Mix-file classes plus the thread-count class of the cell.
pub(crate) fn cell_classes(c: &Cell) -> Vec<String> {
    let mut v = c.classes.clone();
    if let Some(t) = thread_class_of(c.threads, c.cores) {
        if !v.iter().any(|k| k == t) {
            v.push(t.to_string());
        }
    }
    v
}

/// One program of one workload: its mean turnaround under the baseline over
/// its mean turnaround under a policy (over core orders and seeds).
pub(crate) struct AppSpeedup<'r> {
    pub program: &'r str,
    pub speedup: f64,
}

/// [`AppSpeedup`]s keyed by (config, policy).
pub(crate) type AppSpeedups<'r> = BTreeMap<(&'r str, &'r str), Vec<AppSpeedup<'r>>>;

/// Per-application speedups over `baseline` of every non-baseline policy,
/// keyed by (config, policy). Programs are matched by name and by rank among
/// programs of the same name, so a mix running one program twice pairs each
/// copy with its own baseline. Programs without a baseline run are left out.
pub(crate) fn app_speedups<'r>(baseline: &str, records: &'r [RunRecord]) -> AppSpeedups<'r> {
    // (config, workload, program, k-th of that name, policy) -> turnarounds.
    type Key<'r> = (&'r str, &'r str, &'r str, usize, &'r str);
    let mut times: BTreeMap<Key<'r>, Vec<f64>> = BTreeMap::new();
    for r in records {
        let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
        for p in &r.programs {
            let k = seen.entry(p.name.as_str()).or_insert(0);
            times
                .entry((&r.config, &r.workload, &p.name, *k, &r.policy))
                .or_default()
                .push(p.turnaround_ns as f64);
            *k += 1;
        }
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let mut out = AppSpeedups::new();
    for (&(config, workload, program, k, policy), t) in &times {
        if policy == baseline {
            continue;
        }
        if let Some(b) = times.get(&(config, workload, program, k, baseline)) {
            out.entry((config, policy)).or_default().push(AppSpeedup {
                program,
                speedup: mean(b) / mean(t),
            });
        }
    }
    out
}

/// Geometric mean of the speedups of each program name (over the workloads
/// and copies that ran it), in natural order of the names.
pub(crate) fn speedup_by_program<'r>(speedups: &[AppSpeedup<'r>]) -> Vec<(&'r str, f64)> {
    let mut by_name: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for s in speedups {
        by_name.entry(s.program).or_default().push(s.speedup);
    }
    let mut v: Vec<(&str, f64)> = by_name
        .into_iter()
        .filter_map(|(name, x)| Some((name, colab_metrics::geomean(&x).ok()?)))
        .collect();
    v.sort_by(|a, b| natural_cmp(a.0, b.0));
    v
}
