//! [`TearingPlugin`]: §5 after each cloth step — the vertices of edges stretched beyond
//! [`SimParams::tear_threshold`] split ([`tearing`], the kernel), while [`SimParams::tearing`] is
//! on. Without the plugin no cloth tears.

use std::time::Instant;

use bevy::prelude::*;

use super::cloth::Awake;
use super::cloth::{BendConstraints, BodyAttachments, Cloth, ClothMesh, Particles, StretchConstraints};
use super::schedule::{ClothStep, ClothStepSystems, PbdStage};
use super::{SimParams, StageTimings, tearing};

/// Tearing (§5): overstretched edges split after each cloth step.
pub struct TearingPlugin;

impl Plugin for TearingPlugin {
    fn build(&self, app: &mut App) {
        app.add_systems(ClothStep, tear.in_set(ClothStepSystems::AfterStep).in_set(PbdStage::Tearing));
    }
}

/// After the step, §5: when tearing is on, splits up to [`MAX_TEARS_PER_STEP`] vertices of the edges stretched
/// beyond the threshold; stretch and bending constraints are rebuilt locally by the kernel, then recoloured.
/// A cloth with no overstretched edge is only read.
pub(crate) fn tear(
    mut cloths: Query<(Tearable, Option<&BodyAttachments>), Awake>,
    params: Res<SimParams>,
    mut found: Local<Vec<tearing::Overstretched>>,
    mut held: Local<Vec<u32>>,
    mut timings: ResMut<StageTimings>,
) {
    if !params.tearing {
        return;
    }
    let start = Instant::now();
    for ((mut particles, mut mesh, mut stretch, mut bend, mut tag), holds) in &mut cloths {
        let threshold = params.tear_threshold;
        if tearing::most_stretched_edge(&particles.x, stretch.edges(), stretch.rest_length(), threshold).is_none() {
            continue;
        }
        let (mut edges, mut rest_length) = std::mem::take(&mut *stretch).into_parts();
        let (mut quads, mut rest_angle, mut rest_distance) = std::mem::take(&mut *bend).into_parts();
        held.clear();
        held.extend(holds.iter().flat_map(|h| h.0.iter().map(|a| a.vertex)));
        held.sort_unstable();
        let Particles { x, p, v, w, mass } = &mut *particles;
        let ClothMesh { triangles, uvs, .. } = &mut *mesh;
        let mut cloth = tearing::TearableCloth {
            x,
            p,
            v,
            mass,
            w,
            held: &held,
            triangles,
            uvs,
            edges: &mut edges,
            rest_length: &mut rest_length,
            quads: &mut quads,
            rest_angle: &mut rest_angle,
            rest_distance: &mut rest_distance,
        };
        tag.tears += tearing::tear_overstretched(&mut cloth, threshold, MAX_TEARS_PER_STEP, &mut found);
        let n = particles.len();
        *stretch = StretchConstraints::new(edges, rest_length, n);
        *bend = BendConstraints::new(quads, rest_angle, rest_distance, n);
    }
    timings.add_outside_step(PbdStage::Tearing, start);
}

/// What tearing edits of a cloth.
type Tearable = (
    &'static mut Particles,
    &'static mut ClothMesh,
    &'static mut StretchConstraints,
    &'static mut BendConstraints,
    &'static mut Cloth,
);

/// Most vertex splits per cloth and step: a rip opens over a few frames instead of shattering at once.
pub(crate) const MAX_TEARS_PER_STEP: usize = 8;
