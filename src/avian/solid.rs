//! Avian's collider shapes as the cloth sees them: balls, cuboids, capsules and half-spaces become drape's
//! analytic shapes (their closed-form queries stay the fast path of §3.4); every other parry shape — convex
//! hulls, triangle meshes, compounds — answers through parry's own queries ([`ParrySolid`]).

use std::fmt;
use std::sync::Arc;

use avian3d::parry::math::Pose;
use avian3d::parry::query::{Ray, ShapeCastOptions, ShapeCastStatus, cast_shapes};
use avian3d::parry::shape::{Ball, SharedShape};
use bevy::math::Vec3;

use crate::sim::collide::clearance_grid::ClearanceGrid;
use crate::sim::collide::edge_grid::EdgeGrid;
use crate::sim::collide::features::FeatureEdge;
use crate::sim::collide::general::{GeneralShape, SolidQueries, mesh_feature_edges, scan_edges_near};
use crate::sim::collide::shapes::Shape;

/// The cloth's shape of an Avian collider, in the collider's own frame (scale applied).
pub fn cloth_shape(shape: &SharedShape) -> Shape {
    if let Some(ball) = shape.as_ball() {
        Shape::Sphere { center: Vec3::ZERO, radius: ball.radius }
    } else if let Some(cuboid) = shape.as_cuboid() {
        Shape::Box { center: Vec3::ZERO, rotation: bevy::math::Quat::IDENTITY, half_extents: cuboid.half_extents }
    } else if let Some(capsule) = shape.as_capsule() {
        Shape::Capsule { a: capsule.segment.a, b: capsule.segment.b, radius: capsule.radius }
    } else if let Some(half_space) = shape.as_halfspace() {
        Shape::Plane { point: Vec3::ZERO, normal: half_space.normal }
    } else {
        Shape::General(GeneralShape::new(Arc::new(ParrySolid::new(shape.clone()))))
    }
}

/// Above this many edges a solid bins them into an [`EdgeGrid`]; below, a scan is as quick.
const MANY_EDGES: usize = 64;

/// A parry shape answering the cloth's queries. A triangle mesh has an inside only when it was built with
/// pseudo-normals (`TrimeshFlags::ORIENTED`); otherwise it is a shell.
#[derive(Clone)]
pub struct ParrySolid {
    /// The shape.
    pub shape: SharedShape,
    /// Its straight edges with their outward directions, found once.
    edges: Vec<FeatureEdge>,
    /// The grid that finds the edges near a box, for a solid with many.
    edge_grid: Option<EdgeGrid>,
    /// For a triangle mesh, the grid that tells quickly how far a point lies outside it.
    clearances: Option<ClearanceGrid>,
}

impl ParrySolid {
    /// `shape` with its edges (a triangle mesh's or a convex hull's, none for any other shape) and, for a triangle
    /// mesh, its [`ClearanceGrid`].
    pub fn new(shape: SharedShape) -> Self {
        let clearances = shape.as_trimesh().and_then(|mesh| {
            ClearanceGrid::new(mesh.vertices(), mesh.indices(), mesh.pseudo_normals_if_oriented().is_some())
        });
        let edges = if let Some(mesh) = shape.as_trimesh() {
            mesh_feature_edges(mesh.vertices(), mesh.indices())
        } else if let Some(hull) = shape.as_convex_polyhedron() {
            let at = |i: u32| hull.points().get(i as usize).copied();
            let edges = hull.edges().iter();
            let edges =
                edges.filter_map(|e| Some(FeatureEdge { ends: [at(e.vertices[0])?, at(e.vertices[1])?], radius: 0.0 }));
            edges.collect()
        } else {
            Vec::new()
        };
        let edge_grid = if edges.len() > MANY_EDGES { EdgeGrid::new(&edges) } else { None };
        Self { shape, edges, edge_grid, clearances }
    }
}

impl fmt::Debug for ParrySolid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ParrySolid({:?})", self.shape.shape_type())
    }
}

impl SolidQueries for ParrySolid {
    fn closest(&self, q: Vec3) -> (Vec3, bool, Vec3) {
        // near a triangle mesh's surface, the few triangles its grid keeps there answer without walking the tree
        if let Some(near) = self.clearances.as_ref().and_then(|grid| grid.closest(q)) {
            return near;
        }
        // the projection with a feature is the one that reads a triangle mesh's pseudo-normals for its inside
        let (projection, feature) = self.shape.project_local_point_and_get_feature(q);
        let away = q - projection.point;
        let normal = if away.length_squared() > 1e-12 {
            if projection.is_inside { -away } else { away }.normalize()
        } else {
            self.shape.feature_normal_at_point(feature, projection.point).unwrap_or(Vec3::Y)
        };
        (projection.point, projection.is_inside, normal)
    }

    fn edges(&self) -> &[FeatureEdge] {
        &self.edges
    }

