//! `momentum`: without gravity nothing outside acts on cloth and bodies, so their momenta are kept (Jolt's own
//! soft-body test checks a collision's to 5 %). A 0.5 kg ball thrown at 5 m/s into a free sheet, and a free sheet
//! spinning at 2 rad/s about its normal (its edges pull the corners in against the spin's outward pull).

use bevy::math::{Vec2, Vec3};
use bevy::prelude::World;

use super::{Check, Scorecard, app_for, first_cloth, grid_scene, largest, params};
use drape::scene::desc::{BodyDesc, ColliderDesc, PinSelector, Placement, SceneDesc};
use drape::sim::cloth::{ClothMaterial, Particles};
use drape::sim::collide::ColliderShape;
use drape::sim::params::Solver;
use drape::sim::rigid::ClothRigidBody;

/// Largest change of either momentum over the run, as a share of its start.
const TOLERANCE: f64 = 0.01;
/// Steps run: 2 s.
const FRAMES: u32 = 120;
/// The spin, rad/s.
const SPIN: f32 = 2.0;

/// A free level sheet 0.5 m across, 16 × 16 quads, at the origin, with no gravity, at 4 iterations × `substeps`.
fn free_sheet(name: &str, substeps: u32) -> SceneDesc {
    grid_scene(
        name,
        params(Solver::Xpbd, (4, substeps), 0.0, Vec3::ZERO),
        (16, 16, Vec2::splat(0.5)),
        Placement::default(),
        Vec::<PinSelector>::new(),
        ClothMaterial::default(),
    )
}

/// The linear momentum of every cloth and body, kg·m/s.
fn linear(world: &mut World) -> Vec3 {
    let cloth: Vec3 =
        world.query::<&Particles>().iter(world).flat_map(|p| p.v.iter().zip(&p.mass).map(|(v, m)| *v * *m)).sum();
    cloth + world.query::<&ClothRigidBody>().iter(world).map(ClothRigidBody::momentum).sum::<Vec3>()
}

/// The angular momentum of `particles` about their centre of mass, kg·m²/s.
fn angular(particles: &Particles) -> Vec3 {
    let mass: f32 = particles.mass.iter().sum();
    let centre = particles.x.iter().zip(&particles.mass).map(|(x, m)| *x * *m).sum::<Vec3>() / mass;
    (particles.x.iter().zip(&particles.v).zip(&particles.mass)).map(|((x, v), m)| (*x - centre).cross(*v) * *m).sum()
}

/// The largest change of the linear momentum over a ball's catch, as a share of the ball's.
pub fn catch() -> Result<f64, String> {
    let mut desc = free_sheet("catch", 8);
    desc.colliders.push(ColliderDesc {
        name: "ball".into(),
        shape: ColliderShape::Sphere { radius: 0.08 }.into(),
        placement: Placement::at(Vec3::new(0.05, 0.5, 0.02)),
        body: Some(BodyDesc { mass: 0.5, velocity: Vec3::NEG_Y * 5.0, angular_velocity: Vec3::ZERO }),
        ..ColliderDesc::ground()
    });
    let mut app = app_for(desc)?;
    let start = linear(app.world_mut());
    let mut changes = Vec::new();
    for _ in 0..FRAMES {
        app.update();
        changes.push(f64::from((linear(app.world_mut()) - start).length() / start.length()));
    }
    Ok(largest(changes))
}

/// The largest change of the angular momentum of a spinning free sheet at `substeps`, as a share of its start.
pub fn spin(substeps: u32) -> Result<f64, String> {
    let mut app = app_for(free_sheet("spin", substeps))?;
    let world = app.world_mut();
    let mut cloths = world.query::<&mut Particles>();
    for mut particles in cloths.iter_mut(world) {
        let Particles { x, v, .. } = &mut *particles;
        for (x, v) in x.iter().zip(v.iter_mut()) {
            *v = Vec3::Y.cross(*x) * SPIN;
        }
    }
    let start = angular(&first_cloth(app.world_mut())?);
    let mut changes = Vec::new();
    for _ in 0..FRAMES {
        app.update();
        changes.push(f64::from((angular(&first_cloth(app.world_mut())?) - start).length() / start.length()));
    }
    Ok(largest(changes))
}

/// The catch and the spin, at the default 4 × 8; the spin at more substeps reported.
pub fn check(card: &mut Scorecard) {
    let runs = [("momentum/linear_catch", catch()), ("momentum/angular_spin", spin(8))];
    for (name, run) in runs {
        card.checks.push(match run {
            Ok(change) => Check::new(name, change, 0.0, TOLERANCE),
            Err(e) => Check::failed(name, &e),
        });
    }
    for substeps in [16, 32] {
        if let Ok(change) = spin(substeps) {
            card.report(format!("momentum/angular_spin/4x{substeps}"), change, "change / start");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ball_caught_by_a_free_sheet_keeps_the_linear_momentum() {
        let change = catch().unwrap();
        assert!(change < TOLERANCE, "{change}");
    }
}
