//! Line (6), dampVelocities: the damping of §3.5, which damps each velocity's deviation from the cloth's rigid
//! motion (v_cm + ω × r_i) and leaves the rigid motion itself untouched.

use std::sync::Mutex;

use bevy::math::{Mat3, Vec3};

use super::parallel::{SHARED_VERTICES_FROM, VERTEX_SLICES as SLICES, VertexSlices, run_phased, vertex_slice};

/// One slice's sums: mass, Σ m x and Σ m v (lines 1–2), then L = Σ r × m v and I = Σ m (|r|² 1 − r rᵀ)
/// (lines 3–4).
#[derive(Clone, Copy)]
struct Sums {
    mass: f32,
    moment: Vec3,
    momentum: Vec3,
    angular: Vec3,
    inertia: Mat3,
}

impl Default for Sums {
    /// All zero (`Mat3`'s own default is the identity).
    fn default() -> Self {
        Self { mass: 0.0, moment: Vec3::ZERO, momentum: Vec3::ZERO, angular: Vec3::ZERO, inertia: Mat3::ZERO }
    }
}

/// §3.5 lines (1)–(9) with coefficient `damping` (k_damping) ∈ [0, 1] over all particles. Masses `mass` are the true masses
/// (pinned particles included, they are part of the body's motion); velocities of particles with w = 0 are
/// not changed. The three passes (centre of mass and momentum; angular momentum and inertia; the update) run
/// over the slices of a large cloth's particles (`parallel::vertex_slice`), shared by the compute pool's
/// threads when `parallel`; each slice reduces the sums of the previous pass itself, in slice order.
pub fn damp_velocities(x: &[Vec3], v: &mut [Vec3], mass: &[f32], w: &[f32], damping: f32, parallel: bool) {
    let n = x.len().min(v.len()).min(mass.len()).min(w.len());
    if damping <= 0.0 || n == 0 {
        return;
    }
    // a small cloth is one slice (the others empty): the sums then come out exactly as in one loop
    let velocities = VertexSlices::new(v, n);
    let sums: [Mutex<Sums>; SLICES] = Default::default();
    let total = |sums: &[Mutex<Sums>; SLICES]| {
        sums.iter().filter_map(|s| s.lock().ok().map(|s| *s)).fold(Sums::default(), |a, b| Sums {
            mass: a.mass + b.mass,
            moment: a.moment + b.moment,
            momentum: a.momentum + b.momentum,
            angular: a.angular + b.angular,
            inertia: a.inertia + b.inertia,
        })
    };
    // the centre of mass and its velocity, or None for a massless cloth
    let centre = |t: &Sums| (t.mass.is_finite() && t.mass > 0.0).then(|| (t.moment / t.mass, t.momentum / t.mass));
    const PHASES: [u32; 3 * SLICES] = {
        let mut starts = [0; 3 * SLICES];
        let mut j = 0;
        while j < 3 * SLICES {
            starts[j] = (j / SLICES * SLICES) as u32;
            j += 1;
        }
        starts
    };
    run_phased(&PHASES, 1, parallel && n >= SHARED_VERTICES_FROM, |j| {
        let (pass, s) = (j / SLICES, j % SLICES);
        let range = vertex_slice(n, s);
        if range.is_empty() {
            return;
        }
        let (Some(mut v), Ok(mut own)) = (velocities.lock(s), sums[s].lock()) else { return };
        let (x, mass, w) = (&x[range.clone()], &mass[range.clone()], &w[range]);
        match pass {
            // (1), (2)
            0 => {
                for ((x, v), m) in x.iter().zip(v.iter()).zip(mass) {
                    own.mass += *m;
                    own.moment += *x * *m;
                    own.momentum += *v * *m;
                }
            }
            // (3), (4): L = Σ r × m v, I = Σ r̃ r̃ᵀ m = Σ m (|r|² 1 − r rᵀ)
            1 => {
                drop(own);
                let Some((x_cm, _)) = centre(&total(&sums)) else { return };
                let (mut angular, mut inertia) = (Vec3::ZERO, Mat3::ZERO);
                for ((x, v), &m) in x.iter().zip(v.iter()).zip(mass) {
                    let r = *x - x_cm;
                    angular += r.cross(*v * m);
                    inertia += (Mat3::IDENTITY * r.length_squared() - Mat3::from_cols(r * r.x, r * r.y, r * r.z)) * m;
                }
                if let Ok(mut own) = sums[s].lock() {
                    (own.angular, own.inertia) = (angular, inertia);
                }
            }
            // (5)–(9)
            _ => {
                drop(own);
                let t = total(&sums);
                let Some((x_cm, v_cm)) = centre(&t) else { return };
                let omega = rotation(t.inertia, t.angular);
                for ((x, v), &w) in x.iter().zip(v.iter_mut()).zip(w) {
                    if w > 0.0 {
                        let dv = v_cm + omega.cross(*x - x_cm) - *v;
                        *v += dv * damping;
                    }
                }
            }
        }
    });
}

