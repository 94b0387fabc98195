//! Edge–edge contacts at free edges: what vertex–triangle contacts (§4.3, eq. (12)/(13)) miss.
//!
//! A vertex–triangle contact holds a vertex on its side of a triangle while the vertex projects into it. At a
//! free edge — a border of the cloth, or a tear — there is no triangle beyond, so an edge of another cloth can
//! sweep past it (a border vertex pulled round the edge by its own stretch constraints, from just outside the
//! edge triangle to just under it) with no vertex–triangle pair seeing the crossing. Here every edge near a free
//! edge of another group (another cloth) keeps its side of it.
//!
//! # Constraint
//!
//! For edges a = (a₀, a₁) and b = (b₀, b₁) with closest points a(s) = (1 − s)a₀ + s·a₁ and b(t) at the start of
//! the substep (positions x), n the unit direction from b(t) to a(s) there, the contact is the inequality
//! C = n·(a(s) − b(t)) − h ≥ 0 on the predictions, with s, t and n held for the substep — a plane through b(t)
//! that a(s) stays in front of, as eq. (12)/(13) hold a vertex in front of a triangle. Its gradients are
//! (1 − s)n, s·n, −(1 − t)n and −t·n; they sum to zero, so PBD eq. (8)–(9) conserve linear momentum, and they act
//! along one line, so angular momentum too. A pair that starts closer than h is pushed out by at most
//! [`DEPENETRATION_PER_STEP`]·h a substep in p, and no faster than a given speed (`cloth_contacts.rs`).
//!
//! # Detection ([`find_edge_contacts`])
//!
//! The free edges (those of one triangle) are found from the triangles and kept until the triangles change (a
//! tear). They query the spatial hash the vertex–triangle search built (triangles swept from x to p over the
//! rest of the step, grown by the band): a few hundred queries on sheets of thousands of triangles, and no hash
//! of their own, giving each free edge its candidate triangles ([`find_edge_candidates`]), and each edge of a
//! candidate triangle that shares no vertex with its free edge becomes a pair, once however many candidate
//! triangles it borders. As s, t and n hold for one substep only, the contacts are found from the pairs in every
//! substep ([`find_edge_contacts`]): a pair is a contact when the edges' closest points at x, moved to p, come
//! within the band along n (or cross). Contacts are ordered by edge, then free edge, whatever the hash's layout.

use bevy::math::Vec3;

use super::{DEPENETRATION_PER_STEP, SelfContactSearch, sorted_edges};
use crate::sim::parallel::SliceOutputs;

/// A contact between edge `a` and edge `b` of another group (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct EdgeContact {
    /// The edge that keeps its side, lower vertex first.
    pub a: [u32; 2],
    /// The free edge it keeps its side of.
    pub b: [u32; 2],
    /// The closest point's parameter on `a` at the start of the substep.
    pub s: f32,
    /// The closest point's parameter on `b` at the start of the substep.
    pub t: f32,
    /// The unit direction from b(t) to a(s) at the start.
    pub normal: Vec3,
    /// The distance n·(a(s) − b(t)) at the start.
    pub start_gap: f32,
}

/// The free edges of a mesh and the queries of [`find_edge_contacts`], reused every substep (nothing is
/// allocated once they have grown and the mesh keeps its triangles).
#[derive(Clone, Debug, Default)]
pub(crate) struct EdgeContactSearch {
    /// The triangles the free edges were found from.
    triangles: Vec<[u32; 3]>,
    /// The free edges, lower vertex first, sorted.
    free: Vec<[u32; 2]>,
    /// Scratch: the edges of every triangle, before sorting and counting.
    keys: Vec<[u32; 2]>,
    /// The pairs (index in `free`, triangle of another group) whose edges the contacts are searched among.
    candidates: Vec<[u32; 2]>,
    /// The pairs (edge `a`, free edge `b`) the candidates' triangles give, each once, in order: what every
    /// substep of the step tests (an edge between two candidate triangles is found from both). Packed into one
    /// number each ([`pack`]), which sorts as (a, b) and faster than the arrays.
    pairs: Vec<u128>,
    /// The candidates each slice of free edges found.
    candidate_slices: SliceOutputs<Vec<[u32; 2]>>,
    /// The contacts each slice of candidates found.
    slices: SliceOutputs<Vec<EdgeContact>>,
}

