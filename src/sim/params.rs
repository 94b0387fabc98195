//! Global simulation parameters: the solver (§3.1–§3.3), damping (§3.5), collisions (§3.4), environment.
//!
//! Per-cloth material values (stiffness, density, thickness) live in [`crate::sim::cloth::ClothMaterial`].

use bevy::prelude::*;
use serde::{Deserialize, Serialize};

/// Which bending constraint the solver projects (§4.1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum BendingModel {
    /// The paper's dihedral-angle constraint with the gradients of Appendix A (eq. 25–29): independent of stretching.
    #[default]
    Dihedral,
    /// A distance constraint between the two vertices opposite a shared edge (Jakobsen style): cheaper, but
    /// couples bending to stretching.
    Distance,
}

/// Every global knob of the solver. Each field states meaning, unit, range and default.
#[derive(Resource, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SimParams {
    /// Solver iterations per step, `solverIterations` of line (9). Range 1–200, default 4.
    pub iterations: u32,
    /// Substeps per fixed step: the whole loop (5)–(16) runs this many times with Δt = 1/(rate·substeps).
    /// Range 1–64, default 8. Substeps converge faster than iterations for the same cost.
    pub substeps: u32,
    /// Fixed-step rate in Hz (the `FixedUpdate` timestep). Range 10–240, default 60.
    pub rate_hz: f32,
    /// Gravitational acceleration g of line (5), m/s². Default (0, −9.81, 0).
    pub gravity: Vec3,
    /// Wind velocity in m/s, felt through the aerodynamic force on each triangle (line 5). Default zero.
    pub wind: Vec3,
    /// Amplitude of random gusts added to the wind, m/s. Range 0–20, default 0.
    pub wind_gust: f32,
    /// Aerodynamic coefficient: force per triangle = `air_drag` · area · ((v_wind − v)·n) n, in kg/(m²·s).
    /// Gives still air its resistance and wind its push. Range 0–5, default 0.1.
    pub air_drag: f32,
    /// k_damping of §3.5 per fixed step, in [0, 1]: damps velocities relative to the cloth's rigid motion,
    /// never the rigid motion itself. Converted per substep like a stiffness. Default 0.02.
    pub damping: f32,
    /// Bending constraint model (§4.1). Default [`BendingModel::Dihedral`].
    pub bending_model: BendingModel,
    /// Coulomb friction coefficient μ of line (16) against colliders, in [0, 2]. Default 0.4.
    pub friction: f32,
    /// Restitution coefficient e of line (16), in [0, 1]: fraction of the approach speed reflected. Default 0.
    pub restitution: f32,
    /// Tearing on/off (§5). Default off.
    pub tearing: bool,
    /// Stretch ratio l/l0 at which an edge tears (§5). Range 1.05–10, default 2.
    pub tear_threshold: f32,
    /// Self-collision of every cloth (§4.3): vertex–triangle constraints eq. (13) keeping the cloth thickness h.
    /// Default off.
    pub self_collision: bool,
    /// With self-collision: release the contacts that hold a tangled part of the cloth (one poked through
    /// another layer) on the wrong side, so the cloth pulls it back through (after \[BWK03\], see
    /// `selfcollide/untangle.rs`). Default on.
    pub untangle: bool,
    /// k_pressure of §4.4: a balloon's volume is held at k_pressure · V0. Range 0.1–5, default 1.
    pub pressure: f32,
    /// Project each constraint colour on all threads of the compute task pool; off = one thread. The
    /// result is identical either way. Default on.
    pub parallel: bool,
    /// Mass of a ball the user throws (§4.2), kg. Range 0.05–50, default 1.5.
    pub ball_mass: f32,
    /// Radius of a thrown ball, metres. Range 0.03–0.5, default 0.12.
    pub ball_radius: f32,
    /// Launch speed of a thrown ball, m/s. Range 1–40, default 14.
    pub ball_speed: f32,
}

impl Default for SimParams {
    fn default() -> Self {
        Self {
            iterations: 4,
            substeps: 8,
            rate_hz: 60.0,
            gravity: Vec3::new(0.0, -9.81, 0.0),
            wind: Vec3::ZERO,
            wind_gust: 0.0,
            air_drag: 0.1,
            damping: 0.02,
            bending_model: BendingModel::Dihedral,
            friction: 0.4,
            restitution: 0.0,
            tearing: false,
            tear_threshold: 2.0,
            self_collision: false,
            untangle: true,
            pressure: 1.0,
            parallel: true,
            ball_mass: 1.5,
            ball_radius: 0.12,
            ball_speed: 14.0,
        }
    }
}

impl SimParams {
    /// Valid ranges of the numeric fields, used to clamp whatever a user, a slider or a file supplies.
    pub const ITERATIONS: (u32, u32) = (1, 200);
    pub const SUBSTEPS: (u32, u32) = (1, 64);
    pub const RATE_HZ: (f32, f32) = (10.0, 240.0);

    /// A copy with every field forced into its documented range (non-finite values fall back to defaults),
    /// so no input can make the solver explode or divide by zero.
    pub fn sanitized(&self) -> Self {
        let d = Self::default();
        let finite_or = |x: f32, fallback: f32| if x.is_finite() { x } else { fallback };
        let vec_or = |x: Vec3, fallback: Vec3| if x.is_finite() { x } else { fallback };
        Self {
            iterations: self.iterations.clamp(Self::ITERATIONS.0, Self::ITERATIONS.1),
            substeps: self.substeps.clamp(Self::SUBSTEPS.0, Self::SUBSTEPS.1),
            rate_hz: finite_or(self.rate_hz, d.rate_hz).clamp(Self::RATE_HZ.0, Self::RATE_HZ.1),
            gravity: vec_or(self.gravity, d.gravity).clamp_length_max(100.0),
            wind: vec_or(self.wind, d.wind).clamp_length_max(100.0),
            wind_gust: finite_or(self.wind_gust, 0.0).clamp(0.0, 20.0),
            air_drag: finite_or(self.air_drag, d.air_drag).clamp(0.0, 5.0),
            damping: finite_or(self.damping, d.damping).clamp(0.0, 1.0),
            bending_model: self.bending_model,
            friction: finite_or(self.friction, d.friction).clamp(0.0, 2.0),
            restitution: finite_or(self.restitution, d.restitution).clamp(0.0, 1.0),
            tearing: self.tearing,
            tear_threshold: finite_or(self.tear_threshold, d.tear_threshold).clamp(1.05, 10.0),
            self_collision: self.self_collision,
            untangle: self.untangle,
            pressure: finite_or(self.pressure, d.pressure).clamp(0.1, 5.0),
            parallel: self.parallel,
            ball_mass: finite_or(self.ball_mass, d.ball_mass).clamp(0.05, 50.0),
            ball_radius: finite_or(self.ball_radius, d.ball_radius).clamp(0.03, 0.5),
            ball_speed: finite_or(self.ball_speed, d.ball_speed).clamp(1.0, 40.0),
        }
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
    fn sanitize_clamps_absurd_values() {
        let p = SimParams {
            iterations: 0,
            substeps: 10_000,
            rate_hz: f32::NAN,
            gravity: Vec3::splat(f32::INFINITY),
            damping: 7.0,
            ..default()
        }
        .sanitized();
        assert_eq!(p.iterations, 1);
        assert_eq!(p.substeps, 64);
        assert_eq!(p.rate_hz, 60.0);
        assert_eq!(p.gravity, SimParams::default().gravity);
        assert_eq!(p.damping, 1.0);
    }
}
