//! No allocation in the steady solver step (issue 6), proven with a counting global allocator: after warm-up,
//! running the substep schedule (lines (5)–(16): forces, damping, prediction, collisions with contacts,
//! projection, velocities, friction) allocates nothing on one thread. On the task pool, the only allocations
//! are the pool's own per-call bookkeeping (a scope and its tasks): a small constant per stage call, whatever the
//! size of the cloth.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use drape::bench::with_parallel;
use drape::headless::headless_app;
use drape::scene::preset;
use drape::sim::PbdSubstep;

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator, only counting.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations per substep of `preset` at `n`×`n` quads, after two simulated seconds of warm-up.
fn allocations_per_substep(preset_name: &str, n: u32, parallel: bool) -> usize {
    let mut desc = with_parallel(preset::load(preset_name).unwrap(), parallel);
    for c in &mut desc.cloths {
        if let drape::scene::desc::ClothShape::Grid { cols, rows, .. } = &mut c.shape {
            (*cols, *rows) = (n, n);
        }
    }
    let mut app = headless_app(desc);
    for _ in 0..120 {
        app.update();
    }
    let substeps = 50;
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    for _ in 0..substeps {
        app.world_mut().run_schedule(PbdSubstep);
    }
    (ALLOCATIONS.load(Ordering::Relaxed) - before) / substeps
}

/// Allocations of one `ComputeTaskPool::scope` with its tasks, including the task that keeps the pool thread
/// awake for the next scope (`drape::sim::parallel`); docs/performance.md, "Allocation", has the counts.
const ALLOCATIONS_PER_SCOPE: usize = 4;
/// Stage calls per substep that open a pool scope on a large cloth: the collider contact search, the air drag,
/// the damping (from 4,096 particles) and the projection (at 16² the contact search and the air drag's colours
/// are one slice or chunk each and the damping runs on the calling thread).
const SCOPES_PER_SUBSTEP: usize = 4;

#[test]
fn steady_substeps_do_not_allocate() {
    // sphere_drape has live contacts with friction; the flag has wind gusts and air on every triangle
    for name in ["sphere_drape", "flag"] {
        assert_eq!(allocations_per_substep(name, 24, false), 0, "{name} on one thread");
        // 16²: ~800 constraints; 64²: ~24,000 constraints in ~100 chunks — same small bound
        for n in [16, 64] {
            let count = allocations_per_substep(name, n, true);
            let bound = ALLOCATIONS_PER_SCOPE * SCOPES_PER_SUBSTEP;
            assert!(count <= bound, "{name} {n}²: {count} allocations per substep on the task pool");
        }
    }
}
