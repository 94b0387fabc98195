//! Tearing (§5 "Tearing and stability"): "Whenever the stretching of an edge exceeds a specified threshold value,
//! we select one of the edge's adjacent vertices. We then put a split plane through that vertex perpendicular to
//! the edge direction and split the vertex. All triangles above the split plane are assigned to the original
//! vertex while all triangles below are assigned to the duplicate."
//!
//! # Algorithm
//!
//! 1. **Detection.** The stretch of a stretch constraint (one per mesh edge, §4.1) is the ratio |p_a − p_b| / l0
//!    of its current length (in the predictions `p`) to its rest length; an edge tears when the ratio exceeds the
//!    threshold (`most_stretched_edge`, `most_stretched_edges`).
//! 2. **Which endpoint.** A free endpoint is split before a pinned/attached/held one (w = 0) or one a body holds
//!    (`held`, two-way: w > 0), and among equals the one with more incident triangles, then the edge's first
//!    vertex. If that endpoint cannot be split
//!    (below), the other one is tried. A vertex with fewer than two incident triangles is never split.
//! 3. **Split plane.** The plane passes through the chosen vertex `v` at `p_v` with normal n = p_u − p_v, where `u`
//!    is the edge's other endpoint ("perpendicular to the edge direction"), using the predictions `p` (the latest
//!    positions: tear after the projection loop, or after the velocity update when x = p). "Above" is the side
//!    of `u`: a triangle incident to `v` whose centroid c has (c − p_v)·n ≥ 0 keeps `v`; every other incident
//!    triangle is given the duplicate. The stretched edge therefore usually stays with the original, and the crack
//!    opens through `v` across the edge, perpendicular to the pull, which is how a tear propagates. If all
//!    incident triangles lie on one side, the vertex cannot be split.
//! 4. **Duplicate.** A new vertex is appended to every per-vertex array with the original's x, p, v and texture
//!    coordinate. The original's mass m is shared in proportion to the *rest* areas of the triangles each copy
//!    keeps (Heron's formula on the stretch rest lengths, so a stretched fan does not attract mass), each share
//!    clamped to at least `MIN_MASS_FRACTION`·m, and the two masses sum to m exactly. Inverse masses become
//!    1/m, except that a pinned original (w = 0) stays pinned while its duplicate is free: attachments refer to
//!    the original index, so the torn-off part leaves the pin (a caller that wants both held must attach the
//!    duplicate itself).
//! 5. **Local constraint update.** Only constraints at `v` change; nothing else is re-derived:
//!    - stretch constraints at `v` are rebuilt from the triangles now incident to `v` and to the duplicate `d`: an
//!      edge (v, u) used on both sides becomes (v, u) and (d, u) with the same rest length, one used only by moved
//!      triangles becomes (d, u), one used by no triangle disappears;
//!    - bending constraints hinged on an edge at `v` are rebuilt from the adjacency of the triangles around `v`
//!      and `d`: a pair on one side survives (hinge relabelled to `d` if moved) with its rest angle and distance,
//!      a pair separated by the split no longer shares an edge and is removed; a bending constraint with `v` as an
//!      opposite vertex keeps its hinge and points to `d` if that triangle moved.
//!
//!    Rest values always come from the original constraint (duplicate mapped back to the original), so tearing
//!    never changes a rest length, angle or distance. Removed constraints are `swap_remove`d and new ones are
//!    appended, so the global order of the constraint arrays is not kept (edges stay `[lo, hi]`, hinges
//!    `p1 < p2`). Anything precomputed from those arrays (graph colouring, batches, caches) must be rebuilt after
//!    a tear.
//!
//! Without a vertex→triangle adjacency in the data model each tear makes a few linear passes over the triangles,
//! edges and bending constraints (O(T + E + Q)) and allocates a few small vectors; tearing is rare, so that is
//! cheap compared with a solver iteration. A tear never makes an edge non-manifold (it only relabels vertices), but it can leave
//! a vertex shared by two fans that touch only at it (a "bow tie") when the plane cuts a crumpled fan.

use bevy::math::Vec3;

/// The smallest share of the split vertex's mass that either copy receives, so that neither becomes massless
/// when one side's triangles have (almost) no rest area.
pub(crate) const MIN_MASS_FRACTION: f32 = 0.01;

/// Mutable borrows of the per-vertex and per-constraint arrays of one cloth, everything a tear edits.
///
/// Per-vertex arrays (`x`, `p`, `v`, `mass`, `w` and `uvs` unless empty) have one entry per vertex;
/// `rest_length` parallels `edges`, `rest_angle` and `rest_distance` parallel `quads`. A tear refuses to touch a
/// cloth whose lengths disagree.
pub(crate) struct TearableCloth<'a> {
    /// Positions x_i.
    pub x: &'a mut Vec<Vec3>,
    /// Predicted positions p_i; the split plane is placed in these.
    pub p: &'a mut Vec<Vec3>,
    /// Velocities v_i.
    pub v: &'a mut Vec<Vec3>,
    /// Masses m_i (never 0).
    pub mass: &'a mut Vec<f32>,
    /// Inverse masses w_i; 0 for pinned, attached or held vertices.
    pub w: &'a mut Vec<f32>,
    /// Vertices a rigid body holds (§4.2 attachments, w > 0), ascending: split after free ones, like pinned ones,
    /// so a body tears the cloth open instead of tearing off the vertices it holds.
    pub held: &'a [u32],
    /// Triangles, as indices into the per-vertex arrays.
    pub triangles: &'a mut Vec<[u32; 3]>,
    /// Texture coordinates, one per vertex, or empty (then left empty).
    pub uvs: &'a mut Vec<[f32; 2]>,
    /// Stretch constraints, one per unique mesh edge, stored `[lo, hi]`.
    pub edges: &'a mut Vec<[u32; 2]>,
    /// Rest lengths l0, one per edge.
    pub rest_length: &'a mut Vec<f32>,
    /// Bending constraints `[p1, p2, p3, p4]`: the triangles sharing edge p1–p2 with opposite vertices p3, p4.
    pub quads: &'a mut Vec<[u32; 4]>,
    /// Rest dihedral angles φ0, one per quad.
    pub rest_angle: &'a mut Vec<f32>,
    /// Rest distance |p3 − p4|.
    pub rest_distance: &'a mut Vec<f32>,
}

impl TearableCloth<'_> {
    /// Number of vertices.
    pub fn vertex_count(&self) -> usize {
        self.x.len()
    }

    /// Whether all parallel arrays have matching lengths and a further vertex can still be indexed by `u32`.
    fn is_consistent(&self) -> bool {
        let n = self.x.len();
        n < u32::MAX as usize
            && [self.p.len(), self.v.len(), self.mass.len(), self.w.len()].iter().all(|&len| len == n)
            && (self.uvs.is_empty() || self.uvs.len() == n)
            && self.rest_length.len() == self.edges.len()
            && self.rest_angle.len() == self.quads.len()
            && self.rest_distance.len() == self.quads.len()
    }
}

/// The result of one tear: `split_vertex` kept the triangles above the split plane, the newly appended
/// `duplicate` (always the last vertex) took the others.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct TearOutcome {
    /// The vertex split; it keeps the triangles above the split plane.
    pub split_vertex: u32,
    /// The appended duplicate (the last vertex); it takes the other triangles.
    pub duplicate: u32,
}

