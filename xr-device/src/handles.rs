//! Native handles a build system uses to attach to a live device.

use crate::capabilities::DeviceKind;
use abi_stable::{
    StableAbi,
    std_types::{ROption, RSlice, RStr},
};
use std::{
    ffi::{c_char, c_void},
    sync::atomic::{AtomicBool, AtomicU64},
};

/// How an OpenGL build system reaches the device's context.
///
/// `get_proc_address(context, "glCreateShader")` returns the entry point of
/// the device's GL (glow's `from_loader_function`), and `make_current`
/// makes the device's context current on the calling thread, so that a build
/// system can work while several devices are open on one thread.
#[repr(C)]
#[derive(StableAbi, Clone, Copy, Debug)]
pub struct GlLoader {
    /// Opaque pointer owned by the device system; valid while the device lives.
    pub context: *const c_void,
    /// Looks up a GL or EGL entry point by NUL-terminated name; null if absent.
    pub get_proc_address: unsafe extern "C" fn(context: *const c_void, name: *const c_char) -> *const c_void,
    /// Makes the device's context current on this thread; false on failure.
    pub make_current: unsafe extern "C" fn(context: *const c_void) -> bool,
    /// Hands out a binding point of `space` ([`GlBindingSpace`] as u32) that
    /// no other program on this device uses, so that each program's
    /// textures and buffers stay bound to it; -1 when all are taken.
    pub allocate_binding: unsafe extern "C" fn(context: *const c_void, space: u32) -> i32,
    /// Gives a binding point from `allocate_binding` back.
    pub release_binding: unsafe extern "C" fn(context: *const c_void, space: u32, binding: u32),
    /// How many binding points of `space` the device has for programs.
    pub binding_limit: unsafe extern "C" fn(context: *const c_void, space: u32) -> u32,
    /// Tells the device how many of `program`'s resources are still
    /// unbound (read at each draw and dispatch: one that is not 0 is
    /// refused); `unbound` stays valid until `unregister_program`.
    pub register_program: unsafe extern "C" fn(context: *const c_void, program: u32, unbound: *const u32),
    /// Forgets a program before it is deleted.
    pub unregister_program: unsafe extern "C" fn(context: *const c_void, program: u32),
    /// Forgets which context the device system made current on this thread.
    /// `make_current` is cheap when the device's context is the one it made
    /// current last (every EGL call is a system call); an engine that makes
    /// a context of its own current on a thread where it also uses the
    /// device calls this afterwards, so that the next `make_current` really
    /// makes the device's context current again.
    pub forget_current: unsafe extern "C" fn(),
    /// A flag the device system keeps set exactly while the device's
    /// context is the one it made current last on the device's thread, so
    /// that a caller on that thread which finds it set can skip
    /// `make_current` (a call into the device system and a thread-local
    /// lookup, a twentieth of a `glProgramUniform*`). Never freed: once the
    /// device is closed it stays clear. Null where the device system keeps
    /// none (call `make_current`).
    pub current: *const AtomicBool,
}

/// The kinds of OpenGL binding points a device hands out to programs.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GlBindingSpace {
    /// `GL_UNIFORM_BUFFER` binding points.
    UniformBuffer = 0,
    /// Texture units (unit 0 is the device's own).
    TextureUnit = 1,
    /// Image units (`image2D`).
    ImageUnit = 2,
    /// `GL_SHADER_STORAGE_BUFFER` binding points.
    StorageBuffer = 3,
}

impl GlBindingSpace {
    /// Every space.
    pub const ALL: [GlBindingSpace; 4] = [
        GlBindingSpace::UniformBuffer,
        GlBindingSpace::TextureUnit,
        GlBindingSpace::ImageUnit,
        GlBindingSpace::StorageBuffer,
    ];

    /// The space numbered `space`.
    pub fn from_u32(space: u32) -> Option<Self> {
        Self::ALL.get(space as usize).copied()
    }

    /// How a message names it.
    pub fn name(self) -> &'static str {
        match self {
            GlBindingSpace::UniformBuffer => "uniform buffer binding points",
            GlBindingSpace::TextureUnit => "texture units",
            GlBindingSpace::ImageUnit => "image units",
            GlBindingSpace::StorageBuffer => "storage buffer binding points",
        }
    }
}

