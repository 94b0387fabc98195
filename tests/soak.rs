//! A few dozen random scenes of `drape soak` (fixed seed, no cost check: no test fails because the machine is
//! slow), with the invariants checked after every step.

use std::collections::BTreeSet;

use drape::soak::{SoakConfig, invariants::GUARANTEED, run};

/// Scenes of this run that still break a goal invariant (`penetration`, `stretch`), by index; listed with their
/// cause in docs/reliability.md. A scene failing outside this list, or any guaranteed invariant, fails the test.
const KNOWN: [u32; 2] = [7, 30];

#[test]
fn random_scenes_keep_the_invariants() {
    let config = SoakConfig { scenes: 32, frames: 120, seed: 1, threads: 2, out: None, cost: None };
    let summary = run(&config);
    assert!(summary.ran >= 24, "only {} of 32 scenes ran: the generator draws mostly refused scenes", summary.ran);
    assert!(summary.refused >= 1, "no scene was refused: the generator never crosses a documented range");
    for failure in &summary.failures {
        let broken: BTreeSet<_> = failure.violations.iter().map(|v| v.invariant).collect();
        assert!(
            !broken.iter().any(|b| GUARANTEED.contains(b)) && KNOWN.contains(&failure.index),
            "scene {} (seed {}) broke {broken:?}: {:?}",
            failure.index,
            failure.seed,
            failure.violations
        );
    }
}
