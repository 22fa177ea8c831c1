//! A stage is compiled once per process for the defines it reads.
//!
//! A matrix build compiles each stage once per variant, but a stage reads
//! only some of the matrix's axes: the benchmark's vertex shader reads none,
//! so its 216 variants are one module. ccache's preprocessor mode finds such
//! repeats by hashing the preprocessed text; glslang's preprocessor costs
//! about 60% of a whole compile here (it sets up the built-in symbols), so
//! XR finds them without running it:
//!
//! The preprocessor's output depends on the defines only through the macros
//! it looks up, and it looks up only identifiers in the tokens it reads: the
//! source, the files it includes and the values of macros it expands. So a
//! compile that read files `F` is repeated exactly by any compile of the
//! same source, options and unchanged `F` whose defines agree on every
//! identifier named in the source, in `F`, or (transitively) in the value of
//! such a define — the same files get included, the same tokens come out.
//! Words inside comments or strings count too (too many is only cautious).
//! Token pasting (`##`) and line continuations can make identifiers that
//! appear nowhere whole, so a stage (or a define value) that uses them keys
//! on every define; names the compiler reserves (`GL_`, `__`) always count.
//!
//! Each compile of a source records its *shape*: the files it included and
//! the identifiers they and the source name. A later compile of the same
//! source tries each shape seen so far, keyed by the current contents of
//! that shape's files and its defines restricted to the shape's
//! identifiers; a module is kept only under the key of the shape its own
//! compile had, so a hit is always a compile of the same tokens. Like the
//! build journal, a new file that would shadow an include is not noticed.

use crate::{
    SpirvModule, SpirvOptions,
    work_cache::{WorkCache, key},
};
use std::{
    collections::BTreeSet,
    sync::{Arc, LazyLock, Mutex},
};
use xr_sourcebuild::SourceDesc;

/// Compiled modules by [`module_key`].
static MODULES: LazyLock<WorkCache<SpirvModule>> = LazyLock::new(|| WorkCache::new(8 << 20));
/// The shapes each source was seen to have, by [`source_key`].
static SHAPES: LazyLock<WorkCache<Mutex<Vec<Arc<Shape>>>>> = LazyLock::new(|| WorkCache::new(4 << 20));

/// What one compile of a source read.
#[derive(PartialEq, Eq)]
struct Shape {
    /// The files its `#include`s found (display path), in order.
    includes: Vec<String>,
    /// Identifiers in the source and those files; `None`: every define
    /// counts (the text pastes tokens).
    identifiers: Option<BTreeSet<String>>,
}

/// The module an earlier compile made for the same tokens, if any.
/// `source` is [`source_key`] of `desc`.
pub(crate) fn lookup(source: &[u8; 32], desc: &SourceDesc) -> Option<SpirvModule> {
    let shapes = SHAPES.get(source)?;
    let shapes: Vec<Arc<Shape>> = shapes.lock().unwrap_or_else(|p| p.into_inner()).clone();
    shapes.iter().find_map(|shape| {
        let texts: Vec<String> = shape.includes.iter().map(|path| include_text(desc, path)).collect::<Option<_>>()?;
        let module = MODULES.get(&module_key(source, desc, shape, &texts))?;
        Some(SpirvModule::clone(&module))
    })
}

/// Keeps `module`, which compiling `desc` (of [`source_key`] `source`) just made.
pub(crate) fn keep(source: [u8; 32], desc: &SourceDesc, module: &SpirvModule) {
    let shape = shape_of(desc, module);
    let include_texts: Vec<String> = module.includes.iter().map(|i| i.text.clone()).collect();
    let module_key = module_key(&source, desc, &shape, &include_texts);
    let weight = module.words.len() * 4 + include_texts.iter().map(String::len).sum::<usize>();
    MODULES.insert(module_key, module.clone(), weight);
    let shapes =
        SHAPES.get(&source).unwrap_or_else(|| SHAPES.insert(source, Mutex::new(Vec::new()), desc.source.len()));
    let mut shapes = shapes.lock().unwrap_or_else(|p| p.into_inner());
    if !shapes.iter().any(|s| Arc::ptr_eq(s, &shape) || **s == *shape) {
        shapes.push(shape);
    }
}

