//! [`SleepPlugin`]: a cloth that has come to rest stops being stepped, as Avian and Jolt put bodies to sleep.
//!
//! A cloth falls asleep when every vertex has stayed slower than [`SLEEP_SPEED`] for [`SLEEP_AFTER`] seconds
//! with nothing that could move it: no grab, no moving pin, no hold on a body, no wind, and no collider, body or
//! other cloth within reach that moves (a dynamic body within reach keeps it awake even at rest: a sleeping
//! cloth has no contacts, so a box lying on it would fall through). Its velocities are then zeroed and it
//! carries [`Asleep`], which every system of the step leaves out: it costs nothing but the check. It wakes at
//! the start of the step in which any of those things happens, or when a parameter, its material, its pins or
//! its particles are changed from outside the step (a slider, a replay's scrub, a host's system).

use bevy::ecs::system::SystemChangeTick;
use bevy::prelude::*;

use super::SimParams;
pub use super::cloth::{Asleep, Awake, Calm};
use super::cloth::{Attachments, BodyAttachments, Cloth, ClothMaterial, Grabbed, Particles};
use super::colliders::CollisionWorld;
use super::constraints::attach::Motion;
use super::rigid::ClothRigidBody;
use super::schedule::{ClothStep, ClothStepSystems, PbdStage, SimClock};
use crate::skinning::measure_attachment_error;

/// Below this speed, m/s, a vertex is at rest (Jolt's point-velocity sleep threshold).
pub const SLEEP_SPEED: f32 = 0.03;
/// How long every vertex of a cloth must stay at rest before it sleeps, s.
pub const SLEEP_AFTER: f32 = 1.0;
/// How far beyond the cloth's box, besides what a collider travels in a step, a moving thing is within reach, m.
const REACH: f32 = 0.05;

/// Puts cloths at rest to sleep and wakes them when something could move them.
pub struct SleepPlugin;

impl Plugin for SleepPlugin {
    fn build(&self, app: &mut App) {
        app.add_systems(ClothStep, (wake_stirred_cloths, ApplyDeferred).chain().in_set(ClothStepSystems::Start))
            // a cloth falls asleep as the step left it: torn, and measured (`ClothStepSystems::AfterStep`)
            .add_systems(
                ClothStep,
                fall_asleep
                    .in_set(ClothStepSystems::AfterStep)
                    .after(PbdStage::Tearing)
                    .after(measure_attachment_error),
            );
    }
}

/// The largest of the speeds `v`.
pub fn top_speed(v: &[Vec3]) -> f32 {
    v.iter().map(|v| v.length_squared()).fold(0.0, f32::max).sqrt()
}

/// The box (min, max) around `points`; `None` for none or a point not finite.
pub fn bounding_box(points: &[Vec3]) -> Option<(Vec3, Vec3)> {
    let first = *points.first()?;
    let (lo, hi) = points.iter().fold((first, first), |(lo, hi), &p| (lo.min(p), hi.max(p)));
    (lo.is_finite() && hi.is_finite()).then_some((lo, hi))
}

/// Whether the boxes `a` and `b` come within `gap` of each other.
pub fn boxes_meet(a: (Vec3, Vec3), b: (Vec3, Vec3), gap: f32) -> bool {
    (a.0 - b.1).max_element() <= gap && (b.0 - a.1).max_element() <= gap
}

/// Where an awake cloth is and how fast its fastest vertex moves.
#[derive(Clone, Copy, Debug)]
struct Whereabouts {
    entity: Entity,
    bounds: Option<(Vec3, Vec3)>,
    speed: f32,
}

impl Whereabouts {
    fn of(entity: Entity, particles: &Particles) -> Self {
        Self { entity, bounds: bounding_box(&particles.x), speed: top_speed(&particles.v) }
    }
}

/// What holds a cloth to something that may move: a pin that moves, a hold on a body, or a grab.
fn held_by_motion(pins: &Attachments, holds: Option<&BodyAttachments>, grabbed: bool) -> bool {
    grabbed || holds.is_some_and(|h| !h.0.is_empty()) || pins.0.iter().any(|a| !matches!(a.motion, Motion::Fixed))
}

/// What could move a cloth from outside: the scene's colliders and bodies as the last substep left them, the
/// awake cloths, and the air.
struct Surroundings<'a, 'w, 's> {
    colliders: &'a CollisionWorld,
    bodies: &'a Query<'w, 's, (), With<ClothRigidBody>>,
    substeps: u32,
    step_dt: f32,
    cloths: &'a [Whereabouts],
    windy: bool,
}

impl<'a, 'w, 's> Surroundings<'a, 'w, 's> {
    fn new(
        colliders: &'a CollisionWorld,
        bodies: &'a Query<'w, 's, (), With<ClothRigidBody>>,
        params: &SimParams,
        clock: &SimClock,
        cloths: &'a [Whereabouts],
    ) -> Self {
        let windy = params.air_drag > 0.0 && (params.wind != Vec3::ZERO || params.wind_gust > 0.0);
        Self { colliders, bodies, substeps: clock.substeps.max(1), step_dt: clock.step_dt, cloths, windy }
    }

