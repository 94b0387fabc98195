//! `energy`: an undamped pendulum sheet, pinned at one corner with no air and no damping, swings from level. A
//! projection can only take energy out (it moves particles toward the constraint, the velocity update keeps what
//! is left), so the sheet's kinetic plus potential energy must never rise above its start; the loss per second is
//! reported for PBD and XPBD at several substep counts.

use bevy::math::{Vec2, Vec3};

use super::{Check, Scorecard, grid_scene, largest, params, run_scene};
use drape::headless::scene_energy;
use drape::scene::desc::{PinSelector, Placement};
use drape::sim::cloth::ClothMaterial;
use drape::sim::params::Solver;

/// Gravity, m/s².
const G: f32 = 9.81;
/// The sheet's side, metres.
const SIDE: f32 = 0.5;
/// Steps run: 3 s.
const FRAMES: u32 = 180;
/// The largest rise of the energy over its start that passes, as a share of the start (f32 rounding).
const LARGEST_GAIN: f64 = 1e-3;

/// The largest rise of the energy over its start and the mean loss per second, both as shares of the start
/// (measured from the lowest point the sheet can reach), of the pendulum with `solver` at `iterations` ×
/// `substeps`.
pub fn swing(solver: Solver, counts: (u32, u32)) -> Result<(f64, f64), String> {
    let at = Vec3::new(0.0, 2.0, 0.0);
    let desc = grid_scene(
        "pendulum",
        params(solver, counts, 0.0, Vec3::NEG_Y * G),
        (10, 10, Vec2::splat(SIDE)),
        Placement { translation: at, ..Default::default() },
        vec![PinSelector::At { u: 0.0, v: 0.0 }],
        ClothMaterial::default(),
    );
    // the pinned corner is at (−side/2, y, −side/2): nothing hangs lower than a diagonal below it
    let floor = at.y - SIDE * 2f32.sqrt();
    let energies = run_scene(desc, FRAMES, true, |world, _| f64::from(scene_energy(world, floor)))?;
    let mass = SIDE * SIDE * ClothMaterial::default().density;
    let start = f64::from(mass * G * (at.y - floor));
    let gain = largest(energies.iter().map(|e| (e - start) / start));
    let last = energies.last().copied().unwrap_or(start);
    Ok((gain, (start - last) / start / (f64::from(FRAMES) / 60.0)))
}

/// PBD and XPBD at 1, 4 and 16 substeps of 4 iterations.
pub fn check(card: &mut Scorecard) {
    for (solver, label) in [(Solver::Pbd, "pbd"), (Solver::Xpbd, "xpbd")] {
        for substeps in [1, 4, 16] {
            let name = format!("energy/{label}/4x{substeps}");
            match swing(solver, (4, substeps)) {
                Ok((gain, loss)) => {
                    card.checks.push(Check::at_most(format!("{name}/largest_gain"), gain, LARGEST_GAIN));
                    card.report(format!("{name}/loss_per_second"), loss, "share of the start per second");
                }
                Err(e) => card.checks.push(Check::failed(name, &e)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_undamped_pendulum_sheet_never_gains_energy_and_loses_less_with_more_substeps() {
        let mut card = Scorecard::default();
        check(&mut card);
        assert_eq!(card.checks.len(), 6);
        assert!(card.passed(), "{:?}", card.checks);
        let losses: Vec<f64> = card.reports.iter().map(|r| r.value).collect();
        assert!(losses.iter().all(|&loss| loss > 0.0), "{losses:?}");
        assert!(losses[0] > losses[1] && losses[1] > losses[2], "PBD: {losses:?}");
    }
}
