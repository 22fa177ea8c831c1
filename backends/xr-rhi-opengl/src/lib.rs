//! `xr-rhi-opengl`: seed 003's `XRRHIOpenGL` as an XR plugin.
//!
//! Opens an OpenGL 4.x core context on an EGL device with no surface
//! (Mesa's llvmpipe where there is no GPU, the GPU's EGL device where there
//! is one), reports the live driver's capabilities, and draws the few things
//! samples and tests need into offscreen targets.

mod context;
mod device;

use abi_stable::{export_root_module, prefix_type::PrefixTypeTrait, rstr, sabi_trait::TD_Opaque, std_types::RVec};
use xr_device::{
    DeviceBox, DeviceKind, DeviceOptions, DeviceSystem, DeviceSystem_TO, DeviceSystemBox, DeviceSystemInfo, XrResult,
    guard,
};
use xr_sourcebuild::{SourceBuildSystemBox, XrPlugin, XrPluginRef};

/// The plugin's root module.
#[export_root_module]
pub fn root_module() -> XrPluginRef {
    XrPlugin { name: rstr!("xr-rhi-opengl"), version: rstr!(env!("CARGO_PKG_VERSION")), device_systems, build_systems }
        .leak_into_prefix()
}

extern "C" fn device_systems() -> XrResult<RVec<DeviceSystemBox>> {
    guard(|| Ok(RVec::from(vec![DeviceSystem_TO::from_value(OpenGlSystem, TD_Opaque)])))
}

extern "C" fn build_systems() -> XrResult<RVec<SourceBuildSystemBox>> {
    guard(|| Ok(RVec::new()))
}

/// The OpenGL device system.
struct OpenGlSystem;

impl DeviceSystem for OpenGlSystem {
    fn info(&self) -> XrResult<DeviceSystemInfo> {
        guard(|| {
            Ok(DeviceSystemInfo {
                name: "xr-rhi-opengl".into(),
                kind: DeviceKind::OpenGl,
                description: "OpenGL 4.x core through EGL (headless) and glow".into(),
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
