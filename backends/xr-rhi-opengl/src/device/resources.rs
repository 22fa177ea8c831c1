//! The device's objects: render targets, vertex buffers, textures and
//! samplers; and framebuffers read back into host memory.

use super::{GlDevice, RenderTarget, Texture, VertexBuffer};
use abi_stable::std_types::RVec;
use glow::HasContext;
use xr_device::{
    DeviceBackend, Filter, GivenLevels, Image, RenderTargetDesc, RenderTargetId, SamplerDesc, SamplerId, TextureDesc,
    TextureFormat, TextureId, VertexBufferId, VertexLayout, Wrap, XrError, checks,
};

impl GlDevice {
    pub(super) fn new_render_target(
        &mut self,
        width: u32,
        height: u32,
        with_depth: bool,
    ) -> Result<RenderTargetId, XrError> {
        xr_device::check_target_size(width, height)?;
        let gl = self.current()?;
        // SAFETY: objects are created and bound on the current context.
        let target = unsafe {
            let renderbuffer = gl.create_renderbuffer().map_err(XrError::driver)?;
            gl.bind_renderbuffer(glow::RENDERBUFFER, Some(renderbuffer));
            gl.renderbuffer_storage(glow::RENDERBUFFER, glow::RGBA8, width as i32, height as i32);
            let depth = if with_depth {
                let depth = gl.create_renderbuffer().map_err(XrError::driver)?;
                gl.bind_renderbuffer(glow::RENDERBUFFER, Some(depth));
                gl.renderbuffer_storage(glow::RENDERBUFFER, glow::DEPTH_COMPONENT32F, width as i32, height as i32);
                Some(depth)
            } else {
                None
            };
            let framebuffer = gl.create_framebuffer().map_err(XrError::driver)?;
            gl.bind_framebuffer(glow::FRAMEBUFFER, Some(framebuffer));
            gl.framebuffer_renderbuffer(
                glow::FRAMEBUFFER,
                glow::COLOR_ATTACHMENT0,
                glow::RENDERBUFFER,
                Some(renderbuffer),
            );
            if let Some(depth) = depth {
                gl.framebuffer_renderbuffer(glow::FRAMEBUFFER, glow::DEPTH_ATTACHMENT, glow::RENDERBUFFER, Some(depth));
            }
            let status = gl.check_framebuffer_status(glow::FRAMEBUFFER);
            gl.bind_framebuffer(glow::FRAMEBUFFER, None);
            if status != glow::FRAMEBUFFER_COMPLETE {
                return Err(XrError::driver(format!("framebuffer incomplete: 0x{status:04x}")));
            }
            RenderTarget { framebuffer, renderbuffer: Some(renderbuffer), colors: Vec::new(), depth, width, height }
        };
        self.targets.push(target);
        Ok(RenderTargetId((self.targets.len() - 1) as u32))
    }

    /// Reads `width` × `height` pixels of a framebuffer (`None`: the
    /// window's back buffer), top row first.
    pub(super) fn read_framebuffer(
        &self,
        framebuffer: Option<glow::Framebuffer>,
        width: u32,
        height: u32,
    ) -> Result<Image, XrError> {
        let gl = self.current()?;
        let row = width as usize * 4;
        let mut pixels = vec![0u8; row * height as usize];
        // SAFETY: the buffer holds exactly width*height RGBA8 pixels.
        unsafe {
            gl.bind_framebuffer(glow::READ_FRAMEBUFFER, framebuffer);
            if framebuffer.is_none() {
                gl.read_buffer(glow::BACK);
            }
            gl.pixel_store_i32(glow::PACK_ALIGNMENT, 1);
            gl.read_pixels(
                0,
                0,
                width as i32,
                height as i32,
                glow::RGBA,
                glow::UNSIGNED_BYTE,
                glow::PixelPackData::Slice(Some(&mut pixels)),
            );
            gl.bind_framebuffer(glow::READ_FRAMEBUFFER, None);
        }
        self.check_error("read pixels")?;
        // GL's first row is the bottom one; images start at the top.
        let rgba: Vec<u8> = pixels.chunks_exact(row).rev().flatten().copied().collect();
        Ok(Image { width, height, rgba: RVec::from(rgba) })
    }

