//! The rules of a compile asked for on a command line (`xr compile`, `xr
//! reflect`) rather than in a manifest, kept beside the plan's other rules
//! so that a front end decides none of them itself: a file's stage from its
//! name, a language's default target, and override values given as text,
//! checked against what the program declares.

use xr_host::Registry;
use xr_sourcebuild::{Availability, OverrideKind, OverrideValue, ReflectedOverride, ShaderStage};

/// Why a command line's compile cannot be planned or its overrides taken.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CommandLineError {
    /// No build system compiles the language into a portable object.
    #[error("no plugin compiles {language} into a portable object: give --target")]
    NoDefaultTarget {
        /// The language.
        language: String,
    },
    /// An override the program does not declare.
    #[error("--override {name}: program '{program}' declares no override '{name}' (it declares {declared})")]
    UnknownOverride {
        /// The program.
        program: String,
        /// The override given.
        name: String,
        /// What the program declares, listed.
        declared: String,
    },
    /// An override of a type no value can be given for.
    #[error(
        "override '{name}' of program '{program}' is of type {ty}, which --override cannot set (it sets bool, int, uint and float)"
    )]
    UnsettableOverride {
        /// The program.
        program: String,
        /// The override.
        name: String,
        /// Its reflected type.
        ty: String,
    },
    /// A value that is not one of the override's type.
    #[error("--override {name}={value}: override '{name}' takes {takes}, not '{value}'")]
    BadOverrideValue {
        /// The override.
        name: String,
        /// The text given.
        value: String,
        /// What it takes, in words.
        takes: &'static str,
    },
}

/// The stage a file's name gives: its extension (`a.vert`, `a.comp`), or
/// the extension before the language's (`lit.vs.hlsl`, `lit.frag.hlsl`).
pub fn stage_of_file(file: &std::path::Path) -> Option<ShaderStage> {
    let extension = file.extension().and_then(|e| e.to_str()).unwrap_or("");
    stage_of_extension(extension).or_else(|| {
        let stem = std::path::Path::new(file.file_stem()?);
        stage_of_extension(stem.extension()?.to_str()?)
    })
}

/// The stage a file extension names, by glslang's and DXC's conventions.
pub fn stage_of_extension(extension: &str) -> Option<ShaderStage> {
    Some(match extension {
        "vert" | "vs" => ShaderStage::Vertex,
        "frag" | "fs" | "ps" => ShaderStage::Fragment,
        "geom" | "gs" => ShaderStage::Geometry,
        "tesc" | "tcs" => ShaderStage::TessControl,
        "tese" | "tes" => ShaderStage::TessEvaluation,
        "comp" | "cs" => ShaderStage::Compute,
        "task" => ShaderStage::Task,
        "mesh" => ShaderStage::Mesh,
        "rgen" => ShaderStage::RayGeneration,
        "rmiss" => ShaderStage::Miss,
        "rchit" => ShaderStage::ClosestHit,
        "rahit" => ShaderStage::AnyHit,
        "rint" => ShaderStage::Intersection,
        "rcall" => ShaderStage::Callable,
        _ => return None,
    })
}

/// The default target of `language`: the first target of the
/// highest-priority build system that compiles it into a compatible
/// (portable) object.
pub fn default_target(registry: &Registry, language: &str) -> Result<String, CommandLineError> {
    let mut systems: Vec<_> = registry
        .build_system_entries()
        .map(|(info, _)| info)
        .filter(|info| info.availability.contains(Availability::COMPATIBLE_OBJECT))
        .collect();
    systems.sort_by_key(|info| std::cmp::Reverse(info.priority));
    systems
        .iter()
        .flat_map(|info| info.compiles.iter())
        .find(|pair| pair.language == language)
        .map(|pair| pair.target.to_string())
        .ok_or_else(|| CommandLineError::NoDefaultTarget { language: language.to_owned() })
}

/// Every override `reflected` declares, with the value `given` (name,
/// text) asks for, the last given winning, or else its default: what the
/// run-time library hands a loader. An override of a type no value can be
/// given for is left to the module's own default, unless one is given.
pub fn override_values(
    program: &str,
    reflected: &[ReflectedOverride],
    given: &[(String, String)],
) -> Result<Vec<OverrideValue>, CommandLineError> {
    if let Some((unknown, _)) = given.iter().find(|(name, _)| !reflected.iter().any(|o| o.name == name.as_str())) {
        let declared: Vec<String> = reflected.iter().map(|o| format!("{} ({})", o.name, o.ty)).collect();
        return Err(CommandLineError::UnknownOverride {
            program: program.to_owned(),
            name: unknown.clone(),
            declared: if declared.is_empty() { "none".to_owned() } else { declared.join(", ") },
        });
    }
    let mut values = Vec::new();
    for declared in reflected {
        let asked = given.iter().rev().find(|(name, _)| name == declared.name.as_str());
        let kind = match (override_kind(&declared.ty), asked) {
            (Some(kind), _) => kind,
            (None, Some(_)) => {
                return Err(CommandLineError::UnsettableOverride {
                    program: program.to_owned(),
                    name: declared.name.to_string(),
                    ty: declared.ty.to_string(),
                });
            }
            // Left at its default, the loader takes the module's own value.
            (None, None) => continue,
        };
        let bits = match asked {
            Some((_, value)) => override_bits(kind, value).ok_or_else(|| CommandLineError::BadOverrideValue {
                name: declared.name.to_string(),
                value: value.clone(),
                takes: match kind {
                    OverrideKind::Bool => "a bool (true, false, 1 or 0)",
                    OverrideKind::Int => "an int (a whole number)",
                    OverrideKind::UInt => "a uint (a whole number from 0)",
                    OverrideKind::Float => "a float (a number like 1.5)",
                },
            })?,
            None => match override_bits(kind, &declared.default) {
                Some(bits) => bits,
                // A default reflected as nothing XR reads: the loader keeps the module's own.
                None => continue,
            },
        };
        values.push(OverrideValue { name: declared.name.clone(), id: declared.id, kind, bits });
    }
    Ok(values)
}

