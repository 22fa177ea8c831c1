//! `xr compile` and `xr reflect`: XR's `D3DXCompileShaderFromFile`.

use crate::hlsl;
use anyhow::Context;
use clap::{Args, ValueEnum};
use std::path::{Path, PathBuf};
use xr_sourcebuild::{BuildError, OfflineArtifact, OfflineRequest, ProgramDesc, Registry, ShaderStage, SourceDesc};

/// A stage on the command line.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// Vertex.
    Vertex,
    /// Fragment (pixel).
    Fragment,
    /// Geometry.
    Geometry,
    /// Tessellation control (hull).
    TessControl,
    /// Tessellation evaluation (domain).
    TessEvaluation,
    /// Compute.
    Compute,
}

impl From<Stage> for ShaderStage {
    fn from(stage: Stage) -> Self {
        match stage {
            Stage::Vertex => ShaderStage::Vertex,
            Stage::Fragment => ShaderStage::Fragment,
            Stage::Geometry => ShaderStage::Geometry,
            Stage::TessControl => ShaderStage::TessControl,
            Stage::TessEvaluation => ShaderStage::TessEvaluation,
            Stage::Compute => ShaderStage::Compute,
        }
    }
}

/// Optimisation level on the command line.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum OptLevel {
    /// None; debug names kept.
    None,
    /// Smaller code.
    Size,
    /// Faster code.
    Performance,
}

/// The source to build, shared by `xr compile` and `xr reflect`.
#[derive(Args)]
pub struct SourceArgs {
    /// The shader source file.
    file: PathBuf,
    /// Stage; taken from the file extension (.vert, .frag, …) or the HLSL profile when left out.
    #[arg(long)]
    stage: Option<Stage>,
    /// HLSL profile (vs_5_0, ps_5_0, …): sets the stage and the language.
    #[arg(long)]
    profile: Option<String>,
    /// Entry point.
    #[arg(long, default_value = "main")]
    entry: String,
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
    /// Vulkan version for vk-spirv: 1.0, 1.1, 1.2 or 1.3.
    #[arg(long, default_value = "1.0")]
    vulkan: String,
    /// SPIR-V version (1.0 … 1.6); the target's newest by default.
    #[arg(long)]
    spirv_version: Option<String>,
    /// Optimisation level.
    #[arg(short = 'O', long = "optimize", value_enum, default_value = "none")]
    optimization: OptLevel,
}

impl SourceArgs {
    fn describe(&self, registry: &Registry) -> anyhow::Result<SourceDesc> {
        let profile_stage = match &self.profile {
            Some(profile) => {
                Some(hlsl::stage_of_profile(profile).with_context(|| format!("unknown HLSL profile '{profile}'"))?)
            }
            None => None,
        };
        let extension = self.file.extension().and_then(|e| e.to_str()).unwrap_or("");
        let stage = match (self.stage, profile_stage) {
            (Some(stage), _) => stage.into(),
            (None, Some(stage)) => stage,
            (None, None) => stage_of_extension(extension).with_context(|| {
                format!("cannot tell the stage of {}: give --stage or --profile", self.file.display())
            })?,
        };
        let language = match (&self.lang, &self.profile) {
            (Some(language), _) => language.clone(),
            (None, Some(_)) => "hlsl".to_owned(),
            (None, None) => registry.language_of_extension(extension).with_context(|| {
                format!(
                    "cannot tell the language of {} from its extension: give --lang (the plugins found compile: {})",
                    self.file.display(),
                    registry.languages().join(", ")
                )
            })?,
        };
        let mut desc = SourceDesc::glsl_file(stage, &self.file)?.with_language(&language);
        desc.entry_point = self.entry.as_str().into();
        for define in &self.defines {
            let (name, value) = define.split_once('=').unwrap_or((define, ""));
            desc = desc.with_define(name, value);
        }
        for dir in &self.include_dirs {
            desc = desc.with_include_dir(dir.to_string_lossy());
        }
        Ok(desc)
    }

    /// Compiles the file through the build system that the plugins declare
    /// for its (language → target) pair.
    fn compile(&self) -> anyhow::Result<(String, OfflineArtifact)> {
        let registry = Registry::discover();
        let desc = self.describe(&registry)?;
        let target = match &self.target {
            Some(target) => target.clone(),
            None => default_target(&registry, &desc.language)?,
        };
        let (info, system) = registry.offline_compiler(&desc.language, &target)?;
        let mut request = OfflineRequest::new(ProgramDesc::new(desc.file_name.to_string(), [desc]), &target)
            .with_option("vulkan", &self.vulkan)
            .with_option("optimize", self.optimization.name());
        if let Some(version) = &self.spirv_version {
            request = request.with_option("spirv-version", version);
        }
        tracing::debug!(build_system = %info.name, "compiling {} for {target}", self.file.display());
        let artifact = system.compile_offline(&request).into_result().map_err(build_failure)?;
        for warning in artifact.warnings.iter() {
            eprintln!("{warning}");
        }
        Ok((target, artifact))
    }
}

