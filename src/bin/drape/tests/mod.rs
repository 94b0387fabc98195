//! Tests of the demo's own code: the soak, the live abuse through the panel's knobs, the views, the panel's
//! material editing and the visuals across scene switches. Run one with its module path:
//! `cargo test --release --bin drape -- abuse::`.

mod abuse;
mod materials;
mod scene_switches;
mod soak;
mod views;
