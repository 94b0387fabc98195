//! The narrow phase of the self-collision search (§4.3; the predicate is set out in the parent module's docs):
//! does a vertex moving x → p come within the thickness h of a triangle moving x → p while projecting into it?
//!
//! [`sweep_contact`] states the predicate for one pair. [`NarrowPhase`] evaluates it for the candidates the
//! spatial hash reports, four pairs at a time in the lanes of [`Vec3x4`]: every lane operation is the scalar
//! one in the same order (no fused multiply–add), so a lane gives exactly the scalar answer — tested on random
//! and degenerate pairs. Packing four pairs lets the six square roots and six divisions of a pair run as
//! packed instructions; in the `tearing` scene the narrow phase tests about 18,000 pairs per frame.

use bevy::math::{BVec4A, Vec3, Vec4};

use super::SelfContact;
use crate::sim::lanes::{LANES, PackedWork, Vec3x4, with_avx2};

/// Barycentric tolerance of the narrow phase: a vertex counts as over a triangle while all barycentrics of its
/// projection are ≥ −`BARY_MARGIN`.
pub(crate) const BARY_MARGIN: f32 = 0.05;
/// Sine of the smallest corner angle below which a triangle counts as degenerate (no normal, no barycentrics).
const DEGENERATE_SINE: f32 = 1e-6;

/// A contact and the vertex's distance |d0| to the triangle's plane at the start of the step.
pub type Found = (SelfContact, f32);

/// The narrow phase for one slice of vertex queries: collects candidate (vertex, triangle) pairs and tests
/// them four at a time, appending the contacts to `found` in the order the pairs came.
pub struct NarrowPhase<'a> {
    x: &'a [Vec3],
    p: &'a [Vec3],
    triangles: &'a [[u32; 3]],
    h: f32,
    /// Pairs waiting for a full group of lanes.
    pending: [[u32; 2]; LANES],
    len: usize,
}

impl<'a> NarrowPhase<'a> {
    /// A narrow phase for a step from positions `x` to predictions `p` with thickness `h`.
    pub fn new(x: &'a [Vec3], p: &'a [Vec3], triangles: &'a [[u32; 3]], h: f32) -> Self {
        Self { x, p, triangles, h, pending: [[0; 2]; LANES], len: 0 }
    }

    /// Queues the pair (vertex, triangle); tests the queue once it fills the lanes.
    #[inline]
    pub fn test(&mut self, vertex: u32, triangle: u32, found: &mut Vec<Found>) {
        self.pending[self.len] = [vertex, triangle];
        self.len += 1;
        if self.len == LANES {
            self.flush(found);
        }
    }

    /// Tests the pairs still queued.
    pub fn flush(&mut self, found: &mut Vec<Found>) {
        with_avx2((self, found));
    }
}

/// The narrow phase's test of its queued pairs.
impl PackedWork for (&mut NarrowPhase<'_>, &mut Vec<Found>) {
    #[inline(always)]
    fn run(self) {
        let (narrow, found) = self;
        let len = std::mem::take(&mut narrow.len);
        if len == 0 {
            return;
        }
        // unused lanes repeat the first pair; their answers are dropped
        let pairs: [[u32; 2]; LANES] = std::array::from_fn(|i| narrow.pending[if i < len { i } else { 0 }]);
        // an index out of range reads NaN, which no lane accepts
        let corner = |k: usize| pairs.map(|[_, t]| narrow.triangles.get(t as usize).map_or(u32::MAX, |tri| tri[k]));
        let gather = |positions: &[Vec3], ids: [u32; LANES]| {
            let at = |i: u32| positions.get(i as usize).copied().unwrap_or(Vec3::NAN);
            Vec3x4::new(at(ids[0]), at(ids[1]), at(ids[2]), at(ids[3]))
        };
        let vertices = pairs.map(|[v, _]| v);
        let corners = [corner(0), corner(1), corner(2)];
        let (xq, pq) = (gather(narrow.x, vertices), gather(narrow.p, vertices));
        let xt = corners.map(|ids| gather(narrow.x, ids));
        let pt = corners.map(|ids| gather(narrow.p, ids));
        let (hits, d0) = sweep_contacts(xq, pq, xt, pt, narrow.h);
        let hits = hits.bitmask();
        for (lane, &[vertex, triangle]) in pairs.iter().enumerate().take(len) {
            if hits & (1 << lane) != 0 {
                let side = if d0[lane] >= 0.0 { 1.0 } else { -1.0 };
                found.push((SelfContact { vertex, triangle, side }, d0[lane].abs()));
            }
        }
    }
}

