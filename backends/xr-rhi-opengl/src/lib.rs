//! `xr-rhi-opengl`: the OpenGL device system plugin.
//!
//! Opens an OpenGL 4.x core context on an EGL device with no surface
//! (Mesa's llvmpipe where there is no GPU, the GPU's EGL device where there
//! is one), reports the live driver's capabilities, and draws the few things
//! samples and tests need into offscreen targets.

mod context;
mod device;

use xr_device::{DeviceBox, DeviceKind, DeviceOptions, DeviceSystemBackend, DeviceSystemInfo, XrError};
use xr_plugin::device_box;

xr_plugin::declare_plugin!(device_systems: [OpenGlSystem]);

/// The OpenGL device system.
struct OpenGlSystem;

impl DeviceSystemBackend for OpenGlSystem {
    fn info(&self) -> Result<DeviceSystemInfo, XrError> {
        Ok(DeviceSystemInfo::new(
            "xr-rhi-opengl",
            DeviceKind::OPENGL,
            "OpenGL 4.x core through EGL (headless, or an X11 window) and glow",
        ))
    }

    fn open(&self, options: &DeviceOptions) -> Result<DeviceBox, XrError> {
        Ok(device_box(device::GlDevice::open(options)?))
    }
}
