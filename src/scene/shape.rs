//! A preset collider's `shape`: one of drape's analytic shapes, or `Mesh(file, scale)`, a triangle mesh read
//! from an OBJ file under `assets/` (feature `avian`: the cloth meets it through parry's queries).
//!
//! In a file both read as one enum — `shape: Sphere(radius: 0.5)`, `shape: Mesh(file: "meshes/x.obj")` — while
//! the simulation's [`ColliderShape`] stays the analytic shapes its kernels know. Deserializing reads the variant's
//! name, then hands the rest to [`ColliderShape`]'s own deserializer, so its checks and error positions are kept.

use std::fmt;

use serde::de::value::EnumAccessDeserializer;
use serde::de::{DeserializeSeed, EnumAccess, IntoDeserializer, VariantAccess, Visitor};
use serde::ser::SerializeStructVariant;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::sim::collide::ColliderShape;
use crate::validate;

/// A preset collider's shape.
#[derive(Clone, Debug, PartialEq)]
pub enum ShapeDesc {
    /// One of drape's analytic shapes.
    Analytic(ColliderShape),
    /// A triangle mesh from a file.
    Mesh(MeshShape),
}

/// A collider's triangle mesh: an OBJ file under `assets/`, scaled. Static or kinematic it collides as the
/// triangle mesh; as a dynamic body, as the mesh's convex hull.
#[derive(Clone, Debug, PartialEq)]
pub struct MeshShape {
    /// Asset path of the OBJ file, e.g. `meshes/mannequin.obj`.
    pub file: String,
    /// Factor the file's coordinates are multiplied by; 1 by default.
    pub scale: f32,
}

impl Default for ShapeDesc {
    fn default() -> Self {
        Self::Analytic(ColliderShape::Plane)
    }
}

impl From<ColliderShape> for ShapeDesc {
    fn from(shape: ColliderShape) -> Self {
        Self::Analytic(shape)
    }
}

impl ShapeDesc {
    /// The analytic shape, if it is one.
    pub fn analytic(&self) -> Option<ColliderShape> {
        match self {
            Self::Analytic(shape) => Some(*shape),
            Self::Mesh(_) => None,
        }
    }
}

/// The variants a file may name.
const VARIANTS: &[&str] = &["Plane", "Sphere", "Box", "Capsule", "Barrel", "Mesh"];

impl<'de> Deserialize<'de> for ShapeDesc {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_enum("ColliderShape", VARIANTS, ShapeVisitor)
    }
}

struct ShapeVisitor;

impl<'de> Visitor<'de> for ShapeVisitor {
    type Value = ShapeDesc;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a collider shape: Plane, Sphere, Box, Capsule, Barrel or Mesh")
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<ShapeDesc, A::Error> {
        let (VariantName(name), variant): (VariantName, A::Variant) = data.variant()?;
        if !VARIANTS.contains(&name.as_str()) {
            return Err(serde::de::Error::unknown_variant(&name, VARIANTS));
        }
        let named = EnumAccessDeserializer::new(Named { name: name.clone(), variant });
        if name == "Mesh" {
            MeshOnly::deserialize(named)
                .map(|MeshOnly::Mesh { file, scale }| ShapeDesc::Mesh(MeshShape { file, scale }))
        } else {
            ColliderShape::deserialize(named).map(ShapeDesc::Analytic)
        }
    }
}

/// A variant's name, read as the identifier it is (a string would need quotes).
struct VariantName(String);

impl<'de> Deserialize<'de> for VariantName {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_identifier(VariantNameVisitor)
    }
}

struct VariantNameVisitor;

impl Visitor<'_> for VariantNameVisitor {
    type Value = VariantName;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a shape's name")
    }

    fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<VariantName, E> {
        Ok(VariantName(name.to_owned()))
    }
}

/// The one variant `Mesh`, read by serde's derive: the fields of [`MeshShape`] and their checks.
#[derive(Deserialize)]
enum MeshOnly {
    Mesh {
        file: String,
        #[serde(default = "one", deserialize_with = "validate::length")]
        scale: f32,
    },
}

fn one() -> f32 {
    1.0
}

/// An enum whose variant name has been read already: gives it again, then the variant's contents.
struct Named<V> {
    name: String,
    variant: V,
}

impl<'de, V: VariantAccess<'de>> EnumAccess<'de> for Named<V> {
    type Error = V::Error;
    type Variant = V;

    fn variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<(S::Value, V), V::Error> {
        let name = seed.deserialize(IntoDeserializer::<V::Error>::into_deserializer(self.name))?;
        Ok((name, self.variant))
    }
}

impl Serialize for ShapeDesc {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Analytic(shape) => shape.serialize(serializer),
            Self::Mesh(mesh) => {
                let mut variant = serializer.serialize_struct_variant("ColliderShape", 5, "Mesh", 2)?;
                variant.serialize_field("file", &mesh.file)?;
                variant.serialize_field("scale", &mesh.scale)?;
                variant.end()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<ShapeDesc, ron::error::SpannedError> {
        ron::from_str(text)
    }

    #[test]
    fn analytic_shapes_and_meshes_read_and_write_back() {
        let sphere = parse("Sphere(radius: 0.5)").unwrap();
        assert_eq!(sphere, ShapeDesc::Analytic(ColliderShape::Sphere { radius: 0.5 }));
        assert_eq!(parse("Plane").unwrap(), ShapeDesc::Analytic(ColliderShape::Plane));
        let mesh = parse(r#"Mesh(file: "meshes/x.obj", scale: 2.0)"#).unwrap();
        assert_eq!(mesh, ShapeDesc::Mesh(MeshShape { file: "meshes/x.obj".into(), scale: 2.0 }));
        let unscaled = parse(r#"Mesh(file: "meshes/x.obj")"#).unwrap();
        assert_eq!(unscaled, ShapeDesc::Mesh(MeshShape { file: "meshes/x.obj".into(), scale: 1.0 }));
        for shape in [sphere, mesh] {
            assert_eq!(parse(&ron::to_string(&shape).unwrap()).unwrap(), shape);
        }
    }

    #[test]
    fn a_bad_shape_says_where_and_why() {
        // the analytic shapes' own checks, at the value's place in the text
        let negative = parse("Sphere(radius: -1.0)").unwrap_err().to_string();
        assert!(negative.starts_with("1:16") && negative.contains("greater than zero"), "{negative}");
        let scale = parse(r#"Mesh(file: "a.obj", scale: 0.0)"#).unwrap_err().to_string();
        assert!(scale.starts_with("1:28") && scale.contains("greater than zero"), "{scale}");
        let unknown = parse("Cone(radius: 1.0)").unwrap_err().to_string();
        assert!(unknown.contains("Cone") && unknown.contains("Mesh"), "{unknown}");
    }
}
