//! An open OpenGL device: capabilities and the small command surface.

use crate::context::GlContext;
use abi_stable::std_types::{ROption, RSlice, RString, RVec};
use glow::HasContext;
use std::num::NonZeroU32;
use xr_device::{
    Device, DeviceCapabilities, DeviceKind, DeviceOptions, DrawCall, Image, NativeHandles, PresentStatus, Presented,
    ProgramKind, RenderTargetId, VertexBufferId, VertexLayout, XrError, XrResult, guard,
};

struct RenderTarget {
    framebuffer: glow::Framebuffer,
    renderbuffer: glow::Renderbuffer,
    width: u32,
    height: u32,
}

struct VertexBuffer {
    vertex_array: glow::VertexArray,
    buffer: glow::Buffer,
}

/// An OpenGL device with its own context.
pub struct GlDevice {
    gl: glow::Context,
    // Leaked: build systems hold a pointer to it through `NativeHandles`.
    context: &'static GlContext,
    targets: Vec<RenderTarget>,
    vertex_buffers: Vec<VertexBuffer>,
    /// `glBindProgramPipeline`, which glow does not wrap; absent before GL 4.1.
    bind_program_pipeline: Option<BindProgramPipeline>,
    /// The window's drawable size, for a device opened with a window.
    window_size: Option<(u32, u32)>,
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
        let context: &'static GlContext = Box::leak(Box::new(context));
        // SAFETY: the context is current on this thread; pointers come from its display.
        let gl = unsafe { glow::Context::from_loader_function_cstr(|name| context.get_proc_address(name)) };
        // SAFETY: a plain query on the context just made current.
        let uniform_bindings = unsafe { gl.get_parameter_i32(glow::MAX_UNIFORM_BUFFER_BINDINGS) };
        context.set_uniform_bindings(uniform_bindings.max(0) as usize);
        let pointer = context.get_proc_address(c"glBindProgramPipeline");
        // SAFETY: a non-null pointer is the entry point of that name.
        let bind_program_pipeline = (!pointer.is_null())
            .then(|| unsafe { std::mem::transmute::<*const std::ffi::c_void, BindProgramPipeline>(pointer) });
        Ok(Self { gl, context, targets: Vec::new(), vertex_buffers: Vec::new(), bind_program_pipeline, window_size })
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
        self.targets.get(id.0 as usize).ok_or_else(|| XrError::invalid_input(format!("no render target {}", id.0)))
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

