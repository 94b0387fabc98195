//! Refactors keep the bits: every shipped preset, run 120 fixed steps on one thread, ends in exactly the state
//! (every cloth's positions and velocities, hashed by `metrics::state_hash`) recorded from the binary before the
//! library refactor. A change that means to alter the physics says so and updates this table in one commit.

use drape::headless;
use drape::scene::preset;

/// (preset, `state_hash` after 120 frames with `parallel: false`) of the presets without rigid bodies.
const PINNED: [(&str, &str); 15] = [
    ("balloon", "db48eade5118d840"),
    ("barrel", "4f4b021bcc1028c6"),
    ("bend_vs_stretch", "8ee16ae74990f820"),
    ("character", "de6774955660f831"),
    ("curtain", "99f2fe8c5a13af9d"),
    ("flag", "51ebfa6a7ead8bab"),
    ("hanging_sheet", "7663c4209c7a0471"),
    ("inflated", "0ebff195145d68e8"),
    ("layers", "cb85dfb18b15cb79"),
    ("leaves", "53c0465437ca8a3d"),
    ("pbd_vs_xpbd", "31787c305e8e8966"),
    ("self_fold", "240b57ea6b77e009"),
    ("sphere_drape", "c33fbb4ce2dffa3a"),
    ("tablecloth", "20604d99f29dfc7c"),
    ("tethers", "0ea79db23cdc9d06"),
];

/// The same for the presets with rigid bodies or mesh colliders, which Avian steps (issue 26). The integration
/// tests need the demo's features, Avian among them: a table for a build without Avian could never run.
const PINNED_BODIES: [(&str, &str); 6] = [
    ("gears", "f7f6328d35654ff7"),
    ("level", "835641866bf35969"),
    ("mannequin", "ce8ce07f937d85ee"),
    ("pile", "d379a4e0b7914bbe"),
    ("stripes", "79da8745af5215df"),
    ("tearing", "3a592a1b9d259486"),
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
