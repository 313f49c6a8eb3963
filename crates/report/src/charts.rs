//! Grouped bar charts in the style of the papers' Fig. 8-10 (plotters, SVG + PNG).
//!
//! Text layout goes through plotters' `ttf` feature (font-kit + fontconfig), so
//! both formats need a system font; [`check_fonts`] probes for one up front so
//! a missing font becomes a clear [`ReportError::Font`] instead of a failure
//! half-way through a chart.

use std::ops::Range;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::analysis::{app_speedups, speedup_by_program, Analysis, AppSpeedups, Metric};
use crate::fast_share::FastShares;
use crate::naming::{app_speedup_stem, asp_unfairness_stem, fast_share_stem, file_stem};
use crate::scatter::{render_scatter, Dot, Layout, Scatter};
use crate::summary::{single_program_configs, single_workloads};
use crate::{natural_cmp, Cell, ReportError, ReportOptions, RunRecord};

const FONT: &str = "sans-serif";

/// Checks that a sans-serif system font can be found and laid out, which chart
/// rendering (SVG and PNG) needs. Cheap; call it before a long campaign.
pub fn check_fonts() -> Result<(), ReportError> {
    let font: FontDesc = (FONT, 14.0).into_font();
    match catch_unwind(AssertUnwindSafe(|| font.box_size("H_ANTT 0.123 Sync 2B2S"))) {
        Ok(Ok((w, _))) if w > 0 => Ok(()),
        Ok(Ok(_)) => Err(ReportError::Font(
            "the font has no glyphs for basic Latin text".into(),
        )),
        Ok(Err(e)) => Err(ReportError::Font(e.to_string())),
        Err(_) => Err(ReportError::Font("font lookup panicked".into())),
    }
}

/// One cluster of bars on the x axis.
#[derive(Clone)]
pub(crate) struct Group {
    pub label: String,
    /// Second-level label shared by consecutive groups (the workload class).
    pub block: Option<String>,
    /// One value per series; `None` = no bar.
    pub values: Vec<Option<f64>>,
}

pub(crate) struct BarChart {
    pub title: String,
    /// Name of the baseline series (drawn grey).
    pub baseline: String,
    pub y_desc: String,
    pub series: Vec<String>,
    pub groups: Vec<Group>,
    /// Horizontal reference line (1.0 = baseline policy).
    pub reference: Option<f64>,
}

impl BarChart {
    fn has_data(&self) -> bool {
        self.groups
            .iter()
            .any(|g| g.values.iter().any(Option::is_some))
    }
}

/// Pixel layout derived from the number of groups and label lengths.
struct Geometry {
    size: (u32, u32),
    /// Groups drawn in each panel (row); long charts are wrapped into rows.
    rows: Vec<Range<usize>>,
    /// Groups the widest row has room for (all rows share the x scale).
    row_capacity: usize,
    x_label_area: u32,
    rotate_labels: bool,
    /// Legend entries as (x, row), wrapped to the chart width.
    legend: Vec<(i32, u32)>,
}

const TITLE_HEIGHT: u32 = 44;
/// Height of one row of legend entries.
const LEGEND_ROW: u32 = 26;
/// Space above and below the legend rows.
const LEGEND_PAD: u32 = 18;
const PANEL_PLOT_HEIGHT: u32 = 380;
/// Above this many groups a chart is wrapped into several panels.
const MAX_GROUPS_PER_ROW: usize = 24;
/// Widest a chart grows for its bars before it wraps them into another
/// panel: about a laptop screen's width, so a chart is read without
/// scrolling (a presentation choice; a long title may still widen it).
const MAX_WIDTH_PX: u32 = 1800;
/// x-axis units per group of bars.
const U: i32 = 1000;

