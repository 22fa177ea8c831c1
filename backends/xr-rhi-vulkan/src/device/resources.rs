//! The device's objects: render targets and their attachments, textures,
//! samplers and buffers, and images read back into host memory.

use super::{Attachment, DEPTH_FORMAT, DataBuffer, ImageRead, Target, Texture, VkDevice, vk_error};
use ash::vk;
use xr_device::{
    BufferId, BufferUsage, DeviceBackend, Filter, GivenLevels, RenderTargetId, SamplerDesc, SamplerId, TextureDesc,
    TextureId, Wrap, XrError, checks,
};
use xr_vulkan_common::formats::{texture_format, vk_format};

impl VkDevice {
    /// A render target of `colors` (attachment 0 first); its attachments
    /// are also textures when `textures` (see [`Target::textures`]).
    pub(super) fn new_target(
        &mut self,
        width: u32,
        height: u32,
        colors: &[vk::Format],
        with_depth: bool,
        textures: bool,
    ) -> Result<RenderTargetId, XrError> {
        xr_device::check_target_size(width, height)?;
        let limit = self.context.properties.limits.max_color_attachments as usize;
        checks::check_color_attachment_limit(colors.len(), limit, "maxColorAttachments")?;
        let mut usage = vk::ImageUsageFlags::COLOR_ATTACHMENT
            | vk::ImageUsageFlags::TRANSFER_SRC
            | vk::ImageUsageFlags::TRANSFER_DST;
        if textures {
            usage |= vk::ImageUsageFlags::SAMPLED | vk::ImageUsageFlags::INPUT_ATTACHMENT;
        }
        let mut target = Target { colors: Vec::new(), width, height, depth: None, textures };
        let made = (|| {
            for &format in colors {
                target.colors.push(self.attachment(width, height, format, usage, color_range())?);
            }
            if with_depth {
                let usage = vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT | vk::ImageUsageFlags::TRANSFER_DST;
                target.depth = Some(self.attachment(width, height, DEPTH_FORMAT, usage, depth_range())?);
            }
            if textures {
                self.submit("creating a render target", |cb| {
                    self.transition_colors(cb, &target, vk::ImageLayout::GENERAL);
                })?;
                target.colors.iter_mut().for_each(|c| c.layout = vk::ImageLayout::GENERAL);
            }
            Ok(())
        })();
        if let Err(e) = made {
            // SAFETY: nothing uses the images yet.
            unsafe { self.destroy_target(target) };
            return Err(e);
        }
        self.targets.push(target);
        self.check_validation("creating a render target")?;
        Ok(RenderTargetId(self.targets.len() as u32 - 1))
    }

    /// Destroys a target's images.
    ///
    /// # Safety
    /// No submission uses them.
    pub(super) unsafe fn destroy_target(&self, target: Target) {
        let device = &self.context.device;
        for attachment in target.colors.into_iter().chain(target.depth) {
            // SAFETY: the caller guarantees nothing uses them; each was made on this device.
            unsafe {
                device.destroy_image_view(attachment.view, None);
                device.destroy_image(attachment.image, None);
                device.free_memory(attachment.memory, None);
            }
        }
    }

    /// One image of a render target, `width` × `height` of `format`, with
    /// a view of `range`, in no layout yet.
    fn attachment(
        &self,
        width: u32,
        height: u32,
        format: vk::Format,
        usage: vk::ImageUsageFlags,
        range: vk::ImageSubresourceRange,
    ) -> Result<Attachment, XrError> {
        let info = vk::ImageCreateInfo::default()
            .image_type(vk::ImageType::TYPE_2D)
            .format(format)
            .extent(vk::Extent3D { width, height, depth: 1 })
            .mip_levels(1)
            .array_layers(1)
            .samples(vk::SampleCountFlags::TYPE_1)
            .tiling(vk::ImageTiling::OPTIMAL)
            .usage(usage)
            .initial_layout(vk::ImageLayout::UNDEFINED);
        let (image, memory, view) = self.image_with_view(&info, range)?;
        Ok(Attachment { image, memory, view, format, layout: vk::ImageLayout::UNDEFINED, texture: None })
    }

