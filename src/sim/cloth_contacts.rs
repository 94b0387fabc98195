//! Cloth against cloth (`params.cloth_collision`): every cloth's vertices against every other cloth's
//! triangles, with §4.3's vertex–triangle constraint eq. (12)/(13), found and projected by the machinery of
//! self-collision ([`selfcollide`](super::selfcollide)).
//!
//! The cloths' particles and triangles are laid end to end in one combined mesh ([`ClothContacts`]); the
//! hierarchical spatial hash searches it (line (8), with the same swept boxes, normal-cone culling and bounds as
//! self-collision) once per step over the rays x → x + v·Δt of the whole step, and the contacts are projected
//! in every substep (Macklin et al. 2019, "Small Steps"). The ray is only a forecast: a cloth stopped by a
//! collider during a step (a sheet landing on a ball under another still falling) moves nothing like it, and
//! the layer above went through it. So each later substep compares every vertex with where its ray put it at
//! that time (`StepSweep`); once one is off by more than its share of the band the search keeps beyond the
//! gap, the cloths are searched again over the rest of the step. Only the pairs whose vertex and
//! triangle belong to different cloths are tested (`SelfContactSearch::groups`) — the pairs within one cloth are
//! self-collision's. The same untangling releases the contacts that would hold two cloths that already pass
//! through each other on the wrong side, and turns the contacts of one of two cloths that cross where the contacts
//! cannot see it whole (a scene that starts them through each other: `selfcollide::CrossingSurvey`), so that cloth
//! goes back through. After each substep's iterations (and the tethers) the kept contacts are
//! projected on the combined predictions, with both sides' inverse masses, and the positions go back to their
//! cloths. The gap kept between two cloths is the larger of their thicknesses (each capped like
//! self-collision's), at most `MAX_THICKNESS_PER_EDGE` times the finer cloth's vertex spacing (`pair_gap`).
//! Each cloth's triangles enter the hash grown by their own thickness only, so a fine cloth next to a thick one
//! does not fill the hash's cells with its own triangles (`SelfContactSearch::group_bands`).
//!
//! Vertex–triangle pairs do not see an edge of one cloth sweep past a free edge of another (a border, or a
//! tear): every edge near a free edge of another cloth also keeps its side of it, an edge–edge contact found
//! and projected alongside (`selfcollide::find_edge_contacts`). Nor do they see an interior edge of one cloth
//! pass through an interior edge of another where the two lie on each other: the edges at the vertices in
//! contact keep their side of the edges of the triangles they touch (`selfcollide::InteriorEdgePairs`), found
//! once a step.
//!
//! Cloths a scene starts closer than their gap part as self-collision parts a squeezed vertex, in x and p alike
//! (`selfcollide::lift_squeezed_vertices`), so the overlap becomes no velocity; a pair the solver squeezes later
//! wins back part of its gap in p, no faster than [`DEPENETRATION_SPEED`].

use std::time::Instant;

use bevy::prelude::*;

use super::cloth::Awake;
use super::cloth::{ClothMaterial, ClothMesh, Particles, SelfCollision, StretchConstraints};
use super::collide::DEPENETRATION_SPEED;
use super::constraints::access::Slices;
use super::schedule::{PbdStage, PbdSubstep, ProjectionSystems, SimClock};
use super::selfcollide::{
    CrossingSurvey, DEPENETRATION_PER_STEP, EdgeContact, EdgeContactSearch, InteriorEdgePairs, Lifts,
    MAX_THICKNESS_PER_EDGE, SELF_DEPENETRATION_SPEED, SelfContact, SelfContactSearch, StepSweep, Untangler,
    find_edge_candidates, find_edge_contacts, find_self_contacts, lift_squeezed_vertices, mean_rest_length,
    project_edge_contacts, project_self_contacts_on, self_collision_thickness, sweep_end,
};
use super::{SimParams, StageTimings, stages};

/// Cloth against cloth: contacts between different cloths searched once per step (again when the cloths leave
/// the step's forecast) and projected after the tethers in every substep, while [`SimParams::cloth_collision`]
/// is on.
pub struct ClothContactsPlugin;

impl Plugin for ClothContactsPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<ClothContacts>().add_systems(
            PbdSubstep,
            (
                find_cloth_contacts.in_set(PbdStage::GenerateCollisions).after(stages::hold_on_bodies),
                project_cloth_contacts.in_set(ProjectionSystems::ClothContacts),
            ),
        );
    }
}

/// Passes over the cloth–cloth contacts after each substep's iterations, at most: like the iterations, more
/// passes let a contact's push travel through a pile of layers.
pub(crate) const MAX_PASSES: u32 = 4;