/// An edge stretched beyond the tearing threshold, identified by its endpoints (edge indices change when a tear
/// removes constraints).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Overstretched {
    /// The edge's endpoints.
    pub vertices: [u32; 2],
    /// |p_a − p_b| / l0.
    pub ratio: f32,
}

/// |p_a − p_b| / l0, or `None` for a non-positive rest length, an index out of range or a non-finite result.
fn stretch_ratio(p: &[Vec3], [a, b]: [u32; 2], rest_length: f32) -> Option<f32> {
    let ratio = p.get(a as usize)?.distance(*p.get(b as usize)?) / rest_length;
    (rest_length > 0.0 && ratio.is_finite()).then_some(ratio)
}

/// The index of the edge with the largest stretch ratio |p_a − p_b| / l0 strictly above `threshold` (a ratio:
/// 2.0 tears at twice the rest length), or `None` if no edge exceeds it. Edges with a non-positive rest length,
/// out-of-range vertices or non-finite lengths are ignored; on ties the first edge wins.
pub(crate) fn most_stretched_edge(
    p: &[Vec3],
    edges: &[[u32; 2]],
    rest_length: &[f32],
    threshold: f32,
) -> Option<usize> {
    let mut best: Option<(usize, f32)> = None;
    for (i, (&edge, &l0)) in edges.iter().zip(rest_length).enumerate() {
        if let Some(ratio) = stretch_ratio(p, edge, l0)
            && ratio > threshold
            && best.is_none_or(|(_, worst)| ratio > worst)
        {
            best = Some((i, ratio));
        }
    }
    best.map(|(i, _)| i)
}

/// Fills `out` (cleared first; its capacity is reused) with up to `max_count` edges whose stretch ratio exceeds
/// `threshold`, worst first. Same filtering as [`most_stretched_edge`]; one pass plus a partial sort.
pub(crate) fn most_stretched_edges(
    p: &[Vec3],
    edges: &[[u32; 2]],
    rest_length: &[f32],
    threshold: f32,
    max_count: usize,
    out: &mut Vec<Overstretched>,
) {
    out.clear();
    if max_count == 0 {
        return;
    }
    out.extend(edges.iter().zip(rest_length).filter_map(|(&vertices, &l0)| {
        stretch_ratio(p, vertices, l0).filter(|&ratio| ratio > threshold).map(|ratio| Overstretched { vertices, ratio })
    }));
    let worst_first = |a: &Overstretched, b: &Overstretched| b.ratio.total_cmp(&a.ratio);
    if out.len() > max_count {
        out.select_nth_unstable_by(max_count - 1, worst_first);
        out.truncate(max_count);
    }
    out.sort_unstable_by(worst_first);
}

/// Tears up to `max_tears` of the worst edges stretched beyond `threshold` (found once, before any tear, into
/// `scratch`), and returns how many tears happened. An edge that an earlier tear of the same call already
/// relabelled or removed is skipped; it is found again next time if still overstretched.
pub(crate) fn tear_overstretched(
    cloth: &mut TearableCloth,
    threshold: f32,
    max_tears: usize,
    scratch: &mut Vec<Overstretched>,
) -> usize {
    most_stretched_edges(cloth.p, cloth.edges, cloth.rest_length, threshold, max_tears, scratch);
    scratch.iter().filter(|e| tear_between(cloth, e.vertices[0], e.vertices[1]).is_some()).count()
}

/// Tears the stretch constraint between vertices `a` and `b`, in either order (§5): splits one of its endpoints as
/// described in the [module documentation](self). Returns `None`, changing nothing, if there is no such constraint,
/// the cloth's arrays are inconsistent, or neither endpoint can be split (fewer than two incident triangles, or all
/// of them on one side of the split plane).
pub(crate) fn tear_between(cloth: &mut TearableCloth, a: u32, b: u32) -> Option<TearOutcome> {
    let n = cloth.vertex_count();
    if a == b || a as usize >= n || b as usize >= n || !cloth.is_consistent() {
        return None;
    }
    if !cloth.edges.iter().any(|&e| e == [a, b] || e == [b, a]) {
        return None;
    }
    let (mut fan_a, mut fan_b) = (Vec::new(), Vec::new());
    for (t, tri) in cloth.triangles.iter().enumerate() {
        if tri.contains(&a) {
            fan_a.push(t);
        }
        if tri.contains(&b) {
            fan_b.push(t);
        }
    }
    let free = |vertex: u32| cloth.w[vertex as usize] > 0.0 && cloth.held.binary_search(&vertex).is_err();
    let rank = |vertex: u32, fan: &[usize]| (free(vertex), fan.len());
    let candidates =
        if rank(b, &fan_b) > rank(a, &fan_a) { [(b, a, fan_b), (a, b, fan_a)] } else { [(a, b, fan_a), (b, a, fan_b)] };
    let plan = candidates.into_iter().find_map(|(vertex, other, fan)| plan_split(cloth, vertex, other, &fan))?;
    Some(apply_split(cloth, plan))
}

/// Everything one vertex split changes, worked out by [`plan_split`] before the cloth is touched and carried out
/// by [`apply_split`].
#[derive(Clone, Debug, PartialEq)]
struct SplitPlan {
    /// The vertex split; it keeps the fan triangles on the side of the plane the edge's other endpoint is on.
    vertex: u32,
    /// The duplicate's index: the vertex count before the split.
    duplicate: u32,
    /// The fan triangles given to the duplicate, in fan order.
    moved_triangles: Vec<usize>,
    /// The split vertex's mass after the split, and the duplicate's; they sum to its mass before.
    kept_mass: f32,
    duplicate_mass: f32,
    /// The stretch constraints at the vertex, ascending (removed from the back, so the others stay valid).
    removed_edges: Vec<usize>,
    /// The stretch constraints appended after the removal, `[lo, hi]`, with their rest lengths.
    added_edges: Vec<([u32; 2], f32)>,
    /// Bending constraints (index, slot 2 or 3) whose opposite vertex becomes the duplicate.
    relabelled_quads: Vec<(usize, usize)>,
    /// The bending constraints hinged on an edge at the vertex, ascending (removed from the back).
    removed_quads: Vec<usize>,
    /// The bending constraints appended after the removal, with their rest angles and distances.
    added_quads: Vec<([u32; 4], f32, f32)>,
}

