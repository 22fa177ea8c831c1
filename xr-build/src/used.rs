//! Builds of what an engine used: the variants that usage logs name
//! ([`xr_store::usage`]), read with no manifest at hand (a manifest reads
//! a program's own log while it loads). What the logs mean for a manifest
//! (the variants they name that it does not build, those none names) is
//! [`crate::unused`]'s.
//!
//! A log names variants by program and variant name, never by bytecode,
//! so a log recorded before a shader edit still selects the same variants
//! after it. A log narrows a build (`xr build --used LOG`, or `used =
//! "LOG"` on a program); the variants it names that the manifest does not
//! build (an axis renamed, a program removed) are said, because an engine
//! that used them will not find them.

use std::{
    collections::{BTreeMap, BTreeSet},
    path::{Path, PathBuf},
};
use xr_store::usage;

/// The variants some usage logs name, by program.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UsedVariants {
    /// The logs read, in the order given.
    pub logs: Vec<PathBuf>,
    /// Variant names by program.
    pub variants: BTreeMap<String, BTreeSet<String>>,
    /// Lines of the logs that were no entry (a torn last line): (log, line).
    pub skipped: Vec<(PathBuf, usize)>,
}

/// A usage log that could not be used.
#[derive(Debug, thiserror::Error)]
pub enum UsedError {
    /// It does not exist: a build of nothing would follow, so it is refused.
    #[error(
        "usage log {} does not exist: record one first (ShaderLibrary::with_usage_log), or build without it",
        path.display()
    )]
    Missing {
        /// The log.
        path: PathBuf,
    },
    /// It could not be read.
    #[error(transparent)]
    Unreadable(#[from] usage::UsageError),
}

impl UsedVariants {
    /// The variants the logs at `paths` name, together.
    pub fn read<P: AsRef<Path>>(paths: impl IntoIterator<Item = P>) -> Result<Self, UsedError> {
        let mut used = Self::default();
        for path in paths {
            let path = path.as_ref();
            if !path.is_file() {
                return Err(UsedError::Missing { path: path.to_path_buf() });
            }
            let read = usage::read(path)?;
            for entry in read.entries {
                used.variants.entry(entry.program).or_default().insert(entry.variant);
            }
            used.skipped.extend(read.skipped_lines.into_iter().map(|line| (path.to_path_buf(), line)));
            used.logs.push(path.to_path_buf());
        }
        Ok(used)
    }

    /// Whether the logs name `variant` of `program`.
    pub fn contains(&self, program: &str, variant: &str) -> bool {
        self.variants.get(program).is_some_and(|v| v.contains(variant))
    }

    /// The variants of `program` alone, as a program's own `used` log
    /// selects them.
    pub fn of_program(&self, program: &str) -> BTreeSet<String> {
        self.variants.get(program).cloned().unwrap_or_default()
    }

    /// What the logs contribute to a build's key: a different selection is
    /// a different build.
    pub fn key_text(&self) -> String {
        format!("{:?}", self.variants)
    }
}

/// A program's own usage log (`used = "usage.jsonl"` in the manifest):
/// the variants of it that the log names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProgramUse {
    /// The log, resolved against the manifest's directory.
    pub log: PathBuf,
    /// The program's variants the log names.
    pub variants: BTreeSet<String>,
}
