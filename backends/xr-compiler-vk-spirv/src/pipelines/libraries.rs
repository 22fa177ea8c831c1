//! A program's stages as graphics pipeline libraries
//! (`VK_EXT_graphics_pipeline_library`), made when it loads.
//!
//! A pipeline is made of four parts: the vertex input interface, the
//! pre-rasterization shaders, the fragment shader, and the fragment output
//! interface. Only the last depends on the formats drawn into; the shaders
//! are compiled in the other three, which are made once, at load, through
//! the pipeline cache. A draw into new formats makes a fragment output
//! library for them (no shader: quick) and links a pipeline from the four
//! at once; the same four, linked with link-time optimization on another
//! thread, give the pipeline that replaces it. Each library keeps what that
//! optimization needs (`RETAIN_LINK_TIME_OPTIMIZATION_INFO`).
//!
//! The fragment shader library holds the depth state, which differs with a
//! depth attachment (test and write set by each draw) and without: it is
//! made both ways.

use super::{GraphicsPipelines, Stage, stage_infos};
use ash::vk;
use std::sync::{Mutex, PoisonError};
use xr_device::XrError;
use xr_vulkan_common::fixed_function;

/// How every library is made: a library, keeping what link-time
/// optimization needs.
const LIBRARY: vk::PipelineCreateFlags = vk::PipelineCreateFlags::from_raw(
    vk::PipelineCreateFlags::LIBRARY_KHR.as_raw()
        | vk::PipelineCreateFlags::RETAIN_LINK_TIME_OPTIMIZATION_INFO_EXT.as_raw(),
);

/// The libraries of one program (destroyed by [`Self::destroy`]).
pub(super) struct Libraries {
    /// Vertex input (set by each draw) and primitive assembly.
    vertex_input: vk::Pipeline,
    /// Every stage but the fragment one; viewport, rasterization, tessellation.
    pre_rasterization: vk::Pipeline,
    /// The fragment stage for targets without a depth attachment, and with one.
    fragment: [vk::Pipeline; 2],
    /// The fragment output interfaces made for draw states, kept with the program.
    outputs: Mutex<Vec<vk::Pipeline>>,
}

impl Libraries {
    /// Makes the libraries of `pipelines`' program; an error (having made
    /// nothing that stays) where the driver refuses one.
    pub(super) fn make(pipelines: &GraphicsPipelines) -> Result<Self, XrError> {
        let mut made: Vec<vk::Pipeline> = Vec::new();
        let result = (|| {
            made.push(vertex_input(pipelines)?);
            made.push(pre_rasterization(pipelines)?);
            made.push(fragment(pipelines, false)?);
            made.push(fragment(pipelines, true)?);
            Ok(())
        })();
        match result {
            Ok(()) => Ok(Self {
                vertex_input: made[0],
                pre_rasterization: made[1],
                fragment: [made[2], made[3]],
                outputs: Mutex::new(Vec::new()),
            }),
            Err(e) => {
                for library in made {
                    // SAFETY: made just now on this device; nothing links from it.
                    unsafe { pipelines.device.destroy_pipeline(library, None) };
                }
                Err(e)
            }
        }
    }

    /// A fragment output library for colour attachments of `colors` (those
    /// the fragment stage does not write keep their contents) and a depth
    /// attachment of `depth`; kept until the program is destroyed.
    pub(super) fn fragment_output(
        &self,
        pipelines: &GraphicsPipelines,
        colors: &[vk::Format],
        depth: Option<vk::Format>,
    ) -> Result<vk::Pipeline, XrError> {
        let attachments = pipelines.blend_attachments(colors.len(), true);
        let blend = vk::PipelineColorBlendStateCreateInfo::default().attachments(&attachments);
        let multisample = fixed_function::multisample();
        let mut rendering = vk::PipelineRenderingCreateInfo::default().color_attachment_formats(colors);
        if let Some(format) = depth {
            rendering = rendering.depth_attachment_format(format);
        }
        let info = vk::GraphicsPipelineCreateInfo::default()
            .color_blend_state(&blend)
            .multisample_state(&multisample)
            .push_next(&mut rendering);
        let output = create(pipelines, vk::GraphicsPipelineLibraryFlagsEXT::FRAGMENT_OUTPUT_INTERFACE, info)?;
        self.outputs.lock().unwrap_or_else(PoisonError::into_inner).push(output);
        Ok(output)
    }

