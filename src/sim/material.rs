//! A cloth's material changed on a live cloth: the masses follow the density (§4.1).

use super::cloth::{ClothMaterial, Particles};
use super::constraints::attach::Attachment;

/// Gives a live cloth the material `new` (sanitized). Masses are proportional to the density (§4.1), so a density
/// change scales every mass by the ratio and gives each free particle its new inverse mass; a particle with
/// w = 0 (attached or held) keeps it.
pub fn set_material(
    particles: &mut Particles,
    material: &mut ClothMaterial,
    attachments: &[Attachment],
    new: ClothMaterial,
) {
    let new = new.sanitized();
    let scale = new.density / material.density;
    if scale.is_finite() && scale != 1.0 {
        for i in 0..particles.len() {
            particles.mass[i] *= scale;
            if particles.w[i] > 0.0 {
                particles.restore_inverse_mass(i, attachments);
            }
        }
    }
    *material = new;
}

/// `current` with the fields a slider changed from `before` to `after` and no others: editing every cloth at once
/// sets the moved value on each and keeps what differs between them (the six materials of Fig. 3).
pub fn edit_material(current: ClothMaterial, before: ClothMaterial, after: ClothMaterial) -> ClothMaterial {
    let pick = |now: f32, was: f32, new: f32| if new.to_bits() == was.to_bits() { now } else { new };
    ClothMaterial {
        stretch_stiffness: pick(current.stretch_stiffness, before.stretch_stiffness, after.stretch_stiffness),
        bend_stiffness: pick(current.bend_stiffness, before.bend_stiffness, after.bend_stiffness),
        density: pick(current.density, before.density, after.density),
        thickness: pick(current.thickness, before.thickness, after.thickness),
        stretch_compliance: pick(current.stretch_compliance, before.stretch_compliance, after.stretch_compliance),
        bend_compliance: pick(current.bend_compliance, before.bend_compliance, after.bend_compliance),
        volume_compliance: pick(current.volume_compliance, before.volume_compliance, after.volume_compliance),
    }
}

#[cfg(test)]
mod tests {
    use bevy::math::Vec3;

    use super::*;
    use crate::sim::knobs::{BEND_STIFFNESS, DENSITY, THICKNESS};

    #[test]
    fn sanitized_material_clamps_into_the_knobs_and_replaces_non_finite_values() {
        let wild = ClothMaterial {
            stretch_stiffness: 3.0,
            bend_stiffness: f32::NAN,
            density: 0.0,
            thickness: 1.0,
            ..Default::default()
        };
        let m = wild.sanitized();
        assert_eq!((m.stretch_stiffness, m.bend_stiffness), (1.0, BEND_STIFFNESS.default));
        assert_eq!((m.density, m.thickness), (DENSITY.min, THICKNESS.max));
        assert_eq!(ClothMaterial::default().sanitized(), ClothMaterial::default());
    }

    #[test]
    fn an_edit_sets_only_the_moved_field() {
        let shown = ClothMaterial { stretch_stiffness: 1.0, bend_stiffness: 0.5, ..Default::default() };
        let other = ClothMaterial { density: 0.4, thickness: 0.02, stretch_compliance: 0.3, ..Default::default() };
        let moved = ClothMaterial { bend_stiffness: 0.7, ..shown };
        let edited = edit_material(other, shown, moved);
        assert_eq!(edited, ClothMaterial { bend_stiffness: 0.7, ..other });
        let moved = ClothMaterial { bend_compliance: 5.0, ..shown };
        assert_eq!(edit_material(other, shown, moved), ClothMaterial { bend_compliance: 5.0, ..other });
        assert_eq!(edit_material(other, shown, shown), other, "no change, no edit");
    }

    #[test]
    fn a_density_change_scales_the_masses_and_keeps_held_particles_held() {
        let positions = vec![Vec3::ZERO, Vec3::X, Vec3::Z, Vec3::ONE];
        let mut particles = Particles::new(positions, vec![0.1, 0.2, 0.3, 0.4]);
        let attachments = [Attachment::pin(0, Vec3::ZERO)];
        particles.w[0] = 0.0;
        // particle 2 is held by the pointer: w = 0 without an attachment
        particles.w[2] = 0.0;
        let mut material = ClothMaterial::default();
        let before: f32 = particles.mass.iter().sum();
        let denser = ClothMaterial { density: 2.5 * material.density, ..material };
        set_material(&mut particles, &mut material, &attachments, denser);
        assert_eq!(material, denser);
        let after: f32 = particles.mass.iter().sum();
        assert!((after / before - 2.5).abs() < 1e-6, "total mass {before} → {after}");
        assert_eq!((particles.w[0], particles.w[2]), (0.0, 0.0), "held particles stay held");
        for i in [1, 3] {
            assert_eq!(particles.w[i], 1.0 / particles.mass[i], "particle {i}");
        }
        // the same density again changes nothing
        let masses = particles.mass.clone();
        set_material(&mut particles, &mut material, &attachments, denser);
        assert_eq!(particles.mass, masses);
    }
}
