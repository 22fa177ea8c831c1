//! The SPIR-V validator, run on every module that enters or leaves XR.
//!
//! It runs in process: the SPIRV-Tools that shaderc's optimiser needs is
//! already linked into every SPIR-V plugin (Debian's static
//! `libSPIRV-Tools.a`, see `build.rs`), so `spvValidate` is called through
//! the C API declarations of `spirv-tools-sys`, one copy of SPIRV-Tools in
//! the binary and no process per module. (`spirv-tools-sys`'s
//! `use-installed-tools` feature only turns off its own C++ build; nothing
//! here runs an installed tool.) Each thread keeps one validator context per
//! target environment: creating one builds SPIRV-Tools' grammar tables.
//! A module's verdict is kept per process by the hash of its words (a
//! matrix build validates a shared stage once, not once per variant).
//!
//! Debian's SPIRV-Tools (2023.1) is older than Slang 2026.12 and the
//! glslang of 2026 ([`crate::newer_toolchain`]): it refuses capabilities
//! and forms SPIR-V has had since. SPIRV-Tools of 2026, where the Slang
//! distribution ships it, offers only the universal SPIR-V 1.6
//! environment, without Vulkan's or OpenGL's rules. So a module Debian's
//! validator refuses for the target is judged in three steps:
//! 1. Debian's validator in the universal environment of the module's own
//!    SPIR-V version: if it accepts the module there, the refusal was the
//!    target environment's rule, which stands (loose uniforms in Vulkan,
//!    SPIR-V 1.6 for Vulkan 1.0);
//! 2. otherwise SPIRV-Tools of 2026 judges the module as SPIR-V, and its
//!    verdict stands: a module is refused only when a validator as new as
//!    the compiler that wrote it refuses it.
//!
//! What step 2 accepts was not checked against the environment's rules
//! where the old validator stopped at what it did not know; the device
//! then refuses by name what it lacks (the build systems' capability
//! checks), and the tests build such programs under the validation layers.

use crate::{
    compile::TargetEnv,
    container::StageModule,
    work_cache::{self, WorkCache},
};
use spirv_tools_sys::{
    diagnostics::{Diagnostic, diagnostic_destroy},
    shared::{self, Binary, SpirvResult, ToolContext},
    val,
};
use std::{cell::RefCell, collections::HashMap, ffi::CStr, sync::LazyLock};
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
    if words.len() < xr_spirv_object::walk::HEADER_WORDS || words[0] != xr_spirv_object::walk::MAGIC {
        return Err(XrError::invalid_input(format!("invalid SPIR-V: {} words, no SPIR-V magic number", words.len())));
    }
    static VALID: LazyLock<WorkCache<()>> = LazyLock::new(|| WorkCache::new(1 << 20));
    let key =
        work_cache::key([b"xr-spirv-valid/1".as_slice(), target.name().as_bytes(), work_cache::word_bytes(words)]);
    if VALID.get(&key).is_some() {
        return Ok(());
    }
    if let Err(refused) = validate_uncached(words, target) {
        let Ok(newer) = crate::newer_toolchain::newer_toolchain() else { return Err(refused) };
        let universal = universal_env(words[1]);
        if validate_in(words, universal, &format!("SPIR-V {}.{}", (words[1] >> 16) & 0xff, (words[1] >> 8) & 0xff))
            .is_ok()
        {
            return Err(refused);
        }
        newer.validate(words).map_err(|message| {
            XrError::invalid_input(format!(
                "invalid SPIR-V for {}: {message} (SPIRV-Tools {}; Debian's older one says: {})",
                target.name(),
                crate::newer_toolchain::RELEASE,
                refused.message.trim_start_matches(&format!("invalid SPIR-V for {}: ", target.name()))
            ))
        })?;
    }
    // A verdict weighs its key.
    VALID.insert(key, (), 32);
    Ok(())
}

/// The universal environment of the SPIR-V version in a module's header
/// word (the newest Debian's validator knows for a newer one).
fn universal_env(version: u32) -> shared::TargetEnv {
    match (version >> 8) & 0xffff {
        0x0100 => shared::TargetEnv::Universal_1_0,
        0x0101 => shared::TargetEnv::Universal_1_1,
        0x0102 => shared::TargetEnv::Universal_1_2,
        0x0103 => shared::TargetEnv::Universal_1_3,
        0x0104 => shared::TargetEnv::Universal_1_4,
        0x0105 => shared::TargetEnv::Universal_1_5,
        _ => shared::TargetEnv::Universal_1_6,
    }
}

