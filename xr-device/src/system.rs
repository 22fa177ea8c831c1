//! The plugin-facing traits: a device system opens devices.

// `#[sabi_trait]` expands to impls inside a const block.
#![allow(non_local_definitions)]

use crate::{
    capabilities::{DeviceCapabilities, DeviceCounter, DeviceKind},
    commands::{
        DrawCall, Image, MeshDrawCall, ProgramRef, RenderTargetDesc, RenderTargetId, VertexBufferId, VertexLayout,
    },
    error::{XrError, XrResult},
    handles::NativeHandles,
    ray_tracing::{AccelerationInstance, AccelerationStructureId, BottomLevelDesc, TraceRaysCall},
    readiness::Readiness,
    resources::{BufferId, BufferUsage, ComputeCall, ResourceBinding, SamplerDesc, SamplerId, TextureDesc, TextureId},
    window::{NativeWindow, Presented},
};
use abi_stable::{
    StableAbi, sabi_trait,
    std_types::{RBox, ROption, RSlice, RString, RVec},
};

/// What a device system says about itself before it opens anything.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub struct DeviceSystemInfo {
    /// Unique name, e.g. `xr-rhi-opengl`.
    pub name: RString,
    /// The kind of device it opens.
    pub kind: DeviceKind,
    /// One line for `xr plugins`.
    pub description: RString,
}

impl DeviceSystemInfo {
    /// `name`, opening devices of `kind`, described by `description`.
    pub fn new(name: &str, kind: DeviceKind, description: &str) -> Self {
        Self { name: name.into(), kind, description: description.into() }
    }
}

/// How to open a device.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq, Default)]
pub struct DeviceOptions {
    /// Prefer a software device even where hardware is present.
    pub prefer_software: bool,
    /// Turn on the API's validation (Vulkan: `VK_LAYER_KHRONOS_validation`);
    /// every validation error then fails the call that caused it. OpenGL
    /// devices check `glGetError` after every call already and ignore it.
    pub validation: bool,
    /// A window to present into ([`Device::present`]); headless when absent.
    /// The window must outlive the device.
    pub window: ROption<NativeWindow>,
}

/// A device system, one per rendering API.
#[sabi_trait]
pub trait DeviceSystem {
    /// Name, kind and description.
    fn info(&self) -> XrResult<DeviceSystemInfo>;

    /// Opens a headless device; fails with `Unavailable` where there is none.
    #[sabi(last_prefix_field)]
    fn open(&self, options: &DeviceOptions) -> XrResult<DeviceBox>;
}

/// An open device. Devices are bound to the thread that opened them.
#[sabi_trait]
pub trait Device {
    /// Capabilities read from the live driver.
    fn capabilities(&self) -> XrResult<DeviceCapabilities>;

    /// Handles for build systems to attach with; valid while the device lives.
    fn native_handles(&self) -> XrResult<NativeHandles>;

    /// Creates an offscreen RGBA8 colour target.
    fn create_render_target(&mut self, width: u32, height: u32) -> XrResult<RenderTargetId>;

