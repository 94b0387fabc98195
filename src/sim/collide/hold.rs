//! Holds as two-way attachments (§4.2): cloth vertices held on points of a rigid body, Cᵢ = pᵢ − qᵢ(body) = 0,
//! projected with both sides' masses. A body's holds are solved together, as one block: the body's correction
//! ξ = (Δx, Δθ) and the vertices' moves Δpᵢ = gᵢ + Δx + Δθ × rᵢ (gᵢ the gap from vertex to body point, rᵢ the
//! point's arm) that close every gap with the least mass-weighted motion, Σ mᵢ|Δpᵢ|² + ξᵀ M_b ξ, come from the
//! 6 × 6 system (M_b + Σ mᵢ Jᵢᵀ Jᵢ) ξ = −Σ mᵢ Jᵢᵀ gᵢ (Jᵢ ξ = Δx + Δθ × rᵢ), solved by blocks. It is XPBD's
//! joint between particles and a body (Müller et al. 2020, "Detailed Rigid Body Simulation with Extended Position
//! Based Dynamics", zero compliance) for all of a body's joints at once: one hold at a time, a body light about
//! an axis (a thin bar about its length) was turned back and forth by its holds in turn, and the turns left as
//! spin. Linear momentum is kept by construction; a heavy body keeps its pose and puts its vertices on its points,
//! a light one (a 10 g bar under a heavy sheet, a ball held far from its centre) goes where they are. The body's
//! pose takes the correction within the solver loop, its velocities the correction over Δt once the loop is done
//! ([`ClothRigidBody::settle`](crate::sim::rigid::ClothRigidBody::settle)).
//!
//! Within the projection a held vertex carries a share of its body's mass (`lend_body_masses`), so the cloth moves
//! it as little as it would move the body and passes the rest up the cloth, as at a pin. Whatever the cloth moved
//! that compound by since the holds last saw it, the body's lent part takes as its own move before the block is
//! solved: the vertex keeps mᵢ δ of the momentum, the body m_lent δ, as the cloth gave (mᵢ + m_lent) δ.

use bevy::math::{Mat3, Quat, Vec3};

use super::contact::Contact;
use crate::sim::constraints::access::ParticleAccess;

/// A body as its holds see it within one substep's projection: its pose predicted before the projection, and the
/// correction its holds have given it since.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HeldBody {
    /// Centre of mass at the end of the substep, as predicted before the projection.
    pub centre: Vec3,
    /// 1/M, 1/kg; 0 for a collider that is not a body (its holds put the vertex on it).
    pub inverse_mass: f32,
    /// Inertia tensor in world space at the predicted pose, kg·m².
    pub inertia: Mat3,
    /// Its inverse (zero if it has none).
    inverse_inertia: Mat3,
    /// Translation the holds gave the body within the projection, metres.
    pub shift: Vec3,
    /// Rotation (axis × angle) the holds gave the body within the projection, radians.
    pub turn: Vec3,
    /// The sums of one block solve.
    gather: Gather,
    /// `turn` as a rotation, brought up to date after each pass over the holds.
    rotation: Quat,
    /// `shift` and `rotation` before the last block solve.
    before_solve: (Vec3, Quat),
}

/// The sums over one body's holds that its block solve needs.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Gather {
    /// Σ mᵢ.
    mass: f32,
    /// Σ mᵢ rᵢ.
    moment: Vec3,
    /// Σ mᵢ gᵢ.
    pull: Vec3,
    /// Σ mᵢ rᵢ × gᵢ.
    torque: Vec3,
    /// Σ mᵢ (|rᵢ|² I − rᵢ rᵢᵀ): the held vertices' inertia about the centre.
    spread: Mat3,
    /// The solved correction (Δx, Δθ).
    solved: (Vec3, Vec3),
}

impl Default for Gather {
    fn default() -> Self {
        Self {
            mass: 0.0,
            moment: Vec3::ZERO,
            pull: Vec3::ZERO,
            torque: Vec3::ZERO,
            spread: Mat3::ZERO,
            solved: (Vec3::ZERO, Vec3::ZERO),
        }
    }
}

impl Default for HeldBody {
    fn default() -> Self {
        Self::immovable()
    }
}

