//! Balloon volume constraint (§4.4 "Cloth Balloons", eq. 14–15).
//!
//! A closed triangle mesh whose triangles are oriented outward (counter-clockwise seen from outside) encloses
//! the volume V(p) = Σ_t (p_{t1} × p_{t2}) · p_{t3} / 6, the sum of the signed tetrahedra spanned by each
//! triangle and the origin. Overpressure is one *equality* constraint over all N vertices (eq. 14)
//!
//! C(p_1, …, p_N) = V(p) − k_pressure V0,
//!
//! whose gradient with respect to vertex i sums, over the triangles (a, b, c) containing it, (b × c) / 6 when i
//! is a, (c × a) / 6 when i is b and (a × b) / 6 when i is c (eq. 15). It is projected with the general
//! inverse-mass formula of §3.3, eq. (8)–(9).
//!
//! The paper's eq. (14)–(15) leave out the factor 1/6. That only rescales C and ∇C together, so the projection
//! of eq. (8)–(9) is the same either way; keeping it makes [`enclosed_volume`] a true volume.
//!
//! For a closed mesh V does not depend on the origin of the tetrahedra, so both functions measure positions
//! from the centroid of `p`: far from the world origin the terms would otherwise be large and cancel in f32.
//! The constraint is internal: the gradients sum to zero (the area vectors of a closed surface cancel) and are
//! orthogonal to rotations, so each projection conserves linear and angular momentum (eq. 1–2) for any masses;
//! the projection also takes away the turn line (12) would see, so a free balloon's does so exactly.
//!
//! The paper holds the volume exactly (k = 1). Here the air inside gives as isothermal air does
//! ([`air_compliance`]), through XPBD's multiplier in both solvers: a cloth that cannot stretch to the target
//! otherwise fights the constraint in every iteration (docs/reliability.md, "A balloon its cloth cannot stretch
//! to"). Below k_pressure 1 the constraint is one-sided ([`VolumeGoal::slack`]): a bag holding less air than its
//! volume is not pulled in.

use bevy::math::{Mat3, Vec3};

/// Volume enclosed by a closed triangle mesh with outward (counter-clockwise seen from outside) triangles:
/// eq. (14) without the constant, Σ (p1 × p2) · p3 / 6. Inward-oriented meshes give the negative volume. For a
/// mesh that is not closed the value depends on the reference point (here the centroid of `p`).
///
/// # Panics
/// If a triangle index is out of bounds of `p`.
pub fn enclosed_volume(p: &[Vec3], triangles: &[[u32; 3]]) -> f32 {
    let origin = centroid(p);
    let six_volume: f64 = triangles
        .iter()
        .map(|&[a, b, c]| {
            let (a, b, c) = (p[a as usize] - origin, p[b as usize] - origin, p[c as usize] - origin);
            f64::from(a.cross(b).dot(c))
        })
        .sum();
    (six_volume / 6.0) as f32
}

/// Pressure of the air around a balloon, Pa.
pub const ATMOSPHERIC_PRESSURE: f32 = 101_325.0;

/// A balloon's volume constraint in one substep.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VolumeGoal {
    /// The target k_pressure · V0 (pumped up toward it, `balloons::pumped_volume`), m³.
    pub volume: f32,
    /// The time-scaled compliance α̃ = α / Δt² of the air inside, α = V / p_atm ([`air_compliance`]).
    pub air_compliance: f32,
    /// Whether the balloon holds less air than its rest volume (k_pressure below 1): a slack bag, whose air
    /// resists being squeezed below `volume` and never pulls the cloth in (its multiplier stays at or above zero).
    pub slack: bool,
}

impl VolumeGoal {
    /// The goal `volume` of a balloon whose rest volume is `rest`, for substeps of `dt` seconds.
    pub fn new(volume: f32, rest: f32, dt: f32) -> Self {
        Self { volume, air_compliance: air_compliance(volume) / (dt * dt), slack: volume < rest }
    }
}

