//! What a user needs to spawn cloth and colliders: `use drape::prelude::*;`.

pub use crate::mesh_sync::ClothMeshPlugin;
pub use crate::plugins::DrapePlugins;
pub use crate::scene::desc::PinSelector as Pin;
pub use crate::sim::cloth::{Cloth, ClothBundle, ClothMaterial, Collider, Particles};
pub use crate::sim::collide::{ColliderMotion, ColliderShape};
pub use crate::sim::constraints::attach::Motion;
pub use crate::sim::params::BendingModel;
pub use crate::sim::rigid::RigidBody;
pub use crate::sim::{ClothSimPlugin, ClothStep, ClothStepSystems, SimClock, SimControl, SimParams};
pub use crate::spawn::ClothBuilder;

#[cfg(feature = "picking")]
pub use crate::input::{ClothPickingPlugin, DrapeCamera, UiCapture};