/// Splits groups into as few rows as `max` allows, of about equal size,
/// breaking between blocks (classes) so a class is only cut in two when it is
/// itself longer than a row.
fn split_rows(groups: &[Group], max: usize) -> Vec<Range<usize>> {
    let n = groups.len();
    let max = max.max(1);
    if n <= max {
        return std::iter::once(0..n).collect();
    }
    let wanted = n.div_ceil(max);
    // Smallest row width that still gives `wanted` rows, which balances them.
    let mut best = greedy_rows(groups, max);
    for target in n.div_ceil(wanted)..max {
        let rows = greedy_rows(groups, target);
        if rows.len() <= wanted {
            best = rows;
            break;
        }
    }
    best
}

fn greedy_rows(groups: &[Group], target: usize) -> Vec<Range<usize>> {
    let n = groups.len();
    let mut blocks: Vec<Range<usize>> = Vec::new();
    let mut start = 0;
    while start < n {
        let mut end = start + 1;
        while end < n && end - start < target && groups[end].block == groups[start].block {
            end += 1;
        }
        blocks.push(start..end);
        start = end;
    }
    let mut rows: Vec<Range<usize>> = Vec::new();
    for b in blocks {
        match rows.last_mut() {
            Some(r) if b.end - r.start <= target => r.end = b.end,
            _ => rows.push(b),
        }
    }
    rows
}

impl Geometry {
    fn for_chart(c: &BarChart) -> Self {
        let k = c.series.len().max(1) as u32;
        let group_px = (k * 16 + 20).max(48);
        let fit = ((MAX_WIDTH_PX - 120) / group_px).max(1) as usize;
        let rows = split_rows(&c.groups, fit.min(MAX_GROUPS_PER_ROW));
        let row_capacity = rows.iter().map(|r| r.len()).max().unwrap_or(1).max(1);
        let longest = c
            .groups
            .iter()
            .map(|g| g.label.chars().count())
            .max()
            .unwrap_or(0) as u32;
        // ~8 px per character at 13 px; rotate when labels would collide.
        let rotate_labels = longest * 8 + 6 > group_px;
        let x_label_area = if rotate_labels {
            (longest * 8 + 20).clamp(48, 220)
        } else {
            40
        };
        // Wide enough for the title (~11 px per character at 22 px).
        let title_px = c.title.chars().count() as u32 * 11 + 40;
        let width = (row_capacity as u32 * group_px + 120)
            .max(title_px)
            .clamp(640, 8000);
        // A chart widened for its title keeps normal bar widths: the extra
        // room becomes empty slots on the right rather than fat bars.
        let row_capacity = row_capacity.max(((width - 120) / group_px) as usize);
        let legend = legend_layout(&c.series, width);
        let height = TITLE_HEIGHT
            + rows.len() as u32 * (PANEL_PLOT_HEIGHT + x_label_area + 20)
            + legend_height(&legend);
        Self {
            size: (width, height),
            rows,
            row_capacity,
            x_label_area,
            rotate_labels,
            legend,
        }
    }
}

/// Legend entries left to right, wrapped onto a new row before they would
/// run off the chart (text width estimated at 9 px per character at 15 px,
/// which errs wide for sans-serif).
fn legend_layout(series: &[String], width: u32) -> Vec<(i32, u32)> {
    let right = width.saturating_sub(20) as i32;
    let (mut x, mut row) = (80, 0);
    series
        .iter()
        .map(|name| {
            let w = 20 + name.chars().count() as i32 * 9;
            if x + w > right && x > 80 {
                (x, row) = (80, row + 1);
            }
            let at = (x, row);
            x += w + 30;
            at
        })
        .collect()
}

fn legend_height(legend: &[(i32, u32)]) -> u32 {
    let rows = legend.iter().map(|&(_, r)| r + 1).max().unwrap_or(1);
    rows * LEGEND_ROW + LEGEND_PAD
}

