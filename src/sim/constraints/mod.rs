//! Constraint projection, lines (9)–(11) of §3.1: `iterations` Gauss–Seidel sweeps over every constraint in a
//! fixed order (stretch, bending, contacts), each projected by eq. (6)–(9) with inverse-mass weights.
//! Each sweep goes colour by colour (`coloring`, `plan`), the colours shared by threads (`crate::sim::parallel`).
//! Stiffness enters through k' = 1 − (1 − k)^(1/n_s) (§3.3) so the result does not depend on the iteration
//! count n_s — or, with the XPBD solver, as a compliance with a multiplier per constraint (`response`).

pub(crate) mod access;
pub mod attach;
pub mod bend;
pub(crate) mod coloring;
pub mod global;
pub(crate) mod plan;
pub(crate) mod response;
pub(crate) mod storage;
pub(crate) mod stretch;
pub mod tether;
pub mod volume;

use std::sync::Mutex;

use bevy::math::Vec3;

use self::access::SharedParticles;
use self::bend::BendingModel;
use self::bend::Folds;
use self::plan::{Chunk, ProjectionPlan, Work};
use self::response::linearized;
use self::response::{Blend, Compliance, Multipliers, Response, SharedMultipliers, Stiffness};
use self::storage::{BendConstraints, StretchConstraints};
use self::volume::{VolumeGoal, VolumeResponse};
use super::collide::contact::{Contact, ContactKind};
use super::collide::contacts::project_contacts;
use super::collide::features::{FeatureContact, project_feature_contacts};
use super::collide::hold::HeldBody;
use super::lanes::{PackedWork, with_avx2};
use super::parallel::run_phased;
use super::selfcollide::{SelfContact, project_self_contacts_on};

/// Stiffness and model of one cloth's projection, already linearised for the iteration count.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SolverSettings {
    /// Solver iterations n_s, lines (9)–(11); at least 1.
    pub iterations: u32,
    /// k' of the stretch stiffness for `iterations` (§3.3).
    pub linearized_stretch_stiffness: f32,
    /// k' of the bend stiffness for `iterations` (§3.3).
    pub linearized_bend_stiffness: f32,
    /// Which bending constraint is projected (§4.1).
    pub bending_model: BendingModel,
    /// What the dihedral model does with a pair folded past a right angle ([`Folds::for_cloth`]).
    pub folds: Folds,
    /// Project each colour on the compute task pool (false: on the calling thread only).
    pub parallel: bool,
    /// With the XPBD solver, its compliances and share; `None`: the paper's stiffnesses above alone.
    pub xpbd: Option<XpbdSettings>,
    /// How far from met a stretch or bending constraint is left alone, metres
    /// ([`crate::sim::integrate::rounding_tolerance`]).
    pub rounding: f32,
}

/// XPBD's part in a projection.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct XpbdSettings {
    /// The time-scaled compliances α̃ = α/Δt² of stretch, of bending (`response::Compliance`) and of a
    /// balloon's volume ([`volume::VolumeResponse`]).
    pub alpha: [f32; 3],
    /// XPBD's share of the corrections, in (0, 1]: below 1 while the solver switches (`response::Blend`).
    pub share: f32,
    /// The most a hinge turns its pair in a substep ([`bend::yield_turn`]); infinite unless the hinges yield.
    pub hinge_yield: f32,
    /// The stretch constraints solved together each iteration ([`global`]) instead of swept one by one.
    pub global_stretch: bool,
    /// The bending constraints likewise, where the hinges neither yield nor leave folds ([`Folds::Unfold`]).
    pub global_bending: bool,
}

impl XpbdSettings {
    /// Whether the stretch (`bending` false) or bending constraints are solved together under `model`.
    fn solves_together(&self, bending: bool, (_, folds): (BendingModel, Folds)) -> bool {
        if bending { self.global_bending && folds == Folds::Unfold } else { self.global_stretch }
    }
}

