//! Avian's bodies and colliders as the cloth's (feature `avian`): [`AvianClothPlugin`].
//!
//! **Colliders (§3.4).** Every entity with an Avian `Collider` (and no drape collider) is a cloth collider.
//! Balls, cuboids, capsules and half-spaces keep drape's analytic fast path; any other shape — convex hulls,
//! triangle meshes, compounds — answers through parry's queries (`solid.rs`): the swept test x→p in the
//! collider's frame becomes a ball of the cloth's thickness cast along the ray, the static fallback a point
//! projection. Thickness, friction (Avian's `Friction::dynamic_coefficient`, or the scene's), restitution and
//! the moving-collider guarantee are those of drape's own colliders, as is the broad phase (each collider's
//! box against each block of vertices).
//!
//! **Two-way coupling (§4.2).** Within the cloth's substeps a body moves kinematically from its pose at
//! Avian's last step, at its linear and angular velocity and what the cloth's impulses added since (its twin,
//! `twins.rs`). Each contact's effect on its vertex, mᵢ(Δpᵢ/Δt + Δvᵢ), is taken from the body as the opposite
//! impulse at the contact point (capped, like drape's own bodies, at the body's effective mass at that point); the
//! impulses of a cloth step are summed per body and handed to Avian before its next step, which integrates them
//! with everything else: body–body contacts, friction, joints.
//! Vertices held by a body (body grips) follow it as they follow drape's bodies.
//!
//! **Order in a fixed tick.** Both engines step once per `FixedUpdate` tick at the cloth's rate (the host keeps
//! `Time<Fixed>` at [`SimParams::rate_hz`](crate::sim::SimParams), as the demo and the headless runner do with
//! [`match_fixed_timestep_to_cloth`](crate::sim::plugin::match_fixed_timestep_to_cloth)): the cloth step in
//! `FixedUpdate` sees the bodies where Avian's last step left them; then Avian's step (in `FixedPostUpdate`,
//! `PhysicsPlugins::default()`) takes the cloth's impulses in `PhysicsSystems::First`. Avian's gravity follows
//! the scene's.

pub(crate) mod bodies;
pub(crate) mod meshes;
pub(crate) mod replay;
pub(crate) mod solid;
pub(crate) mod twins;

use avian3d::prelude::{
    AngularVelocity, Collider as AvianCollider, ComputedAngularInertia, ComputedCenterOfMass, ComputedMass, Forces,
    Friction, Gravity, LinearVelocity, PhysicsPlugins, PhysicsSystems, Position, Restitution, RigidBody as AvianBody,
    Rotation, WriteRigidBodyForces,
};
use bevy::ecs::entity::EntityHashMap;
use bevy::prelude::*;

use crate::sim::cloth::Awake;
use crate::sim::cloth::{BodyAttachment, BodyAttachments, Cloth, ClothCollider, Particles};
use crate::sim::collide::shapes::Shape;
use crate::sim::collide::swept::SweptCollider;
use crate::sim::colliders::ExternalColliders;
use crate::sim::rigid::give_back;
use crate::sim::schedule::{ClothStep, ClothStepSystems, PbdStage, PbdSubstep, SimClock};
use crate::sim::{SimParams, stages};
use twins::{AvianTwins, Twin};

pub use bodies::AvianBodiesPlugin;
pub use meshes::AvianMeshesPlugin;

/// Avian as the scene's body engine: `PhysicsPlugins` (with mesh assets, which its colliders need), the cloth's
/// view of Avian's colliders ([`AvianClothPlugin`]), drape's bodies ([`AvianBodiesPlugin`]) and presets' mesh
/// colliders ([`AvianMeshesPlugin`]) as Avian's; add after `DefaultPlugins` in a windowed app.
pub fn add_avian(app: &mut App) {
    crate::mesh_sync::add_mesh_assets(app);
    app.add_plugins((PhysicsPlugins::default(), AvianClothPlugin, AvianBodiesPlugin, AvianMeshesPlugin));
}

