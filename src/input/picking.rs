//! Picking math on plain rays, independent of windows and renderers: the ray under the cursor of a perspective
//! camera, the particle nearest to a ray within an angular radius, and where a ray meets a plane.

use bevy::math::{Quat, Vec2, Vec3};

/// The world-space ray (origin, unit direction) through `cursor` (logical pixels, origin top-left) of a
/// perspective camera at `position` with `rotation`, vertical field of view `fov_y` (radians), looking down
/// its −Z axis, rendering a `viewport` of logical size.
pub(crate) fn cursor_ray(
    position: Vec3,
    rotation: Quat,
    fov_y: f32,
    viewport: Vec2,
    cursor: Vec2,
) -> Option<(Vec3, Vec3)> {
    if !(viewport.x > 0.0 && viewport.y > 0.0) {
        return None;
    }
    let ndc = Vec2::new(2.0 * cursor.x / viewport.x - 1.0, 1.0 - 2.0 * cursor.y / viewport.y);
    let half = (fov_y * 0.5).tan();
    let local = Vec3::new(ndc.x * half * viewport.x / viewport.y, ndc.y * half, -1.0).normalize();
    let dir = rotation * local;
    dir.is_finite().then_some((position, dir))
}

/// The cursor position (logical pixels, origin top-left) at which `point` appears for the camera of
/// `cursor_ray`, or `None` if it is behind the camera. The inverse of `cursor_ray`.
pub fn cursor_of(position: Vec3, rotation: Quat, fov_y: f32, viewport: Vec2, point: Vec3) -> Option<Vec2> {
    let local = rotation.inverse() * (point - position);
    if local.z >= 0.0 || viewport.y <= 0.0 {
        return None;
    }
    let half = (fov_y * 0.5).tan();
    let ndc = Vec2::new(local.x / (-local.z * half * viewport.x / viewport.y), local.y / (-local.z * half));
    Some(Vec2::new((ndc.x + 1.0) * 0.5 * viewport.x, (1.0 - ndc.y) * 0.5 * viewport.y))
}

/// The index of the point nearest to the ray (smallest angle seen from the origin) among those in front of
/// it within `max_angle` radians, with its depth along the ray.
pub(crate) fn nearest_to_ray(origin: Vec3, dir: Vec3, points: &[Vec3], max_angle: f32) -> Option<(usize, f32, f32)> {
    let mut best: Option<(usize, f32, f32)> = None;
    for (i, x) in points.iter().enumerate() {
        let d = *x - origin;
        let depth = d.dot(dir);
        if depth <= 1e-3 {
            continue;
        }
        let angle = (d - dir * depth).length() / depth;
        if angle <= max_angle && best.is_none_or(|(_, a, _)| angle < a) {
            best = Some((i, angle, depth));
        }
    }
    best
}

/// Where the ray meets the plane through `point` with `normal`, if in front of the origin.
pub(crate) fn ray_plane(origin: Vec3, dir: Vec3, point: Vec3, normal: Vec3) -> Option<Vec3> {
    let denom = dir.dot(normal);
    if denom.abs() < 1e-6 {
        return None;
    }
    let t = (point - origin).dot(normal) / denom;
    (t > 0.0).then(|| origin + dir * t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn centre_of_the_viewport_looks_forward_and_corners_span_the_fov() {
        let rot = Quat::from_rotation_y(0.3);
        let (_, dir) = cursor_ray(Vec3::ZERO, rot, 1.0, Vec2::new(800.0, 600.0), Vec2::new(400.0, 300.0)).unwrap();
        assert!((dir - rot * Vec3::NEG_Z).length() < 1e-6);
        let (_, top) =
            cursor_ray(Vec3::ZERO, Quat::IDENTITY, 1.0, Vec2::new(800.0, 600.0), Vec2::new(400.0, 0.0)).unwrap();
        assert!((top.angle_between(Vec3::NEG_Z) - 0.5).abs() < 1e-5);
    }

    #[test]
    fn cursor_of_inverts_cursor_ray() {
        let (pos, rot, fov, vp) = (
            Vec3::new(1.0, 2.0, 3.0),
            Quat::from_euler(bevy::math::EulerRot::YXZ, 0.4, -0.2, 0.0),
            0.8,
            Vec2::new(1280.0, 720.0),
        );
        let cursor = Vec2::new(900.0, 200.0);
        let (o, d) = cursor_ray(pos, rot, fov, vp, cursor).unwrap();
        let back = cursor_of(pos, rot, fov, vp, o + d * 7.0).unwrap();
        assert!((back - cursor).length() < 1e-2, "{back}");
    }

    #[test]
    fn picks_the_point_nearest_the_ray_and_nothing_outside_the_radius() {
        let pts = [Vec3::new(0.3, 0.0, -5.0), Vec3::new(0.05, 0.0, -5.0), Vec3::new(0.0, 0.0, 5.0)];
        let (i, _, depth) = nearest_to_ray(Vec3::ZERO, Vec3::NEG_Z, &pts, 0.05).unwrap();
        assert_eq!(i, 1);
        assert!((depth - 5.0).abs() < 1e-6);
        assert!(nearest_to_ray(Vec3::ZERO, Vec3::X, &pts, 0.05).is_none());
    }

    #[test]
    fn ray_meets_plane() {
        let hit =
            ray_plane(Vec3::new(0.0, 1.0, 0.0), Vec3::new(1.0, -1.0, 0.0).normalize(), Vec3::ZERO, Vec3::Y).unwrap();
        assert!((hit - Vec3::X).length() < 1e-6);
        assert!(ray_plane(Vec3::Y, Vec3::Y, Vec3::ZERO, Vec3::Y).is_none());
    }
}