    fn edges_near(&self, min: Vec3, max: Vec3, f: &mut dyn FnMut(u32)) {
        match &self.edge_grid {
            Some(grid) => grid.edges_near(min, max, f),
            None => scan_edges_near(&self.edges, min, max, f),
        }
    }

    fn sweep(&self, a: Vec3, b: Vec3, radius: f32) -> Option<(f32, Vec3)> {
        if radius <= 0.0 {
            if self.shape.contains_local_point(a) {
                return None;
            }
            let hit = self.shape.cast_local_ray_and_get_normal(&Ray::new(a, b - a), 1.0, true)?;
            return Some((hit.time_of_impact, hit.normal));
        }
        let options = ShapeCastOptions {
            max_time_of_impact: 1.0,
            target_distance: 0.0,
            stop_at_penetration: true,
            compute_impact_geometry_on_penetration: false,
        };
        let ball = Ball::new(radius);
        let hit =
            cast_shapes(&Pose::from_translation(a), b - a, &ball, &Pose::IDENTITY, Vec3::ZERO, &*self.shape, options)
                .ok()
                .flatten()?;
        if hit.status != ShapeCastStatus::PenetratingOrWithinTargetDist {
            return Some((hit.time_of_impact, hit.normal2));
        }
        // the ball already touches: `a` lies on the grown surface (where the last substep left a carried
        // vertex), and the ray enters there if it heads inward
        let (_, inside, out) = self.closest(a);
        (!inside && (b - a).dot(out) < 0.0).then_some((0.0, out))
    }

    fn clearance(&self, q: Vec3) -> f32 {
        self.clearances.as_ref().map_or(0.0, |grid| grid.clearance(q))
    }

