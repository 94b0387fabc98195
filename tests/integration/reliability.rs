//! Scenes that once exploded or hung, kept as tests: each asserts the physical facts that failed.

use drape::headless;
use drape::scene::preset;

/// A 45 × 40 sheet 18 cm wide (4 mm edges) asked for a 4.5 cm thickness with self-collision, poked by a sphere.
/// Its band covered a dozen neighbours of every vertex: the contacts fought the stretch constraints (edges at
/// 9× their length, 12,000 edges through the cloth) and the search took over 150 ms a frame. Capped at half
/// the vertex spacing, self-collision keeps it sound.
#[test]
fn a_thickness_far_above_the_edge_length_is_capped_for_self_collision() {
    let scene = r#"(
        name: "thick",
        params: (self_collision: true),
        cloths: [(
            name: "c",
            shape: Grid(cols: 45, rows: 40, width: 0.18, depth: 0.18),
            placement: (translation: (0.0, 0.5, 0.0)),
            pins: [Corners],
            material: (thickness: 0.045, bend_stiffness: 0.0),
        )],
        colliders: [
            (shape: Plane),
            (
                shape: Sphere(radius: 0.04),
                placement: (translation: (0.0, 0.3, 0.0)),
                motion: Oscillate(axis: (0.0, 1.0, 0.0), amplitude: 0.2, frequency: 0.5),
            ),
        ],
    )"#;
    assert_sheet_holds_together(scene, 120);
}

/// A grid of long thin cells (1.4 mm × 11 cm) asked for a 3 cm thickness with self-collision, over a sphere.
/// Capped at half the *mean* edge (3.7 cm, 26 times the short edges) the band made every vertex a contact of
/// its neighbours' triangles across the short edges: edges at 10× their length, 720 edges through the cloth.
/// Capped at half the vertex spacing (each vertex's shortest edge), it hangs as it does without self-collision.
#[test]
fn a_mesh_of_long_thin_cells_caps_its_thickness_by_the_short_edges() {
    let scene = r#"(
        name: "thin_cells",
        params: (self_collision: true),
        cloths: [(
            name: "c",
            shape: Grid(cols: 80, rows: 4, width: 0.112, depth: 0.44),
            placement: (translation: (0.0, 0.5, 0.0)),
            pins: [Corners],
            material: (thickness: 0.03),
        )],
        colliders: [(shape: Plane), (shape: Sphere(radius: 0.05), placement: (translation: (0.0, 0.35, 0.0)))],
    )"#;
    let report = assert_sheet_holds_together(scene, 120);
    assert!(report.max_speed < 1.0, "still moving at {} m/s after 2 s", report.max_speed);
}

/// A sheet on the ground with a box 5 mm above it, less than the 1 cm thickness kept to each: no place keeps both.
/// The vertex under the box took the last contact's side in each substep and jumped across the 15 mm overlap at
/// 3.6 m/s for ever; the two contacts now share the overlap and it rests midway.
#[test]
fn a_sheet_pinched_under_a_box_rests_between_it_and_the_ground() {
    let scene = r#"(
        name: "pinch",
        params: (iterations: 8, substeps: 4),
        cloths: [(
            name: "sheet",
            shape: Grid(cols: 20, rows: 20, width: 1.0, depth: 1.0),
            placement: (translation: (0.0, 0.01, 0.0)),
        )],
        colliders: [
            (shape: Plane),
            (shape: Box(half_extents: (0.2, 0.1, 0.2)), placement: (translation: (0.0, 0.105, 0.0))),
        ],
    )"#;
    let report = assert_sheet_holds_together(scene, 120);
    assert!(report.max_speed < 0.5, "still moving at {} m/s after 2 s", report.max_speed);
    let lowest = report.bounds.map_or(f32::NAN, |[min, _]| min.y);
    assert!((0.0..0.005).contains(&lowest), "the pinched vertices rest at y = {lowest}, not between 0 and 5 mm");
}

#[test]
fn a_towel_over_a_box_comes_to_rest() {
    // hanging down both sides, the towel's tension holds it against the box's two top edges
    let scene = r#"(
        name: "towel",
        params: (iterations: 8, substeps: 4),
        cloths: [(
            name: "towel",
            shape: Grid(cols: 6, rows: 30, width: 0.3, depth: 1.2),
            placement: (translation: (0.0, 1.0, 0.0), rotation_degrees: (0.0, 90.0, 0.0)),
        )],
        colliders: [
            (shape: Plane),
            (shape: Box(half_extents: (0.1, 0.05, 0.4)), placement: (translation: (0.0, 0.94, 0.0))),
        ],
    )"#;
    let report = assert_sheet_holds_together(scene, 600);
    assert!(report.max_speed < 0.05, "still moving at {} m/s after 10 s", report.max_speed);
    assert!(report.min_collider_distance > 0.0, "{} m inside the box", -report.min_collider_distance);
}

/// Runs `scene` headless for `frames` steps and asserts that its sheet stayed finite, never passed through
/// itself and kept every edge below 2.5× its rest length.
fn assert_sheet_holds_together(scene: &str, frames: u32) -> headless::HeadlessReport {
    let report = headless::run(preset::parse(scene.as_bytes(), "scene.ron").unwrap(), frames).unwrap();
    assert!(report.finite);
    assert_eq!(report.self_intersections, 0, "the sheet passed through itself");
    assert!(report.max_stretch < 2.5, "edges stretched to {} times their length", report.max_stretch + 1.0);
    report
}
