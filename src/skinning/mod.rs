//! [`ClothSkinningPlugin`]: cloth worn by an animated, skinned character — capes, skirts, flags carried — as
//! game engines' cloth does it (Jolt's skinned constraints, PhysX's), with the paper's attachments (§3.6) and
//! collision constraints (§3.4).
//!
//! A [`SkinnedCharacter`] plays a clip of its [`CharacterModel`] (read from a `.glb` by [`read_glb`]) on the
//! cloth's clock and moves along a [`Motion`]. Before every step, [`pose_characters`] poses it at the step's start
//! and end; each [`ClothSkinning`] cloth then skins its vertices' targets at both ([`skin_cloth`]). Within the
//! step's substeps:
//! - the attached vertices (pins with w = 0) sit on their targets, interpolated across the step, so they follow
//!   the body exactly and line (13) gives them the body's velocity ([`follow_skin`], in line (7));
//! - each free vertex stays within [`SkinLimits::max_distance`] of its target and outside a backstop sphere
//!   behind it ([`limit_cloth_to_skin`], after the iterated projection, lines (9)–(11));
//! - the bones' capsules ([`BoneCollider`]) are kinematic colliders swept from their pose at the substep's start
//!   to its end ([`move_bone_colliders`]), so the cloth collides with the moving body as with any collider.
//!
//! When the body jumps between steps — the first step, a teleport, a clip started from its beginning — the
//! whole cloth is carried with it, each vertex by its own target's jump, with no velocity gained: nothing is
//! flung. [`ClothSkinning::max_attachment_error`] reports how far an attached vertex ended a step from its
//! target.
//!
//! A cape on the walker, in a host's own startup system (the `character` preset does the same from RON):
//!
//! ```no_run
//! use std::sync::Arc;
//!
//! use bevy::prelude::*;
//! use drape::prelude::*;
//! use drape::skinning::{ClothSkinning, SkinLimits, SkinnedCharacter, read_glb, spawn_character};
//!
//! fn setup(mut commands: Commands) -> Result {
//!     let model = Arc::new(read_glb(&std::fs::read("assets/meshes/walker.glb")?)?);
//!     let walk = model.clip("walk").ok_or("the walker walks")?;
//!     let start = Transform::IDENTITY;
//!     let walker = SkinnedCharacter::new(model.clone(), start, Motion::Fixed, walk);
//!     let walker = spawn_character(&mut commands, "walker", walker, ());
//!     // on the bind pose: hanging down the back, the middle of its top row attached
//!     let cape = ClothBuilder::grid(16, 24, Vec2::new(0.5, 0.8))
//!         .placed(Transform::from_xyz(0.0, 1.02, -0.18).with_rotation(Quat::from_rotation_x(1.69)))
//!         .pin(Pin::RowSpan { v: 0.0, from_u: 0.2, to_u: 0.8 })
//!         .build()?;
//!     let limits = SkinLimits { max_distance: 0.8, backstop_radius: 0.3, margin: 0.01 };
//!     let worn = ClothSkinning::bind(walker, &model, &start, &cape.particles.x, limits);
//!     commands.spawn((cape, worn));
//!     Ok(())
//! }
//! ```

mod bind;
mod glb;
mod rig;

use std::sync::Arc;

use bevy::prelude::*;

pub use bind::{SkinLimits, SkinnedVertex, bind_vertices, closest_on_triangle, limit_to_skin, skin_targets};
pub use glb::{ModelError, read_glb};
pub use rig::{
    Channel, CharacterModel, Clip, Influences, Joint, Keys, Skeleton, SkinnedBody, cross_fade, lerp_transform,
};

use crate::sim::cloth::{Attachments, Awake, ClothCollider, Particles, PreviousPose};
use crate::sim::collide::ColliderShape;
use crate::sim::colliders::move_colliders;
use crate::sim::constraints::attach::Motion;
use crate::sim::knobs::Knob;
use crate::sim::schedule::{ClothStep, ClothStepSystems, PbdStage, PbdSubstep, ProjectionSystems, SimClock};
use crate::sim::stages;

