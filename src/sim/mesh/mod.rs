//! Cloth meshes in one place: the builders (a grid of quads, an icosphere for balloons) and the topology the
//! solver derives from any triangle mesh (validation, edges, bending pairs, lumped masses; §4.1). Meshes are
//! built once per cloth and again locally when tearing edits it, never per frame.
//!
//! The icosphere is drape's own rather than Bevy's `Sphere::mesh().ico()`: both subdivide the icosahedron, but
//! in a different vertex order, and the balloon preset's pinned state hash depends on the order.

pub mod icosphere;
pub mod topology;

pub use icosphere::icosphere;
pub use topology::{MAX_DISK_RINGS, MAX_PARTICLES, MeshError, TriangleMesh, disk, grid};
