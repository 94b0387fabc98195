//! A cloth as one entity with struct-of-arrays components (§4.1): particles, triangles, stretch and bending
//! constraints, attachments (§3.6) and the per-step contact list (§3.4).
//!
//! One entity per cloth, never one per particle: a projection touches 2–4 particles by index, linear passes
//! vectorise, and tearing edits arrays instead of spawning entities.

use bevy::prelude::*;
use serde::{Deserialize, Serialize};

use super::collide::swept::SurfaceHit;
use super::constraints::attach::Attachment;
use super::constraints::bend::dihedral_angle;
use super::constraints::coloring;
use super::constraints::plan::{MIN_CHUNK, ProjectionPlan};
use super::parallel::ColorChunks;
use super::selfcollide::{SelfContact, SelfContactSearch, Untangler};
use super::topology::{self, MeshError};

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

    pub fn len(&self) -> usize {
        self.x.len()
    }

    pub fn is_empty(&self) -> bool {
        self.x.is_empty()
    }
}

/// The triangles of the cloth surface (indices into [`Particles`]), shared by rendering, aerodynamics and
/// tearing. Stored grouped by colour ([`coloring`]: no two triangles of one colour share a vertex), so the air
/// drag runs on all threads. Tearing only relabels a triangle's corners to a split vertex's copy, which never
/// makes two triangles share a vertex they did not share before: the colouring stays valid.
#[derive(Component, Clone, Debug, Default)]
pub struct ClothMesh {
    pub triangles: Vec<[u32; 3]>,
    /// Texture coordinates per particle (for rendering), possibly empty.
    pub uvs: Vec<[f32; 2]>,
    /// The triangles' colours cut into chunks for the threads.
    pub triangle_chunks: ColorChunks,
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

/// One stretching constraint per edge, C = |p1 − p2| − l0, type equality (§4.1), stored grouped by colour
/// ([`coloring`]): the constraints of one colour touch disjoint particles, which is what lets the solver
/// project a colour in parallel. The fields are private so the colouring can never go stale: the arrays only
/// change through [`StretchConstraints::new`].
#[derive(Component, Clone, Debug, Default)]
pub struct StretchConstraints {
    edges: Vec<[u32; 2]>,
    /// Rest lengths l0 in metres.
    rest_length: Vec<f32>,
    /// Colour c is `color_offsets[c]..color_offsets[c + 1]`.
    color_offsets: Vec<u32>,
    /// Every index is below this particle count.
    vertex_count: usize,
}

impl StretchConstraints {
    /// Colours and stores the constraints over `vertex_count` particles; constraints that name a particle at
    /// or beyond `vertex_count` (or a particle twice) are dropped.
    pub fn new(edges: Vec<[u32; 2]>, rest_length: Vec<f32>, vertex_count: usize) -> Self {
        let (mut edges, mut rest_length) = keep_valid(edges, rest_length, vertex_count);
        let coloring = coloring::color(&edges, vertex_count);
        coloring::permute(&mut edges, &coloring.order);
        coloring::permute(&mut rest_length, &coloring.order);
        Self { edges, rest_length, color_offsets: coloring.offsets, vertex_count }
    }

    pub fn edges(&self) -> &[[u32; 2]] {
        &self.edges
    }

    pub fn rest_length(&self) -> &[f32] {
        &self.rest_length
    }

    /// The particle count every index is below.
    pub fn vertex_count(&self) -> usize {
        self.vertex_count
    }

    pub fn color_offsets(&self) -> &[u32] {
        &self.color_offsets
    }

    pub fn len(&self) -> usize {
        self.edges.len()
    }

    pub fn is_empty(&self) -> bool {
        self.edges.is_empty()
    }

