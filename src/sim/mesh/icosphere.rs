//! Icosphere (geodesic sphere) mesh builder, the closed surface for cloth balloons (§4.4).
//!
//! Starts from the regular icosahedron (12 vertices, 20 triangles) and splits every triangle into four at its
//! edge midpoints, `subdivisions` times, pushing each new midpoint onto the sphere. Midpoints are shared by the
//! two triangles of an edge, so the result is a closed, edge-manifold mesh with V = 10·4^s + 2 vertices,
//! E = 30·4^s edges and F = 20·4^s triangles (12, 42, 162, 642, 2562 vertices for s = 0…4), every triangle
//! counter-clockwise seen from outside as the volume constraint expects.
//!
//! Triangles are nearly but not exactly equal in size: projecting midpoints onto the sphere makes the ones
//! around the 12 original (valence-5) vertices somewhat smaller than those in between.

use std::collections::HashMap;

use bevy::math::Vec3;

/// Largest subdivision level [`icosphere`] builds: 40 962 vertices and 81 920 triangles. Each level quadruples
/// the mesh, so larger requests (e.g. from a preset) are clamped to this instead of exhausting memory.
pub const MAX_SUBDIVISIONS: u32 = 6;

/// The golden ratio φ: the regular icosahedron has its vertices at the cyclic permutations of (0, ±1, ±φ).
const PHI: f32 = 1.618_034;

/// Vertices of the regular icosahedron (on a sphere of radius √(1 + φ²), normalised by [`icosphere`]).
const ICOSAHEDRON_VERTICES: [[f32; 3]; 12] = [
    [-1.0, PHI, 0.0],
    [1.0, PHI, 0.0],
    [-1.0, -PHI, 0.0],
    [1.0, -PHI, 0.0],
    [0.0, -1.0, PHI],
    [0.0, 1.0, PHI],
    [0.0, -1.0, -PHI],
    [0.0, 1.0, -PHI],
    [PHI, 0.0, -1.0],
    [PHI, 0.0, 1.0],
    [-PHI, 0.0, -1.0],
    [-PHI, 0.0, 1.0],
];

/// Faces of the regular icosahedron, counter-clockwise seen from outside.
#[rustfmt::skip]
const ICOSAHEDRON_TRIANGLES: [[u32; 3]; 20] = [
    [0, 11, 5], [0, 5, 1], [0, 1, 7], [0, 7, 10], [0, 10, 11],
    [1, 5, 9], [5, 11, 4], [11, 10, 2], [10, 7, 6], [7, 1, 8],
    [3, 9, 4], [3, 4, 2], [3, 2, 6], [3, 6, 8], [3, 8, 9],
    [4, 9, 5], [2, 4, 11], [6, 2, 10], [8, 6, 7], [9, 8, 1],
];

/// Icosphere of `radius` around `center`: the regular icosahedron subdivided `subdivisions` times (clamped to
/// [`MAX_SUBDIVISIONS`]), with 10·4^s + 2 vertices and 20·4^s outward, counter-clockwise triangles.
///
/// Returns the vertex positions and the triangles as indices into them. The sign of `radius` is ignored so the
/// triangles always face outward; a zero radius collapses every vertex onto `center`.
pub fn icosphere(subdivisions: u32, radius: f32, center: Vec3) -> (Vec<Vec3>, Vec<[u32; 3]>) {
    let subdivisions = subdivisions.min(MAX_SUBDIVISIONS);
    let vertex_count = 10 * 4usize.pow(subdivisions) + 2;
    let triangle_count = 20 * 4usize.pow(subdivisions);

    // Built on the unit sphere; scaled and moved in place at the end.
    let mut vertices = Vec::with_capacity(vertex_count);
    vertices.extend(ICOSAHEDRON_VERTICES.iter().map(|&v| Vec3::from_array(v).normalize()));
    let mut triangles = Vec::with_capacity(triangle_count);
    triangles.extend_from_slice(&ICOSAHEDRON_TRIANGLES);
    let mut next = Vec::with_capacity(triangle_count);
    let mut midpoints = HashMap::with_capacity(vertex_count);

    for _ in 0..subdivisions {
        next.clear();
        for &[a, b, c] in &triangles {
            let ab = midpoint(&mut vertices, &mut midpoints, a, b);
            let bc = midpoint(&mut vertices, &mut midpoints, b, c);
            let ca = midpoint(&mut vertices, &mut midpoints, c, a);
            // three corner triangles and the middle one, all keeping the parent's orientation
            next.extend_from_slice(&[[a, ab, ca], [b, bc, ab], [c, ca, bc], [ab, bc, ca]]);
        }
        std::mem::swap(&mut triangles, &mut next);
    }
    debug_assert_eq!((vertices.len(), triangles.len()), (vertex_count, triangle_count));

    let radius = radius.abs();
    for v in &mut vertices {
        *v = center + *v * radius;
    }
    (vertices, triangles)
}

