//! A quick lower bound on how far a point lies outside a triangle mesh collider, so that the many cloth vertices
//! far from a mesh are rejected before the exact query (§3.4's continuous test asks the closest surface point of
//! every vertex whose ray reaches the mesh's bounding sphere). A uniform grid over the mesh, built once in the
//! mesh's own frame, in the spirit of the signed distance fields FleX and Velvet collide cloth against: each cell
//! away from the surface keeps a lower bound on the distance of its points from the surface and the side it lies
//! on (inside or out, from the angle-weighted pseudo-normals of Bærentzen and Aanæs (2005), as parry decides
//! them); a cell the surface may cross keeps 0 and the few triangles that can hold the closest surface point of
//! any point in it, so the exact closest-point query there tests those alone instead of walking a tree.

use bevy::math::{UVec3, Vec3};

use super::uniform_grid::UniformGrid;

/// Cells along the longest side of the mesh's box.
const RESOLUTION: f32 = 96.0;
/// Above this many (cell, triangle) pairs while binning, the mesh is too fine for its grid and gets none.
const MAX_BINNED: usize = 1 << 24;

/// Where on a triangle its closest point to a query lies: a corner (0–2), a side (0: ab, 1: bc, 2: ca) or the
/// face.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Feature {
    Corner(u8),
    Side(u8),
    Face,
}

/// A triangle mesh with its pseudo-normals.
#[derive(Clone, Debug)]
struct OrientedMesh {
    vertices: Vec<Vec3>,
    triangles: Vec<[u32; 3]>,
    face_normals: Vec<Vec3>,
    /// Per triangle, the pseudo-normal of each side (ab, bc, ca): the sum of its faces' normals.
    side_normals: Vec<[Vec3; 3]>,
    /// Per vertex, the sum of its faces' normals weighted by their angles there.
    corner_normals: Vec<Vec3>,
}

impl OrientedMesh {
    fn new(vertices: &[Vec3], triangles: &[[u32; 3]]) -> Self {
        let corners = |t: &[u32; 3]| t.map(|i| vertices[i as usize]);
        let mut corner_normals = vec![Vec3::ZERO; vertices.len()];
        let mut sides: Vec<([u32; 2], Vec3)> = Vec::with_capacity(3 * triangles.len());
        let face_normals = triangles
            .iter()
            .map(|t| {
                let [a, b, c] = corners(t);
                let n = (b - a).cross(c - a).normalize_or_zero();
                let angles = [(b - a).angle_between(c - a), (a - b).angle_between(c - b), (b - c).angle_between(a - c)];
                for (&i, angle) in t.iter().zip(angles) {
                    corner_normals[i as usize] += n * angle;
                }
                let [i, j, k] = *t;
                sides.extend([[i, j], [j, k], [k, i]].map(|[u, v]| ([u.min(v), u.max(v)], n)));
                n
            })
            .collect();
        sides.sort_unstable_by_key(|s| s.0);
        let sum = |[u, v]: [u32; 2]| {
            let key = [u.min(v), u.max(v)];
            let from = sides.partition_point(|s| s.0 < key);
            sides[from..].iter().take_while(|s| s.0 == key).map(|s| s.1).sum::<Vec3>()
        };
        let side_normals = triangles.iter().map(|&[i, j, k]| [[i, j], [j, k], [k, i]].map(sum)).collect();
        let (vertices, triangles) = (vertices.to_vec(), triangles.to_vec());
        Self { vertices, triangles, face_normals, side_normals, corner_normals }
    }

    fn corners(&self, t: usize) -> [Vec3; 3] {
        self.triangles[t].map(|i| self.vertices[i as usize])
    }

    /// The distance from `q` to triangle `t`.
    fn distance(&self, q: Vec3, t: usize) -> f32 {
        q.distance(closest_on_triangle(q, self.corners(t)).0)
    }

    /// Whether `q` lies inside the solid by the pseudo-normal of the feature of triangle `t` closest to it (the
    /// triangle closest to `q`).
    fn is_inside(&self, q: Vec3, t: usize) -> bool {
        let (point, feature) = closest_on_triangle(q, self.corners(t));
        (q - point).dot(self.pseudo_normal(t, feature)) <= 0.0
    }

