//! The Vulkan SPIR-V build system attached to one Vulkan device.

use crate::{
    capabilities,
    constant_table::{Entry, ProgramObjects, ResourceEntry, Storage, UniformBuffer, VkConstantTable, info},
    counter::Counter,
    layout::{self, LayoutBinding, stage_flag},
    pipeline_cache::PersistentCache,
    pipelines::{self, DrawState, GraphicsPipelines, StateRecorder},
    ray_tracing::{Groups, RayTracingDevice},
    shader_binaries::ShaderBinaryCache,
    shader_objects::{Code, CreateError, ShaderObjectDevice},
};
use abi_stable::std_types::RVec;
use ash::vk::{self, Handle};
use std::{
    collections::{BTreeSet, HashMap},
    ffi::CString,
    sync::{Arc, Mutex, Weak},
};
use xr_device::{
    DeviceCapabilities, DeviceCounter, InputAttachmentSlot, ProgramRef, ShaderBindingRegion, VulkanLoader,
    VulkanProgram, XrError,
};
use xr_plugin::constant_table_box;
use xr_plugin_kit::SourceBundle;
use xr_sourcebuild::{
    ArtifactLoad, AttachedBuildSystemBackend, Availability, BuildError, BuildOptions, BuiltProgram, LoadPath,
    LoadedArtifact, ProgramBinary, ProgramDesc, ResourceInfo, ShaderStage, Specialization,
};
use xr_spirv::{
    LazyCompiler, SpirvOptions, TargetEnv,
    container::{self, StageModule},
    reflect::Reflection,
};
use xr_store::Store;

/// The device's `VulkanProgram::pipeline_for`.
type PipelineFor = unsafe extern "C" fn(*const std::ffi::c_void, *const u32, u32, u32, u64) -> u64;

/// The Vulkan SPIR-V build system on one device.
pub struct AttachedVkSpirv {
    loader: VulkanLoader,
    capabilities: DeviceCapabilities,
    device: ash::Device,
    memory: vk::PhysicalDeviceMemoryProperties,
    /// The device's descriptor limits, checked before a layout is made.
    limits: vk::PhysicalDeviceLimits,
    /// What the device has, by the names of the registry's SPIR-V
    /// environment table, checked against every capability and extension a
    /// module declares (the device system enables every feature it has).
    offer: capabilities::DeviceOffer,
    /// Its Vulkan 1.2 features that XR's layouts need (descriptor indexing).
    vulkan12: Vulkan12Features,
    /// What it takes of mesh and task stages, where it has them.
    mesh_limits: Option<crate::mesh::MeshLimits>,
    /// Ray tracing pipelines' functions and numbers, where the device has them.
    ray_tracing: Option<RayTracingDevice>,
    compiler: LazyCompiler,
    cache: PersistentCache,
    /// Each registered program's stage modules, for `program_binary`.
    modules: HashMap<u32, Vec<StageModule>>,
    /// Shader objects, where the device enabled them: graphics programs
    /// are made of them instead of pipelines.
    shader_objects: Option<ShaderObjectDevice>,
    /// The driver's shader binaries, once a store is given (`set_store`)
    /// on a device with shader objects.
    binaries: Option<ShaderBinaryCache>,
    /// Where the pipelines and shader objects made are counted.
    counter: Counter,
    /// Each graphics program's draw states (the formats its pipelines
    /// were made for at draws), kept after the program is gone: a usage
    /// log asks when the engine is done.
    drawn: HashMap<u32, Arc<Mutex<BTreeSet<DrawState>>>>,
    /// Each live graphics program's pipelines, for a warm.
    graphics: HashMap<u32, Weak<GraphicsPipelines>>,
}

/// A program made on the device, and its stages' binaries where asked for
/// (the driver's answer, or why there are none).
struct Created {
    program: BuiltProgram,
    binaries: Option<Result<Vec<Vec<u8>>, XrError>>,
}

/// The objects of one program, made before it is registered.
struct CreatedObjects {
    objects: ProgramObjects,
    entries: Vec<Entry>,
    /// Stages that see push constants, and their size.
    push: (vk::ShaderStageFlags, usize),
    /// What its graphics pipelines are made from (none for compute, ray
    /// tracing and shader objects).
    pipelines: Option<Arc<GraphicsPipelines>>,
    /// Bit `i`: the fragment stage writes attachment `i`.
    written_attachments: u32,
    /// Control points per patch; 0 when not tessellated.
    patch_control_points: u32,
    /// A ray tracing program's binding table regions (empty otherwise).
    binding_table: [ShaderBindingRegion; 4],
}

/// The Vulkan 1.2 features a module's capabilities or XR's layouts need,
/// copied out of the driver's answer (whose struct holds a chain pointer).
#[derive(Clone, Copy, Debug)]
struct Vulkan12Features {
    runtime_descriptor_array: vk::Bool32,
    partially_bound: vk::Bool32,
}

impl From<&vk::PhysicalDeviceVulkan12Features<'_>> for Vulkan12Features {
    fn from(f: &vk::PhysicalDeviceVulkan12Features<'_>) -> Self {
        Self {
            runtime_descriptor_array: f.runtime_descriptor_array,
            partially_bound: f.descriptor_binding_partially_bound,
        }
    }
}

fn vk_error(what: &str) -> impl Fn(vk::Result) -> XrError + '_ {
    move |e| XrError::driver(format!("{what} failed: {e}"))
}

