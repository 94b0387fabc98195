//! Bending constraints (§4.1, Fig. 4): the paper's dihedral-angle constraint C = arccos(n1·n2) − φ0 projected
//! by eq. (29), and the cheaper opposite-vertex distance constraint.
//!
//! For a pair of triangles (p1, p3, p2) and (p1, p2, p4) sharing the edge p1–p2, Appendix A shifts p1 to the
//! origin, takes n1 = p2×p3/|p2×p3|, n2 = p2×p4/|p2×p4| and d = n1·n2, and builds eq. (29) from the vectors
//! q_i = −∇_{p_i} d of eq. (25)–(28). Here the same step is taken with ∇φ = q/√(1 − d²) in the closed form of
//! Bridson et al. (2003) — two cross products instead of ten; the tests check it against eq. (25)–(28) and
//! against finite differences. The projection is robust: a degenerate triangle (|p2×p3| ≈ 0), (anti)parallel
//! normals where 1 − d² vanishes, or a zero denominator skip the constraint for this sweep instead of producing
//! NaN, and one projection corrects at most `MAX_ANGLE_STEP` of angle. In a cloth whose stretch is far softer
//! than its bending, a pair folded past a right angle is left as a crease ([`Folds::Leave`]), or under XPBD no hinge
//! turns its pair in a substep further than the soft edges can follow ([`Folds::Yield`]). Four pairs of a colour
//! are projected at once (`crate::sim::lanes`); most pairs of a hanging sheet are within `PARALLEL` of flat, and a
//! group of four such pairs leaves after a few products.

use bevy::math::{BVec4A, Vec3, Vec4};
use serde::{Deserialize, Serialize};

use super::access::ParticleAccess;
use super::response::{Response, equivalent_stiffness};
use super::stretch::sweep_distances;
use crate::sim::lanes::{LANES, Vec3x4, inverse_masses};

/// Which bending constraint the solver projects (§4.1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum BendingModel {
    /// The paper's dihedral-angle constraint with the gradients of Appendix A (eq. 25–29): independent of stretching.
    #[default]
    Dihedral,
    /// A distance constraint between the two vertices opposite a shared edge (Jakobsen style): cheaper, but
    /// couples bending to stretching.
    Distance,
}

/// Below this sine of a triangle's corner angle the triangle counts as degenerate.
const DEGENERATE_SINE: f32 = 1e-6;
/// Below this value of 1 − d² (normals within 0.01 rad of (anti)parallel) the pair is skipped: at d = ±1 the
/// gradient of arccos d is undefined, and in f32 the direction of eq. (25)–(28) is noise well before that. Near
/// the flat rest state the skipped error is below 0.01 rad; a pair folded completely over (d = 1 with a flat rest)
/// has no preferred side to unfold to.
const PARALLEL: f32 = 1e-4;
/// Largest angle one projection turns a pair by, radians. Eq. (29) is a Newton step on the linearisation of
/// eq. (3), valid for small errors; a pair folded far from its rest angle (a crumpled, very stretchy cloth) would
/// overshoot wildly, so it unfolds over several sweeps instead. A limit on the step, not on the error: XPBD's
/// multiplier goes on growing, and a hinge's torque at convergence is its angle error over α at any angle
/// ([`Response::limited_scale_x4`]).
pub(crate) const MAX_ANGLE_STEP: f32 = 0.3;

/// Below this ratio k_stretch / k_bend a cloth leaves its folds ([`Folds::Leave`]). Crumpled 16 × 16 sheets
/// thrashed from ratio 0.05 down and came to rest from 0.067 up (docs/reliability.md).
pub(crate) const SOFT_STRETCH: f32 = 0.1;

/// What a dihedral sweep does with a pair folded past a right angle (n1·n2 > 0: its wings on one side).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Folds {
    /// Unfolds it like any other pair (the paper).
    #[default]
    Unfold,
    /// Leaves it alone, a crease. For a cloth whose stretch is far softer than its bending: unfolding a pair
    /// turns its wings against neighbours that edges this soft do not carry along, and the pairs pass the folds
    /// back and forth at the speed cap instead of opening (docs/reliability.md).
    Leave,
    /// Unfolds it, no hinge turning its pair in a substep further than the cloth's edges can follow
    /// (`yield_turn`). What XPBD does instead of [`Folds::Leave`]: its multipliers, which the paper's solver has
    /// not, are the hinges' torques, so it can cap them.
    Yield,
}

