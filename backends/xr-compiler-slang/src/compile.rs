//! The offline compile: a program's Slang files, with the entry points its
//! stages name, into the SPIR-V object the Vulkan and GL SPIR-V build
//! systems load (linked, validated and reflected by XR's SPIR-V core, as
//! their own compiles are).

use crate::{
    diagnostics, dxc_forms, ffi,
    library::{self, Slang},
    session::{self, Request},
};
use abi_stable::std_types::RVec;
use std::collections::BTreeMap;
use xr_device::XrError;
use xr_sourcebuild::{
    BuildError, CompilePair, Diagnostic, EntryPoint, FileRead, OfflineArtifact, OfflineRequest, OptionDecl, Severity,
    ShaderStage, SourceDesc, SourceReach,
};
use xr_spirv::{SpirvVersion, TargetEnv, container::StageModule};

/// The language's name, as manifests and `--lang` give it.
pub const LANGUAGE: &str = "slang";
/// HLSL, which Slang reads too: compiled here for the stages glslang's HLSL
/// front end has not (task, mesh and the ray tracing stages), as DXC would
/// (`as_6_5`, `ms_6_5`, `lib_6_3` with `[shader("raygeneration")]` …).
pub const HLSL: &str = "hlsl";
/// The targets this compiler writes.
pub const TARGETS: [&str; 2] = ["vk-spirv", "gl-spirv"];
/// `slang → target` with the options it takes; a compile reads the modules
/// its `import`s name and the files its `#include`s name.
pub fn pair(target: &str) -> CompilePair {
    let vulkan = target == "vk-spirv";
    let versions: &[&str] = if vulkan { &["1.0", "1.1", "1.2", "1.3", "1.4", "1.5", "1.6"] } else { &["1.0"] };
    let mut options = vec![
        OptionDecl::choice(
            "optimize",
            &["none", "size", "performance"],
            "size",
            "Slang's optimisation level: none -O0, size -O1 (slangc's default, and what older drivers need: \
             Slang's unoptimised SPIR-V 1.4+ copies structs with OpCopyLogical), performance -O2",
        ),
        OptionDecl::choice(
            "spirv-version",
            versions,
            "",
            "SPIR-V version written (by default the target environment's own)",
        ),
        OptionDecl::choice(
            "matrix-layout",
            &["column", "row"],
            "column",
            "layout of matrices without an explicit one (column: as GLSL and XR's constant setters)",
        ),
    ];
    if vulkan {
        options.push(OptionDecl::choice(
            "vulkan",
            &["1.0", "1.1", "1.2", "1.3"],
            "1.0",
            "Vulkan version the modules are compiled and validated for",
        ));
    }
    // OpenGL has no mesh or ray tracing stages.
    let stages = if vulkan { &ShaderStage::ALL[..] } else { ShaderStage::CLASSIC };
    CompilePair::new(LANGUAGE, target)
        .with_options(options)
        .with_stages(stages.iter().copied())
        .reaching(SourceReach::IMPORTS)
}

/// `hlsl → vk-spirv`, every stage: the plugin's priority is below
/// glslang's, so an HLSL program comes here only where it has a stage
/// glslang's HLSL front end lacks (task, mesh, ray tracing; with the
/// fragment stage a mesh program has too). Slang's front end reads it, so
/// it reaches files as a Slang file does (the import scan follows
/// `#include` too: never less than an HLSL compile reads).
pub fn hlsl_pair() -> CompilePair {
    let slang = pair("vk-spirv");
    CompilePair::new(HLSL, "vk-spirv")
        .with_options(slang.options.to_vec())
        .with_stages(ShaderStage::ALL.iter().copied())
        .reaching(slang.reach)
}

/// The options every compile gives Slang, as `slangc` takes them. Entry
/// points keep their names in the SPIR-V (the loaders take each module's
/// own); "SPIR-V version too old" (50011) is Slang's advice to write a
/// newer SPIR-V than the target environment takes; Slang's own SPIR-V
/// validation is skipped: XR validates every module after the OpSource
/// rewrite ([`unknown_source_language`]), and Slang's validator prints its
/// complaint about OpSource straight to stderr.
pub const ARGUMENTS: [&str; 4] = ["-fvk-use-entrypoint-name", "-warnings-disable", "50011", "-skip-spirv-validation"];

