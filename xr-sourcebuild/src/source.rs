//! How a shader source is described to a build system.

use abi_stable::{
    StableAbi,
    std_types::{ROption, RString, RVec},
};

/// A pipeline stage.
///
/// New stages go at the end: a stored object names each of its stages by
/// its position in [`ShaderStage::ALL`]. Stages compare in pipeline order
/// ([`ShaderStage::pipeline_order`]), so that sorting a program's stages
/// puts them in the order a pipeline takes them.
#[repr(u8)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ShaderStage {
    /// Vertex shader.
    Vertex,
    /// Tessellation control shader.
    TessControl,
    /// Tessellation evaluation shader.
    TessEvaluation,
    /// Geometry shader.
    Geometry,
    /// Fragment (pixel) shader.
    Fragment,
    /// Compute shader.
    Compute,
    /// Task (amplification) shader: launches mesh shader work groups.
    Task,
    /// Mesh shader: writes a work group's vertices and primitives.
    Mesh,
    /// Ray generation shader: the entry of a ray tracing pipeline.
    RayGeneration,
    /// Miss shader: runs where a ray hits nothing.
    Miss,
    /// Closest-hit shader: runs at a ray's nearest hit.
    ClosestHit,
    /// Any-hit shader: runs at each candidate hit.
    AnyHit,
    /// Intersection shader: tests a ray against procedural geometry.
    Intersection,
    /// Callable shader: called from other ray tracing stages.
    Callable,
}

impl Ord for ShaderStage {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.pipeline_order().cmp(&other.pipeline_order())
    }
}

impl PartialOrd for ShaderStage {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// The kind of pipeline a stage belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PipelineKind {
    /// Vertex, tessellation, geometry and fragment stages.
    Graphics,
    /// Task, mesh and fragment stages.
    Mesh,
    /// A compute stage alone.
    Compute,
    /// Ray generation, miss, hit, intersection and callable stages.
    RayTracing,
}

impl ShaderStage {
    /// Every stage, in the order stored objects number them.
    pub const ALL: [ShaderStage; 14] = [
        ShaderStage::Vertex,
        ShaderStage::TessControl,
        ShaderStage::TessEvaluation,
        ShaderStage::Geometry,
        ShaderStage::Fragment,
        ShaderStage::Compute,
        ShaderStage::Task,
        ShaderStage::Mesh,
        ShaderStage::RayGeneration,
        ShaderStage::Miss,
        ShaderStage::ClosestHit,
        ShaderStage::AnyHit,
        ShaderStage::Intersection,
        ShaderStage::Callable,
    ];

    /// The stages OpenGL 4.5 and Vulkan 1.0 both have (the first six of
    /// [`ShaderStage::ALL`]): what a build system for OpenGL builds.
    pub const CLASSIC: &'static [ShaderStage] = Self::ALL.split_at(6).0;

    /// The stage named `name` (as [`ShaderStage::name`] writes it).
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.name() == name)
    }

    /// The lower-case name used on the command line and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            ShaderStage::Vertex => "vertex",
            ShaderStage::TessControl => "tess-control",
            ShaderStage::TessEvaluation => "tess-evaluation",
            ShaderStage::Geometry => "geometry",
            ShaderStage::Fragment => "fragment",
            ShaderStage::Compute => "compute",
            ShaderStage::Task => "task",
            ShaderStage::Mesh => "mesh",
            ShaderStage::RayGeneration => "ray-generation",
            ShaderStage::Miss => "miss",
            ShaderStage::ClosestHit => "closest-hit",
            ShaderStage::AnyHit => "any-hit",
            ShaderStage::Intersection => "intersection",
            ShaderStage::Callable => "callable",
        }
    }

    /// The kind of pipeline it belongs to; a fragment stage is
    /// [`PipelineKind::Graphics`] (it ends mesh pipelines too).
    pub fn pipeline_kind(self) -> PipelineKind {
        match self {
            ShaderStage::Vertex
            | ShaderStage::TessControl
            | ShaderStage::TessEvaluation
            | ShaderStage::Geometry
            | ShaderStage::Fragment => PipelineKind::Graphics,
            ShaderStage::Task | ShaderStage::Mesh => PipelineKind::Mesh,
            ShaderStage::Compute => PipelineKind::Compute,
            ShaderStage::RayGeneration
            | ShaderStage::Miss
            | ShaderStage::ClosestHit
            | ShaderStage::AnyHit
            | ShaderStage::Intersection
            | ShaderStage::Callable => PipelineKind::RayTracing,
        }
    }

    /// Its place in a pipeline: stages of a program are given in this
    /// order (task before mesh before fragment; vertex first).
    pub fn pipeline_order(self) -> u32 {
        match self {
            ShaderStage::Vertex => 0,
            ShaderStage::Task => 1,
            ShaderStage::Mesh => 2,
            ShaderStage::TessControl => 3,
            ShaderStage::TessEvaluation => 4,
            ShaderStage::Geometry => 5,
            ShaderStage::Fragment => 6,
            ShaderStage::Compute => 7,
            ShaderStage::RayGeneration => 8,
            ShaderStage::Miss => 9,
            ShaderStage::ClosestHit => 10,
            ShaderStage::AnyHit => 11,
            ShaderStage::Intersection => 12,
            ShaderStage::Callable => 13,
        }
    }
}

