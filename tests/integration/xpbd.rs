//! XPBD (Macklin, Müller, Chentanez 2016) beside the paper's solver: a compliance gives the same material at
//! any split of the work into iterations and substeps, where the paper's stiffness does not; with zero compliance
//! the two are the same equation; and switching solver live does not make the cloth jump.

use bevy::prelude::*;
use drape::headless::headless_app;
use drape::scene::desc::{ClothDesc, ClothShape, PinSelector, SceneDesc};
use drape::sim::SimParams;
use drape::sim::cloth::{ClothMaterial, ClothMesh, Particles, SolverStiffness};
use drape::sim::constraints::volume::enclosed_volume;
use drape::sim::params::Solver;

/// A 1 m × 1 m sheet of 16 × 16 vertices hanging from its top row, `iterations` × `substeps` at 60 Hz.
fn hanging(solver: Solver, material: ClothMaterial, iterations: u32, substeps: u32) -> SceneDesc {
    let params = SimParams { solver, iterations, substeps, damping: 0.05, parallel: false, ..default() };
    let mut desc = SceneDesc { params, ..default() };
    desc.colliders.clear();
    let mut cloth = ClothDesc {
        shape: ClothShape::Grid { cols: 16, rows: 16, width: 1.0, depth: 1.0 },
        pins: vec![PinSelector::Row { v: 0.0 }],
        material,
        ..default()
    };
    cloth.placement.rotation_degrees = Vec3::new(90.0, 0.0, 0.0);
    cloth.placement.translation = Vec3::new(0.0, 3.0, 0.0);
    desc.cloths = vec![cloth];
    desc
}

/// How far the sheet's lowest vertex hangs below its pinned row, after `seconds`, m (1 at rest length).
fn sag(desc: SceneDesc, seconds: f32) -> f32 {
    let mut app = headless_app(desc);
    for _ in 0..(seconds * 60.0) as u32 {
        app.update();
    }
    let world = app.world_mut();
    let particles = world.query::<&Particles>().single(world).expect("one cloth");
    let top = particles.x.iter().map(|x| x.y).fold(f32::MIN, f32::max);
    let bottom = particles.x.iter().map(|x| x.y).fold(f32::MAX, f32::min);
    top - bottom
}

/// The three ways to spend 40 projections per step: 1 × 40, 4 × 10, 40 × 1 (iterations × substeps).
const SPLITS: [(u32, u32); 3] = [(1, 40), (4, 10), (40, 1)];

fn spread(sags: &[f32]) -> f32 {
    let (low, high) = sags.iter().fold((f32::MAX, f32::MIN), |(l, h), s| (l.min(*s), h.max(*s)));
    (high - low) / low
}

#[test]
fn xpbd_sag_does_not_depend_on_iterations_or_substeps_and_pbd_sag_does() {
    let soft = ClothMaterial { stretch_compliance: 0.2, stretch_stiffness: 0.5, ..default() };
    let xpbd: Vec<f32> = SPLITS.iter().map(|&(i, s)| sag(hanging(Solver::Xpbd, soft, i, s), 4.0)).collect();
    let pbd: Vec<f32> = SPLITS.iter().map(|&(i, s)| sag(hanging(Solver::Pbd, soft, i, s), 4.0)).collect();
    println!("sag over 1×40, 4×10, 40×1: XPBD {xpbd:?}, PBD {pbd:?}");
    assert!(xpbd.iter().all(|s| *s > 1.05), "the compliance stretches the sheet visibly: {xpbd:?}");
    assert!(spread(&xpbd) < 0.05, "XPBD's sag differs by {:.1} %: {xpbd:?}", 100.0 * spread(&xpbd));
    assert!(spread(&pbd) > 0.20, "PBD's sag differs by only {:.1} %: {pbd:?}", 100.0 * spread(&pbd));
}

