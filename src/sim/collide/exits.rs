//! Which way a cloth leaves a collider it starts inside (issue "contacts that hold", point 1).
//!
//! §3.4's static fallback sends a vertex that lies inside a collider to the surface point nearest to it. For a
//! vertex alone that is the shortest way out, but a sheet started through the middle of a box has vertices
//! nearest to every face: sent to all six, the sheet was torn across the box, its edges held 7.8 times their
//! length through it, and the pull of those edges against the pushes out gave the scene 400 times its energy
//! (10⁴ times with a dynamic box, which the pushes spun). Where the nearest normals of the vertices a cloth
//! starts inside one convex collider disagree, they all leave along one direction instead: the normal of the
//! piece of cloth inside, on the side whose farthest vertex has the shorter way out (against gravity when the
//! two are alike), so the cloth comes out in one piece and drapes over the collider. The directions are chosen
//! once, in the cloth's first substep, in the collider's frame, so a turning collider turns them.

use bevy::math::Vec3;

use super::contact::{Contact, ContactKind};
use super::shapes::Shape;
use super::swept::SweptCollider;

/// Nearest normals whose every one is within 60° of their mean agree: the vertices leave by them (a plane, a
/// shallow cap of a sphere).
const AGREEING: f32 = 0.5;
/// A piece of cloth whose normals sum to less than this share of their lengths has no side to leave by (a
/// crumpled or closed piece): its vertices leave by their nearest normals.
const SIDED: f32 = 0.5;

/// One vertex leaving one collider along a direction chosen for it ([`choose_exits`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Exit {
    /// The cloth vertex.
    pub vertex: u32,
    /// The collider's index in the substep's `CollisionWorld`.
    pub collider: u32,
    /// The direction, unit, in the collider's own frame.
    pub direction: Vec3,
}

/// Whether `c` is a surface contact of a vertex that lies inside its collider at the start of the substep.
fn starts_inside(c: &Contact, x: &[Vec3], held: &impl Fn(u32) -> bool) -> bool {
    c.kind == ContactKind::Surface
        && (c.vertex as usize) < x.len()
        && !held(c.vertex)
        && (c.point - c.surface_shift - x[c.vertex as usize]).dot(c.normal) > 0.0
}

/// The exits of the vertices a cloth starts inside a convex collider (a sphere, a box or a capsule) where their
/// nearest normals disagree, for the cloth's first substep: `contacts` are its contacts (ordered by collider),
/// `triangles` its surface, `margin` the colliders' growth (the cloth's thickness) and `up` the direction
/// against gravity. Vertices held by a body (`held`) are left to their holds.
pub(crate) fn choose_exits(
    (x, triangles): (&[Vec3], &[[u32; 3]]),
    contacts: &[Contact],
    (colliders, margin): (&[SweptCollider], f32),
    up: Vec3,
    held: impl Fn(u32) -> bool,
) -> Vec<Exit> {
    let mut exits = Vec::new();
    let mut normals: Option<Vec<Vec3>> = None;
    for (k, collider) in colliders.iter().enumerate() {
        if !matches!(collider.local, Shape::Sphere { .. } | Shape::Box { .. } | Shape::Capsule { .. }) {
            continue;
        }
        let inside = || contacts.iter().filter(|c| c.collider == k as u32 && starts_inside(c, x, &held));
        let mean = inside().map(|c| c.normal).sum::<Vec3>().normalize_or_zero();
        if inside().all(|c| c.normal.dot(mean) >= AGREEING) {
            continue;
        }
        let normals = normals.get_or_insert_with(|| vertex_normals(x, triangles));
        let side = inside().map(|c| normals[c.vertex as usize]).sum::<Vec3>();
        if side.length() < SIDED * inside().map(|c| normals[c.vertex as usize].length()).sum::<f32>() {
            continue;
        }
        let local = |d: Vec3| collider.start.rotation.inverse() * d;
        let farthest = |direction: Vec3| {
            inside()
                .map(|c| collider.exit_along(margin, x[c.vertex as usize], direction).map_or(f32::INFINITY, |d| d.1))
                .fold(0.0, f32::max)
        };
        let [ahead, back] = [local(side.normalize()), local(-side.normalize())];
        let (a, b) = (farthest(ahead), farthest(back));
        let alike = (a - b).abs() <= 1e-3 + 0.01 * a.min(b);
        let direction = match (alike, a < b) {
            (true, _) if local(up).dot(back) > local(up).dot(ahead) => back,
            (true, _) | (false, true) => ahead,
            (false, false) => back,
        };
        exits.extend(inside().map(|c| Exit { vertex: c.vertex, collider: k as u32, direction }));
    }
    exits
}

