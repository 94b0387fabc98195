//! Engines stepping beside the cloth in the same tick (Avian, with the `avian` feature): what a snapshot keeps of
//! their state and how a step run again runs them, so that a resumed run repeats the original bit for bit with
//! them too. A plugin that adds such an engine registers it in [`CoupledEngines`].

use std::any::Any;
use std::sync::Arc;

use bevy::prelude::*;

/// A copy of an engine's state, as its [`CoupledEngine::capture`] took it.
pub type EngineState = Arc<dyn Any + Send + Sync>;

/// One engine stepping beside the cloth.
#[derive(Clone, Copy, Debug)]
pub struct CoupledEngine {
    /// Copies everything of the engine's state that its next step reads, between two ticks.
    pub capture: fn(&mut World) -> EngineState,
    /// Puts a copy back, after drape's own state is back (bodies despawned since are gone).
    pub restore: fn(&mut World, &EngineState),
    /// Runs the engine's part of a tick after a cloth step run again.
    pub step: fn(&mut World),
}

/// The engines stepping beside the cloth, in the order they were registered (a resource).
#[derive(Resource, Clone, Debug, Default)]
pub struct CoupledEngines(pub Vec<CoupledEngine>);

impl CoupledEngines {
    /// Adds `engine` to `app`'s engines.
    pub fn register(app: &mut App, engine: CoupledEngine) {
        app.world_mut().get_resource_or_init::<CoupledEngines>().0.push(engine);
    }

    /// The engines of `world` (none when no plugin registered one).
    pub fn of(world: &World) -> Vec<CoupledEngine> {
        world.get_resource::<CoupledEngines>().map_or_else(Vec::new, |e| e.0.clone())
    }
}
