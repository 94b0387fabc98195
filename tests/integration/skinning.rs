//! Cloth worn by an animated character (issue 52, the paper's Fig. 12 left; `drape::skinning`), with numbers:
//! the attached vertices are where the skin is at the cloth's clock and move at its speed, no vertex enters a
//! bone's capsule, and a teleport or a change of clip carries the cloth along without flinging it.

use bevy::prelude::*;
use drape::headless::headless_app;
use drape::scene::preset;
use drape::sim::SimClock;
use drape::sim::cloth::{Attachments, ClothCollider, Particles};
use drape::sim::constraints::attach::Motion;
use drape::skinning::{BoneCollider, ClothSkinning, SkinnedCharacter};

use crate::common::fastest_vertex;

/// For every attached vertex of every worn cloth: its distance from where the skin is now, posed afresh from the
/// character's clips at the cloth's clock, and its velocity's distance from the skin's over the last step.
fn attachment_errors(world: &mut World) -> (f32, f32, f32) {
    let clock = *world.resource::<SimClock>();
    let mut characters = world.query::<(Entity, &SkinnedCharacter)>();
    let poses: Vec<_> = characters
        .iter(world)
        .map(|(e, c)| (e, c.pose(clock.time), c.pose(clock.time - f64::from(clock.step_dt))))
        .collect();
    let (mut place, mut speed, mut fastest) = (0.0f32, 0.0f32, 0.0f32);
    for (skinning, particles, pins) in world.query::<(&ClothSkinning, &Particles, &Attachments)>().iter(world) {
        let (_, now, before) = poses.iter().find(|(e, ..)| *e == skinning.character).expect("its character");
        for pin in &pins.0 {
            let (i, bound) = (pin.vertex as usize, skinning.vertices[pin.vertex as usize]);
            let target = bound.influences.skin_point(&now.skin, bound.bind);
            let velocity = (target - bound.influences.skin_point(&before.skin, bound.bind)) / clock.step_dt;
            place = place.max(particles.x[i].distance(target));
            speed = speed.max(particles.v[i].distance(velocity));
            fastest = fastest.max(velocity.length());
        }
    }
    (place, speed, fastest)
}

#[test]
fn worn_cloth_follows_the_walking_skin_exactly_and_at_its_speed() {
    let mut app = headless_app(preset::load("character").unwrap());
    let (mut place, mut speed, mut fastest, mut top) = (0.0f32, 0.0f32, 0.0f32, 0.0f32);
    for _ in 0..600 {
        app.update();
        let (p, s, f) = attachment_errors(app.world_mut());
        (place, speed, fastest) = (place.max(p), speed.max(s), fastest.max(f));
        top = top.max(fastest_vertex(app.world_mut()));
    }
    assert!(top < 40.0, "a vertex moved at {top} m/s");
    assert!(fastest > 1.0, "the skin moved at most {fastest} m/s: nobody walked");
    assert!(place < 1e-3, "an attached vertex was {place} m from the skin");
    assert!(speed < 1e-2, "an attached vertex's velocity was {speed} m/s from the skin's");
    let mut reported = app.world_mut().query::<&ClothSkinning>();
    assert!(reported.iter(app.world()).all(|s| s.max_attachment_error < 1e-3));
}

#[test]
fn free_worn_vertices_stay_within_reach_of_the_skin() {
    // a short reach, which the swinging cape and skirt press against
    let mut desc = preset::load("character").unwrap();
    for cloth in &mut desc.cloths {
        if let Some(skinning) = &mut cloth.skinning {
            skinning.max_distance = 0.05;
        }
    }
    let mut app = headless_app(desc);
    let (mut farthest, mut reach) = (0.0f32, 0.0f32);
    for _ in 0..600 {
        app.update();
        let world = app.world_mut();
        for (skinning, particles) in world.query::<(&ClothSkinning, &Particles)>().iter(world) {
            // the targets at the end of the step, where the limits held the vertices before the collisions' push
            let off =
                particles.x.iter().zip(skinning.targets()).map(|(x, t)| x.distance(*t) / skinning.limits.max_distance);
            farthest = farthest.max(off.fold(0.0, f32::max));
            reach = reach.max(skinning.limits.max_distance);
        }
    }
    assert!(reach > 0.0, "no worn cloth");
    assert!(farthest < 1.01, "a free vertex strayed {farthest} times its max distance from the skin");
    assert!(farthest > 0.9, "the cloth never reached its limit ({farthest} of it): nothing was tested");
}

#[test]
fn no_worn_vertex_goes_more_than_two_millimetres_into_a_bone() {
    let mut app = headless_app(preset::load("character").unwrap());
    let mut deepest = 0.0f32;
    for _ in 0..600 {
        app.update();
        let world = app.world_mut();
        let bones: Vec<_> = world
            .query_filtered::<(&ClothCollider, &Transform), With<BoneCollider>>()
            .iter(world)
            .map(|(c, t)| c.shape.placed(t))
            .collect();
        assert!(bones.len() >= 13, "the walker's bones are colliders");
        for particles in world.query::<&Particles>().iter(world) {
            for x in &particles.x {
                for bone in &bones {
                    deepest = deepest.max(-bone.signed_distance(*x));
                }
            }
        }
    }
    assert!(deepest < 2e-3, "a cloth vertex was {deepest} m inside a bone");
}

/// Runs the character preset `frames` frames, calls `jump` on the world, and returns the fastest vertex and the
/// largest attachment error over the next second.
fn after_a_jump(frames: u32, jump: impl FnOnce(&mut World)) -> (f32, f32) {
    let mut app = headless_app(preset::load("character").unwrap());
    for _ in 0..frames {
        app.update();
    }
    let before = fastest_vertex(app.world_mut());
    jump(app.world_mut());
    let (mut fastest, mut error) = (0.0f32, 0.0f32);
    for _ in 0..60 {
        app.update();
        fastest = fastest.max(fastest_vertex(app.world_mut()));
        error = error.max(attachment_errors(app.world_mut()).0);
    }
    assert!(before > 0.5, "the cloth was still ({before} m/s) before the jump");
    (fastest, error)
}

#[test]
fn a_teleported_character_carries_its_cloth_without_flinging_it() {
    let (fastest, error) = after_a_jump(120, |world| {
        let offset = Vec3::new(6.0, 0.0, -4.0);
        for mut character in world.query::<&mut SkinnedCharacter>().iter_mut(world) {
            // the walk round its circle goes on, round a circle moved as far
            character.start.translation += offset;
            if let Motion::Rotate { center, .. } = &mut character.motion {
                *center += offset;
            }
        }
    });
    assert!(fastest < 4.0, "the cloth was flung at {fastest} m/s");
    assert!(error < 1e-3, "an attached vertex was {error} m from the skin after the teleport");
}

#[test]
fn a_change_of_clip_cross_fades_the_cloth_along() {
    let (fastest, error) = after_a_jump(120, |world| {
        let now = world.resource::<SimClock>().time;
        for mut character in world.query::<&mut SkinnedCharacter>().iter_mut(world) {
            let idle = character.model.clip("idle").expect("the walker idles");
            character.play(idle, now);
        }
    });
    assert!(fastest < 4.0, "the cloth was flung at {fastest} m/s");
    assert!(error < 1e-3, "an attached vertex was {error} m from the skin during the cross-fade");
}
