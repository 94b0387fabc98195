//! Constraint projection, lines (9)–(11) of §3.1: `iterations` Gauss–Seidel sweeps over every constraint in a
//! fixed order (stretch, bending, contacts), each projected by eq. (6)–(9) with inverse-mass weights.
//! Stiffness enters through k' = 1 − (1 − k)^(1/n_s) (§3.3) so the result does not depend on the iteration
//! count n_s.

pub mod attach;
pub mod bend;
pub mod stretch;

use bevy::math::Vec3;

use super::cloth::{BendConstraints, Contact, StretchConstraints};
use super::collide::contacts::project_contacts;
use super::params::{BendingModel, linearized};

/// Stiffness and model of one cloth's projection, already linearised for the iteration count.
#[derive(Clone, Copy, Debug)]
pub struct SolverSettings {
    pub iterations: u32,
    pub stretch_k: f32,
    pub bend_k: f32,
    pub bending_model: BendingModel,
    /// Friction coefficient μ of the contacts (static part, §3.4).
    pub friction: f32,
}

impl SolverSettings {
    /// Settings for `iterations` sweeps with the user stiffnesses k_stretch and k_bend (§3.3).
    pub fn new(iterations: u32, k_stretch: f32, k_bend: f32, bending_model: BendingModel, friction: f32) -> Self {
        let iterations = iterations.max(1);
        Self {
            iterations,
            stretch_k: linearized(k_stretch, iterations),
            bend_k: linearized(k_bend, iterations),
            bending_model,
            friction,
        }
    }
}

/// Lines (9)–(11): projects all constraints of one cloth `iterations` times onto the predictions `p`
/// (positions `x` at the start of the step are needed by contact friction).
pub fn project_constraints(
    p: &mut [Vec3],
    x: &[Vec3],
    w: &[f32],
    stretch: &StretchConstraints,
    bend: &BendConstraints,
    contacts: &mut [Contact],
    settings: SolverSettings,
) {
    for _ in 0..settings.iterations {
        stretch::project_stretch(p, w, &stretch.edges, &stretch.rest_length, settings.stretch_k);
        if settings.bend_k > 0.0 {
            match settings.bending_model {
                BendingModel::Dihedral => bend::project_dihedral(p, w, &bend.quads, &bend.rest_angle, settings.bend_k),
                BendingModel::Distance => {
                    bend::project_opposite_distance(p, w, &bend.quads, &bend.rest_distance, settings.bend_k)
                }
            }
        }
        project_contacts(p, x, w, contacts, settings.friction);
    }
}

/// Test helpers shared by the constraint tests: momenta of a set of particles.
#[cfg(test)]
pub(crate) mod momentum {
    use bevy::math::Vec3;

    /// Σ m_i Δp_i (eq. 1) and Σ r_i × m_i Δp_i about the origin (eq. 2).
    pub fn change(before: &[Vec3], after: &[Vec3], mass: &[f32]) -> (Vec3, Vec3) {
        let mut linear = Vec3::ZERO;
        let mut angular = Vec3::ZERO;
        for ((a, b), m) in before.iter().zip(after).zip(mass) {
            let d = (*b - *a) * *m;
            linear += d;
            angular += a.cross(d);
        }
        (linear, angular)
    }
}