impl AttachedVkSpirv {
    /// Loads the instance and device functions through the device's loader.
    pub fn new(loader: VulkanLoader, capabilities: &DeviceCapabilities) -> Result<Self, XrError> {
        // SAFETY: `is_open` takes any context (the device system looks it up
        // among its open devices, never dereferencing it).
        if !unsafe { (loader.is_open)(loader.context) } {
            return Err(XrError::unavailable("the Vulkan device is closed"));
        }
        let context = loader.context;
        let get = loader.get_instance_proc_addr;
        let enabled_extensions = if loader.enabled_extensions.is_null() {
            Vec::new()
        } else {
            // SAFETY: the device keeps the NUL-terminated list alive while it is open (checked above).
            let list = unsafe { std::ffi::CStr::from_ptr(loader.enabled_extensions) };
            list.to_string_lossy().split_whitespace().map(str::to_owned).collect()
        };
        // SAFETY: the handles are a live instance and device; names are NUL-terminated.
        let (device, memory, limits, offer, vulkan12, mesh_limits, ray_tracing, shader_objects) = unsafe {
            let instance = ash::Instance::load_with(
                |name| get(context, loader.instance, name.as_ptr()),
                vk::Instance::from_raw(loader.instance),
            );
            let device = ash::Device::load(instance.fp_v1_0(), vk::Device::from_raw(loader.device));
            let physical = vk::PhysicalDevice::from_raw(loader.physical_device);
            let memory = instance.get_physical_device_memory_properties(physical);
            let properties = instance.get_physical_device_properties(physical);
            let limits = properties.limits;
            let mut vulkan12 = vk::PhysicalDeviceVulkan12Features::default();
            let mut query = vk::PhysicalDeviceFeatures2::default().push_next(&mut vulkan12);
            instance.get_physical_device_features2(physical, &mut query);
            // The device system's instance asks for Vulkan 1.3: what runs is the lower.
            let version = properties.api_version.min(vk::API_VERSION_1_3);
            let mut offer = capabilities::DeviceOffer {
                version: (vk::api_version_major(version), vk::api_version_minor(version)),
                extensions: enabled_extensions.clone(),
                ..capabilities::DeviceOffer::default()
            };
            offer.features = capabilities::read_features(&instance, physical, &offer);
            offer.properties = capabilities::read_properties(&instance, physical);
            let mesh_limits = enabled_extensions
                .iter()
                .any(|e| e == "VK_EXT_mesh_shader")
                .then(|| crate::mesh::MeshLimits::read(&instance, physical));
            let ray_tracing = enabled_extensions
                .iter()
                .any(|e| e == "VK_KHR_ray_tracing_pipeline")
                .then(|| RayTracingDevice::load(&instance, physical, &device));
            let shader_objects = enabled_extensions
                .iter()
                .any(|e| e == "VK_EXT_shader_object")
                .then(|| ShaderObjectDevice::load(&instance, physical, &device));
            let vulkan12 = Vulkan12Features::from(&vulkan12);
            (device, memory, limits, offer, vulkan12, mesh_limits, ray_tracing, shader_objects)
        };
        let cache = PersistentCache::empty(&device)?;
        Ok(Self {
            loader,
            capabilities: capabilities.clone(),
            device,
            memory,
            limits,
            offer,
            vulkan12,
            mesh_limits,
            ray_tracing,
            compiler: LazyCompiler::default(),
            cache,
            modules: HashMap::new(),
            shader_objects,
            binaries: None,
            counter: Counter::new(loader.created),
            drawn: HashMap::new(),
            graphics: HashMap::new(),
        })
    }

    fn compile(&self, desc: &ProgramDesc) -> Result<Vec<StageModule>, BuildError> {
        let context = format!("program '{}'", desc.name);
        let stages: Vec<ShaderStage> = desc.stages.iter().map(|s| s.stage).collect();
        layout::check_stages(&context, &stages)?;
        // Vulkan 1.0, as offline builds default to; mesh stages raise it to what they need.
        let options = SpirvOptions::new(TargetEnv::Vulkan10).for_stages(&stages)?;
        let mut modules = self.compiler.get()?.compile_program(desc, &options)?.modules;
        xr_spirv::finish_program(&mut modules, options.target)?;
        Ok(modules)
    }

    /// The validation rules of the device's Vulkan version.
    fn device_env(&self) -> TargetEnv {
        match (self.capabilities.api_major, self.capabilities.api_minor) {
            (1, 0) => TargetEnv::Vulkan10,
            (1, 1) => TargetEnv::Vulkan11,
            (1, 2) => TargetEnv::Vulkan12,
            _ => TargetEnv::Vulkan13,
        }
    }

    fn reflect(modules: &[StageModule]) -> Result<Vec<Reflection>, XrError> {
        modules.iter().map(|m| xr_spirv::reflect(&m.words, &m.entry_point)).collect()
    }

