//! Behaviour of the whole simulation schedule in a headless App (no window, no GPU): the scenes settle, the
//! cloth stays out of colliders, stiffness does not depend on the iteration count, and the CLI reports it.

use bevy::prelude::*;
use drape::headless::{self, headless_app};
use drape::scene::desc::{ClothDesc, ClothShape, PinSelector, Placement, SceneDesc};
use drape::scene::preset;
use drape::sim::SimClock;
use drape::sim::cloth::{ClothMaterial, Particles};
use drape::sim::collide::shapes::Shape;

#[test]
fn each_update_is_exactly_one_fixed_step() {
    let mut app = headless_app(preset::load("hanging_sheet").unwrap());
    for _ in 0..30 {
        app.update();
    }
    let clock = *app.world().resource::<SimClock>();
    assert_eq!(clock.steps, 30);
    assert!((clock.time - 0.5).abs() < 1e-4, "simulated {} s", clock.time);
}

/// Bounds for the pinned sheet after 10 simulated seconds.
const SETTLED_KINETIC_ENERGY: f32 = 0.01; // J, for a 0.8 kg sheet: rms speed below 0.16 m/s
const SETTLED_MAX_STRETCH: f32 = 0.10;

#[test]
fn hanging_sheet_settles() {
    let r = headless::run(preset::load("hanging_sheet").unwrap(), 600).unwrap();
    assert!(r.finite);
    assert!((r.sim_time - 10.0).abs() < 1e-3);
    assert_eq!(r.particles, 33 * 33);
    assert!(r.kinetic_energy < SETTLED_KINETIC_ENERGY, "kinetic energy {} J", r.kinetic_energy);
    assert!(r.max_stretch < SETTLED_MAX_STRETCH, "max stretch {}", r.max_stretch);
    // it really swung down: the sheet hangs below its pins
    assert!(r.max_stretch > 0.0);
}

/// How far a vertex may be inside the sphere after the drape has settled, metres.
const SPHERE_PENETRATION_TOLERANCE: f32 = 0.002;

#[test]
fn sphere_drape_never_enters_the_sphere() {
    let desc = preset::load("sphere_drape").unwrap();
    let mut app = headless_app(desc.clone());
    let sphere = desc.colliders.iter().find_map(|c| match c.shape.analytic()? {
        drape::sim::collide::ColliderShape::Sphere { radius } => {
            Some(Shape::Sphere { center: c.placement.translation, radius })
        }
        _ => None,
    });
    let sphere = sphere.unwrap();
    let mut deepest = f32::INFINITY;
    for frame in 0..480 {
        app.update();
        if frame % 10 == 9 {
            let mut q = app.world_mut().query::<&Particles>();
            for p in q.iter(app.world()) {
                for x in &p.x {
                    deepest = deepest.min(sphere.signed_distance(*x));
                }
            }
        }
    }
    // Settled and still draped after 20 s: static friction holds it on the sphere (no creep off the top).
    for _ in 480..1200 {
        app.update();
    }
    let r = headless::report(app.world_mut(), "sphere_drape", 1200);
    assert!(r.finite);
    assert!(deepest > -SPHERE_PENETRATION_TOLERANCE, "a vertex was {} m inside the sphere", -deepest);
    assert!(deepest < 0.05, "the cloth never reached the sphere (closest {deepest} m)");
    assert!(r.kinetic_energy < 0.01, "still moving: {} J", r.kinetic_energy);
    let mut q = app.world_mut().query::<&Particles>();
    let top = q.iter(app.world()).flat_map(|p| p.x.iter().map(|x| x.y)).fold(f32::MIN, f32::max);
    let Shape::Sphere { center, radius } = sphere else { unreachable!() };
    assert!(top > center.y + radius, "the sheet slid off the sphere: highest point {top} m");
}