/// A character's playback speed, as the panel sets it.
pub const PLAYBACK_SPEED: Knob = Knob {
    name: "speed",
    label: "playback speed",
    unit: "",
    min: 0.0,
    max: 3.0,
    default: 1.0,
    section: "§6, Fig. 12",
    doc: "How fast the character's clip plays, 1 for its own pace; its cloth follows at any speed.",
};

/// How far a worn cloth's free vertices may stray from where the skin carries them.
pub const MAX_DISTANCE: Knob = Knob {
    name: "max_distance",
    label: "max distance",
    unit: "m",
    min: 0.01,
    max: 2.0,
    default: 0.5,
    section: "§3.6",
    doc: "A worn cloth's free vertices stay within this distance of where the character's skin carries them.",
};

/// How long a change of clip cross-fades, seconds.
pub const CROSS_FADE: f32 = 0.3;

/// Targets that move more than this between one step's end and the next step's start, metres, mean the body
/// jumped: the cloth is carried with it instead of chasing it.
const JUMP: f32 = 1e-4;

/// The skinned characters and the cloths bound to them.
pub struct ClothSkinningPlugin;

impl Plugin for ClothSkinningPlugin {
    fn build(&self, app: &mut App) {
        // skinned pins move before the tethers read them; the error is measured on the cloth as torn
        let (tethers, tearing) = (crate::sim::tethers::refresh_tethers, PbdStage::Tearing);
        app.add_systems(
            ClothStep,
            (pose_characters, skin_cloth).chain().before(tethers).in_set(ClothStepSystems::BeforeStep),
        )
        .add_systems(ClothStep, measure_attachment_error.after(tearing).in_set(ClothStepSystems::AfterStep))
        .add_systems(
            PbdSubstep,
            (
                move_bone_colliders.after(move_colliders).before(stages::move_bodies).in_set(PbdStage::Predict),
                follow_skin.after(stages::predict).in_set(PbdStage::Predict),
                limit_cloth_to_skin
                    .after(ProjectionSystems::ClothContacts)
                    .before(ProjectionSystems::Finish)
                    .in_set(PbdStage::Project),
            ),
        );
    }
}

/// A character's pose at one instant: its joints' world transforms and the skin matrices.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Pose {
    /// Each joint's world transform.
    pub joints: Vec<Transform>,
    /// Each joint's skin matrix: world transform times inverse bind.
    pub skin: Vec<bevy::math::Affine3A>,
}

/// What a character plays: a clip and how far into it, and the clip it is fading out of.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Playback {
    /// Index of the clip playing.
    pub clip: usize,
    /// Simulated time of the last change (of clip or speed), seconds.
    pub since: f64,
    /// Time into the clip at `since`, seconds.
    pub offset: f64,
    /// The clip fading out and the time into it at `since`.
    pub fading: Option<(usize, f64)>,
    /// Simulated time the fade began, seconds; it lasts [`CROSS_FADE`].
    pub fade_start: f64,
    /// Playback speed, 1 for the clip's own.
    pub speed: f32,
}

impl Playback {
    /// Time into the clip at `offset` at `since` by time `t`, seconds (not yet looped).
    fn time_in(&self, offset: f64, t: f64) -> f64 {
        offset + (t - self.since) * f64::from(self.speed)
    }
}

/// The clips a character plays at one instant: each clip's index, weight and time into it (seconds, not yet
/// looped).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Blend {
    /// The clip playing.
    pub playing: (usize, f32, f64),
    /// The clip fading out, while it does.
    pub fading: Option<(usize, f32, f64)>,
}

impl Blend {
    /// The clips, the one playing first.
    pub fn iter(&self) -> impl Iterator<Item = (usize, f32, f64)> {
        std::iter::once(self.playing).chain(self.fading)
    }
}

