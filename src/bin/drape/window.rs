//! The desktop app: Bevy's default plugins with one 1280×720 window, egui, the orbit camera, and drape's
//! plugins; optionally a screenshot after N frames, then exit.

use std::path::PathBuf;

use bevy::prelude::*;
use bevy::render::view::screenshot::{Screenshot, ScreenshotCaptured, save_to_disk};
use bevy::time::TimeUpdateStrategy;
use bevy::window::{PresentMode, WindowResolution};
use bevy_egui::EguiPlugin;
use bevy_panorbit_camera::PanOrbitCameraPlugin;

use crate::render::ClothRenderPlugin;
use crate::render::views::ViewMode;
use crate::ui::PanelPlugin;
use drape::input::InteractionPlugin;
use drape::plugins::ClothSolverPlugins;
use drape::scene::library::PresetLibraryPlugin;
use drape::scene::{ScenePlugin, SceneRequest, desc::SceneDesc};
use drape::sim::SanitizeParamsSystems;
use drape::sim::plugin::match_fixed_timestep_to_cloth;

/// Take a screenshot of the window after `frames` frames, save it to `path`, and exit. Each frame then advances
/// the simulation by one fixed step, so a shot shows the scene at the same simulated time on any machine.
#[derive(Resource, Clone, Debug)]
pub struct ScreenshotPlan {
    /// Where to save the screenshot.
    pub path: PathBuf,
    /// Frames to run before taking it.
    pub frames: u32,
    saved: bool,
    frame: u32,
}

impl ScreenshotPlan {
    /// A plan to save a screenshot to `path` after `frames` frames.
    pub fn new(path: PathBuf, frames: u32) -> Self {
        Self { path, frames, saved: false, frame: 0 }
    }
}

/// The whole desktop application on scene `desc`, showing it in `view`.
pub fn window_app(desc: SceneDesc, screenshot: Option<ScreenshotPlan>, view: ViewMode) -> App {
    let mut app = App::new();
    let assets = AssetPlugin {
        file_path: drape::scene::preset::asset_root().to_string_lossy().into_owned(),
        watch_for_changes_override: Some(true),
        ..default()
    };
    app.add_plugins(DefaultPlugins.set(assets).set(WindowPlugin {
        primary_window: Some(Window {
            title: "drape — position based cloth".into(),
            resolution: WindowResolution::new(1280, 720),
            present_mode: PresentMode::AutoVsync,
            ..default()
        }),
        ..default()
    }))
    .add_plugins((EguiPlugin::default(), PanOrbitCameraPlugin))
    .add_systems(PreUpdate, match_fixed_timestep_to_cloth.after(SanitizeParamsSystems))
    .add_plugins((
        ClothSolverPlugins,
        ScenePlugin,
        PresetLibraryPlugin,
        ClothRenderPlugin,
        InteractionPlugin,
        PanelPlugin,
        drape::replay::ReplayPlugin,
    ));
    #[cfg(feature = "avian")]
    drape::avian::add_avian(&mut app);
    app.world_mut().resource_mut::<SceneRequest>().0 = Some(desc);
    app.insert_resource(view);
    app.add_systems(Startup, cpu_clustering_on_software_renderers);
    if let Some(plan) = screenshot {
        app.insert_resource(plan)
            .insert_resource(TimeUpdateStrategy::FixedTimesteps(1))
            .add_systems(Update, take_screenshot_and_exit);
    }
    app
}

/// Frames to wait for a requested screenshot before asking again: one lost capture must not hang a scripted run.
const SCREENSHOT_RETRY_FRAMES: u32 = 30;
/// Requests before giving up with an error.
const SCREENSHOT_ATTEMPTS: u32 = 4;

fn take_screenshot_and_exit(
    mut commands: Commands,
    mut plan: ResMut<ScreenshotPlan>,
    mut exit: MessageWriter<AppExit>,
) {
    plan.frame += 1;
    if plan.saved {
        exit.write(AppExit::Success);
        return;
    }
    let Some(waited) = plan.frame.checked_sub(plan.frames.max(1)) else { return };
    if waited % SCREENSHOT_RETRY_FRAMES != 0 {
        return;
    }
    let attempt = waited / SCREENSHOT_RETRY_FRAMES + 1;
    if attempt > SCREENSHOT_ATTEMPTS {
        error!("no screenshot was captured after {SCREENSHOT_ATTEMPTS} requests");
        exit.write(AppExit::error());
        return;
    }
    info!("screenshot requested at frame {} (attempt {attempt})", plan.frame);
    commands
        .spawn(Screenshot::primary_window())
        .observe(save_to_disk(plan.path.clone()))
        .observe(|_: On<ScreenshotCaptured>, mut plan: ResMut<ScreenshotPlan>| plan.saved = true);
}

/// Frames under lavapipe have hung for minutes in shader code, and Bevy's GPU light clustering is the suspect it can
/// do without: it writes on the GPU the per-cluster light ranges the PBR shader loops over. CPU clustering is Bevy's
/// own path for devices without compute shaders and costs nothing with drape's one directional light.
fn cpu_clustering_on_software_renderers(
    adapter: Option<Res<bevy::render::renderer::RenderAdapterInfo>>,
    mut clusters: ResMut<bevy::light::cluster::GlobalClusterSettings>,
) {
    if adapter.is_some_and(|a| a.driver == "llvmpipe") && clusters.gpu_clustering.take().is_some() {
        info!("software renderer: light clustering runs on the CPU");
    }
}
