//! A few dozen random scenes of `drape soak` (fixed seed, no cost check: no test fails because the machine is
//! slow), with every invariant checked after every step (`capped` and `energy`, goals, apart).

use crate::soak::invariants::Violation;
use crate::soak::{Energy, SoakConfig, check_scene, generate, run, scene_seed, write_scene};
use drape::scene::preset;

#[test]
fn random_scenes_keep_the_invariants() {
    let config = SoakConfig { scenes: 32, frames: 120, seed: 1, threads: 2, out: None, cost: None };
    let summary = run(&config);
    assert!(summary.ran >= 24, "only {} of 32 scenes ran: the generator draws mostly refused scenes", summary.ran);
    assert!(summary.refused >= 1, "no scene was refused: the generator never crosses a documented range");
    // `capped` and `energy` are goals, not yet kept: some of these scenes explode with slow carriers (balloons
    // inflating, soft XPBD cloth, cloth against cloth, bodies held far from their centre; docs/reliability.md)
    let kept = |v: &Violation| !["capped", "energy"].contains(&v.invariant);
    let broken: Vec<String> = summary
        .failures
        .iter()
        .filter(|f| f.violations.iter().any(kept))
        .map(|f| format!("scene {} (seed {}): {:?}", f.index, f.seed, f.violations))
        .collect();
    assert!(broken.is_empty(), "{}", broken.join("\n"));
    let capped: Vec<u32> = summary.failures.iter().map(|f| f.index).collect();
    assert!(summary.capped_moves > 0 && !capped.is_empty(), "the alarm never rang: {capped:?}");
    let checked = summary.energy_checks.get(&Energy::Checked).copied().unwrap_or(0);
    assert!(checked >= 6, "only {checked} scenes had their energy checked: {:?}", summary.energy_checks);
    assert!(summary.max_stiff_stretch > 0.0, "no stiff held cloth had its stretch checked");

    // the slowest scene, written out by its index, reads back as the scene the run drew
    assert!(summary.slowest_ms_per_step > 0.0 && summary.slowest_scene < 32);
    let dir = std::env::temp_dir().join(format!("drape-soak-test-{}", std::process::id()));
    let path = write_scene(1, summary.slowest_scene, &dir).expect("the scene is written");
    let read = preset::load(&path.display().to_string()).expect("the written scene loads");
    let drawn = generate::scene(scene_seed(1, summary.slowest_scene));
    assert_eq!(preset::to_ron(&read).ok(), preset::to_ron(&drawn).ok());
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_stiff_fine_sheet_falling_on_a_thick_coarse_cloth_keeps_its_edges() {
    // a scene the 1000-scene soak found (see the file's comment), kept as the preset it wrote
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/scenes/fine_sheet_on_thick_cloth.ron");
    let desc = preset::load(path).expect("the scene loads");
    let config = SoakConfig { scenes: 1, frames: 240, seed: 1, threads: 1, out: None, cost: None };
    let outcome = check_scene(&config, desc);
    assert!(outcome.violations.is_empty(), "{:?}", outcome.violations);
    assert!(outcome.max_stiff_stretch < 2.0, "a stiff edge at {}× its rest length", outcome.max_stiff_stretch);
}

#[test]
fn the_speed_bound_counts_the_lifts_of_cloth_against_cloth() {
    // a scene the 1000-scene soak found (see the file's comment): its vertices move at the cap, and cloth contacts
    // lift some of them in x on top of that
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/scenes/cloths_lifted_at_the_cap.ron");
    let config = SoakConfig { scenes: 1, frames: 90, seed: 1, threads: 1, out: None, cost: None };
    let outcome = check_scene(&config, preset::load(path).expect("the scene loads"));
    let speed: Vec<_> = outcome.violations.iter().filter(|v| v.invariant == "speed").collect();
    assert!(speed.is_empty(), "{speed:?}");
    assert!(outcome.worst_move_ratio > 0.95, "the bound is not approached: {}", outcome.worst_move_ratio);
}

#[test]
fn a_closed_scene_gaining_energy_breaks_the_energy_invariant_and_a_calm_one_keeps_it() {
    let config = SoakConfig { scenes: 1, frames: 120, seed: 1, threads: 1, out: None, cost: None };
    let energy_broken = |name: &str| {
        let outcome = check_scene(&config, preset::load(name).expect("the scene loads"));
        assert_eq!(outcome.energy, Energy::Checked, "{name} is closed");
        let gain = outcome.energy_gain.expect("a checked scene has a gain");
        (outcome.violations.iter().any(|v| v.invariant == "energy"), gain)
    };
    // a rigid strip whose flat hinges snap flat gains 9.6 times its energy (a fault not yet fixed)
    let pumped = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/scenes/flat_hinge_strip.ron");
    let (broken, gain) = energy_broken(pumped);
    assert!(broken && gain > 0.5, "gain {gain}");
    // a soft shell collapsing on the ground gained 15 times its energy while static friction's cone widened with
    // the iterations
    let squashed = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/scenes/squashed_shell.ron");
    let (broken, gain) = energy_broken(squashed);
    assert!(!broken && gain < 0.01, "gain {gain}");
    // a sheet hanging from its corners only loses energy
    let (broken, gain) = energy_broken("hanging_sheet");
    assert!(!broken && gain < 0.0, "gain {gain}");
}

#[test]
fn a_body_or_a_strip_started_inside_a_collider_leaves_the_energy_unchecked_and_one_resting_on_it_does_not() {
    let config = SoakConfig { scenes: 1, frames: 30, seed: 1, threads: 1, out: None, cost: None };
    let energy = |name: &str| {
        let path = format!("{}/tests/scenes/{name}", env!("CARGO_MANIFEST_DIR"));
        let outcome = check_scene(&config, preset::load(&path).expect("the scene loads"));
        (outcome.energy, outcome.energy_gain)
    };
    // lifted 10 cm out of the ground, the box gains 2 J of potential energy that the start did not have
    assert_eq!(energy("sunk_box_holding_sheet.ron"), (Energy::Overlap, None));
    // a strip laid through a capsule's round end, no vertex inside, is lifted over it as its triangles leave
    assert_eq!(energy("strip_through_capsule.ron"), (Energy::Overlap, None));
    let (checked, gain) = energy("box_holding_sheet.ron");
    assert_eq!(checked, Energy::Checked);
    assert!(gain.is_some_and(|g| g < 0.01), "gain {gain:?}");
}
