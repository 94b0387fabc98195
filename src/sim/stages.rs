//! The thin systems of the [`PbdSubstep`](super::PbdSubstep) stages: each reads the cloth components, calls
//! one pure kernel per cloth, and records its wall time. No allocation here: the only growable buffers are the
//! per-cloth contact lists and the collider list, both cleared and refilled with their capacity kept.

use std::time::Instant;

use bevy::prelude::*;

use super::cloth::{
    Attachments, BendConstraints, ClothMaterial, ClothMesh, Contacts, Grabbed, Particles, SolverStiffness,
    StretchConstraints,
};
use super::collide::{Collider, contacts::generate_contacts, response::apply_friction_restitution, shapes::Shape};
use super::constraints::plan::ProjectionPlan;
use super::constraints::{ClothConstraints, SolverSettings, attach::apply_attachments, project_constraints};
use super::params::linearized;
use super::wind::Wind;
use super::{PbdStage, SimClock, SimParams, StageTimings, damping as damp, integrate};

/// Line (5): gravity and air (mean wind plus gust) on every cloth.
pub fn external_forces(
    mut cloths: Query<(&mut Particles, &ClothMesh)>,
    params: Res<SimParams>,
    wind: Res<Wind>,
    clock: Res<SimClock>,
    mut timings: ResMut<StageTimings>,
) {
    let start = Instant::now();
    let air = wind.velocity(&params);
    for (mut particles, mesh) in &mut cloths {
        let Particles { x, v, w, .. } = &mut *particles;
        integrate::apply_gravity(v, w, params.gravity, clock.dt);
        integrate::apply_aerodynamics(x, v, w, &mesh.triangles, air, params.air_drag, clock.dt);
    }
    timings.add(PbdStage::ExternalForces, start);
}

/// Line (6): §3.5 damping, with k_damping converted from per step to per substep.
pub fn damping(mut cloths: Query<&mut Particles>, params: Res<SimParams>, mut timings: ResMut<StageTimings>) {
    let start = Instant::now();
    let k = linearized(params.damping, params.substeps);
    for mut particles in &mut cloths {
        let Particles { x, v, w, mass, .. } = &mut *particles;
        damp::damp_velocities(x, v, mass, w, k);
    }
    timings.add(PbdStage::Damping, start);
}

/// Line (7) and §3.6: predict, then put attached vertices on their targets at the end of the substep.
/// A particle held by the pointer is an attachment too.
pub fn predict(
    mut cloths: Query<(&mut Particles, &Attachments, Option<&Grabbed>)>,
    clock: Res<SimClock>,
    mut timings: ResMut<StageTimings>,
) {
    let start = Instant::now();
    for (mut particles, attachments, grabbed) in &mut cloths {
        let Particles { x, v, p, .. } = &mut *particles;
        integrate::predict(x, v, p, clock.dt);
        apply_attachments(p, &attachments.0, clock.time + clock.dt);
        if let Some(g) = grabbed
            && let Some(slot) = p.get_mut(g.vertex as usize)
        {
            *slot = g.target;
        }
    }
    timings.add(PbdStage::Predict, start);
}

/// Line (8): collision constraints against every collider, once per substep.
pub fn generate_collisions(
    mut cloths: Query<(&Particles, &mut Contacts, &ClothMaterial)>,
    colliders: Query<(&Collider, &Transform)>,
    mut shapes: Local<Vec<Shape>>,
    mut timings: ResMut<StageTimings>,
) {
    let start = Instant::now();
    shapes.clear();
    shapes.extend(colliders.iter().map(|(c, t)| c.world_shape(t)));
    for (particles, mut contacts, material) in &mut cloths {
        let Particles { x, p, v, w, .. } = particles;
        generate_contacts(x, p, v, w, &shapes, material.thickness, &mut contacts.0);
    }
    timings.add(PbdStage::GenerateCollisions, start);
}

/// Lines (9)–(11): the iterated projection of every cloth's constraints.
pub fn project(
    mut cloths: Query<(
        &mut Particles,
        &StretchConstraints,
        &BendConstraints,
        &mut ProjectionPlan,
        &mut Contacts,
        &SolverStiffness,
    )>,
    params: Res<SimParams>,
    mut timings: ResMut<StageTimings>,
) {
    let start = Instant::now();
    for (mut particles, stretch, bend, mut plan, mut contacts, stiffness) in &mut cloths {
        if !plan.is_for(stretch, bend) {
            *plan = ProjectionPlan::new(stretch, bend);
        }
        let settings = SolverSettings {
            parallel: params.parallel,
            ..SolverSettings::new(
                params.iterations,
                stiffness.stretch,
                stiffness.bend,
                params.bending_model,
                params.friction,
            )
        };
        let Particles { x, p, w, .. } = &mut *particles;
        let cloth = ClothConstraints { stretch, bend, plan: &plan };
        project_constraints(p, x, w, cloth, &mut contacts.0, settings);
    }
    timings.add(PbdStage::Project, start);
}

/// Lines (12)–(15).
pub fn update_velocity(mut cloths: Query<&mut Particles>, clock: Res<SimClock>, mut timings: ResMut<StageTimings>) {
    let start = Instant::now();
    for mut particles in &mut cloths {
        let Particles { x, p, v, .. } = &mut *particles;
        integrate::update_velocities(x, p, v, clock.dt);
    }
    timings.add(PbdStage::UpdateVelocity, start);
}

/// Line (16): friction and restitution on the vertices that had contacts. Impacts slower than the speed
/// gravity adds in two substeps count as resting contact and do not bounce.
pub fn velocity_response(
    mut cloths: Query<(&mut Particles, &Contacts)>,
    params: Res<SimParams>,
    clock: Res<SimClock>,
    mut timings: ResMut<StageTimings>,
) {
    let start = Instant::now();
    let rest_speed = 2.0 * params.gravity.length() * clock.dt;
    for (mut particles, contacts) in &mut cloths {
        apply_friction_restitution(
            &mut particles.v,
            &contacts.0,
            params.friction,
            params.restitution,
            rest_speed,
            clock.dt,
        );
    }
    timings.add(PbdStage::VelocityResponse, start);
}

/// Before each fixed step: the solver's stiffnesses follow the materials (see [`SolverStiffness`]).
pub fn ease_stiffness(mut cloths: Query<(&ClothMaterial, &mut SolverStiffness)>, time: Res<Time<Fixed>>) {
    let dt = time.timestep().as_secs_f32();
    for (material, mut stiffness) in &mut cloths {
        let mut next = *stiffness;
        next.ease_toward(material, dt);
        stiffness.set_if_neq(next);
    }
}
