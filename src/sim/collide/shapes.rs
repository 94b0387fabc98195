//! Collision shapes in world space with the queries §3.4 needs: does the ray x→p enter the shape (entry point
//! q_c and normal n_c), and the closest surface point q_s with its normal for the static fallback.

use bevy::math::Vec3;

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
}

impl Shape {
    /// The shape grown by `margin` metres in every direction (the cloth thickness keeps cloth off surfaces).
    pub fn inflated(self, margin: f32) -> Self {
        match self {
            Shape::Plane { point, normal } => Shape::Plane { point: point + normal * margin, normal },
            Shape::Sphere { center, radius } => Shape::Sphere { center, radius: radius + margin },
        }
    }

    /// Signed distance from `q` to the surface: negative inside.
    pub fn signed_distance(&self, q: Vec3) -> f32 {
        match *self {
            Shape::Plane { point, normal } => (q - point).dot(normal),
            Shape::Sphere { center, radius } => q.distance(center) - radius,
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
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    const SPHERE: Shape = Shape::Sphere { center: Vec3::ZERO, radius: 1.0 };

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
}
