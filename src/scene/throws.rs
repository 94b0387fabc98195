//! Balls thrown into the scene (the two-way coupling of §4.2 and the ball that rips the cloth in Fig. 10):
//! at the times a preset lists in `throws`, or by the user (key B, or the panel's button) from the camera
//! toward the cursor. A ball is a dynamic rigid sphere; at most `MAX_BALLS` stay, the oldest go first.

use bevy::prelude::*;

use super::desc::ThrowDesc;
use super::spawn::{ActiveScene, Appearance, BuiltCollider};
use crate::sim::SimClock;
use crate::sim::cloth::ClothCollider;
use crate::sim::collide::ColliderShape;
use crate::sim::rigid::ClothRigidBody;

/// Most thrown balls in the scene at once.
pub(crate) const MAX_BALLS: usize = 12;

/// Colour of a thrown ball (sRGB).
const BALL_COLOR: [f32; 3] = [0.92, 0.75, 0.2];

/// A ball thrown into the scene; `serial` orders throws (oldest first).
#[derive(Component, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ThrownBall {
    /// Order of the throw; a larger serial is newer.
    pub serial: u64,
}

/// Throws waiting for the next fixed step: the user's, and which of the scene's scheduled ones have flown.
#[derive(Resource, Clone, Debug, Default)]
pub struct ThrowQueue {
    /// The user's throws, launched at the next fixed step.
    pub pending: Vec<ThrowDesc>,
    /// Set by the panel's button: throw a ball straight ahead from the camera.
    pub from_camera: bool,
    /// One flag per `throws` entry of the active scene.
    scheduled_done: Vec<bool>,
    serial: u64,
}

/// The ball of `desc` as a dynamic collider, or `None` if its mass or radius is not positive.
pub fn ball(desc: &ThrowDesc) -> Option<BuiltCollider> {
    let shape = ColliderShape::Sphere { radius: desc.radius };
    let body = ClothRigidBody { velocity: desc.velocity, ..ClothRigidBody::solid(shape, desc.mass)? };
    let transform = Transform::from_translation(desc.from);
    let collider = ClothCollider::fixed(shape, transform);
    let (name, appearance) = (Name::new("ball"), Appearance::plain(BALL_COLOR));
    Some(BuiltCollider { name, collider, transform, appearance, body: Some(body) })
}

/// Before each step: spawns the user's throws and the scene's throws whose time has come, then removes the
/// oldest balls beyond [`MAX_BALLS`].
pub(crate) fn launch_throws(
    mut commands: Commands,
    mut queue: ResMut<ThrowQueue>,
    active: Res<ActiveScene>,
    clock: Res<SimClock>,
    balls: Query<(Entity, &ThrownBall)>,
) {
    let scheduled = &active.0.throws;
    if active.is_changed() || queue.scheduled_done.len() != scheduled.len() {
        queue.scheduled_done = vec![false; scheduled.len()];
    }
    let due: Vec<ThrowDesc> = scheduled
        .iter()
        .zip(queue.scheduled_done.iter_mut())
        .filter(|(t, done)| !**done && f64::from(t.time) <= clock.time)
        .map(|(t, done)| {
            *done = true;
            *t
        })
        .collect();
    if due.is_empty() && queue.pending.is_empty() {
        return;
    }
    let pending = std::mem::take(&mut queue.pending);
    let mut thrown = 0;
    for desc in due.iter().chain(&pending) {
        if let Some(built) = ball(desc) {
            queue.serial += 1;
            let entity = built.spawn(&mut commands);
            commands.entity(entity).insert(ThrownBall { serial: queue.serial });
            thrown += 1;
        }
    }
    let mut existing: Vec<(u64, Entity)> = balls.iter().map(|(e, b)| (b.serial, e)).collect();
    let excess = (existing.len() + thrown).saturating_sub(MAX_BALLS);
    if excess > 0 {
        existing.sort_unstable();
        for &(_, e) in existing.iter().take(excess) {
            commands.entity(e).despawn();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ball_is_a_dynamic_sphere_with_the_throw_velocity() {
        let desc = ThrowDesc { time: 0.0, from: Vec3::Y, velocity: Vec3::new(0.0, 0.0, -10.0), radius: 0.1, mass: 2.0 };
        let built = ball(&desc).unwrap();
        let body = built.body.unwrap();
        assert_eq!(body.momentum(), Vec3::new(0.0, 0.0, -20.0));
        assert_eq!(built.transform.translation, Vec3::Y);
        assert!(ball(&ThrowDesc { mass: 0.0, ..desc }).is_none());
    }
}
