//! What an artifact is made from: its recipe key (everything but file
//! contents that changes its bytes) and the compile request its sources
//! make.

use crate::{execute::Compiler, matrix::Variant, paths::SourceRoot, plan::PlannedProgram};
use std::path::{Path, PathBuf};
use xr_sourcebuild::{CompileOption, OfflineRequest, ProgramDesc, SourceDesc};
use xr_store::{FORMAT, ObjectKey};

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
    let mut parts: Vec<Vec<u8>> =
        vec![FORMAT.into(), compiler.name.into(), compiler.identity.into(), target.into(), program.name.clone().into()];
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
