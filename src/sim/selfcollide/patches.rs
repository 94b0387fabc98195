//! Normal-cone culling of the self-collision search (§4.3): which vertex–triangle pairs cannot touch because
//! they lie on one smooth, untorn piece of cloth.
//!
//! The curvature criterion of Volino and Magnenat-Thalmann (1994; also Provot 1997, and the cloth collision
//! hierarchies of Mezger et al. 2003): a connected piece of surface whose normals all lie within a cone of
//! half-angle below 90° is a height field over the plane across the cone's axis, so it cannot meet itself. The
//! mesh is cut once into compact [`Patches`] of edge-connected triangles; every step, each patch's cone
//! covers its triangles' normals at the start (x) and at the end (p) of the step (a unit normal turning
//! between the two stays on the arc joining them, inside any cap of half-angle below 90° that holds both ends).
//! Each step the patches are grouped into *flat regions*: grown over shared mesh edges from an intact patch (no
//! tear has changed its triangles since it was cut) while one cone narrower than [`FLAT_HALF_ANGLE`] holds every
//! cone of the region (a conservative bound from the patches' cones). A vertex–triangle pair is tested only if
//! the boxes of their patches overlap and the two patches are not in the same flat region; a torn or bent patch
//! is in no region and is always searched against itself.
//!
//! The contour condition of the criterion (the piece's border must not overlap itself when seen along the
//! axis) is not tested. An intact patch is small and compact (about [`MAX_PATCH_TRIANGLES`] triangles grown by
//! breadth-first search), so it cannot wrap around onto itself without stretching far beyond what the stretch
//! constraints allow; a region of several untorn patches could overlap itself along its axis only by winding
//! around a part that is not in it, like a spiral ramp, which no shipped scene comes near. This is the assumption
//! the culling rests on; the tests below check the cases that matter (a folded U, a torn patch, a sheet falling
//! through another).

//! Why 45°, not the criterion's 90°: the criterion rules out crossings, but the contact predicate also holds a
//! vertex within the detection band of a triangle's plane. Across a hinge bent by β (the angle between the two
//! normals) the opposite vertex projects onto its neighbour's plane cos β·(its height) outside the shared edge,
//! so it can only count as over the neighbour (barycentrics ≥ −[`BARY_MARGIN`](super::BARY_MARGIN)) for β
//! near 90° or more, and it then lies a whole triangle height away from the plane. Normals within 45° of an
//! axis differ by at most 90°, so a culled pair could only have touched if the band exceeded the triangles'
//! heights — the module docs' rule for the thickness already excludes that.
//!
//! The culling removes pairs, never adds one: the contacts found are those of the full search minus pairs on
//! smooth, untorn cloth (where a full search finds none at all when the band is below the triangle heights).

use bevy::math::Vec3;

use super::hash::{EMPTY_BOX, swept_bounds};
use super::{combine_capacity, corners, sorted_edge};
use crate::sim::parallel::SliceOutputs;

/// Cones narrower than this (radians) count as flat: see the module docs.
pub const FLAT_HALF_ANGLE: f32 = std::f32::consts::FRAC_PI_4;
/// Triangles per patch: a mesh is cut into patches of about this many edge-connected triangles (more for very
/// large meshes, so there are at most [`MAX_PATCHES`]).
pub const MAX_PATCH_TRIANGLES: usize = 32;
/// Most patches: the pairwise box test is quadratic in their number.
const MAX_PATCHES: usize = 256;
/// Patches per slice of the per-step pass at least: below that it runs on one thread.
const MIN_PATCH_SLICE: usize = 16;
/// No patch (a vertex in no triangle).
const NONE: u32 = u32::MAX;

