//! The order in which one cloth's constraints are projected in each iteration (lines (9)–(11)): every colour
//! of stretch constraints, every colour of bending constraints, then the contacts, the self-collisions and the
//! volume — each colour cut into
//! chunks that threads share (see [`crate::sim::parallel`]). Built from the colourings when a cloth is made
//! and rebuilt only when they change (tearing); no allocation per step.

use super::storage::{BendConstraints, StretchConstraints};
use crate::sim::parallel::cut;

/// Chunks each colour is cut into per solver thread: a few, so a thread that starts late or is slowed down
/// leaves work the others take over, but not many: every claim is an atomic on a cache line all threads share
/// (docs/performance.md, "Projection").
pub const CHUNKS_PER_THREAD: u32 = 4;
/// Fewest constraints per chunk.
pub const MIN_CHUNK: u32 = 64;

/// Which constraints a chunk projects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Work {
    /// `StretchConstraints` in `range` (one colour or part of it).
    Stretch,
    /// `BendConstraints` in `range`.
    Bend,
    /// All collision constraints of the step, on one thread (a vertex may have several).
    Contacts,
    /// The self-collision constraints eq. (13) of §4.3: the two halves of
    /// [`split_in_halves`](crate::sim::selfcollide::split_in_halves) side by side, then the rest.
    SelfContacts,
    /// The balloon's volume constraint eq. (15), §4.4: global, on one thread.
    Volume,
}

/// A slice of one phase's constraints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chunk {
    /// Which constraints the chunk projects.
    pub work: Work,
    /// Start of the range `start..end`: constraint indices for stretch and bending, groups for self contacts.
    pub start: u32,
    /// End of the range, exclusive.
    pub end: u32,
}

/// One iteration's chunks in order, and for each the first chunk of its phase (colour).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProjectionPlan {
    threads: u32,
    stretch_colors: Vec<u32>,
    bend_colors: Vec<u32>,
    chunks: Vec<Chunk>,
    phase_start: Vec<u32>,
    /// The first chunk of the contacts, of the self contacts and of the volume.
    global_start: [u32; 3],
    /// Whether some colour is cut into more than one chunk.
    wide_colors: bool,
}

impl ProjectionPlan {
    /// The plan for these colourings, shared by `threads` threads.
    pub fn new(stretch: &StretchConstraints, bend: &BendConstraints, threads: usize) -> Self {
        let mut plan = Self {
            threads: threads.max(1) as u32,
            stretch_colors: stretch.color_offsets().to_vec(),
            bend_colors: bend.color_offsets().to_vec(),
            ..Self::default()
        };
        for (work, offsets) in [(Work::Stretch, stretch.color_offsets()), (Work::Bend, bend.color_offsets())] {
            for color in offsets.windows(2) {
                plan.push_phase(work, color[0], color[1]);
            }
        }
        plan.global_start[0] = plan.chunks.len() as u32;
        plan.wide_colors = (plan.phase_start.iter().enumerate()).any(|(j, &first)| first as usize != j);
        plan.push_phase(Work::Contacts, 0, 1);
        // the self contacts' two halves side by side, then the rest (chunk k projects group k)
        plan.global_start[1] = plan.chunks.len() as u32;
        for half in 0..2 {
            plan.chunks.push(Chunk { work: Work::SelfContacts, start: half, end: half + 1 });
            plan.phase_start.push(plan.global_start[1]);
        }
        plan.push_phase(Work::SelfContacts, 2, 3);
        plan.global_start[2] = plan.chunks.len() as u32;
        plan.push_phase(Work::Volume, 0, 1);
        plan
    }

    /// How many chunks (from the first) a sweep needs: the global phases at the end are dropped from the last
    /// one with work on, so a cloth without contacts, self contacts or volume waits for no empty phase.
    pub fn chunks_needed(&self, contacts: bool, self_contacts: bool, volume: bool) -> usize {
        let [contacts_start, self_start, volume_start] = self.global_start.map(|s| s as usize);
        match (contacts, self_contacts, volume) {
            (_, _, true) => self.chunks.len(),
            (_, true, false) => volume_start,
            (true, false, false) => self_start,
            (false, false, false) => contacts_start,
        }
    }

    /// Whether threads sharing a sweep can gain anything: some colour is cut into chunks, or the self contacts
    /// are many enough to split in halves. Otherwise every phase is one chunk, and a second thread would only
    /// pass the particles between the cores and, on a busy machine, keep the caller waiting for a descheduled
    /// helper at every colour.
    pub fn worth_sharing(&self, self_contacts: usize) -> bool {
        self.wide_colors || self_contacts >= 2 * MIN_CHUNK as usize
    }

