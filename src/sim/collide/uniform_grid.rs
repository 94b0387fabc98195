//! The uniform grid of cubic cells that the mesh colliders' grids (`edge_grid.rs`, `clearance_grid.rs`) are laid
//! on: cell coordinates and indices, and binning items by their boxes into per-cell lists with one counting sort.

use bevy::math::{UVec3, Vec3};

/// Cubic cells of side `cell` from `origin`, `dims` of them along each axis, indexed x fastest.
#[derive(Clone, Copy, Debug)]
pub struct UniformGrid {
    /// The corner of cell (0, 0, 0) with the lowest coordinates.
    pub origin: Vec3,
    /// The side of a cell.
    pub cell: f32,
    /// How many cells along x, y and z.
    pub dims: UVec3,
}

impl UniformGrid {
    /// How many cells the grid has.
    pub fn len(&self) -> usize {
        self.dims.element_product() as usize
    }

    /// The index of the cell at coordinates `c`.
    pub fn index(&self, c: UVec3) -> usize {
        (c.x + self.dims.x * (c.y + self.dims.y * c.z)) as usize
    }

    /// The coordinates of the cell holding `q`, if the grid covers it.
    pub fn cell_of(&self, q: Vec3) -> Option<UVec3> {
        let c = ((q - self.origin) / self.cell).floor();
        (c.cmpge(Vec3::ZERO).all() && c.cmplt(self.dims.as_vec3()).all()).then(|| c.as_uvec3())
    }

    /// The centre of the cell at coordinates `c`.
    pub fn centre(&self, c: UVec3) -> Vec3 {
        self.origin + (c.as_vec3() + 0.5) * self.cell
    }

    /// Whether the box `min`–`max` meets the grid's box.
    pub fn meets(&self, min: Vec3, max: Vec3) -> bool {
        min.cmple(self.origin + self.dims.as_vec3() * self.cell).all() && self.origin.cmple(max).all()
    }

    /// Every cell's coordinates, in index order.
    pub fn every_cell(&self) -> impl Iterator<Item = UVec3> + use<> {
        let d = self.dims;
        (0..d.z).flat_map(move |z| (0..d.y).flat_map(move |y| (0..d.x).map(move |x| UVec3::new(x, y, z))))
    }

    /// The indices of the cells overlapping the box `min`–`max`, clamped to the grid.
    pub fn cells_over(&self, min: Vec3, max: Vec3) -> impl Iterator<Item = usize> + use<> {
        let last = self.dims.as_vec3() - 1.0;
        let at = |q: Vec3| ((q - self.origin) / self.cell).floor().clamp(Vec3::ZERO, last).as_uvec3();
        let (lo, hi, d) = (at(min), at(max), self.dims);
        (lo.z..=hi.z).flat_map(move |z| {
            (lo.y..=hi.y).flat_map(move |y| (lo.x..=hi.x).map(move |x| (x + d.x * (y + d.y * z)) as usize))
        })
    }

    /// Each item binned to the cells its box overlaps, as (start per cell, items): cell k's items are
    /// `items[start[k]..start[k + 1]]`, in the order given.
    pub fn bin(&self, boxes: &[(u32, Vec3, Vec3)]) -> (Vec<u32>, Vec<u32>) {
        let mut start = vec![0u32; self.len() + 1];
        for &(_, min, max) in boxes {
            self.cells_over(min, max).for_each(|k| start[k + 1] += 1);
        }
        for k in 1..start.len() {
            start[k] += start[k - 1];
        }
        let mut next = start.clone();
        let mut items = vec![0u32; start[start.len() - 1] as usize];
        for &(item, min, max) in boxes {
            for k in self.cells_over(min, max) {
                items[next[k] as usize] = item;
                next[k] += 1;
            }
        }
        (start, items)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_are_binned_to_the_cells_their_boxes_overlap() {
        let grid = UniformGrid { origin: Vec3::ZERO, cell: 1.0, dims: UVec3::new(4, 3, 2) };
        assert_eq!(grid.len(), 24);
        assert_eq!(grid.cell_of(Vec3::new(3.5, 0.2, 1.9)), Some(UVec3::new(3, 0, 1)));
        assert_eq!(grid.cell_of(Vec3::new(4.5, 0.2, 1.0)), None);
        // item 7 spans cells x 1–2 of row (y 0, z 0); item 9 lies beyond the grid and is clamped to its corner
        let boxes =
            [(7, Vec3::new(1.2, 0.1, 0.1), Vec3::new(2.5, 0.9, 0.9)), (9, Vec3::splat(-5.0), Vec3::splat(-4.0))];
        let (start, items) = grid.bin(&boxes);
        let at = |c: UVec3| {
            let k = grid.index(c);
            &items[start[k] as usize..start[k + 1] as usize]
        };
        assert_eq!(at(UVec3::new(0, 0, 0)), &[9]);
        assert_eq!(at(UVec3::new(1, 0, 0)), &[7]);
        assert_eq!(at(UVec3::new(2, 0, 0)), &[7]);
        assert!(at(UVec3::new(3, 0, 0)).is_empty() && at(UVec3::new(1, 1, 0)).is_empty());
        assert_eq!(items.len(), 3);
        assert!(grid.meets(Vec3::new(3.5, 2.5, 1.5), Vec3::splat(9.0)));
        assert!(!grid.meets(Vec3::new(4.5, 2.5, 1.5), Vec3::splat(9.0)));
    }
}
