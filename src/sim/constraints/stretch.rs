//! Stretching constraints C = |p1 − p2| − l0 (§4.1), projected by eq. (10)–(11).

#[cfg(test)]
use bevy::math::Vec3;
use bevy::math::Vec4;

use super::access::ParticleAccess;
#[cfg(test)]
use super::access::Slices;
use super::response::Response;
#[cfg(test)]
use super::response::Stiffness;
use crate::sim::lanes::{LANES, Vec3x4, inverse_masses};

/// Projects one distance constraint between particles `i` and `j` with rest length `rest` and (linearised)
/// stiffness `k`: eq. (10)–(11), the special case of eq. (8)–(9) for C = |p_i − p_j| − d.
#[cfg(test)]
#[inline]
pub fn project_distance(p: &mut impl ParticleAccess, i: usize, j: usize, rest: f32, k: f32) {
    respond_distance(p, (i, j), rest, &mut Stiffness(k), 0);
}

/// [`project_distance`] with any [`Response`]; `at` is the constraint's index for it.
#[inline(always)]
fn respond_distance(p: &mut impl ParticleAccess, (i, j): (usize, usize), rest: f32, r: &mut impl Response, at: usize) {
    let (wi, wj) = (p.w(i), p.w(j));
    let w_sum = wi + wj;
    if w_sum <= 0.0 {
        return;
    }
    let d = p.p(i) - p.p(j);
    let len = d.length();
    // a constraint met to within the positions' rounding is left alone (`integrate::rounding_tolerance`)
    if len <= f32::EPSILON || r.residual(at, len - rest).abs() < p.rounding() {
        return;
    }
    let correction = d * r.distance_factor(at, len - rest, len, w_sum);
    p.shift(i, -correction * wi);
    p.shift(j, correction * wj);
}

/// The moves of [`project_distance`] for four constraints of one colour at once, lane by lane the same
/// arithmetic (see [`crate::sim::lanes`]): particles `i[lane]` and `j[lane]` are the ends of lane `lane`'s
/// constraint, and are to move by lane `lane` of the two results.
#[inline(always)]
fn distance_moves_x4(
    p: &impl ParticleAccess,
    (i, j): Ends,
    rest: [f32; LANES],
    (r, at): (&mut impl Response, usize),
) -> (Vec3x4, Vec3x4) {
    let (wi, wj) = (inverse_masses(p, i), inverse_masses(p, j));
    let w_sum = wi + wj;
    let d = Vec3x4::positions(p, i) - Vec3x4::positions(p, j);
    let len = d.length_squared().sqrt();
    let error = len - Vec4::from_array(rest);
    let met = r.residual_x4(at, error).abs().cmplt(Vec4::splat(p.rounding()));
    let moves = !(w_sum.cmple(Vec4::ZERO) | len.cmple(Vec4::splat(f32::EPSILON)) | met);
    // a constraint that must not move gets a zero correction (as the scalar kernel returns early)
    let factor = r.distance_factor_x4(at, error, len, w_sum, moves);
    let correction = d.scale(factor);
    (correction.scale(-wi), correction.scale(wj))
}

/// Moves the ends of four constraints by [`distance_moves_x4`]'s result.
#[inline(always)]
fn apply_x4(p: &mut impl ParticleAccess, (i, j): Ends, (to_i, to_j): (Vec3x4, Vec3x4)) {
    // constant lanes: a lane picked at run time is read back through the stack
    for lane in 0..LANES {
        p.shift(i[lane], to_i.lane(lane));
        p.shift(j[lane], to_j.lane(lane));
    }
}

/// The two end particles of four distance constraints, lane by lane.
type Ends = ([usize; LANES], [usize; LANES]);

