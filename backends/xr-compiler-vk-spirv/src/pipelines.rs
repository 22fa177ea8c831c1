//! The graphics pipelines of one program, for any set of attachments.
//!
//! A Vulkan pipeline is made for the formats of the attachments it draws
//! into (dynamic rendering names them at creation). A program's pipelines
//! for the device's own target (one RGBA8 attachment, with and without
//! depth) are made when it is built; a target of other formats (a G-buffer,
//! a float target) gets its pipeline on its first draw, when the device
//! calls [`pipeline_for`], and keeps it for the program's life. Every one
//! goes through the persistent pipeline cache, and the formats of each
//! made at a draw are kept as a [`DrawState`]: a usage log records them,
//! and a warm hands them back ([`GraphicsPipelines::warm`]) to make those
//! pipelines before the first frame. [`GraphicsPipelines`] holds what either needs: the
//! shader stages with their specialization data, the layout, and which
//! attachments the fragment stage writes. A device that cannot read input
//! attachments within dynamic rendering draws a program that reads them in
//! a render pass of its own, and asks for a pipeline of that render pass.

use crate::counter::Counter;
use ash::vk;
use std::{
    collections::{BTreeSet, HashMap},
    ffi::CString,
    fmt,
    sync::{Arc, Mutex},
};
use xr_device::{AttachmentState, PipelineAnswer, XrError};
use xr_sourcebuild::ShaderStage;
use xr_spirv::{container::StageModule, reflect::InterfaceVariable};
use xr_vulkan_common::fixed_function;
use xr_vulkan_common::formats::{DEPTH_FORMAT, texture_format, vk_format};

/// One stage of the pipeline, owned (pipelines are made after `create`).
struct Stage {
    flag: vk::ShaderStageFlags,
    module: vk::ShaderModule,
    entry: CString,
    map: Vec<vk::SpecializationMapEntry>,
    data: Vec<u8>,
}

/// What a pipeline is made for: colour formats, depth format (0: none),
/// render pass (null: dynamic rendering).
type TargetShape = (Vec<u32>, u32, vk::RenderPass);

/// The attachment formats a pipeline made at a draw was made for: what a
/// usage log keeps. Formats of XR's targets are named as the device
/// contract names them ([`AttachmentState`]: `colors=rgba16f,rgba8
/// depth`), so that a warm can make a target of them and draw; others (a
/// swapchain's) by their Vulkan names (`colors=B8G8R8A8_SRGB`). A render
/// pass of the device's own (input attachments read where dynamic
/// rendering cannot) is no draw state: it is not warmed.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DrawState {
    /// Colour attachment formats, in order.
    pub colors: Vec<vk::Format>,
    /// The depth attachment's, where there is one.
    pub depth: Option<vk::Format>,
}

impl DrawState {
    /// The state in the device contract's words, where it has them.
    fn attachments(&self) -> Option<AttachmentState> {
        let colors = self.colors.iter().map(|c| texture_format(*c)).collect::<Option<Vec<_>>>()?;
        match self.depth {
            None => Some(AttachmentState { colors, depth: false }),
            Some(DEPTH_FORMAT) => Some(AttachmentState { colors, depth: true }),
            Some(_) => None,
        }
    }
}

impl fmt::Display for DrawState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(attachments) = self.attachments() {
            return attachments.fmt(f);
        }
        let colors: Vec<String> = self.colors.iter().map(|c| format_name(*c)).collect();
        write!(f, "colors={}", colors.join(","))?;
        if let Some(depth) = self.depth {
            write!(f, " depth={}", format_name(depth))?;
        }
        Ok(())
    }
}

impl std::str::FromStr for DrawState {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        if let Ok(attachments) = text.parse::<AttachmentState>() {
            return Ok(DrawState {
                colors: attachments.colors.iter().map(|c| vk_format(*c)).collect(),
                depth: attachments.depth.then_some(DEPTH_FORMAT),
            });
        }
        let bad = |why: &str| format!("draw state '{text}': {why}");
        let mut state = DrawState { colors: Vec::new(), depth: None };
        for part in text.split_whitespace() {
            match part.split_once('=') {
                Some(("colors", list)) => {
                    state.colors = list
                        .split(',')
                        .map(|n| format_named(n).ok_or_else(|| bad(&format!("no format {n}"))))
                        .collect::<Result<_, _>>()?;
                }
                Some(("depth", name)) => {
                    state.depth = Some(format_named(name).ok_or_else(|| bad(&format!("no format {name}")))?);
                }
                _ => return Err(bad(&format!("'{part}' is neither colors= nor depth="))),
            }
        }
        if state.colors.is_empty() {
            return Err(bad("no colour attachment"));
        }
        Ok(state)
    }
}

