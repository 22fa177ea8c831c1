//! The content-addressed store: a plain directory of checksummed objects.
//!
//! An object lives at `objects/<first two hex digits>/<rest of the key>`.
//! Each file is `XROBJ01\0`, the payload length (u64, little endian), the
//! payload's BLAKE3 hash, then the payload. Writes go to `tmp/` and are
//! renamed into place, so a reader sees a whole object or none, also while
//! another process writes the same key; a torn or corrupted object is
//! detected on read and never returned.
//!
//! Durability: [`Store::put`] syncs the file and its directory before it
//! returns. A build writes many objects and uses [`Store::put_unsynced`]
//! then one [`Store::sync`] for a batch (two syncs per object were a fifth
//! of a cold build): until that sync a power loss may leave such an object
//! torn, which its checksum shows, so nothing may *name* an object as
//! finished (the build journal, a catalog) before the sync returns.

use std::{
    fmt,
    fs::{self, File},
    io::Write,
    path::{Path, PathBuf},
    sync::atomic::{AtomicU64, Ordering},
};

const MAGIC: &[u8; 8] = b"XROBJ01\0";
const HEADER_LEN: usize = 8 + 8 + 32;

/// The key of an object: a BLAKE3 hash of everything that makes its bytes.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectKey(pub [u8; 32]);

impl ObjectKey {
    /// Hashes `parts`, each length-prefixed so that boundaries count.
    pub fn from_parts<'a>(parts: impl IntoIterator<Item = &'a [u8]>) -> Self {
        let mut hasher = blake3::Hasher::new();
        for part in parts {
            hasher.update(&(part.len() as u64).to_le_bytes());
            hasher.update(part);
        }
        Self(*hasher.finalize().as_bytes())
    }

    /// Lower-case hex.
    pub fn hex(&self) -> String {
        blake3::Hash::from_bytes(self.0).to_hex().to_string()
    }

    /// Parses 64 hex digits.
    pub fn from_hex(hex: &str) -> Option<Self> {
        blake3::Hash::from_hex(hex).ok().map(|h| Self(*h.as_bytes()))
    }
}

impl fmt::Debug for ObjectKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ObjectKey({})", self.hex())
    }
}

impl fmt::Display for ObjectKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.hex())
    }
}

/// An object file's size, modification and change times and inode. Any
/// write to the file or any file renamed over it changes one of them, so a
/// build that finds an object's stamp as it journalled it takes the object
/// as whole without reading it; the checksum is still checked whenever the
/// object is loaded and by `xr store verify`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ObjectStamp {
    /// File size in bytes (header included).
    pub len: u64,
    /// Modification time, nanoseconds since the Unix epoch.
    pub modified_ns: i64,
    /// Status change time, nanoseconds since the Unix epoch.
    pub changed_ns: i64,
    /// Inode number.
    pub inode: u64,
}

/// The stamp of any file (`None`: absent or unreadable).
pub fn file_stamp(path: &Path) -> Option<ObjectStamp> {
    use std::os::unix::fs::MetadataExt;
    let meta = fs::metadata(path).ok()?;
    let nanos = |secs: i64, nsec: i64| secs.saturating_mul(1_000_000_000).saturating_add(nsec);
    Some(ObjectStamp {
        len: meta.len(),
        modified_ns: nanos(meta.mtime(), meta.mtime_nsec()),
        changed_ns: nanos(meta.ctime(), meta.ctime_nsec()),
        inode: meta.ino(),
    })
}

impl ObjectStamp {
    /// The payload's size: the file's, less the header.
    pub fn payload_len(&self) -> u64 {
        self.len.saturating_sub(HEADER_LEN as u64)
    }
}

/// What can go wrong with the store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A file or directory could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// An object's bytes do not match its header: torn, truncated or corrupted.
    #[error("{}: corrupt object: {reason}", path.display())]
    Corrupt {
        /// The object file.
        path: PathBuf,
        /// What did not match.
        reason: String,
    },
}

