//! What the overlays draw, as plain geometry built from data the solver already keeps: line segments and small
//! unlit octahedra ("dots"), each with a linear RGBA colour. The buffers are cleared and refilled every frame, so
//! after the first frame they allocate nothing.

use bevy::math::Vec3;

use drape::sim::cloth::Contacts;
use drape::sim::selfcollide::SelfContact;

/// Linear RGBA.
pub type Rgba = [f32; 4];

/// Wireframe edges: near black.
pub const EDGE: Rgba = [0.02, 0.02, 0.03, 1.0];
/// A bending constraint's pair of wing vertices (§4.2's dihedral, or the distance model's cross edge).
pub const BEND: Rgba = [1.0, 0.45, 0.02, 1.0];
/// A tether (long-range attachment) from a vertex to its attached anchor.
pub const TETHER: Rgba = [0.02, 0.75, 1.0, 1.0];
/// A contact with a collider, and its normal.
pub const CONTACT: Rgba = [1.0, 0.85, 0.05, 1.0];
/// A self-collision contact (vertex against triangle), and the triangle's normal.
pub const SELF_CONTACT: Rgba = [1.0, 0.1, 0.9, 1.0];
/// A free particle.
pub const PARTICLE: Rgba = [0.92, 0.92, 0.92, 1.0];
/// A pinned particle (inverse mass 0, §3.6).
pub const PINNED: Rgba = [1.0, 0.8, 0.0, 1.0];
/// The grabbed particle.
pub const GRABBED: Rgba = [0.0, 0.9, 1.0, 1.0];

/// Overlay geometry: a line list and a triangle list of dots.
#[derive(Default, Debug, Clone)]
pub struct Overlay {
    /// Two points per segment.
    pub lines: Vec<[f32; 3]>,
    /// One colour per point of `lines`.
    pub line_colors: Vec<Rgba>,
    /// Three points per triangle of the dots.
    pub dots: Vec<[f32; 3]>,
    /// One colour per point of `dots`.
    pub dot_colors: Vec<Rgba>,
}

impl Overlay {
    /// Empties the buffers, keeping their memory.
    pub fn clear(&mut self) {
        self.lines.clear();
        self.line_colors.clear();
        self.dots.clear();
        self.dot_colors.clear();
    }

    /// A segment from `a` to `b`.
    pub fn line(&mut self, a: Vec3, b: Vec3, color: Rgba) {
        self.lines.extend([a.to_array(), b.to_array()]);
        self.line_colors.extend([color, color]);
    }

    /// A dot: an octahedron of `radius` at `at` (eight triangles).
    pub fn dot(&mut self, at: Vec3, radius: f32, color: Rgba) {
        let axes = [Vec3::X, Vec3::Y, Vec3::Z].map(|a| a * radius);
        for sx in [-1.0, 1.0] {
            for sy in [-1.0, 1.0] {
                for sz in [-1.0, 1.0] {
                    let [a, b, c] = [at + axes[0] * sx, at + axes[1] * sy, at + axes[2] * sz];
                    // wound outwards in every octant
                    let tri = if sx * sy * sz > 0.0 { [a, b, c] } else { [a, c, b] };
                    self.dots.extend(tri.map(|p| p.to_array()));
                }
            }
        }
        self.dot_colors.extend([color; 24]);
    }

    /// Segments drawn.
    #[cfg(test)]
    pub fn line_count(&self) -> usize {
        self.lines.len() / 2
    }

    /// Dots drawn.
    #[cfg(test)]
    pub fn dot_count(&self) -> usize {
        self.dots.len() / 24
    }
}

/// Every edge of `edges` (the stretch constraints: the mesh's edges).
pub fn wireframe(out: &mut Overlay, x: &[Vec3], edges: &[[u32; 2]]) {
    for &[a, b] in edges {
        out.line(x[a as usize], x[b as usize], EDGE);
    }
}

/// The wing vertices of every bending quad (`[p1, p2, p3, p4]`, p1–p2 the shared edge), and every tether from
/// its vertex to its anchor (`start` indexes `anchor` by vertex, as in the solver's tether set).
pub fn constraints(out: &mut Overlay, x: &[Vec3], quads: &[[u32; 4]], start: &[u32], anchor: &[u32]) {
    for q in quads {
        out.line(x[q[2] as usize], x[q[3] as usize], BEND);
    }
    for (v, range) in start.windows(2).enumerate() {
        for &a in &anchor[range[0] as usize..range[1] as usize] {
            out.line(x[v], x[a as usize], TETHER);
        }
    }
}

/// ClothCollider contacts at their surface points with their normals, and self contacts at their vertex with the
/// normal of their triangle (on the side the vertex is kept), each normal `length` long.
pub fn contacts(
    out: &mut Overlay,
    x: &[Vec3],
    collider: &Contacts,
    own: &[SelfContact],
    triangles: &[[u32; 3]],
    length: f32,
) {
    for c in &collider.0 {
        out.dot(c.point, 0.15 * length, CONTACT);
        out.line(c.point, c.point + c.normal * length, CONTACT);
    }
    for c in own {
        let Some(&[a, b, t]) = triangles.get(c.triangle as usize) else { continue };
        let [a, b, t] = [a, b, t].map(|i| x[i as usize]);
        let normal = (b - a).cross(t - a).normalize_or_zero() * c.side.signum();
        let at = x[c.vertex as usize];
        out.dot(at, 0.15 * length, SELF_CONTACT);
        out.line(at, at + normal * length, SELF_CONTACT);
    }
}