    /// The pseudo-normal of a feature of triangle `t`: its face's normal, a side's faces' sum, a corner's
    /// angle-weighted sum.
    fn pseudo_normal(&self, t: usize, feature: Feature) -> Vec3 {
        match feature {
            Feature::Face => self.face_normals[t],
            Feature::Side(k) => self.side_normals[t][k as usize],
            Feature::Corner(k) => self.corner_normals[self.triangles[t][k as usize] as usize],
        }
    }
}

/// The cells the surface may cross, each with the triangles that can hold the closest surface point of a point in
/// it, and the mesh they index: [`ClearanceGrid::closest`].
#[derive(Clone, Debug)]
struct NearSurface {
    mesh: OrientedMesh,
    /// Per cell, where its triangles start in `triangles` (one entry more than cells; none for a far cell).
    start: Vec<u32>,
    triangles: Vec<u32>,
    /// Whether the mesh is a closed solid (a shell has no inside).
    solid: bool,
}

/// The grid of clearances around a triangle mesh, in the mesh's frame.
#[derive(Clone, Debug)]
pub struct ClearanceGrid {
    /// The mesh's box.
    bounds: (Vec3, Vec3),
    grid: UniformGrid,
    /// Per cell, a lower bound on the distance of its points from the surface: positive outside the solid,
    /// negative inside, 0 near the surface or where the side is unknown.
    clearances: Vec<f32>,
    /// The triangles near the surface's cells.
    near: NearSurface,
}

impl ClearanceGrid {
    /// The grid of the mesh `triangles` over `vertices`, a closed outward-facing surface when `solid` (otherwise a
    /// shell, with no inside), or `None` for a mesh with no triangle, an index out of range, a coordinate not
    /// finite, or too many triangles for the grid.
    pub fn new(vertices: &[Vec3], triangles: &[[u32; 3]], solid: bool) -> Option<Self> {
        let bad_index = triangles.iter().flatten().any(|&i| i as usize >= vertices.len());
        if triangles.is_empty() || bad_index || !vertices.iter().all(|v| v.is_finite()) {
            return None;
        }
        let bounds = vertices.iter().fold((Vec3::MAX, Vec3::MIN), |(lo, hi), &v| (lo.min(v), hi.max(v)));
        let cell = ((bounds.1 - bounds.0).max_element() / RESOLUTION).max(1e-4);
        // the border cells lie farther than the band beyond the mesh's box: no triangle is binned to them
        let pad = band(cell) + 2.0 * cell;
        let dims = ((bounds.1 - bounds.0 + Vec3::splat(2.0 * pad)) / cell).ceil().as_uvec3().max(UVec3::ONE);
        let grid = UniformGrid { origin: bounds.0 - Vec3::splat(pad), cell, dims };
        let mesh = OrientedMesh::new(vertices, triangles);
        let near = NearSurface { mesh, start: Vec::new(), triangles: Vec::new(), solid };
        let mut clearances = Self { bounds, grid, clearances: Vec::new(), near };
        let binned = clearances.bin_triangles()?;
        let known = clearances.fill_cells(&binned);
        clearances.flood_sides(known);
        Some(clearances)
    }

    /// For every cell, the triangles whose box grown by the band overlaps it (a superset of those within the band
    /// of any of its points), as (start per cell, triangle indices); `None` if there would be too many.
    fn bin_triangles(&self) -> Option<(Vec<u32>, Vec<u32>)> {
        let mesh = &self.near.mesh;
        let reach = Vec3::splat(band(self.grid.cell));
        let boxes: Vec<(u32, Vec3, Vec3)> = (0..mesh.triangles.len())
            .filter(|&t| mesh.face_normals[t] != Vec3::ZERO)
            .map(|t| {
                let [a, b, c] = mesh.corners(t);
                (t as u32, a.min(b).min(c) - reach, a.max(b).max(c) + reach)
            })
            .collect();
        let cells = |&(_, min, max): &(u32, Vec3, Vec3)| {
            let span = ((max - min) / self.grid.cell).ceil() + 1.0;
            (span.x * span.y * span.z) as usize
        };
        (boxes.iter().map(cells).sum::<usize>() <= MAX_BINNED).then(|| self.grid.bin(&boxes))
    }