/// Every position after one step of one substep and ten iterations, from a sheet thrown into a crumpled shape.
fn one_step(solver: Solver) -> Vec<Vec3> {
    let rigid = ClothMaterial {
        stretch_stiffness: 1.0,
        bend_stiffness: 1.0,
        stretch_compliance: 0.0,
        bend_compliance: 0.0,
        ..default()
    };
    let mut app = headless_app(hanging(solver, rigid, 10, 1));
    app.update();
    let world = app.world_mut();
    let mut particles = world.query::<&mut Particles>().single_mut(world).expect("one cloth");
    for (i, x) in particles.x.iter_mut().enumerate() {
        let k = i as f32;
        *x += 0.02 * Vec3::new((1.3 * k).sin(), (0.7 * k).cos(), (2.1 * k).sin());
    }
    app.update();
    let world = app.world_mut();
    world.query::<&Particles>().single(world).expect("one cloth").x.clone()
}

#[test]
fn zero_compliance_is_the_paper_with_full_stiffness() {
    let (pbd, xpbd) = (one_step(Solver::Pbd), one_step(Solver::Xpbd));
    let worst = pbd.iter().zip(&xpbd).map(|(a, b)| a.distance(*b)).fold(0.0, f32::max);
    let repeated = pbd.iter().zip(one_step(Solver::Pbd).iter()).all(|(a, b)| a == b);
    assert!(repeated, "the step is deterministic");
    assert!(worst < 1e-5, "XPBD with α = 0 is {worst} m from PBD with k = 1");
}

/// The fastest vertex of the only cloth, m/s.
fn fastest(app: &mut App) -> f32 {
    let world = app.world_mut();
    let particles = world.query::<&Particles>().single(world).expect("one cloth");
    particles.v.iter().map(|v| v.length()).fold(0.0, f32::max)
}

/// A sheet hanging from its two top corners (so it folds and bending carries load), at rest after 8 s.
fn resting_sheet(solver: Solver) -> App {
    let material = ClothMaterial {
        stretch_stiffness: 0.9,
        bend_stiffness: 0.5,
        stretch_compliance: 1e-3,
        bend_compliance: 1.0,
        ..default()
    };
    let mut desc = hanging(solver, material, 8, 2);
    desc.cloths[0].pins = vec![PinSelector::At { u: 0.0, v: 0.0 }, PinSelector::At { u: 1.0, v: 0.0 }];
    desc.params.damping = 0.2;
    let mut app = headless_app(desc);
    for _ in 0..480 {
        app.update();
    }
    app
}

/// The fastest any vertex moves over the next two seconds, m/s, after `change` at rest.
fn peak_after(mut app: App, change: impl FnOnce(&mut World)) -> f32 {
    change(app.world_mut());
    let mut peak = 0.0f32;
    for _ in 0..120 {
        app.update();
        peak = peak.max(fastest(&mut app));
    }
    peak
}

#[test]
fn switching_solver_live_reshapes_the_cloth_as_gently_as_a_material_change() {
    let switch = |to: Solver| move |world: &mut World| world.resource_mut::<SimParams>().solver = to;
    let pbd_to_xpbd = peak_after(resting_sheet(Solver::Pbd), switch(Solver::Xpbd));
    let xpbd_to_pbd = peak_after(resting_sheet(Solver::Xpbd), switch(Solver::Pbd));
    // the same solver switch without the blend: XPBD's share set to 1 at once
    let abrupt = peak_after(resting_sheet(Solver::Pbd), |world| {
        world.resource_mut::<SimParams>().solver = Solver::Xpbd;
        for mut s in world.query::<&mut SolverStiffness>().iter_mut(world) {
            s.xpbd_share = Some(1.0);
        }
    });
    // a change of the paper's material of about the same size (sag 5 % → 0 %), eased as the panel's sliders are
    let stiffened = peak_after(resting_sheet(Solver::Pbd), |world| {
        for mut m in world.query::<&mut ClothMaterial>().iter_mut(world) {
            m.stretch_stiffness = 1.0;
        }
    });
    println!(
        "peak speeds, m/s: PBD → XPBD {pbd_to_xpbd:.3}, XPBD → PBD {xpbd_to_pbd:.3}, abrupt {abrupt:.3}, \
              PBD k 0.9 → 1 {stiffened:.3}"
    );
    for (what, peak) in [("PBD → XPBD", pbd_to_xpbd), ("XPBD → PBD", xpbd_to_pbd)] {
        assert!(peak < 2.0 * stiffened + 0.05, "{what}: {peak} m/s, a material change {stiffened} m/s");
        assert!(peak < 0.5 * abrupt, "{what}: {peak} m/s, abrupt {abrupt} m/s: the blend does not soften it");
    }
}

