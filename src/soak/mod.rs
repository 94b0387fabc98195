//! `drape soak`: random valid (and now and then invalid) scenes from the whole preset format, run headless on
//! every core, one scene per thread, with the invariants of [`invariants`] checked after every fixed step.
//! Every scene comes from its own seed, derived from the run's seed, so `--seed` alone reproduces a run; a
//! failing scene is also written as a `.ron` preset that reproduces it with `drape headless`.

pub mod generate;
pub mod invariants;
pub mod long_run;
pub mod watch;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use bevy::prelude::*;
use serde::Serialize;

use crate::headless::headless_app;
use crate::scene::desc::SceneDesc;
use crate::scene::preset;
use crate::scene::spawn::SceneStatus;
use invariants::Violation;
use watch::StepWatch;

/// What to run.
#[derive(Clone, Debug)]
pub struct SoakConfig {
    /// Scenes to draw and run.
    pub scenes: u32,
    /// Fixed steps per scene.
    pub frames: u32,
    /// Seed of the whole run.
    pub seed: u64,
    /// Threads, each running one scene at a time.
    pub threads: usize,
    /// Where failing scenes are written as `.ron`; nowhere if `None`.
    pub out: Option<PathBuf>,
    /// The cost model steps are held to; `None` skips the cost invariant (tests: no test fails because the
    /// machine was slow).
    pub cost: Option<CostModel>,
}

/// Milliseconds per fixed step predicted from particles × iterations × substeps, fitted like `drape bench`'s
/// lines on this machine before the soak starts.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct CostModel {
    /// Milliseconds per million particle-iterations.
    pub ms_per_million: f64,
    /// Milliseconds per step whatever the size.
    pub intercept_ms: f64,
}

impl CostModel {
    /// A step may cost this many times the prediction before it counts as pathological.
    pub const FACTOR: f64 = 20.0;
    /// ... plus this much, for small scenes whose steps are mostly fixed overhead.
    pub const SLACK_MS: f64 = 5.0;

    /// Fits the model on single-threaded sheets of two sizes, `drape bench`'s `grid_dihedral` workload.
    pub fn calibrate() -> Self {
        let points: Vec<(f64, f64)> = [16u32, 48]
            .iter()
            .map(|&n| {
                let mut desc = crate::bench::grid_dihedral(n).unwrap_or_default();
                desc.params.parallel = false;
                let work = work_per_step(&desc, ((n + 1) * (n + 1)) as usize);
                let mut app = headless_app(desc);
                let start = Instant::now();
                for _ in 0..30 {
                    app.update();
                }
                (work, start.elapsed().as_secs_f64() * 1e3 / 30.0)
            })
            .collect();
        let (slope, intercept, _) = crate::bench::fit(&points);
        Self { ms_per_million: slope.max(0.0), intercept_ms: intercept.max(0.0) }
    }

    /// The most a step of `work` million particle-iterations may cost.
    pub fn allowed_ms(&self, work: f64) -> f64 {
        Self::FACTOR * (self.intercept_ms + self.ms_per_million * work) + Self::SLACK_MS
    }
}

/// Million particle-iterations per fixed step, each cloth counted with [`PHASE_OVERHEAD`] more particles.
fn work_per_step(desc: &SceneDesc, particles: usize) -> f64 {
    let p = desc.params.sanitized();
    let counted = particles + PHASE_OVERHEAD * desc.cloths.len();
    counted as f64 * p.iterations as f64 * p.substeps as f64 / 1e6
}

/// What a cloth's colour phases cost per iteration whatever its size, in particles: a tiny cloth's iterations
/// are mostly the hand-over from one colour to the next.
const PHASE_OVERHEAD: usize = 100;

/// How one scene ended.
#[derive(Clone, Debug, Serialize)]
pub struct SceneOutcome {
    /// Its place in the run.
    pub index: u32,
    /// The scene's own seed ([`scene_seed`]).
    pub seed: u64,
    /// Particles at the start; 0 if refused.
    pub particles: usize,
    /// The reason, if the parser or the scene builder refused it.
    pub refused: Option<String>,
    /// Broken invariants (at most a few per invariant).
    pub violations: Vec<Violation>,
    /// Largest stretch of a stiff, held-still, untorn cloth away from colliders.
    pub max_stiff_stretch: f32,
    /// Cloth steps whose stretch was not checked because the step does not resolve it
    /// ([`invariants::Resolution`]).
    pub unresolved_stretch_checks: u64,
    /// Largest one-step move over the bound on it (≤ 1 holds).
    pub worst_move_ratio: f32,
    /// Mean wall time per step, milliseconds.
    pub ms_per_step: f64,
    /// Where the scene was written, if it failed.
    pub file: Option<String>,
}

