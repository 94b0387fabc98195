//! Collisions with the environment (§3.4) and with rigid bodies (§4.2): shapes, contact generation in line (8)
//! with the continuous ray test in each collider's own frame (so moving colliders are caught too) and the
//! static fallback, contact projection inside the solver loop, and friction/restitution in line (16).

pub mod contacts;
pub mod response;
pub mod shapes;
pub mod swept;

use bevy::prelude::*;
use serde::{Deserialize, Serialize};

use crate::sim::parallel::SliceOutputs;
use crate::validate;
use shapes::Shape;

/// The shape of a collider entity, in its local frame; the entity's `Transform` places it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum ColliderShape {
    /// An infinite plane through the origin with normal +Y (the ground, when untransformed).
    Plane,
    /// A sphere about the origin.
    Sphere {
        #[serde(deserialize_with = "validate::length")]
        radius: f32,
    },
    /// A box about the origin with these half extents, metres.
    Box {
        #[serde(deserialize_with = "validate::extents")]
        half_extents: Vec3,
    },
    /// A capsule along the local Y axis: a segment of length 2 · `half_height` swept by `radius`.
    Capsule {
        #[serde(deserialize_with = "validate::length")]
        radius: f32,
        #[serde(deserialize_with = "validate::length")]
        half_height: f32,
    },
    /// A closed hollow cylinder (a barrel) along the local Y axis: the cloth lives inside, the wall and the caps
    /// keep it there.
    Barrel {
        #[serde(deserialize_with = "validate::length")]
        radius: f32,
        #[serde(deserialize_with = "validate::length")]
        half_height: f32,
    },
}

impl ColliderShape {
    /// The world-space shape under `transform` (uniform scale: its largest component).
    pub fn placed(&self, transform: &Transform) -> Shape {
        let scale = transform.scale.max_element();
        let center = transform.translation;
        let rotation = transform.rotation;
        match *self {
            ColliderShape::Plane => Shape::Plane { point: center, normal: transform.up().as_vec3() },
            ColliderShape::Sphere { radius } => Shape::Sphere { center, radius: radius * scale },
            ColliderShape::Box { half_extents } => Shape::Box { center, rotation, half_extents: half_extents * scale },
            ColliderShape::Capsule { radius, half_height } => {
                let axis = transform.up().as_vec3() * half_height * scale;
                Shape::Capsule { a: center - axis, b: center + axis, radius: radius * scale }
            }
            ColliderShape::Barrel { radius, half_height } => {
                Shape::Barrel { center, rotation, radius: radius * scale, half_height: half_height * scale }
            }
        }
    }
}

/// How a kinematic collider moves over simulated time t.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub enum ColliderMotion {
    #[default]
    Static,
    /// Back and forth along `axis`: offset = axis · amplitude · sin(2π · frequency · t).
    Oscillate {
        #[serde(deserialize_with = "validate::finite_vec")]
        axis: Vec3,
        #[serde(deserialize_with = "validate::finite")]
        amplitude: f32,
        #[serde(deserialize_with = "validate::finite")]
        frequency: f32,
    },
    /// Spinning about its own centre around `axis` at `angular_speed` rad/s.
    Spin {
        #[serde(deserialize_with = "validate::finite_vec")]
        axis: Vec3,
        #[serde(deserialize_with = "validate::finite")]
        angular_speed: f32,
    },
    /// Along the polyline through the start position and then `waypoints` (offsets from the start, metres) at
    /// constant speed, taking `duration` seconds; `looped` returns to the start and repeats, otherwise it stays
    /// at the last waypoint.
    Path {
        #[serde(deserialize_with = "validate::path")]
        waypoints: Vec<Vec3>,
        #[serde(deserialize_with = "validate::length")]
        duration: f32,
        #[serde(default)]
        looped: bool,
    },
}

impl ColliderMotion {
    /// The pose at time `t` of a collider whose pose at t = 0 is `start`.
    pub fn pose(&self, start: &Transform, t: f32) -> Transform {
        match *self {
            ColliderMotion::Static => *start,
            ColliderMotion::Oscillate { axis, amplitude, frequency } => start.with_translation(
                start.translation
                    + axis.normalize_or_zero() * amplitude * (std::f32::consts::TAU * frequency * t).sin(),
            ),
            ColliderMotion::Spin { axis, angular_speed } => start
                .with_rotation(Quat::from_axis_angle(axis.normalize_or(Vec3::Y), angular_speed * t) * start.rotation),
            ColliderMotion::Path { ref waypoints, duration, looped } => {
                let fraction = if looped { (t / duration).rem_euclid(1.0) } else { (t / duration).clamp(0.0, 1.0) };
                start.with_translation(start.translation + point_along(waypoints, looped, fraction))
            }
        }
    }
}

