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
//!
//! A draw that does not wait (`wait` false in [`pipeline_for`]) never
//! compiles on the draw path: where the device has graphics pipeline
//! libraries, the program's stages were made as libraries when it loaded
//! (`libraries`), and a pipeline for new formats is linked from them at
//! once while the optimized one compiles on another thread
//! (`background`); without them, the whole pipeline compiles on another
//! thread and the draw is told to come back.

mod background;
mod draw_state;
mod libraries;

pub use draw_state::DrawState;

use crate::counter::Counter;
use ash::vk::{self, Handle};
use background::Slot;
use libraries::Libraries;
use std::{
    collections::{BTreeSet, HashMap},
    ffi::CString,
    sync::{Arc, Condvar, Mutex, MutexGuard, Weak, atomic::AtomicBool},
};
use xr_device::{PipelineAnswer, Readiness, XrError};
use xr_plugin_kit::background::Task;
use xr_sourcebuild::ShaderStage;
use xr_spirv::{container::StageModule, reflect::InterfaceVariable};
use xr_vulkan_common::fixed_function;

/// One stage of the pipeline, owned (pipelines are made after `create`).
struct Stage {
    flag: vk::ShaderStageFlags,
    module: vk::ShaderModule,
    entry: CString,
    map: Vec<vk::SpecializationMapEntry>,
    data: Vec<u8>,
}

impl Stage {
    /// Its specialization data, as a create info points to it.
    fn specialization(&self) -> vk::SpecializationInfo<'_> {
        vk::SpecializationInfo::default().map_entries(&self.map).data(&self.data)
    }
}

/// The create infos of `stages`, pointing into `specializations` (theirs, in order).
fn stage_infos<'a>(
    stages: &[&'a Stage],
    specializations: &'a [vk::SpecializationInfo<'a>],
) -> Vec<vk::PipelineShaderStageCreateInfo<'a>> {
    stages
        .iter()
        .zip(specializations)
        .map(|(s, specialization)| {
            let info = vk::PipelineShaderStageCreateInfo::default().stage(s.flag).module(s.module).name(&s.entry);
            if s.map.is_empty() { info } else { info.specialization_info(specialization) }
        })
        .collect()
}

/// What a pipeline is made for: colour formats, depth format (0: none),
/// render pass (null: dynamic rendering).
type TargetShape = (Vec<u32>, u32, vk::RenderPass);

/// The formats of a target shape as Vulkan names them: colours, depth.
fn formats_of(colors: &[u32], depth: u32) -> (Vec<vk::Format>, Option<vk::Format>) {
    let formats = colors.iter().map(|f| vk::Format::from_raw(*f as i32)).collect();
    (formats, (depth != 0).then(|| vk::Format::from_raw(depth as i32)))
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
    /// render pass: null for dynamic rendering), and where each stands.
    made: Mutex<HashMap<TargetShape, Slot>>,
    /// Told when a pipeline compiled on another thread is done.
    changed: Condvar,
    /// Pipelines linked fast and since replaced by the optimized ones:
    /// destroyed with the program (see [`background`]).
    retired: Mutex<Vec<vk::Pipeline>>,
    /// The compiles started on the background pool, joined before the
    /// program's objects (and the pipeline cache) are destroyed.
    jobs: Mutex<Vec<Task<()>>>,
    /// Set when the program is destroyed: a job not started yet makes nothing.
    cancelled: AtomicBool,
    /// The program's stages as graphics pipeline libraries, where the
    /// device has them (made at load).
    libraries: Option<Libraries>,
    /// This, for the threads it starts.
    me: Weak<GraphicsPipelines>,
    /// The draw states of those made for dynamic rendering, shared with
    /// the build system, which reports them after the program is gone.
    drawn: Arc<Mutex<BTreeSet<DrawState>>>,
    /// The persistent pipeline cache every pipeline is made through.
    cache: vk::PipelineCache,
    /// Where each pipeline made is counted.
    counter: Counter,
}

/// What [`GraphicsPipelines::new`] makes a program's pipelines from.
pub struct PipelineSource<'a> {
    /// The program's stages.
    pub modules: &'a [StageModule],
    /// Their shader modules, in the same order.
    pub shader_modules: &'a [vk::ShaderModule],
    /// The pipeline layout.
    pub layout: vk::PipelineLayout,
    /// The fragment stage's outputs.
    pub outputs: &'a [InterfaceVariable],
    /// Make the stages as graphics pipeline libraries now (the device
    /// has them, and the program is drawn with dynamic rendering).
    pub libraries: bool,
}

