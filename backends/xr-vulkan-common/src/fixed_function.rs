//! The fixed-function state of every XR draw: filled triangles, no culling,
//! counter-clockwise front faces, one sample, `LESS` depth, no blending,
//! viewport and scissor (and, with a depth attachment, whether depth is
//! tested) chosen per draw. A pipeline takes it as create-infos; a
//! shader-object draw takes it as commands ([`set_on_command_buffer`]),
//! which must then also state every value a pipeline leaves at its default.

use ash::vk;

/// How triangles are filled.
pub const POLYGON_MODE: vk::PolygonMode = vk::PolygonMode::FILL;
/// Which faces are culled: none, so a program's winding never hides it.
pub const CULL_MODE: vk::CullModeFlags = vk::CullModeFlags::NONE;
/// Which winding faces the viewer.
pub const FRONT_FACE: vk::FrontFace = vk::FrontFace::COUNTER_CLOCKWISE;
/// Samples per pixel.
pub const SAMPLES: vk::SampleCountFlags = vk::SampleCountFlags::TYPE_1;
/// How a fragment's depth is compared where a draw tests depth.
pub const DEPTH_COMPARE: vk::CompareOp = vk::CompareOp::LESS;

/// The primitive topology: patches for a tessellated program, else triangles.
pub fn topology(tessellated: bool) -> vk::PrimitiveTopology {
    if tessellated { vk::PrimitiveTopology::PATCH_LIST } else { vk::PrimitiveTopology::TRIANGLE_LIST }
}

/// An attachment's write mask: all channels where the program writes it,
/// none where it does not (so an unwritten attachment keeps its contents).
pub fn color_write_mask(written: bool) -> vk::ColorComponentFlags {
    if written { vk::ColorComponentFlags::RGBA } else { vk::ColorComponentFlags::empty() }
}

/// The rasterization state of a pipeline.
pub fn rasterization() -> vk::PipelineRasterizationStateCreateInfo<'static> {
    vk::PipelineRasterizationStateCreateInfo::default()
        .polygon_mode(POLYGON_MODE)
        .cull_mode(CULL_MODE)
        .front_face(FRONT_FACE)
        .line_width(1.0)
}

/// The multisample state of a pipeline.
pub fn multisample() -> vk::PipelineMultisampleStateCreateInfo<'static> {
    vk::PipelineMultisampleStateCreateInfo::default().rasterization_samples(SAMPLES)
}

/// The depth/stencil state of a pipeline (test and write are dynamic).
pub fn depth_stencil() -> vk::PipelineDepthStencilStateCreateInfo<'static> {
    vk::PipelineDepthStencilStateCreateInfo::default().depth_compare_op(DEPTH_COMPARE)
}

/// One blend attachment per color attachment, blending off, masked by
/// whether the program writes it.
pub fn blend_attachments(written: impl Iterator<Item = bool>) -> Vec<vk::PipelineColorBlendAttachmentState> {
    written.map(|w| vk::PipelineColorBlendAttachmentState::default().color_write_mask(color_write_mask(w))).collect()
}

/// The states a pipeline leaves to the draw: viewport and scissor; the
/// vertex input where there is one (not for mesh shading); whether depth is
/// tested and written where there is a depth attachment.
pub fn dynamic_states(mesh: bool, depth_attachment: bool) -> Vec<vk::DynamicState> {
    let mut states = vec![vk::DynamicState::VIEWPORT, vk::DynamicState::SCISSOR];
    if !mesh {
        states.push(vk::DynamicState::VERTEX_INPUT_EXT);
    }
    if depth_attachment {
        states.extend([vk::DynamicState::DEPTH_TEST_ENABLE, vk::DynamicState::DEPTH_WRITE_ENABLE]);
    }
    states
}

/// Which optional device features a shader-object draw must set state for:
/// a state whose feature is off must not be set, one whose feature is on
/// must be.
#[derive(Clone, Copy, Debug, Default)]
pub struct ShaderObjectFeatures {
    /// `alphaToOne`.
    pub alpha_to_one: bool,
    /// `depthBounds`.
    pub depth_bounds: bool,
    /// `depthClamp`.
    pub depth_clamp: bool,
    /// `logicOp`.
    pub logic_op: bool,
    /// `tessellationShader`.
    pub tessellation: bool,
}

