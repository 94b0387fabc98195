//! XPBD's stretch and bending constraints solved together. Macklin, Müller and Chentanez (2016) linearise the implicit step
//! into the system (J W Jᵀ + α̃) Δλ = −C − α̃λ (their eq. 11 with the geometric stiffness dropped) and then solve it
//! approximately, one constraint at a time by Gauss–Seidel. A Gauss–Seidel pass carries a correction one edge
//! along the cloth, so a stiff sheet hanging n rows needs of the order of n² passes before its top edge carries
//! the weight below it, and until then it stretches as the passes leave it (`drape fidelity`'s
//! `xpbd_independence`). Here each iteration takes the whole system instead: one Gauss–Newton step, its
//! linear system solved by conjugate gradients preconditioned by the diagonal, matrix-free (J and Jᵀ are
//! applied edge by edge). At rest the step meets C + α̃λ = 0 on every edge at once, so the stretch is the
//! compliance's at any iteration and substep count.

use bevy::math::Vec3;

use super::bend::{MAX_ANGLE_STEP, signed_dihedral};

/// The relative residual |r| / |b| at which the conjugate gradients stop: the next iteration's Gauss–Newton
/// step starts from what this one left, so an inexact solve only delays convergence.
const TOLERANCE: f64 = 1e-3;
/// The most conjugate-gradient iterations per Gauss–Newton step, each about one sweep of the constraints' work.
pub const MAX_ITERATIONS: usize = 100;
/// Levenberg–Marquardt damping μ: each row's diagonal grows by μ Σ w|∇C|², on top of α̃. A rigid mesh
/// (α̃ = 0) with more edges than freedoms makes J W Jᵀ singular and its system inconsistent where pins fight the
/// edges; undamped, the inexact step then moved some edges by their length and the speed cap shortened the moves.
/// The step's fixed point, C + α̃λ = 0, is unchanged: only its way there.
const DAMPING: f32 = 1e-4;

/// The systems of one cloth's constraints solved together, kept between steps so that a steady step allocates
/// nothing.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GlobalSystems {
    /// The stretch constraints' and the distance bending model's (two particles each).
    pub pairs: ConstraintSystem<2>,
    /// The dihedral bending constraints' (four particles each).
    pub hinges: ConstraintSystem<4>,
}

/// XPBD's linearised system over constraints of `K` particles each: (J W Jᵀ + α̃) Δλ = −C − α̃λ, one row per
/// constraint, filled by [`ConstraintSystem::push`] and solved by [`ConstraintSystem::solve`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ConstraintSystem<const K: usize> {
    /// Each row's particles, gradients ∇C and the inverse of its diagonal Σ wᵢ|∇ᵢC|² + α̃ (zero for a row that
    /// cannot move).
    rows: Vec<Row<K>>,
    /// Δλ, the solution.
    step: Vec<f32>,
    /// The residual r = b − A Δλ; b on entry.
    residual: Vec<f32>,
    /// The preconditioned residual z.
    preconditioned: Vec<f32>,
    /// The search direction d.
    direction: Vec<f32>,
    /// A d.
    product: Vec<f32>,
    /// Jᵀ of a row vector, one sum per particle.
    spread: Vec<Vec3>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct Row<const K: usize> {
    particles: [u32; K],
    gradients: [Vec3; K],
    inverse_diagonal: f32,
    /// What the row adds to its own diagonal beyond J W Jᵀ: α̃ and the [`DAMPING`].
    free: f32,
}

impl<const K: usize> Row<K> {
    /// How far moving every particle by W `spread` moves this row's C: its row of J W times `spread`.
    fn moved(&self, spread: &[Vec3], w: &[f32]) -> f32 {
        (self.particles.iter().zip(&self.gradients)).map(|(&i, g)| g.dot(spread[i as usize] * w[i as usize])).sum()
    }
}

impl<const K: usize> ConstraintSystem<K> {
    /// Empties the system for a cloth of `particles` particles.
    pub fn clear(&mut self, particles: usize) {
        self.rows.clear();
        self.residual.clear();
        self.spread.clear();
        self.spread.resize(particles, Vec3::ZERO);
    }

    /// Adds the row of a constraint on `particles` (each below the count given to [`clear`](Self::clear) and
    /// `w`'s length) with gradients ∇C, value C and multiplier λ so far, compliance α̃. A row no particle can
    /// move, or with no gradient, is kept as zero: rows and multipliers stay in step.
    pub fn push(
        &mut self,
        particles: [u32; K],
        gradients: [Vec3; K],
        (c, lambda): (f32, f32),
        w: &[f32],
        alpha_tilde: f32,
    ) {
        let valid = particles.iter().all(|&i| (i as usize) < self.spread.len().min(w.len()));
        let weight: f32 = if valid {
            particles.iter().zip(&gradients).map(|(&i, g)| w[i as usize] * g.length_squared()).sum()
        } else {
            0.0
        };
        let free = alpha_tilde + DAMPING * weight;
        let diagonal = weight + free;
        let row = if valid && weight > 0.0 && diagonal.is_finite() && c.is_finite() {
            self.residual.push(-c - alpha_tilde * lambda);
            Row { particles, gradients, inverse_diagonal: 1.0 / diagonal, free }
        } else {
            self.residual.push(0.0);
            Row { particles: [0; K], gradients: [Vec3::ZERO; K], inverse_diagonal: 0.0, free: 0.0 }
        };
        self.rows.push(row);
    }

