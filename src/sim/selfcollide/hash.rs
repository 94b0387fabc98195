//! The hierarchical spatial hash of the self-collision search: triangle boxes entered into a loose grid hashed
//! into a power-of-two table \[THM*03\], queried by vertex boxes.

use bevy::math::{IVec3, IVec4, Vec3, Vec4};

use super::narrow::BARY_MARGIN;
use super::{combine_capacity, corners};
use crate::sim::parallel::SliceOutputs;

/// The coarsest level of the hash grid: cells 2^20 times the median box (a box larger than that is kept in a
/// short list every query scans).
const MAX_LEVEL: u32 = 20;
/// Smallest hash table, in cells.
const MIN_TABLE_SIZE: usize = 64;
/// Triangles per rebuild slice at least: below that a hash is rebuilt on one thread.
const MIN_REBUILD_SLICE: usize = 1024;
/// Box extents sampled for the median that sets the level-0 cell size.
const MEDIAN_SAMPLES: usize = 1024;
/// Hash table cells per triangle (rounded up to a power of two).
const TABLE_CELLS_PER_TRIANGLE: usize = 2;
/// Every triangle box is grown by this fraction of its largest extent (on top of the caller's margin): 2·margin
/// covers a projection with barycentrics ≥ −[`BARY_MARGIN`], the rest is slack for rounding.
const BOX_SLACK: f32 = 2.0 * BARY_MARGIN + 0.01;
/// The three primes of \[THM*03\], and a fourth for the level.
const PRIMES: [u32; 4] = [73_856_093, 19_349_663, 83_492_791, 2_654_435_761];
/// A box that overlaps nothing.
pub(super) const EMPTY_BOX: [Vec3; 2] = [Vec3::INFINITY, Vec3::NEG_INFINITY];

/// A hierarchical ("loose") hash grid of triangle bounding boxes \[THM*03\]: every triangle is entered exactly
/// once, in the cell holding its box's minimum corner, at the finest level whose cells are large enough that
/// the box spans at most two of them per axis. Level k has cells of size c·2^k, where c is the median extent of
/// (a sample of at most `MEDIAN_SAMPLES`) boxes; a box over `MAX_LEVEL` levels is kept in a short list every
/// query scans, so one exploded triangle cannot flood the table.
///
/// A query box [min, max] overlaps a box entered at level k only if the entry's cell lies in
/// cell(min) − 1 ..= cell(max) per axis (cells are computed by one monotone function for both, so this holds in
/// floating point too): at most 2×2×2 cells per occupied level for the short rays of a vertex. Grid cells are
/// hashed into a power-of-two table with the primes of \[THM*03\] and stored as a counting sort
/// (`cell_start`/`entries`, each entry carrying its cell, level and box); an entry is reported only if its own
/// cell and level are the ones looked up, so a hash collision adds no duplicate, and only if its box overlaps.
/// Compared with entering a box into every cell it covers (21 cells per triangle in the `tearing` scene),
/// rebuilding writes one entry per triangle, and a query reads its candidates from consecutive memory with no
/// per-triangle stamps.
///
/// Buffers are cleared and refilled by every rebuild, keeping their capacity, so a warmed-up hash allocates
/// nothing. The hash is read-only between rebuilds, so several threads may query it at once.
#[derive(Clone, Debug, Default)]
pub(crate) struct SpatialHash {
    grid: Grid,
    /// Bit k is set if level k holds a triangle.
    levels: u32,
    /// Table size + 1 offsets into `entries`: table cell h holds `entries[cell_start[h]..cell_start[h + 1]]`.
    cell_start: Vec<u32>,
    entries: Vec<Entry>,
    /// The triangle of each entry (read only for the few entries a query reports).
    entry_triangles: Vec<u32>,
    /// Per triangle: its (grown) bounding box, or [`EMPTY_BOX`] if it has invalid indices or positions.
    bounds: Vec<[Vec3; 2]>,
    /// Triangles whose box spans more than two cells per axis even at level [`MAX_LEVEL`]; scanned by every query.
    oversized: Vec<u32>,
    /// Scratch of a rebuild: the sampled box extents (for the median), and what each triangle slice found.
    extents: Vec<f32>,
    slices: SliceOutputs<RebuildSlice>,
}