    /// Uploads interleaved float vertices.
    fn create_vertex_buffer(&mut self, vertices: RSlice<'_, f32>, layout: &VertexLayout) -> XrResult<VertexBufferId>;

    /// Clears a target to an RGBA colour.
    fn clear(&mut self, target: RenderTargetId, rgba: &[f32; 4]) -> XrResult<()>;

    /// Draws triangles with a program built by a build system.
    fn draw(&mut self, draw: &DrawCall) -> XrResult<()>;

    /// Reads a target back, top row first.
    fn read_pixels(&mut self, target: RenderTargetId) -> XrResult<Image>;

    /// Tells a windowed device the window's drawable size changed (0 × 0
    /// while minimised); its surface or swapchain follows before the next
    /// present.
    fn resize_window(&mut self, width: u32, height: u32) -> XrResult<()>;

    /// Shows `target` in the window, scaled to the window's size, and with
    /// `capture` reads the presented image back from the window's buffer.
    /// A window with no area skips the frame. Fails on a headless device.
    fn present(&mut self, target: RenderTargetId, capture: bool) -> XrResult<Presented>;

    /// Creates an RGBA8 colour target with a 32-bit float depth attachment;
    /// `clear` sets its depth to 1.
    fn create_depth_render_target(&mut self, width: u32, height: u32) -> XrResult<RenderTargetId>;

    /// Creates a texture from `pixels`: its first `levels_given` levels,
    /// tightly packed one after the other; with 1 level given and more in
    /// the texture, the others are generated (box filter).
    fn create_texture(&mut self, desc: &TextureDesc, pixels: RSlice<'_, u8>, levels_given: u32) -> XrResult<TextureId>;

    /// Reads a texture's `level` back, tightly packed, rows from the first.
    fn read_texture(&mut self, texture: TextureId, level: u32) -> XrResult<RVec<u8>>;

    /// Creates a sampler.
    fn create_sampler(&mut self, desc: &SamplerDesc) -> XrResult<SamplerId>;

    /// Creates a buffer holding `data` (its size is `data`'s).
    fn create_buffer(&mut self, usage: BufferUsage, data: RSlice<'_, u8>) -> XrResult<BufferId>;

    /// Writes `data` into a buffer from byte `offset`.
    fn write_buffer(&mut self, buffer: BufferId, offset: u64, data: RSlice<'_, u8>) -> XrResult<()>;

    /// Reads a whole buffer back (after every draw and dispatch so far).
    fn read_buffer(&mut self, buffer: BufferId) -> XrResult<RVec<u8>>;

    /// What a constant table needs to bind `texture` (with `sampler`, for a
    /// texture read through one), with its native handles.
    fn texture_binding(&self, texture: TextureId, sampler: ROption<SamplerId>) -> XrResult<ResourceBinding>;

    /// What a constant table needs to bind `buffer`, with its native handle.
    fn buffer_binding(&self, buffer: BufferId) -> XrResult<ResourceBinding>;

    /// Runs a compute program; what it wrote is visible to every later
    /// draw, dispatch and read.
    fn dispatch(&mut self, call: &ComputeCall) -> XrResult<()>;

    /// Creates a render target of several colour attachments, each of its
    /// own format, with or without depth (a G-buffer). `read_pixels` reads
    /// attachment 0 (which must be RGBA8); every attachment can be read as
    /// a texture ([`Device::render_target_texture`]).
    fn create_render_target_with(&mut self, desc: &RenderTargetDesc) -> XrResult<RenderTargetId>;

    /// Colour attachment `attachment` of `target` as a texture: bound to a
    /// program like any texture (a lighting pass reading a G-buffer) and
    /// read back with `read_texture`. It is the attachment itself, not a
    /// copy: later draws into the target show in it.
    fn render_target_texture(&mut self, target: RenderTargetId, attachment: u32) -> XrResult<TextureId>;

    /// The validation messages (Vulkan, with `DeviceOptions::validation`)
    /// reported since the last call that checked them, taken: work done
    /// outside the device's own calls (a build system making pipelines) is
    /// checked this way. Always empty on OpenGL.
    #[sabi(last_prefix_field)]
    fn take_validation_messages(&mut self) -> XrResult<RVec<RString>>;

    /// Draws a mesh program: launches its first stage's work groups into
    /// the target. Refused by a device without mesh shaders, and by a
    /// plugin built before this method existed.
    fn draw_mesh_tasks(&mut self, call: &MeshDrawCall) -> XrResult<()> {
        let _ = call;
        abi_stable::std_types::RResult::RErr(XrError::unavailable("this device draws no mesh programs"))
    }

    /// Builds a bottom-level acceleration structure from triangles in the
    /// device's buffers. Refused by a device without ray tracing, and by a
    /// plugin built before this method existed.
    fn create_bottom_level(&mut self, desc: &BottomLevelDesc) -> XrResult<AccelerationStructureId> {
        let _ = desc;
        abi_stable::std_types::RResult::RErr(XrError::unavailable(NO_ACCELERATION_STRUCTURES))
    }

    /// Builds a top-level acceleration structure of `instances`, each
    /// placing a bottom level this device made.
    fn create_top_level(&mut self, instances: RSlice<'_, AccelerationInstance>) -> XrResult<AccelerationStructureId> {
        let _ = instances;
        abi_stable::std_types::RResult::RErr(XrError::unavailable(NO_ACCELERATION_STRUCTURES))
    }

    /// What a constant table needs to bind a top-level acceleration structure.
    fn acceleration_structure_binding(&self, id: AccelerationStructureId) -> XrResult<ResourceBinding> {
        let _ = id;
        abi_stable::std_types::RResult::RErr(XrError::unavailable(NO_ACCELERATION_STRUCTURES))
    }

    /// Launches a ray tracing program's rays; what they write lands in the
    /// storage images and buffers bound to it.
    fn trace_rays(&mut self, call: &TraceRaysCall) -> XrResult<()> {
        let _ = call;
        abi_stable::std_types::RResult::RErr(XrError::unavailable("this device traces no rays"))
    }

    /// The counts the device keeps of work done on it, by name (on Vulkan,
    /// the pipelines and shader objects made on it); empty where it keeps
    /// none, as a plugin built before this method existed does.
    fn counters(&self) -> XrResult<RVec<DeviceCounter>> {
        abi_stable::std_types::RResult::ROk(RVec::new())
    }

    /// Whether a draw of `program` into `target` would go ahead now
    /// without waiting for the driver ([`Readiness`]). Never waits; asking
    /// may start the compile off the draw path where the target says all a
    /// compile needs (a Vulkan pipeline is made for the target's formats),
    /// and where it does not (an API whose pipeline depends on the draw's
    /// vertex layout too) the compile starts at the first draw that does
    /// not wait.
    /// A device that compiles only on the draw path, as a plugin built
    /// before this method existed does, answers `Ready` (its draws wait, as
    /// they always did).
    fn readiness(&self, program: ProgramRef, target: RenderTargetId) -> XrResult<Readiness> {
        let _ = (program, target);
        abi_stable::std_types::RResult::ROk(Readiness::Ready)
    }
}

/// What a device without acceleration structures answers.
pub const NO_ACCELERATION_STRUCTURES: &str = "this device makes no acceleration structures";

/// A device system behind the ABI.
pub type DeviceSystemBox = DeviceSystem_TO<'static, RBox<()>>;
/// An open device behind the ABI.
pub type DeviceBox = Device_TO<'static, RBox<()>>;
