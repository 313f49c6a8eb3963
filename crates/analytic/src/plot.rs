//! The studies' charts (plotters, SVG + PNG), each rendered to a temporary
//! file and renamed into place.

use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::output::{commit, tmp_path};
use crate::AnalyticError;

const FONT: &str = "sans-serif";
const SIZE: (u32, u32) = (1320, 580);

const PALETTE: [RGBColor; 6] = [
    RGBColor(20, 20, 20),
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(255, 127, 14),
];

/// A named line.
pub(crate) struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

pub(crate) struct LinePanel {
    pub title: String,
    pub x_desc: String,
    pub y_desc: String,
    pub series: Vec<Series>,
    /// Label the x axis with integers only.
    pub integer_x: bool,
    /// Palette index of the first series (keeps a name's colour across panels).
    pub first_color: usize,
}

/// Named points with a label each.
pub(crate) struct PointSeries {
    pub name: String,
    pub points: Vec<(f64, f64, String)>,
    /// Write each point's label next to it.
    pub labels: bool,
}

pub(crate) struct ScatterPanel {
    pub title: String,
    pub series: Vec<PointSeries>,
    /// Thin grey segments drawn under the points (pairs to compare).
    pub links: Vec<((f64, f64), (f64, f64))>,
}

/// Padded range around the data.
fn range(vals: impl Iterator<Item = f64>) -> std::ops::Range<f64> {
    let (lo, hi) = vals.fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| {
        (l.min(v), h.max(v))
    });
    if !lo.is_finite() {
        return 0.0..1.0;
    }
    let pad = ((hi - lo) * 0.06).max(1e-3);
    (lo - pad)..(hi + pad)
}

/// Draws one series of points with marker shape `kind` (circle, triangle,
/// square, cross, diamond) and a legend entry with the same marker. A macro
/// because each shape is its own element type, for both the data and the
/// legend's pixel coordinates (plotters' boxed elements need a 'static backend).
macro_rules! marked_series {
    ($chart:expr, $pts:expr, $name:expr, |$p:ident| $body:expr) => {
        $chart
            .draw_series($pts.map(|$p| $body))
            .map_err(|e| e.to_string())?
            .label($name)
            .legend(move |$p: (i32, i32)| {
                let $p = ($p.0 + 8, $p.1);
                $body
            })
    };
}

fn draw_lines<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    p: &LinePanel,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let pts = || p.series.iter().flat_map(|s| s.points.iter());
    let xr = range(pts().map(|q| q.0));
    let yr = range(pts().map(|q| q.1));
    let mut chart = ChartBuilder::on(area)
        .caption(&p.title, (FONT, 18))
        .margin(14)
        .x_label_area_size(44)
        .y_label_area_size(64)
        .build_cartesian_2d(xr, yr)
        .map_err(|e| e.to_string())?;
    let integer_x = p.integer_x;
    chart
        .configure_mesh()
        .x_desc(p.x_desc.as_str())
        .y_desc(p.y_desc.as_str())
        .x_label_formatter(&|x| {
            if integer_x {
                if (x - x.round()).abs() < 1e-9 {
                    format!("{}", x.round())
                } else {
                    String::new()
                }
            } else {
                format!("{x:.2}")
            }
        })
        .y_label_formatter(&|y| format!("{y:.3}"))
        .light_line_style(RGBColor(235, 235, 235))
        .draw()
        .map_err(|e| e.to_string())?;
    for (i, s) in p.series.iter().enumerate() {
        let c = PALETTE[(i + p.first_color) % PALETTE.len()];
        chart
            .draw_series(LineSeries::new(s.points.iter().copied(), c.stroke_width(2)))
            .map_err(|e| e.to_string())?
            .label(s.name.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(2)));
        chart
            .draw_series(s.points.iter().map(|&q| Circle::new(q, 4, c.filled())))
            .map_err(|e| e.to_string())?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font((FONT, 14))
        .draw()
        .map_err(|e| e.to_string())
}

