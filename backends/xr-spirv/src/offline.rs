//! The offline compile of the SPIR-V targets, shared by the build systems
//! that declare them: a program in, a linked and validated SPIR-V object
//! (`xr_spirv_object`) with the files it read and its reflection out.

use crate::{
    CompiledProgram, LazyCompiler, Optimization, SpirvOptions, SpirvVersion, TargetEnv, container::StageModule,
    reflect::Reflection,
};
use abi_stable::std_types::RVec;
use serde_json::json;
use std::fmt::Write as _;
use xr_device::XrError;
use xr_sourcebuild::{
    Availability, BuildError, BuildSystemInfo, CompilePair, FileRead, OfflineArtifact, OfflineRequest, OptionDecl,
    ProgramDesc, ProgramReflection, ReflectedConstant, ReflectedOverride, ReflectedResource, ShaderStage, SourceReach,
    StageOutput,
};

thread_local! {
    /// One compiler per thread that compiles offline (each costs ~100 ms to start).
    static COMPILER: LazyCompiler = LazyCompiler::default();
}

/// Runs `body` with this thread's compiler.
pub fn with_compiler<T>(body: impl FnOnce(&crate::SpirvCompiler) -> Result<T, BuildError>) -> Result<T, BuildError> {
    COMPILER.with(|compiler| body(compiler.get()?))
}

/// The (language → `target`) pairs of the SPIR-V compile for a target
/// whose environment is `base`, each with the options it takes. Both of
/// glslang's front ends read `#include`d files, found by the kit's
/// resolution ([`SourceReach::INCLUDES`]).
pub fn compile_pairs(target: &str, base: TargetEnv) -> RVec<CompilePair> {
    crate::languages()
        .iter()
        .map(|language| {
            let mut options = vec![
                OptionDecl::choice(
                    "optimize",
                    &["none", "size", "performance"],
                    "none",
                    "SPIR-V optimisation; names, constants and resources stay reflectable",
                ),
                OptionDecl::choice(
                    "spirv-version",
                    &["1.0", "1.1", "1.2", "1.3", "1.4", "1.5", "1.6"],
                    "",
                    "SPIR-V version written (by default the target environment's own)",
                ),
            ];
            if base != TargetEnv::OpenGl45 {
                options.push(OptionDecl::choice(
                    "vulkan",
                    &["1.0", "1.1", "1.2", "1.3"],
                    "1.0",
                    "Vulkan version the modules are compiled and validated for",
                ));
            }
            if language.name == crate::LANGUAGE_HLSL {
                options.push(OptionDecl::stage_selector("profile", &HLSL_PROFILES, HLSL_PROFILE_HELP));
            }
            // glslang's HLSL front end has no mesh or ray tracing stages,
            // and OpenGL has neither.
            let stages = if base == TargetEnv::OpenGl45 || language.name == crate::LANGUAGE_HLSL {
                ShaderStage::CLASSIC
            } else {
                &ShaderStage::ALL[..]
            };
            CompilePair::new(&language.name, target)
                .with_options(options)
                .with_stages(stages.iter().copied())
                .reaching(SourceReach::INCLUDES)
        })
        .collect()
}

/// HLSL shader profiles by the stage they name (`vs_5_0`, `ps_6_0`, …).
const HLSL_PROFILES: [(&str, ShaderStage); 6] = [
    ("vs_*", ShaderStage::Vertex),
    ("ps_*", ShaderStage::Fragment),
    ("gs_*", ShaderStage::Geometry),
    ("hs_*", ShaderStage::TessControl),
    ("ds_*", ShaderStage::TessEvaluation),
    ("cs_*", ShaderStage::Compute),
];

const HLSL_PROFILE_HELP: &str = "HLSL shader profile (vs_5_0, ps_6_0, …): names the stage of a single file";