/// One triangle in the table: the grid cell (x, y, z) and level (w) it was entered at, and its box with w = 0 in
/// both corners, so a query tests it with three packed comparisons and one branch.
#[derive(Clone, Copy, Debug)]
struct Entry {
    key: IVec4,
    lo: Vec4,
    hi: Vec4,
}

/// A box to look up in a [`SpatialHash`], with the level-0 cells of its corners (queries with equal `cells`
/// probe the same table cells).
#[derive(Clone, Copy, Debug)]
pub(crate) struct BoxQuery {
    /// The level-0 grid cells of the box's min and max corners.
    pub cells: [IVec3; 2],
    /// The caller's name for the query, passed back with each hit.
    pub id: u32,
    min: Vec4,
    max: Vec4,
}

impl SpatialHash {
    /// Rebuilds the hash over `triangles` at `positions`, each box grown slightly (see [`Self::rebuild_swept`]).
    pub fn rebuild(&mut self, positions: &[Vec3], triangles: &[[u32; 3]]) {
        self.rebuild_swept(positions, positions, triangles, 0.0, false);
    }

    /// Rebuilds the hash over the boxes swept by `triangles` moving from `start` to `end`, each grown by
    /// `margin` plus a small fraction of its size. Triangles with an index out of range or a non-finite
    /// position are never reported. With `parallel` the compute pool's threads share slices of the triangles
    /// for the boxes and cells; the table is the same either way.
    pub fn rebuild_swept(&mut self, start: &[Vec3], end: &[Vec3], triangles: &[[u32; 3]], margin: f32, parallel: bool) {
        let margin = if margin.is_finite() { margin.max(0.0) } else { 0.0 };
        let bound = |t: usize| swept_bounds(start, end, &triangles[t], margin);
        self.rebuild_boxes(triangles.len(), parallel, bound, |_| true);
    }

    /// Rebuilds the hash over `count` triangles whose boxes are `bound(t)` (`swept_bounds`), entering only
    /// those for which `include(t)`: the others are never reported (the cell size is the same either way).
    pub fn rebuild_boxes(
        &mut self,
        count: usize,
        parallel: bool,
        bound: impl Fn(usize) -> [Vec3; 2] + Sync,
        include: impl Fn(usize) -> bool + Sync,
    ) {
        let table = (count * TABLE_CELLS_PER_TRIANGLE).next_power_of_two().max(MIN_TABLE_SIZE);
        let cell_size = self.median_extent(count, &bound);
        self.grid = Grid { cell_size, inv_cell: 1.0 / cell_size, mask: (table - 1) as u32 };

        // Pass 1, by slices of triangles: boxes, levels, cells and table cells.
        let grid = self.grid;
        let slices = self.slices.run(count, MIN_REBUILD_SLICE, parallel, |range, slice| {
            slice.fill(grid, range, &bound, &include);
        });
        // Count the entries of each table cell, in triangle order.
        self.bounds.clear();
        self.oversized.clear();
        self.cell_start.clear();
        self.cell_start.resize(table + 1, 0);
        self.levels = 0;
        for slice in slices.iter() {
            let Ok(slice) = slice.lock() else { continue };
            self.bounds.extend_from_slice(&slice.bounds);
            self.oversized.extend_from_slice(&slice.oversized);
            self.levels |= slice.levels;
            for &(h, _, _) in &slice.entries {
                self.cell_start[h as usize] += 1;
            }
        }
        // Inclusive prefix sum: cell_start[h] = end of cell h.
        let mut total = 0;
        for s in &mut self.cell_start[..table] {
            total += *s;
            *s = total;
        }
        self.cell_start[table] = total;
        // Pass 2: fill each cell back to front; afterwards cell_start[h] is the start of cell h.
        const UNUSED: Entry = Entry { key: IVec4::ZERO, lo: Vec4::ZERO, hi: Vec4::ZERO };
        self.entries.clear();
        self.entries.resize(total as usize, UNUSED);
        self.entry_triangles.clear();
        self.entry_triangles.resize(total as usize, 0);
        for slice in slices.iter() {
            let Ok(slice) = slice.lock() else { continue };
            for &(h, t, key) in &slice.entries {
                let s = &mut self.cell_start[h as usize];
                *s -= 1;
                let [lo, hi] = self.bounds[t as usize];
                self.entries[*s as usize] = Entry { key, lo: lo.extend(0.0), hi: hi.extend(0.0) };
                self.entry_triangles[*s as usize] = t;
            }
        }
    }

