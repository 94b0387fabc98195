//! [`DrapePlugins`]: the library's plugins in one group, like Avian's `PhysicsPlugins`. Each member can be
//! disabled (`DrapePlugins.build().disable::<TearingPlugin>()`) or replaced
//! (`DrapePlugins.set(ClothSimPlugin::new(Update))`); a disabled concern adds no system, so it costs nothing.
//!
//! | plugin | concern |
//! |---|---|
//! | [`ClothSimPlugin`] | the core loop: the schedules, the paper's stages (§3.1), colliders and bodies |
//! | [`SelfCollisionPlugin`] | each cloth against its own triangles (§4.3) |
//! | [`ClothContactsPlugin`] | cloth against cloth |
//! | [`TearingPlugin`] | tearing (§5) |
//! | [`TethersPlugin`] | long-range attachments |
//! | [`AerodynamicsPlugin`] | wind, gusts and drag |
//! | [`BalloonPlugin`] | overpressure in closed cloths (§4.4) |
//! | [`SleepPlugin`] | cloths at rest are not stepped until something could move them |
//! | [`ClothSkinningPlugin`] | cloth worn by an animated, skinned character |
//! | [`ClothMeshPlugin`] | each cloth's render `Mesh` updated every frame |
//! | `ClothPickingPlugin` | (feature `picking`) grabbing and pinning with the mouse |
//!
//! The per-scene switches of [`SimParams`](crate::sim::SimParams) (`self_collision`, `tearing`, …) still turn a
//! present plugin's work on and off.

use bevy::app::{PluginGroup, PluginGroupBuilder};

use crate::mesh_sync::ClothMeshPlugin;
use crate::sim::{
    AerodynamicsPlugin, BalloonPlugin, ClothContactsPlugin, ClothSimPlugin, SelfCollisionPlugin, SleepPlugin,
    TearingPlugin, TethersPlugin,
};
use crate::skinning::ClothSkinningPlugin;

/// The simulation's plugins without a render mesh or a mouse: the core loop and every concern plugin, for
/// headless apps (the headless runner uses it).
pub struct ClothSolverPlugins;

impl PluginGroup for ClothSolverPlugins {
    fn build(self) -> PluginGroupBuilder {
        PluginGroupBuilder::start::<Self>()
            .add(ClothSimPlugin::default())
            .add(SelfCollisionPlugin)
            .add(ClothContactsPlugin)
            .add(TearingPlugin)
            .add(TethersPlugin)
            .add(AerodynamicsPlugin)
            .add(BalloonPlugin)
            .add(SleepPlugin)
            .add(ClothSkinningPlugin)
    }
}

/// [`ClothSolverPlugins`], mesh sync and (feature `picking`) mouse picking.
pub struct DrapePlugins;

impl PluginGroup for DrapePlugins {
    fn build(self) -> PluginGroupBuilder {
        let group = PluginGroupBuilder::start::<Self>().add_group(ClothSolverPlugins).add(ClothMeshPlugin);
        #[cfg(feature = "picking")]
        let group = group.add(crate::input::ClothPickingPlugin);
        group
    }
}
