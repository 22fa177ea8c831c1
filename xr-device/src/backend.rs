//! The DeviceSystem contract as plain Rust traits.
//!
//! The ABI traits ([`Device`](crate::Device), [`DeviceSystem`](crate::DeviceSystem))
//! speak abi_stable types (`RSlice`, `ROption`, `RVec`, `RResult`), and every
//! one of their methods must catch panics: an unwind that reaches the
//! `extern "C"` boundary aborts the host. Written by hand in each plugin,
//! that is the same `guard(|| ...)` and the same conversions once per method
//! per plugin. So a plugin implements [`DeviceSystemBackend`] and
//! [`DeviceBackend`] instead — the same operations under the same names,
//! with `&[T]`, `Option`, `Vec` and `Result` — and `xr_plugin::Guarded`
//! implements the ABI traits for every backend of both contracts: the panic
//! guard and the conversions are in that one place, so no plugin can forget
//! them.
//!
//! ```ignore
//! struct MySystem;
//! impl DeviceSystemBackend for MySystem { /* info, open */ }
//!
//! xr_plugin::export_plugin! {
//!     name: "my-device",
//!     device_systems: [xr_plugin::Guarded(MySystem)],
//!     build_systems: [],
//! }
//! ```

use crate::{
    capabilities::DeviceCapabilities,
    commands::{DrawCall, Image, MeshDrawCall, RenderTargetDesc, RenderTargetId, VertexBufferId, VertexLayout},
    error::XrError,
    handles::NativeHandles,
    ray_tracing::{AccelerationInstance, AccelerationStructureId, BottomLevelDesc, TraceRaysCall},
    resources::{BufferId, BufferUsage, ComputeCall, ResourceBinding, SamplerDesc, SamplerId, TextureDesc, TextureId},
    system::{DeviceBox, DeviceOptions, DeviceSystemInfo},
    window::Presented,
};
/// A device system, as a plugin writes it; `xr_plugin::Guarded` makes it a
/// [`DeviceSystem`](crate::DeviceSystem), whose operations these are.
pub trait DeviceSystemBackend {
    /// Name, kind and description.
    fn info(&self) -> Result<DeviceSystemInfo, XrError>;

    /// Opens a device (a backend boxes its own with `xr_plugin::device_box`); fails
    /// with `Unavailable` where there is none.
    fn open(&self, options: &DeviceOptions) -> Result<DeviceBox, XrError>;
}

/// An open device, as a plugin writes it; `xr_plugin::Guarded` makes it a
/// [`Device`](crate::Device). The operations are [`Device`](crate::Device)'s, documented there.
pub trait DeviceBackend {
    /// Capabilities read from the live driver.
    fn capabilities(&self) -> Result<DeviceCapabilities, XrError>;

    /// Handles for build systems to attach with; valid while the device lives.
    fn native_handles(&self) -> Result<NativeHandles, XrError>;

    /// Creates an offscreen RGBA8 colour target.
    fn create_render_target(&mut self, width: u32, height: u32) -> Result<RenderTargetId, XrError>;

    /// Uploads interleaved float vertices.
    fn create_vertex_buffer(&mut self, vertices: &[f32], layout: &VertexLayout) -> Result<VertexBufferId, XrError>;

    /// Clears a target to an RGBA colour (and its depth, if any, to 1).
    fn clear(&mut self, target: RenderTargetId, rgba: &[f32; 4]) -> Result<(), XrError>;

    /// Draws triangles with a program built by a build system.
    fn draw(&mut self, draw: &DrawCall) -> Result<(), XrError>;

    /// Reads a target back, top row first.
    fn read_pixels(&mut self, target: RenderTargetId) -> Result<Image, XrError>;

    /// The window's drawable size changed (0 × 0 while minimised).
    fn resize_window(&mut self, width: u32, height: u32) -> Result<(), XrError>;

    /// Shows `target` in the window, reading the presented image back with
    /// `capture`; fails on a headless device.
    fn present(&mut self, target: RenderTargetId, capture: bool) -> Result<Presented, XrError>;

    /// Creates an RGBA8 colour target with a 32-bit float depth attachment.
    fn create_depth_render_target(&mut self, width: u32, height: u32) -> Result<RenderTargetId, XrError>;

