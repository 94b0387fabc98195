//! Bending constraints (§4.1, Fig. 4): the paper's dihedral-angle constraint C = arccos(n1·n2) − φ0 with the
//! gradients of Appendix A (eq. 25–29), and the cheaper opposite-vertex distance constraint.
//!
//! For a pair of triangles (p1, p3, p2) and (p1, p2, p4) sharing the edge p1–p2, Appendix A shifts p1 to the
//! origin, takes n1 = p2×p3/|p2×p3|, n2 = p2×p4/|p2×p4| and d = n1·n2. The projection is robust: a degenerate
//! triangle (|p2×p3| ≈ 0), (anti)parallel normals where 1 − d² vanishes, or a zero denominator skip the
//! constraint for this sweep instead of producing NaN, and one projection corrects at most
//! [`MAX_ANGLE_STEP`] of angle.

use bevy::math::Vec3;

use super::access::{ParticleAccess, Slices};
use super::stretch::project_distance;

/// Below this sine of a triangle's corner angle the triangle counts as degenerate.
const DEGENERATE_SINE: f32 = 1e-6;
/// Below this value of 1 − d² (normals within 0.01 rad of (anti)parallel) the pair is skipped: at d = ±1 the
/// gradient of arccos d is undefined, and in f32 the direction of eq. (25)–(28) is noise well before that. Near
/// the flat rest state the skipped error is below 0.01 rad; a pair folded completely over (d = 1 with a flat rest)
/// has no preferred side to unfold to.
const PARALLEL: f32 = 1e-4;
/// Largest angle error one projection corrects, radians. Eq. (29) is a Newton step on the linearisation of
/// eq. (3), valid for small errors; a pair folded far from its rest angle (a crumpled, very stretchy cloth) would
/// overshoot wildly, so it unfolds over several sweeps instead.
pub const MAX_ANGLE_STEP: f32 = 0.3;

/// The dihedral angle arccos(n1·n2) of `[p1, p2, p3, p4]` in radians (§4.1), or `None` if a triangle is
/// degenerate.
pub fn dihedral_angle([p1, p2, p3, p4]: [Vec3; 4]) -> Option<f32> {
    let (e, a, b) = (p2 - p1, p3 - p1, p4 - p1);
    let (c1, c2) = (e.cross(a), e.cross(b));
    let (l1, l2) = (c1.length(), c2.length());
    if l1 <= DEGENERATE_SINE * e.length() * a.length() || l2 <= DEGENERATE_SINE * e.length() * b.length() {
        return None;
    }
    Some((c1 / l1).dot(c2 / l2).clamp(-1.0, 1.0).acos())
}

/// The correction vectors q1…q4 of eq. (25)–(28) (q_i = −∇_{p_i} d) and d itself, or `None` where the
/// gradient is undefined.
///
/// Degenerate triangles and (anti)parallel normals are rejected before any square root: with e = p2 − p1,
/// a = p3 − p1, b = p4 − p1, the identity (e×a)×(e×b) = (e·(a×b)) e gives
/// 1 − d² = |n1 × n2|² = (e·(a×b))² |e|² / (|e×a|² |e×b|²), so the test needs only products. Most pairs of a
/// hanging sheet are within [`PARALLEL`] of flat, and this keeps them cheap.
// always: a call per pair costs as much as its early-out, and the compiler's choice flips with unrelated edits
#[inline(always)]
fn appendix_a_gradients([p1, p2, p3, p4]: [Vec3; 4]) -> Option<([Vec3; 4], f32)> {
    let (p2, p3, p4) = (p2 - p1, p3 - p1, p4 - p1);
    let (c23, c24) = (p2.cross(p3), p2.cross(p4));
    let (s23, s24, edge2) = (c23.length_squared(), c24.length_squared(), p2.length_squared());
    let triple = c23.dot(p4);
    // (anti)parallel normals first, the common exit; a NaN in any position makes `triple` NaN
    if triple.is_nan() || triple * triple * edge2 < PARALLEL * s23 * s24 {
        return None;
    }
    const SINE2: f32 = DEGENERATE_SINE * DEGENERATE_SINE;
    if s23 <= SINE2 * edge2 * p3.length_squared() || s24 <= SINE2 * edge2 * p4.length_squared() {
        return None;
    }
    let (l23, l24) = (s23.sqrt(), s24.sqrt());
    let (n1, n2) = (c23 / l23, c24 / l24);
    let d = n1.dot(n2).clamp(-1.0, 1.0);
    let q3 = (p2.cross(n2) + n1.cross(p2) * d) / l23; // (25)
    let q4 = (p2.cross(n1) + n2.cross(p2) * d) / l24; // (26)
    let q2 = -(p3.cross(n2) + n1.cross(p3) * d) / l23 - (p4.cross(n1) + n2.cross(p4) * d) / l24; // (27)
    let q1 = -q2 - q3 - q4; // (28)
    Some(([q1, q2, q3, q4], d))
}

