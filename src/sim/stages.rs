//! The thin systems of the [`PbdSubstep`](super::PbdSubstep) stages: each reads the cloth components, calls
//! one pure kernel per cloth, and records its wall time. No allocation here: the only growable buffers are the
//! per-cloth contact lists and the collider list, both cleared and refilled with their capacity kept.

use std::time::Instant;

use bevy::ecs::query::QueryItem;
use bevy::prelude::*;

use super::cloth::Awake;
use super::cloth::{
    Attachments, Balloon, BendConstraints, BodyAttachments, CappedMoves, ClothCollider, ClothMaterial, ClothMesh,
    ClothSolver, ColliderPlanes, Contact, Contacts, FeatureContacts, Grabbed, HostedBody, Particles, PreviousPose,
    SelfCollision, SolverStiffness, StartingOverlaps, StretchConstraints,
};
use super::collide::{
    ColliderMotion, ColliderShape,
    contact::ContactKind,
    contacts::{
        DEPENETRATION_SPEED, PlanStep, SliceContacts, any_planed, depenetrate, drop_contacts_with_holding_body,
        generate_step_contacts, lend_body_masses, lift_starts, push_out_of_colliders, return_body_masses,
    },
    exits::{aim_at_exits, choose_exits},
    features::{FeatureCloth, find_feature_contacts},
    hold::{HeldBody, gap_left},
    response::apply_friction_restitution,
};
use super::colliders::{CollisionWorld, ExternalColliders};
use super::constraints::bend::{Folds, fold_stiffnesses};
use super::constraints::plan::ProjectionPlan;
use super::constraints::response::linearized;
use super::constraints::volume::VolumeGoal;
use super::constraints::{
    ClothConstraints, ProjectionScratch, SolverSettings, attach::apply_attachments, project_constraints,
};
use super::parallel::{SliceOutputs, solver_threads};
use super::rigid::{ClothRigidBody, give_back};
use super::side_by_side::SideBySide;
use super::{PbdStage, SimClock, SimParams, StageTimings, damping as damp, integrate};

/// Line (5): gravity on every cloth and every rigid body (the air is [`AerodynamicsPlugin`]'s), less the share of
/// a body's weight another engine's contacts hold up ([`HostedBody::support`]).
///
/// [`AerodynamicsPlugin`]: super::aerodynamics::AerodynamicsPlugin
pub fn external_forces(
    mut cloths: Query<&mut Particles, Awake>,
    mut bodies: Query<(&mut ClothRigidBody, Option<&HostedBody>)>,
    params: Res<SimParams>,
    clock: Res<SimClock>,
    mut timings: ResMut<StageTimings>,
) {
    let start = Instant::now();
    for mut particles in &mut cloths {
        let Particles { v, w, .. } = &mut *particles;
        integrate::apply_gravity(v, w, params.gravity, clock.dt, params.parallel);
    }
    for (mut body, hosted) in &mut bodies {
        let held_up = hosted.map_or(0.0, |h| h.support);
        body.apply_gravity(params.gravity * (1.0 - held_up), clock.dt);
    }
    timings.add(PbdStage::ExternalForces, start);
}

/// Line (6): §3.5 damping, with k_damping converted from per step to per substep; several cloths side by side.
pub fn damping(
    mut cloths: Query<(Entity, &mut Particles), Awake>,
    params: Res<SimParams>,
    mut side_by_side: Local<SideBySide>,
    mut timings: ResMut<StageTimings>,
) {
    let start = Instant::now();
    let damping = linearized(params.damping, params.substeps);
    let damp = |mut particles: Mut<Particles>, parallel: bool| {
        let Particles { x, v, w, mass, .. } = &mut *particles;
        damp::damp_velocities(x, v, mass, w, damping, parallel);
    };
    if side_by_side.choose(params.parallel, cloths.iter().map(|(entity, particles)| (entity, particles.len()))) {
        side_by_side.run(&mut cloths, |(_, particles), _| damp(particles, false));
    } else {
        for (_, particles) in &mut cloths {
            damp(particles, params.parallel);
        }
    }
    timings.add(PbdStage::Damping, start);
}