/// An animated, skinned character cloth can be bound to.
#[derive(Component, Clone, Debug)]
pub struct SkinnedCharacter {
    /// Skeleton, clips and body.
    pub model: Arc<CharacterModel>,
    /// Where the model is at t = 0.
    pub start: Transform,
    /// How the model moves from `start` (a `Rotate` turns it as well).
    pub motion: Motion,
    /// What it plays.
    pub playback: Playback,
    /// The pose at the start of the step being run and at its end.
    pub step: [Pose; 2],
    /// The pose at the end of the step before, where it left its cloths; empty before the first step.
    pub last: Pose,
    /// The joints' local transforms while posing.
    scratch: [Vec<Transform>; 2],
}

impl SkinnedCharacter {
    /// `model` at `start`, moving with `motion`, playing clip `clip` from t = 0.
    pub fn new(model: Arc<CharacterModel>, start: Transform, motion: Motion, clip: usize) -> Self {
        let playback = Playback { clip, since: 0.0, offset: 0.0, fading: None, fade_start: 0.0, speed: 1.0 };
        Self {
            model,
            start,
            motion,
            playback,
            step: Default::default(),
            last: Pose::default(),
            scratch: Default::default(),
        }
    }

    /// Where the model is at time `t`.
    pub fn frame(&self, t: f64) -> Transform {
        Transform {
            translation: self.motion.target(self.start.translation, t),
            rotation: self.motion.turn(t) * self.start.rotation,
            scale: self.start.scale,
        }
    }

    /// The clips playing at time `t`: the clip playing and, while it fades out, the one before.
    pub fn blend(&self, t: f64) -> Blend {
        let play = self.playback;
        let share = match play.fading {
            Some(_) => (((t - play.fade_start) / f64::from(CROSS_FADE)) as f32).clamp(0.0, 1.0),
            None => 1.0,
        };
        let fading =
            play.fading.filter(|_| share < 1.0).map(|(old, offset)| (old, 1.0 - share, play.time_in(offset, t)));
        Blend { playing: (play.clip, share, play.time_in(play.offset, t)), fading }
    }

    /// The joints' local transforms at time `t`, cross-faded from the clip fading out, into `locals` (`fading`
    /// is scratch).
    pub fn locals_into(&self, t: f64, locals: &mut Vec<Transform>, fading: &mut Vec<Transform>) {
        let play = |(clip, _, time): (usize, f32, f64), locals: &mut Vec<Transform>| {
            self.model.skeleton.rest_into(locals);
            if let Some(clip) = self.model.clips.get(clip) {
                clip.sample(time, locals);
            }
        };
        let blend = self.blend(t);
        play(blend.playing, locals);
        if let Some(old) = blend.fading {
            play(old, fading);
            cross_fade(fading, locals, blend.playing.1);
        }
    }

    /// The pose at time `t`.
    pub fn pose(&self, t: f64) -> Pose {
        let mut pose = Pose::default();
        self.pose_into(t, &mut Default::default(), &mut pose);
        pose
    }

    /// The pose at time `t` into `pose`, with `scratch` for the joints' local transforms: no allocation once the
    /// buffers have grown.
    pub fn pose_into(&self, t: f64, scratch: &mut [Vec<Transform>; 2], pose: &mut Pose) {
        let [locals, fading] = scratch;
        self.locals_into(t, locals, fading);
        self.model.skeleton.world_into(&self.frame(t), locals, &mut pose.joints);
        self.model.skeleton.skin_into(&pose.joints, &mut pose.skin);
    }

    /// Starts clip `clip` from its beginning at time `now`, cross-fading from the one playing.
    pub fn play(&mut self, clip: usize, now: f64) {
        let play = self.playback;
        if clip != play.clip {
            let fading = Some((play.clip, play.time_in(play.offset, now)));
            self.playback = Playback { clip, since: now, offset: 0.0, fading, fade_start: now, ..play };
        }
    }

