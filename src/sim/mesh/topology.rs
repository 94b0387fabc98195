//! Cloth topology from a triangle mesh (§4.1): validation, edges (stretch constraints), adjacent triangle
//! pairs (bending constraints), lumped vertex masses, and the grid and disk builders.
//!
//! Built once per cloth (and again locally when tearing changes the mesh), never per frame, so sorting is fine
//! here; the solver's inner loops only index flat arrays.

use bevy::math::Vec3;
use thiserror::Error;

/// The most particles one cloth may have; larger requests are refused before anything is allocated.
pub const MAX_PARTICLES: usize = 1_000_000;

/// Why a triangle mesh cannot become a cloth.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum MeshError {
    /// The mesh has no triangles.
    #[error("the mesh has no triangles")]
    Empty,
    /// More particles than [`MAX_PARTICLES`] were requested (the count).
    #[error("{0} particles requested; the limit is {MAX_PARTICLES}")]
    TooLarge(usize),
    /// A triangle refers to a vertex that does not exist.
    #[error("triangle {triangle} refers to vertex {index}, but there are only {count} vertices")]
    IndexOutOfRange {
        /// Index of the triangle.
        triangle: usize,
        /// The vertex index it gives.
        index: u32,
        /// Number of vertices.
        count: usize,
    },
    /// A vertex position is not finite (the vertex).
    #[error("vertex {0} has a non-finite position")]
    NonFinite(usize),
    /// An edge (its two vertices) is shared by more than two triangles (§4.1).
    #[error("edge ({0}, {1}) is shared by more than two triangles: the mesh is not a manifold (§4.1)")]
    NonManifold(u32, u32),
    /// A vertex belongs to no triangle of non-zero area (the vertex).
    #[error("vertex {0} belongs to no triangle of non-zero area, so it would have no mass")]
    Massless(usize),
}

/// A pair of triangles sharing the edge (p1, p2), with opposite vertices p3 and p4: the paper's triangles
/// (p1, p3, p2) and (p1, p2, p4) of §4.1 and Fig. 4, stored as `[p1, p2, p3, p4]`.
pub(crate) type BendQuad = [u32; 4];

/// Unique edges of `triangles`, sorted, and every pair of triangles sharing an edge.
/// Fails on a non-manifold edge (more than two triangles).
pub(crate) fn edges_and_bend_quads(triangles: &[[u32; 3]]) -> Result<(Vec<[u32; 2]>, Vec<BendQuad>), MeshError> {
    // (edge lo, edge hi, opposite vertex), one per triangle side.
    let mut sides: Vec<(u32, u32, u32)> = Vec::with_capacity(triangles.len() * 3);
    for t in triangles {
        for k in 0..3 {
            let (a, b, opposite) = (t[k], t[(k + 1) % 3], t[(k + 2) % 3]);
            sides.push((a.min(b), a.max(b), opposite));
        }
    }
    sides.sort_unstable();
    let mut edges = Vec::with_capacity(sides.len() / 2 + 1);
    let mut quads = Vec::with_capacity(sides.len() / 2);
    let mut i = 0;
    while i < sides.len() {
        let (a, b, o1) = sides[i];
        let mut j = i + 1;
        while j < sides.len() && sides[j].0 == a && sides[j].1 == b {
            j += 1;
        }
        match j - i {
            1 => {}
            2 => quads.push([a, b, o1, sides[i + 1].2]),
            _ => return Err(MeshError::NonManifold(a, b)),
        }
        edges.push([a, b]);
        i = j;
    }
    Ok((edges, quads))
}

/// Checks positions and indices of a triangle mesh before anything is built from it.
pub fn validate(positions: &[Vec3], triangles: &[[u32; 3]]) -> Result<(), MeshError> {
    if positions.len() > MAX_PARTICLES {
        return Err(MeshError::TooLarge(positions.len()));
    }
    if triangles.is_empty() {
        return Err(MeshError::Empty);
    }
    if let Some(i) = positions.iter().position(|p| !p.is_finite()) {
        return Err(MeshError::NonFinite(i));
    }
    for (t, tri) in triangles.iter().enumerate() {
        if let Some(&index) = tri.iter().find(|&&i| i as usize >= positions.len()) {
            return Err(MeshError::IndexOutOfRange { triangle: t, index, count: positions.len() });
        }
    }
    Ok(())
}

