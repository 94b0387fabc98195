//! Random scenes drawn from the whole preset format (`docs/presets.md`): every cloth shape, pin selector and
//! motion, grips and body grips, balloons, every collider shape and motion, dynamic bodies, throws, tearing and
//! self-collision, and every knob inside its range, at its ends and now and then beyond it (which the parser must
//! refuse with the field's name). A scene depends on its seed alone.

use bevy::math::Vec3;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use bevy::transform::components::Transform;
use drape::scene::desc::{
    BodyDesc, BodyGrip, ClothDesc, ClothShape, ColliderDesc, Grip, PinSelector, Placement, SceneDesc, ShapeDesc,
    ThrowDesc,
};

use drape::scene::spawn::{SceneError, build_cloth, build_scene};
use drape::sim::SimParams;
use drape::sim::cloth::{ClothCollider, ClothMaterial};
use drape::sim::collide::{ColliderMotion, ColliderShape};
use drape::sim::constraints::attach::Motion;
use drape::sim::constraints::bend::BendingModel;
use drape::sim::constraints::tether::TetherLengths;
use drape::sim::knobs::{self, Knob, VectorKnob};
use drape::sim::params::Solver;

/// Upper bound on particles × iterations × substeps of a drawn scene, so a thousand scenes run in minutes while
/// the counts still reach the ends of their ranges (200 iterations on a small cloth, 64 substeps on a tiny one).
pub const WORK_PER_STEP: u32 = 400_000;

/// Chance that a drawn scene carries one value beyond its documented range.
const HOSTILE: f64 = 0.08;

/// The scene of `seed`.
pub fn scene(seed: u64) -> SceneDesc {
    let rng = &mut SmallRng::seed_from_u64(seed);
    let mut params = params(rng);
    let cloth_count = rng.random_range(1..=3);
    let mut colliders = Vec::new();
    if rng.random_bool(0.8) {
        colliders.push(ColliderDesc::ground());
    }
    for k in 0..rng.random_range(0..=4) {
        colliders.push(collider(rng, k));
    }
    let bodies: Vec<String> = colliders.iter().filter(|c| c.body.is_some()).map(|c| c.name.clone()).collect();
    let particle_budget = (WORK_PER_STEP / (params.iterations * params.substeps)).max(12) / cloth_count;
    let cloths = (0..cloth_count).map(|k| cloth(rng, k, particle_budget, &bodies, &mut params)).collect();
    let throws = (0..rng.random_range(0..=2)).map(|_| throw(rng)).collect();
    let mut desc = SceneDesc {
        name: format!("soak_{seed:016x}"),
        params,
        cloths,
        colliders,
        throws,
        seed: rng.random(),
        ..Default::default()
    };
    draw_later_options(seed, &mut desc);
    if closes(seed) {
        close(&mut desc);
    }
    clear_the_start(&mut desc);
    if rng.random_bool(HOSTILE) {
        break_one_value(rng, &mut desc);
    }
    desc
}

/// The options added after the soak's first figures (tethers, XPBD, cloth collision, tether slack, collider
/// edges, the stretch solved together), drawn from a generator of their own, each after the ones before, so that every seed still draws the
/// scenes it drew before, with these on top.
fn draw_later_options(seed: u64, desc: &mut SceneDesc) {
    let rng = &mut SmallRng::seed_from_u64(seed ^ 0x7e7e_7e7e_7e7e_7e7e);
    desc.params.tethers = rng.random_bool(0.3);
    desc.params.tether_lengths = if rng.random_bool(0.5) { TetherLengths::Geodesic } else { TetherLengths::Euclidean };
    for cloth in &mut desc.cloths {
        cloth.tethers = rng.random_bool(0.2).then(|| rng.random_bool(0.5));
    }
    let solver = |rng: &mut SmallRng| if rng.random_bool(0.4) { Solver::Xpbd } else { Solver::Pbd };
    desc.params.solver = solver(rng);
    for cloth in &mut desc.cloths {
        cloth.solver = rng.random_bool(0.2).then(|| solver(rng));
        cloth.material.stretch_compliance = compliance_value(rng, &knobs::STRETCH_COMPLIANCE);
        cloth.material.bend_compliance = compliance_value(rng, &knobs::BEND_COMPLIANCE);
    }
    desc.params.cloth_collision = rng.random_bool(0.4);
    for cloth in &mut desc.cloths {
        cloth.material.volume_compliance = compliance_value(rng, &knobs::VOLUME_COMPLIANCE);
    }
    desc.params.tether_slack = if rng.random_bool(0.5) { 0.0 } else { knob_value(rng, &knobs::TETHER_SLACK) };
    desc.params.collider_edges = rng.random_bool(0.5);
    desc.params.global_stretch = rng.random_bool(SOLVED_TOGETHER);
    desc.params.global_bending = rng.random_bool(SOLVED_TOGETHER);
}