/// One Gauss–Seidel sweep of distance constraints between the particles `ends(item)` of each of `items`, with
/// rest lengths `rest`, in array order — eight at a time: two groups of four in [`Vec4`] lanes, the second's
/// square roots and divisions overlapping the first's. The items must be of one colour (no two share a
/// particle); then this gives exactly the result of projecting them one after another (tested).
#[inline(always)]
pub fn sweep_distances<T>(
    p: &mut impl ParticleAccess,
    items: &[T],
    rest: &[f32],
    r: &mut impl Response,
    ends: impl Fn(&T) -> [u32; 2],
) {
    let n = items.len().min(rest.len());
    let group_ends = |group: &[T; LANES]| -> Ends {
        let [a, b, c, d] = [&group[0], &group[1], &group[2], &group[3]].map(|item| ends(item).map(|i| i as usize));
        ([a[0], b[0], c[0], d[0]], [a[1], b[1], c[1], d[1]])
    };
    let ((groups, item_tail), (rests, rest_tail)) = (items[..n].as_chunks::<LANES>(), rest[..n].as_chunks::<LANES>());
    let ((pairs, odd_group), (rest_pairs, odd_rest)) = (groups.as_chunks::<2>(), rests.as_chunks::<2>());
    for (pair, ([a, b], [rest_a, rest_b])) in pairs.iter().zip(rest_pairs).enumerate() {
        let (ends_a, ends_b) = (group_ends(a), group_ends(b));
        let at = 2 * LANES * pair;
        let moves_a = distance_moves_x4(p, ends_a, *rest_a, (&mut *r, at));
        let moves_b = distance_moves_x4(p, ends_b, *rest_b, (&mut *r, at + LANES));
        apply_x4(p, ends_a, moves_a);
        apply_x4(p, ends_b, moves_b);
    }
    let at = 2 * LANES * pairs.len();
    for (group, rest) in odd_group.iter().zip(odd_rest) {
        let ends = group_ends(group);
        let moves = distance_moves_x4(p, ends, *rest, (&mut *r, at));
        apply_x4(p, ends, moves);
    }
    let at = LANES * groups.len();
    for (t, (item, &l0)) in item_tail.iter().zip(rest_tail).enumerate() {
        let [a, b] = ends(item);
        respond_distance(p, (a as usize, b as usize), l0, r, at + t);
    }
}

/// One Gauss–Seidel sweep over the stretch constraints `edges` with rest lengths `rest`, in array order; the
/// constraints must be of one colour ([`sweep_distances`]).
#[inline]
pub fn sweep_stretch(p: &mut impl ParticleAccess, edges: &[[u32; 2]], rest: &[f32], r: &mut impl Response) {
    sweep_distances(p, edges, rest, r, |&edge| edge);
}

/// One Gauss–Seidel sweep over all stretch constraints, in array order, with the paper's stiffness `k`.
#[cfg(test)]
pub fn project_stretch(p: &mut [Vec3], w: &[f32], edges: &[[u32; 2]], rest: &[f32], k: f32) {
    sweep_stretch(&mut Slices { p, w }, edges, rest, &mut Stiffness(k));
}

#[cfg(test)]
mod tests {
    use super::super::momentum;
    use super::*;

    #[test]
    fn full_stiffness_restores_rest_length_in_one_projection() {
        let mut p = vec![Vec3::ZERO, Vec3::new(2.0, 1.0, 0.5)];
        project_stretch(&mut p, &[1.0, 3.0], &[[0, 1]], &[1.0], 1.0);
        assert!((p[0].distance(p[1]) - 1.0).abs() < 1e-6);
    }

    #[test]
    fn conserves_linear_and_angular_momentum_with_unequal_masses() {
        let mass = [0.3f32, 2.0, 0.7];
        let w: Vec<f32> = mass.iter().map(|m| 1.0 / m).collect();
        let mut p = vec![Vec3::new(0.1, 0.2, 0.3), Vec3::new(1.7, -0.4, 0.9), Vec3::new(-0.5, 1.1, 0.2)];
        // each projection of a Gauss–Seidel sweep conserves both momenta (eq. 1–2)
        for (&[a, b], &rest) in [[0u32, 1], [1, 2], [2, 0]].iter().zip(&[1.0f32, 0.4, 2.5]) {
            let before = p.clone();
            project_stretch(&mut p, &w, &[[a, b]], &[rest], 0.8);
            assert!(before.iter().zip(&p).any(|(x, y)| x.distance(*y) > 0.05), "the projection moved nothing");
            let (linear, angular) = momentum::change(&before, &p, &mass);
            assert!(linear.length() < 1e-5, "linear momentum change {linear}");
            assert!(angular.length() < 1e-5, "angular momentum change {angular}");
        }
    }

