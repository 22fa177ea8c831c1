//! An open Vulkan device: capabilities, handles, and the command surface.
//!
//! This module holds the device's types, its opening and closing, and the
//! [`DeviceBackend`] calls, which hand longer work to the submodules, one
//! concern each: the loader build systems reach the device through
//! (`loader`), memory (`memory`), render targets, textures, buffers and
//! samplers (`resources`), command submission, barriers and render passes
//! (`commands`), draws (`draw`), presenting (`present`), compute
//! (`compute`), ray tracing (`ray_tracing`), shader objects
//! (`shader_objects`), and what a draw binds when its program is not
//! ready (`readiness`).

mod commands;
mod compute;
mod draw;
mod loader;
mod memory;
mod present;
mod ray_tracing;
mod readiness;
mod resources;
mod shader_objects;

use crate::{
    instance::{Context, vk_error},
    swapchain::Swapchain,
};
use abi_stable::std_types::{ROption, RSlice, RString, RVec};
use ash::vk::{self, Handle};
use loader::{
    NEXT_DEVICE, OPEN, loader_get_instance_proc_addr, loader_is_open, loader_register_program,
    loader_unregister_program,
};
use std::{
    collections::HashMap,
    sync::{
        Arc, Mutex,
        atomic::{AtomicU32, Ordering},
    },
};
use xr_device::{
    AccelerationInstance, AccelerationStructureId, BottomLevelDesc, BufferId, BufferUsage, ComputeCall,
    CreatedObjectCounts, DeviceBackend, DeviceCapabilities, DeviceCounter, DeviceKind, DeviceOptions, DrawCall,
    DrawWith, Image, MeshDrawCall, NativeHandles, NotReady, NotReadyCounts, Presented, ProgramRef, Readiness,
    RenderTargetDesc, RenderTargetId, ResourceBinding, SamplerDesc, SamplerId, TextureDesc, TextureId, TraceRaysCall,
    VertexBufferId, VertexLayout, VulkanLoader, VulkanProgram, XrError, checks, decide,
};
use xr_vulkan_common::formats::vk_format;

/// The colour format of the render targets `create_render_target` and
/// `create_depth_render_target` make, which programs' own pipelines draw
/// into (`create_render_target_with` makes attachments of other formats).
pub const COLOR_FORMAT: vk::Format = vk::Format::R8G8B8A8_UNORM;

/// The format of every depth attachment.
pub const DEPTH_FORMAT: vk::Format = xr_vulkan_common::formats::DEPTH_FORMAT;

/// What build systems reach through the loader's context: the device's
/// programs, and Vulkan's `vkGetInstanceProcAddr`.
///
/// The device owns it (an [`Arc`], shared with [`OPEN`] while the device
/// is open). The loader's context is not a pointer to it but the device's
/// number in [`OPEN`], so that a build system that outlives the device (a
/// constant table dropped after it) finds nothing there and fails cleanly,
/// instead of reading freed memory.
struct Shared {
    /// The Vulkan library's entry points; holding it keeps the library
    /// loaded while a call through it runs.
    entry: ash::Entry,
    programs: Mutex<HashMap<u32, VulkanProgram>>,
    next: AtomicU32,
    /// The pipelines and shader objects build systems made on the device.
    created: CreatedObjectCounts,
}

// SAFETY: the only field that is not `Send` is the program table, whose raw
// pointers (descriptor sets, push constants, the unbound count) are only
// read by the device, on the device's thread, while the build system that
// owns them keeps the program registered.
unsafe impl Send for Shared {}
// SAFETY: as for `Send`: every access to the table goes through its mutex,
// and the pointers in it are only read on the device's thread.
unsafe impl Sync for Shared {}

/// A render target: its colour attachments, attachment 0 first, and
/// perhaps a depth attachment.
struct Target {
    colors: Vec<Attachment>,
    width: u32,
    height: u32,
    depth: Option<Attachment>,
    /// Made with `create_render_target_with`: its colour attachments are
    /// also textures (sampled, input attachments, read back), so they stay
    /// in `GENERAL`, the one layout all of those and drawing accept, and
    /// no other draw has to track them.
    textures: bool,
}

