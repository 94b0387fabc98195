//! A cloth as one entity with struct-of-arrays components (§4.1): particles, triangles, stretch and bending
//! constraints, attachments (§3.6) and the per-step contact list (§3.4).
//!
//! One entity per cloth, never one per particle: a projection touches 2–4 particles by index, linear passes
//! vectorise, and tearing edits arrays instead of spawning entities.

use bevy::ecs::change_detection::Tick;
use bevy::prelude::*;
use serde::{Deserialize, Serialize};

pub use super::collide::contact::{Contact, ContactKind};
use super::collide::contacts::Overlaps;
pub use super::collide::features::{FeatureContact, FeatureSearch};
use super::collide::planes::StepPlanes;
use super::collide::{ColliderMotion, ColliderShape};
use super::constraints::attach::Attachment;
use super::constraints::bend::{Folds, dihedral_angle};
use super::constraints::coloring;
use super::constraints::global::GlobalSystems;
use super::constraints::plan::{MIN_CHUNK, ProjectionPlan};
use super::constraints::response::Multipliers;
pub use super::constraints::storage::{BendConstraints, StretchConstraints};
use super::constraints::tether::{TetherLengths, TetherSet};
use super::knobs;
use super::mesh::topology::{self, MeshError};
use super::parallel::ColorChunks;
use super::params::Solver;
use super::rigid::ClothRigidBody;
use super::selfcollide::{Lifts, SelfContact, SelfContactSearch, StepSweep, Untangler};

/// Particle state of lines (1)–(3): positions x, predictions p, velocities v, inverse masses w.
#[derive(Component, Clone, Debug, Default)]
pub struct Particles {
    /// Positions x_i in metres (world space).
    pub x: Vec<Vec3>,
    /// Predicted positions p_i of line (7), projected by the solver.
    pub p: Vec<Vec3>,
    /// Velocities v_i in m/s.
    pub v: Vec<Vec3>,
    /// Inverse masses w_i = 1/m_i used by the solver; 0 for pinned, attached or held particles.
    pub w: Vec<f32>,
    /// Masses m_i in kg from the areal density (§4.1); never zero, kept when w is set to 0.
    pub mass: Vec<f32>,
}

impl Particles {
    /// Particles at rest at `positions` with the given masses.
    pub fn new(positions: Vec<Vec3>, mass: Vec<f32>) -> Self {
        let n = positions.len();
        Self {
            p: positions.clone(),
            x: positions,
            v: vec![Vec3::ZERO; n],
            w: mass.iter().map(|m| 1.0 / m).collect(),
            mass,
        }
    }

    /// Gives particle `i` back its inverse mass 1/m, unless an attachment still holds it.
    pub fn restore_inverse_mass(&mut self, i: usize, attachments: &[Attachment]) {
        if i < self.len() {
            self.w[i] = if attachments.iter().any(|a| a.vertex as usize == i) { 0.0 } else { 1.0 / self.mass[i] };
        }
    }

    /// Number of particles.
    pub fn len(&self) -> usize {
        self.x.len()
    }

    /// Whether there are no particles.
    pub fn is_empty(&self) -> bool {
        self.x.is_empty()
    }
}

/// The triangles of the cloth surface (indices into [`Particles`]), shared by rendering, aerodynamics and
/// tearing. Stored grouped by colour (`coloring`: no two triangles of one colour share a vertex), so the air
/// drag runs on all threads. Tearing only relabels a triangle's corners to a split vertex's copy, which never
/// makes two triangles share a vertex they did not share before: the colouring stays valid.
#[derive(Component, Clone, Debug, Default)]
pub struct ClothMesh {
    /// Triangles as indices into [`Particles`], grouped by colour.
    pub triangles: Vec<[u32; 3]>,
    /// Texture coordinates per particle (for rendering), possibly empty.
    pub uvs: Vec<[f32; 2]>,
    /// The triangles' colours cut into chunks for the threads.
    pub(crate) triangle_chunks: ColorChunks,
}

impl ClothMesh {
    /// Colours `triangles` (over `vertex_count` particles) and stores them grouped by colour.
    pub fn new(mut triangles: Vec<[u32; 3]>, uvs: Vec<[f32; 2]>, vertex_count: usize) -> Self {
        let coloring = coloring::color(&triangles, vertex_count);
        coloring::permute(&mut triangles, &coloring.order);
        let triangle_chunks = ColorChunks::new(&coloring.offsets, TRIANGLE_CHUNKS_PER_COLOR, MIN_CHUNK);
        Self { triangles, uvs, triangle_chunks }
    }
}