/// Every cloth laid end to end, the contacts between different cloths, and the buffers of their search, reused
/// every step (nothing is allocated once they have grown).
#[derive(Resource, Debug, Default)]
pub struct ClothContacts {
    /// Each cloth, in query order.
    cloths: Vec<GatheredCloth>,
    x: Vec<Vec3>,
    p: Vec<Vec3>,
    w: Vec<f32>,
    triangles: Vec<[u32; 3]>,
    search: SelfContactSearch,
    edge_search: EdgeContactSearch,
    interior: InteriorEdgePairs,
    untangler: Untangler,
    /// The edges through another cloth that no contact may see (cloths a scene starts through each other).
    survey: CrossingSurvey,
    /// The contacts between different cloths of this step, in the combined indices.
    pub contacts: Vec<SelfContact>,
    /// The contacts that carry a crossed cloth back through another (`Untangler::untangle_cloths`), with the
    /// side it goes to: lifted in x and p alike, as a starting overlap is.
    pub(crate) turned: Vec<SelfContact>,
    /// The edge–edge contacts at free edges between different cloths, in the combined indices.
    pub(crate) edge_contacts: Vec<EdgeContact>,
    /// The largest gap a pair of cloths keeps, m: the detection band's base (`widest_pair_gap`).
    pub thickness: f32,
    /// What each cloth, in query order, brings to the gap between it and another ([`pair_gap`]).
    gaps: Vec<ClothGap>,
    /// The rays the last search forecast, kept to tell when the cloths leave them.
    sweep: StepSweep,
    /// Whether the cloths may still be parting from a scene that started them closer than their gap: set at a
    /// scene's first step, cleared once the lift of squeezed vertices finds none (`project_cloth_contacts`).
    parting: bool,
    /// The lift of the squeezed vertices (`selfcollide::lift_squeezed_vertices`).
    lifts: Lifts,
}

/// A cloth laid out in the combined arrays of [`ClothContacts`].
#[derive(Clone, Copy, Debug)]
struct GatheredCloth {
    entity: Entity,
    /// The index of its first particle in the combined arrays, and its particle count.
    first: u32,
    count: u32,
    /// Its mean rest edge, which bounds how far the search sweeps a vertex (`sweep_end`).
    mean_edge: Option<f32>,
}

/// What one cloth brings to the gap kept between it and another cloth.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct ClothGap {
    /// The cloth's thickness, capped like self-collision's ([`self_collision_thickness`]), m.
    pub thickness: f32,
    /// The widest gap its edges allow: [`MAX_THICKNESS_PER_EDGE`] times its vertex spacing (mean shortest edge), m.
    pub widest: f32,
}

/// The gap kept between a cloth and another: the larger thickness, at most the narrower of their widest gaps.
/// A gap wider than about half an edge of the finer cloth holds neighbouring vertices of it on opposite sides of
/// the other cloth's edges and triangles where the two cross, and each contact's push-out then tears it open
/// (a stiff 5.6 cm-edge sheet on a coarse cloth 8 cm thick had edges at 5.7× their rest length).
pub(crate) fn pair_gap(a: ClothGap, b: ClothGap) -> f32 {
    a.thickness.max(b.thickness).min(a.widest).min(b.widest)
}

/// The largest [`pair_gap`] between two of `cloths`; 0 for fewer than two.
pub(crate) fn widest_pair_gap(cloths: &[ClothGap]) -> f32 {
    let pairs = cloths.iter().enumerate().flat_map(|(i, a)| cloths[i + 1..].iter().map(|b| pair_gap(*a, *b)));
    pairs.fold(0.0, f32::max)
}

/// What the search reads of one cloth.
type Searched<'a> = (Entity, &'a Particles, &'a ClothMesh, &'a StretchConstraints, &'a ClothMaterial);

impl ClothContacts {
    /// Lays out the cloths end to end: particles at `x` and where the search sweeps them over `step` seconds,
    /// triangles renumbered, and the thickness kept.
    fn gather(&mut self, cloths: &Query<Searched, Awake>, step: f32) {
        let ClothContacts { cloths: layout, triangles, thickness, gaps, search, .. } = self;
        let SelfContactSearch { groups: owner, group_bands, .. } = search;
        layout.clear();
        owner.clear();
        group_bands.clear();
        triangles.clear();
        gaps.clear();
        let mut first = 0;
        for (k, (entity, particles, mesh, stretch, material)) in cloths.iter().enumerate() {
            let mean_edge = mean_rest_length(stretch.rest_length());
            layout.push(GatheredCloth { entity, first, count: particles.len() as u32, mean_edge });
            owner.extend(std::iter::repeat_n(k as u32, particles.len()));
            triangles.extend(mesh.triangles.iter().map(|t| t.map(|i| i + first)));
            let spacing = stretch.mean_shortest_edge();
            let own = self_collision_thickness(material.thickness, spacing);
            group_bands.push(own * SelfCollision::DETECTION_MARGIN);
            gaps.push(ClothGap { thickness: own, widest: spacing.map_or(own, |l| MAX_THICKNESS_PER_EDGE * l) });
            first += particles.len() as u32;
        }
        *thickness = widest_pair_gap(gaps);
        self.sweep_gathered(cloths, step);
    }