    /// Each cell's clearance from the triangles binned to it, and the near cells' triangles; returns which cells
    /// know their side.
    fn fill_cells(&mut self, (start, binned): &(Vec<u32>, Vec<u32>)) -> Vec<bool> {
        let (band, diagonal) = (band(self.grid.cell), diagonal(self.grid.cell));
        let mut known = Vec::with_capacity(self.grid.len());
        self.clearances = Vec::with_capacity(known.capacity());
        let NearSurface { mesh, start: near_start, triangles: near, solid } = &mut self.near;
        near_start.push(0);
        for c in self.grid.every_cell() {
            let (index, centre) = (self.grid.index(c), self.grid.centre(c));
            let candidates = &binned[start[index] as usize..start[index + 1] as usize];
            let nearest =
                candidates.iter().map(|&t| (mesh.distance(centre, t as usize), t)).min_by(|a, b| a.0.total_cmp(&b.0));
            let d = nearest.map_or(f32::INFINITY, |(d, _)| d);
            if d + diagonal <= band {
                // the surface may cross the cell. A point of it lies within d + diagonal / 2 of the surface, so
                // its closest triangle lies within d + diagonal of the centre (and is binned here: d + diagonal is
                // within the band); the triangle a hair farther is kept too, for the rounding
                let reach = d + diagonal * (1.0 + 1e-4);
                near.extend(candidates.iter().filter(|&&t| mesh.distance(centre, t as usize) <= reach));
                near_start.push(near.len() as u32);
                self.clearances.push(0.0);
                known.push(true);
                continue;
            }
            near_start.push(near.len() as u32);
            // a triangle not binned here is farther than the band from every point of the cell
            let bound = (d - 0.5 * diagonal).min(band);
            let side = match nearest {
                Some((d, t)) if d <= band && *solid => Some(mesh.is_inside(centre, t as usize)),
                _ if !*solid => Some(false),
                _ => None,
            };
            self.clearances.push(if side == Some(true) { -bound } else { bound });
            known.push(side.is_some());
        }
        known
    }

    /// Gives the far cells whose side is unknown the side of the far cells next to them (the surface crosses no
    /// far cell, so neighbouring far cells lie on one side); the grid's border lies outside the mesh's box. A cell
    /// no side reaches keeps no clearance.
    fn flood_sides(&mut self, mut known: Vec<bool>) {
        let d = self.grid.dims;
        let mut queue: Vec<UVec3> = Vec::new();
        for c in self.grid.every_cell() {
            let i = self.grid.index(c);
            known[i] |= c.cmpeq(UVec3::ZERO).any() || c.cmpeq(d - 1).any();
            if known[i] && self.clearances[i] != 0.0 {
                queue.push(c);
            }
        }
        while let Some(c) = queue.pop() {
            let side = self.clearances[self.grid.index(c)].signum();
            for (axis, step) in [(0, -1i32), (0, 1), (1, -1), (1, 1), (2, -1), (2, 1)] {
                let k = c[axis] as i32 + step;
                if k < 0 || k >= d[axis] as i32 {
                    continue;
                }
                let mut n = c;
                n[axis] = k as u32;
                let i = self.grid.index(n);
                if !known[i] {
                    known[i] = true;
                    self.clearances[i] *= side;
                    queue.push(n);
                }
            }
        }
        for (clearance, known) in self.clearances.iter_mut().zip(known) {
            if !known {
                *clearance = 0.0;
            }
        }
    }

    /// The surface point closest to `q`, whether `q` lies inside the solid, and the way out (along the offset from
    /// the point to `q`, away from the solid; the feature's pseudo-normal for a point on the surface), when `q`
    /// lies in a cell the surface may cross; `None` elsewhere, where the caller asks the whole mesh.
    pub fn closest(&self, q: Vec3) -> Option<(Vec3, bool, Vec3)> {
        let NearSurface { mesh, start, triangles, solid } = &self.near;
        let index = self.grid.index(self.grid.cell_of(q)?);
        let candidates = triangles.get(*start.get(index)? as usize..*start.get(index + 1)? as usize)?;
        let mut best: Option<(f32, usize, Vec3, Feature)> = None;
        for &t in candidates {
            let (point, feature) = closest_on_triangle(q, mesh.corners(t as usize));
            let d = q.distance_squared(point);
            if best.is_none_or(|(nearest, ..)| d < nearest) {
                best = Some((d, t as usize, point, feature));
            }
        }
        let (_, t, point, feature) = best?;
        let (away, pseudo_normal) = (q - point, mesh.pseudo_normal(t, feature));
        let inside = *solid && away.dot(pseudo_normal) <= 0.0;
        let normal = if away.length_squared() > 1e-12 {
            if inside { -away } else { away }.normalize()
        } else {
            pseudo_normal.normalize_or(Vec3::Y)
        };
        Some((point, inside, normal))
    }