/// Chunks each colour of triangles is cut into, whatever the thread count (one colour's chunks are
/// independent, so the result is the same for any count).
const TRIANGLE_CHUNKS_PER_COLOR: u32 = 8;

/// Vertices attached to static or kinematic targets (§3.6); they carry w = 0.
#[derive(Component, Clone, Debug, Default)]
pub struct Attachments(pub Vec<Attachment>);

/// A particle held by the user's pointer: an attachment (§3.6) whose target follows the cursor. While held the
/// particle has w = 0; on release its inverse mass is restored.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct Grabbed {
    /// Index of the held particle.
    pub vertex: u32,
    /// Where the pointer holds the particle, world space.
    pub target: Vec3,
}

/// Cloth vertices attached to points of rigid bodies (§4.2): the vertex keeps its mass and is held on the
/// body point by an equality contact every iteration; the body feels the cloth's pull through
/// [`Contact::momentum_given`].
#[derive(Component, Clone, Debug, Default, PartialEq)]
pub struct BodyAttachments(pub Vec<BodyAttachment>);

/// One cloth vertex on one body point.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BodyAttachment {
    /// Index of the cloth vertex.
    pub vertex: u32,
    /// The rigid body's entity.
    pub body: Entity,
    /// The point in the body's frame.
    pub local: Vec3,
}

/// The collision constraints of the current step, cleared and refilled each step (capacity is kept).
#[derive(Component, Clone, Debug, Default)]
pub struct Contacts(pub Vec<Contact>);

/// The planes of the current step against the still triangle meshes and other general solids, found in its first
/// substep and turned into contacts in each ([`planes`](super::collide::planes)).
#[derive(Component, Clone, Debug, Default)]
pub struct ColliderPlanes(pub(crate) StepPlanes);

/// The colliders' edges and corners against the cloth's triangles in the current substep (§4.2,
/// [`features`](super::collide::features)); refilled in place.
#[derive(Component, Clone, Debug, Default)]
pub struct FeatureContacts {
    /// The constraints of the substep.
    pub contacts: Vec<FeatureContact>,
    /// The search's scratch.
    pub search: FeatureSearch,
}

/// What is left of the overlaps a cloth started with inside still colliders: how deep each vertex may still be,
/// measured in the cloth's first substep and shrinking as it leaves at [`DEPENETRATION_SPEED`] (see
/// `collide::contacts::depenetrate`).
///
/// [`DEPENETRATION_SPEED`]: super::collide::DEPENETRATION_SPEED
#[derive(Component, Clone, Debug, Default, PartialEq)]
pub struct StartingOverlaps(pub(crate) Overlaps);

impl StartingOverlaps {
    /// How deep each vertex may still be inside the collider it started in, metres (empty when none is).
    pub fn allowance(&self) -> &[f32] {
        self.0.allowance.as_deref().unwrap_or_default()
    }

    /// Whether a collider started through one of the cloth's triangles with no vertex inside it, in the cloth's
    /// first substep (the triangle leaves at the depenetration speed).
    pub fn triangles_started_inside(&self) -> bool {
        self.0.triangles_inside
    }

    /// Whether some vertex may still be leaving a starting overlap: not measured yet, or an allowance left.
    pub fn leaving(&self) -> bool {
        self.0.allowance.as_ref().is_none_or(|a| !a.is_empty())
    }
}

/// How many of the cloth's free vertex moves the speed cap ([`MAX_SPEED`]) has shortened since it was spawned.
/// The cap is a safety net: a legal scene whose carriers (pins, grips, colliders, bodies, wind) are slow never
/// needs it, so a count above zero is an alarm (the headless report and `drape soak` read it).
///
/// [`MAX_SPEED`]: super::integrate::MAX_SPEED
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CappedMoves(pub u64);

