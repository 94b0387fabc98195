//! The PNG plots of `drape bench` (plotters): the time per frame along each sweep, where the time of a frame
//! goes stage by stage, and what every shipped preset costs. Each bar or point is a median with its min–max
//! spread as a black whisker.

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;

use super::{Point, series};
use drape::sim::PbdStage;

/// Pixel size of every plot.
const SIZE: (u32, u32) = (800, 500);
/// Colour of the preset bars.
const BAR: RGBColor = RGBColor(70, 110, 180);
/// Width of the legend column beside the stage bars, pixels.
const LEGEND_WIDTH: u32 = 170;

/// A plot's outcome: plotters' errors as text.
type PlotResult = Result<(), String>;

/// Writes `resolution.png`, `substeps.png`, `iterations.png`, `stages.png` and `presets.png` into `out`.
pub fn write_all(out: &Path, points: &[Point]) -> Result<(), String> {
    plotters::style::register_font("sans-serif", FontStyle::Normal, epaint_default_fonts::UBUNTU_LIGHT)
        .map_err(|_| format!("{}: the plot font could not be loaded", out.display()))?;
    let sweeps = [
        ("resolution", "time per frame vs resolution (4 iterations × 8 substeps)", "particles"),
        ("substeps", "time per frame vs substeps (64² grid, 4 iterations)", "substeps"),
        ("iterations", "time per frame vs iterations (64² grid, 8 substeps)", "iterations"),
    ];
    for (name, title, x_label) in sweeps {
        let data: Vec<&Point> = series(points, name).collect();
        draw(&out.join(format!("{name}.png")), |root| sweep(root, title, x_label, &data, name == "resolution"))?;
    }
    let resolution: Vec<&Point> = series(points, "resolution").collect();
    draw(&out.join("stages.png"), |root| stages(root, &resolution))?;
    let presets: Vec<&Point> = points.iter().filter(|p| p.series.starts_with("preset:")).collect();
    draw(&out.join("presets.png"), |root| presets_bars(root, &presets))
}

/// A white canvas at `path`, drawn by `plot` and saved; errors name the file.
fn draw(path: &Path, plot: impl FnOnce(&DrawingArea<BitMapBackend, Shift>) -> PlotResult) -> Result<(), String> {
    let root = BitMapBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE)
        .map_err(text)
        .and_then(|()| plot(&root))
        .and_then(|()| root.present().map_err(text))
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// Turns a plotters error into text.
fn text<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
}

/// One sweep: median ms per frame against x (or against the particle count), min–max whiskers.
fn sweep(
    root: &DrawingArea<BitMapBackend, Shift>,
    title: &str,
    x_label: &str,
    points: &[&Point],
    by_particles: bool,
) -> PlotResult {
    let data: Vec<(f64, f64, f64, f64)> = points
        .iter()
        .map(|p| (if by_particles { p.particles as f64 } else { p.x }, p.median_ms, p.min_ms, p.max_ms))
        .collect();
    let x_max = data.iter().map(|d| d.0).fold(1.0, f64::max) * 1.05;
    let y_max = data.iter().map(|d| d.3).fold(1e-3, f64::max) * 1.1;
    let mut chart = ChartBuilder::on(root)
        .caption(title, ("sans-serif", 22))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..x_max, 0.0..y_max)
        .map_err(text)?;
    chart.configure_mesh().x_desc(x_label).y_desc("ms per frame (median, min–max)").draw().map_err(text)?;
    chart.draw_series(LineSeries::new(data.iter().map(|d| (d.0, d.1)), &RED)).map_err(text)?;
    chart.draw_series(data.iter().map(|d| Circle::new((d.0, d.1), 4, RED.filled()))).map_err(text)?;
    chart.draw_series(data.iter().map(|d| PathElement::new(vec![(d.0, d.2), (d.0, d.3)], BLACK))).map_err(text)?;
    Ok(())
}

