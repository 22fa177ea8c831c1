//! Device binaries kept in the store: a helper for build systems whose
//! driver gives program binaries back (the GLSL build system keeps its GL
//! program binaries through it; the host never reads them).
//!
//! A program binary is not a compatible object — it only works on the
//! driver that made it — but it caches a build on this machine. The
//! [`ProgramCache`] keys each binary by the program's content key *and* the
//! driver identity (vendor, renderer, version, binary formats), records that
//! identity in the object, and checks it before anything reaches the driver.
//! A driver may still refuse a binary (`GL_LINK_STATUS` false after
//! `glProgramBinary`): then the program is built from source and the stored
//! binary overwritten. Every step says in the log which path was taken.

use std::{cell::Cell, path::PathBuf};
use xr_device::DeviceCapabilities;
use xr_sourcebuild::{
    AttachedBuildSystem, Availability, BuildError, BuildOptions, BuiltProgram, LoadPath, ProgramBinary, ProgramDesc,
};
pub use xr_store::binary_record::DriverIdentity;
use xr_store::{
    ObjectKey, Store,
    binary_record::{self, NotARecord},
};

/// The identity of a live device, as program binaries are keyed by it.
pub fn driver_identity(capabilities: &DeviceCapabilities) -> DriverIdentity {
    DriverIdentity {
        vendor: capabilities.vendor.to_string(),
        renderer: capabilities.renderer.to_string(),
        version: capabilities.driver_version.to_string(),
        formats: capabilities.program_binary_formats.to_vec(),
    }
}

/// What happened when a program was loaded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadReport {
    /// The path taken.
    pub path: LoadPath,
    /// Why: what was found in the store, or why it was not used.
    pub reason: String,
    /// The store key of the program's binary for this driver, where it has one.
    pub key: Option<ObjectKey>,
    /// Where a freshly built binary was written.
    pub stored: Option<PathBuf>,
    /// Why a freshly built binary could not be written.
    pub store_error: Option<String>,
}

/// Program binaries of one device, in a store.
pub struct ProgramCache {
    store: Store,
    identity: DriverIdentity,
    write_warned: Cell<bool>,
}

impl ProgramCache {
    /// A cache in `store` for the device with `capabilities`.
    pub fn new(store: Store, capabilities: &DeviceCapabilities) -> Self {
        Self::for_identity(store, driver_identity(capabilities))
    }

    /// A cache in `store` for a given driver identity.
    pub fn for_identity(store: Store, identity: DriverIdentity) -> Self {
        Self { store, identity, write_warned: Cell::new(false) }
    }

    /// The store.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The driver identity binaries are checked against.
    pub fn identity(&self) -> &DriverIdentity {
        &self.identity
    }

    /// The store key of a program's binary for this driver.
    pub fn key(&self, content_key: &[u8]) -> ObjectKey {
        let formats: Vec<u8> = self.identity.formats.iter().flat_map(|f| f.to_le_bytes()).collect();
        ObjectKey::from_parts([
            b"xr/gl-program-binary/1".as_slice(),
            content_key,
            self.identity.vendor.as_bytes(),
            self.identity.renderer.as_bytes(),
            self.identity.version.as_bytes(),
            &formats,
        ])
    }

    /// Loads `desc` through the best path: the stored binary if the driver
    /// accepts it, else source — storing the new binary for next time.
    pub fn load(
        &self,
        compiler: &mut impl AttachedBuildSystem,
        desc: &ProgramDesc,
        options: BuildOptions,
    ) -> Result<(BuiltProgram, LoadReport), BuildError> {
        let name = desc.name.as_str();
        let offline = compiler.availability().into_result()?.contains(Availability::OFFLINE_COMPILE);
        if !offline {
            let built = compiler.build_program(desc, &options).into_result()?;
            let reason = "the device cannot give program binaries back (no program binary formats)".to_owned();
            tracing::info!(program = name, "built from source: {reason}");
            let report = LoadReport { path: LoadPath::Source, reason, key: None, stored: None, store_error: None };
            return Ok((built, report));
        }

        let key = self.key(&compiler.content_key(desc, &options).into_result()?);
        let reason = match self.load_binary(compiler, desc, options, &key) {
            Ok(Some(built)) => {
                let reason = "stored binary accepted by the driver".to_owned();
                let report = LoadReport {
                    path: LoadPath::DeviceBinary,
                    reason,
                    key: Some(key),
                    stored: None,
                    store_error: None,
                };
                return Ok((built, report));
            }
            Ok(None) => {
                tracing::info!(program = name, %key, "no stored binary for this driver; building from source");
                "no stored binary for this driver".to_owned()
            }
            Err(why) => {
                tracing::warn!(program = name, %key, "not using the stored binary: {why}; building from source");
                why
            }
        };

        let (built, stored) = self.build_and_store(compiler, desc, options, &key)?;
        let (stored, store_error) = match stored {
            Ok(path) => (Some(path), None),
            Err(e) => (None, Some(e)),
        };
        Ok((built, LoadReport { path: LoadPath::Source, reason, key: Some(key), stored, store_error }))
    }

