//! Line (8) once per step for the still triangle meshes and other general solids, whose queries are dear, as
//! Macklin et al. 2019 ("Small Steps", §4) and Jolt's `DetermineCollisionPlanes` do it: in a step's first substep
//! each free vertex whose path over the step (its first substep's move times the substeps) is shorter than a slack
//! gets the ball of that path grown by the slack and, for each such collider within the ball, the plane through
//! the collider's grown surface point nearest the vertex (§3.4's q_s and n). Every substep then turns the planes
//! its vertices' rays reach into contacts C(p) = (p − q)·n ≥ 0 instead of querying the solid again. A vertex that
//! leaves its ball (stopped, thrown, dragged) and a faster one are searched exactly, as every vertex is against an
//! analytic shape (answered in closed form for about a plane's cost) and a moving collider (its swept test in its
//! own frame, `swept.rs`). A plane is exact for a flat face; on a curved one it holds the vertex about d²/2R off a
//! surface of radius R after sliding d within the step, and beside an edge at most about twice the slack off it.

use bevy::math::{Vec3, Vec4};

use super::shapes::{RESTING_SKIN, Shape};
use super::swept::SurfaceHit;

/// A still collider's plane for one vertex over a step: the point of the collider's grown surface nearest the
/// vertex's start and the outward normal there.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepPlane {
    /// Index of the cloth vertex.
    pub vertex: u32,
    /// The surface point q, metres.
    pub point: Vec3,
    /// The outward unit normal n.
    pub normal: Vec3,
}

impl StepPlane {
    /// The plane of `grown` (a still collider's shape grown by the cloth's margin) for a vertex starting the step
    /// at `start` whose path stays within `radius` of it, or `None` if the shape lies beyond that ball.
    pub fn of(vertex: u32, grown: &Shape, start: Vec3, radius: f32) -> Option<Self> {
        if grown.is_clear_of(start, radius) {
            return None;
        }
        let (point, normal) = grown.closest_surface(start);
        ((start - point).dot(normal) <= radius).then_some(Self { vertex, point, normal })
    }

    /// Line (8)'s constraint of the plane of a still collider for a vertex moving x → p in a substep, if its ray
    /// reaches the plane.
    #[inline]
    pub fn contact(&self, x: Vec3, p: Vec3) -> Option<SurfaceHit> {
        let hit = SurfaceHit { point: self.point, normal: self.normal, surface_shift: Vec3::ZERO };
        self.is_reached(x, p).then_some(hit)
    }

    /// Whether a ray x → p of a substep needs the plane: it ends behind it, or starts behind it or on it (a vertex
    /// resting on a surface keeps its plane, `Shape::contact`).
    #[inline]
    pub fn is_reached(&self, x: Vec3, p: Vec3) -> bool {
        (p - self.point).dot(self.normal) < 0.0 || (x - self.point).dot(self.normal) <= RESTING_SKIN
    }
}

/// Per vertex, the ball its path over the rest of the step stays in: the start `x` and the radius, its path (its
/// substep's move `x → p` times the substeps left) plus `slack`. A vertex whose path is longer than the slack gets
/// a negative radius and no planes: it is searched exactly, so no plane stands farther than about twice the slack
/// from the surface it stands for (a plane through a box's edge reaches out into the air beside it). So does a
/// vertex that is not free (`w` = 0), searched exactly if it is freed within the step.
#[inline]
pub fn reach_of(x: Vec3, p: Vec3, w: f32, substeps_left: f32, slack: f32) -> Vec4 {
    let path = x.distance(p) * substeps_left;
    let radius = if w == 0.0 || path > slack { -1.0 } else { path + slack };
    x.extend(radius)
}

/// Whether a vertex's ball ([`reach_of`]) takes planes: a fast, pinned or non-finite vertex's does not.
#[inline]
pub fn takes_planes(reach: Vec4) -> bool {
    reach.w >= 0.0
}

/// Whether a vertex starting the substep at `x` and predicted at `p` left its ball `reach` ([`reach_of`]): its
/// planes no longer hold it, and it is searched exactly. A NaN counts as leaving.
#[inline]
pub fn strays(reach: Vec4, x: Vec3, p: Vec3) -> bool {
    let (centre, radius) = (reach.truncate(), reach.w);
    let within = |q: Vec3| centre.distance_squared(q) <= radius * radius;
    !(radius >= 0.0 && within(x) && within(p))
}

