//! Materials and visuals: both sides of every cloth over its fabric, meshes for colliders, small spheres on pinned
//! vertices, lights, and the orbit camera framing the scene.

use bevy::light::CascadeShadowConfigBuilder;
use bevy::prelude::*;
use bevy_panorbit_camera::PanOrbitCamera;

use super::fabric::{FabricTextures, cloth_materials};
use drape::scene::mesh_collider::MeshCollider;
use drape::scene::spawn::{ActiveScene, Appearance};
use drape::sim::cloth::{Attachments, Cloth, ClothCollider, Particles, StretchConstraints};
use drape::sim::collide::ColliderShape;
use drape::skinning::{BoneCollider, ClothSkinning};

/// Half the side of the square drawn for a plane collider, metres.
const GROUND_HALF_SIZE: f32 = 12.0;
/// Radius of the sphere drawn on a pinned vertex, metres.
const PIN_RADIUS: f32 = 0.025;

fn srgb(c: [f32; 3]) -> Color {
    Color::srgb(c[0], c[1], c[2])
}

/// Sun, sky light and the camera.
pub fn spawn_lights(mut commands: Commands) {
    commands.spawn((
        DirectionalLight { illuminance: 9_000.0, shadow_maps_enabled: true, ..default() },
        Transform::from_xyz(4.0, 9.0, 5.0).looking_at(Vec3::ZERO, Vec3::Y),
        CascadeShadowConfigBuilder { num_cascades: 2, maximum_distance: 25.0, ..default() }.build(),
    ));
    commands.spawn((
        Camera3d::default(),
        drape::input::DrapeCamera,
        AmbientLight { brightness: 450.0, ..default() },
        Transform::from_xyz(0.0, 2.0, 6.0).looking_at(Vec3::new(0.0, 1.0, 0.0), Vec3::Y),
        PanOrbitCamera {
            focus: Vec3::new(0.0, 1.0, 0.0),
            radius: Some(6.0),
            yaw: Some(0.0),
            pitch: Some(0.2),
            button_orbit: MouseButton::Right,
            button_pan: MouseButton::Middle,
            ..default()
        },
    ));
}

/// Points the orbit camera at the scene's camera description whenever a scene is loaded.
pub fn frame_camera_on_scene(active: Res<ActiveScene>, mut cameras: Query<&mut PanOrbitCamera>) {
    if !active.is_changed() {
        return;
    }
    let c = active.0.camera;
    let (yaw, pitch, radius) = (c.yaw_degrees.to_radians(), c.pitch_degrees.to_radians(), c.distance.max(0.1));
    for mut cam in &mut cameras {
        (cam.focus, cam.yaw, cam.pitch, cam.radius) = (c.focus, Some(yaw), Some(pitch), Some(radius));
        (cam.target_focus, cam.target_yaw, cam.target_pitch, cam.target_radius) = (c.focus, yaw, pitch, radius);
        cam.force_update = true;
    }
}

/// Both sides' materials of a cloth; a child sharing the cloth's mesh draws its back.
#[derive(Component, Clone, Debug)]
pub struct ClothSides {
    /// The front's material (on the cloth entity).
    pub front: Handle<StandardMaterial>,
    /// The back's material (on the child).
    pub back: Handle<StandardMaterial>,
    /// Both materials as the fabric draws them (front, back), restored when a view changed them.
    pub shaded: [StandardMaterial; 2],
}

/// A cloth whose sides are not drawn yet.
type NotYetDrawn = (With<Cloth>, Without<ClothSides>);

/// Gives every cloth that has its render mesh (from [`ClothMeshPlugin`](drape::mesh_sync::ClothMeshPlugin)) a
/// front material and a child drawing its back, both over the fabric texture of its [`Appearance`].
pub fn add_cloth_visuals(
    mut commands: Commands,
    cloths: Query<(Entity, &Mesh3d, Option<&Appearance>), NotYetDrawn>,
    mut materials: ResMut<Assets<StandardMaterial>>,
    mut images: ResMut<Assets<Image>>,
    mut textures: Local<FabricTextures>,
) {
    for (entity, mesh, appearance) in &cloths {
        let color = appearance.map_or(drape::scene::desc::CLOTH_RED, |a| a.color);
        let fabric = appearance.and_then(|a| a.fabric).unwrap_or_default();
        let texture = textures.get(fabric.pattern, &mut images);
        let shaded = cloth_materials(color, fabric, texture);
        let (front, back) = (materials.add(shaded.0.clone()), materials.add(shaded.1.clone()));
        let mut back_side = commands.spawn((Mesh3d(mesh.0.clone()), MeshMaterial3d(back.clone()), ChildOf(entity)));
        back_side.insert(bevy::camera::visibility::NoFrustumCulling);
        commands
            .entity(entity)
            .insert((MeshMaterial3d(front.clone()), ClothSides { front, back, shaded: [shaded.0, shaded.1] }));
    }
}

/// A collider just spawned that is drawn: a bone's capsule is not, its character's mesh is.
type NewDrawnCollider = (Added<ClothCollider>, Without<BoneCollider>);

