//! An open Vulkan device: capabilities, handles, and the command surface.

mod ray_tracing;
mod shader_objects;

use crate::{
    instance::{Context, vk_error},
    swapchain::{Frame, Swapchain},
};
use abi_stable::std_types::{ROption, RSlice, RString, RVec};
use ash::vk::{self, Handle};
use std::{
    collections::{BTreeMap, HashMap},
    ffi::{c_char, c_void},
    sync::{
        Arc, Mutex,
        atomic::{AtomicU32, AtomicUsize, Ordering},
    },
};
use xr_device::{
    AccelerationInstance, AccelerationStructureId, BottomLevelDesc, BufferId, BufferUsage, ComputeCall,
    CreatedObjectCounts, DeviceBackend, DeviceCapabilities, DeviceCounter, DeviceKind, DeviceOptions, DrawCall, Filter,
    Image, MeshDrawCall, NativeHandles, PresentStatus, Presented, ProgramKind, RenderTargetDesc, RenderTargetId,
    ResourceBinding, SamplerDesc, SamplerId, TextureDesc, TextureId, TraceRaysCall, VertexBufferId, VertexLayout,
    VulkanLoader, VulkanProgram, Wrap, XrError, checks,
};
use xr_vulkan_common::formats::{texture_format, vk_format};

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

/// The open devices' shared state, by the number their loaders carry as
/// context. A device adds itself when it opens and removes itself first
/// thing when it closes.
static OPEN: Mutex<BTreeMap<usize, Arc<Shared>>> = Mutex::new(BTreeMap::new());

/// The number the next device opened gets (never 0: a null context is no device's).
static NEXT_DEVICE: AtomicUsize = AtomicUsize::new(1);

/// The shared state of the open device whose loader carries `context`;
/// `None` once that device is closed. The context is only ever compared,
/// never dereferenced.
fn open_device(context: *const c_void) -> Option<Arc<Shared>> {
    // A poisoned table is still the truth about which devices are open.
    OPEN.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get(&context.addr()).cloned()
}

unsafe extern "C" fn loader_get_instance_proc_addr(
    context: *const c_void,
    instance: u64,
    name: *const c_char,
) -> *const c_void {
    let Some(shared) = open_device(context) else { return std::ptr::null() };
    if name.is_null() {
        return std::ptr::null();
    }
    // SAFETY: `name` is a NUL-terminated string (the loader's contract) and
    // `instance` a handle the device gave out or null; `shared` keeps the
    // library the function lives in loaded across the call.
    match unsafe { (shared.entry.static_fn().get_instance_proc_addr)(vk::Instance::from_raw(instance), name) } {
        Some(f) => f as *const c_void,
        None => std::ptr::null(),
    }
}

unsafe extern "C" fn loader_register_program(context: *const c_void, program: *const VulkanProgram) -> u32 {
    let Some(shared) = open_device(context) else { return 0 };
    if program.is_null() {
        return 0;
    }
    // SAFETY: a non-null `program` points to a valid description for the
    // duration of the call (the loader's contract); it is copied out.
    let program = unsafe { *program };
    let name = shared.next.fetch_add(1, Ordering::Relaxed);
    match shared.programs.lock() {
        Ok(mut programs) => {
            programs.insert(name, program);
            name
        }
        Err(_) => 0,
    }
}

extern "C" fn loader_unregister_program(context: *const c_void, name: u32) {
    if let Some(mut programs) = open_device(context).as_ref().and_then(|shared| shared.programs.lock().ok()) {
        programs.remove(&name);
    }
}

extern "C" fn loader_is_open(context: *const c_void) -> bool {
    open_device(context).is_some()
}

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

