//! `xr-compiler-vk-spirv`: a build system plugin.
//!
//! GLSL and HLSL are compiled to SPIR-V for Vulkan 1.0 by XR's SPIR-V core
//! (a compatible object), turned into shader modules and a graphics pipeline
//! with specialization constants, and registered with the Vulkan device so
//! that it can draw with them. Constants are set through the same constant
//! table as on OpenGL: it writes the uniform buffers and push constants.

mod constant_table;
mod layout;
mod pipeline_cache;
mod pipelines;
mod runtime;

use xr_device::{DeviceCapabilities, DeviceKind, NativeHandles, XrError};
use xr_plugin::attached_box;
use xr_sourcebuild::{
    AttachedBuildSystemBox, Availability, BuildError, BuildSystemInfo, LoadPath, OfflineArtifact, OfflineRequest,
    ShaderStage, SourceBuildSystemBackend, TargetLoad,
};
use xr_spirv::offline::Reflect;

/// The build system's name.
pub const NAME: &str = "xr-compiler-vk-spirv";
/// The target it compiles into and loads: SPIR-V for Vulkan.
pub const TARGET: &str = "vk-spirv";
/// The source artifact it also loads, compiling it for Vulkan on the spot
/// (the GLSL build system's stored sources, a source bundle).
pub const SOURCE_TARGET: &str = "gl-glsl";

/// What it loads, by which path.
const LOADS: [(&str, LoadPath); 2] = [(TARGET, LoadPath::CompatibleObject), (SOURCE_TARGET, LoadPath::Source)];

xr_plugin::export_plugin!(build_systems: [VkSpirvSystem]);

/// The Vulkan SPIR-V build system.
struct VkSpirvSystem;

impl SourceBuildSystemBackend for VkSpirvSystem {
    fn info(&self) -> Result<BuildSystemInfo, XrError> {
        Ok(BuildSystemInfo {
            name: NAME.into(),
            description: "GLSL and HLSL to SPIR-V (shaderc), Vulkan shader modules and pipelines".into(),
            availability: Availability::RUNTIME_COMPILE
                | Availability::OFFLINE_COMPILE
                | Availability::COMPATIBLE_OBJECT,
            attachable: vec![DeviceKind::Vulkan].into(),
            languages: xr_spirv::languages().into(),
            stages: ShaderStage::ALL.to_vec().into(),
            priority: 0,
            compiler_identity: xr_spirv::compiler_identity_of(NAME, env!("CARGO_PKG_VERSION")).into(),
            compiles: xr_spirv::offline::compile_pairs(TARGET, xr_spirv::TargetEnv::Vulkan10),
            loads: LOADS.iter().map(|(target, path)| TargetLoad::new(target, *path)).collect(),
        })
    }

    fn attach(
        &self,
        handles: &NativeHandles,
        capabilities: &DeviceCapabilities,
    ) -> Result<AttachedBuildSystemBox, XrError> {
        let loader = handles.vulkan_loader(NAME)?;
        Ok(attached_box(runtime::AttachedVkSpirv::new(loader, capabilities)?))
    }

    fn compile_offline(&self, request: &OfflineRequest) -> Result<OfflineArtifact, BuildError> {
        xr_spirv::offline::compile_for_target(request, (NAME, TARGET), xr_spirv::TargetEnv::Vulkan10, Reflect::Yes)
    }

    fn compile_for_store(&self, request: &OfflineRequest) -> Result<OfflineArtifact, BuildError> {
        xr_spirv::offline::compile_for_target(request, (NAME, TARGET), xr_spirv::TargetEnv::Vulkan10, Reflect::No)
    }
}
