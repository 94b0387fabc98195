//! The panel's View section: the view modes (keys 1–7) with the strain view's legend, a screenshot of the window,
//! the cloths as OBJ and the recording as glTF, each written to a new numbered file in the folder given.

use std::path::{Path, PathBuf};

use bevy::prelude::*;
use bevy::render::view::screenshot::{Screenshot, save_to_disk};
use bevy_egui::egui;

use crate::render::views::{ViewMode, strain};
use drape::export::{gltf::save_glb, obj::save_obj, surfaces};
use drape::replay::Recording;
use drape::scene::ActiveScene;
use drape::scene::spawn::SceneStatus;
use drape::sim::cloth::{Cloth, ClothMesh, Particles};

/// Where the panel saves screenshots and exports, and an export waiting for the next frame.
#[derive(Resource, Debug)]
pub struct Keeping {
    /// Folder for the files.
    pub folder: String,
    /// An OBJ export asked for (written by [`export_requested`]).
    pub obj_requested: bool,
    /// A glTF export of the recording asked for (written by [`export_requested`]).
    pub gltf_requested: bool,
}

impl Default for Keeping {
    fn default() -> Self {
        Self { folder: ".".into(), obj_requested: false, gltf_requested: false }
    }
}

/// The first `drape-<scene>-<n>.<extension>` in `folder` that does not exist yet.
pub fn numbered_path(folder: &Path, scene: &str, extension: &str) -> PathBuf {
    let stem: String = scene.chars().map(|c| if c.is_alphanumeric() || c == '_' { c } else { '-' }).collect();
    (1u32..)
        .map(|n| folder.join(format!("drape-{stem}-{n:03}.{extension}")))
        .find(|p| !p.exists())
        .unwrap_or_else(|| folder.join(format!("drape-{stem}.{extension}")))
}

/// What the View section reads and changes.
#[derive(bevy::ecs::system::SystemParam)]
pub struct ViewControls<'w, 's> {
    mode: ResMut<'w, ViewMode>,
    keeping: ResMut<'w, Keeping>,
    active: Res<'w, ActiveScene>,
    commands: Commands<'w, 's>,
}

/// The View section; what the buttons did is reported in `status`.
pub fn view_section(ui: &mut egui::Ui, v: &mut ViewControls, tear_threshold: f32, status: &mut SceneStatus) {
    egui::CollapsingHeader::new("View").default_open(true).show(ui, |ui| {
        // a copy: writing through the resource every frame would mark it changed and rebuild the overlays
        let mut chosen = *v.mode;
        ui.horizontal_wrapped(|ui| {
            for (k, mode) in ViewMode::ALL.into_iter().enumerate() {
                let doc = format!("key {}", k + 1);
                ui.radio_value(&mut chosen, mode, mode.label()).on_hover_text(doc);
            }
        });
        v.mode.set_if_neq(chosen);
        if *v.mode == ViewMode::Strain {
            strain_legend(ui, strain::scale(tear_threshold));
        }
        ui.horizontal(|ui| {
            ui.label("save to")
                .on_hover_text("Folder for screenshots and exports (files are numbered, never overwritten)");
            ui.text_edit_singleline(&mut v.keeping.folder);
        });
        ui.horizontal(|ui| {
            if ui.button("📷 Screenshot").on_hover_text("Save the window as a PNG").clicked() {
                let path = numbered_path(Path::new(&v.keeping.folder), &v.active.0.name, "png");
                if Path::new(&v.keeping.folder).is_dir() {
                    v.commands.spawn(Screenshot::primary_window()).observe(save_to_disk(path.clone()));
                    status.message = Some(format!("screenshot → {}", path.display()));
                } else {
                    status.error = Some(format!("cannot save a screenshot: {} is not a folder", v.keeping.folder));
                }
            }
            if ui.button("Export OBJ").on_hover_text("Write the cloths as they are now as a Wavefront OBJ").clicked() {
                v.keeping.obj_requested = true;
            }
        });
    });
}

/// The strain scale: blue (compressed by `scale`) … white (at rest) … red (stretched by `scale`, the tear threshold).
fn strain_legend(ui: &mut egui::Ui, scale: f32) {
    let (rect, _) = ui.allocate_exact_size(egui::vec2(ui.available_width(), 14.0), egui::Sense::hover());
    let bands = 2 * strain::STEPS + 1;
    let width = rect.width() / bands as f32;
    for (k, band) in (-strain::STEPS..=strain::STEPS).enumerate() {
        let [r, g, b, _] = strain::band_color(band);
        let srgb = Color::linear_rgb(r, g, b).to_srgba().to_u8_array();
        let left = rect.left() + k as f32 * width;
        let cell = egui::Rect::from_min_max(egui::pos2(left, rect.top()), egui::pos2(left + width, rect.bottom()));
        ui.painter().rect_filled(cell, 0.0, egui::Color32::from_rgb(srgb[0], srgb[1], srgb[2]));
    }
    let percent = 100.0 * scale;
    ui.horizontal(|ui| {
        ui.small(format!("−{percent:.0} %"));
        ui.add_space(ui.available_width() / 2.0 - 30.0);
        ui.small("l/l₀ − 1 = 0");
        ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
            ui.small(format!("+{percent:.0} % (tear)"));
        });
    });
}

/// Writes the exports the panel asked for (the cloths as OBJ, the recording as glTF), and reports where, or
/// why not, in the panel and the log.
pub fn export_requested(
    mut keeping: ResMut<Keeping>,
    mut status: ResMut<SceneStatus>,
    active: Res<ActiveScene>,
    recording: Option<Res<Recording>>,
    cloths: Query<(Entity, &Cloth, &Particles, &ClothMesh)>,
) {
    let folder = PathBuf::from(&keeping.folder);
    let mut outcomes = Vec::new();
    if std::mem::take(&mut keeping.obj_requested) {
        let surfaces = surfaces(cloths.iter());
        let path = numbered_path(&folder, &active.0.name, "obj");
        outcomes.push(save_obj(&path, &surfaces).map(|()| format!("{} cloth(s) → {}", surfaces.len(), path.display())));
    }
    if std::mem::take(&mut keeping.gltf_requested) {
        let steps: Vec<_> = recording.iter().flat_map(|r| r.steps().iter().cloned()).collect();
        let path = numbered_path(&folder, &active.0.name, "glb");
        outcomes.push(save_glb(&path, &steps).map(|()| format!("{} recorded steps → {}", steps.len(), path.display())));
    }
    for outcome in outcomes {
        match outcome {
            Ok(what) => {
                info!("exported {what}");
                status.message = Some(format!("exported {what}"));
            }
            Err(e) => {
                error!("{e}");
                status.error = Some(e);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbered_paths_skip_existing_files() {
        let dir = std::env::temp_dir().join(format!("drape-numbered-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let first = numbered_path(&dir, "my scene", "obj");
        assert_eq!(first, dir.join("drape-my-scene-001.obj"));
        std::fs::write(&first, "").unwrap();
        assert_eq!(numbered_path(&dir, "my scene", "obj"), dir.join("drape-my-scene-002.obj"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
