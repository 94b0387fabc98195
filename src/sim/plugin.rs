//! [`ClothSimPlugin`]: the paper's simulation loop (§3.1, lines (1)–(17)) as Bevy schedules.
//!
//! The host app chooses the schedule the cloth advances in ([`ClothSimPlugin::new`], `FixedUpdate` by default).
//! Each run of it, `advance_cloth` adds that schedule's elapsed time to the cloth's own clock and runs the
//! [`ClothStep`] schedule once per whole step of 1/[`SimParams::rate_hz`] it holds (at most
//! `MAX_STEPS_PER_RUN`), so the cloth keeps its own rate whatever the host's `Time<Fixed>` is, and never
//! changes it. A cloth step is [`ClothStepSystems::BeforeStep`] (inputs, kinematic targets, gusts), `substeps`
//! runs of [`PbdSubstep`] — the seven [`PbdStage`]s of lines (5)–(16) chained with Δt = step / substeps — and
//! [`ClothStepSystems::AfterStep`] (tearing, §5).

use std::time::{Duration, Instant};

use bevy::ecs::intern::Interned;
use bevy::ecs::schedule::{ScheduleLabel, SingleThreadedExecutor};
use bevy::prelude::*;

use super::colliders::{CollisionWorld, move_colliders};
use super::schedule::{
    AdvanceClothSystems, ClothStep, ClothStepSystems, ClothTimeAccumulator, MAX_STEPS_PER_RUN, PbdStage, PbdSubstep,
    ProjectionSystems, SanitizeParamsSystems, SimClock, SimControl, cloth_step,
};
use super::{SimParams, StageTimings, stages};

/// The core loop: its resources, the [`ClothStep`] and [`PbdSubstep`] schedules with the paper's stages
/// chained, and `advance_cloth` in the host's schedule. The concern plugins of
/// [`DrapePlugins`](crate::plugins::DrapePlugins) (self-collision, cloth–cloth contacts, tearing, tethers, air,
/// balloons) add their systems to these stages.
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
            .init_resource::<CollisionWorld>()
            .init_resource::<stages::HeldBodies>();
        add_chained_schedules(app);
        app.add_systems(
            PbdSubstep,
            (
                stages::external_forces.in_set(PbdStage::ExternalForces),
                stages::damping.in_set(PbdStage::Damping),
                (move_colliders, stages::move_bodies.after(move_colliders), stages::predict).in_set(PbdStage::Predict),
                (stages::generate_collisions, stages::hold_on_bodies).chain().in_set(PbdStage::GenerateCollisions),
                (stages::lend_masses_to_holds, stages::project).chain().in_set(ProjectionSystems::Constraints),
                (stages::return_lent_masses, stages::settle_held_bodies, stages::push_out)
                    .chain()
                    .in_set(ProjectionSystems::Finish),
                stages::update_velocity.in_set(PbdStage::UpdateVelocity),
                (stages::velocity_response, stages::couple_bodies).chain().in_set(PbdStage::VelocityResponse),
            ),
        )
        .add_systems(
            ClothStep,
            (stages::ease_stiffness.in_set(ClothStepSystems::BeforeStep), run_substeps.in_set(ClothStepSystems::Step)),
        )
        .add_systems(self.schedule, advance_cloth.in_set(AdvanceClothSystems))
        .add_systems(PreUpdate, sanitize_params.in_set(SanitizeParamsSystems));
    }
}

/// The [`ClothStep`] and [`PbdSubstep`] schedules, single-threaded, with their sets in the paper's order.
fn add_chained_schedules(app: &mut App) {
    app.init_schedule(PbdSubstep).init_schedule(ClothStep);
    // the stages are chains: a multi-threaded executor only adds scheduling overhead per (sub)step
    for label in [PbdSubstep.intern(), ClothStep.intern()] {
        app.edit_schedule(label, |schedule| {
            schedule.set_executor(SingleThreadedExecutor::default());
        });
    }
    use PbdStage::*;
    let stages = (ExternalForces, Damping, Predict, GenerateCollisions, Project, UpdateVelocity, VelocityResponse);
    use ProjectionSystems::*;
    let projections = (Constraints, Tethers, ClothContacts, Finish);
    app.configure_sets(PbdSubstep, (stages.chain(), projections.chain().in_set(Project)));
    use ClothStepSystems::*;
    app.configure_sets(ClothStep, (Start, BeforeStep, Step, AfterStep, HandOver).chain());
}

/// Keeps [`SimParams`] inside their documented ranges, whoever wrote them.
pub(crate) fn sanitize_params(mut params: ResMut<SimParams>) {
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

/// Runs [`ClothStep`] once per whole cloth step in the time the host schedule's `Time` advanced (held back
/// while paused; one step per request while paused).
pub(crate) fn advance_cloth(world: &mut World) {
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
pub(crate) fn run_cloth_step(world: &mut World) {
    world.resource_mut::<SimClock>().step_dt = cloth_step(world.resource::<SimParams>()).as_secs_f32();
    world.run_schedule(ClothStep);
}

/// One cloth step, line (4)–(17): runs [`PbdSubstep`] `substeps` times with Δt = step / substeps, and records
/// the wall time of the step.
pub(crate) fn run_substeps(world: &mut World) {
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