impl Target {
    /// The attachments' formats, as a build system's `pipeline_for` takes them.
    fn formats(&self) -> Vec<u32> {
        self.colors.iter().map(|c| c.format.as_raw() as u32).collect()
    }

    /// The layout a draw puts the colour attachments in: `GENERAL` where
    /// they are textures (a draw may read them as input attachments or
    /// sample them), otherwise the colour attachment layout.
    fn draw_layout(&self) -> vk::ImageLayout {
        if self.textures { vk::ImageLayout::GENERAL } else { vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL }
    }

    /// Notes the layouts a draw left the attachments in: the colour
    /// attachments in `color_layout`, depth ready for the next draw.
    fn drawn_into(&mut self, color_layout: vk::ImageLayout) {
        self.colors.iter_mut().for_each(|c| c.layout = color_layout);
        if let Some(depth) = self.depth.as_mut() {
            depth.layout = vk::ImageLayout::DEPTH_ATTACHMENT_OPTIMAL;
        }
    }
}

/// A rendering into a target, as [`VkDevice::record_rendering`] records it.
struct Rendering<'a> {
    target: &'a Target,
    /// The render pass (and framebuffer) to render in; `None`: dynamic rendering.
    pass: Option<(vk::RenderPass, vk::Framebuffer)>,
    color_layout: vk::ImageLayout,
    depth_test: bool,
}

/// A draw whose target, vertices, program and indices were checked by
/// [`VkDevice::validate_draw`]: what the later steps of a draw read.
struct CheckedDraw<'a> {
    call: &'a DrawCall,
    /// The target's place in [`VkDevice::targets`].
    index: usize,
    target: &'a Target,
    vertices: &'a Buffer,
    /// A graphics program with every resource bound.
    program: VulkanProgram,
    /// The index buffer of an indexed draw.
    indices: Option<vk::Buffer>,
}

/// Whether a draw into `target` leaves the attachments its fragment stage
/// has no output for as they are. The device's own targets are written
/// whole (the program's own pipelines write every channel); a target whose
/// attachments are textures (a G-buffer) keeps what other passes wrote.
fn mask_unwritten(target: &Target) -> bool {
    target.formats() != [COLOR_FORMAT.as_raw() as u32] || target.textures
}

/// One image of a render target.
struct Attachment {
    image: vk::Image,
    memory: vk::DeviceMemory,
    view: vk::ImageView,
    format: vk::Format,
    layout: vk::ImageLayout,
    /// The texture `render_target_texture` made of it, once asked.
    texture: Option<TextureId>,
}

struct Buffer {
    buffer: vk::Buffer,
    memory: vk::DeviceMemory,
    layout: VertexLayout,
}

/// A texture: kept in `GENERAL` layout, which sampling, storage use and
/// copies all accept, so no draw has to track it.
struct Texture {
    image: vk::Image,
    memory: vk::DeviceMemory,
    view: vk::ImageView,
    desc: TextureDesc,
    /// A render target's colour attachment seen as a texture: the target
    /// owns the image, which is destroyed with it, not with this.
    borrowed: bool,
}

/// One level of an image to read back.
struct ImageRead {
    image: vk::Image,
    level: u32,
    /// The layout it is in when copied.
    layout: vk::ImageLayout,
    width: u32,
    height: u32,
    bytes_per_pixel: u64,
}

/// A buffer for shaders and indices: host-visible and coherent, so that
/// writes and reads are plain copies.
struct DataBuffer {
    buffer: vk::Buffer,
    memory: vk::DeviceMemory,
    size: usize,
    usage: BufferUsage,
}

