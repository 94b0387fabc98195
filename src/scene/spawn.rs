//! Turning a [`SceneDesc`] into entities, and replacing the running scene. A scene is built completely before
//! the old one is touched: if building fails the error is logged and kept in [`SceneStatus`], and the running
//! scene stays.

use bevy::prelude::*;
use thiserror::Error;

use super::desc::{CharacterDesc, ClothDesc, ClothShape, ColliderDesc, Fabric, SceneDesc, SkinningDesc};
use super::desc::{MeshShape, ShapeDesc};
use super::mesh_collider::{MeshCollider, read_obj};
use crate::sim::aerodynamics::GustSeed;
use crate::sim::cloth::{Balloon, BodyAttachment, BodyAttachments, ClothBundle};
use crate::sim::cloth::{ClothCollider, PreviousPose};
use crate::sim::collide::{ColliderMotion, ColliderShape};
use crate::sim::constraints::attach::Motion;
use crate::sim::constraints::volume::enclosed_volume;
use crate::sim::mesh::icosphere;
use crate::sim::mesh::topology::{self, MeshError};
use crate::sim::rigid::ClothRigidBody;
use crate::sim::{SimClock, SimParams};
use crate::skinning::{ClothSkinning, SkinLimits, SkinnedCharacter, read_glb, spawn_character};
use crate::spawn::{ClothBuilder, select_vertices};

/// Why a scene could not be built.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum SceneError {
    /// A cloth's mesh cannot become a cloth.
    #[error("cloth '{name}': {source}")]
    Cloth {
        /// The cloth's name.
        name: String,
        /// What is wrong with the mesh.
        source: MeshError,
    },
    /// A cloth's OBJ file cannot be read or parsed.
    #[error("cloth '{name}': {message}")]
    MeshFile {
        /// The cloth's name.
        name: String,
        /// The file and what went wrong.
        message: String,
    },
    /// A balloon's mesh is not closed (§4.4).
    #[error("cloth '{name}': a balloon needs a closed mesh, but {open_edges} edges border only one triangle")]
    OpenBalloon {
        /// The cloth's name.
        name: String,
        /// Edges bordering only one triangle.
        open_edges: usize,
    },
    /// A body grip names no collider with a body.
    #[error("cloth '{name}': body_grips names '{body}', but no collider with a body has that name")]
    UnknownBody {
        /// The cloth's name.
        name: String,
        /// The body name it gives.
        body: String,
    },
    /// A body grip names a mesh collider: drape's holds couple only its own bodies.
    #[error(
        "cloth '{name}': body_grips names '{body}', a mesh collider; only a sphere, box or capsule body can hold \
         cloth (a mesh collider's body is Avian's, and a hold needs drape's own body to lend its mass to the \
         vertices it carries)"
    )]
    GripOnMesh {
        /// The cloth's name.
        name: String,
        /// The mesh collider's name.
        body: String,
    },
    /// A collider with a `body` is neither a sphere, a box nor a capsule.
    #[error("collider '{name}': only a sphere, box or capsule can be a dynamic body")]
    NotDynamic {
        /// The collider's name.
        name: String,
    },
    /// A cloth starts partly outside a barrel, which would push it in through its wall at once.
    #[error(
        "cloth '{cloth}': {outside} of its vertices start outside barrel '{barrel}' (a barrel holds cloth inside it; \
         place the cloth within its radius and height)"
    )]
    OutsideBarrel {
        /// The cloth's name.
        cloth: String,
        /// The barrel's name (or its index among the colliders when it has none).
        barrel: String,
        /// How many vertices start outside.
        outside: usize,
    },
    /// A pinned or gripped vertex is inside a collider at the start, or its motion carries it into one.
    #[error(
        "cloth '{cloth}': {inside} of its pinned or gripped vertices are inside collider '{collider}' at t = {time:.2} s \
         (a pin inside a collider holds its neighbours against the surface and stretches them; move the pins or \
         the collider)"
    )]
    PinInsideCollider {
        /// The cloth's name.
        cloth: String,
        /// The collider's name (or its index among the colliders when it has none).
        collider: String,
        /// How many pinned or gripped vertices are inside it then.
        inside: usize,
        /// The first time found, seconds.
        time: f32,
    },
    /// A barrel's motion carries a pinned or gripped vertex out through its wall.
    #[error(
        "cloth '{cloth}': {outside} of its pinned or gripped vertices are outside barrel '{barrel}' at t = {time:.2} s \
         (the barrel's wall would sweep through pins that no contact moves and stretch the cloth between them; move \
         the pins or the barrel)"
    )]
    PinOutsideBarrel {
        /// The cloth's name.
        cloth: String,
        /// The barrel's name (or its index among the colliders when it has none).
        barrel: String,
        /// How many pinned or gripped vertices are outside it then.
        outside: usize,
        /// The first time found, seconds.
        time: f32,
    },
    /// A mesh collider's OBJ file cannot be read or parsed.
    #[error("collider '{name}': {message}")]
    ColliderMesh {
        /// The collider's name.
        name: String,
        /// The file and what went wrong.
        message: String,
    },
    /// A character's file cannot be read, or is not a skinned character.
    #[error("character '{name}': {message}")]
    CharacterFile {
        /// The character's name.
        name: String,
        /// The file and what went wrong.
        message: String,
    },
    /// A character names a clip its file does not have.
    #[error("character '{name}': no animation '{animation}' in its file (it has: {available})")]
    UnknownAnimation {
        /// The character's name.
        name: String,
        /// The clip it names.
        animation: String,
        /// The clips the file has.
        available: String,
    },
    /// A cloth's skinning names no character of the scene.
    #[error("cloth '{cloth}': skinning names character '{character}', but the scene has no character of that name")]
    UnknownCharacter {
        /// The cloth's name.
        cloth: String,
        /// The character it names.
        character: String,
    },
    /// A mesh collider in a build without Avian, whose queries drape's mesh colliders use.
    #[error("collider '{name}': a Mesh collider needs drape built with the `avian` feature (on by default)")]
    MeshWithoutAvian {
        /// The collider's name.
        name: String,
    },
}

