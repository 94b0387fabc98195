//! `tensile`: a strip hanging from its top row under its own weight, against the linear statics of the truss
//! its XPBD edges make ([`truss`](super::truss)): an edge of compliance α stretches by α·F under a tension F, so
//! at rest the strip's extension and its most strained edge are the truss's.

use bevy::math::{DVec2, Vec2, Vec3};
use bevy::prelude::World;

use super::truss::Truss;
use super::{Check, Scorecard, grid_scene, largest, params, run_scene};
use drape::scene::desc::{BodyDesc, BodyGrip, ColliderDesc, PinSelector, Placement, SceneDesc};
use drape::sim::cloth::{ClothMaterial, Particles, StretchConstraints};
use drape::sim::collide::ColliderShape;
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
    hanging_sheet_with_weight((cols, rows, size), (solver, compliance), density, counts, None)
}

/// [`hanging_sheet`] with a box of `weight` kg (if any) held by its bottom row (a body grip, §4.2), just below it.
pub fn hanging_sheet_with_weight(
    (cols, rows, size): (u32, u32, Vec2),
    (solver, compliance): (Solver, f32),
    density: f32,
    counts: (u32, u32),
    weight: Option<f32>,
) -> SceneDesc {
    let material =
        ClothMaterial { density, stretch_compliance: compliance, bend_compliance: 0.0, ..Default::default() };
    // the grid's top row (v = 0, local z = −depth/2) turned up by a quarter turn about X
    let placement =
        Placement { translation: TOP - Vec3::Y * size.y * 0.5, rotation_degrees: Vec3::new(90.0, 0.0, 0.0) };
    let mut desc = grid_scene(
        "hanging_sheet",
        params(solver, counts, 0.3, Vec3::NEG_Y * G),
        (cols, rows, size),
        placement,
        vec![PinSelector::Row { v: 0.0 }],
        material,
    );
    if let Some(mass) = weight {
        let half = Vec3::new(0.5 * size.x, 0.005, 0.005);
        desc.colliders.push(ColliderDesc {
            name: "weight".into(),
            shape: ColliderShape::Box { half_extents: half }.into(),
            placement: Placement::at(TOP - Vec3::Y * (size.y + half.y)),
            body: Some(BodyDesc { mass, velocity: Vec3::ZERO, angular_velocity: Vec3::ZERO }),
            ..ColliderDesc::ground()
        });
        for cloth in &mut desc.cloths {
            cloth.body_grips.push(BodyGrip { body: "weight".into(), at: vec![PinSelector::Row { v: 1.0 }] });
        }
    }
    desc
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
    hang_with_weight(desc, (cols, rows, size), compliance, 0.0, frames)
}

