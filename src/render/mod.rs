//! What the user sees: cloth meshes updated in place every frame (positions and normals), lit and two-sided;
//! collider and pin visuals; the camera and lights.

pub mod cloth_mesh;
pub mod visuals;

use bevy::prelude::*;

use crate::sim::PbdStage;

/// Rendering of the simulation; needs `DefaultPlugins` (or at least the PBR renderer).
pub struct ClothRenderPlugin;

impl Plugin for ClothRenderPlugin {
    fn build(&self, app: &mut App) {
        app.insert_resource(ClearColor(Color::srgb(0.09, 0.11, 0.15)))
            .add_systems(Startup, visuals::spawn_lights)
            .add_systems(
                Update,
                (visuals::add_cloth_visuals, visuals::add_collider_visuals, visuals::frame_camera_on_scene),
            )
            .add_systems(
                PostUpdate,
                (cloth_mesh::sync_cloth_meshes.in_set(PbdStage::MeshSync), visuals::sync_pin_markers)
                    .before(bevy::transform::TransformSystems::Propagate),
            );
    }
}
