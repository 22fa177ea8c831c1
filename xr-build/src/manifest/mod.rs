//! The `xr.toml` manifest.
//!
//! ```toml
//! [[axis]]
//! name = "SHADOWS"
//! kind = "enum"
//! values = ["off", "hard", "soft"]
//!
//! [[program]]
//! name = "lit"
//! axes = ["SHADOWS"]
//! targets = ["gl-glsl", "gl-spirv", "vk-spirv"]
//! include = ["shaders/include"]
//! exclude = ["SHADOWS == soft"]
//! stages = [
//!     { stage = "vertex", file = "shaders/lit.vert" },
//!     { stage = "fragment", file = "shaders/lit.frag", entry = "main", language = "glsl" },
//! ]
//! # A ray tracing program's hit stages may name their hit groups:
//! # { stage = "closest-hit", file = "shaders/glass.rchit", hit_group = 1 }
//! overrides = [{ name = "GAIN", id = 0, type = "float", default = 1.0 }]
//! ```

use std::{
    fmt,
    path::{Path, PathBuf},
};
use xr_sourcebuild::ShaderStage;
use xr_store::catalog::Override;

mod read;
#[cfg(test)]
mod tests;

/// An error in a manifest, at the file, line and column it comes from.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{}: error: {message}", file.display(), if *line == 0 { String::new() } else { format!(":{line}:{column}") })]
pub struct ManifestError {
    /// The manifest file.
    pub file: PathBuf,
    /// 1-based line; 0 when the error is about the whole file.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

/// Every mistake of a manifest, in the order of their places, each at its
/// file, line and column (one a line when shown).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ManifestErrors(pub Vec<ManifestError>);

impl fmt::Display for ManifestErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, error) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{error}")?;
        }
        Ok(())
    }
}

impl std::ops::Deref for ManifestErrors {
    type Target = [ManifestError];

    fn deref(&self) -> &[ManifestError] {
        &self.0
    }
}

impl From<ManifestError> for ManifestErrors {
    fn from(error: ManifestError) -> Self {
        Self(vec![error])
    }
}

/// Something in a manifest that builds, but likely not as meant (a
/// manifest with no programs).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{}: warning: {message}", file.display(), if *line == 0 { String::new() } else { format!(":{line}:{column}") })]
pub struct ManifestWarning {
    /// The manifest file.
    pub file: PathBuf,
    /// 1-based line; 0 when the warning is about the whole file.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// What is likely wrong.
    pub message: String,
}

/// How an axis turns into defines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AxisKind {
    /// `NAME` is 0 or 1.
    Bool,
    /// `NAME` is the value's index, and `NAME_<VALUE>` is 1.
    Enum(Vec<String>),
    /// `NAME` takes every integer from `first` to `last`, both included.
    Int {
        /// First value.
        first: i64,
        /// Last value.
        last: i64,
    },
}

/// A variant axis.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Axis {
    /// Its name, also the define's.
    pub name: String,
    /// Its values.
    pub kind: AxisKind,
}

impl Axis {
    /// Every value as text, in order.
    pub fn values(&self) -> Vec<String> {
        match &self.kind {
            AxisKind::Bool => vec!["0".into(), "1".into()],
            AxisKind::Enum(values) => values.clone(),
            AxisKind::Int { first, last } => (*first..=*last).map(|v| v.to_string()).collect(),
        }
    }

    /// The value at `index` of [`Axis::values`], made alone (an int axis
    /// may have thousands).
    pub fn value(&self, index: usize) -> Option<String> {
        match &self.kind {
            AxisKind::Bool => ["0", "1"].get(index).map(|v| (*v).to_owned()),
            AxisKind::Enum(values) => values.get(index).cloned(),
            AxisKind::Int { first, last } => {
                let value = first.checked_add(i64::try_from(index).ok()?)?;
                (value <= *last).then(|| value.to_string())
            }
        }
    }
}

/// A place in the manifest, for errors found after parsing (a target or a
/// language no plugin offers).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Place {
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
}

/// A target of a program, by the name the plugins declare (`vk-spirv`, …).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TargetRef {
    /// The target's name.
    pub name: String,
    /// Where the manifest names it.
    pub place: Place,
}

