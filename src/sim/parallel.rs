//! Running the solver's colour phases on Bevy's `ComputeTaskPool`.
//!
//! The work of one projection stage is a sequence of *chunks* (slices of one colour's constraints, see
//! `constraints::coloring`), repeated for every iteration. Chunks of the same
//! *phase* (colour) touch disjoint particles and may run at once; a chunk starts only when every chunk of the
//! earlier phases is finished.
//!
//! One hand-over to the helper threads per stage call, not one per colour: the participating threads claim the open phase's
//! chunks from one atomic word (the calling thread from the front, the others from the back) and the thread
//! that finishes a phase's last chunk opens the next phase. Waiting only ever happens while every chunk of the
//! open phase is claimed by a running thread, so the scheme cannot deadlock whatever number of pool threads
//! actually joins in (a late thread finds nothing left and returns). The result does not depend on which
//! thread ran a chunk: it is identical for every thread count, and `run_phased` with `parallel = false` is
//! the single-threaded switch.
//!
//! The helpers are drape's own persistent threads (`Crew`), as many as the compute task
//! pool has: handing them a stage allocates nothing, and they spin for a moment between stages instead of
//! waking from sleep; docs/performance.md has the measurements.

use std::ops::Range;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use bevy::tasks::ComputeTaskPool;

use super::crew::{Crew, back_off};

/// Runs `rounds` repetitions of chunks `0..phase_start.len()`, calling `work(chunk)`. `phase_start[j]` is the
/// index of the first chunk of chunk j's phase (non-decreasing, `phase_start[j] <= j`). With `parallel` the
/// calling thread and the compute task pool's threads share the chunks of each phase.
///
/// The calling thread claims a phase's chunks from the front, the pool's threads from the back, so with two
/// threads each keeps to its own end of every colour: the chunks are in particle order, so each thread keeps
/// working on the same particles, in its own cache, phase after phase (one shared counter would interleave the
/// threads and move particles between the cores at every phase).
pub(crate) fn run_phased(phase_start: &[u32], rounds: u32, parallel: bool, work: impl Fn(usize) + Sync) {
    let len = phase_start.len();
    let widest_phase = phase_start.iter().enumerate().map(|(j, &s)| j + 1 - s as usize).max().unwrap_or(0);
    let pool = ComputeTaskPool::try_get().filter(|pool| pool.thread_num() > 0);
    let total = u64::from(rounds) * len as u64;
    let fits = len <= usize::from(u16::MAX) && total < u64::from(u32::MAX);
    let (Some(pool), true) = (pool, parallel && widest_phase > 1 && fits) else {
        for _ in 0..rounds {
            (0..len).for_each(&work);
        }
        return;
    };
    // The open phase, packed into one word: `first << 32 | front << 16 | back`, where `first` counts the chunks
    // of all earlier phases (every round's) and front..back are the chunks of the phase nobody has claimed yet.
    let phase_end = |start: usize| (start + 1..len).find(|&k| phase_start[k] as usize != start).unwrap_or(len);
    let open =
        |first: u64| first << 32 | ((first % len as u64) << 16) | phase_end((first % len as u64) as usize) as u64;
    let claim = AtomicU64::new(open(0));
    let done = AtomicU64::new(0);
    let drain = |from_back: bool| {
        let mut spins = 0;
        loop {
            let word = claim.load(Ordering::Acquire);
            let (first, front, back) = (word >> 32, (word >> 16) & 0xffff, word & 0xffff);
            if first >= total {
                return;
            }
            if front >= back {
                // every chunk of the open phase is claimed: wait for the last one to finish and open the next
                back_off(&mut spins);
                continue;
            }
            let (chunk, claimed) = if from_back { (back - 1, word - 1) } else { (front, word + (1 << 16)) };
            if claim.compare_exchange_weak(word, claimed, Ordering::AcqRel, Ordering::Acquire).is_err() {
                continue;
            }
            spins = 0;
            work(chunk as usize);
            let finished = done.fetch_add(1, Ordering::AcqRel) + 1;
            let start = first % len as u64;
            if finished == first - start + phase_end(start as usize) as u64 {
                // this chunk completed its phase: open the next one (or mark the end)
                claim.store(if finished < total { open(finished) } else { total << 32 }, Ordering::Release);
            }
        }
    };
    Crew::get(pool.thread_num()).run(|| drain(false), &|| drain(true));
}

/// `start..end` cut into at most `pieces` chunks of at least `min_chunk` items (one if the range is shorter),
/// as `[start, end]` pairs covering the range in order.
pub(crate) fn cut(start: u32, end: u32, pieces: u32, min_chunk: u32) -> impl Iterator<Item = [u32; 2]> {
    let len = end.saturating_sub(start);
    let pieces = pieces.min(len.div_ceil(min_chunk.max(1))).max(1);
    let size = len.div_ceil(pieces).max(1);
    (0..pieces).map(move |k| [(start + k * size).min(end), (start + (k + 1) * size).min(end)])
}

