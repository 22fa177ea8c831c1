//! GLSL and HLSL to SPIR-V through shaderc.

use crate::{loose_uniforms, messages, stage_cache, validate};
use std::{cell::RefCell, rc::Rc};
use xr_device::XrError;
use xr_plugin_kit::includes::{
    IncludeEdge, attach_include_chains, find_include, include_line, includer_dir, root_dir, searched_places,
};
use xr_sourcebuild::{BuildError, Diagnostic, Severity, ShaderStage, SourceDesc};

/// The name of GLSL, as the build systems declare it.
pub const LANGUAGE_GLSL: &str = "glsl";
/// The name of HLSL, as the build systems declare it.
pub const LANGUAGE_HLSL: &str = "hlsl";

/// The languages shaderc compiles, with their file extensions.
pub fn languages() -> Vec<xr_sourcebuild::LanguageInfo> {
    vec![glsl_language(), xr_sourcebuild::LanguageInfo::new(LANGUAGE_HLSL, &["hlsl", "hlsli", "fx"])]
}

/// GLSL with its file extensions (the GLSL build system takes GLSL alone).
pub fn glsl_language() -> xr_sourcebuild::LanguageInfo {
    xr_sourcebuild::LanguageInfo::new(
        LANGUAGE_GLSL,
        &[
            "glsl", "vert", "frag", "geom", "tesc", "tese", "comp", "vs", "fs", "gs", "cs", "task", "mesh", "rgen",
            "rmiss", "rchit", "rahit", "rint", "rcall",
        ],
    )
}

/// The environment a module is compiled for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TargetEnv {
    /// OpenGL 4.5 with `ARB_gl_spirv`.
    OpenGl45,
    /// Vulkan 1.0.
    Vulkan10,
    /// Vulkan 1.1.
    Vulkan11,
    /// Vulkan 1.2.
    Vulkan12,
    /// Vulkan 1.3.
    Vulkan13,
}

impl TargetEnv {
    /// The command-line name: `opengl4.5`, `vulkan1.0` … `vulkan1.3`.
    pub fn name(self) -> &'static str {
        match self {
            TargetEnv::OpenGl45 => "opengl4.5",
            TargetEnv::Vulkan10 => "vulkan1.0",
            TargetEnv::Vulkan11 => "vulkan1.1",
            TargetEnv::Vulkan12 => "vulkan1.2",
            TargetEnv::Vulkan13 => "vulkan1.3",
        }
    }

    /// Parses [`TargetEnv::name`].
    pub fn from_name(name: &str) -> Option<Self> {
        [Self::OpenGl45, Self::Vulkan10, Self::Vulkan11, Self::Vulkan12, Self::Vulkan13]
            .into_iter()
            .find(|t| t.name() == name)
    }

    /// The newest SPIR-V version the environment accepts.
    pub fn default_spirv(self) -> SpirvVersion {
        match self {
            TargetEnv::OpenGl45 | TargetEnv::Vulkan10 => SpirvVersion::V1_0,
            TargetEnv::Vulkan11 => SpirvVersion::V1_3,
            TargetEnv::Vulkan12 => SpirvVersion::V1_5,
            TargetEnv::Vulkan13 => SpirvVersion::V1_6,
        }
    }
}

/// A SPIR-V version.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SpirvVersion {
    /// 1.0.
    V1_0,
    /// 1.1.
    V1_1,
    /// 1.2.
    V1_2,
    /// 1.3.
    V1_3,
    /// 1.4.
    V1_4,
    /// 1.5.
    V1_5,
    /// 1.6.
    V1_6,
}

