//! Bending constraints (§4.1, Fig. 4): the paper's dihedral-angle constraint C = arccos(n1·n2) − φ0 projected
//! by eq. (29), and the cheaper opposite-vertex distance constraint.
//!
//! For a pair of triangles (p1, p3, p2) and (p1, p2, p4) sharing the edge p1–p2, Appendix A shifts p1 to the
//! origin, takes n1 = p2×p3/|p2×p3|, n2 = p2×p4/|p2×p4| and d = n1·n2, and builds eq. (29) from the vectors
//! q_i = −∇_{p_i} d of eq. (25)–(28). Here the same step is taken with ∇φ = q/√(1 − d²) in the closed form of
//! Bridson et al. (2003) — two cross products instead of ten; the tests check it against eq. (25)–(28) and
//! against finite differences. The projection is robust: a degenerate triangle (|p2×p3| ≈ 0), (anti)parallel
//! normals where 1 − d² vanishes, or a zero denominator skip the constraint for this sweep instead of producing
//! NaN, and one projection corrects at most [`MAX_ANGLE_STEP`] of angle. Most pairs of a hanging sheet are
//! within [`PARALLEL`] of flat; that test runs on four pairs at once ([`super::lanes`]).

use bevy::math::{Vec3, Vec4};

use super::access::{ParticleAccess, Slices};
use super::lanes::{LANES, Vec3x4, for_each_lane};
use super::stretch::sweep_distances;

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
/// degenerate. Evaluated as atan2(|n1×n2|, n1·n2), the same formula the projection uses, so rest and current
/// angles agree to rounding (arccos loses half its digits near the flat state, d ≈ −1).
pub fn dihedral_angle([p1, p2, p3, p4]: [Vec3; 4]) -> Option<f32> {
    let hinge = Hinge::new([p1, p2, p3, p4]);
    (!hinge.is_degenerate()).then(|| hinge.angle())
}

/// The products the dihedral projection needs, with p1 shifted to the origin: e = p2 − p1, a = p3 − p1,
/// b = p4 − p1 and the unnormalised normals N1 = e×a, N2 = e×b (n1, n2 of Appendix A).
struct Hinge {
    e: Vec3,
    a: Vec3,
    b: Vec3,
    n1: Vec3,
    n2: Vec3,
    /// |N1|², |N2|², |e|² and the triple product e·(a×b) = N1·b.
    s1: f32,
    s2: f32,
    ee: f32,
    triple: f32,
}

impl Hinge {
    #[inline(always)]
    fn new([p1, p2, p3, p4]: [Vec3; 4]) -> Self {
        let (e, a, b) = (p2 - p1, p3 - p1, p4 - p1);
        let (n1, n2) = (e.cross(a), e.cross(b));
        Self {
            e,
            a,
            b,
            n1,
            n2,
            s1: n1.length_squared(),
            s2: n2.length_squared(),
            ee: e.length_squared(),
            triple: n1.dot(b),
        }
    }

    /// Whether the normals are within [`PARALLEL`] of (anti)parallel, or a position is NaN. Needs only products:
    /// the identity (e×a)×(e×b) = (e·(a×b)) e gives 1 − d² = |n1 × n2|² = (e·(a×b))² |e|² / (|N1|² |N2|²).
    #[inline(always)]
    fn is_nearly_flat(&self) -> bool {
        self.triple.is_nan() || self.triple * self.triple * self.ee < PARALLEL * self.s1 * self.s2
    }

    /// Whether a triangle is degenerate (no normal): the sine of its corner at p1 is below [`DEGENERATE_SINE`].
    #[inline(always)]
    fn is_degenerate(&self) -> bool {
        const SINE2: f32 = DEGENERATE_SINE * DEGENERATE_SINE;
        !(self.s1 > SINE2 * self.ee * self.a.length_squared() && self.s2 > SINE2 * self.ee * self.b.length_squared())
    }