/// A Vulkan device.
///
/// Dropped in this order: its entry in [`OPEN`] (build systems see it
/// closed), then, with the queue idle, the swapchain, every object it made
/// and its command pool ([`Drop`] for `VkDevice`), then the surface, the
/// device and the instance ([`Context`]'s own drop).
pub struct VkDevice {
    context: Context,
    /// Its number in [`OPEN`], which its loader carries as context.
    key: usize,
    shared: Arc<Shared>,
    pool: vk::CommandPool,
    vertex_input: ash::ext::vertex_input_dynamic_state::Device,
    /// Mesh shader commands, where the device enabled `VK_EXT_mesh_shader`.
    mesh_shader: Option<ash::ext::mesh_shader::Device>,
    /// The most task (or mesh, without a task stage) work groups a draw
    /// launches in x, y and z (`maxTaskWorkGroupCount`; the smaller of it and
    /// `maxMeshWorkGroupCount`, which applies to mesh-only programs).
    mesh_group_limits: [u32; 3],
    /// Acceleration structures and ray launches, where the device has them.
    ray_tracing: Option<ray_tracing::RayTracing>,
    /// Draws with shader objects, where the device enabled them.
    shader_objects: Option<shader_objects::ShaderObjects>,
    accelerations: Vec<ray_tracing::Acceleration>,
    targets: Vec<Target>,
    buffers: Vec<Buffer>,
    textures: Vec<Texture>,
    samplers: Vec<vk::Sampler>,
    data_buffers: Vec<DataBuffer>,
    /// The window's swapchain, for a device opened with a window.
    swapchain: Option<Swapchain>,
    /// Render passes for programs that read input attachments, where the
    /// device cannot read them within dynamic rendering; by their shape.
    render_passes: std::cell::RefCell<HashMap<RenderPassShape, vk::RenderPass>>,
    /// Framebuffers of those render passes, by (target, render pass).
    framebuffers: std::cell::RefCell<HashMap<(usize, vk::RenderPass), vk::Framebuffer>>,
    /// Draws skipped or drawn by a fallback because their program was not ready.
    not_ready: NotReadyCounts,
}

/// What makes two render passes of [`VkDevice::render_pass`] the same: the
/// colour formats, depth, and which attachments are read as input
/// attachments (by input attachment index).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct RenderPassShape {
    colors: Vec<u32>,
    depth: bool,
    inputs: Vec<u32>,
}

impl VkDevice {
    /// Opens a device; `Unavailable` where there is no Vulkan driver.
    pub fn open(options: &DeviceOptions) -> Result<Self, XrError> {
        let window = options.window.as_ref().into_option();
        let context = Context::create(options.prefer_software, options.validation, window)?;
        let shared = Arc::new(Shared {
            entry: context.entry.clone(),
            programs: Mutex::new(HashMap::new()),
            next: AtomicU32::new(1),
            created: CreatedObjectCounts::default(),
        });
        let info = vk::CommandPoolCreateInfo::default()
            .queue_family_index(context.queue_family)
            .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER);
        // SAFETY: `context.device` is the live device just created; the
        // create info lives across the call.
        let pool =
            unsafe { context.device.create_command_pool(&info, None) }.map_err(vk_error("vkCreateCommandPool"))?;
        let vertex_input = ash::ext::vertex_input_dynamic_state::Device::new(&context.instance, &context.device);
        let enabled = context.enabled_extensions.to_string_lossy().into_owned();
        let mesh_shader = enabled
            .split(' ')
            .any(|e| e == "VK_EXT_mesh_shader")
            .then(|| ash::ext::mesh_shader::Device::new(&context.instance, &context.device));
        let mesh_group_limits = if mesh_shader.is_some() { context.mesh_group_limits() } else { [0; 3] };
        let ray_tracing = ray_tracing::RayTracing::load(&context);
        let shader_objects = shader_objects::ShaderObjects::load(&context);
        let key = NEXT_DEVICE.fetch_add(1, Ordering::Relaxed);
        let mut device = Self {
            context,
            key,
            shared,
            pool,
            vertex_input,
            mesh_shader,
            mesh_group_limits,
            ray_tracing,
            shader_objects,
            accelerations: Vec::new(),
            targets: Vec::new(),
            buffers: Vec::new(),
            textures: Vec::new(),
            samplers: Vec::new(),
            data_buffers: Vec::new(),
            swapchain: None,
            render_passes: Default::default(),
            framebuffers: Default::default(),
            not_ready: NotReadyCounts::default(),
        };
        // From here on a failure drops `device`, which destroys what it holds.
        OPEN.lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(key, device.shared.clone());
        if let Some(window) = window {
            device.swapchain = Some(Swapchain::new(&device.context, window.width, window.height)?);
        }
        device.check_validation("opening the device")?;
        Ok(device)
    }

    fn check_validation(&self, what: &str) -> Result<(), XrError> {
        match self.context.take_validation_errors() {
            Some(errors) => Err(XrError::driver(format!("Vulkan validation error while {what}: {errors}"))),
            None => Ok(()),
        }
    }
}

