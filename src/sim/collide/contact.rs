//! The collision constraints of a step (§3.4): a vertex outside a collider's surface, or held on a point of a
//! rigid body (§4.2).

use bevy::math::Vec3;

use super::swept::SurfaceHit;

/// A collision constraint generated in line (8): C(p) = (p − q)·n ≥ 0 with stiffness 1 (§3.4); or a vertex
/// attached to a rigid body (§4.2), C(p) = p − q = 0.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Contact {
    /// Index of the cloth vertex.
    pub vertex: u32,
    /// Index of the collider in this substep's `CollisionWorld`.
    pub collider: u32,
    /// Surface contact (inequality) or body attachment (equality).
    pub kind: ContactKind,
    /// Entry point q_c (continuous) or closest surface point q_s (static fallback), or the attachment point,
    /// at the end of the substep.
    pub point: Vec3,
    /// Outward surface normal n at `point`. A hold has none: it keeps here where its vertex was when the holds
    /// last projected it ([`Contact::settled`]), so a contact stays as small as it was.
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
    /// The part of `moved` whose reaction a body took within the projection (`project_contacts`), metres.
    pub shared: Vec3,
    /// The tangential slip static friction took back in this step, relative to the surface, metres: with the
    /// slip left it is what the vertex would have slid, which Coulomb's cone bounds (`project_contacts`).
    pub stopped: Vec3,
    /// The vertex is leaving a starting overlap (`depenetrate`): its body takes no part of the push.
    pub leaving: bool,
    /// Velocity change of line (16), m/s.
    pub response: Vec3,
    /// Coulomb friction μ of the collider.
    pub friction: f32,
    /// Restitution e of the collider.
    pub restitution: f32,
    /// For a hold, the share of its body's mass the vertex carries within the projection (implicit coupling of
    /// holds, see [`Contact::held`]), kg; 0 for a surface contact.
    pub lent_mass: f32,
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
            shared: Vec3::ZERO,
            stopped: Vec3::ZERO,
            leaving: false,
            response: Vec3::ZERO,
            friction: surface.0,
            restitution: surface.1,
            lent_mass: 0.0,
        }
    }

    /// `vertex` held on the point of body `collider` that is at `point` at the end of the substep and moved
    /// by `surface_shift` during it.
    pub fn attached(vertex: u32, collider: u32, point: Vec3, surface_shift: Vec3) -> Self {
        let hit = SurfaceHit { point, normal: Vec3::ZERO, surface_shift };
        Self { kind: ContactKind::Attached, ..Self::surface(vertex, collider, hit, 0.0, (0.0, 0.0)) }
    }

    /// A hold whose body lends its vertex (predicted at `predicted`) the mass `lent_mass` within the projection,
    /// so the cloth moves the vertex as little as it would move the body; the vertex and the body share each
    /// correction by their inverse masses (`hold::project_holds`).
    pub fn held(
        vertex: u32,
        collider: u32,
        (point, surface_shift): (Vec3, Vec3),
        predicted: Vec3,
        lent_mass: f32,
    ) -> Self {
        Self { lent_mass, normal: predicted, ..Self::attached(vertex, collider, point, surface_shift) }
    }

    /// For a hold, where its vertex was when the holds last projected it (at first, its prediction): the body's
    /// lent part takes what the cloth moved it since (`hold::project_holds`).
    pub fn settled(&self) -> Vec3 {
        self.normal
    }

    /// Records where a hold's vertex is after the holds projected it.
    pub(crate) fn settle_at(&mut self, at: Vec3) {
        self.normal = at;
    }

    /// The momentum the contact gave its vertex of mass `mass` (with what its body lends it) in a substep of
    /// `dt` that its collider has yet to take: m (Δp / Δt + Δv), less the displacement a body took its share of
    /// within the projection. The collider takes the opposite (§4.2).
    pub fn momentum_given(&self, mass: f32, dt: f32) -> Vec3 {
        (mass + self.lent_mass) * ((self.moved - self.shared) / dt + self.response)
    }
}
