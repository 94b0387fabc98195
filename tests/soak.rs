//! A few dozen random scenes of `drape soak` (fixed seed, no cost check: no test fails because the machine is
//! slow), with every invariant checked after every step.

use drape::soak::{SoakConfig, run};

#[test]
fn random_scenes_keep_the_invariants() {
    let config = SoakConfig { scenes: 32, frames: 120, seed: 1, threads: 2, out: None, cost: None };
    let summary = run(&config);
    assert!(summary.ran >= 24, "only {} of 32 scenes ran: the generator draws mostly refused scenes", summary.ran);
    assert!(summary.refused >= 1, "no scene was refused: the generator never crosses a documented range");
    let broken: Vec<String> =
        summary.failures.iter().map(|f| format!("scene {} (seed {}): {:?}", f.index, f.seed, f.violations)).collect();
    assert!(broken.is_empty(), "{}", broken.join("\n"));
    assert!(summary.max_stiff_stretch > 0.0, "no stiff held cloth had its stretch checked");
}