impl Folds {
    /// The folds a cloth with stretch and bend stiffnesses `stretch_stiffness` and `bend_stiffness` (the paper's,
    /// or those XPBD's compliances amount to, `fold_stiffnesses`) unfolds: all unless its stretch is below
    /// `SOFT_STRETCH` times its bending. Such a cloth leaves even its first fold: a landing that folds a few
    /// pairs starts the thrash before a larger share could be counted.
    pub fn for_cloth(stretch_stiffness: f32, bend_stiffness: f32) -> Self {
        if stretch_stiffness < SOFT_STRETCH * bend_stiffness { Folds::Leave } else { Folds::Unfold }
    }
}

/// The most a hinge of a soft XPBD cloth turns its pair in a substep ([`Folds::Yield`]), radians: as far as an
/// edge's force at full strain, l0/α, turns a flat pair of right triangles of legs l0 on a lever of half an edge
/// (its inverse moment of inertia D = 4w/l0²) in a substep Δt: 2w/α̃ with α̃ = α/Δt² of the stretch and `w` the
/// cloth's mean free inverse mass, whatever the edge. Unbounded, the hinges opened a landing crumple at up to
/// 60 m/s, harder the more substeps, against edges that could not follow (docs/reliability.md). Infinite (no
/// limit) for a rigid stretch.
pub(crate) fn yield_turn(stretch_alpha_tilde: f32, w: f32) -> f32 {
    let most = 2.0 * w / stretch_alpha_tilde;
    if most.is_finite() && most > 0.0 { most } else { f32::INFINITY }
}

/// The paper's stiffnesses (stretch, bending) that remove the same share of a lone constraint's error per substep
/// as XPBD's time-scaled compliances `alpha` = [α̃_stretch, α̃_bend] (`response::equivalent_stiffness`), for
/// [`Folds::for_cloth`]: a stretch compliance of 0.01 m/N is a k_stretch of 0.02 beside the k_bend of 1 that a
/// zero bending compliance is. The denominators Σ w|∇C|² are those of a flat pair of right triangles with legs
/// `edge` and corners of inverse mass `w`: 2w for an edge or the distance model, about 4w/edge² for the dihedral
/// angle (1/h² for each opposite vertex, h = edge/√2 across a diagonal).
fn equivalent_stiffnesses(alpha: [f32; 2], w: f32, edge: f32, model: BendingModel) -> [f32; 2] {
    let stretch = 2.0 * w;
    let bend = match model {
        BendingModel::Dihedral => 4.0 * w / (edge * edge).max(f32::MIN_POSITIVE),
        BendingModel::Distance => stretch,
    };
    [equivalent_stiffness(alpha[0], stretch), equivalent_stiffness(alpha[1], bend)]
}

/// The stiffnesses (stretch, bending) [`Folds::for_cloth`] compares for a cloth with inverse masses `w` and edges
/// of rest lengths `rest_length`: the paper's `paper`, or with XPBD making `share` of the corrections with
/// time-scaled compliances `alpha`, that share of their [`equivalent_stiffnesses`] and the rest of the paper's. The
/// cloth's mean free inverse mass and mean edge stand for its constraints.
pub(crate) fn fold_stiffnesses(
    paper: [f32; 2],
    xpbd: Option<([f32; 2], f32)>,
    (w, rest_length): (&[f32], &[f32]),
    model: BendingModel,
) -> [f32; 2] {
    let Some((alpha, share)) = xpbd else { return paper };
    // four running sums, so the loops run on packed adds
    let sum = |values: &[f32]| {
        values
            .chunks(4)
            .map(|c| Vec4::from_array(std::array::from_fn(|i| c.get(i).copied().unwrap_or(0.0))))
            .sum::<Vec4>()
            .element_sum()
    };
    let free = w.iter().filter(|w| **w > 0.0).count().max(1);
    let w_mean = sum(w) / free as f32;
    let edge = sum(rest_length) / rest_length.len().max(1) as f32;
    let xpbd = equivalent_stiffnesses(alpha, w_mean, edge, model);
    [0, 1].map(|i| (1.0 - share) * paper[i] + share * xpbd[i])
}

