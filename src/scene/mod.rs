//! Scenes as plain data ([`desc::SceneDesc`]), the built-in scenes, and spawning/despawning them.

pub mod builtin;
pub mod desc;
pub mod spawn;

pub use desc::SceneDesc;
pub use spawn::{ActiveScene, SceneEntity, ScenePlugin, SceneRequest};