/// Checks a `profile` option against the program: a shader model of
/// digits (`5_0`, `4_0_level_9_1` is not one), and every stage the
/// profile's.
fn check_profile(request: &OfflineRequest) -> Result<(), XrError> {
    let Some(profile) = request.option("profile") else { return Ok(()) };
    let stage = HLSL_PROFILES.iter().find(|(pattern, _)| profile.starts_with(pattern.trim_end_matches('*')));
    let model = profile.split_once('_').map_or("", |(_, model)| model);
    let model_ok =
        model.split('_').all(|part| !part.is_empty() && part.chars().all(|c| c.is_ascii_digit() || c == 'x'));
    let Some((_, stage)) = stage.filter(|_| model_ok) else {
        return Err(XrError::invalid_input(format!(
            "unknown HLSL profile '{profile}' (vs_5_0, ps_5_0, gs_5_0, hs_5_0, ds_5_0, cs_5_0, …)"
        )));
    };
    match request.program.stages.iter().find(|s| s.stage != *stage) {
        Some(other) => Err(XrError::invalid_input(format!(
            "profile {profile} is for {} stages, but {} is a {} stage",
            stage.name(),
            other.file_name,
            other.stage.name()
        ))),
        None => Ok(()),
    }
}

/// The SPIR-V options of `request`: `vulkan` (`1.0` … `1.3`, Vulkan targets
/// only), `spirv-version` (`1.0` … `1.6`) and `optimize` (`none`, `size`,
/// `performance`) on top of `base`.
pub fn options_of(request: &OfflineRequest, base: TargetEnv) -> Result<SpirvOptions, XrError> {
    check_profile(request)?;
    let mut options = SpirvOptions::new(base);
    if base != TargetEnv::OpenGl45
        && let Some(version) = request.option("vulkan")
    {
        options.target = TargetEnv::from_name(&format!("vulkan{version}")).ok_or_else(|| {
            XrError::invalid_input(format!("unknown Vulkan version '{version}' (1.0, 1.1, 1.2 or 1.3)"))
        })?;
    }
    if let Some(version) = request.option("spirv-version") {
        options.spirv_version = Some(
            SpirvVersion::from_name(version)
                .ok_or_else(|| XrError::invalid_input(format!("unknown SPIR-V version '{version}' (1.0 … 1.6)")))?,
        );
    }
    if let Some(level) = request.option("optimize") {
        options.optimization = match level {
            "none" => Optimization::None,
            "size" => Optimization::Size,
            "performance" => Optimization::Performance,
            other => {
                return Err(XrError::invalid_input(format!(
                    "unknown optimization level '{other}' (none, size or performance)"
                )));
            }
        };
    }
    let stages: Vec<ShaderStage> = request.program.stages.iter().map(|s| s.stage).collect();
    options.for_stages(&stages)
}

/// Whether an offline compile makes the reflection and the stage outputs
/// (`xr compile`, `xr reflect`) or not (a build for the store, which keeps
/// the object, the files read and the warnings only: the reflection is
/// ~6% of a build's work).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reflect {
    /// Reflection and stage outputs too.
    Yes,
    /// The object, files read and warnings only.
    No,
}

/// A SPIR-V target as the build system plugin that compiles it declares
/// it: the plugin (`compiler`, at `version`), the target's name and its
/// environment. What the SPIR-V build systems share — GLSL and HLSL in,
/// every stage, the pairs and options, the compiler's identity and the
/// offline compile — is written here once.
#[derive(Debug, Clone, Copy)]
pub struct SpirvTarget {
    /// The plugin's build system name (`xr-compiler-vk-spirv`).
    pub compiler: &'static str,
    /// The plugin's version, part of its compiler identity.
    pub version: &'static str,
    /// The target (`vk-spirv`).
    pub target: &'static str,
    /// The environment the target's modules are validated for.
    pub env: TargetEnv,
}

