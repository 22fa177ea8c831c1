//! `xr-compiler-glsl`: seed 003's `XRCompilerGLSL` as an XR plugin.
//!
//! Builds GLSL on a live OpenGL device: `#include` is resolved here (the
//! driver never sees a file name), defines are injected after `#version`,
//! and every driver message is mapped back to the file and line the user
//! wrote. Uniforms are set through a constant table with `glProgramUniform*`.

pub mod preprocess;
mod runtime;

use abi_stable::sabi_trait::TD_Opaque;
use xr_device::{DeviceCapabilities, DeviceKind, NativeHandles, XrError, XrResult, guard};
use xr_sourcebuild::{
    AttachedBuildSystem_TO, AttachedBuildSystemBox, Availability, BuildSystemInfo, ShaderStage, SourceBuildSystem,
    SourceLanguage,
};

/// The build system's name.
pub const NAME: &str = "xr-compiler-glsl";

xr_sourcebuild::export_plugin! {
    name: "xr-compiler-glsl",
    device_systems: [],
    build_systems: [GlslSystem],
}

/// The GLSL build system.
struct GlslSystem;

impl SourceBuildSystem for GlslSystem {
    fn info(&self) -> XrResult<BuildSystemInfo> {
        guard(|| {
            Ok(BuildSystemInfo {
                name: NAME.into(),
                description: "GLSL built by the OpenGL driver; program binaries and pipelines on GL 4.1+".into(),
                availability: Availability::RUNTIME_COMPILE | Availability::OFFLINE_COMPILE,
                attachable: vec![DeviceKind::OpenGl].into(),
                languages: vec![SourceLanguage::Glsl].into(),
                stages: ShaderStage::ALL.to_vec().into(),
                priority: 0,
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
            if !capabilities.separate_shader_objects {
                return Err(XrError::unavailable(format!(
                    "{NAME} needs glProgramUniform (OpenGL 4.1 or GL_ARB_separate_shader_objects); the device has OpenGL {}.{}",
                    capabilities.api_major, capabilities.api_minor
                )));
            }
            let gl = xr_gl_common::device_gl::DeviceGl::new(loader)?;
            Ok(AttachedBuildSystem_TO::from_value(runtime::AttachedGlsl::new(gl, capabilities), TD_Opaque))
        })
    }
}
