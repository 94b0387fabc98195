//! The colliders' edges against the cloth's triangles (§4.2: "Testing only cloth vertices for collisions is not
//! enough because small rigid bodies can fall through large cloth triangles. Therefore, collisions of the convex
//! corners of rigid bodies against the cloth triangles are also tested"). The vertex contacts of §3.4 keep every
//! cloth vertex outside a collider, but a box corner or a mesh edge sharper than the cloth's triangles still
//! passes between three vertices. Each collider edge (a box's twelve, a mesh's own, a capsule's axis grown by its
//! radius; the corners are their ends) is clipped to the prism over each nearby triangle, and each end q of the
//! clipped piece within the detection band gives the constraint C(p) = (Σ bᵢ pᵢ − q)·n − d ≥ 0 on the
//! triangle's three vertices, with b the barycentric coordinates of q on the triangle, n the triangle's normal
//! turned to the side the triangle was on at the start of the substep, and d the gap it keeps: the cloth's
//! thickness (plus the capsule's radius), or for a triangle that starts the substep closer, its starting gap plus
//! [`DEPENETRATION_SPEED`]·Δt, so a starting overlap leaves at that speed. A triangle an edge already went
//! through at the start (a box's corner poking between its vertices, a cloth draped over a box's edge) is partly
//! inside the solid: it leaves at the same speed to the side of its plane that the least move clears of every
//! edge near it. The body takes the opposite of the momentum the contact gave the three vertices at q (two-way,
//! as the vertex contacts).
//!
//! [`DEPENETRATION_SPEED`]: super::DEPENETRATION_SPEED

use bevy::math::{Isometry3d, Vec3};

use super::contacts::{DEPENETRATION_SPEED, bounding_box, merge_by_collider};
pub use super::general::FeatureEdge;
use super::general::GeneralShape;
use super::shapes::{Shape, box_corner_sign};
use super::swept::SweptCollider;
use crate::sim::constraints::access::ParticleAccess;
use crate::sim::parallel::SliceOutputs;

/// How far outside a triangle (in barycentric coordinates) a feature still counts as over it: a corner on the
/// edge two triangles share is over both.
const BARY_MARGIN: f32 = 0.01;
/// The most a feature contact moves a triangle vertex, in units of its violation (see `project_feature_contacts`).
const MAX_LEVER: f32 = 2.0;
/// A triangle whose area is below this sine of the angle at its first corner times its two sides has no plane.
const DEGENERATE_SINE: f32 = 1e-6;
/// A triangle whose centre is farther from a general solid than this many times its largest centre–corner
/// distance (the barycentric margin grows it a little), plus the bands, meets none of the solid's edges.
const CLEAR_SIZE: f32 = 1.1;
/// A feature this many gaps farther from a triangle than its gap still gets a contact (inactive until the
/// projection brings the two within the gap).
const DETECTION_MARGIN: f32 = 1.0;
/// A triangle's kept edges ([`KeptEdges`]) are looked up with room for this many substeps of its last motion
/// relative to the solid, and the band again.
const KEPT_SUBSTEPS: f32 = 4.0;

impl Shape {
    /// Appends the solid's straight edges to `out`: a box's twelve, a capsule's axis, a general solid's own;
    /// none for a plane, a ball or a barrel (whose surfaces have no edge).
    pub fn feature_edges(&self, out: &mut Vec<FeatureEdge>) {
        match self {
            Shape::Box { center, rotation, half_extents } => {
                let corner = |k: u32| *center + *rotation * (*half_extents * box_corner_sign(k));
                // the corners whose index differs in one bit share an edge
                for k in 0..8u32 {
                    for bit in [1, 2, 4].into_iter().filter(|bit| k & bit == 0) {
                        out.push(FeatureEdge { ends: [corner(k), corner(k | bit)], radius: 0.0 });
                    }
                }
            }
            Shape::Capsule { a, b, radius } => out.push(FeatureEdge { ends: [*a, *b], radius: *radius }),
            Shape::General(general) => out.extend(general.feature_edges()),
            Shape::Plane { .. } | Shape::Sphere { .. } | Shape::Barrel { .. } => {}
        }
    }

    /// Calls `f` with the index (in [`Self::feature_edges`]'s order) of every edge that may come within the box
    /// `min`–`max`, and maybe others: all of an analytic shape's few, a general solid's near ones.
    pub fn edges_near(&self, min: Vec3, max: Vec3, f: &mut dyn FnMut(u32)) {
        match self {
            Shape::Box { .. } => (0..12).for_each(f),
            Shape::Capsule { .. } => f(0),
            Shape::General(general) => general.edges_near(min, max, f),
            Shape::Plane { .. } | Shape::Sphere { .. } | Shape::Barrel { .. } => {}
        }
    }

    /// The solid's straight edges ([`Self::feature_edges`]), which no cloth triangle should be crossed by.
    pub fn edges(&self) -> Vec<[Vec3; 2]> {
        let mut edges = Vec::new();
        self.feature_edges(&mut edges);
        edges.into_iter().map(|e| e.ends).collect()
    }
}

/// Every collider's [`FeatureEdge`]s at the start and the end of the substep, refilled with the colliders each
/// substep.
#[derive(Clone, Debug, Default)]
pub struct ColliderFeatures {
    /// The edges in each collider's own frame (the frame of [`SweptCollider::local`]).
    local: Vec<FeatureEdge>,
    /// The same edges at the collider's pose at the start of the substep.
    start: Vec<FeatureEdge>,
    /// The same edges at the end of the substep.
    end: Vec<FeatureEdge>,
    /// The box of each edge at the end, grown by its radius.
    end_boxes: Vec<(Vec3, Vec3)>,
    /// Collider k's edges are `[first[k]..first[k + 1]]`.
    first: Vec<u32>,
    /// Per collider, the box around its edges at the end, grown by their radius.
    bounds: Vec<(Vec3, Vec3)>,
    /// The colliders the lists were filled from: their shapes and poses.
    sources: Vec<(Shape, Isometry3d, Isometry3d)>,
}

