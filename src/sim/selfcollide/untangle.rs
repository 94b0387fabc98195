//! Releasing tangled cloth: a simplified global intersection analysis after \[BWK03\], which §4.3 points to for
//! cloth that already interpenetrates.
//!
//! Vertex–triangle contacts keep every vertex on the side of a triangle it started the step on. Once an edge
//! pierces a triangle (a pair the once-per-step search missed within a step, an edge–edge crossing), that rule
//! holds the cloth in its tangle: contacts keep the vertices beyond the crossing on the wrong side while stretch
//! and bending pull them back through, a fight that never settles and keeps a crumpled pile shaking.
//!
//! [`Untangler::release`] runs on each step's contact list:
//! 1. **Cut.** Every edge of a contact's vertex that pierces the contact's triangle at the start of the step
//!    (positions x) is cut out of the mesh graph (the test is [`count_intersections`](super::count_intersections)'s).
//! 2. **Split.** Each connected piece of cloth falls apart along its cut edges into parts. The largest part of a
//!    piece is taken to be on the right side; the smaller ones (a fold poked through a layer, a vertex pushed
//!    through one) are *tangled*: \[BWK03\]'s choice of the smaller region of an intersection contour.
//! 3. **Release.** A contact is dropped for the step when it joins a tangled vertex to a triangle on the
//!    crossing (a tangled corner, or a corner of a pierced triangle), or a vertex on the crossing to a triangle
//!    with a tangled corner. The cloth's own constraints then pull the tangled part back through, and the
//!    contour shrinks step by step. Contacts of a tangled vertex with other layers stay, so it does not fall
//!    through them.
//!
//! A contour that the contact list does not see whole (an edge piercing a triangle its ends have no contact
//! with), or one that runs from border to border without separating the piece, leaves its region joined to the
//! rest: nothing is released there and the contacts behave as before. The analysis is local and cheap: a
//! pierce test per contact and vertex edge, then one union–find over the uncut edges when anything was cut.
//!
//! Between cloths ([`Untangler::untangle_cloths`]) releasing is not enough. Two sheets started through each other
//! cross along a line that ends at a border of each, which separates neither, and nothing pulls a sheet back
//! through another: the contacts held such a crossing for good. There the edges a survey of the whole cloths
//! finds through another cloth (`survey.rs`) are cut too, and for each pair of crossed cloths the contacts on the
//! crossing of one of them are *turned*: those of a vertex at a cut edge with a pierced triangle keep the vertex on
//! the side of the other cloth where most of its contacts with it lie. The cloth with fewer contacts on its lesser
//! side is the one turned (both would swap sides and cross again), the choice stays while the two stay crossed,
//! and a cloth is turned against one other at a time. A cloth with a fixed vertex (pinned, gripped) is never
//! turned: the rest of it cannot follow. A turned vertex starts on the wrong side: its contact lifts
//! it through in x and p alike, as a squeezed pair is parted (`project.rs`), so the move becomes no velocity; its
//! neighbours' edges then cross, and turn in their turn, until the crossing is gone.

use bevy::math::Vec3;

use super::diagnostics::pierces;
use super::survey::Piercing;
use super::{EdgeContact, SelfContact, corners};

