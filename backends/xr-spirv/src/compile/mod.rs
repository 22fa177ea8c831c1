//! GLSL and HLSL to SPIR-V through shaderc.
//!
//! By concern: the options and what a compile makes (here), one stage's
//! compile ([`SpirvCompiler`], `stage`), a whole program's (`program`), the
//! fallback to a newer glslang (`newer_glslang`) and the stripping of
//! source debug information (`debug_info`).

mod debug_info;
mod newer_glslang;
mod program;
mod stage;

pub use debug_info::strip_source_debug_info;
pub use stage::SpirvCompiler;

use std::{cell::RefCell, rc::Rc};
use xr_device::XrError;
use xr_plugin_kit::includes::IncludeEdge;
use xr_sourcebuild::{Diagnostic, ShaderStage};

/// The name of GLSL, as the build systems declare it.
pub const LANGUAGE_GLSL: &str = "glsl";
/// The name of HLSL, as the build systems declare it.
pub const LANGUAGE_HLSL: &str = "hlsl";

/// The languages shaderc compiles, with their file extensions.
pub fn languages() -> Vec<xr_sourcebuild::LanguageInfo> {
    vec![glsl_language(), xr_sourcebuild::LanguageInfo::new(LANGUAGE_HLSL, &["hlsl", "hlsli", "fx"])]
}

/// GLSL with its file extensions (the GLSL build system takes GLSL alone).
pub fn glsl_language() -> xr_sourcebuild::LanguageInfo {
    xr_sourcebuild::LanguageInfo::new(
        LANGUAGE_GLSL,
        &[
            "glsl", "vert", "frag", "geom", "tesc", "tese", "comp", "vs", "fs", "gs", "cs", "task", "mesh", "rgen",
            "rmiss", "rchit", "rahit", "rint", "rcall",
        ],
    )
}

/// The environment a module is compiled for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TargetEnv {
    /// OpenGL 4.5 with `ARB_gl_spirv`.
    OpenGl45,
    /// Vulkan 1.0.
    Vulkan10,
    /// Vulkan 1.1.
    Vulkan11,
    /// Vulkan 1.2.
    Vulkan12,
    /// Vulkan 1.3.
    Vulkan13,
}

impl TargetEnv {
    /// The command-line name: `opengl4.5`, `vulkan1.0` … `vulkan1.3`.
    pub fn name(self) -> &'static str {
        match self {
            TargetEnv::OpenGl45 => "opengl4.5",
            TargetEnv::Vulkan10 => "vulkan1.0",
            TargetEnv::Vulkan11 => "vulkan1.1",
            TargetEnv::Vulkan12 => "vulkan1.2",
            TargetEnv::Vulkan13 => "vulkan1.3",
        }
    }

    /// Parses [`TargetEnv::name`].
    pub fn from_name(name: &str) -> Option<Self> {
        [Self::OpenGl45, Self::Vulkan10, Self::Vulkan11, Self::Vulkan12, Self::Vulkan13]
            .into_iter()
            .find(|t| t.name() == name)
    }

    /// The newest SPIR-V version the environment accepts.
    pub fn default_spirv(self) -> SpirvVersion {
        match self {
            TargetEnv::OpenGl45 | TargetEnv::Vulkan10 => SpirvVersion::V1_0,
            TargetEnv::Vulkan11 => SpirvVersion::V1_3,
            TargetEnv::Vulkan12 => SpirvVersion::V1_5,
            TargetEnv::Vulkan13 => SpirvVersion::V1_6,
        }
    }
}

/// A SPIR-V version.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SpirvVersion {
    /// 1.0.
    V1_0,
    /// 1.1.
    V1_1,
    /// 1.2.
    V1_2,
    /// 1.3.
    V1_3,
    /// 1.4.
    V1_4,
    /// 1.5.
    V1_5,
    /// 1.6.
    V1_6,
}