    /// Plays on at `speed` times the clips' own from time `now`, where they are then.
    pub fn set_speed(&mut self, speed: f32, now: f64) {
        let play = self.playback;
        let offset = play.time_in(play.offset, now);
        let fading = play.fading.map(|(old, old_offset)| (old, play.time_in(old_offset, now)));
        self.playback = Playback { since: now, offset, fading, speed, ..play };
    }
}

/// Spawns `character` named `name` and its bones' capsules as colliders, each entity with `tag` too (a host's
/// marker); returns the character's entity, for [`ClothSkinning::bind`].
pub fn spawn_character(
    commands: &mut Commands,
    name: &str,
    character: SkinnedCharacter,
    tag: impl Bundle + Clone,
) -> Entity {
    let frame = character.frame(0.0);
    let model = character.model.clone();
    let entity = commands.spawn((Name::new(name.to_string()), character, frame, tag.clone())).id();
    for (joint, bone) in model.skeleton.joints.iter().enumerate() {
        for &capsule in &bone.capsules {
            let (bone_collider, collider) = BoneCollider::capsule(entity, joint, capsule);
            commands.spawn((Name::new(format!("{name}/{}", bone.name)), bone_collider, collider, tag.clone()));
        }
    }
    entity
}

/// A capsule of a character's bone as a kinematic collider: the entity's [`ClothCollider`] is a capsule placed
/// by `local` in the joint's frame.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct BoneCollider {
    /// The character's entity.
    pub character: Entity,
    /// Index of the joint.
    pub joint: usize,
    /// The capsule's pose in the joint's frame (its axis along local +y).
    pub local: Transform,
}

impl BoneCollider {
    /// The collider of capsule (a, b, radius) of `joint`, given in the joint's frame.
    pub fn capsule(character: Entity, joint: usize, (a, b, radius): (Vec3, Vec3, f32)) -> (Self, ClothCollider) {
        let axis = b - a;
        let rotation = Quat::from_rotation_arc(Vec3::Y, axis.normalize_or(Vec3::Y));
        let local = Transform::from_translation((a + b) / 2.0).with_rotation(rotation);
        let shape = ColliderShape::Capsule { radius, half_height: axis.length() / 2.0 };
        (Self { character, joint, local }, ClothCollider::new(shape))
    }
}

/// A cloth bound to a [`SkinnedCharacter`]: per vertex the skin of the body point nearest to it in the bind
/// pose; its pins (the cloth's [`Attachments`]) are the attached vertices, which follow their targets.
#[derive(Component, Clone, Debug)]
pub struct ClothSkinning {
    /// The character's entity.
    pub character: Entity,
    /// Each vertex's binding, by vertex index.
    pub vertices: Vec<SkinnedVertex>,
    /// How far free vertices may stray.
    pub limits: SkinLimits,
    /// The largest distance of an attached vertex from its target at the end of a step, metres, over every step.
    pub max_attachment_error: f32,
    /// Scratch, refilled from the character before each step: the targets and the body's normals there at the
    /// start and the end of the step being run,
    targets: [Vec<Vec3>; 2],
    normals: [Vec<Vec3>; 2],
    /// and within the substep being run.
    now: (Vec<Vec3>, Vec<Vec3>),
}

impl ClothSkinning {
    /// Binds a cloth whose vertices are at `positions` (world space) to `character` in its bind pose placed at
    /// `frame`.
    pub fn bind(
        character: Entity,
        model: &CharacterModel,
        frame: &Transform,
        positions: &[Vec3],
        limits: SkinLimits,
    ) -> Self {
        let to_model = frame.compute_affine().inverse();
        let local: Vec<Vec3> = positions.iter().map(|&p| to_model.transform_point3(p)).collect();
        Self {
            character,
            vertices: bind_vertices(&model.body, &local),
            limits,
            max_attachment_error: 0.0,
            targets: Default::default(),
            normals: Default::default(),
            now: Default::default(),
        }
    }

    /// The targets at the end of the step being run.
    pub fn targets(&self) -> &[Vec3] {
        &self.targets[1]
    }