/// Series colours: the baseline grey, the papers' colours for WASH (blue)
/// and COLAB (red), and black for ROTA (ours), so those keep their colour in
/// every chart; other policies take the remaining colours in series order.
pub(crate) fn colours(series: &[String], baseline: &str) -> Vec<RGBColor> {
    const GREY: RGBColor = RGBColor(150, 150, 150);
    const BLUE: RGBColor = RGBColor(31, 119, 180);
    const RED: RGBColor = RGBColor(214, 39, 40);
    const BLACK: RGBColor = RGBColor(0, 0, 0);
    // Enough distinct colours for the other policies of a study with all 17
    // (13 besides the baseline, WASH, COLAB and ROTA: none repeats).
    const OTHERS: [RGBColor; 13] = [
        RGBColor(44, 160, 44),
        RGBColor(255, 127, 14),
        RGBColor(148, 103, 189),
        RGBColor(140, 86, 75),
        RGBColor(227, 119, 194),
        RGBColor(23, 190, 207),
        RGBColor(188, 189, 34),
        RGBColor(31, 49, 107),
        RGBColor(255, 187, 120),
        RGBColor(152, 223, 138),
        RGBColor(196, 156, 148),
        RGBColor(219, 219, 141),
        RGBColor(99, 99, 99),
    ];
    let mut next = 0;
    series
        .iter()
        .map(|s| match s.as_str() {
            s if s == baseline => GREY,
            "wash" => BLUE,
            "colab" => RED,
            "rota" => BLACK,
            _ => {
                next += 1;
                OTHERS[(next - 1) % OTHERS.len()]
            }
        })
        .collect()
}

fn e2s<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
}

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    c: &BarChart,
    g: &Geometry,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(e2s)?;
    let (top, rest) = root.split_vertically(TITLE_HEIGHT);
    top.draw(&Text::new(
        c.title.clone(),
        ((g.size.0 / 2) as i32, (TITLE_HEIGHT / 2) as i32),
        TextStyle::from((FONT, 22)).pos(Pos::new(HPos::Center, VPos::Center)),
    ))
    .map_err(e2s)?;
    let (panels, legend) =
        rest.split_vertically(g.size.1 - TITLE_HEIGHT - legend_height(&g.legend));

    let max = c
        .groups
        .iter()
        .flat_map(|g| g.values.iter().flatten().copied())
        .chain(c.reference)
        .fold(0.0f64, f64::max);
    // Headroom for the class labels drawn along the top of each panel.
    let y_max = if max > 0.0 { max * 1.2 } else { 1.0 };

    for (area, rows) in panels.split_evenly((g.rows.len(), 1)).iter().zip(&g.rows) {
        draw_panel(area, c, &c.groups[rows.clone()], g, y_max)?;
    }

    // Legend in its own strip below the plots so it never hides bars.
    let text_style = TextStyle::from((FONT, 15)).pos(Pos::new(HPos::Left, VPos::Center));
    let entries = c.series.iter().zip(colours(&c.series, &c.baseline));
    for ((name, colour), &(x, row)) in entries.zip(&g.legend) {
        let y = (LEGEND_PAD / 2 + row * LEGEND_ROW + LEGEND_ROW / 2) as i32;
        legend
            .draw(&Rectangle::new(
                [(x, y - 7), (x + 14, y + 7)],
                colour.filled(),
            ))
            .map_err(e2s)?;
        legend
            .draw(&Text::new(name.clone(), (x + 20, y), text_style.clone()))
            .map_err(e2s)?;
    }

    root.present().map_err(e2s)?;
    Ok(())
}