    /// Solves the system pushed since [`clear`](Self::clear) for Δλ, adds it to `lambda` (one per row) and moves
    /// `p` by W Jᵀ Δλ, the whole step scaled down where it would move some constraint's C by more than `most`
    /// (a damped Newton step: the linearisation of a hinge holds for small turns only).
    pub fn solve(&mut self, (p, w): (&mut [Vec3], &[f32]), most: f32, lambda: &mut [f32]) {
        let m = self.rows.len();
        if self.spread.len() > p.len().min(w.len()) || lambda.len() < m {
            debug_assert!(false, "the system was filled for other particles or multipliers");
            return;
        }
        for v in [&mut self.step, &mut self.preconditioned, &mut self.direction, &mut self.product] {
            v.clear();
            v.resize(m, 0.0);
        }
        self.conjugate_gradients(w);
        self.spread_of(Vector::Step);
        // damped where the linearisation reaches far: no constraint's C moves by more than `most`
        let farthest = self.rows.iter().map(|row| row.moved(&self.spread, w).abs()).fold(0.0, f32::max);
        let scale = if farthest > most { most / farthest } else { 1.0 };
        for (lambda, step) in lambda.iter_mut().zip(&self.step) {
            *lambda += step * scale;
        }
        for ((p, w), spread) in p.iter_mut().zip(w).zip(&self.spread) {
            *p += *spread * (*w * scale);
        }
    }

    /// Solves A Δλ = b for A = J W Jᵀ + α̃ I + μ diag(J W Jᵀ) ([`DAMPING`]), b the residual on entry, Δλ into
    /// `step`.
    fn conjugate_gradients(&mut self, w: &[f32]) {
        let goal = TOLERANCE * TOLERANCE * dot(&self.residual, &self.residual);
        if goal == 0.0 {
            return;
        }
        self.precondition();
        self.direction.copy_from_slice(&self.preconditioned);
        let mut rz = dot(&self.residual, &self.preconditioned);
        for _ in 0..MAX_ITERATIONS {
            self.apply(w);
            let curvature = dot(&self.direction, &self.product);
            if curvature <= 0.0 || !curvature.is_finite() {
                break;
            }
            let a = (rz / curvature) as f32;
            let moves = self.direction.iter().zip(&self.product);
            for ((x, r), (d, q)) in self.step.iter_mut().zip(&mut self.residual).zip(moves) {
                *x += a * d;
                *r -= a * q;
            }
            if dot(&self.residual, &self.residual) <= goal {
                break;
            }
            self.precondition();
            let next = dot(&self.residual, &self.preconditioned);
            let beta = (next / rz) as f32;
            rz = next;
            for (d, z) in self.direction.iter_mut().zip(&self.preconditioned) {
                *d = z + beta * *d;
            }
        }
    }

    fn precondition(&mut self) {
        for ((z, r), row) in self.preconditioned.iter_mut().zip(&self.residual).zip(&self.rows) {
            *z = r * row.inverse_diagonal;
        }
    }

    /// `product` := A `direction`.
    fn apply(&mut self, w: &[f32]) {
        self.spread_of(Vector::Direction);
        for ((product, row), d) in self.product.iter_mut().zip(&self.rows).zip(&self.direction) {
            *product = row.moved(&self.spread, w) + row.free * d;
        }
    }

    /// `spread` := Jᵀ of the row vector `which`.
    fn spread_of(&mut self, which: Vector) {
        self.spread.fill(Vec3::ZERO);
        let values = match which {
            Vector::Step => &self.step,
            Vector::Direction => &self.direction,
        };
        for (row, value) in self.rows.iter().zip(values) {
            for (&i, g) in row.particles.iter().zip(&row.gradients) {
                self.spread[i as usize] += *g * *value;
            }
        }
    }
}

