//! The timeline at the bottom of the window: the recording's span and memory, a slider to scrub it, playback at
//! ×¼, ×½ or ×1, and the way back: resume the simulation from the step shown, or return to where it was.
//!
//! Looking at a recorded step pauses the simulation and shows the step's recorded positions; leaving the
//! timeline always goes through [`drape::replay::restore`], so the state that continues is exact.

use bevy::prelude::*;
use bevy_egui::egui;

use drape::replay::{Recording, restore};
use drape::sim::SimControl;
use drape::sim::cloth::Particles;

/// Where the timeline is: live, or showing a recorded step (an index into the recording), maybe playing on.
#[derive(Resource, Debug, Default)]
pub struct Playback {
    /// The recorded step shown (fractional while playing), `None` when live.
    pub at: Option<f32>,
    /// Playing the recording forward.
    pub playing: bool,
    /// Playback speed, ¼ to 1.
    pub speed: f32,
    /// What the timeline asked for, done by [`apply_playback`] with the whole world.
    pub request: Option<PlaybackRequest>,
}

/// A change only the whole world can make.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PlaybackRequest {
    /// Continue the simulation from the recorded step of this index, dropping what came after it.
    ResumeAt(usize),
    /// Back to the newest recorded step, the live simulation.
    Live,
}

/// What the timeline reads and changes.
#[derive(bevy::ecs::system::SystemParam)]
pub struct TimelineControls<'w> {
    recording: ResMut<'w, Recording>,
    playback: ResMut<'w, Playback>,
}

/// Draws the timeline bar into `root` (below the 3D view).
pub fn timeline_bar(root: &mut egui::Ui, t: &mut TimelineControls, control: &mut SimControl) {
    egui::Panel::bottom("timeline").show(root, |ui| {
        ui.horizontal(|ui| {
            let (recording, playback) = (&mut *t.recording, &mut *t.playback);
            ui.checkbox(&mut recording.enabled, "⏺ record").on_hover_text("Keep the last seconds of the simulation");
            ui.add(egui::DragValue::new(&mut recording.seconds).range(1.0..=120.0).suffix(" s"))
                .on_hover_text("How many seconds of simulated time are kept");
            let steps = recording.steps();
            let Some(last) = steps.len().checked_sub(1) else {
                ui.label("nothing recorded yet");
                return;
            };
            let span = steps[last].time - steps[0].time;
            let (positions, snapshots) = recording.bytes();
            ui.label(format!("{:.1} s · {:.0} MB", span, (positions + snapshots) as f64 / 1e6)).on_hover_text(format!(
                "{} steps: positions {:.1} MB, {} snapshots ≈ {:.1} MB",
                steps.len(),
                positions as f64 / 1e6,
                recording.snapshot_count(),
                snapshots as f64 / 1e6
            ));
            let mut at = playback.at.unwrap_or(last as f32);
            let play = if playback.playing { "⏸" } else { "▶" };
            if ui.button(play).on_hover_text("Play the recording").clicked() {
                playback.playing = !playback.playing;
                if playback.at.is_none() || at >= last as f32 {
                    at = 0.0;
                }
                playback.at = Some(at);
            }
            for (speed, label) in [(0.25, "×¼"), (0.5, "×½"), (1.0, "×1")] {
                ui.radio_value(&mut playback.speed, speed, label);
            }
            let slider = egui::Slider::new(&mut at, 0.0..=last as f32).show_value(false);
            if ui.add_sized([ui.available_width() - 190.0, 18.0], slider).changed() {
                playback.at = Some(at);
                playback.playing = false;
            }
            let shown = &steps[(at as usize).min(last)];
            ui.label(format!("t = {:.2} s", shown.time));
            let browsing = playback.at.is_some();
            if ui.add_enabled(browsing, egui::Button::new("Resume here")).clicked() {
                playback.request = Some(PlaybackRequest::ResumeAt(at as usize));
            }
            if ui.add_enabled(browsing, egui::Button::new("Live")).clicked() {
                playback.request = Some(PlaybackRequest::Live);
            }
            if playback.at.is_some() {
                control.paused = true;
            }
        });
    });
}

/// Advances playback, shows the recorded step at the playhead, and carries out the timeline's requests.
pub fn apply_playback(world: &mut World) {
    let delta = world.resource::<Time>().delta_secs();
    let rate = world.resource::<drape::sim::SimParams>().sanitized().rate_hz;
    let (request, shown) = {
        let last = world.resource::<Recording>().steps().len().saturating_sub(1) as f32;
        let mut playback = world.resource_mut::<Playback>();
        if playback.speed <= 0.0 {
            playback.speed = 1.0;
        }
        if playback.playing
            && let Some(at) = playback.at
        {
            let next = (at + playback.speed * rate * delta).min(last);
            (playback.at, playback.playing) = (Some(next), next < last);
        }
        (playback.request.take(), playback.at.map(|a| a as usize))
    };
    let steps_of = |world: &World, index: usize| world.resource::<Recording>().steps().get(index).map(|s| s.step);
    let outcome = match request {
        Some(PlaybackRequest::ResumeAt(index)) => steps_of(world, index).map(|s| restore(world, s, true)),
        Some(PlaybackRequest::Live) => {
            let last = world.resource::<Recording>().steps().len().saturating_sub(1);
            steps_of(world, last).map(|s| restore(world, s, true))
        }
        None => {
            if let Some(index) = shown {
                show_recorded(world, index);
            }
            None
        }
    };
    if let Some(result) = outcome {
        if let Err(e) = result {
            error!("{e}");
            world.resource_mut::<drape::scene::spawn::SceneStatus>().error = Some(e);
        }
        let speed = world.resource::<Playback>().speed;
        *world.resource_mut::<Playback>() = Playback { speed, ..default() };
        world.resource_mut::<SimControl>().paused = false;
    }
}

/// Puts the recorded positions of step `index` on the cloths (only where the cloth has the same vertices).
fn show_recorded(world: &mut World, index: usize) {
    world.resource_scope(|world, recording: Mut<Recording>| {
        let Some(step) = recording.steps().get(index) else { return };
        for cloth in &step.cloths {
            if let Some(mut particles) = world.get_mut::<Particles>(cloth.entity)
                && particles.x.len() == cloth.positions.len()
            {
                particles.x.copy_from_slice(&cloth.positions);
            }
        }
    });
}
