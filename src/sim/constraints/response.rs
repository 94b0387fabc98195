//! How a constraint's error C becomes a move: the paper's stiffness or XPBD's compliance.
//!
//! Both move particle i by s · wᵢ · ∇ᵢC. The paper (eq. 6–9, §3.3) takes s = −k' · C / Σⱼ wⱼ|∇ⱼC|² with the
//! linearised stiffness k'. XPBD (Macklin, Müller, Chentanez, MIG 2016, eq. 18 and 26) keeps a Lagrange
//! multiplier λ per constraint over the iterations of a substep and takes s = Δλ = (−C − α̃λ) / (Σⱼ wⱼ|∇ⱼC|² + α̃)
//! with α̃ = α/Δt², α the compliance: the constraint then acts as a spring of stiffness 1/α, whatever the
//! iteration and substep counts. With α = 0 the two are the same equation as the paper's with k = 1.
//!
//! The sweeps are generic over [`Response`], so each solver's kernel is compiled on its own and the paper's keeps
//! its arithmetic (and its bits) exactly.

use bevy::math::{BVec4A, Vec4};

use crate::sim::lanes::LANES;

/// How a sweep turns the errors of its constraints into corrections. `at` is the index of a constraint (for four
/// lanes, of the first lane's) within the slice of constraints the sweep was given.
pub trait Response {
    /// For four distance constraints C = |d| − l0 with d = pᵢ − pⱼ: the factor f with Δpᵢ = −f wᵢ d and
    /// Δpⱼ = f wⱼ d, zero where `moving` is false; `len` = |d|, `w_sum` = wᵢ + wⱼ.
    fn distance_factor_x4(&mut self, at: usize, error: Vec4, len: Vec4, w_sum: Vec4, moving: BVec4A) -> Vec4;

    /// [`Response::distance_factor_x4`] for one constraint that moves.
    fn distance_factor(&mut self, at: usize, error: f32, len: f32, w_sum: f32) -> f32;

    /// For four general constraints with errors C and `denominator` Σⱼ wⱼ|∇ⱼC|²: s with Δpᵢ = s wᵢ ∇ᵢC.
    fn scale_x4(&self, at: usize, error: Vec4, denominator: Vec4) -> Vec4;

    /// [`Response::scale_x4`] with the move it makes of C (s · Σⱼ wⱼ|∇ⱼC|², linearised) at most `max_step`
    /// either way: a limit on one projection's step, never on what the constraint holds at convergence.
    fn limited_scale_x4(&self, at: usize, error: Vec4, denominator: Vec4, max_step: f32) -> Vec4;

    /// Records that the lanes set in `moving` were moved by [`Response::scale_x4`]'s `scale`.
    fn commit_x4(&mut self, at: usize, scale: Vec4, moving: u32);

    /// What four constraints with errors C still ask to be corrected: C itself for the paper, C + α̃λ for XPBD
    /// (a compliant constraint holding its load has C = −α̃λ and asks for nothing). A constraint whose residual the
    /// positions' rounding could have made is left alone ([`crate::sim::integrate::rounding_tolerance`]).
    fn residual_x4(&self, at: usize, error: Vec4) -> Vec4;

    /// [`Response::residual_x4`] of one constraint.
    fn residual(&self, at: usize, error: f32) -> f32;
}

/// The share D / (D + α̃) of a lone constraint's error that XPBD removes in a substep, whatever the iteration
/// count, with time-scaled compliance α̃ and denominator D = Σ w|∇C|²: the paper's stiffness k that behaves alike.
/// 1 without compliance, 0 without mass to move.
pub(crate) fn equivalent_stiffness(alpha_tilde: f32, denominator: f32) -> f32 {
    let k = denominator / (denominator + alpha_tilde.max(0.0));
    if k.is_finite() { k.clamp(0.0, 1.0) } else { 0.0 }
}

/// `scale` limited so that its move of C, `scale` · `denominator`, is at most `max_step` either way.
#[inline(always)]
fn limit_step(scale: Vec4, denominator: Vec4, max_step: f32) -> Vec4 {
    let most = Vec4::splat(max_step) / denominator;
    scale.max(-most).min(most)
}

