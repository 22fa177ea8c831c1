//! A `wgpu::PipelineCache` kept in the store, keyed by the adapter (wgpu's
//! own cache key: back end, vendor and device) and the driver's version,
//! as XR keeps Vulkan's pipeline cache. wgpu checks the data's own header
//! again when it is loaded, and starts empty from data it refuses.

use crate::context::Context;
use std::sync::Arc;
use xr_device::XrError;
use xr_store::{ObjectKey, Store};

/// The device's pipeline cache, loaded from a store and saved back to it.
pub struct StoredPipelineCache {
    /// The cache every pipeline of the attached build system is made with.
    pub cache: Arc<wgpu::PipelineCache>,
    /// Bytes of the stored cache it started from (0: started empty).
    pub loaded_bytes: u64,
    store: Store,
    key: ObjectKey,
}

/// The store key of the pipeline cache of the adapter `info` describes;
/// `None` for an adapter whose back end keeps none.
pub fn key(info: &wgpu::AdapterInfo) -> Option<ObjectKey> {
    let adapter = wgpu::util::pipeline_cache_key(info)?;
    let wgpu = crate::WGPU_MAJOR.to_string();
    Some(ObjectKey::from_parts([
        b"xr/wgpu-pipeline-cache/1".as_slice(),
        adapter.as_bytes(),
        info.driver.as_bytes(),
        info.driver_info.as_bytes(),
        wgpu.as_bytes(),
    ]))
}

impl StoredPipelineCache {
    /// The cache kept in the store at `root` for this device, or an empty
    /// one; `None` where the device keeps no pipeline cache.
    pub fn open(context: &Context, root: &str) -> Result<Option<Self>, XrError> {
        if !context.device.features().contains(wgpu::Features::PIPELINE_CACHE) {
            return Ok(None);
        }
        let Some(key) = key(&context.info) else { return Ok(None) };
        let store = Store::open(root).map_err(|e| XrError::invalid_input(format!("opening the store {root}: {e}")))?;
        let data = match store.get(&key) {
            Ok(data) => data,
            Err(e) => {
                tracing::warn!(%key, "discarding the stored wgpu pipeline cache: {e}");
                None
            }
        };
        let loaded_bytes = data.as_ref().map_or(0, |d| d.len() as u64);
        let cache = context.checked("making the wgpu pipeline cache", || {
            // SAFETY: the data is what `PipelineCache::get_data` of a
            // device of this adapter and driver returned (the key says
            // so), read back whole (the store checks every object's
            // checksum); wgpu checks its header again and, with
            // `fallback`, starts empty from data it does not accept.
            Ok(unsafe {
                context.device.create_pipeline_cache(&wgpu::PipelineCacheDescriptor {
                    label: Some("xr"),
                    data: data.as_deref(),
                    fallback: true,
                })
            })
        })?;
        tracing::info!(%key, bytes = loaded_bytes, "opened the wgpu pipeline cache");
        Ok(Some(Self { cache: Arc::new(cache), loaded_bytes, store, key }))
    }

    /// Writes the cache back to the store.
    pub fn save(&self) {
        let Some(data) = self.cache.get_data() else { return };
        if let Err(e) = self.store.put(&self.key, &data) {
            tracing::warn!("cannot save the wgpu pipeline cache: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pipeline cache a device made is another driver's data on any
    /// other adapter or driver: each part changed alone gives another key.
    /// wgpu's version is a constant of this build (a wgpu update changes
    /// it, which no test can do alone).
    #[test]
    fn each_part_of_the_pipeline_cache_key_changed_alone_gives_another_key() {
        let mut base = wgpu::AdapterInfo::new(wgpu::DeviceType::Cpu, wgpu::Backend::Vulkan);
        base.name = "llvmpipe (LLVM 19.1.7, 256 bits)".into();
        base.vendor = 0x10005;
        base.device = 0;
        base.driver = "llvmpipe".into();
        base.driver_info = "Mesa 25.2.6 (LLVM 19.1.7)".into();
        let key_of = |change: &dyn Fn(&mut wgpu::AdapterInfo)| {
            let mut info = base.clone();
            change(&mut info);
            key(&info).expect("a Vulkan adapter keeps a pipeline cache")
        };
        let same = key_of(&|_| {});
        assert_eq!(key_of(&|_| {}), same, "one adapter, one key");
        let others = [
            ("the vendor", key_of(&|i| i.vendor = 0x1002)),
            ("the device", key_of(&|i| i.device = 0x73bf)),
            ("the driver", key_of(&|i| i.driver = "radv".into())),
            ("the driver's info", key_of(&|i| i.driver_info = "Mesa 25.3.0 (LLVM 19.1.7)".into())),
        ];
        for (part, key) in &others {
            assert_ne!(*key, same, "{part} changed alone keeps the key");
        }
        let distinct: std::collections::HashSet<String> = others.iter().map(|(_, k)| k.to_string()).collect();
        assert_eq!(distinct.len(), others.len(), "{others:?}");
        // A back end whose pipelines wgpu keeps no cache for has no key.
        for backend in [wgpu::Backend::Gl, wgpu::Backend::Metal, wgpu::Backend::Dx12] {
            assert_eq!(key(&wgpu::AdapterInfo { backend, ..base.clone() }), None, "{backend:?}");
        }
    }
}