/// A format's Vulkan name without its prefix (`R8G8B8A8_UNORM`).
fn format_name(format: vk::Format) -> String {
    format!("{format:?}")
}

/// The format named `name` as [`format_name`] writes it; the core formats
/// (0 to 184) are all there are in a draw state a plain target makes.
fn format_named(name: &str) -> Option<vk::Format> {
    (1..=184).map(vk::Format::from_raw).find(|f| format_name(*f) == name)
}

/// What a program's graphics pipelines are made from, and those made for
/// other targets than the device's own (destroyed by [`Self::destroy`]).
pub struct GraphicsPipelines {
    device: ash::Device,
    /// The program, for messages.
    context: String,
    stages: Vec<Stage>,
    /// Control points per patch when tessellated.
    patch_size: Option<u32>,
    /// Task and mesh stages make the geometry: no vertex input or assembly.
    mesh: bool,
    layout: vk::PipelineLayout,
    /// The fragment stage's output locations; `None` where one is not a
    /// plain location (every attachment is then written).
    written: Option<Vec<u32>>,
    /// Pipelines for other targets, by (colour formats, depth format,
    /// render pass: null for dynamic rendering).
    made: Mutex<HashMap<TargetShape, vk::Pipeline>>,
    /// The draw states of those made for dynamic rendering, shared with
    /// the build system, which reports them after the program is gone.
    drawn: Arc<Mutex<BTreeSet<DrawState>>>,
    /// The persistent pipeline cache every pipeline is made through.
    cache: vk::PipelineCache,
    /// Where each pipeline made is counted.
    counter: Counter,
}

