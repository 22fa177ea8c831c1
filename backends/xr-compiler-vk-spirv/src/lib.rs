//! `xr-compiler-vk-spirv`: a build system plugin.
//!
//! GLSL and HLSL are compiled to SPIR-V for Vulkan 1.0 by XR's SPIR-V core
//! (a compatible object), turned into shader modules and a graphics pipeline
//! with specialization constants, and registered with the Vulkan device so
//! that it can draw with them. Constants are set through the same constant
//! table as on OpenGL: it writes the uniform buffers and push constants.

mod capabilities;
mod constant_table;
mod counter;
mod host_buffer;
mod layout;
mod mesh;
mod pipeline_cache;
mod pipelines;
mod ray_tracing;
mod runtime;
mod shader_binaries;
mod shader_objects;

use xr_device::{DeviceCapabilities, DeviceKind, NativeHandles, XrError};
use xr_plugin::attached_box;
use xr_sourcebuild::{
    AttachedBuildSystemBox, BuildError, BuildSystemInfo, LoadPath, OfflineArtifact, OfflineRequest,
    SourceBuildSystemBackend, TargetLoad,
};
use xr_spirv::offline::{Reflect, SpirvTarget};

/// The build system's name.
pub const NAME: &str = "xr-compiler-vk-spirv";
/// The target it compiles into and loads: SPIR-V for Vulkan.
pub const TARGET: &str = "vk-spirv";
/// The target as XR's SPIR-V core compiles it.
const SPIRV: SpirvTarget = SpirvTarget {
    compiler: NAME,
    version: env!("CARGO_PKG_VERSION"),
    target: TARGET,
    env: xr_spirv::TargetEnv::Vulkan10,
};
/// The source artifact it also loads, compiling it for Vulkan on the spot
/// (the GLSL build system's stored sources, a source bundle).
pub const SOURCE_TARGET: &str = "gl-glsl";

/// What it loads, by which path.
const LOADS: [(&str, LoadPath); 3] =
    [(TARGET, LoadPath::DeviceBinary), (TARGET, LoadPath::CompatibleObject), (SOURCE_TARGET, LoadPath::Source)];

xr_plugin::declare_plugin!(build_systems: [VkSpirvSystem]);

/// The Vulkan SPIR-V build system.
struct VkSpirvSystem;

impl SourceBuildSystemBackend for VkSpirvSystem {
    fn info(&self) -> Result<BuildSystemInfo, XrError> {
        Ok(BuildSystemInfo {
            attachable: vec![DeviceKind::VULKAN].into(),
            loads: TargetLoad::list(&LOADS),
            ..SPIRV.info("GLSL and HLSL to SPIR-V (shaderc), Vulkan shader modules and pipelines")
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
        SPIRV.compile(request, Reflect::Yes)
    }

    fn compile_for_store(&self, request: &OfflineRequest) -> Result<OfflineArtifact, BuildError> {
        SPIRV.compile(request, Reflect::No)
    }
}
