//! [`AerodynamicsPlugin`]: the air on the cloth (line (5)): the mean wind of [`SimParams::wind`] plus a gust
//! drawn once per cloth step (`wind::next_gust`), felt through the aerodynamic force on
//! each triangle with [`SimParams::air_drag`]. The gusts restart from the scene's seed when a scene loads, so
//! every run is reproducible. Without the plugin the cloth is in vacuum.

use std::time::Instant;

use bevy::prelude::*;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::cloth::Awake;
use super::cloth::{ClothMesh, Particles};
use super::schedule::{ClothStep, ClothStepSystems, PbdStage, PbdSubstep, SimClock};
use super::side_by_side::SideBySide;
use super::wind::next_gust;
use super::{SimParams, StageTimings, integrate, stages};

/// Wind, gusts and air drag on every cloth.
pub struct AerodynamicsPlugin;

impl Plugin for AerodynamicsPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<Wind>()
            .init_resource::<GustSeed>()
            .add_systems(ClothStep, (reset_gust_on_load, update_gust).chain().in_set(ClothStepSystems::BeforeStep))
            .add_systems(PbdSubstep, apply_air.in_set(PbdStage::ExternalForces).after(stages::external_forces));
    }
}

/// Line (5): the air (mean wind plus gust, with drag) on every cloth, triangle by triangle.
pub fn apply_air(
    mut cloths: Query<(Entity, (&mut Particles, &ClothMesh)), Awake>,
    params: Res<SimParams>,
    wind: Res<Wind>,
    clock: Res<SimClock>,
    mut side_by_side: Local<SideBySide>,
    mut timings: ResMut<StageTimings>,
) {
    let start = Instant::now();
    let air = (wind.velocity(&params), params.air_drag, clock.dt);
    let blow = |(mut particles, mesh): (Mut<Particles>, &ClothMesh), parallel: bool| {
        let Particles { x, v, w, .. } = &mut *particles;
        let triangles = (mesh.triangles.as_slice(), &mesh.triangle_chunks);
        integrate::apply_aerodynamics_by_color(x, v, w, triangles, air, parallel);
    };
    if side_by_side.choose(params.parallel, cloths.iter().map(|(entity, (particles, _))| (entity, particles.len()))) {
        side_by_side.run(&mut cloths, |(_, cloth), _| blow(cloth, false));
    } else {
        for (_, cloth) in &mut cloths {
            blow(cloth, params.parallel);
        }
    }
    timings.add(PbdStage::ExternalForces, start);
}

/// The wind the cloth feels in the current step.
#[derive(Resource, Clone, Debug)]
pub struct Wind {
    /// Current gust added to the mean wind, m/s.
    pub gust: Vec3,
    rng: SmallRng,
}

impl Wind {
    /// No gust yet; gusts drawn from a generator seeded with `seed`.
    pub fn seeded(seed: u64) -> Self {
        Self { gust: Vec3::ZERO, rng: SmallRng::seed_from_u64(seed) }
    }

    /// Mean wind plus the current gust.
    pub fn velocity(&self, params: &SimParams) -> Vec3 {
        params.wind + self.gust
    }
}

impl Default for Wind {
    fn default() -> Self {
        Self::seeded(0)
    }
}

/// Once per cloth step, before the substeps: a new gust.
pub fn update_gust(mut wind: ResMut<Wind>, params: Res<SimParams>, clock: Res<SimClock>) {
    let dt = clock.step_dt;
    // uniform on [−√3, √3] has unit variance
    let s = 3f32.sqrt();
    let noise = Vec3::new(wind.rng.random_range(-s..s), wind.rng.random_range(-s..s), wind.rng.random_range(-s..s));
    wind.gust = next_gust(wind.gust, params.wind_gust, dt, noise);
}

/// The seed of the random gusts of the running scene.
#[derive(Resource, Clone, Copy, Debug, Default)]
pub struct GustSeed(pub u64);

/// Restarts the gusts (and their random sequence from the scene's seed) when a scene is loaded, so every run
/// is reproducible.
pub(crate) fn reset_gust_on_load(clock: Res<SimClock>, seed: Res<GustSeed>, mut wind: ResMut<Wind>) {
    if clock.is_changed() && clock.steps == 0 {
        *wind = Wind::seeded(seed.0);
    }
}
