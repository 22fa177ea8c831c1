//! An open OpenGL device: capabilities and the small command surface.
//!
//! This module holds the device's types, its opening and closing, and the
//! [`DeviceBackend`] calls; binding programs for a draw or dispatch is in
//! `program`, making render targets, vertex buffers, textures and samplers
//! and reading framebuffers back in `resources`.

mod program;
mod readiness;
mod resources;

use crate::context::{self, GlContext};
use abi_stable::std_types::{ROption, RSlice, RString};
use glow::HasContext;
use resources::gl_format;
use std::rc::Rc;
use xr_device::{
    BufferId, BufferUsage, ComputeCall, DeviceBackend, DeviceCapabilities, DeviceCounter, DeviceKind, DeviceOptions,
    DrawCall, DrawWith, GlBindingSpace, Image, NativeHandles, NotReadyCounts, PresentStatus, Presented, ProgramRef,
    Readiness, RenderTargetDesc, RenderTargetId, ResourceBinding, SamplerDesc, SamplerId, TextureDesc, TextureFormat,
    TextureId, VertexBufferId, VertexLayout, XrError, checks, decide,
};

struct RenderTarget {
    framebuffer: glow::Framebuffer,
    /// The colour attachment of a target made by `create_render_target`.
    renderbuffer: Option<glow::Renderbuffer>,
    /// The colour attachments of one made with `create_render_target_with`:
    /// textures, so that programs can sample them.
    colors: Vec<TextureId>,
    depth: Option<glow::Renderbuffer>,
    width: u32,
    height: u32,
}

struct Texture {
    texture: glow::Texture,
    desc: TextureDesc,
}

/// GL entry points glow does not wrap, loaded when the context's version
/// has them (a driver hands out entry points of versions the context lacks).
#[derive(Clone, Copy)]
struct Extra {
    /// `glBindProgramPipeline` (GL 4.1).
    bind_program_pipeline: Option<BindProgramPipeline>,
    /// `glGetProgramPipelineiv` (GL 4.1).
    get_program_pipeline_iv: Option<GetProgramPipelineIv>,
    /// `glGetProgramInterfaceiv` (GL 4.3).
    get_program_interface_iv: Option<GetProgramInterfaceIv>,
    /// `glGetProgramResourceiv` (GL 4.3; glow's asks for the values' count
    /// with a zero-sized buffer, which GL answers with 0).
    get_program_resource_iv: Option<GetProgramResourceIv>,
    /// `glTextureBarrier` (GL 4.5).
    texture_barrier: Option<TextureBarrier>,
}

type GetProgramPipelineIv = unsafe extern "system" fn(pipeline: u32, pname: u32, params: *mut i32);
type GetProgramInterfaceIv = unsafe extern "system" fn(program: u32, interface: u32, pname: u32, params: *mut i32);
type TextureBarrier = unsafe extern "system" fn();
type GetProgramResourceIv = unsafe extern "system" fn(
    program: u32,
    interface: u32,
    index: u32,
    count: i32,
    properties: *const u32,
    size: i32,
    length: *mut i32,
    values: *mut i32,
);

impl Extra {
    fn load(context: &GlContext, version: (u32, u32)) -> Self {
        /// The entry point `name` as a `T`, if the context has it.
        fn load<T: Copy>(context: &GlContext, name: &std::ffi::CStr) -> Option<T> {
            const { assert!(size_of::<T>() == size_of::<*const std::ffi::c_void>(), "a function pointer") };
            let pointer = context.get_proc_address(name);
            // SAFETY: a non-null pointer is the entry point of that name,
            // and each caller names `T` as its signature.
            (!pointer.is_null()).then(|| unsafe { std::mem::transmute_copy::<*const std::ffi::c_void, T>(&pointer) })
        }
        let (gl41, gl43, gl45) = (version >= (4, 1), version >= (4, 3), version >= (4, 5));
        Self {
            bind_program_pipeline: load(context, c"glBindProgramPipeline").filter(|_| gl41),
            get_program_pipeline_iv: load(context, c"glGetProgramPipelineiv").filter(|_| gl41),
            get_program_interface_iv: load(context, c"glGetProgramInterfaceiv").filter(|_| gl43),
            get_program_resource_iv: load(context, c"glGetProgramResourceiv").filter(|_| gl43),
            texture_barrier: load(context, c"glTextureBarrier").filter(|_| gl45),
        }
    }
}

