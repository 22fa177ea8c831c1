//! One object's reflection as the bindings read it, and the store's cache
//! of it.
//!
//! Read from the build system's own reflection JSON in the shape the
//! SPIR-V build systems write (`xr reflect --json` prints it): `stages[]`,
//! each with `uniforms` (loose uniforms, with a `layout`), `uniform_blocks`
//! and `push_constants` (blocks: `name`, `size`, `members[]` with `name`,
//! `offset` and a `layout` of `scalar`, `columns`, `rows`, `array_size`,
//! `array_stride`, `matrix_stride`, `row_major`, or `null` for a member the
//! constant table cannot set), `storage_buffers` and `images` (by `name`
//! and `kind`). A build system whose JSON has no `stages` is not read: its
//! targets add nothing to the bindings.

use crate::{PlannedProgram, Variant, error::ArtifactError, paths::SourceRoot, recipe::offline_request};
use serde::{Deserialize, Serialize};
use std::path::Path;
use xr_sourcebuild::SourceBuildSystemBox;

/// The kind of a constant's components.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scalar {
    /// `float`.
    Float,
    /// `int`.
    Int,
    /// `uint`.
    Uint,
    /// `bool`.
    Bool,
}

/// Where a constant keeps its components (strides 0 for a loose uniform).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Layout {
    /// Kind of each component.
    pub scalar: Scalar,
    /// Matrix columns; 1 for scalars and vectors.
    pub columns: u8,
    /// Components per column.
    pub rows: u8,
    /// Array length; 1 for a non-array.
    pub array_size: u32,
    /// Bytes from one array element to the next.
    pub array_stride: usize,
    /// Bytes from one matrix column (or row, if `row_major`) to the next.
    pub matrix_stride: usize,
    /// The matrix is stored row by row.
    pub row_major: bool,
}

impl Layout {
    /// Whether `other` is the same type (layouts aside).
    pub fn same_type(&self, other: &Layout) -> bool {
        (self.scalar, self.columns, self.rows, self.array_size)
            == (other.scalar, other.columns, other.rows, other.array_size)
    }

    /// The type as GLSL writes it: `vec4`, `mat3`, `float[4]`.
    pub fn glsl_name(&self) -> String {
        let (scalar, prefix) = match self.scalar {
            Scalar::Float => ("float", ""),
            Scalar::Int => ("int", "i"),
            Scalar::Uint => ("uint", "u"),
            Scalar::Bool => ("bool", "b"),
        };
        let element = match (self.columns, self.rows) {
            (1, 1) => scalar.to_owned(),
            (1, n) => format!("{prefix}vec{n}"),
            (c, r) if c == r => format!("mat{c}"),
            (c, r) => format!("mat{c}x{r}"),
        };
        if self.array_size > 1 { format!("{element}[{}]", self.array_size) } else { element }
    }

    /// Bytes one element takes in a block (its last column or row included
    /// whole at the matrix stride).
    pub fn element_size(&self) -> usize {
        match (self.columns, self.row_major) {
            (1, _) => 4 * usize::from(self.rows),
            (c, false) => usize::from(c) * self.matrix_stride,
            (_, true) => usize::from(self.rows) * self.matrix_stride,
        }
    }
}

/// A block member.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockMember {
    /// Its name.
    pub name: String,
    /// Bytes from the block's start.
    pub offset: usize,
    /// How it keeps its components; `None` for what the constant table
    /// cannot set (a struct, a double): its bytes are opaque.
    pub layout: Option<Layout>,
}

/// A uniform block or push constant block.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Block {
    /// Its name (the block's type name, as the constant table knows it).
    pub name: String,
    /// Its size in bytes.
    pub size: usize,
    /// Its members, by offset.
    pub members: Vec<BlockMember>,
}

/// One (set, binding) an object reads.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Binding {
    /// The descriptor set.
    pub set: u32,
    /// The binding.
    pub binding: u32,
    /// What is bound there, as reflection names it (`sampled image`, `uniform buffer`).
    pub kind: String,
    /// The stages that read it: bits of vertex 1, fragment 2, compute 4, any other 8.
    pub stages: u32,
    /// Array elements: 1 for one, 0 for an array of unknown size.
    pub count: u32,
}

