//! The command surface on a wgpu device: targets, buffers, textures,
//! samplers, draws, dispatches and pixels read back. Each call records
//! its commands, submits them and waits, so that a later call (a read
//! above all) sees everything before it.

use crate::{
    context::{CONTEXT_HANDLE, Context},
    objects::{Buffer, DEPTH_FORMAT, Target, Texture, VertexBuffer, get, wgpu_format},
    present::Presenter,
    program::DrawState,
    readback,
};
use abi_stable::std_types::{ROption, RSlice, RString, RVec};
use std::sync::Arc;
use xr_device::{
    BufferId, BufferUsage, ComputeCall, DeviceBackend, DeviceCapabilities, DeviceCounter, DrawCall, DrawWith, Filter,
    Image, NamedHandle, NativeHandles, NotReadyCounts, Presented, ProgramRef, Readiness, RenderTargetDesc,
    RenderTargetId, ResourceBinding, SamplerDesc, SamplerId, TextureDesc, TextureFormat, TextureId, VertexBufferId,
    VertexLayout, Wrap, XrError, check_buffer_write, check_target_size, decide, readiness::STILL_COMPILING,
};

/// An open device of the wgpu device system.
pub struct WgpuDevice {
    /// The window's surface: dropped before the device.
    presenter: Option<Presenter>,
    context: Arc<Context>,
    handles: &'static [NamedHandle],
    /// Draws skipped or drawn by a fallback while a pipeline was being made.
    not_ready: NotReadyCounts,
}

impl WgpuDevice {
    /// Opens a headless device.
    pub fn open(api: crate::context::Api, options: &xr_device::DeviceOptions) -> Result<Self, XrError> {
        let (context, surface) = Context::open(api, options)?;
        let presenter = match (surface, options.window) {
            (Some(surface), ROption::RSome(window)) => {
                Some(Presenter::new(&context, &context.adapter, surface, (window.width, window.height))?)
            }
            _ => None,
        };
        // The handle list lives as long as the program: a few bytes per
        // device opened, where the contract asks for a 'static list.
        let handles =
            Box::leak(Box::new([NamedHandle { name: CONTEXT_HANDLE.into(), address: Arc::as_ptr(&context) as usize }]));
        Ok(Self { presenter, context, handles, not_ready: NotReadyCounts::default() })
    }

    fn encoder(&self) -> wgpu::CommandEncoder {
        self.context.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("xr") })
    }

    fn make_target(&mut self, desc: &RenderTargetDesc) -> Result<RenderTargetId, XrError> {
        desc.check()?;
        let size = wgpu::Extent3d { width: desc.width, height: desc.height, depth_or_array_layers: 1 };
        let texture = |format, usage| {
            self.context.device.create_texture(&wgpu::TextureDescriptor {
                label: Some("xr render target"),
                size,
                mip_level_count: 1,
                sample_count: 1,
                dimension: wgpu::TextureDimension::D2,
                format,
                usage,
                view_formats: &[],
            })
        };
        let color_usage = wgpu::TextureUsages::RENDER_ATTACHMENT
            | wgpu::TextureUsages::COPY_SRC
            | wgpu::TextureUsages::COPY_DST
            | wgpu::TextureUsages::TEXTURE_BINDING;
        let target = self.context.checked("making a render target", || {
            Ok(Target {
                size: (desc.width, desc.height),
                colors: desc.colors.iter().map(|f| (texture(wgpu_format(*f), color_usage), *f)).collect(),
                depth: desc.depth.then(|| texture(DEPTH_FORMAT, wgpu::TextureUsages::RENDER_ATTACHMENT)),
            })
        })?;
        let mut objects = self.context.objects();
        objects.targets.push(target);
        Ok(RenderTargetId(objects.targets.len() as u32 - 1))
    }

    /// Records a render pass into `target`, clearing it to `clear` or
    /// keeping what it holds, and lets `body` draw in it.
    fn pass(
        &self,
        target: &Target,
        clear: Option<[f32; 4]>,
        body: impl FnOnce(&mut wgpu::RenderPass<'_>),
    ) -> wgpu::CommandEncoder {
        let views: Vec<wgpu::TextureView> =
            target.colors.iter().map(|(t, _)| t.create_view(&wgpu::TextureViewDescriptor::default())).collect();
        let depth_view = target.depth.as_ref().map(|t| t.create_view(&wgpu::TextureViewDescriptor::default()));
        let color_load = match clear {
            Some([r, g, b, a]) => {
                wgpu::LoadOp::Clear(wgpu::Color { r: r.into(), g: g.into(), b: b.into(), a: a.into() })
            }
            None => wgpu::LoadOp::Load,
        };
        let attachments: Vec<Option<wgpu::RenderPassColorAttachment>> = views
            .iter()
            .map(|view| {
                Some(wgpu::RenderPassColorAttachment {
                    view,
                    depth_slice: None,
                    resolve_target: None,
                    ops: wgpu::Operations { load: color_load, store: wgpu::StoreOp::Store },
                })
            })
            .collect();
        let mut encoder = self.encoder();
        {
            let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("xr"),
                color_attachments: &attachments,
                depth_stencil_attachment: depth_view.as_ref().map(|view| wgpu::RenderPassDepthStencilAttachment {
                    view,
                    depth_ops: Some(wgpu::Operations {
                        load: if clear.is_some() { wgpu::LoadOp::Clear(1.0) } else { wgpu::LoadOp::Load },
                        store: wgpu::StoreOp::Store,
                    }),
                    stencil_ops: None,
                }),
                timestamp_writes: None,
                occlusion_query_set: None,
                multiview_mask: None,
            });
            body(&mut pass);
        }
        encoder
    }
}