impl ColliderFeatures {
    /// Refills the lists from `colliders`, keeping the capacity. A mesh has thousands of edges and most colliders
    /// keep their shapes and poses from one substep to the next, so the lists are only rebuilt where they change.
    pub(crate) fn refill(&mut self, colliders: &[SweptCollider]) {
        let same_shapes = self.sources.len() == colliders.len()
            && self.sources.iter().zip(colliders).all(|((shape, ..), c)| *shape == c.local);
        if !same_shapes {
            self.local.clear();
            self.first.clear();
            self.first.push(0);
            for c in colliders {
                c.local.feature_edges(&mut self.local);
                self.first.push(self.local.len() as u32);
            }
            self.start.clear();
            self.start.resize(self.local.len(), FeatureEdge { ends: [Vec3::ZERO; 2], radius: 0.0 });
            self.end.clone_from(&self.start);
            self.end_boxes.clear();
            self.end_boxes.resize(self.local.len(), (Vec3::INFINITY, Vec3::NEG_INFINITY));
            self.bounds.clear();
            self.bounds.resize(colliders.len(), (Vec3::INFINITY, Vec3::NEG_INFINITY));
            self.sources.clear();
        }
        for (k, c) in colliders.iter().enumerate() {
            let last = self.sources.get(k).map(|&(_, start, end)| (start, end));
            if last == Some((c.start, c.end)) {
                continue;
            }
            // a collider moving on starts the substep where it ended the last
            let range = self.range(k);
            if last.is_some_and(|(_, end)| end == c.start) {
                self.start[range.clone()].copy_from_slice(&self.end[range.clone()]);
            } else {
                for e in range.clone() {
                    self.start[e] = self.local[e].placed(&c.start);
                }
            }
            let mut bound = (Vec3::INFINITY, Vec3::NEG_INFINITY);
            for e in range {
                let end = self.local[e].placed(&c.end);
                let (lo, hi) = end.bounds(0.0);
                bound = (bound.0.min(lo), bound.1.max(hi));
                self.end[e] = end;
                self.end_boxes[e] = (lo, hi);
            }
            self.bounds[k] = bound;
            match self.sources.get_mut(k) {
                Some(source) => *source = (c.local.clone(), c.start, c.end),
                None => self.sources.push((c.local.clone(), c.start, c.end)),
            }
        }
    }

    /// The range of collider `k`'s edges.
    fn range(&self, k: usize) -> std::ops::Range<usize> {
        match (self.first.get(k), self.first.get(k + 1)) {
            (Some(&a), Some(&b)) => a as usize..b as usize,
            _ => 0..0,
        }
    }

    /// Whether any collider has an edge.
    pub fn is_empty(&self) -> bool {
        self.local.is_empty()
    }
}

/// A collider feature against a cloth triangle: C(p) = (Σ bᵢ pᵢ − q)·n − gap ≥ 0 (module docs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FeatureContact {
    /// The triangle's vertices.
    pub vertices: [u32; 3],
    /// Barycentric coordinates of the feature point on the triangle.
    pub bary: [f32; 3],
    /// Index of the collider in this substep's `CollisionWorld`.
    pub collider: u32,
    /// The feature point q at the end of the substep.
    pub point: Vec3,
    /// The side the triangle keeps, unit.
    pub normal: Vec3,
    /// The gap the triangle keeps from q along n, metres.
    pub gap: f32,
    /// The triangle started the substep inside the solid at q (within the edge's radius, or through the edge):
    /// it leaves at the depenetration speed.
    pub started_inside: bool,
    /// The displacement the projection gave each vertex, summed over the iterations (§4.2).
    pub moved: [Vec3; 3],
}

/// The cloth a feature search reads: starts x, predictions p, inverse masses and triangles.
pub(crate) struct FeatureCloth<'a> {
    pub x: &'a [Vec3],
    pub p: &'a [Vec3],
    pub w: &'a [f32],
    pub triangles: &'a [[u32; 3]],
}

/// The scratch of the feature search (line 8), kept between substeps so that a warm search allocates nothing.
#[derive(Clone, Debug, Default)]
pub struct FeatureSearch {
    /// What each slice of the triangles found, and its scratch.
    slices: SliceOutputs<FeatureSlice>,
}

/// One slice of the triangles' search: its contacts collider by collider, where each collider's run ends, and the
/// scratch of the triangle at hand.
#[derive(Debug, Default)]
struct FeatureSlice {
    found: Vec<FeatureContact>,
    collider_end: Vec<u32>,
    /// The box at p of each triangle of the slice.
    boxes: Vec<(Vec3, Vec3)>,
    /// The edges near one triangle.
    candidates: Vec<u32>,
    /// Their pieces over it.
    pieces: Vec<(u32, Piece)>,
    /// Per edge of a general solid, the query that last reported it.
    seen: Vec<u32>,
    /// The current query.
    stamp: u32,
    /// Each triangle's edges of general solids, kept from substep to substep.
    kept: KeptEdges,
}

/// The edges of general solids near each triangle of a slice, kept while the triangle stays inside the box they
/// were looked up for (a Verlet list in the solid's frame): a triangle's query box inside that box reports no edge
/// outside the kept ones, so the search finds what a fresh lookup finds, and a mesh collider is not looked up
/// for every triangle in every substep.
#[derive(Debug, Default)]
struct KeptEdges {
    /// The triangles (the slice's range) and the colliders the entries are for.
    range: std::ops::Range<usize>,
    solids: Vec<Option<GeneralShape>>,
    /// Per collider, then triangle of the range: the triangle, the box its edges were looked up in (in the
    /// collider's frame) and their run in `edges`.
    entries: Vec<KeptEntry>,
    edges: Vec<u32>,
    /// Scratch for compacting `edges`, and how many of them the entries still use.
    spare: Vec<u32>,
    live: usize,
    /// How many lookups the entries were kept from since the last reset.
    lookups: usize,
}

