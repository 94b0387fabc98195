//! A preset's triangle-mesh colliders ([`MeshCollider`]) as Avian's: a static or kinematic one collides as its
//! triangle mesh (with the pseudo-normals that give it an inside), a dynamic one as the mesh's convex hull. The
//! cloth then meets it through parry's queries like any Avian collider ([`AvianClothPlugin`](super::AvianClothPlugin)).
//! A kinematic one follows its `motion`: before each cloth step its velocities are set to reach the motion's
//! pose at the end of the step, so Avian moves it there and the cloth sweeps it along the same path.

use avian3d::prelude::{
    AngularVelocity, Collider as AvianCollider, Friction, LinearVelocity, Mass, Position, Restitution,
    RigidBody as AvianBody, Rotation, TrimeshFlags,
};
use bevy::prelude::*;

use super::bodies::velocities_between;
use crate::scene::mesh_collider::MeshCollider;
use crate::scene::spawn::SceneStatus;
use crate::sim::SimClock;
use crate::sim::collide::ColliderMotion;
use crate::sim::schedule::{ClothStep, ClothStepSystems};

/// Gives mesh colliders Avian's collider and body, and moves the kinematic ones.
pub struct AvianMeshesPlugin;

impl Plugin for AvianMeshesPlugin {
    fn build(&self, app: &mut App) {
        app.add_observer(give_avian_collider).add_systems(
            ClothStep,
            follow_motions.before(super::bodies::take_avian_state).in_set(ClothStepSystems::BeforeStep),
        );
    }
}

/// Avian's collider for `mesh`: its triangle mesh, or for a dynamic body its convex hull.
fn avian_collider(mesh: &MeshCollider) -> Result<AvianCollider, String> {
    let positions = mesh.mesh.positions.clone();
    if mesh.body.is_some() {
        return AvianCollider::convex_hull(positions).ok_or_else(|| "its points have no convex hull".to_string());
    }
    let triangles = mesh.mesh.triangles.clone();
    AvianCollider::try_trimesh_with_config(positions, triangles, TrimeshFlags::FIX_INTERNAL_EDGES)
        .map_err(|e| format!("not a usable triangle mesh: {e:?}"))
}

fn give_avian_collider(
    added: On<Add, MeshCollider>,
    meshes: Query<(&MeshCollider, Option<&Name>)>,
    mut status: ResMut<SceneStatus>,
    mut commands: Commands,
) {
    let Ok((mesh, name)) = meshes.get(added.entity) else { return };
    let collider = match avian_collider(mesh) {
        Ok(collider) => collider,
        Err(e) => {
            let message = format!("collider '{}': {e}", name.map_or("", |n| n.as_str()));
            error!("{message}");
            status.error = Some(message);
            return;
        }
    };
    let pose = mesh.start;
    let mut entity = commands.entity(added.entity);
    entity.insert((collider, Position(pose.translation), Rotation(pose.rotation)));
    if let Some(friction) = mesh.friction {
        entity.insert(Friction::new(friction));
    }
    if let Some(restitution) = mesh.restitution {
        entity.insert(Restitution::new(restitution));
    }
    match (mesh.body, &mesh.motion) {
        (Some(body), _) => {
            entity.insert((
                AvianBody::Dynamic,
                Mass(body.mass),
                LinearVelocity(body.velocity),
                AngularVelocity(body.angular_velocity),
            ));
        }
        (None, ColliderMotion::Static) => {
            entity.insert(AvianBody::Static);
        }
        (None, _) => {
            entity.insert(AvianBody::Kinematic);
        }
    }
}

/// Before each cloth step: every kinematic mesh at the velocities that take it to its motion's pose at the end
/// of the step.
fn follow_motions(
    mut meshes: Query<(&MeshCollider, &Position, &Rotation, &mut LinearVelocity, &mut AngularVelocity)>,
    clock: Res<SimClock>,
) {
    let step = clock.step_dt;
    if step <= 0.0 {
        return;
    }
    for (mesh, position, rotation, mut linear, mut angular) in &mut meshes {
        if mesh.body.is_some() || mesh.motion == ColliderMotion::Static {
            continue;
        }
        let target = mesh.motion.pose(&mesh.start, clock.time + f64::from(step));
        (linear.0, angular.0) = velocities_between((position.0, rotation.0), &target, step);
    }
}