impl DeviceBackend for VkDevice {
    fn capabilities(&self) -> Result<DeviceCapabilities, XrError> {
        let p = &self.context.properties;
        let name = self.context.renderer();
        // SAFETY: plain enumeration on a live physical device.
        let mut extensions: Vec<RString> =
            unsafe { self.context.instance.enumerate_device_extension_properties(self.context.physical) }
                .unwrap_or_default()
                .iter()
                .filter_map(|e| e.extension_name_as_c_str().ok().map(|n| n.to_string_lossy().into_owned().into()))
                .collect();
        extensions.sort();
        let device_type = match p.device_type {
            vk::PhysicalDeviceType::CPU => "cpu",
            vk::PhysicalDeviceType::INTEGRATED_GPU => "integrated-gpu",
            vk::PhysicalDeviceType::DISCRETE_GPU => "discrete-gpu",
            vk::PhysicalDeviceType::VIRTUAL_GPU => "virtual-gpu",
            _ => "other",
        };
        Ok(DeviceCapabilities {
            kind: DeviceKind::VULKAN,
            api_major: vk::api_version_major(p.api_version),
            api_minor: vk::api_version_minor(p.api_version),
            vendor: format!("0x{:04x}", p.vendor_id).into(),
            renderer: name.into(),
            driver_version: format!("0x{:08x}", p.driver_version).into(),
            shading_language_version: "SPIR-V".into(),
            extensions: extensions.into(),
            program_binary_formats: RVec::new(),
            gl_spirv: false,
            separate_shader_objects: false,
            pipeline_cache_uuid: p.pipeline_cache_uuid,
            vendor_id: p.vendor_id,
            device_id: p.device_id,
            driver_version_code: p.driver_version,
            device_type: device_type.into(),
        })
    }

    fn native_handles(&self) -> Result<NativeHandles, XrError> {
        let loader = VulkanLoader {
            // A number, not a pointer: see `Shared`.
            context: std::ptr::without_provenance(self.key),
            get_instance_proc_addr: loader_get_instance_proc_addr,
            instance: self.context.instance.handle().as_raw(),
            physical_device: self.context.physical.as_raw(),
            device: self.context.device.handle().as_raw(),
            queue: self.context.queue.as_raw(),
            queue_family: self.context.queue_family,
            color_format: COLOR_FORMAT.as_raw() as u32,
            depth_format: DEPTH_FORMAT.as_raw() as u32,
            enabled_extensions: self.context.enabled_extensions.as_ptr(),
            dynamic_rendering_local_read: self.context.local_read,
            register_program: loader_register_program,
            unregister_program: loader_unregister_program,
            is_open: loader_is_open,
            created: &self.shared.created,
        };
        Ok(NativeHandles {
            kind: DeviceKind::VULKAN,
            gl: ROption::RNone,
            vulkan: ROption::RSome(loader),
            named: RSlice::empty(),
        })
    }

    fn create_render_target(&mut self, width: u32, height: u32) -> Result<RenderTargetId, XrError> {
        self.new_target(width, height, &[COLOR_FORMAT], false, false)
    }

