//! View modes: what the cloth's surface shows (its fabric, its strain, or a muted grey under an overlay) and
//! which overlay is drawn over it (edges, constraints, contacts, particles, the parallel solver's colouring).
//! Everything here runs on the render side from data the solver keeps anyway, after the frame's steps; with the
//! shaded view nothing of it runs at all.

pub mod geometry;
pub mod strain;

use bevy::asset::RenderAssetUsages;
use bevy::camera::visibility::NoFrustumCulling;
use bevy::light::NotShadowCaster;
use bevy::mesh::{PrimitiveTopology, VertexAttributeValues};
use bevy::prelude::*;

use self::geometry::Overlay;
use super::visuals::ClothSides;
use drape::input::UiCapture;
use drape::sim::cloth::{
    BendConstraints, ClothMesh, Contacts, Grabbed, Particles, SelfCollision, StretchConstraints, Tethers,
};
use drape::sim::{PbdStage, SimParams};

/// What the window shows of every cloth. Keys 1–7 choose it, in this order.
#[derive(Resource, Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ViewMode {
    /// The lit fabric.
    #[default]
    Shaded,
    /// Each vertex coloured by the strain of its edges: blue compressed, white at rest, red at the tear threshold.
    Strain,
    /// The fabric with every edge drawn over it.
    Wireframe,
    /// The bending pairs (orange) and tethers (blue) as lines.
    Constraints,
    /// Contacts of the last step with their normals: colliders (yellow), self collision (magenta).
    Contacts,
    /// A dot per particle, sized by mass; pinned ones yellow, the grabbed one cyan.
    Particles,
    /// Every stretch constraint in its colour of the parallel solver's graph colouring.
    Colours,
}

/// The surface a view draws under its overlay.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Surface {
    /// The lit fabric texture in the cloth's colours.
    Fabric,
    /// White, lit, multiplied by the strain colours.
    Strain,
    /// A plain dark grey, so the overlay's colours stand out.
    Muted,
}

impl ViewMode {
    /// Every mode, in key order (1–7).
    pub const ALL: [ViewMode; 7] = [
        ViewMode::Shaded,
        ViewMode::Strain,
        ViewMode::Wireframe,
        ViewMode::Constraints,
        ViewMode::Contacts,
        ViewMode::Particles,
        ViewMode::Colours,
    ];

    /// The name shown in the panel.
    pub fn label(self) -> &'static str {
        match self {
            ViewMode::Shaded => "Shaded",
            ViewMode::Strain => "Strain",
            ViewMode::Wireframe => "Wireframe",
            ViewMode::Constraints => "Constraints",
            ViewMode::Contacts => "Contacts",
            ViewMode::Particles => "Particles",
            ViewMode::Colours => "Colours",
        }
    }

    /// The surface under the overlay.
    pub fn surface(self) -> Surface {
        match self {
            ViewMode::Shaded | ViewMode::Wireframe => Surface::Fabric,
            ViewMode::Strain => Surface::Strain,
            _ => Surface::Muted,
        }
    }

    /// Whether the mode draws an overlay.
    pub fn has_overlay(self) -> bool {
        !matches!(self, ViewMode::Shaded | ViewMode::Strain)
    }
}

/// The overlay meshes of a cloth: line segments and dots, drawn by two children of the cloth.
#[derive(Component)]
pub struct OverlayMeshes {
    lines: (Entity, Handle<Mesh>),
    dots: (Entity, Handle<Mesh>),
}

/// View modes: the [`ViewMode`] resource, keys 1–7, the surfaces and overlays. Part of the demo's render plugin.
pub struct ViewsPlugin;

impl Plugin for ViewsPlugin {
    fn build(&self, app: &mut App) {
        let has_overlay = |mode: Res<ViewMode>| mode.has_overlay();
        app.init_resource::<ViewMode>().add_systems(Update, choose_view_by_key).add_systems(
            PostUpdate,
            (
                show_surface,
                color_by_strain.run_if(resource_equals(ViewMode::Strain)),
                remove_overlays.run_if(resource_changed::<ViewMode>),
                draw_overlays.run_if(has_overlay),
            )
                .chain()
                .after(PbdStage::MeshSync)
                .after(super::visuals::add_cloth_visuals)
                .before(bevy::transform::TransformSystems::Propagate),
        );
    }
}

