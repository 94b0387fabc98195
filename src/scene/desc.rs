//! The scene description: what a preset file holds (`docs/presets.md` documents every field). Plain serde
//! data, independent of Bevy entities, so a scene can be built in code, written to RON, read back, and spawned
//! headless or in a window. Sizes and counts are checked while parsing (`validate.rs`).

use bevy::math::{EulerRot, Quat, Vec3};
use serde::{Deserialize, Serialize};

use crate::sim::SimParams;
use crate::sim::cloth::ClothMaterial;
use crate::sim::collide::{ColliderMotion, ColliderShape};
use crate::sim::constraints::attach::Motion;
use crate::sim::params::Solver;
use crate::validate;

pub use super::shape::{MeshShape, ShapeDesc};

/// A whole scene: cloths, colliders, solver parameters, camera.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SceneDesc {
    /// Scene name; a preset without one takes its file's stem.
    pub name: String,
    /// Solver parameters the scene starts with.
    pub params: SimParams,
    /// The cloths, each spawned as one entity.
    pub cloths: Vec<ClothDesc>,
    /// The colliders; the ground plane alone by default.
    #[serde(deserialize_with = "checked_colliders")]
    pub colliders: Vec<ColliderDesc>,
    /// Where the orbit camera starts.
    pub camera: CameraDesc,
    /// Balls thrown into the scene at given times (dynamic rigid spheres, §4.2), besides the user's throws.
    pub throws: Vec<ThrowDesc>,
    /// Seed of the random gusts.
    pub seed: u64,
    /// Animated, skinned characters cloths can be worn by (`ClothDesc::skinning`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub characters: Vec<CharacterDesc>,
    /// Where the scene was read from: its asset path (`presets/NAME.ron`), if it came from the asset folder.
    #[serde(skip)]
    pub source: Option<String>,
}

impl Default for SceneDesc {
    fn default() -> Self {
        Self {
            name: "untitled".into(),
            params: SimParams::default(),
            cloths: Vec::new(),
            colliders: vec![ColliderDesc::ground()],
            camera: CameraDesc::default(),
            throws: Vec::new(),
            seed: 0,
            characters: Vec::new(),
            source: None,
        }
    }
}

impl SceneDesc {
    /// Whether nothing outside the cloths and bodies does work on them: no wind or gusts, no moving pins, grips or
    /// colliders, no throws, no balloon pressed above its rest volume. Their energy can then only fall.
    pub fn is_closed(&self) -> bool {
        let params = self.params.sanitized();
        let still = |m: &Motion| *m == Motion::Fixed;
        params.wind == Vec3::ZERO
            && params.wind_gust == 0.0
            && self.throws.is_empty()
            && self.colliders.iter().all(|c| c.motion == ColliderMotion::Static)
            && self.cloths.iter().all(|c| still(&c.pin_motion) && c.grips.iter().all(|g| still(&g.motion)))
            && (params.pressure <= 1.0 || self.cloths.iter().all(|c| !c.balloon))
            && self.characters.is_empty()
    }
}

/// Placement of an object: translation in metres, rotation as XYZ Euler angles in degrees.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Placement {
    /// Translation, metres.
    #[serde(deserialize_with = "validate::finite_vec")]
    pub translation: Vec3,
    /// Rotation as XYZ Euler angles, degrees.
    #[serde(deserialize_with = "validate::finite_vec")]
    pub rotation_degrees: Vec3,
}

impl Placement {
    /// A placement at `translation`, unrotated.
    pub fn at(translation: Vec3) -> Self {
        Self { translation, ..Default::default() }
    }

    /// The rotation as a quaternion.
    pub fn rotation(&self) -> Quat {
        let r = self.rotation_degrees.to_array().map(f32::to_radians);
        Quat::from_euler(EulerRot::XYZ, r[0], r[1], r[2])
    }

    /// The world position of the local point `local`: rotated, then translated.
    pub fn apply(&self, local: Vec3) -> Vec3 {
        self.rotation() * local + self.translation
    }
}

