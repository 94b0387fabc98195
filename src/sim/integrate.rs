//! The explicit parts of the loop (§3.1): external forces in line (5), the prediction of line (7), and the
//! velocity and position update of lines (12)–(15).

use bevy::math::Vec3;

use std::sync::atomic::{AtomicU32, Ordering};

use super::constraints::access::{ParticleAccess, SharedParticles, Slices};
use super::parallel::{ColorChunks, VertexSlices, for_each_vertex_slice};

/// Line (5) for gravity: v_i ← v_i + Δt g for every particle with w_i > 0 (f_ext = m g, so w f_ext = g).
/// Without a branch per particle, so the loop vectorises; a large cloth's slices shared by the compute pool's
/// threads when `parallel`.
pub(crate) fn apply_gravity(v: &mut [Vec3], w: &[f32], gravity: Vec3, dt: f32, parallel: bool) {
    let dv = gravity * dt;
    let n = v.len().min(w.len());
    let velocities = VertexSlices::new(v, n);
    for_each_vertex_slice(n, parallel, |s, range| {
        let Some(mut v) = velocities.lock(s) else { return };
        for (v, &w) in v.iter_mut().zip(&w[range]) {
            *v += dv * f32::from(u8::from(w > 0.0));
        }
    });
}

/// Largest fraction of a triangle's relative normal velocity one corner may lose to drag in one step.
const MAX_DRAG_GAIN: f32 = 0.1;

/// Line (5) for air: each triangle feels f = c · A · ((v_air − v_tri)·n) n, with A its area, n its unit normal
/// and v_tri the mean velocity of its corners; a third of f goes to each corner as Δv = Δt w f / 3. With
/// `wind` = 0 this is air resistance, otherwise it also pushes the cloth. The per-corner gain is capped so
/// that no drag, however large, can reverse the relative velocity in one step. Triangle after triangle, in
/// array order.
pub(crate) fn apply_aerodynamics(
    x: &[Vec3],
    v: &mut [Vec3],
    w: &[f32],
    triangles: &[[u32; 3]],
    wind: Vec3,
    drag: f32,
    dt: f32,
) {
    if drag > 0.0 {
        let mut velocities = Slices { p: v, w };
        for &tri in triangles {
            air_on_triangle(x, &mut velocities, tri, wind, drag, dt);
        }
    }
}

/// [`apply_aerodynamics`] over a cloth mesh's `triangles`, stored grouped by colour as `chunks` say (no two
/// triangles of one colour share a vertex): colour after colour, each colour's chunks shared by the compute
/// pool's threads when `parallel`. The result does not depend on the thread count. If the colour chunks do not
/// cover the triangles, they are taken one after another instead.
pub(crate) fn apply_aerodynamics_by_color(
    x: &[Vec3],
    v: &mut [Vec3],
    w: &[f32],
    (triangles, chunks): (&[[u32; 3]], &ColorChunks),
    (wind, drag, dt): (Vec3, f32, f32),
    parallel: bool,
) {
    if drag <= 0.0 {
        return;
    }
    if !chunks.covers(triangles.len()) || v.len() != x.len() {
        apply_aerodynamics(x, v, w, triangles, wind, drag, dt);
        return;
    }
    // SAFETY: every index reaching the view is checked below v.len() (`air_on_triangle`), chunks running at
    // the same time belong to one colour, whose triangles share no vertex, and `v` is borrowed mutably here.
    let Some(velocities) = (unsafe { SharedParticles::new(v, w) }) else {
        return;
    };
    chunks.run(parallel, |range| {
        let mut velocities = velocities;
        for &tri in &triangles[range] {
            air_on_triangle(x, &mut velocities, tri, wind, drag, dt);
        }
    });
}

/// The air on one triangle (see [`apply_aerodynamics`]); `velocities` holds v_i and w_i. A triangle with an
/// index out of range is skipped.
#[inline(always)]
fn air_on_triangle(x: &[Vec3], velocities: &mut impl ParticleAccess, tri: [u32; 3], wind: Vec3, drag: f32, dt: f32) {
    let [a, b, c] = tri.map(|i| i as usize);
    let n = velocities.len().min(x.len());
    if a >= n || b >= n || c >= n {
        return;
    }
    let twice_area_normal = (x[b] - x[a]).cross(x[c] - x[a]);
    let twice_area = twice_area_normal.length();
    if twice_area <= f32::MIN_POSITIVE {
        return;
    }
    let normal = twice_area_normal / twice_area;
    let relative = (wind - (velocities.p(a) + velocities.p(b) + velocities.p(c)) / 3.0).dot(normal);
    let area = 0.5 * twice_area;
    for i in [a, b, c] {
        let w = velocities.w(i);
        if w > 0.0 {
            let gain = (w * drag * area * dt / 3.0).min(MAX_DRAG_GAIN);
            velocities.shift(i, normal * (relative * gain));
        }
    }
}

