//! A collider over one substep: its shape in its own frame and its poses at the start and the end of the
//! substep. The continuous test of §3.4 ("test whether x_i → p_i enters an object") is done in the collider's
//! frame, where the collider stands still and the vertex moves from x_i seen from the start pose to p_i seen
//! from the end pose. A fast or thin moving collider therefore cannot pass through a vertex between two
//! substeps, and a vertex already inside falls back to the static test. The surface's own displacement at the
//! contact is kept, so friction and restitution (line 16) act on the velocity relative to the surface (a
//! rotating barrel carries the cloth with it).

use bevy::math::{Isometry3d, Quat, Vec3};

use super::shapes::Shape;

/// The collision constraint of one vertex: entry point (or closest surface point) and outward normal at the
/// end of the substep, and how far the collider's surface at that point moved during the substep.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SurfaceHit {
    /// Entry point q_c, or closest surface point q_s, at the end of the substep (§3.4).
    pub point: Vec3,
    /// Outward surface normal n at `point`.
    pub normal: Vec3,
    /// How far the collider's surface at `point` moved during the substep, metres.
    pub surface_shift: Vec3,
}

/// One collider over one substep, with the coefficients cloth meets on it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct SweptCollider {
    /// The shape in the collider's own frame (scale applied); for a collider that does not move in this
    /// substep, the world shape itself (both poses are then the identity).
    pub local: Shape,
    /// Pose at the start of the substep.
    pub start: Isometry3d,
    /// Pose at the end of the substep.
    pub end: Isometry3d,
    /// The shape placed at the end pose.
    pub world: Shape,
    /// Bound on how far any point of the shape moves during the substep, metres (infinite for a rotating
    /// plane).
    pub sweep: f32,
    /// Coulomb friction μ.
    pub friction: f32,
    /// Restitution e.
    pub restitution: f32,
    /// The box around the world shape grown by the sweep and a rounding allowance, for the quick rejection of
    /// [`Self::may_touch_box`] (`None` for a shape without one, a plane or a barrel, and for an infinite sweep).
    reach: Option<(Vec3, Vec3)>,
}

/// Room added to [`SweptCollider::reach`] for the rounding of a grown shape's own box: an absolute part and a part
/// of the coordinates' size, far above either's rounding, so the quick rejection never rejects what the exact
/// test accepts.
const REACH_ROUNDING: (f32, f32) = (1e-4, 1e-5);
/// How much wider than the growth a grown shape's axis-aligned box can get on each side, at most: a turned box
/// grown by m moves its corners diagonally, up to √3·m along an axis.
const GROWN_BOX_WIDENING: f32 = 1.75;

impl SweptCollider {
    /// `local` moving from pose `start` to pose `end` over the substep.
    pub fn new(local: Shape, start: Isometry3d, end: Isometry3d, friction: f32, restitution: f32) -> Self {
        let world = local.transformed(&end);
        let turn = start.rotation.angle_between(end.rotation);
        let travel = Vec3::from(end.translation - start.translation).length();
        let sweep = if turn > 0.0 { travel + turn * local.reach() } else { travel };
        let reach = world.bounding_box().filter(|_| sweep.is_finite()).map(|(lo, hi)| {
            let size = lo.abs().max(hi.abs()).max_element();
            let room = Vec3::splat(GROWN_BOX_WIDENING * sweep + REACH_ROUNDING.0 + REACH_ROUNDING.1 * size);
            (lo - room, hi + room)
        });
        if sweep == 0.0 {
            // standing still: work in world space, no frame changes per vertex
            let still = Isometry3d::IDENTITY;
            let local = world.clone();
            return Self { local, start: still, end: still, world, sweep, friction, restitution, reach };
        }
        Self { local, start, end, world, sweep, friction, restitution, reach }
    }

    /// A collider that does not move.
    #[cfg(test)]
    pub(crate) fn fixed(world: Shape, friction: f32, restitution: f32) -> Self {
        Self::new(world, Isometry3d::IDENTITY, Isometry3d::IDENTITY, friction, restitution)
    }