impl GraphicsPipelines {
    /// What the pipelines of `source` are made from, through `cache`; the
    /// draw states of pipelines made at draws go into `drawn`. Where
    /// `source` asks for libraries, they are made now (a driver refusing
    /// them leaves the program without: it compiles whole pipelines).
    pub fn new(
        device: ash::Device,
        context: &str,
        source: PipelineSource<'_>,
        (cache, drawn): (vk::PipelineCache, Arc<Mutex<BTreeSet<DrawState>>>),
        counter: Counter,
    ) -> Result<Arc<Self>, XrError> {
        let stages = source
            .modules
            .iter()
            .zip(source.shader_modules)
            .map(|(m, module)| {
                let entry = CString::new(m.entry_point.as_str())
                    .map_err(|_| XrError::invalid_input(format!("{context}: entry point with a NUL byte")))?;
                let (map, data) = specialization(m);
                Ok(Stage { flag: crate::layout::stage_flag(m.stage), module: *module, entry, map, data })
            })
            .collect::<Result<_, XrError>>()?;
        let mut pipelines = Self {
            device,
            context: context.to_owned(),
            stages,
            patch_size: patch_size(source.modules)?,
            mesh: source.modules.iter().any(|m| m.stage == ShaderStage::Mesh),
            layout: source.layout,
            written: written_locations(source.outputs),
            made: Mutex::new(HashMap::new()),
            changed: Condvar::new(),
            retired: Mutex::new(Vec::new()),
            jobs: Mutex::new(Vec::new()),
            cancelled: AtomicBool::new(false),
            libraries: None,
            me: Weak::new(),
            drawn,
            cache,
            counter,
        };
        // Mesh programs are drawn by draws that always wait: no libraries.
        if source.libraries && !pipelines.mesh {
            match Libraries::make(&pipelines) {
                Ok(libraries) => pipelines.libraries = Some(libraries),
                Err(e) => tracing::warn!("{e}: new draw states compile whole pipelines"),
            }
        }
        Ok(Arc::new_cyclic(|me| Self { me: me.clone(), ..pipelines }))
    }

    /// The colour blend attachments of a pipeline into `count` colour
    /// attachments: with `mask_unwritten`, those the fragment stage has no
    /// output for keep their contents.
    fn blend_attachments(&self, count: usize, mask_unwritten: bool) -> Vec<vk::PipelineColorBlendAttachmentState> {
        fixed_function::blend_attachments(
            (0..count as u32).map(|i| !mask_unwritten || self.written.as_ref().is_none_or(|w| w.contains(&i))),
        )
    }

    /// A whole pipeline drawing into colour attachments of `colors` and a depth
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
        let all: Vec<&Stage> = self.stages.iter().collect();
        let specializations: Vec<vk::SpecializationInfo> = all.iter().map(|s| s.specialization()).collect();
        let stages = stage_infos(&all, &specializations);
        let vertex_input = vk::PipelineVertexInputStateCreateInfo::default();
        let assembly = vk::PipelineInputAssemblyStateCreateInfo::default()
            .topology(fixed_function::topology(self.patch_size.is_some()));
        let tessellation =
            vk::PipelineTessellationStateCreateInfo::default().patch_control_points(self.patch_size.unwrap_or(3));
        let viewport = vk::PipelineViewportStateCreateInfo::default().viewport_count(1).scissor_count(1);
        let raster = fixed_function::rasterization();
        let multisample = fixed_function::multisample();
        let attachments = self.blend_attachments(colors.len(), mask_unwritten);
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