/// Line (7): p_i ← x_i + Δt v_i. Computed on the flat coordinate arrays, so the loop runs on packed
/// arithmetic instead of shuffling 12-byte points; a large cloth's slices shared by the compute pool's threads
/// when `parallel`. Returns the largest magnitude of a predicted coordinate (its bits' maximum, which packs as
/// well and does not depend on the slices; infinite or NaN if one is).
pub fn predict(x: &[Vec3], v: &[Vec3], p: &mut [Vec3], dt: f32, parallel: bool) -> f32 {
    let n = x.len().min(v.len()).min(p.len());
    let predictions = VertexSlices::new(p, n);
    let largest = AtomicU32::new(0);
    for_each_vertex_slice(n, parallel, |s, range| {
        let Some(mut p) = predictions.lock(s) else { return };
        let (x, v): (&[f32], &[f32]) = (bytemuck::cast_slice(&x[range.clone()]), bytemuck::cast_slice(&v[range]));
        let mut own = 0u32;
        for ((p, x), v) in bytemuck::cast_slice_mut::<_, f32>(&mut p).iter_mut().zip(x).zip(v) {
            *p = x + v * dt;
            own = own.max(p.to_bits() & !SIGN_BIT);
        }
        largest.fetch_max(own, Ordering::Relaxed);
    });
    f32::from_bits(largest.into_inner())
}

/// The sign bit of an `f32`.
const SIGN_BIT: u32 = 1 << 31;

/// The positions' rounding steps within which a constraint counts as met ([`rounding_tolerance`]).
const ROUNDING_STEPS: f32 = 8.0;

/// How far from met a stretch or bending constraint of a cloth whose coordinates are at most `largest` in
/// magnitude may be and still be left alone, metres: eight rounding steps of its coordinates. Its residual is then
/// rounding's own, and the many passes of a stiff cloth turned the roundings of its corrections into motion: a
/// rigid 12-vertex shell falling from 2 m at 114 iterations × 64 substeps gained 47 % of its energy within 1 s, none
/// at the origin, where the coordinates round finer (docs/solvers.md). 0 (every constraint corrected) when a
/// coordinate is not finite.
pub fn rounding_tolerance(largest: f32) -> f32 {
    if largest.is_finite() { ROUNDING_STEPS * f32::EPSILON * largest } else { 0.0 }
}

/// No particle moves faster than this, m/s: a safety net against extreme settings (one iteration of one
/// substep on a large cloth, absurd forces), far above anything cloth does in normal use.
pub const MAX_SPEED: f32 = 60.0;

/// Lines (12)–(15): v_i ← (p_i − x_i)/Δt, x_i ← p_i, computed as v_i + (p_i − (x_i + Δt v_i))/Δt: the same
/// velocity, but line (7)'s prediction is subtracted as [`predict`] rounded it, so a particle no constraint moved
/// keeps its velocity exactly: taken from positions alone, the velocity is a whole number of the position's
/// rounding steps per Δt, and far from the origin at small Δt gravity came out rounded (docs/solvers.md).
/// Speeds are capped at [`MAX_SPEED`]: a free particle
/// (w > 0) faster than that moves only MAX_SPEED · Δt toward p_i, so no projection can throw it further in one
/// substep; an attached one (w = 0) still lands on its target. A prediction whose velocity is not finite (a NaN
/// or infinite p_i) is discarded (the particle stays at x_i, at rest) so NaN can never spread. Returns how many
/// free particles' moves the cap shortened or discarded: the cap is a safety net, and a count above zero is an
/// alarm (`CappedMoves`). A large cloth's slices are shared by the compute pool's threads when `parallel`.
pub(crate) fn update_velocities(x: &mut [Vec3], p: &[Vec3], v: &mut [Vec3], w: &[f32], dt: f32, parallel: bool) -> u32 {
    let n = x.len().min(p.len()).min(v.len()).min(w.len());
    let (positions, velocities) = (VertexSlices::new(x, n), VertexSlices::new(v, n));
    let capped = AtomicU32::new(0);
    for_each_vertex_slice(n, parallel, |s, range| {
        let (Some(mut x), Some(mut v)) = (positions.lock(s), velocities.lock(s)) else { return };
        let own = update_slice(&mut x, &p[range.clone()], &mut v, &w[range], dt);
        capped.fetch_add(own, Ordering::Relaxed);
    });
    capped.into_inner()
}