/// Self-collision state of a cloth (§4.3): the spatial hash of its triangles and the vertex–triangle
/// constraints of the current step, all refilled in place (no allocation once warm). Detection runs once per
/// fixed step, in its first substep, over the rays x → x + v·Δt_step with a margin of
/// [`SelfCollision::DETECTION_MARGIN`]·h; every substep projects the pairs found.
#[derive(Component, Clone, Debug, Default)]
pub struct SelfCollision {
    /// The spatial hash and candidate search of the detection (§4.3).
    pub search: SelfContactSearch,
    /// The vertex–triangle constraints found in this step.
    pub contacts: Vec<SelfContact>,
    /// Where the second and third group of `contacts` start (`split_in_halves`).
    pub halves: [usize; 2],
    /// Scratch of the split: each contact with its group.
    pub split_scratch: Vec<(u8, SelfContact)>,
    /// Where each vertex would be at the end of the step, x + v·Δt over the rest of it (the rays the detection
    /// sweeps).
    pub step_end: Vec<Vec3>,
    /// The rays of the last search, kept to tell when the vertices leave them and the search is made again.
    pub sweep: StepSweep,
    /// Scratch of a search made again: which vertices left their rays, and the contacts it found.
    pub(crate) strayed: Vec<bool>,
    pub(crate) fresh: Vec<SelfContact>,
    /// Releases the contacts that hold tangled cloth in its tangle.
    pub(crate) untangler: Untangler,
    /// Scratch of the lift of squeezed vertices (`selfcollide::lift_squeezed_vertices`).
    pub(crate) lifts: Lifts,
    /// The thickness h the contacts of this step keep, metres: the material's, capped by the edge length
    /// ([`self_collision_thickness`](super::selfcollide::self_collision_thickness)).
    pub thickness: f32,
}

impl SelfCollision {
    /// Detection band in units of the thickness h: pairs closer than this over the step become constraints
    /// (inactive until the vertex comes within h).
    pub const DETECTION_MARGIN: f32 = 2.0;
}

/// A closed cloth kept inflated by the volume constraint eq. (15) of §4.4: C = V(p) − k_pressure · V0.
/// k_pressure is [`SimParams::pressure`](super::SimParams::pressure).
#[derive(Component, Clone, Debug, Default)]
pub struct Balloon {
    /// V0, the volume enclosed by the mesh as built, m³.
    pub rest_volume: f32,
    /// The target volume of the substep being run, pumped toward k_pressure · V0 by
    /// [`BalloonPlugin`](super::BalloonPlugin); `None` (no volume constraint) without it and once the balloon
    /// has torn.
    pub target_volume: Option<f32>,
    /// ∇C per vertex, scratch reused every projection.
    pub gradient: Vec<Vec3>,
}

/// Material of one cloth; each field's unit, range and meaning are in its knob ([`ClothMaterial::KNOBS`]).
#[derive(Component, Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ClothMaterial {
    /// k_stretch of §4.1, applied through the iteration-independent k' of §3.3: [`knobs::STRETCH_STIFFNESS`].
    #[serde(deserialize_with = "crate::validate::stretch_stiffness")]
    pub stretch_stiffness: f32,
    /// k_bend of §4.1: [`knobs::BEND_STIFFNESS`].
    #[serde(deserialize_with = "crate::validate::bend_stiffness")]
    pub bend_stiffness: f32,
    /// Areal density ρ of §4.1, kg/m²: [`knobs::DENSITY`].
    #[serde(deserialize_with = "crate::validate::density")]
    pub density: f32,
    /// Thickness h in metres, the gap kept to colliders and between layers (§3.4, §4.3): [`knobs::THICKNESS`].
    #[serde(deserialize_with = "crate::validate::thickness")]
    pub thickness: f32,
    /// XPBD's compliance α of the edge constraints, m/N: [`knobs::STRETCH_COMPLIANCE`].
    #[serde(deserialize_with = "crate::validate::stretch_compliance")]
    pub stretch_compliance: f32,
    /// XPBD's compliance α of the bending constraints: [`knobs::BEND_COMPLIANCE`].
    #[serde(deserialize_with = "crate::validate::bend_compliance")]
    pub bend_compliance: f32,
    /// XPBD's compliance α of a balloon's volume, m³/Pa: [`knobs::VOLUME_COMPLIANCE`].
    #[serde(deserialize_with = "crate::validate::volume_compliance")]
    pub volume_compliance: f32,
}

