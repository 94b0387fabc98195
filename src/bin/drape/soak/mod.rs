//! `drape soak`: random valid (and now and then invalid) scenes from the whole preset format, run headless on
//! every core, one scene per thread, with the invariants of [`invariants`] checked after every fixed step.
//! Every scene comes from its own seed, derived from the run's seed, so `--seed` alone reproduces a run; a
//! failing scene is also written as a `.ron` preset that reproduces it with `drape headless`.

pub mod cost;
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

pub use cost::{CostModel, WorkClock};
use drape::headless::{ENERGY_FLOOR, EnergyWatch, headless_app};
use drape::scene::desc::SceneDesc;
use drape::scene::preset;
use drape::scene::spawn::SceneStatus;
use drape::sim::cloth::{ClothCollider, StartingOverlaps};
use drape::sim::collide::shapes::{Shape, box_corner_sign};
use drape::sim::rigid::ClothRigidBody;
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
    /// Vertex steps deeper in a collider than the bound but held by the speed cap, so not counted
    /// ([`invariants::Depths`]).
    pub capped_depth_skips: u64,
    /// Largest one-step move over the bound on it (≤ 1 holds).
    pub worst_move_ratio: f32,
    /// Free vertex moves the speed cap shortened (an alarm: `capped` fails a scene whose carriers are slow).
    pub capped_moves: u64,
    /// Whether and how the energy was checked: `checked`, `open` (something outside does work) or `overlap` (a
    /// cloth or a body started inside a collider, or a collider through a cloth triangle, [`Energy`]).
    pub energy: Energy,
    /// In a checked scene, the largest (E − E₀) / max(E₀, 1 mJ) after a step.
    pub energy_gain: Option<f32>,
    /// Mean CPU time of the scene's thread per step, milliseconds ([`WorkClock`]).
    pub ms_per_step: f64,
    /// Where the scene was written, if it failed.
    pub file: Option<String>,
}

impl SceneOutcome {
    /// A scene not run yet.
    fn new(index: u32, seed: u64) -> Self {
        Self {
            index,
            seed,
            particles: 0,
            refused: None,
            violations: Vec::new(),
            max_stiff_stretch: 0.0,
            unresolved_stretch_checks: 0,
            capped_depth_skips: 0,
            worst_move_ratio: 0.0,
            capped_moves: 0,
            energy: Energy::Open,
            energy_gain: None,
            ms_per_step: 0.0,
            file: None,
        }
    }

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
    /// Vertex steps left out of the depth bound because the speed cap held them, over all scenes.
    pub capped_depth_skips: u64,
    /// Largest one-step move over its bound, over all scenes.
    pub worst_move_ratio: f32,
    /// Free vertex moves the speed cap shortened, over all scenes.
    pub capped_moves: u64,
    /// Scenes by how their energy was checked ([`Energy`]): the exclusions counted.
    pub energy_checks: std::collections::BTreeMap<Energy, u32>,
    /// The largest energy gain of a checked scene.
    pub max_energy_gain: Option<f32>,
    /// Slowest scene's mean CPU milliseconds per step.
    pub slowest_ms_per_step: f64,
    /// The slowest scene's place in the run (dump it with `generate::scene(scene_seed(seed, index))`).
    pub slowest_scene: u32,
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
        capped_depth_skips: 0,
        worst_move_ratio: 0.0,
        capped_moves: 0,
        energy_checks: Default::default(),
        max_energy_gain: None,
        slowest_ms_per_step: 0.0,
        slowest_scene: 0,
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
        summary.capped_depth_skips += outcome.capped_depth_skips;
        summary.worst_move_ratio = summary.worst_move_ratio.max(outcome.worst_move_ratio);
        summary.capped_moves += outcome.capped_moves;
        *summary.energy_checks.entry(outcome.energy).or_default() += 1;
        if let Some(gain) = outcome.energy_gain {
            summary.max_energy_gain = Some(summary.max_energy_gain.map_or(gain, |g| g.max(gain)));
        }
        if outcome.ms_per_step > summary.slowest_ms_per_step {
            (summary.slowest_ms_per_step, summary.slowest_scene) = (outcome.ms_per_step, outcome.index);
        }
        if !outcome.violations.is_empty() {
            summary.failed += 1;
            summary.failed_guaranteed += u32::from(outcome.breaks_a_guarantee());
            for kind in broken_invariants(&outcome.violations) {
                *summary.failures_by_invariant.entry(kind).or_default() += 1;
            }
            summary.failures.push(outcome);
        }
    }
    summary
}