    /// The targets and normals a fraction `s` of the way through the step, into `now`.
    fn interpolate(&mut self, s: f32) {
        let (targets, normals) = &mut self.now;
        targets.clear();
        targets.extend(self.targets[0].iter().zip(&self.targets[1]).map(|(a, b)| a.lerp(*b, s)));
        normals.clear();
        normals.extend(self.normals[0].iter().zip(&self.normals[1]).map(|(a, b)| a.lerp(*b, s).normalize_or(*b)));
    }
}

/// Before a step: each character's pose at the step's start and end.
pub fn pose_characters(mut characters: Query<&mut SkinnedCharacter>, clock: Res<SimClock>) {
    let (start, end) = (clock.time, clock.time + f64::from(clock.step_dt));
    for mut character in &mut characters {
        let c = &mut *character;
        // the buffers go round: the end pose becomes the last, the last's buffers take the new end
        std::mem::swap(&mut c.last, &mut c.step[1]);
        let (mut step, mut scratch) = (std::mem::take(&mut c.step), std::mem::take(&mut c.scratch));
        c.pose_into(start, &mut scratch, &mut step[0]);
        c.pose_into(end, &mut scratch, &mut step[1]);
        (c.step, c.scratch) = (step, scratch);
    }
}

/// Before a step: each skinned cloth's targets at the step's start and end; where the body jumped since the
/// last step, the cloth is carried with it (positions and predictions, not velocities).
pub fn skin_cloth(
    mut cloths: Query<(&mut ClothSkinning, &mut Particles), Awake>,
    characters: Query<&SkinnedCharacter>,
) {
    for (mut skinning, mut particles) in &mut cloths {
        let Ok(character) = characters.get(skinning.character) else { continue };
        let skinning = &mut *skinning;
        for k in 0..2 {
            skin_targets(
                &skinning.vertices,
                &character.step[k].skin,
                &mut skinning.targets[k],
                &mut skinning.normals[k],
            );
        }
        // where the last step left the targets; before the first, the bind pose the cloth was made on
        let frame = character.frame(0.0);
        let last = |v: &SkinnedVertex| match character.last.skin.is_empty() {
            true => frame.transform_point(v.bind),
            false => v.influences.skin_point(&character.last.skin, v.bind),
        };
        let jumps = skinning.vertices.iter().zip(&skinning.targets[0]).map(|(v, target)| *target - last(v));
        if jumps.clone().any(|jump| jump.length_squared() > JUMP * JUMP) {
            let Particles { x, p, .. } = &mut *particles;
            for ((x, p), jump) in x.iter_mut().zip(p.iter_mut()).zip(jumps) {
                *x += jump;
                *p = *x;
            }
        }
    }
}

/// Line (7) for the bones: each capsule takes its pose at the end of the substep, interpolated across the step.
pub fn move_bone_colliders(
    mut bones: Query<(&BoneCollider, &mut Transform, &mut PreviousPose)>,
    characters: Query<&SkinnedCharacter>,
    clock: Res<SimClock>,
) {
    let s = (clock.substep + 1) as f32 / clock.substeps.max(1) as f32;
    for (bone, mut transform, mut previous) in &mut bones {
        let Ok(character) = characters.get(bone.character) else { continue };
        let [Some(from), Some(to)] = character.step.each_ref().map(|pose| pose.joints.get(bone.joint)) else {
            continue;
        };
        let joint = lerp_transform(from, to, s);
        previous.0 = if clock.substep == 0 { from.mul_transform(bone.local) } else { *transform };
        *transform = joint.mul_transform(bone.local);
    }
}

/// Line (7) for the attached vertices of skinned cloths: each pin's anchor and prediction on its target at the
/// end of the substep.
pub fn follow_skin(
    mut cloths: Query<(&mut ClothSkinning, &mut Particles, &mut Attachments), Awake>,
    clock: Res<SimClock>,
) {
    let s = (clock.substep + 1) as f32 / clock.substeps.max(1) as f32;
    for (mut skinning, mut particles, mut attachments) in &mut cloths {
        skinning.interpolate(s);
        let targets = &skinning.now.0;
        // the anchors move every substep, as a moving pin's target does: not an edit of the pins
        for pin in &mut attachments.bypass_change_detection().0 {
            if let (Some(&target), Some(p)) =
                (targets.get(pin.vertex as usize), particles.p.get_mut(pin.vertex as usize))
            {
                pin.anchor = target;
                *p = target;
            }
        }
    }
}

