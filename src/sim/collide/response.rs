//! Line (16), velocityUpdate: friction and restitution change the velocities of the vertices that had a
//! contact in this step (§3.4).
//!
//! Sliding friction follows Coulomb's law at the velocity level: the tangential velocity drops by μ times the
//! normal velocity change the contact caused (its total push-out in the projection divided by Δt, so the
//! normal force of cloth tension wrapped around a collider counts, not just the vertex's own weight), and
//! stops at zero. Static friction already held the vertex in the projection (`contacts.rs`): velocity-only
//! friction lets resting cloth creep downhill by g_t·Δt² every step. Restitution reflects the normal velocity by e when the vertex approached faster than `rest_speed`
//! (slower contacts are resting and get no bounce).

use bevy::math::Vec3;

use super::contact::{Contact, ContactKind};

/// Applies each contact's friction μ and restitution e to the velocities `v` of its vertex after a step of
/// length `dt`, relative to the collider's surface velocity there; the change is kept in
/// [`Contact::response`].
pub fn apply_friction_restitution(v: &mut [Vec3], contacts: &mut [Contact], rest_speed: f32, dt: f32) {
    for c in contacts {
        let i = c.vertex as usize;
        if c.kind == ContactKind::Attached || c.pushed <= 0.0 || i >= v.len() {
            continue; // the contact did not push in this step
        }
        let n = c.normal;
        let surface = c.surface_shift / dt;
        let relative = v[i] - surface;
        let pushed = c.pushed / dt;
        let vn = relative.dot(n);
        let vt = relative - n * vn;
        let vt_len = vt.length();
        let vt = if vt_len <= c.friction * pushed { Vec3::ZERO } else { vt * (1.0 - c.friction * pushed / vt_len) };
        let vn = if c.approach_speed < -rest_speed { vn.max(-c.restitution * c.approach_speed) } else { vn };
        let next = surface + vt + n * vn;
        c.response += next - v[i];
        v[i] = next;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::collide::swept::SurfaceHit;

    /// A contact with a static ground of friction μ and restitution e that pushed the vertex out by `pushed`
    /// metres (a normal velocity change of `pushed` m/s at Δt = 1 s).
    fn contact(approach_speed: f32, pushed: f32, friction: f32, restitution: f32) -> Contact {
        let hit = SurfaceHit { point: Vec3::ZERO, normal: Vec3::Y, surface_shift: Vec3::ZERO };
        Contact { pushed, ..Contact::surface(0, 0, hit, approach_speed, (friction, restitution)) }
    }

    #[test]
    fn kinetic_friction_removes_mu_times_normal_change() {
        let mut v = [Vec3::new(3.0, 0.0, 0.0)];
        let mut contacts = [contact(-2.0, 2.0, 0.5, 0.0)];
        apply_friction_restitution(&mut v, &mut contacts, 10.0, 1.0);
        assert!((v[0].x - 2.0).abs() < 1e-6, "{}", v[0]);
        assert!((contacts[0].response - Vec3::new(-1.0, 0.0, 0.0)).length() < 1e-6);
        let mut v = [Vec3::new(0.5, 0.0, 0.0)];
        apply_friction_restitution(&mut v, &mut [contact(-2.0, 2.0, 0.5, 0.0)], 10.0, 1.0);
        assert_eq!(v[0], Vec3::ZERO, "friction stops the vertex, never reverses it");
    }

    #[test]
    fn restitution_reflects_fast_impacts_only() {
        let mut v = [Vec3::ZERO];
        apply_friction_restitution(&mut v, &mut [contact(-4.0, 4.0, 0.0, 0.5)], 0.1, 1.0);
        assert!((v[0].y - 2.0).abs() < 1e-6);
        let mut v = [Vec3::ZERO];
        apply_friction_restitution(&mut v, &mut [contact(-0.05, 0.05, 0.0, 0.5)], 0.1, 1.0);
        assert_eq!(v[0], Vec3::ZERO);
    }

    #[test]
    fn friction_pulls_toward_the_surface_velocity() {
        // the surface moves +x at 1 m/s; a vertex at rest is dragged up to that speed, not beyond
        let hit = SurfaceHit { point: Vec3::ZERO, normal: Vec3::Y, surface_shift: Vec3::new(1.0, 0.0, 0.0) };
        let mut contacts = [Contact { pushed: 5.0, ..Contact::surface(0, 0, hit, 0.0, (1.0, 0.0)) }];
        let mut v = [Vec3::ZERO];
        apply_friction_restitution(&mut v, &mut contacts, 0.1, 1.0);
        assert!((v[0] - Vec3::X).length() < 1e-6, "{}", v[0]);
    }
}
