//! The DeviceSystem contract of XR.
//!
//! A *device system* is a plugin that opens a rendering device, reports what
//! it can do, and hands out the native handles a build system needs to
//! attach to it. Every type
//! here crosses the plugin boundary, so all of them are `#[repr(C)]` and
//! derive [`abi_stable::StableAbi`]: a plugin built against another layout is
//! refused at load time instead of running into undefined behaviour.
//!
//! Plugins do not implement the ABI traits of [`system`] by hand: they
//! implement the plain traits of [`backend`], and `xr_plugin::Guarded` puts
//! them behind the ABI with the panic guard every call needs.
//!
//! [`INTERFACE_VERSION`] is this crate's own package version; the rule for
//! changing the types here is in `xr-plugin`'s crate documentation.

#![deny(missing_docs)]

pub mod backend;
pub mod capabilities;
pub mod checks;
pub mod commands;
pub mod error;
pub mod handles;
pub mod log_bridge;
pub mod panic_guard;
pub mod ray_tracing;
pub mod readiness;
pub mod resources;
pub mod system;
pub mod window;

pub use backend::{DeviceBackend, DeviceSystemBackend};
pub use capabilities::{DeviceCapabilities, DeviceCounter, DeviceKind};
pub use commands::{
    DrawCall, Image, MAX_COLOR_ATTACHMENTS, MAX_TARGET_SIZE, MeshDrawCall, ProgramKind, ProgramRef, RenderTargetDesc,
    RenderTargetId, VertexAttribute, VertexBufferId, VertexLayout, check_target_size,
};
pub use error::{ErrorKind, XrError, XrResult};
pub use handles::{
    CreatedObjectCounts, GlBindingSpace, GlLoader, InputAttachmentSlot, NamedHandle, NativeHandles, PipelineAnswer,
    ShaderBindingRegion, ShaderObjectSlot, VulkanLoader, VulkanProgram,
};
pub use log_bridge::{LogSink, host_log_sink, install_plugin_logger};
pub use panic_guard::{catch_panic, guard};
pub use ray_tracing::{AccelerationInstance, AccelerationStructureId, BottomLevelDesc, TraceRaysCall, check_instance};
pub use readiness::{DrawWith, NotReady, NotReadyCounts, Readiness, decide};
pub use resources::{
    AttachmentState, BufferId, BufferUsage, ComputeCall, Filter, GivenLevels, PackedLevel, ResourceBinding,
    ResourceKind, SamplerDesc, SamplerId, TextureDesc, TextureFormat, TextureId, Wrap, check_buffer_write,
};
pub use system::{
    Device, Device_TO, DeviceBox, DeviceOptions, DeviceSystem, DeviceSystem_TO, DeviceSystemBox, DeviceSystemInfo,
};
pub use window::{NativeWindow, PresentStatus, Presented, WindowSystem};

/// The device-system contract's interface version: this crate's own package
/// version (not the workspace's), which abi_stable checks with every type's
/// layout. When it moves: `xr-plugin`'s crate documentation.
pub const INTERFACE_VERSION: &str = env!("CARGO_PKG_VERSION");
