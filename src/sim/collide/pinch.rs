//! A vertex pinched between two colliders that face each other closer than twice the cloth's thickness: a box
//! resting on a beam with a strip between them, a lid on the ground. §3.4's two contacts then ask for places that
//! do not exist (the thickness away from both surfaces), so the projection's last contact wins, line (8) of the
//! next substep finds the vertex on the other side of the overlap, and the vertex jumps across it every substep at
//! overlap / Δt. Each of the two contacts instead gives up half of the overlap: both are met on the plane midway
//! between the grown surfaces, where the vertex can rest.

use std::ops::Range;

use super::contact::{Contact, ContactKind};

/// Normals whose cosine is at most this face each other (120° or more apart); in a corner (90°) the two contacts
/// can both be met and keep the full thickness.
const FACING: f32 = -0.5;

/// Shares the overlap of every two facing surface contacts of one vertex with different colliders. `contacts` come
/// as [`generate_step_contacts`](super::contacts::generate_step_contacts) leaves them: by collider, then vertex, so each pair
/// of colliders' runs is merged in one pass and a vertex touching a single collider costs nothing.
pub fn share_pinches(contacts: &mut [Contact]) {
    let mut a = 0..run_end(contacts, 0);
    while a.start < contacts.len() {
        let mut b = a.end..run_end(contacts, a.end);
        while b.start < contacts.len() {
            share_between(contacts, a.clone(), b.clone());
            b = b.end..run_end(contacts, b.end);
        }
        a = a.end..run_end(contacts, a.end);
    }
}

/// Where the run of contacts with the collider of `contacts[start]` ends.
fn run_end(contacts: &[Contact], start: usize) -> usize {
    let Some(first) = contacts.get(start) else {
        return contacts.len();
    };
    contacts[start..].iter().position(|c| c.collider != first.collider).map_or(contacts.len(), |n| start + n)
}

/// Walks two runs sorted by vertex side by side and shares the overlap of the contacts they have in common.
fn share_between(contacts: &mut [Contact], a: Range<usize>, b: Range<usize>) {
    let (first, second) = (&contacts[a.start], &contacts[b.start]);
    if contacts[a.end - 1].vertex < second.vertex || contacts[b.end - 1].vertex < first.vertex {
        return;
    }
    let (mut i, mut j) = (a.start, b.start);
    while i < a.end && j < b.end {
        match contacts[i].vertex.cmp(&contacts[j].vertex) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                let (head, tail) = contacts.split_at_mut(j);
                share_overlap(&mut head[i], &mut tail[0]);
                (i, j) = (i + 1, j + 1);
            }
        }
    }
}

/// Moves the surface points of two facing contacts of one vertex back along their normals until their planes
/// meet, each by half the overlap along the axis between the normals.
fn share_overlap(a: &mut Contact, b: &mut Contact) {
    if a.kind != ContactKind::Surface || b.kind != ContactKind::Surface || a.normal.dot(b.normal) > FACING {
        return;
    }
    let axis = (a.normal - b.normal).normalize_or_zero();
    let overlap = (a.point - b.point).dot(axis);
    let along = a.normal.dot(axis);
    if overlap.is_nan() || overlap <= 0.0 || along <= 0.0 {
        return;
    }
    let back = 0.5 * overlap / along;
    a.point -= a.normal * back;
    b.point -= b.normal * back;
}

#[cfg(test)]
mod tests {
    use bevy::math::Vec3;

    use super::*;
    use crate::sim::collide::swept::SurfaceHit;

    fn contact(vertex: u32, collider: u32, point: Vec3, normal: Vec3) -> Contact {
        Contact::surface(vertex, collider, SurfaceHit { point, normal, surface_shift: Vec3::ZERO }, 0.0, (0.5, 0.0))
    }

    #[test]
    fn a_vertex_between_a_lid_and_the_ground_gets_the_plane_midway() {
        // ground grown to y ≥ 1 cm, a lid's bottom 5 mm up grown to y ≤ −5 mm: no point meets both
        let (up, down) = (Vec3::Y, Vec3::NEG_Y);
        let mut contacts = [
            contact(3, 0, Vec3::new(0.0, 0.01, 0.0), up),
            contact(7, 0, Vec3::new(1.0, 0.01, 0.0), up),
            contact(3, 1, Vec3::new(0.0, -0.005, 0.0), down),
        ];
        share_pinches(&mut contacts);
        assert!((contacts[0].point.y - 0.0025).abs() < 1e-7 && (contacts[2].point.y - 0.0025).abs() < 1e-7);
        assert_eq!(contacts[1].point.y, 0.01, "a vertex on the ground alone keeps its contact");
    }

    #[test]
    fn contacts_that_can_both_be_met_are_left_alone() {
        let tilted = Vec3::new(0.3, -1.0, 0.0).normalize();
        let mut pinched = [contact(0, 0, Vec3::ZERO, Vec3::Y), contact(0, 2, Vec3::new(0.0, -0.02, 0.0), tilted)];
        share_pinches(&mut pinched);
        let (a, b) = (pinched[0], pinched[1]);
        let axis = (a.normal - b.normal).normalize();
        assert!((a.point - b.point).dot(axis).abs() < 1e-6, "tilted facing planes meet: {a:?} {b:?}");
        // a gap between the planes, and a corner
        let wide = [contact(0, 0, Vec3::ZERO, Vec3::Y), contact(0, 1, Vec3::new(0.0, 0.03, 0.0), Vec3::NEG_Y)];
        let corner = [contact(0, 0, Vec3::ZERO, Vec3::Y), contact(0, 1, Vec3::new(0.05, 0.0, 0.0), Vec3::NEG_X)];
        for case in [wide, corner] {
            let mut shared = case;
            share_pinches(&mut shared);
            assert_eq!(shared, case);
        }
    }
}