/// A dot per particle, its radius `radius` times the cube root of its mass over the mean (volume ∝ mass);
/// pinned particles (inverse mass 0) and the grabbed one highlighted.
pub fn particles(out: &mut Overlay, x: &[Vec3], mass: &[f32], w: &[f32], grabbed: Option<u32>, radius: f32) {
    let mean = mass.iter().sum::<f32>() / mass.len().max(1) as f32;
    for (i, (&p, (&m, &w))) in x.iter().zip(mass.iter().zip(w)).enumerate() {
        let color = if grabbed == Some(i as u32) {
            GRABBED
        } else if w == 0.0 {
            PINNED
        } else {
            PARTICLE
        };
        let scale = if mean > 0.0 && m.is_finite() { (m / mean).cbrt().clamp(0.3, 3.0) } else { 1.0 };
        out.dot(p, radius * scale, color);
    }
}

/// The colour of class `k` of a graph colouring: hues spaced by the golden angle, so neighbours differ.
pub fn class_color(k: usize) -> Rgba {
    let hue = (k as f32 * 0.618_034).fract() * 6.0;
    let f = hue.fract();
    let [r, g, b] = match hue as u32 {
        0 => [1.0, f, 0.0],
        1 => [1.0 - f, 1.0, 0.0],
        2 => [0.0, 1.0, f],
        3 => [0.0, 1.0 - f, 1.0],
        4 => [f, 0.0, 1.0],
        _ => [1.0, 0.0, 1.0 - f],
    };
    [r, g, b, 1.0]
}

/// Every stretch edge in the colour of its class; `offsets[k]..offsets[k + 1]` are the edges of class k (the
/// parallel solver projects a class at once, §3.2's Gauss–Seidel order kept within each).
pub fn colours(out: &mut Overlay, x: &[Vec3], edges: &[[u32; 2]], offsets: &[u32]) {
    for (k, range) in offsets.windows(2).enumerate() {
        let color = class_color(k);
        for &[a, b] in &edges[range[0] as usize..range[1] as usize] {
            out.line(x[a as usize], x[b as usize], color);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dot_is_a_closed_octahedron() {
        let mut o = Overlay::default();
        o.dot(Vec3::ONE, 0.5, PARTICLE);
        assert_eq!((o.dots.len(), o.dot_count()), (24, 1));
        // every triangle faces away from the centre
        for t in o.dots.chunks(3) {
            let [a, b, c] = [t[0], t[1], t[2]].map(Vec3::from);
            let n = (b - a).cross(c - a);
            assert!(n.dot((a + b + c) / 3.0 - Vec3::ONE) > 0.0);
        }
    }

    #[test]
    fn classes_get_distinct_colours_and_every_edge_is_drawn() {
        let colors: Vec<Rgba> = (0..12).map(class_color).collect();
        for (i, a) in colors.iter().enumerate() {
            for b in &colors[i + 1..] {
                assert!(a.iter().zip(b).map(|(p, q)| (p - q).abs()).sum::<f32>() > 0.1, "{a:?} {b:?}");
            }
        }
        let x = [Vec3::ZERO, Vec3::X, Vec3::Y];
        let mut o = Overlay::default();
        colours(&mut o, &x, &[[0, 1], [1, 2], [0, 2]], &[0, 1, 3]);
        assert_eq!(o.line_count(), 3);
        assert_eq!(o.line_colors[0], class_color(0));
        assert_eq!(o.line_colors[2], class_color(1));
    }

    #[test]
    fn tethers_run_from_their_vertex_to_its_anchor() {
        let x = [Vec3::ZERO, Vec3::X, Vec3::Y];
        let mut o = Overlay::default();
        constraints(&mut o, &x, &[], &[0, 0, 1, 2], &[0, 0]);
        assert_eq!(o.lines, vec![[1.0, 0.0, 0.0], [0.0; 3], [0.0, 1.0, 0.0], [0.0; 3]]);
    }

    #[test]
    fn pinned_and_grabbed_particles_stand_out() {
        let x = [Vec3::ZERO, Vec3::X, Vec3::Y];
        let mut o = Overlay::default();
        particles(&mut o, &x, &[1.0, 1.0, 8.0], &[0.0, 1.0, 0.125], Some(1), 0.1);
        assert_eq!([o.dot_colors[0], o.dot_colors[24], o.dot_colors[48]], [PINNED, GRABBED, PARTICLE]);
        // eight times the mean mass of the others: twice the radius of a unit one (mean 10/3)
        let radius = |k: usize| Vec3::from(o.dots[24 * k]).distance(x[k]);
        assert!((radius(2) / radius(0) - 8f32.cbrt()).abs() < 1e-4);
    }
}
