//! Scatter plots (SVG + PNG) in two layouts: simulated against real with the
//! y = x line and the ±5% / ±15% error bands the validation targets use, and
//! labelled points on axes fitted to the data (one point per policy, e.g.
//! ASP against unfairness).

use std::ops::Range;
use std::path::{Path, PathBuf};

use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::charts::{check_fonts, guarded};
use crate::ReportError;

const FONT: &str = "sans-serif";
const RED: RGBColor = RGBColor(200, 40, 40);

/// One point: a label (for the legend-free reader: shown in the CSV, not on
/// the plot), the real value and the simulated value.
pub struct ScatterPoint {
    pub label: String,
    pub real: f64,
    pub simulated: f64,
}

/// A point of a [`Scatter`].
pub(crate) struct Dot {
    pub label: String,
    pub x: f64,
    pub y: f64,
    pub colour: RGBColor,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    /// Square from 0 with y = x and error bands; dots unlabelled.
    Diagonal,
    /// Axes padded around the dots; each dot carries its label.
    Labelled,
}

pub(crate) struct Scatter {
    pub title: String,
    pub x_desc: String,
    pub y_desc: String,
    pub dots: Vec<Dot>,
    pub layout: Layout,
    pub size: (u32, u32),
    /// Legend entries of the diagonal layout: a dot colour and its meaning.
    pub legend: Vec<(RGBColor, String)>,
}

/// Points of one colour in [`write_diagonal_scatter`].
pub struct ScatterSeries {
    pub label: String,
    pub points: Vec<ScatterPoint>,
}

/// Series colours of [`write_diagonal_scatter`], in order.
const SERIES_COLOURS: [RGBColor; 5] = [
    RED,
    RGBColor(40, 90, 200),
    RGBColor(30, 150, 60),
    RGBColor(230, 140, 20),
    RGBColor(140, 60, 170),
];

fn e2s<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
}

/// Range around `vals` with a margin, never empty (a lone value gets ±10%).
fn padded(vals: impl Iterator<Item = f64>) -> Range<f64> {
    let (lo, hi) = vals.fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| {
        (l.min(v), h.max(v))
    });
    if !(lo.is_finite() && hi.is_finite()) {
        return 0.0..1.0;
    }
    let span = (hi - lo).max(lo.abs().max(hi.abs()) * 0.2).max(1e-6);
    // Wider on the right: labels sit to the right of their dots.
    (lo - span * 0.12)..(hi + span * 0.25)
}

/// Tick labels with as many decimals as the range's tick steps need, and
/// no "-0.0" for a tick at zero.
fn tick_format(r: &Range<f64>) -> impl Fn(&f64) -> String {
    let step = (r.end - r.start).abs() / 10.0;
    let decimals = if step > 0.0 {
        (-step.log10().floor()).clamp(0.0, 6.0) as usize
    } else {
        2
    };
    move |v: &f64| {
        let s = format!("{v:.decimals$}");
        if s.trim_start_matches('-')
            .chars()
            .all(|c| c == '0' || c == '.')
        {
            s.trim_start_matches('-').to_string()
        } else {
            s
        }
    }
}

