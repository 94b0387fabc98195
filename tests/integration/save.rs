//! "Save current as preset" keeps the scene: every shipped preset saved at load, written as RON, read back and
//! run 60 fixed steps ends in the same state hash as the original; pins and grips edited with Shift+click keep
//! their motions.

use bevy::prelude::*;
use drape::headless::{self, headless_app};
use drape::input::drag::toggle_pin;
use drape::scene::desc::SceneDesc;
use drape::scene::preset;
use drape::scene::snapshot::{LiveCloth, snapshot};
use drape::sim::SimParams;
use drape::sim::cloth::{Attachments, Cloth, ClothMaterial, Particles};
use drape::sim::constraints::attach::Motion;

/// The scene of `app` as the panel's Save button writes it, read back from its RON text.
fn saved(app: &mut App, active: &SceneDesc) -> SceneDesc {
    let world = app.world_mut();
    let live: Vec<LiveCloth> = world
        .query::<(&Cloth, &ClothMaterial, &Attachments)>()
        .iter(world)
        .map(|(cloth, material, attachments)| LiveCloth::of(cloth, material, attachments))
        .collect();
    let params = world.resource::<SimParams>().clone();
    let text = preset::to_ron(&snapshot(active, &params, &live)).unwrap();
    preset::parse(text.as_bytes(), "saved.ron").unwrap()
}

/// The state hash of `app` after `frames` more fixed steps.
fn hash_after(app: &mut App, frames: u32) -> String {
    for _ in 0..frames {
        app.update();
    }
    headless::report(app.world_mut(), "", frames).state_hash
}

fn serial(name: &str) -> SceneDesc {
    let mut desc = preset::load(name).unwrap();
    desc.params.parallel = false;
    desc
}

#[test]
fn every_shipped_preset_saved_and_loaded_runs_to_the_same_state() {
    let mut differ = Vec::new();
    for name in preset::names() {
        let desc = serial(&name);
        let mut original = headless_app(desc.clone());
        let mut reloaded = headless_app(saved(&mut original, &desc));
        let (a, b) = (hash_after(&mut original, 60), hash_after(&mut reloaded, 60));
        if a != b {
            differ.push(format!("{name}: {a} vs {b} after saving"));
        }
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}

#[test]
fn moving_pins_and_shift_click_edits_survive_a_save() {
    let desc = serial("self_fold");
    let mut original = headless_app(desc.clone());
    let world = original.world_mut();
    let (mut particles, mut attachments) =
        world.query::<(&mut Particles, &mut Attachments)>().single_mut(world).unwrap();
    let moving: Vec<u32> = attachments.0.iter().filter(|a| a.motion != Motion::Fixed).map(|a| a.vertex).collect();
    assert!(moving.len() > 1, "self_fold folds its sheet with moving pins");
    let free = (0..particles.len() as u32).find(|v| !attachments.0.iter().any(|a| a.vertex == *v)).unwrap();
    toggle_pin(&mut particles, &mut attachments, moving[0]);
    toggle_pin(&mut particles, &mut attachments, free);
    let expected: Vec<(u32, Motion)> = attachments.0.iter().map(|a| (a.vertex, a.motion)).collect();

    let back = saved(&mut original, &desc);
    let mut reloaded = headless_app(back.clone());
    let world = reloaded.world_mut();
    let mut held: Vec<(u32, Motion)> =
        world.query::<&Attachments>().single(world).unwrap().0.iter().map(|a| (a.vertex, a.motion)).collect();
    let mut expected_sorted = expected.clone();
    held.sort_by_key(|(v, _)| *v);
    expected_sorted.sort_by_key(|(v, _)| *v);
    assert_eq!(held, expected_sorted, "every attachment with its motion, and nothing else");
    assert_eq!(hash_after(&mut original, 60), hash_after(&mut reloaded, 60));
}
