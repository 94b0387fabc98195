//! [`SelfCollisionPlugin`]: each cloth's vertices against its own triangles (§4.3), found once per cloth step
//! over the vertices' swept paths (line (8) of the first substep) and projected with the cloth's constraints in
//! every iteration. Switched per scene by [`SimParams::self_collision`]; without the plugin no cloth searches.

use std::time::Instant;

use bevy::prelude::*;

use super::cloth::Awake;
use super::cloth::{ClothMaterial, ClothMesh, Particles, SelfCollision, StretchConstraints};
use super::schedule::{PbdStage, PbdSubstep, SimClock};
use super::selfcollide::{
    SELF_DEPENETRATION_SPEED, find_self_contacts, lift_squeezed_vertices, mean_rest_length, self_collision_thickness,
    split_in_halves, sweep_end,
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

/// Line (8), §4.3: in the first substep of a step, each cloth's contacts between its vertices and its own
/// triangles, searched along the step's swept paths; none while self-collision is switched off. In every
/// substep, the vertices that start it squeezed inside the band move out in x and p alike
/// (`selfcollide::lift_squeezed_vertices`).
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
        let SelfCollision { search, contacts, halves, split_scratch, step_end, untangler, thickness, lifts } =
            &mut *self_collision;
        if !params.self_collision {
            contacts.clear();
            *halves = [0, 0];
        } else if clock.substep == 0 {
            let step = clock.dt * params.substeps as f32;
            step_end.clear();
            let mean_edge = mean_rest_length(stretch.rest_length());
            step_end.extend(x.iter().zip(v).map(|(x, v)| sweep_end(*x, *v, step, mean_edge)));
            *thickness = self_collision_thickness(material.thickness, stretch.mean_shortest_edge());
            let band = *thickness * SelfCollision::DETECTION_MARGIN;
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
