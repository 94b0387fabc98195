//! `drape fidelity`: a scorecard of drape's cloth against what textbook mechanics and the textile laboratory
//! say it should do. Each check builds a scene, runs it headless with the library's whole schedule and compares
//! one measured figure with its reference; a few figures are reported without a bound (PBD's stiffness has no
//! physical unit). docs/fidelity.md gives the method of each check and the figures.

pub mod cantilever;
pub mod cusick;
pub mod elastica;
pub mod energy;
pub mod hinge;
pub mod independence;
pub mod momentum;
pub mod plots;
pub mod tensile;
pub mod truss;

use bevy::prelude::*;
use serde::Serialize;

use drape::headless::headless_app_of;
use drape::plugins::ClothSolverPlugins;
use drape::scene::desc::{ClothDesc, ClothShape, PinSelector, Placement, SceneDesc};
use drape::scene::spawn::SceneStatus;
use drape::sim::SimParams;
use drape::sim::SleepPlugin;
use drape::sim::cloth::{ClothMaterial, Particles};
use drape::sim::params::Solver;

/// One comparison of a measured figure with its reference.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Check {
    /// What was measured, `family/case`.
    pub name: String,
    /// The figure drape gives.
    pub measured: f64,
    /// The figure theory or the laboratory gives.
    pub reference: f64,
    /// The largest |measured − reference| / |reference| that passes (|measured − reference| for a zero
    /// reference).
    pub tolerance: f64,
    /// Whether the figure is within the tolerance.
    pub pass: bool,
}

impl Check {
    /// Compares `measured` with `reference` to `tolerance` (relative, absolute for a zero reference). A
    /// non-finite figure fails.
    pub fn new(name: impl Into<String>, measured: f64, reference: f64, tolerance: f64) -> Self {
        let error = (measured - reference).abs() / if reference == 0.0 { 1.0 } else { reference.abs() };
        Self { name: name.into(), measured, reference, tolerance, pass: error <= tolerance }
    }

    /// A check that `measured` is at most `bound` (a gain that must not happen).
    pub fn at_most(name: impl Into<String>, measured: f64, bound: f64) -> Self {
        Self { name: name.into(), measured, reference: bound, tolerance: 0.0, pass: measured <= bound }
    }

    /// A failed check for a scene that could not run.
    fn failed(name: impl Into<String>, reason: &str) -> Self {
        eprintln!("fidelity: {reason}");
        Self { name: name.into(), measured: f64::NAN, reference: f64::NAN, tolerance: 0.0, pass: false }
    }
}

/// The largest of `values`, NaN if any is NaN (a run that went non-finite fails its check instead of hiding in a
/// fold that skips NaN); −∞ for none.
pub fn largest(values: impl IntoIterator<Item = f64>) -> f64 {
    values.into_iter().fold(f64::NEG_INFINITY, |a, b| if a.is_nan() || b.is_nan() { f64::NAN } else { a.max(b) })
}

/// A figure reported without a bound.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Report {
    /// What was measured.
    pub name: String,
    /// The figure.
    pub value: f64,
    /// Its unit.
    pub unit: String,
}

/// What `drape fidelity` prints.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Scorecard {
    /// The comparisons.
    pub checks: Vec<Check>,
    /// Figures reported for contrast, not checked.
    pub reports: Vec<Report>,
}

impl Scorecard {
    /// Whether every check passes.
    pub fn passed(&self) -> bool {
        self.checks.iter().all(|c| c.pass)
    }

    fn report(&mut self, name: impl Into<String>, value: f64, unit: &str) {
        self.reports.push(Report { name: name.into(), value, unit: unit.into() });
    }
}

/// Every check, in the order of docs/fidelity.md.
pub fn run() -> Scorecard {
    let mut card = Scorecard::default();
    cantilever::check(&mut card);
    cusick::check(&mut card);
    independence::check(&mut card);
    tensile::check(&mut card);
    hinge::check(&mut card);
    energy::check(&mut card);
    momentum::check(&mut card);
    card
}

