//! Writing cloths as Wavefront OBJ: `o` per cloth, then its `v`, `vt`, `vn` and `f a/a/a` lines (one texture
//! coordinate and one normal per vertex, so a corner's three indices are equal). Numbers are written in Rust's
//! shortest round-trip form, so reading the file back gives the very same `f32` positions.

use std::io::{self, Write};
use std::path::Path;

use super::ClothSurface;

/// Writes `cloths` as one OBJ text.
pub(crate) fn write_obj(out: &mut impl Write, cloths: &[ClothSurface]) -> io::Result<()> {
    writeln!(out, "# drape: {} cloth(s), positions in metres", cloths.len())?;
    let mut first = 1usize;
    for c in cloths {
        // an OBJ name ends at whitespace
        let name: String = c.name.chars().map(|ch| if ch.is_whitespace() { '_' } else { ch }).collect();
        writeln!(out, "o {}", if name.is_empty() { "cloth" } else { &name })?;
        for p in &c.positions {
            writeln!(out, "v {} {} {}", p.x, p.y, p.z)?;
        }
        for [u, v] in &c.uvs {
            writeln!(out, "vt {u} {v}")?;
        }
        for [x, y, z] in &c.normals {
            writeln!(out, "vn {x} {y} {z}")?;
        }
        for t in &c.triangles {
            let [a, b, d] = t.map(|i| i as usize + first);
            writeln!(out, "f {a}/{a}/{a} {b}/{b}/{b} {d}/{d}/{d}")?;
        }
        first += c.positions.len();
    }
    Ok(())
}

/// Writes `cloths` to the OBJ file at `path`; the error names the file and the reason.
pub fn save_obj(path: &Path, cloths: &[ClothSurface]) -> Result<(), String> {
    let fail = |e: io::Error| format!("cannot write {}: {e}", path.display());
    let file = std::fs::File::create(path).map_err(fail)?;
    let mut out = io::BufWriter::new(file);
    write_obj(&mut out, cloths).and_then(|()| out.flush()).map_err(fail)
}

#[cfg(test)]
mod tests {
    use bevy::math::Vec3;

    use super::*;

    fn triangle(name: &str, dx: f32) -> ClothSurface {
        ClothSurface {
            name: name.into(),
            positions: vec![Vec3::new(dx, 0.0, 0.0), Vec3::new(dx + 1.0, 0.0, 0.0), Vec3::new(dx, 0.1, 1.0 / 3.0)],
            normals: vec![[0.0, 1.0, 0.0]; 3],
            uvs: vec![[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]],
            triangles: vec![[0, 1, 2]],
        }
    }

    #[test]
    fn the_second_cloth_continues_the_vertex_numbers() {
        let mut text = Vec::new();
        write_obj(&mut text, &[triangle("a sheet", 0.0), triangle("b", 5.0)]).unwrap();
        let text = String::from_utf8(text).unwrap();
        assert!(text.contains("o a_sheet\n") && text.contains("o b\n"), "{text}");
        assert!(text.contains("f 1/1/1 2/2/2 3/3/3\n") && text.contains("f 4/4/4 5/5/5 6/6/6\n"), "{text}");
        assert!(text.contains("v 0 0.1 0.33333334\n"), "shortest round-trip form: {text}");
    }

    #[test]
    fn an_unwritable_path_is_an_error_naming_it() {
        let e = save_obj(Path::new("/nonexistent-folder/x.obj"), &[triangle("a", 0.0)]).unwrap_err();
        assert!(e.starts_with("cannot write /nonexistent-folder/x.obj: "), "{e}");
    }
}
