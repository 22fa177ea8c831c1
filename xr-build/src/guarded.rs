//! Guarded sources: per program and stage, one source holding every
//! variant behind an `#if` ladder over its axes, with the lines all
//! variants share hoisted above the ladder — for hosts that already hold
//! the defines and want one file to hand the driver.
//!
//! Each branch is the variant's source as the language's own preprocessor
//! leaves it (includes expanded, its axes' defines applied), so it holds no
//! `#include` and no axis macro of its own; the host selects a branch by
//! defining every axis (`NAME` to the value; an enum axis to the value's
//! index). The preprocessing is a plugin's: a build system that compiles a
//! language `L` into the target `L-preprocessed` (see
//! [`preprocessed_target`]) gives each stage's preprocessed text as its
//! stage output. Any language with a C-style preprocessor fits.

use crate::error::ArtifactError;
use crate::{
    manifest::{AxisKind, Program, Stage},
    matrix::{Variant, variants},
    plan::PlannedProgram,
};
use std::path::PathBuf;
use xr_sourcebuild::{ProgramDesc, ShaderStage};

pub use crate::plan::preprocessed_target;

/// Why a program has no guarded sources.
#[derive(Debug, thiserror::Error)]
pub enum GuardedError {
    /// Its stages are in several languages.
    #[error("{}: a guarded source needs every stage of the program in one language", file.display())]
    MixedLanguages {
        /// The first stage in another language.
        file: PathBuf,
    },
    /// Its variants begin with different `#version` lines.
    #[error("{}: variants declare different #version lines", file.display())]
    Versions {
        /// The stage's file.
        file: PathBuf,
    },
    /// Its matrix names one variant twice.
    #[error(transparent)]
    Variants(#[from] crate::matrix::DuplicateVariant),
    /// A stage's source could not be read.
    #[error(transparent)]
    Unreadable(#[from] crate::recipe::UnreadableSource),
    /// The plugin's preprocessing of one variant failed.
    #[error("{variant}: {cause}")]
    Preprocess {
        /// The variant.
        variant: String,
        /// The plugin's failure, its diagnostics with their places.
        cause: Box<ArtifactError>,
    },
    /// The guarded source could not be written.
    #[error("writing {}: {cause}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The file system's error.
        cause: std::io::Error,
    },
    /// No plugin preprocesses the language.
    #[error("no plugin preprocesses {language} (a build system compiling {language} into {target}): {reason}")]
    NoPreprocessor {
        /// The language.
        language: String,
        /// The target looked for.
        target: String,
        /// The plan's answer.
        reason: Box<crate::plan::PlanError>,
    },
}

/// One guarded source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GuardedSource {
    /// The program.
    pub program: String,
    /// The stage.
    pub stage: ShaderStage,
    /// The source language, as the plugins name it (the file's extension).
    pub language: String,
    /// The source text.
    pub text: String,
    /// How many branches the ladder has (one per variant).
    pub branches: usize,
    /// How many lines were hoisted above the ladder.
    pub hoisted_lines: usize,
}

impl GuardedSource {
    /// `<program>.<stage>.<language>`.
    pub fn file_name(&self) -> String {
        format!("{}.{}.{}", self.program, self.stage.name(), self.language)
    }
}

/// Preprocesses a variant's program: one text per stage, in order. The
/// build passes a plugin's [`preprocessed_target`] compile ([`preprocessor`]).
pub type Preprocessor<'a> = dyn Fn(&ProgramDesc) -> Result<Vec<String>, ArtifactError> + 'a;

/// The one language of every stage of `program`.
pub fn language(program: &PlannedProgram) -> Result<&str, GuardedError> {
    let first = program.stages().next().map_or("", |s| s.language);
    match program.stages().find(|s| s.language != first) {
        Some(other) => Err(GuardedError::MixedLanguages { file: other.stage.file.clone() }),
        None => Ok(first),
    }
}

/// The guarded sources of every stage of `program`, its files named
/// relative to `root` (the manifest's directory) as in a build.
pub fn emit(
    program: &PlannedProgram,
    root: &crate::paths::SourceRoot,
    preprocess: &Preprocessor<'_>,
) -> Result<Vec<GuardedSource>, GuardedError> {
    let language = language(program)?;
    let variants = variants(program)?;
    let mut texts: Vec<Vec<String>> = Vec::new();
    for variant in &variants {
        let desc = crate::recipe::program_desc(program, variant, root)?;
        let stages = preprocess(&desc)
            .map_err(|cause| GuardedError::Preprocess { variant: variant.name.clone(), cause: Box::new(cause) })?;
        texts.push(stages);
    }
    program
        .stages
        .iter()
        .enumerate()
        .map(|(index, stage)| {
            let stage_texts: Vec<&str> = texts.iter().map(|t| t.get(index).map_or("", String::as_str)).collect();
            emit_stage(program, stage, language, &variants, &stage_texts)
        })
        .collect()
}