    /// Builds `desc` from source and writes its program binary under `key`
    /// for next time; the second value is where it went, or why it did not.
    pub fn build_and_store(
        &self,
        compiler: &mut impl AttachedBuildSystem,
        desc: &ProgramDesc,
        options: BuildOptions,
        key: &ObjectKey,
    ) -> Result<(BuiltProgram, Result<PathBuf, String>), BuildError> {
        let built = compiler.build_program(desc, &BuildOptions { retrievable: true, ..options }).into_result()?;
        let stored = match compiler.program_binary(built.program).into_result() {
            Ok(binary) => self.write(key, &desc.name, &binary),
            Err(e) => {
                tracing::warn!(program = desc.name.as_str(), "the driver gave no program binary back: {e}");
                Err(format!("the driver gave no program binary back: {e}"))
            }
        };
        Ok((built, stored))
    }

    /// Loads the binary stored under `key` (see [`Self::key`]): `None` when
    /// there is none, an error saying why when there is one the store or the
    /// driver refuses.
    pub fn load_binary(
        &self,
        compiler: &mut impl AttachedBuildSystem,
        desc: &ProgramDesc,
        options: BuildOptions,
        key: &ObjectKey,
    ) -> Result<Option<BuiltProgram>, String> {
        match self.store.get(key) {
            Ok(Some(payload)) => {
                let built = self.load_stored(compiler, desc, options, &payload)?;
                tracing::info!(program = desc.name.as_str(), %key, "loaded the stored program binary");
                Ok(Some(built))
            }
            Ok(None) => Ok(None),
            Err(e) => Err(e.to_string()),
        }
    }

    /// Loads a stored payload, or says why it cannot be used.
    fn load_stored(
        &self,
        compiler: &mut impl AttachedBuildSystem,
        desc: &ProgramDesc,
        options: BuildOptions,
        payload: &[u8],
    ) -> Result<BuiltProgram, String> {
        let (record, bytes) = binary_record::decode(payload).map_err(|e| e.to_string())?;
        if record.identity != self.identity {
            return Err(format!("stored binary was built by another driver ({})", record.identity));
        }
        if !self.identity.formats.contains(&record.format) {
            return Err(format!(
                "stored binary has format 0x{:x}, which this driver does not offer ({:x?})",
                record.format, self.identity.formats
            ));
        }
        let binary = ProgramBinary { format: record.format, bytes: bytes.to_vec().into() };
        compiler
            .load_program_binary(desc, &options, &binary)
            .into_result()
            .map_err(|e| format!("driver rejected the stored binary: {e}"))
    }

    /// Writes a binary under `key`; a failure is warned about once per cache.
    pub fn write(&self, key: &ObjectKey, program: &str, binary: &ProgramBinary) -> Result<PathBuf, String> {
        match self.store.put(key, &encode_binary_record(program, &self.identity, binary)) {
            Ok(path) => {
                tracing::debug!(program, path = %path.display(), "stored the program binary");
                Ok(path)
            }
            Err(e) => {
                if !self.write_warned.replace(true) {
                    tracing::warn!(
                        "cannot write to the store at {} ({e}); programs still build from source, uncached",
                        self.store.root().display()
                    );
                }
                Err(e.to_string())
            }
        }
    }
}

/// Writes a record for tests and tools that need to plant a specific binary.
pub fn encode_binary_record(program: &str, identity: &DriverIdentity, binary: &ProgramBinary) -> Vec<u8> {
    binary_record::encode(program, identity, binary.format, &binary.bytes)
}

/// Reads a record's identity and binary back, for tests and tools.
pub fn decode_binary_record(payload: &[u8]) -> Result<(DriverIdentity, ProgramBinary), NotARecord> {
    let (record, bytes) = binary_record::decode(payload)?;
    Ok((record.identity, ProgramBinary { format: record.format, bytes: bytes.to_vec().into() }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each part of a program binary's key changed alone gives another
    /// key: the program's content key and each part of the driver's
    /// identity (vendor, renderer, version, binary formats).
    #[test]
    fn each_part_of_a_program_binary_key_changed_alone_gives_another_key() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let driver = DriverIdentity {
            vendor: "Mesa".into(),
            renderer: "llvmpipe (LLVM 15.0.6, 256 bits)".into(),
            version: "4.5 (Core Profile) Mesa 22.3.6".into(),
            formats: vec![1],
        };
        let key =
            |identity: DriverIdentity, content: &[u8]| ProgramCache::for_identity(store.clone(), identity).key(content);
        let base = key(driver.clone(), b"program");
        assert_eq!(key(driver.clone(), b"program"), base);
        let others = [
            ("the content key", key(driver.clone(), b"program!")),
            ("the vendor", key(DriverIdentity { vendor: "NVIDIA Corporation".into(), ..driver.clone() }, b"program")),
            ("the renderer", key(DriverIdentity { renderer: "softpipe".into(), ..driver.clone() }, b"program")),
            (
                "the version",
                key(DriverIdentity { version: "4.5 (Core Profile) Mesa 25.0.7".into(), ..driver.clone() }, b"program"),
            ),
            ("the binary formats", key(DriverIdentity { formats: vec![2], ..driver.clone() }, b"program")),
        ];
        for (part, other) in others {
            assert_ne!(other, base, "{part} changed alone gives the same key");
        }
    }
}
