//! A cloth falling on an Avian scene: a static ramp and a dynamic box on Avian's ground, with drape's prelude
//! and Avian's side by side. Every Avian collider is also the cloth's (§3.4), and the cloth pushes the box back
//! (§4.2): drape hands its impulses to Avian before Avian's step.
//!
//! `cargo run --release --example avian`

use avian3d::prelude::*;
use bevy::prelude::*;
use drape::prelude::*;

fn main() {
    App::new()
        .add_plugins((DefaultPlugins, PhysicsPlugins::default(), DrapePlugins, AvianClothPlugin))
        // one cloth step per fixed tick, so the two engines take turns
        .add_systems(Update, match_fixed_timestep_to_cloth)
        .add_systems(Startup, setup)
        .run();
}

fn setup(mut commands: Commands, mut meshes: ResMut<Assets<Mesh>>, mut materials: ResMut<Assets<StandardMaterial>>) {
    let mut solid = |color: Color| MeshMaterial3d(materials.add(color));
    let (stone, wood, grass) =
        (solid(Color::srgb(0.6, 0.6, 0.65)), solid(Color::srgb(0.8, 0.6, 0.3)), solid(Color::srgb(0.3, 0.5, 0.3)));

    // Avian's world: the ground, a ramp tilted 20°, and a 40 cm box resting at the ramp's foot
    let ground = Mesh3d(meshes.add(Plane3d::default().mesh().size(10.0, 10.0)));
    commands.spawn((RigidBody::Static, Collider::half_space(Vec3::Y), Transform::default(), ground, grass));
    let ramp = Cuboid::new(2.0, 0.2, 1.6);
    commands.spawn((
        RigidBody::Static,
        Collider::from(ramp),
        Transform::from_xyz(-0.6, 0.45, 0.0).with_rotation(Quat::from_rotation_z(-20f32.to_radians())),
        Mesh3d(meshes.add(ramp)),
        stone,
    ));
    let crate_box = Cuboid::new(0.4, 0.4, 0.4);
    commands.spawn((
        RigidBody::Dynamic,
        Collider::from(crate_box),
        Transform::from_xyz(0.7, 0.2, 0.1),
        Mesh3d(meshes.add(crate_box)),
        wood,
    ));

    // drape's cloth: 1.4 m square, held level 1.6 m up, dropped over the ramp and the box
    let sheet = ClothBuilder::grid(32, 32, Vec2::splat(1.4))
        .placed(Transform::from_xyz(0.0, 1.6, 0.0))
        .material(ClothMaterial { bend_stiffness: 0.05, ..default() })
        .build()
        .expect("a grid is valid cloth");
    let fabric =
        StandardMaterial { base_color: Color::srgb(0.8, 0.1, 0.1), double_sided: true, cull_mode: None, ..default() };
    commands.spawn((sheet, MeshMaterial3d(materials.add(fabric))));

    commands.spawn((
        DirectionalLight { illuminance: 8_000.0, shadow_maps_enabled: true, ..default() },
        Transform::from_xyz(3.0, 6.0, 4.0).looking_at(Vec3::ZERO, Vec3::Y),
    ));
    commands.spawn((
        Camera3d::default(),
        DrapeCamera,
        AmbientLight { brightness: 400.0, ..default() },
        Transform::from_xyz(2.2, 2.0, 3.2).looking_at(Vec3::new(0.0, 0.4, 0.0), Vec3::Y),
    ));
}