/// [`update_velocities`] on one slice of equally long arrays.
fn update_slice(x: &mut [Vec3], p: &[Vec3], v: &mut [Vec3], w: &[f32], dt: f32) -> u32 {
    let inv_dt = 1.0 / dt;
    // on the flat coordinate arrays first, as in `predict`: packed arithmetic for every particle
    let (flat_x, flat_p): (&[f32], &[f32]) = (bytemuck::cast_slice(x), bytemuck::cast_slice(p));
    for ((v, x), p) in bytemuck::cast_slice_mut::<_, f32>(v).iter_mut().zip(flat_x).zip(flat_p) {
        let predicted = x + *v * dt;
        *v += (p - predicted) * inv_dt;
    }
    let max_squared = MAX_SPEED * MAX_SPEED;
    let mut capped = 0;
    // runs of particles all below the cap (nearly always all of them) move by one copy
    let runs = x.chunks_mut(SPEED_RUN).zip(p.chunks(SPEED_RUN)).zip(v.chunks_mut(SPEED_RUN)).zip(w.chunks(SPEED_RUN));
    for (((x, p), v), w) in runs {
        // (a NaN speed fails the comparison and takes the careful way)
        if v.iter().all(|v| v.length_squared() <= max_squared) {
            x.copy_from_slice(p);
        } else {
            capped += cap_speeds(x, p, v, w, dt);
        }
    }
    capped
}

/// Particles per run of [`update_velocities`]' check.
const SPEED_RUN: usize = 16;