impl Drop for WgpuDevice {
    fn drop(&mut self) {
        self.context.close();
    }
}

/// The handle of object `id` in a resource binding: never 0, which names
/// no object (the sampler field's "none").
fn handle_of(id: u32) -> u64 {
    u64::from(id) + 1
}

fn unsupported(what: &str) -> XrError {
    XrError::unavailable(format!("the wgpu device system has no {what}"))
}

impl DeviceBackend for WgpuDevice {
    fn capabilities(&self) -> Result<DeviceCapabilities, XrError> {
        let info = &self.context.info;
        let mut extensions: Vec<RString> =
            self.context.device.features().iter_names().map(|(name, _)| RString::from(name)).collect();
        extensions.sort();
        Ok(DeviceCapabilities {
            kind: self.context.api.kind(),
            api_major: crate::WGPU_MAJOR,
            api_minor: 0,
            vendor: format!("0x{:04x}", info.vendor).into(),
            renderer: format!("{} ({:?})", info.name, info.backend).into(),
            driver_version: format!("{} {}", info.driver, info.driver_info).trim().into(),
            shading_language_version: "WGSL".into(),
            extensions: extensions.into(),
            program_binary_formats: RVec::new(),
            gl_spirv: false,
            separate_shader_objects: false,
            pipeline_cache_uuid: [0; 16],
            vendor_id: info.vendor,
            device_id: info.device,
            driver_version_code: 0,
            device_type: match info.device_type {
                wgpu::DeviceType::Cpu => "cpu",
                wgpu::DeviceType::IntegratedGpu => "integrated-gpu",
                wgpu::DeviceType::DiscreteGpu => "discrete-gpu",
                wgpu::DeviceType::VirtualGpu => "virtual-gpu",
                wgpu::DeviceType::Other => "other",
            }
            .into(),
        })
    }

    fn native_handles(&self) -> Result<NativeHandles, XrError> {
        Ok(NativeHandles {
            kind: self.context.api.kind(),
            gl: ROption::RNone,
            vulkan: ROption::RNone,
            named: RSlice::from_slice(self.handles),
        })
    }

    fn create_render_target(&mut self, width: u32, height: u32) -> Result<RenderTargetId, XrError> {
        let _keep = self.context.keep_current();
        let desc = RenderTargetDesc { width, height, colors: vec![TextureFormat::Rgba8].into(), depth: false };
        self.make_target(&desc)
    }

