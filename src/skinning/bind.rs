//! Cloth bound to a skinned body, the kernels: each cloth vertex takes the skin of the body point nearest to it
//! in the bind pose ([`bind_vertices`]), so it follows the body as that point does ([`skin_targets`]); the
//! attached ones sit on their targets, and each free one is held within a distance of its target and outside a
//! backstop sphere behind it ([`limit_to_skin`]), Jolt's and PhysX's skinned constraints. They are position
//! constraints of the paper's projection (§3.3, lines (9)–(11)): they move p only, and line (13) turns the move
//! into velocity.

use bevy::math::{Affine3A, Vec3};

use super::rig::{Influences, SkinnedBody};

/// A cloth vertex bound to the body.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SkinnedVertex {
    /// Where the vertex is in the bind pose, model space.
    pub bind: Vec3,
    /// The body's outward normal at the body point nearest to it, bind pose, model space.
    pub normal: Vec3,
    /// The skin of that body point.
    pub influences: Influences,
    /// How far outside the body the vertex is in the bind pose, metres (negative inside).
    pub gap: f32,
}

/// How far a free vertex may stray from its skinned target.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SkinLimits {
    /// Largest distance from the target, metres.
    pub max_distance: f32,
    /// The backstop: the vertex stays outside a sphere of this radius, metres, whose surface lies behind the
    /// target along the body's normal, `margin` short of the body's surface.
    pub backstop_radius: f32,
    /// How far short of the body's surface the backstop stops, metres: the cloth's half thickness.
    pub margin: f32,
}

/// Binds each of `points` (model space, bind pose) to the body point nearest to it: the skin and normal there
/// interpolated from the triangle's vertices.
pub fn bind_vertices(body: &SkinnedBody, points: &[Vec3]) -> Vec<SkinnedVertex> {
    points
        .iter()
        .map(|&point| {
            let mut best = (f32::INFINITY, 0, Vec3::ZERO, [1.0, 0.0, 0.0]);
            for (k, t) in body.triangles.iter().enumerate() {
                let [a, b, c] = t.map(|i| body.positions[i as usize]);
                let (nearest, weights) = closest_on_triangle(point, a, b, c);
                let d = nearest.distance_squared(point);
                if d < best.0 {
                    best = (d, k, nearest, weights);
                }
            }
            let (_, k, nearest, weights) = best;
            let corners = body.triangles.get(k).copied().unwrap_or_default().map(|i| i as usize);
            let normal = corners
                .iter()
                .zip(weights)
                .map(|(&i, w)| w * body.normals.get(i).copied().unwrap_or(Vec3::ZERO))
                .sum::<Vec3>()
                .normalize_or(Vec3::Y);
            let influences =
                Influences::mix(corners.iter().zip(weights).filter_map(|(&i, w)| Some((*body.influences.get(i)?, w))));
            let side = (point - nearest).dot(normal).signum();
            SkinnedVertex { bind: point, normal, influences, gap: side * point.distance(nearest) }
        })
        .collect()
}

/// The point of triangle abc nearest to `p` and its barycentric weights (Ericson, Real-Time Collision
/// Detection, §5.1.5).
pub fn closest_on_triangle(p: Vec3, a: Vec3, b: Vec3, c: Vec3) -> (Vec3, [f32; 3]) {
    let (ab, ac, ap) = (b - a, c - a, p - a);
    let (d1, d2) = (ab.dot(ap), ac.dot(ap));
    if d1 <= 0.0 && d2 <= 0.0 {
        return (a, [1.0, 0.0, 0.0]);
    }
    let bp = p - b;
    let (d3, d4) = (ab.dot(bp), ac.dot(bp));
    if d3 >= 0.0 && d4 <= d3 {
        return (b, [0.0, 1.0, 0.0]);
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        let v = d1 / (d1 - d3);
        return (a + v * ab, [1.0 - v, v, 0.0]);
    }
    let cp = p - c;
    let (d5, d6) = (ab.dot(cp), ac.dot(cp));
    if d6 >= 0.0 && d5 <= d6 {
        return (c, [0.0, 0.0, 1.0]);
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        let w = d2 / (d2 - d6);
        return (a + w * ac, [1.0 - w, 0.0, w]);
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        let w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        return (b + w * (c - b), [0.0, 1.0 - w, w]);
    }
    let denom = 1.0 / (va + vb + vc);
    let (v, w) = (vb * denom, vc * denom);
    (a + ab * v + ac * w, [1.0 - v - w, v, w])
}

/// Each bound vertex's target and the body's normal there under the skin `matrices`, into `targets` and
/// `normals`.
pub fn skin_targets(
    vertices: &[SkinnedVertex],
    matrices: &[Affine3A],
    targets: &mut Vec<Vec3>,
    normals: &mut Vec<Vec3>,
) {
    targets.clear();
    normals.clear();
    for v in vertices {
        targets.push(v.influences.skin_point(matrices, v.bind));
        normals.push(v.influences.skin_direction(matrices, v.normal));
    }
}

