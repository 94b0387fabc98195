//! The edges of a solid with many of them (a triangle mesh's) binned into a uniform grid in the solid's own frame,
//! built once, so that the feature search (`features.rs`, §4.2) finds the few edges near a cloth triangle in a
//! handful of cell lookups instead of a tree walk per triangle.

use bevy::math::{UVec3, Vec3};

use super::general::FeatureEdge;
use super::uniform_grid::UniformGrid;

/// Most cells the grid may have; a solid with a larger box than its edges fill gets coarser cells.
const MAX_CELLS: f32 = 262_144.0;

/// A uniform grid over a solid's edges: each cell lists the edges whose box (grown by their radius) overlaps it.
#[derive(Clone, Debug)]
pub struct EdgeGrid {
    grid: UniformGrid,
    /// Cell k's edges are `edges[start[k]..start[k + 1]]`.
    start: Vec<u32>,
    edges: Vec<u32>,
}

impl EdgeGrid {
    /// The grid of `edges`, with cells as long as their mean length; `None` for no edges or ones not finite.
    pub fn new(edges: &[FeatureEdge]) -> Option<Self> {
        let boxes: Vec<(u32, Vec3, Vec3)> = (edges.iter().enumerate())
            .map(|(e, edge)| {
                let (min, max) = edge.bounds(0.0);
                (e as u32, min, max)
            })
            .collect();
        let (lo, hi) = boxes.iter().fold((Vec3::MAX, Vec3::MIN), |(lo, hi), b| (lo.min(b.1), hi.max(b.2)));
        if edges.is_empty() || !lo.is_finite() || !hi.is_finite() {
            return None;
        }
        let mean = edges.iter().map(|e| e.ends[0].distance(e.ends[1])).sum::<f32>() / edges.len() as f32;
        let size = hi - lo;
        let cell = mean.max((size.element_product() / MAX_CELLS).cbrt()).max(size.max_element() / 256.0).max(1e-4);
        let grid = UniformGrid { origin: lo, cell, dims: (size / cell).floor().as_uvec3() + UVec3::ONE };
        let (start, edges) = grid.bin(&boxes);
        Some(Self { grid, start, edges })
    }

    /// Calls `f` with every edge whose box overlaps `min`–`max`, and maybe others, and some several times.
    pub fn edges_near(&self, min: Vec3, max: Vec3, f: &mut dyn FnMut(u32)) {
        if !self.grid.meets(min, max) {
            return;
        }
        for k in self.grid.cells_over(min, max) {
            self.edges[self.start[k] as usize..self.start[k + 1] as usize].iter().for_each(|&e| f(e));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::collide::general::scan_edges_near;

    #[test]
    fn the_grid_finds_every_edge_the_scan_finds() {
        // a 20 × 20 lattice of edges on a bumpy sheet, and some long ones across it
        let height = |x: f32, z: f32| 0.1 * (3.0 * x).sin() * (2.0 * z).cos();
        let at = |i: u32, j: u32| {
            let (x, z) = (i as f32 * 0.05, j as f32 * 0.05);
            Vec3::new(x, height(x, z), z)
        };
        let mut edges = Vec::new();
        for i in 0..20 {
            for j in 0..20 {
                edges.push(FeatureEdge { ends: [at(i, j), at(i + 1, j)], radius: 0.0 });
                edges.push(FeatureEdge { ends: [at(i, j), at(i, j + 1)], radius: 0.01 * (i % 3) as f32 });
            }
        }
        edges.push(FeatureEdge { ends: [at(0, 0), at(20, 20)], radius: 0.0 });
        edges.push(FeatureEdge { ends: [at(20, 0), at(0, 20)], radius: 0.2 });
        let grid = EdgeGrid::new(&edges).expect("a grid");
        let mut total = 0;
        for k in 0..300 {
            let c = Vec3::new((k % 17) as f32 * 0.07 - 0.1, (k % 5) as f32 * 0.06 - 0.12, (k / 17) as f32 * 0.07 - 0.1);
            let (min, max) = (c - Vec3::splat(0.03), c + Vec3::splat(0.01 + (k % 4) as f32 * 0.02));
            let (mut scanned, mut found) = (Vec::new(), Vec::new());
            scan_edges_near(&edges, min, max, &mut |e| scanned.push(e));
            grid.edges_near(min, max, &mut |e| found.push(e));
            found.sort_unstable();
            found.dedup();
            assert!(scanned.iter().all(|e| found.contains(e)), "box {min}–{max}: {scanned:?} not all in {found:?}");
            assert!(found.len() <= scanned.len() + 40, "box {min}–{max}: {} found for {}", found.len(), scanned.len());
            total += scanned.len();
        }
        assert!(total > 500, "the boxes must meet edges: {total}");
        assert!(EdgeGrid::new(&[]).is_none());
    }
}
