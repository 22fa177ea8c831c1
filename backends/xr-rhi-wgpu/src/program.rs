//! A program on a wgpu device: its shader modules, its layout (bind group
//! layouts from the reflected resources, immediates for the push
//! constants), the values its constant table writes, and the pipelines
//! made for the states it is drawn in: at the draw, or, for a draw that
//! will not wait ([`Program::render_pipeline_without_waiting`]), on the
//! plugin's background pool (`xr_plugin_kit::background`: a wgpu device is
//! `Send + Sync`, and its error scopes are the calling thread's).

use crate::{
    context::Context,
    objects::{DEPTH_FORMAT, Objects, get, wgpu_format},
};
use std::{
    collections::HashMap,
    sync::{Arc, Mutex, MutexGuard},
};
use xr_device::{ResourceBinding, ResourceKind, TextureFormat, VertexLayout, XrError};
use xr_plugin_kit::background::Task;
use xr_sourcebuild::{ResourceInfo, ShaderStage};

/// One stage's module and entry point.
pub struct Stage {
    /// Which stage.
    pub stage: ShaderStage,
    /// The module.
    pub module: wgpu::ShaderModule,
    /// Its entry point.
    pub entry: String,
    /// The fragment outputs' locations (which attachments a draw writes).
    pub outputs: Vec<u32>,
    /// Pipeline-overridable constants by id: the override values of a
    /// program built from WGSL (SPIR-V has them written in).
    pub constants: Vec<(String, f64)>,
}

impl Stage {
    /// How a pipeline compiles this stage.
    fn options(&self) -> Vec<(&str, f64)> {
        self.constants.iter().map(|(id, value)| (id.as_str(), *value)).collect()
    }
}

/// A uniform block the program owns: the constant table writes it.
pub struct UniformBlock {
    /// Its descriptor set (bind group).
    pub set: u32,
    /// Its binding.
    pub binding: u32,
    /// The buffer, written before each draw that follows a change.
    pub buffer: wgpu::Buffer,
}

/// A resource the caller binds.
pub struct Resource {
    /// What the constant table says of it.
    pub info: ResourceInfo,
}

/// What the constant table writes and the device reads at each draw.
pub struct Values {
    /// The immediates (push constants).
    pub immediates: Vec<u8>,
    /// Each uniform block's bytes, with whether they changed since the last draw.
    pub uniforms: Vec<(Vec<u8>, bool)>,
    /// What is bound to each resource.
    pub bound: Vec<Option<ResourceBinding>>,
}

/// The state a render pipeline is made for.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DrawState {
    /// The target's colour formats.
    pub colors: Vec<TextureFormat>,
    /// Whether the target has depth.
    pub depth: bool,
    /// Whether the draw tests depth.
    pub depth_test: bool,
    /// The vertex layout: stride and (location, components, offset), in floats.
    pub vertex: (u32, Vec<(u32, u32, u32)>),
}

impl DrawState {
    /// The state of a draw into a target of `colors` (`depth`) with `layout`.
    pub fn new(colors: Vec<TextureFormat>, depth: bool, depth_test: bool, layout: &VertexLayout) -> Self {
        let attributes = layout.attributes.iter().map(|a| (a.location, a.components, a.offset)).collect();
        Self { colors, depth, depth_test, vertex: (layout.stride, attributes) }
    }
}

/// A loaded program.
pub struct Program {
    /// Its name, for messages.
    pub name: String,
    /// The stages, in pipeline order.
    pub stages: Vec<Stage>,
    /// The bind group layouts, set 0 first.
    pub group_layouts: Vec<wgpu::BindGroupLayout>,
    /// The pipeline layout.
    pub layout: wgpu::PipelineLayout,
    /// The uniform blocks it owns.
    pub uniforms: Vec<UniformBlock>,
    /// The resources the caller binds.
    pub resources: Vec<Resource>,
    /// The constant table's values.
    values: Mutex<Values>,
    render_pipelines: Mutex<HashMap<DrawState, wgpu::RenderPipeline>>,
    /// Pipelines being made on the background pool, by state.
    compiling: Mutex<HashMap<DrawState, Task<Result<wgpu::RenderPipeline, XrError>>>>,
    compute_pipeline: Mutex<Option<wgpu::ComputePipeline>>,
    /// The device's pipeline cache, where it keeps one.
    pub cache: Option<Arc<wgpu::PipelineCache>>,
    /// Whether that cache started from one a launch before stored.
    pub stored_cache: bool,
}