/// The dihedral angle arccos(n1·n2) of `[p1, p2, p3, p4]` in radians (§4.1), or `None` if a triangle is
/// degenerate. Evaluated as atan2(|n1×n2|, n1·n2), exact to rounding at every angle (arccos loses half its
/// digits near the flat state, d ≈ −1): for rest angles.
pub(crate) fn dihedral_angle(corners: [Vec3; 4]) -> Option<f32> {
    let hinge = Hinge4::new(corners.map(Vec3x4::splat));
    (!hinge.degenerate().test(0)).then(|| hinge.exact_angle())
}

/// The dihedral constraint of `[p1, p2, p3, p4]` as a row of a system solved together
/// ([`super::global`]): C = −σ(φ − φ0) and its gradients, σ the side p4 lies on (the sign of e·(a×b)), or
/// `None` for a degenerate triangle. Signed this way C is the fold's turn away from flat less the rest's, smooth
/// through the flat state that the sweeps' unsigned φ has a kink at (a flat rest, φ0 = π, gives C = 0 there).
pub(crate) fn signed_dihedral(corners: [Vec3; 4], rest_angle: f32) -> Option<(f32, [Vec3; 4])> {
    let hinge = Hinge4::new(corners.map(Vec3x4::splat));
    if hinge.degenerate().test(0) {
        return None;
    }
    let sign = -1.0f32.copysign(hinge.triple.x);
    Some((sign * (hinge.exact_angle() - rest_angle), hinge.angle_gradients().map(|g| g.lane(0) * sign)))
}

/// Four hinges side by side ([`crate::sim::lanes`]), with the products the projection needs, p1 shifted to the
/// origin: e = p2 − p1, a = p3 − p1, b = p4 − p1 and the unnormalised normals N1 = e×a, N2 = e×b (n1, n2 of
/// Appendix A).
struct Hinge4 {
    e: Vec3x4,
    a: Vec3x4,
    b: Vec3x4,
    n1: Vec3x4,
    n2: Vec3x4,
    /// |N1|², |N2|², |e|² and the triple product e·(a×b) = N1·b.
    s1: Vec4,
    s2: Vec4,
    ee: Vec4,
    triple: Vec4,
}

impl Hinge4 {
    #[inline(always)]
    fn new([p1, p2, p3, p4]: [Vec3x4; 4]) -> Self {
        let (e, a, b) = (p2 - p1, p3 - p1, p4 - p1);
        let (n1, n2) = (e.cross(a), e.cross(b));
        let (s1, s2, ee, triple) = (n1.length_squared(), n2.length_squared(), e.length_squared(), n1.dot(b));
        Self { e, a, b, n1, n2, s1, s2, ee, triple }
    }

    /// Lanes whose normals are within [`PARALLEL`] of (anti)parallel. Needs only products: the identity
    /// (e×a)×(e×b) = (e·(a×b)) e gives 1 − d² = |n1 × n2|² = (e·(a×b))² |e|² / (|N1|² |N2|²). A NaN lane is not
    /// flat (the projection's finiteness checks drop it).
    #[inline(always)]
    fn nearly_flat(&self) -> BVec4A {
        (self.triple * self.triple * self.ee).cmplt(Vec4::splat(PARALLEL) * self.s1 * self.s2)
    }

    /// The first lane's φ as atan2(|n1 × n2|, n1·n2), exact to rounding at every angle.
    fn exact_angle(&self) -> f32 {
        (self.triple.x.abs() * self.ee.x.sqrt()).atan2(self.n1.dot(self.n2).x)
    }

    /// Lanes with a degenerate triangle (no normal): the sine of its corner at p1 is below [`DEGENERATE_SINE`].
    #[inline(always)]
    fn degenerate(&self) -> BVec4A {
        let sine2 = Vec4::splat(DEGENERATE_SINE * DEGENERATE_SINE) * self.ee;
        !(self.s1.cmpgt(sine2 * self.a.length_squared()) & self.s2.cmpgt(sine2 * self.b.length_squared()))
    }

    /// φ = arccos(n1·n2), d clamped to [−1, 1]; accurate to 3·10⁻⁶ rad for pairs that are not
    /// [nearly flat](Self::nearly_flat).
    #[inline(always)]
    fn angle(&self) -> Vec4 {
        acos((self.n1.dot(self.n2) / (self.s1 * self.s2).sqrt()).clamp(Vec4::NEG_ONE, Vec4::ONE))
    }

