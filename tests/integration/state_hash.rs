//! Refactors keep the bits: every shipped preset, run 120 fixed steps on one thread, ends in exactly the state
//! (every cloth's positions and velocities, hashed by `metrics::state_hash`) recorded from the binary before the
//! library refactor. A change that means to alter the physics says so and updates this table in one commit.

use drape::headless;
use drape::scene::preset;

/// (preset, `state_hash` after 120 frames with `parallel: false`) of the presets without rigid bodies.
const PINNED: [(&str, &str); 13] = [
    ("balloon", "3ecfeab2aed457b5"),
    ("barrel", "76b2b273f09f201e"),
    ("bend_vs_stretch", "8ee16ae74990f820"),
    ("curtain", "99f2fe8c5a13af9d"),
    ("flag", "b6ecca83c4c4f4f5"),
    ("hanging_sheet", "7663c4209c7a0471"),
    ("layers", "66cba13241fc05c1"),
    ("leaves", "67475ccdca159580"),
    ("pbd_vs_xpbd", "31787c305e8e8966"),
    ("self_fold", "70ac675a40163595"),
    ("sphere_drape", "bfcce2eaed3b4f17"),
    ("tablecloth", "dd88578715639017"),
    ("tethers", "0ea79db23cdc9d06"),
];

/// The same for the presets with rigid bodies or mesh colliders, which Avian steps (issue 26). The integration
/// tests need the demo's features, Avian among them: a table for a build without Avian could never run.
const PINNED_BODIES: [(&str, &str); 5] = [
    ("level", "354a5a3d8392f9c5"),
    ("mannequin", "60d1a46b8114b1b7"),
    ("pile", "f3016e4771208844"),
    ("stripes", "79da8745af5215df"),
    ("tearing", "72b06f0f9fb754e8"),
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
