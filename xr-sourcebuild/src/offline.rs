//! The open target model and the device-free offline compile.
//!
//! A *target* names what is produced and for which device (`vk-spirv` is
//! SPIR-V for Vulkan), not who produces it; a *language* is a name a plugin
//! declares (`glsl`, `hlsl`, `wgsl`, …). A build system declares the
//! (language → target) pairs it compiles without a device
//! ([`BuildSystemInfo::compiles`](crate::BuildSystemInfo::compiles)) and the
//! targets it loads once attached to a device
//! ([`BuildSystemInfo::loads`](crate::BuildSystemInfo::loads)). The host
//! matches the two by name and never decodes an artifact: it stores the
//! bytes of [`OfflineArtifact::bytes`] as an opaque, checksummed object and
//! hands them back to a loader of the same target.

use crate::{
    diagnostics::Diagnostic,
    source::{ProgramDesc, ShaderStage},
};
use abi_stable::{
    StableAbi,
    std_types::{RString, RVec},
};

/// A source language a build system accepts, with the file extensions that
/// mean it (so that `xr compile shade.wgsl` needs no `--lang`).
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub struct LanguageInfo {
    /// The language's name, lower case: `glsl`, `hlsl`, `wgsl`, …
    pub name: RString,
    /// File extensions without the dot: `wgsl`; `vert`, `frag`, `glsl`, …
    pub extensions: RVec<RString>,
}

impl LanguageInfo {
    /// `name`, recognised by `extensions`.
    pub fn new(name: &str, extensions: &[&str]) -> Self {
        Self { name: name.into(), extensions: extensions.iter().map(|e| RString::from(*e)).collect() }
    }
}

/// One (language → target) pair a build system compiles without a device.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CompilePair {
    /// The source language.
    pub language: RString,
    /// The target produced.
    pub target: RString,
}

impl CompilePair {
    /// `language → target`.
    pub fn new(language: &str, target: &str) -> Self {
        Self { language: language.into(), target: target.into() }
    }
}

/// An option of an offline compile, by name: `optimize` = `none` | `size` |
/// `performance`, `vulkan` = `1.0` … `1.3`, `spirv-version` = `1.0` … `1.6`.
/// A build system ignores options it does not know, and refuses a value
/// it does not understand with a clear error.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq, Hash)]
pub struct CompileOption {
    /// The option's name.
    pub name: RString,
    /// Its value.
    pub value: RString,
}

/// What the host asks of an offline compile.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub struct OfflineRequest {
    /// The program: stages, files, defines, include directories, entry points.
    pub program: ProgramDesc,
    /// The target to produce (one of the build system's pairs).
    pub target: RString,
    /// Options by name.
    pub options: RVec<CompileOption>,
}

impl OfflineRequest {
    /// `program` for `target` with no options.
    pub fn new(program: ProgramDesc, target: &str) -> Self {
        Self { program, target: target.into(), options: RVec::new() }
    }

    /// Adds the option `name` = `value`.
    pub fn with_option(mut self, name: &str, value: &str) -> Self {
        self.options.push(CompileOption { name: name.into(), value: value.into() });
        self
    }

    /// The value of option `name`, if given (the last one wins).
    pub fn option(&self, name: &str) -> Option<&str> {
        self.options.iter().rev().find(|o| o.name == name).map(|o| o.value.as_str())
    }
}

/// A file an offline compile read, with the BLAKE3 hash (hex) of the text
/// it compiled: the host rebuilds the artifact when any of them changes.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileRead {
    /// The path as the compile opened it.
    pub path: RString,
    /// BLAKE3 of its contents, hex.
    pub hash: RString,
}

impl FileRead {
    /// `path`, whose contents were `text`.
    pub fn of_text(path: &str, text: &[u8]) -> Self {
        Self { path: path.into(), hash: blake3::hash(text).to_hex().as_str().into() }
    }
}

/// One stage's own output, where the target has one (a SPIR-V module):
/// what `xr compile -o` writes for a single-stage program.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub struct StageOutput {
    /// The stage.
    pub stage: ShaderStage,
    /// Its bytes.
    pub bytes: RVec<u8>,
}

/// A constant the program reads (a loose uniform, a member of a constant
/// block, a push constant member), as the constant table will list it.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub struct ReflectedConstant {
    /// Its name.
    pub name: RString,
    /// Its type, as the build system writes it (`vec4<f32>`, `mat4x4<f32>`).
    pub ty: RString,
    /// The stage that declares it.
    pub stage: ShaderStage,
}

/// A resource bound by set and binding (uniform or storage buffer, texture,
/// sampler, image).
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub struct ReflectedResource {
    /// Its name.
    pub name: RString,
    /// What it is: `uniform-block`, `storage-buffer`, `sampled-image`, …
    pub kind: RString,
    /// Descriptor set (0 on OpenGL).
    pub set: u32,
    /// Binding (or GL unit).
    pub binding: u32,
    /// The stage that declares it.
    pub stage: ShaderStage,
}

/// An override: a specialization constant (SPIR-V) or a WGSL `override`.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub struct ReflectedOverride {
    /// Its name.
    pub name: RString,
    /// Its id (`constant_id`, `@id`).
    pub id: u32,
    /// Its type: `bool`, `int`, `uint` or `float`.
    pub ty: RString,
    /// Its default value, as text.
    pub default: RString,
}

/// What the run time needs to know of a compiled program.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, Default, PartialEq, Eq)]
pub struct ProgramReflection {
    /// Constants, for the constant table.
    pub constants: RVec<ReflectedConstant>,
    /// Resources by set and binding.
    pub resources: RVec<ReflectedResource>,
    /// Overrides with their defaults.
    pub overrides: RVec<ReflectedOverride>,
    /// The build system's own full reflection, as a JSON value
    /// (`xr reflect --json` prints it); empty when it has none.
    pub json: RString,
    /// The same for a person to read (`xr reflect` prints it).
    pub text: RString,
}

/// What an offline compile made.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub struct OfflineArtifact {
    /// The artifact: opaque to the host, read back by a loader of the target.
    pub bytes: RVec<u8>,
    /// Every file the compile read, for incremental builds.
    pub files_read: RVec<FileRead>,
    /// Warnings, at the user's file and line.
    pub warnings: RVec<Diagnostic>,
    /// What the run time needs to know.
    pub reflection: ProgramReflection,
    /// Each stage's own output, where the target has one.
    pub stages: RVec<StageOutput>,
}
