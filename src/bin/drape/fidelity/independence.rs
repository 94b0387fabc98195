//! `xpbd_independence`: XPBD's claim that its compliance is a material, whatever the iteration and substep counts
//! (Macklin et al. 2016), tested where it is hardest, on stiff edges: a heavy sheet hanging from its top row
//! with α = 10⁻⁶ and 10⁻⁴ m/N, its largest stretch at rest against its truss's ([`truss`](super::truss)) at
//! 1 × 40, 4 × 10 and 40 × 1 iterations × substeps. Checked with the stretch constraints solved together
//! (`SimParams::global_stretch`), which converge at every count; XPBD's Gauss–Seidel sweeps and the paper's PBD
//! with k = 1 at the same counts are reported for contrast: their stretch is whatever the passes leave.

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
    let sheet = |solver, compliance, counts, global| {
        let mut desc = hanging_sheet((cols, rows, size), (solver, compliance), DENSITY, counts);
        desc.params.global_stretch = global;
        hang(desc, (cols, rows, size), compliance.max(1e-6), 180)
    };
    for compliance in [1e-6f32, 1e-4] {
        for counts in COUNTS {
            let name = format!("xpbd_independence/alpha_{compliance:e}/{}x{}", counts.0, counts.1);
            card.checks.push(match sheet(Solver::Xpbd, compliance, counts, true) {
                Ok(h) => Check::new(name, h.strain.0, h.strain.1, TOLERANCE),
                Err(e) => Check::failed(name, &e),
            });
            if let Ok(h) = sheet(Solver::Xpbd, compliance, counts, false) {
                let name = format!("xpbd_independence/sweeps/alpha_{compliance:e}/{}x{}", counts.0, counts.1);
                card.report(name, h.strain.0, "strain");
            }
        }
    }
    for counts in COUNTS {
        if let Ok(h) = sheet(Solver::Pbd, 0.0, counts, false) {
            card.report(format!("xpbd_independence/pbd_k1/{}x{}", counts.0, counts.1), h.strain.0, "strain");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stiff_sheet_solved_together_stretches_as_its_truss_at_every_count() {
        let mut card = Scorecard::default();
        check(&mut card);
        assert_eq!(card.checks.len(), 6);
        for c in &card.checks {
            assert!(c.pass, "{c:?}");
        }
        // the sweeps alone fall short at α = 10⁻⁶ m/N: five or more times the truss's stretch at 40 × 1
        let sweeps = card.reports.iter().find(|r| r.name == "xpbd_independence/sweeps/alpha_1e-6/40x1");
        let truss = card.checks[2].reference;
        assert!(sweeps.is_some_and(|r| r.value > 5.0 * truss), "{sweeps:?}");
    }
}