/// The compliance of the air in a balloon of `volume` m³, m³/Pa: the volume one pascal takes from it, V / p_atm
/// (Boyle's law at constant temperature, linearised about the atmosphere's pressure).
///
/// The paper's k = 1 keeps the volume exactly, and no cloth is inextensible: a membrane that cannot stretch to the
/// target fights the constraint in every iteration, the cycle of shapes between the two projections turns the
/// balloon a little each time, and line (12) makes that turn a spin. With the air's own give, the multiplier λ
/// converges to the pressure that balances the membrane, and the cycle dies out.
pub fn air_compliance(volume: f32) -> f32 {
    volume.abs() / ATMOSPHERIC_PRESSURE
}

/// Longest move of one volume projection, as a fraction of the cube root of the target volume.
pub(crate) const MAX_STEP: f32 = 0.1;

/// How the volume constraint answers its error C: XPBD's Δλ = (−C − α̃λ) / (Σ_j w_j |∇_j C|² + α̃), Δp_i =
/// w_i ∇_i C Δλ, with α̃ = α/Δt² (m³/Pa over s²). α = 0 is the paper's k = 1 (eq. 8–9); the solvers give the
/// air's compliance at least ([`air_compliance`]).
#[derive(Debug)]
pub(crate) struct VolumeResponse<'a> {
    /// α̃ = α / Δt².
    pub alpha: f32,
    /// This substep's λ, zero at its start; each projection subtracts the factor of its correction.
    pub lambda: &'a mut f32,
    /// XPBD's share of the correction, 0 to 1: below 1 while the solver switches, the rest being the paper's k = 1
    /// (as `Blend` does for stretch and bending).
    pub share: f32,
    /// The air only pushes out: λ stays at or above zero, so a volume above the target is left alone; pulled in,
    /// a bag let down below its rest volume was crushed and spun up (docs/reliability.md, "A balloon let down").
    pub slack: bool,
}

impl VolumeResponse<'_> {
    /// The factor s of Δp_i = −s w_i ∇_i C for the error `error` and the denominator Σ_j w_j |∇_j C|².
    fn scale(&self, error: f32, denominator: f32) -> f32 {
        let xpbd = (error + self.alpha * *self.lambda) / (denominator + self.alpha);
        if self.share >= 1.0 { xpbd } else { (1.0 - self.share) * error / denominator + self.share * xpbd }
    }
}

