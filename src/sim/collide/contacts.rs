//! Line (8): generating the collision constraints of a step, once, outside the solver loop (§3.4); and their
//! projection inside the loop as inequality constraints C(p) = (p − q)·n ≥ 0 with stiffness 1.
//!
//! Static friction is part of the contact projection: while the vertex's tangential displacement in this step
//! is within μ times the distance the contact pushed it out (Coulomb's cone at the position level, as in
//! Macklin et al. 2014, "Unified particle physics", §6.1), the displacement is removed, so resting cloth does
//! not creep and the other constraints see the held vertex in the same sweep. Sliding (kinetic) friction and
//! restitution act on velocities in line (16), `response.rs`.

use bevy::math::{Vec3, Vec4};

use super::contact::{Contact, ContactKind};
use super::hold::{HeldBody, project_holds};
use super::pinch::share_pinches;
use super::planes::{StepPlane, StepPlanes, reach_of, strays, takes_planes};
use super::shapes::Shape;
use super::swept::{GrownShape, SurfaceHit, SweptCollider};
use crate::sim::constraints::access::ParticleAccess;
use crate::sim::integrate::MAX_SPEED;
use crate::sim::parallel::SliceOutputs;

/// Vertices per slice of [`generate_step_contacts`] at least: below that a cloth is searched on one thread.
const MIN_CONTACT_SLICE: usize = 512;
/// Vertices per block of a slice: each block's box is tested against each collider before its vertices are.
const CONTACT_BLOCK: usize = 64;

/// What one vertex slice of [`generate_step_contacts`] found: its contacts collider by collider, and where each
/// collider's run ends; in a step's first substep, its planes ([`StepPlanes`]) the same way.
#[derive(Debug, Default)]
pub struct SliceContacts {
    contacts: Vec<Contact>,
    collider_end: Vec<u32>,
    /// The box around the rays of each block of the slice.
    block_reach: Vec<Option<(Vec3, Vec3)>>,
    /// The balls of the slice's vertices, when the step's planes are found.
    reach: Vec<Vec4>,
    /// The planes found, collider by collider, and where each collider's run ends.
    planes: Vec<StepPlane>,
    plane_end: Vec<u32>,
    /// The free vertices of the slice that left their balls in this substep.
    strayed: Vec<u32>,
}

/// Which substep of which step a search is for, and the slack of its planes ([`reach_of`]).
#[derive(Clone, Copy, Debug)]
pub struct PlanStep {
    /// The substep being run.
    pub substep: u32,
    /// The substeps of the step.
    pub substeps: u32,
    /// How far beyond its substep's move times the substeps left a vertex may go and keep its planes, metres.
    pub slack: f32,
}

/// Whether a collider's contacts come from the step's planes: a still triangle mesh or other general solid, whose
/// queries are dear. An analytic shape is answered exactly in closed form in every substep for about the cost of a
/// plane's test, and keeps its curvature; a moving collider keeps its swept test in its own frame.
fn is_planed(collider: &SweptCollider) -> bool {
    !collider.is_moving() && matches!(collider.world, Shape::General(_))
}

/// Whether any of `colliders` gets planes ([`is_planed`]): without one, a search needs no [`StepPlanes`].
pub(crate) fn any_planed(colliders: &[SweptCollider]) -> bool {
    colliders.iter().any(is_planed)
}

/// How a search treats the still general colliders ([`is_planed`]).
enum Planned<'a> {
    /// Searched exactly, as every other collider.
    No,
    /// The step's first substep: each vertex's planes are found (the slices keep them) and give its contacts.
    Make { planed: &'a [Option<Shape>], substeps_left: f32, slack: f32 },
    /// A later substep: the planes give the contacts of the colliders that still stand, and the vertices that
    /// strayed are searched exactly.
    Keep(&'a StepPlanes),
}

/// Fills `out` (cleared first, capacity kept) with one contact per vertex and collider whose ray x→p enters
/// the collider grown by `margin` during the substep of length `dt`, lies inside it or starts on a still one's
/// surface ([`Shape::contact`](super::shapes::Shape::contact)), ordered by collider, then vertex. Vertices with
/// w = 0 are skipped. The vertices are searched in slices (shared by the compute pool's threads when `parallel`,
/// each slice's buffer in `slices`; the order, hence the result, is the same), and each slice, then each block of
/// 64 vertices (`CONTACT_BLOCK`) in a slice that may touch, skips every collider whose swept bounds cannot reach
/// the box around its rays. A vertex pinched between two facing colliders gets
/// contacts that share the overlap ([`share_pinches`]). The exact search of every substep, which
/// [`generate_step_contacts`] makes for moving colliders and strayed vertices.
#[cfg(test)]
pub fn generate_contacts(
    particles: (&[Vec3], &[Vec3], &[Vec3], &[f32]),
    colliders: &[SweptCollider],
    margin: (f32, f32),
    search: (&mut SliceOutputs<SliceContacts>, bool),
    out: &mut Vec<Contact>,
) {
    generate_step_contacts(particles, colliders, margin, search, None, out);
}

/// Line (8) against every collider: as the exact search of every substep ([`find_contacts`]: each vertex whose ray
/// x→p enters a collider grown by `margin` during the substep of length `dt`, lies inside it or starts on a still
/// one's surface gets a contact, ordered by collider, then vertex; w = 0 skipped), except that with `planes` the
/// still general colliders' contacts ([`is_planed`]) come from the step's planes (`planes.rs`), found in its
/// first substep: a plane whose vertex's ray reaches it ([`StepPlane::is_reached`]) is a contact, and a vertex
/// that left its ball or moves faster is searched exactly. A vertex pinched between two facing colliders gets contacts that share the overlap
/// ([`share_pinches`]).
pub fn generate_step_contacts(
    particles: (&[Vec3], &[Vec3], &[Vec3], &[f32]),
    colliders: &[SweptCollider],
    (margin, dt): (f32, f32),
    search: (&mut SliceOutputs<SliceContacts>, bool),
    planes: Option<(&mut StepPlanes, PlanStep)>,
    out: &mut Vec<Contact>,
) {
    out.clear();
    let probe =
        |collider: &SweptCollider, grown: &GrownShape, _: usize, x: Vec3, p: Vec3| collider.contact(grown, x, p);
    let n = particles.0.len().min(particles.1.len()).min(particles.2.len()).min(particles.3.len());
    match planes {
        None => {
            find_contacts(particles, colliders, (margin, dt), search, Planned::No, probe, out);
        }
        Some((planes, step))
            if step.substep > 0
                && planes.planed.len() == colliders.len()
                && planes.reach.len() == n
                && planes.margin == margin =>
        {
            find_contacts(particles, colliders, (margin, dt), search, Planned::Keep(planes), probe, out);
        }
        Some((planes, step)) => {
            let StepPlanes { reach, planes: found_planes, collider_end, planed, margin: planes_margin } = planes;
            planed.clear();
            let substeps_left = step.substeps.saturating_sub(step.substep).max(1) as f32;
            planed.extend(colliders.iter().map(|c| is_planed(c).then(|| c.world.clone())));
            *planes_margin = margin;
            let make = Planned::Make { planed, substeps_left, slack: step.slack };
            let slices = find_contacts(particles, colliders, (margin, dt), search, make, probe, out);
            reach.clear();
            for slice in slices.iter_mut().filter_map(|slice| slice.get_mut().ok()) {
                reach.extend_from_slice(&slice.reach);
            }
            found_planes.clear();
            found_planes.reserve(n);
            merge_by_collider(slices, colliders.len(), |slice| (&slice.planes, &slice.plane_end), found_planes);
            // a slice's run ends count its planes up to each collider, so their sum is the merged run's end
            collider_end.clear();
            collider_end.resize(colliders.len(), 0);
            for slice in slices.iter_mut().filter_map(|slice| slice.get_mut().ok()) {
                collider_end.iter_mut().zip(&slice.plane_end).for_each(|(end, slice_end)| *end += slice_end);
            }
        }
    }
    share_pinches(out);
}

/// How fast a vertex that a cloth starts with inside a collider is moved out of it, m/s. The move is written to x
/// as well as p, so it is a change of place that gives no velocity; a push of p alone becomes velocity in line
/// (12) (a sheet started half into the ground left it at the speed cap). Much faster, the vertices drag their
/// neighbours' edges faster than the constraints follow.
pub const DEPENETRATION_SPEED: f32 = 2.0;

/// Per vertex of a cloth, what is left of the overlaps it started with ([`depenetrate`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Overlaps {
    /// How deep each vertex may still be inside a still collider, metres: `None` until the cloth's first substep
    /// measures it; empty when there is none (the usual case) and again once every one has run out.
    pub allowance: Option<Vec<f32>>,
    /// This substep's move of each vertex's start out of a collider, for [`lift_starts`].
    pub lift: Vec<Vec3>,
    /// The directions the vertices leave convex colliders by where their nearest ways out disagree, chosen in
    /// the first substep ([`choose_exits`](super::exits::choose_exits)); cleared with the allowance.
    pub exits: Vec<super::exits::Exit>,
    /// Whether a collider started through a triangle of the cloth in its first substep (a capsule's round end or a
    /// box's edge between the vertices): the triangle leaves at the depenetration speed (`features`).
    pub triangles_inside: bool,
}