/// The mesh graph of one cloth and the scratch of the analysis; allocates nothing once grown, and rebuilds the
/// graph only when the triangles change (tearing).
#[derive(Clone, Debug, Default)]
pub(crate) struct Untangler {
    /// The triangles the graph was built for.
    graph_of: Vec<[u32; 3]>,
    /// Compressed rows: the neighbours of vertex v are `neighbours[offsets[v]..offsets[v + 1]]`, each once.
    offsets: Vec<u32>,
    neighbours: Vec<u32>,
    /// Per vertex, the root of its piece (the connected cloth it belongs to).
    piece: Vec<u32>,
    /// Per entry of `neighbours`: the edge pierces a triangle.
    cut: Vec<bool>,
    /// Union–find parents over the uncut edges (the parts).
    part: Vec<u32>,
    /// Vertices per part root; per piece root, its largest part's root.
    part_size: Vec<u32>,
    largest_part: Vec<u32>,
    /// Per vertex: in a smaller part of its piece.
    tangled: Vec<bool>,
    /// Per vertex: a corner of a triangle a cut edge pierces.
    pierced: Vec<bool>,
    /// The last [`Untangler::release`] cut an edge: `tangled` and `pierced` describe its crossing.
    crossing: bool,
    /// Per vertex: an end of a cut edge.
    cut_end: Vec<bool>,
    /// The pairs of pieces the last release found through each other.
    crossed: Vec<CrossedPair>,
    /// The roots of the pieces with a fixed vertex (w = 0: pinned, gripped), which are never turned: the rest of
    /// such a piece cannot follow where its turned vertices go, and lifting them fought the pins for good.
    held_pieces: Vec<u32>,
    /// The pairs the last turning release found crossed, with its choices: kept while they stay crossed, so a
    /// crossing that the contacts see nearly balanced does not swap its mover from step to step.
    chosen: Vec<CrossedPair>,
    /// The last release turned the contacts of crossed pieces ([`Untangler::untangle_cloths`]).
    turning: bool,
}

/// Two pieces (cloths) an edge of one pierces a triangle of, on which side of each other their contacts lie, and
/// which of them goes back through the other.
#[derive(Clone, Copy, Debug, PartialEq)]
struct CrossedPair {
    /// The pieces' roots, lower first.
    pieces: [u32; 2],
    /// Per piece of the pair: how many of its vertices' contacts with the other lie on the other's back (−) and
    /// front (+).
    sides: [[u32; 2]; 2],
    /// The piece (0 or 1) whose contacts on the crossing are turned, and the side of the other they are turned to.
    turned: Option<(usize, f32)>,
}

impl CrossedPair {
    /// Chooses the piece that goes back through the other: one with contacts on both sides, the one with fewer on
    /// its lesser side (as many: the higher root), turned to the side of the other where most of its contacts lie.
    /// One of the two moves, or both would swap sides and cross again.
    fn choose(&mut self) {
        let lesser = |k: usize| self.sides[k][0].min(self.sides[k][1]);
        let mover = if lesser(1) > 0 && lesser(1) <= lesser(0) || lesser(0) == 0 { 1 } else { 0 };
        let side = if self.sides[mover][1] >= self.sides[mover][0] { 1.0 } else { -1.0 };
        self.turned = (lesser(mover) > 0).then_some((mover, side));
    }

    /// The side piece `k` is turned to, if it is the one that moves.
    fn turned_side(&self, k: usize) -> Option<f32> {
        self.turned.filter(|&(mover, _)| mover == k).map(|(_, side)| side)
    }
}

/// No part chosen yet.
const NONE: u32 = u32::MAX;

impl Untangler {
    /// Drops from `contacts` the pairs whose vertex or a triangle corner is tangled at `x` (see the module
    /// docs). Returns the number of tangled vertices.
    pub fn release(&mut self, x: &[Vec3], triangles: &[[u32; 3]], contacts: &mut Vec<SelfContact>) -> usize {
        self.analyse(x, triangles, contacts, (&[], &[]), None)
    }

    /// Between cloths (pieces of the combined mesh): cuts the edges `surveyed` found through another cloth as well
    /// as those the contacts see, and in one cloth of each crossed pair turns the contacts on the crossing to the
    /// side of the other cloth where most of its contacts lie, instead of dropping them (the module docs). The
    /// choice of cloth and side stays while the two stay crossed. The contacts whose vertex is on the wrong side go
    /// to `turned` (cleared first), with their new side; the others stay. Returns the number of tangled vertices.
    pub fn untangle_cloths(
        &mut self,
        x: &[Vec3],
        triangles: &[[u32; 3]],
        contacts: &mut Vec<SelfContact>,
        (surveyed, w): (&[Piercing], &[f32]),
        turned: &mut Vec<SelfContact>,
    ) -> usize {
        turned.clear();
        self.analyse(x, triangles, contacts, (surveyed, w), Some(turned))
    }