    /// ∇φ at p1…p4 for a non-degenerate hinge, in closed form. With σ = sign(e·(a×b)) (which side p4 lies on):
    /// ∇_{p3}φ = −σ|e| N1/|N1|², ∇_{p4}φ = σ|e| N2/|N2|², and the edge's ends take the rest so that Σ ∇φ = 0 and
    /// the gradients turn nothing: ∇_{p1}φ = σ((|e| − a·ê) N1/|N1|² + (b·ê − |e|) N2/|N2|²), ê = e/|e|
    /// [Bridson et al. 2003]. These are the vectors of eq. (25)–(28) divided by √(1 − d²)
    /// (∇φ = −∇d/√(1 − d²) = q/√(1 − d²)), without the ten cross products.
    #[inline(always)]
    fn angle_gradients(&self) -> [Vec3x4; 4] {
        let len = self.ee.sqrt();
        let inv = Vec4::ONE.copysign(self.triple) / (self.s1 * self.s2 * len);
        // σ N1/|N1|² and σ N2/|N2|², both scaled by 1/|e|
        let (g1, g2) = (self.n1.scale(self.s2 * inv), self.n2.scale(self.s1 * inv));
        let (ae, be) = (self.a.dot(self.e), self.b.dot(self.e));
        let d1 = g1.scale(self.ee - ae) + g2.scale(be - self.ee);
        let (d3, d4) = (g1.scale(-self.ee), g2.scale(self.ee));
        [d1, -(d1 + d3 + d4), d3, d4]
    }
}

/// arccos on four lanes (Cephes' `acosf`: asin by a degree-4 polynomial in x², through √((1 − |x|)/2) for
/// |x| > ½), within 2·10⁻⁷ rad of the exact value; packed, where glibc's `acosf` is a call per lane.
#[inline(always)]
fn acos(x: Vec4) -> Vec4 {
    let ax = x.abs();
    let far = ax.cmpgt(Vec4::splat(0.5));
    let z_far = (Vec4::ONE - ax) * 0.5;
    let t = Vec4::select(far, z_far.sqrt(), x);
    let z = Vec4::select(far, z_far, x * x);
    let poly = (((Vec4::splat(4.216_32e-2) * z + Vec4::splat(2.418_131e-2)) * z + Vec4::splat(4.547_002_6e-2)) * z
        + Vec4::splat(7.495_300_3e-2))
        * z
        + Vec4::splat(1.666_675_2e-1);
    let asin_t = poly * z * t + t;
    let far_value = asin_t * 2.0;
    let far_value = Vec4::select(x.cmplt(Vec4::ZERO), Vec4::splat(std::f32::consts::PI) - far_value, far_value);
    Vec4::select(far, far_value, Vec4::splat(std::f32::consts::FRAC_PI_2) - asin_t)
}

