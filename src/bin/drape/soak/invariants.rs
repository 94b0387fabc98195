//! The facts the soak checks after every fixed step, as pure functions over the cloth's arrays. Why each must
//! hold is in `docs/reliability.md`.

use bevy::math::Vec3;
use serde::Serialize;

use drape::sim::collide::contact::{Contact, ContactKind};
use drape::sim::collide::shapes::Shape;

/// One broken invariant.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Violation {
    /// Which invariant: `panic`, `finite`, `speed`, `capped`, `energy`, `stretch`, `penetration` or `cost`.
    pub invariant: &'static str,
    /// The fixed step after which it was seen (0 = while building).
    pub frame: u32,
    /// What was measured against what was allowed.
    pub detail: String,
}

/// The invariants every scene holds today; a soak that breaks one of them fails. The others (`capped`,
/// `penetration`, `stretch`, `cost`) are the goal, with the scenes that still break them listed in docs/reliability.md.
pub const GUARANTEED: [&str; 3] = ["panic", "finite", "speed"];

/// Stretch l/l0 − 1 a stiff, untorn, held-still cloth may reach away from colliders (see docs/reliability.md).
pub const STRETCH_BOUND: f32 = 4.0;

/// Stretch stiffness from which a cloth counts as stiff for [`STRETCH_BOUND`].
pub const STIFF: f32 = 0.3;

/// The vertex that moved furthest between `before` and `after` (vertices added since, by tearing, are skipped):
/// (index, distance).
pub fn furthest_move(before: &[Vec3], after: &[Vec3]) -> Option<(usize, f32)> {
    before.iter().zip(after).map(|(a, b)| a.distance(*b)).enumerate().max_by(|a, b| a.1.total_cmp(&b.1))
}

/// How much deeper than its thickness a vertex may lie in a collider, and how close to a second collider it
/// counts as squeezed between them, metres: floating-point room around the exact h a contact keeps.
pub const DEPTH_SLACK: f32 = 1e-3;

/// Per vertex, whether its last substep's contacts pressed it from two colliders with opposed normals
/// (n₁·n₂ < 0): squeezed between them, as a vertex between a body and a wall is, whatever the gap the two contact
/// planes leave at the end of the step.
pub fn squeezed_by_contacts(vertices: usize, contacts: &[Contact]) -> Vec<bool> {
    let mut pressed: Vec<(u32, u32, Vec3)> = contacts
        .iter()
        .filter(|c| c.kind == ContactKind::Surface && (c.vertex as usize) < vertices)
        .map(|c| (c.vertex, c.collider, c.normal))
        .collect();
    pressed.sort_by_key(|&(vertex, collider, _)| (vertex, collider));
    let mut squeezed = vec![false; vertices];
    for group in pressed.chunk_by(|a, b| a.0 == b.0) {
        let opposed =
            group.iter().enumerate().any(|(k, a)| group[k + 1..].iter().any(|b| a.1 != b.1 && a.2.dot(b.2) < 0.0));
        squeezed[group[0].0 as usize] = opposed;
    }
    squeezed
}

/// What [`deepest_unsqueezed`] found.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Depths {
    /// The deepest vertex held to the bound: (vertex, shape, depth below the surface).
    pub deepest: Option<(usize, usize, f32)>,
    /// Vertices deeper than `thickness` + [`DEPTH_SLACK`] that the speed cap held in the last substep, left out.
    pub capped_too_deep: u32,
}

/// The free vertex (w > 0) deepest inside a collider while clear of every other one. A vertex within
/// `thickness` + [`DEPTH_SLACK`] of two colliders, or `squeezed` ([`squeezed_by_contacts`]), is squeezed between
/// them and cannot satisfy both (pushed out of one it sits at h from it), so it is left out. So is a vertex the speed cap held in the last substep (its x is
/// not the p the contacts and the push-out left, which the velocity update copies to x bit for bit otherwise):
/// the cap stopped it short of where the collision response put it, and [`GUARANTEED`]'s speed bound is the one
/// it keeps. A vertex the cloth started with inside a collider may still be as deep as its `allowance` (it is
/// leaving at the depenetration speed); only its depth beyond that counts.
pub fn deepest_unsqueezed(
    (x, p, w): (&[Vec3], &[Vec3], &[f32]),
    (squeezed, allowance): (&[bool], &[f32]),
    shapes: &[Shape],
    thickness: f32,
) -> Depths {
    let mut found = Depths::default();
    for (i, ((&q, &w), predicted)) in x.iter().zip(w).zip(p).enumerate() {
        if w == 0.0 || squeezed.get(i).copied().unwrap_or(false) {
            continue;
        }
        let (mut first, mut second, mut inside) = (f32::INFINITY, f32::INFINITY, 0);
        for (k, shape) in shapes.iter().enumerate() {
            let d = shape.signed_distance(q);
            if d < first {
                (first, second, inside) = (d, first, k);
            } else if d < second {
                second = d;
            }
        }
        if second <= thickness + DEPTH_SLACK {
            continue;
        }
        let depth = -first - allowance.get(i).copied().unwrap_or(0.0);
        if q != *predicted {
            found.capped_too_deep += u32::from(depth > thickness + DEPTH_SLACK);
        } else if depth > found.deepest.map_or(0.0, |(_, _, deepest)| deepest) {
            found.deepest = Some((i, inside, depth));
        }
    }
    found
}

