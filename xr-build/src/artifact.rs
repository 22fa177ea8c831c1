//! What `xr build` stores per (variant, target).
//!
//! - `gl-spirv` and `vk-spirv`: the SPIR-V object the SPIR-V build systems
//!   load (`xr_spirv::container`), linked by `xr_spirv::finish_program`.
//! - `gl-glsl`: a source bundle, since the OpenGL driver builds GLSL itself:
//!   every stage's source, every file it includes (by the name the
//!   `#include` asks for) and the variant's defines. The GLSL build system
//!   builds it on the device, where XR keeps the program binary.

use serde::{Deserialize, Serialize};
use xr_sourcebuild::{ProgramDesc, ShaderStage, SourceDesc};

const BUNDLE_MAGIC: &[u8] = b"XRGLSL1\n";

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
}

/// A `gl-glsl` artifact: sources, includes and defines of one variant.
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
    pub fn decode(bytes: &[u8]) -> Result<Self, String> {
        let json = bytes.strip_prefix(BUNDLE_MAGIC).ok_or("not a GLSL source bundle")?;
        serde_json::from_slice(json).map_err(|e| format!("damaged GLSL source bundle: {e}"))
    }

    /// The program to build on the device, named `name`, with `extra`
    /// defines after the variant's (the overrides' values).
    pub fn program(&self, name: &str, extra: &[(String, String)]) -> Result<ProgramDesc, String> {
        let mut stages = Vec::new();
        for stage in &self.stages {
            let kind = ShaderStage::ALL
                .into_iter()
                .find(|s| s.name() == stage.stage)
                .ok_or_else(|| format!("unknown stage '{}' in a GLSL source bundle", stage.stage))?;
            let mut desc = SourceDesc::glsl(kind, stage.file.clone(), stage.source.clone());
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
