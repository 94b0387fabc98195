//! Preset files: every shipped preset runs; bad files are refused with file, line, column and reason and never
//! panic; saving round-trips; switching scenes leaks nothing; editing the open file on disk reloads it.

use std::time::{Duration, Instant};

use bevy::asset::AssetPlugin;
use bevy::prelude::*;
use drape::headless::{self, headless_app_with};
use drape::scene::SceneRequest;
use drape::scene::library::PresetLibraryPlugin;
use drape::scene::preset::{self, PresetError, ScenePreset};
use drape::scene::snapshot::{LiveCloth, snapshot};
use drape::scene::spawn::{SceneStatus, build_scene};
use drape::sim::cloth::{ClothMaterial, Particles};

const SHIPPED: [&str; 21] = [
    "balloon",
    "barrel",
    "bend_vs_stretch",
    "character",
    "curtain",
    "flag",
    "gears",
    "hanging_sheet",
    "inflated",
    "layers",
    "leaves",
    "level",
    "mannequin",
    "pbd_vs_xpbd",
    "pile",
    "self_fold",
    "sphere_drape",
    "stripes",
    "tablecloth",
    "tearing",
    "tethers",
];

#[test]
fn every_shipped_preset_loads_and_runs_600_frames() {
    assert_eq!(preset::names(), SHIPPED.to_vec());
    for name in SHIPPED {
        let desc = preset::load(name).unwrap();
        let self_collision = desc.params.self_collision;
        let report = headless::run(desc, 600).unwrap();
        assert!(report.finite, "{name}: non-finite positions");
        // §4.3: where self collision is on, no edge pierces the cloth's own triangles. Not yet in `tearing`: its
        // torn flap still ends with a few dozen crossings the untangling has not undone (docs/performance.md,
        // "tearing: halves, untangling and ensembles"); nor in `layers`, whose three sheets folded over one ball end
        // with about 15 edges through their own triangles (edges slipping past each other, which vertex–triangle
        // contacts do not stop: docs/solvers.md, "Cloth against cloth"); nor in `mannequin`, whose sheet landing on
        // the figure's head and shoulders crosses itself at 25 edges and keeps 2 after the untangling (docs/avian.md);
        // nor in `pile`, whose sheet folds its border flat on the ground, where a fold's crest can slip edge past
        // edge through the layer under it (2 edges from frame 575 in one of five runs whose rounding differs:
        // docs/reliability.md, "Known limits")
        if self_collision && !["tearing", "layers", "mannequin", "pile"].contains(&name) {
            assert_eq!(report.self_intersections, 0, "{name}: the cloth passed through itself");
        }
        assert!(report.particles > 0 && report.triangles > 0, "{name}: empty");
        // the 1/100-stiffness pieces of bend_vs_stretch stretch to about 2.3 times their length, by design
        assert!(report.max_stretch < 2.0, "{name}: blown apart, max stretch {}", report.max_stretch);
        assert!(report.min_collider_distance > -0.02, "{name}: {} m inside a collider", -report.min_collider_distance);
        // the speed cap is a safety net no shipped scene needs
        assert_eq!(report.capped_moves, 0, "{name}: the speed cap shortened moves");
    }
}

/// The alarm counts: a pin swinging at up to 125 m/s drags its free neighbours faster than the cap allows.
#[test]
fn moves_the_speed_cap_shortens_are_counted() {
    let whip = "(cloths: [(shape: Grid(cols: 8, rows: 8, width: 1.0, depth: 1.0), pins: [Row(v: 0.0)],
        pin_motion: Oscillate(axis: (1.0, 0.0, 0.0), amplitude: 1.0, frequency: 20.0))])";
    let report = headless::run(preset::parse(whip.as_bytes(), "whip.ron").unwrap(), 30).unwrap();
    assert!(report.capped_moves > 0, "{report:?}");
}

