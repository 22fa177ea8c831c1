//! A source bundle: an artifact format for build systems whose stored
//! artifact is source, built on the device at load time (the GLSL build
//! system's `gl-glsl`). The host never reads it; plugins share it.
//!
//! A bundle holds every stage's source, every file it includes (by the name
//! the `#include` asks for) and the defines of the variant, so that it
//! builds on a device with no access to the files it came from.

use serde::{Deserialize, Serialize};
use xr_sourcebuild::{ProgramDesc, ShaderStage, SourceDesc};

const BUNDLE_MAGIC: &[u8] = b"XRGLSL1\n";

/// Stored bytes that are not a usable source bundle.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BundleError {
    /// The bytes do not begin like a bundle.
    #[error("not a source bundle")]
    NotABundle,
    /// They do, but the rest does not parse.
    #[error("damaged source bundle: {0}")]
    Damaged(String),
    /// A stage name no stage has.
    #[error("unknown stage '{0}' in a source bundle")]
    UnknownStage(String),
}

/// One stage of a source bundle.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BundleStage {
    /// Stage name (`vertex`, `fragment`, …).
    pub stage: String,
    /// Entry point.
    pub entry: String,
    /// The source's file name, as diagnostics show it.
    pub file: String,
    /// The source text.
    pub source: String,
    /// The language of the stage the bundle was made from (the loader
    /// builds its own: [`SourceBundle::program`]).
    pub language: String,
}

/// Sources, includes and defines of one program variant.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceBundle {
    /// The stages, in the program's order.
    pub stages: Vec<BundleStage>,
    /// Included files: (name the `#include` asks for, text), sorted by name.
    pub files: Vec<(String, String)>,
    /// The variant's defines: (name, value).
    pub defines: Vec<(String, String)>,
}

impl SourceBundle {
    /// The stored bytes: a magic line, then JSON.
    pub fn encode(&self) -> Vec<u8> {
        let mut bytes = BUNDLE_MAGIC.to_vec();
        bytes.extend(serde_json::to_vec(self).unwrap_or_default());
        bytes
    }

    /// A bundle from stored bytes.
    pub fn decode(bytes: &[u8]) -> Result<Self, BundleError> {
        let json = bytes.strip_prefix(BUNDLE_MAGIC).ok_or(BundleError::NotABundle)?;
        serde_json::from_slice(json).map_err(|e| BundleError::Damaged(e.to_string()))
    }

    /// The bundle of `program` as it was compiled, with the text of every
    /// file its includes read: (name the `#include` asked for, text).
    pub fn of_program(program: &ProgramDesc, mut files: Vec<(String, String)>) -> Self {
        files.sort();
        files.dedup_by(|a, b| a.0 == b.0);
        let defines = program
            .stages
            .first()
            .map(|s| s.defines.iter().map(|d| (d.name.to_string(), d.value.to_string())).collect())
            .unwrap_or_default();
        Self {
            stages: program
                .stages
                .iter()
                .map(|s| BundleStage {
                    stage: s.stage.name().to_owned(),
                    entry: s.entry_point.to_string(),
                    file: s.file_name.to_string(),
                    source: s.source.to_string(),
                    language: s.language.to_string(),
                })
                .collect(),
            files,
            defines,
        }
    }

    /// The program to build on the device, named `name`, with `extra`
    /// defines after the variant's (the overrides' values), every stage in
    /// `language`: the language the loader builds. A bundle holds the
    /// sources of its format, whatever language the plugin that wrote it
    /// compiled from (a dialect of its own, rewritten into the format's
    /// language); each stage's recorded language says only that.
    pub fn program(&self, language: &str, name: &str, extra: &[(String, String)]) -> Result<ProgramDesc, BundleError> {
        let mut stages = Vec::new();
        for stage in &self.stages {
            let kind =
                ShaderStage::from_name(&stage.stage).ok_or_else(|| BundleError::UnknownStage(stage.stage.clone()))?;
            let mut desc = SourceDesc::new(language, kind, stage.file.clone(), stage.source.clone());
            desc.entry_point = stage.entry.clone().into();
            for (name, value) in self.defines.iter().chain(extra) {
                desc = desc.with_define(name.clone(), value.clone());
            }
            for (name, text) in &self.files {
                desc = desc.with_virtual_file(name.clone(), text.clone());
            }
            stages.push(desc);
        }
        Ok(ProgramDesc::new(name, stages))
    }
}
