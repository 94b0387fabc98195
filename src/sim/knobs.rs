//! The knob tables: every tunable number of [`SimParams`](super::SimParams) and [`ClothMaterial`](super::cloth::ClothMaterial) written once, with its name,
//! unit, range, default, paper section and meaning.
//!
//! They drive the clamping ([`SimParams::sanitized`](super::SimParams::sanitized),
//! [`ClothMaterial::sanitized`](super::cloth::ClothMaterial::sanitized)),
//! the preset checks (`validate.rs`), the panel's sliders and tooltips, and the table of `docs/presets.md`
//! (a test below compares them).

use std::fmt::Display;
use std::ops::RangeInclusive;

use bevy::math::Vec3;

/// One scalar knob. A count (iterations, substeps) holds whole numbers in the `f32` fields and is read with
/// [`Knob::clamp_count`] and [`Knob::default_count`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Knob {
    /// The field's name in the struct and in preset files.
    pub name: &'static str,
    /// The panel's label for it.
    pub label: &'static str,
    /// Its unit; empty when it has none.
    pub unit: &'static str,
    /// Smallest value the simulation accepts.
    pub min: f32,
    /// Largest value the simulation accepts.
    pub max: f32,
    /// Value when none is given, and the fallback for a non-finite one.
    pub default: f32,
    /// Where the paper introduces it.
    pub section: &'static str,
    /// What it means, in one sentence.
    pub doc: &'static str,
}

impl Knob {
    /// `min..=max`, for sliders and range checks.
    pub fn range(&self) -> RangeInclusive<f32> {
        self.min..=self.max
    }

    /// `value` forced into the range; a non-finite value becomes the default.
    pub fn clamp(&self, value: f32) -> f32 {
        if value.is_finite() { value } else { self.default }.clamp(self.min, self.max)
    }

    /// A count forced into the range.
    pub fn clamp_count(&self, value: u32) -> u32 {
        value.clamp(self.min as u32, self.max as u32)
    }

    /// The default of a count.
    pub fn default_count(&self) -> u32 {
        self.default as u32
    }

    /// The range as `docs/presets.md` writes it, `min–max`.
    pub fn range_text(&self) -> String {
        format!("{}–{}", self.min, self.max)
    }

    /// `value` followed by the unit, if there is one.
    fn with_unit(&self, value: impl Display) -> String {
        if self.unit.is_empty() { value.to_string() } else { format!("{value} {}", self.unit) }
    }

    /// The error for a value out of range, naming the field and its range: `iterations: 300 is out of range 1–200`.
    pub fn out_of_range(&self, value: impl Display) -> String {
        format!("{}: {value} is out of range {}", self.name, self.with_unit(self.range_text()))
    }

    /// The panel's slider label: the label and the unit.
    pub fn label_text(&self) -> String {
        if self.unit.is_empty() { self.label.to_string() } else { format!("{} ({})", self.label, self.unit) }
    }

    /// The panel's tooltip: meaning, range with unit, default, paper section.
    pub fn tooltip(&self) -> String {
        let (range, default) = (self.with_unit(self.range_text()), self.with_unit(self.default));
        format!("{}\n{range}, default {default}. {}.", self.doc, self.section)
    }
}

/// A vector knob (gravity, wind): any direction, its length at most `max_length`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VectorKnob {
    /// The field's name in the struct and in preset files.
    pub name: &'static str,
    /// Its unit.
    pub unit: &'static str,
    /// Longest vector the simulation accepts; each component's editor also stays within ±this.
    pub max_length: f32,
    /// Value when none is given, and the fallback for a non-finite one.
    pub default: Vec3,
    /// Where the paper introduces it.
    pub section: &'static str,
    /// What it means, in one sentence.
    pub doc: &'static str,
}

impl VectorKnob {
    /// `value` shortened to `max_length`; a non-finite value becomes the default.
    pub fn clamp(&self, value: Vec3) -> Vec3 {
        if value.is_finite() { value } else { self.default }.clamp_length_max(self.max_length)
    }

    /// The range as `docs/presets.md` writes it.
    pub fn range_text(&self) -> String {
        format!("length ≤ {}", self.max_length)
    }