/// `desc` as a headless App, before its first step; an error if the scene does not build. Without
/// [`SleepPlugin`]: a small cloth swinging slowly into its rest would be frozen a few percent short of it (every
/// vertex slower than `SLEEP_SPEED` for a second), and the scorecard measures the solver's rest.
pub fn app_for(desc: SceneDesc) -> Result<App, String> {
    let app = headless_app_of(desc, ClothSolverPlugins.build().disable::<SleepPlugin>(), |_| {});
    match &app.world().resource::<SceneStatus>().error {
        Some(e) => Err(e.clone()),
        None => Ok(app),
    }
}

/// The first cloth's particles in `world`.
pub fn first_cloth(world: &mut World) -> Result<Particles, String> {
    world.query::<&Particles>().iter(world).next().cloned().ok_or_else(|| "the scene has no cloth".into())
}

/// `desc` run headless for `frames` fixed steps, then `measure` on each step's end state (`every`: after every
/// step; otherwise after the last only), with the first cloth's particles ([`app_for`]).
pub fn run_scene<T>(
    desc: SceneDesc,
    frames: u32,
    every: bool,
    mut measure: impl FnMut(&mut World, &Particles) -> T,
) -> Result<Vec<T>, String> {
    let mut app = app_for(desc)?;
    let mut found = Vec::new();
    for frame in 1..=frames {
        app.update();
        if every || frame == frames {
            let particles = first_cloth(app.world_mut())?;
            found.push(measure(app.world_mut(), &particles));
        }
    }
    Ok(found)
}

/// The first cloth's particles after `frames` fixed steps of `desc`.
pub fn settle(desc: SceneDesc, frames: u32) -> Result<Particles, String> {
    let mut last = run_scene(desc, frames, false, |_, particles| particles.clone())?;
    last.pop().ok_or_else(|| "no step was run".into())
}

/// A scene of one cloth of `shape`, placed by `placement`, with `pins`, `material` and `params`, and nothing else
/// (not even the default scene's ground).
pub fn cloth_scene(
    name: &str,
    params: SimParams,
    shape: ClothShape,
    placement: Placement,
    pins: Vec<PinSelector>,
    material: ClothMaterial,
) -> SceneDesc {
    SceneDesc {
        name: name.into(),
        params,
        cloths: vec![ClothDesc { name: name.into(), shape, placement, pins, material, ..ClothDesc::default() }],
        colliders: Vec::new(),
        ..SceneDesc::default()
    }
}

/// [`cloth_scene`] of a grid cloth `cols` × `rows` quads of `size` (width, depth) metres.
pub fn grid_scene(
    name: &str,
    params: SimParams,
    (cols, rows, size): (u32, u32, Vec2),
    placement: Placement,
    pins: Vec<PinSelector>,
    material: ClothMaterial,
) -> SceneDesc {
    let shape = ClothShape::Grid { cols, rows, width: size.x, depth: size.y };
    cloth_scene(name, params, shape, placement, pins, material)
}

/// The solver settings of a scorecard scene: `solver` with `iterations` × `substeps` at 60 Hz, §3.5 damping
/// `damping`, gravity `gravity`, no air.
pub fn params(solver: Solver, (iterations, substeps): (u32, u32), damping: f32, gravity: Vec3) -> SimParams {
    SimParams { solver, iterations, substeps, rate_hz: 60.0, gravity, damping, air_drag: 0.0, ..SimParams::default() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_non_finite_figure_fails_its_check() {
        assert!(largest([1.0, f64::NAN, 3.0]).is_nan(), "a fold with f64::max would say 3");
        assert_eq!(largest([1.0, 3.0, 2.0]), 3.0);
        assert!(!Check::new("x", f64::NAN, 1.0, 0.5).pass);
        assert!(!Check::at_most("x", f64::NAN, 1.0).pass);
        assert!(Check::new("x", 1.01, 1.0, 0.02).pass && !Check::new("x", 1.03, 1.0, 0.02).pass);
        assert!(Check::new("x", 0.005, 0.0, 0.01).pass, "a zero reference compares absolutely");
    }
}