/// A vertical sheet hanging from its top row with soft stretch stiffness k; returns how far its bottom row
/// sags below its rest height after settling.
fn sag(iterations: u32, stretch_stiffness: f32) -> f32 {
    let rest_bottom_y = 1.0;
    let desc = SceneDesc {
        name: "sag".into(),
        params: drape::sim::SimParams { iterations, substeps: 2, damping: 0.1, ..default() },
        cloths: vec![ClothDesc {
            shape: ClothShape::Grid { cols: 6, rows: 6, width: 0.6, depth: 0.6 },
            // rotate the XZ grid upright: row v = 0 at the top
            placement: Placement {
                translation: Vec3::new(0.0, rest_bottom_y + 0.3, 0.0),
                rotation_degrees: Vec3::new(90.0, 0.0, 0.0),
            },
            pins: vec![PinSelector::Row { v: 0.0 }],
            material: ClothMaterial { stretch_stiffness, bend_stiffness: 0.0, ..default() },
            ..default()
        }],
        colliders: vec![],
        ..default()
    };
    let mut app = headless_app(desc);
    for _ in 0..600 {
        app.update();
    }
    let mut q = app.world_mut().query::<&Particles>();
    let p = q.single(app.world()).unwrap();
    let lowest = p.x.iter().map(|x| x.y).fold(f32::INFINITY, f32::min);
    rest_bottom_y - lowest
}

#[test]
fn linearised_stiffness_makes_sag_independent_of_iterations() {
    let k = 0.5;
    let (few, many) = (sag(5, k), sag(50, k));
    assert!(few > 0.005, "the soft sheet should sag visibly, sagged {few} m");
    let difference = (few - many).abs() / many;
    assert!(difference < 0.05, "sag {few} m at 5 iterations vs {many} m at 50: {:.1} %", difference * 100.0);
    // Without the §3.3 linearisation (k applied raw each iteration, i.e. an effective k of 1 − (1 − k)^n) the
    // same sheet is several times stiffer at 50 iterations: the test above can tell the two apart.
    let raw_many = sag(50, 1.0 - (1.0f32 - k).powi(50));
    let raw_few = sag(5, 1.0 - (1.0f32 - k).powi(5));
    assert!((raw_few - raw_many).abs() / raw_many > 0.5, "raw k: {raw_few} vs {raw_many}");
}