/// A draw whose target, vertices, program and indices were checked by
/// [`VkDevice::validate_draw`]: what the later steps of a draw read.
/// A rendering into a target, as [`VkDevice::record_rendering`] records it.
struct Rendering<'a> {
    target: &'a Target,
    /// The render pass (and framebuffer) to render in; `None`: dynamic rendering.
    pass: Option<(vk::RenderPass, vk::Framebuffer)>,
    color_layout: vk::ImageLayout,
    depth_test: bool,
}

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

    fn allocate(
        &self,
        requirements: vk::MemoryRequirements,
        flags: vk::MemoryPropertyFlags,
    ) -> Result<vk::DeviceMemory, XrError> {
        self.allocate_with(requirements, flags, false)
    }

    /// Memory whose buffers have device addresses (acceleration structure
    /// inputs, binding tables).
    fn allocate_addressable(
        &self,
        requirements: vk::MemoryRequirements,
        flags: vk::MemoryPropertyFlags,
    ) -> Result<vk::DeviceMemory, XrError> {
        self.allocate_with(requirements, flags, true)
    }

    fn allocate_with(
        &self,
        requirements: vk::MemoryRequirements,
        flags: vk::MemoryPropertyFlags,
        addressable: bool,
    ) -> Result<vk::DeviceMemory, XrError> {
        let index = self.context.memory_type(requirements.memory_type_bits, flags)?;
        let mut device_address = vk::MemoryAllocateFlagsInfo::default().flags(vk::MemoryAllocateFlags::DEVICE_ADDRESS);
        let mut info = vk::MemoryAllocateInfo::default().allocation_size(requirements.size).memory_type_index(index);
        if addressable {
            info = info.push_next(&mut device_address);
        }
        // SAFETY: a valid device and allocate info.
        unsafe { self.context.device.allocate_memory(&info, None) }.map_err(vk_error("vkAllocateMemory"))
    }

    /// A render target of `colors` (attachment 0 first); its attachments
    /// are also textures when `textures` (see [`Target::textures`]).
    fn new_target(
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
    unsafe fn destroy_target(&self, target: Target) {
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

    /// Copies `bytes` into host-visible, coherent `memory` from byte `offset`.
    ///
    /// # Safety
    /// `memory` is this device's, host visible and coherent, at least
    /// `offset + bytes.len()` long, and no submission uses it now.
    unsafe fn write_host(&self, memory: vk::DeviceMemory, offset: usize, bytes: &[u8]) -> Result<(), XrError> {
        let device = &self.context.device;
        // SAFETY: the caller guarantees `memory` is this device's, host
        // visible, unused by the device and at least `offset + bytes.len()`
        // long, so the mapping covers the bytes written; it is unmapped
        // before returning.
        unsafe {
            let mapped = device
                .map_memory(memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty())
                .map_err(vk_error("vkMapMemory"))?;
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), mapped.cast::<u8>().add(offset), bytes.len());
            device.unmap_memory(memory);
        }
        Ok(())
    }

    /// The first `len` bytes of host-visible, coherent `memory`.
    ///
    /// # Safety
    /// As for [`Self::write_host`], with `len` in place of the range.
    unsafe fn read_host(&self, memory: vk::DeviceMemory, len: usize) -> Result<Vec<u8>, XrError> {
        let device = &self.context.device;
        // SAFETY: the caller guarantees `memory` is this device's, host
        // visible, unused by the device and at least `len` long, so the
        // mapping covers the bytes read; they are copied out before it is
        // unmapped.
        unsafe {
            let mapped = device
                .map_memory(memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty())
                .map_err(vk_error("vkMapMemory"))?;
            let data = std::slice::from_raw_parts(mapped.cast::<u8>(), len).to_vec();
            device.unmap_memory(memory);
            Ok(data)
        }
    }

    fn host_buffer(&self, size: u64, usage: vk::BufferUsageFlags) -> Result<(vk::Buffer, vk::DeviceMemory), XrError> {
        let device = &self.context.device;
        let info = vk::BufferCreateInfo::default().size(size.max(4)).usage(usage);
        // SAFETY: valid create infos.
        unsafe {
            let buffer = device.create_buffer(&info, None).map_err(vk_error("vkCreateBuffer"))?;
            let requirements = device.get_buffer_memory_requirements(buffer);
            let flags = vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
            let memory =
                self.allocate_with(requirements, flags, usage.contains(vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS))?;
            device.bind_buffer_memory(buffer, memory, 0).map_err(vk_error("vkBindBufferMemory"))?;
            Ok((buffer, memory))
        }
    }

    /// Records with `record`, submits, and waits.
    fn submit(&self, what: &str, record: impl FnOnce(vk::CommandBuffer)) -> Result<(), XrError> {
        self.submit_with(what, &[], &[], record)
    }

    /// Records with `record`, submits after the `waits` semaphores (each
    /// before the stage with it), signals `signals`, and waits.
    fn submit_with(
        &self,
        what: &str,
        waits: &[(vk::Semaphore, vk::PipelineStageFlags)],
        signals: &[vk::Semaphore],
        record: impl FnOnce(vk::CommandBuffer),
    ) -> Result<(), XrError> {
        self.record_and_submit(waits, signals, record)?;
        self.check_validation(what)
    }

    /// Records, submits and waits, without looking at validation messages.
    fn record_and_submit(
        &self,
        waits: &[(vk::Semaphore, vk::PipelineStageFlags)],
        signals: &[vk::Semaphore],
        record: impl FnOnce(vk::CommandBuffer),
    ) -> Result<(), XrError> {
        let device = &self.context.device;
        let info = vk::CommandBufferAllocateInfo::default()
            .command_pool(self.pool)
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(1);
        // SAFETY: one-shot command buffer on this device's queue, waited for before it is freed.
        unsafe {
            let cb = device.allocate_command_buffers(&info).map_err(vk_error("vkAllocateCommandBuffers"))?[0];
            let begin = vk::CommandBufferBeginInfo::default().flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
            let result = (|| {
                device.begin_command_buffer(cb, &begin).map_err(vk_error("vkBeginCommandBuffer"))?;
                record(cb);
                device.end_command_buffer(cb).map_err(vk_error("vkEndCommandBuffer"))?;
                let buffers = [cb];
                let wait_semaphores: Vec<vk::Semaphore> = waits.iter().map(|(s, _)| *s).collect();
                let wait_stages: Vec<vk::PipelineStageFlags> = waits.iter().map(|(_, stage)| *stage).collect();
                let submit = [vk::SubmitInfo::default()
                    .command_buffers(&buffers)
                    .wait_semaphores(&wait_semaphores)
                    .wait_dst_stage_mask(&wait_stages)
                    .signal_semaphores(signals)];
                device
                    .queue_submit(self.context.queue, &submit, vk::Fence::null())
                    .map_err(vk_error("vkQueueSubmit"))?;
                device.queue_wait_idle(self.context.queue).map_err(vk_error("vkQueueWaitIdle"))
            })();
            device.free_command_buffers(self.pool, &[cb]);
            result
        }
    }

    /// Moves colour attachment 0 (what is read back and presented) to `to`.
    fn transition(&self, cb: vk::CommandBuffer, target: &Target, to: vk::ImageLayout) {
        self.transition_image(cb, target.colors[0].image, target.colors[0].layout, to);
    }

    /// The render pass and framebuffer a draw into `target` (at `index`)
    /// with a program reading the input attachments `inputs` uses where the
    /// device cannot read them within dynamic rendering: one subpass whose
    /// colour attachments are the target's, all in `GENERAL`, input
    /// attachment `i` reading colour attachment `i` (as local read maps
    /// them), and the depth attachment. Both are made once and kept.
    fn render_pass(
        &self,
        index: usize,
        target: &Target,
        inputs: &[(xr_device::InputAttachmentSlot, vk::DescriptorImageInfo)],
    ) -> Result<(vk::RenderPass, vk::Framebuffer), XrError> {
        let device = &self.context.device;
        let mut read: Vec<u32> = inputs.iter().map(|(slot, _)| slot.attachment).collect();
        read.sort_unstable();
        read.dedup();
        let shape = RenderPassShape { colors: target.formats(), depth: target.depth.is_some(), inputs: read };
        let mut passes = self.render_passes.borrow_mut();
        let render_pass = match passes.get(&shape) {
            Some(pass) => *pass,
            None => {
                let mut attachments: Vec<vk::AttachmentDescription> = target
                    .colors
                    .iter()
                    .map(|color| {
                        vk::AttachmentDescription::default()
                            .format(color.format)
                            .samples(vk::SampleCountFlags::TYPE_1)
                            .load_op(vk::AttachmentLoadOp::LOAD)
                            .store_op(vk::AttachmentStoreOp::STORE)
                            .stencil_load_op(vk::AttachmentLoadOp::DONT_CARE)
                            .stencil_store_op(vk::AttachmentStoreOp::DONT_CARE)
                            .initial_layout(vk::ImageLayout::GENERAL)
                            .final_layout(vk::ImageLayout::GENERAL)
                    })
                    .collect();
                let colors: Vec<vk::AttachmentReference> = (0..target.colors.len() as u32)
                    .map(|i| vk::AttachmentReference { attachment: i, layout: vk::ImageLayout::GENERAL })
                    .collect();
                let last = shape.inputs.last().copied().unwrap_or(0);
                let input_refs: Vec<vk::AttachmentReference> = (0..=last)
                    .map(|i| vk::AttachmentReference {
                        attachment: if shape.inputs.contains(&i) { i } else { vk::ATTACHMENT_UNUSED },
                        layout: vk::ImageLayout::GENERAL,
                    })
                    .collect();
                let depth = vk::AttachmentReference {
                    attachment: attachments.len() as u32,
                    layout: vk::ImageLayout::DEPTH_ATTACHMENT_OPTIMAL,
                };
                if shape.depth {
                    attachments.push(
                        vk::AttachmentDescription::default()
                            .format(DEPTH_FORMAT)
                            .samples(vk::SampleCountFlags::TYPE_1)
                            .load_op(vk::AttachmentLoadOp::LOAD)
                            .store_op(vk::AttachmentStoreOp::STORE)
                            .stencil_load_op(vk::AttachmentLoadOp::DONT_CARE)
                            .stencil_store_op(vk::AttachmentStoreOp::DONT_CARE)
                            .initial_layout(vk::ImageLayout::DEPTH_ATTACHMENT_OPTIMAL)
                            .final_layout(vk::ImageLayout::DEPTH_ATTACHMENT_OPTIMAL),
                    );
                }
                let mut subpass = vk::SubpassDescription::default()
                    .pipeline_bind_point(vk::PipelineBindPoint::GRAPHICS)
                    .color_attachments(&colors)
                    .input_attachments(&input_refs);
                if shape.depth {
                    subpass = subpass.depth_stencil_attachment(&depth);
                }
                let subpasses = [subpass];
                let info = vk::RenderPassCreateInfo::default().attachments(&attachments).subpasses(&subpasses);
                // SAFETY: a valid create info whose arrays live across the call.
                let pass = unsafe { device.create_render_pass(&info, None) }.map_err(vk_error("vkCreateRenderPass"))?;
                passes.insert(shape, pass);
                pass
            }
        };
        let mut framebuffers = self.framebuffers.borrow_mut();
        if let Some(framebuffer) = framebuffers.get(&(index, render_pass)) {
            return Ok((render_pass, *framebuffer));
        }
        let views: Vec<vk::ImageView> =
            target.colors.iter().chain(target.depth.as_ref()).map(|attachment| attachment.view).collect();
        let info = vk::FramebufferCreateInfo::default()
            .render_pass(render_pass)
            .attachments(&views)
            .width(target.width)
            .height(target.height)
            .layers(1);
        // SAFETY: the views are the target's, alive as long as the device; the render pass is compatible.
        let framebuffer = unsafe { device.create_framebuffer(&info, None) }.map_err(vk_error("vkCreateFramebuffer"))?;
        framebuffers.insert((index, render_pass), framebuffer);
        Ok((render_pass, framebuffer))
    }

    /// Makes every write recorded so far visible to every later read, on
    /// the device and the host: what a draw or clear wrote into an
    /// attachment that is also a texture, for the next draw sampling it or
    /// a read back (which record no barrier of their own for textures).
    fn writes_visible(&self, cb: vk::CommandBuffer) {
        let barrier = vk::MemoryBarrier::default()
            .src_access_mask(vk::AccessFlags::MEMORY_WRITE)
            .dst_access_mask(vk::AccessFlags::MEMORY_READ | vk::AccessFlags::MEMORY_WRITE | vk::AccessFlags::HOST_READ);
        // SAFETY: recording into a command buffer in the recording state.
        unsafe {
            self.context.device.cmd_pipeline_barrier(
                cb,
                vk::PipelineStageFlags::ALL_COMMANDS,
                vk::PipelineStageFlags::ALL_COMMANDS | vk::PipelineStageFlags::HOST,
                vk::DependencyFlags::empty(),
                &[barrier],
                &[],
                &[],
            );
        }
    }

    /// What shaders at `stage` wrote, visible to every later use, on the
    /// device and the host (after a dispatch or a ray launch).
    fn shader_writes_visible(&self, cb: vk::CommandBuffer, stage: vk::PipelineStageFlags) {
        let barrier = vk::MemoryBarrier::default()
            .src_access_mask(vk::AccessFlags::SHADER_WRITE)
            .dst_access_mask(vk::AccessFlags::MEMORY_READ | vk::AccessFlags::MEMORY_WRITE | vk::AccessFlags::HOST_READ);
        // SAFETY: recording into a command buffer in the recording state.
        unsafe {
            self.context.device.cmd_pipeline_barrier(
                cb,
                stage,
                vk::PipelineStageFlags::ALL_COMMANDS | vk::PipelineStageFlags::HOST,
                vk::DependencyFlags::empty(),
                &[barrier],
                &[],
                &[],
            );
        }
    }

    /// Moves every colour attachment to `to`; also a barrier between two
    /// uses in one layout (a draw reading what the one before wrote).
    fn transition_colors(&self, cb: vk::CommandBuffer, target: &Target, to: vk::ImageLayout) {
        for color in &target.colors {
            self.transition_image(cb, color.image, color.layout, to);
        }
    }

    fn transition_image(&self, cb: vk::CommandBuffer, image: vk::Image, from: vk::ImageLayout, to: vk::ImageLayout) {
        self.barrier(cb, image, from, to, color_range());
    }

    fn barrier(
        &self,
        cb: vk::CommandBuffer,
        image: vk::Image,
        from: vk::ImageLayout,
        to: vk::ImageLayout,
        range: vk::ImageSubresourceRange,
    ) {
        let barrier = vk::ImageMemoryBarrier::default()
            .old_layout(from)
            .new_layout(to)
            .src_access_mask(vk::AccessFlags::MEMORY_WRITE)
            .dst_access_mask(vk::AccessFlags::MEMORY_READ | vk::AccessFlags::MEMORY_WRITE)
            .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .image(image)
            .subresource_range(range);
        // SAFETY: recording into a command buffer in the recording state.
        unsafe {
            self.context.device.cmd_pipeline_barrier(
                cb,
                vk::PipelineStageFlags::ALL_COMMANDS,
                vk::PipelineStageFlags::ALL_COMMANDS,
                vk::DependencyFlags::empty(),
                &[],
                &[],
                &[barrier],
            );
        }
    }

    fn target_index(&self, id: RenderTargetId) -> Result<usize, XrError> {
        checks::find(&self.targets, "render target", id.0)?;
        Ok(id.0 as usize)
    }

    /// A registered program, checked to be drawable: every resource bound.
    fn program(&self, program: xr_device::ProgramRef) -> Result<VulkanProgram, XrError> {
        if program.kind != ProgramKind::Program {
            return Err(XrError::invalid_input("Vulkan draws with programs; program pipelines are an OpenGL object"));
        }
        let registered = self
            .shared
            .programs
            .lock()
            .map_err(|_| XrError::driver("program table poisoned"))?
            .get(&program.name)
            .copied()
            .ok_or_else(|| {
                XrError::invalid_input(format!("{} is not a program registered with this device", program.name))
            })?;
        // SAFETY: the build system keeps the count alive while the program is registered.
        let unbound = if registered.unbound.is_null() { 0 } else { unsafe { *registered.unbound } };
        checks::check_bound(program.name, unbound)?;
        Ok(registered)
    }

    /// Binds a program's descriptor sets and push constants at `bind_point`.
    fn bind_program_state(&self, cb: vk::CommandBuffer, program: &VulkanProgram, bind_point: vk::PipelineBindPoint) {
        let device = &self.context.device;
        let layout = vk::PipelineLayout::from_raw(program.layout);
        // SAFETY: the build system keeps both arrays alive while the program is registered.
        let (sets, push) = unsafe {
            let sets: Vec<vk::DescriptorSet> = if program.descriptor_sets.is_null() {
                Vec::new()
            } else {
                std::slice::from_raw_parts(program.descriptor_sets, program.descriptor_set_count as usize)
                    .iter()
                    .map(|s| vk::DescriptorSet::from_raw(*s))
                    .collect()
            };
            let push = if program.push_constants.is_null() || program.push_constants_len == 0 {
                &[][..]
            } else {
                std::slice::from_raw_parts(program.push_constants, program.push_constants_len as usize)
            };
            (sets, push)
        };
        // SAFETY: recording; every handle belongs to this device.
        unsafe {
            if !sets.is_empty() {
                device.cmd_bind_descriptor_sets(cb, bind_point, layout, 0, &sets, &[]);
            }
            if !push.is_empty() {
                device.cmd_push_constants(
                    cb,
                    layout,
                    vk::ShaderStageFlags::from_raw(program.push_constant_stages),
                    0,
                    push,
                );
            }
        }
    }

    /// What a draw writes into its program's input attachments: each
    /// reads the colour attachment of `target` its index names. An error
    /// when the target does not have it.
    fn input_attachment_writes(
        &self,
        program: &VulkanProgram,
        (program_name, target_id): (u32, RenderTargetId),
        target: &Target,
    ) -> Result<Vec<(xr_device::InputAttachmentSlot, vk::DescriptorImageInfo)>, XrError> {
        let slots = if program.input_attachments.is_null() {
            &[][..]
        } else {
            // SAFETY: the build system keeps the slots alive while the program is registered.
            unsafe { std::slice::from_raw_parts(program.input_attachments, program.input_attachment_count as usize) }
        };
        if !slots.is_empty() && !target.textures {
            return Err(XrError::invalid_input(format!(
                "program {program_name} reads input attachments: draw it into a render target made with create_render_target_with, not render target {}",
                target_id.0
            )));
        }
        slots
            .iter()
            .map(|slot| {
                let color = target.colors.get(slot.attachment as usize).ok_or_else(|| {
                    XrError::invalid_input(format!(
                        "program {program_name} reads input attachment {}, but render target {} has {} colour attachment(s)",
                        slot.attachment,
                        target_id.0,
                        target.colors.len()
                    ))
                })?;
                let info =
                    vk::DescriptorImageInfo::default().image_view(color.view).image_layout(vk::ImageLayout::GENERAL);
                Ok((*slot, info))
            })
            .collect()
    }

    /// Checks what a draw names before anything is recorded: its target,
    /// vertex buffer and index buffer exist and fit the draw, and its
    /// program is a drawable graphics program.
    fn validate_draw<'a>(&'a self, draw: &'a DrawCall) -> Result<CheckedDraw<'a>, XrError> {
        let index = self.target_index(draw.target)?;
        let vertices = checks::find(&self.buffers, "vertex buffer", draw.vertex_buffer.0)?;
        let program = self.program(draw.program)?;
        if program.compute {
            return Err(XrError::invalid_input(format!(
                "program {} is a compute program: dispatch it",
                draw.program.name
            )));
        }
        if program.mesh {
            return Err(XrError::invalid_input(format!(
                "program {} is a mesh program: draw it with draw_mesh_tasks, without vertices",
                draw.program.name
            )));
        }
        if program.ray_tracing {
            return Err(XrError::invalid_input(format!(
                "program {} is a ray tracing program: launch it with trace_rays",
                draw.program.name
            )));
        }
        let indices = match draw.index_buffer.into_option() {
            Some(id) => {
                let indices = self.data_buffer(id)?;
                checks::check_index_buffer(id, indices.usage, indices.size, draw.first_vertex, draw.vertex_count)?;
                Some(indices.buffer)
            }
            None => None,
        };
        let target = &self.targets[index];
        checks::check_depth_test(draw.target, draw.depth_test, target.depth.is_some())?;
        Ok(CheckedDraw { call: draw, index, target, vertices, program, indices })
    }

    /// The render pass (and framebuffer) a draw reading the input
    /// attachments `inputs` records in, where the device cannot read them
    /// within dynamic rendering; `None` for dynamic rendering.
    fn render_pass_for_inputs(
        &self,
        index: usize,
        target: &Target,
        inputs: &[(xr_device::InputAttachmentSlot, vk::DescriptorImageInfo)],
    ) -> Result<Option<(vk::RenderPass, vk::Framebuffer)>, XrError> {
        if inputs.is_empty() || self.context.local_read {
            return Ok(None);
        }
        self.render_pass(index, target, inputs).map(Some)
    }

    /// The pipeline a draw binds: the program's own for a target of the
    /// device's colour format, otherwise one its build system makes for
    /// the target's formats (and render `pass`, if any). An error where
    /// there is none.
    fn pipeline_for_draw(
        &self,
        program: &VulkanProgram,
        (program_name, target_id): (u32, RenderTargetId),
        target: &Target,
        pass: Option<(vk::RenderPass, vk::Framebuffer)>,
    ) -> Result<vk::Pipeline, XrError> {
        if program.shader_object_count > 0 {
            // The build system makes shader objects only where the device
            // draws in no render pass of its own (it reads input
            // attachments within dynamic rendering, or they are none).
            if self.shader_objects.is_none() || pass.is_some() {
                return Err(XrError::invalid_input(format!(
                    "program {program_name} is made of shader objects, which this device cannot draw into render target {}",
                    target_id.0
                )));
            }
            // The build system hears of the formats drawn into (a usage log
            // records them, so that a warm draws into them); its answer is unused.
            if let Some(notice) = program.pipeline_for.filter(|_| mask_unwritten(target)) {
                let formats = target.formats();
                let depth_format = if target.depth.is_some() { DEPTH_FORMAT.as_raw() as u32 } else { 0 };
                // SAFETY: the build system keeps its context alive while the program is registered.
                unsafe { notice(program.pipeline_context, formats.as_ptr(), formats.len() as u32, depth_format, 0) };
            }
            return Ok(vk::Pipeline::null());
        }
        let formats = target.formats();
        let pipeline = if !mask_unwritten(target) {
            if target.depth.is_some() { program.depth_pipeline } else { program.pipeline }
        } else {
            let depth_format = if target.depth.is_some() { DEPTH_FORMAT.as_raw() as u32 } else { 0 };
            match program.pipeline_for {
                // SAFETY: the build system keeps its context alive while the program is registered.
                Some(make) => unsafe {
                    let render_pass = pass.map_or(0, |(render_pass, _)| render_pass.as_raw());
                    make(program.pipeline_context, formats.as_ptr(), formats.len() as u32, depth_format, render_pass)
                },
                None => 0,
            }
        };
        if pipeline == 0 {
            self.check_validation("making a pipeline")?;
            return Err(XrError::invalid_input(format!(
                "program {program_name} has no pipeline for render target {} ({} colour attachment(s){})",
                target_id.0,
                formats.len(),
                if target.depth.is_some() { " and depth" } else { "" }
            )));
        }
        Ok(vk::Pipeline::from_raw(pipeline))
    }

    /// Points the program's input attachment descriptors at the target's
    /// colour attachments they read.
    fn write_input_attachments(&self, inputs: &[(xr_device::InputAttachmentSlot, vk::DescriptorImageInfo)]) {
        if inputs.is_empty() {
            return;
        }
        let writes: Vec<vk::WriteDescriptorSet> = inputs
            .iter()
            .map(|(slot, image)| {
                vk::WriteDescriptorSet::default()
                    .dst_set(vk::DescriptorSet::from_raw(slot.descriptor_set))
                    .dst_binding(slot.binding)
                    .dst_array_element(slot.array_element)
                    .descriptor_type(vk::DescriptorType::INPUT_ATTACHMENT)
                    .image_info(std::slice::from_ref(image))
            })
            .collect();
        // SAFETY: the sets are the program's (alive while registered);
        // no submission uses them (every one is waited for).
        unsafe { self.context.device.update_descriptor_sets(&writes, &[]) };
    }

    /// Records a checked draw with `pipeline`: the rendering around it
    /// ([`Self::record_rendering`]), its vertices bound and the triangles drawn.
    fn record_draw(
        &self,
        cb: vk::CommandBuffer,
        checked: &CheckedDraw<'_>,
        pipeline: vk::Pipeline,
        pass: Option<(vk::RenderPass, vk::Framebuffer)>,
        color_layout: vk::ImageLayout,
    ) {
        let (device, draw) = (&self.context.device, checked.call);
        let (bindings, attributes) = vertex_input(&checked.vertices.layout);
        let rendering = Rendering { target: checked.target, pass, color_layout, depth_test: draw.depth_test };
        self.record_rendering(cb, &rendering, pipeline, &checked.program, |cb| {
            // SAFETY: recording, within the rendering begun; every handle belongs to this device.
            unsafe {
                self.vertex_input.cmd_set_vertex_input(cb, &bindings, &attributes);
                device.cmd_bind_vertex_buffers(cb, 0, &[checked.vertices.buffer], &[0]);
                match checked.indices {
                    Some(indices) => {
                        device.cmd_bind_index_buffer(cb, indices, 0, vk::IndexType::UINT32);
                        device.cmd_draw_indexed(cb, draw.vertex_count, 1, draw.first_vertex, 0, 0);
                    }
                    None => device.cmd_draw(cb, draw.vertex_count, 1, draw.first_vertex, 0),
                }
            }
        });
    }

    /// Records `commands` drawing with `pipeline` and `program` inside a
    /// rendering into all of a target: its attachments moved to their draw
    /// layouts (colour ones to `color_layout`), the rendering begun (in
    /// render `pass`, if any), viewport, scissor, depth state and the
    /// program's state set; then the rendering ended, and what it wrote
    /// made visible where the attachments are textures.
    fn record_rendering(
        &self,
        cb: vk::CommandBuffer,
        rendering: &Rendering<'_>,
        pipeline: vk::Pipeline,
        program: &VulkanProgram,
        commands: impl FnOnce(vk::CommandBuffer),
    ) {
        let (device, target) = (&self.context.device, rendering.target);
        self.transition_colors(cb, target, rendering.color_layout);
        let area = self.begin_draw_rendering(cb, target, rendering.pass, rendering.color_layout);
        // Negative height: +y is up in clip space, as in OpenGL, and row 0 is the top.
        let viewport = vk::Viewport {
            x: 0.0,
            y: target.height as f32,
            width: target.width as f32,
            height: -(target.height as f32),
            min_depth: 0.0,
            max_depth: 1.0,
        };
        match self.shader_objects.as_ref().filter(|_| pipeline == vk::Pipeline::null()) {
            Some(shader_objects) => {
                let state = shader_objects::DrawState {
                    program,
                    viewport,
                    area,
                    attachments: target.colors.len() as u32,
                    mask_unwritten: mask_unwritten(target),
                    depth: target.depth.as_ref().map(|_| rendering.depth_test),
                };
                // SAFETY: recording, within the rendering just begun; the
                // program is registered, so its shader objects are alive.
                unsafe { shader_objects.bind(device, cb, &state) };
            }
            // SAFETY: recording, within the rendering just begun; every handle belongs to this device.
            None => unsafe {
                device.cmd_bind_pipeline(cb, vk::PipelineBindPoint::GRAPHICS, pipeline);
                device.cmd_set_viewport(cb, 0, &[viewport]);
                device.cmd_set_scissor(cb, 0, &[area]);
                if target.depth.is_some() {
                    device.cmd_set_depth_test_enable(cb, rendering.depth_test);
                    device.cmd_set_depth_write_enable(cb, rendering.depth_test);
                }
            },
        }
        self.bind_program_state(cb, program, vk::PipelineBindPoint::GRAPHICS);
        commands(cb);
        // SAFETY: recording; ends the rendering begun above.
        unsafe {
            if rendering.pass.is_some() {
                device.cmd_end_render_pass(cb);
            } else {
                device.cmd_end_rendering(cb);
            }
        }
        if target.textures {
            self.writes_visible(cb);
        }
    }

    /// Begins rendering into all of `target`, its colour attachments in
    /// `color_layout` and its depth attachment moved to the depth
    /// attachment layout: in render `pass` where there is one, with
    /// dynamic rendering otherwise. Returns the area rendered.
    fn begin_draw_rendering(
        &self,
        cb: vk::CommandBuffer,
        target: &Target,
        pass: Option<(vk::RenderPass, vk::Framebuffer)>,
        color_layout: vk::ImageLayout,
    ) -> vk::Rect2D {
        let attachments: Vec<vk::RenderingAttachmentInfo> = target
            .colors
            .iter()
            .map(|color| {
                vk::RenderingAttachmentInfo::default()
                    .image_view(color.view)
                    .image_layout(color_layout)
                    .load_op(vk::AttachmentLoadOp::LOAD)
                    .store_op(vk::AttachmentStoreOp::STORE)
            })
            .collect();
        let depth_attachment = target.depth.as_ref().map(|depth| {
            self.barrier(cb, depth.image, depth.layout, vk::ImageLayout::DEPTH_ATTACHMENT_OPTIMAL, depth_range());
            vk::RenderingAttachmentInfo::default()
                .image_view(depth.view)
                .image_layout(vk::ImageLayout::DEPTH_ATTACHMENT_OPTIMAL)
                .load_op(vk::AttachmentLoadOp::LOAD)
                .store_op(vk::AttachmentStoreOp::STORE)
        });
        let area = vk::Rect2D {
            offset: vk::Offset2D::default(),
            extent: vk::Extent2D { width: target.width, height: target.height },
        };
        let device = &self.context.device;
        // SAFETY: recording; the attachments are the target's, in the
        // layouts named, and the render pass and framebuffer were made for it.
        unsafe {
            match pass {
                Some((render_pass, framebuffer)) => {
                    let begin = vk::RenderPassBeginInfo::default()
                        .render_pass(render_pass)
                        .framebuffer(framebuffer)
                        .render_area(area);
                    device.cmd_begin_render_pass(cb, &begin, vk::SubpassContents::INLINE);
                }
                None => {
                    let mut rendering =
                        vk::RenderingInfo::default().render_area(area).layer_count(1).color_attachments(&attachments);
                    if let Some(depth) = depth_attachment.as_ref() {
                        rendering = rendering.depth_attachment(depth);
                    }
                    device.cmd_begin_rendering(cb, &rendering);
                }
            }
        }
        area
    }

    fn data_buffer(&self, id: BufferId) -> Result<&DataBuffer, XrError> {
        checks::find(&self.data_buffers, "buffer", id.0)
    }

    fn texture(&self, id: TextureId) -> Result<&Texture, XrError> {
        checks::find(&self.textures, "texture", id.0)
    }

    /// Copies one level of an image into host memory, after `before` has
    /// recorded what puts it in `read.layout`.
    fn read_image(
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

    fn present_with(&mut self, swapchain: &mut Swapchain, index: usize, capture: bool) -> Result<Presented, XrError> {
        // Messages of earlier work (a pipeline made by a build system) are
        // that work's: reported before an image is taken.
        self.check_validation("the work before presenting")?;
        let Some(frame) = swapchain.acquire(&self.context)? else {
            return Ok(Presented { status: PresentStatus::Skipped, image: ROption::RNone });
        };
        let unreadable = capture && !swapchain.readable;
        let capture = capture && !unreadable;
        let extent = swapchain.extent;
        let size = u64::from(extent.width) * u64::from(extent.height) * 4;
        // One submission waits for the image, blits, reads back (when asked)
        // and signals the present: an acquired image always goes back, and
        // a failure before it is submitted gives the image back empty.
        let readback = if capture {
            match self.host_buffer(size, vk::BufferUsageFlags::TRANSFER_DST) {
                Ok(buffer) => Some(buffer),
                Err(e) => {
                    self.give_back(swapchain, &frame);
                    return Err(e);
                }
            }
        } else {
            None
        };
        let target = &self.targets[index];
        // Linear filtering where the format surely has it (RGBA8).
        let filter = if (target.width, target.height) == (extent.width, extent.height)
            || target.colors[0].format != COLOR_FORMAT
        {
            vk::Filter::NEAREST
        } else {
            vk::Filter::LINEAR
        };
        let corner = |width: u32, height: u32| vk::Offset3D { x: width as i32, y: height as i32, z: 1 };
        let blit = vk::ImageBlit::default()
            .src_subresource(color_layers())
            .src_offsets([vk::Offset3D::default(), corner(target.width, target.height)])
            .dst_subresource(color_layers())
            .dst_offsets([vk::Offset3D::default(), corner(extent.width, extent.height)]);
        let image = frame.image;
        let submitted =
            self.record_and_submit(&[(frame.acquired, vk::PipelineStageFlags::TRANSFER)], &[frame.rendered], |cb| {
                self.transition(cb, target, vk::ImageLayout::TRANSFER_SRC_OPTIMAL);
                // The image is written whole: its old contents are not needed.
                self.transition_image(cb, image, vk::ImageLayout::UNDEFINED, vk::ImageLayout::TRANSFER_DST_OPTIMAL);
                // SAFETY: recording; both images are in the layouts named, the
                // buffer holds the whole image.
                unsafe {
                    self.context.device.cmd_blit_image(
                        cb,
                        target.colors[0].image,
                        vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
                        image,
                        vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                        &[blit],
                        filter,
                    );
                    let mut layout = vk::ImageLayout::TRANSFER_DST_OPTIMAL;
                    if let Some((buffer, _)) = readback {
                        self.transition_image(cb, image, layout, vk::ImageLayout::TRANSFER_SRC_OPTIMAL);
                        layout = vk::ImageLayout::TRANSFER_SRC_OPTIMAL;
                        let region = vk::BufferImageCopy::default()
                            .image_subresource(color_layers())
                            .image_extent(vk::Extent3D { width: extent.width, height: extent.height, depth: 1 });
                        self.context.device.cmd_copy_image_to_buffer(cb, image, layout, buffer, &[region]);
                    }
                    self.transition_image(cb, image, layout, vk::ImageLayout::PRESENT_SRC_KHR);
                }
                if target.textures {
                    let color = target.colors[0].image;
                    let from = vk::ImageLayout::TRANSFER_SRC_OPTIMAL;
                    self.transition_image(cb, color, from, vk::ImageLayout::GENERAL);
                }
            });
        let free = |readback: Option<(vk::Buffer, vk::DeviceMemory)>| {
            if let Some((buffer, memory)) = readback {
                // SAFETY: the submission is over (waited for, or never made).
                unsafe {
                    self.context.device.destroy_buffer(buffer, None);
                    self.context.device.free_memory(memory, None);
                }
            }
        };
        if let Err(e) = submitted {
            self.give_back(swapchain, &frame);
            free(readback);
            return Err(e);
        }
        let target = &mut self.targets[index];
        target.colors[0].layout =
            if target.textures { vk::ImageLayout::GENERAL } else { vk::ImageLayout::TRANSFER_SRC_OPTIMAL };
        let presented = swapchain.present(&self.context, &frame);
        let captured = match readback {
            Some((_, memory)) => {
                // SAFETY: the copy finished; the memory is host visible, coherent and `size` long.
                let pixels = unsafe { self.read_host(memory, size as usize) };
                free(readback);
                let mut rgba = pixels?;
                if swapchain.format == vk::Format::B8G8R8A8_UNORM {
                    rgba.chunks_exact_mut(4).for_each(|pixel| pixel.swap(0, 2));
                }
                ROption::RSome(Image { width: extent.width, height: extent.height, rgba: rgba.into() })
            }
            None => ROption::RNone,
        };
        presented?;
        self.check_validation("presenting")?;
        if unreadable {
            return Err(XrError::unavailable("this window's swapchain images cannot be read back"));
        }
        Ok(Presented { status: PresentStatus::Presented, image: captured })
    }

    /// Hands an acquired image back unwritten, after a failure: a submission
    /// that waits for it and signals the present, then the present.
    fn give_back(&self, swapchain: &mut Swapchain, frame: &Frame) {
        let image = frame.image;
        let _ =
            self.record_and_submit(&[(frame.acquired, vk::PipelineStageFlags::TRANSFER)], &[frame.rendered], |cb| {
                self.transition_image(cb, image, vk::ImageLayout::UNDEFINED, vk::ImageLayout::PRESENT_SRC_KHR);
            });
        let _ = swapchain.present(&self.context, frame);
    }
}

