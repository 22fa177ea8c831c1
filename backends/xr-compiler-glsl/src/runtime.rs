//! The runtime path: `glShaderSource`, `glCompileShader`, `glAttachShader`,
//! `glLinkProgram`, with every driver message mapped back to the user's files.

use crate::{constant_table::GlConstantTable, gl::DeviceGl, info_log, preprocess};
use abi_stable::{sabi_trait::TD_Opaque, std_types::RResult};
use glow::HasContext;
use std::rc::Rc;
use xr_device::{ProgramRef, XrError, XrResult, catch_panic, guard};
use xr_sourcebuild::{
    AttachedBuildSystem, Availability, BuildError, BuiltProgram, ConstantTable_TO, Diagnostic, ProgramDesc, Severity,
    ShaderStage, SourceDesc, SourceLanguage,
};

/// The GLSL build system attached to one OpenGL device.
pub struct AttachedGlsl {
    gl: Rc<DeviceGl>,
}

impl AttachedGlsl {
    /// Attaches through the device's GL.
    pub fn new(gl: DeviceGl) -> Self {
        Self { gl: Rc::new(gl) }
    }

    fn build(&self, desc: &ProgramDesc) -> Result<BuiltProgram, BuildError> {
        let context = format!("program '{}'", desc.name);
        if desc.stages.is_empty() {
            return Err(XrError::invalid_input(format!("{context} has no stages")).into());
        }
        let mut warnings = Vec::new();
        let mut shaders = Vec::new();
        let result = self.compile_stages(desc, &context, &mut shaders, &mut warnings).and_then(|()| {
            let program = self.link(desc, &context, &shaders, &mut warnings)?;
            GlConstantTable::new(self.gl.clone(), program, &desc.name)
                .map(|table| (program, table))
                .map_err(BuildError::from)
        });
        if let Ok(gl) = self.gl.current() {
            for shader in shaders {
                // SAFETY: shaders were created on this context; a linked
                // program keeps its own copy of the code.
                unsafe { gl.delete_shader(shader) };
            }
        }
        let (program, table) = result?;
        Ok(BuiltProgram {
            program: ProgramRef { name: program.0.get() },
            constants: ConstantTable_TO::from_value(table, TD_Opaque),
            warnings: warnings.into(),
        })
    }

    fn compile_stages(
        &self,
        desc: &ProgramDesc,
        context: &str,
        shaders: &mut Vec<glow::Shader>,
        warnings: &mut Vec<Diagnostic>,
    ) -> Result<(), BuildError> {
        let mut errors = Vec::new();
        for stage in desc.stages.iter() {
            match self.compile(stage, context) {
                Ok((shader, mut messages)) => {
                    shaders.push(shader);
                    warnings.append(&mut messages);
                }
                Err(mut messages) => errors.append(&mut messages),
            }
        }
        if errors.iter().any(|d| d.severity == Severity::Error) {
            errors.append(warnings);
            return Err(BuildError::from_diagnostics(context, errors));
        }
        Ok(())
    }

    fn compile(&self, stage: &SourceDesc, context: &str) -> Result<(glow::Shader, Vec<Diagnostic>), Vec<Diagnostic>> {
        let file = stage.file_name.as_str();
        let fail = |message: String| {
            vec![Diagnostic {
                severity: Severity::Error,
                file: file.into(),
                line: 0,
                column: 0,
                message: message.into(),
            }]
        };
        if stage.language != SourceLanguage::Glsl {
            return Err(fail(format!("{context}: xr-compiler-glsl builds GLSL, not {}", stage.language.name())));
        }
        if stage.entry_point.as_str() != "main" {
            return Err(fail(format!("GLSL entry point must be 'main', not '{}'", stage.entry_point)));
        }
        let flat = preprocess::preprocess(stage)?;
        let gl = self.gl.current().map_err(|e| fail(e.to_string()))?;
        // SAFETY: plain shader object calls on the current context.
        unsafe {
            let shader = gl.create_shader(gl_stage(stage.stage)).map_err(|e| fail(format!("glCreateShader: {e}")))?;
            gl.shader_source(shader, &flat.text);
            gl.compile_shader(shader);
            let messages = info_log::parse(&gl.get_shader_info_log(shader), Some(&flat), file);
            if gl.get_shader_compile_status(shader) {
                Ok((shader, messages))
            } else {
                gl.delete_shader(shader);
                if messages.iter().any(|d| d.severity == Severity::Error) {
                    Err(messages)
                } else {
                    let mut all =
                        fail(format!("{} shader failed to compile without an error message", stage.stage.name()));
                    all.extend(messages);
                    Err(all)
                }
            }
        }
    }

    fn link(
        &self,
        desc: &ProgramDesc,
        context: &str,
        shaders: &[glow::Shader],
        warnings: &mut Vec<Diagnostic>,
    ) -> Result<glow::Program, BuildError> {
        let gl = self.gl.current()?;
        // SAFETY: program object calls on the current context.
        unsafe {
            let program = gl.create_program().map_err(|e| XrError::driver(format!("glCreateProgram: {e}")))?;
            for shader in shaders {
                gl.attach_shader(program, *shader);
            }
            gl.link_program(program);
            for shader in shaders {
                gl.detach_shader(program, *shader);
            }
            let mut messages = info_log::parse(&gl.get_program_info_log(program), None, &desc.name);
            if gl.get_program_link_status(program) {
                warnings.append(&mut messages);
                Ok(program)
            } else {
                gl.delete_program(program);
                if !messages.iter().any(|d| d.severity == Severity::Error) {
                    messages.insert(
                        0,
                        Diagnostic {
                            severity: Severity::Error,
                            file: desc.name.clone(),
                            line: 0,
                            column: 0,
                            message: "link failed without an error message".into(),
                        },
                    );
                }
                Err(BuildError::from_diagnostics(&format!("{context}: link failed"), messages))
            }
        }
    }
}

impl AttachedBuildSystem for AttachedGlsl {
    fn availability(&self) -> XrResult<Availability> {
        guard(|| Ok(Availability::RUNTIME_COMPILE))
    }

    fn build_program(&mut self, desc: &ProgramDesc) -> RResult<BuiltProgram, BuildError> {
        match catch_panic(|| self.build(desc)) {
            Ok(result) => result.into(),
            Err(panic) => RResult::RErr(panic.into()),
        }
    }
}

fn gl_stage(stage: ShaderStage) -> u32 {
    match stage {
        ShaderStage::Vertex => glow::VERTEX_SHADER,
        ShaderStage::TessControl => glow::TESS_CONTROL_SHADER,
        ShaderStage::TessEvaluation => glow::TESS_EVALUATION_SHADER,
        ShaderStage::Geometry => glow::GEOMETRY_SHADER,
        ShaderStage::Fragment => glow::FRAGMENT_SHADER,
        ShaderStage::Compute => glow::COMPUTE_SHADER,
    }
}
