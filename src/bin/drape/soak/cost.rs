//! The cost invariant's model: what a fixed step may cost, from `drape bench`'s linear model of particles ×
//! iterations × substeps (times the conjugate gradients' bound for a stretch system solved together) plus the
//! self-collision search's bounded work, both fitted on this machine before a soak.

use std::time::Instant;

use bevy::math::Vec3;
use rand::{Rng, SeedableRng};
use serde::Serialize;

use drape::headless::headless_app;
use drape::scene::desc::SceneDesc;
use drape::sim::constraints::global;
use drape::sim::params::Solver;
use drape::sim::selfcollide::{SelfContactSearch, find_self_contacts};

/// Milliseconds per fixed step predicted from particles × iterations × substeps, fitted like `drape bench`'s
/// lines, plus the self-collision search's worst case per particle and step.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct CostModel {
    /// Milliseconds per million particle-iterations.
    pub ms_per_million: f64,
    /// Milliseconds per step whatever the size.
    pub intercept_ms: f64,
    /// Milliseconds per million particles of a self-colliding cloth per step, measured where the search's
    /// per-vertex bounds bind (a pile of sheets folded within one thickness).
    pub self_search_ms_per_million: f64,
}

impl CostModel {
    /// A step may cost this many times the linear prediction before it counts as pathological...
    pub const FACTOR: f64 = 20.0;
    /// ... plus this many times the self-collision search's worst case (already the most the search's bounds
    /// allow; the factor covers the other scene sharing the cores)...
    pub const SEARCH_FACTOR: f64 = 2.0;
    /// ... plus this much, for small scenes whose steps are mostly fixed overhead.
    pub const SLACK_MS: f64 = 5.0;

    /// Fits the model on single-threaded sheets of two sizes, `drape bench`'s `grid_dihedral` workload, and
    /// times the self-collision search on a deep pile.
    pub fn calibrate() -> Self {
        let points: Vec<(f64, f64)> = [16u32, 48]
            .iter()
            .map(|&n| {
                let mut desc = drape::scene::workloads::grid_dihedral(n).unwrap_or_default();
                desc.params.parallel = false;
                let work = work_per_step(&desc, ((n + 1) * (n + 1)) as usize);
                let mut app = headless_app(desc);
                let clock = WorkClock::start();
                for _ in 0..30 {
                    app.update();
                }
                (work, clock.elapsed_ms() / 30.0)
            })
            .collect();
        let (slope, intercept, _) = crate::bench::fit(&points);
        Self {
            ms_per_million: slope.max(0.0),
            intercept_ms: intercept.max(0.0),
            self_search_ms_per_million: self_search_ms_per_million(),
        }
    }

    /// The most a step of `desc`, with `particles` particles, may cost.
    pub fn allowed_ms(&self, desc: &SceneDesc, particles: usize) -> f64 {
        // a system solved together costs at most one sweep's work per conjugate-gradient iteration
        let xpbd = desc.params.solver == Solver::Xpbd || desc.cloths.iter().any(|c| c.solver == Some(Solver::Xpbd));
        let systems = usize::from(desc.params.global_stretch) + usize::from(desc.params.global_bending);
        let global = if xpbd { systems * (1 + global::MAX_ITERATIONS) } else { 0 };
        let work = work_per_step(desc, particles) * (1 + global) as f64;
        let linear = self.intercept_ms + self.ms_per_million * work;
        // self-collision searches once per step; cloth against cloth, all cloths together, once per substep
        let self_searches = f64::from(u8::from(desc.params.self_collision));
        let cloth_searches = if desc.params.cloth_collision && desc.cloths.len() > 1 {
            f64::from(desc.params.sanitized().substeps)
        } else {
            0.0
        };
        let searched = (self_searches + cloth_searches) * particles as f64 / 1e6;
        Self::FACTOR * linear + Self::SEARCH_FACTOR * self.self_search_ms_per_million * searched + Self::SLACK_MS
    }
}

