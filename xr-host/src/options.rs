//! Compiler options, checked against what the chosen compiler declares.
//!
//! A build system declares the options each of its (language → target)
//! pairs takes ([`CompilePair::options`]). The host knows no option by
//! name: `xr compile --option` and a manifest's `options` hand the user's
//! (name, value) pairs here, and an option the compiler does not declare,
//! or a value it does not take, is one error naming the compiler and what
//! it takes, before anything is compiled.

use xr_sourcebuild::{CompileOption, CompilePair, OptionDecl, ShaderStage};

/// An option the chosen compiler does not take.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OptionError {
    /// The compiler declares no option of that name.
    #[error("{compiler} takes no option '{name}' for {pair} ({})", takes_list(.takes))]
    Unknown {
        /// The build system.
        compiler: String,
        /// The pair, `language → target`.
        pair: String,
        /// The option given.
        name: String,
        /// What it takes, as `name = a | b`.
        takes: Vec<String>,
    },
    /// The option is declared, but not with that value.
    #[error("{compiler} takes {usage} for {pair}, not {name} = '{value}'")]
    BadValue {
        /// The build system.
        compiler: String,
        /// The pair, `language → target`.
        pair: String,
        /// The option given.
        name: String,
        /// The value given.
        value: String,
        /// What it takes.
        usage: String,
    },
}

fn pair_name(pair: &CompilePair) -> String {
    format!("{} → {}", pair.language, pair.target)
}

fn takes_list(takes: &[String]) -> String {
    if takes.is_empty() { "it takes none".to_owned() } else { format!("it takes: {}", takes.join("; ")) }
}

/// Checks one option against the pair `compiler` declared.
pub fn check_option(compiler: &str, pair: &CompilePair, name: &str, value: &str) -> Result<(), OptionError> {
    let Some(declared) = pair.option(name) else {
        return Err(OptionError::Unknown {
            compiler: compiler.to_owned(),
            pair: pair_name(pair),
            name: name.to_owned(),
            takes: pair.options.iter().map(OptionDecl::usage).collect(),
        });
    };
    if declared.accepts(value) {
        return Ok(());
    }
    Err(OptionError::BadValue {
        compiler: compiler.to_owned(),
        pair: pair_name(pair),
        name: name.to_owned(),
        value: value.to_owned(),
        usage: declared.usage(),
    })
}

/// Checks every option of a request against the pair `compiler` declared.
pub fn check_options(compiler: &str, pair: &CompilePair, options: &[CompileOption]) -> Result<(), OptionError> {
    options.iter().try_for_each(|o| check_option(compiler, pair, &o.name, &o.value))
}

/// The stage an option value selects (an HLSL profile `ps_5_0`), among
/// `options` given for `pair`.
pub fn stage_selected(pair: &CompilePair, options: &[(String, String)]) -> Option<ShaderStage> {
    // The last value of an option wins, as the compile reads it.
    options.iter().rev().find_map(|(name, value)| pair.option(name)?.stage_of(value))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair() -> CompilePair {
        CompilePair::new("hlsl", "vk-spirv").with_options([
            OptionDecl::choice("vulkan", &["1.0", "1.3"], "1.0", "Vulkan version"),
            OptionDecl::stage_selector(
                "profile",
                &[("vs_*", ShaderStage::Vertex), ("ps_*", ShaderStage::Fragment)],
                "profile",
            ),
        ])
    }

    #[test]
    fn declared_options_and_values_pass() {
        assert_eq!(check_option("c", &pair(), "vulkan", "1.3"), Ok(()));
        assert_eq!(check_option("c", &pair(), "profile", "ps_5_0"), Ok(()));
    }

    #[test]
    fn an_undeclared_option_names_the_compiler_and_what_it_takes() {
        let error = check_option("xr-compiler-x", &pair(), "vulkn", "1.3").unwrap_err().to_string();
        assert!(error.contains("xr-compiler-x takes no option 'vulkn' for hlsl → vk-spirv"), "{error}");
        assert!(error.contains("vulkan = 1.0 | 1.3; profile = vs_* | ps_*"), "{error}");
        let none = CompilePair::new("glsl", "gl-glsl");
        assert!(check_option("g", &none, "optimize", "size").unwrap_err().to_string().contains("it takes none"));
    }

    #[test]
    fn a_bad_value_is_refused_with_the_values_taken() {
        let error = check_option("c", &pair(), "vulkan", "2.0").unwrap_err().to_string();
        assert!(error.contains("takes vulkan = 1.0 | 1.3 for hlsl → vk-spirv, not vulkan = '2.0'"), "{error}");
        // A prefix needs a rest: `vs_` alone is no profile.
        assert!(check_option("c", &pair(), "profile", "vs_").is_err());
        assert!(check_option("c", &pair(), "profile", "gs_5_0").is_err());
    }

    #[test]
    fn a_profile_selects_its_stage() {
        let given = vec![("profile".to_owned(), "ps_6_0".to_owned())];
        assert_eq!(stage_selected(&pair(), &given), Some(ShaderStage::Fragment));
        assert_eq!(stage_selected(&pair(), &[("vulkan".into(), "1.0".into())]), None);
    }
}
