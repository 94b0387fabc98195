//! The invariants of [`invariants`] checked on a running world after every fixed step: what
//! `drape soak` and the live-abuse test watch.

use bevy::prelude::*;

use super::invariants::{self, Violation};
use drape::sim::cloth::{
    Attachments, Balloon, BodyAttachments, CappedMoves, Cloth, ClothCollider, ClothMaterial, ClothSolver, Contacts,
    Grabbed, HostedBody, Particles, StartingOverlaps, StretchConstraints,
};
use drape::sim::collide::ColliderMotion;
use drape::sim::collide::DEPENETRATION_SPEED;
use drape::sim::collide::shapes::Shape;
use drape::sim::integrate::MAX_SPEED;
use drape::sim::params::Solver;
use drape::sim::rigid::ClothRigidBody;
use drape::sim::selfcollide::SELF_DEPENETRATION_SPEED;
use drape::sim::{SimClock, SimParams, metrics};

/// At most this many violations of one invariant are kept.
pub const KEPT_PER_INVARIANT: usize = 3;

/// Each cloth's positions after the last step, the grab targets, and what was seen so far.
pub struct StepWatch {
    before: Vec<(Entity, Vec<Vec3>)>,
    /// Each cloth's [`CappedMoves`] after the last step.
    capped_before: Vec<(Entity, u64)>,
    /// The cloths that may still be leaving a starting overlap ([`StartingOverlaps::leaving`]) after the last step.
    leaving: Vec<Entity>,
    grabs: Vec<(Entity, Vec3)>,
    /// Each cloth's [`invariants::hanging_length`] and [`invariants::span`] at the start.
    hangs: Vec<(Entity, f32, f32)>,
    time: f64,
    /// Broken invariants, at most [`KEPT_PER_INVARIANT`] of each.
    pub violations: Vec<Violation>,
    /// Largest stretch of a stiff, held-still, untorn cloth away from colliders.
    pub max_stiff_stretch: f32,
    /// Checks of a stiff cloth's stretch skipped because the step does not resolve it
    /// ([`invariants::Resolution`]).
    pub unresolved_stretch_checks: u64,
    /// Vertices deeper in a collider than the bound that were not held to it because the speed cap held them
    /// ([`invariants::Depths::capped_too_deep`]).
    pub capped_depth_skips: u64,
    /// Largest one-step move over the bound on it (≤ 1 holds).
    pub worst_move_ratio: f32,
    /// Free vertex moves the speed cap shortened ([`CappedMoves`]).
    pub capped_moves: u64,
}

impl StepWatch {
    /// Starts watching the world's cloths as they are now.
    pub fn new(world: &mut World) -> Self {
        let mut watch = Self {
            before: Vec::new(),
            capped_before: Vec::new(),
            leaving: Vec::new(),
            grabs: Vec::new(),
            hangs: Vec::new(),
            time: 0.0,
            violations: Vec::new(),
            max_stiff_stretch: 0.0,
            unresolved_stretch_checks: 0,
            capped_depth_skips: 0,
            worst_move_ratio: 0.0,
            capped_moves: 0,
        };
        watch.remember(world);
        let mut cloths = world.query::<(Entity, &Particles, &Attachments)>();
        let attached = |a: &Attachments| a.0.iter().map(|a| a.vertex).collect::<Vec<_>>();
        watch.hangs = cloths
            .iter(world)
            .map(|(e, p, a)| (e, invariants::hanging_length(&p.x, &attached(a)), invariants::span(&p.x)))
            .collect();
        watch
    }

    /// Particles of every watched cloth.
    pub fn particles(&self) -> usize {
        self.before.iter().map(|(_, x)| x.len()).sum()
    }

    /// Keeps `v` unless [`KEPT_PER_INVARIANT`] of its kind are kept already.
    pub fn record(&mut self, v: Violation) {
        if self.violations.iter().filter(|o| o.invariant == v.invariant).count() < KEPT_PER_INVARIANT {
            self.violations.push(v);
        }
    }

    fn remember(&mut self, world: &mut World) {
        self.before = world.query::<(Entity, &Particles)>().iter(world).map(|(e, p)| (e, p.x.clone())).collect();
        self.capped_before = world.query::<(Entity, &CappedMoves)>().iter(world).map(|(e, c)| (e, c.0)).collect();
        self.leaving = world
            .query::<(Entity, &StartingOverlaps)>()
            .iter(world)
            .filter(|(_, o)| o.leaving())
            .map(|(e, _)| e)
            .collect();
        self.grabs = world.query::<(Entity, &Grabbed)>().iter(world).map(|(e, g)| (e, g.target)).collect();
        self.time = world.resource::<SimClock>().time;
    }

