//! Sleep (`SleepPlugin`): a cloth at rest stops being stepped, and wakes when something could move it.

use bevy::prelude::*;
use drape::headless;
use drape::scene::preset;
use drape::sim::SimParams;
use drape::sim::cloth::{Cloth, ClothCollider, Grabbed, Particles};
use drape::sim::sleep::Asleep;

/// A 1 m sheet laid just above the ground, and `more` (further cloths and colliders in RON) beside it.
fn scene(params: &str, more_cloths: &str, colliders: &str) -> App {
    let ron = format!(
        "(params: ({params}), cloths: [(name: \"sheet\", shape: Grid(cols: 16, rows: 16, width: 1.0, depth: 1.0), \
         placement: (translation: (0.0, 0.03, 0.0))), {more_cloths}], colliders: [(shape: Plane), {colliders}])"
    );
    headless::headless_app(preset::parse(ron.as_bytes(), "sleep.ron").unwrap())
}

fn run(app: &mut App, frames: u32) {
    for _ in 0..frames {
        app.update();
    }
}

fn cloth(app: &mut App, name: &str) -> Entity {
    let world = app.world_mut();
    let mut cloths = world.query::<(Entity, &Cloth)>();
    cloths.iter(world).find(|(_, c)| c.name == name).map(|(e, _)| e).unwrap()
}

fn asleep(app: &App, cloth: Entity) -> bool {
    app.world().get::<Asleep>(cloth).is_some()
}

fn mean_height(app: &App, cloth: Entity) -> f32 {
    let x = &app.world().get::<Particles>(cloth).unwrap().x;
    x.iter().map(|p| p.y).sum::<f32>() / x.len() as f32
}

#[test]
fn a_sheet_at_rest_falls_asleep_and_the_step_leaves_it_alone() {
    let mut app = scene("", "", "");
    let sheet = cloth(&mut app, "sheet");
    run(&mut app, 60);
    assert!(!asleep(&app, sheet), "asleep within its first second: it lands first");
    run(&mut app, 120);
    assert!(asleep(&app, sheet), "at rest on the ground for two seconds and still awake");
    let (before, changed) = {
        let particles = app.world_mut().query::<Ref<Particles>>().get(app.world(), sheet).unwrap();
        (particles.x.clone(), particles.last_changed())
    };
    assert!(app.world().get::<Particles>(sheet).unwrap().v.iter().all(|v| *v == Vec3::ZERO));
    run(&mut app, 60);
    let particles = app.world_mut().query::<Ref<Particles>>().get(app.world(), sheet).unwrap();
    assert_eq!(particles.last_changed(), changed, "a system of the step wrote the sleeping cloth");
    assert_eq!(particles.x, before);
}

/// The sheet alone, asleep on the ground after three seconds.
fn sleeping_sheet() -> (App, Entity) {
    let mut app = scene("", "", "");
    let sheet = cloth(&mut app, "sheet");
    run(&mut app, 180);
    assert!(asleep(&app, sheet), "at rest on the ground for two seconds and still awake");
    (app, sheet)
}

#[test]
fn a_sleeping_sheet_wakes_when_grabbed() {
    let (mut app, sheet) = sleeping_sheet();
    let corner = app.world().get::<Particles>(sheet).unwrap().x[0];
    app.world_mut().entity_mut(sheet).insert(Grabbed { vertex: 0, target: corner + Vec3::Y * 0.3 });
    run(&mut app, 10);
    assert!(!asleep(&app, sheet), "held and still asleep");
    let lifted = app.world().get::<Particles>(sheet).unwrap().x[0].y - corner.y;
    assert!(lifted > 0.2, "the grabbed corner rose {lifted} m only");
}

#[test]
fn a_sleeping_sheet_wakes_when_a_parameter_changes() {
    let (mut app, sheet) = sleeping_sheet();
    let start = mean_height(&app, sheet);
    app.world_mut().resource_mut::<SimParams>().gravity = Vec3::Y * 5.0;
    run(&mut app, 30);
    assert!(!asleep(&app, sheet));
    assert!(mean_height(&app, sheet) > start + 0.2, "gravity turned upward and the sheet stayed down");
}

/// A second sheet dropped from 15 m lands on the first, asleep by then: the first wakes in time to meet it, and
/// the two stay apart (asleep, the lower one has no contacts, and the upper one would fall through it).
#[test]
fn a_sheet_falling_on_a_sleeping_one_wakes_it_and_lands_on_it() {
    let falling = "(name: \"falling\", shape: Grid(cols: 16, rows: 16, width: 0.8, depth: 0.8), \
                   placement: (translation: (0.0, 15.0, 0.0)))";
    let mut app = scene("cloth_collision: true", falling, "");
    let (sheet, falling) = (cloth(&mut app, "sheet"), cloth(&mut app, "falling"));
    run(&mut app, 85);
    assert!(asleep(&app, sheet), "the lower sheet must sleep before the other arrives");
    assert!(mean_height(&app, falling) > 2.0, "the falling sheet arrived too early");
    run(&mut app, 150);
    let (low, high) = (mean_height(&app, sheet), mean_height(&app, falling));
    assert!(high > low + 0.005, "the falling sheet (mean height {high}) is not on the lower one ({low})");
    let report = headless::report(app.world_mut(), "sleep", 235);
    assert_eq!(report.cloth_crossings, 0, "the sheets crossed");
}

/// A ball rolled slowly into a sheet hanging at rest from its top row: the sheet sleeps while the ball is far,
/// wakes before it arrives, and keeps the ball out (asleep, it would let the ball pass through it).
#[test]
fn a_ball_moving_into_a_sleeping_sheet_wakes_it() {
    let hanging = "(params: (), cloths: [(name: \"sheet\", shape: Grid(cols: 16, rows: 16, width: 1.0, depth: 1.0), \
                   placement: (translation: (0.0, 1.5, 0.0), rotation_degrees: (90.0, 0.0, 0.0)), pins: [Row(v: 0.0)])], \
                   colliders: [(shape: Sphere(radius: 0.2), placement: (translation: (0.0, 1.4, -3.0)), \
                   motion: Oscillate(axis: (0.0, 0.0, 1.0), amplitude: 3.0, frequency: 0.0625))])";
    let mut app = headless::headless_app(preset::parse(hanging.as_bytes(), "hanging.ron").unwrap());
    let sheet = cloth(&mut app, "sheet");
    let (mut slept, mut deepest) = (false, f32::NEG_INFINITY);
    for _ in 0..300 {
        app.update();
        slept |= asleep(&app, sheet);
        let world = app.world_mut();
        let ball = world.query::<(&ClothCollider, &Transform)>().iter(world).next().unwrap().1.translation;
        let x = &app.world().get::<Particles>(sheet).unwrap().x;
        deepest = x.iter().map(|p| 0.2 - p.distance(ball)).fold(deepest, f32::max);
    }
    assert!(slept, "the sheet never slept while the ball was far");
    // the ball's centre passes the sheet's plane at 4 s: by 5 s it has pushed the sheet 0.6 m along
    assert!(deepest < 0.0, "a vertex went {deepest} m into the ball");
}