/// For HLSL sources, what DXC does by default and their authors count on:
/// a `register(b2, space1)` is binding 2 of set 1 (no shift), for every
/// register kind and space.
pub const HLSL_ARGUMENTS: [&str; 12] =
    ["-fvk-b-shift", "0", "all", "-fvk-t-shift", "0", "all", "-fvk-s-shift", "0", "all", "-fvk-u-shift", "0", "all"];

/// What a compile is asked for, read from the request's options.
struct Settings {
    env: TargetEnv,
    profile: &'static str,
    optimization: u32,
    matrix_layout: u32,
    /// Defined in every unit, as glslang defines them: `VULKAN` or `GL_SPIRV`.
    target_define: &'static str,
}

fn settings(request: &OfflineRequest) -> Result<Settings, XrError> {
    let vulkan = match request.target.as_str() {
        "vk-spirv" => true,
        "gl-spirv" => false,
        other => {
            return Err(XrError::invalid_input(format!(
                "xr-compiler-slang compiles into {} only, not '{other}'",
                TARGETS.join(" and ")
            )));
        }
    };
    let env = if vulkan {
        match request.option("vulkan").unwrap_or("1.0") {
            "1.0" => TargetEnv::Vulkan10,
            "1.1" => TargetEnv::Vulkan11,
            "1.2" => TargetEnv::Vulkan12,
            "1.3" => TargetEnv::Vulkan13,
            other => return Err(XrError::invalid_input(format!("unknown Vulkan version '{other}' (1.0 … 1.3)"))),
        }
    } else {
        TargetEnv::OpenGl45
    };
    let asked = match request.option("spirv-version") {
        None | Some("") => None,
        Some(text) => {
            Some(SpirvVersion::from_name(text).filter(|v| vulkan || *v == SpirvVersion::V1_0).ok_or_else(|| {
                XrError::invalid_input(format!("spirv-version {text} is not one {} takes", request.target))
            })?)
        }
    };
    // Mesh and ray tracing stages are written for SPIR-V 1.4 at least.
    let stages: Vec<ShaderStage> = request.program.stages.iter().map(|s| s.stage).collect();
    let raised =
        xr_spirv::SpirvOptions { spirv_version: asked, ..xr_spirv::SpirvOptions::new(env) }.for_stages(&stages)?;
    let (env, version) = (raised.target, raised.spirv_version.unwrap_or_else(|| raised.target.default_spirv()));
    let optimization = match request.option("optimize").unwrap_or("size") {
        "none" => ffi::OPTIMIZATION_NONE,
        "size" => ffi::OPTIMIZATION_DEFAULT,
        "performance" => ffi::OPTIMIZATION_HIGH,
        other => return Err(XrError::invalid_input(format!("unknown optimization level '{other}'"))),
    };
    let matrix_layout = match request.option("matrix-layout").unwrap_or("column") {
        "column" => ffi::MATRIX_LAYOUT_COLUMN_MAJOR,
        "row" => ffi::MATRIX_LAYOUT_ROW_MAJOR,
        other => return Err(XrError::invalid_input(format!("matrix-layout is column or row, not '{other}'"))),
    };
    Ok(Settings {
        env,
        profile: profile(version),
        optimization,
        matrix_layout,
        target_define: if vulkan { "VULKAN" } else { "GL_SPIRV" },
    })
}

fn profile(version: SpirvVersion) -> &'static str {
    match version {
        SpirvVersion::V1_0 => "spirv_1_0",
        SpirvVersion::V1_1 => "spirv_1_1",
        SpirvVersion::V1_2 => "spirv_1_2",
        SpirvVersion::V1_3 => "spirv_1_3",
        SpirvVersion::V1_4 => "spirv_1_4",
        SpirvVersion::V1_5 => "spirv_1_5",
        SpirvVersion::V1_6 => "spirv_1_6",
    }
}