    fn create_vertex_buffer(&mut self, vertices: &[f32], layout: &VertexLayout) -> Result<VertexBufferId, XrError> {
        let _keep = self.context.keep_current();
        layout.check()?;
        let bytes: Vec<u8> = vertices.iter().flat_map(|v| v.to_le_bytes()).collect();
        let buffer = self.context.checked("making a vertex buffer", || {
            let buffer = self.context.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("xr vertices"),
                size: (bytes.len() as u64).max(4),
                usage: wgpu::BufferUsages::VERTEX | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            self.context.queue.write_buffer(&buffer, 0, &bytes);
            Ok(buffer)
        })?;
        let mut objects = self.context.objects();
        objects.vertex_buffers.push(VertexBuffer { buffer, layout: layout.clone() });
        Ok(VertexBufferId(objects.vertex_buffers.len() as u32 - 1))
    }

    fn clear(&mut self, target: RenderTargetId, rgba: &[f32; 4]) -> Result<(), XrError> {
        let _keep = self.context.keep_current();
        let objects = self.context.objects();
        let target = get(&objects.targets, target.0, "render target")?;
        let encoder = self.pass(target, Some(*rgba), |_| {});
        self.context.checked("clearing a render target", || self.context.submit(encoder))
    }

    fn draw(&mut self, draw: &DrawCall) -> Result<(), XrError> {
        let _keep = self.context.keep_current();
        let objects = self.context.objects();
        let target = get(&objects.targets, draw.target.0, "render target")?;
        let vertices = get(&objects.vertex_buffers, draw.vertex_buffer.0, "vertex buffer")?;
        let program_of = |program: ProgramRef| {
            objects
                .programs
                .get(&program.name)
                .cloned()
                .ok_or_else(|| XrError::invalid_input(format!("no program {} on this device", program.name)))
        };
        program_of(draw.program)?;
        if draw.depth_test && target.depth.is_none() {
            return Err(XrError::invalid_input("a draw with the depth test needs a target with depth"));
        }
        let state = DrawState::new(
            target.colors.iter().map(|(_, f)| *f).collect(),
            target.depth.is_some(),
            draw.depth_test,
            &vertices.layout,
        );
        // Under a policy that does not wait, a pipeline not made yet is
        // started on a worker thread and the draw goes on without it.
        let mut made = None;
        let decision = decide(draw.program, draw.when_not_ready, |candidate| {
            let pipeline = program_of(candidate)?.render_pipeline_without_waiting(&self.context, &state)?;
            let readiness = if pipeline.is_some() { Readiness::Ready } else { Readiness::Compiling };
            made = pipeline.map(|pipeline| (candidate, pipeline)).or(made.take());
            Ok(readiness)
        })?;
        self.not_ready.count(decision);
        let chosen = match decision {
            DrawWith::Program(chosen) | DrawWith::Fallback(chosen) => chosen,
            DrawWith::Skip => return Ok(()),
        };
        let program = program_of(chosen)?;
        let pipeline = match made {
            Some((of, pipeline)) if of == chosen => pipeline,
            _ => program.render_pipeline(&self.context, &state)?,
        };
        let groups = program.bind_groups(&self.context, &objects)?;
        let immediates = program.values().immediates.clone();
        let indices = match draw.index_buffer {
            ROption::RSome(id) => Some(&get(&objects.buffers, id.0, "index buffer")?.buffer),
            ROption::RNone => None,
        };
        let range = draw.first_vertex..draw.first_vertex + draw.vertex_count;
        let encoder = self.pass(target, None, |pass| {
            pass.set_pipeline(&pipeline);
            for (index, group) in groups.iter().enumerate() {
                pass.set_bind_group(index as u32, group, &[]);
            }
            if !immediates.is_empty() {
                pass.set_immediates(0, &immediates);
            }
            pass.set_vertex_buffer(0, vertices.buffer.slice(..));
            match indices {
                Some(buffer) => {
                    pass.set_index_buffer(buffer.slice(..), wgpu::IndexFormat::Uint32);
                    pass.draw_indexed(range.clone(), 0, 0..1);
                }
                None => pass.draw(range.clone(), 0..1),
            }
        });
        self.context.checked(&format!("drawing '{}'", program.name), || self.context.submit(encoder))
    }

    fn read_pixels(&mut self, target: RenderTargetId) -> Result<Image, XrError> {
        let _keep = self.context.keep_current();
        let objects = self.context.objects();
        let target = get(&objects.targets, target.0, "render target")?;
        let (texture, format) = &target.colors[0];
        if *format != TextureFormat::Rgba8 {
            return Err(XrError::invalid_input("read_pixels reads an RGBA8 attachment 0"));
        }
        let rgba = readback::texture(&self.context, texture, 0, 4)?;
        Ok(Image { width: target.size.0, height: target.size.1, rgba: rgba.into() })
    }