/// The shape a compile of `desc` that made `module` had: made once per
/// distinct text (the source and every included file, by path and
/// contents) and shared after, since a matrix compiles the same texts with
/// other defines over and over, and scanning them for identifiers cost
/// as much as a tenth of a compile.
fn shape_of(desc: &SourceDesc, module: &SpirvModule) -> Arc<Shape> {
    static SHAPE_OF_TEXTS: LazyLock<WorkCache<Shape>> = LazyLock::new(|| WorkCache::new(4 << 20));
    let mut parts: Vec<&[u8]> = vec![b"xr-spirv-shape/1", desc.source.as_bytes()];
    for include in &module.includes {
        parts.extend([include.path.as_bytes(), include.text.as_bytes()]);
    }
    let texts_key = key(parts);
    if let Some(shape) = SHAPE_OF_TEXTS.get(&texts_key) {
        return shape;
    }
    let mut texts = vec![desc.source.as_str()];
    texts.extend(module.includes.iter().map(|i| i.text.as_str()));
    // Token pasting and line continuations make identifiers out of pieces.
    let pastes = texts.iter().any(|t| t.contains("##") || t.contains("\\\n") || t.contains("\\\r\n"));
    let shape = Shape {
        includes: module.includes.iter().map(|i| i.path.clone()).collect(),
        identifiers: (!pastes).then(|| texts.iter().flat_map(|t| identifiers(t)).map(str::to_owned).collect()),
    };
    let weight = shape.identifiers.as_ref().map_or(0, |ids| ids.iter().map(|i| i.len() + 32).sum());
    SHAPE_OF_TEXTS.insert(texts_key, shape, weight)
}

/// Everything a module depends on besides the defines and the included
/// files' contents.
pub(crate) fn source_key(desc: &SourceDesc, options: &SpirvOptions) -> [u8; 32] {
    let spirv = options.spirv_version.unwrap_or_else(|| options.target.default_spirv());
    let settings = format!("{:?} {spirv:?} {:?}", options.target, options.optimization);
    let mut parts: Vec<&[u8]> = vec![
        b"xr-spirv-stage/2",
        desc.language.as_bytes(),
        settings.as_bytes(),
        desc.stage.name().as_bytes(),
        desc.entry_point.as_bytes(),
        desc.file_name.as_bytes(),
        desc.source.as_bytes(),
        // Relative names read elsewhere under another root.
        desc.source_root.as_bytes(),
    ];
    for dir in desc.include_dirs.iter() {
        parts.push(dir.as_bytes());
    }
    for file in desc.virtual_files.iter() {
        parts.extend([file.name.as_bytes(), file.contents.as_bytes()]);
    }
    key(parts)
}

/// The key of the module `shape` made from `desc`'s defines, with the
/// included files' texts now.
fn module_key(source: &[u8; 32], desc: &SourceDesc, shape: &Shape, include_texts: &[String]) -> [u8; 32] {
    let defines: Vec<String> = read_defines(desc, shape.identifiers.as_ref())
        .into_iter()
        .map(|(name, value)| format!("{name}={value}"))
        .collect();
    let mut parts: Vec<&[u8]> = vec![source.as_slice()];
    for (path, text) in shape.includes.iter().zip(include_texts) {
        parts.extend([path.as_bytes(), text.as_bytes()]);
    }
    parts.extend(defines.iter().map(|d| d.as_bytes()));
    key(parts)
}

/// The defines of `desc` a compile of `identifiers` can read, sorted: those
/// named there, and those named in the values of those, and so on.
fn read_defines<'a>(desc: &'a SourceDesc, named_in_text: Option<&BTreeSet<String>>) -> Vec<(&'a str, &'a str)> {
    let defines: Vec<(&str, &str)> = desc.defines.iter().map(|d| (d.name.as_str(), d.value.as_str())).collect();
    // A value that pastes tokens can name anything.
    let pasting = defines.iter().any(|(_, value)| value.contains("##"));
    let Some(named_in_text) = named_in_text.filter(|_| !pasting) else {
        let mut all = defines;
        all.sort();
        return all;
    };
    let mut named: BTreeSet<&str> = named_in_text.iter().map(String::as_str).collect();
    loop {
        let more: Vec<&str> = defines
            .iter()
            .filter(|(name, _)| named.contains(name))
            .flat_map(|(_, value)| identifiers(value))
            .filter(|word| !named.contains(word))
            .collect();
        if more.is_empty() {
            break;
        }
        named.extend(more);
    }
    // Names the compiler reserves may matter without being named (defining
    // one can be an error): they always count.
    let reserved = |name: &str| name.starts_with("GL_") || name.starts_with("__");
    let mut read: Vec<(&str, &str)> =
        defines.into_iter().filter(|(name, _)| named.contains(name) || reserved(name)).collect();
    read.sort();
    read
}

/// The text of an included file now: in memory, or read from disk.
fn include_text(desc: &SourceDesc, path: &str) -> Option<String> {
    match desc.virtual_files.iter().find(|f| f.name.as_str() == path) {
        Some(file) => Some(file.contents.to_string()),
        None => std::fs::read_to_string(desc.on_disk(path)).ok(),
    }
}