/// Keys 1–7 choose the view (unless the panel has the keyboard).
fn choose_view_by_key(keys: Res<ButtonInput<KeyCode>>, capture: Res<UiCapture>, mut mode: ResMut<ViewMode>) {
    const KEYS: [KeyCode; 7] = [
        KeyCode::Digit1,
        KeyCode::Digit2,
        KeyCode::Digit3,
        KeyCode::Digit4,
        KeyCode::Digit5,
        KeyCode::Digit6,
        KeyCode::Digit7,
    ];
    if capture.keyboard {
        return;
    }
    if let Some(k) = KEYS.iter().position(|&key| keys.just_pressed(key)) {
        mode.set_if_neq(ViewMode::ALL[k]);
    }
}

/// Gives both sides of every cloth the material of the view's surface when the view changes or a cloth appears;
/// drops the strain colours from the mesh when leaving the strain view.
fn show_surface(
    mode: Res<ViewMode>,
    cloths: Query<(Ref<ClothSides>, &Mesh3d)>,
    mut materials: ResMut<Assets<StandardMaterial>>,
    mut meshes: ResMut<Assets<Mesh>>,
) {
    for (sides, mesh) in &cloths {
        if !mode.is_changed() && !sides.is_added() {
            continue;
        }
        for (handle, shaded) in [(&sides.front, &sides.shaded[0]), (&sides.back, &sides.shaded[1])] {
            let Some(mut material) = materials.get_mut(handle) else { continue };
            *material = shaded.clone();
            if mode.surface() != Surface::Fabric {
                material.base_color_texture = None;
                material.base_color =
                    if mode.surface() == Surface::Strain { Color::WHITE } else { Color::srgb(0.22, 0.23, 0.25) };
            }
        }
        if *mode != ViewMode::Strain
            && let Some(mut mesh) = meshes.get_mut(&mesh.0)
        {
            mesh.remove_attribute(Mesh::ATTRIBUTE_COLOR);
        }
    }
}

/// Writes every cloth's strain colours into its mesh (the lit white surface multiplies them).
fn color_by_strain(
    params: Res<SimParams>,
    cloths: Query<(&Particles, &StretchConstraints, &Mesh3d)>,
    mut meshes: ResMut<Assets<Mesh>>,
    mut scratch: Local<(Vec<f32>, Vec<u32>)>,
) {
    let scale = strain::scale(params.tear_threshold);
    let (strains, counts) = &mut *scratch;
    for (particles, stretch, mesh) in &cloths {
        let Some(mut mesh) = meshes.get_mut(&mesh.0) else { continue };
        strain::vertex_strains(&particles.x, stretch.edges(), stretch.rest_length(), strains, counts);
        let colors = strains.iter().map(|&s| strain::band_color(strain::band(s, scale)));
        match mesh.try_attribute_mut(Mesh::ATTRIBUTE_COLOR) {
            Ok(VertexAttributeValues::Float32x4(old)) if old.len() == strains.len() => {
                old.iter_mut().zip(colors).for_each(|(dst, c)| *dst = c);
            }
            _ => mesh.insert_attribute(Mesh::ATTRIBUTE_COLOR, colors.collect::<Vec<_>>()),
        }
    }
}

/// Despawns every overlay when the view changes (the next frame builds the new view's).
fn remove_overlays(mut commands: Commands, cloths: Query<(Entity, &OverlayMeshes)>) {
    for (cloth, overlay) in &cloths {
        commands.entity(overlay.lines.0).despawn();
        commands.entity(overlay.dots.0).despawn();
        commands.entity(cloth).remove::<OverlayMeshes>();
    }
}

type OverlaySources<'a> = (
    Entity,
    &'a Particles,
    &'a ClothMesh,
    &'a StretchConstraints,
    &'a BendConstraints,
    &'a Tethers,
    &'a Contacts,
    &'a SelfCollision,
    Option<&'a Grabbed>,
    Option<&'a OverlayMeshes>,
);

