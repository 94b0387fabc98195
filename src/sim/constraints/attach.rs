//! Attachments (§3.6): a vertex follows a static or kinematic target; its inverse mass is 0 so no other
//! constraint moves it. The target is written into the prediction p in line (7), so line (13) gives the
//! vertex exactly the target's velocity.

use bevy::math::{Quat, Vec3};
use serde::{Deserialize, Serialize};

/// How an attachment target moves over simulated time t (seconds).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub enum Motion {
    /// A pin: the target stays at the anchor.
    #[default]
    Fixed,
    /// anchor + axis · amplitude · sin(2π · frequency · t).
    Oscillate {
        /// Direction (normalised when used; zero stands still).
        axis: Vec3,
        /// Amplitude, metres.
        amplitude: f32,
        /// Frequency, Hz.
        frequency: f32,
    },
    /// The anchor rotated about the line through `center` along `axis` at `angular_speed` rad/s.
    Rotate {
        /// A point on the axis, world space.
        center: Vec3,
        /// Axis direction (normalised when used; +Y if zero).
        axis: Vec3,
        /// Angular speed, rad/s.
        angular_speed: f32,
    },
    /// anchor + velocity · t.
    Linear {
        /// Velocity, m/s.
        velocity: Vec3,
    },
}

impl Motion {
    /// Where a point anchored at `anchor` is at time `t`.
    pub fn target(&self, anchor: Vec3, t: f64) -> Vec3 {
        match *self {
            Motion::Fixed => anchor,
            Motion::Oscillate { axis, amplitude, frequency } => {
                anchor + axis.normalize_or_zero() * amplitude * periodic_phase(frequency, t).sin()
            }
            Motion::Rotate { center, axis, angular_speed } => {
                let axis = axis.normalize_or(Vec3::Y);
                center + Quat::from_axis_angle(axis, turned(angular_speed, t)) * (anchor - center)
            }
            Motion::Linear { velocity } => anchor + velocity * t as f32,
        }
    }

    /// How far a body moving this way has turned by time `t`: `Rotate`'s rotation, none for the others.
    pub fn turn(&self, t: f64) -> Quat {
        match *self {
            Motion::Rotate { axis, angular_speed, .. } => {
                Quat::from_axis_angle(axis.normalize_or(Vec3::Y), turned(angular_speed, t))
            }
            _ => Quat::IDENTITY,
        }
    }

    /// The fastest a point anchored at `anchor` ever moves, m/s.
    pub fn max_speed(&self, anchor: Vec3) -> f32 {
        match *self {
            Motion::Fixed => 0.0,
            Motion::Oscillate { axis, amplitude, frequency } => {
                axis.normalize_or_zero().length() * (std::f32::consts::TAU * frequency * amplitude).abs()
            }
            Motion::Rotate { center, axis, angular_speed } => {
                let arm = anchor - center;
                (arm - arm.project_onto(axis.normalize_or(Vec3::Y))).length() * angular_speed.abs()
            }
            Motion::Linear { velocity } => velocity.length(),
        }
    }
}

/// One attached vertex.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Attachment {
    /// Index of the attached vertex.
    pub vertex: u32,
    /// World position of the target at t = 0.
    pub anchor: Vec3,
    /// How the target moves from `anchor`.
    pub motion: Motion,
}

impl Attachment {
    /// A pin: `vertex` held at `anchor`.
    pub fn pin(vertex: u32, anchor: Vec3) -> Self {
        Self { vertex, anchor, motion: Motion::Fixed }
    }
}

/// The phase 2π·f·t of a motion of `frequency` Hz at time `t`, reduced to one turn in double precision so it
/// stays exact however long the scene runs.
pub(crate) fn periodic_phase(frequency: f32, t: f64) -> f32 {
    (std::f64::consts::TAU * f64::from(frequency) * t).rem_euclid(std::f64::consts::TAU) as f32
}

/// The angle in radians turned at `angular_speed` rad/s by time `t`, reduced to one turn like `periodic_phase`.
pub fn turned(angular_speed: f32, t: f64) -> f32 {
    (f64::from(angular_speed) * t).rem_euclid(std::f64::consts::TAU) as f32
}

/// Writes each attachment's target at time `t` into the predictions `p` (§3.6).
pub(crate) fn apply_attachments(p: &mut [Vec3], attachments: &[Attachment], t: f64) {
    for a in attachments {
        if let Some(slot) = p.get_mut(a.vertex as usize) {
            *slot = a.motion.target(a.anchor, t);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotating_target_keeps_its_radius() {
        let m = Motion::Rotate { center: Vec3::ZERO, axis: Vec3::Y, angular_speed: 2.0 };
        let t = m.target(Vec3::new(1.5, 0.3, 0.0), 0.7);
        assert!((Vec3::new(t.x, 0.0, t.z).length() - 1.5).abs() < 1e-5);
        assert!((t.y - 0.3).abs() < 1e-6);
    }

    #[test]
    fn max_speed_bounds_every_motion() {
        let anchor = Vec3::new(0.5, 1.0, -0.25);
        let motions = [
            Motion::Oscillate { axis: Vec3::new(1.0, 1.0, 0.0), amplitude: 0.3, frequency: 1.5 },
            Motion::Rotate { center: Vec3::Y, axis: Vec3::new(0.0, 2.0, 1.0), angular_speed: -3.0 },
            Motion::Linear { velocity: Vec3::new(0.0, 2.0, 1.0) },
        ];
        for m in motions {
            let dt = 1e-4f64;
            let fastest = (0..20_000)
                .map(|k| {
                    m.target(anchor, f64::from(k + 1) * dt).distance(m.target(anchor, f64::from(k) * dt)) / dt as f32
                })
                .fold(0.0, f32::max);
            assert!((fastest - m.max_speed(anchor)).abs() < 1e-2 * m.max_speed(anchor), "{m:?}: {fastest}");
        }
        assert_eq!(Motion::Fixed.max_speed(anchor), 0.0);
    }

    #[test]
    fn attachment_sets_prediction_to_target() {
        let mut p = vec![Vec3::ZERO; 3];
        let osc = Motion::Oscillate { axis: Vec3::X, amplitude: 2.0, frequency: 0.25 };
        apply_attachments(&mut p, &[Attachment { vertex: 1, anchor: Vec3::Y, motion: osc }], 1.0);
        assert!((p[1] - Vec3::new(2.0, 1.0, 0.0)).length() < 1e-5);
        assert_eq!(p[0], Vec3::ZERO);
    }
}
