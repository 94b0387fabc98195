//! `drape soak`: random valid (and now and then invalid) scenes from the whole preset format, run headless on
//! every core, one scene per thread, with the invariants of [`invariants`] checked after every fixed step.
//! Every scene comes from its own seed, derived from the run's seed, so `--seed` alone reproduces a run; a
//! failing scene is also written as a `.ron` preset that reproduces it with `drape headless`.

pub mod generate;
pub mod invariants;

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
use crate::sim::cloth::{Attachments, BodyAttachments, Cloth, ClothMaterial, Collider, Particles, StretchConstraints};
use crate::sim::collide::shapes::Shape;
use crate::sim::integrate::MAX_SPEED;
use crate::sim::rigid::RigidBody;
use crate::sim::{SimParams, metrics};
use invariants::Violation;

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

/// At most this many violations of one invariant are kept per scene.
const KEPT_PER_INVARIANT: usize = 3;

fn record(outcome: &mut SceneOutcome, v: Violation) {
    if outcome.violations.iter().filter(|o| o.invariant == v.invariant).count() < KEPT_PER_INVARIANT {
        outcome.violations.push(v);
    }
}

/// Runs `desc` for the configured frames, checking the invariants after every fixed step.
fn watch(desc: SceneDesc, config: &SoakConfig, outcome: &mut SceneOutcome) {
    let params = desc.params.sanitized();
    let dt = 1.0 / params.rate_hz;
    let mut app = headless_app(desc.clone());
    if let Some(e) = &app.world().resource::<SceneStatus>().error {
        outcome.refused = Some(e.clone());
        return;
    }
    let world = app.world_mut();
    let mut before: Vec<(Entity, Vec<Vec3>)> =
        world.query::<(Entity, &Particles)>().iter(world).map(|(e, p)| (e, p.x.clone())).collect();
    outcome.particles = before.iter().map(|(_, x)| x.len()).sum();
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
                record(outcome, Violation { invariant: "cost", frame, detail });
            }
        }
        check_step(app.world_mut(), &params, dt, frame, &mut before, outcome);
    }
    outcome.ms_per_step = total_ms / config.frames.max(1) as f64;
}

/// The invariants after one fixed step; `before` holds each cloth's positions of the step before and is updated.
fn check_step(
    world: &mut World,
    params: &SimParams,
    dt: f32,
    frame: u32,
    before: &mut [(Entity, Vec<Vec3>)],
    outcome: &mut SceneOutcome,
) {
    let shapes: Vec<Shape> =
        world.query::<(&Collider, &Transform)>().iter(world).map(|(c, t)| c.shape.placed(t)).collect();
    let body_speed = world
        .query::<(&RigidBody, &Collider)>()
        .iter(world)
        .map(|(b, c)| b.velocity.length() + b.angular_velocity.length() * c.shape.placed(&Transform::IDENTITY).reach())
        .fold(0.0, f32::max);
    let anything_moves = body_speed > 0.0
        || world.query::<&Collider>().iter(world).any(|c| c.motion != crate::sim::collide::ColliderMotion::Static);
    let mut cloths =
        world
            .query::<(&Particles, &StretchConstraints, &ClothMaterial, &Attachments, Option<&BodyAttachments>, &Cloth)>(
            );
    for (entity, previous) in before.iter_mut() {
        let Ok((particles, stretch, material, attachments, holds, cloth)) = cloths.get(world, *entity) else {
            continue;
        };
        let name = &cloth.name;
        if !metrics::all_finite(&particles.x) {
            let detail = format!("{name}: a position is not finite");
            record(outcome, Violation { invariant: "finite", frame, detail });
        }
        let pin_speed = attachments.0.iter().map(|a| a.motion.max_speed(a.anchor)).fold(0.0, f32::max);
        let carrier = MAX_SPEED.max(pin_speed).max(body_speed);
        let allowed = carrier * dt * 1.001 + 1e-4;
        if let Some((i, moved)) = invariants::furthest_move(previous, &particles.x) {
            outcome.worst_move_ratio = outcome.worst_move_ratio.max(moved / allowed);
            if moved > allowed {
                let detail = format!("{name}: vertex {i} moved {moved:.3} m in one step; at most {allowed:.3} m");
                record(outcome, Violation { invariant: "speed", frame, detail });
            }
        }
        let thickness = material.thickness;
        let held_still =
            attachments.0.iter().all(|a| a.motion.max_speed(a.anchor) == 0.0) && holds.is_none_or(|h| h.0.is_empty());
        let pinned = !attachments.0.is_empty();
        if held_still
            && !(pinned && anything_moves)
            && let Some((i, depth)) = invariants::deepest_unsqueezed(&particles.x, &particles.w, &shapes, thickness)
            && depth > thickness + 1e-3
        {
            let detail = format!("{name}: vertex {i} is {:.1} mm inside a collider", depth * 1e3);
            record(outcome, Violation { invariant: "penetration", frame, detail });
        }
        if material.stretch_stiffness >= invariants::STIFF && !params.tearing && held_still {
            let margin = 3.0 * thickness + 0.02;
            let s =
                invariants::stretch_away_from(&particles.x, stretch.edges(), stretch.rest_length(), &shapes, margin);
            outcome.max_stiff_stretch = outcome.max_stiff_stretch.max(s);
            if s > invariants::STRETCH_BOUND {
                let detail = format!("{name}: an edge is at {:.2}× its rest length", s + 1.0);
                record(outcome, Violation { invariant: "stretch", frame, detail });
            }
        }
        previous.clone_from(&particles.x);
    }
}
