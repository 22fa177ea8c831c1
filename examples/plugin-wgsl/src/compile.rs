//! The offline compile: WGSL → naga → SPIR-V, one module per stage, with
//! overrides made specialization constants (see [`crate::spec`]).

use crate::blocks;
use crate::reflect::{self, StageReflection};
use crate::spec::{self, SpecPatch, SpecScalar};
use naga::back::spv;
use naga::proc::ExpressionKindTracker;
use naga::valid::{Capabilities, ModuleInfo, ValidationFlags, Validator};
use naga::{Arena, Expression, Handle, Module, Override, Span};
use std::collections::BTreeMap;
use xr_device::XrError;
use xr_sourcebuild::{
    BuildError, Diagnostic, FileRead, OfflineArtifact, OfflineRequest, ShaderStage, SourceDesc, StageOutput,
};
use xr_spirv_object::StageModule;

/// The version of naga this plugin links (part of its compiler identity).
pub const NAGA_VERSION: &str = "30.0.2";

/// The targets this compiler writes.
pub const TARGETS: [&str; 2] = ["vk-spirv", "gl-spirv"];

/// What naga's validator lets through: the features of Vulkan 1.0 and
/// OpenGL 4.5 devices (some optional there), nothing that needs a newer
/// SPIR-V or an extension most drivers lack. Push constants
/// (`var<immediate>`) pass here and are refused for `gl-spirv` afterwards,
/// with a clearer message.
fn capabilities() -> Capabilities {
    Capabilities::IMMEDIATES
        | Capabilities::FLOAT64
        | Capabilities::SHADER_INT64
        | Capabilities::PRIMITIVE_INDEX
        | Capabilities::CLIP_DISTANCES
        | Capabilities::CULL_DISTANCE
        | Capabilities::MULTIVIEW
        | Capabilities::EARLY_DEPTH_TEST
        | Capabilities::MULTISAMPLED_SHADING
        | Capabilities::DUAL_SOURCE_BLENDING
        | Capabilities::CUBE_ARRAY_TEXTURES
        | Capabilities::STORAGE_TEXTURE_16BIT_NORM_FORMATS
        | Capabilities::TEXTURE_AND_SAMPLER_BINDING_ARRAY
        | Capabilities::BUFFER_BINDING_ARRAY
        | Capabilities::STORAGE_BUFFER_BINDING_ARRAY
        | Capabilities::STORAGE_TEXTURE_BINDING_ARRAY
}

/// The SPIR-V target asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// `vk-spirv`.
    Vulkan,
    /// `gl-spirv`.
    OpenGl,
}

impl Target {
    /// The target named `name`, if this compiler writes it.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "vk-spirv" => Some(Target::Vulkan),
            "gl-spirv" => Some(Target::OpenGl),
            _ => None,
        }
    }
}

/// One stage, compiled.
#[derive(Clone, Debug)]
pub struct CompiledStage {
    /// The stage's module, as the artifact stores it.
    pub module: StageModule,
    /// What the stage reads.
    pub reflection: StageReflection,
}

