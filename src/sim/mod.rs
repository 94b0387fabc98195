//! The paper's simulation loop (§3.1, lines (1)–(17)) as Bevy schedules: the types in [`schedule`], the core
//! loop's wiring in [`plugin`], and one plugin per concern that adds its systems to the stages
//! ([`SelfCollisionPlugin`], [`ClothContactsPlugin`], [`TearingPlugin`], [`TethersPlugin`],
//! [`AerodynamicsPlugin`], [`BalloonPlugin`], [`SleepPlugin`]).
//!
//! Every cloth step (1/[`SimParams::rate_hz`], advanced by `plugin::advance_cloth` in the host's schedule) the
//! exclusive system `plugin::run_substeps` runs the [`PbdSubstep`] schedule `substeps` times with
//! Δt = step / substeps. That schedule is seven system sets chained in the paper's order:
//!
//! | line | stage | system → kernel |
//! |---|---|---|
//! | (5) | [`PbdStage::ExternalForces`] | `stages::external_forces` → `integrate::apply_gravity`, `rigid::ClothRigidBody::apply_gravity`; [`aerodynamics::apply_air`] → `integrate::apply_aerodynamics_by_color` |
//! | (6) | [`PbdStage::Damping`] | `stages::damping` → [`damping::damp_velocities`] (§3.5) |
//! | (7) | [`PbdStage::Predict`] | `colliders::move_colliders` → [`collide::ColliderMotion::pose`]; `stages::move_bodies` → [`rigid::ClothRigidBody::integrate`], [`rigid::ClothRigidBody::collide_with_plane`]; `stages::predict` → [`integrate::predict`], `constraints::attach::apply_attachments` (§3.6) |
//! | (8) | [`PbdStage::GenerateCollisions`] | `stages::generate_collisions` → `collide::contacts::generate_step_contacts`: a still mesh's planes once per step ([`collide::planes`]), the other colliders every substep, a moving one in its frame ([`collide::swept`], §3.4; a vertex resting on a surface its ray leaves keeps its plane, [`collide::shapes::Shape::contact`]; a pinched vertex's facing contacts share their overlap, `collide::pinch`), [`self_contacts::generate_self_contacts`] → [`selfcollide::find_self_contacts`] (§4.3); `stages::generate_collisions` → `collide::exits` and `collide::contacts::depenetrate` (a vertex the cloth starts with inside a collider is moved out in x and p alike, gaining no velocity, a piece of cloth inside a convex collider along one direction); `stages::hold_on_bodies` → [`collide::contact::Contact::held`] (§4.2); [`cloth_contacts::find_cloth_contacts`] between cloths |
//! | (9)–(11) | [`PbdStage::Project`] | `stages::project` → `constraints::project_constraints` colour by colour on the task pool (§3.2–3.3, §4.1–4.4, App. A); [`tethers::project_tethers`]; [`cloth_contacts::project_cloth_contacts`]; `stages::push_out` → `collide::contacts::push_out_of_colliders` (§3.4 on the projected positions) |
//! | (12)–(15) | [`PbdStage::UpdateVelocity`] | `stages::update_velocity` → `integrate::update_velocities` |
//! | (16) | [`PbdStage::VelocityResponse`] | `stages::velocity_response` → `collide::response::apply_friction_restitution`; `stages::couple_bodies` → [`rigid::ClothRigidBody::take_from_vertex`] with −m_i (Δp_i/Δt + Δv_i) (§4.2) |
//!
//! After each step the tearing stage splits overstretched edges (§5, [`tearing`]).
//!
//! Lines (1)–(3) are the cloth builder ([`cloth::ClothBundle::from_mesh`]); line (4)/(17) is the cloth-step loop.

pub mod aerodynamics;
pub mod balloons;
pub mod cloth;
pub mod cloth_contacts;
pub mod collide;
pub(crate) mod colliders;
pub mod constraints;
pub(crate) mod crew;
pub mod damping;
pub mod integrate;
pub mod knobs;
pub(crate) mod lanes;
pub mod material;
pub mod mesh;
pub mod metrics;
pub mod parallel;
pub mod params;
pub mod plugin;
pub mod rigid;
pub mod schedule;
pub mod self_contacts;
pub mod selfcollide;
pub mod side_by_side;
pub mod sleep;
pub(crate) mod stages;
pub mod tearing;
pub mod tearing_stage;
pub mod tethers;
pub mod timings;
pub(crate) mod wind;

pub use aerodynamics::AerodynamicsPlugin;
pub use balloons::BalloonPlugin;
pub use cloth_contacts::ClothContactsPlugin;
pub use params::SimParams;
pub use plugin::ClothSimPlugin;
pub use schedule::{
    AdvanceClothSystems, ClothStep, ClothStepSystems, PbdStage, PbdSubstep, ProjectionSystems, SanitizeParamsSystems,
    SimClock, SimControl,
};
pub use self_contacts::SelfCollisionPlugin;
pub use sleep::SleepPlugin;
pub use tearing_stage::TearingPlugin;
pub use tethers::TethersPlugin;
pub use timings::StageTimings;
