//! Long-range attachments (Kim, Chentanez, Müller, "Long Range Attachments — A Method to Simulate Inextensible
//! Clothing in Computer Games", SCA 2012), the tethers of FleX and Jolt: each free vertex keeps, for the
//! nearest few attached vertices a (pins, grips, body grips), the unilateral constraint C = |p − p_a| − L ≤ 0 with
//! L the vertex's distance from a in the rest shape. A hanging cloth then cannot stretch further than its rest
//! shape allows, whatever the iteration count: PBD's stretch constraints pass a correction only one edge per
//! iteration (§3.3), a tether reaches from the pin to the hem in one projection.
//!
//! The projection moves only the free vertex when its anchor is pinned (w = 0, §3.6), so the tethers of different
//! vertices are independent and need no colouring. An anchor a body holds has the inverse mass of its own and its
//! lent mass within the projection, and takes its share of the correction; its hold then puts it back on the body
//! point, which hands the body the tether's pull (§4.2). L is the geodesic distance along the mesh at rest (shortest
//! path over the stretch edges' rest lengths, found with a Dijkstra search from all attached vertices at once,
//! each vertex keeping its nearest anchors, `TETHERS_PER_VERTEX` of them), or the straight distance between the
//! rest positions ([`TetherLengths::Euclidean`]: tighter for a cloth that hangs folded, too tight for one draped
//! over a collider). Only anchors connected to a vertex through the mesh tether it: a piece torn off falls free.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use bevy::math::Vec3;
use serde::{Deserialize, Serialize};

/// Anchors per free vertex that drape's cloths use: the nearest one, as in Jolt and FleX. A second one (held by
/// both of two pins) cost a third more per substep on a hanging sheet and held it no better (docs/solvers.md).
pub(crate) const TETHERS_PER_VERTEX: usize = 1;

/// How a tether's rest length is measured.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum TetherLengths {
    /// Along the mesh at rest (Kim et al.'s geodesic attachments): never shorter than the cloth can reach.
    #[default]
    Geodesic,
    /// Straight between the rest positions (their Euclidean attachments).
    Euclidean,
}

/// The tethers of one cloth, grouped by free vertex: vertex `v`'s are `start[v]..start[v + 1]`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TetherSet {
    /// Where each vertex's tethers start; one more entry than vertices (empty for no tethers).
    pub start: Vec<u32>,
    /// The attached vertex each tether holds on to.
    pub anchor: Vec<u32>,
    /// Rest length L of each tether, metres.
    pub length: Vec<f32>,
}

impl TetherSet {
    /// Number of tethers.
    pub fn len(&self) -> usize {
        self.anchor.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.anchor.is_empty()
    }

    /// Builds the tethers of a mesh with `vertex_count` vertices whose stretch `edges` have rest lengths
    /// `rest_length`, to the `per_vertex` nearest of the attached vertices `anchors`. `rest` (the rest positions, if known for every vertex)
    /// is needed for [`TetherLengths::Euclidean`]; without it the geodesic length is kept. `free(v)` says which
    /// vertices get tethers.
    pub fn build(
        vertex_count: usize,
        (edges, rest_length): (&[[u32; 2]], &[f32]),
        (anchors, per_vertex): (&[u32], usize),
        (lengths, rest): (TetherLengths, Option<&[Vec3]>),
        free: impl Fn(usize) -> bool,
    ) -> Self {
        let nearest = nearest_anchors(vertex_count, (edges, rest_length), anchors, per_vertex);
        let rest = rest.unwrap_or(&[]);
        let mut set = Self { start: Vec::with_capacity(vertex_count + 1), ..Self::default() };
        set.start.push(0);
        for (v, found) in nearest.iter().enumerate() {
            if free(v) {
                for &(geodesic, a) in found {
                    let length = match (lengths, rest.get(v), rest.get(a as usize)) {
                        (TetherLengths::Euclidean, Some(q), Some(anchor)) => q.distance(*anchor),
                        _ => geodesic,
                    };
                    set.anchor.push(a);
                    set.length.push(length);
                }
            }
            set.start.push(set.anchor.len() as u32);
        }
        set
    }