/// Every entity that belongs to the running scene; despawned when the scene is replaced.
#[derive(Component, Clone, Copy, Debug, Default)]
pub struct SceneEntity;

/// How an object of the scene is drawn: its sRGB colour, and for a cloth its fabric.
#[derive(Component, Clone, Copy, Debug)]
pub struct Appearance {
    /// sRGB colour.
    pub color: [f32; 3],
    /// A cloth's pattern and back colour; `None` for colliders.
    pub fabric: Option<Fabric>,
}

impl Appearance {
    /// A plain colour (a collider's look).
    pub fn plain(color: [f32; 3]) -> Self {
        Self { color, fabric: None }
    }
}

/// The description of the running scene (what "reset" spawns again).
#[derive(Resource, Clone, Debug, Default)]
pub struct ActiveScene(pub SceneDesc);

/// A scene to load before the next step; set it to switch scenes, or to the active scene to reset.
#[derive(Resource, Clone, Debug, Default)]
pub struct SceneRequest(pub Option<SceneDesc>);

/// What the panel reports about scenes: the last error (a scene or preset that failed to load), and the last
/// message (such as where a preset was saved).
#[derive(Resource, Clone, Debug, Default)]
pub struct SceneStatus {
    /// The last scene or preset error, if any.
    pub error: Option<String>,
    /// The last message, if any.
    pub message: Option<String>,
}

/// A scene built and ready to spawn.
pub struct BuiltScene {
    /// The skinned characters, in the description's order.
    pub characters: Vec<BuiltCharacter>,
    /// The cloths, in the description's order.
    pub cloths: Vec<BuiltCloth>,
    /// The analytic colliders, in the description's order (holds refer to them by index).
    pub colliders: Vec<BuiltCollider>,
    /// The triangle-mesh colliders.
    pub meshes: Vec<BuiltMesh>,
}

/// A triangle-mesh collider ready to spawn.
pub struct BuiltMesh {
    /// Its name in the preset.
    pub name: Name,
    /// The collider component.
    pub collider: MeshCollider,
    /// Its colour.
    pub appearance: Appearance,
}

impl BuiltMesh {
    /// Spawns the collider as part of the scene.
    pub fn spawn(self, commands: &mut Commands) -> Entity {
        let pose = self.collider.start;
        commands.spawn((self.name, self.collider, pose, self.appearance, SceneEntity)).id()
    }
}

/// A cloth ready to spawn.
pub struct BuiltCloth {
    /// The cloth's components.
    pub bundle: ClothBundle,
    /// Its colour.
    pub appearance: Appearance,
    /// Its volume constraint if it is a balloon (§4.4).
    pub balloon: Option<Balloon>,
    /// (vertex, index of the body in [`BuiltScene::colliders`], the vertex in the body's frame).
    pub holds: Vec<(u32, usize, Vec3)>,
    /// The index of the character in [`BuiltScene::characters`] that wears it, and how far it may stray.
    pub skinning: Option<(usize, SkinLimits)>,
}

