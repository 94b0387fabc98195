//! What the user does with the mouse and keyboard: grab and fling particles, pin them, throw balls, pause,
//! step, reset.
//! Input is read in `Update`; the simulation sees it at its next fixed step.

pub mod drag;
pub mod keys;
pub mod picking;
pub mod throw;

use bevy::prelude::*;

/// Marks the camera whose view the pointer acts in.
#[derive(Component, Clone, Copy, Debug, Default)]
pub struct DrapeCamera;

/// Whether the user interface has the pointer or the keyboard (written by the panel from egui's state), so
/// a press on the panel never grabs cloth and typing never triggers shortcuts.
#[derive(Resource, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UiCapture {
    pub pointer: bool,
    pub keyboard: bool,
}

fn pointer_free(capture: Res<UiCapture>) -> bool {
    !capture.pointer
}

fn keyboard_free(capture: Res<UiCapture>) -> bool {
    !capture.keyboard
}

/// Mouse dragging, pinning and keyboard shortcuts. Needs `ButtonInput<MouseButton>`, `ButtonInput<KeyCode>`
/// (Bevy's `InputPlugin`), a primary `Window`, and a camera with [`DrapeCamera`].
pub struct InteractionPlugin;

impl Plugin for InteractionPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<drag::DragState>()
            .init_resource::<UiCapture>()
            .init_resource::<crate::scene::throws::ThrowQueue>()
            .add_systems(
                Update,
                (
                    drag::begin_grab_or_pin.run_if(pointer_free),
                    drag::move_grab,
                    drag::end_grab,
                    keys::shortcuts.run_if(keyboard_free),
                    throw::throw_on_key.run_if(keyboard_free),
                )
                    .chain(),
            );
    }
}