/// Projects the dihedral bending constraints C = φ − φ0 of four pairs of one colour (`quads`, lanes in `active`
/// only) by eq. (29) with (linearised) stiffness `k`: Δp_i = −k w_i C ∇_iφ / Σ_j w_j |∇_jφ|², which is eq. (29)
/// with q_i = √(1 − d²) ∇_iφ. Pairs of one colour share no particle, so the four are independent. Nearly flat
/// pairs ([`PARALLEL`], most of a hanging sheet) return after the products of [`Hinge4::nearly_flat`]; a
/// degenerate triangle, a zero or NaN denominator or a non-finite step leaves its pair alone, and a step turns a
/// pair by at most [`MAX_ANGLE_STEP`]. With `LEAVE_FOLDS` a pair folded past a right angle counts as flat
/// ([`Folds::Leave`]).
#[inline(always)]
fn project_dihedral_x4<const LEAVE_FOLDS: bool>(
    p: &mut impl ParticleAccess,
    quads: [[usize; 4]; LANES],
    rest: Vec4,
    (r, at): (&mut impl Response, usize),
    active: u32,
) {
    let corner = |c: usize| Vec3x4::positions(p, quads.map(|q| q[c]));
    let hinge = Hinge4::new([corner(0), corner(1), corner(2), corner(3)]);
    let mut flat = hinge.nearly_flat();
    if LEAVE_FOLDS {
        flat |= hinge.n1.dot(hinge.n2).cmpgt(Vec4::ZERO);
    }
    if active & !flat.bitmask() == 0 {
        return;
    }
    let [g1, g2, g3, g4] = hinge.angle_gradients();
    let mass = |c: usize| inverse_masses(p, quads.map(|q| q[c]));
    let (w1, w2, w3, w4) = (mass(0), mass(1), mass(2), mass(3));
    let denominator =
        w1 * g1.length_squared() + w2 * g2.length_squared() + w3 * g3.length_squared() + w4 * g4.length_squared();
    let error = hinge.angle() - rest;
    let scale = r.limited_scale_x4(at, error, denominator, MAX_ANGLE_STEP);
    // met to within the positions' rounding (`integrate::rounding_tolerance`): no corner's move of that size turns
    // the pair as far as the residual asks, the most sensitive corner turning it by |∇ₖφ| per metre
    let sensitivity = g1.length_squared().max(g2.length_squared()).max(g3.length_squared()).max(g4.length_squared());
    let residual = r.residual_x4(at, error);
    let met = (residual * residual).cmplt(Vec4::splat(p.rounding() * p.rounding()) * sensitivity);
    let skip = met
        | flat
        | hinge.degenerate()
        | denominator.is_nan_mask()
        | denominator.cmple(Vec4::splat(f32::MIN_POSITIVE))
        | !scale.is_finite_mask();
    let moving = active & !skip.bitmask();
    r.commit_x4(at, scale, moving);
    let (m1, m2, m3, m4) = (g1.scale(scale * w1), g2.scale(scale * w2), g3.scale(scale * w3), g4.scale(scale * w4));
    // constant lanes: a lane picked at run time is read back through the stack
    for (lane, q) in quads.iter().enumerate() {
        if moving & (1 << lane) != 0 {
            p.shift(q[0], m1.lane(lane));
            p.shift(q[1], m2.lane(lane));
            p.shift(q[2], m3.lane(lane));
            p.shift(q[3], m4.lane(lane));
        }
    }
}

/// One Gauss–Seidel sweep over the dihedral bending constraints `quads`, in array order: four at a time
/// (`project_dihedral_x4`), so the quads must be of one colour (no two share a particle). The last
/// `len % 4` pairs fill a group whose other lanes repeat its first pair and stay inactive. `folds` says what
/// becomes of a pair folded past a right angle.
#[inline(always)]
pub(crate) fn sweep_dihedral(
    p: &mut impl ParticleAccess,
    quads: &[[u32; 4]],
    rest_angle: &[f32],
    r: &mut impl Response,
    folds: Folds,
) {
    match folds {
        Folds::Unfold | Folds::Yield => sweep_dihedral_with::<false>(p, quads, rest_angle, r),
        Folds::Leave => sweep_dihedral_leaving_folds(p, quads, rest_angle, r),
    }
}

/// [`sweep_dihedral_with`] for a crumpled soft cloth, out of line: inlined beside the sweep every other cloth
/// runs, it made the compiler lay that sweep out worse.
#[cold]
#[inline(never)]
fn sweep_dihedral_leaving_folds(
    p: &mut impl ParticleAccess,
    quads: &[[u32; 4]],
    rest_angle: &[f32],
    r: &mut impl Response,
) {
    sweep_dihedral_with::<true>(p, quads, rest_angle, r);
}

#[inline(always)]
fn sweep_dihedral_with<const LEAVE_FOLDS: bool>(
    p: &mut impl ParticleAccess,
    quads: &[[u32; 4]],
    rest_angle: &[f32],
    r: &mut impl Response,
) {
    let n = quads.len().min(rest_angle.len());
    let indices = |q: &[u32; 4]| q.map(|i| i as usize);
    let ((groups, quad_tail), (rests, rest_tail)) =
        (quads[..n].as_chunks::<LANES>(), rest_angle[..n].as_chunks::<LANES>());
    for (g, (group, rest)) in groups.iter().zip(rests).enumerate() {
        let at = LANES * g;
        project_dihedral_x4::<LEAVE_FOLDS>(
            p,
            group.map(|q| indices(&q)),
            Vec4::from_array(*rest),
            (&mut *r, at),
            (1 << LANES) - 1,
        );
    }
    if let (Some(first), Some(&first_rest)) = (quad_tail.first(), rest_tail.first()) {
        let quad = |j: usize| indices(quad_tail.get(j).unwrap_or(first));
        let rest = |j: usize| rest_tail.get(j).copied().unwrap_or(first_rest);
        let (quads, rest) = ([quad(0), quad(1), quad(2), quad(3)], Vec4::new(rest(0), rest(1), rest(2), rest(3)));
        project_dihedral_x4::<LEAVE_FOLDS>(p, quads, rest, (r, LANES * groups.len()), (1 << quad_tail.len()) - 1);
    }
}

