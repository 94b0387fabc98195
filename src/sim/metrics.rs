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

/// Kinetic plus potential energy Σ ½ m v² + m |g| (h − `floor`) of particles at `x` with velocities `v` and masses
/// `mass` under `gravity`, h the height along −g, joules.
pub fn mechanical_energy(x: &[Vec3], v: &[Vec3], mass: &[f32], gravity: Vec3, floor: f32) -> f32 {
    let g = gravity.length();
    let up = -gravity.normalize_or_zero();
    kinetic_energy(v, mass) + x.iter().zip(mass).map(|(x, m)| m * g * (x.dot(up) - floor)).sum::<f32>()
}

/// FNV-1a (64 bit) over the bits of every position and velocity, in order: equal hashes mean the same state to
/// the last bit, so a refactor that claims to keep the physics can prove it.
pub fn state_hash(x: &[Vec3], v: &[Vec3]) -> u64 {
    fnv1a_fold(FNV_OFFSET, x.iter().chain(v).flat_map(|p| p.to_array()).flat_map(|c| c.to_bits().to_le_bytes()))
}

/// FNV-1a (64 bit) of `bytes`.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    fnv1a_fold(FNV_OFFSET, bytes.iter().copied())
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

fn fnv1a_fold(hash: u64, bytes: impl Iterator<Item = u8>) -> u64 {
    bytes.fold(hash, |h, byte| (h ^ byte as u64).wrapping_mul(0x0000_0100_0000_01b3))
}

/// The box `[min, max]` around the points `x`, component by component; `None` for no points.
pub fn bounds(x: &[Vec3]) -> Option<[Vec3; 2]> {
    let first = *x.first()?;
    Some(x.iter().fold([first, first], |[lo, hi], p| [lo.min(*p), hi.max(*p)]))
}

/// The largest speed |v| in m/s (0 for no velocities).
pub fn max_speed(v: &[Vec3]) -> f32 {
    v.iter().map(|v| v.length()).fold(0.0, f32::max)
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
        // 8 J moving, 2 kg 1.5 m and 3 kg 0.5 m above a floor at y = 0.5 under g = 10
        let (x, v) = ([Vec3::Y * 2.0, Vec3::ONE], [Vec3::X * 2.0, Vec3::Y]);
        let e = mechanical_energy(&x, &v, &[3.0, 4.0], Vec3::NEG_Y * 10.0, 0.5);
        assert!((e - (8.0 + 3.0 * 10.0 * 1.5 + 4.0 * 10.0 * 0.5)).abs() < 1e-4, "{e}");
        assert_eq!(max_speed(&[Vec3::X * 2.0, Vec3::new(0.0, 3.0, 4.0)]), 5.0);
        assert_eq!(
            bounds(&[Vec3::new(1.0, -2.0, 3.0), Vec3::new(-1.0, 5.0, 0.0)]),
            Some([Vec3::new(-1.0, -2.0, 0.0), Vec3::new(1.0, 5.0, 3.0)])
        );
        assert_eq!(bounds(&[]), None);
        assert!(!all_finite(&[Vec3::ZERO, Vec3::new(f32::NAN, 0.0, 0.0)]));
    }

    #[test]
    fn state_hash_sees_every_bit() {
        let x = [Vec3::ZERO, Vec3::X];
        let v = [Vec3::Y, Vec3::ZERO];
        // FNV-1a of no bytes is its offset basis
        assert_eq!(state_hash(&[], &[]), 0xcbf2_9ce4_8422_2325);
        let h = state_hash(&x, &v);
        assert_eq!(h, state_hash(&x, &v));
        let nudged = Vec3::new(f32::from_bits(1.0f32.to_bits() + 1), 0.0, 0.0);
        assert_ne!(h, state_hash(&[Vec3::ZERO, nudged], &v));
        assert_ne!(h, state_hash(&x, &[Vec3::ZERO, Vec3::Y]));
    }
}