/// The point `fraction` (0–1) of the way along the polyline 0 → waypoints (→ 0 if `looped`), by arc length.
fn point_along(waypoints: &[Vec3], looped: bool, fraction: f32) -> Vec3 {
    let closing = if looped { Some(Vec3::ZERO) } else { None };
    let corners = || std::iter::once(Vec3::ZERO).chain(waypoints.iter().copied()).chain(closing);
    let segments = || corners().zip(corners().skip(1));
    let total: f32 = segments().map(|(a, b)| a.distance(b)).sum();
    let mut left = fraction * total;
    for (a, b) in segments() {
        let length = a.distance(b);
        if left <= length && length > 0.0 {
            return a.lerp(b, left / length);
        }
        left -= length;
    }
    corners().last().unwrap_or(Vec3::ZERO)
}

/// A collider the cloth cannot enter; kinematic if `motion` is not static, dynamic if the entity also has a
/// [`RigidBody`](crate::sim::rigid::RigidBody).
#[derive(Component, Clone, Debug, PartialEq)]
pub struct Collider {
    pub shape: ColliderShape,
    pub motion: ColliderMotion,
    /// Pose at t = 0.
    pub start: Transform,
    /// Coulomb friction μ of cloth on this collider; `None` uses [`SimParams::friction`](crate::sim::SimParams).
    pub friction: Option<f32>,
    /// Restitution e of cloth on this collider; `None` uses [`SimParams::restitution`](crate::sim::SimParams).
    pub restitution: Option<f32>,
}

impl Collider {
    pub fn fixed(shape: ColliderShape, start: Transform) -> Self {
        Self { shape, motion: ColliderMotion::Static, start, friction: None, restitution: None }
    }
}

/// A collider's pose at the start of the substep being run; its `Transform` is the pose at the end. Contacts
/// are found in the collider's frame from these two poses (see [`swept`]).
#[derive(Component, Clone, Copy, Debug, Default, PartialEq)]
pub struct PreviousPose(pub Transform);

/// The colliders of the substep being run, each swept from its previous pose to its pose, in a fixed order:
/// contacts name their collider by index into it. Refilled in place every substep.
#[derive(Resource, Clone, Debug, Default)]
pub struct CollisionWorld {
    pub colliders: Vec<swept::SweptCollider>,
    pub entities: Vec<Entity>,
    /// Scratch of the parallel contact search ([`contacts::generate_contacts`]).
    pub slices: SliceOutputs<contacts::SliceContacts>,
}

impl CollisionWorld {
    /// The index of the collider of entity `e`.
    pub fn index_of(&self, e: Entity) -> Option<usize> {
        self.entities.iter().position(|&k| k == e)
    }

    /// Refills the list from the colliders' two poses; unset friction and restitution come from the
    /// parameters.
    pub fn gather<'a>(
        &mut self,
        colliders: impl Iterator<Item = (Entity, &'a Collider, &'a Transform, Option<&'a PreviousPose>)>,
        params: &crate::sim::SimParams,
    ) {
        self.colliders.clear();
        self.entities.clear();
        for (entity, collider, end, start) in colliders {
            let start = start.map_or(*end, |s| s.0);
            let scale = end.scale;
            let local = collider.shape.placed(&Transform::from_scale(scale));
            let pose = |t: &Transform| Isometry3d::new(t.translation, t.rotation);
            self.colliders.push(swept::SweptCollider::new(
                local,
                pose(&start),
                pose(end),
                collider.friction.unwrap_or(params.friction),
                collider.restitution.unwrap_or(params.restitution),
            ));
            self.entities.push(entity);
        }
    }
}

/// Line (7) for kinematic colliders: each takes its pose at the end of the substep, remembering the start.
pub fn move_colliders(
    mut colliders: Query<(&Collider, &mut Transform, &mut PreviousPose), Without<crate::sim::rigid::RigidBody>>,
    clock: Res<crate::sim::SimClock>,
) {
    let t = clock.time + clock.dt;
    for (collider, mut transform, mut previous) in &mut colliders {
        previous.0 = *transform;
        if collider.motion != ColliderMotion::Static {
            *transform = collider.motion.pose(&collider.start, t);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_moves_at_constant_speed_and_loops() {
        let path =
            ColliderMotion::Path { waypoints: vec![Vec3::X, Vec3::new(1.0, 1.0, 0.0)], duration: 4.0, looped: true };
        let start = Transform::from_xyz(0.0, 2.0, 0.0);
        // perimeter 1 + 1 + √2 ≈ 3.41: a quarter of it, 0.85 m, lies on the first leg
        let quarter = (2.0 + std::f32::consts::SQRT_2) / 4.0;
        assert!((path.pose(&start, 1.0).translation - Vec3::new(quarter, 2.0, 0.0)).length() < 1e-5);
        assert!((path.pose(&start, 4.0).translation - start.translation).length() < 1e-5, "back at the start");
        assert!((path.pose(&start, 6.0).translation - path.pose(&start, 2.0).translation).length() < 1e-5);
        let once = ColliderMotion::Path { waypoints: vec![Vec3::NEG_Y * 3.0], duration: 1.0, looped: false };
        assert!((once.pose(&start, 9.0).translation.y + 1.0).abs() < 1e-5, "stays at the last waypoint");
    }
}
