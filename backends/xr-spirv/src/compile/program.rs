//! A program's stages compiled together, their diagnostics reported
//! together; GLSL written for OpenGL with loose uniforms placed in a block.

use super::{CompiledProgram, IncludedFile, LANGUAGE_GLSL, SpirvCompiler, SpirvModule, SpirvOptions, TargetEnv};
use crate::loose_uniforms;
use xr_device::XrError;
use xr_sourcebuild::{BuildError, Diagnostic, Severity, SourceDesc};

/// A program's stages as they compile, and the diagnostics of those that fail.
#[derive(Default)]
struct ProgramParts {
    modules: Vec<crate::container::StageModule>,
    includes: Vec<IncludedFile>,
    warnings: Vec<Diagnostic>,
    diagnostics: Vec<Diagnostic>,
}

impl ProgramParts {
    /// Takes `stage`'s compile (with `included`, the files read before it);
    /// a failure with no diagnostic to report alongside the others ends the
    /// program at once.
    fn add(
        &mut self,
        stage: &SourceDesc,
        compiled: Result<SpirvModule, BuildError>,
        included: Vec<IncludedFile>,
    ) -> Result<(), BuildError> {
        match compiled {
            Ok(module) => {
                self.includes.extend(included);
                self.includes.extend(module.includes);
                self.warnings.extend(module.warnings);
                self.modules.push(crate::container::StageModule {
                    stage: module.stage,
                    entry_point: module.entry_point,
                    specializations: stage.specializations.to_vec(),
                    words: module.words,
                    file: stage.file_name.to_string(),
                    hit_group: stage.hit_group.into_option(),
                });
                Ok(())
            }
            Err(error) if error.diagnostics.is_empty() => Err(error),
            Err(error) => {
                self.diagnostics.extend(error.diagnostics);
                Ok(())
            }
        }
    }

    /// The program, or every failing stage's diagnostics together.
    fn finish(self, program: &str) -> Result<CompiledProgram, BuildError> {
        if self.diagnostics.iter().any(|d| d.severity == Severity::Error) {
            return Err(BuildError::from_diagnostics(&format!("program '{program}'"), self.diagnostics));
        }
        Ok(CompiledProgram { modules: self.modules, includes: self.includes, warnings: self.warnings })
    }
}

impl SpirvCompiler {
    /// Compiles every stage of a program to SPIR-V, reporting the
    /// diagnostics of all failing stages together, with the files the stages
    /// included. The modules are not validated yet: linking them
    /// ([`crate::finish_program`]) rewrites their words, and
    /// [`crate::validate_program`] checks what comes out, once.
    pub fn compile_program(
        &self,
        desc: &xr_sourcebuild::ProgramDesc,
        options: &SpirvOptions,
    ) -> Result<CompiledProgram, BuildError> {
        if desc.stages.is_empty() {
            return Err(XrError::invalid_input(format!("program '{}' has no stages", desc.name)).into());
        }
        desc.hit_groups()?;
        let mut parts = ProgramParts::default();
        let mut loose_uniforms = false;
        for stage in desc.stages.iter() {
            let compiled = self.compile_unvalidated(stage, options);
            if let Err(error) = &compiled {
                loose_uniforms |= options.target != TargetEnv::OpenGl45
                    && stage.language == LANGUAGE_GLSL
                    && error.diagnostics.iter().any(|d| d.message.contains(loose_uniforms::GLSLANG_REFUSAL));
            }
            parts.add(stage, compiled, Vec::new())?;
        }
        if loose_uniforms {
            return self.compile_placing_loose_uniforms(desc, options);
        }
        parts.finish(&desc.name)
    }

    /// [`SpirvCompiler::compile_program`] for GLSL written for OpenGL with
    /// loose uniforms, built for Vulkan: every stage preprocessed, the
    /// loose uniforms of all of them placed in one uniform block
    /// ([`crate::loose_uniforms`]), each stage compiled from its placed
    /// text (which reads no file: its includes are the preprocessing's).
    fn compile_placing_loose_uniforms(
        &self,
        desc: &xr_sourcebuild::ProgramDesc,
        options: &SpirvOptions,
    ) -> Result<CompiledProgram, BuildError> {
        let refused = |stage: &SourceDesc, r: loose_uniforms::Refusal| {
            BuildError::from_diagnostics(
                &format!("{} ({} {})", stage.file_name, stage.language, stage.stage.name()),
                vec![Diagnostic::error(&r.file, r.line, r.message)],
            )
        };
        let mut preprocessed = Vec::new();
        for stage in desc.stages.iter() {
            let (text, included) = self.preprocess_with_includes(stage, options)?;
            let found = loose_uniforms::find(&text, &stage.file_name).map_err(|r| refused(stage, r))?;
            preprocessed.push((stage, text, included, found));
        }
        let members = loose_uniforms::gather(preprocessed.iter().map(|(.., found)| found.as_slice()))
            .map_err(|r| refused(&desc.stages[0], r))?;
        let block = loose_uniforms::block(
            &members,
            loose_uniforms::binding(preprocessed.iter().map(|(_, text, ..)| text.as_str())),
        );
        let mut parts = ProgramParts::default();
        for (stage, text, included, found) in preprocessed {
            // Every stage declares the block: one without loose uniforms
            // reserves its binding from glslang's automatic bindings.
            let placed_text = match found.is_empty() {
                true => loose_uniforms::reserve(&text, &block),
                false => loose_uniforms::place(&text, &found, &block),
            };
            let mut placed = stage.clone();
            placed.source = loose_uniforms::with_binding_qualifier(&placed_text).into();
            parts.add(stage, self.compile_unvalidated(&placed, options), included)?;
        }
        parts.finish(&desc.name)
    }
}