/// One projection of the balloon constraint C = V(p) − `target_volume` (eq. 14) onto the positions `p`; `start`
/// holds where the substep started them if the balloon is free (no vertex pinned or held).
///
/// `target_volume` is k_pressure · V0: the paper's overpressure factor k_pressure is folded into the target by
/// the caller. With the gradients ∇_i C of eq. (15) the correction is Δp_i = −s w_i ∇_i C ([`VolumeResponse`]
/// gives s); vertices with w_i = 0 do not move.
///
/// A free balloon's correction then loses the rigid turn it gives about its start x. ∇C is orthogonal to
/// rotations about `p`, so Σ m_i (p_i − c) × Δp_i = 0, but line (12)'s velocities carry the angular momentum
/// Σ m_i x_i × p_i / Δt, which gains Σ m_i x_i × Δp_i: on a turning balloon that the volume pushes out, a torque
/// along its spin that grows with it. Taking away the rotation θ × (x_i − c) with I θ = Σ m_i (x_i − c) × Δp_i (I
/// the inertia about the centre of mass c) makes the projection conserve angular momentum exactly, and linear
/// momentum still. A pinned or held balloon keeps the whole correction: its pins or bodies take the torque, and
/// a body's mass lent to its vertex would make the turn one about that vertex.
///
/// `gradient` is caller-owned scratch: it is resized to `p.len()` and holds ∇_i C afterwards, so a warm
/// buffer is reused without allocating. `w` should have one inverse mass per position (vertices past its end
/// do not move). No vertex moves further than [`MAX_STEP`] · ∛target in one projection: the whole correction is
/// scaled down when one would. The projection is skipped, leaving `p` unchanged, when Σ w |∇C|² vanishes (a
/// collapsed mesh or every vertex pinned) or when C, the denominator or the scale factor are not finite.
///
/// # Panics
/// If a triangle index is out of bounds of `p`.
pub(crate) fn project_volume(
    p: &mut [Vec3],
    start: Option<&[Vec3]>,
    w: &[f32],
    triangles: &[[u32; 3]],
    target_volume: f32,
    response: VolumeResponse,
    gradient: &mut Vec<Vec3>,
) {
    const SIXTH: f32 = 1.0 / 6.0;
    gradient.clear();
    gradient.resize(p.len(), Vec3::ZERO);

    let origin = centroid(p);
    let mut six_volume = 0.0f64;
    for &[a, b, c] in triangles {
        let (a, b, c) = (a as usize, b as usize, c as usize);
        let (pa, pb, pc) = (p[a] - origin, p[b] - origin, p[c] - origin);
        let bc = pb.cross(pc);
        six_volume += f64::from(pa.dot(bc));
        gradient[a] += bc * SIXTH;
        gradient[b] += pc.cross(pa) * SIXTH;
        gradient[c] += pa.cross(pb) * SIXTH;
    }

    let constraint = (six_volume / 6.0) as f32 - target_volume;
    let denominator: f32 = gradient.iter().zip(w).map(|(g, &wi)| wi * g.length_squared()).sum();
    if !constraint.is_finite() || !denominator.is_finite() || denominator <= f32::MIN_POSITIVE {
        return;
    }
    let mut scale = response.scale(constraint, denominator);
    if response.slack {
        scale = scale.min(*response.lambda);
    }
    if !scale.is_finite() || scale == 0.0 {
        return;
    }
    // a crumpled balloon has tiny gradients and a huge s: no vertex moves further than a tenth of the target's
    // size in one projection (the direction of every correction kept), so one step cannot throw it away
    let largest = gradient.iter().zip(w).map(|(g, &wi)| wi * g.length()).fold(0.0, f32::max) * scale.abs();
    let limit = MAX_STEP * target_volume.abs().cbrt();
    if largest > limit {
        scale *= limit / largest;
    }
    *response.lambda -= scale;
    let turned = start.and_then(|x| Some((x, spurious_turn(x, w, gradient, scale)?)));
    for (i, (pi, &wi)) in p.iter_mut().zip(w).enumerate() {
        if wi > 0.0 {
            *pi -= gradient[i] * (scale * wi);
        }
        if let Some((x, (centre, turn))) = turned {
            *pi -= turn.cross(x[i] - centre);
        }
    }
}

/// The centre of mass c and the rotation θ (radians) whose turn θ × (x_i − c) of every vertex carries the angular
/// momentum about `x` of the correction Δp_i = −`scale` w_i ∇_i C: I θ = Σ m_i (x_i − c) × Δp_i. `None` when a
/// vertex is pinned, `x` does not match `w`, or the inertia is singular.
fn spurious_turn(x: &[Vec3], w: &[f32], gradient: &[Vec3], scale: f32) -> Option<(Vec3, Vec3)> {
    if x.len() != w.len() || w.iter().any(|&wi| wi <= 0.0) {
        return None;
    }
    let (mass, weighted) = x.iter().zip(w).fold((0.0, Vec3::ZERO), |(m, s), (xi, &wi)| (m + 1.0 / wi, s + *xi / wi));
    let centre = weighted / mass;
    let (mut torque, mut inertia) = (Vec3::ZERO, Mat3::ZERO);
    for ((xi, g), &wi) in x.iter().zip(gradient).zip(w) {
        let r = *xi - centre;
        torque -= r.cross(*g * scale); // m_i w_i = 1
        inertia +=
            (Mat3::from_diagonal(Vec3::splat(r.length_squared())) - Mat3::from_cols(r * r.x, r * r.y, r * r.z)) / wi;
    }
    let turn = (inertia.determinant().abs() > f32::MIN_POSITIVE).then(|| inertia.inverse() * torque)?;
    turn.is_finite().then_some((centre, turn))
}