/// The paper's response: the linearised stiffness k' (§3.3).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stiffness(pub f32);

impl Response for Stiffness {
    #[inline(always)]
    fn distance_factor_x4(&mut self, _: usize, error: Vec4, len: Vec4, w_sum: Vec4, moving: BVec4A) -> Vec4 {
        Vec4::select(moving, Vec4::splat(self.0) * error / (len * w_sum), Vec4::ZERO)
    }

    #[inline(always)]
    fn distance_factor(&mut self, _: usize, error: f32, len: f32, w_sum: f32) -> f32 {
        self.0 * error / (len * w_sum)
    }

    #[inline(always)]
    fn scale_x4(&self, _: usize, error: Vec4, denominator: Vec4) -> Vec4 {
        Vec4::splat(-self.0) * error / denominator
    }

    /// The error itself is limited: the paper's k removes a share of it, and drives it to 0 at convergence.
    #[inline(always)]
    fn limited_scale_x4(&self, at: usize, error: Vec4, denominator: Vec4, max_step: f32) -> Vec4 {
        self.scale_x4(at, error.clamp(Vec4::splat(-max_step), Vec4::splat(max_step)), denominator)
    }

    #[inline(always)]
    fn commit_x4(&mut self, _: usize, _: Vec4, _: u32) {}

    #[inline(always)]
    fn residual_x4(&self, _: usize, error: Vec4) -> Vec4 {
        error
    }

    #[inline(always)]
    fn residual(&self, _: usize, error: f32) -> f32 {
        error
    }
}

/// XPBD's response: the time-scaled compliance α̃ = α/Δt² of every constraint of the sweep and their
/// multipliers λ, one per constraint of the slice the sweep was given.
#[derive(Debug)]
pub struct Compliance<'a> {
    /// α̃ = α/Δt².
    pub alpha: f32,
    /// λ of each constraint; a constraint past its end counts as λ = 0 and keeps none.
    pub lambda: &'a mut [f32],
    /// The most a constraint whose steps are limited ([`Response::limited_scale_x4`]) moves its C in a substep,
    /// |λ| Σ w|∇C|²: a soft cloth's hinges yield at it (`bend::Folds::Yield`); infinite for no limit.
    pub most: f32,
}

impl Compliance<'_> {
    /// Δλ of four constraints with errors C and Σ w|∇C|² `denominator`, not yet added to λ.
    #[inline(always)]
    fn delta_x4(&self, at: usize, error: Vec4, denominator: Vec4) -> Vec4 {
        let alpha = Vec4::splat(self.alpha);
        -(error + alpha * self.lambdas(at)) / (denominator + alpha)
    }

    /// Δλ of one constraint, not yet added to λ.
    #[inline(always)]
    fn delta(&self, at: usize, error: f32, denominator: f32) -> f32 {
        let lambda = self.lambda.get(at).copied().unwrap_or(0.0);
        -(error + self.alpha * lambda) / (denominator + self.alpha)
    }

    #[inline(always)]
    fn lambdas(&self, at: usize) -> Vec4 {
        match self.lambda.get(at..at + LANES) {
            Some(&[a, b, c, d]) => Vec4::new(a, b, c, d),
            _ => Vec4::from_array(std::array::from_fn(|lane| self.lambda.get(at + lane).copied().unwrap_or(0.0))),
        }
    }

    #[inline(always)]
    fn add(&mut self, at: usize, delta: Vec4, moving: u32) {
        for (lane, d) in delta.to_array().into_iter().enumerate() {
            if moving & (1 << lane) != 0
                && let Some(l) = self.lambda.get_mut(at + lane)
            {
                *l += d;
            }
        }
    }
}

