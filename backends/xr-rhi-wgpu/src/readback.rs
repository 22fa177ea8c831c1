//! Reading a texture level or a buffer back to the host.

use crate::context::Context;
use xr_device::XrError;

/// Level `level` of `texture` (`bytes_per_pixel` per texel), tightly
/// packed, rows from the first.
pub fn texture(
    context: &Context,
    texture: &wgpu::Texture,
    level: u32,
    bytes_per_pixel: usize,
) -> Result<Vec<u8>, XrError> {
    let width = (texture.width() >> level).max(1);
    let height = (texture.height() >> level).max(1);
    let row = width as usize * bytes_per_pixel;
    // Copies to a buffer take rows of a multiple of 256 bytes.
    let padded = row.next_multiple_of(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT as usize);
    let staging = context.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("xr read-back"),
        size: (padded * height as usize) as u64,
        usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
        mapped_at_creation: false,
    });
    let mut encoder = context.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("xr") });
    encoder.copy_texture_to_buffer(
        wgpu::TexelCopyTextureInfo {
            texture,
            mip_level: level,
            origin: wgpu::Origin3d::ZERO,
            aspect: wgpu::TextureAspect::All,
        },
        wgpu::TexelCopyBufferInfo {
            buffer: &staging,
            layout: wgpu::TexelCopyBufferLayout { offset: 0, bytes_per_row: Some(padded as u32), rows_per_image: None },
        },
        wgpu::Extent3d { width, height, depth_or_array_layers: 1 },
    );
    let mapped = context.checked("reading a texture back", || {
        context.submit(encoder)?;
        map(context, &staging)
    })?;
    Ok(mapped.chunks(padded).flat_map(|r| &r[..row]).copied().collect())
}

/// The whole of `buffer`.
pub fn buffer(context: &Context, buffer: &wgpu::Buffer) -> Result<Vec<u8>, XrError> {
    let staging = context.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("xr read-back"),
        size: buffer.size(),
        usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
        mapped_at_creation: false,
    });
    let mut encoder = context.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("xr") });
    encoder.copy_buffer_to_buffer(buffer, 0, &staging, 0, buffer.size());
    context.checked("reading a buffer back", || {
        context.submit(encoder)?;
        map(context, &staging)
    })
}

/// Maps `staging` after the queue is idle and copies it out.
fn map(context: &Context, staging: &wgpu::Buffer) -> Result<Vec<u8>, XrError> {
    let (sender, receiver) = std::sync::mpsc::channel();
    staging.slice(..).map_async(wgpu::MapMode::Read, move |result| {
        let _ = sender.send(result);
    });
    context
        .device
        .poll(wgpu::PollType::wait_indefinitely())
        .map_err(|e| XrError::driver(format!("waiting for a read-back: {e}")))?;
    receiver
        .recv()
        .map_err(|_| XrError::driver("a read-back was dropped unmapped"))?
        .map_err(|e| XrError::driver(format!("mapping a read-back: {e}")))?;
    let bytes = staging
        .slice(..)
        .get_mapped_range()
        .map_err(|e| XrError::driver(format!("reading a mapped read-back: {e}")))?
        .to_vec();
    staging.unmap();
    Ok(bytes)
}
