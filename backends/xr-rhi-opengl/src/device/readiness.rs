//! Compiles off the draw path: the driver's parallel shader compile
//! (`GL_KHR_parallel_shader_compile`, or its ARB form), and what a draw
//! binds when its program has not finished linking.
//!
//! With the extension, `glCompileShader` and `glLinkProgram` may return
//! before the driver is done, and `GL_COMPLETION_STATUS_KHR` says, without
//! waiting, whether it is; any other query of the program waits. A draw
//! under `NotReady::Wait` binds its program as before (the driver finishes
//! first); under `Skip` or `Fallback` it asks the completion status and,
//! where the link is still running, draws nothing or the fallback.

use super::GlDevice;
use glow::HasContext;
use xr_device::{ProgramKind, ProgramRef, Readiness, XrError};

/// The extensions that give a context threads of its own to compile on.
const PARALLEL_COMPILE: [&str; 2] = ["GL_KHR_parallel_shader_compile", "GL_ARB_parallel_shader_compile"];

/// The stages whose programs a program pipeline may hold, as
/// `glGetProgramPipelineiv` names them.
const PIPELINE_STAGES: [u32; 6] = [
    glow::VERTEX_SHADER,
    glow::TESS_CONTROL_SHADER,
    glow::TESS_EVALUATION_SHADER,
    glow::GEOMETRY_SHADER,
    glow::FRAGMENT_SHADER,
    glow::COMPUTE_SHADER,
];

/// Asks the driver to compile and link on as many threads as it will
/// (`glMaxShaderCompilerThreadsKHR(0xFFFFFFFF)`: the extension's "as the
/// implementation chooses"), for every program made on this context,
/// the build systems' included; whether the context has the extension.
pub(super) fn start_parallel_compile(gl: &glow::Context) -> bool {
    let extensions = gl.supported_extensions();
    if !PARALLEL_COMPILE.iter().any(|name| extensions.contains(*name)) {
        return false;
    }
    // SAFETY: the context is current, and has the extension.
    unsafe { gl.max_shader_compiler_threads(u32::MAX) };
    true
}

impl GlDevice {
    /// Whether a draw with `program` would go ahead without waiting for
    /// the driver: every program it holds has finished linking. `Ready`
    /// on a context without parallel compile (its links end before
    /// `glLinkProgram` returns).
    pub(super) fn program_readiness(&self, gl: &glow::Context, program: ProgramRef) -> Result<Readiness, XrError> {
        if !self.parallel_compile {
            return Ok(Readiness::Ready);
        }
        let programs = match program.kind {
            ProgramKind::Program => vec![program.name],
            ProgramKind::Pipeline => self.pipeline_programs(program.name)?,
        };
        // A name that is no program is refused here, as binding it would
        // be: a draw that does not wait must not skip it as "not ready".
        if programs.is_empty() {
            return Err(XrError::invalid_input(format!("{} is not a program pipeline on this device", program.name)));
        }
        let mut complete = true;
        for name in programs {
            let program = std::num::NonZeroU32::new(name).map(glow::NativeProgram).filter(|p| {
                // SAFETY: a query on the current context.
                unsafe { gl.is_program(*p) }
            });
            let Some(program) = program else {
                return Err(XrError::invalid_input(format!("{name} is not a program on this device")));
            };
            // SAFETY: a query that never waits, of a program of this context.
            complete &= unsafe { gl.get_program_completion_status(program) };
        }
        Ok(if complete { Readiness::Ready } else { Readiness::Compiling })
    }

    /// The stage programs of program pipeline `pipeline`; none where it is
    /// no pipeline (refused by the caller).
    fn pipeline_programs(&self, pipeline: u32) -> Result<Vec<u32>, XrError> {
        let query = self
            .extra
            .get_program_pipeline_iv
            .ok_or_else(|| XrError::unavailable("program pipelines need OpenGL 4.1"))?;
        Ok(PIPELINE_STAGES
            .iter()
            .map(|stage| {
                let mut name = 0;
                // SAFETY: one integer written for a stage's program.
                unsafe { query(pipeline, *stage, &mut name) };
                name as u32
            })
            .filter(|name| *name != 0)
            .collect())
    }
}
