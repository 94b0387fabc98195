//! Fig. 10's torn curtain stays on its pins and untangled after the ball's hit (issue 27): at half the preset's
//! substeps, where PBD's sag once tore it off its pinned row and it fell in a heap of some 100,000 edge–triangle
//! crossings, and with a tear threshold of 1.45, where the ball's hit brought it down in thousands. The preset's
//! slack tethers hold it (docs/reliability.md, "The torn curtain").

use drape::headless;
use drape::scene::desc::SceneDesc;
use drape::scene::preset;
use drape::sim::cloth::Particles;

/// What ten seconds of the edited `tearing` preset leave: (edge–triangle crossings of the curtain with itself, the
/// share of its vertices within 0.3 m of the floor, edges torn).
fn torn_curtain_after_ten_seconds(edit: impl FnOnce(&mut SceneDesc)) -> (usize, f32, usize) {
    let mut desc = preset::load("tearing").unwrap();
    edit(&mut desc);
    let (report, down) = headless::run_then(
        desc,
        600,
        |_| {},
        |world| {
            let mut cloths = world.query::<&Particles>();
            let particles = cloths.single(world).map_err(|e| e.to_string())?;
            let low = particles.x.iter().filter(|x| x.y < 0.3).count();
            Ok(low as f32 / particles.len() as f32)
        },
    )
    .unwrap();
    (report.self_intersections, down, report.torn_edges)
}

fn assert_up_and_untangled((crossings, down, torn): (usize, f32, usize), what: &str) {
    // the ball rips it: measured 115–181 torn edges at 2 substeps, 75–130 at 4
    assert!(torn > 50, "{what}: only {torn} edges torn");
    // measured: at most 0.1 % of the vertices low, 65 crossings over six throw times
    assert!(down < 0.10, "{what}: {:.0} % of the curtain lies on the floor", 100.0 * down);
    assert!(crossings < 1_000, "{what}: {crossings} crossings");
}

#[test]
fn at_two_substeps_the_torn_curtain_stays_up_and_untangled() {
    let outcome = torn_curtain_after_ten_seconds(|desc| desc.params.substeps = 2);
    assert_up_and_untangled(outcome, "2 substeps");
}

#[test]
fn with_threshold_1_45_the_torn_curtain_stays_up_and_untangled() {
    let outcome = torn_curtain_after_ten_seconds(|desc| desc.params.tear_threshold = 1.45);
    assert_up_and_untangled(outcome, "threshold 1.45");
}

#[test]
fn without_tethers_two_substeps_bring_it_down() {
    // the fact the preset's tethers answer: PBD alone does not carry the curtain at 2 substeps
    let (_, down, _) = torn_curtain_after_ten_seconds(|desc| {
        desc.params.substeps = 2;
        desc.params.tethers = false;
    });
    assert!(down > 0.5, "only {:.0} % of the curtain came down", 100.0 * down);
}