/// Lines (9)–(11) for skinned cloths: free vertices held within reach of their targets and outside their backstops.
pub fn limit_cloth_to_skin(mut cloths: Query<(&ClothSkinning, &mut Particles), Awake>) {
    for (skinning, mut particles) in &mut cloths {
        let Particles { p, w, .. } = &mut *particles;
        let (targets, normals) = &skinning.now;
        limit_to_skin(p, w, &skinning.vertices, targets, normals, skinning.limits);
    }
}

/// After a step: the largest distance of an attached vertex from its target, kept if it is the largest yet.
pub fn measure_attachment_error(mut cloths: Query<(&mut ClothSkinning, &Particles, &Attachments), Awake>) {
    for (mut skinning, particles, attachments) in &mut cloths {
        let targets = skinning.targets();
        let error = attachments
            .0
            .iter()
            .filter_map(|a| Some(particles.x.get(a.vertex as usize)?.distance(*targets.get(a.vertex as usize)?)))
            .fold(0.0f32, f32::max);
        skinning.max_attachment_error = skinning.max_attachment_error.max(error);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_clips() -> SkinnedCharacter {
        let clip = |name: &str, duration| Clip { name: name.into(), duration, channels: Vec::new() };
        let model = CharacterModel { clips: vec![clip("idle", 3.0), clip("walk", 1.1)], ..Default::default() };
        SkinnedCharacter::new(Arc::new(model), Transform::IDENTITY, Motion::Fixed, 0)
    }

    #[test]
    fn a_new_clip_fades_in_from_its_start_while_the_old_one_plays_on() {
        let mut c = two_clips();
        c.play(1, 2.0);
        let halfway = c.blend(2.0 + f64::from(CROSS_FADE) / 2.0);
        let (walk, idle) = (halfway.playing, halfway.fading.expect("fading"));
        assert_eq!((walk.0, idle.0), (1, 0));
        assert!((walk.1 - 0.5).abs() < 1e-6 && (walk.1 + idle.1 - 1.0).abs() < 1e-6);
        assert!((walk.2 - f64::from(CROSS_FADE) / 2.0).abs() < 1e-9, "the walk starts at its beginning");
        assert!((idle.2 - (2.0 + f64::from(CROSS_FADE) / 2.0)).abs() < 1e-9, "the idle plays on");
        assert_eq!(c.blend(3.0), Blend { playing: (1, 1.0, 1.0), fading: None }, "faded in");
    }

    #[test]
    fn a_change_of_speed_keeps_the_clip_where_it_is() {
        let mut c = two_clips();
        c.set_speed(2.0, 1.0);
        assert!((c.blend(1.0).playing.2 - 1.0).abs() < 1e-9);
        assert!((c.blend(1.5).playing.2 - 2.0).abs() < 1e-9);
        c.set_speed(0.0, 1.5);
        assert!((c.blend(9.0).playing.2 - 2.0).abs() < 1e-9, "paused");
    }

    #[test]
    fn a_rotating_character_turns_with_its_path() {
        let mut c = two_clips();
        c.start = Transform::from_xyz(1.0, 0.0, 0.0);
        c.motion = Motion::Rotate { center: Vec3::ZERO, axis: Vec3::Y, angular_speed: std::f32::consts::FRAC_PI_2 };
        let frame = c.frame(1.0); // a quarter turn about +y: +x goes to -z
        assert!(frame.translation.distance(Vec3::NEG_Z) < 1e-6);
        assert!((frame.rotation * Vec3::X).distance(Vec3::NEG_Z) < 1e-6, "it faces along its path");
    }
}
