//! Cloth self collision (§4.3): vertex–triangle contacts found with a spatial hash and projected as the
//! inequality constraints of eq. (12)/(13).
//!
//! # Constraint
//!
//! For a vertex q and a triangle p1, p2, p3 that does not contain it, eq. (12) is
//! C = (q − p1)·n − h with n = (p2 − p1)×(p3 − p1)/|(p2 − p1)×(p3 − p1)| and h the cloth thickness; eq. (13) is
//! the same with p2 and p3 swapped, i.e. n negated, for a vertex that came from below. Both are written here as
//! one constraint C = side·(q − p1)·n − h ≥ 0 where `side` = ±1 is remembered per contact: the side of the
//! triangle the vertex was on at the *start* of the step (positions x), so a vertex that tunnelled through the
//! triangle during the prediction x → p is pulled back to where it came from ("keep the vertex on the original
//! side").
//!
//! # Detection ([`find_self_contacts`])
//!
//! The paper uses spatial hashing \[THM*03\], assuming triangles of about the same size. `SpatialHash` is a
//! hierarchical ("loose") grid hashed into a power-of-two table with the three large primes of \[THM*03\] and
//! stored as a counting sort, so it allocates nothing once its buffers have grown: each triangle is entered
//! once, with its *swept* bounding box (positions x and p) grown by h, at the level whose cells (the median box
//! size times a power of two) hold it within two cells per axis, so a triangle that moved a lot during the step
//! is still found and one that did not is cheap; each vertex queries the box of its segment x → p, together
//! with the vertices whose segments start and end in the same cells (they probe the same table cells). The
//! contacts are sorted by vertex, then triangle, so the projection order does not depend on the hash's layout
//! (cell size, table size, the order cells are visited in). Two bounds keep a collapsed, crumpled clump from
//! swamping the search: a vertex sends at most [`MAX_CANDIDATES_PER_VERTEX`] candidates to the narrow phase
//! and keeps at most `MAX_CONTACTS_PER_VERTEX` contacts; neither binds in the shipped scenes.
//!
//! Before the hash, normal cones (`patches.rs`, the curvature criterion of Volino and Magnenat-Thalmann) rule
//! out the pairs that lie on one smooth, untorn piece of cloth: such a piece is a height field and cannot meet
//! itself. Only the triangles and vertices of patches that may touch another patch enter the hash and query it,
//! and a pair is tested only if its two patches may touch. This removes pairs, never contacts, as long as the
//! detection band is below the triangles' heights (see `patches.rs`); on a hanging, untouched curtain it skips
//! most of the search.
//!
//! The narrow phase is vertex–triangle only, as in the paper (no edge–edge tests). The signed distance of the
//! vertex to the triangle's plane is taken at the start (vertex and triangle at x) and at the end (both at p)
//! and interpolated linearly in between — exact for translating triangles, an approximation for rotating ones.
//! The pair is a contact if that distance is within ±h somewhere on [0, 1] (the segment comes within the
//! thickness band, or crosses the plane) and, during that part of the step, the vertex projects into the
//! (interpolated) triangle with a barycentric margin of `BARY_MARGIN`. The barycentrics are computed exactly at
//! band entry, middle and exit, and interpolated linearly in between so a vertex sliding across the triangle
//! inside the band is caught too; for a triangle that turns over during the step (start and end normals
//! opposed) the barycentrics pass through a singularity, so only the three exact samples count. The margin lets
//! the triangles on both sides of an edge catch a vertex that moves through the edge. The swept-box overlap is
//! part of the predicate: it is exactly what the hash evaluates, so brute force with the same prefilter finds the
//! same set. The box is grown enough to reject nothing the narrow phase accepts for translating triangles; on
//! deliberately rough random data it rejects about 1 in 4000 narrow-phase hits, all on strongly rotating
//! triangles where the linear interpolation is poor anyway. The narrow phase tests four candidate pairs at a
//! time (`narrow.rs`).
//!
//! # Projection (`project_self_contacts_on`)
//!
//! One Gauss–Seidel pass of PBD eq. (8)–(9) over the contacts, skipping satisfied ones. The solver orders the
//! contacts in two particle-disjoint halves and the rest (`split_in_halves`) and projects the halves side by
//! side. The gradients treat n as
//! constant: ∇q C = side·n and ∇p_i C = −side·b_i·n, where b_i are the barycentrics of q's projection onto the
//! triangle (clamped to the triangle and renormalised). This is the gradient of C with the contact point
//! Σ b_i p_i frozen; since Σ b_i = 1 and all p_i lie in the plane, its value equals eq. (12)/(13). The
//! gradients sum to zero, so linear momentum is conserved exactly (eq. (9)); all corrections are parallel to n
//! and, when q projects inside the triangle, act along the one line through q and its projection, so angular
//! momentum is conserved too — the property §4.3 calls essential for this internal process. The full gradient
//! (differentiating n as well) adds tangential terms scaling with 1/|(p2 − p1)×(p3 − p1)|, which blow up for
//! slivers and turn the triangle rather than push it; since the constraint is re-linearised at every sweep the
//! simpler gradient converges to the same configuration.
//!
//! `side` was taken against the triangle's normal at the start of the step. A triangle that turned over during
//! the step (crumpled under a heavy ball, say) has the opposite normal at p, so a vertex still on its original
//! side would read as deep on the wrong one and be thrown through the cloth by that depth; such a contact is
//! skipped for the step (in the tearing scene such throws once blew the whole curtain apart).
//!
//! # Squeezed vertices
//!
//! A vertex that starts a substep already inside the band (closer than h to the triangle) is not pushed out in
//! p: a position correction becomes velocity in line (12)–(13), so pushing a squeezed vertex out by a whole
//! thickness throws it off at h/Δt. In a crumpled pile a vertex is often squeezed between two layers closer than
//! 2h, whose contacts cannot both hold; pushed to ±h alternately they pumped energy into the pile until the torn
//! curtain of the `tearing` scene blew apart, and a soft XPBD cloth whose stretch constraints kept squeezing its
//! vertices into the band reached the speed cap. Instead the projection only keeps such a vertex from getting
//! closer than it started, and before it `lift_squeezed_vertices` moves the vertex and the triangle apart by at
//! most `DEPENETRATION_PER_STEP`·h a substep, and no faster than `SELF_DEPENETRATION_SPEED`, in x and p alike (the
//! pre-stabilisation of Macklin et al. 2014, §4.4): the overlap goes in a few substeps and none of it becomes
//! velocity. A vertex that arrives from outside the band (gap ≥ h at the start, the tunnelling case) is still held
//! at h. Between cloths (`cloth_contacts.rs`) the lift parts the cloths a scene starts closer than their gap; a
//! pair squeezed later wins back `DEPENETRATION_PER_STEP`·h a substep in p alone, no faster than the colliders'
//! depenetration speed (the "maximum depenetration velocity" of game physics engines).
//!
//! # Caveats
//!
//! Like the paper, this handles vertices tunnelling through triangles, not edge–edge crossings (between cloths,
//! `find_edge_contacts` adds edge–edge contacts at free edges, where those happen). On its own it
//! would keep cloth that already interpenetrates at x on the wrong side; `Untangler` (`untangle.rs`, after
//! \[BWK03\], which §4.3 points to) finds such crossings in the contact list and releases the contacts of their
//! smaller side, so the cloth pulls it back through. The thickness h should be well below the edge length, or neighbouring vertices of a
//! strongly bent cloth register contacts with each other.

