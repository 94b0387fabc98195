//! What the user does with the mouse and keyboard: grab and fling particles and pin them
//! ([`ClothPickingPlugin`], part of the library); throw balls, pause, step, reset (`InteractionPlugin`, the
//! demo's). Input is read in `Update`; the simulation sees it at its next cloth step.

pub mod drag;
#[cfg(feature = "app")]
pub mod keys;
pub mod picking;
#[cfg(feature = "app")]
pub mod throw;

use bevy::prelude::*;

/// Marks the camera whose view the pointer acts in.
#[derive(Component, Clone, Copy, Debug, Default)]
pub struct DrapeCamera;

/// Whether the user interface has the pointer or the keyboard (written by the panel from egui's state), so
/// a press on the panel never grabs cloth and typing never triggers shortcuts.
#[derive(Resource, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UiCapture {
    /// The user interface has the pointer.
    pub pointer: bool,
    /// The user interface has the keyboard.
    pub keyboard: bool,
}

fn pointer_free(capture: Res<UiCapture>) -> bool {
    !capture.pointer
}

#[cfg(feature = "app")]
fn keyboard_free(capture: Res<UiCapture>) -> bool {
    !capture.keyboard
}

/// Grabbing, flinging and pinning cloth with the left mouse button (Shift+click pins). Needs
/// `ButtonInput<MouseButton>` and `ButtonInput<KeyCode>` (Bevy's `InputPlugin`), a primary `Window`, and a
/// perspective camera marked [`DrapeCamera`]. Set [`UiCapture::pointer`] while your own UI has the pointer.
pub struct ClothPickingPlugin;

impl Plugin for ClothPickingPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<drag::DragState>().init_resource::<UiCapture>().add_systems(
            Update,
            (drag::begin_grab_or_pin.run_if(pointer_free), drag::move_grab, drag::end_grab)
                .chain()
                .in_set(PickingSystems),
        );
    }
}

/// The system set of [`ClothPickingPlugin`]'s systems in `Update`.
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PickingSystems;

/// The demo's input: [`ClothPickingPlugin`], keyboard shortcuts and throwing balls.
#[cfg(feature = "app")]
pub struct InteractionPlugin;

#[cfg(feature = "app")]
impl Plugin for InteractionPlugin {
    fn build(&self, app: &mut App) {
        if !app.is_plugin_added::<ClothPickingPlugin>() {
            app.add_plugins(ClothPickingPlugin);
        }
        app.init_resource::<crate::scene::throws::ThrowQueue>().init_resource::<throw::ThrowSettings>().add_systems(
            Update,
            (keys::shortcuts.run_if(keyboard_free), throw::throw_on_key.run_if(keyboard_free))
                .chain()
                .after(PickingSystems),
        );
    }
}