struct Buffer {
    buffer: glow::Buffer,
    size: usize,
    usage: BufferUsage,
}

struct VertexBuffer {
    vertex_array: glow::VertexArray,
    buffer: glow::Buffer,
}

/// An OpenGL device with its own context.
pub struct GlDevice {
    gl: glow::Context,
    /// Shared with this thread's table of open devices while the device is
    /// open; build systems reach it through `key` (see `context::loader`).
    context: Rc<GlContext>,
    /// The device's number in that table, which its loader carries.
    key: usize,
    targets: Vec<RenderTarget>,
    vertex_buffers: Vec<VertexBuffer>,
    textures: Vec<Texture>,
    samplers: Vec<glow::Sampler>,
    buffers: Vec<Buffer>,
    /// GL entry points glow does not wrap.
    extra: Extra,
    /// The window's drawable size, for a device opened with a window.
    window_size: Option<(u32, u32)>,
    /// The driver compiles and links on threads of its own (`readiness`).
    parallel_compile: bool,
    /// Draws skipped or drawn by a fallback while a program was linking.
    not_ready: NotReadyCounts,
}

type BindProgramPipeline = unsafe extern "system" fn(pipeline: u32);

impl GlDevice {
    /// Opens a context and loads GL through it.
    pub fn open(options: &DeviceOptions) -> Result<Self, XrError> {
        let context = match options.window.as_ref() {
            abi_stable::std_types::ROption::RSome(window) => GlContext::open_window(window)?,
            abi_stable::std_types::ROption::RNone => GlContext::open(options.prefer_software)?,
        };
        let window_size = options.window.as_ref().map(|w| (w.width, w.height)).into_option();
        let context = Rc::new(context);
        // SAFETY: the context is current on this thread; pointers come from its display.
        let gl = unsafe { glow::Context::from_loader_function_cstr(|name| context.get_proc_address(name)) };
        for (space, limit) in [
            (GlBindingSpace::UniformBuffer, glow::MAX_UNIFORM_BUFFER_BINDINGS),
            (GlBindingSpace::TextureUnit, glow::MAX_COMBINED_TEXTURE_IMAGE_UNITS),
            (GlBindingSpace::ImageUnit, glow::MAX_IMAGE_UNITS),
            (GlBindingSpace::StorageBuffer, glow::MAX_SHADER_STORAGE_BUFFER_BINDINGS),
        ] {
            // SAFETY: a plain query on the context just made current.
            let count = unsafe { gl.get_parameter_i32(limit) };
            context.set_binding_limit(space, count.max(0) as usize);
        }
        let version = gl.version();
        let extra = Extra::load(&context, (version.major, version.minor));
        let parallel_compile = readiness::start_parallel_compile(&gl);
        let key = context::register(context.clone());
        Ok(Self {
            gl,
            context,
            key,
            targets: Vec::new(),
            vertex_buffers: Vec::new(),
            textures: Vec::new(),
            samplers: Vec::new(),
            buffers: Vec::new(),
            extra,
            window_size,
            parallel_compile,
            not_ready: NotReadyCounts::default(),
        })
    }

    /// The GL functions with this device's context current and no error
    /// pending, so that `check_error` blames the right call.
    fn current(&self) -> Result<&glow::Context, XrError> {
        self.context.make_current()?;
        // SAFETY: plain queries on the current context.
        unsafe {
            for _ in 0..16 {
                if self.gl.get_error() == glow::NO_ERROR {
                    break;
                }
            }
        }
        Ok(&self.gl)
    }

    fn target(&self, id: RenderTargetId) -> Result<&RenderTarget, XrError> {
        checks::find(&self.targets, "render target", id.0)
    }

    fn check_error(&self, what: &str) -> Result<(), XrError> {
        // SAFETY: plain query on the current context.
        let error = unsafe { self.gl.get_error() };
        if error == glow::NO_ERROR {
            Ok(())
        } else {
            Err(XrError::driver(format!("{what} failed with GL error 0x{error:04x}")))
        }
    }

    fn buffer(&self, id: BufferId) -> Result<&Buffer, XrError> {
        checks::find(&self.buffers, "buffer", id.0)
    }

