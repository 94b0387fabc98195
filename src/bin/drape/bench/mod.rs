//! `drape bench`: how the simulation time per frame grows with resolution, iterations and substeps, where the
//! time goes, and what every preset costs — measured headless on the same schedule as the app, each point the
//! median of repeated runs with its spread. Writes `bench.csv`, `summary.txt` and the PNG plots (`plots.rs`)
//! into an output folder.

mod plots;

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use drape::headless::headless_app_with;
use drape::scene::desc::SceneDesc;
use drape::scene::preset;
use drape::scene::workloads::{grid_distance, sheet, with_parallel, workload};
use drape::sim::StageTimings;
use drape::sim::cloth::Particles;

/// How much to measure.
#[derive(Clone, Copy, Debug)]
pub struct BenchConfig {
    /// Runs per point; the point is their median.
    pub repeats: u32,
    /// Frames simulated (and discarded) before timing.
    pub warmup: u32,
    /// Frames timed per run (fewer for very large cloths, at least 5).
    pub frames: u32,
    /// Record the run ([`drape::replay`]) and report the recording's cost per step as stage `record`.
    pub record: bool,
}

impl Default for BenchConfig {
    fn default() -> Self {
        Self { repeats: 3, warmup: 10, frames: 60, record: false }
    }
}

/// One measured point.
#[derive(Clone, Debug, Serialize)]
pub struct Point {
    /// The sweep: `resolution`, `substeps`, `iterations`, `grid_distance`, `threads:NAME` or `preset:NAME`.
    pub series: String,
    /// The swept quantity: grid size N, substeps, iterations, thread count, or the preset's number.
    pub x: f64,
    /// Particles in the scene.
    pub particles: usize,
    /// Median over the runs of the mean wall time per frame, ms.
    pub median_ms: f64,
    /// Fastest run's mean wall time per frame, ms.
    pub min_ms: f64,
    /// Slowest run's mean wall time per frame, ms.
    pub max_ms: f64,
    /// Mean ms per frame of each stage, in the median run.
    pub stage_ms: BTreeMap<String, f64>,
}

/// Times `desc`: `repeats` fresh runs, each `warmup` untimed frames then timed frames.
pub fn measure(series: &str, x: f64, desc: &SceneDesc, config: BenchConfig) -> Result<Point, String> {
    let mut runs: Vec<(f64, BTreeMap<String, f64>)> = Vec::new();
    let mut particles = 0;
    for _ in 0..config.repeats.max(1) {
        let mut app = headless_app_with(desc.clone(), |app| {
            app.add_plugins(drape::mesh_sync::ClothMeshPlugin);
            if config.record {
                app.add_plugins(drape::replay::ReplayPlugin);
            }
        });
        if let Some(e) = &app.world().resource::<drape::scene::spawn::SceneStatus>().error {
            return Err(e.clone());
        }
        particles = app.world_mut().query::<&Particles>().iter(app.world()).map(|p| p.len()).sum();
        let frames = (config.frames as usize * 4096 / particles.max(1)).clamp(5, config.frames as usize);
        for _ in 0..config.warmup {
            app.update();
        }
        *app.world_mut().resource_mut::<StageTimings>() = StageTimings::default();
        if let Some(mut recording) = app.world_mut().get_resource_mut::<drape::replay::Recording>() {
            recording.cost = Default::default();
        }
        for _ in 0..frames {
            app.update();
        }
        let timings = app.world().resource::<StageTimings>();
        let mut stages: BTreeMap<String, f64> =
            timings.mean_ms().iter().map(|(s, ms)| (s.name().to_string(), *ms)).collect();
        if let Some(recording) = app.world().get_resource::<drape::replay::Recording>() {
            stages.insert("record".into(), recording.mean_cost_ms());
        }
        runs.push((timings.mean_step_ms(), stages));
    }
    runs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (min_ms, max_ms) = (runs[0].0, runs[runs.len() - 1].0);
    let (median_ms, stage_ms) = runs.swap_remove(runs.len() / 2);
    Ok(Point { series: series.into(), x, particles, median_ms, min_ms, max_ms, stage_ms })
}

/// Least-squares line y = a + b·x through `points`: (slope b, intercept a, R²).
pub fn fit(points: &[(f64, f64)]) -> (f64, f64, f64) {
    let n = points.len() as f64;
    let (sx, sy) = points.iter().fold((0.0, 0.0), |(a, b), (x, y)| (a + x, b + y));
    let (mx, my) = (sx / n, sy / n);
    let sxy: f64 = points.iter().map(|(x, y)| (x - mx) * (y - my)).sum();
    let sxx: f64 = points.iter().map(|(x, _)| (x - mx).powi(2)).sum();
    let syy: f64 = points.iter().map(|(_, y)| (y - my).powi(2)).sum();
    let slope = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    let r2 = if sxx > 0.0 && syy > 0.0 { sxy * sxy / (sxx * syy) } else { 1.0 };
    (slope, my - slope * mx, r2)
}