impl Default for ClothMaterial {
    fn default() -> Self {
        Self {
            stretch_stiffness: knobs::STRETCH_STIFFNESS.default,
            bend_stiffness: knobs::BEND_STIFFNESS.default,
            density: knobs::DENSITY.default,
            thickness: knobs::THICKNESS.default,
            stretch_compliance: knobs::STRETCH_COMPLIANCE.default,
            bend_compliance: knobs::BEND_COMPLIANCE.default,
            volume_compliance: knobs::VOLUME_COMPLIANCE.default,
        }
    }
}

impl ClothMaterial {
    /// The material's knobs, in the order of the fields.
    pub const KNOBS: &[knobs::Knob] = &[
        knobs::STRETCH_STIFFNESS,
        knobs::BEND_STIFFNESS,
        knobs::DENSITY,
        knobs::THICKNESS,
        knobs::STRETCH_COMPLIANCE,
        knobs::BEND_COMPLIANCE,
        knobs::VOLUME_COMPLIANCE,
    ];

    /// A copy with every field forced into its knob's range (a non-finite value becomes the knob's default).
    pub fn sanitized(&self) -> Self {
        Self {
            stretch_stiffness: knobs::STRETCH_STIFFNESS.clamp(self.stretch_stiffness),
            bend_stiffness: knobs::BEND_STIFFNESS.clamp(self.bend_stiffness),
            density: knobs::DENSITY.clamp(self.density),
            thickness: knobs::THICKNESS.clamp(self.thickness),
            stretch_compliance: knobs::STRETCH_COMPLIANCE.clamp(self.stretch_compliance),
            bend_compliance: knobs::BEND_COMPLIANCE.clamp(self.bend_compliance),
            volume_compliance: knobs::VOLUME_COMPLIANCE.clamp(self.volume_compliance),
        }
    }
}

/// The stiffnesses and compliances the solver uses: they follow [`ClothMaterial`]'s with time constant
/// [`SolverStiffness::EASING`], so a material changed live reshapes a resting cloth quasi-statically instead
/// of making it jump. A solver switched live is met the same way: the projection blends the two solvers'
/// corrections, the new one's share easing from 0 to 1 (`response::Blend`).
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct SolverStiffness {
    /// The [`ClothMaterial::stretch_stiffness`] the solver uses now (§4.1).
    pub stretch_stiffness: f32,
    /// The [`ClothMaterial::bend_stiffness`] the solver uses now (§4.1).
    pub bend_stiffness: f32,
    /// XPBD's stretch compliance α the solver uses now, m/N.
    pub stretch_compliance: f32,
    /// XPBD's bending compliance α the solver uses now.
    pub bend_compliance: f32,
    /// XPBD's volume compliance α the solver uses now, m³/Pa.
    pub volume_compliance: f32,
    /// The share of XPBD in the projection's corrections, 0 (the paper's) to 1 (XPBD); `None` before the
    /// first step, which takes the cloth's solver at once.
    pub xpbd_share: Option<f32>,
}

impl SolverStiffness {
    /// Time constant of the easing, seconds.
    pub const EASING: f32 = 0.6;
    /// How long a solver switch takes, seconds.
    pub const SWITCH: f32 = 1.5;

    /// The material's stiffnesses and compliances, not eased.
    pub fn of(material: &ClothMaterial) -> Self {
        Self {
            stretch_stiffness: material.stretch_stiffness,
            bend_stiffness: material.bend_stiffness,
            stretch_compliance: material.stretch_compliance,
            bend_compliance: material.bend_compliance,
            volume_compliance: material.volume_compliance,
            xpbd_share: None,
        }
    }

    /// Moves toward `material`'s values and `solver` over `dt` seconds.
    pub fn ease_toward(&mut self, material: &ClothMaterial, solver: Solver, dt: f32) {
        let a = 1.0 - (-dt / Self::EASING).exp();
        let step = |current: f32, target: f32| {
            let next = current + (target - current) * a;
            if (target - next).abs() < 1e-4 { target } else { next }
        };
        self.stretch_stiffness = step(self.stretch_stiffness, material.stretch_stiffness);
        self.bend_stiffness = step(self.bend_stiffness, material.bend_stiffness);
        // compliances span orders of magnitude: eased in ln(α + 1e-9), so a step from 1e-6 to 1e-2 takes as
        // long as one from 1e-4 to 1
        let log_step = |current: f32, target: f32| {
            const FLOOR: f32 = 1e-9;
            let (now, to) = ((current + FLOOR).ln(), (target + FLOOR).ln());
            let next = now + (to - now) * a;
            if (to - next).abs() < 1e-3 || !next.is_finite() { target } else { (next.exp() - FLOOR).max(0.0) }
        };
        self.stretch_compliance = log_step(self.stretch_compliance, material.stretch_compliance);
        self.bend_compliance = log_step(self.bend_compliance, material.bend_compliance);
        self.volume_compliance = log_step(self.volume_compliance, material.volume_compliance);
        let target = if solver == Solver::Xpbd { 1.0 } else { 0.0 };
        let glide = |share: f32| share + (target - share).clamp(-dt / Self::SWITCH, dt / Self::SWITCH);
        self.xpbd_share = Some(self.xpbd_share.map_or(target, glide));
    }

