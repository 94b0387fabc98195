//! Rigid bodies for the two-way coupling of §4.2: dynamic spheres and boxes that cloth collides with and
//! hangs from. "To get two-way interactions, we apply an impulse m_i Δp_i / Δt to the rigid body at the
//! contact point, each time vertex i is projected due to collision with that body."
//!
//! The paper applies the impulse after the projection; here the surface contacts and holds share each correction
//! with the body inside the loop (`collide::contacts::project_on_body`, `collide::hold`), as XPBD couples particles
//! with rigid bodies: the body's surface moves from its pose at the start of the substep to its integrated pose at
//! the end, plus the correction it has taken so far, and it takes the sum in its pose and the sum over Δt in its
//! velocities after the loop ([`ClothRigidBody::settle`]). Line (16)'s velocity changes and the push-out after the
//! last substep, m_i Δv_i and m_i Δp_i / Δt, are applied back to the body as the opposite impulse, so the linear
//! momentum of cloth and body together is conserved. Bodies also rest on static planes (an impulse contact with friction and
//! restitution). This file holds the pure kernels; the systems live in `stages.rs`.

use bevy::math::{Mat3, Quat, Vec3};
use bevy::transform::components::Transform;

use super::collide::ColliderShape;
use super::collide::hold::HeldBody;
use super::collide::shapes::box_corner_sign;

/// Mass properties and velocities of a dynamic body; its `Transform` is its pose (centre of mass at the
/// origin of its shape).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClothRigidBody {
    /// 1 / mass, 1/kg.
    pub inverse_mass: f32,
    /// Inverse principal moments of inertia in the body frame, 1/(kg·m²).
    pub inverse_inertia: Vec3,
    /// Linear velocity of the centre of mass, m/s.
    pub velocity: Vec3,
    /// Angular velocity in world space, rad/s.
    pub angular_velocity: Vec3,
}

impl ClothRigidBody {
    /// A body of `mass` kg filling `shape` uniformly; `None` for shapes that cannot be dynamic (plane,
    /// barrel) or a mass that is not finite and positive.
    pub fn solid(shape: ColliderShape, mass: f32) -> Option<Self> {
        if !(mass.is_finite() && mass > 0.0) {
            return None;
        }
        let inertia = match shape {
            ColliderShape::Sphere { radius } => Vec3::splat(0.4 * mass * radius * radius),
            ColliderShape::Box { half_extents: h } => {
                let s = h * h;
                Vec3::new(s.y + s.z, s.x + s.z, s.x + s.y) * (mass / 3.0)
            }
            ColliderShape::Capsule { radius, half_height } => {
                // a solid cylinder of the capsule's full length: a close, simple bound
                let length = 2.0 * (half_height + radius);
                let across = mass * (3.0 * radius * radius + length * length) / 12.0;
                Vec3::new(across, 0.5 * mass * radius * radius, across)
            }
            ColliderShape::Plane | ColliderShape::Barrel { .. } => return None,
        };
        Some(Self {
            inverse_mass: 1.0 / mass,
            inverse_inertia: inertia.recip(),
            velocity: Vec3::ZERO,
            angular_velocity: Vec3::ZERO,
        })
    }

    /// Mass M, kg.
    pub fn mass(&self) -> f32 {
        1.0 / self.inverse_mass
    }

    /// Linear momentum M v, kg·m/s.
    pub fn momentum(&self) -> Vec3 {
        self.velocity * self.mass()
    }

    /// Kinetic energy ½ M v² + ½ ωᵀ I ω of the body turned by `rotation`, joules.
    pub fn kinetic_energy(&self, rotation: Quat) -> f32 {
        let spin = rotation.inverse() * self.angular_velocity;
        let turning = spin * spin / self.inverse_inertia.max(Vec3::splat(f32::MIN_POSITIVE));
        0.5 * (self.mass() * self.velocity.length_squared() + turning.element_sum())
    }

    /// The inverse inertia tensor in world space applied to `v`: R I⁻¹ Rᵀ v.
    fn inverse_inertia_times(&self, rotation: Quat, v: Vec3) -> Vec3 {
        rotation * (self.inverse_inertia * (rotation.inverse() * v))
    }

