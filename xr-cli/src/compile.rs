//! `xr compile` and `xr reflect`: XR's `D3DXCompileShaderFromFile`.

use crate::messages::{MessageArgs, Reported, usage};
use anyhow::Context;
use clap::Args;
use std::path::{Path, PathBuf};
use xr_build::paths::SourceRoot;
use xr_build::plan::command_line;
use xr_build::{error::ArtifactError, report::Reports};
use xr_device::DeviceOptions;
use xr_host::Registry;
use xr_sourcebuild::{
    ArtifactLoad, BuildError, CompilePair, EntryPoint, LoadPath, OfflineArtifact, OfflineRequest, OverrideValue,
    PipelineKind, ProgramDesc, ShaderStage, SourceDesc,
};

/// `--stage`'s parser: the stages by the names the contract gives them
/// (`vertex`, `tess-control`, `mesh`, `ray-generation`, …), listed in `--help`.
fn stage_parser() -> impl clap::builder::TypedValueParser<Value = ShaderStage> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(ShaderStage::ALL.map(ShaderStage::name))
        .try_map(|name: String| ShaderStage::from_name(&name).ok_or_else(|| format!("unknown stage '{name}'")))
}

/// The source to build, shared by `xr compile` and `xr reflect`.
#[derive(Args)]
pub struct SourceArgs {
    /// The shader source files: one per stage of a program (`a.vert
    /// a.frag`), or a single file.
    #[arg(required = true, num_args = 1..)]
    files: Vec<PathBuf>,
    /// Stage of a single file; by default from the file extension (.vert,
    /// .frag, …) or from an option whose value names a stage (an HLSL
    /// `profile`).
    #[arg(long, value_parser = stage_parser())]
    stage: Option<ShaderStage>,
    /// Entry point (default `main`). For a language whose files declare
    /// their entry points (Slang's `[shader("…")]`), a file given without
    /// `--stage` builds every entry point it declares, or those named here
    /// (repeat it: `--entry vertexMain --entry fragmentMain`).
    #[arg(long)]
    entry: Vec<String>,
    /// Source language, as the plugins name it (glsl, hlsl, wgsl, …); by
    /// default from the file extension, as the plugins declare extensions.
    #[arg(long)]
    lang: Option<String>,
    /// Define a macro: NAME or NAME=VALUE.
    #[arg(short = 'D', value_name = "NAME[=VALUE]")]
    defines: Vec<String>,
    /// Add an include directory.
    #[arg(short = 'I', value_name = "DIR")]
    include_dirs: Vec<PathBuf>,
    /// Target, as the plugins name it (`xr plugins` lists them). By default
    /// the first target of the highest-priority build system that compiles
    /// the language into a compatible (portable) object.
    #[arg(long)]
    target: Option<String>,
    /// A compiler option, as the compiler of the (language → target) pair
    /// declares it (`xr plugins` lists them): `--option vulkan=1.3`,
    /// `--option optimize=size`, `--option profile=ps_5_0`. Repeatable.
    #[arg(long = "option", value_name = "NAME=VALUE")]
    options: Vec<String>,
    /// The files of one hit group of a ray tracing program, comma-separated
    /// (`--hit-group glass.rchit,glass.rahit`); the first `--hit-group` is
    /// hit group 0, the next 1, … Given once, every hit stage is in one. By
    /// default hit group i holds the i-th closest-hit, any-hit and
    /// intersection file.
    #[arg(long = "hit-group", value_name = "FILE[,FILE…]")]
    hit_groups: Vec<String>,
    /// Compile (and build on the device) in this process rather than in a
    /// child, so that a debugger sees the compiler; a crash in a compiler or
    /// driver then ends xr with no report.
    #[arg(long)]
    pub in_process: bool,
}