/// What one object of a program exposes.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct VariantReflection {
    /// Constants the table sets: (name, layout).
    pub constants: Vec<(String, Layout)>,
    /// Resources: (name, a texture rather than a buffer).
    pub resources: Vec<(String, bool)>,
    /// Uniform and push constant blocks.
    pub blocks: Vec<Block>,
    /// Every (set, binding) it reads, by set then binding.
    pub bindings: Vec<Binding>,
    /// Its push constant block: (the stages' bits, size in bytes).
    pub push_constants: Option<(u32, u32)>,
}

/// The bit of the stage named `name` in [`Binding::stages`].
pub fn stage_bit(name: &str) -> u32 {
    match name {
        "vertex" => 1,
        "fragment" => 2,
        "compute" => 4,
        _ => 8,
    }
}

#[derive(Deserialize)]
struct Json {
    stages: Vec<StageJson>,
}

#[derive(Deserialize)]
struct StageJson {
    #[serde(default)]
    stage: String,
    #[serde(default)]
    uniforms: Vec<Named>,
    #[serde(default)]
    uniform_blocks: Vec<BlockJson>,
    #[serde(default)]
    push_constants: Vec<BlockJson>,
    #[serde(default)]
    storage_buffers: Vec<Named>,
    #[serde(default)]
    images: Vec<Image>,
}

#[derive(Deserialize)]
struct Named {
    name: String,
    #[serde(default)]
    layout: Option<PartialLayout>,
    #[serde(flatten)]
    at: At,
}

/// Where a resource is bound (absent for loose uniforms and push constants).
#[derive(Deserialize, Default)]
struct At {
    #[serde(default)]
    set: Option<u32>,
    #[serde(default)]
    binding: Option<u32>,
    #[serde(default = "one")]
    count: u32,
}

fn one() -> u32 {
    1
}

#[derive(Deserialize)]
struct Image {
    name: String,
    kind: String,
    #[serde(flatten)]
    at: At,
}

#[derive(Deserialize)]
struct BlockJson {
    name: String,
    size: Option<usize>,
    members: Vec<MemberJson>,
    #[serde(flatten)]
    at: At,
}

#[derive(Deserialize)]
struct MemberJson {
    name: String,
    offset: usize,
    layout: Option<PartialLayout>,
}

#[derive(Deserialize)]
struct PartialLayout {
    scalar: String,
    columns: u8,
    rows: u8,
    array_size: u32,
    #[serde(default)]
    array_stride: usize,
    #[serde(default)]
    matrix_stride: usize,
    #[serde(default)]
    row_major: bool,
}

impl PartialLayout {
    fn layout(&self) -> Option<Layout> {
        let scalar = match self.scalar.as_str() {
            "float" => Scalar::Float,
            "int" => Scalar::Int,
            "uint" => Scalar::Uint,
            "bool" => Scalar::Bool,
            _ => return None,
        };
        Some(Layout {
            scalar,
            columns: self.columns,
            rows: self.rows,
            array_size: self.array_size,
            array_stride: self.array_stride,
            matrix_stride: self.matrix_stride,
            row_major: self.row_major,
        })
    }
}

