//! Skinned characters on screen: Bevy's glTF loader draws each [`SkinnedCharacter`]'s file and its
//! `AnimationPlayer` plays the clips, held to the cloth's clock. Every frame the player is sought to the time the
//! physics posed the character at, with the same cross-fade weights, and the character is moved to where its
//! motion has it then: the body drawn is the body the cloth touched.

use bevy::animation::graph::{AnimationGraph, AnimationGraphHandle, AnimationNodeIndex};
use bevy::animation::{AnimationClip, AnimationPlayer};
use bevy::gltf::GltfAssetLabel;
use bevy::prelude::*;
use bevy::world_serialization::WorldAssetRoot;

use drape::scene::spawn::CharacterFile;
use drape::sim::SimClock;
use drape::skinning::SkinnedCharacter;

/// Registers the components a glTF scene spawns with, for the world spawner to copy them: drape builds Bevy
/// without `reflect_auto_register`, which would register every reflected type at start-up.
pub fn register_gltf_components(app: &mut App) {
    use bevy::animation::{AnimatedBy, AnimationTargetId};
    use bevy::camera::primitives::Aabb;
    use bevy::camera::visibility::{DynamicSkinnedMeshBounds, NoFrustumCulling, VisibilityClass};
    use bevy::gltf::{GltfExtras, GltfMaterialName, GltfMeshName, GltfSceneName};
    use bevy::mesh::skinning::SkinnedMesh;
    use bevy::transform::components::TransformTreeChanged;
    app.register_type::<Transform>()
        .register_type::<GlobalTransform>()
        .register_type::<TransformTreeChanged>()
        .register_type::<VisibilityClass>()
        .register_type::<Visibility>()
        .register_type::<InheritedVisibility>()
        .register_type::<ViewVisibility>()
        .register_type::<Name>()
        .register_type::<ChildOf>()
        .register_type::<Children>()
        .register_type::<AnimationTargetId>()
        .register_type::<AnimatedBy>()
        .register_type::<AnimationPlayer>()
        .register_type::<GltfExtras>()
        .register_type::<GltfMeshName>()
        .register_type::<GltfMaterialName>()
        .register_type::<GltfSceneName>()
        .register_type::<Mesh3d>()
        .register_type::<MeshMaterial3d<StandardMaterial>>()
        .register_type::<SkinnedMesh>()
        .register_type::<Aabb>()
        .register_type::<NoFrustumCulling>()
        .register_type::<DynamicSkinnedMeshBounds>();
}

/// A drawn character: its clips' nodes in its animation graph, and the entity playing them once its scene has
/// spawned.
#[derive(Component, Clone, Debug)]
pub struct CharacterDisplay {
    graph: Handle<AnimationGraph>,
    nodes: Vec<AnimationNodeIndex>,
    player: Option<Entity>,
}

/// Loads the file of every new character as its child, with an animation graph of its clips.
pub fn add_character_visuals(
    mut commands: Commands,
    characters: Query<(Entity, &SkinnedCharacter, &CharacterFile), Added<SkinnedCharacter>>,
    assets: Res<AssetServer>,
    mut graphs: ResMut<Assets<AnimationGraph>>,
) {
    for (entity, character, file) in &characters {
        let clips: Vec<Handle<AnimationClip>> = (0..character.model.clips.len())
            .map(|k| assets.load(GltfAssetLabel::Animation(k).from_asset(file.0.clone())))
            .collect();
        let (graph, nodes) = AnimationGraph::from_clips(clips);
        let scene = assets.load(GltfAssetLabel::Scene(0).from_asset(file.0.clone()));
        commands
            .entity(entity)
            .insert((Visibility::default(), CharacterDisplay { graph: graphs.add(graph), nodes, player: None }));
        commands.spawn((WorldAssetRoot(scene), ChildOf(entity)));
    }
}

/// Poses every drawn character as the physics has it at the cloth's clock: its place, and its player sought to
/// the clips' times with their cross-fade weights.
pub fn pose_character_visuals(
    mut commands: Commands,
    mut characters: Query<(Entity, &SkinnedCharacter, &mut CharacterDisplay, &mut Transform)>,
    mut players: Query<&mut AnimationPlayer>,
    children: Query<&Children>,
    clock: Res<SimClock>,
) {
    for (entity, character, mut display, mut transform) in &mut characters {
        *transform = character.frame(clock.time);
        if display.player.is_none() {
            display.player = children.iter_descendants(entity).find(|&e| players.contains(e));
            if let Some(player) = display.player {
                commands.entity(player).insert(AnimationGraphHandle(display.graph.clone()));
            }
        }
        let Some(mut player) = display.player.and_then(|e| players.get_mut(e).ok()) else { continue };
        let playing = character.blend(clock.time);
        for (clip, &node) in display.nodes.iter().enumerate() {
            match playing.iter().find(|(k, ..)| *k == clip) {
                Some((_, weight, time)) => {
                    let time = character.model.clips.get(clip).map_or(0.0, |c| c.looped(time));
                    player.play(node).pause().set_weight(weight).seek_to(time);
                }
                None => {
                    player.stop(node);
                }
            }
        }
    }
}