/// Plans splitting `v` by the plane through p_v with normal p_other − p_v; `fan` lists the triangles incident to
/// `v`. Reads the cloth only; `None` if `v` cannot be split (see [`tear_between`]).
fn plan_split(cloth: &TearableCloth, v: u32, other: u32, fan: &[usize]) -> Option<SplitPlan> {
    if fan.len() < 2 {
        return None;
    }
    let at = |i: u32| cloth.p.get(i as usize).copied();
    let origin = at(v)?;
    let normal = at(other)? - origin;
    let normal_length_squared = normal.length_squared();
    if !normal_length_squared.is_finite() || normal_length_squared <= 0.0 {
        return None;
    }

    // The fan before relabelling, which side of the plane each triangle is on, and its edge opposite v.
    let mut fan_tris = Vec::with_capacity(fan.len());
    let mut keep = Vec::with_capacity(fan.len());
    let mut outer = Vec::with_capacity(fan.len());
    for &t in fan {
        let tri = *cloth.triangles.get(t)?;
        let [u, w] = opposite_edge(tri, v)?;
        let centroid = (at(tri[0])? + at(tri[1])? + at(tri[2])?) / 3.0;
        fan_tris.push(tri);
        keep.push((centroid - origin).dot(normal) >= 0.0);
        outer.push(sorted([u, w]));
    }
    let moved = keep.iter().filter(|&&k| !k).count();
    if moved == 0 || moved == fan.len() {
        return None;
    }

    // Stretch constraints at v as (index, other endpoint, rest length); rest lengths of the fan's outer edges.
    let mut at_vertex: Vec<(usize, u32, f32)> = Vec::new();
    let mut outer_rest: Vec<Option<f32>> = vec![None; fan.len()];
    for (i, (&[e0, e1], &l0)) in cloth.edges.iter().zip(cloth.rest_length.iter()).enumerate() {
        if e0 == v || e1 == v {
            at_vertex.push((i, if e0 == v { e1 } else { e0 }, l0));
        } else {
            let key = sorted([e0, e1]);
            for (slot, _) in outer_rest.iter_mut().zip(&outer).filter(|&(_, &o)| o == key) {
                *slot = Some(l0);
            }
        }
    }
    let rest_to = |u: u32| at_vertex.iter().find(|&&(_, w, _)| w == u).map(|&(_, _, l0)| l0);

    // Mass shares from the rest areas of the triangles each copy keeps.
    let (mut kept_area, mut moved_area) = (0.0f32, 0.0f32);
    for (k, &tri) in fan_tris.iter().enumerate() {
        let [a, b] = outer[k];
        let area = match (rest_to(a), rest_to(b), outer_rest[k]) {
            (Some(la), Some(lb), Some(lab)) => heron_area(la, lb, lab),
            _ => None,
        }
        .or_else(|| Some(0.5 * (at(tri[1])? - at(tri[0])?).cross(at(tri[2])? - at(tri[0])?).length()))
        .unwrap_or(0.0);
        if keep[k] {
            kept_area += area;
        } else {
            moved_area += area;
        }
    }
    let mut dup_share = moved_area / (kept_area + moved_area);
    if !dup_share.is_finite() {
        dup_share = moved as f32 / fan.len() as f32;
    }
    let (kept_mass, dup_mass) = split_mass(cloth.mass[v as usize], dup_share)?;

    // Bending constraints at v: hinged on an edge (v, u) (re-derived below), or with v opposite the hinge
    // (relabelled in place if that triangle moves).
    let mut hinged: Vec<usize> = Vec::new();
    let mut relabel: Vec<(usize, usize)> = Vec::new();
    for (i, q) in cloth.quads.iter().enumerate() {
        if q[0] == v || q[1] == v {
            hinged.push(i);
        } else if let Some(slot) = (2..4).find(|&s| q[s] == v)
            && let Some(k) = outer.iter().position(|&o| o == sorted([q[0], q[1]]))
            && !keep[k]
        {
            relabel.push((i, slot));
        }
    }

    let vi = v as usize;
    let d = cloth.x.len() as u32;
    let owner = |k: usize| if keep[k] { v } else { d };
    let moved_triangles = fan.iter().zip(&keep).filter(|&(_, &k)| !k).map(|(&t, _)| t).collect();

    // Stretch constraints: the edges of the fan triangles at their (new) owner, rest lengths from the originals.
    let mut new_edges: Vec<(u32, u32)> = Vec::with_capacity(2 * fan.len());
    for (k, o) in outer.iter().enumerate() {
        for &u in o {
            if !new_edges.contains(&(owner(k), u)) {
                new_edges.push((owner(k), u));
            }
        }
    }
    let added_edges = new_edges
        .iter()
        .map(|&(o, u)| (sorted([o, u]), rest_to(u).unwrap_or_else(|| cloth.x[vi].distance(cloth.x[u as usize]))))
        .collect();

    // Bending constraints: the pairs of fan triangles on one side that still share an edge at v or d.
    let mut new_quads: Vec<([u32; 4], f32, f32)> = Vec::new();
    for i in 0..fan.len() {
        for j in i + 1..fan.len() {
            if keep[i] != keep[j] {
                continue;
            }
            let (oi, oj) = (outer[i], outer[j]);
            let Some(u) = shared_vertex(oi, oj) else { continue };
            let (ci, cj) = (other_of(oi, u), other_of(oj, u));
            let opposite = sorted([ci, cj]);
            let old = hinged
                .iter()
                .map(|&h| (h, cloth.quads[h]))
                .find(|&(_, q)| sorted([q[0], q[1]]) == sorted([v, u]) && sorted([q[2], q[3]]) == opposite);
            let o = owner(i);
            new_quads.push(match old {
                Some((h, q)) => {
                    let relabelled = |x: u32| if x == v { o } else { x };
                    let [p1, p2] = sorted([relabelled(q[0]), relabelled(q[1])]);
                    ([p1, p2, q[2], q[3]], cloth.rest_angle[h], cloth.rest_distance[h])
                }
                None => {
                    let [p1, p2] = sorted([o, u]);
                    let pos = |x: u32| cloth.x[if x == d { vi } else { x as usize }];
                    let angle = dihedral_angle([pos(p1), pos(p2), pos(ci), pos(cj)]);
                    ([p1, p2, ci, cj], angle, pos(ci).distance(pos(cj)))
                }
            });
        }
    }

    Some(SplitPlan {
        vertex: v,
        duplicate: d,
        moved_triangles,
        kept_mass,
        duplicate_mass: dup_mass,
        removed_edges: at_vertex.iter().map(|&(i, _, _)| i).collect(),
        added_edges,
        relabelled_quads: relabel,
        removed_quads: hinged,
        added_quads: new_quads,
    })
}

/// Carries out `plan`, made by [`plan_split`] for this cloth as it is now: relabels the moved triangles, appends
/// the duplicate, shares the mass and replaces the constraints at the split vertex.
fn apply_split(cloth: &mut TearableCloth, plan: SplitPlan) -> TearOutcome {
    let SplitPlan { vertex: v, duplicate: d, kept_mass, duplicate_mass, .. } = plan;
    debug_assert_eq!(d as usize, cloth.x.len(), "the plan was made for this cloth");
    let vi = v as usize;

    for &t in &plan.moved_triangles {
        for i in cloth.triangles[t].iter_mut().filter(|i| **i == v) {
            *i = d;
        }
    }

    cloth.x.push(cloth.x[vi]);
    cloth.p.push(cloth.p[vi]);
    cloth.v.push(cloth.v[vi]);
    if !cloth.uvs.is_empty() {
        cloth.uvs.push(cloth.uvs[vi]);
    }
    cloth.mass[vi] = kept_mass;
    cloth.mass.push(duplicate_mass);
    if cloth.w[vi] != 0.0 {
        cloth.w[vi] = 1.0 / kept_mass;
    }
    cloth.w.push(1.0 / duplicate_mass);

    // Removing from the back keeps the lower indices of the ascending lists valid.
    for &i in plan.removed_edges.iter().rev() {
        cloth.edges.swap_remove(i);
        cloth.rest_length.swap_remove(i);
    }
    for (edge, l0) in plan.added_edges {
        cloth.edges.push(edge);
        cloth.rest_length.push(l0);
    }

    for (i, slot) in plan.relabelled_quads {
        cloth.quads[i][slot] = d;
    }
    for &i in plan.removed_quads.iter().rev() {
        cloth.quads.swap_remove(i);
        cloth.rest_angle.swap_remove(i);
        cloth.rest_distance.swap_remove(i);
    }
    for (q, angle, distance) in plan.added_quads {
        cloth.quads.push(q);
        cloth.rest_angle.push(angle);
        cloth.rest_distance.push(distance);
    }

    TearOutcome { split_vertex: v, duplicate: d }
}

