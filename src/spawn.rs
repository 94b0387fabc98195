//! Building cloth to spawn: [`ClothBuilder`] takes a grid or any Bevy [`Mesh`] (positions and indices), places
//! it in the world, gives it a material and pins, and builds the [`ClothBundle`] of lines (1)–(3) of the paper:
//! masses from the areal density, a stretch constraint per edge and a bending constraint per pair of adjacent
//! triangles (§4.1), attachments with w = 0 (§3.6).
//!
//! ```
//! use bevy::prelude::*;
//! use drape::prelude::*;
//!
//! let curtain = ClothBuilder::grid(30, 20, Vec2::new(1.5, 1.0))
//!     .named("curtain")
//!     // stand the sheet up: its local XZ plane becomes the world's XY plane
//!     .placed(Transform::from_xyz(0.0, 1.5, 0.0).with_rotation(Quat::from_rotation_x(std::f32::consts::FRAC_PI_2)))
//!     .material(ClothMaterial { stretch_stiffness: 1.0, bend_stiffness: 0.05, ..default() })
//!     .pin(Pin::Row { v: 0.0 })
//!     .build()
//!     .unwrap();
//! assert_eq!(curtain.particles.len(), 31 * 21);
//! assert_eq!(curtain.attachments.0.len(), 31);
//! ```

use bevy::mesh::{Indices, PrimitiveTopology, VertexAttributeValues};
use bevy::prelude::*;

use crate::scene::desc::PinSelector;
use crate::sim::cloth::{ClothBundle, ClothMaterial};
use crate::sim::constraints::attach::{Attachment, Motion};
use crate::sim::mesh::topology::{self, MeshError, TriangleMesh};

/// A cloth to build: a triangle mesh in its local frame, where it goes, its material and its attachments.
#[derive(Clone, Debug)]
pub struct ClothBuilder {
    name: String,
    mesh: Result<TriangleMesh, MeshError>,
    placement: Transform,
    material: ClothMaterial,
    attachments: Vec<(Vec<PinSelector>, Motion)>,
}

impl ClothBuilder {
    /// A flat sheet of `cols` × `rows` quads of `size` metres (x by z) in the local XZ plane, centred on the
    /// origin; texture coordinates u along x, v along z, both 0–1 (what [`PinSelector`]s select by).
    pub fn grid(cols: u32, rows: u32, size: Vec2) -> Self {
        let mesh = if size.is_finite() && size.x > 0.0 && size.y > 0.0 {
            topology::grid(cols, rows, size.x, size.y)
        } else {
            Err(MeshError::NonFinite(0))
        };
        Self::with_mesh(mesh)
    }

    /// The triangles of a Bevy triangle-list `mesh` (positions, `u16`/`u32` or no indices, and `UV_0` if it has
    /// them). The mesh must be a manifold in which neighbouring triangles share vertices: a mesh with seams
    /// (split vertices along UV seams) falls apart along them.
    pub fn from_mesh(mesh: &Mesh) -> Self {
        Self::with_mesh(triangle_mesh(mesh))
    }

    /// Cloth from `positions` and counter-clockwise `triangles`, with optional per-vertex texture coordinates.
    pub fn from_triangles(positions: Vec<Vec3>, triangles: Vec<[u32; 3]>, uvs: Vec<[f32; 2]>) -> Self {
        Self::with_mesh(Ok(TriangleMesh { positions, triangles, uvs }))
    }

    fn with_mesh(mesh: Result<TriangleMesh, MeshError>) -> Self {
        Self {
            name: "cloth".into(),
            mesh,
            placement: Transform::IDENTITY,
            material: ClothMaterial::default(),
            attachments: Vec::new(),
        }
    }

    /// The cloth's name (shown in logs and the demo's panel).
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Where the local mesh goes in the world: rotation then translation (scale is ignored; size the mesh).
    pub fn placed(mut self, placement: Transform) -> Self {
        self.placement = placement;
        self
    }