/// Compiles every stage of `request.program` (the body of
/// `SourceBuildSystem::compile_offline`).
pub fn compile(request: &OfflineRequest) -> Result<OfflineArtifact, BuildError> {
    let program = &request.program;
    let context = format!("program '{}'", program.name);
    let target = Target::from_name(&request.target).ok_or_else(|| {
        XrError::invalid_input(format!(
            "{context}: xr-compiler-wgsl compiles into {} only, not '{}'",
            TARGETS.join(" and "),
            request.target
        ))
    })?;
    let version = spirv_version(request, target).map_err(|e| XrError::invalid_input(format!("{context}: {e}")))?;
    if program.stages.is_empty() {
        return Err(XrError::invalid_input(format!("{context}: the program has no stages")).into());
    }

    let mut diagnostics = Vec::new();
    let mut stages = Vec::new();
    for desc in program.stages.iter() {
        match compile_stage(desc, target, version) {
            Ok(stage) => stages.push(stage),
            // Stages that share a file report its errors once.
            Err(d) => {
                for d in d {
                    if !diagnostics.contains(&d) {
                        diagnostics.push(d);
                    }
                }
            }
        }
    }
    if !diagnostics.is_empty() {
        return Err(BuildError::from_diagnostics(&context, diagnostics));
    }

    let modules: Vec<StageModule> = stages.iter().map(|s| s.module.clone()).collect();
    let mut files_read: Vec<FileRead> =
        program.stages.iter().map(|s| FileRead::of_text(&s.file_name, s.source.as_bytes())).collect();
    files_read.sort();
    files_read.dedup();
    let reflections: Vec<StageReflection> = stages.iter().map(|s| s.reflection.clone()).collect();
    Ok(OfflineArtifact {
        bytes: xr_spirv_object::encode(&modules).into(),
        files_read: files_read.into(),
        warnings: Vec::new().into(),
        reflection: reflect::program_reflection(&reflections),
        stages: modules
            .iter()
            .map(|m| StageOutput {
                stage: m.stage,
                bytes: m.words.iter().flat_map(|w| w.to_le_bytes()).collect::<Vec<u8>>().into(),
            })
            .collect::<Vec<_>>()
            .into(),
    })
}

/// The SPIR-V version to write: 1.0 unless `spirv-version` asks for another
/// (Vulkan only: `ARB_gl_spirv` reads SPIR-V 1.0). The other options of
/// `xr build` are checked and ignored: naga has no optimizer, and SPIR-V
/// 1.0 loads on every Vulkan version.
fn spirv_version(request: &OfflineRequest, target: Target) -> Result<(u8, u8), String> {
    if let Some(level) = request.option("optimize")
        && !["none", "size", "performance"].contains(&level)
    {
        return Err(format!("optimize must be none, size or performance, not '{level}'"));
    }
    if let Some(vulkan) = request.option("vulkan")
        && !["1.0", "1.1", "1.2", "1.3"].contains(&vulkan)
    {
        return Err(format!("vulkan must be 1.0, 1.1, 1.2 or 1.3, not '{vulkan}'"));
    }
    let Some(text) = request.option("spirv-version") else { return Ok((1, 0)) };
    let version = match text {
        "1.0" => (1, 0),
        "1.1" => (1, 1),
        "1.2" => (1, 2),
        "1.3" => (1, 3),
        "1.4" => (1, 4),
        "1.5" => (1, 5),
        "1.6" => (1, 6),
        _ => return Err(format!("spirv-version must be 1.0 … 1.6, not '{text}'")),
    };
    if target == Target::OpenGl && version != (1, 0) {
        return Err(format!("gl-spirv is SPIR-V 1.0 (ARB_gl_spirv); spirv-version {text} is for vk-spirv only"));
    }
    Ok(version)
}

/// A diagnostic at `span` of `source` (line 0 where the span is unknown).
pub fn diagnostic_at(file: &str, source: &str, span: Span, message: impl Into<String>) -> Diagnostic {
    let (line, column) = line_and_column(source, span);
    let mut diagnostic = Diagnostic::error(file, line, message);
    diagnostic.column = column;
    diagnostic
}

/// The 1-based line and column (in bytes) where `span` starts; (0, 0)
/// for a span naga did not record.
pub fn line_and_column(source: &str, span: Span) -> (u32, u32) {
    let Some(range) = span.to_range() else { return (0, 0) };
    let bytes = source.as_bytes();
    let start = range.start.min(bytes.len());
    let before = &bytes[..start];
    let line = before.iter().filter(|b| **b == b'\n').count() + 1;
    let line_start = before.iter().rposition(|b| *b == b'\n').map(|p| p + 1).unwrap_or(0);
    (line as u32, (start - line_start + 1) as u32)
}

