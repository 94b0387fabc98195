//! [`BalloonPlugin`]: closed cloths with a [`Balloon`] keep their enclosed volume at [`SimParams::pressure`] times
//! its rest value (§4.4, eq. (15)), a constraint projected with the cloth's own. Without the plugin a balloon is a
//! closed cloth with no pressure inside.

use bevy::prelude::*;

use super::cloth::Balloon;
use super::schedule::{PbdSubstep, ProjectionSystems};
use super::{SimParams, stages};

/// Overpressure in closed cloths (§4.4).
pub struct BalloonPlugin;

impl Plugin for BalloonPlugin {
    fn build(&self, app: &mut App) {
        app.add_systems(PbdSubstep, pressurize.in_set(ProjectionSystems::Constraints).before(stages::project));
    }
}

/// Before lines (9)–(11): each balloon's target volume k_pressure · V0 for this substep.
pub(crate) fn pressurize(mut balloons: Query<&mut Balloon>, params: Res<SimParams>) {
    for mut balloon in &mut balloons {
        let target = Some(balloon.rest_volume * params.pressure);
        if balloon.target_volume != target {
            balloon.target_volume = target;
        }
    }
}
