//! The side panel itself. Every widget edits the live resources or components; the solver picks the change up
//! at its next step. Every slider takes its range, label and tooltip from a knob table ([`drape::sim::knobs`],
//! [`ThrowSettings::KNOBS`]); values are clamped by the widgets and again by [`SimParams::sanitized`].

use bevy::prelude::*;
use bevy_egui::{EguiContexts, egui};
use egui_plot::{Line, Plot, PlotPoints};

use super::stats::{FrameRate, SceneCounts};
use super::timeline::{TimelineControls, timeline_bar};
use super::views::{ViewControls, view_section};
use drape::input::keys::SHORTCUTS;
use drape::input::throw::{self, ThrowSettings};
use drape::scene::library::PresetLibrary;
use drape::scene::preset::{self, ScenePreset};
use drape::scene::snapshot::{LiveCloth, snapshot};
use drape::scene::spawn::SceneStatus;
use drape::scene::throws::ThrowQueue;
use drape::scene::{ActiveScene, SceneRequest};
use drape::sim::cloth::{
    Attachments, BendConstraints, Cloth, ClothMaterial, ClothSolver, Contacts, Particles, StretchConstraints,
};
use drape::sim::constraints::bend::BendingModel;
use drape::sim::constraints::bend::Folds;
use drape::sim::constraints::tether::TetherLengths;
use drape::sim::knobs::{self, Knob, VectorKnob};
use drape::sim::material::{edit_material, set_material};
use drape::sim::params::Solver;
use drape::sim::selfcollide::self_collision_thickness;
use drape::sim::sleep::Asleep;
use drape::sim::timings::StepRecord;
use drape::sim::{PbdStage, SimClock, SimControl, SimParams, StageTimings};
use drape::skinning::{self, ClothSkinning, SkinnedCharacter};

/// Width of the panel, logical pixels.
pub const PANEL_WIDTH: f32 = 300.0;
/// The first-time hint.
pub const HINT: &str =
    "Left-drag the cloth to pull it, flick to throw · Shift+click pins/unpins · Right-drag orbits · Scroll zooms";

type ClothQuery<'w, 's> = Query<
    'w,
    's,
    (
        &'static mut Particles,
        &'static mut ClothMaterial,
        &'static Attachments,
        &'static StretchConstraints,
        &'static BendConstraints,
        &'static Contacts,
        &'static ClothSolver,
        &'static Cloth,
        Entity,
    ),
>;

/// Which cloth the material sliders edit: one cloth, or every cloth (`None`).
#[derive(Resource, Default)]
pub struct MaterialTarget(pub Option<Entity>);

/// Everything the scene section of the panel reads and changes.
#[derive(bevy::ecs::system::SystemParam)]
pub struct SceneControls<'w> {
    library: ResMut<'w, PresetLibrary>,
    presets: Res<'w, Assets<ScenePreset>>,
    server: Res<'w, AssetServer>,
    active: Res<'w, ActiveScene>,
    request: ResMut<'w, SceneRequest>,
    status: ResMut<'w, SceneStatus>,
    throws: ResMut<'w, ThrowQueue>,
}

