//! Cloth in a Bevy scene the user already has: their camera, their lights, their table and vase built from Bevy
//! primitives — and those same entities, given a `ClothCollider` of the same primitive, hold the cloth up. drape adds
//! physics and mesh sync only; the cloth advances in `Update` by its own 60 Hz clock, leaving the app's
//! `Time<Fixed>` (here 50 Hz) alone.
//!
//! `cargo run --release --example embed_scene`

use bevy::prelude::*;
use drape::prelude::*;

const TABLE_TOP: Cuboid = Cuboid { half_size: Vec3::new(0.7, 0.03, 0.45) };
const VASE: Capsule3d = Capsule3d { radius: 0.09, half_length: 0.1 };

fn main() {
    App::new()
        .insert_resource(Time::<Fixed>::from_hz(50.0))
        .add_plugins((DefaultPlugins, DrapePlugins.set(ClothSimPlugin::new(Update))))
        .add_systems(Startup, (existing_scene, add_tablecloth).chain())
        .run();
}

/// The user's own pieces, which drape turns into colliders.
#[derive(Component)]
enum Furniture {
    Floor,
    TableTop,
    Vase,
}

/// What the user had before drape: a floor, a table with a vase, a light and a camera.
fn existing_scene(
    mut commands: Commands,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
) {
    let mut solid = |color: Color| MeshMaterial3d(materials.add(color));
    let (stone, wood, glaze) =
        (solid(Color::srgb(0.6, 0.6, 0.55)), solid(Color::srgb(0.45, 0.3, 0.2)), solid(Color::srgb(0.2, 0.35, 0.7)));
    let floor = Mesh3d(meshes.add(Plane3d::default().mesh().size(6.0, 6.0)));
    commands.spawn((floor, stone, Transform::default(), Furniture::Floor));
    let top = Mesh3d(meshes.add(TABLE_TOP));
    commands.spawn((top, wood, Transform::from_xyz(0.0, 0.75, 0.0), Furniture::TableTop));
    let vase = Mesh3d(meshes.add(VASE));
    commands.spawn((vase, glaze, Transform::from_xyz(0.2, 0.97, 0.1), Furniture::Vase));
    commands.spawn((
        PointLight { intensity: 600_000.0, shadow_maps_enabled: true, ..default() },
        Transform::from_xyz(1.5, 3.0, 1.5),
    ));
    let camera = Transform::from_xyz(1.8, 1.9, 2.2).looking_at(Vec3::new(0.0, 0.8, 0.0), Vec3::Y);
    commands.spawn((Camera3d::default(), camera));
}

/// drape's part: each piece of furniture gets a collider of its own shape, a tablecloth falls on them, and the
/// user's camera picks (drag the cloth with the left mouse button).
fn add_tablecloth(
    mut commands: Commands,
    mut materials: ResMut<Assets<StandardMaterial>>,
    furniture: Query<(Entity, &Furniture)>,
    camera: Single<Entity, With<Camera3d>>,
) {
    for (entity, piece) in &furniture {
        let shape = match piece {
            Furniture::Floor => ColliderShape::Plane,
            Furniture::TableTop => TABLE_TOP.into(),
            Furniture::Vase => VASE.into(),
        };
        commands.entity(entity).insert(ClothCollider::new(shape));
    }
    commands.entity(*camera).insert(DrapeCamera);
    let cloth = ClothBuilder::grid(40, 30, Vec2::new(1.8, 1.3))
        .placed(Transform::from_xyz(0.0, 1.4, 0.0))
        .material(ClothMaterial { bend_stiffness: 0.02, ..default() })
        .build()
        .expect("a grid is valid cloth");
    let linen =
        StandardMaterial { base_color: Color::srgb(0.93, 0.9, 0.82), double_sided: true, cull_mode: None, ..default() };
    commands.spawn((cloth, MeshMaterial3d(materials.add(linen))));
}
