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
//! The paper uses spatial hashing \[THM*03\], assuming triangles of about the same size. [`SpatialHash`] is a
//! hierarchical ("loose") grid hashed into a power-of-two table with the three large primes of \[THM*03\] and
//! stored as a counting sort, so it allocates nothing once its buffers have grown: each triangle is entered
//! once, with its *swept* bounding box (positions x and p) grown by h, at the level whose cells (the median box
//! size times a power of two) hold it within two cells per axis, so a triangle that moved a lot during the step
//! is still found and one that did not is cheap; each vertex queries the box of its segment x → p, together
//! with the vertices whose segments start and end in the same cells (they probe the same table cells). The
//! contacts are sorted by vertex, then triangle, so the projection order does not depend on the hash's layout
//! (cell size, table size, the order cells are visited in). Two bounds keep a collapsed, crumpled clump from
//! swamping the search: a vertex sends at most [`MAX_CANDIDATES_PER_VERTEX`] candidates to the narrow phase
//! and keeps at most [`MAX_CONTACTS_PER_VERTEX`] contacts; neither binds in the shipped scenes.
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
//! (interpolated) triangle with a barycentric margin of [`BARY_MARGIN`]. The barycentrics are computed exactly at
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
//! # Projection ([`project_self_contacts`])
//!
//! One Gauss–Seidel pass of PBD eq. (8)–(9) over the contacts, skipping satisfied ones. The solver orders the
//! contacts in two particle-disjoint halves and the rest ([`split_in_halves`]) and projects the halves side by
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
//! A vertex that starts a step already inside the band (closer than h to the triangle) is not pushed all the way
//! out to h in that step, only to min(h, its gap at the start + [`DEPENETRATION_PER_STEP`]·h): a position
//! correction becomes velocity in line (12)–(13), so pushing a squeezed vertex out by a whole thickness every step
//! throws it off at h/Δt. In a crumpled pile a vertex is often squeezed between two layers closer than 2h, whose
//! contacts cannot both hold; pushed to ±h alternately they pumped energy into the pile until the torn curtain of
//! the `tearing` scene blew apart. A vertex that arrives from outside the band (gap ≥ h at the start, the
//! tunnelling case) is still held at h. This is the "maximum depenetration velocity" of game physics engines.
//!
//! # Caveats
//!
//! Like the paper, this handles vertices tunnelling through triangles, not edge–edge crossings. On its own it
//! would keep cloth that already interpenetrates at x on the wrong side; [`Untangler`] (`untangle.rs`, after
//! \[BWK03\], which §4.3 points to) finds such crossings in the contact list and releases the contacts of their
//! smaller side, so the cloth pulls it back through. The thickness h should be well below the edge length, or neighbouring vertices of a
//! strongly bent cloth register contacts with each other.

use bevy::math::{IVec3, IVec4, Vec3, Vec4};

use self::narrow::{Found, NarrowPhase, barycentric, unit_normal};
use self::patches::Patches;
use super::constraints::access::{ParticleAccess, Slices};
use super::parallel::SliceOutputs;

mod narrow;
mod patches;
mod untangle;

pub use self::narrow::BARY_MARGIN;
pub use self::untangle::Untangler;

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
/// Barycentric tolerance of [`count_crossings`], so a vertex passing exactly through an edge is not missed.
const CROSSING_TOLERANCE: f32 = 1e-5;
/// Bisection steps for the crossing time in [`count_crossings`] (f32 resolution is reached well before).
const CROSSING_BISECTIONS: u32 = 32;
/// The three primes of \[THM*03\], and a fourth for the level.
const PRIMES: [u32; 4] = [73_856_093, 19_349_663, 83_492_791, 2_654_435_761];
/// A box that overlaps nothing.
const EMPTY_BOX: [Vec3; 2] = [Vec3::INFINITY, Vec3::NEG_INFINITY];

/// A vertex–triangle self contact (§4.3).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SelfContact {
    pub vertex: u32,
    pub triangle: u32,
    /// +1 if the vertex started the step on the side the triangle's normal (p2 − p1)×(p3 − p1) points to
    /// (eq. (12)), −1 if it started below (eq. (13)).
    pub side: f32,
}

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
pub struct SpatialHash {
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
pub struct BoxQuery {
    pub cells: [IVec3; 2],
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
        for slice in slices {
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
        for slice in slices {
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
            self.for_each_overlap(&[query], |_, t| f(t));
        }
    }

    /// The query for the box [`min`, `max`] (`None` if it is empty or NaN), named `id`.
    pub fn query(&self, min: Vec3, max: Vec3, id: u32) -> Option<BoxQuery> {
        let cells = [cell_of(min, self.grid.inv_cell), cell_of(max, self.grid.inv_cell)];
        min.cmple(max).all().then(|| BoxQuery { cells, id, min: min.extend(0.0), max: max.extend(0.0) })
    }

