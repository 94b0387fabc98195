//! Four constraints of one colour (or four self-collision candidates) side by side: [`Vec3x4`] holds one
//! 3-vector per constraint in the lanes of three [`Vec4`]s (x, y, z), so the sweeps evaluate four projections,
//! and the self-collision narrow phase four vertex–triangle pairs, with one packed instruction per scalar
//! operation (SSE2 on x86-64, NEON on aarch64) instead of shuffling each `Vec3` into and out of a register.
//! The sweeps and the narrow phase run through [`with_avx2`], which compiles them a second time for AVX2 and
//! picks that build at run time where the processor has it.
//!
//! Constraints of one colour share no particle (the solver's colouring, [`super::constraints::coloring`]), so reading the four constraints' particles
//! before moving any of them gives exactly the result of projecting them one after another. Every lane
//! operation here is the scalar `Vec3` operation in the same order (no fused multiply–add), so a lane computes
//! the same bits as the scalar kernel does; the one kernel that takes four lanes all the way (the dihedral
//! projection) has no scalar twin, and one pair alone runs in a group whose other lanes are inactive.

use std::ops::{Add, Neg, Sub};

use bevy::math::{BVec4A, Vec3, Vec4};

use super::constraints::access::ParticleAccess;

/// Constraints evaluated side by side.
pub const LANES: usize = 4;

/// Work made of long chains of packed arithmetic, which [`with_avx2`] compiles twice. `run` must be
/// `#[inline(always)]`, so that its whole body is compiled into each version.
pub trait PackedWork {
    /// Does the work.
    fn run(self);
}

/// Runs `work` compiled for AVX2 where the processor has it (detected at run time, the answer cached), else as
/// built. The lanes stay four wide; what changes is the encoding: AVX's three-operand instructions need none
/// of the register copies two-operand SSE makes around every product, which the constraint sweeps, long chains
/// of packed arithmetic, are full of. The bits do not change: the same IEEE operations in the
/// same order, and Rust never fuses a product and a sum into a multiply–add.
#[inline(always)]
pub fn with_avx2(work: impl PackedWork) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the processor supports AVX2, checked just above.
        return unsafe { avx2(work) };
    }
    work.run();
}

/// `work.run()` compiled for AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn avx2(work: impl PackedWork) {
    work.run();
}

/// Four 3-vectors, one per lane.
#[derive(Clone, Copy, Debug)]
pub struct Vec3x4 {
    /// The x components, one per lane.
    pub x: Vec4,
    /// The y components, one per lane.
    pub y: Vec4,
    /// The z components, one per lane.
    pub z: Vec4,
}

impl Vec3x4 {
    /// The positions of particles `ids`, one per lane.
    #[inline(always)]
    pub fn positions(p: &impl ParticleAccess, ids: [usize; LANES]) -> Self {
        // one at a time: an array of `Vec3`s goes through the stack and stalls the loads that read it back
        Self::new(p.p(ids[0]), p.p(ids[1]), p.p(ids[2]), p.p(ids[3]))
    }

    /// `a`, `b`, `c`, `d` in lanes 0 to 3.
    #[inline(always)]
    pub fn new(a: Vec3, b: Vec3, c: Vec3, d: Vec3) -> Self {
        Self { x: Vec4::new(a.x, b.x, c.x, d.x), y: Vec4::new(a.y, b.y, c.y, d.y), z: Vec4::new(a.z, b.z, c.z, d.z) }
    }

    /// Lane-wise: `if_true` where `mask` is set, else `if_false`.
    #[inline(always)]
    pub fn select(mask: BVec4A, if_true: Self, if_false: Self) -> Self {
        Self {
            x: Vec4::select(mask, if_true.x, if_false.x),
            y: Vec4::select(mask, if_true.y, if_false.y),
            z: Vec4::select(mask, if_true.z, if_false.z),
        }
    }

    /// Lane-wise `Vec3::lerp` (self·(1 − s) + o·s) with each lane's own `s`.
    #[inline(always)]
    pub fn lerp(self, o: Self, s: Vec4) -> Self {
        self.scale(Vec4::ONE - s) + o.scale(s)
    }

    /// `v` in every lane.
    #[inline(always)]
    pub fn splat(v: Vec3) -> Self {
        Self { x: Vec4::splat(v.x), y: Vec4::splat(v.y), z: Vec4::splat(v.z) }
    }

    /// Lane `lane` as a `Vec3`.
    #[inline(always)]
    pub fn lane(&self, lane: usize) -> Vec3 {
        Vec3::new(self.x[lane], self.y[lane], self.z[lane])
    }

    /// Each lane scaled by the matching lane of `s`.
    #[inline(always)]
    pub fn scale(self, s: Vec4) -> Self {
        Self { x: self.x * s, y: self.y * s, z: self.z * s }
    }

    /// Lane-wise `Vec3::cross`.
    #[inline(always)]
    pub fn cross(self, o: Self) -> Self {
        Self { x: self.y * o.z - o.y * self.z, y: self.z * o.x - o.z * self.x, z: self.x * o.y - o.x * self.y }
    }

    /// Lane-wise `Vec3::dot`.
    #[inline(always)]
    pub fn dot(self, o: Self) -> Vec4 {
        self.x * o.x + self.y * o.y + self.z * o.z
    }

    /// Lane-wise `Vec3::length_squared`.
    #[inline(always)]
    pub fn length_squared(self) -> Vec4 {
        self.dot(self)
    }
}

impl Add for Vec3x4 {
    type Output = Self;
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        Self { x: self.x + o.x, y: self.y + o.y, z: self.z + o.z }
    }
}

impl Neg for Vec3x4 {
    type Output = Self;
    #[inline(always)]
    fn neg(self) -> Self {
        Self { x: -self.x, y: -self.y, z: -self.z }
    }
}

impl Sub for Vec3x4 {
    type Output = Self;
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        Self { x: self.x - o.x, y: self.y - o.y, z: self.z - o.z }
    }
}

/// The inverse masses of particles `ids`, one per lane.
#[inline(always)]
pub fn inverse_masses(p: &impl ParticleAccess, ids: [usize; LANES]) -> Vec4 {
    Vec4::new(p.w(ids[0]), p.w(ids[1]), p.w(ids[2]), p.w(ids[3]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::constraints::access::Slices;

    #[test]
    fn lane_operations_give_the_scalar_bits() {
        let mut p: Vec<Vec3> =
            (0..8).map(|i| Vec3::new(0.37 * i as f32 - 1.1, (i * i) as f32 * 0.013, 1.0 / (i as f32 + 0.7))).collect();
        let w = vec![1.0; 8];
        let view = Slices { p: &mut p, w: &w };
        let (a, b) = (Vec3x4::positions(&view, [0, 2, 4, 6]), Vec3x4::positions(&view, [1, 3, 5, 7]));
        for lane in 0..LANES {
            let (u, v) = (view.p[2 * lane], view.p[2 * lane + 1]);
            assert_eq!(a.lane(lane), u);
            assert_eq!((a - b).lane(lane), u - v);
            assert_eq!(a.cross(b).lane(lane), u.cross(v));
            assert_eq!(a.dot(b)[lane].to_bits(), u.dot(v).to_bits());
            assert_eq!(a.length_squared()[lane].to_bits(), u.length_squared().to_bits());
            assert_eq!(a.scale(Vec4::splat(0.3)).lane(lane), u * 0.3);
            let s = [0.0, 0.3, 1.0, 0.77][lane];
            assert_eq!(a.lerp(b, Vec4::new(0.0, 0.3, 1.0, 0.77)).lane(lane), u.lerp(v, s));
        }
    }
}
