//! Gusty wind for line (5): the mean wind of [`SimParams::wind`](super::SimParams) plus a random gust that
//! varies smoothly in time (an Ornstein–Uhlenbeck process, seeded, so a run is reproducible).

use bevy::prelude::*;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::{SimClock, SimParams};

/// Correlation time of gusts, seconds: how long a gust lasts.
pub const GUST_TIME: f32 = 1.5;

/// The wind the cloth feels in the current step.
#[derive(Resource, Clone, Debug)]
pub struct Wind {
    /// Current gust added to the mean wind, m/s.
    pub gust: Vec3,
    rng: SmallRng,
}

impl Wind {
    pub fn seeded(seed: u64) -> Self {
        Self { gust: Vec3::ZERO, rng: SmallRng::seed_from_u64(seed) }
    }

    /// Mean wind plus the current gust.
    pub fn velocity(&self, params: &SimParams) -> Vec3 {
        params.wind + self.gust
    }
}

impl Default for Wind {
    fn default() -> Self {
        Self::seeded(0)
    }
}

/// Advances a gust by `dt`: decays with [`GUST_TIME`] and is driven by `noise` (components of unit variance),
/// so its standard deviation per component stays `amplitude`.
pub fn next_gust(gust: Vec3, amplitude: f32, dt: f32, noise: Vec3) -> Vec3 {
    let decay = (-dt / GUST_TIME).exp();
    gust * decay + noise * (amplitude * (1.0 - decay * decay).sqrt())
}

/// Once per fixed step, before the substeps: a new gust.
pub fn update_gust(mut wind: ResMut<Wind>, params: Res<SimParams>, time: Res<Time<Fixed>>) {
    let dt = time.timestep().as_secs_f32();
    // uniform on [−√3, √3] has unit variance
    let s = 3f32.sqrt();
    let noise = Vec3::new(wind.rng.random_range(-s..s), wind.rng.random_range(-s..s), wind.rng.random_range(-s..s));
    wind.gust = next_gust(wind.gust, params.wind_gust, dt, noise);
}

/// The seed of the random gusts of the running scene.
#[derive(Resource, Clone, Copy, Debug, Default)]
pub struct GustSeed(pub u64);

/// Restarts the gusts (and their random sequence from the scene's seed) when a scene is loaded, so every run
/// is reproducible.
pub fn reset_gust_on_load(clock: Res<SimClock>, seed: Res<GustSeed>, mut wind: ResMut<Wind>) {
    if clock.is_changed() && clock.steps == 0 {
        *wind = Wind::seeded(seed.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gusts_keep_their_amplitude_and_vanish_without_one() {
        let mut rng = SmallRng::seed_from_u64(3);
        let s = 3f32.sqrt();
        let mut g = Vec3::ZERO;
        let mut sum_sq = 0.0;
        let n = 20_000;
        for _ in 0..n {
            let noise = Vec3::new(rng.random_range(-s..s), rng.random_range(-s..s), rng.random_range(-s..s));
            g = next_gust(g, 2.0, 1.0 / 60.0, noise);
            sum_sq += g.x * g.x;
        }
        let rms = (sum_sq / n as f32).sqrt();
        assert!((rms - 2.0).abs() < 0.4, "rms gust {rms} m/s");
        assert_eq!(next_gust(Vec3::ZERO, 0.0, 0.1, Vec3::ONE), Vec3::ZERO);
    }
}