/// A triangle's kept edges (see [`KeptEdges`]).
#[derive(Clone, Copy, Debug)]
struct KeptEntry {
    triangle: [u32; 3],
    lo: Vec3,
    hi: Vec3,
    start: u32,
    len: u32,
}

impl KeptEntry {
    const NONE: Self = Self { triangle: [u32::MAX; 3], lo: Vec3::INFINITY, hi: Vec3::NEG_INFINITY, start: 0, len: 0 };
}

impl KeptEdges {
    /// Forgets every entry unless they are for the triangles `range` and the general solids of `colliders`.
    fn prepare(&mut self, range: std::ops::Range<usize>, colliders: &[SweptCollider]) {
        fn solid(c: &SweptCollider) -> Option<&GeneralShape> {
            match &c.local {
                Shape::General(solid) => Some(solid),
                _ => None,
            }
        }
        let same = self.range == range
            && self.solids.len() == colliders.len()
            && self.solids.iter().zip(colliders).all(|(kept, c)| kept.as_ref() == solid(c));
        if !same {
            self.range = range;
            self.solids.clear();
            self.solids.extend(colliders.iter().map(|c| solid(c).cloned()));
            self.entries.clear();
            self.entries.resize(colliders.len() * self.range.len(), KeptEntry::NONE);
            self.edges.clear();
            (self.live, self.lookups) = (0, 0);
        }
    }

    /// The kept edges of collider `k` for `triangle`, number `t` of the range, if its query box `lo`–`hi` is
    /// inside the box they were looked up in.
    fn get(&self, (k, t): (usize, usize), triangle: [u32; 3], (lo, hi): (Vec3, Vec3)) -> Option<&[u32]> {
        let entry = self.entries.get(k * self.range.len() + t)?;
        let inside = entry.triangle == triangle && lo.cmpge(entry.lo).all() && hi.cmple(entry.hi).all();
        inside.then(|| self.edges.get(entry.start as usize..(entry.start + entry.len) as usize)).flatten()
    }

    /// Keeps `edges` as collider `k`'s for `triangle`, number `t` of the range, looked up in `lo`–`hi`.
    fn keep(&mut self, (k, t): (usize, usize), triangle: [u32; 3], (lo, hi): (Vec3, Vec3), edges: &[u32]) {
        let Some(entry) = self.entries.get_mut(k * self.range.len() + t) else { return };
        self.live = self.live - entry.len as usize + edges.len();
        self.lookups += 1;
        *entry = KeptEntry { triangle, lo, hi, start: self.edges.len() as u32, len: edges.len() as u32 };
        self.edges.extend_from_slice(edges);
        // the runs replaced are dropped once they are most of the buffer
        if self.edges.len() > 2 * self.live + 4096 {
            self.spare.clear();
            for entry in &mut self.entries {
                let run = entry.start as usize..(entry.start + entry.len) as usize;
                entry.start = self.spare.len() as u32;
                self.spare.extend_from_slice(&self.edges[run]);
            }
            std::mem::swap(&mut self.edges, &mut self.spare);
        }
    }
}

/// Triangles per slice of [`find_feature_contacts`] at least: below that a cloth is searched on one thread.
const MIN_FEATURE_SLICE: usize = 256;

/// Line (8) for the colliders' features: refills `out` with the contacts of the edges of `colliders` and the
/// cloth's triangles at p (module docs), ordered by collider, then triangle. Each collider meets only the triangles
/// inside the box around its edges, and a general solid only its edges near each triangle
/// ([`Shape::edges_near`]). The triangles are searched in slices, on the compute pool's threads when `parallel`
/// (the order, hence the result, is the same). Allocates nothing once the buffers have grown.
pub(crate) fn find_feature_contacts(
    cloth: FeatureCloth,
    (colliders, features): (&[SweptCollider], &ColliderFeatures),
    (thickness, dt, parallel): (f32, f32, bool),
    out: &mut Vec<FeatureContact>,
    search: &mut FeatureSearch,
) {
    out.clear();
    let FeatureCloth { x, p, w, triangles } = cloth;
    if features.is_empty() || x.len() != p.len() || w.len() != p.len() {
        return;
    }
    let Some((lo, hi)) = bounding_box(p) else { return };
    // the triangles' boxes are grown by the detection band; the edges' radii are in the colliders' boxes
    let band = Vec3::splat((1.0 + DETECTION_MARGIN) * thickness);
    let near_collider = |k: usize| {
        let &(lo_k, hi_k) = features.bounds.get(k).filter(|_| !features.range(k).is_empty())?;
        let near = (lo_k - band, hi_k + band);
        overlap((lo, hi), near).then_some(near)
    };
    if !(0..colliders.len()).any(|k| near_collider(k).is_some()) {
        return;
    }
    let found = search.slices.run(triangles.len(), MIN_FEATURE_SLICE, parallel, |range, slice| {
        slice.found.clear();
        slice.collider_end.clear();
        slice.kept.prepare(range.clone(), colliders);
        // each triangle's box once (empty for a triangle that is pinned or not finite), then each collider's
        slice.boxes.clear();
        let empty = (Vec3::INFINITY, Vec3::NEG_INFINITY);
        slice.boxes.extend(triangles[range.clone()].iter().map(|tri| triangle_box(p, w, tri).unwrap_or(empty)));
        for (k, collider) in colliders.iter().enumerate() {
            if let Some(near) = near_collider(k) {
                let cloth = FeatureCloth { x, p, w, triangles: &triangles[range.clone()] };
                let own = features.range(k);
                let edges = (
                    &features.local[own.clone()],
                    &features.start[own.clone()],
                    &features.end[own.clone()],
                    &features.end_boxes[own],
                );
                search_collider(cloth, (k, collider, edges, near), (thickness, dt), slice);
            }
            slice.collider_end.push(slice.found.len() as u32);
        }
    });
    merge_by_collider(found, colliders.len(), |slice| (&slice.found, &slice.collider_end), out);
}