/// The reflection in a build system's JSON; `None` when it is not in the
/// shape the bindings read.
pub fn parse(json: &str) -> Option<VariantReflection> {
    let json: Json = serde_json::from_str(json).ok()?;
    let mut reflection = VariantReflection::default();
    let add_constant = |reflection: &mut VariantReflection, name: &str, layout: Option<&PartialLayout>| {
        if let Some(layout) = layout.and_then(PartialLayout::layout)
            && !reflection.constants.iter().any(|(n, _)| n == name)
        {
            reflection.constants.push((name.to_owned(), layout));
        }
    };
    for stage in &json.stages {
        for uniform in &stage.uniforms {
            add_constant(&mut reflection, &uniform.name, uniform.layout.as_ref());
        }
        for block in stage.uniform_blocks.iter().chain(&stage.push_constants) {
            for member in &block.members {
                add_constant(&mut reflection, &member.name, member.layout.as_ref());
            }
            if !reflection.blocks.iter().any(|b| b.name == block.name) {
                let mut members: Vec<BlockMember> = block
                    .members
                    .iter()
                    .map(|m| BlockMember {
                        name: m.name.clone(),
                        offset: m.offset,
                        layout: m.layout.as_ref().and_then(PartialLayout::layout),
                    })
                    .collect();
                members.sort_by_key(|m| m.offset);
                let size = block.size.unwrap_or_else(|| members.last().map_or(0, |m| m.offset));
                reflection.blocks.push(Block { name: block.name.clone(), size, members });
            }
        }
        // A uniform block whose members the constant table sets is XR's to
        // fill: only the others are bound by the engine.
        let resources = stage
            .uniform_blocks
            .iter()
            .filter(|b| b.members.iter().all(|m| m.layout.is_none()))
            .map(|b| (&b.name, false))
            .chain(stage.storage_buffers.iter().map(|b| (&b.name, false)))
            .chain(stage.images.iter().filter(|i| i.kind != "acceleration structure").map(|i| (&i.name, true)));
        for (name, texture) in resources {
            if !reflection.resources.iter().any(|(n, _)| n == name) {
                reflection.resources.push((name.clone(), texture));
            }
        }
        let stage_bit = stage_bit(&stage.stage);
        let bound = (stage.uniform_blocks.iter().map(|b| ("uniform buffer", &b.at)))
            .chain(stage.storage_buffers.iter().map(|b| ("storage buffer", &b.at)))
            .chain(stage.images.iter().map(|i| (i.kind.as_str(), &i.at)));
        for (kind, at) in bound {
            let (Some(set), Some(binding)) = (at.set, at.binding) else { continue };
            match reflection.bindings.iter_mut().find(|b| (b.set, b.binding, b.kind.as_str()) == (set, binding, kind)) {
                Some(known) => known.stages |= stage_bit,
                None => reflection.bindings.push(Binding {
                    set,
                    binding,
                    kind: kind.to_owned(),
                    stages: stage_bit,
                    count: at.count,
                }),
            }
        }
        for block in &stage.push_constants {
            let size = block.size.unwrap_or(0) as u32;
            let (stages, known) = reflection.push_constants.unwrap_or((0, 0));
            reflection.push_constants = Some((stages | stage_bit, known.max(size)));
        }
    }
    reflection.bindings.sort_by(|a, b| (a.set, a.binding, &a.kind).cmp(&(b.set, b.binding, &b.kind)));
    Some(reflection)
}

/// The cache file of `object`'s reflection by the compiler `reflector`
/// (its name and identity: a rebuilt plugin may reflect the same bytes
/// otherwise) in the store at `store`: `<object>.<reflector's hash>.json`.
fn cache_path(store: &Path, object: &str, reflector: &str) -> std::path::PathBuf {
    let reflector = blake3::hash(reflector.as_bytes()).to_hex();
    store.join("reflection").join(format!("{object}.{}.json", &reflector[..16]))
}

/// Removes the cached reflections of objects no longer in `store`, and the
/// leftovers of writes a process did not finish (`xr store gc` calls it):
/// how many files went.
pub fn drop_unreferenced(store: &xr_store::Store) -> usize {
    let Ok(entries) = std::fs::read_dir(store.root().join("reflection")) else { return 0 };
    let mut dropped = 0;
    for path in entries.filter_map(|e| e.ok()).map(|e| e.path()) {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let object = name.strip_suffix(".json").and_then(|stem| stem.split_once('.')).map(|(object, _)| object);
        let keep = match object {
            Some(hex) => xr_store::ObjectKey::from_hex(hex).is_some_and(|key| store.path_of(&key).is_file()),
            None => false,
        };
        if !keep && std::fs::remove_file(&path).is_ok() {
            dropped += 1;
        }
    }
    dropped
}

/// The reflection of `object` by the compiler `reflector` (its name and
/// identity): from the store's cache of the build system's JSON, else from
/// `compile`'s, which is then cached (written
/// whole or not at all; the JSON as the build system wrote it, so that
/// what the bindings read of it may change without the cache going stale).
/// Also says whether it was compiled now.
pub fn of_object<E>(
    store: &Path,
    (object, reflector): (&str, &str),
    compile: impl FnOnce() -> Result<String, E>,
) -> Result<(bool, Option<VariantReflection>), E> {
    let path = cache_path(store, object, reflector);
    if let Ok(json) = std::fs::read_to_string(&path) {
        return Ok((false, parse(&json)));
    }
    let json = compile()?;
    // Objects repeat across variants, and threads reflect them at once.
    static WRITES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let temp = path.with_extension(format!("{}.{n}.tmp", std::process::id()));
    let written = path.parent().map_or(Ok(()), std::fs::create_dir_all).and_then(|()| {
        std::fs::write(&temp, &json)?;
        std::fs::rename(&temp, &path)
    });
    if let Err(e) = written {
        let _ = std::fs::remove_file(&temp);
        tracing::warn!("cannot cache the reflection of {object} in {}: {e}", path.display());
    }
    Ok((true, parse(&json)))
}