    /// φ = arccos(n1·n2) = atan2(|n1×n2|, n1·n2) with |N1×N2| = |e·(a×b)| |e| (the identity above): exact to
    /// rounding at every angle, for rest angles.
    #[inline(always)]
    fn angle(&self) -> f32 {
        (self.triple.abs() * self.ee.sqrt()).atan2(self.n1.dot(self.n2))
    }

    /// d = n1·n2, clamped to [−1, 1]. Its arccos is the angle to 3·10⁻⁶ rad for pairs that are not
    /// [nearly flat](Self::is_nearly_flat), and costs a third of glibc's atan2f.
    #[inline(always)]
    fn cos_angle(&self) -> f32 {
        (self.n1.dot(self.n2) / (self.s1 * self.s2).sqrt()).clamp(-1.0, 1.0)
    }

    /// ∇φ at p1…p4 for a non-degenerate hinge, in closed form. With σ = sign(e·(a×b)) (which side p4 lies on):
    /// ∇_{p3}φ = −σ|e| N1/|N1|², ∇_{p4}φ = σ|e| N2/|N2|², and the edge's ends take the rest so that Σ ∇φ = 0 and
    /// the gradients turn nothing: ∇_{p1}φ = σ((|e| − a·ê) N1/|N1|² + (b·ê − |e|) N2/|N2|²), ê = e/|e|
    /// [Bridson et al. 2003]. These are the vectors of eq. (25)–(28) divided by √(1 − d²)
    /// (∇φ = −∇d/√(1 − d²) = q/√(1 − d²)), without the ten cross products.
    #[inline(always)]
    fn angle_gradients(&self) -> [Vec3; 4] {
        let len = self.ee.sqrt();
        let inv = 1.0f32.copysign(self.triple) / (self.s1 * self.s2 * len);
        // σ N1/|N1|² and σ N2/|N2|², both scaled by 1/|e|
        let (g1, g2) = (self.n1 * (self.s2 * inv), self.n2 * (self.s1 * inv));
        let (ae, be) = (self.a.dot(self.e), self.b.dot(self.e));
        let d1 = g1 * (self.ee - ae) + g2 * (be - self.ee);
        let (d3, d4) = (g1 * -self.ee, g2 * self.ee);
        [d1, -(d1 + d3 + d4), d3, d4]
    }
}

/// Projects one dihedral bending constraint C = φ − φ0 by eq. (29) with (linearised) stiffness `k`:
/// Δp_i = −k w_i C ∇_iφ / Σ_j w_j |∇_jφ|², which is eq. (29) with q_i = √(1 − d²) ∇_iφ. Nearly flat pairs
/// ([`PARALLEL`], most of a hanging sheet) are rejected first, with products only; the inverse masses are read
/// only for a pair that is not skipped (all zero: the denominator is zero and nothing moves).
#[inline(always)]
pub fn project_dihedral_one(p: &mut impl ParticleAccess, quad: [u32; 4], rest_angle: f32, k: f32) {
    // particle by particle: arrays of `Vec3`s go through the stack and stall the loads that read them back
    let [i1, i2, i3, i4] = quad.map(|i| i as usize);
    let hinge = Hinge::new([p.p(i1), p.p(i2), p.p(i3), p.p(i4)]);
    if hinge.is_nearly_flat() || hinge.is_degenerate() {
        return;
    }
    let [g1, g2, g3, g4] = hinge.angle_gradients();
    let (w1, w2, w3, w4) = (p.w(i1), p.w(i2), p.w(i3), p.w(i4));
    let denominator =
        w1 * g1.length_squared() + w2 * g2.length_squared() + w3 * g3.length_squared() + w4 * g4.length_squared();
    if denominator.is_nan() || denominator <= f32::MIN_POSITIVE {
        return;
    }
    let error = (hinge.cos_angle().acos() - rest_angle).clamp(-MAX_ANGLE_STEP, MAX_ANGLE_STEP);
    let scale = -k * error / denominator;
    if !scale.is_finite() {
        return;
    }
    p.shift(i1, g1 * (scale * w1));
    p.shift(i2, g2 * (scale * w2));
    p.shift(i3, g3 * (scale * w3));
    p.shift(i4, g4 * (scale * w4));
}

