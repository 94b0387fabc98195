//! Reading a [`CharacterModel`] from a binary glTF file (`.glb`): the first skin's joints and inverse bind
//! matrices, the mesh its node draws (positions, normals, `JOINTS_0`, `WEIGHTS_0`), every animation's joint
//! channels, and each joint node's collision capsules from its `extras` (`{"capsules": [[ax, ay, az, bx, by, bz,
//! r], ...]}` in the joint's frame; `assets/meshes/make_walker.py` writes them). Bevy's glTF loader draws and
//! plays the same file in the app; this reader gives the physics the same skeleton without an asset server.

use bevy::math::{Mat4, Quat, Vec3};
use bevy::transform::components::Transform;
use gltf::animation::util::ReadOutputs;
use gltf::animation::{Interpolation, Property};

use super::rig::{Channel, CharacterModel, Clip, Influences, Joint, Keys, Skeleton, SkinnedBody};

/// Why a file is not a character drape can skin cloth to.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ModelError {
    /// Not a glTF file, or a malformed one.
    #[error("not a readable glTF file: {0}")]
    Gltf(String),
    /// The file has no skin.
    #[error("the file has no skin (a skeleton and a skinned mesh)")]
    NoSkin,
    /// No node draws a mesh with the skin.
    #[error("no node draws a skinned mesh with joints and weights")]
    NoSkinnedMesh,
    /// A joint's parent is not a joint of the skin.
    #[error("joint `{0}`'s parent is not one of the skin's joints")]
    LooseJoint(String),
    /// A joint is listed before its parent.
    #[error("joint `{0}` is listed before its parent: the skin must list parents first")]
    JointOrder(String),
    /// A joint's `extras` are not the capsules drape reads.
    #[error("joint `{0}`'s extras are not {{\"capsules\": [[ax, ay, az, bx, by, bz, radius], ...]}}: {1}")]
    Capsules(String, String),
}

/// The character in `bytes`, a binary glTF file.
pub fn read_glb(bytes: &[u8]) -> Result<CharacterModel, ModelError> {
    let gltf = gltf::Gltf::from_slice(bytes).map_err(|e| ModelError::Gltf(e.to_string()))?;
    let blob = gltf.blob.as_deref();
    let document = &gltf.document;
    let skin = document.skins().next().ok_or(ModelError::NoSkin)?;
    let nodes: Vec<usize> = skin.joints().map(|n| n.index()).collect();
    let mut parent_node = vec![None; document.nodes().len()];
    for node in document.nodes() {
        for child in node.children() {
            parent_node[child.index()] = Some(node.index());
        }
    }
    let mut joints = Vec::with_capacity(nodes.len());
    for (index, node) in skin.joints().enumerate() {
        let name = node.name().unwrap_or("joint").to_string();
        let parent = match parent_node[node.index()] {
            None => None,
            Some(p) => Some(nodes.iter().position(|&n| n == p).ok_or_else(|| ModelError::LooseJoint(name.clone()))?),
        };
        if parent.is_some_and(|p| p >= index) {
            return Err(ModelError::JointOrder(name));
        }
        let (t, r, s) = node.transform().decomposed();
        let rest = Transform { translation: t.into(), rotation: Quat::from_array(r), scale: s.into() };
        let capsules = capsules(node.extras()).map_err(|e| ModelError::Capsules(name.clone(), e))?;
        joints.push(Joint { name, parent, rest, capsules });
    }
    let inverse_bind = match skin.reader(|b| bin(b, blob)).read_inverse_bind_matrices() {
        Some(read) => read.map(|m| Mat4::from_cols_array_2d(&m)).collect(),
        None => vec![Mat4::IDENTITY; joints.len()],
    };
    let body = document
        .nodes()
        .filter(|n| n.skin().is_some_and(|s| s.index() == skin.index()))
        .filter_map(|n| n.mesh())
        .flat_map(|mesh| mesh.primitives().collect::<Vec<_>>())
        .find_map(|primitive| skinned_body(&primitive, blob))
        .ok_or(ModelError::NoSkinnedMesh)?;
    let clips = document.animations().map(|a| clip(&a, &nodes, blob)).collect();
    Ok(CharacterModel { skeleton: Skeleton { joints, inverse_bind }, clips, body })
}

/// The bytes of `buffer` if it is the file's binary chunk (a `.glb` keeps everything there).
fn bin<'s>(buffer: gltf::Buffer, blob: Option<&'s [u8]>) -> Option<&'s [u8]> {
    match buffer.source() {
        gltf::buffer::Source::Bin => blob,
        gltf::buffer::Source::Uri(_) => None,
    }
}

fn skinned_body(primitive: &gltf::Primitive, blob: Option<&[u8]>) -> Option<SkinnedBody> {
    let reader = primitive.reader(|b| bin(b, blob));
    let positions: Vec<Vec3> = reader.read_positions()?.map(Vec3::from).collect();
    let joints: Vec<[u16; 4]> = reader.read_joints(0)?.into_u16().collect();
    let weights: Vec<[f32; 4]> = reader.read_weights(0)?.into_f32().collect();
    let indices: Vec<u32> = match reader.read_indices() {
        Some(read) => read.into_u32().collect(),
        None => (0..positions.len() as u32).collect(),
    };
    let triangles: Vec<[u32; 3]> = indices.chunks_exact(3).map(|t| [t[0], t[1], t[2]]).collect();
    if joints.len() != positions.len() || weights.len() != positions.len() || triangles.is_empty() {
        return None;
    }
    if indices.iter().any(|&i| i as usize >= positions.len()) {
        return None;
    }
    let normals = match reader.read_normals() {
        Some(read) => read.map(|n| Vec3::from(n).normalize_or(Vec3::Y)).collect(),
        None => unit_normals(&positions, &triangles),
    };
    let influences = joints
        .into_iter()
        .zip(weights)
        .map(|(joints, weights)| Influences::mix([(Influences { joints, weights }, 1.0)]))
        .collect();
    Some(SkinnedBody { positions, normals, triangles, influences })
}