impl SceneOutcome {
    /// Whether the scene broke one of the [`invariants::GUARANTEED`] invariants.
    pub fn breaks_a_guarantee(&self) -> bool {
        self.violations.iter().any(|v| invariants::GUARANTEED.contains(&v.invariant))
    }
}

/// What `drape soak` prints.
#[derive(Clone, Debug, Serialize)]
pub struct SoakSummary {
    /// The run's seed.
    pub seed: u64,
    /// Scenes drawn.
    pub scenes: u32,
    /// Fixed steps per scene.
    pub frames: u32,
    /// Scenes that ran.
    pub ran: u32,
    /// Scenes refused with a reason (values beyond their range, a balloon that is not closed, ...).
    pub refused: u32,
    /// Scenes that broke an invariant.
    pub failed: u32,
    /// Scenes that broke one of the [`invariants::GUARANTEED`] invariants.
    pub failed_guaranteed: u32,
    /// Invariant → scenes that broke it.
    pub failures_by_invariant: std::collections::BTreeMap<&'static str, u32>,
    /// The cost model used, if any.
    pub cost_model: Option<CostModel>,
    /// Largest stretch of a stiff, held-still, untorn cloth away from colliders, over all scenes.
    pub max_stiff_stretch: f32,
    /// Cloth steps, over all scenes, whose stretch the step does not resolve and which were not checked.
    pub unresolved_stretch_checks: u64,
    /// Largest one-step move over its bound, over all scenes.
    pub worst_move_ratio: f32,
    /// Slowest scene's mean milliseconds per step.
    pub slowest_ms_per_step: f64,
    /// Wall time of the whole soak, seconds.
    pub wall_seconds: f64,
    /// The failing scenes.
    pub failures: Vec<SceneOutcome>,
}

/// The seed of scene `index` of a run seeded with `seed` (SplitMix64, so neighbouring indices give unrelated
/// scenes).
pub fn scene_seed(seed: u64, index: u32) -> u64 {
    let mut z = seed.wrapping_add((index as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Runs the soak: every scene of the run on `config.threads` threads.
pub fn run(config: &SoakConfig) -> SoakSummary {
    let start = Instant::now();
    let next = AtomicUsize::new(0);
    let outcomes = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..config.threads.max(1) {
            scope.spawn(|| {
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed) as u32;
                    if index >= config.scenes {
                        break;
                    }
                    let outcome = run_scene(config, index);
                    if let Ok(mut all) = outcomes.lock() {
                        all.push(outcome);
                    }
                }
            });
        }
    });
    let mut outcomes = outcomes.into_inner().unwrap_or_default();
    outcomes.sort_by_key(|o| o.index);
    summarize(config, outcomes, start.elapsed().as_secs_f64())
}

fn summarize(config: &SoakConfig, outcomes: Vec<SceneOutcome>, wall_seconds: f64) -> SoakSummary {
    let mut summary = SoakSummary {
        seed: config.seed,
        scenes: config.scenes,
        frames: config.frames,
        ran: 0,
        refused: 0,
        failed: 0,
        failed_guaranteed: 0,
        failures_by_invariant: Default::default(),
        cost_model: config.cost,
        max_stiff_stretch: 0.0,
        unresolved_stretch_checks: 0,
        worst_move_ratio: 0.0,
        slowest_ms_per_step: 0.0,
        wall_seconds,
        failures: Vec::new(),
    };
    for outcome in outcomes {
        if outcome.refused.is_some() {
            summary.refused += 1;
            continue;
        }
        summary.ran += 1;
        summary.max_stiff_stretch = summary.max_stiff_stretch.max(outcome.max_stiff_stretch);
        summary.unresolved_stretch_checks += outcome.unresolved_stretch_checks;
        summary.worst_move_ratio = summary.worst_move_ratio.max(outcome.worst_move_ratio);
        summary.slowest_ms_per_step = summary.slowest_ms_per_step.max(outcome.ms_per_step);
        if !outcome.violations.is_empty() {
            summary.failed += 1;
            summary.failed_guaranteed += u32::from(outcome.breaks_a_guarantee());
            let mut kinds: Vec<_> = outcome.violations.iter().map(|v| v.invariant).collect();
            kinds.dedup();
            for kind in kinds {
                *summary.failures_by_invariant.entry(kind).or_default() += 1;
            }
            summary.failures.push(outcome);
        }
    }
    summary
}