/// Points the contacts of the vertices that have an exit ([`choose_exits`]), still start inside their collider
/// and still have an `allowance` (`None` in the first substep: all have) along it: the contact's plane goes
/// through the point where the vertex's way out along the direction meets the collider's surface grown by
/// `margin`, square to the direction. `exits` and `contacts` are both ordered by collider, then vertex.
pub(crate) fn aim_at_exits(
    x: &[Vec3],
    contacts: &mut [Contact],
    (colliders, margin): (&[SweptCollider], f32),
    (exits, allowance): (&[Exit], Option<&[f32]>),
    held: impl Fn(u32) -> bool,
) {
    if exits.is_empty() {
        return;
    }
    for c in contacts.iter_mut() {
        let key = |e: &Exit| (e.collider, e.vertex);
        let Ok(at) = exits.binary_search_by_key(&(c.collider, c.vertex), key) else { continue };
        let Some(collider) = colliders.get(c.collider as usize) else { continue };
        let leaving = allowance.is_none_or(|a| a.get(c.vertex as usize).is_some_and(|room| *room > 0.0));
        if !leaving || !starts_inside(c, x, &held) {
            continue;
        }
        if let Some((hit, _)) = collider.exit_along(margin, x[c.vertex as usize], exits[at].direction) {
            (c.point, c.normal, c.surface_shift) = (hit.point, hit.normal, hit.surface_shift);
        }
    }
}