/// Splits mass `m` into (kept, duplicate) with the duplicate's share clamped to
/// [`MIN_MASS_FRACTION`, 1 − `MIN_MASS_FRACTION`]. The larger part is m minus the smaller and the smaller is then
/// recomputed as m minus the larger, which is exact (Sterbenz), so the two parts sum to m exactly.
fn split_mass(m: f32, dup_share: f32) -> Option<(f32, f32)> {
    let dup_share = dup_share.clamp(MIN_MASS_FRACTION, 1.0 - MIN_MASS_FRACTION);
    let larger = m - m * dup_share.min(1.0 - dup_share);
    let smaller = m - larger;
    let (kept, dup) = if dup_share <= 0.5 { (larger, smaller) } else { (smaller, larger) };
    (m.is_finite() && kept > 0.0 && dup > 0.0).then_some((kept, dup))
}

/// Area of a triangle with side lengths a, b, c (Kahan's stable form of Heron's formula); `None` if the lengths
/// are not finite or violate the triangle inequality.
fn heron_area(a: f32, b: f32, c: f32) -> Option<f32> {
    let mut s = [a, b, c];
    s.sort_unstable_by(|x, y| y.total_cmp(x));
    let [a, b, c] = s;
    let product = (a + (b + c)) * (c - (a - b)) * (c + (a - b)) * (a + (b - c));
    (product.is_finite() && c >= 0.0 && product >= 0.0).then(|| 0.25 * product.sqrt())
}

/// Dihedral angle of the bending pair `[p1, p2, p3, p4]` as drape's bending constraint defines it (π when flat),
/// used only for a pair that had no bending constraint before the tear (inconsistent input); π if degenerate.
fn dihedral_angle([p1, p2, p3, p4]: [Vec3; 4]) -> f32 {
    let e = p2 - p1;
    let (n1, n2) = (e.cross(p3 - p1).normalize_or_zero(), e.cross(p4 - p1).normalize_or_zero());
    if n1 == Vec3::ZERO || n2 == Vec3::ZERO { std::f32::consts::PI } else { n1.dot(n2).clamp(-1.0, 1.0).acos() }
}

/// The edge of `tri` opposite vertex `v`, in the triangle's winding order; `None` if `v` is not a vertex or the
/// triangle repeats a vertex.
fn opposite_edge(tri: [u32; 3], v: u32) -> Option<[u32; 2]> {
    if tri[0] == tri[1] || tri[1] == tri[2] || tri[0] == tri[2] {
        return None;
    }
    let k = tri.iter().position(|&i| i == v)?;
    Some([tri[(k + 1) % 3], tri[(k + 2) % 3]])
}

/// The single vertex two edges share, if they share exactly one.
fn shared_vertex(a: [u32; 2], b: [u32; 2]) -> Option<u32> {
    let mut shared = a.into_iter().filter(|x| b.contains(x));
    let first = shared.next()?;
    shared.next().is_none().then_some(first)
}

/// The endpoint of `edge` that is not `u`.
fn other_of(edge: [u32; 2], u: u32) -> u32 {
    if edge[0] == u { edge[1] } else { edge[0] }
}

fn sorted([a, b]: [u32; 2]) -> [u32; 2] {
    [a.min(b), a.max(b)]
}

/// Every triangle side as (sorted edge, opposite vertex), sorted.
fn sorted_sides(triangles: &[[u32; 3]]) -> Vec<([u32; 2], u32)> {
    let mut sides: Vec<([u32; 2], u32)> =
        triangles.iter().flat_map(|t| (0..3).map(move |k| (sorted([t[k], t[(k + 1) % 3]]), t[(k + 2) % 3]))).collect();
    sides.sort_unstable();
    sides
}

/// Whether every edge belongs to at most two triangles.
pub fn is_edge_manifold(triangles: &[[u32; 3]]) -> bool {
    sorted_sides(triangles).windows(3).all(|w| w[0].0 != w[2].0)
}

/// Checks that the constraints describe exactly the mesh: every index is below `vertex_count`, no triangle
/// repeats a vertex, the mesh is edge-manifold, the stretch constraints are exactly the triangle edges (none
/// missing, none orphaned, none twice, in either endpoint order), and the bending constraints are exactly the
/// pairs of triangles sharing an edge (hinge and opposite vertices each in either order). The error names the
/// first problem found.
pub fn constraints_match_mesh(
    triangles: &[[u32; 3]],
    edges: &[[u32; 2]],
    quads: &[[u32; 4]],
    vertex_count: usize,
) -> Result<(), String> {
    let in_range = |i: &u32| (*i as usize) < vertex_count;
    for (t, tri) in triangles.iter().enumerate() {
        if !tri.iter().all(in_range) {
            return Err(format!("triangle {t} {tri:?} refers to a vertex ≥ {vertex_count}"));
        }
        if tri[0] == tri[1] || tri[1] == tri[2] || tri[0] == tri[2] {
            return Err(format!("triangle {t} {tri:?} repeats a vertex"));
        }
    }
    if let Some((i, e)) = edges.iter().enumerate().find(|(_, e)| !e.iter().all(in_range)) {
        return Err(format!("stretch constraint {i} {e:?} refers to a vertex ≥ {vertex_count}"));
    }
    if let Some((i, q)) = quads.iter().enumerate().find(|(_, q)| !q.iter().all(in_range)) {
        return Err(format!("bending constraint {i} {q:?} refers to a vertex ≥ {vertex_count}"));
    }

    let sides = sorted_sides(triangles);
    let (mut want_edges, mut want_quads) = (Vec::new(), Vec::new());
    for run in sides.chunk_by(|a, b| a.0 == b.0) {
        let [a, b] = run[0].0;
        match run {
            [_] => {}
            [(_, o1), (_, o2)] => want_quads.push([a, b, (*o1).min(*o2), (*o1).max(*o2)]),
            _ => return Err(format!("edge ({a}, {b}) is shared by {} triangles", run.len())),
        }
        want_edges.push([a, b]);
    }
    want_quads.sort_unstable();

    let mut have_edges: Vec<[u32; 2]> = edges.iter().map(|&e| sorted(e)).collect();
    let mut have_quads: Vec<[u32; 4]> = quads
        .iter()
        .map(|&[p1, p2, p3, p4]| {
            let ([a, b], [c, d]) = (sorted([p1, p2]), sorted([p3, p4]));
            [a, b, c, d]
        })
        .collect();
    same_set(&want_edges, &mut have_edges, "stretch constraint")?;
    same_set(&want_quads, &mut have_quads, "bending constraint")
}

/// Compares the sorted, duplicate-free `want` with `have` (sorted here).
fn same_set<T: Ord + Copy + std::fmt::Debug>(want: &[T], have: &mut [T], what: &str) -> Result<(), String> {
    have.sort_unstable();
    if let Some(w) = have.windows(2).find(|w| w[0] == w[1]) {
        return Err(format!("{what} {:?} appears twice", w[0]));
    }
    if let Some(x) = want.iter().find(|x| have.binary_search(x).is_err()) {
        return Err(format!("{what} {x:?} is missing"));
    }
    if let Some(x) = have.iter().find(|x| want.binary_search(x).is_err()) {
        return Err(format!("{what} {x:?} matches no triangle edge or pair"));
    }
    Ok(())
}