    fn analyse(
        &mut self,
        x: &[Vec3],
        triangles: &[[u32; 3]],
        contacts: &mut Vec<SelfContact>,
        (surveyed, w): (&[Piercing], &[f32]),
        mut turned: Option<&mut Vec<SelfContact>>,
    ) -> usize {
        let n = x.len();
        let turn = turned.is_some();
        self.crossing = false;
        self.turning = false;
        if contacts.is_empty() {
            self.chosen.clear();
            return 0;
        }
        if self.graph_of != triangles || self.piece.len() != n {
            self.build_graph(triangles, n);
        }
        let by_contacts = self.cut_piercing_edges(x, triangles, contacts);
        if !(self.cut_surveyed(triangles, surveyed) || by_contacts) {
            self.chosen.clear();
            return 0;
        }
        self.split_pieces(n);
        self.crossing = true;
        self.turning = turn;
        if turn {
            self.held_pieces.clear();
            let fixed = w.iter().zip(&self.piece).filter(|(w, _)| **w == 0.0);
            self.held_pieces.extend(fixed.map(|(_, piece)| *piece));
            self.held_pieces.sort_unstable();
            self.held_pieces.dedup();
            self.count_sides(triangles, contacts);
            self.choose_movers();
        }
        let flag = |of: &Vec<bool>, v: u32| of.get(v as usize).copied().unwrap_or(false);
        let (tangled, pierced) = (&self.tangled, &self.pierced);
        contacts.retain_mut(|c| {
            let Some(tri) = triangles.get(c.triangle as usize) else { return true };
            if let Some(turned) = turned.as_deref_mut()
                && let Some(side) = self.turned_side(c.vertex, tri)
            {
                if side != c.side {
                    turned.push(SelfContact { side, ..*c });
                    return false;
                }
                return true;
            }
            let any_corner = |of: &Vec<bool>| tri.iter().any(|&v| flag(of, v));
            let on_crossing = |v: u32| flag(tangled, v) || flag(pierced, v);
            let tangled_triangle = any_corner(tangled);
            let crossing_triangle = tangled_triangle || any_corner(pierced);
            !((flag(tangled, c.vertex) && crossing_triangle) || (on_crossing(c.vertex) && tangled_triangle))
        });
        tangled.iter().filter(|&&t| t).count()
    }

    /// Whether vertex `v` is on the crossing: tangled, a corner of a pierced triangle or an end of a cut edge.
    fn near_crossing(&self, v: u32) -> bool {
        let flag = |of: &Vec<bool>| of.get(v as usize).copied().unwrap_or(false);
        flag(&self.tangled) || flag(&self.pierced) || flag(&self.cut_end)
    }

    /// The crossed pair of the pieces of `own` and `other` and the index of `own`'s in it.
    fn pair(&self, own: u32, other: u32) -> Option<(&CrossedPair, usize)> {
        let (a, b) = (*self.piece.get(own as usize)?, *self.piece.get(other as usize)?);
        let pair = self.crossed.iter().find(|pair| pair.pieces == [a.min(b), a.max(b)])?;
        Some((pair, usize::from(a > b)))
    }

    /// The side a contact of vertex `v` with triangle `tri` is turned to, where the two pieces crossed and `v`'s is
    /// the one that moves back, and the contact is on the crossing: `v` an end of a cut edge, `tri` a corner of a
    /// pierced triangle. Turning every tangled vertex's contacts instead pushed them through folded layers of the
    /// other cloth. `None` leaves the contact to the release.
    fn turned_side(&self, v: u32, tri: &[u32; 3]) -> Option<f32> {
        let (pair, k) = self.pair(v, tri[0])?;
        let side = pair.turned_side(k)?;
        let flag = |of: &Vec<bool>, v: u32| of.get(v as usize).copied().unwrap_or(false);
        (flag(&self.cut_end, v) && tri.iter().any(|&c| flag(&self.pierced, c))).then_some(side)
    }