    /// Late binding: every fragment input must be written by the
    /// vertex stage, at the same location with the same type — checked here,
    /// before any driver sees the program, naming both stages.
    fn check_interface(modules: &[StageModule], reflections: &[Reflection]) -> Result<(), XrError> {
        // Between other stages (tessellation, geometry) inputs are arrays
        // per vertex: the driver's own checks apply there.
        let stages: Vec<ShaderStage> = modules.iter().map(|m| m.stage).collect();
        if stages != [ShaderStage::Vertex, ShaderStage::Fragment] {
            return Ok(());
        }
        let (vertex, fragment) = (&reflections[0], &reflections[1]);
        // A per-vertex input (`pervertexEXT vec3 c[]`) is an array of what
        // the vertex stage writes, one per vertex of the primitive.
        let per_vertex = xr_spirv::reflect::per_vertex_input_locations(&modules[1].words)?;
        for input in &fragment.inputs {
            let by_location = vertex.outputs.iter().find(|o| o.location == input.location);
            let by_name = vertex.outputs.iter().find(|o| o.name == input.name);
            let reads = |output: &xr_spirv::reflect::InterfaceVariable| {
                if per_vertex.contains(&input.location) {
                    input.ty == format!("[{}; 3]", output.ty)
                } else {
                    input.ty == output.ty
                }
            };
            match by_location.or(by_name) {
                Some(output) if reads(output) && output.location == input.location => {}
                Some(output) => {
                    return Err(XrError::invalid_input(format!(
                        "stages do not match: fragment stage {} reads '{}' ({}, location {}) but vertex stage {} writes '{}' ({}, location {})",
                        modules[1].file,
                        input.name,
                        input.ty,
                        input.location,
                        modules[0].file,
                        output.name,
                        output.ty,
                        output.location
                    )));
                }
                None => {
                    return Err(XrError::invalid_input(format!(
                        "stages do not match: fragment stage {} reads '{}' ({}, location {}) which vertex stage {} does not write",
                        modules[1].file, input.name, input.ty, input.location, modules[0].file
                    )));
                }
            }
        }
        Ok(())
    }

    /// How this device lays out arrays of unknown size: partially bound,
    /// [`layout::RUNTIME_ARRAY_LENGTH`] elements (or the device's per-stage
    /// limit, where lower), where it has the descriptor indexing features
    /// that takes.
    fn runtime_arrays(&self) -> layout::RuntimeArrays {
        let f = &self.vulkan12;
        if f.runtime_descriptor_array == vk::FALSE || f.partially_bound == vk::FALSE {
            return layout::RuntimeArrays::Lacking("runtimeDescriptorArray and descriptorBindingPartiallyBound");
        }
        let l = &self.limits;
        let per_stage = [
            l.max_per_stage_descriptor_samplers,
            l.max_per_stage_descriptor_sampled_images,
            l.max_per_stage_descriptor_storage_images,
            l.max_per_stage_descriptor_storage_buffers,
        ];
        layout::RuntimeArrays::Length(per_stage.into_iter().fold(layout::RUNTIME_ARRAY_LENGTH, u32::min))
    }

    /// Refuses, before the driver sees it, a module that declares a SPIR-V
    /// capability or extension the device cannot take, naming it, every way
    /// a device enables it and this device: the whole SPIR-V environment
    /// table of the Vulkan specification ([`capabilities`]).
    fn check_extensions(&self, context: &str, modules: &[StageModule]) -> Result<(), XrError> {
        use capabilities::capability_table::EXTENSIONS;
        for module in modules {
            let declared = xr_spirv::reflect::declared_capabilities(&module.words)?;
            let extensions = xr_spirv::reflect::declared_extensions(&module.words)?;
            let missing = capabilities::first_missing_capability(&declared, &self.offer)
                .map(|(name, ways)| ("capability", name, ways))
                .or_else(|| {
                    capabilities::first_missing(EXTENSIONS, &extensions, &self.offer)
                        .map(|(name, ways)| ("extension", name, ways.to_vec()))
                });
            if let Some((what, name, ways)) = missing {
                // A feature said once: not again as its extension's struct,
                // and the extensions that provide it together.
                let mut said: Vec<String> = Vec::new();
                for way in ways.iter().map(capabilities::Enable::describe) {
                    if said.iter().any(|s| way.starts_with(&format!("{s} of "))) {
                        continue;
                    }
                    let feature = way.split_once(" of ").map(|(feature, by)| (format!("{feature} of "), by.to_owned()));
                    match feature
                        .and_then(|(prefix, by)| said.iter_mut().find(|s| s.starts_with(&prefix)).map(|s| (s, by)))
                    {
                        Some((earlier, by)) => earlier.push_str(&format!(" or {by}")),
                        None => said.push(way),
                    }
                }
                let ways = said;
                return Err(XrError::unavailable(format!(
                    "{context}: the {} stage {} uses the SPIR-V {what} {name}, which needs {}; \
                     this device ({}) does not have it",
                    module.stage.name(),
                    module.file,
                    ways.join(" or "),
                    self.capabilities.renderer
                )));
            }
        }
        Ok(())
    }

    /// An error once the device this build system attached to is closed:
    /// its handles are gone, and a call through them would crash the driver.
    fn device_open(&self, context: &str) -> Result<(), XrError> {
        // SAFETY: as in `new`: `is_open` takes any context; a closed device answers false.
        if unsafe { (self.loader.is_open)(self.loader.context) } {
            Ok(())
        } else {
            Err(XrError::unavailable(format!("{context}: the Vulkan device this build system attached to is closed")))
        }
    }

    fn create(&mut self, desc: &ProgramDesc, modules: Vec<StageModule>) -> Result<BuiltProgram, BuildError> {
        Ok(self.create_from(desc, modules, Code::Spirv, false)?.program)
    }