    /// Moves the end pose as a body's correction within the projection moved the body: turned by `turn` (axis ×
    /// angle) about `centre`, the body's centre of mass at the end pose, and shifted by `shift`.
    pub fn carry(&mut self, centre: Vec3, shift: Vec3, turn: Vec3) {
        if shift == Vec3::ZERO && turn == Vec3::ZERO {
            return;
        }
        let rotation = Quat::from_scaled_axis(turn);
        let correction = Isometry3d::new(centre + shift - rotation * centre, rotation);
        let (local, start) =
            (std::mem::replace(&mut self.local, Shape::Plane { point: Vec3::ZERO, normal: Vec3::Y }), self.start);
        *self = Self::new(local, start, correction * self.end, self.friction, self.restitution);
    }

    /// Whether the collider moves during the substep.
    pub fn is_moving(&self) -> bool {
        self.sweep > 0.0
    }

    /// Whether a vertex whose ray x→p lies in the box `min`–`max` may touch the collider grown by `margin`
    /// at any time of the substep.
    pub fn may_touch_box(&self, min: Vec3, max: Vec3, margin: f32) -> bool {
        // most boxes of a scene with many colliders are far from most of them: one box test, nothing grown
        let widening = GROWN_BOX_WIDENING * margin;
        if let Some((lo, hi)) = self.reach
            && (max.cmplt(lo - widening).any() || min.cmpgt(hi + widening).any())
        {
            return false;
        }
        !self.sweep.is_finite() || self.world.inflated(margin + self.sweep).may_touch_box(min, max)
    }

    /// The shape in its own frame grown by `margin`, for [`Self::contact`].
    pub fn grown(&self, margin: f32) -> GrownShape {
        let shape = self.local.inflated(margin);
        // every point of the grown shape during the substep is within `sweep` of its end position
        let swept = self.world.inflated(margin).bounding_sphere().map(|(center, radius)| (center, radius + self.sweep));
        let bounds = shape.bounding_sphere();
        GrownShape { shape, bounds, swept: swept.filter(|(_, radius)| radius.is_finite()) }
    }

    /// The collision constraint of line (8) for a vertex moving x→p against the collider grown by a margin:
    /// `grown` is [`Self::grown`], computed once per collider and cloth.
    pub fn contact(&self, grown: &GrownShape, x: Vec3, p: Vec3) -> Option<SurfaceHit> {
        if !grown.may_reach_swept(x, p) {
            return None;
        }
        if !self.is_moving() {
            // `local` is the world shape, and the swept sphere just tested is its bounding sphere
            let (point, normal, _) = grown.shape.contact(x, p)?;
            return Some(SurfaceHit { point, normal, surface_shift: Vec3::ZERO });
        }
        let from = Vec3::from(self.start.inverse_transform_point(x));
        let to = Vec3::from(self.end.inverse_transform_point(p));
        // a vertex resting on a moving surface keeps its plane, as on a still one: left to the next substep's
        // fallback, the cloth dragged it deep inside a moving box in one substep and the push out threw it
        let (q, n, _) = grown.contact(from, to)?;
        let point = Vec3::from(self.end.transform_point(q));
        Some(SurfaceHit {
            point,
            normal: self.end.rotation * n,
            surface_shift: point - Vec3::from(self.start.transform_point(q)),
        })
    }

    /// Where `x`, a vertex's position at the start of the substep inside the collider's shape grown by `margin`,
    /// leaves it along `direction` (unit, in the collider's frame), and how far that is: the surface point at
    /// the end of the substep, with `direction` as its normal. For a convex shape; `None` if `x` is not inside.
    pub fn exit_along(&self, margin: f32, x: Vec3, direction: Vec3) -> Option<(SurfaceHit, f32)> {
        let shape = self.local.inflated(margin);
        let from = Vec3::from(self.start.inverse_transform_point(x));
        // from a point beyond the shape back to `from`: the way in is the way out
        let beyond = from + direction * (2.0 * (shape.reach() + from.length()) + 1.0);
        let (q, _) = shape.ray_entry(beyond, from)?;
        let point = Vec3::from(self.end.transform_point(q));
        let surface_shift = point - Vec3::from(self.start.transform_point(q));
        Some((SurfaceHit { point, normal: self.end.rotation * direction, surface_shift }, q.distance(from)))
    }

