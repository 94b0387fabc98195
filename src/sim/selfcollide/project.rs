//! Projecting the self contacts (§4.3, eq. (12)/(13) as PBD eq. (8)–(9)), and ordering them into two
//! particle-disjoint halves that can be projected side by side.

use bevy::math::Vec3;

use super::SelfContact;
use super::narrow::{barycentric, unit_normal};
use crate::sim::constraints::access::ParticleAccess;
#[cfg(test)]
use crate::sim::constraints::access::Slices;

/// How far outside its triangle (in barycentric units) a vertex may project and still be held by the pair.
pub(crate) const OUTSIDE_TOLERANCE: f32 = 0.25;

/// How much of the thickness h a vertex that starts a substep inside the band (closer than h to the triangle)
/// may win back in that substep: [`lift_squeezed_vertices`] moves it out by at most this·h in x and p, and between
/// cloths the projection by at most as much in p. See the module docs ("Squeezed vertices").
pub(crate) const DEPENETRATION_PER_STEP: f32 = 0.25;

/// How fast the lift of squeezed vertices (module docs, "Squeezed vertices") moves a vertex out of the band, m/s.
/// Where the band cannot be kept (a crumpled pile, a soft cloth its stretch constraints squeeze), the constraints
/// pull back in p what the lift moved in x and p, and the difference is velocity: the lift's speed bounds that
/// fight, and at the colliders' 2 m/s it kept a crumpled cloth astir long after it should have settled.
pub const SELF_DEPENETRATION_SPEED: f32 = 0.5;

/// [`project_self_contacts_on`] with one thickness h for every pair, on plain slices.
#[cfg(test)]
pub(crate) fn project_self_contacts(
    p: &mut [Vec3],
    x: &[Vec3],
    w: &[f32],
    triangles: &[[u32; 3]],
    contacts: &[SelfContact],
    thickness: f32,
    k: f32,
) {
    project_self_contacts_on(&mut Slices { p, w }, x, triangles, contacts, |_, _| thickness, k, 0.0);
}

/// One Gauss–Seidel pass over `contacts` on the predictions and inverse masses w of `particles`: where
/// C = side·(q − p1)·n − h' < 0 (eq. (12)/(13) with the gap h' = min(h, gap at x + `reach`·h), the gap at x
/// measured along today's n), moves q and the triangle's corners by PBD eq. (8)–(9), gradients ∇q = side·n and
/// ∇p_i = −side·b_i·n (n held constant, see the module docs), scaled by the stiffness `k` ∈ [0, 1]. A vertex that
/// starts inside the band wins back at most `reach`·h in p: 0 for a cloth's own contacts, which
/// [`lift_squeezed_vertices`] moves out in x and p alike, so the vertex only gets no closer. The thickness h kept
/// between a vertex and a triangle is `thickness(vertex, first corner)` (cloths of different thickness). Skips
/// contacts with an index out of range, a triangle that turned over since the start of the step (its normal at
/// `x` opposes the one at `p`), a degenerate triangle, zero total weight, or a vertex that projects more than
/// [`OUTSIDE_TOLERANCE`] outside its triangle.
#[inline(always)]
pub(crate) fn project_self_contacts_on(
    particles: &mut impl ParticleAccess,
    x: &[Vec3],
    triangles: &[[u32; 3]],
    contacts: &[SelfContact],
    thickness: impl Fn(usize, usize) -> f32,
    k: f32,
    reach: f32,
) {
    if k.is_nan() || k <= 0.0 {
        return;
    }
    let k = k.min(1.0);
    let n = particles.len().min(x.len());
    for c in contacts {
        let Some((q, [i1, i2, i3])) = contact_indices(c, triangles, n) else { continue };
        let (pq, p1, p2, p3) = (particles.p(q), particles.p(i1), particles.p(i2), particles.p(i3));
        let Some(normal) = unit_normal([p1, p2, p3]) else { continue };
        let g = if c.side < 0.0 { -normal } else { normal };
        let start_gap = (x[q] - x[i1]).dot(g);
        let h = thickness(q, i1);
        let value = (pq - p1).dot(g) - h.min(start_gap + reach * h);
        if value.is_nan() || value >= 0.0 {
            continue; // satisfied
        }
        if (x[i2] - x[i1]).cross(x[i3] - x[i1]).dot(normal) < 0.0 {
            // the triangle turned over since the start of the step: `side` refers to its old orientation
            continue;
        }
        let Some(b) = barycentric(pq, [p1, p2, p3]) else { continue };
        if b.min_element() < -OUTSIDE_TOLERANCE {
            // the vertex has moved off the triangle since detection: the plane beyond its edges is not the
            // cloth, and pushing against it could throw the vertex far (a tumbling fold)
            continue;
        }
        let w = [particles.w(q), particles.w(i1), particles.w(i2), particles.w(i3)];
        let Some(shifts) = contact_shifts(b, w, k * value, g) else { continue };
        for (i, shift) in [q, i1, i2, i3].into_iter().zip(shifts) {
            particles.shift(i, shift);
        }
    }
}

