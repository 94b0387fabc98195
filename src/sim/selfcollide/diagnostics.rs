//! Diagnostics for tests and reports: how often vertices pass through triangles during a step
//! ([`count_crossings`]) and how many mesh edges pierce the cloth ([`count_intersections`]).

use bevy::math::Vec3;

use super::hash::SpatialHash;
use super::narrow::barycentric;
use super::{corners, unique_edges_into};

/// Barycentric tolerance of [`count_crossings`], so a vertex passing exactly through an edge is not missed.
const CROSSING_TOLERANCE: f32 = 1e-5;
/// Bisection steps for the crossing time in [`count_crossings`] (f32 resolution is reached well before).
const CROSSING_BISECTIONS: u32 = 32;

/// Number of (vertex, triangle not containing it) pairs where the vertex passes through the triangle while all
/// move linearly from `x_before` to `x_after`: the exact signed volume
/// (q(s) − p1(s))·((p2(s) − p1(s))×(p3(s) − p1(s))) changes sign over s ∈ [0, 1], and at the crossing time
/// (found by bisection) q(s) projects into the triangle at s (barycentric tolerance 1e-5, so a pass exactly
/// through an edge counts for both triangles). A vertex that passes through the plane an even number of times
/// is not counted; with three crossings only the one bisection finds is checked. Uses a `SpatialHash`
/// internally; allocates it per call, so it is meant for tests and diagnostics.
pub fn count_crossings(x_before: &[Vec3], x_after: &[Vec3], triangles: &[[u32; 3]]) -> usize {
    let mut hash = SpatialHash::default();
    hash.rebuild_swept(x_before, x_after, triangles, 0.0, false);
    let mut count = 0;
    for (v, (&qb, &qa)) in x_before.iter().zip(x_after).enumerate() {
        if !(qb.is_finite() && qa.is_finite()) {
            continue;
        }
        hash.for_each_in_box(qb.min(qa), qa.max(qb), |t| {
            let Some(tri) = triangles.get(t as usize) else { return };
            if tri.contains(&(v as u32)) {
                return;
            }
            if let (Some(tb), Some(ta)) = (corners(x_before, tri), corners(x_after, tri))
                && crosses(qb, qa, tb, ta)
            {
                count += 1;
            }
        });
    }
    count
}

/// Number of (mesh edge, triangle sharing no vertex with it) pairs where the edge pierces the triangle at
/// `positions`: the cloth passes through itself there (a tangle the vertex–triangle contacts can no longer
/// undo). The edge's ends lie strictly on opposite sides of the triangle's plane and the crossing point projects
/// into the triangle (barycentrics ≥ 0). Each edge counts once, whichever triangles share it. Allocates; meant
/// for tests and reports.
pub(crate) fn count_intersections(positions: &[Vec3], triangles: &[[u32; 3]]) -> usize {
    let mut hash = SpatialHash::default();
    hash.rebuild(positions, triangles);
    let mut count = 0;
    for [a, b] in unique_edges(triangles) {
        let (Some(&pa), Some(&pb)) = (positions.get(a as usize), positions.get(b as usize)) else { continue };
        if !(pa.is_finite() && pb.is_finite()) {
            continue;
        }
        hash.for_each_in_box(pa.min(pb), pa.max(pb), |t| {
            let Some(tri) = triangles.get(t as usize) else { return };
            if tri.contains(&a) || tri.contains(&b) {
                return;
            }
            if corners(positions, tri).is_some_and(|corners| pierces(pa, pb, corners)) {
                count += 1;
            }
        });
    }
    count
}

/// How many times the `segments` (a collider's edges, [`Shape::edges`](crate::sim::collide::shapes::Shape::edges))
/// pierce the triangles of the cloth at `positions`: a collider poking through the cloth (issue 49, point 3).
pub(crate) fn count_piercings(segments: &[[Vec3; 2]], positions: &[Vec3], triangles: &[[u32; 3]]) -> usize {
    if segments.is_empty() || triangles.is_empty() {
        return 0;
    }
    let mut hash = SpatialHash::default();
    hash.rebuild(positions, triangles);
    let mut count = 0;
    for &[a, b] in segments.iter().filter(|[a, b]| a.is_finite() && b.is_finite()) {
        hash.for_each_in_box(a.min(b), a.max(b), |t| {
            let tri = triangles.get(t as usize).and_then(|tri| corners(positions, tri));
            count += usize::from(tri.is_some_and(|corners| pierces(a, b, corners)));
        });
    }
    count
}

/// Whether the segment a–b pierces the triangle `corners` (see [`count_intersections`]).
pub(super) fn pierces(a: Vec3, b: Vec3, corners: [Vec3; 3]) -> bool {
    let normal = (corners[1] - corners[0]).cross(corners[2] - corners[0]);
    let (da, db) = ((a - corners[0]).dot(normal), (b - corners[0]).dot(normal));
    ((da < 0.0 && db > 0.0) || (da > 0.0 && db < 0.0))
        && barycentric(a.lerp(b, da / (da - db)), corners).is_some_and(|b| b.min_element() >= 0.0)
}

/// Every edge of `triangles` once, as (lower, higher) vertex pairs in increasing order.
fn unique_edges(triangles: &[[u32; 3]]) -> Vec<[u32; 2]> {
    let mut edges = Vec::new();
    unique_edges_into(triangles, &mut edges);
    edges
}