    /// Whether the air, a moving collider, a dynamic body or another cloth in motion could reach the cloth
    /// `entity` with the box `bounds` within the next step.
    fn stir(&self, entity: Entity, bounds: Option<(Vec3, Vec3)>) -> bool {
        let Some(bounds) = bounds else { return true };
        // what a thing travels in a step, twice over: it must be within reach before the step that brings it
        let near_collider = self.colliders.colliders.iter().zip(&self.colliders.entities).any(|(collider, &e)| {
            let travel = 2.0 * collider.sweep * self.substeps as f32;
            let moving = collider.sweep > 0.0 || self.bodies.contains(e);
            moving && collider.world.bounding_box().is_none_or(|b| boxes_meet(bounds, b, REACH + travel))
        });
        let near_cloth = self.cloths.iter().any(|other| {
            let travel = 2.0 * other.speed * self.step_dt;
            other.entity != entity
                && other.speed >= SLEEP_SPEED
                && other.bounds.is_none_or(|b| boxes_meet(bounds, b, REACH + travel))
        });
        self.windy || near_collider || near_cloth
    }
}

/// A sleeping cloth as [`wake_stirred_cloths`] reads it.
type SleepingCloth = (
    Entity,
    &'static Asleep,
    Ref<'static, Particles>,
    Ref<'static, ClothMaterial>,
    Ref<'static, Attachments>,
    Has<Grabbed>,
    Option<&'static BodyAttachments>,
);

/// At the start of a step: removes [`Asleep`] from every cloth something could move now, or that was changed
/// from outside the step since it fell asleep.
fn wake_stirred_cloths(
    mut commands: Commands,
    sleeping: Query<SleepingCloth>,
    awake: Query<(Entity, &Particles), (With<Cloth>, Awake)>,
    bodies: Query<(), With<ClothRigidBody>>,
    world: Res<CollisionWorld>,
    (params, clock, ticks): (Res<SimParams>, Res<SimClock>, SystemChangeTick),
    (mut last_params, mut cloths): (Local<Option<SimParams>>, Local<Vec<Whereabouts>>),
) {
    let params_changed = last_params.as_ref() != Some(&*params);
    if params_changed {
        *last_params = Some(params.clone());
    }
    if sleeping.is_empty() {
        return;
    }
    cloths.clear();
    cloths.extend(awake.iter().map(|(e, p)| Whereabouts::of(e, p)));
    let surroundings = Surroundings::new(&world, &bodies, &params, &clock, &cloths);
    for (entity, asleep, particles, material, pins, grabbed, holds) in &sleeping {
        let edited = [particles.last_changed(), material.last_changed(), pins.last_changed()]
            .iter()
            .any(|tick| tick.is_newer_than(asleep.tick(), ticks.this_run()));
        if params_changed
            || edited
            || held_by_motion(&pins, holds, grabbed)
            || surroundings.stir(entity, asleep.bounds())
        {
            commands.entity(entity).remove::<Asleep>();
        }
    }
}

/// An awake cloth as [`fall_asleep`] reads and writes it.
type WakefulCloth = (
    Entity,
    &'static mut Particles,
    &'static mut Calm,
    &'static Attachments,
    Has<Grabbed>,
    Option<&'static BodyAttachments>,
);

/// After a step: counts how long each awake cloth has been at rest with nothing near it moving, and puts the
/// ones at rest for [`SLEEP_AFTER`] to sleep with their velocities zeroed.
fn fall_asleep(
    mut commands: Commands,
    mut cloths: Query<WakefulCloth, Awake>,
    bodies: Query<(), With<ClothRigidBody>>,
    world: Res<CollisionWorld>,
    (params, clock, ticks): (Res<SimParams>, Res<SimClock>, SystemChangeTick),
    mut states: Local<Vec<Whereabouts>>,
) {
    states.clear();
    states.extend(cloths.iter().map(|(e, p, ..)| Whereabouts::of(e, p)));
    let surroundings = Surroundings::new(&world, &bodies, &params, &clock, &states);
    for ((entity, mut particles, mut calm, pins, grabbed, holds), &state) in cloths.iter_mut().zip(states.iter()) {
        if state.speed >= SLEEP_SPEED || held_by_motion(pins, holds, grabbed) || surroundings.stir(entity, state.bounds)
        {
            calm.0 = 0.0;
            continue;
        }
        calm.0 += clock.step_dt;
        if calm.0 >= SLEEP_AFTER {
            calm.0 = 0.0;
            particles.v.fill(Vec3::ZERO);
            commands.entity(entity).insert(Asleep::since(ticks.this_run(), state.bounds));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn speeds_boxes_and_reach() {
        assert_eq!(top_speed(&[Vec3::X * 0.01, Vec3::new(0.0, -0.03, 0.04), Vec3::ZERO]), 0.05);
        assert_eq!(top_speed(&[]), 0.0);
        let b = bounding_box(&[Vec3::new(1.0, -2.0, 0.5), Vec3::new(-1.0, 3.0, 0.0)]);
        assert_eq!(b, Some((Vec3::new(-1.0, -2.0, 0.0), Vec3::new(1.0, 3.0, 0.5))));
        assert_eq!(bounding_box(&[]), None);
        assert_eq!(bounding_box(&[Vec3::ZERO, Vec3::NAN]), None);
        let unit = (Vec3::ZERO, Vec3::ONE);
        // 0.1 apart along x
        let beside = (Vec3::new(1.1, 0.0, 0.0), Vec3::new(2.0, 1.0, 1.0));
        assert!(!boxes_meet(unit, beside, 0.09) && boxes_meet(unit, beside, 0.11) && boxes_meet(beside, unit, 0.11));
        assert!(boxes_meet(unit, (Vec3::splat(0.5), Vec3::splat(0.6)), 0.0), "one inside the other");
    }
}