/// The area-weighted normal of every vertex of the surface `triangles` at positions `x` (zero for a vertex of
/// no triangle).
fn vertex_normals(x: &[Vec3], triangles: &[[u32; 3]]) -> Vec<Vec3> {
    let mut normals = vec![Vec3::ZERO; x.len()];
    for t in triangles {
        let [a, b, c] = t.map(|i| i as usize);
        if a.max(b).max(c) < x.len() {
            let n = (x[b] - x[a]).cross(x[c] - x[a]);
            [a, b, c].into_iter().for_each(|i| normals[i] += n);
        }
    }
    normals
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::collide::contacts::{Overlaps, depenetrate, generate_contacts};
    use crate::sim::parallel::SliceOutputs;
    use bevy::math::Quat;

    /// A 9 × 9 sheet of 10 cm cells in the plane y = `height`, its triangles facing up.
    fn sheet(height: f32) -> (Vec<Vec3>, Vec<[u32; 3]>) {
        let x = (0..81).map(|i| Vec3::new((i % 9) as f32 * 0.1 - 0.4, height, (i / 9) as f32 * 0.1 - 0.4)).collect();
        let mut triangles = Vec::new();
        for (r, c) in (0..8).flat_map(|r| (0..8).map(move |c| (r, c))) {
            let i = r * 9 + c;
            triangles.push([i, i + 9, i + 1]);
            triangles.push([i + 1, i + 9, i + 10]);
        }
        (x, triangles)
    }

    /// The contacts of the sheet `x` started inside `colliders`, aimed at their exits, and how deep each
    /// vertex starts along its contact.
    fn aimed(x: &[Vec3], triangles: &[[u32; 3]], colliders: &[SweptCollider], up: Vec3) -> (Vec<Contact>, Vec<f32>) {
        let w = vec![1.0; x.len()];
        let mut contacts = Vec::new();
        let search = (&mut SliceOutputs::default(), false);
        generate_contacts((x, x, &vec![Vec3::ZERO; x.len()], &w), colliders, (0.0, 0.01), search, &mut contacts);
        let exits = choose_exits((x, triangles), &contacts, (colliders, 0.0), up, |_| false);
        aim_at_exits(x, &mut contacts, (colliders, 0.0), (&exits, None), |_| false);
        let mut overlaps = Overlaps::default();
        depenetrate(x, &mut contacts.clone(), 0.0, &mut overlaps, |_| false);
        (contacts, overlaps.allowance.unwrap_or_default())
    }

    #[test]
    fn a_sheet_through_a_box_leaves_it_through_one_face_against_gravity() {
        let (x, triangles) = sheet(1.0);
        let half = Vec3::splat(0.25);
        let boxed = Shape::Box { center: Vec3::new(0.0, 1.0, 0.0), rotation: Quat::IDENTITY, half_extents: half };
        let (contacts, depth) = aimed(&x, &triangles, &[SweptCollider::fixed(boxed.clone(), 0.0, 0.0)], Vec3::Y);
        assert_eq!(contacts.len(), 25, "the 5 × 5 vertices inside");
        assert!(contacts.iter().all(|c| c.normal == Vec3::Y && (c.point.y - 1.25).abs() < 1e-6), "{contacts:?}");
        assert!(depth.iter().all(|d| *d == 0.0 || (d - 0.25).abs() < 1e-6), "all a quarter metre deep: {depth:?}");
        // the same sheet under a gravity that points up leaves downwards; its nearest normals went to all faces
        let (contacts, _) = aimed(&x, &triangles, &[SweptCollider::fixed(boxed.clone(), 0.0, 0.0)], Vec3::NEG_Y);
        assert!(contacts.iter().all(|c| c.normal == Vec3::NEG_Y), "{contacts:?}");
        let mut nearest = Vec::new();
        let search = (&mut SliceOutputs::default(), false);
        let (still, w) = (vec![Vec3::ZERO; 81], vec![1.0; 81]);
        let collider = [SweptCollider::fixed(boxed, 0.0, 0.0)];
        generate_contacts((&x, &x, &still, &w), &collider, (0.0, 0.01), search, &mut nearest);
        assert!(nearest.iter().any(|c| c.normal.x.abs() == 1.0) && nearest.iter().any(|c| c.normal.z.abs() == 1.0));
    }

    #[test]
    fn a_sheet_through_a_sphere_above_its_centre_leaves_by_the_shorter_way() {
        // 10 cm above the centre of a 30 cm sphere: up is the shorter way out for every vertex
        let (x, triangles) = sheet(1.1);
        let ball = Shape::Sphere { center: Vec3::new(0.0, 1.0, 0.0), radius: 0.3 };
        let (contacts, _) = aimed(&x, &triangles, &[SweptCollider::fixed(ball, 0.0, 0.0)], Vec3::NEG_Y);
        assert!(!contacts.is_empty() && contacts.iter().all(|c| c.normal == Vec3::Y), "{contacts:?}");
        for c in &contacts {
            let q = x[c.vertex as usize];
            let expected = 1.0 + (0.09 - q.x * q.x - q.z * q.z).sqrt();
            assert!((c.point.y - expected).abs() < 1e-4, "leaves at {} not {expected}", c.point.y);
        }
    }

    #[test]
    fn vertices_whose_nearest_normals_agree_keep_them() {
        // a sheet dipping 5 cm into the top of a large sphere: the cap's normals are within 60° of each other
        let (x, triangles) = sheet(1.95);
        let ball = Shape::Sphere { center: Vec3::ZERO, radius: 2.0 };
        let colliders = [SweptCollider::fixed(ball, 0.0, 0.0)];
        let w = vec![1.0; 81];
        let mut contacts = Vec::new();
        let search = (&mut SliceOutputs::default(), false);
        generate_contacts((&x, &x, &vec![Vec3::ZERO; 81], &w), &colliders, (0.0, 0.01), search, &mut contacts);
        assert!(!contacts.is_empty());
        assert!(choose_exits((&x, &triangles), &contacts, (&colliders, 0.0), Vec3::Y, |_| false).is_empty());
    }
}
