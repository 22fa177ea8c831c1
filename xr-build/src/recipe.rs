//! What an artifact is made from: its recipe key (everything but file
//! contents that changes its bytes) and the compile request its sources
//! make.

use crate::{matrix::Variant, paths::SourceRoot, plan::PlannedProgram};
use std::path::{Path, PathBuf};
use xr_sourcebuild::{CompileOption, OfflineRequest, ProgramDesc, SourceBuildSystemBox, SourceDesc};
use xr_store::{FORMAT, ObjectKey};

/// The build system the plan chose for an artifact, as loaded here.
#[derive(Clone, Copy)]
pub(crate) struct Compiler<'r> {
    /// Its name.
    pub name: &'r str,
    /// Its compiler identity, in the recipe key.
    pub identity: &'r str,
    /// The loaded build system.
    pub system: &'r SourceBuildSystemBox,
    /// The plugin file it came from (what a remote action carries).
    #[cfg(feature = "farm")]
    pub plugin: &'r std::path::Path,
    /// How a compile of each language reaches other files (what a remote
    /// action carries of the sources: [`crate::Chosen::reach`]).
    #[cfg(feature = "farm")]
    pub reach: &'r [(String, xr_sourcebuild::SourceReach)],
}

/// A stage's source that cannot be read.
#[derive(Debug, thiserror::Error)]
#[error("{}: cannot read the source: {source}", file.display())]
pub struct UnreadableSource {
    /// The stage's file.
    pub file: PathBuf,
    /// Why.
    pub source: std::io::Error,
}

/// Everything but file contents that changes an artifact's bytes, with
/// each path written by `path_text` (relative to the manifest's directory:
/// the key is the same in every checkout and for every spelling of it).
pub(crate) fn recipe_key(
    compiler: &Compiler<'_>,
    program: &PlannedProgram,
    variant: &Variant,
    target: &str,
    path_text: &dyn Fn(&Path) -> String,
) -> ObjectKey {
    recipe_key_of((compiler.name, compiler.identity), program, variant, target, path_text)
}

/// [`recipe_key`] of the compiler named `name` whose identity (its version
/// and the compilers it links) is `identity`.
fn recipe_key_of(
    (name, identity): (&str, &str),
    program: &PlannedProgram,
    variant: &Variant,
    target: &str,
    path_text: &dyn Fn(&Path) -> String,
) -> ObjectKey {
    let mut parts: Vec<Vec<u8>> =
        vec![FORMAT.into(), name.into(), identity.into(), target.into(), program.name.clone().into()];
    for planned in program.stages() {
        let stage = planned.stage;
        parts.push(stage.stage.name().into());
        parts.push(path_text(&stage.file).into());
        parts.push(stage.entry.clone().into());
        parts.push(planned.language.into());
        // Only where named: programs of the default rule keep their keys.
        if let Some(group) = stage.hit_group {
            parts.push(format!("hit_group:{group}").into());
        }
    }
    for dir in &program.include_dirs {
        parts.push(path_text(dir).into());
    }
    for define in variant.defines(program) {
        parts.push(format!("{}={}", define.name, define.value).into());
    }
    // Only those given: programs without options keep the keys they always had.
    for (name, value) in program.options_for(target) {
        parts.push(format!("option:{name}={value}").into());
    }
    ObjectKey::from_parts(parts.iter().map(Vec::as_slice))
}

/// The variant's program, read from its files, which it names relative to
/// `root` and has read from there.
pub(crate) fn program_desc(
    program: &PlannedProgram,
    variant: &Variant,
    root: &SourceRoot,
) -> Result<ProgramDesc, UnreadableSource> {
    let mut stages = Vec::new();
    let defines = variant.defines(program);
    for planned in program.stages() {
        let stage = planned.stage;
        let source = std::fs::read_to_string(&stage.file)
            .map_err(|source| UnreadableSource { file: stage.file.clone(), source })?;
        let mut desc = SourceDesc::new(planned.language, stage.stage, root.name(&stage.file), source)
            .with_source_root(root.root().to_string_lossy());
        desc.entry_point = stage.entry.clone().into();
        desc.hit_group = stage.hit_group.into();
        desc.defines.extend(defines.iter().cloned());
        for dir in &program.include_dirs {
            desc = desc.with_include_dir(root.name(dir));
        }
        stages.push(desc);
    }
    Ok(ProgramDesc::new(variant.name.clone(), stages))
}

