//! Collision shapes in world space with the queries §3.4 needs: does the ray x→p enter the shape (entry point
//! q_c and normal n_c), and the closest surface point q_s with its normal for the static fallback.
//!
//! One case §3.4 leaves open: a vertex that starts on the surface and whose ray leaves it (or runs along it)
//! gets no constraint, so the stretch and bending constraints can pull it straight through the surface within
//! the step — cloth held round an edge by tension goes in, is pushed out by the next step's fallback, and the
//! velocity update keeps both moves. Such a vertex keeps the surface's plane at its start as a resting contact
//! (given by still colliders only: `swept.rs`).

use bevy::math::{Isometry3d, Quat, Vec2, Vec3};

use super::general::GeneralShape;

/// A collision shape in world space: the analytic shapes, answered in closed form, and any other solid.
#[derive(Clone, Debug, PartialEq)]
pub enum Shape {
    /// Half-space below the plane through `point` with unit `normal` pointing out of the solid.
    Plane {
        /// A point on the plane.
        point: Vec3,
        /// Unit normal, pointing out of the solid.
        normal: Vec3,
    },
    /// A solid ball.
    Sphere {
        /// Centre.
        center: Vec3,
        /// Radius, metres.
        radius: f32,
    },
    /// An oriented box.
    Box {
        /// Centre.
        center: Vec3,
        /// Orientation of the box's axes.
        rotation: Quat,
        /// Half extents along the box's own axes, metres.
        half_extents: Vec3,
    },
    /// The points within `radius` of the segment a–b.
    Capsule {
        /// One end of the segment.
        a: Vec3,
        /// The other end.
        b: Vec3,
        /// Radius, metres.
        radius: f32,
    },
    /// A closed hollow cylinder, the cloth inside: the solid is everything outside the cylinder of `radius`
    /// about the axis through `center` along `rotation · Y`, capped at ±`half_height`.
    Barrel {
        /// Centre.
        center: Vec3,
        /// Orientation; the axis is `rotation · Y`.
        rotation: Quat,
        /// Radius of the inside, metres.
        radius: f32,
        /// Half the inside height, metres.
        half_height: f32,
    },
    /// Any other solid (a convex hull, a triangle mesh), answered by its own queries.
    General(GeneralShape),
}

/// Bisection steps of the generic ray test (the reference the closed forms are tested against): the entry point
/// is found to 2⁻³⁰ of the segment.
#[cfg(test)]
const BISECTION_STEPS: u32 = 30;

/// How far outside a shape a vertex may start and still rest on it, metres: a contact leaves its vertex on the
/// surface to within rounding (about 10⁻⁷ of its coordinates), far less than this, and this is far less than any
/// cloth's thickness.
pub(crate) const RESTING_SKIN: f32 = 1e-4;

/// Corner `k` (0 to 7) of a box centred on the origin with half extents 1: bit 0 of k picks +x, bit 1 +y, bit 2
/// +z, each −1 when unset.
pub fn box_corner_sign(k: u32) -> Vec3 {
    let sign = |bit: u32| if k & bit == 0 { -1.0 } else { 1.0 };
    Vec3::new(sign(1), sign(2), sign(4))
}

impl Shape {
    /// The shape grown by `margin` metres in every direction (the cloth thickness keeps cloth off surfaces).
    pub fn inflated(&self, margin: f32) -> Self {
        match *self {
            Shape::Plane { point, normal } => Shape::Plane { point: point + normal * margin, normal },
            Shape::Sphere { center, radius } => Shape::Sphere { center, radius: radius + margin },
            Shape::Box { center, rotation, half_extents } => {
                Shape::Box { center, rotation, half_extents: half_extents + Vec3::splat(margin) }
            }
            Shape::Capsule { a, b, radius } => Shape::Capsule { a, b, radius: radius + margin },
            Shape::Barrel { center, rotation, radius, half_height } => Shape::Barrel {
                center,
                rotation,
                radius: (radius - margin).max(0.0),
                half_height: (half_height - margin).max(0.0),
            },
            Shape::General(ref shape) => {
                Shape::General(GeneralShape { margin: shape.margin + margin, ..shape.clone() })
            }
        }
    }

    /// The shape moved by `pose` (from its own frame to the world).
    pub fn transformed(&self, pose: &Isometry3d) -> Self {
        let at = |q: Vec3| Vec3::from(pose.transform_point(q));
        let turn = pose.rotation;
        match *self {
            Shape::Plane { point, normal } => Shape::Plane { point: at(point), normal: turn * normal },
            Shape::Sphere { center, radius } => Shape::Sphere { center: at(center), radius },
            Shape::Box { center, rotation, half_extents } => {
                Shape::Box { center: at(center), rotation: turn * rotation, half_extents }
            }
            Shape::Capsule { a, b, radius } => Shape::Capsule { a: at(a), b: at(b), radius },
            Shape::Barrel { center, rotation, radius, half_height } => {
                Shape::Barrel { center: at(center), rotation: turn * rotation, radius, half_height }
            }
            Shape::General(ref shape) => Shape::General(shape.moved(pose)),
        }
    }