/// A colouring's colours (offsets as in `Coloring`) cut into chunks
/// for [`run_phased`], for a pass over items of which one colour's touch disjoint particles.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct ColorChunks {
    ranges: Vec<[u32; 2]>,
    phase_start: Vec<u32>,
}

impl ColorChunks {
    /// Each colour of `offsets` cut into at most `pieces` chunks of at least `min_chunk` items.
    pub fn new(offsets: &[u32], pieces: u32, min_chunk: u32) -> Self {
        let mut chunks = Self::default();
        for color in offsets.windows(2) {
            let first = chunks.ranges.len() as u32;
            for range in cut(color[0], color[1], pieces, min_chunk) {
                chunks.ranges.push(range);
                chunks.phase_start.push(first);
            }
        }
        chunks
    }

    /// Whether the chunks cover exactly `0..len`.
    pub fn covers(&self, len: usize) -> bool {
        self.ranges.first().map_or(len == 0, |r| r[0] == 0) && self.ranges.last().map_or(0, |r| r[1] as usize) == len
    }

    /// Calls `work` with every chunk's index range, colour after colour; the chunks of one colour shared by the
    /// compute pool's threads when `parallel`.
    pub fn run(&self, parallel: bool, work: impl Fn(std::ops::Range<usize>) + Sync) {
        run_phased(&self.phase_start, 1, parallel, |j| {
            if let Some(&[start, end]) = self.ranges.get(j) {
                work(start as usize..end as usize);
            }
        });
    }
}

/// Slices per solver thread of a [`SliceOutputs`] pass: a few, so a thread that is late or slowed leaves work
/// the others take over.
const SLICES_PER_THREAD: usize = 4;
/// Phase starts of one phase of up to this many slices (all zero): see [`run_phased`].
const ONE_PHASE: [u32; 64] = [0; 64];

/// One output buffer per slice of a pass over independent items (vertex queries), kept between passes so a
/// warmed-up pass allocates nothing. Cloning gives empty buffers: they are scratch.
#[derive(Debug)]
pub(crate) struct SliceOutputs<T>(Vec<Mutex<T>>);

impl<T> Default for SliceOutputs<T> {
    fn default() -> Self {
        Self(Vec::new())
    }
}

impl<T> Clone for SliceOutputs<T> {
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl<T: Default + Send> SliceOutputs<T> {
    /// Cuts `0..n` into consecutive slices of at least `min_slice` items, a few per solver thread, and calls
    /// `work(range, output)` for each, on the compute pool's threads when `parallel`. Returns the used outputs in
    /// slice order, so their concatenation does not depend on the thread count; mutably, so a caller that merges
    /// them reads each without taking its lock (`Mutex::get_mut`).
    pub fn run(
        &mut self,
        n: usize,
        min_slice: usize,
        parallel: bool,
        work: impl Fn(Range<usize>, &mut T) + Sync,
    ) -> &mut [Mutex<T>] {
        let count = (solver_threads(parallel) * SLICES_PER_THREAD).min(n / min_slice.max(1)).clamp(1, ONE_PHASE.len());
        if self.0.len() < count {
            self.0.resize_with(count, Default::default);
        }
        let slices = &self.0[..count];
        run_phased(&ONE_PHASE[..count], 1, parallel, |j| {
            if let Ok(mut output) = slices[j].lock() {
                work(n * j / count..n * (j + 1) / count, &mut output);
            }
        });
        &mut self.0[..count]
    }

    /// All buffers, used or not (for capacity checks).
    pub fn buffers(&self) -> &[Mutex<T>] {
        &self.0
    }
}

/// Slices a large cloth's vertices are cut into for a pass over them, whatever the thread count, so a pass that
/// adds up per-slice results adds them in the same order on any number of threads.
pub(crate) const VERTEX_SLICES: usize = 8;
/// Fewest vertices for which a per-vertex pass is sliced and the slices shared by the compute pool's threads
/// (below, waking them costs more than the work).
pub(crate) const SHARED_VERTICES_FROM: usize = 4096;

/// The slices of a pass over `n` vertices: [`VERTEX_SLICES`] of them from [`SHARED_VERTICES_FROM`] vertices on,
/// otherwise one slice holding them all (the others empty).
pub(crate) fn vertex_slice(n: usize, s: usize) -> Range<usize> {
    let slices = if n >= SHARED_VERTICES_FROM { VERTEX_SLICES } else { 1 };
    if s < slices { n * s / slices..n * (s + 1) / slices } else { n..n }
}

/// Calls `work(s, range)` for each of the [`vertex_slice`]s of `0..n` that holds vertices, on the compute
/// pool's threads when `parallel` and the vertices are enough to share.
pub(crate) fn for_each_vertex_slice(n: usize, parallel: bool, work: impl Fn(usize, Range<usize>) + Sync) {
    if n < SHARED_VERTICES_FROM {
        work(0, 0..n);
        return;
    }
    run_phased(&ONE_PHASE[..VERTEX_SLICES], 1, parallel, |s| {
        let range = vertex_slice(n, s);
        if !range.is_empty() {
            work(s, range);
        }
    });
}

/// The first `n` items of a per-vertex array cut into its [`vertex_slice`]s, each behind its own lock, so that the
/// slices of one pass can be written at once.
pub(crate) struct VertexSlices<'a, T>([Mutex<&'a mut [T]>; VERTEX_SLICES]);