impl SpirvTarget {
    /// The build system's info: compiled offline and at run time into a
    /// compatible object, from the SPIR-V core's languages, for every
    /// stage. The plugin fills in what differs (device kinds, loads,
    /// priority) with struct update syntax.
    pub fn info(&self, description: &str) -> BuildSystemInfo {
        let availability =
            Availability::RUNTIME_COMPILE | Availability::OFFLINE_COMPILE | Availability::COMPATIBLE_OBJECT;
        BuildSystemInfo {
            languages: crate::languages().into(),
            stages: ShaderStage::ALL.to_vec().into(),
            compiler_identity: crate::compiler_identity_of(self.compiler, self.version).into(),
            compiles: compile_pairs(self.target, self.env),
            ..BuildSystemInfo::new(self.compiler, description, availability)
        }
    }

    /// The offline compile into this target ([`compile_for_target`]).
    pub fn compile(&self, request: &OfflineRequest, reflect: Reflect) -> Result<OfflineArtifact, BuildError> {
        compile_for_target(request, (self.compiler, self.target), self.env, reflect)
    }
}

/// A SPIR-V plugin's offline compile: refuses a request for any target but
/// its own `target` (naming the plugin `name`), then [`compile_object`].
pub fn compile_for_target(
    request: &OfflineRequest,
    (name, target): (&str, &str),
    base: TargetEnv,
    reflect: Reflect,
) -> Result<OfflineArtifact, BuildError> {
    if request.target != target {
        return Err(XrError::invalid_input(format!("{name} compiles into {target}, not {}", request.target)).into());
    }
    compile_object(request, base, reflect)
}

/// Compiles `request` into the SPIR-V object of a target whose environment
/// is `base`: compiled, linked ([`crate::finish_program`]) and validated
/// once, as the loaders will load it; the reflection and the stage outputs
/// made only where `reflect` asks.
pub fn compile_object(
    request: &OfflineRequest,
    base: TargetEnv,
    reflect: Reflect,
) -> Result<OfflineArtifact, BuildError> {
    let options = options_of(request, base)?;
    let desc = &request.program;
    let compiled = with_compiler(|compiler| compiler.compile_program(desc, &options))?;
    let files_read = files_read(desc, &compiled);
    let CompiledProgram { mut modules, warnings, .. } = compiled;
    let context = format!("program '{}'", desc.name);
    crate::finish_program(&mut modules, options.target).map_err(|e| XrError::new(e.kind, format!("{context}: {e}")))?;
    crate::validate_program(&modules, options.target, &context)?;
    artifact_of(&modules, files_read, warnings, reflect)
}

/// The artifact of a program's finished, validated modules: the object,
/// and where `reflect` asks, the reflection and each stage's own module.
pub fn artifact_of(
    modules: &[StageModule],
    files_read: RVec<FileRead>,
    warnings: Vec<xr_sourcebuild::Diagnostic>,
    reflect: Reflect,
) -> Result<OfflineArtifact, BuildError> {
    let (reflection, stages) = match reflect {
        Reflect::No => (ProgramReflection::default(), RVec::new()),
        Reflect::Yes => (
            reflection_of(modules)?,
            modules
                .iter()
                .map(|m| StageOutput {
                    stage: m.stage,
                    bytes: m.words.iter().flat_map(|w| w.to_le_bytes()).collect::<Vec<u8>>().into(),
                })
                .collect(),
        ),
    };
    Ok(OfflineArtifact {
        bytes: crate::container::encode(modules).into(),
        files_read,
        warnings: warnings.into(),
        reflection,
        stages,
    })
}

/// Every file a compile read: the stages' own files and every include, each
/// with the hash of the text compiled.
pub fn files_read(desc: &ProgramDesc, compiled: &CompiledProgram) -> RVec<FileRead> {
    let mut files: Vec<FileRead> = desc
        .stages
        .iter()
        .map(|s| FileRead::of_text(&s.file_name, s.source.as_bytes()))
        .chain(compiled.includes.iter().map(|i| FileRead::of_text(&i.path, i.text.as_bytes())))
        .collect();
    files.sort();
    files.dedup();
    files.into()
}

