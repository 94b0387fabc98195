//! The thin systems of the [`PbdSubstep`](super::PbdSubstep) stages: each reads the cloth components, calls
//! one pure kernel per cloth, and records its wall time. No allocation here: the only growable buffers are the
//! per-cloth contact lists and the collider list, both cleared and refilled with their capacity kept.

use std::time::Instant;

use bevy::prelude::*;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::cloth::{
    Attachments, Balloon, BendConstraints, BodyAttachments, Cloth, ClothMaterial, ClothMesh, ClothSolver, Collider,
    Contact, Contacts, Grabbed, HostedBody, Particles, PreviousPose, SelfCollision, SolverStiffness,
    StretchConstraints,
};
use super::collide::{
    ColliderMotion, ColliderShape,
    contacts::{
        drop_contacts_with_holding_body, generate_contacts, lend_body_masses, push_out_of_colliders, return_body_masses,
    },
    response::apply_friction_restitution,
};
use super::colliders::{CollisionWorld, ExternalColliders};
use super::constraints::bend::{Folds, folded_share};
use super::constraints::plan::ProjectionPlan;
use super::constraints::{
    ClothConstraints, ProjectionScratch, SolverSettings, attach::apply_attachments, project_constraints,
};
use super::parallel::solver_threads;
use super::params::linearized;
use super::rigid::RigidBody;
use super::selfcollide::{find_self_contacts, mean_rest_length, self_collision_thickness, split_in_halves, sweep_end};
use super::wind::next_gust;
use super::{PbdStage, SimClock, SimParams, StageTimings, damping as damp, integrate, tearing};

/// Line (5): gravity and air (mean wind plus gust) on every cloth, gravity on every rigid body.
pub fn external_forces(
    mut cloths: Query<(&mut Particles, &ClothMesh)>,
    mut bodies: Query<&mut RigidBody>,
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
        let air = (air, params.air_drag, clock.dt);
        integrate::apply_aerodynamics_by_color(x, v, w, mesh, air, params.parallel);
    }
    for mut body in &mut bodies {
        body.apply_gravity(params.gravity, clock.dt);
    }
    timings.add(PbdStage::ExternalForces, start);
}

