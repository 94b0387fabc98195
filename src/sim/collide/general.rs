//! Any solid a geometry library can query — convex hulls, triangle meshes, compounds — as a collider of
//! §3.4: the queries the continuous test and the static fallback need, behind a trait, so that the kernels
//! stay free of the library (the `avian` feature implements it with parry's shapes).

use std::fmt;
use std::sync::Arc;

use bevy::math::{Isometry3d, Quat, Vec3};

/// The queries a solid answers in its own frame. A triangle mesh that is not closed has no inside: it answers
/// as a thin shell (never inside), so the cloth's thickness keeps it off both faces.
pub trait SolidQueries: Send + Sync + fmt::Debug {
    /// The surface point closest to `q`, whether `q` lies inside the solid, and the way out at that point: along
    /// the offset between the point and `q` (away from the solid) when `q` is off the surface, the surface's
    /// outward normal when it is on it.
    fn closest(&self, q: Vec3) -> (Vec3, bool, Vec3);

    /// The first time t ∈ [0, 1] at which a ball of `radius` moving from `a` to `b` touches the solid, with the
    /// outward normal at the touching point; `None` if it never does.
    fn sweep(&self, a: Vec3, b: Vec3, radius: f32) -> Option<(f32, Vec3)>;

    /// The axis-aligned box (min, max) around the solid.
    fn aabb(&self) -> (Vec3, Vec3);

    /// A lower bound on the distance from `q` to the solid when `q` lies outside it, found faster than
    /// [`Self::closest`]; 0 when it may lie inside or the solid cannot tell (this default).
    fn clearance(&self, _q: Vec3) -> f32 {
        0.0
    }

    /// The solid's straight edges, each once (a triangle mesh's or a convex hull's): what the cloth's triangles
    /// are kept off (`features`); none for a solid without any.
    fn edges(&self) -> &[FeatureEdge] {
        &[]
    }

    /// Calls `f` with the index into [`Self::edges`] of every edge whose box overlaps `min`–`max` (and maybe
    /// of others, or twice); this default scans them all.
    fn edges_near(&self, min: Vec3, max: Vec3, f: &mut dyn FnMut(u32)) {
        scan_edges_near(self.edges(), min, max, f);
    }
}

/// A straight edge of a solid, in some frame: its ends and how far the solid reaches beyond it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FeatureEdge {
    /// The two ends.
    pub ends: [Vec3; 2],
    /// How far the solid reaches beyond the edge, metres (a capsule's radius, a grown shape's margin).
    pub radius: f32,
}

impl FeatureEdge {
    /// The box around the solid near the edge (the edge grown by its radius), grown by `margin` more.
    pub fn bounds(&self, margin: f32) -> (Vec3, Vec3) {
        let grow = Vec3::splat(self.radius + margin);
        (self.ends[0].min(self.ends[1]) - grow, self.ends[0].max(self.ends[1]) + grow)
    }

    /// The edge moved by `pose`.
    pub fn placed(&self, pose: &Isometry3d) -> Self {
        let at = |q: Vec3| Vec3::from(pose.transform_point(q));
        Self { ends: self.ends.map(at), radius: self.radius }
    }
}

/// A [`SolidQueries`] solid placed by a rotation and a translation and grown by `margin`. As small as the
/// largest analytic shape, so that [`Shape`](super::shapes::Shape) does not grow.
#[derive(Clone, Debug)]
pub struct GeneralShape {
    /// The solid, in its own frame.
    pub solid: Arc<dyn SolidQueries>,
    /// Rotation from the solid's frame to the shape's.
    pub rotation: Quat,
    /// Where the solid's origin lies in the shape's frame.
    pub translation: Vec3,
    /// How far the shape reaches beyond the solid's surface, metres.
    pub margin: f32,
}

impl PartialEq for GeneralShape {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.solid, &other.solid)
            && (self.rotation, self.translation, self.margin) == (other.rotation, other.translation, other.margin)
    }
}

impl GeneralShape {
    /// `solid` where it stands, not grown.
    pub fn new(solid: Arc<dyn SolidQueries>) -> Self {
        Self { solid, rotation: Quat::IDENTITY, translation: Vec3::ZERO, margin: 0.0 }
    }

    /// The same solid moved by `pose`.
    pub fn moved(&self, pose: &Isometry3d) -> Self {
        let translation = Vec3::from(pose.transform_point(self.translation));
        Self { rotation: pose.rotation * self.rotation, translation, ..self.clone() }
    }

    fn solid_point(&self, q: Vec3) -> Vec3 {
        self.rotation.inverse() * (q - self.translation)
    }

    fn placed_point(&self, q: Vec3) -> Vec3 {
        self.rotation * q + self.translation
    }

    /// [`SolidQueries::edges_near`] for the box `min`–`max` in the shape's frame.
    pub fn edges_near(&self, min: Vec3, max: Vec3, f: &mut dyn FnMut(u32)) {
        // the box seen from the solid's frame, grown by the margin the edges reach beyond it
        let (center, half) = (self.solid_point((min + max) * 0.5), (max - min) * 0.5);
        let axes = bevy::math::Mat3::from_quat(self.rotation.inverse());
        let half = axes.x_axis.abs() * half.x + axes.y_axis.abs() * half.y + axes.z_axis.abs() * half.z;
        let half = half + Vec3::splat(self.margin);
        self.solid.edges_near(center - half, center + half, f);
    }

