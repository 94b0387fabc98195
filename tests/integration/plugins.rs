//! `DrapePlugins` is a group of one plugin per concern: each can be disabled, and a disabled concern adds no
//! system and does none of its work, even in a scene that switches it on.

use bevy::app::PluginGroupBuilder;
use bevy::ecs::schedule::ScheduleLabel;
use bevy::prelude::*;
use drape::headless::headless_app_of;
use drape::plugins::ClothSolverPlugins;
use drape::scene::preset;
use drape::sim::cloth::{ClothMesh, Particles, SelfCollision, Tethers};
use drape::sim::cloth_contacts::ClothContacts;
use drape::sim::constraints::volume::enclosed_volume;
use drape::sim::{
    AerodynamicsPlugin, BalloonPlugin, ClothContactsPlugin, ClothStep, PbdSubstep, SelfCollisionPlugin, SleepPlugin,
    TearingPlugin, TethersPlugin,
};
use drape::skinning::ClothSkinningPlugin;

/// `preset` headless with `solver`, run `frames` fixed steps.
fn run(preset: &str, solver: PluginGroupBuilder, frames: u32) -> App {
    let mut app = headless_app_of(preset::load(preset).unwrap(), solver, |_| {});
    for _ in 0..frames {
        app.update();
    }
    app
}

/// The names of the systems of `label`.
fn systems(app: &App, label: impl ScheduleLabel) -> Vec<String> {
    let schedule = app.get_schedule(label).expect("the schedule exists");
    schedule.systems().map(|systems| systems.map(|(_, s)| s.name().to_string()).collect()).unwrap_or_default()
}

fn has_system(app: &App, label: impl ScheduleLabel, name: &str) -> bool {
    systems(app, label).iter().any(|s| s.ends_with(name))
}

fn all() -> PluginGroupBuilder {
    ClothSolverPlugins.build()
}

#[test]
fn without_the_tearing_plugin_a_cloth_that_tears_does_not() {
    let tears = |app: &mut App| {
        app.world_mut().query::<&drape::sim::cloth::Cloth>().iter(app.world()).map(|c| c.tears).sum::<usize>()
    };
    let mut on = run("tearing", all(), 240);
    let mut off = run("tearing", all().disable::<TearingPlugin>(), 240);
    assert!(has_system(&on, ClothStep, "tear") && !has_system(&off, ClothStep, "tear"));
    assert!(tears(&mut on) > 0, "the tearing preset tears with the plugin");
    assert_eq!(tears(&mut off), 0, "no tear without the plugin");
}

#[test]
fn without_the_tethers_plugin_no_tether_is_built() {
    let tethers =
        |app: &mut App| app.world_mut().query::<&Tethers>().iter(app.world()).map(|t| t.set.len()).sum::<usize>();
    let mut on = run("tethers", all(), 10);
    let mut off = run("tethers", all().disable::<TethersPlugin>(), 10);
    assert!(!has_system(&off, PbdSubstep, "project_tethers") && !has_system(&off, ClothStep, "refresh_tethers"));
    assert!(tethers(&mut on) > 0, "the tethers preset has tethers with the plugin");
    assert_eq!(tethers(&mut off), 0);
}

#[test]
fn without_the_self_collision_plugin_no_cloth_searches_itself() {
    let contacts = |app: &mut App| {
        app.world_mut().query::<&SelfCollision>().iter(app.world()).map(|s| s.contacts.len()).sum::<usize>()
    };
    // the most contacts over the 8 s in which the sheet is lowered and folds onto itself
    let most = |solver: PluginGroupBuilder| {
        let mut app = run("self_fold", solver, 0);
        (0..480)
            .map(|_| {
                app.update();
                contacts(&mut app)
            })
            .max()
            .unwrap_or(0)
    };
    let off = run("self_fold", all().disable::<SelfCollisionPlugin>(), 1);
    assert!(!has_system(&off, PbdSubstep, "generate_self_contacts"));
    assert!(has_system(&run("self_fold", all(), 1), PbdSubstep, "generate_self_contacts"));
    assert!(most(all()) > 0, "the folding sheet touches itself");
    assert_eq!(most(all().disable::<SelfCollisionPlugin>()), 0);
}

#[test]
fn without_the_cloth_contacts_plugin_cloths_do_not_meet() {
    let on = run("layers", all(), 120);
    let off = run("layers", all().disable::<ClothContactsPlugin>(), 120);
    assert!(!has_system(&off, PbdSubstep, "find_cloth_contacts"));
    assert!(!has_system(&off, PbdSubstep, "project_cloth_contacts"));
    assert!(!on.world().resource::<ClothContacts>().contacts.is_empty(), "the layers touch");
    assert!(off.world().get_resource::<ClothContacts>().is_none());
}