/// One row of groups with its own axes; every panel uses the same scales.
fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    c: &BarChart,
    groups: &[Group],
    g: &Geometry,
    y_max: f64,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let n = groups.len();
    let k = c.series.len().clamp(1, 64);
    let at = |i: usize| i as i32 * U;
    // Integer x axis (U units per group) so plotters can format it; the key
    // points sit at group centres and carry the group labels.
    let cap = i32::try_from(g.row_capacity).map_err(e2s)?;
    let centres: Vec<i32> = (0..n).map(|i| at(i) + U / 2).collect();

    let mut chart = ChartBuilder::on(area)
        .margin_left(14)
        .margin_right(20)
        .margin_top(10)
        .margin_bottom(10)
        .x_label_area_size(g.x_label_area)
        .y_label_area_size(70)
        .build_cartesian_2d((0..cap * U).with_key_points(centres), 0f64..y_max)
        .map_err(e2s)?;

    let labels: Vec<&str> = groups.iter().map(|g| g.label.as_str()).collect();
    let rotate = g.rotate_labels;
    let x_fmt = |x: &i32| {
        if rotate {
            // Drawn below by hand: plotters centres rotated labels on the axis.
            return String::new();
        }
        usize::try_from(x.div_euclid(U))
            .ok()
            .and_then(|i| labels.get(i))
            .map(|s| s.to_string())
            .unwrap_or_default()
    };
    let y_fmt = |y: &f64| format!("{y:.2}");
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(n)
        .x_label_formatter(&x_fmt)
        .x_label_style((FONT, 13))
        .y_label_formatter(&y_fmt)
        .y_label_style((FONT, 13))
        .y_desc(c.y_desc.as_str())
        .axis_desc_style((FONT, 15))
        .light_line_style(WHITE)
        .bold_line_style(BLACK.mix(0.12))
        .draw()
        .map_err(e2s)?;

    if rotate {
        let base = area.get_base_pixel();
        let style = TextStyle::from((FONT, 13))
            .transform(FontTransform::Rotate90)
            .pos(Pos::new(HPos::Left, VPos::Center));
        for (i, label) in labels.iter().enumerate() {
            let (px, py) = chart.backend_coord(&(at(i) + U / 2, 0.0));
            area.draw(&Text::new(
                label.to_string(),
                (px - base.0, py - base.1 + 12),
                style.clone(),
            ))
            .map_err(e2s)?;
        }
    }

    // Class blocks: thin separators and a label centred over each run of groups.
    let mut start = 0;
    while start < n {
        let block = &groups[start].block;
        let mut end = start + 1;
        while end < n && groups[end].block == *block {
            end += 1;
        }
        if let Some(name) = block {
            let style = TextStyle::from((FONT, 15).into_font().style(FontStyle::Bold))
                .pos(Pos::new(HPos::Center, VPos::Top));
            chart
                .draw_series(std::iter::once(Text::new(
                    name.clone(),
                    (at(start) / 2 + at(end) / 2, y_max * 0.985),
                    style,
                )))
                .map_err(e2s)?;
            if start > 0 {
                chart
                    .draw_series(std::iter::once(PathElement::new(
                        vec![(at(start), 0.0), (at(start), y_max)],
                        BLACK.mix(0.35),
                    )))
                    .map_err(e2s)?;
            }
        }
        start = end;
    }

    // Bars fill 80% of a group, leaving a gap between groups.
    let bar_w = (U * 8 / 10) / k as i32;
    for (s, colour) in colours(&c.series, &c.baseline).into_iter().enumerate() {
        let bars = groups.iter().enumerate().filter_map(|(i, grp)| {
            let v = grp.values.get(s).copied().flatten()?;
            let x0 = at(i) + U / 10 + s as i32 * bar_w;
            Some(Rectangle::new(
                [(x0, 0.0), (x0 + bar_w, v)],
                colour.filled(),
            ))
        });
        chart.draw_series(bars).map_err(e2s)?;
    }

    if let Some(r) = c.reference {
        chart
            .draw_series(LineSeries::new([(0, r), (at(n), r)], BLACK.stroke_width(1)))
            .map_err(e2s)?;
    }
    Ok(())
}

pub(crate) fn guarded(
    path: &Path,
    f: impl FnOnce() -> Result<(), String>,
) -> Result<(), ReportError> {
    // plotters and font-kit are third-party; a panic in them must not take the
    // caller down, it becomes an ordinary error.
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => Ok(()),
        Ok(Err(message)) => Err(ReportError::Chart {
            path: path.to_path_buf(),
            message,
        }),
        Err(panic) => {
            let message = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            Err(ReportError::Chart {
                path: path.to_path_buf(),
                message: format!("chart renderer panicked: {message}"),
            })
        }
    }
}

