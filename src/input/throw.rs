//! Throwing a ball (§4.2): key B throws one from the camera toward the cursor (or straight ahead when the
//! cursor is outside the view), with the mass, radius and speed set in the panel.

use bevy::prelude::*;
use bevy::window::PrimaryWindow;

use super::DrapeCamera;
use super::drag::pointer;
use crate::scene::desc::ThrowDesc;
use crate::scene::throws::ThrowQueue;
use crate::sim::{SimClock, SimParams};

/// The throw from a camera at `origin` along unit `dir`: the ball starts half a metre in front of the camera.
pub fn throw_along(origin: Vec3, dir: Vec3, params: &SimParams, now: f32) -> ThrowDesc {
    let p = params.sanitized();
    ThrowDesc {
        time: now,
        from: origin + dir * 0.5,
        velocity: dir * p.ball_speed,
        radius: p.ball_radius,
        mass: p.ball_mass,
    }
}

/// Key B (or the panel's button): queues a ball toward the cursor (the button: straight ahead) for the next
/// fixed step.
pub fn throw_on_key(
    keys: Res<ButtonInput<KeyCode>>,
    windows: Query<&Window, With<PrimaryWindow>>,
    cameras: Query<(&Transform, &Projection), With<DrapeCamera>>,
    params: Res<SimParams>,
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
        queue.pending.push(throw_along(origin, dir, &params, clock.time));
    }
}
