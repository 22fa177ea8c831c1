//! One open wgpu device, shared by the device system that opened it and
//! the build system attached to it.
//!
//! Both live in this library, so the build system reaches the device as
//! the Rust object it is, through one named handle holding its address.
//! Only an address this library handed out is taken back: every open
//! context is listed in [`LIVE`], and a handle that is not (a device of
//! another copy of this plugin, whose types may be laid out otherwise, or
//! a closed one) is refused instead of read.

use crate::{keep_current::KeepCurrent, objects::Objects};
use std::sync::{Arc, Mutex, MutexGuard, atomic::AtomicU64};
use xr_device::{DeviceKind, DeviceOptions, XrError};

/// The name of the handle a wgpu device offers its build systems.
pub const CONTEXT_HANDLE: &str = concat!("xr-rhi-wgpu ", env!("CARGO_PKG_VERSION"), ": device context");

/// The wgpu back end a device system opens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Api {
    /// wgpu on Vulkan.
    Vulkan,
    /// wgpu on OpenGL (ES 3 or desktop GL through EGL).
    Gl,
}

impl Api {
    /// The device kind this back end's device system declares.
    pub fn kind(self) -> DeviceKind {
        match self {
            Api::Vulkan => crate::WGPU,
            Api::Gl => crate::WGPU_GL,
        }
    }

    fn backends(self) -> wgpu::Backends {
        match self {
            Api::Vulkan => wgpu::Backends::VULKAN,
            Api::Gl => wgpu::Backends::GL,
        }
    }
}

/// The optional features XR asks for where the adapter has them: push
/// constants (immediates), SPIR-V handed to the driver as it is, and a
/// pipeline cache.
const WANTED: wgpu::Features =
    wgpu::Features::IMMEDIATES.union(wgpu::Features::PASSTHROUGH_SHADERS).union(wgpu::Features::PIPELINE_CACHE);

/// An open wgpu device and everything made on it.
pub struct Context {
    /// Identifies the device in resource bindings (`ResourceBinding::device`).
    pub id: u64,
    /// The back end.
    pub api: Api,
    /// The adapter the device was opened on.
    pub adapter: wgpu::Adapter,
    /// What it says of itself.
    pub info: wgpu::AdapterInfo,
    /// The device.
    pub device: wgpu::Device,
    /// Its queue.
    pub queue: wgpu::Queue,
    objects: Mutex<Objects>,
    /// Pipelines made, and of them those made with a pipeline cache a
    /// launch before stored.
    pipelines: [std::sync::atomic::AtomicU64; 2],
    /// The device's own instance.
    _instance: wgpu::Instance,
    /// Set as the context is dropped, and dropped after everything of
    /// wgpu above it: puts back the thread's EGL context (`keep_current`).
    restore: Option<KeepCurrent>,
}

impl Drop for Context {
    fn drop(&mut self) {
        self.restore = self.keep_current();
    }
}

/// Addresses of the contexts open in this library.
static LIVE: Mutex<Vec<usize>> = Mutex::new(Vec::new());
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