impl HeldBody {
    /// A collider that gives nothing: its holds put their vertices on it.
    pub fn immovable() -> Self {
        Self {
            centre: Vec3::ZERO,
            inverse_mass: 0.0,
            inertia: Mat3::ZERO,
            inverse_inertia: Mat3::ZERO,
            shift: Vec3::ZERO,
            turn: Vec3::ZERO,
            gather: Gather::default(),
            rotation: Quat::IDENTITY,
            before_solve: (Vec3::ZERO, Quat::IDENTITY),
        }
    }

    /// A body of inverse mass `inverse_mass` and world inertia `inertia` predicted at `centre`.
    pub fn new(centre: Vec3, inverse_mass: f32, inertia: Mat3) -> Self {
        let inverse_inertia = invert(inertia).unwrap_or(Mat3::ZERO);
        Self { centre, inverse_mass, inertia, inverse_inertia, ..Self::immovable() }
    }

    /// Whether the body gives way to its holds and contacts.
    pub(crate) fn movable(&self) -> bool {
        self.inverse_mass > 0.0
    }

    /// The direction `n` of the predicted pose, turned with the body since.
    pub(crate) fn turned(&self, n: Vec3) -> Vec3 {
        self.rotation * n
    }

    /// 1 / effective mass for a positional impulse along unit `n` at `arm`: 1/M + (r × n) · I⁻¹ (r × n).
    pub(crate) fn inverse_mass_along(&self, arm: Vec3, n: Vec3) -> f32 {
        let turning = arm.cross(n);
        self.inverse_mass + turning.dot(self.inverse_inertia * turning)
    }

    /// Moves the body at once as the positional impulse `impulse` (kg·m) at `arm` would.
    pub(crate) fn take(&mut self, arm: Vec3, impulse: Vec3) {
        self.push(arm, impulse);
        self.turn_to_date();
    }

    /// Where the body point predicted at `point` is now, and its arm from the centre of mass.
    pub fn follow(&self, point: Vec3) -> (Vec3, Vec3) {
        self.follow_with(point, (self.shift, self.rotation))
    }

    /// Where the body point predicted at `point` was before the last block solve, and its arm then.
    fn follow_before_solve(&self, point: Vec3) -> (Vec3, Vec3) {
        self.follow_with(point, self.before_solve)
    }

    /// Where the body point predicted at `point` is after the correction (`shift`, `rotation`).
    fn follow_with(&self, point: Vec3, (shift, rotation): (Vec3, Quat)) -> (Vec3, Vec3) {
        let arm = rotation * (point - self.centre);
        (self.centre + shift + arm, arm)
    }

    /// Moves the body as a positional impulse `impulse` (kg·m) at `arm` would.
    /// `rotation` waits for [`Self::turn_to_date`].
    fn push(&mut self, arm: Vec3, impulse: Vec3) {
        self.shift += impulse * self.inverse_mass;
        self.turn += self.inverse_inertia * arm.cross(impulse);
    }

    /// Brings `rotation` up to `turn`.
    fn turn_to_date(&mut self) {
        self.rotation = Quat::from_scaled_axis(self.turn);
    }

    /// Adds a vertex of mass `mass` with gap `gap` at `arm` to the block.
    fn gather(&mut self, mass: f32, arm: Vec3, gap: Vec3) {
        let g = &mut self.gather;
        g.mass += mass;
        g.moment += arm * mass;
        g.pull += gap * mass;
        g.torque += arm.cross(gap) * mass;
        g.spread += (Mat3::from_diagonal(Vec3::splat(arm.length_squared())) - outer(arm, arm)) * mass;
    }

    /// Solves the block gathered so far and moves the body by it; the vertices' moves follow from
    /// [`Self::vertex_move`]. By blocks: with a = M + Σm and s = Σ m r, Δx = (b₁ + s × Δθ) / a and
    /// (I + Σ m(|r|² − r rᵀ) + (s sᵀ − |s|² I) / a) Δθ = b₂ − s × b₁ / a, for b₁ = −Σ m g and b₂ = −Σ m r × g.
    fn solve_block(&mut self) {
        let g = self.gather;
        let a = 1.0 / self.inverse_mass + g.mass;
        let (b1, b2) = (-g.pull, -g.torque);
        let s = g.moment;
        let coupling = (outer(s, s) - Mat3::from_diagonal(Vec3::splat(s.length_squared()))) * (1.0 / a);
        let turn = solve(self.inertia + g.spread + coupling, b2 - s.cross(b1) / a).unwrap_or(Vec3::ZERO);
        let shift = (b1 + s.cross(turn)) / a;
        self.before_solve = (self.shift, self.rotation);
        self.shift += shift;
        self.turn += turn;
        self.turn_to_date();
        self.gather = Gather { solved: (shift, turn), ..Gather::default() };
    }