    /// The solid's edges ([`SolidQueries::edges`]), placed, reaching as far as the shape is grown.
    pub fn feature_edges(&self) -> impl Iterator<Item = FeatureEdge> + '_ {
        let pose = Isometry3d::new(self.translation, self.rotation);
        self.solid.edges().iter().map(move |e| FeatureEdge { radius: e.radius + self.margin, ..e.placed(&pose) })
    }

    /// The corners of the solid's box, placed.
    fn corners(&self) -> impl Iterator<Item = Vec3> + '_ {
        let (min, max) = self.solid.aabb();
        (0..8).map(move |k| {
            let pick = |bit: u32, lo: f32, hi: f32| if k & bit == 0 { lo } else { hi };
            self.placed_point(Vec3::new(pick(1, min.x, max.x), pick(2, min.y, max.y), pick(4, min.z, max.z)))
        })
    }

    /// The axis-aligned box (min, max) around the grown shape.
    pub fn bounding_box(&self) -> (Vec3, Vec3) {
        let (min, max) = self.corners().fold((Vec3::MAX, Vec3::MIN), |(lo, hi), c| (lo.min(c), hi.max(c)));
        (min - Vec3::splat(self.margin), max + Vec3::splat(self.margin))
    }

    /// A sphere (centre, radius) around the grown shape.
    pub fn bounding_sphere(&self) -> (Vec3, f32) {
        let (min, max) = self.solid.aabb();
        let center = self.placed_point((min + max) * 0.5);
        (center, (max - min).length() * 0.5 + self.margin)
    }

    /// The largest distance of a surface point from the origin.
    pub fn reach(&self) -> f32 {
        self.corners().map(Vec3::length).fold(0.0, f32::max) + self.margin
    }

    /// Signed distance from `q` to the grown surface: negative inside.
    pub fn signed_distance(&self, q: Vec3) -> f32 {
        let local = self.solid_point(q);
        let (point, inside, _) = self.solid.closest(local);
        let distance = local.distance(point);
        (if inside { -distance } else { distance }) - self.margin
    }

    /// A lower bound on the signed distance from `q` to the grown surface where it is positive
    /// ([`SolidQueries::clearance`]); 0 or less where the solid cannot tell.
    pub fn clearance(&self, q: Vec3) -> f32 {
        self.solid.clearance(self.solid_point(q)) - self.margin
    }

    /// The grown surface's point closest to `q` and the outward normal there.
    pub fn closest_surface(&self, q: Vec3) -> (Vec3, Vec3) {
        let local = self.solid_point(q);
        let (point, _, out) = self.solid.closest(local);
        let world_normal = self.rotation * out;
        (self.placed_point(point + out * self.margin), world_normal)
    }

    /// Where the ray a→b enters the grown shape, with the normal there.
    pub fn ray_entry(&self, a: Vec3, b: Vec3) -> Option<(Vec3, Vec3)> {
        let (from, to) = (self.solid_point(a), self.solid_point(b));
        let (t, normal) = self.solid.sweep(from, to, self.margin)?;
        Some((a + (b - a) * t, self.rotation * normal))
    }
}

/// Calls `f` with the index of every edge of `edges` whose box, grown by its radius, overlaps `min`–`max`.
pub fn scan_edges_near(edges: &[FeatureEdge], min: Vec3, max: Vec3, f: &mut dyn FnMut(u32)) {
    for (k, e) in edges.iter().enumerate() {
        let (lo, hi) = e.bounds(0.0);
        if lo.cmple(max).all() && min.cmple(hi).all() {
            f(k as u32);
        }
    }
}

/// Every edge of the triangle mesh `triangles` over `vertices` once (an edge with an index out of range left out).
#[cfg(any(feature = "avian", test))]
pub fn mesh_feature_edges(vertices: &[Vec3], triangles: &[[u32; 3]]) -> Vec<FeatureEdge> {
    let at = |i: u32| vertices.get(i as usize).copied();
    let mut sides: Vec<[u32; 2]> =
        (triangles.iter()).flat_map(|&[a, b, c]| [[a, b], [b, c], [c, a]].map(|[i, j]| [i.min(j), i.max(j)])).collect();
    sides.sort_unstable();
    sides.dedup();
    sides.into_iter().filter_map(|[i, j]| Some(FeatureEdge { ends: [at(i)?, at(j)?], radius: 0.0 })).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_general_shape_takes_no_more_room_than_an_analytic_one() {
        // the box: centre, rotation, half extents; `Shape` stays as large as it was before general shapes
        assert!(size_of::<GeneralShape>() <= size_of::<(Vec3, Quat, Vec3)>());
        assert_eq!(size_of::<super::super::shapes::Shape>(), 64);
    }
}