/// Share of the scenes whose XPBD cloths solve their stretch, and independently their bending, together: a
/// tenth, as each such step costs tens of sweeps' work.
const SOLVED_TOGETHER: f64 = 0.1;

/// Share of the scenes made closed ([`close`]), so that the energy invariant has scenes to hold.
const CLOSED: f64 = 0.35;

/// Whether the scene of `seed` is made closed: drawn from a generator of its own, so the other draws stay.
fn closes(seed: u64) -> bool {
    SmallRng::seed_from_u64(seed ^ 0x0c10_5ed0_0c10_5ed0).random_bool(CLOSED)
}

/// Makes `desc` closed ([`SceneDesc::is_closed`]): no wind or gusts, no throws, every collider, pin and grip
/// still, no balloon pressed above its rest volume.
fn close(desc: &mut SceneDesc) {
    (desc.params.wind, desc.params.wind_gust) = (Vec3::ZERO, 0.0);
    desc.params.pressure = desc.params.pressure.min(1.0);
    desc.throws.clear();
    desc.colliders.iter_mut().for_each(|c| c.motion = ColliderMotion::Static);
    for cloth in &mut desc.cloths {
        cloth.pin_motion = Motion::Fixed;
        cloth.grips.iter_mut().for_each(|g| g.motion = Motion::Fixed);
    }
}

/// A compliance of `knob`: zero, its ends, or log-uniform over eight decades below its maximum.
fn compliance_value(rng: &mut SmallRng, knob: &Knob) -> f32 {
    match rng.random_range(0..8) {
        0 => knob.min,
        1 => knob.max,
        2 => knob.default,
        _ => knob.max * 10f32.powf(-8.0 * rng.random::<f32>()),
    }
}

/// How far every cloth vertex starts from a collider other than the ground, metres.
const CLEARANCE: f32 = 0.05;

/// Moves the scene's start out of the states no preset author would write: cloth below the ground is lifted
/// above it, colliders (tilted planes too) that a cloth starts inside are removed (with the grips on them), a barrel
/// holds the cloths (centred on them, widened to fit) — a cloth starting outside a barrel is refused, which the unit
/// tests cover — and no pin is carried into a collider.
fn clear_the_start(desc: &mut SceneDesc) {
    let built: Vec<Vec<Vec3>> =
        desc.cloths.iter().map(|c| build_cloth(c).map(|b| b.particles.x).unwrap_or_default()).collect();
    let ground =
        desc.colliders.iter().any(|c| c.shape == ColliderShape::Plane.into() && c.placement == Placement::default());
    if ground {
        for (cloth, x) in desc.cloths.iter_mut().zip(&built) {
            let lowest = x.iter().map(|p| p.y).fold(f32::INFINITY, f32::min);
            let clearance = 2.0 * cloth.material.thickness + 0.01;
            if lowest < clearance {
                cloth.placement.translation.y += clearance - lowest;
            }
        }
    }
    let built: Vec<Vec<Vec3>> =
        desc.cloths.iter().map(|c| build_cloth(c).map(|b| b.particles.x).unwrap_or_default()).collect();
    let everything: Vec<Vec3> = built.iter().flatten().copied().collect();
    let reach = |x: &[Vec3], center: Vec3| x.iter().map(|p| p.distance(center)).fold(0.0, f32::max);
    let mut removed = Vec::new();
    desc.colliders.retain_mut(|collider| {
        let pose =
            Transform::from_translation(collider.placement.translation).with_rotation(collider.placement.rotation());
        let ShapeDesc::Analytic(shape) = &mut collider.shape else { return true };
        match shape {
            ColliderShape::Plane if collider.placement == Placement::default() => true,
            ColliderShape::Barrel { radius, half_height } => {
                let center = everything.iter().copied().sum::<Vec3>() / everything.len().max(1) as f32;
                collider.placement.translation = center;
                let fit = reach(&everything, center) + 0.1;
                (*radius, *half_height) = (radius.max(fit), half_height.max(fit));
                true
            }
            shape => {
                let placed = ClothCollider::new(*shape).shape.placed(&pose);
                let clear = everything.iter().all(|x| placed.signed_distance(*x) > CLEARANCE);
                if !clear {
                    removed.push(collider.name.clone());
                }
                clear
            }
        }
    });
    for cloth in &mut desc.cloths {
        cloth.body_grips.retain(|grip| !removed.contains(&grip.body));
    }
    keep_pins_out_of_colliders(desc);
}

