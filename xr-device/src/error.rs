//! The error type every plugin call returns across the ABI.

use abi_stable::{StableAbi, std_types::RString};
use std::fmt;

/// What went wrong, coarsely, so that a host can decide what to do next.
#[repr(u8)]
#[derive(StableAbi, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The device or feature is not there (no driver, missing extension).
    Unavailable,
    /// The caller passed something wrong: unknown name, wrong type, bad id.
    InvalidInput,
    /// The driver reported a failure.
    Driver,
    /// A shader did not compile or a program did not link.
    Build,
    /// The plugin panicked; the panic was caught at the boundary.
    Panic,
    /// A file could not be read or written.
    Io,
}

/// An error returned by a plugin: a kind and one human-readable line.
#[repr(C)]
#[derive(StableAbi, Clone, Debug, PartialEq, Eq)]
pub struct XrError {
    /// Coarse category of the failure.
    pub kind: ErrorKind,
    /// One line saying what failed, naming the file, plugin or name involved.
    pub message: RString,
}

/// The result type of every call that crosses the plugin boundary.
pub type XrResult<T> = abi_stable::std_types::RResult<T, XrError>;

impl XrError {
    /// An error of `kind` with `message`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self { kind, message: RString::from(message.into()) }
    }

    /// Shorthand for [`ErrorKind::InvalidInput`].
    pub fn invalid_input(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidInput, message)
    }

    /// Shorthand for [`ErrorKind::Unavailable`].
    pub fn unavailable(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Unavailable, message)
    }

    /// Shorthand for [`ErrorKind::Driver`].
    pub fn driver(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Driver, message)
    }
}

impl fmt::Display for XrError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for XrError {}
