//! "Save current as preset": the running scene as a [`SceneDesc`] — its description with the live parameters,
//! each cloth's live material, and its attachments as they are now. Pins and grips keep their motions; a
//! selector whose vertices were freed with Shift+click becomes the index list of those left, and vertices pinned
//! with Shift+click join the pins if they are fixed, or a new fixed grip if the pins move. Body grips are kept
//! as described (Shift+click does not change them).

use super::desc::{ClothDesc, Grip, PinSelector, SceneDesc};
use super::spawn::build_cloth;
use crate::sim::SimParams;
use crate::sim::cloth::{Attachments, Cloth, ClothMaterial};
use crate::sim::constraints::attach::Motion;
use crate::spawn::select_vertices;

/// The live state of one cloth: its name, material and the vertices attached now (pins and grips).
pub struct LiveCloth {
    /// The cloth's name, as in the scene description.
    pub name: String,
    /// Its material as set now.
    pub material: ClothMaterial,
    /// Indices of the vertices attached now, whatever their motion.
    pub attached: Vec<u32>,
}

impl LiveCloth {
    /// What the components of a live cloth say.
    pub fn of(cloth: &Cloth, material: &ClothMaterial, attachments: &Attachments) -> Self {
        let attached = attachments.0.iter().map(|a| a.vertex).collect();
        Self { name: cloth.name.clone(), material: *material, attached }
    }
}

/// `active` with the live parameters and cloths applied.
pub fn snapshot(active: &SceneDesc, params: &SimParams, cloths: &[LiveCloth]) -> SceneDesc {
    let mut desc = active.clone();
    desc.params = params.clone();
    desc.source = None;
    for cloth in &mut desc.cloths {
        let Some(live) = cloths.iter().find(|c| c.name == cloth.name) else {
            continue;
        };
        cloth.material = live.material;
        write_attachments(cloth, &live.attached);
    }
    desc
}

/// Rewrites `cloth`'s pins and grips so that exactly `attached` are held, each group keeping its motion.
fn write_attachments(cloth: &mut ClothDesc, attached: &[u32]) {
    let Some(groups) = described_groups(cloth) else {
        return;
    };
    let is_attached = |v: &u32| attached.contains(v);
    let kept: Vec<Vec<u32>> = groups.iter().map(|g| g.iter().copied().filter(is_attached).collect()).collect();
    let mut added: Vec<u32> = attached.iter().copied().filter(|v| !groups.iter().any(|g| g.contains(v))).collect();
    added.sort_unstable();
    added.dedup();
    let (pins, grips) = kept.split_first().map_or((&[][..], &[][..]), |(p, g)| (p.as_slice(), g));
    let pins_changed = pins.len() != groups[0].len();
    if cloth.pin_motion == Motion::Fixed && !added.is_empty() {
        let mut all = [pins, &added].concat();
        all.sort_unstable();
        cloth.pins = vec![PinSelector::Indices(all)];
    } else if pins_changed {
        cloth.pins = vec![PinSelector::Indices(pins.to_vec())];
    }
    for ((grip, kept), described) in cloth.grips.iter_mut().zip(grips).zip(&groups[1..]) {
        if kept.len() != described.len() {
            grip.at = vec![PinSelector::Indices(kept.clone())];
        }
    }
    if cloth.pin_motion != Motion::Fixed && !added.is_empty() {
        cloth.grips.push(Grip { at: vec![PinSelector::Indices(added)], motion: Motion::Fixed });
    }
}

/// The vertices each attachment group of `cloth` holds as built — its pins first, then each grip — without
/// the vertices an earlier group already holds (the builder's rule); `None` if the cloth cannot be built.
fn described_groups(cloth: &ClothDesc) -> Option<Vec<Vec<u32>>> {
    let built = build_cloth(cloth).ok()?;
    let (uvs, count) = (&built.mesh.uvs, built.particles.len());
    let mut taken: Vec<u32> = Vec::new();
    let selectors = std::iter::once(&cloth.pins).chain(cloth.grips.iter().map(|g| &g.at));
    Some(
        selectors
            .map(|at| {
                let group: Vec<u32> =
                    select_vertices(uvs, count, at).into_iter().filter(|v| !taken.contains(v)).collect();
                taken.extend(&group);
                group
            })
            .collect(),
    )
}
