//! Recorded steps as a binary glTF 2.0 file (`.glb`), playable in any glTF viewer.
//!
//! Each step is a node with its own mesh (one primitive per cloth: positions, normals, triangles), and one
//! animation shows the nodes in turn by their scale, 1 during the node's step and 0 otherwise, with step
//! interpolation. Morph targets would store less, but they need one topology for every frame, and a tearing
//! cloth changes its triangles; triangles that stay the same are written once and shared. Without the animation
//! a viewer shows the first step. The document is built with `gltf-json` and wrapped by `gltf`'s GLB writer.

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use bevy::math::Vec3;
use gltf::json::{self, validation::Checked::Valid, validation::USize64};

use crate::mesh_sync::vertex_normals;
use crate::replay::recording::RecordedStep;

/// The growing binary chunk and the document's buffer views and accessors over it.
struct Builder {
    root: json::Root,
    bin: Vec<u8>,
}

impl Builder {
    /// Appends `bytes` as a buffer view (4-byte aligned) and an accessor of `count` elements over it.
    fn accessor(
        &mut self,
        bytes: &[u8],
        count: usize,
        (component, kind): (json::accessor::ComponentType, json::accessor::Type),
        target: Option<json::buffer::Target>,
        bounds: Option<([f32; 3], [f32; 3])>,
    ) -> json::Index<json::Accessor> {
        while !self.bin.len().is_multiple_of(4) {
            self.bin.push(0);
        }
        let view = self.root.push(json::buffer::View {
            buffer: json::Index::new(0),
            byte_length: USize64::from(bytes.len()),
            byte_offset: Some(USize64::from(self.bin.len())),
            byte_stride: None,
            name: None,
            target: target.map(Valid),
            extensions: Default::default(),
            extras: Default::default(),
        });
        self.bin.extend_from_slice(bytes);
        let (min, max) = bounds
            .map_or((None, None), |(lo, hi)| (Some(json::Value::from(&lo[..])), Some(json::Value::from(&hi[..]))));
        self.root.push(json::Accessor {
            buffer_view: Some(view),
            byte_offset: None,
            count: USize64::from(count),
            component_type: Valid(json::accessor::GenericComponentType(component)),
            type_: Valid(kind),
            min,
            max,
            name: None,
            normalized: false,
            sparse: None,
            extensions: Default::default(),
            extras: Default::default(),
        })
    }

    fn vec3s(
        &mut self,
        v: &[[f32; 3]],
        target: Option<json::buffer::Target>,
        bounded: bool,
    ) -> json::Index<json::Accessor> {
        let bounds = bounded.then(|| {
            v.iter().fold(([f32::INFINITY; 3], [f32::NEG_INFINITY; 3]), |(lo, hi), p| {
                ([0, 1, 2].map(|k| lo[k].min(p[k])), [0, 1, 2].map(|k| hi[k].max(p[k])))
            })
        });
        let kind = (json::accessor::ComponentType::F32, json::accessor::Type::Vec3);
        self.accessor(bytemuck::cast_slice(v), v.len(), kind, target, bounds)
    }

    fn floats(&mut self, v: &[f32]) -> json::Index<json::Accessor> {
        let lo = v.iter().copied().fold(f32::INFINITY, f32::min);
        let hi = v.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let kind = (json::accessor::ComponentType::F32, json::accessor::Type::Scalar);
        let index = self.accessor(bytemuck::cast_slice(v), v.len(), kind, None, None);
        let accessor = &mut self.root.accessors[index.value()];
        (accessor.min, accessor.max) = (Some(json::Value::from(vec![lo])), Some(json::Value::from(vec![hi])));
        index
    }
}

