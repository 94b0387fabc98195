//! A flag on a pole, blown by gusty wind around a ball: drape in a plain Bevy app, using only the prelude.
//! Drag the flag with the left mouse button (Shift+click pins a vertex).
//!
//! `cargo run --release --example minimal`

use std::f32::consts::FRAC_PI_2;

use bevy::prelude::*;
use drape::prelude::*;

fn main() {
    App::new()
        .insert_resource(SimParams { wind: Vec3::new(6.0, 0.0, -2.0), wind_gust: 2.0, air_drag: 0.6, ..default() })
        .add_plugins((DefaultPlugins, DrapePlugins))
        .add_systems(Startup, setup)
        .run();
}

fn setup(mut commands: Commands, mut meshes: ResMut<Assets<Mesh>>, mut materials: ResMut<Assets<StandardMaterial>>) {
    let mut solid = |color: Color| MeshMaterial3d(materials.add(color));
    let (steel, wood, grass) =
        (solid(Color::srgb(0.7, 0.7, 0.75)), solid(Color::srgb(0.8, 0.6, 0.3)), solid(Color::srgb(0.3, 0.5, 0.3)));

    // a pole, a ball and the ground: each a collider with the mesh that draws it
    let pole = Capsule3d::new(0.04, 2.5);
    commands.spawn((
        ClothCollider::new(pole.into()),
        Transform::from_xyz(0.0, 1.25, 0.0),
        Mesh3d(meshes.add(pole)),
        steel,
    ));
    let ball = Sphere::new(0.3);
    commands.spawn((
        ClothCollider::new(ball.into()),
        Transform::from_xyz(1.2, 2.0, -0.5),
        Mesh3d(meshes.add(ball)),
        wood,
    ));
    let ground = Mesh3d(meshes.add(Plane3d::default().mesh().size(8.0, 8.0)));
    commands.spawn((ClothCollider::new(ColliderShape::Plane), Transform::default(), ground, grass));

    // the flag: 1.5 m × 1 m stood up in the XY plane, its edge u = 0 pinned along the pole
    let flag = ClothBuilder::grid(36, 24, Vec2::new(1.5, 1.0))
        .placed(Transform::from_xyz(0.8, 2.0, 0.0).with_rotation(Quat::from_rotation_x(FRAC_PI_2)))
        .material(ClothMaterial { bend_stiffness: 0.02, density: 0.15, ..default() })
        .pin(Pin::Column { u: 0.0 })
        .build()
        .expect("a grid is valid cloth");
    let fabric =
        StandardMaterial { base_color: Color::srgb(0.8, 0.1, 0.1), double_sided: true, cull_mode: None, ..default() };
    commands.spawn((flag, MeshMaterial3d(materials.add(fabric))));

    commands.spawn((
        DirectionalLight { illuminance: 8_000.0, shadow_maps_enabled: true, ..default() },
        Transform::from_xyz(3.0, 6.0, 4.0).looking_at(Vec3::ZERO, Vec3::Y),
    ));
    commands.spawn((
        Camera3d::default(),
        DrapeCamera,
        AmbientLight { brightness: 400.0, ..default() },
        Transform::from_xyz(2.5, 2.2, 3.5).looking_at(Vec3::new(0.6, 1.6, -0.3), Vec3::Y),
    ));
}