/// Projects one dihedral bending constraint by eq. (29) with (linearised) stiffness `k`. The inverse masses
/// are read only for a pair that is not skipped (all zero: the denominator is zero and nothing moves).
#[inline(always)]
pub fn project_dihedral_one(p: &mut impl ParticleAccess, quad: [u32; 4], rest_angle: f32, k: f32) {
    let ids = quad.map(|i| i as usize);
    let Some((q, d)) = appendix_a_gradients(ids.map(|i| p.p(i))) else {
        return;
    };
    let ws = ids.map(|i| p.w(i));
    let denominator: f32 = (0..4).map(|j| ws[j] * q[j].length_squared()).sum();
    if denominator.is_nan() || denominator <= f32::MIN_POSITIVE {
        return;
    }
    let error = (d.acos() - rest_angle).clamp(-MAX_ANGLE_STEP, MAX_ANGLE_STEP);
    let scale = -k * (1.0 - d * d).sqrt() * error / denominator;
    if !scale.is_finite() {
        return;
    }
    for j in 0..4 {
        p.shift(ids[j], q[j] * (scale * ws[j]));
    }
}

/// One Gauss–Seidel sweep over the dihedral bending constraints `quads`, in array order.
#[inline]
pub fn sweep_dihedral(p: &mut impl ParticleAccess, quads: &[[u32; 4]], rest_angle: &[f32], k: f32) {
    for (&quad, &phi0) in quads.iter().zip(rest_angle) {
        project_dihedral_one(p, quad, phi0, k);
    }
}

/// One sweep of the cheaper bending model: a distance constraint between the two vertices p3, p4 opposite
/// each shared edge. Unlike the dihedral term it also resists stretching across the edge.
#[inline]
pub fn sweep_opposite_distance(p: &mut impl ParticleAccess, quads: &[[u32; 4]], rest: &[f32], k: f32) {
    for (q, &l0) in quads.iter().zip(rest) {
        project_distance(p, q[2] as usize, q[3] as usize, l0, k);
    }
}

/// One Gauss–Seidel sweep over all dihedral bending constraints.
pub fn project_dihedral(p: &mut [Vec3], w: &[f32], quads: &[[u32; 4]], rest_angle: &[f32], k: f32) {
    sweep_dihedral(&mut Slices { p, w }, quads, rest_angle, k);
}

/// One sweep of opposite-vertex distance bending over all quads.
pub fn project_opposite_distance(p: &mut [Vec3], w: &[f32], quads: &[[u32; 4]], rest: &[f32], k: f32) {
    sweep_opposite_distance(&mut Slices { p, w }, quads, rest, k);
}

#[cfg(test)]
mod tests {
    use super::super::momentum;
    use super::*;
    use bevy::math::Quat;

    /// A hinge: shared edge along X, wings folded by `fold` radians from flat.
    fn hinge(fold: f32) -> [Vec3; 4] {
        let half = fold * 0.5;
        [
            Vec3::ZERO,
            Vec3::new(1.0, 0.0, 0.0),
            Vec3::new(0.4, -half.sin(), half.cos()),
            Vec3::new(0.6, -half.sin(), -half.cos()),
        ]
    }

    fn angle(p: &[Vec3]) -> f32 {
        dihedral_angle([p[0], p[1], p[2], p[3]]).unwrap()
    }

    #[test]
    fn flat_pair_has_angle_pi_and_fold_reduces_it() {
        assert!((angle(&hinge(0.0)) - std::f32::consts::PI).abs() < 1e-3);
        assert!((angle(&hinge(0.5)) - (std::f32::consts::PI - 0.5)).abs() < 1e-4);
    }

    #[test]
    fn q_vectors_are_minus_the_gradient_of_d() {
        let x = hinge(0.8).map(|v| v + Vec3::new(0.1, 0.2, -0.3));
        let (q, d) = appendix_a_gradients(x).unwrap();
        let h = 1e-3;
        for i in 0..4 {
            for axis in [Vec3::X, Vec3::Y, Vec3::Z] {
                let mut y = x;
                y[i] += axis * h;
                let (_, d_plus) = appendix_a_gradients(y).unwrap();
                let numeric = (d_plus - d) / h;
                assert!((numeric + q[i].dot(axis)).abs() < 5e-3, "vertex {i}: {numeric} vs {}", -q[i].dot(axis));
            }
        }
    }

