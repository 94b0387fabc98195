//! The recording: the last seconds of the simulation, kept so they can be watched again, exported, and resumed
//! from. Every step keeps its cloths' positions (cheap: what playback and export draw); a full
//! [`SimSnapshot`] is kept once a second and after any step whose inputs changed (parameters, materials, pins,
//! the start or end of a grab, a throw), taken when the tick is over (at the start of the next step, or when a
//! step is restored), so that it holds what the engines stepping beside the cloth did in that tick too. Resuming
//! at step s restores the last snapshot at or before s and runs the steps in between again with the recorded grab
//! targets (and the coupled engines' steps): the steps are deterministic, so the state is the one the run had,
//! bit for bit.

use std::collections::VecDeque;
use std::sync::Arc;

use bevy::prelude::*;

use super::engines::CoupledEngines;
use super::snapshot::SimSnapshot;
use crate::sim::SimParams;
use crate::sim::cloth::{Attachments, ClothCollider, ClothMaterial, ClothMesh, Grabbed, Particles};
use crate::sim::plugin::run_cloth_step;
use crate::sim::schedule::SimClock;

/// The default memory bound of a recording: 512 MB (20 s of a 64² sheet take about 80 MB).
pub const MAX_BYTES: usize = 512 << 20;

/// Steps between two snapshots when nothing changes (one second at 60 Hz).
pub const SNAPSHOT_EVERY: u64 = 60;

/// One cloth in one recorded step.
#[derive(Clone, Debug)]
pub struct RecordedCloth {
    /// The cloth entity.
    pub entity: Entity,
    /// Its positions at the end of the step.
    pub positions: Vec<Vec3>,
    /// Its triangles (shared by every step until tearing changes them).
    pub triangles: Arc<Vec<[u32; 3]>>,
    /// Its grab during the step, if one was held.
    pub grab: Option<Grabbed>,
}

/// One recorded step.
#[derive(Clone, Debug)]
pub struct RecordedStep {
    /// The step's number ([`SimClock::steps`] after it).
    pub step: u64,
    /// Simulated time at its end, seconds.
    pub time: f64,
    /// Every cloth, in spawn order.
    pub cloths: Vec<RecordedCloth>,
}

/// What the user or the scene can change between steps: when it differs from the last step's, the step gets
/// its own snapshot, so a replayed stretch of steps never needs it.
#[derive(Clone, Debug, PartialEq)]
struct Inputs {
    params: SimParams,
    cloths: Vec<(Entity, ClothMaterial, Vec<u32>, Option<u32>)>,
    colliders: usize,
}

impl Inputs {
    fn of(world: &mut World) -> Self {
        let mut cloths: Vec<_> = world
            .query::<(Entity, &ClothMaterial, &Attachments, Option<&Grabbed>)>()
            .iter(world)
            .map(|(e, m, a, g)| (e, *m, a.0.iter().map(|a| a.vertex).collect(), g.map(|g| g.vertex)))
            .collect();
        cloths.sort_by_key(|c| c.0);
        let colliders = world.query::<&ClothCollider>().iter(world).count();
        Self { params: world.resource::<SimParams>().clone(), cloths, colliders }
    }
}

/// The last [`Recording::seconds`] of the simulation (a resource; [`super::ReplayPlugin`] fills it).
#[derive(Resource, Debug)]
pub struct Recording {
    /// Whether steps are being recorded.
    pub enabled: bool,
    /// How many seconds of simulated time are kept.
    pub seconds: f32,
    /// Most memory the recording holds, bytes: older steps go first when a large cloth would need more.
    pub max_bytes: usize,
    steps: VecDeque<RecordedStep>,
    snapshots: VecDeque<(u64, Arc<SimSnapshot>)>,
    last_inputs: Option<Inputs>,
    /// Whether the last recorded step wants a snapshot, taken once its tick is over.
    due: bool,
    /// Set while steps are run again, which must not be recorded twice.
    replaying: bool,
    /// Wall time spent recording, and the steps recorded in it (what `drape bench` reports).
    pub cost: (std::time::Duration, u32),
}

impl Default for Recording {
    fn default() -> Self {
        Self {
            enabled: true,
            seconds: 20.0,
            max_bytes: MAX_BYTES,
            steps: VecDeque::new(),
            snapshots: VecDeque::new(),
            last_inputs: None,
            due: false,
            replaying: false,
            cost: Default::default(),
        }
    }
}