impl Context {
    /// Opens a device on `api`'s adapter: a GPU first, a software one
    /// (lavapipe, llvmpipe) where there is none or when it is preferred.
    pub fn open(api: Api, options: &DeviceOptions) -> Result<(Arc<Self>, Option<wgpu::Surface<'static>>), XrError> {
        let _keep = (api == Api::Gl).then(KeepCurrent::new);
        let flags = if options.validation { wgpu::InstanceFlags::VALIDATION } else { wgpu::InstanceFlags::empty() };
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
            backends: api.backends(),
            flags,
            ..wgpu::InstanceDescriptor::new_without_display_handle()
        });
        let surface = match options.window {
            abi_stable::std_types::ROption::RSome(window) => {
                if api == Api::Gl {
                    return Err(XrError::unavailable(
                        "wgpu's OpenGL back end presents into no window here: open a `wgpu` device (Vulkan) for one",
                    ));
                }
                let (display, window) = window.raw_handles()?;
                // SAFETY: the host keeps the window and its display open as
                // long as the device (`DeviceOptions::window`), and the
                // surface is dropped with the device.
                let surface = unsafe {
                    instance.create_surface_unsafe(wgpu::SurfaceTargetUnsafe::RawHandle {
                        raw_display_handle: Some(display),
                        raw_window_handle: window,
                    })
                }
                .map_err(|e| XrError::unavailable(format!("wgpu cannot make a surface of the window: {e}")))?;
                Some(surface)
            }
            abi_stable::std_types::ROption::RNone => None,
        };
        #[cfg(unix)]
        crate::wayland_log::quiet_if_loaded();
        let mut adapters = pollster::block_on(instance.enumerate_adapters(api.backends()));
        adapters.retain(|a| surface.as_ref().is_none_or(|s| a.is_surface_supported(s)));
        // The class asked for first (a GPU, unless software is preferred);
        // within a class the newest driver, as XR's Vulkan device picks
        // (two lavapipes: the setup's beside the system's).
        adapters.sort_by_key(|a| {
            let info = a.get_info();
            (
                (info.device_type == wgpu::DeviceType::Cpu) != options.prefer_software,
                std::cmp::Reverse(driver_version(&info.driver_info)),
            )
        });
        let adapter = adapters.into_iter().next().ok_or_else(|| {
            XrError::unavailable(format!("wgpu finds no {} adapter on this machine", api.kind().api_name()))
        })?;
        let info = adapter.get_info();
        let required_features = adapter.features() & WANTED;
        let descriptor = wgpu::DeviceDescriptor {
            label: Some("xr-rhi-wgpu"),
            required_features,
            required_limits: adapter.limits(),
            ..Default::default()
        };
        let (device, queue) = pollster::block_on(adapter.request_device(&descriptor))
            .map_err(|e| XrError::unavailable(format!("wgpu cannot open a device on {}: {e}", info.name)))?;
        // Errors are taken through error scopes at each call; anything
        // else is logged, never a panic inside the host.
        device.on_uncaptured_error(Arc::new(|error: wgpu::Error| {
            tracing::error!("wgpu: {error}");
        }));
        let id = NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        tracing::info!(adapter = %info.name, backend = ?info.backend, driver = %info.driver_info, "opened a wgpu device");
        let context = Arc::new(Self {
            id,
            api,
            adapter,
            info,
            device,
            queue,
            objects: Mutex::new(Objects::default()),
            pipelines: Default::default(),
            _instance: instance,
            restore: None,
        });
        live().push(Arc::as_ptr(&context) as usize);
        Ok((context, surface))
    }

    /// The context whose handle is `address`, if it is open in this library.
    pub fn from_handle(address: usize) -> Option<Arc<Self>> {
        let live = live();
        if !live.contains(&address) {
            return None;
        }
        let pointer = address as *const Self;
        // SAFETY: the address is listed, so it is the `Arc` of an open
        // context of this library (the device that owns it removes it
        // before dropping it, under the same lock held here); one more
        // strong count is taken for the `Arc` made here.
        unsafe {
            Arc::increment_strong_count(pointer);
            Some(Arc::from_raw(pointer))
        }
    }

    /// Takes this context off the list of open ones (the device closes).
    pub fn close(self: &Arc<Self>) {
        live().retain(|a| *a != Arc::as_ptr(self) as usize);
    }

    /// The device's objects.
    pub fn objects(&self) -> MutexGuard<'_, Objects> {
        self.objects.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Runs `body`, turning wgpu's validation and memory errors raised
    /// inside it into an error that says what was being done.
    pub fn checked<T>(&self, what: &str, body: impl FnOnce() -> Result<T, XrError>) -> Result<T, XrError> {
        let memory = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let validation = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let result = body();
        let invalid = pollster::block_on(validation.pop());
        let out_of_memory = pollster::block_on(memory.pop());
        if let Some(error) = invalid.or(out_of_memory) {
            return Err(XrError::driver(format!("{what}: {}", error_text(&error))));
        }
        result
    }

    /// Submits `encoder`'s commands and waits for them: what a later call
    /// reads sees everything done before it.
    pub fn submit(&self, encoder: wgpu::CommandEncoder) -> Result<(), XrError> {
        let index = self.queue.submit([encoder.finish()]);
        self.device
            .poll(wgpu::PollType::Wait { submission_index: Some(index), timeout: None })
            .map_err(|e| XrError::driver(format!("waiting for the wgpu queue: {e}")))?;
        Ok(())
    }

    /// Counts a pipeline made, `with_stored_cache` or not.
    pub fn count_pipeline(&self, with_stored_cache: bool) {
        use std::sync::atomic::Ordering::Relaxed;
        self.pipelines[0].fetch_add(1, Relaxed);
        if with_stored_cache {
            self.pipelines[1].fetch_add(1, Relaxed);
        }
    }

    /// The device's counts: pipelines made, and those made with a stored cache.
    pub fn counters(&self) -> Vec<xr_device::DeviceCounter> {
        use std::sync::atomic::Ordering::Relaxed;
        vec![
            xr_device::DeviceCounter { name: "pipelines".into(), value: self.pipelines[0].load(Relaxed) },
            xr_device::DeviceCounter {
                name: "pipelines made with a stored pipeline cache".into(),
                value: self.pipelines[1].load(Relaxed),
            },
        ]
    }

    /// On OpenGL, what puts the thread's EGL context back when dropped: held
    /// across every call that may reach wgpu (`keep_current.rs`).
    pub fn keep_current(&self) -> Option<KeepCurrent> {
        (self.api == Api::Gl).then(KeepCurrent::new)
    }

    /// Whether SPIR-V goes to the driver as it is.
    pub fn passthrough(&self) -> bool {
        self.api == Api::Vulkan && self.device.features().contains(wgpu::Features::PASSTHROUGH_SHADERS)
    }
}

/// The first version number in an adapter's driver string (`Mesa 25.0.7`
/// → 25, 0, 7); empty where it has none.
fn driver_version(text: &str) -> Vec<u32> {
    let start = text.find(|c: char| c.is_ascii_digit()).unwrap_or(text.len());
    text[start..]
        .split(|c: char| !c.is_ascii_digit() && c != '.')
        .next()
        .unwrap_or("")
        .split('.')
        .filter_map(|part| part.parse().ok())
        .collect()
}

fn live() -> MutexGuard<'static, Vec<usize>> {
    LIVE.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A wgpu error as one message, with its sources.
pub fn error_text(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let more = cause.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_driver_version_is_the_first_number_of_the_driver_string() {
        assert_eq!(super::driver_version("Mesa 25.0.7-2~bpo12+1 (LLVM 15.0.6)"), [25, 0, 7]);
        assert_eq!(super::driver_version("Mesa 22.3.6 (LLVM 15.0.6)"), [22, 3, 6]);
        assert_eq!(super::driver_version("560.35.03"), [560, 35, 3]);
        assert!(super::driver_version("").is_empty());
        assert!(super::driver_version("Mesa 25.0.7") > super::driver_version("Mesa 22.3.6"));
    }
}