/// [`hang`] for a [`hanging_sheet_with_weight`] of `weight` kg: the truss's bottom nodes share the weight equally
/// (exact for one column of quads, by symmetry).
pub fn hang_with_weight(
    desc: SceneDesc,
    (cols, rows, size): (u32, u32, Vec2),
    compliance: f32,
    weight: f32,
    frames: u32,
) -> Result<Hang, String> {
    let mut found = run_scene(desc, frames, false, |world, particles| measure(world, particles, (cols, rows, size)))?;
    let (rest, particles, edges) = found.pop().ok_or("no step was run")??;
    let bottom = rows as usize * (cols as usize + 1)..rest.len();
    let share = weight / bottom.len() as f32;
    let load = |i: usize, m: f32| DVec2::NEG_Y * f64::from((m + if bottom.contains(&i) { share } else { 0.0 }) * G);
    let truss = Truss {
        nodes: rest.iter().map(|q| DVec2::new(q.x.into(), q.y.into())).collect(),
        edges: edges.iter().map(|&[a, b]| (a as usize, b as usize, f64::from(compliance))).collect(),
        // the pinned top row (a body's held vertices have w = 0 as well)
        fixed: (0..rest.len()).map(|i| i <= cols as usize).collect(),
        loads: particles.mass.iter().enumerate().map(|(i, &m)| load(i, m)).collect(),
    };
    let u = truss.displacements().ok_or("the sheet's truss is not held")?;
    let mean = |values: &mut dyn Iterator<Item = f64>| values.sum::<f64>() / bottom.len() as f64;
    let measured_drop = mean(&mut bottom.clone().map(|i| f64::from(rest[i].y - particles.x[i].y)));
    let truss_drop = mean(&mut bottom.clone().map(|i| -u[i].y));
    let length = |q: &[Vec3], [a, b]: [u32; 2]| f64::from(q[a as usize].distance(q[b as usize]));
    let strains = edges.iter().map(|&e| length(&particles.x, e) / length(&rest, e) - 1.0);
    let measured_strain = largest(strains);
    let truss_strain = largest(truss.strains(&u));
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

/// The tensile strip: 2 cm × 20 cm, 1 × 10 quads, 1 kg/m², under its own weight (α = 0.005 m/N, 20 × 10) and
/// holding a 20 g weight, five times its own (α = 0.001 m/N, 100 × 10: converged, so that what is left is the
/// coupling's): strains below 1 %, where the truss's linear statics hold.
pub fn check(card: &mut Scorecard) {
    let (cols, rows, size) = (1, 10, Vec2::new(0.02, 0.2));
    let cases = [("own_weight", 0.005, None, (20, 10)), ("hanging_weight", 0.001, Some(0.02), (100, 10))];
    for (label, compliance, weight, counts) in cases {
        let desc = hanging_sheet_with_weight((cols, rows, size), (Solver::Xpbd, compliance), 1.0, counts, weight);
        let names = [format!("tensile/{label}/extension"), format!("tensile/{label}/largest_strain")];
        let hung = hang_with_weight(desc, (cols, rows, size), compliance, weight.unwrap_or(0.0), 180);
        let [extension, strain] = names;
        match hung {
            Ok(h) => {
                card.checks.push(Check::new(extension, h.drop.0, h.drop.1, TOLERANCE));
                card.checks.push(Check::new(strain, h.strain.0, h.strain.1, TOLERANCE));
            }
            Err(e) => {
                card.checks.push(Check::failed(extension, &e));
                card.checks.push(Check::failed(strain, &e));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hanging_strip_stretches_as_its_truss_under_its_own_weight_and_holding_a_weight() {
        let mut card = Scorecard::default();
        check(&mut card);
        assert_eq!(card.checks.len(), 4);
        assert!(card.checks.iter().all(|c| c.pass), "{:?}", card.checks);
    }

    #[test]
    fn a_weight_hanging_from_a_strip_stretches_it_alike_at_any_substep_count() {
        // Avian integrates the weight's fall in its own substeps: wound back by the cloth's instead, the weight
        // started each step a little off where the strip held it, and the strip carried 0.88 of its pull at 10
        // substeps and 0.74 at 40
        let (cols, rows, size, compliance, weight) = (1, 10, Vec2::new(0.02, 0.2), 0.001, 0.005);
        let hung = |substeps: u32, weight: Option<f32>| {
            let counts = (100, substeps);
            let desc = hanging_sheet_with_weight((cols, rows, size), (Solver::Xpbd, compliance), 1.0, counts, weight);
            hang_with_weight(desc, (cols, rows, size), compliance, weight.unwrap_or(0.0), 180)
        };
        for substeps in [10, 40] {
            let (with, without) = (hung(substeps, Some(weight)), hung(substeps, None));
            let (Ok(with), Ok(without)) = (with, without) else { panic!("{substeps} substeps: the scene failed") };
            // the weight's part of the extension over its truss's
            let part = (with.drop.0 - without.drop.0) / (with.drop.1 - without.drop.1);
            println!("{substeps} substeps: the weight's extension is {part:.4} of its truss's");
            assert!((part - 1.0).abs() < 0.02, "{substeps} substeps: {part}");
        }
    }
}