/// The vertex and triangle corners of contact `c` among `n` particles; `None` for a triangle out of range, a
/// vertex of its own triangle or an index from `n` on.
#[inline(always)]
fn contact_indices(c: &SelfContact, triangles: &[[u32; 3]], n: usize) -> Option<(usize, [usize; 3])> {
    let tri = triangles.get(c.triangle as usize)?;
    let (q, corners) = (c.vertex as usize, tri.map(|i| i as usize));
    (!tri.contains(&c.vertex) && q < n && corners.iter().all(|&i| i < n)).then_some((q, corners))
}

/// Eq. (8)–(9) for one contact with violation `value` < 0 along the unit direction `g` from the triangle to the
/// vertex, whose projection onto the triangle has barycentrics `b`: the moves of the vertex and the three
/// corners, Δp_j = −s·w_j·∇_j C with s = C / Σ w_j |∇_j C|², ∇q C = g and ∇p_i C = −b_i·g (b clamped to the
/// triangle). `None` without mass to move.
#[inline(always)]
fn contact_shifts(b: Vec3, [wq, w1, w2, w3]: [f32; 4], value: f32, g: Vec3) -> Option<[Vec3; 4]> {
    let b = b.max(Vec3::ZERO);
    let b = b / b.element_sum(); // ≥ 1 before dividing: the clamp only drops negative parts of Σ b = 1
    let wsum = wq + w1 * b.x * b.x + w2 * b.y * b.y + w3 * b.z * b.z;
    if wsum.is_nan() || wsum <= 0.0 {
        return None;
    }
    // value < 0, so q moves along g and the corners against it
    let s = value / wsum * g;
    Some([-(wq * s), w1 * b.x * s, w2 * b.y * s, w3 * b.z * s])
}

/// Per particle, the moves [`lift_squeezed_vertices`] sums in a substep and how many contacts sent them; kept
/// between substeps so that the lift allocates nothing once grown.
#[derive(Clone, Debug, Default)]
pub(crate) struct Lifts {
    moves: Vec<(Vec3, u32)>,
}

