//! drape's own bodies handed to Avian (feature `avian`): [`AvianBodiesPlugin`]. Every body and collider a scene
//! describes (and every ball the user throws) gets an Avian twin on the same entity, so Avian solves what drape's
//! hand-written bodies could not: body against body, against boxes and the ground, friction, rolling, stacking.
//!
//! **One tick, both engines (§4.2).** Before a cloth step a body takes its pose and velocities from Avian.
//! Within the cloth's substeps it is drape's [`ClothRigidBody`]: it falls and takes each contact's and hold's impulse
//! −mᵢ(Δpᵢ/Δt + Δvᵢ) substep by substep, so a body hanging from stiff cloth stays as stable as drape's own
//! (handing Avian the impulses of a whole step, one step late, makes grips ring and blow up). After the step
//! Avian takes the body at the velocities the step left it with (less the step's gravity, which Avian adds
//! itself, so momentum is exactly what the cloth gave). A free body is placed one step of them back from where
//! the step left it, so Avian's step brings one the cloth moved there, where the cloth holds it, and a body
//! nothing touches falls exactly as in Avian alone; a body touching another (the
//! ground, the heap it lies in) starts Avian's step where Avian's last step left it, so its contacts settle as
//! Avian's own.

use avian3d::prelude::{
    AngularInertia, AngularVelocity, Collider as AvianCollider, CollidingEntities, Friction, LinearVelocity, Mass,
    Physics, PhysicsSystems, PhysicsTime, Position, Restitution, RigidBody as AvianBody, Rotation, SleepingDisabled,
    SubstepCount,
};
use bevy::ecs::system::SystemParam;
use bevy::prelude::*;

use crate::sim::cloth::{ClothCollider, HostedBody};
use crate::sim::collide::{ColliderMotion, ColliderShape};
use crate::sim::integrate::MAX_SPEED;
use crate::sim::rigid::ClothRigidBody;
use crate::sim::schedule::{ClothStep, ClothStepSystems};
use crate::sim::{SimClock, SimParams};

/// Gives drape's bodies and colliders Avian twins and steps the bodies in both engines; add it beside
/// [`AvianClothPlugin`](super::AvianClothPlugin).
pub struct AvianBodiesPlugin;

impl Plugin for AvianBodiesPlugin {
    fn build(&self, app: &mut App) {
        app.add_observer(|added: On<Add, ClothCollider>, twins: Twins| twins.make(added.entity))
            .add_observer(|added: On<Add, ClothRigidBody>, twins: Twins| twins.make(added.entity))
            .add_observer(restore_avian_state)
            .add_systems(
                ClothStep,
                (
                    (pause_avian_without_bodies, follow_surfaces, take_avian_state)
                        .in_set(ClothStepSystems::BeforeStep),
                    (hand_kinematic_to_avian, hand_to_avian).chain().in_set(ClothStepSystems::HandOver),
                ),
            )
            .add_systems(FixedPostUpdate, mirror_avian_velocities.after(PhysicsSystems::Writeback));
    }
}

/// Damping of a twin body's spin while it touches another Avian collider, 1/s: neither engine has rolling
/// resistance, and without it a ball thrown along the ground would roll on for ever.
pub const ROLLING_DAMPING: f32 = 3.0;

/// Avian's collider for drape's `shape`; `None` for the barrel, which Avian has no shape for.
pub fn avian_collider(shape: &ColliderShape) -> Option<AvianCollider> {
    match *shape {
        ColliderShape::Plane => Some(AvianCollider::half_space(Vec3::Y)),
        ColliderShape::Sphere { radius } => Some(AvianCollider::sphere(radius)),
        ColliderShape::Box { half_extents: h } => Some(AvianCollider::cuboid(2.0 * h.x, 2.0 * h.y, 2.0 * h.z)),
        ColliderShape::Capsule { radius, half_height } => Some(AvianCollider::capsule(radius, 2.0 * half_height)),
        ColliderShape::Barrel { .. } => None,
    }
}