/// [`sweep_contact`] for four pairs: which lanes are contacts, and each lane's distance d0 to the triangle's
/// plane at the start (its sign is the contact's side).
#[inline(always)]
fn sweep_contacts(xq: Vec3x4, pq: Vec3x4, xt: [Vec3x4; 3], pt: [Vec3x4; 3], h: f32) -> (BVec4A, Vec4) {
    let (n1, has_n1) = unit_normals(pt);
    let (n0, has_n0) = unit_normals(xt);
    let n0 = Vec3x4::select(has_n0, n0, n1);
    let d0 = (xq - xt[0]).dot(n0);
    let d1 = (pq - pt[0]).dot(n1);
    let (s0, s1, in_band) = band_intervals(d0, d1, h);
    let candidates = has_n1 & in_band;
    if !candidates.any() {
        return (candidates, d0);
    }
    let sample =
        |s: Vec4| barycentrics(xq.lerp(pq, s), [xt[0].lerp(pt[0], s), xt[1].lerp(pt[1], s), xt[2].lerp(pt[2], s)]);
    let (first, middle, last) = (sample(s0), sample(Vec4::splat(0.5) * (s0 + s1)), sample(s1));
    let interpolated = over_between(first, middle) | over_between(middle, last);
    let exact = inside(first) | inside(middle) | inside(last);
    let over = select(n0.dot(n1).cmpgt(Vec4::ZERO), interpolated, exact);
    (candidates & over, d0)
}

/// Lane-wise [`unit_normal`], and which lanes have one.
#[inline(always)]
fn unit_normals([p1, p2, p3]: [Vec3x4; 3]) -> (Vec3x4, BVec4A) {
    let (e1, e2) = (p2 - p1, p3 - p1);
    let c = e1.cross(e2);
    let len = c.length_squared().sqrt();
    let smallest = Vec4::splat(DEGENERATE_SINE) * e1.length_squared().sqrt() * e2.length_squared().sqrt();
    (Vec3x4 { x: c.x / len, y: c.y / len, z: c.z / len }, len.is_finite_mask() & len.cmpgt(smallest))
}

/// Lane-wise [`barycentric`], and which lanes have them.
#[inline(always)]
fn barycentrics(q: Vec3x4, [p1, p2, p3]: [Vec3x4; 3]) -> (Vec3x4, BVec4A) {
    let (e1, e2, r) = (p2 - p1, p3 - p1, q - p1);
    let (d11, d12, d22) = (e1.dot(e1), e1.dot(e2), e2.dot(e2));
    let (dr1, dr2) = (r.dot(e1), r.dot(e2));
    let denom = d11 * d22 - d12 * d12;
    let valid = denom.is_finite_mask() & denom.cmpgt(Vec4::splat(DEGENERATE_SINE * DEGENERATE_SINE) * d11 * d22);
    let b2 = (d22 * dr1 - d12 * dr2) / denom;
    let b3 = (d11 * dr2 - d12 * dr1) / denom;
    (Vec3x4 { x: Vec4::ONE - b2 - b3, y: b2, z: b3 }, valid)
}