    fn resize_window(&mut self, width: u32, height: u32) -> Result<(), XrError> {
        let presenter = self.presenter.as_mut().ok_or_else(|| unsupported("window: it was opened headless"))?;
        presenter.resize(&self.context, width, height)
    }

    fn present(&mut self, target: RenderTargetId, capture: bool) -> Result<Presented, XrError> {
        let presenter = self.presenter.as_mut().ok_or_else(|| unsupported("window: it was opened headless"))?;
        let objects = self.context.objects();
        let target = get(&objects.targets, target.0, "render target")?;
        presenter.present(&self.context, target, capture)
    }

    fn create_depth_render_target(&mut self, width: u32, height: u32) -> Result<RenderTargetId, XrError> {
        let _keep = self.context.keep_current();
        check_target_size(width, height)?;
        let desc = RenderTargetDesc { width, height, colors: vec![TextureFormat::Rgba8].into(), depth: true };
        self.make_target(&desc)
    }

    fn create_texture(&mut self, desc: &TextureDesc, pixels: &[u8], levels_given: u32) -> Result<TextureId, XrError> {
        let _keep = self.context.keep_current();
        desc.check_pixels(pixels.len(), levels_given)?;
        let levels = desc.levels();
        let mut data = pixels.to_vec();
        if levels_given < levels {
            if levels_given != 1 {
                return Err(XrError::invalid_input("give one level, or every level"));
            }
            data = crate::mips::generate(desc, pixels)?;
        }
        let mut usage =
            wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST | wgpu::TextureUsages::COPY_SRC;
        if desc.storage {
            usage |= wgpu::TextureUsages::STORAGE_BINDING;
        }
        let texture = self.context.checked("making a texture", || {
            let texture = self.context.device.create_texture(&wgpu::TextureDescriptor {
                label: Some("xr texture"),
                size: wgpu::Extent3d { width: desc.width, height: desc.height, depth_or_array_layers: 1 },
                mip_level_count: levels,
                sample_count: 1,
                dimension: wgpu::TextureDimension::D2,
                format: wgpu_format(desc.format),
                usage,
                view_formats: &[],
            });
            for level in desc.packed_levels(levels) {
                let row = level.width as usize * desc.format.bytes_per_pixel();
                self.context.queue.write_texture(
                    wgpu::TexelCopyTextureInfo {
                        texture: &texture,
                        mip_level: level.level,
                        origin: wgpu::Origin3d::ZERO,
                        aspect: wgpu::TextureAspect::All,
                    },
                    &data[level.bytes],
                    wgpu::TexelCopyBufferLayout { offset: 0, bytes_per_row: Some(row as u32), rows_per_image: None },
                    wgpu::Extent3d { width: level.width, height: level.height, depth_or_array_layers: 1 },
                );
            }
            Ok(texture)
        })?;
        let mut objects = self.context.objects();
        objects.textures.push(Texture { texture, format: desc.format, storage: desc.storage });
        Ok(TextureId(objects.textures.len() as u32 - 1))
    }

    fn read_texture(&mut self, texture: TextureId, level: u32) -> Result<Vec<u8>, XrError> {
        let _keep = self.context.keep_current();
        let objects = self.context.objects();
        let texture = get(&objects.textures, texture.0, "texture")?;
        if level >= texture.texture.mip_level_count() {
            return Err(XrError::invalid_input(format!(
                "no level {level}: the texture has {} level(s)",
                texture.texture.mip_level_count()
            )));
        }
        readback::texture(&self.context, &texture.texture, level, texture.format.bytes_per_pixel())
    }

