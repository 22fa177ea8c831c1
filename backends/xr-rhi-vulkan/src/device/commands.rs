//! Recording and submitting commands: one-shot submissions waited for,
//! layout transitions and barriers, the render passes of programs that
//! read input attachments, and clears.

use super::{
    DEPTH_FORMAT, RenderPassShape, Target, VkDevice,
    resources::{color_range, depth_range},
    vk_error,
};
use ash::vk;
use xr_device::{RenderTargetId, XrError};

impl VkDevice {
    /// Records with `record`, submits, and waits.
    pub(super) fn submit(&self, what: &str, record: impl FnOnce(vk::CommandBuffer)) -> Result<(), XrError> {
        self.submit_with(what, &[], &[], record)
    }

    /// Records with `record`, submits after the `waits` semaphores (each
    /// before the stage with it), signals `signals`, and waits.
    fn submit_with(
        &self,
        what: &str,
        waits: &[(vk::Semaphore, vk::PipelineStageFlags)],
        signals: &[vk::Semaphore],
        record: impl FnOnce(vk::CommandBuffer),
    ) -> Result<(), XrError> {
        self.record_and_submit(waits, signals, record)?;
        self.check_validation(what)
    }

    /// Records, submits and waits, without looking at validation messages.
    pub(super) fn record_and_submit(
        &self,
        waits: &[(vk::Semaphore, vk::PipelineStageFlags)],
        signals: &[vk::Semaphore],
        record: impl FnOnce(vk::CommandBuffer),
    ) -> Result<(), XrError> {
        let device = &self.context.device;
        let info = vk::CommandBufferAllocateInfo::default()
            .command_pool(self.pool)
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(1);
        // SAFETY: one-shot command buffer on this device's queue, waited for before it is freed.
        unsafe {
            let cb = device.allocate_command_buffers(&info).map_err(vk_error("vkAllocateCommandBuffers"))?[0];
            let begin = vk::CommandBufferBeginInfo::default().flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
            let result = (|| {
                device.begin_command_buffer(cb, &begin).map_err(vk_error("vkBeginCommandBuffer"))?;
                record(cb);
                device.end_command_buffer(cb).map_err(vk_error("vkEndCommandBuffer"))?;
                let buffers = [cb];
                let wait_semaphores: Vec<vk::Semaphore> = waits.iter().map(|(s, _)| *s).collect();
                let wait_stages: Vec<vk::PipelineStageFlags> = waits.iter().map(|(_, stage)| *stage).collect();
                let submit = [vk::SubmitInfo::default()
                    .command_buffers(&buffers)
                    .wait_semaphores(&wait_semaphores)
                    .wait_dst_stage_mask(&wait_stages)
                    .signal_semaphores(signals)];
                device
                    .queue_submit(self.context.queue, &submit, vk::Fence::null())
                    .map_err(vk_error("vkQueueSubmit"))?;
                device.queue_wait_idle(self.context.queue).map_err(vk_error("vkQueueWaitIdle"))
            })();
            device.free_command_buffers(self.pool, &[cb]);
            result
        }
    }

    /// Moves colour attachment 0 (what is read back and presented) to `to`.
    pub(super) fn transition(&self, cb: vk::CommandBuffer, target: &Target, to: vk::ImageLayout) {
        self.transition_image(cb, target.colors[0].image, target.colors[0].layout, to);
    }

