//! `xr-rhi-wgpu`: wgpu as an XR device system, with the build system that
//! loads programs onto it.
//!
//! Two device kinds, each declared here and unknown to the host: `wgpu`
//! (wgpu on Vulkan: lavapipe where there is no GPU; headless or presenting
//! into an X11 window) and `wgpu-gl` (wgpu on OpenGL through EGL: llvmpipe;
//! headless). Devices draw into offscreen targets, dispatch compute, and
//! read pixels and buffers back. `xr-compiler-wgpu` attaches to both: it
//! loads the `vk-spirv` objects the SPIR-V compilers store, and compiles
//! and loads the `wgsl` target. The device system and the build system
//! share the device as the Rust object it is, so they ship in one library
//! (`context.rs` says how the handle between them is checked). The user's
//! guide is docs/WGPU.md.

mod constant_table;
mod context;
mod device;
mod keep_current;
mod loader;
mod mips;
mod objects;
mod pipeline_cache;
mod present;
mod program;
mod readback;
#[cfg(unix)]
mod wayland_log;
mod wgsl;

use context::Api;
use xr_device::{DeviceBox, DeviceKind, DeviceOptions, DeviceSystemBackend, DeviceSystemInfo, XrError};
use xr_plugin::{Guarded, device_box};

/// wgpu on Vulkan.
pub const WGPU: DeviceKind = DeviceKind::new("wgpu", "wgpu on Vulkan");
/// wgpu on OpenGL.
pub const WGPU_GL: DeviceKind = DeviceKind::new("wgpu-gl", "wgpu on OpenGL");

/// The wgpu major version this plugin is built with: the API version a
/// device reports, and part of the pipeline cache's key.
pub const WGPU_MAJOR: u32 = 30;

xr_plugin::declare_plugin! {
    name: env!("CARGO_PKG_NAME"),
    device_systems: [Guarded(WgpuSystem(Api::Vulkan)), Guarded(WgpuSystem(Api::Gl))],
    build_systems: [Guarded(loader::WgpuSpirvSystem)],
}

/// The device system of one wgpu back end.
struct WgpuSystem(Api);

impl DeviceSystemBackend for WgpuSystem {
    fn info(&self) -> Result<DeviceSystemInfo, XrError> {
        Ok(match self.0 {
            Api::Vulkan => DeviceSystemInfo::new(
                "xr-rhi-wgpu",
                WGPU,
                "wgpu on its Vulkan back end, headless or in an X11 window: targets, textures, buffers, draws, compute, read-back",
            ),
            Api::Gl => DeviceSystemInfo::new(
                "xr-rhi-wgpu-gl",
                WGPU_GL,
                "wgpu on its OpenGL back end (EGL), headless: targets, textures, buffers, draws, compute, read-back",
            ),
        })
    }

    fn open(&self, options: &DeviceOptions) -> Result<DeviceBox, XrError> {
        Ok(device_box(device::WgpuDevice::open(self.0, options)?))
    }
}