/// An error and every error it wraps, joined with `: `.
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(next) = source {
        let line = next.to_string();
        if !text.contains(&line) {
            text.push_str(": ");
            text.push_str(&line);
        }
        source = next.source();
    }
    text
}

fn naga_stage(stage: ShaderStage) -> Option<naga::ShaderStage> {
    match stage {
        ShaderStage::Vertex => Some(naga::ShaderStage::Vertex),
        ShaderStage::Fragment => Some(naga::ShaderStage::Fragment),
        ShaderStage::Compute => Some(naga::ShaderStage::Compute),
        _ => None,
    }
}

fn stage_name(stage: naga::ShaderStage) -> String {
    format!("{stage:?}").to_lowercase()
}

/// Parses and validates `source` as WGSL, or says where it is wrong.
pub fn parse_and_validate(
    file: &str,
    source: &str,
    capabilities: Capabilities,
) -> Result<(Module, ModuleInfo), Vec<Diagnostic>> {
    let module = naga::front::wgsl::parse_str(source).map_err(|e| {
        let span = e.labels().next().map(|(span, _)| span).unwrap_or_default();
        let mut message = e.message().to_owned();
        for (_, label) in e.labels() {
            if !label.is_empty() && !message.contains(label) {
                message.push_str(&format!(" ({label})"));
            }
        }
        for note in e.notes() {
            message.push_str(&format!("; {note}"));
        }
        vec![diagnostic_at(file, source, span, message)]
    })?;
    let info = Validator::new(ValidationFlags::all(), capabilities).validate(&module).map_err(|e| {
        let span = e.spans().next().map(|(span, _)| *span).unwrap_or_default();
        vec![diagnostic_at(file, source, span, error_chain(&e))]
    })?;
    Ok((module, info))
}

/// An override, checked: it has an id, a 32-bit numeric type and a default.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OverrideDecl {
    /// Its position among the module's overrides (picks its sentinel).
    pub index: usize,
    /// Its name.
    pub name: String,
    /// Its `@id`.
    pub id: u32,
    /// Its type.
    pub scalar: SpecScalar,
    /// Its default, as bits.
    pub default: u32,
}

/// The overrides of `module`, checked (see [`OverrideDecl`]), plus a check
/// that none is used where naga would evaluate it away: see [`folded_uses`].
pub fn overrides(module: &Module, file: &str, source: &str) -> Result<Vec<OverrideDecl>, Vec<Diagnostic>> {
    let mut decls = Vec::new();
    let mut diagnostics = Vec::new();
    for (index, (handle, o)) in module.overrides.iter().enumerate() {
        let span = module.overrides.get_span(handle);
        let name = o.name.clone().unwrap_or_else(|| format!("#{index}"));
        let mut error = |message: String| diagnostics.push(diagnostic_at(file, source, span, message));
        let Some(id) = o.id else {
            error(format!(
                "override '{name}' has no @id: give it one (`@id(0) override {name} …`) so that it can become a \
                 specialization constant"
            ));
            continue;
        };
        let scalar = match module.types[o.ty].inner {
            naga::TypeInner::Scalar(s) if s == naga::Scalar::F32 => SpecScalar::Float,
            naga::TypeInner::Scalar(s) if s == naga::Scalar::I32 => SpecScalar::Int,
            naga::TypeInner::Scalar(s) if s == naga::Scalar::U32 => SpecScalar::UInt,
            naga::TypeInner::Scalar(s) if s == naga::Scalar::BOOL => {
                error(format!(
                    "override '{name}' is a bool: xr-compiler-wgsl cannot make bool overrides specialization \
                     constants; use a u32 override and compare it with 0"
                ));
                continue;
            }
            _ => {
                error(format!(
                    "override '{name}' has type {}; xr-compiler-wgsl supports f32, i32 and u32 overrides",
                    type_name(module, o.ty)
                ));
                continue;
            }
        };
        let Some(init) = o.init else {
            error(format!("override '{name}' has no default value: give it one (`= …`)"));
            continue;
        };
        match default_bits(module, init, scalar) {
            Some(default) => decls.push(OverrideDecl { index, name, id: u32::from(id), scalar, default }),
            None => error(format!(
                "override '{name}': its default must be a constant value, not an expression of other overrides"
            )),
        }
    }
    diagnostics.extend(folded_uses(module, file, source));
    if diagnostics.is_empty() { Ok(decls) } else { Err(diagnostics) }
}

