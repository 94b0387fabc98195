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
