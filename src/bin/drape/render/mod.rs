//! What the demo shows: both sides of every cloth lit over a fabric texture (whose mesh [`ClothMeshPlugin`] keeps up to
//! date), collider and pin visuals, the camera and lights.

pub mod characters;
pub mod fabric;
pub mod views;
pub mod visuals;

use bevy::prelude::*;

use drape::mesh_sync::ClothMeshPlugin;

/// The demo's visuals; needs `DefaultPlugins` (or at least the PBR renderer). Adds [`ClothMeshPlugin`].
pub struct ClothRenderPlugin;

impl Plugin for ClothRenderPlugin {
    fn build(&self, app: &mut App) {
        if !app.is_plugin_added::<ClothMeshPlugin>() {
            app.add_plugins(ClothMeshPlugin);
        }
        app.add_plugins(views::ViewsPlugin);
        characters::register_gltf_components(app);
        app.insert_resource(ClearColor(Color::srgb(0.09, 0.11, 0.15)))
            .add_systems(Startup, visuals::spawn_lights)
            .add_systems(
                Update,
                (
                    visuals::add_collider_visuals,
                    visuals::add_mesh_collider_visuals,
                    visuals::frame_camera_on_scene,
                    (characters::add_character_visuals, characters::pose_character_visuals).chain(),
                ),
            )
            .add_systems(
                PostUpdate,
                (visuals::add_cloth_visuals.after(drape::mesh_sync::attach_render_meshes), visuals::sync_pin_markers)
                    .before(bevy::transform::TransformSystems::Propagate),
            );
    }
}
