//! Collisions with the environment (§3.4): shapes, contact generation in line (8) with the continuous ray test
//! and the static fallback, contact projection inside the solver loop, and friction/restitution in line (16).

pub mod contacts;
pub mod response;
pub mod shapes;

use bevy::prelude::*;
use serde::{Deserialize, Serialize};

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
}

/// How a kinematic collider moves over simulated time t.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
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
        }
    }
}

/// A collider the cloth cannot enter; kinematic if `motion` is not static.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct Collider {
    pub shape: ColliderShape,
    pub motion: ColliderMotion,
    /// Pose at t = 0.
    pub start: Transform,
}

impl Collider {
    pub fn fixed(shape: ColliderShape, start: Transform) -> Self {
        Self { shape, motion: ColliderMotion::Static, start }
    }

    /// The world-space shape under `transform`.
    pub fn world_shape(&self, transform: &Transform) -> Shape {
        let scale = transform.scale.max_element();
        match self.shape {
            ColliderShape::Plane => Shape::Plane { point: transform.translation, normal: transform.up().as_vec3() },
            ColliderShape::Sphere { radius } => Shape::Sphere { center: transform.translation, radius: radius * scale },
            ColliderShape::Box { half_extents } => Shape::Box {
                center: transform.translation,
                rotation: transform.rotation,
                half_extents: half_extents * scale,
            },
            ColliderShape::Capsule { radius, half_height } => {
                let axis = transform.up().as_vec3() * half_height * scale;
                Shape::Capsule {
                    a: transform.translation - axis,
                    b: transform.translation + axis,
                    radius: radius * scale,
                }
            }
        }
    }
}

/// Before each fixed step: kinematic colliders take their pose at the end of the step.
pub fn move_colliders(
    mut colliders: Query<(&Collider, &mut Transform)>,
    clock: Res<crate::sim::SimClock>,
    time: Res<Time<Fixed>>,
) {
    let t = clock.time + time.timestep().as_secs_f32();
    for (collider, mut transform) in &mut colliders {
        if collider.motion != ColliderMotion::Static {
            *transform = collider.motion.pose(&collider.start, t);
        }
    }
}
