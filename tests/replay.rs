//! Record and replay: a run resumed from a recorded step continues bit for bit as the original did.

use drape::headless::{headless_app_with, state_hash};
use drape::replay::{Recording, ReplayPlugin, restore};
use drape::scene::preset;
use drape::sim::cloth::{Cloth, Particles};
use drape::sim::plugin::SimClock;

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

#[test]
fn stripes_resumed_with_their_bodies_follow_the_original() {
    // the boxes are bodies (Avian's, with the `avian` feature): resuming restores them with the cloth. Avian's own
    // step after the recorded cloth step is not in the recording (its turn of the twisting boxes differs from the
    // cloth's by their gyroscopic term), so with Avian the resumed run follows the original closely rather than bit
    // for bit, and only from a step with a snapshot (frame 61: one every 60 steps), where no cloth step runs again
    // without Avian's. Resumed with the boxes where the live run left them, the cloth ends 17 cm off.
    let (mut app, original) = recorded_run("stripes", 120);
    let cloth = |app: &mut bevy::prelude::App| -> Vec<bevy::prelude::Vec3> {
        let mut q = app.world_mut().query::<&Particles>();
        q.iter(app.world()).flat_map(|p| p.x.iter().copied()).collect()
    };
    let at_120 = cloth(&mut app);
    restore(app.world_mut(), original[60].0, true).unwrap();
    assert_eq!(state_hash(app.world_mut()), original[60].1, "the restored state is frame 61's");
    for _ in 61..120 {
        app.update();
    }
    assert_eq!(app.world().resource::<SimClock>().steps, original[119].0);
    let apart = cloth(&mut app).iter().zip(&at_120).map(|(a, b)| a.distance(*b)).fold(0.0, f32::max);
    assert!(apart < 0.01, "59 frames after resuming, a vertex is {apart} m from where the original run had it");
    #[cfg(not(feature = "avian"))]
    assert_eq!(state_hash(app.world_mut()), original[119].1, "drape's own bodies resume bit for bit");
}
