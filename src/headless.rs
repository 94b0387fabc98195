//! `drape headless`: the identical simulation schedule with no window and no GPU, stepped one fixed step per
//! frame, summarised as one JSON object. Tests, benchmarks and scripts use this.

use std::collections::BTreeMap;
use std::time::Duration;

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use serde::Serialize;

use crate::plugins::ClothSolverPlugins;
use crate::scene::{ScenePlugin, SceneRequest, desc::SceneDesc, spawn::SceneStatus};
use crate::sim::cloth::ClothCollider;
use crate::sim::cloth::{Balloon, BendConstraints, Contacts, Particles, StretchConstraints};
use crate::sim::colliders::CollisionWorld;
use crate::sim::constraints::volume::enclosed_volume;
use crate::sim::plugin::match_fixed_timestep_to_cloth;
use crate::sim::rigid::ClothRigidBody;
use crate::sim::selfcollide::{count_intersections, count_piercings};
use crate::sim::{SanitizeParamsSystems, SimClock, SimParams, StageTimings, metrics};

/// What `drape headless` prints.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct HeadlessReport {
    /// The scene's name.
    pub preset: String,
    /// Frames run, one fixed step each.
    pub frames: u32,
    /// Simulated seconds.
    pub sim_time: f64,
    /// Cloth entities in the scene (a torn cloth stays one).
    pub cloths: usize,
    /// Particles of every cloth.
    pub particles: usize,
    /// Internal constraints: stretch + bending.
    pub constraints: usize,
    /// Triangles of every cloth.
    pub triangles: usize,
    /// Vertex splits by tearing (§5), every cloth.
    pub torn_edges: usize,
    /// Collision constraints generated in the last substep.
    pub contacts: usize,
    /// max over stretch constraints of |l/l0 − 1|.
    pub max_stretch: f32,
    /// ½ Σ m v², joules.
    pub kinetic_energy: f32,
    /// Whether all positions are finite.
    pub finite: bool,
    /// `[[min x, y, z], [max x, y, z]]` of every cloth vertex, metres (`null` without cloth): shows an explosion
    /// that stays finite.
    pub bounds: Option<[Vec3; 2]>,
    /// The fastest vertex's speed, m/s.
    pub max_speed: f32,
    /// [`metrics::state_hash`] of every cloth's positions and velocities (each cloth hashed alone, the hashes
    /// sorted and hashed again, so spawn order does not matter), as 16 hex digits: equal hashes, same bits.
    pub state_hash: String,
    /// Smallest signed distance of any particle to any collider surface (negative = inside), metres: every
    /// collider the cloths meet, Avian's bodies and triangle meshes included.
    pub min_collider_distance: f32,
    /// Mesh edges that pierce a triangle of their own cloth (§4.3): places where the cloth has passed through
    /// itself. Zero for cloth that self-collision has kept apart.
    pub self_intersections: usize,
    /// Mesh edges of one cloth that pierce a triangle of another: places where two cloths have passed through
    /// each other.
    pub cloth_crossings: usize,
    /// Collider edges (a box's edges, a capsule's axis, a mesh's edges: [`Shape::edges`]) that pierce a cloth
    /// triangle at the end: places where a collider pokes through the cloth (§4.2 tests the rigid body's
    /// features against the cloth's triangles for this).
    ///
    /// [`Shape::edges`]: crate::sim::collide::shapes::Shape::edges
    pub collider_piercings: usize,
    /// Free vertex moves the speed cap shortened, over every cloth since it was spawned: an alarm, zero in a
    /// scene whose pins, colliders, bodies and wind are slow (`CappedMoves`).
    pub capped_moves: u64,
    /// In a closed scene ([`SceneDesc::is_closed`]), the largest rise of the cloths' and bodies' kinetic plus
    /// potential energy over its start E₀, (E − E₀) / max(E₀, 1 mJ) after any frame ([`scene_energy`]); `null`
    /// in an open scene, where wind, moving pins or colliders, throws or pressure do work.
    pub energy_gain: Option<f32>,
    /// Each balloon's enclosed volume at the end over its goal k_pressure · V0 (§4.4), in the cloths' order: 1
    /// for a balloon as full as its pressure asks, less while it is squeezed (its volume constraint is projected
    /// with the others, so contacts can hold it below), 0 once torn (it bursts).
    pub balloon_fill: Vec<f32>,
    /// The largest distance of a worn cloth's attached vertex from its skinned target at the end of a step, over
    /// every step and cloth, metres ([`ClothSkinning`](crate::skinning::ClothSkinning)); `None` without worn cloth.
    pub max_attachment_error: Option<f32>,
    /// Cloths asleep at the end ([`SleepPlugin`](crate::sim::SleepPlugin)): at rest, and no longer stepped.
    pub asleep: usize,
    /// Mean wall time of the simulation per frame, milliseconds.
    pub ms_per_frame: f64,
    /// Stage name → mean milliseconds per frame.
    pub stage_ms: BTreeMap<String, f64>,
    /// Every dynamic rigid body (§4.2), in spawn order.
    pub bodies: Vec<BodyState>,
}

