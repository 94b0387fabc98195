//! Scenes built in code: the classic pinned sheet (seeds/004) and a sheet draped over a sphere (seeds/003).

use bevy::math::Vec3;

use super::desc::{CameraDesc, ClothDesc, ClothShape, ColliderDesc, PinSelector, Placement, SceneDesc};
use crate::sim::SimParams;

/// Names of the built-in scenes, in menu order.
pub const NAMES: [&str; 2] = ["hanging_sheet", "sphere_drape"];

/// The built-in scene called `name`.
pub fn by_name(name: &str) -> Option<SceneDesc> {
    match name {
        "hanging_sheet" => Some(hanging_sheet()),
        "sphere_drape" => Some(sphere_drape()),
        _ => None,
    }
}

/// seeds/004: an N×N sheet starts horizontal with two adjacent corners pinned and swings down under gravity.
pub fn hanging_sheet() -> SceneDesc {
    SceneDesc {
        name: "hanging_sheet".into(),
        params: SimParams::default(),
        cloths: vec![ClothDesc {
            name: "sheet".into(),
            shape: ClothShape::Grid { cols: 32, rows: 32, width: 2.0, depth: 2.0 },
            placement: Placement::at(Vec3::new(0.0, 2.6, 0.0)),
            pins: vec![PinSelector::At { u: 0.0, v: 0.0 }, PinSelector::At { u: 1.0, v: 0.0 }],
            ..Default::default()
        }],
        colliders: vec![ColliderDesc::ground()],
        camera: CameraDesc { focus: Vec3::new(0.0, 1.6, 0.0), yaw_degrees: 30.0, pitch_degrees: 12.0, distance: 5.0 },
    }
}

/// seeds/003: a sheet falls onto a sphere and settles on it with friction.
pub fn sphere_drape() -> SceneDesc {
    SceneDesc {
        name: "sphere_drape".into(),
        params: SimParams { friction: 1.0, ..SimParams::default() },
        cloths: vec![ClothDesc {
            name: "sheet".into(),
            shape: ClothShape::Grid { cols: 48, rows: 48, width: 2.4, depth: 2.4 },
            placement: Placement::at(Vec3::new(0.0, 2.0, 0.0)),
            ..Default::default()
        }],
        colliders: vec![ColliderDesc::ground(), ColliderDesc::sphere(Vec3::new(0.0, 1.0, 0.0), 0.55)],
        camera: CameraDesc { focus: Vec3::new(0.0, 0.9, 0.0), yaw_degrees: 30.0, pitch_degrees: 22.0, distance: 4.5 },
    }
}
