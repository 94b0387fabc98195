//! Refactors keep the bits: every shipped preset, run 120 fixed steps on one thread, ends in exactly the state
//! (every cloth's positions and velocities, hashed by `metrics::state_hash`) recorded from the binary before the
//! library refactor. A change that means to alter the physics says so and updates this table in one commit.

use drape::headless;
use drape::scene::preset;

/// (preset, `state_hash` after 120 frames with `parallel: false`) of the presets without rigid bodies.
const PINNED: [(&str, &str); 13] = [
    ("balloon", "6b7e1b1c56621fde"),
    ("barrel", "158cb92206fe3176"),
    ("bend_vs_stretch", "d1a1fec0ed109b21"),
    ("curtain", "33e894348bf90941"),
    ("flag", "bbe56374b00b3aa1"),
    ("hanging_sheet", "0d983363f014661e"),
    ("layers", "accb27602602f21c"),
    ("leaves", "a0b163809f74c743"),
    ("pbd_vs_xpbd", "15d63beab3eff081"),
    ("self_fold", "804c0c356064f75b"),
    ("sphere_drape", "4f22e44a6b1fe84e"),
    ("tablecloth", "b9c2337ce2680710"),
    ("tethers", "a56f612e2d927e29"),
];

/// The same for the presets with rigid bodies or mesh colliders, which Avian steps (issue 26). The integration
/// tests need the demo's features, Avian among them: a table for a build without Avian could never run.
const PINNED_BODIES: [(&str, &str); 5] = [
    ("level", "81e40389f4daa562"),
    ("mannequin", "cbe292c6a9c9d56f"),
    ("pile", "700d5712460e1163"),
    ("stripes", "a5d7faa0ac6552e9"),
    ("tearing", "86105dabc9e9caf9"),
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
