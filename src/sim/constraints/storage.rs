//! Storage of a cloth's internal constraints (§4.1): stretch (one per edge) and bending (one per pair of
//! adjacent triangles), each sorted by colour ([`coloring`]) so one colour's constraints touch disjoint particles
//! and project in parallel.

use super::coloring;

/// One stretching constraint per edge, C = |p1 − p2| − l0, type equality (§4.1), stored grouped by colour
/// (`coloring`): the constraints of one colour touch disjoint particles, which is what lets the solver
/// project a colour in parallel. The fields are private so the colouring can never go stale: the arrays only
/// change through [`StretchConstraints::new`].
#[derive(Clone, Debug, Default)]
pub struct StretchConstraints {
    edges: Vec<[u32; 2]>,
    /// Rest lengths l0 in metres.
    rest_length: Vec<f32>,
    /// Colour c is `color_offsets[c]..color_offsets[c + 1]`.
    color_offsets: Vec<u32>,
    /// Every index is below this particle count.
    vertex_count: usize,
    /// The mean over particles of their shortest positive rest edge ([`Self::mean_shortest_edge`]).
    mean_shortest_edge: Option<f32>,
}

impl StretchConstraints {
    /// Colours and stores the constraints over `vertex_count` particles; constraints that name a particle at
    /// or beyond `vertex_count` (or a particle twice) are dropped.
    pub fn new(edges: Vec<[u32; 2]>, rest_length: Vec<f32>, vertex_count: usize) -> Self {
        let (mut edges, mut rest_length) = keep_valid(edges, rest_length, vertex_count);
        let coloring = coloring::color(&edges, vertex_count);
        coloring::permute(&mut edges, &coloring.order);
        coloring::permute(&mut rest_length, &coloring.order);
        let mean_shortest_edge = mean_shortest_edge(&edges, &rest_length, vertex_count);
        Self { edges, rest_length, color_offsets: coloring.offsets, vertex_count, mean_shortest_edge }
    }

    /// The mean over the particles of the shortest positive rest edge each is part of (`None` without one): the
    /// spacing of neighbours. On a grid of 1.4 mm × 11 cm cells it is 1.4 mm, where the mean edge is 7.4 cm.
    pub fn mean_shortest_edge(&self) -> Option<f32> {
        self.mean_shortest_edge
    }

    /// The edges `[p1, p2]`, grouped by colour.
    pub fn edges(&self) -> &[[u32; 2]] {
        &self.edges
    }

    /// Rest lengths l0 in metres, one per edge.
    pub fn rest_length(&self) -> &[f32] {
        &self.rest_length
    }

    /// The particle count every index is below.
    pub fn vertex_count(&self) -> usize {
        self.vertex_count
    }

    /// Colour c is `color_offsets()[c]..color_offsets()[c + 1]`.
    pub fn color_offsets(&self) -> &[u32] {
        &self.color_offsets
    }

    /// Number of constraints.
    pub fn len(&self) -> usize {
        self.edges.len()
    }

    /// Whether there are no constraints.
    pub fn is_empty(&self) -> bool {
        self.edges.is_empty()
    }

    /// The arrays, for a topology change that ends in [`StretchConstraints::new`].
    pub fn into_parts(self) -> (Vec<[u32; 2]>, Vec<f32>) {
        (self.edges, self.rest_length)
    }
}

/// One bending constraint per pair of adjacent triangles `[p1, p2, p3, p4]` (shared edge p1–p2), holding the
/// rest values of both bending models (§4.1, Appendix A; and the opposite-vertex distance). Grouped by colour
/// like [`StretchConstraints`].
#[derive(Clone, Debug, Default)]
pub struct BendConstraints {
    quads: Vec<[u32; 4]>,
    /// Rest dihedral angle φ0 in radians.
    rest_angle: Vec<f32>,
    /// Rest distance |p3 − p4| in metres.
    rest_distance: Vec<f32>,
    color_offsets: Vec<u32>,
    vertex_count: usize,
}