    /// Calls `f(query id, triangle)` once for every query of `group` and triangle whose boxes overlap. All
    /// queries of the group must have the same `cells` (they then probe the same cells at every level, since
    /// the levels' cell sizes are the level-0 size times powers of two), so each table cell is read once for
    /// the whole group: neighbouring vertices share it.
    pub fn for_each_overlap(&self, group: &[BoxQuery], mut f: impl FnMut(u32, u32)) {
        let Some(first) = group.first() else { return };
        if self.bounds.is_empty() {
            return;
        }
        let (min, max) = (first.min.truncate(), first.max.truncate());
        let range = |level: u32| {
            let inv = self.grid.level_inv(level);
            (cell_of(min, inv).saturating_sub(IVec3::ONE), cell_of(max, inv))
        };
        let cells = levels_of(self.levels).map(range).fold(0i64, |n, (lo, hi)| n.saturating_add(cell_count(lo, hi)));
        let packed = PackedQueries::new(group);
        let mut report = |t: u32, lo: Vec4, hi: Vec4| match &packed {
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

/// Folds one buffer capacity `c` into the fingerprint `acc` of the capacities before it (see
/// [`SpatialHash::capacity_fingerprint`]).
fn combine_capacity(acc: usize, c: usize) -> usize {
    acc.wrapping_mul(1_000_003).wrapping_add(c)
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
        while level <= MAX_LEVEL {
            let inv = self.level_inv(level);
            let (lo, hi) = (cell_of(b[0], inv), cell_of(b[1], inv));
            if (hi.as_i64vec3() - lo.as_i64vec3()).max_element() <= 1 {
                return Some((level, lo));
            }
            level += 1;
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

/// Vertices per query slice of [`find_self_contacts`] at least.
const MIN_QUERY_SLICE: usize = 64;

/// The spatial hash of [`find_self_contacts`] and the contacts each vertex query slice found, reused every step.
#[derive(Clone, Debug, Default)]
pub struct SelfContactSearch {
    /// Test every pair whose boxes overlap, with no normal-cone culling (for comparisons).
    pub full_search: bool,
    patches: Patches,
    /// Steps left to search without culling, after a step where culling skipped too little to pay for itself.
    unculled_steps: u32,
    hash: SpatialHash,
    slices: SliceOutputs<QuerySlice>,
}

/// What one slice of vertex queries keeps between steps: its queries (sorted by cells) and its contacts.
#[derive(Debug, Default)]
struct QuerySlice {
    queries: Vec<BoxQuery>,
    found: Vec<Found>,
    /// Per vertex of the slice: the candidates it has sent to the narrow phase.
    tested: Vec<u32>,
}

impl SelfContactSearch {
    /// Combines the capacities of all buffers; unchanged between two calls means nothing was (re)allocated.
    pub fn capacity_fingerprint(&self) -> usize {
        let slices = self.slices.buffers();
        slices.iter().filter_map(|slice| slice.lock().ok()).fold(
            self.hash.capacity_fingerprint().wrapping_mul(31).wrapping_add(slices.len())
                ^ self.patches.capacity_fingerprint().rotate_left(17),
            |acc, slice| {
                acc.wrapping_mul(1_000_003)
                    .wrapping_add(slice.found.capacity())
                    .wrapping_add(slice.queries.capacity() << 20)
                    .wrapping_add(slice.tested.capacity() << 40)
            },
        )
    }
}

/// Fills `out` (cleared first, capacity kept) with the vertex–triangle contacts of a step from positions `x` to
/// predictions `p` (§4.3, see the module docs for the predicate). Rebuilds the hash over the triangles swept
/// from x to p, grown by `thickness`, then queries it for every vertex: in slices of consecutive vertices that
/// the compute task pool's threads share when `parallel`, each with its own output. Contacts are ordered by
/// vertex, then triangle, whatever the thread count and (unless a vertex meets more than
/// [`MAX_CANDIDATES_PER_VERTEX`] candidates) the hash layout. Allocates nothing once the buffers have grown to
/// the problem size.
pub fn find_self_contacts(
    search: &mut SelfContactSearch,
    x: &[Vec3],
    p: &[Vec3],
    triangles: &[[u32; 3]],
    thickness: f32,
    parallel: bool,
    out: &mut Vec<SelfContact>,
) {
    out.clear();
    let h = if thickness.is_finite() { thickness.max(0.0) } else { 0.0 };
    let SelfContactSearch { full_search, patches, unculled_steps, hash, slices } = search;
    let cull = !*full_search && *unculled_steps == 0;
    if cull {
        patches.update(x, p, triangles, h, parallel);
        if patches.needed_fraction() > CULLING_PAYS_BELOW {
            *unculled_steps = UNCULLED_STEPS;
        }
    } else {
        *unculled_steps = unculled_steps.saturating_sub(1);
    }
    let patches = &*patches;
    if cull {
        let bound = |t: usize| patches.triangle_bounds().get(t).copied().unwrap_or(EMPTY_BOX);
        hash.rebuild_boxes(triangles.len(), parallel, bound, |t| patches.triangle_needed(t));
    } else {
        hash.rebuild_swept(x, p, triangles, h, parallel);
    }
    let n = x.len().min(p.len());
    let hash = &*hash;
    let found = slices.run(n, MIN_QUERY_SLICE, parallel, |vertices, slice| {
        let QuerySlice { queries, found, tested } = slice;
        found.clear();
        queries.clear();
        tested.clear();
        tested.resize(vertices.len(), 0);
        let first = vertices.start;
        queries.extend(vertices.filter_map(|v| {
            let (xq, pq) = (x[v], p[v]);
            let (lo, hi) = (xq.min(pq), xq.max(pq));
            let needed = !cull || patches.vertex_needed(v, lo, hi);
            (needed && xq.is_finite() && pq.is_finite()).then(|| hash.query(lo, hi, v as u32)).flatten()
        }));
        // vertices whose rays start and end in the same cells look the hash up together
        queries.sort_unstable_by_key(|q| (q.cells[0].to_array(), q.cells[1].to_array(), q.id));
        let mut narrow = NarrowPhase::new(x, p, triangles, h);
        for group in queries.chunk_by(|a, b| a.cells == b.cells) {
            hash.for_each_overlap(group, |v, t| {
                if triangles.get(t as usize).is_some_and(|tri| !tri.contains(&v))
                    && (!cull || patches.pair_needed(v, t))
                    && let Some(count) = tested.get_mut((v as usize).wrapping_sub(first))
                    && *count < MAX_CANDIDATES_PER_VERTEX
                {
                    *count += 1;
                    narrow.test(v, t, found);
                }
            });
        }
        narrow.flush(found);
        // by vertex, then triangle: the projection order must not depend on the hash's layout
        found.sort_unstable_by_key(|(c, _)| (c.vertex, c.triangle));
        keep_nearest(found, MAX_CONTACTS_PER_VERTEX);
    });
    for slice in found {
        if let Ok(slice) = slice.lock() {
            out.extend(slice.found.iter().map(|(c, _)| *c));
        }
    }
}

/// When culling leaves more than this fraction of the patches to search, it costs about what it saves (the
/// patches' cones and pairs take about a tenth of a full search)...
const CULLING_PAYS_BELOW: f32 = 0.75;
/// ...and the next this many steps search without it (cloth crumpled one step is crumpled the next; the
/// contacts are the same either way).
const UNCULLED_STEPS: u32 = 30;

/// Most candidate triangles one vertex sends to the narrow phase per step. A vertex of a flat sheet has a few
/// triangles besides its own whose boxes overlap its ray, one in a crumpled pile of the `tearing` runs more than
/// 512 (a bound of 512 changed one of those runs); every shipped preset and every `tearing` run with 3–6 iterations
/// or substeps gives the same result with this bound as without it. It binds when a torn cloth has collapsed into a
/// clump where thousands of triangles overlap one point (`tearing` with 2 substeps: up to 4,600), whose search took
/// 300 ms a frame. The candidates beyond it, in the hash's order, are dropped, so only there do the contacts depend
/// on the hash's layout (never on the thread count: a vertex meets its candidates in the same order whichever
/// vertices share its query).
pub const MAX_CANDIDATES_PER_VERTEX: u32 = 1024;

/// Most self contacts one vertex keeps per step: those whose triangles were nearest at the start (the
/// vertex's distance to their planes), the layers it can actually meet. A vertex over a sheet needs up to six
/// (the triangles around the point below it); in the `tearing` scene a vertex has at most six, but a crumpled,
/// torn-up clump gave a few vertices hundreds of triangles within the band, and 100,000 contacts a step, which
/// only fought each other and the stretch constraints.
pub const MAX_CONTACTS_PER_VERTEX: usize = 16;

/// Keeps, of each vertex's run of `found` (sorted by vertex, then triangle), the `most` with the smallest
/// distance (ties: lower triangle first), still by triangle. Runs of at most `most` are untouched.
fn keep_nearest(found: &mut Vec<Found>, most: usize) {
    let (mut read, mut write) = (0, 0);
    while read < found.len() {
        let vertex = found[read].0.vertex;
        let len = found[read..].iter().take_while(|(c, _)| c.vertex == vertex).count();
        let run = &mut found[read..read + len];
        let kept = if len > most {
            run.sort_unstable_by(|(a, da), (b, db)| da.total_cmp(db).then(a.triangle.cmp(&b.triangle)));
            run[..most].sort_unstable_by_key(|(c, _)| c.triangle);
            most
        } else {
            len
        };
        found.copy_within(read..read + kept, write);
        (read, write) = (read + len, write + kept);
    }
    found.truncate(write);
}

/// How far outside its triangle (in barycentric units) a vertex may project and still be held by the pair.
pub const OUTSIDE_TOLERANCE: f32 = 0.25;

/// How much of the thickness h a contact may win back in one step when its vertex started the step inside the
/// band: the target gap is min(h, gap at the start + this·h). See the module docs ("Squeezed vertices").
pub const DEPENETRATION_PER_STEP: f32 = 0.25;

/// One Gauss–Seidel pass over `contacts`: where C = side·(q − p1)·n − h' < 0 (eq. (12)/(13) with the gap
/// h' = min(h, max(gap at x, 0) + [`DEPENETRATION_PER_STEP`]·h), the gap at x measured along today's n), moves q and the
/// triangle's corners by PBD eq. (8)–(9) with inverse masses `w`, gradients ∇q = side·n and ∇p_i = −side·b_i·n
/// (n held constant, see the module docs), scaled by the stiffness `k` ∈ [0, 1]. Skips contacts with an index
/// out of range, a triangle that turned over since the start of the step (its normal at `x` opposes the one at
/// `p`), a degenerate triangle, zero total weight, or a vertex that projects more than [`OUTSIDE_TOLERANCE`]
/// outside its triangle.
pub fn project_self_contacts(
    p: &mut [Vec3],
    x: &[Vec3],
    w: &[f32],
    triangles: &[[u32; 3]],
    contacts: &[SelfContact],
    thickness: f32,
    k: f32,
) {
    project_self_contacts_on(&mut Slices { p, w }, x, triangles, contacts, thickness, k);
}

/// [`project_self_contacts`] on the predictions and inverse masses of `particles`.
#[inline(always)]
pub fn project_self_contacts_on(
    particles: &mut impl ParticleAccess,
    x: &[Vec3],
    triangles: &[[u32; 3]],
    contacts: &[SelfContact],
    thickness: f32,
    k: f32,
) {
    if k.is_nan() || k <= 0.0 {
        return;
    }
    let k = k.min(1.0);
    let n = particles.len().min(x.len());
    for c in contacts {
        let Some(&tri) = triangles.get(c.triangle as usize) else { continue };
        let q = c.vertex as usize;
        let [i1, i2, i3] = tri.map(|i| i as usize);
        if tri.contains(&c.vertex) || [q, i1, i2, i3].iter().any(|&i| i >= n) {
            continue;
        }
        let (pq, p1, p2, p3) = (particles.p(q), particles.p(i1), particles.p(i2), particles.p(i3));
        let Some(normal) = unit_normal([p1, p2, p3]) else { continue };
        let g = if c.side < 0.0 { -normal } else { normal };
        let start_gap = (x[q] - x[i1]).dot(g);
        let gap = thickness.min(start_gap.max(0.0) + DEPENETRATION_PER_STEP * thickness);
        let value = (pq - p1).dot(g) - gap;
        if value.is_nan() || value >= 0.0 {
            continue; // satisfied
        }
        if (x[i2] - x[i1]).cross(x[i3] - x[i1]).dot(normal) < 0.0 {
            // the triangle turned over since the start of the step: `side` refers to its old orientation
            continue;
        }
        let Some(b) = barycentric(pq, [p1, p2, p3]) else { continue };
        if b.min_element() < -OUTSIDE_TOLERANCE {
            // the vertex has moved off the triangle since detection: the plane beyond its edges is not the
            // cloth, and pushing against it could throw the vertex far (a tumbling fold)
            continue;
        }
        let b = b.max(Vec3::ZERO);
        let b = b / b.element_sum(); // ≥ 1 before dividing: the clamp only drops negative parts of Σ b = 1
        let (wq, w1, w2, w3) = (particles.w(q), particles.w(i1), particles.w(i2), particles.w(i3));
        let wsum = wq + w1 * b.x * b.x + w2 * b.y * b.y + w3 * b.z * b.z;
        if wsum.is_nan() || wsum <= 0.0 {
            continue;
        }
        // Eq. (8)–(9): Δp_j = −k·s·w_j·∇_j C with s = C / Σ w_j |∇_j C|²; value < 0, so q moves along g.
        let s = k * value / wsum * g;
        particles.shift(q, -(wq * s));
        particles.shift(i1, w1 * b.x * s);
        particles.shift(i2, w2 * b.y * s);
        particles.shift(i3, w3 * b.z * s);
    }
}

/// Orders `contacts` (sorted by vertex, then triangle) for two threads: a plane across the axis along which
/// the contacts' vertices (at `positions`) spread most, through their mean, splits the cloth in two; first come
/// the contacts whose vertex and triangle corners all lie below the plane, then those all above it, then the
/// rest, each group in the order it had. Returns where the second and the third group start. The first two
/// groups share no particle, so they can be projected at the same time (the rest follows alone), and the order
/// is a function of the contacts and positions only, not of the thread count. Contacts join particles closer
/// than the detection band, so few straddle the plane. `scratch` (each contact with its group) is reused: no
/// allocation once grown.
pub fn split_in_halves(
    contacts: &mut [SelfContact],
    positions: &[Vec3],
    triangles: &[[u32; 3]],
    scratch: &mut Vec<(u8, SelfContact)>,
) -> [usize; 2] {
    let at = |i: u32| positions.get(i as usize).copied().filter(|p| p.is_finite());
    let (lo, hi, sum, count) = contacts
        .iter()
        .filter_map(|c| at(c.vertex))
        .fold((Vec3::INFINITY, Vec3::NEG_INFINITY, Vec3::ZERO, 0), |(lo, hi, sum, n), p| {
            (lo.min(p), hi.max(p), sum + p, n + 1)
        });
    if count == 0 {
        return [contacts.len(); 2];
    }
    let extent = hi - lo;
    let axis = if extent.x >= extent.y.max(extent.z) {
        0
    } else if extent.y >= extent.z {
        1
    } else {
        2
    };
    let plane = sum[axis] / count as f32;
    let group = |c: &SelfContact| {
        let corners = triangles.get(c.triangle as usize).copied().unwrap_or([u32::MAX; 3]);
        let side = [c.vertex, corners[0], corners[1], corners[2]].map(|i| at(i).map(|p| p[axis] >= plane));
        if side.iter().all(|&s| s == Some(false)) {
            0
        } else if side.iter().all(|&s| s == Some(true)) {
            1
        } else {
            2
        }
    };
    // each contact's group, computed once; then the groups copied back one after another, each in its order
    scratch.clear();
    scratch.extend(contacts.iter().map(|c| (group(c), *c)));
    let (mut ends, mut next) = ([0; 2], 0);
    for g in 0..3 {
        for &(_, c) in scratch.iter().filter(|(of, _)| *of == g) {
            contacts[next] = c;
            next += 1;
        }
        if let Some(end) = ends.get_mut(g as usize) {
            *end = next;
        }
    }
    ends
}

/// Number of (vertex, triangle not containing it) pairs where the vertex passes through the triangle while all
/// move linearly from `x_before` to `x_after`: the exact signed volume
/// (q(s) − p1(s))·((p2(s) − p1(s))×(p3(s) − p1(s))) changes sign over s ∈ [0, 1], and at the crossing time
/// (found by bisection) q(s) projects into the triangle at s (barycentric tolerance 1e-5, so a pass exactly
/// through an edge counts for both triangles). A vertex that passes through the plane an even number of times
/// is not counted; with three crossings only the one bisection finds is checked. Uses a [`SpatialHash`]
/// internally; allocates it per call, so it is meant for tests and diagnostics.
pub fn count_crossings(x_before: &[Vec3], x_after: &[Vec3], triangles: &[[u32; 3]]) -> usize {
    let mut hash = SpatialHash::default();
    hash.rebuild_swept(x_before, x_after, triangles, 0.0, false);
    let mut count = 0;
    for (v, (&qb, &qa)) in x_before.iter().zip(x_after).enumerate() {
        if !(qb.is_finite() && qa.is_finite()) {
            continue;
        }
        hash.for_each_in_box(qb.min(qa), qa.max(qb), |t| {
            let Some(tri) = triangles.get(t as usize) else { return };
            if tri.contains(&(v as u32)) {
                return;
            }
            if let (Some(tb), Some(ta)) = (corners(x_before, tri), corners(x_after, tri))
                && crosses(qb, qa, tb, ta)
            {
                count += 1;
            }
        });
    }
    count
}

/// Number of (mesh edge, triangle sharing no vertex with it) pairs where the edge pierces the triangle at
/// `positions`: the cloth passes through itself there (a tangle the vertex–triangle contacts can no longer
/// undo). The edge's ends lie strictly on opposite sides of the triangle's plane and the crossing point projects
/// into the triangle (barycentrics ≥ 0). Each edge counts once, whichever triangles share it. Allocates; meant
/// for tests and reports.
pub fn count_intersections(positions: &[Vec3], triangles: &[[u32; 3]]) -> usize {
    let mut hash = SpatialHash::default();
    hash.rebuild(positions, triangles);
    let mut count = 0;
    for [a, b] in unique_edges(triangles) {
        let (Some(&pa), Some(&pb)) = (positions.get(a as usize), positions.get(b as usize)) else { continue };
        if !(pa.is_finite() && pb.is_finite()) {
            continue;
        }
        hash.for_each_in_box(pa.min(pb), pa.max(pb), |t| {
            let Some(tri) = triangles.get(t as usize) else { return };
            if tri.contains(&a) || tri.contains(&b) {
                return;
            }
            if corners(positions, tri).is_some_and(|corners| pierces(pa, pb, corners)) {
                count += 1;
            }
        });
    }
    count
}

/// Whether the segment a–b pierces the triangle `corners` (see [`count_intersections`]).
fn pierces(a: Vec3, b: Vec3, corners: [Vec3; 3]) -> bool {
    let normal = (corners[1] - corners[0]).cross(corners[2] - corners[0]);
    let (da, db) = ((a - corners[0]).dot(normal), (b - corners[0]).dot(normal));
    ((da < 0.0 && db > 0.0) || (da > 0.0 && db < 0.0))
        && barycentric(a.lerp(b, da / (da - db)), corners).is_some_and(|b| b.min_element() >= 0.0)
}

/// Every edge of `triangles` once, as (lower, higher) vertex pairs in increasing order.
fn unique_edges(triangles: &[[u32; 3]]) -> Vec<[u32; 2]> {
    let mut edges: Vec<[u32; 2]> = triangles
        .iter()
        .flat_map(|t| [sorted_edge(t[0], t[1]), sorted_edge(t[1], t[2]), sorted_edge(t[2], t[0])])
        .collect();
    edges.sort_unstable();
    edges.dedup();
    edges
}

/// The edge (a, b) with its lower vertex first.
fn sorted_edge(a: u32, b: u32) -> [u32; 2] {
    [a.min(b), a.max(b)]
}

/// Whether the vertex moving qb → qa passes through the triangle moving tb → ta (see [`count_crossings`]).
fn crosses(qb: Vec3, qa: Vec3, tb: [Vec3; 3], ta: [Vec3; 3]) -> bool {
    let at = |s: f32| (qb.lerp(qa, s), [0, 1, 2].map(|i| tb[i].lerp(ta[i], s)));
    let volume = |(q, t): (Vec3, [Vec3; 3])| (q - t[0]).dot((t[1] - t[0]).cross(t[2] - t[0]));
    let (f0, f1) = (volume(at(0.0)), volume(at(1.0)));
    if !((f0 < 0.0 && f1 > 0.0) || (f0 > 0.0 && f1 < 0.0)) {
        return false;
    }
    let (mut lo, mut hi) = (0.0f32, 1.0f32);
    for _ in 0..CROSSING_BISECTIONS {
        let mid = 0.5 * (lo + hi);
        if (volume(at(mid)) > 0.0) == (f0 > 0.0) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let (q, t) = at(0.5 * (lo + hi));
    barycentric(q, t).is_some_and(|b| b.min_element() >= -CROSSING_TOLERANCE)
}

/// The three corner positions of `tri`, or `None` if an index is out of range.
#[inline]
fn corners(positions: &[Vec3], tri: &[u32; 3]) -> Option<[Vec3; 3]> {
    Some([*positions.get(tri[0] as usize)?, *positions.get(tri[1] as usize)?, *positions.get(tri[2] as usize)?])
}

/// Bounding box of `tri` at `start` and `end`, grown by `margin` + [`BOX_SLACK`]·(largest extent), or
/// [`EMPTY_BOX`] if an index is out of range or a position is not finite.
fn swept_bounds(start: &[Vec3], end: &[Vec3], tri: &[u32; 3], margin: f32) -> [Vec3; 2] {
    let (Some(a), Some(b)) = (corners(start, tri), corners(end, tri)) else { return EMPTY_BOX };
    if !a.iter().chain(&b).all(|v| v.is_finite()) {
        return EMPTY_BOX;
    }
    let lo = a[0].min(a[1]).min(a[2]).min(b[0]).min(b[1]).min(b[2]);
    let hi = a[0].max(a[1]).max(a[2]).max(b[0]).max(b[1]).max(b[2]);
    let pad = margin + BOX_SLACK * (hi - lo).max_element();
    [lo - pad, hi + pad]
}

/// Whether box `b` overlaps [`min`, `max`].
#[inline]
#[cfg(test)]
fn overlaps(b: &[Vec3; 2], min: Vec3, max: Vec3) -> bool {
    b[0].cmple(max).all() && b[1].cmpge(min).all()
}

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
    use super::narrow::sweep_contact;
    use super::*;
    use bevy::tasks::{ComputeTaskPool, TaskPoolBuilder};

    /// A tiny linear congruential generator (Knuth's MMIX constants).
    struct Lcg(u64);

    impl Lcg {
        /// Uniform in [lo, hi).
        fn range(&mut self, lo: f32, hi: f32) -> f32 {
            self.0 = self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            lo + (hi - lo) * ((self.0 >> 40) as f32 / (1u64 << 24) as f32)
        }

        fn vec(&mut self, amplitude: f32) -> Vec3 {
            Vec3::new(
                self.range(-amplitude, amplitude),
                self.range(-amplitude, amplitude),
                self.range(-amplitude, amplitude),
            )
        }
    }

    /// Appends an n×n vertex grid in the xy plane at `origin` with spacing `d`.
    pub(super) fn grid(n: u32, d: f32, origin: Vec3, pos: &mut Vec<Vec3>, tris: &mut Vec<[u32; 3]>) {
        let base = pos.len() as u32;
        for j in 0..n {
            for i in 0..n {
                pos.push(origin + Vec3::new(i as f32 * d, j as f32 * d, 0.0));
            }
        }
        for j in 0..n - 1 {
            for i in 0..n - 1 {
                let v = base + j * n + i;
                tris.push([v, v + 1, v + n + 1]);
                tris.push([v, v + n + 1, v + n]);
            }
        }
    }

    /// Two crumpled 10×10 sheets, the upper one falling through the lower one: (x, p, triangles).
    fn crumpled_pair(seed: u64) -> (Vec<Vec3>, Vec<Vec3>, Vec<[u32; 3]>) {
        let (mut x, mut tris) = (Vec::new(), Vec::new());
        grid(10, 0.1, Vec3::ZERO, &mut x, &mut tris);
        grid(10, 0.1, Vec3::new(0.03, 0.02, 0.06), &mut x, &mut tris);
        let mut rng = Lcg(seed);
        for v in &mut x {
            *v += rng.vec(0.03);
        }
        let p = x
            .iter()
            .enumerate()
            .map(|(i, &v)| v + rng.vec(0.04) - Vec3::Z * if i >= 100 { 0.1 } else { 0.0 })
            .collect();
        (x, p, tris)
    }

    fn sorted(mut c: Vec<SelfContact>) -> Vec<(u32, u32, i32)> {
        c.sort_by_key(|c| (c.vertex, c.triangle));
        c.iter().map(|c| (c.vertex, c.triangle, c.side as i32)).collect()
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
    fn hash_matches_brute_force() {
        let h = 0.02;
        let mut total = 0;
        for seed in 1..6 {
            let (x, p, tris) = crumpled_pair(seed);
            let mut found = Vec::new();
            find_self_contacts(&mut SelfContactSearch::default(), &x, &p, &tris, h, false, &mut found);
            // the slices shared by threads give the same contacts in the same order
            ComputeTaskPool::get_or_init(|| TaskPoolBuilder::new().num_threads(2).build());
            let mut in_parallel = Vec::new();
            find_self_contacts(&mut SelfContactSearch::default(), &x, &p, &tris, h, true, &mut in_parallel);
            assert_eq!(in_parallel, found, "seed {seed}: the parallel search differs");

            let (mut brute, mut unfiltered) = (Vec::new(), Vec::new());
            for v in 0..x.len() {
                let (lo, hi) = (x[v].min(p[v]), x[v].max(p[v]));
                for (t, tri) in tris.iter().enumerate() {
                    if tri.contains(&(v as u32)) {
                        continue;
                    }
                    let (Some(xt), Some(pt)) = (corners(&x, tri), corners(&p, tri)) else { panic!("bad fixture") };
                    if let Some(side) = sweep_contact(x[v], p[v], xt, pt, h) {
                        let c = SelfContact { vertex: v as u32, triangle: t as u32, side };
                        unfiltered.push(c);
                        if overlaps(&swept_bounds(&x, &p, tri, h), lo, hi) {
                            brute.push(c);
                        }
                    }
                }
            }
            assert!(found.len() > 20, "seed {seed}: only {} contacts", found.len());
            // in brute force's order (by vertex, then triangle), not the order the hash visited cells in
            let pairs = |c: &[SelfContact]| c.iter().map(|c| (c.vertex, c.triangle)).collect::<Vec<_>>();
            assert_eq!(pairs(&found), pairs(&brute), "seed {seed}: order");
            let found = sorted(found);
            assert_eq!(found, sorted(brute), "seed {seed}");
            // Without the box prefilter only contacts of strongly rotating triangles (where the linear
            // interpolation of the distance is poor) are added; this data is deliberately rough.
            let unfiltered = sorted(unfiltered);
            assert!(found.iter().all(|c| unfiltered.contains(c)));
            assert!(
                unfiltered.len() - found.len() <= found.len() / 100,
                "seed {seed}: {} vs {}",
                unfiltered.len(),
                found.len()
            );
            total += found.len();
        }
        assert!(total > 100, "{total}");
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

    /// A static triangle in z = 0 (corners 0–2) and a vertex 3 above its centre.
    fn static_triangle() -> Vec<Vec3> {
        vec![Vec3::ZERO, Vec3::X, Vec3::Y, Vec3::new(0.25, 0.25, 0.1)]
    }

    const TRI: [[u32; 3]; 1] = [[0, 1, 2]];

    #[test]
    fn falling_vertex_is_kept_above_static_triangle() {
        let h = 0.01;
        let x = static_triangle();
        let mut p = x.clone();
        p[3] = Vec3::new(0.3, 0.2, -0.2);
        let mut contacts = Vec::new();
        find_self_contacts(&mut SelfContactSearch::default(), &x, &p, &TRI, h, false, &mut contacts);
        assert_eq!(contacts, vec![SelfContact { vertex: 3, triangle: 0, side: 1.0 }]);
        let w = [0.0, 0.0, 0.0, 1.0];
        project_self_contacts(&mut p, &x, &w, &TRI, &contacts, h, 1.0);
        assert!(p[3].z >= h - 1e-5, "{}", p[3].z);
        assert!((p[3].z - h).abs() < 1e-5);
        assert_eq!(&p[..3], &x[..3]);
        // Satisfied now: a second pass does nothing.
        let before = p.clone();
        project_self_contacts(&mut p, &x, &w, &TRI, &contacts, h, 1.0);
        assert_eq!(p, before);
    }

    #[test]
    fn vertex_in_band_from_below_is_pushed_down_a_quarter_thickness_per_step() {
        let h = 0.01;
        let mut x = static_triangle();
        x[3].z = -0.005;
        let mut p = x.clone();
        p[3].z = 0.003;
        let mut contacts = Vec::new();
        find_self_contacts(&mut SelfContactSearch::default(), &x, &p, &TRI, h, false, &mut contacts);
        assert_eq!(contacts, vec![SelfContact { vertex: 3, triangle: 0, side: -1.0 }]);
        // it started 0.5 h below, inside the band: this step holds it 0.75 h below, not h
        let gap = 0.005 + DEPENETRATION_PER_STEP * h;
        let w = [1.0; 4];
        let depth = |p: &[Vec3]| -> f32 {
            let Some(n) = unit_normal([p[0], p[1], p[2]]) else { panic!("degenerate after projection") };
            (p[3] - p[0]).dot(n)
        };
        project_self_contacts(&mut p, &x, &w, &TRI, &contacts, h, 1.0);
        assert!((depth(&p) + gap).abs() < 1e-5, "{} below, not {gap}", -depth(&p));
        assert!(p[0].z > 0.0 && p[1].z > 0.0 && p[2].z > 0.0, "the triangle moves up");
        // the next step, starting there, wins another quarter and the one after reaches h, where it stays
        for expected in [gap + DEPENETRATION_PER_STEP * h, h, h] {
            let x = p.clone();
            project_self_contacts(&mut p, &x, &w, &TRI, &contacts, h, 1.0);
            assert!((depth(&p) + expected).abs() < 1e-5, "{} below, not {expected}", -depth(&p));
        }
        // Half stiffness corrects half the violation.
        let mut half = x.clone();
        half[3].z = 0.003;
        project_self_contacts(&mut half, &x, &[0.0, 0.0, 0.0, 1.0], &TRI, &contacts, h, 0.5);
        assert!((half[3].z - (0.003 - 0.5 * (0.003 + gap))).abs() < 1e-6, "{}", half[3].z);
    }

    #[test]
    fn a_vertex_squeezed_between_two_layers_gains_no_speed() {
        // a vertex 0.3 h above one triangle and 0.3 h below another: both contacts cannot hold. Pushed to h
        // alternately it would leave each step at up to h/Δt; the depenetration limit keeps it within a quarter
        // thickness of where it started, iteration after iteration
        let h = 0.01;
        let mut x = static_triangle();
        x[3].z = 0.003;
        x.extend([Vec3::new(0.0, 0.0, 0.006), Vec3::new(1.0, 0.0, 0.006), Vec3::new(0.0, 1.0, 0.006)]);
        let tris = [[0, 1, 2], [4, 5, 6]];
        let contacts =
            [SelfContact { vertex: 3, triangle: 0, side: 1.0 }, SelfContact { vertex: 3, triangle: 1, side: -1.0 }];
        let w = [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0];
        let mut p = x.clone();
        for _ in 0..20 {
            project_self_contacts(&mut p, &x, &w, &tris, &contacts, h, 1.0);
            // (without the limit: pushed up to h by one and on to 0.4 h below the other, 0.7 h in all)
            assert!((p[3].z - x[3].z).abs() <= 0.3 * h, "moved {}", p[3].z - x[3].z);
        }
    }

    #[test]
    fn a_triangle_that_turned_over_pushes_nothing() {
        // side +1 was recorded above the triangle at x; during the step the triangle turned over about its p1–p2
        // edge and the vertex is still above it: against the new normal it reads 5 cm deep, and pushing it "out"
        // would throw it through the cloth
        let h = 0.01;
        let x = static_triangle();
        let mut p = vec![Vec3::ZERO, Vec3::X, Vec3::NEG_Y, Vec3::new(0.25, -0.25, 0.05)];
        let contacts = [SelfContact { vertex: 3, triangle: 0, side: 1.0 }];
        let before = p.clone();
        project_self_contacts(&mut p, &x, &[1.0; 4], &TRI, &contacts, h, 1.0);
        assert_eq!(p, before);
        // the same end state reached without turning over (x = p) is a contact that is pushed
        let x_end = before.clone();
        project_self_contacts(&mut p, &x_end, &[1.0; 4], &TRI, &contacts, h, 1.0);
        assert!(p[3].distance(before[3]) > 0.01, "{}", p[3]);
    }

    #[test]
    fn projection_conserves_momentum_with_unequal_masses() {
        let h = 0.02;
        let p0 = vec![
            Vec3::new(0.0, 0.0, 0.1),
            Vec3::new(1.0, 0.2, 0.0),
            Vec3::new(0.1, 0.9, -0.1),
            Vec3::new(0.3, 0.3, -0.05),
        ];
        let w = [0.5, 2.0, 1.0, 0.25];
        let contacts = [SelfContact { vertex: 3, triangle: 0, side: 1.0 }];
        let mut p = p0.clone();
        project_self_contacts(&mut p, &p0, &w, &TRI, &contacts, h, 1.0);
        let moved: f32 = p.iter().zip(&p0).map(|(a, b)| a.distance(*b)).sum();
        assert!(moved > 0.05, "{moved}");
        let linear: Vec3 = p.iter().zip(&p0).zip(&w).map(|((a, b), w)| (*a - *b) / w).sum();
        assert!(linear.length() < 1e-5, "{linear}");
        let angular: Vec3 = p.iter().zip(&p0).zip(&w).map(|((a, b), w)| b.cross(*a - *b) / w).sum();
        assert!(angular.length() < 1e-5, "{angular}");
    }

    #[test]
    fn no_allocation_after_warm_up() {
        let (x, p, tris) = crumpled_pair(3);
        ComputeTaskPool::get_or_init(|| TaskPoolBuilder::new().num_threads(2).build());
        let mut search = SelfContactSearch::default();
        let mut out = Vec::new();
        find_self_contacts(&mut search, &x, &p, &tris, 0.02, true, &mut out);
        let (fingerprint, capacity, first) = (search.capacity_fingerprint(), out.capacity(), out.clone());
        assert!(fingerprint != 0 && !first.is_empty());
        find_self_contacts(&mut search, &x, &p, &tris, 0.02, true, &mut out);
        assert_eq!(search.capacity_fingerprint(), fingerprint);
        assert_eq!(out.capacity(), capacity);
        assert_eq!(out, first);
    }

    #[test]
    fn split_halves_share_no_particle_and_keep_every_contact() {
        for seed in 1..6 {
            let (x, p, tris) = crumpled_pair(seed);
            let mut found = Vec::new();
            find_self_contacts(&mut SelfContactSearch::default(), &x, &p, &tris, 0.02, false, &mut found);
            let before = sorted(found.clone());
            let [a, b] = split_in_halves(&mut found, &x, &tris, &mut Vec::new());
            assert!(a <= b && b <= found.len());
            assert_eq!(sorted(found.clone()), before, "seed {seed}: the split lost or changed contacts");
            let particles = |cs: &[SelfContact]| -> std::collections::HashSet<u32> {
                cs.iter().flat_map(|c| std::iter::once(c.vertex).chain(tris[c.triangle as usize])).collect()
            };
            let (first, second) = (particles(&found[..a]), particles(&found[a..b]));
            assert!(first.is_disjoint(&second), "seed {seed}: the halves share a particle");
            // each group keeps the detection order (vertex, then triangle)
            for group in [&found[..a], &found[a..b], &found[b..]] {
                assert!(group.windows(2).all(|w| (w[0].vertex, w[0].triangle) < (w[1].vertex, w[1].triangle)));
            }
            // both halves get work, and few contacts straddle the plane
            assert!(a > 0 && b > a, "seed {seed}: halves {a}, {}", b - a);
            assert!(found.len() - b < found.len() / 2, "seed {seed}: {} of {} straddle", found.len() - b, found.len());
        }
        assert_eq!(split_in_halves(&mut [], &[], &[], &mut Vec::new()), [0, 0]);
    }

    #[test]
    fn a_vertex_keeps_only_its_nearest_contacts() {
        // vertex 0 over a stack of 20 small triangles 1 mm apart, all within the band of 2 cm; vertex 1 over one
        let (mut x, mut tris) = (vec![Vec3::new(0.2, 0.2, 0.0005), Vec3::new(5.2, 0.2, 0.0005)], Vec::new());
        for (layer, dz) in (0..20).map(|k| (k, 0.001 * k as f32 - 0.0095)) {
            let base = x.len() as u32;
            let shift = if layer == 0 { Vec3::X * 5.0 } else { Vec3::ZERO };
            x.extend([Vec3::new(0.0, 0.0, dz), Vec3::new(1.0, 0.0, dz), Vec3::new(0.0, 1.0, dz)].map(|p| p + shift));
            tris.push([base, base + 1, base + 2]);
        }
        let mut found = Vec::new();
        find_self_contacts(&mut SelfContactSearch::default(), &x, &x, &tris, 0.02, false, &mut found);
        let of = |v: u32| found.iter().filter(|c| c.vertex == v).map(|c| c.triangle).collect::<Vec<_>>();
        // layer k is at z = 0.001 k − 0.0095, the vertex at 0.0005: the nearest are layers 10, 9, 11, 8, 12, …
        let mut nearest: Vec<u32> = (1..20).collect();
        nearest.sort_by(|&a, &b| {
            let d = |k: u32| (0.001 * k as f32 - 0.0095 - 0.0005).abs();
            d(a).total_cmp(&d(b)).then(a.cmp(&b))
        });
        nearest.truncate(MAX_CONTACTS_PER_VERTEX);
        nearest.sort();
        assert_eq!(of(0), nearest);
        assert_eq!(of(1), [0], "a vertex under the limit keeps its contacts");
        let mut runs = vec![(SelfContact { vertex: 3, triangle: 1, side: 1.0 }, 0.5); 3];
        keep_nearest(&mut runs, 4);
        assert_eq!(runs.len(), 3);
    }

    #[test]
    fn a_vertex_in_a_clump_tests_at_most_the_candidate_limit_on_any_thread_count() {
        // 1,200 small triangles stacked 10 µm apart: every corner has all the other triangles within its band
        let (mut x, mut tris) = (Vec::new(), Vec::new());
        for k in 0..1200 {
            let (z, base) = (1e-5 * k as f32, x.len() as u32);
            x.extend([Vec3::new(0.0, 0.0, z), Vec3::new(0.01, 0.0, z), Vec3::new(0.0, 0.01, z)]);
            tris.push([base, base + 1, base + 2]);
        }
        ComputeTaskPool::get_or_init(|| TaskPoolBuilder::new().num_threads(2).build());
        let results: Vec<_> = [false, true]
            .map(|parallel| {
                let (mut search, mut found) = (SelfContactSearch::default(), Vec::new());
                find_self_contacts(&mut search, &x, &x, &tris, 0.02, parallel, &mut found);
                let slices = search.slices.buffers();
                let tested: Vec<u32> = slices.iter().flat_map(|s| s.lock().unwrap().tested.clone()).collect();
                assert_eq!(tested.len(), x.len());
                assert!(tested.iter().all(|&c| c <= MAX_CANDIDATES_PER_VERTEX));
                assert!(tested.contains(&MAX_CANDIDATES_PER_VERTEX), "the clump reaches the limit");
                assert!(found.iter().filter(|c| c.vertex == 0).count() == MAX_CONTACTS_PER_VERTEX);
                (found, tested)
            })
            .into();
        assert_eq!(results[0], results[1]);
    }

    #[test]
    fn count_crossings_detects_passes_only() {
        let x = static_triangle();
        let mut through = x.clone();
        through[3].z = -0.1;
        assert_eq!(count_crossings(&x, &through, &TRI), 1);
        let mut beside = x.clone();
        beside[3] = Vec3::new(0.9, 0.9, -0.1); // crosses the plane outside the triangle
        assert_eq!(count_crossings(&x, &beside, &TRI), 0);
        let mut above = x.clone();
        above[3].z = 0.001;
        assert_eq!(count_crossings(&x, &above, &TRI), 0);
        // The triangle moving up through a resting vertex.
        let mut lifted = x.clone();
        for v in &mut lifted[..3] {
            v.z += 0.3;
        }
        assert_eq!(count_crossings(&x, &lifted, &TRI), 1);
    }

    #[test]
    fn count_crossings_matches_brute_force() {
        let (x, p, tris) = crumpled_pair(11);
        let mut brute = 0;
        for v in 0..x.len() {
            for tri in &tris {
                if let (false, Some(tb), Some(ta)) = (tri.contains(&(v as u32)), corners(&x, tri), corners(&p, tri))
                    && crosses(x[v], p[v], tb, ta)
                {
                    brute += 1;
                }
            }
        }
        assert!(brute > 20, "{brute}");
        assert_eq!(count_crossings(&x, &p, &tris), brute);
    }

    #[test]
    fn count_intersections_finds_a_sheet_threaded_through_another() {
        // two 6×6 sheets, the second stood upright across the first: each of its edges crossing the first's
        // plane inside it pierces one triangle there
        let (mut x, mut tris) = (Vec::new(), Vec::new());
        grid(6, 0.1, Vec3::ZERO, &mut x, &mut tris);
        assert_eq!(count_intersections(&x, &tris), 0, "a flat sheet");
        let flat = tris.len();
        grid(6, 0.1, Vec3::new(0.0, 0.0, -0.25), &mut x, &mut tris);
        for v in &mut x[36..] {
            // rotate the second sheet upright (y → z) and move it to x = 0.23 (off every vertex and edge)
            *v = Vec3::new(0.23, v.x + 0.005, v.y - 0.247);
        }
        let crossing = count_intersections(&x, &tris);
        // its edges across z = 0 (the vertical ones at y = 0.005..0.405 inside the first sheet, and diagonals)
        // each pierce one triangle of it: checked against brute force
        let mut brute = 0;
        for [a, b] in unique_edges(&tris) {
            for tri in &tris {
                if tri.contains(&a) || tri.contains(&b) {
                    continue;
                }
                if pierces(x[a as usize], x[b as usize], corners(&x, tri).unwrap()) {
                    brute += 1;
                }
            }
        }
        assert!(crossing >= 5, "{crossing}");
        assert_eq!(crossing, brute);
        assert_eq!(count_intersections(&x[..36], &tris[..flat]), 0);
    }

    #[test]
    fn projection_resolves_sheet_falling_through_static_sheet() {
        let h = 0.01;
        let (mut x, mut tris) = (Vec::new(), Vec::new());
        grid(20, 0.05, Vec3::ZERO, &mut x, &mut tris);
        grid(16, 0.05, Vec3::new(0.11, 0.12, 0.03), &mut x, &mut tris);
        let w: Vec<f32> = (0..x.len()).map(|i| if i < 400 { 0.0 } else { 1.0 }).collect();
        let mut rng = Lcg(5);
        let mut p: Vec<Vec3> =
            x.iter().zip(&w).map(|(&v, &w)| if w > 0.0 { v + rng.vec(0.005) - 0.045 * Vec3::Z } else { v }).collect();
        // 16×16 falling vertices through static triangles + 15×15 static vertices under falling triangles, each
        // 1.5 cm (1.5 h) through: a fall of half a triangle in one projection, more than a substep brings.
        assert_eq!(count_crossings(&x, &p, &tris), 16 * 16 + 15 * 15);
        let mut contacts = Vec::new();
        find_self_contacts(&mut SelfContactSearch::default(), &x, &p, &tris, h, false, &mut contacts);
        assert!(contacts.len() >= 16 * 16 + 15 * 15, "{}", contacts.len());
        for _ in 0..4 {
            project_self_contacts(&mut p, &x, &w, &tris, &contacts, h, 1.0);
        }
        assert_eq!(count_crossings(&x, &p, &tris), 0);
        assert!(p[400..].iter().all(|v| v.z >= h - 1e-4), "{}", p[400..].iter().map(|v| v.z).fold(f32::MAX, f32::min));
    }
}