/// Pre-stabilisation of the squeezed vertices (Macklin et al. 2014, §4.4): before a substep's projection, each
/// contact whose vertex starts the substep inside the band (gap at x in [0, h), along the normal at x) moves the
/// vertex and the triangle's corners apart by eq. (8)–(9) towards the gap min(h, gap + [`DEPENETRATION_PER_STEP`]·h),
/// in x and p alike, so none of the overlap becomes velocity in line (12). The moves are found from x alone and
/// averaged per particle (a Jacobi step, as Macklin et al. do), and no particle moves further than `reach`
/// ([`SELF_DEPENETRATION_SPEED`] times the substep): a vertex in many contacts, or a corner of many triangles, is
/// not moved once per contact. A vertex on the wrong side of its triangle (gap < 0) is lifted towards its side
/// the same way: held where it was, a soft cloth kept its edges stretched across the crossing. The thickness is `thickness(vertex, first
/// corner)`, as in [`project_self_contacts_on`], and so are the contacts skipped (at x). Returns how many
/// particles moved.
pub(crate) fn lift_squeezed_vertices(
    (x, p, w): (&mut [Vec3], &mut [Vec3], &[f32]),
    (triangles, contacts): (&[[u32; 3]], &[SelfContact]),
    thickness: impl Fn(usize, usize) -> f32,
    reach: f32,
    lifts: &mut Lifts,
) -> usize {
    let n = x.len().min(p.len()).min(w.len());
    if contacts.is_empty() || reach.is_nan() || reach <= 0.0 {
        return 0;
    }
    lifts.moves.resize(n, (Vec3::ZERO, 0));
    let mut touched = 0;
    for c in contacts {
        let Some((q, [i1, i2, i3])) = contact_indices(c, triangles, n) else { continue };
        let corners = [x[i1], x[i2], x[i3]];
        let Some(normal) = unit_normal(corners) else { continue };
        let g = if c.side < 0.0 { -normal } else { normal };
        let (gap, h) = ((x[q] - x[i1]).dot(g), thickness(q, i1));
        let value = (gap - h).max(-DEPENETRATION_PER_STEP * h);
        if value.is_nan() || value >= 0.0 {
            continue;
        }
        let Some(b) = barycentric(x[q], corners) else { continue };
        if b.min_element() < -OUTSIDE_TOLERANCE {
            continue;
        }
        let Some(shifts) = contact_shifts(b, [w[q], w[i1], w[i2], w[i3]], value, g) else { continue };
        for (i, shift) in [q, i1, i2, i3].into_iter().zip(shifts) {
            let (sum, count) = &mut lifts.moves[i];
            touched += usize::from(*count == 0);
            *sum += shift;
            *count += 1;
        }
    }
    if touched == 0 {
        return 0;
    }
    let mut moved = 0;
    for ((x, p), (sum, count)) in x.iter_mut().zip(p.iter_mut()).zip(&mut lifts.moves) {
        if *count > 0 {
            let shift = (*sum / *count as f32).clamp_length_max(reach);
            *x += shift;
            *p += shift;
            moved += usize::from(shift != Vec3::ZERO);
            (*sum, *count) = (Vec3::ZERO, 0);
        }
    }
    moved
}