/// A Vulkan program a build system made, registered with the device so
/// that the device can draw with it: the pipeline and what to bind.
#[repr(C)]
#[derive(StableAbi, Clone, Copy, Debug)]
pub struct VulkanProgram {
    /// `VkPipeline`; built for dynamic rendering into the device's colour
    /// format, with viewport, scissor and vertex input left dynamic. A
    /// compute pipeline for a compute program.
    pub pipeline: u64,
    /// The same program for targets with a depth attachment (the device's
    /// depth format, depth test and write on); 0 for compute programs.
    pub depth_pipeline: u64,
    /// A compute program (`pipeline` is bound at the compute bind point).
    pub compute: bool,
    /// A mesh program (task and mesh stages): drawn by
    /// [`crate::Device::draw_mesh_tasks`], never by a vertex draw.
    pub mesh: bool,
    /// A ray tracing program: `pipeline` is a ray tracing pipeline, bound
    /// at the ray tracing bind point and launched by
    /// [`crate::Device::trace_rays`] through `shader_binding_table`.
    pub ray_tracing: bool,
    /// A ray tracing program's shader binding table, owned by the build
    /// system: the ray generation, miss, hit group and callable regions,
    /// in that order (a region of size 0 where there are none).
    pub shader_binding_table: [ShaderBindingRegion; 4],
    /// `VkPipelineLayout`.
    pub layout: u64,
    /// `VkDescriptorSet`s bound from set 0 on, owned by the build system.
    pub descriptor_sets: *const u64,
    /// Their number.
    pub descriptor_set_count: u32,
    /// Resources not bound yet; read at each draw and dispatch, which are
    /// refused while it is not 0.
    pub unbound: *const u32,
    /// Push constant bytes, read at each draw; owned by the build system.
    pub push_constants: *const u8,
    /// Their length.
    pub push_constants_len: u32,
    /// `VkShaderStageFlags` the push constants are visible to.
    pub push_constant_stages: u32,
    /// The program's pipeline for a target whose colour attachments have
    /// the `count` `VkFormat`s at `formats` and whose depth format is
    /// `depth_format` (0: none), called with `pipeline_context`. For
    /// dynamic rendering when `render_pass` is 0, else for subpass 0 of
    /// that `VkRenderPass` (the device draws a program that reads input
    /// attachments in a render pass of its own where it lacks dynamic
    /// rendering local read). `pipeline` and `depth_pipeline` are the ones
    /// for the device's own target; a device asks for the others (several
    /// colour attachments) at each draw into such a target, so the build
    /// system makes each once and hands the same one out after (it owns
    /// them and destroys them with the program).
    ///
    /// With `wait`, the answer is the pipeline, made now if it must be
    /// (the draw waits for the compile), or 0 on failure. Without, the
    /// build system answers at once: a pipeline it has, or can link at once
    /// (from graphics pipeline libraries: [`PipelineAnswer::readiness`]
    /// `Linked`), or 0 with `Compiling` while it compiles one on another
    /// thread, which it starts if it had not; a later call hands out the
    /// compiled pipeline in place of the linked one.
    ///
    /// For a program of shader objects a device calls it too, at each draw
    /// into a target that is not its own, as a notice of the formats drawn
    /// into (what a usage log records), and ignores its answer.
    pub pipeline_for: Option<
        unsafe extern "C" fn(
            context: *const c_void,
            formats: *const u32,
            count: u32,
            depth_format: u32,
            render_pass: u64,
            wait: bool,
        ) -> PipelineAnswer,
    >,
    /// What `pipeline_for` is called with; owned by the build system.
    pub pipeline_context: *const c_void,
    /// Waits for every compile the build system runs on other threads for
    /// this program (pipelines it is making for draws that did not wait),
    /// called with `pipeline_context`. A device calls it for each program
    /// still registered when it closes, before it destroys anything: such a
    /// thread may be inside a call on the device. `None` where the build
    /// system starts no thread.
    pub settle: Option<unsafe extern "C" fn(context: *const c_void)>,
    /// The input attachments the program reads (`subpassInput`): the
    /// device writes the colour attachments of the target it draws into
    /// into them before each draw (dynamic rendering local read).
    pub input_attachments: *const InputAttachmentSlot,
    /// Their number.
    pub input_attachment_count: u32,
    /// The program's stages as linked shader objects (`VK_EXT_shader_object`),
    /// owned by the build system; null where it made pipelines. Where there
    /// are some, a draw binds them and sets every piece of state itself, so
    /// a draw into a target of any formats makes nothing: `pipeline` and
    /// `depth_pipeline` are then unused, and `pipeline_for` only hears of
    /// the formats.
    pub shader_objects: *const ShaderObjectSlot,
    /// Their number (0: draw with pipelines).
    pub shader_object_count: u32,
    /// Bit `i` set where the fragment stage writes colour attachment `i`
    /// (all bits where that is not known): a draw with shader objects into
    /// a target whose attachments are textures writes only those, as the
    /// pipelines `pipeline_for` makes do.
    pub written_attachments: u32,
    /// Control points per patch of a tessellated program drawn with shader
    /// objects (the topology is then a patch list); 0 when not tessellated.
    pub patch_control_points: u32,
}

