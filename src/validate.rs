//! Field checks that run while a preset file is parsed, so a bad value is reported by the RON parser with the
//! file position where it stands (line and column), never discovered later or by a panic.

use bevy::math::Vec3;
use serde::de::Error;
use serde::{Deserialize, Deserializer};

use crate::sim::knobs::{self, Knob, VectorKnob};

/// Most quads along one side of a grid cloth: (999 + 1)² = 1,000,000 particles, the documented limit
/// ([`crate::sim::mesh::topology::MAX_PARTICLES`]), checked before anything is allocated.
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

/// How often a cloth's pattern repeats: 0.1 to 1000 times across its texture coordinates.
pub fn fabric_repeats<'de, D: Deserializer<'de>>(d: D) -> Result<f32, D::Error> {
    within(&FABRIC_REPEATS, d)
}

/// The fabric pattern's repeats across the texture coordinates' unit square: drawing only, no physics.
pub const FABRIC_REPEATS: Knob = Knob {
    name: "repeats",
    label: "pattern repeats",
    unit: "",
    min: 0.1,
    max: 1000.0,
    default: 6.0,
    section: "none (drawing only)",
    doc: "How often the fabric pattern repeats across u and v from 0 to 1.",
};

/// A value a file may only give inside `knob`'s range; the error names the field and its range.
fn within<'de, D: Deserializer<'de>>(knob: &Knob, d: D) -> Result<f32, D::Error> {
    let v = f32::deserialize(d)?;
    if knob.range().contains(&v) { Ok(v) } else { Err(D::Error::custom(knob.out_of_range(v))) }
}

/// A value that must be finite and positive; a positive value outside `knob`'s range is clamped into it later
/// (when the cloth is built).
fn positive<'de, D: Deserializer<'de>>(knob: &Knob, d: D) -> Result<f32, D::Error> {
    let v = f32::deserialize(d)?;
    if v.is_finite() && v > 0.0 {
        Ok(v)
    } else {
        let why = "it must be finite and greater than zero (and is then clamped into the range)";
        Err(D::Error::custom(format!("{}: {why}", knob.out_of_range(v))))
    }
}

/// An optional value that must lie inside `knob`'s range when given.
fn optional_within<'de, D: Deserializer<'de>>(knob: &Knob, d: D) -> Result<Option<f32>, D::Error> {
    match Option::<f32>::deserialize(d)? {
        Some(v) if !knob.range().contains(&v) => Err(D::Error::custom(knob.out_of_range(v))),
        v => Ok(v),
    }
}

/// A count a file may only give inside `knob`'s range. Read as a signed integer first, so that `-38` is reported
/// as `iterations: -38 is out of range 1–200` and not as a bare integer overflow.
fn count_within<'de, D: Deserializer<'de>>(knob: &Knob, d: D) -> Result<u32, D::Error> {
    let v = i64::deserialize(d)?;
    if (knob.min as i64..=knob.max as i64).contains(&v) {
        Ok(v as u32)
    } else {
        Err(D::Error::custom(knob.out_of_range(v)))
    }
}

/// A vector a file may only give finite and no longer than `knob`'s bound.
fn vector_within<'de, D: Deserializer<'de>>(knob: &VectorKnob, d: D) -> Result<Vec3, D::Error> {
    let v = Vec3::deserialize(d)?;
    if v.is_finite() && v.length() <= knob.max_length {
        Ok(v)
    } else {
        Err(D::Error::custom(format!("{}: {v} is out of range {} {}", knob.name, knob.range_text(), knob.unit)))
    }
}

/// One preset check per knob: `field => KNOB` with the check it needs (`within`, `count_within`,
/// `vector_within`, `positive`, `optional_within`) and the type it yields.
macro_rules! knob_checks {
    ($($field:ident => $knob:ident, $check:ident -> $ty:ty;)*) => {$(
        #[doc = concat!("The preset check of `", stringify!($field), "`: [`knobs::", stringify!($knob), "`].")]
        pub fn $field<'de, D: Deserializer<'de>>(d: D) -> Result<$ty, D::Error> {
            $check(&knobs::$knob, d)
        }
    )*};
}

knob_checks! {
    iterations => ITERATIONS, count_within -> u32;
    substeps => SUBSTEPS, count_within -> u32;
    rate_hz => RATE_HZ, within -> f32;
    gravity => GRAVITY, vector_within -> Vec3;
    wind => WIND, vector_within -> Vec3;
    wind_gust => WIND_GUST, within -> f32;
    air_drag => AIR_DRAG, within -> f32;
    damping => DAMPING, within -> f32;
    friction => FRICTION, within -> f32;
    restitution => RESTITUTION, within -> f32;
    tear_threshold => TEAR_THRESHOLD, within -> f32;
    pressure => PRESSURE, within -> f32;
    tether_slack => TETHER_SLACK, within -> f32;
    stretch_stiffness => STRETCH_STIFFNESS, within -> f32;
    bend_stiffness => BEND_STIFFNESS, within -> f32;
    density => DENSITY, positive -> f32;
    thickness => THICKNESS, positive -> f32;
    stretch_compliance => STRETCH_COMPLIANCE, within -> f32;
    bend_compliance => BEND_COMPLIANCE, within -> f32;
    volume_compliance => VOLUME_COMPLIANCE, within -> f32;
    optional_friction => FRICTION, optional_within -> Option<f32>;
    optional_restitution => RESTITUTION, optional_within -> Option<f32>;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `check` makes of the RON text `value`: the value or the error's message.
    fn run<T>(check: fn(ron::Value) -> ron::Result<T>, value: &str) -> Result<T, String> {
        check(ron::from_str(value).unwrap()).map_err(|e| e.to_string())
    }

    #[test]
    fn out_of_range_errors_name_the_field_and_its_range() {
        assert_eq!(run(stretch_stiffness, "0.5"), Ok(0.5));
        assert_eq!(run(stretch_stiffness, "1.5"), Err("stretch_stiffness: 1.5 is out of range 0–1".into()));
        assert_eq!(run(bend_stiffness, "-0.1"), Err("bend_stiffness: -0.1 is out of range 0–1".into()));
        assert_eq!(run(fabric_repeats, "0.05"), Err("repeats: 0.05 is out of range 0.1–1000".into()));
        assert_eq!(run(optional_friction, "Some(3.0)"), Err("friction: 3 is out of range 0–2".into()));
        assert_eq!(run(optional_restitution, "None"), Ok(None));
        // a density outside its range but positive is clamped later, not refused
        assert_eq!(run(density, "20.0"), Ok(20.0));
        let refused = run(thickness, "0.0").unwrap_err();
        assert!(refused.starts_with("thickness: 0 is out of range 0.001–0.1 m"), "{refused}");
        assert_eq!(run(iterations, "-38"), Err("iterations: -38 is out of range 1–200".into()));
        assert_eq!(run(substeps, "64"), Ok(64));
        assert_eq!(run(rate_hz, "500.0"), Err("rate_hz: 500 is out of range 10–240 Hz".into()));
        assert_eq!(
            run(gravity, "(0.0, -200.0, 0.0)"),
            Err("gravity: [0, -200, 0] is out of range length ≤ 100 m/s²".into())
        );
    }
}