impl EdgeContactSearch {
    /// The free edges (lower vertex first, sorted) of the last search's mesh.
    #[cfg(test)]
    fn free_edges(&self) -> &[[u32; 2]] {
        &self.free
    }

    /// Combines the capacities of all buffers; unchanged between two calls means nothing was (re)allocated.
    #[cfg(test)]
    fn capacity_fingerprint(&self) -> usize {
        let slices = self.slices.buffers().iter().filter_map(|s| s.lock().ok().map(|s| s.capacity()));
        let candidates = self.candidate_slices.buffers().iter().filter_map(|s| s.lock().ok().map(|s| s.capacity()));
        [self.triangles.capacity(), self.free.capacity(), self.keys.capacity(), self.candidates.capacity()]
            .into_iter()
            .chain([self.pairs.capacity()])
            .chain(slices)
            .chain(candidates)
            .chain([self.slices.buffers().len(), self.candidate_slices.buffers().len()])
            .fold(0, super::combine_capacity)
    }

    /// Finds the free edges of `triangles`, unless they are the ones of the last call.
    fn update_free_edges(&mut self, triangles: &[[u32; 3]]) {
        if self.triangles == triangles {
            return;
        }
        self.triangles.clear();
        self.triangles.extend_from_slice(triangles);
        self.keys.clear();
        self.keys.extend(triangles.iter().flat_map(|&t| sorted_edges(t)));
        self.keys.sort_unstable();
        self.free.clear();
        self.free.extend(self.keys.chunk_by(|a, b| a == b).filter(|run| run.len() == 1).map(|run| run[0]));
    }
}

/// Fills the search's candidates with the pairs (free edge, triangle of another group) of the mesh `triangles`
/// in groups `near.groups` whose boxes over the rays `x` → `p` meet: the triangles of `near`'s hash, which the
/// vertex–triangle search (`find_self_contacts` on the same x, p, triangles and band) left there, whose swept box,
/// grown by the band, overlaps the free edge's swept box. The rays may be a whole step's: [`find_edge_contacts`]
/// then tests the candidates in each of its substeps without the hash. With `parallel` the compute pool's threads
/// share slices of the free edges; the candidates are the same.
pub(crate) fn find_edge_candidates(
    search: &mut EdgeContactSearch,
    near: &SelfContactSearch,
    x: &[Vec3],
    p: &[Vec3],
    triangles: &[[u32; 3]],
    parallel: bool,
) {
    search.update_free_edges(triangles);
    let EdgeContactSearch { free, candidate_slices, candidates, .. } = search;
    let (free, group) = (&*free, &near.groups);
    let n = x.len().min(p.len()).min(group.len());
    let found = candidate_slices.run(free.len(), MIN_QUERY_SLICE, parallel, |range, found| {
        found.clear();
        for (e, b) in range.clone().zip(&free[range]).filter(|(_, b)| (b[1] as usize) < n) {
            let [(x0, x1), (p0, p1)] = [x, p].map(|q| (q[b[0] as usize], q[b[1] as usize]));
            let (lo, hi) = (x0.min(x1).min(p0.min(p1)), x0.max(x1).max(p0.max(p1)));
            // a free edge away from every other cloth (most of them, where the cloths are apart) looks nothing up
            if !near.reaches_another_group(group[b[0] as usize], lo, hi) {
                continue;
            }
            let mut tested = 0;
            near.for_each_triangle_in_box(group[b[0] as usize], lo, hi, |t| {
                let Some(&[i, j, k]) = triangles.get(t as usize) else { return };
                if [i, j, k].iter().any(|&v| v as usize >= n)
                    || group[i as usize] == group[b[0] as usize]
                    || tested >= MAX_TRIANGLES_PER_FREE_EDGE
                {
                    return;
                }
                tested += 1;
                found.push([e as u32, t]);
            });
        }
    });
    candidates.clear();
    for slice in found {
        if let Ok(slice) = slice.get_mut() {
            candidates.extend_from_slice(slice);
        }
    }
    let EdgeContactSearch { free, candidates, pairs, .. } = search;
    let is_free = |e: &[u32; 2]| free.binary_search(e).is_ok();
    pairs.clear();
    for &[e, t] in &*candidates {
        let (Some(&b), Some(&tri)) = (free.get(e as usize), triangles.get(t as usize)) else { continue };
        // two free edges meet in each other's query: the pair is kept once, as (lower, higher)
        let kept = |a: &[u32; 2]| !(a.iter().any(|v| b.contains(v)) || *a > b && is_free(a));
        let edges = sorted_edges(tri).into_iter().filter(kept);
        pairs.extend(edges.map(|a| pack([a, b])));
    }
    pairs.sort_unstable();
    pairs.dedup();
}

