//! `xr compile` and `xr reflect`: XR's `D3DXCompileShaderFromFile`.

use anyhow::{Context, bail};
use clap::{Args, ValueEnum};
use serde::Serialize;
use std::path::{Path, PathBuf};
use xr_device::{DeviceKind, DeviceOptions};
use xr_sourcebuild::{
    AttachedDevice, Availability, BuildError, BuildOptions, DriverIdentity, ProgramDesc, Registry, ShaderStage,
    SourceDesc, SourceLanguage, encode_binary_record,
};
use xr_spirv::{Optimization, SpirvCompiler, SpirvOptions, SpirvVersion, TargetEnv, hlsl};

/// What to build for.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// GLSL built by this machine's OpenGL driver; writes the device program binary.
    GlGlsl,
    /// SPIR-V for OpenGL 4.5 (`ARB_gl_spirv`).
    GlSpirv,
    /// SPIR-V for Vulkan.
    VkSpirv,
}

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

/// Source language on the command line.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Language {
    /// GLSL.
    Glsl,
    /// HLSL.
    Hlsl,
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
    /// Source language; HLSL for .hlsl files, GLSL otherwise.
    #[arg(long)]
    lang: Option<Language>,
    /// Define a macro: NAME or NAME=VALUE.
    #[arg(short = 'D', value_name = "NAME[=VALUE]")]
    defines: Vec<String>,
    /// Add an include directory.
    #[arg(short = 'I', value_name = "DIR")]
    include_dirs: Vec<PathBuf>,
    /// Target.
    #[arg(long, value_enum, default_value = "vk-spirv")]
    target: Target,
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
    fn describe(&self) -> anyhow::Result<SourceDesc> {
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
        let hlsl = self.lang == Some(Language::Hlsl)
            || (self.lang.is_none() && (self.profile.is_some() || extension == "hlsl"));
        let mut desc = SourceDesc::glsl_file(stage, &self.file)?;
        desc.language = if hlsl { SourceLanguage::Hlsl } else { SourceLanguage::Glsl };
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

    fn spirv_options(&self) -> anyhow::Result<SpirvOptions> {
        let target = match self.target {
            Target::GlSpirv => TargetEnv::OpenGl45,
            Target::VkSpirv => TargetEnv::from_name(&format!("vulkan{}", self.vulkan))
                .with_context(|| format!("unknown Vulkan version '{}' (1.0, 1.1, 1.2 or 1.3)", self.vulkan))?,
            Target::GlGlsl => bail!("gl-glsl is built by the OpenGL driver, not into SPIR-V"),
        };
        let spirv_version = match self.spirv_version.as_deref() {
            None => None,
            Some(v) => Some(match v {
                "1.0" => SpirvVersion::V1_0,
                "1.1" => SpirvVersion::V1_1,
                "1.2" => SpirvVersion::V1_2,
                "1.3" => SpirvVersion::V1_3,
                "1.4" => SpirvVersion::V1_4,
                "1.5" => SpirvVersion::V1_5,
                "1.6" => SpirvVersion::V1_6,
                other => bail!("unknown SPIR-V version '{other}' (1.0 … 1.6)"),
            }),
        };
        let optimization = match self.optimization {
            OptLevel::None => Optimization::None,
            OptLevel::Size => Optimization::Size,
            OptLevel::Performance => Optimization::Performance,
        };
        Ok(SpirvOptions { target, spirv_version, optimization })
    }

    fn compile_spirv(&self) -> anyhow::Result<xr_spirv::SpirvModule> {
        let desc = self.describe()?;
        let options = self.spirv_options()?;
        let compiler = SpirvCompiler::new()?;
        compiler.compile(&desc, &options).map_err(build_failure)
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

/// `xr compile`.
pub fn compile(args: SourceArgs, out: PathBuf) -> anyhow::Result<()> {
    let bytes = match args.target {
        Target::GlSpirv | Target::VkSpirv => {
            let module = args.compile_spirv()?;
            for warning in &module.warnings {
                eprintln!("{warning}");
            }
            module.to_bytes()
        }
        Target::GlGlsl => device_program_binary(&args.describe()?)?,
    };
    write(&out, &bytes)?;
    println!("xr compile: wrote {} bytes to {}", bytes.len(), out.display());
    Ok(())
}

/// Builds one separable stage on this machine's OpenGL device and returns
/// its program binary, recorded with the driver identity it is valid for.
fn device_program_binary(desc: &SourceDesc) -> anyhow::Result<Vec<u8>> {
    let registry = Registry::discover();
    // The device must outlive the build: keep it bound.
    let AttachedDevice { device: _device, capabilities, mut compiler } = registry.open_attached(
        DeviceKind::OpenGl,
        Availability::RUNTIME_COMPILE,
        SourceLanguage::Glsl,
        &DeviceOptions::default(),
    )?;
    let name = desc.file_name.to_string();
    let options = BuildOptions { separable: true, retrievable: true };
    let built = compiler
        .build_program(&ProgramDesc::new(&name, [desc.clone()]), &options)
        .into_result()
        .map_err(build_failure)?;
    for warning in built.warnings.iter() {
        eprintln!("{warning}");
    }
    let binary = compiler.program_binary(built.program).into_result().context(
        "this OpenGL driver gives no program binaries back (no binary formats): nothing to write for gl-glsl",
    )?;
    Ok(encode_binary_record(&name, &DriverIdentity::of(&capabilities), &binary))
}

fn write(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    std::fs::write(path, bytes).with_context(|| format!("writing {}", path.display()))
}

#[derive(Serialize)]
struct MemberJson<'a> {
    name: &'a str,
    offset: usize,
    ty: &'a str,
}

#[derive(Serialize)]
struct BlockJson<'a> {
    name: &'a str,
    set: u32,
    binding: u32,
    size: Option<usize>,
    members: Vec<MemberJson<'a>>,
}

