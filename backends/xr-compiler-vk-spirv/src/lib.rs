//! `xr-compiler-vk-spirv`: seed 003's `XRCompilerVKSpirV` as an XR plugin.
//!
//! GLSL and HLSL are compiled to SPIR-V for Vulkan 1.0 by XR's SPIR-V core
//! (a compatible object), turned into shader modules and a graphics pipeline
//! with specialization constants, and registered with the Vulkan device so
//! that it can draw with them. Constants are set through the same constant
//! table as on OpenGL: it writes the uniform buffers and push constants.

mod constant_table;
mod pipeline_cache;
mod runtime;

use abi_stable::{export_root_module, prefix_type::PrefixTypeTrait, rstr, sabi_trait::TD_Opaque, std_types::RVec};
use xr_device::{DeviceCapabilities, DeviceKind, DeviceSystemBox, NativeHandles, XrError, XrResult, guard};
use xr_sourcebuild::{
    AttachedBuildSystem_TO, AttachedBuildSystemBox, Availability, BuildSystemInfo, ShaderStage, SourceBuildSystem,
    SourceBuildSystem_TO, SourceBuildSystemBox, SourceLanguage, XrPlugin, XrPluginRef,
};

/// The build system's name.
pub const NAME: &str = "xr-compiler-vk-spirv";

/// The plugin's root module.
#[export_root_module]
pub fn root_module() -> XrPluginRef {
    XrPlugin {
        name: rstr!("xr-compiler-vk-spirv"),
        version: rstr!(env!("CARGO_PKG_VERSION")),
        device_systems,
        build_systems,
    }
    .leak_into_prefix()
}

extern "C" fn device_systems() -> XrResult<RVec<DeviceSystemBox>> {
    guard(|| Ok(RVec::new()))
}

extern "C" fn build_systems() -> XrResult<RVec<SourceBuildSystemBox>> {
    guard(|| Ok(RVec::from(vec![SourceBuildSystem_TO::from_value(VkSpirvSystem, TD_Opaque)])))
}

struct VkSpirvSystem;

impl SourceBuildSystem for VkSpirvSystem {
    fn info(&self) -> XrResult<BuildSystemInfo> {
        guard(|| {
            Ok(BuildSystemInfo {
                name: NAME.into(),
                description: "GLSL and HLSL to SPIR-V (shaderc), Vulkan shader modules and pipelines".into(),
                availability: Availability::RUNTIME_COMPILE
                    | Availability::OFFLINE_COMPILE
                    | Availability::COMPATIBLE_OBJECT,
                attachable: vec![DeviceKind::Vulkan].into(),
                languages: vec![SourceLanguage::Glsl, SourceLanguage::Hlsl].into(),
                stages: vec![ShaderStage::Vertex, ShaderStage::Fragment].into(),
                priority: 0,
            })
        })
    }

    fn attach(&self, handles: &NativeHandles, capabilities: &DeviceCapabilities) -> XrResult<AttachedBuildSystemBox> {
        guard(|| {
            let loader = handles
                .vulkan
                .into_option()
                .filter(|_| handles.kind == DeviceKind::Vulkan)
                .ok_or_else(|| XrError::unavailable(format!("{NAME} attaches to Vulkan devices only")))?;
            let attached = runtime::AttachedVkSpirv::new(loader, capabilities)?;
            Ok(AttachedBuildSystem_TO::from_value(attached, TD_Opaque))
        })
    }
}