/// The planes of a cloth's step against its still general colliders, by collider then vertex.
#[derive(Clone, Debug, Default)]
pub struct StepPlanes {
    /// Per vertex, its ball ([`reach_of`]).
    pub(crate) reach: Vec<Vec4>,
    /// The planes, by collider, then vertex.
    pub(crate) planes: Vec<StepPlane>,
    /// Where each collider's run of planes ends in `planes`.
    pub(crate) collider_end: Vec<u32>,
    /// Per collider, the still shape its planes were found on (before the margin grew it); `None` for one whose
    /// vertices are searched exactly every substep.
    pub(crate) planed: Vec<Option<Shape>>,
    /// The margin the shapes were grown by, metres.
    pub(crate) margin: f32,
}

impl StepPlanes {
    /// The planes of collider `k` for the vertices in `vertices`, if `k` was planed standing as `world` stands.
    pub(crate) fn run(&self, k: usize, world: &Shape, vertices: std::ops::Range<usize>) -> Option<&[StepPlane]> {
        if self.planed.get(k)?.as_ref()? != world {
            return None;
        }
        let start = if k == 0 { 0 } else { *self.collider_end.get(k - 1)? as usize };
        let run = self.planes.get(start..*self.collider_end.get(k)? as usize)?;
        let first = run.partition_point(|plane| (plane.vertex as usize) < vertices.start);
        let last = run.partition_point(|plane| (plane.vertex as usize) < vertices.end);
        Some(&run[first..last])
    }

    /// The balls of the vertices in `vertices`, if the planes were found for a cloth of `n` vertices.
    pub(crate) fn reach(&self, n: usize, vertices: std::ops::Range<usize>) -> Option<&[Vec4]> {
        (self.reach.len() == n).then(|| self.reach.get(vertices)).flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_vertex_gets_the_plane_of_a_surface_within_its_reach_only() {
        let ball = Shape::Sphere { center: Vec3::ZERO, radius: 1.0 };
        let start = Vec3::new(0.0, 1.05, 0.0);
        assert_eq!(StepPlane::of(3, &ball, start, 0.04), None, "5 cm off, 4 cm of reach");
        let plane = StepPlane::of(3, &ball, start, 0.06).unwrap();
        assert_eq!((plane.vertex, plane.normal), (3, Vec3::Y));
        assert!((plane.point - Vec3::Y).length() < 1e-6);
        // inside, the plane is the way out
        let inside = StepPlane::of(0, &ball, Vec3::new(0.5, 0.0, 0.0), 0.01).unwrap();
        assert_eq!(inside.normal, Vec3::X);
    }

    #[test]
    fn a_ray_reaches_a_plane_it_ends_behind_or_starts_on() {
        let plane = StepPlane { vertex: 0, point: Vec3::ZERO, normal: Vec3::Y };
        let at = |y: f32| Vec3::new(0.3, y, 0.0);
        assert!(plane.is_reached(at(0.1), at(-0.01)), "crosses it");
        assert!(plane.is_reached(at(0.5 * RESTING_SKIN), at(0.2)), "rests on it and leaves");
        assert!(plane.is_reached(at(-0.2), at(-0.1)), "behind it");
        assert!(!plane.is_reached(at(0.1), at(0.001)), "stays in front of it");
    }

    #[test]
    fn a_vertex_strays_when_it_leaves_its_ball_or_is_not_free() {
        let (x, p) = (Vec3::ZERO, Vec3::new(0.0, -0.01, 0.0));
        // 4 substeps left: the path reaches 4 cm down, and 5 cm of slack
        let reach = reach_of(x, p, 1.0, 4.0, 0.05);
        assert!((reach.w - 0.09).abs() < 1e-7);
        assert!(!strays(reach, Vec3::new(0.0, -0.03, 0.0), Vec3::new(0.0, -0.09, 0.0)));
        assert!(strays(reach, Vec3::new(0.0, -0.03, 0.0), Vec3::new(0.0, -0.095, 0.0)), "predicted beyond");
        assert!(strays(reach_of(x, p, 1.0, 4.0, 0.035), x, x), "a path longer than the slack: searched exactly");
        assert!(strays(reach_of(x, p, 0.0, 4.0, 0.005), x, x), "pinned at the plan: searched if freed");
        assert!(strays(reach, Vec3::NAN, x));
    }
}
