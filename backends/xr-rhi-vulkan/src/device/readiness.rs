//! Draws that never wait: what a draw binds when its program has no
//! pipeline for the draw's target yet.
//!
//! A program's pipelines for the device's own target are made when it
//! loads; a target of other formats needs one made for them, which the
//! program's build system makes when asked (`VulkanProgram::pipeline_for`).
//! A draw under `NotReady::Wait` asks it to wait, as every draw did: the
//! frame stalls while the driver compiles. Under `Skip` or `Fallback` the
//! draw asks without waiting: the build system links a pipeline at once
//! from the program's graphics pipeline libraries (`Linked`, drawable) or
//! starts a whole compile on another thread (`Compiling`), and
//! [`xr_device::decide`] chooses what the draw binds. Shader objects make
//! nothing at a draw: such a program is always ready.

use super::{DEPTH_FORMAT, Target, VkDevice, mask_unwritten};
use ash::vk::{self, Handle};
use xr_device::{PipelineAnswer, Readiness, RenderTargetId, VulkanProgram, XrError};

impl VkDevice {
    /// The build system's answer for `program` drawn into `target` (in
    /// render `pass`, if any), waiting with `wait`; `None` where the
    /// program has no `pipeline_for`.
    pub(super) fn ask_pipeline(
        &self,
        program: &VulkanProgram,
        target: &Target,
        pass: Option<(vk::RenderPass, vk::Framebuffer)>,
        wait: bool,
    ) -> Option<PipelineAnswer> {
        let make = program.pipeline_for?;
        let formats = target.formats();
        let depth_format = if target.depth.is_some() { DEPTH_FORMAT.as_raw() as u32 } else { 0 };
        let render_pass = pass.map_or(0, |(render_pass, _)| render_pass.as_raw());
        // SAFETY: the build system keeps its context alive while the program is registered.
        Some(unsafe {
            make(program.pipeline_context, formats.as_ptr(), formats.len() as u32, depth_format, render_pass, wait)
        })
    }

    /// What a draw of `program` into target `index` would find now, asked
    /// without waiting (the build system starts the pipeline's compile if
    /// it had not), and the pipeline it would bind where the build system
    /// handed one out. `Ready` where nothing is made at a draw (the
    /// device's own target, shader objects). An error where the pipeline
    /// cannot be made.
    pub(super) fn draw_readiness(
        &self,
        program: &VulkanProgram,
        (program_name, target_id): (u32, RenderTargetId),
        index: usize,
    ) -> Result<(Readiness, Option<vk::Pipeline>), XrError> {
        let target = &self.targets[index];
        if program.shader_object_count > 0 || !mask_unwritten(target) {
            return Ok((Readiness::Ready, None));
        }
        let inputs = self.input_attachment_writes(program, (program_name, target_id), target)?;
        let pass = self.render_pass_for_inputs(index, target, &inputs)?;
        match self.ask_pipeline(program, target, pass, false) {
            Some(answer) if answer.readiness == Readiness::Compiling => Ok((Readiness::Compiling, None)),
            Some(answer) if answer.pipeline != 0 => {
                Ok((answer.readiness, Some(vk::Pipeline::from_raw(answer.pipeline))))
            }
            // No pipeline_for: the draw reports it.
            None => Ok((Readiness::Ready, None)),
            Some(_) => {
                self.check_validation("making a pipeline")?;
                Err(XrError::driver(format!(
                    "program {program_name} has no pipeline for render target {}: its build system could not make one",
                    target_id.0
                )))
            }
        }
    }
}