/// Sum of all masses, accumulated in f64.
pub fn total_mass(mass: &[f32]) -> f64 {
    mass.iter().map(|&m| f64::from(m)).sum()
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    /// An owned cloth for the tests.
    #[derive(Clone, Debug, Default)]
    struct Cloth {
        x: Vec<Vec3>,
        p: Vec<Vec3>,
        v: Vec<Vec3>,
        mass: Vec<f32>,
        w: Vec<f32>,
        triangles: Vec<[u32; 3]>,
        uvs: Vec<[f32; 2]>,
        edges: Vec<[u32; 2]>,
        rest_length: Vec<f32>,
        quads: Vec<[u32; 4]>,
        rest_angle: Vec<f32>,
        rest_distance: Vec<f32>,
        cols: u32,
        held: Vec<u32>,
    }

    impl Cloth {
        fn view(&mut self) -> TearableCloth<'_> {
            TearableCloth {
                x: &mut self.x,
                p: &mut self.p,
                v: &mut self.v,
                mass: &mut self.mass,
                w: &mut self.w,
                held: &self.held,
                triangles: &mut self.triangles,
                uvs: &mut self.uvs,
                edges: &mut self.edges,
                rest_length: &mut self.rest_length,
                quads: &mut self.quads,
                rest_angle: &mut self.rest_angle,
                rest_distance: &mut self.rest_distance,
            }
        }

        /// Grid vertex at column `c`, row `r` (valid before any tear).
        fn id(&self, c: u32, r: u32) -> u32 {
            r * (self.cols + 1) + c
        }

        fn tear(&mut self, edge: usize) -> Option<TearOutcome> {
            let [a, b] = *self.edges.get(edge)?;
            tear_between(&mut self.view(), a, b)
        }

        fn edge_index(&self, a: u32, b: u32) -> Option<usize> {
            self.edges.iter().position(|&e| e == sorted([a, b]))
        }

        fn triangles_at(&self, v: u32) -> usize {
            self.triangles.iter().filter(|t| t.contains(&v)).count()
        }

        /// All invariants a tear must keep.
        fn check(&self) {
            let n = self.x.len();
            for len in [self.p.len(), self.v.len(), self.mass.len(), self.w.len()] {
                assert_eq!(len, n);
            }
            assert!(self.uvs.is_empty() || self.uvs.len() == n);
            assert_eq!(self.rest_length.len(), self.edges.len());
            assert_eq!(self.rest_angle.len(), self.quads.len());
            assert_eq!(self.rest_distance.len(), self.quads.len());
            assert!(self.mass.iter().all(|&m| m > 0.0 && m.is_finite()));
            assert!(self.edges.iter().all(|e| e[0] < e[1]), "edges are stored [lo, hi]");
            assert!(self.quads.iter().all(|q| q[0] < q[1]), "hinges are stored p1 < p2");
            assert!(is_edge_manifold(&self.triangles));
            if let Err(e) = constraints_match_mesh(&self.triangles, &self.edges, &self.quads, n) {
                panic!("{e}");
            }
        }
    }

    /// Stretch and bending constraints of a triangle mesh, built like drape's topology module.
    fn build_constraints(triangles: &[[u32; 3]]) -> (Vec<[u32; 2]>, Vec<[u32; 4]>) {
        let sides = sorted_sides(triangles);
        let (mut edges, mut quads) = (Vec::new(), Vec::new());
        for run in sides.chunk_by(|a, b| a.0 == b.0) {
            let [a, b] = run[0].0;
            if let [(_, o1), (_, o2)] = run {
                quads.push([a, b, *o1, *o2]);
            }
            edges.push([a, b]);
        }
        (edges, quads)
    }

    /// A flat `cols`×`rows` grid of square quads of side `spacing` in the XZ plane, split along alternating
    /// diagonals like drape's grid, with lumped masses (density 1) and rest values from the flat state.
    fn grid(cols: u32, rows: u32, spacing: f32) -> Cloth {
        let mut x = Vec::new();
        let mut uvs = Vec::new();
        for r in 0..=rows {
            for c in 0..=cols {
                x.push(Vec3::new(c as f32 * spacing, 0.0, r as f32 * spacing));
                uvs.push([c as f32 / cols as f32, r as f32 / rows as f32]);
            }
        }
        let id = |c: u32, r: u32| r * (cols + 1) + c;
        let mut triangles = Vec::new();
        for r in 0..rows {
            for c in 0..cols {
                let (a, b, d, e) = (id(c, r), id(c + 1, r), id(c, r + 1), id(c + 1, r + 1));
                if (c + r) % 2 == 0 {
                    triangles.extend([[a, d, e], [a, e, b]]);
                } else {
                    triangles.extend([[a, d, b], [b, d, e]]);
                }
            }
        }
        let mut mass = vec![0.0; x.len()];
        for t in &triangles {
            let [a, b, c] = t.map(|i| x[i as usize]);
            for &i in t {
                mass[i as usize] += 0.5 * (b - a).cross(c - a).length() / 3.0;
            }
        }
        let (edges, quads) = build_constraints(&triangles);
        let at = |i: u32| x[i as usize];
        Cloth {
            rest_length: edges.iter().map(|e| at(e[0]).distance(at(e[1]))).collect(),
            rest_angle: quads.iter().map(|q| dihedral_angle(q.map(at))).collect(),
            rest_distance: quads.iter().map(|q| at(q[2]).distance(at(q[3]))).collect(),
            p: x.clone(),
            v: vec![Vec3::ZERO; x.len()],
            w: mass.iter().map(|m| 1.0 / m).collect(),
            mass,
            triangles,
            uvs,
            edges,
            quads,
            x,
            cols,
            held: Vec::new(),
        }
    }

    /// Triangle counts of the pieces, largest first: triangles are connected when they share a vertex (a cloth
    /// hanging together by one vertex is still one piece).
    fn pieces(triangles: &[[u32; 3]], vertex_count: usize) -> Vec<usize> {
        fn find(parent: &mut [usize], mut i: usize) -> usize {
            while parent[i] != i {
                parent[i] = parent[parent[i]];
                i = parent[i];
            }
            i
        }
        let mut parent: Vec<usize> = (0..vertex_count).collect();
        for t in triangles {
            for k in 1..3 {
                let (a, b) = (find(&mut parent, t[0] as usize), find(&mut parent, t[k] as usize));
                parent[a] = b;
            }
        }
        let mut size = vec![0; vertex_count];
        for t in triangles {
            size[find(&mut parent, t[0] as usize)] += 1;
        }
        size.retain(|&s| s > 0);
        size.sort_unstable_by(|a, b| b.cmp(a));
        size
    }

    /// Gauss–Seidel projection of the stretch constraints (stiffness 1) on p, then x = p.
    fn relax(c: &mut Cloth, iterations: usize) {
        for _ in 0..iterations {
            for (&[a, b], &l0) in c.edges.iter().zip(&c.rest_length) {
                let (a, b) = (a as usize, b as usize);
                let (wa, wb) = (c.w[a], c.w[b]);
                let delta = c.p[a] - c.p[b];
                let length = delta.length();
                if wa + wb == 0.0 || length < 1e-9 {
                    continue;
                }
                let correction = delta * ((length - l0) / (length * (wa + wb)));
                c.p[a] -= wa * correction;
                c.p[b] += wb * correction;
            }
        }
        c.x.clone_from(&c.p);
    }

    /// A tiny linear congruential generator (Knuth's MMIX constants).
    struct Lcg(u64);

    impl Lcg {
        fn next_u32(&mut self) -> u32 {
            self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (self.0 >> 33) as u32
        }
        fn below(&mut self, n: usize) -> usize {
            self.next_u32() as usize % n
        }
        fn unit(&mut self) -> f32 {
            self.next_u32() as f32 / (1u64 << 31) as f32 * 2.0 - 1.0
        }
    }

    #[test]
    fn grid_helper_satisfies_the_invariants() {
        let c = grid(6, 6, 0.1);
        c.check();
        assert_eq!(c.x.len(), 49);
        assert_eq!(c.triangles.len(), 72);
        // 6·7 horizontal + 7·6 vertical + 36 diagonals; interior edges = all − 24 boundary edges.
        assert_eq!(c.edges.len(), 120);
        assert_eq!(c.quads.len(), 96);
        assert!((total_mass(&c.mass) - 0.36).abs() < 1e-6);
    }

    #[test]
    fn total_mass_sums_in_double_precision() {
        assert_eq!(total_mass(&[]), 0.0);
        assert_eq!(total_mass(&[0.25, 0.5, 1.0]), 1.75);
        let many = vec![0.1f32; 1_000_000];
        let exact = 1_000_000.0 * f64::from(0.1f32);
        assert!((total_mass(&many) - exact).abs() < 1e-9 * exact, "f32 accumulation would be off by ~1%");
    }

    #[test]
    fn mass_splits_are_exact_and_never_empty() {
        let mut rng = Lcg(7);
        for _ in 0..10_000 {
            let m = 1e-4 + rng.unit().abs() * 10.0;
            let share = rng.unit().abs();
            let (kept, dup) = split_mass(m, share).unwrap();
            assert_eq!(kept + dup, m);
            assert!(kept >= 0.009 * m && dup >= 0.009 * m);
            assert!((dup - m * share.clamp(0.01, 0.99)).abs() <= 1e-6 * m);
        }
        assert_eq!(split_mass(1.0, 0.0), Some((0.99, 1.0 - 0.99)));
        assert_eq!(split_mass(1.0, 1.0).map(|(k, d)| k + d), Some(1.0));
        assert_eq!(split_mass(f32::NAN, 0.5), None);
        assert_eq!(heron_area(3.0, 5.0, 4.0), Some(6.0));
        assert_eq!(heron_area(1.0, 1.0, 3.0), None);
    }

    #[test]
    fn stretched_interior_edge_is_found_and_torn() {
        let mut c = grid(6, 6, 0.1);
        let (below, above) = (c.id(3, 3), c.id(3, 4));
        // Pull (3, 4) two spacings further along +z: the vertical edge to (3, 3) is 3× its rest length.
        c.p[above as usize].z += 0.2;
        let edge = c.edge_index(below, above).unwrap();
        assert_eq!(most_stretched_edge(&c.p, &c.edges, &c.rest_length, 2.0), Some(edge));
        assert_eq!(most_stretched_edge(&c.p, &c.edges, &c.rest_length, 3.01), None);

        let (n, edges, quads, mass) = (c.x.len(), c.edges.len(), c.quads.len(), total_mass(&c.mass));
        let m = c.mass[below as usize];
        let outcome = c.tear(edge).unwrap();
        // Both endpoints are free with 8 triangles each: the edge's first vertex is split.
        assert_eq!(outcome, TearOutcome { split_vertex: below, duplicate: n as u32 });
        c.check();
        assert_eq!(c.x.len(), n + 1);
        assert!(((total_mass(&c.mass) - mass) / mass).abs() < 1e-6);
        // The 4 triangles above z = 0.3 keep (3, 3), the 4 below go to the duplicate, with equal rest areas.
        assert_eq!(c.triangles_at(below), 4);
        assert_eq!(c.triangles_at(outcome.duplicate), 4);
        assert!(
            c.triangles
                .iter()
                .filter(|t| t.contains(&below))
                .all(|t| t.iter().all(|&i| i == below || c.x[i as usize].z >= 0.3 - 1e-6))
        );
        assert_eq!(c.mass[below as usize] + c.mass[outcome.duplicate as usize], m, "conserved exactly");
        assert!((c.mass[outcome.duplicate as usize] - 0.5 * m).abs() < 1e-6 * m);
        assert_eq!(c.w[outcome.duplicate as usize], 1.0 / c.mass[outcome.duplicate as usize]);
        assert_eq!(c.w[below as usize], 1.0 / c.mass[below as usize]);
        // The duplicate copies position, prediction, velocity and texture coordinate.
        let (b, d) = (below as usize, outcome.duplicate as usize);
        assert_eq!((c.x[d], c.p[d], c.v[d], c.uvs[d]), (c.x[b], c.p[b], c.v[b], c.uvs[b]));
        // The two horizontal edges through (3, 3) are used by both sides: each becomes two constraints with the
        // original rest length; the two bending pairs across them no longer share an edge.
        assert_eq!(c.edges.len(), edges + 2);
        assert_eq!(c.quads.len(), quads - 2);
        for neighbour in [c.id(2, 3), c.id(4, 3)] {
            let original = c.rest_length[c.edge_index(below, neighbour).unwrap()];
            let duplicated = c.rest_length[c.edge_index(outcome.duplicate, neighbour).unwrap()];
            assert_eq!(duplicated, original);
            assert!((original - 0.1).abs() < 1e-6);
        }
        // The stretched edge itself stays with the original, the one below moves to the duplicate.
        assert!(c.edge_index(below, above).is_some());
        assert!(c.edge_index(below, c.id(3, 2)).is_none());
        assert!(c.edge_index(outcome.duplicate, c.id(3, 2)).is_some());
    }

    #[test]
    fn the_plan_names_the_triangles_below_the_plane_and_applying_it_is_the_tear() {
        let mut c = grid(6, 6, 0.1);
        let (below, above) = (c.id(3, 3), c.id(3, 4));
        c.p[above as usize].z += 0.2;
        let fan: Vec<usize> = (0..c.triangles.len()).filter(|&t| c.triangles[t].contains(&below)).collect();
        let Some(plan) = plan_split(&c.view(), below, above, &fan) else { panic!("(3, 3) can be split") };
        // the 4 fan triangles at or below z = 0.3, in triangle order, go to the duplicate
        let below_plane: Vec<usize> =
            fan.iter().copied().filter(|&t| c.triangles[t].iter().all(|&i| c.x[i as usize].z <= 0.3 + 1e-6)).collect();
        assert_eq!(below_plane.len(), 4);
        assert_eq!(plan.moved_triangles, below_plane);
        assert_eq!((plan.vertex, plan.duplicate), (below, c.x.len() as u32));
        assert_eq!(plan.kept_mass + plan.duplicate_mass, c.mass[below as usize]);
        // every stretch constraint at (3, 3) is rebuilt; the two horizontal ones are used by both sides
        let at_vertex: Vec<usize> = (0..c.edges.len()).filter(|&i| c.edges[i].contains(&below)).collect();
        assert_eq!(plan.removed_edges, at_vertex);
        assert_eq!(plan.added_edges.len(), at_vertex.len() + 2);

        let mut torn = c.clone();
        let edge = torn.edge_index(below, above).unwrap();
        assert_eq!(torn.tear(edge), Some(apply_split(&mut c.view(), plan)));
        let state = |c: &Cloth| {
            (c.x.clone(), c.mass.clone(), c.w.clone(), c.triangles.clone(), c.edges.clone(), c.rest_length.clone())
        };
        assert_eq!(state(&c), state(&torn));
        assert_eq!((&c.quads, &c.rest_angle, &c.rest_distance), (&torn.quads, &torn.rest_angle, &torn.rest_distance));
    }

    #[test]
    fn pulling_two_halves_apart_tears_the_cloth_in_two() {
        // Bottom row pinned, top row pinned and pulled along +z; stretch constraints relaxed by Gauss–Seidel, and
        // the worst edge beyond 1.3× torn after every step.
        let mut c = grid(6, 6, 0.1);
        let pulled: Vec<usize> = (0..=6).map(|col| c.id(col, 6) as usize).collect();
        for col in 0..=6 {
            let (bottom, top) = (c.id(col, 0) as usize, c.id(col, 6) as usize);
            c.w[bottom] = 0.0;
            c.w[top] = 0.0;
        }
        let mass = total_mass(&c.mass);
        let mut split = Vec::new();
        let mut steps = 0;
        while pieces(&c.triangles, c.x.len()).len() < 2 && steps < 500 {
            steps += 1;
            for &i in &pulled {
                c.p[i].z += 0.005;
            }
            relax(&mut c, 20);
            if let Some(edge) = most_stretched_edge(&c.p, &c.edges, &c.rest_length, 1.3) {
                let n = c.x.len();
                if let Some(outcome) = c.tear(edge) {
                    assert_eq!(outcome.duplicate as usize, n);
                    assert!(c.triangles_at(outcome.split_vertex) >= 1 && c.triangles_at(outcome.duplicate) >= 1);
                    split.push(outcome.split_vertex);
                    c.check();
                    assert!(((total_mass(&c.mass) - mass) / mass).abs() < 1e-6);
                }
            }
        }
        let sizes = pieces(&c.triangles, c.x.len());
        assert_eq!(sizes.len(), 2, "after {steps} steps and {} tears", split.len());
        assert!(sizes[1] >= 12, "{sizes:?}");
        assert!(split.len() <= 30, "{} tears", split.len());
        // A clean cut: every tear split a different vertex of the original grid, all of them on one row.
        let mut distinct = split.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), split.len());
        assert!(split.iter().all(|&v| v < 49 && v / 7 == split[0] / 7), "{split:?}");

        // Keep pulling with the batched API: the pieces stay consistent and stay apart.
        let mut scratch = Vec::new();
        for _ in 0..50 {
            for &i in &pulled {
                c.p[i].z += 0.005;
            }
            relax(&mut c, 20);
            let mut view = c.view();
            tear_overstretched(&mut view, 1.3, 4, &mut scratch);
            c.check();
        }
        assert!(pieces(&c.triangles, c.x.len()).len() >= 2);
        assert!(((total_mass(&c.mass) - mass) / mass).abs() < 1e-6);
    }

    #[test]
    fn random_tears_of_a_crumpled_cloth_keep_every_invariant() {
        let mut c = grid(8, 8, 0.1);
        let mut rng = Lcg(0x5eed_cafe);
        let pinned: Vec<usize> = (0..6).map(|_| rng.below(c.x.len())).collect();
        for &i in &pinned {
            c.w[i] = 0.0;
        }
        let rest_length: HashMap<[u32; 2], f32> = c.edges.iter().copied().zip(c.rest_length.iter().copied()).collect();
        let quad_key = |q: [u32; 4], root: &[u32]| {
            let q = q.map(|i| root[i as usize]);
            (sorted([q[0], q[1]]), sorted([q[2], q[3]]))
        };
        let identity: Vec<u32> = (0..c.x.len() as u32).collect();
        let bend_rest: HashMap<_, _> = (0..c.quads.len())
            .map(|i| (quad_key(c.quads[i], &identity), (c.rest_angle[i], c.rest_distance[i])))
            .collect();
        // The grid vertex each vertex descends from.
        let mut root = identity;
        let mass = total_mass(&c.mass);
        let mut tears = 0;
        for _ in 0..400 {
            // Crumple: random walk of the predictions, so split planes cut fans in arbitrary ways.
            for p in c.p.iter_mut() {
                *p += Vec3::new(rng.unit(), rng.unit(), rng.unit()) * 0.03;
            }
            let edge = rng.below(c.edges.len());
            let [a, b] = c.edges[edge];
            let masses = [c.mass[a as usize], c.mass[b as usize]];
            if let Some(TearOutcome { split_vertex: s, duplicate: d }) = c.tear(edge) {
                tears += 1;
                assert!(s == a || s == b);
                assert_eq!(d as usize, root.len());
                assert_eq!(c.mass[s as usize] + c.mass[d as usize], masses[usize::from(s == b)], "exact");
                assert!(c.triangles_at(s) >= 1 && c.triangles_at(d) >= 1);
                root.push(root[s as usize]);
            }
            c.check();
            for (e, l0) in c.edges.iter().zip(&c.rest_length) {
                assert_eq!(rest_length[&sorted(e.map(|i| root[i as usize]))], *l0, "edge {e:?}");
            }
            for (i, &q) in c.quads.iter().enumerate() {
                assert_eq!(bend_rest[&quad_key(q, &root)], (c.rest_angle[i], c.rest_distance[i]), "quad {q:?}");
            }
            for (i, (&w, &m)) in c.w.iter().zip(&c.mass).enumerate() {
                assert_eq!(w, if pinned.contains(&i) { 0.0 } else { 1.0 / m }, "vertex {i}");
            }
        }
        assert!(tears > 100, "{tears} tears");
        assert!(((total_mass(&c.mass) - mass) / mass).abs() < 1e-6);
        assert_eq!(c.uvs.len(), c.x.len());
    }

    #[test]
    fn a_corner_with_one_triangle_is_never_split() {
        // With 5 columns the quad at the bottom-right corner is split along the diagonal that avoids the corner.
        let mut c = grid(5, 5, 0.1);
        let corner = c.id(5, 0);
        assert_eq!(c.triangles_at(corner), 1);
        c.p[corner as usize] += Vec3::new(0.3, 0.0, -0.3);
        let m = c.mass[corner as usize];
        for _ in 0..2 {
            let Some(edge) = most_stretched_edge(&c.p, &c.edges, &c.rest_length, 2.0) else { break };
            assert!(c.edges[edge].contains(&corner));
            if let Some(outcome) = c.tear(edge) {
                assert_ne!(outcome.split_vertex, corner);
            }
            c.check();
            assert_eq!(c.triangles_at(corner), 1);
            assert_eq!(c.mass[corner as usize], m);
        }

        // A lone triangle cannot tear at all, and nothing changes.
        let mut lone = grid(1, 1, 0.1);
        lone.triangles.truncate(1);
        (lone.edges, lone.quads) = build_constraints(&lone.triangles);
        lone.rest_length = vec![0.1; 3];
        (lone.rest_angle, lone.rest_distance) = (Vec::new(), Vec::new());
        lone.p[0] -= Vec3::X;
        let before = lone.clone();
        for edge in 0..3 {
            assert_eq!(lone.tear(edge), None);
        }
        assert_eq!((lone.triangles, lone.x.len(), lone.edges), (before.triangles, 4, before.edges));
    }

    #[test]
    fn a_free_endpoint_is_split_before_a_pinned_one() {
        // Rows 4–6 pulled 0.2 along +z: the vertical edges between rows 3 and 4 are 3× their rest length.
        let stretched = || {
            let mut c = grid(6, 6, 0.1);
            for p in c.p.iter_mut().filter(|p| p.z > 0.35) {
                p.z += 0.2;
            }
            let (below, above) = (c.id(3, 3), c.id(3, 4));
            (c, below, above)
        };
        // Only the first vertex is pinned: the free one is split.
        let (mut c, below, above) = stretched();
        c.w[below as usize] = 0.0;
        let edge = c.edge_index(below, above).unwrap();
        assert_eq!(c.tear(edge).map(|o| o.split_vertex), Some(above));
        assert_eq!(c.w[below as usize], 0.0);
        c.check();

        // Both pinned: the pinned original stays pinned, its duplicate is free.
        let (mut c, below, above) = stretched();
        c.w[below as usize] = 0.0;
        c.w[above as usize] = 0.0;
        let edge = c.edge_index(below, above).unwrap();
        let outcome = c.tear(edge).unwrap();
        assert_eq!(outcome.split_vertex, below);
        assert_eq!(c.w[below as usize], 0.0);
        let d = outcome.duplicate as usize;
        assert_eq!(c.w[d], 1.0 / c.mass[d]);
        c.check();
    }

    #[test]
    fn a_vertex_a_body_holds_is_split_after_a_free_one() {
        // Rows 4–6 pulled 0.2 along +z; the edge's first endpoint, which an unheld tie splits, is held by a body
        // (w > 0): like a pinned one it keeps its triangles and the free endpoint is split, so a body tears the
        // cloth open instead of tearing off the vertices it holds
        let mut c = grid(6, 6, 0.1);
        for p in c.p.iter_mut().filter(|p| p.z > 0.35) {
            p.z += 0.2;
        }
        let (below, above) = (c.id(3, 3), c.id(3, 4));
        let edge = c.edge_index(below, above).unwrap();
        c.held = vec![below];
        assert_eq!(c.tear(edge).map(|o| o.split_vertex), Some(above), "the held vertex is kept");
        c.check();
    }

    #[test]
    fn the_other_endpoint_is_tried_when_all_triangles_lie_on_one_side() {
        // (3, 0) on the bottom boundary is free and preferred, but all its triangles lie on the side of (3, 1):
        // the pinned (3, 1) is split instead.
        let mut c = grid(6, 6, 0.1);
        let (boundary, inner) = (c.id(3, 0), c.id(3, 1));
        c.w[inner as usize] = 0.0;
        c.p[boundary as usize].z -= 0.2;
        let boundary_triangles = c.triangles_at(boundary);
        let edge = most_stretched_edge(&c.p, &c.edges, &c.rest_length, 2.0).unwrap();
        assert_eq!(c.edges[edge], [boundary, inner]);
        let outcome = c.tear(edge).unwrap();
        assert_eq!(outcome.split_vertex, inner);
        assert_eq!(c.triangles_at(boundary), boundary_triangles);
        c.check();
    }

    #[test]
    fn several_worst_edges_are_listed_and_torn() {
        let mut c = grid(6, 6, 0.1);
        // Vertical edges at columns 1, 3, 5 stretched to 2.5, 2.8 and 2.65; every other edge stays below 2.2.
        for (col, pull) in [(1, 0.15), (3, 0.18), (5, 0.165)] {
            let i = c.id(col, 4) as usize;
            c.p[i].z += pull;
        }
        let mut out = vec![Overstretched { vertices: [0, 0], ratio: 0.0 }];
        most_stretched_edges(&c.p, &c.edges, &c.rest_length, 2.4, 2, &mut out);
        let vertical = |col: u32| [c.id(col, 3), c.id(col, 4)];
        assert_eq!(out.iter().map(|o| o.vertices).collect::<Vec<_>>(), [vertical(3), vertical(5)]);
        assert!((out[0].ratio - 2.8).abs() < 1e-5 && (out[1].ratio - 2.65).abs() < 1e-5);
        most_stretched_edges(&c.p, &c.edges, &c.rest_length, 2.4, 10, &mut out);
        assert_eq!(out.len(), 3);
        assert_eq!(out[2].vertices, vertical(1));
        most_stretched_edges(&c.p, &c.edges, &c.rest_length, 2.4, 0, &mut out);
        assert!(out.is_empty());
        most_stretched_edges(&c.p, &c.edges, &c.rest_length, 2.9, 10, &mut out);
        assert!(out.is_empty());

        let n = c.x.len();
        let mut view = c.view();
        assert_eq!(tear_overstretched(&mut view, 2.4, 10, &mut out), 3);
        assert_eq!(c.x.len(), n + 3);
        c.check();
    }

    #[test]
    fn texture_coordinates_stay_empty_and_inconsistent_cloths_are_refused() {
        let mut c = grid(4, 4, 0.1);
        c.uvs.clear();
        let edge = c.edge_index(c.id(2, 2), c.id(2, 3)).unwrap();
        assert!(c.tear(edge).is_some());
        assert!(c.uvs.is_empty());
        c.check();

        let mut c = grid(4, 4, 0.1);
        c.rest_length.pop();
        let before = (c.triangles.clone(), c.edges.clone(), c.x.len());
        assert_eq!(c.tear(0), None);
        assert_eq!(c.tear(usize::MAX), None);
        assert_eq!((c.triangles, c.edges, c.x.len()), before);
    }

    #[test]
    fn mesh_checks_find_each_kind_of_mismatch() {
        let c = grid(3, 3, 0.1);
        let n = c.x.len();
        let check = |edges: &[[u32; 2]], quads: &[[u32; 4]]| constraints_match_mesh(&c.triangles, edges, quads, n);
        assert_eq!(check(&c.edges, &c.quads), Ok(()));

        let mut reordered_edges = c.edges.clone();
        reordered_edges.reverse();
        reordered_edges[0].reverse();
        let mut reordered_quads = c.quads.clone();
        reordered_quads[0] = [c.quads[0][1], c.quads[0][0], c.quads[0][3], c.quads[0][2]];
        assert_eq!(check(&reordered_edges, &reordered_quads), Ok(()), "order does not matter");

        let missing = check(&c.edges[1..], &c.quads).unwrap_err();
        assert!(missing.contains("missing"), "{missing}");
        let orphan = check(&[c.edges.clone(), vec![[0, n as u32 - 1]]].concat(), &c.quads).unwrap_err();
        assert!(orphan.contains("matches no"), "{orphan}");
        let twice = check(&[c.edges.clone(), vec![[c.edges[4][1], c.edges[4][0]]]].concat(), &c.quads).unwrap_err();
        assert!(twice.contains("twice"), "{twice}");
        let missing_quad = check(&c.edges, &c.quads[1..]).unwrap_err();
        assert!(missing_quad.contains("bending constraint"), "{missing_quad}");
        let mut wrong_opposite = c.quads.clone();
        wrong_opposite[0][3] = wrong_opposite[0][0];
        assert!(check(&c.edges, &wrong_opposite).is_err());
        assert!(constraints_match_mesh(&c.triangles, &c.edges, &c.quads, n - 1).unwrap_err().contains("≥"));

        let fan = [[0, 1, 2], [0, 1, 3], [0, 1, 4]];
        assert!(!is_edge_manifold(&fan));
        assert!(is_edge_manifold(&fan[..2]));
        let (edges, quads) = build_constraints(&fan[..2]);
        assert_eq!(constraints_match_mesh(&fan[..2], &edges, &quads, 5), Ok(()));
        assert!(constraints_match_mesh(&fan, &edges, &quads, 5).unwrap_err().contains("shared by 3"));
        assert!(constraints_match_mesh(&[[0, 1, 1]], &[], &[], 2).unwrap_err().contains("repeats"));
    }
}
