//! Draws: what a draw names checked, its program's state and input
//! attachments, the pipeline it binds, and its rendering recorded.

use super::{
    CheckedDraw, DEPTH_FORMAT, Rendering, Target, VkDevice, mask_unwritten, resources::depth_range, shader_objects,
};
use ash::vk::{self, Handle};
use xr_device::{
    DrawCall, MeshDrawCall, ProgramKind, Readiness, RenderTargetId, VertexLayout, VulkanProgram, XrError, checks,
};

impl VkDevice {
    /// A registered program, checked to be drawable: every resource bound.
    pub(super) fn program(&self, program: xr_device::ProgramRef) -> Result<VulkanProgram, XrError> {
        if program.kind != ProgramKind::Program {
            return Err(XrError::invalid_input("Vulkan draws with programs; program pipelines are an OpenGL object"));
        }
        let registered = self
            .shared
            .programs
            .lock()
            .map_err(|_| XrError::driver("program table poisoned"))?
            .get(&program.name)
            .copied()
            .ok_or_else(|| {
                XrError::invalid_input(format!("{} is not a program registered with this device", program.name))
            })?;
        // SAFETY: the build system keeps the count alive while the program is registered.
        let unbound = if registered.unbound.is_null() { 0 } else { unsafe { *registered.unbound } };
        checks::check_bound(program.name, unbound)?;
        Ok(registered)
    }

    /// Binds a program's descriptor sets and push constants at `bind_point`.
    pub(super) fn bind_program_state(
        &self,
        cb: vk::CommandBuffer,
        program: &VulkanProgram,
        bind_point: vk::PipelineBindPoint,
    ) {
        let device = &self.context.device;
        let layout = vk::PipelineLayout::from_raw(program.layout);
        // SAFETY: the build system keeps both arrays alive while the program is registered.
        let (sets, push) = unsafe {
            let sets: Vec<vk::DescriptorSet> = if program.descriptor_sets.is_null() {
                Vec::new()
            } else {
                std::slice::from_raw_parts(program.descriptor_sets, program.descriptor_set_count as usize)
                    .iter()
                    .map(|s| vk::DescriptorSet::from_raw(*s))
                    .collect()
            };
            let push = if program.push_constants.is_null() || program.push_constants_len == 0 {
                &[][..]
            } else {
                std::slice::from_raw_parts(program.push_constants, program.push_constants_len as usize)
            };
            (sets, push)
        };
        // SAFETY: recording; every handle belongs to this device.
        unsafe {
            if !sets.is_empty() {
                device.cmd_bind_descriptor_sets(cb, bind_point, layout, 0, &sets, &[]);
            }
            if !push.is_empty() {
                device.cmd_push_constants(
                    cb,
                    layout,
                    vk::ShaderStageFlags::from_raw(program.push_constant_stages),
                    0,
                    push,
                );
            }
        }
    }

    /// What a draw writes into its program's input attachments: each
    /// reads the colour attachment of `target` its index names. An error
    /// when the target does not have it.
    pub(super) fn input_attachment_writes(
        &self,
        program: &VulkanProgram,
        (program_name, target_id): (u32, RenderTargetId),
        target: &Target,
    ) -> Result<Vec<(xr_device::InputAttachmentSlot, vk::DescriptorImageInfo)>, XrError> {
        let slots = if program.input_attachments.is_null() {
            &[][..]
        } else {
            // SAFETY: the build system keeps the slots alive while the program is registered.
            unsafe { std::slice::from_raw_parts(program.input_attachments, program.input_attachment_count as usize) }
        };
        if !slots.is_empty() && !target.textures {
            return Err(XrError::invalid_input(format!(
                "program {program_name} reads input attachments: draw it into a render target made with create_render_target_with, not render target {}",
                target_id.0
            )));
        }
        slots
            .iter()
            .map(|slot| {
                let color = target.colors.get(slot.attachment as usize).ok_or_else(|| {
                    XrError::invalid_input(format!(
                        "program {program_name} reads input attachment {}, but render target {} has {} colour attachment(s)",
                        slot.attachment,
                        target_id.0,
                        target.colors.len()
                    ))
                })?;
                let info =
                    vk::DescriptorImageInfo::default().image_view(color.view).image_layout(vk::ImageLayout::GENERAL);
                Ok((*slot, info))
            })
            .collect()
    }