/// Builds the view's overlay of every cloth and copies it into the cloth's overlay meshes (made on first use).
fn draw_overlays(
    mode: Res<ViewMode>,
    mut commands: Commands,
    cloths: Query<OverlaySources>,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
    mut drawing: Local<(Option<Handle<StandardMaterial>>, Overlay)>,
    cameras: Query<&GlobalTransform, With<Camera3d>>,
) {
    let eye = cameras.iter().next().map_or(Vec3::ZERO, |c| c.translation());
    // every point slides a little along its line of sight towards the eye: it stays on the same pixel and wins
    // the depth test against the surface it lies on (a depth bias is not allowed for lines)
    let lift = |p: &[f32; 3]| Vec3::from(*p).lerp(eye, LIFT).to_array();
    let (material, overlay) = &mut *drawing;
    let material = material
        .get_or_insert_with(|| materials.add(StandardMaterial { unlit: true, cull_mode: None, ..default() }))
        .clone();
    for (cloth, particles, mesh, stretch, bend, tethers, contacts, own, grabbed, meshes_of) in &cloths {
        let x = &particles.x;
        let mean_edge = stretch.rest_length().iter().sum::<f32>() / stretch.len().max(1) as f32;
        overlay.clear();
        match *mode {
            ViewMode::Wireframe => geometry::wireframe(overlay, x, stretch.edges()),
            ViewMode::Constraints => {
                let set = &tethers.set;
                geometry::constraints(overlay, x, bend.quads(), &set.start, &set.anchor);
            }
            ViewMode::Contacts => geometry::contacts(overlay, x, contacts, &own.contacts, &mesh.triangles, mean_edge),
            ViewMode::Particles => {
                let grabbed = grabbed.map(|g| g.vertex);
                geometry::particles(overlay, x, &particles.mass, &particles.w, grabbed, 0.18 * mean_edge);
            }
            ViewMode::Colours => geometry::colours(overlay, x, stretch.edges(), stretch.color_offsets()),
            ViewMode::Shaded | ViewMode::Strain => {}
        }
        let Some(targets) = meshes_of else {
            let mut part = |topology| {
                let handle = meshes.add(Mesh::new(topology, RenderAssetUsages::default()));
                let entity = commands
                    .spawn((
                        Mesh3d(handle.clone()),
                        MeshMaterial3d(material.clone()),
                        NoFrustumCulling,
                        NotShadowCaster,
                        ChildOf(cloth),
                    ))
                    .id();
                (entity, handle)
            };
            let (lines, dots) = (part(PrimitiveTopology::LineList), part(PrimitiveTopology::TriangleList));
            commands.entity(cloth).insert(OverlayMeshes { lines, dots });
            continue;
        };
        if let Some(mut m) = meshes.get_mut(&targets.lines.1) {
            fill(&mut m, overlay.lines.iter().map(lift), &overlay.line_colors, 2);
        }
        if let Some(mut m) = meshes.get_mut(&targets.dots.1) {
            fill(&mut m, overlay.dots.iter().map(lift), &overlay.dot_colors, 3);
        }
    }
}

/// The share of its distance to the eye by which an overlay point is drawn nearer (2 cm at 10 m).
const LIFT: f32 = 0.002;

/// Copies positions and colours into `mesh`, reusing its buffers; an empty list becomes one degenerate primitive
/// of `corners` points (a mesh needs vertices).
fn fill(mesh: &mut Mesh, positions: impl ExactSizeIterator<Item = [f32; 3]>, colors: &[[f32; 4]], corners: usize) {
    const COLORS: [[f32; 4]; 3] = [[0.0, 0.0, 0.0, 1.0]; 3];
    let empty = positions.len() == 0;
    let positions = positions.chain(std::iter::repeat_n([0.0; 3], if empty { corners } else { 0 }));
    let colors = if empty { &COLORS[..corners] } else { colors };
    match mesh.try_attribute_mut(Mesh::ATTRIBUTE_POSITION) {
        Ok(VertexAttributeValues::Float32x3(old)) => {
            old.clear();
            old.extend(positions);
        }
        _ => mesh.insert_attribute(Mesh::ATTRIBUTE_POSITION, positions.collect::<Vec<_>>()),
    }
    match mesh.try_attribute_mut(Mesh::ATTRIBUTE_COLOR) {
        Ok(VertexAttributeValues::Float32x4(old)) => {
            old.clear();
            old.extend_from_slice(colors);
        }
        _ => mesh.insert_attribute(Mesh::ATTRIBUTE_COLOR, colors.to_vec()),
    }
}
