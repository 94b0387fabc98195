//! Collisions with the environment (§3.4): shapes, contact generation in line (8) with the continuous ray test
//! and the static fallback, contact projection inside the solver loop, and friction/restitution in line (16).

pub mod contacts;
pub mod response;
pub mod shapes;

use bevy::prelude::*;
use serde::{Deserialize, Serialize};

use shapes::Shape;

/// The shape of a collider entity, in its local frame; the entity's `Transform` places it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum ColliderShape {
    /// An infinite plane through the origin with normal +Y (the ground, when untransformed).
    Plane,
    /// A sphere about the origin.
    Sphere { radius: f32 },
}

/// A static collider the cloth cannot enter.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct Collider {
    pub shape: ColliderShape,
}

impl Collider {
    /// The world-space shape under `transform`.
    pub fn world_shape(&self, transform: &Transform) -> Shape {
        match self.shape {
            ColliderShape::Plane => Shape::Plane { point: transform.translation, normal: transform.up().as_vec3() },
            ColliderShape::Sphere { radius } => {
                Shape::Sphere { center: transform.translation, radius: radius * transform.scale.max_element() }
            }
        }
    }
}
