//! Cloth that reads as cloth: a fabric texture generated at start-up (no downloaded asset) and mapped through
//! the mesh's texture coordinates, so stretch and shear show as distorted threads or squares; each side of the
//! cloth drawn with its own material, the back in its own colour and lit from its own side.
//!
//! The texture is a grey level the material's colour multiplies, with every mip level computed here (Bevy
//! makes none), so a finely repeated weave fades to its mean brightness at a distance instead of shimmering.

use bevy::asset::RenderAssetUsages;
use bevy::image::{ImageAddressMode, ImageFilterMode, ImageSampler, ImageSamplerDescriptor};
use bevy::math::Affine2;
use bevy::prelude::*;
use bevy::render::render_resource::{Extent3d, Face, TextureDimension, TextureFormat};

use drape::scene::desc::{Fabric, Pattern};

/// Side of the generated texture, texels (a power of two: every mip level halves it).
pub const TEXTURE_SIDE: usize = 256;
/// Threads across the texture in each direction (woven), or squares (checker, twice as large).
const THREADS: usize = 8;
/// Brightness of the darker squares of the checker and of the gaps between threads.
const SHADOW: f32 = 0.55;

/// Brightness (0–1) of texel (`x`, `y`) of `pattern`; the texture tiles seamlessly.
pub fn brightness(pattern: Pattern, x: usize, y: usize) -> f32 {
    let cell = TEXTURE_SIDE / THREADS;
    match pattern {
        Pattern::Plain => 1.0,
        Pattern::Checker => {
            let square = 2 * cell;
            if (x / square + y / square).is_multiple_of(2) { 1.0 } else { SHADOW + 0.2 }
        }
        Pattern::Woven => {
            // plain weave: in cell (i, j) the warp (along y) lies on top when i + j is even, else the weft
            let (i, j) = (x / cell, y / cell);
            let (fx, fy) = ((x % cell) as f32 + 0.5, (y % cell) as f32 + 0.5);
            let (fx, fy) = (fx / cell as f32, fy / cell as f32);
            let (across, along, tone) = if (i + j).is_multiple_of(2) { (fx, fy, 1.0) } else { (fy, fx, 0.92) };
            let off_centre = (across - 0.5).abs() * 2.0;
            if off_centre > 0.84 {
                return SHADOW;
            }
            let round = (1.0 - off_centre * off_centre).sqrt();
            let dive = 1.0 - 0.3 * (2.0 * along - 1.0).powi(4);
            tone * (0.6 + 0.4 * round * dive)
        }
    }
}

/// The texture's grey levels as sRGB RGBA8 texels, every mip level from `TEXTURE_SIDE` down to 1 one after the
/// other (each level the 2×2 mean of the one before, averaged in linear light); and the number of levels.
pub fn texture_levels(pattern: Pattern) -> (Vec<u8>, u32) {
    let mut level: Vec<f32> = (0..TEXTURE_SIDE * TEXTURE_SIDE)
        .map(|k| brightness(pattern, k % TEXTURE_SIDE, k / TEXTURE_SIDE))
        .map(|b| Color::srgb(b, b, b).to_linear().red)
        .collect();
    let (mut side, mut count, mut texels) = (TEXTURE_SIDE, 1, Vec::new());
    loop {
        for &linear in &level {
            let grey = (Color::linear_rgb(linear, linear, linear).to_srgba().red * 255.0).round() as u8;
            texels.extend_from_slice(&[grey, grey, grey, 255]);
        }
        if side == 1 {
            return (texels, count);
        }
        let half = side / 2;
        level = (0..half * half)
            .map(|k| {
                let (x, y) = (2 * (k % half), 2 * (k / half));
                (level[y * side + x]
                    + level[y * side + x + 1]
                    + level[(y + 1) * side + x]
                    + level[(y + 1) * side + x + 1])
                    / 4.0
            })
            .collect();
        (side, count) = (half, count + 1);
    }
}

/// A repeating, mipmapped, anisotropically filtered image of `pattern`.
pub fn fabric_image(pattern: Pattern) -> Image {
    let (texels, levels) = texture_levels(pattern);
    let side = TEXTURE_SIDE as u32;
    let size = Extent3d { width: side, height: side, depth_or_array_layers: 1 };
    let mut image =
        Image::new_uninit(size, TextureDimension::D2, TextureFormat::Rgba8UnormSrgb, RenderAssetUsages::RENDER_WORLD);
    image.data = Some(texels);
    image.texture_descriptor.mip_level_count = levels;
    image.sampler = ImageSampler::Descriptor(ImageSamplerDescriptor {
        address_mode_u: ImageAddressMode::Repeat,
        address_mode_v: ImageAddressMode::Repeat,
        mag_filter: ImageFilterMode::Linear,
        min_filter: ImageFilterMode::Linear,
        mipmap_filter: ImageFilterMode::Linear,
        anisotropy_clamp: 16,
        ..default()
    });
    image
}

