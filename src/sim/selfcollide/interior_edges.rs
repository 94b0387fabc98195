//! Edge–edge contacts between the interior edges of different cloths, where they lie on each other.
//!
//! Two sheets resting on each other keep each vertex off the other's triangles (§4.3, eq. (12)/(13)), but an
//! interior edge of one can still pass through an interior edge of the other with no vertex crossing a
//! triangle: an X that vertex–triangle contacts cannot see (`layers`' sheets made them where they lie on the
//! ball). The pairs that can make one come from the vertex–triangle contacts between cloths: each edge at a
//! contact's vertex against the three edges of its triangle, whose closest points lie inside both edges (closest
//! at an end, the pair is a vertex against an edge, which the vertex's contacts hold). They are found in the
//! step's first search, over the step's rays, and held for its substeps with the constraint of the free edges
//! (`edges.rs`): their closest points and normal, taken at the step's start, stay a separating plane while
//! resting sheets slide a little within a step, and finding them in every search would cost several times more
//! (docs/performance.md).

use bevy::math::Vec3;

use super::edges::{EdgeContact, edge_contact};
use super::{SelfContact, sorted_edges};

/// The pairs of interior edges of different cloths near the contacts of the last search, and the vertex-to-edge
/// adjacency they are found with, reused every step (nothing is allocated once grown and the mesh keeps its
/// triangles).
#[derive(Clone, Debug, Default)]
pub(crate) struct InteriorEdgePairs {
    /// The triangles the adjacency was built from.
    triangles: Vec<[u32; 3]>,
    /// Compressed rows: the edges at vertex v are `edges[offsets[v]..offsets[v + 1]]`.
    offsets: Vec<u32>,
    edges: Vec<[u32; 2]>,
    /// Scratch: every edge of the triangles, sorted and deduplicated, and each row's next free slot.
    unique: Vec<[u32; 2]>,
    next: Vec<u32>,
    /// Scratch: the pairs (lower edge, higher edge) near the contacts.
    pairs: Vec<[[u32; 2]; 2]>,
    /// Their contacts over the search's rays, held for every substep until the next search.
    held: Vec<EdgeContact>,
}

impl InteriorEdgePairs {
    /// The edges at each vertex of `triangles` (over `n` vertices), unless they are the ones of the last call.
    fn update_adjacency(&mut self, triangles: &[[u32; 3]], n: usize) {
        if self.triangles == triangles && self.offsets.len() == n + 1 {
            return;
        }
        self.triangles.clear();
        self.triangles.extend_from_slice(triangles);
        self.unique.clear();
        let valid = |t: &&[u32; 3]| t.iter().all(|&v| (v as usize) < n);
        self.unique.extend(triangles.iter().filter(valid).flat_map(|&t| sorted_edges(t)));
        self.unique.sort_unstable();
        self.unique.dedup();
        self.offsets.clear();
        self.offsets.resize(n + 1, 0);
        for e in &self.unique {
            self.offsets[e[0] as usize + 1] += 1;
            self.offsets[e[1] as usize + 1] += 1;
        }
        for v in 0..n {
            self.offsets[v + 1] += self.offsets[v];
        }
        self.edges.clear();
        self.edges.resize(self.unique.len() * 2, [0; 2]);
        self.next.clear();
        self.next.extend_from_slice(&self.offsets[..n]);
        for &e in &self.unique {
            for v in e {
                self.edges[self.next[v as usize] as usize] = e;
                self.next[v as usize] += 1;
            }
        }
    }

    /// Finds the contacts of the pairs of the vertex–triangle `contacts` between different cloths (`group` of
    /// each vertex) over the rays `x` → `p` and a detection `band` (see the module docs).
    pub(crate) fn find(
        &mut self,
        contacts: &[SelfContact],
        (x, p): (&[Vec3], &[Vec3]),
        triangles: &[[u32; 3]],
        group: &[u32],
        band: f32,
    ) {
        let n = x.len().min(p.len()).min(group.len());
        self.update_adjacency(triangles, n);
        // every pair once before any arithmetic: a vertex meets several triangles that share edges, and an edge
        // has two vertices
        self.pairs.clear();
        for c in contacts {
            let (Some(&[i, j, k]), v) = (triangles.get(c.triangle as usize), c.vertex as usize) else { continue };
            if v >= n || [i, j, k].iter().any(|&u| u as usize >= n || group[u as usize] == group[v]) {
                continue;
            }
            let at = self.offsets[v] as usize..self.offsets[v + 1] as usize;
            for &a in &self.edges[at] {
                for b in sorted_edges([i, j, k]) {
                    self.pairs.push(if a < b { [a, b] } else { [b, a] });
                }
            }
        }
        self.pairs.sort_unstable();
        self.pairs.dedup();
        let band = if band.is_finite() { band.max(0.0) } else { 0.0 };
        self.held.clear();
        self.held.extend(
            self.pairs
                .iter()
                .filter_map(|&[a, b]| edge_contact(a, b, x, p, band))
                .filter(|c| c.s.min(c.t) > 0.0 && c.s.max(c.t) < 1.0),
        );
    }