/// Draws the side panel (actions, scenes, solver, material, collisions, tearing, rigid bodies, environment)
/// and the statistics window.
#[allow(clippy::too_many_arguments)]
pub fn side_panel(
    mut contexts: EguiContexts,
    mut params: ResMut<SimParams>,
    mut control: ResMut<SimControl>,
    mut scene: SceneControls,
    timings: Res<StageTimings>,
    frame_rate: Res<FrameRate>,
    mut throw_settings: ResMut<ThrowSettings>,
    mut material_target: ResMut<MaterialTarget>,
    mut cloths: ClothQuery,
    asleep: Query<(), With<Asleep>>,
    mut view: ViewControls,
    mut timeline: TimelineControls,
    mut wearers: WearerControls,
) -> Result {
    let ctx = contexts.ctx_mut()?;
    let mut root = egui::Ui::new(
        ctx.clone(),
        "drape_root".into(),
        egui::UiBuilder::new().layer_id(egui::LayerId::background()).max_rect(ctx.viewport_rect()),
    );
    egui::Panel::left("drape_panel").exact_size(PANEL_WIDTH).show(&mut root, |ui| {
        egui::ScrollArea::vertical().show(ui, |ui| {
            ui.heading("drape");
            ui.label(egui::RichText::new(HINT).italics());
            ui.separator();
            actions(ui, &mut control, &mut scene);
            scenes(ui, &mut scene, &params, &cloths);
            view_section(ui, &mut view, params.tear_threshold, &mut scene.status);
            ui.separator();
            solver(ui, &mut params);
            material(ui, &mut params, &mut material_target, &mut cloths);
            collisions(ui, &mut params);
            tearing(ui, &mut params);
            rigid_bodies(ui, &mut throw_settings, &mut scene.throws);
            characters(ui, &mut wearers);
            environment(ui, &mut params);
        });
    });
    timeline_bar(&mut root, &mut timeline, &mut control);
    let counts = SceneCounts {
        asleep: asleep.iter().count(),
        ..SceneCounts::of(cloths.iter().map(|(p, _, _, s, b, c, _, cloth, _)| (p, s, b, c, cloth.tears)))
    };
    egui::Window::new("Statistics")
        .anchor(egui::Align2::RIGHT_TOP, [-8.0, 8.0])
        .default_width(250.0)
        .resizable(false)
        .collapsible(true)
        .show(ctx, |ui| statistics(ui, counts, &timings, frame_rate.0));
    Ok(())
}

fn actions(ui: &mut egui::Ui, control: &mut SimControl, scene: &mut SceneControls) {
    ui.horizontal(|ui| {
        let label = if control.paused { "▶ Resume" } else { "⏸ Pause" };
        if ui.button(label).on_hover_text("Space").clicked() {
            control.paused = !control.paused;
        }
        if ui.add_enabled(control.paused, egui::Button::new("Step")).on_hover_text(". (while paused)").clicked() {
            control.step_requests += 1;
        }
        if ui.button("⟲ Reset").on_hover_text("R").clicked() {
            scene.request.0 = Some(scene.active.0.clone());
        }
    });
    ui.horizontal_wrapped(|ui| {
        for (key, what) in SHORTCUTS {
            ui.label(egui::RichText::new(format!("{key}: {what}")).small().weak());
        }
    });
}

/// The preset picker, "save current as preset", and load errors.
fn scenes(ui: &mut egui::Ui, scene: &mut SceneControls, params: &SimParams, cloths: &ClothQuery) {
    ui.horizontal(|ui| {
        ui.label("Preset").on_hover_text("Every .ron file in assets/presets; editing the open one reloads it.");
        let mut chosen = None;
        egui::ComboBox::from_id_salt("preset").selected_text(&scene.active.0.name).show_ui(ui, |ui| {
            for (name, handle) in &scene.library.entries {
                if ui.selectable_label(scene.active.0.name == *name, name).clicked() {
                    chosen = Some(handle.clone());
                }
            }
        });
        if let Some(handle) = chosen {
            match scene.presets.get(&handle) {
                Some(ScenePreset(desc)) => scene.request.0 = Some(desc.clone()),
                None => {
                    let why = match scene.server.load_state(&handle) {
                        bevy::asset::LoadState::Failed(e) => drape::scene::library::first_line(&e.to_string()),
                        _ => "still loading".to_string(),
                    };
                    error!("{why}");
                    scene.status.error = Some(why);
                }
            }
        }
        if ui.button("💾 Save").on_hover_text("Save the current scene and parameters as a new preset file").clicked()
        {
            let live: Vec<LiveCloth> = cloths
                .iter()
                .map(|(_, material, attachments, .., cloth, _)| LiveCloth::of(cloth, material, attachments))
                .collect();
            let desc = snapshot(&scene.active.0, params, &live);
            match preset::save_new(&desc) {
                Ok(path) => {
                    let name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
                    let (library, server) = (&mut scene.library, &scene.server);
                    library.add(server, &name);
                    info!("saved {}", path.display());
                    scene.status.message = Some(format!("saved {}", path.display()));
                }
                Err(e) => {
                    error!("{e}");
                    scene.status.error = Some(e.to_string());
                }
            }
        }
    });
    if let Some(e) = &scene.status.error {
        ui.colored_label(egui::Color32::from_rgb(255, 110, 90), e);
    }
    if let Some(m) = &scene.status.message {
        ui.label(egui::RichText::new(m).small());
    }
}

