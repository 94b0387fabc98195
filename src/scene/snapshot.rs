//! "Save current as preset": the running scene as a [`SceneDesc`] — its description with the live parameters,
//! each cloth's live material, and the pins as they are now (pins added or removed with Shift+click become an
//! index list).

use super::desc::{PinSelector, SceneDesc};
use super::spawn::build_cloth;
use crate::sim::SimParams;
use crate::sim::cloth::ClothMaterial;

/// The live state of one cloth: its name, material and the vertices pinned in place.
pub struct LiveCloth {
    /// The cloth's name, as in the scene description.
    pub name: String,
    /// Its material as set now.
    pub material: ClothMaterial,
    /// Indices of the vertices pinned now.
    pub pinned: Vec<u32>,
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
        let mut pinned = live.pinned.clone();
        pinned.sort_unstable();
        let described: Option<Vec<u32>> =
            build_cloth(cloth).ok().map(|b| b.attachments.0.iter().map(|a| a.vertex).collect());
        if described.as_ref() != Some(&pinned) {
            cloth.pins = vec![PinSelector::Indices(pinned)];
        }
    }
    desc
}