impl Response for Compliance<'_> {
    #[inline(always)]
    fn distance_factor_x4(&mut self, at: usize, error: Vec4, len: Vec4, w_sum: Vec4, moving: BVec4A) -> Vec4 {
        let delta = self.delta_x4(at, error, w_sum);
        self.add(at, delta, moving.bitmask());
        // ∇ᵢC = d / |d|, so Δpᵢ = wᵢ d Δλ / |d|
        Vec4::select(moving, -delta / len, Vec4::ZERO)
    }

    #[inline(always)]
    fn distance_factor(&mut self, at: usize, error: f32, len: f32, w_sum: f32) -> f32 {
        let delta = self.delta(at, error, w_sum);
        self.add(at, Vec4::new(delta, 0.0, 0.0, 0.0), 1);
        -delta / len
    }

    #[inline(always)]
    fn scale_x4(&self, at: usize, error: Vec4, denominator: Vec4) -> Vec4 {
        self.delta_x4(at, error, denominator)
    }

    /// Δλ is limited, not C: λ goes on growing over the iterations until C = −α̃λ, the torque 1/α the
    /// compliance asks for at any error (limiting C held λ at max_step/α̃ and the torque at max_step/α).
    #[inline(always)]
    fn limited_scale_x4(&self, at: usize, error: Vec4, denominator: Vec4, max_step: f32) -> Vec4 {
        let step = limit_step(self.delta_x4(at, error, denominator), denominator, max_step);
        if self.most.is_infinite() {
            return step;
        }
        // the multiplier stops where it moves C by ±most in the substep: the steps below it keep their bits
        let (lambda, most) = (self.lambdas(at), Vec4::splat(self.most) / denominator);
        let beyond = (lambda + step).abs().cmpgt(most);
        Vec4::select(beyond, (lambda + step).clamp(-most, most) - lambda, step)
    }

    #[inline(always)]
    fn commit_x4(&mut self, at: usize, scale: Vec4, moving: u32) {
        self.add(at, scale, moving);
    }

    #[inline(always)]
    fn residual_x4(&self, at: usize, error: Vec4) -> Vec4 {
        error + Vec4::splat(self.alpha) * self.lambdas(at)
    }

    #[inline(always)]
    fn residual(&self, at: usize, error: f32) -> f32 {
        error + self.alpha * self.lambda.get(at).copied().unwrap_or(0.0)
    }
}

/// While the solver switches: `share` of XPBD's correction and the rest of the paper's, so the cloth's response
/// changes as smoothly as the share eases (the rule of the stiffness easing). λ records the multiplier of the
/// correction actually made, so XPBD's term α̃λ stays true to the positions.
#[derive(Debug)]
pub struct Blend<'a> {
    /// The paper's part.
    pub paper: Stiffness,
    /// XPBD's part, with the multipliers.
    pub xpbd: Compliance<'a>,
    /// XPBD's share, 0 to 1.
    pub share: f32,
}

impl Blend<'_> {
    #[inline(always)]
    fn mix(&self, paper: Vec4, xpbd: Vec4) -> Vec4 {
        Vec4::splat(1.0 - self.share) * paper + Vec4::splat(self.share) * xpbd
    }
}

impl Response for Blend<'_> {
    #[inline(always)]
    fn distance_factor_x4(&mut self, at: usize, error: Vec4, len: Vec4, w_sum: Vec4, moving: BVec4A) -> Vec4 {
        let paper = self.paper.distance_factor_x4(at, error, len, w_sum, moving);
        let factor = self.mix(paper, -self.xpbd.delta_x4(at, error, w_sum) / len);
        self.xpbd.add(at, -factor * len, moving.bitmask());
        Vec4::select(moving, factor, Vec4::ZERO)
    }

    #[inline(always)]
    fn distance_factor(&mut self, at: usize, error: f32, len: f32, w_sum: f32) -> f32 {
        let paper = self.paper.distance_factor(at, error, len, w_sum);
        let factor = (1.0 - self.share) * paper + self.share * (-self.xpbd.delta(at, error, w_sum) / len);
        self.xpbd.add(at, Vec4::new(-factor * len, 0.0, 0.0, 0.0), 1);
        factor
    }

    #[inline(always)]
    fn scale_x4(&self, at: usize, error: Vec4, denominator: Vec4) -> Vec4 {
        self.mix(self.paper.scale_x4(at, error, denominator), self.xpbd.delta_x4(at, error, denominator))
    }

    #[inline(always)]
    fn limited_scale_x4(&self, at: usize, error: Vec4, denominator: Vec4, max_step: f32) -> Vec4 {
        let paper = self.paper.limited_scale_x4(at, error, denominator, max_step);
        self.mix(paper, self.xpbd.limited_scale_x4(at, error, denominator, max_step))
    }

    #[inline(always)]
    fn commit_x4(&mut self, at: usize, scale: Vec4, moving: u32) {
        self.xpbd.add(at, scale, moving);
    }

    #[inline(always)]
    fn residual_x4(&self, at: usize, error: Vec4) -> Vec4 {
        self.mix(error, self.xpbd.residual_x4(at, error))
    }

    #[inline(always)]
    fn residual(&self, at: usize, error: f32) -> f32 {
        (1.0 - self.share) * error + self.share * self.xpbd.residual(at, error)
    }
}

