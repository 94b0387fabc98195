//! Triangle-mesh colliders of a preset (`shape: Mesh(file, scale)`): read from their OBJ file when the scene is
//! built and spawned with a [`MeshCollider`]. drape's own colliders are the analytic shapes; with the `avian`
//! feature Avian gives a mesh collider its collider and body (`avian::meshes`), and the cloth meets it through
//! parry's queries like any Avian collider.

use std::sync::Arc;

use bevy::prelude::*;

use super::desc::BodyDesc;
use super::obj;
use crate::sim::collide::ColliderMotion;
use crate::sim::mesh::topology::TriangleMesh;

/// A collider that is a triangle mesh: static, kinematic (moving with `motion`) or, with a `body`, dynamic.
#[derive(Component, Clone, Debug)]
pub struct MeshCollider {
    /// The mesh in the collider's frame, scaled, metres.
    pub mesh: Arc<TriangleMesh>,
    /// How it moves when it is not a body; `Static` for a collider that does not.
    pub motion: ColliderMotion,
    /// Pose at t = 0.
    pub start: Transform,
    /// Mass and initial velocities when it is a dynamic body (it then collides as the mesh's convex hull).
    pub body: Option<BodyDesc>,
    /// Coulomb friction μ of cloth on it; `None` uses the scene's.
    pub friction: Option<f32>,
    /// Restitution e of cloth on it; `None` uses the scene's.
    pub restitution: Option<f32>,
}

/// The OBJ file at asset path `file`, its coordinates multiplied by `scale`.
pub(crate) fn read_obj(file: &str, scale: f32) -> Result<TriangleMesh, String> {
    let path = super::preset::asset_root().join(file);
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{file}: {e}"))?;
    let mut mesh = obj::parse(&text, file).map_err(|e| e.to_string())?;
    mesh.positions.iter_mut().for_each(|p| *p *= scale);
    Ok(mesh)
}
