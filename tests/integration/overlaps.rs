//! Scenes that start with cloth inside a collider: the overlap is resolved without energy (issue "contacts that
//! hold", point 1). A push of p alone out of the ground became velocity: a sheet tilted 60° with its lower edge
//! 7 cm into the ground rose 20 cm above where it started, and one half below left at the speed cap, 20 m up by
//! frame 60.

use drape::headless;
use drape::scene::preset;
use drape::sim::cloth::Particles;

/// A 1 m × 1 m sheet tilted 60° about X, its lower edge `depth` metres below the ground plane.
fn tilted_sheet(depth: f32) -> String {
    let centre = 0.5 * 60f32.to_radians().sin() - depth;
    format!(
        r#"(name: "tilted",
            cloths: [(shape: Grid(cols: 30, rows: 30, width: 1.0, depth: 1.0),
                      placement: (translation: (0.0, {centre}, 0.0), rotation_degrees: (60.0, 0.0, 0.0)))],
            colliders: [(shape: Plane)])"#
    )
}

/// The highest vertex and the fastest upward vertical speed over `frames` steps of `scene`, and the highest
/// vertex at the start.
fn rise_and_upward_speed(scene: &str, frames: u32) -> (f32, f32, f32) {
    let mut app = headless::headless_app(preset::parse(scene.as_bytes(), "tilted.ron").unwrap());
    let highest = |app: &mut bevy::app::App| {
        let world = app.world_mut();
        let mut cloths = world.query::<&Particles>();
        let top = cloths.iter(world).flat_map(|p| p.x.iter().map(|x| x.y)).fold(f32::MIN, f32::max);
        let up = cloths.iter(world).flat_map(|p| p.v.iter().map(|v| v.y)).fold(0.0f32, f32::max);
        (top, up)
    };
    let start = highest(&mut app).0;
    let (mut top, mut up) = (start, 0.0f32);
    for _ in 0..frames {
        app.update();
        let (t, u) = highest(&mut app);
        (top, up) = (top.max(t), up.max(u));
    }
    (start, top, up)
}

#[test]
fn a_sheet_started_into_the_ground_comes_out_without_being_launched() {
    let runs = [0.02, 0.07, 0.433].map(|depth| (depth, rise_and_upward_speed(&tilted_sheet(depth), 120)));
    for (depth, (start, top, up)) in runs {
        eprintln!("{depth} m into the ground: top {start:.3} → highest {top:.3} m, fastest upward {up:.2} m/s");
    }
    for (depth, (start, top, up)) in runs {
        // half in, its buried half laid out on the ground lifts the top edge by a centimetre or two
        assert!(top < start + 0.03, "{depth} m in: the sheet rose from {start} m to {top} m");
        // the sheet's fall whips its edges up at about 2 m/s; 2 cm pushed out in one substep alone is 0.02 m ×
        // 480 Hz ≈ 10 m/s
        assert!(up < 3.0, "{depth} m in: a vertex moved up at {up} m/s");
    }
}

/// Half the sheet in the ground, at rest after 2 s: on the ground, none of it below the surface.
#[test]
fn a_sheet_started_half_into_the_ground_ends_on_it() {
    let scene = tilted_sheet(0.433);
    let report = headless::run(preset::parse(scene.as_bytes(), "tilted.ron").unwrap(), 240).unwrap();
    let [low, high] = report.bounds.unwrap();
    assert!(low.y > -1e-3 && high.y < 0.05, "the sheet spans y = {} to {} m", low.y, high.y);
    assert!(report.max_speed < 0.2, "still moving at {} m/s", report.max_speed);
}

/// A 1 m sheet through the middle of a 60 cm box that moves (`motion`): a quarter of the box above the sheet.
fn sheet_through_a_box(motion: &str) -> String {
    format!(
        r#"(name: "through",
            cloths: [(shape: Grid(cols: 30, rows: 30, width: 1.0, depth: 1.0), placement: (translation: (0.0, 0.5, 0.0)))],
            colliders: [(shape: Plane),
                        (shape: Box(half_extents: (0.3, 0.3, 0.3)), placement: (translation: (0.0, 0.45, 0.0)),
                         motion: {motion})])"#
    )
}

/// A sheet started through a moving box leaves it as it leaves a still one: a vertex resting on a moving surface
/// once had no contact, the cloth dragged it deep inside in one substep and the push out threw it, and the
/// sheet flew 2–3 m up with hundreds of moves at the speed cap.
#[test]
fn a_sheet_started_through_a_moving_box_comes_out_without_being_launched() {
    let motions = [
        "Static",
        "Oscillate(axis: (1.0, 0.0, 0.0), amplitude: 0.1, frequency: 0.2)",
        "Spin(axis: (0.0, 1.0, 0.0), angular_speed: 0.5)",
    ];
    for motion in motions {
        let scene = sheet_through_a_box(motion);
        let (start, top, up) = rise_and_upward_speed(&scene, 120);
        let report = headless::run(preset::parse(scene.as_bytes(), "through.ron").unwrap(), 120).unwrap();
        eprintln!("{motion}: top {start:.3} → {top:.3} m, fastest upward {up:.2} m/s, {} capped", report.capped_moves);
        // the box's top is at 0.75 m: the sheet comes out onto it and drapes over
        assert!(top < 0.8, "{motion}: the sheet rose to {top} m");
        assert!(up < 10.0, "{motion}: a vertex moved up at {up} m/s");
        assert!(report.capped_moves <= 1, "{motion}: the speed cap shortened {} moves", report.capped_moves);
    }
}
