//! The store's lock: builds share it, a collection holds it alone.
//!
//! A build reads the journal, finds objects up to date, writes new ones and
//! at its end writes catalogs naming all of them; `xr store gc` deletes
//! objects no kept catalog names. Run at once, gc could delete an object a
//! build had found whole (or just written) before the build's catalog named
//! it: the catalog would then name a missing object. So every build holds
//! the lock shared for its whole run (builds still run side by side), and
//! gc (and `xr store verify --delete-corrupt`) holds it exclusively: gc waits
//! for the running builds to end, and a build started during gc waits for gc.
//!
//! The lock is `flock` on `<store>/lock` (an empty file, created on first
//! use), through `std::fs::File::lock`: the kernel drops it when its
//! process dies, however it dies, so a killed build or gc never leaves the
//! store locked. A store in a directory this process cannot write, with no
//! lock file yet, is not locked: nothing can collect it either.

use crate::{Store, StoreError};
use std::fs::{File, OpenOptions, TryLockError};

/// How the lock is held.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockKind {
    /// With other holders of a shared lock: builds.
    Shared,
    /// Alone: garbage collection, deleting corrupt objects.
    Exclusive,
}

/// The store's lock, held until dropped.
#[derive(Debug)]
pub struct StoreLock {
    _file: Option<File>,
}

impl Store {
    /// Takes the store's lock as `kind`; when another process holds it in a
    /// way that excludes this one, calls `waiting` once and then waits.
    pub fn lock(&self, kind: LockKind, waiting: impl FnOnce()) -> Result<StoreLock, StoreError> {
        let path = self.root().join("lock");
        let Some(file) = open_lock_file(&path)? else { return Ok(StoreLock { _file: None }) };
        match try_take(&file, kind) {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                waiting();
                let locked = match kind {
                    LockKind::Shared => file.lock_shared(),
                    LockKind::Exclusive => file.lock(),
                };
                locked.map_err(|source| StoreError::Io { path: path.clone(), source })?;
            }
            Err(TryLockError::Error(source)) => return Err(StoreError::Io { path, source }),
        }
        Ok(StoreLock { _file: Some(file) })
    }

    /// Takes the store's lock as `kind` if no other process holds it in a
    /// way that excludes this one; `None` instead of waiting.
    pub fn try_lock(&self, kind: LockKind) -> Result<Option<StoreLock>, StoreError> {
        let path = self.root().join("lock");
        let Some(file) = open_lock_file(&path)? else { return Ok(Some(StoreLock { _file: None })) };
        match try_take(&file, kind) {
            Ok(()) => Ok(Some(StoreLock { _file: Some(file) })),
            Err(TryLockError::WouldBlock) => Ok(None),
            Err(TryLockError::Error(source)) => Err(StoreError::Io { path, source }),
        }
    }
}

/// The lock file, created on first use; `None` where it does not exist and
/// cannot be created (a store this process cannot write).
fn open_lock_file(path: &std::path::Path) -> Result<Option<File>, StoreError> {
    match OpenOptions::new().create(true).truncate(false).write(true).open(path) {
        Ok(file) => Ok(Some(file)),
        Err(_) => match File::open(path) {
            Ok(file) => Ok(Some(file)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(StoreError::Io { path: path.to_path_buf(), source }),
        },
    }
}

fn try_take(file: &File, kind: LockKind) -> Result<(), TryLockError> {
    match kind {
        LockKind::Shared => file.try_lock_shared(),
        LockKind::Exclusive => file.try_lock(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_holders_coexist_and_an_exclusive_one_waits_for_them() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = Store::open(dir.path()).expect("store");
        let first = store.lock(LockKind::Shared, || panic!("shared locks do not wait for each other")).expect("lock");
        let second = store.lock(LockKind::Shared, || panic!("shared locks do not wait for each other")).expect("lock");
        // flock locks belong to open files, so a second open in this
        // process contends like another process would.
        let waited = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|scope| {
            let collector = scope
                .spawn(|| store.lock(LockKind::Exclusive, || waited.store(true, std::sync::atomic::Ordering::SeqCst)));
            std::thread::sleep(std::time::Duration::from_millis(200));
            assert!(!collector.is_finished(), "the exclusive lock waits while builds hold it");
            drop(first);
            drop(second);
            let exclusive = collector.join().expect("thread").expect("exclusive lock");
            assert!(waited.load(std::sync::atomic::Ordering::SeqCst), "and said it was waiting");
            drop(exclusive);
        });
        let _again = store.lock(LockKind::Exclusive, || panic!("free again")).expect("lock");
    }

    #[test]
    fn trying_for_the_lock_does_not_wait() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = Store::open(dir.path()).expect("store");
        let build = store.lock(LockKind::Shared, || {}).expect("lock");
        assert!(store.try_lock(LockKind::Exclusive).expect("try").is_none(), "a build holds it");
        assert!(store.try_lock(LockKind::Shared).expect("try").is_some(), "shared with the build");
        drop(build);
        let alone = store.try_lock(LockKind::Exclusive).expect("try").expect("free");
        assert!(store.try_lock(LockKind::Shared).expect("try").is_none(), "held alone");
        drop(alone);
    }
}