    /// A sphere (centre, radius) holding the whole solid; `None` where the solid is unbounded (a plane's half
    /// space, the outside of a barrel).
    pub fn bounding_sphere(&self) -> Option<(Vec3, f32)> {
        match *self {
            Shape::Plane { .. } => None,
            Shape::Sphere { center, radius } => Some((center, radius)),
            Shape::Box { center, half_extents, .. } => Some((center, half_extents.length())),
            Shape::Capsule { a, b, radius } => Some(((a + b) * 0.5, a.distance(b) * 0.5 + radius)),
            Shape::Barrel { .. } => None,
            Shape::General(ref shape) => Some(shape.bounding_sphere()),
        }
    }

    /// The axis-aligned box (min, max) holding the whole solid; `None` where the solid is unbounded.
    pub fn bounding_box(&self) -> Option<(Vec3, Vec3)> {
        let around = |center: Vec3, half: Vec3| Some((center - half, center + half));
        match *self {
            Shape::Plane { .. } | Shape::Barrel { .. } => None,
            Shape::Sphere { center, radius } => around(center, Vec3::splat(radius)),
            Shape::Box { center, rotation, half_extents } => {
                let axes = bevy::math::Mat3::from_quat(rotation);
                let half = axes.x_axis.abs() * half_extents.x
                    + axes.y_axis.abs() * half_extents.y
                    + axes.z_axis.abs() * half_extents.z;
                around(center, half)
            }
            Shape::Capsule { a, b, radius } => Some((a.min(b) - radius, a.max(b) + radius)),
            Shape::General(ref shape) => Some(shape.bounding_box()),
        }
    }

    /// The largest distance of a surface point from the origin (how far a turn about the origin can move
    /// it, per radian); infinite for a plane.
    pub fn reach(&self) -> f32 {
        match *self {
            Shape::Plane { .. } => f32::INFINITY,
            Shape::Sphere { center, radius } => center.length() + radius,
            Shape::Box { center, half_extents, .. } => center.length() + half_extents.length(),
            Shape::Capsule { a, b, radius } => a.length().max(b.length()) + radius,
            Shape::Barrel { center, radius, half_height, .. } => center.length() + radius.hypot(half_height),
            Shape::General(ref shape) => shape.reach(),
        }
    }

    /// Signed distance from `q` to the surface: negative inside.
    pub fn signed_distance(&self, q: Vec3) -> f32 {
        match *self {
            Shape::Plane { point, normal } => (q - point).dot(normal),
            Shape::Sphere { center, radius } => q.distance(center) - radius,
            Shape::Box { center, rotation, half_extents } => {
                let d = (rotation.inverse() * (q - center)).abs() - half_extents;
                d.max(Vec3::ZERO).length() + d.max_element().min(0.0)
            }
            Shape::Capsule { a, b, radius } => q.distance(closest_on_segment(a, b, q)) - radius,
            Shape::Barrel { center, rotation, radius, half_height } => {
                -cylinder_distance(rotation.inverse() * (q - center), radius, half_height)
            }
            Shape::General(ref shape) => shape.signed_distance(q),
        }
    }

    /// Whether `q` lies outside by more than `distance`, as far as a quick test can tell: a general solid's
    /// clearance (`SolidQueries::clearance`); `false` for an analytic shape, whose exact
    /// distance is as quick.
    #[inline]
    pub fn is_clear_of(&self, q: Vec3, distance: f32) -> bool {
        match self {
            Shape::General(shape) => shape.clearance(q) > distance,
            _ => false,
        }
    }

    /// The surface point closest to `q` and the outward normal there (static collision, §3.4).
    pub fn closest_surface(&self, q: Vec3) -> (Vec3, Vec3) {
        match *self {
            Shape::Plane { point, normal } => (q - normal * (q - point).dot(normal), normal),
            Shape::Sphere { center, radius } => {
                let n = (q - center).normalize_or(Vec3::Y);
                (center + n * radius, n)
            }
            Shape::Box { center, rotation, half_extents } => {
                let local = rotation.inverse() * (q - center);
                let clamped = local.clamp(-half_extents, half_extents);
                let (point, normal) = if local != clamped {
                    (clamped, (local - clamped).normalize_or(Vec3::Y))
                } else {
                    // inside: leave through the nearest face
                    let gap = half_extents - local.abs();
                    let axis = if gap.x <= gap.y && gap.x <= gap.z {
                        Vec3::X
                    } else if gap.y <= gap.z {
                        Vec3::Y
                    } else {
                        Vec3::Z
                    };
                    let side = if local.dot(axis) >= 0.0 { axis } else { -axis };
                    (local + side * gap.dot(axis), side)
                };
                (center + rotation * point, rotation * normal)
            }
            Shape::Capsule { a, b, radius } => {
                let c = closest_on_segment(a, b, q);
                let n = (q - c).normalize_or((b - a).any_orthonormal_vector());
                (c + n * radius, n)
            }
            Shape::Barrel { center, rotation, radius, half_height } => {
                let (point, normal) = barrel_closest_surface(rotation.inverse() * (q - center), radius, half_height);
                (center + rotation * point, rotation * normal)
            }
            Shape::General(ref shape) => shape.closest_surface(q),
        }
    }