    /// The median of the largest extents of the valid boxes of (at most about [`MEDIAN_SAMPLES`], evenly
    /// spread) `triangles`: the level-0 cell size; 1 if there is none.
    fn median_extent(&mut self, count: usize, bound: impl Fn(usize) -> [Vec3; 2]) -> f32 {
        let stride = (count / MEDIAN_SAMPLES).max(1);
        self.extents.clear();
        self.extents
            .extend((0..count).step_by(stride).map(bound).map(|b| (b[1] - b[0]).max_element()).filter(|e| *e >= 0.0));
        let middle = self.extents.len() / 2;
        match self.extents.get(middle) {
            Some(_) => {
                let (_, median, _) = self.extents.select_nth_unstable_by(middle, f32::total_cmp);
                if median.is_finite() && *median > 0.0 { *median } else { 1.0 }
            }
            None => 1.0,
        }
    }

    /// Calls `f` once for every triangle whose stored box overlaps the box [`min`, `max`]. Allocates nothing.
    /// A box covering more grid cells than there are triangles scans all triangle boxes instead.
    pub fn for_each_in_box(&self, min: Vec3, max: Vec3, mut f: impl FnMut(u32)) {
        if let Some(query) = self.query(min, max, 0) {
            self.for_each_overlap(&[query], |_| false, |_, t| f(t));
        }
    }

    /// Per triangle of the last rebuild: its box (grown), or an empty box (min > max) if it has invalid indices or
    /// positions.
    pub fn bounds(&self) -> &[[Vec3; 2]] {
        &self.bounds
    }

    /// The query for the box [`min`, `max`] (`None` if it is empty or NaN), named `id`.
    pub fn query(&self, min: Vec3, max: Vec3, id: u32) -> Option<BoxQuery> {
        let cells = [cell_of(min, self.grid.inv_cell), cell_of(max, self.grid.inv_cell)];
        min.cmple(max).all().then(|| BoxQuery { cells, id, min: min.extend(0.0), max: max.extend(0.0) })
    }

    /// Calls `f(query id, triangle)` once for every query of `group` and triangle whose boxes overlap. All
    /// queries of the group must have the same `cells` (they then probe the same cells at every level, since
    /// the levels' cell sizes are the level-0 size times powers of two), so each table cell is read once for
    /// the whole group: neighbouring vertices share it. Triangles for which `skip` holds are passed over before
    /// their boxes are compared (cloth against cloth skips the group's own cloth).
    pub fn for_each_overlap(&self, group: &[BoxQuery], skip: impl Fn(u32) -> bool, mut f: impl FnMut(u32, u32)) {
        let Some(first) = group.first() else { return };
        if self.bounds.is_empty() {
            return;
        }
        let (min, max) = (first.min.truncate(), first.max.truncate());
        let exact = halves_exactly([min, max], first.cells, self.grid.inv_cell);
        let range = |level: u32| {
            let [lo, hi] = if exact {
                first.cells.map(|c| c >> level.min(MAX_LEVEL) as i32)
            } else {
                let inv = self.grid.level_inv(level);
                [cell_of(min, inv), cell_of(max, inv)]
            };
            (lo.saturating_sub(IVec3::ONE), hi)
        };
        let cells = levels_of(self.levels).map(range).fold(0i64, |n, (lo, hi)| n.saturating_add(cell_count(lo, hi)));
        let packed = PackedQueries::new(group);
        let mut report = |t: u32, lo: Vec4, hi: Vec4| match &packed {
            _ if skip(t) => {}
            Some(packed) => packed.for_each_hit(lo, hi, |i| f(group[i].id, t)),
            None => {
                for q in group {
                    // `&`, not `&&`: one well-predicted branch per pair
                    if lo.cmple(q.max).all() & hi.cmpge(q.min).all() {
                        f(q.id, t);
                    }
                }
            }
        };
        if cells > self.bounds.len() as i64 {
            for (t, [lo, hi]) in self.bounds.iter().enumerate() {
                report(t as u32, lo.extend(0.0), hi.extend(0.0));
            }
            return;
        }
        for level in levels_of(self.levels) {
            let (lo, hi) = range(level);
            for_each_cell(lo, hi, |cell| {
                let h = hash_cell(cell, level, self.grid.mask);
                let entries = self.cell_start[h] as usize..self.cell_start[h + 1] as usize;
                let key = cell.extend(level as i32);
                for (e, &t) in self.entries[entries.clone()].iter().zip(&self.entry_triangles[entries]) {
                    if e.key.cmpeq(key).all() {
                        report(t, e.lo, e.hi);
                    }
                }
            });
        }
        for &t in &self.oversized {
            let [lo, hi] = self.bounds[t as usize];
            report(t, lo.extend(0.0), hi.extend(0.0));
        }
    }