    /// Makes a program of `modules` on the device, its stages from `code`
    /// where it is made of shader objects; with `want_binaries`, the
    /// driver's binaries of those stages come back too.
    fn create_from(
        &mut self,
        desc: &ProgramDesc,
        mut modules: Vec<StageModule>,
        code: Code<'_>,
        want_binaries: bool,
    ) -> Result<Created, BuildError> {
        let context = format!("program '{}'", desc.name);
        self.device_open(&context)?;
        // Stored objects come here without `compile`: a driver may crash on
        // a pipeline without a vertex stage, so every program is checked.
        let stages: Vec<ShaderStage> = modules.iter().map(|m| m.stage).collect();
        layout::check_stages(&context, &stages)?;
        // Validated for the device's own Vulkan version: objects built for a
        // newer one than 1.0 (SPIR-V 1.3 to 1.6) load where the device has it.
        xr_spirv::validate_program(&modules, self.device_env(), &context)?;
        layout::separate_globals(&mut modules)?;
        let reflections = Self::reflect(&modules)?;
        Self::check_interface(&modules, &reflections)?;
        self.check_extensions(&context, &modules)?;
        let ray_tracing = stages.iter().any(|s| s.pipeline_kind() == xr_sourcebuild::PipelineKind::RayTracing);
        let groups = ray_tracing.then(|| Groups::of(&context, &modules)).transpose()?;
        if let Some(groups) = &groups {
            crate::ray_tracing::check_interface(&context, &modules, groups)?;
        }
        crate::mesh::check_limits(&context, &modules, self.mesh_limits.as_ref(), &self.capabilities.renderer)?;
        let bindings = layout::merge(&context, &modules, &reflections, self.runtime_arrays())?;
        layout::check_limits(&context, &bindings, &self.limits)?;
        let CreatedObjects {
            objects,
            entries,
            push,
            pipelines,
            binding_table,
            written_attachments,
            patch_control_points,
        } = self.create_objects(&context, &modules, &reflections, &bindings, groups.as_ref(), code)?;
        let binaries = match (&objects.shaders, &self.shader_objects) {
            (Some(shaders), Some(device)) if want_binaries => Some(device.binaries(&context, shaders)),
            _ => None,
        };
        // The device writes the target's attachments into these at each draw.
        let input_attachments: Box<[InputAttachmentSlot]> = bindings
            .iter()
            .filter_map(|b| Some((b, b.input_attachment?)))
            .flat_map(|(b, index)| {
                let set = objects.sets[b.set as usize].as_raw();
                (0..b.count).map(move |element| InputAttachmentSlot {
                    descriptor_set: set,
                    binding: b.binding,
                    array_element: element,
                    // Past any target's attachments: the draw refuses it by number.
                    attachment: index.saturating_add(element),
                })
            })
            .collect();
        let resources: Vec<ResourceEntry> = bindings
            .iter()
            .filter_map(|b| {
                let kind = b.kind?;
                Some(ResourceEntry {
                    info: ResourceInfo {
                        name: b.name.as_str().into(),
                        kind,
                        set: b.set,
                        binding: b.binding,
                        array_size: b.count,
                        min_size: b.min_size,
                    },
                    ty: b.ty,
                    set: objects.sets[b.set as usize],
                    bound: vec![false; b.count as usize],
                    partially_bound: b.partially_bound,
                    aliases: b.aliases.clone(),
                })
            })
            .collect();
        let unbound = crate::constant_table::unbound(&resources);
        let compute = modules.iter().any(|m| m.stage == ShaderStage::Compute);
        let mesh = modules.iter().any(|m| m.stage == ShaderStage::Mesh);
        let mut table = VkConstantTable {
            device: self.device.clone(),
            loader: self.loader,
            name: 0,
            program_name: desc.name.to_string(),
            sets: objects.sets.iter().map(|s| s.as_raw()).collect(),
            objects,
            push: vec![0u8; push.1].into_boxed_slice(),
            entries,
            resources,
            unbound: Box::new(unbound),
            pipelines,
            recorder: None,
            input_attachments,
        };
        // A graphics program of shader objects hears of the formats it is drawn into.
        let drawn: Arc<Mutex<BTreeSet<DrawState>>> = match &table.pipelines {
            Some(pipelines) => pipelines.drawn(),
            None => Arc::default(),
        };
        if table.objects.shaders.is_some() {
            table.recorder = Some(Box::new(StateRecorder::new(Arc::clone(&drawn))));
        }
        let (pipeline_for, pipeline_context): (Option<PipelineFor>, *const std::ffi::c_void) =
            match (&table.pipelines, &table.recorder) {
                (Some(pipelines), _) => (Some(pipelines::pipeline_for), Arc::as_ptr(pipelines).cast()),
                (None, Some(recorder)) => (Some(pipelines::record_state), std::ptr::from_ref(&**recorder).cast()),
                (None, None) => (None, std::ptr::null()),
            };
        let program = VulkanProgram {
            pipeline: table.objects.pipeline.as_raw(),
            depth_pipeline: table.objects.depth_pipeline.as_raw(),
            compute,
            mesh,
            ray_tracing,
            shader_binding_table: binding_table,
            layout: table.objects.layout.as_raw(),
            descriptor_sets: table.sets.as_ptr(),
            descriptor_set_count: table.sets.len() as u32,
            push_constants: table.push.as_ptr(),
            push_constants_len: table.push.len() as u32,
            push_constant_stages: push.0.as_raw(),
            unbound: &*table.unbound,
            pipeline_for,
            pipeline_context,
            input_attachments: table.input_attachments.as_ptr(),
            input_attachment_count: table.input_attachments.len() as u32,
            shader_objects: table.objects.shaders.as_ref().map_or(std::ptr::null(), |s| s.slots.as_ptr()),
            shader_object_count: table.objects.shaders.as_ref().map_or(0, |s| s.slots.len() as u32),
            written_attachments,
            patch_control_points,
        };
        // SAFETY: the loader belongs to a live device; the push bytes, the
        // sets and the unbound count live as long as the table.
        let name = unsafe { (self.loader.register_program)(self.loader.context, &program) };
        if name == 0 {
            return Err(XrError::unavailable("the Vulkan device is closed").into());
        }
        table.name = name;
        self.modules.insert(name, modules);
        if table.pipelines.is_some() || table.recorder.is_some() {
            self.drawn.insert(name, drawn);
        }
        if let Some(pipelines) = &table.pipelines {
            self.graphics.insert(name, Arc::downgrade(pipelines));
        }
        let program = BuiltProgram {
            program: ProgramRef::program(name),
            constants: constant_table_box(table),
            warnings: RVec::new(),
        };
        Ok(Created { program, binaries })
    }

