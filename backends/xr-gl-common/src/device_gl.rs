//! The device's GL, reached through the loader in its native handles.

use std::{
    ffi::CString,
    sync::atomic::{AtomicBool, Ordering},
};
use xr_device::{GlLoader, NativeHandles, XrError};

/// glow over the device's context; every use makes that context current first.
pub struct DeviceGl {
    gl: glow::Context,
    loader: GlLoader,
    /// The device system's "its context is current" flag, where it keeps one.
    current: Option<&'static AtomicBool>,
}

impl DeviceGl {
    /// The GL of the device `handles` belong to, for the build system
    /// `name`: `Unavailable` where the handles are not OpenGL's, or where
    /// the device lacks what the build system needs (`unmet`: what it
    /// needs, and what the device has instead).
    pub fn attach(handles: &NativeHandles, name: &str, unmet: Option<String>) -> Result<Self, XrError> {
        let loader = handles.gl_loader(name)?;
        if let Some(unmet) = unmet {
            return Err(XrError::unavailable(format!("{name} needs {unmet}")));
        }
        Self::new(loader)
    }

    /// Loads GL through `loader`.
    pub fn new(loader: GlLoader) -> Result<Self, XrError> {
        // SAFETY: the loader's functions take any context: the device system
        // looks the number up among its open devices and never dereferences
        // it, so a closed device only answers false.
        if !unsafe { (loader.make_current)(loader.context) } {
            return Err(XrError::unavailable("the device's OpenGL context cannot be made current"));
        }
        // SAFETY: as above (a closed device answers null); names are
        // NUL-terminated CStrings that live for the call.
        let gl = unsafe {
            glow::Context::from_loader_function(|name| match CString::new(name) {
                Ok(name) => (loader.get_proc_address)(loader.context, name.as_ptr()),
                Err(_) => std::ptr::null(),
            })
        };
        // SAFETY: a non-null flag is never freed (`GlLoader::current`).
        let current = unsafe { loader.current.as_ref() };
        Ok(Self { gl, loader, current })
    }

    /// The loader the device handed out.
    pub fn loader(&self) -> &GlLoader {
        &self.loader
    }

    /// The GL functions, with the device's context current on this thread.
    pub fn current(&self) -> Result<&glow::Context, XrError> {
        // Tables stay on the device's thread (they are neither `Send` nor
        // `Sync`), the thread the flag speaks of.
        if self.current.is_some_and(|current| current.load(Ordering::Relaxed)) {
            return Ok(&self.gl);
        }
        // SAFETY: see `new`.
        if unsafe { (self.loader.make_current)(self.loader.context) } {
            Ok(&self.gl)
        } else {
            Err(XrError::unavailable("the OpenGL device is closed or its context cannot be made current"))
        }
    }
}