    /// A device-local 2D image as `info` describes it, with a view of `range`.
    fn image_with_view(
        &self,
        info: &vk::ImageCreateInfo<'_>,
        range: vk::ImageSubresourceRange,
    ) -> Result<(vk::Image, vk::DeviceMemory, vk::ImageView), XrError> {
        let device = &self.context.device;
        // SAFETY: valid create infos; the caller owns and destroys the objects.
        unsafe {
            let image = device.create_image(info, None).map_err(vk_error("vkCreateImage"))?;
            let memory =
                self.allocate(device.get_image_memory_requirements(image), vk::MemoryPropertyFlags::DEVICE_LOCAL)?;
            device.bind_image_memory(image, memory, 0).map_err(vk_error("vkBindImageMemory"))?;
            let view_info = vk::ImageViewCreateInfo::default()
                .image(image)
                .view_type(vk::ImageViewType::TYPE_2D)
                .format(info.format)
                .subresource_range(range);
            let view = device.create_image_view(&view_info, None).map_err(vk_error("vkCreateImageView"))?;
            Ok((image, memory, view))
        }
    }

    pub(super) fn target_index(&self, id: RenderTargetId) -> Result<usize, XrError> {
        checks::find(&self.targets, "render target", id.0)?;
        Ok(id.0 as usize)
    }

    pub(super) fn data_buffer(&self, id: BufferId) -> Result<&DataBuffer, XrError> {
        checks::find(&self.data_buffers, "buffer", id.0)
    }

    pub(super) fn texture(&self, id: TextureId) -> Result<&Texture, XrError> {
        checks::find(&self.textures, "texture", id.0)
    }

    /// Copies one level of an image into host memory, after `before` has
    /// recorded what puts it in `read.layout`.
    pub(super) fn read_image(
        &self,
        what: &str,
        read: ImageRead,
        before: impl FnOnce(vk::CommandBuffer),
    ) -> Result<Vec<u8>, XrError> {
        let size = u64::from(read.width) * u64::from(read.height) * read.bytes_per_pixel;
        let (buffer, memory) = self.host_buffer(size, vk::BufferUsageFlags::TRANSFER_DST)?;
        let result = self.submit(what, |cb| {
            before(cb);
            let region = vk::BufferImageCopy::default()
                .image_subresource(vk::ImageSubresourceLayers { mip_level: read.level, ..color_layers() })
                .image_extent(vk::Extent3D { width: read.width, height: read.height, depth: 1 });
            // SAFETY: recording; the image is in `read.layout` and the buffer large enough.
            unsafe { self.context.device.cmd_copy_image_to_buffer(cb, read.image, read.layout, buffer, &[region]) };
        });
        // SAFETY: the copy finished; the memory is host visible and coherent.
        unsafe {
            let pixels = result.and_then(|()| self.read_host(memory, size as usize));
            self.context.device.destroy_buffer(buffer, None);
            self.context.device.free_memory(memory, None);
            pixels
        }
    }