impl SourceArgs {
    /// The source files.
    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }

    /// `--option` values as (name, value).
    fn options(&self) -> anyhow::Result<Vec<(String, String)>> {
        self.options
            .iter()
            .map(|option| match option.split_once('=') {
                Some((name, value)) if !name.is_empty() => Ok((name.to_owned(), value.to_owned())),
                _ => Err(usage(format!("--option takes NAME=VALUE, not '{option}'"))),
            })
            .collect()
    }

    /// The language of `file`: `--lang`, else its extension as the plugins
    /// declare extensions.
    fn language(&self, registry: &Registry, file: &Path) -> anyhow::Result<String> {
        if let Some(language) = &self.lang {
            return Ok(language.clone());
        }
        // By the plan's rule: the extensions the plugins declare, the first in load order.
        let offer = xr_build::PluginOffer::of(registry);
        offer.language_of(file).map(str::to_owned).ok_or_else(|| {
            usage(format!(
                "cannot tell the language of {} from its extension: give --lang (the plugins found compile: {})",
                file.display(),
                offer.languages().join(", ")
            ))
        })
    }

    /// The stage of `file` where the command line tells it: `--stage`, its
    /// extension (`a.vert`, `a.vs.hlsl`), or an option of `pair` that names one.
    fn stage_given(&self, file: &Path, pair: &CompilePair, options: &[(String, String)]) -> Option<ShaderStage> {
        self.stage_named(file).or_else(|| xr_host::stage_selected(pair, options))
    }

    /// The stage `--stage` or the file's name gives.
    fn stage_named(&self, file: &Path) -> Option<ShaderStage> {
        self.stage.or_else(|| command_line::stage_of_file(file))
    }

    /// The error for a file whose stage nothing tells.
    fn unknown_stage(&self, file: &Path, pair: &CompilePair) -> anyhow::Error {
        {
            let selectors: Vec<String> = pair
                .options
                .iter()
                .filter(|o| o.values.iter().any(|v| v.stage.is_some()))
                .map(|o| format!("--option {}", o.usage()))
                .collect();
            let or_option = if selectors.is_empty() { String::new() } else { format!(", {}", selectors.join(", ")) };
            usage(format!(
                "cannot tell the stage of {}: give --stage{or_option}, or name it like a.vert",
                file.display()
            ))
        }
    }

    /// The stages of `file` that its own entry points declare (Slang's
    /// `[shader("…")]`), as the compiler reads them; all of them, or the one
    /// `--entry` names. Empty where the language declares none.
    fn declared_stages(
        &self,
        system: &xr_sourcebuild::SourceBuildSystemBox,
        base: &SourceDesc,
        messages: &MessageArgs,
        root: &SourceRoot,
        compiler: &str,
        target: &str,
    ) -> anyhow::Result<Vec<SourceDesc>> {
        let program = base.file_name.to_string();
        let declared = system
            .entry_points(base)
            .into_result()
            .map_err(|error| report_failure(messages, compiler, &program, target, &error, root))?;
        if declared.is_empty() {
            return Ok(Vec::new());
        }
        let listed =
            || declared.iter().map(|e| format!("{} ({})", e.name, e.stage.name())).collect::<Vec<_>>().join(", ");
        let mut chosen: Vec<_> = declared.iter().collect();
        if !self.entry.is_empty() {
            if let Some(name) = self.entry.iter().find(|n| !declared.iter().any(|e| e.name == n.as_str())) {
                return Err(usage(format!(
                    "{} declares no entry point '{name}'; it declares {}",
                    base.file_name,
                    listed()
                )));
            }
            chosen.retain(|e| self.entry.iter().any(|n| e.name == n.as_str()));
        } else if pipeline_kinds(&chosen) > 1 {
            return Err(usage(format!(
                "{} declares entry points of several kinds of pipeline ({}), which are several programs: choose one with --entry",
                base.file_name,
                listed()
            )));
        }
        let mut stages = Vec::new();
        for entry in chosen {
            if stages.iter().any(|s: &SourceDesc| s.stage == entry.stage) {
                return Err(usage(format!(
                    "{} declares more than one {} entry point ({}): choose one with --entry NAME",
                    base.file_name,
                    entry.stage.name(),
                    listed()
                )));
            }
            let mut desc = base.clone();
            desc.stage = entry.stage;
            desc.entry_point = entry.name.clone();
            stages.push(desc);
        }
        Ok(stages)
    }

    /// Puts the hit stages of the files `--hit-group` lists in their groups
    /// (the program's check of them follows, before any compile).
    fn name_hit_groups(&self, stages: &mut [SourceDesc], root: &SourceRoot) -> anyhow::Result<()> {
        let mut group_of_file: Vec<(String, u32)> = Vec::new();
        for (group, files) in self.hit_groups.iter().enumerate() {
            for file in files.split(',').map(str::trim).filter(|f| !f.is_empty()) {
                let name = root.name(Path::new(file));
                if !stages.iter().any(|s| s.file_name.as_str() == name) {
                    return Err(usage(format!("--hit-group names {file}, which is not one of the files given")));
                }
                if let Some((_, first)) = group_of_file.iter().find(|(f, _)| *f == name) {
                    return Err(usage(format!(
                        "{file} is in hit group {first} and hit group {group}: a file is in one"
                    )));
                }
                group_of_file.push((name, group as u32));
            }
        }
        for (file, group) in &group_of_file {
            let mut hit_stages =
                stages.iter_mut().filter(|s| s.file_name.as_str() == file && s.stage.is_hit()).peekable();
            if hit_stages.peek().is_none() {
                return Err(usage(format!(
                    "--hit-group puts {file} in hit group {group}, but it has no closest-hit, any-hit or intersection stage"
                )));
            }
            for stage in hit_stages {
                stage.hit_group = Some(*group).into();
            }
        }
        Ok(())
    }

    /// What the compile names files relative to: the first file's
    /// directory, so that its bytes are the same from any working directory.
    fn source_root(&self) -> SourceRoot {
        SourceRoot::new(self.files.first().and_then(|f| f.parent()).unwrap_or(Path::new("")))
    }

    /// Compiles the files through the build system that the plugins declare
    /// for their (language → target) pair, with the options it declares;
    /// reports its warnings, or its errors (then fails with [`Reported`]).
    /// `command` names the command in what `-v` says.
    fn compile(&self, command: &str, registry: &Registry, messages: &MessageArgs) -> anyhow::Result<Compiled> {
        if self.files.len() > 1 && self.stage.is_some() {
            return Err(usage("--stage names the stage of a single file; with several, each file's extension does"));
        }
        let options = self.options()?;
        let languages: Vec<String> = self.files.iter().map(|f| self.language(registry, f)).collect::<Result<_, _>>()?;
        let language = &languages[0];
        if let Some((file, other)) = self.files.iter().zip(&languages).find(|(_, l)| *l != language) {
            return Err(usage(format!(
                "{} is {language} but {} is {other}: one program, one language",
                self.files[0].display(),
                file.display()
            )));
        }
        let target = match &self.target {
            Some(target) => target.clone(),
            None => command_line::default_target(registry, language).map_err(|e| anyhow::anyhow!(e))?,
        };
        // The compiler that takes the stages the files' names give (an HLSL
        // ray tracing stage goes to the one that has them).
        let named: Vec<ShaderStage> = self.files.iter().filter_map(|f| self.stage_named(f)).collect();
        let (info, system) =
            registry.offline_compiler_for(language, &target, &named).map_err(|e| usage(e.to_string()))?;
        if crate::term::verbosity().verbose > 0 {
            let why = if self.target.is_some() {
                "as --target asks".to_owned()
            } else {
                format!("the default for {language}: the first portable target of the highest-priority plugin")
            };
            // On stderr: standard output may be the reflection, or JSON.
            eprintln!("{command}: target {target} ({why}), compiled by {}", info.name);
        }
        let pair = info
            .compiles
            .iter()
            .find(|p| p.language == language.as_str() && p.target == target.as_str())
            .with_context(|| format!("{} does not declare {language} → {target}", info.name))?;
        for (name, value) in &options {
            xr_host::check_option(&info.name, pair, name, value)?;
        }
        let compiler = info.name.to_string();
        let root = self.source_root();
        let mut stages = Vec::new();
        for file in &self.files {
            let given = self.stage_given(file, pair, &options);
            let mut desc = SourceDesc::read(language, given.unwrap_or(ShaderStage::Vertex), file)?;
            desc.file_name = root.name(file).into();
            desc.source_root = root.root().to_string_lossy().into_owned().into();
            desc.entry_point = match self.entry.as_slice() {
                [] => "main".into(),
                [one] => one.as_str().into(),
                _ if given.is_none() => "main".into(),
                _ => return Err(usage("several --entry are for a file that declares its entry points (Slang)")),
            };
            for define in &self.defines {
                let (name, value) = define.split_once('=').unwrap_or((define, ""));
                desc = desc.with_define(name, value);
            }
            for dir in &self.include_dirs {
                desc = desc.with_include_dir(root.name(dir));
            }
            if given.is_some() {
                stages.push(desc);
                continue;
            }
            let declared = self.declared_stages(system, &desc, messages, &root, &compiler, &target)?;
            if declared.is_empty() {
                return Err(self.unknown_stage(file, pair));
            }
            stages.extend(declared);
        }
        self.name_hit_groups(&mut stages, &root)?;
        // Stable: several miss, hit and callable stages keep the order they
        // were given in, which gives their indices in the program's groups.
        stages.sort_by_key(|s| s.stage);
        let several_allowed = |stage: ShaderStage| {
            stage.pipeline_kind() == xr_sourcebuild::PipelineKind::RayTracing && stage != ShaderStage::RayGeneration
        };
        for pair in stages.windows(2) {
            if pair[0].stage == pair[1].stage && !several_allowed(pair[0].stage) {
                return Err(usage(format!(
                    "{} and {} are both {} stages",
                    pair[0].file_name,
                    pair[1].file_name,
                    pair[0].stage.name()
                )));
            }
        }
        let name = self.files[0].file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let program = ProgramDesc::new(name, stages);
        program.hit_groups().map_err(|mistake| usage(mistake.message.to_string()))?;
        let mut request = OfflineRequest::new(program.clone(), &target);
        for (name, value) in &options {
            request = request.with_option(name, value);
        }
        tracing::debug!(build_system = %info.name, "compiling {} for {target}", program.name);
        let artifact = xr_build::Compiles::compile_offline_here(system, &request)
            .map_err(|error| report_failure(messages, &compiler, &program.name, &target, &error, &root))?;
        let mut said = artifact.warnings.to_vec();
        root.show(&mut said);
        let mut reports = Reports::default();
        reports.add(None, &compiler, &said);
        let warnings = reports.count(xr_sourcebuild::Severity::Warning);
        messages.print_reports(&reports.into_sorted());
        Ok(Compiled { target, program, artifact, warnings })
    }
}