    /// Combines the capacities of all internal buffers; unchanged between two calls means nothing was
    /// (re)allocated in between.
    pub fn capacity_fingerprint(&self) -> usize {
        [
            self.cell_start.capacity(),
            self.entries.capacity(),
            self.entry_triangles.capacity(),
            self.bounds.capacity(),
            self.oversized.capacity(),
            self.extents.capacity(),
            self.slices.buffers().iter().filter_map(|slice| slice.lock().ok()).fold(0, |acc, slice| {
                acc.wrapping_mul(31)
                    .wrapping_add(slice.bounds.capacity())
                    .wrapping_add(slice.entries.capacity() << 8)
                    .wrapping_add(slice.oversized.capacity() << 16)
            }),
        ]
        .into_iter()
        .fold(0, combine_capacity)
    }
}

/// The boxes of a group of up to [`PackedQueries::MOST`] queries, four to a row, one row per coordinate bound
/// (lanes past the group hold an empty box): a stored box is tested against four queries with six packed
/// comparisons, and only the hits branch. In a crumpled pile a group holds many vertices and most of its box
/// tests miss.
struct PackedQueries {
    /// Per row of four queries: min x, y, z and max x, y, z.
    rows: [[Vec4; 6]; Self::MOST / 4],
    len: usize,
}

impl PackedQueries {
    /// Largest group packed (a larger one is tested query by query).
    const MOST: usize = 64;

    /// The group packed, if it has more than one query and at most [`Self::MOST`].
    fn new(group: &[BoxQuery]) -> Option<Self> {
        if group.len() < 2 || group.len() > Self::MOST {
            return None;
        }
        let mut rows = [[
            Vec4::INFINITY,
            Vec4::INFINITY,
            Vec4::INFINITY,
            Vec4::NEG_INFINITY,
            Vec4::NEG_INFINITY,
            Vec4::NEG_INFINITY,
        ]; Self::MOST / 4];
        for (i, q) in group.iter().enumerate() {
            let row = &mut rows[i / 4];
            for axis in 0..3 {
                row[axis][i % 4] = q.min[axis];
                row[3 + axis][i % 4] = q.max[axis];
            }
        }
        Some(Self { rows, len: group.len() })
    }