/// A skinned character ready to spawn.
pub struct BuiltCharacter {
    /// Its name in the preset.
    pub name: Name,
    /// The character, playing its clip.
    pub character: SkinnedCharacter,
    /// Asset path of its file, for a renderer to draw it.
    pub file: CharacterFile,
}

/// The asset path of a character's `.glb`, for a renderer to draw and play it as the physics poses it.
#[derive(Component, Clone, Debug, PartialEq)]
pub struct CharacterFile(pub String);

impl BuiltCharacter {
    /// Spawns the character and its bones' capsules as part of the scene.
    pub fn spawn(self, commands: &mut Commands) -> Entity {
        let entity = spawn_character(commands, self.name.as_str(), self.character, SceneEntity);
        commands.entity(entity).insert(self.file);
        entity
    }
}

/// A collider ready to spawn; dynamic if it has a body.
pub struct BuiltCollider {
    /// Its name in the preset (a thrown ball's is "ball").
    pub name: Name,
    /// The collider component.
    pub collider: ClothCollider,
    /// Its pose at t = 0.
    pub transform: Transform,
    /// Its colour.
    pub appearance: Appearance,
    /// Its rigid body if it is dynamic (§4.2).
    pub body: Option<ClothRigidBody>,
}

impl BuiltCollider {
    /// Spawns the collider as part of the scene.
    pub fn spawn(self, commands: &mut Commands) -> Entity {
        let pose = PreviousPose(self.transform);
        let mut entity = commands.spawn((self.name, self.collider, self.transform, pose, self.appearance, SceneEntity));
        if let Some(body) = self.body {
            entity.insert(body);
        }
        entity.id()
    }
}

/// Builds every cloth and collider of `desc` without touching the world.
pub fn build_scene(desc: &SceneDesc) -> Result<BuiltScene, SceneError> {
    let characters = desc.characters.iter().map(build_character).collect::<Result<Vec<_>, _>>()?;
    let meshes = desc.colliders.iter().filter_map(|c| match &c.shape {
        ShapeDesc::Mesh(shape) => Some(build_mesh(c, shape)),
        ShapeDesc::Analytic(_) => None,
    });
    let meshes = meshes.collect::<Result<Vec<_>, _>>()?;
    let analytic: Vec<ColliderDesc> = desc.colliders.iter().filter(|c| c.shape.analytic().is_some()).cloned().collect();
    let colliders = analytic.iter().filter_map(|c| Some(build_collider(c, c.shape.analytic()?)));
    let colliders = colliders.collect::<Result<Vec<_>, _>>()?;
    let cloths = desc
        .cloths
        .iter()
        .map(|c| {
            let worn = c.skinning.as_ref().map(|skinning| wearer(c, skinning, desc, &characters)).transpose()?;
            let frame = worn.map_or(Transform::IDENTITY, |k| characters[k].character.start);
            let bundle = build_cloth_in(c, frame)?;
            let skinning = worn.zip(c.skinning.as_ref()).map(|(k, skinning)| {
                let limits = SkinLimits {
                    max_distance: skinning.max_distance,
                    backstop_radius: skinning.backstop_radius.max(0.0),
                    margin: c.material.thickness,
                };
                (k, limits)
            });
            let balloon = if c.balloon { Some(build_balloon(c, &bundle)?) } else { None };
            let holds = build_holds(c, &bundle, &analytic, &colliders, &meshes)?;
            check_inside_barrels(c, &bundle, &analytic, &colliders)?;
            check_pins_outside_colliders(c, &bundle, &analytic, &colliders)?;
            let appearance = Appearance { color: c.color, fabric: Some(c.fabric) };
            Ok(BuiltCloth { bundle, appearance, balloon, holds, skinning })
        })
        .collect::<Result<Vec<_>, SceneError>>()?;
    Ok(BuiltScene { characters, cloths, colliders, meshes })
}