    /// Refills the gathered cloths' `x` and where the search sweeps them over `step` seconds, keeping the layout
    /// (the cloths are those of the last [`Self::gather`], with as many particles).
    fn sweep_gathered(&mut self, cloths: &Query<Searched, Awake>, step: f32) {
        let ClothContacts { cloths: layout, x, p, w, .. } = self;
        x.clear();
        p.clear();
        w.clear();
        for &GatheredCloth { entity, mean_edge, .. } in layout.iter() {
            if let Ok((_, particles, ..)) = cloths.get(entity) {
                x.extend_from_slice(&particles.x);
                w.extend_from_slice(&particles.w);
                p.extend(particles.x.iter().zip(&particles.v).map(|(x, v)| sweep_end(*x, *v, step, mean_edge)));
            }
        }
    }

    /// Whether every cloth of the last search is still here, with as many particles, and within the slack of
    /// the rays that search swept it along in this substep.
    fn forecast_holds(&self, cloths: &Query<Searched, Awake>, substep: u32) -> bool {
        self.cloths.len() == cloths.iter().count()
            && self.cloths.iter().all(|&GatheredCloth { entity, first, count, .. }| {
                cloths.get(entity).is_ok_and(|(_, particles, ..)| {
                    particles.len() == count as usize
                        && self.sweep.holds(first as usize, (&particles.x, &particles.p), substep)
                })
            })
    }
}

/// Line (8) for cloth against cloth: the contacts between different cloths over the rest of the step, searched
/// in its first substep and in any later one whose cloths left the last search's rays (`StepSweep`) (timed
/// with collision generation). Clears them when the switch is off or there is one cloth.
pub fn find_cloth_contacts(
    cloths: Query<Searched, Awake>,
    params: Res<SimParams>,
    clock: Res<SimClock>,
    mut state: ResMut<ClothContacts>,
    mut timings: ResMut<StageTimings>,
) {
    if !params.cloth_collision || cloths.iter().nth(1).is_none() {
        state.contacts.clear();
        state.edge_contacts.clear();
        state.turned.clear();
        state.sweep.forget();
        state.survey.forget();
        return;
    }
    let start = Instant::now();
    let state = &mut *state;
    if clock.steps == 0 && clock.substep == 0 {
        state.parting = true;
    }
    let band = if state.forecast_holds(&cloths, clock.substep) {
        state.thickness * SelfCollision::DETECTION_MARGIN
    } else {
        let substeps = params.substeps.max(1);
        state.gather(&cloths, clock.dt * substeps.saturating_sub(clock.substep).max(1) as f32);
        let band = state.thickness * SelfCollision::DETECTION_MARGIN;
        state.sweep.remember((&state.x, &state.p), (clock.substep, substeps), band - state.thickness);
        let ClothContacts { x, p, triangles, search, contacts, .. } = state;
        find_self_contacts(search, x, p, triangles, band, params.parallel, contacts);
        if params.untangle {
            let ClothContacts { x, w, triangles, untangler, contacts, survey, search, turned, .. } = state;
            if clock.substep == 0 {
                survey.step(x, triangles, &search.groups);
            }
            untangler.untangle_cloths(x, triangles, contacts, (survey.found(), w), turned);
        }
        let ClothContacts { x, p, triangles, search, edge_search, interior, contacts, .. } = state;
        find_edge_candidates(edge_search, search, x, p, triangles, params.parallel);
        // the step's first search, over its whole rays; held for its substeps
        if clock.substep == 0 {
            interior.find(contacts, (x, p), triangles, &search.groups, band);
        }
        band
    };
    // an edge–edge contact holds its closest points and normal for one substep: the step's candidates are
    // tested in every substep, over the substep's rays
    state.sweep_gathered(&cloths, clock.dt);
    let ClothContacts { x, p, edge_search, edge_contacts, untangler, interior, .. } = state;
    find_edge_contacts(edge_search, x, p, band, params.parallel, edge_contacts);
    edge_contacts.extend_from_slice(interior.held());
    if params.untangle {
        untangler.release_edges(edge_contacts);
    }
    timings.add(PbdStage::GenerateCollisions, start);
}