fn section(ui: &mut egui::Ui, title: &str, open: bool, body: impl FnOnce(&mut egui::Ui)) {
    egui::CollapsingHeader::new(title).default_open(open).show(ui, body);
}

/// A slider over `knob`'s range, labelled and explained by the knob (logarithmic where `log`).
fn knob<N: egui::emath::Numeric>(ui: &mut egui::Ui, value: &mut N, knob: &Knob, log: bool) {
    let range = N::from_f64(knob.min as f64)..=N::from_f64(knob.max as f64);
    ui.add(egui::Slider::new(value, range).logarithmic(log).text(knob.label_text())).on_hover_text(knob.tooltip());
}

fn solver(ui: &mut egui::Ui, p: &mut SimParams) {
    section(ui, "Solver", true, |ui| {
        knob(ui, &mut p.iterations, &knobs::ITERATIONS, true);
        knob(ui, &mut p.substeps, &knobs::SUBSTEPS, true);
        knob(ui, &mut p.rate_hz, &knobs::RATE_HZ, false);
        ui.horizontal(|ui| {
            ui.label("solver").on_hover_text(
                "PBD: the paper's stiffness k ∈ [0, 1], made independent of the iteration count by §3.3 but not of \
                 the substep count. XPBD (Macklin et al. 2016): a compliance in physical units (m/N) and a \
                 multiplier per constraint, the same material at any iteration and substep count once the passes \
                 converge; the units are checked against textbook tests by `drape fidelity` (docs/fidelity.md). \
                 The material sliders show the active solver's values; switching converts what the solver uses now and eases \
                 to the material, so the cloth does not jump.",
            );
            ui.radio_value(&mut p.solver, Solver::Pbd, "PBD");
            ui.radio_value(&mut p.solver, Solver::Xpbd, "XPBD");
        });
        ui.checkbox(&mut p.global_stretch, "XPBD stretch solved together").on_hover_text(
            "XPBD cloths only. Each iteration solves every stretch constraint at once (a Gauss–Newton step by \
             conjugate gradients) instead of sweeping them one by one, so stiff edges stretch as their compliance \
             says at any iteration and substep count (`drape fidelity`'s xpbd_independence). Tens of sweeps' work \
             per iteration, on one thread: for stiff cloths of a few thousand vertices.",
        );
        ui.checkbox(&mut p.global_bending, "XPBD bending solved together").on_hover_text(
            "XPBD cloths only, the same for the bending constraints (not where soft cloth's hinges yield or leave \
             their folds): stiff bending reaches its compliance's fold at any iteration and substep count.",
        );
        let threads = drape::sim::parallel::solver_threads(true);
        ui.checkbox(&mut p.parallel, format!("parallel projection ({threads} threads)")).on_hover_text(
            "Project each colour of constraints (a set touching disjoint particles) on all threads of Bevy's \
             compute pool. Off: one thread. The result is identical either way.",
        );
        ui.checkbox(&mut p.tethers, "tethers (long-range attachments)").on_hover_text(
            "Kim, Chentanez, Müller 2012: every free vertex stays within its rest distance of its nearest pinned \
             or gripped vertices, so a hanging cloth keeps its length even at one iteration. Rebuilt when pins \
             change or the cloth tears. A preset can switch them per cloth.",
        );
        if p.tethers {
            ui.horizontal(|ui| {
                ui.label("tether length").on_hover_text(
                    "Geodesic: the distance along the cloth at rest (never too tight). Euclidean: the straight \
                     distance at rest (tighter for a cloth hanging folded, too tight over a collider).",
                );
                ui.radio_value(&mut p.tether_lengths, TetherLengths::Geodesic, "geodesic");
                ui.radio_value(&mut p.tether_lengths, TetherLengths::Euclidean, "euclidean");
            });
            knob(ui, &mut p.tether_slack, &knobs::TETHER_SLACK, false);
        }
    });
}