/// An entry point a source declares itself, as Slang does with
/// `[shader("vertex")]`: its function's name and its stage.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq, Hash)]
pub struct EntryPoint {
    /// The function's name.
    pub name: RString,
    /// The stage it is written for.
    pub stage: ShaderStage,
}

/// A preprocessor define, `NAME` or `NAME=VALUE`.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Define {
    /// Macro name.
    pub name: RString,
    /// Macro body; empty for a plain `#define NAME`.
    pub value: RString,
}

impl Define {
    /// `#define name value`.
    pub fn new(name: impl Into<String>, value: impl Into<String>) -> Self {
        Self { name: name.into().into(), value: value.into().into() }
    }
}

/// An in-memory file the include resolver finds by name before it looks on disk.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq, Hash)]
pub struct VirtualFile {
    /// The name an `#include` uses.
    pub name: RString,
    /// The file's text.
    pub contents: RString,
}

/// A specialization constant's value (`layout(constant_id = N)`), as raw bits.
#[repr(C)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Specialization {
    /// The constant's id.
    pub id: u32,
    /// Its value's bits: an `f32`'s bits, an `i32`/`u32`, or 0/1 for a bool.
    pub bits: u32,
}

/// One stage's source, as the user wrote it.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq, Hash)]
pub struct SourceDesc {
    /// Language of `source`, by the name build systems declare (`glsl`, `hlsl`, `wgsl`, …).
    pub language: RString,
    /// Stage it is compiled for.
    pub stage: ShaderStage,
    /// Entry point; GLSL requires `main`.
    pub entry_point: RString,
    /// The file the source came from, as diagnostics, debug info and
    /// `#line` name it; relative includes start from its directory. A host
    /// that builds hermetically names it relative to [`SourceDesc::source_root`].
    pub file_name: RString,
    /// The text of the source.
    pub source: RString,
    /// Defines, injected after `#version`.
    pub defines: RVec<Define>,
    /// Directories searched for `#include`, after the including file's own.
    pub include_dirs: RVec<RString>,
    /// Files found by name before the disk is searched.
    pub virtual_files: RVec<VirtualFile>,
    /// Specialization constant values (SPIR-V build systems only).
    pub specializations: RVec<Specialization>,
    /// The directory relative names (`file_name`, `include_dirs`, the
    /// files found through them) are read from; empty: the current
    /// directory. Only where files are read: what a compile outputs and
    /// reports names files by their relative names, so that two checkouts
    /// in different places give the same bytes ([`SourceDesc::on_disk`]).
    pub source_root: RString,
    /// The hit group, numbered from 0, that this closest-hit, any-hit or
    /// intersection stage of a ray tracing program is put in; `None`: the
    /// program's groups follow the default rule (docs/BUILD.md). A
    /// program names the groups of all its hit stages or of none.
    pub hit_group: ROption<u32>,
}

impl SourceDesc {
    /// A source in `language` (as build systems name it) for `stage`, with
    /// entry point `main` and no defines or includes.
    pub fn new(language: &str, stage: ShaderStage, file_name: impl Into<String>, source: impl Into<String>) -> Self {
        Self {
            language: language.into(),
            stage,
            entry_point: "main".into(),
            file_name: file_name.into().into(),
            source: source.into().into(),
            defines: RVec::new(),
            include_dirs: RVec::new(),
            virtual_files: RVec::new(),
            specializations: RVec::new(),
            source_root: RString::new(),
            hit_group: ROption::RNone,
        }
    }

    /// Puts this hit stage in hit group `group` (see [`SourceDesc::hit_group`]).
    pub fn with_hit_group(mut self, group: u32) -> Self {
        self.hit_group = ROption::RSome(group);
        self
    }

