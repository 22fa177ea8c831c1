//! The contract's types as the worker protocol writes them. The contract
//! crate stays the ABI alone (no serde), so the protocol has its own plain
//! mirrors of the few types a compile needs, with lossless conversions
//! both ways; the round-trip test keeps them complete.

use serde::{Deserialize, Serialize};
use xr_sourcebuild::{
    CompileOption, Define, Diagnostic, FileRead, IncludeSite, OfflineRequest, ProgramDesc, Severity, ShaderStage,
    SourceDesc, Specialization, VirtualFile,
};

/// An [`OfflineRequest`] on the pipe.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireRequest {
    name: String,
    stages: Vec<WireStage>,
    target: String,
    options: Vec<(String, String)>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct WireStage {
    language: String,
    stage: String,
    entry_point: String,
    file_name: String,
    source: String,
    defines: Vec<(String, String)>,
    include_dirs: Vec<String>,
    virtual_files: Vec<(String, String)>,
    specializations: Vec<(u32, u32)>,
    source_root: String,
    hit_group: Option<u32>,
}

/// A [`Diagnostic`] on the pipe.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireDiagnostic {
    severity: String,
    file: String,
    line: u32,
    column: u32,
    message: String,
    included_from: Vec<(String, u32)>,
}

/// A [`FileRead`] on the pipe: (path, hash).
pub type WireFileRead = (String, String);

impl From<&OfflineRequest> for WireRequest {
    fn from(request: &OfflineRequest) -> Self {
        Self {
            name: request.program.name.to_string(),
            stages: request.program.stages.iter().map(WireStage::from).collect(),
            target: request.target.to_string(),
            options: request.options.iter().map(|o| (o.name.to_string(), o.value.to_string())).collect(),
        }
    }
}

impl From<&SourceDesc> for WireStage {
    fn from(stage: &SourceDesc) -> Self {
        Self {
            language: stage.language.to_string(),
            stage: stage.stage.name().to_owned(),
            entry_point: stage.entry_point.to_string(),
            file_name: stage.file_name.to_string(),
            source: stage.source.to_string(),
            defines: stage.defines.iter().map(|d| (d.name.to_string(), d.value.to_string())).collect(),
            include_dirs: stage.include_dirs.iter().map(|d| d.to_string()).collect(),
            virtual_files: stage.virtual_files.iter().map(|f| (f.name.to_string(), f.contents.to_string())).collect(),
            specializations: stage.specializations.iter().map(|s| (s.id, s.bits)).collect(),
            source_root: stage.source_root.to_string(),
            hit_group: stage.hit_group.into_option(),
        }
    }
}

/// A frame whose contents are not a valid request or diagnostic.
#[derive(Debug, thiserror::Error)]
#[error("worker pipe: {0}")]
pub struct WireError(String);

impl TryFrom<WireRequest> for OfflineRequest {
    type Error = WireError;

    fn try_from(wire: WireRequest) -> Result<Self, WireError> {
        let stages = wire.stages.into_iter().map(SourceDesc::try_from).collect::<Result<Vec<_>, _>>()?;
        let mut request = OfflineRequest::new(ProgramDesc::new(wire.name, stages), &wire.target);
        request.options = wire
            .options
            .into_iter()
            .map(|(name, value)| CompileOption { name: name.into(), value: value.into() })
            .collect();
        Ok(request)
    }
}

impl TryFrom<WireStage> for SourceDesc {
    type Error = WireError;

    fn try_from(wire: WireStage) -> Result<Self, WireError> {
        let stage =
            ShaderStage::from_name(&wire.stage).ok_or_else(|| WireError(format!("no stage '{}'", wire.stage)))?;
        let mut desc = SourceDesc::new(&wire.language, stage, wire.file_name, wire.source);
        desc.entry_point = wire.entry_point.into();
        desc.defines = wire.defines.into_iter().map(|(name, value)| Define::new(name, value)).collect();
        desc.include_dirs = wire.include_dirs.into_iter().map(Into::into).collect();
        desc.virtual_files = wire
            .virtual_files
            .into_iter()
            .map(|(name, contents)| VirtualFile { name: name.into(), contents: contents.into() })
            .collect();
        desc.specializations = wire.specializations.into_iter().map(|(id, bits)| Specialization { id, bits }).collect();
        desc.source_root = wire.source_root.into();
        desc.hit_group = wire.hit_group.into();
        Ok(desc)
    }
}

impl From<&Diagnostic> for WireDiagnostic {
    fn from(d: &Diagnostic) -> Self {
        Self {
            severity: d.severity.name().to_owned(),
            file: d.file.to_string(),
            line: d.line,
            column: d.column,
            message: d.message.to_string(),
            included_from: d.included_from.iter().map(|s| (s.file.to_string(), s.line)).collect(),
        }
    }
}

impl From<WireDiagnostic> for Diagnostic {
    fn from(wire: WireDiagnostic) -> Self {
        // An unknown severity can only come from a newer worker: keep the
        // message, as an error so that it is not lost among warnings.
        let severity = match wire.severity.as_str() {
            "warning" => Severity::Warning,
            "info" => Severity::Info,
            _ => Severity::Error,
        };
        let mut diagnostic = Diagnostic::new(severity, &wire.file, wire.line, wire.column, wire.message);
        diagnostic.included_from =
            wire.included_from.into_iter().map(|(file, line)| IncludeSite { file: file.into(), line }).collect();
        diagnostic
    }
}

/// Diagnostics for the pipe.
pub fn diagnostics_to_wire(diagnostics: &[Diagnostic]) -> Vec<WireDiagnostic> {
    diagnostics.iter().map(WireDiagnostic::from).collect()
}

/// Diagnostics from the pipe.
pub fn diagnostics_from_wire(wire: Vec<WireDiagnostic>) -> Vec<Diagnostic> {
    wire.into_iter().map(Diagnostic::from).collect()
}

/// Files read, for the pipe.
pub fn files_to_wire(files: &[FileRead]) -> Vec<WireFileRead> {
    files.iter().map(|f| (f.path.to_string(), f.hash.to_string())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_of_a_request_and_a_diagnostic_survives_the_pipe() {
        let mut stage = SourceDesc::new("hlsl", ShaderStage::Fragment, "lit.hlsl", "float4 main() : SV_Target;")
            .with_include_dir("include")
            .with_source_root("/s");
        stage.entry_point = "ps_main".into();
        stage.defines.push(Define::new("TINT", "1"));
        stage.virtual_files.push(VirtualFile { name: "gen.h".into(), contents: "#define X 1".into() });
        stage.specializations.push(Specialization { id: 3, bits: 0x3f80_0000 });
        let vertex = SourceDesc::new("hlsl", ShaderStage::Vertex, "/s/lit.vs", "void main() {}");
        let hit = SourceDesc::new("hlsl", ShaderStage::ClosestHit, "hit.hlsl", "").with_hit_group(2);
        let request = OfflineRequest::new(ProgramDesc::new("lit[TINT=1]", [vertex, stage, hit]), "vk-spirv")
            .with_option("profile", "ps_6_0");
        let back = OfflineRequest::try_from(WireRequest::from(&request)).unwrap();
        assert_eq!(back, request);

        for severity in [Severity::Error, Severity::Warning, Severity::Info] {
            let mut diagnostic = Diagnostic::new(severity, "/s/a.glsl", 4, 9, "unused 'x'");
            diagnostic.included_from.push(IncludeSite { file: "/s/lit.frag".into(), line: 2 });
            assert_eq!(Diagnostic::from(WireDiagnostic::from(&diagnostic)), diagnostic);
        }
    }
}