/// A program compiled by `xr compile` or `xr reflect`.
struct Compiled {
    target: String,
    program: ProgramDesc,
    artifact: OfflineArtifact,
    /// Distinct warnings reported.
    warnings: usize,
}

/// Reports the diagnostics of a failed build of `program` through the same
/// path as `xr build` (one report per distinct diagnostic) and gives the
/// error that says they were reported.
fn report_failure(
    messages: &MessageArgs,
    compiler: &str,
    program: &str,
    target: &str,
    error: &BuildError,
    root: &SourceRoot,
) -> anyhow::Error {
    let mut failure = ArtifactError::of_compile(&error.error.message, &error.diagnostics, program);
    if let Some(diagnostics) = failure.diagnostics_mut() {
        root.show(diagnostics);
    }
    let mut reports = Reports::default();
    reports.add_error(None, compiler, &failure);
    let (errors, warnings) =
        (reports.count(xr_sourcebuild::Severity::Error), reports.count(xr_sourcebuild::Severity::Warning));
    messages.print_reports(&reports.into_sorted());
    print_json_summary(messages, false, target, errors, warnings);
    Reported { status: 1 }.into()
}

/// `--message-format json`'s closing object for `xr compile` and `xr reflect`.
fn print_json_summary(messages: &MessageArgs, success: bool, target: &str, errors: usize, warnings: usize) {
    if messages.json() {
        println!(
            "{}",
            serde_json::json!({"type": "summary", "success": success, "target": target, "errors": errors, "warnings": warnings})
        );
    }
}