#[test]
fn collider_coefficients_bodies_and_body_grips_are_checked() {
    let rough = "(colliders: [(shape: Plane),\n (shape: Sphere(radius: 0.5), friction: Some(3.0))])";
    let message = preset::parse(rough.as_bytes(), "rough.ron").err().unwrap().to_string();
    assert!(message.starts_with("rough.ron:2:") && message.contains("friction: 3 is out of range 0–2"), "{message}");
    let bouncy = "(colliders: [(shape: Plane, restitution: Some(1.5))])";
    let message = preset::parse(bouncy.as_bytes(), "bouncy.ron").err().unwrap().to_string();
    assert!(
        message.starts_with("bouncy.ron:1:") && message.contains("restitution: 1.5 is out of range 0–1"),
        "{message}"
    );
    let heavy_plane = "(colliders: [(name: \"floor\", shape: Plane, body: Some((mass: 1.0)))])";
    let desc = preset::parse(heavy_plane.as_bytes(), "heavy_plane.ron").unwrap();
    let message = build_scene(&desc).err().unwrap().to_string();
    assert!(message.contains("'floor'") && message.contains("only a sphere, box or capsule"), "{message}");
    let lost = "(cloths: [(name: \"strip\", body_grips: [(body: \"crate\", at: [Row(v: 1.0)])])])";
    let desc = preset::parse(lost.as_bytes(), "lost.ron").unwrap();
    let message = build_scene(&desc).err().unwrap().to_string();
    assert!(message.contains("'strip'") && message.contains("'crate'"), "{message}");
    // a mesh collider needs Avian (without it the scene is refused for that)
    #[cfg(feature = "avian")]
    {
        let on_mesh = "(cloths: [(name: \"strip\", body_grips: [(body: \"doll\", at: [Row(v: 1.0)])])],
        colliders: [(name: \"doll\", shape: Mesh(file: \"meshes/mannequin.obj\"), body: Some((mass: 5.0)))])";
        let desc = preset::parse(on_mesh.as_bytes(), "on_mesh.ron").unwrap();
        let message = build_scene(&desc).err().unwrap().to_string();
        assert!(
            message.contains("'doll', a mesh collider") && message.contains("only a sphere, box or capsule"),
            "{message}"
        );
    }
}

#[test]
fn a_moving_plane_and_a_cloth_outside_a_barrel_are_refused() {
    let spinning = "(colliders: [\n  (shape: Sphere(radius: 0.5)),\n  (name: \"floor\", shape: Plane, motion: Spin(axis: (0.0, 1.0, 0.0), angular_speed: 2.0)),\n])";
    let message = preset::parse(spinning.as_bytes(), "spin.ron").err().unwrap().to_string();
    assert!(message.starts_with("spin.ron:") && message.contains("collider 'floor': a plane is infinite"), "{message}");
    // the same barrel as the shipped scene, the cloth 1 m beside it
    let barrel = preset::load("barrel").unwrap();
    assert!(build_scene(&barrel).is_ok());
    let mut beside = barrel.clone();
    beside.cloths[0].placement.translation.x += 1.0;
    let message = build_scene(&beside).err().unwrap().to_string();
    assert!(message.contains("'cloth'") && message.contains("outside barrel 'barrel'"), "{message}");
}

#[test]
fn pins_inside_a_collider_or_carried_into_one_are_refused() {
    let sheet = |pins: &str, collider: &str| {
        format!(
            r#"(cloths: [(name: "sheet", shape: Grid(cols: 10, rows: 10, width: 1.0, depth: 1.0),
                         placement: (translation: (0.0, 1.0, 0.0)), {pins})],
                colliders: [(shape: Plane), (name: "post", {collider})])"#
        )
    };
    let build = |scene: String| build_scene(&preset::parse(scene.as_bytes(), "pins.ron").unwrap()).map(|_| ());
    let post = "shape: Box(half_extents: (0.1, 0.2, 0.1)), placement: (translation: (-0.5, 1.0, -0.5))";
    // the pinned corner (-0.5, 1, -0.5) starts inside the post, and the other three corners are fine
    let message = build(sheet("pins: [Corners]", post)).err().unwrap().to_string();
    assert!(
        message.contains("'sheet'") && message.contains("1 of its pinned") && message.contains("'post'"),
        "{message}"
    );
    assert!(message.contains("t = 0.00 s"), "{message}");
    let beside = "shape: Box(half_extents: (0.1, 0.2, 0.1)), placement: (translation: (-0.8, 1.0, -0.5))";
    assert!(build(sheet("pins: [Corners]", beside)).is_ok());
    // the post clear of the pins at the start, its motion brings it onto a corner after 0.25 s
    let swing = format!("{beside}, motion: Oscillate(axis: (1.0, 0.0, 0.0), amplitude: 0.3, frequency: 1.0)");
    let message = build(sheet("pins: [Corners]", &swing)).err().unwrap().to_string();
    assert!(message.contains("'post'") && message.contains("t = 0.1"), "{message}");
    // the pins' own motion carries the whole row down into the ground after 1 s
    let sinking =
        r#"pins: [Row(v: 0.0)], pin_motion: Oscillate(axis: (0.0, -1.0, 0.0), amplitude: 1.5, frequency: 0.125)"#;
    let message = build(sheet(sinking, beside)).err().unwrap().to_string();
    assert!(message.contains("11 of its pinned") && message.contains("collider 0"), "{message}");
    // a grip, too
    let grip = r#"grips: [(at: [Corners], motion: Fixed)]"#;
    assert!(build(sheet(grip, post)).err().unwrap().to_string().contains("'post'"));
    // a barrel around the pins may spin about its axis, but not carry its wall across them
    let barrel = "shape: Barrel(radius: 1.0, half_height: 1.0), placement: (translation: (0.0, 1.0, 0.0))";
    assert!(build(sheet("pins: [Corners]", barrel)).is_ok());
    let spinning = format!("{barrel}, motion: Spin(axis: (0.0, 1.0, 0.0), angular_speed: 2.0)");
    assert!(build(sheet("pins: [Corners]", &spinning)).is_ok());
    let sliding = format!("{barrel}, motion: Oscillate(axis: (1.0, 0.0, 0.0), amplitude: 0.5, frequency: 1.0)");
    let message = build(sheet("pins: [Corners]", &sliding)).err().unwrap().to_string();
    assert!(message.contains("2 of its pinned") && message.contains("outside barrel 'post'"), "{message}");
}