    /// The default as a preset file writes it, `(x, y, z)`.
    pub fn default_text(&self) -> String {
        let d = self.default;
        format!("({:?}, {:?}, {:?})", d.x, d.y, d.z)
    }

    /// The panel's tooltip: meaning, unit, range, default, paper section.
    pub fn tooltip(&self) -> String {
        let (range, default) = (self.range_text(), self.default_text());
        format!("{}, x y z in {}\n{range}, default {default}. {}.", self.doc, self.unit, self.section)
    }
}

/// `solverIterations`.
pub const ITERATIONS: Knob = Knob {
    name: "iterations",
    label: "iterations",
    unit: "",
    min: 1.0,
    max: 200.0,
    default: 4.0,
    section: "§3.1 line (9), §3.2",
    doc: "Gauss–Seidel sweeps over all constraints per substep: more is stiffer and more accurate, at linear cost.",
};

/// Substeps per fixed step.
pub const SUBSTEPS: Knob = Knob {
    name: "substeps",
    label: "substeps",
    unit: "",
    min: 1.0,
    max: 64.0,
    default: 8.0,
    section: "§3.1 lines (5)–(16)",
    doc: "Passes of the whole loop per fixed step, each with Δt = 1/(rate · substeps): smaller steps converge \
          faster than more iterations for the same cost.",
};

/// The fixed-step rate.
pub const RATE_HZ: Knob = Knob {
    name: "rate_hz",
    label: "fixed rate",
    unit: "Hz",
    min: 10.0,
    max: 240.0,
    default: 60.0,
    section: "§3.1 line (4), §3.3",
    doc: "Fixed-step frequency of the simulation, Δt = 1/rate; PBD stiffness depends on Δt.",
};

/// Gravity g.
pub const GRAVITY: VectorKnob = VectorKnob {
    name: "gravity",
    unit: "m/s²",
    max_length: 100.0,
    default: Vec3::new(0.0, -9.81, 0.0),
    section: "§3.1 line (5)",
    doc: "Gravitational acceleration g",
};

/// Mean wind velocity.
pub const WIND: VectorKnob = VectorKnob {
    name: "wind",
    unit: "m/s",
    max_length: 100.0,
    default: Vec3::ZERO,
    section: "§3.1 line (5)",
    doc: "Mean wind velocity, pushing each triangle along its normal through the air drag",
};

/// Gust amplitude.
pub const WIND_GUST: Knob = Knob {
    name: "wind_gust",
    label: "gusts",
    unit: "m/s",
    min: 0.0,
    max: 20.0,
    default: 0.0,
    section: "§3.1 line (5)",
    doc: "Amplitude (standard deviation per axis) of random gusts added to the wind; they last about 1.5 s.",
};

/// Aerodynamic coefficient.
pub const AIR_DRAG: Knob = Knob {
    name: "air_drag",
    label: "air drag",
    unit: "kg/(m²·s)",
    min: 0.0,
    max: 5.0,
    default: 0.1,
    section: "§3.1 line (5)",
    doc: "Aerodynamic coefficient c: force per triangle c · area · ((v_wind − v)·n) n, giving still air its \
          resistance and wind its push.",
};

/// k_damping.
pub const DAMPING: Knob = Knob {
    name: "damping",
    label: "k_damping",
    unit: "",
    min: 0.0,
    max: 1.0,
    default: 0.02,
    section: "§3.5",
    doc: "Damping per fixed step of the velocities relative to the cloth's rigid motion (v_cm + ω × r), never \
          of the rigid motion itself; 1 makes the cloth move rigidly.",
};

/// Coulomb friction μ.
pub const FRICTION: Knob = Knob {
    name: "friction",
    label: "friction μ",
    unit: "",
    min: 0.0,
    max: 2.0,
    default: 0.4,
    section: "§3.4, line (16)",
    doc: "Coulomb friction against colliders: the tangential speed drops by μ times the normal speed the \
          contact removed.",
};

/// Restitution e.
pub const RESTITUTION: Knob = Knob {
    name: "restitution",
    label: "restitution e",
    unit: "",
    min: 0.0,
    max: 1.0,
    default: 0.0,
    section: "§3.4, line (16)",
    doc: "Fraction of the approach speed reflected along the contact normal.",
};