/// Of four pairs of one colour, those that may be bent past [`PARALLEL`] (bit `lane` set), by the test of
/// [`Hinge::is_nearly_flat`] with the same arithmetic lane by lane; a NaN position leaves its bit set, so the
/// scalar kernel sees it.
#[inline(always)]
fn maybe_bent(p: &impl ParticleAccess, quads: &[[u32; 4]; LANES]) -> u32 {
    let corner = |c: usize| Vec3x4::positions(p, quads.map(|q| q[c] as usize));
    let p1 = corner(0);
    let (e, a, b) = (corner(1) - p1, corner(2) - p1, corner(3) - p1);
    let (n1, n2) = (e.cross(a), e.cross(b));
    let triple = n1.dot(b);
    let flat =
        (triple * triple * e.length_squared()).cmplt(Vec4::splat(PARALLEL) * n1.length_squared() * n2.length_squared());
    !flat.bitmask() & ((1 << LANES) - 1)
}

/// One Gauss–Seidel sweep over the dihedral bending constraints `quads`, in array order. Pairs are tested for
/// flatness four at a time (most pairs of a hanging sheet are flat), so the quads must be of one colour (no two
/// share a particle): then testing four before projecting any of them changes nothing.
#[inline]
pub fn sweep_dihedral(p: &mut impl ParticleAccess, quads: &[[u32; 4]], rest_angle: &[f32], k: f32) {
    let n = quads.len().min(rest_angle.len());
    let (groups, tail) = quads[..n].as_chunks::<LANES>();
    for (g, group) in groups.iter().enumerate() {
        for_each_lane(maybe_bent(p, group), |lane| {
            let j = g * LANES + lane;
            project_dihedral_one(p, group[lane], rest_angle[j], k);
        });
    }
    let done = groups.len() * LANES;
    for (&quad, &phi0) in tail.iter().zip(&rest_angle[done..n]) {
        project_dihedral_one(p, quad, phi0, k);
    }
}