/// Stills the pin and grip motions of a cloth whose pins the scene build finds in a collider or out of a barrel
/// (carried there by a motion), and drops its pins and grips if a moving collider still runs into them: the build
/// refuses such a scene, which `pins_inside_a_collider_or_carried_into_one_are_refused` covers.
fn keep_pins_out_of_colliders(desc: &mut SceneDesc) {
    for _ in 0..2 * desc.cloths.len() {
        let cloth = match build_scene(desc) {
            Err(SceneError::PinInsideCollider { cloth, .. } | SceneError::PinOutsideBarrel { cloth, .. }) => cloth,
            _ => return,
        };
        let Some(cloth) = desc.cloths.iter_mut().find(|c| c.name == cloth) else { return };
        if cloth.pin_motion != Motion::Fixed || cloth.grips.iter().any(|g| g.motion != Motion::Fixed) {
            cloth.pin_motion = Motion::Fixed;
            cloth.grips.iter_mut().for_each(|g| g.motion = Motion::Fixed);
        } else {
            cloth.pins.clear();
            cloth.grips.clear();
        }
    }
}

/// A value of `knob`: mostly inside the range, often at one of its ends.
fn knob_value(rng: &mut SmallRng, knob: &Knob) -> f32 {
    match rng.random_range(0..10) {
        0 => knob.min,
        1 => knob.max,
        2 => knob.default,
        _ => rng.random_range(knob.min..=knob.max),
    }
}

/// A count of `knob`, log-uniform so small counts are as common as large ones.
fn count_value(rng: &mut SmallRng, knob: &Knob) -> u32 {
    match rng.random_range(0..8) {
        0 => knob.min as u32,
        1 => knob.max as u32,
        _ => (knob.min.ln() + rng.random::<f32>() * (knob.max.ln() - knob.min.ln())).exp().round() as u32,
    }
}

fn vector_value(rng: &mut SmallRng, knob: &VectorKnob, typical: f32) -> Vec3 {
    let length = match rng.random_range(0..6) {
        0 => knob.max_length,
        1 => 0.0,
        _ => rng.random_range(0.0..typical),
    };
    unit_vector(rng) * length
}

fn unit_vector(rng: &mut SmallRng) -> Vec3 {
    Vec3::new(rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0))
        .normalize_or(Vec3::Y)
}

fn params(rng: &mut SmallRng) -> SimParams {
    let mut gravity = knobs::GRAVITY.default;
    if rng.random_bool(0.3) {
        gravity = vector_value(rng, &knobs::GRAVITY, 30.0);
    }
    let iterations = count_value(rng, &knobs::ITERATIONS);
    // 64 substeps × 200 iterations would leave a cloth of two particles: keep the product drawable
    let substeps = count_value(rng, &knobs::SUBSTEPS).min((WORK_PER_STEP / 12 / iterations).max(1));
    SimParams {
        iterations,
        substeps,
        rate_hz: knob_value(rng, &knobs::RATE_HZ),
        gravity,
        wind: if rng.random_bool(0.4) { vector_value(rng, &knobs::WIND, 15.0) } else { Vec3::ZERO },
        wind_gust: if rng.random_bool(0.3) { knob_value(rng, &knobs::WIND_GUST) } else { 0.0 },
        air_drag: knob_value(rng, &knobs::AIR_DRAG),
        damping: knob_value(rng, &knobs::DAMPING),
        bending_model: if rng.random_bool(0.5) { BendingModel::Dihedral } else { BendingModel::Distance },
        friction: knob_value(rng, &knobs::FRICTION),
        restitution: knob_value(rng, &knobs::RESTITUTION),
        tearing: rng.random_bool(0.25),
        tear_threshold: knob_value(rng, &knobs::TEAR_THRESHOLD),
        self_collision: rng.random_bool(0.3),
        untangle: rng.random_bool(0.8),
        pressure: knob_value(rng, &knobs::PRESSURE),
        parallel: rng.random_bool(0.5),
        ..SimParams::default()
    }
}