    /// Each crossed pair keeps the mover it had at the last turning release, or chooses one; but a cloth is turned
    /// against one other cloth at a time. Three sheets through one another, each turned against both others at
    /// once, were pushed to and fro between their turned contacts until they flew apart, while each pair of them
    /// alone came apart in a second.
    fn choose_movers(&mut self) {
        let Self { crossed, chosen, .. } = self;
        let kept = |pair: &CrossedPair| chosen.iter().find(|c| c.pieces == pair.pieces).and_then(|c| c.turned);
        for pair in crossed.iter_mut() {
            pair.turned = kept(pair);
        }
        // the kept choices first, then new ones, each only for two cloths not turned against another yet
        for keeping in [true, false] {
            for k in 0..crossed.len() {
                if crossed[k].turned.is_some() != keeping {
                    continue;
                }
                if !keeping {
                    crossed[k].choose();
                }
                let pieces = crossed[k].pieces;
                let busy = |(j, pair): (usize, &CrossedPair)| {
                    j != k && pair.turned.is_some() && pair.pieces.iter().any(|p| pieces.contains(p))
                };
                let earlier = if keeping { &crossed[..k] } else { &crossed[..] };
                if earlier.iter().enumerate().any(busy) {
                    crossed[k].turned = None;
                }
            }
        }
        chosen.clear();
        chosen.extend_from_slice(crossed);
    }

    /// Tallies, for every crossed pair, the sides its contacts keep their vertices on.
    fn count_sides(&mut self, triangles: &[[u32; 3]], contacts: &[SelfContact]) {
        for c in contacts {
            let Some(tri) = triangles.get(c.triangle as usize) else { continue };
            let (Some(&a), Some(&b)) = (self.piece.get(c.vertex as usize), self.piece.get(tri[0] as usize)) else {
                continue;
            };
            if self.held_pieces.contains(&a) {
                continue;
            }
            if let Some(pair) = self.crossed.iter_mut().find(|pair| pair.pieces == [a.min(b), a.max(b)]) {
                pair.sides[usize::from(a > b)][usize::from(c.side > 0.0)] += 1;
            }
        }
    }

    /// Drops from `edge_contacts` the pairs on the crossing the last [`Untangler::release`] found, by the rule of
    /// its vertex–triangle pairs: a tangled end of one edge with an end of the other on the crossing (tangled, or a
    /// corner of a pierced triangle). Held, they kept crossed cloths crossed: the edges beyond the crossing stayed
    /// on the far side while the stretch constraints pulled them back. After [`Untangler::untangle_cloths`], also
    /// the pairs with an end on the crossing of a turned cloth, which would hold it on its old side. Returns how
    /// many were dropped.
    pub(crate) fn release_edges(&self, edge_contacts: &mut Vec<EdgeContact>) -> usize {
        if !self.crossing {
            return 0;
        }
        let flag = |of: &Vec<bool>, v: u32| of.get(v as usize).copied().unwrap_or(false);
        let tangled = |edge: [u32; 2]| edge.iter().any(|&v| flag(&self.tangled, v));
        let on_crossing = |edge: [u32; 2]| tangled(edge) || edge.iter().any(|&v| flag(&self.pierced, v));
        // a pair holding a turned part on its old side of the other cloth
        let turned = |a: [u32; 2], b: [u32; 2]| {
            self.turning
                && a.iter().any(|&v| self.near_crossing(v))
                && self.pair(a[0], b[0]).is_some_and(|(pair, k)| pair.turned_side(k).is_some())
        };
        let before = edge_contacts.len();
        let on_crossed = |c: &EdgeContact| (tangled(c.a) && on_crossing(c.b)) || (on_crossing(c.a) && tangled(c.b));
        edge_contacts.retain(|c| !(on_crossed(c) || turned(c.a, c.b) || turned(c.b, c.a)));
        before - edge_contacts.len()
    }

