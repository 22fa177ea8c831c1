//! One stage's compile through shaderc: its options, includes resolved
//! by XR, and the checks on what comes out.

use super::{
    IncludeLog, IncludedFile, LANGUAGE_GLSL, LANGUAGE_HLSL, Optimization, SpirvModule, SpirvOptions, TargetEnv, edges,
    strip_source_debug_info,
};
use crate::{messages, stage_cache, validate};
use std::{cell::RefCell, rc::Rc};
use xr_device::XrError;
use xr_plugin_kit::includes::{
    attach_include_chains, find_include, include_line, includer_dir, root_dir, searched_places,
};
use xr_sourcebuild::{BuildError, Diagnostic, Severity, ShaderStage, SourceDesc};

/// A shaderc compiler, kept for many compiles: glslang's start-up costs
/// ~100 ms, each compile after it about a millisecond.
pub struct SpirvCompiler {
    compiler: shaderc::Compiler,
}

impl SpirvCompiler {
    /// Starts shaderc.
    pub fn new() -> Result<Self, XrError> {
        let compiler =
            shaderc::Compiler::new().map_err(|e| XrError::unavailable(format!("shaderc failed to start: {e}")))?;
        Ok(Self { compiler })
    }

    /// Compiles `desc` to validated SPIR-V.
    pub fn compile(&self, desc: &SourceDesc, options: &SpirvOptions) -> Result<SpirvModule, BuildError> {
        let module = self.compile_unvalidated(desc, options)?;
        validate(&module.words, options.target).map_err(|e| {
            BuildError::from_diagnostics(
                &format!("{} ({} {})", desc.file_name, desc.language, desc.stage.name()),
                vec![Diagnostic::error(&desc.file_name, 0, e.message.to_string())],
            )
        })?;
        Ok(module)
    }

    /// `desc` preprocessed by glslang for `options.target`: includes
    /// expanded, defines applied, `#line` directives naming the files.
    pub fn preprocess(&self, desc: &SourceDesc, options: &SpirvOptions) -> Result<String, BuildError> {
        self.preprocess_with_includes(desc, options).map(|(text, _)| text)
    }

    /// [`SpirvCompiler::preprocess`], with the files its `#include`s read.
    pub(super) fn preprocess_with_includes(
        &self,
        desc: &SourceDesc,
        options: &SpirvOptions,
    ) -> Result<(String, Vec<IncludedFile>), BuildError> {
        let file = desc.file_name.as_str();
        let (compile_options, included) = Self::prepare(desc, options)?;
        let source = with_include_extension(&desc.source, &desc.language);
        match self.compiler.preprocess(&source, file, &desc.entry_point, Some(&compile_options)) {
            Ok(artifact) => Ok((artifact.as_text(), included.take())),
            Err(shaderc::Error::CompilationError(_, text)) => {
                let mut diagnostics = messages::parse(&text, file);
                attach_include_chains(&mut diagnostics, &edges(&included));
                Err(BuildError::from_diagnostics(&format!("{file} (preprocessing)"), diagnostics))
            }
            Err(e) => Err(BuildError::from_diagnostics(file, vec![Diagnostic::error(file, 0, e.to_string())])),
        }
    }