/// A clock of the calling thread's CPU time: what a step's own work costs, whatever else the machine runs (the
/// soak runs a scene per core, and a parallel scene's helper threads then share the cores with it, so wall
/// time would count the scheduler's choices). Falls back to wall time where the thread clock is unknown.
pub struct WorkClock(f64);

impl WorkClock {
    /// Starts the clock.
    pub fn start() -> Self {
        Self(thread_ms())
    }

    /// Milliseconds of this thread's CPU time since [`WorkClock::start`].
    pub fn elapsed_ms(&self) -> f64 {
        thread_ms() - self.0
    }
}

#[cfg(unix)]
fn thread_ms() -> f64 {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `now` is a valid timespec for the call to fill in.
    let read = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    if read == 0 { now.tv_sec as f64 * 1e3 + now.tv_nsec as f64 * 1e-6 } else { wall_ms() }
}

#[cfg(not(unix))]
fn thread_ms() -> f64 {
    wall_ms()
}

/// Milliseconds since the first call.
fn wall_ms() -> f64 {
    static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_secs_f64() * 1e3
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

/// The self-collision search, once per step, costs per vertex what its candidates cost, and a vertex sends at
/// most `MAX_CANDIDATES_PER_VERTEX` of them to the narrow phase: linear in the particles, but at a slope
/// the iterations do not predict (a cloth crumpled at one iteration searches as much as at fifty). This times
/// the search, single-threaded, on a pile of [`PILE_LAYERS`] sheets folded within one thickness, each vertex
/// sweeping two edges, where that bound is reached; milliseconds per million vertices, best of three.
fn self_search_ms_per_million() -> f64 {
    let (x, p, triangles, thickness) = pile();
    let mut search = SelfContactSearch::default();
    let mut contacts = Vec::new();
    let best = (0..3)
        .map(|_| {
            let clock = WorkClock::start();
            find_self_contacts(&mut search, &x, &p, &triangles, thickness, false, &mut contacts);
            clock.elapsed_ms()
        })
        .fold(f64::INFINITY, f64::min);
    best / x.len() as f64 * 1e6
}

/// Sheets in the calibration pile.
const PILE_LAYERS: u32 = 40;
/// Vertices per side of each sheet of the pile.
const PILE_SIDE: u32 = 10;

/// The calibration pile: (x, p, triangles, thickness). Layers `thickness / 2` apart, each jittered, so every
/// vertex's swept box overlaps triangles of every layer.
fn pile() -> (Vec<Vec3>, Vec<Vec3>, Vec<[u32; 3]>, f32) {
    let edge = 0.01;
    let thickness = edge / 2.0;
    let (mut x, mut triangles) = (Vec::new(), Vec::new());
    let mut rng = rand::rngs::StdRng::seed_from_u64(PILE_LAYERS as u64);
    for layer in 0..PILE_LAYERS {
        let base = x.len() as u32;
        let origin = Vec3::new(0.0, 0.0, layer as f32 * thickness / 2.0);
        for j in 0..PILE_SIDE {
            for i in 0..PILE_SIDE {
                let jitter = Vec3::new(rng.random_range(-0.2..0.2), rng.random_range(-0.2..0.2), 0.0) * edge;
                x.push(origin + Vec3::new(i as f32, j as f32, 0.0) * edge + jitter);
            }
        }
        for j in 0..PILE_SIDE - 1 {
            for i in 0..PILE_SIDE - 1 {
                let v = base + j * PILE_SIDE + i;
                triangles.push([v, v + 1, v + PILE_SIDE + 1]);
                triangles.push([v, v + PILE_SIDE + 1, v + PILE_SIDE]);
            }
        }
    }
    let p = x
        .iter()
        .map(|&v| {
            let sweep =
                Vec3::new(rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0));
            v + sweep * 2.0 * edge
        })
        .collect();
    (x, p, triangles, thickness)
}