/// The surface a cloth is built from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum ClothShape {
    /// `cols`×`rows` quads of `width`×`depth` metres in the local XZ plane (horizontal until rotated).
    Grid {
        /// Quads along the local X axis (u).
        #[serde(deserialize_with = "validate::grid_cells")]
        cols: u32,
        /// Quads along the local Z axis (v).
        #[serde(deserialize_with = "validate::grid_cells")]
        rows: u32,
        /// Extent along X, metres.
        #[serde(deserialize_with = "validate::length")]
        width: f32,
        /// Extent along Z, metres.
        #[serde(deserialize_with = "validate::length")]
        depth: f32,
    },
    /// A triangle mesh from a Wavefront OBJ file, by its path in the asset folder (`meshes/NAME.obj`),
    /// scaled by `scale`.
    Obj {
        /// Asset path of the OBJ file.
        file: String,
        /// Factor the file's coordinates are multiplied by; 1 by default.
        #[serde(default = "one", deserialize_with = "validate::length")]
        scale: f32,
    },
    /// A flat disk of radius `radius` metres in the local XZ plane, centred on the placement's origin:
    /// `rings` concentric rings of nearly equilateral triangles (1–200; 1 + 3·rings·(rings + 1) vertices), as
    /// a round tablecloth or the Cusick drape test's specimen.
    Disk {
        /// Radius, metres.
        #[serde(deserialize_with = "validate::length")]
        radius: f32,
        /// Rings of vertices around the centre, clamped to 1–200.
        rings: u32,
    },
    /// A closed sphere: an icosahedron subdivided `subdivisions` times (0–6; 10·4^s + 2 vertices) of radius
    /// `radius` metres, centred on the placement's origin.
    Icosphere {
        /// Subdivision steps, clamped to 6.
        subdivisions: u32,
        /// Radius, metres.
        #[serde(deserialize_with = "validate::length")]
        radius: f32,
    },
}

fn one() -> f32 {
    1.0
}

/// Which vertices to attach, by texture coordinate (u along the grid's columns, v along its rows, both 0–1)
/// or by index.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum PinSelector {
    /// The four corners of a grid.
    Corners,
    /// The vertex whose (u, v) is nearest.
    At {
        /// Texture coordinate u, 0–1.
        u: f32,
        /// Texture coordinate v, 0–1.
        v: f32,
    },
    /// Every vertex of the row nearest to v.
    Row {
        /// Texture coordinate v of the row, 0–1.
        v: f32,
    },
    /// The vertices of the row nearest to v whose u lies in `from_u..=to_u`.
    RowSpan {
        /// Texture coordinate v of the row, 0–1.
        v: f32,
        /// Smallest u taken.
        from_u: f32,
        /// Largest u taken.
        to_u: f32,
    },
    /// Every vertex of the column nearest to u.
    Column {
        /// Texture coordinate u of the column, 0–1.
        u: f32,
    },
    /// Vertices by index.
    Indices(Vec<u32>),
}

/// One cloth.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ClothDesc {
    /// Name of the cloth, given to its [`Cloth`](crate::sim::cloth::Cloth) component and used in errors.
    pub name: String,
    /// The surface the cloth is built from.
    pub shape: ClothShape,
    /// Where the shape is placed in the world.
    pub placement: Placement,
    /// Vertices pinned (attached, §3.6); they move with `pin_motion`.
    pub pins: Vec<PinSelector>,
    /// How the pinned vertices move (a kinematic attachment, §3.6); `Fixed` for pins.
    pub pin_motion: Motion,
    /// Stiffnesses, density and thickness.
    pub material: ClothMaterial,
    /// sRGB colour of the cloth.
    pub color: [f32; 3],
    /// How the cloth's surface is drawn: its weave or pattern and the colour of its back.
    #[serde(skip_serializing_if = "Fabric::is_default")]
    pub fabric: Fabric,
    /// A balloon (§4.4): the mesh must be closed; its volume is held at k_pressure · V0.
    pub balloon: bool,
    /// More kinematic attachments (§3.6), each moving its own vertices: a cloth held by a moving object.
    pub grips: Vec<Grip>,
    /// Vertices hanging from dynamic rigid bodies (two-way, §4.2), each body named by its collider's `name`.
    pub body_grips: Vec<BodyGrip>,
    /// Long-range attachments for this cloth alone, overriding `params.tethers` (absent: follow it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tethers: Option<bool>,
    /// The solver for this cloth alone, overriding `params.solver` (absent: follow it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub solver: Option<Solver>,
    /// Worn by a character: the cloth is placed relative to the character's bind pose, its pins follow the
    /// character's skin and its free vertices stay near it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skinning: Option<SkinningDesc>,
}

/// Vertices attached to a rigid body: they hold on to the body point where they are at the start, and the
/// body feels their pull.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BodyGrip {
    /// The `name` of a collider with a `body`.
    pub body: String,
    /// The vertices held.
    pub at: Vec<PinSelector>,
}

