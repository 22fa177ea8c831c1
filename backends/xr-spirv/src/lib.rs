//! XR's SPIR-V compile core, shared by the SPIR-V build systems.
//!
//! - [`SpirvCompiler`] builds GLSL and HLSL into SPIR-V with shaderc:
//!   stage, any entry point name, defines, includes resolved by XR (so
//!   errors in an included file point into it), target environment (OpenGL
//!   4.5, Vulkan 1.0–1.3), SPIR-V version and optimisation level.
//! - [`validate`] runs the SPIR-V validator on every module that enters or
//!   leaves XR.
//! - [`reflect`] lists a module's resources as the constant table needs them.
//!
//! How SPIRV-Tools is linked, and why: `docs/SPIRV.md`.

pub mod compile;
pub mod loose_uniforms;
pub mod messages;
pub mod newer_toolchain;
pub mod offline;
pub mod program;
pub mod reflect;
pub mod slang_dir;
pub mod specialize;
mod stage_cache;
pub mod validate;
mod work_cache;

pub use compile::{
    CompiledProgram, IncludedFile, LANGUAGE_GLSL, LANGUAGE_HLSL, LazyCompiler, Optimization, SpirvCompiler,
    SpirvModule, SpirvOptions, SpirvVersion, TargetEnv, compiler_identity, compiler_identity_of, glsl_language,
    languages, needs_spirv_1_4,
};
pub use program::finish_program;
pub use reflect::{Reflection, assign_uniform_locations, link_interface_locations, reflect};
pub use validate::{validate, validate_program};
/// The stored SPIR-V object (its own small crate, so that plugins that make
/// SPIR-V without shaderc, such as a WGSL compiler, can write it too).
pub use xr_spirv_object as container;