fn validate_uncached(words: &[u32], target: TargetEnv) -> Result<(), XrError> {
    let env = match target {
        TargetEnv::OpenGl45 => shared::TargetEnv::OpenGL_4_5,
        TargetEnv::Vulkan10 => shared::TargetEnv::Vulkan_1_0,
        TargetEnv::Vulkan11 => shared::TargetEnv::Vulkan_1_1,
        TargetEnv::Vulkan12 => shared::TargetEnv::Vulkan_1_2,
        TargetEnv::Vulkan13 => shared::TargetEnv::Vulkan_1_3,
    };
    validate_in(words, env, target.name())
}

/// Debian's validator on `words` in `env`, which `name` names in messages.
fn validate_in(words: &[u32], env: shared::TargetEnv, name: &str) -> Result<(), XrError> {
    CONTEXTS.with(|contexts| {
        let mut contexts = contexts.borrow_mut();
        let context = match contexts.by_target.get(&(env as u32)) {
            Some(context) => *context,
            None => {
                // SAFETY: `env` is one of the values of the C enum it mirrors.
                let context = unsafe { shared::context_create(env) };
                if context.is_null() {
                    return Err(XrError::unavailable(format!("SPIRV-Tools has no validator for {name}")));
                }
                contexts.by_target.insert(env as u32, context);
                context
            }
        };
        let binary = Binary { code: words.as_ptr(), size: words.len() };
        // Without friendly names first: SPIRV-Tools otherwise names every id
        // of the module before it checks anything (a third of a valid
        // module's validation), for messages a valid module never prints.
        // A module that fails is validated again with them, for the message.
        let quick = contexts.quick_options.get_or_insert_with(|| {
            // SAFETY: creates an options object, owned by this thread's `Contexts`.
            let options = unsafe { val::validator_options_create() };
            // SAFETY: `options` was just created and is not shared.
            unsafe { spvValidatorOptionsSetFriendlyNames(options, false) };
            options
        });
        let mut diagnostic: *mut Diagnostic = std::ptr::null_mut();
        // SAFETY: `context` and `quick` are live and owned by this thread;
        // `binary` points at `words`, which outlive the call.
        let result = unsafe { val::validate_with_options(context, *quick, &binary, &mut diagnostic) };
        if !diagnostic.is_null() {
            // SAFETY: the validator's diagnostic, destroyed once.
            unsafe { diagnostic_destroy(diagnostic) };
            diagnostic = std::ptr::null_mut();
        }
        if result == SpirvResult::Success {
            return Ok(());
        }
        // SAFETY: as above, with the default options (friendly names).
        let result = unsafe { val::validate(context, &binary, &mut diagnostic) };
        let message = if diagnostic.is_null() {
            None
        } else {
            // SAFETY: a non-null diagnostic is the validator's, its `error` a
            // C string it owns until `spvDiagnosticDestroy`.
            let text =
                unsafe { ((*diagnostic).error).as_ref().map(|e| CStr::from_ptr(e).to_string_lossy().into_owned()) };
            // SAFETY: destroyed once, after its text was copied.
            unsafe { diagnostic_destroy(diagnostic) };
            text
        };
        match result {
            SpirvResult::Success => Ok(()),
            other => {
                let message = message.unwrap_or_else(|| format!("{other:?}"));
                let message = message.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" ");
                Err(XrError::invalid_input(format!("invalid SPIR-V for {name}: {message}")))
            }
        }
    })
}

/// One thread's validator contexts, by target environment, and its options
/// for the first, quick validation (no friendly names).
struct Contexts {
    by_target: HashMap<u32, *mut ToolContext>,
    quick_options: Option<*mut val::ValidatorOptions>,
}

impl Drop for Contexts {
    fn drop(&mut self) {
        for context in self.by_target.values() {
            // SAFETY: each was created by `spvContextCreate` and is destroyed once.
            unsafe { shared::context_destroy(*context) };
        }
        if let Some(options) = self.quick_options {
            // SAFETY: created by `spvValidatorOptionsCreate`, destroyed once.
            unsafe { val::validator_options_destroy(options) };
        }
    }
}

thread_local! {
    static CONTEXTS: RefCell<Contexts> = RefCell::new(Contexts { by_target: HashMap::new(), quick_options: None });
}

unsafe extern "C" {
    /// Whether validation messages name ids by their debug names; in the
    /// same SPIRV-Tools as the validator (`libspirv.h`), not declared by
    /// `spirv-tools-sys`.
    fn spvValidatorOptionsSetFriendlyNames(options: *mut val::ValidatorOptions, friendly: bool);
}
