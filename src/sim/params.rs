//! Global simulation parameters: the solver (§3.1–§3.3), damping (§3.5), collisions (§3.4), environment.
//!
//! Per-cloth material values (stiffness, density, thickness) live in [`crate::sim::cloth::ClothMaterial`].

use bevy::prelude::*;
use serde::{Deserialize, Serialize};

use super::constraints::bend::BendingModel;
use super::constraints::tether::TetherLengths;
use super::knobs;

/// How the constraints' material enters the projection.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Solver {
    /// The paper's: stiffness k ∈ [0, 1] per constraint, linearised over the iterations k' = 1 − (1 − k)^(1/n)
    /// (§3.3). The material still depends on the substep count.
    #[default]
    Pbd,
    /// XPBD (Macklin, Müller, Chentanez 2016): a compliance α in physical units per constraint and a Lagrange
    /// multiplier λ kept over the iterations of a substep, Δλ = (−C − α̃λ) / (Σ wᵢ|∇Cᵢ|² + α̃), α̃ = α/Δt². The
    /// material is the same whatever the iteration and substep counts once the passes converge: stiff edges
    /// left short of convergence stretch as the paper's do, unless [`SimParams::global_stretch`] solves them
    /// together (`drape fidelity`, docs/fidelity.md).
    Xpbd,
}

/// Every global knob of the solver. The numeric ones have their unit, range, default and meaning in the tables
/// of [`knobs`] ([`SimParams::KNOBS`], [`SimParams::VECTOR_KNOBS`]).
#[derive(Resource, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SimParams {
    /// Solver iterations per substep, `solverIterations` of line (9): [`knobs::ITERATIONS`].
    #[serde(deserialize_with = "crate::validate::iterations")]
    pub iterations: u32,
    /// Substeps per fixed step: the whole loop (5)–(16) runs this many times with Δt = 1/(rate·substeps):
    /// [`knobs::SUBSTEPS`].
    #[serde(deserialize_with = "crate::validate::substeps")]
    pub substeps: u32,
    /// Fixed-step rate in Hz (the `FixedUpdate` timestep): [`knobs::RATE_HZ`].
    #[serde(deserialize_with = "crate::validate::rate_hz")]
    pub rate_hz: f32,
    /// Gravitational acceleration g of line (5), m/s²: [`knobs::GRAVITY`].
    #[serde(deserialize_with = "crate::validate::gravity")]
    pub gravity: Vec3,
    /// Wind velocity in m/s, felt through the aerodynamic force on each triangle (line 5): [`knobs::WIND`].
    #[serde(deserialize_with = "crate::validate::wind")]
    pub wind: Vec3,
    /// Amplitude of random gusts added to the wind, m/s: [`knobs::WIND_GUST`].
    #[serde(deserialize_with = "crate::validate::wind_gust")]
    pub wind_gust: f32,
    /// Aerodynamic coefficient, kg/(m²·s): [`knobs::AIR_DRAG`].
    #[serde(deserialize_with = "crate::validate::air_drag")]
    pub air_drag: f32,
    /// k_damping of §3.5 per fixed step, converted per substep like a stiffness: [`knobs::DAMPING`].
    #[serde(deserialize_with = "crate::validate::damping")]
    pub damping: f32,
    /// Bending constraint model (§4.1). Default [`BendingModel::Dihedral`].
    pub bending_model: BendingModel,
    /// Coulomb friction coefficient μ of line (16) against colliders: [`knobs::FRICTION`].
    #[serde(deserialize_with = "crate::validate::friction")]
    pub friction: f32,
    /// Restitution coefficient e of line (16): [`knobs::RESTITUTION`].
    #[serde(deserialize_with = "crate::validate::restitution")]
    pub restitution: f32,
    /// Tearing on/off (§5). Default off.
    pub tearing: bool,
    /// Stretch ratio l/l0 at which an edge tears (§5): [`knobs::TEAR_THRESHOLD`].
    #[serde(deserialize_with = "crate::validate::tear_threshold")]
    pub tear_threshold: f32,
    /// The colliders' edges and corners against the cloths' triangles (§4.2), on top of the vertex contacts: a
    /// box corner or a mesh edge cannot poke between three vertices. Default off (it costs a search per
    /// substep; docs/collisions.md).
    pub collider_edges: bool,
    /// Self-collision of every cloth (§4.3): vertex–triangle constraints eq. (13) keeping the cloth thickness h.
    /// Default off.
    pub self_collision: bool,
    /// With self-collision: release the contacts that hold a tangled part of the cloth (one poked through
    /// another layer) on the wrong side, so the cloth pulls it back through (after \[BWK03\], see
    /// `selfcollide/untangle.rs`). Default on.
    pub untangle: bool,
    /// k_pressure of §4.4: a balloon's volume is held at k_pressure · V0: [`knobs::PRESSURE`].
    #[serde(deserialize_with = "crate::validate::pressure")]
    pub pressure: f32,
    /// Project each constraint colour on all threads of the compute task pool; off = one thread. The
    /// result is identical either way. Default on.
    pub parallel: bool,
    /// Long-range attachments (tethers, Kim et al. 2012) on every cloth whose preset does not say otherwise:
    /// each free vertex stays within its rest distance of its nearest attached vertices
    /// ([`constraints::tether`](super::constraints::tether)). Default off, as in the paper.
    pub tethers: bool,
    /// How a tether's rest length is measured. Default [`TetherLengths::Geodesic`].
    pub tether_lengths: TetherLengths,
    /// How much further than its rest length a tether lets its vertex go, as a fraction of it:
    /// [`knobs::TETHER_SLACK`].
    #[serde(deserialize_with = "crate::validate::tether_slack")]
    pub tether_slack: f32,
    /// Cloth against cloth: every cloth's vertices kept off every other cloth's triangles
    /// ([`cloth_contacts`](super::cloth_contacts)). Default off.
    pub cloth_collision: bool,
    /// How stretch and bending respond: the paper's stiffness or XPBD's compliance, for every cloth whose preset
    /// does not choose. Default [`Solver::Pbd`].
    pub solver: Solver,
    /// Under XPBD, the stretch constraints solved together each iteration, one Gauss–Newton step by conjugate
    /// gradients ([`constraints::global`](super::constraints::global)), instead of swept one by one: stiff edges
    /// stretch as their compliance says at any iteration and substep count, at the price of tens of sweeps per
    /// iteration, on one thread. Default off.
    pub global_stretch: bool,
    /// Under XPBD, the bending constraints likewise solved together (the dihedral angle signed, smooth through
    /// flat), except where the hinges yield or leave folds (`bend::Folds`): stiff bending converges as stiff
    /// stretch does. Default off.
    pub global_bending: bool,
}