/// After each substep's iterations (lines (9)–(11)) and tethers: the cloth–cloth contacts projected on every
/// cloth's predictions at once (timed with the projection).
pub fn project_cloth_contacts(
    mut cloths: Query<&mut Particles, Awake>,
    params: Res<SimParams>,
    clock: Res<SimClock>,
    mut state: ResMut<ClothContacts>,
    mut timings: ResMut<StageTimings>,
) {
    if state.contacts.is_empty() && state.edge_contacts.is_empty() && state.turned.is_empty() {
        return;
    }
    let start = Instant::now();
    let ClothContacts {
        cloths: layout,
        x,
        p,
        w,
        triangles,
        contacts,
        edge_contacts,
        turned,
        thickness,
        gaps,
        search,
        parting,
        lifts,
        ..
    } = &mut *state;
    let fits = |particles: &Particles, count: u32| particles.len() == count as usize;
    if !layout.iter().all(|c| cloths.get(c.entity).is_ok_and(|particles| fits(particles, c.count))) {
        // a cloth came or went since the search: its indices are stale until the next step's
        contacts.clear();
        edge_contacts.clear();
        turned.clear();
        return;
    }
    x.clear();
    p.clear();
    w.clear();
    for &GatheredCloth { entity, .. } in layout.iter() {
        if let Ok(particles) = cloths.get(entity) {
            x.extend_from_slice(&particles.x);
            p.extend_from_slice(&particles.p);
            w.extend_from_slice(&particles.w);
        }
    }
    let owner = &search.groups;
    let gap = |i: usize, j: usize| {
        match (owner.get(i), owner.get(j)) {
            (Some(&a), Some(&b)) if a != b => {
                gaps.get(a as usize).zip(gaps.get(b as usize)).map(|(a, b)| pair_gap(*a, *b))
            }
            _ => None,
        }
        .unwrap_or(*thickness)
    };
    // a push in p alone becomes velocity: a scene's starting overlap is lifted out in x and p alike, and a pair the
    // solver squeezes later parts no faster than a collider pushes a vertex out (lifting those too kept piled
    // layers stirring; docs/reliability.md, "Cloth against cloth")
    let reach = SELF_DEPENETRATION_SPEED * clock.dt;
    // a crossed cloth goes back through in x and p alike, as a starting overlap leaves: pushed in p alone, the
    // push became velocity (sheets started through each other gained up to 2.6 % of their energy)
    let carried = lift_squeezed_vertices((x, p, w), (triangles, turned), gap, reach, lifts) > 0;
    let lifted = *parting && lift_squeezed_vertices((x, p, w), (triangles, contacts), gap, reach, lifts) > 0;
    *parting &= lifted;
    let most = DEPENETRATION_SPEED * clock.dt;
    let (share, edge_reach) =
        if lifted { (0.0, reach) } else { (DEPENETRATION_PER_STEP.min(most / thickness.max(f32::MIN_POSITIVE)), most) };
    for _ in 0..params.iterations.clamp(1, MAX_PASSES) {
        project_self_contacts_on(&mut Slices { p, w }, x, triangles, contacts, gap, 1.0, share);
        project_edge_contacts(p, w, edge_contacts, gap, edge_reach);
    }
    for &GatheredCloth { entity, first, count, .. } in layout.iter() {
        if let Ok(mut particles) = cloths.get_mut(entity) {
            let range = first as usize..(first + count) as usize;
            particles.p.copy_from_slice(&p[range.clone()]);
            if lifted || carried {
                particles.x.copy_from_slice(&x[range]);
            }
        }
    }
    timings.add(PbdStage::Project, start);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gap_between_two_cloths_is_the_larger_thickness_within_half_the_finer_edge() {
        let cloth = |thickness, edge: f32| ClothGap { thickness, widest: MAX_THICKNESS_PER_EDGE * edge };
        // alike: their thickness
        assert_eq!(pair_gap(cloth(0.01, 0.05), cloth(0.01, 0.05)), 0.01);
        // a thin cloth against a thicker one keeps the thicker one's gap, either way round
        assert_eq!(pair_gap(cloth(0.001, 0.05), cloth(0.02, 0.2)), 0.02);
        assert_eq!(pair_gap(cloth(0.02, 0.2), cloth(0.001, 0.05)), 0.02);
        // a fine sheet (5.6 cm edges) against a coarse cloth 8.1 cm thick: half the fine edge
        let gap = pair_gap(cloth(0.001, 0.056), cloth(0.081, 0.195));
        assert!((gap - 0.028).abs() < 1e-6, "{gap}");
        // the band covers every pair, and the fine sheet lowers it only where it takes part
        let cloths = [cloth(0.001, 0.056), cloth(0.081, 0.195), cloth(0.035, 0.11)];
        assert_eq!(widest_pair_gap(&cloths), 0.055);
        assert_eq!(widest_pair_gap(&cloths[..1]), 0.0);
    }
}