/// Lines (9)–(11) for the skinned constraints: each free vertex (w > 0) pulled back within `max_distance` of its
/// target, then pushed out of its backstop sphere. Attached vertices (w = 0) are left to their targets.
pub fn limit_to_skin(
    p: &mut [Vec3],
    w: &[f32],
    vertices: &[SkinnedVertex],
    targets: &[Vec3],
    normals: &[Vec3],
    limits: SkinLimits,
) {
    let radius = limits.backstop_radius;
    for ((((p, &w), v), &target), &normal) in p.iter_mut().zip(w).zip(vertices).zip(targets).zip(normals) {
        if w == 0.0 {
            continue;
        }
        let offset = *p - target;
        if offset.length_squared() > limits.max_distance * limits.max_distance {
            *p = target + offset.normalize_or_zero() * limits.max_distance;
        }
        if radius > 0.0 {
            let behind = (v.gap - limits.margin).max(0.0);
            let center = target - normal * (behind + radius);
            let out = *p - center;
            if out.length_squared() < radius * radius {
                *p = center + out.normalize_or(normal) * radius;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skinning::rig::{Influences, SkinnedBody};

    /// A unit square on y = 0 facing +y, its two triangles, all skinned to joint 0 (left) or 1 (right).
    fn floor() -> SkinnedBody {
        let positions = vec![Vec3::ZERO, Vec3::X, Vec3::new(1.0, 0.0, -1.0), Vec3::NEG_Z];
        let triangles = vec![[0, 1, 2], [0, 2, 3]];
        let joint = |j: u16| Influences { joints: [j, 0, 0, 0], weights: [1.0, 0.0, 0.0, 0.0] };
        SkinnedBody {
            normals: crate::skinning::glb::unit_normals(&positions, &triangles),
            positions,
            triangles,
            influences: vec![joint(0), joint(1), joint(1), joint(0)],
        }
    }

    #[test]
    fn a_vertex_binds_to_the_nearest_body_point_with_its_skin_and_normal() {
        let body = floor();
        assert!(body.normals.iter().all(|n| n.distance(Vec3::Y) < 1e-6));
        let bound = bind_vertices(&body, &[Vec3::new(0.25, 0.1, -0.5), Vec3::new(0.5, -0.2, -0.5)]);
        assert!((bound[0].gap - 0.1).abs() < 1e-6 && (bound[1].gap + 0.2).abs() < 1e-6);
        assert!(bound[0].normal.distance(Vec3::Y) < 1e-6);
        // a quarter of the way across: three quarters joint 0
        let w = bound[0].influences;
        assert_eq!(w.joints[..2], [0, 1]);
        assert!((w.weights[0] - 0.75).abs() < 1e-5, "{w:?}");
    }

    #[test]
    fn closest_point_lands_in_every_region_of_the_triangle() {
        let (a, b, c) = (Vec3::ZERO, Vec3::X, Vec3::Y);
        let cases = [
            (Vec3::new(-1.0, -1.0, 0.3), a),
            (Vec3::new(2.0, -0.5, 0.0), b),
            (Vec3::new(-0.5, 2.0, 0.0), c),
            (Vec3::new(0.5, -1.0, 1.0), Vec3::new(0.5, 0.0, 0.0)),
            (Vec3::new(-1.0, 0.5, 0.0), Vec3::new(0.0, 0.5, 0.0)),
            (Vec3::new(1.0, 1.0, 0.0), Vec3::new(0.5, 0.5, 0.0)),
            (Vec3::new(0.2, 0.3, -2.0), Vec3::new(0.2, 0.3, 0.0)),
        ];
        for (p, expected) in cases {
            let (q, w) = closest_on_triangle(p, a, b, c);
            assert!(q.distance(expected) < 1e-6, "{p} → {q}, not {expected}");
            assert!((w[0] * a + w[1] * b + w[2] * c).distance(q) < 1e-6);
        }
    }

    #[test]
    fn a_free_vertex_is_held_within_reach_of_its_target_and_outside_its_backstop() {
        let vertex = SkinnedVertex {
            bind: Vec3::new(0.5, 0.1, -0.5),
            normal: Vec3::Y,
            influences: Influences::default(),
            gap: 0.1,
        };
        let limits = SkinLimits { max_distance: 0.3, backstop_radius: 1.0, margin: 0.02 };
        let target = [Vec3::new(0.5, 0.1, -0.5)];
        // too far: back onto the sphere of reach
        let mut p = [Vec3::new(0.5, 1.1, -0.5), Vec3::new(0.5, 0.05, -0.5)];
        let (w, vertices) = ([1.0, 0.0], [vertex, vertex]);
        limit_to_skin(&mut p, &w, &vertices, &[target[0]; 2], &[Vec3::Y; 2], limits);
        assert!((p[0].y - 0.4).abs() < 1e-6, "{}", p[0]);
        assert_eq!(p[1].y, 0.05, "an attached vertex is left where it is");
        // behind the target, into the body: out to the backstop 2 cm above the surface (y = 0.02)
        let mut p = [Vec3::new(0.5, -0.05, -0.5)];
        limit_to_skin(&mut p, &[1.0], &[vertex], &target, &[Vec3::Y], limits);
        assert!((p[0].y - 0.02).abs() < 1e-5, "{}", p[0]);
        // beside the target, outside the body: left alone
        let mut p = [Vec3::new(0.7, 0.08, -0.5)];
        limit_to_skin(&mut p, &[1.0], &[vertex], &target, &[Vec3::Y], limits);
        assert_eq!(p[0], Vec3::new(0.7, 0.08, -0.5));
    }
}
