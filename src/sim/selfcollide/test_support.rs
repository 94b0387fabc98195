//! Fixtures shared by the self-collision tests: random numbers, grids of triangles and a crumpled pair of sheets.

use bevy::math::Vec3;

use super::SelfContact;

/// A tiny linear congruential generator (Knuth's MMIX constants).
pub(super) struct Lcg(pub(super) u64);

impl Lcg {
    /// Uniform in [lo, hi).
    pub(super) fn range(&mut self, lo: f32, hi: f32) -> f32 {
        self.0 = self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        lo + (hi - lo) * ((self.0 >> 40) as f32 / (1u64 << 24) as f32)
    }

    pub(super) fn vec(&mut self, amplitude: f32) -> Vec3 {
        Vec3::new(
            self.range(-amplitude, amplitude),
            self.range(-amplitude, amplitude),
            self.range(-amplitude, amplitude),
        )
    }
}

/// Appends an n×n vertex grid in the xy plane at `origin` with spacing `d`.
pub(super) fn grid(n: u32, d: f32, origin: Vec3, pos: &mut Vec<Vec3>, tris: &mut Vec<[u32; 3]>) {
    let base = pos.len() as u32;
    for j in 0..n {
        for i in 0..n {
            pos.push(origin + Vec3::new(i as f32 * d, j as f32 * d, 0.0));
        }
    }
    for j in 0..n - 1 {
        for i in 0..n - 1 {
            let v = base + j * n + i;
            tris.push([v, v + 1, v + n + 1]);
            tris.push([v, v + n + 1, v + n]);
        }
    }
}

/// Two crumpled 10×10 sheets, the upper one falling through the lower one: (x, p, triangles).
pub(super) fn crumpled_pair(seed: u64) -> (Vec<Vec3>, Vec<Vec3>, Vec<[u32; 3]>) {
    let (mut x, mut tris) = (Vec::new(), Vec::new());
    grid(10, 0.1, Vec3::ZERO, &mut x, &mut tris);
    grid(10, 0.1, Vec3::new(0.03, 0.02, 0.06), &mut x, &mut tris);
    let mut rng = Lcg(seed);
    for v in &mut x {
        *v += rng.vec(0.03);
    }
    let p =
        x.iter().enumerate().map(|(i, &v)| v + rng.vec(0.04) - Vec3::Z * if i >= 100 { 0.1 } else { 0.0 }).collect();
    (x, p, tris)
}

/// The contacts as (vertex, triangle, side), sorted by vertex, then triangle.
pub(super) fn sorted(mut c: Vec<SelfContact>) -> Vec<(u32, u32, i32)> {
    c.sort_by_key(|c| (c.vertex, c.triangle));
    c.iter().map(|c| (c.vertex, c.triangle, c.side as i32)).collect()
}

/// A static triangle in z = 0 (corners 0–2) and a vertex 3 above its centre.
pub(super) fn static_triangle() -> Vec<Vec3> {
    vec![Vec3::ZERO, Vec3::X, Vec3::Y, Vec3::new(0.25, 0.25, 0.1)]
}

/// The one triangle of [`static_triangle`].
pub(super) const TRI: [[u32; 3]; 1] = [[0, 1, 2]];

/// Whether box `b` overlaps [`min`, `max`].
#[inline]
pub(super) fn overlaps(b: &[Vec3; 2], min: Vec3, max: Vec3) -> bool {
    b[0].cmple(max).all() && b[1].cmpge(min).all()
}