    /// XPBD's weight in the projection's corrections: its share through a smoothstep, because a small share of
    /// XPBD's full corrections already stiffens the paper's k' a lot, so the weight leaves 0 and comes back to it
    /// slowly in both directions.
    pub fn xpbd_weight(&self) -> f32 {
        let s = self.xpbd_share.unwrap_or(0.0).clamp(0.0, 1.0);
        s * s * (3.0 - 2.0 * s)
    }
}

/// A collider the cloth cannot enter; kinematic if `motion` is not static, dynamic if the entity also has a
/// [`ClothRigidBody`].
#[derive(Component, Clone, Debug, PartialEq)]
#[require(Transform, PreviousPose)]
pub struct ClothCollider {
    /// Shape in the collider's local frame; the entity's `Transform` places it.
    pub shape: ColliderShape,
    /// How the collider moves; `Static` for a collider that does not.
    pub motion: ColliderMotion,
    /// Pose at t = 0.
    pub start: Transform,
    /// Coulomb friction μ of cloth on this collider; `None` uses [`SimParams::friction`](crate::sim::SimParams).
    pub friction: Option<f32>,
    /// Restitution e of cloth on this collider; `None` uses [`SimParams::restitution`](crate::sim::SimParams).
    pub restitution: Option<f32>,
}

impl ClothCollider {
    /// A static collider of `shape`; its entity's `Transform` places it.
    pub fn new(shape: ColliderShape) -> Self {
        Self::fixed(shape, Transform::IDENTITY)
    }

    /// A collider of `shape` whose pose at t = 0 is `start`.
    pub fn fixed(shape: ColliderShape, start: Transform) -> Self {
        Self { shape, motion: ColliderMotion::Static, start, friction: None, restitution: None }
    }

    /// The same collider moving with `motion` from its pose at t = 0, `start` (a kinematic collider).
    pub fn moving(self, motion: ColliderMotion, start: Transform) -> Self {
        Self { motion, start, ..self }
    }
}

/// A rigid body another engine owns (Avian's, with the `avian` feature): within a cloth step it falls and takes
/// the cloth's impulses like drape's own bodies, but its contacts with other bodies and the ground are that
/// engine's, so drape's step does not rest it on the planes.
#[derive(Component, Clone, Copy, Debug, Default)]
pub struct HostedBody {
    /// Where the last cloth step left the body: the pose its contacts with the cloth were made against, before
    /// the other engine's step moved it on.
    pub cloth_pose: Transform,
    /// The share of its weight the other engine's contacts held up in that engine's last step: 0 when free, 1
    /// resting on them. The cloth step adds only the rest of gravity, as it cannot add the support that cancels it.
    pub support: f32,
    /// The velocity the last cloth step handed the other engine, m/s.
    pub handed: Vec3,
    /// Whether the cloth step being run (or the last one) moved the body: a hold's correction or a contact's
    /// impulse. The other engine's step then ends where the cloth left it, rather than where the body would have
    /// fallen in that engine alone.
    pub touched: bool,
}

/// A collider's pose at the start of the substep being run; its `Transform` is the pose at the end. Contacts
/// are found in the collider's frame from these two poses (see [`swept`](super::collide::swept)).
#[derive(Component, Clone, Copy, Debug, Default, PartialEq)]
pub struct PreviousPose(pub Transform);