impl Program {
    /// A program of `stages` with its layout; values start at zero.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        name: String,
        stages: Vec<Stage>,
        group_layouts: Vec<wgpu::BindGroupLayout>,
        layout: wgpu::PipelineLayout,
        uniforms: Vec<(UniformBlock, usize)>,
        resources: Vec<Resource>,
        immediate_size: usize,
        cache: Option<(Arc<wgpu::PipelineCache>, bool)>,
    ) -> Self {
        let values = Values {
            immediates: vec![0; immediate_size],
            uniforms: uniforms.iter().map(|(_, size)| (vec![0; *size], true)).collect(),
            bound: vec![None; resources.len()],
        };
        Self {
            name,
            stages,
            group_layouts,
            layout,
            uniforms: uniforms.into_iter().map(|(block, _)| block).collect(),
            resources,
            values: Mutex::new(values),
            render_pipelines: Mutex::new(HashMap::new()),
            compiling: Mutex::new(HashMap::new()),
            compute_pipeline: Mutex::new(None),
            stored_cache: cache.as_ref().is_some_and(|(_, stored)| *stored),
            cache: cache.map(|(cache, _)| cache),
        }
    }

    /// The values the constant table writes.
    pub fn values(&self) -> MutexGuard<'_, Values> {
        lock(&self.values)
    }

    fn stage(&self, stage: ShaderStage) -> Option<&Stage> {
        self.stages.iter().find(|s| s.stage == stage)
    }

    /// The render pipeline for `state`, made on first use; a draw waits
    /// for it (and for a worker thread making it already).
    pub fn render_pipeline(&self, context: &Context, state: &DrawState) -> Result<wgpu::RenderPipeline, XrError> {
        if let Some(pipeline) = self.made(state) {
            return Ok(pipeline);
        }
        let started = lock(&self.compiling).remove(state);
        let pipeline = match started {
            Some(worker) => worker.join().map_err(|_| panicked(&self.name))??,
            None => {
                let pipeline = self.make_render_pipeline(context, state)?;
                context.count_pipeline(self.stored_cache);
                pipeline
            }
        };
        Ok(lock(&self.render_pipelines).entry(state.clone()).or_insert(pipeline).clone())
    }

    /// The render pipeline for `state` if it is made; otherwise `None` at
    /// once, with the pipeline started on the background pool if it was not
    /// (a failure there comes back from a later call). Never waits for a
    /// compile.
    pub fn render_pipeline_without_waiting(
        self: &Arc<Self>,
        context: &Arc<Context>,
        state: &DrawState,
    ) -> Result<Option<wgpu::RenderPipeline>, XrError> {
        if let Some(pipeline) = self.made(state) {
            // Made by a worker: its handle goes (the thread has ended or is ending).
            if let Some(worker) = lock(&self.compiling).remove(state)
                && worker.join().is_err()
            {
                tracing::error!("{}: a pipeline worker panicked after making its pipeline", self.name);
            }
            return Ok(Some(pipeline));
        }
        let mut compiling = lock(&self.compiling);
        match compiling.get(state) {
            Some(worker) if worker.is_finished() => {
                let Some(worker) = compiling.remove(state) else { return Ok(None) };
                drop(compiling);
                let pipeline = worker.join().map_err(|_| panicked(&self.name))??;
                Ok(Some(lock(&self.render_pipelines).entry(state.clone()).or_insert(pipeline).clone()))
            }
            Some(_) => Ok(None),
            None => {
                let (program, context, worker_state) = (self.clone(), context.clone(), state.clone());
                let worker = xr_plugin_kit::background::spawn(move || {
                    let _keep = context.keep_current();
                    let pipeline = program.make_render_pipeline(&context, &worker_state)?;
                    context.count_pipeline(program.stored_cache);
                    // Kept at once, so that readiness sees it before any draw asks.
                    lock(&program.render_pipelines).entry(worker_state).or_insert(pipeline.clone());
                    Ok(pipeline)
                });
                compiling.insert(state.clone(), worker);
                Ok(None)
            }
        }
    }

    /// How many of its pipelines are being made on the background pool.
    pub fn still_compiling(&self) -> usize {
        lock(&self.compiling).values().filter(|worker| !worker.is_finished()).count()
    }

    /// Whether a pipeline for a target of `colors` (`depth`) is made, of
    /// any vertex layout and depth test, and none for it is being made.
    pub fn made_for_target(&self, colors: &[TextureFormat], depth: bool) -> bool {
        let of_target = |state: &DrawState| state.colors == colors && state.depth == depth;
        lock(&self.render_pipelines).keys().any(of_target)
            && !lock(&self.compiling).iter().any(|(state, worker)| of_target(state) && !worker.is_finished())
    }

    fn made(&self, state: &DrawState) -> Option<wgpu::RenderPipeline> {
        lock(&self.render_pipelines).get(state).cloned()
    }

    /// Makes the render pipeline for `state`, holding no lock: a draw that
    /// does not wait may look for another state's meanwhile.
    fn make_render_pipeline(&self, context: &Context, state: &DrawState) -> Result<wgpu::RenderPipeline, XrError> {
        let vertex = self.stage(ShaderStage::Vertex).ok_or_else(|| {
            XrError::invalid_input(format!("program '{}' has no vertex stage to draw triangles with", self.name))
        })?;
        let attributes: Vec<wgpu::VertexAttribute> = state
            .vertex
            .1
            .iter()
            .map(|&(location, components, offset)| wgpu::VertexAttribute {
                format: match components {
                    1 => wgpu::VertexFormat::Float32,
                    2 => wgpu::VertexFormat::Float32x2,
                    3 => wgpu::VertexFormat::Float32x3,
                    _ => wgpu::VertexFormat::Float32x4,
                },
                offset: u64::from(offset) * 4,
                shader_location: location,
            })
            .collect();
        let buffers = [Some(wgpu::VertexBufferLayout {
            array_stride: u64::from(state.vertex.0) * 4,
            step_mode: wgpu::VertexStepMode::Vertex,
            attributes: &attributes,
        })];
        let fragment = self.stage(ShaderStage::Fragment);
        let vertex_constants = vertex.options();
        let fragment_constants = fragment.map(Stage::options).unwrap_or_default();
        // An attachment the fragment stage has no output for keeps its pixels.
        let targets: Vec<Option<wgpu::ColorTargetState>> = state
            .colors
            .iter()
            .enumerate()
            .map(|(index, format)| {
                let written = fragment.is_some_and(|f| f.outputs.contains(&(index as u32)));
                Some(wgpu::ColorTargetState {
                    format: wgpu_format(*format),
                    blend: None,
                    write_mask: if written { wgpu::ColorWrites::ALL } else { wgpu::ColorWrites::empty() },
                })
            })
            .collect();
        let pipeline = context.checked(&format!("making a wgpu pipeline for '{}'", self.name), || {
            Ok(context.device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
                label: Some(&self.name),
                layout: Some(&self.layout),
                vertex: wgpu::VertexState {
                    module: &vertex.module,
                    entry_point: Some(&vertex.entry),
                    compilation_options: wgpu::PipelineCompilationOptions {
                        constants: &vertex_constants,
                        ..Default::default()
                    },
                    buffers: &buffers,
                },
                primitive: wgpu::PrimitiveState::default(),
                depth_stencil: state.depth.then(|| wgpu::DepthStencilState {
                    format: DEPTH_FORMAT,
                    depth_write_enabled: Some(state.depth_test),
                    depth_compare: Some(if state.depth_test {
                        wgpu::CompareFunction::Less
                    } else {
                        wgpu::CompareFunction::Always
                    }),
                    stencil: Default::default(),
                    bias: Default::default(),
                }),
                multisample: Default::default(),
                fragment: fragment.map(|f| wgpu::FragmentState {
                    module: &f.module,
                    entry_point: Some(&f.entry),
                    compilation_options: wgpu::PipelineCompilationOptions {
                        constants: &fragment_constants,
                        ..Default::default()
                    },
                    targets: &targets,
                }),
                multiview_mask: None,
                cache: self.cache.as_deref(),
            }))
        })?;
        Ok(pipeline)
    }

    /// The compute pipeline, made on first use.
    pub fn compute_pipeline(&self, context: &Context) -> Result<wgpu::ComputePipeline, XrError> {
        let mut slot = self.compute_pipeline.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(pipeline) = slot.as_ref() {
            return Ok(pipeline.clone());
        }
        let stage = self
            .stage(ShaderStage::Compute)
            .ok_or_else(|| XrError::invalid_input(format!("program '{}' has no compute stage", self.name)))?;
        let constants = stage.options();
        let pipeline = context.checked(&format!("making a wgpu compute pipeline for '{}'", self.name), || {
            Ok(context.device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(&self.name),
                layout: Some(&self.layout),
                module: &stage.module,
                entry_point: Some(&stage.entry),
                compilation_options: wgpu::PipelineCompilationOptions { constants: &constants, ..Default::default() },
                cache: self.cache.as_deref(),
            }))
        })?;
        context.count_pipeline(self.stored_cache);
        *slot = Some(pipeline.clone());
        Ok(pipeline)
    }

    /// Writes changed uniform blocks and makes the bind groups of a draw or
    /// dispatch from what is bound now; refuses one with a resource unbound.
    pub fn bind_groups(&self, context: &Context, objects: &Objects) -> Result<Vec<wgpu::BindGroup>, XrError> {
        let mut values = self.values();
        if let Some(index) = values.bound.iter().position(Option::is_none) {
            return Err(XrError::invalid_input(format!(
                "program '{}': resource '{}' is not bound",
                self.name, self.resources[index].info.name
            )));
        }
        for (block, (bytes, changed)) in self.uniforms.iter().zip(values.uniforms.iter_mut()) {
            if *changed {
                context.queue.write_buffer(&block.buffer, 0, bytes);
                *changed = false;
            }
        }
        let mut views = Vec::new();
        for (resource, bound) in self.resources.iter().zip(&values.bound) {
            // Handles are ids plus one (0 names nothing).
            let id = bound.as_ref().map_or(0, |b| b.handle.saturating_sub(1)) as u32;
            views.push(match resource.info.kind {
                ResourceKind::SampledImage | ResourceKind::StorageImage => Some(
                    get(&objects.textures, id, "texture")?.texture.create_view(&wgpu::TextureViewDescriptor::default()),
                ),
                _ => None,
            });
        }
        let mut groups = Vec::new();
        for (set, layout) in self.group_layouts.iter().enumerate() {
            let mut entries = Vec::new();
            for block in self.uniforms.iter().filter(|b| b.set as usize == set) {
                entries
                    .push(wgpu::BindGroupEntry { binding: block.binding, resource: block.buffer.as_entire_binding() });
            }
            for (index, resource) in self.resources.iter().enumerate().filter(|(_, r)| r.info.set as usize == set) {
                let Some(bound) = values.bound[index] else { continue };
                let entry = match resource.info.kind {
                    ResourceKind::SampledImage | ResourceKind::StorageImage => {
                        let Some(view) = views[index].as_ref() else { continue };
                        wgpu::BindingResource::TextureView(view)
                    }
                    ResourceKind::Sampler => {
                        wgpu::BindingResource::Sampler(get(&objects.samplers, (bound.sampler - 1) as u32, "sampler")?)
                    }
                    _ => get(&objects.buffers, bound.handle.saturating_sub(1) as u32, "buffer")?
                        .buffer
                        .as_entire_binding(),
                };
                entries.push(wgpu::BindGroupEntry { binding: resource.info.binding, resource: entry });
            }
            groups.push(context.checked(&format!("binding the resources of '{}'", self.name), || {
                Ok(context.device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some(&self.name),
                    layout,
                    entries: &entries,
                }))
            })?);
        }
        Ok(groups)
    }
}

/// `mutex` locked; a lock poisoned by a panicking thread is taken as is
/// (what it guards is a map or plain values, never half written).
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn panicked(program: &str) -> XrError {
    XrError::driver(format!("making a pipeline for '{program}' panicked on its worker thread"))
}