fn type_name(module: &Module, ty: Handle<naga::Type>) -> String {
    use naga::common::wgsl::TypeContext;
    module.to_ctx().type_to_string(ty)
}

/// The bits of the constant global expression `expr` as a `scalar`.
fn default_bits(module: &Module, expr: Handle<Expression>, scalar: SpecScalar) -> Option<u32> {
    match module.global_expressions[expr] {
        Expression::Literal(literal) => match (scalar, literal) {
            (SpecScalar::Float, naga::Literal::F32(v)) => Some(v.to_bits()),
            (SpecScalar::Int, naga::Literal::I32(v)) => Some(v as u32),
            (SpecScalar::UInt, naga::Literal::U32(v)) => Some(v),
            _ => None,
        },
        Expression::Constant(c) => default_bits(module, module.constants[c].init, scalar),
        Expression::ZeroValue(_) => Some(0),
        _ => None,
    }
}

/// The operands of the expressions that can involve overrides.
fn operands(expr: &Expression) -> Vec<Handle<Expression>> {
    match *expr {
        Expression::Compose { ref components, .. } => components.clone(),
        Expression::Splat { value, .. } => vec![value],
        Expression::AccessIndex { base, .. } => vec![base],
        Expression::Access { base, index } => vec![base, index],
        Expression::Swizzle { vector, .. } => vec![vector],
        Expression::Unary { expr, .. } => vec![expr],
        Expression::Binary { left, right, .. } => vec![left, right],
        Expression::Math { arg, arg1, arg2, arg3, .. } => [Some(arg), arg1, arg2, arg3].into_iter().flatten().collect(),
        Expression::As { expr, .. } => vec![expr],
        Expression::Select { condition, accept, reject } => vec![condition, accept, reject],
        Expression::Relational { argument, .. } => vec![argument],
        Expression::ArrayLength(expr) => vec![expr],
        _ => Vec::new(),
    }
}

/// The overrides `expr` reads, directly or through its operands.
fn overrides_in(arena: &Arena<Expression>, expr: Handle<Expression>, out: &mut Vec<Handle<Override>>) {
    match arena[expr] {
        Expression::Override(o) => {
            if !out.contains(&o) {
                out.push(o);
            }
        }
        ref e => {
            for operand in operands(e) {
                overrides_in(arena, operand, out);
            }
        }
    }
}