    /// How deep `x`, a vertex's position at the start of the substep, lies inside the collider's shape at its
    /// start pose, metres; zero or less outside.
    pub fn start_depth(&self, x: Vec3) -> f32 {
        -self.local.signed_distance(Vec3::from(self.start.inverse_transform_point(x)))
    }

    /// The world point at the end of the substep of the collider point `local`, and how far it moved.
    pub fn follow(&self, local: Vec3) -> (Vec3, Vec3) {
        let end = Vec3::from(self.end.transform_point(local));
        (end, end - Vec3::from(self.start.transform_point(local)))
    }

    /// How far the collider's surface point that is at `point` at the end of the substep moved during it.
    pub fn shift_at(&self, point: Vec3) -> Vec3 {
        if !self.is_moving() {
            return Vec3::ZERO;
        }
        self.follow(Vec3::from(self.end.inverse_transform_point(point))).1
    }
}

/// A collider's shape grown by the cloth's margin, with spheres around it so that the many rays far from a
/// small collider are rejected before the exact test: one in world space around everything the shape sweeps
/// over the substep (tested before a moving collider's frame changes), one around the shape itself.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct GrownShape {
    /// The shape grown by the margin, in the collider's own frame.
    pub shape: Shape,
    bounds: Option<(Vec3, f32)>,
    swept: Option<(Vec3, f32)>,
}

impl GrownShape {
    /// Whether the ray x→p may come within the bounding sphere (always, for an unbounded shape).
    #[inline]
    fn may_reach(&self, x: Vec3, p: Vec3) -> bool {
        ray_may_reach(self.bounds, x, p)
    }

    /// Whether the world ray x→p may come within the sphere around the swept shape.
    #[inline]
    fn may_reach_swept(&self, x: Vec3, p: Vec3) -> bool {
        ray_may_reach(self.swept, x, p)
    }

    /// [`Shape::contact`], after checking that the ray x→p comes within the bounding sphere at all.
    #[inline]
    fn contact(&self, x: Vec3, p: Vec3) -> Option<(Vec3, Vec3, bool)> {
        if !self.may_reach(x, p) {
            return None;
        }
        self.shape.contact(x, p)
    }
}

/// Whether the ray x→p may come within the sphere (always without one).
#[inline]
fn ray_may_reach(sphere: Option<(Vec3, f32)>, x: Vec3, p: Vec3) -> bool {
    sphere.is_none_or(|(center, radius)| ((x + p) * 0.5).distance(center) <= radius + 0.5 * x.distance(p))
}

#[cfg(test)]
mod tests {
    use super::*;
    use bevy::math::Quat;

    /// A 2 cm thick slab falling at 30 m/s: one substep of 1/240 s moves it 12.5 cm, six times its thickness.
    fn falling_slab(from: f32, to: f32) -> SweptCollider {
        let slab = Shape::Box { center: Vec3::ZERO, rotation: Quat::IDENTITY, half_extents: Vec3::new(0.5, 0.01, 0.5) };
        let pose = |y: f32| Isometry3d::from_translation(Vec3::new(0.0, y, 0.0));
        SweptCollider::new(slab, pose(from), pose(to), 0.0, 0.0)
    }