/// Where a rigid body is and how it moves.
#[derive(Clone, Copy, Debug, Serialize, PartialEq)]
pub struct BodyState {
    /// Centre, metres.
    pub position: Vec3,
    /// m/s.
    pub velocity: Vec3,
    /// rad/s.
    pub angular_velocity: Vec3,
}

/// An App with the simulation and scene plugins and no window, with `desc` loaded (or its error in
/// [`SceneStatus`]). Every further `update()` advances exactly one fixed step.
pub fn headless_app(desc: SceneDesc) -> App {
    headless_app_with(desc, |_| {})
}

/// [`headless_app`] with more plugins or resources added by `configure` before the App starts.
pub fn headless_app_with(desc: SceneDesc, configure: impl FnOnce(&mut App)) -> App {
    headless_app_of(desc, ClothSolverPlugins, configure)
}

/// [`headless_app_with`] with `solver` in place of [`ClothSolverPlugins`]: for example the group with a concern
/// plugin disabled, `ClothSolverPlugins.build().disable::<TearingPlugin>()`.
pub fn headless_app_of(desc: SceneDesc, solver: impl PluginGroup, configure: impl FnOnce(&mut App)) -> App {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, solver, ScenePlugin))
        .add_systems(PreUpdate, match_fixed_timestep_to_cloth.after(SanitizeParamsSystems));
    configure(&mut app);
    #[cfg(feature = "avian")]
    crate::avian::add_avian(&mut app);
    let rate = desc.params.sanitized().rate_hz;
    app.insert_resource(Time::<Fixed>::from_hz(rate as f64));
    app.insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(1.0 / rate as f64)));
    app.world_mut().resource_mut::<SceneRequest>().0 = Some(desc);
    app.finish();
    app.cleanup();
    // Bevy's first update has a zero time delta: it loads the scene and runs no step.
    app.update();
    app
}

/// Runs `desc` for `frames` fixed steps and reports on the result; fails if the scene does not build.
pub fn run(desc: SceneDesc, frames: u32) -> Result<HeadlessReport, String> {
    run_then(desc, frames, |_| {}, |_| Ok(())).map(|(report, ())| report)
}

/// [`run`] with more plugins added by `configure`, then `then` on the world as the run left it (to export its
/// cloths, say); fails if the scene does not build or `then` fails.
pub fn run_then<T>(
    desc: SceneDesc,
    frames: u32,
    configure: impl FnOnce(&mut App),
    then: impl FnOnce(&mut World) -> Result<T, String>,
) -> Result<(HeadlessReport, T), String> {
    let (name, closed) = (desc.name.clone(), desc.is_closed());
    let mut app = headless_app_with(desc, configure);
    if let Some(e) = &app.world().resource::<SceneStatus>().error {
        return Err(e.clone());
    }
    let mut energy = closed.then(|| EnergyWatch::new(app.world_mut()));
    for _ in 0..frames {
        app.update();
        if let Some(watch) = &mut energy {
            watch.after_step(app.world_mut());
        }
    }
    let extra = then(app.world_mut())?;
    let mut report = report(app.world_mut(), &name, frames);
    report.energy_gain = energy.map(|watch| watch.gain());
    Ok((report, extra))
}

/// Below this start energy, joules, a closed scene's rise counts against it ([`EnergyWatch::gain`]).
pub const ENERGY_FLOOR: f32 = 1e-3;