/// Makes Avian's colliders and bodies the cloth's; add it beside `PhysicsPlugins::default()` and drape's
/// `ClothSimPlugin`.
pub struct AvianClothPlugin;

impl Plugin for AvianClothPlugin {
    fn build(&self, app: &mut App) {
        replay::register(app);
        app.init_resource::<BodyImpulses>()
            .init_resource::<AvianTwins>()
            .init_resource::<ExternalColliders>()
            .add_systems(
                ClothStep,
                (cache_cloth_shapes, follow_gravity, refuse_holds_on_plain_bodies.before(stages::ease_stiffness))
                    .in_set(ClothStepSystems::BeforeStep),
            )
            .add_systems(
                PbdSubstep,
                (
                    gather_avian_colliders.in_set(PbdStage::GenerateCollisions).before(stages::generate_collisions),
                    take_contact_impulses
                        .in_set(PbdStage::VelocityResponse)
                        .after(stages::velocity_response)
                        .before(stages::couple_bodies),
                ),
            )
            .add_systems(FixedPostUpdate, give_impulses.in_set(PhysicsSystems::First));
    }
}

/// A hold needs drape's body (a [`ClothRigidBody`](crate::sim::rigid::ClothRigidBody)): it lends the held vertices
/// its mass within the projection (§4.2). A dynamic Avian body of its own would feel the cloth one step late
/// through explicit impulses, and such grips ring and blow up, so its holds are dropped with an error saying why.
/// Static and kinematic Avian bodies may hold cloth: they move as their own motion says, like a pin.
fn refuse_holds_on_plain_bodies(
    mut cloths: Query<(&Cloth, &mut BodyAttachments)>,
    plain: Query<&AvianBody, Without<crate::sim::rigid::ClothRigidBody>>,
) {
    for (cloth, mut holds) in &mut cloths {
        let refused = |a: &BodyAttachment| plain.get(a.body).is_ok_and(AvianBody::is_dynamic);
        let Some(first) = holds.0.iter().find(|a| refused(a)).map(|a| a.body) else { continue };
        let count = holds.0.iter().filter(|a| refused(a)).count();
        error!(
            "cloth '{}': {count} vertices held by {first}, a dynamic Avian body without drape's ClothRigidBody, \
             let go: only drape's bodies (a sphere, box or capsule ClothCollider with a ClothRigidBody) can hold \
             cloth, lending the held vertices their mass; an Avian body alone would feel the cloth a step late",
            cloth.name
        );
        holds.0.retain(|a| !refused(a));
    }
}

/// The cloth's shape of an Avian collider, in the collider's frame: rebuilt when the collider changes (its
/// scale too).
#[derive(Component, Clone, Debug)]
pub(crate) struct AvianClothShape(pub Shape);

/// Impulses the cloth gave each Avian body since Avian's last step: linear (N·s) and angular about the body's
/// centre of mass (N·m·s).
#[derive(Resource, Debug, Default)]
pub(crate) struct BodyImpulses(pub EntityHashMap<(Vec3, Vec3)>);

/// Avian colliders that changed since the cloth last looked, and are not also drape colliders.
type ChangedAvianColliders = (Changed<AvianCollider>, Without<ClothCollider>);

fn cache_cloth_shapes(mut commands: Commands, changed: Query<(Entity, &AvianCollider), ChangedAvianColliders>) {
    for (entity, collider) in &changed {
        commands.entity(entity).insert(AvianClothShape(solid::cloth_shape(collider.shape_scaled())));
    }
}

fn follow_gravity(params: Res<SimParams>, gravity: Option<ResMut<Gravity>>) {
    if let Some(mut gravity) = gravity.filter(|g| g.0 != params.gravity) {
        gravity.0 = params.gravity;
    }
}

