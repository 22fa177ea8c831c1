//! `xr-rhi-opengl`: the OpenGL device system plugin.
//!
//! Opens an OpenGL 4.x core context on an EGL device with no surface
//! (Mesa's llvmpipe where there is no GPU, the GPU's EGL device where there
//! is one), reports the live driver's capabilities, and draws the few things
//! samples and tests need into offscreen targets.

mod context;
mod device;

use abi_stable::sabi_trait::TD_Opaque;
use xr_device::{DeviceBox, DeviceKind, DeviceOptions, DeviceSystem, DeviceSystemInfo, XrResult, guard};

xr_sourcebuild::export_plugin! {
    name: "xr-rhi-opengl",
    device_systems: [OpenGlSystem],
    build_systems: [],
}

/// The OpenGL device system.
struct OpenGlSystem;

impl DeviceSystem for OpenGlSystem {
    fn info(&self) -> XrResult<DeviceSystemInfo> {
        guard(|| {
            Ok(DeviceSystemInfo {
                name: "xr-rhi-opengl".into(),
                kind: DeviceKind::OpenGl,
                description: "OpenGL 4.x core through EGL (headless, or an X11 window) and glow".into(),
            })
        })
    }

    fn open(&self, options: &DeviceOptions) -> XrResult<DeviceBox> {
        guard(|| {
            let device = device::GlDevice::open(options)?;
            Ok(xr_device::Device_TO::from_value(device, TD_Opaque))
        })
    }
}