fn render(
    c: &BarChart,
    dir: &Path,
    stem: &str,
    opts: &ReportOptions,
) -> Result<Vec<PathBuf>, ReportError> {
    let g = Geometry::for_chart(c);
    let mut written = Vec::new();
    if opts.svg {
        let path = dir.join(format!("{stem}.svg"));
        written.push(path.clone());
        guarded(&path, || {
            draw(SVGBackend::new(&path, g.size).into_drawing_area(), c, &g)
        })?;
    }
    if opts.png {
        let path = dir.join(format!("{stem}.png"));
        written.push(path.clone());
        guarded(&path, || {
            draw(BitMapBackend::new(&path, g.size).into_drawing_area(), c, &g)
        })?;
    }
    Ok(written)
}

fn class_chart(a: &Analysis, metric: Metric) -> BarChart {
    let mut groups = Vec::new();
    for class in &a.classes {
        for config in &a.configs {
            if a.members(class, config).is_empty() {
                continue;
            }
            groups.push(Group {
                label: config.clone(),
                block: Some(class.clone()),
                values: a
                    .policies
                    .iter()
                    .map(|p| a.class_summary(class, config, p, metric).0)
                    .collect(),
            });
        }
    }
    geomean_chart(a, metric, "per class and configuration", groups)
}

/// Bars of geometric means normalised to the baseline, one series per policy.
fn geomean_chart(a: &Analysis, metric: Metric, over: &str, groups: Vec<Group>) -> BarChart {
    BarChart {
        title: format!(
            "{} {over}, geomean normalised to {} ({})",
            metric.label(),
            a.baseline,
            metric.better()
        ),
        y_desc: format!("normalised {}", metric.label()),
        series: a.policies.clone(),
        baseline: a.baseline.clone(),
        groups,
        reference: Some(1.0),
    }
}

/// The Ranking section as bars: one group per configuration, the metric's
/// geometric mean over all its workloads, per policy.
fn ranking_chart(a: &Analysis, metric: Metric) -> BarChart {
    let groups = a
        .configs
        .iter()
        .map(|config| {
            let ws = a.workloads_in(config);
            Group {
                label: config.clone(),
                block: None,
                values: a
                    .policies
                    .iter()
                    .map(|p| a.summary_over(&ws, config, p, metric).0)
                    .collect(),
            }
        })
        .collect();
    geomean_chart(a, metric, "over all workloads per configuration", groups)
}

fn workload_chart(a: &Analysis, config: &str, metric: Metric, workloads: &[&str]) -> BarChart {
    let groups = workloads
        .iter()
        .map(|w| Group {
            label: w.to_string(),
            block: a
                .any_cell(w, config)
                .and_then(|c: &Cell| c.classes.first().cloned()),
            values: a
                .policies
                .iter()
                .map(|p| a.cell(w, config, p).and_then(|c| a.normalised(c, metric)))
                .collect(),
        })
        .collect();
    BarChart {
        title: format!(
            "{} per workload on {config}, normalised to {} ({})",
            metric.label(),
            a.baseline,
            metric.better()
        ),
        y_desc: format!("normalised {}", metric.label()),
        series: a.policies.clone(),
        baseline: a.baseline.clone(),
        groups,
        reference: Some(1.0),
    }
}

