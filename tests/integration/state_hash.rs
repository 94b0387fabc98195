//! Refactors keep the bits: every shipped preset, run 120 fixed steps on one thread, ends in exactly the state
//! (every cloth's positions and velocities, hashed by `metrics::state_hash`) recorded from the binary before the
//! library refactor. A change that means to alter the physics says so and updates this table in one commit.

use drape::headless;
use drape::scene::preset;

/// (preset, `state_hash` after 120 frames with `parallel: false`) of the presets without rigid bodies.
const PINNED: [(&str, &str); 15] = [
    ("balloon", "fe68de6078f5e2f5"),
    ("barrel", "aea6091dd4061d5d"),
    ("bend_vs_stretch", "c46c5ce8396b0df9"),
    ("character", "328b2ade01a6b4b0"),
    ("curtain", "f0a587c41e8ac266"),
    ("flag", "3848103f122ad682"),
    ("hanging_sheet", "a62d1ce60c2ef86e"),
    ("inflated", "9ab810c08b3dff32"),
    ("layers", "37a9e2ff77a68c22"),
    ("leaves", "b2dcc8a62f68123f"),
    ("pbd_vs_xpbd", "9ee187d7cccbb7bf"),
    ("self_fold", "a1f37af60490116e"),
    ("sphere_drape", "406b0543a8edc1b8"),
    ("tablecloth", "ff0bb9f7f75462b2"),
    ("tethers", "85709536dc6e44de"),
];

/// The same for the presets with rigid bodies or mesh colliders, which Avian steps (issue 26). The integration
/// tests need the demo's features, Avian among them: a table for a build without Avian could never run.
const PINNED_BODIES: [(&str, &str); 6] = [
    ("gears", "3b30e14f0416acd1"),
    ("level", "4b268a6f65cee468"),
    ("mannequin", "aa09c0540382cb42"),
    ("pile", "b19dcbf3fcb35228"),
    ("stripes", "0961a4733ae364d6"),
    ("tearing", "a5f3edfc587a33ce"),
];

#[test]
fn every_shipped_preset_keeps_its_pinned_state_hash() {
    let mut changed = Vec::new();
    for (name, pinned) in PINNED.into_iter().chain(PINNED_BODIES) {
        let mut desc = preset::load(name).unwrap();
        desc.params.parallel = false;
        let report = headless::run(desc, 120).unwrap();
        if report.state_hash != pinned {
            changed.push(format!("{name}: {} (pinned {pinned})", report.state_hash));
        }
    }
    assert!(changed.is_empty(), "the physics changed:\n{}", changed.join("\n"));
}
