//! Numbers the panel shows: frame rate and the totals over all cloths.

use bevy::prelude::*;

use drape::sim::cloth::{BendConstraints, Contacts, Particles, StretchConstraints};

/// Rendered frames per second, smoothed.
#[derive(Resource, Clone, Copy, Debug, Default)]
pub struct FrameRate(pub f32);

/// Updates [`FrameRate`] from the last frame's duration (exponential average, weight 0.1).
pub fn measure_frame_rate(time: Res<Time<Real>>, mut rate: ResMut<FrameRate>) {
    let dt = time.delta_secs();
    if dt > 0.0 {
        let fps = 1.0 / dt;
        rate.0 = if rate.0 == 0.0 { fps } else { rate.0 + 0.1 * (fps - rate.0) };
    }
}

/// Totals over every cloth of the scene.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SceneCounts {
    /// Cloths.
    pub cloths: usize,
    /// Particles.
    pub particles: usize,
    /// Stretch and bending constraints.
    pub constraints: usize,
    /// Collision constraints of the last step.
    pub contacts: usize,
    /// Tears so far: vertex splits, as counted by [`Cloth::tears`](drape::sim::cloth::Cloth::tears).
    pub torn_edges: usize,
    /// Cloths asleep: at rest and not stepped ([`SleepPlugin`](drape::sim::SleepPlugin)).
    pub asleep: usize,
}

impl SceneCounts {
    /// The totals of `cloths`: each cloth's particles, constraints, contacts and tear count.
    pub fn of<'a>(
        cloths: impl Iterator<Item = (&'a Particles, &'a StretchConstraints, &'a BendConstraints, &'a Contacts, usize)>,
    ) -> Self {
        cloths.fold(Self::default(), |mut c, (p, s, b, k, tears)| {
            c.torn_edges += tears;
            c.cloths += 1;
            c.particles += p.len();
            c.constraints += s.len() + b.len();
            c.contacts += k.0.len();
            c
        })
    }
}