/// Vertex masses from an areal density ρ in kg/m²: each vertex gets one third of the mass of every adjacent
/// triangle (§4.1). Fails if a vertex would get no mass.
pub(crate) fn lumped_masses(positions: &[Vec3], triangles: &[[u32; 3]], density: f32) -> Result<Vec<f32>, MeshError> {
    let mut mass = vec![0.0f32; positions.len()];
    for t in triangles {
        let [a, b, c] = t.map(|i| positions[i as usize]);
        let third = density * 0.5 * (b - a).cross(c - a).length() / 3.0;
        for &i in t {
            mass[i as usize] += third;
        }
    }
    match mass.iter().position(|&m| !m.is_finite() || m <= 0.0) {
        Some(i) => Err(MeshError::Massless(i)),
        None => Ok(mass),
    }
}

/// A triangle mesh as plain arrays: positions, triangles (indices into positions) and texture coordinates
/// (one per position, or empty).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TriangleMesh {
    /// Vertex positions, metres.
    pub positions: Vec<Vec3>,
    /// Triangles as indices into `positions`.
    pub triangles: Vec<[u32; 3]>,
    /// Texture coordinates, one per position, or empty.
    pub uvs: Vec<[f32; 2]>,
}

/// A flat grid of `cols`×`rows` quads (`(cols+1)·(rows+1)` vertices) of size `width`×`depth` metres in the local
/// XZ plane, centred on the origin, row-major from −Z to +Z. Each quad is split along alternating diagonals so
/// the sheet has no preferred shear direction. Returns positions, triangles (counter-clockwise seen from +Y)
/// and texture coordinates.
pub fn grid(cols: u32, rows: u32, width: f32, depth: f32) -> Result<TriangleMesh, MeshError> {
    let (cols, rows) = (cols.max(1), rows.max(1));
    let count = (cols as usize + 1).saturating_mul(rows as usize + 1);
    if count > MAX_PARTICLES {
        return Err(MeshError::TooLarge(count));
    }
    let mut positions = Vec::with_capacity(count);
    let mut uvs = Vec::with_capacity(count);
    for r in 0..=rows {
        for c in 0..=cols {
            let (u, v) = (c as f32 / cols as f32, r as f32 / rows as f32);
            positions.push(Vec3::new((u - 0.5) * width, 0.0, (v - 0.5) * depth));
            uvs.push([u, v]);
        }
    }
    let id = |c: u32, r: u32| r * (cols + 1) + c;
    let mut triangles = Vec::with_capacity(cols as usize * rows as usize * 2);
    for r in 0..rows {
        for c in 0..cols {
            let (a, b, d, e) = (id(c, r), id(c + 1, r), id(c, r + 1), id(c + 1, r + 1));
            if (c + r) % 2 == 0 {
                triangles.push([a, d, e]);
                triangles.push([a, e, b]);
            } else {
                triangles.push([a, d, b]);
                triangles.push([b, d, e]);
            }
        }
    }
    Ok(TriangleMesh { positions, triangles, uvs })
}

/// The most rings a [`disk`] may have: 120,601 vertices.
pub const MAX_DISK_RINGS: u32 = 200;

