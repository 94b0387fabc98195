//! Measurements of a cloth's state used by tests, the headless report and the panel.

use bevy::math::Vec3;

/// max over stretch constraints of |l/l0 − 1| for positions `x`.
pub fn max_stretch(x: &[Vec3], edges: &[[u32; 2]], rest: &[f32]) -> f32 {
    edges
        .iter()
        .zip(rest)
        .filter(|(_, l0)| **l0 > 0.0)
        .map(|(&[a, b], &l0)| (x[a as usize].distance(x[b as usize]) / l0 - 1.0).abs())
        .fold(0.0, f32::max)
}

/// Kinetic energy ½ Σ m v² in joules.
pub fn kinetic_energy(v: &[Vec3], mass: &[f32]) -> f32 {
    0.5 * v.iter().zip(mass).map(|(v, m)| m * v.length_squared()).sum::<f32>()
}

/// Whether every position is finite.
pub fn all_finite(x: &[Vec3]) -> bool {
    x.iter().all(|p| p.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stretch_and_energy_of_known_states() {
        let x = [Vec3::ZERO, Vec3::X * 1.5, Vec3::new(1.5, 0.9, 0.0)];
        assert!((max_stretch(&x, &[[0, 1], [1, 2]], &[1.0, 1.0]) - 0.5).abs() < 1e-6);
        assert!((kinetic_energy(&[Vec3::X * 2.0, Vec3::Y], &[3.0, 4.0]) - 8.0).abs() < 1e-6);
        assert!(!all_finite(&[Vec3::ZERO, Vec3::new(f32::NAN, 0.0, 0.0)]));
    }
}
