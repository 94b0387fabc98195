//! The demo's visuals across scene switches: loading one scene after another leaks no entities, meshes or
//! materials.

use bevy::asset::AssetPlugin;
use bevy::prelude::*;
use drape::headless::headless_app_with;
use drape::mesh_sync::ClothMeshPlugin;
use drape::scene::preset;
use drape::scene::{SceneEntity, SceneRequest};

use crate::render::visuals::{add_cloth_visuals, add_collider_visuals};

/// A headless App that also gives cloths and colliders their meshes and materials, as the window does.
fn app_with_visuals(name: &str) -> App {
    headless_app_with(preset::load(name).unwrap(), |app| {
        app.add_plugins((AssetPlugin::default(), ClothMeshPlugin))
            .init_asset::<StandardMaterial>()
            .init_asset::<Image>()
            .add_systems(Update, (add_cloth_visuals, add_collider_visuals));
    })
}

fn counts(app: &mut App) -> (usize, usize, usize) {
    let entities = app.world_mut().query::<&SceneEntity>().iter(app.world()).count();
    (entities, app.world().resource::<Assets<Mesh>>().len(), app.world().resource::<Assets<StandardMaterial>>().len())
}

#[test]
fn switching_scenes_leaks_no_entities_meshes_or_materials() {
    let mut app = app_with_visuals("sphere_drape");
    for _ in 0..3 {
        app.update();
    }
    let first = counts(&mut app);
    assert_eq!(first, (3, 3, 4), "sphere_drape: cloth (two materials: front and back), ground, sphere");
    for name in ["flag", "bend_vs_stretch", "sphere_drape", "hanging_sheet", "sphere_drape"] {
        app.world_mut().resource_mut::<SceneRequest>().0 = Some(preset::load(name).unwrap());
        for _ in 0..3 {
            app.update();
        }
    }
    assert_eq!(counts(&mut app), first, "after five switches back to sphere_drape");
    let all = |app: &mut App| app.world_mut().query::<Entity>().iter(app.world()).count();
    let total = all(&mut app);
    app.world_mut().resource_mut::<SceneRequest>().0 = Some(preset::load("sphere_drape").unwrap());
    for _ in 0..3 {
        app.update();
    }
    assert_eq!(all(&mut app), total, "entity count grows on reload");
}