/// Whether two boxes overlap.
fn overlap((a, b): (Vec3, Vec3), (c, d): (Vec3, Vec3)) -> bool {
    a.cmple(d).all() && c.cmple(b).all()
}

/// [`find_feature_contacts`] for collider `k` (its edges at the start and the end of the substep, and the box
/// around them grown by the band) and the triangles of `cloth` with their boxes in `slice.boxes`, appending to
/// `slice.found`.
fn search_collider(
    cloth: FeatureCloth,
    (k, collider, (local_edges, start_edges, end_edges, end_boxes), near_collider): (
        usize,
        &SweptCollider,
        EdgePoses,
        (Vec3, Vec3),
    ),
    (thickness, dt): (f32, f32),
    slice: &mut FeatureSlice,
) {
    let FeatureCloth { x, p, w, triangles } = cloth;
    let FeatureSlice { found, boxes, candidates, pieces, seen, stamp, kept, .. } = slice;
    let reach = (1.0 + DETECTION_MARGIN) * thickness;
    let band = Vec3::splat(reach);
    let to_local = collider.end.inverse();
    let from_local_start = collider.start.inverse();
    for (t, (tri, &(tmin, tmax))) in triangles.iter().zip(boxes.iter()).enumerate() {
        if !overlap((tmin, tmax), near_collider) {
            continue;
        }
        let Some(corners) = corners_of(p, tri) else { continue };
        candidates.clear();
        if let Shape::General(solid) = &collider.local {
            let local = corners.map(|c| Vec3::from(to_local.transform_point(c)));
            // a triangle farther from the solid than its size and the band meets none of its edges
            let centre = (local[0] + local[1] + local[2]) / 3.0;
            let size = local.iter().map(|c| c.distance(centre)).fold(0.0, f32::max);
            if solid.clearance(centre) > CLEAR_SIZE * size + 2.0 * (reach + solid.margin) {
                continue;
            }
            let (lmin, lmax) = (local[0].min(local[1]).min(local[2]), local[0].max(local[1]).max(local[2]));
            let query = (lmin - band, lmax + band);
            if let Some(edges) = kept.get((k, t), *tri, query) {
                candidates.extend_from_slice(edges);
            } else {
                // looked up with room for a few substeps of the triangle's motion relative to the solid
                let start = tri.map(|i| Vec3::from(from_local_start.transform_point(x[i as usize])));
                let moved = local.iter().zip(&start).map(|(end, start)| end.distance(*start)).fold(0.0, f32::max);
                let room = Vec3::splat(reach + KEPT_SUBSTEPS * moved);
                let looked_up = (query.0 - room, query.1 + room);
                // each edge once (a mesh edge is reported with each of its triangles), and only if its own box
                // meets the lookup box: the grid's cells hold several times as many, which every substep would test
                *stamp = stamp.wrapping_add(1);
                if *stamp == 0 {
                    seen.fill(0);
                    *stamp = 1;
                }
                seen.resize(seen.len().max(end_edges.len()), 0);
                collider.local.edges_near(looked_up.0, looked_up.1, &mut |e| {
                    if let Some(mark) = seen.get_mut(e as usize).filter(|mark| **mark != *stamp) {
                        *mark = *stamp;
                        if local_edges.get(e as usize).is_some_and(|edge| overlap(looked_up, edge.bounds(0.0))) {
                            candidates.push(e);
                        }
                    }
                });
                // in the edges' own order, not the grid's: the projection's order is the same for every pose
                candidates.sort_unstable();
                kept.keep((k, t), *tri, looked_up, candidates);
            }
        } else {
            candidates.extend(0..end_edges.len() as u32);
        }
        let edge_pair = |e: u32| Some((end_edges.get(e as usize)?, start_edges.get(e as usize)?));
        // the triangle's frame only once an edge is near its box: most triangles near a collider are near none of
        // its edges (a sheet lying on a table top, away from the rim)
        let grown = (tmin - band, tmax + band);
        let near = |e: &u32| end_boxes.get(*e as usize).is_some_and(|&edge| overlap(grown, edge));
        let Some(first) = candidates.iter().position(near) else { continue };
        let Some(frame) = TriangleFrame::new(corners, tri.map(|i| x[i as usize])) else { continue };
        pieces.clear();
        pieces.extend(candidates[first..].iter().filter(|e| near(e)).filter_map(|&e| {
            let (edge, start) = edge_pair(e)?;
            Some((e, Piece::of(edge, start, &frame, thickness)?))
        }));
        // a triangle an edge went through at the start is partly inside the solid, so the sides its pieces
        // started on mean nothing: the triangle leaves, at the depenetration speed, to the side of its plane that
        // the least move clears of every piece (a corner poking through it: over the corner). One with a held
        // corner is released instead (its vertices' contacts and the cloth pull it out): pushed in every
        // iteration, its free vertices alone would swing against their edges (docs/solvers.md)
        let crossed = pieces.iter().any(|(_, piece)| piece.crossed_at_start());
        if crossed && tri.iter().any(|&i| w.get(i as usize).is_none_or(|&wi| wi == 0.0)) {
            continue;
        }
        let side = crossed.then(|| clearing_side(pieces));
        for (e, piece) in pieces.iter() {
            let Some(pair) = edge_pair(*e) else { continue };
            feature_hits(pair, (piece, &frame), (thickness, dt, side), |hit| {
                found.push(FeatureContact {
                    vertices: *tri,
                    bary: hit.bary,
                    collider: k as u32,
                    point: hit.point,
                    normal: hit.normal,
                    gap: hit.gap,
                    started_inside: hit.started_inside,
                    moved: [Vec3::ZERO; 3],
                })
            });
        }
    }
}

/// A collider's edges in its own frame, at the start and at the end of the substep, and their boxes at the end
/// (grown by their radii).
type EdgePoses<'a> = (&'a [FeatureEdge], &'a [FeatureEdge], &'a [FeatureEdge], &'a [(Vec3, Vec3)]);

