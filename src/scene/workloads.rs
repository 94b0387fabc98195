//! The benchmark workloads as scenes: the grids `drape bench` times and the tests measure, so that a library
//! user can run the same workloads headless ([`crate::headless`]).

use bevy::math::Vec3;

use crate::scene::desc::{ClothDesc, ClothShape, ColliderDesc, PinSelector, Placement, SceneDesc};
use crate::scene::preset;
use crate::sim::SimParams;
use crate::sim::cloth::ClothMaterial;
use crate::sim::constraints::bend::BendingModel;

/// The reference workload `grid_distance`: an N×N-quad sheet of 1 m × 1 m hanging in a vertical plane from its
/// two top corners (top edge at y = 1.5 m), one stretch constraint per triangle edge with k = 1, distance
/// bending with k = 1 between the opposite vertices of each adjacent triangle pair, 15 substeps × 1 iteration
/// per 1/60 s frame, gravity −10 m/s², no damping, no air, no collisions but a ground plane.
pub fn grid_distance(n: u32) -> SceneDesc {
    SceneDesc {
        name: format!("grid_distance_{n}"),
        params: SimParams {
            iterations: 1,
            substeps: 15,
            rate_hz: 60.0,
            gravity: Vec3::new(0.0, -10.0, 0.0),
            damping: 0.0,
            air_drag: 0.0,
            bending_model: BendingModel::Distance,
            ..SimParams::default()
        },
        cloths: vec![ClothDesc {
            name: "sheet".into(),
            shape: ClothShape::Grid { cols: n, rows: n, width: 1.0, depth: 1.0 },
            placement: Placement { translation: Vec3::new(0.0, 1.0, 0.0), rotation_degrees: Vec3::new(90.0, 0.0, 0.0) },
            pins: vec![PinSelector::At { u: 0.0, v: 0.0 }, PinSelector::At { u: 1.0, v: 0.0 }],
            material: ClothMaterial { stretch_stiffness: 1.0, bend_stiffness: 1.0, ..ClothMaterial::default() },
            ..ClothDesc::default()
        }],
        colliders: vec![ColliderDesc::ground()],
        ..SceneDesc::default()
    }
}

/// The real-time target workload `grid_dihedral`: the hanging sheet (a grid whose triangle edges are the
/// stretch and shear constraints) with the paper's dihedral bending, `n`×`n` quads, 10 iterations × 1 substep.
pub fn grid_dihedral(n: u32) -> Result<SceneDesc, String> {
    let mut desc = sheet(n, 10, 1)?;
    desc.name = format!("grid_dihedral_{n}");
    Ok(desc)
}

/// The grid workloads `drape bench --workload NAME --grid N` knows.
pub(crate) const WORKLOADS: [&str; 3] = ["grid_distance", "grid_dihedral", "sheet"];

/// The scene of workload `name`: a grid workload at `n`×`n` quads, or a shipped preset as it is (the contact
/// workloads compared with Jolt: `mannequin`, `tablecloth`, `pile`, `layers`).
pub fn workload(name: &str, n: u32) -> Result<SceneDesc, String> {
    match name {
        "grid_distance" => Ok(grid_distance(n)),
        "grid_dihedral" => grid_dihedral(n),
        "sheet" => sheet(n, 4, 8),
        preset_name if preset::names().iter().any(|known| known == preset_name) => {
            preset::load(preset_name).map_err(|e| e.to_string())
        }
        other => Err(format!("unknown workload '{other}'; known: {} and the presets", WORKLOADS.join(", "))),
    }
}

/// `desc` with the parallel projection switched on or off.
pub fn with_parallel(mut desc: SceneDesc, parallel: bool) -> SceneDesc {
    desc.params.parallel = parallel;
    desc
}

/// The app's default cloth (the hanging sheet, dihedral bending) at `n`×`n` quads with the given solver counts.
pub fn sheet(n: u32, iterations: u32, substeps: u32) -> Result<SceneDesc, String> {
    let mut desc = preset::load("hanging_sheet").map_err(|e| e.to_string())?;
    desc.name = format!("sheet_{n}");
    desc.params.iterations = iterations;
    desc.params.substeps = substeps;
    for c in &mut desc.cloths {
        c.shape = ClothShape::Grid { cols: n, rows: n, width: 2.0, depth: 2.0 };
    }
    Ok(desc)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_preset_is_a_workload_by_name_and_an_unknown_name_is_refused() {
        let tablecloth = workload("tablecloth", 0).expect("a shipped preset");
        assert_eq!(tablecloth, preset::load("tablecloth").expect("it loads"));
        let e = workload("tablecloth.ron", 0).expect_err("a path is not a workload");
        assert!(e.contains("unknown workload 'tablecloth.ron'") && e.contains("grid_distance"), "{e}");
        assert_eq!(workload("grid_distance", 8).map(|d| d.name), Ok("grid_distance_8".into()));
    }

    #[test]
    fn grid_distance_matches_its_definition() {
        let desc = grid_distance(8);
        let built = crate::scene::spawn::build_scene(&desc).unwrap();
        let cloth = &built.cloths[0].bundle;
        assert_eq!(cloth.particles.len(), 81);
        let top = cloth.particles.x.iter().map(|x| x.y).fold(f32::MIN, f32::max);
        assert!((top - 1.5).abs() < 1e-5, "top edge at {top}");
        let pinned: Vec<Vec3> = cloth.attachments.0.iter().map(|a| a.anchor).collect();
        assert_eq!(pinned.len(), 2);
        assert!(pinned.iter().all(|p| (p.y - 1.5).abs() < 1e-5), "pins must be the two top corners");
    }
}