    fn create_objects(
        &self,
        context: &str,
        modules: &[StageModule],
        reflections: &[Reflection],
        bindings: &[LayoutBinding],
        ray_tracing_groups: Option<&Groups>,
        code: Code<'_>,
    ) -> Result<CreatedObjects, XrError> {
        let device = &self.device;
        let mut push_stages = vk::ShaderStageFlags::empty();
        let mut push_size = 0usize;
        let mut push_members = Vec::new();
        let mut block_specs: Vec<(usize, xr_spirv::reflect::Block)> = Vec::new();
        for (module, reflection) in modules.iter().zip(reflections) {
            for block in &reflection.uniform_blocks {
                let index = bindings
                    .iter()
                    .find(|b| b.set == block.set && b.binding == block.binding)
                    .and_then(|b| b.block)
                    .ok_or_else(|| XrError::driver(format!("{context}: uniform block '{}' lost", block.name)))?;
                // Every stage's declaration: each may name other members.
                block_specs.push((index, block.clone()));
            }
            for block in &reflection.push_constants {
                push_stages |= stage_flag(module.stage);
                push_size = push_size.max(block.size.unwrap_or(0));
                push_members.extend(block.members.iter().cloned());
            }
        }
        block_specs.sort_by_key(|(index, _)| *index);
        let mut entries = Vec::new();
        let mut add = |name: String, storage: Storage, member: &xr_spirv::reflect::BlockMember| {
            if let Some(layout) = member.layout
                && !entries.iter().any(|e: &Entry| e.info.name.as_str() == name)
            {
                entries.push(Entry { info: info(&name, &layout), storage, offset: member.offset, layout });
            }
        };
        for (index, block) in &block_specs {
            for member in &block.members {
                add(member.name.clone(), Storage::Uniform(*index), member);
            }
        }
        for member in &push_members {
            add(member.name.clone(), Storage::Push, member);
        }
        entries.sort_by(|a, b| a.info.name.cmp(&b.info.name));

        let set_count = bindings.iter().map(|b| b.set + 1).max().unwrap_or(0) as usize;
        let mut objects = ProgramObjects::default();
        let mut binding_table = [ShaderBindingRegion::default(); 4];
        let outputs = modules
            .iter()
            .zip(reflections)
            .find(|(m, _)| m.stage == ShaderStage::Fragment)
            .map(|(_, r)| r.outputs.as_slice())
            .unwrap_or_default();
        let written_attachments = pipelines::written_mask(outputs);
        let patch_control_points = pipelines::patch_size(modules)?.unwrap_or(0);
        let graphics = !modules.iter().any(|m| m.stage == ShaderStage::Compute) && ray_tracing_groups.is_none();
        // A program reading input attachments on a device without local
        // read is drawn only in the device's render pass (`pipeline_for`),
        // which shader objects cannot be drawn in.
        let in_render_pass_only =
            !self.loader.dynamic_rendering_local_read && bindings.iter().any(|b| b.input_attachment.is_some());
        let shader_objects = self.shader_objects.as_ref().filter(|_| graphics && !in_render_pass_only);
        // SAFETY: every create info below is valid and outlives its call;
        // each object goes into `objects` as soon as it exists, which
        // destroys them all if a later step fails.
        let result: Result<Option<Arc<GraphicsPipelines>>, XrError> = (|| unsafe {
            for set in 0..set_count as u32 {
                let in_set: Vec<&LayoutBinding> = bindings.iter().filter(|b| b.set == set).collect();
                let layout_bindings: Vec<vk::DescriptorSetLayoutBinding> = in_set
                    .iter()
                    .map(|b| {
                        vk::DescriptorSetLayoutBinding::default()
                            .binding(b.binding)
                            .descriptor_type(b.ty)
                            .descriptor_count(b.count)
                            .stage_flags(b.stages)
                    })
                    .collect();
                // Arrays of unknown size are partially bound: a program
                // reads the elements it was given, the rest may stay empty.
                let flags: Vec<vk::DescriptorBindingFlags> = in_set
                    .iter()
                    .map(|b| {
                        if b.partially_bound {
                            vk::DescriptorBindingFlags::PARTIALLY_BOUND
                        } else {
                            vk::DescriptorBindingFlags::empty()
                        }
                    })
                    .collect();
                let mut binding_flags = vk::DescriptorSetLayoutBindingFlagsCreateInfo::default().binding_flags(&flags);
                let mut layout_info = vk::DescriptorSetLayoutCreateInfo::default().bindings(&layout_bindings);
                if in_set.iter().any(|b| b.partially_bound) {
                    layout_info = layout_info.push_next(&mut binding_flags);
                }
                let set_layout = device
                    .create_descriptor_set_layout(&layout_info, None)
                    .map_err(vk_error("vkCreateDescriptorSetLayout"))?;
                objects.set_layouts.push(set_layout);
            }
            let range = vk::PushConstantRange::default().stage_flags(push_stages).offset(0).size(push_size as u32);
            let ranges: &[vk::PushConstantRange] = if push_size > 0 { std::slice::from_ref(&range) } else { &[] };
            let layout_info =
                vk::PipelineLayoutCreateInfo::default().set_layouts(&objects.set_layouts).push_constant_ranges(ranges);
            objects.layout =
                device.create_pipeline_layout(&layout_info, None).map_err(vk_error("vkCreatePipelineLayout"))?;
            if set_count > 0 {
                // The pool holds exactly the program's descriptors.
                let mut sizes: Vec<vk::DescriptorPoolSize> = Vec::new();
                for b in bindings {
                    match sizes.iter_mut().find(|s| s.ty == b.ty) {
                        Some(size) => size.descriptor_count += b.count,
                        None => sizes.push(vk::DescriptorPoolSize::default().ty(b.ty).descriptor_count(b.count)),
                    }
                }
                let mut pool_info = vk::DescriptorPoolCreateInfo::default().max_sets(set_count as u32);
                if !sizes.is_empty() {
                    pool_info = pool_info.pool_sizes(&sizes);
                }
                objects.pool =
                    device.create_descriptor_pool(&pool_info, None).map_err(vk_error("vkCreateDescriptorPool"))?;
                objects.sets = device
                    .allocate_descriptor_sets(
                        &vk::DescriptorSetAllocateInfo::default()
                            .descriptor_pool(objects.pool)
                            .set_layouts(&objects.set_layouts),
                    )
                    .map_err(vk_error("vkAllocateDescriptorSets"))?;
            }
            for layout_binding in bindings.iter().filter(|b| b.block.is_some()) {
                // As large as the largest stage's declaration of it.
                let size = (layout_binding.min_size as usize).max(16);
                let buffer = self.uniform_buffer(size)?;
                let (set, binding) = (layout_binding.set, layout_binding.binding);
                let info = [vk::DescriptorBufferInfo::default().buffer(buffer.buffer).offset(0).range(size as u64)];
                let write = vk::WriteDescriptorSet::default()
                    .dst_set(objects.sets[set as usize])
                    .dst_binding(binding)
                    .descriptor_type(vk::DescriptorType::UNIFORM_BUFFER)
                    .buffer_info(&info);
                device.update_descriptor_sets(&[write], &[]);
                objects.buffers.push(buffer);
            }
            if let Some(shader_objects) = shader_objects {
                match shader_objects.create(context, modules, &objects.set_layouts, ranges, code, self.counter.clone())
                {
                    Ok(shaders) => {
                        objects.shaders = Some(shaders);
                        return Ok(None);
                    }
                    Err(CreateError::Incompatible) => {
                        return Err(XrError::driver(format!(
                            "{context}: the driver refused the stored shader binaries (VK_INCOMPATIBLE_SHADER_BINARY_EXT)"
                        )));
                    }
                    Err(CreateError::Failed(e)) if matches!(code, Code::Binary(_)) => return Err(e),
                    // A driver may take a program as a pipeline and not as
                    // shader objects (lavapipe refuses a fragment stage that
                    // reads input attachments): it draws with pipelines.
                    Err(CreateError::Failed(e)) => {
                        tracing::info!("{e}: drawn with pipelines instead of shader objects");
                    }
                }
            }
            for module in modules {
                let info = vk::ShaderModuleCreateInfo::default().code(&module.words);
                objects
                    .modules
                    .push(device.create_shader_module(&info, None).map_err(vk_error("vkCreateShaderModule"))?);
            }
            if modules.iter().any(|m| m.stage == ShaderStage::Compute) {
                objects.pipeline = self.compute_pipeline(context, &modules[0], objects.modules[0], objects.layout)?;
                return Ok(None);
            }
            if let Some(groups) = ray_tracing_groups {
                // The capability check refused ray tracing stages on a device without them.
                let rt = self.ray_tracing.as_ref().ok_or_else(|| {
                    XrError::unavailable(format!("{context}: this device has no ray tracing pipelines"))
                })?;
                objects.pipeline =
                    rt.pipeline(context, modules, &objects.modules, groups, objects.layout, self.cache.cache)?;
                // Made at load, never at a draw: counted as compiled.
                self.counter.pipeline(&vk::PipelineCreationFeedback::default());
                let table = rt.binding_table(device, &self.memory, objects.pipeline, groups)?;
                objects.binding_table = Some((table.buffer, table.memory));
                binding_table = table.regions;
                return Ok(None);
            }
            let pipelines = GraphicsPipelines::new(
                device.clone(),
                context,
                modules,
                &objects.modules,
                objects.layout,
                outputs,
                (self.cache.cache, Arc::default()),
                self.counter.clone(),
            )?;
            let color = [vk::Format::from_raw(self.loader.color_format as i32)];
            let depth = vk::Format::from_raw(self.loader.depth_format as i32);
            if !in_render_pass_only {
                let dynamic = vk::RenderPass::null();
                objects.pipeline = pipelines.make(self.cache.cache, &color, None, false, dynamic)?;
                objects.depth_pipeline = pipelines.make(self.cache.cache, &color, Some(depth), false, dynamic)?;
            }
            Ok(Some(Arc::new(pipelines)))
        })();
        let pipelines = match result {
            Ok(pipelines) => pipelines,
            Err(e) => {
                // SAFETY: nothing uses the objects yet.
                unsafe { objects.destroy(device) };
                return Err(e);
            }
        };
        Ok(CreatedObjects {
            objects,
            entries,
            push: (push_stages, push_size),
            pipelines,
            binding_table,
            written_attachments,
            patch_control_points,
        })
    }