/// The diagonal of the bounding box of `rest`, metres (0 for no points).
pub fn span(rest: &[Vec3]) -> f32 {
    let lo = rest.iter().fold(Vec3::INFINITY, |a, &b| a.min(b));
    let hi = rest.iter().fold(Vec3::NEG_INFINITY, |a, &b| a.max(b));
    if rest.is_empty() { 0.0 } else { lo.distance(hi) }
}

/// How far the furthest vertex hangs from the attached ones at rest: max over the vertices of the distance to
/// the nearest of `attached` (0 with none), metres.
pub fn hanging_length(rest: &[Vec3], attached: &[u32]) -> f32 {
    let anchors: Vec<Vec3> = attached.iter().filter_map(|&a| rest.get(a as usize).copied()).collect();
    rest.iter()
        .map(|q| anchors.iter().map(|a| a.distance_squared(*q)).fold(f32::INFINITY, f32::min))
        .filter(|d| d.is_finite())
        .fold(0.0, f32::max)
        .sqrt()
}

/// What decides whether a step resolves a cloth's stretch: the stretch bound holds a stiff cloth only where
/// the paper's solver can hold it at that step size (docs/reliability.md).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Resolution {
    /// How far the cloth hangs below its attachments at rest ([`hanging_length`]), metres.
    pub hang: f32,
    /// How far its fastest vertex moved per substep in this step, metres.
    pub travel: f32,
    /// |g|, m/s².
    pub gravity: f32,
    /// The cloth's largest extent at rest (its bounding box's diagonal), metres.
    pub span: f32,
    /// The most the air can accelerate the cloth, m/s²: air drag × (|wind| + 3 gust amplitudes) / density
    /// (line (5)'s drag per unit area over the mass per unit area). Its push differs from triangle to triangle
    /// with their normals, so unlike gravity it loads a free cloth too, across its whole span.
    pub air: f32,
    /// The substep Δt, seconds.
    pub dt: f32,
    /// A balloon whose pressure asks for more than its rest volume: stretched on purpose (§4.4).
    pub inflated: bool,
}

impl Resolution {
    /// Whether a cloth of stretch stiffness `k` with these rest edge lengths is resolved: not inflated, its
    /// fastest vertex travels at most one mean rest edge per substep (a collider stops a vertex that moved
    /// further, and the constraints cannot pass that on through the cloth within the substep), and PBD's own
    /// sag ([`pbd_sag`]) under gravity over its hang plus the air over its span is at most 1.
    pub fn resolves(&self, k: f32, rest: &[f32]) -> bool {
        let l0 = mean(rest);
        let sag = pbd_sag(self.hang, self.gravity, self.dt, k, l0) + pbd_sag(self.span, self.air, self.dt, k, l0);
        !self.inflated && self.travel <= l0 && sag <= 1.0
    }

    /// [`Self::resolves`] for an XPBD cloth of stretch compliance `alpha` (m/N) and `density` (kg/m²): the strain
    /// its compliance predicts ([`xpbd_strain`]) under gravity and the air over its span is added to the sag of a
    /// k = 1 cloth (the part the iterations leave, as the paper's solver does). Gravity loads the whole span, not
    /// only the hang below pins: a cloth resting on a collider carries the weight of its top down its sides (a
    /// free balloon of 1 m/N on the ground stretched 5.9×).
    pub fn resolves_compliant(&self, alpha: f32, density: f32, rest: &[f32]) -> bool {
        let load = self.gravity * self.hang.max(self.span) + self.air * self.span;
        let strain = xpbd_strain(1.0, load, alpha, density);
        let l0 = mean(rest);
        let sag = pbd_sag(self.hang, self.gravity, self.dt, 1.0, l0) + pbd_sag(self.span, self.air, self.dt, 1.0, l0);
        !self.inflated && self.travel <= l0 && sag + strain <= 1.0
    }
}

