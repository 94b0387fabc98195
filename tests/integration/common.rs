//! Checks shared by the integration tests.

use bevy::prelude::*;
use drape::sim::cloth::{Particles, StretchConstraints};

/// A ball thrown with 2.5 kg·m/s along −z at a free sheet, without gravity: measures (cloth, bodies) momentum
/// with `momentum`, runs `app` one second, and asserts that the cloth took a real share and that ball + cloth
/// kept their linear momentum within 1 % (§4.2). `start_tolerance` bounds the start's difference from 2.5.
pub fn assert_catch_keeps_momentum(app: &mut App, momentum: impl Fn(&mut App) -> (Vec3, Vec3), start_tolerance: f32) {
    let (cloth0, body0) = momentum(app);
    let total0 = cloth0 + body0;
    assert!((total0 - Vec3::new(0.0, 0.0, -2.5)).length() < start_tolerance, "the ball's momentum: {total0}");
    for _ in 0..60 {
        app.update();
    }
    let (cloth, body) = momentum(app);
    // the ball hit the cloth and handed it a real share of its momentum...
    assert!(cloth.z < -0.5, "the cloth got only {cloth} kg·m/s");
    // ...and nothing was created or lost on the way
    let error = (cloth + body - total0).length() / total0.length();
    assert!(error < 0.01, "momentum {total0} → {} (cloth {cloth}, ball {body}): {:.3} %", cloth + body, error * 100.0);
}

/// The fastest vertex of every cloth in `world`, m/s.
pub fn fastest_vertex(world: &mut World) -> f32 {
    world.query::<&Particles>().iter(world).flat_map(|p| p.v.iter().map(|v| v.length())).fold(0.0, f32::max)
}

/// The largest ratio l/l0 of an edge of every cloth in `world`.
pub fn largest_edge(world: &mut World) -> f32 {
    let mut cloths = world.query::<(&Particles, &StretchConstraints)>();
    cloths
        .iter(world)
        .flat_map(|(p, s)| {
            s.edges().iter().zip(s.rest_length()).map(|([a, b], l0)| p.x[*a as usize].distance(p.x[*b as usize]) / l0)
        })
        .fold(0.0, f32::max)
}
