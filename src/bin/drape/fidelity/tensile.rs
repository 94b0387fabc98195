//! `tensile`: a strip hanging from its top row under its own weight, against the linear statics of the truss
//! its XPBD edges make ([`truss`](super::truss)): an edge of compliance α stretches by α·F under a tension F, so
//! at rest the strip's extension and its most strained edge are the truss's.

use bevy::math::{DVec2, Vec2, Vec3};
use bevy::prelude::World;

use super::truss::Truss;
use super::{Check, Scorecard, grid_scene, params, run_scene};
use drape::scene::desc::{PinSelector, Placement, SceneDesc};
use drape::sim::cloth::{ClothMaterial, Particles, StretchConstraints};
use drape::sim::mesh::grid;
use drape::sim::params::Solver;

/// Gravity, m/s².
const G: f32 = 9.81;
/// Where the middle of a hanging sheet's top row is, metres.
const TOP: Vec3 = Vec3::new(0.0, 1.0, 0.0);
/// Largest relative error of the extension and of the largest strain.
const TOLERANCE: f64 = 0.02;

/// A sheet `cols` × `rows` quads of `size` metres hanging in the XY plane from its top row, its edges of
/// compliance `compliance` (m/N with XPBD; PBD's stiffness with PBD) and areal density `density`.
pub fn hanging_sheet(
    (cols, rows, size): (u32, u32, Vec2),
    (solver, compliance): (Solver, f32),
    density: f32,
    counts: (u32, u32),
) -> SceneDesc {
    let material =
        ClothMaterial { density, stretch_compliance: compliance, bend_compliance: 0.0, ..Default::default() };
    // the grid's top row (v = 0, local z = −depth/2) turned up by a quarter turn about X
    let placement =
        Placement { translation: TOP - Vec3::Y * size.y * 0.5, rotation_degrees: Vec3::new(90.0, 0.0, 0.0) };
    grid_scene(
        "hanging_sheet",
        params(solver, counts, 0.3, Vec3::NEG_Y * G),
        (cols, rows, size),
        placement,
        vec![PinSelector::Row { v: 0.0 }],
        material,
    )
}

/// What a hanging sheet did and what its truss does: (measured, reference) of the bottom row's mean drop, metres,
/// and of the largest edge strain.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hang {
    /// The bottom row's mean drop from its rest height (measured, truss).
    pub drop: (f64, f64),
    /// The largest (l − l0)/l0 over the edges (measured, truss).
    pub strain: (f64, f64),
}

/// Runs `desc` (a [`hanging_sheet`] of `cols` × `rows` quads of `size` and compliance `compliance`) for `frames` steps
/// and compares it with its truss.
pub fn hang(
    desc: SceneDesc,
    (cols, rows, size): (u32, u32, Vec2),
    compliance: f32,
    frames: u32,
) -> Result<Hang, String> {
    let mut found = run_scene(desc, frames, false, |world, particles| measure(world, particles, (cols, rows, size)))?;
    let (rest, particles, edges) = found.pop().ok_or("no step was run")??;
    let truss = Truss {
        nodes: rest.iter().map(|q| DVec2::new(q.x.into(), q.y.into())).collect(),
        edges: edges.iter().map(|&[a, b]| (a as usize, b as usize, f64::from(compliance))).collect(),
        fixed: particles.w.iter().map(|&w| w == 0.0).collect(),
        loads: particles.mass.iter().map(|&m| DVec2::NEG_Y * f64::from(m * G)).collect(),
    };
    let u = truss.displacements().ok_or("the sheet's truss is not held")?;
    let bottom = rows as usize * (cols as usize + 1)..rest.len();
    let mean = |values: &mut dyn Iterator<Item = f64>| values.sum::<f64>() / bottom.len() as f64;
    let measured_drop = mean(&mut bottom.clone().map(|i| f64::from(rest[i].y - particles.x[i].y)));
    let truss_drop = mean(&mut bottom.clone().map(|i| -u[i].y));
    let length = |q: &[Vec3], [a, b]: [u32; 2]| f64::from(q[a as usize].distance(q[b as usize]));
    let strains = edges.iter().map(|&e| length(&particles.x, e) / length(&rest, e) - 1.0);
    let measured_strain = strains.fold(f64::MIN, f64::max);
    let truss_strain = truss.strains(&u).into_iter().fold(f64::MIN, f64::max);
    Ok(Hang { drop: (measured_drop, truss_drop), strain: (measured_strain, truss_strain) })
}

/// The sheet's rest positions (from its grid), its particles and its edges.
type Measured = Result<(Vec<Vec3>, Particles, Vec<[u32; 2]>), String>;

fn measure(world: &mut World, particles: &Particles, (cols, rows, size): (u32, u32, Vec2)) -> Measured {
    let stretch = world.query::<&StretchConstraints>().iter(world).next().ok_or("the sheet has no edges")?;
    let edges = stretch.edges().to_vec();
    // the grid as [`hanging_sheet`] places it: local z turned to −y, the top row at TOP
    let grid = grid(cols, rows, size.x, size.y).map_err(|e| e.to_string())?;
    let rest = grid.positions.iter().map(|q| Vec3::new(q.x, TOP.y - 0.5 * size.y - q.z, 0.0)).collect();
    Ok((rest, particles.clone(), edges))
}

/// The tensile strip: 2 cm × 20 cm, 1 × 10 quads, 1 kg/m², α = 0.005 m/N (strains below 1 %, where the truss's
/// linear statics hold).
pub fn check(card: &mut Scorecard) {
    let (cols, rows, size, compliance) = (1, 10, Vec2::new(0.02, 0.2), 0.005);
    let desc = hanging_sheet((cols, rows, size), (Solver::Xpbd, compliance), 1.0, (20, 10));
    match hang(desc, (cols, rows, size), compliance, 180) {
        Ok(h) => {
            card.checks.push(Check::new("tensile/extension", h.drop.0, h.drop.1, TOLERANCE));
            card.checks.push(Check::new("tensile/largest_strain", h.strain.0, h.strain.1, TOLERANCE));
        }
        Err(e) => {
            card.checks.push(Check::failed("tensile/extension", &e));
            card.checks.push(Check::failed("tensile/largest_strain", &e));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hanging_strip_stretches_as_its_truss() {
        let mut card = Scorecard::default();
        check(&mut card);
        assert_eq!(card.checks.len(), 2);
        assert!(card.passed(), "{:?}", card.checks);
    }
}