    fn compute_pipeline(
        &self,
        context: &str,
        module: &StageModule,
        shader: vk::ShaderModule,
        layout: vk::PipelineLayout,
    ) -> Result<vk::Pipeline, XrError> {
        let entry = CString::new(module.entry_point.as_str())
            .map_err(|_| XrError::invalid_input(format!("{context}: entry point with a NUL byte")))?;
        let (map, data) = pipelines::specialization(module);
        let specialization = vk::SpecializationInfo::default().map_entries(&map).data(&data);
        let mut stage = vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::COMPUTE)
            .module(shader)
            .name(&entry);
        if !module.specializations.is_empty() {
            stage = stage.specialization_info(&specialization);
        }
        let mut feedback = vk::PipelineCreationFeedback::default();
        let mut feedback_info =
            vk::PipelineCreationFeedbackCreateInfo::default().pipeline_creation_feedback(&mut feedback);
        let info = vk::ComputePipelineCreateInfo::default().stage(stage).layout(layout).push_next(&mut feedback_info);
        // SAFETY: every structure referenced by `info` lives until the call returns.
        let pipeline = unsafe { self.device.create_compute_pipelines(self.cache.cache, &[info], None) }
            .map(|pipelines| pipelines[0])
            .map_err(|(_, e)| XrError::driver(format!("{context}: vkCreateComputePipelines failed: {e}")))?;
        self.counter.pipeline(&feedback);
        Ok(pipeline)
    }

    fn uniform_buffer(&self, size: usize) -> Result<UniformBuffer, XrError> {
        let made = crate::host_buffer::host_buffer(
            &self.device,
            &self.memory,
            size as u64,
            vk::BufferUsageFlags::UNIFORM_BUFFER,
            false,
            "a uniform buffer",
        )?;
        Ok(UniformBuffer { buffer: made.buffer, memory: made.memory, mapped: made.mapped, size })
    }
}