/// Line (7) and §3.6: predict, then put attached vertices on their targets at the end of the substep.
/// A particle held by the pointer is an attachment too.
pub fn predict(
    mut cloths: Query<(&mut Particles, &Attachments, Option<&Grabbed>, &mut ClothSolver), Awake>,
    params: Res<SimParams>,
    clock: Res<SimClock>,
    mut timings: ResMut<StageTimings>,
) {
    let start = Instant::now();
    for (mut particles, attachments, grabbed, mut solver) in &mut cloths {
        let Particles { x, v, p, .. } = &mut *particles;
        solver.rounding = integrate::rounding_tolerance(integrate::predict(x, v, p, clock.dt, params.parallel));
        apply_attachments(p, &attachments.0, clock.time + f64::from(clock.dt));
        if let Some(g) = grabbed
            && let Some(slot) = p.get_mut(g.vertex as usize)
        {
            *slot = g.target;
        }
    }
    timings.add(PbdStage::Predict, start);
}

/// Line (7) for rigid bodies (§4.2): each moves by its velocities, remembering its pose at the start of the
/// substep, and rests on the static planes unless another engine hosts it (its contacts are that engine's).
pub fn move_bodies(
    mut bodies: Query<(&ClothCollider, &mut ClothRigidBody, &mut Transform, &mut PreviousPose, Has<HostedBody>)>,
    fixed: Query<(&ClothCollider, &Transform), Without<ClothRigidBody>>,
    params: Res<SimParams>,
    clock: Res<SimClock>,
) {
    let rest_speed = resting_speed(&params, clock.dt);
    for (collider, mut body, mut pose, mut previous, hosted) in &mut bodies {
        previous.0 = *pose;
        body.cap_speed_of(integrate::MAX_SPEED, &collider.shape);
        body.integrate(&mut pose, clock.dt);
        for (plane, at) in fixed.iter().filter(|_| !hosted) {
            if plane.shape == ColliderShape::Plane && plane.motion == ColliderMotion::Static {
                let surface =
                    (plane.friction.unwrap_or(params.friction), plane.restitution.unwrap_or(params.restitution));
                body.collide_with_plane(
                    &mut pose,
                    &collider.shape,
                    (at.translation, at.up().as_vec3()),
                    surface,
                    rest_speed,
                );
            }
        }
    }
}

