//! A GLSL stage Debian's glslang refused, compiled by the glslang of 2026
//! where the Slang distribution ships it.

use super::stage::check_entry_point;
use super::{IncludedFile, LANGUAGE_GLSL, SpirvCompiler, SpirvModule, SpirvOptions, TargetEnv};
use crate::messages;
use xr_plugin_kit::includes::{IncludeEdge, attach_include_chains};
use xr_sourcebuild::{BuildError, Diagnostic, Severity, SourceDesc};

impl SpirvCompiler {
    /// A GLSL stage for Vulkan that Debian's glslang refused, compiled by
    /// glslang of 2026 where the Slang distribution ships it
    /// ([`crate::newer_toolchain`]): the extensions that glslang has
    /// learnt since (`GL_EXT_ray_tracing_position_fetch` among them). The
    /// source is preprocessed by Debian's glslang first (includes resolved
    /// by XR, defines applied, `#line` directives naming the files), since
    /// the newer one's interface takes one text and no include callback.
    /// `None` (the first errors stand) when that glslang is absent, the
    /// stage is not GLSL for Vulkan, or it refuses the stage too; except
    /// where Debian's glslang refused an extension it does not know: then
    /// the newer one's errors, at their files and lines, are the real ones.
    pub(super) fn compile_with_newer_glslang(
        &self,
        desc: &SourceDesc,
        options: &SpirvOptions,
        diagnostics: &[Diagnostic],
    ) -> Option<Result<SpirvModule, BuildError>> {
        if desc.language.as_str() != LANGUAGE_GLSL || options.target == TargetEnv::OpenGl45 {
            return None;
        }
        let newer = crate::newer_toolchain::newer_toolchain().ok()?;
        let (text, includes) = self.preprocess_with_includes(desc, options).ok()?;
        // Without `#version` glslang takes GLSL 1.10, which Vulkan's rules refuse.
        if !text.lines().any(|l| l.trim_start().starts_with("#version")) {
            return None;
        }
        let file = desc.file_name.as_str();
        let spirv = options.spirv_version.unwrap_or_else(|| options.target.default_spirv());
        let context = format!("{file} ({} {})", desc.language, desc.stage.name());
        let words = match newer.compile_glsl(&text, file, desc.stage, spirv, &desc.entry_point) {
            Ok(words) => words,
            Err(log) => {
                let unknown_extension = diagnostics.iter().any(|d| d.message.contains("extension not supported"));
                let mut errors = messages::parse_glslang_log(&log, file);
                if !unknown_extension || !errors.iter().any(|d| d.severity == Severity::Error) {
                    return None;
                }
                let edges: Vec<IncludeEdge> = includes.iter().map(IncludedFile::edge).collect();
                attach_include_chains(&mut errors, &edges);
                errors.push(Diagnostic::new(
                    Severity::Info,
                    file,
                    0,
                    0,
                    format!(
                        "errors of glslang {} (Slang's), which knows the extension Debian's glslang refused",
                        crate::newer_toolchain::RELEASE
                    ),
                ));
                return Some(Err(BuildError::from_diagnostics(&context, errors)));
            }
        };
        let first = diagnostics
            .iter()
            .find(|d| d.severity == Severity::Error)
            .map_or_else(String::new, |d| format!(": {}:{}: {}", d.file, d.line, d.message));
        let note = Diagnostic::new(
            Severity::Info,
            file,
            0,
            0,
            format!(
                "compiled by glslang {} (Slang's), which knows what Debian's glslang refused{first}",
                crate::newer_toolchain::RELEASE
            ),
        );
        let module = SpirvModule {
            words,
            stage: desc.stage,
            entry_point: desc.entry_point.to_string(),
            warnings: vec![note],
            includes,
        };
        Some(
            check_entry_point(&module, file)
                .map(|()| module)
                .map_err(|message| BuildError::from_diagnostics(&context, vec![Diagnostic::error(file, 0, message)])),
        )
    }
}
