//! Native handles a build system uses to attach to a live device.

use crate::capabilities::DeviceKind;
use abi_stable::{StableAbi, std_types::ROption};
use std::ffi::{c_char, c_void};

/// How an OpenGL build system reaches the device's context.
///
/// `get_proc_address(context, "glCreateShader")` returns the entry point of
/// the device's GL (glow's `from_loader_function`), and `make_current`
/// makes the device's context current on the calling thread, so that a build
/// system can work while several devices are open on one thread.
#[repr(C)]
#[derive(StableAbi, Clone, Copy, Debug)]
pub struct GlLoader {
    /// Opaque pointer owned by the device system; valid while the device lives.
    pub context: *const c_void,
    /// Looks up a GL or EGL entry point by NUL-terminated name; null if absent.
    pub get_proc_address: unsafe extern "C" fn(context: *const c_void, name: *const c_char) -> *const c_void,
    /// Makes the device's context current on this thread; false on failure.
    pub make_current: unsafe extern "C" fn(context: *const c_void) -> bool,
}

/// Everything a build system may need from a device, by kind.
#[repr(C)]
#[derive(StableAbi, Clone, Copy, Debug)]
pub struct NativeHandles {
    /// The kind of the device these handles belong to.
    pub kind: DeviceKind,
    /// Present for OpenGL devices.
    pub gl: ROption<GlLoader>,
}