/// A pair of edges (`a`, `b`) as one number, ordered as the pair.
fn pack([[a0, a1], [b0, b1]]: [[u32; 2]; 2]) -> u128 {
    u128::from(a0) << 96 | u128::from(a1) << 64 | u128::from(b0) << 32 | u128::from(b1)
}

/// The pair [`pack`] packed.
fn unpack(pair: u128) -> [[u32; 2]; 2] {
    let word = |shift: u32| (pair >> shift) as u32;
    [[word(96), word(64)], [word(32), word(0)]]
}

/// Fills `out` (cleared first) with the edge–edge contacts of the search's candidates ([`find_edge_candidates`])
/// moving from `x` to `p` within a substep, over a detection `band` (see the module docs): each edge of a
/// candidate triangle is tested against its free edge, once, in the order of the pairs (edge, free edge). With
/// `parallel` the compute pool's threads share slices of the pairs; the contacts are the same. Allocates nothing
/// once the buffers have grown.
pub(crate) fn find_edge_contacts(
    search: &mut EdgeContactSearch,
    x: &[Vec3],
    p: &[Vec3],
    band: f32,
    parallel: bool,
    out: &mut Vec<EdgeContact>,
) {
    out.clear();
    let band = if band.is_finite() { band.max(0.0) } else { 0.0 };
    let EdgeContactSearch { slices, pairs, .. } = search;
    let pairs = &*pairs;
    let n = x.len().min(p.len());
    let found = slices.run(pairs.len(), MIN_QUERY_SLICE, parallel, |range, found| {
        found.clear();
        for [a, b] in pairs[range].iter().map(|&pair| unpack(pair)) {
            if a.iter().chain(&b).all(|&v| (v as usize) < n)
                && let Some(contact) = edge_contact(a, b, x, p, band)
            {
                found.push(contact);
            }
        }
    });
    for slice in found {
        if let Ok(slice) = slice.get_mut() {
            out.extend_from_slice(slice);
        }
    }
}

/// Free edges or pairs per query slice of [`find_edge_candidates`] and [`find_edge_contacts`] at least.
const MIN_QUERY_SLICE: usize = 32;

/// Most triangles of other cloths a free edge keeps as candidates per search. Over a sheet a free edge meets
/// about a dozen; a torn cloth collapsed into a clump with another gives thousands, which would make the search
/// quadratic (as [`MAX_CANDIDATES_PER_VERTEX`](super::MAX_CANDIDATES_PER_VERTEX) bounds the vertex search). The
/// triangles beyond it, in the hash's order, are not tested; the order does not depend on the thread count.
pub const MAX_TRIANGLES_PER_FREE_EDGE: u32 = 64;

/// The contact of edges `a` and `b` over the substep x → p, if their closest points at x come within `band` of
/// each other along the direction between them, at x or at p.
pub(crate) fn edge_contact(a: [u32; 2], b: [u32; 2], x: &[Vec3], p: &[Vec3], band: f32) -> Option<EdgeContact> {
    let at = |q: &[Vec3], e: [u32; 2]| [q[e[0] as usize], q[e[1] as usize]];
    let (s, t) = closest_parameters(at(x, a), at(x, b))?;
    let point = |q: &[Vec3], e: [u32; 2], u: f32| q[e[0] as usize].lerp(q[e[1] as usize], u);
    let start = point(x, a, s) - point(x, b, t);
    let start_gap = start.length();
    let normal = start.try_normalize()?;
    let end_gap = normal.dot(point(p, a, s) - point(p, b, t));
    (start_gap.min(end_gap) < band).then_some(EdgeContact { a, b, s, t, normal, start_gap })
}