fn draw<DB: DrawingBackend>(root: DrawingArea<DB, Shift>, s: &Scatter) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(e2s)?;
    let (xr, yr) = match s.layout {
        Layout::Diagonal => {
            let hi = s
                .dots
                .iter()
                .flat_map(|d| [d.x, d.y])
                .fold(0.0f64, f64::max)
                .max(1e-9)
                * 1.08;
            (0.0..hi, 0.0..hi)
        }
        Layout::Labelled => (
            padded(s.dots.iter().map(|d| d.x)),
            padded(s.dots.iter().map(|d| d.y)),
        ),
    };
    let mut chart = ChartBuilder::on(&root)
        .caption(&s.title, (FONT, 20))
        .margin(16)
        .x_label_area_size(44)
        .y_label_area_size(60)
        .build_cartesian_2d(xr.clone(), yr.clone())
        .map_err(e2s)?;
    let (x_fmt, y_fmt) = (tick_format(&xr), tick_format(&yr));
    chart
        .configure_mesh()
        .x_desc(s.x_desc.as_str())
        .y_desc(s.y_desc.as_str())
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .label_style((FONT, 13))
        .axis_desc_style((FONT, 14))
        .light_line_style(RGBColor(235, 235, 235))
        .draw()
        .map_err(e2s)?;
    if s.layout == Layout::Diagonal {
        diagonal_guides(&mut chart, xr.end)?;
    }
    let radius = match s.layout {
        Layout::Diagonal => 4,
        Layout::Labelled => 5,
    };
    chart
        .draw_series(
            s.dots
                .iter()
                .map(|d| Circle::new((d.x, d.y), radius, d.colour.filled())),
        )
        .map_err(e2s)?;
    match s.layout {
        Layout::Diagonal => {
            for (colour, label) in &s.legend {
                let colour = *colour;
                // An empty series carries each legend entry.
                chart
                    .draw_series(std::iter::empty::<Circle<(f64, f64), i32>>())
                    .map_err(e2s)?
                    .label(label.as_str())
                    .legend(move |(x, y)| Circle::new((x + 8, y), 4, colour.filled()));
            }
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperLeft)
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK)
                .draw()
                .map_err(e2s)?;
        }
        Layout::Labelled => {
            let at: Vec<(i32, i32)> = s
                .dots
                .iter()
                .map(|d| chart.backend_coord(&(d.x, d.y)))
                .collect();
            let area = chart.plotting_area().get_pixel_range();
            draw_labels(&root, &s.dots, &at, area)?;
        }
    }
    root.present().map_err(e2s)
}

/// Lines y = k x (the ±5% and ±15% bands) and y = x, clipped to the square
/// plot of side `hi`, with their legend entries.
fn diagonal_guides<DB: DrawingBackend>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    hi: f64,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let band = |k: f64, c: RGBColor| {
        let end = if k > 1.0 { (hi / k, hi) } else { (hi, hi * k) };
        LineSeries::new(vec![(0.0, 0.0), end], c.stroke_width(1))
    };
    for (k, c, label) in [
        (1.05, RGBColor(120, 120, 220), Some("±5%")),
        (0.95, RGBColor(120, 120, 220), None),
        (1.15, RGBColor(220, 140, 140), Some("±15%")),
        (0.85, RGBColor(220, 140, 140), None),
    ] {
        let drawn = chart.draw_series(band(k, c)).map_err(e2s)?;
        if let Some(l) = label {
            drawn
                .label(l)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], c));
        }
    }
    chart
        .draw_series(LineSeries::new(
            vec![(0.0, 0.0), (hi, hi)],
            BLACK.stroke_width(1),
        ))
        .map_err(e2s)?
        .label("y = x")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], BLACK));
    Ok(())
}

type PxRect = (i32, i32, i32, i32);

fn overlap(a: PxRect, b: PxRect) -> i64 {
    let w = (a.2.min(b.2) - a.0.max(b.0)).max(0);
    let h = (a.3.min(b.3) - a.1.max(b.1)).max(0);
    i64::from(w) * i64::from(h)
}

