//! The facts the soak checks after every fixed step, as pure functions over the cloth's arrays. Why each must
//! hold is in `docs/reliability.md`.

use bevy::math::Vec3;
use serde::Serialize;

use crate::sim::collide::shapes::Shape;

/// One broken invariant.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Violation {
    /// Which invariant: `panic`, `finite`, `speed`, `stretch`, `penetration` or `cost`.
    pub invariant: &'static str,
    /// The fixed step after which it was seen (0 = while building).
    pub frame: u32,
    /// What was measured against what was allowed.
    pub detail: String,
}

/// The invariants every scene holds today; a soak that breaks one of them fails. The others (`penetration`,
/// `stretch`, `cost`) are the goal, with the scenes that still break them listed in docs/reliability.md.
pub const GUARANTEED: [&str; 3] = ["panic", "finite", "speed"];

/// Stretch l/l0 − 1 a stiff, untorn, held-still cloth may reach away from colliders (see docs/reliability.md).
pub const STRETCH_BOUND: f32 = 4.0;

/// Stretch stiffness from which a cloth counts as stiff for [`STRETCH_BOUND`].
pub const STIFF: f32 = 0.3;

/// The vertex that moved furthest between `before` and `after` (vertices added since, by tearing, are skipped):
/// (index, distance).
pub fn furthest_move(before: &[Vec3], after: &[Vec3]) -> Option<(usize, f32)> {
    before.iter().zip(after).map(|(a, b)| a.distance(*b)).enumerate().max_by(|a, b| a.1.total_cmp(&b.1))
}

/// How much deeper than its thickness a vertex may lie in a collider, and how close to a second collider it
/// counts as squeezed between them, metres: floating-point room around the exact h a contact keeps.
pub const DEPTH_SLACK: f32 = 1e-3;

/// The free vertex (w > 0) deepest inside a collider while clear of every other one, as (index, depth below the
/// surface). A vertex within `thickness` + [`DEPTH_SLACK`] of two colliders is squeezed between them and cannot
/// satisfy both (pushed out of one it sits at h from it), so it is left out.
pub fn deepest_unsqueezed(x: &[Vec3], w: &[f32], shapes: &[Shape], thickness: f32) -> Option<(usize, f32)> {
    let mut deepest: Option<(usize, f32)> = None;
    for (i, (&q, &w)) in x.iter().zip(w).enumerate() {
        if w == 0.0 {
            continue;
        }
        let (mut first, mut second) = (f32::INFINITY, f32::INFINITY);
        for shape in shapes {
            let d = shape.signed_distance(q);
            if d < first {
                (first, second) = (d, first);
            } else if d < second {
                second = d;
            }
        }
        if second > thickness + DEPTH_SLACK && -first > deepest.map_or(0.0, |(_, depth)| depth) {
            deepest = Some((i, -first));
        }
    }
    deepest
}

/// How far the furthest vertex hangs from the attached ones at rest: max over the vertices of the distance to
/// the nearest of `attached` (0 with none), metres.
pub fn hanging_length(rest: &[Vec3], attached: &[u32]) -> f32 {
    let anchors: Vec<Vec3> = attached.iter().filter_map(|&a| rest.get(a as usize).copied()).collect();
    rest.iter()
        .map(|q| anchors.iter().map(|a| a.distance_squared(*q)).fold(f32::INFINITY, f32::min))
        .filter(|d| d.is_finite())
        .fold(0.0, f32::max)
        .sqrt()
}

/// What decides whether a step resolves a cloth's stretch: the stretch bound holds a stiff cloth only where
/// the paper's solver can hold it at that step size (docs/reliability.md).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Resolution {
    /// How far the cloth hangs below its attachments at rest ([`hanging_length`]), metres.
    pub hang: f32,
    /// How far its fastest vertex moved per substep in this step, metres.
    pub travel: f32,
    /// |g|, m/s².
    pub gravity: f32,
    /// The substep Δt, seconds.
    pub dt: f32,
    /// A balloon whose pressure asks for more than its rest volume: stretched on purpose (§4.4).
    pub inflated: bool,
}

impl Resolution {
    /// Whether a cloth of stretch stiffness `k` with these rest edge lengths is resolved: not inflated, its
    /// fastest vertex travels at most one mean rest edge per substep (a collider stops a vertex that moved
    /// further, and the constraints cannot pass that on through the cloth within the substep), and PBD's own
    /// sag ([`pbd_sag`]) is at most 1.
    pub fn resolves(&self, k: f32, rest: &[f32]) -> bool {
        let l0 = rest.iter().sum::<f32>() / rest.len().max(1) as f32;
        !self.inflated && self.travel <= l0 && pbd_sag(self.hang, self.gravity, self.dt, k, l0) <= 1.0
    }
}

