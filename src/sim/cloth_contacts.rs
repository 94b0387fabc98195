//! Cloth against cloth (`params.cloth_collision`): every cloth's vertices against every other cloth's
//! triangles, with §4.3's vertex–triangle constraint eq. (12)/(13), found and projected by the machinery of
//! self-collision ([`selfcollide`](super::selfcollide)).
//!
//! The cloths' particles and triangles are laid end to end in one combined mesh ([`ClothContacts`]); the
//! hierarchical spatial hash searches it (line (8), with the same swept boxes, normal-cone culling and bounds as
//! self-collision) in every substep, not once per step as self-collision does: a cloth stopped by a collider
//! during a step (a sheet landing on a ball under another still falling) moves nothing like the ray x + v·Δt
//! predicted from the step's start, and the layer above went through it. Only the pairs whose vertex and
//! triangle belong to different cloths are tested (`SelfContactSearch::groups`) — the pairs within one cloth are
//! self-collision's. The same untangling releases the contacts that would hold two cloths that already pass
//! through each other on the wrong side. After each substep's iterations (and the tethers) the kept contacts are
//! projected on the combined predictions, with both sides' inverse masses, and the positions go back to their
//! cloths. The gap kept is the larger thickness of the cloths (each capped like self-collision's); each cloth's
//! triangles enter the hash grown by its own thickness only, so a fine cloth next to a thick one does not fill
//! the hash's cells with its own triangles (`SelfContactSearch::group_bands`).
//!
//! Vertex–triangle pairs do not see an edge of one cloth sweep past a free edge of another (a border, or a
//! tear): every edge near a free edge of another cloth also keeps its side of it, an edge–edge contact found
//! and projected alongside ([`selfcollide::find_edge_contacts`](super::selfcollide::find_edge_contacts)).

use std::time::Instant;

use bevy::prelude::*;

use super::cloth::{ClothMaterial, ClothMesh, Particles, SelfCollision, StretchConstraints};
use super::selfcollide::{
    EdgeContact, EdgeContactSearch, SelfContact, SelfContactSearch, Untangler, find_edge_contacts, find_self_contacts,
    mean_rest_length, project_edge_contacts, project_self_contacts, self_collision_thickness, sweep_end,
};
use super::{PbdStage, SimClock, SimParams, StageTimings};

/// Passes over the cloth–cloth contacts after each substep's iterations, at most: like the iterations, more
/// passes let a contact's push travel through a pile of layers.
pub const MAX_PASSES: u32 = 4;

/// Every cloth laid end to end, the contacts between different cloths, and the buffers of their search, reused
/// every step (nothing is allocated once they have grown).
#[derive(Resource, Debug, Default)]
pub struct ClothContacts {
    /// Each cloth, in query order, with the index of its first particle in the combined arrays and its count.
    cloths: Vec<(Entity, u32, u32)>,
    x: Vec<Vec3>,
    p: Vec<Vec3>,
    w: Vec<f32>,
    triangles: Vec<[u32; 3]>,
    search: SelfContactSearch,
    edge_search: EdgeContactSearch,
    untangler: Untangler,
    /// The contacts between different cloths of this step, in the combined indices.
    pub contacts: Vec<SelfContact>,
    /// The edge–edge contacts at free edges between different cloths, in the combined indices.
    pub edge_contacts: Vec<EdgeContact>,
    /// The gap the contacts keep, m.
    pub thickness: f32,
}

/// What the search reads of one cloth.
type Searched<'a> = (Entity, &'a Particles, &'a ClothMesh, &'a StretchConstraints, &'a ClothMaterial);