impl SpirvVersion {
    /// The version `1.0` … `1.6` names.
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "1.0" => SpirvVersion::V1_0,
            "1.1" => SpirvVersion::V1_1,
            "1.2" => SpirvVersion::V1_2,
            "1.3" => SpirvVersion::V1_3,
            "1.4" => SpirvVersion::V1_4,
            "1.5" => SpirvVersion::V1_5,
            "1.6" => SpirvVersion::V1_6,
            _ => return None,
        })
    }

    /// `1.0` … `1.6`.
    pub fn name(self) -> &'static str {
        match self {
            SpirvVersion::V1_0 => "1.0",
            SpirvVersion::V1_1 => "1.1",
            SpirvVersion::V1_2 => "1.2",
            SpirvVersion::V1_3 => "1.3",
            SpirvVersion::V1_4 => "1.4",
            SpirvVersion::V1_5 => "1.5",
            SpirvVersion::V1_6 => "1.6",
        }
    }

    fn shaderc(self) -> shaderc::SpirvVersion {
        match self {
            SpirvVersion::V1_0 => shaderc::SpirvVersion::V1_0,
            SpirvVersion::V1_1 => shaderc::SpirvVersion::V1_1,
            SpirvVersion::V1_2 => shaderc::SpirvVersion::V1_2,
            SpirvVersion::V1_3 => shaderc::SpirvVersion::V1_3,
            SpirvVersion::V1_4 => shaderc::SpirvVersion::V1_4,
            SpirvVersion::V1_5 => shaderc::SpirvVersion::V1_5,
            SpirvVersion::V1_6 => shaderc::SpirvVersion::V1_6,
        }
    }
}

/// How hard shaderc's optimiser (SPIRV-Tools) works.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Optimization {
    /// No optimisation; debug names kept.
    #[default]
    None,
    /// Smaller code.
    Size,
    /// Faster code.
    Performance,
}

/// Everything besides the source that changes a module's bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SpirvOptions {
    /// The target environment.
    pub target: TargetEnv,
    /// SPIR-V version; the target's newest when `None`.
    pub spirv_version: Option<SpirvVersion>,
    /// Optimisation level.
    pub optimization: Optimization,
}

impl SpirvOptions {
    /// Defaults for `target`: its newest SPIR-V version, no optimisation.
    pub fn new(target: TargetEnv) -> Self {
        Self { target, spirv_version: None, optimization: Optimization::None }
    }

    /// The options raised to an environment `stages` exist in: the mesh
    /// shader and ray tracing extensions are written against SPIR-V 1.4,
    /// so a program with a task, mesh or ray tracing stage is compiled for
    /// SPIR-V 1.4 at least, and validated by Vulkan 1.2's rules at least
    /// (the first Vulkan whose SPIR-V environment takes 1.4 without
    /// `VK_KHR_spirv_1_4`; every device with those extensions has it). A
    /// SPIR-V version asked for below 1.4, or an OpenGL target, is an error
    /// naming the stage.
    pub fn for_stages(mut self, stages: &[ShaderStage]) -> Result<Self, XrError> {
        let Some(stage) = stages.iter().find(|s| needs_spirv_1_4(**s)) else { return Ok(self) };
        if self.target == TargetEnv::OpenGl45 {
            return Err(XrError::invalid_input(format!("OpenGL has no {} stage", stage.name())));
        }
        let raised = matches!(self.target, TargetEnv::Vulkan10 | TargetEnv::Vulkan11);
        if raised {
            self.target = TargetEnv::Vulkan12;
        }
        match self.spirv_version {
            Some(asked) if asked < SpirvVersion::V1_4 => {
                return Err(XrError::invalid_input(format!(
                    "a {} stage needs SPIR-V 1.4 or later; spirv-version {} was asked for",
                    stage.name(),
                    asked.name()
                )));
            }
            // Raised: 1.4, not Vulkan 1.2's own 1.5, the least the stages need.
            None if raised => self.spirv_version = Some(SpirvVersion::V1_4),
            _ => {}
        }
        Ok(self)
    }
}

