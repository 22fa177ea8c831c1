//! A `VkPipelineCache` kept in the store, keyed by the device's pipeline
//! cache UUID, vendor, device and driver version — and checked against the
//! same fields of its own header before the driver ever sees it.

use ash::vk;
use xr_device::{DeviceCapabilities, XrError};
use xr_store::{ObjectKey, Store};

/// The header every pipeline cache starts with (`VkPipelineCacheHeaderVersionOne`).
const HEADER_LEN: usize = 32;

/// Checks a stored cache's header against the device; `Err` says why it cannot be used.
pub fn check_header(data: &[u8], capabilities: &DeviceCapabilities) -> Result<(), String> {
    if data.len() < HEADER_LEN {
        return Err(format!("{} bytes is shorter than a pipeline cache header", data.len()));
    }
    let word = |at: usize| u32::from_le_bytes([data[at], data[at + 1], data[at + 2], data[at + 3]]);
    if word(0) as usize != HEADER_LEN || word(4) != vk::PipelineCacheHeaderVersion::ONE.as_raw() as u32 {
        return Err(format!("unknown header (length {}, version {})", word(0), word(4)));
    }
    if word(8) != capabilities.vendor_id || word(12) != capabilities.device_id {
        return Err(format!("made by another device (vendor 0x{:x}, device 0x{:x})", word(8), word(12)));
    }
    if data[16..32] != capabilities.pipeline_cache_uuid {
        return Err("made by another driver build (pipeline cache UUID differs)".to_owned());
    }
    Ok(())
}

/// The device's pipeline cache, loaded from and saved to a store.
pub struct PersistentCache {
    pub cache: vk::PipelineCache,
    store: Option<(Store, ObjectKey)>,
}

impl PersistentCache {
    /// An empty in-memory cache.
    pub fn empty(device: &ash::Device) -> Result<Self, XrError> {
        Ok(Self { cache: create(device, &[])?, store: None })
    }

    /// Replaces the cache with the one kept in `store` for this device, if
    /// it is whole and made by this device; a damaged one is discarded.
    pub fn load(
        &mut self,
        device: &ash::Device,
        store: Store,
        capabilities: &DeviceCapabilities,
    ) -> Result<(), XrError> {
        let key = vulkan_pipeline_cache_key(capabilities);
        let initial = match store.get(&key) {
            Ok(Some(data)) => match check_header(&data, capabilities) {
                Ok(()) => {
                    tracing::info!(%key, bytes = data.len(), "loaded the Vulkan pipeline cache");
                    data
                }
                Err(why) => {
                    tracing::warn!(%key, "discarding the stored Vulkan pipeline cache: {why}");
                    Vec::new()
                }
            },
            Ok(None) => Vec::new(),
            Err(e) => {
                tracing::warn!(%key, "discarding the stored Vulkan pipeline cache: {e}");
                Vec::new()
            }
        };
        let cache = create(device, &initial)?;
        // SAFETY: the old cache is not in use by any pipeline creation now.
        unsafe { device.destroy_pipeline_cache(self.cache, None) };
        self.cache = cache;
        self.store = Some((store, key));
        Ok(())
    }

    /// Writes the cache back to the store, if it has one.
    pub fn save(&self, device: &ash::Device) {
        let Some((store, key)) = &self.store else { return };
        // SAFETY: a valid cache on this device.
        match unsafe { device.get_pipeline_cache_data(self.cache) } {
            Ok(data) => {
                if let Err(e) = store.put(key, &data) {
                    tracing::warn!("cannot save the Vulkan pipeline cache: {e}");
                }
            }
            Err(e) => tracing::warn!("vkGetPipelineCacheData failed: {e}"),
        }
    }

    /// Saves and destroys the cache.
    pub fn close(&mut self, device: &ash::Device) {
        self.save(device);
        // SAFETY: no pipeline is being created with it.
        unsafe { device.destroy_pipeline_cache(self.cache, None) };
        self.cache = vk::PipelineCache::null();
    }
}

fn create(device: &ash::Device, initial: &[u8]) -> Result<vk::PipelineCache, XrError> {
    let info = vk::PipelineCacheCreateInfo::default().initial_data(initial);
    // SAFETY: the data passed the header check (or is empty).
    unsafe { device.create_pipeline_cache(&info, None) }
        .map_err(|e| XrError::driver(format!("vkCreatePipelineCache failed: {e}")))
}