impl AttachedBuildSystemBackend for AttachedVkSpirv {
    /// Device binaries (offline compiles kept by the driver) where the
    /// device has shader objects, as the GL build system's follow program
    /// binary formats.
    fn availability(&self) -> Result<Availability, XrError> {
        let offline = if self.shader_objects.is_some() { Availability::OFFLINE_COMPILE } else { Availability::NONE };
        Ok(Availability::RUNTIME_COMPILE | Availability::COMPATIBLE_OBJECT | offline)
    }

    fn build_program(&mut self, desc: &ProgramDesc, _options: &BuildOptions) -> Result<BuiltProgram, BuildError> {
        let modules = self.compile(desc)?;
        self.create(desc, modules)
    }

    fn content_key(&self, desc: &ProgramDesc, _options: &BuildOptions) -> Result<Vec<u8>, BuildError> {
        let modules = self.compile(desc)?;
        Ok(container::content_key(crate::NAME, env!("CARGO_PKG_VERSION"), &[], &modules))
    }

    fn program_binary(&self, program: ProgramRef) -> Result<ProgramBinary, XrError> {
        container::object_of(&self.modules, program)
    }

    fn load_program_binary(
        &mut self,
        desc: &ProgramDesc,
        _options: &BuildOptions,
        binary: &ProgramBinary,
    ) -> Result<BuiltProgram, BuildError> {
        let modules = container::from_object(binary, &format!("program '{}'", desc.name), crate::NAME)?;
        self.create(desc, modules)
    }

    fn create_pipeline(&mut self, _programs: &[ProgramRef]) -> Result<ProgramRef, XrError> {
        Err(XrError::invalid_input(
            "program pipelines are an OpenGL object: a Vulkan program already is a whole pipeline of its stages",
        ))
    }

    fn set_store(&mut self, root: &str) -> Result<(), XrError> {
        let store = Store::open(root).map_err(|e| XrError::new(xr_device::ErrorKind::Io, e.to_string()))?;
        self.device_open("the pipeline cache")?;
        if let Some(shader_objects) = &self.shader_objects {
            self.binaries = Some(ShaderBinaryCache::new(store.clone(), &self.capabilities, shader_objects.identity));
        }
        self.cache.load(&self.device, store, &self.capabilities)
    }

