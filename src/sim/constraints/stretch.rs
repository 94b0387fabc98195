//! Stretching constraints C = |p1 − p2| − l0 (§4.1), projected by eq. (10)–(11).

use bevy::math::Vec3;

use super::access::{ParticleAccess, Slices};

/// Projects one distance constraint between particles `i` and `j` with rest length `rest` and (linearised)
/// stiffness `k`: eq. (10)–(11), the special case of eq. (8)–(9) for C = |p_i − p_j| − d.
#[inline]
pub fn project_distance(p: &mut impl ParticleAccess, i: usize, j: usize, rest: f32, k: f32) {
    let (wi, wj) = (p.w(i), p.w(j));
    let w_sum = wi + wj;
    if w_sum <= 0.0 {
        return;
    }
    let d = p.p(i) - p.p(j);
    let len = d.length();
    if len <= f32::EPSILON {
        return;
    }
    let correction = d * (k * (len - rest) / (len * w_sum));
    p.shift(i, -correction * wi);
    p.shift(j, correction * wj);
}

/// One Gauss–Seidel sweep over the stretch constraints `edges` with rest lengths `rest`, in array order.
#[inline]
pub fn sweep_stretch(p: &mut impl ParticleAccess, edges: &[[u32; 2]], rest: &[f32], k: f32) {
    for (&[a, b], &l0) in edges.iter().zip(rest) {
        project_distance(p, a as usize, b as usize, l0, k);
    }
}

/// One Gauss–Seidel sweep over all stretch constraints, in array order.
pub fn project_stretch(p: &mut [Vec3], w: &[f32], edges: &[[u32; 2]], rest: &[f32], k: f32) {
    sweep_stretch(&mut Slices { p, w }, edges, rest, k);
}

#[cfg(test)]
mod tests {
    use super::super::momentum;
    use super::*;

    #[test]
    fn full_stiffness_restores_rest_length_in_one_projection() {
        let mut p = vec![Vec3::ZERO, Vec3::new(2.0, 1.0, 0.5)];
        project_stretch(&mut p, &[1.0, 3.0], &[[0, 1]], &[1.0], 1.0);
        assert!((p[0].distance(p[1]) - 1.0).abs() < 1e-6);
    }

    #[test]
    fn conserves_linear_and_angular_momentum_with_unequal_masses() {
        let mass = [0.3f32, 2.0, 0.7];
        let w: Vec<f32> = mass.iter().map(|m| 1.0 / m).collect();
        let mut p = vec![Vec3::new(0.1, 0.2, 0.3), Vec3::new(1.7, -0.4, 0.9), Vec3::new(-0.5, 1.1, 0.2)];
        // each projection of a Gauss–Seidel sweep conserves both momenta (eq. 1–2)
        for (&[a, b], &rest) in [[0u32, 1], [1, 2], [2, 0]].iter().zip(&[1.0f32, 0.4, 2.5]) {
            let before = p.clone();
            project_stretch(&mut p, &w, &[[a, b]], &[rest], 0.8);
            assert!(before.iter().zip(&p).any(|(x, y)| x.distance(*y) > 0.05), "the projection moved nothing");
            let (linear, angular) = momentum::change(&before, &p, &mass);
            assert!(linear.length() < 1e-5, "linear momentum change {linear}");
            assert!(angular.length() < 1e-5, "angular momentum change {angular}");
        }
    }

    #[test]
    fn pinned_particle_does_not_move() {
        let mut p = vec![Vec3::ZERO, Vec3::X * 3.0];
        project_stretch(&mut p, &[0.0, 1.0], &[[0, 1]], &[1.0], 1.0);
        assert_eq!(p[0], Vec3::ZERO);
        assert!((p[1].x - 1.0).abs() < 1e-6);
    }

    #[test]
    fn coincident_particles_stay_finite() {
        let mut p = vec![Vec3::ONE, Vec3::ONE];
        project_stretch(&mut p, &[1.0, 1.0], &[[0, 1]], &[1.0], 1.0);
        assert!(p.iter().all(|q| q.is_finite()));
    }
}