#[test]
fn headless_cli_prints_json_and_refuses_unknown_scenes() {
    let exe = env!("CARGO_BIN_EXE_drape");
    let out = std::process::Command::new(exe)
        .args(["headless", "--preset", "hanging_sheet", "--frames", "30"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for key in [
        "preset",
        "frames",
        "particles",
        "constraints",
        "triangles",
        "torn_edges",
        "max_stretch",
        "kinetic_energy",
        "finite",
        "bounds",
        "max_speed",
        "self_intersections",
        "cloth_crossings",
        "capped_moves",
        "energy_gain",
        "ms_per_frame",
        "stage_ms",
    ] {
        assert!(json.get(key).is_some(), "missing key {key}");
    }
    assert_eq!(json["particles"], 1089);
    assert_eq!(json["finite"], true);
    // the 2 m × 2 m sheet, hung from two corners 2.6 m up, has swung down without widening and is still moving
    let axis = |corner: usize, k: usize| json["bounds"][corner][k].as_f64().unwrap();
    assert!((axis(1, 0) - axis(0, 0) - 2.0).abs() < 0.05, "x extent {}", axis(1, 0) - axis(0, 0));
    assert!(axis(1, 1) <= 2.61 && axis(0, 1) < 2.0 && axis(0, 1) > 0.0, "y from {} to {}", axis(0, 1), axis(1, 1));
    let speed = json["max_speed"].as_f64().unwrap();
    assert!(speed > 0.5 && speed < 20.0, "max speed {speed}");
    assert!(json["stage_ms"]["project"].as_f64().unwrap() > 0.0);

    let out = std::process::Command::new(exe).args(["headless", "--preset", "no_such_scene"]).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no_such_scene") && err.contains("hanging_sheet") && err.contains("sphere_drape"), "{err}");
}

#[test]
fn cloth_crossings_count_edges_through_another_cloth_only() {
    let sheet = |name: &str, translation: Vec3, rotation_degrees: Vec3| ClothDesc {
        name: name.into(),
        shape: ClothShape::Grid { cols: 10, rows: 10, width: 1.0, depth: 1.0 },
        placement: Placement { translation, rotation_degrees },
        pins: vec![PinSelector::Corners],
        ..ClothDesc::default()
    };
    // two sheets through each other at right angles, the crossing line half a cell off both grids' rows
    let (flat, upright) = (Vec3::new(0.0, 2.0, 0.0), Vec3::new(0.03, 2.05, 0.05));
    let crossed = SceneDesc {
        cloths: vec![sheet("flat", flat, Vec3::ZERO), sheet("upright", upright, Vec3::new(90.0, 0.0, 0.0))],
        ..SceneDesc::default()
    };
    let report = headless::run(crossed, 0).unwrap();
    assert!(report.cloth_crossings >= 10, "{} crossings", report.cloth_crossings);
    assert_eq!(report.self_intersections, 0);
    // Fig. 3's six separate pieces cross nothing
    assert_eq!(headless::run(preset::load("bend_vs_stretch").unwrap(), 30).unwrap().cloth_crossings, 0);
}

#[test]
fn a_closed_scene_reports_its_energy_gain_and_an_open_one_none() {
    // the hanging sheet swings down and damping takes energy out: its largest rise is below its start
    let hanging = headless::run(preset::load("hanging_sheet").unwrap(), 120).unwrap();
    let gain = hanging.energy_gain.expect("the hanging sheet is a closed scene");
    assert!(gain < 0.0, "the hanging sheet gained {gain} of its energy");
    // a rigid strip whose flat hinges snap flat gains 9.6 times its energy (a fault not yet fixed): the report says so
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/scenes/flat_hinge_strip.ron");
    let pumped = headless::run(preset::load(path).unwrap(), 120).unwrap();
    assert!(pumped.energy_gain.is_some_and(|g| g > 0.5), "{:?}", pumped.energy_gain);
    // a soft shell collapsing on the ground gained 15 times its energy and capped two moves while static friction's
    // cone widened with the iterations (200 here)
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/scenes/squashed_shell.ron");
    let squashed = headless::run(preset::load(path).unwrap(), 120).unwrap();
    assert!(squashed.energy_gain.is_some_and(|g| g < 0.01), "{:?}", squashed.energy_gain);
    assert_eq!(squashed.capped_moves, 0);
    // a ball on a pinned strip beside a balloon doubled its energy within 30 frames: the thick cloths, pushed apart
    // by a quarter of their 8.75 cm gap a substep in p alone, flew at up to 56 m/s; no faster than 2 m/s, 8.8 %
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/scenes/strip_pendulum.ron");
    let strip = headless::run(preset::load(path).unwrap(), 60).unwrap();
    assert!(strip.energy_gain.is_some_and(|g| g < 0.1), "{:?}", strip.energy_gain);
    assert_eq!(strip.capped_moves, 0);
    // a ball holding a heavy sheet far from its centre falls with it, its holds two-way: it no longer spins to the
    // speed cap and gains 278 times its energy (issue 49, point 5)
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/scenes/lever_grip.ron");
    let lever = headless::run(preset::load(path).unwrap(), 120).unwrap();
    assert_eq!(lever.capped_moves, 0);
    assert!(lever.energy_gain.is_some_and(|g| g < 0.1), "{:?}", lever.energy_gain);
    // the flag's wind does work on it
    assert_eq!(headless::run(preset::load("flag").unwrap(), 10).unwrap().energy_gain, None);
}

#[test]
fn balloons_report_how_full_they_are_and_a_burst_one_nothing() {
    let balloon = |pressure: f32, tearing: bool| SceneDesc {
        name: "balloon_fill".into(),
        params: drape::sim::SimParams { gravity: Vec3::ZERO, pressure, tearing, tear_threshold: 1.1, ..default() },
        cloths: vec![ClothDesc {
            shape: ClothShape::Icosphere { subdivisions: 2, radius: 0.3 },
            balloon: true,
            ..ClothDesc::default()
        }],
        ..SceneDesc::default()
    };
    let full = headless::run(balloon(1.5, false), 240).unwrap();
    assert!(full.balloon_fill.len() == 1 && (full.balloon_fill[0] - 1.0).abs() < 0.05, "{:?}", full.balloon_fill);
    // pumped to twice its volume, its edges would have to stretch by 2^(1/3) = 1.26; they tear at 1.1 and it bursts
    let burst = headless::run(balloon(2.0, true), 240).unwrap();
    assert!(burst.torn_edges > 0 && burst.balloon_fill == [0.0], "{} torn, {:?}", burst.torn_edges, burst.balloon_fill);
    assert!(headless::run(preset::load("hanging_sheet").unwrap(), 1).unwrap().balloon_fill.is_empty());
}