/// The patches of one cloth mesh and, after [`Patches::update`], which pairs of them the search must test.
#[derive(Clone, Debug, Default)]
pub struct Patches {
    /// The triangles the patches were cut from (to tell which patches tearing has changed).
    cut_from: Vec<[u32; 3]>,
    /// The triangles at the last update (topology work is redone only when they change).
    seen: Vec<[u32; 3]>,
    /// Per triangle: its patch.
    patch_of: Vec<u32>,
    /// The triangles patch after patch: patch k's are `members[member_start[k]..member_start[k + 1]]`.
    members: Vec<u32>,
    member_start: Vec<u32>,
    /// Per vertex: the patch of the first triangle that has it, or [`NONE`].
    owner: Vec<u32>,
    /// Some vertex is in no triangle: it is tested against every triangle.
    loose_vertices: bool,
    /// Per patch: whether its triangles are still those it was cut from.
    intact: Vec<bool>,
    /// Per patch: the patches it shares a mesh edge with (in the mesh they were cut from), as offsets into
    /// `neighbours`.
    neighbour_start: Vec<u32>,
    neighbours: Vec<u32>,
    /// Per triangle, this step: its swept box, grown as in the hash.
    triangle_bounds: Vec<[Vec3; 2]>,
    /// Per patch, this step: box, unit cone axis and half-angle (∞ if some normal is missing).
    bounds: Vec<[Vec3; 2]>,
    axis: Vec<Vec3>,
    half_angle: Vec<f32>,
    /// Per patch, this step: its flat region (see [`Patches::grow_flat_regions`]), or [`NONE`].
    region_of: Vec<u32>,
    queue: Vec<u32>,
    /// Scratch: the patches with a box, by the box's lowest x.
    order: Vec<u32>,
    /// Per patch, this step: the patches it is active with, as offsets into `partners`.
    partner_start: Vec<u32>,
    partners: Vec<u32>,
    /// Patch × patch bits, this step: the pair must be searched.
    active: BitMatrix,
    /// Per patch, this step: it is in some active pair.
    needed: Vec<bool>,
    slices: SliceOutputs<PatchSlice>,
}

/// What one slice of patches computes: its triangles' swept boxes (patch after patch, in `members` order) and
/// each patch's box, cone axis and half-angle; `normals` is scratch.
#[derive(Debug, Default)]
struct PatchSlice {
    boxes: Vec<[Vec3; 2]>,
    cones: Vec<([Vec3; 2], Vec3, f32)>,
    normals: Vec<Vec3>,
}

/// A square matrix of bits.
#[derive(Clone, Debug, Default)]
struct BitMatrix {
    words_per_row: usize,
    words: Vec<u64>,
}

impl BitMatrix {
    fn reset(&mut self, n: usize) {
        self.words_per_row = n.div_ceil(64);
        self.words.clear();
        self.words.resize(self.words_per_row * n, 0);
    }

    fn set_both(&mut self, a: usize, b: usize) {
        self.words[a * self.words_per_row + b / 64] |= 1 << (b % 64);
        self.words[b * self.words_per_row + a / 64] |= 1 << (a % 64);
    }

    /// The columns set in row `a`, in increasing order.
    fn row(&self, a: usize) -> impl Iterator<Item = u32> + '_ {
        let words = &self.words[a * self.words_per_row..(a + 1) * self.words_per_row];
        words.iter().enumerate().flat_map(|(i, &word)| {
            let mut rest = word;
            std::iter::from_fn(move || {
                (rest != 0).then(|| {
                    let bit = rest.trailing_zeros();
                    rest &= rest - 1;
                    (i * 64) as u32 + bit
                })
            })
        })
    }

    #[inline]
    fn get(&self, a: usize, b: usize) -> bool {
        self.words.get(a * self.words_per_row + b / 64).is_some_and(|w| w & (1 << (b % 64)) != 0)
    }
}