    /// Applies impulse `j` (kg·m/s) at the world point `at` of a body with pose `pose`.
    pub fn apply_impulse(&mut self, pose: &Transform, j: Vec3, at: Vec3) {
        self.velocity += j * self.inverse_mass;
        let torque = (at - pose.translation).cross(j);
        self.angular_velocity += self.inverse_inertia_times(pose.rotation, torque);
    }

    /// §4.2's impulse back from a cloth vertex that a surface contact at `at` gave momentum `given`, pushed by
    /// `pushing_mass` (every vertex the body's surface pushed in the substep): the body takes −`given`, but never
    /// more than its own effective mass along it could take at the vertices' speed change. Explicit coupling
    /// overshoots otherwise: vertices heavier than the body at that point would send the body back faster than they
    /// were pushed, growing each substep. Returns the share of `given` taken, at most 1: the vertex gives the rest
    /// back (`give_back`), so momentum is kept.
    pub fn take_from_vertex(&mut self, pose: &Transform, given: Vec3, pushing_mass: f32, at: Vec3) -> f32 {
        let Some(direction) = given.try_normalize() else {
            return 1.0;
        };
        let body_mass = 1.0 / self.inverse_mass_along(pose, at, direction);
        let taken = (body_mass / pushing_mass).min(1.0);
        self.apply_impulse(pose, -given * taken, at);
        taken
    }

    /// The mass the body lends each of the `holds` cloth vertices it holds (the implicit coupling of holds,
    /// [`Contact::held`](super::collide::contact::Contact::held)): its effective mass at `at`, at its lowest over
    /// every direction, 1 / (1/M + |r|² · max I⁻¹), shared among them. A lower bound, so the cloth never takes the
    /// body for heavier than it moves.
    pub fn mass_lent_per_hold(&self, pose: &Transform, at: Vec3, holds: u32) -> f32 {
        let arm = (at - pose.translation).length_squared();
        1.0 / ((self.inverse_mass + arm * self.inverse_inertia.max_element()) * holds.max(1) as f32)
    }

    /// The body as its holds see it in the projection (`hold::project_holds`): predicted at `pose`.
    pub fn held(&self, pose: &Transform) -> HeldBody {
        let turn = Mat3::from_quat(pose.rotation);
        let inertia = turn * Mat3::from_diagonal(self.inverse_inertia.recip()) * turn.transpose();
        HeldBody::new(pose.translation, self.inverse_mass, inertia)
    }

    /// Takes the correction its holds gave it within the projection (`held`'s `shift` and `turn`): its pose moves
    /// by it, and its velocities by it over `dt`, as XPBD updates a body's velocities from its positions.
    pub fn settle(&mut self, pose: &mut Transform, held: &HeldBody, dt: f32) {
        pose.translation += held.shift;
        if held.turn.length_squared() > 0.0 {
            pose.rotation = (Quat::from_scaled_axis(held.turn) * pose.rotation).normalize();
        }
        self.velocity += held.shift / dt;
        self.angular_velocity += held.turn / dt;
    }

    /// Holds the body to a speed cap (drape's is the cloth's, `integrate::MAX_SPEED`): its centre no faster than
    /// `max_speed`, and no point within `reach` of it turning faster than that about it.
    pub fn cap_speed(&mut self, max_speed: f32, reach: f32) {
        self.velocity = self.velocity.clamp_length_max(max_speed);
        self.angular_velocity = self.angular_velocity.clamp_length_max(max_speed / reach.max(1e-3));
    }

    /// [`Self::cap_speed`] for a body of `shape`, whose points lie within its reach.
    pub fn cap_speed_of(&mut self, max_speed: f32, shape: &ColliderShape) {
        self.cap_speed(max_speed, shape.placed(&Transform::IDENTITY).reach());
    }

    /// Velocity of the body's material point at world point `at`.
    pub fn point_velocity(&self, pose: &Transform, at: Vec3) -> Vec3 {
        self.velocity + self.angular_velocity.cross(at - pose.translation)
    }