/// Starting overlaps resolved without energy. The cloth's first substep measures how deep each vertex starts inside
/// a collider, below where its surface was at the start of the substep (the allowance). While it lasts, a vertex x
/// below its contact's surface by `depth` moves out by at most `reach` (the depenetration speed): the allowance
/// becomes at most the depth left, its contact's plane sinks that far, and the move is kept in [`Overlaps::lift`]
/// for [`lift_starts`], which moves x by it after the projection, so line (12) v = (p − x)/Δt keeps only the
/// vertex's own motion while the projection (cloth against cloth too) sees the move. A vertex pushed deeper than
/// its allowance meanwhile goes back to it at once, its start moving with it by all but `reach` (up to the speed
/// cap's move), and every allowance shrinks by half the reach a substep, so nothing can hold a vertex in and
/// every allowance runs out within twice the time the overlap needs. An overlap the solver makes later (another
/// cloth or a constraint pushed the vertex in during the last substep) has no allowance and is resolved at once,
/// as §3.4 has it. On a moving collider the depth is taken from the surface's start, so the surface's own motion
/// carries the vertex as it carries one resting on it (`swept.rs`). A vertex a body holds (`held`) is where its
/// body puts it. Returns how many contacts keep part of their overlap.
pub fn depenetrate(
    x: &[Vec3],
    contacts: &mut [Contact],
    reach: f32,
    overlaps: &mut Overlaps,
    held: impl Fn(u32) -> bool,
) -> usize {
    let starting = |c: &Contact| c.kind == ContactKind::Surface && (c.vertex as usize) < x.len() && !held(c.vertex);
    // below the surface where it was at the start of the substep: a moving surface's own motion carries the vertex
    let depth_of = |c: &Contact| (c.point - c.surface_shift - x[c.vertex as usize]).dot(c.normal);
    let Overlaps { allowance, lift, exits, .. } = overlaps;
    lift.clear();
    let allowed = allowance.get_or_insert_with(|| {
        let mut started = Vec::new();
        for c in contacts.iter().filter(|c| starting(c)) {
            let depth = depth_of(c);
            if depth > 0.0 {
                started.resize(x.len(), 0.0);
                started[c.vertex as usize] = f32::max(started[c.vertex as usize], depth);
            }
        }
        started
    });
    if !allowed.is_empty() {
        allowed.resize(x.len(), 0.0);
        allowed.iter_mut().for_each(|room| *room = (*room - 0.5 * reach).max(0.0));
        if allowed.iter().all(|&room| room == 0.0) {
            allowed.clear();
            exits.clear();
        }
    }
    // the most a start moves in a substep besides the push: with it, a vertex moves no farther than the speed cap
    let most = reach * (MAX_SPEED / DEPENETRATION_SPEED - 1.0);
    let mut kept = 0;
    for c in contacts.iter_mut().filter(|c| starting(c)) {
        let (i, depth) = (c.vertex as usize, depth_of(c));
        let Some(room) = allowed.get_mut(i).filter(|room| **room > 0.0 && depth > 0.0) else { continue };
        *room = room.min(depth - depth.min(reach));
        kept += 1;
        // the vertex leaves at the depenetration speed: x moves with it, and the projection's push does not count
        // that move as pushed or moved (friction, restitution, a body's share); one pushed deeper meanwhile goes
        // back to its allowance at once, as fast as the speed cap lets it and with no more velocity than that
        let lifted = depth.min(reach).max(depth - *room - reach).min(most);
        let sunk = room.max(depth - reach - most);
        c.point -= c.normal * sunk;
        lift.resize(x.len(), Vec3::ZERO);
        lift[i] += c.normal * lifted;
        c.pushed = -lifted;
        c.moved = -c.normal * lifted;
        c.leaving = true;
    }
    kept
}

/// After the projection: the starts of the vertices [`depenetrate`] took out of a collider move with them, so that
/// move is no velocity. A vertex whose move x → p is longer than `max_move` (the speed cap's, for one substep)
/// keeps its start: line (12) then shortens the move as it does any other, and no vertex moves faster.
pub fn lift_starts(x: &mut [Vec3], p: &[Vec3], lift: &[Vec3], max_move: f32) {
    for ((x, p), lift) in x.iter_mut().zip(p).zip(lift) {
        if x.distance_squared(*p) <= max_move * max_move {
            *x += *lift;
        }
    }
}

/// After the projection loop: the free vertices that the stretch, bending or volume constraints pulled into a
/// collider with no contact to stop them (predicted clear of it in line (8), or held by a contact plane that a
/// curved surface falls away from) are put back on its surface grown by `margin`, at the point nearest to them,
/// and get a contact (appended to `contacts`) so that line (16) applies friction and restitution and §4.2
/// couples the push to a body. Only a vertex inside the collider's shape itself counts: one within the margin
/// is left to the next step's contacts, as §3.4 leaves it. A vertex whose `allowance` ([`depenetrate`]) lasts goes
/// back only as deep as it started the substep (it leaves at [`DEPENETRATION_SPEED`]). Returns how many vertices
/// were pushed out.
pub fn push_out_of_colliders(
    (x, p, v, w): (&[Vec3], &mut [Vec3], &[Vec3], &[f32]),
    colliders: &[SweptCollider],
    (margin, dt): (f32, f32),
    search: (&mut SliceOutputs<SliceContacts>, bool),
    (contacts, allowance): (&mut Vec<Contact>, &[f32]),
) -> usize {
    let first = contacts.len();
    let probe = |collider: &SweptCollider, _: &GrownShape, i: usize, x: Vec3, p: Vec3| {
        if collider.world.is_clear_of(p, 0.0) || collider.world.signed_distance(p) >= 0.0 {
            return None;
        }
        let (point, normal) = collider.world.inflated(margin).closest_surface(p);
        // a vertex the cloth started with inside a collider leaves at the depenetration speed
        // (`depenetrate`) while its allowance lasts: it goes back no further out than it started this substep, so
        // the push gives it no velocity
        let leaving = allowance.get(i).is_some_and(|&room| room > 0.0);
        let started = if leaving { collider.start_depth(x) } else { 0.0 };
        let point = if started > 0.0 { point - normal * (margin + started) } else { point };
        Some(SurfaceHit { point, normal, surface_shift: collider.shift_at(point) })
    };
    find_contacts((x, &*p, v, w), colliders, (margin, dt), search, Planned::No, probe, contacts);
    if contacts.len() > first {
        drop_contacts_with_holding_body(contacts);
    }
    for c in &mut contacts[first..] {
        let i = c.vertex as usize;
        let depth = (p[i] - c.point).dot(c.normal);
        if depth < 0.0 {
            p[i] -= c.normal * depth;
            c.pushed = -depth;
            c.moved = -c.normal * depth;
        }
    }
    contacts.len() - first
}

