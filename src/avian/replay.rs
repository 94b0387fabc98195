//! Avian in recordings (feature `avian`): a snapshot keeps what Avian's next step reads of its own state, and a
//! step run again runs Avian's step after the cloth's, so a resumed run with Avian bodies repeats the original
//! bit for bit.
//!
//! What Avian carries from one step to the next: the contact manifolds with their warm-start impulses
//! (`ContactGraph`), the colouring that orders the solver (`ConstraintGraph`), the broad phase's trees and the
//! proxies moved in the last step (`ColliderTrees`, `MovedProxies`), the islands (`PhysicsIslands`,
//! `JointGraph`), and per entity the pose, the velocities, the island links, the boxes and tree keys, the
//! contacts' `CollidingEntities` and the sleep timer. These point into each other by index, so they go back
//! together, assigned in place: inserting would run Avian's hooks, which rebuild them.

use avian3d::collider_tree::{ColliderTreeProxyKey, ColliderTrees, MovedProxies};
use avian3d::collision::collider::EnlargedAabb;
use avian3d::dynamics::solver::constraint_graph::ConstraintGraph;
use avian3d::dynamics::solver::islands::{BodyIslandNode, PhysicsIslands};
use avian3d::dynamics::solver::joint_graph::JointGraph;
use avian3d::prelude::{
    AngularVelocity, Collider as AvianCollider, ColliderAabb, CollidingEntities, ContactGraph, LinearVelocity, Physics,
    Position, RigidBody as AvianBody, Rotation, SleepTimer, Substeps,
};
use bevy::prelude::*;

use crate::replay::{CoupledEngine, CoupledEngines, EngineState};

/// Avian as an engine recordings know.
pub fn register(app: &mut App) {
    CoupledEngines::register(app, CoupledEngine { capture, restore, step });
}

/// Declares [`AvianEntity`], one optional copy per component, with its capture and in-place restore.
macro_rules! avian_entity {
    ($($field:ident: $ty:ty,)*) => {
        /// Avian's components of one entity (`None`: it did not have it).
        #[derive(Clone, Debug, Default)]
        struct AvianEntity {
            $($field: Option<$ty>,)*
        }

        impl AvianEntity {
            fn capture(entity: EntityRef) -> Self {
                Self { $($field: entity.get::<$ty>().cloned(),)* }
            }

            fn restore(&self, entity: &mut EntityWorldMut) {
                $(if let (Some(saved), Some(mut now)) = (&self.$field, entity.get_mut::<$ty>()) {
                    *now = saved.clone();
                })*
            }
        }
    };
}

avian_entity! {
    position: Position,
    rotation: Rotation,
    linear: LinearVelocity,
    angular: AngularVelocity,
    island: BodyIslandNode,
    sleep: SleepTimer,
    aabb: ColliderAabb,
    enlarged: EnlargedAabb,
    proxy: ColliderTreeProxyKey,
    colliding: CollidingEntities,
    transform: Transform,
    global: GlobalTransform,
}

/// Avian's state between two ticks.
struct AvianState {
    contacts: ContactGraph,
    constraints: ConstraintGraph,
    trees: ColliderTrees,
    moved: MovedProxies,
    islands: PhysicsIslands,
    joints: JointGraph,
    time: Time<Physics>,
    substeps: Time<Substeps>,
    entities: Vec<(Entity, AvianEntity)>,
}

fn capture(world: &mut World) -> EngineState {
    let mut query = world.query_filtered::<Entity, Or<(With<AvianBody>, With<AvianCollider>)>>();
    let ids: Vec<Entity> = query.iter(world).collect();
    let entities = ids.into_iter().map(|e| (e, AvianEntity::capture(world.entity(e)))).collect();
    std::sync::Arc::new(AvianState {
        contacts: world.resource::<ContactGraph>().clone(),
        constraints: world.resource::<ConstraintGraph>().clone(),
        trees: world.resource::<ColliderTrees>().clone(),
        moved: world.resource::<MovedProxies>().clone(),
        islands: world.resource::<PhysicsIslands>().clone(),
        joints: world.resource::<JointGraph>().clone(),
        time: *world.resource::<Time<Physics>>(),
        substeps: *world.resource::<Time<Substeps>>(),
        entities,
    })
}

fn restore(world: &mut World, state: &EngineState) {
    let Some(state) = state.downcast_ref::<AvianState>() else { return };
    *world.resource_mut::<ContactGraph>() = state.contacts.clone();
    *world.resource_mut::<ConstraintGraph>() = state.constraints.clone();
    *world.resource_mut::<ColliderTrees>() = state.trees.clone();
    *world.resource_mut::<MovedProxies>() = state.moved.clone();
    *world.resource_mut::<PhysicsIslands>() = state.islands.clone();
    *world.resource_mut::<JointGraph>() = state.joints.clone();
    *world.resource_mut::<Time<Physics>>() = state.time;
    *world.resource_mut::<Time<Substeps>>() = state.substeps;
    for (entity, saved) in &state.entities {
        if let Ok(mut entity) = world.get_entity_mut(*entity) {
            saved.restore(&mut entity);
        }
    }
}

/// Avian's part of a tick: `FixedPostUpdate` (where `PhysicsPlugins::default()` steps), seeing the fixed clock
/// as the tick does.
fn step(world: &mut World) {
    let outer = *world.resource::<Time>();
    *world.resource_mut::<Time>() = world.resource::<Time<Fixed>>().as_generic();
    world.run_schedule(FixedPostUpdate);
    *world.resource_mut::<Time>() = outer;
}