/// Every sweep of the report; writes `bench.csv`, `summary.txt` and the plots into `out`.
pub fn run_all(out: &Path, config: BenchConfig) -> Result<Vec<Point>, String> {
    std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let mut points = Vec::new();
    let mut push = |p: Point| {
        eprintln!(
            "{:>12} {:>8} {:>7} particles  {:9.3} ms (min {:.3}, max {:.3})",
            p.series, p.x, p.particles, p.median_ms, p.min_ms, p.max_ms
        );
        points.push(p);
    };
    for n in [16, 32, 64, 128, 256] {
        push(measure("resolution", n as f64, &sheet(n, 4, 8)?, config)?);
    }
    for s in [1, 2, 4, 8, 16, 32] {
        push(measure("substeps", s as f64, &sheet(64, 4, s)?, config)?);
    }
    for i in [1, 2, 4, 8, 16, 32] {
        push(measure("iterations", i as f64, &sheet(64, i, 8)?, config)?);
    }
    for n in [32, 64, 127] {
        push(measure("grid_distance", n as f64, &grid_distance(n), config)?);
    }
    // threads: 1 vs all, on the two reference workloads
    for (name, n) in [("grid_distance", 127), ("grid_dihedral", 256)] {
        for parallel in [false, true] {
            let threads = drape::sim::parallel::solver_threads(parallel);
            push(measure(
                &format!("threads:{name}"),
                threads as f64,
                &with_parallel(workload(name, n)?, parallel),
                config,
            )?);
        }
    }
    // the cost of recording (record and replay) on the 64² sheet, beside the step it records
    push(measure("recording", 64.0, &sheet(64, 4, 8)?, BenchConfig { record: true, ..config })?);
    for (k, name) in preset::names().iter().enumerate() {
        let desc = preset::load(name).map_err(|e| e.to_string())?;
        let mut p = measure("preset", k as f64, &desc, config)?;
        p.series = format!("preset:{name}");
        push(p);
    }
    write_csv(&out.join("bench.csv"), &points)?;
    write_summary(&out.join("summary.txt"), &points)?;
    plots::write_all(out, &points)?;
    Ok(points)
}

fn write_csv(path: &Path, points: &[Point]) -> Result<(), String> {
    let stages: Vec<&str> = drape::sim::PbdStage::ALL.iter().map(|s| s.name()).collect();
    let mut text = format!("series,x,particles,median_ms,min_ms,max_ms,{}\n", stages.join(","));
    for p in points {
        let per_stage: Vec<String> =
            stages.iter().map(|s| format!("{:.4}", p.stage_ms.get(*s).unwrap_or(&0.0))).collect();
        text += &format!(
            "{},{},{},{:.4},{:.4},{:.4},{}\n",
            p.series,
            p.x,
            p.particles,
            p.median_ms,
            p.min_ms,
            p.max_ms,
            per_stage.join(",")
        );
    }
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

fn series<'a>(points: &'a [Point], name: &str) -> impl Iterator<Item = &'a Point> {
    let name = name.to_string();
    points.iter().filter(move |p| p.series == name)
}

fn write_summary(path: &Path, points: &[Point]) -> Result<(), String> {
    let mut text = String::new();
    let by_particles: Vec<(f64, f64)> =
        series(points, "resolution").map(|p| (p.particles as f64, p.median_ms)).collect();
    let (slope, _, r2) = fit(&by_particles);
    text += &format!("resolution: {:.3} µs per particle per frame, R² = {r2:.4}\n", slope * 1e3);
    for name in ["substeps", "iterations"] {
        let pts: Vec<(f64, f64)> = series(points, name).map(|p| (p.x, p.median_ms)).collect();
        let (slope, intercept, r2) = fit(&pts);
        text += &format!("{name}: {slope:.3} ms per {name} + {intercept:.3} ms, R² = {r2:.4}\n");
    }
    for p in series(points, "resolution").filter(|p| p.x == 64.0) {
        text += "stages at 64² (ms per frame):";
        for (stage, ms) in &p.stage_ms {
            text += &format!(" {stage} {ms:.3};");
        }
        text += "\n";
    }
    for p in series(points, "recording") {
        let record = p.stage_ms.get("record").copied().unwrap_or(0.0);
        let share = 100.0 * record / p.median_ms.max(1e-9);
        text += &format!("recording at 64²: {record:.3} ms per step, {share:.1} % of the {:.3} ms step\n", p.median_ms);
    }
    std::fs::write(path, &text).map_err(|e| format!("{}: {e}", path.display()))?;
    eprint!("{text}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_recovers_a_line() {
        let (slope, intercept, r2) = fit(&[(1.0, 3.0), (2.0, 5.0), (4.0, 9.0)]);
        assert!((slope - 2.0).abs() < 1e-9 && (intercept - 1.0).abs() < 1e-9 && (r2 - 1.0).abs() < 1e-9);
    }
}