impl Patches {
    /// Brings the patches up to date with `triangles` over `vertex_count` vertices and computes this step's
    /// cones and boxes (triangles swept from `start` to `end`, triangle t grown by `margin(t)` as in the hash)
    /// and the active pairs. With `parallel` the per-triangle work is shared by the compute pool's threads.
    pub fn update(
        &mut self,
        start: &[Vec3],
        end: &[Vec3],
        triangles: &[[u32; 3]],
        margin: impl Fn(usize) -> f32 + Sync,
        parallel: bool,
    ) {
        let vertex_count = start.len().min(end.len());
        if self.patch_of.len() != triangles.len() {
            self.cut(triangles);
        }
        if self.seen != triangles || self.owner.len() != vertex_count {
            self.follow_topology(triangles, vertex_count);
        }
        // patch by patch (slices of patches shared by the threads): the triangles' boxes, then each patch's
        // box, cone axis (the sum of its unit normals) and half-angle (the widest normal from the axis)
        let (members, member_start) = (&self.members, &self.member_start);
        let slices = self.slices.run(self.intact.len(), MIN_PATCH_SLICE, parallel, |patches, slice| {
            let PatchSlice { boxes, cones, normals } = slice;
            boxes.clear();
            cones.clear();
            for k in patches {
                let own = &members[member_start[k] as usize..member_start[k + 1] as usize];
                normals.clear();
                let (mut bounds, mut sum, mut degenerate) = (EMPTY_BOX, Vec3::ZERO, false);
                for &t in own {
                    let tri = &triangles[t as usize];
                    let b = swept_bounds(start, end, tri, margin(t as usize));
                    boxes.push(b);
                    if b[0].cmple(b[1]).all() {
                        bounds = [bounds[0].min(b[0]), bounds[1].max(b[1])];
                    }
                    let normal = |at: &[Vec3]| corners(at, tri).and_then(cone_normal);
                    match (normal(start), normal(end)) {
                        (Some(a), Some(b)) => {
                            sum += a + b;
                            normals.extend([a, b]);
                        }
                        _ => degenerate = true,
                    }
                }
                let axis = sum.try_normalize();
                let half_angle = match axis {
                    Some(axis) if !degenerate => {
                        let least = normals.iter().fold(1.0f32, |least, n| least.min(axis.dot(*n)));
                        least.clamp(-1.0, 1.0).acos()
                    }
                    _ => f32::INFINITY,
                };
                cones.push((bounds, axis.unwrap_or(Vec3::ZERO), half_angle));
            }
        });
        self.bounds.clear();
        self.axis.clear();
        self.half_angle.clear();
        self.triangle_bounds.clear();
        self.triangle_bounds.resize(triangles.len(), EMPTY_BOX);
        let mut member = self.members.iter();
        for slice in slices {
            let Ok(slice) = slice.get_mut() else { continue };
            for &(bounds, axis, half_angle) in &slice.cones {
                self.bounds.push(bounds);
                self.axis.push(axis);
                self.half_angle.push(half_angle);
            }
            for (b, &t) in slice.boxes.iter().zip(&mut member) {
                self.triangle_bounds[t as usize] = *b;
            }
        }
        self.mark_active_pairs();
    }

    /// Combines the capacities of all buffers; unchanged between two calls means nothing was (re)allocated.
    pub fn capacity_fingerprint(&self) -> usize {
        let slices = self.slices.buffers().iter().filter_map(|slice| slice.lock().ok());
        [
            self.seen.capacity(),
            self.triangle_bounds.capacity(),
            self.order.capacity(),
            self.partners.capacity(),
            self.partner_start.capacity(),
            self.owner.capacity(),
            self.bounds.capacity(),
            self.axis.capacity(),
            self.half_angle.capacity(),
            self.region_of.capacity(),
            self.queue.capacity(),
            self.active.words.capacity(),
            self.needed.capacity(),
            slices.fold(0, |acc, s| {
                acc.wrapping_mul(31)
                    .wrapping_add(s.boxes.capacity() + (s.cones.capacity() << 20) + (s.normals.capacity() << 40))
            }),
        ]
        .into_iter()
        .fold(0, combine_capacity)
    }

    /// The fraction of the patches left to search by the last [`Self::update`] (1 for no patches).
    pub fn needed_fraction(&self) -> f32 {
        match self.needed.len() {
            0 => 1.0,
            count => self.needed.iter().filter(|n| **n).count() as f32 / count as f32,
        }
    }

    /// Per triangle: its swept box of the last [`Self::update`] ([`swept_bounds`]).
    pub fn triangle_bounds(&self) -> &[[Vec3; 2]] {
        &self.triangle_bounds
    }

    /// Whether vertex `v`, whose query box is [`lo`, `hi`], must query the hash: the box overlaps a patch its
    /// own patch is paired with (a triangle it can meet lies in such a patch, inside its box), or it is in no
    /// triangle.
    #[inline]
    pub fn vertex_needed(&self, v: usize, lo: Vec3, hi: Vec3) -> bool {
        match self.owner.get(v) {
            Some(&k) if k != NONE => self.partners_reach(k as usize, lo, hi),
            _ => true,
        }
    }