    /// The cloth's material (stiffnesses, density, thickness).
    pub fn material(mut self, material: ClothMaterial) -> Self {
        self.material = material;
        self
    }

    /// Pins the vertices `pin` selects where they are.
    pub fn pin(self, pin: PinSelector) -> Self {
        self.attach(vec![pin], Motion::Fixed)
    }

    /// Attaches the vertices `at` selects to targets that move with `motion` (a kinematic attachment, §3.6).
    /// A vertex already attached keeps its first attachment.
    pub fn attach(mut self, at: Vec<PinSelector>, motion: Motion) -> Self {
        self.attachments.push((at, motion));
        self
    }

    /// The cloth entity's components, or why the mesh cannot be cloth.
    pub fn build(self) -> Result<ClothBundle, MeshError> {
        let local = self.mesh?;
        let rotation = self.placement.rotation;
        let positions: Vec<Vec3> = local.positions.iter().map(|&p| rotation * p + self.placement.translation).collect();
        let mut attachments: Vec<Attachment> = Vec::new();
        for (selectors, motion) in &self.attachments {
            for vertex in select_vertices(&local.uvs, positions.len(), selectors) {
                if !attachments.iter().any(|a| a.vertex == vertex) {
                    attachments.push(Attachment { vertex, anchor: positions[vertex as usize], motion: *motion });
                }
            }
        }
        ClothBundle::from_mesh(self.name, positions, local.triangles, local.uvs, self.material, attachments)
    }
}

/// The triangles of a Bevy mesh: positions, indices (or consecutive triples), texture coordinates if any.
fn triangle_mesh(mesh: &Mesh) -> Result<TriangleMesh, MeshError> {
    if mesh.primitive_topology() != PrimitiveTopology::TriangleList {
        return Err(MeshError::Empty);
    }
    let Ok(VertexAttributeValues::Float32x3(positions)) = mesh.try_attribute(Mesh::ATTRIBUTE_POSITION) else {
        return Err(MeshError::Empty);
    };
    let positions: Vec<Vec3> = positions.iter().map(|&p| Vec3::from(p)).collect();
    let indices: Vec<u32> = match mesh.indices() {
        Some(Indices::U16(i)) => i.iter().map(|&i| i as u32).collect(),
        Some(Indices::U32(i)) => i.clone(),
        None => (0..positions.len() as u32).collect(),
    };
    let triangles = indices.chunks_exact(3).map(|t| [t[0], t[1], t[2]]).collect();
    let uvs = match mesh.try_attribute(Mesh::ATTRIBUTE_UV_0) {
        Ok(VertexAttributeValues::Float32x2(uvs)) if uvs.len() == positions.len() => uvs.clone(),
        _ => Vec::new(),
    };
    Ok(TriangleMesh { positions, triangles, uvs })
}

/// The vertices `selectors` pick, sorted and without repeats. Selection by (u, v) uses the texture
/// coordinates; indices out of range are dropped.
pub(crate) fn select_vertices(uvs: &[[f32; 2]], count: usize, selectors: &[PinSelector]) -> Vec<u32> {
    let nearest_by = |key: &dyn Fn(&[f32; 2]) -> f32| -> Vec<u32> {
        let best = uvs.iter().map(key).fold(f32::INFINITY, f32::min);
        (0..uvs.len() as u32).filter(|&i| key(&uvs[i as usize]) <= best + 1e-5).collect()
    };
    let mut picked: Vec<u32> = Vec::new();
    for s in selectors {
        match s {
            PinSelector::Corners => {
                for (u, v) in [(0.0, 0.0), (1.0, 0.0), (0.0, 1.0), (1.0, 1.0)] {
                    let key = |uv: &[f32; 2]| (uv[0] - u).powi(2) + (uv[1] - v).powi(2);
                    picked.extend(nearest_by(&key).first());
                }
            }
            PinSelector::At { u, v } => {
                let key = |uv: &[f32; 2]| (uv[0] - u).powi(2) + (uv[1] - v).powi(2);
                picked.extend(nearest_by(&key).first());
            }
            PinSelector::Row { v } => picked.extend(nearest_by(&|uv: &[f32; 2]| (uv[1] - v).abs())),
            PinSelector::RowSpan { v, from_u, to_u } => picked.extend(
                nearest_by(&|uv: &[f32; 2]| (uv[1] - v).abs())
                    .into_iter()
                    .filter(|&i| (*from_u..=*to_u).contains(&uvs[i as usize][0])),
            ),
            PinSelector::Column { u } => picked.extend(nearest_by(&|uv: &[f32; 2]| (uv[0] - u).abs())),
            PinSelector::Indices(ids) => picked.extend(ids.iter().filter(|&&i| (i as usize) < count)),
        }
    }
    picked.sort_unstable();
    picked.dedup();
    picked
}

