//! Program objects: created as a build asks (separable, binary-retrievable)
//! and linked from compiled shaders, for both OpenGL build systems.

use crate::{info_log, pipelines::Pipelines};
use glow::HasContext;
use std::cell::Cell;
use xr_device::{DeviceCapabilities, DeviceCounter, XrError};
use xr_sourcebuild::{BuildError, BuildOptions, Diagnostic, Severity};

/// A new program object, separable and binary-retrievable as `options` ask.
pub fn new_program(
    gl: &glow::Context,
    pipelines: &Pipelines,
    options: &BuildOptions,
) -> Result<glow::Program, XrError> {
    // SAFETY: program object calls on the current context.
    unsafe {
        let program = gl.create_program().map_err(|e| XrError::driver(format!("glCreateProgram: {e}")))?;
        if options.separable
            && let Some(fns) = pipelines.fns()
        {
            fns.make_separable(program.0.get());
        }
        if options.retrievable {
            gl.program_binary_retrievable_hint(program, true);
        }
        Ok(program)
    }
}

/// The device counter of links the driver had not finished when
/// `glLinkProgram` returned: how much a driver with parallel shader compile
/// links off the calling thread (on Mesa's llvmpipe, none: it links before
/// returning).
pub const LINKS_RUNNING_AT_RETURN: &str = "links still running when glLinkProgram returned";

/// Whether the device's driver links on threads of its own
/// (`GL_KHR_parallel_shader_compile`, which the device turns on), and how
/// many links were still running when `glLinkProgram` returned.
#[derive(Debug, Default)]
pub struct LinkWatch {
    parallel: bool,
    running_at_return: Cell<u64>,
}

impl LinkWatch {
    /// Watches the links of a device with `capabilities`.
    pub fn new(capabilities: &DeviceCapabilities) -> Self {
        let parallel = capabilities
            .extensions
            .iter()
            .any(|e| e.as_str() == "GL_KHR_parallel_shader_compile" || e.as_str() == "GL_ARB_parallel_shader_compile");
        Self { parallel, running_at_return: Cell::new(0) }
    }

    /// Notes, without waiting, whether `program`'s link is still running.
    fn note(&self, gl: &glow::Context, program: glow::Program) {
        // SAFETY: the completion status never waits; asked only where the
        // context has the extension.
        if self.parallel && !unsafe { gl.get_program_completion_status(program) } {
            self.running_at_return.set(self.running_at_return.get() + 1);
        }
    }

    /// [`LINKS_RUNNING_AT_RETURN`], where the driver has parallel compile.
    pub fn counters(&self) -> Vec<DeviceCounter> {
        self.parallel
            .then(|| DeviceCounter { name: LINKS_RUNNING_AT_RETURN.into(), value: self.running_at_return.get() })
            .into_iter()
            .collect()
    }
}

/// Links `shaders` into a new program named `name`; the linker's warnings
/// come back with it. On failure the program is deleted and the linker's
/// messages, under `context`, are the error.
pub fn link_program(
    gl: &glow::Context,
    (pipelines, watch): (&Pipelines, &LinkWatch),
    options: &BuildOptions,
    shaders: &[glow::Shader],
    name: &str,
    context: &str,
) -> Result<(glow::Program, Vec<Diagnostic>), BuildError> {
    let program = new_program(gl, pipelines, options)?;
    // SAFETY: program object calls on the current context; the shaders are
    // compiled on it.
    unsafe {
        for shader in shaders {
            gl.attach_shader(program, *shader);
        }
        gl.link_program(program);
        watch.note(gl, program);
        for shader in shaders {
            gl.detach_shader(program, *shader);
        }
        let mut messages = info_log::parse(&gl.get_program_info_log(program), None, name);
        if gl.get_program_link_status(program) {
            return Ok((program, messages));
        }
        gl.delete_program(program);
        if !messages.iter().any(|d| d.severity == Severity::Error) {
            messages.insert(0, Diagnostic::error(name, 0, "link failed without an error message"));
        }
        Err(BuildError::from_diagnostics(&format!("{context}: link failed"), messages))
    }
}