    fn create_sampler(&mut self, desc: &SamplerDesc) -> Result<SamplerId, XrError> {
        let _keep = self.context.keep_current();
        let filter = |f: Filter| match f {
            Filter::Nearest => wgpu::FilterMode::Nearest,
            Filter::Linear => wgpu::FilterMode::Linear,
        };
        let wrap = match desc.wrap {
            Wrap::Repeat => wgpu::AddressMode::Repeat,
            Wrap::MirroredRepeat => wgpu::AddressMode::MirrorRepeat,
            Wrap::ClampToEdge => wgpu::AddressMode::ClampToEdge,
        };
        let sampler = self.context.device.create_sampler(&wgpu::SamplerDescriptor {
            label: Some("xr sampler"),
            address_mode_u: wrap,
            address_mode_v: wrap,
            address_mode_w: wrap,
            mag_filter: filter(desc.filter),
            min_filter: filter(desc.filter),
            mipmap_filter: match desc.mipmap {
                Filter::Nearest => wgpu::MipmapFilterMode::Nearest,
                Filter::Linear => wgpu::MipmapFilterMode::Linear,
            },
            ..Default::default()
        });
        let mut objects = self.context.objects();
        objects.samplers.push(sampler);
        Ok(SamplerId(objects.samplers.len() as u32 - 1))
    }