    /// Calls `f(i)` for every query i of the group, in order, whose box overlaps [`lo`, `hi`] (the same test as
    /// query by query: lo ≤ max and hi ≥ min on every axis).
    #[inline]
    fn for_each_hit(&self, lo: Vec4, hi: Vec4, mut f: impl FnMut(usize)) {
        let (lx, ly, lz) = (Vec4::splat(lo.x), Vec4::splat(lo.y), Vec4::splat(lo.z));
        let (hx, hy, hz) = (Vec4::splat(hi.x), Vec4::splat(hi.y), Vec4::splat(hi.z));
        for (r, row) in self.rows[..self.len.div_ceil(4)].iter().enumerate() {
            let hit = lx.cmple(row[3])
                & ly.cmple(row[4])
                & lz.cmple(row[5])
                & hx.cmpge(row[0])
                & hy.cmpge(row[1])
                & hz.cmpge(row[2]);
            let mut bits = hit.bitmask();
            while bits != 0 {
                f(4 * r + bits.trailing_zeros() as usize);
                bits &= bits - 1;
            }
        }
    }
}

/// The cell sizes of a [`SpatialHash`] and its table size.
#[derive(Clone, Copy, Debug, Default)]
struct Grid {
    /// Cell size of level 0.
    cell_size: f32,
    inv_cell: f32,
    /// Table size − 1 (the table size is a power of two).
    mask: u32,
}

impl Grid {
    /// The finest level at which box `b` spans at most two cells per axis, and the cell of its minimum corner
    /// there; `None` above [`MAX_LEVEL`].
    fn level_of(self, b: [Vec3; 2]) -> Option<(u32, IVec3)> {
        let extent = (b[1] - b[0]).max_element();
        // first guess: the level whose cells are as large as the box (it may span three cells, or two one level
        // down)
        let mut level = 0;
        while level < MAX_LEVEL && extent > self.cell_size * (1u32 << level) as f32 {
            level += 1;
        }
        level = level.saturating_sub(1);
        let inv = self.level_inv(level);
        let (mut lo, mut hi) = (cell_of(b[0], inv), cell_of(b[1], inv));
        let exact = halves_exactly(b, [lo, hi], inv);
        while level <= MAX_LEVEL {
            if (hi.as_i64vec3() - lo.as_i64vec3()).max_element() <= 1 {
                return Some((level, lo));
            }
            level += 1;
            (lo, hi) = if exact {
                (lo >> 1, hi >> 1)
            } else {
                let inv = self.level_inv(level);
                (cell_of(b[0], inv), cell_of(b[1], inv))
            };
        }
        None
    }

    /// 1 / cell size of `level` (exact: a power-of-two scaling, 2^−level built from its exponent bits).
    #[inline]
    fn level_inv(self, level: u32) -> f32 {
        self.inv_cell * f32::from_bits((127 - level.min(MAX_LEVEL)) << 23)
    }
}

/// What one triangle slice of a rebuild computes, in triangle order: the boxes, each entered triangle's table
/// cell, index and key, the oversized triangles, and the levels used.
#[derive(Debug, Default)]
struct RebuildSlice {
    bounds: Vec<[Vec3; 2]>,
    entries: Vec<(u32, u32, IVec4)>,
    oversized: Vec<u32>,
    levels: u32,
}

impl RebuildSlice {
    /// Refills the slice for the triangles `range`.
    fn fill(
        &mut self,
        grid: Grid,
        range: std::ops::Range<usize>,
        bound: impl Fn(usize) -> [Vec3; 2],
        include: impl Fn(usize) -> bool,
    ) {
        self.bounds.clear();
        self.entries.clear();
        self.oversized.clear();
        self.levels = 0;
        for t in range {
            let b = if include(t) { bound(t) } else { EMPTY_BOX };
            self.bounds.push(b);
            if !b[0].cmple(b[1]).all() {
                continue;
            }
            let Some((level, cell)) = grid.level_of(b) else {
                self.oversized.push(t as u32);
                continue;
            };
            self.levels |= 1 << level;
            self.entries.push((hash_cell(cell, level, grid.mask) as u32, t as u32, cell.extend(level as i32)));
        }
    }
}

/// The levels whose bit is set in `mask`, finest first.
fn levels_of(mut mask: u32) -> impl Iterator<Item = u32> {
    std::iter::from_fn(move || {
        (mask != 0).then(|| {
            let level = mask.trailing_zeros();
            mask &= mask - 1;
            level
        })
    })
}