    fn read_capabilities(&self) -> Result<DeviceCapabilities, XrError> {
        let gl = self.current()?;
        // SAFETY: queries on the current context with valid enums.
        unsafe {
            let api_major = u32::try_from(gl.get_parameter_i32(glow::MAJOR_VERSION)).unwrap_or(0);
            let api_minor = u32::try_from(gl.get_parameter_i32(glow::MINOR_VERSION)).unwrap_or(0);
            let mut extensions: Vec<String> = gl.supported_extensions().iter().cloned().collect();
            extensions.sort();
            let format_count = gl.get_parameter_i32(glow::NUM_PROGRAM_BINARY_FORMATS).max(0) as usize;
            let mut formats = vec![0i32; format_count];
            if format_count > 0 {
                gl.get_parameter_i32_slice(glow::PROGRAM_BINARY_FORMATS, &mut formats);
            }
            let version = (api_major, api_minor);
            let has = |name: &str| extensions.iter().any(|e| e == name);
            Ok(DeviceCapabilities {
                kind: DeviceKind::OpenGl,
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

    fn new_render_target(&mut self, width: u32, height: u32) -> Result<RenderTargetId, XrError> {
        if width == 0 || height == 0 || width > 16384 || height > 16384 {
            return Err(XrError::invalid_input(format!("render target size {width}x{height} is out of range")));
        }
        let gl = self.current()?;
        // SAFETY: objects are created and bound on the current context.
        let target = unsafe {
            let renderbuffer = gl.create_renderbuffer().map_err(XrError::driver)?;
            gl.bind_renderbuffer(glow::RENDERBUFFER, Some(renderbuffer));
            gl.renderbuffer_storage(glow::RENDERBUFFER, glow::RGBA8, width as i32, height as i32);
            let framebuffer = gl.create_framebuffer().map_err(XrError::driver)?;
            gl.bind_framebuffer(glow::FRAMEBUFFER, Some(framebuffer));
            gl.framebuffer_renderbuffer(
                glow::FRAMEBUFFER,
                glow::COLOR_ATTACHMENT0,
                glow::RENDERBUFFER,
                Some(renderbuffer),
            );
            let status = gl.check_framebuffer_status(glow::FRAMEBUFFER);
            gl.bind_framebuffer(glow::FRAMEBUFFER, None);
            if status != glow::FRAMEBUFFER_COMPLETE {
                return Err(XrError::driver(format!("framebuffer incomplete: 0x{status:04x}")));
            }
            RenderTarget { framebuffer, renderbuffer, width, height }
        };
        self.targets.push(target);
        Ok(RenderTargetId((self.targets.len() - 1) as u32))
    }

    fn new_vertex_buffer(&mut self, vertices: &[f32], layout: &VertexLayout) -> Result<VertexBufferId, XrError> {
        if layout.stride == 0 {
            return Err(XrError::invalid_input("vertex layout stride is 0"));
        }
        for attribute in layout.attributes.iter() {
            if !(1..=4).contains(&attribute.components) || attribute.offset + attribute.components > layout.stride {
                return Err(XrError::invalid_input(format!(
                    "vertex attribute at location {} does not fit a stride of {} floats",
                    attribute.location, layout.stride
                )));
            }
        }
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

    fn clear_target(&self, id: RenderTargetId, rgba: &[f32; 4]) -> Result<(), XrError> {
        let target = self.target(id)?;
        let gl = self.current()?;
        // SAFETY: the framebuffer belongs to this context.
        unsafe {
            gl.bind_framebuffer(glow::FRAMEBUFFER, Some(target.framebuffer));
            gl.viewport(0, 0, target.width as i32, target.height as i32);
            gl.clear_color(rgba[0], rgba[1], rgba[2], rgba[3]);
            gl.clear(glow::COLOR_BUFFER_BIT);
            gl.bind_framebuffer(glow::FRAMEBUFFER, None);
        }
        self.check_error("clear")
    }

    fn draw_triangles(&self, draw: &DrawCall) -> Result<(), XrError> {
        let target = self.target(draw.target)?;
        let vertices = self
            .vertex_buffers
            .get(draw.vertex_buffer.0 as usize)
            .ok_or_else(|| XrError::invalid_input(format!("no vertex buffer {}", draw.vertex_buffer.0)))?;
        let name = NonZeroU32::new(draw.program.name)
            .ok_or_else(|| XrError::invalid_input("program 0 cannot be drawn with"))?;
        let gl = self.current()?;
        // SAFETY: every object belongs to this context; the program or
        // pipeline name comes from a build system attached to it and is checked.
        unsafe {
            match draw.program.kind {
                ProgramKind::Program => {
                    let program = glow::NativeProgram(name);
                    if !gl.is_program(program) {
                        return Err(XrError::invalid_input(format!("{} is not a program on this device", name)));
                    }
                    gl.use_program(Some(program));
                }
                ProgramKind::Pipeline => {
                    let bind = self.bind_program_pipeline.ok_or_else(|| {
                        XrError::unavailable("program pipelines need OpenGL 4.1 or GL_ARB_separate_shader_objects")
                    })?;
                    gl.use_program(None);
                    bind(name.get());
                }
            }
            gl.bind_framebuffer(glow::FRAMEBUFFER, Some(target.framebuffer));
            gl.viewport(0, 0, target.width as i32, target.height as i32);
            gl.bind_vertex_array(Some(vertices.vertex_array));
            gl.draw_arrays(glow::TRIANGLES, draw.first_vertex as i32, draw.vertex_count as i32);
            gl.bind_vertex_array(None);
            gl.use_program(None);
            if let Some(bind) = self.bind_program_pipeline {
                bind(0);
            }
            gl.bind_framebuffer(glow::FRAMEBUFFER, None);
        }
        self.check_error("draw")
    }

    fn read_target(&self, id: RenderTargetId) -> Result<Image, XrError> {
        let target = self.target(id)?;
        self.read_framebuffer(Some(target.framebuffer), target.width, target.height)
    }

    /// Reads `width` × `height` pixels of a framebuffer (`None`: the
    /// window's back buffer), top row first.
    fn read_framebuffer(
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

    fn present_target(&mut self, id: RenderTargetId, capture: bool) -> Result<Presented, XrError> {
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

    fn resize(&mut self, width: u32, height: u32) -> Result<(), XrError> {
        if self.window_size.is_none() {
            return Err(XrError::invalid_input("this OpenGL device is headless: it has no window to resize"));
        }
        self.context.make_current()?;
        self.context.resize(width, height);
        self.window_size = Some((width, height));
        Ok(())
    }
}

impl Device for GlDevice {
    fn capabilities(&self) -> XrResult<DeviceCapabilities> {
        guard(|| self.read_capabilities())
    }

    fn native_handles(&self) -> XrResult<NativeHandles> {
        guard(|| {
            Ok(NativeHandles {
                kind: DeviceKind::OpenGl,
                gl: ROption::RSome(self.context.loader()),
                vulkan: ROption::RNone,
            })
        })
    }

    fn create_render_target(&mut self, width: u32, height: u32) -> XrResult<RenderTargetId> {
        guard(|| self.new_render_target(width, height))
    }

    fn create_vertex_buffer(&mut self, vertices: RSlice<'_, f32>, layout: &VertexLayout) -> XrResult<VertexBufferId> {
        guard(|| self.new_vertex_buffer(vertices.as_slice(), layout))
    }

    fn clear(&mut self, target: RenderTargetId, rgba: &[f32; 4]) -> XrResult<()> {
        guard(|| self.clear_target(target, rgba))
    }

    fn draw(&mut self, draw: &DrawCall) -> XrResult<()> {
        guard(|| self.draw_triangles(draw))
    }

    fn read_pixels(&mut self, target: RenderTargetId) -> XrResult<Image> {
        guard(|| self.read_target(target))
    }

    fn resize_window(&mut self, width: u32, height: u32) -> XrResult<()> {
        guard(|| self.resize(width, height))
    }

    fn present(&mut self, target: RenderTargetId, capture: bool) -> XrResult<Presented> {
        guard(|| self.present_target(target, capture))
    }
}

impl Drop for GlDevice {
    fn drop(&mut self) {
        if self.context.make_current().is_err() {
            self.context.release();
            return;
        }
        // SAFETY: the objects were created on this context, which is current.
        unsafe {
            for target in self.targets.drain(..) {
                self.gl.delete_framebuffer(target.framebuffer);
                self.gl.delete_renderbuffer(target.renderbuffer);
            }
            for vertices in self.vertex_buffers.drain(..) {
                self.gl.delete_vertex_array(vertices.vertex_array);
                self.gl.delete_buffer(vertices.buffer);
            }
        }
        self.context.release();
    }
}
