//! The DeviceSystem contract as plain Rust traits, and the one adapter
//! that puts them behind the ABI.
//!
//! The ABI traits ([`DeviceSystem`], [`Device`]) speak abi_stable types
//! (`RSlice`, `ROption`, `RVec`, `RResult`), and every one of their methods
//! must catch panics: an unwind that reaches the `extern "C"` boundary
//! aborts the host. Written by hand in each plugin, that is the same
//! `guard(|| ...)` and the same conversions once per method per plugin.
//! So a plugin implements [`DeviceSystemBackend`] and [`DeviceBackend`]
//! instead — the same operations under the same names, with `&[T]`,
//! `Option`, `Vec` and `Result` — and [`Guarded`] implements the ABI traits
//! for every backend: the panic guard and the conversions are in this one
//! place, so no plugin can forget them.
//!
//! ```ignore
//! struct MySystem;
//! impl DeviceSystemBackend for MySystem { /* info, open */ }
//!
//! xr_sourcebuild::export_plugin! {
//!     name: "my-device",
//!     device_systems: [xr_device::Guarded(MySystem)],
//!     build_systems: [],
//! }
//! ```

use crate::{
    capabilities::DeviceCapabilities,
    commands::{DrawCall, Image, RenderTargetDesc, RenderTargetId, VertexBufferId, VertexLayout},
    error::{XrError, XrResult},
    handles::NativeHandles,
    panic_guard::guard,
    resources::{BufferId, BufferUsage, ComputeCall, ResourceBinding, SamplerDesc, SamplerId, TextureDesc, TextureId},
    system::{Device, Device_TO, DeviceBox, DeviceOptions, DeviceSystem, DeviceSystemInfo},
    window::Presented,
};
use abi_stable::{
    sabi_trait::TD_Opaque,
    std_types::{ROption, RSlice, RString, RVec},
};

/// A plugin's value behind an ABI trait: `Guarded(backend)` implements the
/// ABI trait of the contract `backend` implements as a plain trait
/// ([`DeviceSystemBackend`] → [`DeviceSystem`], [`DeviceBackend`] →
/// [`Device`], and in `xr-sourcebuild` the build system and constant table
/// contracts), running every call inside [`guard`] so that a panic comes
/// back as an error instead of unwinding into the host.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Guarded<B>(pub B);

/// A device open behind the ABI: `backend` wrapped in [`Guarded`] and boxed.
pub fn device_box<B: DeviceBackend + 'static>(backend: B) -> DeviceBox {
    Device_TO::from_value(Guarded(backend), TD_Opaque)
}

/// A device system, as a plugin writes it; [`Guarded`] makes it a
/// [`DeviceSystem`]. The operations are [`DeviceSystem`]'s.
pub trait DeviceSystemBackend {
    /// Name, kind and description.
    fn info(&self) -> Result<DeviceSystemInfo, XrError>;

    /// Opens a device (a backend boxes its own with [`device_box`]); fails
    /// with `Unavailable` where there is none.
    fn open(&self, options: &DeviceOptions) -> Result<DeviceBox, XrError>;
}

/// An open device, as a plugin writes it; [`Guarded`] makes it a
/// [`Device`]. The operations are [`Device`]'s, documented there.
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
}

impl<B: DeviceSystemBackend> DeviceSystem for Guarded<B> {
    fn info(&self) -> XrResult<DeviceSystemInfo> {
        guard(|| self.0.info())
    }

    fn open(&self, options: &DeviceOptions) -> XrResult<DeviceBox> {
        guard(|| self.0.open(options))
    }
}

impl<B: DeviceBackend> Device for Guarded<B> {
    fn capabilities(&self) -> XrResult<DeviceCapabilities> {
        guard(|| self.0.capabilities())
    }

    fn native_handles(&self) -> XrResult<NativeHandles> {
        guard(|| self.0.native_handles())
    }

    fn create_render_target(&mut self, width: u32, height: u32) -> XrResult<RenderTargetId> {
        guard(|| self.0.create_render_target(width, height))
    }

    fn create_vertex_buffer(&mut self, vertices: RSlice<'_, f32>, layout: &VertexLayout) -> XrResult<VertexBufferId> {
        guard(|| self.0.create_vertex_buffer(vertices.as_slice(), layout))
    }

