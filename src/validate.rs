//! Field checks that run while a preset file is parsed, so a bad value is reported by the RON parser with the
//! file position where it stands (line and column), never discovered later or by a panic.

use bevy::math::Vec3;
use serde::de::Error;
use serde::{Deserialize, Deserializer};

/// Most quads along one side of a grid cloth: (999 + 1)² = 1,000,000 particles, the documented limit
/// ([`crate::sim::topology::MAX_PARTICLES`]), checked before anything is allocated.
pub const MAX_GRID_CELLS: u32 = 999;

/// A size in metres: finite and positive.
pub fn length<'de, D: Deserializer<'de>>(d: D) -> Result<f32, D::Error> {
    let v = f32::deserialize(d)?;
    if v.is_finite() && v > 0.0 {
        Ok(v)
    } else {
        Err(D::Error::custom(format!("{v} is not a valid size: sizes must be finite and greater than zero")))
    }
}

/// A size per axis (half extents of a box): every component finite and positive.
pub fn extents<'de, D: Deserializer<'de>>(d: D) -> Result<Vec3, D::Error> {
    let v = Vec3::deserialize(d)?;
    if v.is_finite() && v.min_element() > 0.0 {
        Ok(v)
    } else {
        Err(D::Error::custom(format!("{v} is not a valid size: every component must be finite and greater than zero")))
    }
}

/// Quads along one side of a grid: 1 to [`MAX_GRID_CELLS`].
pub fn grid_cells<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    let v = u32::deserialize(d)?;
    if (1..=MAX_GRID_CELLS).contains(&v) {
        Ok(v)
    } else {
        Err(D::Error::custom(format!(
            "{v} quads along a side is out of range: 1 to {MAX_GRID_CELLS} (at most 1,000,000 particles per cloth)"
        )))
    }
}

/// A coefficient in [0, 1] (stiffness).
pub fn unit<'de, D: Deserializer<'de>>(d: D) -> Result<f32, D::Error> {
    let v = f32::deserialize(d)?;
    if (0.0..=1.0).contains(&v) {
        Ok(v)
    } else {
        Err(D::Error::custom(format!("{v} is out of range: this coefficient lies in [0, 1]")))
    }
}

/// A finite vector (positions, axes, velocities).
pub fn finite_vec<'de, D: Deserializer<'de>>(d: D) -> Result<Vec3, D::Error> {
    let v = Vec3::deserialize(d)?;
    if v.is_finite() { Ok(v) } else { Err(D::Error::custom(format!("{v} is not finite"))) }
}

/// A finite number.
pub fn finite<'de, D: Deserializer<'de>>(d: D) -> Result<f32, D::Error> {
    let v = f32::deserialize(d)?;
    if v.is_finite() { Ok(v) } else { Err(D::Error::custom(format!("{v} is not finite"))) }
}

/// A path: 1 to 256 finite points.
pub fn path<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Vec3>, D::Error> {
    let v = Vec::<Vec3>::deserialize(d)?;
    if v.is_empty() || v.len() > 256 {
        Err(D::Error::custom(format!("a path needs 1 to 256 waypoints, not {}", v.len())))
    } else if let Some(bad) = v.iter().find(|p| !p.is_finite()) {
        Err(D::Error::custom(format!("waypoint {bad} is not finite")))
    } else {
        Ok(v)
    }
}

/// An optional friction coefficient μ in [0, 2].
pub fn optional_friction<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f32>, D::Error> {
    match Option::<f32>::deserialize(d)? {
        Some(v) if !(0.0..=2.0).contains(&v) => {
            Err(D::Error::custom(format!("friction {v} is out of range: μ lies in [0, 2]")))
        }
        v => Ok(v),
    }
}

/// An optional coefficient in [0, 1] (restitution).
pub fn optional_unit<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f32>, D::Error> {
    match Option::<f32>::deserialize(d)? {
        Some(v) if !(0.0..=1.0).contains(&v) => {
            Err(D::Error::custom(format!("{v} is out of range: this coefficient lies in [0, 1]")))
        }
        v => Ok(v),
    }
}