/// XPBD's multipliers of one cloth: one λ per stretch and per bending constraint, zeroed at the start of every
/// substep. Grown when the constraints are (tearing), so a steady substep allocates nothing.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Multipliers {
    /// λ of each stretch constraint, in the order of `StretchConstraints`.
    pub stretch: Vec<f32>,
    /// λ of each bending constraint, in the order of `BendConstraints`.
    pub bend: Vec<f32>,
    /// λ of a balloon's volume constraint.
    pub volume: f32,
}

impl Multipliers {
    /// Zeroes every λ, sized for `stretch` and `bend` constraints.
    pub fn reset(&mut self, stretch: usize, bend: usize) {
        for (lambda, n) in [(&mut self.stretch, stretch), (&mut self.bend, bend)] {
            lambda.clear();
            lambda.resize(n, 0.0);
        }
        self.volume = 0.0;
    }
}

/// The multipliers shared by the workers of one colour: each chunk takes the λ of its own constraints.
#[derive(Clone, Copy)]
pub struct SharedMultipliers {
    stretch: (*mut f32, usize),
    bend: (*mut f32, usize),
}

// SAFETY: the contract of `chunk` makes concurrent use data-race free (disjoint ranges per thread).
unsafe impl Send for SharedMultipliers {}
unsafe impl Sync for SharedMultipliers {}

impl SharedMultipliers {
    /// A view of `multipliers` for the chunks of one projection.
    pub fn new(multipliers: &mut Multipliers) -> Self {
        let Multipliers { stretch, bend, .. } = multipliers;
        Self { stretch: (stretch.as_mut_ptr(), stretch.len()), bend: (bend.as_mut_ptr(), bend.len()) }
    }

    /// The λ of constraints `range` (stretch or bending), clipped to what exists.
    ///
    /// # Safety
    /// The `Multipliers` given to [`SharedMultipliers::new`] outlive the returned slice and are not otherwise used
    /// meanwhile, and no two threads hold overlapping ranges of one kind at once.
    pub unsafe fn chunk<'a>(self, bend: bool, range: std::ops::Range<usize>) -> &'a mut [f32] {
        let (ptr, len) = if bend { self.bend } else { self.stretch };
        let (start, end) = (range.start.min(len), range.end.min(len));
        // SAFETY: start ≤ end ≤ len elements from `new`; exclusivity is the caller's contract.
        unsafe { std::slice::from_raw_parts_mut(ptr.add(start), end.max(start) - start) }
    }
}