    /// A registered program drawn with vertices ([`Self::program`]): an
    /// error for a compute, mesh or ray tracing program.
    pub(super) fn vertex_program(&self, name: xr_device::ProgramRef) -> Result<VulkanProgram, XrError> {
        let program = self.program(name)?;
        let refused = if program.compute {
            "a compute program: dispatch it"
        } else if program.mesh {
            "a mesh program: draw it with draw_mesh_tasks, without vertices"
        } else if program.ray_tracing {
            "a ray tracing program: launch it with trace_rays"
        } else {
            return Ok(program);
        };
        Err(XrError::invalid_input(format!("program {} is {refused}", name.name)))
    }

    /// Checks what a draw names before anything is recorded: its target,
    /// vertex buffer and index buffer exist and fit the draw, and its
    /// program is a drawable graphics program.
    pub(super) fn validate_draw<'a>(&'a self, draw: &'a DrawCall) -> Result<CheckedDraw<'a>, XrError> {
        let index = self.target_index(draw.target)?;
        let vertices = checks::find(&self.buffers, "vertex buffer", draw.vertex_buffer.0)?;
        let program = self.vertex_program(draw.program)?;
        let indices = match draw.index_buffer.into_option() {
            Some(id) => {
                let indices = self.data_buffer(id)?;
                checks::check_index_buffer(id, indices.usage, indices.size, draw.first_vertex, draw.vertex_count)?;
                Some(indices.buffer)
            }
            None => None,
        };
        let target = &self.targets[index];
        checks::check_depth_test(draw.target, draw.depth_test, target.depth.is_some())?;
        Ok(CheckedDraw { call: draw, index, target, vertices, program, indices })
    }

    /// The render pass (and framebuffer) a draw reading the input
    /// attachments `inputs` records in, where the device cannot read them
    /// within dynamic rendering; `None` for dynamic rendering.
    pub(super) fn render_pass_for_inputs(
        &self,
        index: usize,
        target: &Target,
        inputs: &[(xr_device::InputAttachmentSlot, vk::DescriptorImageInfo)],
    ) -> Result<Option<(vk::RenderPass, vk::Framebuffer)>, XrError> {
        if inputs.is_empty() || self.context.local_read {
            return Ok(None);
        }
        self.render_pass(index, target, inputs).map(Some)
    }

