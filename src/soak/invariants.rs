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

/// The free vertex (w > 0) deepest inside a collider while clear of every other one, as (index, depth below the
/// surface). A vertex within `thickness` of two colliders is squeezed between them and cannot satisfy both, so it
/// is left out.
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
        if second > thickness && -first > deepest.map_or(0.0, |(_, depth)| depth) {
            deepest = Some((i, -first));
        }
    }
    deepest
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
}
