//! `xr-compiler-gl-spirv`: seed 003's `XRCompilerGLSpirV` as an XR plugin.
//!
//! GLSL and HLSL are compiled to SPIR-V by XR's SPIR-V core (a compatible
//! object: not tied to a machine or driver), then loaded into OpenGL with
//! `glShaderBinary` (`GL_SHADER_BINARY_FORMAT_SPIR_V`) and
//! `glSpecializeShader`, with specialization constants. Available only where
//! the live device has `GL_ARB_gl_spirv` (or OpenGL 4.6).

mod runtime;
mod spirv_fns;

use abi_stable::sabi_trait::TD_Opaque;
use xr_device::{DeviceCapabilities, DeviceKind, NativeHandles, XrError, XrResult, guard};
use xr_sourcebuild::{
    AttachedBuildSystem_TO, AttachedBuildSystemBox, Availability, BuildSystemInfo, ShaderStage, SourceBuildSystem,
    SourceLanguage,
};

/// The build system's name.
pub const NAME: &str = "xr-compiler-gl-spirv";

xr_sourcebuild::export_plugin! {
    name: "xr-compiler-gl-spirv",
    device_systems: [],
    build_systems: [GlSpirvSystem],
}

/// The GL SPIR-V build system.
struct GlSpirvSystem;

impl SourceBuildSystem for GlSpirvSystem {
    fn info(&self) -> XrResult<BuildSystemInfo> {
        guard(|| {
            Ok(BuildSystemInfo {
                name: NAME.into(),
                description: "GLSL and HLSL to SPIR-V (shaderc), loaded with ARB_gl_spirv".into(),
                availability: Availability::RUNTIME_COMPILE
                    | Availability::OFFLINE_COMPILE
                    | Availability::COMPATIBLE_OBJECT,
                attachable: vec![DeviceKind::OpenGl].into(),
                languages: vec![SourceLanguage::Glsl, SourceLanguage::Hlsl].into(),
                stages: ShaderStage::ALL.to_vec().into(),
                // Below the driver's own GLSL compiler for plain GLSL at run time.
                priority: -10,
            })
        })
    }

    fn attach(&self, handles: &NativeHandles, capabilities: &DeviceCapabilities) -> XrResult<AttachedBuildSystemBox> {
        guard(|| {
            let loader = handles
                .gl
                .into_option()
                .filter(|_| handles.kind == DeviceKind::OpenGl)
                .ok_or_else(|| XrError::unavailable(format!("{NAME} attaches to OpenGL devices only")))?;
            if !capabilities.gl_spirv {
                return Err(XrError::unavailable(format!(
                    "{NAME} needs GL_ARB_gl_spirv or OpenGL 4.6; this device ({}, OpenGL {}.{}) has neither",
                    capabilities.renderer, capabilities.api_major, capabilities.api_minor
                )));
            }
            let gl = xr_gl_common::device_gl::DeviceGl::new(loader)?;
            let attached = runtime::AttachedGlSpirv::new(gl, capabilities)?;
            Ok(AttachedBuildSystem_TO::from_value(attached, TD_Opaque))
        })
    }
}
