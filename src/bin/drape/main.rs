//! The `drape` command, the desktop demo built on the library: the window app (default), `headless`, `bench`,
//! `soak`, `fidelity`. Parses arguments, builds the App, nothing else. The demo's own code — the renderer and views
//! ([`render`]), the egui panel ([`ui`]), the window ([`window`]), the benchmark ([`bench`]) and the random-scene
//! soak ([`soak`]) — lives beside this file and is no part of the library's API.

mod bench;
mod fidelity;
mod render;
mod soak;
mod ui;
mod window;

#[cfg(test)]
mod tests;

use std::path::PathBuf;
use std::process::ExitCode;

use crate::render::views::ViewMode;
use crate::window::{ScreenshotPlan, window_app};
use clap::{Parser, Subcommand};
use drape::scene::{desc::SceneDesc, preset};

#[derive(Parser, Debug)]
#[command(name = "drape", version, about = "Real-time Position Based Dynamics cloth you can grab")]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Preset to open: a name from assets/presets or a path to a .ron file.
    #[arg(long, default_value = "hanging_sheet")]
    preset: String,
    /// Save a PNG of the window after `--frames` frames, then exit.
    #[arg(long)]
    screenshot: Option<PathBuf>,
    /// Frames to render before the screenshot.
    #[arg(long, default_value_t = 60)]
    frames: u32,
    /// What to show of the cloth (keys 1–7 in the window).
    #[arg(long, value_enum, default_value_t = ViewMode::Shaded)]
    view: ViewMode,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run a scene with no window and print a JSON report on stdout.
    Headless {
        /// Preset to run: a name from assets/presets or a path to a .ron file.
        #[arg(long, default_value = "hanging_sheet")]
        preset: String,
        /// Fixed steps to simulate.
        #[arg(long, default_value_t = 600)]
        frames: u32,
        /// Override the scene's solver iterations.
        #[arg(long)]
        iterations: Option<u32>,
        /// Override the scene's substeps.
        #[arg(long)]
        substeps: Option<u32>,
        /// Project on one thread instead of the whole compute pool.
        #[arg(long)]
        single_threaded: bool,
        /// After the run, write the cloths to this Wavefront OBJ file.
        #[arg(long)]
        export_obj: Option<PathBuf>,
        /// Record the run and write every frame of it to this binary glTF (.glb) file, as an animation.
        #[arg(long)]
        export_gltf: Option<PathBuf>,
    },
    /// Measure simulation time per frame; writes bench.csv, summary.txt and PNG plots into --out, or times one
    /// workload and prints JSON.
    Bench {
        /// Folder for the CSV and the plots.
        #[arg(long, default_value = "bench-out")]
        out: std::path::PathBuf,
        /// Time only this workload (`grid_distance`, `grid_dihedral`, `sheet`, or a preset by name) and print JSON.
        #[arg(long)]
        workload: Option<String>,
        /// Quads per side of the workload's grid.
        #[arg(long, default_value_t = 127)]
        grid: u32,
        /// Project on one thread instead of the whole compute pool.
        #[arg(long)]
        single_threaded: bool,
        /// Runs per point (the median is reported).
        #[arg(long, default_value_t = 3)]
        repeats: u32,
        /// Frames timed per run.
        #[arg(long, default_value_t = 60)]
        frames: u32,
        /// Frames run before timing (a contact workload's cloth lands in them).
        #[arg(long, default_value_t = 10)]
        warmup: u32,
        /// Record the run (record and replay) and report its cost per step as stage `record`.
        #[arg(long)]
        record: bool,
    },
    /// Run random scenes drawn from the whole preset format, check invariants after every step, print a JSON
    /// summary and write every failing scene as a .ron preset into --out.
    Soak {
        /// Scenes to draw and run.
        #[arg(long, default_value_t = 100)]
        scenes: u32,
        /// Fixed steps per scene.
        #[arg(long, default_value_t = 240)]
        frames: u32,
        /// Seed of the run: the same seed draws the same scenes.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Folder for failing scenes.
        #[arg(long, default_value = "soak-failures")]
        out: PathBuf,
        /// Threads (default: every core).
        #[arg(long)]
        threads: Option<usize>,
        /// Skip the per-step cost check.
        #[arg(long)]
        no_cost_check: bool,
        /// Fail on any broken invariant, not only on panics, non-finite positions and moves beyond the speed cap.
        #[arg(long)]
        strict: bool,
        /// Check only this preset (a name or a `.ron` file, such as a failing scene the soak wrote) and print
        /// its outcome.
        #[arg(long)]
        replay: Option<String>,
        /// Write scene N of the run (such as the `slowest_scene` a run printed) into `--out` as a `.ron` preset
        /// and exit.
        #[arg(long, value_name = "N")]
        write_scene: Option<u32>,
    },
    /// Run shipped presets for many simulated minutes, sampled every simulated second, and print a JSON array:
    /// kinetic energy in each half, drift of the cloth after the first minute, stretch, collider distance.
    Long {
        /// Simulated minutes per preset.
        #[arg(long, default_value_t = 30.0)]
        minutes: f32,
        /// Only this preset (default: every shipped preset).
        #[arg(long)]
        preset: Option<String>,
    },
    /// Run the fidelity scorecard (docs/fidelity.md): drape's cloth against textbook mechanics and the textile
    /// laboratory's tests. Prints JSON; fails if a check does.
    Fidelity {
        /// Also write the plot of the cantilever strips into this folder (docs/fidelity).
        #[arg(long)]
        plots: Option<PathBuf>,
    },
}