/// How many kinds of pipeline `entries` belong to (a fragment stage ends
/// graphics and mesh pipelines alike, so it counts for neither).
fn pipeline_kinds(entries: &[&EntryPoint]) -> usize {
    let mut kinds: Vec<PipelineKind> = Vec::new();
    for entry in entries.iter().filter(|e| e.stage != ShaderStage::Fragment) {
        if !kinds.contains(&entry.stage.pipeline_kind()) {
            kinds.push(entry.stage.pipeline_kind());
        }
    }
    kinds.len()
}

/// What `xr compile` does with the program it compiled.
#[derive(Args)]
pub struct CompileArgs {
    /// Write the compiled program here: for a program of one stage, the
    /// stage's own output (a SPIR-V module on gl-spirv and vk-spirv); for
    /// several stages, the artifact as `xr build` stores it (a SPIR-V object
    /// holding every stage; on gl-glsl, a source bundle). Written whole or
    /// not at all: a failed compile leaves what was there untouched.
    /// `-o -` writes it to standard output.
    #[arg(short = 'o', long = "out", value_name = "FILE")]
    out: Option<PathBuf>,
    /// Write one file per stage instead, into the directory -o names:
    /// DIR/NAME.STAGE.spv (NAME: the first file's stem; STAGE: vertex,
    /// fragment, …).
    #[arg(long, requires = "out")]
    split: bool,
    /// Compile and validate only, and write nothing: the exit status says
    /// whether the program compiled (0) or not (1).
    #[arg(long, conflicts_with = "out")]
    check: bool,
    /// Build the program on a live device through the run-time build system that loads the
    /// target (Vulkan under its validation layers) and print its constants and resources.
    #[arg(long)]
    device: bool,
    /// Give an override (a specialization constant, `layout(constant_id = N)
    /// const float GAIN = 1.0;`) its value where --device builds the program,
    /// as the run-time library does; the others keep the defaults the source
    /// declares. On gl-glsl the driver gets them as defines. Repeatable;
    /// checked against the overrides the program declares and their types.
    #[arg(long = "override", value_name = "NAME=VALUE")]
    overrides: Vec<String>,
}

