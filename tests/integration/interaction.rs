//! The mouse and the parameters, in a headless App: pressing, moving and releasing the mouse over a real
//! window entity and camera grabs the nearest particle, drags it, and flings it; presses on empty space or on
//! the panel grab nothing; changing parameters live behaves.

use bevy::input::ButtonState;
use bevy::input::InputPlugin;
use bevy::input::mouse::MouseButtonInput;
use bevy::prelude::*;
use bevy::window::{PrimaryWindow, WindowResolution};
use drape::headless::{self, headless_app, headless_app_with};
use drape::input::picking::cursor_of;
use drape::input::throw::ThrowSettings;
use drape::input::{DrapeCamera, InteractionPlugin, UiCapture};
use drape::scene::preset;
use drape::sim::cloth::{ClothMaterial, Grabbed, Particles};
use drape::sim::{SimControl, SimParams, metrics};

const VIEW: Vec2 = Vec2::new(1280.0, 720.0);
const FOV: f32 = std::f32::consts::FRAC_PI_4;

/// The hanging sheet after it has swung down, a window, and a camera looking at the sheet from +Z.
fn app_with_mouse() -> (App, Entity, Transform) {
    let camera = Transform::from_xyz(0.0, 1.6, 4.0).looking_at(Vec3::new(0.0, 1.6, -1.0), Vec3::Y);
    let mut app = headless_app_with(preset::load("hanging_sheet").unwrap(), |app| {
        app.add_plugins((InputPlugin, InteractionPlugin));
    });
    let window = app
        .world_mut()
        .spawn((Window { resolution: WindowResolution::new(VIEW.x as u32, VIEW.y as u32), ..default() }, PrimaryWindow))
        .id();
    app.world_mut().spawn((
        camera,
        Projection::Perspective(PerspectiveProjection { fov: FOV, ..default() }),
        DrapeCamera,
    ));
    for _ in 0..300 {
        app.update();
    }
    (app, window, camera)
}

fn set_cursor(app: &mut App, window: Entity, at: Vec2) {
    let mut w = app.world_mut().get_mut::<Window>(window).unwrap();
    w.set_cursor_position(Some(at));
}

fn button(app: &mut App, window: Entity, state: ButtonState) {
    app.world_mut().write_message(MouseButtonInput { button: MouseButton::Left, state, window });
}

fn particles(app: &mut App) -> Particles {
    let mut q = app.world_mut().query::<&Particles>();
    q.single(app.world()).unwrap().clone()
}

fn grabbed(app: &mut App) -> Option<Grabbed> {
    let mut q = app.world_mut().query::<&Grabbed>();
    q.iter(app.world()).next().copied()
}

fn screen(camera: &Transform, p: Vec3) -> Vec2 {
    cursor_of(camera.translation, camera.rotation, FOV, VIEW, p).unwrap()
}

#[test]
fn press_grabs_the_nearest_particle_drag_moves_it_release_flings_it() {
    let (mut app, window, camera) = app_with_mouse();
    // aim a few pixels off the particle in the middle of the sheet
    let x = particles(&mut app).x;
    let middle = x.len() / 2;
    let cursor = screen(&camera, x[middle]) + Vec2::new(3.0, -2.0);
    let expected = (0..x.len())
        .min_by(|&a, &b| screen(&camera, x[a]).distance(cursor).total_cmp(&screen(&camera, x[b]).distance(cursor)));
    set_cursor(&mut app, window, cursor);
    button(&mut app, window, ButtonState::Pressed);
    app.update();
    let grab = grabbed(&mut app).expect("the press over the cloth grabbed nothing");
    assert_eq!(Some(grab.vertex as usize), expected);
    let i = grab.vertex as usize;
    assert_eq!(particles(&mut app).w[i], 0.0, "a held particle has w = 0");

    // drag 150 px to the right over 15 frames: the particle follows the cursor on the camera-facing plane
    let start = particles(&mut app).x[i];
    for k in 1..=15 {
        set_cursor(&mut app, window, cursor + Vec2::new(10.0 * k as f32, 0.0));
        app.update();
    }
    app.update();
    let held = particles(&mut app).x[i];
    let target = grabbed(&mut app).unwrap().target;
    assert!((held - target).length() < 1e-3, "particle {held} vs target {target}");
    assert!(held.x - start.x > 0.2, "moved only {} m right", held.x - start.x);
    assert!((held.z - start.z).abs() < 0.02, "left the camera-facing plane: Δz = {}", held.z - start.z);
    let on_screen = screen(&camera, held);
    assert!(on_screen.distance(cursor + Vec2::new(150.0, 0.0)) < 4.0, "{on_screen} is not under the cursor");

    // release while moving: the particle gets its mass back and keeps the pointer's velocity
    set_cursor(&mut app, window, cursor + Vec2::new(170.0, 0.0));
    app.update();
    button(&mut app, window, ButtonState::Released);
    app.update();
    assert!(grabbed(&mut app).is_none());
    let p = particles(&mut app);
    assert!((p.w[i] - 1.0 / p.mass[i]).abs() < 1e-3 * p.w[i], "inverse mass not restored");
    assert!(p.v[i].x > 0.3, "released without the pointer's velocity: {}", p.v[i]);
}

