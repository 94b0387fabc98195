//! [`ClothSimPlugin`]: the paper's simulation loop (§3.1, lines (1)–(17)) as Bevy schedules.
//!
//! The host app chooses the schedule the cloth advances in ([`ClothSimPlugin::new`], `FixedUpdate` by default).
//! Each run of it, [`advance_cloth`] adds that schedule's elapsed time to the cloth's own clock and runs the
//! [`ClothStep`] schedule once per whole step of 1/[`SimParams::rate_hz`] it holds (at most
//! [`MAX_STEPS_PER_RUN`]), so the cloth keeps its own rate whatever the host's `Time<Fixed>` is, and never
//! changes it. A cloth step is [`ClothStepSystems::BeforeStep`] (inputs, kinematic targets, gusts), `substeps`
//! runs of [`PbdSubstep`] — the seven [`PbdStage`]s of lines (5)–(16) chained with Δt = step / substeps — and
//! [`ClothStepSystems::AfterStep`] (tearing, §5).

use std::time::{Duration, Instant};

use bevy::ecs::intern::Interned;
use bevy::ecs::schedule::{ScheduleLabel, SingleThreadedExecutor};
use bevy::prelude::*;

use super::{SimParams, StageTimings, cloth_contacts, colliders, stages, tethers};

/// The schedule holding one pass of lines (5)–(16); run `substeps` times per cloth step.
#[derive(ScheduleLabel, Debug, Clone, PartialEq, Eq, Hash)]
pub struct PbdSubstep;

/// The schedule of one cloth step: [`ClothStepSystems`] in order. Add systems that must see every step (a
/// kinematic target, a force) to its `BeforeStep` set.
#[derive(ScheduleLabel, Debug, Clone, PartialEq, Eq, Hash)]
pub struct ClothStep;

/// The stages of drape's step, in the paper's order. The first seven are the system sets of [`PbdSubstep`];
/// all of them are keys of [`StageTimings`].
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

/// The sets of the [`ClothStep`] schedule, chained: the state as the last tick left it, inputs and kinematic
/// targets, the substeps, topology changes, hand-over to other engines.
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClothStepSystems {
    /// The state the last tick left — the cloth's and the engines' stepping beside it — before this step changes
    /// anything: where recordings take their snapshots.
    Start,
    /// Inputs, kinematic targets and gusts, before the substeps.
    BeforeStep,
    /// The substeps ([`run_substeps`]).
    Step,
    /// Topology changes: tearing (§5); the step's end state, as recordings see it.
    AfterStep,
    /// Bodies handed to the engine that hosts them (Avian's, with the `avian` feature), after everything else
    /// has seen where the step left them.
    HandOver,
}

/// The system set of [`advance_cloth`] in the host's schedule, to order the host's systems around the cloth.
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AdvanceClothSystems;

/// Most cloth steps one run of the host schedule may take: after a long stall the cloth drops the backlog
/// instead of spending ever longer catching up.
pub const MAX_STEPS_PER_RUN: u32 = 4;

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
pub struct ClothTimeAccumulator(pub Duration);

/// The solver: its resources, the [`ClothStep`] and [`PbdSubstep`] schedules with their chained stages, and
/// [`advance_cloth`] in the host's schedule.
pub struct ClothSimPlugin {
    schedule: Interned<dyn ScheduleLabel>,
}

impl ClothSimPlugin {
    /// The cloth advances in `schedule` (for example `FixedUpdate` or `Update`) by the time that schedule's
    /// `Time` says has passed, in steps of its own rate [`SimParams::rate_hz`].
    pub fn new(schedule: impl ScheduleLabel) -> Self {
        Self { schedule: schedule.intern() }
    }
}

impl Default for ClothSimPlugin {
    fn default() -> Self {
        Self::new(FixedUpdate)
    }
}