impl CompileArgs {
    /// `--override` values as (name, value), refusing any without a name and `=`.
    fn overrides(&self) -> anyhow::Result<Vec<(String, String)>> {
        self.overrides
            .iter()
            .map(|given| match given.split_once('=') {
                Some((name, value)) if !name.is_empty() => Ok((name.to_owned(), value.to_owned())),
                _ => Err(usage(format!("--override takes NAME=VALUE (GAIN=1.5), not '{given}'"))),
            })
            .collect()
    }

    /// Refuses an `-o` that cannot take what is asked before anything compiles.
    fn check_out(&self) -> anyhow::Result<()> {
        let Some(out) = &self.out else { return Ok(()) };
        if self.split && out.as_os_str() == STDOUT {
            return Err(usage("--split writes one file per stage into a directory: -o - (standard output) takes one"));
        }
        if self.split && out.exists() && !out.is_dir() {
            return Err(usage(format!(
                "--split writes one file per stage into the directory -o names, and {} is not a directory",
                out.display()
            )));
        }
        if !self.split && out.is_dir() {
            return Err(usage(format!(
                "-o {} is a directory: name a file, or give --split to write one file per stage into it",
                out.display()
            )));
        }
        Ok(())
    }
}

/// The files `-o` asks for: one, or with `--split` one per stage.
fn outputs(
    args: &CompileArgs,
    out: &Path,
    target: &str,
    program: &ProgramDesc,
    artifact: &OfflineArtifact,
) -> anyhow::Result<Vec<(PathBuf, Vec<u8>)>> {
    if !args.split {
        let bytes = match artifact.stages.as_slice() {
            [only] => only.bytes.to_vec(),
            _ => artifact.bytes.to_vec(),
        };
        return Ok(vec![(out.to_owned(), bytes)]);
    }
    if artifact.stages.is_empty() {
        return Err(usage(format!(
            "--split: {target} gives no output per stage, only the whole program's artifact: write it with -o FILE"
        )));
    }
    Ok(artifact
        .stages
        .iter()
        .map(|stage| {
            let extension = if stage.bytes.starts_with(&SPIRV_MAGIC.to_le_bytes()) { "spv" } else { target };
            let name = format!("{}.{}.{extension}", program.name, stage.stage.name());
            (out.join(name), stage.bytes.to_vec())
        })
        .collect())
}