/// What making a twin needs.
#[derive(SystemParam)]
struct Twins<'w, 's> {
    colliders: Query<'w, 's, (&'static ClothCollider, Option<&'static ClothRigidBody>)>,
    params: Res<'w, SimParams>,
    commands: Commands<'w, 's>,
}

impl Twins<'_, '_> {
    /// A drape collider gets its Avian twin as it is added, and again if a body is added to it: dynamic with
    /// drape's mass and inertia when it is a body, kinematic when it moves, static otherwise; the cloth's
    /// friction and restitution on it are Avian's too.
    fn make(mut self, entity: Entity) {
        let Ok((collider, body)) = self.colliders.get(entity) else { return };
        let Some(shape) = avian_collider(&collider.shape) else { return };
        let mut twin = self.commands.entity(entity);
        twin.insert((shape, surface(collider, &self.params)));
        twin_body(&mut twin, collider, body);
    }
}

/// The Avian body of a drape collider's twin.
fn twin_body(twin: &mut EntityCommands, collider: &ClothCollider, body: Option<&ClothRigidBody>) {
    match body {
        Some(body) => {
            twin.insert((
                AvianBody::Dynamic,
                HostedBody::default(),
                Mass(body.mass()),
                AngularInertia::new(body.inverse_inertia.recip()),
                LinearVelocity(body.velocity),
                AngularVelocity(body.angular_velocity),
                CollidingEntities::default(),
                // a sleeping body would keep the velocity the cloth hands it without moving, then wake with it
                SleepingDisabled,
            ));
        }
        None if collider.motion == ColliderMotion::Static => {
            twin.insert(AvianBody::Static);
        }
        None => {
            twin.insert((AvianBody::Kinematic, KinematicTwin));
        }
    }
}

/// Avian steps only while it has a body to move (a dynamic one, or a kinematic one drape does not move): a cloth
/// scene with colliders alone pays nothing for it.
fn pause_avian_without_bodies(bodies: Query<(&AvianBody, Has<ClothCollider>)>, mut time: ResMut<Time<Physics>>) {
    let moving = bodies.iter().any(|(body, drapes)| body.is_dynamic() || (body.is_kinematic() && !drapes));
    if moving == time.is_paused() {
        if moving {
            time.unpause();
        } else {
            time.pause();
        }
    }
}

/// A twin body given a state from outside the step (a recording resumed): Avian's state becomes it, as if
/// Avian's step had just left the body where that cloth step did.
fn restore_avian_state(inserted: On<Insert, ClothRigidBody>, mut twins: Query<TwinView, With<HostedBody>>) {
    let Ok((body, pose, ((mut position, mut rotation), (mut linear, mut angular)))) = twins.get_mut(inserted.entity)
    else {
        return;
    };
    (position.0, rotation.0) = (pose.translation, pose.rotation);
    (linear.0, angular.0) = (body.velocity, body.angular_velocity);
}

/// An Avian body's pose and velocities.
type AvianState =
    ((&'static mut Position, &'static mut Rotation), (&'static mut LinearVelocity, &'static mut AngularVelocity));

/// What a twin body shares between the engines.
type TwinView = (&'static mut ClothRigidBody, &'static mut Transform, AvianState);

/// Before the cloth step: each twin body where Avian's last step left it, at Avian's velocities.
pub(crate) fn take_avian_state(mut twins: Query<(TwinView, &mut HostedBody)>) {
    for ((mut body, mut pose, ((position, rotation), (linear, angular))), mut hosted) in &mut twins {
        hosted.touched = false;
        pose.translation = position.0;
        pose.rotation = rotation.0;
        body.velocity = linear.0;
        body.angular_velocity = angular.0;
    }
}