/// One Gauss–Newton step of XPBD's system of distance constraints between `pairs` of particles (stretch, or the
/// distance bending model's opposite vertices) with `rest` distances, time-scaled compliance `alpha_tilde` and
/// multipliers `lambda` (one per pair): C = |pᵢ − pⱼ| − l0, ∇ᵢC = −∇ⱼC the unit vector from j to i (eq. 10).
pub fn solve_distances(
    system: &mut ConstraintSystem<2>,
    (p, w): (&mut [Vec3], &[f32]),
    (pairs, rest): (impl Iterator<Item = [u32; 2]>, &[f32]),
    alpha_tilde: f32,
    lambda: &mut [f32],
) {
    system.clear(p.len().min(w.len()));
    for (([i, j], &rest), &lambda) in pairs.zip(rest).zip(lambda.iter()) {
        let (a, b) = (p.get(i as usize).copied(), p.get(j as usize).copied());
        let d = a.zip(b).map_or(Vec3::ZERO, |(a, b)| a - b);
        let length = d.length();
        let n = if length > f32::EPSILON { d / length } else { Vec3::ZERO };
        system.push([i, j], [n, -n], (length - rest, lambda), w, alpha_tilde);
    }
    system.solve((p, w), f32::INFINITY, lambda);
}

/// One Gauss–Newton step of XPBD's system of dihedral bending constraints (§4.1) on `quads` with rest angles
/// `rest_angle`, signed so that they are smooth through the flat state (`bend::signed_dihedral`).
pub fn solve_hinges(
    system: &mut ConstraintSystem<4>,
    (p, w): (&mut [Vec3], &[f32]),
    (quads, rest_angle): (&[[u32; 4]], &[f32]),
    alpha_tilde: f32,
    lambda: &mut [f32],
) {
    system.clear(p.len().min(w.len()));
    for ((&quad, &rest), &lambda) in quads.iter().zip(rest_angle).zip(lambda.iter()) {
        let corners = quad.map(|i| p.get(i as usize).copied());
        let row = corners.iter().all(Option::is_some).then(|| corners.map(Option::unwrap_or_default));
        let (c, gradients) = row.and_then(|corners| signed_dihedral(corners, rest)).unwrap_or_default();
        system.push(quad, gradients, (c, lambda), w, alpha_tilde);
    }
    system.solve((p, w), MAX_ANGLE_STEP, lambda);
}

/// Which row vector [`ConstraintSystem::spread_of`] spreads.
#[derive(Clone, Copy)]
enum Vector {
    Step,
    Direction,
}