/// What [`VulkanProgram::pipeline_for`] answers.
#[repr(C)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq)]
pub struct PipelineAnswer {
    /// `VkPipeline`; 0 while it compiles, or where it could not be made.
    pub pipeline: u64,
    /// `Ready` with the optimized pipeline, `Linked` with one linked from
    /// libraries, `Compiling` with none yet (a pipeline of 0 with any
    /// other readiness is a failure, logged by the build system).
    pub readiness: crate::Readiness,
}

impl PipelineAnswer {
    /// A pipeline made whole (or none, on failure).
    pub fn ready(pipeline: u64) -> Self {
        Self { pipeline, readiness: crate::Readiness::Ready }
    }

    /// No pipeline yet: it compiles on another thread.
    pub fn compiling() -> Self {
        Self { pipeline: 0, readiness: crate::Readiness::Compiling }
    }
}

/// One stage of a program made as a shader object.
#[repr(C)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShaderObjectSlot {
    /// Its `VkShaderStageFlagBits`.
    pub stage: u32,
    /// `VkShaderEXT`.
    pub shader: u64,
}

/// How many pipelines and shader objects the build systems attached to a
/// Vulkan device have made on it, counted by them as they make each: what
/// shows whether drawing made any (`Device::counters` reads them).
#[repr(C)]
#[derive(StableAbi, Debug, Default)]
pub struct CreatedObjectCounts {
    /// Graphics, compute and ray tracing pipelines.
    pub pipelines: AtomicU64,
    /// Shader objects (one per stage).
    pub shader_objects: AtomicU64,
}

/// One region of a shader binding table, as `vkCmdTraceRaysKHR` takes it
/// (`VkStridedDeviceAddressRegionKHR`).
#[repr(C)]
#[derive(StableAbi, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ShaderBindingRegion {
    /// The device address of its first record; 0 for an empty region.
    pub address: u64,
    /// Bytes from one record to the next.
    pub stride: u64,
    /// Bytes in all.
    pub size: u64,
}

/// Where a Vulkan program reads an input attachment.
#[repr(C)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq)]
pub struct InputAttachmentSlot {
    /// The `VkDescriptorSet` holding it (one of the program's).
    pub descriptor_set: u64,
    /// Its binding.
    pub binding: u32,
    /// The array element (0 unless it is an array of input attachments).
    pub array_element: u32,
    /// The colour attachment it reads: its `input_attachment_index`.
    pub attachment: u32,
}