impl GraphicsPipelines {
    /// What the pipelines of `modules` (made into `shader_modules`) with
    /// `layout` are made from, through `cache`; `outputs` are the fragment
    /// stage's. The draw states of pipelines made at draws go into `drawn`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        device: ash::Device,
        context: &str,
        modules: &[StageModule],
        shader_modules: &[vk::ShaderModule],
        layout: vk::PipelineLayout,
        outputs: &[InterfaceVariable],
        (cache, drawn): (vk::PipelineCache, Arc<Mutex<BTreeSet<DrawState>>>),
        counter: Counter,
    ) -> Result<Self, XrError> {
        let stages = modules
            .iter()
            .zip(shader_modules)
            .map(|(m, module)| {
                let entry = CString::new(m.entry_point.as_str())
                    .map_err(|_| XrError::invalid_input(format!("{context}: entry point with a NUL byte")))?;
                let (map, data) = specialization(m);
                Ok(Stage { flag: crate::layout::stage_flag(m.stage), module: *module, entry, map, data })
            })
            .collect::<Result<_, XrError>>()?;
        Ok(Self {
            device,
            context: context.to_owned(),
            stages,
            patch_size: patch_size(modules)?,
            mesh: modules.iter().any(|m| m.stage == ShaderStage::Mesh),
            layout,
            written: written_locations(outputs),
            made: Mutex::new(HashMap::new()),
            drawn,
            cache,
            counter,
        })
    }

    /// A pipeline drawing into colour attachments of `colors` and a depth
    /// attachment of `depth`. With `mask_unwritten`, attachments the
    /// fragment stage has no output for keep their contents (a lighting
    /// pass drawing into a G-buffer's last attachment leaves the others);
    /// without, every attachment is written (the device's own target).
    /// In `render_pass` (subpass 0) where it is not null, else for
    /// dynamic rendering.
    pub fn make(
        &self,
        cache: vk::PipelineCache,
        colors: &[vk::Format],
        depth: Option<vk::Format>,
        mask_unwritten: bool,
        render_pass: vk::RenderPass,
    ) -> Result<vk::Pipeline, XrError> {
        let specializations: Vec<vk::SpecializationInfo> =
            self.stages.iter().map(|s| vk::SpecializationInfo::default().map_entries(&s.map).data(&s.data)).collect();
        let stages: Vec<vk::PipelineShaderStageCreateInfo> = self
            .stages
            .iter()
            .zip(&specializations)
            .map(|(s, specialization)| {
                let mut info =
                    vk::PipelineShaderStageCreateInfo::default().stage(s.flag).module(s.module).name(&s.entry);
                if !s.map.is_empty() {
                    info = info.specialization_info(specialization);
                }
                info
            })
            .collect();
        let vertex_input = vk::PipelineVertexInputStateCreateInfo::default();
        let assembly = vk::PipelineInputAssemblyStateCreateInfo::default()
            .topology(fixed_function::topology(self.patch_size.is_some()));
        let tessellation =
            vk::PipelineTessellationStateCreateInfo::default().patch_control_points(self.patch_size.unwrap_or(3));
        let viewport = vk::PipelineViewportStateCreateInfo::default().viewport_count(1).scissor_count(1);
        let raster = fixed_function::rasterization();
        let multisample = fixed_function::multisample();
        let attachments = fixed_function::blend_attachments(
            (0..colors.len() as u32).map(|i| !mask_unwritten || self.written.as_ref().is_none_or(|w| w.contains(&i))),
        );
        let blend = vk::PipelineColorBlendStateCreateInfo::default().attachments(&attachments);
        let dynamic_states = fixed_function::dynamic_states(self.mesh, depth.is_some());
        let dynamic = vk::PipelineDynamicStateCreateInfo::default().dynamic_states(&dynamic_states);
        let depth_stencil = fixed_function::depth_stencil();
        let mut rendering = vk::PipelineRenderingCreateInfo::default().color_attachment_formats(colors);
        if let Some(format) = depth {
            rendering = rendering.depth_attachment_format(format);
        }
        let mut info = vk::GraphicsPipelineCreateInfo::default()
            .stages(&stages)
            .viewport_state(&viewport)
            .rasterization_state(&raster)
            .multisample_state(&multisample)
            .color_blend_state(&blend)
            .dynamic_state(&dynamic)
            .layout(self.layout);
        info = if render_pass == vk::RenderPass::null() {
            info.push_next(&mut rendering)
        } else {
            info.render_pass(render_pass).subpass(0)
        };
        if !self.mesh {
            info = info.vertex_input_state(&vertex_input).input_assembly_state(&assembly);
        }
        if self.patch_size.is_some() {
            info = info.tessellation_state(&tessellation);
        }
        if depth.is_some() {
            info = info.depth_stencil_state(&depth_stencil);
        }
        let mut feedback = vk::PipelineCreationFeedback::default();
        let mut feedback_info =
            vk::PipelineCreationFeedbackCreateInfo::default().pipeline_creation_feedback(&mut feedback);
        info = info.push_next(&mut feedback_info);
        // SAFETY: every structure referenced by `info` lives until the call returns.
        let pipeline = unsafe { self.device.create_graphics_pipelines(cache, &[info], None) }
            .map(|pipelines| pipelines[0])
            .map_err(|(_, e)| XrError::driver(format!("{}: vkCreateGraphicsPipelines failed: {e}", self.context)))?;
        self.counter.pipeline(&feedback);
        Ok(pipeline)
    }

    /// The pipeline for a target of `colors` and `depth` (0: none), made
    /// on the first call and kept.
    fn for_target(&self, colors: &[u32], depth: u32, render_pass: vk::RenderPass) -> Result<vk::Pipeline, XrError> {
        let mut made = self.made.lock().map_err(|_| XrError::driver("pipeline table poisoned"))?;
        let key = (colors.to_vec(), depth, render_pass);
        if let Some(pipeline) = made.get(&key) {
            return Ok(*pipeline);
        }
        let formats: Vec<vk::Format> = colors.iter().map(|f| vk::Format::from_raw(*f as i32)).collect();
        let depth_format = (depth != 0).then(|| vk::Format::from_raw(depth as i32));
        let pipeline = self.make(self.cache, &formats, depth_format, true, render_pass)?;
        made.insert(key, pipeline);
        if render_pass == vk::RenderPass::null() {
            let state = DrawState { colors: formats, depth: depth_format };
            self.drawn.lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(state);
        }
        Ok(pipeline)
    }

    /// Makes the pipelines of `states` now (through the pipeline cache, as
    /// a draw in each would), and keeps them for the draws; how many were
    /// not made already.
    pub fn warm(&self, states: &[DrawState]) -> Result<u32, XrError> {
        let mut made = 0;
        for state in states {
            let colors: Vec<u32> = state.colors.iter().map(|f| f.as_raw() as u32).collect();
            let depth = state.depth.map_or(0, |f| f.as_raw() as u32);
            let known = self.made.lock().map_err(|_| XrError::driver("pipeline table poisoned"))?.contains_key(&(
                colors.clone(),
                depth,
                vk::RenderPass::null(),
            ));
            if !known {
                self.for_target(&colors, depth, vk::RenderPass::null())?;
                made += 1;
            }
        }
        Ok(made)
    }

    /// The draw states of the pipelines made at draws, shared.
    pub fn drawn(&self) -> Arc<Mutex<BTreeSet<DrawState>>> {
        Arc::clone(&self.drawn)
    }

    /// Destroys the pipelines made for other targets.
    ///
    /// # Safety
    /// The device is open and nothing uses them any more.
    pub unsafe fn destroy(&self) {
        let made = std::mem::take(&mut *self.made.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
        for pipeline in made.into_values() {
            // SAFETY: per the contract; each was made on this device.
            unsafe { self.device.destroy_pipeline(pipeline, None) };
        }
    }
}

