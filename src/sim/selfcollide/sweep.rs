//! The rays a search swept the vertices along over the rest of a step (line (8), searched once per step in
//! Macklin et al. 2019's "Small Steps" manner): a forecast. While every vertex keeps within a slack of where its
//! ray puts it at the same time, no pair can come within the gap that the search did not find within its band;
//! once one strays (a cloth stopped by a collider, a fold thrown up on landing), the search is made again over
//! the rest of the step. Self-collision and cloth against cloth keep one each.

use bevy::math::Vec3;

/// The rays a search of the step swept each vertex along, from the substep it was made in to the step's end:
/// while every vertex stays within `slack` of where its ray puts it at the same time, no pair can come within
/// the gap that the search did not find within its band.
#[derive(Clone, Debug, Default)]
pub struct StepSweep {
    /// Each vertex's position at the start of the substep of the search.
    from: Vec<Vec3>,
    /// Where the search swept each vertex to by the end of the step.
    to: Vec<Vec3>,
    /// The substep the search was made in, and how many substeps its rays span.
    first: u32,
    span: u32,
    /// How far a vertex may be from its ray before the search is made again, m: half the band beyond the widest
    /// gap (the search's band is the same for every pair), as two vertices may each be off by that towards each
    /// other. Negative: no search to keep.
    slack: f32,
    /// Per vertex: whether it was swept again since the search ([`Self::resweep`]), so its ray is not the one the
    /// search swept.
    reswept: Vec<bool>,
}

impl StepSweep {
    /// Keeps the rays `from` → `to` of a search made in substep `first` of a step of `substeps`, with a band
    /// `margin` wider than the widest gap.
    pub fn remember(&mut self, (from, to): (&[Vec3], &[Vec3]), (first, substeps): (u32, u32), margin: f32) {
        self.from.clear();
        self.from.extend_from_slice(from);
        self.to.clear();
        self.to.extend_from_slice(to);
        (self.first, self.span) = (first, substeps.saturating_sub(first).max(1));
        self.slack = 0.5 * margin;
        self.reswept.clear();
        self.reswept.resize(from.len(), false);
    }

    /// How far a vertex may be from its ray before the search is made again, m (negative: no search to keep).
    pub fn slack(&self) -> f32 {
        self.slack
    }

    /// Per vertex: whether it was swept again since the search.
    pub fn reswept(&self) -> &[bool] {
        &self.reswept
    }

    /// Forgets the rays: the next substep searches.
    pub fn forget(&mut self) {
        self.slack = -1.0;
    }

    /// Whether the vertices from `first` on, starting substep `substep` at `x` and predicted at `p`, are all
    /// within the slack of their rays at both ends of the substep.
    pub fn holds(&self, first: usize, (x, p): (&[Vec3], &[Vec3]), substep: u32) -> bool {
        let Some(times) = self.times(substep) else { return false };
        let (Some(from), Some(to)) = (self.from.get(first..first + x.len()), self.to.get(first..first + x.len()))
        else {
            return false;
        };
        x.len() == p.len() && (0..x.len()).all(|i| !self.off_ray((from[i], to[i]), (x[i], p[i]), times))
    }

    /// Marks in `strayed` (refilled, one flag per vertex) the vertices that left their rays in substep `substep`
    /// (starting it at `x`, predicted at `p`), as [`Self::holds`] judges them; returns how many, or `None` if the
    /// rays do not cover this substep or these vertices (the search is to be made again in full).
    pub fn strayed(&self, (x, p): (&[Vec3], &[Vec3]), substep: u32, strayed: &mut Vec<bool>) -> Option<usize> {
        let times = self.times(substep)?;
        if x.len() != p.len() || self.from.len() != x.len() || self.to.len() != x.len() {
            return None;
        }
        strayed.clear();
        strayed.extend((0..x.len()).map(|i| self.off_ray((self.from[i], self.to[i]), (x[i], p[i]), times)));
        Some(strayed.iter().filter(|&&s| s).count())
    }

    /// Gives each `strayed` vertex the ray from `x` (where it starts substep `substep`) to `to` (where a search
    /// made again sweeps it to by the step's end), in place of its own; the others keep theirs.
    pub fn resweep(&mut self, strayed: &[bool], (x, to): (&[Vec3], &[Vec3]), substep: u32) {
        let Some((start, _)) = self.times(substep) else { return };
        for (i, _) in strayed.iter().enumerate().filter(|(_, s)| **s) {
            let (Some(&x), Some(&end)) = (x.get(i), to.get(i)) else { continue };
            // the ray through x at this substep's time and `end` at the step's, on the same clock as the others
            if let (Some(from), Some(ray_end)) = (self.from.get_mut(i), self.to.get_mut(i)) {
                *from = (x - end * start) / (1.0 - start);
                *ray_end = end;
            }
            if let Some(flag) = self.reswept.get_mut(i) {
                *flag = true;
            }
        }
    }

