//! The one reader of XR's environment variables.
//!
//! A variable that changes what XR builds must be watched by everything
//! that decides whether to build again: a build script's
//! `cargo:rerun-if-env-changed` lines and `xr build`'s no-op stamp. A list
//! kept by hand beside the reads drifts (one lacked `XR_SLANG_LIBRARY`, so
//! changing the Slang library never reran a build script), so every read
//! goes through [`var`] or [`var_os`], which record the name, and the
//! watchers take the names from [`names_read`], as cc-rs's tracked `getenv`
//! does. `scripts/check-layering.sh` checks that no other code reads an
//! `XR_*` variable.
//!
//! A plugin loaded from a file has its own copy of this crate, and so its
//! own record: its root module exports [`for_each_name_read`] under
//! [`NAMES_READ_SYMBOL`], which the host asks when it gathers what a build
//! read (`xr_host::Registry::environment_read`).
//!
//! Only variables that change how XR reports, never what it builds
//! (`XR_LOG`), are read with [`presentation_var_os`], which records nothing.

#![deny(missing_docs)]

use std::{
    collections::BTreeSet,
    ffi::{OsString, c_void},
    sync::{Mutex, PoisonError},
};

/// The names read so far by this copy of the crate.
static READ: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());

fn record(name: &str) {
    let mut read = READ.lock().unwrap_or_else(PoisonError::into_inner);
    if !read.contains(name) {
        read.insert(name.to_owned());
    }
}

/// The variable `name`, recorded as read whether it is set or not (a
/// variable set later changes the build as much as one changed).
pub fn var_os(name: &str) -> Option<OsString> {
    record(name);
    std::env::var_os(name)
}

/// The variable `name` as text: `None` when unset or not Unicode; recorded
/// as read either way.
pub fn var(name: &str) -> Option<String> {
    var_os(name).and_then(|value| value.into_string().ok())
}

/// The variable `name` when it is set and not empty; recorded either way.
pub fn non_empty(name: &str) -> Option<String> {
    var(name).filter(|value| !value.is_empty())
}

/// Whether `name` is set to `1` or `true` (in any case); recorded either way.
pub fn is_on(name: &str) -> bool {
    var(name).is_some_and(|value| value == "1" || value.eq_ignore_ascii_case("true"))
}

/// A variable that changes only how XR reports (its log level), never what
/// it builds: read without being recorded, so that changing it reruns no
/// build.
pub fn presentation_var_os(name: &str) -> Option<OsString> {
    std::env::var_os(name)
}

/// Every name this copy of the crate has read, sorted.
pub fn names_read() -> Vec<String> {
    READ.lock().unwrap_or_else(PoisonError::into_inner).iter().cloned().collect()
}

/// The symbol under which a plugin file exports [`for_each_name_read`]
/// (written by `xr_plugin::export_linked_plugin!`); a plugin built before
/// it has none, and its reads are then unknown to the host. Its version is
/// in its name: no layout check covers it, so a new signature is a new name.
pub const NAMES_READ_SYMBOL: &[u8] = b"xr_env_for_each_name_read_v1\0";

/// The type of [`for_each_name_read`].
pub type ForEachNameRead = unsafe extern "C" fn(each: NameSink, context: *mut c_void);

/// Receives one name (UTF-8 bytes, not NUL-terminated) and the caller's context.
pub type NameSink = unsafe extern "C" fn(name: *const u8, length: usize, context: *mut c_void);

/// Calls `each` with every name this copy has read, and `context`: how a
/// host reads the record of a plugin file's own copy.
///
/// # Safety
///
/// `each` must be safe to call with a pointer to `length` readable bytes and
/// `context` as given.
pub unsafe extern "C" fn for_each_name_read(each: NameSink, context: *mut c_void) {
    for name in names_read() {
        // SAFETY: the caller's contract; the bytes live through the call.
        unsafe { each(name.as_ptr(), name.len(), context) };
    }
}

/// The names a [`ForEachNameRead`] reports, collected (the host's side).
///
/// # Safety
///
/// `function` must be a [`for_each_name_read`], as exported under
/// [`NAMES_READ_SYMBOL`].
pub unsafe fn collect_names(function: ForEachNameRead) -> Vec<String> {
    unsafe extern "C" fn push(name: *const u8, length: usize, context: *mut c_void) {
        // SAFETY: `context` is the Vec below, and the bytes are the name's.
        let (names, bytes) = unsafe { (&mut *context.cast::<Vec<String>>(), std::slice::from_raw_parts(name, length)) };
        names.push(String::from_utf8_lossy(bytes).into_owned());
    }
    let mut names: Vec<String> = Vec::new();
    // SAFETY: the caller's contract; `push` matches `NameSink`.
    unsafe { function(push, (&raw mut names).cast()) };
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_read_is_recorded_set_or_not_and_presentation_reads_are_not() {
        let unset = "XR_ENV_TEST_NEVER_SET";
        assert_eq!(var(unset), None);
        assert!(!is_on(unset));
        assert_eq!(presentation_var_os("XR_ENV_TEST_PRESENTATION"), None);
        let names = names_read();
        assert!(names.contains(&unset.to_owned()), "{names:?}");
        assert!(!names.iter().any(|n| n == "XR_ENV_TEST_PRESENTATION"), "{names:?}");
        // Through the exported function, as a host reads a plugin's record.
        // SAFETY: `for_each_name_read` is the function `collect_names` asks for.
        let collected = unsafe { collect_names(for_each_name_read) };
        assert_eq!(collected, names_read());
    }
}
