//! Program objects: created as a build asks (separable, binary-retrievable)
//! and linked from compiled shaders, for both OpenGL build systems.

use crate::{info_log, pipelines::Pipelines};
use glow::HasContext;
use xr_device::XrError;
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

/// Links `shaders` into a new program named `name`; the linker's warnings
/// come back with it. On failure the program is deleted and the linker's
/// messages, under `context`, are the error.
pub fn link_program(
    gl: &glow::Context,
    pipelines: &Pipelines,
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