fn dot(a: &[f32], b: &[f32]) -> f64 {
    a.iter().zip(b).map(|(a, b)| f64::from(*a) * f64::from(*b)).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::constraints::access::Slices;
    use crate::sim::constraints::response::Compliance;
    use crate::sim::constraints::stretch::sweep_stretch;

    /// A vertical chain of `n` edges of 0.1 m with 0.1 kg particles, its top pinned: positions, inverse masses,
    /// edges and rest lengths.
    fn chain(n: usize) -> (Vec<Vec3>, Vec<f32>, Vec<[u32; 2]>, Vec<f32>) {
        let x = (0..=n).map(|k| Vec3::NEG_Y * 0.1 * k as f32).collect();
        let w = (0..=n).map(|k| if k == 0 { 0.0 } else { 10.0 }).collect();
        let edges = (0..n as u32).map(|k| [k, k + 1]).collect();
        (x, w, edges, vec![0.1; n])
    }

    /// The chain of `n` edges after `steps` substeps of `dt` under gravity, each projected by `project` (given
    /// the predictions, the inverse masses and λ, zeroed each substep); then each edge's stretch and what its
    /// compliance α gives it under the weight below, α · m_below · g, metres.
    fn hang(
        n: usize,
        (steps, dt): (usize, f32),
        alpha: f32,
        mut project: impl FnMut(&mut [Vec3], &[f32], &mut [f32]),
    ) -> Vec<(f32, f32)> {
        let (mut x, w, edges, _) = chain(n);
        let mut v = vec![Vec3::ZERO; x.len()];
        let mut lambda = vec![0.0; n];
        for _ in 0..steps {
            let mut p: Vec<Vec3> = x
                .iter()
                .zip(&v)
                .zip(&w)
                .map(|((x, v), w)| if *w > 0.0 { *x + *v * dt + Vec3::NEG_Y * 9.81 * dt * dt } else { *x })
                .collect();
            lambda.fill(0.0);
            project(&mut p, &w, &mut lambda);
            for ((x, v), p) in x.iter_mut().zip(&mut v).zip(&p) {
                *v = (*p - *x) / dt;
                *x = *p;
            }
        }
        (0..n)
            .map(|e| {
                let [i, j] = edges[e].map(|v| v as usize);
                ((x[i] - x[j]).length() - 0.1, alpha * 0.1 * (n - e) as f32 * 9.81)
            })
            .collect()
    }

    #[test]
    fn a_stiff_hanging_chain_stretches_by_its_compliance_where_sweeps_fall_short() {
        let (n, dt, alpha) = (20, 1.0 / 60.0, 1e-6);
        let alpha_tilde = alpha / (dt * dt);
        let (_, _, edges, rest) = chain(n);
        let mut system = ConstraintSystem::default();
        // two iterations a substep, for 5 s: each edge carries the weight below it
        let solved = hang(n, (300, dt), alpha, |p, w, lambda| {
            for _ in 0..2 {
                solve_distances(&mut system, (p, w), (edges.iter().copied(), &rest), alpha_tilde, lambda);
            }
        });
        // (within 2 % and two roundings of the positions, 1.2 · 10⁻⁷ m each down to 2 m)
        for (e, (stretch, expected)) in solved.iter().enumerate() {
            assert!((stretch - expected).abs() < 0.02 * expected + 2.4e-7, "edge {e}: {stretch} for {expected}");
        }
        // 20 Gauss–Seidel sweeps a substep leave the chain several times stretchier
        let swept = hang(n, (300, dt), alpha, |p, w, lambda| {
            for _ in 0..20 {
                let mut r = Compliance { alpha: alpha_tilde, lambda: &mut *lambda, most: f32::INFINITY };
                sweep_stretch(&mut Slices { p: &mut *p, w }, &edges, &rest, &mut r);
            }
        });
        let (stretch, expected) = swept[0];
        assert!(stretch > 3.0 * expected, "the sweeps' top edge: {stretch} for {expected}");
    }

    #[test]
    fn a_rigid_sheet_its_pins_overstretch_is_not_thrown() {
        // a 6 × 6 sheet of 0.1 m quads with both diagonals, rigid (α̃ = 0): more edges than freedoms, and its four
        // corners pinned 5 % further apart than its edges reach, so no step can meet every edge
        let n = 7;
        let at = |i: usize, j: usize| (i * n + j) as u32;
        let mut p: Vec<Vec3> = (0..n * n).map(|k| Vec3::new((k / n) as f32, 0.0, (k % n) as f32) * 0.1).collect();
        let mut edges = Vec::new();
        for i in 0..n {
            for j in 0..n {
                if i + 1 < n {
                    edges.push([at(i, j), at(i + 1, j)]);
                }
                if j + 1 < n {
                    edges.push([at(i, j), at(i, j + 1)]);
                }
                if i + 1 < n && j + 1 < n {
                    edges.push([at(i, j), at(i + 1, j + 1)]);
                    edges.push([at(i + 1, j), at(i, j + 1)]);
                }
            }
        }
        let rest: Vec<f32> = edges.iter().map(|[a, b]| p[*a as usize].distance(p[*b as usize])).collect();
        let centre = Vec3::new(0.3, 0.0, 0.3);
        let mut w = vec![1.0; n * n];
        for corner in [at(0, 0), at(0, n - 1), at(n - 1, 0), at(n - 1, n - 1)] {
            let c = corner as usize;
            p[c] = centre + (p[c] - centre) * 1.05;
            w[c] = 0.0;
        }
        let (mut system, mut lambda) = (ConstraintSystem::default(), vec![0.0; edges.len()]);
        for iteration in 0..20 {
            let before = p.clone();
            solve_distances(&mut system, (&mut p, &w), (edges.iter().copied(), &rest), 0.0, &mut lambda);
            let moved = p.iter().zip(&before).map(|(a, b)| a.distance(*b)).fold(0.0, f32::max);
            // the corners reach 2.1 cm further than the edges: no vertex needs to move further than that
            assert!(moved < 0.03, "iteration {iteration}: a vertex moved {moved} m");
        }
    }

    #[test]
    fn the_step_conserves_momentum_and_leaves_a_met_system_alone() {
        let (dt, alpha) = (1.0 / 600.0, 1e-4);
        let (at_rest, mut w, edges, rest) = chain(6);
        w[0] = 10.0;
        let mut p: Vec<Vec3> = at_rest.iter().enumerate().map(|(k, x)| *x * (1.0 + 0.1 * k as f32)).collect();
        let before = p.clone();
        let mut lambda = vec![0.0; edges.len()];
        let mut system = ConstraintSystem::default();
        solve_distances(&mut system, (&mut p, &w), (edges.iter().copied(), &rest), alpha / (dt * dt), &mut lambda);
        // every particle free and equally heavy: the corrections sum to zero
        let moved: Vec3 = p.iter().zip(&before).map(|(a, b)| *a - *b).sum();
        assert!(moved.length() < 1e-6, "{moved}");
        // a chain at its rest lengths with λ = 0 is already met: it stays to the rounding
        let mut q = at_rest.clone();
        let mut lambda = vec![0.0; edges.len()];
        solve_distances(&mut system, (&mut q, &w), (edges.iter().copied(), &rest), 1.0, &mut lambda);
        for (q, x) in q.iter().zip(&at_rest) {
            assert!(q.distance(*x) < 1e-7, "{q} {x}");
        }
    }
}