/// Vertices attached to a target moving with `motion` (§3.6), besides the cloth's pins.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Grip {
    /// The vertices held.
    pub at: Vec<PinSelector>,
    /// How the target moves.
    pub motion: Motion,
}

impl Default for ClothDesc {
    fn default() -> Self {
        Self {
            name: "cloth".into(),
            shape: ClothShape::Grid { cols: 32, rows: 32, width: 2.0, depth: 2.0 },
            placement: Placement::default(),
            pins: Vec::new(),
            pin_motion: Motion::Fixed,
            material: ClothMaterial::default(),
            color: CLOTH_RED,
            fabric: Fabric::default(),
            balloon: false,
            grips: Vec::new(),
            body_grips: Vec::new(),
            tethers: None,
            solver: None,
            skinning: None,
        }
    }
}

/// The pattern drawn on a cloth's surface, generated at start-up and mapped through its texture coordinates.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Pattern {
    /// A plain weave: warp and weft threads passing over and under each other.
    #[default]
    Woven,
    /// Two-tone squares, the clearest view of stretch and shear.
    Checker,
    /// One flat colour.
    Plain,
}

/// How a cloth looks: its pattern, how often the pattern repeats, and the colour of its back.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Fabric {
    /// The pattern on both sides.
    pub pattern: Pattern,
    /// Repeats of the pattern across the cloth's texture coordinates (0–1), 0.1–1000.
    #[serde(deserialize_with = "validate::fabric_repeats")]
    pub repeats: f32,
    /// sRGB colour of the back side; absent: a lighter, greyer shade of the front's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub back_color: Option<[f32; 3]>,
}

impl Default for Fabric {
    fn default() -> Self {
        Self { pattern: Pattern::Woven, repeats: validate::FABRIC_REPEATS.default, back_color: None }
    }
}

impl Fabric {
    /// Whether this is the default look (left out when a scene is saved).
    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }

    /// The back side's sRGB colour: `back_color`, or the front's `color` mixed halfway with a light grey.
    pub fn back(&self, color: [f32; 3]) -> [f32; 3] {
        self.back_color.unwrap_or(color.map(|c| 0.5 * c + 0.5 * 0.82))
    }
}

/// An animated, skinned character: a binary glTF file with a skin and clips (`assets/meshes/walker.glb`), where
/// it stands at t = 0, the clip it plays and how it moves (a `Rotate` turns it too: a walk around a circle).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CharacterDesc {
    /// The name cloths give in `skinning.character`.
    pub name: String,
    /// Asset path of the `.glb` file.
    pub file: String,
    /// Where the character stands at t = 0.
    pub placement: Placement,
    /// The clip it plays, by name.
    pub animation: String,
    /// How it moves from its placement.
    pub motion: Motion,
}

impl Default for CharacterDesc {
    fn default() -> Self {
        Self {
            name: "character".into(),
            file: "meshes/walker.glb".into(),
            placement: Placement::default(),
            animation: "idle".into(),
            motion: Motion::Fixed,
        }
    }
}

/// How a cloth is worn by a character (Jolt's and PhysX's skinned constraints): its pins are attached to the
/// character's skin, and each free vertex stays within `max_distance` of where the skin would carry it and
/// outside a backstop sphere of `backstop_radius` behind that point.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SkinningDesc {
    /// The character's name.
    pub character: String,
    /// How far a free vertex may stray from its skinned position, metres.
    #[serde(deserialize_with = "validate::length")]
    pub max_distance: f32,
    /// Radius of the backstop sphere, metres; 0 turns the backstop off.
    #[serde(deserialize_with = "validate::finite")]
    pub backstop_radius: f32,
}

impl Default for SkinningDesc {
    fn default() -> Self {
        Self { character: "character".into(), max_distance: 0.5, backstop_radius: 0.3 }
    }
}

/// drape's default cloth colour (sRGB), also what the smoke test looks for in screenshots.
pub const CLOTH_RED: [f32; 3] = [0.85, 0.18, 0.14];