fn material(ui: &mut egui::Ui, p: &mut SimParams, target: &mut MaterialTarget, cloths: &mut ClothQuery) {
    section(ui, "Material", true, |ui| {
        if target.0.is_some_and(|e| !cloths.contains(e)) {
            target.0 = None;
        }
        let shown = target.0.and_then(|e| cloths.get(e).ok()).or_else(|| cloths.iter().next());
        let Some((mut m, shown, own_solver, folds)) = shown.map(|c| (*c.1, c.8, c.6.chosen, c.6.folds)) else {
            ui.label("no cloth in the scene");
            return;
        };
        cloth_picker(ui, target, cloths);
        let before = m;
        match own_solver.unwrap_or(p.solver) {
            Solver::Pbd => {
                knob(ui, &mut m.stretch_stiffness, &knobs::STRETCH_STIFFNESS, false);
                knob(ui, &mut m.bend_stiffness, &knobs::BEND_STIFFNESS, false);
            }
            Solver::Xpbd => {
                knob(ui, &mut m.stretch_compliance, &knobs::STRETCH_COMPLIANCE, true);
                knob(ui, &mut m.bend_compliance, &knobs::BEND_COMPLIANCE, true);
                knob(ui, &mut m.volume_compliance, &knobs::VOLUME_COMPLIANCE, true);
            }
        }
        if folds == Folds::Leave && p.bending_model == BendingModel::Dihedral {
            ui.label("soft for its bending: folds past 90° stay creases").on_hover_text(
                "The stretch is below a tenth as stiff as the bending: edges this soft cannot carry the opening of \
                 a fold to the rest of the cloth, and the cloth would pass its folds back and forth at the speed \
                 cap. Pairs of triangles folded past a right angle are left as they are.",
            );
        }
        if folds == Folds::Yield && p.bending_model == BendingModel::Dihedral {
            ui.label("soft for its bending: hinges yield").on_hover_text(
                "The stretch is below a tenth as stiff as the bending, in the stiffnesses XPBD's compliances amount \
                 to per substep: no hinge turns its pair in a substep further than an edge's force at full strain \
                 would, so folds open no faster than the soft edges can follow.",
            );
        }
        if let Some(own) = own_solver {
            ui.label(format!("this cloth's preset sets its solver: {own:?}"));
        }
        ui.horizontal(|ui| {
            ui.label("bending model").on_hover_text(
                "Dihedral: the paper's angle constraint arccos(n1·n2) − φ0, independent of stretching (§4.1, Fig. 3). \
                 Distance: a rod between the two opposite vertices, cheaper but also resists stretching.",
            );
            ui.radio_value(&mut p.bending_model, BendingModel::Dihedral, "dihedral");
            ui.radio_value(&mut p.bending_model, BendingModel::Distance, "distance");
        });
        knob(ui, &mut m.density, &knobs::DENSITY, true);
        knob(ui, &mut m.thickness, &knobs::THICKNESS, true);
        if p.self_collision
            && let Ok(cloth) = cloths.get(shown)
        {
            let kept = self_collision_thickness(m.thickness, cloth.3.mean_shortest_edge());
            if kept < m.thickness {
                ui.label(format!("self-collision keeps {:.1} mm", kept * 1000.0)).on_hover_text(
                    "Self-collision keeps at most half the spacing of the cloth's vertices (the mean of each vertex's \
                     shortest edge): a thicker band would make every vertex touch its neighbours' triangles. \
                     Colliders keep the full thickness.",
                );
            }
        }
        if m != before {
            let cloths = cloths.iter_mut().map(|(particles, material, attachments, .., entity)| {
                (entity, particles.into_inner(), material.into_inner(), attachments)
            });
            edit_materials(cloths, target.0, before, m);
        }
    });
}

/// A material slider moved from `before` to `after`: the moved fields change on the `target` cloth, or on every
/// cloth if `None`; nothing else changes.
pub fn edit_materials<'a>(
    cloths: impl IntoIterator<Item = (Entity, &'a mut Particles, &'a mut ClothMaterial, &'a Attachments)>,
    target: Option<Entity>,
    before: ClothMaterial,
    after: ClothMaterial,
) {
    for (entity, particles, material, attachments) in cloths {
        if target.is_none_or(|e| e == entity) {
            let edited = edit_material(*material, before, after);
            set_material(particles, material, &attachments.0, edited);
        }
    }
}