/// The strain PBD itself gives a cloth hanging `hang` metres below its attachments, with edges of rest length
/// `l0`, stiffness `k` (§3.3) and substep `dt` under gravity `g`: a column of hang / l0 edges whose top edge, like
/// a spring of stiffness k · m / Δt², carries the weight of every particle below it, hang · g · Δt² / (k · l0²).
/// Above 1 the paper's stiffness is soft at that time step whatever k is (XPBD's compliance is not).
pub fn pbd_sag(hang: f32, g: f32, dt: f32, k: f32, l0: f32) -> f32 {
    hang * g * dt * dt / (k.max(1e-6) * l0 * l0).max(1e-12)
}

/// max |l/l0 − 1| over the edges whose two vertices are both further than `margin` from every collider.
pub fn stretch_away_from(x: &[Vec3], edges: &[[u32; 2]], rest: &[f32], shapes: &[Shape], margin: f32) -> f32 {
    let clear = |i: u32| shapes.iter().all(|s| s.signed_distance(x[i as usize]) > margin);
    edges
        .iter()
        .zip(rest)
        .filter(|([a, b], _)| clear(*a) && clear(*b))
        .map(|([a, b], l0)| (x[*a as usize].distance(x[*b as usize]) / l0 - 1.0).abs())
        .fold(0.0, f32::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn furthest_move_finds_the_jump_and_skips_new_vertices() {
        let before = [Vec3::ZERO, Vec3::X];
        let after = [Vec3::new(0.0, 0.1, 0.0), Vec3::new(1.0, 0.0, 5.0), Vec3::splat(100.0)];
        assert_eq!(furthest_move(&before, &after), Some((1, 5.0)));
    }

    #[test]
    fn a_vertex_inside_one_collider_counts_and_a_squeezed_one_does_not() {
        let ground = Shape::Plane { point: Vec3::ZERO, normal: Vec3::Y };
        let ball = Shape::Sphere { center: Vec3::new(0.0, 0.45, 0.0), radius: 0.5 };
        let x = [Vec3::new(3.0, -0.2, 0.0), Vec3::new(0.0, -0.01, 0.0), Vec3::new(0.0, 2.0, 0.0)];
        let deepest = deepest_unsqueezed(&x, &[1.0; 3], &[ground, ball], 0.01);
        assert_eq!(deepest.map(|(i, d)| (i, (d * 1e3).round())), Some((0, 200.0)));
        assert_eq!(deepest_unsqueezed(&x, &[0.0, 1.0, 1.0], &[ground, ball], 0.01).map(|(i, _)| i), None);
    }

    #[test]
    fn stretch_is_measured_away_from_colliders_only() {
        let ground = Shape::Plane { point: Vec3::ZERO, normal: Vec3::Y };
        let x =
            [Vec3::new(0.0, 1.0, 0.0), Vec3::new(3.0, 1.0, 0.0), Vec3::new(0.0, 0.0, 0.0), Vec3::new(5.0, 0.0, 0.0)];
        let (edges, rest) = ([[0, 1], [2, 3]], [1.0, 1.0]);
        assert_eq!(stretch_away_from(&x, &edges, &rest, &[ground], 0.1), 2.0);
        assert_eq!(stretch_away_from(&x, &edges, &rest, &[], 0.1), 4.0);
    }

    #[test]
    fn the_hang_is_the_furthest_distance_to_the_nearest_attachment() {
        let rest: Vec<Vec3> = (0..5).map(|i| Vec3::new(0.0, -(i as f32), 0.0)).collect();
        assert_eq!(hanging_length(&rest, &[0]), 4.0);
        assert_eq!(hanging_length(&rest, &[0, 4]), 2.0);
        assert_eq!(hanging_length(&rest, &[]), 0.0, "free cloth: nothing hangs");
        assert_eq!(hanging_length(&rest, &[9]), 0.0, "an index past the end is no attachment");
    }

    #[test]
    fn a_step_resolves_a_short_fine_sheet_at_60_hz_but_not_at_10_hz() {
        // 1 m hanging, 5 cm edges, k = 1: sag 1 · 9.81 · Δt² / 0.0025
        let at = |hz: f32| Resolution { hang: 1.0, travel: 0.0, gravity: 9.81, dt: 1.0 / hz, inflated: false };
        let rest = [0.05; 4];
        assert!((pbd_sag(1.0, 9.81, 1.0 / 60.0, 1.0, 0.05) - 1.09).abs() < 0.01);
        assert!(at(120.0).resolves(1.0, &rest) && !at(60.0).resolves(1.0, &rest) && !at(10.0).resolves(1.0, &rest));
        assert!(at(240.0).resolves(0.1, &rest) && !at(240.0).resolves(0.05, &rest), "sag grows as 1/k");
        assert!(!Resolution { travel: 0.06, ..at(240.0) }.resolves(1.0, &rest), "faster than an edge per substep");
        assert!(!Resolution { inflated: true, ..at(240.0) }.resolves(1.0, &rest));
    }
}