/// The energy of a closed scene step after step: its start E₀ and the largest rise over it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EnergyWatch {
    /// The height [`scene_energy`] measures from: the lowest cloth vertex or body centre at the start.
    pub floor: f32,
    /// E₀, joules.
    pub start: f32,
    /// The largest (E − E₀) / max(E₀, [`ENERGY_FLOOR`]) after a step so far; −∞ before the first.
    largest: f32,
}

impl EnergyWatch {
    /// Starts watching the world's cloths and bodies as they are now.
    pub fn new(world: &mut World) -> Self {
        let floor = lowest_height(world);
        Self { floor, start: scene_energy(world, floor), largest: f32::NEG_INFINITY }
    }

    /// Measures the world after a step; returns the energy now.
    pub fn after_step(&mut self, world: &mut World) -> f32 {
        let energy = scene_energy(world, self.floor);
        self.largest = self.largest.max((energy - self.start) / self.start.max(ENERGY_FLOOR));
        energy
    }

    /// The largest (E − E₀) / max(E₀, [`ENERGY_FLOOR`]) after a step so far: negative while the energy only
    /// falls, 0 before the first step.
    pub fn gain(&self) -> f32 {
        if self.largest.is_finite() { self.largest } else { 0.0 }
    }
}

/// Every cloth's and dynamic body's kinetic plus potential energy under the scene's gravity, potential measured
/// from height `floor` (along −g), joules ([`metrics::mechanical_energy`]).
pub fn scene_energy(world: &mut World, floor: f32) -> f32 {
    let gravity = world.resource::<SimParams>().gravity;
    let (g, up) = (gravity.length(), -gravity.normalize_or_zero());
    let cloths: f32 = world
        .query::<&Particles>()
        .iter(world)
        .map(|p| metrics::mechanical_energy(&p.x, &p.v, &p.mass, gravity, floor))
        .sum();
    let bodies: f32 = world
        .query::<(&ClothRigidBody, &Transform)>()
        .iter(world)
        .map(|(b, t)| b.kinetic_energy(t.rotation) + b.mass() * g * (t.translation.dot(up) - floor))
        .sum();
    cloths + bodies
}

/// The lowest height along −g of every cloth vertex and dynamic body centre (0 for none).
fn lowest_height(world: &mut World) -> f32 {
    let up = -world.resource::<SimParams>().gravity.normalize_or_zero();
    let cloths = world
        .query::<&Particles>()
        .iter(world)
        .flat_map(|p| p.x.iter().map(|x| x.dot(up)))
        .fold(f32::INFINITY, f32::min);
    let bodies = world
        .query_filtered::<&Transform, With<ClothRigidBody>>()
        .iter(world)
        .map(|t| t.translation.dot(up))
        .fold(f32::INFINITY, f32::min);
    let lowest = cloths.min(bodies);
    if lowest.is_finite() { lowest } else { 0.0 }
}

/// The `state_hash` of the report: each cloth's [`metrics::state_hash`], sorted, hashed again.
fn combined_hash(mut cloth_hashes: Vec<u64>) -> String {
    cloth_hashes.sort_unstable();
    let bits: Vec<u8> = cloth_hashes.iter().flat_map(|h| h.to_le_bytes()).collect();
    format!("{:016x}", metrics::fnv1a(&bits))
}

/// The report's `state_hash` of the world now, alone (cheap: no intersection counts).
pub fn state_hash(world: &mut World) -> String {
    let mut cloths = world.query::<&Particles>();
    combined_hash(cloths.iter(world).map(|p| metrics::state_hash(&p.x, &p.v)).collect())
}