/// Lane-wise [`band_interval`]: the interval's ends, and which lanes have one.
#[inline(always)]
fn band_intervals(d0: Vec4, d1: Vec4, h: f32) -> (Vec4, Vec4, BVec4A) {
    let h = Vec4::splat(h);
    let dd = d1 - d0;
    let (a, b) = ((-h - d0) / dd, (h - d0) / dd);
    let (lo, hi) = (a.min(b).max(Vec4::ZERO), a.max(b).min(Vec4::ONE));
    let still = dd.cmpeq(Vec4::ZERO);
    let found = select(still, d0.abs().cmple(h), lo.cmple(hi));
    let finite = d0.is_finite_mask() & d1.is_finite_mask();
    (Vec4::select(still, Vec4::ZERO, lo), Vec4::select(still, Vec4::ONE, hi), finite & found)
}

/// Lane-wise `inside` of [`sweep_contact`]: barycentrics that exist and are all ≥ −[`BARY_MARGIN`].
#[inline(always)]
fn inside((b, valid): (Vec3x4, BVec4A)) -> BVec4A {
    let least = Vec4::splat(-BARY_MARGIN);
    valid & b.x.cmpge(least) & b.y.cmpge(least) & b.z.cmpge(least)
}

/// Lane-wise `over_between` of [`sweep_contact`].
#[inline(always)]
fn over_between(b0: (Vec3x4, BVec4A), b1: (Vec3x4, BVec4A)) -> BVec4A {
    select(b0.1 & b1.1, projects_inside_lanes(b0.0, b1.0), inside(b0) | inside(b1))
}

/// Lane-wise [`projects_inside`].
#[inline(always)]
fn projects_inside_lanes(b0: Vec3x4, b1: Vec3x4) -> BVec4A {
    let (mut lo, mut hi, mut blocked) = (Vec4::ZERO, Vec4::ONE, BVec4A::splat(false));
    for (c0, c1) in [(b0.x, b1.x), (b0.y, b1.y), (b0.z, b1.z)] {
        let (a, d) = (c0 + Vec4::splat(BARY_MARGIN), c1 - c0);
        let t = -a / d;
        blocked |= d.cmpeq(Vec4::ZERO) & a.cmplt(Vec4::ZERO);
        lo = Vec4::select(d.cmpgt(Vec4::ZERO), lo.max(t), lo);
        hi = Vec4::select(d.cmplt(Vec4::ZERO), hi.min(t), hi);
    }
    !blocked & lo.cmple(hi)
}

/// Lane-wise choice between two masks.
#[inline(always)]
fn select(mask: BVec4A, if_true: BVec4A, if_false: BVec4A) -> BVec4A {
    (mask & if_true) | (!mask & if_false)
}

/// The narrow phase for one pair: the side (±1, from the start) if the vertex moving xq → pq comes within `h`
/// of the triangle moving xt → pt while projecting into it (see the parent module's docs). The reference the
/// lanes of [`NarrowPhase`] are tested against.
#[cfg(test)]
pub fn sweep_contact(xq: Vec3, pq: Vec3, xt: [Vec3; 3], pt: [Vec3; 3], h: f32) -> Option<f32> {
    let n1 = unit_normal(pt)?;
    let n0 = unit_normal(xt).unwrap_or(n1);
    let d0 = (xq - xt[0]).dot(n0);
    let d1 = (pq - pt[0]).dot(n1);
    let (s0, s1) = band_interval(d0, d1, h)?;
    let (first, middle, last) =
        (sample(xq, pq, xt, pt, s0), sample(xq, pq, xt, pt, 0.5 * (s0 + s1)), sample(xq, pq, xt, pt, s1));
    let inside = |b: Option<Vec3>| b.is_some_and(|b| b.min_element() >= -BARY_MARGIN);
    let over_between = |b0: Option<Vec3>, b1: Option<Vec3>| match (b0, b1) {
        (Some(b0), Some(b1)) => projects_inside(b0, b1),
        (b0, b1) => inside(b0) || inside(b1),
    };
    let over = if n0.dot(n1) > 0.0 {
        over_between(first, middle) || over_between(middle, last)
    } else {
        // The triangle turns over during the step: its barycentrics pass through a singularity, so
        // interpolating them is meaningless; trust only the exact samples.
        inside(first) || inside(middle) || inside(last)
    };
    over.then_some(if d0 >= 0.0 { 1.0 } else { -1.0 })
}