    /// The contacts of the last search, held for each substep until the next.
    pub(crate) fn held(&self) -> &[EdgeContact] {
        &self.held
    }

    /// The pairs of the last search.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.pairs.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::selfcollide::project_edge_contacts;

    /// Two unit squares of two triangles each, one (group 0) at height `z` with its diagonal 0–2 along x, the
    /// other (group 1) at z = 0 with its diagonal 4–6 along y: the diagonals cross above the origin.
    fn crossed_squares(z: f32) -> (Vec<Vec3>, Vec<[u32; 3]>, Vec<u32>) {
        let x = vec![
            Vec3::new(-0.5, 0.0, z),
            Vec3::new(0.0, -0.5, z),
            Vec3::new(0.5, 0.0, z),
            Vec3::new(0.0, 0.5, z),
            Vec3::new(0.0, -0.5, 0.0),
            Vec3::new(0.5, 0.0, 0.0),
            Vec3::new(0.0, 0.5, 0.0),
            Vec3::new(-0.5, 0.0, 0.0),
        ];
        let triangles = vec![[0, 1, 2], [0, 2, 3], [4, 5, 6], [4, 6, 7]];
        (x, triangles, vec![0, 0, 0, 0, 1, 1, 1, 1])
    }

    #[test]
    fn the_diagonals_of_two_sheets_falling_through_each_other_are_held_apart() {
        // the upper sheet's diagonal falls 5 cm through the lower sheet's diagonal with every vertex off the other
        // sheet's triangles' interiors
        let (x, triangles, group) = crossed_squares(0.02);
        let mut p = x.clone();
        for q in &mut p[..4] {
            q.z -= 0.05;
        }
        // the contact of vertex 0 with the lower sheet's triangle 3 brings in the diagonal 0–2 against 4–6
        let contacts = [SelfContact { vertex: 0, triangle: 3, side: 1.0 }];
        let (h, band) = (0.01, 0.02);
        let mut pairs = InteriorEdgePairs::default();
        pairs.find(&contacts, (&x, &p), &triangles, &group, band);
        assert!(pairs.pairs.contains(&[[0, 2], [4, 6]]), "{:?}", pairs.pairs);
        assert!(pairs.pairs.iter().all(|[a, b]| !a.iter().any(|v| b.contains(v))));
        let found = pairs.held().to_vec();
        let w = [1.0; 8];
        for _ in 0..4 {
            project_edge_contacts(&mut p, &w, &found, |_, _| h, f32::INFINITY);
        }
        let mid = |[i, j]: [usize; 2]| (p[i] + p[j]) / 2.0;
        let gap = (mid([0, 2]) - mid([4, 6])).z;
        assert!(gap >= h - 1e-4, "the diagonals ended {gap} m apart");
    }

    #[test]
    fn contacts_within_one_cloth_make_no_pair_and_the_search_reuses_its_buffers() {
        let (x, triangles, group) = crossed_squares(0.01);
        let mut pairs = InteriorEdgePairs::default();
        pairs.find(&[SelfContact { vertex: 0, triangle: 1, side: 1.0 }], (&x, &x), &triangles, &group, 0.02);
        assert_eq!(pairs.len(), 0, "a contact within one cloth");
        let contacts = [SelfContact { vertex: 0, triangle: 3, side: 1.0 }];
        pairs.find(&contacts, (&x, &x), &triangles, &group, 0.02);
        let found = pairs.len();
        assert!(found > 0);
        let capacity = (pairs.edges.capacity(), pairs.pairs.capacity(), pairs.held.capacity());
        pairs.find(&contacts, (&x, &x), &triangles, &group, 0.02);
        assert_eq!(pairs.len(), found);
        assert_eq!((pairs.edges.capacity(), pairs.pairs.capacity(), pairs.held.capacity()), capacity);
    }
}