    /// The arrays, for a topology change that ends in [`StretchConstraints::new`].
    pub fn into_parts(self) -> (Vec<[u32; 2]>, Vec<f32>) {
        (self.edges, self.rest_length)
    }
}

/// One bending constraint per pair of adjacent triangles `[p1, p2, p3, p4]` (shared edge p1–p2), holding the
/// rest values of both bending models (§4.1, Appendix A; and the opposite-vertex distance). Grouped by colour
/// like [`StretchConstraints`].
#[derive(Component, Clone, Debug, Default)]
pub struct BendConstraints {
    quads: Vec<[u32; 4]>,
    /// Rest dihedral angle φ0 in radians.
    rest_angle: Vec<f32>,
    /// Rest distance |p3 − p4| in metres.
    rest_distance: Vec<f32>,
    color_offsets: Vec<u32>,
    vertex_count: usize,
}

impl BendConstraints {
    /// Colours and stores the constraints, dropping any that name a particle at or beyond `vertex_count`.
    pub fn new(quads: Vec<[u32; 4]>, rest_angle: Vec<f32>, rest_distance: Vec<f32>, vertex_count: usize) -> Self {
        let rests: Vec<(f32, f32)> = rest_angle.into_iter().zip(rest_distance).collect();
        let (mut quads, rests) = keep_valid(quads, rests, vertex_count);
        let coloring = coloring::color(&quads, vertex_count);
        coloring::permute(&mut quads, &coloring.order);
        let rest_angle = coloring.order.iter().map(|&k| rests[k as usize].0).collect();
        let rest_distance = coloring.order.iter().map(|&k| rests[k as usize].1).collect();
        Self { quads, rest_angle, rest_distance, color_offsets: coloring.offsets, vertex_count }
    }

    pub fn quads(&self) -> &[[u32; 4]] {
        &self.quads
    }

    pub fn rest_angle(&self) -> &[f32] {
        &self.rest_angle
    }

    pub fn rest_distance(&self) -> &[f32] {
        &self.rest_distance
    }

    /// The particle count every index is below.
    pub fn vertex_count(&self) -> usize {
        self.vertex_count
    }

    pub fn color_offsets(&self) -> &[u32] {
        &self.color_offsets
    }

    pub fn len(&self) -> usize {
        self.quads.len()
    }

    pub fn is_empty(&self) -> bool {
        self.quads.is_empty()
    }

    /// The arrays, for a topology change that ends in [`BendConstraints::new`].
    pub fn into_parts(self) -> (Vec<[u32; 4]>, Vec<f32>, Vec<f32>) {
        (self.quads, self.rest_angle, self.rest_distance)
    }
}

/// The constraints (and their rest values) whose particles are distinct and below `vertex_count`.
fn keep_valid<const N: usize, R: Copy>(
    constraints: Vec<[u32; N]>,
    rest: Vec<R>,
    vertex_count: usize,
) -> (Vec<[u32; N]>, Vec<R>) {
    let valid = |c: &[u32; N]| c.iter().enumerate().all(|(k, &i)| (i as usize) < vertex_count && !c[..k].contains(&i));
    if constraints.len() == rest.len() && constraints.iter().all(valid) {
        return (constraints, rest);
    }
    constraints.into_iter().zip(rest).filter(|(c, _)| valid(c)).unzip()
}

/// Vertices attached to static or kinematic targets (§3.6); they carry w = 0.
#[derive(Component, Clone, Debug, Default)]
pub struct Attachments(pub Vec<Attachment>);

/// A particle held by the user's pointer: an attachment (§3.6) whose target follows the cursor. While held the
/// particle has w = 0; on release its inverse mass is restored.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct Grabbed {
    pub vertex: u32,
    /// Where the pointer holds the particle, world space.
    pub target: Vec3,
}

/// A collision constraint generated in line (8): C(p) = (p − q)·n ≥ 0 with stiffness 1 (§3.4); or a vertex
/// attached to a rigid body (§4.2), C(p) = p − q = 0.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Contact {
    pub vertex: u32,
    /// Index of the collider in this substep's [`CollisionWorld`](crate::sim::collide::CollisionWorld).
    pub collider: u32,
    pub kind: ContactKind,
    /// Entry point q_c (continuous) or closest surface point q_s (static fallback), or the attachment point,
    /// at the end of the substep.
    pub point: Vec3,
    /// Outward surface normal n at `point`.
    pub normal: Vec3,
    /// How far the collider's surface at `point` moved during the substep (zero for a static collider):
    /// friction and restitution act on the vertex's motion relative to it.
    pub surface_shift: Vec3,
    /// Normal velocity (v − v_surface)·n before projection, for restitution in line (16).
    pub approach_speed: f32,
    /// Total distance the projection pushed the vertex out along n in this step, metres; divided by Δt it is
    /// the normal velocity change the contact caused, which bounds friction in line (16).
    pub pushed: f32,
    /// Total displacement Δp the projection gave the vertex through this contact, metres (§4.2).
    pub moved: Vec3,
    /// Velocity change of line (16), m/s.
    pub response: Vec3,
    /// Coulomb friction μ of the collider.
    pub friction: f32,
    /// Restitution e of the collider.
    pub restitution: f32,
}