impl Recording {
    /// The recorded steps, oldest first.
    pub fn steps(&self) -> &VecDeque<RecordedStep> {
        &self.steps
    }

    /// Snapshots held.
    pub fn snapshot_count(&self) -> usize {
        self.snapshots.len()
    }

    /// Mean wall time of recording one step, milliseconds.
    pub fn mean_cost_ms(&self) -> f64 {
        self.cost.0.as_secs_f64() * 1e3 / f64::from(self.cost.1.max(1))
    }

    /// Forgets everything recorded (a new scene).
    pub fn clear(&mut self) {
        self.steps.clear();
        self.snapshots.clear();
        self.last_inputs = None;
        self.due = false;
    }

    /// Bytes held: (positions of every step, snapshots).
    pub fn bytes(&self) -> (usize, usize) {
        (self.steps.iter().map(step_bytes).sum(), self.snapshots.iter().map(|(_, s)| s.bytes).sum())
    }

    /// Drops what is older than the window or beyond the memory bound (oldest first), then snapshots no kept
    /// step needs and steps no snapshot precedes.
    fn trim(&mut self, rate_hz: f32) {
        let keep = (self.seconds.max(0.0) * rate_hz).ceil() as usize;
        let (mut positions, mut snapshots) = self.bytes();
        while self.steps.len() > 1 && (self.steps.len() > keep || positions + snapshots > self.max_bytes) {
            positions -= self.steps.pop_front().as_ref().map_or(0, step_bytes);
            let first = self.steps.front().map_or(u64::MAX, |s| s.step);
            // keep the last snapshot at or before the first step
            while self.snapshots.len() > 1 && self.snapshots[1].0 <= first {
                snapshots -= self.snapshots.pop_front().map_or(0, |(_, s)| s.bytes);
            }
        }
        // before the first snapshot is taken every step waits for it
        let oldest = self.snapshots.front().map_or(0, |s| s.0);
        while self.steps.front().is_some_and(|s| s.step < oldest) {
            self.steps.pop_front();
        }
    }
}

/// The bytes of a recorded step's positions.
fn step_bytes(step: &RecordedStep) -> usize {
    step.cloths.iter().map(|c| std::mem::size_of_val(&c.positions[..])).sum()
}

/// After every cloth step: records its positions, and whether it wants a snapshot ([`take_due_snapshot`]).
pub fn record_step(world: &mut World) {
    let (enabled, replaying) = world.get_resource::<Recording>().map_or((false, true), |r| (r.enabled, r.replaying));
    if !enabled || replaying {
        return;
    }
    let start = std::time::Instant::now();
    let clock = *world.resource::<SimClock>();
    let inputs = Inputs::of(world);
    let mut cloths: Vec<RecordedCloth> = {
        let mut query = world.query::<(Entity, &Particles, &ClothMesh, Option<&Grabbed>)>();
        let recording = world.resource::<Recording>();
        let previous = recording.steps.back();
        query
            .iter(world)
            .map(|(entity, particles, mesh, grab)| {
                let shared = previous
                    .and_then(|s| s.cloths.iter().find(|c| c.entity == entity))
                    .filter(|c| *c.triangles == mesh.triangles)
                    .map(|c| c.triangles.clone());
                RecordedCloth {
                    entity,
                    positions: particles.x.clone(),
                    triangles: shared.unwrap_or_else(|| Arc::new(mesh.triangles.clone())),
                    grab: grab.copied(),
                }
            })
            .collect()
    };
    cloths.sort_by_key(|c| c.entity);
    let due = {
        let recording = world.resource::<Recording>();
        let last = recording.snapshots.back().map(|s| s.0);
        last.is_none_or(|k| clock.steps >= k + SNAPSHOT_EVERY) || recording.last_inputs.as_ref() != Some(&inputs)
    };
    let rate = world.resource::<SimParams>().sanitized().rate_hz;
    let mut recording = world.resource_mut::<Recording>();
    if recording.steps.back().is_some_and(|s| s.step >= clock.steps) {
        // the clock went back (a new scene): start again
        recording.clear();
    }
    recording.steps.push_back(RecordedStep { step: clock.steps, time: clock.time, cloths });
    recording.due |= due;
    recording.last_inputs = Some(inputs);
    recording.trim(rate);
    recording.cost.0 += start.elapsed();
    recording.cost.1 += 1;
}