    fn create_vertex_buffer(&mut self, vertices: &[f32], layout: &VertexLayout) -> Result<VertexBufferId, XrError> {
        layout.check()?;
        let bytes: Vec<u8> = vertices.iter().flat_map(|v| v.to_ne_bytes()).collect();
        let (buffer, memory) = self.host_buffer(bytes.len() as u64, vk::BufferUsageFlags::VERTEX_BUFFER)?;
        // SAFETY: the memory is new, host visible and `bytes.len()` long.
        unsafe { self.write_host(memory, 0, &bytes)? };
        self.buffers.push(Buffer { buffer, memory, layout: layout.clone() });
        Ok(VertexBufferId(self.buffers.len() as u32 - 1))
    }

    fn clear(&mut self, id: RenderTargetId, rgba: &[f32; 4]) -> Result<(), XrError> {
        self.clear_target(id, rgba)
    }

    fn draw(&mut self, draw: &DrawCall) -> Result<(), XrError> {
        let mut checked = self.validate_draw(draw)?;
        // Under Wait nothing is asked: the pipeline is made now if it must be, as before.
        // Otherwise the draw binds the pipeline the answer it went by handed out.
        let answered = std::cell::Cell::new(None);
        let decision = decide(draw.program, draw.when_not_ready, |p| {
            let program = if p == draw.program { checked.program } else { self.vertex_program(p)? };
            let (readiness, pipeline) = self.draw_readiness(&program, (p.name, draw.target), checked.index)?;
            answered.set(pipeline.map(|pipeline| (p, pipeline)));
            Ok(readiness)
        })?;
        self.not_ready.count(decision);
        let drawn = match decision {
            DrawWith::Program(program) => program,
            DrawWith::Fallback(fallback) => {
                checked.program = self.vertex_program(fallback)?;
                fallback
            }
            DrawWith::Skip => return Ok(()),
        };
        let wait = draw.when_not_ready == NotReady::Wait;
        let names = (drawn.name, draw.target);
        let inputs = self.input_attachment_writes(&checked.program, names, checked.target)?;
        let pass = self.render_pass_for_inputs(checked.index, checked.target, &inputs)?;
        let pipeline = match answered.get() {
            Some((program, pipeline)) if program == drawn => pipeline,
            _ => self.pipeline_for_draw(&checked.program, names, checked.target, pass, wait)?,
        };
        self.write_input_attachments(&inputs);
        let color_layout = checked.target.draw_layout();
        let index = checked.index;
        self.submit("drawing", |cb| self.record_draw(cb, &checked, pipeline, pass, color_layout))?;
        self.targets[index].drawn_into(color_layout);
        Ok(())
    }

    fn draw_mesh_tasks(&mut self, call: &MeshDrawCall) -> Result<(), XrError> {
        self.draw_mesh(call)
    }

    fn read_pixels(&mut self, id: RenderTargetId) -> Result<Image, XrError> {
        let index = self.target_index(id)?;
        let target = &self.targets[index];
        let color = &target.colors[0];
        checks::check_read_pixels(id, color.format == COLOR_FORMAT)?;
        let (image, layout, width, height) = (color.image, color.layout, target.width, target.height);
        let to = if target.textures { vk::ImageLayout::GENERAL } else { vk::ImageLayout::TRANSFER_SRC_OPTIMAL };
        let read = ImageRead { image, level: 0, layout: to, width, height, bytes_per_pixel: 4 };
        let rgba = self.read_image("reading pixels", read, |cb| self.transition_image(cb, image, layout, to))?;
        self.targets[index].colors[0].layout = to;
        Ok(Image { width, height, rgba: rgba.into() })
    }

    fn resize_window(&mut self, width: u32, height: u32) -> Result<(), XrError> {
        let swapchain = self
            .swapchain
            .as_mut()
            .ok_or_else(|| XrError::invalid_input("this Vulkan device is headless: it has no window to resize"))?;
        swapchain.resize(width, height);
        Ok(())
    }

    fn present(&mut self, id: RenderTargetId, capture: bool) -> Result<Presented, XrError> {
        let index = self.target_index(id)?;
        let mut swapchain = self.swapchain.take().ok_or_else(|| {
            XrError::invalid_input(
                "this Vulkan device is headless: open it with a window (DeviceOptions::window) to present",
            )
        })?;
        let result = self.present_with(&mut swapchain, index, capture);
        self.swapchain = Some(swapchain);
        result
    }