/// The length each cloth of preset `pbd_vs_xpbd` hangs to after 6 s at `substeps`, by name, m.
fn preset_lengths(substeps: u32) -> Vec<(String, f32)> {
    let mut desc = drape::scene::preset::load("pbd_vs_xpbd").expect("a shipped preset");
    desc.params.substeps = substeps;
    let mut app = headless_app(desc);
    for _ in 0..360 {
        app.update();
    }
    let world = app.world_mut();
    let mut cloths = world.query::<(&drape::sim::cloth::Cloth, &Particles)>();
    let length = |p: &Particles| {
        let (low, high) = p.x.iter().fold((f32::MAX, f32::MIN), |(l, h), x| (l.min(x.y), h.max(x.y)));
        high - low
    };
    cloths.iter(world).map(|(c, p)| (c.name.clone(), length(p))).collect()
}

#[test]
fn the_preset_shows_pbd_stretching_with_fewer_substeps_and_xpbd_not() {
    for substeps in [4, 1] {
        let lengths = preset_lengths(substeps);
        println!("{substeps} substeps: {lengths:?}");
        let of = |name: &str| lengths.iter().find(|(n, _)| n == name).map(|(_, l)| *l).expect("both cloths");
        let (pbd, xpbd) = (of("PBD"), of("XPBD"));
        assert!((xpbd - 1.68).abs() < 0.05 * 1.68, "XPBD hangs {xpbd} m at {substeps} substeps");
        if substeps == 4 {
            assert!((pbd - xpbd).abs() < 0.05 * xpbd, "as designed, both hang alike: {pbd} vs {xpbd}");
        } else {
            assert!(pbd > 1.3 * xpbd, "PBD at one substep: {pbd} m, XPBD {xpbd} m");
        }
    }
}

/// A balloon of radius 0.5 m in zero gravity, blown to twice its volume (k_pressure = 2) against a membrane of
/// stretch compliance 0.01 m/N, with volume compliance `volume_compliance`; its volume after 8 s, m³.
fn blown_volume(volume_compliance: f32, iterations: u32, substeps: u32) -> f32 {
    let params =
        SimParams { solver: Solver::Xpbd, iterations, substeps, pressure: 2.0, gravity: Vec3::ZERO, ..default() };
    let mut desc = SceneDesc { params: SimParams { damping: 0.1, parallel: false, ..params }, ..default() };
    desc.colliders.clear();
    let material = ClothMaterial { stretch_compliance: 0.01, volume_compliance, ..default() };
    let shape = ClothShape::Icosphere { subdivisions: 2, radius: 0.5 };
    desc.cloths = vec![ClothDesc { shape, balloon: true, pins: vec![], material, ..default() }];
    let mut app = headless_app(desc);
    for _ in 0..480 {
        app.update();
    }
    let world = app.world_mut();
    let (particles, mesh) = world.query::<(&Particles, &ClothMesh)>().single(world).expect("one balloon");
    enclosed_volume(&particles.x, &mesh.triangles)
}

#[test]
fn a_balloons_volume_compliance_gives_the_same_volume_at_any_split() {
    let rest = 4.0 / 3.0 * std::f32::consts::PI * 0.125;
    let hard: Vec<f32> = SPLITS.iter().map(|&(i, s)| blown_volume(0.0, i, s)).collect();
    let soft: Vec<f32> = SPLITS.iter().map(|&(i, s)| blown_volume(0.01, i, s)).collect();
    println!("blown volume (rest {rest:.3} m³) over 1×40, 4×10, 40×1: α = 0 {hard:?}, α = 0.01 m³/Pa {soft:?}");
    assert!(hard.iter().all(|v| (v / (2.0 * rest) - 1.0).abs() < 0.05), "α = 0 keeps k_pressure·V0: {hard:?}");
    assert!(soft.iter().all(|v| *v < 0.9 * 2.0 * rest), "the compliance gives way to the membrane: {soft:?}");
    assert!(spread(&soft) < 0.05, "the compliant volume differs by {:.1} %: {soft:?}", 100.0 * spread(&soft));
}