impl Plugin for ClothSimPlugin {
    fn build(&self, app: &mut App) {
        let params = app.world().get_resource::<SimParams>().cloned().unwrap_or_default();
        app.insert_resource(params.sanitized())
            .init_resource::<SimClock>()
            .init_resource::<SimControl>()
            .init_resource::<ClothTimeAccumulator>()
            .init_resource::<StageTimings>()
            .init_resource::<colliders::CollisionWorld>()
            .init_resource::<cloth_contacts::ClothContacts>()
            .init_resource::<stages::Wind>()
            .init_resource::<stages::GustSeed>()
            .init_schedule(PbdSubstep)
            .init_schedule(ClothStep);
        // the stages are chains: a multi-threaded executor only adds scheduling overhead per (sub)step
        for label in [PbdSubstep.intern(), ClothStep.intern()] {
            app.edit_schedule(label, |schedule| {
                schedule.set_executor(SingleThreadedExecutor::default());
            });
        }
        app.configure_sets(
            PbdSubstep,
            (
                PbdStage::ExternalForces,
                PbdStage::Damping,
                PbdStage::Predict,
                PbdStage::GenerateCollisions,
                PbdStage::Project,
                PbdStage::UpdateVelocity,
                PbdStage::VelocityResponse,
            )
                .chain(),
        )
        .add_systems(
            PbdSubstep,
            (
                stages::external_forces.in_set(PbdStage::ExternalForces),
                stages::damping.in_set(PbdStage::Damping),
                (colliders::move_colliders, stages::move_bodies, stages::predict).in_set(PbdStage::Predict),
                (stages::generate_collisions, stages::hold_on_bodies, cloth_contacts::find_cloth_contacts)
                    .chain()
                    .in_set(PbdStage::GenerateCollisions),
                (
                    stages::lend_masses_to_holds,
                    stages::project,
                    tethers::project_tethers,
                    cloth_contacts::project_cloth_contacts,
                    stages::return_lent_masses,
                    stages::push_out,
                )
                    .chain()
                    .in_set(PbdStage::Project),
                stages::update_velocity.in_set(PbdStage::UpdateVelocity),
                (stages::velocity_response, stages::couple_bodies).chain().in_set(PbdStage::VelocityResponse),
            ),
        )
        .configure_sets(
            ClothStep,
            (
                ClothStepSystems::Start,
                ClothStepSystems::BeforeStep,
                ClothStepSystems::Step,
                ClothStepSystems::AfterStep,
                ClothStepSystems::HandOver,
            )
                .chain(),
        )
        .add_systems(
            ClothStep,
            (
                (stages::reset_gust_on_load, stages::update_gust, stages::ease_stiffness, tethers::refresh_tethers)
                    .chain()
                    .in_set(ClothStepSystems::BeforeStep),
                run_substeps.in_set(ClothStepSystems::Step),
                stages::tear.in_set(ClothStepSystems::AfterStep).in_set(PbdStage::Tearing),
            ),
        )
        .add_systems(self.schedule, advance_cloth.in_set(AdvanceClothSystems))
        .add_systems(PreUpdate, sanitize_params.in_set(SanitizeParamsSystems));
    }
}

/// The system set of [`sanitize_params`] in `PreUpdate`: systems that replace [`SimParams`] (loading a scene)
/// run before it.
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SanitizeParamsSystems;

/// Keeps [`SimParams`] inside their documented ranges, whoever wrote them.
pub fn sanitize_params(mut params: ResMut<SimParams>) {
    if !params.is_changed() {
        return;
    }
    let clean = params.sanitized();
    if clean != *params {
        *params.bypass_change_detection() = clean;
    }
}

/// For a host that wants one cloth step per `FixedUpdate` run (the demo, the headless runner): keeps the
/// host's `Time<Fixed>` at [`SimParams::rate_hz`]. The plugin never adds this itself.
pub fn match_fixed_timestep_to_cloth(params: Res<SimParams>, mut fixed: ResMut<Time<Fixed>>) {
    let step = cloth_step(&params);
    if params.is_changed() && fixed.timestep() != step {
        fixed.set_timestep(step);
    }
}

/// The length of one cloth step, 1/[`SimParams::rate_hz`] (sanitized).
pub fn cloth_step(params: &SimParams) -> Duration {
    Duration::from_secs_f64(1.0 / params.sanitized().rate_hz as f64)
}

/// Runs [`ClothStep`] once per whole cloth step in the time the host schedule's `Time` advanced (held back
/// while paused; one step per request while paused).
pub fn advance_cloth(world: &mut World) {
    let step = cloth_step(world.resource::<SimParams>());
    let delta = world.resource::<Time>().delta();
    let steps = {
        let mut control = world.resource_mut::<SimControl>();
        if control.paused {
            let requested = control.step_requests.min(1);
            control.step_requests -= requested;
            world.resource_mut::<ClothTimeAccumulator>().0 = Duration::ZERO;
            requested
        } else {
            let mut pending = world.resource_mut::<ClothTimeAccumulator>();
            pending.0 += delta;
            let due = (pending.0.as_nanos() / step.as_nanos().max(1)).min(MAX_STEPS_PER_RUN as u128) as u32;
            pending.0 = pending.0.saturating_sub(step * due).min(step);
            due
        }
    };
    for _ in 0..steps {
        run_cloth_step(world);
    }
}

/// One cloth step of 1/[`SimParams::rate_hz`], now: the [`ClothStep`] schedule.
pub fn run_cloth_step(world: &mut World) {
    world.resource_mut::<SimClock>().step_dt = cloth_step(world.resource::<SimParams>()).as_secs_f32();
    world.run_schedule(ClothStep);
}

/// One cloth step, line (4)–(17): runs [`PbdSubstep`] `substeps` times with Δt = step / substeps, and records
/// the wall time of the step.
pub fn run_substeps(world: &mut World) {
    let params = world.resource::<SimParams>().sanitized();
    let dt = world.resource::<SimClock>().step_dt / params.substeps as f32;
    let start = Instant::now();
    world.resource_mut::<StageTimings>().begin_step();
    for substep in 0..params.substeps {
        let mut clock = world.resource_mut::<SimClock>();
        (clock.dt, clock.substep, clock.substeps) = (dt, substep, params.substeps);
        world.run_schedule(PbdSubstep);
        world.resource_mut::<SimClock>().time += f64::from(dt);
    }
    world.resource_mut::<SimClock>().steps += 1;
    world.resource_mut::<StageTimings>().end_step(start.elapsed());
}