/// Tearing threshold.
pub const TEAR_THRESHOLD: Knob = Knob {
    name: "tear_threshold",
    label: "threshold l/l0",
    unit: "",
    min: 1.05,
    max: 10.0,
    default: 2.0,
    section: "§5",
    doc: "Stretch ratio l/l0 at which an edge tears, splitting one of its vertices.",
};

/// k_pressure.
pub const PRESSURE: Knob = Knob {
    name: "pressure",
    label: "pressure k_pressure",
    unit: "",
    min: 0.1,
    max: 5.0,
    default: 1.0,
    section: "§4.4, eq. (15)",
    doc: "A balloon's volume is held at k_pressure times its rest volume V0; below 1 it is a slack bag whose air only resists being squeezed.",
};

/// Tether slack.
pub const TETHER_SLACK: Knob = Knob {
    name: "tether_slack",
    label: "tether slack",
    unit: "",
    min: 0.0,
    max: 1.0,
    default: 0.0,
    section: "Kim et al. 2012",
    doc: "How much further than its rest distance a tether lets a vertex go, as a fraction of that distance \
          (0: never further). Within the slack the cloth stretches as the constraints let it.",
};

/// k_stretch.
pub const STRETCH_STIFFNESS: Knob = Knob {
    name: "stretch_stiffness",
    label: "stretch stiffness",
    unit: "",
    min: 0.0,
    max: 1.0,
    default: 1.0,
    section: "§4.1, §3.3",
    doc: "k_stretch of the edge constraints C = |p1 − p2| − l0, applied as k' = 1 − (1 − k)^(1/iterations) so \
          it does not depend on the iteration count.",
};

/// k_bend.
pub const BEND_STIFFNESS: Knob = Knob {
    name: "bend_stiffness",
    label: "bending stiffness",
    unit: "",
    min: 0.0,
    max: 1.0,
    default: 0.1,
    section: "§4.1, Appendix A",
    doc: "k_bend of the bending constraints: 0 is silk, 1 is card.",
};

/// XPBD's stretch compliance α.
pub const STRETCH_COMPLIANCE: Knob = Knob {
    name: "stretch_compliance",
    label: "stretch compliance",
    unit: "m/N",
    min: 0.0,
    max: 1.0,
    default: 0.0,
    section: "§4.1; XPBD eq. (18)",
    doc: "With the XPBD solver: the inverse stiffness α of each edge, the stretch one newton of tension gives it \
          (0 is inextensible). Iteration- and substep-independent once the solver converges; stiff edges (about \
          10⁻⁴ m/N and below on a sheet of ten rows) need more passes for it (docs/fidelity.md).",
};

/// XPBD's bending compliance α.
pub const BEND_COMPLIANCE: Knob = Knob {
    name: "bend_compliance",
    label: "bending compliance",
    unit: "1/(N·m)",
    min: 0.0,
    max: 1_000_000.0,
    default: 100.0,
    section: "§4.1, Appendix A; XPBD eq. (18)",
    doc: "With the XPBD solver: the inverse stiffness α of each hinge, the angle in radians one newton-metre of \
          torque folds it (with the distance bending model, metres per newton across the hinge). Apparel fabrics \
          (a bending rigidity of 1–100 µN·m) lie between 10⁴ and 10⁶ (docs/fidelity.md).",
};

/// XPBD's volume compliance α of a balloon.
pub const VOLUME_COMPLIANCE: Knob = Knob {
    name: "volume_compliance",
    label: "volume compliance",
    unit: "m³/Pa",
    min: 0.0,
    max: 1.0,
    default: 0.0,
    section: "§4.4 eq. (14); XPBD eq. (18)",
    doc: "With the XPBD solver and a balloon: the inverse stiffness α of its volume constraint, the volume one \
          pascal of pressure difference takes from it, on top of the air's own V/p_atm (0: the air alone).",
};

/// Areal density ρ.
pub const DENSITY: Knob = Knob {
    name: "density",
    label: "density",
    unit: "kg/m²",
    min: 0.01,
    max: 10.0,
    default: 0.2,
    section: "§4.1",
    doc: "Areal density ρ: each vertex gets a third of the mass of its triangles.",
};

