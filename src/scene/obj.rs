//! Wavefront OBJ triangle meshes for cloths (§4.1: the cloth is any manifold triangle mesh). Reads `v`, `vt`
//! and `f` lines (polygons are split into fans; `a`, `a/b`, `a/b/c`, `a//c` and negative indices work) and
//! ignores everything else. A mesh without texture coordinates gets planar ones from its XZ extent, so pins can
//! still be chosen by (u, v).

use bevy::math::Vec3;
use thiserror::Error;

use crate::sim::mesh::topology::{MAX_PARTICLES, TriangleMesh};

/// Why an OBJ file cannot be read.
#[derive(Debug, Error, Clone, PartialEq)]
#[error("{file}:{line}: {reason}")]
pub struct ObjError {
    /// The file, as named to [`parse`].
    pub file: String,
    /// Line of the error, counted from 1.
    pub line: usize,
    /// What is wrong.
    pub reason: String,
}

/// Parses OBJ text; `file` names the file in errors.
pub fn parse(text: &str, file: &str) -> Result<TriangleMesh, ObjError> {
    let mut positions = Vec::new();
    let mut texcoords: Vec<[f32; 2]> = Vec::new();
    let mut triangles = Vec::new();
    let mut uv_of_vertex: Vec<Option<[f32; 2]>> = Vec::new();
    for (n, raw) in text.lines().enumerate() {
        let fail = |reason: String| ObjError { file: file.to_string(), line: n + 1, reason };
        let mut words = raw.split_whitespace();
        match words.next() {
            Some("v") => {
                let xyz: Vec<f32> = words
                    .take(3)
                    .map(str::parse)
                    .collect::<Result<_, _>>()
                    .map_err(|e| fail(format!("bad vertex: {e}")))?;
                let [x, y, z] = xyz[..] else {
                    return Err(fail("a vertex needs three coordinates".into()));
                };
                let v = Vec3::new(x, y, z);
                if !v.is_finite() {
                    return Err(fail(format!("vertex {v} is not finite")));
                }
                if positions.len() == MAX_PARTICLES {
                    return Err(fail(format!("more than {MAX_PARTICLES} vertices")));
                }
                positions.push(v);
                uv_of_vertex.push(None);
            }
            Some("vt") => {
                let uv: Vec<f32> = words
                    .take(2)
                    .map(str::parse)
                    .collect::<Result<_, _>>()
                    .map_err(|e| fail(format!("bad texture coordinate: {e}")))?;
                texcoords.push([uv.first().copied().unwrap_or(0.0), uv.get(1).copied().unwrap_or(0.0)]);
            }
            Some("f") => {
                let mut corners = Vec::with_capacity(4);
                for word in words {
                    let mut parts = word.split('/');
                    let resolve = |s: Option<&str>, count: usize| -> Result<Option<usize>, ObjError> {
                        match s.filter(|s| !s.is_empty()) {
                            None => Ok(None),
                            Some(s) => {
                                let i: i64 = s.parse().map_err(|_| fail(format!("bad index '{s}'")))?;
                                let index = if i < 0 { count as i64 + i } else { i - 1 };
                                if index < 0 || index >= count as i64 {
                                    return Err(fail(format!("index {i} refers to no element (there are {count})")));
                                }
                                Ok(Some(index as usize))
                            }
                        }
                    };
                    let v = resolve(parts.next(), positions.len())?
                        .ok_or_else(|| fail("a face corner needs a vertex".into()))?;
                    if let Some(t) = resolve(parts.next(), texcoords.len())? {
                        uv_of_vertex[v].get_or_insert(texcoords[t]);
                    }
                    corners.push(v as u32);
                }
                if corners.len() < 3 {
                    return Err(fail("a face needs at least three corners".into()));
                }
                for k in 1..corners.len() - 1 {
                    triangles.push([corners[0], corners[k], corners[k + 1]]);
                }
            }
            _ => {}
        }
    }
    let uvs = if uv_of_vertex.iter().all(Option::is_some) && !positions.is_empty() {
        uv_of_vertex.into_iter().flatten().collect()
    } else {
        planar_uvs(&positions)
    };
    Ok(TriangleMesh { positions, triangles, uvs })
}

/// Texture coordinates from the XZ extent: u along X, v along Z, both 0–1.
fn planar_uvs(positions: &[Vec3]) -> Vec<[f32; 2]> {
    let min = positions.iter().fold(Vec3::INFINITY, |a, b| a.min(*b));
    let max = positions.iter().fold(Vec3::NEG_INFINITY, |a, b| a.max(*b));
    let size = (max - min).max(Vec3::splat(f32::MIN_POSITIVE));
    positions.iter().map(|p| [(p.x - min.x) / size.x, (p.z - min.z) / size.z]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quads_become_triangle_fans_and_uvs_follow_the_faces() {
        let text =
            "# a square\nv 0 0 0\nv 1 0 0\nv 1 0 1\nv 0 0 1\nvt 0 0\nvt 1 0\nvt 1 1\nvt 0 1\nf 1/1 2/2 3/3 4/4\n";
        let mesh = parse(text, "square.obj").unwrap();
        assert_eq!(mesh.triangles, vec![[0, 1, 2], [0, 2, 3]]);
        assert_eq!(mesh.uvs[2], [1.0, 1.0]);
    }

    #[test]
    fn negative_indices_and_missing_uvs() {
        let mesh = parse("v 0 0 0\nv 2 0 0\nv 0 0 4\nf -3//1 -2//1 -1//1\n", "t.obj").unwrap();
        assert_eq!(mesh.triangles, vec![[0, 1, 2]]);
        assert_eq!(mesh.uvs, vec![[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]);
    }

    #[test]
    fn errors_name_file_and_line() {
        let e = parse("v 0 0 0\nv 1 0 0\nf 1 2 7\n", "bad.obj").unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("bad.obj", 3));
        assert!(e.reason.contains("index 7"), "{}", e.reason);
        assert_eq!(parse("v 0 zero 0\n", "bad.obj").unwrap_err().line, 1);
        assert!(parse("v 0 0 0\nv 0 0 1\nf 1 2\n", "bad.obj").unwrap_err().reason.contains("three corners"));
    }
}
