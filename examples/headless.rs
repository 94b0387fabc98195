//! No window, no GPU: a sheet falls onto a sphere for a few seconds of simulated time; prints its lowest point
//! and kinetic energy. `cargo test` runs the test below, which checks the numbers.
//!
//! `cargo run --release --example headless -- 300`

use std::time::Duration;

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use drape::prelude::*;

const SPHERE_RADIUS: f32 = 0.5;

/// Where the sheet ended up after `steps` cloth steps.
struct Outcome {
    lowest: f32,
    highest: f32,
    kinetic_energy: f32,
    /// Smallest distance of any vertex from the sphere's centre, metres.
    closest_to_centre: f32,
}

fn simulate(steps: u32) -> Outcome {
    let mut app = App::new();
    // one cloth step (1/60 s, the default rate) per update, whatever the real time
    app.add_plugins((MinimalPlugins, ClothSimPlugin::new(Update)))
        .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(1.0 / 60.0)));
    let sheet = ClothBuilder::grid(30, 30, Vec2::splat(1.6))
        .placed(Transform::from_xyz(0.0, 0.8, 0.0))
        .build()
        .expect("a grid is valid cloth");
    app.world_mut().spawn(sheet);
    app.world_mut().spawn((ClothCollider::new(Sphere::new(SPHERE_RADIUS).into()), Transform::default()));
    for _ in 0..=steps {
        app.update(); // the first update has no elapsed time, so runs no step
    }
    let world = app.world_mut();
    let particles = world.query::<&Particles>().single(world).expect("one cloth");
    let heights = particles.x.iter().map(|x| x.y);
    Outcome {
        lowest: heights.clone().fold(f32::INFINITY, f32::min),
        highest: heights.fold(f32::NEG_INFINITY, f32::max),
        kinetic_energy: 0.5 * particles.v.iter().zip(&particles.mass).map(|(v, m)| m * v.length_squared()).sum::<f32>(),
        closest_to_centre: particles.x.iter().map(|x| x.length()).fold(f32::INFINITY, f32::min),
    }
}

fn main() {
    let steps = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(300);
    let outcome = simulate(steps);
    println!("after {steps} steps ({:.2} s):", steps as f32 / 60.0);
    println!("  lowest point   {:.3} m (sphere: centre at 0, radius {SPHERE_RADIUS} m)", outcome.lowest);
    println!("  highest point  {:.3} m", outcome.highest);
    println!("  nearest to the sphere's centre {:.3} m", outcome.closest_to_centre);
    println!("  kinetic energy {:.5} J", outcome.kinetic_energy);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sheet_drapes_over_the_sphere_and_comes_to_rest() {
        let outcome = simulate(300);
        // resting on top: the highest vertex lies on the sphere's top, within the cloth's thickness (1 cm)
        assert!((outcome.highest - SPHERE_RADIUS).abs() < 0.03, "highest {}", outcome.highest);
        // never inside the sphere by more than the collision margin
        assert!(outcome.closest_to_centre > SPHERE_RADIUS - 0.005, "inside: {}", outcome.closest_to_centre);
        // the sides hang well below the equator, the corners within their reach (0.8 m of cloth from the top)
        assert!(outcome.lowest < -0.1 && outcome.lowest > -0.8, "lowest {}", outcome.lowest);
        assert!(outcome.kinetic_energy < 0.05, "still moving: {} J", outcome.kinetic_energy);
    }
}
