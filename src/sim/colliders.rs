//! The colliders of a substep as the kernels see them: [`CollisionWorld`] gathers every [`ClothCollider`] entity
//! swept from its pose at the start of the substep to its pose at the end (§3.4), and [`move_colliders`] moves
//! the kinematic ones (line (7)). The shapes, the swept ray test and the contacts are the kernels of
//! [`collide`](super::collide).

use bevy::prelude::*;

use super::cloth::{ClothCollider, PreviousPose};
use super::collide::features::ColliderFeatures;
use super::collide::shapes::Shape;
use super::collide::{ColliderMotion, ColliderShape, contacts, path_length, point_along, swept};
use super::constraints::attach::{periodic_phase, turned};
use super::parallel::SliceOutputs;
use super::rigid::ClothRigidBody;
use super::{SimClock, SimParams};

impl ColliderShape {
    /// The world-space shape under `transform` (uniform scale: its largest component).
    pub fn placed(&self, transform: &Transform) -> Shape {
        let scale = transform.scale.max_element();
        let center = transform.translation;
        let rotation = transform.rotation;
        match *self {
            ColliderShape::Plane => Shape::Plane { point: center, normal: transform.up().as_vec3() },
            ColliderShape::Sphere { radius } => Shape::Sphere { center, radius: radius * scale },
            ColliderShape::Box { half_extents } => Shape::Box { center, rotation, half_extents: half_extents * scale },
            ColliderShape::Capsule { radius, half_height } => {
                let axis = transform.up().as_vec3() * half_height * scale;
                Shape::Capsule { a: center - axis, b: center + axis, radius: radius * scale }
            }
            ColliderShape::Barrel { radius, half_height } => {
                Shape::Barrel { center, rotation, radius: radius * scale, half_height: half_height * scale }
            }
        }
    }
}

impl ColliderMotion {
    /// The pose at time `t` of a collider whose pose at t = 0 is `start`.
    pub fn pose(&self, start: &Transform, t: f64) -> Transform {
        match *self {
            ColliderMotion::Static => *start,
            ColliderMotion::Oscillate { axis, amplitude, frequency } => start.with_translation(
                start.translation + axis.normalize_or_zero() * amplitude * periodic_phase(frequency, t).sin(),
            ),
            ColliderMotion::Spin { axis, angular_speed } => start.with_rotation(
                Quat::from_axis_angle(axis.normalize_or(Vec3::Y), turned(angular_speed, t)) * start.rotation,
            ),
            ColliderMotion::Path { ref waypoints, duration, looped } => {
                let laps = t / f64::from(duration);
                let fraction = if looped { laps.rem_euclid(1.0) } else { laps.clamp(0.0, 1.0) } as f32;
                start.with_translation(start.translation + point_along(waypoints, looped, fraction))
            }
        }
    }

    /// The fastest any point of the collider moves, m/s, for a shape reaching `reach` metres from its centre.
    pub fn max_speed(&self, reach: f32) -> f32 {
        match *self {
            ColliderMotion::Static => 0.0,
            ColliderMotion::Oscillate { axis, amplitude, frequency } => {
                axis.normalize_or_zero().length() * (amplitude * frequency * std::f32::consts::TAU).abs()
            }
            ColliderMotion::Spin { angular_speed, .. } => angular_speed.abs() * reach,
            ColliderMotion::Path { ref waypoints, duration, looped } => path_length(waypoints, looped) / duration,
        }
    }
}

/// The colliders of the substep being run, each swept from its previous pose to its pose, in a fixed order:
/// contacts name their collider by index into it. Refilled in place every substep.
#[derive(Resource, Clone, Debug, Default)]
pub struct CollisionWorld {
    /// The colliders, each swept over the substep; contacts refer to them by index.
    pub colliders: Vec<swept::SweptCollider>,
    /// The entity of each collider, in the same order.
    pub entities: Vec<Entity>,
    /// Scratch of the parallel contact search ([`contacts::generate_step_contacts`]).
    pub slices: SliceOutputs<contacts::SliceContacts>,
    /// Every collider's edges, for the feature contacts (§4.2).
    pub features: ColliderFeatures,
}

impl CollisionWorld {
    /// The index of the collider of entity `e`.
    pub fn index_of(&self, e: Entity) -> Option<usize> {
        self.entities.iter().position(|&k| k == e)
    }

    /// Refills the list from the colliders' two poses, then another engine's colliders (`external`); unset
    /// friction and restitution come from the parameters.
    pub fn gather<'a>(
        &mut self,
        colliders: impl Iterator<Item = (Entity, &'a ClothCollider, &'a Transform, Option<&'a PreviousPose>)>,
        external: Option<&ExternalColliders>,
        params: &SimParams,
    ) {
        self.colliders.clear();
        self.entities.clear();
        for (entity, collider, end, start) in colliders {
            let start = start.map_or(*end, |s| s.0);
            let scale = end.scale;
            let local = collider.shape.placed(&Transform::from_scale(scale));
            let pose = |t: &Transform| Isometry3d::new(t.translation, t.rotation);
            self.colliders.push(swept::SweptCollider::new(
                local,
                pose(&start),
                pose(end),
                collider.friction.unwrap_or(params.friction),
                collider.restitution.unwrap_or(params.restitution),
            ));
            self.entities.push(entity);
        }
        if let Some(external) = external {
            self.colliders.extend(external.colliders.iter().cloned());
            self.entities.extend(&external.entities);
        }
        if params.collider_edges {
            self.features.refill(&self.colliders);
        } else {
            self.features.refill(&[]);
        }
    }
}

/// Colliders of another engine (Avian's, with the `avian` feature), swept over the substep by that engine's
/// own system before line (8); [`CollisionWorld::gather`] puts them after drape's.
#[derive(Resource, Clone, Debug, Default)]
pub struct ExternalColliders {
    /// The colliders, each swept over the substep.
    pub colliders: Vec<swept::SweptCollider>,
    /// The entity of each collider, in the same order.
    pub entities: Vec<Entity>,
}

/// Line (7) for kinematic colliders: each takes its pose at the end of the substep, remembering the start.
pub fn move_colliders(
    mut colliders: Query<(&ClothCollider, &mut Transform, &mut PreviousPose), Without<ClothRigidBody>>,
    clock: Res<SimClock>,
) {
    let t = clock.time + f64::from(clock.dt);
    for (collider, mut transform, mut previous) in &mut colliders {
        previous.0 = *transform;
        if collider.motion != ColliderMotion::Static {
            *transform = collider.motion.pose(&collider.start, t);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_moves_at_constant_speed_and_loops() {
        let path =
            ColliderMotion::Path { waypoints: vec![Vec3::X, Vec3::new(1.0, 1.0, 0.0)], duration: 4.0, looped: true };
        let start = Transform::from_xyz(0.0, 2.0, 0.0);
        // perimeter 1 + 1 + √2 ≈ 3.41: a quarter of it, 0.85 m, lies on the first leg
        let quarter = (2.0 + std::f32::consts::SQRT_2) / 4.0;
        assert!((path.pose(&start, 1.0).translation - Vec3::new(quarter, 2.0, 0.0)).length() < 1e-5);
        assert!((path.pose(&start, 4.0).translation - start.translation).length() < 1e-5, "back at the start");
        assert!((path.pose(&start, 6.0).translation - path.pose(&start, 2.0).translation).length() < 1e-5);
        let once = ColliderMotion::Path { waypoints: vec![Vec3::NEG_Y * 3.0], duration: 1.0, looped: false };
        assert!((once.pose(&start, 9.0).translation.y + 1.0).abs() < 1e-5, "stays at the last waypoint");
    }
}
