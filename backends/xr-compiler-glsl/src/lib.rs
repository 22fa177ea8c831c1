//! `xr-compiler-glsl`: a build system plugin.
//!
//! Builds GLSL on a live OpenGL device: `#include` is resolved here (the
//! driver never sees a file name), defines are injected after `#version`,
//! and every driver message is mapped back to the file and line the user
//! wrote. Uniforms are set through a constant table with `glProgramUniform*`.

pub mod preprocess;
mod runtime;

use abi_stable::std_types::RVec;
use xr_device::{DeviceCapabilities, DeviceKind, NativeHandles, XrError};
use xr_plugin::attached_box;
use xr_plugin_kit::SourceBundle;
use xr_sourcebuild::{
    AttachedBuildSystemBox, Availability, BuildError, BuildSystemInfo, CompilePair, LoadPath, OfflineArtifact,
    OfflineRequest, ShaderStage, SourceBuildSystemBackend, SourceReach, TargetLoad,
};
use xr_spirv::{LANGUAGE_GLSL, SpirvOptions, TargetEnv};

/// The build system's name.
pub const NAME: &str = "xr-compiler-glsl";
/// Its target: GLSL sources for the OpenGL driver to build (a source bundle).
pub const TARGET: &str = "gl-glsl";
/// GLSL as a driver that builds GLSL itself sees it: includes expanded,
/// defines applied, one stage output of text per stage (guarded GLSL is made
/// of these).
pub const PREPROCESSED_TARGET: &str = "glsl-preprocessed";
/// What it loads: its program binaries first, then the sources.
pub(crate) const LOADS: [(&str, LoadPath); 2] = [(TARGET, LoadPath::DeviceBinary), (TARGET, LoadPath::Source)];

xr_plugin::declare_plugin!(build_systems: [GlslSystem]);

/// The GLSL build system.
struct GlslSystem;

impl SourceBuildSystemBackend for GlslSystem {
    fn info(&self) -> Result<BuildSystemInfo, XrError> {
        Ok(BuildSystemInfo {
            name: NAME.into(),
            description: "GLSL built by the OpenGL driver; program binaries and pipelines on GL 4.1+".into(),
            availability: Availability::RUNTIME_COMPILE | Availability::OFFLINE_COMPILE,
            attachable: vec![DeviceKind::OPENGL].into(),
            languages: vec![xr_spirv::glsl_language()].into(),
            stages: ShaderStage::CLASSIC.to_vec().into(),
            priority: 0,
            compiler_identity: xr_spirv::compiler_identity_of(NAME, env!("CARGO_PKG_VERSION")).into(),
            // Both compiles expand `#include` (glslang's, through the kit's resolution).
            compiles: vec![
                CompilePair::new(LANGUAGE_GLSL, TARGET).reaching(SourceReach::INCLUDES),
                CompilePair::new(LANGUAGE_GLSL, PREPROCESSED_TARGET).reaching(SourceReach::INCLUDES),
            ]
            .into(),
            loads: TargetLoad::list(&LOADS),
        })
    }

    fn attach(
        &self,
        handles: &NativeHandles,
        capabilities: &DeviceCapabilities,
    ) -> Result<AttachedBuildSystemBox, XrError> {
        let unmet = (!capabilities.separate_shader_objects).then(|| {
            format!(
                "glProgramUniform (OpenGL 4.1 or GL_ARB_separate_shader_objects); the device has OpenGL {}.{}",
                capabilities.api_major, capabilities.api_minor
            )
        });
        let gl = xr_gl_common::device_gl::DeviceGl::attach(handles, NAME, unmet)?;
        Ok(attached_box(runtime::AttachedGlsl::new(gl, capabilities)))
    }

    /// glslang is the closest judge (it catches what every driver refuses).
    fn compile_offline(&self, request: &OfflineRequest) -> Result<OfflineArtifact, BuildError> {
        if request.target == PREPROCESSED_TARGET {
            return preprocess(request);
        }
        if request.target != TARGET {
            return Err(XrError::invalid_input(format!("{NAME} compiles into {TARGET}, not {}", request.target)).into());
        }
        let desc = &request.program;
        if let Some(stage) = desc.stages.iter().find(|s| s.language != LANGUAGE_GLSL) {
            return Err(XrError::invalid_input(format!(
                "{}: {TARGET} builds GLSL only; this stage is {}",
                stage.file_name, stage.language
            ))
            .into());
        }
        let compiled =
            xr_spirv::offline::with_compiler(|c| c.compile_program(desc, &SpirvOptions::new(TargetEnv::OpenGl45)))?;
        let files = compiled.includes.iter().map(|i| (i.requested.clone(), i.text.clone())).collect();
        let reflection = xr_spirv::offline::reflection_of(&compiled.modules).unwrap_or_else(|e| {
            tracing::debug!("{NAME}: no reflection for program '{}': {e}", desc.name);
            Default::default()
        });
        Ok(OfflineArtifact {
            bytes: SourceBundle::of_program(desc, files).encode().into(),
            files_read: xr_spirv::offline::files_read(desc, &compiled),
            warnings: compiled.warnings.clone().into(),
            reflection,
            stages: RVec::new(),
        })
    }
}

/// Each stage preprocessed by glslang as the OpenGL driver sees it.
fn preprocess(request: &OfflineRequest) -> Result<OfflineArtifact, BuildError> {
    let mut stages = RVec::new();
    let mut files_read = RVec::new();
    for stage in request.program.stages.iter() {
        // The driver's view: glslang defines GL_SPIRV when it preprocesses for
        // OpenGL, and VULKAN (which may be undefined) for Vulkan; neither is
        // defined for a driver that builds GLSL itself.
        let mut desc = stage.clone();
        desc.source = undefine_vulkan(&stage.source).into();
        let text = xr_spirv::offline::with_compiler(|c| c.preprocess(&desc, &SpirvOptions::new(TargetEnv::Vulkan10)))?;
        files_read.push(xr_sourcebuild::FileRead::of_text(&stage.file_name, stage.source.as_bytes()));
        stages.push(xr_sourcebuild::StageOutput { stage: stage.stage, bytes: text.into_bytes().into() });
    }
    Ok(OfflineArtifact {
        bytes: RVec::new(),
        files_read,
        warnings: RVec::new(),
        reflection: Default::default(),
        stages,
    })
}

/// `#undef VULKAN` after the `#version` line, keeping later line numbers.
fn undefine_vulkan(source: &str) -> String {
    let mut out = String::with_capacity(source.len() + 32);
    let mut done = false;
    for (index, line) in source.lines().enumerate() {
        out.push_str(line);
        out.push('\n');
        if !done && line.trim_start().starts_with("#version") {
            out.push_str(&format!("#undef VULKAN\n#line {}\n", index + 2));
            done = true;
        }
    }
    out
}