/// One sweep of the cheaper bending model: a distance constraint between the two vertices p3, p4 opposite
/// each shared edge. Unlike the dihedral term it also resists stretching across the edge. The quads must be of
/// one colour (`sweep_distances`).
#[inline(always)]
pub(crate) fn sweep_opposite_distance(
    p: &mut impl ParticleAccess,
    quads: &[[u32; 4]],
    rest: &[f32],
    r: &mut impl Response,
) {
    sweep_distances(p, quads, rest, r, |q| [q[2], q[3]]);
}

#[cfg(test)]
mod tests {
    use super::super::access::Slices;
    use super::super::momentum;
    use super::super::response::{Compliance, Stiffness};
    use super::*;
    use crate::sim::lanes::{PackedWork, with_avx2};
    use bevy::math::Quat;

    /// One Gauss–Seidel sweep over all dihedral bending constraints, with the paper's stiffness `k`.
    fn project_dihedral(p: &mut [Vec3], w: &[f32], quads: &[[u32; 4]], rest_angle: &[f32], k: f32) {
        sweep_dihedral(&mut Slices { p, w }, quads, rest_angle, &mut Stiffness(k), Folds::Unfold);
    }

    /// One sweep of opposite-vertex distance bending over all quads, with the paper's stiffness `k`.
    fn project_opposite_distance(p: &mut [Vec3], w: &[f32], quads: &[[u32; 4]], rest: &[f32], k: f32) {
        sweep_opposite_distance(&mut Slices { p, w }, quads, rest, &mut Stiffness(k));
    }

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
    fn packed_arccos_is_within_2e7_of_libm() {
        let mut worst = 0.0f32;
        for k in 0..=20_000 {
            let x = -1.0 + k as f32 * 1e-4;
            worst = worst.max((acos(Vec4::splat(x)).x - x.clamp(-1.0, 1.0).acos()).abs());
        }
        assert!(worst < 2e-7 * std::f32::consts::PI, "{worst}");
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
            let hinge = Hinge4::new(x.map(Vec3x4::splat));
            let angle = hinge.angle().x;
            assert!((angle - d.acos()).abs() < 1e-4, "angle {angle} vs arccos d {}", d.acos());
            let sine = (1.0 - d * d).sqrt();
            for (g, q) in hinge.angle_gradients().map(|g| g.lane(0)).iter().zip(q) {
                let expected = q / sine;
                assert!(g.distance(expected) < 1e-4 * (1.0 + expected.length()), "{g} vs eq. (25)–(28): {expected}");
            }
        }
    }

    #[test]
    fn closed_form_gradients_match_finite_differences_of_the_angle() {
        let h = 1e-3;
        for x in assorted_hinges() {
            let gradient = Hinge4::new(x.map(Vec3x4::splat)).angle_gradients().map(|g| g.lane(0));
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
    fn the_signed_angle_turns_smoothly_through_flat_with_its_gradients() {
        let pi = std::f32::consts::PI;
        // C of a flat rest is the fold, signed: the same size either way, opposite signs
        let c = |fold: f32| signed_dihedral(hinge(fold), pi).map(|(c, _)| c);
        for fold in [0.3f32, 0.01, 0.0] {
            let (up, down) = (c(fold).unwrap(), c(-fold).unwrap());
            assert!((up.abs() - fold).abs() < 1e-5 && (up + down).abs() < 1e-5, "{fold}: {up} {down}");
        }
        // its gradients are C's own, by finite differences, flat and folded alike
        let h = 1e-3;
        for (x, rest) in [(hinge(0.0), pi), (hinge(0.02), pi), (hinge(-0.7), 2.0)]
            .into_iter()
            .chain(assorted_hinges().into_iter().map(|x| (x, 1.0)))
        {
            let (_, gradient) = signed_dihedral(x, rest).unwrap();
            for i in 0..4 {
                for axis in [Vec3::X, Vec3::Y, Vec3::Z] {
                    let (mut plus, mut minus) = (x, x);
                    plus[i] += axis * h;
                    minus[i] -= axis * h;
                    let at = |y| signed_dihedral(y, rest).unwrap().0;
                    let numeric = (at(plus) - at(minus)) / (2.0 * h);
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
            project_dihedral(&mut one_by_one, &w, &[quad], &[phi0], 0.8);
        }
        project_dihedral(&mut p, &w, &quads, &rest, 0.8);
        assert!(
            p.iter().zip(&one_by_one).all(|(a, b)| a.to_array().map(f32::to_bits) == b.to_array().map(f32::to_bits))
        );
        assert_eq!(p, one_by_one);
        assert!(p.iter().all(|v| v.is_finite()));
    }

    /// One dihedral sweep over disjoint hinges, as [`with_avx2`] runs it.
    struct DihedralSweep<'a>(&'a mut [Vec3], &'a [f32], &'a [[u32; 4]], &'a [f32]);

    impl PackedWork for DihedralSweep<'_> {
        #[inline(always)]
        fn run(self) {
            sweep_dihedral(&mut Slices { p: self.0, w: self.1 }, self.2, self.3, &mut Stiffness(0.7), Folds::Unfold);
        }
    }

    #[test]
    fn the_avx2_build_gives_the_bits_of_the_baseline_build() {
        let hinges = assorted_hinges();
        let start: Vec<Vec3> = hinges.iter().flatten().copied().collect();
        let w: Vec<f32> = (0..start.len()).map(|i| 0.5 + (i % 3) as f32).collect();
        let quads: Vec<[u32; 4]> = (0..hinges.len() as u32).map(|h| [0, 1, 2, 3].map(|c| 4 * h + c)).collect();
        let rest: Vec<f32> = (0..hinges.len()).map(|h| 0.4 + 0.5 * h as f32).collect();
        let (mut baseline, mut wide) = (start.clone(), start.clone());
        DihedralSweep(&mut baseline, &w, &quads, &rest).run();
        with_avx2(DihedralSweep(&mut wide, &w, &quads, &rest));
        assert!(baseline.iter().zip(&start).filter(|(a, b)| a != b).count() > 8, "the sweep moved little");
        let bits = |p: &[Vec3]| p.iter().flat_map(|v| v.to_array().map(f32::to_bits)).collect::<Vec<_>>();
        assert_eq!(bits(&wide), bits(&baseline));
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
    fn a_compliant_hinge_folded_far_converges_to_the_torque_its_compliance_gives() {
        // one free wing tip folded 2 rad from flat, far beyond one step's limit, with α̃ near Σ w|∇φ|²: the
        // iterations of one substep end where C = −α̃λ, the hinge's torque λ/Δt² being C/α at any angle
        let rest = angle(&hinge(0.0));
        let (mut p, w) = (hinge(2.0).to_vec(), [0.0, 0.0, 0.0, 1.0]);
        let (alpha, mut lambda) = (4.0, [0.0]);
        for _ in 0..200 {
            let mut r = Compliance { alpha, lambda: &mut lambda, most: f32::INFINITY };
            sweep_dihedral(&mut Slices { p: &mut p, w: &w }, &[[0, 1, 2, 3]], &[rest], &mut r, Folds::Unfold);
        }
        let error = angle(&p) - rest;
        assert!(error.abs() > 0.3, "the wing was folded back to {error} rad");
        assert!((error + alpha * lambda[0]).abs() < 1e-3 * error.abs(), "C = {error}, −α̃λ = {}", -alpha * lambda[0]);
    }

    #[test]
    fn a_yielding_hinge_turns_no_further_in_a_substep_than_its_limit_and_below_it_keeps_its_bits() {
        // a rigid hinge (α̃ = 0) folded by 1 rad, 15 iterations of one substep
        let rest = angle(&hinge(0.0));
        let turn = |most: f32| {
            let (mut p, w) = (hinge(1.0).to_vec(), [1.0; 4]);
            let mut lambda = [0.0];
            for _ in 0..15 {
                let mut r = Compliance { alpha: 0.0, lambda: &mut lambda, most };
                sweep_dihedral(&mut Slices { p: &mut p, w: &w }, &[[0, 1, 2, 3]], &[rest], &mut r, Folds::Yield);
            }
            (angle(&p) - angle(&hinge(1.0)), p)
        };
        let (free, free_p) = turn(f32::INFINITY);
        assert!(free.abs() > 0.9, "unlimited, the rigid hinge unfolds: {free} rad");
        let (limited, _) = turn(0.1);
        assert!((limited.abs() - 0.1).abs() < 0.01, "turned {limited} rad, not 0.1");
        assert_eq!(turn(10.0).1, free_p, "a limit the hinge does not reach changes no bit");
        assert_eq!(yield_turn(0.0, 90.0), f32::INFINITY, "a rigid stretch sets no limit");
        assert!((yield_turn(9216.0, 90.0) - 0.0195).abs() < 1e-4);
    }

    #[test]
    fn leaving_folds_skips_only_pairs_folded_past_a_right_angle() {
        let sweep = |fold: f32, folds: Folds| {
            let mut p = hinge(fold).to_vec();
            let w = [1.0; 4];
            sweep_dihedral(
                &mut Slices { p: &mut p, w: &w },
                &[[0, 1, 2, 3]],
                &[std::f32::consts::PI],
                &mut Stiffness(1.0),
                folds,
            );
            angle(&p) - angle(&hinge(fold))
        };
        // folded by 2 rad (the wings 1.14 rad apart): left as it is, or opened by the largest step
        assert_eq!(sweep(2.0, Folds::Leave), 0.0);
        assert!((sweep(2.0, Folds::Unfold) - MAX_ANGLE_STEP).abs() < 0.02);
        // folded by 1.2 rad, less than a right angle: opened alike
        assert!((sweep(1.2, Folds::Leave) - MAX_ANGLE_STEP).abs() < 0.02);
        assert_eq!(sweep(1.2, Folds::Leave), sweep(1.2, Folds::Unfold));
    }

    #[test]
    fn only_a_cloth_whose_stretch_is_far_softer_than_its_bending_leaves_folds() {
        assert_eq!(Folds::for_cloth(0.01, 1.0), Folds::Leave);
        assert_eq!(Folds::for_cloth(0.5, 1.0), Folds::Unfold);
        assert_eq!(Folds::for_cloth(1.0, 0.05), Folds::Unfold);
        assert_eq!(Folds::for_cloth(0.0, 0.0), Folds::Unfold, "no bending, nothing to leave");
    }

    #[test]
    fn xpbd_compliances_amount_to_the_stiffnesses_they_remove_per_substep() {
        // a 2 m × 2 m sheet of 3.5 kg/m² on 31 × 41 vertices at 960 Hz: α_stretch = 0.01 m/N is a k_stretch of
        // 0.02, α_bend = 0 a k_bend of 1, so it leaves its folds
        let (w, edge, dt) = (1271.0 / 14.0, 0.05, 1.0 / 960.0);
        let alpha = [0.01, 0.0].map(|a: f32| a / (dt * dt));
        let mass = vec![w; 8];
        let [stretch, bend] =
            fold_stiffnesses([1.0, 0.1], Some((alpha, 1.0)), (&mass, &[edge]), BendingModel::Dihedral);
        assert!((stretch - 0.0193).abs() < 5e-4 && bend == 1.0, "{stretch} {bend}");
        assert_eq!(Folds::for_cloth(stretch, bend), Folds::Leave);
        // halfway through a switch from the paper's stiffnesses, half of each; without XPBD, the paper's alone
        let [half, _] = fold_stiffnesses([1.0, 0.1], Some((alpha, 0.5)), (&mass, &[edge]), BendingModel::Dihedral);
        assert!((half - 0.5 * (1.0 + stretch)).abs() < 1e-6);
        assert_eq!(fold_stiffnesses([1.0, 0.1], None, (&mass, &[edge]), BendingModel::Dihedral), [1.0, 0.1]);
        // XPBD's default compliances (stretch 0, bending 100) leave nothing
        let soft_bend = [0.0, 100.0].map(|a: f32| a / (dt * dt));
        let [s, b] = fold_stiffnesses([1.0, 0.1], Some((soft_bend, 1.0)), (&mass, &[edge]), BendingModel::Dihedral);
        assert_eq!(Folds::for_cloth(s, b), Folds::Unfold);
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
