//! Throwing a ball (§4.2): key B throws one from the camera toward the cursor (or straight ahead when the
//! cursor is outside the view), with the mass, radius and speed set in the panel.

use bevy::prelude::*;
use bevy::window::PrimaryWindow;

use super::DrapeCamera;
use super::drag::pointer;
use crate::scene::desc::ThrowDesc;
use crate::scene::throws::ThrowQueue;
use crate::sim::SimClock;
use crate::sim::knobs::Knob;

/// The mass, radius and speed of the balls the user throws, set in the panel. Not part of a scene.
#[derive(Resource, Clone, Copy, Debug, PartialEq)]
pub struct ThrowSettings {
    /// [`BALL_MASS`].
    pub ball_mass: f32,
    /// [`BALL_RADIUS`].
    pub ball_radius: f32,
    /// [`BALL_SPEED`].
    pub ball_speed: f32,
}

/// Mass of a thrown ball.
pub const BALL_MASS: Knob = Knob {
    name: "ball_mass",
    label: "ball mass",
    unit: "kg",
    min: 0.05,
    max: 50.0,
    default: 1.5,
    section: "§4.2",
    doc: "Mass of a ball the user throws (key B); cloth and ball exchange momentum both ways.",
};

/// Radius of a thrown ball.
pub const BALL_RADIUS: Knob = Knob {
    name: "ball_radius",
    label: "ball radius",
    unit: "m",
    min: 0.03,
    max: 0.5,
    default: 0.12,
    section: "§4.2",
    doc: "Radius of a ball the user throws.",
};

/// Launch speed of a thrown ball.
pub const BALL_SPEED: Knob = Knob {
    name: "ball_speed",
    label: "ball speed",
    unit: "m/s",
    min: 1.0,
    max: 40.0,
    default: 14.0,
    section: "§4.2",
    doc: "Launch speed of a ball the user throws.",
};

impl ThrowSettings {
    /// The knobs, in the order of the fields.
    pub const KNOBS: &[Knob] = &[BALL_MASS, BALL_RADIUS, BALL_SPEED];

    /// A copy with every field forced into its knob's range (a non-finite value becomes the default).
    pub fn sanitized(&self) -> Self {
        Self {
            ball_mass: BALL_MASS.clamp(self.ball_mass),
            ball_radius: BALL_RADIUS.clamp(self.ball_radius),
            ball_speed: BALL_SPEED.clamp(self.ball_speed),
        }
    }
}

impl Default for ThrowSettings {
    fn default() -> Self {
        Self { ball_mass: BALL_MASS.default, ball_radius: BALL_RADIUS.default, ball_speed: BALL_SPEED.default }
    }
}

/// The throw from a camera at `origin` along unit `dir`: the ball starts half a metre in front of the camera.
pub(crate) fn throw_along(origin: Vec3, dir: Vec3, settings: &ThrowSettings, now: f64) -> ThrowDesc {
    let s = settings.sanitized();
    ThrowDesc {
        time: now as f32,
        from: origin + dir * 0.5,
        velocity: dir * s.ball_speed,
        radius: s.ball_radius,
        mass: s.ball_mass,
    }
}

/// Key B (or the panel's button): queues a ball toward the cursor (the button: straight ahead) for the next
/// fixed step.
pub(crate) fn throw_on_key(
    keys: Res<ButtonInput<KeyCode>>,
    windows: Query<&Window, With<PrimaryWindow>>,
    cameras: Query<(&Transform, &Projection), With<DrapeCamera>>,
    settings: Res<ThrowSettings>,
    clock: Res<SimClock>,
    mut queue: ResMut<ThrowQueue>,
) {
    let button = std::mem::take(&mut queue.from_camera);
    if !keys.just_pressed(KeyCode::KeyB) && !button {
        return;
    }
    let toward_cursor = if button { None } else { pointer(&windows, &cameras) };
    let aim = toward_cursor
        .map(|p| (p.origin, p.dir))
        .or_else(|| cameras.iter().next().map(|(t, _)| (t.translation, t.forward().as_vec3())));
    if let Some((origin, dir)) = aim {
        queue.pending.push(throw_along(origin, dir, &settings, clock.time));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn throws_use_the_settings_clamped_into_their_knobs() {
        let wild = ThrowSettings { ball_mass: f32::NAN, ball_radius: 9.0, ball_speed: 0.0 };
        let t = throw_along(Vec3::ZERO, Vec3::NEG_Z, &wild, 2.0);
        assert_eq!((t.mass, t.radius), (BALL_MASS.default, BALL_RADIUS.max));
        assert_eq!(
            (t.velocity, t.from, t.time),
            (Vec3::new(0.0, 0.0, -BALL_SPEED.min), Vec3::new(0.0, 0.0, -0.5), 2.0)
        );
        for k in ThrowSettings::KNOBS {
            assert!(k.range().contains(&k.default), "{}", k.name);
        }
    }
}
