//! Presenting into the host's window through a wgpu surface: each frame
//! draws the render target over the whole surface texture (texels as they
//! are at the same size, filtered when the window is another size) and,
//! when asked, reads the presented image back from the surface texture.

use crate::{context::Context, objects::Target};
use abi_stable::std_types::ROption;
use xr_device::{Image, PresentStatus, Presented, XrError};

/// The blit: a triangle over the surface, sampling the target.
const BLIT: &str = r#"
@group(0) @binding(0) var source: texture_2d<f32>;
@group(0) @binding(1) var scaling: sampler;
struct Out { @builtin(position) position: vec4<f32>, @location(0) uv: vec2<f32> };
@vertex fn vertex(@builtin(vertex_index) index: u32) -> Out {
    let uv = vec2<f32>(f32((index << 1u) & 2u), f32(index & 2u));
    var out: Out;
    out.position = vec4<f32>(uv.x * 2.0 - 1.0, 1.0 - uv.y * 2.0, 0.0, 1.0);
    out.uv = uv;
    return out;
}
@fragment fn fragment(in: Out) -> @location(0) vec4<f32> {
    return textureSampleLevel(source, scaling, in.uv, 0.0);
}
"#;

/// A window's surface and what draws into it.
pub struct Presenter {
    surface: wgpu::Surface<'static>,
    config: wgpu::SurfaceConfiguration,
    pipeline: wgpu::RenderPipeline,
    layout: wgpu::BindGroupLayout,
    /// Nearest at the same size, linear when scaled.
    samplers: [wgpu::Sampler; 2],
    /// Whether the surface texture can be copied out (a capture).
    readable: bool,
}

