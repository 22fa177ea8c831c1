//! The SPIR-V validator, run on every module that enters or leaves XR.
//!
//! `spirv-tools` is used with `use-installed-tools`: it runs Debian's
//! `spirv-val` (a process per module) instead of compiling a second copy of
//! SPIRV-Tools into XR; see docs/SPIRV.md.

use crate::{compile::TargetEnv, container::StageModule};
use spirv_tools::val::Validator;
use xr_device::XrError;

/// Validates every stage module of a program for `target`; the error starts
/// with `context` and names the stage's file.
pub fn validate_program(modules: &[StageModule], target: TargetEnv, context: &str) -> Result<(), XrError> {
    for module in modules {
        validate(&module.words, target)
            .map_err(|e| XrError { message: format!("{context}: {}: {}", module.file, e.message).into(), ..e })?;
    }
    Ok(())
}

/// Validates `words` for `target`; the error carries the validator's message.
pub fn validate(words: &[u32], target: TargetEnv) -> Result<(), XrError> {
    let env = match target {
        TargetEnv::OpenGl45 => spirv_tools::TargetEnv::OpenGL_4_5,
        TargetEnv::Vulkan10 => spirv_tools::TargetEnv::Vulkan_1_0,
        TargetEnv::Vulkan11 => spirv_tools::TargetEnv::Vulkan_1_1,
        TargetEnv::Vulkan12 => spirv_tools::TargetEnv::Vulkan_1_2,
        TargetEnv::Vulkan13 => spirv_tools::TargetEnv::Vulkan_1_3,
    };
    if words.len() < 5 || words[0] != 0x0723_0203 {
        return Err(XrError::invalid_input(format!("invalid SPIR-V: {} words, no SPIR-V magic number", words.len())));
    }
    let validator = spirv_tools::val::create(Some(env));
    validator.validate(words, None).map_err(|e| {
        let message = e.to_string();
        let message = message.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" ");
        if message.contains("failed to spawn executable") {
            // Not a verdict on the module: the validator itself is missing.
            return XrError::unavailable(format!(
                "the SPIR-V validator `spirv-val` cannot be run ({message}); install Debian's spirv-tools or put spirv-val on PATH"
            ));
        }
        XrError::invalid_input(format!("invalid SPIR-V for {}: {message}", target.name()))
    })
}