/// Every use of an override that naga evaluates when it resolves the
/// overrides, as an error at the use.
///
/// naga's constant evaluator folds every expression whose operands are all
/// constants or overrides (`GAIN * 2.0`, `f32(COUNT)`, an override's
/// default computed from another, a workgroup size, an array length): with
/// the override resolved to its sentinel, the folded value would be
/// baked into the SPIR-V and never follow the specialization constant.
/// Building a vector of overrides (`vec3(GAIN)`) keeps their values, so it
/// is allowed; using one as an index is not (naga may resolve the index).
pub fn folded_uses(module: &Module, file: &str, source: &str) -> Vec<Diagnostic> {
    // The first folded use of each override.
    let mut found: BTreeMap<Handle<Override>, (Span, &'static str)> = BTreeMap::new();
    let mut check = |arena: &Arena<Expression>| {
        let kinds = ExpressionKindTracker::from_arena(arena);
        let is_override = |h: Handle<Expression>| kinds.is_const_or_override(h) && !kinds.is_const(h);
        for (handle, expr) in arena.iter() {
            let (operands, what) = match *expr {
                Expression::Access { index, .. } if is_override(index) => (vec![index], "as an index"),
                _ if !is_override(handle) => continue,
                Expression::Override(_)
                | Expression::Compose { .. }
                | Expression::Splat { .. }
                | Expression::Swizzle { .. }
                | Expression::AccessIndex { .. }
                | Expression::Access { .. } => continue,
                _ => (vec![handle], "in an expression of overrides and constants only"),
            };
            let mut used = Vec::new();
            for operand in operands {
                overrides_in(arena, operand, &mut used);
            }
            for o in used {
                found.entry(o).or_insert((arena.get_span(handle), what));
            }
        }
    };
    check(&module.global_expressions);
    for (_, function) in module.functions.iter() {
        check(&function.expressions);
    }
    for ep in &module.entry_points {
        check(&ep.function.expressions);
    }
    let mut diagnostics: Vec<Diagnostic> = found
        .into_iter()
        .map(|(o, (span, what))| {
            let name = module.overrides[o].name.clone().unwrap_or_default();
            let span = if span.is_defined() { span } else { module.overrides.get_span(o) };
            diagnostic_at(
                file,
                source,
                span,
                format!(
                    "override '{name}' is used {what}, which naga evaluates at compile time: it cannot stay a \
                     specialization constant; combine it with a run-time value instead (a uniform, an input)"
                ),
            )
        })
        .collect();

    for ep in &module.entry_points {
        if let Some(sizes) = ep.workgroup_size_overrides {
            for expr in sizes.into_iter().flatten() {
                diagnostics.push(diagnostic_at(
                    file,
                    source,
                    module.global_expressions.get_span(expr),
                    format!(
                        "entry point '{}': a workgroup size given by an override is not supported; write a number",
                        ep.name
                    ),
                ));
            }
        }
    }
    for (handle, ty) in module.types.iter() {
        if let naga::TypeInner::Array { size: naga::ArraySize::Pending(o), .. } = ty.inner {
            let name = module.overrides[o].name.clone().unwrap_or_default();
            let span = module.types.get_span(handle);
            let span = if span.is_defined() { span } else { module.overrides.get_span(o) };
            diagnostics.push(diagnostic_at(
                file,
                source,
                span,
                format!("override '{name}' is used as an array length, which is not supported; write a number"),
            ));
        }
    }
    diagnostics
}

/// Compiles one stage, or says what is wrong with it.
pub fn compile_stage(desc: &SourceDesc, target: Target, version: (u8, u8)) -> Result<CompiledStage, Vec<Diagnostic>> {
    let file = desc.file_name.as_str();
    let source = desc.source.as_str();
    let error = |message: String| vec![Diagnostic::error(file, 0, message)];
    if desc.language != "wgsl" {
        return Err(error(format!(
            "xr-compiler-wgsl compiles WGSL only; this stage's language is '{}'",
            desc.language
        )));
    }
    if !desc.defines.is_empty() {
        let defines: Vec<String> = desc
            .defines
            .iter()
            .map(|d| if d.value.is_empty() { d.name.to_string() } else { format!("{}={}", d.name, d.value) })
            .collect();
        return Err(error(format!(
            "WGSL has no preprocessor: the defines {} cannot be applied; use overrides",
            defines.join(", ")
        )));
    }
    let Some(stage) = naga_stage(desc.stage) else {
        return Err(error(format!(
            "WGSL has no {} stage; xr-compiler-wgsl builds vertex, fragment and compute stages",
            desc.stage.name()
        )));
    };
    let entry_point = desc.entry_point.as_str();

    let (module, info) = parse_and_validate(file, source, capabilities())?;
    let Some(ep_index) = module.entry_points.iter().position(|ep| ep.stage == stage && ep.name == entry_point) else {
        let found: Vec<String> =
            module.entry_points.iter().map(|ep| format!("{} '{}'", stage_name(ep.stage), ep.name)).collect();
        return Err(error(format!(
            "no {} entry point '{entry_point}' (the file has {})",
            stage_name(stage),
            if found.is_empty() { "none".to_owned() } else { found.join(", ") }
        )));
    };
    let decls = overrides(&module, file, source)?;
    let reflection = reflect::stage_reflection(&module, &info, ep_index, desc.stage, file, &decls);
    target_checks(&module, &info, ep_index, target, file, source)?;

    // Resolve every override to its sentinel.
    let mut constants = naga::back::PipelineConstants::default();
    let mut sentinels = BTreeMap::new();
    for d in &decls {
        let bits = spec::sentinel(d.scalar, d.index);
        constants.insert(d.id.to_string(), spec::sentinel_value(d.scalar, bits));
        sentinels.insert(d.id, bits);
    }
    let (resolved, resolved_info) =
        naga::back::pipeline_constants::process_overrides(&module, &info, Some((stage, entry_point)), &constants)
            .map_err(|e| error(format!("resolving the overrides: {}", error_chain(&e))))?;

    let options = spv::Options {
        lang_version: version,
        // Names (OpName, OpMemberName) for reflection, and no Y flip: XR's
        // shaders write the position as-is on both APIs.
        flags: spv::WriterFlags::DEBUG | spv::WriterFlags::LABEL_VARYINGS,
        // Sets and bindings as written (`@group`, `@binding`): no remapping.
        fake_missing_bindings: true,
        ..spv::Options::default()
    };
    let pipeline = spv::PipelineOptions { shader_stage: stage, entry_point: entry_point.to_owned() };
    let words = spv::write_vec(&resolved, &resolved_info, &options, Some(&pipeline))
        .map_err(|e| error(format!("writing SPIR-V: {}", error_chain(&e))))?;

    // The overrides this stage still has (the others were compacted away
    // with the code it does not use) become specialization constants.
    let patches: Vec<SpecPatch> = resolved
        .overrides
        .iter()
        .filter_map(|(_, o)| {
            let id = u32::from(o.id?);
            let d = decls.iter().find(|d| d.id == id)?;
            Some(SpecPatch {
                name: d.name.clone(),
                id,
                scalar: d.scalar,
                sentinel: *sentinels.get(&id)?,
                default: d.default,
            })
        })
        .collect();
    let words = blocks::unwrap(&words).map_err(|e| error(e.to_string()))?;
    let words = spec::patch(&words, &patches).map_err(|e| error(e.to_string()))?;

    Ok(CompiledStage {
        module: StageModule {
            stage: desc.stage,
            entry_point: entry_point.to_owned(),
            specializations: Vec::new(),
            words,
            file: file.to_owned(),
            // WGSL has no ray tracing stages.
            hit_group: None,
        },
        reflection,
    })
}

/// What OpenGL lacks: push constants and descriptor sets.
fn target_checks(
    module: &Module,
    info: &ModuleInfo,
    ep_index: usize,
    target: Target,
    file: &str,
    source: &str,
) -> Result<(), Vec<Diagnostic>> {
    if target != Target::OpenGl {
        return Ok(());
    }
    let uses = info.get_entry_point(ep_index);
    let mut diagnostics = Vec::new();
    for (handle, var) in module.global_variables.iter() {
        if uses[handle].is_empty() {
            continue;
        }
        let name = var.name.clone().unwrap_or_default();
        let span = module.global_variables.get_span(handle);
        if var.space == naga::AddressSpace::Immediate {
            diagnostics.push(diagnostic_at(
                file,
                source,
                span,
                format!("'{name}': var<immediate> (push constants) exists on Vulkan only, not in gl-spirv"),
            ));
        }
        if let Some(binding) = &var.binding
            && binding.group != 0
        {
            diagnostics.push(diagnostic_at(
                file,
                source,
                span,
                format!(
                    "'{name}' is in @group({}): OpenGL has no descriptor sets, so gl-spirv takes @group(0) only",
                    binding.group
                ),
            ));
        }
    }
    if diagnostics.is_empty() { Ok(()) } else { Err(diagnostics) }
}