/// The first word of a SPIR-V module.
const SPIRV_MAGIC: u32 = 0x0723_0203;

/// `xr compile`: compiles the program; with `device`, builds it on a live
/// device and prints its table; then writes what `-o` asks for (the stage's
/// own output where the target has one, else the artifact as the store
/// would keep it), or with `--check` nothing.
pub fn compile(args: SourceArgs, output: CompileArgs, messages: MessageArgs) -> anyhow::Result<()> {
    if output.out.is_none() && !output.device && !output.check {
        return Err(usage("nothing to do: give -o FILE, --check, --device, or -o with --device"));
    }
    let given = output.overrides()?;
    output.check_out()?;
    let registry = Registry::discover();
    let Compiled { target, program, artifact, warnings } = args.compile("xr compile", &registry, &messages)?;
    let overrides = command_line::override_values(&program.name, &artifact.reflection.overrides, &given)
        .map_err(|e| usage(e.to_string()))?;
    let files = match &output.out {
        Some(out) => outputs(&output, out, &target, &program, &artifact)?,
        None => Vec::new(),
    };
    if output.device {
        on_device(&registry, &target, &program, artifact.bytes.to_vec(), overrides, &messages)?;
    } else if !given.is_empty() {
        messages.note(
            "xr compile: note: overrides take their values where the program is built (--device); \
             what -o writes keeps the defaults, as xr build's artifacts do",
        );
    }
    // Only now, with everything built: a failure above leaves no file.
    write_all(&files)?;
    for (path, bytes) in &files {
        let place = if path.as_os_str() == STDOUT { "standard output".into() } else { path.display().to_string() };
        messages.tell(&format!("xr compile: wrote {} bytes to {place}", bytes.len()));
    }
    if output.check {
        let stages = program.stages.len();
        messages.tell(&format!(
            "xr compile: {} compiles for {target} ({stages} stage{}); nothing written (--check)",
            program.name,
            if stages == 1 { "" } else { "s" }
        ));
    }
    print_json_summary(&messages, true, &target, 0, warnings);
    Ok(())
}

