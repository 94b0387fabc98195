//! Wall-clock time per stage (the "counters" of rapier): each stage system adds its time to the step in
//! progress; the runner closes the step. Read by the headless report, the benchmark and the panel.

use std::time::{Duration, Instant};

use bevy::prelude::*;

use super::PbdStage;

const STAGES: usize = PbdStage::ALL.len();
/// The stages before this index run inside the step; tearing and mesh sync run after it.
const IN_STEP: usize = PbdStage::Tearing as usize;
/// One step of the history: milliseconds per stage (in [`PbdStage::ALL`] order), then of the whole step.
pub type StepRecord = ([f32; STAGES], f32);

/// Steps kept for the history plot.
pub(crate) const HISTORY: usize = 240;

/// Per-stage wall time: the step in progress, the last finished step, running sums, and a short history.
#[derive(Resource, Clone, Debug)]
pub struct StageTimings {
    current: [f64; STAGES],
    /// Seconds each stage took in the last finished step.
    pub last: [f64; STAGES],
    /// Sum of seconds each stage took over all finished steps.
    pub sum: [f64; STAGES],
    /// Wall seconds of the whole step (all substeps) over all finished steps.
    pub step_sum: f64,
    /// Wall seconds of the last finished step.
    pub last_step: f64,
    /// Finished steps.
    pub steps: u64,
    /// Milliseconds of the last `HISTORY` steps, oldest first: per stage (in [`PbdStage::ALL`] order, mesh
    /// sync as last measured), then the whole step.
    pub history_ms: std::collections::VecDeque<StepRecord>,
}

impl Default for StageTimings {
    fn default() -> Self {
        Self {
            current: [0.0; STAGES],
            last: [0.0; STAGES],
            sum: [0.0; STAGES],
            step_sum: 0.0,
            last_step: 0.0,
            steps: 0,
            history_ms: std::collections::VecDeque::with_capacity(HISTORY),
        }
    }
}

impl StageTimings {
    /// Adds the time since `since` to `stage` in the step in progress.
    pub fn add(&mut self, stage: PbdStage, since: Instant) {
        self.current[stage as usize] += since.elapsed().as_secs_f64();
    }

    /// Zeroes the in-step stage times at the start of a step.
    pub fn begin_step(&mut self) {
        self.current[..IN_STEP].fill(0.0);
    }

    /// Ends the step: records its stage times and its wall time `total`.
    pub fn end_step(&mut self, total: Duration) {
        for i in 0..IN_STEP {
            self.last[i] = self.current[i];
            self.sum[i] += self.current[i];
        }
        self.last_step = total.as_secs_f64();
        self.step_sum += self.last_step;
        self.steps += 1;
        if self.history_ms.len() == HISTORY {
            self.history_ms.pop_front();
        }
        self.history_ms.push_back((self.last.map(|s| (s * 1e3) as f32), (self.last_step * 1e3) as f32));
    }

    /// Tearing and mesh sync run once per step or frame, outside the step: recorded on their own.
    pub fn add_outside_step(&mut self, stage: PbdStage, since: Instant) {
        let s = since.elapsed().as_secs_f64();
        let i = stage as usize;
        self.last[i] = s;
        self.sum[i] += s;
    }

    /// Mean milliseconds per step of each stage, in [`PbdStage::ALL`] order.
    pub fn mean_ms(&self) -> [(PbdStage, f64); STAGES] {
        let n = self.steps.max(1) as f64;
        PbdStage::ALL.map(|s| (s, self.sum[s as usize] * 1e3 / n))
    }

    /// Mean milliseconds of the whole step.
    pub fn mean_step_ms(&self) -> f64 {
        self.step_sum * 1e3 / self.steps.max(1) as f64
    }
}