/// Barycentrics of the vertex at time `s` of the step in the triangle at that time (both interpolated
/// linearly between the start and the end).
#[cfg(test)]
fn sample(xq: Vec3, pq: Vec3, xt: [Vec3; 3], pt: [Vec3; 3], s: f32) -> Option<Vec3> {
    barycentric(xq.lerp(pq, s), [xt[0].lerp(pt[0], s), xt[1].lerp(pt[1], s), xt[2].lerp(pt[2], s)])
}

/// The sub-interval of s ∈ [0, 1] where the linearly interpolated distance d0 + s(d1 − d0) lies in [−h, h].
#[cfg(test)]
fn band_interval(d0: f32, d1: f32, h: f32) -> Option<(f32, f32)> {
    if !(d0.is_finite() && d1.is_finite()) {
        return None;
    }
    let dd = d1 - d0;
    if dd == 0.0 {
        return (d0.abs() <= h).then_some((0.0, 1.0));
    }
    let (a, b) = ((-h - d0) / dd, (h - d0) / dd);
    let (lo, hi) = (a.min(b).max(0.0), a.max(b).min(1.0));
    (lo <= hi).then_some((lo, hi))
}

/// Whether the barycentrics b0 + t(b1 − b0) are all ≥ −[`BARY_MARGIN`] for some t ∈ [0, 1].
#[cfg(test)]
fn projects_inside(b0: Vec3, b1: Vec3) -> bool {
    let (mut lo, mut hi) = (0.0f32, 1.0f32);
    for i in 0..3 {
        let (a, d) = (b0[i] + BARY_MARGIN, b1[i] - b0[i]);
        if d == 0.0 {
            if a < 0.0 {
                return false;
            }
        } else if d > 0.0 {
            lo = lo.max(-a / d);
        } else {
            hi = hi.min(-a / d);
        }
    }
    lo <= hi
}

/// The unit normal (p2 − p1)×(p3 − p1)/|…| of eq. (12), or `None` for a degenerate triangle.
#[inline]
pub fn unit_normal([p1, p2, p3]: [Vec3; 3]) -> Option<Vec3> {
    let (e1, e2) = (p2 - p1, p3 - p1);
    let c = e1.cross(e2);
    let len = c.length();
    (len.is_finite() && len > DEGENERATE_SINE * e1.length() * e2.length()).then(|| c / len)
}

