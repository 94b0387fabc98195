//! `hinge`: one hinge of XPBD's dihedral bending (§4.1) bent by a known torque. A 1 × 1 grid is two triangles
//! on a diagonal; three corners are pinned and the fourth, of mass m at distance d from the hinge, is pulled by
//! gravity g square to its arm where the hinge is bent by β/2, so the torque at a bend β is m·g·d·cos(β − β/2).
//! At rest the constraint's multiplier balances it: β = α·m·g·d·cos(β/2) with compliance α
//! (`knobs::BEND_COMPLIANCE`, rad per N·m). Gravity square to the arm at half the bend, not at the bend itself,
//! turns the wing the right way from the start (at 120° the torque of gravity square to the bent arm would turn
//! the flat wing the other way, to the equilibrium of the opposite bend).

use std::f32::consts::PI;

use bevy::math::{Vec2, Vec3};

use super::{Check, Scorecard, grid_scene, params, settle};
use drape::scene::desc::{PinSelector, Placement, SceneDesc};
use drape::sim::cloth::ClothMaterial;
use drape::sim::params::Solver;

/// The grid's side, metres.
const SIDE: f32 = 0.1;
/// The hinge's compliance, rad/(N·m).
const COMPLIANCE: f32 = 1000.0;
/// Gravity, m/s².
const G: f32 = 9.81;
/// Where the hinge's axis passes, metres.
const AT: Vec3 = Vec3::new(0.0, 1.0, 0.0);
/// Largest relative error of the angle.
const TOLERANCE: f64 = 0.02;

/// The hinge's bend at rest in a scene made to bend it by `target` radians, or why it did not run.
pub fn bend_at_rest(target: f32, frames: u32) -> Result<f32, String> {
    let particles = settle(scene(target), frames)?;
    let tip = particles.x.get(1).ok_or("the grid has no second vertex")?;
    let arm = *tip - AT;
    Ok(arm.dot(Vec3::Y).atan2(arm.dot(free_arm())))
}

/// From the axis (the diagonal from vertex 0 to vertex 3) to the free vertex 1 of the flat grid, unit length.
fn free_arm() -> Vec3 {
    Vec3::new(1.0, 0.0, -1.0).normalize()
}

/// The scene bending the hinge by `target` radians: gravity along the free vertex's path at half that bend, and
/// the areal density that gives the free vertex (a third of one triangle) the mass for it.
pub fn scene(target: f32) -> SceneDesc {
    let (arm, half) = (SIDE / 2f32.sqrt(), 0.5 * target);
    let mass = target / (COMPLIANCE * G * arm * half.cos());
    let density = mass / (SIDE * SIDE / 6.0);
    let gravity = G * (Vec3::Y * half.cos() - free_arm() * half.sin());
    let material =
        ClothMaterial { density, stretch_compliance: 0.0, bend_compliance: COMPLIANCE, ..Default::default() };
    grid_scene(
        &format!("hinge_{:.0}", target.to_degrees()),
        params(Solver::Xpbd, (10, 10), 0.2, gravity),
        (1, 1, Vec2::splat(SIDE)),
        Placement { translation: AT, ..Default::default() },
        vec![PinSelector::Indices(vec![0, 2, 3])],
        material,
    )
}

/// The hinge bent to 30°, 60° and 120°.
pub fn check(card: &mut Scorecard) {
    for degrees in [30.0f32, 60.0, 120.0] {
        let name = format!("hinge/{degrees:.0}deg");
        let target = degrees * PI / 180.0;
        card.checks.push(match bend_at_rest(target, 300) {
            Ok(bend) => Check::new(name, f64::from(bend.to_degrees()), f64::from(degrees), TOLERANCE),
            Err(e) => Check::failed(name, &e),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hinge_bent_far_holds_the_angle_its_compliance_gives() {
        let mut card = Scorecard::default();
        check(&mut card);
        assert_eq!(card.checks.len(), 3);
        for c in &card.checks {
            assert!(c.pass, "{c:?}");
        }
    }
}
