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

use crate::sim::cloth::Contact;

/// Applies friction μ and restitution e to the velocities `v` of contacted vertices after a step of length
/// `dt`.
pub fn apply_friction_restitution(
    v: &mut [Vec3],
    contacts: &[Contact],
    friction: f32,
    restitution: f32,
    rest_speed: f32,
    dt: f32,
) {
    for c in contacts {
        let i = c.vertex as usize;
        let n = c.normal;
        if c.pushed <= 0.0 {
            continue; // the contact did not act in this step
        }
        let pushed = c.pushed / dt;
        let vn = v[i].dot(n);
        let vt = v[i] - n * vn;
        let vt_len = vt.length();
        let vt = if vt_len <= friction * pushed { Vec3::ZERO } else { vt * (1.0 - friction * pushed / vt_len) };
        let vn = if c.approach_speed < -rest_speed { vn.max(-restitution * c.approach_speed) } else { vn };
        v[i] = vt + n * vn;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A contact that pushed the vertex out by `pushed` metres (a normal velocity change of `pushed` m/s at
    /// Δt = 1 s).
    fn contact(approach_speed: f32, pushed: f32) -> Contact {
        Contact { vertex: 0, point: Vec3::ZERO, normal: Vec3::Y, approach_speed, pushed }
    }

    #[test]
    fn kinetic_friction_removes_mu_times_normal_change() {
        let mut v = [Vec3::new(3.0, 0.0, 0.0)];
        apply_friction_restitution(&mut v, &[contact(-2.0, 2.0)], 0.5, 0.0, 10.0, 1.0);
        assert!((v[0].x - 2.0).abs() < 1e-6, "{}", v[0]);
        let mut v = [Vec3::new(0.5, 0.0, 0.0)];
        apply_friction_restitution(&mut v, &[contact(-2.0, 2.0)], 0.5, 0.0, 10.0, 1.0);
        assert_eq!(v[0], Vec3::ZERO, "friction stops the vertex, never reverses it");
    }

    #[test]
    fn restitution_reflects_fast_impacts_only() {
        let mut v = [Vec3::ZERO];
        apply_friction_restitution(&mut v, &[contact(-4.0, 4.0)], 0.0, 0.5, 0.1, 1.0);
        assert!((v[0].y - 2.0).abs() < 1e-6);
        let mut v = [Vec3::ZERO];
        apply_friction_restitution(&mut v, &[contact(-0.05, 0.05)], 0.0, 0.5, 0.1, 1.0);
        assert_eq!(v[0], Vec3::ZERO);
    }
}
