//! Where the Slang distribution lives: the Slang compiler library and the
//! modules that ship beside it (`libslang-glslang-2026.12.so`: glslang and
//! SPIRV-Tools of Slang's own release, see [`crate::newer_toolchain`]).
//!
//! One place decides it, so that the Slang plugin and the SPIR-V plugins
//! never look in different directories. In order (the first that names a
//! file wins):
//! 1. [`LIBRARY_ENV`]: the Slang library file, or a directory holding it;
//!    the modules beside it are looked for in that directory. When set,
//!    nothing else is searched, so that a wrong value is reported rather
//!    than silently passed over.
//! 2. `slang/` in the plugin's own directory: where `scripts/install.sh`
//!    and the Debian package put it (`lib/xr/plugins/slang/`; not beside
//!    the plugins, where the host would try to load it as one).
//! 3. `slang/` up to three directories above it: where `scripts/setup.sh`
//!    unpacks it in a checkout (`target/slang/`, next to `target/debug/`;
//!    cargo writes a plugin built only as a build-dependency to
//!    `target/debug/deps`, and a build script that links the plugin runs
//!    from `target/debug/build/<package>-<hash>/`).

use std::{
    ffi::CStr,
    path::{Path, PathBuf},
};

/// The environment variable that names the Slang library (or its directory).
pub const LIBRARY_ENV: &str = "XR_SLANG_LIBRARY";

/// What a search is for: the library [`LIBRARY_ENV`] names, or a module
/// that ships beside it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wanted<'a> {
    /// The Slang library itself, by its file name: a file named by the
    /// variable is taken as it is.
    Library(&'a str),
    /// A module of the distribution, by its file name: looked for in the
    /// directory of the file the variable names.
    Companion(&'a str),
}

/// The paths tried for `wanted`, in order, from the environment and the
/// directory of the plugin this code is linked into.
pub fn search(wanted: Wanted) -> Vec<PathBuf> {
    candidates(xr_env::var_os(LIBRARY_ENV).map(PathBuf::from), plugin_dir(), wanted)
}

/// The paths tried for `wanted`, in order, for the value of [`LIBRARY_ENV`]
/// and a plugin's directory.
pub fn candidates(from_env: Option<PathBuf>, plugin_dir: Option<PathBuf>, wanted: Wanted) -> Vec<PathBuf> {
    let file = match wanted {
        Wanted::Library(file) | Wanted::Companion(file) => file,
    };
    if let Some(path) = from_env {
        if path.is_dir() {
            return vec![path.join(file)];
        }
        return match wanted {
            Wanted::Library(_) => vec![path],
            Wanted::Companion(_) => vec![path.parent().unwrap_or(Path::new(".")).join(file)],
        };
    }
    let Some(dir) = plugin_dir else { return Vec::new() };
    dir.ancestors().take(4).map(|d| d.join("slang").join(file)).collect()
}

/// The directory of the shared library this code is linked into (the
/// plugin), or of the executable when it is linked into one.
pub fn plugin_dir() -> Option<PathBuf> {
    // SAFETY: Dl_info is plain data; all-zero is a valid value.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only reads the address, here one of this library's
    // own functions, and fills `info`.
    let found = unsafe { libc::dladdr(plugin_dir as *const libc::c_void, &mut info) };
    if found == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dli_fname is a NUL-terminated path owned by the loader.
    let file = unsafe { CStr::from_ptr(info.dli_fname) }.to_string_lossy().into_owned();
    Path::new(&file).parent().map(Path::to_path_buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_variable_alone_is_searched_when_set() {
        let dir = PathBuf::from("/opt/xr/plugins");
        let library = Wanted::Library("libslang.so");
        assert_eq!(
            candidates(Some("/x/libslang.so".into()), Some(dir.clone()), library),
            vec![PathBuf::from("/x/libslang.so")]
        );
        assert_eq!(
            candidates(None, Some(dir), library),
            vec![
                PathBuf::from("/opt/xr/plugins/slang/libslang.so"),
                PathBuf::from("/opt/xr/slang/libslang.so"),
                PathBuf::from("/opt/slang/libslang.so"),
                PathBuf::from("/slang/libslang.so")
            ]
        );
    }

    #[test]
    fn a_module_is_looked_for_beside_the_library_the_variable_names() {
        let companion = Wanted::Companion("libslang-glslang.so");
        assert_eq!(
            candidates(Some("/x/libslang.so".into()), Some("/opt/xr/plugins".into()), companion),
            vec![PathBuf::from("/x/libslang-glslang.so")]
        );
        assert_eq!(candidates(None, Some("/p".into()), companion)[0], PathBuf::from("/p/slang/libslang-glslang.so"));
    }
}
