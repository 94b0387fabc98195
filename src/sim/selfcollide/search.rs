//! Finding the self contacts of a step (§4.3): normal-cone culling, the spatial hash's candidates, the narrow
//! phase, and the per-vertex bounds on candidates and contacts.

use bevy::math::Vec3;

use super::SelfContact;
use super::hash::{BoxQuery, EMPTY_BOX, SpatialHash, swept_bounds};
use super::narrow::{Found, NarrowPhase};
use super::patches::Patches;
use crate::sim::parallel::SliceOutputs;

/// Vertices per query slice of [`find_self_contacts`] at least.
const MIN_QUERY_SLICE: usize = 64;

/// The spatial hash of [`find_self_contacts`] and the contacts each vertex query slice found, reused every step.
#[derive(Clone, Debug, Default)]
pub struct SelfContactSearch {
    /// Test every pair whose boxes overlap, with no normal-cone culling (for comparisons).
    pub full_search: bool,
    /// The group of each vertex (the cloth of a mesh made of several); when not empty, only pairs whose vertex and
    /// triangle's first corner lie in different groups are tested (cloth against cloth).
    pub groups: Vec<u32>,
    /// Per group, when not empty: the band its own triangles' boxes are grown by (at most the search's band).
    /// A query from another group grows its box by the rest, so box overlap still finds every pair within the
    /// band, while a fine cloth next to a thick one does not grow its many small triangles into each other's
    /// cells (their pairs within the cloth are never tested anyway).
    pub group_bands: Vec<f32>,
    /// Per group: what its vertices' query boxes are grown by, the band less the thinnest other group's.
    group_growth: Vec<f32>,
    /// Per group: the box of its triangles' boxes in the hash.
    group_boxes: Vec<[Vec3; 2]>,
    pub(super) patches: Patches,
    /// Steps left to search without culling, after a step where culling skipped too little to pay for itself.
    unculled_steps: u32,
    hash: SpatialHash,
    slices: SliceOutputs<QuerySlice>,
    /// Per triangle, in a search made again ([`find_self_contacts_of_strayed`]): whether a corner strayed.
    strayed_triangles: Vec<bool>,
    /// The hash of a search made again, over its few triangles only (`again_triangles`), so the step's own stays
    /// as the step's search left it.
    again: SpatialHash,
    again_triangles: Vec<u32>,
    /// Scratch of [`few_strayed_against_every_triangle`]: the strayed vertices with their boxes, and the contacts.
    few_vertices: Vec<(u32, [Vec3; 2])>,
    few_found: Vec<Found>,
    /// Whether the last search in full culled: its triangles' swept boxes are then the patches', else the hash's.
    culled: bool,
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
    /// Calls `f` for every triangle the last [`find_self_contacts`] entered into its hash (all, or those the
    /// normal cones left) whose swept box comes within the band of the box [`min`, `max`] of a query from
    /// `group` (see [`Self::group_bands`]).
    pub fn for_each_triangle_in_box(&self, group: u32, min: Vec3, max: Vec3, f: impl FnMut(u32)) {
        let grow = self.group_growth.get(group as usize).copied().unwrap_or(0.0);
        self.hash.for_each_in_box(min - grow, max + grow, f);
    }

    /// Whether the box [`min`, `max`] of a query from `group`, grown like it, overlaps the triangles of another
    /// group at all (always, without groups): a query for which it does not finds nothing.
    pub fn reaches_another_group(&self, group: u32, min: Vec3, max: Vec3) -> bool {
        let grow = self.group_growth.get(group as usize).copied().unwrap_or(0.0);
        self.groups.is_empty() || reaches_another(&self.group_boxes, group, min - grow, max + grow)
    }