/// Between two ticks (at the start of a cloth step, or before a restore): the snapshot the last recorded step
/// wants, of the state its tick left.
pub fn take_due_snapshot(world: &mut World) {
    let due = world.get_resource::<Recording>().is_some_and(|r| r.enabled && r.due && !r.replaying);
    if !due {
        return;
    }
    let start = std::time::Instant::now();
    let snapshot = Arc::new(SimSnapshot::capture(world));
    let steps = world.resource::<SimClock>().steps;
    let rate = world.resource::<SimParams>().sanitized().rate_hz;
    let mut recording = world.resource_mut::<Recording>();
    recording.due = false;
    if recording.steps.back().is_some_and(|s| s.step == steps) {
        recording.snapshots.push_back((steps, snapshot));
        recording.trim(rate);
    }
    recording.cost.0 += start.elapsed();
}

/// Puts `world` back in the state it had at the end of recorded step `step`: the last snapshot at or before it,
/// then the steps in between run again with their recorded grabs. With `resume`, what was recorded after it is
/// dropped (the run continues from there); without, the recording stays whole (to look at a step).
pub fn restore(world: &mut World, step: u64, resume: bool) -> Result<(), String> {
    take_due_snapshot(world);
    let (snapshot, grabs) = {
        let recording = world.get_resource::<Recording>().ok_or("nothing is being recorded")?;
        let Some((at, snapshot)) = recording.snapshots.iter().rev().find(|(k, _)| *k <= step) else {
            return Err(format!("step {step} is older than the recording"));
        };
        if recording.steps.back().is_none_or(|s| s.step < step) {
            return Err(format!("step {step} has not been recorded"));
        }
        let grabs: Vec<Vec<(Entity, Option<Grabbed>)>> = recording
            .steps
            .iter()
            .filter(|s| s.step > *at && s.step <= step)
            .map(|s| s.cloths.iter().map(|c| (c.entity, c.grab)).collect())
            .collect();
        (snapshot.clone(), grabs)
    };
    snapshot.restore(world)?;
    let engines = CoupledEngines::of(world);
    world.resource_mut::<Recording>().replaying = true;
    for step_grabs in grabs {
        for (entity, grab) in step_grabs {
            if let (Some(grab), Ok(mut e)) = (grab, world.get_entity_mut(entity)) {
                e.insert(grab);
            }
        }
        run_cloth_step(world);
        for engine in &engines {
            (engine.step)(world);
        }
    }
    let mut recording = world.resource_mut::<Recording>();
    recording.replaying = false;
    if resume {
        while recording.steps.back().is_some_and(|s| s.step > step) {
            recording.steps.pop_back();
        }
        while recording.snapshots.back().is_some_and(|s| s.0 > step) {
            recording.snapshots.pop_back();
        }
        // the next step compares its inputs with the restored ones
        recording.last_inputs = None;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(k: u64, vertices: usize) -> RecordedStep {
        let cloth = RecordedCloth {
            entity: Entity::PLACEHOLDER,
            positions: vec![Vec3::ZERO; vertices],
            triangles: Arc::default(),
            grab: None,
        };
        RecordedStep { step: k, time: k as f64 / 60.0, cloths: vec![cloth] }
    }

    #[test]
    fn the_window_and_the_memory_bound_drop_the_oldest_steps() {
        let mut r = Recording { seconds: 1.0, ..default() };
        let mut world = World::new();
        world.insert_resource(SimClock::default());
        world.insert_resource(SimParams::default());
        r.snapshots.push_back((1, Arc::new(SimSnapshot::capture(&mut world))));
        for k in 1..=100 {
            r.steps.push_back(step(k, 10));
            r.trim(60.0);
        }
        // the window keeps 60 steps, but the only snapshot is at step 1: the steps after it stay resumable
        assert_eq!(r.steps.len(), 60);
        assert_eq!(r.snapshots.len(), 1);
        r.max_bytes = 120 * 30;
        r.trim(60.0);
        assert_eq!(r.bytes().0, 120 * 30, "30 steps of 10 vertices");
        assert_eq!(r.steps.front().map(|s| s.step), Some(71));
    }
}
