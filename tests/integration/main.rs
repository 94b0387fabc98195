//! drape's integration tests, one module per topic, in one test binary: every test binary compiles the generic
//! code of Bevy and the library it uses again and links them again (README, "Tests", has the build times). The
//! allocation test keeps a binary of its own (`tests/alloc.rs`): it installs a counting global allocator.
//!
//! Run one topic with its module path: `cargo test --release --test integration -- abuse::`.

mod common;

mod avian;
mod cloth_collision;
mod collider_edges;
mod headless;
mod interaction;
mod layers;
mod legal_materials;
mod overlaps;
mod paper_scenes;
mod parallel;
mod plugins;
mod presets;
mod readme;
mod reliability;
mod replay;
mod rigid_coupling;
mod save;
mod skinning;
mod sleep;
mod state_hash;
mod tethers;
mod torn_curtain;
mod xpbd;