fn draw_labels<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    dots: &[Dot],
    at: &[(i32, i32)],
    area: (Range<i32>, Range<i32>),
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let style = TextStyle::from((FONT, 14)).pos(Pos::new(HPos::Left, VPos::Top));
    // Dots drawn on top of each other share one label ("rr, camp").
    let mut labels: Vec<(String, (i32, i32))> = Vec::new();
    for (d, &(x, y)) in dots.iter().zip(at) {
        match labels
            .iter_mut()
            .find(|(_, (lx, ly))| (lx - x).abs() <= 3 && (ly - y).abs() <= 3)
        {
            Some((text, _)) => *text = format!("{text}, {}", d.label),
            None => labels.push((d.label.clone(), (x, y))),
        }
    }
    let at: Vec<(i32, i32)> = labels.iter().map(|&(_, p)| p).collect();
    let sizes = labels
        .iter()
        .map(|(text, _)| {
            let (w, h) = root.estimate_text_size(text, &style).map_err(e2s)?;
            Ok((w as i32, h as i32))
        })
        .collect::<Result<Vec<_>, String>>()?;
    let placed = place_labels(&sizes, &at, area);
    for (((text, _), &(px, py)), (r, leader)) in labels.iter().zip(&at).zip(placed) {
        if leader {
            let end = (px.clamp(r.0, r.2), py.clamp(r.1, r.3));
            root.draw(&PathElement::new(
                vec![(px, py), end],
                RGBColor(160, 160, 160),
            ))
            .map_err(e2s)?;
        }
        root.draw(&Text::new(text.clone(), (r.0, r.1), style.clone()))
            .map_err(e2s)?;
    }
    Ok(())
}

/// Places each label (of pixel size `sizes[i]`) next to its dot `at[i]`
/// where it covers no dot or earlier label and stays inside `area`, trying
/// nearer places first. Returns each label's box and whether it ended up
/// away from its dot (then it needs a leader line).
fn place_labels(
    sizes: &[(i32, i32)],
    at: &[(i32, i32)],
    (xs, ys): (Range<i32>, Range<i32>),
) -> Vec<(PxRect, bool)> {
    let mut taken: Vec<PxRect> = at
        .iter()
        .map(|&(x, y)| (x - 6, y - 6, x + 6, y + 6))
        .collect();
    // Right, left, above, below, then the diagonals.
    const DIRS: [(i32, i32); 8] = [
        (1, 0),
        (-1, 0),
        (0, -1),
        (0, 1),
        (1, -1),
        (1, 1),
        (-1, -1),
        (-1, 1),
    ];
    let mut placed = Vec::with_capacity(at.len());
    for (&(w, h), &(px, py)) in sizes.iter().zip(at) {
        let mut best: Option<(i64, PxRect, i32)> = None;
        'search: for ring in 0..4 {
            for (dx, dy) in DIRS {
                // Centre of the label: clear of the dot, further out each ring.
                let cx = px + dx * (w / 2 + 9 + ring * 14);
                let cy = py + dy * (h / 2 + 6 + ring * (h + 2));
                let r = (cx - w / 2, cy - h / 2, cx - w / 2 + w, cy - h / 2 + h);
                let outside = r.0 < xs.start || r.2 > xs.end || r.1 < ys.start || r.3 > ys.end;
                let cost = taken.iter().map(|t| overlap(r, *t)).sum::<i64>()
                    + if outside { 1 << 40 } else { 0 };
                if !matches!(best, Some((c, _, _)) if c <= cost) {
                    best = Some((cost, r, ring));
                }
                if cost == 0 {
                    break 'search;
                }
            }
        }
        // Nothing fits: the least-covered place found.
        let (_, r, ring) = best.unwrap_or((0, (px, py, px + w, py + h), 0));
        taken.push(r);
        placed.push((r, ring > 0));
    }
    placed
}

/// Writes `<stem>.svg` and/or `<stem>.png`; returns the paths written.
pub(crate) fn render_scatter(
    stem: &Path,
    s: &Scatter,
    svg: bool,
    png: bool,
) -> Result<Vec<PathBuf>, ReportError> {
    let mut written = Vec::new();
    if svg {
        let path = stem.with_extension("svg");
        guarded(&path, || {
            draw(SVGBackend::new(&path, s.size).into_drawing_area(), s)
        })?;
        written.push(path);
    }
    if png {
        let path = stem.with_extension("png");
        guarded(&path, || {
            draw(BitMapBackend::new(&path, s.size).into_drawing_area(), s)
        })?;
        written.push(path);
    }
    Ok(written)
}