/// The character of `desc`, its file read, playing its clip.
fn build_character(desc: &CharacterDesc) -> Result<BuiltCharacter, SceneError> {
    let name = desc.name.clone();
    let path = super::preset::asset_root().join(&desc.file);
    let bytes = std::fs::read(&path)
        .map_err(|e| SceneError::CharacterFile { name: name.clone(), message: format!("{}: {e}", desc.file) })?;
    let model = read_glb(&bytes)
        .map_err(|e| SceneError::CharacterFile { name: name.clone(), message: format!("{}: {e}", desc.file) })?;
    let Some(clip) = model.clip(&desc.animation) else {
        let available = model.clips.iter().map(|c| c.name.as_str()).collect::<Vec<_>>().join(", ");
        return Err(SceneError::UnknownAnimation { name, animation: desc.animation.clone(), available });
    };
    let start = Transform::from_translation(desc.placement.translation).with_rotation(desc.placement.rotation());
    let character = SkinnedCharacter::new(std::sync::Arc::new(model), start, desc.motion, clip);
    Ok(BuiltCharacter { name: Name::new(name), character, file: CharacterFile(desc.file.clone()) })
}

/// The index of the character that wears cloth `desc`.
fn wearer(
    desc: &ClothDesc,
    skinning: &SkinningDesc,
    scene: &SceneDesc,
    characters: &[BuiltCharacter],
) -> Result<usize, SceneError> {
    let found = scene.characters.iter().position(|c| c.name == skinning.character).filter(|&k| k < characters.len());
    found
        .ok_or_else(|| SceneError::UnknownCharacter { cloth: desc.name.clone(), character: skinning.character.clone() })
}

/// The mesh collider of `desc`, its file read and scaled, if this build can collide with meshes.
fn build_mesh(desc: &ColliderDesc, shape: &MeshShape) -> Result<BuiltMesh, SceneError> {
    if !cfg!(feature = "avian") {
        return Err(SceneError::MeshWithoutAvian { name: desc.name.clone() });
    }
    let mesh = read_obj(&shape.file, shape.scale)
        .map_err(|message| SceneError::ColliderMesh { name: desc.name.clone(), message })?;
    let collider = MeshCollider {
        mesh: std::sync::Arc::new(mesh),
        motion: desc.motion.clone(),
        start: Transform::from_translation(desc.placement.translation).with_rotation(desc.placement.rotation()),
        body: desc.body,
        friction: desc.friction,
        restitution: desc.restitution,
    };
    Ok(BuiltMesh { name: Name::new(desc.name.clone()), collider, appearance: Appearance::plain(desc.color) })
}

/// The vertices of `desc.body_grips`, each with its body's index and its position in the body's frame.
fn build_holds(
    desc: &ClothDesc,
    cloth: &ClothBundle,
    descs: &[ColliderDesc],
    built: &[BuiltCollider],
    meshes: &[BuiltMesh],
) -> Result<Vec<(u32, usize, Vec3)>, SceneError> {
    let mut holds = Vec::new();
    for grip in &desc.body_grips {
        let (name, body) = (desc.name.clone(), grip.body.clone());
        let Some(k) = descs.iter().zip(built).position(|(d, b)| d.name == grip.body && b.body.is_some()) else {
            if meshes.iter().any(|m| m.name.as_str() == grip.body) {
                return Err(SceneError::GripOnMesh { name, body });
            }
            return Err(SceneError::UnknownBody { name, body });
        };
        let pose = built[k].transform;
        for i in select_vertices(&cloth.mesh.uvs, cloth.particles.len(), &grip.at) {
            let local = pose.rotation.inverse() * (cloth.particles.x[i as usize] - pose.translation);
            holds.push((i, k, local));
        }
    }
    Ok(holds)
}

/// A collider's name in a message: its own, or "collider k" (its place among the analytic colliders) if unnamed.
fn collider_label(desc: &ColliderDesc, k: usize) -> String {
    if desc.name.is_empty() { format!("collider {k}") } else { desc.name.clone() }
}

/// Refuses a cloth that starts with vertices outside a barrel: the barrel's contacts would pull them in through
/// its wall in the first step.
fn check_inside_barrels(
    desc: &ClothDesc,
    cloth: &ClothBundle,
    descs: &[ColliderDesc],
    built: &[BuiltCollider],
) -> Result<(), SceneError> {
    for (k, (collider_desc, collider)) in descs.iter().zip(built).enumerate() {
        if !matches!(collider.collider.shape, ColliderShape::Barrel { .. }) {
            continue;
        }
        let shape = collider.collider.shape.placed(&collider.transform);
        let outside = cloth.particles.x.iter().filter(|x| shape.signed_distance(**x) < 0.0).count();
        if outside > 0 {
            let barrel = collider_label(collider_desc, k);
            return Err(SceneError::OutsideBarrel { cloth: desc.name.clone(), barrel, outside });
        }
    }
    Ok(())
}

