//! Crossings between cloths that no contact sees: a survey of every edge of one cloth against the other cloths'
//! triangles at the start of a step.
//!
//! The untangling (`untangle.rs`) finds a crossing from the contact list: an edge at a contact's vertex through the
//! contact's triangle. Two sheets a scene starts through each other cross along a line where their edges meet the
//! other sheet at an angle, and most of those edges' ends lie farther from the other sheet than the contact band:
//! the crossing is seen in pieces or not at all, no part of either sheet separates, and the contacts hold the
//! crossing for good. The survey tests every edge of the cloths against the triangles of the others
//! ([`count_intersections`](super::count_intersections)'s test), which sees the whole crossing. It costs about a
//! contact search, so it runs once every [`SURVEY_PERIOD`] steps while it finds nothing, and every step while it
//! finds a crossing, until the crossing is gone.

use bevy::math::Vec3;

use super::diagnostics::pierces;
use super::hash::SpatialHash;
use super::{corners, unique_edges_into};

/// Steps between two surveys that find nothing: a crossing a scene starts with is found in its first step, one
/// the contacts let through later within this many steps.
pub(crate) const SURVEY_PERIOD: u32 = 16;

/// An edge of one cloth through a triangle of another: the edge (lower vertex first) and the triangle's index.
pub(crate) type Piercing = ([u32; 2], u32);

/// The survey's buffers and what it last found; allocates nothing once grown, and lists the edges again only when
/// the triangles change (tearing).
#[derive(Clone, Debug, Default)]
pub(crate) struct CrossingSurvey {
    hash: SpatialHash,
    /// The triangles `edges` was listed for.
    edges_of: Vec<[u32; 3]>,
    /// Every edge of the triangles once, lower vertex first.
    edges: Vec<[u32; 2]>,
    /// The piercings the last survey found.
    found: Vec<Piercing>,
    /// Steps to skip before the next survey.
    wait: u32,
}

impl CrossingSurvey {
    /// The edges through a triangle of another group (`groups`: the cloth of each vertex) at `x`, surveyed again
    /// if the last survey found any or [`SURVEY_PERIOD`] steps have passed; call once per step.
    pub fn step(&mut self, x: &[Vec3], triangles: &[[u32; 3]], groups: &[u32]) -> &[Piercing] {
        if self.wait > 0 && self.found.is_empty() {
            self.wait -= 1;
            return &self.found;
        }
        self.wait = SURVEY_PERIOD - 1;
        self.survey(x, triangles, groups);
        &self.found
    }

    /// What the last survey found.
    pub fn found(&self) -> &[Piercing] {
        &self.found
    }

    /// Starts over: the next [`Self::step`] surveys.
    pub fn forget(&mut self) {
        self.found.clear();
        self.wait = 0;
    }

    fn survey(&mut self, x: &[Vec3], triangles: &[[u32; 3]], groups: &[u32]) {
        self.found.clear();
        if self.edges_of != triangles {
            self.edges_of.clear();
            self.edges_of.extend_from_slice(triangles);
            unique_edges_into(triangles, &mut self.edges);
        }
        self.hash.rebuild(x, triangles);
        let group = |v: u32| groups.get(v as usize).copied();
        for &[a, b] in &self.edges {
            let (Some(&pa), Some(&pb)) = (x.get(a as usize), x.get(b as usize)) else { continue };
            if !(pa.is_finite() && pb.is_finite()) {
                continue;
            }
            let own = group(a);
            let found = &mut self.found;
            self.hash.for_each_in_box(pa.min(pb), pa.max(pb), |t| {
                let Some(tri) = triangles.get(t as usize) else { return };
                if group(tri[0]) != own && corners(x, tri).is_some_and(|corners| pierces(pa, pb, corners)) {
                    found.push(([a, b], t));
                }
            });
        }
        // the hash's visiting order is its layout's: sorted, the untangling sees the same list whatever it is
        self.found.sort_unstable();
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::grid;
    use super::*;

    /// Two 6×6 sheets of 10 cm cells: A flat in z = 0, B tilted about the x axis through it, so that a line across
    /// both crosses. Vertices below `first_b` are A's.
    fn crossed_sheets() -> (Vec<Vec3>, Vec<[u32; 3]>, Vec<u32>, usize) {
        let (mut x, mut tris) = (Vec::new(), Vec::new());
        grid(6, 0.1, Vec3::ZERO, &mut x, &mut tris);
        let first_b = x.len();
        grid(6, 0.1, Vec3::new(0.03, -0.02, -0.1), &mut x, &mut tris);
        // tilt B: its z rises 8 cm per 10 cm of y, so it passes through A between its second and third rows
        for q in &mut x[first_b..] {
            q.z += 0.8 * q.y;
        }
        let groups = (0..x.len()).map(|v| u32::from(v >= first_b)).collect();
        (x, tris, groups, first_b)
    }

    #[test]
    fn the_survey_finds_every_edge_through_the_other_cloth_and_none_within_one() {
        let (x, tris, groups, first_b) = crossed_sheets();
        let mut survey = CrossingSurvey::default();
        let found = survey.step(&x, &tris, &groups).to_vec();
        assert!(!found.is_empty());
        let group = |v: u32| groups[v as usize];
        for &([a, b], t) in &found {
            let corners = corners(&x, &tris[t as usize]).unwrap();
            assert!(pierces(x[a as usize], x[b as usize], corners));
            assert_eq!(group(a), group(b));
            assert_ne!(group(a), group(tris[t as usize][0]));
        }
        // every edge of either sheet through the other, by brute force
        let all: Vec<Piercing> = {
            let mut edges = Vec::new();
            unique_edges_into(&tris, &mut edges);
            let mut all = Vec::new();
            for [a, b] in edges {
                for (t, tri) in tris.iter().enumerate() {
                    let other = (tri[0] as usize >= first_b) != (a as usize >= first_b);
                    if other && pierces(x[a as usize], x[b as usize], corners(&x, tri).unwrap()) {
                        all.push(([a, b], t as u32));
                    }
                }
            }
            all.sort_unstable();
            all
        };
        assert_eq!(found, all);
        // both sheets are cut: edges of A through B and of B through A
        assert!(found.iter().any(|([a, _], _)| (*a as usize) < first_b));
        assert!(found.iter().any(|([a, _], _)| (*a as usize) >= first_b));
    }

    #[test]
    fn a_survey_that_finds_nothing_waits_and_one_that_finds_a_crossing_repeats() {
        let (x, tris, groups, first_b) = crossed_sheets();
        // B lifted clear of A: nothing, and the next surveys wait
        let mut apart = x.clone();
        for q in &mut apart[first_b..] {
            q.z += 1.0;
        }
        let mut survey = CrossingSurvey::default();
        assert!(survey.step(&apart, &tris, &groups).is_empty());
        for _ in 1..SURVEY_PERIOD {
            assert!(survey.step(&x, &tris, &groups).is_empty(), "waits for its period");
        }
        assert!(!survey.step(&x, &tris, &groups).is_empty(), "surveys again after the period");
        // while it finds a crossing it surveys every step: the crossing gone, the next step sees it gone
        assert!(survey.step(&apart, &tris, &groups).is_empty());
        survey.forget();
        assert!(!survey.step(&x, &tris, &groups).is_empty(), "surveys at once after forget");
    }
}
