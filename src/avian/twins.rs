//! A moving Avian body as the cloth's substeps see it (§4.2): Avian's last pose and velocities, and for a
//! dynamic body the velocity the cloth's impulses gave it since, substep by substep.
//!
//! Avian takes the cloth's impulses only at its next step. Swept at the velocities of its last step through all
//! of the cloth's substeps, a light body under a heavy cloth was pushed back by every substep's contacts as if
//! it had not yet moved, took several substeps' worth of the cloth's momentum, and rang: the `avian` example's
//! 64 g crate under a 0.4 kg sheet left at 30 m/s. The twin moves on with each substep's impulses, as drape's own
//! bodies do (`ClothRigidBody::take_from_vertex`), so the next substep's contacts see it yield.

use avian3d::prelude::ComputedAngularInertia;
use bevy::ecs::entity::EntityHashMap;
use bevy::prelude::*;

/// The twins of the moving Avian bodies within one cloth step; emptied before each.
#[derive(Resource, Debug, Default)]
pub(crate) struct AvianTwins(pub EntityHashMap<Twin>);

/// One body's twin: its pose at time `t` of the cloth step is Avian's, moved at Avian's velocities for `t`, plus
/// the `shift` and `turn` of the velocity changes the cloth gave it since.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Twin {
    position: Vec3,
    rotation: Quat,
    velocity: Vec3,
    angular_velocity: Vec3,
    /// Velocity changes from the cloth's impulses, linear and angular.
    gained: (Vec3, Vec3),
    /// What `gained` moved and turned the body by, up to the end of the last sweep.
    shift: Vec3,
    turn: Vec3,
    /// Where the last sweep left it.
    now: Isometry3d,
    /// Mass properties of a dynamic body; `None` for a kinematic one, which takes no impulses.
    mass: Option<Mass>,
}

/// What a dynamic body's response needs: its inverse mass, inverse inertia and centre of mass (body frame).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Mass {
    pub inverse: f32,
    pub inertia: ComputedAngularInertia,
    pub center: Vec3,
}

impl Twin {
    /// Avian's body at its last step: at `pose`, moving at `velocity` and `angular_velocity`.
    pub fn new(pose: (Vec3, Quat), velocity: Vec3, angular_velocity: Vec3, mass: Option<Mass>) -> Self {
        let (position, rotation) = pose;
        let (gained, now) = ((Vec3::ZERO, Vec3::ZERO), Isometry3d::new(position, rotation));
        Self { position, rotation, velocity, angular_velocity, gained, shift: Vec3::ZERO, turn: Vec3::ZERO, now, mass }
    }

    fn pose(&self, t: f32, (shift, turn): (Vec3, Vec3)) -> Isometry3d {
        let rotation = Quat::from_scaled_axis(self.angular_velocity * t + turn) * self.rotation;
        Isometry3d::new(self.position + self.velocity * t + shift, rotation)
    }

    /// The body's poses at the start and end of the substep `[begin, begin + dt]`; the end becomes the next
    /// substep's start.
    pub fn sweep(&mut self, begin: f32, dt: f32) -> (Isometry3d, Isometry3d) {
        let start = self.pose(begin, (self.shift, self.turn));
        self.shift += self.gained.0 * dt;
        self.turn += self.gained.1 * dt;
        self.now = self.pose(begin + dt, (self.shift, self.turn));
        (start, self.now)
    }

    /// §4.2's impulse back from a vertex a contact at `at` gave momentum `given`, pushed by `pushing_mass` (every
    /// vertex the body pushed in the substep): the body takes −`given`, but never more than its effective mass
    /// along it, 1 / (1/M + (r × n) · I⁻¹ (r × n)), could take at the vertices' change in velocity. Returns the
    /// share taken and the impulse with its moment about the centre of mass; `None` for a kinematic body or no
    /// push.
    pub fn take(&mut self, given: Vec3, pushing_mass: f32, at: Vec3) -> Option<(f32, Vec3, Vec3)> {
        let (mass, direction) = (self.mass?, given.try_normalize()?);
        let rotation = self.now.rotation;
        let arm = at - (Vec3::from(self.now.translation) + rotation * mass.center);
        let inverse_inertia = |torque: Vec3| rotation * mass.inertia.inverse().mul_vec3(rotation.inverse() * torque);
        let turn = arm.cross(direction);
        let taken = (1.0 / (mass.inverse + turn.dot(inverse_inertia(turn))) / pushing_mass).min(1.0);
        let impulse = -given * taken;
        let moment = arm.cross(impulse);
        self.gained.0 += impulse * mass.inverse;
        self.gained.1 += inverse_inertia(moment);
        Some((taken, impulse, moment))
    }

    /// Whether the cloth's impulses move it.
    pub fn is_dynamic(&self) -> bool {
        self.mass.is_some()
    }
}