    /// Where substep `substep` starts and ends on the rays' clock (0 at the search, 1 at the step's end), if the
    /// rays cover it and the search was not made in it.
    fn times(&self, substep: u32) -> Option<(f32, f32)> {
        if self.slack < 0.0 || substep <= self.first || substep >= self.first + self.span {
            return None;
        }
        let at = |k: u32| (k - self.first) as f32 / self.span as f32;
        Some((at(substep), at(substep + 1)))
    }

    /// Whether a vertex starting the substep at `x` and predicted at `p` is off its ray `from` → `to` by more than
    /// the slack at either end of the substep (`start`, `end` on the rays' clock).
    fn off_ray(&self, (from, to): (Vec3, Vec3), (x, p): (Vec3, Vec3), (start, end): (f32, f32)) -> bool {
        let near = |forecast: Vec3, actual: Vec3| forecast.distance_squared(actual) <= self.slack * self.slack;
        !(near(from.lerp(to, start), x) && near(from.lerp(to, end), p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_search_holds_while_every_vertex_keeps_within_the_slack_of_its_ray() {
        // two vertices swept 8 cm down over a step of 8 substeps, searched in substep 0 with a 1 cm margin
        let from = [Vec3::ZERO, Vec3::X];
        let to = from.map(|x| x - 0.08 * Vec3::Y);
        let mut sweep = StepSweep::default();
        sweep.remember((&from, &to), (0, 8), 0.01);
        let on_ray = |k: f32| from.map(|x| x - 0.01 * k * Vec3::Y);
        // substep 3 runs from 3 cm to 4 cm down: on the rays, or 4.9 mm off, the search holds
        assert!(sweep.holds(0, (&on_ray(3.0), &on_ray(4.0)), 3));
        let mut off = on_ray(4.0);
        off[1].x += 0.0049;
        assert!(sweep.holds(0, (&on_ray(3.0), &off), 3));
        // 5.1 mm off (half the margin is the slack), or stopped a substep early, it does not
        off[1].x += 0.0002;
        assert!(!sweep.holds(0, (&on_ray(3.0), &off), 3));
        assert!(!sweep.holds(0, (&on_ray(3.0), &on_ray(3.0)), 3));
        // nor in the substep of the search, after the step, or for a cloth of another size
        assert!(!sweep.holds(0, (&on_ray(0.0), &on_ray(1.0)), 0));
        assert!(!sweep.holds(0, (&on_ray(8.0), &on_ray(9.0)), 8));
        assert!(!sweep.holds(1, (&on_ray(3.0), &on_ray(4.0)), 3));
        // a search made later in the step spans the substeps left
        sweep.remember((&on_ray(6.0), &to), (6, 8), 0.01);
        assert!(sweep.holds(0, (&on_ray(7.0), &on_ray(8.0)), 7));
        sweep.forget();
        assert!(!sweep.holds(0, (&on_ray(7.0), &on_ray(8.0)), 7));
    }

    #[test]
    fn a_strayed_vertex_is_swept_again_on_the_clock_of_the_others() {
        let from = [Vec3::ZERO, Vec3::X];
        let to = from.map(|x| x - 0.08 * Vec3::Y);
        let mut sweep = StepSweep::default();
        sweep.remember((&from, &to), (0, 8), 0.01);
        let on_ray = |k: f32| from.map(|x| x - 0.01 * k * Vec3::Y);
        // the second vertex stopped at 2 cm down in substep 2: it alone strayed
        let (mut x, mut p) = (on_ray(2.0), on_ray(3.0));
        p[1] = x[1];
        let mut strayed = Vec::new();
        assert_eq!(sweep.strayed((&x, &p), 2, &mut strayed), Some(1));
        assert_eq!(strayed, [false, true]);
        // swept again to stay where it is: from the next substep on, both keep to their rays
        assert_eq!(sweep.reswept(), [false, false]);
        sweep.resweep(&strayed, (&x, &[to[0], x[1]]), 2);
        assert_eq!(sweep.reswept(), [false, true]);
        (x, p) = (on_ray(3.0), on_ray(4.0));
        (x[1], p[1]) = (from[1] - 0.02 * Vec3::Y, from[1] - 0.02 * Vec3::Y);
        assert_eq!(sweep.strayed((&x, &p), 3, &mut strayed), Some(0));
        assert!(sweep.holds(0, (&x, &p), 3));
        // in the substep of the search, or for another number of vertices, the rays say nothing
        assert_eq!(sweep.strayed((&x, &p), 0, &mut strayed), None);
        assert_eq!(sweep.strayed((&x[..1], &p[..1]), 3, &mut strayed), None);
    }
}