fn material(rng: &mut SmallRng) -> ClothMaterial {
    ClothMaterial {
        stretch_stiffness: knob_value(rng, &knobs::STRETCH_STIFFNESS),
        bend_stiffness: knob_value(rng, &knobs::BEND_STIFFNESS),
        density: knob_value(rng, &knobs::DENSITY),
        thickness: knob_value(rng, &knobs::THICKNESS),
        ..ClothMaterial::default()
    }
}

fn placement(rng: &mut SmallRng) -> Placement {
    let translation = Vec3::new(rng.random_range(-1.5..1.5), rng.random_range(0.2..3.0), rng.random_range(-1.5..1.5));
    let rotation_degrees = if rng.random_bool(0.5) {
        Vec3::ZERO
    } else {
        Vec3::new(rng.random_range(-180.0..180.0), rng.random_range(-180.0..180.0), rng.random_range(-180.0..180.0))
    };
    Placement { translation, rotation_degrees }
}

/// One cloth of at most about `budget` particles. A balloon needs a closed mesh, so it is drawn as an icosphere
/// (and, rarely, as an open grid, which the scene must refuse).
fn cloth(rng: &mut SmallRng, k: u32, budget: u32, bodies: &[String], params: &mut SimParams) -> ClothDesc {
    let balloon = rng.random_bool(0.15);
    let shape = match rng.random_range(0..10) {
        _ if balloon && rng.random_bool(0.95) => icosphere(rng, budget),
        0..=6 => {
            let side = (budget as f32).sqrt().max(2.0) as u32;
            let cols = rng.random_range(1..=side.clamp(1, 60));
            let rows = rng.random_range(1..=(budget / (cols + 1)).saturating_sub(1).clamp(1, 60));
            let width = rng.random_range(0.05..3.0);
            let depth =
                if rng.random_bool(0.7) { width * rows as f32 / cols as f32 } else { rng.random_range(0.05..3.0) };
            ClothShape::Grid { cols, rows, width, depth }
        }
        7 if budget >= 300 => {
            ClothShape::Obj { file: "meshes/round_tablecloth.obj".into(), scale: rng.random_range(0.2..2.0) }
        }
        8 => disk(rng, budget),
        _ => icosphere(rng, budget),
    };
    let pins = (0..rng.random_range(0..=2)).map(|_| selector(rng)).collect();
    let grips =
        (0..u32::from(rng.random_bool(0.2))).map(|_| Grip { at: vec![selector(rng)], motion: motion(rng) }).collect();
    let body_grips = match bodies.first() {
        Some(body) if rng.random_bool(0.3) => vec![BodyGrip { body: body.clone(), at: vec![selector(rng)] }],
        _ => Vec::new(),
    };
    if balloon && rng.random_bool(0.5) {
        // the soft balloon of issue 27, now and then
        params.pressure = rng.random_range(1.5..=knobs::PRESSURE.max);
    }
    ClothDesc {
        name: format!("cloth{k}"),
        shape,
        placement: placement(rng),
        pins,
        pin_motion: if rng.random_bool(0.6) { Motion::Fixed } else { motion(rng) },
        material: material(rng),
        color: [rng.random(), rng.random(), rng.random()],
        // the look has no effect on the physics: drawing it would only reshuffle every later scene
        fabric: Default::default(),
        balloon,
        grips,
        body_grips,
        tethers: None,
        solver: None,
        skinning: None,
    }
}