/// The first target of the highest-priority build system that compiles
/// `language` into a compatible object.
fn default_target(registry: &Registry, language: &str) -> anyhow::Result<String> {
    let mut systems: Vec<_> = registry
        .build_system_entries()
        .map(|(info, _)| info)
        .filter(|info| info.availability.contains(xr_sourcebuild::Availability::COMPATIBLE_OBJECT))
        .collect();
    systems.sort_by_key(|info| std::cmp::Reverse(info.priority));
    systems
        .iter()
        .flat_map(|info| info.compiles.iter())
        .find(|pair| pair.language == language)
        .map(|pair| pair.target.to_string())
        .with_context(|| format!("no plugin compiles {language} into a portable object: give --target"))
}

impl OptLevel {
    fn name(self) -> &'static str {
        match self {
            OptLevel::None => "none",
            OptLevel::Size => "size",
            OptLevel::Performance => "performance",
        }
    }
}

fn stage_of_extension(extension: &str) -> Option<ShaderStage> {
    Some(match extension {
        "vert" | "vs" => ShaderStage::Vertex,
        "frag" | "fs" | "ps" => ShaderStage::Fragment,
        "geom" | "gs" => ShaderStage::Geometry,
        "tesc" => ShaderStage::TessControl,
        "tese" => ShaderStage::TessEvaluation,
        "comp" | "cs" => ShaderStage::Compute,
        _ => return None,
    })
}

/// Prints every diagnostic and returns the one-line summary as the error.
fn build_failure(error: BuildError) -> anyhow::Error {
    for diagnostic in error.diagnostics.iter() {
        eprintln!("{diagnostic}");
    }
    anyhow::anyhow!("{}", error.error.message)
}

/// `xr compile`: writes the stage's own output where the target has one
/// (a SPIR-V module), else the artifact as the store would keep it.
pub fn compile(args: SourceArgs, out: PathBuf) -> anyhow::Result<()> {
    let (_, artifact) = args.compile()?;
    let bytes = match artifact.stages.as_slice() {
        [only] => only.bytes.to_vec(),
        _ => artifact.bytes.to_vec(),
    };
    write(&out, &bytes)?;
    println!("xr compile: wrote {} bytes to {}", bytes.len(), out.display());
    Ok(())
}

fn write(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    std::fs::write(path, bytes).with_context(|| format!("writing {}", path.display()))
}

/// `xr reflect`: what the build system says the program exposes.
pub fn reflect(args: SourceArgs, json: bool) -> anyhow::Result<()> {
    let (target, artifact) = args.compile()?;
    let reflection = artifact.reflection;
    if json {
        let details: serde_json::Value = if reflection.json.is_empty() {
            serde_json::Value::Null
        } else {
            serde_json::from_str(&reflection.json).context("the build system's reflection is not JSON")?
        };
        let value = serde_json::json!({
            "file": args.file,
            "target": target,
            "constants": reflection.constants.iter().map(|c| serde_json::json!({"name": c.name.as_str(), "ty": c.ty.as_str(), "stage": c.stage.name()})).collect::<Vec<_>>(),
            "resources": reflection.resources.iter().map(|r| serde_json::json!({"name": r.name.as_str(), "kind": r.kind.as_str(), "set": r.set, "binding": r.binding, "stage": r.stage.name()})).collect::<Vec<_>>(),
            "overrides": reflection.overrides.iter().map(|o| serde_json::json!({"name": o.name.as_str(), "id": o.id, "ty": o.ty.as_str(), "default": o.default.as_str()})).collect::<Vec<_>>(),
            "details": details,
        });
        println!("{}", serde_json::to_string_pretty(&value)?);
        return Ok(());
    }
    if reflection.text.is_empty() {
        for c in reflection.constants.iter() {
            println!("  constant {} : {}", c.name, c.ty);
        }
        for r in reflection.resources.iter() {
            println!("  {} {} (set {}, binding {})", r.kind, r.name, r.set, r.binding);
        }
        for o in reflection.overrides.iter() {
            println!("  override {} (id {}) : {} = {}", o.name, o.id, o.ty, o.default);
        }
    } else {
        print!("{}", reflection.text);
    }
    Ok(())
}