/// Chooses the cloth the material sliders edit, or every cloth.
fn cloth_picker(ui: &mut egui::Ui, target: &mut MaterialTarget, cloths: &ClothQuery) {
    if cloths.iter().nth(1).is_none() {
        return;
    }
    let name_of = |e: Entity| cloths.get(e).map_or_else(|_| String::new(), |c| c.7.name.clone());
    let selected = target.0.map_or_else(|| "all cloths".to_string(), name_of);
    ui.horizontal(|ui| {
        ui.label("edit").on_hover_text(
            "The cloth the sliders below edit. With all cloths, a slider sets its own value on every cloth and \
             leaves their other values as they are.",
        );
        egui::ComboBox::from_id_salt("material_target").selected_text(selected).show_ui(ui, |ui| {
            ui.selectable_value(&mut target.0, None, "all cloths");
            for (.., cloth, entity) in cloths.iter() {
                ui.selectable_value(&mut target.0, Some(entity), &cloth.name);
            }
        });
    });
}

fn collisions(ui: &mut egui::Ui, p: &mut SimParams) {
    section(ui, "Damping & collisions", true, |ui| {
        knob(ui, &mut p.damping, &knobs::DAMPING, false);
        knob(ui, &mut p.friction, &knobs::FRICTION, false);
        knob(ui, &mut p.restitution, &knobs::RESTITUTION, false);
        ui.checkbox(&mut p.collider_edges, "collider edges").on_hover_text(
            "§4.2: the colliders' corners and edges (boxes, capsules, meshes) against the cloth's triangles, so \
             a corner cannot poke between three vertices; the body takes the reaction.",
        );
    });
}

fn tearing(ui: &mut egui::Ui, p: &mut SimParams) {
    section(ui, "Tearing", false, |ui| {
        ui.checkbox(&mut p.tearing, "tear overstretched edges")
            .on_hover_text("§5: an edge stretched beyond the threshold splits one of its vertices.");
        knob(ui, &mut p.tear_threshold, &knobs::TEAR_THRESHOLD, true);
    });
    section(ui, "Self-collision and balloons", false, |ui| {
        ui.checkbox(&mut p.self_collision, "self-collision").on_hover_text(
            "§4.3: vertices keep the cloth thickness h from the triangles of their own cloth, on the side they \
             came from (eq. 12–13), found with a spatial hash each step.",
        );
        ui.checkbox(&mut p.cloth_collision, "cloth against cloth").on_hover_text(
            "The same constraint between different cloths: every cloth's vertices keep the larger of two cloths' \
             thicknesses (at most half the finer cloth's edge) from every other cloth's triangles, found with the \
             same hash, untangled the same way.",
        );
        ui.checkbox(&mut p.untangle, "untangle").on_hover_text(
            "Where the cloth already passes through itself, release the contacts that hold the smaller side \
             of the crossing there, so the cloth pulls it back through (after Baraff, Witkin and Kass 2003).",
        );
        knob(ui, &mut p.pressure, &knobs::PRESSURE, false);
    });
}

fn rigid_bodies(ui: &mut egui::Ui, settings: &mut ThrowSettings, throws: &mut ThrowQueue) {
    section(ui, "Rigid bodies", false, |ui| {
        if ui.button("Throw a ball").on_hover_text("B throws one at the cursor; this button, straight ahead.").clicked()
        {
            throws.from_camera = true;
        }
        knob(ui, &mut settings.ball_mass, &throw::BALL_MASS, true);
        knob(ui, &mut settings.ball_radius, &throw::BALL_RADIUS, false);
        knob(ui, &mut settings.ball_speed, &throw::BALL_SPEED, false);
    });
}

/// The skinned characters and the cloth they wear, as the characters section changes them.
#[derive(bevy::ecs::system::SystemParam)]
pub struct WearerControls<'w, 's> {
    characters: Query<'w, 's, (&'static Name, &'static mut SkinnedCharacter)>,
    worn: Query<'w, 's, &'static mut ClothSkinning>,
    clock: Res<'w, SimClock>,
}