/// Orders `contacts` (sorted by vertex, then triangle) for two threads: a plane across the axis along which
/// the contacts' vertices (at `positions`) spread most, through their mean, splits the cloth in two; first come
/// the contacts whose vertex and triangle corners all lie below the plane, then those all above it, then the
/// rest, each group in the order it had. Returns where the second and the third group start. The first two
/// groups share no particle, so they can be projected at the same time (the rest follows alone), and the order
/// is a function of the contacts and positions only, not of the thread count. Contacts join particles closer
/// than the detection band, so few straddle the plane. `scratch` (each contact with its group) is reused: no
/// allocation once grown.
pub(crate) fn split_in_halves(
    contacts: &mut [SelfContact],
    positions: &[Vec3],
    triangles: &[[u32; 3]],
    scratch: &mut Vec<(u8, SelfContact)>,
) -> [usize; 2] {
    let at = |i: u32| positions.get(i as usize).copied().filter(|p| p.is_finite());
    let (lo, hi, sum, count) = contacts
        .iter()
        .filter_map(|c| at(c.vertex))
        .fold((Vec3::INFINITY, Vec3::NEG_INFINITY, Vec3::ZERO, 0), |(lo, hi, sum, n), p| {
            (lo.min(p), hi.max(p), sum + p, n + 1)
        });
    if count == 0 {
        return [contacts.len(); 2];
    }
    let extent = hi - lo;
    let axis = if extent.x >= extent.y.max(extent.z) {
        0
    } else if extent.y >= extent.z {
        1
    } else {
        2
    };
    let plane = sum[axis] / count as f32;
    let group = |c: &SelfContact| {
        let corners = triangles.get(c.triangle as usize).copied().unwrap_or([u32::MAX; 3]);
        let side = [c.vertex, corners[0], corners[1], corners[2]].map(|i| at(i).map(|p| p[axis] >= plane));
        if side.iter().all(|&s| s == Some(false)) {
            0
        } else if side.iter().all(|&s| s == Some(true)) {
            1
        } else {
            2
        }
    };
    // each contact's group, computed once; then the groups copied back one after another, each in its order
    scratch.clear();
    scratch.extend(contacts.iter().map(|c| (group(c), *c)));
    let (mut ends, mut next) = ([0; 2], 0);
    for g in 0..3 {
        for &(_, c) in scratch.iter().filter(|(of, _)| *of == g) {
            contacts[next] = c;
            next += 1;
        }
        if let Some(end) = ends.get_mut(g as usize) {
            *end = next;
        }
    }
    ends
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::selfcollide::test_support::{Lcg, TRI, crumpled_pair, grid, sorted, static_triangle};
    use crate::sim::selfcollide::{SelfContactSearch, count_crossings, find_self_contacts};

    #[test]
    fn falling_vertex_is_kept_above_static_triangle() {
        let h = 0.01;
        let x = static_triangle();
        let mut p = x.clone();
        p[3] = Vec3::new(0.3, 0.2, -0.2);
        let mut contacts = Vec::new();
        find_self_contacts(&mut SelfContactSearch::default(), &x, &p, &TRI, h, false, &mut contacts);
        assert_eq!(contacts, vec![SelfContact { vertex: 3, triangle: 0, side: 1.0 }]);
        let w = [0.0, 0.0, 0.0, 1.0];
        project_self_contacts(&mut p, &x, &w, &TRI, &contacts, h, 1.0);
        assert!(p[3].z >= h - 1e-5, "{}", p[3].z);
        assert!((p[3].z - h).abs() < 1e-5);
        assert_eq!(&p[..3], &x[..3]);
        // Satisfied now: a second pass does nothing.
        let before = p.clone();
        project_self_contacts(&mut p, &x, &w, &TRI, &contacts, h, 1.0);
        assert_eq!(p, before);
    }

    #[test]
    fn a_vertex_in_the_band_gets_no_closer_and_is_lifted_out_with_no_velocity() {
        let h = 0.01;
        let mut x = static_triangle();
        x[3].z = -0.005;
        let mut p = x.clone();
        p[3].z = 0.003;
        let mut contacts = Vec::new();
        find_self_contacts(&mut SelfContactSearch::default(), &x, &p, &TRI, h, false, &mut contacts);
        assert_eq!(contacts, vec![SelfContact { vertex: 3, triangle: 0, side: -1.0 }]);
        let w = [1.0; 4];
        let depth = |p: &[Vec3]| -> f32 {
            let Some(n) = unit_normal([p[0], p[1], p[2]]) else { panic!("degenerate after projection") };
            (p[3] - p[0]).dot(n)
        };
        // it started 0.5 h below, inside the band: the projection holds it there, not at h
        project_self_contacts(&mut p, &x, &w, &TRI, &contacts, h, 1.0);
        assert!((depth(&p) + 0.005).abs() < 1e-5, "{} below, not 0.5 h", -depth(&p));
        assert!(p[0].z > 0.0 && p[1].z > 0.0 && p[2].z > 0.0, "the triangle moves up");
        // Half stiffness corrects half the violation.
        let mut half = x.clone();
        half[3].z = 0.003;
        project_self_contacts(&mut half, &x, &[0.0, 0.0, 0.0, 1.0], &TRI, &contacts, h, 0.5);
        assert!((half[3].z - (0.003 - 0.5 * 0.008)).abs() < 1e-6, "{}", half[3].z);
        // at rest there, the next substeps lift it a quarter thickness each up to h, in x and p alike
        let mut x = p.clone();
        let mut p = x.clone();
        for expected in [0.005 + DEPENETRATION_PER_STEP * h, h, h] {
            let lifted =
                lift_squeezed_vertices((&mut x, &mut p, &w), (&TRI, &contacts), |_, _| h, 1.0, &mut Lifts::default());
            assert!((depth(&x) + expected).abs() < 1e-5, "{} below, not {expected}", -depth(&x));
            assert!(lifted == 4 || expected == h, "{lifted}");
            assert_eq!(p, x, "the lift gave a velocity");
        }
    }

    #[test]
    fn a_vertex_squeezed_between_two_layers_gains_no_speed() {
        // a vertex 0.3 h above one triangle and 0.3 h below another: both contacts cannot hold. Pushed out in p
        // alone it would leave each step at up to h/Δt; lifted in x and p alike it stays between the layers, at rest
        let h = 0.01;
        let mut x = static_triangle();
        x[3].z = 0.003;
        x.extend([Vec3::new(0.0, 0.0, 0.006), Vec3::new(1.0, 0.0, 0.006), Vec3::new(0.0, 1.0, 0.006)]);
        let tris = [[0, 1, 2], [4, 5, 6]];
        let contacts =
            [SelfContact { vertex: 3, triangle: 0, side: 1.0 }, SelfContact { vertex: 3, triangle: 1, side: -1.0 }];
        let w = [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0];
        let mut p = x.clone();
        for _ in 0..20 {
            // its two lifts cancel: it stays where it is
            let lifts = &mut Lifts::default();
            assert_eq!(lift_squeezed_vertices((&mut x, &mut p, &w), (&tris, &contacts), |_, _| h, 1.0, lifts), 0);
            project_self_contacts(&mut p, &x, &w, &tris, &contacts, h, 1.0);
            assert_eq!(p[3], x[3], "the vertex gained a velocity");
            assert!((0.0..=0.006).contains(&x[3].z), "it left the layers: {}", x[3].z);
        }
    }

    #[test]
    fn a_triangle_that_turned_over_pushes_nothing() {
        // side +1 was recorded above the triangle at x; during the step the triangle turned over about its p1–p2
        // edge and the vertex is still above it: against the new normal it reads 5 cm deep, and pushing it "out"
        // would throw it through the cloth
        let h = 0.01;
        let x = static_triangle();
        let mut p = vec![Vec3::ZERO, Vec3::X, Vec3::NEG_Y, Vec3::new(0.25, -0.25, 0.05)];
        let contacts = [SelfContact { vertex: 3, triangle: 0, side: 1.0 }];
        let before = p.clone();
        project_self_contacts(&mut p, &x, &[1.0; 4], &TRI, &contacts, h, 1.0);
        assert_eq!(p, before);
        // the same state reached without turning over (x = p) is a vertex 5 h on the wrong side: the lift moves it a
        // quarter thickness back towards its side, in x and p alike, and the projection keeps it from going deeper
        let mut x_end = before.clone();
        let lifts = &mut Lifts::default();
        assert_eq!(lift_squeezed_vertices((&mut x_end, &mut p, &[1.0; 4]), (&TRI, &contacts), |_, _| h, 1.0, lifts), 4);
        assert_eq!(p, x_end, "the lift gave a velocity");
        let lifted = before[3] - x_end[3];
        assert!(lifted.z > 0.0 && lifted.length() <= DEPENETRATION_PER_STEP * h, "{lifted}");
        project_self_contacts(&mut p, &x_end, &[1.0; 4], &TRI, &contacts, h, 1.0);
        assert_eq!(p, x_end);
    }

    #[test]
    fn projection_conserves_momentum_with_unequal_masses() {
        let h = 0.02;
        let p0 = vec![
            Vec3::new(0.0, 0.0, 0.1),
            Vec3::new(1.0, 0.2, 0.0),
            Vec3::new(0.1, 0.9, -0.1),
            Vec3::new(0.3, 0.3, -0.05),
        ];
        let w = [0.5, 2.0, 1.0, 0.25];
        let contacts = [SelfContact { vertex: 3, triangle: 0, side: 1.0 }];
        let Some(n) = unit_normal([p0[0], p0[1], p0[2]]) else { panic!("degenerate triangle") };
        let centroid = (p0[0] + p0[1] + p0[2]) / 3.0;
        // the vertex started the step 2 h above the triangle and its prediction went through it
        let mut x = p0.clone();
        x[3] = centroid + 2.0 * h * n;
        let mut p = p0.clone();
        project_self_contacts(&mut p, &x, &w, &TRI, &contacts, h, 1.0);
        let moved: f32 = p.iter().zip(&p0).map(|(a, b)| a.distance(*b)).sum();
        assert!(moved > 0.05, "{moved}");
        let linear: Vec3 = p.iter().zip(&p0).zip(&w).map(|((a, b), w)| (*a - *b) / w).sum();
        assert!(linear.length() < 1e-5, "{linear}");
        let angular: Vec3 = p.iter().zip(&p0).zip(&w).map(|((a, b), w)| b.cross(*a - *b) / w).sum();
        assert!(angular.length() < 1e-5, "{angular}");
        // the lift moves the same masses in x and p: the centre of mass stays, and no velocity is made
        let mut x = p0.clone();
        x[3] = centroid + 0.5 * h * n;
        let mut p = x.clone();
        let start = x[3];
        let centre = |x: &[Vec3]| -> Vec3 { x.iter().zip(&w).map(|(x, w)| *x / w).sum() };
        let before = centre(&x);
        assert_eq!(
            lift_squeezed_vertices((&mut x, &mut p, &w), (&TRI, &contacts), |_, _| h, 1.0, &mut Lifts::default()),
            4
        );
        assert!(x[3].distance(start) > 0.001, "{}", x[3]);
        assert!((centre(&x) - before).length() < 1e-5, "{}", centre(&x) - before);
        assert_eq!(p, x);
    }

    #[test]
    fn split_halves_share_no_particle_and_keep_every_contact() {
        for seed in 1..6 {
            let (x, p, tris) = crumpled_pair(seed);
            let mut found = Vec::new();
            find_self_contacts(&mut SelfContactSearch::default(), &x, &p, &tris, 0.02, false, &mut found);
            let before = sorted(found.clone());
            let [a, b] = split_in_halves(&mut found, &x, &tris, &mut Vec::new());
            assert!(a <= b && b <= found.len());
            assert_eq!(sorted(found.clone()), before, "seed {seed}: the split lost or changed contacts");
            let particles = |cs: &[SelfContact]| -> std::collections::HashSet<u32> {
                cs.iter().flat_map(|c| std::iter::once(c.vertex).chain(tris[c.triangle as usize])).collect()
            };
            let (first, second) = (particles(&found[..a]), particles(&found[a..b]));
            assert!(first.is_disjoint(&second), "seed {seed}: the halves share a particle");
            // each group keeps the detection order (vertex, then triangle)
            for group in [&found[..a], &found[a..b], &found[b..]] {
                assert!(group.windows(2).all(|w| (w[0].vertex, w[0].triangle) < (w[1].vertex, w[1].triangle)));
            }
            // both halves get work, and few contacts straddle the plane
            assert!(a > 0 && b > a, "seed {seed}: halves {a}, {}", b - a);
            assert!(found.len() - b < found.len() / 2, "seed {seed}: {} of {} straddle", found.len() - b, found.len());
        }
        assert_eq!(split_in_halves(&mut [], &[], &[], &mut Vec::new()), [0, 0]);
    }

    #[test]
    fn projection_resolves_sheet_falling_through_static_sheet() {
        let h = 0.01;
        let (mut x, mut tris) = (Vec::new(), Vec::new());
        grid(20, 0.05, Vec3::ZERO, &mut x, &mut tris);
        grid(16, 0.05, Vec3::new(0.11, 0.12, 0.03), &mut x, &mut tris);
        let w: Vec<f32> = (0..x.len()).map(|i| if i < 400 { 0.0 } else { 1.0 }).collect();
        let mut rng = Lcg(5);
        let mut p: Vec<Vec3> =
            x.iter().zip(&w).map(|(&v, &w)| if w > 0.0 { v + rng.vec(0.005) - 0.045 * Vec3::Z } else { v }).collect();
        // 16×16 falling vertices through static triangles + 15×15 static vertices under falling triangles, each
        // 1.5 cm (1.5 h) through: a fall of half a triangle in one projection, more than a substep brings.
        assert_eq!(count_crossings(&x, &p, &tris), 16 * 16 + 15 * 15);
        let mut contacts = Vec::new();
        find_self_contacts(&mut SelfContactSearch::default(), &x, &p, &tris, h, false, &mut contacts);
        assert!(contacts.len() >= 16 * 16 + 15 * 15, "{}", contacts.len());
        for _ in 0..4 {
            project_self_contacts(&mut p, &x, &w, &tris, &contacts, h, 1.0);
        }
        assert_eq!(count_crossings(&x, &p, &tris), 0);
        assert!(p[400..].iter().all(|v| v.z >= h - 1e-4), "{}", p[400..].iter().map(|v| v.z).fold(f32::MAX, f32::min));
    }
}
