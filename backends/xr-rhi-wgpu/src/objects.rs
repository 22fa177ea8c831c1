//! What a wgpu device has made, by the ids XR hands out.

use crate::program::Program;
use std::{collections::HashMap, sync::Arc};
use xr_device::{BufferUsage, TextureFormat, VertexLayout, XrError};

/// A render target: its colour attachments (0 first) and its depth.
pub struct Target {
    /// Width and height.
    pub size: (u32, u32),
    /// Each attachment's texture and XR format.
    pub colors: Vec<(wgpu::Texture, TextureFormat)>,
    /// The 32-bit float depth attachment, where it has one.
    pub depth: Option<wgpu::Texture>,
}

/// A vertex buffer with its layout.
pub struct VertexBuffer {
    /// The buffer.
    pub buffer: wgpu::Buffer,
    /// How one vertex is laid out.
    pub layout: VertexLayout,
}

/// A texture (or a render target's attachment) with what XR knows of it.
pub struct Texture {
    /// The texture.
    pub texture: wgpu::Texture,
    /// Its format.
    pub format: TextureFormat,
    /// Writable by shaders.
    pub storage: bool,
}

/// A buffer with XR's usage bits.
pub struct Buffer {
    /// The buffer (its size rounded up to 4 bytes, as copies need).
    pub buffer: wgpu::Buffer,
    /// The size asked for.
    pub size: u64,
    /// What it is for.
    pub usage: BufferUsage,
}

/// Every object of one device, by id.
#[derive(Default)]
pub struct Objects {
    /// Render targets.
    pub targets: Vec<Target>,
    /// Vertex buffers.
    pub vertex_buffers: Vec<VertexBuffer>,
    /// Textures.
    pub textures: Vec<Texture>,
    /// Samplers.
    pub samplers: Vec<wgpu::Sampler>,
    /// Buffers.
    pub buffers: Vec<Buffer>,
    /// Programs the attached build system loaded, by `ProgramRef::name`.
    pub programs: HashMap<u32, Arc<Program>>,
    /// The next program name.
    pub next_program: u32,
}

/// `table[id]`, or an error naming what was asked for.
pub fn get<'a, T>(table: &'a [T], id: u32, what: &str) -> Result<&'a T, XrError> {
    table.get(id as usize).ok_or_else(|| XrError::invalid_input(format!("no {what} {id} on this device")))
}

/// The wgpu format of an XR texture format.
pub fn wgpu_format(format: TextureFormat) -> wgpu::TextureFormat {
    match format {
        TextureFormat::Rgba8 => wgpu::TextureFormat::Rgba8Unorm,
        TextureFormat::Rgba32Float => wgpu::TextureFormat::Rgba32Float,
        TextureFormat::Rgba16Float => wgpu::TextureFormat::Rgba16Float,
    }
}

/// The depth attachments' format.
pub const DEPTH_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Depth32Float;