/// The search shared by [`generate_step_contacts`] and [`push_out_of_colliders`]: appends to `out` a contact for
/// every free vertex and collider for which `probe(collider, grown, i, x_i, p_i)` finds one, in the order and with
/// the culling described at [`generate_step_contacts`]; the still colliders as `planned` says. Returns the slices,
/// which hold the planes made.
fn find_contacts<'s>(
    (x, p, v, w): (&[Vec3], &[Vec3], &[Vec3], &[f32]),
    colliders: &[SweptCollider],
    (margin, dt): (f32, f32),
    (slices, parallel): (&'s mut SliceOutputs<SliceContacts>, bool),
    planned: Planned<'_>,
    probe: impl Fn(&SweptCollider, &GrownShape, usize, Vec3, Vec3) -> Option<SurfaceHit> + Sync,
    out: &mut Vec<Contact>,
) -> &'s mut [std::sync::Mutex<SliceContacts>] {
    let n = x.len().min(p.len()).min(v.len()).min(w.len());
    let found = slices.run(n, MIN_CONTACT_SLICE, parallel, |vertices, found| {
        let SliceContacts { contacts, collider_end, block_reach, reach: balls, planes, plane_end, strayed } = found;
        contacts.clear();
        collider_end.clear();
        planes.clear();
        plane_end.clear();
        let blocks =
            || (vertices.start..vertices.end).step_by(CONTACT_BLOCK).map(|b| b..(b + CONTACT_BLOCK).min(vertices.end));
        let touches = |reach: &Option<(Vec3, Vec3)>, collider: &SweptCollider| {
            reach.is_some_and(|(min, max)| collider.may_touch_box(min, max, margin))
        };
        let contact = |i: usize, k: usize, hit: SurfaceHit, collider: &SweptCollider| {
            let approach = (v[i] - hit.surface_shift / dt).dot(hit.normal);
            Contact::surface(i as u32, k as u32, hit, approach, (collider.friction, collider.restitution))
        };
        let reach = swept_bounds(&x[vertices.clone()], &p[vertices.clone()]);
        block_reach.clear();
        // the balls of the slice's vertices; which of them left theirs is found when a collider first needs it
        let mut strays_known = false;
        let kept = match &planned {
            Planned::Make { substeps_left, slack, .. } => {
                // room for a plane per vertex, so the planes of a cloth swinging near a collider do not grow it
                planes.reserve(vertices.len());
                balls.clear();
                balls.extend(vertices.clone().map(|i| reach_of(x[i], p[i], w[i], *substeps_left, *slack)));
                None
            }
            Planned::Keep(planes) => planes.reach(n, vertices.clone()),
            Planned::No => None,
        };
        for (k, collider) in colliders.iter().enumerate() {
            // grown only for a collider the slice may touch: most of a many-collider scene's are far
            let grown = std::cell::OnceCell::new();
            let grown = || grown.get_or_init(|| collider.grown(margin));
            let exact = |j: usize, contacts: &mut Vec<Contact>| {
                if let Some(hit) = probe(collider, grown(), j, x[j], p[j]) {
                    contacts.push(contact(j, k, hit, collider));
                }
            };
            if let Planned::Make { planed, .. } = &planned
                && let Some(Some(world)) = planed.get(k)
            {
                let shape = &world.inflated(margin);
                // the step's first substep: each slow vertex's plane and the contact if its ray reaches it; a fast
                // one's exact
                let ball = |i: usize| balls[i - vertices.start];
                for block in blocks() {
                    let free = || block.clone().filter(|&i| w[i] != 0.0);
                    let bounds = free().fold(None::<(Vec3, Vec3)>, |acc, i| {
                        let (centre, radius) = (ball(i).truncate(), ball(i).w);
                        let (lo, hi) = if takes_planes(ball(i)) {
                            (centre - radius, centre + radius)
                        } else {
                            (x[i].min(p[i]), x[i].max(p[i]))
                        };
                        Some(acc.map_or((lo, hi), |(l, h)| (l.min(lo), h.max(hi))))
                    });
                    if !touches(&bounds, collider) {
                        continue;
                    }
                    for i in free() {
                        if !takes_planes(ball(i)) {
                            exact(i, contacts);
                            continue;
                        }
                        let Some(plane) = StepPlane::of(i as u32, shape, x[i], ball(i).w) else { continue };
                        planes.push(plane);
                        if let Some(hit) = plane.contact(x[i], p[i]) {
                            contacts.push(contact(i, k, hit, collider));
                        }
                    }
                }
            } else if let (Some(kept), Planned::Keep(step)) = (kept, &planned)
                && !collider.is_moving()
                && let Some(run) = step.run(k, &collider.world, vertices.clone())
                // a slice with no plane whose rays cannot reach the collider has nothing to find
                && (!run.is_empty() || touches(&reach, collider))
            {
                if !strays_known {
                    strayed.clear();
                    strayed.reserve(vertices.len());
                    let left = |&i: &usize| w[i] != 0.0 && strays(kept[i - vertices.start], x[i], p[i]);
                    strayed.extend(vertices.clone().filter(left).map(|i| i as u32));
                    strays_known = true;
                }
                // a later substep: the planes, and the exact search for the vertices that left their balls, block by
                // block in vertex order, the strayed vertices of a block skipped while its rays cannot reach the
                // collider (a plane of a strayed vertex no longer holds)
                let probe_strays = !strayed.is_empty() && touches(&reach, collider);
                if probe_strays && block_reach.is_empty() {
                    block_reach.extend(blocks().map(|block| swept_bounds(&x[block.clone()], &p[block])));
                }
                let (mut run, mut left) = (run.iter().peekable(), strayed.iter().map(|&j| j as usize).peekable());
                for (b, block) in blocks().enumerate() {
                    let near = probe_strays && touches(&block_reach[b], collider);
                    loop {
                        let plane = run.peek().filter(|plane| (plane.vertex as usize) < block.end);
                        let stray = left.peek().copied().filter(|&j| j < block.end);
                        match (plane, stray) {
                            (None, None) => break,
                            (Some(plane), stray) if stray.is_none_or(|j| (plane.vertex as usize) <= j) => {
                                let i = plane.vertex as usize;
                                if stray != Some(i)
                                    && w[i] != 0.0
                                    && let Some(hit) = plane.contact(x[i], p[i])
                                {
                                    contacts.push(contact(i, k, hit, collider));
                                }
                                run.next();
                            }
                            (_, _) => {
                                if let Some(j) = left.next().filter(|_| near) {
                                    exact(j, contacts);
                                }
                            }
                        }
                    }
                }
            } else if touches(&reach, collider) {
                if block_reach.is_empty() {
                    block_reach.extend(blocks().map(|block| swept_bounds(&x[block.clone()], &p[block])));
                }
                for (block, reach) in blocks().zip(block_reach.iter()) {
                    if !touches(reach, collider) {
                        continue;
                    }
                    for i in block.filter(|&i| w[i] != 0.0) {
                        exact(i, contacts);
                    }
                }
            }
            collider_end.push(contacts.len() as u32);
            plane_end.push(planes.len() as u32);
        }
    });
    merge_by_collider(found, colliders.len(), |slice| (&slice.contacts, &slice.collider_end), out);
    found
}

/// Appends to `out` what the slices of a search found, collider by collider and, for each, slice by slice: the
/// serial order. `parts` gives a slice's findings and where each collider's run of them ends.
pub(super) fn merge_by_collider<S, T: Copy>(
    slices: &mut [std::sync::Mutex<S>],
    colliders: usize,
    parts: impl Fn(&S) -> (&[T], &[u32]),
    out: &mut Vec<T>,
) {
    if let [one] = slices {
        // one slice holds its findings in the merged order already
        if let Ok(one) = one.get_mut() {
            out.extend_from_slice(parts(one).0);
        }
        return;
    }
    for k in 0..colliders {
        for slice in slices.iter_mut() {
            let Ok(slice) = slice.get_mut() else { continue };
            let (found, ends) = parts(slice);
            let start = if k == 0 { 0 } else { ends[k - 1] as usize };
            out.extend_from_slice(&found[start..ends[k] as usize]);
        }
    }
}

/// The axis-aligned box around every ray x→p, or `None` for no particles.
fn swept_bounds(x: &[Vec3], p: &[Vec3]) -> Option<(Vec3, Vec3)> {
    let (x_lo, x_hi) = bounding_box(x)?;
    let (p_lo, p_hi) = bounding_box(p).unwrap_or((x_lo, x_hi));
    Some((x_lo.min(p_lo), x_hi.max(p_hi)))
}