/// Bounding box of `tri` at `start` and `end`, grown by `margin` + [`BOX_SLACK`]·(largest extent), or
/// [`EMPTY_BOX`] if an index is out of range or a position is not finite.
pub(super) fn swept_bounds(start: &[Vec3], end: &[Vec3], tri: &[u32; 3], margin: f32) -> [Vec3; 2] {
    let (Some(a), Some(b)) = (corners(start, tri), corners(end, tri)) else { return EMPTY_BOX };
    if !a.iter().chain(&b).all(|v| v.is_finite()) {
        return EMPTY_BOX;
    }
    let lo = a[0].min(a[1]).min(a[2]).min(b[0]).min(b[1]).min(b[2]);
    let hi = a[0].max(a[1]).max(a[2]).max(b[0]).max(b[1]).max(b[2]);
    let pad = margin + BOX_SLACK * (hi - lo).max_element();
    [lo - pad, hi + pad]
}

/// Whether the cells of `corners` at every coarser level are their `cells` at scale `inv` halved per level,
/// rounded down (the scaling by a power of two is exact): unless a conversion saturated, or a negative coordinate
/// is so near zero that a coarser scaling would round it to −0 (cell 0 where halving keeps −1).
#[inline(always)]
fn halves_exactly(corners: [Vec3; 2], cells: [IVec3; 2], inv: f32) -> bool {
    let saturated = |c: IVec3| (c.cmpeq(IVec3::MAX) | c.cmpeq(IVec3::MIN)).any();
    // only a cell of −1 can hold such a coordinate
    let vanishing = |c: IVec3, v: Vec3| {
        c.cmpeq(IVec3::NEG_ONE).any() && (v.cmplt(Vec3::ZERO) & (v * inv).cmpgt(Vec3::splat(-VANISHING))).any()
    };
    let [(lo, min), (hi, max)] = [(cells[0], corners[0]), (cells[1], corners[1])];
    !(saturated(lo) || saturated(hi) || vanishing(lo, min) || vanishing(hi, max))
}

/// Scaled coordinates above −this are left to convert at every level ([`halves_exactly`]): far above what the
/// coarsest level's scaling (2^−[`MAX_LEVEL`]) could round to zero.
const VANISHING: f32 = 1.0e-30;

/// Integer grid cell of `v` (`as` saturates out-of-range and maps NaN to 0, so this never panics).
#[inline]
fn cell_of(v: Vec3, inv_cell: f32) -> IVec3 {
    // floor without the libm call that x86-64's baseline makes of `f32::floor`: truncate, then step down where
    // truncation went up (negative non-integers)
    let scaled = v * inv_cell;
    let truncated = scaled.as_ivec3();
    let went_up = scaled.cmplt(truncated.as_vec3());
    truncated.saturating_sub(IVec3::new(i32::from(went_up.x), i32::from(went_up.y), i32::from(went_up.z)))
}

/// Number of cells in the inclusive range lo..=hi (saturating).
#[inline]
fn cell_count(lo: IVec3, hi: IVec3) -> i64 {
    let span = |a: i32, b: i32| (i64::from(b) - i64::from(a) + 1).max(0);
    span(lo.x, hi.x).saturating_mul(span(lo.y, hi.y)).saturating_mul(span(lo.z, hi.z))
}

#[inline]
fn for_each_cell(lo: IVec3, hi: IVec3, mut f: impl FnMut(IVec3)) {
    for z in lo.z..=hi.z {
        for y in lo.y..=hi.y {
            for x in lo.x..=hi.x {
                f(IVec3::new(x, y, z));
            }
        }
    }
}