/// The mean of `values` (0 for none).
fn mean(values: &[f32]) -> f32 {
    values.iter().sum::<f32>() / values.len().max(1) as f32
}

/// The strain XPBD's compliance gives a cloth hanging `hang` metres below its attachments under acceleration `g`:
/// the top edge of a column carries the weight of the hang / l0 vertices below it, each of mass density · l0²,
/// and stretches by α times that tension: α · density · hang · g, whatever l0 and the time step.
pub fn xpbd_strain(hang: f32, g: f32, alpha: f32, density: f32) -> f32 {
    alpha.max(0.0) * density * hang * g
}

/// The strain PBD itself gives a cloth hanging `hang` metres below its attachments, with edges of rest length
/// `l0`, stiffness `k` (§3.3) and substep `dt` under gravity `g`: a column of hang / l0 edges whose top edge, like
/// a spring of stiffness k · m / Δt², carries the weight of every particle below it, hang · g · Δt² / (k · l0²).
/// Above 1 the paper's stiffness is soft at that time step whatever k is (XPBD's compliance is not).
pub fn pbd_sag(hang: f32, g: f32, dt: f32, k: f32, l0: f32) -> f32 {
    hang * g * dt * dt / (k.max(1e-6) * l0 * l0).max(1e-12)
}

/// max |l/l0 − 1| over the edges whose two vertices are both further than `margin` from every collider.
pub fn stretch_away_from(x: &[Vec3], edges: &[[u32; 2]], rest: &[f32], shapes: &[Shape], margin: f32) -> f32 {
    let clear = |i: u32| shapes.iter().all(|s| s.signed_distance(x[i as usize]) > margin);
    edges
        .iter()
        .zip(rest)
        .filter(|([a, b], _)| clear(*a) && clear(*b))
        .map(|([a, b], l0)| (x[*a as usize].distance(x[*b as usize]) / l0 - 1.0).abs())
        .fold(0.0, f32::max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use drape::sim::collide::swept::SurfaceHit;

    #[test]
    fn a_compliant_cloth_is_resolved_while_its_predicted_strain_is_small() {
        let hanging =
            Resolution { hang: 1.0, travel: 0.0, gravity: 9.81, span: 1.4, air: 0.0, dt: 1.0 / 960.0, inflated: false };
        let rest = [0.05; 4];
        // 1 m of 0.2 kg/m² cloth below its pins: 1e-3 m/N stretches 0.2 %, 1 m/N would be 196 % (over its 1.4 m
        // span, 275 %)
        assert!((xpbd_strain(1.0, 9.81, 1e-3, 0.2) - 0.001962).abs() < 1e-7);
        assert!(hanging.resolves_compliant(1e-3, 0.2, &rest));
        assert!(!hanging.resolves_compliant(1.0, 0.2, &rest));
        // a coarse step leaves an inextensible cloth unresolved too, as it does the paper's k = 1
        let coarse = Resolution { dt: 1.0 / 30.0, ..hanging };
        assert!(!coarse.resolves_compliant(0.0, 0.2, &rest) && !coarse.resolves(1.0, &rest));
    }

    #[test]
    fn furthest_move_finds_the_jump_and_skips_new_vertices() {
        let before = [Vec3::ZERO, Vec3::X];
        let after = [Vec3::new(0.0, 0.1, 0.0), Vec3::new(1.0, 0.0, 5.0), Vec3::splat(100.0)];
        assert_eq!(furthest_move(&before, &after), Some((1, 5.0)));
    }

    #[test]
    fn a_vertex_inside_one_collider_counts_and_a_squeezed_one_does_not() {
        let ground = Shape::Plane { point: Vec3::ZERO, normal: Vec3::Y };
        let ball = Shape::Sphere { center: Vec3::new(0.0, 0.45, 0.0), radius: 0.5 };
        let x = [Vec3::new(3.0, -0.2, 0.0), Vec3::new(0.0, -0.01, 0.0), Vec3::new(0.0, 2.0, 0.0)];
        let shapes = [ground, ball];
        let deepest = deepest_unsqueezed((&x, &x, &[1.0; 3]), (&[], &[]), &shapes, 0.01).deepest;
        assert_eq!(deepest.map(|(i, k, d)| (i, k, (d * 1e3).round())), Some((0, 0, 200.0)));
        let pinned = deepest_unsqueezed((&x, &x, &[0.0, 1.0, 1.0]), (&[], &[]), &shapes, 0.01);
        assert_eq!(pinned, Depths::default());
        // held to the speed cap: x stopped short of p
        let p = [Vec3::new(3.0, 0.02, 0.0), x[1], x[2]];
        let capped = deepest_unsqueezed((&x, &p, &[1.0; 3]), (&[], &[]), &shapes, 0.01);
        assert_eq!(capped, Depths { deepest: None, capped_too_deep: 1 });
        // pressed by two colliders' contacts from opposite sides
        let squeezed = deepest_unsqueezed((&x, &x, &[1.0; 3]), (&[true, false, false], &[]), &shapes, 0.01);
        assert_eq!(squeezed, Depths::default());
        // started 25 cm in the ground and leaving it: 20 cm deep is within its allowance
        let leaving = deepest_unsqueezed((&x, &x, &[1.0; 3]), (&[], &[0.25]), &shapes, 0.01);
        assert_eq!(leaving, Depths::default());
    }

    #[test]
    fn opposed_contacts_from_two_colliders_squeeze_a_vertex() {
        let hit = |normal: Vec3| SurfaceHit { point: Vec3::ZERO, normal, surface_shift: Vec3::ZERO };
        let contact = |vertex, collider, normal| Contact::surface(vertex, collider, hit(normal), 0.0, (0.0, 0.0));
        let contacts = [
            contact(0, 0, Vec3::Y),
            contact(0, 1, -Vec3::Y),
            contact(1, 0, Vec3::Y),
            contact(1, 1, Vec3::X),
            contact(2, 0, Vec3::Y),
            contact(2, 0, -Vec3::Y),
            contact(3, 2, Vec3::X),
            contact(3, 0, Vec3::Y),
            contact(3, 1, -Vec3::Y),
        ];
        assert_eq!(squeezed_by_contacts(5, &contacts), [true, false, false, true, false]);
    }

    #[test]
    fn stretch_is_measured_away_from_colliders_only() {
        let ground = Shape::Plane { point: Vec3::ZERO, normal: Vec3::Y };
        let x =
            [Vec3::new(0.0, 1.0, 0.0), Vec3::new(3.0, 1.0, 0.0), Vec3::new(0.0, 0.0, 0.0), Vec3::new(5.0, 0.0, 0.0)];
        let (edges, rest) = ([[0, 1], [2, 3]], [1.0, 1.0]);
        assert_eq!(stretch_away_from(&x, &edges, &rest, &[ground], 0.1), 2.0);
        assert_eq!(stretch_away_from(&x, &edges, &rest, &[], 0.1), 4.0);
    }

    #[test]
    fn the_hang_is_the_furthest_distance_to_the_nearest_attachment() {
        let rest: Vec<Vec3> = (0..5).map(|i| Vec3::new(0.0, -(i as f32), 0.0)).collect();
        assert_eq!(hanging_length(&rest, &[0]), 4.0);
        assert_eq!(hanging_length(&rest, &[0, 4]), 2.0);
        assert_eq!(hanging_length(&rest, &[]), 0.0, "free cloth: nothing hangs");
        assert_eq!(hanging_length(&rest, &[9]), 0.0, "an index past the end is no attachment");
    }

    #[test]
    fn a_step_resolves_a_short_fine_sheet_at_60_hz_but_not_at_10_hz() {
        // 1 m hanging, 5 cm edges, k = 1: sag 1 · 9.81 · Δt² / 0.0025
        let at = |hz: f32| Resolution {
            hang: 1.0,
            travel: 0.0,
            gravity: 9.81,
            span: 1.5,
            air: 0.0,
            dt: 1.0 / hz,
            inflated: false,
        };
        let rest = [0.05; 4];
        assert!((pbd_sag(1.0, 9.81, 1.0 / 60.0, 1.0, 0.05) - 1.09).abs() < 0.01);
        assert!(at(120.0).resolves(1.0, &rest) && !at(60.0).resolves(1.0, &rest) && !at(10.0).resolves(1.0, &rest));
        assert!(at(240.0).resolves(0.1, &rest) && !at(240.0).resolves(0.05, &rest), "sag grows as 1/k");
        assert!(!Resolution { travel: 0.06, ..at(240.0) }.resolves(1.0, &rest), "faster than an edge per substep");
        assert!(!Resolution { inflated: true, ..at(240.0) }.resolves(1.0, &rest));
        // a gale of 100 m/s on light cloth loads it like 25 g over its whole span
        assert!(!Resolution { hang: 0.0, air: 250.0, ..at(240.0) }.resolves(1.0, &rest));
    }
}