fn draw_scatter<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    p: &ScatterPanel,
    x_desc: &str,
    y_desc: &str,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let mut chart = ChartBuilder::on(area)
        .caption(&p.title, (FONT, 18))
        .margin(14)
        .x_label_area_size(44)
        .y_label_area_size(60)
        .build_cartesian_2d(-0.05f64..1.08, -0.05f64..1.08)
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .x_label_formatter(&|x| format!("{x:.1}"))
        .y_label_formatter(&|y| format!("{y:.1}"))
        .light_line_style(RGBColor(235, 235, 235))
        .draw()
        .map_err(|e| e.to_string())?;
    chart
        .draw_series(
            p.links
                .iter()
                .map(|&(a, b)| PathElement::new(vec![a, b], RGBColor(170, 170, 170))),
        )
        .map_err(|e| e.to_string())?;
    for (i, s) in p.series.iter().enumerate() {
        // Same colour/shape for a scheduler in both panels: index by name.
        let kind = scheduler_index(&s.name).unwrap_or(i);
        let c = PALETTE[(kind + 1) % PALETTE.len()];
        let pts = || s.points.iter().map(|q| (q.0, q.1));
        let name = s.name.as_str();
        let filled = c.filled();
        match kind % 5 {
            0 => marked_series!(chart, pts(), name, |p| Circle::new(p, 5, filled)),
            1 => marked_series!(chart, pts(), name, |p| TriangleMarker::new(p, 7, filled)),
            2 => marked_series!(chart, pts(), name, |p| EmptyElement::at(p)
                + Rectangle::new([(-4, -4), (4, 4)], filled)),
            3 => marked_series!(chart, pts(), name, |p| Cross::new(p, 5, c.stroke_width(2))),
            _ => marked_series!(chart, pts(), name, |p| EmptyElement::at(p)
                + Polygon::new(vec![(0, -6), (6, 0), (0, 6), (-6, 0)], filled)),
        };
        if s.labels {
            chart
                .draw_series(s.points.iter().map(|q| {
                    EmptyElement::at((q.0, q.1))
                        + Text::new(q.2.clone(), (7, -14), (FONT, 13).into_font().color(&c))
                }))
                .map_err(|e| e.to_string())?;
        }
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font((FONT, 14))
        .draw()
        .map_err(|e| e.to_string())
}

fn scheduler_index(name: &str) -> Option<usize> {
    crate::propsp::Scheduler::ALL
        .iter()
        .position(|s| s.name() == name)
}

/// Splits the root into a title strip and one area per panel, side by side.
fn layout<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    n: usize,
) -> Result<Vec<DrawingArea<DB, Shift>>, String>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let body = root.titled(title, (FONT, 22)).map_err(|e| e.to_string())?;
    Ok(body.split_evenly((1, n.max(1))))
}

/// Renders `draw` to `<stem>.svg` and `<stem>.png` via temporary files.
fn render(
    stem: &Path,
    draw_svg: impl Fn(&Path) -> Result<(), String>,
    draw_png: impl Fn(&Path) -> Result<(), String>,
) -> Result<Vec<PathBuf>, AnalyticError> {
    let mut out = Vec::new();
    for (ext, draw) in [
        ("svg", &draw_svg as &dyn Fn(&Path) -> Result<(), String>),
        ("png", &draw_png),
    ] {
        let path = stem.with_extension(ext);
        let tmp = tmp_path(&path);
        if let Err(message) = draw(&tmp) {
            let _ = std::fs::remove_file(&tmp);
            return Err(AnalyticError::Chart { path, message });
        }
        // A backend that failed silently would leave no file behind.
        if !tmp.is_file() {
            return Err(AnalyticError::Chart {
                path,
                message: "the chart was not written".into(),
            });
        }
        commit(&tmp, &path)?;
        out.push(path);
    }
    Ok(out)
}

/// Line charts side by side; writes `<stem>.svg` and `<stem>.png`.
pub(crate) fn write_line_panels(
    stem: &Path,
    title: &str,
    panels: &[LinePanel],
) -> Result<Vec<PathBuf>, AnalyticError> {
    fn go<DB: DrawingBackend>(
        root: DrawingArea<DB, Shift>,
        title: &str,
        panels: &[LinePanel],
    ) -> Result<(), String>
    where
        DB::ErrorType: 'static,
    {
        for (area, p) in layout(&root, title, panels.len())?.iter().zip(panels) {
            draw_lines(area, p)?;
        }
        root.present().map_err(|e| e.to_string())
    }
    render(
        stem,
        |p| go(SVGBackend::new(p, SIZE).into_drawing_area(), title, panels),
        |p| {
            go(
                BitMapBackend::new(p, SIZE).into_drawing_area(),
                title,
                panels,
            )
        },
    )
}

/// Scatter plots side by side on the unit square; writes `<stem>.svg` and
/// `<stem>.png`.
pub(crate) fn write_scatter_panels(
    stem: &Path,
    title: &str,
    x_desc: &str,
    y_desc: &str,
    panels: &[ScatterPanel],
) -> Result<Vec<PathBuf>, AnalyticError> {
    fn go<DB: DrawingBackend>(
        root: DrawingArea<DB, Shift>,
        title: &str,
        x_desc: &str,
        y_desc: &str,
        panels: &[ScatterPanel],
    ) -> Result<(), String>
    where
        DB::ErrorType: 'static,
    {
        for (area, p) in layout(&root, title, panels.len())?.iter().zip(panels) {
            draw_scatter(area, p, x_desc, y_desc)?;
        }
        root.present().map_err(|e| e.to_string())
    }
    render(
        stem,
        |p| {
            go(
                SVGBackend::new(p, SIZE).into_drawing_area(),
                title,
                x_desc,
                y_desc,
                panels,
            )
        },
        |p| {
            go(
                BitMapBackend::new(p, SIZE).into_drawing_area(),
                title,
                x_desc,
                y_desc,
                panels,
            )
        },
    )
}