use bevy::math::Vec3;

mod diagnostics;
mod edges;
mod hash;
mod interior_edges;
mod narrow;
mod patches;
mod project;
mod search;
mod survey;
mod sweep;
#[cfg(test)]
mod test_support;
mod untangle;

pub use self::diagnostics::count_crossings;
pub(crate) use self::diagnostics::{count_intersections, count_piercings};
pub(crate) use self::edges::{
    EdgeContact, EdgeContactSearch, find_edge_candidates, find_edge_contacts, project_edge_contacts,
};
pub(crate) use self::interior_edges::InteriorEdgePairs;
pub use self::project::SELF_DEPENETRATION_SPEED;
pub(crate) use self::project::{
    DEPENETRATION_PER_STEP, Lifts, lift_squeezed_vertices, project_self_contacts_on, split_in_halves,
};
pub use self::search::{
    MAX_CANDIDATES_PER_VERTEX, SelfContactSearch, Strays, find_self_contacts, find_self_contacts_of_strayed,
};
pub(crate) use self::survey::CrossingSurvey;
pub use self::sweep::StepSweep;
pub(crate) use self::untangle::Untangler;

/// A vertex–triangle self contact (§4.3).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SelfContact {
    /// Index of the vertex.
    pub vertex: u32,
    /// Index of the triangle in the cloth's triangles.
    pub triangle: u32,
    /// +1 if the vertex started the step on the side the triangle's normal (p2 − p1)×(p3 − p1) points to
    /// (eq. (12)), −1 if it started below (eq. (13)).
    pub side: f32,
}

/// Largest self-collision thickness, in units of the spacing of the cloth's vertices (the mean of each vertex's
/// shortest rest edge): a band wider than about half that spacing makes every vertex a contact of its
/// neighbours' triangles, which only fight the stretch constraints and multiply the search's work. The spacing,
/// not the mean edge, because on a mesh of long thin cells the mean edge is many times the short edges.
pub(crate) const MAX_THICKNESS_PER_EDGE: f32 = 0.5;

