//! XR's content-addressed store: what the build host, the run-time library,
//! the remote cache and the plugins share on disk. No plugin ABI here: a
//! crate that only reads or writes stored objects links none of it.
//!
//! - [`object`]: the store itself, a directory of checksummed objects
//!   written atomically, and their keys ([`ObjectKey`]).
//! - [`catalog`]: what a built program offers the run-time library, by
//!   variant and target.
//! - [`binary_record`]: the stored form of a device program binary, keyed
//!   by the driver that made it.
//! - [`lock`]: the store's lock, shared by builds, held alone by gc.
//! - [`test_hooks`]: the environment hooks of the crash tests (debug builds).
//! - [`usage`]: the usage log, what an engine loaded by name, which warming
//!   and builds of only the used variants read.

pub mod binary_record;
pub mod catalog;
pub mod lock;
pub mod object;
pub mod test_hooks;
pub mod usage;

pub use lock::{LockKind, StoreLock};
pub use object::{ObjectKey, ObjectStamp, Store, StoreError, file_stamp};

/// Version of the build's recipe and object formats; part of every key.
/// 2: recipes, journals and objects name files relative to the manifest.
pub const FORMAT: &str = "xr-build/2";

/// The key of a built object: its payload's, with the format's version.
pub fn object_key(payload: &[u8]) -> ObjectKey {
    ObjectKey::from_parts([FORMAT.as_bytes(), payload])
}
