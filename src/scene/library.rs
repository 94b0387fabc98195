//! The presets of `assets/presets/` as Bevy assets in the window app: listed in the panel, reloaded live when
//! the open preset's file changes on disk (Bevy's file watcher), and their load errors shown in the panel.

use bevy::asset::AssetLoadFailedEvent;
use bevy::prelude::*;

use super::preset::{self, PresetLoader, ScenePreset};
use super::spawn::{ActiveScene, SceneRequest, SceneStatus, apply_scene_request};

/// Every preset file found in the presets folder, by name, in menu order.
#[derive(Resource, Clone, Debug, Default)]
pub struct PresetLibrary {
    /// Each preset's name and asset handle.
    pub entries: Vec<(String, Handle<ScenePreset>)>,
}

impl PresetLibrary {
    /// Loads `presets/NAME.ron` and lists it (once).
    pub fn add(&mut self, server: &AssetServer, name: &str) {
        if !self.entries.iter().any(|(n, _)| n == name) {
            self.entries.push((name.to_string(), server.load(format!("presets/{name}.ron"))));
            self.entries.sort_by(|a, b| a.0.cmp(&b.0));
        }
    }
}

/// Preset assets, the library and hot reload. Needs Bevy's `AssetPlugin`.
pub struct PresetLibraryPlugin;

impl Plugin for PresetLibraryPlugin {
    fn build(&self, app: &mut App) {
        app.init_asset::<ScenePreset>()
            .register_asset_loader(PresetLoader)
            .init_resource::<PresetLibrary>()
            .add_systems(Startup, load_library)
            .add_systems(PreUpdate, follow_preset_files.before(apply_scene_request));
    }
}

fn load_library(server: Res<AssetServer>, mut library: ResMut<PresetLibrary>) {
    for name in preset::names() {
        library.add(&server, &name);
    }
}

/// Reloads the running scene when its file changed and loaded; reports files that failed to load.
fn follow_preset_files(
    mut events: MessageReader<AssetEvent<ScenePreset>>,
    mut failures: MessageReader<AssetLoadFailedEvent<ScenePreset>>,
    presets: Res<Assets<ScenePreset>>,
    active: Res<ActiveScene>,
    mut request: ResMut<SceneRequest>,
    mut status: ResMut<SceneStatus>,
) {
    for event in events.read() {
        if let AssetEvent::Modified { id } = event
            && let Some(ScenePreset(desc)) = presets.get(*id)
            && desc.source.is_some()
            && desc.source == active.0.source
        {
            info!("{} changed on disk: reloading the scene", desc.source.as_deref().unwrap_or_default());
            request.0 = Some(desc.clone());
        }
    }
    for failure in failures.read() {
        let message = first_line(&failure.error.to_string());
        error!("{message}");
        status.error = Some(message);
    }
}

/// The message of an asset error without the backtrace Bevy appends when `RUST_BACKTRACE` is set.
pub fn first_line(message: &str) -> String {
    message.lines().next().unwrap_or_default().to_string()
}
