//! `xpbd_independence`: XPBD's claim that its compliance is a material, whatever the iteration and substep counts
//! (Macklin et al. 2016), tested where it is hardest, on stiff edges: a heavy sheet hanging from its top row
//! with α = 10⁻⁶ and 10⁻⁴ m/N, its largest stretch at rest against its truss's ([`truss`](super::truss)) at
//! 1 × 40, 4 × 10 and 40 × 1 iterations × substeps. The paper's PBD with k = 1 at the same counts is reported for
//! contrast: its stretch is whatever the iterations leave.

use bevy::math::Vec2;

use super::tensile::{hang, hanging_sheet};
use super::{Check, Scorecard};
use drape::sim::params::Solver;

/// The sheet: 1 m × 1 m, 10 × 10 quads, 10 kg/m².
const SHEET: (u32, u32, f32) = (10, 10, 1.0);
/// Areal density, kg/m².
const DENSITY: f32 = 10.0;
/// Iterations × substeps compared.
const COUNTS: [(u32, u32); 3] = [(1, 40), (4, 10), (40, 1)];
/// Largest relative error of the largest stretch.
const TOLERANCE: f64 = 0.05;

/// The stiff sheets at each count.
pub fn check(card: &mut Scorecard) {
    let (cols, rows, side) = SHEET;
    let size = Vec2::splat(side);
    for compliance in [1e-6f32, 1e-4] {
        for counts in COUNTS {
            let name = format!("xpbd_independence/alpha_{compliance:e}/{}x{}", counts.0, counts.1);
            let desc = hanging_sheet((cols, rows, size), (Solver::Xpbd, compliance), DENSITY, counts);
            card.checks.push(match hang(desc, (cols, rows, size), compliance, 180) {
                Ok(h) => Check::new(name, h.strain.0, h.strain.1, TOLERANCE),
                Err(e) => Check::failed(name, &e),
            });
        }
    }
    for counts in COUNTS {
        let desc = hanging_sheet((cols, rows, size), (Solver::Pbd, 0.0), DENSITY, counts);
        if let Ok(h) = hang(desc, (cols, rows, size), 1e-6, 180) {
            card.report(format!("xpbd_independence/pbd_k1/{}x{}", counts.0, counts.1), h.strain.0, "strain");
        }
    }
}