/// What a [`Contact`] holds the vertex to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ContactKind {
    /// Outside the collider's surface (inequality).
    #[default]
    Surface,
    /// On a point of a rigid body (equality, cloth hanging from a body).
    Attached,
}

impl Contact {
    /// A surface contact of `vertex` with collider number `collider`; the rest is filled by the projection.
    pub fn surface(vertex: u32, collider: u32, hit: SurfaceHit, approach_speed: f32, surface: (f32, f32)) -> Self {
        Self {
            vertex,
            collider,
            kind: ContactKind::Surface,
            point: hit.point,
            normal: hit.normal,
            surface_shift: hit.surface_shift,
            approach_speed,
            pushed: 0.0,
            moved: Vec3::ZERO,
            response: Vec3::ZERO,
            friction: surface.0,
            restitution: surface.1,
        }
    }

    /// `vertex` held on the point of body `collider` that is at `point` at the end of the substep and moved
    /// by `surface_shift` during it.
    pub fn attached(vertex: u32, collider: u32, point: Vec3, surface_shift: Vec3) -> Self {
        let hit = SurfaceHit { point, normal: Vec3::ZERO, surface_shift };
        Self { kind: ContactKind::Attached, ..Self::surface(vertex, collider, hit, 0.0, (0.0, 0.0)) }
    }

    /// The momentum the contact gave its vertex of mass `mass` in a substep of `dt`: m (Δp / Δt + Δv). The
    /// collider takes the opposite (§4.2).
    pub fn momentum_given(&self, mass: f32, dt: f32) -> Vec3 {
        mass * (self.moved / dt + self.response)
    }
}

/// Cloth vertices attached to points of rigid bodies (§4.2): the vertex keeps its mass and is held on the
/// body point by an equality contact every iteration; the body feels the cloth's pull through
/// [`Contact::momentum_given`].
#[derive(Component, Clone, Debug, Default, PartialEq)]
pub struct BodyAttachments(pub Vec<BodyAttachment>);

/// One cloth vertex on one body point.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BodyAttachment {
    pub vertex: u32,
    pub body: Entity,
    /// The point in the body's frame.
    pub local: Vec3,
}

/// The collision constraints of the current step, cleared and refilled each step (capacity is kept).
#[derive(Component, Clone, Debug, Default)]
pub struct Contacts(pub Vec<Contact>);

/// Self-collision state of a cloth (§4.3): the spatial hash of its triangles and the vertex–triangle
/// constraints of the current step, all refilled in place (no allocation once warm). Detection runs once per
/// fixed step, in its first substep, over the rays x → x + v·Δt_step with a margin of
/// [`SelfCollision::DETECTION_MARGIN`]·h; every substep projects the pairs found.
#[derive(Component, Clone, Debug, Default)]
pub struct SelfCollision {
    pub search: SelfContactSearch,
    pub contacts: Vec<SelfContact>,
    /// Where the second and third group of `contacts` start ([`split_in_halves`](super::selfcollide::split_in_halves)).
    pub halves: [usize; 2],
    /// Scratch of the split: each contact with its group.
    pub split_scratch: Vec<(u8, SelfContact)>,
    /// Where each vertex would be at the end of the step, x + v·Δt_step (the rays the detection sweeps).
    pub step_end: Vec<Vec3>,
    /// Releases the contacts that hold tangled cloth in its tangle.
    pub untangler: Untangler,
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
    /// ∇C per vertex, scratch reused every projection.
    pub gradient: Vec<Vec3>,
}

