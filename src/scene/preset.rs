//! Preset files: every scene drape shows is a RON file under `assets/presets/` (format: `docs/presets.md`).
//! [`parse`] turns bytes into a [`SceneDesc`] or an error naming file, line, column and reason; the same
//! function serves the Bevy `PresetLoader` (panel, hot reload) and [`load`] (CLI, headless, tests).

use std::path::{Path, PathBuf};

use bevy::asset::io::Reader;
use bevy::asset::{AssetLoader, LoadContext};
use bevy::prelude::*;
use thiserror::Error;

use super::desc::SceneDesc;

/// Why a preset could not be read.
#[derive(Debug, Error)]
pub enum PresetError {
    /// The RON text is malformed or does not describe a scene.
    #[error("{file}:{line}:{column}: {reason}")]
    Parse {
        /// The file, as named to [`parse`].
        file: String,
        /// Line of the error.
        line: usize,
        /// Column of the error.
        column: usize,
        /// What is wrong.
        reason: String,
    },
    /// The file could not be read.
    #[error("{file}: {source}")]
    Io {
        /// The file.
        file: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The scene could not be written as RON.
    #[error("cannot write the preset: {0}")]
    Write(String),
    /// No preset file has that name.
    #[error("unknown preset '{name}'; known presets: {known}")]
    Unknown {
        /// The name asked for.
        name: String,
        /// The known presets, comma-separated.
        known: String,
    },
}

/// A loaded preset file.
#[derive(Asset, TypePath, Clone, Debug)]
pub struct ScenePreset(pub SceneDesc);

/// Parses preset bytes; `file` names the file in errors. A preset without a `name` takes the file's stem.
pub fn parse(bytes: &[u8], file: &str) -> Result<SceneDesc, PresetError> {
    let mut desc: SceneDesc = ron::de::from_bytes(bytes).map_err(|e| PresetError::Parse {
        file: file.to_string(),
        line: e.span.start.line,
        column: e.span.start.col,
        reason: e.code.to_string(),
    })?;
    if desc.name == SceneDesc::default().name
        && let Some(stem) = Path::new(file).file_stem()
    {
        desc.name = stem.to_string_lossy().into_owned();
    }
    Ok(desc)
}

/// The RON text of a scene, as [`parse`] reads it back.
pub fn to_ron(desc: &SceneDesc) -> Result<String, PresetError> {
    let config = ron::ser::PrettyConfig::new().depth_limit(6).struct_names(false);
    ron::ser::to_string_pretty(desc, config).map_err(|e| PresetError::Write(e.to_string()))
}

/// The asset folder: `$BEVY_ASSET_ROOT/assets` or `$CARGO_MANIFEST_DIR/assets` when set (as under `cargo run`),
/// else the source tree drape was built from, else `assets` beside the executable.
pub fn asset_root() -> PathBuf {
    for var in ["BEVY_ASSET_ROOT", "CARGO_MANIFEST_DIR"] {
        if let Some(dir) = std::env::var_os(var) {
            let path = PathBuf::from(dir).join("assets");
            if path.is_dir() {
                return path;
            }
        }
    }
    let built_from = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets");
    if built_from.is_dir() {
        return built_from;
    }
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|d| d.join("assets")))
        .unwrap_or_else(|| "assets".into())
}

/// Folder of the preset files.
pub(crate) fn presets_dir() -> PathBuf {
    asset_root().join("presets")
}

/// Names of the preset files in `presets_dir`, sorted.
pub fn names() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(presets_dir())
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path())
        .filter(|p| p.extension().is_some_and(|e| e == "ron"))
        .filter_map(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .collect();
    names.sort();
    names
}

/// A preset by name (a file in `presets_dir`) or by path.
pub fn load(name_or_path: &str) -> Result<SceneDesc, PresetError> {
    let as_path = Path::new(name_or_path);
    let path = if as_path.extension().is_some_and(|e| e == "ron") || as_path.components().count() > 1 {
        as_path.to_path_buf()
    } else {
        let path = presets_dir().join(format!("{name_or_path}.ron"));
        if !path.is_file() {
            return Err(PresetError::Unknown { name: name_or_path.into(), known: names().join(", ") });
        }
        path
    };
    let file = path.display().to_string();
    let bytes = std::fs::read(&path).map_err(|source| PresetError::Io { file: file.clone(), source })?;
    let mut desc = parse(&bytes, &file)?;
    desc.source = source_of(&path);
    Ok(desc)
}

/// The asset path (relative to [`asset_root`]) of a file inside the asset folder.
fn source_of(path: &Path) -> Option<String> {
    let root = asset_root().canonicalize().ok()?;
    let path = path.canonicalize().ok()?;
    path.strip_prefix(root).ok().map(|p| p.to_string_lossy().replace('\\', "/"))
}

/// Writes `desc` to a new file `presets/<name>.ron` (or `<name>_2.ron`, …) and returns its path.
pub fn save_new(desc: &SceneDesc) -> Result<PathBuf, PresetError> {
    let text = to_ron(desc)?;
    let dir = presets_dir();
    let base: String =
        desc.name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).collect();
    let path = (1..)
        .map(|k| dir.join(if k == 1 { format!("{base}.ron") } else { format!("{base}_{k}.ron") }))
        .find(|p| !p.exists())
        .unwrap_or_else(|| dir.join("saved.ron"));
    std::fs::write(&path, text).map_err(|source| PresetError::Io { file: path.display().to_string(), source })?;
    Ok(path)
}

/// Loads `.ron` preset files as [`ScenePreset`] assets.
#[derive(Default, TypePath)]
pub(crate) struct PresetLoader;

impl AssetLoader for PresetLoader {
    type Asset = ScenePreset;
    type Settings = ();
    type Error = PresetError;

    async fn load(
        &self,
        reader: &mut dyn Reader,
        _settings: &(),
        load_context: &mut LoadContext<'_>,
    ) -> Result<ScenePreset, PresetError> {
        let file = load_context.path().to_string();
        let mut bytes = Vec::new();
        reader.read_to_end(&mut bytes).await.map_err(|source| PresetError::Io { file: file.clone(), source })?;
        let mut desc = parse(&bytes, &file)?;
        desc.source = Some(file);
        Ok(ScenePreset(desc))
    }

    fn extensions(&self) -> &[&str] {
        &["ron"]
    }
}
