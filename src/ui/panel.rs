//! The side panel itself. Every widget edits the live resources or components; the solver picks the change up
//! at its next step. Values are clamped by the widgets and again by [`SimParams::sanitized`].

use bevy::prelude::*;
use bevy_egui::{EguiContexts, egui};
use egui_plot::{Line, Plot, PlotPoints};

use super::stats::{FrameRate, SceneCounts};
use crate::input::keys::SHORTCUTS;
use crate::scene::library::PresetLibrary;
use crate::scene::preset::{self, ScenePreset};
use crate::scene::snapshot::{LiveCloth, snapshot};
use crate::scene::spawn::SceneStatus;
use crate::scene::throws::ThrowQueue;
use crate::scene::{ActiveScene, SceneRequest};
use crate::sim::cloth::{Attachments, BendConstraints, Cloth, ClothMaterial, Contacts, Particles, StretchConstraints};
use crate::sim::constraints::attach::Motion;
use crate::sim::params::BendingModel;
use crate::sim::timings::StepRecord;
use crate::sim::{PbdStage, SimControl, SimParams, StageTimings};

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
        &'static Cloth,
    ),
>;

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

#[allow(clippy::too_many_arguments)]
pub fn side_panel(
    mut contexts: EguiContexts,
    mut params: ResMut<SimParams>,
    mut control: ResMut<SimControl>,
    mut scene: SceneControls,
    timings: Res<StageTimings>,
    frame_rate: Res<FrameRate>,
    mut cloths: ClothQuery,
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
            ui.separator();
            solver(ui, &mut params);
            material(ui, &mut params, &mut cloths);
            collisions(ui, &mut params);
            tearing(ui, &mut params);
            rigid_bodies(ui, &mut params, &mut scene.throws);
            environment(ui, &mut params);
        });
    });
    let counts = SceneCounts::of(cloths.iter().map(|(p, _, _, s, b, c, cloth)| (p, s, b, c, cloth.tears)));
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
                        bevy::asset::LoadState::Failed(e) => crate::scene::library::first_line(&e.to_string()),
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
                .map(|(_, material, attachments, .., cloth)| LiveCloth {
                    name: cloth.name.clone(),
                    material: *material,
                    pinned: attachments.0.iter().filter(|a| a.motion == Motion::Fixed).map(|a| a.vertex).collect(),
                })
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

fn solver(ui: &mut egui::Ui, p: &mut SimParams) {
    section(ui, "Solver", true, |ui| {
        ui.add(egui::Slider::new(&mut p.iterations, 1..=200).logarithmic(true).text("iterations")).on_hover_text(
            "Gauss–Seidel sweeps over all constraints per substep: solverIterations of line (9), §3.1–3.2. \
             More = stiffer and more accurate, linear cost. 1–200.",
        );
        ui.add(egui::Slider::new(&mut p.substeps, 1..=64).logarithmic(true).text("substeps")).on_hover_text(
            "Passes of the whole loop (5)–(16) per fixed step, each with Δt/substeps. Smaller steps converge \
             faster than more iterations. 1–64.",
        );
        ui.add(egui::Slider::new(&mut p.rate_hz, 10.0..=240.0).text("fixed rate (Hz)")).on_hover_text(
            "Fixed-step frequency of the simulation, Hz; Δt = 1/rate. PBD stiffness depends on Δt (§3.3). 10–240.",
        );
        let threads = crate::sim::parallel::solver_threads(true);
        ui.checkbox(&mut p.parallel, format!("parallel projection ({threads} threads)")).on_hover_text(
            "Project each colour of constraints (a set touching disjoint particles) on all threads of Bevy's \
             compute pool. Off: one thread. The result is identical either way.",
        );
    });
}

fn material(ui: &mut egui::Ui, p: &mut SimParams, cloths: &mut ClothQuery) {
    section(ui, "Material", true, |ui| {
        let Some(mut m) = cloths.iter().next().map(|c| *c.1) else {
            ui.label("no cloth in the scene");
            return;
        };
        let before = m;
        ui.add(egui::Slider::new(&mut m.stretch_stiffness, 0.0..=1.0).text("stretch stiffness")).on_hover_text(
            "k_stretch ∈ [0, 1] of the edge constraints C = |p1 − p2| − l0 (§4.1), applied as \
             k' = 1 − (1 − k)^(1/iterations) so it does not depend on the iteration count (§3.3).",
        );
        ui.add(egui::Slider::new(&mut m.bend_stiffness, 0.0..=1.0).text("bending stiffness"))
            .on_hover_text("k_bend ∈ [0, 1] of the bending constraints (§4.1, Appendix A); 0 = silk, 1 = card.");
        ui.horizontal(|ui| {
            ui.label("bending model").on_hover_text(
                "Dihedral: the paper's angle constraint arccos(n1·n2) − φ0, independent of stretching (§4.1, Fig. 3). \
                 Distance: a rod between the two opposite vertices, cheaper but also resists stretching.",
            );
            ui.radio_value(&mut p.bending_model, BendingModel::Dihedral, "dihedral");
            ui.radio_value(&mut p.bending_model, BendingModel::Distance, "distance");
        });
        ui.add(egui::Slider::new(&mut m.density, 0.01..=10.0).logarithmic(true).text("density (kg/m²)")).on_hover_text(
            "Areal density ρ; each vertex gets a third of the mass of its triangles (§4.1). 0.01–10 kg/m².",
        );
        ui.add(egui::Slider::new(&mut m.thickness, 0.001..=0.1).logarithmic(true).text("thickness (m)")).on_hover_text(
            "Cloth thickness h: the gap kept to colliders (§3.4) and, for self-collision, eq. (12) (§4.3). 0.001–0.1 m.",
        );
        if m != before {
            for (mut particles, mut material, attachments, ..) in cloths.iter_mut() {
                set_material(&mut particles, &mut material, &attachments.0, m);
            }
        }
    });
}