/// Barycentrics (b1, b2, b3) of the projection of `q` onto the plane of the triangle, or `None` if it is
/// degenerate.
#[inline]
pub fn barycentric(q: Vec3, [p1, p2, p3]: [Vec3; 3]) -> Option<Vec3> {
    let (e1, e2, r) = (p2 - p1, p3 - p1, q - p1);
    let (d11, d12, d22) = (e1.dot(e1), e1.dot(e2), e2.dot(e2));
    let (dr1, dr2) = (r.dot(e1), r.dot(e2));
    let denom = d11 * d22 - d12 * d12; // |e1 × e2|²
    if !(denom.is_finite() && denom > DEGENERATE_SINE * DEGENERATE_SINE * d11 * d22) {
        return None;
    }
    let b2 = (d22 * dr1 - d12 * dr2) / denom;
    let b3 = (d11 * dr2 - d12 * dr1) / denom;
    Some(Vec3::new(1.0 - b2 - b3, b2, b3))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// xorshift64*: uniform in [lo, hi).
    struct Rng(u64);

    impl Rng {
        fn range(&mut self, lo: f32, hi: f32) -> f32 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            let bits = self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 40;
            lo + (hi - lo) * (bits as f32 / (1u64 << 24) as f32)
        }

        fn vec(&mut self, amplitude: f32) -> Vec3 {
            Vec3::new(
                self.range(-amplitude, amplitude),
                self.range(-amplitude, amplitude),
                self.range(-amplitude, amplitude),
            )
        }
    }

    /// Runs `pairs` through [`NarrowPhase`] (in groups of four and a remainder) and through [`sweep_contact`].
    fn both(x: &[Vec3], p: &[Vec3], triangles: &[[u32; 3]], pairs: &[[u32; 2]], h: f32) -> [Vec<SelfContact>; 2] {
        let mut found = Vec::new();
        let mut narrow = NarrowPhase::new(x, p, triangles, h);
        for &[v, t] in pairs {
            narrow.test(v, t, &mut found);
        }
        narrow.flush(&mut found);
        let lanes = found.into_iter().map(|(c, _)| c).collect();
        let scalar = pairs
            .iter()
            .filter_map(|&[v, t]| {
                let tri = triangles.get(t as usize)?;
                let corners = |s: &[Vec3]| -> Option<[Vec3; 3]> {
                    Some([*s.get(tri[0] as usize)?, *s.get(tri[1] as usize)?, *s.get(tri[2] as usize)?])
                };
                let side = sweep_contact(x[v as usize], p[v as usize], corners(x)?, corners(p)?, h)?;
                Some(SelfContact { vertex: v, triangle: t, side })
            })
            .collect();
        [lanes, scalar]
    }

    #[test]
    fn lanes_give_the_scalar_contacts_on_random_pairs() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let (mut x, mut p, mut triangles, mut pairs) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut contacts = 0;
        for case in 0..20_000u32 {
            // a vertex near a triangle of about unit size, both moving; every 16th triangle is flattened to a
            // sliver, every 8th turned over during the step, every 32nd degenerate at the start
            let base = x.len() as u32;
            let corners: Vec<Vec3> = (0..3).map(|_| rng.vec(1.0)).collect();
            let mut end: Vec<Vec3> = corners.iter().map(|&c| c + rng.vec(0.3)).collect();
            if case % 8 == 0 {
                end.swap(1, 2);
            }
            let mut start = corners;
            if case % 16 == 0 {
                start[2] = start[0].lerp(start[1], 0.5) + rng.vec(1e-4);
            }
            if case % 32 == 0 {
                start[1] = start[0];
            }
            x.extend(&start);
            p.extend(&end);
            x.push(rng.vec(0.8));
            p.push(x[x.len() - 1] + rng.vec(0.4));
            triangles.push([base, base + 1, base + 2]);
            pairs.push([base + 3, case]);
            let [lanes, scalar] = both(&x, &p, &triangles, &pairs[pairs.len() - 1..], 0.1);
            assert_eq!(lanes, scalar, "case {case}");
            contacts += scalar.len();
        }
        assert!(contacts > 1_000, "only {contacts} contacts: the fixture tests too few positives");
        // the same pairs in groups of four, with a remainder of three
        let [lanes, scalar] = both(&x, &p, &triangles, &pairs[..pairs.len() - 1], 0.1);
        assert_eq!(lanes, scalar);
    }

    #[test]
    fn lanes_reject_what_the_scalar_rejects_on_bad_input() {
        let x = vec![Vec3::ZERO, Vec3::X, Vec3::Y, Vec3::new(0.2, 0.2, 0.01), Vec3::NAN, Vec3::splat(3e38)];
        let p = vec![Vec3::ZERO, Vec3::X, Vec3::Y, Vec3::new(0.2, 0.2, -0.01), Vec3::NAN, Vec3::splat(-3e38)];
        let triangles = vec![[0, 1, 2], [0, 1, 9], [0, 4, 2], [0, 0, 2], [0, 5, 2]];
        let pairs = [[3, 0], [3, 1], [3, 2], [3, 3], [3, 4], [3, 7], [5, 0]];
        let [lanes, scalar] = both(&x, &p, &triangles, &pairs, 0.05);
        assert_eq!(lanes, scalar);
        // vertex 3 crosses triangle 0 only (the others are broken); vertex 5 flies from +3e38 to −3e38 through
        // the origin, a corner of triangle 0
        let hit: Vec<[u32; 2]> = lanes.iter().map(|c| [c.vertex, c.triangle]).collect();
        assert_eq!(hit, [[3, 0], [5, 0]]);
    }
}