/// One Gauss–Newton step over every stretch or bending constraint of the cloth at once ([`global`]).
fn solve_together(
    view: &mut SharedParticles,
    multipliers: SharedMultipliers,
    cloth: ClothConstraints,
    (xpbd, model, bending): (XpbdSettings, BendingModel, bool),
    systems: &mut global::GlobalSystems,
) {
    let ClothConstraints { stretch, bend, .. } = cloth;
    // SAFETY: a projection that solves constraints together runs on the calling thread alone
    let (p, w) = unsafe { view.exclusive() };
    let count = if bending { bend.len() } else { stretch.len() };
    // SAFETY: the whole range of one kind, on the one thread
    let lambda = unsafe { multipliers.chunk(bending, 0..count) };
    let alpha = xpbd.alpha[usize::from(bending)];
    let pairs = &mut systems.pairs;
    match (bending, model) {
        (false, _) => {
            let edges = (stretch.edges().iter().copied(), stretch.rest_length());
            global::solve_distances(pairs, (p, w), edges, alpha, lambda);
        }
        (true, BendingModel::Distance) => {
            let opposite = (bend.quads().iter().map(|q| [q[2], q[3]]), bend.rest_distance());
            global::solve_distances(pairs, (p, w), opposite, alpha, lambda);
        }
        (true, BendingModel::Dihedral) => {
            let hinges = (bend.quads(), bend.rest_angle());
            global::solve_hinges(&mut systems.hinges, (p, w), hinges, alpha, lambda);
        }
    }
}

impl SolverSettings {
    /// Settings for `iterations` sweeps with the user's stretch and bend stiffnesses k (§3.3).
    pub fn new(iterations: u32, stretch_stiffness: f32, bend_stiffness: f32, bending_model: BendingModel) -> Self {
        let iterations = iterations.max(1);
        Self {
            iterations,
            linearized_stretch_stiffness: linearized(stretch_stiffness, iterations),
            linearized_bend_stiffness: linearized(bend_stiffness, iterations),
            bending_model,
            folds: Folds::Unfold,
            parallel: true,
            xpbd: None,
            rounding: 0.0,
        }
    }

    /// The same settings with XPBD's compliances α (stretch, bending, volume) for substeps of `dt` seconds, XPBD
    /// making `share` of the corrections (1: all).
    pub fn xpbd(self, alpha: [f32; 3], share: f32, dt: f32) -> Self {
        let alpha = alpha.map(|a| a / (dt * dt));
        Self {
            xpbd: Some(XpbdSettings {
                alpha,
                share,
                hinge_yield: f32::INFINITY,
                global_stretch: false,
                global_bending: false,
            }),
            ..self
        }
    }

    /// The same settings with the hinges of a cloth of mean free inverse mass `w` yielding ([`Folds::Yield`]).
    pub fn yielding(self, w: f32) -> Self {
        let xpbd = self.xpbd.map(|x| XpbdSettings { hinge_yield: bend::yield_turn(x.alpha[0], w), ..x });
        Self { folds: Folds::Yield, xpbd, ..self }
    }
}

/// The internal constraints of one cloth, and the order to project them in.
#[derive(Clone, Copy)]
pub struct ClothConstraints<'a> {
    /// Stretch constraints (§4.1).
    pub stretch: &'a StretchConstraints,
    /// Bending constraints (§4.1).
    pub bend: &'a BendConstraints,
    /// Must be `ProjectionPlan::is_for` `stretch` and `bend`; otherwise nothing is projected.
    pub plan: &'a ProjectionPlan,
    /// The cloth's triangles (self-collision and volume refer to them).
    pub triangles: &'a [[u32; 3]],
    /// Self-collision constraints of this substep (§4.3) and the cloth thickness h they keep.
    pub self_contacts: &'a [SelfContact],
    /// Where the second and third group of `self_contacts` start (see
    /// `split_in_halves`).
    pub self_contact_halves: [usize; 2],
    /// The cloth thickness h in metres (§4.3).
    pub thickness: f32,
    /// The balloon's volume constraint (§4.4), if the cloth is one.
    pub volume_target: Option<VolumeGoal>,
}

impl<'a> ClothConstraints<'a> {
    /// Only the stretch and bending constraints.
    pub fn internal(stretch: &'a StretchConstraints, bend: &'a BendConstraints, plan: &'a ProjectionPlan) -> Self {
        Self {
            stretch,
            bend,
            plan,
            triangles: &[],
            self_contacts: &[],
            self_contact_halves: [0, 0],
            thickness: 0.0,
            volume_target: None,
        }
    }
}

/// Per-step buffers the projection writes: the contacts (friction bookkeeping), the volume gradient and XPBD's
/// multipliers.
pub(crate) struct ProjectionScratch<'a> {
    /// The collision constraints; the projection records what it did with each.
    pub contacts: &'a mut [Contact],
    /// The colliders' features against the cloth's triangles (§4.2).
    pub features: &'a mut [FeatureContact],
    /// The bodies the holds among `contacts` move, by collider (§4.2).
    pub bodies: &'a mut [HeldBody],
    /// Scratch for the volume constraint's gradient ∇C (§4.4).
    pub volume_gradient: &'a mut Vec<Vec3>,
    /// XPBD's λ, zeroed here when the settings ask for XPBD; untouched otherwise.
    pub multipliers: &'a mut Multipliers,
    /// The systems of the constraints solved together ([`XpbdSettings::global_stretch`]).
    pub global: &'a mut global::GlobalSystems,
}

