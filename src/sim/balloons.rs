//! [`BalloonPlugin`]: closed cloths with a [`Balloon`] keep their enclosed volume at [`SimParams::pressure`] times
//! its rest value (§4.4, eq. (15)), a constraint projected with the cloth's own. Without the plugin a balloon is a
//! closed cloth with no pressure inside.
//!
//! A target is not set at once: it is pumped up (or let down) toward k_pressure · V0 as a sphere of that volume
//! would grow (or shrink) with its surface at [`INFLATION_SPEED`]. The constraint is projected exactly, so a target
//! far from the volume the cloth has would move the whole surface by that difference within one substep: a
//! balloon of k_pressure 4 started at V0 had every vertex's move shortened by the speed cap in its first frame,
//! and so did a pressure slider dragged from 1 to 5, or from 1 to 0.1 (docs/reliability.md).
//!
//! A balloon that tears bursts: its mesh is open, so it encloses no volume and has no constraint left to keep.

use bevy::prelude::*;

use super::cloth::Awake;
use super::cloth::{Balloon, Cloth};
use super::schedule::{PbdSubstep, ProjectionSystems, SimClock};
use super::{SimParams, stages};

/// The fastest the surface of a balloon moves as its target volume is pumped up, m/s: the speed at
/// which a starting overlap is resolved (`collide::contacts`), far below the speed cap.
pub const INFLATION_SPEED: f32 = 2.0;

/// Overpressure in closed cloths (§4.4).
pub struct BalloonPlugin;

impl Plugin for BalloonPlugin {
    fn build(&self, app: &mut App) {
        app.add_systems(PbdSubstep, pressurize.in_set(ProjectionSystems::Constraints).before(stages::project));
    }
}

/// Before lines (9)–(11): each balloon's target volume for this substep, pumped up toward k_pressure · V0 from
/// where it was (V0 at the start).
pub(crate) fn pressurize(
    mut balloons: Query<(&mut Balloon, &Cloth), Awake>,
    params: Res<SimParams>,
    clock: Res<SimClock>,
) {
    for (mut balloon, cloth) in &mut balloons {
        let goal = balloon.rest_volume * params.pressure;
        let pumped = pumped_volume(balloon.target_volume.unwrap_or(balloon.rest_volume), goal, clock.dt);
        // a torn balloon is open: it holds no air, and its mesh encloses no volume to keep
        let target = (cloth.tears == 0).then_some(pumped);
        if balloon.target_volume != target {
            balloon.target_volume = target;
        }
    }
}

/// The volume `from` pumped up or let down toward `goal` over `dt` seconds, as far as a sphere of volume `from`
/// grows or shrinks in that time with its surface at [`INFLATION_SPEED`] (dV = A dr, A = ∛(36π V²)).
pub fn pumped_volume(from: f32, goal: f32, dt: f32) -> f32 {
    let area = (36.0 * std::f32::consts::PI * from * from).cbrt();
    let most = area * INFLATION_SPEED * dt;
    if (goal - from).abs() <= most || !most.is_finite() { goal } else { from + most.copysign(goal - from) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_volume_is_pumped_up_at_the_inflation_speed_and_stops_at_its_goal() {
        let radius = |v: f32| (3.0 * v / (4.0 * std::f32::consts::PI)).cbrt();
        let (rest, dt) = (4.0 / 3.0 * std::f32::consts::PI * 0.45f32.powi(3), 1.0 / 480.0);
        let mut v = rest;
        let mut steps = 0;
        while v != 4.0 * rest {
            let next = pumped_volume(v, 4.0 * rest, dt);
            let speed = (radius(next) - radius(v)) / dt;
            assert!(speed > 0.0 && speed <= INFLATION_SPEED * 1.001, "the surface moves at {speed} m/s");
            v = next;
            steps += 1;
        }
        // the radius grows from 0.45 to 0.45 · ∛4 = 0.714 m at 2 m/s: 0.132 s, 64 substeps of 1/480 s
        assert!((63..=65).contains(&steps), "{steps} substeps");
        // let down just as fast; a goal within one step's reach is met at once
        let down = pumped_volume(4.0 * rest, rest, dt);
        let speed = (radius(4.0 * rest) - radius(down)) / dt;
        assert!(speed > 0.99 * INFLATION_SPEED && speed <= INFLATION_SPEED * 1.01, "let down at {speed} m/s");
        assert_eq!(pumped_volume(rest, rest * 1.0001, dt), rest * 1.0001);
        assert_eq!(pumped_volume(rest, rest * 0.9999, dt), rest * 0.9999);
        assert_eq!(pumped_volume(rest, rest, dt), rest);
    }
}