/// A cloth triangle as the feature test reads it, set up once for all the edges near it.
#[derive(Clone, Copy, Debug)]
struct TriangleFrame {
    /// The corners at the end of the substep (the predictions p).
    corners: [Vec3; 3],
    /// The corners at its start.
    start: [Vec3; 3],
    /// The unit normal at the end.
    normal: Vec3,
    /// The normal at the start (not normalised).
    start_normal: Vec3,
    /// The edges from corner 0, their dot products and the inverse of the squared area term.
    e1: Vec3,
    e2: Vec3,
    d: [f32; 3],
    inv_denom: f32,
}

impl TriangleFrame {
    /// The triangle with `corners` at the end and `start` at the start of the substep; `None` if degenerate.
    fn new(corners: [Vec3; 3], start: [Vec3; 3]) -> Option<Self> {
        let (e1, e2) = (corners[1] - corners[0], corners[2] - corners[0]);
        let normal = e1.cross(e2).try_normalize()?;
        let start_normal = (start[1] - start[0]).cross(start[2] - start[0]);
        let d = [e1.dot(e1), e1.dot(e2), e2.dot(e2)];
        let denom = d[0] * d[2] - d[1] * d[1];
        let valid = denom.is_finite() && denom > DEGENERATE_SINE * DEGENERATE_SINE * d[0] * d[2];
        valid.then(|| Self { corners, start, normal, start_normal, e1, e2, d, inv_denom: 1.0 / denom })
    }

    /// The barycentric coordinates of q's projection onto the triangle's plane (as `selfcollide::barycentric`).
    fn barycentric(&self, q: Vec3) -> Vec3 {
        let r = q - self.corners[0];
        let (dr1, dr2) = (r.dot(self.e1), r.dot(self.e2));
        let b2 = (self.d[2] * dr1 - self.d[1] * dr2) * self.inv_denom;
        let b3 = (self.d[0] * dr2 - self.d[1] * dr1) * self.inv_denom;
        Vec3::new(1.0 - b2 - b3, b2, b3)
    }
}

/// Where a feature edge comes within its gap of a triangle.
#[derive(Clone, Copy, Debug, PartialEq)]
struct FeatureHit {
    /// An end of the edge's piece over the triangle, at the end of the substep.
    point: Vec3,
    /// Its barycentric coordinates on the triangle (clamped to the triangle).
    bary: [f32; 3],
    /// The side the triangle keeps, from the feature towards the triangle.
    normal: Vec3,
    /// The gap it keeps: the edge's radius plus the thickness, or less if it started closer.
    gap: f32,
    /// It started inside the solid: within the edge's radius of it, or past it.
    started_inside: bool,
}

/// The piece of an edge over a triangle: where it starts and ends along the edge, the barycentric coordinates
/// of the edge's ends, and the piece's ends' heights over the triangle at the start of the substep.
#[derive(Clone, Copy, Debug)]
struct Piece {
    along: [f32; 2],
    bary: [Vec3; 2],
    start_heights: [f32; 2],
}

impl Piece {
    /// The piece of `edge` inside the prism over `tri` (barycentric coordinates ≥ −margin), if the edge comes
    /// within the detection band of the triangle's plane; `start_edge` is the edge at the start of the substep.
    fn of(edge: &FeatureEdge, start_edge: &FeatureEdge, tri: &TriangleFrame, thickness: f32) -> Option<Self> {
        let [a, b] = edge.ends;
        let (p0, n) = (tri.corners[0], tri.normal);
        // an edge wholly beyond the detection band on one side of the plane is not near the triangle
        let reach = edge.radius + (1.0 + DETECTION_MARGIN) * thickness;
        let (da, db) = ((a - p0).dot(n), (b - p0).dot(n));
        if (da > reach && db > reach) || (da < -reach && db < -reach) {
            return None;
        }
        // barycentric coordinates are affine along the edge: clip [0, 1] to where all three are ≥ −margin
        let bary = [tri.barycentric(a), tri.barycentric(b)];
        let (mut t0, mut t1) = (0.0f32, 1.0f32);
        for (from, to) in bary[0].to_array().into_iter().zip(bary[1].to_array()) {
            let (from, slope) = (from + BARY_MARGIN, to - from);
            if slope > 0.0 {
                t0 = t0.max(-from / slope);
            } else if slope < 0.0 {
                t1 = t1.min(-from / slope);
            } else if from < 0.0 {
                return None;
            }
        }
        // (a NaN bound leaves no piece)
        if t0.partial_cmp(&t1).is_none_or(|order| order.is_gt()) {
            return None;
        }
        let start_height =
            |t: f32| (start_edge.ends[0].lerp(start_edge.ends[1], t) - tri.start[0]).dot(tri.start_normal);
        Some(Self { along: [t0, t1], bary, start_heights: [start_height(t0), start_height(t1)] })
    }

    /// Whether the piece went through the triangle at the start of the substep.
    fn crossed_at_start(&self) -> bool {
        let [h0, h1] = self.start_heights;
        (h0 < 0.0 && h1 > 0.0) || (h0 > 0.0 && h1 < 0.0)
    }
}

/// +1 or −1 along a triangle's start normal: the side to which the triangle's plane moves the least to have every
/// piece's ends on the other side, measured at the start of the substep.
fn clearing_side(pieces: &[(u32, Piece)]) -> f32 {
    let ends = pieces.iter().flat_map(|(_, piece)| piece.start_heights);
    let (above, below) = ends.fold((0.0f32, 0.0f32), |(above, below), h| (above.max(h), below.max(-h)));
    if above <= below { 1.0 } else { -1.0 }
}