    fn clear(&mut self, target: RenderTargetId, rgba: &[f32; 4]) -> XrResult<()> {
        guard(|| self.0.clear(target, rgba))
    }

    fn draw(&mut self, draw: &DrawCall) -> XrResult<()> {
        guard(|| self.0.draw(draw))
    }

    fn read_pixels(&mut self, target: RenderTargetId) -> XrResult<Image> {
        guard(|| self.0.read_pixels(target))
    }

    fn resize_window(&mut self, width: u32, height: u32) -> XrResult<()> {
        guard(|| self.0.resize_window(width, height))
    }

    fn present(&mut self, target: RenderTargetId, capture: bool) -> XrResult<Presented> {
        guard(|| self.0.present(target, capture))
    }

    fn create_depth_render_target(&mut self, width: u32, height: u32) -> XrResult<RenderTargetId> {
        guard(|| self.0.create_depth_render_target(width, height))
    }

    fn create_texture(&mut self, desc: &TextureDesc, pixels: RSlice<'_, u8>, levels_given: u32) -> XrResult<TextureId> {
        guard(|| self.0.create_texture(desc, pixels.as_slice(), levels_given))
    }

    fn read_texture(&mut self, texture: TextureId, level: u32) -> XrResult<RVec<u8>> {
        guard(|| self.0.read_texture(texture, level).map(RVec::from))
    }

    fn create_sampler(&mut self, desc: &SamplerDesc) -> XrResult<SamplerId> {
        guard(|| self.0.create_sampler(desc))
    }

    fn create_buffer(&mut self, usage: BufferUsage, data: RSlice<'_, u8>) -> XrResult<BufferId> {
        guard(|| self.0.create_buffer(usage, data.as_slice()))
    }

    fn write_buffer(&mut self, buffer: BufferId, offset: u64, data: RSlice<'_, u8>) -> XrResult<()> {
        guard(|| self.0.write_buffer(buffer, offset, data.as_slice()))
    }

    fn read_buffer(&mut self, buffer: BufferId) -> XrResult<RVec<u8>> {
        guard(|| self.0.read_buffer(buffer).map(RVec::from))
    }

    fn texture_binding(&self, texture: TextureId, sampler: ROption<SamplerId>) -> XrResult<ResourceBinding> {
        guard(|| self.0.texture_binding(texture, sampler.into_option()))
    }

    fn buffer_binding(&self, buffer: BufferId) -> XrResult<ResourceBinding> {
        guard(|| self.0.buffer_binding(buffer))
    }

    fn dispatch(&mut self, call: &ComputeCall) -> XrResult<()> {
        guard(|| self.0.dispatch(call))
    }

    fn create_render_target_with(&mut self, desc: &RenderTargetDesc) -> XrResult<RenderTargetId> {
        guard(|| {
            desc.check()?;
            self.0.create_render_target_with(desc)
        })
    }

    fn render_target_texture(&mut self, target: RenderTargetId, attachment: u32) -> XrResult<TextureId> {
        guard(|| self.0.render_target_texture(target, attachment))
    }

    fn take_validation_messages(&mut self) -> XrResult<RVec<RString>> {
        guard(|| Ok(self.0.take_validation_messages()?.into_iter().map(RString::from).collect()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{capabilities::DeviceKind, error::ErrorKind};

    struct Broken;

    impl DeviceSystemBackend for Broken {
        fn info(&self) -> Result<DeviceSystemInfo, XrError> {
            Ok(DeviceSystemInfo { name: "broken".into(), kind: DeviceKind::OpenGl, description: "".into() })
        }

        fn open(&self, _options: &DeviceOptions) -> Result<DeviceBox, XrError> {
            panic!("open is broken")
        }
    }

    #[test]
    fn the_adapter_passes_results_and_catches_panics() {
        let system = Guarded(Broken);
        assert_eq!(DeviceSystem::info(&system).into_result().map(|i| i.name), Ok("broken".into()));
        let error = DeviceSystem::open(&system, &DeviceOptions::default()).into_result().err().map(|e| e.kind);
        assert_eq!(error, Some(ErrorKind::Panic));
    }
}
