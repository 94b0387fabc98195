//! Collision shapes in world space with the queries §3.4 needs: does the ray x→p enter the shape (entry point
//! q_c and normal n_c), and the closest surface point q_s with its normal for the static fallback.

use bevy::math::{Quat, Vec3};

/// A collision shape in world space.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Shape {
    /// Half-space below the plane through `point` with unit `normal` pointing out of the solid.
    Plane {
        point: Vec3,
        normal: Vec3,
    },
    Sphere {
        center: Vec3,
        radius: f32,
    },
    /// An oriented box.
    Box {
        center: Vec3,
        rotation: Quat,
        half_extents: Vec3,
    },
    /// The points within `radius` of the segment a–b.
    Capsule {
        a: Vec3,
        b: Vec3,
        radius: f32,
    },
}

/// Bisection steps of the generic ray test: the entry point is found to 2⁻³⁰ of the segment.
const BISECTION_STEPS: u32 = 30;

impl Shape {
    /// The shape grown by `margin` metres in every direction (the cloth thickness keeps cloth off surfaces).
    pub fn inflated(self, margin: f32) -> Self {
        match self {
            Shape::Plane { point, normal } => Shape::Plane { point: point + normal * margin, normal },
            Shape::Sphere { center, radius } => Shape::Sphere { center, radius: radius + margin },
            Shape::Box { center, rotation, half_extents } => {
                Shape::Box { center, rotation, half_extents: half_extents + Vec3::splat(margin) }
            }
            Shape::Capsule { a, b, radius } => Shape::Capsule { a, b, radius: radius + margin },
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
            Shape::Box { .. } | Shape::Capsule { .. } => self.convex_ray_entry(a, b),
        }
    }

    /// Ray entry for any convex shape from its signed distance, which is convex along the segment: find the
    /// segment's deepest point (ternary search), and if it is inside, bisect for the first crossing before it.
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
    /// distance minus the half-diagonal. Lets line (8) skip a whole cloth far from a collider.
    pub fn may_touch_box(&self, min: Vec3, max: Vec3) -> bool {
        let (center, half_diagonal) = ((min + max) * 0.5, (max - min).length() * 0.5);
        self.signed_distance(center) <= half_diagonal
    }

    /// The collision constraint of line (8) for a vertex moving x→p: the continuous entry point if the ray
    /// enters the shape, the closest surface point if the ray lies completely inside (static fallback), and
    /// nothing otherwise.
    pub fn contact(&self, x: Vec3, p: Vec3) -> Option<(Vec3, Vec3)> {
        if self.signed_distance(x) >= 0.0 {
            self.ray_entry(x, p)
        } else if self.signed_distance(p) < 0.0 {
            Some(self.closest_surface(p))
        } else {
            None
        }
    }
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
        for shape in shapes {
            let touched = (0..1000).any(|k| {
                let t = Vec3::new((k % 10) as f32, ((k / 10) % 10) as f32, (k / 100) as f32) / 9.0;
                shape.signed_distance(min + (max - min) * t) < 0.0
            });
            assert!(!touched || shape.may_touch_box(min, max), "{shape:?} touches the box but was culled");
        }
        let far = Shape::Sphere { center: Vec3::new(0.0, 5.0, 0.0), radius: 1.0 };
        assert!(!far.may_touch_box(min, max));
        assert!(!shapes[0].may_touch_box(Vec3::new(-0.2, 1.0, -0.2), Vec3::new(0.2, 2.0, 0.2)));
    }

    #[test]
    fn fast_ray_through_sphere_is_caught_at_entry() {
        // Both ends outside, the ray passes through: a static test would miss it.
        let (q, n) = SPHERE.contact(Vec3::new(0.0, 3.0, 0.0), Vec3::new(0.0, -3.0, 0.0)).unwrap();
        assert!((q - Vec3::Y).length() < 1e-6);
        assert!((n - Vec3::Y).length() < 1e-6);
    }

    #[test]
    fn ray_starting_inside_falls_back_to_closest_point() {
        let (q, n) = SPHERE.contact(Vec3::new(0.5, 0.0, 0.0), Vec3::new(0.6, 0.0, 0.0)).unwrap();
        assert!((q - Vec3::X).length() < 1e-6 && (n - Vec3::X).length() < 1e-6);
    }

    #[test]
    fn leaving_or_missing_rays_make_no_contact() {
        assert!(SPHERE.contact(Vec3::new(0.5, 0.0, 0.0), Vec3::new(2.0, 0.0, 0.0)).is_none());
        assert!(SPHERE.contact(Vec3::new(-2.0, 2.0, 0.0), Vec3::new(2.0, 2.0, 0.0)).is_none());
        assert!(SPHERE.contact(Vec3::new(0.0, 3.0, 0.0), Vec3::new(0.0, 2.0, 0.0)).is_none());
    }

    #[test]
    fn plane_entry_point_lies_on_the_plane() {
        let ground = Shape::Plane { point: Vec3::ZERO, normal: Vec3::Y }.inflated(0.01);
        let (q, n) = ground.contact(Vec3::new(1.0, 0.5, 0.0), Vec3::new(2.0, -0.48, 0.0)).unwrap();
        assert!((q.y - 0.01).abs() < 1e-6 && n == Vec3::Y);
        assert!((q.x - 1.5).abs() < 1e-5);
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
        let (q, n) = b.contact(Vec3::new(0.0, 3.0, 0.0), Vec3::new(0.0, -3.0, 0.0)).unwrap();
        assert!((q.y - 1.25).abs() < 1e-4 && (n - Vec3::Y).length() < 1e-4, "{q} {n}");
        assert!(b.contact(Vec3::new(3.0, 3.0, 0.0), Vec3::new(3.0, -3.0, 0.0)).is_none());
    }

    #[test]
    fn capsule_distances_and_entry() {
        let c = Shape::Capsule { a: Vec3::new(-1.0, 0.0, 0.0), b: Vec3::new(1.0, 0.0, 0.0), radius: 0.2 };
        assert!((c.signed_distance(Vec3::new(0.5, 1.0, 0.0)) - 0.8).abs() < 1e-6);
        assert!((c.signed_distance(Vec3::new(2.0, 0.0, 0.0)) - 0.8).abs() < 1e-6);
        let (q, n) = c.contact(Vec3::new(0.3, 1.0, 0.0), Vec3::new(0.3, -1.0, 0.0)).unwrap();
        assert!((q - Vec3::new(0.3, 0.2, 0.0)).length() < 1e-4 && (n - Vec3::Y).length() < 1e-4, "{q} {n}");
        let (q, _) = c.contact(Vec3::new(0.0, 0.1, 0.0), Vec3::new(0.0, 0.12, 0.0)).unwrap();
        assert!((q.y - 0.2).abs() < 1e-5, "static fallback to the closest surface point");
    }
}