/// Material of one cloth.
#[derive(Component, Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ClothMaterial {
    /// k_stretch ∈ [0, 1] (§4.1), applied through the iteration-independent k' of §3.3. Default 1.
    #[serde(deserialize_with = "crate::validate::unit")]
    pub stretch_stiffness: f32,
    /// k_bend ∈ [0, 1] (§4.1). Default 0.1.
    #[serde(deserialize_with = "crate::validate::unit")]
    pub bend_stiffness: f32,
    /// Areal density ρ in kg/m² (§4.1). Range 0.01–10, default 0.2.
    #[serde(deserialize_with = "crate::validate::length")]
    pub density: f32,
    /// Thickness h in metres: the collision margin against colliders (and later self-collision, §4.3).
    /// Range 0.001–0.1, default 0.01.
    #[serde(deserialize_with = "crate::validate::length")]
    pub thickness: f32,
}

impl Default for ClothMaterial {
    fn default() -> Self {
        Self { stretch_stiffness: 1.0, bend_stiffness: 0.1, density: 0.2, thickness: 0.01 }
    }
}

impl ClothMaterial {
    /// A copy with every field clamped into its documented range.
    pub fn sanitized(&self) -> Self {
        let d = Self::default();
        let f = |x: f32, fallback: f32, lo: f32, hi: f32| if x.is_finite() { x.clamp(lo, hi) } else { fallback };
        Self {
            stretch_stiffness: f(self.stretch_stiffness, d.stretch_stiffness, 0.0, 1.0),
            bend_stiffness: f(self.bend_stiffness, d.bend_stiffness, 0.0, 1.0),
            density: f(self.density, d.density, 0.01, 10.0),
            thickness: f(self.thickness, d.thickness, 0.001, 0.1),
        }
    }
}

/// The stiffnesses the solver uses: they follow [`ClothMaterial`]'s with time constant
/// [`SolverStiffness::EASING`], so a stiffness changed live reshapes a resting cloth quasi-statically instead
/// of making it jump.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct SolverStiffness {
    pub stretch: f32,
    pub bend: f32,
}

impl SolverStiffness {
    /// Time constant of the easing, seconds.
    pub const EASING: f32 = 0.6;

    pub fn of(material: &ClothMaterial) -> Self {
        Self { stretch: material.stretch_stiffness, bend: material.bend_stiffness }
    }

    /// Moves toward `material`'s stiffnesses over `dt` seconds.
    pub fn ease_toward(&mut self, material: &ClothMaterial, dt: f32) {
        let a = 1.0 - (-dt / Self::EASING).exp();
        let step = |current: f32, target: f32| {
            let next = current + (target - current) * a;
            if (target - next).abs() < 1e-4 { target } else { next }
        };
        self.stretch = step(self.stretch, material.stretch_stiffness);
        self.bend = step(self.bend, material.bend_stiffness);
    }
}

/// Marks a cloth entity and names it.
#[derive(Component, Clone, Debug, Default)]
pub struct Cloth {
    pub name: String,
    /// Vertices split by tearing so far (§5): each split opens the cloth along one vertex.
    pub tears: usize,
}

/// Everything a cloth entity is made of, built from a triangle mesh in world space.
#[derive(Bundle, Clone, Debug)]
pub struct ClothBundle {
    pub cloth: Cloth,
    pub particles: Particles,
    pub mesh: ClothMesh,
    pub stretch: StretchConstraints,
    pub bend: BendConstraints,
    pub plan: ProjectionPlan,
    pub attachments: Attachments,
    pub body_attachments: BodyAttachments,
    pub contacts: Contacts,
    pub self_collision: SelfCollision,
    pub material: ClothMaterial,
    pub stiffness: SolverStiffness,
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
            plan: ProjectionPlan::default(),
            attachments: Attachments(attachments),
            body_attachments: BodyAttachments::default(),
            contacts: Contacts::default(),
            self_collision: SelfCollision::default(),
            stiffness: SolverStiffness::of(&material),
            material,
        })
    }

    /// Total count of internal constraints (stretch + bend).
    pub fn constraint_count(&self) -> usize {
        self.stretch.len() + self.bend.len()
    }
}