/// The store key of a Vulkan device's pipeline cache: its pipeline cache
/// UUID, vendor id, device id and driver version, the same fields the
/// cache's own header carries.
pub fn vulkan_pipeline_cache_key(capabilities: &DeviceCapabilities) -> ObjectKey {
    ObjectKey::from_parts([
        b"xr/vk-pipeline-cache/1".as_slice(),
        &capabilities.pipeline_cache_uuid,
        &capabilities.vendor_id.to_le_bytes(),
        &capabilities.device_id.to_le_bytes(),
        &capabilities.driver_version_code.to_le_bytes(),
    ])
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use abi_stable::std_types::{RString, RVec};
    use xr_device::DeviceKind;

    pub(crate) fn device() -> DeviceCapabilities {
        DeviceCapabilities {
            kind: DeviceKind::VULKAN,
            api_major: 1,
            api_minor: 3,
            vendor: RString::from("Mesa"),
            renderer: RString::from("llvmpipe"),
            driver_version: RString::from("22.3.6"),
            shading_language_version: RString::new(),
            extensions: RVec::new(),
            program_binary_formats: RVec::new(),
            gl_spirv: false,
            separate_shader_objects: false,
            pipeline_cache_uuid: *b"0123456789abcdef",
            vendor_id: 0x10005,
            device_id: 0x0001,
            driver_version_code: 7,
            device_type: RString::from("cpu"),
        }
    }

    /// A header as `vkGetPipelineCacheData` writes it for `capabilities`.
    fn header(capabilities: &DeviceCapabilities) -> Vec<u8> {
        let mut data = Vec::new();
        data.extend(32u32.to_le_bytes());
        data.extend((vk::PipelineCacheHeaderVersion::ONE.as_raw() as u32).to_le_bytes());
        data.extend(capabilities.vendor_id.to_le_bytes());
        data.extend(capabilities.device_id.to_le_bytes());
        data.extend(capabilities.pipeline_cache_uuid);
        data.extend([0xAB; 8]); // pipeline data after the header
        data
    }

    #[test]
    fn a_header_of_this_device_passes() {
        assert_eq!(check_header(&header(&device()), &device()), Ok(()));
        // lavapipe's cache is the header alone: exactly 32 bytes.
        assert_eq!(check_header(&header(&device())[..32], &device()), Ok(()));
    }

    #[test]
    fn every_field_of_the_header_is_checked() {
        let mine = device();
        let good = header(&mine);
        let short = &good[..31];
        let with = |at: usize, value: u32| {
            let mut data = good.clone();
            data[at..at + 4].copy_from_slice(&value.to_le_bytes());
            data
        };
        let mut other_uuid = good.clone();
        other_uuid[20] ^= 0xff;
        let cases: [(&str, Vec<u8>, &str); 6] = [
            ("short", short.to_vec(), "shorter than a pipeline cache header"),
            ("wrong length", with(0, 16), "unknown header (length 16"),
            ("wrong version", with(4, 2), "version 2"),
            ("other vendor", with(8, 0x10de), "made by another device (vendor 0x10de"),
            ("other device", with(12, 0x2330), "device 0x2330"),
            ("other driver build", other_uuid, "pipeline cache UUID differs"),
        ];
        for (what, data, reason) in cases {
            let error = check_header(&data, &mine).expect_err(what);
            assert!(error.contains(reason), "{what}: {error}");
        }
        assert!(check_header(&[], &mine).is_err(), "empty");
    }

    proptest::proptest! {
        #[test]
        fn only_this_devices_header_passes(data in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..64)) {
            let mine = device();
            let passes = check_header(&data, &mine).is_ok();
            let good = header(&mine);
            proptest::prop_assert_eq!(passes, data.len() >= 32 && data[..32] == good[..32]);
        }
    }

    #[test]
    fn the_key_names_the_device_and_driver() {
        let mine = device();
        let key = vulkan_pipeline_cache_key(&mine);
        let other_uuid = DeviceCapabilities { pipeline_cache_uuid: [0; 16], ..device() };
        let other_driver = DeviceCapabilities { driver_version_code: 8, ..device() };
        let other_device = DeviceCapabilities { device_id: 2, ..device() };
        let other_vendor = DeviceCapabilities { vendor_id: 0x10de, ..device() };
        for other in [other_uuid, other_driver, other_device, other_vendor] {
            assert_ne!(vulkan_pipeline_cache_key(&other), key, "{other:?}");
        }
    }
}