/// Per-application speedup over the baseline on `config` (camp-tocs12 Figs.
/// 11-13): one group per program, one bar per other policy, each bar the
/// geometric mean over the workloads that run the program.
pub(crate) fn app_speedup_chart(a: &Analysis, speedups: &AppSpeedups, config: &str) -> BarChart {
    let series: Vec<String> = a
        .policies
        .iter()
        .filter(|p| **p != a.baseline)
        .cloned()
        .collect();
    let per_policy: Vec<Vec<(&str, f64)>> = series
        .iter()
        .map(|p| {
            speedups
                .get(&(config, p.as_str()))
                .map(|s| speedup_by_program(s))
                .unwrap_or_default()
        })
        .collect();
    let mut programs: Vec<&str> = per_policy.iter().flatten().map(|&(n, _)| n).collect();
    programs.sort_by(|x, y| natural_cmp(x, y));
    programs.dedup();
    let groups = programs
        .iter()
        .map(|name| Group {
            label: name.to_string(),
            block: None,
            values: per_policy
                .iter()
                .map(|v| v.iter().find(|(n, _)| n == name).map(|&(_, x)| x))
                .collect(),
        })
        .collect();
    BarChart {
        title: format!(
            "Per-application speedup over {} on {config} (geomean over workloads, higher is better)",
            a.baseline
        ),
        y_desc: format!("speedup over {}", a.baseline),
        series,
        baseline: a.baseline.clone(),
        groups,
        reference: Some(1.0),
    }
}

/// (policy, Prop-SP unfairness, ASP) of every policy on `config`, each the
/// summary the report's tables use (geomean normalised to the baseline,
/// arithmetic mean of the raw ASP) over the multi-program workloads with a
/// baseline run, so both means cover the same workloads. Single programs
/// are left out: their unfairness is 1 by definition.
pub(crate) fn asp_unfairness_points(a: &Analysis, config: &str) -> Vec<(String, f64, f64)> {
    let mixes: Vec<&str> = a
        .mixes_in(config)
        .into_iter()
        .filter(|w| a.baseline_cell(w, config).is_some())
        .collect();
    a.policies
        .iter()
        .filter_map(|p| {
            let unfairness = a
                .summary_over(&mixes, config, p, Metric::PropspUnfairness)
                .0?;
            let asp = a.summary_over(&mixes, config, p, Metric::Asp).0?;
            Some((p.clone(), unfairness, asp))
        })
        .collect()
}

fn asp_unfairness_scatter(a: &Analysis, config: &str, points: &[(String, f64, f64)]) -> Scatter {
    let colour: std::collections::BTreeMap<&String, RGBColor> = a
        .policies
        .iter()
        .zip(colours(&a.policies, &a.baseline))
        .collect();
    Scatter {
        title: format!("ASP against Prop-SP unfairness on {config} (multi-program workloads)"),
        x_desc: format!(
            "Prop-SP unfairness, geomean normalised to {} (lower is better)",
            a.baseline
        ),
        y_desc: "ASP, mean (higher is better)".into(),
        dots: points
            .iter()
            .map(|(p, x, y)| Dot {
                label: p.clone(),
                x: *x,
                y: *y,
                colour: colour.get(p).copied().unwrap_or(BLACK),
            })
            .collect(),
        layout: Layout::Labelled,
        size: (820, 640),
        legend: Vec::new(),
    }
}

/// Who got the fast cores on `config`: one group per program, one bar per
/// policy, each bar the share of the program's CPU time on the fastest
/// cores (summed over its multi-program runs).
fn fast_share_chart(a: &Analysis, fs: &FastShares, config: &str) -> BarChart {
    let series = fs.policies(a, config);
    let groups = fs
        .shares(config, &series)
        .into_iter()
        .map(|(label, values)| Group {
            label,
            block: None,
            values,
        })
        .collect();
    BarChart {
        title: format!("Share of each program's CPU time on the fastest cores of {config}"),
        y_desc: "share on the fastest cores".into(),
        series,
        baseline: a.baseline.clone(),
        groups,
        reference: None,
    }
}