/// Line (6): §3.5 damping, with k_damping converted from per step to per substep.
pub fn damping(mut cloths: Query<&mut Particles>, params: Res<SimParams>, mut timings: ResMut<StageTimings>) {
    let start = Instant::now();
    let k = linearized(params.damping, params.substeps);
    for mut particles in &mut cloths {
        let Particles { x, v, w, mass, .. } = &mut *particles;
        damp::damp_velocities(x, v, mass, w, k, params.parallel);
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
    mut bodies: Query<(&Collider, &mut RigidBody, &mut Transform, &mut PreviousPose, Has<HostedBody>)>,
    fixed: Query<(&Collider, &Transform), Without<RigidBody>>,
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

/// Line (8): collision constraints against every collider swept over the substep (§3.4), and (§4.3) between
/// each cloth's vertices and its own triangles.
#[allow(clippy::type_complexity)]
pub fn generate_collisions(
    mut cloths: Query<(
        (&Particles, &ClothMesh, &StretchConstraints),
        &mut Contacts,
        &mut SelfCollision,
        &ClothMaterial,
    )>,
    colliders: (Query<(Entity, &Collider, &Transform, Option<&PreviousPose>)>, Option<Res<ExternalColliders>>),
    params: Res<SimParams>,
    clock: Res<SimClock>,
    mut world: ResMut<CollisionWorld>,
    mut timings: ResMut<StageTimings>,
) {
    let start = Instant::now();
    let (colliders, external) = colliders;
    world.gather(colliders.iter(), external.as_deref(), &params);
    for ((particles, mesh, stretch), mut contacts, mut self_collision, material) in &mut cloths {
        let Particles { x, p, v, w, .. } = particles;
        let CollisionWorld { colliders, slices, .. } = &mut *world;
        let search = (slices, params.parallel);
        generate_contacts((x, p, v, w), colliders, (material.thickness, clock.dt), search, &mut contacts.0);
        let SelfCollision { search, contacts, halves, split_scratch, step_end, untangler, thickness } =
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
    }
    timings.add(PbdStage::GenerateCollisions, start);
}

/// Line (8) for the rigid bodies cloth hangs from (§4.2): after the surface contacts, a hold for each vertex a body
/// holds, with the share of the body's mass it lends the vertex ([`Contact::held`]), and none of the vertex's
/// surface contacts with that body.
pub fn hold_on_bodies(
    mut cloths: Query<(&Particles, &BodyAttachments, &mut Contacts)>,
    bodies: Query<(&RigidBody, &Transform)>,
    world: Res<CollisionWorld>,
    mut holds_per_collider: Local<Vec<u32>>,
    mut timings: ResMut<StageTimings>,
) {
    if cloths.iter().all(|(_, holds, _)| holds.0.is_empty()) {
        return;
    }
    let start = Instant::now();
    count_holds(cloths.iter().map(|(_, holds, _)| holds), &world, &mut holds_per_collider);
    for (particles, holds, mut contacts) in &mut cloths {
        for a in &holds.0 {
            let (Some(k), Some(&predicted)) = (world.index_of(a.body), particles.p.get(a.vertex as usize)) else {
                continue;
            };
            let (point, shift) = world.colliders[k].follow(a.local);
            let lent = bodies.get(a.body).map_or(0.0, |(body, pose)| {
                body.mass_lent_per_hold(pose, point, holds_per_collider.get(k).copied().unwrap_or(1))
            });
            let masses = (particles.mass.get(a.vertex as usize).copied().unwrap_or(0.0), lent);
            contacts.0.push(Contact::held(a.vertex, k as u32, (point, shift), predicted, masses));
        }
        drop_contacts_with_holding_body(&mut contacts.0);
    }
    timings.add(PbdStage::GenerateCollisions, start);
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
    &'static mut Contacts,
    (&'static SolverStiffness, &'static mut ClothSolver),
);

/// Before lines (9)–(11): each vertex a body holds carries the share of the body's mass its hold lends it
/// ([`lend_body_masses`], the implicit coupling of holds, §4.2) until [`return_lent_masses`].
pub fn lend_masses_to_holds(cloths: Query<HeldCloth>) {
    set_held_masses(cloths, lend_body_masses);
}

/// After lines (9)–(11): the held vertices' own inverse masses back.
pub fn return_lent_masses(cloths: Query<HeldCloth>) {
    set_held_masses(cloths, return_body_masses);
}

/// What lending masses to held vertices reads and writes of one cloth.
type HeldCloth = (&'static mut Particles, &'static Contacts, &'static BodyAttachments);

/// Runs `set(w, mass, contacts)` on every cloth that a body holds.
fn set_held_masses(mut cloths: Query<HeldCloth>, set: fn(&mut [f32], &[f32], &[Contact])) {
    for (mut particles, contacts, holds) in &mut cloths {
        if !holds.0.is_empty() {
            let Particles { w, mass, .. } = &mut *particles;
            set(w, mass, &contacts.0);
        }
    }
}

/// Lines (9)–(11): the iterated projection of every cloth's constraints.
pub fn project(
    mut cloths: Query<ProjectedCloth>,
    params: Res<SimParams>,
    clock: Res<SimClock>,
    mut timings: ResMut<StageTimings>,
) {
    let start = Instant::now();
    let threads = solver_threads(params.parallel);
    for (
        mut particles,
        (stretch, bend, mut plan),
        (mesh, self_collision, balloon),
        mut contacts,
        (stiffness, solver),
    ) in &mut cloths
    {
        if !plan.is_for(stretch, bend) || plan.threads() != threads {
            *plan = ProjectionPlan::new(stretch, bend, threads);
        }
        let Particles { x, p, w, .. } = &mut *particles;
        let solver = solver.into_inner();
        solver.folds = Folds::for_cloth(stiffness.stretch, stiffness.bend, || folded_share(x, bend.quads()));
        let mut settings = SolverSettings {
            parallel: threads > 1,
            folds: solver.folds,
            ..SolverSettings::new(params.iterations, stiffness.stretch, stiffness.bend, params.bending_model)
        };
        let share = stiffness.xpbd_weight();
        if share > 0.0 {
            let alpha = [stiffness.stretch_compliance, stiffness.bend_compliance, stiffness.volume_compliance];
            settings = settings.xpbd(alpha, share, clock.dt);
        }
        let mut no_gradient = Vec::new();
        let (volume_target, volume_gradient) = match balloon.map(Mut::into_inner) {
            Some(Balloon { rest_volume, gradient }) => (Some(*rest_volume * params.pressure), gradient),
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
        let multipliers = &mut solver.multipliers;
        let scratch = ProjectionScratch { contacts: &mut contacts.0, volume_gradient, multipliers };
        project_constraints(p, x, w, cloth, scratch, settings);
    }
    timings.add(PbdStage::Project, start);
}

/// End of lines (9)–(11) in the last substep of a step: §3.4's test once more, on the projected positions. A
/// vertex the constraints pulled into a collider after line (8) had found it clear goes back onto the surface,
/// with a contact for line (16) and §4.2 ([`push_out_of_colliders`]). Only the last substep's positions are drawn
/// and start the next step; after an earlier substep the next one's line (8) finds such a vertex inside and makes
/// its contact (the static case of §3.4), so testing every substep would cost the same work again for nothing.
pub fn push_out(
    mut cloths: Query<(&mut Particles, &ClothMaterial, &mut Contacts)>,
    params: Res<SimParams>,
    clock: Res<SimClock>,
    mut world: ResMut<CollisionWorld>,
    mut timings: ResMut<StageTimings>,
) {
    if clock.substep + 1 < clock.substeps {
        return;
    }
    let start = Instant::now();
    let CollisionWorld { colliders, slices, .. } = &mut *world;
    for (mut particles, material, mut contacts) in &mut cloths {
        let Particles { x, p, v, w, .. } = &mut *particles;
        let search = (&mut *slices, params.parallel);
        push_out_of_colliders((x, p, v, w), colliders, (material.thickness, clock.dt), search, &mut contacts.0);
    }
    timings.add(PbdStage::Project, start);
}

/// Lines (12)–(15).
pub fn update_velocity(mut cloths: Query<&mut Particles>, clock: Res<SimClock>, mut timings: ResMut<StageTimings>) {
    let start = Instant::now();
    for mut particles in &mut cloths {
        let Particles { x, p, v, w, .. } = &mut *particles;
        integrate::update_velocities(x, p, v, w, clock.dt);
    }
    timings.add(PbdStage::UpdateVelocity, start);
}

/// Line (16): friction and restitution on the vertices that had contacts. Impacts slower than the speed
/// gravity adds in two substeps count as resting contact and do not bounce.
pub fn velocity_response(
    mut cloths: Query<(&mut Particles, &mut Contacts)>,
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
/// m_i (Δp_i/Δt + Δv_i) its contact gave cloth vertex i in this substep.
pub fn couple_bodies(
    cloths: Query<(&Particles, &Contacts)>,
    mut bodies: Query<(&mut RigidBody, &Transform)>,
    world: Res<CollisionWorld>,
    clock: Res<SimClock>,
    mut timings: ResMut<StageTimings>,
) {
    if bodies.is_empty() {
        return;
    }
    let start = Instant::now();
    for (entity, mass, given, point) in contact_momenta(&cloths, &world, clock.dt) {
        if let Ok((mut body, pose)) = bodies.get_mut(entity) {
            body.take_from_vertex(pose, given, mass, point);
        }
    }
    timings.add(PbdStage::VelocityResponse, start);
}

/// Every collider contact of the substep as §4.2's coupling reads it: the collider's entity, the vertex's mass
/// (with what a hold's body lends it), the momentum mᵢ(Δpᵢ/Δt + Δvᵢ) the contact gave the vertex, and the contact point.
pub fn contact_momenta<'a>(
    cloths: &'a Query<(&Particles, &Contacts)>,
    world: &'a CollisionWorld,
    dt: f32,
) -> impl Iterator<Item = (Entity, f32, Vec3, Vec3)> + 'a {
    cloths.iter().flat_map(move |(particles, contacts)| {
        contacts.0.iter().filter_map(move |c| {
            let entity = *world.entities.get(c.collider as usize)?;
            let mass = *particles.mass.get(c.vertex as usize)?;
            Some((entity, mass + c.lent_mass, c.momentum_given(mass, dt), c.point))
        })
    })
}

/// Before each cloth step: the solver's stiffnesses and compliances follow the materials, and the share of XPBD
/// the cloth's solver (see [`SolverStiffness`]).
pub fn ease_stiffness(
    mut cloths: Query<(&ClothMaterial, &mut SolverStiffness, &ClothSolver)>,
    params: Res<SimParams>,
    clock: Res<SimClock>,
) {
    for (material, mut stiffness, solver) in &mut cloths {
        let mut next = *stiffness;
        next.ease_toward(material, solver.active(params.solver), clock.step_dt);
        stiffness.set_if_neq(next);
    }
}

/// After the step, §5: when tearing is on, splits up to [`MAX_TEARS_PER_STEP`] vertices of the edges stretched
/// beyond the threshold; stretch and bending constraints are rebuilt locally by the kernel, then recoloured.
/// A cloth with no overstretched edge is only read.
pub fn tear(
    mut cloths: Query<(Tearable, Option<&BodyAttachments>)>,
    params: Res<SimParams>,
    mut found: Local<Vec<tearing::Overstretched>>,
    mut held: Local<Vec<u32>>,
    mut timings: ResMut<StageTimings>,
) {
    if !params.tearing {
        return;
    }
    let start = Instant::now();
    for ((mut particles, mut mesh, mut stretch, mut bend, mut tag), holds) in &mut cloths {
        let threshold = params.tear_threshold;
        if tearing::most_stretched_edge(&particles.x, stretch.edges(), stretch.rest_length(), threshold).is_none() {
            continue;
        }
        let (mut edges, mut rest_length) = std::mem::take(&mut *stretch).into_parts();
        let (mut quads, mut rest_angle, mut rest_distance) = std::mem::take(&mut *bend).into_parts();
        held.clear();
        held.extend(holds.iter().flat_map(|h| h.0.iter().map(|a| a.vertex)));
        held.sort_unstable();
        let Particles { x, p, v, w, mass } = &mut *particles;
        let ClothMesh { triangles, uvs, .. } = &mut *mesh;
        let mut cloth = tearing::TearableCloth {
            x,
            p,
            v,
            mass,
            w,
            held: &held,
            triangles,
            uvs,
            edges: &mut edges,
            rest_length: &mut rest_length,
            quads: &mut quads,
            rest_angle: &mut rest_angle,
            rest_distance: &mut rest_distance,
        };
        tag.tears += tearing::tear_overstretched(&mut cloth, threshold, MAX_TEARS_PER_STEP, &mut found);
        let n = particles.len();
        *stretch = StretchConstraints::new(edges, rest_length, n);
        *bend = BendConstraints::new(quads, rest_angle, rest_distance, n);
    }
    timings.add_outside_step(PbdStage::Tearing, start);
}

/// What tearing edits of a cloth.
type Tearable = (
    &'static mut Particles,
    &'static mut ClothMesh,
    &'static mut StretchConstraints,
    &'static mut BendConstraints,
    &'static mut Cloth,
);

/// Most vertex splits per cloth and step: a rip opens over a few frames instead of shattering at once.
pub const MAX_TEARS_PER_STEP: usize = 8;

/// The wind the cloth feels in the current step.
#[derive(Resource, Clone, Debug)]
pub struct Wind {
    /// Current gust added to the mean wind, m/s.
    pub gust: Vec3,
    rng: SmallRng,
}

impl Wind {
    /// No gust yet; gusts drawn from a generator seeded with `seed`.
    pub fn seeded(seed: u64) -> Self {
        Self { gust: Vec3::ZERO, rng: SmallRng::seed_from_u64(seed) }
    }

    /// Mean wind plus the current gust.
    pub fn velocity(&self, params: &SimParams) -> Vec3 {
        params.wind + self.gust
    }
}

impl Default for Wind {
    fn default() -> Self {
        Self::seeded(0)
    }
}

/// Once per cloth step, before the substeps: a new gust.
pub fn update_gust(mut wind: ResMut<Wind>, params: Res<SimParams>, clock: Res<SimClock>) {
    let dt = clock.step_dt;
    // uniform on [−√3, √3] has unit variance
    let s = 3f32.sqrt();
    let noise = Vec3::new(wind.rng.random_range(-s..s), wind.rng.random_range(-s..s), wind.rng.random_range(-s..s));
    wind.gust = next_gust(wind.gust, params.wind_gust, dt, noise);
}

/// The seed of the random gusts of the running scene.
#[derive(Resource, Clone, Copy, Debug, Default)]
pub struct GustSeed(pub u64);

/// Restarts the gusts (and their random sequence from the scene's seed) when a scene is loaded, so every run
/// is reproducible.
pub fn reset_gust_on_load(clock: Res<SimClock>, seed: Res<GustSeed>, mut wind: ResMut<Wind>) {
    if clock.is_changed() && clock.steps == 0 {
        *wind = Wind::seeded(seed.0);
    }
}
