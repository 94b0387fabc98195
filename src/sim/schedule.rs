//! The schedule's vocabulary: the [`ClothStep`] and [`PbdSubstep`] schedules, the paper's stages
//! ([`PbdStage`], §3.1 lines (5)–(16)) and the step's sets ([`ClothStepSystems`]), the cloth's clock and its
//! pause control. The systems use these types; [`ClothSimPlugin`](super::ClothSimPlugin) wires them.

use std::time::Duration;

use bevy::ecs::schedule::ScheduleLabel;
use bevy::prelude::*;

use super::SimParams;

/// The schedule holding one pass of lines (5)–(16); run `substeps` times per cloth step.
#[derive(ScheduleLabel, Debug, Clone, PartialEq, Eq, Hash)]
pub struct PbdSubstep;

/// The schedule of one cloth step: [`ClothStepSystems`] in order. Add systems that must see every step (a
/// kinematic target, a force) to its `BeforeStep` set.
#[derive(ScheduleLabel, Debug, Clone, PartialEq, Eq, Hash)]
pub struct ClothStep;

/// The stages of drape's step, in the paper's order. The first seven are the system sets of [`PbdSubstep`];
/// all of them are keys of [`StageTimings`](super::StageTimings).
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PbdStage {
    /// Line (5): external forces (gravity, air).
    ExternalForces,
    /// Line (6): §3.5 damping.
    Damping,
    /// Line (7): prediction p = x + Δt v, attachments (§3.6).
    Predict,
    /// Line (8): collision constraints from the rays x→p (§3.4).
    GenerateCollisions,
    /// Lines (9)–(11): iterated Gauss–Seidel projection.
    Project,
    /// Lines (12)–(15): v = (p − x)/Δt, x = p.
    UpdateVelocity,
    /// Line (16): friction and restitution.
    VelocityResponse,
    /// After the step, §5: splitting vertices of edges stretched beyond the threshold.
    Tearing,
    /// After the step: copying positions and normals into the render mesh.
    MeshSync,
}

impl PbdStage {
    /// Every stage, in order.
    pub const ALL: [PbdStage; 9] = [
        PbdStage::ExternalForces,
        PbdStage::Damping,
        PbdStage::Predict,
        PbdStage::GenerateCollisions,
        PbdStage::Project,
        PbdStage::UpdateVelocity,
        PbdStage::VelocityResponse,
        PbdStage::Tearing,
        PbdStage::MeshSync,
    ];

    /// Stable snake_case name (JSON keys, the panel).
    pub fn name(self) -> &'static str {
        match self {
            PbdStage::ExternalForces => "external_forces",
            PbdStage::Damping => "damping",
            PbdStage::Predict => "predict",
            PbdStage::GenerateCollisions => "generate_collisions",
            PbdStage::Project => "project",
            PbdStage::UpdateVelocity => "update_velocity",
            PbdStage::VelocityResponse => "velocity_response",
            PbdStage::Tearing => "tearing",
            PbdStage::MeshSync => "mesh_sync",
        }
    }
}

/// The order of the projections within [`PbdStage::Project`] (lines (9)–(11)), chained, so that each concern
/// plugin puts its own where it belongs: the cloth's constraints (§3.2–3.3, §4.1–4.4), the tethers, the contacts
/// between cloths, then the end of the stage (held vertices' masses back, the push out of colliders).
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProjectionSystems {
    /// Each cloth's own constraints, iterated.
    Constraints,
    /// Long-range attachments (`TethersPlugin`).
    Tethers,
    /// Contacts between cloths (`ClothContactsPlugin`).
    ClothContacts,
    /// The held vertices' own masses back, and the push out of colliders.
    Finish,
}

/// The sets of the [`ClothStep`] schedule, chained: the state as the last tick left it, inputs and kinematic
/// targets, the substeps, topology changes, hand-over to other engines.
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClothStepSystems {
    /// The state the last tick left — the cloth's and the engines' stepping beside it — before this step changes
    /// anything: where recordings take their snapshots.
    Start,
    /// Inputs, kinematic targets and gusts, before the substeps.
    BeforeStep,
    /// The substeps (`run_substeps`).
    Step,
    /// Topology changes: tearing (§5); the step's end state, as recordings see it.
    AfterStep,
    /// Bodies handed to the engine that hosts them (Avian's, with the `avian` feature), after everything else
    /// has seen where the step left them.
    HandOver,
}

/// The system set of `advance_cloth` in the host's schedule, to order the
/// host's systems around the cloth.
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AdvanceClothSystems;

/// Most cloth steps one run of the host schedule may take: after a long stall the cloth drops the backlog
/// instead of spending ever longer catching up.
pub(crate) const MAX_STEPS_PER_RUN: u32 = 4;

/// Simulated time and the current substep Δt.
#[derive(Resource, Clone, Copy, Debug, Default)]
pub struct SimClock {
    /// Δt of the substep being run, seconds.
    pub dt: f32,
    /// Length of the cloth step being run, 1/[`SimParams::rate_hz`], seconds.
    pub step_dt: f32,
    /// Simulated time at the start of the substep being run, seconds. Double precision: summed in f32, Δt's
    /// rounding would slow the clock by a fraction of a percent after minutes and stop it after hours.
    pub time: f64,
    /// Cloth steps completed.
    pub steps: u64,
    /// Index of the substep being run within its step.
    pub substep: u32,
    /// Substeps of the step being run.
    pub substeps: u32,
}

/// Pause and single-step requests.
#[derive(Resource, Clone, Copy, Debug, Default)]
pub struct SimControl {
    /// Whether the simulation is paused.
    pub paused: bool,
    /// Steps to run while paused.
    pub step_requests: u32,
}

/// The host schedule's time not yet simulated, less than one cloth step after each run.
#[derive(Resource, Clone, Copy, Debug, Default)]
pub(crate) struct ClothTimeAccumulator(pub Duration);

/// The system set of `sanitize_params` in `PreUpdate`: systems that replace
/// [`SimParams`] (loading a scene) run before it.
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SanitizeParamsSystems;

/// The length of one cloth step, 1/[`SimParams::rate_hz`] (sanitized).
pub(crate) fn cloth_step(params: &SimParams) -> Duration {
    Duration::from_secs_f64(1.0 / params.sanitized().rate_hz as f64)
}