    fn texture(&self, id: TextureId) -> Result<&Texture, XrError> {
        checks::find(&self.textures, "texture", id.0)
    }

    fn device_id(&self) -> u64 {
        self.key as u64
    }
}

impl DeviceBackend for GlDevice {
    fn capabilities(&self) -> Result<DeviceCapabilities, XrError> {
        let gl = self.current()?;
        // SAFETY: queries on the current context with valid enums.
        unsafe {
            let api_major = u32::try_from(gl.get_parameter_i32(glow::MAJOR_VERSION)).unwrap_or(0);
            let api_minor = u32::try_from(gl.get_parameter_i32(glow::MINOR_VERSION)).unwrap_or(0);
            let mut extensions: Vec<String> = gl.supported_extensions().iter().cloned().collect();
            extensions.sort();
            let format_count = if crate::context::program_binaries_off() {
                0
            } else {
                gl.get_parameter_i32(glow::NUM_PROGRAM_BINARY_FORMATS).max(0) as usize
            };
            let mut formats = vec![0i32; format_count];
            if format_count > 0 {
                gl.get_parameter_i32_slice(glow::PROGRAM_BINARY_FORMATS, &mut formats);
            }
            let version = (api_major, api_minor);
            let has = |name: &str| extensions.iter().any(|e| e == name);
            Ok(DeviceCapabilities {
                kind: DeviceKind::OPENGL,
                api_major,
                api_minor,
                vendor: gl.get_parameter_string(glow::VENDOR).into(),
                renderer: gl.get_parameter_string(glow::RENDERER).into(),
                driver_version: gl.get_parameter_string(glow::VERSION).into(),
                shading_language_version: gl.get_parameter_string(glow::SHADING_LANGUAGE_VERSION).into(),
                gl_spirv: version >= (4, 6) || has("GL_ARB_gl_spirv"),
                separate_shader_objects: version >= (4, 1) || has("GL_ARB_separate_shader_objects"),
                extensions: extensions.into_iter().map(Into::into).collect(),
                program_binary_formats: formats.into_iter().map(|f| f as u32).collect(),
                pipeline_cache_uuid: [0; 16],
                vendor_id: 0,
                device_id: 0,
                driver_version_code: 0,
                device_type: RString::new(),
            })
        }
    }

    fn native_handles(&self) -> Result<NativeHandles, XrError> {
        Ok(NativeHandles {
            kind: DeviceKind::OPENGL,
            gl: ROption::RSome(context::loader(self.key)),
            vulkan: ROption::RNone,
            named: RSlice::empty(),
        })
    }

    fn create_render_target(&mut self, width: u32, height: u32) -> Result<RenderTargetId, XrError> {
        self.new_render_target(width, height, false)
    }

    fn create_vertex_buffer(&mut self, vertices: &[f32], layout: &VertexLayout) -> Result<VertexBufferId, XrError> {
        self.new_vertex_buffer(vertices, layout)
    }

    fn clear(&mut self, id: RenderTargetId, rgba: &[f32; 4]) -> Result<(), XrError> {
        let target = self.target(id)?;
        let gl = self.current()?;
        // SAFETY: the framebuffer belongs to this context.
        unsafe {
            gl.bind_framebuffer(glow::FRAMEBUFFER, Some(target.framebuffer));
            if !target.colors.is_empty() {
                // Every attachment (a draw may have left some out).
                let buffers: Vec<u32> = (0..target.colors.len() as u32).map(|i| glow::COLOR_ATTACHMENT0 + i).collect();
                gl.draw_buffers(&buffers);
            }
            gl.viewport(0, 0, target.width as i32, target.height as i32);
            gl.clear_color(rgba[0], rgba[1], rgba[2], rgba[3]);
            if target.depth.is_some() {
                gl.depth_mask(true);
                gl.clear_depth_f32(1.0);
                gl.clear(glow::COLOR_BUFFER_BIT | glow::DEPTH_BUFFER_BIT);
            } else {
                gl.clear(glow::COLOR_BUFFER_BIT);
            }
            gl.bind_framebuffer(glow::FRAMEBUFFER, None);
        }
        self.check_error("clear")
    }

