//! # drape — real-time cloth you can grab
//!
//! An implementation of *Position Based Dynamics* (Müller, Heidelberger, Hennix, Ratcliff 2007; "the paper")
//! for cloth, as a Bevy application. The paper's simulation loop (§3.1, lines (1)–(17)) is the Bevy schedule
//! built by [`sim::ClothSimPlugin`]; every stage is a thin system over struct-of-arrays components calling a pure
//! kernel over slices.
//!
//! | module | job |
//! |---|---|
//! | [`sim`] | the solver: stages, parameters, cloth data, constraints, collisions |
//! | [`scene`] | plain-data scene descriptions and spawning them as entities |
//! | [`render`] | cloth meshes updated in place, collider visuals, camera and lights |
//! | [`input`] | grabbing, flinging and pinning with the mouse; keyboard shortcuts |
//! | [`ui`] | the egui side panel: every parameter live, statistics |
//! | [`bench`](mod@bench) | `drape bench`: time per frame against resolution, iterations and substeps; CSV and plots |
//! | [`headless`] | the same schedule with no window: the JSON report used by tests and scripts |
//! | [`window`] | the desktop app: plugins, window, screenshots |

pub mod bench;
pub mod headless;
pub mod input;
pub mod render;
pub mod scene;
pub mod sim;
pub mod ui;
pub mod validate;
pub mod window;
