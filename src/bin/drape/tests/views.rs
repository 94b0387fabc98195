//! What the views and exports show is what the solver has: strain colours against l/l₀ − 1 computed here, and
//! the OBJ export read back by drape's own reader and by `tobj`.

use crate::render::views::{ViewMode, ViewsPlugin, strain};
use bevy::asset::AssetPlugin;
use bevy::mesh::VertexAttributeValues;
use bevy::prelude::*;
use drape::headless::{headless_app_with, run_then};
use drape::input::UiCapture;
use drape::mesh_sync::ClothMeshPlugin;
use drape::scene::preset;
use drape::sim::cloth::{ClothMesh, Particles, StretchConstraints};
use drape::sim::{SimControl, SimParams};

/// A paused `hanging_sheet` in the strain view, with render meshes.
fn strain_view() -> App {
    let mut app = headless_app_with(preset::load("hanging_sheet").unwrap(), |app| {
        app.add_plugins((AssetPlugin::default(), ClothMeshPlugin, ViewsPlugin))
            .init_asset::<StandardMaterial>()
            .init_resource::<ButtonInput<KeyCode>>()
            .init_resource::<UiCapture>()
            .insert_resource(ViewMode::Strain);
    });
    app.world_mut().resource_mut::<SimControl>().paused = true;
    // red at 50 % stretch (the preset's own threshold, 2, would put red at 100 %)
    app.world_mut().resource_mut::<SimParams>().tear_threshold = 1.5;
    app.update();
    app
}

/// The render mesh's vertex colours of the only cloth.
fn vertex_colors(app: &mut App) -> Vec<[f32; 4]> {
    let handle = app.world_mut().query::<&Mesh3d>().single(app.world()).unwrap().0.clone();
    let meshes = app.world().resource::<Assets<Mesh>>();
    match meshes.get(&handle).unwrap().attribute(Mesh::ATTRIBUTE_COLOR) {
        Some(VertexAttributeValues::Float32x4(c)) => c.clone(),
        other => panic!("no vertex colours: {other:?}"),
    }
}

#[test]
fn at_rest_every_vertex_is_white() {
    let mut app = strain_view();
    let colors = vertex_colors(&mut app);
    assert!(colors.len() > 1000);
    assert!(colors.iter().all(|&c| c == [1.0; 4]), "{:?}", colors.iter().find(|&&c| c != [1.0; 4]));
}

#[test]
fn a_stretched_sheet_is_coloured_by_its_strain_within_one_step() {
    let mut app = strain_view();
    // stretch the sheet by 30 % across and not at all down: edges from 0 (vertical) to 0.3 (horizontal), vertex
    // means about 0.15
    let expected: Vec<f32> = {
        let world = app.world_mut();
        let (mut particles, stretch) =
            world.query::<(&mut Particles, &StretchConstraints)>().single_mut(world).unwrap();
        let left = particles.x.iter().map(|p| p.x).fold(f32::INFINITY, f32::min);
        for p in particles.x.iter_mut() {
            p.x = left + (p.x - left) * 1.3;
        }
        let mut sum = vec![(0.0f32, 0u32); particles.len()];
        for (&[a, b], &l0) in stretch.edges().iter().zip(stretch.rest_length()) {
            let s = particles.x[a as usize].distance(particles.x[b as usize]) / l0 - 1.0;
            for v in [a, b] {
                sum[v as usize].0 += s;
                sum[v as usize].1 += 1;
            }
        }
        sum.iter().map(|&(s, n)| s / n as f32).collect()
    };
    app.update();
    let scale = strain::scale(app.world().resource::<SimParams>().tear_threshold);
    let step = scale / strain::STEPS as f32;
    let colors = vertex_colors(&mut app);
    assert_eq!(colors.len(), expected.len());
    let mut reddest = 0;
    for (v, (&c, &s)) in colors.iter().zip(&expected).enumerate() {
        let shown = strain::band_of_color(c) as f32 * step;
        assert!((shown - s.min(scale)).abs() <= step, "vertex {v}: strain {s}, colour {c:?} reads {shown}");
        reddest = reddest.max(strain::band_of_color(c));
    }
    let most = expected.iter().copied().fold(0.0f32, f32::max);
    assert!(reddest >= 2 && (reddest as f32 * step - most).abs() <= step, "most strain {most} shown as band {reddest}");
}

