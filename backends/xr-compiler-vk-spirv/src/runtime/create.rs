//! Making a program on the device: its checks run, its layouts, descriptor
//! sets, uniform buffers and pipelines (or shader objects) made, its
//! constant table built, and the program registered with the device.

use super::{AttachedVkSpirv, Created};
use crate::{
    constant_table::{Entry, ProgramObjects, ResourceEntry, Storage, UniformBuffer, VkConstantTable, info},
    layout::{self, LayoutBinding, stage_flag},
    pipelines::{self, DrawState, GraphicsPipelines, PipelineSource, StateRecorder},
    ray_tracing::Groups,
    shader_objects::{Code, CreateError, ShaderObjectDevice},
};
use abi_stable::std_types::RVec;
use ash::vk::{self, Handle};
use std::{
    collections::BTreeSet,
    ffi::CString,
    sync::{Arc, Mutex},
};
use xr_device::{InputAttachmentSlot, ProgramRef, ShaderBindingRegion, VulkanProgram, XrError};
use xr_plugin::constant_table_box;
use xr_sourcebuild::{BuildError, BuiltProgram, ProgramDesc, ResourceInfo, ShaderStage};
use xr_spirv::{container::StageModule, reflect::Reflection};

/// The device's `VulkanProgram::pipeline_for`.
type PipelineFor =
    unsafe extern "C" fn(*const std::ffi::c_void, *const u32, u32, u32, u64, bool) -> xr_device::PipelineAnswer;

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

fn vk_error(what: &str) -> impl Fn(vk::Result) -> XrError + '_ {
    move |e| XrError::driver(format!("{what} failed: {e}"))
}

impl AttachedVkSpirv {
    pub(super) fn create(&mut self, desc: &ProgramDesc, modules: Vec<StageModule>) -> Result<BuiltProgram, BuildError> {
        Ok(self.create_from(desc, modules, Code::Spirv, false)?.program)
    }