/// Whether `stage`'s SPIR-V extension needs SPIR-V 1.4 (mesh and ray tracing stages).
pub fn needs_spirv_1_4(stage: ShaderStage) -> bool {
    matches!(stage.pipeline_kind(), xr_sourcebuild::PipelineKind::Mesh | xr_sourcebuild::PipelineKind::RayTracing)
}

/// A compiled SPIR-V module (validated when it came from
/// [`SpirvCompiler::compile`], not from [`SpirvCompiler::compile_unvalidated`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpirvModule {
    /// The words.
    pub words: Vec<u32>,
    /// Stage it was compiled for.
    pub stage: ShaderStage,
    /// Its entry point.
    pub entry_point: String,
    /// Warnings from the compiler, at the user's file and line.
    pub warnings: Vec<Diagnostic>,
    /// Every file its `#include`s read, in the order they were read.
    pub includes: Vec<IncludedFile>,
}

/// A file read for an `#include`: what an incremental build watches, and
/// what a source bundle carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IncludedFile {
    /// The name the `#include` asked for.
    pub requested: String,
    /// The path it was found at (or the in-memory name).
    pub path: String,
    /// Its text.
    pub text: String,
    /// The file whose `#include` read it, and the line of that directive.
    pub included_by: (String, u32),
}

impl IncludedFile {
    /// This inclusion as an edge of an include chain.
    pub fn edge(&self) -> IncludeEdge {
        IncludeEdge { file: self.path.clone(), includer: self.included_by.0.clone(), line: self.included_by.1 }
    }
}

/// The include edges of `includes`, for
/// [`xr_plugin_kit::includes::attach_include_chains`].
fn edges(includes: &IncludeLog) -> Vec<IncludeEdge> {
    includes.borrow().iter().map(IncludedFile::edge).collect()
}

/// Where an include callback records the files it reads.
type IncludeLog = Rc<RefCell<Vec<IncludedFile>>>;

/// A compiled program: its stage modules and every file they included.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompiledProgram {
    /// One module per stage, in the program's stage order.
    pub modules: Vec<crate::container::StageModule>,
    /// Every file any stage included (a file included twice is listed twice).
    pub includes: Vec<IncludedFile>,
    /// Every stage's warnings, at the user's file and line.
    pub warnings: Vec<Diagnostic>,
}

impl SpirvModule {
    /// The module as little-endian bytes (a `.spv` file).
    pub fn to_bytes(&self) -> Vec<u8> {
        self.words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }
}

/// A [`SpirvCompiler`] started on first use: attaching a build system stays
/// cheap, and one that never compiles never pays shaderc's start-up.
#[derive(Default)]
pub struct LazyCompiler(std::cell::OnceCell<SpirvCompiler>);

impl LazyCompiler {
    /// The compiler, started now if it was not yet.
    pub fn get(&self) -> Result<&SpirvCompiler, XrError> {
        if let Some(compiler) = self.0.get() {
            return Ok(compiler);
        }
        let compiler = SpirvCompiler::new()?;
        Ok(self.0.get_or_init(|| compiler))
    }
}

/// The compiler identity of a build system `name` at `version` that
/// compiles with this core: what goes into every key of its artifacts.
pub fn compiler_identity_of(name: &str, version: &str) -> String {
    format!("{name} {version} / {}", compiler_identity())
}

/// What the SPIR-V compiler is, for keys that must change when it does:
/// this crate's version and the SPIR-V version glslang writes.
pub fn compiler_identity() -> String {
    let (major, minor) = shaderc::get_spirv_version();
    format!(
        "xr-spirv {} / glslang (shaderc-rs 0.10), SPIR-V {major}.{minor} / {}",
        env!("CARGO_PKG_VERSION"),
        crate::newer_toolchain::identity()
    )
}
