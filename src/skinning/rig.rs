//! A character's skeleton, animation clips and skinned body as plain data, and the pure kernels that pose it:
//! a clip sampled at a time (keyframes interpolated linearly, rotations along the shorter arc), two clips
//! cross-faded, the joints' world transforms and the skin matrices that linear blend skinning applies to a point.
//! The physics samples the clip itself, at the cloth's own clock and at every step's end, so a headless run is
//! deterministic and a step's targets are where the body is at the end of that step, not a frame late.

use bevy::math::{Affine3A, Mat4, Quat, Vec3};
use bevy::transform::components::Transform;

/// One joint of a skeleton.
#[derive(Clone, Debug, PartialEq)]
pub struct Joint {
    /// The joint's name (its glTF node's).
    pub name: String,
    /// Index of the parent joint; `None` for a root.
    pub parent: Option<usize>,
    /// The joint's local transform at rest (relative to its parent), which a clip's channels override.
    pub rest: Transform,
    /// Capsules (end a, end b, radius) in the joint's frame: the parts of the body that bone moves, for collisions.
    pub capsules: Vec<(Vec3, Vec3, f32)>,
}

/// A skeleton: joints ordered parents first, and the inverse bind matrix of each (model space to the joint's
/// frame in the bind pose).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Skeleton {
    /// The joints, each after its parent.
    pub joints: Vec<Joint>,
    /// Per joint, the inverse of its model-space transform in the bind pose.
    pub inverse_bind: Vec<Mat4>,
}

/// Which of a joint's local properties a channel animates, with one value per keyframe.
#[derive(Clone, Debug, PartialEq)]
pub enum Keys {
    /// Translations, metres.
    Translation(Vec<Vec3>),
    /// Rotations.
    Rotation(Vec<Quat>),
    /// Scales.
    Scale(Vec<Vec3>),
}

/// One animated property of one joint.
#[derive(Clone, Debug, PartialEq)]
pub struct Channel {
    /// Index of the joint.
    pub joint: usize,
    /// Keyframe times, seconds, ascending.
    pub times: Vec<f32>,
    /// The values at those times.
    pub keys: Keys,
    /// Whether values hold until the next keyframe instead of being interpolated.
    pub step: bool,
}

/// An animation clip, played in a loop.
#[derive(Clone, Debug, PartialEq)]
pub struct Clip {
    /// The clip's name (its glTF animation's).
    pub name: String,
    /// Length of one loop, seconds: the last keyframe's time.
    pub duration: f32,
    /// The animated properties.
    pub channels: Vec<Channel>,
}

/// The body's mesh in the bind pose, model space, with four joints and weights per vertex.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SkinnedBody {
    /// Vertex positions, metres.
    pub positions: Vec<Vec3>,
    /// Vertex normals (unit).
    pub normals: Vec<Vec3>,
    /// Triangles, counter-clockwise seen from outside.
    pub triangles: Vec<[u32; 3]>,
    /// Per vertex, the joints that move it and their weights (summing to 1).
    pub influences: Vec<Influences>,
}

/// Up to four joints moving a point and their weights, summing to 1 (linear blend skinning).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Influences {
    /// Joint indices.
    pub joints: [u16; 4],
    /// Weights, summing to 1.
    pub weights: [f32; 4],
}

impl Influences {
    /// The point `bind` (model space, bind pose) moved by the skin `matrices`.
    pub fn skin_point(&self, matrices: &[Affine3A], bind: Vec3) -> Vec3 {
        self.blend(matrices, |m| m.transform_point3(bind))
    }

    /// The direction `bind` (model space, bind pose) turned by the skin `matrices`, normalised.
    pub fn skin_direction(&self, matrices: &[Affine3A], bind: Vec3) -> Vec3 {
        self.blend(matrices, |m| m.transform_vector3(bind)).normalize_or(bind)
    }

    fn blend(&self, matrices: &[Affine3A], apply: impl Fn(&Affine3A) -> Vec3) -> Vec3 {
        let mut sum = Vec3::ZERO;
        for (&joint, &weight) in self.joints.iter().zip(&self.weights) {
            if weight != 0.0
                && let Some(m) = matrices.get(usize::from(joint))
            {
                sum += weight * apply(m);
            }
        }
        sum
    }

    /// The weighted sum of several influences, the four heaviest joints kept and renormalised.
    pub fn mix(parts: impl IntoIterator<Item = (Influences, f32)>) -> Influences {
        let mut joints: Vec<(u16, f32)> = Vec::new();
        for (influences, share) in parts {
            for (&joint, &weight) in influences.joints.iter().zip(&influences.weights) {
                match joints.iter_mut().find(|(j, _)| *j == joint) {
                    Some((_, w)) => *w += share * weight,
                    None => joints.push((joint, share * weight)),
                }
            }
        }
        joints.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        joints.truncate(4);
        let total: f32 = joints.iter().map(|(_, w)| w).sum();
        let mut out = Influences::default();
        for (k, (joint, weight)) in joints.into_iter().enumerate() {
            out.joints[k] = joint;
            out.weights[k] = if total > 0.0 { weight / total } else { 0.0 };
        }
        out
    }
}

