//! The egui side panel: every parameter live with a tooltip (meaning, unit, range, paper section), actions,
//! scene switching, and statistics with a history plot.

pub mod panel;
pub mod stats;
pub mod timeline;
pub mod views;

use bevy::prelude::*;
use bevy_egui::EguiPrimaryContextPass;
use bevy_egui::input::EguiWantsInput;
use bevy_panorbit_camera::PanOrbitCamera;

use drape::input::UiCapture;

/// The side panel and the camera's respect for it. Needs `EguiPlugin`.
pub struct PanelPlugin;

impl Plugin for PanelPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<stats::FrameRate>()
            .init_resource::<panel::MaterialTarget>()
            .init_resource::<views::Keeping>()
            .init_resource::<timeline::Playback>()
            .add_systems(PreUpdate, share_ui_capture)
            .add_systems(
                Update,
                (stats::measure_frame_rate, camera_ignores_panel, views::export_requested, timeline::apply_playback),
            )
            .add_systems(EguiPrimaryContextPass, panel::side_panel);
    }
}

/// Tells the interaction systems whether egui has the pointer or the keyboard.
fn share_ui_capture(wants: Res<EguiWantsInput>, mut capture: ResMut<UiCapture>) {
    let now = UiCapture { pointer: wants.wants_any_pointer_input(), keyboard: wants.wants_any_keyboard_input() };
    capture.set_if_neq(now);
}

/// The orbit camera does not react while the pointer is over the panel.
fn camera_ignores_panel(wants: Res<EguiWantsInput>, mut cameras: Query<&mut PanOrbitCamera>) {
    let over_panel = wants.wants_any_pointer_input();
    for mut cam in &mut cameras {
        if cam.enabled == over_panel {
            cam.enabled = !over_panel;
        }
    }
}