#[test]
fn press_on_empty_space_grabs_nothing() {
    let (mut app, window, _) = app_with_mouse();
    set_cursor(&mut app, window, Vec2::new(1250.0, 30.0));
    button(&mut app, window, ButtonState::Pressed);
    app.update();
    assert!(grabbed(&mut app).is_none());
}

#[test]
fn no_grab_starts_while_the_panel_has_the_pointer() {
    let (mut app, window, camera) = app_with_mouse();
    let x = particles(&mut app).x;
    set_cursor(&mut app, window, screen(&camera, x[x.len() / 2]));
    app.world_mut().resource_mut::<UiCapture>().pointer = true;
    button(&mut app, window, ButtonState::Pressed);
    app.update();
    assert!(grabbed(&mut app).is_none());
    // the same press with the panel out of the way grabs
    app.world_mut().resource_mut::<UiCapture>().pointer = false;
    button(&mut app, window, ButtonState::Released);
    app.update();
    button(&mut app, window, ButtonState::Pressed);
    app.update();
    assert!(grabbed(&mut app).is_some());
}

#[test]
fn shift_click_pins_and_unpins() {
    let (mut app, window, camera) = app_with_mouse();
    let x = particles(&mut app).x;
    let corner = x.len() - 1; // a free bottom corner
    set_cursor(&mut app, window, screen(&camera, x[corner]));
    let click = |app: &mut App| {
        app.world_mut().resource_mut::<ButtonInput<KeyCode>>().press(KeyCode::ShiftLeft);
        button(app, window, ButtonState::Pressed);
        app.update();
        button(app, window, ButtonState::Released);
        app.update();
    };
    click(&mut app);
    assert_eq!(particles(&mut app).w[corner], 0.0, "shift+click did not pin");
    let pinned_at = particles(&mut app).x[corner];
    for _ in 0..30 {
        app.update();
    }
    assert!(particles(&mut app).x[corner].distance(pinned_at) < 1e-6, "the pin moved");
    click(&mut app);
    assert!(particles(&mut app).w[corner] > 0.0, "shift+click did not unpin");
}

#[test]
fn more_iterations_lower_the_stretch_of_a_hanging_sheet() {
    let stretch = |iterations: u32| {
        let mut desc = preset::load("hanging_sheet").unwrap();
        desc.params.iterations = iterations;
        desc.params.substeps = 1;
        headless::run(desc, 240).unwrap().max_stretch
    };
    let (few, many) = (stretch(2), stretch(30));
    assert!(many < 0.5 * few, "max stretch {few} at 2 iterations, {many} at 30");

    // the same through the live parameters resource of a running App
    let mut app = headless_app(preset::load("hanging_sheet").unwrap());
    app.world_mut().resource_mut::<SimParams>().substeps = 1;
    app.world_mut().resource_mut::<SimParams>().iterations = 2;
    for _ in 0..240 {
        app.update();
    }
    let before = headless::report(app.world_mut(), "", 0).max_stretch;
    app.world_mut().resource_mut::<SimParams>().iterations = 30;
    for _ in 0..60 {
        app.update();
    }
    let after = headless::report(app.world_mut(), "", 0).max_stretch;
    assert!(after < 0.5 * before, "live change: {before} → {after}");
}

/// Kinetic energy a resting 0.8 kg sheet may pick up in the second after its stiffness changes, joules.
/// Halving k_stretch lets it sag 8 cm, releasing 0.65 J of potential energy: applied abruptly that makes it
/// jump with 0.45 J of kinetic energy; eased by `SolverStiffness` it peaks near 0.07 J.
const STIFFNESS_CHANGE_ENERGY: f32 = 0.1;

