//! The parallel solver (issue 6): colour-parallel projection, and several cloths projected side by side, give
//! bit-identical results to one thread, the steady step allocates nothing, and the pool really has more than one
//! thread to share.

use bevy::prelude::*;
use drape::headless::headless_app;
use drape::scene::desc::SceneDesc;
use drape::scene::preset;
use drape::scene::workloads::{grid_dihedral, grid_distance, with_parallel};
use drape::sim::cloth::Particles;

fn positions_after(desc: SceneDesc, frames: usize) -> Vec<Vec3> {
    let mut app = headless_app(desc);
    for _ in 0..frames {
        app.update();
    }
    app.world_mut().query::<&Particles>().iter(app.world()).flat_map(|p| p.x.clone()).collect()
}

#[test]
fn parallel_projection_is_bit_identical_to_single_threaded() {
    // the grids' colours are shared between the threads; the six pieces of Fig. 3 and the three sheets of
    // `layers` are projected side by side, a cloth on each thread
    let presets = ["bend_vs_stretch", "layers"].map(|name| preset::load(name).unwrap());
    for desc in [grid_distance(40), grid_dihedral(48).unwrap()].into_iter().chain(presets) {
        let one = positions_after(with_parallel(desc.clone(), false), 30);
        let all = positions_after(with_parallel(desc.clone(), true), 30);
        // the task pool exists now: on a multi-core machine the comparison really involved several threads
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        assert!(cores < 2 || drape::sim::parallel::solver_threads(true) >= 2);
        assert_eq!(one.len(), all.len());
        let moved = one.iter().zip(&positions_after(with_parallel(desc.clone(), false), 0)).any(|(a, b)| a != b);
        assert!(moved, "{}: nothing moved", desc.name);
        let differing = one.iter().zip(&all).filter(|(a, b)| a != b).count();
        assert_eq!(differing, 0, "{}: {differing} positions differ between 1 and all threads", desc.name);
    }
}