/// A character: skeleton, clips and the skinned body.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CharacterModel {
    /// The skeleton.
    pub skeleton: Skeleton,
    /// The animation clips.
    pub clips: Vec<Clip>,
    /// The body.
    pub body: SkinnedBody,
}

impl CharacterModel {
    /// The index of the clip named `name`.
    pub fn clip(&self, name: &str) -> Option<usize> {
        self.clips.iter().position(|c| c.name == name)
    }
}

impl Clip {
    /// Time `t` into the clip as one loop of it plays it, seconds.
    pub fn looped(&self, t: f64) -> f32 {
        if self.duration > 0.0 { t.rem_euclid(f64::from(self.duration)) as f32 } else { 0.0 }
    }

    /// Writes the clip's values at time `t` (looped) into the joints' local transforms.
    pub fn sample(&self, t: f64, locals: &mut [Transform]) {
        let time = self.looped(t);
        for channel in &self.channels {
            let Some(local) = locals.get_mut(channel.joint) else { continue };
            let (i, s) = keyframe(&channel.times, time, channel.step);
            match &channel.keys {
                Keys::Translation(v) => local.translation = lerp_keys(v, i, s, Vec3::lerp),
                Keys::Scale(v) => local.scale = lerp_keys(v, i, s, Vec3::lerp),
                Keys::Rotation(v) => local.rotation = lerp_keys(v, i, s, |a, b, s| a.slerp(b, s)),
            }
        }
    }
}

/// The keyframe at or before `time` and the fraction of the way to the next (0 for step interpolation).
fn keyframe(times: &[f32], time: f32, step: bool) -> (usize, f32) {
    let after = times.partition_point(|&k| k <= time);
    if after == 0 {
        return (0, 0.0);
    }
    let i = after - 1;
    match times.get(i + 1) {
        Some(&next) if !step && next > times[i] => (i, ((time - times[i]) / (next - times[i])).clamp(0.0, 1.0)),
        _ => (i, 0.0),
    }
}

fn lerp_keys<T: Copy + Default>(values: &[T], i: usize, s: f32, lerp: impl Fn(T, T, f32) -> T) -> T {
    match (values.get(i), values.get(i + 1)) {
        (Some(&a), Some(&b)) => lerp(a, b, s),
        (Some(&a), None) => a,
        _ => values.last().copied().unwrap_or_default(),
    }
}

impl Skeleton {
    /// The joints' local transforms at rest.
    pub fn rest(&self) -> Vec<Transform> {
        let mut locals = Vec::new();
        self.rest_into(&mut locals);
        locals
    }

    /// The joints' local transforms at rest, into `locals`.
    pub fn rest_into(&self, locals: &mut Vec<Transform>) {
        locals.clear();
        locals.extend(self.joints.iter().map(|j| j.rest));
    }

    /// The joints' world transforms under `frame` (the model's placement) from their local transforms.
    pub fn world(&self, frame: &Transform, locals: &[Transform]) -> Vec<Transform> {
        let mut world = Vec::new();
        self.world_into(frame, locals, &mut world);
        world
    }

    /// [`Self::world`] into `world`.
    pub fn world_into(&self, frame: &Transform, locals: &[Transform], world: &mut Vec<Transform>) {
        world.clear();
        for (joint, local) in self.joints.iter().zip(locals) {
            let parent = joint.parent.and_then(|p| world.get(p)).copied().unwrap_or(*frame);
            world.push(parent.mul_transform(*local));
        }
    }

    /// The skin matrices (world joint transform times inverse bind) of the joints' world transforms.
    pub fn skin(&self, world: &[Transform]) -> Vec<Affine3A> {
        let mut skin = Vec::new();
        self.skin_into(world, &mut skin);
        skin
    }

    /// [`Self::skin`] into `skin`.
    pub fn skin_into(&self, world: &[Transform], skin: &mut Vec<Affine3A>) {
        skin.clear();
        skin.extend(world.iter().zip(&self.inverse_bind).map(|(w, ib)| w.compute_affine() * Affine3A::from_mat4(*ib)));
    }
}

/// Blends pose `from` into pose `to` of the same skeleton: `share` of `to` is kept, the rest is `from`
/// (translations and scales linearly, rotations along the shorter arc).
pub fn cross_fade(from: &[Transform], to: &mut [Transform], share: f32) {
    for (a, b) in from.iter().zip(to) {
        *b = lerp_transform(a, b, share);
    }
}

