//! The linear statics of a plane truss: the reference for XPBD's edges. An edge of compliance α (m/N) is a spring
//! of stiffness 1/α along it; at small strains the nodes' displacements u solve K u = f, with K assembled from
//! each edge's stiffness times the outer product of its direction (the textbook direct stiffness method).

use bevy::math::DVec2;

/// A plane truss: nodes, edges between them, fixed nodes and the loads on the others.
#[derive(Clone, Debug, Default)]
pub struct Truss {
    /// Node positions at rest, metres.
    pub nodes: Vec<DVec2>,
    /// Edges (node, node, compliance m/N).
    pub edges: Vec<(usize, usize, f64)>,
    /// Whether each node is held where it is.
    pub fixed: Vec<bool>,
    /// The load on each node, newtons.
    pub loads: Vec<DVec2>,
}

impl Truss {
    /// The displacement of every node (zero for fixed ones), or `None` if the free nodes are not held
    /// (a singular stiffness matrix).
    pub fn displacements(&self) -> Option<Vec<DVec2>> {
        let mut dof = vec![None; self.nodes.len()];
        let mut n = 0;
        for (i, slot) in dof.iter_mut().enumerate() {
            if !self.fixed.get(i).copied().unwrap_or(false) {
                *slot = Some(n);
                n += 2;
            }
        }
        let mut k = vec![vec![0.0; n]; n];
        let mut f = vec![0.0; n];
        for (i, load) in self.loads.iter().enumerate() {
            if let Some(Some(d)) = dof.get(i) {
                (f[*d], f[*d + 1]) = (load.x, load.y);
            }
        }
        for &(a, b, compliance) in &self.edges {
            let direction = (self.nodes[b] - self.nodes[a]).normalize();
            let outer = [direction.x * direction.x, direction.x * direction.y, direction.y * direction.y];
            let block = outer.map(|o| o / compliance);
            for (i, j, sign) in [(a, a, 1.0), (b, b, 1.0), (a, b, -1.0), (b, a, -1.0)] {
                if let (Some(r), Some(c)) = (dof[i], dof[j]) {
                    k[r][c] += sign * block[0];
                    k[r][c + 1] += sign * block[1];
                    k[r + 1][c] += sign * block[1];
                    k[r + 1][c + 1] += sign * block[2];
                }
            }
        }
        let u = solve(k, f)?;
        Some(dof.iter().map(|d| d.map_or(DVec2::ZERO, |d| DVec2::new(u[d], u[d + 1]))).collect())
    }

    /// Each edge's strain (l − l0)/l0 under the displacements `u`, to first order.
    pub fn strains(&self, u: &[DVec2]) -> Vec<f64> {
        (self.edges.iter())
            .map(|&(a, b, _)| {
                let rest = self.nodes[b] - self.nodes[a];
                (u[b] - u[a]).dot(rest) / rest.length_squared()
            })
            .collect()
    }
}

/// x with `a` x = `b` by Gaussian elimination with partial pivoting; `None` if `a` is singular.
fn solve(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Option<Vec<f64>> {
    let n = b.len();
    for col in 0..n {
        let pivot = (col..n).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[pivot][col].abs() < 1e-300 {
            return None;
        }
        a.swap(col, pivot);
        b.swap(col, pivot);
        for row in col + 1..n {
            let factor = a[row][col] / a[col][col];
            if factor != 0.0 {
                let (above, below) = a.split_at_mut(row);
                for (target, source) in below[0][col..].iter_mut().zip(&above[col][col..]) {
                    *target -= factor * source;
                }
                b[row] -= factor * b[col];
            }
        }
    }
    let mut x = vec![0.0; n];
    for row in (0..n).rev() {
        let rest: f64 = (row + 1..n).map(|c| a[row][c] * x[c]).sum();
        x[row] = (b[row] - rest) / a[row][row];
    }
    x.iter().all(|v| v.is_finite()).then_some(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hanging_chain_stretches_each_edge_by_its_compliance_times_the_weight_below() {
        // three edges down from a fixed node, 1 N on each free node: tensions 3, 2, 1 N; a level edge from each
        // free node to a fixed one holds it sideways and carries nothing
        let down = (0..4).map(|i| DVec2::new(0.0, -f64::from(i)));
        let truss = Truss {
            nodes: down.clone().chain(down.skip(1).map(|q| q + DVec2::X)).collect(),
            edges: vec![(0, 1, 0.01), (1, 2, 0.01), (2, 3, 0.01), (1, 4, 0.01), (2, 5, 0.01), (3, 6, 0.01)],
            fixed: vec![true, false, false, false, true, true, true],
            loads: vec![DVec2::NEG_Y; 7],
        };
        let u = truss.displacements().unwrap();
        assert!((u[3].y + 0.06).abs() < 1e-12, "{:?}", u[3]);
        let strains = truss.strains(&u);
        for (strain, tension) in strains.iter().zip([3.0, 2.0, 1.0, 0.0, 0.0, 0.0]) {
            assert!((strain - 0.01 * tension).abs() < 1e-12);
        }
    }

    #[test]
    fn a_node_no_edge_holds_is_singular() {
        let truss = Truss {
            nodes: vec![DVec2::ZERO, DVec2::X],
            edges: vec![],
            fixed: vec![true, false],
            loads: vec![DVec2::ZERO, DVec2::NEG_Y],
        };
        assert!(truss.displacements().is_none());
    }
}