fn load(name: &str) -> Result<SceneDesc, String> {
    preset::load(name).map_err(|e| e.to_string())
}

/// Prints `value` as pretty JSON on stdout: success, or failure with the reason on stderr.
fn print_json(value: &impl serde::Serialize) -> ExitCode {
    match serde_json::to_string_pretty(value) {
        Ok(json) => {
            println!("{json}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("drape: {e}");
            ExitCode::FAILURE
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Some(Command::Headless { preset, frames, iterations, substeps, single_threaded, export_obj, export_gltf }) => {
            let desc = load(&preset).map(|mut desc| {
                desc.params.iterations = iterations.unwrap_or(desc.params.iterations);
                desc.params.substeps = substeps.unwrap_or(desc.params.substeps);
                desc.params.parallel &= !single_threaded;
                desc
            });
            let record = |app: &mut bevy::prelude::App| {
                if export_gltf.is_some() {
                    app.add_plugins(drape::replay::ReplayPlugin);
                    // keep every frame of the run
                    app.world_mut().resource_mut::<drape::replay::Recording>().seconds = f32::INFINITY;
                }
            };
            let export = |world: &mut bevy::prelude::World| {
                if let Some(path) = &export_obj {
                    drape::export::obj::save_obj(path, &drape::export::cloth_surfaces(world))?;
                }
                if let Some(path) = &export_gltf {
                    let steps: Vec<_> = world.resource::<drape::replay::Recording>().steps().iter().cloned().collect();
                    drape::export::gltf::save_glb(path, &steps)?;
                }
                Ok(())
            };
            match desc.and_then(|desc| drape::headless::run_then(desc, frames, record, export)) {
                Ok((report, ())) => print_json(&report),
                Err(e) => {
                    eprintln!("drape: {e}");
                    ExitCode::from(2)
                }
            }
        }
        Some(Command::Bench { out, workload, grid, single_threaded, repeats, frames, warmup, record }) => {
            let config = crate::bench::BenchConfig { repeats, frames, warmup, record };
            let result = match workload.as_deref() {
                None => {
                    crate::bench::run_all(&out, config).map(|_| format!("{{\"out\": {:?}}}", out.display().to_string()))
                }
                Some(name) => drape::scene::workloads::workload(name, grid)
                    .map(|desc| drape::scene::workloads::with_parallel(desc, !single_threaded))
                    .and_then(|desc| crate::bench::measure(name, grid as f64, &desc, config))
                    .and_then(|p| serde_json::to_string_pretty(&p).map_err(|e| e.to_string())),
            };
            match result {
                Ok(json) => {
                    println!("{json}");
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("drape: {e}");
                    ExitCode::from(2)
                }
            }
        }
        Some(Command::Soak { scenes, frames, seed, out, threads, no_cost_check, strict, replay, write_scene }) => {
            if let Some(index) = write_scene {
                return match crate::soak::write_scene(seed, index, &out) {
                    Ok(path) => {
                        println!("{}", path.display());
                        ExitCode::SUCCESS
                    }
                    Err(e) => {
                        eprintln!("drape: {e}");
                        ExitCode::from(2)
                    }
                };
            }
            let threads = threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
            let cost = (!no_cost_check).then(crate::soak::CostModel::calibrate);
            let config = crate::soak::SoakConfig { scenes, frames, seed, threads, out: Some(out), cost };
            if let Some(name) = replay {
                return match load(&name) {
                    Ok(desc) => {
                        let outcome = crate::soak::check_scene(&config, desc);
                        let failed = if strict { !outcome.violations.is_empty() } else { outcome.breaks_a_guarantee() };
                        print_json(&outcome);
                        if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS }
                    }
                    Err(e) => {
                        eprintln!("drape: {e}");
                        ExitCode::from(2)
                    }
                };
            }
            let summary = crate::soak::run(&config);
            match serde_json::to_string_pretty(&summary) {
                Ok(json) => println!("{json}"),
                Err(e) => eprintln!("drape: {e}"),
            }
            let failed = if strict { summary.failed } else { summary.failed_guaranteed };
            if failed == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE }
        }
        Some(Command::Long { minutes, preset }) => {
            let names = preset.map_or_else(drape::scene::preset::names, |name| vec![name]);
            let mut runs = Vec::new();
            for name in names {
                match load(&name) {
                    Ok(desc) => runs.push(crate::soak::long_run::long_run(desc, minutes)),
                    Err(e) => {
                        eprintln!("drape: {e}");
                        return ExitCode::from(2);
                    }
                }
            }
            print_json(&runs)
        }
        Some(Command::Fidelity { plots }) => {
            if let Some(out) = plots {
                let written = std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()));
                if let Err(e) = written.and_then(|()| crate::fidelity::plots::write_all(&out)) {
                    eprintln!("drape: {e}");
                    return ExitCode::from(2);
                }
            }
            let card = crate::fidelity::run();
            let printed = print_json(&card);
            if card.passed() { printed } else { ExitCode::FAILURE }
        }
        None => {
            let desc = match load(&cli.preset) {
                Ok(d) => d,
                Err(e) => {
                    eprintln!("drape: {e}");
                    return ExitCode::from(2);
                }
            };
            let plan = cli.screenshot.map(|path| ScreenshotPlan::new(path, cli.frames));
            match window_app(desc, plan, cli.view).run() {
                bevy::app::AppExit::Success => ExitCode::SUCCESS,
                bevy::app::AppExit::Error(code) => ExitCode::from(code.get()),
            }
        }
    }
}