fn slang_stage(stage: ShaderStage) -> u32 {
    match stage {
        ShaderStage::Vertex => ffi::stage::VERTEX,
        ShaderStage::TessControl => ffi::stage::HULL,
        ShaderStage::TessEvaluation => ffi::stage::DOMAIN,
        ShaderStage::Geometry => ffi::stage::GEOMETRY,
        ShaderStage::Fragment => ffi::stage::FRAGMENT,
        ShaderStage::Compute => ffi::stage::COMPUTE,
        ShaderStage::Task => ffi::stage::AMPLIFICATION,
        ShaderStage::Mesh => ffi::stage::MESH,
        ShaderStage::RayGeneration => ffi::stage::RAY_GENERATION,
        ShaderStage::Miss => ffi::stage::MISS,
        ShaderStage::ClosestHit => ffi::stage::CLOSEST_HIT,
        ShaderStage::AnyHit => ffi::stage::ANY_HIT,
        ShaderStage::Intersection => ffi::stage::INTERSECTION,
        ShaderStage::Callable => ffi::stage::CALLABLE,
    }
}

fn xr_stage(stage: u32) -> Option<ShaderStage> {
    Some(match stage {
        ffi::stage::VERTEX => ShaderStage::Vertex,
        ffi::stage::HULL => ShaderStage::TessControl,
        ffi::stage::DOMAIN => ShaderStage::TessEvaluation,
        ffi::stage::GEOMETRY => ShaderStage::Geometry,
        ffi::stage::FRAGMENT => ShaderStage::Fragment,
        ffi::stage::COMPUTE => ShaderStage::Compute,
        ffi::stage::AMPLIFICATION => ShaderStage::Task,
        ffi::stage::MESH => ShaderStage::Mesh,
        ffi::stage::RAY_GENERATION => ShaderStage::RayGeneration,
        ffi::stage::MISS => ShaderStage::Miss,
        ffi::stage::CLOSEST_HIT => ShaderStage::ClosestHit,
        ffi::stage::ANY_HIT => ShaderStage::AnyHit,
        ffi::stage::INTERSECTION => ShaderStage::Intersection,
        ffi::stage::CALLABLE => ShaderStage::Callable,
        _ => return None,
    })
}

/// The opened library, or the reason there is none as a build error.
fn opened() -> Result<&'static Slang, BuildError> {
    library::slang().map_err(|e| XrError::unavailable(format!("xr-compiler-slang: {e}")).into())
}

fn slang_error(message: String) -> BuildError {
    XrError::new(xr_device::ErrorKind::Build, message).into()
}

/// Makes a request: this thread's session, the files' directories and the
/// include directories searched, one translation unit per distinct file
/// (each with its stage's defines). Returns the request and each stage's
/// unit.
fn request_for<'a>(
    slang: &'a Slang,
    stages: &[&SourceDesc],
    target_define: &str,
) -> Result<(Request<'a>, session::Session, Vec<i32>), BuildError> {
    let session = session::session(slang).map_err(slang_error)?;
    let mut request = Request::new(slang, session).map_err(slang_error)?;
    let mut searched: Vec<String> = Vec::new();
    for desc in stages {
        let own_dir = std::path::Path::new(desc.file_name.as_str()).parent().map(|d| d.to_path_buf());
        let dirs = own_dir.into_iter().chain(desc.include_dirs.iter().map(|d| d.as_str().into()));
        // Slang opens what it finds itself: its search paths are where the
        // files are; what it read is named relative to the root again (`files_read`).
        for dir in dirs.map(|d| desc.on_disk(&d).to_string_lossy().into_owned()) {
            if !searched.contains(&dir) {
                request.search_path(&dir);
                searched.push(dir);
            }
        }
    }
    let mut units: BTreeMap<&str, (i32, &SourceDesc)> = BTreeMap::new();
    let mut of_stage = Vec::new();
    for desc in stages {
        let file = desc.file_name.as_str();
        if let Some((unit, first)) = units.get(file) {
            if first.defines != desc.defines {
                return Err(XrError::invalid_input(format!(
                    "{file}: its {} and {} entry points are given different defines; one file is one module, \
                     compiled once",
                    first.stage.name(),
                    desc.stage.name()
                ))
                .into());
            }
            of_stage.push(*unit);
            continue;
        }
        let language =
            if desc.language == HLSL { ffi::SLANG_SOURCE_LANGUAGE_HLSL } else { ffi::SLANG_SOURCE_LANGUAGE_SLANG };
        let unit = request.translation_unit(file, &desc.source, language);
        request.define(unit, target_define, "1");
        for define in desc.defines.iter() {
            request.define(unit, &define.name, &define.value);
        }
        units.insert(file, (unit, desc));
        of_stage.push(unit);
    }
    Ok((request, session, of_stage))
}

