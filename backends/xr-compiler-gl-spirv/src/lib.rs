//! `xr-compiler-gl-spirv`: a build system plugin.
//!
//! GLSL and HLSL are compiled to SPIR-V by XR's SPIR-V core (a compatible
//! object: not tied to a machine or driver), then loaded into OpenGL with
//! `glShaderBinary` (`GL_SHADER_BINARY_FORMAT_SPIR_V`) and
//! `glSpecializeShader`, with specialization constants. Available only where
//! the live device has `GL_ARB_gl_spirv` (or OpenGL 4.6).

mod runtime;
mod spirv_fns;

use xr_device::{DeviceCapabilities, DeviceKind, NativeHandles, XrError};
use xr_plugin::attached_box;
use xr_sourcebuild::{
    AttachedBuildSystemBox, Availability, BuildError, BuildSystemInfo, LoadPath, OfflineArtifact, OfflineRequest,
    ShaderStage, SourceBuildSystemBackend, TargetLoad,
};
use xr_spirv::offline::Reflect;

/// The build system's name.
pub const NAME: &str = "xr-compiler-gl-spirv";
/// The target it compiles into and loads: SPIR-V for OpenGL 4.5 (`ARB_gl_spirv`).
pub const TARGET: &str = "gl-spirv";

xr_plugin::export_plugin!(build_systems: [GlSpirvSystem]);

/// The GL SPIR-V build system.
struct GlSpirvSystem;

impl SourceBuildSystemBackend for GlSpirvSystem {
    fn info(&self) -> Result<BuildSystemInfo, XrError> {
        Ok(BuildSystemInfo {
            name: NAME.into(),
            description: "GLSL and HLSL to SPIR-V (shaderc), loaded with ARB_gl_spirv".into(),
            availability: Availability::RUNTIME_COMPILE
                | Availability::OFFLINE_COMPILE
                | Availability::COMPATIBLE_OBJECT,
            attachable: vec![DeviceKind::OpenGl].into(),
            languages: xr_spirv::languages().into(),
            stages: ShaderStage::ALL.to_vec().into(),
            // Below the driver's own GLSL compiler for plain GLSL at run time.
            priority: -10,
            compiler_identity: xr_spirv::compiler_identity_of(NAME, env!("CARGO_PKG_VERSION")).into(),
            compiles: xr_spirv::offline::compile_pairs(TARGET, xr_spirv::TargetEnv::OpenGl45),
            loads: vec![TargetLoad::new(TARGET, LoadPath::CompatibleObject)].into(),
        })
    }

    fn attach(
        &self,
        handles: &NativeHandles,
        capabilities: &DeviceCapabilities,
    ) -> Result<AttachedBuildSystemBox, XrError> {
        let loader = handles.gl_loader(NAME)?;
        if !capabilities.gl_spirv {
            return Err(XrError::unavailable(format!(
                "{NAME} needs GL_ARB_gl_spirv or OpenGL 4.6; this device ({}, OpenGL {}.{}) has neither",
                capabilities.renderer, capabilities.api_major, capabilities.api_minor
            )));
        }
        let gl = xr_gl_common::device_gl::DeviceGl::new(loader)?;
        Ok(attached_box(runtime::AttachedGlSpirv::new(gl, capabilities)?))
    }

    fn compile_offline(&self, request: &OfflineRequest) -> Result<OfflineArtifact, BuildError> {
        xr_spirv::offline::compile_for_target(request, (NAME, TARGET), xr_spirv::TargetEnv::OpenGl45, Reflect::Yes)
    }

    fn compile_for_store(&self, request: &OfflineRequest) -> Result<OfflineArtifact, BuildError> {
        xr_spirv::offline::compile_for_target(request, (NAME, TARGET), xr_spirv::TargetEnv::OpenGl45, Reflect::No)
    }
}