    fn draw(&mut self, draw: &DrawCall) -> Result<(), XrError> {
        let target = self.target(draw.target)?;
        let vertices = checks::find(&self.vertex_buffers, "vertex buffer", draw.vertex_buffer.0)?;
        let indices = match draw.index_buffer.into_option() {
            Some(id) => {
                let buffer = self.buffer(id)?;
                checks::check_index_buffer(id, buffer.usage, buffer.size, draw.first_vertex, draw.vertex_count)?;
                Some(buffer.buffer)
            }
            None => None,
        };
        checks::check_depth_test(draw.target, draw.depth_test, target.depth.is_some())?;
        let gl = self.current()?;
        let decision = decide(draw.program, draw.when_not_ready, |p| self.program_readiness(gl, p))?;
        self.not_ready.count(decision);
        let program = match decision {
            DrawWith::Program(program) | DrawWith::Fallback(program) => program,
            DrawWith::Skip => return Ok(()),
        };
        self.use_program(gl, program)?;
        let draw_buffers = if target.colors.is_empty() { None } else { Some(self.draw_buffers(program, target)) };
        // SAFETY: every object belongs to this context and was checked above.
        unsafe {
            gl.bind_framebuffer(glow::FRAMEBUFFER, Some(target.framebuffer));
            if let Some(buffers) = &draw_buffers {
                gl.draw_buffers(buffers);
                // A G-buffer's attachments are sampled by the draws into its
                // other attachments: what earlier draws wrote is readable.
                if let Some(barrier) = self.extra.texture_barrier {
                    barrier();
                }
            }
            gl.viewport(0, 0, target.width as i32, target.height as i32);
            if draw.depth_test {
                gl.enable(glow::DEPTH_TEST);
                gl.depth_func(glow::LESS);
                gl.depth_mask(true);
            }
            gl.bind_vertex_array(Some(vertices.vertex_array));
            match indices {
                Some(indices) => {
                    gl.bind_buffer(glow::ELEMENT_ARRAY_BUFFER, Some(indices));
                    gl.draw_elements(
                        glow::TRIANGLES,
                        draw.vertex_count as i32,
                        glow::UNSIGNED_INT,
                        (draw.first_vertex * 4) as i32,
                    );
                    gl.bind_buffer(glow::ELEMENT_ARRAY_BUFFER, None);
                }
                None => gl.draw_arrays(glow::TRIANGLES, draw.first_vertex as i32, draw.vertex_count as i32),
            }
            gl.bind_vertex_array(None);
            gl.disable(glow::DEPTH_TEST);
            self.unuse_program(gl);
            gl.bind_framebuffer(glow::FRAMEBUFFER, None);
        }
        self.check_error("draw")
    }

    fn read_pixels(&mut self, id: RenderTargetId) -> Result<Image, XrError> {
        let target = self.target(id)?;
        if let Some(first) = target.colors.first() {
            checks::check_read_pixels(id, self.texture(*first)?.desc.format == TextureFormat::Rgba8)?;
        }
        self.read_framebuffer(Some(target.framebuffer), target.width, target.height)
    }

    fn resize_window(&mut self, width: u32, height: u32) -> Result<(), XrError> {
        if self.window_size.is_none() {
            return Err(XrError::invalid_input("this OpenGL device is headless: it has no window to resize"));
        }
        self.context.make_current()?;
        self.context.resize(width, height);
        self.window_size = Some((width, height));
        Ok(())
    }

    fn present(&mut self, id: RenderTargetId, capture: bool) -> Result<Presented, XrError> {
        let (width, height) = self.window_size.ok_or_else(|| {
            XrError::invalid_input(
                "this OpenGL device is headless: open it with a window (DeviceOptions::window) to present",
            )
        })?;
        if width == 0 || height == 0 {
            return Ok(Presented { status: PresentStatus::Skipped, image: ROption::RNone });
        }
        let target = self.target(id)?;
        let gl = self.current()?;
        let filter = if (target.width, target.height) == (width, height) { glow::NEAREST } else { glow::LINEAR };
        // SAFETY: the target's framebuffer belongs to this context; 0 is the window's.
        unsafe {
            gl.bind_framebuffer(glow::READ_FRAMEBUFFER, Some(target.framebuffer));
            gl.bind_framebuffer(glow::DRAW_FRAMEBUFFER, None);
            gl.blit_framebuffer(
                0,
                0,
                target.width as i32,
                target.height as i32,
                0,
                0,
                width as i32,
                height as i32,
                glow::COLOR_BUFFER_BIT,
                filter,
            );
            gl.bind_framebuffer(glow::READ_FRAMEBUFFER, None);
        }
        self.check_error("presenting")?;
        let image = if capture { ROption::RSome(self.read_framebuffer(None, width, height)?) } else { ROption::RNone };
        self.context.swap_buffers()?;
        Ok(Presented { status: PresentStatus::Presented, image })
    }