/// Writes `<stem>.svg` and `<stem>.png` of simulated against real values;
/// returns their paths.
pub fn write_scatter(
    stem: &Path,
    title: &str,
    unit: &str,
    pts: &[ScatterPoint],
) -> Result<Vec<PathBuf>, ReportError> {
    check_fonts()?;
    let s = Scatter {
        title: title.to_string(),
        x_desc: format!("real turnaround ({unit})"),
        y_desc: format!("simulated turnaround ({unit})"),
        dots: pts
            .iter()
            .map(|p| Dot {
                label: p.label.clone(),
                x: p.real,
                y: p.simulated,
                colour: RED,
            })
            .collect(),
        layout: Layout::Diagonal,
        size: (760, 700),
        legend: vec![(RED, "case (program)".into())],
    };
    render_scatter(stem, &s, true, true)
}

/// Writes `<stem>.svg` and `<stem>.png`: each point's real (measured) value
/// on x against its simulated or predicted value on y, with y = x and the
/// ±5% / ±15% bands, one colour per series; returns their paths.
pub fn write_diagonal_scatter(
    stem: &Path,
    title: &str,
    x_desc: &str,
    y_desc: &str,
    series: &[ScatterSeries],
) -> Result<Vec<PathBuf>, ReportError> {
    check_fonts()?;
    let colour = |i: usize| SERIES_COLOURS[i % SERIES_COLOURS.len()];
    let s = Scatter {
        title: title.to_string(),
        x_desc: x_desc.to_string(),
        y_desc: y_desc.to_string(),
        dots: series
            .iter()
            .enumerate()
            .flat_map(|(i, ser)| {
                ser.points.iter().map(move |p| Dot {
                    label: p.label.clone(),
                    x: p.real,
                    y: p.simulated,
                    colour: colour(i),
                })
            })
            .collect(),
        layout: Layout::Diagonal,
        size: (760, 700),
        legend: series
            .iter()
            .enumerate()
            .map(|(i, ser)| (colour(i), ser.label.clone()))
            .collect(),
    };
    render_scatter(stem, &s, true, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_have_the_decimals_their_steps_need() {
        let f = tick_format(&(-0.6..1.1));
        assert_eq!(f(&-0.0001), "0.0");
        assert_eq!(f(&0.2), "0.2");
        assert_eq!(f(&-0.4), "-0.4");
        assert_eq!(tick_format(&(0.7..1.05))(&0.75), "0.75");
        assert_eq!(tick_format(&(0.0..120.0))(&40.0), "40");
    }

    #[test]
    fn labels_of_clustered_dots_do_not_overlap() {
        // Five dots within a few pixels (policies with nearly equal means).
        let at = [(300, 200), (303, 202), (298, 205), (305, 199), (301, 201)];
        let sizes = [(90, 16); 5];
        let placed = place_labels(&sizes, &at, (0..800, 0..600));
        assert_eq!(placed.len(), 5);
        for (i, (a, _)) in placed.iter().enumerate() {
            for (j, &(x, y)) in at.iter().enumerate() {
                let dot = (x - 6, y - 6, x + 6, y + 6);
                assert_eq!(overlap(*a, dot), 0, "label {i} covers dot {j}");
            }
            for (b, _) in &placed[..i] {
                assert_eq!(overlap(*a, *b), 0, "labels overlap: {a:?} {b:?}");
            }
            assert!(a.0 >= 0 && a.2 <= 800 && a.1 >= 0 && a.3 <= 600, "{a:?}");
        }
        // A lone dot gets its label right beside it, without a leader line.
        let lone = place_labels(&[(90, 16)], &[(100, 100)], (0..800, 0..600));
        assert_eq!(lone, vec![((109, 92, 199, 108), false)]);
        // At the right edge the label goes to the left instead.
        let edge = place_labels(&[(90, 16)], &[(790, 100)], (0..800, 0..600));
        assert!(edge[0].0 .2 <= 790, "{edge:?}");
    }
}