    /// The pipeline a draw binds: the program's own for a target of the
    /// device's colour format, otherwise one its build system makes for
    /// the target's formats (and render `pass`, if any): made now if it
    /// must be with `wait`, else the one it has or linked at once. An error
    /// where there is none (without `wait`: none yet, which a draw asks
    /// [`Self::draw_readiness`] about first).
    pub(super) fn pipeline_for_draw(
        &self,
        program: &VulkanProgram,
        (program_name, target_id): (u32, RenderTargetId),
        target: &Target,
        pass: Option<(vk::RenderPass, vk::Framebuffer)>,
        wait: bool,
    ) -> Result<vk::Pipeline, XrError> {
        if program.shader_object_count > 0 {
            // The build system makes shader objects only where the device
            // draws in no render pass of its own (it reads input
            // attachments within dynamic rendering, or they are none).
            if self.shader_objects.is_none() || pass.is_some() {
                return Err(XrError::invalid_input(format!(
                    "program {program_name} is made of shader objects, which this device cannot draw into render target {}",
                    target_id.0
                )));
            }
            // The build system hears of the formats drawn into (a usage log
            // records them, so that a warm draws into them); its answer is unused.
            if let Some(notice) = program.pipeline_for.filter(|_| mask_unwritten(target)) {
                let formats = target.formats();
                let depth_format = if target.depth.is_some() { DEPTH_FORMAT.as_raw() as u32 } else { 0 };
                // SAFETY: the build system keeps its context alive while the program is registered.
                unsafe {
                    notice(program.pipeline_context, formats.as_ptr(), formats.len() as u32, depth_format, 0, true)
                };
            }
            return Ok(vk::Pipeline::null());
        }
        let formats = target.formats();
        let pipeline = if !mask_unwritten(target) {
            if target.depth.is_some() { program.depth_pipeline } else { program.pipeline }
        } else {
            match self.ask_pipeline(program, target, pass, wait) {
                Some(answer) if answer.readiness == Readiness::Compiling => {
                    return Err(XrError::driver(format!(
                        "program {program_name} is still compiling for render target {}: ask readiness before a draw that does not wait",
                        target_id.0
                    )));
                }
                Some(answer) => answer.pipeline,
                None => 0,
            }
        };
        if pipeline == 0 {
            self.check_validation("making a pipeline")?;
            return Err(XrError::invalid_input(format!(
                "program {program_name} has no pipeline for render target {} ({} colour attachment(s){})",
                target_id.0,
                formats.len(),
                if target.depth.is_some() { " and depth" } else { "" }
            )));
        }
        Ok(vk::Pipeline::from_raw(pipeline))
    }

    /// Points the program's input attachment descriptors at the target's
    /// colour attachments they read.
    pub(super) fn write_input_attachments(&self, inputs: &[(xr_device::InputAttachmentSlot, vk::DescriptorImageInfo)]) {
        if inputs.is_empty() {
            return;
        }
        let writes: Vec<vk::WriteDescriptorSet> = inputs
            .iter()
            .map(|(slot, image)| {
                vk::WriteDescriptorSet::default()
                    .dst_set(vk::DescriptorSet::from_raw(slot.descriptor_set))
                    .dst_binding(slot.binding)
                    .dst_array_element(slot.array_element)
                    .descriptor_type(vk::DescriptorType::INPUT_ATTACHMENT)
                    .image_info(std::slice::from_ref(image))
            })
            .collect();
        // SAFETY: the sets are the program's (alive while registered);
        // no submission uses them (every one is waited for).
        unsafe { self.context.device.update_descriptor_sets(&writes, &[]) };
    }

    /// Records a checked draw with `pipeline`: the rendering around it
    /// ([`Self::record_rendering`]), its vertices bound and the triangles drawn.
    pub(super) fn record_draw(
        &self,
        cb: vk::CommandBuffer,
        checked: &CheckedDraw<'_>,
        pipeline: vk::Pipeline,
        pass: Option<(vk::RenderPass, vk::Framebuffer)>,
        color_layout: vk::ImageLayout,
    ) {
        let (device, draw) = (&self.context.device, checked.call);
        let (bindings, attributes) = vertex_input(&checked.vertices.layout);
        let rendering = Rendering { target: checked.target, pass, color_layout, depth_test: draw.depth_test };
        self.record_rendering(cb, &rendering, pipeline, &checked.program, |cb| {
            // SAFETY: recording, within the rendering begun; every handle belongs to this device.
            unsafe {
                self.vertex_input.cmd_set_vertex_input(cb, &bindings, &attributes);
                device.cmd_bind_vertex_buffers(cb, 0, &[checked.vertices.buffer], &[0]);
                match checked.indices {
                    Some(indices) => {
                        device.cmd_bind_index_buffer(cb, indices, 0, vk::IndexType::UINT32);
                        device.cmd_draw_indexed(cb, draw.vertex_count, 1, draw.first_vertex, 0, 0);
                    }
                    None => device.cmd_draw(cb, draw.vertex_count, 1, draw.first_vertex, 0),
                }
            }
        });
    }