    fn push_phase(&mut self, work: Work, start: u32, end: u32) {
        let first = self.chunks.len() as u32;
        let pieces = if self.threads > 1 { self.threads * CHUNKS_PER_THREAD } else { 1 };
        for [from, to] in cut(start, end, pieces, MIN_CHUNK) {
            self.chunks.push(Chunk { work, start: from, end: to });
            self.phase_start.push(first);
        }
    }

    /// Threads the chunks were cut for.
    pub fn threads(&self) -> usize {
        self.threads as usize
    }

    /// Whether the plan was built for these colourings.
    pub fn is_for(&self, stretch: &StretchConstraints, bend: &BendConstraints) -> bool {
        self.stretch_colors == stretch.color_offsets() && self.bend_colors == bend.color_offsets()
    }

    /// One iteration's chunks, in order.
    pub fn chunks(&self) -> &[Chunk] {
        &self.chunks
    }

    /// For each chunk, the index of the first chunk of its phase.
    pub fn phase_start(&self) -> &[u32] {
        &self.phase_start
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_each_colour_exactly_and_phases_follow_colours() {
        let n = 60;
        let edges: Vec<[u32; 2]> = (0..n - 1).map(|i| [i, i + 1]).chain((0..n - 2).map(|i| [i, i + 2])).collect();
        let count = edges.len();
        let stretch = StretchConstraints::new(edges, vec![1.0; count], n as usize);
        let plan = ProjectionPlan::new(&stretch, &BendConstraints::default(), 2);
        assert!(plan.is_for(&stretch, &BendConstraints::default()));
        let covered: u32 = plan.chunks().iter().filter(|c| c.work == Work::Stretch).map(|c| c.end - c.start).sum();
        assert_eq!(covered as usize, stretch.len());
        assert_eq!(plan.chunks().last().map(|c| c.work), Some(Work::Volume));
        // the self contacts: their two halves side by side, then the rest alone
        let own: Vec<(u32, u32)> = (plan.chunks().iter().zip(plan.phase_start()))
            .filter(|(c, _)| c.work == Work::SelfContacts)
            .map(|(c, &first)| (c.start, first))
            .collect();
        assert_eq!(own.len(), 3);
        assert_eq!((own[0].0, own[1].0, own[2].0), (0, 1, 2));
        assert!(own[0].1 == own[1].1 && own[2].1 > own[1].1);
        // a sweep stops after the last global phase with work on
        let first_of = |work| plan.chunks().iter().position(|c| c.work == work).unwrap();
        assert_eq!(plan.chunks_needed(false, false, false), first_of(Work::Contacts));
        assert_eq!(plan.chunks_needed(true, false, false), first_of(Work::SelfContacts));
        assert_eq!(plan.chunks_needed(false, true, false), first_of(Work::Volume));
        assert_eq!(plan.chunks_needed(true, true, true), plan.chunks().len());
        for (j, &first) in plan.phase_start().iter().enumerate() {
            assert!(first as usize <= j);
            assert_eq!(plan.chunks()[first as usize].work, plan.chunks()[j].work);
        }
        // a colour is cut into at most CHUNKS_PER_THREAD chunks per thread, none smaller than MIN_CHUNK unless
        // the colour is; one thread gets one chunk per colour
        let widest = |plan: &ProjectionPlan| {
            let starts = plan.phase_start();
            let stretch = |j: &usize| plan.chunks()[*j].work == Work::Stretch;
            let width = |s: u32| starts.iter().filter(|&&t| t == s).count();
            (0..starts.len()).filter(stretch).map(|j| width(starts[j])).max().unwrap_or(0)
        };
        assert_eq!(widest(&plan), 1, "colours of about 30 constraints are not cut");
        assert!(!plan.worth_sharing(0) && !plan.worth_sharing(2 * MIN_CHUNK as usize - 1));
        assert!(plan.worth_sharing(2 * MIN_CHUNK as usize));
        let long: Vec<[u32; 2]> = (0..4000).map(|i| [2 * i, 2 * i + 1]).collect();
        let long = StretchConstraints::new(long, vec![1.0; 4000], 8000);
        let bend = BendConstraints::default();
        assert_eq!(widest(&ProjectionPlan::new(&long, &bend, 2)), 2 * CHUNKS_PER_THREAD as usize);
        assert_eq!(widest(&ProjectionPlan::new(&long, &bend, 1)), 1);
        assert!(ProjectionPlan::new(&long, &bend, 2).worth_sharing(0));
    }
}