    #[test]
    fn four_at_a_time_gives_the_bits_of_one_at_a_time() {
        // thirteen disjoint edges (a pair of groups of four, a single group and a tail), one of them pinned at both
        // ends, one degenerate
        let mut p: Vec<Vec3> =
            (0..26).map(|i| Vec3::new((i * 7 % 5) as f32 * 0.31, i as f32 * 0.17, 0.05 * (i * i) as f32)).collect();
        p[9] = p[8];
        let mut w: Vec<f32> = (0..26).map(|i| 0.5 + (i % 4) as f32).collect();
        w[2] = 0.0;
        w[3] = 0.0;
        let edges: Vec<[u32; 2]> = (0..13).map(|e| [2 * e, 2 * e + 1]).collect();
        let rest: Vec<f32> = (0..13).map(|e| 0.2 + 0.1 * e as f32).collect();
        let mut one_by_one = p.clone();
        for (&[a, b], &l0) in edges.iter().zip(&rest) {
            project_distance(&mut Slices { p: &mut one_by_one, w: &w }, a as usize, b as usize, l0, 0.7);
        }
        project_stretch(&mut p, &w, &edges, &rest, 0.7);
        assert_eq!(p, one_by_one);
        assert!(p.iter().all(|v| v.is_finite()));
    }

    /// Edges 2 m from the origin, each longer than its rest length by `error`, swept `edges` at a time (one: the
    /// scalar tail; four: a packed group) by XPBD with a zero compliance and the rounding tolerance of coordinates of
    /// 3 m: whether each moved, and its multiplier.
    fn sweep_near_the_rounding(error: f32, edges: usize) -> Vec<(bool, f32)> {
        use super::super::access::SharedParticles;
        use super::super::response::Compliance;
        let start: Vec<Vec3> = (0..2 * edges).map(|i| Vec3::new(2.0, (i % 2) as f32, 0.1 * (i / 2) as f32)).collect();
        let (mut p, w) = (start.clone(), vec![1.0; 2 * edges]);
        let pairs: Vec<[u32; 2]> = (0..edges as u32).map(|e| [2 * e, 2 * e + 1]).collect();
        let (rest, mut lambda) = (vec![1.0 - error; edges], vec![0.0; edges]);
        // SAFETY: one thread, every index below the particles' count
        let mut view = unsafe { SharedParticles::new(&mut p, &w) }
            .unwrap()
            .with_rounding(crate::sim::integrate::rounding_tolerance(3.0));
        sweep_stretch(
            &mut view,
            &pairs,
            &rest,
            &mut Compliance { alpha: 0.0, lambda: &mut lambda, most: f32::INFINITY },
        );
        (0..edges).map(|e| (p[2 * e] != start[2 * e] || p[2 * e + 1] != start[2 * e + 1], lambda[e])).collect()
    }

    /// A constraint met to within eight rounding steps of the coordinates (2.9 µm at 3 m) is left alone, and XPBD
    /// keeps no multiplier for it, so the solver does not round rigid cloth back and forth (`integrate::rounding_tolerance`);
    /// a larger error is corrected in full.
    #[test]
    fn a_constraint_met_to_the_rounding_is_left_alone_and_keeps_no_multiplier() {
        for edges in [1, 4] {
            assert!(sweep_near_the_rounding(1e-6, edges).iter().all(|&(moved, lambda)| !moved && lambda == 0.0));
            assert!(sweep_near_the_rounding(1e-5, edges).iter().all(|&(moved, lambda)| moved && lambda < 0.0));
        }
    }

    #[test]
    fn pinned_particle_does_not_move() {
        let mut p = vec![Vec3::ZERO, Vec3::X * 3.0];
        project_stretch(&mut p, &[0.0, 1.0], &[[0, 1]], &[1.0], 1.0);
        assert_eq!(p[0], Vec3::ZERO);
        assert!((p[1].x - 1.0).abs() < 1e-6);
    }

    #[test]
    fn coincident_particles_stay_finite() {
        let mut p = vec![Vec3::ONE, Vec3::ONE];
        project_stretch(&mut p, &[1.0, 1.0], &[[0, 1]], &[1.0], 1.0);
        assert!(p.iter().all(|q| q.is_finite()));
    }
}