impl SpirvVersion {
    /// The version `1.0` … `1.6` names.
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "1.0" => SpirvVersion::V1_0,
            "1.1" => SpirvVersion::V1_1,
            "1.2" => SpirvVersion::V1_2,
            "1.3" => SpirvVersion::V1_3,
            "1.4" => SpirvVersion::V1_4,
            "1.5" => SpirvVersion::V1_5,
            "1.6" => SpirvVersion::V1_6,
            _ => return None,
        })
    }

    /// `1.0` … `1.6`.
    pub fn name(self) -> &'static str {
        match self {
            SpirvVersion::V1_0 => "1.0",
            SpirvVersion::V1_1 => "1.1",
            SpirvVersion::V1_2 => "1.2",
            SpirvVersion::V1_3 => "1.3",
            SpirvVersion::V1_4 => "1.4",
            SpirvVersion::V1_5 => "1.5",
            SpirvVersion::V1_6 => "1.6",
        }
    }

    fn shaderc(self) -> shaderc::SpirvVersion {
        match self {
            SpirvVersion::V1_0 => shaderc::SpirvVersion::V1_0,
            SpirvVersion::V1_1 => shaderc::SpirvVersion::V1_1,
            SpirvVersion::V1_2 => shaderc::SpirvVersion::V1_2,
            SpirvVersion::V1_3 => shaderc::SpirvVersion::V1_3,
            SpirvVersion::V1_4 => shaderc::SpirvVersion::V1_4,
            SpirvVersion::V1_5 => shaderc::SpirvVersion::V1_5,
            SpirvVersion::V1_6 => shaderc::SpirvVersion::V1_6,
        }
    }
}

/// How hard shaderc's optimiser (SPIRV-Tools) works.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Optimization {
    /// No optimisation; debug names kept.
    #[default]
    None,
    /// Smaller code.
    Size,
    /// Faster code.
    Performance,
}

/// Everything besides the source that changes a module's bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SpirvOptions {
    /// The target environment.
    pub target: TargetEnv,
    /// SPIR-V version; the target's newest when `None`.
    pub spirv_version: Option<SpirvVersion>,
    /// Optimisation level.
    pub optimization: Optimization,
}

impl SpirvOptions {
    /// Defaults for `target`: its newest SPIR-V version, no optimisation.
    pub fn new(target: TargetEnv) -> Self {
        Self { target, spirv_version: None, optimization: Optimization::None }
    }

    /// The options raised to an environment `stages` exist in: the mesh
    /// shader and ray tracing extensions are written against SPIR-V 1.4,
    /// so a program with a task, mesh or ray tracing stage is compiled for
    /// SPIR-V 1.4 at least, and validated by Vulkan 1.2's rules at least
    /// (the first Vulkan whose SPIR-V environment takes 1.4 without
    /// `VK_KHR_spirv_1_4`; every device with those extensions has it). A
    /// SPIR-V version asked for below 1.4, or an OpenGL target, is an error
    /// naming the stage.
    pub fn for_stages(mut self, stages: &[ShaderStage]) -> Result<Self, XrError> {
        let Some(stage) = stages.iter().find(|s| needs_spirv_1_4(**s)) else { return Ok(self) };
        if self.target == TargetEnv::OpenGl45 {
            return Err(XrError::invalid_input(format!("OpenGL has no {} stage", stage.name())));
        }
        let raised = matches!(self.target, TargetEnv::Vulkan10 | TargetEnv::Vulkan11);
        if raised {
            self.target = TargetEnv::Vulkan12;
        }
        match self.spirv_version {
            Some(asked) if asked < SpirvVersion::V1_4 => {
                return Err(XrError::invalid_input(format!(
                    "a {} stage needs SPIR-V 1.4 or later; spirv-version {} was asked for",
                    stage.name(),
                    asked.name()
                )));
            }
            // Raised: 1.4, not Vulkan 1.2's own 1.5, the least the stages need.
            None if raised => self.spirv_version = Some(SpirvVersion::V1_4),
            _ => {}
        }
        Ok(self)
    }
}

/// Whether `stage`'s SPIR-V extension needs SPIR-V 1.4 (mesh and ray tracing stages).
pub fn needs_spirv_1_4(stage: ShaderStage) -> bool {
    matches!(stage.pipeline_kind(), xr_sourcebuild::PipelineKind::Mesh | xr_sourcebuild::PipelineKind::RayTracing)
}