/// The axis-aligned box around `points`, or `None` for none. The coordinates are read as one flat array, four
/// points (three `Vec4`s) at a time, into independent running minima and maxima, so the loop runs on packed
/// min/max instructions; a fold point by point is bound by the latency of its comparisons and spends most of
/// its time shuffling 12-byte points. NaN coordinates are ignored (`v.min(lo)` keeps `lo` for a NaN `v`).
pub(super) fn bounding_box(points: &[Vec3]) -> Option<(Vec3, Vec3)> {
    let first = *points.first()?;
    let flat: &[f32] = bytemuck::cast_slice(points);
    let (mut lo, mut hi) = ([Vec4::INFINITY; 3], [Vec4::NEG_INFINITY; 3]);
    let mut runs = flat.chunks_exact(12);
    for run in &mut runs {
        for k in 0..3 {
            let v = Vec4::from_slice(&run[4 * k..4 * k + 4]);
            lo[k] = v.min(lo[k]);
            hi[k] = v.max(hi[k]);
        }
    }
    let (lo, hi) = (bytemuck::cast::<_, [Vec3; 4]>(lo), bytemuck::cast::<_, [Vec3; 4]>(hi));
    let lanes = lo.into_iter().zip(hi);
    let rest = points[points.len() - runs.remainder().len() / 3..].iter().map(|&q| (q, q));
    Some(lanes.chain(rest).fold((first, first), |(lo, hi), (l, h)| (lo.min(l), hi.max(h))))
}

/// Projects every contact. A surface contact with C(p) = (p − q)·n < 0 moves p back onto the surface along
/// n; a collider that is no body has infinite mass within the loop, so the whole correction goes to the particle
/// and is added up in [`Contact::pushed`]. Then static friction with the collider's μ: the tangential displacement
/// relative to the surface, p − x − surface shift, is removed while it and what friction took back in the
/// earlier iterations ([`Contact::stopped`]) are within μ · pushed: weighing the latest iteration's slip alone
/// would widen the cone with every iteration. A body (in `bodies`, by
/// collider) shares each push and stop with the vertex ([`project_on_body`]), and so do the holds, which come
/// last ([`project_holds`]). Every displacement is added up in [`Contact::moved`] for the body's impulse (§4.2),
/// and what a body shared already in [`Contact::shared`].
pub fn project_contacts(p: &mut impl ParticleAccess, x: &[Vec3], contacts: &mut [Contact], bodies: &mut [HeldBody]) {
    let first_hold = contacts.iter().rposition(|c| c.kind == ContactKind::Surface).map_or(0, |last| last + 1);
    let (surfaces, holds) = contacts.split_at_mut(first_hold);
    for c in surfaces {
        let i = c.vertex as usize;
        if i >= x.len() || i >= p.len() || p.w(i) == 0.0 || c.kind != ContactKind::Surface {
            continue;
        }
        if let Some(body) = bodies.get_mut(c.collider as usize).filter(|b| b.movable() && !c.leaving) {
            project_on_body(p, x[i], c, body);
            continue;
        }
        let before = p.p(i);
        let n = c.normal;
        let depth = (before - c.point).dot(n);
        if depth < 0.0 {
            p.shift(i, -n * depth);
            c.pushed -= depth;
        }
        let moved = p.p(i) - x[i] - c.surface_shift;
        let slip = moved - n * moved.dot(n);
        if c.pushed > 0.0 && (slip + c.stopped).length_squared() <= (c.friction * c.pushed).powi(2) {
            p.shift(i, -slip);
            c.stopped += slip;
        }
        c.moved += p.p(i) - before;
    }
    if !holds.is_empty() {
        project_holds(p, holds, bodies);
    }
}

/// A surface contact with a body that gives way within the projection (§4.2 made implicit, as XPBD couples a
/// particle with a rigid body): the surface follows the body's correction so far, and each push and static
/// friction's stop are shared between the vertex and the body by their inverse masses at the point. Added up
/// explicitly after the loop, every iteration's push counted, pushes that a rigid cloth took straight back too,
/// and a body's impulse grew with the iteration count. A vertex leaving a starting overlap is pushed as by a
/// collider that is no body: its body takes none of it.
fn project_on_body(p: &mut impl ParticleAccess, start: Vec3, c: &mut Contact, body: &mut HeldBody) {
    let i = c.vertex as usize;
    let before = p.p(i);
    let w = p.w(i);
    let (point, arm) = body.follow(c.point);
    let n = body.turned(c.normal);
    let depth = (before - point).dot(n);
    if depth < 0.0 {
        let impulse = -depth / (w + body.inverse_mass_along(arm, n));
        p.shift(i, n * (impulse * w));
        body.take(arm, -n * impulse);
        c.pushed += impulse * w;
    }
    let (point_now, arm) = body.follow(c.point);
    let moved = p.p(i) - start - c.surface_shift - (point_now - c.point);
    let slip = moved - n * moved.dot(n);
    let length = slip.length();
    if c.pushed > 0.0 && length > 0.0 && (slip + c.stopped).length() <= c.friction * c.pushed {
        let t = slip / length;
        let impulse = length / (w + body.inverse_mass_along(arm, t));
        p.shift(i, -t * (impulse * w));
        body.take(arm, t * impulse);
        c.stopped += slip;
    }
    c.moved += p.p(i) - before;
    c.shared += p.p(i) - before;
}

/// Drops the surface contacts of held vertices with the body that holds them; the holds ([`ContactKind::Attached`])
/// follow one another in `contacts`. The hold point is on the body's surface, so such a contact would push its vertex
/// out by the thickness (in every iteration, or once at the push out of colliders, a thickness a substep) and the
/// hold pull it back: the body would push itself along, taking the pull back at the mass it lends the vertex and the
/// push at the vertex's own.
pub fn drop_contacts_with_holding_body(contacts: &mut Vec<Contact>) {
    let is_hold = |c: &Contact| c.kind == ContactKind::Attached;
    let Some(first_hold) = contacts.iter().position(is_hold) else { return };
    let count = contacts[first_hold..].iter().take_while(|c| is_hold(c)).count();
    // the holds move down as contacts before them are dropped, and are read where they moved to
    let mut holds = first_hold..first_hold + count;
    let mut kept = 0;
    for i in 0..contacts.len() {
        let c = contacts[i];
        if i == first_hold {
            holds = kept..kept + count;
        }
        if !is_hold(&c) && contacts[holds.clone()].iter().any(|h| h.vertex == c.vertex && h.collider == c.collider) {
            continue;
        }
        contacts[kept] = c;
        kept += 1;
    }
    contacts.truncate(kept);
}

/// Implicit coupling of holds (§4.2): before the projection each held vertex takes the inverse mass of itself
/// plus the share of its body's mass the hold lends it, so the cloth's constraints move it as little as they
/// would move the body and pass the rest of each correction on up the cloth, as a pin's vertex does. Vertices
/// with w = 0 (pinned, grabbed) stay so. [`return_body_masses`] undoes it after the projection.
pub fn lend_body_masses(w: &mut [f32], mass: &[f32], contacts: &[Contact]) {
    set_held_inverse_masses(w, mass, contacts, |m, lent| 1.0 / (m + lent));
}

/// Gives each held vertex that [`lend_body_masses`] lent mass its own inverse mass back.
pub fn return_body_masses(w: &mut [f32], mass: &[f32], contacts: &[Contact]) {
    set_held_inverse_masses(w, mass, contacts, |m, _| 1.0 / m);
}

