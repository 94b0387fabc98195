//! `drape_coefficient`: the Cusick drape test (BS 5058, ISO 9073-9). A 30 cm disk of cloth is clamped between
//! two 18 cm disks (here: its vertices within 9 cm of the centre pinned) and drapes under its own weight into
//! folds; the drape coefficient is DC = (A_shadow − A_clamp) / (A_specimen − A_clamp), the share of the overhanging
//! ring its shadow still covers seen from above: 1 for a rigid disk, near 0 for one hanging straight down. Measured
//! fabrics lie between 0.3 and 0.9. The shadow is rasterised at 1 mm, and the specimen's area is its flat shadow
//! on the same raster, so a rigid disk scores exactly 1.
//!
//! The specimen's stretch and bending are solved together (`SimParams::global_stretch`, `global_bending`): for
//! its skirt to fall, the disk's outer rings must fold rather than shorten, and Gauss–Seidel sweeps leave them
//! shortened, more so the more rings they cross, so the swept drape depended on the passes and the resolution
//! more than on the bending (docs/fidelity.md).

use bevy::math::{Vec2, Vec3};

use super::{Check, Scorecard, cloth_scene, params, settle};
use drape::scene::desc::{ClothShape, PinSelector, Placement, SceneDesc};
use drape::sim::SimParams;
use drape::sim::cloth::ClothMaterial;
use drape::sim::mesh::disk;
use drape::sim::params::Solver;

/// The specimen's radius, metres.
const SPECIMEN: f32 = 0.15;
/// The clamp's radius, metres.
const CLAMP: f32 = 0.09;
/// The raster's pixel, metres.
const PIXEL: f32 = 0.001;
/// Areal density, kg/m².
const DENSITY: f32 = 0.2;
/// The specimen's stretch compliance per edge, m/N: a light fabric's tensile stiffness (about 100 N/m), under which
/// its own weight stretches it by 0.1 %. A nearly inextensible triangle mesh locks: at 10⁻⁴ m/N its coarser
/// meshes fold less (membrane locking), and DC depends on the resolution again.
const TENSILE: f32 = 0.01;
/// XPBD bending compliances from the softest to the stiffest, rad/(N·m).
const COMPLIANCES: [f32; 3] = [100_000.0, 30_000.0, 10_000.0];
/// The two resolutions, rings of the disk (1 cm and 6.25 mm apart).
const RINGS: [u32; 2] = [15, 24];
/// Largest difference of DC between the two resolutions.
const CONVERGENCE: f64 = 0.03;
/// The range of DC measured fabrics show.
const FABRICS: (f64, f64) = (0.3, 0.9);

/// The specimen with `rings` rings and bending compliance `compliance`, clamped at 1 m.
pub fn scene(rings: u32, compliance: f32) -> Result<SceneDesc, String> {
    let mesh = disk(SPECIMEN, rings).map_err(|e| e.to_string())?;
    let clamped = (mesh.positions.iter().enumerate())
        .filter(|(_, q)| Vec2::new(q.x, q.z).length() <= CLAMP + 1e-4)
        .map(|(i, _)| i as u32)
        .collect();
    let material = ClothMaterial {
        density: DENSITY,
        stretch_compliance: TENSILE,
        bend_compliance: compliance,
        ..Default::default()
    };
    let swept = params(Solver::Xpbd, (10, 10), 0.1, Vec3::NEG_Y * 9.81);
    Ok(cloth_scene(
        "cusick",
        SimParams { global_stretch: true, global_bending: true, ..swept },
        ClothShape::Disk { radius: SPECIMEN, rings },
        Placement::at(Vec3::Y),
        vec![PinSelector::Indices(clamped)],
        material,
    ))
}