/// Applies a new material to one cloth; a density change rescales the masses (w = 0 stays 0).
pub fn set_material(
    particles: &mut Particles,
    material: &mut ClothMaterial,
    attachments: &[crate::sim::constraints::attach::Attachment],
    new: ClothMaterial,
) {
    let new = new.sanitized();
    let scale = new.density / material.density;
    if scale.is_finite() && scale != 1.0 {
        for i in 0..particles.len() {
            particles.mass[i] *= scale;
            if particles.w[i] > 0.0 {
                particles.restore_inverse_mass(i, attachments);
            }
        }
    }
    *material = new;
}

fn collisions(ui: &mut egui::Ui, p: &mut SimParams) {
    section(ui, "Damping & collisions", true, |ui| {
        ui.add(egui::Slider::new(&mut p.damping, 0.0..=1.0).text("k_damping")).on_hover_text(
            "§3.5 damping per fixed step, [0, 1]: removes velocity relative to the cloth's rigid motion \
             (v_cm + ω × r), never the rigid motion itself; 1 makes the cloth move rigidly.",
        );
        ui.add(egui::Slider::new(&mut p.friction, 0.0..=2.0).text("friction μ")).on_hover_text(
            "Coulomb friction against colliders in line (16), §3.4: tangential speed drops by μ times the \
             normal speed the contact removed. 0–2.",
        );
        ui.add(egui::Slider::new(&mut p.restitution, 0.0..=1.0).text("restitution e")).on_hover_text(
            "Fraction of the approach speed reflected along the contact normal in line (16), §3.4. 0–1.",
        );
    });
}

fn tearing(ui: &mut egui::Ui, p: &mut SimParams) {
    section(ui, "Tearing", false, |ui| {
        ui.checkbox(&mut p.tearing, "tear overstretched edges")
            .on_hover_text("§5: an edge stretched beyond the threshold splits one of its vertices.");
        ui.add(egui::Slider::new(&mut p.tear_threshold, 1.05..=10.0).logarithmic(true).text("threshold l/l0"))
            .on_hover_text("Stretch ratio l/l0 at which an edge tears (§5). 1.05–10.");
    });
    section(ui, "Self-collision and balloons", false, |ui| {
        ui.checkbox(&mut p.self_collision, "self-collision").on_hover_text(
            "§4.3: vertices keep the cloth thickness h from the triangles of their own cloth, on the side they \
             came from (eq. 12–13), found with a spatial hash each step.",
        );
        ui.checkbox(&mut p.untangle, "untangle").on_hover_text(
            "Where the cloth already passes through itself, release the contacts that hold the smaller side \
             of the crossing there, so the cloth pulls it back through (after Baraff, Witkin and Kass 2003).",
        );
        ui.add(egui::Slider::new(&mut p.pressure, 0.1..=5.0).text("pressure k_pressure"))
            .on_hover_text("§4.4, eq. (15): a balloon's volume is held at k_pressure times its rest volume V0. 0.1–5.");
    });
}

fn rigid_bodies(ui: &mut egui::Ui, p: &mut SimParams, throws: &mut ThrowQueue) {
    section(ui, "Rigid bodies", false, |ui| {
        if ui.button("Throw a ball").on_hover_text("B throws one at the cursor; this button, straight ahead.").clicked()
        {
            throws.from_camera = true;
        }
        ui.add(egui::Slider::new(&mut p.ball_mass, 0.05..=50.0).logarithmic(true).text("ball mass (kg)"))
            .on_hover_text("Mass of a thrown ball, kg. 0.05–50. §4.2: cloth and ball exchange momentum both ways.");
        ui.add(egui::Slider::new(&mut p.ball_radius, 0.03..=0.5).text("ball radius (m)"))
            .on_hover_text("Radius of a thrown ball, metres. 0.03–0.5.");
        ui.add(egui::Slider::new(&mut p.ball_speed, 1.0..=40.0).text("ball speed (m/s)"))
            .on_hover_text("Launch speed of a thrown ball, m/s. 1–40.");
    });
}

fn vec3_row(ui: &mut egui::Ui, label: &str, v: &mut Vec3, range: f32, tip: &str) {
    ui.horizontal(|ui| {
        ui.label(label).on_hover_text(tip);
        for c in [&mut v.x, &mut v.y, &mut v.z] {
            ui.add(egui::DragValue::new(c).speed(0.05).range(-range..=range).max_decimals(2)).on_hover_text(tip);
        }
    });
}

fn environment(ui: &mut egui::Ui, p: &mut SimParams) {
    section(ui, "Environment", false, |ui| {
        vec3_row(ui, "gravity", &mut p.gravity, 100.0, "Gravitational acceleration g of line (5), m/s², x y z.");
        vec3_row(
            ui,
            "wind",
            &mut p.wind,
            100.0,
            "Wind velocity, m/s, x y z: pushes each triangle along its normal (line 5).",
        );
        ui.add(egui::Slider::new(&mut p.wind_gust, 0.0..=20.0).text("gusts (m/s)"))
            .on_hover_text("Amplitude of random gusts added to the wind, m/s. 0–20.");
        ui.add(egui::Slider::new(&mut p.air_drag, 0.0..=5.0).text("air drag"))
            .on_hover_text("Aerodynamic coefficient, kg/(m²·s): force per triangle = c·area·((v_wind − v)·n) n. 0–5.");
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