#[test]
fn bend_vs_stretch_has_the_six_pieces_of_figure_3() {
    let desc = preset::load("bend_vs_stretch").unwrap();
    let pairs: Vec<(f32, f32)> =
        desc.cloths.iter().map(|c| (c.material.stretch_stiffness, c.material.bend_stiffness)).collect();
    assert_eq!(pairs, vec![(1.0, 1.0), (0.5, 1.0), (0.01, 1.0), (1.0, 0.0), (0.5, 0.0), (0.01, 0.0)]);
}

#[test]
fn a_balloon_from_a_closed_obj_file_and_an_open_one_refused() {
    let dir = std::env::temp_dir().join(format!("drape-balloon-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // a closed octahedron of "radius" 1: volume 4/3
    let octahedron = "v 1 0 0\nv -1 0 0\nv 0 1 0\nv 0 -1 0\nv 0 0 1\nv 0 0 -1\n\
        f 1 3 5\nf 3 2 5\nf 2 4 5\nf 4 1 5\nf 3 1 6\nf 2 3 6\nf 4 2 6\nf 1 4 6\n";
    let closed = dir.join("octahedron.obj");
    std::fs::write(&closed, octahedron).unwrap();
    let text = format!("(cloths: [(name: \"b\", shape: Obj(file: \"{}\"), balloon: true)])", closed.display());
    let built = build_scene(&preset::parse(text.as_bytes(), "octa.ron").unwrap()).unwrap();
    let balloon = built.cloths[0].balloon.as_ref().expect("a closed OBJ makes a balloon");
    assert!((balloon.rest_volume - 4.0 / 3.0).abs() < 1e-5, "V0 = {}", balloon.rest_volume);
    let open = "(cloths: [(name: \"b\", shape: Obj(file: \"meshes/round_tablecloth.obj\"), balloon: true)])";
    let message = build_scene(&preset::parse(open.as_bytes(), "open.ron").unwrap()).err().unwrap().to_string();
    assert!(message.contains("needs a closed mesh"), "{message}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_cloth_from_an_obj_file_and_a_broken_one() {
    let built = build_scene(&preset::load("tablecloth").unwrap()).unwrap();
    let cloth = &built.cloths[0].bundle;
    assert_eq!((cloth.particles.len(), cloth.mesh.triangles.len()), (1027, 1944));
    let dir = std::env::temp_dir().join(format!("drape-obj-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let obj = dir.join("broken.obj");
    std::fs::write(&obj, "v 0 0 0\nv 1 0 0\nv 0 0 1\nf 1 2 9\n").unwrap();
    let text = format!("(cloths: [(shape: Obj(file: \"{}\"))])", obj.display());
    let desc = preset::parse(text.as_bytes(), "uses_obj.ron").unwrap();
    let message = build_scene(&desc).err().expect("a broken OBJ must not build").to_string();
    assert!(message.contains("broken.obj:4") && message.contains("index 9"), "{message}");
    std::fs::remove_dir_all(&dir).ok();
}

/// Parses `text` and returns the error's (line, column, reason).
fn error_of(text: &str) -> (usize, usize, String) {
    match preset::parse(text.as_bytes(), "bad.ron") {
        Err(PresetError::Parse { file, line, column, reason }) => {
            assert_eq!(file, "bad.ron");
            (line, column, reason)
        }
        other => panic!("expected a parse error, got {other:?}"),
    }
}

const GOOD: &str = "(\n    cloths: [\n        (shape: Grid(cols: 8, rows: 8, width: 1.0, depth: 1.0)),\n    ],\n)\n";

#[test]
fn a_good_minimal_file_takes_documented_defaults() {
    let desc = preset::parse(GOOD.as_bytes(), "presets/mini.ron").unwrap();
    assert_eq!(desc.name, "mini");
    assert_eq!(desc.params, drape::sim::SimParams::default());
    assert_eq!(desc.cloths[0].material, ClothMaterial::default());
    assert_eq!(desc.colliders.len(), 1, "the ground by default");
}

#[test]
fn bad_files_report_line_column_and_reason() {
    let cases = [
        ("syntax error", GOOD.replace("depth: 1.0)", "depth: 1.0"), 4, "expected"),
        ("wrong type", GOOD.replace("cols: 8", "cols: \"many\""), 3, "integer"),
        (
            "unknown shape",
            GOOD.replace("Grid(cols: 8, rows: 8, width: 1.0, depth: 1.0)", "Torus(radius: 1.0)"),
            3,
            "Torus",
        ),
        ("NaN size", GOOD.replace("width: 1.0", "width: NaN"), 3, "NaN is not a valid size"),
        ("negative size", GOOD.replace("depth: 1.0", "depth: -2.0"), 3, "-2 is not a valid size"),
        ("absurd size", GOOD.replace("rows: 8", "rows: 5000000"), 3, "out of range"),
    ];
    for (what, text, line, needle) in cases {
        let (l, column, reason) = error_of(&text);
        assert_eq!(l, line, "{what}: wrong line in '{reason}'");
        assert!(column > 0, "{what}: no column");
        assert!(reason.to_lowercase().contains(&needle.to_lowercase()), "{what}: reason '{reason}' lacks '{needle}'");
    }
    // a bad collider size is found too
    let sphere = "(colliders: [(shape: Sphere(radius: 0.0))])";
    assert!(error_of(sphere).2.contains("not a valid size"));
}

#[test]
fn headless_refuses_a_bad_file_with_the_same_message() {
    let dir = std::env::temp_dir().join(format!("drape-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bad.ron");
    std::fs::write(&path, GOOD.replace("width: 1.0", "width: -1.0")).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_drape"))
        .args(["headless", "--preset", path.to_str().unwrap(), "--frames", "10"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.ron:3:") && err.contains("-1 is not a valid size"), "{err}");
    // and a good file by path runs
    std::fs::write(&path, GOOD).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_drape"))
        .args(["headless", "--preset", path.to_str().unwrap(), "--frames", "10"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn saved_preset_loads_back_to_the_same_scene() {
    let active = preset::load("curtain").unwrap();
    let params = drape::sim::SimParams { iterations: 17, wind_gust: 1.25, ..active.params.clone() };
    let material = ClothMaterial { bend_stiffness: 0.33, density: 0.5, ..active.cloths[0].material };
    // the curtain's top row plus one vertex pinned by hand
    let mut pinned: Vec<u32> = (0..=48).collect();
    pinned.push(1000);
    let live = [LiveCloth { name: "curtain".into(), material, attached: pinned.clone() }];
    let saved = snapshot(&active, &params, &live);
    let text = preset::to_ron(&saved).unwrap();
    let back = preset::parse(text.as_bytes(), "saved.ron").unwrap();
    assert_eq!(back, saved);
    assert_eq!(back.params.iterations, 17);
    let built = build_scene(&back).unwrap();
    let vertices: Vec<u32> = built.cloths[0].bundle.attachments.0.iter().map(|a| a.vertex).collect();
    assert_eq!(vertices, pinned);
    assert_eq!(built.cloths[0].bundle.material, material);
}

fn cloth_size(app: &mut App) -> usize {
    app.world_mut().query::<&Particles>().iter(app.world()).map(|p| p.len()).sum()
}

/// Updates `app` until `done` holds or `seconds` pass.
fn update_until(app: &mut App, seconds: u64, mut done: impl FnMut(&mut App) -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(seconds) {
        app.update();
        if done(app) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

#[test]
fn editing_the_open_preset_on_disk_reloads_it_and_a_broken_edit_keeps_the_scene() {
    let root = std::env::temp_dir().join(format!("drape-watch-{}", std::process::id()));
    std::fs::create_dir_all(root.join("presets")).unwrap();
    let file = root.join("presets/live.ron");
    std::fs::write(&file, GOOD).unwrap();
    let mut app = headless_app_with(drape::scene::SceneDesc::default(), |app| {
        let assets = AssetPlugin {
            file_path: root.to_string_lossy().into_owned(),
            watch_for_changes_override: Some(true),
            ..default()
        };
        app.add_plugins(assets).add_plugins(PresetLibraryPlugin);
    });
    let handle: Handle<ScenePreset> = app.world().resource::<AssetServer>().load("presets/live.ron");
    assert!(update_until(&mut app, 20, |app| app.world().resource::<Assets<ScenePreset>>().get(&handle).is_some()));
    let desc = app.world().resource::<Assets<ScenePreset>>().get(&handle).unwrap().0.clone();
    assert_eq!(desc.source.as_deref(), Some("presets/live.ron"));
    app.world_mut().resource_mut::<SceneRequest>().0 = Some(desc);
    app.update();
    assert_eq!(cloth_size(&mut app), 81);

    std::thread::sleep(Duration::from_millis(300));
    std::fs::write(&file, GOOD.replace("cols: 8", "cols: 4")).unwrap();
    assert!(update_until(&mut app, 20, |app| cloth_size(app) == 45), "the edit was not picked up");

    std::thread::sleep(Duration::from_millis(300));
    std::fs::write(&file, GOOD.replace("width: 1.0", "width: oops")).unwrap();
    assert!(
        update_until(&mut app, 20, |app| app.world().resource::<SceneStatus>().error.is_some()),
        "the broken edit was not reported"
    );
    let error = app.world().resource::<SceneStatus>().error.clone().unwrap();
    assert!(error.contains("live.ron") && error.contains(":3:"), "{error}");
    assert_eq!(cloth_size(&mut app), 45, "the running scene must stay");
    std::fs::remove_dir_all(&root).ok();
}