    /// A pipeline linked from the libraries and the fragment output library
    /// `output`, for a target with a depth attachment where `depth`: at once
    /// (no optimization across the parts), or with link-time optimization.
    pub(super) fn link(
        &self,
        pipelines: &GraphicsPipelines,
        output: vk::Pipeline,
        depth: bool,
        optimize: bool,
    ) -> Result<vk::Pipeline, XrError> {
        let libraries = [self.vertex_input, self.pre_rasterization, self.fragment[usize::from(depth)], output];
        let mut library_info = vk::PipelineLibraryCreateInfoKHR::default().libraries(&libraries);
        let mut feedback = vk::PipelineCreationFeedback::default();
        let mut feedback_info =
            vk::PipelineCreationFeedbackCreateInfo::default().pipeline_creation_feedback(&mut feedback);
        let flags = if optimize {
            vk::PipelineCreateFlags::LINK_TIME_OPTIMIZATION_EXT
        } else {
            vk::PipelineCreateFlags::empty()
        };
        let info = vk::GraphicsPipelineCreateInfo::default()
            .flags(flags)
            .layout(pipelines.layout)
            .push_next(&mut library_info)
            .push_next(&mut feedback_info);
        // The fast link goes through no pipeline cache: it gains nothing
        // from one, and must not queue behind the optimized links that
        // other threads make through it.
        let cache = if optimize { pipelines.cache } else { vk::PipelineCache::null() };
        // SAFETY: every structure referenced by `info` lives until the call
        // returns; the libraries are this program's, alive until it is destroyed.
        let pipeline = unsafe { pipelines.device.create_graphics_pipelines(cache, &[info], None) }
            .map(|made| made[0])
            .map_err(|(_, e)| {
                XrError::driver(format!("{}: linking a pipeline from its libraries failed: {e}", pipelines.context))
            })?;
        if optimize {
            pipelines.counter.optimized(&feedback);
        } else {
            pipelines.counter.linked(&feedback);
        }
        Ok(pipeline)
    }

    /// Destroys every library.
    ///
    /// # Safety
    /// The device is open, and no pipeline is being linked from them.
    pub(super) unsafe fn destroy(&self, device: &ash::Device) {
        let outputs = std::mem::take(&mut *self.outputs.lock().unwrap_or_else(PoisonError::into_inner));
        let libraries = [self.vertex_input, self.pre_rasterization, self.fragment[0], self.fragment[1]];
        for library in libraries.into_iter().chain(outputs) {
            // SAFETY: per the contract; each was made on this device.
            unsafe { device.destroy_pipeline(library, None) };
        }
    }
}

/// Makes the library of `subset` that `info` describes, through the
/// pipeline cache; counted as a library.
fn create(
    pipelines: &GraphicsPipelines,
    subset: vk::GraphicsPipelineLibraryFlagsEXT,
    info: vk::GraphicsPipelineCreateInfo<'_>,
) -> Result<vk::Pipeline, XrError> {
    let mut library = vk::GraphicsPipelineLibraryCreateInfoEXT::default().flags(subset);
    let mut feedback = vk::PipelineCreationFeedback::default();
    let mut feedback_info = vk::PipelineCreationFeedbackCreateInfo::default().pipeline_creation_feedback(&mut feedback);
    let info = info.flags(LIBRARY).push_next(&mut library).push_next(&mut feedback_info);
    // SAFETY: every structure referenced by `info` lives until the call returns.
    let made = unsafe { pipelines.device.create_graphics_pipelines(pipelines.cache, &[info], None) }
        .map(|made| made[0])
        .map_err(|(_, e)| {
            XrError::driver(format!("{}: making its {subset:?} library failed: {e}", pipelines.context))
        })?;
    pipelines.counter.library(&feedback);
    Ok(made)
}