/// What line (8) reads of a collider entity: its shape, pose and pose at the start of the substep.
type SceneCollider = (Entity, &'static ClothCollider, &'static Transform, Option<&'static PreviousPose>);

/// What line (8) reads of a cloth: its particles, material and mesh.
type CollidingCloth = (&'static Particles, &'static ClothMaterial, &'static ClothMesh);

/// What line (8) writes of a cloth: its collider contacts and the step's planes, its feature contacts and its
/// starting overlaps; and which of its vertices a body holds.
type CollisionOutputs = (
    (&'static mut Contacts, &'static mut ColliderPlanes),
    &'static mut FeatureContacts,
    &'static mut StartingOverlaps,
    &'static BodyAttachments,
);

/// Line (8): collision constraints against every collider swept over the substep (§3.4), a still mesh's from the
/// step's planes (`collide::planes`), and its edges against the cloth's triangles (§4.2). A cloth's contacts are
/// its own, so several cloths are searched side by side.
pub fn generate_collisions(
    mut cloths: Query<(Entity, CollidingCloth, CollisionOutputs), Awake>,
    colliders: (Query<SceneCollider>, Option<Res<ExternalColliders>>),
    params: Res<SimParams>,
    clock: Res<SimClock>,
    mut world: ResMut<CollisionWorld>,
    mut side_by_side: Local<SideBySide<SliceOutputs<SliceContacts>>>,
    mut timings: ResMut<StageTimings>,
) {
    let start = Instant::now();
    let (colliders, external) = colliders;
    world.gather(colliders.iter(), external.as_deref(), &params);
    let CollisionWorld { colliders, slices, features: edges, .. } = &mut *world;
    // a still mesh gets the step's planes; without one, every collider is searched in every substep
    let plannable = any_planed(colliders);
    let search = |(_, cloth, outputs): QueryItem<(Entity, CollidingCloth, CollisionOutputs)>,
                  slices: &mut SliceOutputs<SliceContacts>,
                  parallel: bool| {
        let ((particles, material, mesh), ((mut contacts, mut planes), mut features, mut overlaps, holds)) =
            (cloth, outputs);
        let Particles { x, p, v, w, .. } = particles;
        let margin = (material.thickness, clock.dt);
        let step = PlanStep {
            substep: clock.substep,
            substeps: clock.substeps,
            slack: plane_slack(material, &params, &clock),
        };
        let planes = plannable.then_some((&mut planes.0, step));
        generate_step_contacts((x, p, v, w), colliders, margin, (slices, parallel), planes, &mut contacts.0);
        let cloth = FeatureCloth { x, p, w, triangles: &mesh.triangles };
        // with `collider_edges` off the features are empty and this finds nothing
        let FeatureContacts { contacts: found, search } = &mut *features;
        find_feature_contacts(cloth, (colliders, edges), (material.thickness, clock.dt, parallel), found, search);
        // a vertex a body holds is where its body puts it
        let held = |vertex: u32| holds.0.iter().any(|a| a.vertex == vertex);
        let grown = (colliders.as_slice(), material.thickness);
        let overlaps = &mut overlaps.0;
        if overlaps.allowance.is_none() {
            overlaps.triangles_inside = found.iter().any(|c| c.started_inside);
            let up = (-params.gravity).normalize_or_zero();
            overlaps.exits = choose_exits((x, &mesh.triangles), &contacts.0, grown, up, held);
        }
        aim_at_exits(x, &mut contacts.0, grown, (&overlaps.exits, overlaps.allowance.as_deref()), held);
        depenetrate(x, &mut contacts.0, DEPENETRATION_SPEED * clock.dt, overlaps, held);
    };
    let particles = cloths.iter().map(|(_, (particles, ..), _)| particles.len()).sum();
    let sizes = cloths.iter().map(|(entity, (particles, ..), _)| (entity, particles.len()));
    if side_by_side.choose(params.parallel && worth_sharing(particles, colliders.len()), sizes) {
        side_by_side.run(&mut cloths, |cloth, slices| search(cloth, slices, false));
    } else {
        for cloth in &mut cloths {
            search(cloth, slices, params.parallel);
        }
    }
    timings.add(PbdStage::GenerateCollisions, start);
}

/// How far a vertex may leave the path its first substep forecasts and keep the step's planes, metres: the
/// cloth's thickness, and the drop gravity adds over the step to that straight forecast.
fn plane_slack(material: &ClothMaterial, params: &SimParams, clock: &SimClock) -> f32 {
    material.thickness + 0.5 * params.gravity.length() * clock.step_dt * clock.step_dt
}

/// Line (8) for the rigid bodies (§4.2): after the surface contacts, a hold for each vertex a body holds, with the
/// share of the body's mass it lends the vertex ([`Contact::held`]), and none of the vertex's surface contacts with
/// that body; and every body as its holds and surface contacts will see and move it ([`HeldBodies`]).
pub fn hold_on_bodies(
    mut cloths: Query<(&Particles, &BodyAttachments, &mut Contacts), Awake>,
    bodies: Query<(&ClothRigidBody, &Transform)>,
    world: Res<CollisionWorld>,
    mut held: ResMut<HeldBodies>,
    mut holds_per_collider: Local<Vec<u32>>,
    clock: Res<SimClock>,
    mut timings: ResMut<StageTimings>,
) {
    held.0.clear();
    if bodies.is_empty() {
        return;
    }
    let start = Instant::now();
    count_holds(cloths.iter().map(|(_, holds, _)| holds), &world, &mut holds_per_collider);
    let body = |k: usize| world.entities.get(k).and_then(|&entity| bodies.get(entity).ok());
    held.0.extend((0..world.colliders.len()).map(|k| match body(k) {
        Some((body, pose)) => body.held(pose),
        None => HeldBody::immovable(),
    }));
    // the gap another engine's step opened closes over the step (`gap_left`)
    let (reach, left) = (DEPENETRATION_SPEED * clock.dt, clock.substeps.saturating_sub(clock.substep));
    for (particles, holds, mut contacts) in &mut cloths {
        for a in &holds.0 {
            let i = a.vertex as usize;
            let (Some(k), Some(&predicted), Some(&start)) =
                (world.index_of(a.body), particles.p.get(i), particles.x.get(i))
            else {
                continue;
            };
            let (point, shift) = world.colliders[k].follow(a.local);
            let point = point + gap_left(start - (point - shift), reach, left);
            let lent = bodies.get(a.body).map_or(0.0, |(body, pose)| {
                body.mass_lent_per_hold(pose, point, holds_per_collider.get(k).copied().unwrap_or(1))
            });
            contacts.0.push(Contact::held(a.vertex, k as u32, (point, shift), predicted, lent));
        }
        drop_contacts_with_holding_body(&mut contacts.0);
    }
    timings.add(PbdStage::GenerateCollisions, start);
}

/// The bodies of this substep, by collider index in the [`CollisionWorld`], as the holds and surface contacts see
/// and move them within the projection (§4.2, `collide::hold`, `collide::contacts::project_contacts`); colliders
/// that are no body are immovable.
#[derive(Resource, Clone, Debug, Default)]
pub struct HeldBodies(pub(crate) Vec<HeldBody>);

/// After lines (9)–(11): each body takes the correction its holds and contacts gave it, in its pose and velocities,
/// and its collider's end pose with it, so the push-out of the last substep finds the cloth inside the body where
/// the body is.
pub fn settle_held_bodies(
    held: Res<HeldBodies>,
    mut world: ResMut<CollisionWorld>,
    mut bodies: Query<(&mut ClothRigidBody, &mut Transform, Option<&mut HostedBody>)>,
    clock: Res<SimClock>,
) {
    // a body nothing touched keeps its pose untouched: a write would count as a move (change detection)
    let corrected = |h: &HeldBody| h.inverse_mass > 0.0 && (h.shift != Vec3::ZERO || h.turn != Vec3::ZERO);
    for (k, correction) in held.0.iter().enumerate().filter(|(_, h)| corrected(h)) {
        let entity = world.entities.get(k).copied();
        if let Some(Ok((mut body, mut pose, hosted))) = entity.map(|e| bodies.get_mut(e)) {
            body.settle(&mut pose, correction, clock.dt);
            if let Some(mut hosted) = hosted {
                hosted.touched = true;
            }
            if let Some(collider) = world.colliders.get_mut(k) {
                collider.carry(correction.centre, correction.shift, correction.turn);
            }
        }
    }
}

/// How many cloth vertices each collider of `world` holds, over every cloth.
fn count_holds<'a>(holds: impl Iterator<Item = &'a BodyAttachments>, world: &CollisionWorld, counts: &mut Vec<u32>) {
    counts.clear();
    counts.resize(world.colliders.len(), 0);
    for a in holds.flat_map(|h| &h.0) {
        if let Some(k) = world.index_of(a.body) {
            counts[k] += 1;
        }
    }
}

/// What the projection reads and writes of one cloth.
type ProjectedCloth = (
    &'static mut Particles,
    (&'static StretchConstraints, &'static BendConstraints, &'static mut ProjectionPlan),
    (&'static ClothMesh, &'static SelfCollision, Option<&'static mut Balloon>),
    (&'static mut Contacts, &'static mut FeatureContacts),
    (&'static SolverStiffness, &'static mut ClothSolver),
);

/// Before lines (9)–(11): each vertex a body holds carries the share of the body's mass its hold lends it
/// ([`lend_body_masses`], the implicit coupling of holds, §4.2) until [`return_lent_masses`].
pub fn lend_masses_to_holds(cloths: Query<HeldCloth, Awake>) {
    set_held_masses(cloths, lend_body_masses);
}

/// After lines (9)–(11): the held vertices' own inverse masses back.
pub fn return_lent_masses(cloths: Query<HeldCloth, Awake>) {
    set_held_masses(cloths, return_body_masses);
}

/// What lending masses to held vertices reads and writes of one cloth.
type HeldCloth = (&'static mut Particles, &'static Contacts, &'static BodyAttachments);

/// Runs `set(w, mass, contacts)` on every cloth that a body holds.
fn set_held_masses(mut cloths: Query<HeldCloth, Awake>, set: fn(&mut [f32], &[f32], &[Contact])) {
    for (mut particles, contacts, holds) in &mut cloths {
        if !holds.0.is_empty() {
            let Particles { w, mass, .. } = &mut *particles;
            set(w, mass, &contacts.0);
        }
    }
}

/// Lines (9)–(11): the iterated projection of every cloth's constraints. Cloths that share no movable body are
/// independent, and several of them are projected side by side (`SideBySide`), each on one thread.
pub fn project(
    mut cloths: Query<(Entity, ProjectedCloth), Awake>,
    mut held: ResMut<HeldBodies>,
    params: Res<SimParams>,
    clock: Res<SimClock>,
    mut side_by_side: Local<SideBySide>,
    mut timings: ResMut<StageTimings>,
) {
    let start = Instant::now();
    let threads = solver_threads(params.parallel);
    let independent = params.parallel && !held.0.iter().any(HeldBody::movable);
    let sizes = cloths.iter().map(|(entity, (particles, ..))| (entity, particles.len()));
    if side_by_side.choose(independent, sizes) {
        side_by_side.run(&mut cloths, |(_, cloth), _| {
            project_cloth(cloth, &mut [], (&params, &clock), (threads, false));
        });
    } else {
        for (_, cloth) in &mut cloths {
            project_cloth(cloth, &mut held.0, (&params, &clock), (threads, threads > 1));
        }
    }
    timings.add(PbdStage::Project, start);
}

/// Lines (9)–(11) for one cloth: its plan cut for `threads`, and projected on them if `parallel` (the cloth is
/// alone on the solver's threads).
fn project_cloth(
    cloth: QueryItem<ProjectedCloth>,
    bodies: &mut [HeldBody],
    (params, clock): (&SimParams, &SimClock),
    (threads, parallel): (usize, bool),
) {
    let (
        mut particles,
        (stretch, bend, mut plan),
        (mesh, self_collision, balloon),
        (mut contacts, mut features),
        (stiffness, solver),
    ) = cloth;
    if !plan.is_for(stretch, bend) || plan.threads() != threads {
        *plan = ProjectionPlan::new(stretch, bend, threads);
    }
    let Particles { x, p, w, .. } = &mut *particles;
    let solver = solver.into_inner();
    let share = stiffness.xpbd_weight();
    let alpha = [stiffness.stretch_compliance, stiffness.bend_compliance, stiffness.volume_compliance];
    let paper = [stiffness.stretch_stiffness, stiffness.bend_stiffness];
    let xpbd = (share > 0.0).then(|| ([alpha[0], alpha[1]].map(|a| a / (clock.dt * clock.dt)), share));
    let [stretch_k, bend_k] = fold_stiffnesses(paper, xpbd, (w, stretch.rest_length()), params.bending_model);
    let folds = Folds::for_cloth(stretch_k, bend_k);
    let mut settings = SolverSettings {
        parallel,
        folds,
        rounding: solver.rounding,
        ..SolverSettings::new(params.iterations, paper[0], paper[1], params.bending_model)
    };
    if share > 0.0 {
        settings = settings.xpbd(alpha, share, clock.dt);
    }
    if folds == Folds::Leave && share >= 1.0 {
        // XPBD alone: its multipliers are the hinges' torques, capped instead of leaving the folds
        let free = w.iter().filter(|w| **w > 0.0);
        settings = settings.yielding(free.clone().sum::<f32>() / free.count().max(1) as f32);
    }
    solver.folds = settings.folds;
    let mut no_gradient = Vec::new();
    let (volume_target, volume_gradient) = match balloon.map(Mut::into_inner) {
        Some(Balloon { target_volume, rest_volume, gradient, .. }) => {
            (target_volume.map(|v| VolumeGoal::new(v, *rest_volume, clock.dt)), gradient)
        }
        None => (None, &mut no_gradient),
    };
    let cloth = ClothConstraints {
        triangles: &mesh.triangles,
        self_contacts: &self_collision.contacts,
        self_contact_halves: self_collision.halves,
        thickness: self_collision.thickness,
        volume_target,
        ..ClothConstraints::internal(stretch, bend, &plan)
    };
    if let Some(xpbd) = settings.xpbd.as_mut() {
        (xpbd.global_stretch, xpbd.global_bending) = (params.global_stretch, params.global_bending);
    }
    let ClothSolver { multipliers, global, .. } = solver;
    let features = &mut features.contacts;
    let scratch =
        ProjectionScratch { contacts: &mut contacts.0, features, bodies, volume_gradient, multipliers, global };
    project_constraints(p, x, w, cloth, scratch, settings);
}

/// End of lines (9)–(11) in the last substep of a step: §3.4's test once more, on the projected positions. A
/// vertex the constraints pulled into a collider after line (8) had found it clear goes back onto the surface,
/// with a contact for line (16) and §4.2 ([`push_out_of_colliders`]). Only the last substep's positions are drawn
/// and start the next step; after an earlier substep the next one's line (8) finds such a vertex inside and makes
/// its contact (the static case of §3.4), so testing every substep would cost the same work again for nothing.
/// Every substep, first, the vertices leaving a starting overlap move their starts with them ([`lift_starts`]).
pub fn push_out(
    mut cloths: Query<(Entity, &mut Particles, &ClothMaterial, &mut Contacts, &StartingOverlaps), Awake>,
    params: Res<SimParams>,
    clock: Res<SimClock>,
    mut world: ResMut<CollisionWorld>,
    mut side_by_side: Local<SideBySide<SliceOutputs<SliceContacts>>>,
    mut timings: ResMut<StageTimings>,
) {
    let start = Instant::now();
    let last = clock.substep + 1 >= clock.substeps;
    let CollisionWorld { colliders, slices, .. } = &mut *world;
    let push = |(_, mut particles, material, mut contacts, overlaps): QueryItem<PushedOut>,
                slices: &mut SliceOutputs<SliceContacts>,
                parallel: bool| {
        let Particles { x, p, v, w, .. } = &mut *particles;
        let allowance = overlaps.allowance();
        lift_starts(x, p, &overlaps.0.lift, integrate::MAX_SPEED * clock.dt);
        if last {
            let margin = (material.thickness, clock.dt);
            push_out_of_colliders((x, p, v, w), colliders, margin, (slices, parallel), (&mut contacts.0, allowance));
        }
    };
    let particles = cloths.iter().map(|(_, particles, ..)| particles.len()).sum();
    let sizes = cloths.iter().map(|(entity, particles, ..)| (entity, particles.len()));
    let worth = last && worth_sharing(particles, colliders.len());
    if side_by_side.choose(params.parallel && worth, sizes) {
        side_by_side.run(&mut cloths, |cloth, slices| push(cloth, slices, false));
    } else {
        for cloth in &mut cloths {
            push(cloth, slices, params.parallel);
        }
    }
    timings.add(PbdStage::Project, start);
}

/// Vertex–collider pairs below which the cloths' contacts are searched one cloth at a time: handing the cloths to
/// the threads costs more than such a search.
const SIDE_BY_SIDE_PAIRS: usize = 8192;

/// Whether a search of `colliders` over cloths of `particles` vertices in all is worth running side by side.
fn worth_sharing(particles: usize, colliders: usize) -> bool {
    particles * colliders >= SIDE_BY_SIDE_PAIRS
}

/// What [`push_out`] reads and writes of a cloth.
type PushedOut =
    (Entity, &'static mut Particles, &'static ClothMaterial, &'static mut Contacts, &'static StartingOverlaps);

/// Lines (12)–(15).
pub fn update_velocity(
    mut cloths: Query<(&mut Particles, &mut CappedMoves), Awake>,
    params: Res<SimParams>,
    clock: Res<SimClock>,
    mut timings: ResMut<StageTimings>,
) {
    let start = Instant::now();
    for (mut particles, mut capped) in &mut cloths {
        let Particles { x, p, v, w, .. } = &mut *particles;
        capped.0 += u64::from(integrate::update_velocities(x, p, v, w, clock.dt, params.parallel));
    }
    timings.add(PbdStage::UpdateVelocity, start);
}

/// Line (16): friction and restitution on the vertices that had contacts. Impacts slower than the speed
/// gravity adds in two substeps count as resting contact and do not bounce.
pub fn velocity_response(
    mut cloths: Query<(&mut Particles, &mut Contacts), Awake>,
    params: Res<SimParams>,
    clock: Res<SimClock>,
    mut timings: ResMut<StageTimings>,
) {
    let start = Instant::now();
    let rest_speed = resting_speed(&params, clock.dt);
    for (mut particles, mut contacts) in &mut cloths {
        apply_friction_restitution(&mut particles.v, &mut contacts.0, rest_speed, clock.dt);
    }
    timings.add(PbdStage::VelocityResponse, start);
}

/// Impacts slower than the speed gravity adds in two substeps of `dt` are resting contact: no bounce.
fn resting_speed(params: &SimParams, dt: f32) -> f32 {
    2.0 * params.gravity.length() * dt
}

/// §4.2, two-way coupling: every rigid body receives, at each contact point, the opposite of the momentum
/// m_i (Δp_i/Δt + Δv_i) its contact gave cloth vertex i in this substep and that it did not share within the
/// projection ([`Contact::momentum_given`]); what it cannot take (a vertex that outweighs it there) the vertex gives
/// back.
pub fn couple_bodies(
    mut cloths: Query<CoupledCloth, Awake>,
    mut bodies: Query<(&mut ClothRigidBody, &Transform, Option<&mut HostedBody>)>,
    world: Res<CollisionWorld>,
    clock: Res<SimClock>,
    mut pushing: Local<PushingMasses>,
    mut found: Local<Vec<Push>>,
    mut timings: ResMut<StageTimings>,
) {
    if bodies.is_empty() {
        return;
    }
    let start = Instant::now();
    pushing.sum(&cloths, &world, clock.dt);
    for (mut particles, contacts, features) in &mut cloths {
        found.clear();
        found.extend(collider_pushes(&particles, (contacts, features), &world, clock.dt));
        for push in found.iter() {
            if let Ok((mut body, pose, hosted)) = bodies.get_mut(push.entity) {
                let taken = body.take_from_vertex(pose, push.given, pushing.of(push), push.point);
                if let Some(mut hosted) = hosted.filter(|_| taken > 0.0) {
                    hosted.touched = true;
                }
                let Particles { v, mass, w, .. } = &mut *particles;
                give_back(v, (mass, w), push.vertex, push.given * (1.0 - taken));
            }
        }
    }
    timings.add(PbdStage::VelocityResponse, start);
}

/// What §4.2's coupling reads of a cloth: its particles and its collider contacts of the substep.
pub(crate) type CoupledCloth = (&'static mut Particles, &'static Contacts, &'static FeatureContacts);

/// One cloth vertex's part in a collider's surface contact of the substep, as §4.2's coupling reads it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Push {
    /// The collider's entity.
    pub entity: Entity,
    /// The collider's index in the substep's `CollisionWorld`.
    pub collider: u32,
    /// The cloth vertex.
    pub vertex: u32,
    /// The vertex's mass, kg.
    pub mass: f32,
    /// The momentum mᵢ(Δpᵢ/Δt + Δvᵢ) the contact gave the vertex.
    pub given: Vec3,
    /// Where the collider takes the opposite.
    pub point: Vec3,
}

/// Every vertex's part in the collider surface contacts of one cloth in this substep: the vertex contacts, then
/// the three vertices of each feature contact (the body takes their momentum at its feature point). Holds are not
/// among them: a hold and its body shared each correction within the projection (`collide::hold`).
pub(crate) fn collider_pushes<'a>(
    particles: &'a Particles,
    (contacts, features): (&'a Contacts, &'a FeatureContacts),
    world: &'a CollisionWorld,
    dt: f32,
) -> impl Iterator<Item = Push> + 'a {
    let entity = |k: u32| world.entities.get(k as usize).copied();
    let mass = |i: u32| particles.mass.get(i as usize).copied();
    let surfaces = contacts.0.iter().filter(|c| c.kind == ContactKind::Surface);
    let of_contacts = surfaces.filter_map(move |c| {
        let (entity, mass) = (entity(c.collider)?, mass(c.vertex)?);
        let (collider, vertex, point, given) = (c.collider, c.vertex, c.point, c.momentum_given(mass, dt));
        Some(Push { entity, collider, vertex, mass, given, point })
    });
    let of_features = features.contacts.iter().flat_map(move |c| {
        c.vertices.into_iter().zip(c.moved).filter_map(move |(vertex, moved)| {
            let (entity, mass) = (entity(c.collider)?, mass(vertex)?);
            let (collider, point, given) = (c.collider, c.point, moved * (mass / dt));
            Some(Push { entity, collider, vertex, mass, given, point })
        })
    });
    of_contacts.chain(of_features)
}

/// Per collider, the mass of the cloth vertices its surface contacts pushed in this substep: the mass a body's
/// impulse back is weighed against ([`ClothRigidBody::take_from_vertex`]). Weighed against each vertex alone,
/// several vertices meeting a light body in one substep each sent it back as hard as one could, and a 4 g ball
/// left a heavy sheet faster than it came.
#[derive(Clone, Debug, Default)]
pub(crate) struct PushingMasses(Vec<f32>);

impl PushingMasses {
    /// Sums the masses of the vertices each collider's surface and feature contacts gave momentum in `cloths`.
    pub(crate) fn sum(&mut self, cloths: &Query<CoupledCloth, Awake>, world: &CollisionWorld, dt: f32) {
        self.0.clear();
        self.0.resize(world.entities.len(), 0.0);
        for (particles, contacts, features) in cloths {
            for push in collider_pushes(particles, (contacts, features), world, dt) {
                if let Some(total) = self.0.get_mut(push.collider as usize).filter(|_| push.given != Vec3::ZERO) {
                    *total += push.mass;
                }
            }
        }
    }

    /// The mass `push` pushes its body with: every vertex its collider pushed in the substep.
    pub(crate) fn of(&self, push: &Push) -> f32 {
        self.0.get(push.collider as usize).map_or(push.mass, |total| total.max(push.mass))
    }
}

/// Before each cloth step: the solver's stiffnesses and compliances follow the materials, and the share of XPBD
/// the cloth's solver (see [`SolverStiffness`]).
pub fn ease_stiffness(
    mut cloths: Query<(&ClothMaterial, &mut SolverStiffness, &ClothSolver), Awake>,
    params: Res<SimParams>,
    clock: Res<SimClock>,
) {
    for (material, mut stiffness, solver) in &mut cloths {
        let mut next = *stiffness;
        next.ease_toward(material, solver.active(params.solver), clock.step_dt);
        stiffness.set_if_neq(next);
    }
}
