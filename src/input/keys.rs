//! Keyboard shortcuts: Space pauses/resumes, `.` runs one step while paused, R resets the scene.

use bevy::prelude::*;

use crate::scene::{ActiveScene, SceneRequest};
use crate::sim::SimControl;

/// The shortcut table shown in the panel.
pub const SHORTCUTS: [(&str, &str); 5] = [
    ("Space", "pause / resume"),
    (".", "one step while paused"),
    ("R", "reset scene"),
    ("B", "throw a ball at the cursor"),
    ("1–7", "view modes"),
];

/// Applies the shortcuts: Space pauses or resumes, `.` requests one step while paused, R reloads the active scene.
pub(crate) fn shortcuts(
    keys: Res<ButtonInput<KeyCode>>,
    mut control: ResMut<SimControl>,
    mut request: ResMut<SceneRequest>,
    active: Res<ActiveScene>,
) {
    if keys.just_pressed(KeyCode::Space) {
        control.paused = !control.paused;
    }
    if keys.just_pressed(KeyCode::Period) && control.paused {
        control.step_requests += 1;
    }
    if keys.just_pressed(KeyCode::KeyR) {
        request.0 = Some(active.0.clone());
    }
}