/// A disk with at most about `budget` particles (1 + 3·k·(k + 1) of them for k rings).
fn disk(rng: &mut SmallRng, budget: u32) -> ClothShape {
    let largest = (1..=60).rev().find(|&k| 3 * k * (k + 1) < budget.max(7)).unwrap_or(1);
    ClothShape::Disk { radius: rng.random_range(0.05..1.5), rings: rng.random_range(1..=largest) }
}

/// An icosphere with at most about `budget` particles (10·4^s + 2 of them).
fn icosphere(rng: &mut SmallRng, budget: u32) -> ClothShape {
    let largest = (0..=4).rev().find(|&s| 10 * 4u32.pow(s) + 2 <= budget.max(12)).unwrap_or(0);
    ClothShape::Icosphere { subdivisions: rng.random_range(0..=largest), radius: rng.random_range(0.05..1.0) }
}

fn selector(rng: &mut SmallRng) -> PinSelector {
    let unit = |rng: &mut SmallRng| rng.random_range(0.0..=1.0);
    match rng.random_range(0..6) {
        0 => PinSelector::Corners,
        1 => PinSelector::At { u: unit(rng), v: unit(rng) },
        2 => PinSelector::Row { v: unit(rng) },
        3 => {
            let (a, b, v) = (unit(rng), unit(rng), unit(rng));
            PinSelector::RowSpan { v, from_u: a.min(b), to_u: a.max(b) }
        }
        4 => PinSelector::Column { u: unit(rng) },
        _ => PinSelector::Indices((0..rng.random_range(1..=6)).map(|_| rng.random_range(0..400)).collect()),
    }
}

/// A pin or grip motion, at most a few metres per second.
fn motion(rng: &mut SmallRng) -> Motion {
    match rng.random_range(0..4) {
        0 => Motion::Fixed,
        1 => Motion::Oscillate {
            axis: unit_vector(rng),
            amplitude: rng.random_range(0.0..0.6),
            frequency: rng.random_range(0.0..2.0),
        },
        2 => Motion::Rotate {
            center: Vec3::new(rng.random_range(-1.0..1.0), rng.random_range(0.0..2.0), rng.random_range(-1.0..1.0)),
            axis: unit_vector(rng),
            angular_speed: rng.random_range(-3.0..3.0),
        },
        _ => Motion::Linear { velocity: unit_vector(rng) * rng.random_range(0.0..1.5) },
    }
}

fn collider(rng: &mut SmallRng, k: u32) -> ColliderDesc {
    let size = |rng: &mut SmallRng| rng.random_range(0.03..0.8);
    let shape = match rng.random_range(0..9) {
        0..=2 => ColliderShape::Sphere { radius: size(rng) },
        3..=4 => ColliderShape::Box { half_extents: Vec3::new(size(rng), size(rng), size(rng)) },
        5..=6 => ColliderShape::Capsule { radius: size(rng), half_height: size(rng) },
        7 => ColliderShape::Barrel { radius: rng.random_range(0.5..3.0), half_height: rng.random_range(0.5..3.0) },
        _ => ColliderShape::Plane,
    };
    let solid = !matches!(shape, ColliderShape::Plane | ColliderShape::Barrel { .. });
    let body = (solid && rng.random_bool(0.3)).then(|| BodyDesc {
        mass: rng.random_range(0.05..20.0),
        velocity: unit_vector(rng) * rng.random_range(0.0..4.0),
        angular_velocity: unit_vector(rng) * rng.random_range(0.0..4.0),
    });
    let moves = body.is_none() && !matches!(shape, ColliderShape::Plane) && rng.random_bool(0.5);
    let motion = if moves { collider_motion(rng) } else { ColliderMotion::Static };
    let mut placement = placement(rng);
    if matches!(shape, ColliderShape::Barrel { .. }) {
        placement.translation.y += 1.0;
    }
    ColliderDesc {
        name: format!("collider{k}"),
        shape: shape.into(),
        placement,
        motion,
        friction: rng.random_bool(0.3).then(|| knob_value(rng, &knobs::FRICTION)),
        restitution: rng.random_bool(0.3).then(|| knob_value(rng, &knobs::RESTITUTION)),
        body,
        color: [rng.random(), rng.random(), rng.random()],
    }
}