impl<'a, T> VertexSlices<'a, T> {
    /// Cuts `items[..n]` (`n` at most its length).
    pub fn new(items: &'a mut [T], n: usize) -> Self {
        let mut rest = &mut items[..n];
        Self(std::array::from_fn(|s| {
            let (slice, tail) = std::mem::take(&mut rest).split_at_mut(vertex_slice(n, s).len());
            rest = tail;
            Mutex::new(slice)
        }))
    }

    /// Slice `s`, locked (`None` if its lock is poisoned).
    pub fn lock(&self, s: usize) -> Option<std::sync::MutexGuard<'_, &'a mut [T]>> {
        self.0.get(s)?.lock().ok()
    }
}

/// Threads that work on a parallel stage: the caller plus the compute pool's threads.
pub fn solver_threads(parallel: bool) -> usize {
    if !parallel {
        return 1;
    }
    1 + ComputeTaskPool::try_get().map_or(0, |pool| pool.thread_num())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn colours_are_cut_into_chunks_that_cover_them_in_order() {
        let chunks = ColorChunks::new(&[0, 10, 1000, 1001], 4, 64);
        assert_eq!(chunks.ranges, [[0, 10], [10, 258], [258, 506], [506, 754], [754, 1000], [1000, 1001]]);
        assert_eq!(chunks.phase_start, [0, 1, 1, 1, 1, 5]);
        assert!(chunks.covers(1001) && !chunks.covers(1000));
        assert!(ColorChunks::default().covers(0));
        let seen = Mutex::new(Vec::new());
        chunks.run(false, |range| seen.lock().unwrap().push(range));
        let seen: Vec<usize> = seen.into_inner().unwrap().into_iter().flatten().collect();
        assert_eq!(seen, (0..1001).collect::<Vec<_>>());
    }

    #[test]
    fn a_chunk_starts_only_when_every_earlier_phase_has_finished() {
        ComputeTaskPool::get_or_init(|| bevy::tasks::TaskPoolBuilder::new().num_threads(3).build());
        // phases of 5, 1, 3 and 2 chunks, 30 rounds; chunks of unequal length so the threads interleave
        let phase_start = [0, 0, 0, 0, 0, 5, 6, 6, 6, 9, 9];
        let len = phase_start.len();
        let events = Mutex::new(Vec::new());
        run_phased(&phase_start, 30, true, |j| {
            events.lock().unwrap().push((j, true));
            std::thread::sleep(std::time::Duration::from_micros(20 * (j as u64 % 3)));
            events.lock().unwrap().push((j, false));
        });
        let (mut ended, mut started) = (0, vec![0; len]);
        for (j, start) in events.into_inner().unwrap() {
            if start {
                let round = started[j];
                started[j] += 1;
                assert!(ended >= round * len + phase_start[j] as usize, "chunk {j} of round {round} started early");
            } else {
                ended += 1;
            }
        }
        assert_eq!(started, vec![30; len]);
        assert_eq!(ended, 30 * len);
    }

    #[test]
    fn phases_run_in_order_and_every_chunk_once_per_round() {
        ComputeTaskPool::get_or_init(|| bevy::tasks::TaskPoolBuilder::new().num_threads(3).build());
        // phases: {0,1,2}, {3}, {4,5}
        let phase_start = [0, 0, 0, 3, 4, 4];
        for parallel in [false, true] {
            let log = Mutex::new(Vec::new());
            run_phased(&phase_start, 4, parallel, |j| log.lock().unwrap().push(j));
            let log = log.into_inner().unwrap();
            assert_eq!(log.len(), 24);
            // phase of each logged chunk, round by round, never goes back within a round
            let phase = |j: usize| phase_start[j];
            for round in log.chunks(6) {
                assert!(round.windows(2).all(|w| phase(w[0]) <= phase(w[1])), "{round:?}");
                let mut sorted = round.to_vec();
                sorted.sort();
                assert_eq!(sorted, [0, 1, 2, 3, 4, 5]);
            }
        }
    }
}