    /// `DeviceBackend::create_vertex_buffer`: a vertex array over a buffer of `vertices`.
    pub(super) fn new_vertex_buffer(
        &mut self,
        vertices: &[f32],
        layout: &VertexLayout,
    ) -> Result<VertexBufferId, XrError> {
        layout.check()?;
        let gl = self.current()?;
        let bytes: Vec<u8> = vertices.iter().flat_map(|v| v.to_ne_bytes()).collect();
        let stride = (layout.stride * 4) as i32;
        // SAFETY: objects are created and bound on the current context.
        let vertex_buffer = unsafe {
            let vertex_array = gl.create_vertex_array().map_err(XrError::driver)?;
            gl.bind_vertex_array(Some(vertex_array));
            let buffer = gl.create_buffer().map_err(XrError::driver)?;
            gl.bind_buffer(glow::ARRAY_BUFFER, Some(buffer));
            gl.buffer_data_u8_slice(glow::ARRAY_BUFFER, &bytes, glow::STATIC_DRAW);
            for a in layout.attributes.iter() {
                gl.enable_vertex_attrib_array(a.location);
                gl.vertex_attrib_pointer_f32(
                    a.location,
                    a.components as i32,
                    glow::FLOAT,
                    false,
                    stride,
                    (a.offset * 4) as i32,
                );
            }
            gl.bind_vertex_array(None);
            gl.bind_buffer(glow::ARRAY_BUFFER, None);
            VertexBuffer { vertex_array, buffer }
        };
        self.check_error("creating a vertex buffer")?;
        self.vertex_buffers.push(vertex_buffer);
        Ok(VertexBufferId((self.vertex_buffers.len() - 1) as u32))
    }

    /// `DeviceBackend::create_texture`: a texture filled from the levels
    /// `given`, its other levels generated.
    pub(super) fn new_texture(&mut self, given: GivenLevels<'_>) -> Result<TextureId, XrError> {
        let desc = given.desc();
        let (internal, ty) = gl_format(desc.format);
        let levels = desc.levels();
        let gl = self.current()?;
        // SAFETY: a new texture on the current context, filled level by level
        // from the pixels given, whose length `given_levels` checked.
        let texture = unsafe {
            let texture = gl.create_texture().map_err(XrError::driver)?;
            gl.active_texture(glow::TEXTURE0);
            gl.bind_texture(glow::TEXTURE_2D, Some(texture));
            gl.tex_storage_2d(glow::TEXTURE_2D, levels as i32, internal, desc.width as i32, desc.height as i32);
            gl.pixel_store_i32(glow::UNPACK_ALIGNMENT, 1);
            for (level, pixels) in given.levels() {
                gl.tex_sub_image_2d(
                    glow::TEXTURE_2D,
                    level.level as i32,
                    0,
                    0,
                    level.width as i32,
                    level.height as i32,
                    glow::RGBA,
                    ty,
                    glow::PixelUnpackData::Slice(Some(pixels)),
                );
            }
            if given.count() < levels {
                gl.generate_mipmap(glow::TEXTURE_2D);
            }
            gl.tex_parameter_i32(glow::TEXTURE_2D, glow::TEXTURE_MAX_LEVEL, levels as i32 - 1);
            gl.bind_texture(glow::TEXTURE_2D, None);
            texture
        };
        self.check_error("creating a texture")?;
        self.textures.push(Texture { texture, desc: *desc });
        Ok(TextureId(self.textures.len() as u32 - 1))
    }

    /// `DeviceBackend::create_sampler`.
    pub(super) fn new_sampler(&mut self, desc: &SamplerDesc) -> Result<SamplerId, XrError> {
        let gl = self.current()?;
        let filter = |f: Filter| if f == Filter::Nearest { glow::NEAREST } else { glow::LINEAR };
        let min = match (desc.filter, desc.mipmap) {
            (Filter::Nearest, Filter::Nearest) => glow::NEAREST_MIPMAP_NEAREST,
            (Filter::Nearest, Filter::Linear) => glow::NEAREST_MIPMAP_LINEAR,
            (Filter::Linear, Filter::Nearest) => glow::LINEAR_MIPMAP_NEAREST,
            (Filter::Linear, Filter::Linear) => glow::LINEAR_MIPMAP_LINEAR,
        };
        let wrap = match desc.wrap {
            Wrap::Repeat => glow::REPEAT,
            Wrap::MirroredRepeat => glow::MIRRORED_REPEAT,
            Wrap::ClampToEdge => glow::CLAMP_TO_EDGE,
        };
        // SAFETY: a new sampler object on the current context.
        let sampler = unsafe {
            let sampler = gl.create_sampler().map_err(XrError::driver)?;
            gl.sampler_parameter_i32(sampler, glow::TEXTURE_MAG_FILTER, filter(desc.filter) as i32);
            gl.sampler_parameter_i32(sampler, glow::TEXTURE_MIN_FILTER, min as i32);
            gl.sampler_parameter_i32(sampler, glow::TEXTURE_WRAP_S, wrap as i32);
            gl.sampler_parameter_i32(sampler, glow::TEXTURE_WRAP_T, wrap as i32);
            sampler
        };
        self.check_error("creating a sampler")?;
        self.samplers.push(sampler);
        Ok(SamplerId(self.samplers.len() as u32 - 1))
    }