/// The speed cap of [`update_velocities`] for the particles `x` with predictions `p` and velocities
/// v = (p − x)/Δt: moves each to p, or no farther than the cap allows. Returns how many free particles it capped.
fn cap_speeds(x: &mut [Vec3], p: &[Vec3], v: &mut [Vec3], w: &[f32], dt: f32) -> u32 {
    let max_squared = MAX_SPEED * MAX_SPEED;
    let mut capped = 0;
    for (((x, p), v), w) in x.iter_mut().zip(p).zip(v.iter_mut()).zip(w) {
        let speed_squared = v.length_squared();
        if speed_squared <= max_squared {
            *x = *p;
            continue;
        }
        capped += u32::from(*w > 0.0);
        if speed_squared.is_finite() {
            *v *= MAX_SPEED / speed_squared.sqrt();
            *x = if *w > 0.0 { *x + *v * dt } else { *p };
        } else {
            *v = Vec3::ZERO;
        }
    }
    capped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_fall_matches_symplectic_euler() {
        let (mut x, mut v, mut p) = (vec![Vec3::ZERO], vec![Vec3::ZERO], vec![Vec3::ZERO]);
        let (g, dt) = (Vec3::new(0.0, -10.0, 0.0), 0.01);
        for _ in 0..100 {
            apply_gravity(&mut v, &[1.0], g, dt, false);
            predict(&x, &v, &mut p, dt, false);
            update_velocities(&mut x, &p, &mut v, &[1.0], dt, false);
        }
        assert!((v[0].y + 10.0).abs() < 1e-3, "{}", v[0].y);
        // Σ_{k=1..100} k·g·dt² = 5050 · 10 · 1e-4
        assert!((x[0].y + 5.05).abs() < 1e-3, "{}", x[0].y);
    }

    #[test]
    fn free_fall_keeps_gravitys_acceleration_far_from_the_origin() {
        // 240 Hz × 20 substeps, 2.7 m up: a rounding step of 2.4e-7 m is 1.1 mm/s of velocity per substep
        let (mut x, mut v, mut p) = (vec![Vec3::new(0.0, 2.7, 0.0)], vec![Vec3::ZERO], vec![Vec3::ZERO]);
        let (g, dt) = (Vec3::new(0.0, -9.81, 0.0), 1.0 / 4800.0);
        for _ in 0..960 {
            apply_gravity(&mut v, &[1.0], g, dt, false);
            predict(&x, &v, &mut p, dt, false);
            update_velocities(&mut x, &p, &mut v, &[1.0], dt, false);
        }
        // 0.2 s: v = −1.962 m/s, fallen Σ_{k=1..960} k g Δt² = 0.19640 m
        assert!((v[0].y + 1.962).abs() < 1e-4, "{}", v[0].y);
        assert!((x[0].y - (2.7 - 0.19640)).abs() < 2e-5, "{}", x[0].y);
    }

    #[test]
    fn velocity_update_caps_speed_and_travel_and_discards_non_finite_predictions() {
        let mut x = vec![Vec3::ZERO, Vec3::ONE, Vec3::ZERO];
        let mut v = vec![Vec3::ZERO; 3];
        let far = Vec3::new(100.0, 0.0, 0.0);
        let capped = update_velocities(&mut x, &[far, Vec3::NAN, far], &mut v, &[1.0, 1.0, 0.0], 0.01, false);
        assert_eq!(capped, 2, "the free particles' moves were shortened or discarded; the pinned one's was not");
        assert!((v[0].length() - MAX_SPEED).abs() < 1e-3);
        assert!((x[0].x - MAX_SPEED * 0.01).abs() < 1e-5, "a free particle moves at the capped speed");
        assert_eq!((x[1], v[1]), (Vec3::ONE, Vec3::ZERO));
        assert_eq!(x[2], far, "an attached particle stays on its target");
    }

    #[test]
    fn a_non_finite_prediction_among_slow_particles_is_discarded() {
        for bad in [Vec3::NAN, Vec3::INFINITY] {
            let mut x: Vec<Vec3> = (0..40).map(|i| Vec3::X * i as f32).collect();
            let mut p: Vec<Vec3> = x.iter().map(|x| *x + Vec3::Y * 0.001).collect();
            p[21] = bad;
            let mut v = vec![Vec3::ZERO; 40];
            assert_eq!(update_velocities(&mut x, &p, &mut v, &[1.0; 40], 0.01, false), 1);
            assert_eq!((x[21], v[21]), (Vec3::X * 21.0, Vec3::ZERO), "the particle stays, at rest");
            assert!(x.iter().zip(&p).enumerate().all(|(i, (x, p))| i == 21 || x == p), "the others move to p");
            assert!((v[20].y - 0.1).abs() < 1e-4);
        }
    }

    #[test]
    fn the_sliced_stages_give_the_same_bits_on_any_thread_count() {
        use rand::{Rng, SeedableRng, rngs::StdRng};
        bevy::tasks::ComputeTaskPool::get_or_init(|| bevy::tasks::TaskPoolBuilder::new().num_threads(2).build());
        let mut rng = StdRng::seed_from_u64(5);
        let n = crate::sim::parallel::SHARED_VERTICES_FROM + 333;
        let mut point = |scale: f32| Vec3::new(rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0), 0.5) * scale;
        let x0: Vec<Vec3> = (0..n).map(|_| point(3.0)).collect();
        let mut v0: Vec<Vec3> = (0..n).map(|_| point(2.0)).collect();
        v0[4321] = Vec3::X * 2.0 * MAX_SPEED;
        let w: Vec<f32> = (0..n).map(|i| if i % 97 == 0 { 0.0 } else { 1.0 }).collect();
        let step = |parallel: bool| {
            let (mut x, mut v, mut p) = (x0.clone(), v0.clone(), vec![Vec3::ZERO; n]);
            apply_gravity(&mut v, &w, Vec3::NEG_Y * 9.81, 0.01, parallel);
            let largest = predict(&x, &v, &mut p, 0.01, parallel);
            p[17] += Vec3::Y * 0.05;
            let capped = update_velocities(&mut x, &p, &mut v, &w, 0.01, parallel);
            (x, v, p, largest, capped)
        };
        let (one, two) = (step(false), step(true));
        assert_eq!(one, two);
        assert_eq!(one.4, 1, "the vertex thrown at twice the cap is capped");
        assert!(one.3 >= 3.0 && one.3 < 3.5, "the largest predicted coordinate: {}", one.3);
        assert!(one.1.iter().zip(&v0).zip(&w).all(|((v, v0), &w)| (w == 0.0) == (v.y == v0.y)), "gravity on free only");
    }

    #[test]
    fn pinned_particles_feel_no_gravity() {
        let mut v = vec![Vec3::ZERO; 2];
        apply_gravity(&mut v, &[0.0, 2.0], Vec3::NEG_Y, 0.5, false);
        assert_eq!(v, vec![Vec3::ZERO, Vec3::new(0.0, -0.5, 0.0)]);
    }

    #[test]
    fn air_drag_slows_a_falling_sheet_and_wind_pushes_a_still_one() {
        let x = [Vec3::ZERO, Vec3::X, Vec3::Z];
        let tri = [[0u32, 2, 1]];
        let mut v = [Vec3::NEG_Y; 3];
        apply_aerodynamics(&x, &mut v, &[1.0; 3], &tri, Vec3::ZERO, 1.0, 0.1);
        assert!(v.iter().all(|v| v.y > -1.0 && v.y < -0.9), "{v:?}");
        let mut v = [Vec3::ZERO; 3];
        apply_aerodynamics(&x, &mut v, &[1.0; 3], &tri, Vec3::new(0.0, 5.0, 0.0), 1.0, 0.1);
        assert!(v.iter().all(|v| v.y > 0.0 && v.x == 0.0));
    }

    #[test]
    fn huge_drag_never_reverses_motion() {
        let x = [Vec3::ZERO, Vec3::X, Vec3::Z];
        let mut v = [Vec3::NEG_Y; 3];
        apply_aerodynamics(&x, &mut v, &[1.0; 3], &[[0, 2, 1]], Vec3::ZERO, 1e9, 1.0);
        assert!(v.iter().all(|v| v.y <= 0.0 && v.is_finite()), "{v:?}");
    }
}