/// Every identifier-like word of `text`.
fn identifiers(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|word| word.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use xr_sourcebuild::{Define, ShaderStage};

    /// Each part of a stage's source key changed alone gives another key:
    /// the language, the target, the SPIR-V version, the optimisation,
    /// the stage, the entry point, the file name, the text, the source
    /// root, the include directories, and each virtual file's name and text.
    #[test]
    fn each_part_of_a_source_key_changed_alone_gives_another_key() {
        use crate::{Optimization, SpirvVersion, TargetEnv};
        let base_desc = || SourceDesc::new("glsl", ShaderStage::Fragment, "a.frag", "void main() {}\n");
        let vulkan = SpirvOptions::new(TargetEnv::Vulkan12);
        let base = source_key(&base_desc(), &vulkan);
        assert_eq!(source_key(&base_desc(), &vulkan), base);
        let mut entry = base_desc();
        entry.entry_point = "other".into();
        let others = [
            ("the language", source_key(&SourceDesc { language: "hlsl".into(), ..base_desc() }, &vulkan)),
            ("the target", source_key(&base_desc(), &SpirvOptions::new(TargetEnv::OpenGl45))),
            (
                "the SPIR-V version",
                source_key(&base_desc(), &SpirvOptions { spirv_version: Some(SpirvVersion::V1_3), ..vulkan }),
            ),
            (
                "the optimisation",
                source_key(&base_desc(), &SpirvOptions { optimization: Optimization::Size, ..vulkan }),
            ),
            ("the stage", source_key(&SourceDesc { stage: ShaderStage::Vertex, ..base_desc() }, &vulkan)),
            ("the entry point", source_key(&entry, &vulkan)),
            ("the file name", source_key(&SourceDesc { file_name: "b.frag".into(), ..base_desc() }, &vulkan)),
            ("the text", source_key(&SourceDesc { source: "void main() { }\n".into(), ..base_desc() }, &vulkan)),
            ("the source root", source_key(&base_desc().with_source_root("/elsewhere"), &vulkan)),
            ("an include directory", source_key(&base_desc().with_include_dir("inc"), &vulkan)),
            ("a virtual file's name", source_key(&base_desc().with_virtual_file("x.glsl", "1"), &vulkan)),
            ("a virtual file's text", source_key(&base_desc().with_virtual_file("y.glsl", "2"), &vulkan)),
        ];
        let mut seen = vec![("the base", base)];
        for (part, key) in others {
            for (other, seen_key) in &seen {
                assert_ne!(key, *seen_key, "{part} changed alone gives the key of {other}");
            }
            seen.push((part, key));
        }
        let named = source_key(&base_desc().with_virtual_file("x.glsl", "1"), &vulkan);
        assert_ne!(named, source_key(&base_desc().with_virtual_file("x.glsl", "2"), &vulkan), "a virtual file's text");
        assert_ne!(named, source_key(&base_desc().with_virtual_file("y.glsl", "1"), &vulkan), "a virtual file's name");
        // Two targets of one SPIR-V version (1.0).
        assert_ne!(
            source_key(&base_desc(), &SpirvOptions::new(TargetEnv::Vulkan10)),
            source_key(&base_desc(), &SpirvOptions::new(TargetEnv::OpenGl45)),
            "the target alone"
        );
    }

    fn desc(defines: &[(&str, &str)]) -> SourceDesc {
        let mut desc = SourceDesc::new("glsl", ShaderStage::Fragment, "a.frag", "#if TINT\n#define C COLOR\n#endif\n");
        for (name, value) in defines {
            desc.defines.push(Define::new(*name, *value));
        }
        desc
    }

    #[test]
    fn only_defines_the_text_names_count_and_those_their_values_name() {
        let shape: BTreeSet<String> = identifiers("#if TINT\n#define C COLOR\n#endif\n").map(str::to_owned).collect();
        let d = desc(&[("TINT", "LEVEL"), ("LEVEL", "2"), ("BANDS", "3"), ("COLOR", "1")]);
        assert_eq!(read_defines(&d, Some(&shape)), [("COLOR", "1"), ("LEVEL", "2"), ("TINT", "LEVEL")]);
        // Pasting: all of them.
        assert_eq!(read_defines(&d, None).len(), 4);
    }

    #[test]
    fn a_value_that_pastes_makes_every_define_count_and_reserved_names_always_do() {
        let shape: BTreeSet<String> = ["TINT".to_owned()].into();
        let d = desc(&[("TINT", "LEV##EL"), ("LEVEL", "2"), ("BANDS", "3")]);
        assert_eq!(read_defines(&d, Some(&shape)).len(), 3);
        let d = desc(&[("TINT", "1"), ("GL_EXT_thing", "1"), ("__X", "1"), ("BANDS", "3")]);
        assert_eq!(read_defines(&d, Some(&shape)), [("GL_EXT_thing", "1"), ("TINT", "1"), ("__X", "1")]);
    }

    #[test]
    fn identifiers_are_words_that_do_not_start_with_a_digit() {
        let words: Vec<&str> = identifiers("vec4 c = 2.0e3 * _x1 + 3u; // x-y").collect();
        assert_eq!(words, ["vec4", "c", "_x1", "x", "y"]);
    }
}
