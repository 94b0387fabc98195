//! Several cloths side by side: a stage whose cloths are independent gives each solver thread whole cloths. A
//! small cloth's work is too short to share between threads (a colour of a few dozen constraints, a slice below
//! the damping's and the air's thresholds), and one cloth at a time left the other threads idle. Each cloth's
//! work is its own either way, so the bits are the same on any thread count.

use bevy::ecs::query::{QueryData, QueryFilter};
use bevy::prelude::*;

use super::parallel::{SliceOutputs, solver_threads};

/// Cloths run side by side only if none holds more than one part in this many of all their particles: a cloth
/// with most of them is better shared between the threads on its own,
const LARGEST_SHARE: usize = 2;

/// unless it has fewer particles than this: sharing so small a cloth's colours between threads costs more than
/// the imbalance of giving each thread whole cloths.
const SMALL_CLOTH: usize = 1024;

/// The cloths a stage runs side by side, and the slices they run in with each slice's scratch `T` (a search's
/// buffers), kept between substeps (nothing is allocated once they have grown).
pub struct SideBySide<T = ()> {
    cloths: Vec<Entity>,
    slices: SliceOutputs<T>,
}

impl<T> Default for SideBySide<T> {
    fn default() -> Self {
        Self { cloths: Vec::new(), slices: SliceOutputs::default() }
    }
}

impl<T: Default + Send> SideBySide<T> {
    /// Chooses from `sizes` (each cloth's entity and particle count) the cloths to run side by side: all of them,
    /// if the solver has several threads (`parallel`), there are two cloths or more and none is too large
    /// (`LARGEST_SHARE`, `SMALL_CLOTH`); none otherwise. Returns whether they run side by side.
    pub(crate) fn choose(&mut self, parallel: bool, sizes: impl Iterator<Item = (Entity, usize)>) -> bool {
        self.cloths.clear();
        if solver_threads(parallel) < 2 {
            return false;
        }
        let (mut total, mut largest) = (0, 0);
        for (entity, size) in sizes {
            self.cloths.push(entity);
            total += size;
            largest = largest.max(size);
        }
        if self.cloths.len() < 2 || (largest * LARGEST_SHARE > total && largest >= SMALL_CLOTH) {
            self.cloths.clear();
        }
        !self.cloths.is_empty()
    }

    /// Calls `work` with the item of `query` of every cloth [`Self::choose`] chose and its slice's scratch,
    /// slices of them on the solver's threads.
    pub(crate) fn run<'s, D: QueryData, F: QueryFilter>(
        &mut self,
        query: &mut Query<'_, 's, D, F>,
        work: impl Fn(D::Item<'_, 's>, &mut T) + Sync,
    ) where
        for<'a> &'a Query<'a, 's, D, F>: Sync,
    {
        let (cloths, query) = (&self.cloths, &*query);
        self.slices.run(cloths.len(), 1, true, |range, scratch| {
            for &entity in &cloths[range] {
                // SAFETY: the chosen entities are distinct, so no two calls reach the same cloth's components, and
                // the query is borrowed mutably for the whole run
                if let Ok(item) = unsafe { query.get_unchecked(entity) } {
                    work(item, scratch);
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bevy::tasks::{ComputeTaskPool, TaskPoolBuilder};

    #[test]
    fn several_cloths_run_side_by_side_unless_one_holds_most_of_the_particles() {
        ComputeTaskPool::get_or_init(|| TaskPoolBuilder::new().num_threads(2).build());
        let cloths = |sizes: &[usize]| {
            let entity = |i: usize| Entity::from_raw_u32(i as u32).unwrap_or(Entity::PLACEHOLDER);
            sizes.iter().enumerate().map(|(i, &n)| (entity(i), n)).collect::<Vec<_>>()
        };
        let mut side_by_side = SideBySide::<()>::default();
        assert!(side_by_side.choose(true, cloths(&[289; 6]).into_iter()));
        assert_eq!(side_by_side.cloths.len(), 6);
        assert!(side_by_side.choose(true, cloths(&[1089, 1089]).into_iter()), "exactly half each");
        assert!(!side_by_side.choose(true, cloths(&[4000, 1000, 1000]).into_iter()), "one holds two thirds");
        assert!(side_by_side.choose(true, cloths(&[425, 324]).into_iter()), "too small to share");
        assert!(!side_by_side.choose(true, cloths(&[1089]).into_iter()), "one cloth shares its own colours");
        assert!(!side_by_side.choose(false, cloths(&[289; 6]).into_iter()), "one thread");
        assert!(side_by_side.cloths.is_empty());
    }
}