    /// 1 / effective mass for an impulse along unit `n` at `at`: 1/M + n · ((I⁻¹ (r × n)) × r).
    fn inverse_mass_along(&self, pose: &Transform, at: Vec3, n: Vec3) -> f32 {
        let r = at - pose.translation;
        self.inverse_mass + n.dot(self.inverse_inertia_times(pose.rotation, r.cross(n)).cross(r))
    }

    /// Line (5) for a body: gravity.
    pub(crate) fn apply_gravity(&mut self, gravity: Vec3, dt: f32) {
        self.velocity += gravity * dt;
    }

    /// Line (7) for a body: moves `pose` by the velocities over `dt` (the rotation by the exponential map of
    /// ω Δt, so it stays a unit quaternion).
    pub fn integrate(&self, pose: &mut Transform, dt: f32) {
        pose.translation += self.velocity * dt;
        let turn = self.angular_velocity * dt;
        if turn.length_squared() > 0.0 {
            pose.rotation = (Quat::from_scaled_axis(turn) * pose.rotation).normalize();
        }
    }

    /// A body resting on or hitting the static plane through `point` with unit `normal`: the body is lifted
    /// out by its deepest penetration, then each of its support points touching the plane (within
    /// `TOUCHING`) gets an impulse that removes its approach speed (reflected by `restitution` when faster
    /// than `rest_speed`) and, within Coulomb's cone μ = `friction`, its sliding speed.
    pub fn collide_with_plane(
        &mut self,
        pose: &mut Transform,
        shape: &ColliderShape,
        (point, normal): (Vec3, Vec3),
        (friction, restitution): (f32, f32),
        rest_speed: f32,
    ) {
        let (supports, count) = support_points(shape, pose, normal);
        let depth = |q: Vec3| (point - q).dot(normal);
        let deepest = supports[..count].iter().map(|&q| depth(q)).fold(f32::NEG_INFINITY, f32::max);
        if deepest <= 0.0 {
            return;
        }
        pose.translation += normal * deepest;
        for &q in supports[..count].iter().filter(|&&q| depth(q) >= deepest - TOUCHING) {
            let at = q + normal * deepest;
            let approach = self.point_velocity(pose, at).dot(normal);
            if approach >= 0.0 {
                continue;
            }
            let bounce = if approach < -rest_speed { restitution } else { 0.0 };
            let normal_impulse = -(1.0 + bounce) * approach / self.inverse_mass_along(pose, at, normal);
            self.apply_impulse(pose, normal * normal_impulse, at);
            let relative = self.point_velocity(pose, at);
            let slide = relative - normal * relative.dot(normal);
            let speed = slide.length();
            if speed > 0.0 {
                let t = slide / speed;
                let stop = speed / self.inverse_mass_along(pose, at, t);
                self.apply_impulse(pose, -t * stop.min(friction * normal_impulse), at);
            }
        }
    }
}

/// Support points within this distance of the deepest one count as touching the plane too (a box resting on
/// a face touches with four corners), metres.
pub(crate) const TOUCHING: f32 = 0.005;

/// What a body could not take of a contact's momentum (`untaken`, [`ClothRigidBody::take_from_vertex`]) comes back
/// out of vertex `vertex` (velocities `v`, own masses `mass`, inverse masses `w`), so cloth and bodies keep their
/// momentum. A vertex with w = 0 (a pin, the pointer) is held where it is and keeps its velocity.
pub(crate) fn give_back(v: &mut [Vec3], (mass, w): (&[f32], &[f32]), vertex: u32, untaken: Vec3) {
    let i = vertex as usize;
    if let (Some(v), Some(&m), Some(&w)) = (v.get_mut(i), mass.get(i), w.get(i))
        && untaken != Vec3::ZERO
        && w > 0.0
        && m > 0.0
    {
        *v -= untaken / m;
    }
}