/// A compiled SPIR-V module (validated when it came from
/// [`SpirvCompiler::compile`], not from [`SpirvCompiler::compile_unvalidated`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpirvModule {
    /// The words.
    pub words: Vec<u32>,
    /// Stage it was compiled for.
    pub stage: ShaderStage,
    /// Its entry point.
    pub entry_point: String,
    /// Warnings from the compiler, at the user's file and line.
    pub warnings: Vec<Diagnostic>,
    /// Every file its `#include`s read, in the order they were read.
    pub includes: Vec<IncludedFile>,
}

/// A file read for an `#include`: what an incremental build watches, and
/// what a source bundle carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IncludedFile {
    /// The name the `#include` asked for.
    pub requested: String,
    /// The path it was found at (or the in-memory name).
    pub path: String,
    /// Its text.
    pub text: String,
    /// The file whose `#include` read it, and the line of that directive.
    pub included_by: (String, u32),
}

impl IncludedFile {
    /// This inclusion as an edge of an include chain.
    pub fn edge(&self) -> IncludeEdge {
        IncludeEdge { file: self.path.clone(), includer: self.included_by.0.clone(), line: self.included_by.1 }
    }
}

/// The include edges of `includes`, for [`attach_include_chains`].
fn edges(includes: &IncludeLog) -> Vec<IncludeEdge> {
    includes.borrow().iter().map(IncludedFile::edge).collect()
}

/// Where an include callback records the files it reads.
type IncludeLog = Rc<RefCell<Vec<IncludedFile>>>;

/// A compiled program: its stage modules and every file they included.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompiledProgram {
    /// One module per stage, in the program's stage order.
    pub modules: Vec<crate::container::StageModule>,
    /// Every file any stage included (a file included twice is listed twice).
    pub includes: Vec<IncludedFile>,
    /// Every stage's warnings, at the user's file and line.
    pub warnings: Vec<Diagnostic>,
}

impl SpirvModule {
    /// The module as little-endian bytes (a `.spv` file).
    pub fn to_bytes(&self) -> Vec<u8> {
        self.words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }
}

/// A [`SpirvCompiler`] started on first use: attaching a build system stays
/// cheap, and one that never compiles never pays shaderc's start-up.
#[derive(Default)]
pub struct LazyCompiler(std::cell::OnceCell<SpirvCompiler>);