    /// The render pass and framebuffer a draw into `target` (at `index`)
    /// with a program reading the input attachments `inputs` uses where the
    /// device cannot read them within dynamic rendering: one subpass whose
    /// colour attachments are the target's, all in `GENERAL`, input
    /// attachment `i` reading colour attachment `i` (as local read maps
    /// them), and the depth attachment. Both are made once and kept.
    pub(super) fn render_pass(
        &self,
        index: usize,
        target: &Target,
        inputs: &[(xr_device::InputAttachmentSlot, vk::DescriptorImageInfo)],
    ) -> Result<(vk::RenderPass, vk::Framebuffer), XrError> {
        let device = &self.context.device;
        let mut read: Vec<u32> = inputs.iter().map(|(slot, _)| slot.attachment).collect();
        read.sort_unstable();
        read.dedup();
        let shape = RenderPassShape { colors: target.formats(), depth: target.depth.is_some(), inputs: read };
        let mut passes = self.render_passes.borrow_mut();
        let render_pass = match passes.get(&shape) {
            Some(pass) => *pass,
            None => {
                let mut attachments: Vec<vk::AttachmentDescription> = target
                    .colors
                    .iter()
                    .map(|color| {
                        vk::AttachmentDescription::default()
                            .format(color.format)
                            .samples(vk::SampleCountFlags::TYPE_1)
                            .load_op(vk::AttachmentLoadOp::LOAD)
                            .store_op(vk::AttachmentStoreOp::STORE)
                            .stencil_load_op(vk::AttachmentLoadOp::DONT_CARE)
                            .stencil_store_op(vk::AttachmentStoreOp::DONT_CARE)
                            .initial_layout(vk::ImageLayout::GENERAL)
                            .final_layout(vk::ImageLayout::GENERAL)
                    })
                    .collect();
                let colors: Vec<vk::AttachmentReference> = (0..target.colors.len() as u32)
                    .map(|i| vk::AttachmentReference { attachment: i, layout: vk::ImageLayout::GENERAL })
                    .collect();
                let last = shape.inputs.last().copied().unwrap_or(0);
                let input_refs: Vec<vk::AttachmentReference> = (0..=last)
                    .map(|i| vk::AttachmentReference {
                        attachment: if shape.inputs.contains(&i) { i } else { vk::ATTACHMENT_UNUSED },
                        layout: vk::ImageLayout::GENERAL,
                    })
                    .collect();
                let depth = vk::AttachmentReference {
                    attachment: attachments.len() as u32,
                    layout: vk::ImageLayout::DEPTH_ATTACHMENT_OPTIMAL,
                };
                if shape.depth {
                    attachments.push(
                        vk::AttachmentDescription::default()
                            .format(DEPTH_FORMAT)
                            .samples(vk::SampleCountFlags::TYPE_1)
                            .load_op(vk::AttachmentLoadOp::LOAD)
                            .store_op(vk::AttachmentStoreOp::STORE)
                            .stencil_load_op(vk::AttachmentLoadOp::DONT_CARE)
                            .stencil_store_op(vk::AttachmentStoreOp::DONT_CARE)
                            .initial_layout(vk::ImageLayout::DEPTH_ATTACHMENT_OPTIMAL)
                            .final_layout(vk::ImageLayout::DEPTH_ATTACHMENT_OPTIMAL),
                    );
                }
                let mut subpass = vk::SubpassDescription::default()
                    .pipeline_bind_point(vk::PipelineBindPoint::GRAPHICS)
                    .color_attachments(&colors)
                    .input_attachments(&input_refs);
                if shape.depth {
                    subpass = subpass.depth_stencil_attachment(&depth);
                }
                let subpasses = [subpass];
                let info = vk::RenderPassCreateInfo::default().attachments(&attachments).subpasses(&subpasses);
                // SAFETY: a valid create info whose arrays live across the call.
                let pass = unsafe { device.create_render_pass(&info, None) }.map_err(vk_error("vkCreateRenderPass"))?;
                passes.insert(shape, pass);
                pass
            }
        };
        let mut framebuffers = self.framebuffers.borrow_mut();
        if let Some(framebuffer) = framebuffers.get(&(index, render_pass)) {
            return Ok((render_pass, *framebuffer));
        }
        let views: Vec<vk::ImageView> =
            target.colors.iter().chain(target.depth.as_ref()).map(|attachment| attachment.view).collect();
        let info = vk::FramebufferCreateInfo::default()
            .render_pass(render_pass)
            .attachments(&views)
            .width(target.width)
            .height(target.height)
            .layers(1);
        // SAFETY: the views are the target's, alive as long as the device; the render pass is compatible.
        let framebuffer = unsafe { device.create_framebuffer(&info, None) }.map_err(vk_error("vkCreateFramebuffer"))?;
        framebuffers.insert((index, render_pass), framebuffer);
        Ok((render_pass, framebuffer))
    }

    /// Makes every write recorded so far visible to every later read, on
    /// the device and the host: what a draw or clear wrote into an
    /// attachment that is also a texture, for the next draw sampling it or
    /// a read back (which record no barrier of their own for textures).
    pub(super) fn writes_visible(&self, cb: vk::CommandBuffer) {
        let barrier = vk::MemoryBarrier::default()
            .src_access_mask(vk::AccessFlags::MEMORY_WRITE)
            .dst_access_mask(vk::AccessFlags::MEMORY_READ | vk::AccessFlags::MEMORY_WRITE | vk::AccessFlags::HOST_READ);
        // SAFETY: recording into a command buffer in the recording state.
        unsafe {
            self.context.device.cmd_pipeline_barrier(
                cb,
                vk::PipelineStageFlags::ALL_COMMANDS,
                vk::PipelineStageFlags::ALL_COMMANDS | vk::PipelineStageFlags::HOST,
                vk::DependencyFlags::empty(),
                &[barrier],
                &[],
                &[],
            );
        }
    }