    /// The pipeline table, locked.
    fn made(&self) -> Result<MutexGuard<'_, HashMap<TargetShape, Slot>>, XrError> {
        self.made.lock().map_err(|_| XrError::driver("pipeline table poisoned"))
    }

    /// The pipeline for a target of `colors` and `depth` (0: none), kept
    /// once made. With `wait`, made now where there is none (a whole
    /// compile, as every draw did), or waited for where another thread
    /// compiles it whole (a linked one, where there is one, is taken at
    /// once). Without, answered at once: the one there is, one
    /// linked from the libraries now (its optimized one started on another
    /// thread), or none while a whole compile runs on another thread.
    fn for_target(
        &self,
        colors: &[u32],
        depth: u32,
        render_pass: vk::RenderPass,
        wait: bool,
    ) -> Result<PipelineAnswer, XrError> {
        let key = (colors.to_vec(), depth, render_pass);
        let mut made = self.made()?;
        loop {
            match made.get(&key).copied() {
                Some(Slot::Ready(pipeline)) => return Ok(PipelineAnswer::ready(pipeline.as_raw())),
                Some(Slot::Failed) => {
                    return Err(XrError::driver(format!(
                        "{}: its pipeline for these formats could not be made (logged when it failed)",
                        self.context
                    )));
                }
                // A draw that waits takes it too: it draws what the optimized
                // one will, and waiting for that would stall for nothing.
                Some(Slot::Linked(pipeline)) => {
                    return Ok(PipelineAnswer { pipeline: pipeline.as_raw(), readiness: Readiness::Linked });
                }
                Some(Slot::Compiling) if !wait => return Ok(PipelineAnswer::compiling()),
                // Compiling on another thread, and this draw waits for it.
                Some(_) => made = self.changed.wait(made).map_err(|_| XrError::driver("pipeline table poisoned"))?,
                None => break,
            }
        }
        let (formats, depth_format) = formats_of(colors, depth);
        if render_pass == vk::RenderPass::null() {
            let state = DrawState { colors: formats.clone(), depth: depth_format };
            self.drawn.lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(state);
        }
        if wait {
            let pipeline = self.make(self.cache, &formats, depth_format, true, render_pass)?;
            made.insert(key, Slot::Ready(pipeline));
            return Ok(PipelineAnswer::ready(pipeline.as_raw()));
        }
        let libraries = self.libraries.as_ref().filter(|_| render_pass == vk::RenderPass::null());
        let Some(libraries) = libraries else {
            made.insert(key.clone(), Slot::Compiling);
            drop(made);
            self.start(key, None)?;
            return Ok(PipelineAnswer::compiling());
        };
        let output = libraries.fragment_output(self, &formats, depth_format)?;
        let linked = libraries.link(self, output, depth_format.is_some(), false)?;
        made.insert(key.clone(), Slot::Linked(linked));
        drop(made);
        self.start(key, Some(output))?;
        Ok(PipelineAnswer { pipeline: linked.as_raw(), readiness: Readiness::Linked })
    }

    /// Makes the pipelines of `states` now (through the pipeline cache, as
    /// a draw in each would), and keeps them for the draws; how many were
    /// not made already.
    pub fn warm(&self, states: &[DrawState]) -> Result<u32, XrError> {
        let mut made = 0;
        for state in states {
            let colors: Vec<u32> = state.colors.iter().map(|f| f.as_raw() as u32).collect();
            let depth = state.depth.map_or(0, |f| f.as_raw() as u32);
            let known = self.made()?.contains_key(&(colors.clone(), depth, vk::RenderPass::null()));
            if !known {
                self.for_target(&colors, depth, vk::RenderPass::null(), true)?;
                made += 1;
            }
        }
        Ok(made)
    }

    /// The draw states of the pipelines made at draws, shared.
    pub fn drawn(&self) -> Arc<Mutex<BTreeSet<DrawState>>> {
        Arc::clone(&self.drawn)
    }

    /// Destroys the pipelines made for other targets, and the libraries,
    /// once every thread compiling one is done (a job not started yet
    /// makes nothing).
    ///
    /// # Safety
    /// The device is open and nothing uses them any more.
    pub unsafe fn destroy(&self) {
        self.cancelled.store(true, std::sync::atomic::Ordering::Release);
        self.join();
        let made = std::mem::take(&mut *self.made.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
        let retired = std::mem::take(&mut *self.retired.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
        let pipelines = made.into_values().filter_map(Slot::pipeline).chain(retired);
        for pipeline in pipelines {
            // SAFETY: per the contract; each was made on this device.
            unsafe { self.device.destroy_pipeline(pipeline, None) };
        }
        if let Some(libraries) = &self.libraries {
            // SAFETY: per the contract; every pipeline linked from them is gone.
            unsafe { libraries.destroy(&self.device) };
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
/// program's [`GraphicsPipelines`]. A pipeline of 0 when it cannot be made
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
    wait: bool,
) -> PipelineAnswer {
    if context.is_null() || formats.is_null() || count == 0 {
        return PipelineAnswer::ready(0);
    }
    // SAFETY: per the contract (both non-null, checked above).
    let (pipelines, formats) =
        unsafe { (&*context.cast::<GraphicsPipelines>(), std::slice::from_raw_parts(formats, count as usize)) };
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        pipelines.for_target(formats, depth, vk::RenderPass::from_raw(render_pass), wait)
    })) {
        Ok(Ok(answer)) => answer,
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

/// The device's `VulkanProgram::settle`: joins every thread the program's
/// [`GraphicsPipelines`] (`context`) started, so that none is inside a
/// call on a device that closes.
///
/// # Safety
/// `context` points to a live [`GraphicsPipelines`] (or is null).
pub unsafe extern "C" fn settle(context: *const std::ffi::c_void) {
    if context.is_null() {
        return;
    }
    // SAFETY: per the contract.
    let pipelines = unsafe { &*context.cast::<GraphicsPipelines>() };
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| pipelines.join())) {
        Ok(joined) => pipelines.counter.settled(joined),
        Err(_) => tracing::error!("{}: waiting for its pipeline threads panicked", pipelines.context),
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