impl LazyCompiler {
    /// The compiler, started now if it was not yet.
    pub fn get(&self) -> Result<&SpirvCompiler, XrError> {
        if let Some(compiler) = self.0.get() {
            return Ok(compiler);
        }
        let compiler = SpirvCompiler::new()?;
        Ok(self.0.get_or_init(|| compiler))
    }
}

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
    fn preprocess_with_includes(
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

impl SpirvCompiler {
    /// A GLSL stage for Vulkan that Debian's glslang refused, compiled by
    /// glslang of 2026 where the Slang distribution ships it
    /// ([`crate::newer_toolchain`]): the extensions that glslang has
    /// learnt since (`GL_EXT_ray_tracing_position_fetch` among them). The
    /// source is preprocessed by Debian's glslang first (includes resolved
    /// by XR, defines applied, `#line` directives naming the files), since
    /// the newer one's interface takes one text and no include callback.
    /// `None` (the first errors stand) when that glslang is absent, the
    /// stage is not GLSL for Vulkan, or it refuses the stage too; except
    /// where Debian's glslang refused an extension it does not know: then
    /// the newer one's errors, at their files and lines, are the real ones.
    fn compile_with_newer_glslang(
        &self,
        desc: &SourceDesc,
        options: &SpirvOptions,
        diagnostics: &[Diagnostic],
    ) -> Option<Result<SpirvModule, BuildError>> {
        if desc.language.as_str() != LANGUAGE_GLSL || options.target == TargetEnv::OpenGl45 {
            return None;
        }
        let newer = crate::newer_toolchain::newer_toolchain().ok()?;
        let (text, includes) = self.preprocess_with_includes(desc, options).ok()?;
        // Without `#version` glslang takes GLSL 1.10, which Vulkan's rules refuse.
        if !text.lines().any(|l| l.trim_start().starts_with("#version")) {
            return None;
        }
        let file = desc.file_name.as_str();
        let spirv = options.spirv_version.unwrap_or_else(|| options.target.default_spirv());
        let context = format!("{file} ({} {})", desc.language, desc.stage.name());
        let words = match newer.compile_glsl(&text, file, desc.stage, spirv, &desc.entry_point) {
            Ok(words) => words,
            Err(log) => {
                let unknown_extension = diagnostics.iter().any(|d| d.message.contains("extension not supported"));
                let mut errors = messages::parse_glslang_log(&log, file);
                if !unknown_extension || !errors.iter().any(|d| d.severity == Severity::Error) {
                    return None;
                }
                let edges: Vec<IncludeEdge> = includes.iter().map(IncludedFile::edge).collect();
                attach_include_chains(&mut errors, &edges);
                errors.push(Diagnostic::new(
                    Severity::Info,
                    file,
                    0,
                    0,
                    format!(
                        "errors of glslang {} (Slang's), which knows the extension Debian's glslang refused",
                        crate::newer_toolchain::RELEASE
                    ),
                ));
                return Some(Err(BuildError::from_diagnostics(&context, errors)));
            }
        };
        let first = diagnostics
            .iter()
            .find(|d| d.severity == Severity::Error)
            .map_or_else(String::new, |d| format!(": {}:{}: {}", d.file, d.line, d.message));
        let note = Diagnostic::new(
            Severity::Info,
            file,
            0,
            0,
            format!(
                "compiled by glslang {} (Slang's), which knows what Debian's glslang refused{first}",
                crate::newer_toolchain::RELEASE
            ),
        );
        let module = SpirvModule {
            words,
            stage: desc.stage,
            entry_point: desc.entry_point.to_string(),
            warnings: vec![note],
            includes,
        };
        Some(
            check_entry_point(&module, file)
                .map(|()| module)
                .map_err(|message| BuildError::from_diagnostics(&context, vec![Diagnostic::error(file, 0, message)])),
        )
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
fn check_entry_point(module: &SpirvModule, file: &str) -> Result<(), String> {
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

/// The compiler identity of a build system `name` at `version` that
/// compiles with this core: what goes into every key of its artifacts.
pub fn compiler_identity_of(name: &str, version: &str) -> String {
    format!("{name} {version} / {}", compiler_identity())
}

/// What the SPIR-V compiler is, for keys that must change when it does:
/// this crate's version and the SPIR-V version glslang writes.
pub fn compiler_identity() -> String {
    let (major, minor) = shaderc::get_spirv_version();
    format!(
        "xr-spirv {} / glslang (shaderc-rs 0.10), SPIR-V {major}.{minor} / {}",
        env!("CARGO_PKG_VERSION"),
        crate::newer_toolchain::identity()
    )
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

/// `words` without the debug information that names source text and lines
/// (`OpString`, `OpSourceContinued`, `OpLine`, `OpNoLine`,
/// `OpModuleProcessed`, and `OpSource`'s file and text), keeping the names
/// (`OpName`, `OpMemberName`) that reflection and the constant table use.
pub fn strip_source_debug_info(words: &[u32]) -> Vec<u32> {
    use crate::reflect::instructions;
    use xr_spirv_object::spirv::Op;
    use xr_spirv_object::walk::{self, literal_string};
    // Not a module this can read: left as it is, for the validator to judge.
    let Ok(instructions) = instructions(words) else { return words.to_vec() };
    // Non-semantic instructions (debugPrintf's format strings) use OpString:
    // such a module is left whole.
    let non_semantic = instructions.iter().any(|i| {
        i.op() == Some(Op::ExtInstImport)
            && literal_string(i.operands.get(1..).unwrap_or(&[])).starts_with("NonSemantic.")
    });
    if non_semantic {
        return words.to_vec();
    }
    let mut out = words[..walk::HEADER_WORDS].to_vec();
    for i in &instructions {
        match i.op() {
            Some(Op::SourceContinued | Op::String | Op::Line | Op::NoLine | Op::ModuleProcessed) => {}
            // Language and version only.
            Some(Op::Source) if i.operands.len() >= 2 => out.extend(walk::instruction(Op::Source, &i.operands[..2])),
            _ => out.extend_from_slice(&words[i.offset..i.end()]),
        }
    }
    out
}