/// Converts a per-pass coefficient k ∈ [0, 1] so that `n` repeated applications have the effect of one
/// application of k: k' = 1 − (1 − k)^(1/n) (§3.3). Used for stiffness over solver iterations and for damping
/// over substeps.
pub fn linearized(k: f32, n: u32) -> f32 {
    let k = if k.is_finite() { k.clamp(0.0, 1.0) } else { 0.0 };
    1.0 - (1.0 - k).powf(1.0 / n.max(1) as f32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linearized_stiffness_composes_to_k() {
        for &k in &[0.0, 0.01, 0.3, 0.5, 0.99, 1.0] {
            for &n in &[1u32, 2, 5, 50] {
                let kp = linearized(k, n);
                let remaining = (1.0 - kp).powi(n as i32);
                assert!((remaining - (1.0 - k)).abs() < 1e-4, "k={k} n={n}: {remaining}");
            }
        }
    }

    #[test]
    fn zero_compliance_moves_like_full_stiffness() {
        let (error, len, w_sum) = (Vec4::new(0.3, -0.2, 0.01, 1.5), Vec4::new(1.3, 0.8, 1.01, 2.5), Vec4::splat(2.0));
        let moving = BVec4A::new(true, true, true, false);
        let paper = Stiffness(1.0).distance_factor_x4(0, error, len, w_sum, moving);
        let mut lambda = [0.0; 4];
        let xpbd = Compliance { alpha: 0.0, lambda: &mut lambda, most: f32::INFINITY }
            .distance_factor_x4(0, error, len, w_sum, moving);
        assert!((paper - xpbd).abs().max_element() < 1e-7, "{paper} vs {xpbd}");
        assert_eq!(lambda[3], 0.0, "a lane that does not move keeps its λ");
        assert!((lambda[0] + 0.15).abs() < 1e-7, "Δλ = −C / Σw");
    }

    #[test]
    fn compliance_converges_to_the_spring_equilibrium() {
        // one particle (w = 1/m) on a spring of compliance α to a fixed one, pulled by a force F each substep:
        // iterating Δλ to convergence gives C = −α λ, the spring's stretch under its tension
        let (alpha, dt) = (0.01f32, 0.01f32);
        let alpha_tilde = alpha / (dt * dt);
        let mut lambda = [0.0f32];
        let mut response = Compliance { alpha: alpha_tilde, lambda: &mut lambda, most: f32::INFINITY };
        let (mut x, w) = (1.2f32, 1.0f32);
        for _ in 0..200 {
            let f = response.distance_factor(0, x - 1.0, x, w);
            x -= f * w * x;
        }
        let c = x - 1.0;
        assert!((c + alpha_tilde * lambda[0]).abs() < 1e-5, "C = −α̃λ at convergence: {c}, λ = {}", lambda[0]);
    }

    #[test]
    fn a_blend_moves_between_its_two_solvers() {
        let (error, len, w_sum) = (Vec4::splat(0.2), Vec4::splat(1.2), Vec4::splat(2.0));
        let moving = BVec4A::splat(true);
        let paper = Stiffness(0.5).distance_factor_x4(0, error, len, w_sum, moving);
        let mut lambda = [0.0; 4];
        let xpbd = Compliance { alpha: 3.0, lambda: &mut lambda, most: f32::INFINITY }
            .distance_factor_x4(0, error, len, w_sum, moving);
        for share in [0.0, 0.25, 1.0] {
            let mut lambda = [0.0; 4];
            let xpbd_part = Compliance { alpha: 3.0, lambda: &mut lambda, most: f32::INFINITY };
            let mut blend = Blend { paper: Stiffness(0.5), xpbd: xpbd_part, share };
            let factor = blend.distance_factor_x4(0, error, len, w_sum, moving);
            let expected = paper * (1.0 - share) + xpbd * share;
            assert!((factor - expected).abs().max_element() < 1e-7, "share {share}: {factor} vs {expected}");
            assert!((lambda[0] + factor.x * len.x).abs() < 1e-7, "λ records the correction made");
        }
    }

    #[test]
    fn shared_chunks_are_clipped_to_the_multipliers() {
        let mut m = Multipliers::default();
        m.reset(6, 2);
        let shared = SharedMultipliers::new(&mut m);
        // SAFETY: one thread, one chunk at a time, `m` alive and unused meanwhile
        unsafe {
            shared.chunk(false, 4..10)[1] = 2.0;
            assert_eq!(shared.chunk(true, 1..5).len(), 1);
            assert!(shared.chunk(true, 7..9).is_empty());
        }
        assert_eq!(m.stretch[5], 2.0);
    }
}