    /// Combines the capacities of all buffers; unchanged between two calls means nothing was (re)allocated.
    pub fn capacity_fingerprint(&self) -> usize {
        let slices = self.slices.buffers();
        slices.iter().filter_map(|slice| slice.lock().ok()).fold(
            self.hash.capacity_fingerprint().wrapping_mul(31).wrapping_add(slices.len())
                ^ self.patches.capacity_fingerprint().rotate_left(17)
                ^ (self.group_growth.capacity() << 8)
                ^ (self.group_boxes.capacity() << 24),
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
    search_pairs(search, (x, p, triangles), thickness, parallel, None, out);
}

/// [`find_self_contacts`] for the pairs a search made again within a step needs (`StepSweep`): those whose vertex
/// is `strayed` or whose triangle has a strayed corner. Every other pair kept to its rays, so the first search's
/// contacts still hold for it. Two small searches: the strayed vertices against the triangles near them, then the
/// other vertices near a strayed triangle against the strayed triangles alone. Fills `out` (cleared first),
/// ordered by vertex, then triangle.
///
/// [`StepSweep`]: super::StepSweep
#[allow(clippy::too_many_arguments)]
pub fn find_self_contacts_of_strayed(
    search: &mut SelfContactSearch,
    x: &[Vec3],
    p: &[Vec3],
    triangles: &[[u32; 3]],
    thickness: f32,
    parallel: bool,
    strays: Strays,
    out: &mut Vec<SelfContact>,
) {
    out.clear();
    let strayed = strays.strayed;
    let mut flags = std::mem::take(&mut search.strayed_triangles);
    flags.clear();
    let is_strayed = |v: u32| strayed.get(v as usize).copied().unwrap_or(false);
    flags.extend(triangles.iter().map(|tri| tri.iter().any(|&v| is_strayed(v))));
    let mesh = (x, p, triangles);
    if strayed.iter().filter(|&&s| s).count() <= FEW_STRAYED {
        few_strayed_against_every_triangle(search, mesh, thickness, strays, out);
    } else {
        search_pairs(search, mesh, thickness, parallel, Some(Strayed::Vertices(strayed)), out);
    }
    search_pairs(search, mesh, thickness, parallel, Some(Strayed::Triangles(strayed, &flags)), out);
    out.sort_unstable_by_key(|c| (c.vertex, c.triangle));
    search.strayed_triangles = flags;
}

/// The vertices a search made again is for ([`find_self_contacts_of_strayed`]).
#[derive(Clone, Copy, Debug)]
pub struct Strays<'a> {
    /// Per vertex: whether it left its ray in this substep.
    pub strayed: &'a [bool],
    /// Per vertex: whether it was swept again earlier in the step (its ray is not the one the step's search
    /// swept).
    pub reswept: &'a [bool],
    /// How far a vertex keeps to its ray, m: a triangle whose corners all keep to the rays of the step's search
    /// stays within that search's swept box grown by this.
    pub slack: f32,
}

/// At most this many strayed vertices are compared with every triangle's box directly, cheaper than a hash over
/// the triangles near them when those are spread over the cloth (a held row, the vertices under a few boxes).
const FEW_STRAYED: usize = 64;

/// The first search of [`find_self_contacts_of_strayed`] for a few strayed vertices: each triangle's swept box
/// against theirs, the pairs a hash over the triangles would report. Appends to `out`.
fn few_strayed_against_every_triangle(
    search: &mut SelfContactSearch,
    (x, p, triangles): (&[Vec3], &[Vec3], &[[u32; 3]]),
    thickness: f32,
    Strays { strayed, reswept, slack }: Strays,
    out: &mut Vec<SelfContact>,
) {
    let h = if thickness.is_finite() { thickness.max(0.0) } else { 0.0 };
    let n = x.len().min(p.len()).min(strayed.len());
    let SelfContactSearch { few_vertices: vertices, few_found: found, patches, hash, culled, .. } = search;
    // a triangle whose corners all keep to the step search's rays lies in that search's box grown by the slack,
    // kept from it; the others' boxes are swept again
    let kept = if *culled { patches.triangle_bounds() } else { hash.bounds() };
    let flag = |flags: &[bool], v: u32| flags.get(v as usize).copied().unwrap_or(true);
    let grow = if slack.is_finite() { slack.max(0.0) } else { f32::INFINITY };
    let bound_of = |t: usize, tri: &[u32; 3]| match kept.get(t) {
        Some(&[lo, hi])
            if lo.cmple(hi).all() && grow.is_finite() && !tri.iter().any(|&v| flag(strayed, v) || flag(reswept, v)) =>
        {
            [lo - grow, hi + grow]
        }
        _ => swept_bounds(x, p, tri, h),
    };
    vertices.clear();
    vertices.extend(
        (0..n)
            .filter(|&v| strayed[v] && x[v].is_finite() && p[v].is_finite())
            .map(|v| (v as u32, [x[v].min(p[v]), x[v].max(p[v])])),
    );
    let near = vertices.iter().map(|&(_, query)| query).fold(EMPTY_BOX, union);
    let mut narrow = NarrowPhase::new(x, p, triangles, h);
    found.clear();
    for (t, tri) in triangles.iter().enumerate() {
        let bound = bound_of(t, tri);
        if !boxes_overlap(bound, near) {
            continue;
        }
        for &(v, _) in vertices.iter().filter(|(v, query)| !tri.contains(v) && boxes_overlap(*query, bound)) {
            narrow.test(v, t as u32, found);
        }
    }
    narrow.flush(found);
    found.sort_unstable_by_key(|(c, _)| (c.vertex, c.triangle));
    keep_nearest(found, MAX_CONTACTS_PER_VERTEX);
    out.extend(found.iter().map(|(c, _)| *c));
}

/// One of the two searches of [`find_self_contacts_of_strayed`].
#[derive(Clone, Copy)]
enum Strayed<'a> {
    /// The strayed vertices (flagged) against the triangles near them.
    Vertices(&'a [bool]),
    /// The vertices not strayed (flagged: strayed) against the strayed triangles (flagged).
    Triangles(&'a [bool], &'a [bool]),
}

/// The box around the boxes `of` the flagged items.
fn box_of_flagged(flags: &[bool], of: impl Fn(usize) -> [Vec3; 2]) -> [Vec3; 2] {
    (0..flags.len()).filter(|&k| flags[k]).map(of).fold(EMPTY_BOX, union)
}

/// The box around two boxes.
fn union([a, b]: [Vec3; 2], [c, d]: [Vec3; 2]) -> [Vec3; 2] {
    [a.min(c), b.max(d)]
}

/// Whether two boxes overlap.
fn boxes_overlap([a, b]: [Vec3; 2], [c, d]: [Vec3; 2]) -> bool {
    a.cmple(d).all() && c.cmple(b).all()
}

/// The search of [`find_self_contacts`], appending to `out`; with `only`, one of the two of
/// [`find_self_contacts_of_strayed`].
fn search_pairs(
    search: &mut SelfContactSearch,
    (x, p, triangles): (&[Vec3], &[Vec3], &[[u32; 3]]),
    thickness: f32,
    parallel: bool,
    only: Option<Strayed>,
    out: &mut Vec<SelfContact>,
) {
    let h = if thickness.is_finite() { thickness.max(0.0) } else { 0.0 };
    let SelfContactSearch {
        full_search,
        groups,
        group_bands,
        group_growth,
        group_boxes,
        patches,
        unculled_steps,
        hash,
        slices,
        again,
        again_triangles,
        culled,
        ..
    } = search;
    let groups = &*groups;
    let group_of = |v: u32| groups.get(v as usize);
    let band_of = |t: usize| {
        let group = triangles.get(t).and_then(|tri| group_of(tri[0]));
        group.and_then(|&g| group_bands.get(g as usize)).map_or(h, |&b| within_band(b, h))
    };
    grow_queries(group_bands, h, group_growth);
    let growth_of = |v: usize| group_of(v as u32).and_then(|&g| group_growth.get(g as usize)).copied().unwrap_or(0.0);
    // a search made again tests only the few pairs near what strayed, which the cones would hardly thin out
    let cull = !*full_search && *unculled_steps == 0 && only.is_none();
    if only.is_none() {
        *culled = cull;
    }
    if cull {
        patches.update(x, p, triangles, band_of, parallel);
        if patches.needed_fraction() > CULLING_PAYS_BELOW {
            *unculled_steps = UNCULLED_STEPS;
        }
    } else if only.is_none() {
        *unculled_steps = unculled_steps.saturating_sub(1);
    }
    let patches = &*patches;
    let bound = |t: usize| match cull {
        true => patches.triangle_bounds().get(t).copied().unwrap_or(EMPTY_BOX),
        false => swept_bounds(x, p, &triangles[t], band_of(t)),
    };
    let query_box = |v: usize| {
        let grow = growth_of(v);
        [x[v].min(p[v]) - grow, x[v].max(p[v]) + grow]
    };
    let flagged = |flags: &[bool], k: usize| flags.get(k).copied().unwrap_or(false);
    // a search made again: the triangles near a strayed vertex, or the strayed triangles
    let near = match only {
        Some(Strayed::Vertices(vertices)) => box_of_flagged(vertices, query_box),
        Some(Strayed::Triangles(_, triangles)) => box_of_flagged(triangles, bound),
        None => EMPTY_BOX,
    };
    let include = |t: usize| {
        (!cull || patches.triangle_needed(t))
            && match only {
                Some(Strayed::Vertices(_)) => boxes_overlap(bound(t), near),
                Some(Strayed::Triangles(_, triangles)) => flagged(triangles, t),
                None => true,
            }
    };
    let query_needed = |v: usize, query: [Vec3; 2]| match only {
        Some(Strayed::Vertices(vertices)) => flagged(vertices, v),
        Some(Strayed::Triangles(vertices, _)) => !flagged(vertices, v) && boxes_overlap(query, near),
        None => true,
    };
    // a search made again enters its few triangles alone, numbered in `again_triangles`
    let hash = match only {
        None => {
            hash.rebuild_boxes(triangles.len(), parallel, bound, include);
            bound_groups(groups, triangles, hash.bounds(), group_boxes);
            &*hash
        }
        Some(_) => {
            again_triangles.clear();
            again_triangles.extend((0..triangles.len()).filter(|&t| include(t)).map(|t| t as u32));
            let of = |k: usize| again_triangles[k] as usize;
            again.rebuild_boxes(again_triangles.len(), parallel, |k| bound(of(k)), |_| true);
            &*again
        }
    };
    let numbered = (only.is_some()).then_some(&again_triangles[..]);
    let triangle_of = |k: u32| numbered.map_or(Some(k), |ids| ids.get(k as usize).copied());
    let group_boxes = &*group_boxes;
    let n = x.len().min(p.len());
    let found = slices.run(n, MIN_QUERY_SLICE, parallel, |vertices, slice| {
        let QuerySlice { queries, found, tested } = slice;
        found.clear();
        queries.clear();
        tested.clear();
        tested.resize(vertices.len(), 0);
        let first = vertices.start;
        queries.extend(vertices.filter_map(|v| {
            let (xq, pq) = (x[v], p[v]);
            let [lo, hi] = query_box(v);
            // a vertex away from every other cloth (most, where the cloths are apart) looks nothing up
            let needed = (!cull || patches.vertex_needed(v, lo, hi))
                && (groups.is_empty() || group_of(v as u32).is_some_and(|&g| reaches_another(group_boxes, g, lo, hi)))
                && query_needed(v, [lo, hi]);
            (needed && xq.is_finite() && pq.is_finite()).then(|| hash.query(lo, hi, v as u32)).flatten()
        }));
        // vertices whose rays start and end in the same cells look the hash up together
        queries.sort_unstable_by_key(|q| (q.cells[0].to_array(), q.cells[1].to_array(), q.id));
        let mut narrow = NarrowPhase::new(x, p, triangles, h);
        let group_of_triangle = |t: u32| triangles.get(t as usize).and_then(|tri| group_of(tri[0]));
        for group in queries.chunk_by(|a, b| a.cells == b.cells) {
            // queries all from one cloth pass over that cloth's triangles without comparing boxes
            let own =
                group.first().and_then(|q| group_of(q.id)).filter(|&g| group.iter().all(|q| group_of(q.id) == Some(g)));
            let skip = |k: u32| own.is_some() && triangle_of(k).and_then(group_of_triangle) == own;
            hash.for_each_overlap(group, skip, |v, k| {
                let Some(t) = triangle_of(k) else { return };
                if triangles.get(t as usize).is_some_and(|tri| !tri.contains(&v))
                    && (groups.is_empty() || group_of(v) != group_of(triangles[t as usize][0]))
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
        if let Ok(slice) = slice.get_mut() {
            out.extend(slice.found.iter().map(|(c, _)| *c));
        }
    }
}

/// Fills `growth` with each group's query growth: `h` less the smallest band of the other groups (0 for all
/// when `bands` has fewer than two groups' worth, or every band is `h`).
fn grow_queries(bands: &[f32], h: f32, growth: &mut Vec<f32>) {
    growth.clear();
    let (mut least, mut second, mut least_group) = (h, h, usize::MAX);
    for (g, &b) in bands.iter().enumerate() {
        let b = within_band(b, h);
        if b < least {
            (second, least, least_group) = (least, b, g);
        } else if b < second {
            second = b;
        }
    }
    growth.extend((0..bands.len()).map(|g| h - if g == least_group { second } else { least }));
}

/// Fills `boxes` with each group's box of its triangles' `bounds` (nothing without `groups`).
fn bound_groups(groups: &[u32], triangles: &[[u32; 3]], bounds: &[[Vec3; 2]], boxes: &mut Vec<[Vec3; 2]>) {
    boxes.clear();
    if groups.is_empty() {
        return;
    }
    for (tri, [lo, hi]) in triangles.iter().zip(bounds) {
        let Some(&g) = groups.get(tri[0] as usize) else { continue };
        if g as usize >= boxes.len() {
            boxes.resize(g as usize + 1, EMPTY_BOX);
        }
        let own = &mut boxes[g as usize];
        *own = [own[0].min(*lo), own[1].max(*hi)];
    }
}

/// Whether [`min`, `max`] overlaps the box of a group other than `own`.
fn reaches_another(boxes: &[[Vec3; 2]], own: u32, min: Vec3, max: Vec3) -> bool {
    let overlaps = |[lo, hi]: &[Vec3; 2]| min.cmple(*hi).all() && max.cmpge(*lo).all();
    boxes.iter().enumerate().any(|(g, b)| g != own as usize && overlaps(b))
}

/// A group's band, clamped to [0, `h`] (NaN: 0).
fn within_band(band: f32, h: f32) -> f32 {
    band.max(0.0).min(h)
}

/// When culling leaves more than this fraction of the patches to search, it costs about what it saves (the
/// patches' cones and pairs take about a tenth of a full search)...
const CULLING_PAYS_BELOW: f32 = 0.75;
/// ...and the next this many steps search without it (cloth crumpled one step is crumpled the next; the
/// contacts are the same either way).
const UNCULLED_STEPS: u32 = 30;

/// Most candidate triangles one vertex sends to the narrow phase per step: it binds only in a torn cloth collapsed
/// into a clump where thousands of triangles overlap one point, whose search would otherwise take most of a frame
/// (figures in docs/performance.md, "Self-collision search"). The candidates beyond it, in the hash's order, are
/// dropped, so only there do the contacts depend on the hash's layout (never on the thread count: a vertex meets
/// its candidates in the same order whichever vertices share its query).
pub const MAX_CANDIDATES_PER_VERTEX: u32 = 1024;

/// Most self contacts one vertex keeps per step: those whose triangles were nearest at the start (the
/// vertex's distance to their planes), the layers it can actually meet. A vertex over a sheet needs up to six
/// (the triangles around the point below it); a crumpled clump can give hundreds, which only fight each other
/// and the stretch constraints.
pub(crate) const MAX_CONTACTS_PER_VERTEX: usize = 16;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::selfcollide::corners;
    use crate::sim::selfcollide::hash::swept_bounds;
    use crate::sim::selfcollide::narrow::sweep_contact;
    use crate::sim::selfcollide::test_support::{crumpled_pair, overlaps, sorted};
    use bevy::tasks::{ComputeTaskPool, TaskPoolBuilder};

    #[test]
    fn a_search_made_again_finds_what_a_full_search_finds_for_the_strayed() {
        let h = 0.02;
        let mut total = 0;
        for seed in 1..6 {
            let (x, p, tris) = crumpled_pair(seed);
            let mut full = Vec::new();
            let mut search = SelfContactSearch { full_search: true, ..Default::default() };
            find_self_contacts(&mut search, &x, &p, &tris, h, false, &mut full);
            // many strayed (a hash over the triangles near them) and a few (compared with every triangle)
            for every in [3, 17] {
                let strayed: Vec<bool> = (0..x.len()).map(|v| v % every == 1).collect();
                let count = strayed.iter().filter(|&&s| s).count();
                assert_eq!(count > FEW_STRAYED, every == 3, "seed {seed}: {count} strayed");
                let involved = |c: &SelfContact| {
                    strayed[c.vertex as usize] || tris[c.triangle as usize].iter().any(|&v| strayed[v as usize])
                };
                let expected: Vec<SelfContact> = full.iter().copied().filter(involved).collect();
                let mut again = Vec::new();
                let strays = Strays { strayed: &strayed, reswept: &strayed, slack: 0.0 };
                find_self_contacts_of_strayed(&mut search, &x, &p, &tris, h, false, strays, &mut again);
                assert_eq!(again, expected, "seed {seed}, every {every}th strayed");
                assert!(every == 3 || expected.len() < full.len(), "seed {seed}: every pair is involved");
                total += again.len();
            }
        }
        assert!(total > 50, "{total}");
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
    fn a_thin_cloth_beside_a_thick_one_finds_every_pair_within_the_band() {
        let h = 0.02;
        for seed in 1..4 {
            let (x, p, tris) = crumpled_pair(seed);
            let groups: Vec<u32> = (0..x.len()).map(|v| (v >= x.len() / 2) as u32).collect();
            let search = |bands: &[f32]| {
                let mut search = SelfContactSearch { groups: groups.clone(), ..Default::default() };
                search.group_bands = bands.to_vec();
                let mut found = Vec::new();
                find_self_contacts(&mut search, &x, &p, &tris, h, false, &mut found);
                let grown: f32 = search.hash.bounds().iter().map(|[lo, hi]| (*hi - *lo).element_sum()).sum();
                (found, grown)
            };
            let (uniform, uniform_size) = search(&[]);
            assert!(uniform.len() > 10, "seed {seed}: only {} contacts between the sheets", uniform.len());
            assert!(uniform.iter().all(|c| groups[c.vertex as usize] != groups[tris[c.triangle as usize][0] as usize]));
            for bands in [[h, 0.1 * h], [0.1 * h, h], [0.0, h], [h, h]] {
                let (found, size) = search(&bands);
                assert_eq!(found, uniform, "seed {seed}, bands {bands:?}");
                if bands[0] < h || bands[1] < h {
                    assert!(size < uniform_size, "seed {seed}: the thin sheet's boxes did not shrink");
                }
            }
        }
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
}