/// Measures the world's cloths now.
pub fn report(world: &mut World, preset: &str, frames: u32) -> HeadlessReport {
    // every collider the cloths meet, Avian's and mesh colliders included; before a step, the scene's own
    let met: Vec<_> = world
        .get_resource::<CollisionWorld>()
        .map(|w| w.colliders.iter().map(|c| c.world.clone()).collect())
        .unwrap_or_default();
    let shapes: Vec<_> = if met.is_empty() {
        world.query::<(&ClothCollider, &Transform)>().iter(world).map(|(c, t)| c.shape.placed(t)).collect()
    } else {
        met
    };
    let mut r = HeadlessReport {
        preset: preset.to_string(),
        frames,
        sim_time: world.resource::<SimClock>().time,
        cloths: 0,
        particles: 0,
        constraints: 0,
        triangles: 0,
        torn_edges: 0,
        contacts: 0,
        max_stretch: 0.0,
        kinetic_energy: 0.0,
        finite: true,
        bounds: None,
        max_speed: 0.0,
        state_hash: String::new(),
        min_collider_distance: f32::INFINITY,
        self_intersections: 0,
        cloth_crossings: 0,
        collider_piercings: 0,
        capped_moves: 0,
        energy_gain: None,
        balloon_fill: Vec::new(),
        max_attachment_error: None,
        asleep: 0,
        ms_per_frame: 0.0,
        stage_ms: BTreeMap::new(),
        bodies: Vec::new(),
    };
    r.max_attachment_error =
        world.query::<&crate::skinning::ClothSkinning>().iter(world).map(|s| s.max_attachment_error).reduce(f32::max);
    let mut bodies: Vec<_> = world.query::<(Entity, &ClothRigidBody, &Transform)>().iter(world).collect();
    bodies.sort_by_key(|(e, _, _)| *e);
    r.bodies = bodies
        .into_iter()
        .map(|(_, b, t)| BodyState {
            position: t.translation,
            velocity: b.velocity,
            angular_velocity: b.angular_velocity,
        })
        .collect();
    let mut cloths = world.query::<(
        &Particles,
        &StretchConstraints,
        &BendConstraints,
        &Contacts,
        &crate::sim::cloth::ClothMesh,
        (&crate::sim::cloth::Cloth, &crate::sim::cloth::CappedMoves, Has<crate::sim::cloth::Asleep>),
        Option<&Balloon>,
    )>();
    let pressure = world.resource::<crate::sim::SimParams>().pressure;
    let mut cloth_hashes = Vec::new();
    let (mut all_positions, mut all_triangles) = (Vec::new(), Vec::new());
    for (particles, stretch, bend, contacts, mesh, (cloth, capped, asleep), balloon) in cloths.iter(world) {
        if let Some(balloon) = balloon {
            // a torn balloon is open: it holds no air, and its mesh encloses no volume to measure
            let volume = if cloth.tears == 0 { enclosed_volume(&particles.x, &mesh.triangles) } else { 0.0 };
            r.balloon_fill.push(volume / (balloon.rest_volume * pressure));
        }
        r.cloths += 1;
        r.capped_moves += capped.0;
        r.asleep += usize::from(asleep);
        let offset = all_positions.len() as u32;
        all_positions.extend_from_slice(&particles.x);
        all_triangles.extend(mesh.triangles.iter().map(|t| t.map(|v| v + offset)));
        cloth_hashes.push(metrics::state_hash(&particles.x, &particles.v));
        r.torn_edges += cloth.tears;
        r.particles += particles.len();
        r.constraints += stretch.len() + bend.len();
        r.triangles += mesh.triangles.len();
        r.contacts += contacts.0.len();
        r.max_stretch = r.max_stretch.max(metrics::max_stretch(&particles.x, stretch.edges(), stretch.rest_length()));
        r.kinetic_energy += metrics::kinetic_energy(&particles.v, &particles.mass);
        r.finite &= metrics::all_finite(&particles.x);
        r.max_speed = r.max_speed.max(metrics::max_speed(&particles.v));
        if let Some([lo, hi]) = metrics::bounds(&particles.x) {
            r.bounds = Some(r.bounds.map_or([lo, hi], |[a, b]| [a.min(lo), b.max(hi)]));
        }
        r.self_intersections += count_intersections(&particles.x, &mesh.triangles);
        for shape in &shapes {
            for x in &particles.x {
                r.min_collider_distance = r.min_collider_distance.min(shape.signed_distance(*x));
            }
        }
    }
    // every cloth together pierces itself as each alone does, plus where the cloths cross each other
    r.cloth_crossings = count_intersections(&all_positions, &all_triangles).saturating_sub(r.self_intersections);
    let edges: Vec<_> = world
        .get_resource::<CollisionWorld>()
        .map(|w| w.colliders.iter().flat_map(|c| c.world.edges()).collect())
        .unwrap_or_default();
    r.collider_piercings = count_piercings(&edges, &all_positions, &all_triangles);
    r.state_hash = combined_hash(cloth_hashes);
    let timings = world.resource::<StageTimings>();
    r.ms_per_frame = timings.mean_step_ms();
    r.stage_ms = timings.mean_ms().iter().map(|(s, ms)| (s.name().to_string(), *ms)).collect();
    r
}