/// Lines (9)–(11): projects all constraints of one cloth `iterations` times onto the predictions `p`
/// (positions `x` at the start of the step are needed by contact friction). Colour by colour, each colour's
/// chunks shared by the task pool's threads when `settings.parallel`; the result is the same either way.
pub(crate) fn project_constraints(
    p: &mut [Vec3],
    x: &[Vec3],
    w: &[f32],
    cloth: ClothConstraints,
    scratch: ProjectionScratch,
    settings: SolverSettings,
) {
    let ClothConstraints { stretch, bend, plan, self_contacts, volume_target, .. } = cloth;
    let n = p.len();
    if !plan.is_for(stretch, bend) || stretch.vertex_count() != n || bend.vertex_count() != n || w.len() != n {
        debug_assert!(false, "projection plan or constraints do not match the particles");
        return;
    }
    // SAFETY: every stretch and bend index is below n (checked by their constructors, n compared above);
    // chunks running at the same time belong to one colour, whose constraints share no particle, or are the two
    // halves of the self contacts, which share no particle either (`split_in_halves`, indices checked); the
    // other contacts run alone in their phase and check their indices; `p` is borrowed mutably for the whole
    // call.
    let Some(particles) = (unsafe { SharedParticles::new(p, w) }) else {
        return;
    };
    let particles = particles.with_rounding(settings.rounding);
    let any_contact = !scratch.contacts.is_empty() || !scratch.features.is_empty();
    let needed = plan.chunks_needed(any_contact, !self_contacts.is_empty(), volume_target.is_some());
    if settings.xpbd.is_some() {
        scratch.multipliers.reset(stretch.len(), bend.len());
    } else {
        scratch.multipliers.volume = 0.0;
    }
    let multipliers = SharedMultipliers::new(scratch.multipliers);
    let projector = Projector { particles, cloth, settings, x, multipliers, scratch: Mutex::new(scratch) };
    let work = |j: usize| {
        if let Some(chunk) = plan.chunks().get(j) {
            with_avx2((&projector, chunk));
        }
    };
    let global = settings.xpbd.is_some_and(|x| x.global_stretch || x.global_bending);
    let parallel = settings.parallel && !global && plan.worth_sharing(self_contacts.len());
    run_phased(&plan.phase_start()[..needed], settings.iterations, parallel, work);
}

/// What the chunks of one projection read and write.
struct Projector<'a> {
    particles: SharedParticles,
    cloth: ClothConstraints<'a>,
    settings: SolverSettings,
    x: &'a [Vec3],
    multipliers: SharedMultipliers,
    scratch: Mutex<ProjectionScratch<'a>>,
}