    /// What shaders at `stage` wrote, visible to every later use, on the
    /// device and the host (after a dispatch or a ray launch).
    pub(super) fn shader_writes_visible(&self, cb: vk::CommandBuffer, stage: vk::PipelineStageFlags) {
        let barrier = vk::MemoryBarrier::default()
            .src_access_mask(vk::AccessFlags::SHADER_WRITE)
            .dst_access_mask(vk::AccessFlags::MEMORY_READ | vk::AccessFlags::MEMORY_WRITE | vk::AccessFlags::HOST_READ);
        // SAFETY: recording into a command buffer in the recording state.
        unsafe {
            self.context.device.cmd_pipeline_barrier(
                cb,
                stage,
                vk::PipelineStageFlags::ALL_COMMANDS | vk::PipelineStageFlags::HOST,
                vk::DependencyFlags::empty(),
                &[barrier],
                &[],
                &[],
            );
        }
    }

    /// Moves every colour attachment to `to`; also a barrier between two
    /// uses in one layout (a draw reading what the one before wrote).
    pub(super) fn transition_colors(&self, cb: vk::CommandBuffer, target: &Target, to: vk::ImageLayout) {
        for color in &target.colors {
            self.transition_image(cb, color.image, color.layout, to);
        }
    }

    pub(super) fn transition_image(
        &self,
        cb: vk::CommandBuffer,
        image: vk::Image,
        from: vk::ImageLayout,
        to: vk::ImageLayout,
    ) {
        self.barrier(cb, image, from, to, color_range());
    }

    pub(super) fn barrier(
        &self,
        cb: vk::CommandBuffer,
        image: vk::Image,
        from: vk::ImageLayout,
        to: vk::ImageLayout,
        range: vk::ImageSubresourceRange,
    ) {
        let barrier = vk::ImageMemoryBarrier::default()
            .old_layout(from)
            .new_layout(to)
            .src_access_mask(vk::AccessFlags::MEMORY_WRITE)
            .dst_access_mask(vk::AccessFlags::MEMORY_READ | vk::AccessFlags::MEMORY_WRITE)
            .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .image(image)
            .subresource_range(range);
        // SAFETY: recording into a command buffer in the recording state.
        unsafe {
            self.context.device.cmd_pipeline_barrier(
                cb,
                vk::PipelineStageFlags::ALL_COMMANDS,
                vk::PipelineStageFlags::ALL_COMMANDS,
                vk::DependencyFlags::empty(),
                &[],
                &[],
                &[barrier],
            );
        }
    }

    /// `DeviceBackend::clear`: clears every attachment of a target.
    pub(super) fn clear_target(&mut self, id: RenderTargetId, rgba: &[f32; 4]) -> Result<(), XrError> {
        let index = self.target_index(id)?;
        let target = &self.targets[index];
        // A target whose attachments are textures stays in GENERAL (clears accept it).
        let layout = if target.textures { vk::ImageLayout::GENERAL } else { vk::ImageLayout::TRANSFER_DST_OPTIMAL };
        self.submit("clearing", |cb| {
            self.transition_colors(cb, target, layout);
            let color = vk::ClearColorValue { float32: *rgba };
            for attachment in &target.colors {
                // SAFETY: recording; the image is in `layout`.
                unsafe {
                    self.context.device.cmd_clear_color_image(cb, attachment.image, layout, &color, &[color_range()]);
                }
            }
            if let Some(depth) = &target.depth {
                self.barrier(cb, depth.image, depth.layout, vk::ImageLayout::TRANSFER_DST_OPTIMAL, depth_range());
                let value = vk::ClearDepthStencilValue { depth: 1.0, stencil: 0 };
                // SAFETY: recording; the depth image is in TRANSFER_DST_OPTIMAL.
                unsafe {
                    self.context.device.cmd_clear_depth_stencil_image(
                        cb,
                        depth.image,
                        vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                        &value,
                        &[depth_range()],
                    );
                }
            }
            if target.textures {
                self.writes_visible(cb);
            }
        })?;
        let target = &mut self.targets[index];
        target.colors.iter_mut().for_each(|c| c.layout = layout);
        if let Some(depth) = target.depth.as_mut() {
            depth.layout = vk::ImageLayout::TRANSFER_DST_OPTIMAL;
        }
        Ok(())
    }
}