/// The reflection of a program's modules: the constants, resources and
/// specialization constants, plus the full reflection of each stage as JSON
/// and as text.
pub fn reflection_of(modules: &[StageModule]) -> Result<ProgramReflection, XrError> {
    let mut reflection = ProgramReflection::default();
    let mut stages_json = Vec::new();
    let mut text = String::new();
    for module in modules {
        let r = crate::reflect(&module.words, &module.entry_point).map_err(|e| XrError {
            message: format!("{} ({} stage): {}", module.file, module.stage.name(), e.message).into(),
            ..e
        })?;
        let stage = module.stage;
        for u in &r.uniforms {
            reflection.constants.push(ReflectedConstant {
                name: u.name.as_str().into(),
                ty: u.ty.as_str().into(),
                stage,
            });
        }
        for block in r.uniform_blocks.iter().chain(&r.push_constants) {
            for m in &block.members {
                reflection.constants.push(ReflectedConstant {
                    name: m.name.as_str().into(),
                    ty: m.ty.as_str().into(),
                    stage,
                });
            }
        }
        let resource = |name: &str, kind: &str, set: u32, binding: u32| ReflectedResource {
            name: name.into(),
            kind: kind.into(),
            set,
            binding,
            stage,
        };
        for b in &r.uniform_blocks {
            reflection.resources.push(resource(&b.name, "uniform-block", b.set, b.binding));
        }
        for b in &r.storage_buffers {
            reflection.resources.push(resource(&b.name, "storage-buffer", b.set, b.binding));
        }
        for i in &r.images {
            reflection.resources.push(resource(&i.name, &i.kind.replace(' ', "-"), i.set, i.binding));
        }
        for c in &r.spec_constants {
            if !reflection.overrides.iter().any(|o| o.id == c.id) {
                reflection.overrides.push(ReflectedOverride {
                    name: c.name.as_str().into(),
                    id: c.id,
                    ty: c.ty.as_str().into(),
                    default: c.default.as_str().into(),
                });
            }
        }
        stages_json.push(stage_json(module, &r));
        write_stage_text(&mut text, module, &r);
    }
    reflection.json = json!({ "stages": stages_json }).to_string().into();
    reflection.text = text.into();
    Ok(reflection)
}

fn stage_json(module: &StageModule, r: &Reflection) -> serde_json::Value {
    let blocks = |list: &[crate::reflect::Block]| -> Vec<serde_json::Value> {
        list.iter()
            .map(|b| {
                json!({
                    "name": b.name, "set": b.set, "binding": b.binding, "size": b.size, "count": b.count,
                    "members": b.members.iter().map(|m| json!({"name": m.name, "offset": m.offset, "ty": m.ty, "layout": m.layout.as_ref().map(layout_json)})).collect::<Vec<_>>(),
                })
            })
            .collect()
    };
    let io = |list: &[crate::reflect::InterfaceVariable]| -> Vec<serde_json::Value> {
        list.iter()
            .map(|v| json!({"name": v.name, "location": v.location, "component": v.component, "ty": v.ty}))
            .collect()
    };
    json!({
        "file": module.file,
        "entry_point": r.entry_point,
        "stage": module.stage.name(),
        "uniforms": r.uniforms.iter().map(|u| json!({
            "name": u.name, "location": u.location, "ty": u.ty,
            "layout": {"scalar": scalar_name(u.constant_type.scalar), "columns": u.constant_type.columns, "rows": u.constant_type.rows, "array_size": u.array_size},
        })).collect::<Vec<_>>(),
        "uniform_blocks": blocks(&r.uniform_blocks),
        "storage_buffers": blocks(&r.storage_buffers),
        "push_constants": blocks(&r.push_constants),
        "images": r.images.iter().map(|i| json!({"name": i.name, "set": i.set, "binding": i.binding, "kind": i.kind, "count": i.count})).collect::<Vec<_>>(),
        "spec_constants": r.spec_constants.iter().map(|c| json!({"name": c.name, "id": c.id, "ty": c.ty, "default": c.default})).collect::<Vec<_>>(),
        "inputs": io(&r.inputs),
        "outputs": io(&r.outputs),
    })
}