/// Loads the artifact of `target` through the run-time build system that
/// declares it, on a device it attaches to (Vulkan with its validation
/// layers), and prints the program's constants and resources.
fn on_device(
    registry: &Registry,
    target: &str,
    program: &ProgramDesc,
    artifact: Vec<u8>,
    overrides: Vec<OverrideValue>,
    messages: &MessageArgs,
) -> anyhow::Result<()> {
    let mut loaders: Vec<_> = registry
        .build_system_entries()
        .filter_map(|(info, system)| {
            let load = info.loads.iter().filter(|l| l.target == target).min_by_key(|l| match l.path {
                LoadPath::CompatibleObject => 0,
                LoadPath::Source => 1,
                LoadPath::DeviceBinary => 2,
            })?;
            Some((info, system, load.path))
        })
        .collect();
    loaders.sort_by_key(|(info, _, _)| std::cmp::Reverse(info.priority));
    let (info, system, path) =
        loaders.into_iter().next().with_context(|| format!("no build system found loads {target} on a device"))?;
    let kind = *info.attachable.first().with_context(|| format!("{} attaches to no device", info.name))?;
    // Validation where the API has it (devices without it ignore the flag).
    let options = DeviceOptions { validation: true, ..DeviceOptions::default() };
    let mut device = registry.open_device(kind, &options)?;
    let capabilities = device.capabilities().into_result()?;
    let handles = device.native_handles().into_result()?;
    let mut attached = system.attach(&handles, &capabilities).into_result()?;
    // The build system (and the program it made) goes before the device, on every path.
    let result = print_on_device(
        &mut device,
        &mut attached,
        target,
        program,
        artifact,
        overrides,
        path,
        kind,
        &capabilities,
        info.name.as_str(),
        messages,
    );
    drop(attached);
    drop(device);
    result
}

/// Builds the program through `attached` and prints its table.
#[allow(clippy::too_many_arguments)]
fn print_on_device(
    device: &mut xr_device::DeviceBox,
    attached: &mut xr_sourcebuild::AttachedBuildSystemBox,
    target: &str,
    program: &ProgramDesc,
    artifact: Vec<u8>,
    overrides: Vec<OverrideValue>,
    path: LoadPath,
    kind: xr_device::DeviceKind,
    capabilities: &xr_device::DeviceCapabilities,
    build_system: &str,
    messages: &MessageArgs,
) -> anyhow::Result<()> {
    let request = ArtifactLoad {
        name: program.name.clone(),
        target: target.into(),
        path,
        artifact: artifact.into(),
        overrides: overrides.into(),
    };
    let loaded = attached.load_artifact(&request).into_result().map_err(|error| {
        // The compile's own root, as the offline compile named the files from it.
        let root = program.stages.first().map_or("", |s| s.source_root.as_str());
        report_failure(messages, build_system, &program.name, target, &error, &SourceRoot::new(Path::new(root)))
    })?;
    // The build system made its pipeline outside the device's calls.
    let validation = device.take_validation_messages().into_result()?;
    if !validation.is_empty() {
        for message in validation.iter() {
            eprintln!("validation: {message}");
        }
        anyhow::bail!("{}: {} validation message(s) while building the program", program.name, validation.len());
    }
    let constants = loaded.program.constants.constants().into_result()?;
    let resources = loaded.program.constants.resources().into_result()?;
    messages.say(&format!(
        "xr compile: {} built on {} ({}, {} {}.{}) by {}",
        program.name,
        capabilities.renderer,
        kind.name(),
        kind.api_name(),
        capabilities.api_major,
        capabilities.api_minor,
        build_system
    ));
    for constant in constants.iter() {
        let array = if constant.array_size > 1 { format!("[{}]", constant.array_size) } else { String::new() };
        messages.say(&format!("  constant {}{array} : {}", constant.name, constant.ty));
    }
    for resource in resources.iter() {
        let array = if resource.array_size > 1 { format!("[{}]", resource.array_size) } else { String::new() };
        let place = format!("set {}, binding {}", resource.set, resource.binding);
        let size =
            if resource.min_size > 0 { format!(", at least {} bytes", resource.min_size) } else { String::new() };
        messages.say(&format!("  {} {}{array} ({place}{size})", resource.kind.name(), resource.name));
    }
    drop(loaded);
    Ok(())
}

/// Writes each file whole: into a temporary file beside it, renamed over
/// it only once every file is written, so that a failure leaves no partial
/// file and what was at each path before untouched.
/// `-o -`: standard output.
const STDOUT: &str = "-";