    /// `DeviceBackend::create_texture`: a texture filled from the levels
    /// `given`, its other levels blitted from them.
    pub(super) fn new_texture(&mut self, given: GivenLevels<'_>) -> Result<TextureId, XrError> {
        let (desc, pixels) = (given.desc(), given.pixels());
        let levels = desc.levels();
        let format = vk_format(desc.format);
        let device = &self.context.device;
        let mut usage =
            vk::ImageUsageFlags::SAMPLED | vk::ImageUsageFlags::TRANSFER_SRC | vk::ImageUsageFlags::TRANSFER_DST;
        if desc.storage {
            usage |= vk::ImageUsageFlags::STORAGE;
        }
        let info = vk::ImageCreateInfo::default()
            .image_type(vk::ImageType::TYPE_2D)
            .format(format)
            .extent(vk::Extent3D { width: desc.width, height: desc.height, depth: 1 })
            .mip_levels(levels)
            .array_layers(1)
            .samples(vk::SampleCountFlags::TYPE_1)
            .tiling(vk::ImageTiling::OPTIMAL)
            .usage(usage)
            .initial_layout(vk::ImageLayout::UNDEFINED);
        let range = vk::ImageSubresourceRange {
            aspect_mask: vk::ImageAspectFlags::COLOR,
            base_mip_level: 0,
            level_count: levels,
            base_array_layer: 0,
            layer_count: 1,
        };
        let (image, memory, view) = self.image_with_view(&info, range)?;
        self.textures.push(Texture { image, memory, view, desc: *desc, borrowed: false });
        let id = TextureId(self.textures.len() as u32 - 1);
        let (staging, staging_memory) = self.host_buffer(pixels.len() as u64, vk::BufferUsageFlags::TRANSFER_SRC)?;
        // SAFETY: new host-visible memory `pixels.len()` long.
        let filled = unsafe { self.write_host(staging_memory, 0, pixels) };
        let result = filled.and_then(|()| {
            self.submit("filling a texture", |cb| {
                self.barrier(cb, image, vk::ImageLayout::UNDEFINED, vk::ImageLayout::GENERAL, range);
                let regions: Vec<vk::BufferImageCopy> = desc
                    .packed_levels(given.count())
                    .map(|level| {
                        vk::BufferImageCopy::default()
                            .buffer_offset(level.bytes.start as u64)
                            .image_subresource(vk::ImageSubresourceLayers {
                                aspect_mask: vk::ImageAspectFlags::COLOR,
                                mip_level: level.level,
                                base_array_layer: 0,
                                layer_count: 1,
                            })
                            .image_extent(vk::Extent3D { width: level.width, height: level.height, depth: 1 })
                    })
                    .collect();
                // SAFETY: recording; the image is in GENERAL and the buffer holds every region.
                unsafe { device.cmd_copy_buffer_to_image(cb, staging, image, vk::ImageLayout::GENERAL, &regions) };
                // The other levels, each a linear blit of the one above.
                for level in given.count()..levels {
                    let above = level - 1;
                    let corner = |(w, h): (u32, u32)| vk::Offset3D { x: w as i32, y: h as i32, z: 1 };
                    let layers = |mip_level| vk::ImageSubresourceLayers {
                        aspect_mask: vk::ImageAspectFlags::COLOR,
                        mip_level,
                        base_array_layer: 0,
                        layer_count: 1,
                    };
                    let blit = vk::ImageBlit::default()
                        .src_subresource(layers(above))
                        .src_offsets([vk::Offset3D::default(), corner(desc.level_size(above))])
                        .dst_subresource(layers(level))
                        .dst_offsets([vk::Offset3D::default(), corner(desc.level_size(level))]);
                    let mut one = range;
                    one.base_mip_level = above;
                    one.level_count = 1;
                    self.barrier(cb, image, vk::ImageLayout::GENERAL, vk::ImageLayout::GENERAL, one);
                    // SAFETY: recording; both levels are in GENERAL.
                    unsafe {
                        device.cmd_blit_image(
                            cb,
                            image,
                            vk::ImageLayout::GENERAL,
                            image,
                            vk::ImageLayout::GENERAL,
                            &[blit],
                            vk::Filter::LINEAR,
                        );
                    }
                }
                self.barrier(cb, image, vk::ImageLayout::GENERAL, vk::ImageLayout::GENERAL, range);
            })
        });
        // SAFETY: the submission was waited for.
        unsafe {
            device.destroy_buffer(staging, None);
            device.free_memory(staging_memory, None);
        }
        result?;
        Ok(id)
    }

