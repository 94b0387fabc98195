//! [`SelfCollisionPlugin`]: each cloth's vertices against its own triangles (§4.3), found once per cloth step
//! over the vertices' swept paths (line (8) of the first substep, and again if the vertices leave them) and
//! projected with the cloth's constraints in every iteration. Switched per scene by [`SimParams::self_collision`];
//! without the plugin no cloth searches.

use std::time::Instant;

use bevy::prelude::*;

use super::cloth::Awake;
use super::cloth::{ClothMaterial, ClothMesh, Particles, SelfCollision, StretchConstraints};
use super::schedule::{PbdStage, PbdSubstep, SimClock};
use super::selfcollide::{
    SELF_DEPENETRATION_SPEED, SelfContact, Strays, find_self_contacts, find_self_contacts_of_strayed,
    lift_squeezed_vertices, mean_rest_length, self_collision_thickness, split_in_halves, sweep_end,
};
use super::{SimParams, StageTimings, stages};

/// Self-collision (§4.3): the search for each cloth's vertex–triangle contacts with itself.
pub struct SelfCollisionPlugin;

impl Plugin for SelfCollisionPlugin {
    fn build(&self, app: &mut App) {
        app.add_systems(
            PbdSubstep,
            generate_self_contacts
                .in_set(PbdStage::GenerateCollisions)
                .after(stages::generate_collisions)
                .before(stages::hold_on_bodies),
        );
    }
}

/// Line (8), §4.3: each cloth's contacts between its vertices and its own triangles, searched along the rays of
/// the rest of the step in its first substep and again in any later one whose vertices left those rays
/// ([`StepSweep`](super::selfcollide::StepSweep): a cloth stopped by a collider, or the folds a closed cloth
/// throws up as it lands); none while self-collision is switched off. In every substep, the vertices that start it squeezed inside the band move
/// out in x and p alike (`selfcollide::lift_squeezed_vertices`).
#[allow(clippy::type_complexity)]
pub fn generate_self_contacts(
    mut cloths: Query<((&mut Particles, &ClothMesh, &StretchConstraints), &mut SelfCollision, &ClothMaterial), Awake>,
    params: Res<SimParams>,
    clock: Res<SimClock>,
    mut timings: ResMut<StageTimings>,
) {
    let start = Instant::now();
    for ((mut particles, mesh, stretch), mut self_collision, material) in &mut cloths {
        let Particles { x, p, v, w, .. } = &mut *particles;
        let SelfCollision {
            search,
            contacts,
            halves,
            split_scratch,
            step_end,
            sweep,
            strayed,
            fresh,
            untangler,
            thickness,
            lifts,
        } = &mut *self_collision;
        let substeps = params.substeps.max(1);
        let rest = clock.dt * substeps.saturating_sub(clock.substep).max(1) as f32;
        let mean_edge = || mean_rest_length(stretch.rest_length());
        if !params.self_collision {
            contacts.clear();
            *halves = [0, 0];
            sweep.forget();
            // (the rays cover no later substep: the first with the switch on searches in full)
        } else if let Some(count) = sweep.strayed((x, p), clock.substep, strayed) {
            // none strayed: the step's contacts hold; else the strayed vertices are swept again over the rest of
            // the step, and the others keep their rays
            if count > 0 {
                let mean_edge = mean_edge();
                for (i, _) in strayed.iter().enumerate().filter(|(_, s)| **s) {
                    step_end[i] = sweep_end(x[i], v[i], rest, mean_edge);
                }
                let band = *thickness * SelfCollision::DETECTION_MARGIN;
                find_self_contacts_of_strayed(
                    search,
                    x,
                    step_end,
                    &mesh.triangles,
                    band,
                    params.parallel,
                    Strays { strayed, reswept: sweep.reswept(), slack: sweep.slack() },
                    fresh,
                );
                let moved = |c: &SelfContact| {
                    let corners = mesh.triangles.get(c.triangle as usize).copied().unwrap_or_default();
                    std::iter::once(c.vertex).chain(corners).any(|k| strayed.get(k as usize).copied().unwrap_or(true))
                };
                contacts.retain(|c| !moved(c));
                contacts.append(fresh);
                contacts.sort_unstable_by_key(|c| (c.vertex, c.triangle));
                if params.untangle {
                    untangler.release(x, &mesh.triangles, contacts);
                }
                *halves = split_in_halves(contacts, x, &mesh.triangles, split_scratch);
                sweep.resweep(strayed, (x, step_end), clock.substep);
            }
        } else {
            // the step's first substep, or the first since the rays were forgotten: a search in full
            step_end.clear();
            let mean_edge = mean_edge();
            step_end.extend(x.iter().zip(v.iter()).map(|(x, v)| sweep_end(*x, *v, rest, mean_edge)));
            *thickness = self_collision_thickness(material.thickness, stretch.mean_shortest_edge());
            let band = *thickness * SelfCollision::DETECTION_MARGIN;
            sweep.remember((x, step_end), (clock.substep, substeps), band - *thickness);
            find_self_contacts(search, x, step_end, &mesh.triangles, band, params.parallel, contacts);
            if params.untangle {
                untangler.release(x, &mesh.triangles, contacts);
            }
            *halves = split_in_halves(contacts, x, &mesh.triangles, split_scratch);
        }
        let (h, reach) = (*thickness, SELF_DEPENETRATION_SPEED * clock.dt);
        lift_squeezed_vertices((x, p, w), (&mesh.triangles, contacts), |_, _| h, reach, lifts);
    }
    timings.add(PbdStage::GenerateCollisions, start);
}