    fn aabb(&self) -> (Vec3, Vec3) {
        let aabb = self.shape.compute_local_aabb();
        (aabb.mins, aabb.maxs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use avian3d::parry::shape::TriMeshFlags;

    /// The unit cube [-1, 1]³ as a closed, outward triangle mesh with pseudo-normals.
    fn cube() -> SharedShape {
        let vertices: Vec<Vec3> = (0..8)
            .map(|i| {
                Vec3::new(
                    if i & 1 == 0 { -1.0 } else { 1.0 },
                    if i & 2 == 0 { -1.0 } else { 1.0 },
                    if i & 4 == 0 { -1.0 } else { 1.0 },
                )
            })
            .collect();
        #[rustfmt::skip]
        let triangles = vec![
            [0, 2, 1], [1, 2, 3], [4, 5, 6], [5, 7, 6], [0, 1, 4], [1, 5, 4],
            [2, 6, 3], [3, 6, 7], [0, 4, 2], [2, 4, 6], [1, 3, 5], [3, 7, 5],
        ];
        SharedShape::trimesh_with_flags(vertices, triangles, TriMeshFlags::ORIENTED).expect("a valid mesh")
    }

    #[test]
    fn a_mesh_cube_answers_like_the_analytic_box() {
        let mesh = cloth_shape(&cube());
        assert!(matches!(mesh, Shape::General(_)));
        let analytic = Shape::Box { center: Vec3::ZERO, rotation: bevy::math::Quat::IDENTITY, half_extents: Vec3::ONE };
        for margin in [0.0, 0.05] {
            let (mesh, analytic) = (mesh.inflated(margin), analytic.inflated(margin));
            for q in [Vec3::new(0.2, 0.5, 0.1), Vec3::new(2.0, 0.3, -0.4), Vec3::new(0.0, -1.5, 0.0)] {
                let (d_mesh, d_box) = (mesh.signed_distance(q), analytic.signed_distance(q));
                assert!((d_mesh - d_box).abs() < 1e-4, "{q}: mesh {d_mesh}, box {d_box}");
                let (p_mesh, n_mesh) = mesh.closest_surface(q);
                let (p_box, n_box) = analytic.closest_surface(q);
                assert!(p_mesh.distance(p_box) < 1e-4 && n_mesh.distance(n_box) < 1e-4, "{q}: {p_mesh} {p_box}");
            }
            // a ray from above enters the top face (grown by the margin), whatever the shape's type
            let (a, b) = (Vec3::new(0.3, 3.0, 0.2), Vec3::new(0.3, 0.0, 0.2));
            let (hit_mesh, hit_box) = (mesh.ray_entry(a, b), analytic.ray_entry(a, b));
            let ((q_mesh, n_mesh), (q_box, n_box)) = (hit_mesh.expect("mesh hit"), hit_box.expect("box hit"));
            assert!(q_mesh.distance(q_box) < 1e-3 && n_mesh.distance(n_box) < 1e-3, "{q_mesh} vs {q_box}");
            // a fast ray straight through the solid is caught at its entry
            let through = mesh.ray_entry(Vec3::new(0.0, 0.0, -5.0), Vec3::new(0.0, 0.0, 5.0));
            assert!(through.is_some_and(|(q, n)| (q.z + 1.0 + margin).abs() < 1e-3 && n.z < -0.99), "{through:?}");
        }
    }

    #[test]
    fn a_mesh_cube_has_the_edges_of_its_triangles_each_once() {
        let Shape::General(mesh) = cloth_shape(&cube()) else { panic!("a mesh is a general shape") };
        let edges: Vec<_> = mesh.feature_edges().map(|e| e.ends).collect();
        // twelve box edges and a diagonal across each of the six faces
        assert_eq!(edges.len(), 18);
        let lengths = |l: f32| edges.iter().filter(|[a, b]| (a.distance(*b) - l).abs() < 1e-5).count();
        assert_eq!((lengths(2.0), lengths(8.0f32.sqrt())), (12, 6));
        assert_eq!(Shape::General(mesh).edges().len(), 18);
    }

    /// The shipped mannequin as Avian makes it a collider (`avian::meshes`).
    fn mannequin() -> SharedShape {
        let text = std::fs::read_to_string("assets/meshes/mannequin.obj").expect("the shipped mesh");
        let mesh = crate::scene::obj::parse(&text, "mannequin.obj").expect("a valid OBJ");
        SharedShape::trimesh_with_flags(mesh.positions, mesh.triangles, TriMeshFlags::FIX_INTERNAL_EDGES)
            .expect("a valid mesh")
    }

    #[test]
    fn the_mannequins_clearances_are_lower_bounds_of_parrys_distances() {
        use rand::{Rng, SeedableRng};
        let shape = mannequin();
        let solid = ParrySolid::new(shape.clone());
        let grid = solid.clearances.as_ref().expect("a grid");
        let (lo, hi) = solid.aabb();
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let mut clear = 0;
        for _ in 0..20_000 {
            let q = Vec3::new(rng.random(), rng.random(), rng.random()) * (hi - lo + 0.4) + lo - 0.2;
            let (projection, _) = shape.project_local_point_and_get_feature(q);
            let exact = q.distance(projection.point) * if projection.is_inside { -1.0 } else { 1.0 };
            let clearance = grid.clearance(q);
            assert!(clearance <= exact.max(0.0) + 1e-5, "{q}: clearance {clearance}, parry {exact}");
            clear += (clearance > 0.0) as u32;
        }
        assert!(clear > 10_000, "{clear} of 20,000 clear: the grid must reject most points");
    }

    #[test]
    fn the_clearance_grid_changes_no_contact_of_the_mannequin_beyond_rounding() {
        use rand::{Rng, SeedableRng};
        let fast = ParrySolid::new(mannequin());
        let slow = ParrySolid { clearances: None, ..fast.clone() };
        let [fast, slow] = [fast, slow].map(|solid| Shape::General(GeneralShape::new(Arc::new(solid))).inflated(0.01));
        let (lo, hi) = (Vec3::new(-0.5, -0.2, -0.4), Vec3::new(0.5, 2.0, 0.4));
        let mut rng = rand::rngs::StdRng::seed_from_u64(3);
        let (mut hits, mut rejected) = (0, 0);
        for _ in 0..5_000 {
            let x = Vec3::new(rng.random(), rng.random(), rng.random()) * (hi - lo) + lo;
            let p = x + (Vec3::new(rng.random(), rng.random(), rng.random()) - 0.5) * 0.1;
            // the grid's closest points are its own arithmetic's, parry's its: as close to the surface (both within
            // 1e-8 m of a double-precision search), but near an edge either may lie a micrometre along it, which
            // turns the way out of a point a millimetre off by a few thousandths of a radian
            let contact = fast.contact(x, p);
            match (contact, slow.contact(x, p)) {
                (Some((a, n, resting)), Some((b, m, rests))) => {
                    let close = a.distance(b) < 1e-4 && n.dot(m) > 1.0 - 1e-4 && resting == rests;
                    assert!(close, "ray {x} → {p}: {contact:?} against parry's {b}, {m}, {rests}");
                }
                (fast, slow) => assert_eq!(fast, slow, "ray {x} → {p}"),
            }
            hits += contact.is_some() as u32;
            rejected += fast.is_clear_of(x, x.distance(p)) as u32;
        }
        assert!(hits > 50 && rejected > 2_500, "{hits} hits, {rejected} rejected: the rays must exercise both");
    }

    #[test]
    fn analytic_avian_shapes_keep_the_fast_path() {
        assert_eq!(cloth_shape(&SharedShape::ball(0.5)), Shape::Sphere { center: Vec3::ZERO, radius: 0.5 });
        let cuboid = cloth_shape(&SharedShape::cuboid(1.0, 2.0, 3.0));
        assert!(matches!(cuboid, Shape::Box { half_extents, .. } if half_extents == Vec3::new(1.0, 2.0, 3.0)));
        assert!(matches!(cloth_shape(&SharedShape::capsule_y(0.5, 0.2)), Shape::Capsule { radius: 0.2, .. }));
        let plane = cloth_shape(&SharedShape::halfspace(Vec3::Y));
        assert_eq!(plane, Shape::Plane { point: Vec3::ZERO, normal: Vec3::Y });
    }
}
