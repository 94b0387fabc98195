//! Keeping what was made: the cloths of a world as a Wavefront OBJ file ([`obj`]), each cloth one object with
//! positions, normals and texture coordinates; recorded steps as an animated binary glTF file ([`gltf`]).

pub mod gltf;
pub mod obj;

use bevy::prelude::*;

use crate::mesh_sync::{spherical_uvs, vertex_normals};
use crate::sim::cloth::{Cloth, ClothMesh, Particles};

/// One cloth's surface as it is now, ready to write.
#[derive(Clone, Debug, PartialEq)]
pub struct ClothSurface {
    /// The cloth's name (the OBJ object's).
    pub name: String,
    /// Vertex positions, world space.
    pub positions: Vec<Vec3>,
    /// Area-weighted vertex normals (as rendered).
    pub normals: Vec<[f32; 3]>,
    /// Texture coordinates (as rendered: the mesh's own, or longitude and latitude when it has none).
    pub uvs: Vec<[f32; 2]>,
    /// Triangles, indices into the vertices of this cloth.
    pub triangles: Vec<[u32; 3]>,
}

impl ClothSurface {
    /// The surface of one cloth.
    pub fn of(cloth: &Cloth, particles: &Particles, mesh: &ClothMesh) -> Self {
        let mut normals = vec![[0.0; 3]; particles.len()];
        vertex_normals(&particles.x, &mesh.triangles, &mut normals);
        let uvs = if mesh.uvs.len() == particles.len() { mesh.uvs.clone() } else { spherical_uvs(&particles.x) };
        Self {
            name: cloth.name.clone(),
            positions: particles.x.clone(),
            normals,
            uvs,
            triangles: mesh.triangles.clone(),
        }
    }
}

/// The surfaces of `cloths`, in the order they were spawned.
pub fn surfaces<'a>(
    cloths: impl Iterator<Item = (Entity, &'a Cloth, &'a Particles, &'a ClothMesh)>,
) -> Vec<ClothSurface> {
    let mut cloths: Vec<(Entity, ClothSurface)> = cloths.map(|(e, c, p, m)| (e, ClothSurface::of(c, p, m))).collect();
    cloths.sort_by_key(|(e, _)| *e);
    cloths.into_iter().map(|(_, s)| s).collect()
}

/// Every cloth of `world`, in the order they were spawned.
pub fn cloth_surfaces(world: &mut World) -> Vec<ClothSurface> {
    surfaces(world.query::<(Entity, &Cloth, &Particles, &ClothMesh)>().iter(world))
}
