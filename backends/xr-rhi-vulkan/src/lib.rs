//! `xr-rhi-vulkan`: a Vulkan device system as an XR plugin.
//!
//! Opens a headless Vulkan 1.3 device (a GPU where there is one, Mesa's
//! lavapipe where there is not), reports its capabilities, hands build
//! systems the handles they need, and draws with dynamic rendering into
//! offscreen RGBA8 targets. With `DeviceOptions::validation` it runs under
//! `VK_LAYER_KHRONOS_validation` and fails the call that caused any
//! validation error.

mod device;
mod instance;

use abi_stable::{export_root_module, prefix_type::PrefixTypeTrait, rstr, sabi_trait::TD_Opaque, std_types::RVec};
use xr_device::{
    DeviceBox, DeviceKind, DeviceOptions, DeviceSystem, DeviceSystem_TO, DeviceSystemBox, DeviceSystemInfo, XrResult,
    guard,
};
use xr_sourcebuild::{SourceBuildSystemBox, XrPlugin, XrPluginRef};

/// The plugin's root module.
#[export_root_module]
pub fn root_module() -> XrPluginRef {
    XrPlugin { name: rstr!("xr-rhi-vulkan"), version: rstr!(env!("CARGO_PKG_VERSION")), device_systems, build_systems }
        .leak_into_prefix()
}

extern "C" fn device_systems() -> XrResult<RVec<DeviceSystemBox>> {
    guard(|| Ok(RVec::from(vec![DeviceSystem_TO::from_value(VulkanSystem, TD_Opaque)])))
}

extern "C" fn build_systems() -> XrResult<RVec<SourceBuildSystemBox>> {
    guard(|| Ok(RVec::new()))
}

/// The Vulkan device system.
struct VulkanSystem;

impl DeviceSystem for VulkanSystem {
    fn info(&self) -> XrResult<DeviceSystemInfo> {
        guard(|| {
            Ok(DeviceSystemInfo {
                name: "xr-rhi-vulkan".into(),
                kind: DeviceKind::Vulkan,
                description: "Vulkan 1.3 through ash, headless, dynamic rendering".into(),
            })
        })
    }

    fn open(&self, options: &DeviceOptions) -> XrResult<DeviceBox> {
        guard(|| Ok(xr_device::Device_TO::from_value(device::VkDevice::open(options)?, TD_Opaque)))
    }
}