    /// Records `commands` drawing with `pipeline` and `program` inside a
    /// rendering into all of a target: its attachments moved to their draw
    /// layouts (colour ones to `color_layout`), the rendering begun (in
    /// render `pass`, if any), viewport, scissor, depth state and the
    /// program's state set; then the rendering ended, and what it wrote
    /// made visible where the attachments are textures.
    fn record_rendering(
        &self,
        cb: vk::CommandBuffer,
        rendering: &Rendering<'_>,
        pipeline: vk::Pipeline,
        program: &VulkanProgram,
        commands: impl FnOnce(vk::CommandBuffer),
    ) {
        let (device, target) = (&self.context.device, rendering.target);
        self.transition_colors(cb, target, rendering.color_layout);
        let area = self.begin_draw_rendering(cb, target, rendering.pass, rendering.color_layout);
        // Negative height: +y is up in clip space, as in OpenGL, and row 0 is the top.
        let viewport = vk::Viewport {
            x: 0.0,
            y: target.height as f32,
            width: target.width as f32,
            height: -(target.height as f32),
            min_depth: 0.0,
            max_depth: 1.0,
        };
        match self.shader_objects.as_ref().filter(|_| pipeline == vk::Pipeline::null()) {
            Some(shader_objects) => {
                let state = shader_objects::DrawState {
                    program,
                    viewport,
                    area,
                    attachments: target.colors.len() as u32,
                    mask_unwritten: mask_unwritten(target),
                    depth: target.depth.as_ref().map(|_| rendering.depth_test),
                };
                // SAFETY: recording, within the rendering just begun; the
                // program is registered, so its shader objects are alive.
                unsafe { shader_objects.bind(device, cb, &state) };
            }
            // SAFETY: recording, within the rendering just begun; every handle belongs to this device.
            None => unsafe {
                device.cmd_bind_pipeline(cb, vk::PipelineBindPoint::GRAPHICS, pipeline);
                device.cmd_set_viewport(cb, 0, &[viewport]);
                device.cmd_set_scissor(cb, 0, &[area]);
                if target.depth.is_some() {
                    device.cmd_set_depth_test_enable(cb, rendering.depth_test);
                    device.cmd_set_depth_write_enable(cb, rendering.depth_test);
                }
            },
        }
        self.bind_program_state(cb, program, vk::PipelineBindPoint::GRAPHICS);
        commands(cb);
        // SAFETY: recording; ends the rendering begun above.
        unsafe {
            if rendering.pass.is_some() {
                device.cmd_end_render_pass(cb);
            } else {
                device.cmd_end_rendering(cb);
            }
        }
        if target.textures {
            self.writes_visible(cb);
        }
    }

    /// Begins rendering into all of `target`, its colour attachments in
    /// `color_layout` and its depth attachment moved to the depth
    /// attachment layout: in render `pass` where there is one, with
    /// dynamic rendering otherwise. Returns the area rendered.
    fn begin_draw_rendering(
        &self,
        cb: vk::CommandBuffer,
        target: &Target,
        pass: Option<(vk::RenderPass, vk::Framebuffer)>,
        color_layout: vk::ImageLayout,
    ) -> vk::Rect2D {
        let attachments: Vec<vk::RenderingAttachmentInfo> = target
            .colors
            .iter()
            .map(|color| {
                vk::RenderingAttachmentInfo::default()
                    .image_view(color.view)
                    .image_layout(color_layout)
                    .load_op(vk::AttachmentLoadOp::LOAD)
                    .store_op(vk::AttachmentStoreOp::STORE)
            })
            .collect();
        let depth_attachment = target.depth.as_ref().map(|depth| {
            self.barrier(cb, depth.image, depth.layout, vk::ImageLayout::DEPTH_ATTACHMENT_OPTIMAL, depth_range());
            vk::RenderingAttachmentInfo::default()
                .image_view(depth.view)
                .image_layout(vk::ImageLayout::DEPTH_ATTACHMENT_OPTIMAL)
                .load_op(vk::AttachmentLoadOp::LOAD)
                .store_op(vk::AttachmentStoreOp::STORE)
        });
        let area = vk::Rect2D {
            offset: vk::Offset2D::default(),
            extent: vk::Extent2D { width: target.width, height: target.height },
        };
        let device = &self.context.device;
        // SAFETY: recording; the attachments are the target's, in the
        // layouts named, and the render pass and framebuffer were made for it.
        unsafe {
            match pass {
                Some((render_pass, framebuffer)) => {
                    let begin = vk::RenderPassBeginInfo::default()
                        .render_pass(render_pass)
                        .framebuffer(framebuffer)
                        .render_area(area);
                    device.cmd_begin_render_pass(cb, &begin, vk::SubpassContents::INLINE);
                }
                None => {
                    let mut rendering =
                        vk::RenderingInfo::default().render_area(area).layer_count(1).color_attachments(&attachments);
                    if let Some(depth) = depth_attachment.as_ref() {
                        rendering = rendering.depth_attachment(depth);
                    }
                    device.cmd_begin_rendering(cb, &rendering);
                }
            }
        }
        area
    }