/// A flat disk of radius `radius` metres in the local XZ plane, centred on the origin: a centre vertex and `rings`
/// concentric rings (clamped to 1–[`MAX_DISK_RINGS`]), ring k of 6k evenly spaced vertices at radius k/rings, so
/// the triangles are nearly equilateral (`1 + 3·rings·(rings + 1)` vertices). Consecutive rings are zipped by
/// angle; triangles counter-clockwise seen from +Y, texture coordinates (u, v) = (½ + x/2r, ½ + z/2r).
pub fn disk(radius: f32, rings: u32) -> Result<TriangleMesh, MeshError> {
    let rings = rings.clamp(1, MAX_DISK_RINGS) as usize;
    let count = 1 + 3 * rings * (rings + 1);
    if count > MAX_PARTICLES {
        return Err(MeshError::TooLarge(count));
    }
    let mut positions = vec![Vec3::ZERO];
    for k in 1..=rings {
        let r = radius * k as f32 / rings as f32;
        let n = 6 * k;
        positions.extend((0..n).map(|j| {
            let angle = std::f32::consts::TAU * j as f32 / n as f32;
            Vec3::new(r * angle.cos(), 0.0, r * angle.sin())
        }));
    }
    let first = |k: usize| if k == 0 { 0 } else { 1 + 3 * k * (k - 1) };
    let mut triangles = Vec::with_capacity(6 * rings * rings);
    for k in 1..=rings {
        let (inner, outer) = ((first(k - 1), 6 * (k - 1)), (first(k), 6 * k));
        let at = |(start, n): (usize, usize), j: usize| (start + if n == 0 { 0 } else { j % n }) as u32;
        let (mut i, mut j) = (0, 0);
        // the next inner and outer corners by angle, as fractions of a turn compared exactly (j/n_o vs i/n_i)
        while j < outer.1 || i < inner.1 {
            let outer_first = i == inner.1 || (j < outer.1 && (j + 1) * inner.1 <= (i + 1) * outer.1);
            if outer_first {
                triangles.push([at(inner, i), at(outer, j + 1), at(outer, j)]);
                j += 1;
            } else {
                triangles.push([at(inner, i), at(inner, i + 1), at(outer, j)]);
                i += 1;
            }
        }
    }
    for t in &mut triangles {
        let [a, b, c] = t.map(|i| positions[i as usize]);
        if (b - a).cross(c - a).y < 0.0 {
            t.swap(1, 2);
        }
    }
    let uvs = positions.iter().map(|q| [0.5 + q.x / (2.0 * radius), 0.5 + q.z / (2.0 * radius)]).collect();
    Ok(TriangleMesh { positions, triangles, uvs })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_counts_edges_and_bend_pairs() {
        let TriangleMesh { positions: pos, triangles: tris, .. } = grid(3, 2, 3.0, 2.0).unwrap();
        assert_eq!(pos.len(), 12);
        assert_eq!(tris.len(), 12);
        let (edges, quads) = edges_and_bend_quads(&tris).unwrap();
        // horizontal 3·3 + vertical 4·2 + one diagonal per quad 6 = 23 edges; interior edges = 23 − boundary 10.
        assert_eq!(edges.len(), 23);
        assert_eq!(quads.len(), 13);
    }

    #[test]
    fn a_disk_is_a_closed_fan_of_rings_with_the_area_of_its_polygon() {
        for rings in [1, 2, 5] {
            let TriangleMesh { positions, triangles, uvs } = disk(0.3, rings).unwrap();
            let n = rings as usize;
            assert_eq!(positions.len(), 1 + 3 * n * (n + 1));
            assert_eq!(triangles.len(), 6 * n * n);
            assert_eq!(uvs.len(), positions.len());
            validate(&positions, &triangles).unwrap();
            // a disk's boundary is one loop: edges = vertices + faces − 1 (Euler), and every triangle faces +Y
            let (edges, _) = edges_and_bend_quads(&triangles).unwrap();
            assert_eq!(edges.len() + 1, positions.len() + triangles.len());
            let area = |[a, b, c]: [u32; 3]| {
                let [a, b, c] = [a, b, c].map(|i| positions[i as usize]);
                (b - a).cross(c - a).y * 0.5
            };
            assert!(triangles.iter().all(|&t| area(t) > 0.0));
            // the outer ring is a regular 6n-gon of radius 0.3
            let sides = 6.0 * n as f32;
            let polygon = 0.5 * sides * 0.09 * (std::f32::consts::TAU / sides).sin();
            let total: f32 = triangles.iter().map(|&t| area(t)).sum();
            assert!((total - polygon).abs() < 1e-5, "{total} vs {polygon}");
        }
    }

    #[test]
    fn masses_sum_to_density_times_area() {
        let TriangleMesh { positions: pos, triangles: tris, .. } = grid(7, 5, 1.4, 0.5).unwrap();
        let m = lumped_masses(&pos, &tris, 0.3).unwrap();
        let total: f32 = m.iter().sum();
        assert!((total - 0.3 * 1.4 * 0.5).abs() < 1e-5, "{total}");
    }

    #[test]
    fn non_manifold_edge_is_refused() {
        let pos = vec![Vec3::ZERO, Vec3::X, Vec3::Y, Vec3::Z, Vec3::NEG_Y];
        let tris = [[0, 1, 2], [0, 1, 3], [0, 1, 4]];
        assert_eq!(edges_and_bend_quads(&tris), Err(MeshError::NonManifold(0, 1)));
        assert!(validate(&pos, &tris).is_ok());
    }

    #[test]
    fn bad_meshes_are_refused_before_building() {
        assert_eq!(validate(&[Vec3::ZERO], &[]), Err(MeshError::Empty));
        assert!(matches!(validate(&[Vec3::ZERO; 3], &[[0, 1, 3]]), Err(MeshError::IndexOutOfRange { .. })));
        assert_eq!(validate(&[Vec3::NAN, Vec3::X, Vec3::Y], &[[0, 1, 2]]), Err(MeshError::NonFinite(0)));
        assert!(matches!(grid(5000, 5000, 1.0, 1.0), Err(MeshError::TooLarge(_))));
        let degenerate = [Vec3::ZERO, Vec3::X, Vec3::X * 2.0];
        assert_eq!(lumped_masses(&degenerate, &[[0, 1, 2]], 1.0), Err(MeshError::Massless(0)));
    }
}