/// One chunk of the plan, projected.
impl PackedWork for (&Projector<'_>, &Chunk) {
    #[inline(always)]
    fn run(self) {
        let (projector, chunk) = self;
        let Projector { particles, cloth, settings, x, multipliers, .. } = *projector;
        let ClothConstraints { triangles, self_contacts, self_contact_halves, thickness, .. } = cloth;
        let mut view = particles;
        let range = chunk.start as usize..chunk.end as usize;
        match chunk.work {
            Work::Stretch | Work::Bend => {
                let bending = chunk.work == Work::Bend;
                let k =
                    if bending { settings.linearized_bend_stiffness } else { settings.linearized_stretch_stiffness };
                let model = (settings.bending_model, settings.folds);
                match settings.xpbd {
                    None if bending && k <= 0.0 => {}
                    None => sweep_internal(&mut view, cloth, model, chunk, &mut Stiffness(k)),
                    Some(xpbd @ XpbdSettings { share, .. }) if share >= 1.0 && xpbd.solves_together(bending, model) => {
                        // the first chunk solves every constraint of the kind; the projection runs on one thread
                        if range.start == 0
                            && let Ok(mut scratch) = projector.scratch.lock()
                        {
                            solve_together(&mut view, multipliers, cloth, (xpbd, model.0, bending), scratch.global);
                        }
                    }
                    Some(XpbdSettings { alpha, share, hinge_yield, .. }) => {
                        // SAFETY: chunks of one phase cover disjoint ranges of one kind, and `project_constraints`
                        // holds the multipliers mutably until every chunk is done
                        let lambda = unsafe { multipliers.chunk(bending, range) };
                        let most = if bending { hinge_yield } else { f32::INFINITY };
                        let xpbd = Compliance { alpha: alpha[usize::from(bending)], lambda, most };
                        if share >= 1.0 {
                            sweep_internal(&mut view, cloth, model, chunk, &mut { xpbd });
                        } else {
                            let mut blend = Blend { paper: Stiffness(k), xpbd, share };
                            sweep_internal(&mut view, cloth, model, chunk, &mut blend);
                        }
                    }
                }
            }
            Work::Contacts => {
                if let Ok(mut scratch) = projector.scratch.lock() {
                    let scratch = &mut *scratch;
                    project_contacts(&mut view, x, scratch.contacts, scratch.bodies);
                    project_feature_contacts(&mut view, scratch.features);
                }
            }
            Work::SelfContacts => {
                // chunk 0 and 1 (the two halves) run side by side, chunk 2 (the rest) alone
                let [a, b] = self_contact_halves.map(|i| i.min(self_contacts.len()));
                let groups = [0..a.min(b), a.min(b)..b, b..self_contacts.len()];
                if let Some(group) = groups.get(range.start) {
                    let contacts = &self_contacts[group.clone()];
                    project_self_contacts_on(&mut view, x, triangles, contacts, |_, _| thickness, 1.0, 0.0);
                }
            }
            Work::Volume => {
                if let (Some(goal), Ok(mut scratch)) = (cloth.volume_target, projector.scratch.lock()) {
                    // SAFETY: this phase has one chunk, so no other thread uses the view now.
                    let (p, w) = unsafe { view.exclusive() };
                    let ProjectionScratch { volume_gradient, multipliers, contacts, features, bodies, .. } =
                        &mut *scratch;
                    // the air's compliance and the user's act in series (while the solver switches, the
                    // paper's k = 1 still makes the rest of the correction)
                    let (user, share) = settings.xpbd.map_or((0.0, 1.0), |xpbd| (xpbd.alpha[2], xpbd.share));
                    let alpha = goal.air_compliance + user;
                    let response = VolumeResponse { alpha, lambda: &mut multipliers.volume, share, slack: goal.slack };
                    let held = contacts.iter().any(|c| c.kind == ContactKind::Attached);
                    let start = (!held).then_some(x);
                    volume::project_volume(p, start, w, triangles, goal.volume, response, volume_gradient);
                    // the volume comes last and pushes every vertex: the contacts again, so no vertex ends the
                    // iteration pressed into a collider by the balloon
                    project_contacts(&mut view, x, contacts, bodies);
                    project_feature_contacts(&mut view, features);
                }
            }
        }
    }
}

/// One stretch or bending chunk swept with response `r`.
#[inline(always)]
fn sweep_internal(
    view: &mut SharedParticles,
    cloth: ClothConstraints,
    (model, folds): (BendingModel, Folds),
    chunk: &Chunk,
    r: &mut impl Response,
) {
    let ClothConstraints { stretch, bend, .. } = cloth;
    let range = chunk.start as usize..chunk.end as usize;
    if chunk.work == Work::Stretch {
        return stretch::sweep_stretch(view, &stretch.edges()[range.clone()], &stretch.rest_length()[range], r);
    }
    let quads = &bend.quads()[range.clone()];
    match model {
        BendingModel::Dihedral => bend::sweep_dihedral(view, quads, &bend.rest_angle()[range], r, folds),
        BendingModel::Distance => bend::sweep_opposite_distance(view, quads, &bend.rest_distance()[range], r),
    }
}

/// Test helpers shared by the constraint tests: momenta of a set of particles.
#[cfg(test)]
pub(crate) mod momentum {
    use bevy::math::Vec3;

    /// Σ m_i Δp_i (eq. 1) and Σ r_i × m_i Δp_i about the origin (eq. 2).
    pub fn change(before: &[Vec3], after: &[Vec3], mass: &[f32]) -> (Vec3, Vec3) {
        let mut linear = Vec3::ZERO;
        let mut angular = Vec3::ZERO;
        for ((a, b), m) in before.iter().zip(after).zip(mass) {
            let d = (*b - *a) * *m;
            linear += d;
            angular += a.cross(d);
        }
        (linear, angular)
    }
}