impl StoreError {
    fn io(path: &Path, source: std::io::Error) -> Self {
        Self::Io { path: path.to_path_buf(), source }
    }
}

/// A content-addressed store rooted at a directory.
#[derive(Clone, Debug)]
pub struct Store {
    root: PathBuf,
}

impl Store {
    /// Opens the store at `root`, creating it if it can; an existing store
    /// that cannot be written to still opens for reading.
    pub fn open(root: impl Into<PathBuf>) -> Result<Self, StoreError> {
        let root = root.into();
        for dir in [root.join("objects"), root.join("tmp")] {
            if let Err(e) = fs::create_dir_all(&dir)
                && !dir.is_dir()
            {
                return Err(StoreError::io(&dir, e));
            }
        }
        Ok(Self { root })
    }

    /// The store's directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where the object of `key` lives.
    pub fn path_of(&self, key: &ObjectKey) -> PathBuf {
        let hex = key.hex();
        self.root.join("objects").join(&hex[..2]).join(&hex[2..])
    }

    /// The payload of `key`, checked against its checksum; `None` if absent.
    pub fn get(&self, key: &ObjectKey) -> Result<Option<Vec<u8>>, StoreError> {
        let path = self.path_of(key);
        match fs::read(&path) {
            Ok(bytes) => decode(&path, bytes).map(Some),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(StoreError::io(&path, e)),
        }
    }

    /// Writes `payload` under `key` atomically and durably (write, fsync,
    /// rename, fsync of the directory).
    pub fn put(&self, key: &ObjectKey, payload: &[u8]) -> Result<PathBuf, StoreError> {
        self.write(key, payload, true)
    }

    /// Writes `payload` under `key` atomically (write, rename), without
    /// waiting for the disk: durable after the next [`Store::sync`].
    pub fn put_unsynced(&self, key: &ObjectKey, payload: &[u8]) -> Result<PathBuf, StoreError> {
        self.write(key, payload, false)
    }

    /// Makes every object written so far durable: one `syncfs` of the
    /// filesystem the store is on.
    pub fn sync(&self) -> Result<(), StoreError> {
        if crate::test_hooks::sync_fails() {
            return Err(StoreError::io(&self.root, std::io::Error::other("sync refused by a test")));
        }
        let root = File::open(&self.root).map_err(|e| StoreError::io(&self.root, e))?;
        // SAFETY: the descriptor is open for the duration of the call.
        if unsafe { libc::syncfs(std::os::fd::AsRawFd::as_raw_fd(&root)) } != 0 {
            return Err(StoreError::io(&self.root, std::io::Error::last_os_error()));
        }
        Ok(())
    }

    fn write(&self, key: &ObjectKey, payload: &[u8], synced: bool) -> Result<PathBuf, StoreError> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let path = self.path_of(key);
        let dir = path.parent().expect("object paths have a parent");
        fs::create_dir_all(dir).map_err(|e| StoreError::io(dir, e))?;
        let temp = self.root.join("tmp").join(format!(
            "{}.{}.{}.tmp",
            key.hex(),
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let result = write_file(&temp, &encode(payload), synced).and_then(|()| {
            fs::rename(&temp, &path).map_err(|e| StoreError::io(&path, e))?;
            if !synced {
                return Ok(());
            }
            // Make the rename itself durable.
            File::open(dir).and_then(|d| d.sync_all()).map_err(|e| StoreError::io(dir, e))
        });
        if result.is_err() {
            let _ = fs::remove_file(&temp);
        }
        result.map(|()| path)
    }

    /// What the filesystem says of the object of `key` now (`None`: absent
    /// or unreadable): a build journals it with the object and trusts an
    /// unchanged stamp without reading the object back.
    pub fn stamp(&self, key: &ObjectKey) -> Option<ObjectStamp> {
        file_stamp(&self.path_of(key))
    }

    /// Removes the object of `key`, if present.
    pub fn remove(&self, key: &ObjectKey) -> Result<(), StoreError> {
        let path = self.path_of(key);
        match fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(StoreError::io(&path, e)),
            _ => Ok(()),
        }
    }