/// Compiles every stage of `request.program` (the body of `compile_offline`).
pub fn compile(request: &OfflineRequest, reflect: xr_spirv::offline::Reflect) -> Result<OfflineArtifact, BuildError> {
    let settings = settings(request)?;
    let slang = opened()?;
    let program = &request.program;
    let context = format!("program '{}'", program.name);
    if program.stages.is_empty() {
        return Err(XrError::invalid_input(format!("{context}: the program has no stages")).into());
    }
    program.hit_groups()?;
    let stages: Vec<&SourceDesc> = program.stages.iter().collect();
    let (mut slang_request, session, units) = request_for(slang, &stages, settings.target_define)?;
    slang_request.target_spirv(session, settings.profile).map_err(slang_error)?;
    slang_request.matrix_layout(settings.matrix_layout);
    slang_request.optimization(settings.optimization);
    slang_request.arguments(&ARGUMENTS).map_err(slang_error)?;
    if stages.iter().any(|s| s.language == HLSL) {
        slang_request.arguments(&HLSL_ARGUMENTS).map_err(slang_error)?;
    }
    // Slang numbers the entry points of a compile unit by unit (all of the
    // first file's, then the next file's), whatever order they were added
    // in: add them in that order, and keep each stage's number.
    let mut entries = vec![0; stages.len()];
    let mut order: Vec<usize> = (0..stages.len()).collect();
    order.sort_by_key(|i| units[*i]);
    for (number, i) in order.into_iter().enumerate() {
        slang_request.entry_point(units[i], &stages[i].entry_point, slang_stage(stages[i].stage));
        entries[i] = number as i32;
    }
    let compiled = slang_request.compile();
    let said = named_from_the_root(stages[0], diagnostics::parse(&slang_request.diagnostics(), &stages[0].file_name));
    let said = dxc_forms::explain(&stages, said);
    let (errors, warnings): (Vec<_>, Vec<_>) = said.into_iter().partition(|d| d.severity == Severity::Error);
    if !compiled || !errors.is_empty() {
        if errors.is_empty() {
            return Err(slang_error(format!("{context}: the Slang compile failed without a message")));
        }
        let notes = warnings.into_iter().filter(|d| d.severity == Severity::Info);
        return Err(BuildError::from_diagnostics(&context, errors.into_iter().chain(notes).collect()));
    }
    let mut modules = Vec::new();
    for (desc, entry) in stages.iter().zip(&entries) {
        let mut words = slang_request.code(*entry).ok_or_else(|| {
            slang_error(format!(
                "{context}: {}: Slang wrote no SPIR-V for the {} entry point '{}'",
                desc.file_name,
                desc.stage.name(),
                desc.entry_point
            ))
        })?;
        unknown_source_language(&mut words);
        declare_extensions_below_core(&mut words);
        // The module's own name for its entry point: Slang keeps the source's
        // name, except where it wraps an entry point (a hull shader and its
        // patch-constant function become one function of another name).
        let written = xr_spirv::reflect::entry_points(&words)?;
        let entry_point = match written.as_slice() {
            [only] => only.clone(),
            _ => desc.entry_point.to_string(),
        };
        modules.push(StageModule {
            stage: desc.stage,
            entry_point,
            specializations: desc.specializations.to_vec(),
            words,
            file: desc.file_name.to_string(),
            hit_group: desc.hit_group.into_option(),
        });
    }
    let files_read = files_read(&stages, &slang_request.dependencies());
    drop(slang_request);
    if settings.env == TargetEnv::OpenGl45 {
        flatten_sets(&mut modules).map_err(|e| XrError::new(e.kind, format!("{context}: {e}")))?;
    }
    xr_spirv::finish_program(&mut modules, settings.env)
        .map_err(|e| XrError::new(e.kind, format!("{context}: {e}")))?;
    xr_spirv::validate_program(&modules, settings.env, &context)?;
    if settings.env == TargetEnv::OpenGl45 {
        refuse_push_constants(&modules, &context)?;
    }
    xr_spirv::offline::artifact_of(&modules, files_read, warnings, reflect)
}