    /// Projects every tether once: a free vertex further than L · (1 + `slack`) from its anchor goes back onto
    /// the sphere of that radius around it (stiffness 1: the constraint is an upper bound, never a spring), the
    /// two sharing the correction by their inverse masses `w` (all of it the free vertex's when the anchor is
    /// pinned). Returns how many tethers were stretched. Allocates nothing.
    pub fn project(&self, p: &mut [Vec3], w: &[f32], slack: f32) -> usize {
        let reach_scale = 1.0 + slack;
        let mut stretched = 0;
        let (anchors, lengths) = (&self.anchor[..], &self.length[..self.anchor.len().min(self.length.len())]);
        for (v, range) in self.start.windows(2).enumerate() {
            if w.get(v).is_none_or(|&w| w == 0.0) {
                continue;
            }
            let range = range[0] as usize..range[1] as usize;
            let (Some(tethers), Some(reach)) = (anchors.get(range.clone()), lengths.get(range)) else { continue };
            for (&a, &rest) in tethers.iter().zip(reach) {
                let length = rest * reach_scale;
                let (Some(&anchor), Some(&w_anchor)) = (p.get(a as usize), w.get(a as usize)) else { continue };
                let d = p[v] - anchor;
                // most tethers are slack: compare squares, take the root only for a stretched one
                if d.length_squared() > length * length {
                    let distance = d.length();
                    if !distance.is_finite() {
                        continue;
                    }
                    stretched += 1;
                    if w_anchor == 0.0 {
                        p[v] = anchor + d * (length / distance);
                    } else {
                        let correction = d * (1.0 - length / distance) / (w[v] + w_anchor);
                        p[v] -= correction * w[v];
                        p[a as usize] += correction * w_anchor;
                    }
                }
            }
        }
        stretched
    }
}