    fn create_depth_render_target(&mut self, width: u32, height: u32) -> Result<RenderTargetId, XrError> {
        self.new_target(width, height, &[COLOR_FORMAT], true, false)
    }

    fn create_texture(&mut self, desc: &TextureDesc, pixels: &[u8], levels_given: u32) -> Result<TextureId, XrError> {
        self.new_texture(desc.given_levels(pixels, levels_given)?)
    }

    fn read_texture(&mut self, id: TextureId, level: u32) -> Result<Vec<u8>, XrError> {
        let texture = self.texture(id)?;
        checks::check_texture_level(id, texture.desc.levels(), level)?;
        let (width, height) = texture.desc.level_size(level);
        let bytes_per_pixel = texture.desc.format.bytes_per_pixel() as u64;
        // Textures stay in GENERAL, which a copy reads.
        let read =
            ImageRead { image: texture.image, level, layout: vk::ImageLayout::GENERAL, width, height, bytes_per_pixel };
        self.read_image("reading a texture", read, |_| {})
    }

    fn create_sampler(&mut self, desc: &SamplerDesc) -> Result<SamplerId, XrError> {
        self.new_sampler(desc)
    }

    fn create_buffer(&mut self, usage: BufferUsage, data: &[u8]) -> Result<BufferId, XrError> {
        self.new_data_buffer(usage, data)
    }

    fn write_buffer(&mut self, id: BufferId, offset: u64, data: &[u8]) -> Result<(), XrError> {
        let buffer = self.data_buffer(id)?;
        xr_device::check_buffer_write(id, offset, data.len(), buffer.size)?;
        // SAFETY: host-visible, coherent memory at least `size` long; the
        // device is idle between calls (every submission is waited for).
        unsafe { self.write_host(buffer.memory, offset as usize, data) }
    }

    fn read_buffer(&mut self, id: BufferId) -> Result<Vec<u8>, XrError> {
        let buffer = self.data_buffer(id)?;
        // SAFETY: as in `write_buffer`: the buffer's memory is this device's,
        // host visible, coherent and `size` long, and no submission runs.
        unsafe { self.read_host(buffer.memory, buffer.size) }
    }

    fn texture_binding(&self, id: TextureId, sampler: Option<SamplerId>) -> Result<ResourceBinding, XrError> {
        let texture = self.texture(id)?;
        let sampler = match sampler {
            Some(s) => checks::find(&self.samplers, "sampler", s.0)?.as_raw(),
            None => 0,
        };
        Ok(ResourceBinding {
            device: self.context.device.handle().as_raw(),
            is_texture: true,
            handle: texture.view.as_raw(),
            object: texture.image.as_raw(),
            sampler,
            size: texture.desc.format as u64,
            storage: texture.desc.storage,
            acceleration_structure: false,
        })
    }

    fn buffer_binding(&self, id: BufferId) -> Result<ResourceBinding, XrError> {
        let buffer = self.data_buffer(id)?;
        Ok(ResourceBinding {
            device: self.context.device.handle().as_raw(),
            is_texture: false,
            handle: buffer.buffer.as_raw(),
            object: buffer.buffer.as_raw(),
            sampler: 0,
            size: buffer.size as u64,
            storage: buffer.usage.contains(BufferUsage::STORAGE),
            acceleration_structure: false,
        })
    }

    fn dispatch(&mut self, call: &ComputeCall) -> Result<(), XrError> {
        self.dispatch_compute(call)
    }

    fn create_render_target_with(&mut self, desc: &RenderTargetDesc) -> Result<RenderTargetId, XrError> {
        let formats: Vec<vk::Format> = desc.colors.iter().map(|f| vk_format(*f)).collect();
        self.new_target(desc.width, desc.height, &formats, desc.depth, true)
    }

    fn render_target_texture(&mut self, id: RenderTargetId, attachment: u32) -> Result<TextureId, XrError> {
        self.attachment_texture(id, attachment)
    }

