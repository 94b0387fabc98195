//! Record and replay: a run resumed from a recorded step continues bit for bit as the original did.

use bevy::prelude::Transform;
use drape::headless::{headless_app_with, state_hash};
use drape::replay::{Recording, ReplayPlugin, restore};
use drape::scene::preset;
use drape::sim::cloth::Cloth;
use drape::sim::rigid::ClothRigidBody;
use drape::sim::schedule::SimClock;

/// A headless App of `preset` that records, run for `frames` frames: the App and each frame's (step, state hash).
fn recorded_run(preset: &str, frames: usize) -> (bevy::prelude::App, Vec<(u64, String)>) {
    let mut app = headless_app_with(preset::load(preset).unwrap(), |app| {
        app.add_plugins(ReplayPlugin);
    });
    let mut hashes = Vec::new();
    for _ in 0..frames {
        app.update();
        hashes.push((app.world().resource::<SimClock>().steps, state_hash(app.world_mut())));
    }
    (app, hashes)
}

fn tears(app: &mut bevy::prelude::App) -> usize {
    app.world_mut().query::<&Cloth>().iter(app.world()).map(|c| c.tears).sum()
}

#[test]
fn tearing_resumed_from_frame_150_repeats_frames_151_to_300() {
    let mut app = headless_app_with(preset::load("tearing").unwrap(), |app| {
        app.add_plugins(ReplayPlugin);
    });
    let (mut original, mut tears_at_150) = (Vec::new(), 0);
    for _ in 0..300 {
        app.update();
        let step = app.world().resource::<SimClock>().steps;
        original.push((step, state_hash(app.world_mut())));
        if step == original[0].0 + 149 {
            tears_at_150 = tears(&mut app);
        }
    }
    let tears_at_300 = tears(&mut app);
    let recording = app.world().resource::<Recording>();
    assert_eq!(recording.steps().len(), 300, "20 s hold all 300 frames");
    let (step_150, hash_150) = original[149].clone();
    restore(app.world_mut(), step_150, true).unwrap();
    assert_eq!(state_hash(app.world_mut()), hash_150, "the restored state is frame 150's");
    assert_eq!(app.world().resource::<Recording>().steps().back().map(|s| s.step), Some(step_150));
    for (k, (step, hash)) in original[150..].iter().enumerate() {
        app.update();
        assert_eq!(app.world().resource::<SimClock>().steps, *step);
        assert_eq!(state_hash(app.world_mut()), *hash, "frame {} differs after resuming at 150", 151 + k);
    }
    assert!(tears_at_150 > 0, "frame 150 is torn: restoring it restores a changed topology");
    let distinct: std::collections::HashSet<_> = original[150..].iter().map(|(_, h)| h).collect();
    assert_eq!(distinct.len(), 150, "every replayed frame is a new state");
    assert_eq!(tears(&mut app), tears_at_300);
}

#[test]
fn a_look_at_an_old_step_keeps_the_recording_and_the_way_back() {
    let (mut app, hashes) = recorded_run("flag", 130);
    // step 100 lies between two snapshots (every 60 steps): restoring it runs 40 steps again
    restore(app.world_mut(), hashes[99].0, false).unwrap();
    assert_eq!(state_hash(app.world_mut()), hashes[99].1);
    assert_eq!(app.world().resource::<Recording>().steps().len(), 130);
    restore(app.world_mut(), hashes[129].0, false).unwrap();
    assert_eq!(state_hash(app.world_mut()), hashes[129].1);
    assert!(restore(app.world_mut(), hashes[129].0 + 1, false).is_err(), "a step not yet run");
}

/// Every body's pose and velocities, bit for bit.
fn bodies(app: &mut bevy::prelude::App) -> Vec<[u32; 13]> {
    let mut q = app.world_mut().query::<(&ClothRigidBody, &Transform)>();
    let mut all: Vec<[u32; 13]> = q
        .iter(app.world())
        .map(|(b, t)| {
            let (p, r, v, w) = (t.translation, t.rotation, b.velocity, b.angular_velocity);
            [p.x, p.y, p.z, r.x, r.y, r.z, r.w, v.x, v.y, v.z, w.x, w.y, w.z].map(f32::to_bits)
        })
        .collect();
    all.sort();
    all
}

#[test]
fn scenes_with_bodies_resume_bit_for_bit() {
    // with the `avian` feature the bodies are Avian's: its state goes back with the cloth's, and the steps run
    // again between a snapshot and the step resumed run Avian's step after the cloth's
    for preset in ["stripes", "pile"] {
        let mut app = headless_app_with(preset::load(preset).unwrap(), |app| {
            app.add_plugins(ReplayPlugin);
        });
        let mut original = Vec::new();
        for _ in 0..150 {
            app.update();
            original.push((app.world().resource::<SimClock>().steps, state_hash(app.world_mut()), bodies(&mut app)));
        }
        assert!(original[149].2.len() >= 3, "{preset}: {} bodies", original[149].2.len());
        // step 100 lies between two snapshots (one every 60 steps): 40 steps of both engines run again
        restore(app.world_mut(), original[99].0, true).unwrap();
        assert_eq!(state_hash(app.world_mut()), original[99].1, "{preset}: the restored cloth is frame 100's");
        assert_eq!(bodies(&mut app), original[99].2, "{preset}: the restored bodies are frame 100's");
        for (step, hash, poses) in &original[100..] {
            app.update();
            assert_eq!(app.world().resource::<SimClock>().steps, *step);
            assert_eq!(state_hash(app.world_mut()), *hash, "{preset}: the cloth of step {step} differs");
            assert_eq!(bodies(&mut app), *poses, "{preset}: the bodies of step {step} differ");
        }
    }
}

#[test]
fn a_worn_cloth_resumed_from_an_old_step_walks_on_bit_for_bit() {
    let (mut app, hashes) = recorded_run("character", 200);
    // the cloth follows a pose of the character's clock: the character's last pose goes back with the cloth
    restore(app.world_mut(), hashes[99].0, true).unwrap();
    assert_eq!(state_hash(app.world_mut()), hashes[99].1, "the restored state is frame 100's");
    for (k, (_, hash)) in hashes[100..].iter().enumerate() {
        app.update();
        assert_eq!(state_hash(app.world_mut()), *hash, "frame {} differs after resuming at 100", 101 + k);
    }
}