/// The vertex input interface: vertices as each draw sets them, triangles
/// (or patches).
fn vertex_input(pipelines: &GraphicsPipelines) -> Result<vk::Pipeline, XrError> {
    let vertex_input = vk::PipelineVertexInputStateCreateInfo::default();
    let assembly = vk::PipelineInputAssemblyStateCreateInfo::default()
        .topology(fixed_function::topology(pipelines.patch_size.is_some()));
    let dynamic_states = [vk::DynamicState::VERTEX_INPUT_EXT];
    let dynamic = vk::PipelineDynamicStateCreateInfo::default().dynamic_states(&dynamic_states);
    let info = vk::GraphicsPipelineCreateInfo::default()
        .vertex_input_state(&vertex_input)
        .input_assembly_state(&assembly)
        .dynamic_state(&dynamic);
    create(pipelines, vk::GraphicsPipelineLibraryFlagsEXT::VERTEX_INPUT_INTERFACE, info)
}

/// The pre-rasterization shaders: every stage but the fragment one, the
/// viewport and scissor each draw sets, rasterization and tessellation.
fn pre_rasterization(pipelines: &GraphicsPipelines) -> Result<vk::Pipeline, XrError> {
    let stages: Vec<&Stage> = pipelines.stages.iter().filter(|s| s.flag != vk::ShaderStageFlags::FRAGMENT).collect();
    let specializations: Vec<vk::SpecializationInfo> = stages.iter().map(|s| s.specialization()).collect();
    let stage_infos = stage_infos(&stages, &specializations);
    let viewport = vk::PipelineViewportStateCreateInfo::default().viewport_count(1).scissor_count(1);
    let raster = fixed_function::rasterization();
    let tessellation =
        vk::PipelineTessellationStateCreateInfo::default().patch_control_points(pipelines.patch_size.unwrap_or(3));
    let dynamic_states = [vk::DynamicState::VIEWPORT, vk::DynamicState::SCISSOR];
    let dynamic = vk::PipelineDynamicStateCreateInfo::default().dynamic_states(&dynamic_states);
    let mut info = vk::GraphicsPipelineCreateInfo::default()
        .stages(&stage_infos)
        .viewport_state(&viewport)
        .rasterization_state(&raster)
        .dynamic_state(&dynamic)
        .layout(pipelines.layout);
    if pipelines.patch_size.is_some() {
        info = info.tessellation_state(&tessellation);
    }
    create(pipelines, vk::GraphicsPipelineLibraryFlagsEXT::PRE_RASTERIZATION_SHADERS, info)
}

/// The fragment shader, for a target with a depth attachment (depth test
/// and write set by each draw) where `depth`, else without.
fn fragment(pipelines: &GraphicsPipelines, depth: bool) -> Result<vk::Pipeline, XrError> {
    let stages: Vec<&Stage> = pipelines.stages.iter().filter(|s| s.flag == vk::ShaderStageFlags::FRAGMENT).collect();
    let specializations: Vec<vk::SpecializationInfo> = stages.iter().map(|s| s.specialization()).collect();
    let stage_infos = stage_infos(&stages, &specializations);
    // Without a depth attachment the test is off: nothing to set per draw.
    let depth_stencil = fixed_function::depth_stencil();
    let multisample = fixed_function::multisample();
    let dynamic_states: &[vk::DynamicState] =
        if depth { &[vk::DynamicState::DEPTH_TEST_ENABLE, vk::DynamicState::DEPTH_WRITE_ENABLE] } else { &[] };
    let dynamic = vk::PipelineDynamicStateCreateInfo::default().dynamic_states(dynamic_states);
    let info = vk::GraphicsPipelineCreateInfo::default()
        .stages(&stage_infos)
        .depth_stencil_state(&depth_stencil)
        .multisample_state(&multisample)
        .dynamic_state(&dynamic)
        .layout(pipelines.layout);
    create(pipelines, vk::GraphicsPipelineLibraryFlagsEXT::FRAGMENT_SHADER, info)
}