/// The contacts of `edge` with the triangle over which `piece` lies: one for each end of the piece within the
/// detection band (an edge is on one side of a plane if both ends of its piece are). The triangle keeps the side
/// of the feature it started on, or if some edge went through it, the `side` (±1 along its normal) it leaves to,
/// at its starting gap plus [`DEPENETRATION_SPEED`]·Δt if that is less than the full gap.
fn feature_hits(
    (edge, start_edge): (&FeatureEdge, &FeatureEdge),
    (piece, tri): (&Piece, &TriangleFrame),
    (thickness, dt, side): (f32, f32, Option<f32>),
    mut hit: impl FnMut(FeatureHit),
) {
    let n = tri.normal;
    let [h0, h1] = piece.start_heights;
    let above = h0 + h1;
    let normal = match side {
        Some(side) => n * side,
        None if above.is_finite() && above != 0.0 => -n * above.signum(),
        None => return,
    };
    let full_gap = edge.radius + thickness;
    let [t0, t1] = piece.along;
    for along in if t1 > t0 { [Some(t0), Some(t1)] } else { [Some(t0), None] }.into_iter().flatten() {
        let q = edge.ends[0].lerp(edge.ends[1], along);
        // how far q is past the plane the triangle keeps beyond it
        let depth = (q - tri.corners[0]).dot(normal) + full_gap;
        if depth <= -DETECTION_MARGIN * full_gap {
            continue;
        }
        let bary = piece.bary[0].lerp(piece.bary[1], along).max(Vec3::ZERO);
        let bary = bary / bary.element_sum().max(f32::MIN_POSITIVE);
        let on_at_start = bary.x * tri.start[0] + bary.y * tri.start[1] + bary.z * tri.start[2];
        let start_gap = (on_at_start - start_edge.ends[0].lerp(start_edge.ends[1], along)).dot(normal);
        let gap = full_gap.min(start_gap + DEPENETRATION_SPEED * dt);
        hit(FeatureHit { point: q, bary: bary.to_array(), normal, gap, started_inside: start_gap < edge.radius });
    }
}

/// Lines (9)–(11) for the feature contacts: each moves its triangle's vertices, weighted by inverse mass and
/// barycentric coordinate, until Σ bᵢ pᵢ is its gap beyond q along n (the collider has infinite mass within the
/// loop, §4.2), adding each vertex's displacement to [`FeatureContact::moved`].
pub fn project_feature_contacts(p: &mut impl ParticleAccess, contacts: &mut [FeatureContact]) {
    for c in contacts {
        if c.vertices.iter().any(|&i| i as usize >= p.len()) {
            continue;
        }
        let [i, j, k] = c.vertices.map(|v| v as usize);
        let [bi, bj, bk] = c.bary;
        let on = p.p(i) * bi + p.p(j) * bj + p.p(k) * bk;
        let violation = c.gap - (on - c.point).dot(c.normal);
        let weight = p.w(i) * bi * bi + p.w(j) * bj * bj + p.w(k) * bk * bk;
        if violation <= 0.0 || weight <= 0.0 {
            continue;
        }
        // near a pinned or held vertex the free ones carry the point with small weights and would be thrown by
        // many times the violation: no vertex moves more than `MAX_LEVER` times it, the rest stays unresolved
        let largest = (p.w(i) * bi).max(p.w(j) * bj).max(p.w(k) * bk);
        let lambda = violation / weight.max(largest / MAX_LEVER);
        for (slot, (v, b)) in [(i, bi), (j, bj), (k, bk)].into_iter().enumerate() {
            let shift = c.normal * (lambda * p.w(v) * b);
            p.shift(v, shift);
            c.moved[slot] += shift;
        }
    }
}

/// The box around `tri` at `positions`, if its indices are in range, its corners finite and one of them free
/// (inverse mass `w` not 0). Written without early exits: it runs for every triangle in every substep.
fn triangle_box(positions: &[Vec3], w: &[f32], &[a, b, c]: &[u32; 3]) -> Option<(Vec3, Vec3)> {
    let (a, b, c) = (a as usize, b as usize, c as usize);
    let (Some(&pa), Some(&pb), Some(&pc)) = (positions.get(a), positions.get(b), positions.get(c)) else {
        return None;
    };
    let (Some(&wa), Some(&wb), Some(&wc)) = (w.get(a), w.get(b), w.get(c)) else { return None };
    let finite = pa.is_finite() & pb.is_finite() & pc.is_finite();
    let free = (wa != 0.0) | (wb != 0.0) | (wc != 0.0);
    (finite & free).then(|| (pa.min(pb).min(pc), pa.max(pb).max(pc)))
}

/// The three corners of `tri` at `positions`, if its indices are in range and the corners finite.
fn corners_of(positions: &[Vec3], tri: &[u32; 3]) -> Option<[Vec3; 3]> {
    let corners = [positions.get(tri[0] as usize)?, positions.get(tri[1] as usize)?, positions.get(tri[2] as usize)?];
    corners.iter().all(|c| c.is_finite()).then(|| corners.map(|c| *c))
}

#[cfg(test)]
mod tests {
    use super::*;
    use bevy::math::{Isometry3d, Quat};

    /// A unit box standing on the origin's plane y = 0 with its top corners at y = 1.
    fn unit_box() -> [SweptCollider; 1] {
        let shape = Shape::Box { center: Vec3::Y * 0.5, rotation: Quat::IDENTITY, half_extents: Vec3::splat(0.5) };
        [SweptCollider::new(shape, Isometry3d::IDENTITY, Isometry3d::IDENTITY, 0.5, 0.0)]
    }

    /// A triangle at height `y` over the box's top corner (0.5, 1, 0.5), its vertices beyond the box's top face.
    fn triangle_at(y: f32) -> Vec<Vec3> {
        [Vec3::new(-0.5, y, 1.2), Vec3::new(1.2, y, -0.5), Vec3::new(1.5, y, 1.5)].to_vec()
    }

    /// The triangle's height over the point (x, z).
    fn height_at(p: &[Vec3], x: f32, z: f32) -> f32 {
        let flat = |q: Vec3| Vec3::new(q.x, 0.0, q.z);
        let corners = [flat(p[0]), flat(p[1]), flat(p[2])];
        let frame = TriangleFrame::new(corners, corners).expect("a proper triangle");
        let b = frame.barycentric(Vec3::new(x, 0.0, z));
        b.x * p[0].y + b.y * p[1].y + b.z * p[2].y
    }