/// One stage of a program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stage {
    /// The stage.
    pub stage: ShaderStage,
    /// Where the manifest names the stage.
    pub stage_place: Place,
    /// Its source, resolved against the manifest's directory.
    pub file: PathBuf,
    /// Entry point.
    pub entry: String,
    /// Source language as the manifest names it; `None`: from the file's
    /// extension, as the plugins declare extensions (the build plan,
    /// [`crate::plan::BuildPlan`], decides it; only a planned program has
    /// a language for every stage).
    pub language: Option<String>,
    /// Where the manifest names the language (or the file, when it does not).
    pub language_place: Place,
    /// The hit group this hit stage of a ray tracing program names
    /// (`hit_group = N`); `None`: the default rule.
    pub hit_group: Option<u32>,
}

/// A filter clause: `AXIS op VALUE`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Clause {
    /// Axis name.
    pub axis: String,
    /// Operator: `==`, `!=`, `<`, `<=`, `>`, `>=`.
    pub op: String,
    /// Value as written.
    pub value: String,
}

/// A program of the manifest.
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    /// Unique name.
    pub name: String,
    /// Its axes, in the order of its `axes` list.
    pub axes: Vec<Axis>,
    /// What it is built for.
    pub targets: Vec<TargetRef>,
    /// Its stages.
    pub stages: Vec<Stage>,
    /// Include directories, resolved against the manifest's directory.
    pub include_dirs: Vec<PathBuf>,
    /// Its overrides.
    pub overrides: Vec<Override>,
    /// Points dropped from the matrix: each filter is clauses joined by `&&`.
    pub exclude: Vec<Vec<Clause>>,
    /// Compiler options (`options = { optimize = "size" }` for every
    /// target, `target_options = { vk-spirv = { vulkan = "1.3" } }` for
    /// one), checked against what each target's compiler declares by
    /// the build plan ([`crate::plan::BuildPlan`]).
    pub options: Vec<ProgramOption>,
    /// How long one compile of this program may run in a worker
    /// (`compile_timeout = 600`, seconds) before it is stopped and fails;
    /// `None`: the build's default.
    pub compile_timeout: Option<std::time::Duration>,
    /// Its own usage log (`used = "usage.jsonl"`): only the variants it
    /// names are built ([`crate::used`]).
    pub used: Option<crate::used::ProgramUse>,
}

/// A compiler option a program gives, for all its targets or one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProgramOption {
    /// The option's name, as the compiler declares it.
    pub name: String,
    /// Its value.
    pub value: String,
    /// The one target it is for; `None`: every target of the program.
    pub target: Option<String>,
    /// Where the manifest gives the value.
    pub place: Place,
}

/// A parsed and checked manifest.
#[derive(Clone, Debug, PartialEq)]
pub struct Manifest {
    /// The manifest file.
    pub path: PathBuf,
    /// Store directory, resolved against the manifest's directory.
    pub store: PathBuf,
    /// The programs.
    pub programs: Vec<Program>,
    /// What builds but is likely not meant (`xr build` prints them).
    pub warnings: Vec<ManifestWarning>,
}

impl Manifest {
    /// Reads and checks the manifest at `path`.
    pub fn load(path: &Path) -> Result<Self, ManifestErrors> {
        let text = std::fs::read_to_string(path).map_err(|e| ManifestError {
            file: path.to_path_buf(),
            line: 0,
            column: 0,
            message: format!("cannot read the manifest: {e}"),
        })?;
        Self::parse(path, &text)
    }

    /// Parses and checks manifest text read from `path` (files are resolved
    /// against its directory): the manifest, or every mistake in it.
    pub fn parse(path: &Path, text: &str) -> Result<Self, ManifestErrors> {
        match Self::parse_partial(path, text) {
            (Some(manifest), errors) if errors.is_empty() => Ok(manifest),
            (_, errors) => Err(ManifestErrors(errors)),
        }
    }

    /// What [`Manifest::parse`] could read of `text` despite its mistakes
    /// (none after a syntax error), with every mistake: for checking the
    /// programs it read against the plugins too ([`crate::plan::BuildPlan::resolve`]),
    /// so that a misspelt target is reported in the same run as a misspelt key.
    pub fn parse_partial(path: &Path, text: &str) -> (Option<Self>, Vec<ManifestError>) {
        read::parse_partial(path, text)
    }
}
