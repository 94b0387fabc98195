//! `drape long --minutes M`: each shipped preset for many simulated minutes, sampled once a simulated
//! second: energy stays bounded, a resting cloth does not creep, draped cloth stays on its collider.

use bevy::prelude::*;
use serde::Serialize;

use drape::headless::{headless_app, report};
use drape::scene::desc::SceneDesc;
use drape::sim::SimClock;
use drape::sim::cloth::Particles;
use drape::sim::metrics;

/// What one preset did over a long run.
#[derive(Clone, Debug, Serialize)]
pub struct LongRun {
    /// The preset.
    pub preset: String,
    /// Simulated minutes.
    pub minutes: f32,
    /// Largest kinetic energy in the first and in the second half of the run, J.
    pub kinetic_energy_max: [f32; 2],
    /// How far the centre of all cloth moved between the end of the first minute and the end, m.
    pub drift_after_first_minute: f32,
    /// Largest |l/l0 − 1| at the end.
    pub max_stretch: f32,
    /// Smallest signed distance of a vertex to a collider over every sample, m (negative = inside).
    pub min_collider_distance: f32,
    /// Whether every sampled position was finite.
    pub finite: bool,
    /// Wall time of the run, s.
    pub wall_seconds: f64,
}

/// Runs `desc` for `minutes` simulated minutes.
pub fn long_run(desc: SceneDesc, minutes: f32) -> LongRun {
    let start = std::time::Instant::now();
    let name = desc.name.clone();
    let mut app = headless_app(desc);
    let mut run = LongRun {
        preset: name.clone(),
        minutes,
        kinetic_energy_max: [0.0; 2],
        drift_after_first_minute: 0.0,
        max_stretch: 0.0,
        min_collider_distance: f32::INFINITY,
        finite: true,
        wall_seconds: 0.0,
    };
    let end = f64::from(minutes) * 60.0;
    let (mut next_sample, mut after_first_minute) = (1.0, None);
    let mut frames = 0;
    loop {
        app.update();
        frames += 1;
        let now = app.world().resource::<SimClock>().time;
        if now < next_sample && now < end {
            continue;
        }
        next_sample += 1.0;
        let sample = report(app.world_mut(), &name, frames);
        let half = usize::from(now > end / 2.0);
        run.kinetic_energy_max[half] = run.kinetic_energy_max[half].max(sample.kinetic_energy);
        run.min_collider_distance = run.min_collider_distance.min(sample.min_collider_distance);
        run.finite &= sample.finite;
        run.max_stretch = sample.max_stretch;
        let center = cloth_center(app.world_mut());
        if now >= 60.0 && after_first_minute.is_none() {
            after_first_minute = Some(center);
        }
        if now >= end {
            run.drift_after_first_minute = after_first_minute.map_or(0.0, |c: Vec3| c.distance(center));
            break;
        }
    }
    run.wall_seconds = start.elapsed().as_secs_f64();
    run
}

/// Mean position of every cloth vertex.
fn cloth_center(world: &mut World) -> Vec3 {
    let (mut sum, mut count) = (Vec3::ZERO, 0);
    for particles in world.query::<&Particles>().iter(world) {
        sum += particles.x.iter().copied().sum::<Vec3>();
        count += particles.len();
    }
    if metrics::all_finite(&[sum]) { sum / count.max(1) as f32 } else { Vec3::NAN }
}