fn emit_stage(
    program: &Program,
    stage: &Stage,
    language: &str,
    variants: &[Variant],
    texts: &[&str],
) -> Result<GuardedSource, GuardedError> {
    let mut version: Option<String> = None;
    let mut branches: Vec<(String, Vec<String>)> = Vec::new();
    for (variant, text) in variants.iter().zip(texts) {
        let mut lines = code_lines(text);
        if lines.first().is_some_and(|l| l.trim_start().starts_with("#version")) {
            let first = lines.remove(0);
            if version.get_or_insert_with(|| first.clone()) != &first {
                return Err(GuardedError::Versions { file: stage.file.clone() });
            }
        }
        branches.push((condition(program, variant), lines));
    }
    let first: &[String] = branches.first().map(|(_, lines)| lines.as_slice()).unwrap_or_default();
    let hoisted =
        (0..first.len()).take_while(|&i| branches.iter().all(|(_, lines)| lines.get(i) == Some(&first[i]))).count();

    let mut text = String::new();
    let mut push = |line: &str| {
        text.push_str(line);
        text.push('\n');
    };
    if let Some(version) = &version {
        push(version);
    }
    push(&format!(
        "// Generated by `xr build --emit guarded`: program '{}', {} stage, {} variants.",
        program.name,
        stage.stage.name(),
        branches.len()
    ));
    if !program.axes.is_empty() {
        push(&format!("// Define every axis before compiling: {}.", axis_help(program)));
    }
    for o in &program.overrides {
        // Overrides are specialization constants on SPIR-V; here, defines with the defaults baked in.
        push(&format!("#ifndef {0}\n#define {0} {1}\n#endif", o.name, o.glsl_literal(o.default)));
    }
    first[..hoisted].iter().for_each(|line| push(line));
    if program.axes.is_empty() {
        first[hoisted..].iter().for_each(|line| push(line));
    } else {
        for (index, (condition, lines)) in branches.iter().enumerate() {
            push(&format!("{} {condition}", if index == 0 { "#if" } else { "#elif" }));
            lines[hoisted..].iter().for_each(|line| push(line));
        }
        push(&format!("#else\n#error \"{}: no variant for these axis values\"\n#endif", program.name));
    }
    Ok(GuardedSource {
        program: program.name.clone(),
        stage: stage.stage,
        language: language.to_owned(),
        text,
        branches: branches.len(),
        hoisted_lines: hoisted,
    })
}

/// The code lines of a preprocessor's output: no `#line`, no include
/// extension, no blank lines.
fn code_lines(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| {
            let t = l.trim();
            !t.is_empty() && !t.starts_with("#line") && !t.contains("GL_GOOGLE_include_directive")
        })
        .map(str::to_owned)
        .collect()
}

/// `AXIS == value && …` for a variant: each axis's define as the variant sets
/// it (an enum axis's define is its value's index).
fn condition(program: &Program, variant: &Variant) -> String {
    let defines = variant.defines(program);
    program
        .axes
        .iter()
        .map(|axis| {
            let value = defines.iter().find(|d| d.name.as_str() == axis.name).map_or("", |d| d.value.as_str());
            format!("{} == {value}", axis.name)
        })
        .collect::<Vec<_>>()
        .join(" && ")
}

/// What each axis takes, for the file's header.
fn axis_help(program: &Program) -> String {
    program
        .axes
        .iter()
        .map(|a| match &a.kind {
            AxisKind::Bool => format!("{} (0 or 1)", a.name),
            AxisKind::Enum(values) => format!("{} (index of {})", a.name, values.join(", ")),
            AxisKind::Int { first, last } => format!("{} ({first} to {last})", a.name),
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The preprocessor of `program`: the build system the plan chose for its
/// language's [`preprocessed_target`], loaded in `registry`, compiling
/// where `compiles` runs whole compiles (a worker, within its time limit:
/// a preprocessor that crashes fails this program's guarded sources alone).
pub fn preprocessor<'r>(
    program: &'r PlannedProgram,
    registry: &'r xr_host::Registry,
    compiles: &'r crate::Compiles,
) -> Result<Box<Preprocessor<'r>>, GuardedError> {
    let language = language(program)?;
    let target = preprocessed_target(language);
    let (chosen, system) = program.preprocessor(registry).map_err(|e| GuardedError::NoPreprocessor {
        language: language.to_owned(),
        target: target.clone(),
        reason: Box::new(e),
    })?;
    Ok(Box::new(move |desc: &ProgramDesc| {
        let request = xr_sourcebuild::OfflineRequest::new(desc.clone(), &target);
        let compiled = compiles
            .compile_whole(&chosen.name, system, &request)
            .map_err(|e| ArtifactError::of_compile(&e.message, &e.diagnostics, &desc.name))?;
        Ok(compiled.stage_outputs.iter().map(|bytes| String::from_utf8_lossy(bytes).into_owned()).collect())
    }))
}
