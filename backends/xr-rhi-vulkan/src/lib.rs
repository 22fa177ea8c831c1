//! `xr-rhi-vulkan`: a Vulkan device system as an XR plugin.
//!
//! Opens a headless Vulkan 1.3 device (a GPU where there is one, Mesa's
//! lavapipe where there is not), reports its capabilities, hands build
//! systems the handles they need, and draws with dynamic rendering into
//! offscreen targets (RGBA8, or the attachment formats
//! `create_render_target_with` names, with depth where asked). With `DeviceOptions::validation` it runs under
//! `VK_LAYER_KHRONOS_validation` and fails the call that caused any
//! validation error.

mod device;
mod instance;
mod swapchain;

use xr_device::{DeviceBox, DeviceKind, DeviceOptions, DeviceSystemBackend, DeviceSystemInfo, XrError};
use xr_plugin::device_box;

xr_plugin::declare_plugin!(device_systems: [VulkanSystem]);

/// The Vulkan device system.
struct VulkanSystem;

impl DeviceSystemBackend for VulkanSystem {
    fn info(&self) -> Result<DeviceSystemInfo, XrError> {
        Ok(DeviceSystemInfo::new(
            "xr-rhi-vulkan",
            DeviceKind::VULKAN,
            "Vulkan 1.3 through ash, headless or presenting to an X11 window, dynamic rendering",
        ))
    }

    fn open(&self, options: &DeviceOptions) -> Result<DeviceBox, XrError> {
        Ok(device_box(device::VkDevice::open(options)?))
    }
}
