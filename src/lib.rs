//! # drape — real-time cloth for Bevy
//!
//! An implementation of *Position Based Dynamics* (Müller, Heidelberger, Hennix, Ratcliff 2007; "the paper")
//! for cloth, as Bevy plugins. The paper's simulation loop (§3.1, lines (1)–(17)) is the schedule built by
//! [`ClothSimPlugin`](sim::ClothSimPlugin); every stage is a thin system over struct-of-arrays components calling
//! a pure kernel over slices. The desktop demo (feature `app`, on by default) is one user of this library.
//!
//! ```no_run
//! use bevy::prelude::*;
//! use drape::prelude::*;
//!
//! fn main() {
//!     App::new().add_plugins((DefaultPlugins, DrapePlugins)).add_systems(Startup, setup).run();
//! }
//!
//! fn setup(mut commands: Commands, mut materials: ResMut<Assets<StandardMaterial>>) {
//!     // a 1 m × 1 m sheet of 20 × 20 quads, 2 m up, pinned along its far edge
//!     let sheet = ClothBuilder::grid(20, 20, Vec2::ONE)
//!         .placed(Transform::from_xyz(0.0, 2.0, 0.0))
//!         .pin(Pin::Row { v: 0.0 })
//!         .build()
//!         .expect("a grid is a valid mesh");
//!     commands.spawn((sheet, MeshMaterial3d(materials.add(Color::srgb(0.8, 0.2, 0.2)))));
//!     commands.spawn((Collider::new(ColliderShape::Plane), Transform::default()));
//!     commands.spawn((Camera3d::default(), Transform::from_xyz(0.0, 1.5, 4.0)));
//! }
//! ```
//!
//! | module | job |
//! |---|---|
//! | [`prelude`] | what spawning cloth and colliders needs |
//! | [`sim`] | the solver: the plugin and its stages ([`sim::plugin`], [`sim::stages`]), components, kernels |
//! | [`spawn`] | building cloth from a grid or any Bevy `Mesh`: [`spawn::ClothBuilder`] |
//! | [`mesh_sync`] | [`mesh_sync::ClothMeshPlugin`]: each cloth's `Mesh` updated in place every frame |
//! | [`input`] | (feature `picking`) grabbing, flinging and pinning with the mouse: [`input::ClothPickingPlugin`] |
//! | [`scene`] | plain-data scene descriptions (RON presets) and spawning them as entities |
//! | [`export`] | the cloths as a Wavefront OBJ file |
//! | [`replay`] | record and replay: the last seconds kept, resumable bit for bit |
//! | [`headless`] | the same schedule with no window: the JSON report used by tests and scripts |
//! | `render`, `ui`, `window`, `bench`, `soak` | (feature `app`) the desktop demo: visuals, egui panel, window, benchmark, random-scene soak |
//!
//! Cargo features: `picking` (the mouse plugin; needs Bevy's window and camera), `render` (a window and the PBR
//! renderer, for the examples), `app` (the demo: egui, orbit camera, plots, command line; the default). With
//! `default-features = false` the crate is the simulation alone, without winit, egui, plotters or clap.

#![warn(missing_docs)]

#[cfg(feature = "avian")]
pub mod avian;
pub mod export;
pub mod headless;
#[cfg(feature = "picking")]
pub mod input;
pub mod mesh_sync;
pub mod plugins;
pub mod prelude;
pub mod replay;
pub mod scene;
pub mod sim;
pub mod spawn;
pub mod validate;

#[cfg(feature = "app")]
pub mod bench;
#[cfg(feature = "app")]
pub mod render;
#[cfg(feature = "app")]
pub mod soak;
#[cfg(feature = "app")]
pub mod ui;
#[cfg(feature = "app")]
pub mod window;