/// How far ahead [`check_pins_outside_colliders`] follows moving pins and colliders, seconds, and how often.
const PIN_LOOKAHEAD: (f32, f32) = (30.0, 1.0 / 60.0);

/// Refuses a cloth with a pinned or gripped vertex inside a collider at the start, or carried into one by the
/// pin's or the collider's motion within [`PIN_LOOKAHEAD`]: a pin has w = 0, so no contact moves it, and its free
/// neighbours are held on the surface while it pulls them in. A barrel's solid is its outside: a pin it starts
/// around ([`check_inside_barrels`]) must not leave it through its wall. A dynamic body is checked where it
/// starts.
fn check_pins_outside_colliders(
    desc: &ClothDesc,
    cloth: &ClothBundle,
    descs: &[ColliderDesc],
    built: &[BuiltCollider],
) -> Result<(), SceneError> {
    let pins = &cloth.attachments.0;
    let pins_move = pins.iter().any(|a| a.motion != Motion::Fixed);
    for (k, (collider_desc, collider)) in descs.iter().zip(built).enumerate() {
        let ClothCollider { shape, motion, .. } = &collider.collider;
        let moves = collider.body.is_none() && *motion != ColliderMotion::Static;
        let samples = if pins_move || moves { (PIN_LOOKAHEAD.0 / PIN_LOOKAHEAD.1) as u32 } else { 0 };
        for step in 0..=samples {
            let t = f64::from(step as f32 * PIN_LOOKAHEAD.1);
            let pose = if moves { motion.pose(&collider.transform, t) } else { collider.transform };
            let placed = shape.placed(&pose);
            let inside = pins.iter().filter(|a| placed.signed_distance(a.motion.target(a.anchor, t)) < 0.0).count();
            if inside > 0 {
                let (cloth, name, time) = (desc.name.clone(), collider_label(collider_desc, k), t as f32);
                return Err(match shape {
                    ColliderShape::Barrel { .. } => {
                        SceneError::PinOutsideBarrel { cloth, barrel: name, outside: inside, time }
                    }
                    _ => SceneError::PinInsideCollider { cloth, collider: name, inside, time },
                });
            }
        }
    }
    Ok(())
}

/// The cloth of `desc` in world space, pins attached (§3.6).
pub fn build_cloth(desc: &ClothDesc) -> Result<ClothBundle, SceneError> {
    build_cloth_in(desc, Transform::IDENTITY)
}

/// The cloth of `desc` placed within `frame` (a character's, for a cloth it wears), pins attached (§3.6).
fn build_cloth_in(desc: &ClothDesc, frame: Transform) -> Result<ClothBundle, SceneError> {
    let err = |source| SceneError::Cloth { name: desc.name.clone(), source };
    let local = match desc.shape {
        ClothShape::Grid { cols, rows, width, depth } => {
            if !(width.is_finite() && depth.is_finite() && width > 0.0 && depth > 0.0) {
                return Err(err(MeshError::NonFinite(0)));
            }
            topology::grid(cols, rows, width, depth).map_err(err)?
        }
        ClothShape::Obj { ref file, scale } => {
            read_obj(file, scale).map_err(|message| SceneError::MeshFile { name: desc.name.clone(), message })?
        }
        ClothShape::Disk { radius, rings } => topology::disk(radius, rings).map_err(err)?,
        ClothShape::Icosphere { subdivisions, radius } => {
            let (positions, triangles) = icosphere(subdivisions, radius, Vec3::ZERO);
            topology::TriangleMesh { positions, triangles, uvs: Vec::new() }
        }
    };
    let placement = frame.mul_transform(
        Transform::from_translation(desc.placement.translation).with_rotation(desc.placement.rotation()),
    );
    let mut cloth = ClothBuilder::from_triangles(local.positions, local.triangles, local.uvs)
        .named(desc.name.clone())
        .placed(placement)
        .material(desc.material)
        .attach(desc.pins.clone(), desc.pin_motion);
    for grip in &desc.grips {
        cloth = cloth.attach(grip.at.clone(), grip.motion);
    }
    let mut bundle = cloth.build().map_err(err)?;
    bundle.tethers.enabled = desc.tethers;
    bundle.solver.chosen = desc.solver;
    Ok(bundle)
}