    fn counters(&self) -> Result<Vec<DeviceCounter>, XrError> {
        let created = &self.shared.created;
        let mut counters = vec![
            DeviceCounter { name: "pipelines".into(), value: created.pipelines.load(Ordering::Relaxed) },
            DeviceCounter { name: "shader objects".into(), value: created.shader_objects.load(Ordering::Relaxed) },
        ];
        counters.extend(self.not_ready.counters());
        Ok(counters)
    }

    /// Asks the program's build system without waiting (which starts its
    /// pipeline's compile for the target if it had not): `Ready` for a
    /// program that makes nothing at a draw (compute, mesh and ray tracing
    /// programs, shader objects, the device's own target).
    fn readiness(&self, program: ProgramRef, target: RenderTargetId) -> Result<Readiness, XrError> {
        let index = self.target_index(target)?;
        let registered = self.program(program)?;
        if registered.compute || registered.mesh || registered.ray_tracing {
            return Ok(Readiness::Ready);
        }
        Ok(self.draw_readiness(&registered, (program.name, target), index)?.0)
    }

    fn take_validation_messages(&mut self) -> Result<Vec<String>, XrError> {
        Ok(self.context.take_validation_messages())
    }

    fn create_bottom_level(&mut self, desc: &BottomLevelDesc) -> Result<AccelerationStructureId, XrError> {
        self.bottom_level(desc)
    }

    fn create_top_level(&mut self, instances: &[AccelerationInstance]) -> Result<AccelerationStructureId, XrError> {
        self.top_level(instances)
    }

    fn acceleration_structure_binding(&self, id: AccelerationStructureId) -> Result<ResourceBinding, XrError> {
        self.acceleration_binding(id)
    }

    fn trace_rays(&mut self, call: &TraceRaysCall) -> Result<(), XrError> {
        self.launch_rays(call)
    }
}

impl Drop for VkDevice {
    fn drop(&mut self) {
        // A build system's threads compiling for a program still registered
        // may be inside a call on this device: they end before anything goes.
        let programs: Vec<VulkanProgram> =
            self.shared.programs.lock().unwrap_or_else(std::sync::PoisonError::into_inner).values().copied().collect();
        for program in programs {
            if let Some(settle) = program.settle {
                // SAFETY: a registered program's context is live until it is unregistered.
                unsafe { settle(program.pipeline_context) };
            }
        }
        // Closed first: a build system's later call through the loader finds nothing.
        // Whatever else failed: a closed device must never look open.
        OPEN.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(&self.key);
        // SAFETY: once the device is idle no trace reads them.
        unsafe {
            let _ = self.context.device.device_wait_idle();
            self.destroy_accelerations();
        }
        let device = &self.context.device;
        // SAFETY: once `vkDeviceWaitIdle` returns no submission uses these
        // objects; each was created on this device and is destroyed once
        // (taken or drained), the swapchain before `Context` destroys its
        // surface and then the device.
        unsafe {
            let _ = device.device_wait_idle();
            if let Some(mut swapchain) = self.swapchain.take() {
                swapchain.destroy(device);
            }
            for framebuffer in self.framebuffers.get_mut().drain().map(|(_, f)| f) {
                device.destroy_framebuffer(framebuffer, None);
            }
            for render_pass in self.render_passes.get_mut().drain().map(|(_, p)| p) {
                device.destroy_render_pass(render_pass, None);
            }
            for target in std::mem::take(&mut self.targets) {
                self.destroy_target(target);
            }
            for texture in self.textures.drain(..).filter(|t| !t.borrowed) {
                device.destroy_image_view(texture.view, None);
                device.destroy_image(texture.image, None);
                device.free_memory(texture.memory, None);
            }
            for sampler in self.samplers.drain(..) {
                device.destroy_sampler(sampler, None);
            }
            for buffer in self.data_buffers.drain(..) {
                device.destroy_buffer(buffer.buffer, None);
                device.free_memory(buffer.memory, None);
            }
            for buffer in self.buffers.drain(..) {
                device.destroy_buffer(buffer.buffer, None);
                device.free_memory(buffer.memory, None);
            }
            device.destroy_command_pool(self.pool, None);
        }
    }
}