/// The points of `shape` (posed by `pose`) that can touch a plane with this `normal` first: the sphere's
/// lowest point, the capsule's two end caps, the box's corners. Returns them and their count.
fn support_points(shape: &ColliderShape, pose: &Transform, normal: Vec3) -> ([Vec3; 8], usize) {
    let scale = pose.scale.max_element();
    let mut points = [pose.translation; 8];
    let count = match *shape {
        ColliderShape::Sphere { radius } => {
            points[0] -= normal * radius * scale;
            1
        }
        ColliderShape::Box { half_extents } => {
            for (k, q) in (0..8).zip(points.iter_mut()) {
                *q += pose.rotation * (half_extents * scale * box_corner_sign(k));
            }
            8
        }
        ColliderShape::Capsule { radius, half_height } => {
            let axis = pose.up().as_vec3() * half_height * scale;
            points[0] += axis - normal * radius * scale;
            points[1] += -axis - normal * radius * scale;
            2
        }
        ColliderShape::Plane | ColliderShape::Barrel { .. } => 0,
    };
    (points, count)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GROUND: (Vec3, Vec3) = (Vec3::ZERO, Vec3::Y);

    #[test]
    fn inertia_of_a_sphere_and_a_box() {
        let ball = ClothRigidBody::solid(ColliderShape::Sphere { radius: 0.5 }, 2.0).unwrap();
        assert!((ball.inverse_inertia - Vec3::splat(1.0 / 0.2)).length() < 1e-5);
        let slab = ClothRigidBody::solid(ColliderShape::Box { half_extents: Vec3::new(1.0, 0.5, 0.5) }, 3.0).unwrap();
        // I_x = m (b² + c²) / 12 with full sides b = c = 1
        assert!((1.0 / slab.inverse_inertia.x - 0.5).abs() < 1e-5);
        assert!(ClothRigidBody::solid(ColliderShape::Plane, 1.0).is_none());
        assert!(ClothRigidBody::solid(ColliderShape::Sphere { radius: 1.0 }, 0.0).is_none());
    }

    #[test]
    fn off_centre_impulse_spins_and_conserves_momentum() {
        let mut body = ClothRigidBody::solid(ColliderShape::Box { half_extents: Vec3::splat(0.5) }, 2.0).unwrap();
        let pose = Transform::from_xyz(1.0, 0.0, 0.0);
        body.apply_impulse(&pose, Vec3::new(0.0, 0.0, 4.0), Vec3::new(1.5, 0.0, 0.0));
        assert!((body.momentum() - Vec3::new(0.0, 0.0, 4.0)).length() < 1e-5);
        // r × j = (0.5, 0, 0) × (0, 0, 4) = (0, −2, 0); I = 2·(0.5)/3 = 1/3
        assert!((body.angular_velocity - Vec3::new(0.0, -6.0, 0.0)).length() < 1e-4, "{}", body.angular_velocity);
    }

    #[test]
    fn a_vertex_heavier_than_the_body_cannot_throw_it_back_faster() {
        let (mut light, pose) =
            (ClothRigidBody::solid(ColliderShape::Sphere { radius: 0.1 }, 0.5).unwrap(), Transform::IDENTITY);
        // a 2 kg vertex pushed at 1 m/s gives the 0.5 kg ball at its centre at most that 1 m/s back
        light.take_from_vertex(&pose, Vec3::new(2.0, 0.0, 0.0), 2.0, Vec3::ZERO);
        assert!((light.velocity - Vec3::new(-1.0, 0.0, 0.0)).length() < 1e-5, "{}", light.velocity);
        let mut heavy = ClothRigidBody::solid(ColliderShape::Sphere { radius: 0.1 }, 50.0).unwrap();
        heavy.take_from_vertex(&pose, Vec3::new(2.0, 0.0, 0.0), 2.0, Vec3::ZERO);
        assert!((heavy.momentum() - Vec3::new(-2.0, 0.0, 0.0)).length() < 1e-4, "momentum is conserved");
        heavy.velocity = Vec3::new(0.0, -500.0, 0.0);
        heavy.angular_velocity = Vec3::splat(1e4);
        heavy.cap_speed(60.0, 0.1);
        assert!(heavy.point_velocity(&pose, Vec3::new(0.1, 0.0, 0.0)).length() <= 120.0 + 1e-3);
        assert!((heavy.velocity.length() - 60.0).abs() < 1e-3);
    }

    #[test]
    fn a_body_lends_its_holds_no_more_than_its_effective_mass_in_any_direction() {
        let body = ClothRigidBody::solid(ColliderShape::Box { half_extents: Vec3::new(0.3, 0.1, 0.2) }, 2.0).unwrap();
        let pose = Transform::from_xyz(0.5, 1.0, 0.0).with_rotation(Quat::from_rotation_z(0.4));
        let at = Vec3::new(0.8, 1.1, 0.2);
        let lent = body.mass_lent_per_hold(&pose, at, 4);
        let mut least = f32::INFINITY;
        for k in 0..200 {
            let (a, b) = (k as f32 * 0.31, k as f32 * 0.17);
            let n = Vec3::new(a.cos() * b.sin(), b.cos(), a.sin() * b.sin());
            least = least.min(1.0 / body.inverse_mass_along(&pose, at, n));
        }
        assert!(lent * 4.0 <= least + 1e-6 && lent * 4.0 > 0.5 * least, "4 × {lent} kg against {least} kg");
        assert!((body.mass_lent_per_hold(&pose, pose.translation, 1) - 2.0).abs() < 1e-5, "at the centre: M");
    }

    #[test]
    fn rotation_integrates_to_the_right_angle() {
        let mut body = ClothRigidBody::solid(ColliderShape::Sphere { radius: 0.1 }, 1.0).unwrap();
        body.angular_velocity = Vec3::new(0.0, std::f32::consts::PI, 0.0);
        let mut pose = Transform::IDENTITY;
        for _ in 0..100 {
            body.integrate(&mut pose, 0.005);
        }
        let (axis, angle) = pose.rotation.to_axis_angle();
        assert!((angle - std::f32::consts::FRAC_PI_2).abs() < 1e-4 && axis.y > 0.999, "{axis} {angle}");
    }

    #[test]
    fn ball_dropped_on_the_ground_bounces_by_e_and_then_rests() {
        let mut ball = ClothRigidBody::solid(ColliderShape::Sphere { radius: 0.2 }, 1.0).unwrap();
        let shape = ColliderShape::Sphere { radius: 0.2 };
        let mut pose = Transform::from_xyz(0.0, 0.25, 0.0);
        ball.velocity = Vec3::new(0.0, -4.0, 0.0);
        ball.integrate(&mut pose, 0.05);
        ball.collide_with_plane(&mut pose, &shape, GROUND, (0.5, 0.5), 0.1);
        assert!((pose.translation.y - 0.2).abs() < 1e-6, "put back on the ground");
        assert!((ball.velocity.y - 2.0).abs() < 1e-5, "bounced with e = 0.5: {}", ball.velocity);
        let (dt, g) = (1.0 / 240.0, Vec3::new(0.0, -9.81, 0.0));
        for _ in 0..2400 {
            ball.apply_gravity(g, dt);
            ball.integrate(&mut pose, dt);
            ball.collide_with_plane(&mut pose, &shape, GROUND, (0.5, 0.5), 2.0 * 9.81 * dt);
        }
        assert!((pose.translation.y - 0.2).abs() < 1e-3 && ball.velocity.length() < 0.05, "{pose:?} {ball:?}");
    }

    #[test]
    fn sliding_box_stops_by_friction_and_keeps_upright() {
        let shape = ColliderShape::Box { half_extents: Vec3::new(0.2, 0.1, 0.2) };
        let mut block = ClothRigidBody::solid(shape, 1.0).unwrap();
        let mut pose = Transform::from_xyz(0.0, 0.1, 0.0);
        block.velocity = Vec3::new(2.0, 0.0, 0.0);
        let (dt, g) = (1.0 / 240.0, Vec3::new(0.0, -9.81, 0.0));
        for _ in 0..480 {
            block.apply_gravity(g, dt);
            block.integrate(&mut pose, dt);
            block.collide_with_plane(&mut pose, &shape, GROUND, (0.5, 0.0), 2.0 * 9.81 * dt);
        }
        // Coulomb: stops after v²/(2 μ g) ≈ 0.41 m; impulses at single corners make it approximate
        assert!(block.velocity.length() < 0.1, "{block:?}");
        assert!((0.2..0.8).contains(&pose.translation.x), "slid {} m", pose.translation.x);
        assert!(pose.rotation.angle_between(Quat::IDENTITY) < 0.2, "tipped over: {pose:?}");
    }
}