impl ClothContacts {
    /// Lays out the cloths end to end: particles at `x` and where the search sweeps them, triangles renumbered,
    /// and the thickness kept.
    fn gather<'a>(&mut self, cloths: impl Iterator<Item = Searched<'a>>, step: f32) {
        let ClothContacts { cloths: layout, x, p, triangles, thickness, search, .. } = self;
        let SelfContactSearch { groups: owner, group_bands, .. } = search;
        layout.clear();
        owner.clear();
        group_bands.clear();
        x.clear();
        p.clear();
        triangles.clear();
        *thickness = 0.0;
        for (k, (entity, particles, mesh, stretch, material)) in cloths.enumerate() {
            let first = x.len() as u32;
            let mean_edge = mean_rest_length(stretch.rest_length());
            layout.push((entity, first, particles.len() as u32));
            owner.extend(std::iter::repeat_n(k as u32, particles.len()));
            x.extend_from_slice(&particles.x);
            p.extend(particles.x.iter().zip(&particles.v).map(|(x, v)| sweep_end(*x, *v, step, mean_edge)));
            triangles.extend(mesh.triangles.iter().map(|t| t.map(|i| i + first)));
            let own = self_collision_thickness(material.thickness, stretch.rest_length());
            group_bands.push(own * SelfCollision::DETECTION_MARGIN);
            *thickness = thickness.max(own);
        }
    }
}

/// Line (8) for cloth against cloth, in every substep: the contacts between different cloths over the substep
/// (timed with collision generation). Clears them when the switch is off or there is one cloth.
pub fn find_cloth_contacts(
    cloths: Query<Searched>,
    params: Res<SimParams>,
    clock: Res<SimClock>,
    mut state: ResMut<ClothContacts>,
    mut timings: ResMut<StageTimings>,
) {
    if !params.cloth_collision || cloths.iter().nth(1).is_none() {
        state.contacts.clear();
        state.edge_contacts.clear();
        return;
    }
    let start = Instant::now();
    let state = &mut *state;
    state.gather(cloths.iter(), clock.dt);
    let band = state.thickness * SelfCollision::DETECTION_MARGIN;
    let ClothContacts { x, p, triangles, search, contacts, .. } = state;
    find_self_contacts(search, x, p, triangles, band, params.parallel, contacts);
    if params.untangle {
        let ClothContacts { x, triangles, untangler, contacts, .. } = state;
        untangler.release(x, triangles, contacts);
    }
    let ClothContacts { x, p, triangles, search, edge_search, edge_contacts, .. } = state;
    find_edge_contacts(edge_search, search, x, p, triangles, band, params.parallel, edge_contacts);
    timings.add(PbdStage::GenerateCollisions, start);
}

/// After each substep's iterations (lines (9)–(11)) and tethers: the cloth–cloth contacts projected on every
/// cloth's predictions at once (timed with the projection).
pub fn project_cloth_contacts(
    mut cloths: Query<&mut Particles>,
    params: Res<SimParams>,
    mut state: ResMut<ClothContacts>,
    mut timings: ResMut<StageTimings>,
) {
    if state.contacts.is_empty() && state.edge_contacts.is_empty() {
        return;
    }
    let start = Instant::now();
    let ClothContacts { cloths: layout, x, p, w, triangles, contacts, edge_contacts, thickness, .. } = &mut *state;
    let fits = |particles: &Particles, count: u32| particles.len() == count as usize;
    if !layout.iter().all(|&(e, _, count)| cloths.get(e).is_ok_and(|c| fits(c, count))) {
        // a cloth came or went since the search: its indices are stale until the next step's
        contacts.clear();
        edge_contacts.clear();
        return;
    }
    x.clear();
    p.clear();
    w.clear();
    for &(entity, ..) in layout.iter() {
        if let Ok(particles) = cloths.get(entity) {
            x.extend_from_slice(&particles.x);
            p.extend_from_slice(&particles.p);
            w.extend_from_slice(&particles.w);
        }
    }
    for _ in 0..params.iterations.clamp(1, MAX_PASSES) {
        project_self_contacts(p, x, w, triangles, contacts, *thickness, 1.0);
        project_edge_contacts(p, w, edge_contacts, *thickness);
    }
    for &(entity, first, count) in layout.iter() {
        if let Ok(mut particles) = cloths.get_mut(entity) {
            particles.p.copy_from_slice(&p[first as usize..(first + count) as usize]);
        }
    }
    timings.add(PbdStage::Project, start);
}
