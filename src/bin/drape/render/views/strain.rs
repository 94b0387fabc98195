//! The strain view's colours: each vertex coloured by the mean strain l/l₀ − 1 of its stretch edges (§3.3's
//! distance constraint C = |p₁ − p₂| − d measured against its rest length), white at rest, shading to blue for
//! compression and to red at the tear threshold (§4.5's split criterion), in [`STEPS`] visible steps a side.

/// Colour steps from white to either end of the scale (the legend draws the same bands).
pub const STEPS: i32 = 8;
/// Linear RGB of a fully compressed edge.
pub const BLUE: [f32; 3] = [0.02, 0.12, 1.0];
/// Linear RGB at the tear threshold.
pub const RED: [f32; 3] = [1.0, 0.02, 0.02];

/// The strain the scale's red end stands for: the tear threshold's (l/l₀ − 1), at least 1 %.
pub fn scale(tear_threshold: f32) -> f32 {
    (tear_threshold - 1.0).max(0.01)
}

/// The band of strain `s` on a scale whose ends are ±`scale`: −STEPS (blue) … 0 (white) … STEPS (red).
pub fn band(s: f32, scale: f32) -> i32 {
    let b = (s / scale * STEPS as f32).round();
    if b.is_nan() { 0 } else { b.clamp(-(STEPS as f32), STEPS as f32) as i32 }
}

/// The linear RGBA colour of band `b`.
pub fn band_color(b: i32) -> [f32; 4] {
    let t = (b.abs().min(STEPS)) as f32 / STEPS as f32;
    let end = if b < 0 { BLUE } else { RED };
    let [r, g, bl] = [0, 1, 2].map(|k| 1.0 + (end[k] - 1.0) * t);
    [r, g, bl, 1.0]
}

/// The band a colour made by [`band_color`] stands for (what a reader of the picture sees).
#[cfg(test)]
pub fn band_of_color(c: [f32; 4]) -> i32 {
    // the channel that fades the most tells the distance from white; red stays 1 towards red, blue towards blue
    let towards_red = c[0] >= c[2];
    let (fade, end) = if towards_red { (1.0 - c[2], 1.0 - RED[2]) } else { (1.0 - c[0], 1.0 - BLUE[0]) };
    let b = (fade / end * STEPS as f32).round() as i32;
    if towards_red { b } else { -b }
}

/// The mean strain of each vertex's edges into `strain` (vertices without edges get 0); `count` is scratch.
pub fn vertex_strains(
    x: &[bevy::math::Vec3],
    edges: &[[u32; 2]],
    rest: &[f32],
    strain: &mut Vec<f32>,
    count: &mut Vec<u32>,
) {
    strain.clear();
    strain.resize(x.len(), 0.0);
    count.clear();
    count.resize(x.len(), 0);
    for (&[a, b], &l0) in edges.iter().zip(rest) {
        let (a, b) = (a as usize, b as usize);
        let s = if l0 > 0.0 { x[a].distance(x[b]) / l0 - 1.0 } else { 0.0 };
        for v in [a, b] {
            strain[v] += s;
            count[v] += 1;
        }
    }
    for (s, &n) in strain.iter_mut().zip(count.iter()) {
        *s /= n.max(1) as f32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bands_round_trip_through_their_colours() {
        for b in -STEPS..=STEPS {
            assert_eq!(band_of_color(band_color(b)), b);
        }
        assert_eq!(band_color(0), [1.0; 4]);
        assert_eq!(band(f32::NAN, 0.3), 0);
        assert_eq!(band(5.0, 0.3), STEPS);
        assert_eq!(band(-0.3, 0.3), -STEPS);
    }

    #[test]
    fn an_edge_stretched_by_a_tenth_has_strain_a_tenth() {
        use bevy::math::Vec3;
        let x = [Vec3::ZERO, Vec3::X * 1.1, Vec3::new(1.1, 0.5, 0.0)];
        let (mut s, mut n) = (Vec::new(), Vec::new());
        vertex_strains(&x, &[[0, 1], [1, 2]], &[1.0, 0.5], &mut s, &mut n);
        assert!((s[0] - 0.1).abs() < 1e-6 && (s[1] - 0.05).abs() < 1e-6 && s[2].abs() < 1e-6, "{s:?}");
    }
}
