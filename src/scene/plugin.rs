//! [`ScenePlugin`]: scene requests applied in `PreUpdate`, and the balls a scene or the user throws.

use bevy::prelude::*;

use super::spawn::{ActiveScene, SceneRequest, SceneStatus, apply_scene_request};
use super::throws::{ThrowQueue, launch_throws};
use crate::sim::aerodynamics::GustSeed;
use crate::sim::{ClothStep, ClothStepSystems, SanitizeParamsSystems};

/// Loads requested scenes in `PreUpdate`, before the fixed step sees them, and launches thrown balls before
/// each cloth step.
pub struct ScenePlugin;

impl Plugin for ScenePlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<ActiveScene>()
            .init_resource::<SceneRequest>()
            .init_resource::<SceneStatus>()
            .init_resource::<ThrowQueue>()
            // the scene seeds the gusts, with or without the air's plugin
            .init_resource::<GustSeed>()
            .add_systems(PreUpdate, apply_scene_request.before(SanitizeParamsSystems))
            .add_systems(ClothStep, launch_throws.in_set(ClothStepSystems::BeforeStep));
    }
}
