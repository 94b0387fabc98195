//! The heavy elastica: the exact shape of a cantilevered strip under its own weight, the reference of the
//! cantilever bending test (Peirce 1930, ASTM D1388). With arc length s from the clamp, θ(s) the slope below the
//! horizontal, flexural rigidity B (N·m per metre of width) and weight w (N/m²), the moment balance is
//! B θ'' = −w (L − s) cos θ with θ(0) = 0 and θ'(L) = 0. In σ = s/L it depends on (L/c)³ alone, c = (B/w)^⅓ the
//! bending length: the tip's chord angle is a function of L/c, solved here by shooting with RK4. At 41.5° the
//! exact ratio is 2.000, the rule c = L/2 of ASTM D1388; Peirce's closed form c = L (cos(θ/2) / (8 tan θ))^⅓,
//! which the rule rounds, gives 1.9 % more there.

/// Steps of the integration over the strip.
const STEPS: usize = 2000;

/// The chord angle (radians below the horizontal) from the clamp to the tip of a strip of length `ratio` = L/c.
pub fn chord_angle(ratio: f64) -> f64 {
    let (x, y) = shape(ratio).last().copied().unwrap_or((1.0, 0.0));
    y.atan2(x)
}

/// The strip's centre line from the clamp to the tip, in units of its length L (x along the table, y downwards),
/// for `ratio` = L/c: `STEPS` + 1 points.
pub fn shape(ratio: f64) -> Vec<(f64, f64)> {
    let load = ratio.powi(3);
    // θ'(1) rises with the slope at the clamp: bisect for the slope that leaves the free end without moment
    let (mut lo, mut hi) = (0.0, 0.5 * load);
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if shoot(load, mid, &mut |_| {}) < 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let mut line = vec![(0.0, 0.0)];
    shoot(load, 0.5 * (lo + hi), &mut |point| line.push(point));
    line
}

/// L/c at which the tip's chord angle is `angle` radians (0 to about 1.2).
pub fn ratio_at(angle: f64) -> f64 {
    let (mut lo, mut hi) = (0.0, 4.0);
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if chord_angle(mid) < angle {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// Integrates θ'' = −`load` (1 − σ) cos θ from θ(0) = 0, θ'(0) = `slope` over σ ∈ [0, 1] (RK4), giving `visit`
/// each step's place (x, y) in units of L, y downwards; returns θ'(1).
fn shoot(load: f64, slope: f64, visit: &mut dyn FnMut((f64, f64))) -> f64 {
    let h = 1.0 / STEPS as f64;
    let f =
        |s: f64, [theta, dtheta, _, _]: [f64; 4]| [dtheta, -load * (1.0 - s) * theta.cos(), theta.cos(), theta.sin()];
    let mut state = [0.0, slope, 0.0, 0.0];
    for k in 0..STEPS {
        let s = k as f64 * h;
        let add = |a: [f64; 4], b: [f64; 4], t: f64| std::array::from_fn(|i| a[i] + t * b[i]);
        let k1 = f(s, state);
        let k2 = f(s + 0.5 * h, add(state, k1, 0.5 * h));
        let k3 = f(s + 0.5 * h, add(state, k2, 0.5 * h));
        let k4 = f(s + h, add(state, k3, h));
        state = std::array::from_fn(|i| state[i] + h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]));
        visit((state[2], state[3]));
    }
    state[1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_stiff_strip_droops_as_the_linear_cantilever() {
        // small deflection: y_tip = w L⁴ / (8B), slope at the tip w L³ / (6B); the chord angle is y/L = (L/c)³/8
        let ratio = 0.3f64;
        assert!((chord_angle(ratio) - ratio.powi(3) / 8.0).abs() < 1e-3 * ratio.powi(3) / 8.0);
    }

    #[test]
    fn the_tip_line_reaches_41_5_degrees_at_twice_the_bending_length() {
        let angle = 41.5f64.to_radians();
        let exact = ratio_at(angle);
        assert!((exact - 2.0).abs() < 1e-3, "L/c = {exact}");
        assert!((chord_angle(exact) - angle).abs() < 1e-6);
        let peirce = 1.0 / ((angle / 2.0).cos() / (8.0 * angle.tan())).cbrt();
        assert!((peirce / exact - 0.981).abs() < 1e-3, "Peirce's L/c = {peirce}");
    }
}
