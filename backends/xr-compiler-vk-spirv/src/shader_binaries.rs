//! The driver's binaries of a program's shader objects, kept in the store:
//! Vulkan's counterpart of a GL program binary, and the first load path on
//! a device with shader objects.
//!
//! A binary only works on the driver build that made it, so it is keyed by
//! what it was made from (the stored SPIR-V object and the override values,
//! with this build system's version) *and* the device's
//! `shaderBinaryUUID` and `shaderBinaryVersion`, which the record repeats
//! and which are checked before the driver sees a byte. The driver checks
//! again (`VK_INCOMPATIBLE_SHADER_BINARY_EXT` for a binary it cannot use,
//! damaged or not its own): either way the program loads from SPIR-V and
//! its binaries are written again. The record is the store's binary record
//! (`xr_store::binary_record`), which `xr store gc` reads the program of.

use crate::shader_objects::BinaryIdentity;
use std::path::PathBuf;
use xr_device::DeviceCapabilities;
use xr_sourcebuild::ArtifactLoad;
use xr_store::{
    ObjectKey, Store,
    binary_record::{self, DriverIdentity},
};

/// Shader binaries of one device, in a store.
pub struct ShaderBinaryCache {
    store: Store,
    identity: DriverIdentity,
    binary: BinaryIdentity,
}

impl ShaderBinaryCache {
    /// A cache in `store` for the device with `capabilities`, whose shader
    /// binaries are valid for `binary`.
    pub fn new(store: Store, capabilities: &DeviceCapabilities, binary: BinaryIdentity) -> Self {
        Self { store, identity: identity(capabilities, binary), binary }
    }

    /// The key of the binaries of `request`'s program on this driver.
    pub fn key(&self, request: &ArtifactLoad) -> ObjectKey {
        let overrides: Vec<u8> =
            request.overrides.iter().flat_map(|o| o.id.to_le_bytes().into_iter().chain(o.bits.to_le_bytes())).collect();
        ObjectKey::from_parts([
            b"xr/vk-shader-binary/1".as_slice(),
            crate::NAME.as_bytes(),
            env!("CARGO_PKG_VERSION").as_bytes(),
            request.target.as_bytes(),
            &request.artifact,
            &overrides,
            &self.binary.uuid,
            &self.binary.version.to_le_bytes(),
        ])
    }

    /// The binaries stored under `key`, one per stage: `Ok(None)` where
    /// there are none, an error saying why where there are some this
    /// driver cannot use.
    pub fn load(&self, key: &ObjectKey) -> Result<Option<Vec<Vec<u8>>>, String> {
        let Some(payload) = self.store.get(key).map_err(|e| e.to_string())? else { return Ok(None) };
        let (record, bytes) = binary_record::decode(&payload).map_err(|e| e.to_string())?;
        if record.identity != self.identity || record.format != self.binary.version {
            return Err(format!(
                "stored shader binaries were made by another driver ({}, version {}); this one is {}, version {}",
                record.identity, record.format, self.identity, self.binary.version
            ));
        }
        split(bytes).map(Some).ok_or_else(|| "stored shader binaries are cut short".to_owned())
    }

    /// Writes `binaries` (one per stage) of `program` under `key`.
    pub fn write(&self, key: &ObjectKey, program: &str, binaries: &[Vec<u8>]) -> Result<PathBuf, String> {
        let payload = binary_record::encode(program, &self.identity, self.binary.version, &join(binaries));
        self.store.put(key, &payload).map_err(|e| e.to_string())
    }
}

/// How a record names the driver: its vendor and device, and the binary
/// UUID (what a driver update changes).
fn identity(capabilities: &DeviceCapabilities, binary: BinaryIdentity) -> DriverIdentity {
    let uuid: String = binary.uuid.iter().map(|b| format!("{b:02x}")).collect();
    DriverIdentity {
        vendor: capabilities.vendor.to_string(),
        renderer: capabilities.renderer.to_string(),
        version: format!("shaderBinaryUUID {uuid}"),
        formats: vec![binary.version],
    }
}

/// The stages' binaries as one byte string: each one's length (u32, little
/// endian), then its bytes.
fn join(binaries: &[Vec<u8>]) -> Vec<u8> {
    binaries.iter().flat_map(|b| (b.len() as u32).to_le_bytes().into_iter().chain(b.iter().copied())).collect()
}

/// [`join`]'s binaries back; `None` where the bytes are cut short.
fn split(mut bytes: &[u8]) -> Option<Vec<Vec<u8>>> {
    let mut binaries = Vec::new();
    while !bytes.is_empty() {
        let length = u32::from_le_bytes(bytes.get(..4)?.try_into().ok()?) as usize;
        binaries.push(bytes.get(4..4 + length)?.to_vec());
        bytes = &bytes[4 + length..];
    }
    Some(binaries)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stage_binaries_come_back_as_they_were_joined_and_a_cut_one_is_refused() {
        let binaries = vec![vec![1, 2, 3], vec![], vec![9; 70]];
        let joined = join(&binaries);
        assert_eq!(split(&joined), Some(binaries));
        assert_eq!(split(&joined[..joined.len() - 1]), None);
        assert_eq!(split(&[]), Some(vec![]));
    }

    /// Each part of the key changed alone gives another key: the target,
    /// the stored object, each override's id and value, and the driver's
    /// `shaderBinaryUUID` and `shaderBinaryVersion`.
    #[test]
    fn each_part_of_a_shader_binary_key_changed_alone_gives_another_key() {
        use xr_sourcebuild::{LoadPath, OverrideKind, OverrideValue};
        let dir = std::env::temp_dir().join(format!("xr-shader-binary-key-{}", std::process::id()));
        let store = Store::open(&dir).unwrap();
        let identity = BinaryIdentity { uuid: *b"lavapipe-binary!", version: 1 };
        let cache = |binary| ShaderBinaryCache::new(store.clone(), &crate::pipeline_cache::tests::device(), binary);
        let value = |id, bits| OverrideValue { name: "GAIN".into(), id, kind: OverrideKind::Float, bits };
        let request = |target: &str, artifact: &[u8], overrides: Vec<OverrideValue>| ArtifactLoad {
            name: "toon[BANDS=2]".into(),
            target: target.into(),
            path: LoadPath::CompatibleObject,
            artifact: artifact.into(),
            overrides: overrides.into(),
        };
        let base = request("vk-spirv", b"spirv", vec![value(0, 1.0f32.to_bits())]);
        let key = cache(identity).key(&base);
        // The name is not part of it: a variant's binaries are those of its object.
        assert_eq!(cache(identity).key(&ArtifactLoad { name: "other".into(), ..base.clone() }), key);
        let others = [
            ("the target", cache(identity).key(&request("vk-spirv-1.3", b"spirv", vec![value(0, 1.0f32.to_bits())]))),
            ("the object", cache(identity).key(&request("vk-spirv", b"spirv!", vec![value(0, 1.0f32.to_bits())]))),
            (
                "an override's value",
                cache(identity).key(&request("vk-spirv", b"spirv", vec![value(0, 0.5f32.to_bits())])),
            ),
            ("an override's id", cache(identity).key(&request("vk-spirv", b"spirv", vec![value(1, 1.0f32.to_bits())]))),
            ("the binary UUID", cache(BinaryIdentity { uuid: [0; 16], ..identity }).key(&base)),
            ("the binary version", cache(BinaryIdentity { version: 2, ..identity }).key(&base)),
        ];
        for (part, other) in others {
            assert_ne!(other, key, "{part} changed alone gives the same key");
        }
        let _ = std::fs::remove_dir_all(dir);
    }
}