#[test]
fn an_exported_tablecloth_reads_back_the_same_in_two_readers() {
    let path = std::env::temp_dir().join(format!("drape-export-{}.obj", std::process::id()));
    let desc = preset::load("tablecloth").unwrap();
    let (_, (x, triangles)) = run_then(
        desc,
        120,
        |_| {},
        |world| {
            drape::export::obj::save_obj(&path, &drape::export::cloth_surfaces(world))?;
            let (p, m) = world.query::<(&Particles, &ClothMesh)>().single(world).map_err(|e| e.to_string())?;
            Ok((p.x.clone(), m.triangles.clone()))
        },
    )
    .unwrap();
    let text = std::fs::read_to_string(&path).unwrap();

    let ours = drape::scene::obj::parse(&text, "export.obj").unwrap();
    assert_eq!(ours.positions.len(), x.len());
    assert!(ours.positions.iter().zip(&x).all(|(a, b)| a.distance(*b) <= 1e-6));
    assert_eq!(ours.triangles, triangles);

    let options = tobj::LoadOptions { triangulate: true, single_index: false, ..Default::default() };
    let (models, _) = tobj::load_obj(&path, &options).unwrap();
    assert_eq!(models.len(), 1);
    let mesh = &models[0].mesh;
    // tobj numbers the vertices in the order the faces first use them: map its numbers back to ours through
    // the triangles, then every vertex must sit where the simulation has it
    assert_eq!(mesh.positions.len(), 3 * x.len());
    assert_eq!(mesh.indices.len(), 3 * triangles.len());
    let mut ours_of = vec![u32::MAX; x.len()];
    for (theirs, ours) in mesh.indices.iter().zip(triangles.iter().flatten()) {
        let slot = &mut ours_of[*theirs as usize];
        assert!(*slot == u32::MAX || *slot == *ours, "tobj vertex {theirs} is two of ours");
        *slot = *ours;
    }
    for (p, &ours) in mesh.positions.chunks(3).zip(&ours_of) {
        assert!(Vec3::new(p[0], p[1], p[2]).distance(x[ours as usize]) <= 1e-6);
    }
    assert_eq!(mesh.texcoords.len(), 2 * x.len());
    assert_eq!(mesh.normals.len(), 3 * x.len());
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn sixty_frames_of_flag_as_gltf_load_back_with_the_last_frame_exact() {
    let path = std::env::temp_dir().join(format!("drape-export-{}.glb", std::process::id()));
    let desc = preset::load("flag").unwrap();
    let record = |app: &mut App| {
        app.add_plugins(drape::replay::ReplayPlugin);
    };
    let (_, x) = run_then(desc, 60, record, |world| {
        let steps: Vec<_> = world.resource::<drape::replay::Recording>().steps().iter().cloned().collect();
        drape::export::gltf::save_glb(&path, &steps)?;
        let p = world.query::<&Particles>().single(world).map_err(|e| e.to_string())?;
        Ok(p.x.clone())
    })
    .unwrap();
    let bytes = std::fs::read(&path).unwrap();
    // from_slice parses the GLB container and validates the whole document
    let gltf = gltf::Gltf::from_slice(&bytes).unwrap();
    let blob = gltf.blob.as_deref();
    assert_eq!(gltf.nodes().count(), 60);
    assert_eq!(gltf.scenes().next().unwrap().nodes().count(), 60);
    let animation = gltf.animations().next().unwrap();
    assert_eq!(animation.channels().count(), 60);
    // the last node is shown from the last frame's time on
    let last = gltf.nodes().last().unwrap();
    let primitive = last.mesh().unwrap().primitives().next().unwrap();
    let reader = primitive.reader(|_| blob);
    let positions: Vec<[f32; 3]> = reader.read_positions().unwrap().collect();
    assert_eq!(positions.len(), x.len());
    assert!(positions.iter().zip(&x).all(|(p, q)| Vec3::from(*p).distance(*q) <= 1e-6));
    let triangles = reader.read_indices().unwrap().into_u32().count() / 3;
    assert!(triangles > 1000, "{triangles} triangles");
    let channel = animation.channels().last().unwrap();
    assert_eq!(channel.target().node().index(), last.index());
    let times: Vec<f32> = channel.reader(|_| blob).read_inputs().unwrap().collect();
    assert!((times.last().unwrap() - 59.0 / 60.0).abs() < 1e-4, "{times:?}");
    std::fs::remove_file(&path).unwrap();
}