/// Thickness h.
pub const THICKNESS: Knob = Knob {
    name: "thickness",
    label: "thickness",
    unit: "m",
    min: 0.001,
    max: 0.1,
    default: 0.01,
    section: "§3.4, §4.3 eq. (12)",
    doc: "Cloth thickness h: the gap kept to colliders and, with self-collision, between layers (there at most \
          half the spacing of the cloth's vertices, each vertex's shortest edge).",
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::SimParams;
    use crate::sim::cloth::ClothMaterial;

    /// The rows of the markdown tables with five columns (field, meaning, unit, range, default), by field name.
    fn docs_rows() -> Vec<(String, [String; 3])> {
        include_str!("../../docs/presets.md")
            .lines()
            .filter_map(|line| {
                let cells: Vec<&str> = line.strip_prefix('|')?.strip_suffix('|')?.split('|').map(str::trim).collect();
                let name = cells.first()?.strip_prefix('`')?.strip_suffix('`')?;
                let [_, _, unit, range, default] = cells[..] else { return None };
                Some((name.to_string(), [unit, range, default.trim_matches('`')].map(String::from)))
            })
            .collect()
    }

    #[test]
    fn docs_presets_table_matches_the_knob_tables() {
        let rows = docs_rows();
        let scalars = SimParams::KNOBS.iter().chain(ClothMaterial::KNOBS);
        let mut expected: Vec<(String, [String; 3])> = scalars
            .map(|k| (k.name.to_string(), [k.unit.to_string(), k.range_text(), k.default.to_string()]))
            .collect();
        expected.extend(
            SimParams::VECTOR_KNOBS
                .iter()
                .map(|k| (k.name.to_string(), [k.unit.into(), k.range_text(), k.default_text()])),
        );
        for (name, cells) in &expected {
            let found: Vec<_> = rows.iter().filter(|(n, _)| n == name).collect();
            assert_eq!(found.len(), 1, "docs/presets.md: `{name}` needs exactly one row, has {}", found.len());
            assert_eq!(
                &found[0].1, cells,
                "docs/presets.md: row `{name}` (unit, range, default) differs from the code"
            );
        }
        for (name, [_, range, _]) in &rows {
            let known = expected.iter().any(|(n, _)| n == name);
            assert!(known || range.is_empty(), "docs/presets.md: `{name}` has a range but no knob in the code");
        }
    }

    #[test]
    fn material_defaults_match_the_table() {
        let d = ClothMaterial::default();
        let fields = [
            d.stretch_stiffness,
            d.bend_stiffness,
            d.density,
            d.thickness,
            d.stretch_compliance,
            d.bend_compliance,
            d.volume_compliance,
        ];
        for (value, knob) in fields.iter().zip(ClothMaterial::KNOBS) {
            assert_eq!(*value, knob.default, "{}", knob.name);
        }
    }

    #[test]
    fn every_knob_is_well_formed() {
        for k in SimParams::KNOBS.iter().chain(ClothMaterial::KNOBS) {
            assert!(k.min < k.max && k.range().contains(&k.default), "{}", k.name);
            assert!(!k.doc.is_empty() && !k.section.is_empty() && !k.label.is_empty(), "{}", k.name);
        }
        for k in [ITERATIONS, SUBSTEPS] {
            assert!([k.min, k.max, k.default].iter().all(|v| v.fract() == 0.0), "{} is a count", k.name);
        }
    }

    #[test]
    fn errors_and_tooltips_name_the_field_range_and_unit() {
        assert_eq!(ITERATIONS.out_of_range(300), "iterations: 300 is out of range 1–200");
        assert_eq!(DENSITY.out_of_range(-1.0), "density: -1 is out of range 0.01–10 kg/m²");
        let tip = RATE_HZ.tooltip();
        assert!(tip.contains("10–240 Hz") && tip.contains("default 60 Hz") && tip.contains("§3.3"), "{tip}");
        assert_eq!(RATE_HZ.label_text(), "fixed rate (Hz)");
        assert_eq!(GRAVITY.default_text(), "(0.0, -9.81, 0.0)");
    }
}
