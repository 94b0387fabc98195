//! What the user does with the mouse and keyboard: grab and fling particles, pin them, pause, step, reset.
//! Input is read in `Update`; the simulation sees it at its next fixed step.

pub mod drag;
pub mod keys;
pub mod picking;

use bevy::prelude::*;
use bevy_egui::input::{egui_wants_any_keyboard_input, egui_wants_any_pointer_input};

/// Marks the camera whose view the pointer acts in.
#[derive(Component, Clone, Copy, Debug, Default)]
pub struct DrapeCamera;

/// Mouse dragging, pinning and keyboard shortcuts. Needs `ButtonInput<MouseButton>`, `ButtonInput<KeyCode>`,
/// a primary `Window`, a camera with [`DrapeCamera`], and bevy_egui's `EguiWantsInput`.
pub struct InteractionPlugin;

impl Plugin for InteractionPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<drag::DragState>().add_systems(
            Update,
            (
                drag::begin_grab_or_pin.run_if(not(egui_wants_any_pointer_input)),
                drag::move_grab,
                drag::end_grab,
                keys::shortcuts.run_if(not(egui_wants_any_keyboard_input)),
            )
                .chain(),
        );
    }
}