/// What one shader-object draw decides: whether it tests depth, its patch
/// size (0: not tessellated), and each color attachment's write mask.
#[derive(Clone, Copy, Debug)]
pub struct DrawDecisions<'a> {
    /// Whether depth is tested and written.
    pub depth_test: bool,
    /// Control points per patch, 0 for a program without tessellation.
    pub patch_control_points: u32,
    /// One mask per color attachment ([`color_write_mask`]).
    pub write_masks: &'a [vk::ColorComponentFlags],
}

/// Sets on `cb` the fixed-function state a pipeline would carry, for a
/// draw with shader objects (viewport and scissor are the caller's).
///
/// # Safety
///
/// `cb` is a command buffer of `functions`' device in the recording state,
/// and `features` says which of them that device has enabled.
pub unsafe fn set_on_command_buffer(
    functions: &ash::ext::shader_object::Device,
    cb: vk::CommandBuffer,
    features: ShaderObjectFeatures,
    draw: DrawDecisions<'_>,
) {
    let f = functions;
    let blend = vec![vk::FALSE; draw.write_masks.len()];
    // SAFETY: per the caller's contract; every value is a valid enum value.
    unsafe {
        f.cmd_set_rasterizer_discard_enable(cb, false);
        f.cmd_set_polygon_mode(cb, POLYGON_MODE);
        f.cmd_set_rasterization_samples(cb, SAMPLES);
        f.cmd_set_sample_mask(cb, SAMPLES, &[u32::MAX]);
        f.cmd_set_alpha_to_coverage_enable(cb, false);
        if features.alpha_to_one {
            f.cmd_set_alpha_to_one_enable(cb, false);
        }
        f.cmd_set_cull_mode(cb, CULL_MODE);
        f.cmd_set_front_face(cb, FRONT_FACE);
        f.cmd_set_depth_test_enable(cb, draw.depth_test);
        f.cmd_set_depth_write_enable(cb, draw.depth_test);
        f.cmd_set_depth_compare_op(cb, DEPTH_COMPARE);
        if features.depth_bounds {
            f.cmd_set_depth_bounds_test_enable(cb, false);
        }
        if features.depth_clamp {
            f.cmd_set_depth_clamp_enable(cb, false);
        }
        f.cmd_set_depth_bias_enable(cb, false);
        f.cmd_set_stencil_test_enable(cb, false);
        f.cmd_set_primitive_topology(cb, topology(draw.patch_control_points > 0));
        f.cmd_set_primitive_restart_enable(cb, false);
        if features.tessellation {
            f.cmd_set_patch_control_points(cb, draw.patch_control_points.max(1));
            f.cmd_set_tessellation_domain_origin(cb, vk::TessellationDomainOrigin::UPPER_LEFT);
        }
        if features.logic_op {
            f.cmd_set_logic_op_enable(cb, false);
        }
        if !blend.is_empty() {
            f.cmd_set_color_blend_enable(cb, 0, &blend);
            f.cmd_set_color_write_mask(cb, 0, draw.write_masks);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tessellated_program_draws_patches() {
        assert_eq!(topology(true), vk::PrimitiveTopology::PATCH_LIST);
        assert_eq!(topology(false), vk::PrimitiveTopology::TRIANGLE_LIST);
    }

    #[test]
    fn only_written_attachments_are_masked_in() {
        let attachments = blend_attachments([true, false].into_iter());
        assert_eq!(attachments[0].color_write_mask, vk::ColorComponentFlags::RGBA);
        assert_eq!(attachments[1].color_write_mask, vk::ColorComponentFlags::empty());
        assert!(attachments.iter().all(|a| a.blend_enable == vk::FALSE));
    }

    #[test]
    fn a_mesh_pipeline_has_no_vertex_input_and_depth_is_dynamic_only_with_an_attachment() {
        assert!(!dynamic_states(true, false).contains(&vk::DynamicState::VERTEX_INPUT_EXT));
        assert!(dynamic_states(false, false).contains(&vk::DynamicState::VERTEX_INPUT_EXT));
        assert!(!dynamic_states(false, false).contains(&vk::DynamicState::DEPTH_TEST_ENABLE));
        assert!(dynamic_states(false, true).contains(&vk::DynamicState::DEPTH_WRITE_ENABLE));
    }
}