    /// `DeviceBackend::draw_mesh_tasks`: draws a mesh program into a target.
    pub(super) fn draw_mesh(&mut self, call: &MeshDrawCall) -> Result<(), XrError> {
        let Some(mesh_shader) = self.mesh_shader.as_ref() else {
            return Err(XrError::unavailable(format!(
                "this device ({}) has no mesh shaders (VK_EXT_mesh_shader)",
                self.context.renderer()
            )));
        };
        let index = self.target_index(call.target)?;
        let program = self.program(call.program)?;
        if !program.mesh {
            return Err(XrError::invalid_input(format!(
                "program {} is not a mesh program: draw it with vertices, or dispatch it",
                call.program.name
            )));
        }
        checks::check_mesh_groups(call.groups, self.mesh_group_limits)?;
        let target = &self.targets[index];
        checks::check_depth_test(call.target, call.depth_test, target.depth.is_some())?;
        let names = (call.program.name, call.target);
        let inputs = self.input_attachment_writes(&program, names, target)?;
        let pass = self.render_pass_for_inputs(index, target, &inputs)?;
        // A mesh draw has no policy of its own: it waits, as every draw did.
        let pipeline = self.pipeline_for_draw(&program, names, target, pass, true)?;
        self.write_input_attachments(&inputs);
        let color_layout = target.draw_layout();
        let rendering = Rendering { target, pass, color_layout, depth_test: call.depth_test };
        let [x, y, z] = call.groups;
        self.submit("drawing mesh tasks", |cb| {
            self.record_rendering(cb, &rendering, pipeline, &program, |cb| {
                // SAFETY: recording, within the rendering begun, with a mesh pipeline bound.
                unsafe { mesh_shader.cmd_draw_mesh_tasks(cb, x, y, z) }
            })
        })?;
        self.targets[index].drawn_into(color_layout);
        Ok(())
    }
}

/// The vertex input state of vertices laid out as `layout`: one binding,
/// each attribute a float vector of its components.
fn vertex_input(
    layout: &VertexLayout,
) -> ([vk::VertexInputBindingDescription2EXT<'static>; 1], Vec<vk::VertexInputAttributeDescription2EXT<'static>>) {
    let bindings = [vk::VertexInputBindingDescription2EXT::default()
        .binding(0)
        .stride(layout.stride * 4)
        .input_rate(vk::VertexInputRate::VERTEX)
        .divisor(1)];
    let attributes = layout
        .attributes
        .iter()
        .map(|a| {
            vk::VertexInputAttributeDescription2EXT::default()
                .location(a.location)
                .binding(0)
                .format(match a.components {
                    1 => vk::Format::R32_SFLOAT,
                    2 => vk::Format::R32G32_SFLOAT,
                    3 => vk::Format::R32G32B32_SFLOAT,
                    _ => vk::Format::R32G32B32A32_SFLOAT,
                })
                .offset(a.offset * 4)
        })
        .collect();
    (bindings, attributes)
}