    fn create_buffer(&mut self, usage: BufferUsage, data: &[u8]) -> Result<BufferId, XrError> {
        let _keep = self.context.keep_current();
        let mut wgpu_usage = wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::COPY_SRC;
        for (bit, flag) in [
            (BufferUsage::VERTEX, wgpu::BufferUsages::VERTEX),
            (BufferUsage::INDEX, wgpu::BufferUsages::INDEX),
            (BufferUsage::UNIFORM, wgpu::BufferUsages::UNIFORM),
            (BufferUsage::STORAGE, wgpu::BufferUsages::STORAGE),
        ] {
            if usage.contains(bit) {
                wgpu_usage |= flag;
            }
        }
        let padded = data.len().next_multiple_of(4).max(4);
        let buffer = self.context.checked("making a buffer", || {
            let buffer = self.context.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("xr buffer"),
                size: padded as u64,
                usage: wgpu_usage,
                mapped_at_creation: false,
            });
            let mut bytes = data.to_vec();
            bytes.resize(padded, 0);
            self.context.queue.write_buffer(&buffer, 0, &bytes);
            Ok(buffer)
        })?;
        let mut objects = self.context.objects();
        objects.buffers.push(Buffer { buffer, size: data.len() as u64, usage });
        Ok(BufferId(objects.buffers.len() as u32 - 1))
    }

    fn write_buffer(&mut self, buffer: BufferId, offset: u64, data: &[u8]) -> Result<(), XrError> {
        let _keep = self.context.keep_current();
        let (size, aligned) = {
            let objects = self.context.objects();
            let found = get(&objects.buffers, buffer.0, "buffer")?;
            (found.size, offset.is_multiple_of(4) && data.len().is_multiple_of(4))
        };
        check_buffer_write(buffer, offset, data.len(), size as usize)?;
        // wgpu copies whole words: a write that is not one is merged into
        // the words it touches, read back first.
        let (start, bytes) = if aligned {
            (offset, data.to_vec())
        } else {
            let mut whole = self.read_buffer(buffer)?;
            whole.resize((size as usize).next_multiple_of(4), 0);
            whole[offset as usize..offset as usize + data.len()].copy_from_slice(data);
            let start = offset as usize / 4 * 4;
            let end = (offset as usize + data.len()).next_multiple_of(4);
            (start as u64, whole[start..end].to_vec())
        };
        let objects = self.context.objects();
        let found = get(&objects.buffers, buffer.0, "buffer")?;
        self.context.checked("writing a buffer", || {
            self.context.queue.write_buffer(&found.buffer, start, &bytes);
            self.context.submit(self.encoder())
        })
    }

    fn read_buffer(&mut self, buffer: BufferId) -> Result<Vec<u8>, XrError> {
        let _keep = self.context.keep_current();
        let objects = self.context.objects();
        let found = get(&objects.buffers, buffer.0, "buffer")?;
        let mut bytes = readback::buffer(&self.context, &found.buffer)?;
        bytes.truncate(found.size as usize);
        Ok(bytes)
    }

    fn texture_binding(&self, texture: TextureId, sampler: Option<SamplerId>) -> Result<ResourceBinding, XrError> {
        let objects = self.context.objects();
        let found = get(&objects.textures, texture.0, "texture")?;
        if let Some(sampler) = sampler {
            get(&objects.samplers, sampler.0, "sampler")?;
        }
        Ok(ResourceBinding {
            device: self.context.id,
            is_texture: true,
            handle: handle_of(texture.0),
            object: handle_of(texture.0),
            sampler: sampler.map_or(0, |s| u64::from(s.0) + 1),
            size: TextureFormat::ALL.iter().position(|f| *f == found.format).unwrap_or(0) as u64,
            storage: found.storage,
            acceleration_structure: false,
        })
    }

    fn buffer_binding(&self, buffer: BufferId) -> Result<ResourceBinding, XrError> {
        let objects = self.context.objects();
        let found = get(&objects.buffers, buffer.0, "buffer")?;
        Ok(ResourceBinding {
            device: self.context.id,
            is_texture: false,
            handle: handle_of(buffer.0),
            object: handle_of(buffer.0),
            sampler: 0,
            size: found.size,
            storage: found.usage.contains(BufferUsage::STORAGE),
            acceleration_structure: false,
        })
    }

    fn dispatch(&mut self, call: &ComputeCall) -> Result<(), XrError> {
        let _keep = self.context.keep_current();
        let objects = self.context.objects();
        let program = objects
            .programs
            .get(&call.program.name)
            .ok_or_else(|| XrError::invalid_input(format!("no program {} on this device", call.program.name)))?
            .clone();
        let pipeline = program.compute_pipeline(&self.context)?;
        let groups = program.bind_groups(&self.context, &objects)?;
        let immediates = program.values().immediates.clone();
        let mut encoder = self.encoder();
        {
            let mut pass =
                encoder.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("xr"), timestamp_writes: None });
            pass.set_pipeline(&pipeline);
            for (index, group) in groups.iter().enumerate() {
                pass.set_bind_group(index as u32, group, &[]);
            }
            if !immediates.is_empty() {
                pass.set_immediates(0, &immediates);
            }
            let [x, y, z] = call.groups;
            pass.dispatch_workgroups(x, y, z);
        }
        self.context.checked(&format!("dispatching '{}'", program.name), || self.context.submit(encoder))
    }

    fn create_render_target_with(&mut self, desc: &RenderTargetDesc) -> Result<RenderTargetId, XrError> {
        let _keep = self.context.keep_current();
        self.make_target(desc)
    }

    fn render_target_texture(&mut self, target: RenderTargetId, attachment: u32) -> Result<TextureId, XrError> {
        let _keep = self.context.keep_current();
        let mut objects = self.context.objects();
        let found = get(&objects.targets, target.0, "render target")?;
        let (texture, format) = found.colors.get(attachment as usize).cloned().ok_or_else(|| {
            XrError::invalid_input(format!("render target {} has no attachment {attachment}", target.0))
        })?;
        objects.textures.push(Texture { texture, format, storage: false });
        Ok(TextureId(objects.textures.len() as u32 - 1))
    }

    fn take_validation_messages(&mut self) -> Result<Vec<String>, XrError> {
        // wgpu's validation errors fail the call that caused them (error scopes).
        Ok(Vec::new())
    }

    fn counters(&self) -> Result<Vec<DeviceCounter>, XrError> {
        let mut counters = self.context.counters();
        counters.extend(self.not_ready.counters());
        let compiling = self.context.objects().programs.values().map(|p| p.still_compiling() as u64).sum();
        counters.push(DeviceCounter { name: STILL_COMPILING.into(), value: compiling });
        Ok(counters)
    }

    /// `Ready` where the program has a pipeline for the target's formats
    /// (a pipeline is made per vertex layout and depth test too, which a
    /// target does not say: a draw of another layout may still make one).
    fn readiness(&self, program: ProgramRef, target: RenderTargetId) -> Result<Readiness, XrError> {
        let objects = self.context.objects();
        let target = get(&objects.targets, target.0, "render target")?;
        let program = objects
            .programs
            .get(&program.name)
            .ok_or_else(|| XrError::invalid_input(format!("no program {} on this device", program.name)))?;
        let colors: Vec<TextureFormat> = target.colors.iter().map(|(_, format)| *format).collect();
        Ok(if program.made_for_target(&colors, target.depth.is_some()) {
            Readiness::Ready
        } else {
            Readiness::Compiling
        })
    }
}