    fn create_depth_render_target(&mut self, width: u32, height: u32) -> Result<RenderTargetId, XrError> {
        self.new_render_target(width, height, true)
    }

    fn create_texture(&mut self, desc: &TextureDesc, pixels: &[u8], levels_given: u32) -> Result<TextureId, XrError> {
        self.new_texture(desc.given_levels(pixels, levels_given)?)
    }

    fn read_texture(&mut self, id: TextureId, level: u32) -> Result<Vec<u8>, XrError> {
        let texture = self.texture(id)?;
        checks::check_texture_level(id, texture.desc.levels(), level)?;
        let (w, h) = texture.desc.level_size(level);
        let mut pixels = vec![0u8; w as usize * h as usize * texture.desc.format.bytes_per_pixel()];
        let (_, ty) = gl_format(texture.desc.format);
        let gl = self.current()?;
        // SAFETY: the buffer holds exactly one level in this format.
        unsafe {
            gl.active_texture(glow::TEXTURE0);
            gl.bind_texture(glow::TEXTURE_2D, Some(texture.texture));
            gl.pixel_store_i32(glow::PACK_ALIGNMENT, 1);
            gl.get_tex_image(
                glow::TEXTURE_2D,
                level as i32,
                glow::RGBA,
                ty,
                glow::PixelPackData::Slice(Some(&mut pixels)),
            );
            gl.bind_texture(glow::TEXTURE_2D, None);
        }
        self.check_error("reading a texture")?;
        Ok(pixels)
    }

    fn create_sampler(&mut self, desc: &SamplerDesc) -> Result<SamplerId, XrError> {
        self.new_sampler(desc)
    }

    fn create_buffer(&mut self, usage: BufferUsage, data: &[u8]) -> Result<BufferId, XrError> {
        checks::check_buffer_data(data.len())?;
        let gl = self.current()?;
        // SAFETY: a new buffer on the current context, filled through the
        // copy-write target, which no program binding uses.
        let buffer = unsafe {
            let buffer = gl.create_buffer().map_err(XrError::driver)?;
            gl.bind_buffer(glow::COPY_WRITE_BUFFER, Some(buffer));
            gl.buffer_data_u8_slice(glow::COPY_WRITE_BUFFER, data, glow::DYNAMIC_DRAW);
            gl.bind_buffer(glow::COPY_WRITE_BUFFER, None);
            buffer
        };
        self.check_error("creating a buffer")?;
        self.buffers.push(Buffer { buffer, size: data.len(), usage });
        Ok(BufferId(self.buffers.len() as u32 - 1))
    }

    fn write_buffer(&mut self, id: BufferId, offset: u64, data: &[u8]) -> Result<(), XrError> {
        let buffer = self.buffer(id)?;
        xr_device::check_buffer_write(id, offset, data.len(), buffer.size)?;
        let gl = self.current()?;
        // SAFETY: the range lies inside the buffer (checked).
        unsafe {
            gl.bind_buffer(glow::COPY_WRITE_BUFFER, Some(buffer.buffer));
            gl.buffer_sub_data_u8_slice(glow::COPY_WRITE_BUFFER, offset as i32, data);
            gl.bind_buffer(glow::COPY_WRITE_BUFFER, None);
        }
        self.check_error("writing a buffer")
    }