    fn load_artifact(&mut self, request: &ArtifactLoad) -> Result<LoadedArtifact, BuildError> {
        xr_spirv::offline::check_load(request, crate::NAME, &crate::LOADS)?;
        let context = format!("program '{}'", request.name);
        let desc = ProgramDesc::new(request.name.as_str(), []);
        match request.path {
            LoadPath::DeviceBinary => return self.load_device_binary(request, &desc, &context),
            LoadPath::CompatibleObject => return self.load_compatible_object(request, &desc, &context),
            LoadPath::Source => {}
        }
        // Stored sources, compiled for Vulkan here, overrides as specialization constants.
        let bundle =
            SourceBundle::decode(&request.artifact).map_err(|e| XrError::invalid_input(format!("{context}: {e}")))?;
        let mut desc = bundle
            .program(xr_spirv::LANGUAGE_GLSL, &request.name, &[])
            .map_err(|e| XrError::invalid_input(format!("{context}: {e}")))?;
        for stage in desc.stages.iter_mut() {
            for value in request.overrides.iter() {
                stage.specializations.retain(|s| s.id != value.id);
                stage.specializations.push(Specialization { id: value.id, bits: value.bits });
            }
        }
        let modules = self.compile(&desc)?;
        let program = self.create(&desc, modules)?;
        Ok(LoadedArtifact { program, note: "built from the stored sources".into() })
    }

    fn draw_states(&self, program: ProgramRef) -> Result<Vec<String>, XrError> {
        let Some(drawn) = self.drawn.get(&program.name) else { return Ok(Vec::new()) };
        let drawn = drawn.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        Ok(drawn.iter().map(DrawState::to_string).collect())
    }

    fn warm_draw_states(&mut self, program: ProgramRef, states: &[String]) -> Result<u32, XrError> {
        let states: Vec<DrawState> =
            states.iter().map(|s| s.parse()).collect::<Result<_, String>>().map_err(XrError::invalid_input)?;
        // Shader objects, compute and ray tracing programs make nothing at a draw.
        match self.graphics.get(&program.name).and_then(Weak::upgrade) {
            Some(pipelines) => {
                self.device_open("a warm")?;
                pipelines.warm(&states)
            }
            None => Ok(0),
        }
    }

    fn counters(&self) -> Result<Vec<DeviceCounter>, XrError> {
        Ok(self.counter.counters())
    }
}

impl AttachedVkSpirv {
    /// Loads a program from the driver's binaries of its stages, stored by
    /// an earlier load: an error saying why where there are none this
    /// driver takes (the library then loads the SPIR-V object).
    fn load_device_binary(
        &mut self,
        request: &ArtifactLoad,
        desc: &ProgramDesc,
        context: &str,
    ) -> Result<LoadedArtifact, BuildError> {
        if self.shader_objects.is_none() {
            return Err(XrError::unavailable(format!(
                "this device ({}) gives no shader binaries back (no VK_EXT_shader_object)",
                self.capabilities.renderer
            ))
            .into());
        }
        let cache = self
            .binaries
            .as_ref()
            .ok_or_else(|| XrError::unavailable("no store was given to keep shader binaries in"))?;
        let key = cache.key(request);
        let binaries = match cache.load(&key) {
            Ok(Some(binaries)) => binaries,
            Ok(None) => return Err(XrError::unavailable("no shader binary of this driver yet").into()),
            Err(why) => return Err(XrError::driver(why).into()),
        };
        // The SPIR-V still gives the layouts and the constant table.
        let modules = xr_spirv::offline::specialized_modules(&request.artifact, &request.overrides, context)?;
        let created = self.create_from(desc, modules, Code::Binary(&binaries), false)?;
        tracing::info!(program = request.name.as_str(), %key, "loaded the stored shader binaries");
        Ok(LoadedArtifact { program: created.program, note: "the driver's stored shader binaries".into() })
    }

    /// Loads a program from its SPIR-V object; on a device with shader
    /// objects and a store, the driver's binaries of its stages are
    /// written back for the next load.
    fn load_compatible_object(
        &mut self,
        request: &ArtifactLoad,
        desc: &ProgramDesc,
        context: &str,
    ) -> Result<LoadedArtifact, BuildError> {
        let modules = xr_spirv::offline::specialized_modules(&request.artifact, &request.overrides, context)?;
        let keep = self.binaries.is_some();
        let created = self.create_from(desc, modules, Code::Spirv, keep)?;
        let note = match (created.binaries, &self.binaries) {
            (Some(Ok(binaries)), Some(cache)) => match cache.write(&cache.key(request), &request.name, &binaries) {
                Ok(_) => "shader binaries written back to the store".to_owned(),
                Err(e) => {
                    tracing::warn!(program = request.name.as_str(), "shader binaries not stored: {e}");
                    format!("shader binaries not stored: {e}")
                }
            },
            (Some(Err(e)), _) => format!("the driver gave no shader binaries back: {e}"),
            _ => String::new(),
        };
        Ok(LoadedArtifact { program: created.program, note: note.into() })
    }
}

impl Drop for AttachedVkSpirv {
    fn drop(&mut self) {
        // SAFETY: as in `new`: `is_open` takes any context, and a closed
        // device answers false, so the cache is only closed on a live device.
        if unsafe { (self.loader.is_open)(self.loader.context) } {
            self.cache.close(&self.device);
        }
    }
}