/// OpenGL has no descriptor sets: a binding is a number per kind of
/// resource (texture unit, image unit, uniform and storage buffer binding
/// point) for the whole program. Slang gives each `ParameterBlock` and
/// each `[[vk::binding(b, set)]]` a set of its own, so two resources of one
/// kind in two sets can share a binding number, which an OpenGL linker
/// refuses ("buffer block with binding 0 has mismatching definitions").
/// Where any resource is in a set other than 0, every (set, binding) of a
/// kind gets its own number, in (set, binding) order, the same in every
/// stage; a program of set 0 alone keeps its numbers.
fn flatten_sets(modules: &mut [StageModule]) -> Result<(), XrError> {
    use std::collections::HashMap;
    use xr_spirv::reflect::{BindingDecoration, GlBindingClass};
    let mut decorated: Vec<(usize, BindingDecoration)> = Vec::new();
    for (index, module) in modules.iter().enumerate() {
        decorated.extend(xr_spirv::reflect::gl_bindings(&module.words)?.into_iter().map(|d| (index, d)));
    }
    if decorated.iter().all(|(_, d)| d.set == 0) {
        return Ok(());
    }
    let class_key = |class: GlBindingClass| class as u8;
    let mut places: Vec<(u8, u32, u32)> =
        decorated.iter().map(|(_, d)| (class_key(d.class), d.set, d.binding)).collect();
    places.sort_unstable();
    places.dedup();
    let mut numbers: HashMap<(u8, u32, u32), u32> = HashMap::new();
    let mut next: HashMap<u8, u32> = HashMap::new();
    for place in places {
        let counter = next.entry(place.0).or_insert(0);
        numbers.insert(place, *counter);
        *counter += 1;
    }
    for (index, d) in decorated {
        modules[index].words[d.word] = numbers[&(class_key(d.class), d.set, d.binding)];
    }
    Ok(())
}

/// OpenGL has no push constants, and its SPIR-V loader would leave a push
/// constant block unset (every read zero): refused by name instead.
fn refuse_push_constants(modules: &[StageModule], context: &str) -> Result<(), BuildError> {
    for module in modules {
        let reflection = xr_spirv::reflect(&module.words, &module.entry_point)?;
        if let Some(block) = reflection.push_constants.first() {
            return Err(XrError::invalid_input(format!(
                "{context}: {}: the {} stage reads push constants ('{}'), which OpenGL does not have; for \
                 gl-spirv declare them a ConstantBuffer (xr-compiler-slang defines VULKAN for vk-spirv only: \
                 `#ifdef VULKAN [[vk::push_constant]] #endif`)",
                module.file,
                module.stage.name(),
                block.name
            ))
            .into());
        }
    }
    Ok(())
}

/// The entry points `source` declares with `[shader("…")]`.
pub fn entry_points(source: &SourceDesc) -> Result<Vec<EntryPoint>, BuildError> {
    let slang = opened()?;
    let (mut request, session, _) = request_for(slang, &[source], "VULKAN")?;
    // Slang lists the `[shader]` entry points of a compile for a target.
    request.target_spirv(session, "spirv_1_0").map_err(slang_error)?;
    let compiled = request.compile();
    let said = named_from_the_root(source, diagnostics::parse(&request.diagnostics(), &source.file_name));
    let said = dxc_forms::explain(&[source], said);
    let errors: Vec<_> = said.into_iter().filter(|d| d.severity != Severity::Warning).collect();
    if !compiled || !errors.is_empty() {
        return Err(BuildError::from_diagnostics(&source.file_name, errors));
    }
    request
        .declared_entry_points()
        .into_iter()
        .map(|(name, stage)| match xr_stage(stage) {
            Some(stage) => Ok(EntryPoint { name: name.into(), stage }),
            None => Err(XrError::invalid_input(format!(
                "{}: entry point '{name}' is of a stage XR does not know (Slang's stage {stage})",
                source.file_name
            ))
            .into()),
        })
        .collect()
}

/// `diagnostics` naming the files Slang opened (through search paths under
/// the source root) by their names relative to it, as every compile names them.
fn named_from_the_root(desc: &SourceDesc, mut diagnostics: Vec<Diagnostic>) -> Vec<Diagnostic> {
    for diagnostic in &mut diagnostics {
        diagnostic.file = desc.name_of_read(&diagnostic.file).into();
        for site in diagnostic.included_from.iter_mut() {
            site.file = desc.name_of_read(&site.file).into();
        }
    }
    diagnostics
}