/// Mean of the positions (the origin for an empty slice).
fn centroid(p: &[Vec3]) -> Vec3 {
    if p.is_empty() { Vec3::ZERO } else { p.iter().sum::<Vec3>() / p.len() as f32 }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::f32::consts::PI;

    use super::*;

    /// The unit cube [0, 1]³ as 12 outward triangles.
    fn unit_cube() -> (Vec<Vec3>, Vec<[u32; 3]>) {
        let p = (0..8u32).map(|i| Vec3::new((i & 1) as f32, ((i >> 1) & 1) as f32, ((i >> 2) & 1) as f32)).collect();
        #[rustfmt::skip]
        let t = vec![
            [0, 2, 1], [1, 2, 3], // z = 0
            [4, 5, 6], [5, 7, 6], // z = 1
            [0, 1, 4], [1, 5, 4], // y = 0
            [2, 6, 3], [3, 6, 7], // y = 1
            [0, 4, 2], [2, 4, 6], // x = 0
            [1, 3, 5], [3, 7, 5], // x = 1
        ];
        (p, t)
    }

    /// Geodesic sphere: the regular icosahedron subdivided `levels` times, midpoints pushed onto the sphere.
    /// A self-contained copy of the construction in `sim::mesh::icosphere`, so this module depends on nothing else.
    fn sphere(levels: u32, radius: f32, center: Vec3) -> (Vec<Vec3>, Vec<[u32; 3]>) {
        let t = (1.0 + 5f32.sqrt()) / 2.0;
        #[rustfmt::skip]
        let corners = [
            [-1.0, t, 0.0], [1.0, t, 0.0], [-1.0, -t, 0.0], [1.0, -t, 0.0],
            [0.0, -1.0, t], [0.0, 1.0, t], [0.0, -1.0, -t], [0.0, 1.0, -t],
            [t, 0.0, -1.0], [t, 0.0, 1.0], [-t, 0.0, -1.0], [-t, 0.0, 1.0],
        ];
        let mut v: Vec<Vec3> = corners.iter().map(|&c| Vec3::from_array(c).normalize()).collect();
        #[rustfmt::skip]
        let mut f: Vec<[u32; 3]> = vec![
            [0, 11, 5], [0, 5, 1], [0, 1, 7], [0, 7, 10], [0, 10, 11],
            [1, 5, 9], [5, 11, 4], [11, 10, 2], [10, 7, 6], [7, 1, 8],
            [3, 9, 4], [3, 4, 2], [3, 2, 6], [3, 6, 8], [3, 8, 9],
            [4, 9, 5], [2, 4, 11], [6, 2, 10], [8, 6, 7], [9, 8, 1],
        ];
        for _ in 0..levels {
            let mut midpoints = HashMap::new();
            let mut mid = |i: u32, j: u32| {
                *midpoints.entry((i.min(j), i.max(j))).or_insert_with(|| {
                    v.push((v[i as usize] + v[j as usize]).normalize());
                    (v.len() - 1) as u32
                })
            };
            f = f
                .iter()
                .flat_map(|&[a, b, c]| {
                    let (ab, bc, ca) = (mid(a, b), mid(b, c), mid(c, a));
                    [[a, ab, ca], [b, bc, ab], [c, ca, bc], [ab, bc, ca]]
                })
                .collect();
        }
        (v.into_iter().map(|q| center + q * radius).collect(), f)
    }

    /// One projection with the paper's k = 1 (α = 0) of positions whose substep started where they are.
    fn project_exact(p: &mut [Vec3], w: &[f32], t: &[[u32; 3]], target: f32, gradient: &mut Vec<Vec3>) {
        let x = p.to_vec();
        let exact = VolumeResponse { alpha: 0.0, lambda: &mut 0.0, share: 1.0, slack: false };
        project_volume(p, Some(&x), w, t, target, exact, gradient);
    }

    fn relative_error(value: f32, reference: f32) -> f32 {
        (value - reference).abs() / reference.abs()
    }

    #[test]
    fn a_slack_bag_is_pushed_out_below_its_air_and_never_pulled_in() {
        let (p0, t) = sphere(2, 0.5, Vec3::new(0.3, 1.2, 0.0));
        let (w, v0) = (vec![1.0; p0.len()], enclosed_volume(&p0, &t));
        let mut gradient = Vec::new();
        let project = |p: &mut Vec<Vec3>, target: f32, slack: bool, lambda: &mut f32, gradient: &mut Vec<Vec3>| {
            let response = VolumeResponse { alpha: 0.0, lambda, share: 1.0, slack };
            project_volume(p, None, &w, &t, target, response, gradient);
        };
        // holding half its volume of air, the bag is left as it is; the paper's equality crushes it
        let (mut slack, mut lambda) = (p0.clone(), 0.0);
        project(&mut slack, 0.5 * v0, true, &mut lambda, &mut gradient);
        assert_eq!(slack, p0);
        let mut crushed = p0.clone();
        project(&mut crushed, 0.5 * v0, false, &mut 0.0, &mut gradient);
        assert!(enclosed_volume(&crushed, &t) < 0.95 * v0);
        // squeezed below its air, it is pushed back out to it
        let mut squeezed: Vec<Vec3> = p0.iter().map(|q| Vec3::new(q.x, 1.2 + 0.3 * (q.y - 1.2), q.z)).collect();
        let (mut lambda, before) = (0.0, enclosed_volume(&squeezed, &t));
        assert!(before < 0.5 * v0);
        for _ in 0..20 {
            project(&mut squeezed, 0.5 * v0, true, &mut lambda, &mut gradient);
        }
        assert!(relative_error(enclosed_volume(&squeezed, &t), 0.5 * v0) < 1e-3 && lambda > 0.0);
    }

    #[test]
    fn unit_cube_has_unit_volume() {
        let (p, t) = unit_cube();
        let v = enclosed_volume(&p, &t);
        assert!((v - 1.0).abs() < 1e-6, "cube volume {v}");
        let flipped: Vec<[u32; 3]> = t.iter().map(|&[a, b, c]| [a, c, b]).collect();
        assert!((enclosed_volume(&p, &flipped) + 1.0).abs() < 1e-6, "inward orientation gives −V");
    }

    #[test]
    fn icosphere_volume_is_just_below_the_ball() {
        let r = 0.7;
        let (p, t) = sphere(3, r, Vec3::new(0.2, 1.5, -0.4));
        let v = enclosed_volume(&p, &t);
        let ball = 4.0 / 3.0 * PI * r * r * r;
        assert!(v < ball, "an inscribed polyhedron is smaller than the ball: {v} vs {ball}");
        assert!(relative_error(v, ball) < 0.02, "icosphere volume {v} vs ball {ball}");
    }

    #[test]
    fn volume_is_translation_invariant() {
        let (p, t) = sphere(3, 1.0, Vec3::ZERO);
        let shift = Vec3::new(5.0, -3.0, 2.0);
        let moved: Vec<Vec3> = p.iter().map(|&q| q + shift).collect();
        let (v0, v1) = (enclosed_volume(&p, &t), enclosed_volume(&moved, &t));
        assert!(relative_error(v1, v0) < 1e-4, "{v0} vs {v1} after translation");
    }

    #[test]
    fn repeated_projection_reaches_the_target_volume() {
        let (mut p, t) = sphere(3, 1.0, Vec3::new(1.0, 2.0, 3.0));
        let target = enclosed_volume(&p, &t) * 1.2; // k_pressure = 1.2 of the round rest volume
        for q in &mut p {
            q.y = 2.0 + (q.y - 2.0) * 0.5; // squash to half the height
        }
        let w = vec![1.0; p.len()];
        let mut gradient = Vec::new();
        let start = (enclosed_volume(&p, &t) - target).abs();
        for _ in 0..10 {
            project_exact(&mut p, &w, &t, target, &mut gradient);
        }
        let error = (enclosed_volume(&p, &t) - target).abs();
        assert!(error < 1e-3 * target, "volume error {error} (started at {start}) for target {target}");
        assert!(p.iter().all(|q| q.is_finite()));
    }

    #[test]
    fn a_crumpled_balloon_is_not_thrown_apart_in_one_projection() {
        let (mut p, t) = sphere(2, 1.0, Vec3::ZERO);
        for q in &mut p {
            q.y *= 1e-4; // flattened to a disc: a volume near zero, tiny gradients
        }
        let (before, w, target) = (p.clone(), vec![1.0; p.len()], 4.0 * 1.9);
        project_exact(&mut p, &w, &t, target, &mut Vec::new());
        let furthest = before.iter().zip(&p).map(|(a, b)| a.distance(*b)).fold(0.0, f32::max);
        assert!(furthest > 0.0 && furthest <= MAX_STEP * target.cbrt() * 1.0001, "moved {furthest}");
    }

    #[test]
    fn a_compliance_equal_to_the_denominator_halves_the_first_correction() {
        let (p, t) = sphere(2, 1.0, Vec3::ZERO);
        let w: Vec<f32> = (0..p.len()).map(|i| 0.5 + (i % 3) as f32).collect();
        let mut gradient = Vec::new();
        let (mut full, mut half) = (p.clone(), p.clone());
        project_exact(&mut full, &w, &t, 5.0, &mut gradient);
        let denominator: f32 = gradient.iter().zip(&w).map(|(g, wi)| wi * g.length_squared()).sum();
        let response = VolumeResponse { alpha: denominator, lambda: &mut 0.0, share: 1.0, slack: false };
        project_volume(&mut half, Some(&p), &w, &t, 5.0, response, &mut gradient);
        for ((a, b), c) in p.iter().zip(&full).zip(&half) {
            assert!(((*b - *a) * 0.5 - (*c - *a)).length() < 1e-5);
        }
    }

    #[test]
    fn projection_conserves_linear_and_angular_momentum_with_unequal_masses() {
        // 162 vertices: the residual is f32 rounding of the moved positions (~1e-7 of Σ m |Δp| ≈ 15 here), which
        // grows with the vertex count
        let (mut p, t) = sphere(2, 1.0, Vec3::new(0.5, -1.0, 2.0));
        for q in &mut p {
            *q *= Vec3::new(1.3, 0.6, 1.0); // squash and stretch so the correction is not uniform
        }
        let mass: Vec<f32> = (0..p.len()).map(|i| 0.25 + (i * 7 % 11) as f32 * 0.3).collect();
        let w: Vec<f32> = mass.iter().map(|m| 1.0 / m).collect();
        let before = p.clone();
        let target = 1.3 * enclosed_volume(&p, &t);
        project_exact(&mut p, &w, &t, target, &mut Vec::new());

        let center = before.iter().sum::<Vec3>() / before.len() as f32;
        let (mut linear, mut angular, mut moved) = (Vec3::ZERO, Vec3::ZERO, 0.0f32);
        for ((a, b), m) in before.iter().zip(&p).zip(&mass) {
            let momentum = (*b - *a) * *m;
            linear += momentum;
            angular += (*a - center).cross(momentum);
            moved = moved.max(b.distance(*a));
        }
        assert!(moved > 0.05, "the projection moved nothing");
        assert!(linear.length() < 1e-5, "linear momentum change {linear}");
        assert!(angular.length() < 1e-5, "angular momentum change {angular}");
    }

    #[test]
    fn pinned_vertices_do_not_move() {
        let (mut p, t) = sphere(2, 1.0, Vec3::ZERO);
        let w: Vec<f32> = (0..p.len()).map(|i| if i % 4 == 0 { 0.0 } else { 1.0 }).collect();
        let before = p.clone();
        let target = 2.0 * enclosed_volume(&p, &t);
        let mut gradient = Vec::new();
        for _ in 0..5 {
            project_exact(&mut p, &w, &t, target, &mut gradient);
        }
        for (i, (a, b)) in before.iter().zip(&p).enumerate() {
            if w[i] == 0.0 {
                assert_eq!(a, b, "pinned vertex {i} moved");
            } else {
                assert!(b.length() > 1.05, "free vertex {i} was not pushed out");
            }
        }
        assert!(relative_error(enclosed_volume(&p, &t), target) < 1e-3);
    }

    #[test]
    fn degenerate_or_non_finite_input_leaves_positions_unchanged() {
        let (p, t) = unit_cube();
        let mut gradient = Vec::new();

        let mut pinned = p.clone();
        project_exact(&mut pinned, &[0.0; 8], &t, 2.0, &mut gradient);
        assert_eq!(pinned, p, "every vertex pinned");

        let mut collapsed = vec![Vec3::ONE; 8];
        project_exact(&mut collapsed, &[1.0; 8], &t, 2.0, &mut gradient);
        assert_eq!(collapsed, vec![Vec3::ONE; 8], "zero gradient");

        let mut nan = p.clone();
        nan[3] = Vec3::NAN;
        project_exact(&mut nan, &[1.0; 8], &t, 2.0, &mut gradient);
        assert_eq!(&nan[..3], &p[..3], "NaN position");
        assert_eq!(&nan[4..], &p[4..], "NaN position");

        let mut bad_target = p.clone();
        project_exact(&mut bad_target, &[1.0; 8], &t, f32::INFINITY, &mut gradient);
        assert_eq!(bad_target, p, "infinite target");

        let mut infinite_w = p.clone();
        project_exact(&mut infinite_w, &[f32::INFINITY; 8], &t, 2.0, &mut gradient);
        assert_eq!(infinite_w, p, "infinite inverse mass");

        let mut empty: Vec<Vec3> = Vec::new();
        project_exact(&mut empty, &[], &[], 1.0, &mut gradient);
        assert_eq!(enclosed_volume(&[], &[]), 0.0);
    }

    #[test]
    fn gradient_scratch_is_reused_without_reallocating() {
        let (mut p, t) = sphere(2, 1.0, Vec3::ZERO);
        let w = vec![1.0; p.len()];
        let mut gradient = Vec::new();
        project_exact(&mut p, &w, &t, 3.0, &mut gradient);
        assert_eq!(gradient.len(), p.len());
        let (capacity, buffer) = (gradient.capacity(), gradient.as_ptr());
        for _ in 0..3 {
            project_exact(&mut p, &w, &t, 3.0, &mut gradient);
            assert_eq!(gradient.len(), p.len());
            assert_eq!((gradient.capacity(), gradient.as_ptr()), (capacity, buffer));
        }
    }

    #[test]
    fn gradient_matches_finite_differences() {
        let (mut p, t) = sphere(1, 1.0, Vec3::new(0.3, 0.1, -0.2));
        for (i, q) in p.iter_mut().enumerate() {
            *q += Vec3::new(0.05, -0.03, 0.02) * (i % 5) as f32; // break the symmetry
        }
        let v = enclosed_volume(&p, &t);
        let mut gradient = Vec::new();
        project_exact(&mut p.clone(), &vec![1.0; p.len()], &t, v, &mut gradient);
        let h = 1e-2;
        for i in [0, 5, 17, 41] {
            for axis in [Vec3::X, Vec3::Y, Vec3::Z] {
                let (mut plus, mut minus) = (p.clone(), p.clone());
                plus[i] += axis * h;
                minus[i] -= axis * h;
                let numeric = (enclosed_volume(&plus, &t) - enclosed_volume(&minus, &t)) / (2.0 * h);
                assert!((numeric - gradient[i].dot(axis)).abs() < 1e-3, "vertex {i}: {numeric} vs {}", gradient[i]);
            }
        }
    }

    #[test]
    fn zero_compliance_reaches_the_target_and_compliance_balances_lambda() {
        let (start, t) = sphere(2, 1.0, Vec3::ZERO);
        let target = enclosed_volume(&start, &t) * 1.5;
        let w: Vec<f32> = (0..start.len()).map(|i| 1.0 + (i % 3) as f32).collect();
        let (mut hard, mut soft) = (start.clone(), start.clone());
        let (mut hard_lambda, mut soft_lambda, mut gradient) = (0.0, 0.0, Vec::new());
        let alpha = 0.5;
        for _ in 0..40 {
            let hard_response = VolumeResponse { alpha: 0.0, lambda: &mut hard_lambda, share: 1.0, slack: false };
            project_volume(&mut hard, Some(&start), &w, &t, target, hard_response, &mut gradient);
            let soft_response = VolumeResponse { alpha, lambda: &mut soft_lambda, share: 1.0, slack: false };
            project_volume(&mut soft, Some(&start), &w, &t, target, soft_response, &mut gradient);
        }
        assert!(relative_error(enclosed_volume(&hard, &t), target) < 1e-3, "α = 0 keeps k_pressure·V0");
        // converged XPBD: C(p) + α̃λ = 0, the constraint's force λ balancing its compliance
        let error = enclosed_volume(&soft, &t) - target;
        assert!(error < -0.01 * target, "the compliance leaves the volume short: {error}");
        assert!((error + alpha * soft_lambda).abs() < 1e-3 * target, "C = {error}, α̃λ = {}", alpha * soft_lambda);
    }

    #[test]
    fn a_balloon_that_turned_during_the_substep_is_corrected_without_a_torque() {
        let (x, t) = sphere(2, 1.0, Vec3::new(0.5, -1.0, 2.0));
        let centre = x.iter().sum::<Vec3>() / x.len() as f32;
        // the substep turned it 0.2 rad and squashed it, so ∇C(p) has a moment about the start x
        let turn = bevy::math::Quat::from_axis_angle(Vec3::new(0.3, 1.0, 0.2).normalize(), 0.2);
        let mut p: Vec<Vec3> = x.iter().map(|&q| centre + turn * ((q - centre) * Vec3::new(1.3, 0.6, 1.0))).collect();
        let mass: Vec<f32> = (0..p.len()).map(|i| 0.25 + (i * 7 % 11) as f32 * 0.3).collect();
        let w: Vec<f32> = mass.iter().map(|m| 1.0 / m).collect();
        let before = p.clone();
        let target = 1.3 * enclosed_volume(&x, &t);
        let mut gradient = Vec::new();
        let exact = VolumeResponse { alpha: 0.0, lambda: &mut 0.0, share: 1.0, slack: false };
        project_volume(&mut p, Some(&x), &w, &t, target, exact, &mut gradient);

        // line (12)'s angular momentum Σ m x × p / Δt gains Σ m x × Δp
        let moment = |dp: &dyn Fn(usize) -> Vec3| (0..x.len()).map(|i| x[i].cross(dp(i)) * mass[i]).sum::<Vec3>();
        let plain = moment(&|i| -gradient[i] * w[i]);
        let (linear, angular) = (0..x.len()).fold((Vec3::ZERO, Vec3::ZERO), |(l, a), i| {
            let dp = (p[i] - before[i]) * mass[i];
            (l + dp, a + x[i].cross(dp))
        });
        let moved = before.iter().zip(&p).map(|(a, b)| a.distance(*b)).fold(0.0, f32::max);
        assert!(moved > 0.05, "the projection moved nothing");
        assert!(plain.length() > 1e-3 * moved, "the setup gives the gradient no moment about x: {plain}");
        assert!(linear.length() < 1e-4, "linear momentum change {linear}");
        assert!(angular.length() < 1e-4, "angular momentum change {angular} (the gradient's moment: {plain})");
        assert!(enclosed_volume(&p, &t) > enclosed_volume(&before, &t) + 0.1, "the volume did not grow");
    }
}