/// The kind of a reflected override type (`f32` as SPIR-V reflection
/// writes it, `float` as the manifest does).
fn override_kind(ty: &str) -> Option<OverrideKind> {
    Some(match ty {
        "bool" => OverrideKind::Bool,
        "int" | "i32" => OverrideKind::Int,
        "uint" | "u32" => OverrideKind::UInt,
        "float" | "f32" => OverrideKind::Float,
        _ => return None,
    })
}

/// `text` as the bits of a value of `kind`, if it is one.
fn override_bits(kind: OverrideKind, text: &str) -> Option<u32> {
    let text = text.trim();
    match kind {
        OverrideKind::Bool => match text {
            "true" | "1" => Some(1),
            "false" | "0" => Some(0),
            _ => None,
        },
        OverrideKind::Int => text.parse::<i32>().ok().map(|v| v as u32),
        OverrideKind::UInt => text.strip_suffix('u').unwrap_or(text).parse::<u32>().ok(),
        OverrideKind::Float => text.parse::<f32>().ok().filter(|v| v.is_finite()).map(f32::to_bits),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn declared(name: &str, id: u32, ty: &str, default: &str) -> ReflectedOverride {
        ReflectedOverride { name: name.into(), id, ty: ty.into(), default: default.into() }
    }

    fn given(name: &str, value: &str) -> (String, String) {
        (name.into(), value.into())
    }

    #[test]
    fn every_override_gets_its_value_or_its_default() {
        let reflected =
            [declared("GAIN", 0, "f32", "1"), declared("ON", 1, "bool", "false"), declared("N", 2, "i32", "3")];
        let values = override_values("p", &reflected, &[given("GAIN", "2.5"), given("N", "-4")]).unwrap();
        let bits: Vec<(&str, u32, OverrideKind, u32)> =
            values.iter().map(|v| (v.name.as_str(), v.id, v.kind, v.bits)).collect();
        assert_eq!(
            bits,
            [
                ("GAIN", 0, OverrideKind::Float, 2.5f32.to_bits()),
                ("ON", 1, OverrideKind::Bool, 0),
                ("N", 2, OverrideKind::Int, -4i32 as u32)
            ]
        );
    }

    #[test]
    fn a_value_of_the_wrong_type_or_an_unknown_name_is_refused_saying_what_it_takes() {
        let reflected =
            [declared("GAIN", 0, "f32", "1"), declared("ON", 1, "bool", "false"), declared("U", 2, "u32", "0")];
        for (name, value, says) in [
            ("GAIN", "loud", "override 'GAIN' takes a float"),
            ("GAIN", "inf", "takes a float"),
            ("ON", "yes", "takes a bool (true, false, 1 or 0)"),
            ("U", "-1", "takes a uint"),
            ("GAN", "1", "program 'p' declares no override 'GAN' (it declares GAIN (f32), ON (bool), U (u32))"),
        ] {
            let error = override_values("p", &reflected, &[given(name, value)]).unwrap_err();
            assert!(error.to_string().contains(says), "{error}");
        }
        let error = override_values("p", &[], &[given("X", "1")]).unwrap_err();
        assert!(error.to_string().contains("declares no override 'X' (it declares none)"), "{error}");
    }

    #[test]
    fn values_are_read_as_the_type_takes_them() {
        assert_eq!(override_bits(OverrideKind::Bool, "true"), Some(1));
        assert_eq!(override_bits(OverrideKind::Bool, "0"), Some(0));
        assert_eq!(override_bits(OverrideKind::UInt, "3u"), Some(3));
        assert_eq!(override_bits(OverrideKind::Int, "1.5"), None);
        assert_eq!(override_bits(OverrideKind::Float, "2"), Some(2.0f32.to_bits()));
        assert_eq!(override_bits(OverrideKind::Float, "NaN"), None);
    }

    #[test]
    fn a_file_s_stage_is_its_extension_or_the_one_before_the_language_s() {
        use std::path::Path;
        assert_eq!(stage_of_file(Path::new("a/lit.frag")), Some(ShaderStage::Fragment));
        assert_eq!(stage_of_file(Path::new("lit.vs.hlsl")), Some(ShaderStage::Vertex));
        assert_eq!(stage_of_file(Path::new("trace.rgen")), Some(ShaderStage::RayGeneration));
        assert_eq!(stage_of_file(Path::new("lit.hlsl")), None);
        assert_eq!(stage_of_file(Path::new("lit.glsl")), None);
    }
}