    /// The vertex adjacency (compressed rows, each sorted) and the pieces of `triangles` over `n` vertices.
    fn build_graph(&mut self, triangles: &[[u32; 3]], n: usize) {
        self.graph_of.clear();
        self.graph_of.extend_from_slice(triangles);
        let valid = |t: &&[u32; 3]| t.iter().all(|&v| (v as usize) < n);
        // rows with room for the two other corners of each of the vertex's triangles (shared edges come twice)
        self.offsets.clear();
        self.offsets.resize(n + 1, 0);
        for tri in triangles.iter().filter(valid) {
            for &v in tri {
                self.offsets[v as usize + 1] += 2;
            }
        }
        for v in 0..n {
            self.offsets[v + 1] += self.offsets[v];
        }
        self.neighbours.clear();
        self.neighbours.resize(self.offsets[n] as usize, 0);
        let next = &mut self.part; // scratch: the next free entry of each row
        next.clear();
        next.extend_from_slice(&self.offsets[..n]);
        for &[a, b, c] in triangles.iter().filter(valid) {
            for (v, others) in [(a, [b, c]), (b, [c, a]), (c, [a, b])] {
                let at = next[v as usize] as usize;
                self.neighbours[at..at + 2].copy_from_slice(&others);
                next[v as usize] += 2;
            }
        }
        // each row sorted and deduplicated, moved down over the room its duplicates left
        let mut kept = 0;
        for (start, &end) in self.offsets.iter_mut().zip(next.iter()) {
            let row = *start as usize..end as usize;
            self.neighbours[row.clone()].sort_unstable();
            *start = kept as u32;
            for i in row {
                let r = self.neighbours[i];
                if kept == *start as usize || self.neighbours[kept - 1] != r {
                    self.neighbours[kept] = r;
                    kept += 1;
                }
            }
        }
        self.offsets[n] = kept as u32;
        self.neighbours.truncate(kept);
        self.cut.clear();
        self.cut.resize(kept, false);
        connect(&mut self.piece, &self.offsets, &self.neighbours, |_| true);
    }

    /// Marks every edge of a contact's vertex that pierces the contact's triangle at `x`, and the corners of
    /// that triangle; whether any edge was cut.
    fn cut_piercing_edges(&mut self, x: &[Vec3], triangles: &[[u32; 3]], contacts: &[SelfContact]) -> bool {
        self.cut.fill(false);
        self.pierced.clear();
        self.pierced.resize(x.len(), false);
        self.cut_end.clear();
        self.cut_end.resize(x.len(), false);
        self.crossed.clear();
        let mut any = false;
        for c in contacts {
            let q = c.vertex as usize;
            let Some(tri) = triangles.get(c.triangle as usize) else { continue };
            let (Some(&xq), Some(corners), Some(&[start, end])) =
                (x.get(q), corners(x, tri), self.offsets.get(q..q + 2).and_then(|r| r.first_chunk()))
            else {
                continue;
            };
            // the side test of `pierces` first, with the plane computed once: most edges stay on one side
            let normal = (corners[1] - corners[0]).cross(corners[2] - corners[0]);
            let dq = (xq - corners[0]).dot(normal);
            for slot in start as usize..end as usize {
                let r = self.neighbours[slot];
                let xr = x[r as usize];
                let dr = (xr - corners[0]).dot(normal);
                let opposite = (dq < 0.0 && dr > 0.0) || (dq > 0.0 && dr < 0.0);
                if opposite && !tri.contains(&r) && pierces(xq, xr, corners) {
                    self.cut_through(q as u32, r, tri);
                    any = true;
                }
            }
        }
        any
    }

    /// Cuts the `surveyed` edges as [`Self::cut_piercing_edges`] cuts those the contacts see; whether there were any.
    fn cut_surveyed(&mut self, triangles: &[[u32; 3]], surveyed: &[Piercing]) -> bool {
        let n = self.piece.len();
        let mut any = false;
        for &([a, b], t) in surveyed {
            if let Some(tri) = triangles.get(t as usize)
                && [a, b].iter().chain(tri).all(|&v| (v as usize) < n)
            {
                self.cut_through(a, b, tri);
                any = true;
            }
        }
        any
    }

    /// Cuts edge (a, b), which pierces `tri`: its corners are pierced, and the two pieces crossed.
    fn cut_through(&mut self, a: u32, b: u32, tri: &[u32; 3]) {
        self.cut_edge(a, b);
        for &v in tri {
            self.pierced[v as usize] = true;
        }
        self.cut_end[a as usize] = true;
        self.cut_end[b as usize] = true;
        let (p, q) = (self.piece[a as usize], self.piece[tri[0] as usize]);
        let pieces = [p.min(q), p.max(q)];
        if p == q {
            return;
        }
        if !self.crossed.iter().any(|pair| pair.pieces == pieces) {
            self.crossed.push(CrossedPair { pieces, sides: [[0; 2]; 2], turned: None });
        }
    }

