//! # drape — real-time cloth for Bevy
//!
//! Cloth you can grab: *Position Based Dynamics* (Müller, Heidelberger, Hennix, Ratcliff 2007; "the paper")
//! with XPBD's compliance, self-collision, cloth against cloth, tearing, tethers, wind, balloons and two-way
//! coupling with rigid bodies (drape's own or Avian's), as a group of Bevy plugins. The paper's simulation loop
//! (§3.1, lines (1)–(17)) is a schedule of chained stages; every stage is a thin system over struct-of-arrays
//! components calling a pure kernel over slices.
//!
//! ## Quick start
//!
//! Add [`DrapePlugins`](plugins::DrapePlugins), spawn a cloth built by [`ClothBuilder`](spawn::ClothBuilder) and
//! something for it to touch:
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
//!     commands.spawn((ClothCollider::new(ColliderShape::Plane), Transform::default()));
//!     commands.spawn((Camera3d::default(), Transform::from_xyz(0.0, 1.5, 4.0)));
//! }
//! ```
//!
//! The prelude sits beside `avian3d::prelude::*` without a clash: drape's collider is
//! [`ClothCollider`](prelude::ClothCollider) and its body [`ClothRigidBody`](prelude::ClothRigidBody). With the `avian` feature, add `AvianClothPlugin` beside Avian's `PhysicsPlugins` and
//! every Avian collider is also the cloth's (`examples/avian.rs`).
//!
//! ## Plugins
//!
//! [`DrapePlugins`](plugins::DrapePlugins) is a group like Avian's `PhysicsPlugins`: the core loop
//! ([`ClothSimPlugin`](sim::ClothSimPlugin)), one plugin per concern — self-collision, cloth–cloth contacts,
//! tearing, tethers, aerodynamics, balloons, sleep, skinning — mesh sync and mouse picking. Any of them can be disabled, and a
//! disabled one adds no system: `DrapePlugins.build().disable::<TearingPlugin>()`. [`plugins`] has the table.
//!
//! ## Features
//!
//! | feature | what it adds |
//! |---|---|
//! | (none) | the simulation alone: ECS, assets, meshes; no window, renderer or UI crates |
//! | `picking` | `ClothPickingPlugin`: grab, fling and pin cloth with the mouse (Bevy's window and camera) |
//! | `render` | a window and the PBR renderer, for the examples |
//! | `avian` | `AvianClothPlugin`: Avian's colliders and bodies as the cloth's |
//! | `app` (default) | the `drape` desktop demo: egui panel, orbit camera, plots, benchmark, soak |
//!
//! ## Modules
//!
//! | module | job |
//! |---|---|
//! | [`prelude`] | what spawning cloth and colliders needs |
//! | [`plugins`] | [`DrapePlugins`](plugins::DrapePlugins) and the headless [`ClothSolverPlugins`](plugins::ClothSolverPlugins) |
//! | [`sim`] | the solver: schedule types ([`sim::schedule`]), the core loop ([`sim::plugin`]), stages, components, kernels |
//! | [`skinning`] | cloth worn by an animated, skinned character: its skeleton and clips from a `.glb` |
//! | [`spawn`] | building cloth from a grid or any Bevy `Mesh` |
//! | [`mesh_sync`] | each cloth's `Mesh` updated in place every frame |
//! | `input` | (feature `picking`) grabbing, flinging and pinning with the mouse |
//! | [`scene`] | plain-data scene descriptions (RON presets), spawning them, the benchmark workloads |
//! | [`export`] | the cloths as Wavefront OBJ or binary glTF |
//! | [`replay`] | record and replay: the last seconds kept, resumable bit for bit |
//! | [`headless`] | the same schedule with no window: the JSON report used by tests and scripts |
//! | `avian` | (feature `avian`) Avian's bodies and colliders as the cloth's |
//!
//! The desktop demo (`src/bin/drape/`) is one user of this library and no part of its API.

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
pub mod skinning;
pub mod spawn;
pub(crate) mod validate;