    /// Every object key present.
    pub fn keys(&self) -> Result<Vec<ObjectKey>, StoreError> {
        let objects = self.root.join("objects");
        let mut keys = Vec::new();
        for prefix in fs::read_dir(&objects).map_err(|e| StoreError::io(&objects, e))? {
            let prefix = prefix.map_err(|e| StoreError::io(&objects, e))?.path();
            let Some(head) = prefix.file_name().and_then(|n| n.to_str()).map(str::to_owned) else { continue };
            let Ok(entries) = fs::read_dir(&prefix) else { continue };
            for entry in entries.flatten() {
                if let Some(key) =
                    entry.file_name().to_str().and_then(|tail| ObjectKey::from_hex(&format!("{head}{tail}")))
                {
                    keys.push(key);
                }
            }
        }
        keys.sort();
        Ok(keys)
    }

    /// Checks every object; returns the ones that fail.
    pub fn verify(&self) -> Result<Vec<StoreError>, StoreError> {
        Ok(self.keys()?.iter().filter_map(|key| self.get(key).err()).collect())
    }
}

fn write_file(path: &Path, bytes: &[u8], synced: bool) -> Result<(), StoreError> {
    let mut file = File::create(path).map_err(|e| StoreError::io(path, e))?;
    let written = match crate::test_hooks::write_pause() {
        Some(pause) if bytes.len() > HEADER_LEN => file.write_all(&bytes[..HEADER_LEN]).and_then(|()| {
            std::thread::sleep(pause);
            file.write_all(&bytes[HEADER_LEN..])
        }),
        _ => file.write_all(bytes),
    };
    written.and_then(|()| if synced { file.sync_all() } else { Ok(()) }).map_err(|e| StoreError::io(path, e))
}

/// Whether `bytes` begin like an object file (its magic), whole or not:
/// what tells a damaged object from something that never was one.
pub fn is_object(bytes: &[u8]) -> bool {
    bytes.starts_with(MAGIC)
}

/// An object file's bytes: header (magic, length, BLAKE3) then `payload`.
/// Remote caches keep objects in this form too, so that a fetched object
/// is checked exactly as a local one is.
pub fn encode(payload: &[u8]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(HEADER_LEN + payload.len());
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    bytes.extend_from_slice(blake3::hash(payload).as_bytes());
    bytes.extend_from_slice(payload);
    bytes
}

