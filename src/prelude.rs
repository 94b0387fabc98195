//! What a user needs to spawn cloth and colliders: `use drape::prelude::*;`. Its names sit beside
//! `avian3d::prelude::*` without a clash: drape's collider and body are [`ClothCollider`] and [`ClothRigidBody`].

pub use crate::mesh_sync::ClothMeshPlugin;
pub use crate::plugins::{ClothSolverPlugins, DrapePlugins};
pub use crate::scene::desc::PinSelector as Pin;
pub use crate::sim::cloth::{Cloth, ClothBundle, ClothCollider, ClothMaterial, Particles};
pub use crate::sim::collide::{ColliderMotion, ColliderShape};
pub use crate::sim::constraints::attach::Motion;
pub use crate::sim::constraints::bend::BendingModel;
pub use crate::sim::plugin::match_fixed_timestep_to_cloth;
pub use crate::sim::rigid::ClothRigidBody;
pub use crate::sim::{
    AerodynamicsPlugin, BalloonPlugin, ClothContactsPlugin, ClothSimPlugin, ClothStep, ClothStepSystems,
    SelfCollisionPlugin, SimClock, SimControl, SimParams, TearingPlugin, TethersPlugin,
};
pub use crate::spawn::ClothBuilder;

#[cfg(feature = "avian")]
pub use crate::avian::AvianClothPlugin;
#[cfg(feature = "picking")]
pub use crate::input::{ClothPickingPlugin, DrapeCamera, UiCapture};