/// The area, m², that the triangles `triangles` over `x` cover seen from above (along Y), on a raster of
/// [`PIXEL`] over the specimen's square.
pub fn shadow_area(x: &[Vec3], triangles: &[[u32; 3]]) -> f64 {
    let side = (2.0 * SPECIMEN / PIXEL).ceil() as usize;
    let mut covered = vec![false; side * side];
    let pixel_of = |v: f32| ((v + SPECIMEN) / PIXEL).floor();
    for t in triangles {
        let [a, b, c] = t.map(|i| x.get(i as usize).map_or(Vec2::ZERO, |q| Vec2::new(q.x, q.z)));
        let (lo, hi) = (a.min(b).min(c), a.max(b).max(c));
        let (i0, i1) = (pixel_of(lo.x).max(0.0) as usize, (pixel_of(hi.x) as usize).min(side - 1));
        let (j0, j1) = (pixel_of(lo.y).max(0.0) as usize, (pixel_of(hi.y) as usize).min(side - 1));
        let area = (b - a).perp_dot(c - a);
        if area == 0.0 || !area.is_finite() {
            continue;
        }
        for j in j0..=j1 {
            for i in i0..=i1 {
                let q = Vec2::new((i as f32 + 0.5) * PIXEL - SPECIMEN, (j as f32 + 0.5) * PIXEL - SPECIMEN);
                // barycentric signs, all the triangle's orientation
                let inside = [(a, b), (b, c), (c, a)].iter().all(|&(p, r)| (r - p).perp_dot(q - p) * area >= 0.0);
                if inside {
                    covered[j * side + i] = true;
                }
            }
        }
    }
    covered.iter().filter(|&&c| c).count() as f64 * f64::from(PIXEL * PIXEL)
}

/// The drape coefficient of the specimen with `rings` rings and bending compliance `compliance` after 4 s.
pub fn drape_coefficient(rings: u32, compliance: f32) -> Result<f64, String> {
    let mesh = disk(SPECIMEN, rings).map_err(|e| e.to_string())?;
    let flat = shadow_area(&mesh.positions, &mesh.triangles);
    let draped = settle(scene(rings, compliance)?, 240)?;
    if !draped.x.iter().all(|q| q.is_finite()) {
        return Err(format!("the specimen of {rings} rings at α = {compliance} went non-finite"));
    }
    let clamp = std::f64::consts::PI * f64::from(CLAMP * CLAMP);
    Ok((shadow_area(&draped.x, &mesh.triangles) - clamp) / (flat - clamp))
}

/// DC for three stiffnesses at two resolutions: within the fabrics' range, rising with the stiffness, and within
/// [`CONVERGENCE`] between the resolutions.
pub fn check(card: &mut Scorecard) {
    let mut found: Vec<[f64; 2]> = Vec::new();
    for compliance in COMPLIANCES {
        let dc = RINGS.map(|rings| drape_coefficient(rings, compliance).unwrap_or(f64::NAN));
        for (rings, dc) in RINGS.iter().zip(dc) {
            card.report(format!("drape_coefficient/alpha_{compliance}/{rings}_rings"), dc, "DC");
        }
        let name = format!("drape_coefficient/alpha_{compliance}");
        let (low, high) = FABRICS;
        let middle = 0.5 * (low + high);
        card.checks.push(Check::new(format!("{name}/in_fabric_range"), dc[1], middle, (high - low) / (2.0 * middle)));
        card.checks.push(Check::at_most(format!("{name}/resolution_change"), (dc[1] - dc[0]).abs(), CONVERGENCE));
        found.push(dc);
    }
    // every rise from one stiffness to the next must be positive (a scene that failed to run gives NaN, and fails)
    let rises: Vec<f64> = found.windows(2).map(|w| w[1][1] - w[0][1]).collect();
    let smallest = rises.iter().copied().reduce(|a, b| if a.is_nan() || b.is_nan() { f64::NAN } else { a.min(b) });
    let (name, pass) = ("drape_coefficient/smallest_rise_with_stiffness".to_string(), rises.iter().all(|r| *r > 0.0));
    card.checks.push(Check { name, measured: smallest.unwrap_or(f64::NAN), reference: 0.0, tolerance: 0.0, pass });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shadow_of_a_flat_disk_is_its_area_and_a_hanging_one_casts_almost_none() {
        let mesh = disk(SPECIMEN, 20).unwrap();
        let flat = shadow_area(&mesh.positions, &mesh.triangles);
        let circle = std::f64::consts::PI * f64::from(SPECIMEN * SPECIMEN);
        assert!((flat / circle - 1.0).abs() < 0.01, "{flat} vs {circle}");
        // the overhang folded straight down beside the clamp: its shadow is the clamp's disk and a thin rim
        let hanging: Vec<Vec3> = (mesh.positions.iter())
            .map(|q| {
                let r = Vec2::new(q.x, q.z).length();
                if r <= CLAMP { *q } else { Vec3::new(q.x * CLAMP / r, CLAMP - r, q.z * CLAMP / r) }
            })
            .collect();
        let clamp = std::f64::consts::PI * f64::from(CLAMP * CLAMP);
        let dc = (shadow_area(&hanging, &mesh.triangles) - clamp) / (flat - clamp);
        assert!((0.0..0.03).contains(&dc), "{dc}");
    }
}