    /// The quick rejection by the collider's box rejects only what the exact test rejects: boxes of every size,
    /// most of them grazing the grown shape, around moving and still spheres, boxes and capsules far from the
    /// origin too (where rounding is coarser).
    #[test]
    fn the_box_rejection_never_rejects_a_box_the_exact_test_accepts() {
        use rand::{Rng, SeedableRng, rngs::SmallRng};
        let rng = &mut SmallRng::seed_from_u64(7);
        let (mut touching, mut rejected) = (0, 0);
        for round in 0..4000 {
            let far = if round % 2 == 0 { Vec3::ZERO } else { Vec3::new(900.0, -40.0, 350.0) };
            let centre = far + Vec3::new(rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0), 0.3);
            let rotation = Quat::from_euler(bevy::math::EulerRot::XYZ, rng.random(), rng.random(), rng.random());
            let shape = match round % 3 {
                0 => Shape::Sphere { center: centre, radius: 0.2 },
                1 => Shape::Box { center: centre, rotation, half_extents: Vec3::new(0.3, 0.05, 0.2) },
                _ => Shape::Capsule { a: centre, b: centre + rotation * Vec3::Y * 0.5, radius: 0.04 },
            };
            let moved = Vec3::new(rng.random_range(-0.05..0.05), 0.0, 0.0) * (round % 4 / 2) as f32;
            let (start, end) = (Isometry3d::IDENTITY, Isometry3d::from_translation(moved));
            let collider = SweptCollider::new(shape, start, end, 0.0, 0.0);
            let Some((lo, hi)) = collider.world.bounding_box() else { continue };
            // a small box whose corner lies just inside or outside the shape's box grown by the margin and sweep
            let margin = rng.random_range(0.0..0.02);
            let grown = margin + collider.sweep;
            // half the boxes on the grown surface where it is farthest along an axis (where it meets its box), half
            // anywhere in the grown box, most of those away from the shape
            let side = rng.random_range(0.0..1e-3);
            let at = if round % 2 == 0 {
                let axis = [Vec3::X, Vec3::Y, Vec3::Z][rng.random_range(0..3)] * if rng.random() { 1.0 } else { -1.0 };
                let aside = Vec3::new(rng.random(), rng.random(), rng.random()) * 0.05;
                let away = (lo + hi) * 0.5 + (axis + aside) * 10.0;
                collider.world.inflated(grown).closest_surface(away).0 + axis * rng.random_range(-2.0 * side..side)
            } else {
                lo - grown + (hi - lo + 2.0 * grown) * Vec3::new(rng.random(), rng.random(), rng.random())
            };
            let (min, max) = (at - Vec3::splat(side), at + Vec3::splat(side));
            let exact = collider.world.inflated(grown).may_touch_box(min, max);
            let quick = collider.may_touch_box(min, max, margin);
            assert_eq!(quick, exact, "round {round}: {min} – {max} against {:?}", collider.world);
            touching += usize::from(exact);
            rejected += usize::from(!exact);
        }
        assert!(
            touching > 500 && rejected > 500,
            "{touching} touching, {rejected} rejected: the boxes missed the edge"
        );
    }

    #[test]
    fn thin_fast_collider_cannot_pass_a_resting_vertex() {
        let slab = falling_slab(0.06, -0.065);
        let grown = slab.grown(0.0);
        let resting = Vec3::new(0.1, 0.0, 0.2);
        let hit = slab.contact(&grown, resting, resting).expect("the slab sweeps over the vertex");
        assert!((hit.point.y - (-0.065 - 0.01)).abs() < 1e-4, "pushed to the slab's bottom face: {hit:?}");
        assert!((hit.normal - Vec3::NEG_Y).length() < 1e-4);
        assert!((hit.surface_shift.y + 0.125).abs() < 1e-4);
        // the same two poses tested statically miss the vertex: it is outside both
        assert!(slab.world.contact(resting, resting).is_none());
        assert!(slab.local.transformed(&slab.start).contact(resting, resting).is_none());
    }

    #[test]
    fn sphere_rejections_change_no_contact_of_a_moving_turning_box() {
        let bar =
            Shape::Box { center: Vec3::X * 0.3, rotation: Quat::IDENTITY, half_extents: Vec3::new(0.4, 0.1, 0.1) };
        let start = Isometry3d::new(Vec3::new(0.0, 0.5, 0.0), Quat::IDENTITY);
        let end = Isometry3d::new(Vec3::new(0.05, 0.42, 0.0), Quat::from_rotation_z(0.3));
        let collider = SweptCollider::new(bar, start, end, 0.0, 0.0);
        let grown = collider.grown(0.01);
        let exact = GrownShape { bounds: None, swept: None, ..grown.clone() };
        let (mut hits, mut rejected, mut rejected_in_world) = (0, 0, 0);
        for k in 0..20_000 {
            let t = Vec3::new((k % 40) as f32, ((k / 40) % 25) as f32, (k / 1000) as f32) / Vec3::new(39.0, 24.0, 19.0);
            let x = Vec3::new(-1.0, -0.2, -0.6) + t * Vec3::new(2.5, 1.6, 1.2);
            let p = x + Vec3::new(0.02, -0.15, 0.01) * (1.0 + (k % 7) as f32);
            let (fast, slow) = (collider.contact(&grown, x, p), collider.contact(&exact, x, p));
            assert_eq!(fast, slow, "ray {x} → {p}");
            hits += fast.is_some() as u32;
            let (from, to) = (Vec3::from(start.inverse_transform_point(x)), Vec3::from(end.inverse_transform_point(p)));
            rejected += !grown.may_reach(from, to) as u32;
            rejected_in_world += !grown.may_reach_swept(x, p) as u32;
        }
        assert!(hits > 100 && rejected > 10_000, "{hits} hits, {rejected} rejected: the test must exercise both");
        assert!(rejected_in_world > 5_000, "{rejected_in_world} rejected before the frame change");
    }

    #[test]
    fn static_collider_is_tested_in_world_space() {
        let ground = SweptCollider::fixed(Shape::Plane { point: Vec3::ZERO, normal: Vec3::Y }, 0.5, 0.0);
        assert!(!ground.is_moving());
        let grown = ground.grown(0.01);
        let hit = ground.contact(&grown, Vec3::new(0.0, 0.5, 0.0), Vec3::new(0.0, -0.5, 0.0)).unwrap();
        assert!((hit.point.y - 0.01).abs() < 1e-6 && hit.surface_shift == Vec3::ZERO);
    }

    #[test]
    fn spinning_collider_drags_its_surface_along() {
        let barrel = Shape::Barrel { center: Vec3::ZERO, rotation: Quat::IDENTITY, radius: 1.0, half_height: 1.0 };
        let turn = Isometry3d::from_rotation(Quat::from_rotation_y(0.01));
        let spinning = SweptCollider::new(barrel, Isometry3d::IDENTITY, turn, 0.5, 0.0);
        assert!((spinning.sweep - 0.01 * 2f32.sqrt()).abs() < 1e-5);
        let (x, p) = (Vec3::new(0.95, 0.0, 0.0), Vec3::new(1.05, 0.0, 0.0));
        let hit = spinning.contact(&spinning.grown(0.0), x, p).unwrap();
        // the wall point moved along the rim by about r·Δθ = 1 cm, tangentially
        assert!((hit.surface_shift.length() - 0.01).abs() < 1e-4 && hit.surface_shift.dot(hit.normal).abs() < 1e-4);
    }

    #[test]
    fn a_carried_collider_ends_where_its_body_was_moved_and_starts_where_it_was() {
        use std::f32::consts::FRAC_PI_2;
        let cube = Shape::Box { center: Vec3::ZERO, rotation: Quat::IDENTITY, half_extents: Vec3::new(0.5, 0.2, 0.5) };
        // a still body, lifted 1 m and turned a quarter about z by its contacts: its 0.4 m height now lies along x
        let mut still = SweptCollider::fixed(cube.clone(), 0.0, 0.0);
        still.carry(Vec3::ZERO, Vec3::Y, Vec3::Z * FRAC_PI_2);
        assert!(still.is_moving());
        assert!((still.world.signed_distance(Vec3::new(0.0, 1.45, 0.0)) + 0.05).abs() < 1e-5, "0.05 m inside");
        assert!((still.world.signed_distance(Vec3::new(0.25, 1.0, 0.0)) - 0.05).abs() < 1e-5, "0.05 m outside");
        assert!((still.start_depth(Vec3::ZERO) - 0.2).abs() < 1e-5, "the start pose is kept");
        // a moving body is corrected after its own move, about its centre at the end pose
        let mut moving =
            SweptCollider::new(cube, Isometry3d::IDENTITY, Isometry3d::from_translation(Vec3::X), 0.0, 0.0);
        moving.carry(Vec3::X, Vec3::Y, Vec3::Z * FRAC_PI_2);
        assert!((moving.world.signed_distance(Vec3::new(1.0, 1.45, 0.0)) + 0.05).abs() < 1e-5);
        assert!((moving.start_depth(Vec3::ZERO) - 0.2).abs() < 1e-5);
    }
}