/// (5): ω = I⁻¹ L. A body with no extent (all particles on one point) has no rotation to keep.
fn rotation(inertia: Mat3, angular: Vec3) -> Vec3 {
    let omega = if inertia.determinant().abs() > 1e-12 * inertia.col(0).length().powi(3).max(f32::MIN_POSITIVE) {
        inertia.inverse() * angular
    } else {
        Vec3::ZERO
    };
    if omega.is_finite() { omega } else { Vec3::ZERO }
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
        damp_velocities(&x, &mut v, &m, &w, 1.0, false);
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
        damp_velocities(&x, &mut v, &m, &w, 1.0, false);
        let after = momenta(&x, &v, &m);
        assert!((before.0 - after.0).length() < 1e-3 && (before.1 - after.1).length() < 1e-3);
        // damping again changes nothing: the result is a rigid motion
        let once = v.clone();
        damp_velocities(&x, &mut v, &m, &w, 1.0, false);
        let err = v.iter().zip(&once).map(|(a, b)| a.distance(*b)).fold(0.0, f32::max);
        assert!(err < 1e-4, "relative motion left: {err} m/s");
    }

    #[test]
    fn partial_damping_shrinks_relative_motion_by_k() {
        let x = vec![Vec3::new(-1.0, 0.0, 0.0), Vec3::new(1.0, 0.0, 0.0), Vec3::new(0.0, 0.0, 1.0)];
        let m = vec![1.0; 3];
        // pure stretch of the x-axis pair: no rigid part
        let mut v = vec![Vec3::new(-1.0, 0.0, 0.0), Vec3::new(1.0, 0.0, 0.0), Vec3::ZERO];
        damp_velocities(&x, &mut v, &m, &[1.0; 3], 0.25, false);
        assert!((v[1].x - 0.75).abs() < 1e-5, "{v:?}");
    }

    #[test]
    fn threads_give_the_same_bits() {
        bevy::tasks::ComputeTaskPool::get_or_init(|| bevy::tasks::TaskPoolBuilder::new().num_threads(2).build());
        let mut rng = StdRng::seed_from_u64(11);
        let (x, m) = cloud(SHARED_VERTICES_FROM + 77, &mut rng);
        let w: Vec<f32> = (0..x.len()).map(|i| if i % 50 == 0 { 0.0 } else { 1.0 }).collect();
        let v0: Vec<Vec3> = (0..x.len()).map(|_| Vec3::new(rng.random_range(-1.0..1.0), 0.5, 0.0)).collect();
        let (mut one, mut two) = (v0.clone(), v0.clone());
        damp_velocities(&x, &mut one, &m, &w, 0.3, false);
        damp_velocities(&x, &mut two, &m, &w, 0.3, true);
        assert_eq!(one, two);
        assert!(one.iter().zip(&v0).zip(&w).all(|((a, b), &w)| (w == 0.0) == (a == b)), "pinned moved or free kept");
    }

    #[test]
    fn degenerate_bodies_stay_finite() {
        let x = vec![Vec3::ONE; 4];
        let mut v = vec![Vec3::X, Vec3::Y, Vec3::Z, Vec3::ZERO];
        damp_velocities(&x, &mut v, &[1.0; 4], &[1.0; 4], 0.5, false);
        assert!(v.iter().all(|v| v.is_finite()));
    }
}
