//! The paper's simulation loop (§3.1, lines (1)–(17)) as a Bevy schedule.
//!
//! Every fixed step (`FixedUpdate`, [`SimParams::rate_hz`]) the exclusive system [`run_substeps`] runs the
//! [`PbdSubstep`] schedule `substeps` times with Δt = fixed Δt / substeps. That schedule is seven system sets
//! chained in the paper's order:
//!
//! | line | stage | system → kernel |
//! |---|---|---|
//! | (5) | [`PbdStage::ExternalForces`] | [`stages::external_forces`] → [`integrate::apply_gravity`], [`integrate::apply_aerodynamics_by_color`], [`rigid::RigidBody::apply_gravity`] |
//! | (6) | [`PbdStage::Damping`] | [`stages::damping`] → [`damping::damp_velocities`] (§3.5) |
//! | (7) | [`PbdStage::Predict`] | [`collide::move_colliders`] → [`collide::ColliderMotion::pose`]; [`stages::move_bodies`] → [`rigid::RigidBody::integrate`], [`rigid::RigidBody::collide_with_plane`]; [`stages::predict`] → [`integrate::predict`], [`constraints::attach::apply_attachments`] (§3.6) |
//! | (8) | [`PbdStage::GenerateCollisions`] | [`stages::generate_collisions`] → [`collide::contacts::generate_contacts`] in each collider's frame ([`collide::swept`], §3.4), body holds (§4.2), [`selfcollide::find_self_contacts`] (§4.3) |
//! | (9)–(11) | [`PbdStage::Project`] | [`stages::project`] → [`constraints::project_constraints`] colour by colour on the task pool (§3.2–3.3, §4.1–4.4, App. A) |
//! | (12)–(15) | [`PbdStage::UpdateVelocity`] | [`stages::update_velocity`] → [`integrate::update_velocities`] |
//! | (16) | [`PbdStage::VelocityResponse`] | [`stages::velocity_response`] → [`collide::response::apply_friction_restitution`]; [`stages::couple_bodies`] → [`rigid::RigidBody::apply_impulse`] with −m_i (Δp_i/Δt + Δv_i) (§4.2) |
//!
//! After each step [`stages::tear`] splits overstretched edges (§5, [`tearing`]).
//!
//! Lines (1)–(3) are the cloth builder ([`cloth::ClothBundle::from_mesh`]); line (4)/(17) is the fixed-step loop.

pub mod cloth;
pub mod collide;
pub mod constraints;
pub mod damping;
pub mod icosphere;
pub mod integrate;
pub mod lanes;
pub mod metrics;
pub mod parallel;
pub mod params;
pub mod rigid;
pub mod selfcollide;
pub mod stages;
pub mod tearing;
pub mod timings;
pub mod topology;
pub mod wind;

use std::time::Instant;

use bevy::ecs::schedule::ScheduleLabel;
use bevy::prelude::*;

pub use params::SimParams;
pub use timings::StageTimings;

/// The schedule holding one pass of lines (5)–(16); run `substeps` times per fixed step.
#[derive(ScheduleLabel, Debug, Clone, PartialEq, Eq, Hash)]
pub struct PbdSubstep;

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

/// Sets of `FixedUpdate` around the step: input and kinematic targets before it, topology changes after it.
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClothStepSystems {
    BeforeStep,
    Step,
    AfterStep,
}

/// Simulated time and the current substep Δt.
#[derive(Resource, Clone, Copy, Debug, Default)]
pub struct SimClock {
    /// Δt of the substep being run, seconds.
    pub dt: f32,
    /// Simulated time at the start of the substep being run, seconds.
    pub time: f32,
    /// Fixed steps completed.
    pub steps: u64,
    /// Index of the substep being run within its step.
    pub substep: u32,
}

/// Pause and single-step requests.
#[derive(Resource, Clone, Copy, Debug, Default)]
pub struct SimControl {
    pub paused: bool,
    /// Steps to run while paused.
    pub step_requests: u32,
}

/// The solver: resources, the [`PbdSubstep`] schedule with its chained stages, and the substep runner.
pub struct ClothSimPlugin;

impl Plugin for ClothSimPlugin {
    fn build(&self, app: &mut App) {
        let params = app.world().get_resource::<SimParams>().cloned().unwrap_or_default();
        app.insert_resource(Time::<Fixed>::from_hz(params.rate_hz as f64))
            .insert_resource(params)
            .init_resource::<SimClock>()
            .init_resource::<SimControl>()
            .init_resource::<StageTimings>()
            .init_resource::<collide::CollisionWorld>()
            .init_resource::<wind::Wind>()
            .init_resource::<wind::GustSeed>()
            .init_schedule(PbdSubstep)
            // the stages are a chain: a multi-threaded executor only adds scheduling overhead per substep
            .edit_schedule(PbdSubstep, |schedule| {
                schedule.set_executor(bevy::ecs::schedule::SingleThreadedExecutor::default());
            })
            .configure_sets(
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
                    (collide::move_colliders, stages::move_bodies, stages::predict).in_set(PbdStage::Predict),
                    stages::generate_collisions.in_set(PbdStage::GenerateCollisions),
                    stages::project.in_set(PbdStage::Project),
                    stages::update_velocity.in_set(PbdStage::UpdateVelocity),
                    (stages::velocity_response, stages::couple_bodies).chain().in_set(PbdStage::VelocityResponse),
                ),
            )
            .configure_sets(
                FixedUpdate,
                (ClothStepSystems::BeforeStep, ClothStepSystems::Step, ClothStepSystems::AfterStep).chain(),
            )
            .add_systems(
                FixedUpdate,
                (
                    (wind::reset_gust_on_load, wind::update_gust, stages::ease_stiffness)
                        .chain()
                        .in_set(ClothStepSystems::BeforeStep),
                    run_substeps.in_set(ClothStepSystems::Step),
                    stages::tear.in_set(ClothStepSystems::AfterStep).in_set(PbdStage::Tearing),
                ),
            )
            .add_systems(PreUpdate, sync_fixed_rate);
    }
}

/// Keeps `Time<Fixed>` at [`SimParams::rate_hz`] and the parameters inside their documented ranges.
pub fn sync_fixed_rate(mut params: ResMut<SimParams>, mut fixed: ResMut<Time<Fixed>>) {
    if !params.is_changed() {
        return;
    }
    let clean = params.sanitized();
    if clean != *params {
        *params.bypass_change_detection() = clean;
    }
    let timestep = std::time::Duration::from_secs_f64(1.0 / params.rate_hz as f64);
    if fixed.timestep() != timestep {
        fixed.set_timestep(timestep);
    }
}

/// One fixed step, line (4)–(17): runs [`PbdSubstep`] `substeps` times with Δt = fixed Δt / substeps, and
/// records the wall time of the step.
pub fn run_substeps(world: &mut World) {
    {
        let mut control = world.resource_mut::<SimControl>();
        if control.paused {
            if control.step_requests == 0 {
                return;
            }
            control.step_requests -= 1;
        }
    }
    let params = world.resource::<SimParams>().sanitized();
    let dt = world.resource::<Time<Fixed>>().timestep().as_secs_f32() / params.substeps as f32;
    let start = Instant::now();
    world.resource_mut::<StageTimings>().begin_step();
    for substep in 0..params.substeps {
        let mut clock = world.resource_mut::<SimClock>();
        (clock.dt, clock.substep) = (dt, substep);
        world.run_schedule(PbdSubstep);
        world.resource_mut::<SimClock>().time += dt;
    }
    world.resource_mut::<SimClock>().steps += 1;
    world.resource_mut::<StageTimings>().end_step(start.elapsed());
}
