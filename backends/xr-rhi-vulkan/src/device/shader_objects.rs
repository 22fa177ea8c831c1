//! Draws with shader objects (`VK_EXT_shader_object`): a program's stages
//! are bound as they are, and every piece of state a pipeline would have
//! baked in is set on the command buffer, so that a draw into a target of
//! any attachment formats makes nothing.
//!
//! Which state must be set follows from what the device enabled: with
//! shader objects bound, every state a pipeline could have left dynamic is
//! dynamic, and the driver reads each one that an enabled feature makes
//! meaningful (depth clamp, depth bounds, logic operations, alpha to one,
//! tessellation, fragment shading rates). The values are those of XR's
//! pipelines (`xr-compiler-vk-spirv`'s `pipelines.rs`): filled triangles,
//! no culling, counter-clockwise front faces, one sample, no blending, a
//! `LESS` depth test where the draw asks for one; so both paths draw the
//! same pixels.

use crate::instance::Context;
use ash::vk::{self, Handle};
use xr_device::{ShaderObjectSlot, VulkanProgram};

/// The shader object functions, and what the device enabled that decides
/// which stages and states a draw must give.
pub(super) struct ShaderObjects {
    functions: ash::ext::shader_object::Device,
    /// Where the device enabled `VK_KHR_fragment_shading_rate`.
    shading_rate: Option<ash::khr::fragment_shading_rate::Device>,
    /// Every stage a draw binds (null where the program has none).
    stages: Vec<vk::ShaderStageFlags>,
    tessellation: bool,
    depth_clamp: bool,
    depth_bounds: bool,
    logic_op: bool,
    alpha_to_one: bool,
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
            tessellation: core.tessellation_shader == vk::TRUE,
            depth_clamp: core.depth_clamp == vk::TRUE,
            depth_bounds: core.depth_bounds == vk::TRUE,
            logic_op: core.logic_op == vk::TRUE,
            alpha_to_one: core.alpha_to_one == vk::TRUE,
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
        let masks: Vec<vk::ColorComponentFlags> = (0..draw.attachments)
            .map(|i| if written(i) { vk::ColorComponentFlags::RGBA } else { vk::ColorComponentFlags::empty() })
            .collect();
        let blend = vec![vk::FALSE; draw.attachments as usize];
        let f = &self.functions;
        // SAFETY: per the contract; every value is one the device takes.
        unsafe {
            f.cmd_bind_shaders(cb, &self.stages, &shaders);
            device.cmd_set_viewport_with_count(cb, &[draw.viewport]);
            device.cmd_set_scissor_with_count(cb, &[draw.area]);
            f.cmd_set_rasterizer_discard_enable(cb, false);
            f.cmd_set_polygon_mode(cb, vk::PolygonMode::FILL);
            f.cmd_set_rasterization_samples(cb, vk::SampleCountFlags::TYPE_1);
            f.cmd_set_sample_mask(cb, vk::SampleCountFlags::TYPE_1, &[u32::MAX]);
            f.cmd_set_alpha_to_coverage_enable(cb, false);
            if self.alpha_to_one {
                f.cmd_set_alpha_to_one_enable(cb, false);
            }
            f.cmd_set_cull_mode(cb, vk::CullModeFlags::NONE);
            f.cmd_set_front_face(cb, vk::FrontFace::COUNTER_CLOCKWISE);
            let test = draw.depth.unwrap_or(false);
            f.cmd_set_depth_test_enable(cb, test);
            f.cmd_set_depth_write_enable(cb, test);
            f.cmd_set_depth_compare_op(cb, vk::CompareOp::LESS);
            if self.depth_bounds {
                f.cmd_set_depth_bounds_test_enable(cb, false);
            }
            if self.depth_clamp {
                f.cmd_set_depth_clamp_enable(cb, false);
            }
            f.cmd_set_depth_bias_enable(cb, false);
            f.cmd_set_stencil_test_enable(cb, false);
            let tessellated = program.patch_control_points > 0;
            let topology =
                if tessellated { vk::PrimitiveTopology::PATCH_LIST } else { vk::PrimitiveTopology::TRIANGLE_LIST };
            f.cmd_set_primitive_topology(cb, topology);
            f.cmd_set_primitive_restart_enable(cb, false);
            if self.tessellation {
                f.cmd_set_patch_control_points(cb, program.patch_control_points.max(1));
                f.cmd_set_tessellation_domain_origin(cb, vk::TessellationDomainOrigin::UPPER_LEFT);
            }
            if self.logic_op {
                f.cmd_set_logic_op_enable(cb, false);
            }
            if !blend.is_empty() {
                f.cmd_set_color_blend_enable(cb, 0, &blend);
                f.cmd_set_color_write_mask(cb, 0, &masks);
            }
            if let Some(shading_rate) = &self.shading_rate {
                let keep = [vk::FragmentShadingRateCombinerOpKHR::KEEP; 2];
                // ash has no wrapper for it: the raw entry point.
                (shading_rate.fp().cmd_set_fragment_shading_rate_khr)(cb, &vk::Extent2D { width: 1, height: 1 }, &keep);
            }
        }
    }
}
