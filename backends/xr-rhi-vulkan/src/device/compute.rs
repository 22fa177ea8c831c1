//! Compute dispatches.

use super::VkDevice;
use ash::vk::{self, Handle};
use xr_device::{ComputeCall, XrError};

impl VkDevice {
    /// `DeviceBackend::dispatch`: runs a compute program and waits.
    pub(super) fn dispatch_compute(&mut self, call: &ComputeCall) -> Result<(), XrError> {
        let program = self.program(call.program)?;
        if !program.compute {
            let instead = if program.ray_tracing { "launch it with trace_rays" } else { "draw with it" };
            return Err(XrError::invalid_input(format!(
                "program {} is not a compute program: {instead}",
                call.program.name
            )));
        }
        let [x, y, z] = call.groups;
        let device = &self.context.device;
        self.submit("dispatching", |cb| {
            // SAFETY: recording; every handle belongs to this device.
            unsafe {
                device.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, vk::Pipeline::from_raw(program.pipeline));
                self.bind_program_state(cb, &program, vk::PipelineBindPoint::COMPUTE);
                device.cmd_dispatch(cb, x, y, z);
            }
            self.shader_writes_visible(cb, vk::PipelineStageFlags::COMPUTE_SHADER);
        })
    }
}
