//! Finding and opening the Slang library, once per process.
//!
//! Where it is looked for: [`xr_spirv::slang_dir`] (the variable
//! `XR_SLANG_LIBRARY`, then `slang/` in and above the plugin's directory),
//! the same places the SPIR-V plugins find the glslang and SPIRV-Tools
//! that ship beside it.
//!
//! The library must be the Slang this plugin was written against
//! ([`SLANG_VERSION`]); another is refused by name before any other
//! function of it is called, since the declarations in [`crate::ffi`] are
//! taken on trust.

use crate::ffi::{Api, BuildTagFn};
use std::{ffi::CStr, path::PathBuf, sync::OnceLock};
use xr_spirv::slang_dir::{self, Wanted};

/// The Slang release this plugin's declarations are written for.
pub const SLANG_VERSION: &str = "2026.12";
/// The library's file name, as the `slangpy` 0.43.1 wheel ships it.
pub const LIBRARY_FILE: &str = "libslang-compiler.so.0.2026.12";
/// The environment variable that names the library (or its directory).
pub const LIBRARY_ENV: &str = slang_dir::LIBRARY_ENV;
/// What to do when the library is missing.
pub const HOW_TO_GET_IT: &str = "run scripts/setup.sh (it unpacks the library from the slangpy 0.43.1 wheel on PyPI), \
     or set XR_SLANG_LIBRARY to the library file";

/// Why the Slang library cannot be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LibraryError {
    /// No file where it is looked for.
    #[error("the Slang library ({LIBRARY_FILE}) was not found; looked in: {}; {HOW_TO_GET_IT}", list(.searched))]
    NotFound {
        /// Every path tried.
        searched: Vec<PathBuf>,
    },
    /// A file that the dynamic loader refused.
    #[error("cannot open the Slang library {}: {reason}", .path.display())]
    Open {
        /// The file.
        path: PathBuf,
        /// The loader's message.
        reason: String,
    },
    /// Another Slang release than this plugin's.
    #[error(
        "{} is Slang {found}, but xr-compiler-slang is written for Slang {SLANG_VERSION}; {HOW_TO_GET_IT}",
        .path.display()
    )]
    WrongVersion {
        /// The file.
        path: PathBuf,
        /// The version it reports (or why none was read).
        found: String,
    },
    /// The right version, without a function this plugin calls.
    #[error("the Slang library {} has no {symbol}", .path.display())]
    MissingFunction {
        /// The file.
        path: PathBuf,
        /// The function.
        symbol: String,
    },
}

fn list(paths: &[PathBuf]) -> String {
    paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
}

/// The opened library: its functions and where it was found.
pub struct Slang {
    /// Its functions.
    pub api: Api,
    /// The file it was opened from.
    pub path: PathBuf,
    // Kept open for the process's life: `api` points into it.
    _library: libloading::Library,
}

/// The Slang library of this process, opened on first use (the answer,
/// found or not, is kept: the environment does not change under a build).
pub fn slang() -> Result<&'static Slang, LibraryError> {
    static SLANG: OnceLock<Result<Slang, LibraryError>> = OnceLock::new();
    SLANG.get_or_init(|| open(&slang_dir::search(Wanted::Library(LIBRARY_FILE)))).as_ref().map_err(Clone::clone)
}

/// Opens the first of `candidates` that is a file and checks its version.
pub fn open(candidates: &[PathBuf]) -> Result<Slang, LibraryError> {
    let path = candidates
        .iter()
        .find(|p| p.is_file())
        .ok_or_else(|| LibraryError::NotFound { searched: candidates.to_vec() })?;
    // SAFETY: opening a shared library runs its initialisers; this is the
    // file the user or the setup chose as the Slang library.
    let library = unsafe { libloading::Library::new(path) }
        .map_err(|e| LibraryError::Open { path: path.clone(), reason: e.to_string() })?;
    let found = version_of(&library);
    if found.as_deref() != Ok(SLANG_VERSION) {
        return Err(LibraryError::WrongVersion { path: path.clone(), found: found.unwrap_or_else(|e| e) });
    }
    // SAFETY: the library is Slang SLANG_VERSION, whose signatures
    // `crate::ffi` declares.
    let api = unsafe { Api::load(&library) }
        .map_err(|symbol| LibraryError::MissingFunction { path: path.clone(), symbol })?;
    Ok(Slang { api, path: path.clone(), _library: library })
}

/// The release `library` says it is (`spGetBuildTagString`), or why none.
fn version_of(library: &libloading::Library) -> Result<String, String> {
    // SAFETY: `spGetBuildTagString` takes nothing and returns a static C
    // string in every Slang release that has it.
    let tag = unsafe { library.get::<BuildTagFn>(b"spGetBuildTagString\0") }
        .map_err(|_| "not a Slang library (it has no spGetBuildTagString)".to_owned())?;
    // SAFETY: see above.
    let text = unsafe { tag() };
    if text.is_null() {
        return Err("a Slang library that reports no version".to_owned());
    }
    // SAFETY: a NUL-terminated string owned by the library.
    Ok(unsafe { CStr::from_ptr(text) }.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_library_names_every_place_and_how_to_get_it() {
        let error = open(&[PathBuf::from("/nonexistent/a.so"), PathBuf::from("/nonexistent/b.so")]).err().unwrap();
        let text = error.to_string();
        assert!(text.contains("/nonexistent/a.so, /nonexistent/b.so"), "{text}");
        assert!(text.contains("scripts/setup.sh"), "{text}");
    }

    #[test]
    fn a_library_that_is_not_slang_is_refused_by_name() {
        // libc is a shared library without spGetBuildTagString.
        let error = open(&[PathBuf::from("/lib/x86_64-linux-gnu/libc.so.6")]).err().unwrap();
        assert!(
            matches!(&error, LibraryError::WrongVersion { found, .. } if found.contains("not a Slang library")),
            "{error}"
        );
    }
}
