//! Draws with shader objects (`VK_EXT_shader_object`): a program's stages
//! are bound as they are, and every piece of state a pipeline would have
//! baked in is set on the command buffer, so that a draw into a target of
//! any attachment formats makes nothing.
//!
//! Which state must be set follows from what the device enabled: with
//! shader objects bound, every state a pipeline could have left dynamic is
//! dynamic, and the driver reads each one that an enabled feature makes
//! meaningful (depth clamp, depth bounds, logic operations, alpha to one,
//! tessellation, fragment shading rates). The values come from
//! `xr-vulkan-common`'s fixed-function state, which the compiler's
//! pipelines are made from too; so both paths draw the same pixels.

use crate::instance::Context;
use ash::vk::{self, Handle};
use xr_device::{ShaderObjectSlot, VulkanProgram};
use xr_vulkan_common::fixed_function::{self, DrawDecisions, ShaderObjectFeatures};

/// The shader object functions, and what the device enabled that decides
/// which stages and states a draw must give.
pub(super) struct ShaderObjects {
    functions: ash::ext::shader_object::Device,
    /// Where the device enabled `VK_KHR_fragment_shading_rate`.
    shading_rate: Option<ash::khr::fragment_shading_rate::Device>,
    /// Every stage a draw binds (null where the program has none).
    stages: Vec<vk::ShaderStageFlags>,
    features: ShaderObjectFeatures,
}

/// What one draw with shader objects sets.
pub(super) struct DrawState<'a> {
    pub program: &'a VulkanProgram,
    pub viewport: vk::Viewport,
    pub area: vk::Rect2D,
    /// The target's colour attachments.
    pub attachments: u32,
    /// Whether attachments the fragment stage does not write keep their
    /// contents (a target whose attachments are textures), as the
    /// pipelines made for such targets do.
    pub mask_unwritten: bool,
    /// `Some(test)` where the target has a depth attachment.
    pub depth: Option<bool>,
}

impl ShaderObjects {
    /// The functions, where `context` enabled shader objects.
    pub(super) fn load(context: &Context) -> Option<Self> {
        if !context.shader_objects {
            return None;
        }
        // The device enabled every core feature it has but robust access.
        // SAFETY: `physical` belongs to this live instance.
        let core = unsafe { context.instance.get_physical_device_features(context.physical) };
        let mut stages = vec![vk::ShaderStageFlags::VERTEX, vk::ShaderStageFlags::FRAGMENT];
        if core.tessellation_shader == vk::TRUE {
            stages.extend([vk::ShaderStageFlags::TESSELLATION_CONTROL, vk::ShaderStageFlags::TESSELLATION_EVALUATION]);
        }
        if core.geometry_shader == vk::TRUE {
            stages.push(vk::ShaderStageFlags::GEOMETRY);
        }
        if context.has_extension(ash::ext::mesh_shader::NAME) {
            let mut mesh = vk::PhysicalDeviceMeshShaderFeaturesEXT::default();
            let mut query = vk::PhysicalDeviceFeatures2::default().push_next(&mut mesh);
            // SAFETY: as above; the chain lives across the call.
            unsafe { context.instance.get_physical_device_features2(context.physical, &mut query) };
            stages.push(vk::ShaderStageFlags::MESH_EXT);
            if mesh.task_shader == vk::TRUE {
                stages.push(vk::ShaderStageFlags::TASK_EXT);
            }
        }
        Some(Self {
            functions: ash::ext::shader_object::Device::new(&context.instance, &context.device),
            shading_rate: context
                .has_extension(ash::khr::fragment_shading_rate::NAME)
                .then(|| ash::khr::fragment_shading_rate::Device::new(&context.instance, &context.device)),
            stages,
            features: ShaderObjectFeatures {
                tessellation: core.tessellation_shader == vk::TRUE,
                depth_clamp: core.depth_clamp == vk::TRUE,
                depth_bounds: core.depth_bounds == vk::TRUE,
                logic_op: core.logic_op == vk::TRUE,
                alpha_to_one: core.alpha_to_one == vk::TRUE,
            },
        })
    }

    /// Binds the program's shader objects (and null for every other stage
    /// the device has) and sets the state of a draw.
    ///
    /// # Safety
    /// `cb` is recording within a rendering of `device`; the program's
    /// shader objects are alive (it is registered).
    pub(super) unsafe fn bind(&self, device: &ash::Device, cb: vk::CommandBuffer, draw: &DrawState<'_>) {
        let program = draw.program;
        // SAFETY: the build system keeps the slots alive while the program is registered.
        let slots: &[ShaderObjectSlot] =
            unsafe { std::slice::from_raw_parts(program.shader_objects, program.shader_object_count as usize) };
        let shaders: Vec<vk::ShaderEXT> = self
            .stages
            .iter()
            .map(|stage| {
                let bound = slots.iter().find(|s| s.stage == stage.as_raw());
                bound.map_or(vk::ShaderEXT::null(), |s| vk::ShaderEXT::from_raw(s.shader))
            })
            .collect();
        let written = |i: u32| !draw.mask_unwritten || (i < 32 && program.written_attachments & (1 << i) != 0);
        let write_masks: Vec<vk::ColorComponentFlags> =
            (0..draw.attachments).map(|i| fixed_function::color_write_mask(written(i))).collect();
        let decisions = DrawDecisions {
            depth_test: draw.depth.unwrap_or(false),
            patch_control_points: program.patch_control_points,
            write_masks: &write_masks,
        };
        let f = &self.functions;
        // SAFETY: per the contract; `features` are what the device enabled.
        unsafe {
            f.cmd_bind_shaders(cb, &self.stages, &shaders);
            device.cmd_set_viewport_with_count(cb, &[draw.viewport]);
            device.cmd_set_scissor_with_count(cb, &[draw.area]);
            fixed_function::set_on_command_buffer(f, cb, self.features, decisions);
            if let Some(shading_rate) = &self.shading_rate {
                let keep = [vk::FragmentShadingRateCombinerOpKHR::KEEP; 2];
                // ash has no wrapper for it: the raw entry point.
                (shading_rate.fp().cmd_set_fragment_shading_rate_khr)(cb, &vk::Extent2D { width: 1, height: 1 }, &keep);
            }
        }
    }
}