    /// The move of a held vertex with gap `gap` at `arm` once its block is solved: onto the moved body point.
    fn vertex_move(&self, arm: Vec3, gap: Vec3) -> Vec3 {
        let (shift, turn) = self.gather.solved;
        gap + shift + turn.cross(arm)
    }
}

/// u vᵀ.
fn outer(u: Vec3, v: Vec3) -> Mat3 {
    Mat3::from_cols(u * v.x, u * v.y, u * v.z)
}

/// A⁻¹ b, or `None` for a singular A.
fn solve(a: Mat3, b: Vec3) -> Option<Vec3> {
    invert(a).map(|inverse| inverse * b).filter(|x| x.is_finite())
}

/// A⁻¹, or `None` for a singular A.
fn invert(a: Mat3) -> Option<Mat3> {
    let det = a.determinant();
    (det.is_finite() && det.abs() > f32::MIN_POSITIVE).then(|| a.inverse())
}

/// Projects the holds `holds` (every one [`ContactKind::Attached`](super::contact::ContactKind)), each body's
/// together ([`HeldBody`], by collider in `bodies`); a hold on a collider that is no body puts its vertex on it.
/// Within the projection a vertex's inverse mass `p.w(i)` counts what its body lends it.
pub(crate) fn project_holds(p: &mut impl ParticleAccess, holds: &mut [Contact], bodies: &mut [HeldBody]) {
    let n = p.len();
    let movable = |c: &Contact, bodies: &[HeldBody]| bodies.get(c.collider as usize).is_some_and(HeldBody::movable);
    // the cloth moved each compound since the holds last saw it: the body's lent part takes its share
    for c in holds.iter() {
        let i = c.vertex as usize;
        if i < n && p.w(i) > 0.0 && c.lent_mass > 0.0 && movable(c, bodies) {
            let body = &mut bodies[c.collider as usize];
            let (_, arm) = body.follow(c.point);
            body.push(arm, (p.p(i) - c.settled()) * c.lent_mass);
        }
    }
    for body in bodies.iter_mut().filter(|b| b.movable()) {
        body.turn_to_date();
    }
    for c in holds.iter() {
        let i = c.vertex as usize;
        if i < n && p.w(i) > 0.0 && movable(c, bodies) {
            let body = &mut bodies[c.collider as usize];
            let (target, arm) = body.follow(c.point);
            body.gather(own_mass(p.w(i), c.lent_mass), arm, target - p.p(i));
        }
    }
    for body in bodies.iter_mut().filter(|b| b.movable() && b.gather.mass > 0.0) {
        body.solve_block();
    }
    for c in holds.iter_mut() {
        let i = c.vertex as usize;
        if i >= n || p.w(i) == 0.0 {
            continue;
        }
        let before = p.p(i);
        match bodies.get(c.collider as usize).filter(|b| b.movable()) {
            Some(body) => {
                // the gap and arm as the block saw them: the body has moved since
                let (target, arm) = body.follow_before_solve(c.point);
                p.shift(i, body.vertex_move(arm, target - before));
            }
            None => p.shift(i, c.point - before),
        }
        c.settle_at(p.p(i));
        c.moved += p.p(i) - before;
    }
}

/// What is left, once the substep is done, of the gap `gap` between a held vertex and its body point at the start
/// of a substep with `left` substeps left in the step (this one included): a substep closes `reach` of it (the
/// depenetration speed's move), or more where that would leave some after the step's last substep, evenly over the
/// substeps left. A gap comes from another engine's step: Avian's contacts of a body on the ground move it away
/// from where the cloth step left it and its vertices. Closed within one substep, a gap of centimetres became the
/// vertices' velocity, gap / Δt.
pub(crate) fn gap_left(gap: Vec3, reach: f32, left: u32) -> Vec3 {
    let length = gap.length();
    let closed = reach.max(length / left.max(1) as f32);
    if length <= closed { Vec3::ZERO } else { gap * (1.0 - closed / length) }
}