impl BendConstraints {
    /// Colours and stores the constraints, dropping any that name a particle at or beyond `vertex_count`.
    pub fn new(quads: Vec<[u32; 4]>, rest_angle: Vec<f32>, rest_distance: Vec<f32>, vertex_count: usize) -> Self {
        let rests: Vec<(f32, f32)> = rest_angle.into_iter().zip(rest_distance).collect();
        let (mut quads, rests) = keep_valid(quads, rests, vertex_count);
        let coloring = coloring::color(&quads, vertex_count);
        coloring::permute(&mut quads, &coloring.order);
        let rest_angle = coloring.order.iter().map(|&k| rests[k as usize].0).collect();
        let rest_distance = coloring.order.iter().map(|&k| rests[k as usize].1).collect();
        Self { quads, rest_angle, rest_distance, color_offsets: coloring.offsets, vertex_count }
    }

    /// The pairs `[p1, p2, p3, p4]` (shared edge p1–p2), grouped by colour.
    pub fn quads(&self) -> &[[u32; 4]] {
        &self.quads
    }

    /// Rest dihedral angles φ0 in radians, one per pair.
    pub fn rest_angle(&self) -> &[f32] {
        &self.rest_angle
    }

    /// Rest distances |p3 − p4| in metres, one per pair.
    pub fn rest_distance(&self) -> &[f32] {
        &self.rest_distance
    }

    /// The particle count every index is below.
    pub fn vertex_count(&self) -> usize {
        self.vertex_count
    }

    /// Colour c is `color_offsets()[c]..color_offsets()[c + 1]`.
    pub fn color_offsets(&self) -> &[u32] {
        &self.color_offsets
    }

    /// Number of constraints.
    pub fn len(&self) -> usize {
        self.quads.len()
    }

    /// Whether there are no constraints.
    pub fn is_empty(&self) -> bool {
        self.quads.is_empty()
    }

    /// The arrays, for a topology change that ends in [`BendConstraints::new`].
    pub fn into_parts(self) -> (Vec<[u32; 4]>, Vec<f32>, Vec<f32>) {
        (self.quads, self.rest_angle, self.rest_distance)
    }
}

/// See [`StretchConstraints::mean_shortest_edge`].
fn mean_shortest_edge(edges: &[[u32; 2]], rest_length: &[f32], vertex_count: usize) -> Option<f32> {
    let mut shortest = vec![f32::INFINITY; vertex_count];
    for (&[i, j], &l) in edges.iter().zip(rest_length).filter(|(_, l)| **l > 0.0) {
        for k in [i, j] {
            shortest[k as usize] = shortest[k as usize].min(l);
        }
    }
    let (sum, count) =
        shortest.iter().filter(|l| l.is_finite()).fold((0.0f64, 0usize), |(s, n), l| (s + *l as f64, n + 1));
    (count > 0).then(|| (sum / count as f64) as f32)
}

/// The constraints (and their rest values) whose particles are distinct and below `vertex_count`.
fn keep_valid<const N: usize, R: Copy>(
    constraints: Vec<[u32; N]>,
    rest: Vec<R>,
    vertex_count: usize,
) -> (Vec<[u32; N]>, Vec<R>) {
    let valid = |c: &[u32; N]| c.iter().enumerate().all(|(k, &i)| (i as usize) < vertex_count && !c[..k].contains(&i));
    if constraints.len() == rest.len() && constraints.iter().all(valid) {
        return (constraints, rest);
    }
    constraints.into_iter().zip(rest).filter(|(c, _)| valid(c)).unzip()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_vertex_spacing_follows_the_short_edges_of_thin_cells() {
        // one 1 mm × 10 cm cell, split by its diagonal: every vertex has a 1 mm edge, the mean edge is 6.7 cm
        let (a, b) = (0.001f32, 0.1f32);
        let diagonal = (a * a + b * b).sqrt();
        let edges = vec![[0, 1], [2, 3], [0, 2], [1, 3], [0, 3]];
        let stretch = StretchConstraints::new(edges, vec![a, a, b, b, diagonal], 4);
        assert!((stretch.mean_shortest_edge().unwrap() - a).abs() < 1e-7, "{:?}", stretch.mean_shortest_edge());
        // vertices 0, 1, 2 have 2, 2 and 4 cm; a vertex of no edge, or only of zero-length ones, does not count
        let stretch = StretchConstraints::new(vec![[0, 1], [1, 2], [3, 4]], vec![0.02, 0.04, 0.0], 6);
        assert!((stretch.mean_shortest_edge().unwrap() - 0.08 / 3.0).abs() < 1e-7);
        // no edge at all gives none
        assert_eq!(StretchConstraints::new(Vec::new(), Vec::new(), 3).mean_shortest_edge(), None);
    }
}