/// The area-weighted unit normal of each vertex, as the cloth's render mesh has them.
pub(super) fn unit_normals(positions: &[Vec3], triangles: &[[u32; 3]]) -> Vec<Vec3> {
    let mut normals = vec![[0.0; 3]; positions.len()];
    crate::mesh_sync::vertex_normals(positions, triangles, &mut normals);
    normals.into_iter().map(Vec3::from).collect()
}

fn clip(animation: &gltf::Animation, joints: &[usize], blob: Option<&[u8]>) -> Clip {
    let mut channels = Vec::new();
    for channel in animation.channels() {
        let Some(joint) = joints.iter().position(|&n| n == channel.target().node().index()) else { continue };
        let reader = channel.reader(|b| bin(b, blob));
        let (Some(times), Some(outputs)) = (reader.read_inputs(), reader.read_outputs()) else { continue };
        let times: Vec<f32> = times.collect();
        let keys = match (channel.target().property(), outputs) {
            (Property::Translation, ReadOutputs::Translations(v)) => Keys::Translation(v.map(Vec3::from).collect()),
            (Property::Scale, ReadOutputs::Scales(v)) => Keys::Scale(v.map(Vec3::from).collect()),
            (Property::Rotation, ReadOutputs::Rotations(v)) => {
                Keys::Rotation(v.into_f32().map(|q| Quat::from_array(q).normalize()).collect())
            }
            _ => continue,
        };
        let step = channel.sampler().interpolation() == Interpolation::Step;
        channels.push(Channel { joint, times, keys, step });
    }
    let duration = channels.iter().filter_map(|c| c.times.last()).fold(0.0f32, |a, &b| a.max(b));
    Clip { name: animation.name().unwrap_or("animation").to_string(), duration, channels }
}

/// The capsules a joint's `extras` list; none if it has no extras.
fn capsules(extras: &gltf::json::Extras) -> Result<Vec<(Vec3, Vec3, f32)>, String> {
    #[derive(serde::Deserialize, Default)]
    struct Extras {
        #[serde(default)]
        capsules: Vec<[f32; 7]>,
    }
    let Some(raw) = extras else { return Ok(Vec::new()) };
    let extras: Extras = serde_json::from_str(raw.get()).map_err(|e| e.to_string())?;
    let capsules: Vec<_> =
        extras.capsules.into_iter().map(|c| (Vec3::new(c[0], c[1], c[2]), Vec3::new(c[3], c[4], c[5]), c[6])).collect();
    if capsules.iter().any(|(a, b, r)| !(a.is_finite() && b.is_finite() && r.is_finite() && *r > 0.0)) {
        return Err("a capsule has a coordinate that is not finite or a radius that is not positive".into());
    }
    Ok(capsules)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn walker() -> CharacterModel {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/meshes/walker.glb");
        read_glb(&std::fs::read(path).expect("the walker is shipped")).expect("the walker is a character")
    }

    #[test]
    fn the_walker_has_a_skeleton_two_clips_and_a_closed_skinned_body() {
        let model = walker();
        assert_eq!(model.skeleton.joints.len(), 13);
        assert_eq!(model.skeleton.joints[0].name, "hips");
        assert!(model.clip("idle").is_some() && model.clip("walk").is_some());
        let walk = &model.clips[model.clip("walk").unwrap_or_default()];
        assert!((walk.duration - 1.1).abs() < 1e-6, "{}", walk.duration);
        let body = &model.body;
        assert!(body.positions.len() > 1000 && body.triangles.len() == 2 * body.positions.len() - 4, "sphere");
        for influences in &body.influences {
            assert!((influences.weights.iter().sum::<f32>() - 1.0).abs() < 1e-5);
        }
        // every capsule lies inside the body's bounds and every bone but the neck's has one
        let with_capsules = model.skeleton.joints.iter().filter(|j| !j.capsules.is_empty()).count();
        assert_eq!(with_capsules, 13);
    }

    #[test]
    fn the_walker_in_its_bind_pose_is_where_its_mesh_is() {
        let model = walker();
        let skeleton = &model.skeleton;
        let skin = skeleton.skin(&skeleton.world(&Transform::IDENTITY, &skeleton.rest()));
        for (p, influences) in model.body.positions.iter().zip(&model.body.influences) {
            assert!(influences.skin_point(&skin, *p).distance(*p) < 1e-5);
        }
    }

    #[test]
    fn bytes_that_are_not_a_character_are_refused_with_the_reason() {
        assert!(matches!(read_glb(b"not a glb"), Err(ModelError::Gltf(_))));
        assert_eq!(read_glb(br#"{"asset": {"version": "2.0"}}"#), Err(ModelError::NoSkin));
    }
}
