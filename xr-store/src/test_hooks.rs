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
    xr_env::var_os(SYNC_FAILURE_VAR).is_some()
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
    *PAUSE.get_or_init(|| xr_env::var(WRITE_PAUSE_VAR)?.parse().ok().map(std::time::Duration::from_millis))
}

/// Release builds never pause.
#[cfg(not(debug_assertions))]
pub(crate) fn write_pause() -> Option<std::time::Duration> {
    None
}

/// A file path: a build that is about to write its catalogs creates
/// `<path>.ready` and waits until `<path>` exists, so that a test can act
/// on the store (collect it, delete an object) at that moment.
pub const CATALOG_PAUSE_VAR: &str = "XR_STORE_TEST_PAUSE_BEFORE_CATALOG";

/// Waits as [`CATALOG_PAUSE_VAR`] asks (at most a minute).
#[cfg(debug_assertions)]
pub fn pause_before_catalog() {
    let Some(path) = xr_env::var_os(CATALOG_PAUSE_VAR).map(std::path::PathBuf::from) else { return };
    let mut ready = path.clone().into_os_string();
    ready.push(".ready");
    let _ = std::fs::write(&ready, b"");
    let started = std::time::Instant::now();
    while !path.exists() && started.elapsed() < std::time::Duration::from_secs(60) {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// Release builds never pause.
#[cfg(not(debug_assertions))]
pub fn pause_before_catalog() {}
