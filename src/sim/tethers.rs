//! Long-range attachments on live cloths ([`constraints::tether`](super::constraints::tether)): each cloth's
//! [`Tethers`] component, rebuilt before a step when they are switched on or when what they depend on changed
//! (pins added or removed with Shift+click, grips, body grips, a tear, the length rule), and projected after the
//! iterations of each substep.

use std::time::Instant;

use bevy::prelude::*;

use super::StageTimings;
use super::cloth::Awake;
use super::cloth::{Attachments, BodyAttachments, Contacts, Particles, TetherSource, Tethers};
use super::collide::contact::ContactKind;
use super::collide::contacts::project_contacts;
use super::constraints::access::Slices;
use super::constraints::storage::StretchConstraints;
use super::constraints::tether::{TETHERS_PER_VERTEX, TetherSet};
use super::params::SimParams;
use super::schedule::{ClothStep, ClothStepSystems, PbdStage, PbdSubstep, ProjectionSystems};
use super::stages::{self, HeldBodies};

/// Tethers: each cloth's long-range attachments, rebuilt before a step and projected after each substep's
/// iterations, while [`SimParams::tethers`] (or the cloth's own switch) is on.
pub struct TethersPlugin;

impl Plugin for TethersPlugin {
    fn build(&self, app: &mut App) {
        app.add_systems(ClothStep, refresh_tethers.in_set(ClothStepSystems::BeforeStep).after(stages::ease_stiffness))
            .add_systems(PbdSubstep, project_tethers.in_set(ProjectionSystems::Tethers));
    }
}

/// Before each cloth step: builds, rebuilds or drops each cloth's tethers to match the switches, the attached
/// vertices and the mesh. Allocates only when it rebuilds.
pub fn refresh_tethers(
    mut cloths: Query<(&mut Tethers, &Particles, &StretchConstraints, &Attachments, &BodyAttachments), Awake>,
    params: Res<SimParams>,
) {
    for (mut tethers, particles, stretch, attachments, held) in &mut cloths {
        if !tethers.enabled.unwrap_or(params.tethers) {
            if tethers.built_for.is_some() {
                tethers.set = TetherSet::default();
                tethers.built_for = None;
            }
            continue;
        }
        let shape = (particles.len(), stretch.len());
        let attached_now = attachments.0.iter().map(|a| a.vertex).chain(held.0.iter().map(|a| a.vertex));
        if tethers.is_current(params.tether_lengths, shape, attached_now.clone()) {
            continue;
        }
        let mut attached: Vec<u32> = attached_now.collect();
        let attached_count = attached.len();
        attached.sort_unstable();
        attached.dedup();
        let is_free = |v: usize| attached.binary_search(&(v as u32)).is_err();
        // A body moves however the cloth and the world push it, so its distance from a pin is not bounded by the
        // rest shape: tethered to both, the cloth would take all of the stretch between them on the one row where
        // their reaches meet (docs/solvers.md). A body's holds anchor only a cloth nothing else holds.
        let anchors = if attachments.0.is_empty() {
            attached.clone()
        } else {
            let mut pinned: Vec<u32> = attachments.0.iter().map(|a| a.vertex).collect();
            pinned.sort_unstable();
            pinned.dedup();
            pinned
        };
        let edges = (stretch.edges(), stretch.rest_length());
        let rule = (params.tether_lengths, Some(tethers.rest.as_slice()));
        let set = TetherSet::build(particles.len(), edges, (&anchors, TETHERS_PER_VERTEX), rule, is_free);
        let tethers = &mut *tethers;
        tethers.set = set;
        tethers.built_for =
            Some(TetherSource { lengths: params.tether_lengths, shape, attached: attached_count, anchors: attached });
    }
}

/// After the iterations of lines (9)–(11) in every substep: each free vertex back within its tethers' reach
/// (timed with the projection). Tethers anchored on a body's holds (a cloth nothing else holds) move the held
/// vertices too; their holds then share the gap with the body, so the body feels the pull (§4.2).
pub fn project_tethers(
    mut cloths: Query<(&mut Particles, &Tethers, &Attachments, &BodyAttachments, &mut Contacts), Awake>,
    mut held: ResMut<HeldBodies>,
    params: Res<SimParams>,
    mut timings: ResMut<StageTimings>,
) {
    for (mut particles, tethers, pins, holds, mut contacts) in &mut cloths {
        if tethers.set.is_empty() {
            continue;
        }
        let start = Instant::now();
        let Particles { x, p, w, .. } = &mut *particles;
        let stretched = tethers.set.project(p, w, params.tether_slack);
        if stretched > 0 && pins.0.is_empty() && !holds.0.is_empty() {
            let first = contacts.0.iter().position(|c| c.kind == ContactKind::Attached).unwrap_or(contacts.0.len());
            project_contacts(&mut Slices { p, w }, x, &mut contacts.0[first..], &mut held.0);
        }
        timings.add(PbdStage::Project, start);
    }
}