/// Writes scene `index` of the run with `seed` into `dir` as its `.ron` preset (to replay or open it); returns
/// its path.
pub fn write_scene(seed: u64, index: u32, dir: &Path) -> Result<PathBuf, String> {
    let drawn = generate::scene(scene_seed(seed, index));
    let text = preset::to_ron(&drawn).map_err(|e| e.to_string())?;
    let path = dir.join(format!("{}.ron", drawn.name));
    std::fs::create_dir_all(dir)
        .and_then(|_| std::fs::write(&path, text))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path)
}

/// Runs a given scene, such as a failing one read back, and checks it as the soak does.
pub fn check_scene(config: &SoakConfig, desc: SceneDesc) -> SceneOutcome {
    let mut outcome = SceneOutcome::new(0, desc.seed);
    if let Err(panic) = catch_unwind(AssertUnwindSafe(|| watch(desc, config, &mut outcome))) {
        outcome.violations.push(panic_violation(panic));
    }
    outcome
}

/// Draws scene `index`, sends it through the preset parser as its `.ron` text, runs it and checks it.
pub fn run_scene(config: &SoakConfig, index: u32) -> SceneOutcome {
    let seed = scene_seed(config.seed, index);
    let mut outcome = SceneOutcome::new(index, seed);
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
    if let Err(panic) = catch_unwind(AssertUnwindSafe(|| watch(desc, config, &mut outcome))) {
        outcome.violations.push(panic_violation(panic));
    }
    if !outcome.violations.is_empty()
        && let Some(dir) = &config.out
    {
        outcome.file = write_failure(dir, &file, &text, &outcome.violations);
    }
    outcome
}

/// The `panic` violation of a caught panic, with its message.
fn panic_violation(panic: Box<dyn std::any::Any + Send>) -> Violation {
    let detail = panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default();
    Violation { invariant: "panic", frame: 0, detail }
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

/// Steps whose median cost is held to the model: a step the operating system delayed (a helper thread that lost
/// its core, a busy host) is one or two of them and does not count, while pathological collision work slows
/// most of them. The first window is not held to it: its steps grow every buffer to the scene's size and start
/// the solver's helper threads.
const COST_WINDOW: usize = 10;

/// The median of `values` (reordered).
fn median(values: &mut [f64]) -> f64 {
    values.sort_unstable_by(f64::total_cmp);
    let mid = values.len() / 2;
    if values.len().is_multiple_of(2) { (values[mid - 1] + values[mid]) / 2.0 } else { values[mid] }
}

/// How a scene's energy was checked: only a closed scene ([`SceneDesc::is_closed`]) must not gain any.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Energy {
    /// Closed: E ≤ E₀ + 1 % E₀ + 1 mJ after every step ([`ENERGY_SLACK`]).
    Checked,
    /// Open: wind, moving pins, grips or colliders, throws or a balloon's pressure do work on it.
    Open,
    /// Closed, but a cloth or a body started inside a collider, or a collider through a cloth triangle: lifting it
    /// out raises its potential energy.
    Overlap,
}

/// The rise of a closed scene's energy allowed over its start E₀: this share of E₀, plus [`ENERGY_FLOOR`].
pub const ENERGY_SLACK: f32 = 0.01;

/// Runs `desc` for the configured frames, checking the invariants after every fixed step.
fn watch(desc: SceneDesc, config: &SoakConfig, outcome: &mut SceneOutcome) {
    let mut app = headless_app(desc.clone());
    if let Some(e) = &app.world().resource::<SceneStatus>().error {
        outcome.refused = Some(e.clone());
        return;
    }
    let mut step_watch = StepWatch::new(app.world_mut());
    outcome.particles = step_watch.particles();
    let mut energy = desc.is_closed().then(|| EnergyWatch::new(app.world_mut()));
    if energy.is_some() {
        outcome.energy = Energy::Checked;
    }
    let body_overlap = body_starts_inside_a_collider(app.world_mut());
    let allowed_ms = config.cost.map(|m| m.allowed_ms(&desc, outcome.particles));
    let mut total_ms = 0.0;
    let mut window_ms = [0.0; COST_WINDOW];
    for frame in 1..=config.frames {
        let clock = WorkClock::start();
        app.update();
        let ms = clock.elapsed_ms();
        total_ms += ms;
        let slot = (frame as usize - 1) % COST_WINDOW;
        window_ms[slot] = ms;
        if slot == COST_WINDOW - 1
            && frame as usize > COST_WINDOW
            && let Some(allowed) = allowed_ms
        {
            let median = median(&mut window_ms);
            if median > allowed {
                let detail = format!(
                    "{median:.1} CPU ms a step (the median of {COST_WINDOW} steps); the model allows {allowed:.1} ms"
                );
                step_watch.record(Violation { invariant: "cost", frame, detail });
            }
        }
        step_watch.after_step(app.world_mut(), frame);
        if frame == 1 && energy.is_some() && (body_overlap || starts_inside_a_collider(app.world_mut())) {
            energy = None;
            outcome.energy = Energy::Overlap;
        }
        if let Some(watch) = &mut energy {
            let now = watch.after_step(app.world_mut());
            let allowed = watch.start * (1.0 + ENERGY_SLACK) + ENERGY_FLOOR;
            if now > allowed {
                let detail = format!("{now:.4} J after {:.4} J at the start; at most {allowed:.4} J", watch.start);
                step_watch.record(Violation { invariant: "energy", frame, detail });
            }
        }
    }
    outcome.energy_gain = energy.map(|watch| watch.gain());
    outcome.ms_per_step = total_ms / config.frames.max(1) as f64;
    outcome.max_stiff_stretch = step_watch.max_stiff_stretch;
    outcome.unresolved_stretch_checks = step_watch.unresolved_stretch_checks;
    outcome.capped_depth_skips = step_watch.capped_depth_skips;
    outcome.worst_move_ratio = step_watch.worst_move_ratio;
    outcome.capped_moves = step_watch.capped_moves;
    outcome.violations.append(&mut step_watch.violations);
}