/// Where the time goes: one stacked bar per resolution, each stage's share of the frame (in pipeline order),
/// the untimed rest (schedule, bookkeeping) on top, the frame's median ms above the bar.
fn stages(root: &DrawingArea<BitMapBackend, Shift>, points: &[&Point]) -> PlotResult {
    let shown: Vec<PbdStage> = PbdStage::ALL
        .into_iter()
        .filter(|s| points.iter().any(|p| p.stage_ms.get(s.name()).copied().unwrap_or(0.0) > 0.0))
        .collect();
    let root =
        root.titled("share of each stage in a frame (4 iterations × 8 substeps)", ("sans-serif", 22)).map_err(text)?;
    let (bars_area, legend_area) = root.split_horizontally(SIZE.0 - LEGEND_WIDTH);
    let mut chart = ChartBuilder::on(&bars_area)
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(60)
        .build_cartesian_2d(-0.5..points.len() as f64 - 0.5, 0.0..110.0)
        .map_err(text)?;
    let label = |x: &f64| {
        let at = category(*x).and_then(|k| points.get(k));
        at.map_or(String::new(), |p| format!("{}² ({} particles)", p.x, p.particles))
    };
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(points.len() * 2 + 1)
        .x_label_formatter(&label)
        .y_desc("% of the frame")
        .draw()
        .map_err(text)?;
    let mut base = vec![0.0; points.len()];
    let layers = shown.iter().map(|s| Some(*s)).chain([None]);
    for (k, stage) in layers.enumerate() {
        let color = Palette99::pick(k).to_rgba();
        let share: Vec<f64> = points
            .iter()
            .map(|p| {
                let timed: f64 = shown.iter().map(|s| p.stage_ms.get(s.name()).copied().unwrap_or(0.0)).sum();
                let ms = match stage {
                    Some(s) => p.stage_ms.get(s.name()).copied().unwrap_or(0.0),
                    None => (p.median_ms - timed).max(0.0),
                };
                100.0 * ms / p.median_ms.max(1e-9)
            })
            .collect();
        let bars = share.iter().zip(&base).enumerate().map(|(i, (&h, &b))| {
            let x = i as f64;
            Rectangle::new([(x - 0.35, b), (x + 0.35, (b + h).min(100.0))], color.filled())
        });
        chart.draw_series(bars).map_err(text)?;
        // the legend lists the layers top down, as they are stacked
        let y = 40 + 22 * (shown.len() - k) as i32;
        legend_area.draw(&Rectangle::new([(5, y - 6), (17, y + 6)], color.filled())).map_err(text)?;
        let name = stage.map_or("other (untimed)", PbdStage::name);
        legend_area.draw(&Text::new(name, (24, y - 8), ("sans-serif", 15))).map_err(text)?;
        for (b, h) in base.iter_mut().zip(&share) {
            *b += h;
        }
    }
    let totals = points
        .iter()
        .enumerate()
        .map(|(i, p)| Text::new(format!("{:.2} ms", p.median_ms), (i as f64 - 0.3, 106.0), ("sans-serif", 15)));
    chart.draw_series(totals).map_err(text)?;
    Ok(())
}

/// The category at axis value `v` of a bar chart whose categories sit at 0, 1, 2, …; `None` between them.
fn category(v: f64) -> Option<usize> {
    let k = v.round();
    (k >= 0.0 && (v - k).abs() < 1e-6).then_some(k as usize)
}