impl Default for SimParams {
    fn default() -> Self {
        Self {
            iterations: knobs::ITERATIONS.default_count(),
            substeps: knobs::SUBSTEPS.default_count(),
            rate_hz: knobs::RATE_HZ.default,
            gravity: knobs::GRAVITY.default,
            wind: knobs::WIND.default,
            wind_gust: knobs::WIND_GUST.default,
            air_drag: knobs::AIR_DRAG.default,
            damping: knobs::DAMPING.default,
            bending_model: BendingModel::Dihedral,
            friction: knobs::FRICTION.default,
            restitution: knobs::RESTITUTION.default,
            tearing: false,
            tear_threshold: knobs::TEAR_THRESHOLD.default,
            collider_edges: false,
            self_collision: false,
            untangle: true,
            pressure: knobs::PRESSURE.default,
            parallel: true,
            tethers: false,
            tether_lengths: TetherLengths::Geodesic,
            tether_slack: knobs::TETHER_SLACK.default,
            cloth_collision: false,
            solver: Solver::Pbd,
            global_stretch: false,
            global_bending: false,
        }
    }
}

impl SimParams {
    /// The scalar knobs, in the order of the fields.
    pub const KNOBS: &[knobs::Knob] = &[
        knobs::ITERATIONS,
        knobs::SUBSTEPS,
        knobs::RATE_HZ,
        knobs::WIND_GUST,
        knobs::AIR_DRAG,
        knobs::DAMPING,
        knobs::FRICTION,
        knobs::RESTITUTION,
        knobs::TEAR_THRESHOLD,
        knobs::PRESSURE,
        knobs::TETHER_SLACK,
    ];
    /// The vector knobs.
    pub const VECTOR_KNOBS: &[knobs::VectorKnob] = &[knobs::GRAVITY, knobs::WIND];

    /// A copy with every numeric field forced into its knob's range (non-finite values fall back to the knob's
    /// default), so no input can make the solver explode or divide by zero.
    pub fn sanitized(&self) -> Self {
        Self {
            iterations: knobs::ITERATIONS.clamp_count(self.iterations),
            substeps: knobs::SUBSTEPS.clamp_count(self.substeps),
            rate_hz: knobs::RATE_HZ.clamp(self.rate_hz),
            gravity: knobs::GRAVITY.clamp(self.gravity),
            wind: knobs::WIND.clamp(self.wind),
            wind_gust: knobs::WIND_GUST.clamp(self.wind_gust),
            air_drag: knobs::AIR_DRAG.clamp(self.air_drag),
            damping: knobs::DAMPING.clamp(self.damping),
            friction: knobs::FRICTION.clamp(self.friction),
            restitution: knobs::RESTITUTION.clamp(self.restitution),
            tear_threshold: knobs::TEAR_THRESHOLD.clamp(self.tear_threshold),
            pressure: knobs::PRESSURE.clamp(self.pressure),
            tether_slack: knobs::TETHER_SLACK.clamp(self.tether_slack),
            ..self.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
