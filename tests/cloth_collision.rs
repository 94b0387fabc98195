//! Cloth against cloth: in the `layers` preset no vertex of one cloth passes through a triangle of another
//! between two frames, over 600 frames; with the switch off they fall through each other.

use bevy::prelude::*;
use drape::headless::headless_app;
use drape::scene::desc::SceneDesc;
use drape::scene::preset;
use drape::sim::cloth::{ClothMesh, Particles};
use drape::sim::selfcollide::count_crossings;

/// Every cloth's positions and its triangles, in query order.
fn snapshot(app: &mut App) -> Vec<(Vec<Vec3>, Vec<[u32; 3]>)> {
    let world = app.world_mut();
    world.query::<(&Particles, &ClothMesh)>().iter(world).map(|(p, m)| (p.x.clone(), m.triangles.clone())).collect()
}

/// The cloths laid end to end: positions and renumbered triangles.
fn combined(cloths: &[(Vec<Vec3>, Vec<[u32; 3]>)]) -> (Vec<Vec3>, Vec<[u32; 3]>) {
    let (mut x, mut triangles) = (Vec::new(), Vec::new());
    for (positions, tris) in cloths {
        let first = x.len() as u32;
        x.extend_from_slice(positions);
        triangles.extend(tris.iter().map(|t| t.map(|i| i + first)));
    }
    (x, triangles)
}

/// Vertex–triangle crossings between different cloths over `frames` frames of `desc`, frame to frame: the
/// crossings of all cloths together less each cloth's own. Frames where a cloth tore (its vertex count changed)
/// are skipped, since the vertices of a split do not move linearly between the two frames.
fn crossings_between_cloths(desc: SceneDesc, frames: u32) -> usize {
    let mut app = headless_app(desc);
    app.update();
    let mut before = snapshot(&mut app);
    let mut total = 0;
    for _ in 0..frames {
        app.update();
        let after = snapshot(&mut app);
        let same_shape = before.len() == after.len() && before.iter().zip(&after).all(|(b, a)| b.0.len() == a.0.len());
        if same_shape {
            let ((xb, tris), (xa, _)) = (combined(&before), combined(&after));
            let all = count_crossings(&xb, &xa, &tris);
            let own: usize = before.iter().zip(&after).map(|(b, a)| count_crossings(&b.0, &a.0, &a.1)).sum();
            total += all.saturating_sub(own);
        }
        before = after;
    }
    total
}

fn layers(cloth_collision: bool) -> SceneDesc {
    let mut desc = preset::load("layers").expect("a shipped preset");
    desc.params.cloth_collision = cloth_collision;
    desc
}

#[test]
fn layered_cloths_never_pass_through_each_other() {
    let with = crossings_between_cloths(layers(true), 600);
    let without = crossings_between_cloths(layers(false), 600);
    println!("crossings between cloths over 600 frames: {with} with cloth_collision, {without} without");
    assert_eq!(with, 0, "cloth_collision on");
    assert!(without > 0, "with the switch off the sheets fall through each other: {without}");
}