    /// Whether triangle `t` must be in the hash: its box overlaps a patch its own patch is paired with (a
    /// vertex that can meet it lies in such a patch), or some vertex is in no triangle.
    #[inline]
    pub fn triangle_needed(&self, t: usize) -> bool {
        match (self.patch_of.get(t), self.triangle_bounds.get(t)) {
            (Some(&k), Some(&[lo, hi])) if !self.loose_vertices => self.partners_reach(k as usize, lo, hi),
            _ => true,
        }
    }

    /// Whether the box [`lo`, `hi`] overlaps the box of a patch active with patch `k`. A patch in no flat
    /// region is active with itself, so this is always true there (answered without scanning its partners).
    #[inline]
    fn partners_reach(&self, k: usize, lo: Vec3, hi: Vec3) -> bool {
        if self.region_of.get(k).is_none_or(|&r| r == NONE) {
            return true;
        }
        let (Some(&from), Some(&to)) = (self.partner_start.get(k), self.partner_start.get(k + 1)) else { return true };
        self.partners[from as usize..to as usize].iter().any(|&q| {
            let [lo_q, hi_q] = self.bounds[q as usize];
            lo.cmple(hi_q).all() && lo_q.cmple(hi).all()
        })
    }

    /// Whether the pair (vertex `v`, triangle `t`) must be tested.
    #[inline]
    pub fn pair_needed(&self, v: u32, t: u32) -> bool {
        match (self.owner.get(v as usize), self.patch_of.get(t as usize)) {
            (Some(&a), Some(&b)) if a != NONE => self.active.get(a as usize, b as usize),
            _ => true,
        }
    }

    /// Cuts `triangles` into patches of edge-connected triangles grown breadth-first, each from the lowest
    /// triangle not yet in a patch; records which patches share an edge.
    fn cut(&mut self, triangles: &[[u32; 3]]) {
        let size = MAX_PATCH_TRIANGLES.max(triangles.len().div_ceil(MAX_PATCHES));
        // edges sorted by their vertices: equal neighbours are the triangles across an edge
        let mut edges: Vec<([u32; 2], u32)> = triangles
            .iter()
            .enumerate()
            .flat_map(|(t, tri)| (0..3).map(move |k| (sorted_edge(tri[k], tri[(k + 1) % 3]), t as u32)))
            .collect();
        edges.sort_unstable();
        let mut across: Vec<Vec<u32>> = vec![Vec::new(); triangles.len()];
        for run in edges.chunk_by(|a, b| a.0 == b.0) {
            for (i, a) in run.iter().enumerate() {
                for b in &run[i + 1..] {
                    across[a.1 as usize].push(b.1);
                    across[b.1 as usize].push(a.1);
                }
            }
        }
        self.patch_of = vec![NONE; triangles.len()];
        let mut count = 0u32;
        let mut queue = std::collections::VecDeque::new();
        for seed in 0..triangles.len() {
            if self.patch_of[seed] != NONE {
                continue;
            }
            let mut taken = 0;
            self.patch_of[seed] = count;
            queue.clear();
            queue.push_back(seed as u32);
            while let Some(t) = queue.pop_front() {
                taken += 1;
                for &u in &across[t as usize] {
                    if taken + queue.len() < size && self.patch_of[u as usize] == NONE {
                        self.patch_of[u as usize] = count;
                        queue.push_back(u);
                    }
                }
            }
            count += 1;
        }
        let count = count as usize;
        let mut pairs: Vec<[u32; 2]> = Vec::new();
        for run in edges.chunk_by(|a, b| a.0 == b.0) {
            for a in run {
                for b in run {
                    let (pa, pb) = (self.patch_of[a.1 as usize], self.patch_of[b.1 as usize]);
                    if pa != pb {
                        pairs.push([pa, pb]);
                    }
                }
            }
        }
        pairs.sort_unstable();
        pairs.dedup();
        self.neighbours = pairs.iter().map(|p| p[1]).collect();
        self.neighbour_start = (0..=count as u32).map(|k| pairs.partition_point(|p| p[0] < k) as u32).collect();
        self.intact = vec![true; count];
        let mut by_patch: Vec<(u32, u32)> = self.patch_of.iter().enumerate().map(|(t, &k)| (k, t as u32)).collect();
        by_patch.sort_unstable();
        self.members = by_patch.iter().map(|&(_, t)| t).collect();
        self.member_start = (0..=count as u32).map(|k| by_patch.partition_point(|&(p, _)| p < k) as u32).collect();
        self.cut_from = triangles.to_vec();
        self.seen.clear();
        self.owner.clear();
    }

