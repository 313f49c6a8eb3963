//! Simulated-against-real scatter plots (SVG + PNG) with the y = x line and
//! the ±5% / ±15% error bands the validation targets use.

use std::path::{Path, PathBuf};

use plotters::prelude::*;

use crate::charts::check_fonts;
use crate::ReportError;

/// One point: a label (for the legend-free reader: shown in the CSV, not on
/// the plot), the real value and the simulated value.
pub struct ScatterPoint {
    pub label: String,
    pub real: f64,
    pub simulated: f64,
}

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    title: &str,
    unit: &str,
    pts: &[ScatterPoint],
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let hi = pts
        .iter()
        .flat_map(|p| [p.real, p.simulated])
        .fold(0.0f64, f64::max)
        .max(1e-9)
        * 1.08;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(16)
        .x_label_area_size(44)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..hi, 0.0..hi)
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .x_desc(format!("real turnaround ({unit})"))
        .y_desc(format!("simulated turnaround ({unit})"))
        .light_line_style(RGBColor(235, 235, 235))
        .draw()
        .map_err(|e| e.to_string())?;
    // Lines y = k x, clipped to the square plot.
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
        let drawn = chart.draw_series(band(k, c)).map_err(|e| e.to_string())?;
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
        .map_err(|e| e.to_string())?
        .label("y = x")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], BLACK));
    chart
        .draw_series(
            pts.iter()
                .map(|p| Circle::new((p.real, p.simulated), 4, RGBColor(200, 40, 40).filled())),
        )
        .map_err(|e| e.to_string())?
        .label("case (program)")
        .legend(|(x, y)| Circle::new((x + 8, y), 4, RGBColor(200, 40, 40).filled()));
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(|e| e.to_string())?;
    root.present().map_err(|e| e.to_string())
}

/// Writes `<stem>.svg` and `<stem>.png`; returns their paths.
pub fn write_scatter(
    stem: &Path,
    title: &str,
    unit: &str,
    pts: &[ScatterPoint],
) -> Result<Vec<PathBuf>, ReportError> {
    check_fonts()?;
    let svg = stem.with_extension("svg");
    let png = stem.with_extension("png");
    let size = (760, 700);
    let chart_err = |path: &Path, message: String| ReportError::Chart {
        path: path.to_path_buf(),
        message,
    };
    draw(
        SVGBackend::new(&svg, size).into_drawing_area(),
        title,
        unit,
        pts,
    )
    .map_err(|m| chart_err(&svg, m))?;
    draw(
        BitMapBackend::new(&png, size).into_drawing_area(),
        title,
        unit,
        pts,
    )
    .map_err(|m| chart_err(&png, m))?;
    Ok(vec![svg, png])
}