/// After the cloth step: each twin body at the velocities the cloth step left it with, less the gravity the step
/// added (Avian adds it). A free body is placed one step of them back from where the step left it (less the gravity
/// the integrators add on the way): one the cloth moved (a hold or a contact, [`HostedBody::touched`]) by Avian's N
/// substeps' gravity, so that Avian's step ends where the cloth holds it; one the cloth did not touch by the cloth's
/// S substeps', so that it falls as in Avian alone (the two differ by g·h²·|1/N − 1/S|/2 a step). A body touching
/// another Avian collider starts Avian's step where the last one left it (a body lifted off the ground would keep
/// the speed of its fall back to it), and loses spin at [`ROLLING_DAMPING`]. Both at most the cloth's speed cap: the last
/// substep's impulses come after its move's cap, and a touching body's step would carry it at whatever they left.
fn hand_to_avian(
    mut twins: Query<(TwinView, &ClothCollider, &CollidingEntities, &mut HostedBody)>,
    params: Res<SimParams>,
    clock: Res<SimClock>,
    avian_substeps: Option<Res<SubstepCount>>,
) {
    let step = clock.step_dt;
    let rolling = 1.0 / (1.0 + ROLLING_DAMPING * step);
    // the step's S semi-implicit substeps moved a free body by g·h²·(S + 1)/(2S) of gravity, not the g·h² that
    // winding back by the end velocity takes out: the difference goes back, so a free body keeps the trajectory
    // Avian alone gives it whatever the two substep counts
    let lag = |substeps: u32| {
        let substeps = substeps.max(1) as f32;
        params.gravity * (step * step * (substeps - 1.0) / (2.0 * substeps))
    };
    // a body the cloth moved belongs where the cloth put it: wound back by Avian's own N substeps of gravity, it
    // ends Avian's step there, and its holds open no gap of g·h²·(1/N − 1/S)/2 each step (a weight on a strip
    // sank by it, and the strip carried its weight as much more, or less, as the gap closed)
    let (free_lag, moved_lag) = (lag(clock.substeps), lag(avian_substeps.map_or(1, |n| n.0)));
    for (
        (mut body, mut pose, ((mut position, mut rotation), (mut linear, mut angular))),
        collider,
        touching,
        mut hosted,
    ) in &mut twins
    {
        body.cap_speed_of(MAX_SPEED, &collider.shape);
        hosted.cloth_pose = *pose;
        linear.0 = body.velocity - params.gravity * (step * (1.0 - hosted.support));
        hosted.handed = linear.0;
        if touching.is_empty() {
            angular.0 = body.angular_velocity;
            let lag = if hosted.touched { moved_lag } else { free_lag };
            position.0 = pose.translation - body.velocity * step + lag;
            rotation.0 = (Quat::from_scaled_axis(-angular.0 * step) * pose.rotation).normalize();
        } else {
            angular.0 = body.angular_velocity * rolling;
        }
        // Avian would otherwise take the pose where the cloth left the body for a move of its own
        pose.translation = position.0;
        pose.rotation = rotation.0;
    }
}

/// After the cloth step: each kinematic twin at the velocities that take it from where Avian has it to where the
/// cloth step left it, starting where Avian has it, so Avian's bodies meet a moving surface (pushed and carried
/// by it) rather than one that jumps; while Avian is paused it is only put there.
fn hand_kinematic_to_avian(
    mut twins: Query<(&mut Transform, AvianState), With<KinematicTwin>>,
    time: Res<Time<Physics>>,
    clock: Res<SimClock>,
) {
    for (mut pose, ((mut position, mut rotation), (mut linear, mut angular))) in &mut twins {
        if time.is_paused() || clock.step_dt <= 0.0 {
            (position.0, rotation.0) = (pose.translation, pose.rotation);
            continue;
        }
        (linear.0, angular.0) = velocities_between((position.0, rotation.0), &pose, clock.step_dt);
        // Avian would otherwise take the pose the cloth step wrote into the transform (always on its first step,
        // later when the position did not change) and then move it by the velocities as well: a whole step
        // ahead, then standing still for one. Its step writes the transform back.
        (pose.translation, pose.rotation) = (position.0, rotation.0);
        position.set_changed();
        rotation.set_changed();
    }
}