    fn contacts_of(x: &[Vec3], p: &[Vec3], thickness: f32) -> Vec<FeatureContact> {
        let colliders = unit_box();
        let mut features = ColliderFeatures::default();
        features.refill(&colliders);
        let cloth = FeatureCloth { x, p, w: &[1.0; 3], triangles: &[[0, 1, 2]] };
        let (mut found, mut search) = (Vec::new(), FeatureSearch::default());
        find_feature_contacts(cloth, (&colliders, &features), (thickness, 0.01, false), &mut found, &mut search);
        found
    }

    fn project(p: &mut [Vec3], contacts: &mut [FeatureContact]) {
        let mut view = crate::sim::constraints::access::Slices { p, w: &[1.0; 3] };
        for _ in 0..20 {
            project_feature_contacts(&mut view, contacts);
        }
    }

    #[test]
    fn a_box_corner_rising_into_a_triangle_lifts_it_by_the_thickness() {
        // the triangle started 2 cm above the corner and was predicted 3 cm through it
        let (x, mut p) = (triangle_at(1.02), triangle_at(0.97));
        let mut contacts = contacts_of(&x, &p, 0.01);
        assert!(!contacts.is_empty(), "the corner under the triangle makes a contact");
        assert!(contacts.iter().all(|c| c.normal.y > 0.99 && c.gap == 0.01), "{contacts:?}");
        project(&mut p, &mut contacts);
        let corner = height_at(&p, 0.5, 0.5);
        assert!(corner > 1.01 - 1e-4 && corner < 1.03, "lifted to the gap: {corner} {p:?} {contacts:?}");
        // the momentum the triangle was given (equal masses) is along +y: the box takes the opposite
        let given: Vec3 = contacts.iter().flat_map(|c| c.moved).sum();
        assert!(given.y > 0.0 && given.x.abs() < 1e-6 && given.z.abs() < 1e-6, "{given}");
    }

    #[test]
    fn a_triangle_far_from_every_edge_gets_no_contact() {
        assert!(contacts_of(&triangle_at(1.2), &triangle_at(1.2), 0.01).is_empty());
        // nor one lying flat on the ground beside the box, 10 cm below its bottom edges' reach
        let beside: Vec<Vec3> = triangle_at(0.0).iter().map(|q| *q + Vec3::new(3.0, 0.0, 0.0)).collect();
        assert!(contacts_of(&beside, &beside, 0.01).is_empty());
    }

    #[test]
    fn a_triangle_that_starts_inside_the_gap_leaves_at_the_depenetration_speed() {
        // 2 mm above the corner at the start, with a 5 cm thickness: moved out by 2 m/s · Δt, not thrown out
        let (x, mut p) = (triangle_at(1.002), triangle_at(1.002));
        let mut contacts = contacts_of(&x, &p, 0.05);
        let allowed = 0.002 + DEPENETRATION_SPEED * 0.01;
        assert!(!contacts.is_empty() && contacts.iter().all(|c| (c.gap - allowed).abs() < 1e-5), "{contacts:?}");
        project(&mut p, &mut contacts);
        let corner = height_at(&p, 0.5, 0.5);
        assert!((corner - (1.0 + allowed)).abs() < 1e-4, "moved out by the allowance only: {corner}");
    }

    #[test]
    fn a_triangle_through_a_box_corner_leaves_it_at_the_depenetration_speed() {
        // 1 cm below the top face, all three vertices outside the box, the corner's upright edge through the
        // triangle: every edge near it lifts it toward the top face's outside by 2 m/s · Δt from where it started
        let (x, mut p) = (triangle_at(0.99), triangle_at(0.99));
        let mut contacts = contacts_of(&x, &p, 0.05);
        let allowed = -0.01 + DEPENETRATION_SPEED * 0.01;
        assert!(contacts.len() >= 2, "{contacts:?}");
        assert!(contacts.iter().all(|c| c.normal.y > 0.99 && (c.gap - allowed).abs() < 1e-5), "{contacts:?}");
        project(&mut p, &mut contacts);
        let corner = height_at(&p, 0.5, 0.5);
        assert!((corner - (1.0 + allowed)).abs() < 1e-4, "moved out by the allowance only: {corner}");
    }

    #[test]
    fn a_triangle_under_a_box_keeps_below_its_bottom_edges() {
        // a box lowered onto a sheet: the sheet started below the bottom face and stays below it
        let lower = |y: f32| triangle_at(y).iter().map(|q| *q - Vec3::Y).collect::<Vec<_>>();
        let (x, mut p) = (lower(0.98), lower(1.005));
        let mut contacts = contacts_of(&x, &p, 0.01);
        assert!(!contacts.is_empty() && contacts.iter().all(|c| c.normal.y < -0.99), "{contacts:?}");
        project(&mut p, &mut contacts);
        let corner = height_at(&p, 0.5, 0.5);
        assert!(corner < -0.01 + 1e-4 && corner > -0.03, "{corner}");
    }

    #[test]
    fn a_triangle_held_at_one_corner_is_never_thrown() {
        // the corner lies over the pinned vertex's end of the triangle: the two free vertices carry a hundredth of
        // the point each, and resolving 1 cm through them alone would move them half a metre
        let mut p = [Vec3::new(0.0, 0.99, 0.0), Vec3::new(1.0, 0.99, 0.0), Vec3::new(0.0, 0.99, 1.0)];
        let contact = FeatureContact {
            vertices: [0, 1, 2],
            bary: [0.98, 0.01, 0.01],
            collider: 0,
            point: Vec3::new(0.01, 0.99, 0.01),
            normal: Vec3::Y,
            gap: 0.01,
            started_inside: false,
            moved: [Vec3::ZERO; 3],
        };
        let mut view = crate::sim::constraints::access::Slices { p: &mut p, w: &[0.0, 1.0, 1.0] };
        project_feature_contacts(&mut view, &mut [contact]);
        assert!(p[0].y == 0.99, "the pinned vertex stays");
        assert!(p[1].y - 0.99 <= MAX_LEVER * 0.01 + 1e-6 && p[1].y > 0.99, "lifted, not thrown: {}", p[1]);
    }