/// A module's specialization constants as Vulkan takes them: one 4-byte
/// entry per constant, and their values in that order.
pub fn specialization(module: &StageModule) -> (Vec<vk::SpecializationMapEntry>, Vec<u8>) {
    let map = (0..module.specializations.len())
        .map(|i| vk::SpecializationMapEntry {
            constant_id: module.specializations[i].id,
            offset: (i * 4) as u32,
            size: 4,
        })
        .collect();
    let data = module.specializations.iter().flat_map(|s| s.bits.to_le_bytes()).collect();
    (map, data)
}

/// Control points per patch of a tessellated program: each triangle's
/// three vertices (or as many as the tess-control stage declares); `None`
/// when it is not tessellated.
pub fn patch_size(modules: &[StageModule]) -> Result<Option<u32>, XrError> {
    match modules.iter().find(|m| m.stage == ShaderStage::TessControl) {
        Some(module) => Ok(Some(xr_spirv::reflect::output_vertices(&module.words)?.unwrap_or(3))),
        None => Ok(None),
    }
}

/// The colour attachments a fragment stage with `outputs` writes, one bit
/// each (attachment `i`: bit `i`); every bit where that is not known.
pub fn written_mask(outputs: &[InterfaceVariable]) -> u32 {
    match written_locations(outputs) {
        Some(locations) => locations.iter().filter(|l| **l < 32).fold(0, |mask, l| mask | (1 << l)),
        None => u32::MAX,
    }
}

/// The locations a fragment stage's outputs write; `None` when one is
/// not a plain vector or array of them.
fn written_locations(outputs: &[InterfaceVariable]) -> Option<Vec<u32>> {
    let mut written = Vec::new();
    for output in outputs {
        // Arrays reflect as `[vec4<f32>; 3]`: one location per element.
        let count = match output.ty.strip_prefix('[') {
            Some(array) => array.rsplit_once("; ")?.1.strip_suffix(']')?.parse::<u32>().ok()?,
            None => 1,
        };
        written.extend(output.location..output.location + count);
    }
    Some(written)
}

/// The device's `VulkanProgram::pipeline_for`: `context` is the
/// program's [`GraphicsPipelines`]. 0 when the pipeline cannot be made
/// (the reason is logged; the device reports the draw as failed).
///
/// # Safety
/// `context` points to a live [`GraphicsPipelines`] and `formats` to
/// `count` formats.
pub unsafe extern "C" fn pipeline_for(
    context: *const std::ffi::c_void,
    formats: *const u32,
    count: u32,
    depth: u32,
    render_pass: u64,
    _wait: bool,
) -> PipelineAnswer {
    use ash::vk::Handle;
    if context.is_null() || formats.is_null() || count == 0 {
        return PipelineAnswer::ready(0);
    }
    // SAFETY: per the contract (both non-null, checked above).
    let (pipelines, formats) =
        unsafe { (&*context.cast::<GraphicsPipelines>(), std::slice::from_raw_parts(formats, count as usize)) };
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        pipelines.for_target(formats, depth, vk::RenderPass::from_raw(render_pass))
    })) {
        Ok(Ok(pipeline)) => PipelineAnswer::ready(pipeline.as_raw()),
        Ok(Err(e)) => {
            tracing::error!("{e}");
            PipelineAnswer::ready(0)
        }
        Err(_) => {
            tracing::error!("{}: making a pipeline panicked", pipelines.context);
            PipelineAnswer::ready(0)
        }
    }
}