/// What every preset costs: a horizontal bar of median ms per frame each, with its min–max whisker.
fn presets_bars(root: &DrawingArea<BitMapBackend, Shift>, points: &[&Point]) -> PlotResult {
    let x_max = points.iter().map(|p| p.max_ms).fold(1e-3, f64::max) * 1.15;
    let name = |p: &Point| p.series.trim_start_matches("preset:").to_string();
    let mut chart = ChartBuilder::on(root)
        .caption("ms per frame of every shipped preset", ("sans-serif", 22))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(150)
        .build_cartesian_2d(0.0..x_max, -0.5..points.len() as f64 - 0.5)
        .map_err(text)?;
    // the first preset at the top
    let row = |i: usize| (points.len() - 1 - i) as f64;
    let label = |y: &f64| {
        let at = category(*y).and_then(|k| points.len().checked_sub(1 + k)).and_then(|i| points.get(i));
        at.map_or(String::new(), |p| name(p))
    };
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(points.len() * 2 + 1)
        .y_label_formatter(&label)
        .x_desc("ms per frame (median, min–max)")
        .draw()
        .map_err(text)?;
    let bar = |(i, p): (usize, &&Point)| {
        let y = row(i);
        Rectangle::new([(0.0, y - 0.3), (p.median_ms, y + 0.3)], BAR.filled())
    };
    chart.draw_series(points.iter().enumerate().map(bar)).map_err(text)?;
    let whisker = |(i, p): (usize, &&Point)| PathElement::new(vec![(p.min_ms, row(i)), (p.max_ms, row(i))], BLACK);
    chart.draw_series(points.iter().enumerate().map(whisker)).map_err(text)?;
    let value = |(i, p): (usize, &&Point)| {
        Text::new(format!("{:.2}", p.median_ms), (p.max_ms + x_max * 0.01, row(i) + 0.15), ("sans-serif", 14))
    };
    chart.draw_series(points.iter().enumerate().map(value)).map_err(text)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn point(series: &str, x: f64, median_ms: f64, stages: &[(PbdStage, f64)]) -> Point {
        let stage_ms: BTreeMap<String, f64> =
            stages.iter().map(|(s, share)| (s.name().to_string(), share * median_ms)).collect();
        Point {
            series: series.into(),
            x,
            particles: (x * x) as usize,
            median_ms,
            min_ms: 0.9 * median_ms,
            max_ms: 1.1 * median_ms,
            stage_ms,
        }
    }

    /// The RGB pixels of a PNG and its size.
    fn pixels(path: &Path) -> (Vec<[u8; 3]>, (u32, u32)) {
        let mut reader = png::Decoder::new(std::fs::File::open(path).unwrap()).read_info().unwrap();
        let mut buffer = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut buffer).unwrap();
        assert_eq!(info.color_type, png::ColorType::Rgb, "{}", path.display());
        (buffer.chunks_exact(3).map(|p| [p[0], p[1], p[2]]).collect(), (info.width, info.height))
    }

    #[test]
    fn bars_are_drawn_to_scale() {
        let out = std::env::temp_dir().join(format!("drape-plots-{}", std::process::id()));
        std::fs::create_dir_all(&out).unwrap();
        let shares = [(PbdStage::ExternalForces, 0.3), (PbdStage::Project, 0.6)];
        let mut points = Vec::new();
        for (k, series) in ["resolution", "substeps", "iterations"].into_iter().enumerate() {
            points.extend((1..4).map(|i| point(series, f64::from(8 * i), (k + i as usize) as f64, &shares)));
        }
        points.push(point("preset:short", 0.0, 1.0, &[]));
        points.push(point("preset:long", 1.0, 2.0, &[]));
        write_all(&out, &points).unwrap();
        for name in ["resolution", "substeps", "iterations", "stages", "presets"] {
            assert_eq!(pixels(&out.join(format!("{name}.png"))).1, SIZE, "{name}");
        }
        // presets: one bar per row, the long preset's twice as long as the short one's
        let (image, (width, _)) = pixels(&out.join("presets.png"));
        let bar = [BAR.0, BAR.1, BAR.2];
        let per_row = image.chunks_exact(width as usize).map(|row| row.iter().filter(|&&p| p == bar).count());
        // the longest row of each run of bar rows (the whisker crosses the middle row)
        let mut lengths: Vec<usize> = Vec::new();
        let mut in_bar = false;
        for n in per_row {
            match (n > 0, in_bar, lengths.last_mut()) {
                (true, true, Some(longest)) => *longest = (*longest).max(n),
                (true, _, _) => lengths.push(n),
                _ => {}
            }
            in_bar = n > 0;
        }
        assert_eq!(lengths.len(), 2, "{lengths:?}");
        let ratio = lengths[0] as f64 / lengths[1] as f64;
        assert!((ratio - 0.5).abs() < 0.02, "the short preset is on top, half as long: {lengths:?}");
        // stages: projection takes twice the area of the external forces (60 % vs 30 % of every bar)
        let (image, _) = pixels(&out.join("stages.png"));
        let area = |layer: usize| {
            let c = Palette99::pick(layer).to_rgba();
            image.iter().filter(|&&p| p == [c.0, c.1, c.2]).count() as f64
        };
        let ratio = area(1) / area(0);
        assert!((ratio - 2.0).abs() < 0.1, "project / external forces area {ratio}");
        std::fs::remove_dir_all(&out).unwrap();
    }
}