/// Whether the vertex moving qb → qa passes through the triangle moving tb → ta (see [`count_crossings`]).
fn crosses(qb: Vec3, qa: Vec3, tb: [Vec3; 3], ta: [Vec3; 3]) -> bool {
    let at = |s: f32| (qb.lerp(qa, s), [0, 1, 2].map(|i| tb[i].lerp(ta[i], s)));
    let volume = |(q, t): (Vec3, [Vec3; 3])| (q - t[0]).dot((t[1] - t[0]).cross(t[2] - t[0]));
    let (f0, f1) = (volume(at(0.0)), volume(at(1.0)));
    if !((f0 < 0.0 && f1 > 0.0) || (f0 > 0.0 && f1 < 0.0)) {
        return false;
    }
    let (mut lo, mut hi) = (0.0f32, 1.0f32);
    for _ in 0..CROSSING_BISECTIONS {
        let mid = 0.5 * (lo + hi);
        if (volume(at(mid)) > 0.0) == (f0 > 0.0) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let (q, t) = at(0.5 * (lo + hi));
    barycentric(q, t).is_some_and(|b| b.min_element() >= -CROSSING_TOLERANCE)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::selfcollide::test_support::{TRI, crumpled_pair, grid, static_triangle};

    #[test]
    fn count_crossings_detects_passes_only() {
        let x = static_triangle();
        let mut through = x.clone();
        through[3].z = -0.1;
        assert_eq!(count_crossings(&x, &through, &TRI), 1);
        let mut beside = x.clone();
        beside[3] = Vec3::new(0.9, 0.9, -0.1); // crosses the plane outside the triangle
        assert_eq!(count_crossings(&x, &beside, &TRI), 0);
        let mut above = x.clone();
        above[3].z = 0.001;
        assert_eq!(count_crossings(&x, &above, &TRI), 0);
        // The triangle moving up through a resting vertex.
        let mut lifted = x.clone();
        for v in &mut lifted[..3] {
            v.z += 0.3;
        }
        assert_eq!(count_crossings(&x, &lifted, &TRI), 1);
    }

    #[test]
    fn a_box_corner_through_a_sheet_pierces_it_three_times() {
        use crate::sim::collide::shapes::Shape;
        use bevy::math::Quat;
        // a 10 × 10 sheet of 0.1 m cells in z = 0, a 0.2 m cube turned to stand on a corner
        let (mut x, mut tris) = (Vec::new(), Vec::new());
        grid(11, 0.1, Vec3::ZERO, &mut x, &mut tris);
        let rotation = Quat::from_rotation_arc(Vec3::ONE.normalize(), Vec3::Z);
        let cube = |z: f32| {
            let center = Vec3::new(0.52, 0.47, z);
            Shape::Box { center, rotation, half_extents: Vec3::splat(0.1) }.edges()
        };
        assert_eq!(cube(0.1).len(), 12);
        // its lowest corner 7 cm below the sheet, the three next 4 cm above: the three edges between cross it
        assert_eq!(count_piercings(&cube(0.1), &x, &tris), 3);
        // centred on the sheet, the six edges around its waist cross it
        assert_eq!(count_piercings(&cube(0.0), &x, &tris), 6);
        // resting on the sheet from above, nothing crosses it
        assert_eq!(count_piercings(&cube(0.18), &x, &tris), 0);
        // the capsule's axis across the sheet
        let capsule = Shape::Capsule { a: Vec3::new(0.33, 0.41, -0.2), b: Vec3::new(0.35, 0.46, 0.3), radius: 0.05 };
        assert_eq!(count_piercings(&capsule.edges(), &x, &tris), 1);
        assert_eq!(count_piercings(&Shape::Sphere { center: Vec3::ZERO, radius: 1.0 }.edges(), &x, &tris), 0);
    }

    #[test]
    fn count_crossings_matches_brute_force() {
        let (x, p, tris) = crumpled_pair(11);
        let mut brute = 0;
        for v in 0..x.len() {
            for tri in &tris {
                if let (false, Some(tb), Some(ta)) = (tri.contains(&(v as u32)), corners(&x, tri), corners(&p, tri))
                    && crosses(x[v], p[v], tb, ta)
                {
                    brute += 1;
                }
            }
        }
        assert!(brute > 20, "{brute}");
        assert_eq!(count_crossings(&x, &p, &tris), brute);
    }

    #[test]
    fn count_intersections_finds_a_sheet_threaded_through_another() {
        // two 6×6 sheets, the second stood upright across the first: each of its edges crossing the first's
        // plane inside it pierces one triangle there
        let (mut x, mut tris) = (Vec::new(), Vec::new());
        grid(6, 0.1, Vec3::ZERO, &mut x, &mut tris);
        assert_eq!(count_intersections(&x, &tris), 0, "a flat sheet");
        let flat = tris.len();
        grid(6, 0.1, Vec3::new(0.0, 0.0, -0.25), &mut x, &mut tris);
        for v in &mut x[36..] {
            // rotate the second sheet upright (y → z) and move it to x = 0.23 (off every vertex and edge)
            *v = Vec3::new(0.23, v.x + 0.005, v.y - 0.247);
        }
        let crossing = count_intersections(&x, &tris);
        // its edges across z = 0 (the vertical ones at y = 0.005..0.405 inside the first sheet, and diagonals)
        // each pierce one triangle of it: checked against brute force
        let mut brute = 0;
        for [a, b] in unique_edges(&tris) {
            for tri in &tris {
                if tri.contains(&a) || tri.contains(&b) {
                    continue;
                }
                if pierces(x[a as usize], x[b as usize], corners(&x, tri).unwrap()) {
                    brute += 1;
                }
            }
        }
        assert!(crossing >= 5, "{crossing}");
        assert_eq!(crossing, brute);
        assert_eq!(count_intersections(&x[..36], &tris[..flat]), 0);
    }
}