#[test]
fn changing_stiffness_on_a_resting_sheet_injects_no_energy() {
    let mut app = headless_app(preset::load("hanging_sheet").unwrap());
    for _ in 0..1200 {
        app.update();
    }
    let resting = headless::report(app.world_mut(), "", 0).kinetic_energy;
    assert!(resting < 1e-3, "not at rest: {resting} J");
    for (stretch, bend) in [(0.5, 0.1), (1.0, 1.0), (1.0, 0.0)] {
        let mut q = app.world_mut().query::<&mut ClothMaterial>();
        for mut m in q.iter_mut(app.world_mut()) {
            m.stretch_stiffness = stretch;
            m.bend_stiffness = bend;
        }
        let mut peak = 0.0f32;
        for _ in 0..60 {
            app.update();
            let p = particles(&mut app);
            peak = peak.max(metrics::kinetic_energy(&p.v, &p.mass));
        }
        assert!(peak < STIFFNESS_CHANGE_ENERGY, "k_stretch {stretch}, k_bend {bend}: peak kinetic energy {peak} J");
    }
}

#[test]
fn pause_and_single_step() {
    let mut app = headless_app(preset::load("hanging_sheet").unwrap());
    app.world_mut().resource_mut::<SimControl>().paused = true;
    let before = particles(&mut app).x;
    for _ in 0..10 {
        app.update();
    }
    assert_eq!(particles(&mut app).x, before, "paused, yet the cloth moved");
    app.world_mut().resource_mut::<SimControl>().step_requests = 1;
    app.update();
    app.update();
    assert_ne!(particles(&mut app).x, before);
    assert_eq!(app.world().resource::<drape::sim::SimClock>().steps, 1);
}

#[test]
fn dragging_hard_never_explodes() {
    let (mut app, window, camera) = app_with_mouse();
    let x = particles(&mut app).x;
    set_cursor(&mut app, window, screen(&camera, x[x.len() / 2]));
    button(&mut app, window, ButtonState::Pressed);
    app.update();
    assert!(grabbed(&mut app).is_some());
    // whip the cursor between far corners of the window, down through the ground and back, every frame
    let corners = [Vec2::new(0.0, 0.0), Vec2::new(1280.0, 720.0), Vec2::new(640.0, 720.0), Vec2::new(1280.0, 0.0)];
    for k in 0..120 {
        set_cursor(&mut app, window, corners[k % 4]);
        app.update();
        assert!(particles(&mut app).x.iter().all(|p| p.is_finite()), "NaN after {k} frames of dragging");
    }
    button(&mut app, window, ButtonState::Released);
    for _ in 0..600 {
        app.update();
    }
    let r = headless::report(app.world_mut(), "", 0);
    assert!(r.finite);
    assert!(r.kinetic_energy < 0.05, "still thrashing 10 s after the release: {} J", r.kinetic_energy);
    assert!(r.min_collider_distance > -0.01, "cloth left {} m inside the ground", -r.min_collider_distance);
}

#[test]
fn key_b_throws_a_ball_at_the_cursor_that_pushes_the_cloth() {
    use bevy::input::keyboard::{Key, KeyboardInput};
    use drape::sim::rigid::ClothRigidBody;
    let (mut app, window, camera) = app_with_mouse();
    let x = particles(&mut app).x;
    let target = x[x.len() / 2];
    set_cursor(&mut app, window, screen(&camera, target));
    let key = |state| KeyboardInput {
        key_code: KeyCode::KeyB,
        logical_key: Key::Character("b".into()),
        state,
        text: None,
        repeat: false,
        window,
    };
    app.world_mut().write_message(key(ButtonState::Pressed));
    app.update();
    app.world_mut().write_message(key(ButtonState::Released));
    app.update();
    let mut balls = app.world_mut().query::<(&ClothRigidBody, &Transform)>();
    let (ball, pose) = balls.single(app.world()).map(|(b, t)| (*b, *t)).expect("B threw no ball");
    // it flies from the camera toward the point under the cursor at the panel's speed
    let aim = (target - camera.translation).normalize();
    assert!(ball.velocity.normalize().dot(aim) > 0.99, "thrown along {} instead of {aim}", ball.velocity);
    assert!((ball.velocity.length() - ThrowSettings::default().ball_speed).abs() < 1.0);
    assert!(pose.translation.distance(camera.translation) < 1.5);
    let z_before: f32 = x.iter().map(|p| p.z).sum::<f32>() / x.len() as f32;
    for _ in 0..40 {
        app.update();
    }
    let after = particles(&mut app).x;
    let z_after: f32 = after.iter().map(|p| p.z).sum::<f32>() / after.len() as f32;
    assert!(z_after < z_before - 0.02, "the sheet was not pushed back: mean z {z_before} → {z_after}");
}