    /// Where the segment a→b first enters the shape from outside, with the outward normal there
    /// (continuous collision, §3.4). `None` if `a` is inside or the segment misses.
    pub fn ray_entry(&self, a: Vec3, b: Vec3) -> Option<(Vec3, Vec3)> {
        match *self {
            Shape::Plane { point, normal } => {
                let (da, db) = ((a - point).dot(normal), (b - point).dot(normal));
                if da < 0.0 || db >= 0.0 {
                    return None;
                }
                let t = da / (da - db);
                Some((a + (b - a) * t, normal))
            }
            Shape::Sphere { center, radius } => {
                let (d, m) = (b - a, a - center);
                let c = m.length_squared() - radius * radius;
                if c < 0.0 {
                    return None;
                }
                let (dd, md) = (d.length_squared(), m.dot(d));
                if dd <= 0.0 || md >= 0.0 {
                    return None;
                }
                let disc = md * md - dd * c;
                if disc < 0.0 {
                    return None;
                }
                let t = (-md - disc.sqrt()) / dd;
                if !(0.0..=1.0).contains(&t) {
                    return None;
                }
                let q = a + d * t;
                Some((q, (q - center) / radius))
            }
            Shape::Box { center, rotation, half_extents } => box_ray_entry((center, rotation, half_extents), a, b),
            Shape::Capsule { .. } if self.signed_distance(a) < 0.0 => None,
            Shape::Capsule { a: end_a, b: end_b, radius } => {
                let t = capsule_ray_entry((end_a, end_b, radius), a, b)?;
                let q = a + (b - a) * t;
                Some((q, self.closest_surface(q).1))
            }
            Shape::Barrel { .. } => self.barrel_ray_entry(a, b),
            Shape::General(ref shape) => shape.ray_entry(a, b),
        }
    }

    /// Ray entry into a barrel's wall: the free space inside is a convex cylinder, so a segment starting there
    /// leaves it at most once, where it ends outside: the first of the wall crossing (the larger root of
    /// |a_xz + t d_xz|² = r², in the barrel's frame) and the cap crossing.
    fn barrel_ray_entry(&self, a: Vec3, b: Vec3) -> Option<(Vec3, Vec3)> {
        let Shape::Barrel { center, rotation, radius, half_height } = *self else { return None };
        if self.signed_distance(a) < 0.0 || self.signed_distance(b) >= 0.0 {
            return None;
        }
        let to_local = rotation.inverse();
        let (from, d) = (to_local * (a - center), to_local * (b - a));
        // wall: A t² + B t + C = 0 with C = |a_xz|² − r² ≤ 0; the positive root without cancellation
        let (qa, qb, qc) = (
            d.x * d.x + d.z * d.z,
            2.0 * (from.x * d.x + from.z * d.z),
            from.x * from.x + from.z * from.z - radius * radius,
        );
        let s = (qb * qb - 4.0 * qa * qc).max(0.0).sqrt();
        let wall = if qb >= 0.0 {
            if qb + s > 0.0 { -2.0 * qc / (qb + s) } else { f32::INFINITY }
        } else {
            (s - qb) / (2.0 * qa)
        };
        let cap = if d.y > 0.0 {
            (half_height - from.y) / d.y
        } else if d.y < 0.0 {
            (-half_height - from.y) / d.y
        } else {
            f32::INFINITY
        };
        // the normal of the face crossed, into the free space (at the crossing point itself, a hair inside the
        // solid by rounding, the closest-surface normal would be noise)
        let (t, normal) = if wall <= cap {
            let t = wall.clamp(0.0, 1.0);
            let radial = from + d * t;
            (t, -Vec3::new(radial.x, 0.0, radial.z).normalize_or(Vec3::X))
        } else {
            (cap.clamp(0.0, 1.0), if d.y > 0.0 { Vec3::NEG_Y } else { Vec3::Y })
        };
        Some((a + (b - a) * t, rotation * normal))
    }

    /// Ray entry for any convex shape from its signed distance, which is convex along the segment: find the
    /// segment's deepest point (ternary search), and if it is inside, bisect for the first crossing before it.
    /// The closed forms of the box and the capsule are checked against it.
    #[cfg(test)]
    fn convex_ray_entry(&self, a: Vec3, b: Vec3) -> Option<(Vec3, Vec3)> {
        let (da, db) = (self.signed_distance(a), self.signed_distance(b));
        // signed distance is 1-Lipschitz: no point of the segment can be inside if da + db > |b − a|
        if da < 0.0 || da + db > a.distance(b) {
            return None;
        }
        let at = |t: f32| a + (b - a) * t;
        let mut deepest = 1.0;
        if db >= 0.0 {
            let (mut lo, mut hi) = (0.0f32, 1.0f32);
            for _ in 0..BISECTION_STEPS {
                let (m1, m2) = (lo + (hi - lo) / 3.0, hi - (hi - lo) / 3.0);
                if self.signed_distance(at(m1)) < self.signed_distance(at(m2)) { hi = m2 } else { lo = m1 }
            }
            deepest = 0.5 * (lo + hi);
            if self.signed_distance(at(deepest)) >= 0.0 {
                return None;
            }
        }
        let (mut lo, mut hi) = (0.0f32, deepest);
        for _ in 0..BISECTION_STEPS {
            let mid = 0.5 * (lo + hi);
            if self.signed_distance(at(mid)) >= 0.0 { lo = mid } else { hi = mid }
        }
        let q = at(lo);
        Some((q, self.closest_surface(q).1))
    }