    fn read_buffer(&mut self, id: BufferId) -> Result<Vec<u8>, XrError> {
        let buffer = self.buffer(id)?;
        let mut data = vec![0u8; buffer.size];
        let gl = self.current()?;
        // SAFETY: `data` is the buffer's size.
        unsafe {
            gl.bind_buffer(glow::COPY_READ_BUFFER, Some(buffer.buffer));
            gl.get_buffer_sub_data(glow::COPY_READ_BUFFER, 0, &mut data);
            gl.bind_buffer(glow::COPY_READ_BUFFER, None);
        }
        self.check_error("reading a buffer")?;
        Ok(data)
    }

    fn texture_binding(&self, id: TextureId, sampler: Option<SamplerId>) -> Result<ResourceBinding, XrError> {
        let texture = self.texture(id)?;
        let sampler = match sampler {
            Some(s) => u64::from(checks::find(&self.samplers, "sampler", s.0)?.0.get()),
            None => 0,
        };
        let name = u64::from(texture.texture.0.get());
        Ok(ResourceBinding {
            device: self.device_id(),
            is_texture: true,
            handle: name,
            object: name,
            sampler,
            size: texture.desc.format as u64,
            storage: texture.desc.storage,
            acceleration_structure: false,
        })
    }

    fn buffer_binding(&self, id: BufferId) -> Result<ResourceBinding, XrError> {
        let buffer = self.buffer(id)?;
        let name = u64::from(buffer.buffer.0.get());
        Ok(ResourceBinding {
            device: self.device_id(),
            is_texture: false,
            handle: name,
            object: name,
            sampler: 0,
            size: buffer.size as u64,
            storage: buffer.usage.contains(BufferUsage::STORAGE),
            acceleration_structure: false,
        })
    }

    fn dispatch(&mut self, call: &ComputeCall) -> Result<(), XrError> {
        let gl = self.current()?;
        self.use_program(gl, call.program)?;
        let [x, y, z] = call.groups;
        // SAFETY: the program is bound on the current context.
        unsafe {
            gl.dispatch_compute(x, y, z);
            // Whatever a later draw, dispatch or read uses, it sees what this wrote.
            gl.memory_barrier(glow::ALL_BARRIER_BITS);
        }
        self.unuse_program(gl);
        self.check_error("dispatch")
    }

    fn create_render_target_with(&mut self, desc: &RenderTargetDesc) -> Result<RenderTargetId, XrError> {
        self.new_render_target_with(desc)
    }

    fn render_target_texture(&mut self, id: RenderTargetId, attachment: u32) -> Result<TextureId, XrError> {
        let target = self.target(id)?;
        // Only a target made with `create_render_target_with` has textures as attachments.
        checks::check_attachment_texture(id, !target.colors.is_empty(), target.colors.len(), attachment)?;
        Ok(target.colors[attachment as usize])
    }

    fn take_validation_messages(&mut self) -> Result<Vec<String>, XrError> {
        // Every GL call is checked with glGetError as it is made.
        Ok(Vec::new())
    }

    fn counters(&self) -> Result<Vec<DeviceCounter>, XrError> {
        Ok(self.not_ready.counters().into())
    }

    fn readiness(&self, program: ProgramRef, target: RenderTargetId) -> Result<Readiness, XrError> {
        self.target(target)?;
        let gl = self.current()?;
        self.program_readiness(gl, program)
    }
}

impl Drop for GlDevice {
    fn drop(&mut self) {
        // First: from now on a loader of this device reaches nothing.
        context::unregister(self.key);
        if self.context.make_current().is_err() {
            self.context.release();
            return;
        }
        // SAFETY: the objects were created on this context, which is current.
        unsafe {
            for target in self.targets.drain(..) {
                self.gl.delete_framebuffer(target.framebuffer);
                if let Some(renderbuffer) = target.renderbuffer {
                    self.gl.delete_renderbuffer(renderbuffer);
                }
                if let Some(depth) = target.depth {
                    self.gl.delete_renderbuffer(depth);
                }
            }
            for texture in self.textures.drain(..) {
                self.gl.delete_texture(texture.texture);
            }
            for sampler in self.samplers.drain(..) {
                self.gl.delete_sampler(sampler);
            }
            for buffer in self.buffers.drain(..) {
                self.gl.delete_buffer(buffer.buffer);
            }
            for vertices in self.vertex_buffers.drain(..) {
                self.gl.delete_vertex_array(vertices.vertex_array);
                self.gl.delete_buffer(vertices.buffer);
            }
        }
        self.context.release();
    }
}