    /// Reads relative names from `root` (see [`SourceDesc::source_root`]).
    pub fn with_source_root(mut self, root: impl Into<String>) -> Self {
        self.source_root = root.into().into();
        self
    }

    /// Where the file named `name` (relative to the source root, or
    /// absolute) is read from.
    pub fn on_disk(&self, name: impl AsRef<std::path::Path>) -> std::path::PathBuf {
        std::path::Path::new(self.source_root.as_str()).join(name)
    }

    /// The name under which a file read at `path` is reported: relative to
    /// the source root when it is under it, else `path` as it is (for a
    /// compiler that gives back the paths it opened).
    pub fn name_of_read(&self, path: &str) -> String {
        let root = self.source_root.as_str();
        if root.is_empty() {
            return path.to_owned();
        }
        std::path::Path::new(path)
            .strip_prefix(root)
            .map_or_else(|_| path.to_owned(), |relative| relative.to_string_lossy().into_owned())
    }

    /// Reads `path` as a source in `language` for `stage`; an error names the file.
    pub fn read(language: &str, stage: ShaderStage, path: &std::path::Path) -> std::io::Result<Self> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
        Ok(Self::new(language, stage, path.to_string_lossy(), text))
    }

    /// The same source in another language (`hlsl`, `wgsl`, …).
    pub fn with_language(mut self, language: &str) -> Self {
        self.language = language.into();
        self
    }

    /// Adds a define.
    pub fn with_define(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.defines.push(Define::new(name, value));
        self
    }

    /// Adds an include directory.
    pub fn with_include_dir(mut self, dir: impl Into<String>) -> Self {
        self.include_dirs.push(dir.into().into());
        self
    }

    /// Sets specialization constant `id` to raw `bits` (see [`Specialization`]).
    pub fn with_specialization(mut self, id: u32, bits: u32) -> Self {
        self.specializations.retain(|s| s.id != id);
        self.specializations.push(Specialization { id, bits });
        self
    }

    /// Adds an in-memory include file.
    pub fn with_virtual_file(mut self, name: impl Into<String>, contents: impl Into<String>) -> Self {
        self.virtual_files.push(VirtualFile { name: name.into().into(), contents: contents.into().into() });
        self
    }
}

/// A program: one source per stage, linked together.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq, Hash)]
pub struct ProgramDesc {
    /// Name used in diagnostics and logs.
    pub name: RString,
    /// The stages.
    pub stages: RVec<SourceDesc>,
}

impl ProgramDesc {
    /// A program named `name` made of `stages`.
    pub fn new(name: impl Into<String>, stages: impl IntoIterator<Item = SourceDesc>) -> Self {
        Self { name: name.into().into(), stages: stages.into_iter().collect() }
    }

    /// Its hit groups ([`crate::hit_groups`]), or the error naming the file
    /// that breaks their rule: what a build system checks before it
    /// compiles, so that no stored object holds groups its loader refuses.
    pub fn hit_groups(&self) -> Result<Vec<crate::HitGroup>, xr_device::XrError> {
        let stages: Vec<_> =
            self.stages.iter().map(|s| (s.stage, s.hit_group.into_option(), s.file_name.as_str())).collect();
        crate::hit_groups(&stages)
            .map_err(|mistake| xr_device::XrError::invalid_input(format!("program '{}': {mistake}", self.name)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_names_are_read_under_the_source_root_and_given_back_relative() {
        let desc = SourceDesc::new("glsl", ShaderStage::Fragment, "shaders/a.frag", "").with_source_root("/repo");
        assert_eq!(desc.on_disk("shaders/include/b.glsl"), std::path::Path::new("/repo/shaders/include/b.glsl"));
        assert_eq!(desc.on_disk("/usr/share/c.glsl"), std::path::Path::new("/usr/share/c.glsl"), "absolute stays");
        assert_eq!(desc.name_of_read("/repo/shaders/include/b.glsl"), "shaders/include/b.glsl");
        assert_eq!(desc.name_of_read("/elsewhere/d.glsl"), "/elsewhere/d.glsl");
        let unrooted = SourceDesc::new("glsl", ShaderStage::Fragment, "a.frag", "");
        assert_eq!(unrooted.on_disk("b.glsl"), std::path::Path::new("b.glsl"), "the current directory");
        assert_eq!(unrooted.name_of_read("/repo/b.glsl"), "/repo/b.glsl");
    }
}