    /// Whether any point of the axis-aligned box `min`–`max` may lie inside the shape. Conservative, from the
    /// signed distance being 1-Lipschitz: no point of the box is closer to the surface than the box centre's
    /// distance minus the half-diagonal. Exact for a plane: the box's corner deepest along the normal. A
    /// bounded shape must also overlap its [`bounding_box`](Self::bounding_box): a row of cloth vertices is a
    /// wide box whose half-diagonal alone would reach an elongated collider (a gripping bar) from far below.
    /// Lets line (8) skip a whole cloth, or a slice of its vertices, far from a collider.
    pub fn may_touch_box(&self, min: Vec3, max: Vec3) -> bool {
        if let Some((lo, hi)) = self.bounding_box()
            && (max.cmplt(lo).any() || min.cmpgt(hi).any())
        {
            return false;
        }
        let (center, half) = ((min + max) * 0.5, (max - min) * 0.5);
        match *self {
            // a slice of a hanging sheet is wide and flat: its half-diagonal would reach the floor from far above
            Shape::Plane { normal, .. } => self.signed_distance(center) <= half.dot(normal.abs()),
            _ => self.signed_distance(center) <= half.length(),
        }
    }

    /// The collision constraint of line (8) for a vertex moving x→p, as surface point, outward normal and
    /// whether the vertex rests on the surface: the continuous entry point if the ray enters the shape, the
    /// closest surface point if the ray lies completely inside (static fallback), the surface point nearest x if
    /// the ray starts on the surface (within `RESTING_SKIN`) and does not enter (resting), and nothing if it
    /// stays outside. A ray that starts inside and ends outside keeps the surface nearest its start: a vertex
    /// left on the boundary (or a hair inside it, by rounding) by the last substep's projection must leave on the
    /// side it was pushed to, never through a thin collider to the other side.
    pub fn contact(&self, x: Vec3, p: Vec3) -> Option<(Vec3, Vec3, bool)> {
        if self.is_clear_of(x, x.distance(p).max(RESTING_SKIN)) {
            // outside by more than the ray is long: it cannot enter, and x does not rest on the surface
            return None;
        }
        let from = self.signed_distance(x);
        let (point, normal) = if from >= 0.0 {
            // the signed distance is 1-Lipschitz: a ray shorter than its start's distance cannot enter (a general
            // shape's cast is dear), nor one whose ends' distances add up to more than its length (the quick answer
            // for most rays near a box or a capsule)
            let may_enter = match self {
                Shape::General(_) => from <= x.distance(p),
                Shape::Box { .. } | Shape::Capsule { .. } => from + self.signed_distance(p) <= x.distance(p),
                _ => true,
            };
            match may_enter.then(|| self.ray_entry(x, p)).flatten() {
                Some(entry) => entry,
                None if from <= RESTING_SKIN => {
                    let (point, normal) = self.closest_surface(x);
                    return Some((point, normal, true));
                }
                None => return None,
            }
        } else if self.signed_distance(p) < 0.0 {
            self.closest_surface(p)
        } else {
            self.closest_surface(x)
        };
        Some((point, normal, false))
    }
}

/// Where the segment a→b first enters the box (centre, rotation, half extents) from outside, with the normal of
/// the face it enters through: the slab test in the box's frame. `None` if `a` is inside or no point of the
/// segment is strictly inside (a ray grazing a face does not enter).
fn box_ray_entry((center, rotation, half): (Vec3, Quat, Vec3), a: Vec3, b: Vec3) -> Option<(Vec3, Vec3)> {
    let to_local = rotation.inverse();
    let (from, d) = (to_local * (a - center), to_local * (b - a));
    if from.abs().cmplt(half).all() {
        return None;
    }
    let (mut enter, mut exit, mut face) = (0.0f32, 1.0f32, None);
    for axis in 0..3 {
        let (o, v, h) = (from[axis], d[axis], half[axis]);
        if v == 0.0 {
            if o.abs() >= h {
                return None;
            }
            continue;
        }
        let (near, far) = ((-h.copysign(v) - o) / v, (h.copysign(v) - o) / v);
        if near > enter {
            (enter, face) = (near, Some(axis));
        }
        exit = exit.min(far);
    }
    // a starting on a face (enter 0 through no slab) is outside by the test above: it enters through that face
    let axis = face.or_else(|| (0..3).find(|&k| from[k].abs() >= half[k] && from[k] * d[k] < 0.0))?;
    if enter >= exit {
        return None;
    }
    let mut normal = Vec3::ZERO;
    normal[axis] = -d[axis].signum();
    Some((a + (b - a) * enter, rotation * normal))
}