/// Table cell of grid cell `c` of `level`: the prime hash of \[THM*03\], with a final mix so that the power-of-two mask
/// sees high bits too.
#[inline]
fn hash_cell(c: IVec3, level: u32, mask: u32) -> usize {
    let mut h = (c.x as u32).wrapping_mul(PRIMES[0])
        ^ (c.y as u32).wrapping_mul(PRIMES[1])
        ^ (c.z as u32).wrapping_mul(PRIMES[2])
        ^ level.wrapping_mul(PRIMES[3]);
    h ^= h >> 16;
    h = h.wrapping_mul(0x045d_9f3b);
    h ^= h >> 16;
    (h & mask) as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::selfcollide::test_support::{Lcg, crumpled_pair, grid, overlaps};
    use bevy::tasks::{ComputeTaskPool, TaskPoolBuilder};

    /// [`Grid::level_of`] converting the box's corners again at every level.
    fn level_converting_each(grid: Grid, b: [Vec3; 2]) -> Option<(u32, IVec3)> {
        (0..=MAX_LEVEL).find_map(|level| {
            let inv = grid.level_inv(level);
            let (lo, hi) = (cell_of(b[0], inv), cell_of(b[1], inv));
            ((hi.as_i64vec3() - lo.as_i64vec3()).max_element() <= 1).then_some((level, lo))
        })
    }

    #[test]
    fn a_boxs_level_and_cell_are_those_each_level_converted_alone_gives() {
        let grid = Grid { cell_size: 0.03, inv_cell: 1.0 / 0.03, mask: 1023 };
        let mut rng = Lcg(17);
        // boxes of every size around the cell, on both sides of the origin, near and far, and beyond i32's cells
        for scale in [0.01, 0.03, 0.1, 1.0, 40.0, 1.0e4, 1.0e9] {
            for _ in 0..2000 {
                let (centre, half) = (rng.vec(scale), rng.vec(0.05).abs() * rng.range(0.0, 30.0));
                let b = [centre - half, centre + half];
                assert_eq!(grid.level_of(b), level_converting_each(grid, b), "{b:?}");
            }
        }
        // a corner so near zero that the coarse levels' scaling rounds it to ±0, the box climbing to them
        for scale in [1.0e-44, 1.0e-40, 1.0e-36] {
            for _ in 0..2000 {
                let b = [rng.vec(scale), rng.vec(scale) + rng.vec(1.0e4).abs()];
                assert_eq!(grid.level_of(b), level_converting_each(grid, b), "{b:?}");
            }
        }
    }

    #[test]
    fn cells_are_the_floor_of_the_scaled_position() {
        let values =
            [0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 2.999, -2.999, 3.0, -3.0, 1e-8, -1e-8, 123_456.7, -7.25e9, 3e38, -3e38];
        for &a in &values {
            let v = Vec3::new(a, -a, a * 0.5);
            let expected = (v * 1.5).floor().as_ivec3();
            assert_eq!(cell_of(v, 1.5), expected, "{v}");
        }
        assert_eq!(cell_of(Vec3::NAN, 2.0), IVec3::ZERO);
    }

    #[test]
    fn packed_queries_report_the_scalar_hits_in_order() {
        let mut rng = Lcg(5);
        for len in [2, 3, 4, 5, 17, 63, 64] {
            let group: Vec<BoxQuery> = (0..len)
                .map(|id| {
                    let c = rng.vec(0.5);
                    let e = rng.vec(0.2).abs();
                    BoxQuery { cells: [IVec3::ZERO; 2], id, min: (c - e).extend(0.0), max: (c + e).extend(0.0) }
                })
                .collect();
            let Some(packed) = PackedQueries::new(&group) else { panic!("{len} queries not packed") };
            for _ in 0..200 {
                let c = rng.vec(0.5);
                let e = rng.vec(0.2).abs();
                let (lo, hi) = ((c - e).extend(0.0), (c + e).extend(0.0));
                let scalar: Vec<usize> = (0..len as usize)
                    .filter(|&i| lo.cmple(group[i].max).all() && hi.cmpge(group[i].min).all())
                    .collect();
                let mut hits = Vec::new();
                packed.for_each_hit(lo, hi, |i| hits.push(i));
                assert_eq!(hits, scalar);
            }
        }
        assert!(PackedQueries::new(&[]).is_none());
    }

    #[test]
    fn hash_query_matches_box_overlap() {
        let (x, p, tris) = crumpled_pair(7);
        let mut hash = SpatialHash::default();
        hash.rebuild_swept(&x, &p, &tris, 0.01, false);
        assert!(hash.levels.count_ones() >= 2, "the rough data should use several levels: {:b}", hash.levels);
        let mut rng = Lcg(99);
        for _ in 0..200 {
            let c = Vec3::new(rng.range(-0.1, 1.0), rng.range(-0.1, 1.0), rng.range(-0.2, 0.2));
            let e = rng.vec(0.15).abs();
            let (lo, hi) = (c - e, c + e);
            let mut got = Vec::new();
            hash.for_each_in_box(lo, hi, |t| got.push(t));
            let n = got.len();
            got.sort_unstable();
            got.dedup();
            assert_eq!(n, got.len(), "duplicate candidates");
            let want: Vec<u32> = (0..tris.len() as u32)
                .filter(|&t| overlaps(&swept_bounds(&x, &p, &tris[t as usize], 0.01), lo, hi))
                .collect();
            assert_eq!(got, want);
        }
    }

    #[test]
    fn parallel_rebuild_gives_the_same_table() {
        ComputeTaskPool::get_or_init(|| TaskPoolBuilder::new().num_threads(2).build());
        // a crumpled 60×60 sheet: 6962 triangles, several rebuild slices
        let (mut x, mut tris) = (Vec::new(), Vec::new());
        grid(60, 0.02, Vec3::ZERO, &mut x, &mut tris);
        let mut rng = Lcg(21);
        let p: Vec<Vec3> = x.iter().map(|&v| v + rng.vec(0.03)).collect();
        let (mut serial, mut parallel) = (SpatialHash::default(), SpatialHash::default());
        serial.rebuild_swept(&x, &p, &tris, 0.01, false);
        for _ in 0..2 {
            parallel.rebuild_swept(&x, &p, &tris, 0.01, true);
            assert!(parallel.slices.buffers().len() > 1, "the test should use several slices");
            assert_eq!(parallel.cell_start, serial.cell_start);
            assert_eq!(parallel.entry_triangles, serial.entry_triangles);
            assert_eq!(parallel.bounds, serial.bounds);
            assert_eq!(parallel.levels, serial.levels);
            assert!(serial.levels.count_ones() >= 2, "{:b}", serial.levels);
        }
    }

    #[test]
    fn degenerate_and_huge_triangles_do_not_break_the_hash() {
        // a 10×10 sheet of 1 cm triangles sets the cell size; then a triangle of 10⁶ m (2^26 cells), one with a
        // NaN corner, one with an index out of range and one collapsed to a point
        let (mut x, mut tris) = (Vec::new(), Vec::new());
        grid(10, 0.01, Vec3::ZERO, &mut x, &mut tris);
        let base = x.len() as u32;
        x.extend([Vec3::ZERO, Vec3::X * 1e6, Vec3::Y * 1e6, Vec3::splat(f32::NAN), Vec3::new(0.05, 0.05, 0.0)]);
        let huge = tris.len() as u32;
        tris.extend([[base, base + 1, base + 2], [base, base + 3, base + 4], [base, base + 1, 999], [base + 4; 3]]);
        let mut hash = SpatialHash::default();
        hash.rebuild(&x, &tris);
        assert_eq!(hash.oversized, vec![huge]);
        let (lo, hi) = (Vec3::new(0.045, 0.045, -0.1), Vec3::new(0.055, 0.055, 0.1));
        let mut got = Vec::new();
        hash.for_each_in_box(lo, hi, |t| got.push(t));
        got.sort_unstable();
        let want: Vec<u32> = (0..tris.len() as u32)
            .filter(|&t| t == huge || t == huge + 3 || overlaps(&swept_bounds(&x, &x, &tris[t as usize], 0.0), lo, hi))
            .collect();
        assert!(want.len() > 4, "{want:?}");
        assert_eq!(got, want);
        hash.for_each_in_box(Vec3::splat(f32::NAN), Vec3::ONE, |_| panic!("NaN box"));
        // a hash of nothing but broken triangles reports nothing
        hash.rebuild(&x[base as usize..], &[[0, 3, 4], [0, 1, 999]]);
        hash.for_each_in_box(Vec3::splat(-1.0), Vec3::ONE, |t| panic!("reported {t}"));
    }
}