    #[test]
    fn edges_refilled_as_colliders_move_on_are_those_of_a_fresh_fill() {
        let shape = Shape::Box { center: Vec3::ZERO, rotation: Quat::IDENTITY, half_extents: Vec3::splat(0.5) };
        let pose = |k: f32| Isometry3d::new(Vec3::new(0.1 * k, 1.0, 0.0), Quat::from_rotation_y(0.3 * k));
        let at = |k: f32, moving: bool| {
            let still = unit_box()[0].clone();
            let moved = SweptCollider::new(shape.clone(), pose(k - 1.0), pose(k), 0.5, 0.0);
            if moving { vec![still, moved] } else { vec![moved, still] }
        };
        let mut kept = ColliderFeatures::default();
        // moving on, standing still, the colliders reordered, then one of them gone
        let substeps = [at(1.0, true), at(2.0, true), at(2.0, true), at(3.0, false), unit_box().to_vec()];
        for colliders in substeps {
            kept.refill(&colliders);
            let mut fresh = ColliderFeatures::default();
            fresh.refill(&colliders);
            assert_eq!((&kept.start, &kept.end, &kept.end_boxes), (&fresh.start, &fresh.end, &fresh.end_boxes));
            assert_eq!((&kept.first, &kept.bounds), (&fresh.first, &fresh.bounds));
        }
    }

    #[test]
    fn every_side_of_a_mesh_is_one_edge_found_once() {
        let v = [Vec3::ZERO, Vec3::X, Vec3::Y, Vec3::Z];
        let tris = [[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]];
        let edges = mesh_edges(&v, &tris);
        assert_eq!(edges.len(), 6, "a tetrahedron's six edges, each once");
        for tri in tris {
            for [i, j] in [[tri[0], tri[1]], [tri[1], tri[2]], [tri[2], tri[0]]] {
                let (a, b) = (v[i as usize], v[j as usize]);
                assert!(edges.iter().any(|e| e.ends == [a, b] || e.ends == [b, a]), "side {i}–{j} is an edge");
            }
        }
    }

    use super::super::general::mesh_feature_edges as mesh_edges;

    /// A solid that is only edges: a lattice of 5 cm edges along x and z over the square ±0.5 m of y = 0.
    #[derive(Debug)]
    struct Lattice(Vec<FeatureEdge>);

    impl Lattice {
        fn new() -> Self {
            let at = |i: i32, j: i32| Vec3::new(i as f32 * 0.05, 0.0, j as f32 * 0.05);
            let ends = (-10..10)
                .flat_map(|i| (-10..10).flat_map(move |j| [[at(i, j), at(i + 1, j)], [at(i, j), at(i, j + 1)]]));
            Self(ends.map(|ends| FeatureEdge { ends, radius: 0.0 }).collect())
        }
    }

    impl crate::sim::collide::general::SolidQueries for Lattice {
        fn closest(&self, q: Vec3) -> (Vec3, bool, Vec3) {
            (q.with_y(0.0), false, Vec3::Y)
        }
        fn sweep(&self, _: Vec3, _: Vec3, _: f32) -> Option<(f32, Vec3)> {
            None
        }
        fn aabb(&self) -> (Vec3, Vec3) {
            (Vec3::new(-0.5, 0.0, -0.5), Vec3::new(0.5, 0.0, 0.5))
        }
        fn edges(&self) -> &[FeatureEdge] {
            &self.0
        }
    }

    #[test]
    fn edges_kept_from_substep_to_substep_give_the_contacts_of_a_fresh_lookup() {
        // a 7 × 7-vertex sheet of 4 cm squares slides and sinks over the lattice while it turns under it
        let solid = Shape::General(GeneralShape::new(std::sync::Arc::new(Lattice::new())));
        let grid = |k: usize| {
            let shift = Vec3::new(-0.2 + 0.01 * k as f32, 0.02 - 0.001 * k as f32, -0.1 + 0.004 * k as f32);
            (0..49).map(|v| Vec3::new((v % 7) as f32 * 0.04, 0.0, (v / 7) as f32 * 0.04) + shift).collect::<Vec<_>>()
        };
        let triangles: Vec<[u32; 3]> = (0..36u32)
            .flat_map(|q| {
                let v = q / 6 * 7 + q % 6;
                [[v, v + 1, v + 8], [v, v + 8, v + 7]]
            })
            .collect();
        let w = [1.0; 49];
        let pose = |k: usize| Isometry3d::from_rotation(Quat::from_rotation_y(0.01 * k as f32));
        let (mut kept, mut found, mut fresh) = (FeatureSearch::default(), Vec::new(), Vec::new());
        let mut touching = 0;
        for k in 0..24 {
            let (x, p) = (grid(k), grid(k + 1));
            let colliders = [SweptCollider::new(solid.clone(), pose(k), pose(k + 1), 0.5, 0.0)];
            let mut features = ColliderFeatures::default();
            features.refill(&colliders);
            let cloth = || FeatureCloth { x: &x, p: &p, w: &w, triangles: &triangles };
            let knobs = (0.01, 0.01, false);
            find_feature_contacts(cloth(), (&colliders, &features), knobs, &mut found, &mut kept);
            find_feature_contacts(cloth(), (&colliders, &features), knobs, &mut fresh, &mut FeatureSearch::default());
            assert_eq!(found, fresh, "substep {k}");
            touching += usize::from(!found.is_empty());
        }
        assert!(touching > 10, "the sheet meets the lattice in {touching} of 24 substeps");
        // far fewer lookups than triangles met: most substeps used the kept edges
        let lookups: usize = kept.slices.buffers().iter().filter_map(|s| s.lock().ok().map(|s| s.kept.lookups)).sum();
        assert!(lookups > 0 && lookups < 72 * 24 / 4, "{lookups} lookups for 72 triangles over 24 substeps");
    }
}