    /// shaderc's options for `desc`, and where its include callback records
    /// the files it reads.
    fn prepare<'a>(
        desc: &'a SourceDesc,
        options: &SpirvOptions,
    ) -> Result<(shaderc::CompileOptions<'a>, IncludeLog), BuildError> {
        let file = desc.file_name.as_str();
        let context = format!("{file} ({} {})", desc.language, desc.stage.name());
        let fail = |message: String| BuildError::from_diagnostics(&context, vec![Diagnostic::error(file, 0, message)]);
        let language = match desc.language.as_str() {
            LANGUAGE_GLSL => shaderc::SourceLanguage::GLSL,
            LANGUAGE_HLSL => shaderc::SourceLanguage::HLSL,
            other => return Err(fail(format!("{other} is not a language shaderc compiles (glsl or hlsl)"))),
        };
        let mut compile_options = shaderc::CompileOptions::new()
            .map_err(|e| BuildError::from(XrError::unavailable(format!("shaderc options: {e}"))))?;
        compile_options.set_source_language(language);
        let (env, version) = match options.target {
            TargetEnv::OpenGl45 => (shaderc::TargetEnv::OpenGL, shaderc::EnvVersion::OpenGL4_5),
            TargetEnv::Vulkan10 => (shaderc::TargetEnv::Vulkan, shaderc::EnvVersion::Vulkan1_0),
            TargetEnv::Vulkan11 => (shaderc::TargetEnv::Vulkan, shaderc::EnvVersion::Vulkan1_1),
            TargetEnv::Vulkan12 => (shaderc::TargetEnv::Vulkan, shaderc::EnvVersion::Vulkan1_2),
            TargetEnv::Vulkan13 => (shaderc::TargetEnv::Vulkan, shaderc::EnvVersion::Vulkan1_3),
        };
        compile_options.set_target_env(env, version as u32);
        let spirv = options.spirv_version.unwrap_or_else(|| options.target.default_spirv());
        compile_options.set_target_spirv(spirv.shaderc());
        compile_options.set_optimization_level(match options.optimization {
            Optimization::None => shaderc::OptimizationLevel::Zero,
            Optimization::Size => shaderc::OptimizationLevel::Size,
            Optimization::Performance => shaderc::OptimizationLevel::Performance,
        });
        // Sources may leave interface locations and bindings to XR.
        compile_options.set_auto_map_locations(true);
        compile_options.set_auto_bind_uniforms(true);
        // Names (OpName) are kept without it; Mesa 22 refuses the entry point
        // of a module that carries full debug info (OpSource text, OpLine).
        // The optimiser strips names unless debug info is on, and the
        // constant table finds everything by name: optimised OpenGL modules
        // are compiled with it and lose the rest afterwards
        // (`strip_source_debug_info`).
        if options.target != TargetEnv::OpenGl45 || options.optimization != Optimization::None {
            compile_options.set_generate_debug_info();
        }
        check_defines(desc)?;
        for define in desc.defines.iter() {
            let value = (!define.value.is_empty()).then_some(define.value.as_str());
            compile_options.add_macro_definition(&define.name, value);
        }
        let included: IncludeLog = Rc::new(RefCell::new(Vec::new()));
        let record = included.clone();
        compile_options.set_include_callback(move |requested, _kind, requesting, _depth| {
            let includer_dir = if requesting == file { root_dir(desc) } else { includer_dir(desc, requesting) };
            match find_include(desc, requested, includer_dir.as_deref()) {
                Some(found) => {
                    let line = if requesting == file {
                        include_line(&desc.source, requested)
                    } else {
                        let read = record.borrow();
                        read.iter().find(|i| i.path == requesting).map_or(0, |i| include_line(&i.text, requested))
                    };
                    record.borrow_mut().push(IncludedFile {
                        requested: requested.to_owned(),
                        path: found.display.clone(),
                        text: found.text.clone(),
                        included_by: (requesting.to_owned(), line),
                    });
                    Ok(shaderc::ResolvedInclude { resolved_name: found.display, content: found.text })
                }
                None => Err(format!(
                    "cannot find include file '{requested}' ({})",
                    searched_places(desc, includer_dir.as_deref())
                )),
            }
        });
        Ok((compile_options, included))
    }

    /// Compiles `desc` to SPIR-V without running the validator (for
    /// measuring, and for `xr build`'s check of GLSL the driver builds;
    /// everything XR hands on is validated).
    ///
    /// A stage is compiled once per process for the defines it reads (see
    /// [`crate::stage_cache`]): the variants of a matrix that differ only in
    /// defines a stage never mentions share one compile.
    pub fn compile_unvalidated(&self, desc: &SourceDesc, options: &SpirvOptions) -> Result<SpirvModule, BuildError> {
        // Before the cache: a bad define is an error even where the text never reads it.
        check_defines(desc)?;
        let source = stage_cache::source_key(desc, options);
        if let Some(module) = stage_cache::lookup(&source, desc) {
            return Ok(module);
        }
        let module = self.compile_uncached(desc, options)?;
        stage_cache::keep(source, desc, &module);
        Ok(module)
    }

    fn compile_uncached(&self, desc: &SourceDesc, options: &SpirvOptions) -> Result<SpirvModule, BuildError> {
        let file = desc.file_name.as_str();
        let context = format!("{file} ({} {})", desc.language, desc.stage.name());
        let fail = |message: String| BuildError::from_diagnostics(&context, vec![Diagnostic::error(file, 0, message)]);
        let (compile_options, included) = Self::prepare(desc, options)?;
        let source = with_include_extension(&desc.source, &desc.language);
        let result = self.compiler.compile_into_spirv(
            &source,
            shader_kind(desc.stage),
            file,
            &desc.entry_point,
            Some(&compile_options),
        );
        let artifact = match result {
            Ok(artifact) => artifact,
            Err(shaderc::Error::CompilationError(_, text)) => {
                let mut diagnostics = messages::parse(&text, file);
                attach_include_chains(&mut diagnostics, &edges(&included));
                if let Some(module) = self.compile_with_newer_glslang(desc, options, &diagnostics) {
                    return module;
                }
                if !diagnostics.iter().any(|d| d.severity == Severity::Error) {
                    // glslang's HLSL front end fails without an error on a missing entry point.
                    return Err(fail(format!(
                        "entry point '{}' not found in {file}{}",
                        desc.entry_point,
                        if text.trim().is_empty() {
                            String::new()
                        } else {
                            format!(" ({})", text.trim().replace('\n', " "))
                        }
                    )));
                }
                return Err(BuildError::from_diagnostics(&context, diagnostics));
            }
            Err(e) => return Err(fail(e.to_string())),
        };
        let mut warnings = messages::parse(&artifact.get_warning_messages(), file);
        attach_include_chains(&mut warnings, &edges(&included));
        let mut words = artifact.as_binary().to_vec();
        if options.target == TargetEnv::OpenGl45 && options.optimization != Optimization::None {
            words = strip_source_debug_info(&words);
        }
        let module = SpirvModule {
            words,
            stage: desc.stage,
            entry_point: desc.entry_point.to_string(),
            warnings,
            includes: included.take(),
        };
        check_entry_point(&module, file).map_err(fail)?;
        Ok(module)
    }
}