/// The parameters (s, t) ∈ [0, 1]² of the closest points of segments `a` and `b` (Ericson, Real-Time Collision
/// Detection, §5.1.9); `None` for a degenerate segment.
pub(crate) fn closest_parameters([a0, a1]: [Vec3; 2], [b0, b1]: [Vec3; 2]) -> Option<(f32, f32)> {
    let (d1, d2, r) = (a1 - a0, b1 - b0, a0 - b0);
    let (aa, ee, f) = (d1.length_squared(), d2.length_squared(), d2.dot(r));
    if aa <= f32::EPSILON || ee <= f32::EPSILON || !(aa.is_finite() && ee.is_finite()) {
        return None;
    }
    let (b, c) = (d1.dot(d2), d1.dot(r));
    let denom = aa * ee - b * b;
    let mut s = if denom > f32::EPSILON * aa * ee { ((b * f - c * ee) / denom).clamp(0.0, 1.0) } else { 0.0 };
    let mut t = (b * s + f) / ee;
    if t < 0.0 {
        (t, s) = (0.0, (-c / aa).clamp(0.0, 1.0));
    } else if t > 1.0 {
        (t, s) = (1.0, ((b - c) / aa).clamp(0.0, 1.0));
    }
    Some((s, t))
}

/// One Gauss–Seidel pass over `contacts` on the predictions `p` with inverse masses `w`: where
/// C = n·(a(s) − b(t)) − h' < 0, with h' = min(h, max(start gap, 0) + min([`DEPENETRATION_PER_STEP`]·h, `reach`))
/// and h = `thickness(a₀, b₀)`, moves the four corners by PBD eq. (8)–(9). Edges that start closer than h part by
/// at most `reach` a substep in p, which line (12) turns into velocity: the maximum depenetration velocity of game
/// physics engines. Skips contacts with an index out of range or zero total weight.
pub(crate) fn project_edge_contacts(
    p: &mut [Vec3],
    w: &[f32],
    contacts: &[EdgeContact],
    thickness: impl Fn(usize, usize) -> f32,
    reach: f32,
) {
    let n = p.len().min(w.len());
    for c in contacts {
        let ([a0, a1], [b0, b1]) = (c.a.map(|i| i as usize), c.b.map(|i| i as usize));
        if [a0, a1, b0, b1].iter().any(|&i| i >= n) {
            continue;
        }
        let h = thickness(a0, b0);
        let gap = h.min(c.start_gap.max(0.0) + (DEPENETRATION_PER_STEP * h).min(reach));
        let value = c.normal.dot(p[a0].lerp(p[a1], c.s) - p[b0].lerp(p[b1], c.t)) - gap;
        if value.is_nan() || value >= 0.0 {
            continue;
        }
        let g = [1.0 - c.s, c.s, -(1.0 - c.t), -c.t];
        let corners = [a0, a1, b0, b1];
        let wsum: f32 = corners.iter().zip(g).map(|(&i, g)| w[i] * g * g).sum();
        if wsum <= 0.0 || !wsum.is_finite() {
            continue;
        }
        let lambda = -value / wsum;
        for (&i, g) in corners.iter().zip(g) {
            p[i] += c.normal * (lambda * w[i] * g);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::selfcollide::find_self_contacts;

    /// Two 1 m edges crossing at right angles, `a` along x at height `z`, `b` along y through the origin, each
    /// with a third corner making a triangle: a's (index 5) above, b's (index 4) beside, in the plane z = 0.
    fn crossing_triangles(z: f32) -> (Vec<Vec3>, [[u32; 3]; 2]) {
        let x = vec![
            Vec3::new(-0.5, 0.0, z),
            Vec3::new(0.5, 0.0, z),
            Vec3::new(0.0, -0.5, 0.0),
            Vec3::new(0.0, 0.5, 0.0),
            Vec3::new(-1.0, 0.0, 0.0),
            Vec3::new(0.0, 0.0, 0.5),
        ];
        (x, [[0, 1, 5], [2, 3, 4]])
    }

    /// The edge contacts of the mesh moving x → p in groups `group`, after the vertex–triangle search that builds
    /// the hash they query.
    fn search(
        search: &mut EdgeContactSearch,
        x: &[Vec3],
        p: &[Vec3],
        tris: &[[u32; 3]],
        group: &[u32],
        band: f32,
    ) -> Vec<EdgeContact> {
        let mut near = SelfContactSearch::default();
        near.groups = group.to_vec();
        find_self_contacts(&mut near, x, p, tris, band, false, &mut Vec::new());
        let mut contacts = Vec::new();
        find_edge_candidates(search, &near, x, p, tris, false);
        find_edge_contacts(search, x, p, band, false, &mut contacts);
        contacts
    }

    #[test]
    fn closest_points_of_crossing_and_parallel_segments() {
        let (x, _) = crossing_triangles(0.1);
        assert_eq!(closest_parameters([x[0], x[1]], [x[2], x[3]]), Some((0.5, 0.5)));
        // parallel, overlapping by half: any pair on the overlap is closest; the first point of a is taken
        let (s, t) = closest_parameters([Vec3::ZERO, Vec3::X], [Vec3::new(0.5, 1.0, 0.0), Vec3::new(1.5, 1.0, 0.0)])
            .expect("segments");
        assert!(s >= 0.5 - 1e-6 && (t - (s - 0.5)).abs() < 1e-6, "{s} {t}");
        // past the end of b: clamped to its end
        let (s, t) = closest_parameters([Vec3::new(2.0, 0.0, 1.0), Vec3::new(2.0, 0.0, -1.0)], [Vec3::ZERO, Vec3::X])
            .expect("segments");
        assert_eq!((s, t), (0.5, 1.0));
        assert_eq!(closest_parameters([Vec3::ZERO, Vec3::ZERO], [Vec3::ZERO, Vec3::X]), None);
    }

    #[test]
    fn an_edge_falling_through_a_free_edge_of_another_cloth_is_held_above_it() {
        // edge 0–1 of the upper triangle falls 5 cm through the lower triangle's free edge 2–3
        let (x, triangles) = crossing_triangles(0.02);
        let mut p = x.clone();
        for q in &mut p[..2] {
            q.z -= 0.05;
        }
        let (h, w) = (0.01, [1.0, 1.0, 1.0, 1.0, 1.0, 0.0]);
        let contacts = search(&mut EdgeContactSearch::default(), &x, &p, &triangles, &[0, 0, 1, 1, 1, 0], 2.0 * h);
        let pairs: Vec<_> = contacts.iter().map(|c| (c.a, c.b)).collect();
        assert!(pairs.contains(&([0, 1], [2, 3])), "{pairs:?}");
        assert!(!pairs.contains(&([2, 3], [0, 1])), "each pair of free edges once: {pairs:?}");
        let momentum = |p: &[Vec3]| -> Vec3 { p.iter().zip(w).filter(|(_, w)| *w > 0.0).map(|(q, w)| *q / w).sum() };
        let momentum_before = momentum(&p);
        let crossing: Vec<_> = contacts.iter().filter(|c| c.a == [0, 1]).copied().collect();
        for _ in 0..4 {
            project_edge_contacts(&mut p, &w, &crossing, |_, _| h, f32::INFINITY);
        }
        let mid = |q: &[Vec3], [i, j]: [usize; 2]| (q[i] + q[j]) / 2.0;
        let gap = (mid(&p, [0, 1]) - mid(&p, [2, 3])).z;
        // it started 2 cm above: held at h above, pushing b down as much as a goes up (equal masses)
        assert!((gap - h).abs() < 1e-4, "gap {gap}");
        assert!(p[2].z < 0.0 && (p[2].z - p[3].z).abs() < 1e-6, "{:?}", &p[2..4]);
        assert!((momentum(&p) - momentum_before).length() < 1e-5, "{momentum_before} → {}", momentum(&p));
    }

    #[test]
    fn edges_of_one_group_or_sharing_a_vertex_are_no_contact_and_the_search_reuses_its_buffers() {
        let (x, triangles) = crossing_triangles(0.01);
        let mut edges = EdgeContactSearch::default();
        assert!(search(&mut edges, &x, &x, &triangles, &[0; 6], 0.02).is_empty(), "one group");
        assert_eq!(edges.free_edges().len(), 6);
        let contacts = search(&mut edges, &x, &x, &triangles, &[0, 0, 1, 1, 1, 0], 0.02);
        assert!(!contacts.is_empty() && contacts.iter().all(|c| !c.a.iter().any(|i| c.b.contains(i))));
        let fingerprint = edges.capacity_fingerprint();
        assert_eq!(search(&mut edges, &x, &x, &triangles, &[0, 0, 1, 1, 1, 0], 0.02), contacts);
        assert_eq!(edges.capacity_fingerprint(), fingerprint);
    }
}
