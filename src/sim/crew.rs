//! The solver's own helper threads: started once, handed each parallel stage's work without allocating, and
//! kept spinning for a moment between stages, then parked.
//!
//! A task-pool scope per stage call boxes a task per pool thread (the allocation test counted 3–19 per
//! substep, more when the machine was busy) and wakes threads that have gone to sleep. The crew instead
//! publishes a pointer to the caller's closure under a new generation number; every helper that sees the
//! generation while it is open joins in, and the caller, after doing its own share, closes the generation and
//! waits only for the helpers that joined. A helper that wakes late finds the generation closed and goes back
//! to waiting, so a descheduled helper never holds up a stage it had no part in.
//!
//! One stage runs on the crew at a time: a second caller (another App stepping on another thread) finds the
//! crew busy and runs its stage alone, with the same result.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::thread::Thread;
use std::time::{Duration, Instant};

/// How long a helper spins for the next stage before it parks: the stages of a substep follow each other
/// within microseconds.
const KEEP_WARM: Duration = Duration::from_micros(50);

/// Set in [`Crew::state`] while helpers may still join the current generation.
const OPEN: u64 = 1 << 31;
/// The helpers that joined the current generation, in the low bits of [`Crew::state`].
const JOINED: u64 = OPEN - 1;

/// The work of one stage as the helpers see it.
type Job<'a> = &'a (dyn Fn() + Sync);

/// The helper threads and the word they coordinate on.
pub struct Crew {
    /// `generation << 32 | OPEN? | joined`.
    state: AtomicU64,
    /// Helpers of the current generation that have finished.
    finished: AtomicU32,
    /// Points at the caller's [`Job`] while a generation is open.
    job: AtomicPtr<Job<'static>>,
    /// Whether a helper's share panicked.
    panicked: AtomicBool,
    /// Held by the caller whose stage runs on the crew.
    busy: Mutex<()>,
    /// The helpers, to wake them.
    threads: OnceLock<Vec<Thread>>,
    helpers: usize,
}

static CREW: OnceLock<Crew> = OnceLock::new();

impl Crew {
    /// The crew of `helpers` threads, started on first use.
    pub fn get(helpers: usize) -> &'static Crew {
        let crew = CREW.get_or_init(|| Crew {
            state: AtomicU64::new(0),
            finished: AtomicU32::new(0),
            job: AtomicPtr::new(std::ptr::null_mut()),
            panicked: AtomicBool::new(false),
            busy: Mutex::new(()),
            threads: OnceLock::new(),
            helpers,
        });
        crew.threads.get_or_init(|| {
            (0..crew.helpers)
                .filter_map(|k| {
                    let spawned = std::thread::Builder::new().name(format!("drape solver {k}")).spawn(|| crew.serve());
                    spawned.ok().map(|handle| handle.thread().clone())
                })
                .collect()
        });
        crew
    }

    /// Runs `mine` on the calling thread while every helper that joins runs `theirs`; returns when all of them
    /// are done. `mine` must finish the work whether or not any helper joins. If the crew is busy with another
    /// caller's stage, runs `mine` alone.
    pub fn run(&self, mine: impl FnOnce(), theirs: &(dyn Fn() + Sync)) {
        let Ok(_busy) = self.busy.try_lock() else {
            mine();
            return;
        };
        // SAFETY: the pointer is only dereferenced by helpers that joined this generation, and this function
        // returns only after every one of them has finished, so `theirs` outlives every use.
        let job: Job<'static> = unsafe { std::mem::transmute::<Job<'_>, Job<'static>>(theirs) };
        self.job.store(&job as *const Job<'static> as *mut Job<'static>, Ordering::Release);
        self.finished.store(0, Ordering::Relaxed);
        let generation = (self.state.load(Ordering::Relaxed) >> 32) + 1;
        self.state.store(generation << 32 | OPEN, Ordering::Release);
        for thread in self.threads.get().into_iter().flatten() {
            thread.unpark();
        }
        mine();
        let joined = self.state.fetch_and(!OPEN, Ordering::AcqRel) & JOINED;
        let mut spins = 0u32;
        while u64::from(self.finished.load(Ordering::Acquire)) < joined {
            back_off(&mut spins);
        }
        if self.panicked.swap(false, Ordering::AcqRel) {
            panic!("a solver thread panicked");
        }
    }

    /// A helper's life: join every open generation, spin a while after each, then park.
    fn serve(&self) {
        let mut seen = 0;
        let mut idle_since = Instant::now();
        loop {
            let state = self.state.load(Ordering::Acquire);
            if state >> 32 == seen {
                if idle_since.elapsed() < KEEP_WARM {
                    std::hint::spin_loop();
                } else {
                    std::thread::park();
                }
                continue;
            }
            if state & OPEN == 0 {
                seen = state >> 32;
                continue;
            }
            if self.state.compare_exchange_weak(state, state + 1, Ordering::AcqRel, Ordering::Acquire).is_err() {
                continue;
            }
            seen = state >> 32;
            // SAFETY: joined while the generation was open, so the caller waits for this helper before its job
            // goes out of scope.
            let job = unsafe { *self.job.load(Ordering::Acquire) };
            if catch_unwind(AssertUnwindSafe(job)).is_err() {
                self.panicked.store(true, Ordering::Release);
            }
            self.finished.fetch_add(1, Ordering::AcqRel);
            idle_since = Instant::now();
        }
    }
}

/// One step of waiting: spins first, then yields the time slice.
#[inline]
pub fn back_off(spins: &mut u32) {
    const SPINS_BEFORE_YIELD: u32 = 256;
    if *spins < SPINS_BEFORE_YIELD {
        *spins += 1;
        std::hint::spin_loop();
    } else {
        std::thread::yield_now();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn helpers_share_the_work_and_the_caller_waits_for_them() {
        let crew = Crew::get(2);
        for _ in 0..200 {
            let (done, slow) = (AtomicUsize::new(0), AtomicUsize::new(0));
            crew.run(
                || {
                    done.fetch_add(1, Ordering::Relaxed);
                },
                &|| {
                    std::thread::sleep(Duration::from_micros(50));
                    slow.fetch_add(1, Ordering::Release);
                    done.fetch_add(1, Ordering::Relaxed);
                },
            );
            // every helper that joined has finished: nothing changes after the call returns
            let seen = done.load(Ordering::Acquire);
            std::thread::sleep(Duration::from_micros(200));
            assert_eq!(done.load(Ordering::Acquire), seen);
            assert_eq!(seen, 1 + slow.load(Ordering::Acquire));
        }
    }

    #[test]
    fn a_second_caller_runs_alone_while_the_crew_is_busy() {
        let crew = Crew::get(2);
        let inner = AtomicUsize::new(0);
        crew.run(
            || {
                crew.run(
                    || {
                        inner.fetch_add(1, Ordering::Relaxed);
                    },
                    &|| panic!("the crew is busy"),
                )
            },
            &|| {},
        );
        assert_eq!(inner.load(Ordering::Relaxed), 1);
    }
}
