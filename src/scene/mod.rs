//! Scenes: the plain-data description ([`desc::SceneDesc`]), preset files ([`preset`]), the library of presets
//! in the window app ([`library`]), saving the running scene ([`snapshot`]), spawning ([`spawn`]) and thrown balls
//! ([`throws`]); the benchmark workloads ([`workloads`]).

pub mod desc;
pub mod library;
pub mod mesh_collider;
pub mod obj;
pub(crate) mod plugin;
pub mod preset;
pub(crate) mod shape;
pub mod snapshot;
pub mod spawn;
pub mod throws;
pub mod workloads;

pub use desc::SceneDesc;
pub use plugin::ScenePlugin;
pub use spawn::{ActiveScene, SceneEntity, SceneRequest};
