//! Collisions with the environment (§3.4) and with rigid bodies (§4.2): shapes, contact generation in line (8)
//! with the continuous ray test in each collider's own frame (so moving colliders are caught too) and the
//! static fallback, contact projection inside the solver loop, and friction/restitution in line (16).

pub mod clearance_grid;
pub mod contact;
pub(crate) mod contacts;
pub mod edge_grid;
pub(crate) mod exits;
pub mod features;
pub(crate) mod general;
pub mod hold;
pub(crate) mod pinch;
pub mod planes;
pub(crate) mod response;
pub mod shapes;
pub mod swept;
pub(crate) mod uniform_grid;

pub use contacts::DEPENETRATION_SPEED;

use bevy::math::Vec3;
use serde::{Deserialize, Serialize};

use crate::validate;

/// The shape of a collider entity, in its local frame; the entity's `Transform` places it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum ColliderShape {
    /// An infinite plane through the origin with normal +Y (the ground, when untransformed).
    Plane,
    /// A sphere about the origin.
    Sphere {
        /// Radius, metres.
        #[serde(deserialize_with = "validate::length")]
        radius: f32,
    },
    /// A box about the origin with these half extents, metres.
    Box {
        /// Half extents along the local axes, metres.
        #[serde(deserialize_with = "validate::extents")]
        half_extents: Vec3,
    },
    /// A capsule along the local Y axis: a segment of length 2 · `half_height` swept by `radius`.
    Capsule {
        /// Radius, metres.
        #[serde(deserialize_with = "validate::length")]
        radius: f32,
        /// Half the segment's length, metres.
        #[serde(deserialize_with = "validate::length")]
        half_height: f32,
    },
    /// A closed hollow cylinder (a barrel) along the local Y axis: the cloth lives inside, the wall and the caps
    /// keep it there.
    Barrel {
        /// Radius of the inside, metres.
        #[serde(deserialize_with = "validate::length")]
        radius: f32,
        /// Half the inside height, metres.
        #[serde(deserialize_with = "validate::length")]
        half_height: f32,
    },
}

/// Bevy's primitive shapes as collider shapes: a scene's own meshes (built from these primitives) can collide
/// with cloth as they are drawn.
impl From<bevy::math::primitives::Sphere> for ColliderShape {
    fn from(sphere: bevy::math::primitives::Sphere) -> Self {
        ColliderShape::Sphere { radius: sphere.radius }
    }
}

impl From<bevy::math::primitives::Cuboid> for ColliderShape {
    fn from(cuboid: bevy::math::primitives::Cuboid) -> Self {
        ColliderShape::Box { half_extents: cuboid.half_size }
    }
}

impl From<bevy::math::primitives::Capsule3d> for ColliderShape {
    fn from(capsule: bevy::math::primitives::Capsule3d) -> Self {
        ColliderShape::Capsule { radius: capsule.radius, half_height: capsule.half_length }
    }
}

/// How a kinematic collider moves over simulated time t.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub enum ColliderMotion {
    /// Does not move.
    #[default]
    Static,
    /// Back and forth along `axis`: offset = axis · amplitude · sin(2π · frequency · t).
    Oscillate {
        /// Direction of the motion (normalised when used; zero stands still).
        #[serde(deserialize_with = "validate::finite_vec")]
        axis: Vec3,
        /// Amplitude, metres.
        #[serde(deserialize_with = "validate::finite")]
        amplitude: f32,
        /// Frequency, Hz.
        #[serde(deserialize_with = "validate::finite")]
        frequency: f32,
    },
    /// Spinning about its own centre around `axis` at `angular_speed` rad/s.
    Spin {
        /// Axis of rotation (normalised when used; +Y if zero).
        #[serde(deserialize_with = "validate::finite_vec")]
        axis: Vec3,
        /// Angular speed, rad/s.
        #[serde(deserialize_with = "validate::finite")]
        angular_speed: f32,
    },
    /// Along the polyline through the start position and then `waypoints` (offsets from the start, metres) at
    /// constant speed, taking `duration` seconds; `looped` returns to the start and repeats, otherwise it stays
    /// at the last waypoint.
    Path {
        /// The corners after the start, as offsets from it, metres.
        #[serde(deserialize_with = "validate::path")]
        waypoints: Vec<Vec3>,
        /// Time for one pass, seconds.
        #[serde(deserialize_with = "validate::length")]
        duration: f32,
        /// Whether the path returns to the start and repeats; `false` by default.
        #[serde(default)]
        looped: bool,
    },
}

/// The corners of the polyline 0 → waypoints (→ 0 if `looped`).
fn path_corners(waypoints: &[Vec3], looped: bool) -> impl Iterator<Item = Vec3> + Clone + '_ {
    let closing = if looped { Some(Vec3::ZERO) } else { None };
    std::iter::once(Vec3::ZERO).chain(waypoints.iter().copied()).chain(closing)
}

/// The length of the polyline 0 → waypoints (→ 0 if `looped`), metres.
pub(crate) fn path_length(waypoints: &[Vec3], looped: bool) -> f32 {
    let corners = path_corners(waypoints, looped);
    corners.clone().zip(corners.skip(1)).map(|(a, b)| a.distance(b)).sum()
}

/// The point `fraction` (0–1) of the way along the polyline 0 → waypoints (→ 0 if `looped`), by arc length.
pub(crate) fn point_along(waypoints: &[Vec3], looped: bool, fraction: f32) -> Vec3 {
    let corners = || path_corners(waypoints, looped);
    let segments = || corners().zip(corners().skip(1));
    let mut left = fraction * path_length(waypoints, looped);
    for (a, b) in segments() {
        let length = a.distance(b);
        if left <= length && length > 0.0 {
            return a.lerp(b, left / length);
        }
        left -= length;
    }
    corners().last().unwrap_or(Vec3::ZERO)
}