/// The GLB bytes of `steps` (oldest first); the animation's clock starts at the first step.
pub(crate) fn glb_bytes(steps: &[RecordedStep]) -> Result<Vec<u8>, String> {
    let first = steps.first().ok_or("nothing recorded to export")?;
    let mut b = Builder { root: json::Root::default(), bin: Vec::new() };
    let mut shared_triangles: HashMap<*const Vec<[u32; 3]>, json::Index<json::Accessor>> = HashMap::new();
    let mut nodes = Vec::with_capacity(steps.len());
    let mut normals = Vec::new();
    for (k, step) in steps.iter().enumerate() {
        let mut primitives = Vec::with_capacity(step.cloths.len());
        for cloth in &step.cloths {
            let positions: &[[f32; 3]] = bytemuck::cast_slice::<Vec3, [f32; 3]>(&cloth.positions);
            normals.resize(positions.len(), [0.0; 3]);
            vertex_normals(&cloth.positions, &cloth.triangles, &mut normals);
            let position = b.vec3s(positions, Some(json::buffer::Target::ArrayBuffer), true);
            let normal = b.vec3s(&normals, Some(json::buffer::Target::ArrayBuffer), false);
            let indices = *shared_triangles.entry(Arc::as_ptr(&cloth.triangles)).or_insert_with(|| {
                let flat: &[u32] = bytemuck::cast_slice(&cloth.triangles[..]);
                let kind = (json::accessor::ComponentType::U32, json::accessor::Type::Scalar);
                b.accessor(
                    bytemuck::cast_slice(flat),
                    flat.len(),
                    kind,
                    Some(json::buffer::Target::ElementArrayBuffer),
                    None,
                )
            });
            let attributes = [(json::mesh::Semantic::Positions, position), (json::mesh::Semantic::Normals, normal)]
                .into_iter()
                .map(|(s, a)| (Valid(s), a))
                .collect();
            primitives.push(json::mesh::Primitive {
                attributes,
                indices: Some(indices),
                material: None,
                mode: Valid(json::mesh::Mode::Triangles),
                targets: None,
                extensions: Default::default(),
                extras: Default::default(),
            });
        }
        let mesh = b.root.push(json::Mesh {
            name: Some(format!("step {}", step.step)),
            primitives,
            weights: None,
            extensions: Default::default(),
            extras: Default::default(),
        });
        let scale = if k == 0 { [1.0; 3] } else { [0.0; 3] };
        nodes.push(b.root.push(json::Node {
            mesh: Some(mesh),
            name: Some(format!("t = {:.4} s", step.time - first.time)),
            scale: Some(scale),
            ..Default::default()
        }));
    }
    let times: Vec<f32> = steps.iter().map(|s| (s.time - first.time) as f32).collect();
    let mut channels = Vec::new();
    let mut samplers = Vec::new();
    for (k, &node) in nodes.iter().enumerate().filter(|_| steps.len() > 1) {
        // shown from its own time until the next step's (the last one stays)
        let (mut keys, mut scales) = (Vec::new(), Vec::new());
        if k > 0 {
            keys.push(0.0);
            scales.push([0.0; 3]);
        }
        keys.push(times[k]);
        scales.push([1.0; 3]);
        if let Some(&next) = times.get(k + 1) {
            keys.push(next);
            scales.push([0.0; 3]);
        }
        let input = b.floats(&keys);
        let output = b.vec3s(&scales, None, false);
        let sampler = json::Index::push(
            &mut samplers,
            json::animation::Sampler {
                input,
                output,
                interpolation: Valid(json::animation::Interpolation::Step),
                extensions: Default::default(),
                extras: Default::default(),
            },
        );
        channels.push(json::animation::Channel {
            sampler,
            target: json::animation::Target {
                node,
                path: Valid(json::animation::Property::Scale),
                extensions: Default::default(),
                extras: Default::default(),
            },
            extensions: Default::default(),
            extras: Default::default(),
        });
    }
    if !channels.is_empty() {
        b.root.push(json::Animation {
            name: Some("drape recording".into()),
            channels,
            samplers,
            extensions: Default::default(),
            extras: Default::default(),
        });
    }
    let scene = b.root.push(json::Scene {
        name: Some("drape".into()),
        nodes,
        extensions: Default::default(),
        extras: Default::default(),
    });
    b.root.scene = Some(scene);
    while !b.bin.len().is_multiple_of(4) {
        b.bin.push(0);
    }
    b.root.push(json::Buffer {
        byte_length: USize64::from(b.bin.len()),
        name: None,
        uri: None,
        extensions: Default::default(),
        extras: Default::default(),
    });
    b.root.asset.generator = Some(format!("drape {}", env!("CARGO_PKG_VERSION")));
    let json = json::serialize::to_vec(&b.root).map_err(|e| e.to_string())?;
    let glb = gltf::binary::Glb {
        header: gltf::binary::Header { magic: *b"glTF", version: 2, length: 0 },
        json: Cow::Owned(json),
        bin: Some(Cow::Owned(b.bin)),
    };
    glb.to_vec().map_err(|e| e.to_string())
}

/// Writes `steps` as a `.glb` file at `path`; the error names the file and the reason.
pub fn save_glb(path: &Path, steps: &[RecordedStep]) -> Result<(), String> {
    let bytes = glb_bytes(steps)?;
    std::fs::write(path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))
}
