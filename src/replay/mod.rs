//! Record and replay: the last seconds of the simulation kept in memory (`recording`), built on full copies
//! of the simulation state (`snapshot`), so a run can be watched again, exported, and resumed from any
//! recorded step with the same state hash as when it was recorded.

mod engines;
pub(crate) mod recording;
pub(crate) mod snapshot;

use bevy::prelude::*;

pub use engines::{CoupledEngine, CoupledEngines, EngineState};
pub use recording::{Recording, restore};

use crate::scene::ActiveScene;
use crate::sim::schedule::{ClothStep, ClothStepSystems, PbdStage};

/// Records every cloth step into [`Recording`] (on by default; set `Recording::enabled` to stop).
pub struct ReplayPlugin;

impl Plugin for ReplayPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<Recording>()
            .add_systems(
                ClothStep,
                (
                    recording::take_due_snapshot.in_set(ClothStepSystems::Start),
                    recording::record_step.in_set(ClothStepSystems::AfterStep).after(PbdStage::Tearing),
                ),
            )
            .add_systems(PreUpdate, forget_on_new_scene.run_if(resource_changed::<ActiveScene>));
    }
}

/// A new scene starts a new recording.
fn forget_on_new_scene(mut recording: ResMut<Recording>) {
    recording.clear();
}
