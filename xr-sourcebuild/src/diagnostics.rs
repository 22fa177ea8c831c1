//! Compiler and linker messages, at the file and line the user wrote.

use abi_stable::std_types::RResult;
use abi_stable::{
    StableAbi,
    std_types::{RString, RVec},
};
use std::fmt;
use xr_device::{ErrorKind, XrError, catch_panic};

/// How bad a diagnostic is.
#[repr(u8)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Severity {
    /// The build failed because of it.
    Error,
    /// The build went on.
    Warning,
    /// For information.
    Info,
}

impl Severity {
    /// `error`, `warning` or `info`.
    pub fn name(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }
}

/// One message from a compiler or linker.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// How bad it is.
    pub severity: Severity,
    /// The file the user wrote (an included file where the error is in one);
    /// the program name for link messages.
    pub file: RString,
    /// 1-based line; 0 when the message has no line (link errors).
    pub line: u32,
    /// 1-based column; 0 when unknown.
    pub column: u32,
    /// The message, without the location prefix.
    pub message: RString,
    /// Where `file` was included, innermost first: the file whose
    /// `#include` (or `import`) read it and that line, then where that file
    /// was included, up to the stage's own file. Empty for a stage's file.
    pub included_from: RVec<IncludeSite>,
}

/// An `#include` (or `import`) line: the including file and the line.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct IncludeSite {
    /// The including file, named as diagnostics name files.
    pub file: RString,
    /// 1-based line of the directive.
    pub line: u32,
}

impl Diagnostic {
    /// A diagnostic at `file`, `line` (0: no line) and `column` (0: none).
    pub fn new(severity: Severity, file: &str, line: u32, column: u32, message: impl Into<String>) -> Self {
        Self { severity, file: file.into(), line, column, message: message.into().into(), included_from: RVec::new() }
    }

    /// An error at `file` and `line` (0: no line), with no column.
    pub fn error(file: &str, line: u32, message: impl Into<String>) -> Self {
        Self::new(Severity::Error, file, line, 0, message)
    }
}

impl fmt::Display for Diagnostic {
    /// `file:line:column: severity: message`; without a file (a failure
    /// with no place), `severity: message`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.file.is_empty() {
            f.write_str(&self.file)?;
            if self.line > 0 {
                write!(f, ":{}", self.line)?;
                if self.column > 0 {
                    write!(f, ":{}", self.column)?;
                }
            }
            f.write_str(": ")?;
        }
        write!(f, "{}: {}", self.severity.name(), self.message)
    }
}

/// A failed build: one summary line plus every diagnostic.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub struct BuildError {
    /// Summary; its message names the first error's file and line.
    pub error: XrError,
    /// Every message the compiler and linker gave, mapped to user files.
    pub diagnostics: RVec<Diagnostic>,
}

impl BuildError {
    /// A build failure summarised by its first error diagnostic.
    pub fn from_diagnostics(context: &str, diagnostics: Vec<Diagnostic>) -> Self {
        let first = diagnostics
            .iter()
            .find(|d| d.severity == Severity::Error)
            .map(|d| d.to_string())
            .unwrap_or_else(|| "failed without a message from the driver".to_owned());
        Self { error: XrError::new(ErrorKind::Build, format!("{context}: {first}")), diagnostics: diagnostics.into() }
    }
}

/// Runs a build entry point's body, turning a panic into a `BuildError` of
/// kind `Panic` (the `guard` of calls that return diagnostics).
pub fn guard_build<T>(body: impl FnOnce() -> Result<T, BuildError>) -> RResult<T, BuildError> {
    match catch_panic(body) {
        Ok(result) => result.into(),
        Err(panic) => RResult::RErr(panic.into()),
    }
}

impl From<XrError> for BuildError {
    fn from(error: XrError) -> Self {
        Self { error, diagnostics: RVec::new() }
    }
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.error.message)
    }
}

impl std::error::Error for BuildError {}
