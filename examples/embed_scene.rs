//! Cloth in a Bevy scene the user already has: their camera, their lights, their table built from Bevy
//! primitives — and those same primitives as the cloth's colliders. drape adds physics and mesh sync only; the
//! cloth advances in `Update` by its own 60 Hz clock, leaving the app's `Time<Fixed>` (here 50 Hz) alone.
//!
//! `cargo run --release --example embed_scene`

use bevy::prelude::*;
use drape::prelude::*;

fn main() {
    App::new()
        .insert_resource(Time::<Fixed>::from_hz(50.0))
        .add_plugins(DefaultPlugins)
        .add_systems(Startup, (existing_scene, add_tablecloth))
        .add_plugins(DrapePlugins.set(ClothSimPlugin::new(Update)))
        .run();
}

/// What the user had before drape: a table, a vase, lights and a camera.
fn existing_scene(
    mut commands: Commands,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
) {
    let wood = materials.add(Color::srgb(0.45, 0.3, 0.2));
    let top = Cuboid::new(1.4, 0.06, 0.9);
    let vase = Capsule3d::new(0.09, 0.2);
    for (shape, at, material) in [
        (Mesh3d(meshes.add(top)), Vec3::new(0.0, 0.75, 0.0), wood.clone()),
        (Mesh3d(meshes.add(vase)), Vec3::new(0.2, 0.97, 0.1), materials.add(Color::srgb(0.2, 0.35, 0.7))),
    ] {
        commands.spawn((shape, MeshMaterial3d(material), Transform::from_translation(at), Table));
    }
    commands.spawn((
        Mesh3d(meshes.add(Plane3d::default().mesh().size(6.0, 6.0))),
        MeshMaterial3d(materials.add(Color::srgb(0.6, 0.6, 0.55))),
    ));
    commands.spawn((
        PointLight { intensity: 600_000.0, shadow_maps_enabled: true, ..default() },
        Transform::from_xyz(1.5, 3.0, 1.5),
    ));
    commands
        .spawn((Camera3d::default(), Transform::from_xyz(1.8, 1.9, 2.2).looking_at(Vec3::new(0.0, 0.8, 0.0), Vec3::Y)));
}

/// Marks the user's table pieces.
#[derive(Component)]
struct Table;

/// drape's part: the table's primitives become colliders, a cloth falls on them; the user's camera picks.
fn add_tablecloth(
    mut commands: Commands,
    mut materials: ResMut<Assets<StandardMaterial>>,
    camera: Single<Entity, With<Camera3d>>,
) {
    commands.entity(*camera).insert(DrapeCamera);
    commands.spawn((Collider::new(Cuboid::new(1.4, 0.06, 0.9).into()), Transform::from_xyz(0.0, 0.75, 0.0)));
    commands.spawn((Collider::new(Capsule3d::new(0.09, 0.2).into()), Transform::from_xyz(0.2, 0.97, 0.1)));
    commands.spawn((Collider::new(ColliderShape::Plane), Transform::default()));
    let cloth = ClothBuilder::grid(40, 30, Vec2::new(1.8, 1.3))
        .placed(Transform::from_xyz(0.0, 1.4, 0.0))
        .material(ClothMaterial { bend_stiffness: 0.02, ..default() })
        .build()
        .expect("a grid is valid cloth");
    let linen =
        StandardMaterial { base_color: Color::srgb(0.93, 0.9, 0.82), double_sided: true, cull_mode: None, ..default() };
    commands.spawn((cloth, MeshMaterial3d(materials.add(linen))));
}