fn write_all(files: &[(PathBuf, Vec<u8>)]) -> anyhow::Result<()> {
    let mut staged: Vec<(PathBuf, &Path)> = Vec::new();
    let result = (|| {
        for (path, bytes) in files {
            if path.as_os_str() == STDOUT {
                use std::io::Write;
                let mut stdout = std::io::stdout().lock();
                stdout.write_all(bytes).and_then(|()| stdout.flush()).context("writing to standard output")?;
                continue;
            }
            if std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
                // /dev/null, a pipe: nothing there to replace or leave half-written.
                std::fs::write(path, bytes).with_context(|| format!("writing {}", path.display()))?;
                continue;
            }
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
            }
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let temporary = path.with_file_name(format!(".{name}.xr-{}.tmp", std::process::id()));
            std::fs::write(&temporary, bytes).with_context(|| format!("writing {}", temporary.display()))?;
            staged.push((temporary, path));
        }
        for (temporary, path) in &staged {
            std::fs::rename(temporary, path).with_context(|| format!("writing {}", path.display()))?;
        }
        Ok(())
    })();
    if result.is_err() {
        for (temporary, _) in &staged {
            let _ = std::fs::remove_file(temporary);
        }
    }
    result
}

/// `xr reflect`: what the build system says the program exposes.
pub fn reflect(args: SourceArgs, json: bool, messages: MessageArgs) -> anyhow::Result<()> {
    let registry = Registry::discover();
    let Compiled { target, artifact, warnings, .. } = args.compile("xr reflect", &registry, &messages)?;
    let reflection = artifact.reflection;
    if json {
        let details: serde_json::Value = if reflection.json.is_empty() {
            serde_json::Value::Null
        } else {
            serde_json::from_str(&reflection.json).context("the build system's reflection is not JSON")?
        };
        let value = serde_json::json!({
            "files": args.files,
            "target": target,
            "constants": reflection.constants.iter().map(|c| serde_json::json!({"name": c.name.as_str(), "ty": c.ty.as_str(), "stage": c.stage.name()})).collect::<Vec<_>>(),
            "resources": reflection.resources.iter().map(|r| serde_json::json!({"name": r.name.as_str(), "kind": r.kind.as_str(), "set": r.set, "binding": r.binding, "stage": r.stage.name()})).collect::<Vec<_>>(),
            "overrides": reflection.overrides.iter().map(|o| serde_json::json!({"name": o.name.as_str(), "id": o.id, "ty": o.ty.as_str(), "default": o.default.as_str()})).collect::<Vec<_>>(),
            "details": details,
        });
        if messages.json() {
            // One object per line, like the diagnostics around it.
            let mut line = value;
            line["type"] = "reflection".into();
            println!("{line}");
        } else {
            println!("{}", serde_json::to_string_pretty(&value)?);
        }
        print_json_summary(&messages, true, &target, 0, warnings);
        return Ok(());
    }
    if reflection.text.is_empty() {
        for c in reflection.constants.iter() {
            messages.say(&format!("  constant {} : {}", c.name, c.ty));
        }
        for r in reflection.resources.iter() {
            messages.say(&format!("  {} {} (set {}, binding {})", r.kind, r.name, r.set, r.binding));
        }
        for o in reflection.overrides.iter() {
            messages.say(&format!("  override {} (id {}) : {} = {}", o.name, o.id, o.ty, o.default));
        }
    } else {
        messages.say(reflection.text.trim_end());
    }
    print_json_summary(&messages, true, &target, 0, warnings);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_override_without_a_name_and_equals_sign_is_refused() {
        for bad in ["GAIN", "=1"] {
            let args = CompileArgs { out: None, split: false, check: true, device: false, overrides: vec![bad.into()] };
            let error = args.overrides().expect_err("refused");
            assert!(error.to_string().contains(&format!("--override takes NAME=VALUE (GAIN=1.5), not '{bad}'")));
        }
    }
}
