//! Gusty wind for line (5): the mean wind of [`SimParams::wind`](super::SimParams) plus a random gust that
//! varies smoothly in time (an Ornstein–Uhlenbeck process, seeded, so a run is reproducible). The gust's state
//! and its systems live in [`aerodynamics`](super::aerodynamics) ([`Wind`](super::aerodynamics::Wind)).

use bevy::math::Vec3;

/// Correlation time of gusts, seconds: how long a gust lasts.
pub const GUST_TIME: f32 = 1.5;

/// Advances a gust by `dt`: decays with [`GUST_TIME`] and is driven by `noise` (components of unit variance),
/// so its standard deviation per component stays `amplitude`.
pub fn next_gust(gust: Vec3, amplitude: f32, dt: f32, noise: Vec3) -> Vec3 {
    let decay = (-dt / GUST_TIME).exp();
    gust * decay + noise * (amplitude * (1.0 - decay * decay).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};

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