/// Every bar chart of the report as (file stem, chart).
fn all_charts(
    a: &Analysis,
    records: &[RunRecord],
    speedups: &AppSpeedups,
    opts: &ReportOptions,
) -> Vec<(String, BarChart)> {
    let mut v = vec![
        (
            "ranking_h_antt".to_string(),
            ranking_chart(a, Metric::HAntt),
        ),
        (
            "ranking_energy".to_string(),
            ranking_chart(a, Metric::Energy),
        ),
        ("class_h_antt".to_string(), class_chart(a, Metric::HAntt)),
        ("class_h_stp".to_string(), class_chart(a, Metric::HStp)),
        ("class_energy".to_string(), class_chart(a, Metric::Energy)),
    ];
    for config in &a.configs {
        let ws = a.workloads_in(config);
        v.push((
            format!("workload_h_antt_{}", file_stem(config)),
            workload_chart(a, config, Metric::HAntt, &ws),
        ));
    }
    for config in single_program_configs(a, opts) {
        let ws = single_workloads(a, config);
        v.push((
            format!("single_h_ntt_{}", file_stem(config)),
            workload_chart(a, config, Metric::HNtt, &ws),
        ));
    }
    for config in &a.configs {
        v.push((
            app_speedup_stem(config),
            app_speedup_chart(a, speedups, config),
        ));
    }
    let fs = FastShares::new(records);
    for config in fs.configs(a) {
        v.push((fast_share_stem(config), fast_share_chart(a, &fs, config)));
    }
    v
}