/// `s` of the way from `a` to `b`: translations and scales linearly, rotations along the shorter arc.
pub fn lerp_transform(a: &Transform, b: &Transform, s: f32) -> Transform {
    Transform {
        translation: a.translation.lerp(b.translation, s),
        rotation: a.rotation.slerp(b.rotation, s),
        scale: a.scale.lerp(b.scale, s),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arm() -> Skeleton {
        let joint = |name: &str, parent, at: Vec3| Joint {
            name: name.into(),
            parent,
            rest: Transform::from_translation(at),
            capsules: Vec::new(),
        };
        // a shoulder at (0, 1, 0) and an elbow 0.5 m along +x from it, unrotated in the bind pose
        Skeleton {
            joints: vec![joint("shoulder", None, Vec3::Y), joint("elbow", Some(0), Vec3::X * 0.5)],
            inverse_bind: vec![Mat4::from_translation(-Vec3::Y), Mat4::from_translation(-Vec3::new(0.5, 1.0, 0.0))],
        }
    }

    #[test]
    fn the_bind_pose_skins_every_point_to_itself() {
        let skeleton = arm();
        let skin = skeleton.skin(&skeleton.world(&Transform::IDENTITY, &skeleton.rest()));
        let both = Influences { joints: [0, 1, 0, 0], weights: [0.3, 0.7, 0.0, 0.0] };
        let p = Vec3::new(0.8, 1.1, -0.2);
        assert!(both.skin_point(&skin, p).distance(p) < 1e-6);
    }

    #[test]
    fn a_turned_shoulder_carries_the_elbow_and_what_it_moves() {
        let skeleton = arm();
        let mut locals = skeleton.rest();
        locals[0].rotation = Quat::from_rotation_z(std::f32::consts::FRAC_PI_2); // the arm points up
        let frame = Transform::from_xyz(2.0, 0.0, 0.0);
        let world = skeleton.world(&frame, &locals);
        assert!(world[1].translation.distance(Vec3::new(2.0, 1.5, 0.0)) < 1e-6);
        let elbow_only = Influences { joints: [1, 0, 0, 0], weights: [1.0, 0.0, 0.0, 0.0] };
        // a point 0.25 m past the elbow along the arm ends 0.25 m above the raised elbow
        let moved = elbow_only.skin_point(&skeleton.skin(&world), Vec3::new(0.75, 1.0, 0.0));
        assert!(moved.distance(Vec3::new(2.0, 1.75, 0.0)) < 1e-6, "{moved}");
        let normal = elbow_only.skin_direction(&skeleton.skin(&world), Vec3::Y);
        assert!(normal.distance(Vec3::NEG_X) < 1e-6, "{normal}");
    }

    #[test]
    fn a_clip_interpolates_between_keyframes_and_loops() {
        let clip = Clip {
            name: "raise".into(),
            duration: 2.0,
            channels: vec![Channel {
                joint: 0,
                times: vec![0.0, 1.0, 2.0],
                keys: Keys::Translation(vec![Vec3::ZERO, Vec3::Y, Vec3::ZERO]),
                step: false,
            }],
        };
        let mut locals = vec![Transform::IDENTITY];
        clip.sample(0.25, &mut locals);
        assert!((locals[0].translation.y - 0.25).abs() < 1e-6);
        clip.sample(2.0 + 1.5, &mut locals); // looped: 1.5 s into the clip
        assert!((locals[0].translation.y - 0.5).abs() < 1e-6);
        let stepped = Clip { channels: vec![Channel { step: true, ..clip.channels[0].clone() }], ..clip };
        stepped.sample(0.9, &mut locals);
        assert_eq!(locals[0].translation, Vec3::ZERO);
    }

    #[test]
    fn influences_mix_keeps_the_four_heaviest_joints_summing_to_one() {
        let a = Influences { joints: [0, 1, 2, 3], weights: [0.4, 0.3, 0.2, 0.1] };
        let b = Influences { joints: [4, 0, 0, 0], weights: [1.0, 0.0, 0.0, 0.0] };
        let mixed = Influences::mix([(a, 0.5), (b, 0.5)]);
        assert_eq!(mixed.joints, [4, 0, 1, 2]);
        assert!((mixed.weights.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        assert!(mixed.weights[0] > mixed.weights[1] && mixed.weights[3] > 0.0);
    }

    #[test]
    fn a_cross_fade_goes_from_one_pose_to_the_other() {
        let a = [Transform::from_xyz(0.0, 0.0, 0.0)];
        let b = [Transform::from_xyz(1.0, 0.0, 0.0).with_rotation(Quat::from_rotation_y(1.0))];
        let faded = |share| {
            let mut to = b;
            cross_fade(&a, &mut to, share);
            to[0]
        };
        assert_eq!(faded(0.0), a[0]);
        let half = faded(0.5);
        assert!((half.translation.x - 0.5).abs() < 1e-6);
        assert!((half.rotation.to_axis_angle().1 - 0.5).abs() < 1e-5);
    }
}