/// How a member keeps its components, for code that lays out the same
/// bytes (`xr bindgen`'s structs): the scalar kind, columns and rows of one
/// element, the array length and strides, the matrix order.
fn layout_json(layout: &xr_sourcebuild::MemberLayout) -> serde_json::Value {
    json!({
        "scalar": scalar_name(layout.ty.scalar),
        "columns": layout.ty.columns,
        "rows": layout.ty.rows,
        "array_size": layout.array_size,
        "array_stride": layout.array_stride,
        "matrix_stride": layout.matrix_stride,
        "row_major": layout.row_major,
    })
}

fn scalar_name(scalar: xr_sourcebuild::ScalarKind) -> &'static str {
    use xr_sourcebuild::ScalarKind;
    match scalar {
        ScalarKind::Bool => "bool",
        ScalarKind::Int => "int",
        ScalarKind::UInt => "uint",
        ScalarKind::Float => "float",
        ScalarKind::Sampler => "sampler",
        ScalarKind::Unsupported => "unsupported",
    }
}

fn write_stage_text(out: &mut String, module: &StageModule, r: &Reflection) {
    let _ = writeln!(out, "{} ({} entry point '{}')", module.file, module.stage.name(), r.entry_point);
    for u in &r.uniforms {
        let _ = writeln!(out, "  uniform location {} : {} {}", u.location, u.name, u.ty);
    }
    for (title, list) in [
        ("uniform block", &r.uniform_blocks),
        ("storage buffer", &r.storage_buffers),
        ("push constants", &r.push_constants),
    ] {
        for b in list {
            let size = b.size.map(|s| format!(", {s} bytes")).unwrap_or_default();
            let _ = writeln!(out, "  {title} {} (set {}, binding {}{size})", b.name, b.set, b.binding);
            for m in &b.members {
                let _ = writeln!(out, "    +{:<4} {} : {}", m.offset, m.name, m.ty);
            }
        }
    }
    for i in &r.images {
        let _ = writeln!(out, "  {} {} (set {}, binding {})", i.kind, i.name, i.set, i.binding);
    }
    for c in &r.spec_constants {
        let _ = writeln!(out, "  specialization constant {} (id {}) : {} = {}", c.name, c.id, c.ty, c.default);
    }
    for (title, list) in [("input", &r.inputs), ("output", &r.outputs)] {
        for v in list {
            let _ = writeln!(out, "  {title} location {} : {} {}", v.location, v.name, v.ty);
        }
    }
}

/// The stage modules of a stored SPIR-V object, with every override that a
/// stage declares set as its specialization constant (Mesa refuses ids a
/// module does not declare, so each stage gets only its own).
pub fn specialized_modules(
    artifact: &[u8],
    overrides: &[xr_sourcebuild::OverrideValue],
    context: &str,
) -> Result<Vec<StageModule>, XrError> {
    let mut modules = crate::container::decode(artifact)
        .ok_or_else(|| XrError::invalid_input(format!("{context}: the SPIR-V object is damaged")))?;
    for module in &mut modules {
        let declared = crate::reflect::spec_constant_ids(&module.words)?;
        for value in overrides.iter().filter(|o| declared.contains(&o.id)) {
            module.specializations.retain(|s| s.id != value.id);
            module.specializations.push(xr_sourcebuild::Specialization { id: value.id, bits: value.bits });
        }
    }
    Ok(modules)
}

/// Refuses a load of anything but `target` by `path`: the registry only
/// hands a build system what it declared, so this is a host error.
pub fn check_load(
    request: &xr_sourcebuild::ArtifactLoad,
    build_system: &str,
    loads: &[(&str, xr_sourcebuild::LoadPath)],
) -> Result<(), XrError> {
    if loads.iter().any(|(target, path)| request.target == *target && request.path == *path) {
        return Ok(());
    }
    Err(XrError::invalid_input(format!("{build_system} does not load {} by the {} path", request.target, request.path)))
}