/// The payload of an object file's bytes read from `path` (a file, or a
/// remote object's address), checked against its header.
pub fn decode(path: &Path, mut bytes: Vec<u8>) -> Result<Vec<u8>, StoreError> {
    let corrupt = |reason: String| StoreError::Corrupt { path: path.to_path_buf(), reason };
    if bytes.len() < HEADER_LEN || &bytes[..8] != MAGIC {
        return Err(corrupt(format!("no XR object header ({} bytes)", bytes.len())));
    }
    let declared = u64::from_le_bytes(bytes[8..16].try_into().expect("8 bytes"));
    let actual = (bytes.len() - HEADER_LEN) as u64;
    if declared != actual {
        return Err(corrupt(format!("payload is {actual} bytes, header says {declared} (truncated or torn)")));
    }
    if blake3::hash(&bytes[HEADER_LEN..]).as_bytes() != &bytes[16..48] {
        return Err(corrupt("checksum mismatch".to_owned()));
    }
    Ok(bytes.split_off(HEADER_LEN))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_store(label: &str) -> Store {
        let dir = std::env::temp_dir().join(format!("xr-store-unit-{label}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        Store::open(dir).unwrap()
    }

    #[test]
    fn round_trip_and_listing() {
        let store = temp_store("round-trip");
        let key = ObjectKey::from_parts([b"a".as_slice(), b"b"]);
        assert_eq!(store.get(&key).unwrap(), None);
        store.put(&key, b"payload").unwrap();
        assert_eq!(store.get(&key).unwrap().as_deref(), Some(b"payload".as_slice()));
        assert_eq!(store.keys().unwrap(), vec![key]);
        assert!(store.verify().unwrap().is_empty());
        store.remove(&key).unwrap();
        assert_eq!(store.get(&key).unwrap(), None);
        assert!(fs::read_dir(store.root().join("tmp")).unwrap().next().is_none(), "no temp files left");
    }

    #[test]
    fn a_stamp_changes_when_an_object_is_written_or_replaced() {
        let store = temp_store("stamp");
        let key = ObjectKey::from_parts([b"stamped".as_slice()]);
        assert_eq!(store.stamp(&key), None, "absent");
        store.put_unsynced(&key, b"payload").unwrap();
        let stamp = store.stamp(&key).unwrap();
        assert_eq!(stamp.payload_len(), 7);
        assert_eq!(store.stamp(&key), Some(stamp), "the same file, untouched");
        // Written in place, same size.
        std::thread::sleep(std::time::Duration::from_millis(20));
        let mut bytes = fs::read(store.path_of(&key)).unwrap();
        *bytes.last_mut().unwrap() ^= 1;
        fs::write(store.path_of(&key), &bytes).unwrap();
        let written = store.stamp(&key).unwrap();
        assert_ne!(written, stamp);
        assert_eq!((written.len, written.inode), (stamp.len, stamp.inode), "only the times tell");
        // Replaced by another file of the same size.
        store.put(&key, b"payload").unwrap();
        assert_ne!(store.stamp(&key), Some(written));
        store.sync().unwrap();
    }

    #[test]
    fn keys_print_as_their_hex() {
        let key = ObjectKey::from_parts([b"shown".as_slice()]);
        assert_eq!(key.to_string(), key.hex());
        assert_eq!(format!("{key:?}"), format!("ObjectKey({})", key.hex()));
    }

    #[test]
    fn a_store_that_cannot_be_made_is_an_error() {
        let file = std::env::temp_dir().join(format!("xr-store-unit-file-{}", std::process::id()));
        fs::write(&file, b"not a directory").unwrap();
        assert!(matches!(Store::open(&file), Err(StoreError::Io { .. })), "a file where the store should be");
        let _ = fs::remove_file(file);
    }

    #[test]
    fn what_cannot_be_read_or_removed_is_an_error_not_a_missing_object() {
        let store = temp_store("unreadable");
        let key = ObjectKey::from_parts([b"dir".as_slice()]);
        // Removing what is not there is fine.
        store.remove(&key).unwrap();
        // A directory where the object should be: neither "absent" nor removable.
        fs::create_dir_all(store.path_of(&key).join("inside")).unwrap();
        assert!(matches!(store.get(&key), Err(StoreError::Io { .. })));
        assert!(matches!(store.remove(&key), Err(StoreError::Io { .. })));
    }

    #[test]
    fn key_parts_are_length_prefixed() {
        let ab_c = ObjectKey::from_parts([b"ab".as_slice(), b"c"]);
        let a_bc = ObjectKey::from_parts([b"a".as_slice(), b"bc"]);
        assert_ne!(ab_c, a_bc);
        assert_eq!(ObjectKey::from_hex(&ab_c.hex()), Some(ab_c));
    }

    #[test]
    fn truncated_and_flipped_objects_are_corrupt() {
        let store = temp_store("corrupt");
        let key = ObjectKey::from_parts([b"k".as_slice()]);
        let path = store.put(&key, &[7u8; 100]).unwrap();
        let bytes = fs::read(&path).unwrap();
        fs::write(&path, &bytes[..bytes.len() - 10]).unwrap();
        let error = store.get(&key).unwrap_err().to_string();
        assert!(error.contains("truncated"), "{error}");
        let mut flipped = bytes.clone();
        flipped[HEADER_LEN + 50] ^= 1;
        fs::write(&path, &flipped).unwrap();
        assert!(store.get(&key).unwrap_err().to_string().contains("checksum mismatch"));
        fs::write(&path, b"junk").unwrap();
        assert!(store.get(&key).unwrap_err().to_string().contains("no XR object header"));
        assert_eq!(store.verify().unwrap().len(), 1);
    }
}