/// The vertex's own mass from its inverse mass `w` = 1 / (m + `lent`) in the projection.
fn own_mass(w: f32, lent: f32) -> f32 {
    (1.0 / w - lent).max(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::constraints::access::Slices;

    /// A hold of `vertex` on body 0's point at `point`, the vertex predicted at `predicted`, lent `lent` kg.
    fn hold(vertex: u32, point: Vec3, predicted: Vec3, lent: f32) -> Contact {
        Contact::held(vertex, 0, (point, Vec3::ZERO), predicted, lent)
    }

    /// A ball of `mass` kg and radius 0.1 m at the origin.
    fn ball(mass: f32) -> HeldBody {
        HeldBody::new(Vec3::ZERO, 1.0 / mass, Mat3::from_diagonal(Vec3::splat(0.4 * mass * 0.01)))
    }

    /// Σ mᵢ Δpᵢ of the vertices (masses 1/`w`) plus the body's M Δx.
    fn momentum(before: &[Vec3], after: &[Vec3], w: &[f32], body: &HeldBody) -> Vec3 {
        let vertices: Vec3 = before.iter().zip(after).zip(w).map(|((a, b), w)| (*b - *a) / *w).sum();
        vertices + body.shift / body.inverse_mass
    }

    #[test]
    fn a_heavy_body_keeps_its_point_and_a_light_one_comes_to_the_vertex() {
        for (mass, vertex_share) in [(1000.0, 0.999), (0.001, 0.001)] {
            // a vertex of 1 kg 1 cm off a point on the centre line (no lever): it moves M / (M + m) of the way
            let start = [Vec3::new(0.11, 0.0, 0.0)];
            let mut p = start;
            let mut bodies = [ball(mass)];
            let mut holds = [hold(0, Vec3::new(0.1, 0.0, 0.0), p[0], 0.0)];
            project_holds(&mut Slices { p: &mut p, w: &[1.0] }, &mut holds, &mut bodies);
            let moved = 0.11 - p[0].x;
            assert!((moved / 0.01 - vertex_share).abs() < 2e-3, "{mass} kg: the vertex moved {moved}");
            let (target, _) = bodies[0].follow(holds[0].point);
            assert!((target - p[0]).length() < 1e-6, "the gap is closed: {target} and {}", p[0]);
            assert!(momentum(&start, &p, &[1.0], &bodies[0]).length() < 1e-6);
        }
    }

    #[test]
    fn a_light_bar_held_along_its_length_goes_where_its_holds_are() {
        // a 10 g bar 1 m long and about 1 cm thick (light about its length), held 5 cm off its axis at eleven points by
        // vertices of 8 g that the cloth turned 0.1 rad about the bar's axis and moved 1 cm sideways: the cheapest
        // way there is to turn the bar, and each solve closes every gap at once up to the turn's curvature
        let inertia = Mat3::from_diagonal(Vec3::new(2.1e-7, 8.3e-4, 8.3e-4));
        let mut bodies = [HeldBody::new(Vec3::ZERO, 100.0, inertia)];
        let points: Vec<Vec3> = (0..11).map(|k| Vec3::new(k as f32 * 0.1 - 0.5, 0.05, 0.0)).collect();
        let turned = Quat::from_rotation_x(0.1);
        let start: Vec<Vec3> = points.iter().map(|&q| turned * q + Vec3::Z * 0.01).collect();
        let (mut p, w) = (start.clone(), [125.0; 11]);
        let hold_at = |(k, (&q, &s)): (usize, (&Vec3, &Vec3))| hold(k as u32, q, s, 0.0);
        let mut holds: Vec<Contact> = points.iter().zip(&start).enumerate().map(hold_at).collect();
        let largest_gap = |holds: &[Contact], p: &[Vec3], body: &HeldBody| {
            holds.iter().map(|c| (body.follow(c.point).0 - p[c.vertex as usize]).length()).fold(0.0, f32::max)
        };
        project_holds(&mut Slices { p: &mut p, w: &w }, &mut holds, &mut bodies);
        assert!(largest_gap(&holds, &p, &bodies[0]) < 3e-3, "one solve: {}", largest_gap(&holds, &p, &bodies[0]));
        for _ in 0..3 {
            project_holds(&mut Slices { p: &mut p, w: &w }, &mut holds, &mut bodies);
        }
        assert!(largest_gap(&holds, &p, &bodies[0]) < 1e-4, "four: {}", largest_gap(&holds, &p, &bodies[0]));
        assert!(bodies[0].turn.x > 0.25, "the bar turns to its holds: {}", bodies[0].turn);
        assert!(momentum(&start, &p, &w, &bodies[0]).length() < 1e-6, "{}", momentum(&start, &p, &w, &bodies[0]));
    }

    #[test]
    fn a_hold_far_from_the_centre_turns_the_body_more_than_it_shifts_it() {
        // a 1 kg ball (I = 0.004 kg m²) held 1 m from its centre by a 1 kg vertex 1 cm sideways: the effective mass
        // there is 1 / (1 + 250) kg, so the body point comes nearly all the way
        let mut p = [Vec3::new(1.0, 0.01, 0.0)];
        let mut bodies = [ball(1.0)];
        let mut holds = [hold(0, Vec3::X, p[0], 0.0)];
        project_holds(&mut Slices { p: &mut p, w: &[1.0] }, &mut holds, &mut bodies);
        assert!(0.01 - p[0].y < 1e-4, "the vertex hardly moves: {}", p[0]);
        assert!(bodies[0].turn.z > 0.009, "the ball turns towards it: {}", bodies[0].turn);
        assert!(bodies[0].shift.y < 1e-4, "and hardly shifts: {}", bodies[0].shift);
    }

    #[test]
    fn the_body_takes_the_lent_part_of_what_the_cloth_moved() {
        // a 1 kg vertex lent 3 kg of a 3 kg body (one hold, no lever), pulled 4 cm by the cloth since the holds
        // last saw it, on its point: the compound moved 4 cm, so the body takes 3 kg × 4 cm, the vertex keeps its
        // own 1 kg × 4 cm, and the two end 4 cm along, together
        let point = Vec3::new(0.0, 0.1, 0.0);
        let mut p = [point + Vec3::new(0.04, 0.0, 0.0)];
        let mut bodies = [HeldBody::new(point, 1.0 / 3.0, Mat3::from_diagonal(Vec3::ONE))];
        let mut holds = [hold(0, point, point, 3.0)];
        project_holds(&mut Slices { p: &mut p, w: &[0.25] }, &mut holds, &mut bodies);
        assert!((bodies[0].shift.x - 0.04).abs() < 1e-6, "the body moved with the compound: {}", bodies[0].shift);
        assert!((p[0].x - 0.04).abs() < 1e-6, "and the vertex stays on it: {}", p[0]);
        assert_eq!(holds[0].settled(), p[0]);
    }

    #[test]
    fn a_gap_within_reach_closes_at_once_and_a_wider_one_evenly_over_the_step() {
        let gap = Vec3::new(0.0, 0.03, -0.04);
        // within the depenetration speed's reach: closed in this substep, as every hold was
        assert_eq!(gap_left(gap, 0.05, 20), Vec3::ZERO);
        // 5 cm over 10 substeps: 5 mm a substep, wider than a 1 mm reach
        assert!((gap_left(gap, 0.001, 10) - gap * 0.9).length() < 1e-7);
        // the last substep closes what is left, and a substep count of 0 counts as the last
        assert_eq!(gap_left(gap, 0.001, 1), Vec3::ZERO);
        assert_eq!(gap_left(gap, 0.001, 0), Vec3::ZERO);
        // closed substep by substep, the gap is gone at the step's end
        let mut left = gap;
        for substeps_left in (1..=10).rev() {
            left = gap_left(left, 0.001, substeps_left);
        }
        assert!(left.length() < 1e-7, "{left}");
    }

    #[test]
    fn a_hold_on_a_collider_that_is_no_body_puts_the_vertex_on_it() {
        let mut p = [Vec3::new(0.3, 0.0, 0.0)];
        let mut holds = [hold(0, Vec3::ZERO, p[0], 0.0)];
        project_holds(&mut Slices { p: &mut p, w: &[1.0] }, &mut holds, &mut []);
        assert_eq!(p[0], Vec3::ZERO);
    }
}