/// Whether a cloth started inside a collider, a vertex or a triangle ([`StartingOverlaps`], measured in the first
/// step).
fn starts_inside_a_collider(world: &mut World) -> bool {
    let inside = |o: &StartingOverlaps| !o.allowance().is_empty() || o.triangles_started_inside();
    world.query::<&StartingOverlaps>().iter(world).any(inside)
}

/// Whether a body starts more than a millimetre inside another collider: a point of its solid (a ball's centre, a
/// capsule's segment, each grown by the radius; a box's centre and corners) lies that deep in the other's shape.
/// Its engine lifts it out, which raises its potential energy as lifting a cloth out does. A barrel is no body's
/// collider (Avian has no such shape), so a body in its solid stays there and counts for nothing.
fn body_starts_inside_a_collider(world: &mut World) -> bool {
    const DEPTH: f32 = 1e-3;
    let mut colliders = world.query::<(Entity, &ClothCollider, &Transform, Has<ClothRigidBody>)>();
    let shapes: Vec<(Entity, Shape, bool)> =
        colliders.iter(world).map(|(e, c, pose, body)| (e, c.shape.placed(pose), body)).collect();
    shapes.iter().filter(|(_, _, body)| *body).any(|(e, body, _)| {
        let (points, radius) = solid_points(body);
        let inside = |other: &Shape| points.iter().any(|&q| other.signed_distance(q) < radius - DEPTH);
        let lifts = |shape: &Shape| !matches!(shape, Shape::Barrel { .. });
        shapes.iter().any(|(other, shape, _)| other != e && lifts(shape) && inside(shape))
    })
}

/// Points of a body's solid and the radius the solid reaches around each (none for shapes no body has).
fn solid_points(shape: &Shape) -> (Vec<Vec3>, f32) {
    match *shape {
        Shape::Sphere { center, radius } => (vec![center], radius),
        Shape::Capsule { a, b, radius } => (vec![a, (a + b) / 2.0, b], radius),
        Shape::Box { center, rotation, half_extents } => {
            let corners = (0..8).map(|k| center + rotation * (box_corner_sign(k) * half_extents));
            (std::iter::once(center).chain(corners).collect(), 0.0)
        }
        _ => (Vec::new(), 0.0),
    }
}

/// The invariants `violations` break, each once: a scene's violations of several invariants come interleaved by
/// frame, so a run without the sort counted a scene once per change of invariant.
fn broken_invariants(violations: &[Violation]) -> Vec<&'static str> {
    let mut kinds: Vec<_> = violations.iter().map(|v| v.invariant).collect();
    kinds.sort_unstable();
    kinds.dedup();
    kinds
}

#[cfg(test)]
mod tests {
    use super::{Violation, broken_invariants, median};

    #[test]
    fn a_scene_counts_once_per_invariant_it_breaks() {
        let at = |invariant, frame| Violation { invariant, frame, detail: String::new() };
        let interleaved = [at("capped", 1), at("energy", 2), at("capped", 3), at("energy", 4), at("capped", 5)];
        assert_eq!(broken_invariants(&interleaved), ["capped", "energy"]);
        assert!(broken_invariants(&[]).is_empty());
    }

    #[test]
    fn a_delayed_step_does_not_move_the_windows_median_but_slow_steps_do() {
        let mut delayed = [1.9, 2.0, 1.8, 230.0, 1.9, 2.1, 1.9, 2.0, 12.0, 1.8];
        assert_eq!(median(&mut delayed), 1.95);
        let mut slow = [40.0, 41.0, 2.0, 39.0, 42.0, 40.0, 2.0, 38.0, 40.0, 41.0];
        assert_eq!(median(&mut slow), 40.0);
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
    }
}