/// Writes every chart into `dir`. Returns the file names written (relative to
/// `dir`) and warnings (charts with no data are skipped, not drawn empty).
pub(crate) fn write_charts(
    dir: &Path,
    records: &[RunRecord],
    cells: &[Cell],
    opts: &ReportOptions,
) -> Result<(Vec<String>, Vec<String>), ReportError> {
    let mut names = Vec::new();
    let mut warnings = Vec::new();
    if !(opts.svg || opts.png) {
        return Ok((names, warnings));
    }
    check_fonts()?;
    let a = Analysis::new(cells, opts);
    let speedups = app_speedups(&a.baseline, records);
    let not_drawn = |stem: &str| {
        if stem.starts_with("class_") && a.classes.is_empty() {
            let why = crate::summary::NO_CLASS;
            format!(
                "chart {stem} not drawn: {}",
                why[..1].to_lowercase() + &why[1..]
            )
        } else {
            format!(
                "chart {stem} not drawn: no values normalised to {}",
                a.baseline
            )
        }
    };
    let mut written = Vec::new();
    for (stem, chart) in all_charts(&a, records, &speedups, opts) {
        if !chart.has_data() {
            warnings.push(not_drawn(&stem));
            continue;
        }
        written.extend(render(&chart, dir, &stem, opts)?);
    }
    // Only where Prop-SP unfairness means something: configurations with mixes.
    for config in a.configs.iter().filter(|c| !a.mixes_in(c).is_empty()) {
        let stem = asp_unfairness_stem(config);
        let points = asp_unfairness_points(&a, config);
        if points.is_empty() {
            warnings.push(not_drawn(&stem));
            continue;
        }
        let scatter = asp_unfairness_scatter(&a, config, &points);
        written.extend(render_scatter(
            &dir.join(&stem),
            &scatter,
            opts.svg,
            opts.png,
        )?);
    }
    for path in written {
        if let Some(name) = path.file_name() {
            names.push(name.to_string_lossy().into_owned());
        }
    }
    Ok((names, warnings))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn groups(blocks: &[(&str, usize)]) -> Vec<Group> {
        blocks
            .iter()
            .flat_map(|(b, n)| {
                (0..*n).map(move |i| Group {
                    label: format!("{b}{i}"),
                    block: Some(b.to_string()),
                    values: vec![Some(1.0)],
                })
            })
            .collect()
    }

    #[test]
    fn every_policy_of_a_full_study_has_its_own_colour() {
        let all = [
            "cfs",
            "eevdf",
            "bpfland",
            "lavd",
            "gts",
            "wash",
            "colab",
            "colab-e",
            "camp",
            "pa",
            "sfd",
            "rr",
            "hsp",
            "propsp",
            "propsp-static",
            "rota",
            "scx:colab",
        ];
        let series: Vec<String> = all.iter().map(|s| s.to_string()).collect();
        let c = colours(&series, "cfs");
        for i in 0..c.len() {
            for j in 0..i {
                assert_ne!(c[i], c[j], "{} and {} share a colour", all[i], all[j]);
            }
        }
        // The fixed ones, whatever the order.
        let c2 = colours(&["rota".to_string(), "wash".to_string()], "cfs");
        assert_eq!((c2[0], c2[1]), (RGBColor(0, 0, 0), RGBColor(31, 119, 180)));
    }

    #[test]
    fn rows_break_between_blocks_and_balance() {
        let g = groups(&[("a", 4), ("b", 4), ("c", 4)]);
        assert_eq!(split_rows(&g, 24).first(), Some(&(0..12)));
        // 9 classes x 4 configs = 36 groups -> 2 rows of 20 and 16.
        let names = ["a", "b", "c", "d", "e", "f", "g", "h", "i"];
        let g = groups(&names.map(|n| (n, 4)));
        assert_eq!(split_rows(&g, 24), vec![0..20, 20..36]);
        // A block longer than a row is cut.
        let g = groups(&[("a", 30), ("b", 2)]);
        let rows = split_rows(&g, 24);
        assert!(rows.iter().all(|r| r.len() <= 24), "{rows:?}");
        assert_eq!(rows.first().map(|r| r.start), Some(0));
        assert_eq!(rows.last().map(|r| r.end), Some(32));
        assert_eq!(split_rows(&[], 24).len(), 1);
    }

    #[test]
    fn a_chart_of_many_policies_wraps_its_groups_to_stay_readable() {
        // The COLAB study's 17 policies over 17 classes: one 5,084 px row
        // before; now rows of at most MAX_WIDTH_PX.
        let series: Vec<String> = (0..17).map(|i| format!("policy{i}")).collect();
        let names: Vec<String> = (0..17).map(|i| format!("class{i}")).collect();
        let groups: Vec<Group> = names
            .iter()
            .map(|n| Group {
                label: n.clone(),
                block: Some(n.clone()),
                values: vec![Some(1.0); 17],
            })
            .collect();
        let chart = BarChart {
            title: "H_ANTT per class".into(),
            baseline: "policy0".into(),
            y_desc: "H_ANTT".into(),
            series,
            groups,
            reference: Some(1.0),
        };
        let g = Geometry::for_chart(&chart);
        assert!(g.size.0 <= MAX_WIDTH_PX, "{:?}", g.size);
        assert!(g.rows.len() >= 3, "{:?}", g.rows);
        assert_eq!(g.rows.iter().map(|r| r.len()).sum::<usize>(), 17);
        // Few policies: one row as before.
        let few = BarChart {
            series: vec!["a".into(), "b".into()],
            groups: chart.groups[..10]
                .iter()
                .map(|x| Group {
                    values: vec![Some(1.0); 2],
                    ..x.clone()
                })
                .collect(),
            ..chart
        };
        assert_eq!(Geometry::for_chart(&few).rows.len(), 1);
    }

    #[test]
    fn legend_wraps_inside_the_chart() {
        let names: Vec<String> = [
            "rr",
            "cfs",
            "eevdf",
            "gts",
            "wash",
            "colab",
            "camp",
            "pa",
            "sfd",
            "hsp",
            "propsp",
            "propsp-static",
        ]
        .map(String::from)
        .to_vec();
        let at = legend_layout(&names, 700);
        assert!(at.last().is_some_and(|&(_, row)| row >= 1), "{at:?}");
        for (name, &(x, _)) in names.iter().zip(&at) {
            assert!(x + 20 + 9 * name.len() as i32 <= 680, "{name} at {x}");
        }
        // Rows follow each other and the height grows with them.
        assert!(at
            .windows(2)
            .all(|p| p[1].1 == p[0].1 || p[1].1 == p[0].1 + 1));
        assert!(legend_height(&at) > legend_height(&legend_layout(&names[..2], 700)));
        assert_eq!(legend_layout(&names[..2], 700), vec![(80, 0), (148, 0)]);
    }
}