/// Index of the unit-sphere midpoint of the edge `i`–`j`, created on first use. The map is keyed by the sorted
/// index pair so both triangles sharing the edge get the same vertex. Midpoints of earlier levels stay in the
/// map; their keys never recur because every edge of a new level has at least one endpoint from that level.
fn midpoint(vertices: &mut Vec<Vec3>, midpoints: &mut HashMap<(u32, u32), u32>, i: u32, j: u32) -> u32 {
    *midpoints.entry((i.min(j), i.max(j))).or_insert_with(|| {
        let m = (vertices[i as usize] + vertices[j as usize]).normalize();
        vertices.push(m);
        // at most 10·4^MAX_SUBDIVISIONS + 2 vertices, far below u32::MAX
        (vertices.len() - 1) as u32
    })
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    /// How many triangles use each edge, keyed by its endpoint pair.
    type EdgeCounts = HashMap<(u32, u32), usize>;

    /// Number of triangles using each undirected edge, and each directed (oriented) edge.
    fn edge_uses(triangles: &[[u32; 3]]) -> (EdgeCounts, EdgeCounts) {
        let (mut undirected, mut directed) = (HashMap::new(), HashMap::new());
        for &[a, b, c] in triangles {
            for (i, j) in [(a, b), (b, c), (c, a)] {
                *undirected.entry((i.min(j), i.max(j))).or_insert(0) += 1;
                *directed.entry((i, j)).or_insert(0) += 1;
            }
        }
        (undirected, directed)
    }

    #[test]
    fn vertex_and_triangle_counts_per_level() {
        for (s, expected_vertices) in [12, 42, 162, 642, 2562].into_iter().enumerate() {
            let (v, t) = icosphere(s as u32, 1.0, Vec3::ZERO);
            assert_eq!(v.len(), expected_vertices, "vertices at level {s}");
            assert_eq!(v.len(), 10 * 4usize.pow(s as u32) + 2);
            assert_eq!(t.len(), 20 * 4usize.pow(s as u32), "triangles at level {s}");
            assert!(t.iter().flatten().all(|&i| (i as usize) < v.len()));
        }
    }

    #[test]
    fn subdivisions_are_capped() {
        let (v, t) = icosphere(u32::MAX, 1.0, Vec3::ZERO);
        assert_eq!(v.len(), 10 * 4usize.pow(MAX_SUBDIVISIONS) + 2);
        assert_eq!(t.len(), 20 * 4usize.pow(MAX_SUBDIVISIONS));
    }

    #[test]
    fn vertices_lie_on_the_sphere() {
        let (radius, center) = (2.5, Vec3::new(1.0, -2.0, 0.5));
        for s in 0..=4 {
            let (v, _) = icosphere(s, radius, center);
            for q in &v {
                let error = (q.distance(center) - radius).abs() / radius;
                assert!(error < 1e-5, "level {s}: vertex {q} at relative error {error}");
            }
        }
    }

    #[test]
    fn mesh_is_closed_edge_manifold_and_consistently_oriented() {
        for s in 0..=4 {
            let (_, t) = icosphere(s, 1.0, Vec3::ZERO);
            let (undirected, directed) = edge_uses(&t);
            assert!(undirected.values().all(|&n| n == 2), "level {s}: an edge is not shared by exactly two");
            // each neighbour traverses the shared edge in the opposite direction
            assert!(directed.values().all(|&n| n == 1), "level {s}: inconsistent orientation");
            assert_eq!(undirected.len(), 30 * 4usize.pow(s), "edges at level {s}");
        }
    }

    #[test]
    fn triangles_face_outward() {
        let center = Vec3::new(-3.0, 0.5, 4.0);
        for s in 0..=4 {
            let (v, t) = icosphere(s, 0.8, center);
            for &[a, b, c] in &t {
                let (a, b, c) = (v[a as usize], v[b as usize], v[c as usize]);
                let normal = (b - a).cross(c - a);
                assert!(normal.dot((a + b + c) / 3.0 - center) > 0.0, "level {s}: inward triangle {a} {b} {c}");
            }
            let (_, flipped) = icosphere(s, -0.8, center);
            assert_eq!(flipped, t, "a negative radius does not flip the mesh");
        }
    }

    #[test]
    fn euler_characteristic_is_two() {
        for s in 0..=5 {
            let (v, t) = icosphere(s, 1.0, Vec3::ZERO);
            let (edges, _) = edge_uses(&t);
            assert_eq!(v.len() as i64 - edges.len() as i64 + t.len() as i64, 2, "level {s}");
        }
    }

    #[test]
    fn vertices_are_distinct_and_triangles_roughly_uniform() {
        let (v, t) = icosphere(4, 1.0, Vec3::ZERO);
        let mut keys: Vec<[i64; 3]> = v.iter().map(|q| (*q * 1e5).round().as_i64vec3().to_array()).collect();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), v.len(), "duplicate vertices");
        let areas: Vec<f32> = t
            .iter()
            .map(|&[a, b, c]| (v[b as usize] - v[a as usize]).cross(v[c as usize] - v[a as usize]).length() / 2.0)
            .collect();
        let (min, max) = areas.iter().fold((f32::MAX, 0.0f32), |(lo, hi), &x| (lo.min(x), hi.max(x)));
        assert!(min > 0.0 && max / min < 2.0, "triangle areas range over {min}…{max}");
    }
}