/// The compile request of `variant` of `program` for `target`: its sources
/// read, the options the plan gives that target.
pub(crate) fn offline_request(
    program: &PlannedProgram,
    variant: &Variant,
    target: &str,
    root: &SourceRoot,
) -> Result<OfflineRequest, UnreadableSource> {
    let mut request = OfflineRequest::new(program_desc(program, variant, root)?, target);
    request.options = program
        .options_for(target)
        .iter()
        .map(|(name, value)| CompileOption { name: name.as_str().into(), value: value.as_str().into() })
        .collect();
    Ok(request)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{manifest::Manifest, plan::BuildPlan, plan::PluginOffer};
    use xr_host::Candidate;
    use xr_sourcebuild::{CompilePair, OptionDecl, ShaderStage};

    /// GLSL and HLSL, compiled to vk-spirv and gl-spirv, with an option.
    fn offer() -> PluginOffer {
        let optimize = OptionDecl::choice("optimize", &["none", "size"], "none", "level");
        let all = ShaderStage::ALL.iter().copied();
        let candidate = |language: &str, target: &str| Candidate {
            name: "c".into(),
            priority: 0,
            identity: "c 1.0".into(),
            pair: CompilePair::new(language, target).with_stages(all.clone()).with_options([optimize.clone()]),
            plugin: PathBuf::new(),
        };
        PluginOffer {
            languages: vec![
                ("glsl".into(), vec!["vert".into(), "frag".into(), "rchit".into()]),
                ("hlsl".into(), vec!["hlsl".into()]),
            ],
            compilers: vec![
                candidate("glsl", "vk-spirv"),
                candidate("glsl", "gl-spirv"),
                candidate("hlsl", "vk-spirv"),
                candidate("hlsl", "gl-spirv"),
            ],
        }
    }

    /// The program of the manifest `text` planned in `dir`: its first
    /// variant's key, through the compiler `(name, identity)` for `target`.
    fn key(dir: &Path, text: &str, compiler: (&str, &str), target: &str) -> ObjectKey {
        let plan = BuildPlan::resolve(Manifest::parse(&dir.join("xr.toml"), text).unwrap(), &offer());
        assert!(plan.refused.is_empty(), "{text}: {:?}", plan.refused);
        let program = &plan.programs[0];
        let variant = &crate::matrix::variants(program).unwrap()[0];
        let relative = |path: &Path| path.strip_prefix(dir).unwrap_or(path).display().to_string();
        recipe_key_of(compiler, program, variant, target, &relative)
    }

    const BASE: &str = "[[axis]]\nname = \"A\"\nkind = \"bool\"\n\n[[program]]\nname = \"p\"\naxes = [\"A\"]\n\
        targets = [\"vk-spirv\", \"gl-spirv\"]\ninclude = [\"inc\"]\nstages = [\n\
        { stage = \"vertex\", file = \"a.vert\" },\n\
        { stage = \"fragment\", file = \"a.frag\" },\n]\n";

    /// Every part of the key, changed alone, gives another key: the
    /// compiler's name and identity, the target, the program's name, each
    /// stage's kind, file, entry point, language and hit group, the include
    /// directories, the variant's defines and the compile options.
    #[test]
    fn each_part_of_a_recipe_changed_alone_gives_another_key() {
        let dir = tempfile::tempdir().unwrap();
        for file in ["a.vert", "b.vert", "a.frag", "a.hlsl", "a.rchit"] {
            std::fs::write(dir.path().join(file), "void main() {}\n").unwrap();
        }
        for include in ["inc", "inc2"] {
            std::fs::create_dir_all(dir.path().join(include)).unwrap();
        }
        let base = key(dir.path(), BASE, ("c", "c 1.0"), "vk-spirv");
        assert_eq!(base, key(dir.path(), BASE, ("c", "c 1.0"), "vk-spirv"), "a recipe has one key");
        let edited = |from: &str, to: &str| {
            assert!(BASE.contains(from), "{from}");
            BASE.replacen(from, to, 1)
        };
        let changes: Vec<(&str, ObjectKey)> = vec![
            ("the compiler's name", key(dir.path(), BASE, ("d", "c 1.0"), "vk-spirv")),
            ("the compiler's identity", key(dir.path(), BASE, ("c", "c 1.1"), "vk-spirv")),
            ("the target", key(dir.path(), BASE, ("c", "c 1.0"), "gl-spirv")),
            (
                "the program's name",
                key(dir.path(), &edited("name = \"p\"", "name = \"q\""), ("c", "c 1.0"), "vk-spirv"),
            ),
            (
                "a stage's kind",
                key(dir.path(), &edited("stage = \"fragment\"", "stage = \"geometry\""), ("c", "c 1.0"), "vk-spirv"),
            ),
            ("a stage's file", key(dir.path(), &edited("a.vert", "b.vert"), ("c", "c 1.0"), "vk-spirv")),
            (
                "a stage's entry point",
                key(
                    dir.path(),
                    &edited("file = \"a.vert\" }", "file = \"a.vert\", entry = \"other\" }"),
                    ("c", "c 1.0"),
                    "vk-spirv",
                ),
            ),
            (
                "a stage's language",
                key(
                    dir.path(),
                    &edited("file = \"a.vert\" }", "file = \"a.vert\", language = \"hlsl\" }"),
                    ("c", "c 1.0"),
                    "vk-spirv",
                ),
            ),
            (
                "the include directories",
                key(dir.path(), &edited("[\"inc\"]", "[\"inc2\"]"), ("c", "c 1.0"), "vk-spirv"),
            ),
            (
                "the variant's defines",
                key(
                    dir.path(),
                    &edited("kind = \"bool\"", "kind = \"enum\"\nvalues = [\"x\", \"y\"]"),
                    ("c", "c 1.0"),
                    "vk-spirv",
                ),
            ),
            (
                "a compile option",
                key(
                    dir.path(),
                    &edited("include = ", "options = { optimize = \"size\" }\ninclude = "),
                    ("c", "c 1.0"),
                    "vk-spirv",
                ),
            ),
        ];
        let mut seen = vec![("the base", base)];
        for (part, changed) in changes {
            for (other, key) in &seen {
                assert_ne!(changed, *key, "changing {part} gives the key of {other}");
            }
            seen.push((part, changed));
        }
    }

    /// A named hit group is part of the key; a program of the default rule
    /// keeps the key it always had (no hit group part).
    #[test]
    fn a_named_hit_group_changes_the_key() {
        let dir = tempfile::tempdir().unwrap();
        for file in ["a.rgen", "a.rchit", "b.rchit"] {
            std::fs::write(dir.path().join(file), "void main() {}\n").unwrap();
        }
        let text = |a: &str, b: &str| {
            format!(
                "[[program]]\nname = \"rt\"\ntargets = [\"vk-spirv\"]\nstages = [\n\
                 {{ stage = \"ray-generation\", file = \"a.rgen\", language = \"glsl\" }},\n\
                 {{ stage = \"closest-hit\", file = \"a.rchit\"{a} }},\n\
                 {{ stage = \"closest-hit\", file = \"b.rchit\"{b} }},\n]\n"
            )
        };
        let compiler = ("c", "c 1.0");
        let default_rule = key(dir.path(), &text("", ""), compiler, "vk-spirv");
        let named = key(dir.path(), &text(", hit_group = 0", ", hit_group = 1"), compiler, "vk-spirv");
        let swapped = key(dir.path(), &text(", hit_group = 1", ", hit_group = 0"), compiler, "vk-spirv");
        assert_ne!(default_rule, named);
        assert_ne!(named, swapped, "each stage's group");
    }
}