/// What the cloth needs of an Avian collider: its shape, pose, motion and surface, and a body's mass.
type AvianColliderView = (
    Entity,
    &'static AvianClothShape,
    (&'static Position, &'static Rotation),
    (Option<&'static LinearVelocity>, Option<&'static AngularVelocity>, Option<&'static AvianBody>),
    (Option<&'static Friction>, Option<&'static Restitution>),
    Option<(&'static ComputedMass, &'static ComputedAngularInertia, &'static ComputedCenterOfMass)>,
);

/// Before line (8): every Avian collider swept over the substep, a body moving as its twin does (Avian's last
/// step's velocities and the cloth's impulses since); line (8) puts them after drape's colliders.
fn gather_avian_colliders(
    colliders: Query<AvianColliderView, Without<ClothCollider>>,
    params: Res<SimParams>,
    clock: Res<SimClock>,
    mut external: ResMut<ExternalColliders>,
    mut twins: ResMut<AvianTwins>,
) {
    let ExternalColliders { colliders: swept, entities } = &mut *external;
    swept.clear();
    entities.clear();
    let begin = clock.substep as f32 * clock.dt;
    if clock.substep == 0 {
        // each cloth step starts from where Avian's last step left its bodies
        twins.0.clear();
    }
    for (entity, shape, (position, rotation), (linear, angular, body), (friction, restitution), mass) in &colliders {
        let pose = (position.0, rotation.0);
        let (start, end) = match body.filter(|b| !b.is_static()) {
            Some(body) => twins
                .0
                .entry(entity)
                .or_insert_with(|| {
                    let mass = mass.filter(|_| body.is_dynamic()).map(|(mass, inertia, center)| twins::Mass {
                        inverse: mass.inverse(),
                        inertia: *inertia,
                        center: center.0,
                    });
                    let (v, w) = (linear.map_or(Vec3::ZERO, |v| v.0), angular.map_or(Vec3::ZERO, |w| w.0));
                    Twin::new(pose, v, w, mass)
                })
                .sweep(begin, clock.dt),
            None => Twin::new(pose, Vec3::ZERO, Vec3::ZERO, None).sweep(begin, clock.dt),
        };
        let friction = friction.map_or(params.friction, |f| f.dynamic_coefficient);
        let restitution = restitution.map_or(params.restitution, |r| r.coefficient);
        swept.push(SweptCollider::new(shape.0.clone(), start, end, friction, restitution));
        entities.push(entity);
    }
}

/// §4.2 after line (16): each dynamic body takes the opposite of the momentum its contacts gave cloth
/// vertices in this substep, summed for Avian's next step.
fn take_contact_impulses(
    mut cloths: Query<stages::CoupledCloth, Awake>,
    mut twins: ResMut<AvianTwins>,
    world: Res<crate::sim::colliders::CollisionWorld>,
    clock: Res<SimClock>,
    mut impulses: ResMut<BodyImpulses>,
    mut pushing: Local<stages::PushingMasses>,
    mut found: Local<Vec<stages::Push>>,
) {
    if !twins.0.values().any(Twin::is_dynamic) {
        return;
    }
    pushing.sum(&cloths, &world, clock.dt);
    for (mut particles, contacts, features) in &mut cloths {
        found.clear();
        found.extend(stages::collider_pushes(&particles, (contacts, features), &world, clock.dt));
        for push in found.iter().filter(|push| push.mass > 0.0) {
            let Some(twin) = twins.0.get_mut(&push.entity) else { continue };
            let Some((taken, impulse, moment)) = twin.take(push.given, pushing.of(push), push.point) else {
                continue;
            };
            let (linear, angular) = impulses.0.entry(push.entity).or_default();
            *linear += impulse;
            *angular += moment;
            let Particles { v, mass, w, .. } = &mut *particles;
            give_back(v, (mass, w), push.vertex, push.given * (1.0 - taken));
        }
    }
}

/// Before Avian's step: the cloth's impulses of the last cloth step, to each body.
fn give_impulses(mut impulses: ResMut<BodyImpulses>, mut bodies: Query<Forces>) {
    for (entity, (linear, angular)) in impulses.0.drain() {
        if let Ok(mut forces) = bodies.get_mut(entity) {
            forces.apply_linear_impulse(linear);
            forces.apply_angular_impulse(angular);
        }
    }
}
