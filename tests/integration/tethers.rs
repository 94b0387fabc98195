//! Long-range attachments hold a hanging sheet at one iteration of one substep, where PBD alone stretches it
//! (Kim et al. 2012); they follow the pins when Shift+click changes them, hang from a body only where no pin
//! holds the cloth, and cost nothing when off.

use bevy::prelude::*;
use drape::headless::{self, headless_app};
use drape::input::drag::toggle_pin;
use drape::scene::desc::{PinSelector, SceneDesc};
use drape::scene::preset;
use drape::scene::workloads::grid_distance;
use drape::sim::cloth::{Attachments, BodyAttachments, Particles, Tethers};
use drape::sim::constraints::tether::TetherSet;

/// A 64×64 sheet hanging from its whole top row, 1 iteration × 1 substep at 60 Hz.
fn curtain(tethers: bool) -> SceneDesc {
    let mut desc = grid_distance(64);
    desc.params.substeps = 1;
    desc.params.tethers = tethers;
    desc.params.parallel = false;
    desc.cloths[0].pins = vec![PinSelector::Row { v: 0.0 }];
    desc
}

/// The largest edge strain |l/l0 − 1| after two seconds.
fn stretch_after_two_seconds(desc: SceneDesc) -> f32 {
    headless::run(desc, 120).unwrap().max_stretch
}

#[test]
fn tethers_hold_a_sheet_that_one_iteration_lets_stretch() {
    let without = stretch_after_two_seconds(curtain(false));
    let with = stretch_after_two_seconds(curtain(true));
    assert!(without > 0.30, "PBD alone at 1 × 1: {without}");
    assert!(with < 0.10, "with tethers: {with}");
}

#[test]
fn tethers_are_rebuilt_when_a_pin_is_added() {
    let mut app = headless_app(curtain(true));
    app.update();
    let world = app.world_mut();
    let (mut particles, mut attachments, tethers) =
        world.query::<(&mut Particles, &mut Attachments, &Tethers)>().single_mut(world).unwrap();
    let before = tethers.set.len();
    let free = particles.len() as u32 - 1;
    assert!(tethers.set.start[free as usize + 1] > tethers.set.start[free as usize], "the hem is tethered");
    toggle_pin(&mut particles, &mut attachments, free);
    app.update();
    let world = app.world_mut();
    let tethers = world.query::<&Tethers>().single(world).unwrap();
    let range = tethers.set.start[free as usize]..tethers.set.start[free as usize + 1];
    assert!(range.is_empty(), "a pinned vertex has no tethers of its own");
    assert!(tethers.set.anchor.contains(&free), "its neighbours hang from it now");
    assert!(tethers.set.len() < before + 2, "each vertex keeps at most its nearest anchors");
}

#[test]
fn switched_off_they_leave_no_tethers() {
    let mut app = headless_app(curtain(false));
    app.update();
    let world = app.world_mut();
    assert!(world.query::<&Tethers>().single(world).unwrap().set.is_empty());
}

/// The tethers of the `tearing` curtain after one update, and the vertices its cube holds.
fn tearing_tethers(pinned: bool) -> (TetherSet, Vec<u32>) {
    let mut desc = preset::load("tearing").unwrap();
    if !pinned {
        desc.cloths[0].pins.clear();
    }
    let mut app = headless_app(desc);
    app.update();
    let world = app.world_mut();
    let (tethers, held) = world.query::<(&Tethers, &BodyAttachments)>().single(world).unwrap();
    (tethers.set.clone(), held.0.iter().map(|a| a.vertex).collect())
}

#[test]
fn a_body_anchors_tethers_only_where_no_pin_holds_the_cloth() {
    // pinned along its top row and held by the cube: the cube's holds would pull the rows between them apart
    let (set, held) = tearing_tethers(true);
    assert!(!held.is_empty() && set.len() > 4000, "{} tethers, {} held", set.len(), held.len());
    assert!(held.iter().all(|v| !set.anchor.contains(v)), "a held vertex anchors a pinned cloth");
    let own = |v: u32| set.start[v as usize]..set.start[v as usize + 1];
    assert!(held.iter().all(|&v| own(v).is_empty()), "a held vertex is tethered: the body holds it");
    // held by the cube alone: the cube's holds are the anchors
    let (set, held) = tearing_tethers(false);
    assert!(set.len() > 4000 && set.anchor.iter().all(|v| held.contains(v)), "{} tethers", set.len());
}