/// A collider motion whose surface moves at most about 10 m/s.
fn collider_motion(rng: &mut SmallRng) -> ColliderMotion {
    match rng.random_range(0..3) {
        0 => ColliderMotion::Oscillate {
            axis: unit_vector(rng),
            amplitude: rng.random_range(0.0..0.8),
            frequency: rng.random_range(0.0..2.0),
        },
        1 => ColliderMotion::Spin { axis: unit_vector(rng), angular_speed: rng.random_range(-6.0..6.0) },
        _ => ColliderMotion::Path {
            waypoints: (0..rng.random_range(1..=4)).map(|_| unit_vector(rng) * rng.random_range(0.0..1.5)).collect(),
            duration: rng.random_range(0.5..6.0),
            looped: rng.random_bool(0.5),
        },
    }
}

fn throw(rng: &mut SmallRng) -> ThrowDesc {
    ThrowDesc {
        time: rng.random_range(0.0..3.0),
        from: Vec3::new(rng.random_range(-2.0..2.0), rng.random_range(0.5..3.0), rng.random_range(2.0..4.0)),
        velocity: Vec3::new(rng.random_range(-2.0..2.0), rng.random_range(-1.0..3.0), rng.random_range(-12.0..-2.0)),
        radius: rng.random_range(0.03..0.3),
        mass: rng.random_range(0.05..10.0),
    }
}

/// Pushes one knob of the scene beyond its range, as a careless hand-written preset would.
fn break_one_value(rng: &mut SmallRng, desc: &mut SceneDesc) {
    let beyond = |rng: &mut SmallRng, knob: &Knob| {
        if rng.random_bool(0.5) {
            knob.min - rng.random_range(0.01..10.0)
        } else {
            knob.max * rng.random_range(1.01..4.0)
        }
    };
    let p = &mut desc.params;
    match rng.random_range(0..6) {
        0 => p.damping = beyond(rng, &knobs::DAMPING),
        1 => p.friction = beyond(rng, &knobs::FRICTION),
        2 => p.pressure = beyond(rng, &knobs::PRESSURE),
        3 => p.rate_hz = beyond(rng, &knobs::RATE_HZ),
        4 => p.iterations = knobs::ITERATIONS.max as u32 + rng.random_range(1..1000),
        _ => {
            if let Some(cloth) = desc.cloths.first_mut() {
                cloth.material.thickness = beyond(rng, &knobs::THICKNESS);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn later_options_are_drawn_without_changing_the_earlier_draws() {
        let scenes: Vec<SceneDesc> = (0..200).map(scene).collect();
        let with_tethers = scenes.iter().filter(|d| d.params.tethers).count();
        let per_cloth = scenes.iter().flat_map(|d| &d.cloths).filter(|c| c.tethers.is_some()).count();
        assert!((30..=90).contains(&with_tethers), "{with_tethers} of 200 scenes with tethers");
        assert!(per_cloth > 20, "{per_cloth} cloths with their own switch");
        // about a third of the scenes are closed, and nothing else decides it
        let closed = scenes.iter().filter(|d| d.is_closed()).count();
        assert!((50..=100).contains(&closed), "{closed} of 200 scenes closed");
        assert!(
            (0..200)
                .filter(|&s| closes(s))
                .all(|s| scenes[s as usize].is_closed() || scenes[s as usize].params.pressure > 1.0)
        );
        // the rest of a scene is what its seed drew before the later options existed
        assert!(!closes(7));
        let mut plain = scene(7);
        plain.params.tethers = false;
        plain.params.tether_lengths = TetherLengths::Geodesic;
        plain.params.tether_slack = 0.0;
        plain.params.collider_edges = false;
        (plain.params.solver, plain.params.cloth_collision) = (Solver::Pbd, false);
        plain.cloths.iter_mut().for_each(|c| c.tethers = None);
        let rng = &mut SmallRng::seed_from_u64(7);
        assert_eq!(plain.params, params(rng), "the parameters drawn first are unchanged");
    }
}
