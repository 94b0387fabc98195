//! A copy of everything a cloth step reads and writes that outlives the step: every cloth's, collider's and
//! skinned character's components and the resources that carry state from step to step (the clock, the parameters, the gusts'
//! random generator, the throws already made), and the state of the engines stepping beside the cloth
//! ([`CoupledEngines`]). Restoring one and stepping on gives the very same bits as the run it was taken from.

use bevy::prelude::*;

use super::engines::{CoupledEngines, EngineState};
use crate::scene::throws::ThrowQueue;
use crate::sim::SimParams;
use crate::sim::aerodynamics::{GustSeed, Wind};
use crate::sim::cloth::{
    Asleep, Attachments, Balloon, BendConstraints, BodyAttachments, Calm, CappedMoves, Cloth, ClothCollider,
    ClothMaterial, ClothMesh, ClothSolver, Contacts, Grabbed, HostedBody, Particles, PreviousPose, SelfCollision,
    SolverStiffness, StartingOverlaps, StretchConstraints, Tethers,
};
use crate::sim::constraints::plan::ProjectionPlan;
use crate::sim::rigid::ClothRigidBody;
use crate::sim::schedule::SimClock;
use crate::skinning::SkinnedCharacter;

/// Declares [`EntityState`] with one optional copy per component type, and its capture and restore.
macro_rules! entity_state {
    ($($field:ident: $ty:ty,)*) => {
        /// The copied components of one cloth or collider (`None`: the entity did not have it).
        #[derive(Clone, Debug, Default)]
        pub struct EntityState {
            $(
                #[doc = concat!("Its `", stringify!($ty), "`.")]
                pub $field: Option<$ty>,
            )*
        }

        impl EntityState {
            fn capture(entity: EntityRef) -> Self {
                Self { $($field: entity.get::<$ty>().cloned(),)* }
            }

            fn restore(&self, entity: &mut EntityWorldMut) {
                $(match &self.$field {
                    Some(c) => { entity.insert(c.clone()); }
                    None => { entity.remove::<$ty>(); }
                })*
            }
        }
    };
}

entity_state! {
    particles: Particles,
    mesh: ClothMesh,
    stretch: StretchConstraints,
    bend: BendConstraints,
    plan: ProjectionPlan,
    attachments: Attachments,
    body_attachments: BodyAttachments,
    contacts: Contacts,
    starting_overlaps: StartingOverlaps,
    capped_moves: CappedMoves,
    calm: Calm,
    asleep: Asleep,
    self_collision: SelfCollision,
    balloon: Balloon,
    material: ClothMaterial,
    stiffness: SolverStiffness,
    tethers: Tethers,
    solver: ClothSolver,
    cloth: Cloth,
    grabbed: Grabbed,
    collider: ClothCollider,
    transform: Transform,
    previous_pose: PreviousPose,
    body: ClothRigidBody,
    hosted: HostedBody,
    character: SkinnedCharacter,
}

/// The whole simulation state at the end of one cloth step.
#[derive(Clone, Debug)]
pub struct SimSnapshot {
    entities: Vec<(Entity, EntityState)>,
    clock: SimClock,
    params: SimParams,
    wind: Option<Wind>,
    seed: Option<GustSeed>,
    throws: Option<ThrowQueue>,
    /// Each coupled engine's state, in [`CoupledEngines`] order.
    engines: Vec<EngineStateDebug>,
    /// Rough size of the copy, bytes (the large arrays; what the panel reports).
    pub bytes: usize,
}

impl SimSnapshot {
    /// Copies the state of `world`.
    pub fn capture(world: &mut World) -> Self {
        let mut query =
            world.query_filtered::<Entity, Or<(With<Cloth>, With<ClothCollider>, With<SkinnedCharacter>)>>();
        let ids: Vec<Entity> = query.iter(world).collect();
        let entities: Vec<(Entity, EntityState)> =
            ids.into_iter().map(|e| (e, EntityState::capture(world.entity(e)))).collect();
        let bytes = entities.iter().map(|(_, s)| approximate_bytes(s)).sum();
        let engines = CoupledEngines::of(world).iter().map(|e| EngineStateDebug((e.capture)(world))).collect();
        Self {
            entities,
            clock: *world.resource::<SimClock>(),
            params: world.resource::<SimParams>().clone(),
            wind: world.get_resource::<Wind>().cloned(),
            seed: world.get_resource::<GustSeed>().copied(),
            throws: world.get_resource::<ThrowQueue>().cloned(),
            engines,
            bytes,
        }
    }

    /// Puts the state back into `world`: the copied components onto their entities, cloths and colliders that
    /// came later (thrown balls) despawned, the resources replaced. Fails, changing nothing, if an entity of
    /// the copy no longer exists (the scene was replaced).
    pub fn restore(&self, world: &mut World) -> Result<(), String> {
        if let Some((e, _)) = self.entities.iter().find(|(e, _)| world.get_entity(*e).is_err()) {
            return Err(format!("entity {e} of the recording no longer exists"));
        }
        let mut query =
            world.query_filtered::<Entity, Or<(With<Cloth>, With<ClothCollider>, With<SkinnedCharacter>)>>();
        let later: Vec<Entity> = query.iter(world).filter(|e| !self.entities.iter().any(|(k, _)| k == e)).collect();
        for e in later {
            world.despawn(e);
        }
        for (e, state) in &self.entities {
            state.restore(&mut world.entity_mut(*e));
            // put back asleep, not changed from outside since: the restore itself wrote its particles
            let now = world.change_tick();
            if let Some(mut asleep) = world.get_mut::<Asleep>(*e) {
                asleep.restamp(now);
            }
        }
        world.insert_resource(self.clock);
        world.insert_resource(self.params.clone());
        if let Some(wind) = &self.wind {
            world.insert_resource(wind.clone());
        }
        if let Some(seed) = self.seed {
            world.insert_resource(seed);
        }
        if let Some(throws) = &self.throws {
            world.insert_resource(throws.clone());
        }
        // the engines' own despawn hooks have run; their state goes back over what those left
        world.flush();
        for (engine, state) in CoupledEngines::of(world).iter().zip(&self.engines) {
            (engine.restore)(world, &state.0);
        }
        Ok(())
    }
}

/// An engine's state in a snapshot (its `Debug` names it only).
#[derive(Clone)]
struct EngineStateDebug(EngineState);

impl std::fmt::Debug for EngineStateDebug {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EngineState")
    }
}

/// The bytes of the large arrays of `s` (particles, triangles, constraints, plan and contact scratch are
/// counted; small fields are not).
fn approximate_bytes(s: &EntityState) -> usize {
    use std::mem::size_of_val;
    let particles = s.particles.as_ref().map_or(0, |p| {
        size_of_val(&p.x[..]) + size_of_val(&p.p[..]) + size_of_val(&p.v[..]) + 2 * size_of_val(&p.w[..])
    });
    let mesh = s.mesh.as_ref().map_or(0, |m| 2 * size_of_val(&m.triangles[..]) + size_of_val(&m.uvs[..]));
    let stretch = s.stretch.as_ref().map_or(0, |c| 2 * (size_of_val(c.edges()) + size_of_val(c.rest_length())));
    let bend = s.bend.as_ref().map_or(0, |c| 2 * (size_of_val(c.quads()) + 2 * size_of_val(c.rest_angle())));
    let tethers = s.tethers.as_ref().map_or(0, |t| 3 * size_of_val(&t.set.anchor[..]));
    // self collision keeps a spatial hash and patches of about the size of the particles again
    let own = s.self_collision.as_ref().map_or(0, |_| particles);
    particles + mesh + stretch + bend + tethers + own
}
