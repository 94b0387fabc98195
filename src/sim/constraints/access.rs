//! How the projection kernels read and move particles: through [`ParticleAccess`], implemented by plain
//! checked slices ([`Slices`]) and by [`SharedParticles`], the unchecked view the parallel solver hands to
//! every worker of one colour (§3.2's projections of one colour touch disjoint particles).

use bevy::math::Vec3;

/// Read positions p_i and inverse masses w_i, move positions.
pub trait ParticleAccess {
    /// Number of particles.
    fn len(&self) -> usize;
    /// Predicted position p_i.
    fn p(&self, i: usize) -> Vec3;
    /// Inverse mass w_i.
    fn w(&self, i: usize) -> f32;
    /// Moves p_i by `delta`.
    fn shift(&mut self, i: usize, delta: Vec3);
    /// How far from met a constraint is left alone, metres ([`crate::sim::integrate::rounding_tolerance`]); 0
    /// (this default) corrects every constraint.
    fn rounding(&self) -> f32 {
        0.0
    }
}

/// Bounds-checked access to a cloth's predictions and inverse masses.
pub struct Slices<'a> {
    /// Predicted positions p_i.
    pub p: &'a mut [Vec3],
    /// Inverse masses w_i.
    pub w: &'a [f32],
}

impl ParticleAccess for Slices<'_> {
    #[inline]
    fn len(&self) -> usize {
        self.p.len().min(self.w.len())
    }
    #[inline]
    fn p(&self, i: usize) -> Vec3 {
        self.p[i]
    }
    #[inline]
    fn w(&self, i: usize) -> f32 {
        self.w[i]
    }
    #[inline]
    fn shift(&mut self, i: usize, delta: Vec3) {
        self.p[i] += delta;
    }
}

/// Unchecked access to predictions and inverse masses shared by the workers of one colour. Copies of it live
/// on several threads at once; that is sound only under the contract of [`SharedParticles::new`].
#[derive(Clone, Copy)]
pub struct SharedParticles {
    p: *mut Vec3,
    w: *const f32,
    len: usize,
    rounding: f32,
}

// SAFETY: the contract of `new` makes concurrent use data-race free (disjoint indices per thread).
unsafe impl Send for SharedParticles {}
unsafe impl Sync for SharedParticles {}

impl SharedParticles {
    /// A shared view of `p` and `w` (of equal length, else `None`).
    ///
    /// # Safety
    /// While any copy of the view is in use: every index passed to it is below `p.len()`, no two threads use
    /// the same index between two synchronisation points, and nothing else reads or writes `p`.
    pub unsafe fn new(p: &mut [Vec3], w: &[f32]) -> Option<Self> {
        (p.len() == w.len()).then_some(Self { p: p.as_mut_ptr(), w: w.as_ptr(), len: p.len(), rounding: 0.0 })
    }

    /// The view with the positions' rounding tolerance ([`ParticleAccess::rounding`]).
    pub fn with_rounding(self, rounding: f32) -> Self {
        Self { rounding, ..self }
    }

    /// The whole arrays, for a phase that runs on one thread alone (contacts, self-collision, volume).
    ///
    /// # Safety
    /// No other copy of the view is used until the returned borrows end.
    pub unsafe fn exclusive(&mut self) -> (&mut [Vec3], &[f32]) {
        // SAFETY: p and w point to `len` elements (from `new`); exclusivity is the caller's contract.
        unsafe { (std::slice::from_raw_parts_mut(self.p, self.len), std::slice::from_raw_parts(self.w, self.len)) }
    }
}

impl ParticleAccess for SharedParticles {
    #[inline]
    fn len(&self) -> usize {
        self.len
    }
    #[inline]
    fn p(&self, i: usize) -> Vec3 {
        debug_assert!(i < self.len);
        // SAFETY: i < len by the contract of `new`; no other thread writes index i now.
        unsafe { *self.p.add(i) }
    }
    #[inline]
    fn w(&self, i: usize) -> f32 {
        debug_assert!(i < self.len);
        // SAFETY: i < len by the contract of `new`; w is never written while the view exists.
        unsafe { *self.w.add(i) }
    }
    #[inline]
    fn shift(&mut self, i: usize, delta: Vec3) {
        debug_assert!(i < self.len);
        // SAFETY: i < len, and this thread is the only one using index i until the next synchronisation.
        unsafe { *self.p.add(i) += delta }
    }
    #[inline]
    fn rounding(&self) -> f32 {
        self.rounding
    }
}
