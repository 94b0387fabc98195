//! [`DrapePlugins`]: the library's plugins in one group — the solver ([`ClothSimPlugin`]), mesh sync
//! ([`ClothMeshPlugin`]) and, with the `picking` feature, grabbing cloth with the mouse
//! ([`ClothPickingPlugin`](crate::input::ClothPickingPlugin)). Each can be disabled or replaced like any plugin
//! of a group: `DrapePlugins.set(ClothSimPlugin::new(Update))`.

use bevy::app::{PluginGroup, PluginGroupBuilder};

use crate::mesh_sync::ClothMeshPlugin;
use crate::sim::ClothSimPlugin;

/// The solver in `FixedUpdate`, mesh sync, and (feature `picking`) mouse picking.
pub struct DrapePlugins;

impl PluginGroup for DrapePlugins {
    fn build(self) -> PluginGroupBuilder {
        let group = PluginGroupBuilder::start::<Self>().add(ClothSimPlugin::default()).add(ClothMeshPlugin);
        #[cfg(feature = "picking")]
        let group = group.add(crate::input::ClothPickingPlugin);
        group
    }
}