/// Every file the compile read, with the hash of its text: the stages' own
/// (as the host read them) and every module imported or file included.
fn files_read(stages: &[&SourceDesc], dependencies: &[String]) -> RVec<FileRead> {
    let mut files: Vec<FileRead> =
        stages.iter().map(|s| FileRead::of_text(&s.file_name, s.source.as_bytes())).collect();
    for path in dependencies {
        if stages.iter().any(|s| s.file_name.as_str() == path) {
            continue;
        }
        // A file Slang read a moment ago; one gone since is recorded empty,
        // so the next build sees it changed.
        let text = std::fs::read(path).unwrap_or_default();
        let name = stages.first().map_or_else(|| path.clone(), |s| s.name_of_read(path));
        files.push(FileRead::of_text(&name, &text));
    }
    files.sort();
    files.dedup();
    files.into()
}

/// Slang 2026 writes `OpSource Slang` (source language 11), which SPIR-V
/// 1.6's grammar added after the SPIRV-Tools XR validates with; that
/// validator refuses the module for it ("Invalid source language operand:
/// 11"). The operand is a debug annotation no driver acts on, so it is
/// rewritten to `Unknown` (0) and the module validated and stored as
/// rewritten: what is stored is exactly what was validated.
///
/// Words that are not a module, and instructions from the first malformed
/// one on, are left as they are: reflection refuses the module next, naming
/// the word.
pub fn unknown_source_language(words: &mut [u32]) {
    use xr_spirv::container::spirv::{Op, SourceLanguage};
    let Ok(instructions) = xr_spirv::container::walk::instructions(words) else { return };
    // The source language is OpSource's first operand.
    let languages: Vec<usize> = instructions
        .map_while(Result::ok)
        .filter(|i| i.op() == Some(Op::Source) && i.operands.first() == Some(&(SourceLanguage::Slang as u32)))
        .map(|i| i.offset + 1)
        .collect();
    for at in languages {
        words[at] = SourceLanguage::Unknown as u32;
    }
}

/// Capabilities that SPIR-V 1.3 made core, with the extension a module of
/// an older version must declare to use them. Slang writes the capability
/// alone whatever the profile (`SV_VertexID` is `VertexIndex - BaseVertex`,
/// `DrawParameters`), which a Vulkan 1.0 or OpenGL environment refuses.
const CORE_IN_1_3: [(xr_spirv::container::spirv::Capability, &str); 9] = {
    use xr_spirv::container::spirv::Capability;
    [
        (Capability::DrawParameters, "SPV_KHR_shader_draw_parameters"),
        (Capability::StorageBuffer16BitAccess, "SPV_KHR_16bit_storage"),
        (Capability::UniformAndStorageBuffer16BitAccess, "SPV_KHR_16bit_storage"),
        (Capability::StoragePushConstant16, "SPV_KHR_16bit_storage"),
        (Capability::StorageInputOutput16, "SPV_KHR_16bit_storage"),
        (Capability::DeviceGroup, "SPV_KHR_device_group"),
        (Capability::MultiView, "SPV_KHR_multiview"),
        (Capability::VariablePointersStorageBuffer, "SPV_KHR_variable_pointers"),
        (Capability::VariablePointers, "SPV_KHR_variable_pointers"),
    ]
};

