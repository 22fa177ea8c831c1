//! Hooks the crash-consistency tests steer through the environment.
//!
//! They exist only in debug builds (`cfg(debug_assertions)`), which is
//! what the tests run: a release build, what users install, reads no test
//! variable on its write path and the functions here are constants.

/// When set, [`Store::sync`](crate::Store::sync) fails, as it would on a
/// disk error, so that the tests can check that a build then names no
/// unsynced object.
pub const SYNC_FAILURE_VAR: &str = "XR_STORE_TEST_SYNC_FAILURE";

/// A pause, in milliseconds, between an object's header and its payload:
/// it widens the moment in which a writer killed mid-object leaves half a
/// file, so that the crash tests can land a kill there on purpose and
/// check that no reader ever sees it.
pub const WRITE_PAUSE_VAR: &str = "XR_STORE_TEST_WRITE_PAUSE_MS";

/// Whether [`SYNC_FAILURE_VAR`] asks the sync to fail.
#[cfg(debug_assertions)]
pub(crate) fn sync_fails() -> bool {
    std::env::var_os(SYNC_FAILURE_VAR).is_some()
}

/// Release builds never fail a sync on purpose.
#[cfg(not(debug_assertions))]
pub(crate) fn sync_fails() -> bool {
    false
}

/// The pause [`WRITE_PAUSE_VAR`] asks for, read once.
#[cfg(debug_assertions)]
pub(crate) fn write_pause() -> Option<std::time::Duration> {
    static PAUSE: std::sync::OnceLock<Option<std::time::Duration>> = std::sync::OnceLock::new();
    *PAUSE.get_or_init(|| std::env::var(WRITE_PAUSE_VAR).ok()?.parse().ok().map(std::time::Duration::from_millis))
}

/// Release builds never pause.
#[cfg(not(debug_assertions))]
pub(crate) fn write_pause() -> Option<std::time::Duration> {
    None
}