/// Each character's clip (cross-faded to when chosen) and playback speed, and how far worn cloth may stray
/// from the skin; shown only in scenes with characters.
fn characters(ui: &mut egui::Ui, wearers: &mut WearerControls) {
    if wearers.characters.is_empty() {
        return;
    }
    section(ui, "Characters", true, |ui| {
        let now = wearers.clock.time;
        for (name, mut character) in &mut wearers.characters {
            let playing = character.playback.clip;
            let mut chosen = playing;
            egui::ComboBox::from_label(name.as_str())
                .selected_text(character.model.clips.get(playing).map_or("", |c| c.name.as_str()))
                .show_ui(ui, |ui| {
                    for (k, clip) in character.model.clips.iter().enumerate() {
                        ui.selectable_value(&mut chosen, k, &clip.name);
                    }
                });
            if chosen != playing {
                character.play(chosen, now);
            }
            let mut speed = character.playback.speed;
            knob(ui, &mut speed, &skinning::PLAYBACK_SPEED, false);
            if speed != character.playback.speed {
                character.set_speed(speed, now);
            }
        }
        let Some(first) = wearers.worn.iter().next() else { return };
        let mut reach = first.limits.max_distance;
        knob(ui, &mut reach, &skinning::MAX_DISTANCE, false);
        if reach != first.limits.max_distance {
            for mut worn in &mut wearers.worn {
                worn.limits.max_distance = reach;
            }
        }
    });
}

/// One drag value per component of a vector knob, each within ± its longest length.
fn vec3_row(ui: &mut egui::Ui, v: &mut Vec3, knob: &VectorKnob) {
    let (range, tip) = (knob.max_length, knob.tooltip());
    ui.horizontal(|ui| {
        ui.label(knob.name).on_hover_text(&tip);
        for c in [&mut v.x, &mut v.y, &mut v.z] {
            ui.add(egui::DragValue::new(c).speed(0.05).range(-range..=range).max_decimals(2)).on_hover_text(&tip);
        }
    });
}

fn environment(ui: &mut egui::Ui, p: &mut SimParams) {
    section(ui, "Environment", false, |ui| {
        vec3_row(ui, &mut p.gravity, &knobs::GRAVITY);
        vec3_row(ui, &mut p.wind, &knobs::WIND);
        knob(ui, &mut p.wind_gust, &knobs::WIND_GUST, false);
        knob(ui, &mut p.air_drag, &knobs::AIR_DRAG, false);
    });
}

/// Counts, frame rate and the time of every stage, in a small window at the top right of the view.
fn statistics(ui: &mut egui::Ui, counts: SceneCounts, timings: &StageTimings, fps: f32) {
    {
        egui::Grid::new("counts").num_columns(2).show(ui, |ui| {
            for (label, value) in [
                ("particles", counts.particles.to_string()),
                ("constraints", counts.constraints.to_string()),
                ("contacts", counts.contacts.to_string()),
                ("torn edges", counts.torn_edges.to_string()),
                ("asleep", format!("{} of {} cloths", counts.asleep, counts.cloths)),
                ("frame rate", format!("{fps:.0} fps")),
                ("step", format!("{:.2} ms", timings.last_step * 1e3)),
            ] {
                ui.label(label);
                ui.monospace(value);
                ui.end_row();
            }
        });
        egui::Grid::new("stages").num_columns(2).show(ui, |ui| {
            for stage in PbdStage::ALL {
                ui.label(stage.name());
                ui.monospace(format!("{:.3} ms", timings.last[stage as usize] * 1e3));
                ui.end_row();
            }
        });
        let series = |value: &dyn Fn(&StepRecord) -> f32| -> PlotPoints {
            timings.history_ms.iter().enumerate().map(|(i, h)| [i as f64, value(h) as f64]).collect()
        };
        Plot::new("step_history")
            .height(120.0)
            .allow_drag(false)
            .allow_zoom(false)
            .allow_scroll(false)
            .include_y(0.0)
            .y_axis_label("ms per step")
            .legend(egui_plot::Legend::default())
            .show(ui, |plot| {
                plot.line(Line::new("step", series(&|h| h.1)));
                for stage in [PbdStage::Project, PbdStage::GenerateCollisions, PbdStage::ExternalForces] {
                    plot.line(Line::new(stage.name(), series(&|h| h.0[stage as usize])));
                }
            });
    }
}