/// Gives every new collider a mesh.
pub fn add_collider_visuals(
    mut commands: Commands,
    colliders: Query<(Entity, &ClothCollider, Option<&Appearance>), NewDrawnCollider>,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
) {
    for (entity, collider, appearance) in &colliders {
        let mesh = match collider.shape {
            ColliderShape::Plane => Plane3d::new(Vec3::Y, Vec2::splat(GROUND_HALF_SIZE)).mesh().build(),
            ColliderShape::Sphere { radius } => Sphere::new(radius).mesh().uv(64, 32),
            ColliderShape::Box { half_extents } => Cuboid::from_size(half_extents * 2.0).mesh().build(),
            ColliderShape::Capsule { radius, half_height } => Capsule3d::new(radius, half_height * 2.0).mesh().build(),
            ColliderShape::Barrel { radius, half_height } => {
                Cylinder::new(radius, half_height * 2.0).mesh().resolution(48).build()
            }
        };
        let mut material = collider_material(appearance);
        if matches!(collider.shape, ColliderShape::Barrel { .. }) {
            // only the far, inner side is drawn (lit from inside): the cloth within stays in view
            (material.cull_mode, material.double_sided) = (Some(bevy::render::render_resource::Face::Front), true);
        }
        commands.entity(entity).insert((Mesh3d(meshes.add(mesh)), MeshMaterial3d(materials.add(material))));
    }
}

/// Gives every new mesh collider its triangles to draw, flat-shaded (a low-poly figure reads as one).
pub fn add_mesh_collider_visuals(
    mut commands: Commands,
    colliders: Query<(Entity, &MeshCollider, Option<&Appearance>), Added<MeshCollider>>,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
) {
    for (entity, collider, appearance) in &colliders {
        let indices = collider.mesh.triangles.iter().flatten().copied().collect();
        let mut mesh =
            Mesh::new(bevy::mesh::PrimitiveTopology::TriangleList, bevy::asset::RenderAssetUsages::default())
                .with_inserted_attribute(Mesh::ATTRIBUTE_POSITION, collider.mesh.positions.clone())
                .with_inserted_indices(bevy::mesh::Indices::U32(indices));
        mesh.duplicate_vertices();
        mesh.compute_flat_normals();
        let material = collider_material(appearance);
        commands.entity(entity).insert((Mesh3d(meshes.add(mesh)), MeshMaterial3d(materials.add(material))));
    }
}

/// A collider's material: its colour, matte.
fn collider_material(appearance: Option<&Appearance>) -> StandardMaterial {
    let color = appearance.map_or([0.5; 3], |a| a.color);
    StandardMaterial { base_color: srgb(color), perceptual_roughness: 0.6, ..default() }
}

/// A small sphere drawn on a pinned vertex of a cloth.
#[derive(Component, Clone, Copy, Debug)]
pub struct PinMarker {
    /// The cloth entity.
    pub cloth: Entity,
    /// Index of the pinned vertex in that cloth.
    pub vertex: u32,
}

/// Keeps one marker per attached vertex (respawned when the attachments change) on its vertex, at most as wide as
/// the cloth's mean edge is long, so the stems of small leaves do not disappear behind their markers.
pub fn sync_pin_markers(
    mut commands: Commands,
    cloths: Query<(Entity, Ref<Attachments>, &Particles, &StretchConstraints), Without<ClothSkinning>>,
    mut markers: Query<(Entity, &PinMarker, &mut Transform)>,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
    mut assets: Local<Option<(Handle<Mesh>, Handle<StandardMaterial>)>>,
) {
    for (entity, marker, mut transform) in &mut markers {
        match cloths.get(marker.cloth) {
            Ok((_, attachments, particles, _)) if !attachments.is_changed() => {
                if let Some(x) = particles.x.get(marker.vertex as usize) {
                    transform.translation = *x;
                }
            }
            _ => commands.entity(entity).despawn(),
        }
    }
    let (mesh, material) = assets
        .get_or_insert_with(|| {
            let mesh = meshes.add(Sphere::new(PIN_RADIUS).mesh().uv(12, 8));
            let material =
                materials.add(StandardMaterial { base_color: Color::srgb(0.95, 0.85, 0.2), unlit: true, ..default() });
            (mesh, material)
        })
        .clone();
    for (cloth, attachments, particles, stretch) in &cloths {
        if !attachments.is_changed() {
            continue;
        }
        let rest = stretch.rest_length();
        let mean_edge = rest.iter().sum::<f32>() / rest.len().max(1) as f32;
        let scale = if mean_edge > 0.0 { (0.5 * mean_edge / PIN_RADIUS).min(1.0) } else { 1.0 };
        for a in &attachments.0 {
            let at = particles.x.get(a.vertex as usize).copied().unwrap_or(a.anchor);
            commands.spawn((
                PinMarker { cloth, vertex: a.vertex },
                Mesh3d(mesh.clone()),
                MeshMaterial3d(material.clone()),
                Transform::from_translation(at).with_scale(Vec3::splat(scale)),
                drape::scene::SceneEntity,
            ));
        }
    }
}