/// The two materials of a cloth: `front` culls back faces, `back` culls front faces and lights them from their
/// own side (`double_sided` flips their normal), each with its colour over the fabric's texture.
pub fn cloth_materials(
    color: [f32; 3],
    fabric: Fabric,
    texture: Option<Handle<Image>>,
) -> (StandardMaterial, StandardMaterial) {
    let [r, g, b] = color;
    let [br, bg, bb] = fabric.back(color);
    let side = |color: Color, cull: Face| StandardMaterial {
        base_color: color,
        base_color_texture: texture.clone(),
        uv_transform: Affine2::from_scale(Vec2::splat(fabric.repeats)),
        perceptual_roughness: 0.85,
        reflectance: 0.2,
        double_sided: cull == Face::Front,
        cull_mode: Some(cull),
        ..default()
    };
    (side(Color::srgb(r, g, b), Face::Back), side(Color::srgb(br, bg, bb), Face::Front))
}

/// One texture per pattern, made the first time a cloth asks for it.
#[derive(Resource, Default)]
pub struct FabricTextures([Option<Handle<Image>>; 3]);

impl FabricTextures {
    /// The texture of `pattern` (none for a plain cloth).
    pub fn get(&mut self, pattern: Pattern, images: &mut Assets<Image>) -> Option<Handle<Image>> {
        let slot = match pattern {
            Pattern::Plain => return None,
            Pattern::Woven => 0,
            Pattern::Checker => 1,
        };
        Some(self.0[slot].get_or_insert_with(|| images.add(fabric_image(pattern))).clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_level_is_there_and_halves() {
        let (texels, levels) = texture_levels(Pattern::Woven);
        assert_eq!(levels, TEXTURE_SIDE.trailing_zeros() + 1);
        let expected: usize = (0..levels).map(|l| (TEXTURE_SIDE >> l).pow(2) * 4).sum();
        assert_eq!(texels.len(), expected);
    }

    #[test]
    fn the_texture_tiles_and_shows_its_pattern() {
        for pattern in [Pattern::Woven, Pattern::Checker] {
            // a whole number of periods (two threads, two squares) fits the texture, so it tiles seamlessly
            let period = TEXTURE_SIDE / THREADS * if pattern == Pattern::Woven { 2 } else { 4 };
            for (x, y) in (0..TEXTURE_SIDE).flat_map(|x| (0..TEXTURE_SIDE).map(move |y| (x, y))) {
                let (right, down) = ((x + period) % TEXTURE_SIDE, (y + period) % TEXTURE_SIDE);
                assert_eq!(brightness(pattern, x, y), brightness(pattern, right, y), "{pattern:?} at {x}, {y}");
                assert_eq!(brightness(pattern, x, y), brightness(pattern, x, down), "{pattern:?} at {x}, {y}");
            }
            let all: Vec<f32> = (0..TEXTURE_SIDE * TEXTURE_SIDE)
                .map(|k| brightness(pattern, k % TEXTURE_SIDE, k / TEXTURE_SIDE))
                .collect();
            let (lo, hi) = all.iter().fold((1.0f32, 0.0f32), |(lo, hi), &b| (lo.min(b), hi.max(b)));
            assert!(hi - lo >= 0.25 && lo >= SHADOW - 1e-6 && hi <= 1.0, "{pattern:?}: {lo}–{hi}");
        }
        assert_eq!(brightness(Pattern::Plain, 17, 99), 1.0);
    }

    #[test]
    fn the_smallest_level_is_the_mean_brightness() {
        let (texels, _) = texture_levels(Pattern::Checker);
        let last = texels[texels.len() - 4] as f32 / 255.0;
        let mean_linear =
            (Color::srgb(1.0, 1.0, 1.0).to_linear().red + Color::srgb(SHADOW + 0.2, 0.0, 0.0).to_linear().red) / 2.0;
        let expected = Color::linear_rgb(mean_linear, 0.0, 0.0).to_srgba().red;
        assert!((last - expected).abs() < 2.0 / 255.0, "{last} vs {expected}");
    }
}