fn color_layers() -> vk::ImageSubresourceLayers {
    vk::ImageSubresourceLayers {
        aspect_mask: vk::ImageAspectFlags::COLOR,
        mip_level: 0,
        base_array_layer: 0,
        layer_count: 1,
    }
}

/// The vertex input state of vertices laid out as `layout`: one binding,
/// each attribute a float vector of its components.
fn vertex_input(
    layout: &VertexLayout,
) -> ([vk::VertexInputBindingDescription2EXT<'static>; 1], Vec<vk::VertexInputAttributeDescription2EXT<'static>>) {
    let bindings = [vk::VertexInputBindingDescription2EXT::default()
        .binding(0)
        .stride(layout.stride * 4)
        .input_rate(vk::VertexInputRate::VERTEX)
        .divisor(1)];
    let attributes = layout
        .attributes
        .iter()
        .map(|a| {
            vk::VertexInputAttributeDescription2EXT::default()
                .location(a.location)
                .binding(0)
                .format(match a.components {
                    1 => vk::Format::R32_SFLOAT,
                    2 => vk::Format::R32G32_SFLOAT,
                    3 => vk::Format::R32G32B32_SFLOAT,
                    _ => vk::Format::R32G32B32A32_SFLOAT,
                })
                .offset(a.offset * 4)
        })
        .collect();
    (bindings, attributes)
}

fn depth_range() -> vk::ImageSubresourceRange {
    vk::ImageSubresourceRange {
        aspect_mask: vk::ImageAspectFlags::DEPTH,
        base_mip_level: 0,
        level_count: 1,
        base_array_layer: 0,
        layer_count: 1,
    }
}

fn color_range() -> vk::ImageSubresourceRange {
    vk::ImageSubresourceRange {
        aspect_mask: vk::ImageAspectFlags::COLOR,
        base_mip_level: 0,
        level_count: 1,
        base_array_layer: 0,
        layer_count: 1,
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
        let index = self.target_index(id)?;
        let target = &self.targets[index];
        // A target whose attachments are textures stays in GENERAL (clears accept it).
        let layout = if target.textures { vk::ImageLayout::GENERAL } else { vk::ImageLayout::TRANSFER_DST_OPTIMAL };
        self.submit("clearing", |cb| {
            self.transition_colors(cb, target, layout);
            let color = vk::ClearColorValue { float32: *rgba };
            for attachment in &target.colors {
                // SAFETY: recording; the image is in `layout`.
                unsafe {
                    self.context.device.cmd_clear_color_image(cb, attachment.image, layout, &color, &[color_range()]);
                }
            }
            if let Some(depth) = &target.depth {
                self.barrier(cb, depth.image, depth.layout, vk::ImageLayout::TRANSFER_DST_OPTIMAL, depth_range());
                let value = vk::ClearDepthStencilValue { depth: 1.0, stencil: 0 };
                // SAFETY: recording; the depth image is in TRANSFER_DST_OPTIMAL.
                unsafe {
                    self.context.device.cmd_clear_depth_stencil_image(
                        cb,
                        depth.image,
                        vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                        &value,
                        &[depth_range()],
                    );
                }
            }
            if target.textures {
                self.writes_visible(cb);
            }
        })?;
        let target = &mut self.targets[index];
        target.colors.iter_mut().for_each(|c| c.layout = layout);
        if let Some(depth) = target.depth.as_mut() {
            depth.layout = vk::ImageLayout::TRANSFER_DST_OPTIMAL;
        }
        Ok(())
    }

    fn draw(&mut self, draw: &DrawCall) -> Result<(), XrError> {
        let checked = self.validate_draw(draw)?;
        let names = (draw.program.name, draw.target);
        let inputs = self.input_attachment_writes(&checked.program, names, checked.target)?;
        let pass = self.render_pass_for_inputs(checked.index, checked.target, &inputs)?;
        let pipeline = self.pipeline_for_draw(&checked.program, names, checked.target, pass)?;
        self.write_input_attachments(&inputs);
        let color_layout = checked.target.draw_layout();
        let index = checked.index;
        self.submit("drawing", |cb| self.record_draw(cb, &checked, pipeline, pass, color_layout))?;
        self.targets[index].drawn_into(color_layout);
        Ok(())
    }

    fn draw_mesh_tasks(&mut self, call: &MeshDrawCall) -> Result<(), XrError> {
        let Some(mesh_shader) = self.mesh_shader.as_ref() else {
            return Err(XrError::unavailable(format!(
                "this device ({}) has no mesh shaders (VK_EXT_mesh_shader)",
                self.context.renderer()
            )));
        };
        let index = self.target_index(call.target)?;
        let program = self.program(call.program)?;
        if !program.mesh {
            return Err(XrError::invalid_input(format!(
                "program {} is not a mesh program: draw it with vertices, or dispatch it",
                call.program.name
            )));
        }
        checks::check_mesh_groups(call.groups, self.mesh_group_limits)?;
        let target = &self.targets[index];
        checks::check_depth_test(call.target, call.depth_test, target.depth.is_some())?;
        let names = (call.program.name, call.target);
        let inputs = self.input_attachment_writes(&program, names, target)?;
        let pass = self.render_pass_for_inputs(index, target, &inputs)?;
        let pipeline = self.pipeline_for_draw(&program, names, target, pass)?;
        self.write_input_attachments(&inputs);
        let color_layout = target.draw_layout();
        let rendering = Rendering { target, pass, color_layout, depth_test: call.depth_test };
        let [x, y, z] = call.groups;
        self.submit("drawing mesh tasks", |cb| {
            self.record_rendering(cb, &rendering, pipeline, &program, |cb| {
                // SAFETY: recording, within the rendering begun, with a mesh pipeline bound.
                unsafe { mesh_shader.cmd_draw_mesh_tasks(cb, x, y, z) }
            })
        })?;
        self.targets[index].drawn_into(color_layout);
        Ok(())
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
        desc.check_pixels(pixels.len(), levels_given)?;
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
                let mut offset = 0u64;
                let regions: Vec<vk::BufferImageCopy> = (0..levels_given)
                    .map(|level| {
                        let (w, h) = desc.level_size(level);
                        let region = vk::BufferImageCopy::default()
                            .buffer_offset(offset)
                            .image_subresource(vk::ImageSubresourceLayers {
                                aspect_mask: vk::ImageAspectFlags::COLOR,
                                mip_level: level,
                                base_array_layer: 0,
                                layer_count: 1,
                            })
                            .image_extent(vk::Extent3D { width: w, height: h, depth: 1 });
                        offset += u64::from(w) * u64::from(h) * desc.format.bytes_per_pixel() as u64;
                        region
                    })
                    .collect();
                // SAFETY: recording; the image is in GENERAL and the buffer holds every region.
                unsafe { device.cmd_copy_buffer_to_image(cb, staging, image, vk::ImageLayout::GENERAL, &regions) };
                // The other levels, each a linear blit of the one above.
                for level in levels_given..levels {
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

    fn create_buffer(&mut self, usage: BufferUsage, data: &[u8]) -> Result<BufferId, XrError> {
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
        let program = self.program(call.program)?;
        if !program.compute {
            let instead = if program.ray_tracing { "launch it with trace_rays" } else { "draw with it" };
            return Err(XrError::invalid_input(format!(
                "program {} is not a compute program: {instead}",
                call.program.name
            )));
        }
        let [x, y, z] = call.groups;
        let device = &self.context.device;
        self.submit("dispatching", |cb| {
            // SAFETY: recording; every handle belongs to this device.
            unsafe {
                device.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, vk::Pipeline::from_raw(program.pipeline));
                self.bind_program_state(cb, &program, vk::PipelineBindPoint::COMPUTE);
                device.cmd_dispatch(cb, x, y, z);
            }
            self.shader_writes_visible(cb, vk::PipelineStageFlags::COMPUTE_SHADER);
        })
    }

    fn create_render_target_with(&mut self, desc: &RenderTargetDesc) -> Result<RenderTargetId, XrError> {
        let formats: Vec<vk::Format> = desc.colors.iter().map(|f| vk_format(*f)).collect();
        self.new_target(desc.width, desc.height, &formats, desc.depth, true)
    }

    fn render_target_texture(&mut self, id: RenderTargetId, attachment: u32) -> Result<TextureId, XrError> {
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

    fn counters(&self) -> Result<Vec<DeviceCounter>, XrError> {
        let created = &self.shared.created;
        Ok(vec![
            DeviceCounter { name: "pipelines".into(), value: created.pipelines.load(Ordering::Relaxed) },
            DeviceCounter { name: "shader objects".into(), value: created.shader_objects.load(Ordering::Relaxed) },
        ])
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
