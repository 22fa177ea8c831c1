//! `xr-compiler-wgsl`: an out-of-tree XR build system plugin that compiles
//! WGSL into SPIR-V with [naga](https://crates.io/crates/naga), for the
//! `vk-spirv` and `gl-spirv` targets.
//!
//! It compiles offline only and attaches to no device: its artifacts are
//! XR's SPIR-V objects ([`xr_spirv_object::encode`]), which the Vulkan and GL
//! SPIR-V build systems already load.
//!
//! # Overrides as specialization constants: the sentinel trick
//!
//! A WGSL `override` is what GLSL calls a specialization constant, and XR
//! sets them at load time (`OpSpecConstant` + `SpecId`). naga's SPIR-V
//! writer, however, writes no specialization constants: it refuses a
//! module that still has overrides, and
//! `naga::back::pipeline_constants::process_overrides` resolves them to
//! plain constants first. So this plugin resolves each override to a
//! *sentinel* — a value of its type that no real shader writes (an `f32`
//! near 1.2e7 with a per-override low bit pattern, or `0x5EED_0000 + n` for
//! integers) — writes the module, and then patches the SPIR-V words ([`spec`]):
//! the one `OpConstant` holding the sentinel becomes an `OpSpecConstant`
//! holding the override's default, decorated `SpecId` = its `@id`.
//!
//! That only works while the override reaches the SPIR-V as a constant of
//! its own. naga evaluates expressions made of overrides and constants only
//! (`GAIN * 2.0`, a default computed from another override, a workgroup
//! size, an array length) with the sentinel, so such uses are refused with
//! an error at the line of the use ([`compile::folded_uses`]); bool overrides
//! are refused too (`OpSpecConstantTrue` would need a different patch), and
//! every override needs an `@id`.
//!
//! # Blocks with named members
//!
//! naga wraps every uniform and push-constant struct in an anonymous
//! one-member `Block`; XR's loaders find constants by the block's member
//! names, so [`blocks::unwrap`] removes the wrapper where it safely can,
//! leaving the struct itself as the `Block`, as GLSL compilers write it.

pub mod blocks;
pub mod compile;
pub mod reflect;
pub mod spec;

use xr_device::XrError;
use xr_sourcebuild::{Availability, BuildError, BuildSystemInfo, CompilePair, LanguageInfo, OfflineArtifact, OfflineRequest, OptionDecl, ShaderStage, SourceBuildSystemBackend, SourceReach};

/// The build system's name.
pub const NAME: &str = "xr-compiler-wgsl";

xr_plugin::export_plugin!(build_systems: [WgslSystem]);

/// `wgsl → target` with the options the compile takes there: the SPIR-V
/// version (1.0 only for `ARB_gl_spirv`), and the Vulkan version and
/// optimisation level `xr build` passes to every SPIR-V compiler. WGSL has
/// no includes: a compile reads its stage alone, which is all a farm's
/// action for it carries.
fn pair(target: &str) -> CompilePair {
    let versions: &[&str] =
        if target == "gl-spirv" { &["1.0"] } else { &["1.0", "1.1", "1.2", "1.3", "1.4", "1.5", "1.6"] };
    let mut options = vec![
        OptionDecl::choice("spirv-version", versions, "1.0", "SPIR-V version written"),
        OptionDecl::choice("optimize", &["none", "size", "performance"], "none", "accepted; naga has no optimizer"),
    ];
    if target == "vk-spirv" {
        options.push(OptionDecl::choice(
            "vulkan",
            &["1.0", "1.1", "1.2", "1.3"],
            "1.0",
            "accepted; SPIR-V 1.0 loads on every Vulkan version",
        ));
    }
    CompilePair::new("wgsl", target).with_options(options).reaching(SourceReach::STAGE_ONLY)
}

/// The WGSL build system: WGSL → SPIR-V with naga, offline only.
pub struct WgslSystem;

/// `Guarded` puts it behind the ABI and catches any panic at the boundary;
/// `attach` is the default of a build system that only compiles offline
/// (the Vulkan and GL SPIR-V build systems load its artifacts).
impl SourceBuildSystemBackend for WgslSystem {
    fn info(&self) -> Result<BuildSystemInfo, XrError> {
        let description = "WGSL to SPIR-V (naga), offline; loaded by the Vulkan and GL SPIR-V build systems";
        Ok(BuildSystemInfo {
            languages: vec![LanguageInfo::new("wgsl", &["wgsl"])].into(),
            stages: vec![ShaderStage::Vertex, ShaderStage::Fragment, ShaderStage::Compute].into(),
            compiler_identity: format!("{NAME} {} / naga {}", env!("CARGO_PKG_VERSION"), compile::NAGA_VERSION).into(),
            compiles: compile::TARGETS.iter().map(|t| pair(t)).collect::<Vec<_>>().into(),
            ..BuildSystemInfo::new(NAME, description, Availability::OFFLINE_COMPILE | Availability::COMPATIBLE_OBJECT)
        })
    }

    fn compile_offline(&self, request: &OfflineRequest) -> Result<OfflineArtifact, BuildError> {
        compile::compile(request)
    }
}

#[cfg(test)]
mod tests;