    /// Checks the world after the update numbered `frame` (which may have run zero or several fixed steps: the
    /// move bound scales with the simulated time that passed).
    pub fn after_step(&mut self, world: &mut World, frame: u32) {
        let params = world.resource::<SimParams>().sanitized();
        let elapsed = (world.resource::<SimClock>().time - self.time) as f32;
        // a body another engine hosts is checked where the cloth step left it: that engine's step moves it on
        // (out of another body, say), and the cloth meets it there in the next step
        let (shapes, shape_names): (Vec<Shape>, Vec<String>) = world
            .query::<(&ClothCollider, &Transform, Option<&HostedBody>, Option<&Name>)>()
            .iter(world)
            .map(|(c, t, hosted, name)| {
                let pose = hosted.map_or(t, |h| &h.cloth_pose);
                (c.shape.placed(pose), name.map_or_else(String::new, |n| n.to_string()))
            })
            .unzip();
        let body_speed = world
            .query::<(&ClothRigidBody, &ClothCollider)>()
            .iter(world)
            .map(|(b, c)| {
                b.velocity.length() + b.angular_velocity.length() * c.shape.placed(&Transform::IDENTITY).reach()
            })
            .fold(0.0, f32::max);
        // gravity carries everything: a long enough fall reaches the cap legally
        let free_fall = params.gravity.length() * world.resource::<SimClock>().time as f32;
        let collider_speed = fastest_collider_point(world);
        let anything_moves =
            body_speed > 0.0 || world.query::<&ClothCollider>().iter(world).any(|c| c.motion != ColliderMotion::Static);
        let grabs: Vec<(Entity, Vec3)> =
            world.query::<(Entity, &Grabbed)>().iter(world).map(|(e, g)| (e, g.target)).collect();
        let grab_speed = |entity: Entity| {
            let now = grabs.iter().find(|(e, _)| *e == entity).map(|(_, t)| *t);
            let then = self.grabs.iter().find(|(e, _)| *e == entity).map(|(_, t)| *t);
            now.zip(then).map_or(0.0, |(a, b)| a.distance(b) / elapsed.max(1e-6))
        };
        // with cloth against cloth, pins moving with a cloth act on the others like a kinematic collider
        let pins_move =
            world.query::<&Attachments>().iter(world).any(|a| a.0.iter().any(|a| a.motion.max_speed(a.anchor) > 0.0));
        let kinematic_cloth = params.cloth_collision && pins_move;
        let mut found = Vec::new();
        let mut cloths = world.query::<(
            &Particles,
            &StretchConstraints,
            &ClothMaterial,
            &Attachments,
            Option<&BodyAttachments>,
            &Cloth,
            Option<&Grabbed>,
            Has<Balloon>,
            (&Contacts, &ClothSolver, &StartingOverlaps, &CappedMoves),
        )>();
        for (entity, previous) in &self.before {
            let Ok((
                particles,
                stretch,
                material,
                attachments,
                holds,
                cloth,
                grabbed,
                balloon,
                (contacts, solver, overlaps, capped),
            )) = cloths.get(world, *entity)
            else {
                continue;
            };
            let name = &cloth.name;
            if !metrics::all_finite(&particles.x) {
                found.push(Violation {
                    invariant: "finite",
                    frame,
                    detail: format!("{name}: a position is not finite"),
                });
            }
            let pin_speed = attachments.0.iter().map(|a| a.motion.max_speed(a.anchor)).fold(0.0, f32::max);
            let carrier = MAX_SPEED.max(pin_speed).max(body_speed).max(grab_speed(*entity));
            // the cap is a safety net: with every carrier slower than half of it, a capped move is an explosion
            let was = self.capped_before.iter().find(|(e, _)| e == entity).map_or(0, |(_, c)| *c);
            let newly_capped = capped.0.saturating_sub(was);
            self.capped_moves += newly_capped;
            let wind = params.wind.length() + 3.0 * params.wind_gust;
            let carriers = [pin_speed, body_speed, grab_speed(*entity), collider_speed, wind, free_fall];
            let fastest_carrier = carriers.into_iter().fold(0.0, f32::max);
            if newly_capped > 0 && fastest_carrier < 0.5 * MAX_SPEED {
                let detail = format!(
                    "{name}: the speed cap shortened {newly_capped} moves while every carrier moved at most \
                     {fastest_carrier:.1} m/s"
                );
                found.push(Violation { invariant: "capped", frame, detail });
            }
            // a vertex leaving a starting overlap, or squeezed inside a contact band, is moved out in x as well, on
            // top of its velocity, at up to the depenetration speed each: once a substep by its own cloth's
            // contacts, twice by another cloth's (a crossed pair carried back, a squeezed pair parting)
            let leaving = if self.leaving.contains(entity) { DEPENETRATION_SPEED } else { 0.0 };
            let lifts = u8::from(params.self_collision) + 2 * u8::from(params.cloth_collision);
            let lifted = SELF_DEPENETRATION_SPEED * f32::from(lifts);
            let allowed = (carrier + leaving + lifted) * elapsed * 1.01 + 1e-3;
            let furthest = invariants::furthest_move(previous, &particles.x);
            if let Some((i, moved)) = furthest {
                self.worst_move_ratio = self.worst_move_ratio.max(moved / allowed);
                if moved > allowed && grabbed.is_none_or(|g| g.vertex as usize != i) {
                    let detail = format!("{name}: vertex {i} moved {moved:.3} m in one step; at most {allowed:.3} m");
                    found.push(Violation { invariant: "speed", frame, detail });
                }
            }
            let thickness = material.thickness;
            let held_still = attachments.0.iter().all(|a| a.motion.max_speed(a.anchor) == 0.0)
                && holds.is_none_or(|h| h.0.is_empty())
                && grabbed.is_none();
            // a moving collider or body pressing a pinned cloth meets two infinite masses: neither a gap nor the
            // cloth's length can be kept
            let held_against_motion = !attachments.0.is_empty() && anything_moves;
            let allowance = overlaps.allowance();
            let squeezed = invariants::squeezed_by_contacts(particles.len(), &contacts.0);
            let state = (&particles.x[..], &particles.p[..], &particles.w[..]);
            let depths = invariants::deepest_unsqueezed(state, (&squeezed, allowance), &shapes, thickness);
            if held_still && !held_against_motion {
                self.capped_depth_skips += u64::from(depths.capped_too_deep);
            }
            if held_still
                && !held_against_motion
                && let Some((i, k, depth)) = depths.deepest
                && depth > thickness + invariants::DEPTH_SLACK
            {
                let (mm, collider, speed) = (depth * 1e3, &shape_names[k], particles.v[i].length());
                let detail =
                    format!("{name}: vertex {i} is {mm:.1} mm inside collider {k} '{collider}' at {speed:.1} m/s");
                found.push(Violation { invariant: "penetration", frame, detail });
            }
            let (hang, span) = self.hangs.iter().find(|(e, ..)| e == entity).map_or((0.0, 0.0), |(_, h, s)| (*h, *s));
            let resolution = invariants::Resolution {
                hang,
                travel: furthest.map_or(0.0, |(_, moved)| moved) / params.substeps as f32,
                gravity: params.gravity.length(),
                span,
                air: params.air_drag * wind / material.density,
                dt: 1.0 / (params.rate_hz * params.substeps as f32),
                inflated: balloon && params.pressure > 1.0,
            };
            // the paper's stiff cloth is held to the bound where its k resolves it; under XPBD the compliance,
            // not k, sets the stretch, so any XPBD cloth is, where its predicted strain is small
            let (checked, resolved) = if solver.active(params.solver) == Solver::Pbd {
                let k = material.stretch_stiffness;
                (k >= invariants::STIFF, resolution.resolves(k, stretch.rest_length()))
            } else {
                let (alpha, density) = (material.stretch_compliance, material.density);
                (true, resolution.resolves_compliant(alpha, density, stretch.rest_length()))
            };
            if checked && !params.tearing && held_still && !held_against_motion && !kinematic_cloth {
                if !resolved {
                    self.unresolved_stretch_checks += 1;
                } else {
                    let margin = 3.0 * thickness + 0.02;
                    let (edges, rest) = (stretch.edges(), stretch.rest_length());
                    let s = invariants::stretch_away_from(&particles.x, edges, rest, &shapes, margin);
                    self.max_stiff_stretch = self.max_stiff_stretch.max(s);
                    if s > invariants::STRETCH_BOUND {
                        let detail = format!("{name}: an edge is at {:.2}× its rest length", s + 1.0);
                        found.push(Violation { invariant: "stretch", frame, detail });
                    }
                }
            }
        }
        for v in found {
            self.record(v);
        }
        self.remember(world);
    }
}

/// The fastest point of any collider's own motion (its surface farthest from its centre, for a turning one), m/s.
pub(crate) fn fastest_collider_point(world: &mut World) -> f32 {
    world
        .query::<&ClothCollider>()
        .iter(world)
        .map(|c| c.motion.max_speed(c.shape.placed(&Transform::IDENTITY).reach()))
        .fold(0.0, f32::max)
}