/// Draws scene `index`, sends it through the preset parser as its `.ron` text, runs it and checks it.
pub fn run_scene(config: &SoakConfig, index: u32) -> SceneOutcome {
    let seed = scene_seed(config.seed, index);
    let mut outcome = SceneOutcome {
        index,
        seed,
        particles: 0,
        refused: None,
        violations: Vec::new(),
        max_stiff_stretch: 0.0,
        unresolved_stretch_checks: 0,
        worst_move_ratio: 0.0,
        ms_per_step: 0.0,
        file: None,
    };
    let drawn = generate::scene(seed);
    let text = match preset::to_ron(&drawn) {
        Ok(text) => text,
        Err(e) => {
            outcome.refused = Some(e.to_string());
            return outcome;
        }
    };
    let file = format!("{}.ron", drawn.name);
    let desc = match preset::parse(text.as_bytes(), &file) {
        Ok(desc) => desc,
        Err(e) => {
            outcome.refused = Some(e.to_string());
            return outcome;
        }
    };
    let ran = catch_unwind(AssertUnwindSafe(|| watch(desc, config, &mut outcome)));
    if let Err(panic) = ran {
        let message = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        outcome.violations.push(Violation { invariant: "panic", frame: 0, detail: message });
    }
    if !outcome.violations.is_empty()
        && let Some(dir) = &config.out
    {
        outcome.file = write_failure(dir, &file, &text, &outcome.violations);
    }
    outcome
}

/// Writes the failing scene with its violations as comments on top; returns its path.
fn write_failure(dir: &Path, file: &str, text: &str, violations: &[Violation]) -> Option<String> {
    let notes: String =
        violations.iter().map(|v| format!("// frame {}: {}: {}\n", v.frame, v.invariant, v.detail)).collect();
    let path = dir.join(file);
    std::fs::create_dir_all(dir).ok()?;
    std::fs::write(&path, format!("{notes}{text}")).ok()?;
    Some(path.display().to_string())
}

/// Steps whose mean cost is held to the model: long enough that a step delayed by the operating system does not
/// count, short enough that a few slow steps of pathological collision work do.
const COST_WINDOW: u32 = 10;

/// Runs `desc` for the configured frames, checking the invariants after every fixed step.
fn watch(desc: SceneDesc, config: &SoakConfig, outcome: &mut SceneOutcome) {
    let mut app = headless_app(desc.clone());
    if let Some(e) = &app.world().resource::<SceneStatus>().error {
        outcome.refused = Some(e.clone());
        return;
    }
    let mut step_watch = StepWatch::new(app.world_mut());
    outcome.particles = step_watch.particles();
    let allowed_ms = config.cost.map(|m| m.allowed_ms(work_per_step(&desc, outcome.particles)));
    let (mut total_ms, mut window_ms) = (0.0, 0.0);
    for frame in 1..=config.frames {
        let start = Instant::now();
        app.update();
        let ms = start.elapsed().as_secs_f64() * 1e3;
        total_ms += ms;
        window_ms += ms;
        if frame % COST_WINDOW == 0 {
            let mean = std::mem::take(&mut window_ms) / COST_WINDOW as f64;
            if let Some(allowed) = allowed_ms
                && mean > allowed
            {
                let detail =
                    format!("{mean:.1} ms per step over {COST_WINDOW} steps; the model allows {allowed:.1} ms");
                step_watch.record(Violation { invariant: "cost", frame, detail });
            }
        }
        step_watch.after_step(app.world_mut(), frame);
    }
    outcome.ms_per_step = total_ms / config.frames.max(1) as f64;
    outcome.max_stiff_stretch = step_watch.max_stiff_stretch;
    outcome.unresolved_stretch_checks = step_watch.unresolved_stretch_checks;
    outcome.worst_move_ratio = step_watch.worst_move_ratio;
    outcome.violations.append(&mut step_watch.violations);
}