/// `xr reflect`.
pub fn reflect(args: SourceArgs, json: bool) -> anyhow::Result<()> {
    if args.target == Target::GlGlsl {
        bail!("xr reflect reads SPIR-V: use --target gl-spirv or vk-spirv");
    }
    let module = args.compile_spirv()?;
    let r = xr_spirv::reflect(&module.words, &module.entry_point)?;
    let blocks = |list: &'_ [xr_spirv::reflect::Block]| -> Vec<serde_json::Value> {
        list.iter()
            .map(|b| {
                serde_json::to_value(BlockJson {
                    name: &b.name,
                    set: b.set,
                    binding: b.binding,
                    size: b.size,
                    members: b
                        .members
                        .iter()
                        .map(|m| MemberJson { name: &m.name, offset: m.offset, ty: &m.ty })
                        .collect(),
                })
                .unwrap_or_default()
            })
            .collect()
    };
    let io = |list: &[xr_spirv::reflect::InterfaceVariable]| -> Vec<serde_json::Value> {
        list.iter()
            .map(|v| serde_json::json!({"name": v.name, "location": v.location, "component": v.component, "ty": v.ty}))
            .collect()
    };
    let value = serde_json::json!({
        "file": args.file,
        "entry_point": r.entry_point,
        "stage": module.stage.name(),
        "uniforms": r.uniforms.iter().map(|u| serde_json::json!({"name": u.name, "location": u.location, "ty": u.ty})).collect::<Vec<_>>(),
        "uniform_blocks": blocks(&r.uniform_blocks),
        "storage_buffers": blocks(&r.storage_buffers),
        "push_constants": blocks(&r.push_constants),
        "images": r.images.iter().map(|i| serde_json::json!({"name": i.name, "set": i.set, "binding": i.binding, "kind": i.kind})).collect::<Vec<_>>(),
        "spec_constants": r.spec_constants.iter().map(|c| serde_json::json!({"name": c.name, "id": c.id, "ty": c.ty, "default": c.default})).collect::<Vec<_>>(),
        "inputs": io(&r.inputs),
        "outputs": io(&r.outputs),
    });
    if json {
        println!("{}", serde_json::to_string_pretty(&value)?);
        return Ok(());
    }
    println!("{} ({} entry point '{}')", args.file.display(), module.stage.name(), r.entry_point);
    for u in &r.uniforms {
        println!("  uniform location {} : {} {}", u.location, u.name, u.ty);
    }
    for (title, list) in [
        ("uniform block", &r.uniform_blocks),
        ("storage buffer", &r.storage_buffers),
        ("push constants", &r.push_constants),
    ] {
        for b in list {
            let size = b.size.map(|s| format!(", {s} bytes")).unwrap_or_default();
            println!("  {title} {} (set {}, binding {}{size})", b.name, b.set, b.binding);
            for m in &b.members {
                println!("    +{:<4} {} : {}", m.offset, m.name, m.ty);
            }
        }
    }
    for i in &r.images {
        println!("  {} {} (set {}, binding {})", i.kind, i.name, i.set, i.binding);
    }
    for c in &r.spec_constants {
        println!("  specialization constant {} (id {}) : {} = {}", c.name, c.id, c.ty, c.default);
    }
    for (title, list) in [("input", &r.inputs), ("output", &r.outputs)] {
        for v in list {
            println!("  {title} location {} : {} {}", v.location, v.name, v.ty);
        }
    }
    Ok(())
}
