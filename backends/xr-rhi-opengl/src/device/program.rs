//! Binding a program or program pipeline for a draw or dispatch, and the
//! draw buffers of a draw.

use super::{GlDevice, RenderTarget};
use glow::HasContext;
use std::num::NonZeroU32;
use xr_device::{ProgramKind, XrError, checks};

impl GlDevice {
    /// Binds a program or pipeline after checking it is drawable: one of
    /// this device, with every resource bound.
    pub(super) fn use_program(&self, gl: &glow::Context, program: xr_device::ProgramRef) -> Result<(), XrError> {
        let name =
            NonZeroU32::new(program.name).ok_or_else(|| XrError::invalid_input("program 0 cannot be drawn with"))?;
        // Build systems register programs: a pipeline's stage programs were
        // checked as programs (its own name is in another namespace).
        let unbound = if program.kind == ProgramKind::Program { self.context.unbound_resources(name.get()) } else { 0 };
        checks::check_bound(name.get(), unbound)?;
        // SAFETY: the name comes from a build system attached to this context and is checked.
        unsafe {
            match program.kind {
                ProgramKind::Program => {
                    let program = glow::NativeProgram(name);
                    if !gl.is_program(program) {
                        return Err(XrError::invalid_input(format!("{} is not a program on this device", name)));
                    }
                    gl.use_program(Some(program));
                }
                ProgramKind::Pipeline => {
                    let bind = self.extra.bind_program_pipeline.ok_or_else(|| {
                        XrError::unavailable("program pipelines need OpenGL 4.1 or GL_ARB_separate_shader_objects")
                    })?;
                    gl.use_program(None);
                    bind(name.get());
                }
            }
        }
        Ok(())
    }

    /// The draw buffers of a draw with `program` into `target`'s colour
    /// attachments: each attachment the fragment stage has an output for,
    /// `GL_NONE` for the others (they keep their contents, and may be
    /// sampled by the draw). Every attachment where the outputs cannot be
    /// read.
    pub(super) fn draw_buffers(&self, program: xr_device::ProgramRef, target: &RenderTarget) -> Vec<u32> {
        let all: Vec<u32> = (0..target.colors.len() as u32).map(|i| glow::COLOR_ATTACHMENT0 + i).collect();
        let Some(written) = self.fragment_outputs(program) else {
            return all;
        };
        all.iter()
            .enumerate()
            .map(|(i, buffer)| if written.contains(&(i as u32)) { *buffer } else { glow::NONE })
            .collect()
    }

    /// The locations the fragment stage of `program` writes.
    fn fragment_outputs(&self, program: xr_device::ProgramRef) -> Option<Vec<u32>> {
        let interface = self.extra.get_program_interface_iv?;
        let resource = self.extra.get_program_resource_iv?;
        let name = match program.kind {
            ProgramKind::Program => program.name,
            ProgramKind::Pipeline => {
                let get = self.extra.get_program_pipeline_iv?;
                let mut fragment = 0;
                // SAFETY: a checked pipeline of this context; one integer written.
                unsafe { get(program.name, glow::FRAGMENT_SHADER, &mut fragment) };
                u32::try_from(fragment).ok().filter(|f| *f != 0)?
            }
        };
        let mut count = 0;
        // SAFETY: a program of this context; one integer written.
        unsafe { interface(name, glow::PROGRAM_OUTPUT, glow::ACTIVE_RESOURCES, &mut count) };
        let mut written = Vec::new();
        for index in 0..count.max(0) as u32 {
            let properties = [glow::LOCATION, glow::ARRAY_SIZE];
            let mut values = [0i32; 2];
            // SAFETY: `index` is below the active output count of a program
            // of this context; two properties asked, room for two values.
            unsafe {
                resource(
                    name,
                    glow::PROGRAM_OUTPUT,
                    index,
                    2,
                    properties.as_ptr(),
                    2,
                    std::ptr::null_mut(),
                    values.as_mut_ptr(),
                )
            };
            let [location, size] = values;
            if location >= 0 {
                written.extend(location as u32..(location + size.max(1)) as u32);
            }
        }
        Some(written)
    }

    pub(super) fn unuse_program(&self, gl: &glow::Context) {
        // SAFETY: unbinding on the current context.
        unsafe {
            gl.use_program(None);
            if let Some(bind) = self.extra.bind_program_pipeline {
                bind(0);
            }
        }
    }
}