/// Marks a cloth entity and names it. The solver's per-step state (the projection order, the step's contacts and
/// self-collision pairs) starts empty and comes with it as required components.
#[derive(Component, Clone, Debug, Default)]
#[require(
    ProjectionPlan,
    Contacts,
    ColliderPlanes,
    FeatureContacts,
    SelfCollision,
    StartingOverlaps,
    CappedMoves,
    Calm
)]
pub struct Cloth {
    /// Name of the cloth (from its description).
    pub name: String,
    /// Vertices split by tearing so far (§5): each split opens the cloth along one vertex.
    pub tears: usize,
}

/// A cloth's long-range attachments and what they were built from ([`super::tethers`]).
#[derive(Component, Clone, Debug, Default)]
pub struct Tethers {
    /// The cloth's own switch (a preset's `tethers`); `None` follows [`SimParams::tethers`](super::SimParams::tethers).
    pub enabled: Option<bool>,
    /// The tethers projected now (empty when off).
    pub set: TetherSet,
    /// Rest positions of the vertices the cloth was built with, for [`TetherLengths::Euclidean`].
    pub rest: Vec<Vec3>,
    /// What `set` was built from; `None` while off.
    pub built_for: Option<TetherSource>,
}

/// What a [`TetherSet`] was built from: a change in any of it rebuilds the tethers.
#[derive(Clone, Debug, PartialEq)]
pub struct TetherSource {
    /// The rule for the rest lengths.
    pub lengths: TetherLengths,
    /// Particles and stretch edges of the mesh (a tear changes both).
    pub shape: (usize, usize),
    /// Attachments and body attachments, counted with repeats.
    pub attached: usize,
    /// Their vertices, sorted, without repeats.
    pub anchors: Vec<u32>,
}

impl Tethers {
    /// No tethers yet, for a cloth whose rest positions are `rest`.
    pub fn at_rest(rest: Vec<Vec3>) -> Self {
        Self { rest, ..Self::default() }
    }

    /// Whether the tethers built match a cloth of `shape` (vertices, stretch edges) with `attached` vertices now
    /// (allocates nothing).
    pub fn is_current(
        &self,
        lengths: TetherLengths,
        shape: (usize, usize),
        mut attached: impl Iterator<Item = u32> + Clone,
    ) -> bool {
        self.built_for.as_ref().is_some_and(|b| {
            b.lengths == lengths
                && b.shape == shape
                && b.attached == attached.clone().count()
                && attached.all(|v| b.anchors.binary_search(&v).is_ok())
        })
    }
}

/// What a cloth entity is built from, computed from a triangle mesh in world space; [`Cloth`] brings the rest.
#[derive(Bundle, Clone, Debug)]
pub struct ClothBundle {
    /// The marker and name.
    pub cloth: Cloth,
    /// Particle state, lines (1)–(3).
    pub particles: Particles,
    /// The surface triangles.
    pub mesh: ClothMesh,
    /// Stretch constraints, one per edge (§4.1).
    pub stretch: StretchConstraints,
    /// Bending constraints, one per pair of adjacent triangles (§4.1).
    pub bend: BendConstraints,
    /// Vertices attached to static or kinematic targets (§3.6).
    pub attachments: Attachments,
    /// Vertices attached to rigid bodies (§4.2).
    pub body_attachments: BodyAttachments,
    /// The cloth's material.
    pub material: ClothMaterial,
    /// The stiffnesses the solver uses, easing toward the material's.
    pub stiffness: SolverStiffness,
    /// Long-range attachments, built when switched on.
    pub tethers: Tethers,
    /// The cloth's own solver choice and XPBD's multipliers.
    pub solver: ClothSolver,
}

/// One cloth's solver: its own choice, overriding [`SimParams::solver`](super::SimParams), and XPBD's λ.
#[derive(Component, Clone, Debug, Default, PartialEq)]
pub struct ClothSolver {
    /// The solver of this cloth alone (a preset's `solver`); `None` follows the parameters.
    pub chosen: Option<Solver>,
    /// XPBD's Lagrange multipliers of the substep being run.
    pub multipliers: Multipliers,
    /// The systems of its constraints when they are solved together (`SimParams::global_stretch`).
    pub global: GlobalSystems,
    /// What the paper's dihedral sweeps of the last substep did with folds past a right angle
    /// ([`Folds::for_cloth`]), kept for the panel to show.
    pub folds: Folds,
    /// How far from met this substep's stretch and bending constraints are left alone, metres, from its
    /// predictions ([`crate::sim::integrate::rounding_tolerance`]).
    pub rounding: f32,
}