    /// `DeviceBackend::create_sampler`.
    pub(super) fn new_sampler(&mut self, desc: &SamplerDesc) -> Result<SamplerId, XrError> {
        let filter = |f: Filter| if f == Filter::Nearest { vk::Filter::NEAREST } else { vk::Filter::LINEAR };
        let mipmap =
            if desc.mipmap == Filter::Nearest { vk::SamplerMipmapMode::NEAREST } else { vk::SamplerMipmapMode::LINEAR };
        let wrap = match desc.wrap {
            Wrap::Repeat => vk::SamplerAddressMode::REPEAT,
            Wrap::MirroredRepeat => vk::SamplerAddressMode::MIRRORED_REPEAT,
            Wrap::ClampToEdge => vk::SamplerAddressMode::CLAMP_TO_EDGE,
        };
        let info = vk::SamplerCreateInfo::default()
            .mag_filter(filter(desc.filter))
            .min_filter(filter(desc.filter))
            .mipmap_mode(mipmap)
            .address_mode_u(wrap)
            .address_mode_v(wrap)
            .address_mode_w(wrap)
            .max_lod(vk::LOD_CLAMP_NONE);
        // SAFETY: a valid create info.
        let sampler =
            unsafe { self.context.device.create_sampler(&info, None) }.map_err(vk_error("vkCreateSampler"))?;
        self.samplers.push(sampler);
        Ok(SamplerId(self.samplers.len() as u32 - 1))
    }

    /// `DeviceBackend::create_buffer`: a host-visible buffer holding `data`.
    pub(super) fn new_data_buffer(&mut self, usage: BufferUsage, data: &[u8]) -> Result<BufferId, XrError> {
        checks::check_buffer_data(data.len())?;
        let mut flags = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
        for (bit, flag) in [
            (BufferUsage::VERTEX, vk::BufferUsageFlags::VERTEX_BUFFER),
            (BufferUsage::INDEX, vk::BufferUsageFlags::INDEX_BUFFER),
            (BufferUsage::UNIFORM, vk::BufferUsageFlags::UNIFORM_BUFFER),
            (BufferUsage::STORAGE, vk::BufferUsageFlags::STORAGE_BUFFER),
        ] {
            if usage.contains(bit) {
                flags |= flag;
            }
        }
        // Any buffer may hold an acceleration structure's triangles.
        if self.ray_tracing.is_some() {
            flags |= vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS
                | vk::BufferUsageFlags::ACCELERATION_STRUCTURE_BUILD_INPUT_READ_ONLY_KHR;
        }
        let (buffer, memory) = self.host_buffer(data.len() as u64, flags)?;
        self.data_buffers.push(DataBuffer { buffer, memory, size: data.len(), usage });
        let id = BufferId(self.data_buffers.len() as u32 - 1);
        self.write_buffer(id, 0, data)?;
        Ok(id)
    }

    /// `DeviceBackend::render_target_texture`: a colour attachment seen as a
    /// texture, made once and kept.
    pub(super) fn attachment_texture(&mut self, id: RenderTargetId, attachment: u32) -> Result<TextureId, XrError> {
        let index = self.target_index(id)?;
        let target = &self.targets[index];
        checks::check_attachment_texture(id, target.textures, target.colors.len(), attachment)?;
        let color = &target.colors[attachment as usize];
        if let Some(texture) = color.texture {
            return Ok(texture);
        }
        let format = texture_format(color.format)
            .ok_or_else(|| XrError::driver(format!("render target {}: unknown format {:?}", id.0, color.format)))?;
        let desc = TextureDesc { width: target.width, height: target.height, format, mip_levels: 1, storage: false };
        let texture = Texture { image: color.image, memory: color.memory, view: color.view, desc, borrowed: true };
        self.textures.push(texture);
        let id = TextureId(self.textures.len() as u32 - 1);
        self.targets[index].colors[attachment as usize].texture = Some(id);
        Ok(id)
    }
}

pub(super) fn color_layers() -> vk::ImageSubresourceLayers {
    vk::ImageSubresourceLayers {
        aspect_mask: vk::ImageAspectFlags::COLOR,
        mip_level: 0,
        base_array_layer: 0,
        layer_count: 1,
    }
}

pub(super) fn depth_range() -> vk::ImageSubresourceRange {
    vk::ImageSubresourceRange {
        aspect_mask: vk::ImageAspectFlags::DEPTH,
        base_mip_level: 0,
        level_count: 1,
        base_array_layer: 0,
        layer_count: 1,
    }
}

pub(super) fn color_range() -> vk::ImageSubresourceRange {
    vk::ImageSubresourceRange {
        aspect_mask: vk::ImageAspectFlags::COLOR,
        base_mip_level: 0,
        level_count: 1,
        base_array_layer: 0,
        layer_count: 1,
    }
}
