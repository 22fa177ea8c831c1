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
    AttachedBuildSystemBox, BuildError, BuildSystemInfo, LoadPath, OfflineArtifact, OfflineRequest,
    SourceBuildSystemBackend, TargetLoad,
};
use xr_spirv::offline::{Reflect, SpirvTarget};

/// The build system's name.
pub const NAME: &str = "xr-compiler-gl-spirv";
/// The target it compiles into and loads: SPIR-V for OpenGL 4.5 (`ARB_gl_spirv`).
pub const TARGET: &str = "gl-spirv";
/// The target as XR's SPIR-V core compiles it.
const SPIRV: SpirvTarget = SpirvTarget {
    compiler: NAME,
    version: env!("CARGO_PKG_VERSION"),
    target: TARGET,
    env: xr_spirv::TargetEnv::OpenGl45,
};

xr_plugin::declare_plugin!(build_systems: [GlSpirvSystem]);

/// The GL SPIR-V build system.
struct GlSpirvSystem;

impl SourceBuildSystemBackend for GlSpirvSystem {
    fn info(&self) -> Result<BuildSystemInfo, XrError> {
        Ok(BuildSystemInfo {
            attachable: vec![DeviceKind::OPENGL].into(),
            // Below the driver's own GLSL compiler for plain GLSL at run time.
            priority: -10,
            loads: TargetLoad::list(&[(TARGET, LoadPath::CompatibleObject)]),
            ..SPIRV.info("GLSL and HLSL to SPIR-V (shaderc), loaded with ARB_gl_spirv")
        })
    }

    fn attach(
        &self,
        handles: &NativeHandles,
        capabilities: &DeviceCapabilities,
    ) -> Result<AttachedBuildSystemBox, XrError> {
        let unmet = (!capabilities.gl_spirv).then(|| {
            format!(
                "GL_ARB_gl_spirv or OpenGL 4.6; this device ({}, OpenGL {}.{}) has neither",
                capabilities.renderer, capabilities.api_major, capabilities.api_minor
            )
        });
        let gl = xr_gl_common::device_gl::DeviceGl::attach(handles, NAME, unmet)?;
        Ok(attached_box(runtime::AttachedGlSpirv::new(gl, capabilities)?))
    }

    fn compile_offline(&self, request: &OfflineRequest) -> Result<OfflineArtifact, BuildError> {
        SPIRV.compile(request, Reflect::Yes)
    }

    fn compile_for_store(&self, request: &OfflineRequest) -> Result<OfflineArtifact, BuildError> {
        SPIRV.compile(request, Reflect::No)
    }
}