/// One sweep of the cheaper bending model: a distance constraint between the two vertices p3, p4 opposite
/// each shared edge. Unlike the dihedral term it also resists stretching across the edge. The quads must be of
/// one colour ([`sweep_distances`]).
#[inline]
pub fn sweep_opposite_distance(p: &mut impl ParticleAccess, quads: &[[u32; 4]], rest: &[f32], k: f32) {
    sweep_distances(p, quads, rest, k, |q| [q[2], q[3]]);
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

    /// The paper's q-vectors, eq. (25)–(28) with p1 shifted to the origin (q_i = −∇_{p_i} d), and d: the
    /// reference the closed-form gradients are checked against.
    fn appendix_a([p1, p2, p3, p4]: [Vec3; 4]) -> ([Vec3; 4], f32) {
        let (p2, p3, p4) = (p2 - p1, p3 - p1, p4 - p1);
        let (l23, l24) = (p2.cross(p3).length(), p2.cross(p4).length());
        let (n1, n2) = (p2.cross(p3) / l23, p2.cross(p4) / l24);
        let d = n1.dot(n2);
        let q3 = (p2.cross(n2) + n1.cross(p2) * d) / l23; // (25)
        let q4 = (p2.cross(n1) + n2.cross(p2) * d) / l24; // (26)
        let q2 = -(p3.cross(n2) + n1.cross(p3) * d) / l23 - (p4.cross(n1) + n2.cross(p4) * d) / l24; // (27)
        ([-q2 - q3 - q4, q2, q3, q4], d) // (28)
    }

    /// Hinges folded and stretched every which way, off the origin.
    fn assorted_hinges() -> Vec<[Vec3; 4]> {
        let r = Quat::from_euler(bevy::math::EulerRot::XYZ, 0.4, -0.9, 1.7);
        [0.3f32, 0.8, 1.6, 2.5, 2.9]
            .iter()
            .enumerate()
            .map(|(j, &fold)| {
                let mut x = hinge(fold);
                x[2] += Vec3::new(0.3 * j as f32 - 0.5, 0.0, 0.2);
                x[3] *= 1.0 + 0.2 * j as f32;
                x.map(|v| r * v + Vec3::new(0.1, 0.2, -0.3))
            })
            .collect()
    }

    #[test]
    fn q_vectors_are_minus_the_gradient_of_d() {
        let x = hinge(0.8).map(|v| v + Vec3::new(0.1, 0.2, -0.3));
        let (q, d) = appendix_a(x);
        let h = 1e-3;
        for i in 0..4 {
            for axis in [Vec3::X, Vec3::Y, Vec3::Z] {
                let mut y = x;
                y[i] += axis * h;
                let (_, d_plus) = appendix_a(y);
                let numeric = (d_plus - d) / h;
                assert!((numeric + q[i].dot(axis)).abs() < 5e-3, "vertex {i}: {numeric} vs {}", -q[i].dot(axis));
            }
        }
    }

    #[test]
    fn closed_form_gradients_are_the_q_vectors_over_the_sine() {
        for x in assorted_hinges() {
            let (q, d) = appendix_a(x);
            let hinge = Hinge::new(x);
            assert!((hinge.angle() - d.acos()).abs() < 1e-4, "angle {} vs arccos d {}", hinge.angle(), d.acos());
            let sine = (1.0 - d * d).sqrt();
            for (g, q) in hinge.angle_gradients().iter().zip(q) {
                let expected = q / sine;
                assert!(g.distance(expected) < 1e-4 * (1.0 + expected.length()), "{g} vs eq. (25)–(28): {expected}");
            }
        }
    }

    #[test]
    fn closed_form_gradients_match_finite_differences_of_the_angle() {
        let h = 1e-3;
        for x in assorted_hinges() {
            let gradient = Hinge::new(x).angle_gradients();
            for i in 0..4 {
                for axis in [Vec3::X, Vec3::Y, Vec3::Z] {
                    let (mut plus, mut minus) = (x, x);
                    plus[i] += axis * h;
                    minus[i] -= axis * h;
                    let numeric = (angle(&plus) - angle(&minus)) / (2.0 * h);
                    let analytic = gradient[i].dot(axis);
                    assert!(
                        (numeric - analytic).abs() < 2e-2 * (1.0 + analytic.abs()),
                        "p{i}: {numeric} vs {analytic}"
                    );
                }
            }
        }
    }

    #[test]
    fn four_at_a_time_gives_the_bits_of_one_at_a_time() {
        // eleven disjoint hinges (two groups of four and a tail): flat, bent and degenerate ones mixed
        let folds = [0.0, 0.9, 0.004, 2.2, 0.0, 0.0, 1.3, 0.5, 3.0, 0.0, 0.7];
        let mut p: Vec<Vec3> =
            folds.iter().enumerate().flat_map(|(j, &f)| hinge(f).map(|v| v + Vec3::X * j as f32)).collect();
        p[16 + 2] = p[16] + (p[16 + 1] - p[16]) * 0.5; // hinge 4: a collapsed wing
        let w: Vec<f32> = (0..p.len()).map(|i| 0.5 + (i % 3) as f32).collect();
        let quads: Vec<[u32; 4]> = (0..folds.len() as u32).map(|j| [4 * j, 4 * j + 1, 4 * j + 2, 4 * j + 3]).collect();
        let rest: Vec<f32> = (0..folds.len()).map(|j| 3.0 - 0.2 * j as f32).collect();
        let mut one_by_one = p.clone();
        for (&quad, &phi0) in quads.iter().zip(&rest) {
            project_dihedral_one(&mut Slices { p: &mut one_by_one, w: &w }, quad, phi0, 0.8);
        }
        project_dihedral(&mut p, &w, &quads, &rest, 0.8);
        assert_eq!(p, one_by_one);
        assert!(p.iter().all(|v| v.is_finite()));
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
