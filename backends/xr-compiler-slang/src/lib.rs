//! `xr-compiler-slang`: Slang compiled to SPIR-V for the `vk-spirv` and
//! `gl-spirv` targets by the Slang library, which the plugin opens at run
//! time ([`library`]): it builds and loads without Slang, and lists itself
//! without availability, with the reason, where the library is missing.
//!
//! It compiles offline only: its artifacts are XR's SPIR-V objects, linked,
//! validated and reflected by XR's SPIR-V core, which the Vulkan and GL
//! SPIR-V build systems load. A program is one or more `.slang` files and
//! the entry points its stages name; `xr compile a.slang` asks
//! [`compile::entry_points`] for the `[shader("…")]` entry points a file
//! declares. Imported modules are found in the file's directory and the
//! include directories, and are inputs of the build like `#include`d files.

pub mod compile;
pub mod diagnostics;
pub mod dxc_forms;
pub mod ffi;
pub mod library;
pub mod session;

use xr_device::XrError;
use xr_sourcebuild::{
    Availability, BuildError, BuildSystemInfo, EntryPoint, LanguageInfo, OfflineArtifact, OfflineRequest, ShaderStage,
    SourceBuildSystemBackend, SourceDesc,
};

/// The build system's name.
pub const NAME: &str = "xr-compiler-slang";

xr_plugin::declare_plugin!(build_systems: [SlangSystem]);

/// The Slang build system: offline only.
pub struct SlangSystem;

impl SourceBuildSystemBackend for SlangSystem {
    fn info(&self) -> Result<BuildSystemInfo, XrError> {
        let (availability, description, identity) = match library::slang() {
            Ok(slang) => (
                Availability::OFFLINE_COMPILE | Availability::COMPATIBLE_OBJECT,
                format!(
                    "Slang to SPIR-V (the Slang {} library, {}), offline; loaded by the Vulkan and GL SPIR-V build \
                     systems",
                    library::SLANG_VERSION,
                    slang.path.display()
                ),
                format!("{NAME} {} / slang {}", env!("CARGO_PKG_VERSION"), library::SLANG_VERSION),
            ),
            Err(e) => (Availability::NONE, format!("Slang to SPIR-V; unavailable: {e}"), NAME.to_owned()),
        };
        Ok(BuildSystemInfo {
            languages: vec![LanguageInfo::new(compile::LANGUAGE, &["slang"])].into(),
            stages: ShaderStage::ALL.to_vec().into(),
            compiler_identity: identity.into(),
            compiles: compile::TARGETS
                .iter()
                .map(|t| compile::pair(t))
                .chain([compile::hlsl_pair()])
                .collect::<Vec<_>>()
                .into(),
            // Below the compilers of the other languages it reads (HLSL):
            // where both take a program, theirs is used.
            priority: -5,
            ..BuildSystemInfo::new(NAME, &description, availability)
        })
    }

    fn compile_offline(&self, request: &OfflineRequest) -> Result<OfflineArtifact, BuildError> {
        compile::compile(request, xr_spirv::offline::Reflect::Yes)
    }

    fn compile_for_store(&self, request: &OfflineRequest) -> Result<OfflineArtifact, BuildError> {
        compile::compile(request, xr_spirv::offline::Reflect::No)
    }

    fn entry_points(&self, source: &SourceDesc) -> Result<Vec<EntryPoint>, BuildError> {
        compile::entry_points(source)
    }
}