/// Declares, in a module older than SPIR-V 1.3, the extension of each
/// capability it uses that 1.3 made core ([`CORE_IN_1_3`]) and that it does
/// not declare already: after its last `OpExtension` (or its last
/// `OpCapability`), where the grammar puts extensions. Words that are not
/// a well-formed module are left alone.
pub fn declare_extensions_below_core(words: &mut Vec<u32>) {
    use xr_spirv::container::{spirv::Op, walk};
    const VERSION_1_3: u32 = 0x0001_0300;
    if words.len() < 5 || words[1] >= VERSION_1_3 {
        return;
    }
    let Ok(instructions) = walk::instruction_list(words) else { return };
    let mut declared = Vec::new();
    let mut needed: Vec<&str> = Vec::new();
    let mut insert_at = None;
    for i in &instructions {
        match i.op() {
            Some(Op::Capability) => {
                insert_at = Some(insert_at.unwrap_or(0).max(i.end()));
                if let Some((_, extension)) = CORE_IN_1_3.iter().find(|(c, _)| Some(&(*c as u32)) == i.operands.first())
                    && !needed.contains(extension)
                {
                    needed.push(extension);
                }
            }
            Some(Op::Extension) => {
                insert_at = Some(insert_at.unwrap_or(0).max(i.end()));
                declared.push(walk::literal_string(i.operands));
            }
            _ => {}
        }
    }
    let Some(at) = insert_at else { return };
    let added: Vec<u32> = needed
        .into_iter()
        .filter(|extension| !declared.iter().any(|d| d == extension))
        .flat_map(|extension| walk::instruction(Op::Extension, &walk::string_operand(extension)))
        .collect();
    words.splice(at..at, added);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_module_below_1_3_declares_the_extension_of_a_capability_1_3_made_core() {
        use xr_spirv::container::{spirv::Op, walk};
        let module = |version: u32, extensions: &[&str]| {
            let mut words = vec![0x0723_0203, version, 0, 10, 0];
            words.extend(walk::instruction(Op::Capability, &[1])); // Shader
            words.extend(walk::instruction(Op::Capability, &[4427])); // DrawParameters
            for extension in extensions {
                words.extend(walk::instruction(Op::Extension, &walk::string_operand(extension)));
            }
            words.extend(walk::instruction(Op::MemoryModel, &[0, 1]));
            words
        };
        let extensions = |words: &[u32]| -> Vec<String> {
            walk::instruction_list(words)
                .unwrap()
                .iter()
                .filter(|i| i.op() == Some(Op::Extension))
                .map(|i| walk::literal_string(i.operands))
                .collect()
        };
        let mut old = module(0x0001_0000, &[]);
        declare_extensions_below_core(&mut old);
        assert_eq!(extensions(&old), ["SPV_KHR_shader_draw_parameters"]);
        // Before the memory model, where extensions go.
        let list = walk::instruction_list(&old).unwrap();
        assert_eq!(list.last().unwrap().op(), Some(Op::MemoryModel));
        // Declared already, or core: unchanged.
        let mut declared = module(0x0001_0000, &["SPV_KHR_shader_draw_parameters"]);
        let before = declared.clone();
        declare_extensions_below_core(&mut declared);
        assert_eq!(declared, before);
        let mut core = module(0x0001_0300, &[]);
        let before = core.clone();
        declare_extensions_below_core(&mut core);
        assert_eq!(core, before);
    }

    #[test]
    fn only_a_slang_op_source_is_rewritten() {
        let header = [0x0723_0203, 0x0001_0000, 0, 10, 0];
        // OpSource Slang 1; OpSource GLSL 450; OpCapability Shader.
        let mut words: Vec<u32> = header.to_vec();
        words.extend([3 << 16 | 3, 11, 1, 3 << 16 | 3, 2, 450, 2 << 16 | 17, 1]);
        unknown_source_language(&mut words);
        assert_eq!(&words[5..], &[3 << 16 | 3, 0, 1, 3 << 16 | 3, 2, 450, 2 << 16 | 17, 1]);
        // After a malformed instruction (a word count of 0) nothing is
        // rewritten; words that are not a module are left alone.
        let mut malformed: Vec<u32> = header.to_vec();
        malformed.extend([3 << 16 | 3, 11, 1, 0, 3 << 16 | 3, 11, 1]);
        unknown_source_language(&mut malformed);
        assert_eq!(&malformed[5..], &[3 << 16 | 3, 0, 1, 0, 3 << 16 | 3, 11, 1]);
        let mut not_a_module = vec![0, 0, 0, 0, 0, 3 << 16 | 3, 11, 1];
        unknown_source_language(&mut not_a_module);
        assert_eq!(not_a_module, [0, 0, 0, 0, 0, 3 << 16 | 3, 11, 1]);
    }

    #[test]
    fn options_pick_the_profile_and_refuse_what_gl_cannot_read() {
        let program = xr_sourcebuild::ProgramDesc::new("p", Vec::new());
        let vk = OfflineRequest::new(program.clone(), "vk-spirv").with_option("vulkan", "1.2");
        assert_eq!(settings(&vk).unwrap().profile, "spirv_1_5");
        let gl = OfflineRequest::new(program.clone(), "gl-spirv").with_option("spirv-version", "1.3");
        assert!(settings(&gl).err().unwrap().message.contains("spirv-version 1.3"));
        assert!(settings(&OfflineRequest::new(program, "gl-glsl")).is_err());
    }
}
