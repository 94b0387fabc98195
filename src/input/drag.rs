//! Dragging (Ten Minute Physics style, an attachment of §3.6 that follows the cursor): a left press over a
//! cloth grabs the particle nearest the cursor ray; while held it follows the cursor on the camera-facing
//! plane through its grab point with w = 0; on release its inverse mass comes back and it keeps the pointer's
//! velocity, so a flick throws the cloth. Shift+click pins or unpins the particle under the cursor.

use bevy::prelude::*;
use bevy::window::PrimaryWindow;

use super::DrapeCamera;
use super::picking::{cursor_ray, nearest_to_ray, ray_plane};
use crate::sim::cloth::{Attachments, Grabbed, Particles};
use crate::sim::constraints::attach::Attachment;

/// Picking radius around the cursor, logical pixels.
pub(crate) const PICK_RADIUS_PX: f32 = 24.0;
/// The held particle's target moves at most this fast, m/s: a cursor jump cannot fling the cloth absurdly.
pub(crate) const MAX_POINTER_SPEED: f32 = 40.0;
/// Weight of the newest frame in the pointer velocity estimate (exponential moving average).
const VELOCITY_SMOOTHING: f32 = 0.5;

/// The grab in progress.
#[derive(Resource, Clone, Copy, Debug, Default)]
pub(crate) struct DragState {
    /// The cloth and particle held.
    pub held: Option<(Entity, u32)>,
    /// The camera-facing plane the particle moves in.
    pub plane_point: Vec3,
    /// Normal of that plane (the camera's forward axis at the grab).
    pub plane_normal: Vec3,
    /// Smoothed velocity of the pointer's target, m/s.
    pub pointer_velocity: Vec3,
}

/// The pointer: ray origin, unit direction, the camera's forward axis, and the picking radius in radians.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Pointer {
    /// Origin of the cursor ray (the camera position), world space.
    pub origin: Vec3,
    /// Unit direction of the cursor ray.
    pub dir: Vec3,
    /// The camera's forward axis.
    pub forward: Vec3,
    /// Picking radius as an angle about the ray, radians.
    pub pick_angle: f32,
}

/// The pointer of the primary window's cursor in the drape camera's view, if the cursor is in the window.
pub(crate) fn pointer(
    windows: &Query<&Window, With<PrimaryWindow>>,
    cameras: &Query<(&Transform, &Projection), With<DrapeCamera>>,
) -> Option<Pointer> {
    let window = windows.single().ok()?;
    let cursor = window.cursor_position()?;
    let (transform, projection) = cameras.iter().next()?;
    let Projection::Perspective(perspective) = projection else {
        return None;
    };
    let (origin, dir) = cursor_ray(transform.translation, transform.rotation, perspective.fov, window.size(), cursor)?;
    let pick_angle = PICK_RADIUS_PX * perspective.fov / window.height().max(1.0);
    Some(Pointer { origin, dir, forward: transform.forward().as_vec3(), pick_angle })
}

/// The cloth and particle nearest the pointer ray, over every cloth.
fn pick(ptr: &Pointer, cloths: &Query<(Entity, &mut Particles, &mut Attachments)>) -> Option<(Entity, u32)> {
    cloths
        .iter()
        .filter_map(|(e, particles, _)| {
            nearest_to_ray(ptr.origin, ptr.dir, &particles.x, ptr.pick_angle).map(|(i, angle, _)| (e, i as u32, angle))
        })
        .min_by(|a, b| a.2.total_cmp(&b.2))
        .map(|(e, i, _)| (e, i))
}

/// On a left press (not over the panel): Shift pins/unpins the particle under the cursor, otherwise grabs it.
pub(crate) fn begin_grab_or_pin(
    mut commands: Commands,
    buttons: Res<ButtonInput<MouseButton>>,
    keys: Res<ButtonInput<KeyCode>>,
    windows: Query<&Window, With<PrimaryWindow>>,
    cameras: Query<(&Transform, &Projection), With<DrapeCamera>>,
    mut cloths: Query<(Entity, &mut Particles, &mut Attachments)>,
    mut drag: ResMut<DragState>,
) {
    if !buttons.just_pressed(MouseButton::Left) || drag.held.is_some() {
        return;
    }
    let Some(ptr) = pointer(&windows, &cameras) else {
        return;
    };
    let Some((entity, vertex)) = pick(&ptr, &cloths) else {
        return;
    };
    let Ok((_, mut particles, mut attachments)) = cloths.get_mut(entity) else {
        return;
    };
    let i = vertex as usize;
    if keys.any_pressed([KeyCode::ShiftLeft, KeyCode::ShiftRight]) {
        toggle_pin(&mut particles, &mut attachments, vertex);
        return;
    }
    let at = particles.x[i];
    particles.w[i] = 0.0;
    particles.v[i] = Vec3::ZERO;
    commands.entity(entity).insert(Grabbed { vertex, target: at });
    *drag = DragState {
        held: Some((entity, vertex)),
        plane_point: at,
        plane_normal: ptr.forward,
        pointer_velocity: Vec3::ZERO,
    };
}

/// Pins a free particle where it is, or frees a pinned one.
pub fn toggle_pin(particles: &mut Particles, attachments: &mut Attachments, vertex: u32) {
    let i = vertex as usize;
    if let Some(k) = attachments.0.iter().position(|a| a.vertex == vertex) {
        attachments.0.remove(k);
        particles.restore_inverse_mass(i, &attachments.0);
    } else {
        attachments.0.push(Attachment::pin(vertex, particles.x[i]));
        particles.w[i] = 0.0;
    }
}

/// While the button is held, moves the held particle's target to where the cursor ray meets the drag plane.
pub(crate) fn move_grab(
    buttons: Res<ButtonInput<MouseButton>>,
    windows: Query<&Window, With<PrimaryWindow>>,
    cameras: Query<(&Transform, &Projection), With<DrapeCamera>>,
    mut grabbed: Query<&mut Grabbed>,
    mut drag: ResMut<DragState>,
    time: Res<Time>,
) {
    let Some((entity, _)) = drag.held else {
        return;
    };
    if !buttons.pressed(MouseButton::Left) {
        return;
    }
    let (Some(ptr), Ok(mut grab)) = (pointer(&windows, &cameras), grabbed.get_mut(entity)) else {
        return;
    };
    let Some(hit) = ray_plane(ptr.origin, ptr.dir, drag.plane_point, drag.plane_normal) else {
        return;
    };
    let dt = time.delta_secs().max(1e-4);
    let target = grab.target + (hit - grab.target).clamp_length_max(MAX_POINTER_SPEED * dt);
    let velocity = (target - grab.target) / dt;
    drag.pointer_velocity = drag.pointer_velocity.lerp(velocity, VELOCITY_SMOOTHING);
    grab.target = target;
}

/// On release, frees the held particle: its inverse mass comes back and it keeps the pointer's velocity.
pub(crate) fn end_grab(
    mut commands: Commands,
    buttons: Res<ButtonInput<MouseButton>>,
    mut cloths: Query<(&mut Particles, &Attachments)>,
    mut drag: ResMut<DragState>,
) {
    let Some((entity, vertex)) = drag.held else {
        return;
    };
    if buttons.pressed(MouseButton::Left) {
        return;
    }
    if let Ok((mut particles, attachments)) = cloths.get_mut(entity) {
        let i = vertex as usize;
        particles.restore_inverse_mass(i, &attachments.0);
        if let Some(v) = particles.v.get_mut(i) {
            *v = drag.pointer_velocity;
        }
        commands.entity(entity).remove::<Grabbed>();
    }
    drag.held = None;
}