/// Compiles `variant` of `program` into `target` in full with the build
/// system `compiler` (its name, and as loaded here), where `compiles` runs
/// whole compiles: its reflection JSON.
pub fn compile(
    compiles: &crate::Compiles,
    (compiler, system): (&str, &SourceBuildSystemBox),
    program: &PlannedProgram,
    (variant, target): (&Variant, &str),
    root: &SourceRoot,
) -> Result<String, ArtifactError> {
    let request = offline_request(program, variant, target, root)?;
    let compiled = compiles
        .compile_whole(compiler, system, &request)
        .map_err(|e| ArtifactError::of_compile(&e.message, &e.diagnostics, &variant.name))?;
    Ok(compiled.reflection)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cache answers only for the same object reflected by the same
    /// compiler: another object, or the same bytes under a rebuilt
    /// plugin's identity, is reflected again.
    #[test]
    fn a_reflection_is_cached_by_its_object_and_the_compiler_that_reflected_it() {
        let dir = tempfile::tempdir().unwrap();
        let json = || Ok::<_, std::convert::Infallible>("{}".to_owned());
        let object = "ab".repeat(32);
        let other = "cd".repeat(32);
        let compiled = |object: &str, reflector: &str| of_object(dir.path(), (object, reflector), json).unwrap().0;
        assert!(compiled(&object, "glslc 1.0"), "reflected the first time");
        assert!(!compiled(&object, "glslc 1.0"), "then from the cache");
        assert!(compiled(&other, "glslc 1.0"), "another object");
        assert!(compiled(&object, "glslc 1.1"), "a rebuilt compiler");
        assert!(!compiled(&object, "glslc 1.0"), "each kept apart");
    }

    #[test]
    fn the_spirv_shape_is_read_and_any_other_is_not() {
        let json = r#"{"stages": [{
            "uniforms": [{"name": "u_time", "layout": {"scalar": "float", "columns": 1, "rows": 1, "array_size": 1}}],
            "uniform_blocks": [
                {"name": "Light", "size": 32, "members": [
                    {"name": "color", "offset": 16, "ty": "vec4<f32>", "layout": {"scalar": "float", "columns": 1, "rows": 4, "array_size": 1, "array_stride": 0, "matrix_stride": 0, "row_major": false}},
                    {"name": "dir", "offset": 0, "ty": "vec3<f32>", "layout": {"scalar": "float", "columns": 1, "rows": 3, "array_size": 1, "array_stride": 0, "matrix_stride": 0, "row_major": false}}]},
                {"name": "Opaque", "size": 16, "members": [{"name": "s", "offset": 0, "ty": "struct", "layout": null}]}],
            "push_constants": [],
            "storage_buffers": [{"name": "Particles"}],
            "images": [{"name": "albedo", "kind": "combined image sampler"}, {"name": "scene", "kind": "acceleration structure"}]
        }]}"#;
        let reflection = parse(json).expect("the SPIR-V shape");
        let constants: Vec<&str> = reflection.constants.iter().map(|(name, _)| name.as_str()).collect();
        assert_eq!(constants, ["u_time", "color", "dir"]);
        // Members by offset; a block of settable members is XR's to fill, not a resource.
        assert_eq!(reflection.blocks[0].members[0].name, "dir");
        let resources: Vec<(&str, bool)> = reflection.resources.iter().map(|(n, t)| (n.as_str(), *t)).collect();
        assert_eq!(resources, [("Opaque", false), ("Particles", false), ("albedo", true)]);
        assert_eq!(parse(r#"{"entry_points": []}"#), None);
        assert_eq!(parse("not json"), None);
    }
}
