//! Scenes: the plain-data description ([`desc::SceneDesc`]), preset files ([`preset`]), the library of presets
//! in the window app ([`library`]), saving the running scene ([`snapshot`]), spawning ([`spawn`]) and thrown balls
//! ([`throws`]).

pub mod desc;
pub mod library;
pub mod mesh_collider;
pub mod obj;
pub mod preset;
pub mod shape;
pub mod snapshot;
pub mod spawn;
pub mod throws;

pub use desc::SceneDesc;
pub use spawn::{ActiveScene, SceneEntity, ScenePlugin, SceneRequest};
