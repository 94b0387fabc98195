//! Line (6), dampVelocities: the damping of §3.5, which damps each velocity's deviation from the cloth's rigid
//! motion (v_cm + ω × r_i) and leaves the rigid motion itself untouched.

use bevy::math::{Mat3, Vec3};

/// §3.5 lines (1)–(9) with coefficient `k` ∈ [0, 1] over all particles. Masses `mass` are the true masses
/// (pinned particles included, they are part of the body's motion); velocities of particles with w = 0 are
/// not changed.
pub fn damp_velocities(x: &[Vec3], v: &mut [Vec3], mass: &[f32], w: &[f32], k: f32) {
    if k <= 0.0 || x.is_empty() {
        return;
    }
    let total: f32 = mass.iter().sum();
    if total.is_nan() || total <= 0.0 {
        return;
    }
    // (1), (2)
    let (mut x_cm, mut v_cm) = (Vec3::ZERO, Vec3::ZERO);
    for ((x, v), m) in x.iter().zip(v.iter()).zip(mass) {
        x_cm += *x * *m;
        v_cm += *v * *m;
    }
    x_cm /= total;
    v_cm /= total;
    // (3), (4): L = Σ r × m v, I = Σ r̃ r̃ᵀ m = Σ m (|r|² 1 − r rᵀ)
    let mut angular = Vec3::ZERO;
    let mut inertia = Mat3::ZERO;
    for ((x, v), &m) in x.iter().zip(v.iter()).zip(mass) {
        let r = *x - x_cm;
        angular += r.cross(*v * m);
        inertia += (Mat3::IDENTITY * r.length_squared() - Mat3::from_cols(r * r.x, r * r.y, r * r.z)) * m;
    }
    // (5): ω = I⁻¹ L. A body with no extent (all particles on one point) has no rotation to keep.
    let omega = if inertia.determinant().abs() > 1e-12 * inertia.col(0).length().powi(3).max(f32::MIN_POSITIVE) {
        inertia.inverse() * angular
    } else {
        Vec3::ZERO
    };
    let omega = if omega.is_finite() { omega } else { Vec3::ZERO };
    // (6)–(9)
    for ((x, v), &w) in x.iter().zip(v.iter_mut()).zip(w) {
        if w > 0.0 {
            let dv = v_cm + omega.cross(*x - x_cm) - *v;
            *v += dv * k;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng, rngs::StdRng};

    fn cloud(n: usize, rng: &mut StdRng) -> (Vec<Vec3>, Vec<f32>) {
        let x = (0..n)
            .map(|_| Vec3::new(rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0), rng.random_range(-0.3..0.3)))
            .collect();
        let m = (0..n).map(|_| rng.random_range(0.1..2.0)).collect();
        (x, m)
    }

    fn momenta(x: &[Vec3], v: &[Vec3], m: &[f32]) -> (Vec3, Vec3) {
        let p = x.iter().zip(v).zip(m).map(|((_, v), m)| *v * *m).sum();
        let l = x.iter().zip(v).zip(m).map(|((x, v), m)| x.cross(*v * *m)).sum();
        (p, l)
    }

    #[test]
    fn full_damping_keeps_rigid_rotation_and_removes_relative_motion() {
        let mut rng = StdRng::seed_from_u64(7);
        let (x, m) = cloud(200, &mut rng);
        let w = vec![1.0; x.len()];
        let (v_lin, omega) = (Vec3::new(0.3, -0.2, 0.1), Vec3::new(0.5, 1.5, -0.7));
        let rigid: Vec<Vec3> = x.iter().map(|x| v_lin + omega.cross(*x)).collect();

        // A pure rigid motion is untouched.
        let mut v = rigid.clone();
        damp_velocities(&x, &mut v, &m, &w, 1.0);
        let err = v.iter().zip(&rigid).map(|(a, b)| a.distance(*b)).fold(0.0, f32::max);
        assert!(err < 1e-4, "rigid motion changed by {err} m/s");

        // Rigid motion plus noise: momenta are kept and what remains is rigid.
        let mut v: Vec<Vec3> = rigid
            .iter()
            .map(|r| {
                *r + Vec3::new(rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0))
            })
            .collect();
        let before = momenta(&x, &v, &m);
        damp_velocities(&x, &mut v, &m, &w, 1.0);
        let after = momenta(&x, &v, &m);
        assert!((before.0 - after.0).length() < 1e-3 && (before.1 - after.1).length() < 1e-3);
        // damping again changes nothing: the result is a rigid motion
        let once = v.clone();
        damp_velocities(&x, &mut v, &m, &w, 1.0);
        let err = v.iter().zip(&once).map(|(a, b)| a.distance(*b)).fold(0.0, f32::max);
        assert!(err < 1e-4, "relative motion left: {err} m/s");
    }

    #[test]
    fn partial_damping_shrinks_relative_motion_by_k() {
        let x = vec![Vec3::new(-1.0, 0.0, 0.0), Vec3::new(1.0, 0.0, 0.0), Vec3::new(0.0, 0.0, 1.0)];
        let m = vec![1.0; 3];
        // pure stretch of the x-axis pair: no rigid part
        let mut v = vec![Vec3::new(-1.0, 0.0, 0.0), Vec3::new(1.0, 0.0, 0.0), Vec3::ZERO];
        damp_velocities(&x, &mut v, &m, &[1.0; 3], 0.25);
        assert!((v[1].x - 0.75).abs() < 1e-5, "{v:?}");
    }

    #[test]
    fn degenerate_bodies_stay_finite() {
        let x = vec![Vec3::ONE; 4];
        let mut v = vec![Vec3::X, Vec3::Y, Vec3::Z, Vec3::ZERO];
        damp_velocities(&x, &mut v, &[1.0; 4], &[1.0; 4], 0.5);
        assert!(v.iter().all(|v| v.is_finite()));
    }
}