    /// `DeviceBackend::create_render_target_with`: a framebuffer whose colour
    /// attachments are new textures.
    pub(super) fn new_render_target_with(&mut self, desc: &RenderTargetDesc) -> Result<RenderTargetId, XrError> {
        // SAFETY: a plain query on the device's context.
        let limit = unsafe { self.current()?.get_parameter_i32(glow::MAX_DRAW_BUFFERS) }.max(0) as usize;
        checks::check_color_attachment_limit(desc.colors.len(), limit, "GL_MAX_DRAW_BUFFERS")?;
        let mut colors = Vec::new();
        for format in desc.colors.iter() {
            let texture =
                TextureDesc { width: desc.width, height: desc.height, format: *format, mip_levels: 1, storage: false };
            let pixels = vec![0u8; texture.bytes(1)];
            colors.push(self.create_texture(&texture, &pixels, 1)?);
        }
        let textures: Vec<glow::Texture> = colors.iter().map(|id| self.textures[id.0 as usize].texture).collect();
        let gl = self.current()?;
        // SAFETY: objects are created and bound on the current context.
        // (A failure leaves the attachment textures made above to the device,
        // which deletes them when it closes.)
        let target = unsafe {
            let framebuffer = gl.create_framebuffer().map_err(XrError::driver)?;
            let depth = if desc.depth {
                let depth = match gl.create_renderbuffer() {
                    Ok(depth) => depth,
                    Err(e) => {
                        gl.delete_framebuffer(framebuffer);
                        return Err(XrError::driver(e));
                    }
                };
                gl.bind_renderbuffer(glow::RENDERBUFFER, Some(depth));
                gl.renderbuffer_storage(
                    glow::RENDERBUFFER,
                    glow::DEPTH_COMPONENT32F,
                    desc.width as i32,
                    desc.height as i32,
                );
                Some(depth)
            } else {
                None
            };
            gl.bind_framebuffer(glow::FRAMEBUFFER, Some(framebuffer));
            for (i, texture) in textures.iter().enumerate() {
                gl.framebuffer_texture_2d(
                    glow::FRAMEBUFFER,
                    glow::COLOR_ATTACHMENT0 + i as u32,
                    glow::TEXTURE_2D,
                    Some(*texture),
                    0,
                );
            }
            if let Some(depth) = depth {
                gl.framebuffer_renderbuffer(glow::FRAMEBUFFER, glow::DEPTH_ATTACHMENT, glow::RENDERBUFFER, Some(depth));
            }
            let buffers: Vec<u32> = (0..textures.len() as u32).map(|i| glow::COLOR_ATTACHMENT0 + i).collect();
            gl.draw_buffers(&buffers);
            let status = gl.check_framebuffer_status(glow::FRAMEBUFFER);
            gl.bind_framebuffer(glow::FRAMEBUFFER, None);
            if status != glow::FRAMEBUFFER_COMPLETE {
                gl.delete_framebuffer(framebuffer);
                if let Some(depth) = depth {
                    gl.delete_renderbuffer(depth);
                }
                return Err(XrError::driver(format!("framebuffer incomplete: 0x{status:04x}")));
            }
            RenderTarget { framebuffer, renderbuffer: None, colors, depth, width: desc.width, height: desc.height }
        };
        self.check_error("creating a render target")?;
        self.targets.push(target);
        Ok(RenderTargetId((self.targets.len() - 1) as u32))
    }
}

/// The GL internal format and component type of a texture format.
pub(super) fn gl_format(format: TextureFormat) -> (u32, u32) {
    match format {
        TextureFormat::Rgba8 => (glow::RGBA8, glow::UNSIGNED_BYTE),
        TextureFormat::Rgba32Float => (glow::RGBA32F, glow::FLOAT),
        TextureFormat::Rgba16Float => (glow::RGBA16F, glow::HALF_FLOAT),
    }
}