/// glslang accepts `#include` in GLSL only with `GL_GOOGLE_include_directive`;
/// XR's GLSL path needs no such line, so the same sources build on both
/// paths: the extension is enabled right after `#version`, and a `#line`
/// keeps every later line's number the user's.
fn with_include_extension<'a>(source: &'a str, language: &str) -> std::borrow::Cow<'a, str> {
    let needs = language == LANGUAGE_GLSL
        && source.contains("#include")
        && !source.contains("GL_GOOGLE_include_directive")
        && !source.contains("GL_ARB_shading_language_include");
    let Some(version_line) =
        needs.then(|| source.lines().position(|l| l.trim_start().starts_with("#version"))).flatten()
    else {
        return source.into();
    };
    let mut out = String::with_capacity(source.len() + 80);
    for (index, line) in source.lines().enumerate() {
        out.push_str(line);
        out.push('\n');
        if index == version_line {
            out.push_str("#extension GL_GOOGLE_include_directive : enable\n");
            out.push_str(&format!("#line {}\n", index + 2));
        }
    }
    out.into()
}

/// glslang's HLSL front end compiles a source whose entry point is missing
/// into an empty module; XR makes that the error it is.
pub(super) fn check_entry_point(module: &SpirvModule, file: &str) -> Result<(), String> {
    let reflection = crate::reflect::entry_points(&module.words).map_err(|e| e.message.to_string())?;
    if reflection.iter().any(|name| name == &module.entry_point) {
        Ok(())
    } else {
        Err(format!(
            "entry point '{}' not found in {file}{}",
            module.entry_point,
            if reflection.is_empty() { String::new() } else { format!(" (it has: {})", reflection.join(", ")) }
        ))
    }
}

fn shader_kind(stage: ShaderStage) -> shaderc::ShaderKind {
    match stage {
        ShaderStage::Vertex => shaderc::ShaderKind::Vertex,
        ShaderStage::TessControl => shaderc::ShaderKind::TessControl,
        ShaderStage::TessEvaluation => shaderc::ShaderKind::TessEvaluation,
        ShaderStage::Geometry => shaderc::ShaderKind::Geometry,
        ShaderStage::Fragment => shaderc::ShaderKind::Fragment,
        ShaderStage::Compute => shaderc::ShaderKind::Compute,
        ShaderStage::Task => shaderc::ShaderKind::Task,
        ShaderStage::Mesh => shaderc::ShaderKind::Mesh,
        ShaderStage::RayGeneration => shaderc::ShaderKind::RayGeneration,
        ShaderStage::Miss => shaderc::ShaderKind::Miss,
        ShaderStage::ClosestHit => shaderc::ShaderKind::ClosestHit,
        ShaderStage::AnyHit => shaderc::ShaderKind::AnyHit,
        ShaderStage::Intersection => shaderc::ShaderKind::Intersection,
        ShaderStage::Callable => shaderc::ShaderKind::Callable,
    }
}

/// Every define's name is an identifier.
fn check_defines(desc: &SourceDesc) -> Result<(), BuildError> {
    for define in desc.defines.iter() {
        if define.name.is_empty() || define.name.contains(|c: char| !c.is_ascii_alphanumeric() && c != '_') {
            let file = desc.file_name.as_str();
            let context = format!("{file} ({} {})", desc.language, desc.stage.name());
            let message = format!("invalid define '{}={}'", define.name, define.value);
            return Err(BuildError::from_diagnostics(&context, vec![Diagnostic::error(file, 0, message)]));
        }
    }
    Ok(())
}