/// The fraction of the segment a→b at which it first enters the capsule (segment `ends`, radius), for `a` outside
/// it: the first entry into the side (an infinite cylinder, where its point projects between the ends) or into
/// either end's ball. `None` if the segment misses.
fn capsule_ray_entry((end_a, end_b, radius): (Vec3, Vec3, f32), a: Vec3, b: Vec3) -> Option<f32> {
    let (d, axis) = (b - a, end_b - end_a);
    let aa = axis.length_squared();
    if d == Vec3::ZERO {
        return None;
    }
    // the first root in [0, 1) of |m + t v|² = r², for a ray moving by v from m off the centre; a start that
    // rounding puts on or a hair inside one of them (though outside the capsule) enters at once if it moves in
    let r2 = radius * radius;
    let first_root = |m: Vec3, v: Vec3| {
        let (vv, mv, c) = (v.length_squared(), m.dot(v), m.length_squared() - r2);
        let disc = mv * mv - vv * c;
        let root = if c <= 0.0 { 0.0 } else { (-mv - disc.max(0.0).sqrt()) / vv };
        (disc > 0.0 && mv < 0.0).then_some(root).filter(|t| (0.0..1.0).contains(t))
    };
    let balls = [end_a, end_b].map(|end| first_root(a - end, d));
    // the side: the ray's components across the axis
    let side = (aa > 0.0).then(|| {
        let across = |v: Vec3| v - axis * (v.dot(axis) / aa);
        let t = first_root(across(a - end_a), across(d))?;
        let along = (a + d * t - end_a).dot(axis);
        (along > 0.0 && along < aa).then_some(t)
    });
    balls.into_iter().chain(side).flatten().reduce(f32::min)
}

/// Signed distance from `q` (local frame) to the solid cylinder of `radius` about the Y axis, |y| ≤
/// `half_height`: exact inside and outside.
fn cylinder_distance(q: Vec3, radius: f32, half_height: f32) -> f32 {
    let d = Vec2::new(Vec2::new(q.x, q.z).length() - radius, q.y.abs() - half_height);
    d.max(Vec2::ZERO).length() + d.max_element().min(0.0)
}

/// The point of a barrel's inner surface closest to `q` (local frame) and the normal there, pointing into the
/// free space inside.
fn barrel_closest_surface(q: Vec3, radius: f32, half_height: f32) -> (Vec3, Vec3) {
    let radial = Vec2::new(q.x, q.z);
    let r = radial.length();
    let outward = if r > 0.0 { radial / r } else { Vec2::X };
    let wall = Vec3::new(outward.x, 0.0, outward.y);
    let cap = if q.y >= 0.0 { Vec3::Y } else { Vec3::NEG_Y };
    let inside_wall = r <= radius;
    let inside_caps = q.y.abs() <= half_height;
    if inside_wall && inside_caps {
        // free space: the nearer of the wall and the caps
        return if radius - r <= half_height - q.y.abs() {
            (Vec3::new(outward.x * radius, q.y, outward.y * radius), -wall)
        } else {
            (Vec3::new(q.x, cap.y * half_height, q.z), -cap)
        };
    }
    // in the solid: the closest point of the cylinder; the normal points back into it
    let clamped_r = r.min(radius);
    let point = Vec3::new(outward.x * clamped_r, q.y.clamp(-half_height, half_height), outward.y * clamped_r);
    (point, (point - q).normalize_or(-wall))
}