/// The volume constraint of a balloon cloth (§4.4), V0 measured on the mesh as built.
fn build_balloon(desc: &ClothDesc, cloth: &ClothBundle) -> Result<Balloon, SceneError> {
    // closed: every edge has two triangles, i.e. one bending pair per edge
    let open_edges = cloth.stretch.len() - cloth.bend.len().min(cloth.stretch.len());
    if open_edges > 0 {
        return Err(SceneError::OpenBalloon { name: desc.name.clone(), open_edges });
    }
    let rest_volume = enclosed_volume(&cloth.particles.x, &cloth.mesh.triangles).abs();
    Ok(Balloon { rest_volume, target_volume: None, gradient: Vec::with_capacity(cloth.particles.len()) })
}

fn build_collider(desc: &ColliderDesc, shape: ColliderShape) -> Result<BuiltCollider, SceneError> {
    let transform = Transform::from_translation(desc.placement.translation).with_rotation(desc.placement.rotation());
    let body = match desc.body {
        None => None,
        Some(b) => {
            let solid = ClothRigidBody::solid(shape, b.mass);
            let Some(body) = solid else {
                return Err(SceneError::NotDynamic { name: desc.name.clone() });
            };
            Some(ClothRigidBody { velocity: b.velocity, angular_velocity: b.angular_velocity, ..body })
        }
    };
    let collider = ClothCollider {
        shape,
        motion: desc.motion.clone(),
        start: transform,
        friction: desc.friction,
        restitution: desc.restitution,
    };
    let name = Name::new(desc.name.clone());
    Ok(BuiltCollider { name, collider, transform, appearance: Appearance::plain(desc.color), body })
}

/// Replaces the running scene with the requested one, if any and if it builds.
pub(crate) fn apply_scene_request(
    mut commands: Commands,
    mut request: ResMut<SceneRequest>,
    mut active: ResMut<ActiveScene>,
    mut status: ResMut<SceneStatus>,
    (mut params, mut clock, mut seed): (ResMut<SimParams>, ResMut<SimClock>, ResMut<GustSeed>),
    old: Query<Entity, With<SceneEntity>>,
) {
    let Some(desc) = request.0.take() else {
        return;
    };
    let built = match build_scene(&desc) {
        Ok(built) => built,
        Err(e) => {
            error!("scene '{}' not loaded: {e}", desc.name);
            status.error = Some(format!("scene '{}': {e}", desc.name));
            return;
        }
    };
    for e in &old {
        commands.entity(e).despawn();
    }
    let bodies: Vec<Entity> = built.colliders.into_iter().map(|c| c.spawn(&mut commands)).collect();
    let characters: Vec<(Entity, SkinnedCharacter)> = built
        .characters
        .into_iter()
        .map(|c| {
            let character = c.character.clone();
            (c.spawn(&mut commands), character)
        })
        .collect();
    for mesh in built.meshes {
        mesh.spawn(&mut commands);
    }
    for cloth in built.cloths {
        let held = cloth
            .holds
            .iter()
            .filter_map(|&(vertex, k, local)| bodies.get(k).map(|&body| BodyAttachment { vertex, body, local }));
        let bundle = ClothBundle { body_attachments: BodyAttachments(held.collect()), ..cloth.bundle };
        let skinning = cloth.skinning.and_then(|(k, limits)| {
            let (entity, character) = characters.get(k)?;
            let x = &bundle.particles.x;
            Some(ClothSkinning::bind(*entity, &character.model, &character.start, x, limits))
        });
        let mut entity = commands.spawn((bundle, cloth.appearance, SceneEntity));
        if let Some(skinning) = skinning {
            entity.insert(skinning);
        }
        if let Some(balloon) = cloth.balloon {
            entity.insert(balloon);
        }
    }
    *params = desc.params.sanitized();
    *clock = SimClock::default();
    seed.0 = desc.seed;
    status.error = None;
    info!("scene '{}' loaded", desc.name);
    active.0 = desc;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::preset;

    #[test]
    fn hanging_sheet_pins_two_adjacent_corners() {
        let cloth = build_cloth(&preset::load("hanging_sheet").unwrap().cloths[0]).unwrap();
        let pinned: Vec<u32> = cloth.attachments.0.iter().map(|a| a.vertex).collect();
        assert_eq!(pinned, vec![0, 32]);
        assert!(pinned.iter().all(|&i| cloth.particles.w[i as usize] == 0.0));
        assert_eq!(cloth.particles.w.iter().filter(|&&w| w == 0.0).count(), 2);
    }
}