    /// Marks edge (a, b) cut in both rows.
    fn cut_edge(&mut self, a: u32, b: u32) {
        for (from, to) in [(a, b), (b, a)] {
            let row = self.offsets[from as usize] as usize..self.offsets[from as usize + 1] as usize;
            if let Some(k) = self.neighbours[row.clone()].iter().position(|&v| v == to) {
                self.cut[row.start + k] = true;
            }
        }
    }

    /// Parts (the uncut edges); tangled = not in its piece's largest part.
    fn split_pieces(&mut self, n: usize) {
        let cut = &self.cut;
        connect(&mut self.part, &self.offsets, &self.neighbours, |slot| !cut[slot]);
        self.part_size.clear();
        self.part_size.resize(n, 0);
        for &root in &self.part {
            self.part_size[root as usize] += 1;
        }
        self.largest_part.clear();
        self.largest_part.resize(n, NONE);
        for v in 0..n {
            let (piece, part) = (self.piece[v] as usize, self.part[v]);
            let best = &mut self.largest_part[piece];
            if *best == NONE || self.part_size[part as usize] > self.part_size[*best as usize] {
                *best = part;
            }
        }
        self.tangled.clear();
        self.tangled.extend((0..n).map(|v| self.largest_part[self.piece[v] as usize] != self.part[v]));
    }
}
/// Union–find over the edges of the compressed rows `offsets`/`neighbours` whose slot is `kept`: afterwards
/// `parents[v]` is the root of v's component, its lowest vertex.
fn connect(parents: &mut Vec<u32>, offsets: &[u32], neighbours: &[u32], kept: impl Fn(usize) -> bool) {
    let n = offsets.len().saturating_sub(1);
    parents.clear();
    parents.extend(0..n as u32);
    for a in 0..n {
        let row = offsets[a] as usize..offsets[a + 1] as usize;
        for (slot, &b) in row.clone().zip(&neighbours[row]) {
            if b as usize > a && kept(slot) {
                union(parents, a, b as usize);
            }
        }
    }
    for v in 0..n {
        let root = find(parents, v);
        parents[v] = root as u32;
    }
}

/// The root of `v`, halving the path on the way.
fn find(parents: &mut [u32], mut v: usize) -> usize {
    while parents[v] as usize != v {
        let up = parents[parents[v] as usize];
        parents[v] = up;
        v = up as usize;
    }
    v
}