/// w of each vertex a hold lends mass to and that is not held by w = 0 := `inverse`(own mass, lent mass).
fn set_held_inverse_masses(w: &mut [f32], mass: &[f32], contacts: &[Contact], inverse: impl Fn(f32, f32) -> f32) {
    for c in contacts.iter().filter(|c| c.lent_mass > 0.0) {
        let i = c.vertex as usize;
        if let (Some(w), Some(&m)) = (w.get_mut(i), mass.get(i))
            && *w > 0.0
        {
            *w = inverse(m, c.lent_mass);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::collide::shapes::Shape;
    use crate::sim::constraints::access::Slices;

    #[test]
    fn swept_bounds_hold_every_start_and_end_whatever_the_count() {
        assert_eq!(swept_bounds(&[], &[]), None);
        for n in [1usize, 3, 4, 7, 9] {
            let x: Vec<Vec3> = (0..n).map(|i| Vec3::new(i as f32, -(i as f32) * 0.5, (i % 3) as f32)).collect();
            let p: Vec<Vec3> = x.iter().map(|q| *q + Vec3::new(0.25, 3.0, -2.0)).collect();
            let (lo, hi) = swept_bounds(&x, &p).unwrap();
            let last = (n - 1) as f32;
            assert_eq!(lo, Vec3::new(0.0, -0.5 * last, -2.0), "n = {n}");
            assert_eq!(hi, Vec3::new(last + 0.25, 3.0, (n.min(3) - 1) as f32), "n = {n}");
        }
    }

    #[test]
    fn contacts_found_in_parallel_slices_come_in_the_serial_order() {
        use bevy::math::{Isometry3d, Quat};
        bevy::tasks::ComputeTaskPool::get_or_init(|| bevy::tasks::TaskPoolBuilder::new().num_threads(2).build());
        // 64×64 vertices falling onto a ground plane, a moving box and a sphere, some of them pinned
        let x: Vec<Vec3> =
            (0..64 * 64).map(|i| Vec3::new((i % 64) as f32 * 0.02, 0.02, (i / 64) as f32 * 0.02)).collect();
        let v: Vec<Vec3> = (0..x.len()).map(|i| Vec3::new(0.0, -1.0 - (i % 7) as f32 * 0.1, 0.0)).collect();
        let p: Vec<Vec3> = x.iter().zip(&v).map(|(x, v)| *x + *v * 0.05).collect();
        let w: Vec<f32> = (0..x.len()).map(|i| if i % 13 == 0 { 0.0 } else { 1.0 }).collect();
        let bar = Shape::Box { center: Vec3::ZERO, rotation: Quat::IDENTITY, half_extents: Vec3::new(0.3, 0.05, 0.1) };
        let colliders = [
            SweptCollider::fixed(Shape::Plane { point: Vec3::ZERO, normal: Vec3::Y }, 0.3, 0.0),
            SweptCollider::new(
                bar,
                Isometry3d::from_translation(Vec3::new(0.5, 0.1, 0.5)),
                Isometry3d::from_translation(Vec3::new(0.6, 0.0, 0.5)),
                0.3,
                0.0,
            ),
            SweptCollider::fixed(Shape::Sphere { center: Vec3::new(0.9, 0.0, 0.9), radius: 0.2 }, 0.3, 0.0),
        ];
        let mut serial = Vec::new();
        let particles = (&x[..], &p[..], &v[..], &w[..]);
        generate_contacts(particles, &colliders, (0.01, 0.05), (&mut SliceOutputs::default(), false), &mut serial);
        let keys: Vec<(u32, u32)> = serial.iter().map(|c| (c.collider, c.vertex)).collect();
        assert!(keys.windows(2).all(|k| k[0] < k[1]), "by collider, then vertex");
        for k in 0..3 {
            assert!(serial.iter().filter(|c| c.collider == k).count() > 20, "collider {k}");
        }
        assert!(serial.iter().all(|c| w[c.vertex as usize] != 0.0));
        let (mut slices, mut parallel) = (SliceOutputs::default(), Vec::new());
        for _ in 0..2 {
            generate_contacts(particles, &colliders, (0.01, 0.05), (&mut slices, true), &mut parallel);
            assert_eq!(parallel, serial);
        }
        assert!(slices.buffers().len() > 1, "the test should cut the vertices into several slices");
    }

    /// The solid below y = 0 answered through [`SolidQueries`](super::super::general::SolidQueries), as a
    /// triangle mesh is: a collider whose contacts come from the step's planes.
    #[derive(Debug)]
    struct Floor;

    impl super::super::general::SolidQueries for Floor {
        fn closest(&self, q: Vec3) -> (Vec3, bool, Vec3) {
            (q.with_y(0.0), q.y < 0.0, Vec3::Y)
        }
        fn sweep(&self, a: Vec3, b: Vec3, radius: f32) -> Option<(f32, Vec3)> {
            if a.y <= radius {
                return Some((0.0, Vec3::Y));
            }
            (b.y < radius).then(|| ((a.y - radius) / (a.y - b.y), Vec3::Y))
        }
        fn aabb(&self) -> (Vec3, Vec3) {
            (Vec3::new(-100.0, -100.0, -100.0), Vec3::new(100.0, 0.0, 100.0))
        }
    }

    /// A 32×32 sheet falling 1 m/s into a floor answered as a mesh is and an analytic ground 4 mm below it over a
    /// step of 4 substeps, one vertex thrown sideways into a ball in the third: the floor's planes give the exact
    /// search's contacts, the analytic shapes and the thrown vertex are searched exactly, and the result is the
    /// same on one thread or two.
    #[test]
    fn the_steps_planes_give_the_exact_contacts_on_a_flat_floor_and_strayed_vertices_are_searched() {
        use super::super::general::GeneralShape;
        use super::super::planes::StepPlanes;
        bevy::tasks::ComputeTaskPool::get_or_init(|| bevy::tasks::TaskPoolBuilder::new().num_threads(2).build());
        let floor = Shape::General(GeneralShape::new(std::sync::Arc::new(Floor)));
        let colliders = [
            SweptCollider::fixed(Shape::Plane { point: Vec3::new(0.0, -0.004, 0.0), normal: Vec3::Y }, 0.3, 0.0),
            SweptCollider::fixed(floor, 0.3, 0.0),
            SweptCollider::fixed(Shape::Sphere { center: Vec3::new(1.5, 0.0, 0.3), radius: 0.2 }, 0.3, 0.0),
        ];
        let (margin, dt, substeps) = (0.002, 0.005, 4);
        let mut x: Vec<Vec3> =
            (0..32 * 32).map(|i| Vec3::new((i % 32) as f32 * 0.02, 0.0075, (i / 32) as f32 * 0.02)).collect();
        let v = vec![Vec3::NEG_Y; x.len()];
        let w = vec![1.0; x.len()];
        let (mut serial, mut parallel) = (StepPlanes::default(), StepPlanes::default());
        let mut slices = SliceOutputs::default();
        for substep in 0..substeps {
            let mut p: Vec<Vec3> = x.iter().zip(&v).map(|(x, v)| *x + *v * dt).collect();
            if substep == 2 {
                p[31] = Vec3::new(1.31, 0.0, 0.3); // thrown 69 cm sideways into the ball
            }
            let particles = (&x[..], &p[..], &v[..], &w[..]);
            let (mut exact, mut planned, mut shared) = (Vec::new(), Vec::new(), Vec::new());
            generate_contacts(particles, &colliders, (margin, dt), (&mut SliceOutputs::default(), false), &mut exact);
            let step = PlanStep { substep, substeps, slack: 0.03 };
            let search = (&mut SliceOutputs::default(), false);
            generate_step_contacts(
                particles,
                &colliders,
                (margin, dt),
                search,
                Some((&mut serial, step)),
                &mut planned,
            );
            let search = (&mut slices, true);
            generate_step_contacts(
                particles,
                &colliders,
                (margin, dt),
                search,
                Some((&mut parallel, step)),
                &mut shared,
            );
            assert_eq!(planned, shared, "substep {substep}: one thread or two");
            let pairs = |found: &[Contact]| found.iter().map(|c| (c.collider, c.vertex)).collect::<Vec<_>>();
            assert_eq!(pairs(&planned), pairs(&exact), "substep {substep}");
            assert!(
                planned.iter().zip(&exact).all(|(a, b)| a.normal == b.normal
                    && ((a.point - b.point).dot(a.normal).abs() < 1e-6)
                    && (a.collider == 1 || a == b)),
                "substep {substep}: the same planes, and the analytic shapes' contacts exactly"
            );
            assert_eq!(exact.iter().filter(|c| c.collider == 2).count(), usize::from(substep >= 2));
            assert!(exact.iter().any(|c| c.collider == 1) == (substep >= 1), "substep {substep}");
            x = p;
        }
        assert!(slices.buffers().len() > 1, "the test should cut the vertices into several slices");
        assert_eq!(serial.planes.len(), 1024, "a plane for every vertex, on the floor alone");
        assert!(serial.planes.iter().all(|plane| plane.normal == Vec3::Y));
    }

    /// A vertex of 1 kg 0.1 m inside a 3 kg body's face, off the body's centre and sliding along it: the push and
    /// the stop are shared by the inverse masses, and the body's move and turn carry the momentum the vertex lost.
    #[test]
    fn a_body_shares_each_push_and_stop_with_its_vertex() {
        use bevy::math::Mat3;
        let inertia = Mat3::from_diagonal(Vec3::splat(0.5));
        let mut bodies = [HeldBody::new(Vec3::new(0.3, -0.5, 0.0), 1.0 / 3.0, inertia)];
        let hit = SurfaceHit { point: Vec3::ZERO, normal: Vec3::Y, surface_shift: Vec3::ZERO };
        let mut contacts = [Contact::surface(0, 0, hit, 0.0, (1.0, 0.0))];
        let x = [Vec3::new(-0.02, 0.05, 0.0)];
        let mut p = [Vec3::new(0.0, -0.1, 0.0)];
        project_contacts(&mut Slices { p: &mut p, w: &[1.0] }, &x, &mut contacts, &mut bodies);

        let (body, c) = (&bodies[0], &contacts[0]);
        let moved = p[0] - Vec3::new(0.0, -0.1, 0.0);
        assert!(moved.y > 0.05 && moved.y < 0.1, "the vertex took {} of the 0.1 m push", moved.y);
        assert!(moved.x < 0.0, "static friction did not stop the slide: {moved}");
        // what the vertex gained, the body lost: linear momentum 1 kg · Δp + 3 kg · shift = 0
        assert!((moved + body.shift * 3.0).length() < 1e-5, "vertex {moved}, body {}", body.shift);
        assert!(body.turn.length() > 1e-3, "pushed off its centre, the body should turn");
        assert_eq!((c.moved, c.shared), (moved, moved), "the body took its share of the whole move");
        // the stop turned the body a little into the vertex; the next iterations leave it on the moved surface
        for _ in 0..3 {
            project_contacts(&mut Slices { p: &mut p, w: &[1.0] }, &x, &mut contacts, &mut bodies);
        }
        let (point, _) = bodies[0].follow(Vec3::ZERO);
        let gap = (p[0] - point).dot(bodies[0].turned(Vec3::Y));
        assert!(gap.abs() < 1e-3, "{gap} m off the moved surface");
        let moved = p[0] - Vec3::new(0.0, -0.1, 0.0);
        assert!((moved + bodies[0].shift * 3.0).length() < 1e-5, "vertex {moved}, body {}", bodies[0].shift);
    }

    fn fixed(shape: Shape, friction: f32) -> [SweptCollider; 1] {
        [SweptCollider::fixed(shape, friction, 0.0)]
    }

    #[test]
    fn projected_vertex_ends_on_the_surface_and_pinned_vertices_are_ignored() {
        let ground = fixed(Shape::Plane { point: Vec3::ZERO, normal: Vec3::Y }, 0.0);
        let x = [Vec3::new(0.0, 0.1, 0.0), Vec3::new(1.0, 0.1, 0.0), Vec3::new(2.0, 0.5, 0.0)];
        let mut p = [Vec3::new(0.0, -0.2, 0.0), Vec3::new(1.0, -0.3, 0.0), Vec3::new(2.0, 0.4, 0.0)];
        let w = [1.0, 0.0, 1.0];
        let mut contacts = Vec::new();
        generate_contacts(
            (&x, &p, &[Vec3::NEG_Y; 3], &w),
            &ground,
            (0.0, 0.1),
            (&mut SliceOutputs::default(), false),
            &mut contacts,
        );
        assert_eq!(contacts.len(), 1);
        assert_eq!(contacts[0].approach_speed, -1.0);
        project_contacts(&mut Slices { p: &mut p, w: &w }, &x, &mut contacts, &mut []);
        assert!(p[0].y.abs() < 1e-6);
        assert!((contacts[0].pushed - 0.2).abs() < 1e-6);
        assert!((contacts[0].moved - Vec3::new(0.0, 0.2, 0.0)).length() < 1e-6);
        assert_eq!(p[1].y, -0.3);
    }

    #[test]
    fn a_vertex_started_inside_leaves_at_the_depenetration_speed_gaining_no_velocity() {
        let ground = fixed(Shape::Plane { point: Vec3::ZERO, normal: Vec3::Y }, 0.0);
        let (margin, dt) = (0.01, 0.1);
        // 0: 30 cm in the ground, falling 1 mm in the substep; 1: resting on the grown surface
        let mut x = [Vec3::new(0.0, -0.3, 0.0), Vec3::new(1.0, margin, 0.0)];
        let mut p = [Vec3::new(0.0, -0.301, 0.0), Vec3::new(1.0, margin - 0.001, 0.0)];
        let (v, w) = ([Vec3::ZERO; 2], [1.0; 2]);
        let mut contacts = Vec::new();
        let search = (&mut SliceOutputs::default(), false);
        generate_contacts((&x, &p, &v, &w), &ground, (margin, dt), search, &mut contacts);
        assert_eq!(contacts.len(), 2);
        let mut overlaps = Overlaps::default();
        let kept = depenetrate(&x, &mut contacts, 0.05, &mut overlaps, |_| false);
        assert_eq!(kept, 1, "only the buried vertex started inside");
        assert_eq!(overlaps.allowance, Some(vec![0.26, 0.0]), "measured in the first substep, less this one's reach");
        project_contacts(&mut Slices { p: &mut p, w: &w }, &x, &mut contacts, &mut []);
        lift_starts(&mut x, &[Vec3::ZERO], &overlaps.lift, f32::INFINITY);
        assert!((x[0].y + 0.25).abs() < 1e-6 && x[1].y == margin, "moved 5 cm out, in x: {x:?}");
        assert!((p[0].y - x[0].y).abs() < 1e-6, "no velocity from the overlap: x {} p {}", x[0].y, p[0].y);
        assert!((p[1].y - margin).abs() < 1e-6, "the resting vertex is held as before: {}", p[1].y);
        // the contact counts as its push only the millimetre of fall it stopped: a body would take no more
        assert!((contacts[0].moved - Vec3::new(0.0, 0.001, 0.0)).length() < 1e-5, "{}", contacts[0].moved);
        // the push-out after the loop takes it no further out than it started
        let search = (&mut SliceOutputs::default(), false);
        let before = p;
        let allowance = overlaps.allowance.unwrap_or_default();
        push_out_of_colliders((&x, &mut p, &v, &w), &ground, (margin, dt), search, (&mut contacts, &allowance));
        assert_eq!(p, before);
    }

    #[test]
    fn an_overlap_the_cloth_did_not_start_with_is_resolved_at_once() {
        let ground = fixed(Shape::Plane { point: Vec3::ZERO, normal: Vec3::Y }, 0.0);
        let (x, mut p) = ([Vec3::new(0.0, -0.3, 0.0)], [Vec3::new(0.0, -0.3, 0.0)]);
        let mut contacts = Vec::new();
        let search = (&mut SliceOutputs::default(), false);
        generate_contacts((&x, &p, &[Vec3::ZERO], &[1.0]), &ground, (0.0, 0.1), search, &mut contacts);
        // measured at the start: none; the vertex was pushed in since (by another cloth, say)
        let mut none = Overlaps { allowance: Some(Vec::new()), ..Overlaps::default() };
        assert_eq!(depenetrate(&x, &mut contacts, 0.05, &mut none, |_| false), 0);
        project_contacts(&mut Slices { p: &mut p, w: &[1.0] }, &x, &mut contacts, &mut []);
        assert!(p[0].y.abs() < 1e-6, "on the surface in one substep: {}", p[0]);
        // a vertex whose allowance ran out is pushed out of the collider after the loop too
        let (x, mut p) = ([Vec3::new(0.0, -0.3, 0.0)], [Vec3::new(0.0, -0.3, 0.0)]);
        let search = (&mut SliceOutputs::default(), false);
        push_out_of_colliders(
            (&x, &mut p, &[Vec3::ZERO], &[1.0]),
            &ground,
            (0.0, 0.1),
            search,
            (&mut contacts, &[0.0]),
        );
        assert!(p[0].y.abs() < 1e-6, "{}", p[0]);
    }

    #[test]
    fn a_vertex_started_in_two_colliders_leaves_each_at_the_depenetration_speed() {
        let floor = SweptCollider::fixed(Shape::Plane { point: Vec3::ZERO, normal: Vec3::Y }, 0.0, 0.0);
        let wall = SweptCollider::fixed(Shape::Plane { point: Vec3::ZERO, normal: Vec3::X }, 0.0, 0.0);
        let mut x = [Vec3::new(-0.3, -0.3, 0.0)];
        let p = x;
        let mut contacts = Vec::new();
        let search = (&mut SliceOutputs::default(), false);
        generate_contacts((&x, &p, &[Vec3::ZERO], &[1.0]), &[floor, wall], (0.0, 0.1), search, &mut contacts);
        let mut overlaps = Overlaps::default();
        assert_eq!(depenetrate(&x, &mut contacts, 0.05, &mut overlaps, |_| false), 2, "both contacts started inside");
        lift_starts(&mut x, &[Vec3::ZERO], &overlaps.lift, f32::INFINITY);
        assert!((x[0] - Vec3::new(-0.25, -0.25, 0.0)).length() < 1e-6, "{}", x[0]);
    }

    #[test]
    fn a_vertex_started_inside_a_moving_collider_leaves_it_carried_by_its_surface() {
        // 29 cm below where the surface was at the start of the substep; the surface rose 1 cm during it
        let hit = SurfaceHit { point: Vec3::ZERO, normal: Vec3::Y, surface_shift: Vec3::new(0.0, 0.01, 0.0) };
        let mut contacts = [Contact::surface(0, 0, hit, 0.0, (0.0, 0.0))];
        let mut x = [Vec3::new(0.0, -0.3, 0.0)];
        let mut overlaps = Overlaps::default();
        assert_eq!(depenetrate(&x, &mut contacts, 0.05, &mut overlaps, |_| false), 1);
        // the plane sinks to where the vertex may still be (0.29 − 0.05), and the start moves by the step
        assert!((contacts[0].point.y + 0.24).abs() < 1e-6, "{}", contacts[0].point);
        lift_starts(&mut x, &[Vec3::ZERO], &overlaps.lift, f32::INFINITY);
        // so the projection's p = −0.24 leaves the vertex the surface's own 1 cm of motion
        assert!((contacts[0].point.y - x[0].y - 0.01).abs() < 1e-6, "{}", x[0]);
    }

    #[test]
    fn vertices_pulled_into_a_collider_are_pushed_out_and_get_a_contact() {
        let ball = fixed(Shape::Sphere { center: Vec3::ZERO, radius: 1.0 }, 0.4);
        let margin = 0.01;
        // 0: 30 cm inside; 1: inside the margin only; 2: outside; 3: pinned and inside
        let x = [Vec3::new(0.0, 1.2, 0.0), Vec3::new(1.2, 0.0, 0.0), Vec3::new(0.0, 0.0, 1.5), Vec3::ZERO];
        let mut p = [Vec3::new(0.0, 0.7, 0.0), Vec3::new(1.005, 0.0, 0.0), Vec3::new(0.0, 0.0, 1.4), Vec3::ZERO];
        let (v, w) = ([Vec3::NEG_Y; 4], [1.0, 1.0, 1.0, 0.0]);
        let mut contacts = vec![Contact::attached(2, 0, Vec3::ZERO, Vec3::ZERO)];
        let search = (&mut SliceOutputs::default(), false);
        let pushed = push_out_of_colliders((&x, &mut p, &v, &w), &ball, (margin, 0.1), search, (&mut contacts, &[]));
        assert_eq!(pushed, 1);
        assert!((p[0] - Vec3::new(0.0, 1.0 + margin, 0.0)).length() < 1e-6, "on the grown surface: {}", p[0]);
        assert_eq!(p[1].x, 1.005, "within the margin: left to the next step");
        assert_eq!((p[3], contacts.len()), (Vec3::ZERO, 2), "pinned: untouched; the old contact kept");
        let c = contacts[1];
        assert_eq!((c.vertex, c.normal, c.approach_speed, c.friction), (0, Vec3::Y, -1.0, 0.4));
        assert!((c.pushed - 0.31).abs() < 1e-6 && (c.moved - Vec3::new(0.0, 0.31, 0.0)).length() < 1e-6);
    }

    #[test]
    fn pushed_out_of_a_moving_collider_the_contact_knows_how_its_surface_moved() {
        let plate =
            Shape::Box { center: Vec3::ZERO, rotation: bevy::math::Quat::IDENTITY, half_extents: Vec3::splat(0.5) };
        let pose = |y: f32| bevy::math::Isometry3d::from_translation(Vec3::new(0.0, y, 0.0));
        let rising = [SweptCollider::new(plate, pose(-0.6), pose(-0.5), 0.0, 0.0)];
        let (x, mut p) = ([Vec3::new(0.1, 0.05, 0.0)], [Vec3::new(0.1, -0.02, 0.0)]);
        let mut contacts = Vec::new();
        let search = (&mut SliceOutputs::default(), false);
        push_out_of_colliders((&x, &mut p, &[Vec3::ZERO], &[1.0]), &rising, (0.0, 0.1), search, (&mut contacts, &[]));
        assert!(p[0].y.abs() < 1e-6, "{}", p[0]);
        assert!((contacts[0].surface_shift - Vec3::new(0.0, 0.1, 0.0)).length() < 1e-6);
        assert!((contacts[0].approach_speed + 1.0).abs() < 1e-5, "the surface comes up at 1 m/s");
    }

    #[test]
    fn static_friction_holds_within_the_cone_only() {
        let ground = fixed(Shape::Plane { point: Vec3::ZERO, normal: Vec3::Y }, 0.5);
        let x = [Vec3::new(0.0, 0.0, 0.0), Vec3::new(1.0, 0.0, 0.0)];
        // pushed out by 0.1 each; tangential slips of 0.04 (inside μ·0.1 = 0.05) and 0.08 (outside)
        let mut p = [Vec3::new(0.04, -0.1, 0.0), Vec3::new(1.08, -0.1, 0.0)];
        let mut contacts = Vec::new();
        generate_contacts(
            (&x, &p, &[Vec3::ZERO; 2], &[1.0; 2]),
            &ground,
            (0.0, 0.1),
            (&mut SliceOutputs::default(), false),
            &mut contacts,
        );
        project_contacts(&mut Slices { p: &mut p, w: &[1.0; 2] }, &x, &mut contacts, &mut []);
        assert!((p[0] - x[0]).length() < 1e-6, "held: {}", p[0]);
        assert!((p[1] - Vec3::new(1.08, 0.0, 0.0)).length() < 1e-6, "slides on: {}", p[1]);
    }

    #[test]
    fn static_friction_holds_no_more_than_its_cone_over_the_iterations() {
        // pushed out by 0.1 at μ 0.5: friction can hold back 0.05 of slide in all. A pull of 0.02 an iteration for
        // five iterations is held for two; had each iteration's slip been weighed alone, all five were held.
        let ground = fixed(Shape::Plane { point: Vec3::ZERO, normal: Vec3::Y }, 0.5);
        let x = [Vec3::ZERO];
        let mut p = [Vec3::new(0.0, -0.1, 0.0)];
        let mut contacts = Vec::new();
        generate_contacts(
            (&x, &p, &[Vec3::ZERO], &[1.0]),
            &ground,
            (0.0, 0.1),
            (&mut SliceOutputs::default(), false),
            &mut contacts,
        );
        for _ in 0..5 {
            p[0].x += 0.02;
            project_contacts(&mut Slices { p: &mut p, w: &[1.0] }, &x, &mut contacts, &mut []);
        }
        assert!((p[0] - Vec3::new(0.06, 0.0, 0.0)).length() < 1e-6, "{}", p[0]);
        assert!((contacts[0].stopped - Vec3::new(0.04, 0.0, 0.0)).length() < 1e-6, "{}", contacts[0].stopped);
    }

    /// Runs a particle resting on a 20° slope through lines (5), (7), (8), (10), (13)–(14) for 10 s and returns
    /// how far it moved.
    fn slide_on_slope(friction: f32) -> f32 {
        let a = 20f32.to_radians();
        let slope = fixed(Shape::Plane { point: Vec3::ZERO, normal: Vec3::new(-a.sin(), a.cos(), 0.0) }, friction);
        let (g, dt) = (Vec3::new(0.0, -9.81, 0.0), 1.0 / 480.0);
        let (mut x, mut v, mut p, mut contacts) = ([Vec3::ZERO], [Vec3::ZERO], [Vec3::ZERO], Vec::new());
        for _ in 0..4800 {
            crate::sim::integrate::apply_gravity(&mut v, &[1.0], g, dt, false);
            crate::sim::integrate::predict(&x, &v, &mut p, dt, false);
            generate_contacts(
                (&x, &p, &v, &[1.0]),
                &slope,
                (0.0, dt),
                (&mut SliceOutputs::default(), false),
                &mut contacts,
            );
            project_contacts(&mut Slices { p: &mut p, w: &[1.0] }, &x, &mut contacts, &mut []);
            crate::sim::integrate::update_velocities(&mut x, &p, &mut v, &[1.0], dt, false);
        }
        x[0].length()
    }

    #[test]
    fn resting_vertex_on_a_slope_does_not_creep() {
        // μ = 0.6 > tan 20°: held. Velocity-level friction alone would let it creep g_t·Δt² every step.
        assert!(slide_on_slope(0.6) < 1e-4, "crept {} m", slide_on_slope(0.6));
        assert!(slide_on_slope(0.2) > 1.0, "μ = 0.2 < tan 20° must slide");
    }

    #[test]
    fn a_held_vertex_carries_its_lent_mass_through_the_projection_only() {
        // a 0.1 kg vertex lent 0.9 kg, 2 cm off the point of a collider that is no body: put on the point
        let point = Vec3::new(0.0, -0.1, 0.0);
        let mut p = [point + Vec3::new(0.02, 0.0, 0.0)];
        let mut contacts = [Contact::held(0, 0, (point, Vec3::ZERO), p[0], 0.9)];
        let (mut w, mass) = ([10.0], [0.1]);
        lend_body_masses(&mut w, &mass, &contacts);
        assert_eq!(w, [1.0]);
        project_contacts(&mut Slices { p: &mut p, w: &w }, &[Vec3::ZERO], &mut contacts, &mut []);
        return_body_masses(&mut w, &mass, &contacts);
        assert_eq!(w, [10.0]);
        assert!((p[0] - point).length() < 1e-7);
    }

    #[test]
    fn a_held_vertex_has_no_surface_contact_with_its_own_body_and_w_0_stays() {
        let hit = |n: f32| SurfaceHit { point: Vec3::ZERO, normal: Vec3::Y * n, surface_shift: Vec3::ZERO };
        let mut contacts = vec![
            Contact::surface(3, 1, hit(1.0), 0.0, (0.5, 0.0)),
            Contact::surface(3, 0, hit(1.0), 0.0, (0.5, 0.0)),
            Contact::surface(4, 1, hit(1.0), 0.0, (0.5, 0.0)),
            Contact::held(3, 1, (Vec3::ZERO, Vec3::ZERO), Vec3::ZERO, 1.0),
            Contact::held(6, 2, (Vec3::ZERO, Vec3::ZERO), Vec3::ZERO, 1.0),
            // the push out of colliders appends its contacts after the holds
            Contact::surface(6, 2, hit(1.0), 0.0, (0.5, 0.0)),
            Contact::surface(3, 1, hit(1.0), 0.0, (0.5, 0.0)),
            Contact::surface(6, 1, hit(1.0), 0.0, (0.5, 0.0)),
        ];
        drop_contacts_with_holding_body(&mut contacts);
        let kept: Vec<(u32, u32, ContactKind)> = contacts.iter().map(|c| (c.vertex, c.collider, c.kind)).collect();
        let (surface, attached) = (ContactKind::Surface, ContactKind::Attached);
        assert_eq!(kept, [(3, 0, surface), (4, 1, surface), (3, 1, attached), (6, 2, attached), (6, 1, surface)]);
        let mut w = [0.0; 5];
        lend_body_masses(&mut w, &[0.1; 5], &contacts);
        assert_eq!(w, [0.0; 5], "a pinned or grabbed vertex stays so");
    }

    #[test]
    fn attached_vertex_is_put_on_its_body_point() {
        let x = [Vec3::ZERO];
        let mut p = [Vec3::new(0.0, -0.3, 0.1)];
        let mut contacts = [Contact::attached(0, 0, Vec3::new(0.0, -0.1, 0.0), Vec3::ZERO)];
        project_contacts(&mut Slices { p: &mut p, w: &[2.0] }, &x, &mut contacts, &mut []);
        assert!((p[0] - Vec3::new(0.0, -0.1, 0.0)).length() < 1e-6);
        assert!((contacts[0].moved - Vec3::new(0.0, 0.2, -0.1)).length() < 1e-6);
        // m (Δp/Δt + Δv) with m = 1/2, Δt = 0.1
        assert!((contacts[0].momentum_given(0.5, 0.1) - Vec3::new(0.0, 1.0, -0.5)).length() < 1e-5);
    }

    #[test]
    fn a_vertex_resting_on_a_collider_keeps_its_plane_still_or_moving() {
        // the vertex starts on a box's top (μ = 1) and its ray leaves it; the cloth then pulls it 5 cm in and 2 cm
        // along: the box pushes it out and holds the slip, and a moving box carries it along its 1 mm
        let block =
            Shape::Box { center: Vec3::ZERO, rotation: bevy::math::Quat::IDENTITY, half_extents: Vec3::splat(0.5) };
        let pose = |x: f32| bevy::math::Isometry3d::from_translation(Vec3::new(x, -0.5, 0.0));
        let still = SweptCollider::fixed(block.transformed(&pose(0.0)), 1.0, 0.0);
        let moving = SweptCollider::new(block, pose(0.0), pose(0.001), 1.0, 0.0);
        let x = [Vec3::ZERO];
        for (collider, ends_at) in [(still, Vec3::ZERO), (moving, Vec3::new(0.001, 0.0, 0.0))] {
            let mut contacts = Vec::new();
            let (search, v, w) = (&mut SliceOutputs::default(), [Vec3::ZERO], [1.0]);
            let predicted = [Vec3::new(0.01, 0.02, 0.0)];
            generate_contacts((&x, &predicted, &v, &w), &[collider], (0.0, 0.01), (search, false), &mut contacts);
            let mut p = [Vec3::new(0.02, -0.05, 0.0)];
            project_contacts(&mut Slices { p: &mut p, w: &[1.0] }, &x, &mut contacts, &mut []);
            assert!((p[0] - ends_at).length() < 1e-5, "{} instead of {ends_at}", p[0]);
        }
    }

    #[test]
    fn static_friction_holds_relative_to_a_moving_surface() {
        // a belt moving +x by 2 cm this substep carries a vertex pressed 5 cm into it (μ · 5 cm ≥ 2 cm)
        let belt =
            Shape::Box { center: Vec3::ZERO, rotation: bevy::math::Quat::IDENTITY, half_extents: Vec3::splat(0.5) };
        let pose = |x: f32| bevy::math::Isometry3d::from_translation(Vec3::new(x, -0.5, 0.0));
        let belt = [SweptCollider::new(belt, pose(0.0), pose(0.02), 0.5, 0.0)];
        let x = [Vec3::ZERO];
        let mut p = [Vec3::new(0.0, -0.05, 0.0)];
        let mut contacts = Vec::new();
        generate_contacts(
            (&x, &p, &[Vec3::ZERO], &[1.0]),
            &belt,
            (0.0, 0.01),
            (&mut SliceOutputs::default(), false),
            &mut contacts,
        );
        project_contacts(&mut Slices { p: &mut p, w: &[1.0] }, &x, &mut contacts, &mut []);
        assert!((p[0] - Vec3::new(0.02, 0.0, 0.0)).length() < 1e-5, "carried with the belt: {}", p[0]);
    }
}