    #[test]
    fn projection_restores_rest_angle() {
        let rest = angle(&hinge(0.3));
        let mut p = hinge(1.2).to_vec();
        let w = [1.0, 0.5, 2.0, 1.5];
        for _ in 0..20 {
            project_dihedral(&mut p, &w, &[[0, 1, 2, 3]], &[rest], 1.0);
        }
        assert!((angle(&p) - rest).abs() < 1e-3, "{} vs {rest}", angle(&p));
    }

    #[test]
    fn conserves_linear_and_angular_momentum_with_unequal_masses() {
        let mass = [0.5f32, 2.0, 1.0, 3.0];
        let w: Vec<f32> = mass.iter().map(|m| 1.0 / m).collect();
        let before: Vec<Vec3> = hinge(1.0).iter().map(|v| *v + Vec3::new(0.3, -0.2, 0.5)).collect();
        let mut after = before.clone();
        project_dihedral(&mut after, &w, &[[0, 1, 2, 3]], &[2.9], 1.0);
        assert!(before.iter().zip(&after).any(|(a, b)| a.distance(*b) > 0.01), "nothing moved");
        let (linear, angular) = momentum::change(&before, &after, &mass);
        assert!(linear.length() < 1e-5, "linear {linear}");
        assert!(angular.length() < 1e-5, "angular {angular}");
    }

    #[test]
    fn rigid_rotation_keeps_rest_state() {
        let rest_shape = hinge(0.9);
        let rest = angle(&rest_shape);
        let r = Quat::from_euler(bevy::math::EulerRot::XYZ, 0.7, -1.3, 2.1);
        let rotated: Vec<Vec3> = rest_shape.iter().map(|v| r * *v + Vec3::new(3.0, -1.0, 2.0)).collect();
        let mut p = rotated.clone();
        project_dihedral(&mut p, &[1.0; 4], &[[0, 1, 2, 3]], &[rest], 1.0);
        let moved = p.iter().zip(&rotated).map(|(a, b)| a.distance(*b)).fold(0.0, f32::max);
        assert!(moved < 1e-5, "a rigid rotation caused a correction of {moved} m");
    }

    #[test]
    fn degenerate_and_parallel_configurations_stay_finite() {
        let cases = [
            hinge(0.0),                                    // flat: normals antiparallel
            [Vec3::ZERO, Vec3::X, Vec3::X * 0.5, Vec3::Z], // collapsed triangle
            [Vec3::ZERO, Vec3::ZERO, Vec3::Y, Vec3::Z],    // zero-length edge
            [Vec3::ZERO, Vec3::X, Vec3::Z, Vec3::Z],       // folded onto itself: normals parallel
            [Vec3::ZERO, Vec3::X, Vec3::Z, Vec3::new(0.5, 0.0, 1e-7)],
        ];
        for case in cases {
            let mut p = case.to_vec();
            project_dihedral(&mut p, &[1.0; 4], &[[0, 1, 2, 3]], &[1.0], 1.0);
            assert!(p.iter().all(|v| v.is_finite()), "{case:?} -> {p:?}");
        }
    }

    #[test]
    fn a_pair_folded_far_from_rest_unfolds_without_overshooting() {
        // rest flat (π), folded to 0.25 rad, light particles: one linearised step would throw them far away
        let rest = angle(&hinge(0.0));
        let mut p = hinge(std::f32::consts::PI - 0.25).to_vec();
        let w = [1280.0; 4];
        let mut previous = angle(&p);
        for _ in 0..40 {
            let before = p.clone();
            project_dihedral(&mut p, &w, &[[0, 1, 2, 3]], &[rest], 1.0);
            let moved = p.iter().zip(&before).map(|(a, b)| a.distance(*b)).fold(0.0, f32::max);
            assert!(moved < 0.5, "one projection moved a vertex {moved} m");
            assert!(angle(&p) >= previous - 1e-4, "the angle went back: {} → {}", previous, angle(&p));
            previous = angle(&p);
        }
        assert!((angle(&p) - rest).abs() < 0.05, "did not unfold: {}", angle(&p));
    }

    #[test]
    fn distance_bending_keeps_opposite_vertices_apart() {
        let rest = hinge(0.0);
        let l0 = rest[2].distance(rest[3]);
        let mut p = hinge(2.0).to_vec();
        project_opposite_distance(&mut p, &[1.0; 4], &[[0, 1, 2, 3]], &[l0], 1.0);
        assert!((p[2].distance(p[3]) - l0).abs() < 1e-5);
    }
}