/// How a Vulkan build system reaches the device.
#[repr(C)]
#[derive(StableAbi, Clone, Copy, Debug)]
pub struct VulkanLoader {
    /// Opaque pointer owned by the device system.
    pub context: *const c_void,
    /// `vkGetInstanceProcAddr(instance, name)` through the device's loader.
    pub get_instance_proc_addr:
        unsafe extern "C" fn(context: *const c_void, instance: u64, name: *const c_char) -> *const c_void,
    /// `VkInstance`.
    pub instance: u64,
    /// `VkPhysicalDevice`.
    pub physical_device: u64,
    /// `VkDevice`.
    pub device: u64,
    /// The `VkQueue` the device draws on.
    pub queue: u64,
    /// Its queue family.
    pub queue_family: u32,
    /// The `VkFormat` of the render targets `create_render_target` and
    /// `create_depth_render_target` make, which a [`VulkanProgram`]'s
    /// `pipeline` and `depth_pipeline` draw into.
    pub color_format: u32,
    /// The `VkFormat` of their depth attachments.
    pub depth_format: u32,
    /// The device extensions the device enabled, names separated by
    /// spaces, NUL-terminated; valid while the device is open. A module
    /// needing one of them is refused before the driver where it is absent.
    pub enabled_extensions: *const c_char,
    /// Whether the device reads input attachments within dynamic
    /// rendering (`dynamicRenderingLocalRead` enabled). Where it is false,
    /// a program reading input attachments has no pipeline for dynamic
    /// rendering: the device asks `pipeline_for` for one in its render pass.
    pub dynamic_rendering_local_read: bool,
    /// Registers a program; returns the name to draw it with (never 0), or 0 if the device is closed.
    pub register_program: unsafe extern "C" fn(context: *const c_void, program: *const VulkanProgram) -> u32,
    /// Forgets a program before its objects are destroyed.
    pub unregister_program: unsafe extern "C" fn(context: *const c_void, name: u32),
    /// Whether the device is still open: objects of a closed device must not be touched.
    pub is_open: unsafe extern "C" fn(context: *const c_void) -> bool,
    /// Where a build system counts the pipelines and shader objects it
    /// makes on this device; owned by the device, valid while it is open;
    /// null where the device keeps no count.
    pub created: *const CreatedObjectCounts,
}

/// A native handle of a device kind other than OpenGL and Vulkan, which
/// have loaders of their own here: named by the device plugin that offers
/// it (say `d3d12: ID3D12Device`), an address valid while the device
/// lives. A build system that attaches to that kind knows the name and
/// what the address points to; the host passes it on and never reads it.
#[repr(C)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq)]
pub struct NamedHandle {
    /// What the handle is, as its device plugin names it.
    pub name: RStr<'static>,
    /// Its address.
    pub address: usize,
}

/// Everything a build system may need from a device, by kind.
#[repr(C)]
#[derive(StableAbi, Clone, Copy, Debug)]
pub struct NativeHandles {
    /// The kind of the device these handles belong to.
    pub kind: DeviceKind,
    /// Present for OpenGL devices.
    pub gl: ROption<GlLoader>,
    /// Present for Vulkan devices.
    pub vulkan: ROption<VulkanLoader>,
    /// The handles a device of another kind offers; owned by the device,
    /// valid while it lives; empty for OpenGL and Vulkan.
    pub named: RSlice<'static, NamedHandle>,
}

impl NativeHandles {
    /// The handle named `name`, or an `Unavailable` error naming
    /// `build_system` and the device's kind.
    pub fn named_handle(&self, name: &str, build_system: &str) -> Result<usize, crate::XrError> {
        self.named.iter().find(|h| h.name.as_str() == name).map(|h| h.address).ok_or_else(|| {
            crate::XrError::unavailable(format!(
                "{build_system} needs the handle '{name}', which this {} device does not offer",
                self.kind.name()
            ))
        })
    }

    /// The OpenGL loader, or an `Unavailable` error naming `build_system`,
    /// which attaches to OpenGL devices only.
    pub fn gl_loader(&self, build_system: &str) -> Result<GlLoader, crate::XrError> {
        self.gl
            .into_option()
            .filter(|_| self.kind == DeviceKind::OPENGL)
            .ok_or_else(|| crate::XrError::unavailable(format!("{build_system} attaches to OpenGL devices only")))
    }

    /// The Vulkan loader, or an `Unavailable` error naming `build_system`,
    /// which attaches to Vulkan devices only.
    pub fn vulkan_loader(&self, build_system: &str) -> Result<VulkanLoader, crate::XrError> {
        self.vulkan
            .into_option()
            .filter(|_| self.kind == DeviceKind::VULKAN)
            .ok_or_else(|| crate::XrError::unavailable(format!("{build_system} attaches to Vulkan devices only")))
    }
}