/// The draw states of a program of shader objects: it makes nothing at a
/// draw, but the device tells it the formats it draws into
/// ([`record_state`]), so that a usage log records them and a warm draws
/// into them.
pub struct StateRecorder {
    drawn: Arc<Mutex<BTreeSet<DrawState>>>,
}

impl StateRecorder {
    /// Records into `drawn`.
    pub fn new(drawn: Arc<Mutex<BTreeSet<DrawState>>>) -> Self {
        Self { drawn }
    }
}

/// The device's `VulkanProgram::pipeline_for` for a program of shader
/// objects: `context` is its [`StateRecorder`]; records the state, makes
/// nothing, and answers 0 (the device does not use the answer).
///
/// # Safety
/// `context` points to a live [`StateRecorder`] and `formats` to `count` formats.
pub unsafe extern "C" fn record_state(
    context: *const std::ffi::c_void,
    formats: *const u32,
    count: u32,
    depth: u32,
    _render_pass: u64,
    _wait: bool,
) -> PipelineAnswer {
    if context.is_null() || formats.is_null() || count == 0 {
        return PipelineAnswer::ready(0);
    }
    // SAFETY: per the contract (both non-null, checked above).
    let (recorder, formats) =
        unsafe { (&*context.cast::<StateRecorder>(), std::slice::from_raw_parts(formats, count as usize)) };
    let state = DrawState {
        colors: formats.iter().map(|f| vk::Format::from_raw(*f as i32)).collect(),
        depth: (depth != 0).then(|| vk::Format::from_raw(depth as i32)),
    };
    if let Ok(mut drawn) = recorder.drawn.lock()
        && !drawn.contains(&state)
    {
        drawn.insert(state);
    }
    PipelineAnswer::ready(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn output(location: u32, ty: &str) -> InterfaceVariable {
        InterfaceVariable { name: "o".into(), location, component: 0, ty: ty.into() }
    }

    #[test]
    fn a_draw_state_reads_back_what_it_writes_in_the_contracts_words_where_it_can_and_refuses_the_rest_by_name() {
        let state = DrawState {
            colors: vec![vk::Format::R8G8B8A8_UNORM, vk::Format::R16G16B16A16_SFLOAT],
            depth: Some(vk::Format::D32_SFLOAT),
        };
        let text = state.to_string();
        assert_eq!(text, "colors=rgba8,rgba16f depth");
        assert_eq!(text.parse::<DrawState>(), Ok(state));
        let plain = DrawState { colors: vec![vk::Format::R32G32B32A32_SFLOAT], depth: None };
        assert_eq!(plain.to_string(), "colors=rgba32f");
        assert_eq!(plain.to_string().parse::<DrawState>(), Ok(plain));
        // A swapchain's format has no name in the contract: its Vulkan name.
        let swapchain = DrawState { colors: vec![vk::Format::B8G8R8A8_SRGB], depth: Some(vk::Format::D16_UNORM) };
        assert_eq!(swapchain.to_string(), "colors=B8G8R8A8_SRGB depth=D16_UNORM");
        assert_eq!(swapchain.to_string().parse::<DrawState>(), Ok(swapchain));
        assert_eq!(
            "colors=R9_UNORM".parse::<DrawState>(),
            Err("draw state 'colors=R9_UNORM': no format R9_UNORM".to_owned())
        );
        assert!("depth=D32_SFLOAT".parse::<DrawState>().unwrap_err().contains("no colour attachment"));
        assert!("stencil=S8_UINT colors=R8_UNORM".parse::<DrawState>().unwrap_err().contains("'stencil=S8_UINT'"));
    }

    #[test]
    fn outputs_write_their_locations_and_arrays_one_per_element() {
        assert_eq!(written_locations(&[output(3, "vec4<f32>")]), Some(vec![3]));
        assert_eq!(written_locations(&[output(1, "[vec4<f32>; 3]"), output(0, "vec2<f32>")]), Some(vec![1, 2, 3, 0]));
        assert_eq!(written_locations(&[]), Some(vec![]));
        assert_eq!(written_locations(&[output(0, "[vec4<f32>; n]")]), None);
        assert_eq!(written_mask(&[output(1, "[vec4<f32>; 2]"), output(0, "vec2<f32>")]), 0b111);
        assert_eq!(written_mask(&[output(3, "vec4<f32>")]), 0b1000);
        assert_eq!(written_mask(&[output(0, "[vec4<f32>; n]")]), u32::MAX);
    }
}