    /// A lower bound on the distance from `q` to the surface when `q` lies outside the solid; 0 when it may lie
    /// inside or near the surface.
    pub fn clearance(&self, q: Vec3) -> f32 {
        match self.grid.cell_of(q) {
            Some(c) => self.clearances[self.grid.index(c)].max(0.0),
            None => (self.bounds.0 - q).max(q - self.bounds.1).max(Vec3::ZERO).length(),
        }
    }
}

/// The diagonal of a cell of side `cell`.
fn diagonal(cell: f32) -> f32 {
    cell * 3f32.sqrt()
}

/// How far beyond a triangle's box it is binned: the farthest a cell is measured from.
fn band(cell: f32) -> f32 {
    2.0 * diagonal(cell)
}

/// The point of triangle a, b, c closest to `q` and the feature it lies on (Ericson, "Real-Time Collision
/// Detection", §5.1.5).
#[inline]
fn closest_on_triangle(q: Vec3, [a, b, c]: [Vec3; 3]) -> (Vec3, Feature) {
    let (ab, ac, ap) = (b - a, c - a, q - a);
    let (d1, d2) = (ab.dot(ap), ac.dot(ap));
    if d1 <= 0.0 && d2 <= 0.0 {
        return (a, Feature::Corner(0));
    }
    let bp = q - b;
    let (d3, d4) = (ab.dot(bp), ac.dot(bp));
    if d3 >= 0.0 && d4 <= d3 {
        return (b, Feature::Corner(1));
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        return (a + ab * (d1 / (d1 - d3)), Feature::Side(0));
    }
    let cp = q - c;
    let (d5, d6) = (ab.dot(cp), ac.dot(cp));
    if d6 >= 0.0 && d5 <= d6 {
        return (c, Feature::Corner(2));
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        return (a + ac * (d2 / (d2 - d6)), Feature::Side(2));
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && d4 - d3 >= 0.0 && d5 - d6 >= 0.0 {
        return (b + (c - b) * ((d4 - d3) / ((d4 - d3) + (d5 - d6))), Feature::Side(1));
    }
    let denom = 1.0 / (va + vb + vc);
    (a + ab * (vb * denom) + ac * (vc * denom), Feature::Face)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The unit cube [-1, 1]³, outward.
    pub(crate) fn cube() -> (Vec<Vec3>, Vec<[u32; 3]>) {
        let vertices = (0..8)
            .map(|i| Vec3::new([-1.0, 1.0][i & 1], [-1.0, 1.0][(i >> 1) & 1], [-1.0, 1.0][(i >> 2) & 1]))
            .collect();
        #[rustfmt::skip]
        let triangles = vec![
            [0, 2, 1], [1, 2, 3], [4, 5, 6], [5, 7, 6], [0, 1, 4], [1, 5, 4],
            [2, 6, 3], [3, 6, 7], [0, 4, 2], [2, 4, 6], [1, 3, 5], [3, 7, 5],
        ];
        (vertices, triangles)
    }

    fn box_distance(q: Vec3) -> f32 {
        let d = q.abs() - Vec3::ONE;
        d.max(Vec3::ZERO).length() + d.max_element().min(0.0)
    }

    /// Points on a lattice through and around the cube, off its symmetry planes.
    fn probes() -> impl Iterator<Item = Vec3> {
        (0..13_824).map(|k| {
            let t = Vec3::new((k % 24) as f32, ((k / 24) % 24) as f32, (k / 576) as f32) / 23.0;
            Vec3::new(-1.6, -1.55, -1.7) + t * Vec3::new(3.3, 3.2, 3.35)
        })
    }

    #[test]
    fn the_closest_point_on_a_triangle_lies_in_the_right_feature() {
        let tri = [Vec3::ZERO, Vec3::X, Vec3::Y];
        assert_eq!(closest_on_triangle(Vec3::new(-1.0, -1.0, 0.5), tri), (Vec3::ZERO, Feature::Corner(0)));
        assert_eq!(closest_on_triangle(Vec3::new(2.0, -0.1, 0.0), tri), (Vec3::X, Feature::Corner(1)));
        assert_eq!(closest_on_triangle(Vec3::new(-0.1, 3.0, 0.0), tri), (Vec3::Y, Feature::Corner(2)));
        assert_eq!(closest_on_triangle(Vec3::new(0.5, -1.0, 0.0), tri), (Vec3::new(0.5, 0.0, 0.0), Feature::Side(0)));
        let (p, f) = closest_on_triangle(Vec3::new(1.0, 1.0, 0.0), tri);
        assert!(p.distance(Vec3::new(0.5, 0.5, 0.0)) < 1e-6 && f == Feature::Side(1));
        assert_eq!(closest_on_triangle(Vec3::new(-2.0, 0.5, 0.0), tri), (Vec3::new(0.0, 0.5, 0.0), Feature::Side(2)));
        let (p, f) = closest_on_triangle(Vec3::new(0.25, 0.25, -3.0), tri);
        assert!(p.distance(Vec3::new(0.25, 0.25, 0.0)) < 1e-6 && f == Feature::Face);
    }

    #[test]
    fn a_cube_gives_lower_bounds_that_reach_its_distance_away_from_the_surface() {
        let (vertices, triangles) = cube();
        let [solid, shell] = [true, false].map(|s| ClearanceGrid::new(&vertices, &triangles, s).expect("a grid"));
        let (mut clear, mut inside) = (0, 0);
        for q in probes() {
            let exact = box_distance(q);
            let (of_solid, of_shell) = (solid.clearance(q), shell.clearance(q));
            assert!(of_solid <= exact.max(0.0) + 1e-6, "{q}: clearance {of_solid} above {exact}");
            assert!(of_shell <= exact.abs() + 1e-6, "{q}: the shell's clearance {of_shell} above {}", exact.abs());
            if exact > 0.0 {
                assert_eq!(of_solid, of_shell, "{q}: outside, the solid and the shell are as far");
            }
            // a cell is 2/96 m, the band twice its diagonal: farther than that, the bound is at least half a cell
            if exact.abs() > 0.1 {
                assert!(of_shell > 0.01, "{q}: {exact} from the faces but a clearance of {of_shell}");
                if exact > 0.0 {
                    clear += 1;
                } else {
                    assert_eq!(of_solid, 0.0, "{q} lies inside");
                    inside += 1;
                }
            }
        }
        assert!(clear > 5_000 && inside > 500, "{clear} clear, {inside} inside: the probes must reach both");
    }

    /// Near the surface the grid's own query answers, and as the exact distance does: the point as far as the
    /// cube's signed distance says, on the right side; a shell is never inside.
    #[test]
    fn near_the_surface_the_grid_finds_the_closest_point_and_the_side() {
        let (vertices, triangles) = cube();
        let [solid, shell] = [true, false].map(|s| ClearanceGrid::new(&vertices, &triangles, s).expect("a grid"));
        let mut answered = 0;
        for q in probes() {
            let Some((point, inside, normal)) = solid.closest(q) else { continue };
            let exact = box_distance(q);
            assert!((q.distance(point) - exact.abs()).abs() < 1e-5, "{q}: {point} for a distance {exact}");
            assert_eq!(inside, exact < 0.0, "{q}: inside {inside} at {exact}");
            assert!((normal.length() - 1.0).abs() < 1e-5 && (q - point).dot(normal) * exact.signum() >= -1e-6);
            let (at, in_shell, _) = shell.closest(q).expect("the same cells");
            assert!(at.distance(point) < 1e-6 && !in_shell);
            answered += 1;
        }
        assert!(answered > 500, "{answered} probes near the surface");
    }

    #[test]
    fn a_mesh_with_a_bad_index_no_triangle_or_a_nan_gets_no_grid() {
        let (vertices, _) = cube();
        assert!(ClearanceGrid::new(&vertices, &[[0, 1, 8]], true).is_none());
        assert!(ClearanceGrid::new(&vertices, &[], true).is_none());
        assert!(ClearanceGrid::new(&[Vec3::NAN, Vec3::ONE, Vec3::X], &[[0, 1, 2]], true).is_none());
    }
}