    /// After a topology change (tearing): which patches are still intact, and each vertex's patch.
    fn follow_topology(&mut self, triangles: &[[u32; 3]], vertex_count: usize) {
        self.seen.clear();
        self.seen.extend_from_slice(triangles);
        for ((tri, was), &k) in triangles.iter().zip(&self.cut_from).zip(&self.patch_of) {
            if tri != was {
                self.intact[k as usize] = false;
            }
        }
        self.owner.clear();
        self.owner.resize(vertex_count, NONE);
        for (tri, &k) in triangles.iter().zip(&self.patch_of) {
            for &v in tri {
                if let Some(o) = self.owner.get_mut(v as usize)
                    && *o == NONE
                {
                    *o = k;
                }
            }
        }
        self.loose_vertices = self.owner.contains(&NONE);
    }

    /// Groups the patches into flat regions: grown over shared edges from the lowest patch not yet in a region,
    /// taking in each intact neighbour as long as one cone narrower than [`FLAT_HALF_ANGLE`] holds the whole
    /// region. A patch that is torn or not flat itself is in no region.
    fn grow_flat_regions(&mut self) {
        let count = self.intact.len();
        self.region_of.clear();
        self.region_of.resize(count, NONE);
        for seed in 0..count {
            let flat = |k: usize| self.intact[k] && self.half_angle[k] < FLAT_HALF_ANGLE;
            if self.region_of[seed] != NONE || !flat(seed) {
                continue;
            }
            let mut cone = Cone { axis: self.axis[seed], half_angle: self.half_angle[seed] };
            self.region_of[seed] = seed as u32;
            self.queue.clear();
            self.queue.push(seed as u32);
            while let Some(k) = self.queue.pop() {
                let around = self.neighbour_start[k as usize] as usize..self.neighbour_start[k as usize + 1] as usize;
                for &q in &self.neighbours[around] {
                    let q = q as usize;
                    if self.region_of[q] != NONE || !flat(q) {
                        continue;
                    }
                    let wider = cone.merge(Cone { axis: self.axis[q], half_angle: self.half_angle[q] });
                    if wider.half_angle < FLAT_HALF_ANGLE {
                        cone = wider;
                        self.region_of[q] = seed as u32;
                        self.queue.push(q as u32);
                    }
                }
            }
        }
    }

    /// The pairs of patches whose boxes overlap and that are not in the same flat region (sweep and prune
    /// along x).
    fn mark_active_pairs(&mut self) {
        self.grow_flat_regions();
        let count = self.intact.len();
        self.active.reset(count);
        self.needed.clear();
        self.needed.resize(count, false);
        self.order.clear();
        self.order.extend((0..count as u32).filter(|&k| {
            let [lo, hi] = self.bounds[k as usize];
            lo.cmple(hi).all()
        }));
        let bounds = &self.bounds;
        self.order.sort_unstable_by(|&a, &b| bounds[a as usize][0].x.total_cmp(&bounds[b as usize][0].x));
        for (i, &a) in self.order.iter().enumerate() {
            let a = a as usize;
            let [lo, hi] = self.bounds[a];
            for &b in &self.order[i..] {
                let b = b as usize;
                let [lo_b, hi_b] = self.bounds[b];
                if lo_b.x > hi.x {
                    break;
                }
                let overlap = lo.cmple(hi_b).all() && lo_b.cmple(hi).all();
                if overlap && (self.region_of[a] == NONE || self.region_of[a] != self.region_of[b]) {
                    self.active.set_both(a, b);
                    self.needed[a] = true;
                    self.needed[b] = true;
                }
            }
        }
        // the partners of each patch (the set bits of its row), as offsets into `partners`
        self.partners.clear();
        self.partner_start.clear();
        for k in 0..count {
            self.partner_start.push(self.partners.len() as u32);
            self.partners.extend(self.active.row(k));
        }
        self.partner_start.push(self.partners.len() as u32);
    }
}

/// A cone of directions: a unit axis and a half-angle (radians).
#[derive(Clone, Copy, Debug)]
struct Cone {
    axis: Vec3,
    half_angle: f32,
}