/// The linear and angular velocity that move a body from `from` (position, rotation) to `to` in `step` seconds,
/// turning the shorter way round.
pub fn velocities_between(from: (Vec3, Quat), to: &Transform, step: f32) -> (Vec3, Vec3) {
    let turn = to.rotation * from.1.inverse();
    // q and −q are the same turn
    let turn = if turn.w < 0.0 { -turn } else { turn };
    ((to.translation - from.0) / step, turn.to_scaled_axis() / step)
}

/// Marks a drape collider that moves kinematically (it has a motion and no body) and has an Avian twin.
#[derive(Component, Clone, Copy, Debug, Default)]
pub struct KinematicTwin;

/// The twins' friction and restitution follow the scene's while their colliders use the scene's.
fn follow_surfaces(params: Res<SimParams>, mut twins: Query<(&ClothCollider, &mut Friction, &mut Restitution)>) {
    if !params.is_changed() {
        return;
    }
    for (collider, mut friction, mut restitution) in &mut twins {
        let surface = surface(collider, &params);
        friction.set_if_neq(surface.0);
        restitution.set_if_neq(surface.1);
    }
}

/// Avian's friction and restitution of a drape collider: its own, or the scene's.
fn surface(collider: &ClothCollider, params: &SimParams) -> (Friction, Restitution) {
    (
        Friction::new(collider.friction.unwrap_or(params.friction)),
        Restitution::new(collider.restitution.unwrap_or(params.restitution)),
    )
}

/// After Avian's step: drape's view of each twin body (the headless report, the soak) at Avian's velocities;
/// recordings take the step's end before the hand-over. A body touching another Avian collider keeps the share of
/// its weight Avian's contacts held up in the step, for the next cloth step's gravity ([`HostedBody::support`]): a
/// cube resting on a bar fell through the whole cloth step and Avian's step put it back, and the vertices it held
/// jumped with it every step.
fn mirror_avian_velocities(
    mut twins: Query<(&mut ClothRigidBody, &mut HostedBody, (&LinearVelocity, &AngularVelocity, &CollidingEntities))>,
    params: Res<SimParams>,
    clock: Res<SimClock>,
) {
    for (mut body, mut hosted, (linear, angular, touching)) in &mut twins {
        body.velocity = linear.0;
        body.angular_velocity = angular.0;
        let change = linear.0 - hosted.handed;
        hosted.support = if touching.is_empty() { 0.0 } else { share_held_up(change, params.gravity, clock.step_dt) };
    }
}

/// The share of a body's weight, 0 to 1, that a step of `step` seconds that changed its velocity by `change`
/// under `gravity` held up: what the step's contacts gave it against gravity, over what gravity took.
pub fn share_held_up(change: Vec3, gravity: Vec3, step: f32) -> f32 {
    let weight = gravity.length() * step;
    if weight <= 0.0 {
        return 0.0;
    }
    let support = (change - gravity * step).dot(-gravity.normalize());
    (support / weight).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const G: Vec3 = Vec3::new(0.0, -9.81, 0.0);

    #[test]
    fn the_share_held_up_is_what_the_contacts_gave_against_gravity() {
        let step = 1.0 / 60.0;
        // free fall: gravity alone changed the velocity
        assert_eq!(share_held_up(G * step, G, step), 0.0);
        // resting: the contacts cancelled gravity
        assert!((share_held_up(Vec3::ZERO, G, step) - 1.0).abs() < 1e-6);
        // a contact that held up a third, whatever it did sideways
        let third = share_held_up(G * step * (2.0 / 3.0) + Vec3::X, G, step);
        assert!((third - 1.0 / 3.0).abs() < 1e-5, "{third}");
        // a bounce is support at most; a pull down is none; no gravity holds nothing up
        assert_eq!(share_held_up(Vec3::Y * 5.0, G, step), 1.0);
        assert_eq!(share_held_up(G * step * 2.0, G, step), 0.0);
        assert_eq!(share_held_up(Vec3::Y, Vec3::ZERO, step), 0.0);
    }
}