/// Joins the sets of `a` and `b` (the larger index under the smaller, so roots are deterministic).
fn union(parents: &mut [u32], a: usize, b: usize) {
    let (ra, rb) = (find(parents, a), find(parents, b));
    if ra != rb {
        let (lo, hi) = (ra.min(rb), ra.max(rb));
        parents[hi] = lo as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::super::project::project_self_contacts;
    use super::super::test_support::grid;
    use super::super::{SelfContactSearch, count_intersections, find_self_contacts};
    use super::*;

    /// Band of the searches below, metres.
    const BAND: f32 = 0.015;
    /// Sheet B's height above sheet A, metres.
    const LAYER: f32 = 0.01;

    /// Two 6×6 sheets 10 cm apart in x and y: A in z = 0, B above it at z = [`LAYER`], shifted by half a cell;
    /// A's vertex 14, at (0.2, 0.2), is pushed up through B to z = 2·LAYER. (positions, triangles, the vertex)
    fn vertex_through_a_layer() -> (Vec<Vec3>, Vec<[u32; 3]>, usize) {
        let (mut x, mut tris) = (Vec::new(), Vec::new());
        grid(6, 0.1, Vec3::ZERO, &mut x, &mut tris);
        grid(6, 0.1, Vec3::new(0.05, 0.05, LAYER), &mut x, &mut tris);
        let poked = 2 * 6 + 2;
        x[poked].z = 2.0 * LAYER;
        (x, tris, poked)
    }

    fn contacts_at(x: &[Vec3], tris: &[[u32; 3]]) -> Vec<SelfContact> {
        let mut contacts = Vec::new();
        find_self_contacts(&mut SelfContactSearch::default(), x, x, tris, BAND, false, &mut contacts);
        contacts
    }

    #[test]
    fn a_vertex_pushed_through_a_layer_alone_is_released() {
        let (x, tris, poked) = vertex_through_a_layer();
        assert!(count_intersections(&x, &tris) > 0);
        let before = contacts_at(&x, &tris);
        let held = |c: &SelfContact| c.vertex as usize == poked && c.triangle as usize >= tris.len() / 2;
        assert!(before.iter().any(held), "the poked vertex has a contact with sheet B");
        let mut after = before.clone();
        assert_eq!(Untangler::default().release(&x, &tris, &mut after), 1);
        assert!(!after.iter().any(held));
        // every dropped contact has the poked vertex at one end; the others (sheet A under sheet B) stay
        let dropped: Vec<_> = before.iter().filter(|c| !after.contains(c)).collect();
        assert!(!dropped.is_empty() && after.len() > dropped.len(), "{} kept, {} dropped", after.len(), dropped.len());
        for c in dropped {
            assert!(c.vertex as usize == poked || tris[c.triangle as usize].contains(&(poked as u32)), "{c:?}");
        }
        // untangled cloth keeps all its contacts
        let (mut flat, _, _) = vertex_through_a_layer();
        flat[poked].z = 0.0;
        let mut contacts = contacts_at(&flat, &tris);
        let all = contacts.clone();
        assert_eq!(Untangler::default().release(&flat, &tris, &mut contacts), 0);
        assert_eq!(contacts, all);
    }

    /// Steps the poked vertex (the only free one) under its edges' distance constraints and the self contacts,
    /// with or without the release, and returns the intersections left and its height.
    fn relax(untangle: bool) -> (usize, f32) {
        let (mut x, tris, poked) = vertex_through_a_layer();
        // its six edges (±1, ±6, ±7 in the grid), at their lengths in the sheet
        let in_sheet = |r: usize| (r, x[r].truncate().distance(x[poked].truncate()));
        let rest: Vec<(usize, f32)> = [-7, -6, -1, 1, 6, 7].map(|d| in_sheet(poked.wrapping_add_signed(d))).to_vec();
        let w: Vec<f32> = (0..x.len()).map(|i| if i == poked { 1.0 } else { 0.0 }).collect();
        let mut untangler = Untangler::default();
        for _ in 0..100 {
            let mut contacts = contacts_at(&x, &tris);
            if untangle {
                untangler.release(&x, &tris, &mut contacts);
            }
            let mut p = x.clone();
            for &(r, length) in &rest {
                let (d, at) = (p[poked] - p[r], p[poked]);
                p[poked] = at - d.normalize() * (d.length() - length);
            }
            project_self_contacts(&mut p, &x, &w, &tris, &contacts, LAYER / 2.0, 1.0);
            x = p;
        }
        (count_intersections(&x, &tris), x[poked].z)
    }

    #[test]
    fn a_released_vertex_is_pulled_back_through_the_layer() {
        let (held, height) = relax(false);
        assert!(held > 0 && height > LAYER, "the contacts hold the vertex above sheet B: z = {height}");
        let (left, height) = relax(true);
        assert_eq!(left, 0, "z = {height}");
        assert!(height < LAYER / 2.0, "back under sheet B, by half a thickness: z = {height}");
    }

    #[test]
    fn edge_contacts_on_the_crossing_are_released_and_the_others_kept() {
        let (x, tris, poked) = vertex_through_a_layer();
        let edge = |a: usize, b: usize| [a.min(b) as u32, a.max(b) as u32];
        let contact = |a: [u32; 2], b: [u32; 2]| EdgeContact { a, b, s: 0.5, t: 0.5, normal: Vec3::Z, start_gap: 0.0 };
        // B's vertices: 36 onward, B's vertex 36 + 14 sits half a cell beyond A's poked vertex, above its triangles
        let (b_near, a_far, b_far) = (36 + 2 * 6 + 2, 4 * 6 + 4, 36 + 5 * 6 + 5);
        let mut untangler = Untangler::default();
        // before any crossing was found, nothing is released
        let mut edges = vec![contact(edge(poked, poked + 1), edge(b_near, b_near + 1))];
        assert_eq!(untangler.release_edges(&mut edges), 0);
        let mut contacts = contacts_at(&x, &tris);
        assert_eq!(untangler.release(&x, &tris, &mut contacts), 1);
        let holding = contact(edge(poked, poked + 1), edge(b_near, b_near + 1));
        let far = contact(edge(a_far, a_far + 1), edge(b_far - 1, b_far));
        let mut edges = vec![holding, far];
        assert_eq!(untangler.release_edges(&mut edges), 1);
        assert_eq!(edges, vec![far], "the pair at the poked vertex goes, the one far from the crossing stays");
        // once untangled, the next release finds no crossing and the edge contacts stay
        let mut flat = x.clone();
        flat[poked].z = 0.0;
        let mut contacts = contacts_at(&flat, &tris);
        assert_eq!(untangler.release(&flat, &tris, &mut contacts), 0);
        let mut edges = vec![holding, far];
        assert_eq!(untangler.release_edges(&mut edges), 0);
    }

    /// Sheet B (vertices from 36 on) tilted through sheet A along a line, more of it near A below than above; the
    /// contacts in a band wide enough to see both sides near the crossing, with the cloths as groups.
    fn crossed_sheets() -> (Vec<Vec3>, Vec<[u32; 3]>, Vec<SelfContact>, Vec<Piercing>) {
        let (mut x, mut tris) = (Vec::new(), Vec::new());
        grid(6, 0.1, Vec3::ZERO, &mut x, &mut tris);
        grid(6, 0.1, Vec3::new(0.03, -0.02, -0.1), &mut x, &mut tris);
        // through A between B's last two rows: most of its contacts with A lie below it
        for q in &mut x[36..] {
            q.z += 0.22 * q.y;
        }
        let mut search = SelfContactSearch::default();
        search.groups.extend((0..x.len()).map(|v| u32::from(v >= 36)));
        let mut contacts = Vec::new();
        find_self_contacts(&mut search, &x, &x, &tris, 0.04, false, &mut contacts);
        let mut survey = super::super::CrossingSurvey::default();
        let found = survey.step(&x, &tris, &search.groups).to_vec();
        (x, tris, contacts, found)
    }

    #[test]
    fn crossed_cloths_turn_the_lesser_side_of_one_of_them_back() {
        let (x, tris, contacts, surveyed) = crossed_sheets();
        assert!(!surveyed.is_empty() && !contacts.is_empty());
        let of_b = |c: &SelfContact| c.vertex >= 36;
        let sides = |b: bool| {
            let mine = contacts.iter().filter(|c| of_b(c) == b);
            (mine.clone().filter(|c| c.side < 0.0).count(), mine.filter(|c| c.side > 0.0).count())
        };
        // B lies mostly below A, A on both sides of B near the line
        let (below, above) = sides(true);
        assert!(below > above && above > 0, "B: {below} below, {above} above");
        let (mut kept, mut turned) = (contacts.clone(), Vec::new());
        let w = vec![1.0; x.len()];
        Untangler::default().untangle_cloths(&x, &tris, &mut kept, (&surveyed, &w), &mut turned);
        assert!(!turned.is_empty(), "some contacts are turned");
        assert!(kept.iter().all(|c| contacts.contains(c)), "the others are kept as they were, or dropped");
        // all of one sheet's, each from the side it was on to that sheet's side
        let mover = of_b(&turned[0]);
        let (back, front) = sides(mover);
        let side = if front >= back { 1.0 } else { -1.0 };
        for c in &turned {
            assert_eq!((of_b(c), c.side), (mover, side));
            assert!(contacts.contains(&SelfContact { side: -side, ..*c }));
        }
    }

    #[test]
    fn the_graph_follows_the_triangles() {
        let (x, mut tris, poked) = vertex_through_a_layer();
        let mut untangler = Untangler::default();
        let mut contacts = contacts_at(&x, &tris);
        assert_eq!(untangler.release(&x, &tris, &mut contacts), 1);
        // split the poked vertex off sheet A entirely: now it has no edges, nothing pierces, nothing is tangled
        tris.retain(|t| !t.contains(&(poked as u32)));
        let mut contacts = contacts_at(&x, &tris);
        let all = contacts.clone();
        assert_eq!(untangler.release(&x, &tris, &mut contacts), 0);
        assert_eq!(contacts, all);
    }
}