/// For every vertex, its `k` nearest distinct anchors along the edges, as (distance, anchor), nearest first: a
/// Dijkstra search from all anchors at once in which each vertex is settled once per anchor and at most k times
/// (the k nearest sources of every vertex, exactly, in O(k · E log E): an anchor that is not among a vertex's k
/// nearest is not among those of any vertex reached through it).
fn nearest_anchors(
    vertex_count: usize,
    (edges, rest_length): (&[[u32; 2]], &[f32]),
    anchors: &[u32],
    k: usize,
) -> Vec<Vec<(f32, u32)>> {
    let mut start = vec![0u32; vertex_count + 1];
    for &[a, b] in edges {
        if (a as usize) < vertex_count && (b as usize) < vertex_count {
            start[a as usize + 1] += 1;
            start[b as usize + 1] += 1;
        }
    }
    for v in 0..vertex_count {
        start[v + 1] += start[v];
    }
    let mut fill = start.clone();
    let mut neighbours = vec![(0u32, 0.0f32); start[vertex_count] as usize];
    for (&[a, b], &l) in edges.iter().zip(rest_length) {
        if (a as usize) < vertex_count && (b as usize) < vertex_count {
            neighbours[fill[a as usize] as usize] = (b, l);
            fill[a as usize] += 1;
            neighbours[fill[b as usize] as usize] = (a, l);
            fill[b as usize] += 1;
        }
    }
    let mut found: Vec<Vec<(f32, u32)>> = vec![Vec::new(); vertex_count];
    // (distance bits, vertex, anchor): non-negative f32s order like their bits
    let mut heap: BinaryHeap<Reverse<(u32, u32, u32)>> = BinaryHeap::new();
    for &a in anchors.iter().filter(|&&a| (a as usize) < vertex_count) {
        heap.push(Reverse((0f32.to_bits(), a, a)));
    }
    while let Some(Reverse((bits, v, a))) = heap.pop() {
        let labels = &mut found[v as usize];
        if labels.len() >= k || labels.iter().any(|&(_, b)| b == a) {
            continue;
        }
        let d = f32::from_bits(bits);
        labels.push((d, a));
        let range = start[v as usize] as usize..start[v as usize + 1] as usize;
        for &(u, l) in &neighbours[range] {
            let labels = &found[u as usize];
            if labels.len() < k && !labels.iter().any(|&(_, b)| b == a) && l.is_finite() && l >= 0.0 {
                heap.push(Reverse(((d + l).to_bits(), u, a)));
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A chain 0–1–2–3 with edges of 1, 2 and 3 m.
    fn chain() -> (Vec<[u32; 2]>, Vec<f32>) {
        (vec![[0, 1], [1, 2], [2, 3]], vec![1.0, 2.0, 3.0])
    }

    #[test]
    fn geodesic_lengths_follow_the_mesh_and_keep_the_nearest_anchors() {
        let (edges, rest) = chain();
        let geodesic = (TetherLengths::Geodesic, None);
        let set = TetherSet::build(4, (&edges, &rest), (&[0, 3], 2), geodesic, |v| v == 1 || v == 2);
        assert_eq!(set.start, [0, 0, 2, 4, 4]);
        // vertex 1: anchor 0 at 1 m, anchor 3 at 5 m; vertex 2: anchor 0 at 3 m, anchor 3 at 3 m (either first)
        assert_eq!((set.anchor[0], set.length[0]), (0, 1.0));
        assert_eq!((set.anchor[1], set.length[1]), (3, 5.0));
        let mut second: Vec<(u32, f32)> = (2..4).map(|t| (set.anchor[t], set.length[t])).collect();
        second.sort_by_key(|t| t.0);
        assert_eq!(second, [(0, 3.0), (3, 3.0)]);
    }

    #[test]
    fn euclidean_lengths_use_the_rest_positions_and_unreachable_anchors_give_none() {
        let edges = vec![[0, 1], [1, 2]];
        let rest = [Vec3::ZERO, Vec3::X, Vec3::new(1.0, 1.0, 0.0), Vec3::new(5.0, 0.0, 0.0)];
        let lengths = [1.0, 1.0];
        let free = |v| v == 1 || v == 2;
        let set = TetherSet::build(4, (&edges, &lengths), (&[0, 3], 2), (TetherLengths::Euclidean, Some(&rest)), free);
        // anchor 3 is cut off from the rest: only anchor 0 holds; vertex 2 is √2 from it in a straight line
        assert_eq!(set.start, [0, 0, 1, 2, 2]);
        assert_eq!(set.anchor, [0, 0]);
        assert_eq!(set.length[0], 1.0);
        assert!((set.length[1] - 2f32.sqrt()).abs() < 1e-6);
        // one per vertex: the nearest
        let nearest = TetherSet::build(4, (&edges, &lengths), (&[0, 3], 1), (TetherLengths::Geodesic, None), free);
        assert_eq!((nearest.start, nearest.anchor, nearest.length), (vec![0, 0, 1, 2, 2], vec![0, 0], vec![1.0, 2.0]));
    }

    #[test]
    fn a_stretched_tether_pulls_its_free_vertex_back_and_a_slack_one_does_nothing() {
        let set = TetherSet { start: vec![0, 0, 1, 2], anchor: vec![0, 0], length: vec![1.0, 5.0] };
        let mut p = vec![Vec3::ZERO, Vec3::new(3.0, 0.0, 0.0), Vec3::new(0.0, 2.0, 0.0)];
        let w = [0.0, 1.0, 1.0];
        assert_eq!(set.project(&mut p, &w, 0.0), 1);
        assert_eq!(p[1], Vec3::X);
        assert_eq!(p[2], Vec3::new(0.0, 2.0, 0.0));
        assert_eq!(p[0], Vec3::ZERO, "the anchor never moves");
    }

    #[test]
    fn slack_lets_a_vertex_go_that_much_further_and_no_further() {
        let set = TetherSet { start: vec![0, 0, 1, 2], anchor: vec![0, 0], length: vec![1.0, 1.0] };
        let mut p = vec![Vec3::ZERO, Vec3::new(1.05, 0.0, 0.0), Vec3::new(0.0, 3.0, 0.0)];
        assert_eq!(set.project(&mut p, &[0.0, 1.0, 1.0], 0.1), 1, "1.05 m is within 1.1 m; 3 m is not");
        assert_eq!(p[1], Vec3::new(1.05, 0.0, 0.0));
        assert!((p[2] - Vec3::new(0.0, 1.1, 0.0)).length() < 1e-6, "{}", p[2]);
    }
}
