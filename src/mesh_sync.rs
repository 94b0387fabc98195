//! [`ClothMeshPlugin`]: every cloth's Bevy [`Mesh`], built once from the cloth's triangles, then updated in place
//! every frame from the particle positions (positions and area-weighted normals, no new allocation). If the
//! particle count changed (tearing) the mesh is rebuilt. It draws nothing itself: give the cloth entity a
//! material (`MeshMaterial3d`) and the renderer shows it; lights and cameras are the host's.

use std::time::Instant;

use bevy::asset::RenderAssetUsages;
use bevy::mesh::{Indices, PrimitiveTopology, VertexAttributeValues};
use bevy::prelude::*;

use crate::sim::cloth::{ClothMesh, Particles};
use crate::sim::{PbdStage, StageTimings};

/// Writes area-weighted vertex normals of the surface `x`, `triangles` into `normals` (same length as `x`).
pub(crate) fn vertex_normals(x: &[Vec3], triangles: &[[u32; 3]], normals: &mut [[f32; 3]]) {
    normals.fill([0.0; 3]);
    for t in triangles {
        let [a, b, c] = t.map(|i| i as usize);
        let n = (x[b] - x[a]).cross(x[c] - x[a]);
        for i in [a, b, c] {
            normals[i] = (Vec3::from(normals[i]) + n).into();
        }
    }
    for n in normals.iter_mut() {
        *n = Vec3::from(*n).normalize_or(Vec3::Y).into();
    }
}

/// Texture coordinates for a mesh that has none (an icosphere balloon): longitude and latitude around its
/// centroid, so a pattern wraps it.
pub(crate) fn spherical_uvs(x: &[Vec3]) -> Vec<[f32; 2]> {
    let centre = x.iter().sum::<Vec3>() / x.len().max(1) as f32;
    x.iter()
        .map(|p| {
            let d = (*p - centre).normalize_or(Vec3::Y);
            [0.5 + d.z.atan2(d.x) / std::f32::consts::TAU, d.y.clamp(-1.0, 1.0).acos() / std::f32::consts::PI]
        })
        .collect()
}

/// A new render mesh for a cloth.
pub(crate) fn build_mesh(particles: &Particles, mesh: &ClothMesh) -> Mesh {
    let positions: Vec<[f32; 3]> = particles.x.iter().map(|p| p.to_array()).collect();
    let mut normals = vec![[0.0; 3]; positions.len()];
    vertex_normals(&particles.x, &mesh.triangles, &mut normals);
    let uvs = if mesh.uvs.len() == positions.len() { mesh.uvs.clone() } else { spherical_uvs(&particles.x) };
    Mesh::new(PrimitiveTopology::TriangleList, RenderAssetUsages::default())
        .with_inserted_attribute(Mesh::ATTRIBUTE_POSITION, positions)
        .with_inserted_attribute(Mesh::ATTRIBUTE_NORMAL, normals)
        .with_inserted_attribute(Mesh::ATTRIBUTE_UV_0, uvs)
        .with_inserted_indices(Indices::U32(mesh.triangles.iter().flatten().copied().collect()))
}

/// Copies each cloth's positions and normals into its render mesh.
pub(crate) fn sync_cloth_meshes(
    cloths: Query<(&Particles, &ClothMesh, &Mesh3d)>,
    mut meshes: ResMut<Assets<Mesh>>,
    mut timings: ResMut<StageTimings>,
) {
    let start = Instant::now();
    for (particles, cloth_mesh, handle) in &cloths {
        let Some(mut mesh) = meshes.get_mut(&handle.0) else {
            continue;
        };
        let same_size = matches!(
            mesh.try_attribute(Mesh::ATTRIBUTE_POSITION),
            Ok(VertexAttributeValues::Float32x3(p)) if p.len() == particles.len()
        );
        if !same_size {
            *mesh = build_mesh(particles, cloth_mesh);
            continue;
        }
        if let Ok(VertexAttributeValues::Float32x3(positions)) = mesh.try_attribute_mut(Mesh::ATTRIBUTE_POSITION) {
            for (dst, src) in positions.iter_mut().zip(&particles.x) {
                *dst = src.to_array();
            }
        }
        if let Ok(VertexAttributeValues::Float32x3(normals)) = mesh.try_attribute_mut(Mesh::ATTRIBUTE_NORMAL) {
            vertex_normals(&particles.x, &cloth_mesh.triangles, normals);
        }
    }
    timings.add_outside_step(PbdStage::MeshSync, start);
}

/// Gives every cloth without one a mesh asset, at the identity transform (cloth positions are world space).
pub fn attach_render_meshes(
    mut commands: Commands,
    cloths: Query<(Entity, &Particles, &ClothMesh), Without<Mesh3d>>,
    mut meshes: ResMut<Assets<Mesh>>,
) {
    for (entity, particles, mesh) in &cloths {
        let mut cloth = commands.entity(entity);
        cloth.insert((Mesh3d(meshes.add(build_mesh(particles, mesh))), Transform::IDENTITY));
        // the mesh's bounds change every frame: never cull it by the bounds it was created with
        #[cfg(feature = "picking")]
        cloth.insert(bevy::camera::visibility::NoFrustumCulling);
    }
}

/// Gives `app` Bevy's `AssetPlugin` and `Assets<Mesh>` unless it has them (headless apps do not).
pub(crate) fn add_mesh_assets(app: &mut App) {
    if !app.is_plugin_added::<AssetPlugin>() {
        app.add_plugins(AssetPlugin::default());
    }
    if !app.world().contains_resource::<Assets<Mesh>>() {
        app.init_asset::<Mesh>();
    }
}

/// Keeps every cloth's [`Mesh`] in step with its particles, in `PostUpdate` ([`PbdStage::MeshSync`]). Adds
/// Bevy's `AssetPlugin` if the app has none (headless apps), so add it after `DefaultPlugins`.
pub struct ClothMeshPlugin;

impl Plugin for ClothMeshPlugin {
    fn build(&self, app: &mut App) {
        add_mesh_assets(app);
        app.add_systems(
            PostUpdate,
            (attach_render_meshes, sync_cloth_meshes.in_set(PbdStage::MeshSync))
                .chain()
                .before(bevy::transform::TransformSystems::Propagate),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flat_grid_normals_point_up() {
        let grid = crate::sim::mesh::topology::grid(3, 3, 1.0, 1.0).unwrap();
        let (x, tris) = (grid.positions, grid.triangles);
        let mut n = vec![[0.0; 3]; x.len()];
        vertex_normals(&x, &tris, &mut n);
        assert!(n.iter().all(|n| (Vec3::from(*n) - Vec3::Y).length() < 1e-6), "{n:?}");
    }
}