    /// Creates a texture from its first `levels_given` levels, tightly
    /// packed; the others are generated.
    fn create_texture(&mut self, desc: &TextureDesc, pixels: &[u8], levels_given: u32) -> Result<TextureId, XrError>;

    /// Reads a texture's `level` back, tightly packed, rows from the first.
    fn read_texture(&mut self, texture: TextureId, level: u32) -> Result<Vec<u8>, XrError>;

    /// Creates a sampler.
    fn create_sampler(&mut self, desc: &SamplerDesc) -> Result<SamplerId, XrError>;

    /// Creates a buffer holding `data`.
    fn create_buffer(&mut self, usage: BufferUsage, data: &[u8]) -> Result<BufferId, XrError>;

    /// Writes `data` into a buffer from byte `offset`.
    fn write_buffer(&mut self, buffer: BufferId, offset: u64, data: &[u8]) -> Result<(), XrError>;

    /// Reads a whole buffer back.
    fn read_buffer(&mut self, buffer: BufferId) -> Result<Vec<u8>, XrError>;

    /// What a constant table needs to bind `texture` (with `sampler`, for a
    /// texture read through one).
    fn texture_binding(&self, texture: TextureId, sampler: Option<SamplerId>) -> Result<ResourceBinding, XrError>;

    /// What a constant table needs to bind `buffer`.
    fn buffer_binding(&self, buffer: BufferId) -> Result<ResourceBinding, XrError>;

    /// Runs a compute program.
    fn dispatch(&mut self, call: &ComputeCall) -> Result<(), XrError>;

    /// Creates a render target of several colour attachments.
    fn create_render_target_with(&mut self, desc: &RenderTargetDesc) -> Result<RenderTargetId, XrError>;

    /// Colour attachment `attachment` of `target` as a texture.
    fn render_target_texture(&mut self, target: RenderTargetId, attachment: u32) -> Result<TextureId, XrError>;

    /// The validation messages reported since the last call that checked
    /// them, taken.
    fn take_validation_messages(&mut self) -> Result<Vec<String>, XrError>;

    /// Draws a mesh program; a device without mesh shaders keeps this default.
    fn draw_mesh_tasks(&mut self, call: &MeshDrawCall) -> Result<(), XrError> {
        let _ = call;
        Err(XrError::unavailable("this device draws no mesh programs"))
    }

    /// Builds a bottom-level acceleration structure; a device without ray tracing keeps this default.
    fn create_bottom_level(&mut self, desc: &BottomLevelDesc) -> Result<AccelerationStructureId, XrError> {
        let _ = desc;
        Err(XrError::unavailable(crate::system::NO_ACCELERATION_STRUCTURES))
    }

    /// Builds a top-level acceleration structure of instances of bottom levels.
    fn create_top_level(&mut self, instances: &[AccelerationInstance]) -> Result<AccelerationStructureId, XrError> {
        let _ = instances;
        Err(XrError::unavailable(crate::system::NO_ACCELERATION_STRUCTURES))
    }

    /// What a constant table needs to bind a top level.
    fn acceleration_structure_binding(&self, id: AccelerationStructureId) -> Result<ResourceBinding, XrError> {
        let _ = id;
        Err(XrError::unavailable(crate::system::NO_ACCELERATION_STRUCTURES))
    }

    /// Launches a ray tracing program's rays.
    fn trace_rays(&mut self, call: &TraceRaysCall) -> Result<(), XrError> {
        let _ = call;
        Err(XrError::unavailable("this device traces no rays"))
    }

    /// The counts the device keeps of work done on it; none by default.
    fn counters(&self) -> Result<Vec<crate::DeviceCounter>, XrError> {
        Ok(Vec::new())
    }

    /// Whether a draw of `program` into `target` would go ahead now
    /// without waiting; `Ready` by default (a device that compiles only on
    /// the draw path: its draws wait).
    fn readiness(&self, program: crate::ProgramRef, target: RenderTargetId) -> Result<crate::Readiness, XrError> {
        let _ = (program, target);
        Ok(crate::Readiness::Ready)
    }
}