impl Cone {
    /// The smallest cone holding both cones.
    fn merge(self, other: Cone) -> Cone {
        let between = self.axis.dot(other.axis).clamp(-1.0, 1.0).acos();
        if between + other.half_angle <= self.half_angle {
            return self;
        }
        if between + self.half_angle <= other.half_angle {
            return other;
        }
        let half_angle = 0.5 * (between + self.half_angle + other.half_angle);
        // turn the axis toward the other's by the half-angle gained
        let Some(across) = (other.axis - self.axis * self.axis.dot(other.axis)).try_normalize() else {
            return Cone { axis: self.axis, half_angle: f32::INFINITY };
        };
        let (sin, cos) = (half_angle - self.half_angle).sin_cos();
        Cone { axis: self.axis * cos + across * sin, half_angle }
    }
}

/// The unit normal of a triangle, for its cone; `None` if it is degenerate (its corner angles' sines below
/// 10⁻⁶) or not finite. One square root: the cone needs directions, not the narrow phase's exact predicate.
#[inline]
fn cone_normal([p1, p2, p3]: [Vec3; 3]) -> Option<Vec3> {
    let (e1, e2) = (p2 - p1, p3 - p1);
    let c = e1.cross(e2);
    let c2 = c.length_squared();
    (c2.is_finite() && c2 > 1e-12 * e1.length_squared() * e2.length_squared()).then(|| c / c2.sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::selfcollide::{SelfContact, SelfContactSearch, find_self_contacts};

    /// An (nu × nv)-vertex sheet with spacing `d`, placed by `at(u, v)`: (positions, triangles).
    fn sheet(nu: u32, nv: u32, d: f32, at: impl Fn(f32, f32) -> Vec3) -> (Vec<Vec3>, Vec<[u32; 3]>) {
        let x = (0..nv).flat_map(|j| (0..nu).map(move |i| (i, j))).map(|(i, j)| at(i as f32 * d, j as f32 * d));
        let mut tris = Vec::new();
        for j in 0..nv - 1 {
            for i in 0..nu - 1 {
                let v = j * nu + i;
                tris.push([v, v + 1, v + nu + 1]);
                tris.push([v, v + nu + 1, v + nu]);
            }
        }
        (x.collect(), tris)
    }

    /// The contacts with and without culling, and how many patches the culled search needed, of how many.
    fn both_searches(
        x: &[Vec3],
        p: &[Vec3],
        tris: &[[u32; 3]],
        h: f32,
    ) -> (Vec<SelfContact>, Vec<SelfContact>, [usize; 2]) {
        let (mut culled, mut full) = (SelfContactSearch::default(), SelfContactSearch::default());
        full.full_search = true;
        let (mut a, mut b) = (Vec::new(), Vec::new());
        find_self_contacts(&mut culled, x, p, tris, h, false, &mut a);
        find_self_contacts(&mut full, x, p, tris, h, false, &mut b);
        let needed = &culled.patches.needed;
        (a, b, [needed.iter().filter(|n| **n).count(), needed.len()])
    }

    #[test]
    fn a_gently_waved_sheet_needs_no_search() {
        let (x, tris) = sheet(40, 40, 0.03, |u, v| Vec3::new(u, v, 0.05 * (3.0 * u).sin() * (2.0 * v).cos()));
        let p: Vec<Vec3> = x.iter().map(|v| *v + Vec3::new(0.0, -0.01, 0.002)).collect();
        let (culled, full, needed) = both_searches(&x, &p, &tris, 0.008);
        assert_eq!(culled, full);
        assert!(full.is_empty(), "{} contacts on a smooth sheet", full.len());
        assert_eq!(needed[0], 0);
    }

    #[test]
    fn a_sheet_folded_onto_itself_keeps_every_contact() {
        // a U: the lower layer along u ∈ [0, 1.2], a half-turn of radius 0.05, the upper layer back over it;
        // each patch is flat, the fold as a whole is not
        let (r, flat) = (0.05, 1.2);
        let turn = std::f32::consts::PI * r;
        let fold = move |u: f32, v: f32| {
            if u <= flat {
                Vec3::new(u, v, 0.0)
            } else if u <= flat + turn {
                let a = (u - flat) / r;
                Vec3::new(flat + r * a.sin(), v, r - r * a.cos())
            } else {
                Vec3::new(flat - (u - flat - turn), v, 2.0 * r)
            }
        };
        let (x, tris) = sheet(60, 12, 0.03, fold);
        // the tip of the upper layer falls through the lower one
        let p: Vec<Vec3> =
            x.iter().map(|v| if v.z > 1.5 * r && v.x < 0.9 { *v - Vec3::Z * 0.12 } else { *v }).collect();
        let (culled, full, needed) = both_searches(&x, &p, &tris, 0.008);
        assert!(full.len() > 50, "{} contacts", full.len());
        assert_eq!(culled, full);
        assert!(needed[0] > 0 && needed[0] < needed[1], "{needed:?}");
    }

    #[test]
    fn a_rough_sheet_falling_through_another_loses_no_contact() {
        let mut seed = 7u64;
        let mut noise = move || {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            (seed >> 40) as f32 / (1u64 << 24) as f32 - 0.5
        };
        let wave = |u: f32, v: f32| 0.04 * (9.0 * u).sin() * (7.0 * v).sin();
        let (mut x, mut tris) = sheet(30, 30, 0.03, |u, v| Vec3::new(u, v, wave(u, v)));
        let (upper, upper_tris) = sheet(20, 20, 0.03, |u, v| Vec3::new(u + 0.2, v + 0.2, 0.05 + wave(u, v)));
        let base = x.len() as u32;
        tris.extend(upper_tris.iter().map(|t| t.map(|i| i + base)));
        x.extend(upper);
        let x: Vec<Vec3> = x.iter().map(|v| *v + 0.004 * Vec3::new(noise(), noise(), noise())).collect();
        // the upper sheet falls through the lower one during the step
        let p: Vec<Vec3> =
            x.iter().enumerate().map(|(i, v)| *v - Vec3::Z * if i >= base as usize { 0.1 } else { 0.0 }).collect();
        let (culled, full, needed) = both_searches(&x, &p, &tris, 0.008);
        assert!(full.len() > 100, "{} contacts", full.len());
        assert_eq!(culled, full);
        assert!(needed[0] > 0 && needed[0] < needed[1], "{needed:?}");
    }

    #[test]
    fn a_torn_patch_is_searched_again() {
        let (x, mut tris) = sheet(20, 20, 0.03, |u, v| Vec3::new(u, v, 0.0));
        let mut patches = Patches::default();
        patches.update(&x, &x, &tris, |_| 0.008, false);
        assert!(patches.needed.iter().all(|n| !n), "a flat sheet needs nothing");
        // split vertex 45 off triangle 60 (as tearing does: a new vertex at the same place)
        let mut x = x;
        x.push(x[45]);
        let t = tris.iter().position(|tri| tri.contains(&45)).unwrap_or(0);
        let k = patches.patch_of[t] as usize;
        for v in &mut tris[t] {
            if *v == 45 {
                *v = 400;
            }
        }
        patches.update(&x, &x, &tris, |_| 0.008, false);
        assert!(!patches.intact[k] && patches.needed[k], "the torn patch must be searched");
        assert!(patches.vertex_needed(400, x[400], x[400]) && patches.pair_needed(400, t as u32));
        assert!(patches.needed.iter().filter(|n| **n).count() < patches.needed.len());
    }

    #[test]
    fn a_merged_cone_holds_both_cones() {
        let mut seed = 3u64;
        let mut unit = move || {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            (seed >> 40) as f32 / (1u64 << 24) as f32
        };
        for _ in 0..2000 {
            let mut cone = || {
                let axis = Vec3::new(unit() - 0.5, unit() - 0.5, unit() - 0.5).normalize_or(Vec3::Z);
                Cone { axis, half_angle: unit() * 1.2 }
            };
            let (a, b) = (cone(), cone());
            let m = a.merge(b);
            for c in [a, b] {
                // the far edge of c, seen from the merged axis
                let off = c.axis.dot(m.axis).clamp(-1.0, 1.0).acos() + c.half_angle;
                assert!(off <= m.half_angle + 1e-3, "{a:?} + {b:?} = {m:?} misses {c:?}");
            }
            assert!(m.half_angle <= a.half_angle.max(b.half_angle) + std::f32::consts::PI);
        }
    }
}