impl ClothSolver {
    /// The solver this cloth uses under `global`, the parameters' choice.
    pub fn active(&self, global: Solver) -> Solver {
        self.chosen.unwrap_or(global)
    }
}

impl ClothBundle {
    /// Builds a cloth from world-space `positions` and `triangles` (a manifold mesh, §4.1): masses from the
    /// density, a stretch constraint per edge, a bending constraint per adjacent triangle pair, and the given
    /// attachments (their vertices get w = 0).
    pub fn from_mesh(
        name: impl Into<String>,
        positions: Vec<Vec3>,
        triangles: Vec<[u32; 3]>,
        uvs: Vec<[f32; 2]>,
        material: ClothMaterial,
        attachments: Vec<Attachment>,
    ) -> Result<Self, MeshError> {
        topology::validate(&positions, &triangles)?;
        let material = material.sanitized();
        let mass = topology::lumped_masses(&positions, &triangles, material.density)?;
        let (edges, quads) = topology::edges_and_bend_quads(&triangles)?;
        let at = |i: u32| positions[i as usize];
        let rest_length = edges.iter().map(|&[a, b]| at(a).distance(at(b))).collect();
        let rest_angle = quads.iter().map(|q| dihedral_angle(q.map(at)).unwrap_or(std::f32::consts::PI)).collect();
        let rest_distance = quads.iter().map(|q| at(q[2]).distance(at(q[3]))).collect();
        let n = positions.len();
        let tethers = Tethers::at_rest(positions.clone());
        let mut particles = Particles::new(positions, mass);
        let attachments: Vec<Attachment> =
            attachments.into_iter().filter(|a| (a.vertex as usize) < particles.len()).collect();
        for a in &attachments {
            particles.w[a.vertex as usize] = 0.0;
        }
        Ok(Self {
            cloth: Cloth { name: name.into(), tears: 0 },
            particles,
            mesh: ClothMesh::new(triangles, uvs, n),
            stretch: StretchConstraints::new(edges, rest_length, n),
            bend: BendConstraints::new(quads, rest_angle, rest_distance, n),
            attachments: Attachments(attachments),
            body_attachments: BodyAttachments::default(),
            stiffness: SolverStiffness::of(&material),
            solver: ClothSolver::default(),
            material,
            tethers,
        })
    }

    /// Total count of internal constraints (stretch + bend).
    pub fn constraint_count(&self) -> usize {
        self.stretch.len() + self.bend.len()
    }
}

/// Registers kernel types that are stored on entities as components, so their own modules stay free of the ECS.
macro_rules! components {
    ($($kernel_type:ty),*) => {$(
        impl Component for $kernel_type {
            const STORAGE_TYPE: bevy::ecs::component::StorageType = bevy::ecs::component::StorageType::Table;
            type Mutability = bevy::ecs::component::Mutable;
        }
    )*};
}

components!(StretchConstraints, BendConstraints, ProjectionPlan, ClothRigidBody);

/// A cloth that is not stepped ([`SleepPlugin`](super::SleepPlugin)); since the tick at which it fell asleep, with
/// the box around its particles then (they do not move while it sleeps).
#[derive(Component, Clone, Copy, Debug)]
pub struct Asleep {
    since: Tick,
    bounds: Option<(Vec3, Vec3)>,
}

impl Asleep {
    /// Asleep as of `tick`, its particles within `bounds`: changes to the cloth up to `tick` do not wake it.
    pub(crate) fn since(tick: Tick, bounds: Option<(Vec3, Vec3)>) -> Self {
        Self { since: tick, bounds }
    }

    /// The tick it fell asleep at.
    pub(crate) fn tick(&self) -> Tick {
        self.since
    }

    /// The box around its particles.
    pub(crate) fn bounds(&self) -> Option<(Vec3, Vec3)> {
        self.bounds
    }

    /// Asleep as of `tick` instead (a snapshot's restore, which writes the cloth's components again).
    pub(crate) fn restamp(&mut self, tick: Tick) {
        self.since = tick;
    }
}

/// The filter of every cloth query in the step: asleep cloths are left out.
pub type Awake = Without<Asleep>;

/// How long, s, every vertex of an awake cloth has been at rest with nothing near it moving.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq)]
pub struct Calm(pub f32);
