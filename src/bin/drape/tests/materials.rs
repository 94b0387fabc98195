//! The panel's material sliders edit one chosen cloth, or every cloth field by field: `bend_vs_stretch` (the
//! paper's Fig. 3) keeps its six materials.

use crate::ui::panel::edit_materials;
use bevy::prelude::*;
use drape::headless::headless_app;
use drape::scene::preset;
use drape::sim::cloth::{Attachments, Cloth, ClothMaterial, Particles};

/// Every cloth's name and material, in a stable order.
fn materials(app: &mut App) -> Vec<(String, ClothMaterial)> {
    let world = app.world_mut();
    let mut all: Vec<_> =
        world.query::<(&Cloth, &ClothMaterial)>().iter(world).map(|(c, m)| (c.name.clone(), *m)).collect();
    all.sort_by(|a, b| a.0.cmp(&b.0));
    all
}

/// Moves one slider from `before` to `after` on `target` (a cloth's name) or on every cloth.
fn edit(app: &mut App, target: Option<&str>, before: ClothMaterial, after: ClothMaterial) {
    let world = app.world_mut();
    let target = target.map(|name| {
        world.query::<(Entity, &Cloth)>().iter(world).find(|(_, c)| c.name == name).map(|(e, _)| e).unwrap()
    });
    let mut query = world.query::<(Entity, &mut Particles, &mut ClothMaterial, &Attachments)>();
    let cloths = query.iter_mut(world).map(|(e, p, m, a)| (e, p.into_inner(), m.into_inner(), a));
    edit_materials(cloths, target, before, after);
}

#[test]
fn editing_one_cloth_leaves_the_others_bit_identical() {
    let mut app = headless_app(preset::load("bend_vs_stretch").unwrap());
    let start = materials(&mut app);
    assert_eq!(start.len(), 6);
    let (name, before) = start[2].clone();
    let after = ClothMaterial { bend_stiffness: 0.9, ..before };
    edit(&mut app, Some(&name), before, after);
    let now = materials(&mut app);
    for (i, ((n0, m0), (n1, m1))) in start.iter().zip(&now).enumerate() {
        assert_eq!(n0, n1);
        let bits =
            |m: &ClothMaterial| [m.stretch_stiffness, m.bend_stiffness, m.density, m.thickness].map(f32::to_bits);
        if i == 2 {
            assert_eq!(*m1, after, "the edited cloth takes the new bending stiffness");
        } else {
            assert_eq!(bits(m0), bits(m1), "{n0} must not change");
        }
    }
}

#[test]
fn editing_all_cloths_sets_only_the_moved_field() {
    let mut app = headless_app(preset::load("bend_vs_stretch").unwrap());
    let start = materials(&mut app);
    let before = start[0].1;
    let after = ClothMaterial { density: before.density * 2.0, ..before };
    edit(&mut app, None, before, after);
    let now = materials(&mut app);
    for ((_, m0), (name, m1)) in start.iter().zip(&now) {
        assert_eq!(*m1, ClothMaterial { density: after.density, ..*m0 }, "{name}");
    }
    let distinct: Vec<(u32, u32)> =
        now.iter().map(|(_, m)| (m.stretch_stiffness.to_bits(), m.bend_stiffness.to_bits())).collect();
    let mut unique = distinct.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), 6, "Fig. 3's six (stretch, bend) pairs stay six");
}