/// The point of the segment a–b closest to q.
fn closest_on_segment(a: Vec3, b: Vec3, q: Vec3) -> Vec3 {
    let ab = b - a;
    let t = if ab.length_squared() > 0.0 { ((q - a).dot(ab) / ab.length_squared()).clamp(0.0, 1.0) } else { 0.0 };
    a + ab * t
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPHERE: Shape = Shape::Sphere { center: Vec3::ZERO, radius: 1.0 };

    #[test]
    fn box_culling_is_conservative() {
        let shapes = [
            Shape::Plane { point: Vec3::ZERO, normal: Vec3::Y },
            Shape::Sphere { center: Vec3::new(0.3, 0.2, 0.0), radius: 0.25 },
            Shape::Box { center: Vec3::X, rotation: Quat::from_rotation_y(0.7), half_extents: Vec3::splat(0.2) },
            Shape::Capsule { a: Vec3::ZERO, b: Vec3::new(0.0, 0.0, 1.0), radius: 0.1 },
        ];
        let (min, max) = (Vec3::new(-0.5, 0.05, -0.5), Vec3::new(0.5, 0.6, 0.5));
        for shape in &shapes {
            let touched = (0..1000).any(|k| {
                let t = Vec3::new((k % 10) as f32, ((k / 10) % 10) as f32, (k / 100) as f32) / 9.0;
                shape.signed_distance(min + (max - min) * t) < 0.0
            });
            assert!(!touched || shape.may_touch_box(min, max), "{shape:?} touches the box but was culled");
        }
        let far = Shape::Sphere { center: Vec3::new(0.0, 5.0, 0.0), radius: 1.0 };
        assert!(!far.may_touch_box(min, max));
        assert!(!shapes[0].may_touch_box(Vec3::new(-0.2, 1.0, -0.2), Vec3::new(0.2, 2.0, 0.2)));
        // a row of a hanging sheet below a gripping bar: its box is wide, so the bar lies within its half-diagonal,
        // but the two boxes are apart; the row at the bar's height touches it
        let bar = Shape::Box {
            center: Vec3::new(0.0, 0.8, -0.1),
            rotation: Quat::from_rotation_z(0.1),
            half_extents: Vec3::new(0.4, 0.1, 0.1),
        };
        let row = |y: f32| (Vec3::new(-1.2, y, -0.01), Vec3::new(1.2, y + 0.02, 0.01));
        let (below, level) = (row(0.55), row(0.8));
        assert!(bar.signed_distance((below.0 + below.1) * 0.5) < (below.1 - below.0).length() * 0.5);
        assert!(!bar.may_touch_box(below.0, below.1), "the row below the bar is culled");
        assert!(bar.may_touch_box(level.0, level.1));
        // a wide, flat box just above a plane, tilted or not, is culled; one reaching below it is not
        for normal in [Vec3::Y, Vec3::new(0.1, 1.0, -0.2).normalize()] {
            let plane = Shape::Plane { point: Vec3::ZERO, normal };
            assert!(!plane.may_touch_box(Vec3::new(-1.0, 0.35, -0.05), Vec3::new(1.0, 0.4, 0.05)));
            assert!(plane.may_touch_box(Vec3::new(-1.0, -0.01, -0.05), Vec3::new(1.0, 0.4, 0.05)));
        }
    }

    #[test]
    fn bounding_spheres_and_boxes_hold_every_inside_point() {
        let shapes = [
            Shape::Sphere { center: Vec3::new(0.3, 0.2, 0.0), radius: 0.25 },
            Shape::Box {
                center: Vec3::X,
                rotation: Quat::from_rotation_y(0.7),
                half_extents: Vec3::new(0.4, 0.1, 0.2),
            },
            Shape::Capsule { a: Vec3::new(0.2, 0.0, -0.3), b: Vec3::new(0.0, 0.5, 1.0), radius: 0.1 },
        ];
        for shape in shapes {
            let (center, radius) = shape.bounding_sphere().unwrap();
            let mut inside = 0;
            for k in 0..27_000 {
                let t = Vec3::new((k % 30) as f32, ((k / 30) % 30) as f32, (k / 900) as f32) / 29.0;
                let q = Vec3::splat(-1.0) + t * 3.0;
                if shape.signed_distance(q) <= 0.0 {
                    inside += 1;
                    assert!(q.distance(center) <= radius + 1e-5, "{shape:?}: {q} is inside but outside the sphere");
                    let (lo, hi) = shape.bounding_box().unwrap();
                    assert!(q.cmpge(lo - 1e-5).all() && q.cmple(hi + 1e-5).all(), "{shape:?}: {q} outside the box");
                }
            }
            assert!(inside > 10, "{shape:?}: the samples missed the shape");
        }
        let plane = Shape::Plane { point: Vec3::ZERO, normal: Vec3::Y };
        let barrel = Shape::Barrel { center: Vec3::ZERO, rotation: Quat::IDENTITY, radius: 1.0, half_height: 1.0 };
        assert_eq!((plane.bounding_sphere(), barrel.bounding_sphere()), (None, None));
        assert_eq!((plane.bounding_box(), barrel.bounding_box()), (None, None));
    }

    #[test]
    fn barrel_rays_enter_the_wall_where_they_first_leave_the_free_space() {
        let barrel = Shape::Barrel {
            center: Vec3::new(0.1, 1.0, -0.2),
            rotation: Quat::from_euler(bevy::math::EulerRot::XYZ, 1.2, 0.3, -0.4),
            radius: 0.7,
            half_height: 0.45,
        };
        let mut seed = 7u32;
        let mut next = || {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (seed >> 8) as f32 / (1 << 24) as f32 * 2.0 - 1.0
        };
        let mut hits = 0;
        for _ in 0..20_000 {
            let a = Vec3::new(0.1, 1.0, -0.2) + Vec3::new(next(), next(), next()) * 0.7;
            let b = a + Vec3::new(next(), next(), next()) * 0.3;
            let Some((q, n)) = barrel.ray_entry(a, b) else {
                assert!(barrel.signed_distance(a) < 0.0 || barrel.signed_distance(b) >= 0.0);
                continue;
            };
            hits += 1;
            // on the surface, on the segment, and no earlier point of the segment is in the wall
            assert!(barrel.signed_distance(q).abs() < 1e-5, "{a} → {b}: {q} at {}", barrel.signed_distance(q));
            let t = (q - a).length() / (b - a).length();
            assert!((a + (b - a) * t).distance(q) < 1e-5);
            for k in 0..20 {
                assert!(barrel.signed_distance(a + (b - a) * (t * k as f32 / 20.0)) >= -1e-5);
            }
            // the normal of the face crossed: the closest surface's, seen from just inside the free space
            let from_inside = barrel.closest_surface(q + n * 1e-4).1;
            assert!(n.distance(from_inside) < 1e-3, "{a} → {b}: normal {n}, the face's {from_inside}");
        }
        assert!(hits > 500, "{hits}");
    }

    /// The closed-form entries of a turned box and a slanted capsule against the generic bisection on their signed
    /// distances: the same rays enter (but for rays that graze the surface), at the same point, and the normal is
    /// the face's the ray enters through.
    #[test]
    fn box_and_capsule_entries_in_closed_form_agree_with_the_bisection() {
        let shapes = [
            Shape::Box {
                center: Vec3::new(0.1, 1.0, -0.2),
                rotation: Quat::from_euler(bevy::math::EulerRot::XYZ, 1.2, 0.3, -0.4),
                half_extents: Vec3::new(0.5, 0.03, 0.3),
            },
            Shape::Capsule { a: Vec3::new(-0.2, 0.7, -0.3), b: Vec3::new(0.4, 1.3, 0.0), radius: 0.15 },
        ];
        let mut seed = 11u32;
        let mut next = || {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (seed >> 8) as f32 / (1 << 24) as f32 * 2.0 - 1.0
        };
        for shape in &shapes {
            let (mut hits, mut grazes) = (0, 0);
            for k in 0..40_000 {
                let a = Vec3::new(0.1, 1.0, -0.2) + Vec3::new(next(), next(), next()) * 0.6;
                // every fourth ray starts on the surface: cloth resting on a collider
                let resting = k % 4 == 0;
                let a = if resting { shape.closest_surface(a).0 } else { a };
                let b = a + Vec3::new(next(), next(), next()) * 0.4;
                let (closed, bisected) = (shape.ray_entry(a, b), shape.convex_ray_entry(a, b));
                let Some((q, n)) = closed else {
                    if bisected.is_some() {
                        let deepest = (0..=400).map(|i| shape.signed_distance(a.lerp(b, i as f32 / 400.0)));
                        assert!(deepest.fold(f32::MAX, f32::min) > -1e-4, "{a} → {b} enters: {bisected:?}");
                        grazes += usize::from(!resting);
                    }
                    continue;
                };
                hits += 1;
                let Some((reference, _)) = bisected else {
                    // rounding on the surface: a start the signed distance puts a hair inside, or an end on it
                    let on_surface = |e: Vec3| shape.signed_distance(e).abs() < 1e-5 && q.distance(e) < 1e-3;
                    assert!(on_surface(a) || on_surface(b), "{a} → {b}: {q}");
                    grazes += usize::from(!resting);
                    continue;
                };
                // the same point, or on a ray nearly along the surface, two points the bisection cannot tell apart
                let same = q.distance(reference) < 1e-4 || shape.signed_distance(reference).abs() < 1e-6;
                assert!(same, "{a} → {b}: {q}, bisection {reference}");
                assert!(shape.signed_distance(q).abs() < 1e-5, "{a} → {b}: {q} at {}", shape.signed_distance(q));
                let outside = shape.closest_surface(q + n * 1e-3).1;
                assert!(n.distance(outside) < 1e-2 || shape.closest_surface(q - n * 1e-4).1.distance(n) < 1e-2);
                assert!((b - a).dot(n) < 0.0, "{a} → {b}: entering against the normal {n}");
            }
            // away from the surface, the two disagree only on the rare ray that grazes it
            assert!(hits > 2_000 && grazes < hits / 200, "{shape:?}: {hits} hits, {grazes} grazes");
        }
    }

    #[test]
    fn fast_ray_through_sphere_is_caught_at_entry() {
        // Both ends outside, the ray passes through: a static test would miss it.
        let (q, n, _) = SPHERE.contact(Vec3::new(0.0, 3.0, 0.0), Vec3::new(0.0, -3.0, 0.0)).unwrap();
        assert!((q - Vec3::Y).length() < 1e-6);
        assert!((n - Vec3::Y).length() < 1e-6);
    }

    #[test]
    fn ray_starting_inside_falls_back_to_closest_point() {
        let (q, n, _) = SPHERE.contact(Vec3::new(0.5, 0.0, 0.0), Vec3::new(0.6, 0.0, 0.0)).unwrap();
        assert!((q - Vec3::X).length() < 1e-6 && (n - Vec3::X).length() < 1e-6);
    }

    #[test]
    fn ray_leaving_from_inside_keeps_the_side_it_started_near() {
        let slab = Shape::Box { center: Vec3::ZERO, rotation: Quat::IDENTITY, half_extents: Vec3::new(1.0, 0.02, 1.0) };
        // starts a hair inside the bottom face, ends above the slab: held below it
        let (q, n, _) = slab.contact(Vec3::new(0.0, -0.0199, 0.0), Vec3::new(0.0, 0.05, 0.0)).unwrap();
        assert!((q.y + 0.02).abs() < 1e-6 && n == Vec3::NEG_Y, "{q} {n}");
        // leaving on the same side it is near: the constraint (p − q)·n ≥ 0 already holds
        let (q, n, _) = SPHERE.contact(Vec3::new(0.5, 0.0, 0.0), Vec3::new(2.0, 0.0, 0.0)).unwrap();
        assert!((Vec3::new(2.0, 0.0, 0.0) - q).dot(n) > 0.0);
    }

    #[test]
    fn missing_rays_make_no_contact() {
        assert!(SPHERE.contact(Vec3::new(-2.0, 2.0, 0.0), Vec3::new(2.0, 2.0, 0.0)).is_none());
        assert!(SPHERE.contact(Vec3::new(0.0, 3.0, 0.0), Vec3::new(0.0, 2.0, 0.0)).is_none());
    }

    #[test]
    fn plane_entry_point_lies_on_the_plane() {
        let ground = Shape::Plane { point: Vec3::ZERO, normal: Vec3::Y }.inflated(0.01);
        let (q, n, _) = ground.contact(Vec3::new(1.0, 0.5, 0.0), Vec3::new(2.0, -0.48, 0.0)).unwrap();
        assert!((q.y - 0.01).abs() < 1e-6 && n == Vec3::Y);
        assert!((q.x - 1.5).abs() < 1e-5);
    }

    #[test]
    fn a_vertex_starting_on_the_surface_rests_on_it() {
        // on the sphere's top and leaving it sideways: no entry, but the tangent plane at its start holds it
        let x = Vec3::new(0.0, 1.0 + 2e-5, 0.0);
        let (q, n, resting) = SPHERE.contact(x, x + Vec3::new(0.1, 0.05, 0.0)).unwrap();
        assert!(resting && (q - Vec3::Y).length() < 1e-5 && (n - Vec3::Y).length() < 1e-5, "{q} {n}");
        // a ray that enters from the surface is an ordinary contact; one starting a millimetre off is none
        assert!(!SPHERE.contact(x, Vec3::new(0.0, 0.5, 0.0)).unwrap().2);
        assert!(SPHERE.contact(Vec3::new(0.0, 1.001, 0.0), Vec3::new(0.1, 1.05, 0.0)).is_none());
    }

    #[test]
    fn box_distances_normals_and_entry() {
        let b = Shape::Box {
            center: Vec3::Y,
            rotation: Quat::from_rotation_y(0.3),
            half_extents: Vec3::new(0.5, 0.25, 1.0),
        };
        assert!((b.signed_distance(Vec3::new(0.0, 2.0, 0.0)) - 0.75).abs() < 1e-5);
        assert!((b.signed_distance(Vec3::Y) + 0.25).abs() < 1e-5);
        let (q, n) = b.closest_surface(Vec3::new(0.0, 1.1, 0.0));
        assert!((q - Vec3::new(0.0, 1.25, 0.0)).length() < 1e-5 && (n - Vec3::Y).length() < 1e-5);
        // a fast ray straight through the box enters at its top face
        let (q, n, _) = b.contact(Vec3::new(0.0, 3.0, 0.0), Vec3::new(0.0, -3.0, 0.0)).unwrap();
        assert!((q.y - 1.25).abs() < 1e-4 && (n - Vec3::Y).length() < 1e-4, "{q} {n}");
        assert!(b.contact(Vec3::new(3.0, 3.0, 0.0), Vec3::new(3.0, -3.0, 0.0)).is_none());
    }

    #[test]
    fn barrel_holds_from_inside() {
        // axis along world Z: the local Y axis rotated by 90° about X
        let barrel = Shape::Barrel {
            center: Vec3::Y,
            rotation: Quat::from_rotation_x(std::f32::consts::FRAC_PI_2),
            radius: 0.8,
            half_height: 0.5,
        };
        assert!((barrel.signed_distance(Vec3::Y) - 0.5).abs() < 1e-5, "centre: nearest are the caps");
        assert!((barrel.signed_distance(Vec3::new(0.0, 0.3, 0.0)) - 0.1).abs() < 1e-5, "0.1 above the wall");
        assert!((barrel.signed_distance(Vec3::new(0.0, 0.1, 0.0)) + 0.1).abs() < 1e-5, "0.1 into the wall");
        // a fast ray from inside through the bottom of the wall enters the solid at the wall
        let (q, n, _) = barrel.contact(Vec3::new(0.1, 1.0, 0.0), Vec3::new(0.1, -2.0, 0.0)).unwrap();
        assert!((q.distance(Vec3::Y) - 0.8).abs() < 1e-4 && n.y > 0.99, "{q} {n}");
        // a vertex already in the wall goes back to the inner surface
        let (q, n, _) = barrel.contact(Vec3::new(0.0, 0.15, 0.0), Vec3::new(0.0, 0.1, 0.0)).unwrap();
        assert!((q - Vec3::new(0.0, 0.2, 0.0)).length() < 1e-5 && (n - Vec3::Y).length() < 1e-5, "{q} {n}");
        // a cap keeps the cloth in along the axis; moving inside makes no contact
        let (q, n, _) = barrel.contact(Vec3::new(0.0, 1.0, 0.4), Vec3::new(0.0, 1.0, 0.7)).unwrap();
        assert!((q.z - 0.5).abs() < 1e-4 && (n + Vec3::Z).length() < 1e-4, "{q} {n}");
        assert!(barrel.contact(Vec3::new(0.0, 1.2, 0.0), Vec3::new(0.3, 0.9, 0.1)).is_none());
        let shrunk = barrel.inflated(0.05);
        assert!((shrunk.signed_distance(Vec3::new(0.0, 0.3, 0.0)) - 0.05).abs() < 1e-5);
    }

    #[test]
    fn capsule_distances_and_entry() {
        let c = Shape::Capsule { a: Vec3::new(-1.0, 0.0, 0.0), b: Vec3::new(1.0, 0.0, 0.0), radius: 0.2 };
        assert!((c.signed_distance(Vec3::new(0.5, 1.0, 0.0)) - 0.8).abs() < 1e-6);
        assert!((c.signed_distance(Vec3::new(2.0, 0.0, 0.0)) - 0.8).abs() < 1e-6);
        let (q, n, _) = c.contact(Vec3::new(0.3, 1.0, 0.0), Vec3::new(0.3, -1.0, 0.0)).unwrap();
        assert!((q - Vec3::new(0.3, 0.2, 0.0)).length() < 1e-4 && (n - Vec3::Y).length() < 1e-4, "{q} {n}");
        let (q, _, _) = c.contact(Vec3::new(0.0, 0.1, 0.0), Vec3::new(0.0, 0.12, 0.0)).unwrap();
        assert!((q.y - 0.2).abs() < 1e-5, "static fallback to the closest surface point");
    }
}
