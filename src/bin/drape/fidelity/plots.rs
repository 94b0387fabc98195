//! The plot of `drape fidelity --plots DIR` (plotters): the cantilever strip's centre line at rest at each
//! resolution beside the heavy elastica's for the rigidity its compliance implies.

use std::path::Path;

use plotters::prelude::*;

use super::cantilever::{RESOLUTIONS, profile, reference_overhang, strip, xpbd_elastica};

/// Pixel size of the plot.
const SIZE: (u32, u32) = (800, 500);
/// Colours of the three resolutions.
const COLOURS: [RGBColor; 3] = [RGBColor(200, 60, 40), RGBColor(60, 140, 60), RGBColor(50, 90, 190)];

/// Writes `cantilever.png` into `out`.
pub fn write_all(out: &Path) -> Result<(), String> {
    plotters::style::register_font("sans-serif", FontStyle::Normal, epaint_default_fonts::UBUNTU_LIGHT)
        .map_err(|_| format!("{}: the plot font could not be loaded", out.display()))?;
    let path = out.join("cantilever.png");
    cantilever(&path).map_err(|e| format!("{}: {e}", path.display()))
}

fn cantilever(path: &Path) -> Result<(), String> {
    let text = |e: &dyn std::fmt::Display| e.to_string();
    let root = BitMapBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(|e| text(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption("cantilever strip at rest: drape (XPBD, α = 5000) and the heavy elastica", ("sans-serif", 20))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..8.0, -10.5..0.5)
        .map_err(|e| text(&e))?;
    chart.configure_mesh().x_desc("along the table, cm").y_desc("below the clamp, cm").draw().map_err(|e| text(&e))?;
    let centimetres =
        |line: Vec<(f64, f64)>| line.into_iter().map(|(x, y)| (100.0 * x, -100.0 * y)).collect::<Vec<_>>();
    for (k, cols) in RESOLUTIONS.into_iter().enumerate() {
        let (desc, overhang) = strip(cols, reference_overhang() as f32, xpbd_elastica());
        let colour = COLOURS[k % COLOURS.len()];
        let elastica = super::cantilever::elastica_line(f64::from(overhang));
        chart.draw_series(LineSeries::new(centimetres(elastica), colour.stroke_width(1))).map_err(|e| text(&e))?;
        let line = centimetres(profile(desc, cols)?);
        chart
            .draw_series(LineSeries::new(line, colour.stroke_width(3)))
            .map_err(|e| text(&e))?
            .label(format!("{cols} quads across ({:.1} cm overhang; thin: elastica)", 100.0 * overhang))
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], colour.stroke_width(3)));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerLeft)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(|e| text(&e))?;
    root.present().map_err(|e| text(&e))
}