impl Presenter {
    /// Configures `surface` for the window's `size` on `context`'s device.
    pub fn new(
        context: &Context,
        adapter: &wgpu::Adapter,
        surface: wgpu::Surface<'static>,
        size: (u32, u32),
    ) -> Result<Self, XrError> {
        let capabilities = surface.get_capabilities(adapter);
        // Formats a blit writes unchanged and a capture reads as 4 bytes a pixel.
        let format = [wgpu::TextureFormat::Rgba8Unorm, wgpu::TextureFormat::Bgra8Unorm]
            .into_iter()
            .find(|f| capabilities.formats.contains(f))
            .ok_or_else(|| {
                XrError::unavailable(format!(
                    "the window's surface offers no RGBA8 or BGRA8 format ({:?})",
                    capabilities.formats
                ))
            })?;
        let readable = capabilities.usages.contains(wgpu::TextureUsages::COPY_SRC);
        let usage = wgpu::TextureUsages::RENDER_ATTACHMENT
            | if readable { wgpu::TextureUsages::COPY_SRC } else { wgpu::TextureUsages::empty() };
        let config = wgpu::SurfaceConfiguration {
            usage,
            format,
            width: size.0,
            height: size.1,
            present_mode: wgpu::PresentMode::Fifo,
            desired_maximum_frame_latency: 2,
            alpha_mode: capabilities.alpha_modes.first().copied().unwrap_or(wgpu::CompositeAlphaMode::Auto),
            view_formats: vec![],
            color_space: wgpu::SurfaceColorSpace::Auto,
        };
        let device = &context.device;
        context.checked("making the window's blit", || {
            let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some("xr blit"),
                source: wgpu::ShaderSource::Wgsl(BLIT.into()),
            });
            let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                label: Some("xr blit"),
                entries: &[
                    wgpu::BindGroupLayoutEntry {
                        binding: 0,
                        visibility: wgpu::ShaderStages::FRAGMENT,
                        ty: wgpu::BindingType::Texture {
                            sample_type: wgpu::TextureSampleType::Float { filterable: true },
                            view_dimension: wgpu::TextureViewDimension::D2,
                            multisampled: false,
                        },
                        count: None,
                    },
                    wgpu::BindGroupLayoutEntry {
                        binding: 1,
                        visibility: wgpu::ShaderStages::FRAGMENT,
                        ty: wgpu::BindingType::Sampler(wgpu::SamplerBindingType::Filtering),
                        count: None,
                    },
                ],
            });
            let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some("xr blit"),
                bind_group_layouts: &[Some(&layout)],
                immediate_size: 0,
            });
            let pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
                label: Some("xr blit"),
                layout: Some(&pipeline_layout),
                vertex: wgpu::VertexState {
                    module: &module,
                    entry_point: Some("vertex"),
                    compilation_options: Default::default(),
                    buffers: &[],
                },
                primitive: wgpu::PrimitiveState::default(),
                depth_stencil: None,
                multisample: Default::default(),
                fragment: Some(wgpu::FragmentState {
                    module: &module,
                    entry_point: Some("fragment"),
                    compilation_options: Default::default(),
                    targets: &[Some(wgpu::ColorTargetState {
                        format,
                        blend: None,
                        write_mask: wgpu::ColorWrites::ALL,
                    })],
                }),
                multiview_mask: None,
                cache: None,
            });
            let sampler = |filter| {
                device.create_sampler(&wgpu::SamplerDescriptor {
                    mag_filter: filter,
                    min_filter: filter,
                    ..Default::default()
                })
            };
            let samplers = [sampler(wgpu::FilterMode::Nearest), sampler(wgpu::FilterMode::Linear)];
            let presenter = Self { surface, config, pipeline, layout, samplers, readable };
            presenter.configure(context);
            Ok(presenter)
        })
    }

    fn configure(&self, context: &Context) {
        if self.config.width > 0 && self.config.height > 0 {
            self.surface.configure(&context.device, &self.config);
        }
    }

    /// The window's drawable area is now `width` × `height`.
    pub fn resize(&mut self, context: &Context, width: u32, height: u32) -> Result<(), XrError> {
        self.config.width = width;
        self.config.height = height;
        context.checked("resizing the window's surface", || {
            self.configure(context);
            Ok(())
        })
    }

    /// Shows `target` scaled to the window, reading it back with `capture`.
    pub fn present(&mut self, context: &Context, target: &Target, capture: bool) -> Result<Presented, XrError> {
        let skipped = Presented { status: PresentStatus::Skipped, image: ROption::RNone };
        if self.config.width == 0 || self.config.height == 0 {
            return Ok(skipped);
        }
        if capture && !self.readable {
            return Err(XrError::unavailable("the window's surface cannot be read back (no COPY_SRC usage)"));
        }
        let frame = match self.surface.get_current_texture() {
            wgpu::CurrentSurfaceTexture::Success(frame) | wgpu::CurrentSurfaceTexture::Suboptimal(frame) => frame,
            wgpu::CurrentSurfaceTexture::Outdated => {
                // The window changed under the surface: configure, and show the next frame.
                self.configure(context);
                return Ok(skipped);
            }
            wgpu::CurrentSurfaceTexture::Timeout | wgpu::CurrentSurfaceTexture::Occluded => return Ok(skipped),
            other => return Err(XrError::driver(format!("the window's surface gave no image: {other:?}"))),
        };
        let source = target.colors[0].0.create_view(&wgpu::TextureViewDescriptor::default());
        let scaled = target.size != (self.config.width, self.config.height);
        let group = context.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("xr blit"),
            layout: &self.layout,
            entries: &[
                wgpu::BindGroupEntry { binding: 0, resource: wgpu::BindingResource::TextureView(&source) },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: wgpu::BindingResource::Sampler(&self.samplers[usize::from(scaled)]),
                },
            ],
        });
        let view = frame.texture.create_view(&wgpu::TextureViewDescriptor::default());
        let mut encoder = context.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("xr") });
        {
            let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("xr present"),
                color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                    view: &view,
                    depth_slice: None,
                    resolve_target: None,
                    ops: wgpu::Operations {
                        load: wgpu::LoadOp::Clear(wgpu::Color::BLACK),
                        store: wgpu::StoreOp::Store,
                    },
                })],
                depth_stencil_attachment: None,
                timestamp_writes: None,
                occlusion_query_set: None,
                multiview_mask: None,
            });
            pass.set_pipeline(&self.pipeline);
            pass.set_bind_group(0, &group, &[]);
            pass.draw(0..3, 0..1);
        }
        context.submit(encoder)?;
        let image = if capture {
            let mut rgba = crate::readback::texture(context, &frame.texture, 0, 4)?;
            if self.config.format == wgpu::TextureFormat::Bgra8Unorm {
                rgba.chunks_exact_mut(4).for_each(|p| p.swap(0, 2));
            }
            ROption::RSome(Image { width: self.config.width, height: self.config.height, rgba: rgba.into() })
        } else {
            ROption::RNone
        };
        context.queue.present(frame);
        Ok(Presented { status: PresentStatus::Presented, image })
    }
}