    /// Makes a program of `modules` on the device, its stages from `code`
    /// where it is made of shader objects; with `want_binaries`, the
    /// driver's binaries of those stages come back too.
    pub(super) fn create_from(
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
            settle: table.pipelines.as_ref().map(|_| pipelines::settle as unsafe extern "C" fn(_)),
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
        let (entries, (push_stages, push_size)) = Self::constant_entries(context, modules, reflections, bindings)?;
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
        // Each object goes into `objects` as soon as it exists, which
        // destroys them all if a later step fails.
        let result: Result<Option<Arc<GraphicsPipelines>>, XrError> = (|| {
            self.create_set_layouts(bindings, set_count, &mut objects)?;
            let range = vk::PushConstantRange::default().stage_flags(push_stages).offset(0).size(push_size as u32);
            let ranges: &[vk::PushConstantRange] = if push_size > 0 { std::slice::from_ref(&range) } else { &[] };
            self.create_pipeline_layout(ranges, &mut objects)?;
            if set_count > 0 {
                self.allocate_descriptor_sets(bindings, set_count, &mut objects)?;
            }
            self.bind_uniform_buffers(bindings, &mut objects)?;
            if let Some(shader_objects) = shader_objects
                && self.create_shader_objects(shader_objects, context, modules, ranges, code, &mut objects)?
            {
                return Ok(None);
            }
            self.create_shader_modules(modules, &mut objects)?;
            if modules.iter().any(|m| m.stage == ShaderStage::Compute) {
                objects.pipeline = self.compute_pipeline(context, &modules[0], objects.modules[0], objects.layout)?;
                return Ok(None);
            }
            if let Some(groups) = ray_tracing_groups {
                binding_table = self.create_ray_tracing_pipeline(context, modules, groups, &mut objects)?;
                return Ok(None);
            }
            let pipelines =
                self.create_graphics_pipelines(context, modules, outputs, in_render_pass_only, &mut objects)?;
            Ok(Some(pipelines))
        })();
        let pipelines = match result {
            Ok(pipelines) => pipelines,
            Err(e) => {
                // SAFETY: nothing uses the objects yet.
                unsafe { objects.destroy(&self.device) };
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

    /// The constants of a program's uniform blocks and push constants,
    /// sorted by name (a member every stage declares once), and the stages
    /// that see push constants with their size.
    fn constant_entries(
        context: &str,
        modules: &[StageModule],
        reflections: &[Reflection],
        bindings: &[LayoutBinding],
    ) -> Result<(Vec<Entry>, (vk::ShaderStageFlags, usize)), XrError> {
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
        Ok((entries, (push_stages, push_size)))
    }

    /// One descriptor set layout per set up to the highest `bindings`
    /// names, into `objects`.
    fn create_set_layouts(
        &self,
        bindings: &[LayoutBinding],
        set_count: usize,
        objects: &mut ProgramObjects,
    ) -> Result<(), XrError> {
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
            // SAFETY: the create info is valid and outlives the call.
            let set_layout = unsafe { self.device.create_descriptor_set_layout(&layout_info, None) }
                .map_err(vk_error("vkCreateDescriptorSetLayout"))?;
            objects.set_layouts.push(set_layout);
        }
        Ok(())
    }

    /// The pipeline layout of `objects`' set layouts and the push constant
    /// `ranges`, into `objects`.
    fn create_pipeline_layout(
        &self,
        ranges: &[vk::PushConstantRange],
        objects: &mut ProgramObjects,
    ) -> Result<(), XrError> {
        let layout_info =
            vk::PipelineLayoutCreateInfo::default().set_layouts(&objects.set_layouts).push_constant_ranges(ranges);
        // SAFETY: the create info is valid and outlives the call.
        objects.layout = unsafe { self.device.create_pipeline_layout(&layout_info, None) }
            .map_err(vk_error("vkCreatePipelineLayout"))?;
        Ok(())
    }

    /// The program's descriptor pool and its `set_count` sets, into `objects`.
    fn allocate_descriptor_sets(
        &self,
        bindings: &[LayoutBinding],
        set_count: usize,
        objects: &mut ProgramObjects,
    ) -> Result<(), XrError> {
        let device = &self.device;
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
        // SAFETY: the create and allocate infos are valid and outlive their
        // calls; the set layouts are `objects`' own.
        unsafe {
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
        Ok(())
    }

    /// A uniform buffer for each uniform block in `bindings`, written into
    /// its descriptor, into `objects`.
    fn bind_uniform_buffers(&self, bindings: &[LayoutBinding], objects: &mut ProgramObjects) -> Result<(), XrError> {
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
            // SAFETY: the set is `objects`' own and no submission uses it
            // yet; the write and its buffer info outlive the call.
            unsafe { self.device.update_descriptor_sets(&[write], &[]) };
            objects.buffers.push(buffer);
        }
        Ok(())
    }

    /// The program's stages as shader objects, into `objects`: whether
    /// they were made (where the driver refuses them, the program is
    /// drawn with pipelines instead, unless they come from binaries).
    fn create_shader_objects(
        &self,
        shader_objects: &ShaderObjectDevice,
        context: &str,
        modules: &[StageModule],
        ranges: &[vk::PushConstantRange],
        code: Code<'_>,
        objects: &mut ProgramObjects,
    ) -> Result<bool, XrError> {
        match shader_objects.create(context, modules, &objects.set_layouts, ranges, code, self.counter.clone()) {
            Ok(shaders) => {
                objects.shaders = Some(shaders);
                Ok(true)
            }
            Err(CreateError::Incompatible) => Err(XrError::driver(format!(
                "{context}: the driver refused the stored shader binaries (VK_INCOMPATIBLE_SHADER_BINARY_EXT)"
            ))),
            Err(CreateError::Failed(e)) if matches!(code, Code::Binary(_)) => Err(e),
            // A driver may take a program as a pipeline and not as
            // shader objects (lavapipe refuses a fragment stage that
            // reads input attachments): it draws with pipelines.
            Err(CreateError::Failed(e)) => {
                tracing::info!("{e}: drawn with pipelines instead of shader objects");
                Ok(false)
            }
        }
    }

    /// A shader module of each stage, into `objects`.
    fn create_shader_modules(&self, modules: &[StageModule], objects: &mut ProgramObjects) -> Result<(), XrError> {
        for module in modules {
            let info = vk::ShaderModuleCreateInfo::default().code(&module.words);
            // SAFETY: the create info is valid and outlives the call.
            let shader =
                unsafe { self.device.create_shader_module(&info, None) }.map_err(vk_error("vkCreateShaderModule"))?;
            objects.modules.push(shader);
        }
        Ok(())
    }

    /// A ray tracing program's pipeline and shader binding table, into
    /// `objects`; returns the table's regions.
    fn create_ray_tracing_pipeline(
        &self,
        context: &str,
        modules: &[StageModule],
        groups: &Groups,
        objects: &mut ProgramObjects,
    ) -> Result<[ShaderBindingRegion; 4], XrError> {
        // The capability check refused ray tracing stages on a device without them.
        let rt = self
            .ray_tracing
            .as_ref()
            .ok_or_else(|| XrError::unavailable(format!("{context}: this device has no ray tracing pipelines")))?;
        objects.pipeline = rt.pipeline(context, modules, &objects.modules, groups, objects.layout, self.cache.cache)?;
        // Made at load, never at a draw: counted as compiled.
        self.counter.pipeline(&vk::PipelineCreationFeedback::default());
        let table = rt.binding_table(&self.device, &self.memory, objects.pipeline, groups)?;
        objects.binding_table = Some((table.buffer, table.memory));
        Ok(table.regions)
    }

    /// What a graphics program's pipelines are made from; and, unless it
    /// is drawn only in the device's render pass, its pipelines for the
    /// device's own targets (with and without depth), into `objects`.
    fn create_graphics_pipelines(
        &self,
        context: &str,
        modules: &[StageModule],
        outputs: &[xr_spirv::reflect::InterfaceVariable],
        in_render_pass_only: bool,
        objects: &mut ProgramObjects,
    ) -> Result<Arc<GraphicsPipelines>, XrError> {
        let source = PipelineSource {
            modules,
            shader_modules: &objects.modules,
            layout: objects.layout,
            outputs,
            // A program drawn in the device's render pass has no draw state to link for.
            libraries: self.pipeline_libraries && !in_render_pass_only,
        };
        let pipelines = GraphicsPipelines::new(
            self.device.clone(),
            context,
            source,
            (self.cache.cache, Arc::default()),
            self.counter.clone(),
        )?;
        let color = [vk::Format::from_raw(self.loader.color_format as i32)];
        let depth = vk::Format::from_raw(self.loader.depth_format as i32);
        if !in_render_pass_only {
            let dynamic = vk::RenderPass::null();
            let own = (|| {
                objects.pipeline = pipelines.make(self.cache.cache, &color, None, false, dynamic)?;
                objects.depth_pipeline = pipelines.make(self.cache.cache, &color, Some(depth), false, dynamic)?;
                Ok(())
            })();
            if let Err(e) = own {
                // SAFETY: nothing uses the libraries yet (`objects` holds the pipelines made).
                unsafe { pipelines.destroy() };
                return Err(e);
            }
        }
        Ok(pipelines)
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