#[test]
fn without_the_aerodynamics_plugin_the_flag_hangs_in_still_air() {
    // the flag's pole is along y; wind along x blows the flag out, still air lets it hang down
    let reach = |app: &mut App| {
        app.world_mut()
            .query::<&Particles>()
            .iter(app.world())
            .flat_map(|p| p.x.clone())
            .map(|x| x.x)
            .fold(f32::MIN, f32::max)
    };
    let mut on = run("flag", all(), 240);
    let mut off = run("flag", all().disable::<AerodynamicsPlugin>(), 240);
    assert!(!has_system(&off, PbdSubstep, "apply_air") && !has_system(&off, ClothStep, "update_gust"));
    let (blown, hanging) = (reach(&mut on), reach(&mut off));
    assert!(blown.is_finite() && hanging.is_finite());
    assert!((blown - hanging).abs() > 0.05, "the wind moves the flag: {blown} with air, {hanging} without");
}

#[test]
fn without_the_balloon_plugin_a_balloon_is_not_inflated() {
    let volume = |app: &mut App| {
        app.world_mut()
            .query::<(&Particles, &ClothMesh, &drape::sim::cloth::Balloon)>()
            .iter(app.world())
            .map(|(p, mesh, _)| enclosed_volume(&p.x, &mesh.triangles))
            .sum::<f32>()
    };
    let mut on = run("balloon", all(), 240);
    let mut off = run("balloon", all().disable::<BalloonPlugin>(), 240);
    let (inflated, limp) = (volume(&mut on), volume(&mut off));
    assert!(inflated > 0.0 && limp.is_finite());
    assert!(limp < 0.9 * inflated, "without pressure the balloon holds {limp} m³, with it {inflated} m³");
}

#[test]
fn without_the_sleep_plugin_a_cloth_at_rest_is_stepped_on() {
    let asleep = |app: &mut App| app.world_mut().query::<&drape::sim::sleep::Asleep>().iter(app.world()).count();
    let mut on = run("pbd_vs_xpbd", all(), 360);
    let mut off = run("pbd_vs_xpbd", all().disable::<SleepPlugin>(), 360);
    assert_eq!(asleep(&mut on), 2, "both cloths of pbd_vs_xpbd rest by frame 300");
    assert_eq!(asleep(&mut off), 0);
    assert!(has_system(&on, ClothStep, "fall_asleep") && !has_system(&off, ClothStep, "fall_asleep"));
}

#[test]
fn without_the_skinning_plugin_worn_cloth_stays_where_it_was_made() {
    let centre = |app: &mut App| {
        let world = app.world_mut();
        let (sum, n) = world
            .query::<&Particles>()
            .iter(world)
            .flat_map(|p| p.x.iter())
            .fold((Vec3::ZERO, 0.0), |(s, n), x| (s + *x, n + 1.0));
        sum / n
    };
    let start = centre(&mut run("character", all(), 0));
    let mut on = run("character", all(), 120);
    let mut off = run("character", all().disable::<ClothSkinningPlugin>(), 120);
    // two seconds of a walk round a circle of 1.2 m at 1 rad/s carry the cloth about 2 m
    assert!(centre(&mut on).distance(start) > 1.0, "worn, the cape and skirt walk with the character");
    assert!(centre(&mut off).distance(start) < 0.2, "unworn, they hang where they were made");
    assert!(has_system(&on, PbdSubstep, "follow_skin") && !has_system(&off, PbdSubstep, "follow_skin"));
}

/// The cloth step and its substep order every pair of systems that touch the same data, with every concern and
/// Avian's coupling in: an order the executor picks follows the systems' insertion and access, which any change to
/// a plugin moves, and a run's bits would follow it. Bevy refuses to build such a schedule with ambiguity detection
/// set to `Error`.
#[test]
fn the_cloth_schedules_leave_no_conflicting_order_to_the_executor() {
    use bevy::ecs::schedule::{LogLevel, ScheduleBuildSettings};
    let strict = ScheduleBuildSettings { ambiguity_detection: LogLevel::Error, ..default() };
    for preset in ["character", "tearing", "pile"] {
        let mut app = headless_app_of(preset::load(preset).unwrap(), ClothSolverPlugins, |app| {
            for label in [ClothStep.intern(), PbdSubstep.intern()] {
                app.edit_schedule(label, |schedule| {
                    schedule.set_build_settings(strict.clone());
                });
            }
        });
        // a schedule with an ambiguity panics as it is first built, here
        app.update();
    }
}