/// The thickness h self-collision keeps (§4.3, eq. (12)): the material's `thickness`, at most
/// `MAX_THICKNESS_PER_EDGE` times the cloth's vertex spacing `shortest_edge`
/// ([`StretchConstraints::mean_shortest_edge`](crate::sim::cloth::StretchConstraints::mean_shortest_edge)).
pub fn self_collision_thickness(thickness: f32, shortest_edge: Option<f32>) -> f32 {
    shortest_edge.map_or(thickness, |l| thickness.min(MAX_THICKNESS_PER_EDGE * l))
}

/// How far one step's self-collision search sweeps a vertex at most, in mean rest edges. A vertex faster than
/// that (a cloth flung at the speed cap) would sweep a box over most of its cloth and make every triangle a
/// candidate, hundreds of times the search's normal work for contacts that cannot hold it anyway.
pub(crate) const MAX_SWEEP_PER_EDGE: f32 = 8.0;

/// Where the self-collision search sweeps a vertex at `x` moving at `v` over a step of `step` seconds: to
/// x + v·step, but no further than [`MAX_SWEEP_PER_EDGE`] mean rest edges (`rest_lengths`) from x.
pub(crate) fn sweep_end(x: Vec3, v: Vec3, step: f32, mean_edge: Option<f32>) -> Vec3 {
    let reach = mean_edge.map_or(f32::INFINITY, |l| MAX_SWEEP_PER_EDGE * l);
    x + (v * step).clamp_length_max(reach)
}

/// The mean of the positive `rest_lengths`, `None` if there is none.
pub(crate) fn mean_rest_length(rest_lengths: &[f32]) -> Option<f32> {
    let (sum, count) =
        rest_lengths.iter().filter(|l| **l > 0.0).fold((0.0f64, 0usize), |(s, n), l| (s + *l as f64, n + 1));
    (count > 0).then(|| (sum / count as f64) as f32)
}

/// Folds one buffer capacity `c` into the fingerprint `acc` of the capacities before it (see
/// [`SpatialHash::capacity_fingerprint`]).
fn combine_capacity(acc: usize, c: usize) -> usize {
    acc.wrapping_mul(1_000_003).wrapping_add(c)
}

/// The edge (a, b) with its lower vertex first.
fn sorted_edge(a: u32, b: u32) -> [u32; 2] {
    [a.min(b), a.max(b)]
}

/// The three edges of a triangle, each lower vertex first.
fn sorted_edges([i, j, k]: [u32; 3]) -> [[u32; 2]; 3] {
    [sorted_edge(i, j), sorted_edge(j, k), sorted_edge(k, i)]
}

/// Refills `out` with every edge of `triangles` once, lower vertex first, in increasing order.
fn unique_edges_into(triangles: &[[u32; 3]], out: &mut Vec<[u32; 2]>) {
    out.clear();
    out.extend(triangles.iter().flat_map(|&t| sorted_edges(t)));
    out.sort_unstable();
    out.dedup();
}

/// The three corner positions of `tri`, or `None` if an index is out of range.
#[inline]
fn corners(positions: &[Vec3], tri: &[u32; 3]) -> Option<[Vec3; 3]> {
    Some([*positions.get(tri[0] as usize)?, *positions.get(tri[1] as usize)?, *positions.get(tri[2] as usize)?])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_thickness_is_at_most_half_the_vertex_spacing() {
        assert_eq!(self_collision_thickness(0.005, Some(0.015)), 0.005);
        assert!((self_collision_thickness(0.045, Some(0.015)) - 0.0075).abs() < 1e-7);
        assert_eq!(self_collision_thickness(0.02, None), 0.02);
    }

    #[test]
    fn a_fast_vertex_sweeps_at_most_eight_mean_edges() {
        let x = Vec3::new(1.0, 2.0, 3.0);
        let edge = mean_rest_length(&[0.01, 0.03, 0.0]);
        assert_eq!(edge, Some(0.02));
        assert_eq!(sweep_end(x, Vec3::new(0.0, -3.0, 0.0), 0.05, edge), x + Vec3::new(0.0, -0.15, 0.0));
        let flung = sweep_end(x, Vec3::new(60.0, 0.0, 0.0), 0.1, edge);
        assert!((flung - (x + Vec3::new(0.16, 0.0, 0.0))).length() < 1e-6, "{flung}");
        assert_eq!(sweep_end(x, Vec3::X * 60.0, 0.1, None), x + Vec3::X * 6.0, "no edges: no bound");
    }
}