#[cfg(test)]
mod tests {
    use super::*;
    use bevy::asset::RenderAssetUsages;

    #[test]
    fn a_bevy_plane_becomes_cloth_with_its_pins() {
        let plane = Plane3d::new(Vec3::Y, Vec2::splat(0.5)).mesh().subdivisions(9).build();
        let cloth = ClothBuilder::from_mesh(&plane)
            .placed(Transform::from_xyz(0.0, 2.0, 0.0))
            .pin(PinSelector::Corners)
            .build()
            .unwrap();
        assert_eq!(cloth.particles.len(), 11 * 11);
        assert_eq!(cloth.attachments.0.len(), 4);
        assert!(cloth.particles.x.iter().all(|x| (x.y - 2.0).abs() < 1e-6));
        // 10 × 10 quads: 10·11 edges each way plus one diagonal per quad
        assert_eq!(cloth.stretch.len(), 2 * 10 * 11 + 100);
        let mass: f32 = cloth.particles.mass.iter().sum();
        assert!((mass - ClothMaterial::default().density).abs() < 1e-5, "1 m² of cloth weighs ρ: {mass}");
    }

    #[test]
    fn a_mesh_that_is_not_cloth_is_refused() {
        let points = Mesh::new(PrimitiveTopology::PointList, RenderAssetUsages::default())
            .with_inserted_attribute(Mesh::ATTRIBUTE_POSITION, vec![[0.0f32; 3]; 3]);
        assert!(ClothBuilder::from_mesh(&points).build().is_err());
        assert!(ClothBuilder::grid(4, 4, Vec2::new(f32::NAN, 1.0)).build().is_err());
        let fan = vec![[0, 1, 2], [0, 2, 3], [0, 3, 1], [0, 1, 4]];
        let positions = vec![Vec3::ZERO, Vec3::X, Vec3::Y, Vec3::Z, Vec3::ONE];
        assert!(matches!(
            ClothBuilder::from_triangles(positions, fan, Vec::new()).build(),
            Err(MeshError::NonManifold(..))
        ));
    }

    #[test]
    fn row_and_column_selectors_pick_whole_lines() {
        let uvs = topology::grid(4, 3, 1.0, 1.0).unwrap().uvs;
        assert_eq!(select_vertices(&uvs, uvs.len(), &[PinSelector::Row { v: 0.0 }]), vec![0, 1, 2, 3, 4]);
        assert_eq!(select_vertices(&uvs, uvs.len(), &[PinSelector::Column { u: 1.0 }]), vec![4, 9, 14, 19]);
        let span = PinSelector::RowSpan { v: 1.0, from_u: 0.25, to_u: 0.75 };
        assert_eq!(select_vertices(&uvs, uvs.len(), &[span]), vec![16, 17, 18]);
        assert_eq!(select_vertices(&uvs, uvs.len(), &[PinSelector::Indices(vec![3, 99, 3])]), vec![3]);
    }
}