/// One collider.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ColliderDesc {
    /// A name cloths can refer to (`body_grips`); may be empty.
    pub name: String,
    /// Shape in the collider's local frame: an analytic shape, or `Mesh(file, scale)` (feature `avian`).
    pub shape: ShapeDesc,
    /// Pose at t = 0.
    pub placement: Placement,
    /// How the collider moves (kinematic); `Static` by default. Ignored for a dynamic `body`.
    pub motion: ColliderMotion,
    /// Coulomb friction μ of cloth on this collider, in [`FRICTION`](crate::sim::knobs::FRICTION)'s range; `None` uses
    /// the panel's friction.
    #[serde(deserialize_with = "validate::optional_friction")]
    pub friction: Option<f32>,
    /// Restitution e of cloth on this collider, in [`RESTITUTION`](crate::sim::knobs::RESTITUTION)'s range; `None`
    /// uses the panel's restitution.
    #[serde(deserialize_with = "validate::optional_restitution")]
    pub restitution: Option<f32>,
    /// Makes the collider a dynamic rigid body (sphere, box or capsule) coupled two-way with cloth (§4.2).
    pub body: Option<BodyDesc>,
    /// sRGB colour.
    pub color: [f32; 3],
}

/// Mass and initial velocities of a dynamic rigid body.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct BodyDesc {
    /// Mass in kg (uniform density).
    #[serde(deserialize_with = "validate::length")]
    pub mass: f32,
    /// Initial velocity, m/s.
    #[serde(default, deserialize_with = "validate::finite_vec")]
    pub velocity: Vec3,
    /// Initial angular velocity, rad/s (world axes).
    #[serde(default, deserialize_with = "validate::finite_vec")]
    pub angular_velocity: Vec3,
}

/// A ball thrown into the scene at simulated time `time`: a dynamic sphere starting at `from` with `velocity`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ThrowDesc {
    /// Simulated time of the throw, seconds.
    #[serde(deserialize_with = "validate::finite")]
    pub time: f32,
    /// Starting centre of the ball, metres.
    #[serde(deserialize_with = "validate::finite_vec")]
    pub from: Vec3,
    /// Initial velocity, m/s.
    #[serde(deserialize_with = "validate::finite_vec")]
    pub velocity: Vec3,
    /// Radius of the ball, metres.
    #[serde(deserialize_with = "validate::length")]
    pub radius: f32,
    /// Mass of the ball, kg.
    #[serde(deserialize_with = "validate::length")]
    pub mass: f32,
}

impl Default for ColliderDesc {
    fn default() -> Self {
        Self::ground()
    }
}

/// The colliders of a file, each checked for a combination of fields that has no meaning
/// ([`ColliderDesc::problem`]); the error names the collider.
fn checked_colliders<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<ColliderDesc>, D::Error> {
    let colliders = Vec::<ColliderDesc>::deserialize(d)?;
    for (k, collider) in colliders.iter().enumerate() {
        if let Some(problem) = collider.problem() {
            let name = if collider.name.is_empty() {
                format!("collider {k}")
            } else {
                format!("collider '{}'", collider.name)
            };
            return Err(serde::de::Error::custom(format!("{name}: {problem}")));
        }
    }
    Ok(colliders)
}

impl ColliderDesc {
    /// Why this collider makes no sense, if it does not: an infinite plane cannot move, since a turning or
    /// moving plane's far parts would sweep the cloth at any speed.
    pub fn problem(&self) -> Option<String> {
        let moves = self.motion != ColliderMotion::Static && self.body.is_none();
        (self.shape == ShapeDesc::Analytic(ColliderShape::Plane) && moves).then(|| {
            "a plane is infinite and cannot move (its far parts would move at any speed): use a thin box".to_string()
        })
    }

    /// The ground plane y = 0.
    pub fn ground() -> Self {
        Self {
            name: String::new(),
            shape: ShapeDesc::Analytic(ColliderShape::Plane),
            placement: Placement::default(),
            motion: ColliderMotion::Static,
            friction: None,
            restitution: None,
            body: None,
            color: [0.42, 0.45, 0.48],
        }
    }

    /// A static sphere of `radius` metres centred at `center`.
    pub fn sphere(center: Vec3, radius: f32) -> Self {
        Self {
            shape: ShapeDesc::Analytic(ColliderShape::Sphere { radius }),
            placement: Placement::at(center),
            color: [0.55, 0.62, 0.75],
            ..Self::ground()
        }
    }
}

/// Where the orbit camera starts.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CameraDesc {
    /// Point the camera orbits, metres.
    pub focus: Vec3,
    /// Horizontal angle in degrees (0 looks along −Z).
    pub yaw_degrees: f32,
    /// Elevation in degrees.
    pub pitch_degrees: f32,
    /// Distance from the focus, metres.
    pub distance: f32,
}

impl Default for CameraDesc {
    fn default() -> Self {
        Self { focus: Vec3::new(0.0, 1.2, 0.0), yaw_degrees: 25.0, pitch_degrees: 15.0, distance: 5.5 }
    }
}
